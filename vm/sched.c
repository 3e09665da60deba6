/* Run queue, clock and timers (see sched.h for the rules). */
#include "sched.h"

#include <stdlib.h>

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

void sched_delay(VM *vm, ObjThread *thread, int64_t ns) {
  thread->state = THREAD_BLOCKED;
  thread->blocked_on = BLOCKED_DELAY;
  timer_heap_insert(&vm->timers, &thread->delay_timer, sched_deadline(vm->now, ns), vm->timer_seq++);
}

void sched_arm_timeout(VM *vm, ObjTimeout *timeout, int64_t ns) {
  timeout->state = TIMEOUT_ARMED;
  timer_heap_insert(&vm->timers, &timeout->timer, sched_deadline(vm->now, ns), vm->timer_seq++);
}

void sched_disarm_timeout(VM *vm, ObjTimeout *timeout) {
  timer_heap_remove(&vm->timers, &timeout->timer);
  timeout->state = TIMEOUT_DISARMED;
}

void sched_throw_to(VM *vm, ObjThread *target, Value exception) {
  if (target->state == THREAD_DONE) return;
  if (target->state == THREAD_BLOCKED) {
    timer_heap_remove(&vm->timers, &target->delay_timer);
    target->state = THREAD_RUNNABLE;
    target->blocked_on = BLOCKED_NONE;
    sched_enqueue(vm, target);
  }
  thread_add_pending(vm, target, exception);
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
  for (int i = 0; i < count; i++) {
    if (vm->due[i]->kind != TIMER_DELAY) continue;
    ObjThread *thread = (ObjThread *)vm->due[i]->owner;
    thread->state = THREAD_RUNNABLE;
    thread->blocked_on = BLOCKED_NONE;
    vm_trace(vm, thread, "wake");
    sched_enqueue(vm, thread);
  }
  for (int i = 0; i < count; i++) {
    if (vm->due[i]->kind != TIMER_TIMEOUT) continue;
    ObjTimeout *timeout = (ObjTimeout *)vm->due[i]->owner;
    timeout->state = TIMEOUT_FIRED;
    run_queue_push(vm, (RunEntry){timeout->thread, timeout});
  }
}

static void report_deadlock(VM *vm) {
  Buffer buf;
  buf_init(&buf);
  duration_show(&buf, vm->now);
  vm_report(vm, "simvm: deadlock at %s: no thread can run and no timer is set\n", buf.data);
  buf_free(&buf);
  for (ObjThread *t = vm->live; t; t = t->live_next) {
    char name[128];
    vm_report(vm, "  thread %s is blocked\n", thread_name(t, name, sizeof name));
  }
}

ObjThread *sched_next(VM *vm, SimStatus *status) {
  for (;;) {
    while (vm->run_queue.count) {
      RunEntry entry = run_queue_pop(vm);
      if (entry.timeout) {
        if (entry.timeout->state != TIMEOUT_FIRED) continue; /* the action finished first */
        entry.timeout->state = TIMEOUT_THROWN;
        vm_trace(vm, entry.thread, "timeout fired");
        sched_throw_to(vm, entry.thread, OBJ_VAL(entry.timeout));
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
