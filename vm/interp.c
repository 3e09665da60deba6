/* The dispatch loop: the hot instructions inline, everything else called
 * out (value operations vm/ops.c, primitives vm/prim*.c, unwinding
 * vm/unwind.c). Computed goto where GCC/Clang allow it, a switch otherwise
 * (or when built with -DSIMVM_SWITCH_DISPATCH; the tests run both).
 *
 * ip, the frame and its slots are hoisted into locals. The discipline:
 * STORE_FRAME() writes ip back before anything that can switch threads,
 * grow a stack, raise or collect; LOAD_FRAME() reloads after anything that
 * can push or pop frames or move the stack. Every out-of-line primitive
 * and VM instruction is called with ip stored and is followed by a full
 * LOAD_FRAME(), whatever it did (see vm/prim.h). The stack pointer lives
 * in the thread (thread->sp), so the collector always sees the exact
 * stack. */
#include "interp.h"

#include <inttypes.h>
#include <string.h>

#include "builtins.h"
#include "ops.h"
#include "prim.h"
#include "sched.h"
#include "unwind.h"

#if defined(__GNUC__) && !defined(SIMVM_SWITCH_DISPATCH)
#define COMPUTED_GOTO 1
#endif

/* This file is compiled twice: plain, and with SIMVM_PROFILED (by
 * vm/interp_profiled.c) to count every instruction for the profiler. */
#ifdef SIMVM_PROFILED
#define INTERP_LOOP interp_loop_profiled
#define PROFILE_INSTRUCTION() profile_instruction(vm, thread, frame, op)

/* Count the instruction about to run, by opcode and by the frame's call path
 * (found on the frame's first instruction: frames below always have theirs). */
static inline void profile_instruction(VM *vm, ObjThread *thread, CallFrame *frame, uint8_t op) {
  Profile *profile = vm->profile;
  if (frame->profile_node < 0) {
    int below = thread->frame_count >= 2 ? thread->frames[thread->frame_count - 2].profile_node : -1;
    int parent = below >= 0 ? below : profile->threads[thread->profile_index].root;
    frame->profile_node = profile_child(profile, parent, frame->closure->proto);
    profile->nodes[frame->profile_node].calls++;
  }
  profile->nodes[frame->profile_node].self++;
  profile->op_counts[op]++;
}
#else
#define INTERP_LOOP interp_loop_plain
#define PROFILE_INSTRUCTION() ((void)0)
SimStatus interp_loop_profiled(VM *vm);
SimStatus interp_loop_plain(VM *vm);

SimStatus interp_run(VM *vm) { return vm->profile ? interp_loop_profiled(vm) : interp_loop_plain(vm); }
#endif

SimStatus INTERP_LOOP(VM *vm) {
  ObjThread *thread = NULL;
  CallFrame *frame = NULL;
  uint8_t *ip = NULL;
  Value *slots = NULL;
  Value *constants = NULL;
  uint8_t op;
  Value exc;
  SimStatus status = SIM_OK;
  const Builtin *builtin = NULL; /* the primitive prim_call runs ... */
  bool by_prelude = false;       /* ... and whether the prelude's code called it */
  PrimResult result;
  uint64_t steps = vm->steps;

#define READ_BYTE() (*ip++)
#define READ_U16() (ip += 2, (uint16_t)((ip[-2] << 8) | ip[-1]))
#define PUSH(v) (*thread->sp++ = (v))
#define POP() (*--thread->sp)
#define PEEK(n) (thread->sp[-1 - (n)])
#define STORE_FRAME() (frame->ip = ip)
#define LOAD_FRAME()                                           \
  do {                                                         \
    frame = &thread->frames[thread->frame_count - 1];          \
    ip = frame->ip;                                            \
    slots = frame->slots;                                      \
    constants = frame->closure->proto->chunk.constants.values; \
  } while (0)
#define RUNTIME_ERROR(...)     \
  do {                         \
    rt_error(vm, __VA_ARGS__); \
    goto runtime_error;        \
  } while (0)
#define CHECK(ok)                  \
  do {                             \
    if (!(ok)) goto runtime_error; \
  } while (0)
/* Run one of the VM's own instructions out of line (vm/prim.h). */
#define VM_OP(fn)                    \
  do {                               \
    STORE_FRAME();                   \
    result = fn(vm, thread, frame); \
    goto prim_done;                  \
  } while (0)
/* Push a frame for `closure` whose slots are the top `count` values of
 * the stack (stack overflow is a runtime error). */
#define PUSH_FRAME(closure, count, what)                                                           \
  do {                                                                                             \
    if (!thread_reserve(vm, thread, (closure)->proto->max_slots)) RUNTIME_ERROR("stack overflow"); \
    if (!thread_push_frame(vm, thread, (closure), thread->sp - (count)))                           \
      RUNTIME_ERROR("stack overflow (%d nested %s)", THREAD_MAX_FRAMES, what);                     \
    LOAD_FRAME();                                                                                  \
  } while (0)
/* The one check before every instruction: the instructions run against
 * stop_at, which vm_update_stop lowers for --max-steps and --max-work and
 * vm_stop (a signal handler, a trace cap, an output error) sets to 0. It
 * is read from memory each time, so a stop is seen at the next
 * instruction; no other per-instruction test is needed. */
#define STEP_CHECK() __builtin_expect(steps++ >= atomic_load_explicit(&vm->stop_at, memory_order_relaxed), 0)

#ifdef COMPUTED_GOTO
  static void *const dispatch_table[OP_COUNT] = {
#define OPCODE(name, operand, pops, effect, where, doc) [OP_##name] = &&op_##name,
#include "opcodes.def"
#undef OPCODE
  };
#define CASE(name) op_##name
#define DISPATCH()                             \
  do {                                         \
    if (STEP_CHECK()) goto step_limit_reached; \
    op = READ_BYTE();                          \
    PROFILE_INSTRUCTION();                     \
    goto *dispatch_table[op];                  \
  } while (0)
#define EXECUTE(o) goto *dispatch_table[(op = (o))]
#define LOOP_START DISPATCH();
#define LOOP_END
#else
#define CASE(name) case OP_##name
#define DISPATCH() goto fetch
#define EXECUTE(o)  \
  do {              \
    op = (o);       \
    goto execute;   \
  } while (0)
#define LOOP_START                             \
  fetch:                                       \
  if (STEP_CHECK()) goto step_limit_reached;   \
  op = READ_BYTE();                            \
  PROFILE_INSTRUCTION();                       \
  execute:                                     \
  switch ((OpCode)op) {
#define LOOP_END                               \
  default: RUNTIME_ERROR("bad opcode %d", op); \
  }
#endif

next_thread:
  vm->steps = steps;
  {
    ObjThread *previous = vm->current;
    thread = sched_next(vm, &status);
    if (!thread) return status;
    if (thread != previous) vm->stats.switches++;
  }
  LOAD_FRAME();
  if (sched_should_raise(thread)) {
    exc = sched_take_pending(vm, thread);
    goto throw_exception;
  }
  thread->interrupted = false;

  LOOP_START

  CASE(CONST): PUSH(constants[READ_U16()]); DISPATCH();
  CASE(UNIT): PUSH(UNIT_VAL); DISPATCH();
  CASE(TRUE): PUSH(BOOL_VAL(true)); DISPATCH();
  CASE(FALSE): PUSH(BOOL_VAL(false)); DISPATCH();
  CASE(NIL): PUSH(NIL_VAL); DISPATCH();
  CASE(NONE): PUSH(NONE_VAL); DISPATCH();
  CASE(POP): thread->sp--; DISPATCH();
  CASE(SLIDE): {
    int n = READ_BYTE();
    Value top = PEEK(0);
    thread->sp -= n;
    PEEK(0) = top;
    DISPATCH();
  }
  CASE(GET_LOCAL): PUSH(slots[READ_BYTE()]); DISPATCH();
  CASE(GET_UPVALUE): PUSH(frame->closure->upvalues[READ_BYTE()]); DISPATCH();
  CASE(GET_GLOBAL): {
    int index = READ_U16();
    Value value = vm->globals.values[index];
    if (IS_UNDEFINED(value))
      RUNTIME_ERROR("'%s' is used before its definition has been computed", vm->global_info[index].name->chars);
    PUSH(value);
    DISPATCH();
  }
  CASE(DEFINE_GLOBAL): vm->globals.values[READ_U16()] = POP(); DISPATCH();
  CASE(CLOSURE): {
    ObjProto *proto = AS_PROTO(constants[READ_U16()]);
    STORE_FRAME();
    ObjClosure *closure = obj_closure(vm, proto, proto->upvalue_count);
    for (int i = 0; i < proto->upvalue_count; i++) {
      uint8_t index = proto->captures[2 * i + 1];
      closure->upvalues[i] = proto->captures[2 * i] ? slots[index] : frame->closure->upvalues[index];
    }
    PUSH(OBJ_VAL(closure));
    DISPATCH();
  }
  CASE(ACTION): {
    const Builtin *made = &builtin_table[READ_BYTE()];
    STORE_FRAME();
    ObjAction *action = obj_action(vm, (uint8_t)(made - builtin_table), made->arity, thread->sp - made->arity);
    action->prelude = frame->closure->proto->prelude;
    thread->sp -= made->arity;
    PUSH(OBJ_VAL(action));
    DISPATCH();
  }

  CASE(ADD):
  CASE(SUB):
  CASE(MUL):
  CASE(DIV):
  CASE(MOD): {
    Value b = PEEK(0), a = PEEK(1), value;
    if (IS_INT(a) && IS_INT(b) && op == OP_ADD && !__builtin_add_overflow(AS_INT(a), AS_INT(b), &value.as.integer)) {
      value.type = VAL_INT;
    } else {
      STORE_FRAME();
      CHECK(ops_arith(vm, (OpCode)op, a, b, &value));
    }
    thread->sp--;
    PEEK(0) = value;
    DISPATCH();
  }
  CASE(NEG): {
    Value value;
    CHECK(ops_negate(vm, PEEK(0), &value));
    PEEK(0) = value;
    DISPATCH();
  }
  CASE(NOT):
    if (!IS_BOOL(PEEK(0))) RUNTIME_ERROR("'!' needs a bool, not %s", value_type_name(PEEK(0)));
    PEEK(0) = BOOL_VAL(!AS_BOOL(PEEK(0)));
    DISPATCH();
  CASE(EQ):
  CASE(NE): {
    uint64_t visited = 0;
    bool equal = value_equal_counted(PEEK(1), PEEK(0), &visited);
    if (visited > 1) vm_work(vm, visited);
    thread->sp--;
    PEEK(0) = BOOL_VAL(op == OP_EQ ? equal : !equal);
    DISPATCH();
  }
  CASE(LT):
  CASE(LE):
  CASE(GT):
  CASE(GE): {
    int order;
    STORE_FRAME();
    CHECK(ops_compare(vm, PEEK(1), PEEK(0), &order));
    /* order 2 means unordered (NaN): every comparison is false */
    bool holds = op == OP_LT ? order == -1 : op == OP_LE ? (order == -1 || order == 0)
               : op == OP_GT ? order == 1 : (order == 0 || order == 1);
    thread->sp--;
    PEEK(0) = BOOL_VAL(holds);
    DISPATCH();
  }
  CASE(CONCAT): {
    Value value;
    STORE_FRAME();
    CHECK(ops_concat(vm, PEEK(1), PEEK(0), &value));
    thread->sp--;
    PEEK(0) = value;
    DISPATCH();
  }

  CASE(LIST): {
    int n = READ_BYTE();
    STORE_FRAME();
    /* cons from the last element; the list so far stays rooted on the stack */
    PUSH(NIL_VAL);
    for (int i = 0; i < n; i++) {
      ObjCons *cell = obj_cons(vm, PEEK(1 + i), PEEK(0));
      PEEK(0) = OBJ_VAL(cell);
    }
    Value list = PEEK(0);
    thread->sp -= n + 1;
    PUSH(list);
    DISPATCH();
  }
  CASE(RECORD): {
    int n = READ_BYTE();
    STORE_FRAME();
    ObjRecord *record = obj_record(vm, n);
    Value *pairs = thread->sp - 2 * n;
    for (int i = 0; i < n; i++) {
      if (!IS_STRING(pairs[2 * i])) RUNTIME_ERROR("a record field name must be a string");
      record->fields[i].name = obj_intern(vm, AS_STRING(pairs[2 * i]));
      record->fields[i].value = pairs[2 * i + 1];
    }
    thread->sp -= 2 * n;
    PUSH(OBJ_VAL(record));
    DISPATCH();
  }
  CASE(FIELD): {
    ObjString *name = AS_STRING(constants[READ_U16()]);
    STORE_FRAME();
    CHECK(ops_field(vm, PEEK(0), name, &PEEK(0)));
    DISPATCH();
  }
  CASE(INDEX): {
    Value value;
    STORE_FRAME();
    CHECK(ops_index(vm, PEEK(1), PEEK(0), &value));
    thread->sp--;
    PEEK(0) = value;
    DISPATCH();
  }

  CASE(JUMP): {
    int offset = READ_U16();
    ip += offset;
    DISPATCH();
  }
  CASE(JUMP_IF_FALSE): {
    int offset = READ_U16();
    Value cond = POP();
    if (!IS_BOOL(cond)) RUNTIME_ERROR("a condition must be a bool, not %s", value_type_name(cond));
    if (!AS_BOOL(cond)) ip += offset;
    DISPATCH();
  }
  CASE(CALL_BIND):
  CASE(TAIL_CALL_BIND):
  CASE(CALL):
  CASE(TAIL_CALL): {
    /* every loop passes through a call or a bind (there are no backward
     * jumps), so checking the heap limit here and in BIND stops any runaway */
    if (vm->heap_exceeded) goto heap_limit_reached;
    int argc = READ_BYTE();
    Value callee = PEEK(argc);
    if (IS_FUNCTION_CLOSURE(callee)) {
      ObjClosure *closure = AS_CLOSURE(callee);
      ObjProto *proto = closure->proto;
      if (argc != proto->arity)
        RUNTIME_ERROR("'%s' takes %d argument%s, but %d %s given", proto->name->chars, proto->arity,
                      proto->arity == 1 ? "" : "s", argc, argc == 1 ? "is" : "are");
      bool run_now = proto->kind == PROTO_ACTION_FN && (op == OP_CALL_BIND || op == OP_TAIL_CALL_BIND);
      if (proto->kind == PROTO_ACTION_FN && !run_now) {
        /* a plain call of an action function builds the suspended call */
        STORE_FRAME();
        ObjAction *call = obj_action(vm, ACTION_CALL, argc + 1, thread->sp - argc - 1);
        thread->sp -= argc;
        PEEK(0) = OBJ_VAL(call);
        DISPATCH();
      }
      if (run_now) {
        vm->stats.binds++;
        if (op == OP_CALL_BIND) {
          ip++; /* the body runs now: skip the BIND that follows */
          vm->stats.stack_continuations++;
        }
      }
      STORE_FRAME();
      if (op == OP_TAIL_CALL || (op == OP_TAIL_CALL_BIND && run_now)) {
        memmove(slots, thread->sp - argc - 1, (size_t)(argc + 1) * sizeof(Value));
        thread->sp = slots + argc + 1;
        if (!thread_reserve(vm, thread, proto->max_slots)) RUNTIME_ERROR("stack overflow");
        frame = &thread->frames[thread->frame_count - 1];
        frame->closure = closure;
        frame->ip = proto->chunk.code;
        frame->profile_node = -1;
        LOAD_FRAME();
      } else {
        PUSH_FRAME(closure, argc + 1, "calls");
      }
      DISPATCH();
    }
    STORE_FRAME();
    if (IS_BUILTIN(callee)) {
      const Builtin *called = AS_BUILTIN(callee)->builtin;
      if (argc != called->arity)
        RUNTIME_ERROR("'%s' takes %d argument%s, but %d %s given", called->name, called->arity,
                      called->arity == 1 ? "" : "s", argc, argc == 1 ? "is" : "are");
      Value value;
      if (called->native) {
        CHECK(called->native(vm, thread->sp - argc, &value));
      } else {
        ObjAction *action = obj_action(vm, (uint8_t)(called - builtin_table), argc, thread->sp - argc);
        action->prelude = frame->closure->proto->prelude;
        value = OBJ_VAL(action);
      }
      thread->sp -= argc + 1;
      PUSH(value);
      DISPATCH();
    }
    if (IS_RUNNABLE(callee)) RUNTIME_ERROR("cannot call an action: run it with '<-' or as a statement instead");
    RUNTIME_ERROR("cannot call %s: it is not a function", value_type_name(callee));
  }
  CASE(RETURN): {
    Value value = POP();
    thread->sp = slots;
    thread->frame_count--;
    LOAD_FRAME();
    PUSH(value);
    DISPATCH();
  }

  CASE(BIND): {
    Value action;
    if (vm->heap_exceeded) goto heap_limit_reached;
    vm->stats.binds++;
    if (!vm->optimize && frame->closure->proto->line > 0) {
      /* -O0, io-sim's strategy: the rest of this block becomes a heap
       * continuation, and a continuation frame takes this frame's place */
      vm->stats.heap_continuations++;
      STORE_FRAME();
      ObjContinuation *cont = obj_continuation(vm, frame->closure, ip, (int)(thread->sp - 1 - slots), slots);
      action = PEEK(0);
      thread->sp = slots;
      PUSH(OBJ_VAL(cont));
      PUSH(action);
      frame->closure = vm->resume_closure;
      frame->ip = vm->resume_closure->proto->chunk.code + 1; /* after its BIND */
      frame->profile_node = -1;
      LOAD_FRAME();
    } else {
      vm->stats.stack_continuations++;
    }
    if (thread->pending_count && sched_should_raise(thread)) {
      STORE_FRAME();
      exc = sched_take_pending(vm, thread);
      goto throw_exception;
    }
  run_action:
    action = PEEK(0);
    if (IS_BLOCK_CLOSURE(action)) {
      STORE_FRAME();
      PUSH_FRAME(AS_CLOSURE(action), 1, "binds");
      DISPATCH();
    }
    if (IS_ACTION(action)) {
      ObjAction *primitive = AS_ACTION(action);
      thread->sp--;
      STORE_FRAME();
      if (!thread_reserve(vm, thread, primitive->argc + 1)) RUNTIME_ERROR("stack overflow");
      for (int i = 0; i < primitive->argc; i++) PUSH(primitive->args[i]);
      if (primitive->builtin == ACTION_CALL) {
        /* a suspended call: the closure and its arguments become the frame's slots */
        PUSH_FRAME(AS_CLOSURE(primitive->args[0]), primitive->argc, "binds");
        DISPATCH();
      }
      builtin = &builtin_table[primitive->builtin];
      by_prelude = primitive->prelude;
      if (builtin->op != OP_PRIM) EXECUTE(builtin->op);
      goto prim_call;
    }
    RUNTIME_ERROR("cannot run %s: it is not an action", value_type_name(action));
  }
  CASE(TAIL_BIND): {
    if (vm->heap_exceeded) goto heap_limit_reached;
    vm->stats.binds++;
    /* A block replaces this frame, so a loop of tail binds runs in constant
     * stack. A primitive runs in this frame, which keeps its line for errors;
     * the RETURN after this opcode then returns its result. */
    Value action = PEEK(0);
    if (!IS_BLOCK_CLOSURE(action) && !IS_SUSPENDED_CALL(action)) goto run_action;
    thread->sp = slots;
    thread->frame_count--;
    LOAD_FRAME();
    PUSH(action);
    goto run_action;
  }
  CASE(RESUME): {
    /* -O0: the action bound by the continuation frame returned: rebuild the frame */
    Value value = POP();
    ObjContinuation *cont = AS_CONTINUATION(slots[0]);
    thread->sp = slots;
    thread->frame_count--;
    STORE_FRAME();
    if (!thread_reserve(vm, thread, cont->closure->proto->max_slots)) RUNTIME_ERROR("stack overflow");
    Value *base = thread->sp;
    for (int i = 0; i < cont->count; i++) PUSH(cont->values[i]);
    PUSH(value);
    thread_push_frame(vm, thread, cont->closure, base);
    thread->frames[thread->frame_count - 1].ip = cont->ip;
    LOAD_FRAME();
    DISPATCH();
  }

  /* ---- primitives ---- */

  CASE(PRIM):
    builtin = &builtin_table[READ_BYTE()];
    by_prelude = frame->closure->proto->prelude;
  prim_call:
    /* the builtin's arguments are on the stack; its entry checks them */
    STORE_FRAME();
    result = ((PrimFn)builtin->prim)(vm, thread, thread->sp - builtin->arity, by_prelude);
  prim_done:
    if (__builtin_expect(result == PRIM_NEXT, 1)) {
      LOAD_FRAME();
      DISPATCH();
    }
    switch (result) {
      case PRIM_NEXT: break;
      case PRIM_SWITCH: goto next_thread;
      case PRIM_RAISE: exc = PEEK(0); goto throw_exception;
      case PRIM_ERROR: goto prim_error;
      case PRIM_STOP: vm->steps = steps; return vm->halt_status;
    }
    RUNTIME_ERROR("internal error: a primitive gave result %d", (int)result);
  CASE(DELAY): {
    /* the common case inline; an argument to report, a transaction, a
     * negative delay, an exception waiting for an interruptible point or
     * an event to report: the builtin's function */
    Value d = PEEK(0);
    if (!IS_DURATION(d) || AS_DURATION(d) < 0 || thread->in_transaction || thread->pending_count || vm->sink_count) {
      builtin = &builtin_table[BUILTIN_delay];
      by_prelude = false;
      goto prim_call;
    }
    vm->stats.events++; /* its delay event, which no sink wants */
    PEEK(0) = UNIT_VAL;
    STORE_FRAME();
    sched_delay(vm, thread, AS_DURATION(d));
    goto next_thread;
  }
  CASE(SAY): {
    /* the common case inline; a transaction or an action to report: the
     * builtin's function */
    Value what = PEEK(0);
    if (thread->in_transaction || IS_RUNNABLE(what)) {
      builtin = &builtin_table[BUILTIN_say];
      by_prelude = false;
      goto prim_call;
    }
    STORE_FRAME();
    prim_emit_say(vm, thread, what);
    PEEK(0) = UNIT_VAL;
    DISPATCH();
  }
  CASE(LABEL_NEW): {
    /* the compiler emits this only after binding a constructor's result */
    ObjString *name = AS_STRING(constants[READ_U16()]);
    Value made = PEEK(0);
    if (IS_TVAR(made) && !AS_TVAR(made)->label) AS_TVAR(made)->label = name;
    else if (IS_MVAR(made) && !AS_MVAR(made)->label) AS_MVAR(made)->label = name;
    DISPATCH();
  }

  /* ---- the VM's own instructions (vm/prim.h) ---- */

  CASE(TIMEOUT_ARM): VM_OP(op_timeout_arm);
  CASE(TIMEOUT_DISARM): VM_OP(op_timeout_disarm);
  CASE(TIMEOUT_CATCH): VM_OP(op_timeout_catch);
  CASE(CATCH_HANDLER): VM_OP(op_catch_handler);
  CASE(MASK_PUSH): VM_OP(op_mask_push);
  CASE(MASK_POP): VM_OP(op_mask_pop);
  CASE(MASK_UNWIND): VM_OP(op_mask_unwind);
  CASE(TX_BEGIN): VM_OP(op_tx_begin);
  CASE(TX_COMMIT): VM_OP(op_tx_commit);
  CASE(TX_TRACE): VM_OP(op_tx_trace);
  CASE(TX_TRACED): VM_OP(op_tx_traced);
  CASE(TX_MARK): VM_OP(op_tx_mark);
  CASE(OR_ELSE_CATCH): VM_OP(op_or_else_catch);
  CASE(TX_ABORT): VM_OP(op_tx_abort);
  CASE(THREAD_EXIT): {
    Value value = POP();
    STORE_FRAME();
    vm_event(vm, .kind = EV_EXIT, .thread = thread);
    if (thread == vm->main_thread) {
      vm->result = value;
      vm->steps = steps;
      sched_thread_done(vm, thread);
      return sched_main_ended(vm, SIM_OK);
    }
    sched_thread_done(vm, thread);
    goto next_thread;
  }

  LOOP_END

runtime_error:
  STORE_FRAME();
prim_error:
  exc = unwind_error_exception(vm, thread);
  thread_note_raise(vm, thread, exc, NULL);
throw_exception:
  /* frame->ip was stored by the raising instruction */
  if (unwind(vm, thread, exc)) {
    LOAD_FRAME();
    DISPATCH();
  }
  if (thread == vm->main_thread) {
    vm->steps = steps;
    return sched_main_ended(vm, SIM_FAILED);
  }
  goto next_thread;

heap_limit_reached:
  vm->steps = steps;
  vm_report(vm, "simvm: heap limit reached: %zu bytes in use (--max-heap)\n", vm->bytes_allocated);
  return SIM_LIMIT;

step_limit_reached:
  /* at an instruction boundary: the frame shows where the thread is */
  STORE_FRAME();
  vm->steps = steps - 1;
  return vm_stopped(vm);
}
