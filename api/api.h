/* The api layer: turning text or bytes into a runnable program, on top of
 * the compiler and the VM (as Lua's lapi.c, ldo.c and lundump.c sit on its
 * core). Its files:
 *
 *   api.c      the loader's bookkeeping: modules, sources
 *   load.c     vm_new and vm_free, scripts, imports, the embedded prelude
 *   bcread.c   reading bytecode files (simc -o's), every prototype verified
 *   bcwrite.c  writing them, and the listing of simc -l
 *   verify.c   the bytecode verifier
 *   explore.c  --explore, --seed and --replay: sweeps, outcome classes,
 *              coverage and the report (explore.h; the strategies are
 *              vm/explore/explore.c, the choices vm/explore/choice.c)
 *   explore_run.c   quiet runs and their records, the program's hash
 *   shrink.c   shrinking a failure to its smallest story
 *   schedule_file.c schedule files: written, read and checked
 *
 * The VM holds the modules' top-level actions (vm->module_inits), since it
 * runs them; what only loading needs lives here, in the Loader the VM
 * points at without looking inside. */
#ifndef SIMVM_API_H
#define SIMVM_API_H

#include "../lang/source.h"
#include "../vm/runtime/state.h"
#include "simvm.h"

/* The module name of the standard library. */
#define PRELUDE_KEY "<prelude>"

typedef struct Loader {
  Source *sources;      /* every script read, kept for diagnostics         */
  char **module_keys;   /* parallel to vm->module_inits: each module's
                           canonical path (PRELUDE_KEY for the prelude), to
                           load each file once and to name it in bytecode  */
  char *sandbox_root;   /* with config.sandbox: the resolved directory
                           imports stay under                             */
} Loader;

/* Give `vm` an empty Loader; free it (before vm_destroy). */
void api_loader_new(VM *vm);
void api_loader_free(VM *vm);

/* Append a module to the program: its top-level action `init`, under `key`
 * (taken over). The one way modules are added, by scripts and bytecode. */
void api_add_module(VM *vm, char *key, ObjClosure *init);

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
