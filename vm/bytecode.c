/* Writing and reading bytecode files (see bytecode.h); vm/verify.c checks
 * the code of every prototype read. */
#include "bytecode.h"

#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "verify.h"

/* ---- writing ---- */

static void put_u8(FILE *out, uint8_t v) { fputc(v, out); }
static void put_u16(FILE *out, uint16_t v) {
  put_u8(out, (uint8_t)v);
  put_u8(out, (uint8_t)(v >> 8));
}
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
  fwrite(proto->chunk.code, 1, (size_t)proto->chunk.count, out);
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
  put_u16(out, BYTECODE_VERSION);
  put_u8(out, vm->optimize ? 1 : 0);
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
    put_cstring(out, vm->module_paths[i]);
    put_proto(out, AS_CLOSURE(vm->module_inits.values[i])->proto);
  }
  return !ferror(out);
}

/* ---- reading ---- */

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

/* File names live as long as the VM: keep one Source per name. */
static const char *file_name(VM *vm, const char *name) {
  for (Source *s = vm->sources; s; s = s->next)
    if (strcmp(s->path, name) == 0) return s->path;
  Source *source = source_from_memory(name, "", 0);
  source->next = vm->sources;
  vm->sources = source;
  return source->path;
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
  proto->file = file_name(r->vm, file);
  proto->prelude = strcmp(proto->file, PRELUDE_FILE) == 0;
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

/* A file that begins with the signature's seven letters and either ends
 * before its eighth byte or has the NUL there is bytecode (a short one is
 * then reported as truncated, not parsed as a script); a script may still
 * begin with the name SIMVMBC followed by anything else. */
bool bytecode_is(const uint8_t *data, size_t size) {
  size_t n = size < 8 ? size : 8;
  return size >= 7 && memcmp(data, BYTECODE_MAGIC, n) == 0;
}

SimStatus bytecode_load(VM *vm, const char *name, const uint8_t *data, size_t size) {
  Reader r = {vm, name, data, data + size, {0}, 0};
  vm->gc_paused++;
  uint32_t count;
  if (!bytecode_is(data, size)) snprintf(r.error, sizeof r.error, "it does not start with the simvm bytecode signature");
  else if (size < 8) snprintf(r.error, sizeof r.error, "the file is truncated");
  if (!r.error[0]) {
    r.p += 8;
    uint32_t version = (uint32_t)get(&r, 2);
    uint32_t opt_level = (uint32_t)get(&r, 1);
    if (!r.error[0] && version != BYTECODE_VERSION)
      snprintf(r.error, sizeof r.error, "format version %u, this simvm reads version %d (recompile it with simc)", version,
               BYTECODE_VERSION);
    else if (!r.error[0] && opt_level > 1)
      snprintf(r.error, sizeof r.error, "optimisation level %u is neither 0 nor 1", opt_level);
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
        if (length == 0 || arity < -1 || arity > 255) snprintf(r.error, sizeof r.error, "global %u is malformed", i);
        else vm_declare_global(vm, obj_string(vm, global, (int)length), arity, file_name(vm, file), line);
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
        value_array_push(&vm->module_inits, OBJ_VAL(obj_closure(vm, proto, 0)));
        vm->module_paths = xrealloc(vm->module_paths, (size_t)vm->module_inits.count * sizeof(char *));
        vm->module_paths[vm->module_inits.count - 1] = key;
        key = NULL;
      }
      free(key);
    }
  }
  if (!r.error[0] && r.p != r.end) snprintf(r.error, sizeof r.error, "%zu bytes of junk after the program", (size_t)(r.end - r.p));
  vm->gc_paused--;
  if (r.error[0]) {
    vm_report(vm, "%s: bad bytecode: %s\n", name, r.error);
    return SIM_COMPILE_ERROR;
  }
  return SIM_OK;
}
