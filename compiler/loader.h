/* Loading programs: files, imports and the embedded prelude. */
#ifndef SIMVM_LOADER_H
#define SIMVM_LOADER_H

#include "../vm/state.h"

/* Compile the standard library embedded at build time (stdlib/prelude.sim). */
SimStatus loader_load_prelude(VM *vm);

/* Free the loader's bookkeeping (module paths). */
void loader_free(VM *vm);

#endif
