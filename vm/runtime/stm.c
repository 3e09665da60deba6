/* Transactions with an undo log and a read set (see stm.h). */
#include "stm.h"
#include "show.h"
#include "events.h"

#include <stdlib.h>
#include <string.h>

#include "explorer.h"
#include "sched.h"

void stm_begin(VM *vm, ObjThread *thread) {
  thread->in_transaction = true;
  vm->stm.id = ++vm->transaction_counter;
  vm->stm.undo_count = 0;
  vm->stm.read_count = 0;
}

void stm_end(VM *vm, ObjThread *thread) {
  thread->in_transaction = false;
  vm->stm.undo_count = 0;
  vm->stm.read_count = 0;
}

void stm_read_slow(VM *vm, ObjTVar *tvar) {
  if (vm->explore) explore_access(vm, &tvar->obj, false);
  StmLog *log = &vm->stm;
  if (tvar->read_stamp == log->id) return;
  tvar->read_stamp = log->id;
  GROW(log->reads, log->read_count, log->read_capacity);
  log->reads[log->read_count++] = tvar;
}

void stm_write(VM *vm, ObjTVar *tvar, Value value) {
  if (vm->explore) explore_access(vm, &tvar->obj, true);
  StmLog *log = &vm->stm;
  GROW(log->undo, log->undo_count, log->undo_capacity);
  log->undo[log->undo_count++] = (UndoEntry){tvar, tvar->value};
  tvar->value = value;
}

int stm_undo_mark(VM *vm) { return vm->stm.undo_count; }

void stm_rollback(VM *vm, int mark) {
  StmLog *log = &vm->stm;
  while (log->undo_count > mark) {
    UndoEntry *entry = &log->undo[--log->undo_count];
    entry->tvar->value = entry->old;
  }
}

void stm_log_free(VM *vm) {
  free(vm->stm.undo);
  free(vm->stm.reads);
  free(vm->stm.written);
  free(vm->stm.waking);
  vm->stm = (StmLog){0};
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

static void add_waiter(VM *vm, ObjTVar *tvar, ObjThread *thread) {
  if (tvar->waiter_count == tvar->waiter_capacity) {
    stm_drop_stale_waiters(tvar); /* amortised: at least half the array is then free */
    if (tvar->waiter_count >= tvar->waiter_capacity / 2) {
      int capacity = tvar->waiter_capacity * 2 < 8 ? 8 : tvar->waiter_capacity * 2;
      Waiter *moved = xrealloc(tvar->waiters == tvar->waiter_one ? NULL : tvar->waiters, (size_t)capacity * sizeof(Waiter));
      if (tvar->waiters == tvar->waiter_one) {
        moved[0] = tvar->waiter_one[0];
        gc_note_owner(vm, &tvar->obj); /* it owns the array from now: the reset frees it */
      }
      tvar->waiters = moved;
      tvar->waiter_capacity = capacity;
    }
  }
  tvar->waiters[tvar->waiter_count++] = (Waiter){thread, thread->block_seq};
}

void stm_cancel_wait(ObjThread *thread) {
  thread->block_seq = 0; /* its entries in the TVars' waiters are stale from now on */
  thread_drop_wait_set(thread);
}

/* Wake the waiters of the `count` TVars in vm->stm.written. */
static int wake_readers(VM *vm, int count) {
  /* io-sim's order: TVar by TVar as written, each one's waiters in the
   * order they blocked, every thread once */
  StmLog *log = &vm->stm;
  int woken = 0;
  for (int i = 0; i < count; i++) {
    ObjTVar *tvar = log->written[i];
    for (int j = 0; j < tvar->waiter_count; j++) {
      Waiter *w = &tvar->waiters[j];
      if (!waiting(w)) continue;
      GROW(log->waking, woken, log->waking_capacity);
      log->waking[woken++] = (Waking){w->thread, tvar};
      w->thread->block_seq = 0; /* taken: its entries elsewhere are stale, so it wakes once */
    }
    tvar->waiter_count = 0; /* each woke, or was stale */
  }
  for (int i = 0; i < woken; i++) {
    stm_cancel_wait(log->waking[i].thread);
    sched_wake_by(vm, log->waking[i].thread, log->waking[i].by);
  }
  return woken;
}

/* Note that `tvar` was written (each TVar once: the caller checks). */
static int add_written(StmLog *log, int count, ObjTVar *tvar) {
  GROW(log->written, count, log->written_capacity);
  log->written[count] = tvar;
  return count + 1;
}

/* A timer's TVar fires, written by no thread: a registerDelay's becomes
 * true, a newTimeout's "TimeoutFired". */
static inline void fire_delay_tvar(VM *vm, ObjTVar *tvar) {
  tvar->value = tvar->timer.kind == TIMER_TVAR ? BOOL_VAL(true) : OBJ_VAL(vm->timeout_states[TIMER_STATE_FIRED]);
  tvar->last_writer = NULL;
}

void stm_fire_delays(VM *vm, Timer **due, int count) {
  int written = 0;
  for (int i = 0; i < count; i++) {
    if (!timer_sets_tvar(due[i]->kind)) continue;
    ObjTVar *tvar = (ObjTVar *)timer_owner(due[i]);
    fire_delay_tvar(vm, tvar);
    written = add_written(&vm->stm, written, tvar);
  }
  if (written) wake_readers(vm, written);
}

void stm_describe(Buffer *out, ObjTVar **tvars, int count) {
  for (int i = 0; i < count; i++) {
    if (i) buf_append(out, ", ", 2);
    value_show(out, OBJ_VAL(tvars[i]), false);
  }
}

Value stm_traced_writes(VM *vm, ObjThread *thread) {
  /* each TVar's first undo entry holds its value from before the transaction */
  (void)thread;
  StmLog *log = &vm->stm;
  if (!log->undo_count) return NIL_VAL; /* nothing written (a wait, a read): nothing to trace */
  uint64_t stamp = ++vm->transaction_counter;
  int *firsts = NULL;
  int count = 0, capacity = 0;
  for (int i = 0; i < log->undo_count; i++) {
    ObjTVar *tvar = log->undo[i].tvar;
    if (IS_UNIT(tvar->trace_fn) || tvar->write_stamp == stamp) continue;
    tvar->write_stamp = stamp;
    GROW(firsts, count, capacity);
    firsts[count++] = i;
  }
  if (!count) return NIL_VAL; /* no TVar written is traced */
  /* build the list back to front; the undo log keeps the TVars and the old
   * values reachable, the temporary roots what is built */
  Value list = NIL_VAL;
  gc_push_root(vm, list);
  for (int k = count - 1; k >= 0; k--) {
    UndoEntry *undo = &log->undo[firsts[k]];
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
  StmLog *log = &vm->stm;
  int count = 0;
  uint64_t stamp = log->undo_count ? ++vm->transaction_counter : 0; /* stamps are only compared for equality */
  for (int i = 0; i < log->undo_count; i++) {
    ObjTVar *tvar = log->undo[i].tvar;
    if (tvar->write_stamp == stamp) continue;
    tvar->write_stamp = stamp;
    tvar->last_writer = thread;
    count = add_written(log, count, tvar);
  }
  stm_end(vm, thread);
  vm_event(vm, .kind = EV_COMMITTED, .thread = thread, .internal = internal, .tvars = log->written, .count = count);
  return count ? wake_readers(vm, count) : 0;
}

void stm_write_now(VM *vm, ObjThread *thread, ObjTVar *tvar, Value value) {
  tvar->value = value;
  tvar->last_writer = thread;
  wake_readers(vm, add_written(&vm->stm, 0, tvar));
}

bool stm_retry_alone(VM *vm, ObjThread *thread) {
  /* the round trip would block, fire the timer as the only thing due and
   * run this thread at once: nothing else runnable or due at that instant,
   * nobody else waiting on the TVar, nothing observing (see stm.h) */
  if (vm->run_queue.count || vm->explore || vm->sink_count || thread->pending_count) return false;
  if (vm->steps >= atomic_load_explicit(&vm->stop_at, memory_order_relaxed)) return false; /* the round trip stops */
  TimerHeap *heap = &vm->timers;
  if (!heap->count || !timer_entry_live(&heap->items[0])) return false;
  Timer *timer = heap->items[0].timer;
  if (!timer_sets_tvar(timer->kind) || timer->when > vm->time_limit || !timer_heap_top_alone(heap)) return false;
  ObjTVar *tvar = (ObjTVar *)timer_owner(timer);
  if (tvar->read_stamp != vm->stm.id || tvar->waiter_count) return false;
  /* what blocking, firing the timer and waking would have done */
  thread_drop_wait_set(thread);
  stm_end(vm, thread);
  vm->block_counter++;
  thread->block_seq = 0;
  vm->now = timer->when;
  timer_heap_take_top(heap);
  vm->stats.timers_fired++;
  vm->stats.events += 2; /* the retry and the wake */
  fire_delay_tvar(vm, tvar);
  thread->interrupted = false;
  return true;
}

void stm_block(VM *vm, ObjThread *thread) {
  /* the read set becomes the thread's: the next transaction reuses the log */
  StmLog *log = &vm->stm;
  int count = log->read_count;
  thread_drop_wait_set(thread);
  if (count == 1) {
    thread->wait_one = log->reads[0];
    thread->wait_set = &thread->wait_one;
  } else if (count > 1) {
    thread->wait_set = xrealloc(NULL, (size_t)count * sizeof *thread->wait_set);
    memcpy(thread->wait_set, log->reads, (size_t)count * sizeof *thread->wait_set);
  } else {
    thread->wait_set = NULL;
  }
  thread->wait_count = count;
  stm_end(vm, thread);
  sched_block(vm, thread, BLOCKED_STM);
  thread->block_seq = ++vm->block_counter;
  for (int i = 0; i < count; i++) add_waiter(vm, thread->wait_set[i], thread);
  vm_event(vm, .kind = EV_RETRY, .thread = thread, .tvars = thread->wait_set, .count = count);
}
