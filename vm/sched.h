/* The scheduler: io-sim's model of cooperative, deterministic threads.
 *
 * A FIFO run queue; a thread runs until it blocks, yields or ends. When the
 * queue is empty the clock jumps to the earliest timer, and every timer due
 * at that instant fires: first the delays, waking their threads in timer
 * order, then the timeouts, whose interrupts queue behind the woken threads
 * (io-sim forks a thread to throw each one). See docs/SEMANTICS.md. */
#ifndef SIMVM_SCHED_H
#define SIMVM_SCHED_H

#include "state.h"

/* Append a runnable thread to the run queue. */
void sched_enqueue(VM *vm, ObjThread *thread);

/* The next thread to run, advancing the clock and firing timers as needed;
 * sets vm->current. NULL when nothing can run: *status is then SIM_DEADLOCK
 * (reported) or SIM_LIMIT (--max-time passed, reported). */
ObjThread *sched_next(VM *vm, SimStatus *status);

/* Park `thread` in delay() until now + ns (saturating; ns < 0 counts as 0). */
void sched_delay(VM *vm, ObjThread *thread, int64_t ns);

/* Arm `timeout` to fire `ns` (> 0) from now. */
void sched_arm_timeout(VM *vm, ObjTimeout *timeout, int64_t ns);

/* Disarm a timeout whose action finished or unwound: its timer is
 * cancelled, or its queued interrupt will do nothing. */
void sched_disarm_timeout(VM *vm, ObjTimeout *timeout);

/* Deliver an asynchronous exception: a blocked target wakes (its delay is
 * cancelled) and raises it when it next runs; a finished target ignores it. */
void sched_throw_to(VM *vm, ObjThread *target, Value exception);

/* now + ns, saturating at the largest representable time. */
int64_t sched_deadline(int64_t now, int64_t ns);

void run_queue_free(RunQueue *queue);

#endif
