/* Writing a loaded program out: as a bytecode file (simc -o; the layout is
 * in bytecode.h) or as a listing (simc -l). */
#include <stdlib.h>
#include <string.h>

#include "../vm/interp/builtins.h"
#include "../vm/interp/debug.h"
#include "api.h"
#include "bytecode.h"

static void put_u8(FILE *out, uint8_t v) { fputc(v, out); }
static void put_u32(FILE *out, uint32_t v) {
  for (int i = 0; i < 4; i++) put_u8(out, (uint8_t)(v >> (8 * i)));
}
static void put_u64(FILE *out, uint64_t v) {
  for (int i = 0; i < 8; i++) put_u8(out, (uint8_t)(v >> (8 * i)));
}
static void put_string(FILE *out, const char *text, size_t length) {
  put_u32(out, (uint32_t)length);
  fwrite(text, 1, length, out);
}
static void put_cstring(FILE *out, const char *text) { put_string(out, text, strlen(text)); }

static void put_proto(FILE *out, const ObjProto *proto) {
  put_u8(out, (uint8_t)proto->kind);
  put_u32(out, (uint32_t)proto->arity);
  put_u32(out, (uint32_t)proto->max_slots);
  put_u32(out, (uint32_t)proto->upvalue_count);
  if (proto->upvalue_count) fwrite(proto->captures, 1, (size_t)proto->upvalue_count * 2, out);
  put_u32(out, (uint32_t)proto->handler);
  put_u32(out, (uint32_t)proto->handler_depth);
  put_cstring(out, proto->name ? proto->name->chars : "");
  put_cstring(out, proto->file);
  put_u32(out, (uint32_t)proto->line);
  put_u32(out, (uint32_t)proto->chunk.count);
  /* as compiled: not what the VM put in for heap continuations */
  uint8_t *code = xrealloc(NULL, (size_t)proto->chunk.count + 1);
  vm_code_as_compiled(proto, code);
  fwrite(code, 1, (size_t)proto->chunk.count, out);
  free(code);
  for (int i = 0; i < proto->chunk.count; i++) put_u32(out, (uint32_t)proto->chunk.lines[i]);
  put_u32(out, (uint32_t)proto->chunk.constants.count);
  for (int i = 0; i < proto->chunk.constants.count; i++) {
    Value v = proto->chunk.constants.values[i];
    if (IS_INT(v)) {
      put_u8(out, 0);
      put_u64(out, (uint64_t)AS_INT(v));
    } else if (IS_FLOAT(v)) {
      uint64_t bits;
      double f = AS_FLOAT(v);
      memcpy(&bits, &f, sizeof bits);
      put_u8(out, 1);
      put_u64(out, bits);
    } else if (IS_DURATION(v)) {
      put_u8(out, 2);
      put_u64(out, (uint64_t)AS_DURATION(v));
    } else if (IS_STRING(v)) {
      put_u8(out, 3);
      put_string(out, AS_CSTRING(v), (size_t)AS_STRING(v)->length);
    } else {
      put_u8(out, 4);
      put_proto(out, AS_PROTO(v));
    }
  }
}

bool bytecode_write(VM *vm, FILE *out) {
  fwrite(BYTECODE_MAGIC, 1, 8, out);
  put_u32(out, bytecode_version());
  put_u8(out, vm->direct_actions ? 1 : 0); /* how its actions were compiled */
  put_u32(out, (uint32_t)builtin_count);
  for (int i = 0; i < builtin_count; i++) {
    put_cstring(out, builtin_table[i].name);
    put_u8(out, (uint8_t)builtin_table[i].arity);
  }
  put_u32(out, (uint32_t)(vm->globals.count - builtin_count));
  for (int i = builtin_count; i < vm->globals.count; i++) {
    const GlobalInfo *info = &vm->global_info[i];
    put_string(out, info->name->chars, (size_t)info->name->length);
    put_u32(out, (uint32_t)info->arity);
    put_cstring(out, info->file ? info->file : "");
    put_u32(out, (uint32_t)info->line);
  }
  put_u32(out, (uint32_t)vm->module_inits.count);
  for (int i = 0; i < vm->module_inits.count; i++) {
    put_cstring(out, vm->loader->module_keys[i]);
    put_proto(out, AS_CLOSURE(vm->module_inits.values[i])->proto);
  }
  return !ferror(out);
}

bool vm_write_bytecode(VM *vm, FILE *out) { return bytecode_write(vm, out); }

bool vm_write_listing(VM *vm, FILE *out, bool prelude) {
  Buffer text;
  buf_init(&text);
  for (int i = 0; i < vm->module_inits.count; i++) {
    if (!prelude && strcmp(vm->loader->module_keys[i], PRELUDE_KEY) == 0) continue;
    debug_list_proto(&text, AS_CLOSURE(vm->module_inits.values[i])->proto, vm);
  }
  if (text.data) fputs(text.data, out);
  buf_free(&text);
  return !ferror(out);
}
