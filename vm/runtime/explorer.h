/* What the VM asks of an explorer (vm/explore/explore.h): the hooks that
 * the scheduler, STM, object creation and the primitives call when
 * vm->explore is set, and only then. This is the interface through which
 * the layers below vm/explore/ reach it (tools/layers.sh): the explorer's
 * strategies, schedules and reports stay in explore.h, for the layers above
 * (vm/interp/, api/). Defined in vm/explore/explore.c. */
#ifndef SIMVM_EXPLORER_H
#define SIMVM_EXPLORER_H

#include <stdbool.h>
#include <stdint.h>

#include "object.h"
#include "timer.h"

/* A scheduling point in running code, just after an effect of `thread` on
 * `object` (NULL: none; `write`: it changed it). True when another thread
 * runs now: `thread` has been put back at the front of the run queue and
 * the caller switches (stores its frame and goes to the scheduler). */
bool explore_point(VM *vm, ObjThread *thread, Obj *object, bool write);

/* The scheduler took `head` off the run queue to run it: the thread to run
 * instead (possibly `head`, put back otherwise), or NULL when the run is
 * abandoned or stopped by a replay that no longer matches. */
ObjThread *explore_pick(VM *vm, ObjThread *head);

/* `entry` joined the run queue (sched.h's run_queue_push): pct keeps its
 * threads in a heap by priority. */
void explore_queued(VM *vm, Obj *entry);

/* The running transition read (or wrote) `object`: a TVar in a transaction,
 * a thread an exception is thrown to (and what it waits on, if blocked). */
void explore_access(VM *vm, Obj *object, bool write);

/* A stable identity for a TVar or MVar the running thread creates. */
uint64_t explore_object_id(VM *vm);

/* Choices beyond the schedule (vm/choice.h), each made by `thread`: the
 * value to use, given what the thread's random stream gave (`stream`).
 * A choice that is not the default is marked in the trace. */
int64_t explore_random(VM *vm, ObjThread *thread, int64_t n, int64_t stream);
double explore_float(VM *vm, ObjThread *thread, double stream);
int64_t explore_span(VM *vm, ObjThread *thread, int64_t lo, int64_t hi, int64_t stream);
/* `timer` (of `thread`, a TimerKind `op`) is about to be armed for ns >= 0
 * nanoseconds: the duration to arm it with; the timer is named. */
int64_t explore_timer(VM *vm, ObjThread *thread, Timer *timer, int op, int64_t ns);
bool explore_fault(VM *vm, ObjThread *thread, const char *name, double p);
/* The `count` timers due now, in io-sim's order: the order they fire in. */
void explore_order_timers(VM *vm, Timer **due, int count);

#endif
