/* Fuzz target: source text -> compile -> run (see fuzz.h for the bounds).
 *
 * The prelude is compiled and its top level run once per process (once
 * for each of the four combinations of --actions and --continuations: bit
 * 4 of the hash alone picks the default or -O0, bit 5 the mixed ones); each input's program is kept young and rolled
 * back after its run (loader_rollback), so an input costs its own
 * compilation and run only. */
#include "fuzz.h"

#include "../../api/api.h"
#include "../../vm/memory.h"

static VM *vms[4];
static LoaderMark marks[4];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t h = fuzz_hash(data, size);
  int opt = (h >> 4) & 3;
  if (!vms[opt]) {
    VMConfig config;
    fuzz_config(&config);
    config.reify_actions = !(opt & 1);
    config.heap_continuations = config.reify_actions ^ ((opt >> 1) & 1);
    config.sandbox = true;
    VM *vm = vms[opt] = vm_new(&config);
    if (!vm) abort(); /* the prelude did not compile */
    loader_mark(vm, &marks[opt]);
    /* one run computes the prelude's top level and makes it old, for good;
     * the inputs' programs then stay young, to be rolled back */
    static const char setup[] = "main = return ()\n";
    if (vm_load_source(vm, "/dev/null/setup.sim", setup, sizeof setup - 1) != SIM_OK || vm_run(vm) != SIM_OK) abort();
    loader_rollback(vm, &marks[opt]);
    vm->keep_young = true;
  }
  VM *vm = vms[opt];
  fuzz_options(&vm->config, h);
  /* a name in no directory: with the sandbox, every import fails the same way */
  if (vm_load_source(vm, "/dev/null/fuzz.sim", (const char *)data, size) == SIM_OK) {
    vm_run(vm);
    fuzz_write_outputs(vm);
  }
  loader_rollback(vm, &marks[opt]);
  /* a program that did not compile, or whose top level failed, has no run
   * to discard: its objects stay young until a collection. Free them now,
   * so that an input frees what it allocates and libFuzzer's leak check
   * (run after any input that does not) stays rare */
  gc_free_young(vm);
  return 0;
}
