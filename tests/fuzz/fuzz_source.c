/* Fuzz target: source text -> compile -> run (see fuzz.h for the bounds).
 *
 * The prelude is compiled once per process (once for each of -O1 and
 * -O0); after each input the program is rolled back (loader_rollback), so
 * an input costs its own compilation and run only. */
#include "fuzz.h"

#include "../../compiler/loader.h"

static VM *vms[2];
static LoaderMark marks[2];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t h = fuzz_hash(data, size);
  int opt = (h >> 4) & 1;
  if (!vms[opt]) {
    VMConfig config;
    fuzz_config(&config);
    config.opt_level = opt;
    config.sandbox = true;
    vms[opt] = vm_new(&config);
    if (!vms[opt]) abort(); /* the prelude did not compile */
    loader_mark(vms[opt], &marks[opt]);
  }
  VM *vm = vms[opt];
  fuzz_options(&vm->config, h);
  /* a name in no directory: with the sandbox, every import fails the same way */
  if (vm_load_source(vm, "/dev/null/fuzz.sim", (const char *)data, size) == SIM_OK) {
    vm_run(vm);
    fuzz_write_outputs(vm);
  }
  loader_rollback(vm, &marks[opt]);
  return 0;
}
