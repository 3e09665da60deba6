/* Primitives of exceptions and masking: pure, throw, assert, catch,
 * withMaskingState, getMaskingState, and the instructions of the catch and
 * mask prototypes (see prim.h). */
#include <string.h>

#include "prim.h"
#include "sched.h"
#include "unwind.h"

PrimResult prim_pure(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)vm;
  (void)by_prelude;
  return prim_return(thread, args, args[0]);
}

PrimResult prim_throw(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  Value exc = args[0];
  thread_note_raise(vm, thread, exc, NULL);
  vm_event(vm, .kind = EV_THROW, .thread = thread, .internal = by_prelude, .value = exc);
  return prim_raise(thread, args, exc);
}

/* assert(cond, message): AssertionFailed where the script's own code is
 * (allowed in a transaction, as throw is: the exception undoes it). */
PrimResult prim_assert(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  Value cond = args[0], message = args[1];
  if (!IS_BOOL(cond)) {
    rt_error(vm, "assert needs a bool condition, not %s", value_type_name(cond));
    return PRIM_ERROR;
  }
  if (AS_BOOL(cond)) return prim_return(thread, args, UNIT_VAL);
  Buffer text;
  buf_init(&text);
  if (!value_show_vm(vm, &text, message, false)) { /* too big to show: the run stops (vm->halted) */
    buf_free(&text);
    return PRIM_ERROR;
  }
  /* the message stays rooted on the stack */
  Value exc = unwind_located_exception(vm, thread, EXC_ASSERT, buf_text(&text));
  buf_free(&text);
  thread_note_raise(vm, thread, exc, NULL);
  vm_event(vm, .kind = EV_THROW, .thread = thread, .value = exc);
  return prim_raise(thread, args, exc);
}

PrimResult prim_catch(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  return prim_enter(vm, thread, by_prelude ? vm->prelude_catch : vm->catch_closure, args);
}

/* The masking state named by a string, or -1. */
static int mask_from_name(VM *vm, Value name) {
  if (!IS_STRING(name)) return -1;
  for (int i = 0; i < 3; i++) /* most often one of getMaskingState's own strings */
    if (AS_STRING(name) == vm->mask_strings[i]) return i;
  for (int i = 0; i < 3; i++)
    if ((size_t)AS_STRING(name)->length == strlen(mask_names[i]) &&
        memcmp(AS_CSTRING(name), mask_names[i], strlen(mask_names[i])) == 0)
      return i;
  return -1;
}

PrimResult prim_with_mask(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  /* the prelude passes the state it saved as an int: only 0 to 2 are states */
  int64_t given = IS_INT(args[0]) ? AS_INT(args[0]) : -1;
  int state = given >= MASK_NONE && given <= MASK_UNINTERRUPTIBLE ? (int)given : mask_from_name(vm, args[0]);
  if (state < 0) {
    rt_error(vm, "withMaskingState needs \"Unmasked\", \"MaskedInterruptible\" or \"MaskedUninterruptible\"");
    return PRIM_ERROR;
  }
  if (!IS_RUNNABLE(args[1])) {
    rt_error(vm, "withMaskingState needs an action to run, not %s", value_type_name(args[1]));
    return PRIM_ERROR;
  }
  args[0] = INT_VAL(state);
  PrimResult result = prim_enter(vm, thread, by_prelude ? vm->prelude_mask : vm->mask_closure, args);
  if (result == PRIM_NEXT) { /* slot 2: the state to restore */
    *thread->sp++ = INT_VAL(thread->mask);
    prim_set_mask(vm, thread, (MaskState)state, by_prelude);
  }
  return result;
}

PrimResult prim_get_mask(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_return(thread, args, OBJ_VAL(vm->mask_strings[thread->mask]));
}

/* catch's handler: slot 2 holds the exception (any, a timeout's interrupt
 * included, as in GHC); the handler runs with exceptions masked, at least
 * interruptibly, so push the masking state WITH_MASK will set. */
PrimResult op_catch_handler(VM *vm, ObjThread *thread, CallFrame *frame) {
  vm_event(vm, .kind = EV_CAUGHT, .thread = thread, .internal = frame->closure->proto->prelude, .value = thread->sp[-1]);
  *thread->sp++ = INT_VAL(thread->mask == MASK_NONE ? MASK_INTERRUPTIBLE : thread->mask);
  return PRIM_NEXT;
}

/* The action finished: restore the state; an exception that waited for the
 * thread to unmask is raised now. */
PrimResult op_mask_pop(VM *vm, ObjThread *thread, CallFrame *frame) {
  prim_set_mask(vm, thread, (MaskState)AS_INT(frame->slots[2]), frame->closure->proto->prelude);
  if (thread->mask == MASK_NONE && thread->pending_count) {
    *thread->sp++ = sched_take_pending(vm, thread);
    return PRIM_RAISE;
  }
  return PRIM_NEXT;
}

/* The handler: restore the state and go on unwinding. */
PrimResult op_mask_unwind(VM *vm, ObjThread *thread, CallFrame *frame) {
  prim_set_mask(vm, thread, (MaskState)AS_INT(frame->slots[2]), frame->closure->proto->prelude);
  return PRIM_RAISE;
}
