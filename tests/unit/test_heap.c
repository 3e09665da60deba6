/* vm/value/heap.c: size-class blocks, free slots, spare blocks, large objects,
 * promotion and the young reset. The heap is driven directly: the tests
 * play the collector, marking the objects that live. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

/* A fresh object of `size` bytes, typed and unmarked as gc_alloc leaves it. */
static Obj *make(Heap *heap, size_t size) {
  Obj *obj = heap_alloc(heap, size);
  obj->type = OBJ_CONS;
  obj->marked = false;
  return obj;
}

/* The collector's verdict: marked objects live (and are unmarked). */
static bool marked_live(void *ctx, Obj *obj) {
  int *dead = ctx;
  if (obj->marked) {
    obj->marked = false;
    return false;
  }
  (*dead)++;
  return true;
}

static bool count(void *ctx, Obj *obj) {
  (void)obj;
  (*(int *)ctx)++;
  return false;
}

static int young_objects(Heap *heap) {
  int n = 0;
  heap_each(heap, true, count, &n);
  return n;
}

static int all_objects(Heap *heap) {
  int n = 0;
  heap_each(heap, false, count, &n);
  return n;
}

/* Objects of one size class are bumped out of one block, one slot apart;
 * sizes round up to 8 bytes; every object is 8-aligned. */
static void test_bump_allocation(void **state) {
  (void)state;
  Heap heap;
  heap_init(&heap);
  Obj *a = make(&heap, 40), *b = make(&heap, 40), *c = make(&heap, 33);
  assert_int_equal((char *)b - (char *)a, 40);
  assert_int_equal((char *)c - (char *)b, 40); /* 33 bytes take a 40-byte slot */
  Obj *d = make(&heap, 24);
  assert_true((uintptr_t)d % 8 == 0);
  assert_true(heap.used == ((UINT64_C(1) << 4) | (UINT64_C(1) << 2))); /* the 40- and 24-byte classes */
  assert_int_equal(young_objects(&heap), 4);
  heap_free(&heap);
}

/* A sweep frees what is unmarked; the next allocation of the class reuses
 * a freed slot before bumping. */
static void test_sweep_reuses_dead_slots(void **state) {
  (void)state;
  Heap heap;
  heap_init(&heap);
  Obj *objs[10];
  for (int i = 0; i < 10; i++) objs[i] = make(&heap, 48);
  for (int i = 0; i < 10; i += 2) objs[i]->marked = true; /* the even ones live */
  int dead = 0;
  heap_sweep(&heap, marked_live, &dead);
  assert_int_equal(dead, 5);
  assert_int_equal(young_objects(&heap), 5);
  for (int i = 0; i < 10; i += 2) assert_false(objs[i]->marked); /* unmarked by the sweep */
  Obj *again = make(&heap, 48);
  bool reused = false;
  for (int i = 1; i < 10; i += 2) reused |= again == objs[i];
  assert_true(reused);
  assert_int_equal(young_objects(&heap), 6);
  heap_free(&heap);
}

/* A block whose objects all died becomes spare and serves another class;
 * the block being bumped is kept. */
static void test_empty_blocks_become_spare(void **state) {
  (void)state;
  Heap heap;
  heap_init(&heap);
  int per_block = (HEAP_BLOCK_BYTES - 64) / 64;
  for (int i = 0; i < 3 * per_block; i++) make(&heap, 64); /* three or four blocks */
  int dead = 0;
  heap_sweep(&heap, marked_live, &dead);
  assert_int_equal(dead, 3 * per_block);
  assert_true(heap.spare_count >= 2);
  int spare = heap.spare_count;
  make(&heap, 200);
  assert_int_equal(heap.spare_count, spare - 1); /* another class took a spare block */
  heap_free(&heap);
}

/* Large objects are malloc'd one by one, swept and freed like the others. */
static void test_large_objects(void **state) {
  (void)state;
  Heap heap;
  heap_init(&heap);
  Obj *big = make(&heap, HEAP_SMALL_MAX + 1);
  Obj *huge = make(&heap, 100000);
  assert_true((uintptr_t)big % 16 == 0 && (uintptr_t)huge % 16 == 0);
  assert_int_equal(heap.used, 0);
  huge->marked = true;
  int dead = 0;
  heap_sweep(&heap, marked_live, &dead);
  assert_int_equal(dead, 1);
  assert_int_equal(young_objects(&heap), 1);
  heap_free(&heap);
}

/* Promoted objects are old: sweeps and resets no longer see them; the
 * young generation starts empty in fresh blocks, and a reset empties it
 * again, keeping a block per class for the next run. */
static void test_promote_and_reset(void **state) {
  (void)state;
  Heap heap;
  heap_init(&heap);
  Obj *old = make(&heap, 40);
  make(&heap, 1000);
  heap_promote(&heap);
  assert_int_equal(young_objects(&heap), 0);
  assert_int_equal(all_objects(&heap), 2);
  Obj *young = make(&heap, 40);
  assert_true(young != old);
  make(&heap, 40);
  make(&heap, 2000);
  assert_int_equal(young_objects(&heap), 3);
  int dead = 0;
  heap_sweep(&heap, marked_live, &dead); /* the old ones are unmarked, yet not visited */
  assert_int_equal(dead, 3);
  Obj *before_reset = make(&heap, 40);
  heap_reset_young(&heap);
  assert_int_equal(young_objects(&heap), 0);
  assert_null(heap.large);
  /* the class kept its first block, emptied: the next object takes its first slot */
  Obj *after_reset = make(&heap, 40);
  assert_true(after_reset <= before_reset);
  assert_int_equal(young_objects(&heap), 1);
  heap_reset_young(&heap);
  assert_int_equal(all_objects(&heap), 2);
  assert_int_equal(old->type, OBJ_CONS); /* untouched */
  heap_free(&heap);
}

/* A reset class whose blocks were many bumps into its first one again,
 * and on into new blocks, within bounds (ASan checks every write). */
static void test_reset_of_many_blocks(void **state) {
  (void)state;
  Heap heap;
  heap_init(&heap);
  enum { N = 3 * HEAP_BLOCK_BYTES / 48 };
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      Obj *obj = make(&heap, 48);
      memset((char *)obj + sizeof(Obj), 0x5a, 48 - sizeof(Obj));
    }
    assert_int_equal(young_objects(&heap), N);
    heap_reset_young(&heap);
    assert_int_equal(young_objects(&heap), 0);
  }
  heap_free(&heap);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bump_allocation),
      cmocka_unit_test(test_sweep_reuses_dead_slots),
      cmocka_unit_test(test_empty_blocks_become_spare),
      cmocka_unit_test(test_large_objects),
      cmocka_unit_test(test_promote_and_reset),
      cmocka_unit_test(test_reset_of_many_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
