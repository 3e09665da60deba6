/* Timers: a 4-ary min-heap keyed by (time, sequence number).
 *
 * The sequence number is taken when a timer is set, so timers due at the
 * same instant fire in the order they were created (io-sim's rule). Timers
 * are embedded in their owners (a thread's delay, a timeout object, a
 * registerDelay TVar); the heap holds entries that point at them. Setting
 * is O(log n) with a small constant (a 4-ary heap is half as deep as a
 * binary one, and its entries are copied by value). Cancelling is O(1): the
 * timer is marked unset and its entry, now stale, is dropped when it reaches
 * the top, or when stale entries outnumber live ones and the heap is rebuilt
 * (so cancelling costs O(1) amortised and the heap stays within twice the
 * live timers). A stale entry still points at its owner, so the collector
 * keeps the owner alive until the entry goes (vm/memory.c marks them all).
 *
 * Timers most often come in the order they fire (equal delays, set one
 * after another: fifty asyncs' delay(1us)). While every entry was added
 * after all the earlier ones, the array is sorted, a heap that needs no
 * sifting: taking the top is then moving the array's start on by one. The
 * first entry added out of order ends that until the heap is empty. */
#ifndef SIMVM_TIMER_H
#define SIMVM_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Obj Obj;

typedef enum {
  TIMER_DELAY,    /* wakes the thread that owns it         */
  TIMER_TIMEOUT,  /* interrupts the action of a `timeout`  */
  TIMER_TVAR,     /* sets the TVar of a `registerDelay`    */
  TIMER_TVAR_STATE /* sets the TVar of a `newTimeout` to "TimeoutFired" */
} TimerKind;

#define TIMER_KIND_COUNT 4

/* Each kind's name in a schedule file and a report: the primitive that
 * sets it ("delay", "timeout", "registerDelay", "newTimeout"). */
extern const char *const timer_kind_names[TIMER_KIND_COUNT];

/* What a newTimeout's TVar holds: io-classes' TimeoutState, as the
 * strings timeout_state_names gives ("TimeoutPending" ...). */
typedef enum { TIMER_STATE_PENDING, TIMER_STATE_FIRED, TIMER_STATE_CANCELLED } TimerState;
extern const char *const timeout_state_names[3];

/* Whether a timer of this kind writes a TVar when it fires (io-sim fires
 * those first among the timers due at one instant). */
static inline bool timer_sets_tvar(int kind) { return kind == TIMER_TVAR || kind == TIMER_TVAR_STATE; }

typedef struct {
  int64_t when;     /* simulated time, nanoseconds           */
  uint64_t seq;     /* creation order, breaks ties           */
  bool set;         /* queued and not cancelled              */
  uint8_t kind;     /* a TimerKind; the owner is the object the timer is a
                       field of (timer_owner, vm/thread.h)  */
  uint32_t tag;     /* under exploration, names the timer (vm/choice.h);
                       in what was padding: no timer grows */
} Timer;

/* A heap entry: the key it was queued with, and its timer. Stale once the
 * timer is cancelled or set again (its seq then differs). */
typedef struct {
  int64_t when;
  uint64_t seq;
  Timer *timer;
} TimerEntry;

typedef struct {
  TimerEntry *items;  /* the heap: items[0] is the top          */
  TimerEntry *base;   /* the allocation: items, or before it once the
                         sorted array's first entries were taken */
  int count;          /* entries, stale ones included          */
  int stale;
  int capacity;       /* entries from items on                 */
  bool sorted;        /* items[0 .. count) is in order         */
} TimerHeap;

void timer_heap_init(TimerHeap *heap);
void timer_heap_free(TimerHeap *heap);
/* Forget every entry (the run is over). The timers are not touched, so
 * they must not be used with this heap again: they belong to the finished
 * run's objects, about to be freed. */
static inline void timer_heap_clear(TimerHeap *heap) {
  heap->count = heap->stale = 0;
  heap->capacity += (int)(heap->items - heap->base);
  heap->items = heap->base;
  heap->sorted = true;
}
/* Children per node of the heap (vm/timer.c). */
#define TIMER_HEAP_ARITY 4
/* Only heaps of at least this many entries are rebuilt to drop stale ones. */
#define TIMER_HEAP_REBUILD_AT 64
/* The heap's order: earlier `when` first, then lower `seq`. */
static inline bool timer_entry_earlier(const TimerEntry *a, const TimerEntry *b) {
  return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}
/* Drop the stale entries and restore the heap order, in O(n). */
void timer_heap_rebuild(TimerHeap *heap);
/* Cancel a set timer in O(1) amortised; a timer that is not set is left
 * alone. Inline: every kill of a sleeping thread cancels one. */
static inline void timer_heap_remove(TimerHeap *heap, Timer *timer) {
  if (!timer->set) return;
  timer->set = false;
  heap->stale++;
  if (heap->count >= TIMER_HEAP_REBUILD_AT && heap->stale > heap->count / 2) timer_heap_rebuild(heap);
}
/* timer_heap_insert's ways out of line: room for one more entry (a bigger
 * array, or the stale entries dropped), ... */
void timer_heap_make_room(TimerHeap *heap);
/* Entry `index`, just added, is earlier than the entry it was compared
 * with: the array is no longer sorted; move the entry up to its place. */
void timer_heap_add_unordered(TimerHeap *heap, int index);
/* Queue `timer` to fire at `when`, with sequence `seq` (a set timer is
 * moved: its old entry goes stale). Inline: every delay and timeout sets
 * one, most often later than the rest, so that nothing moves. */
static inline void timer_heap_insert(TimerHeap *heap, Timer *timer, int64_t when, uint64_t seq) {
  if (timer->set) timer_heap_remove(heap, timer);
  if (heap->count == heap->capacity) timer_heap_make_room(heap);
  timer->when = when;
  timer->seq = seq;
  timer->set = true;
  int index = heap->count++;
  heap->items[index] = (TimerEntry){when, seq, timer};
  /* one comparison either way: with the last entry while sorted, else with the parent */
  if (index > 0 && timer_entry_earlier(&heap->items[index],
                                       &heap->items[heap->sorted ? index - 1 : (index - 1) / TIMER_HEAP_ARITY]))
    timer_heap_add_unordered(heap, index);
}
/* Whether an entry still stands for its timer. */
static inline bool timer_entry_live(const TimerEntry *entry) {
  return entry->timer->set && entry->timer->seq == entry->seq;
}
/* The earliest set timer, or NULL when none is: the top entry when it is
 * live (the common case, inline), else after dropping the stale entries on top. */
Timer *timer_heap_peek_stale(TimerHeap *heap);
static inline Timer *timer_heap_peek(TimerHeap *heap) {
  if (heap->count && timer_entry_live(&heap->items[0])) return heap->items[0].timer;
  return timer_heap_peek_stale(heap);
}
/* Remove and return the earliest set timer (now unset), or NULL. */
Timer *timer_heap_pop(TimerHeap *heap);
/* Take out the top entry of a heap of several (timer_heap_take_top's way). */
void timer_heap_drop_top(TimerHeap *heap);
/* timer_heap_pop when the top entry is known to be live: unset its timer
 * and take it out. Inline: a heap of one, the common case, just empties. */
static inline Timer *timer_heap_take_top(TimerHeap *heap) {
  Timer *first = heap->items[0].timer;
  first->set = false;
  if (heap->count == 1) timer_heap_clear(heap);
  else timer_heap_drop_top(heap);
  return first;
}
/* Whether no other entry (live or not) is due at the top entry's instant:
 * such an entry would be a child of the top (or, while the array is sorted,
 * the next one), so only those are looked at. For the fast paths that fire
 * the top timer alone (stm_retry_alone, sched_delay_own_timeout). */
static inline bool timer_heap_top_alone(const TimerHeap *heap) {
  for (int i = 1; i <= TIMER_HEAP_ARITY && i < heap->count; i++)
    if (heap->items[i].when == heap->items[0].when) return false;
  return true;
}
/* Set timers in the heap (entries minus stale ones). */
static inline int timer_heap_size(const TimerHeap *heap) { return heap->count - heap->stale; }
/* True while `timer` waits in a heap. */
static inline bool timer_is_set(const Timer *timer) { return timer->set; }

#endif
