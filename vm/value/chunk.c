#include "chunk.h"

#include <stdlib.h>

#include "../../base/alloc.h"

void chunk_init(Chunk *chunk) {
  chunk->count = 0;
  chunk->capacity = 0;
  chunk->code = NULL;
  chunk->lines = NULL;
  value_array_init(&chunk->constants);
}

void chunk_free(Chunk *chunk) {
  free(chunk->code);
  free(chunk->lines);
  value_array_free(&chunk->constants);
  chunk_init(chunk);
}

void chunk_write(Chunk *chunk, uint8_t byte, int line) {
  if (chunk->count == chunk->capacity) {
    chunk->capacity = chunk->capacity ? chunk->capacity * 2 : 32;
    chunk->code = xrealloc(chunk->code, (size_t)chunk->capacity);
    chunk->lines = xrealloc(chunk->lines, (size_t)chunk->capacity * sizeof(int));
  }
  chunk->code[chunk->count] = byte;
  chunk->lines[chunk->count] = line;
  chunk->count++;
}

static bool same_constant(Value a, Value b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case VAL_INT:
    case VAL_DURATION: return AS_INT(a) == AS_INT(b);
    case VAL_FLOAT: return AS_FLOAT(a) == AS_FLOAT(b) && !((AS_FLOAT(a) == 0) && (1 / AS_FLOAT(a) != 1 / AS_FLOAT(b)));
    case VAL_OBJ: return AS_OBJ(a) == AS_OBJ(b);
    default: return true;
  }
}

/* Constants are shared when an equal one is among the last few added: the
 * common repeats are close together, and a full search would make large
 * functions quadratic to compile. */
#define CONSTANT_SEARCH 64

int chunk_add_constant(Chunk *chunk, Value value) {
  int first = chunk->constants.count > CONSTANT_SEARCH ? chunk->constants.count - CONSTANT_SEARCH : 0;
  for (int i = chunk->constants.count - 1; i >= first; i--)
    if (same_constant(chunk->constants.values[i], value)) return i;
  value_array_push(&chunk->constants, value);
  return chunk->constants.count - 1;
}
