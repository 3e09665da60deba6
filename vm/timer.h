/* Timers: a binary min-heap keyed by (time, sequence number).
 *
 * The sequence number is taken when a timer is set, so timers due at the
 * same instant fire in the order they were created (io-sim's rule). Each
 * timer remembers its heap slot, so cancelling one is O(log n). Timers are
 * embedded in their owners (a thread's delay, a timeout object); the heap
 * only points at them and owns nothing. */
#ifndef SIMVM_TIMER_H
#define SIMVM_TIMER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct Obj Obj;

typedef enum {
  TIMER_DELAY,    /* wakes the thread that owns it         */
  TIMER_TIMEOUT,  /* interrupts the action of a `timeout`  */
  TIMER_TVAR      /* sets the TVar of a `registerDelay`    */
} TimerKind;

typedef struct {
  int64_t when;     /* simulated time, nanoseconds           */
  uint64_t seq;     /* creation order, breaks ties           */
  int heap_index;   /* position in the heap; -1 when not set */
  TimerKind kind;
  Obj *owner;       /* ObjThread (delay) or ObjTimeout       */
} Timer;

typedef struct {
  Timer **items;
  int count;
  int capacity;
} TimerHeap;

void timer_heap_init(TimerHeap *heap);
void timer_heap_free(TimerHeap *heap);
/* Queue `timer` (which must not be queued) to fire at `when`, with sequence `seq`. */
void timer_heap_insert(TimerHeap *heap, Timer *timer, int64_t when, uint64_t seq);
/* The earliest timer, or NULL when the heap is empty. */
Timer *timer_heap_peek(const TimerHeap *heap);
/* Remove and return the earliest timer, or NULL. */
Timer *timer_heap_pop(TimerHeap *heap);
/* Cancel a queued timer; a timer that is not queued is left alone. */
void timer_heap_remove(TimerHeap *heap, Timer *timer);
/* True while `timer` waits in a heap. */
static inline bool timer_is_set(const Timer *timer) { return timer->heap_index >= 0; }

#endif
