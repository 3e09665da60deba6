/* The 4-ary min-heap of timer entries ordered by (when, seq); see timer.h. */
#include "timer.h"

#include <stdlib.h>

#include "../base/alloc.h"

#define ARITY TIMER_HEAP_ARITY

void timer_heap_init(TimerHeap *heap) {
  heap->items = NULL;
  heap->count = heap->stale = heap->capacity = 0;
}

void timer_heap_free(TimerHeap *heap) {
  free(heap->items);
  timer_heap_init(heap);
}

void timer_heap_clear(TimerHeap *heap) { heap->count = heap->stale = 0; }


static void sift_up(TimerEntry *items, int index) {
  TimerEntry entry = items[index];
  while (index > 0) {
    int parent = (index - 1) / ARITY;
    if (!timer_entry_earlier(&entry, &items[parent])) break;
    items[index] = items[parent];
    index = parent;
  }
  items[index] = entry;
}

static void sift_down(TimerEntry *items, int count, int index) {
  TimerEntry entry = items[index];
  for (;;) {
    int first = ARITY * index + 1;
    if (first >= count) break;
    int best = first, end = first + ARITY < count ? first + ARITY : count;
    for (int child = first + 1; child < end; child++)
      if (timer_entry_earlier(&items[child], &items[best])) best = child;
    if (!timer_entry_earlier(&items[best], &entry)) break;
    items[index] = items[best];
    index = best;
  }
  items[index] = entry;
}

/* Keep only live entries and restore the heap order, in O(n). */
void timer_heap_rebuild(TimerHeap *heap) {
  int kept = 0;
  for (int i = 0; i < heap->count; i++)
    if (timer_entry_live(&heap->items[i])) heap->items[kept++] = heap->items[i];
  heap->count = kept;
  heap->stale = 0;
  for (int i = (kept - 2) / ARITY; i >= 0; i--) sift_down(heap->items, kept, i);
}

void timer_heap_make_room(TimerHeap *heap) {
  if (heap->stale > heap->count / 2 && heap->count >= TIMER_HEAP_REBUILD_AT) {
    timer_heap_rebuild(heap);
  } else {
    heap->capacity = heap->capacity ? heap->capacity * 2 : 16;
    heap->items = xrealloc(heap->items, (size_t)heap->capacity * sizeof *heap->items);
  }
}

void timer_heap_sift_up(TimerHeap *heap, int index) { sift_up(heap->items, index); }

/* Take the top entry out. */
static void drop_top(TimerHeap *heap) {
  heap->items[0] = heap->items[--heap->count];
  if (heap->count > 1) sift_down(heap->items, heap->count, 0);
}

Timer *timer_heap_peek_stale(TimerHeap *heap) {
  while (heap->count && !timer_entry_live(&heap->items[0])) {
    drop_top(heap);
    heap->stale--;
  }
  return heap->count ? heap->items[0].timer : NULL;
}

Timer *timer_heap_pop(TimerHeap *heap) {
  Timer *first = timer_heap_peek(heap);
  if (!first) return NULL;
  first->set = false;
  drop_top(heap);
  return first;
}
