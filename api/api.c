/* The loader's bookkeeping (see api.h). */
#include <stdlib.h>
#include <string.h>

#include "api.h"

void api_loader_new(VM *vm) {
  vm->loader = xrealloc(NULL, sizeof *vm->loader);
  memset(vm->loader, 0, sizeof *vm->loader);
}

void api_loader_free(VM *vm) {
  Loader *loader = vm->loader;
  for (int i = 0; i < vm->module_inits.count; i++) free(loader->module_keys[i]);
  free(loader->module_keys);
  free(loader->sandbox_root);
  while (loader->sources) {
    Source *next = loader->sources->next;
    source_free(loader->sources);
    loader->sources = next;
  }
  free(loader);
  vm->loader = NULL;
}

void api_add_module(VM *vm, char *key, ObjClosure *init) {
  Loader *loader = vm->loader;
  vm_place_continuations(vm, init->proto);
  vm_place_superinstructions(init->proto);
  int index = vm->module_inits.count;
  value_array_push(&vm->module_inits, OBJ_VAL(init));
  loader->module_keys = xrealloc(loader->module_keys, (size_t)vm->module_inits.count * sizeof(char *));
  loader->module_keys[index] = key;
}
