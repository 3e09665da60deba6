/* MVar hand-off (see mvar.h). */
#include "mvar.h"

#include "sched.h"

static void enqueue(ObjThread **head, ObjThread **tail, ObjThread *thread) {
  thread->wait_prev = *tail;
  thread->wait_next = NULL;
  if (*tail) (*tail)->wait_next = thread;
  else *head = thread;
  *tail = thread;
}

static void unlink_from(ObjThread **head, ObjThread **tail, ObjThread *thread) {
  if (thread->wait_prev) thread->wait_prev->wait_next = thread->wait_next;
  else *head = thread->wait_next;
  if (thread->wait_next) thread->wait_next->wait_prev = thread->wait_prev;
  else *tail = thread->wait_prev;
  thread->wait_prev = thread->wait_next = NULL;
}

/* Wake a waiting thread with `result` as the value of its MVar operation. */
static void wake(VM *vm, ObjMVar *mvar, ObjThread *thread, Value result) {
  if (thread->blocked_on == BLOCKED_PUT) unlink_from(&mvar->putters_head, &mvar->putters_tail, thread);
  else unlink_from(&mvar->takers_head, &mvar->takers_tail, thread);
  thread->sp[-1] = result;
  thread->wait_object = NULL;
  thread->wait_value = UNIT_VAL;
  sched_wake(vm, thread);
}

bool mvar_try_take(VM *vm, ObjMVar *mvar, Value *out) {
  if (!mvar->full) return false;
  *out = mvar->value;
  mvar->full = false;
  mvar->value = UNIT_VAL;
  mvar->last_taker = vm->current;
  ObjThread *putter = mvar->putters_head;
  if (putter) {
    mvar->full = true;
    mvar->value = putter->wait_value;
    mvar->last_putter = putter;
    wake(vm, mvar, putter, UNIT_VAL);
  }
  return true;
}

bool mvar_try_read(ObjMVar *mvar, Value *out) {
  if (!mvar->full) return false;
  *out = mvar->value;
  return true;
}

bool mvar_try_put(VM *vm, ObjMVar *mvar, Value value) {
  if (mvar->full) return false;
  /* every reader sees the value; the first taker gets it */
  ObjThread *next;
  for (ObjThread *t = mvar->takers_head; t; t = next) {
    next = t->wait_next;
    if (t->blocked_on == BLOCKED_READ) wake(vm, mvar, t, value);
  }
  mvar->last_putter = vm->current;
  ObjThread *taker = mvar->takers_head;
  if (taker) {
    mvar->last_taker = taker;
    wake(vm, mvar, taker, value);
    return true;
  }
  mvar->full = true;
  mvar->value = value;
  return true;
}

void mvar_wait(VM *vm, ObjMVar *mvar, ObjThread *thread, BlockReason reason, Value value) {
  sched_block(vm, thread, reason);
  thread->wait_object = &mvar->obj;
  thread->wait_value = value;
  if (reason == BLOCKED_PUT) enqueue(&mvar->putters_head, &mvar->putters_tail, thread);
  else enqueue(&mvar->takers_head, &mvar->takers_tail, thread);
}

void mvar_cancel_wait(ObjThread *thread) {
  ObjMVar *mvar = (ObjMVar *)thread->wait_object;
  if (thread->blocked_on == BLOCKED_PUT) unlink_from(&mvar->putters_head, &mvar->putters_tail, thread);
  else unlink_from(&mvar->takers_head, &mvar->takers_tail, thread);
  thread->wait_object = NULL;
  thread->wait_value = UNIT_VAL;
}
