/* Binary min-heap of timers ordered by (when, seq). */
#include "timer.h"

#include <stdlib.h>

#include "memory.h"

void timer_heap_init(TimerHeap *heap) {
  heap->items = NULL;
  heap->count = 0;
  heap->capacity = 0;
}

void timer_heap_free(TimerHeap *heap) {
  free(heap->items);
  timer_heap_init(heap);
}

static bool earlier(const Timer *a, const Timer *b) {
  return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static void place(TimerHeap *heap, int index, Timer *timer) {
  heap->items[index] = timer;
  timer->heap_index = index;
}

static void sift_up(TimerHeap *heap, int index) {
  Timer *timer = heap->items[index];
  while (index > 0) {
    int parent = (index - 1) / 2;
    if (!earlier(timer, heap->items[parent])) break;
    place(heap, index, heap->items[parent]);
    index = parent;
  }
  place(heap, index, timer);
}

static void sift_down(TimerHeap *heap, int index) {
  Timer *timer = heap->items[index];
  for (;;) {
    int child = 2 * index + 1;
    if (child >= heap->count) break;
    if (child + 1 < heap->count && earlier(heap->items[child + 1], heap->items[child])) child++;
    if (!earlier(heap->items[child], timer)) break;
    place(heap, index, heap->items[child]);
    index = child;
  }
  place(heap, index, timer);
}

void timer_heap_insert(TimerHeap *heap, Timer *timer, int64_t when, uint64_t seq) {
  if (heap->count == heap->capacity) {
    heap->capacity = heap->capacity ? heap->capacity * 2 : 16;
    heap->items = xrealloc(heap->items, (size_t)heap->capacity * sizeof *heap->items);
  }
  timer->when = when;
  timer->seq = seq;
  heap->items[heap->count] = timer;
  timer->heap_index = heap->count++;
  sift_up(heap, timer->heap_index);
}

Timer *timer_heap_peek(const TimerHeap *heap) {
  return heap->count ? heap->items[0] : NULL;
}

void timer_heap_remove(TimerHeap *heap, Timer *timer) {
  int index = timer->heap_index;
  if (index < 0) return;
  timer->heap_index = -1;
  Timer *last = heap->items[--heap->count];
  if (index == heap->count) return;
  place(heap, index, last);
  sift_up(heap, index);
  sift_down(heap, last->heap_index);
}

Timer *timer_heap_pop(TimerHeap *heap) {
  Timer *first = timer_heap_peek(heap);
  if (first) timer_heap_remove(heap, first);
  return first;
}
