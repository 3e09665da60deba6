/* A precise mark-sweep collector in two generations (see memory.h). */
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "state.h"
#include "stm.h"

#define GC_FIRST_THRESHOLD (1024 * 1024)
#define GC_GROWTH 2


void gc_update_limit(VM *vm) {
  size_t limit = vm->gc_stress ? 0 : vm->next_gc;
  if (!vm->heap_exceeded && vm_max_heap(vm) < limit) limit = vm_max_heap(vm);
  vm->alloc_limit = limit;
}

void gc_make_room(VM *vm, size_t size) {
  if (vm->gc_paused) return; /* the compiler's objects are not rooted yet */
  if (vm->gc_stress || vm->bytes_allocated + size > vm->next_gc) gc_collect(vm);
  if (!vm->heap_exceeded && vm->bytes_allocated + size > vm_max_heap(vm)) {
    gc_collect(vm); /* count only what is live */
    if (vm->bytes_allocated + size > vm_max_heap(vm)) {
      vm->heap_exceeded = true;
      vm_update_stop(vm); /* the loop stops at its next call or bind */
    }
  }
  gc_update_limit(vm);
}

void gc_note_owner(VM *vm, Obj *obj) {
  if (vm->young_owner_count == vm->young_owner_capacity) {
    vm->young_owner_capacity = vm->young_owner_capacity ? 2 * vm->young_owner_capacity : 64;
    vm->young_owners = xrealloc(vm->young_owners, (size_t)vm->young_owner_capacity * sizeof(Obj *));
  }
  vm->young_owners[vm->young_owner_count++] = obj;
}

void gc_push_root(VM *vm, Value value) {
  if (vm->temp_root_count == (int)(sizeof vm->temp_roots / sizeof vm->temp_roots[0])) {
    fprintf(stderr, "simvm: internal error: too many temporary GC roots\n");
    abort();
  }
  vm->temp_roots[vm->temp_root_count++] = value;
}

void gc_pop_root(VM *vm) { vm->temp_root_count--; }

/* ---- mark ---- */

typedef struct {
  Obj **items;
  int count;
  int capacity;
} GrayStack;

static void mark_obj(GrayStack *gray, Obj *obj) {
  if (!obj || obj->marked) return;
  obj->marked = true;
  if (gray->count == gray->capacity) {
    gray->capacity = gray->capacity ? gray->capacity * 2 : 256;
    gray->items = xrealloc(gray->items, (size_t)gray->capacity * sizeof(Obj *));
  }
  gray->items[gray->count++] = obj;
}

static void mark_value(GrayStack *gray, Value value) {
  if (IS_OBJ(value)) mark_obj(gray, AS_OBJ(value));
}

static void mark_array(GrayStack *gray, const ValueArray *array) {
  for (int i = 0; i < array->count; i++) mark_value(gray, array->values[i]);
}

static void mark_thread(GrayStack *gray, ObjThread *thread) {
  mark_obj(gray, (Obj *)thread->label);
  mark_obj(gray, (Obj *)thread->parent);
  for (Value *slot = thread->stack; slot < thread->sp; slot++) mark_value(gray, *slot);
  for (int i = 0; i < thread->frame_count; i++) mark_obj(gray, (Obj *)thread->frames[i].closure);
  for (int i = 0; i < thread->pending_count; i++) {
    mark_value(gray, thread->pending[i].exception);
    mark_obj(gray, (Obj *)thread->pending[i].thrower);
    mark_obj(gray, (Obj *)thread->pending[i].from);
  }
  mark_obj(gray, (Obj *)thread->raised_by);
  mark_value(gray, thread->raised_value);
  mark_obj(gray, thread_wait_object(thread));
  if (thread->blocked_on == BLOCKED_PUT) mark_value(gray, thread->wait_value);
  /* by the count: a retry's set is the thread's before it is marked blocked */
  for (int i = 0; i < thread->wait_count; i++) mark_obj(gray, (Obj *)thread->wait_set[i]);
}

/* The running transaction's logs (empty between transactions). */
static void mark_stm_log(VM *vm, GrayStack *gray) {
  for (int i = 0; i < vm->stm.undo_count; i++) {
    mark_obj(gray, (Obj *)vm->stm.undo[i].tvar);
    mark_value(gray, vm->stm.undo[i].old);
  }
  for (int i = 0; i < vm->stm.read_count; i++) mark_obj(gray, (Obj *)vm->stm.reads[i]);
}

/* Every root, in one place. */
static void mark_roots(VM *vm, GrayStack *gray) {
  mark_array(gray, &vm->globals);
  for (int i = 0; i < vm->globals.count; i++) mark_obj(gray, (Obj *)vm->global_info[i].name);
  mark_array(gray, &vm->module_inits);
  for (int i = 0; i < vm->temp_root_count; i++) mark_value(gray, vm->temp_roots[i]);
  mark_obj(gray, (Obj *)vm->entry_closure);
  mark_obj(gray, (Obj *)vm->timeout_closure);
  mark_obj(gray, (Obj *)vm->catch_closure);
  mark_obj(gray, (Obj *)vm->mask_closure);
  mark_obj(gray, (Obj *)vm->atomically_closure);
  mark_obj(gray, (Obj *)vm->prelude_catch);
  mark_obj(gray, (Obj *)vm->prelude_mask);
  mark_obj(gray, (Obj *)vm->prelude_atomically);
  mark_obj(gray, (Obj *)vm->or_else_closure);
  mark_obj(gray, (Obj *)vm->catch_stm_closure);
  mark_obj(gray, (Obj *)vm->async_closure);
  mark_obj(gray, (Obj *)vm->prelude_async);
  mark_obj(gray, (Obj *)vm->async_thread_closure);
  mark_obj(gray, (Obj *)vm->replicate_closure);
  mark_obj(gray, (Obj *)vm->traverse_closure);
  for (int i = 0; i < ASYNC_NAMES; i++) mark_obj(gray, (Obj *)vm->async_names[i]);
  mark_obj(gray, (Obj *)vm->resume_closure);
  mark_obj(gray, (Obj *)vm->retry_signal);
  mark_obj(gray, (Obj *)vm->thread_killed);
  for (int i = 0; i < 3; i++) mark_obj(gray, (Obj *)vm->mask_strings[i]);
  for (int i = 0; i < 3; i++) mark_obj(gray, (Obj *)vm->timeout_states[i]);
  mark_obj(gray, (Obj *)vm->main_thread);
  mark_obj(gray, (Obj *)vm->current);
  mark_value(gray, vm->result);
  mark_obj(gray, (Obj *)vm->failed_thread);
  mark_value(gray, vm->failure);
  mark_value(gray, vm->main_action);
  for (ObjThread *t = vm->live; t; t = t->live_next) mark_obj(gray, (Obj *)t);
  mark_stm_log(vm, gray);
  /* a timeout's entry: marking it marks its thread */
  for (int i = 0; i < vm->run_queue.count; i++)
    mark_obj(gray, vm->run_queue.items[(vm->run_queue.head + i) & (vm->run_queue.capacity - 1)]);
  /* stale entries too: they point at their owners until they go */
  for (int i = 0; i < vm->timers.count; i++) mark_obj(gray, timer_owner(vm->timers.items[i].timer));
  /* the profile names the prototypes it counted, and outlives the frames
   * that ran them (the boot block is gone once main replaces it) */
  if (vm->profile)
    for (int i = 0; i < vm->profile->node_count; i++) mark_obj(gray, (Obj *)vm->profile->nodes[i].proto);
}

static void blacken(GrayStack *gray, Obj *obj) {
  switch (obj->type) {
    case OBJ_STRING:
      mark_obj(gray, (Obj *)((ObjString *)obj)->owner);
      break;
    case OBJ_BUILTIN:
    case OBJ_FREE:
      break;
    case OBJ_CONS:
      mark_value(gray, ((ObjCons *)obj)->head);
      mark_obj(gray, (Obj *)((ObjCons *)obj)->tail);
      break;
    case OBJ_RECORD: {
      ObjRecord *record = (ObjRecord *)obj;
      mark_obj(gray, (Obj *)record->owner);
      for (int i = 0; i < record->count; i++) {
        mark_obj(gray, (Obj *)record->fields[i].name);
        mark_value(gray, record->fields[i].value);
      }
      break;
    }
    case OBJ_SOME:
      mark_value(gray, ((ObjSome *)obj)->value);
      break;
    case OBJ_PROTO: {
      ObjProto *proto = (ObjProto *)obj;
      mark_obj(gray, (Obj *)proto->name);
      mark_array(gray, &proto->chunk.constants);
      break;
    }
    case OBJ_CLOSURE: {
      ObjClosure *closure = (ObjClosure *)obj;
      mark_obj(gray, (Obj *)closure->proto);
      for (int i = 0; i < closure->upvalue_count; i++) mark_value(gray, closure->upvalues[i]);
      break;
    }
    case OBJ_ACTION: {
      ObjAction *action = (ObjAction *)obj;
      for (int i = 0; i < action->argc; i++) mark_value(gray, action->args[i]);
      break;
    }
    case OBJ_THREAD:
      mark_thread(gray, (ObjThread *)obj);
      break;
    case OBJ_TIMEOUT:
      mark_obj(gray, (Obj *)((ObjTimeout *)obj)->thread);
      break;
    case OBJ_EXCEPTION: {
      ObjException *exc = (ObjException *)obj;
      mark_obj(gray, (Obj *)exc->message);
      mark_obj(gray, (Obj *)exc->where);
      mark_obj(gray, (Obj *)exc->trace);
      break;
    }
    case OBJ_MAP: {
      ObjMap *node = (ObjMap *)obj;
      mark_value(gray, node->key);
      mark_value(gray, node->value);
      mark_obj(gray, (Obj *)node->left);
      mark_obj(gray, (Obj *)node->right);
      break;
    }
    case OBJ_CONTINUATION: {
      ObjContinuation *cont = (ObjContinuation *)obj;
      mark_obj(gray, (Obj *)cont->closure);
      for (int i = 0; i < cont->count; i++) mark_value(gray, cont->values[i]);
      break;
    }
    case OBJ_TVAR: {
      ObjTVar *tvar = (ObjTVar *)obj;
      mark_value(gray, tvar->value);
      mark_obj(gray, (Obj *)tvar->label);
      mark_obj(gray, (Obj *)tvar->async_thread);
      mark_value(gray, tvar->trace_fn);
      mark_obj(gray, (Obj *)tvar->last_writer);
      stm_drop_stale_waiters(tvar); /* a stale entry must not keep, or outlive, its thread */
      for (int i = 0; i < tvar->waiter_count; i++) mark_obj(gray, (Obj *)tvar->waiters[i].thread);
      break;
    }
    case OBJ_MVAR: {
      ObjMVar *mvar = (ObjMVar *)obj;
      mark_value(gray, mvar->value);
      mark_obj(gray, (Obj *)mvar->label);
      for (ObjThread *t = mvar->takers_head; t; t = t->wait_next) mark_obj(gray, (Obj *)t);
      for (ObjThread *t = mvar->readers_head; t; t = t->wait_next) mark_obj(gray, (Obj *)t);
      for (ObjThread *t = mvar->putters_head; t; t = t->wait_next) mark_obj(gray, (Obj *)t);
      mark_obj(gray, (Obj *)mvar->last_taker);
      mark_obj(gray, (Obj *)mvar->last_putter);
      break;
    }
  }
}

/* ---- sweep ---- */

static size_t object_size(Obj *obj) {
  switch (obj->type) {
    case OBJ_STRING: {
      const ObjString *string = (const ObjString *)obj;
      return sizeof(ObjString) + (string->owner ? 0 : (size_t)string->capacity + 1);
    }
    case OBJ_CONS: return sizeof(ObjCons);
    case OBJ_RECORD: {
      int capacity = ((ObjRecord *)obj)->capacity;
      return sizeof(ObjRecord) + (size_t)capacity * sizeof(Field) + (size_t)record_index_slots(capacity) * sizeof(int32_t);
    }
    case OBJ_SOME: return sizeof(ObjSome);
    case OBJ_PROTO: return sizeof(ObjProto);
    case OBJ_CLOSURE: return sizeof(ObjClosure) + (size_t)((ObjClosure *)obj)->upvalue_count * sizeof(Value);
    case OBJ_BUILTIN: return sizeof(ObjBuiltin);
    case OBJ_ACTION: return sizeof(ObjAction) + (size_t)((ObjAction *)obj)->argc * sizeof(Value);
    case OBJ_THREAD: return sizeof(ObjThread);
    case OBJ_TIMEOUT: return sizeof(ObjTimeout);
    case OBJ_EXCEPTION: return sizeof(ObjException);
    case OBJ_MVAR: return sizeof(ObjMVar);
    case OBJ_TVAR: return sizeof(ObjTVar);
    case OBJ_CONTINUATION: return sizeof(ObjContinuation) + (size_t)((ObjContinuation *)obj)->count * sizeof(Value);
    case OBJ_MAP: return sizeof(ObjMap);
    case OBJ_FREE: break;
  }
  return 0;
}

/* The types finalize has something to do for: the sweep calls it for them only. */
#define FINALIZED_TYPES (1u << OBJ_PROTO | 1u << OBJ_THREAD | 1u << OBJ_TVAR)

/* Release what a dead object owns besides its own storage (the heap takes that). */
static void finalize(VM *vm, Obj *obj) {
  switch (obj->type) {
    case OBJ_PROTO: {
      ObjProto *proto = (ObjProto *)obj;
      chunk_free(&proto->chunk);
      free(proto->captures);
      break;
    }
    case OBJ_THREAD:
      thread_free(vm, (ObjThread *)obj);
      break;
    case OBJ_TVAR: { /* its timer has no heap entry: an entry keeps its owner alive */
      ObjTVar *tvar = (ObjTVar *)obj;
      if (tvar->waiters != tvar->waiter_one) free(tvar->waiters);
      tvar->waiters = tvar->waiter_one; /* owning nothing now, whatever happens to it */
      tvar->waiter_count = 0;
      tvar->waiter_capacity = 1;
      break;
    }
    default:
      break;
  }
}

/* The sweep's verdict on one young object. */
static bool sweep_object(void *ctx, Obj *obj) {
  if (obj->marked) {
    obj->marked = false;
    return false;
  }
  VM *vm = ctx;
  vm->bytes_allocated -= object_size(obj);
  if (FINALIZED_TYPES >> obj->type & 1) finalize(vm, obj);
  return true;
}

static double wall_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* The sweep is about to free (and finalize) the unmarked young owners. */
static void forget_dead_owners(VM *vm) {
  int kept = 0;
  for (int i = 0; i < vm->young_owner_count; i++)
    if (vm->young_owners[i]->marked) vm->young_owners[kept++] = vm->young_owners[i];
  vm->young_owner_count = kept;
}

void gc_collect(VM *vm) {
  double started = wall_seconds();
  vm->stats.gc_cycles++;
  GrayStack gray = {NULL, 0, 0};
  mark_roots(vm, &gray);
  while (gray.count > 0) blacken(&gray, gray.items[--gray.count]);
  free(gray.items);
  table_remove_unmarked(&vm->strings);
  forget_dead_owners(vm);
  gc_note_peak(vm); /* the sweep shrinks the heap */
  heap_sweep(&vm->heap, sweep_object, vm);
  /* the old generation is never traced again: only the young heap counts */
  size_t young = vm->bytes_allocated - vm->old_bytes;
  vm->next_gc = vm->old_bytes + (young * GC_GROWTH < GC_FIRST_THRESHOLD ? GC_FIRST_THRESHOLD : young * GC_GROWTH);
  gc_update_limit(vm);
  vm->stats.gc_seconds += wall_seconds() - started;
}

/* Promotion: marked for good, so marking stops at it and no sweep frees it. */
static bool promote_object(void *ctx, Obj *obj) {
  VM *vm = ctx;
  obj->marked = true;
  vm->old_bytes += object_size(obj);
  return false;
}

void gc_promote(VM *vm) {
  heap_each(&vm->heap, true, promote_object, vm);
  heap_promote(&vm->heap);
  vm->young_owner_count = 0; /* old objects are finalized only by gc_free_all */
}

/* Forget the young heap without visiting it: only the young owners hold
 * anything outside their slots. Threads are not among them: by now every
 * one has been released (thread_release frees its stacks and logs). */
void gc_free_young(VM *vm) {
  for (int i = 0; i < vm->young_owner_count; i++) {
    Obj *obj = vm->young_owners[i];
    if (obj->type == OBJ_STRING) {
      if (((ObjString *)obj)->interned) table_delete(&vm->strings, (ObjString *)obj); /* others are in no table */
    } else {
      finalize(vm, obj);
    }
  }
  vm->young_owner_count = 0;
  heap_reset_young(&vm->heap);
  gc_note_peak(vm);
  vm->bytes_allocated = vm->old_bytes;
  vm->next_gc = vm->old_bytes + GC_FIRST_THRESHOLD;
  gc_update_limit(vm);
}

static bool free_object(void *ctx, Obj *obj) {
  finalize(ctx, obj);
  return true;
}

void gc_free_all(VM *vm) {
  heap_each(&vm->heap, false, free_object, vm);
  heap_free(&vm->heap);
}
