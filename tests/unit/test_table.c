/* vm/value/table.c: the open-addressing table keyed by interned strings, and the
 * string intern set built on it (obj_string in vm/value/object.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "table.h"

/* A free-standing key, outside any VM: the table only reads hash and, for
 * table_find_string, length and chars. `hash` 0 means "compute it". */
static ObjString *make_key_hashed(const char *text, uint32_t hash) {
  size_t length = strlen(text);
  ObjString *s = calloc(1, sizeof(ObjString) + length + 1);
  if (!s) abort();
  s->obj.type = OBJ_STRING;
  s->length = s->capacity = s->used = (int)length;
  s->chars = (char *)(s + 1); /* its own storage, after the header */
  memcpy(s->chars, text, length + 1);
  s->hash = hash ? hash : hash_bytes(text, (int)length);
  return s;
}
static ObjString *make_key(const char *text) { return make_key_hashed(text, 0); }

static bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

static void test_hash_is_fnv1a(void **state) {
  (void)state;
  assert_int_equal(hash_bytes("", 0), 2166136261u);
  assert_int_equal(hash_bytes("a", 1), 0xe40c292cu);
  assert_int_equal(hash_bytes("foobar", 6), 0xbf9cf968u);
  /* bytes, not C strings: a NUL inside counts */
  assert_int_not_equal(hash_bytes("a\0b", 3), hash_bytes("a", 1));
}

static void test_empty_table(void **state) {
  (void)state;
  Table table;
  table_init(&table);
  ObjString *k = make_key("k");
  Value v = INT_VAL(99);
  assert_false(table_get(&table, k, &v));
  assert_int_equal(AS_INT(v), 99); /* untouched */
  assert_false(table_delete(&table, k));
  assert_null(table_find_string(&table, "k", 1, k->hash));
  assert_int_equal(table.count, 0);
  assert_int_equal(table.capacity, 0);
  table_free(&table);
  free(k);
}

static void test_set_get_replace(void **state) {
  (void)state;
  Table table;
  table_init(&table);
  ObjString *a = make_key("alpha"), *b = make_key("beta");
  assert_true(table_set(&table, a, INT_VAL(1)));
  assert_true(table_set(&table, b, INT_VAL(2)));
  assert_int_equal(table.count, 2);
  assert_true(is_power_of_two(table.capacity));
  Value v;
  assert_true(table_get(&table, a, &v));
  assert_true(IS_INT(v));
  assert_int_equal(AS_INT(v), 1);
  assert_true(table_get(&table, b, &v));
  assert_int_equal(AS_INT(v), 2);
  /* replacing is not new, and does not change the count */
  assert_false(table_set(&table, a, BOOL_VAL(true)));
  assert_int_equal(table.count, 2);
  assert_true(table_get(&table, a, &v));
  assert_true(IS_BOOL(v) && AS_BOOL(v));
  /* keys compare by identity: another object with the same text is another key */
  ObjString *a2 = make_key("alpha");
  assert_false(table_get(&table, a2, &v));
  table_free(&table);
  assert_int_equal(table.capacity, 0);
  assert_null(table.entries);
  free(a);
  free(a2);
  free(b);
}

static void test_delete_and_tombstones(void **state) {
  (void)state;
  Table table;
  table_init(&table);
  /* three keys with one hash: a probe chain a -> b -> c */
  ObjString *a = make_key_hashed("a", 7), *b = make_key_hashed("b", 7), *c = make_key_hashed("c", 7);
  ObjString *d = make_key_hashed("d", 7);
  table_set(&table, a, INT_VAL(1));
  table_set(&table, b, INT_VAL(2));
  table_set(&table, c, INT_VAL(3));
  assert_int_equal(table.count, 3);

  assert_true(table_delete(&table, b));
  assert_false(table_delete(&table, b)); /* already gone */
  assert_int_equal(table.count, 3);      /* the tombstone still counts */
  Value v;
  assert_false(table_get(&table, b, &v));
  /* the tombstone does not cut the chain */
  assert_true(table_get(&table, c, &v));
  assert_int_equal(AS_INT(v), 3);
  assert_ptr_equal(table_find_string(&table, "c", 1, 7), c);
  assert_null(table_find_string(&table, "b", 1, 7));

  /* a new key reuses the tombstone: no growth in count */
  assert_true(table_set(&table, d, INT_VAL(4)));
  assert_int_equal(table.count, 3);
  assert_true(table_get(&table, d, &v));
  assert_int_equal(AS_INT(v), 4);
  /* and a deleted key comes back as new */
  assert_true(table_delete(&table, a));
  assert_true(table_set(&table, a, INT_VAL(10)));
  assert_true(table_get(&table, a, &v));
  assert_int_equal(AS_INT(v), 10);
  assert_true(table_get(&table, c, &v));
  assert_int_equal(AS_INT(v), 3);
  table_free(&table);
  free(a);
  free(b);
  free(c);
  free(d);
}

static void test_growth_keeps_everything(void **state) {
  (void)state;
  enum { N = 1000 };
  ObjString *keys[N];
  char text[32];
  Table table;
  table_init(&table);
  for (int i = 0; i < N; i++) {
    snprintf(text, sizeof text, "key%d", i);
    keys[i] = make_key(text);
    assert_true(table_set(&table, keys[i], INT_VAL(i * 3)));
    assert_true(is_power_of_two(table.capacity));
    assert_true(table.count <= table.capacity * 3 / 4); /* load factor 0.75 */
  }
  assert_int_equal(table.count, N);
  for (int i = 0; i < N; i++) {
    Value v;
    assert_true(table_get(&table, keys[i], &v));
    assert_int_equal(AS_INT(v), i * 3);
    snprintf(text, sizeof text, "key%d", i);
    assert_ptr_equal(table_find_string(&table, text, (int)strlen(text), keys[i]->hash), keys[i]);
  }
  /* delete the even ones; the odd ones stay */
  for (int i = 0; i < N; i += 2) assert_true(table_delete(&table, keys[i]));
  for (int i = 0; i < N; i++) {
    Value v;
    assert_int_equal(table_get(&table, keys[i], &v), i % 2 == 1);
  }
  table_free(&table);
  for (int i = 0; i < N; i++) free(keys[i]);
}

/* Growth rehashes away tombstones: a table whose keys keep coming and going
 * (the weak intern set) stays small. */
static void test_churn_does_not_grow(void **state) {
  (void)state;
  Table table;
  table_init(&table);
  ObjString *resident = make_key("resident");
  table_set(&table, resident, INT_VAL(42));
  char text[32];
  for (int i = 0; i < 20000; i++) {
    snprintf(text, sizeof text, "transient%d", i);
    ObjString *k = make_key(text);
    assert_true(table_set(&table, k, UNIT_VAL));
    assert_true(table_delete(&table, k));
    free(k);
  }
  assert_true(table.capacity <= 64);
  Value v;
  assert_true(table_get(&table, resident, &v));
  assert_int_equal(AS_INT(v), 42);
  table_free(&table);
  free(resident);
}

static void test_remove_unmarked(void **state) {
  (void)state;
  Table table;
  table_init(&table);
  ObjString *keep = make_key("keep"), *drop1 = make_key("drop1"), *drop2 = make_key("drop2");
  keep->obj.marked = true;
  table_set(&table, drop1, UNIT_VAL);
  table_set(&table, keep, UNIT_VAL);
  table_set(&table, drop2, UNIT_VAL);
  table_remove_unmarked(&table);
  Value v;
  assert_true(table_get(&table, keep, &v));
  assert_false(table_get(&table, drop1, &v));
  assert_false(table_get(&table, drop2, &v));
  assert_null(table_find_string(&table, "drop1", 5, drop1->hash));
  assert_ptr_equal(table_find_string(&table, "keep", 4, keep->hash), keep);
  table_free(&table);
  free(keep);
  free(drop1);
  free(drop2);
}

/* table_find_string compares content and length, not just the hash. */
static void test_find_string_compares_content(void **state) {
  (void)state;
  Table table;
  table_init(&table);
  ObjString *ab = make_key_hashed("ab", 1), *abc = make_key_hashed("abc", 1), *xy = make_key_hashed("xy", 1);
  table_set(&table, ab, UNIT_VAL);
  table_set(&table, abc, UNIT_VAL);
  table_set(&table, xy, UNIT_VAL);
  assert_ptr_equal(table_find_string(&table, "ab", 2, 1), ab);
  assert_ptr_equal(table_find_string(&table, "abc", 3, 1), abc);
  assert_ptr_equal(table_find_string(&table, "xy", 2, 1), xy);
  assert_null(table_find_string(&table, "a", 1, 1));
  assert_null(table_find_string(&table, "xz", 2, 1));
  assert_null(table_find_string(&table, "ab", 2, 2)); /* another hash */
  table_free(&table);
  free(ab);
  free(abc);
  free(xy);
}

/* ---- interning, through a VM ---- */

static void test_interning_returns_same_object(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  vm->gc_paused++;
  ObjString *a = obj_string(vm, "hello world", 11);
  ObjString *b = obj_string(vm, "hello world!!", 11); /* the same 11 bytes */
  ObjString *c = obj_cstring(vm, "hello world");
  ObjString *d = obj_stringf(vm, "hello %s", "world");
  assert_ptr_equal(a, b);
  assert_ptr_equal(a, c);
  assert_ptr_equal(a, d);
  assert_int_equal(a->length, 11);
  assert_string_equal(a->chars, "hello world");
  assert_int_equal(a->hash, hash_bytes("hello world", 11));
  assert_ptr_equal(table_find_string(&vm->strings, "hello world", 11, a->hash), a);

  ObjString *other = obj_cstring(vm, "hello worle");
  assert_ptr_not_equal(a, other);
  assert_ptr_not_equal(obj_cstring(vm, "hello"), a); /* a prefix is another string */

  /* lengths count bytes: an embedded NUL makes another string */
  ObjString *nul = obj_string(vm, "ab\0cd", 5);
  ObjString *ab = obj_cstring(vm, "ab");
  assert_ptr_not_equal(nul, ab);
  assert_int_equal(nul->length, 5);
  assert_int_equal(nul->chars[5], '\0');
  assert_ptr_equal(obj_string(vm, "ab\0cd", 5), nul);

  ObjString *empty = obj_string(vm, "", 0);
  assert_int_equal(empty->length, 0);
  assert_ptr_equal(obj_cstring(vm, ""), empty);
  vm->gc_paused--;
}

/* The intern set is weak: an unreachable string leaves it at a collection;
 * a rooted one stays and is still the interned object. */
static void test_intern_set_is_weak(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  static const char dropped[] = "unit-test: an unreferenced string";
  static const char kept[] = "unit-test: a rooted string";
  ObjString *d = obj_cstring(vm, dropped);
  uint32_t hash = d->hash;
  ObjString *k = obj_cstring(vm, kept);
  gc_push_root(vm, OBJ_VAL(k));
  assert_ptr_equal(table_find_string(&vm->strings, dropped, (int)strlen(dropped), hash), d);
  gc_collect(vm);
  assert_null(table_find_string(&vm->strings, dropped, (int)strlen(dropped), hash));
  assert_ptr_equal(table_find_string(&vm->strings, kept, (int)strlen(kept), k->hash), k);
  assert_ptr_equal(obj_cstring(vm, kept), k);
  assert_string_equal(k->chars, kept);
  gc_pop_root(vm);
  /* interning the dropped text again gives a working string */
  ObjString *again = obj_cstring(vm, dropped);
  assert_string_equal(again->chars, dropped);
  assert_ptr_equal(obj_cstring(vm, dropped), again);
}

/* Builtin and prelude names survive collections (they are rooted). */
static void test_global_names_survive_collection(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  gc_collect(vm);
  gc_collect(vm);
  assert_true(vm_find_global(vm, obj_cstring(vm, "delay")) >= 0);
  assert_true(vm_find_global(vm, obj_cstring(vm, "forever")) >= 0);
  assert_int_equal(vm_find_global(vm, obj_cstring(vm, "no such global")), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hash_is_fnv1a),
      cmocka_unit_test(test_empty_table),
      cmocka_unit_test(test_set_get_replace),
      cmocka_unit_test(test_delete_and_tombstones),
      cmocka_unit_test(test_growth_keeps_everything),
      cmocka_unit_test(test_churn_does_not_grow),
      cmocka_unit_test(test_remove_unmarked),
      cmocka_unit_test(test_find_string_compares_content),
      cmocka_unit_test_setup_teardown(test_interning_returns_same_object, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_intern_set_is_weak, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_global_names_survive_collection, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
