/* Software transactional memory, in io-sim's model.
 *
 * Threads are cooperative, so a transaction runs from start to commit
 * without any other thread running: it writes TVars in place, keeping an
 * undo log so that retry, orElse and exceptions can roll the writes back,
 * and a read set so that a retrying transaction can block until one of the
 * TVars it read is written. A commit wakes the threads blocked on the TVars
 * it wrote, in the order they blocked; the committing thread then yields,
 * behind them and the rest of the run queue (io-sim's fairness rule). */
#ifndef SIMVM_STM_H
#define SIMVM_STM_H

#include "state.h"

/* Start a transaction in `thread` (empty undo log and read set). */
void stm_begin(VM *vm, ObjThread *thread);

/* End the transaction without committing (an exception went through it,
 * its writes rolled back): the logs are empty again. */
void stm_end(VM *vm, ObjThread *thread);

/* stm_read in general: an explorer to tell, the read set full. */
void stm_read_slow(VM *vm, ObjTVar *tvar);

/* Record that the running transaction read `tvar`. Inline: every readTVar
 * does, most often of a TVar not read yet, into a read set with room. */
static inline void stm_read(VM *vm, ObjTVar *tvar) {
  StmLog *log = &vm->stm;
  if (tvar->read_stamp == log->id && !vm->explore) return;
  if (__builtin_expect(vm->explore || log->read_count == log->read_capacity, 0)) {
    stm_read_slow(vm, tvar);
    return;
  }
  tvar->read_stamp = log->id;
  log->reads[log->read_count++] = tvar;
}

/* Write `value` to `tvar`, logging the old value. */
void stm_write(VM *vm, ObjTVar *tvar, Value value);

/* The undo log's position now (orElse rolls its left branch back to it). */
int stm_undo_mark(VM *vm);

/* Undo the writes logged after position `mark` (0: all of them). */
void stm_rollback(VM *vm, int mark);

/* Free the logs' arrays (VM shutdown). */
void stm_log_free(VM *vm);

/* Before committing: the writes to TVars with a traceTVar function, first
 * written first, as a list of [f, old, new, tvar] lists (NIL_VAL: none);
 * the interpreter calls each f(old, new) after the commit. May collect. */
Value stm_traced_writes(VM *vm, ObjThread *thread);

/* Commit: the writes stand, the waiters of the written TVars wake. Returns
 * how many threads woke. `internal`: an atomically of the prelude's code
 * (its event is hidden from --trace=user). */
int stm_commit(VM *vm, ObjThread *thread, bool internal);

/* Outside a transaction: write `value` to `tvar` as a commit of that one
 * write would, waking its waiters, with no event (newTimeout's cancel,
 * which io-sim writes so). */
void stm_write_now(VM *vm, ObjThread *thread, ObjTVar *tvar, Value value);

/* After a retry (the writes rolled back): block the thread until a TVar of
 * its read set, which becomes the thread's wait set, is written. */
void stm_block(VM *vm, ObjThread *thread);

/* After a retry (the writes rolled back), the case of a thread waiting for
 * its own registerDelay alone: when the earliest timer is that of a TVar
 * the transaction read, nothing else is due at that instant, no thread is
 * runnable or waits on the TVar, no exception is pending and no sink or
 * explorer is told, blocking would only fire the timer and wake this
 * thread at once. Then move the clock, set the TVar, count what the round
 * trip would have and return true: the transaction runs again now. Else
 * false (stm_block). vm->steps must be current: a stop due is left to the
 * round trip. */
bool stm_retry_alone(VM *vm, ObjThread *thread);

/* Take a thread blocked in retry off the TVars it waits on (in O(1): its
 * entries there become stale). */
void stm_cancel_wait(ObjThread *thread);

/* Drop the entries of threads no longer waiting on `tvar` (the collector
 * does it before marking the rest). */
void stm_drop_stale_waiters(ObjTVar *tvar);

/* The registerDelay timers among `count` due ones: their TVars become
 * true and the threads blocked on them wake, TVar by TVar (io-sim's order). */
void stm_fire_delays(VM *vm, Timer **due, int count);

/* "<tvar a>, <tvar b>" for traces and deadlock reports. */
void stm_describe(Buffer *out, ObjTVar **tvars, int count);

#endif
