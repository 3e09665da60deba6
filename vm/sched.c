/* Run queue, clock and timers (see sched.h for the rules). */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "mvar.h"
#include "stm.h"

static void run_queue_push(VM *vm, RunEntry entry) {
  RunQueue *q = &vm->run_queue;
  if (q->count == q->capacity) {
    int capacity = q->capacity ? q->capacity * 2 : 64;
    RunEntry *items = xrealloc(NULL, (size_t)capacity * sizeof(RunEntry));
    for (int i = 0; i < q->count; i++) items[i] = q->items[(q->head + i) & (q->capacity - 1)];
    free(q->items);
    q->items = items;
    q->head = 0;
    q->capacity = capacity;
  }
  q->items[(q->head + q->count) & (q->capacity - 1)] = entry;
  q->count++;
  if (q->count > vm->stats.run_queue_peak) vm->stats.run_queue_peak = q->count;
}

static RunEntry run_queue_pop(VM *vm) {
  RunQueue *q = &vm->run_queue;
  RunEntry entry = q->items[q->head];
  q->head = (q->head + 1) & (q->capacity - 1);
  q->count--;
  return entry;
}

void run_queue_free(RunQueue *queue) {
  free(queue->items);
  queue->items = NULL;
  queue->count = queue->capacity = queue->head = 0;
}

void sched_enqueue(VM *vm, ObjThread *thread) { run_queue_push(vm, (RunEntry){thread, NULL}); }

int64_t sched_deadline(int64_t now, int64_t ns) {
  if (ns < 0) ns = 0;
  return ns > INT64_MAX - now ? INT64_MAX : now + ns;
}

void sched_block(VM *vm, ObjThread *thread, BlockReason reason) {
  thread->state = THREAD_BLOCKED;
  thread->blocked_on = reason;
  if (vm->profile) profile_thread_block(vm, thread);
  if (vm->config.timeline) timeline_state(vm, thread, reason == BLOCKED_DELAY ? TRACK_DELAYED : TRACK_BLOCKED);
}

void sched_delay(VM *vm, ObjThread *thread, int64_t ns) {
  sched_block(vm, thread, BLOCKED_DELAY);
  vm->stats.timers_set++;
  timer_heap_insert(&vm->timers, &thread->delay_timer, sched_deadline(vm->now, ns), vm->timer_seq++);
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

void sched_disarm_timeout(VM *vm, ObjTimeout *timeout) {
  if (timer_is_set(&timeout->timer)) vm->stats.timers_cancelled++;
  timer_heap_remove(&vm->timers, &timeout->timer);
  if (timeout->state == TIMEOUT_THROWN) {
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
  timeout->state = TIMEOUT_DISARMED;
}

void sched_wake_because(VM *vm, ObjThread *thread, const char *why) {
  if (vm->profile) profile_thread_wake(vm, thread);
  if (vm->config.timeline) timeline_state(vm, thread, TRACK_RUNNABLE);
  thread->state = THREAD_RUNNABLE;
  thread->blocked_on = BLOCKED_NONE;
  if (why) vm_trace(vm, thread, "wake (%s)", why);
  else vm_trace(vm, thread, "wake");
  sched_enqueue(vm, thread);
}

void sched_wake(VM *vm, ObjThread *thread) { sched_wake_because(vm, thread, NULL); }

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
      /* its own throwTo is abandoned: withdraw the exception it was delivering */
      ObjThread *target = (ObjThread *)thread->wait_object;
      for (int i = 0; i < target->pending_count; i++) {
        if (target->pending[i].thrower != thread) continue;
        memmove(&target->pending[i], &target->pending[i + 1],
                (size_t)(target->pending_count - i - 1) * sizeof(Pending));
        target->pending_count--;
        break;
      }
      thread->wait_object = NULL;
      break;
    }
    case BLOCKED_STM:
      stm_cancel_wait(thread);
      break;
    case BLOCKED_NONE:
      break;
  }
  if (vm->profile) profile_thread_wake(vm, thread);
  if (vm->config.timeline) timeline_state(vm, thread, TRACK_RUNNABLE);
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
  bool blocked = target->state == THREAD_BLOCKED;
  if (sched_would_deliver(target)) {
    if (blocked) cancel_wait(vm, target);
    thread_add_pending(vm, target, exception, NULL);
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

bool sched_should_raise(const ObjThread *thread) {
  return thread->pending_count > 0 && (thread->mask == MASK_NONE || thread->interrupted);
}

Value sched_take_pending(VM *vm, ObjThread *thread) {
  Pending first = thread_take_pending(thread);
  thread->interrupted = false;
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

/* Fire every timer due at the earliest pending instant. */
static void fire_timers(VM *vm) {
  int64_t when = timer_heap_peek(&vm->timers)->when;
  vm->now = when;
  int count = 0;
  while (vm->timers.count && timer_heap_peek(&vm->timers)->when == when) {
    if (count == vm->due_capacity) {
      vm->due_capacity = vm->due_capacity ? vm->due_capacity * 2 : 16;
      vm->due = xrealloc(vm->due, (size_t)vm->due_capacity * sizeof(Timer *));
    }
    vm->due[count++] = timer_heap_pop(&vm->timers);
  }
  vm->stats.timers_fired += (uint64_t)count;
  for (int i = 0; i < count; i++)
    if (vm->due[i]->kind == TIMER_DELAY) sched_wake(vm, (ObjThread *)vm->due[i]->owner);
  /* registerDelay: set every TVar due, then wake their readers in block order */
  ObjTVar **written = NULL;
  int written_count = 0;
  for (int i = 0; i < count; i++) {
    if (vm->due[i]->kind != TIMER_TVAR) continue;
    ObjTVar *tvar = (ObjTVar *)vm->due[i]->owner;
    tvar->value = BOOL_VAL(true);
    written = xrealloc(written, (size_t)(written_count + 1) * sizeof *written);
    written[written_count++] = tvar;
  }
  if (written_count) stm_wake_readers(vm, written, written_count);
  free(written);
  for (int i = 0; i < count; i++) {
    if (vm->due[i]->kind != TIMER_TIMEOUT) continue;
    ObjTimeout *timeout = (ObjTimeout *)vm->due[i]->owner;
    timeout->state = TIMEOUT_FIRED;
    run_queue_push(vm, (RunEntry){timeout->thread, timeout});
  }
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
      buf_printf(out, "in delay");
      break;
    case BLOCKED_STM:
      buf_printf(out, "in atomically (retry) on ");
      if (t->read_count) stm_describe(out, t->reads, t->read_count);
      else buf_printf(out, "no TVar at all");
      break;
    case BLOCKED_NONE:
      buf_printf(out, "runnable");
      break;
  }
}

/* Where a thread is: the innermost script frame, "file:line". */
static void describe_place(VM *vm, Buffer *out, const ObjThread *t) {
  for (int i = t->frame_count - 1; i >= 0; i--) {
    const ObjProto *proto;
    int line;
    if (!interp_frame_location(vm, &t->frames[i], &proto, &line)) continue;
    buf_printf(out, " at %s:%d", proto->file, line);
    return;
  }
}

void sched_report_threads(VM *vm, Buffer *out) {
  ObjThread *oldest = vm->live;
  while (oldest && oldest->live_next) oldest = oldest->live_next;
  for (ObjThread *t = oldest; t; t = t->live_prev) {
    buf_printf(out, "  thread ");
    thread_name(out, t);
    if (t->state == THREAD_BLOCKED) {
      buf_printf(out, " is blocked ");
      describe_wait(out, t);
    } else {
      buf_printf(out, t == vm->current ? " is running" : " is runnable");
    }
    describe_place(vm, out, t);
    buf_append(out, "\n", 1);
  }
}

/* Name every blocked thread, oldest first, with what it waits on and where. */
static void report_deadlock(VM *vm) {
  Buffer out;
  buf_init(&out);
  buf_printf(&out, "simvm: deadlock at ");
  duration_show(&out, vm->now);
  buf_printf(&out, ": no thread can run and no timer is set\n");
  sched_report_threads(vm, &out);
  if (vm->config.write_error) vm->config.write_error(vm->config.user, out.data, out.length);
  buf_free(&out);
}

ObjThread *sched_next(VM *vm, SimStatus *status) {
  for (;;) {
    while (vm->run_queue.count) {
      RunEntry entry = run_queue_pop(vm);
      if (entry.timeout) {
        if (entry.timeout->state != TIMEOUT_FIRED) continue; /* the action finished first */
        entry.timeout->state = TIMEOUT_THROWN;
        vm_trace(vm, entry.thread, "timeout fired");
        sched_throw_to(vm, NULL, entry.thread, OBJ_VAL(entry.timeout));
        continue;
      }
      if (entry.thread->state != THREAD_RUNNABLE) continue;
      vm->current = entry.thread;
      return entry.thread;
    }
    Timer *first = timer_heap_peek(&vm->timers);
    if (!first) {
      report_deadlock(vm);
      *status = SIM_DEADLOCK;
      return NULL;
    }
    if (vm->config.max_time >= 0 && first->when > vm->config.max_time) {
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
