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

/* The queue (head and tail) of the threads waiting for `reason`. */
static void queue_of(ObjMVar *mvar, BlockReason reason, ObjThread ***head, ObjThread ***tail) {
  if (reason == BLOCKED_PUT) {
    *head = &mvar->putters_head;
    *tail = &mvar->putters_tail;
  } else if (reason == BLOCKED_READ) {
    *head = &mvar->readers_head;
    *tail = &mvar->readers_tail;
  } else {
    *head = &mvar->takers_head;
    *tail = &mvar->takers_tail;
  }
}

static void leave_queue(ObjMVar *mvar, ObjThread *thread) {
  ObjThread **head, **tail;
  queue_of(mvar, thread->blocked_on, &head, &tail);
  unlink_from(head, tail, thread);
}

/* Wake a waiting thread with `result` as the value of its MVar operation
 * (a unit of work: --max-work and the tests count the threads served). */
static void wake(VM *vm, ObjMVar *mvar, ObjThread *thread, Value result) {
  vm_work(vm, 1);
  leave_queue(mvar, thread);
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
  while (mvar->readers_head) wake(vm, mvar, mvar->readers_head, value);
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
  ObjThread **head, **tail;
  queue_of(mvar, reason, &head, &tail);
  enqueue(head, tail, thread);
}

void mvar_cancel_wait(ObjThread *thread) {
  leave_queue((ObjMVar *)thread->wait_object, thread);
  thread->wait_object = NULL;
  thread->wait_value = UNIT_VAL;
}
