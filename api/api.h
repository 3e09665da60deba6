/* The api layer: turning text or bytes into a runnable program, on top of
 * the compiler and the VM (as Lua's lapi.c, ldo.c and lundump.c sit on its
 * core). Its files:
 *
 *   api.c      the loader's bookkeeping: modules, sources
 *   load.c     vm_new and vm_free, scripts, imports, the embedded prelude
 *   bcread.c   reading bytecode files (simc -o's), every prototype verified
 *   bcwrite.c  writing them, and the listing of simc -l
 *   verify.c   the bytecode verifier
 *   explore.c  --explore, --seed and --replay: running, shrinking and
 *              reporting schedules (explore.h; the strategies are vm/explore.c)
 *
 * The VM holds the modules' top-level actions (vm->module_inits), since it
 * runs them; what only loading needs lives here, in the Loader the VM
 * points at without looking inside. */
#ifndef SIMVM_API_H
#define SIMVM_API_H

#include "../lang/source.h"
#include "../vm/state.h"
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

#endif
