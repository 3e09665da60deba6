/* vm/value/timer.c: the 4-ary min-heap of timers ordered by (when, seq), with
 * cancellation in O(1) and stale entries dropped or rebuilt away. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "timer.h"

static void timer_init(Timer *timer) {
  memset(timer, 0, sizeof *timer);
  timer->kind = TIMER_DELAY;
}

static bool live(const TimerEntry *e) { return e->timer->set && e->timer->seq == e->seq; }

/* No child is earlier than its parent; the stale count is exact; no timer
 * has two live entries. */
static void check_heap(const TimerHeap *heap, const char *file, int line) {
  int stale = 0;
  for (int i = 0; i < heap->count; i++) {
    const TimerEntry *t = &heap->items[i];
    if (!live(t)) stale++;
    for (int j = 0; j < i; j++) {
      if (live(t) && live(&heap->items[j]) && t->timer == heap->items[j].timer) {
        print_error("timer in two live entries, slots %d and %d\n", j, i);
        _fail(file, line);
      }
    }
    if (i > 0) {
      const TimerEntry *parent = &heap->items[(i - 1) / 4];
      if (t->when < parent->when || (t->when == parent->when && t->seq < parent->seq)) {
        print_error("heap order broken at slot %d: (%lld, %llu) under (%lld, %llu)\n", i, (long long)t->when,
                    (unsigned long long)t->seq, (long long)parent->when, (unsigned long long)parent->seq);
        _fail(file, line);
      }
    }
  }
  if (stale != heap->stale) {
    print_error("%d stale entries, the heap counts %d\n", stale, heap->stale);
    _fail(file, line);
  }
}
#define assert_heap_valid(heap) check_heap((heap), __FILE__, __LINE__)

static void test_empty_heap(void **state) {
  (void)state;
  TimerHeap heap;
  timer_heap_init(&heap);
  assert_int_equal(heap.count, 0);
  assert_null(timer_heap_peek(&heap));
  assert_null(timer_heap_pop(&heap));
  Timer unset;
  timer_init(&unset);
  assert_false(timer_is_set(&unset));
  timer_heap_remove(&heap, &unset); /* not queued: left alone */
  assert_int_equal(heap.count, 0);
  assert_int_equal(heap.stale, 0);
  timer_heap_free(&heap);
}

static void test_orders_by_time(void **state) {
  (void)state;
  static const int64_t whens[] = {50, 10, 40, 30, 20, 60, 0, 70};
  enum { N = sizeof whens / sizeof whens[0] };
  Timer timers[N];
  TimerHeap heap;
  timer_heap_init(&heap);
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    timer_heap_insert(&heap, &timers[i], whens[i], (uint64_t)i);
    assert_true(timer_is_set(&timers[i]));
    assert_int_equal(timers[i].when, whens[i]);
    assert_int_equal(timers[i].seq, (uint64_t)i);
    assert_heap_valid(&heap);
  }
  assert_int_equal(heap.count, N);
  assert_ptr_equal(timer_heap_peek(&heap), &timers[6]); /* when 0 */
  assert_int_equal(heap.count, N);                      /* peek does not remove */
  for (int64_t expected = 0; expected <= 70; expected += 10) {
    Timer *t = timer_heap_pop(&heap);
    assert_non_null(t);
    assert_int_equal(t->when, expected);
    assert_false(timer_is_set(t));
    assert_heap_valid(&heap);
  }
  assert_null(timer_heap_pop(&heap));
  timer_heap_free(&heap);
}

/* Timers due at the same instant fire by sequence number, not insertion order. */
static void test_same_time_fifo_by_seq(void **state) {
  (void)state;
  static const uint64_t seqs[] = {7, 3, 9, 1, 5, 2, 8, 4, 6, 0};
  enum { N = sizeof seqs / sizeof seqs[0] };
  Timer timers[N];
  TimerHeap heap;
  timer_heap_init(&heap);
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    timer_heap_insert(&heap, &timers[i], 1000, seqs[i]);
  }
  /* an earlier timer with a larger seq still comes first */
  Timer early;
  timer_init(&early);
  timer_heap_insert(&heap, &early, 999, 100);
  assert_ptr_equal(timer_heap_pop(&heap), &early);
  for (uint64_t expected = 0; expected < N; expected++) {
    Timer *t = timer_heap_pop(&heap);
    assert_non_null(t);
    assert_int_equal(t->when, 1000);
    assert_int_equal(t->seq, expected);
  }
  assert_int_equal(heap.count, 0);
  timer_heap_free(&heap);
}

/* Creation order among equal times, when inserted in creation order (the scheduler's case). */
static void test_same_time_insertion_order(void **state) {
  (void)state;
  enum { N = 40 };
  Timer timers[N];
  TimerHeap heap;
  timer_heap_init(&heap);
  uint64_t seq = 0;
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    timer_heap_insert(&heap, &timers[i], i % 2 ? 5 : 3, seq++);
  }
  for (int i = 0; i < N; i += 2) assert_ptr_equal(timer_heap_pop(&heap), &timers[i]);
  for (int i = 1; i < N; i += 2) assert_ptr_equal(timer_heap_pop(&heap), &timers[i]);
  assert_null(timer_heap_peek(&heap));
  timer_heap_free(&heap);
}

/* Timers set in firing order are taken off the front of the sorted array;
 * one set out of order, after some were taken, turns it back into a heap,
 * and one set once it is empty starts a sorted array again. */
static void test_sorted_then_out_of_order(void **state) {
  (void)state;
  enum { N = 40 };
  Timer timers[N], early, late;
  TimerHeap heap;
  timer_heap_init(&heap);
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    timer_heap_insert(&heap, &timers[i], 100 + i / 4, (uint64_t)i);
  }
  for (int i = 0; i < 5; i++) assert_ptr_equal(timer_heap_pop(&heap), &timers[i]);
  timer_heap_remove(&heap, &timers[7]);
  timer_init(&early);
  timer_heap_insert(&heap, &early, 101, 1000); /* after timers 4..7, before 8.. */
  assert_heap_valid(&heap);
  for (int i = 5; i < 7; i++) assert_ptr_equal(timer_heap_pop(&heap), &timers[i]);
  assert_ptr_equal(timer_heap_pop(&heap), &early);
  for (int i = 8; i < N; i++) {
    assert_ptr_equal(timer_heap_pop(&heap), &timers[i]);
    assert_heap_valid(&heap);
  }
  assert_null(timer_heap_pop(&heap));
  timer_init(&late);
  timer_heap_insert(&heap, &late, 500, 2000);
  assert_ptr_equal(timer_heap_pop(&heap), &late);
  timer_heap_free(&heap);
}

static void test_remove_from_middle(void **state) {
  (void)state;
  enum { N = 15 };
  Timer timers[N];
  TimerHeap heap;
  timer_heap_init(&heap);
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    timer_heap_insert(&heap, &timers[i], (int64_t)((i * 7) % N), (uint64_t)i);
  }
  /* remove timers sitting in interior slots, and the one in the last slot */
  Timer *middle = heap.items[N / 2].timer;
  Timer *inner = heap.items[1].timer;
  Timer *last = heap.items[heap.count - 1].timer;
  timer_heap_remove(&heap, middle);
  assert_false(timer_is_set(middle));
  assert_heap_valid(&heap);
  timer_heap_remove(&heap, inner);
  assert_false(timer_is_set(inner));
  assert_heap_valid(&heap);
  timer_heap_remove(&heap, last);
  assert_false(timer_is_set(last));
  assert_heap_valid(&heap);
  assert_int_equal(timer_heap_size(&heap), N - 3);
  assert_int_equal(heap.stale, 3); /* cancelled in O(1): the entries stay, stale */
  /* removing again is a no-op */
  timer_heap_remove(&heap, middle);
  assert_int_equal(timer_heap_size(&heap), N - 3);
  assert_int_equal(heap.stale, 3);

  int64_t previous = -1;
  int popped = 0;
  Timer *t;
  while ((t = timer_heap_pop(&heap)) != NULL) {
    assert_true(t != middle && t != inner && t != last);
    assert_true(t->when > previous); /* the times are distinct here */
    previous = t->when;
    popped++;
  }
  assert_int_equal(popped, N - 3);
  timer_heap_free(&heap);
}

/* Remove the root: the next earliest takes its place. */
static void test_remove_root(void **state) {
  (void)state;
  Timer a, b, c;
  timer_init(&a);
  timer_init(&b);
  timer_init(&c);
  TimerHeap heap;
  timer_heap_init(&heap);
  timer_heap_insert(&heap, &b, 20, 1);
  timer_heap_insert(&heap, &a, 10, 2);
  timer_heap_insert(&heap, &c, 30, 0);
  assert_ptr_equal(timer_heap_peek(&heap), &a);
  timer_heap_remove(&heap, &a);
  assert_ptr_equal(timer_heap_peek(&heap), &b);
  /* a removed timer can be queued again, with a new time */
  timer_heap_insert(&heap, &a, 25, 3);
  assert_ptr_equal(timer_heap_pop(&heap), &b);
  assert_ptr_equal(timer_heap_pop(&heap), &a);
  assert_ptr_equal(timer_heap_pop(&heap), &c);
  timer_heap_free(&heap);
}

static void test_pop_until_empty(void **state) {
  (void)state;
  enum { N = 100 };
  Timer timers[N];
  TimerHeap heap;
  timer_heap_init(&heap);
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    timer_heap_insert(&heap, &timers[i], (int64_t)(N - i), (uint64_t)i);
  }
  for (int i = N - 1; i >= 0; i--) {
    assert_int_equal(heap.count, i + 1);
    assert_ptr_equal(timer_heap_pop(&heap), &timers[i]);
  }
  assert_int_equal(heap.count, 0);
  assert_null(timer_heap_pop(&heap));
  assert_null(timer_heap_peek(&heap));
  for (int i = 0; i < N; i++) assert_false(timer_is_set(&timers[i]));
  assert_int_equal(heap.count, 0);
  /* the heap is reusable after being emptied */
  timer_heap_insert(&heap, &timers[0], 5, 0);
  assert_ptr_equal(timer_heap_pop(&heap), &timers[0]);
  timer_heap_free(&heap);
}

/* Extreme times order correctly (no overflow in the comparison). */
static void test_extreme_times(void **state) {
  (void)state;
  Timer lo, zero, hi;
  timer_init(&lo);
  timer_init(&zero);
  timer_init(&hi);
  TimerHeap heap;
  timer_heap_init(&heap);
  timer_heap_insert(&heap, &hi, INT64_MAX, 0);
  timer_heap_insert(&heap, &zero, 0, UINT64_MAX);
  timer_heap_insert(&heap, &lo, INT64_MIN, 1);
  assert_ptr_equal(timer_heap_pop(&heap), &lo);
  assert_ptr_equal(timer_heap_pop(&heap), &zero);
  assert_ptr_equal(timer_heap_pop(&heap), &hi);
  timer_heap_free(&heap);
}

/* 10,000 random inserts come out sorted by (when, seq), each exactly once. */
static void test_random_inserts_pop_sorted(void **state) {
  (void)state;
  enum { N = 10000 };
  Timer *timers = calloc(N, sizeof *timers);
  unsigned char *seen = calloc(N, 1);
  assert_non_null(timers);
  assert_non_null(seen);
  UnitRng rng = {0x9e3779b97f4a7c15ULL};
  TimerHeap heap;
  timer_heap_init(&heap);
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    /* a small range of times, so many ties are broken by seq */
    timer_heap_insert(&heap, &timers[i], (int64_t)unit_rng_below(&rng, 500), (uint64_t)i);
  }
  assert_int_equal(heap.count, N);
  assert_heap_valid(&heap);
  int64_t last_when = INT64_MIN;
  uint64_t last_seq = 0;
  for (int i = 0; i < N; i++) {
    Timer *t = timer_heap_pop(&heap);
    assert_non_null(t);
    assert_true(t->when > last_when || (t->when == last_when && t->seq > last_seq));
    last_when = t->when;
    last_seq = t->seq;
    int index = (int)(t - timers);
    assert_in_range(index, 0, N - 1);
    assert_false(seen[index]);
    seen[index] = 1;
  }
  assert_null(timer_heap_pop(&heap));
  timer_heap_free(&heap);
  free(seen);
  free(timers);
}

/* Random inserts, removes and pops against a brute-force model. */
static void test_random_mixed_operations(void **state) {
  (void)state;
  enum { N = 2000, OPS = 20000 };
  Timer *timers = calloc(N, sizeof *timers);
  assert_non_null(timers);
  for (int i = 0; i < N; i++) timer_init(&timers[i]);
  UnitRng rng = {12345};
  TimerHeap heap;
  timer_heap_init(&heap);
  uint64_t seq = 0;
  int queued = 0;
  for (int op = 0; op < OPS; op++) {
    Timer *t = &timers[unit_rng_below(&rng, N)];
    switch (unit_rng_below(&rng, 3)) {
      case 0:
        if (!timer_is_set(t)) {
          timer_heap_insert(&heap, t, (int64_t)unit_rng_below(&rng, 100), seq++);
          queued++;
        }
        break;
      case 1:
        if (timer_is_set(t)) queued--;
        timer_heap_remove(&heap, t);
        assert_false(timer_is_set(t));
        break;
      default: {
        /* the model: the earliest queued timer by brute force */
        Timer *expected = NULL;
        for (int i = 0; i < N; i++) {
          Timer *c = &timers[i];
          if (timer_is_set(c) &&
              (!expected || c->when < expected->when || (c->when == expected->when && c->seq < expected->seq)))
            expected = c;
        }
        Timer *popped = timer_heap_pop(&heap);
        assert_ptr_equal(popped, expected);
        if (popped) queued--;
        break;
      }
    }
    assert_int_equal(timer_heap_size(&heap), queued);
    assert_true(heap.count <= 2 * queued + 64); /* stale entries never outnumber live ones by much */
    if (op % 97 == 0) assert_heap_valid(&heap);
  }
  assert_heap_valid(&heap);
  timer_heap_free(&heap);
  free(timers);
}

/* Cancelling most timers rebuilds the heap: it never holds more stale
 * entries than live ones (beyond a small heap), and the live ones still pop
 * in order. Setting a set timer again moves it. */
static void test_cancel_compacts_and_rearm_moves(void **state) {
  (void)state;
  enum { N = 1000 };
  Timer *timers = calloc(N, sizeof *timers);
  assert_non_null(timers);
  TimerHeap heap;
  timer_heap_init(&heap);
  for (int i = 0; i < N; i++) {
    timer_init(&timers[i]);
    timer_heap_insert(&heap, &timers[i], (int64_t)(N - i), (uint64_t)i);
  }
  for (int i = 0; i < N; i++)
    if (i % 10) timer_heap_remove(&heap, &timers[i]);
  assert_int_equal(timer_heap_size(&heap), N / 10);
  assert_true(heap.stale <= heap.count / 2 + 1);
  assert_heap_valid(&heap);
  timer_heap_insert(&heap, &timers[0], 5000, N); /* set again: now the latest */
  assert_int_equal(timer_heap_size(&heap), N / 10);
  assert_heap_valid(&heap);
  for (int i = N - 10; i > 0; i -= 10) assert_ptr_equal(timer_heap_pop(&heap), &timers[i]);
  assert_ptr_equal(timer_heap_pop(&heap), &timers[0]);
  assert_int_equal(timers[0].when, 5000);
  assert_null(timer_heap_pop(&heap));
  assert_int_equal(heap.count, 0);
  timer_heap_free(&heap);
  free(timers);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_heap),
      cmocka_unit_test(test_orders_by_time),
      cmocka_unit_test(test_same_time_fifo_by_seq),
      cmocka_unit_test(test_same_time_insertion_order),
      cmocka_unit_test(test_sorted_then_out_of_order),
      cmocka_unit_test(test_remove_from_middle),
      cmocka_unit_test(test_remove_root),
      cmocka_unit_test(test_pop_until_empty),
      cmocka_unit_test(test_extreme_times),
      cmocka_unit_test(test_random_inserts_pop_sorted),
      cmocka_unit_test(test_random_mixed_operations),
      cmocka_unit_test(test_cancel_compacts_and_rearm_moves),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
