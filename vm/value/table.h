/* An open-addressing hash table keyed by interned strings.
 *
 * Used for the string intern set and the compiler's global names. Lookups
 * compare keys by pointer, since keys are interned. Iteration order is
 * never observable by programs, so determinism does not depend on it. */
#ifndef SIMVM_TABLE_H
#define SIMVM_TABLE_H

#include "object.h"

typedef struct {
  ObjString *key;     /* NULL: empty (value unit) or tombstone (value true) */
  Value value;
} Entry;

typedef struct {
  int count;          /* live entries plus tombstones */
  int capacity;       /* a power of two, or 0         */
  Entry *entries;
} Table;

void table_init(Table *table);
void table_free(Table *table);
/* Look `key` up; true and *value set when present. */
bool table_get(const Table *table, ObjString *key, Value *value);
/* Insert or replace; true when the key was new. */
bool table_set(Table *table, ObjString *key, Value value);
/* Remove; true when the key was present. */
bool table_delete(Table *table, ObjString *key);
/* Find an interned string by content, or NULL (the intern set's lookup). */
ObjString *table_find_string(const Table *table, const char *chars, int length, uint32_t hash);
/* Drop entries whose key is unmarked (the intern set is weak). */
void table_remove_unmarked(Table *table);

/* FNV-1a over `length` bytes. */
uint32_t hash_bytes(const char *chars, int length);

#endif
