/* Run queue, clock and timers (see sched.h for the rules). */
#include "sched.h"
#include "show.h"
#include "events.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "explorer.h"
#include "mvar.h"
#include "stm.h"

void run_queue_grow(RunQueue *q) {
  int capacity = q->capacity ? q->capacity * 2 : 64;
  Obj **items = xrealloc(NULL, (size_t)capacity * sizeof *items);
  for (int i = 0; i < q->count; i++) {
    items[i] = q->items[(q->head + i) & (q->capacity - 1)];
    if (items[i]->type == OBJ_THREAD) ((ObjThread *)items[i])->queue_slot = i; /* (explore.c) */
  }
  free(q->items);
  q->items = items;
  q->head = 0;
  q->capacity = capacity;
}

static Obj *run_queue_pop(VM *vm) {
  RunQueue *q = &vm->run_queue;
  Obj *entry = q->items[q->head];
  q->head = (q->head + 1) & (q->capacity - 1);
  q->count--;
  return entry;
}

void run_queue_free(RunQueue *queue) {
  free(queue->items);
  queue->items = NULL;
  queue->count = queue->capacity = queue->head = 0;
}

void sched_block(VM *vm, ObjThread *thread, BlockReason reason) {
  thread->state = THREAD_BLOCKED;
  thread->blocked_on = reason;
  vm_event(vm, .kind = EV_THREAD_STATE, .thread = thread, .mode = reason == BLOCKED_DELAY ? TRACK_DELAYED : TRACK_BLOCKED);
}

/* sched_delay in general: an event for a sink, a timer still set, a full heap. */
static __attribute__((noinline)) void delay_general(VM *vm, ObjThread *thread, int64_t ns) {
  sched_block(vm, thread, BLOCKED_DELAY);
  vm->stats.timers_set++;
  timer_heap_insert(&vm->timers, &thread->delay_timer, sched_deadline(vm->now, ns), vm->timer_seq++);
}

void sched_delay(VM *vm, ObjThread *thread, int64_t ns) {
  /* Every sleeping thread comes here: the common case (no sink, the timer
   * unset, room in the heap) calls nothing but, at the end, to move its
   * entry up the heap, so it needs no frame of its own */
  TimerHeap *heap = &vm->timers;
  Timer *timer = &thread->delay_timer;
  if (__builtin_expect(vm->sink_count || event_traced[EV_THREAD_STATE] || timer->set || heap->count == heap->capacity, 0)) {
    delay_general(vm, thread, ns);
    return;
  }
  thread->state = THREAD_BLOCKED;
  thread->blocked_on = BLOCKED_DELAY;
  vm->stats.timers_set++;
  timer_heap_insert(heap, timer, sched_deadline_ahead(vm->now, ns), vm->timer_seq++);
}

DelayOutcome sched_delay_own_timeout_slow(VM *vm, ObjThread *thread, int64_t ns, uint64_t steps, Value *interrupt) {
  TimerHeap *heap = &vm->timers;
  if (!timer_entry_live(&heap->items[0])) return DELAY_BLOCKS; /* the inline part saw entries, an empty queue */
  if (steps >= atomic_load_explicit(&vm->stop_at, memory_order_relaxed)) return DELAY_BLOCKS; /* the round trip stops */
  Timer *timer = heap->items[0].timer;
  int64_t end = sched_deadline(vm->now, ns), when = timer->when;
  if (timer->kind != TIMER_TIMEOUT || when > end || when > vm->time_limit) return DELAY_BLOCKS;
  ObjTimeout *timeout = (ObjTimeout *)timer_owner(timer);
  if (timeout->thread != thread || (when < end && thread->mask == MASK_UNINTERRUPTIBLE)) return DELAY_BLOCKS;
  if (!timer_heap_top_alone(heap)) return DELAY_BLOCKS;
  /* the delay's timer, set (and cancelled, or fired with the timeout) */
  vm->timer_seq++;
  vm->stats.timers_set++;
  vm->now = when;
  timer_heap_take_top(heap);
  if (when == end) {
    /* fire_timers: the delay wakes the thread, then the interrupt queues */
    vm->stats.timers_fired += 2;
    vm->stats.events += 2; /* the delay and its wake */
    if (vm->stats.run_queue_peak < 2) vm->stats.run_queue_peak = 2;
    timeout->state = TIMEOUT_FIRED;
    run_queue_push(vm, &timeout->obj);
    return DELAY_DONE;
  }
  /* the interrupt, queued and taken at once: the delay cancelled, the
   * thread woken to raise it (sched_throw_to, sched_take_pending) */
  vm->stats.timers_fired++;
  vm->stats.timers_cancelled++;
  vm->stats.events += 2; /* the delay, the timeout firing */
  timeout->state = TIMEOUT_THROWN;
  thread->interrupted = false;
  *interrupt = OBJ_VAL(timeout);
  thread_note_raise(vm, thread, *interrupt, NULL);
  return DELAY_INTERRUPTED;
}

void sched_arm_tvar(VM *vm, ObjTVar *tvar, int64_t ns) {
  vm->stats.timers_set++;
  timer_heap_insert(&vm->timers, &tvar->timer, sched_deadline(vm->now, ns), vm->timer_seq++);
}

void sched_arm_timeout(VM *vm, ObjTimeout *timeout, int64_t ns) {
  timeout->state = TIMEOUT_ARMED;
  vm->stats.timers_set++;
  timer_heap_insert(&vm->timers, &timeout->timer, sched_deadline(vm->now, ns), vm->timer_seq++);
}

void sched_disarm_thrown(ObjTimeout *timeout) {
  /* thrown but still waiting (the thread was masked): withdraw it, so the
   * interrupt of a finished timeout never escapes it */
  ObjThread *thread = timeout->thread;
  for (int i = 0; i < thread->pending_count; i++) {
    if (!IS_TIMEOUT(thread->pending[i].exception) || AS_TIMEOUT(thread->pending[i].exception) != timeout) continue;
    memmove(&thread->pending[i], &thread->pending[i + 1], (size_t)(thread->pending_count - i - 1) * sizeof(Pending));
    thread->pending_count--;
    break;
  }
}

void sched_wake_by(VM *vm, ObjThread *thread, ObjTVar *by) {
  vm_event(vm, .kind = EV_THREAD_STATE, .thread = thread, .mode = TRACK_RUNNABLE);
  thread->state = THREAD_RUNNABLE;
  thread->blocked_on = BLOCKED_NONE;
  vm_event(vm, .kind = EV_WAKE, .thread = thread, .value = by ? OBJ_VAL(by) : UNIT_VAL);
  sched_enqueue(vm, thread);
}

void sched_wake(VM *vm, ObjThread *thread) { sched_wake_by(vm, thread, NULL); }

/* Stop whatever `thread` waits for: it was thrown an exception. */
static void cancel_wait(VM *vm, ObjThread *thread) {
  switch (thread->blocked_on) {
    case BLOCKED_DELAY:
      vm->stats.timers_cancelled++;
      timer_heap_remove(&vm->timers, &thread->delay_timer);
      break;
    case BLOCKED_TAKE:
    case BLOCKED_READ:
    case BLOCKED_PUT:
      mvar_cancel_wait(thread);
      break;
    case BLOCKED_THROW: {
      /* it stops waiting, but the exception it was throwing stays pending
       * in the target and is still raised when the target unmasks, as io-sim
       * does (its unit_async_10 and unit_async_11); nobody waits for it now */
      ObjThread *target = (ObjThread *)thread->wait_object;
      for (int i = 0; i < target->pending_count; i++)
        if (target->pending[i].thrower == thread) target->pending[i].thrower = NULL;
      thread->wait_object = NULL;
      break;
    }
    case BLOCKED_STM:
      stm_cancel_wait(thread);
      break;
    case BLOCKED_NONE:
      break;
  }
  vm_event(vm, .kind = EV_THREAD_STATE, .thread = thread, .mode = TRACK_RUNNABLE);
  thread->state = THREAD_RUNNABLE;
  thread->blocked_on = BLOCKED_NONE;
  thread->interrupted = true;
  sched_enqueue(vm, thread);
}

bool sched_would_deliver(const ObjThread *target) {
  return target->state == THREAD_DONE || target->mask == MASK_NONE ||
         (target->mask == MASK_INTERRUPTIBLE && target->state == THREAD_BLOCKED);
}

bool sched_throw_to(VM *vm, ObjThread *thrower, ObjThread *target, Value exception) {
  if (target->state == THREAD_DONE) return true;
  if (vm->explore) explore_access(vm, &target->obj, true);
  bool blocked = target->state == THREAD_BLOCKED;
  if (sched_would_deliver(target)) {
    if (blocked) cancel_wait(vm, target);
    thread_add_pending(vm, target, exception, NULL);
    target->pending[target->pending_count - 1].from = thrower;
    return true;
  }
  thread_add_pending(vm, target, exception, thrower);
  return false;
}

/* Is `thrower` still blocked in a throwTo to `target`? */
static bool waits_to_throw_to(const ObjThread *thrower, const ObjThread *target) {
  return thrower && thrower->state == THREAD_BLOCKED && thrower->blocked_on == BLOCKED_THROW &&
         thrower->wait_object == &target->obj;
}

Value sched_take_pending(VM *vm, ObjThread *thread) {
  Pending first = thread_take_pending(thread);
  thread->interrupted = false;
  /* a timeout counts as fired when its interrupt is raised, not when it is
   * queued: one withdrawn before (its action finished, or a newer interrupt
   * replaced it) never shows */
  if (IS_TIMEOUT(first.exception)) vm_event(vm, .kind = EV_TIMEOUT_FIRED, .thread = thread);
  thread_note_raise(vm, thread, first.exception, first.from);
  if (waits_to_throw_to(first.thrower, thread)) {
    first.thrower->wait_object = NULL;
    sched_wake(vm, first.thrower);
  }
  return first.exception;
}

void sched_thread_done(VM *vm, ObjThread *thread) {
  for (int i = 0; i < thread->pending_count; i++) {
    ObjThread *thrower = thread->pending[i].thrower;
    if (waits_to_throw_to(thrower, thread)) {
      thrower->wait_object = NULL;
      sched_wake(vm, thrower);
    }
  }
  thread->pending_count = 0;
  thread_release(vm, thread);
}

/* A timeout's interrupt is about to be thrown to `thread`: an older timeout
 * interrupt still pending there (not raised yet: the thread has not run
 * since, or is masked) is withdrawn, and its timeout goes on as if it had
 * not fired. The newest interrupt wins, as in io-sim, where a later throwTo
 * replaces the exception a thread has not yet raised (and masked ones are
 * raised newest first): of two nested timeouts firing at one instant, the
 * inner one is reported (io-sim's prop_stacked_timeouts). */
static void supersede_timeouts(ObjThread *thread) {
  int kept = 0;
  for (int i = 0; i < thread->pending_count; i++) {
    Value exc = thread->pending[i].exception;
    if (IS_TIMEOUT(exc)) {
      AS_TIMEOUT(exc)->state = TIMEOUT_DISARMED;
      continue;
    }
    thread->pending[kept++] = thread->pending[i];
  }
  thread->pending_count = kept;
}

/* A timeout's timer fired: its interrupt queues behind the threads woken
 * so far (io-sim forks a thread to throw it). */
static void fire_timeout(VM *vm, Timer *timer) {
  ObjTimeout *timeout = (ObjTimeout *)timer_owner(timer);
  timeout->state = TIMEOUT_FIRED;
  run_queue_push(vm, &timeout->obj);
}

/* Under exploration the timers due at one instant fire in an order the
 * explorer chooses (vm/choice.h), io-sim's by default: vm->due is put in
 * io-sim's order (TVars, delays, timeouts, each in timer order), the
 * explorer reorders it, and each fires in turn, consecutive TVars
 * together as io-sim fires them (so the default order fires exactly as
 * fire_timers does). */
static void fire_in_chosen_order(VM *vm, int count) {
  Timer **due = vm->due, **sorted = xrealloc(NULL, (size_t)count * sizeof *sorted);
  int n = 0;
  for (int i = 0; i < count; i++)
    if (timer_sets_tvar(due[i]->kind)) sorted[n++] = due[i];
  for (int i = 0; i < count; i++)
    if (due[i]->kind == TIMER_DELAY) sorted[n++] = due[i];
  for (int i = 0; i < count; i++)
    if (due[i]->kind == TIMER_TIMEOUT) sorted[n++] = due[i];
  memcpy(due, sorted, (size_t)count * sizeof *due);
  free(sorted);
  explore_order_timers(vm, due, count);
  for (int i = 0; i < count;) {
    int j = i;
    while (j < count && timer_sets_tvar(due[j]->kind)) j++;
    if (j > i) { /* a run of TVars: set together, then their readers woken */
      stm_fire_delays(vm, due + i, j - i);
      i = j;
      continue;
    }
    if (due[i]->kind == TIMER_DELAY) sched_wake(vm, (ObjThread *)timer_owner(due[i]));
    else fire_timeout(vm, due[i]);
    i++;
  }
}

/* Fire every timer due at the earliest pending instant. */
static void fire_timers(VM *vm) {
  int64_t when = timer_heap_peek(&vm->timers)->when;
  vm->now = when;
  int count = 0;
  for (Timer *next; (next = timer_heap_peek(&vm->timers)) && next->when == when;) {
    if (count == vm->due_capacity) {
      vm->due_capacity = vm->due_capacity ? vm->due_capacity * 2 : 16;
      vm->due = xrealloc(vm->due, (size_t)vm->due_capacity * sizeof(Timer *));
    }
    vm->due[count++] = timer_heap_take_top(&vm->timers); /* peek left the top live */
  }
  vm->stats.timers_fired += (uint64_t)count;
  if (vm->explore && count > 1) {
    fire_in_chosen_order(vm, count);
    return;
  }
  /* as io-sim: registerDelay's TVars first (set, then their readers woken,
   * TVar by TVar), then the delays, then the timeouts */
  stm_fire_delays(vm, vm->due, count);
  for (int i = 0; i < count; i++)
    if (vm->due[i]->kind == TIMER_DELAY) sched_wake(vm, (ObjThread *)timer_owner(vm->due[i]));
  for (int i = 0; i < count; i++)
    if (vm->due[i]->kind == TIMER_TIMEOUT) fire_timeout(vm, vm->due[i]);
}

/* "takeMVar on <mvar queue>", "throwTo 2 (masked)" ... */
static void describe_wait(Buffer *out, const ObjThread *t) {
  static const char *ops[] = {[BLOCKED_TAKE] = "takeMVar", [BLOCKED_READ] = "readMVar", [BLOCKED_PUT] = "putMVar"};
  switch (t->blocked_on) {
    case BLOCKED_TAKE:
    case BLOCKED_READ:
    case BLOCKED_PUT:
      buf_printf(out, "in %s on ", ops[t->blocked_on]);
      value_show(out, OBJ_VAL(t->wait_object), false);
      break;
    case BLOCKED_THROW:
      buf_printf(out, "in throwTo ");
      thread_name(out, (ObjThread *)t->wait_object);
      buf_printf(out, " (it has exceptions masked)");
      break;
    case BLOCKED_DELAY:
      buf_printf(out, "in delay until ");
      duration_show(out, t->delay_timer.when);
      break;
    case BLOCKED_STM:
      buf_printf(out, "in atomically (retry) on ");
      if (t->wait_count) stm_describe(out, t->wait_set, t->wait_count);
      else buf_printf(out, "no TVar at all");
      break;
    case BLOCKED_NONE:
      buf_printf(out, "runnable");
      break;
  }
}

/* Whether a runnable thread has run any of its code yet. */
static bool started(VM *vm, const ObjThread *t) {
  return t->state != THREAD_RUNNABLE || t->frame_count != 1 || t->frames[0].ip != vm->entry_closure->proto->chunk.code;
}

/* Where a thread is, " at file:line": its innermost frame of the script's
 * own code, else of the prelude's; " (it has not started)" for a thread
 * that has run no code yet. */
void sched_thread_place(VM *vm, Buffer *out, const ObjThread *t) {
  for (int pass = 0; pass < 2; pass++) {
    for (int i = t->frame_count - 1; i >= 0; i--) {
      const ObjProto *proto;
      int line;
      if (!thread_frame_location(vm, &t->frames[i], &proto, &line)) continue;
      if (pass == 0 && proto->prelude) continue;
      buf_printf(out, " at %s:%d", proto->file, line);
      return;
    }
  }
  if (!started(vm, t)) buf_printf(out, " (it has not started)");
}

static void describe_last(Buffer *out, const ObjThread *t);

/* "  thread 1 (worker) is blocked in takeMVar on <mvar m> at x.sim:4\n" */
static void describe_thread(VM *vm, Buffer *out, const ObjThread *t) {
  buf_printf(out, "  thread ");
  thread_name(out, t);
  if (t->state == THREAD_BLOCKED) {
    buf_printf(out, " is blocked ");
    describe_wait(out, t);
  } else {
    buf_printf(out, t == vm->current && started(vm, t) ? " is running" : " is runnable");
  }
  sched_thread_place(vm, out, t);
  if (t->state == THREAD_BLOCKED) describe_last(out, t);
  buf_append(out, "\n", 1);
}

/* The oldest thread still alive. */
static ObjThread *oldest_live(VM *vm) {
  ObjThread *oldest = vm->live;
  while (oldest && oldest->live_next) oldest = oldest->live_next;
  return oldest;
}

/* ---- the wait-for graph (io-sim issue #219) ----
 * A blocked thread waits for the thread that could let it go on: the one
 * that last took the value of the empty MVar it takes (or reads), that
 * last put the value of the full MVar it puts to, that last wrote a TVar
 * its transaction retried on, or the target of its throwTo. */

typedef struct {
  ObjThread *to;      /* NULL: no thread (never taken, written ...)  */
  Obj *via;           /* the MVar or TVar, NULL for throwTo          */
} WaitEdge;

/* The edges of a blocked thread, into *edges (malloc'd); how many. */
static int wait_edges(const ObjThread *t, WaitEdge **edges) {
  *edges = NULL;
  switch (t->blocked_on) {
    case BLOCKED_TAKE:
    case BLOCKED_READ:
    case BLOCKED_PUT: {
      ObjMVar *mvar = (ObjMVar *)t->wait_object;
      *edges = xrealloc(NULL, sizeof(WaitEdge));
      (*edges)[0] = (WaitEdge){t->blocked_on == BLOCKED_PUT ? mvar->last_putter : mvar->last_taker, &mvar->obj};
      return 1;
    }
    case BLOCKED_THROW:
      *edges = xrealloc(NULL, sizeof(WaitEdge));
      (*edges)[0] = (WaitEdge){(ObjThread *)t->wait_object, NULL};
      return 1;
    case BLOCKED_STM:
      if (!t->wait_count) return 0;
      *edges = xrealloc(NULL, (size_t)t->wait_count * sizeof(WaitEdge));
      for (int i = 0; i < t->wait_count; i++) (*edges)[i] = (WaitEdge){t->wait_set[i]->last_writer, &t->wait_set[i]->obj};
      return t->wait_count;
    default:
      return 0;
  }
}

/* "last taken by 1 (worker)", "last written by main" ... for an edge of `t`. */
static void describe_edge(Buffer *out, const ObjThread *t, const WaitEdge *edge) {
  if (!edge->via) {
    buf_printf(out, "waits to throw to ");
    thread_name(out, edge->to);
    return;
  }
  buf_printf(out, "waits for ");
  value_show(out, OBJ_VAL(edge->via), false);
  const char *verb = t->blocked_on == BLOCKED_PUT ? "put" : t->blocked_on == BLOCKED_STM ? "written" : "taken";
  buf_printf(out, ", last %s by ", verb);
  thread_name(out, edge->to);
}

/* What the thread line adds: who last acted on what it waits for,
 * "; last taken by 1 (worker)", "; never written" (each TVar named when
 * it waits on several). */
static void describe_last(Buffer *out, const ObjThread *t) {
  WaitEdge *edges;
  int count = wait_edges(t, &edges);
  for (int i = 0; i < count; i++) {
    if (!edges[i].via) continue; /* throwTo names its target already */
    buf_append(out, i ? ", " : "; ", 2);
    if (count > 1) {
      value_show(out, OBJ_VAL(edges[i].via), false);
      buf_append(out, " ", 1);
    }
    if (!edges[i].to) {
      buf_printf(out, t->blocked_on == BLOCKED_PUT   ? "full from the start"
                      : t->blocked_on == BLOCKED_STM ? "never written"
                                                     : "never filled");
      continue;
    }
    const char *verb = t->blocked_on == BLOCKED_PUT ? "put" : t->blocked_on == BLOCKED_STM ? "written" : "taken";
    buf_printf(out, "last %s by ", verb);
    thread_name(out, edges[i].to);
    if (edges[i].to->state == THREAD_DONE) buf_printf(out, ", which has ended");
  }
  free(edges);
}

#define MAX_CYCLES 10

static int target_of(const ObjThread *to, const int *index, int serials, ObjThread *const *threads) {
  if (!to || to->serial < 0 || to->serial > serials) return -1;
  int i = index[to->serial];
  return i >= 0 && threads[i] == to ? i : -1;
}

/* Print each cycle of the wait-for graph among `count` threads (oldest
 * first) that a depth-first search meets, at most MAX_CYCLES, from its
 * oldest thread: "main waits for <mvar a>, last taken by 1, which ...". */
static void report_cycles(VM *vm, Buffer *out, ObjThread **threads, int count) {
  if (count <= 0) return;
  /* index by creation serial */
  int *index = xrealloc(NULL, (size_t)(vm->thread_serial + 1) * sizeof(int));
  for (int i = 0; i <= vm->thread_serial; i++) index[i] = -1;
  for (int i = 0; i < count; i++) index[threads[i]->serial] = i;
  WaitEdge **edges = xrealloc(NULL, (size_t)count * sizeof *edges);
  int *edge_count = xrealloc(NULL, (size_t)count * sizeof(int));
  char *color = xrealloc(NULL, (size_t)count); /* 0 new, 1 on the path, 2 done */
  memset(color, 0, (size_t)count);
  int *path = xrealloc(NULL, (size_t)count * sizeof(int)), *next = xrealloc(NULL, (size_t)count * sizeof(int));
  for (int i = 0; i < count; i++) edge_count[i] = wait_edges(threads[i], &edges[i]);
  int cycles = 0;
  /* the thread an edge leads to, if it is one of `threads` (a thread that
   * has ended cannot be on a cycle) */
#define TARGET(node, e) target_of(edges[node][e].to, index, vm->thread_serial, threads)
  for (int root = 0; root < count && cycles < MAX_CYCLES; root++) {
    if (color[root]) continue;
    int depth = 0;
    path[depth] = root;
    next[depth] = 0;
    color[root] = 1;
    while (depth >= 0 && cycles < MAX_CYCLES) {
      int node = path[depth];
      if (next[depth] == edge_count[node]) {
        color[node] = 2;
        depth--;
        continue;
      }
      int e = next[depth]++;
      int to = TARGET(node, e);
      if (to < 0 || color[to] == 2) continue;
      if (color[to] == 0) {
        color[to] = 1;
        depth++;
        path[depth] = to;
        next[depth] = 0;
        continue;
      }
      /* a cycle: from `to`, on the path, down to `node` and back */
      int start = depth;
      while (path[start] != to) start--;
      buf_printf(out, "  cycle: ");
      for (int k = start; k <= depth; k++) {
        int at = path[k];
        const WaitEdge *edge = k == depth ? &edges[at][e] : &edges[at][next[k] - 1];
        if (k == start) thread_name(out, threads[at]);
        buf_append(out, " ", 1);
        describe_edge(out, threads[at], edge);
        if (k < depth) buf_printf(out, ", which");
      }
      buf_append(out, "\n", 1);
      cycles++;
    }
  }
#undef TARGET
  for (int i = 0; i < count; i++) free(edges[i]);
  free(edges);
  free(edge_count);
  free(color);
  free(path);
  free(next);
  free(index);
}

void sched_report_threads(VM *vm, Buffer *out) {
  for (ObjThread *t = oldest_live(vm); t; t = t->live_prev) describe_thread(vm, out, t);
}

void sched_describe_deadlock(VM *vm, Buffer *out) {
  int count = 0;
  for (ObjThread *t = vm->live; t; t = t->live_next) count++;
  ObjThread **threads = xrealloc(NULL, (size_t)(count ? count : 1) * sizeof *threads);
  count = 0;
  for (ObjThread *t = oldest_live(vm); t; t = t->live_prev) {
    threads[count++] = t;
    describe_thread(vm, out, t);
  }
  report_cycles(vm, out, threads, count);
  free(threads);
}

/* Name every blocked thread, oldest first, with what it waits on, where,
 * and who last acted on it; then the cycles among them. */
static void report_deadlock(VM *vm) {
  Buffer out;
  buf_init(&out);
  buf_printf(&out, "simvm: deadlock at ");
  duration_show(&out, vm->now);
  buf_printf(&out, ": no thread can run and no timer is set\n");
  sched_describe_deadlock(vm, &out);
  vm_write_error(vm, out.data, out.length);
  buf_free(&out);
}

SimStatus sched_main_ended(VM *vm, SimStatus status) {
  if (!vm->live) return status;
  int count = vm->live_threads; /* the live list's length: no walk over every thread's object */
  vm_event(vm, .kind = EV_END, .mode = status, .count = count);
  if (status != SIM_OK || !vm->config.strict_shutdown) return status;
  /* io-sim's runSimStrictShutdown: a main that leaves threads behind fails */
  Buffer out;
  buf_init(&out);
  buf_printf(&out, "simvm: strict shutdown: main finished at ");
  duration_show(&out, vm->now);
  buf_printf(&out, " with %d thread%s still alive (--strict-shutdown)\n", count, count == 1 ? "" : "s");
  for (ObjThread *t = oldest_live(vm); t; t = t->live_prev) describe_thread(vm, &out, t);
  vm_write_error(vm, out.data, out.length);
  buf_free(&out);
  return SIM_FAILED;
}

ObjThread *sched_next_slow(VM *vm, SimStatus *status) {
  for (;;) {
    while (vm->run_queue.count) {
      Obj *entry = run_queue_pop(vm);
      if (entry->type == OBJ_TIMEOUT) {
        ObjTimeout *timeout = (ObjTimeout *)entry;
        if (timeout->state != TIMEOUT_FIRED) continue; /* the action finished first */
        supersede_timeouts(timeout->thread);
        timeout->state = TIMEOUT_THROWN;
        sched_throw_to(vm, NULL, timeout->thread, OBJ_VAL(timeout));
        continue;
      }
      ObjThread *thread = (ObjThread *)entry;
      if (thread->state != THREAD_RUNNABLE) continue;
      if (vm->explore && !(thread = explore_pick(vm, thread))) return *status = SIM_LIMIT, NULL;
      vm->current = thread;
      return thread;
    }
    Timer *first = timer_heap_peek(&vm->timers);
    if (!first) {
      report_deadlock(vm);
      *status = SIM_DEADLOCK;
      return NULL;
    }
    if (first->when > vm->time_limit) {
      Buffer buf;
      buf_init(&buf);
      duration_show(&buf, vm->config.max_time);
      vm_report(vm, "simvm: time limit reached: the next event is after %s (--max-time)\n", buf.data);
      buf_free(&buf);
      *status = SIM_LIMIT;
      return NULL;
    }
    fire_timers(vm);
  }
}

SimStatus sched_stopped(VM *vm) {
  int stop = vm->stop;
  if (stop == SIM_STOP_INTERRUPT || stop == SIM_STOP_TERMINATE) {
    Buffer out;
    buf_init(&out);
    buf_printf(&out, "simvm: %s at ", stop == SIM_STOP_INTERRUPT ? "interrupted" : "terminated");
    duration_show(&out, vm->now);
    buf_printf(&out, " after %" PRIu64 " instruction%s\n", vm->steps, vm->steps == 1 ? "" : "s");
    sched_report_threads(vm, &out);
    vm_write_error(vm, out.data, out.length);
    buf_free(&out);
    return SIM_INTERRUPTED;
  }
  if (stop == SIM_STOP_OUTPUT) return SIM_USAGE;
  if (vm->heap_exceeded) {
    vm_report(vm, "simvm: heap limit reached: %zu bytes in use (--max-heap)\n", vm->bytes_allocated + vm->halted_bytes);
    return SIM_LIMIT;
  }
  if (stop == STOP_TRACE_SIZE) {
    static const char *const outputs[] = {"--trace output", "--trace-json file", "--timeline file"};
    vm_report(vm, "simvm: trace size limit reached: the %s would pass %" PRIu64 " bytes (--max-trace-size)\n",
              outputs[vm->trace_capped - 1], vm->config.max_trace_size);
  } else if (vm->config.max_steps && vm->steps >= vm->config.max_steps) {
    /* checked at calls and binds: the count may be a little past the limit,
     * by how far depends on the code, so the message gives the limit */
    vm_report(vm, "simvm: step limit reached: at least %" PRIu64 " instruction%s executed (--max-steps)\n",
              vm->config.max_steps, vm->config.max_steps == 1 ? "" : "s");
  } else {
    vm_report(vm, "simvm: work limit reached: at least %" PRIu64 " units of work done (--max-work)\n",
              vm->config.max_work);
  }
  return SIM_LIMIT;
}
