#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "../../base/alloc.h"

#define MAX_LOAD 0.75

void table_init(Table *table) {
  table->count = 0;
  table->capacity = 0;
  table->entries = NULL;
}

void table_free(Table *table) {
  free(table->entries);
  table_init(table);
}

uint32_t hash_bytes(const char *chars, int length) {
  uint32_t hash = 2166136261u;
  for (int i = 0; i < length; i++) {
    hash ^= (uint8_t)chars[i];
    hash *= 16777619u;
  }
  return hash;
}

static Entry *find_entry(Entry *entries, int capacity, ObjString *key) {
  uint32_t index = key->hash & (uint32_t)(capacity - 1);
  Entry *tombstone = NULL;
  for (;;) {
    Entry *entry = &entries[index];
    if (entry->key == NULL) {
      if (IS_UNIT(entry->value)) return tombstone ? tombstone : entry;
      if (!tombstone) tombstone = entry;
    } else if (entry->key == key) {
      return entry;
    }
    index = (index + 1) & (uint32_t)(capacity - 1);
  }
}

/* Rehash, dropping tombstones; the capacity doubles only when the live
 * entries need it, so a weak table that keeps losing keys does not grow. */
static void grow(Table *table) {
  int live = 0;
  for (int i = 0; i < table->capacity; i++)
    if (table->entries[i].key) live++;
  int capacity = table->capacity ? table->capacity : 16;
  while ((live + 1) > capacity * MAX_LOAD / 2) capacity *= 2;
  Entry *entries = xrealloc(NULL, (size_t)capacity * sizeof(Entry));
  for (int i = 0; i < capacity; i++) {
    entries[i].key = NULL;
    entries[i].value = UNIT_VAL;
  }
  table->count = 0;
  for (int i = 0; i < table->capacity; i++) {
    Entry *old = &table->entries[i];
    if (!old->key) continue;
    Entry *dest = find_entry(entries, capacity, old->key);
    *dest = *old;
    table->count++;
  }
  free(table->entries);
  table->entries = entries;
  table->capacity = capacity;
}

bool table_get(const Table *table, ObjString *key, Value *value) {
  if (table->count == 0) return false;
  Entry *entry = find_entry(table->entries, table->capacity, key);
  if (!entry->key) return false;
  *value = entry->value;
  return true;
}

bool table_set(Table *table, ObjString *key, Value value) {
  if (table->count + 1 > table->capacity * MAX_LOAD) grow(table);
  Entry *entry = find_entry(table->entries, table->capacity, key);
  bool is_new = entry->key == NULL;
  if (is_new && IS_UNIT(entry->value)) table->count++;
  entry->key = key;
  entry->value = value;
  return is_new;
}

bool table_delete(Table *table, ObjString *key) {
  if (table->count == 0) return false;
  Entry *entry = find_entry(table->entries, table->capacity, key);
  if (!entry->key) return false;
  entry->key = NULL;
  entry->value = BOOL_VAL(true);
  return true;
}

ObjString *table_find_string(const Table *table, const char *chars, int length, uint32_t hash) {
  if (table->count == 0) return NULL;
  uint32_t index = hash & (uint32_t)(table->capacity - 1);
  for (;;) {
    Entry *entry = &table->entries[index];
    if (entry->key == NULL) {
      if (IS_UNIT(entry->value)) return NULL;
    } else if (entry->key->length == length && entry->key->hash == hash &&
               memcmp(entry->key->chars, chars, (size_t)length) == 0) {
      return entry->key;
    }
    index = (index + 1) & (uint32_t)(table->capacity - 1);
  }
}

void table_remove_unmarked(Table *table) {
  for (int i = 0; i < table->capacity; i++) {
    Entry *entry = &table->entries[i];
    if (entry->key && !entry->key->obj.marked) table_delete(table, entry->key);
  }
}
