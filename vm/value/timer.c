/* The 4-ary min-heap of timer entries ordered by (when, seq); see timer.h. */
#include "timer.h"

const char *const timer_kind_names[TIMER_KIND_COUNT] = {
    [TIMER_DELAY] = "delay", [TIMER_TIMEOUT] = "timeout", [TIMER_TVAR] = "registerDelay", [TIMER_TVAR_STATE] = "newTimeout"};
const char *const timeout_state_names[3] = {"TimeoutPending", "TimeoutFired", "TimeoutCancelled"};

#include <stdlib.h>
#include <string.h>

#include "../../base/alloc.h"

#define ARITY TIMER_HEAP_ARITY

void timer_heap_init(TimerHeap *heap) {
  heap->items = heap->base = NULL;
  heap->count = heap->stale = heap->capacity = 0;
  heap->sorted = true;
}

void timer_heap_free(TimerHeap *heap) {
  free(heap->base);
  timer_heap_init(heap);
}

/* Move the entries back to the start of the allocation. */
static void to_base(TimerHeap *heap) {
  if (heap->items == heap->base) return;
  memmove(heap->base, heap->items, (size_t)heap->count * sizeof *heap->items);
  heap->capacity += (int)(heap->items - heap->base);
  heap->items = heap->base;
}

/* No entry left: the array starts again at its allocation, in order. */
static void emptied(TimerHeap *heap) {
  heap->capacity += (int)(heap->items - heap->base);
  heap->items = heap->base;
  heap->sorted = true;
}

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

/* Keep only live entries and restore the heap order, in O(n) (a sorted
 * array stays sorted: the entries kept keep their order). */
void timer_heap_rebuild(TimerHeap *heap) {
  int kept = 0;
  for (int i = 0; i < heap->count; i++)
    if (timer_entry_live(&heap->items[i])) heap->items[kept++] = heap->items[i];
  heap->count = kept;
  heap->stale = 0;
  if (heap->sorted) return;
  for (int i = (kept - 2) / ARITY; i >= 0; i--) sift_down(heap->items, kept, i);
}

void timer_heap_make_room(TimerHeap *heap) {
  if (heap->stale > heap->count / 2 && heap->count >= TIMER_HEAP_REBUILD_AT) {
    timer_heap_rebuild(heap);
  } else if (heap->items != heap->base && heap->items - heap->base >= heap->count) {
    to_base(heap); /* the taken entries left room enough: at least doubled */
  } else {
    to_base(heap);
    heap->capacity = heap->capacity ? heap->capacity * 2 : 16;
    heap->items = heap->base = xrealloc(heap->base, (size_t)heap->capacity * sizeof *heap->items);
  }
}

void timer_heap_add_unordered(TimerHeap *heap, int index) {
  heap->sorted = false;
  sift_up(heap->items, index); /* it stops at once if the parent is earlier */
}

/* Take the top entry out. */
static void drop_top(TimerHeap *heap) {
  if (--heap->count == 0) {
    emptied(heap);
  } else if (heap->sorted) { /* the next is the new top */
    heap->items++;
    heap->capacity--;
  } else {
    heap->items[0] = heap->items[heap->count];
    if (heap->count > 1) sift_down(heap->items, heap->count, 0);
  }
}

void timer_heap_drop_top(TimerHeap *heap) { drop_top(heap); }

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
