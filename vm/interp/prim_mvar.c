/* Primitives of MVars (the hand-off rules are vm/mvar.c's; see prim.h). */
#include "mvar.h"
#include "prim.h"

PrimResult prim_new_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjMVar *mvar = obj_mvar(vm, true, args[0]);
  return prim_return(thread, args, OBJ_VAL(mvar));
}

PrimResult prim_new_empty_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjMVar *mvar = obj_mvar(vm, false, UNIT_VAL);
  return prim_return(thread, args, OBJ_VAL(mvar));
}

/* A take, read or put that must wait: unless an exception is waiting to be
 * raised here, the thread joins the MVar's queue (`value`: what a put puts)
 * with a placeholder on the stack, which the hand-off replaces. */
static PrimResult park(VM *vm, ObjThread *thread, Value *args, ObjMVar *mvar, BlockReason reason, Value value) {
  PrimResult result;
  if (prim_interrupted(vm, thread, args, &result)) return result;
  args[0] = UNIT_VAL;
  thread->sp = args + 1;
  mvar_wait(vm, mvar, thread, reason, value);
  vm_event(vm, .kind = EV_MVAR_BLOCKED, .thread = thread, .mode = reason, .value = OBJ_VAL(mvar));
  return PRIM_SWITCH;
}

/* An MVar operation that does not block (`done`: a try's success), traced
 * before it acts, so that a hand-off's wake follows it: each is a
 * scheduling point, and a leak or a lost hand-off often happens in exactly
 * such a put or take. */
static void traced(VM *vm, ObjThread *thread, ObjMVar *mvar, MVarOp op, bool done, Value datum, bool by_prelude) {
  vm_event(vm, .kind = EV_MVAR, .thread = thread, .internal = by_prelude, .mode = op, .count = done,
           .value = OBJ_VAL(mvar), .datum = datum);
}

/* takeMVar and readMVar: the value now, or park until a put hands it over
 * (the stack's placeholder is replaced by it). */
static PrimResult take_or_read(VM *vm, ObjThread *thread, Value *args, BlockReason reason, bool by_prelude) {
  ObjMVar *mvar = AS_MVAR(args[0]);
  Value value;
  if (mvar->full)
    traced(vm, thread, mvar, reason == BLOCKED_TAKE ? MVAR_OP_TAKE : MVAR_OP_READ, true, mvar->value, by_prelude);
  if (reason == BLOCKED_TAKE ? mvar_try_take(vm, mvar, &value) : mvar_try_read(mvar, &value))
    return prim_return_at_point(vm, thread, args, value, &mvar->obj, reason == BLOCKED_TAKE);
  return park(vm, thread, args, mvar, reason, UNIT_VAL);
}

PrimResult prim_take_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  return take_or_read(vm, thread, args, BLOCKED_TAKE, by_prelude);
}

PrimResult prim_read_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  return take_or_read(vm, thread, args, BLOCKED_READ, by_prelude);
}

PrimResult prim_put_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  ObjMVar *mvar = AS_MVAR(args[0]);
  Value value = args[1];
  if (!mvar->full) traced(vm, thread, mvar, MVAR_OP_PUT, true, value, by_prelude);
  if (mvar_try_put(vm, mvar, value)) return prim_return_at_point(vm, thread, args, UNIT_VAL, &mvar->obj, true);
  return park(vm, thread, args, mvar, BLOCKED_PUT, value);
}

PrimResult prim_try_take_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  Value value;
  ObjMVar *mvar = AS_MVAR(args[0]);
  traced(vm, thread, mvar, MVAR_OP_TRY_TAKE, mvar->full, mvar->value, by_prelude);
  if (!mvar_try_take(vm, mvar, &value)) return prim_return_at_point(vm, thread, args, NONE_VAL, &mvar->obj, true);
  args[0] = value; /* rooted while some() allocates, and the MVar too: */
  gc_push_root(vm, OBJ_VAL(mvar)); /* exploration records the access after */
  ObjSome *some = obj_some(vm, args[0]);
  gc_pop_root(vm);
  return prim_return_at_point(vm, thread, args, OBJ_VAL(some), &mvar->obj, true);
}

/* tryReadMVar: some(the value), leaving it there, or none; never waits. */
PrimResult prim_try_read_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  Value value;
  ObjMVar *mvar = AS_MVAR(args[0]);
  traced(vm, thread, mvar, MVAR_OP_TRY_READ, mvar->full, mvar->value, by_prelude);
  if (!mvar_try_read(mvar, &value)) return prim_return_at_point(vm, thread, args, NONE_VAL, &mvar->obj, false);
  ObjSome *some = obj_some(vm, value); /* value stays in the MVar, rooted by args[0] */
  return prim_return_at_point(vm, thread, args, OBJ_VAL(some), &mvar->obj, false);
}

PrimResult prim_try_put_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  ObjMVar *mvar = AS_MVAR(args[0]);
  traced(vm, thread, mvar, MVAR_OP_TRY_PUT, !mvar->full, args[1], by_prelude);
  bool put = mvar_try_put(vm, mvar, args[1]);
  return prim_return_at_point(vm, thread, args, BOOL_VAL(put), &mvar->obj, true);
}

/* inspectMVar(m): some(its value) or none, with no scheduling point and no
 * event (io-sim's inspectMVar, for checks that must not change the
 * schedule). */
PrimResult prim_inspect_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjMVar *mvar = AS_MVAR(args[0]);
  if (!mvar->full) return prim_return(thread, args, NONE_VAL);
  ObjSome *some = obj_some(vm, mvar->value); /* the value stays in the MVar, rooted by args[0] */
  return prim_return(thread, args, OBJ_VAL(some));
}

PrimResult prim_label_mvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)vm;
  (void)by_prelude;
  AS_MVAR(args[0])->label = AS_STRING(args[1]);
  return prim_return(thread, args, UNIT_VAL);
}
