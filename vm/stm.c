/* Transactions with an undo log and a read set (see stm.h). */
#include "stm.h"

#include <stdlib.h>

#include "sched.h"

#define GROW(array, count, capacity)                                          \
  do {                                                                        \
    if ((count) == (capacity)) {                                              \
      (capacity) = (capacity) ? (capacity) * 2 : 8;                           \
      (array) = xrealloc((array), (size_t)(capacity) * sizeof *(array));       \
    }                                                                         \
  } while (0)

void stm_begin(VM *vm, ObjThread *thread) {
  thread->in_transaction = true;
  thread->transaction_id = ++vm->transaction_counter;
  thread->undo_count = 0;
  thread->read_count = 0;
}

void stm_read(VM *vm, ObjThread *thread, ObjTVar *tvar) {
  (void)vm;
  if (tvar->read_stamp == thread->transaction_id) return;
  tvar->read_stamp = thread->transaction_id;
  GROW(thread->reads, thread->read_count, thread->read_capacity);
  thread->reads[thread->read_count++] = tvar;
}

void stm_write(VM *vm, ObjThread *thread, ObjTVar *tvar, Value value) {
  (void)vm;
  GROW(thread->undo, thread->undo_count, thread->undo_capacity);
  thread->undo[thread->undo_count++] = (UndoEntry){tvar, tvar->value};
  tvar->value = value;
}

void stm_rollback(ObjThread *thread, int mark) {
  while (thread->undo_count > mark) {
    UndoEntry *entry = &thread->undo[--thread->undo_count];
    entry->tvar->value = entry->old;
  }
}


/* Waiters are not taken off a TVar one by one when they stop waiting (a
 * search and a memmove for each made waking n threads O(n^2)): each entry
 * records the block it was made for, and is stale once the thread is no
 * longer in that block. Stale entries go when the TVar is written (all its
 * waiters wake), when its array is full, and at each collection. */
static bool waiting(const Waiter *w) {
  return w->thread->state == THREAD_BLOCKED && w->thread->blocked_on == BLOCKED_STM && w->thread->block_seq == w->seq;
}

void stm_drop_stale_waiters(ObjTVar *tvar) {
  int live = 0;
  for (int i = 0; i < tvar->waiter_count; i++)
    if (waiting(&tvar->waiters[i])) tvar->waiters[live++] = tvar->waiters[i];
  tvar->waiter_count = live;
}

static void add_waiter(ObjTVar *tvar, ObjThread *thread) {
  if (tvar->waiter_count == tvar->waiter_capacity) {
    stm_drop_stale_waiters(tvar); /* amortised: at least half the array is then free */
    if (tvar->waiter_count >= tvar->waiter_capacity / 2) {
      tvar->waiter_capacity = tvar->waiter_capacity ? tvar->waiter_capacity * 2 : 8;
      tvar->waiters = xrealloc(tvar->waiters, (size_t)tvar->waiter_capacity * sizeof(Waiter));
    }
  }
  tvar->waiters[tvar->waiter_count++] = (Waiter){thread, thread->block_seq};
}

void stm_cancel_wait(ObjThread *thread) {
  thread->block_seq = 0; /* its entries in the TVars' waiters are stale from now on */
  thread->read_count = 0;
}

/* A thread to wake, and the first written TVar it was waiting on. */
typedef struct {
  ObjThread *thread;
  ObjTVar *by;
} Waking;

int stm_wake_readers(VM *vm, ObjTVar **written, int count) {
  /* io-sim's order: TVar by TVar as written, each one's waiters in the
   * order they blocked, every thread once */
  Waking *woken = NULL;
  int woken_count = 0, woken_capacity = 0;
  for (int i = 0; i < count; i++) {
    ObjTVar *tvar = written[i];
    for (int j = 0; j < tvar->waiter_count; j++) {
      Waiter *w = &tvar->waiters[j];
      if (!waiting(w)) continue;
      GROW(woken, woken_count, woken_capacity);
      woken[woken_count++] = (Waking){w->thread, tvar};
      w->thread->block_seq = 0; /* taken: its entries elsewhere are stale, so it wakes once */
    }
    tvar->waiter_count = 0; /* each woke, or was stale */
  }
  for (int i = 0; i < woken_count; i++) {
    stm_cancel_wait(woken[i].thread);
    sched_wake_by(vm, woken[i].thread, woken[i].by);
  }
  free(woken);
  return woken_count;
}

void stm_describe(Buffer *out, ObjTVar **tvars, int count) {
  for (int i = 0; i < count; i++) {
    if (i) buf_append(out, ", ", 2);
    value_show(out, OBJ_VAL(tvars[i]), false);
  }
}

Value stm_traced_writes(VM *vm, ObjThread *thread) {
  /* each TVar's first undo entry holds its value from before the transaction */
  uint64_t stamp = ++vm->transaction_counter;
  int *firsts = NULL;
  int count = 0, capacity = 0;
  for (int i = 0; i < thread->undo_count; i++) {
    ObjTVar *tvar = thread->undo[i].tvar;
    if (IS_UNIT(tvar->trace_fn) || tvar->write_stamp == stamp) continue;
    tvar->write_stamp = stamp;
    GROW(firsts, count, capacity);
    firsts[count++] = i;
  }
  /* build the list back to front; the undo log keeps the TVars and the old
   * values reachable, the temporary roots what is built */
  Value list = NIL_VAL;
  gc_push_root(vm, list);
  for (int k = count - 1; k >= 0; k--) {
    UndoEntry *undo = &thread->undo[firsts[k]];
    Value entry = OBJ_VAL(obj_cons(vm, OBJ_VAL(undo->tvar), NIL_VAL));
    gc_push_root(vm, entry);
    entry = OBJ_VAL(obj_cons(vm, undo->tvar->value, entry));
    vm->temp_roots[vm->temp_root_count - 1] = entry;
    entry = OBJ_VAL(obj_cons(vm, undo->old, entry));
    vm->temp_roots[vm->temp_root_count - 1] = entry;
    entry = OBJ_VAL(obj_cons(vm, undo->tvar->trace_fn, entry));
    vm->temp_roots[vm->temp_root_count - 1] = entry;
    list = OBJ_VAL(obj_cons(vm, entry, list));
    gc_pop_root(vm);
    vm->temp_roots[vm->temp_root_count - 1] = list;
  }
  gc_pop_root(vm);
  free(firsts);
  return list;
}

int stm_commit(VM *vm, ObjThread *thread, bool internal) {
  /* the written TVars, each once, in the order first written */
  ObjTVar **written = NULL;
  int count = 0, capacity = 0;
  uint64_t stamp = ++vm->transaction_counter;
  for (int i = 0; i < thread->undo_count; i++) {
    ObjTVar *tvar = thread->undo[i].tvar;
    if (tvar->write_stamp == stamp) continue;
    tvar->write_stamp = stamp;
    tvar->last_writer = thread;
    GROW(written, count, capacity);
    written[count++] = tvar;
  }
  thread->in_transaction = false;
  thread->undo_count = 0;
  thread->read_count = 0;
  vm_event(vm, .kind = EV_COMMITTED, .thread = thread, .internal = internal, .tvars = written, .count = count);
  int woken = stm_wake_readers(vm, written, count);
  free(written);
  return woken;
}

void stm_block(VM *vm, ObjThread *thread) {
  thread->in_transaction = false;
  thread->undo_count = 0;
  sched_block(vm, thread, BLOCKED_STM);
  thread->block_seq = ++vm->block_counter;
  for (int i = 0; i < thread->read_count; i++) add_waiter(thread->reads[i], thread);
  vm_event(vm, .kind = EV_RETRY, .thread = thread, .tvars = thread->reads, .count = thread->read_count);
}
