/* Primitives: the bodies of the action builtins, out of the dispatch loop.
 *
 * Each action builtin of vm/builtins.def names a PrimFn. The loop runs one
 * (a PRIM instruction, or the bind of an action value) with its arguments
 * on the thread's stack, after storing ip; the table's entry checks them
 * against the builtin's argument types and transaction rule first (code
 * generated from builtins.def, in vm/builtins.c). Afterwards the loop
 * reloads the whole frame, whatever the function did (so a function may
 * push or pop frames, grow the stack or collect). A PrimFn replaces its
 * arguments by its result and tells the loop what happened:
 *
 *   PRIM_NEXT    go on with the thread as it stands: its stack ends with the
 *                result, or a frame was pushed (one of the VM's own
 *                prototypes) or popped
 *   PRIM_SWITCH  the thread blocked, yielded or ended: run the next thread
 *   PRIM_RAISE   raise the value on top of the thread's stack
 *   PRIM_ERROR   a runtime error (rt_error was called): raise it
 *   PRIM_STOP    the run ends now with vm->halt_status (a limit)
 *
 * The VM's own instructions that do the primitives' work in their frames
 * (TIMEOUT_ARM, TX_COMMIT, MASK_POP ...) are VmOpFns with the same results:
 * they read the frame's slots, push or pop on the thread's stack, and may
 * move the frame's ip. Files: prim.c (checks, shared helpers), prim_thread.c
 * (time, threads, timeouts), prim_exc.c (exceptions, masking), prim_mvar.c,
 * prim_stm.c, prim_loop.c (the prelude's loops replicateMOnto and
 * traverse_, run in prototypes of the VM's own). */
#ifndef SIMVM_PRIM_H
#define SIMVM_PRIM_H

#include "explore.h"
#include "show.h"
#include "builtins.h"
#include "events.h"
#include "sched.h"
#include "state.h"

typedef enum { PRIM_NEXT, PRIM_SWITCH, PRIM_RAISE, PRIM_ERROR, PRIM_STOP } PrimResult;

/* Run a primitive on its `args` (thread->sp - arity .. thread->sp - 1, room
 * for the result guaranteed). `by_prelude`: called by the prelude's code
 * (directly, or by binding an action value the prelude built), so its trace
 * events are internal (hidden from --trace=user). */
typedef PrimResult (*PrimFn)(VM *vm, ObjThread *thread, Value *args, bool by_prelude);

/* One of the VM's own instructions, run in `frame` (the thread's top). */
typedef PrimResult (*VmOpFn)(VM *vm, ObjThread *thread, CallFrame *frame);

/* The argument types of builtins.def: a check and the phrase of its error,
 * "NAME needs PHRASE, not TYPE". ANY: the function checks for itself. */
#define ARG_TYPES(X)                                                             \
  X(ANY, true, "")                                                                 \
  X(DURATION, IS_DURATION(v), "a duration")                                       \
  X(DELAY, IS_DURATION(v), "a duration")  /* an int gets a hint: "write 5us" */   \
  X(THREAD, IS_THREAD(v), "a thread id")                                          \
  X(LABEL, IS_STRING(v), "a string label")                                        \
  X(MVAR, IS_MVAR(v), "an MVar")                                                  \
  X(TVAR, IS_TVAR(v), "a TVar")                                                   \
  X(ACTION, IS_RUNNABLE(v), "an action")                                          \
  X(RUNNABLE, IS_RUNNABLE(v), "an action to run")                                 \
  X(HANDLER, IS_FUNCTION_CLOSURE(v) || IS_BUILTIN(v), "a handler function")        \
  X(LIST, IS_LIST(v), "a list")                                                   \
  X(TAIL_LIST, IS_LIST(v), "a list as its second argument")                       \
  X(INDEX, IS_INT(v), "an int index")                                             \
  X(COUNT, IS_INT(v), "an int count")                                             \
  X(RECORD, IS_RECORD(v), "a record")                                             \
  X(FIELD_NAME, IS_STRING(v), "a field name string")                              \
  X(SEPARATOR, IS_STRING(v), "a separator string")                                \
  X(STRINGS, IS_LIST(v), "a list of strings")                                     \
  X(STRING, IS_STRING(v), "a string")

typedef enum {
#define ARG_ENUM(name, check, phrase) ARG_##name,
  ARG_TYPES(ARG_ENUM)
#undef ARG_ENUM
} ArgType;

/* Where an action may run: anywhere, or only outside or inside a transaction. */
typedef enum { TX_ANYWHERE, TX_OUTSIDE, TX_INSIDE } TxRule;

/* A value a thread can run: a block closure or an action value. */
#define IS_RUNNABLE(v) (IS_BLOCK_CLOSURE(v) || IS_ACTION(v))

/* Finish with `result` in place of the arguments. */
static inline PrimResult prim_return(ObjThread *thread, Value *args, Value result) {
  args[0] = result;
  thread->sp = args + 1;
  return PRIM_NEXT;
}

/* prim_return at a scheduling point, just after an effect on `object`
 * (NULL: none; `write`: it changed): under schedule exploration another
 * thread may run now (PRIM_SWITCH; vm/explore.h). */
static inline PrimResult prim_return_at_point(VM *vm, ObjThread *thread, Value *args, Value result, Obj *object,
                                              bool write) {
  prim_return(thread, args, result);
  return vm->explore && explore_point(vm, thread, object, write) ? PRIM_SWITCH : PRIM_NEXT;
}

/* Raise `exc` in the thread (the stack holds one placeholder for it). */
static inline PrimResult prim_raise(ObjThread *thread, Value *args, Value exc) {
  args[0] = exc;
  thread->sp = args + 1;
  return PRIM_RAISE;
}

/* prim_enter when the frame or the prototype's stack does not fit: grow
 * the thread's stacks first (PRIM_ERROR when they would overflow). */
PrimResult prim_enter_growing(VM *vm, ObjThread *thread, ObjClosure *closure, Value *slots);

/* Run one of the VM's own prototypes with its slots starting at `slots`
 * (its arguments, already on the stack): PRIM_NEXT, or PRIM_ERROR when the
 * stack would overflow. Inline: every catch, mask and transaction enters
 * one, and the frame most often fits. */
static inline PrimResult prim_enter(VM *vm, ObjThread *thread, ObjClosure *closure, Value *slots) {
  const ObjProto *proto = closure->proto;
  if (__builtin_expect(thread->frame_count < thread->frame_capacity &&
                           thread->sp + proto->max_slots <= thread->stack + thread->stack_capacity,
                       1)) {
    thread->frames[thread->frame_count++] = (CallFrame){closure, proto->chunk.code, slots, -1};
    return PRIM_NEXT;
  }
  return prim_enter_growing(vm, thread, closure, slots);
}

/* A blocking operation is an interruptible point: with exceptions masked
 * interruptibly (or not at all), an exception waiting for this thread is
 * raised instead (true, and *result is PRIM_RAISE with args[0] set). */
bool prim_interrupted(VM *vm, ObjThread *thread, Value *args, PrimResult *result);

/* Block `thread` in throwTo until `target` takes `exc` (the wait is an
 * interruptible point), or deliver it at once; `kill`: it is kill(target)
 * (its trace event). */
PrimResult prim_throw_to(VM *vm, ObjThread *thread, Value *args, ObjThread *target, Value exc, bool kill);

/* kill(target)'s commonest case, for prim_kill and the loop's inline kill
 * (io-sim's forkIO benchmark kills threads asleep in delay): no sink to
 * hand the events to (they are only counted) and the target a plain
 * sleeper (sched_is_plain_sleeper), so no scheduling point either. True
 * when it did the kill; false, and nothing done, for the general case. */
static inline bool prim_kill_sleeper(VM *vm, ObjThread *thread, ObjThread *target) {
  if (vm->sink_count || !sched_is_plain_sleeper(vm, target)) return false;
  vm->stats.events++; /* its kill event, which no sink wants */
  sched_throw_to_sleeper(vm, thread, target, OBJ_VAL(vm->thread_killed));
  return true;
}

/* --max-threads is reached: report it, and stop the run (halt_status). */
void prim_thread_limit(VM *vm);

/* fork's work: a new thread running `action` (rooted by the caller, and
 * checked: a runnable value, outside a transaction), in `thread`'s masking
 * state, queued, its fork event traced; NULL when --max-threads stops the
 * run (reported, halt_status set: PRIM_STOP). For prim_fork, forkAsync and
 * the loop's inline fork: inline, so that a fork is one call, thread_new. */
static inline ObjThread *prim_fork_child(VM *vm, ObjThread *thread, Value action, bool quiet) {
  if (vm->live_threads >= vm_max_threads(vm)) {
    prim_thread_limit(vm);
    return NULL;
  }
  ObjThread *child = thread_new(vm, thread, action);
  vm->stats.forks++;
  child->mask = thread->mask; /* as forkIO: the child starts in the parent's masking state */
  child->quiet |= quiet;
  sched_enqueue(vm, child);
  vm_event(vm, .kind = EV_FORK, .thread = thread, .other = child);
  return child;
}

/* Say `what`: the line on write_say, the event in the trace. False when
 * showing it had to give up as the run must stop (vm->halted: --max-work,
 * --max-heap or a signal inside the show of a shared structure). */
bool prim_emit_say(VM *vm, ObjThread *thread, Value what);

/* Change the masking state, tracing real changes (`internal`: by the
 * prelude's code). */
void prim_set_mask(VM *vm, ObjThread *thread, MaskState mask, bool internal);

/* The primitives (vm/builtins.def names them) and the VM's own instructions. */
#define ACTION(name, where, args, fn, op) PrimResult fn(VM *vm, ObjThread *thread, Value *args_, bool by_prelude);
#define BUILTIN(name, args, fn)
#include "builtins.def"
#undef ACTION
#undef BUILTIN

PrimResult op_timeout_arm(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_timeout_disarm(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_timeout_catch(VM *vm, ObjThread *thread, CallFrame *frame);
/* A timeout's `interrupt` is raised in a thread whose innermost frame is
 * that timeout's own, in its action (timeout(d, delay(x))): unwinding
 * would stop there at once and TIMEOUT_CATCH return none. Do both and
 * return true (the caller counts the TIMEOUT_CATCH); else false. */
bool prim_timeout_caught_at_once(VM *vm, ObjThread *thread, Value interrupt);
PrimResult op_catch_handler(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_mask_pop(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_mask_unwind(VM *vm, ObjThread *thread, CallFrame *frame);
/* Always PRIM_NEXT, touching neither ip nor sp: the loop calls it in place. */
PrimResult op_tx_begin(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_tx_commit(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_tx_trace(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_tx_traced(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_tx_mark(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_or_else_catch(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_catch_stm(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_tx_abort(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_async_var(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_async_fork(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_async_done(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_async_ok(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_async_failed(VM *vm, ObjThread *thread, CallFrame *frame);
PrimResult op_async_write(VM *vm, ObjThread *thread, CallFrame *frame);

#endif
