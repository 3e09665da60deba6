/* Reading bytecode files (the layout is in bytecode.h): every byte is
 * checked, and every prototype's code verified (verify.c) before the
 * program can run. */
#include <stdlib.h>
#include <string.h>

#include "../lang/diag.h"
#include "../vm/interp/builtins.h"
#include "api.h"
#include "bytecode.h"
#include "verify.h"

typedef struct {
  VM *vm;
  const char *name;
  const uint8_t *p, *end;
  char error[256];
  int depth;
} Reader;

#define FAIL(r, ...)                                                 \
  do {                                                               \
    if (!(r)->error[0]) snprintf((r)->error, sizeof (r)->error, __VA_ARGS__); \
    return 0;                                                        \
  } while (0)

static bool need(Reader *r, size_t n) {
  if ((size_t)(r->end - r->p) < n) {
    if (!r->error[0]) snprintf(r->error, sizeof r->error, "the file is truncated");
    return false;
  }
  return true;
}

static uint64_t get(Reader *r, int bytes) {
  if (!need(r, (size_t)bytes)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)r->p[i] << (8 * i);
  r->p += bytes;
  return v;
}

/* A u32 that must be at most `limit`. */
static bool get_count(Reader *r, uint32_t limit, const char *what, uint32_t *out) {
  *out = (uint32_t)get(r, 4);
  if (r->error[0]) return false;
  if (*out > limit) FAIL(r, "%s %u is out of range", what, *out);
  return true;
}

/* A string copied into a NUL-terminated buffer the caller frees. */
static char *get_string(Reader *r, uint32_t *length) {
  uint32_t n;
  if (!get_count(r, 1u << 28, "a string length", &n) || !need(r, n)) return NULL;
  char *text = xrealloc(NULL, (size_t)n + 1);
  memcpy(text, r->p, n);
  text[n] = '\0';
  r->p += n;
  if (length) *length = n;
  return text;
}

static ObjProto *get_proto(Reader *r, bool top_level) {
  if (++r->depth > 200) FAIL(r, "prototypes nested too deeply");
  uint32_t kind, arity, slots, upvalues, handler, handler_depth, line, length, constants;
  kind = (uint32_t)get(r, 1);
  if (kind > PROTO_SCRIPT) FAIL(r, "unknown prototype kind %u", kind);
  if (!get_count(r, 255, "an arity", &arity) || !get_count(r, 65535, "a slot count", &slots) ||
      !get_count(r, 255, "an upvalue count", &upvalues) || !need(r, upvalues * 2u))
    return NULL;
  ObjProto *proto = obj_proto(r->vm, (ProtoKind)kind, "", 0);
  proto->arity = (int)arity;
  proto->max_slots = (int)slots;
  proto->upvalue_count = (int)upvalues;
  if (upvalues) {
    proto->captures = xrealloc(NULL, upvalues * 2u);
    memcpy(proto->captures, r->p, upvalues * 2u);
    r->p += upvalues * 2u;
  }
  handler = (uint32_t)get(r, 4);
  handler_depth = (uint32_t)get(r, 4);
  if (handler != 0xffffffffu) FAIL(r, "a script prototype has an exception handler");
  (void)handler_depth;
  char *name = get_string(r, NULL);
  char *file = name ? get_string(r, NULL) : NULL;
  if (!file) {
    free(name);
    return NULL;
  }
  proto->name = obj_cstring(r->vm, name);
  proto->file = vm_file_name(r->vm, file);
  proto->prelude = vm_is_library_file(proto->file);
  free(name);
  free(file);
  if (!get_count(r, 0x7fffffff, "a line", &line) || !get_count(r, 1u << 24, "a code length", &length) ||
      !need(r, length))
    return NULL;
  proto->line = (int)line;
  if (line == 0) FAIL(r, "a script prototype has line 0");
  for (uint32_t i = 0; i < length; i++) chunk_write(&proto->chunk, r->p[i], 0);
  r->p += length;
  for (uint32_t i = 0; i < length; i++) proto->chunk.lines[i] = (int)get(r, 4);
  if (!get_count(r, 65536, "a constant count", &constants)) return NULL;
  for (uint32_t i = 0; i < constants && !r->error[0]; i++) {
    uint32_t tag = (uint32_t)get(r, 1);
    Value v = UNIT_VAL;
    switch (tag) {
      case 0: v = INT_VAL((int64_t)get(r, 8)); break;
      case 1: {
        uint64_t bits = get(r, 8);
        double f;
        memcpy(&f, &bits, sizeof f);
        v = FLOAT_VAL(f);
        break;
      }
      case 2: v = DURATION_VAL((int64_t)get(r, 8)); break;
      case 3: {
        uint32_t n;
        char *text = get_string(r, &n);
        if (!text) return NULL;
        v = OBJ_VAL(obj_string(r->vm, text, (int)n));
        free(text);
        break;
      }
      case 4: {
        ObjProto *inner = get_proto(r, false);
        if (!inner) return NULL;
        v = OBJ_VAL(inner);
        break;
      }
      default: FAIL(r, "unknown constant tag %u", tag);
    }
    value_array_push(&proto->chunk.constants, v);
  }
  if (r->error[0]) return NULL;
  if (!verify_proto(r->vm, proto, top_level, r->error, sizeof r->error)) return NULL;
  r->depth--;
  return proto;
}

SimStatus bytecode_load(VM *vm, const char *name, const uint8_t *data, size_t size) {
  Reader r = {vm, name, data, data + size, {0}, 0};
  vm->gc_paused++;
  uint32_t count;
  if (size < 8 && memcmp(data, BYTECODE_MAGIC, size) == 0) snprintf(r.error, sizeof r.error, "the file is truncated");
  else if (!bytecode_is(data, size)) snprintf(r.error, sizeof r.error, "it does not start with the simvm bytecode signature");
  if (!r.error[0]) {
    r.p += 8;
    uint32_t version = (uint32_t)get(&r, 4);
    uint32_t actions = (uint32_t)get(&r, 1); /* how the file was compiled; any VM runs either */
    if (!r.error[0] && version != bytecode_version())
      snprintf(r.error, sizeof r.error, "format version %08x, this simvm reads version %08x (recompile it with simc)",
               version, bytecode_version());
    else if (!r.error[0] && actions > 1)
      snprintf(r.error, sizeof r.error, "its actions byte %u is neither 0 (reified) nor 1 (direct)", actions);
  }
  /* the builtins must be this VM's, in the same order */
  if (!r.error[0] && get_count(&r, 4096, "a builtin count", &count)) {
    if (count != (uint32_t)builtin_count)
      snprintf(r.error, sizeof r.error, "it was compiled for %u builtins, this simvm has %d (recompile it)", count, builtin_count);
    for (uint32_t i = 0; i < count && !r.error[0]; i++) {
      char *builtin = get_string(&r, NULL);
      uint32_t arity = (uint32_t)get(&r, 1);
      if (builtin && strcmp(builtin, builtin_table[i].name) != 0)
        snprintf(r.error, sizeof r.error, "builtin %u is '%s', this simvm's is '%s' (recompile it)", i, builtin,
                 builtin_table[i].name);
      else if (builtin && !r.error[0] && (int)arity != builtin_table[i].arity)
        snprintf(r.error, sizeof r.error, "builtin %u '%s' takes %u argument%s in the file, %d in this simvm (recompile it)",
                 i, builtin, arity, arity == 1 ? "" : "s", builtin_table[i].arity);
      free(builtin);
    }
  }
  if (!r.error[0] && vm->globals.count != builtin_count)
    snprintf(r.error, sizeof r.error, "internal: the VM already has a program loaded");
  if (!r.error[0] && get_count(&r, 1u << 16, "a global count", &count)) {
    for (uint32_t i = 0; i < count && !r.error[0]; i++) {
      uint32_t length;
      char *global = get_string(&r, &length);
      int32_t arity = (int32_t)get(&r, 4);
      char *file = global ? get_string(&r, NULL) : NULL;
      int32_t line = (int32_t)get(&r, 4);
      if (global && file && !r.error[0]) {
        if (length == 0) snprintf(r.error, sizeof r.error, "global %u has an empty name", i);
        else if (arity < -1) snprintf(r.error, sizeof r.error, "global %u has arity %d, below -1 (not a function)", i, arity);
        else if (arity > 255) snprintf(r.error, sizeof r.error, "global %u has arity %d, above 255", i, arity);
        else vm_declare_global(vm, obj_string(vm, global, (int)length), arity, vm_file_name(vm, file), line);
      }
      free(global);
      free(file);
    }
  }
  if (!r.error[0] && get_count(&r, 4096, "a module count", &count)) {
    for (uint32_t i = 0; i < count && !r.error[0]; i++) {
      char *key = get_string(&r, NULL);
      ObjProto *proto = key ? get_proto(&r, true) : NULL;
      if (proto && proto->kind != PROTO_BLOCK) snprintf(r.error, sizeof r.error, "module %u is not a block", i);
      if (proto && !r.error[0]) {
        api_add_module(vm, key, obj_closure(vm, proto, 0));
        key = NULL;
      }
      free(key);
    }
  }
  if (!r.error[0] && r.p != r.end) snprintf(r.error, sizeof r.error, "%zu bytes of junk after the program", (size_t)(r.end - r.p));
  vm->gc_paused--;
  if (r.error[0]) {
    /* the reason may quote the file's own names and strings */
    size_t length = strlen(r.error);
    diag_printable(r.error, (int)length, length == sizeof r.error - 1, r.error);
    vm_report(vm, "%s: bad bytecode: %s\n", name, r.error);
    return SIM_COMPILE_ERROR;
  }
  return SIM_OK;
}
