/* Primitives of time and threads: delay, say, fork, forkAsync, now,
 * myThreadId, labelThread, kill, throwTo, yield, timeout, random and
 * randomFloat, and the instructions of the timeout and forkAsync
 * prototypes (see prim.h). */
#include <inttypes.h>
#include <string.h>

#include "prim.h"
#include "random.h"
#include "sched.h"
#include "stm.h"

PrimResult prim_delay(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  int64_t ns = AS_DURATION(args[0]);
  /* a negative delay returns at once, without blocking or yielding (io-sim) */
  PrimResult result;
  if (ns >= 0 && prim_interrupted(vm, thread, args, &result)) return result;
  args[0] = UNIT_VAL;
  thread->sp = args + 1;
  if (ns >= 0 && vm->explore) ns = explore_timer(vm, thread, &thread->delay_timer, TIMER_DELAY, ns);
  vm_event(vm, .kind = EV_DELAY, .thread = thread, .ns = ns);
  if (ns < 0) return PRIM_NEXT;
  sched_delay(vm, thread, ns);
  return PRIM_SWITCH;
}

bool prim_emit_say(VM *vm, ObjThread *thread, Value what) {
  if (!vm->config.write_say && !vm->sink_count) { /* nothing is printed: nothing is shown */
    vm->stats.events++;
    return true;
  }
  /* the line goes into the VM's output buffer (vm_flush_output) */
  Buffer *out = &vm->out;
  size_t start = out->length;
  if (IS_STRING(what)) { /* show's own text */
    buf_append_line(out, AS_CSTRING(what), (size_t)AS_STRING(what)->length);
  } else {
    if (!value_show_vm(vm, out, what, false)) { /* a shared structure too big to show: the run stops */
      buf_truncate(out, start);
      return false;
    }
    buf_append(out, "\n", 1);
  }
  size_t length = out->length - start - 1;
  vm_work(vm, length);
  /* a sink that writes flushes the buffer first: the line is whole by then */
  vm_event(vm, .kind = EV_SAY, .thread = thread, .value = what, .text = out->data + start, .length = length);
  if (!vm->config.write_say) buf_truncate(out, 0); /* for the sinks only: it held just this line */
  else if (out->length >= vm->config.say_block) vm_flush_output(vm);
  return true;
}

PrimResult prim_say(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  if (IS_RUNNABLE(args[0])) {
    rt_error(vm, "say got an action, not its result: run it first (`x <- act`, then say(show(x)))");
    return PRIM_ERROR;
  }
  if (!prim_emit_say(vm, thread, args[0])) return PRIM_ERROR; /* vm->halted: the run stops */
  return prim_return_at_point(vm, thread, args, UNIT_VAL, NULL, false);
}

/* traceEvent(x): x in the trace as a `trace` event, shown (io-sim's
 * traceM: a value for the trace, where say is text for the output). */
PrimResult prim_trace_event(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  if (IS_RUNNABLE(args[0])) {
    rt_error(vm, "traceEvent got an action, not its result: run it first (`x <- act`, then traceEvent(x))");
    return PRIM_ERROR;
  }
  vm_event(vm, .kind = EV_USER, .thread = thread, .internal = by_prelude, .value = args[0]);
  return prim_return_at_point(vm, thread, args, UNIT_VAL, NULL, false);
}

/* traceNet(link, msg, what): a `net` event, "a -> b MSG: what" (the net
 * module's send, delivery and loss of a message). Shown even though the
 * library calls it: the message's fate is the model's story. */
PrimResult prim_trace_net(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjString *link = AS_STRING(args[0]);
  vm_event(vm, .kind = EV_NET, .thread = thread, .text = link->chars, .length = (size_t)link->length, .value = args[1],
           .datum = args[2]);
  return prim_return(thread, args, UNIT_VAL);
}

/* statsOutput(x): x, rendered as JSON now (so a value JSON cannot hold is
 * an error where it is handed over), replaces what the run handed over
 * before; the host writes the last one after the run (--stats-json). */
PrimResult prim_stats_output(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  Buffer json;
  buf_init(&json);
  Value bad = UNIT_VAL;
  if (!value_json(&json, args[0], &bad)) {
    buf_free(&json);
    Buffer text;
    buf_init(&text);
    value_show_line(&text, bad, true, 200);
    rt_error(vm, "statsOutput cannot write %s as JSON: only records, lists, numbers, durations, strings, bools and "
                 "none (nested at most %d deep)", buf_text(&text), JSON_MAX_DEPTH);
    buf_free(&text);
    return PRIM_ERROR;
  }
  vm_work(vm, json.length);
  buf_truncate(&vm->stats_json, 0);
  buf_append(&vm->stats_json, json.data, json.length);
  buf_free(&json);
  return prim_return_at_point(vm, thread, args, UNIT_VAL, NULL, false);
}

void prim_thread_limit(VM *vm) {
  vm_report(vm, "simvm: thread limit reached: %d threads alive (--max-threads)\n", vm->live_threads);
  vm->halt_status = SIM_LIMIT;
}

PrimResult prim_fork(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjThread *child = prim_fork_child(vm, thread, args[0], false);
  if (!child) return PRIM_STOP;
  return prim_return_at_point(vm, thread, args, OBJ_VAL(child), NULL, false);
}

/* forkQuiet(act): fork, the child's events (and its children's, and its
 * fork and labels) internal: a library's helper thread, such as the net
 * module's carrier of one message, which --trace leaves out. */
PrimResult prim_fork_quiet(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjThread *child = prim_fork_child(vm, thread, args[0], true);
  if (!child) return PRIM_STOP;
  return prim_return_at_point(vm, thread, args, OBJ_VAL(child), NULL, false);
}

/* ---- forkAsync: an async, made and run in the VM's own prototypes. Each
 * step does what the prelude's code did (withMaskingState, atomically,
 * fork, labelTVar, catch), with the same events and scheduling points, and
 * builds no action, closure or string on the way. ---- */

/* forkAsync's slots: the arguments, then what the steps push. */
enum { ASYNC_OUTER, ASYNC_ACT, ASYNC_SAVED_MASK, ASYNC_VAR_SLOT, ASYNC_THREAD };

/* forkAsync(outer, act): the making runs masked, as
 * withMaskingState(maskedState(state), ...) would: slot 2 keeps the state
 * to restore. */
PrimResult prim_fork_async(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  PrimResult result = prim_enter(vm, thread, by_prelude ? vm->prelude_async : vm->async_closure, args);
  if (result == PRIM_NEXT) {
    *thread->sp++ = INT_VAL(thread->mask);
    prim_set_mask(vm, thread, thread->mask == MASK_NONE ? MASK_INTERRUPTIBLE : thread->mask, by_prelude);
  }
  return result;
}

/* atomically(newTVar(none)) as the prelude ran it, with the label its bind
 * gave (`var`): the transaction commits, writing nothing, and the commit
 * yields. */
PrimResult op_async_var(VM *vm, ObjThread *thread, CallFrame *frame) {
  stm_begin(vm, thread);
  ObjTVar *var = obj_tvar(vm, NONE_VAL);
  var->label = vm->async_names[ASYNC_NAME_VAR];
  *thread->sp++ = OBJ_VAL(var);
  stm_commit(vm, thread, frame->closure->proto->prelude);
  return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
}

/* fork(asyncThread(outer, act, var)): the thread runs the suspended call
 * of the VM's asyncThread prototype; the fork is a scheduling point. */
PrimResult op_async_fork(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value *slots = frame->slots; /* they keep the call's values rooted while it is made */
  Value call[4] = {OBJ_VAL(vm->async_thread_closure), slots[ASYNC_OUTER], slots[ASYNC_ACT], slots[ASYNC_VAR_SLOT]};
  ObjAction *body = obj_action(vm, ACTION_CALL, 4, call);
  *thread->sp++ = OBJ_VAL(body); /* rooted while the thread is made */
  ObjThread *child = prim_fork_child(vm, thread, OBJ_VAL(body), false);
  if (!child) return PRIM_STOP;
  thread->sp[-1] = OBJ_VAL(child);
  return vm->explore && explore_point(vm, thread, NULL, false) ? PRIM_SWITCH : PRIM_NEXT;
}

/* A record of two fields named by async_names. */
static ObjRecord *async_record(VM *vm, int first, Value a, int second, Value b) {
  ObjRecord *record = obj_record(vm, 2);
  record->fields[0] = (Field){vm->async_names[first], a};
  record->fields[1] = (Field){vm->async_names[second], b};
  return record;
}

/* The masking state restored (an exception that waited for the thread to
 * unmask is raised now, as withMaskingState's end raises it), then
 * atomically(labelTVar(var, "async " ++ show(t))) and #{thread: t, result:
 * var}. io-sim's async (IOSim's MonadAsync instance, io-sim
 * Control/Monad/IOSim/Types.hs) forks inside mask, then labels the result
 * with labelTMVarIO, a transaction of its own (io-classes' default,
 * atomically . labelTMVar), and every commit puts the thread behind the
 * run queue (io-sim's Internal.hs: deschedule Yield after
 * StmTxCommitted): so the child, queued at the fork, runs before async
 * returns. The label is the thread's: show() spells it out, so most asyncs
 * never format it. */
PrimResult op_async_done(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value var = frame->slots[ASYNC_VAR_SLOT], child = frame->slots[ASYNC_THREAD];
  bool internal = frame->closure->proto->prelude;
  ObjRecord *record = async_record(vm, ASYNC_NAME_THREAD, child, ASYNC_NAME_RESULT, var);
  *thread->sp++ = OBJ_VAL(record);
  prim_set_mask(vm, thread, (MaskState)AS_INT(frame->slots[ASYNC_SAVED_MASK]), internal);
  if (thread->mask == MASK_NONE && thread->pending_count) {
    *thread->sp++ = sched_take_pending(vm, thread);
    return PRIM_RAISE;
  }
  stm_begin(vm, thread);
  AS_TVAR(var)->label = NULL;
  AS_TVAR(var)->async_thread = AS_THREAD(child);
  stm_commit(vm, thread, internal);
  return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
}

/* The async's thread (vm.c's make_async_thread): slots 1 to 3 hold outer,
 * act and the TVar; what act returned (or the exception it raised) is on
 * top. The outcome records are try's. */
enum { THREAD_VAR = 3 };
PrimResult op_async_ok(VM *vm, ObjThread *thread, CallFrame *frame) {
  (void)frame;
  ObjRecord *record = async_record(vm, ASYNC_NAME_OK, BOOL_VAL(true), ASYNC_NAME_VALUE, thread->sp[-1]);
  thread->sp[-1] = OBJ_VAL(record);
  return PRIM_NEXT;
}

/* The handler's part of tryFailed(e): push return(#{ok: false, exception: e})
 * for the withMaskingState that follows. Below it: e, then the masking
 * state CATCH_HANDLER pushed. */
PrimResult op_async_failed(VM *vm, ObjThread *thread, CallFrame *frame) {
  ObjRecord *record = async_record(vm, ASYNC_NAME_OK, BOOL_VAL(false), ASYNC_NAME_EXCEPTION, thread->sp[-2]);
  *thread->sp++ = OBJ_VAL(record); /* rooted while the action is made */
  ObjAction *action = obj_action(vm, BUILTIN_pure, 1, thread->sp - 1);
  action->prelude = frame->closure->proto->prelude;
  thread->sp[-1] = OBJ_VAL(action);
  return PRIM_NEXT;
}

/* atomically(writeTVar(var, some(outcome))) as the prelude ran it: the
 * commit wakes the waiters, then yields. A TVar with a traceTVar function
 * (its calls run as VM code) or an exception pending (the transaction's
 * bind would look at it) takes that way itself: the action, and
 * atomically's prototype. */
PrimResult op_async_write(VM *vm, ObjThread *thread, CallFrame *frame) {
  ObjTVar *var = AS_TVAR(frame->slots[THREAD_VAR]);
  ObjSome *outcome = obj_some(vm, thread->sp[-1]);
  thread->sp[-1] = OBJ_VAL(outcome);
  bool internal = frame->closure->proto->prelude;
  if (!IS_UNIT(var->trace_fn) || thread->pending_count) {
    Value write[2] = {OBJ_VAL(var), OBJ_VAL(outcome)}; /* both rooted: the TVar in its slot, the outcome on top */
    ObjAction *action = obj_action(vm, BUILTIN_writeTVar, 2, write);
    action->prelude = internal;
    thread->sp[-1] = OBJ_VAL(action);
    return prim_atomically(vm, thread, thread->sp - 1, internal);
  }
  stm_begin(vm, thread);
  stm_write(vm, var, OBJ_VAL(outcome));
  thread->sp[-1] = UNIT_VAL;
  stm_commit(vm, thread, internal);
  return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
}

/* random(n): an int in [0, n) from the thread's own stream (vm/random.h),
 * so a thread's numbers do not depend on the schedule. */
PrimResult prim_random(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  Value n = args[0];
  if (!IS_INT(n)) {
    rt_error(vm, "random needs an int bound, not %s", value_type_name(n));
    return PRIM_ERROR;
  }
  if (AS_INT(n) < 1) {
    rt_error(vm, "random needs a bound of at least 1, not %" PRId64, AS_INT(n));
    return PRIM_ERROR;
  }
  int64_t value = (int64_t)splitmix64_below(thread_rng(thread), (uint64_t)AS_INT(n));
  if (vm->explore) value = explore_random(vm, thread, AS_INT(n), value); /* a choice (vm/choice.h) */
  return prim_return(thread, args, INT_VAL(value));
}

/* randomFloat(): a float in [0, 1) from the thread's own stream. */
PrimResult prim_random_float(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  double value = splitmix64_float(thread_rng(thread));
  if (vm->explore) value = explore_float(vm, thread, value);
  return prim_return(thread, args, FLOAT_VAL(value));
}

/* randomDuration(lo, hi): a duration in [lo, hi], whole nanoseconds, from
 * the thread's own stream; under exploration a choice shrunk towards lo. */
PrimResult prim_random_duration(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  int64_t lo = AS_DURATION(args[0]), hi = AS_DURATION(args[1]);
  if (lo < 0 || hi < lo) {
    Buffer a, b;
    buf_init(&a);
    buf_init(&b);
    duration_show(&a, lo);
    duration_show(&b, hi);
    rt_error(vm, "randomDuration needs 0 <= lo <= hi, not %s and %s", a.data, b.data);
    buf_free(&a);
    buf_free(&b);
    return PRIM_ERROR;
  }
  int64_t value = lo + (int64_t)splitmix64_below(thread_rng(thread), (uint64_t)(hi - lo) + 1);
  if (vm->explore) value = explore_span(vm, thread, lo, hi, value);
  return prim_return(thread, args, DURATION_VAL(value));
}

/* The longest fault name: it goes into schedule files and reports. */
#define FAULT_NAME_MAX 100

/* fault(name, p): false in a plain run; under exploration a choice, true
 * with probability p when the explorer chooses randomly (FoundationDB's
 * BUGGIFY). Not a scheduling point. */
PrimResult prim_fault(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  Value name = args[0], p = args[1];
  if (!IS_STRING(name)) {
    rt_error(vm, "fault needs a name string, not %s", value_type_name(name));
    return PRIM_ERROR;
  }
  const ObjString *s = AS_STRING(name);
  bool plain = s->length > 0 && s->length <= FAULT_NAME_MAX;
  for (int i = 0; i < s->length && plain; i++) plain = s->chars[i] >= 0x20 && s->chars[i] < 0x7f && s->chars[i] != '"';
  if (!plain) {
    rt_error(vm, "fault needs a name of 1 to %d printable ASCII characters without '\"'", FAULT_NAME_MAX);
    return PRIM_ERROR;
  }
  double chance = IS_INT(p) ? (double)AS_INT(p) : IS_FLOAT(p) ? AS_FLOAT(p) : -1;
  if (!(IS_INT(p) || IS_FLOAT(p)) || !(chance >= 0 && chance <= 1)) {
    Buffer shown;
    buf_init(&shown);
    value_show_line(&shown, p, true, 40);
    rt_error(vm, "fault needs a probability from 0 to 1, not %s", buf_text(&shown));
    buf_free(&shown);
    return PRIM_ERROR;
  }
  bool fired = vm->explore && explore_fault(vm, thread, obj_string_cstring(vm, &args[0]), chance);
  return prim_return(thread, args, BOOL_VAL(fired));
}

PrimResult prim_now(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_return(thread, args, DURATION_VAL(vm->now));
}

PrimResult prim_my_thread_id(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)vm;
  (void)by_prelude;
  return prim_return(thread, args, OBJ_VAL(thread));
}

PrimResult prim_label_thread(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  ObjThread *target = AS_THREAD(args[0]);
  ObjString *label = AS_STRING(args[1]);
  target->label = label;
  vm_event(vm, .kind = EV_LABEL, .thread = thread, .other = target, .value = OBJ_VAL(label));
  return prim_return(thread, args, UNIT_VAL);
}

PrimResult prim_kill(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  /* kill(t) is throwTo(t, ThreadKilled); a thread asleep in delay, the
   * common case, without prim_throw_to's general cases */
  ObjThread *target = AS_THREAD(args[0]);
  if (prim_kill_sleeper(vm, thread, target)) return prim_return(thread, args, UNIT_VAL);
  return prim_throw_to(vm, thread, args, target, OBJ_VAL(vm->thread_killed), true);
}

PrimResult prim_throw_to_thread(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_throw_to(vm, thread, args, AS_THREAD(args[0]), args[1], false);
}

PrimResult prim_yield(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  args[0] = UNIT_VAL;
  thread->sp = args + 1;
  vm_event(vm, .kind = EV_YIELD, .thread = thread);
  return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
}

PrimResult prim_timeout(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_enter(vm, thread, vm->timeout_closure, args);
}

/* timeout(d, act)'s prototype: slots 0 and 1 hold d and act, slot 2 the
 * armed timeout. Arming a timeout yields, as io-sim's StartTimeout does:
 * the action runs when the thread's turn comes again. */
PrimResult op_timeout_arm(VM *vm, ObjThread *thread, CallFrame *frame) {
  int64_t limit = AS_DURATION(frame->slots[0]);
  if (limit < 0) {
    *thread->sp++ = UNIT_VAL; /* no limit: run the action plainly */
    return PRIM_NEXT;
  }
  if (limit == 0) {
    *thread->sp++ = UNIT_VAL;
    vm_event(vm, .kind = EV_TIMEOUT_NOW, .thread = thread);
    /* return none at once: what RETURN would do */
    thread->sp = frame->slots;
    thread->frame_count--;
    *thread->sp++ = NONE_VAL;
    return PRIM_NEXT;
  }
  ObjTimeout *timeout = obj_timeout(vm, thread);
  if (vm->explore) limit = explore_timer(vm, thread, &timeout->timer, TIMER_TIMEOUT, limit);
  sched_arm_timeout(vm, timeout, limit);
  *thread->sp++ = OBJ_VAL(timeout);
  vm_event(vm, .kind = EV_TIMEOUT, .thread = thread, .ns = limit);
  return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
}

/* The action finished in time: cancel the timer, wrap the result in some. */
PrimResult op_timeout_disarm(VM *vm, ObjThread *thread, CallFrame *frame) {
  if (IS_TIMEOUT(frame->slots[2])) sched_disarm_timeout(vm, AS_TIMEOUT(frame->slots[2]));
  ObjSome *some = obj_some(vm, thread->sp[-1]);
  thread->sp[-1] = OBJ_VAL(some);
  return PRIM_NEXT;
}

bool prim_timeout_caught_at_once(VM *vm, ObjThread *thread, Value interrupt) {
  CallFrame *frame = &thread->frames[thread->frame_count - 1];
  const ObjProto *proto = frame->closure->proto;
  if (frame->closure != vm->timeout_closure || frame->ip > proto->chunk.code + proto->handler) return false;
  if (!IS_TIMEOUT(frame->slots[2]) || AS_TIMEOUT(frame->slots[2]) != AS_TIMEOUT(interrupt)) return false;
  thread->sp = frame->slots; /* what op_timeout_catch does with its own interrupt */
  thread->frame_count--;
  *thread->sp++ = NONE_VAL;
  return true;
}

/* The handler: our own timeout's interrupt means none; anything else
 * cancels the timer and goes on unwinding. */
PrimResult op_timeout_catch(VM *vm, ObjThread *thread, CallFrame *frame) {
  Value exc = thread->sp[-1];
  if (IS_TIMEOUT(frame->slots[2])) {
    ObjTimeout *timeout = AS_TIMEOUT(frame->slots[2]);
    if (IS_TIMEOUT(exc) && AS_TIMEOUT(exc) == timeout) {
      thread->sp = frame->slots;
      thread->frame_count--;
      *thread->sp++ = NONE_VAL;
      return PRIM_NEXT;
    }
    sched_disarm_timeout(vm, timeout);
  }
  return PRIM_RAISE;
}

/* ---- waitAsync: wait's transaction, atomically(waitSTM(a)) ---- */

/* Whether global i is the prelude's own waitSTM: an action function of one
 * parameter, by that name, from the prelude (a script may define another). */
static bool is_prelude_wait_stm(VM *vm, int i) {
  Value f = vm->globals.values[i];
  if (vm->global_info[i].name != vm->async_names[ASYNC_NAME_WAIT_STM] || !IS_CLOSURE(f)) return false;
  const ObjProto *proto = AS_CLOSURE(f)->proto;
  return proto->prelude && proto->kind == PROTO_ACTION_FN && proto->arity == 1;
}

/* The prelude's waitSTM, or UNDEFINED_VAL; its slot is kept, and looked
 * for again when it no longer holds it (a VM that loads other code). */
static Value prelude_wait_stm(VM *vm) {
  int i = vm->wait_stm_global;
  if (i < 0 || i >= vm->globals.count || !is_prelude_wait_stm(vm, i))
    for (i = 0; i < vm->globals.count && !is_prelude_wait_stm(vm, i); i++) {}
  if (i >= vm->globals.count) return UNDEFINED_VAL;
  vm->wait_stm_global = i;
  return vm->globals.values[i];
}

/* The field `name` of a record, or false (not a record, or no such field). */
static bool record_get(Value record, ObjString *name, Value *out) {
  return IS_RECORD(record) && record_field_value(AS_RECORD(record), name, out);
}

/* An async's TVar when it holds its outcome and the outcome is a value:
 * waitSTM(a) would commit at once, reading only that TVar. */
static ObjTVar *finished_async(VM *vm, Value a, Value *value) {
  Value var, outcome, ok;
  if (!record_get(a, vm->async_names[ASYNC_NAME_RESULT], &var) || !IS_TVAR(var)) return NULL;
  Value held = AS_TVAR(var)->value;
  if (!IS_SOME(held)) return NULL;
  outcome = AS_SOME(held)->value;
  if (!record_get(outcome, vm->async_names[ASYNC_NAME_OK], &ok) || !IS_BOOL(ok) || !AS_BOOL(ok)) return NULL;
  if (!record_get(outcome, vm->async_names[ASYNC_NAME_VALUE], value)) return NULL;
  return AS_TVAR(var);
}

/* waitAsync(a): atomically(waitSTM(a)), the prelude's transaction. When the
 * async has finished with a value, the transaction runs here as atomically
 * would run it: begin, read the TVar, commit (nothing written: no one
 * wakes), yield, with the same events and scheduling points. Otherwise (not
 * finished, failed, not an async, inside a transaction, an exception
 * pending) the prelude's waitSTM runs under atomically, to block, throw or
 * report as it does. */
PrimResult prim_wait_async(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude; /* the transaction is the prelude's, whoever waits */
  Value value;
  ObjTVar *var = thread->in_transaction || thread->pending_count ? NULL : finished_async(vm, args[0], &value);
  if (var) {
    stm_begin(vm, thread);
    stm_read(vm, var);
    stm_commit(vm, thread, true);
    prim_return(thread, args, value);
    return sched_yield_thread(vm, thread) ? PRIM_SWITCH : PRIM_NEXT;
  }
  Value call[2] = {prelude_wait_stm(vm), args[0]};
  if (IS_UNDEFINED(call[0])) {
    rt_error(vm, "waitAsync needs the prelude's waitSTM (the program was compiled without the prelude)");
    return PRIM_ERROR;
  }
  args[0] = OBJ_VAL(obj_action(vm, ACTION_CALL, 2, call)); /* a is rooted in args[0] while it is made */
  return prim_atomically(vm, thread, args, true);
}
