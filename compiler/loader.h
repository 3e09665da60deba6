/* Loading programs: files, imports and the embedded prelude. */
#ifndef SIMVM_LOADER_H
#define SIMVM_LOADER_H

#include "../vm/state.h"

/* Compile the standard library embedded at build time (stdlib/prelude.sim). */
SimStatus loader_load_prelude(VM *vm);

/* Free the loader's bookkeeping (module paths). */
void loader_free(VM *vm);

/* What a VM holds before a program is loaded on it, so that the program can
 * be taken back and another loaded in its place: the fuzzer compiles the
 * prelude once per process and then runs one input after another. */
typedef struct {
  int globals;           /* globals declared (builtins and prelude)   */
  int modules;           /* modules loaded                            */
  Source *sources;       /* the newest source then                    */
  Table global_index;    /* a copy of the name -> global map          */
} LoaderMark;

void loader_mark(VM *vm, LoaderMark *mark);

/* Forget everything loaded and run since `mark`: the last run (threads,
 * timers, its young heap), the modules, the globals they declared (names
 * they shadowed are visible again) and their sources. The programs loaded
 * after the mark must have been kept young (vm->keep_young), or their
 * objects stay in the old generation for good; the modules the mark holds
 * keep their top-level values. */
void loader_rollback(VM *vm, const LoaderMark *mark);

void loader_mark_free(LoaderMark *mark);

#endif
