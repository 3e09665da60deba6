/* What the bytecode format's readers and writers share (see bytecode.h):
 * its version and its signature. */
#include <string.h>

#include "../vm/interp/builtins.h"
#include "bytecode.h"

static uint32_t hash_bytes_into(uint32_t h, const void *data, size_t length) {
  const unsigned char *p = data;
  for (size_t i = 0; i < length; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* A string and its terminator, so that ("ab", "c") and ("a", "bc") differ. */
static uint32_t hash_text(uint32_t h, const char *text) { return hash_bytes_into(h, text, strlen(text) + 1); }

static uint32_t hash_int(uint32_t h, int n) {
  uint8_t bytes[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
  return hash_bytes_into(h, bytes, sizeof bytes);
}

uint32_t bytecode_version(void) {
  static uint32_t version; /* the tables are constant: hash them once */
  if (version) return version;
  uint32_t h = 2166136261u;
  h = hash_int(h, BYTECODE_LAYOUT);
  h = hash_int(h, OP_COUNT);
  for (int op = 0; op < OP_COUNT; op++) {
    const OpInfo *info = &opcode_info[op];
    h = hash_text(h, info->name);
    h = hash_int(h, (int)info->operand);
    h = hash_text(h, info->pops);
    h = hash_text(h, info->pushes);
    h = hash_int(h, (int)info->flags);
  }
  h = hash_int(h, builtin_count);
  for (int i = 0; i < builtin_count; i++) {
    const Builtin *b = &builtin_table[i];
    h = hash_text(h, b->name);
    h = hash_int(h, b->arity);
    h = hash_text(h, b->op >= 0 ? opcode_info[b->op].name : "");
  }
  return version = h ? h : 1;
}

/* A file that begins with the signature's seven letters and either ends
 * before its eighth byte or has the NUL there is bytecode (a short one is
 * then reported as truncated, not parsed as a script); a script may still
 * begin with the name SIMVMBC followed by anything else. */
bool bytecode_is(const uint8_t *data, size_t size) {
  size_t n = size < 8 ? size : 8;
  return size >= 7 && memcmp(data, BYTECODE_MAGIC, n) == 0;
}
