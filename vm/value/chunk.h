/* A chunk: one prototype's bytecode, its line table and its constant pool. */
#ifndef SIMVM_CHUNK_H
#define SIMVM_CHUNK_H

#include <stdint.h>

#include "value.h"

typedef struct {
  int count;           /* bytes of code                                 */
  int capacity;
  uint8_t *code;
  int *lines;          /* source line of each code byte (parallel array) */
  ValueArray constants;
} Chunk;

void chunk_init(Chunk *chunk);
/* Free code, lines and the constant array (the GC owns the constants' objects). */
void chunk_free(Chunk *chunk);
/* Append one byte of code attributed to source line `line`. */
void chunk_write(Chunk *chunk, uint8_t byte, int line);
/* Index of `value` in the pool, adding it unless an equal constant of the
 * same type (strings: the same interned object) is among the last 64. */
int chunk_add_constant(Chunk *chunk, Value value);

#endif
