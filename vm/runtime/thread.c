/* Thread objects and their growable stacks. */
#include "thread.h"
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random.h"
#include "state.h"

const char *const mask_names[3] = {"Unmasked", "MaskedInterruptible", "MaskedUninterruptible"};

static void start_pooled(VM *vm, ObjThread *thread);

/* Whether a thread running `action` would leave its inline stacks at its
 * first bind: a block, or a suspended call's function, deeper than the
 * inline values left above its slots (an async's body, not `delay(d) >>
 * say(s)`). Such a thread starts on pooled stacks, as main does, with
 * nothing to copy or fix up. */
static bool outgrows_inline(Value action) {
  if (IS_BLOCK_CLOSURE(action)) return 1 + AS_CLOSURE(action)->proto->max_slots > THREAD_INLINE_STACK;
  if (!IS_SUSPENDED_CALL(action)) return false;
  const ObjAction *call = AS_ACTION(action); /* its slots: the callee and the arguments */
  return call->argc + AS_CLOSURE(call->args[0])->proto->max_slots > THREAD_INLINE_STACK;
}

/* A thread's start or state event, for the sinks: such events are not
 * counted, so with no sink active there is nothing to do, and the event
 * is built out of line (the hot callers then need no frame for it). */
static __attribute__((noinline)) void state_event(VM *vm, ObjThread *thread, EventKind kind, int mode) {
  vm_event(vm, .kind = kind, .thread = thread, .mode = mode);
}

ObjThread *thread_new(VM *vm, ObjThread *parent, Value action) {
  /* a fork's action is its argument, on the parent's stack: the collector
   * sees it there (main's is rooted here) */
  if (!parent) gc_push_root(vm, action);
  ObjThread *thread = (ObjThread *)gc_alloc(vm, sizeof(ObjThread), OBJ_THREAD);
  if (!parent) gc_pop_root(vm);
  /* in the order of the fields, so that the stores of constants merge;
   * the wait's fields are set as a wait begins (read only through
   * blocked_on), and raise_line with raise_file */
  thread->state = THREAD_RUNNABLE;
  thread->blocked_on = BLOCKED_NONE;
  thread->mask = MASK_NONE;
  thread->interrupted = false;
  thread->in_transaction = false;
  thread->quiet = parent && parent->quiet;
  thread->pending_count = 0;
  thread->frame_count = 1;
  thread->frame_capacity = THREAD_INLINE_FRAMES;
  thread->stack_capacity = THREAD_INLINE_STACK;
  thread->stack = thread->inline_stack;
  thread->frames = thread->inline_frames;
  thread->pending = thread->pending_one;
  thread->delay_timer.set = false;
  thread->delay_timer.kind = TIMER_DELAY;
  thread->live_prev = NULL;
  thread->live_next = vm->live;
  thread->wait_count = 0;
  thread->pending_capacity = 1;
  thread->parent = parent;
  thread->label = NULL;
  thread->child_number = parent ? ++parent->next_child : 0;
  thread->next_child = 0;
  thread->raised_by = NULL;
  thread->raised_value = UNIT_VAL;
  thread->raise_file = NULL;
  thread->explore_key = -1;
  thread->profile_index = -1;
  thread->serial = vm->thread_serial++;
  /* main's stream is the run's seed; a child's is split from its parent's
   * (splitmix64_next, its mixing left to thread_rng) */
  if (parent) {
    uint64_t *split = thread_rng(parent);
    *split += SPLITMIX64_GAMMA;
    thread->rng = *split;
    thread->rng_mixed = false;
  } else {
    thread->rng = vm->config.seed;
    thread->rng_mixed = true;
  }
  if (!parent || outgrows_inline(action)) start_pooled(vm, thread); /* main runs the program: it needs more */

  /* The base frame runs the action: [BIND, THREAD_EXIT] with it in slot 0
   * (every stack a thread starts on has room for it). */
  thread->stack[0] = action;
  thread->sp = thread->stack + 1;
  thread->frames[0] = (CallFrame){vm->entry_closure, vm->entry_closure->proto->chunk.code, thread->stack, -1};

  if (vm->sink_count) state_event(vm, thread, EV_THREAD_START, 0);
  vm->live_threads++;
  if (vm->live) vm->live->live_prev = thread;
  vm->live = thread;
  return thread;
}

/* A stack that leaves the thread object starts at these sizes, and arrays
 * of exactly these sizes are pooled when their thread ends (up to
 * POOL_MAX of each), so a thread that needs more than the inline stacks
 * usually costs no malloc either. */
#define POOLED_STACK 32  /* values */
#define POOLED_FRAMES 8
#define POOL_MAX 4096

typedef struct PoolItem {
  struct PoolItem *next;
} PoolItem;

static void *pool_take(StackPool *pool, size_t size) {
  PoolItem *item = pool->items;
  if (!item) return xrealloc(NULL, size);
  pool->items = item->next;
  pool->count--;
  return item;
}

static void pool_give(StackPool *pool, void *array) {
  if (pool->count == POOL_MAX) {
    free(array);
    return;
  }
  PoolItem *item = array;
  item->next = pool->items;
  pool->items = item;
  pool->count++;
}

void thread_pools_free(VM *vm) {
  StackPool *pools[] = {&vm->stack_pool, &vm->frame_pool};
  for (int i = 0; i < 2; i++) {
    while (pools[i]->items) {
      PoolItem *item = pools[i]->items;
      pools[i]->items = item->next;
      free(item);
    }
    pools[i]->count = 0;
  }
}

/* Move an array of `count` elements of `size` bytes to storage for
 * `capacity`: out of the thread object into a pooled array, or a bigger
 * malloc'd one. */
static void *grow(StackPool *pool, void *array, void *inline_array, int count, int capacity, int pooled, size_t size) {
  if (array != inline_array) return xrealloc(array, (size_t)capacity * size);
  void *moved = capacity == pooled ? pool_take(pool, (size_t)pooled * size) : xrealloc(NULL, (size_t)capacity * size);
  memcpy(moved, array, (size_t)count * size);
  return moved;
}

/* Main, which most often runs the whole program, starts on pooled stacks:
 * growing out of the inline ones, copying and fixing the frames up, cost
 * more than a tiny program's own work. */
static void start_pooled(VM *vm, ObjThread *thread) {
  thread->stack = pool_take(&vm->stack_pool, POOLED_STACK * sizeof(Value));
  thread->stack_capacity = POOLED_STACK;
  thread->frames = pool_take(&vm->frame_pool, POOLED_FRAMES * sizeof(CallFrame));
  thread->frame_capacity = POOLED_FRAMES;
  gc_account(vm, (ptrdiff_t)((POOLED_STACK - THREAD_INLINE_STACK) * sizeof(Value) +
                             (POOLED_FRAMES - THREAD_INLINE_FRAMES) * sizeof(CallFrame)));
}

/* Give back an array that left the thread object. */
static void release(StackPool *pool, void *array, int capacity, int pooled) {
  if (capacity == pooled) pool_give(pool, array);
  else free(array);
}

/* Free the stacks if they have left the thread object; account for them. */
static void free_stacks(VM *vm, ObjThread *thread) {
  ptrdiff_t freed = 0; /* bytes, given back in one gc_account */
  if (thread->stack != thread->inline_stack) {
    freed += (ptrdiff_t)((thread->stack_capacity - THREAD_INLINE_STACK) * sizeof(Value));
    release(&vm->stack_pool, thread->stack, thread->stack_capacity, POOLED_STACK);
  }
  if (thread->frames != thread->inline_frames) {
    freed += (ptrdiff_t)((thread->frame_capacity - THREAD_INLINE_FRAMES) * sizeof(CallFrame));
    release(&vm->frame_pool, thread->frames, thread->frame_capacity, POOLED_FRAMES);
  }
  if (freed) gc_account(vm, -freed);
}

bool thread_reserve(VM *vm, ObjThread *thread, int needed) {
  ptrdiff_t used = thread->sp - thread->stack;
  if (used + needed <= thread->stack_capacity) return true;
  if (used + needed > THREAD_MAX_STACK) return false;
  int capacity = thread->stack == thread->inline_stack ? POOLED_STACK : thread->stack_capacity;
  while (capacity < used + needed) capacity *= 2;
  if (capacity > THREAD_MAX_STACK) capacity = THREAD_MAX_STACK;
  Value *old = thread->stack;
  thread->stack = grow(&vm->stack_pool, old, thread->inline_stack, (int)used, capacity, POOLED_STACK, sizeof(Value));
  gc_account(vm, (ptrdiff_t)((capacity - thread->stack_capacity) * (ptrdiff_t)sizeof(Value)));
  thread->stack_capacity = capacity;
  if (thread->stack != old) {
    for (int i = 0; i < thread->frame_count; i++)
      thread->frames[i].slots = thread->stack + (thread->frames[i].slots - old);
    thread->sp = thread->stack + used;
  }
  return true;
}

bool thread_push_frame(VM *vm, ObjThread *thread, ObjClosure *closure, Value *slots) {
  if (thread->frame_count >= THREAD_MAX_FRAMES) return false;
  if (thread->frame_count == thread->frame_capacity) {
    int capacity = thread->frames == thread->inline_frames ? POOLED_FRAMES : thread->frame_capacity * 2;
    if (capacity > THREAD_MAX_FRAMES) capacity = THREAD_MAX_FRAMES; /* the interpreter's inline push relies on it */
    thread->frames = grow(&vm->frame_pool, thread->frames, thread->inline_frames, thread->frame_count, capacity,
                          POOLED_FRAMES, sizeof(CallFrame));
    gc_account(vm, (ptrdiff_t)((capacity - thread->frame_capacity) * (ptrdiff_t)sizeof(CallFrame)));
    thread->frame_capacity = capacity;
  }
  CallFrame *frame = &thread->frames[thread->frame_count++];
  frame->closure = closure;
  frame->ip = closure->proto->chunk.code;
  frame->slots = slots;
  frame->profile_node = -1;
  return true;
}

void thread_add_pending(VM *vm, ObjThread *thread, Value exception, ObjThread *thrower) {
  (void)vm;
  if (thread->pending_count == thread->pending_capacity) {
    /* past the inline slot (a second exception before the first is raised) */
    int capacity = thread->pending_capacity ? thread->pending_capacity * 2 : 2;
    Pending *grown = xrealloc(thread->pending == thread->pending_one ? NULL : thread->pending,
                              (size_t)capacity * sizeof(Pending));
    if (thread->pending == thread->pending_one) memcpy(grown, thread->pending_one, sizeof thread->pending_one);
    thread->pending = grown;
    thread->pending_capacity = capacity;
  }
  thread->pending[thread->pending_count++] = (Pending){exception, thrower, thrower};
}

Pending thread_take_pending(ObjThread *thread) {
  Pending first = thread->pending[0];
  thread->pending_count--;
  if (thread->pending_count) /* most often it was the only one */
    memmove(thread->pending, thread->pending + 1, (size_t)thread->pending_count * sizeof(Pending));
  return first;
}

void thread_drop_wait_set(ObjThread *thread) {
  /* by the count, not the pointer: the union may hold an MVar wait */
  if (thread->wait_count > 1) free(thread->wait_set);
  thread->wait_count = 0;
}

/* A thread ends: done, its arrays given back, owning nothing from now on
 * (the object lives on as an id). What thread_release and
 * thread_release_all share. */
static void end_thread(VM *vm, ObjThread *thread) {
  thread->state = THREAD_DONE;
  thread->blocked_on = BLOCKED_NONE;
  if (thread->stack != thread->inline_stack || thread->frames != thread->inline_frames) free_stacks(vm, thread);
  if (thread->pending != thread->pending_one) free(thread->pending);
  thread_drop_wait_set(thread);
  thread->stack = thread->sp = NULL;
  thread->frames = NULL;
  thread->pending = NULL;
  thread->stack_capacity = thread->frame_capacity = thread->frame_count = 0;
  thread->pending_count = thread->pending_capacity = 0;
}

void thread_release(VM *vm, ObjThread *thread) {
  if (thread->state == THREAD_DONE && !thread->stack) return;
  if (timer_is_set(&thread->delay_timer)) vm->stats.timers_cancelled++;
  timer_heap_remove(&vm->timers, &thread->delay_timer);
  if (vm->sink_count) state_event(vm, thread, EV_THREAD_STATE, TRACK_DONE);
  end_thread(vm, thread);
  vm->live_threads--;
  if (thread->live_prev) thread->live_prev->live_next = thread->live_next;
  else if (vm->live == thread) vm->live = thread->live_next;
  if (thread->live_next) thread->live_next->live_prev = thread->live_prev;
  thread->live_prev = thread->live_next = NULL;
}

void thread_release_all(VM *vm) {
  for (ObjThread *thread = vm->live, *next; thread; thread = next) {
    next = thread->live_next;
    end_thread(vm, thread);
    thread->delay_timer.set = false; /* the caller empties the timer heap */
    thread->live_prev = thread->live_next = NULL;
  }
  vm->live = NULL;
  vm->live_threads = 0;
}

void thread_free(VM *vm, ObjThread *thread) {
  if (thread->stack) free_stacks(vm, thread);
  if (thread->pending != thread->pending_one) free(thread->pending);
  thread_drop_wait_set(thread);
}

/* Append one number of an id, after a dot unless it is the first. By hand,
 * not printf: every trace line and async label formats ids. */
static void append_id_number(Buffer *out, int number, bool first) {
  char digits[16], *d = digits + sizeof digits;
  unsigned n = (unsigned)number;
  do *--d = (char)('0' + n % 10); while (n /= 10);
  if (!first) *--d = '.';
  buf_append(out, d, (size_t)(digits + sizeof digits - d));
}

void thread_id(Buffer *out, const ObjThread *thread) {
  if (!thread->parent) {
    buf_append(out, "main", 4);
    return;
  }
  if (!thread->parent->parent) { /* a child of main, as most threads are */
    append_id_number(out, thread->child_number, true);
    return;
  }
  /* the numbers from the root down: walk up, then print in reverse */
  int depth = 0;
  for (const ObjThread *t = thread; t->parent; t = t->parent) depth++;
  int small[32];
  int *numbers = depth <= 32 ? small : xrealloc(NULL, (size_t)depth * sizeof(int));
  int i = depth;
  for (const ObjThread *t = thread; t->parent; t = t->parent) numbers[--i] = t->child_number;
  for (i = 0; i < depth; i++) append_id_number(out, numbers[i], i == 0);
  if (numbers != small) free(numbers);
}

void thread_name(Buffer *out, const ObjThread *thread) {
  thread_id(out, thread);
  if (!thread->label) return;
  /* escaped as a say is in the trace: a label's newline cannot split a line */
  buf_append(out, " (", 2);
  buf_append_escaped(out, thread->label->chars, (size_t)thread->label->length);
  buf_append(out, ")", 1);
}

bool thread_frame_location(VM *vm, const CallFrame *frame, const ObjProto **proto, int *line) {
  const ObjClosure *closure = frame->closure;
  const uint8_t *ip = frame->ip;
  if (closure == vm->resume_closure) { /* -O0: where the continuation goes on */
    const ObjContinuation *cont = AS_CONTINUATION(frame->slots[0]);
    closure = cont->closure;
    ip = cont->ip;
  }
  *proto = closure->proto;
  if ((*proto)->kind == PROTO_INTERNAL || (*proto)->line == 0) return false; /* the VM's own code */
  const Chunk *chunk = &(*proto)->chunk;
  int offset = (int)(ip - chunk->code) - 1;
  if (offset < 0) offset = 0;
  *line = chunk->count ? chunk->lines[offset] : 0;
  return true;
}

void thread_note_raise(VM *vm, ObjThread *thread, Value exc, ObjThread *from) {
  Value last = thread->raised_value;
  if (!from && exc.type == last.type && (IS_OBJ(exc) ? AS_OBJ(exc) == AS_OBJ(last) : value_equal(exc, last))) return;
  thread->raised_by = from;
  thread->raised_value = exc;
  thread->raise_file = NULL;
  /* the innermost frame of the script's own code (the prelude's would
   * only confuse: a bracket or finally is not where things went wrong) */
  for (int i = thread->frame_count - 1; i >= 0; i--) {
    const ObjProto *proto;
    int line;
    if (!thread_frame_location(vm, &thread->frames[i], &proto, &line)) continue;
    if (proto->prelude) continue;
    thread->raise_file = proto->file;
    thread->raise_line = line;
    break;
  }
}
