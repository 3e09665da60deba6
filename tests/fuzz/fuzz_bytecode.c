/* Fuzz target: bytes -> load and verify as a bytecode file -> run (see
 * fuzz.h for the bounds). Whatever the verifier accepts must run without
 * reading memory it should not: a clear error or a correct result, never a
 * crash. bytecode_mutator.c mutates inputs knowing the file's structure.
 *
 * A VM (without the prelude) is made once per process, for each of
 * --continuations=stack and =heap: making one defines every builtin, which cost as much as loading
 * and running a typical input. Its own objects are made old; each input's
 * program is kept young and rolled back after its run (loader_rollback),
 * with the young heap a failed load leaves and the file names it added. */
#include "fuzz.h"

#include "../../api/api.h"
#include "../../api/bytecode.h"
#include "../../vm/value/memory.h"

static VM *vms[2];
static LoaderMark marks[2];
static FileName *files[2]; /* the VM's file names at the mark */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t h = fuzz_hash(data, size);
  /* the file says how its actions were compiled; the run chooses the continuations */
  int heap = !((h >> 4) & 1);
  if (!vms[heap]) {
    VMConfig config;
    fuzz_config(&config);
    config.no_prelude = true;
    config.heap_continuations = heap;
    VM *vm = vms[heap] = vm_new(&config);
    if (!vm) abort();
    gc_promote(vm); /* the builtins and the VM's own closures, for good */
    vm->keep_young = true;
    loader_mark(vm, &marks[heap]);
    files[heap] = vm->files;
  }
  VM *vm = vms[heap];
  fuzz_options(&vm->config, h);
  if (bytecode_load(vm, "fuzz.simc", data, size) == SIM_OK) {
    vm_run(vm);
    fuzz_write_outputs(vm);
  }
  loader_rollback(vm, &marks[heap]);
  /* a load that failed, or a run that never started, leaves its objects
   * young without a run to discard: free them, then the file names only
   * they pointed at */
  gc_free_young(vm);
  while (vm->files != files[heap]) {
    FileName *next = vm->files->next;
    free(vm->files);
    vm->files = next;
  }
  return 0;
}
