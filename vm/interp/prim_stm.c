/* Primitives of STM: TVars, atomically, retry, orElse, catchSTM, registerDelay,
 * traceTVar, and the instructions of the atomically and orElse prototypes
 * (the transaction rules are vm/stm.c's; see prim.h). */
#include "prim.h"
#include "sched.h"
#include "stm.h"

PrimResult prim_new_tvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjTVar *tvar = obj_tvar(vm, args[0]);
  return prim_return(thread, args, OBJ_VAL(tvar));
}

PrimResult prim_read_tvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjTVar *tvar = AS_TVAR(args[0]);
  stm_read(vm, tvar);
  return prim_return(thread, args, tvar->value);
}

PrimResult prim_read_tvar_io(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  ObjTVar *tvar = AS_TVAR(args[0]);
  if (thread->in_transaction) {
    stm_read(vm, tvar);
    return prim_return(thread, args, tvar->value);
  }
  vm_event(vm, .kind = EV_READ_TVAR_IO, .thread = thread, .internal = by_prelude, .value = OBJ_VAL(tvar),
           .datum = tvar->value);
  return prim_return_at_point(vm, thread, args, tvar->value, &tvar->obj, false);
}

PrimResult prim_write_tvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  stm_write(vm, AS_TVAR(args[0]), args[1]);
  return prim_return(thread, args, UNIT_VAL);
}

PrimResult prim_label_tvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)vm;
  (void)by_prelude;
  AS_TVAR(args[0])->label = AS_STRING(args[1]);
  return prim_return(thread, args, UNIT_VAL);
}

/* traceTVar(tv, f): after each commit that writes tv, f(old, new) gives
 * the text of a traceTVar event (io-sim's traceTVar). */
PrimResult prim_trace_tvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  Value target = args[0], f = args[1];
  if (!IS_TVAR(target)) {
    Buffer what;
    buf_init(&what);
    value_show_bounded(&what, f, false, 200);
    rt_error(vm, "traceTVar needs a TVar and a function of (old, new): got %s and %s", value_type_name(target),
             buf_text(&what));
    buf_free(&what);
    return PRIM_ERROR;
  }
  int arity = IS_FUNCTION_CLOSURE(f) ? AS_CLOSURE(f)->proto->arity : IS_BUILTIN(f) ? AS_BUILTIN(f)->builtin->arity : -1;
  if (arity != 2) {
    Buffer what;
    buf_init(&what);
    value_show(&what, target, false);
    if (arity < 0)
      rt_error(vm, "traceTVar needs a function of 2 arguments (old, new) for %s, not %s", buf_text(&what),
               value_type_name(f));
    else
      rt_error(vm, "traceTVar needs a function of 2 arguments (old, new) for %s, but '%s' takes %d", buf_text(&what),
               obj_callable_name(f), arity);
    buf_free(&what);
    return PRIM_ERROR;
  }
  AS_TVAR(target)->trace_fn = f;
  return prim_return(thread, args, UNIT_VAL);
}

PrimResult prim_atomically(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  if (thread->in_transaction) {
    rt_error(vm, "atomically inside atomically: transactions do not nest");
    return PRIM_ERROR;
  }
  if (!IS_RUNNABLE(args[0])) {
    rt_error(vm, "atomically needs a transaction to run, not %s", value_type_name(args[0]));
    return PRIM_ERROR;
  }
  PrimResult result = prim_enter(vm, thread, by_prelude ? vm->prelude_atomically : vm->atomically_closure, args);
  if (result == PRIM_NEXT) { /* TX_BEGIN's work, done here: the frame starts after it */
    stm_begin(vm, thread);
    thread->frames[thread->frame_count - 1].ip++;
  }
  return result;
}

PrimResult prim_retry(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_raise(thread, args, OBJ_VAL(vm->retry_signal));
}

PrimResult prim_or_else(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  if (!IS_RUNNABLE(args[0]) || !IS_RUNNABLE(args[1])) {
    rt_error(vm, "orElse needs two transactions, not %s and %s", value_type_name(args[0]), value_type_name(args[1]));
    return PRIM_ERROR;
  }
  return prim_enter(vm, thread, vm->or_else_closure, args);
}

/* catchSTM(act, h): act's result; or, if act throws, h(e) with act's
 * writes undone (stm's catchSTM: act runs as a nested transaction). A
 * retry is not caught: it goes on to orElse or atomically. */
PrimResult prim_catch_stm(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_enter(vm, thread, vm->catch_stm_closure, args);
}

PrimResult prim_register_delay(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  int64_t ns = AS_DURATION(args[0]);
  ObjTVar *tvar = obj_tvar(vm, BOOL_VAL(ns < 0));
  if (ns >= 0 && vm->explore) ns = explore_timer(vm, thread, &tvar->timer, TIMER_TVAR, ns);
  if (ns >= 0) sched_arm_tvar(vm, tvar, ns);
  return prim_return(thread, args, OBJ_VAL(tvar));
}

/* newTimeout(d) (io-sim's MonadTimerFancy): a new TVar holding
 * "TimeoutPending" that becomes "TimeoutFired" once d has passed, unless
 * cancelTimeout comes first; a negative d gives one already
 * "TimeoutCancelled", as io-sim's NegativeTimeout reads. */
PrimResult prim_new_timeout(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  int64_t ns = AS_DURATION(args[0]);
  ObjTVar *tvar = obj_tvar(vm, OBJ_VAL(vm->timeout_states[ns < 0 ? TIMER_STATE_CANCELLED : TIMER_STATE_PENDING]));
  tvar->timer.kind = TIMER_TVAR_STATE;
  if (ns >= 0 && vm->explore) ns = explore_timer(vm, thread, &tvar->timer, TIMER_TVAR_STATE, ns);
  if (ns >= 0) sched_arm_tvar(vm, tvar, ns);
  return prim_return(thread, args, OBJ_VAL(tvar));
}

/* cancelTimeout(t): the timer goes and t becomes "TimeoutCancelled" (even
 * after it fired, as io-sim's CancelTimeout writes it), waking its readers. */
PrimResult prim_cancel_timeout(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  ObjTVar *tvar = AS_TVAR(args[0]);
  if (tvar->timer.kind != TIMER_TVAR_STATE) {
    Buffer what;
    buf_init(&what);
    value_show_bounded(&what, args[0], false, 200);
    rt_error(vm, "cancelTimeout needs a TVar that newTimeout made, not %s", buf_text(&what));
    buf_free(&what);
    return PRIM_ERROR;
  }
  if (tvar->timer.set) {
    timer_heap_remove(&vm->timers, &tvar->timer);
    vm->stats.timers_cancelled++;
  }
  /* shown even when the prelude made the action: registerDelayCancellable's cancel is the caller's */
  (void)by_prelude;
  vm_event(vm, .kind = EV_TIMER_CANCELLED, .thread = thread, .value = args[0]);
  stm_write_now(vm, thread, tvar, OBJ_VAL(vm->timeout_states[TIMER_STATE_CANCELLED]));
  return prim_return_at_point(vm, thread, args, UNIT_VAL, &tvar->obj, true);
}

/* inspectTVar(tv): its value, read with no scheduling point and no event
 * (io-sim's inspectTVar, for checks that must not change the schedule). */
PrimResult prim_inspect_tvar(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)vm;
  (void)by_prelude;
  return prim_return(thread, args, AS_TVAR(args[0])->value);
}

/* writeTVarQuiet(tv, x): tv holds x from now on, written with no
 * scheduling point, no commit and no event (threads waiting on tv wake,
 * as after any write): for instrumentation, such as the stats module's
 * counters, that must not change the run it measures. */
PrimResult prim_write_tvar_quiet(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  stm_write_now(vm, thread, AS_TVAR(args[0]), args[1]);
  return prim_return(thread, args, UNIT_VAL);
}

/* ---- the atomically prototype: slot 0 the transaction, slot 1 its
 * result, slot 2 the traceTVar calls due after the commit ---- */

PrimResult op_tx_begin(VM *vm, ObjThread *thread, CallFrame *frame) {
  (void)frame;
  stm_begin(vm, thread);
  return PRIM_NEXT;
}

/* The writes stand; push the traceTVar calls they make due. With none due
 * (the common case), TX_TRACE's work is done here: skip to the RETURN and
 * yield. */
PrimResult op_tx_commit(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value traces = vm->stm.undo_count ? stm_traced_writes(vm, thread) : NIL_VAL; /* a read-only one traces nothing */
  if (IS_NIL(traces)) {
    stm_commit(vm, thread, frame->closure->proto->prelude);
    frame->ip += 4; /* over TX_TRACE, CALL 2, TX_TRACED */
    return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
  }
  *thread->sp++ = traces;
  stm_commit(vm, thread, frame->closure->proto->prelude);
  return PRIM_NEXT;
}

/* Set up the next traceTVar call (then CALL 2 and TX_TRACED), or, when none
 * is left, yield: io-sim's fairness rule, every commit yields, behind the
 * threads it woke and then the rest of the run queue; RETURN follows. */
PrimResult op_tx_trace(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value due = frame->slots[2];
  if (IS_NIL(due)) {
    thread->sp = frame->slots + 2;
    frame->ip += 3; /* over CALL 2, TX_TRACED */
    return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
  }
  Value entry = AS_CONS(due)->head;
  frame->slots[2] = cons_tail(AS_CONS(due));
  /* [f, old, new, tvar] (stm.c) */
  ObjCons *cell = AS_CONS(entry);
  Value f = cell->head, old = cell->tail->head, now_value = cell->tail->tail->head;
  Value tvar = cell->tail->tail->tail->head;
  *thread->sp++ = tvar;
  *thread->sp++ = f;
  *thread->sp++ = old;
  *thread->sp++ = now_value;
  return PRIM_NEXT;
}

/* Trace what the traceTVar function returned, and go back to TX_TRACE. */
PrimResult op_tx_traced(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value text = thread->sp[-1], tvar = thread->sp[-2];
  if (IS_RUNNABLE(text)) {
    Buffer name;
    buf_init(&name);
    value_show(&name, tvar, false);
    rt_error(vm, "traceTVar's function for %s gave an action: it must compute a string from (old, new), "
             "as fn(old, new) => show(old) ++ \" -> \" ++ show(new)", buf_text(&name));
    buf_free(&name);
    return PRIM_ERROR;
  }
  if (vm->sink_count) {
    Buffer shown;
    buf_init(&shown);
    value_show(&shown, text, false);
    vm_event(vm, .kind = EV_TRACE_TVAR, .thread = thread, .value = tvar, .text = buf_text(&shown), .length = shown.length);
    buf_free(&shown);
  } else {
    vm->stats.events++;
  }
  thread->sp -= 2;
  frame->ip -= 4; /* back to TX_TRACE */
  return PRIM_NEXT;
}

/* The handler: roll back; on retry, block on the read set and run the
 * transaction again when woken; anything else goes on unwinding. */
PrimResult op_tx_abort(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value exc = thread->sp[-1];
  stm_rollback(vm, 0);
  if (!(IS_EXCEPTION(exc) && AS_EXCEPTION(exc)->kind == EXC_RETRY) || !thread->in_transaction) {
    stm_end(vm, thread);
    return PRIM_RAISE;
  }
  thread->sp = frame->slots + 1;
  frame->ip = frame->closure->proto->chunk.code;
  /* waiting is an interruptible point (the handler then sees the exception) */
  thread->in_transaction = false;
  if (thread->pending_count && thread->mask != MASK_UNINTERRUPTIBLE) {
    *thread->sp++ = sched_take_pending(vm, thread);
    return PRIM_RAISE;
  }
  thread->in_transaction = true;
  if (stm_retry_alone(vm, thread)) return PRIM_NEXT;
  stm_block(vm, thread);
  return PRIM_SWITCH;
}

/* ---- the orElse prototype: slots 0 and 1 the branches, slot 2 the undo
 * log's mark ---- */

PrimResult op_tx_mark(VM *vm, ObjThread *thread, CallFrame *frame) {
  (void)frame;
  *thread->sp++ = INT_VAL(stm_undo_mark(vm));
  return PRIM_NEXT;
}

/* The handler: on retry, undo the left branch's writes and go on to the
 * right; anything else goes on unwinding. */
PrimResult op_or_else_catch(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value exc = thread->sp[-1];
  if (!(IS_EXCEPTION(exc) && AS_EXCEPTION(exc)->kind == EXC_RETRY)) return PRIM_RAISE;
  stm_rollback(vm, (int)AS_INT(frame->slots[2]));
  thread->sp--;
  return PRIM_NEXT;
}

/* ---- the catchSTM prototype: slots 0 and 1 the action and handler, slot
 * 2 the undo log's mark ---- */

/* The handler: a retry goes on unwinding; anything else undoes the
 * action's writes and stays in slot 3 for the handler's call. */
PrimResult op_catch_stm(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value exc = thread->sp[-1];
  if (IS_EXCEPTION(exc) && AS_EXCEPTION(exc)->kind == EXC_RETRY) return PRIM_RAISE;
  stm_rollback(vm, (int)AS_INT(frame->slots[2]));
  vm_event(vm, .kind = EV_CAUGHT, .thread = thread, .value = exc);
  return PRIM_NEXT;
}
