/* MVars: boxes that are full or empty, with FIFO hand-off (GHC's rules).
 *
 * A put into an empty MVar first wakes every thread waiting in readMVar
 * (they all see the value), then hands the value to the first waiting
 * taker, if any, leaving the MVar empty; a take from a full MVar refills it
 * from the first waiting putter. Waiting threads queue in the order they
 * blocked. A waiting thread that is killed leaves its queue and takes no
 * value with it. Each MVar remembers the threads that last took and put
 * its value (vm->current, or the waiter served), for deadlock reports.
 * Takers, readers and putters wait in three queues, so that every operation
 * is O(1) however many threads wait. */
#ifndef SIMVM_MVAR_H
#define SIMVM_MVAR_H

#include "state.h"

/* Take the value if the MVar is full (true), refilling it from the first
 * waiting putter; false when empty. */
bool mvar_try_take(VM *vm, ObjMVar *mvar, Value *out);

/* Read without taking; false when empty. */
bool mvar_try_read(ObjMVar *mvar, Value *out);

/* Put if the MVar is empty (true), serving waiting readers and the first
 * taker; false when full. */
bool mvar_try_put(VM *vm, ObjMVar *mvar, Value value);

/* Park `thread` on the MVar: reason BLOCKED_TAKE, BLOCKED_READ or
 * BLOCKED_PUT (with the value to put). Its stack top is the placeholder the
 * result will replace. */
void mvar_wait(VM *vm, ObjMVar *mvar, ObjThread *thread, BlockReason reason, Value value);

/* Take a waiting thread out of its MVar's queue (it was thrown to). */
void mvar_cancel_wait(ObjThread *thread);

#endif
