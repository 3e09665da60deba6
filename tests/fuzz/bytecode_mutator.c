/* A structure-aware mutator for the bytecode target (libFuzzer's
 * LLVMFuzzerCustomMutator). Byte flips mostly break a file's lengths and
 * counts and never get past the reader: the capture defect needed 5 million
 * of them. Here most mutations keep the file well formed (api/bytecode.h
 * has the layout) and change one prototype: an operand or an opcode (on an
 * instruction boundary), a capture, its arity or slots, an int constant, or
 * an instruction inserted or deleted (with its line entries and the code
 * length). One in eight, and any input that is not well formed, gets
 * libFuzzer's own mutations. Only the libFuzzer build has it. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "opcodes.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#define MAX_PROTOS 512
#define MAX_INTS 512

/* Where one prototype's parts are in the file. */
typedef struct {
  size_t header;          /* the kind byte; arity, max_slots follow as u32 */
  size_t captures;        /* 2 bytes per upvalue                          */
  uint32_t upvalues;
  size_t code_length;     /* the u32 length                                */
  size_t code;            /* `length` bytes, then 4 x length of lines      */
  uint32_t length;
} ProtoAt;

typedef struct {
  const uint8_t *data;
  size_t size, at;
  bool bad;
  ProtoAt protos[MAX_PROTOS];
  int count;
  size_t ints[MAX_INTS];  /* the tag byte of each int, float or duration constant */
  int int_count;
} Walk;

static uint32_t get_u32(Walk *w) {
  if (w->bad || w->size - w->at < 4) {
    w->bad = true;
    return 0;
  }
  const uint8_t *p = w->data + w->at;
  w->at += 4;
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void skip(Walk *w, uint64_t n) {
  if (w->bad || w->size - w->at < n) w->bad = true;
  else w->at += (size_t)n;
}

static void skip_string(Walk *w) { skip(w, get_u32(w)); }

static void walk_proto(Walk *w, int depth) {
  if (depth > 200) w->bad = true;
  if (w->bad) return;
  ProtoAt p;
  p.header = w->at;
  skip(w, 9);
  p.upvalues = get_u32(w);
  p.captures = w->at;
  skip(w, 2 * (uint64_t)p.upvalues);
  skip(w, 8);
  skip_string(w);
  skip_string(w);
  skip(w, 4);
  p.code_length = w->at;
  p.length = get_u32(w);
  p.code = w->at;
  skip(w, 5 * (uint64_t)p.length);
  uint32_t constants = get_u32(w);
  if (w->bad) return;
  if (w->count < MAX_PROTOS) w->protos[w->count++] = p;
  for (uint32_t i = 0; i < constants && !w->bad; i++) {
    if (w->at >= w->size) {
      w->bad = true;
      break;
    }
    uint8_t tag = w->data[w->at];
    if (tag <= 2 && w->int_count < MAX_INTS) w->ints[w->int_count++] = w->at;
    skip(w, 1);
    if (tag <= 2) skip(w, 8);
    else if (tag == 3) skip_string(w);
    else if (tag == 4) walk_proto(w, depth + 1);
    else w->bad = true;
  }
}

/* Find every prototype of a well-formed file; false if it is not one. */
static bool walk_file(Walk *w, const uint8_t *data, size_t size) {
  memset(w, 0, sizeof *w);
  w->data = data;
  w->size = size;
  if (size < 11 || memcmp(data, "SIMVMBC", 8) != 0) return false;
  w->at = 11;
  uint32_t n = get_u32(w);
  for (uint32_t i = 0; i < n && !w->bad; i++) skip_string(w), skip(w, 1);
  n = get_u32(w);
  for (uint32_t i = 0; i < n && !w->bad; i++) skip_string(w), skip(w, 4), skip_string(w), skip(w, 4);
  n = get_u32(w);
  for (uint32_t i = 0; i < n && !w->bad; i++) skip_string(w), walk_proto(w, 0);
  return !w->bad && w->at == size && w->count > 0;
}

static uint32_t next(uint32_t *state) {
  uint32_t x = *state ? *state : 0x9e3779b9u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Offset (in the code) of the k-th instruction, counting from 0, walking
 * opcodes from the start; the last one when there are fewer. */
static uint32_t instruction(const uint8_t *code, uint32_t length, uint32_t k) {
  uint32_t at = 0, last = 0;
  for (uint32_t i = 0; at < length && i <= k; i++) {
    last = at;
    at += code[at] < OP_COUNT ? (uint32_t)opcode_size(code[at]) : 1;
  }
  return last;
}

/* A small value, the edges of a byte, or anything. */
static uint8_t interesting_byte(uint32_t *rng) {
  static const uint8_t values[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 127, 128, 254, 255};
  uint32_t r = next(rng);
  return r & 1 ? values[(r >> 1) % sizeof values] : (uint8_t)(r >> 8);
}

static uint8_t opcode_like(uint32_t *rng, uint8_t op) {
  /* another opcode with the same operand width, so the layout holds */
  int width = op < OP_COUNT ? (int)opcode_info[op].operand : 0;
  for (int tries = 0; tries < 16; tries++) {
    uint8_t other = (uint8_t)(next(rng) % OP_COUNT);
    if ((int)opcode_info[other].operand == width) return other;
  }
  return op;
}

static uint8_t scratch[1 << 20];

/* Insert `n` bytes `insert` at code offset `at` of `p`, with line entries
 * copied from the instruction there; the new size, or 0 if it would not fit. */
static size_t insert_code(uint8_t *data, size_t size, size_t max_size, const ProtoAt *p, uint32_t at,
                          const uint8_t *insert, uint32_t n) {
  size_t grown = size + 5 * (size_t)n;
  if (grown > max_size || grown > sizeof scratch) return 0;
  size_t code = p->code, lines = p->code + p->length, rest = lines + 4 * (size_t)p->length;
  uint8_t line[4] = {1, 0, 0, 0};
  if (p->length) memcpy(line, data + lines + 4 * (size_t)(at < p->length ? at : p->length - 1), 4);
  size_t o = 0;
  memcpy(scratch, data, code + at), o = code + at;
  memcpy(scratch + o, insert, n), o += n;
  memcpy(scratch + o, data + code + at, p->length - at), o += p->length - at;
  memcpy(scratch + o, data + lines, 4 * (size_t)at), o += 4 * (size_t)at;
  for (uint32_t i = 0; i < n; i++) memcpy(scratch + o, line, 4), o += 4;
  memcpy(scratch + o, data + lines + 4 * (size_t)at, 4 * (size_t)(p->length - at)), o += 4 * (size_t)(p->length - at);
  memcpy(scratch + o, data + rest, size - rest), o += size - rest;
  put_u32(scratch + p->code_length, p->length + n);
  memcpy(data, scratch, o);
  return o;
}

static size_t delete_code(uint8_t *data, size_t size, const ProtoAt *p, uint32_t at, uint32_t n) {
  if (at + n > p->length) return 0;
  size_t code = p->code, lines = p->code + p->length, rest = lines + 4 * (size_t)p->length;
  size_t o = 0;
  memcpy(scratch, data, code + at), o = code + at;
  memcpy(scratch + o, data + code + at + n, p->length - at - n), o += p->length - at - n;
  memcpy(scratch + o, data + lines, 4 * (size_t)at), o += 4 * (size_t)at;
  memcpy(scratch + o, data + lines + 4 * (size_t)(at + n), 4 * (size_t)(p->length - at - n)),
      o += 4 * (size_t)(p->length - at - n);
  memcpy(scratch + o, data + rest, size - rest), o += size - rest;
  put_u32(scratch + p->code_length, p->length - n);
  memcpy(data, scratch, o);
  return o;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  static Walk w;
  uint32_t rng = seed;
  if (size > sizeof scratch || next(&rng) % 8 == 0 || !walk_file(&w, data, size))
    return LLVMFuzzerMutate(data, size, max_size);
  /* the last prototypes are the script's; the prelude's come first */
  uint32_t r = next(&rng);
  const ProtoAt *p = &w.protos[r & 1 ? w.count - 1 - (int)((r >> 1) % (uint32_t)(w.count < 8 ? w.count : 8))
                                     : (int)((r >> 1) % (uint32_t)w.count)];
  uint8_t *code = data + p->code;
  uint32_t at = p->length ? instruction(code, p->length, next(&rng) % (p->length + 1)) : 0;
  switch (next(&rng) % 8) {
    case 0: /* an operand */
      if (p->length && code[at] < OP_COUNT && opcode_size(code[at]) > 1) {
        code[at + 1 + next(&rng) % (uint32_t)(opcode_size(code[at]) - 1)] = interesting_byte(&rng);
        return size;
      }
      /* fall through */
    case 1: /* an opcode */
      if (p->length) {
        code[at] = opcode_like(&rng, code[at]);
        return size;
      }
      break;
    case 2: /* a capture: where from, and which slot or upvalue */
      if (p->upvalues) {
        data[p->captures + next(&rng) % (2 * p->upvalues)] = next(&rng) % 4 ? (uint8_t)(next(&rng) % 6) : interesting_byte(&rng);
        return size;
      }
      break;
    case 3: { /* arity or max_slots */
      size_t field = p->header + 1 + (next(&rng) & 1) * 4;
      uint32_t v = (uint32_t)data[field] | (uint32_t)data[field + 1] << 8;
      v = next(&rng) & 1 ? v + 1 : v ? v - 1 : next(&rng) % 4;
      put_u32(data + field, v);
      return size;
    }
    case 4: /* an int, float or duration constant: its value or its tag */
      if (w.int_count) {
        size_t tag = w.ints[next(&rng) % (uint32_t)w.int_count];
        if (next(&rng) % 4 == 0) {
          data[tag] = (uint8_t)(next(&rng) % 3);
        } else {
          static const int64_t values[] = {0, 1, -1, 2, 255, 256, 65536, INT64_MIN, INT64_MAX, 1000000000};
          int64_t v = next(&rng) & 1 ? values[next(&rng) % (sizeof values / sizeof values[0])] : (int64_t)next(&rng);
          for (int i = 0; i < 8; i++) data[tag + 1 + i] = (uint8_t)((uint64_t)v >> (8 * i));
        }
        return size;
      }
      break;
    case 5:
    case 6: { /* insert an instruction */
      uint8_t insert[3];
      insert[0] = (uint8_t)(next(&rng) % OP_COUNT);
      uint32_t n = (uint32_t)opcode_size(insert[0]);
      for (uint32_t i = 1; i < n; i++) insert[i] = interesting_byte(&rng);
      size_t grown = insert_code(data, size, max_size, p, at, insert, n);
      if (grown) return grown;
      break;
    }
    default: /* delete one */
      if (p->length > 1) {
        uint32_t n = code[at] < OP_COUNT ? (uint32_t)opcode_size(code[at]) : 1;
        size_t shrunk = delete_code(data, size, p, at, n);
        if (shrunk) return shrunk;
      }
      break;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
