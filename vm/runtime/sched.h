/* The scheduler: io-sim's model of cooperative, deterministic threads.
 *
 * A FIFO run queue; a thread runs until it blocks, yields or ends. When the
 * queue is empty the clock jumps to the earliest timer, and every timer due
 * at that instant fires, as in io-sim: first registerDelay's TVars (waking
 * their readers), then the delays, waking their threads in timer order,
 * then the timeouts, whose interrupts queue behind the woken threads
 * (io-sim forks a thread to throw each one). See docs/SEMANTICS.md. */
#ifndef SIMVM_SCHED_H
#define SIMVM_SCHED_H

#include "explorer.h"
#include "state.h"

/* Double the run queue's ring (or make its first), keeping the order. */
void run_queue_grow(RunQueue *queue);

/* Append an entry (a thread, or a fired timeout: vm/state.h) to the run
 * queue. Inline: every wake, fork and yield queues one. */
static inline void run_queue_push(VM *vm, Obj *entry) {
  RunQueue *q = &vm->run_queue;
  if (__builtin_expect(q->count == q->capacity, 0)) run_queue_grow(q);
  q->items[(q->head + q->count) & (q->capacity - 1)] = entry;
  q->count++;
  if (q->count > vm->stats.run_queue_peak) vm->stats.run_queue_peak = q->count;
  if (__builtin_expect(vm->explore != NULL, 0)) explore_queued(vm, entry);
}

/* Append a runnable thread to the run queue. */
static inline void sched_enqueue(VM *vm, ObjThread *thread) { run_queue_push(vm, &thread->obj); }

/* A scheduling point where the running thread goes on behind the run
 * queue (yield, a commit's fairness rule, the start of a timeout). True:
 * it is queued and the caller switches threads. False, and nothing is
 * queued, when no one could tell the difference: no other thread is
 * runnable (sched_next would pick this one at once, firing no timer), no
 * exception is pending (a switch would raise it) and no explorer counts
 * the point; the caller goes on. Inline: every commit yields. */
static inline bool sched_yield_thread(VM *vm, ObjThread *thread) {
  /* the run queue peak needs no update: main was queued */
  if (!vm->run_queue.count && !vm->explore && !thread->pending_count) return false;
  sched_enqueue(vm, thread);
  return true;
}

/* sched_next's general case, out of line: timeouts' interrupts, entries
 * of threads that are no longer runnable, timers, the explorer. */
ObjThread *sched_next_slow(VM *vm, SimStatus *status);

/* The next thread to run, advancing the clock and firing timers as needed;
 * sets vm->current. NULL when nothing can run: *status is then SIM_DEADLOCK
 * (reported) or SIM_LIMIT (--max-time passed, reported). Inline for the
 * common case, a runnable thread first in the queue and no explorer. */
static inline ObjThread *sched_next(VM *vm, SimStatus *status) {
  RunQueue *q = &vm->run_queue;
  if (__builtin_expect(q->count && !vm->explore, 1)) {
    ObjThread *first = (ObjThread *)q->items[q->head];
    if (first->obj.type == OBJ_THREAD && first->state == THREAD_RUNNABLE) {
      q->head = (q->head + 1) & (q->capacity - 1);
      q->count--;
      vm->current = first;
      return first;
    }
  }
  return sched_next_slow(vm, status);
}

/* Set `tvar` to true `ns` from now (registerDelay). */
void sched_arm_tvar(VM *vm, ObjTVar *tvar, int64_t ns);

/* Mark `thread` blocked for `reason` (the caller queues it where it waits). */
void sched_block(VM *vm, ObjThread *thread, BlockReason reason);

/* Park `thread` in delay() until now + ns (ns >= 0; saturating). */
void sched_delay(VM *vm, ObjThread *thread, int64_t ns);

/* now + ns for an ns >= 0, saturating at the largest representable time. */
static inline int64_t sched_deadline_ahead(int64_t now, int64_t ns) {
  return ns > INT64_MAX - now ? INT64_MAX : now + ns;
}

/* now + ns (a negative ns is 0), saturating as sched_deadline_ahead. */
static inline int64_t sched_deadline(int64_t now, int64_t ns) { return sched_deadline_ahead(now, ns < 0 ? 0 : ns); }

/* The running thread delays for ns >= 0 and nothing could run before it
 * wakes (an empty run queue, no timer due by then, the time limit not
 * passed): move the clock and count what the delay event, blocking, firing
 * its timer and waking would have (no sink may be active), and return
 * true; the thread goes on at once, as it would have after the round trip.
 * Else false (also when the earliest entry is a cancelled timer's: the
 * round trip sorts that out). Inline: bottleneck-style loops run it per
 * iteration. The run queue peak needs no update: main was queued. */
static inline bool sched_delay_alone(VM *vm, int64_t ns) {
  if (vm->run_queue.count) return false;
  /* past the time limit (which is at most INT64_MAX, so now + ns cannot
   * overflow here): the round trip stops the run */
  if (ns > vm->time_limit - vm->now) return false;
  int64_t when = vm->now + ns;
  if (vm->timers.count) {
    const TimerEntry *first = &vm->timers.items[0];
    if (!timer_entry_live(first) || first->when <= when) return false; /* it fires first, or at the same instant */
  }
  vm->now = when;
  vm->timer_seq++;
  vm->stats.timers_set++;
  vm->stats.timers_fired++;
  vm->stats.events += 2; /* the delay and its wake */
  return true;
}

/* What sched_delay_own_timeout found. */
typedef enum {
  DELAY_BLOCKS,       /* the general case: sched_delay                       */
  DELAY_DONE,         /* the delay is over: the thread goes on               */
  DELAY_INTERRUPTED   /* the thread's timeout fired first: raise *interrupt  */
} DelayOutcome;

/* The case sched_delay_alone leaves to the round trip when the earliest
 * timer is a timeout of the running thread itself, due before the delay
 * ends or with it, and nothing else is due at that instant or runnable:
 * move the clock and count what blocking, firing and waking would have
 * (no sink or explorer is told, no exception is pending, `steps`, the
 * instructions run, leave the run going). At the delay's own end the delay
 * wakes first and the fired timeout's interrupt is queued (DELAY_DONE);
 * before it, unless the thread is masked uninterruptibly, the interrupt is
 * thrown at once (DELAY_INTERRUPTED). Else DELAY_BLOCKS, nothing done. */
DelayOutcome sched_delay_own_timeout_slow(VM *vm, ObjThread *thread, int64_t ns, uint64_t steps, Value *interrupt);
static inline DelayOutcome sched_delay_own_timeout(VM *vm, ObjThread *thread, int64_t ns, uint64_t steps,
                                                   Value *interrupt) {
  /* inline, the commonest refusal: other threads to run (the rest out of line) */
  if (vm->run_queue.count || !vm->timers.count) return DELAY_BLOCKS;
  return sched_delay_own_timeout_slow(vm, thread, ns, steps, interrupt);
}

/* Arm `timeout` to fire `ns` (> 0) from now. */
void sched_arm_timeout(VM *vm, ObjTimeout *timeout, int64_t ns);

/* sched_disarm_timeout of a timeout whose interrupt was thrown. */
void sched_disarm_thrown(ObjTimeout *timeout);

/* Disarm a timeout whose action finished or unwound: its timer is
 * cancelled, or its queued interrupt will do nothing. Inline: every
 * timeout's action that finishes in time disarms it. */
static inline void sched_disarm_timeout(VM *vm, ObjTimeout *timeout) {
  if (timer_is_set(&timeout->timer)) {
    vm->stats.timers_cancelled++;
    timer_heap_remove(&vm->timers, &timeout->timer);
  }
  if (__builtin_expect(timeout->state == TIMEOUT_THROWN, 0)) sched_disarm_thrown(timeout);
  timeout->state = TIMEOUT_DISARMED;
}

/* Make a blocked thread runnable again (trace: wake) at the back of the queue. */
void sched_wake(VM *vm, ObjThread *thread);

/* The same, woken by a write to `by` (NULL: by nothing in particular), as
 * the trace shows: "wake (by <tvar x>)". */
void sched_wake_by(VM *vm, ObjThread *thread, ObjTVar *by);

/* Throw an asynchronous exception to `target` (io-sim's throwTo). A finished
 * target ignores it. An unmasked target, or an interruptibly masked one that
 * is blocked, gets it at once: it stops waiting (delay, MVar, throwTo) and
 * raises it when it next runs; true is returned. Otherwise the exception
 * waits until the target unmasks or blocks, and false says the thrower
 * (NULL for a timeout's interrupt) must block until then. */
bool sched_throw_to(VM *vm, ObjThread *thrower, ObjThread *target, Value exception);

/* throwTo's commonest case (io-sim's forkIO benchmark kills threads asleep
 * in delay), inline: the target sleeps in delay, unmasked, with no
 * exception pending, and no explorer is told of accesses. Then
 * sched_throw_to_sleeper does what sched_throw_to would, without its
 * general cases. */
static inline bool sched_is_plain_sleeper(const VM *vm, const ObjThread *target) {
  return target->state == THREAD_BLOCKED && target->blocked_on == BLOCKED_DELAY && target->mask == MASK_NONE &&
         !target->pending_count && !vm->explore;
}
/* Throw `exception` to such a target (see sched_is_plain_sleeper) while
 * no sink is active (its state event would go to none, and such events
 * are not counted): its timer is cancelled and it is queued, to raise the
 * exception when it runs. */
static inline void sched_throw_to_sleeper(VM *vm, ObjThread *thrower, ObjThread *target, Value exception) {
  vm->stats.timers_cancelled++;
  timer_heap_remove(&vm->timers, &target->delay_timer);
  target->state = THREAD_RUNNABLE;
  target->blocked_on = BLOCKED_NONE;
  target->interrupted = true;
  sched_enqueue(vm, target);
  /* a live thread always has room for one (pending_one at least) */
  target->pending[0] = (Pending){exception, NULL, thrower};
  target->pending_count = 1;
}

/* Whether sched_throw_to would deliver to `target` at once. */
bool sched_would_deliver(const ObjThread *target);

/* True when `thread` must raise a pending exception now: it has one, and it
 * is unmasked or was woken by it from an interruptible wait. */
static inline bool sched_should_raise(const ObjThread *thread) {
  return thread->pending_count > 0 && (thread->mask == MASK_NONE || thread->interrupted);
}

/* Take the oldest pending exception to raise it, waking its thrower. */
Value sched_take_pending(VM *vm, ObjThread *thread);

/* The thread has ended: wake whoever waits to throw to it, free its stacks. */
void sched_thread_done(VM *vm, ObjThread *thread);

/* Main has ended (`status`: SIM_OK, or SIM_FAILED when it died) and is off
 * the live list: trace the threads still alive; with strict_shutdown, a
 * main that finished leaving any fails (reported). Returns the run's status. */
SimStatus sched_main_ended(VM *vm, SimStatus status);
/* The loop reached stop_at (a step, work, heap or trace-size limit, or vm_stop):
 * report why (for a signal, with where each thread is) and return the
 * status vm_run gives. */
SimStatus sched_stopped(VM *vm);
/* A line per live thread, oldest first: "  thread 1 (w) is blocked in delay
 * at x.sim:3", "... is running at x.sim:7" (the deadlock report's lines). */
void sched_report_threads(VM *vm, Buffer *out);
/* Where a thread is: " at x.sim:7", its innermost frame in the script's
 * own code, else in the prelude's; " (it has not started)" for a thread
 * that has run no code yet. */
void sched_thread_place(VM *vm, Buffer *out, const ObjThread *t);

/* The lines of a deadlock report after its first: a line per thread still
 * alive ("  thread 1 (worker) is blocked in takeMVar on <mvar m> at
 * x.sim:4; last taken by main"), then one per wait-for cycle ("  cycle:
 * ..."). Also for describing a deadlock in one line (vm/explore.c). */
void sched_describe_deadlock(VM *vm, Buffer *out);

void run_queue_free(RunQueue *queue);

#endif
