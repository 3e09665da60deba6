/* What every primitive shares: argument checks from builtins.def, entering
 * the VM's own prototypes, interruptible points, throwTo, masking and
 * tracing values (see prim.h). */
#include "prim.h"


#include "builtins.h"
#include "sched.h"


PrimResult prim_enter_growing(VM *vm, ObjThread *thread, ObjClosure *closure, Value *slots) {
  ptrdiff_t base = slots - thread->stack; /* the stack may move */
  if (!thread_reserve(vm, thread, closure->proto->max_slots)) {
    rt_error(vm, "stack overflow");
    return PRIM_ERROR;
  }
  if (!thread_push_frame(vm, thread, closure, thread->stack + base)) {
    rt_error(vm, "stack overflow (%d nested binds)", THREAD_MAX_FRAMES);
    return PRIM_ERROR;
  }
  return PRIM_NEXT;
}

bool prim_interrupted(VM *vm, ObjThread *thread, Value *args, PrimResult *result) {
  if (!thread->pending_count || thread->mask == MASK_UNINTERRUPTIBLE) return false;
  *result = prim_raise(thread, args, sched_take_pending(vm, thread));
  return true;
}

PrimResult prim_throw_to(VM *vm, ObjThread *thread, Value *args, ObjThread *target, Value exc, bool kill) {
  vm_event(vm, .kind = kill ? EV_KILL : EV_THROW_TO, .thread = thread, .other = target, .value = exc);
  if (target == thread) { /* to itself: synchronous */
    thread_note_raise(vm, thread, exc, NULL);
    return prim_raise(thread, args, exc);
  }
  args[0] = UNIT_VAL;
  thread->sp = args + 1;
  /* a throw that would wait is an interruptible point: an exception
   * already waiting for this thread comes first, and nothing is thrown */
  PrimResult result;
  if (!sched_would_deliver(target) && prim_interrupted(vm, thread, args, &result)) return result;
  /* delivered: a scheduling point (sched_throw_to told the explorer what it touched) */
  if (sched_throw_to(vm, thread, target, exc)) return prim_return_at_point(vm, thread, args, UNIT_VAL, NULL, false);
  /* the target has exceptions masked: wait until it takes this one */
  sched_block(vm, thread, BLOCKED_THROW);
  thread->wait_object = &target->obj;
  return PRIM_SWITCH;
}

void prim_set_mask(VM *vm, ObjThread *thread, MaskState mask, bool internal) {
  if (thread->mask != mask) vm_event(vm, .kind = EV_MASK, .thread = thread, .internal = internal, .mode = mask);
  thread->mask = mask;
}
