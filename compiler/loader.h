/* Loading programs: files, imports, the embedded prelude, and the boot
 * action that initialises every module and then runs `main`. */
#ifndef SIMVM_LOADER_H
#define SIMVM_LOADER_H

#include "../vm/state.h"

/* Compile the standard library embedded at build time (stdlib/prelude.sim). */
SimStatus loader_load_prelude(VM *vm);

/* The action the main thread runs: each module's top level in load order,
 * then `main`. NULL (reported) when no loaded script defines main. */
ObjClosure *loader_boot_action(VM *vm);

/* Free the loader's bookkeeping (module paths). */
void loader_free(VM *vm);

#endif
