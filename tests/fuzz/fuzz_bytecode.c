/* Fuzz target: bytes -> load and verify as a bytecode file -> run (see
 * fuzz.h for the bounds). Whatever the verifier accepts must run without
 * reading memory it should not: a clear error or a correct result, never a
 * crash. bytecode_mutator.c mutates inputs knowing the file's structure. */
#include "fuzz.h"

#include "../../api/bytecode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  VMConfig config;
  fuzz_config(&config);
  config.no_prelude = true;
  uint32_t h = fuzz_hash(data, size);
  fuzz_options(&config, h);
  /* the file says how its actions were compiled; the run chooses the continuations */
  config.heap_continuations = !((h >> 4) & 1);
  VM *vm = vm_new(&config);
  if (!vm) abort();
  if (bytecode_load(vm, "fuzz.simc", data, size) == SIM_OK) {
    vm_run(vm);
    fuzz_write_outputs(vm);
  }
  vm_free(vm);
  return 0;
}
