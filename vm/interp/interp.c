/* The dispatch loop: the hot instructions inline, everything else called
 * out (value operations vm/ops.c, primitives vm/prim*.c, unwinding
 * vm/unwind.c). Computed goto where GCC/Clang allow it, a switch otherwise
 * (or when built with -DSIMVM_SWITCH_DISPATCH; the tests run both).
 *
 * ip, sp, the frame and its slots are hoisted into locals (registers);
 * constants are read through the frame (CONSTANT). The discipline:
 * STORE_FRAME() writes ip and sp back before anything that can switch
 * threads, grow a stack, raise, collect or read the thread's stack (the
 * collector must see the exact stack); LOAD_FRAME() reloads all of them
 * after anything that can push or pop frames or move the stack. Every out-of-line primitive and VM instruction is called with
 * the frame stored and is followed by a full LOAD_FRAME(), whatever it did
 * (see vm/prim.h).
 *
 * The step limit, --max-work, signals and the heap limit are checked at
 * every call and bind (CHECKPOINT), where every loop passes since there are
 * no backward jumps: straight-line code between two checks is bounded by
 * the size of a function. Instructions are still counted one by one. */
#include "interp.h"
#include "events.h"

#include <inttypes.h>
#include <string.h>

#include "builtins.h"
#include "explore.h"
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
#define FUSE_BRANCH 0 /* the profile counts each JUMP_IF_FALSE where it is */
#define FUSE_POP 0    /* and each POP */
#define FUSE_SUPER 0 /* ... and a superinstruction as the GET_LOCAL it stands for */
#define PROFILE_COUNT(stat) (vm->stats.stat++)
/* A frame the loop starts or restarts gets its call path when it first runs. */
#define PROFILE_NEW_FRAME(f) ((f)->profile_node = -1)

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
  profile->op_counts[opcode_as_compiled(op)]++;
}
#else
#define INTERP_LOOP interp_loop_plain
#define PROFILE_INSTRUCTION() ((void)0)
#define FUSE_BRANCH 1
#define FUSE_POP 1
#define FUSE_SUPER 1
#define PROFILE_COUNT(stat) ((void)0) /* counts only the profile reports */
#define PROFILE_NEW_FRAME(f) ((void)0) /* read only by the profiled loop, which a run uses throughout or not at all */
SimStatus interp_loop_profiled(VM *vm);
SimStatus interp_loop_plain(VM *vm);

SimStatus interp_run(VM *vm) { return vm->profile ? interp_loop_profiled(vm) : interp_loop_plain(vm); }
#endif

/* CALL_BIND_HEAP: CALL_BIND under --continuations=heap. vm_place_continuations
 * puts it in CALL_BIND's place, so that CALL_BIND never asks which
 * continuations the run takes, and its work is here, out of the loop. A
 * fused call and bind (f(args) as a statement, --actions=direct) of an
 * action function copies the rest of the block (after the BIND that
 * follows) to a heap continuation as BIND does, and the body runs above
 * the continuation frame, with no action built. Any other callee is called
 * as CALL_BIND calls it (CALL_BIND_AS_CALL: nothing done), and the BIND
 * after it then takes the heap continuation. The frame is stored. */
enum { CALL_BIND_DONE, CALL_BIND_AS_CALL, CALL_BIND_NO_STACK, CALL_BIND_NO_FRAME };
static __attribute__((noinline)) int call_bind_heap(VM *vm, ObjThread *thread) {
  CallFrame *frame = &thread->frames[thread->frame_count - 1];
  int argc = frame->ip[0];
  Value *sp = thread->sp, *slots = frame->slots, value = sp[-argc - 1];
  if (!IS_FUNCTION_CLOSURE(value)) return CALL_BIND_AS_CALL;
  ObjClosure *callee = AS_CLOSURE(value);
  if (callee->proto->kind != PROTO_ACTION_FN || callee->proto->arity != argc) return CALL_BIND_AS_CALL;
  PROFILE_COUNT(binds);
  PROFILE_COUNT(heap_continuations);
  frame->ip += 2; /* the operand and the BIND after it: where the continuation goes on */
  ObjContinuation *cont = obj_continuation(vm, frame->closure, frame->ip, (int)(sp - argc - 1 - slots), slots);
  memmove(slots + 1, sp - argc - 1, (size_t)(argc + 1) * sizeof(Value));
  slots[0] = OBJ_VAL(cont);
  thread->sp = slots + argc + 2;
  frame->closure = vm->resume_closure;
  frame->ip = vm->resume_closure->proto->chunk.code + 1; /* after its BIND */
  frame->profile_node = -1;
  if (!thread_reserve(vm, thread, callee->proto->max_slots)) return CALL_BIND_NO_STACK;
  if (!thread_push_frame(vm, thread, callee, thread->sp - (argc + 1))) return CALL_BIND_NO_FRAME;
  return CALL_BIND_DONE;
}

/* A self tail call's arguments, the top `argc` values from `args`, become
 * the frame's first parameters (slots 1..argc). They were pushed above
 * every slot of the frame, so the two never overlap. The loops of the
 * prelude pass none (forever), two or three: those are copied without a
 * loop, and none costs a test. */
static inline void set_parameters(Value *slots, const Value *args, int argc) {
  if (!argc) return;
  slots[1] = args[0];
  if (argc == 1) return;
  slots[2] = args[1];
  if (argc == 2) return;
  slots[3] = args[2];
  if (argc > 3) memcpy(slots + 4, args + 3, (size_t)(argc - 3) * sizeof(Value));
}

/* Whether comparison `op` holds for an ops_compare order (2, unordered: a
 * NaN, makes every comparison false). */
static inline bool order_holds(OpCode op, int order) {
  return op == OP_LT ? order == -1 : op == OP_LE ? (order == -1 || order == 0)
       : op == OP_GT ? order == 1 : (order == 0 || order == 1);
}

/* Each handler keeps its own dispatch jump (GCC would merge them into one,
 * which costs a jump per instruction and the branch predictor its context). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-crossjumping")))
#endif
SimStatus INTERP_LOOP(VM *vm) {
  ObjThread *thread = NULL;
  CallFrame *frame = NULL;
  uint8_t *ip = NULL;
  Value *sp = NULL;
  Value *slots = NULL;
  uint8_t op;
  Value exc;
  SimStatus status = SIM_OK;
  const Builtin *builtin = NULL; /* the primitive prim_call runs ... */
  bool by_prelude = false;       /* ... and whether the prelude's code called it */
  int64_t delay_ns;              /* DELAY's duration, checked */
  PrimResult result;
  uint64_t steps = vm->steps;

#define READ_BYTE() (*ip++)
/* Constant i of the running function: read through the frame, not kept in
 * a local (the few instructions that read one cost a load or two more,
 * every call and return one register fewer to keep and reload) */
#define CONSTANT(i) (frame->closure->proto->chunk.constants.values[(i)])
/* The opcode of the instruction just dispatched, at a handler's entry (before
 * its operand is read): for handlers several opcodes share. */
#define OPCODE_HERE() (op = ip[-1])
#define READ_U16() (ip += 2, (uint16_t)((ip[-2] << 8) | ip[-1]))
#define PUSH(v) (*sp++ = (v))
#define POP() (*--sp)
#define PEEK(n) (sp[-1 - (n)])
#define STORE_FRAME() (frame->ip = ip, thread->sp = sp)
#define LOAD_FRAME()                                           \
  do {                                                         \
    frame = &thread->frames[thread->frame_count - 1];          \
    ip = frame->ip;                                            \
    sp = thread->sp;                                           \
    slots = frame->slots;                                      \
  } while (0)
/* Back in the caller after a frame was popped (sp is set by the caller). */
#define LOAD_CALLER()                                          \
  do {                                                         \
    frame = &thread->frames[thread->frame_count - 1];          \
    ip = frame->ip;                                            \
    slots = frame->slots;                                      \
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
/* A scheduling point, just after an effect on shared state (`object`, NULL
 * for none; `write`: changed): under schedule exploration another thread
 * may run from here (vm/explore.h). One predictable branch otherwise. */
#define EXPLORE_POINT(object, write)                                                                   \
  do {                                                                                                 \
    if (__builtin_expect(vm->explore != NULL, 0) && explore_point(vm, thread, (Obj *)(object), (write))) \
      goto switch_thread;                                                                              \
  } while (0)
/* Push a frame for `closure` whose slots are the top `count` values of the
 * stack (the caller has stored the frame). Inline when the frame and the
 * callee's deepest stack fit (proto->max_slots, computed by the compiler);
 * else the thread grows its stacks (stack overflow is a runtime error). */
#define PUSH_FRAME(callee, count, what)                                                               \
  do {                                                                                                 \
    ObjClosure *closure_ = (callee);                                                                   \
    ObjProto *callee_ = closure_->proto;                                                              \
    frame->ip = ip; /* where the caller goes on */                                                     \
    if (__builtin_expect(thread->frame_count < thread->frame_capacity &&                               \
                             sp + callee_->max_slots <= thread->stack + thread->stack_capacity, 1)) {   \
      frame = &thread->frames[thread->frame_count++];                                                  \
      frame->closure = closure_;                                                                      \
      frame->ip = ip = callee_->chunk.code;                                                            \
      frame->slots = slots = sp - (count);                                                             \
      PROFILE_NEW_FRAME(frame);                                                                        \
    } else {                                                                                           \
      thread->sp = sp;                                                                                 \
      if (!thread_reserve(vm, thread, callee_->max_slots)) RUNTIME_ERROR("stack overflow");             \
      if (!thread_push_frame(vm, thread, closure_, thread->sp - (count)))                             \
        RUNTIME_ERROR("stack overflow (%d nested %s)", THREAD_MAX_FRAMES, what);                       \
      LOAD_FRAME();                                                                                    \
    }                                                                                                  \
  } while (0)
/* A comparison's bool `result`, its `consumed` operands popped. When a
 * JUMP_IF_FALSE follows (an `if` on the comparison), the plain loop takes
 * the branch at once: no bool pushed, popped and checked, no dispatch. The
 * jump still counts as an instruction, so step counts are the profiled
 * loop's, which runs each instruction where it is. */
#define CONDITION(result, consumed)                                  \
  do {                                                               \
    bool result_ = (result);                                         \
    if (FUSE_BRANCH && *ip == OP_JUMP_IF_FALSE) {                    \
      sp -= (consumed);                                              \
      steps++;                                                       \
      int offset_ = (ip[1] << 8) | ip[2];                            \
      ip += result_ ? 3 : 3 + offset_;                               \
      DISPATCH();                                                    \
    }                                                                \
    sp -= (consumed) - 1;                                            \
    PEEK(0) = BOOL_VAL(result_);                                     \
    DISPATCH();                                                      \
  } while (0)
/* Push an action's unit result. When a POP follows (a statement), the
 * plain loop runs it at once: nothing pushed and popped, no dispatch. The
 * POP still counts as an instruction, as CONDITION's jump does. Only where
 * the thread goes on at once: a POP after a switch may never run (the
 * thread killed while it waits), and the profiled loop would not count it. */
#define PUSH_UNIT_RESULT()                   \
  do {                                       \
    if (FUSE_POP && *ip == OP_POP) {         \
      ip++;                                  \
      steps++;                               \
    } else {                                 \
      PUSH(UNIT_VAL);                        \
    }                                        \
  } while (0)
/* The limits' check, at every call and bind: once the instructions run
 * before this one reach stop_at, the run stops. vm_update_stop sets it for
 * --max-steps and --max-work, and to 0 when the heap limit is passed;
 * vm_stop (a signal handler, a trace cap, an output error) sets it to 0. */
#define CHECKPOINT()                                                                              \
  do {                                                                                            \
    if (__builtin_expect(steps > atomic_load_explicit(&vm->stop_at, memory_order_relaxed), 0))  \
      goto limit_reached;                                                                         \
  } while (0)

#ifdef COMPUTED_GOTO
  static void *const dispatch_table[OP_COUNT] = {
#define OPCODE(name, operand, pops, effect, where, doc) [OP_##name] = &&op_##name,
#include "opcodes.def"
#undef OPCODE
  };
#define CASE(name) op_##name
#ifdef SIMVM_PROFILED
#define PROFILE_NEXT(next) (op = (next), PROFILE_INSTRUCTION())
#define DISPATCH()            \
  do {                        \
    steps++;                  \
    op = READ_BYTE();         \
    PROFILE_INSTRUCTION();    \
    goto *dispatch_table[op]; \
  } while (0)
#else
#define PROFILE_NEXT(next) ((void)0)
/* `op` is not kept: one register fewer on every dispatch; the handlers
 * that share code between opcodes read theirs (OPCODE_HERE) */
#define DISPATCH()                        \
  do {                                    \
    steps++;                              \
    goto *dispatch_table[READ_BYTE()];    \
  } while (0)
#endif
/* DISPATCH past `n` operand bytes not yet read: the next opcode is loaded
 * before ip moves, which spares GCC a copy of ip (GET_LOCAL, the busiest) */
#define DISPATCH_AFTER(n)                       \
  do {                                          \
    steps++;                                    \
    uint8_t next_ = ip[n];                      \
    ip += (n) + 1;                              \
    PROFILE_NEXT(next_);                        \
    goto *dispatch_table[next_];                \
  } while (0)
#define EXECUTE(o) goto *dispatch_table[(op = (o))]
#define LOOP_START DISPATCH();
#define LOOP_END
#else
#define CASE(name) case OP_##name
#define DISPATCH() goto fetch
#define DISPATCH_AFTER(n) \
  do {                    \
    ip += (n);            \
    goto fetch;           \
  } while (0)
#define EXECUTE(o)  \
  do {              \
    op = (o);       \
    goto execute;   \
  } while (0)
#define LOOP_START                             \
  fetch:                                       \
  steps++;                                     \
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
  if (__builtin_expect(steps >= atomic_load_explicit(&vm->stop_at, memory_order_relaxed), 0)) {
    vm->steps = steps; /* a stop seen as a thread is about to run: none of its instructions ran */
    return sched_stopped(vm);
  }
  if (sched_should_raise(thread)) {
    exc = sched_take_pending(vm, thread);
    goto throw_exception;
  }
  thread->interrupted = false;

  LOOP_START

  CASE(CONST): PUSH(CONSTANT(READ_U16())); DISPATCH();
  CASE(UNIT): PUSH(UNIT_VAL); DISPATCH();
  CASE(TRUE): PUSH(BOOL_VAL(true)); DISPATCH();
  CASE(FALSE): PUSH(BOOL_VAL(false)); DISPATCH();
  CASE(NIL): PUSH(NIL_VAL); DISPATCH();
  CASE(NONE): PUSH(NONE_VAL); DISPATCH();
  CASE(POP): sp--; DISPATCH();
  CASE(SLIDE): {
    int n = READ_BYTE();
    Value top = PEEK(0);
    sp -= n;
    PEEK(0) = top;
    DISPATCH();
  }
  CASE(GET_LOCAL):
    sp[0] = slots[ip[0]];
    sp++;
    DISPATCH_AFTER(1);
  /* The superinstructions, GET_LOCAL A; NATIVE N or OP K in one
   * (vm_place_superinstructions): the native or operation on slot A itself
   * when it holds what that expects, with one dispatch for both (counted
   * as two instructions); anything else is GET_LOCAL, and the second
   * instruction runs next on its own (its error included). */
#define LOCAL_ALONE(local) \
  do {                     \
    sp[0] = (local);       \
    sp++;                  \
    DISPATCH_AFTER(1);     \
  } while (0)
/* Both instructions ran: push the second's result, count it, go on past it. */
#define LOCAL_FUSED(result) \
  do {                      \
    sp[0] = (result);       \
    sp++;                   \
    steps++;                \
    DISPATCH_AFTER(3);      \
  } while (0)
  CASE(LOCAL_IS_EMPTY): {
    Value local = slots[ip[0]];
    if (FUSE_SUPER && (IS_NIL(local) || IS_CONS(local))) {
      ip += 3;
      steps++;
      CONDITION(IS_NIL(local), 0); /* a JUMP_IF_FALSE after it branches at once */
    }
    LOCAL_ALONE(local);
  }
  CASE(LOCAL_HEAD): {
    Value local = slots[ip[0]];
    if (FUSE_SUPER && IS_CONS(local)) {
      LOCAL_FUSED(AS_CONS(local)->head);
    }
    LOCAL_ALONE(local);
  }
  CASE(LOCAL_TAIL): {
    Value local = slots[ip[0]];
    if (FUSE_SUPER && IS_CONS(local)) {
      LOCAL_FUSED(cons_tail(AS_CONS(local)));
    }
    LOCAL_ALONE(local);
  }
  CASE(LOCAL_CONS): { /* the head is on the stack, the tail in slot A */
    Value local = slots[ip[0]];
    if (FUSE_SUPER && IS_LIST(local)) {
      STORE_FRAME(); /* it allocates: the collector sees both, in the frame */
      ObjCons *cell = cons_new(vm, PEEK(0), local);
      PEEK(0) = OBJ_VAL(cell);
      steps++;
      DISPATCH_AFTER(3);
    }
    LOCAL_ALONE(local);
  }
  CASE(LOCAL_ADDI):
  CASE(LOCAL_SUBI): { /* an int, and no overflow (the slow way reports it) */
    OPCODE_HERE();
    Value local = slots[ip[0]];
    int64_t r;
    if (FUSE_SUPER && IS_INT(local) &&
        !(op == OP_LOCAL_ADDI ? __builtin_add_overflow(AS_INT(local), (int8_t)ip[2], &r)
                              : __builtin_sub_overflow(AS_INT(local), (int8_t)ip[2], &r))) {
      LOCAL_FUSED(INT_VAL(r));
    }
    LOCAL_ALONE(local);
  }
  CASE(LOCAL_LTI): {
    Value local = slots[ip[0]];
    if (FUSE_SUPER && IS_INT(local)) {
      int64_t k = (int8_t)ip[2];
      ip += 3;
      steps++;
      CONDITION(AS_INT(local) < k, 0);
    }
    LOCAL_ALONE(local);
  }
  CASE(LOCAL_LEI): {
    Value local = slots[ip[0]];
    if (FUSE_SUPER && IS_INT(local)) {
      int64_t k = (int8_t)ip[2];
      ip += 3;
      steps++;
      CONDITION(AS_INT(local) <= k, 0);
    }
    LOCAL_ALONE(local);
  }
#undef LOCAL_ALONE
#undef LOCAL_FUSED
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
    ObjProto *proto = AS_PROTO(CONSTANT(READ_U16()));
    STORE_FRAME();
    ObjClosure *closure = obj_closure(vm, proto, proto->upvalue_count);
    for (int i = 0; i < proto->upvalue_count; i++) {
      uint8_t index = proto->captures[2 * i + 1];
      closure->upvalues[i] = proto->captures[2 * i] ? slots[index] : frame->closure->upvalues[index];
    }
    PUSH(OBJ_VAL(closure));
    DISPATCH();
  }
  CASE(LETREC): {
    int n = READ_BYTE();
    Value *made = sp - n, *holes = sp - 2 * n;
    int first = (int)(holes - slots);
    for (int k = 0; k < n; k++) {
      if (!IS_CLOSURE(made[k])) continue;
      ObjClosure *closure = AS_CLOSURE(made[k]);
      for (int i = 0; i < closure->proto->upvalue_count; i++) {
        int index = closure->proto->captures[2 * i + 1];
        if (closure->proto->captures[2 * i] && index >= first && index < first + n)
          closure->upvalues[i] = made[index - first];
      }
    }
    for (int k = 0; k < n; k++) holes[k] = made[k];
    sp -= n;
    DISPATCH();
  }
  CASE(ACTION): {
    const Builtin *made = &builtin_table[READ_BYTE()];
    STORE_FRAME();
    ObjAction *action = obj_action(vm, (uint8_t)(made - builtin_table), made->arity, sp - made->arity);
    action->prelude = frame->closure->proto->prelude;
    sp -= made->arity;
    PUSH(OBJ_VAL(action));
    DISPATCH();
  }

  /* ints inline (overflow goes the slow way, to its error); the rest in vm/ops.c */
#define ARITH(name, builtin_overflow)                                                     \
  CASE(name): {                                                                           \
    Value b = PEEK(0), a = PEEK(1);                                                       \
    int64_t r;                                                                            \
    if (__builtin_expect(IS_INT(a) && IS_INT(b) && !builtin_overflow(AS_INT(a), AS_INT(b), &r), 1)) { \
      sp--;                                                                               \
      PEEK(0) = INT_VAL(r);                                                               \
      DISPATCH();                                                                         \
    }                                                                                     \
    op = OP_##name;                                                                       \
    goto arith_slow;                                                                      \
  }
  ARITH(ADD, __builtin_add_overflow)
  ARITH(SUB, __builtin_sub_overflow)
  ARITH(MUL, __builtin_mul_overflow)
#undef ARITH
  CASE(DIV):
  CASE(MOD):
    OPCODE_HERE();
  arith_slow: {
    Value value;
    STORE_FRAME();
    CHECK(ops_arith(vm, (OpCode)op, PEEK(1), PEEK(0), &value));
    sp--;
    PEEK(0) = value;
    DISPATCH();
  }
  CASE(ADDI):
  CASE(SUBI): {
    OPCODE_HERE();
    Value a = PEEK(0);
    int64_t k = (int8_t)READ_BYTE(), r;
    if (__builtin_expect(IS_INT(a), 1) &&
        !(op == OP_ADDI ? __builtin_add_overflow(AS_INT(a), k, &r) : __builtin_sub_overflow(AS_INT(a), k, &r))) {
      PEEK(0) = INT_VAL(r);
      DISPATCH();
    }
    Value value;
    STORE_FRAME();
    CHECK(ops_arith(vm, op == OP_ADDI ? OP_ADD : OP_SUB, a, INT_VAL(k), &value));
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
    OPCODE_HERE();
    Value b = PEEK(0), a = PEEK(1);
    bool equal;
    if (IS_INT(a) && IS_INT(b)) {
      equal = AS_INT(a) == AS_INT(b);
    } else {
      uint64_t visited = 0;
      equal = value_equal_counted(vm, a, b, &visited);
      if (__builtin_expect(vm->halted, 0)) goto halted;
    }
    CONDITION(op == OP_EQ ? equal : !equal, 2);
  }
  CASE(EQI): {
    Value a = PEEK(0), k = INT_VAL((int8_t)READ_BYTE());
    CONDITION(IS_INT(a) ? AS_INT(a) == AS_INT(k) : value_equal(a, k), 1);
  }
  /* ints (and durations, which compare the same way) inline */
#define COMPARE(name, cmp)                                                                    \
  CASE(name): {                                                                               \
    Value b = PEEK(0), a = PEEK(1);                                                           \
    if (__builtin_expect(a.type == b.type && (IS_INT(a) || IS_DURATION(a)), 1))               \
      CONDITION(AS_INT(a) cmp AS_INT(b), 2);                                                  \
    op = OP_##name;                                                                           \
    goto compare_slow;                                                                        \
  }                                                                                           \
  CASE(name##I): {                                                                            \
    Value a = PEEK(0);                                                                        \
    int64_t k = (int8_t)READ_BYTE();                                                          \
    if (__builtin_expect(IS_INT(a), 1)) CONDITION(AS_INT(a) cmp k, 1);                        \
    int order;                                                                                \
    STORE_FRAME();                                                                            \
    CHECK(ops_compare(vm, a, INT_VAL(k), &order));                                            \
    PEEK(0) = BOOL_VAL(order_holds(OP_##name, order));                                        \
    DISPATCH();                                                                               \
  }
  COMPARE(LT, <)
  COMPARE(LE, <=)
  COMPARE(GT, >)
  COMPARE(GE, >=)
#undef COMPARE
  compare_slow: {
    int order;
    STORE_FRAME();
    CHECK(ops_compare(vm, PEEK(1), PEEK(0), &order));
    sp--;
    PEEK(0) = BOOL_VAL(order_holds((OpCode)op, order));
    DISPATCH();
  }
  CASE(CONCAT): {
    Value value;
    STORE_FRAME();
    CHECK(ops_concat(vm, PEEK(1), PEEK(0), &value));
    sp--;
    PEEK(0) = value;
    DISPATCH();
  }

  CASE(LIST): {
    int n = READ_BYTE();
    /* cons from the last element; the list so far stays rooted on the stack */
    PUSH(NIL_VAL);
    STORE_FRAME();
    for (int i = 0; i < n; i++) {
      ObjCons *cell = obj_cons(vm, PEEK(1 + i), PEEK(0));
      PEEK(0) = OBJ_VAL(cell);
    }
    Value list = PEEK(0);
    sp -= n + 1;
    PUSH(list);
    DISPATCH();
  }
  CASE(RECORD): {
    int n = READ_BYTE();
    STORE_FRAME();
    Value *pairs = sp - 2 * n;
    /* the names first, on the stack: interning one made by ++ allocates */
    for (int i = 0; i < n; i++) {
      if (!IS_STRING(pairs[2 * i])) RUNTIME_ERROR("a record field name must be a string");
      pairs[2 * i] = OBJ_VAL(obj_intern(vm, AS_STRING(pairs[2 * i])));
    }
    ObjRecord *record = obj_record(vm, n);
    for (int i = 0; i < n; i++) record->fields[i] = (Field){AS_STRING(pairs[2 * i]), pairs[2 * i + 1]};
    sp -= 2 * n;
    PUSH(OBJ_VAL(record));
    DISPATCH();
  }
  CASE(INTERP): {
    int n = READ_BYTE();
    Value value;
    STORE_FRAME();
    CHECK(ops_interpolate(vm, sp - n, n, &value));
    sp -= n;
    PUSH(value);
    DISPATCH();
  }
  CASE(UPDATE): {
    int n = READ_BYTE();
    Value value;
    STORE_FRAME();
    CHECK(ops_update(vm, sp - 3 * n - 1, n, &value));
    sp -= 3 * n;
    PEEK(0) = value;
    DISPATCH();
  }
  CASE(FIELD): {
    /* a record's field inline, charged as ops_field charges it; anything
     * else (an error) goes to ops_field */
    ObjString *name = AS_STRING(CONSTANT(READ_U16()));
    if (__builtin_expect(IS_RECORD(PEEK(0)), 1)) {
      ObjRecord *record = AS_RECORD(PEEK(0));
      int i = record_field_index(record, name);
      if (i >= 0) {
        vm_work(vm, (uint64_t)i);
        PEEK(0) = record->fields[i].value;
        DISPATCH();
      }
    }
    STORE_FRAME();
    CHECK(ops_field(vm, PEEK(0), name, &PEEK(0)));
    DISPATCH();
  }
  CASE(INDEX): {
    Value value;
    STORE_FRAME();
    CHECK(ops_index(vm, PEEK(1), PEEK(0), &value));
    sp--;
    PEEK(0) = value;
    DISPATCH();
  }

  /* pattern tests (compiler.c compile_pattern): a bool, or the branch at once */
#define SLOT_TEST(name, test)             \
  CASE(name): {                           \
    Value v = slots[READ_BYTE()];         \
    CONDITION(test(v), 0);                \
  }
  SLOT_TEST(IS_NIL, IS_NIL)
  SLOT_TEST(IS_CONS, IS_CONS)
  SLOT_TEST(IS_SOME, IS_SOME)
  SLOT_TEST(IS_RECORD, IS_RECORD)
#undef SLOT_TEST
  CASE(EQ_K):
  CASE(IS_K): {
    OPCODE_HERE();
    Value k = CONSTANT(READ_U16()), a = PEEK(0);
    bool equal;
    if (IS_INT(a) && IS_INT(k)) {
      equal = AS_INT(a) == AS_INT(k);
    } else {
      uint64_t visited = 0;
      equal = value_equal_counted(vm, a, k, &visited);
      if (__builtin_expect(vm->halted, 0)) goto halted;
    }
    CONDITION(equal, op == OP_EQ_K ? 1 : 0);
  }
  CASE(TRY_FIELD): {
    /* charged as FIELD charges a field it reads, and a miss as ops_field */
    ObjString *name = AS_STRING(CONSTANT(READ_U16()));
    bool found = false;
    if (IS_RECORD(PEEK(0))) {
      ObjRecord *record = AS_RECORD(PEEK(0));
      int i = record_field_index(record, name);
      found = i >= 0;
      vm_work(vm, (uint64_t)(found ? i : record->count));
      PEEK(0) = found ? record->fields[i].value : UNIT_VAL;
    } else {
      PEEK(0) = UNIT_VAL;
    }
    CONDITION(found, 0);
  }
  CASE(MATCH_FAIL): {
    ObjString *what = AS_STRING(CONSTANT(READ_U16()));
    STORE_FRAME();
    ops_match_failed(vm, what, PEEK(0));
    goto runtime_error;
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
  CASE(CALL): {
    /* the common case inline: a function of the right arity */
    CHECKPOINT();
    int argc = READ_BYTE();
    Value callee = PEEK(argc);
    if (__builtin_expect(IS_OBJ_TYPE(callee, OBJ_CLOSURE), 1)) {
      ObjClosure *closure = AS_CLOSURE(callee);
      if (__builtin_expect(closure->proto->kind == PROTO_FUNCTION && argc == closure->proto->arity, 1)) {
        PUSH_FRAME(closure, argc + 1, "calls");
        DISPATCH();
      }
    }
    ip--; /* back to the operand */
    op = OP_CALL;
    goto call;
  }
  CASE(CALL_BIND):
  CASE(TAIL_CALL_BIND):
  CASE(TAIL_CALL):
    OPCODE_HERE();
    CHECKPOINT();
  call: {
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
        ObjAction *call = obj_action(vm, ACTION_CALL, argc + 1, sp - argc - 1);
        sp -= argc;
        PEEK(0) = OBJ_VAL(call);
        DISPATCH();
      }
      if (run_now) {
        PROFILE_COUNT(binds);
        if (op == OP_CALL_BIND) {
          ip++; /* the body runs now: skip the BIND that follows */
          PROFILE_COUNT(stack_continuations);
        }
      }
      if (op == OP_TAIL_CALL || (op == OP_TAIL_CALL_BIND && run_now)) {
        /* the callee and its arguments replace this frame's slots: copied
         * up from above them (no call of memmove for a few values) */
        const Value *from = sp - argc - 1;
        for (int i = 0; i <= argc; i++) slots[i] = from[i];
        sp = slots + argc + 1;
        frame->closure = closure;
        frame->ip = ip = proto->chunk.code;
        PROFILE_NEW_FRAME(frame);
        if (__builtin_expect(sp - 1 + proto->max_slots > thread->stack + thread->stack_capacity, 0)) {
          thread->sp = sp;
          if (!thread_reserve(vm, thread, proto->max_slots)) RUNTIME_ERROR("stack overflow");
          LOAD_FRAME();
        }
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
        CHECK(called->native(vm, sp - argc, &value));
      } else if (op == OP_CALL_BIND && vm->stack_continuations && !thread->pending_count &&
                 steps < atomic_load_explicit(&vm->stop_at, memory_order_relaxed)) {
        /* f(args) as a statement, f an action builtin (mapM_(kill, ts)):
         * the BIND that follows would run the action at once, so run the
         * primitive on the arguments as they lie, with no action value
         * built. Only when that BIND would do nothing else: no heap
         * continuation, no exception to raise, no limit reached there. It
         * is still counted, and profiled, as an instruction of its own, in
         * both loops (so they allocate the same). */
        if (argc == 1) PEEK(1) = PEEK(0); /* kill(t), say(s) ...: no call of memmove for one value */
        else memmove(sp - argc - 1, sp - argc, (size_t)argc * sizeof(Value));
        sp--;
        ip++;
        steps++;
        op = OP_BIND;
        PROFILE_INSTRUCTION();
        PROFILE_COUNT(binds);
        PROFILE_COUNT(stack_continuations);
        builtin = called;
        by_prelude = frame->closure->proto->prelude;
        if (builtin == &builtin_table[BUILTIN_kill]) goto kill;
        if (builtin == &builtin_table[BUILTIN_fork]) goto fork;
        if (builtin->op != OP_PRIM) EXECUTE(builtin->op);
        goto prim_call;
      } else {
        ObjAction *action = obj_action(vm, (uint8_t)(called - builtin_table), argc, sp - argc);
        action->prelude = frame->closure->proto->prelude;
        value = OBJ_VAL(action);
      }
      sp -= argc + 1;
      PUSH(value);
      DISPATCH();
    }
    if (IS_RUNNABLE(callee)) RUNTIME_ERROR("cannot call an action: run it with '<-' or as a statement instead");
    RUNTIME_ERROR("cannot call %s: it is not a function", value_type_name(callee));
  }
  CASE(CALL_SELF): {
    /* this frame's function calls itself: the callee (pushed by GET_LOCAL 0)
     * is known to be a value function of this arity */
    CHECKPOINT();
    int argc = READ_BYTE();
    PUSH_FRAME(frame->closure, argc + 1, "calls");
    DISPATCH();
  }
  CASE(TAIL_SELF_BIND): {
    /* the action function's body starts again; parameters after the
     * first argc are passed on unchanged (forever(act) copies none) */
    PROFILE_COUNT(binds);
    CHECKPOINT();
    int argc = READ_BYTE();
    set_parameters(slots, sp - argc, argc);
    ObjProto *proto = frame->closure->proto;
    sp = slots + 1 + proto->arity;
    ip = proto->chunk.code;
    PROFILE_NEW_FRAME(frame); /* counted as a call, as TAIL_CALL is */
    DISPATCH();
  }
  CASE(TAIL_SELF): {
    CHECKPOINT();
    int argc = READ_BYTE();
    /* the arguments replace the parameters; the frame already fits */
    set_parameters(slots, sp - argc, argc);
    sp = slots + argc + 1;
    ip = frame->closure->proto->chunk.code;
    PROFILE_NEW_FRAME(frame); /* counted as a call, as TAIL_CALL is */
    DISPATCH();
  }
  CASE(RETURN): {
    Value value = POP();
    sp = slots;
    thread->frame_count--;
    LOAD_CALLER();
    PUSH(value);
    DISPATCH();
  }

  CASE(BIND_LOCAL):
    sp[0] = slots[ip[0]]; /* as GET_LOCAL: no copy of ip or sp */
    sp++;
    ip++;
    goto bind;
  CASE(BIND): {
    Value action;
  bind:
    CHECKPOINT();
    PROFILE_COUNT(binds);
    if (!vm->stack_continuations && frame->closure->proto->line > 0) {
      /* --continuations=heap (-O0), io-sim's strategy: the rest of this block
       * becomes a heap continuation, and a continuation frame takes this
       * frame's place */
      PROFILE_COUNT(heap_continuations);
      STORE_FRAME();
      ObjContinuation *cont = obj_continuation(vm, frame->closure, ip, (int)(sp - 1 - slots), slots);
      action = PEEK(0);
      sp = slots;
      PUSH(OBJ_VAL(cont));
      PUSH(action);
      frame->closure = vm->resume_closure;
      frame->ip = ip = vm->resume_closure->proto->chunk.code + 1; /* after its BIND */
      PROFILE_NEW_FRAME(frame);
    } else {
      PROFILE_COUNT(stack_continuations);
    }
    if (thread->pending_count && sched_should_raise(thread)) {
      STORE_FRAME();
      exc = sched_take_pending(vm, thread);
      goto throw_exception;
    }
  run_action:
    action = PEEK(0);
    if (IS_BLOCK_CLOSURE(action)) {
      PUSH_FRAME(AS_CLOSURE(action), 1, "binds");
      DISPATCH();
    }
    if (IS_ACTION(action)) {
      ObjAction *primitive = AS_ACTION(action);
      if (primitive->builtin == BUILTIN_kill || primitive->builtin == BUILTIN_fork) {
        /* one argument, which takes the action's place (no room to make) */
        PEEK(0) = primitive->args[0];
        builtin = &builtin_table[primitive->builtin];
        by_prelude = primitive->prelude;
        if (primitive->builtin == BUILTIN_kill) goto kill;
        goto fork;
      }
      sp--;
      if (sp + primitive->argc + 1 > thread->stack + thread->stack_capacity) {
        STORE_FRAME();
        if (!thread_reserve(vm, thread, primitive->argc + 1)) RUNTIME_ERROR("stack overflow");
        LOAD_FRAME(); /* the stack moved */
      }
      if (primitive->argc == 1) PUSH(primitive->args[0]); /* fork(act), kill(t), say(s) ... */
      else for (int i = 0; i < primitive->argc; i++) PUSH(primitive->args[i]);
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
  CASE(CALL_BIND_HEAP): {
    /* CALL_BIND under --continuations=heap: see call_bind_heap */
    CHECKPOINT();
    STORE_FRAME();
    int done = call_bind_heap(vm, thread);
    if (done == CALL_BIND_AS_CALL) {
      op = OP_CALL_BIND;
      goto call;
    }
    LOAD_FRAME();
    if (done == CALL_BIND_NO_STACK) RUNTIME_ERROR("stack overflow");
    if (done == CALL_BIND_NO_FRAME) RUNTIME_ERROR("stack overflow (%d nested calls)", THREAD_MAX_FRAMES);
    DISPATCH();
  }
  CASE(TAIL_BIND): {
    CHECKPOINT();
    PROFILE_COUNT(binds);
    /* A block replaces this frame, so a loop of tail binds runs in constant
     * stack. A primitive runs in this frame, which keeps its line for errors;
     * the RETURN after this opcode then returns its result. */
    Value action = PEEK(0);
    if (!IS_BLOCK_CLOSURE(action) && !IS_SUSPENDED_CALL(action)) goto run_action;
    sp = slots;
    thread->frame_count--;
    LOAD_CALLER();
    PUSH(action);
    goto run_action;
  }
  CASE(RESUME): {
    /* heap continuations: the action bound by the continuation frame returned: rebuild the frame */
    Value value = POP();
    ObjContinuation *cont = AS_CONTINUATION(slots[0]);
    sp = slots;
    thread->frame_count--;
    LOAD_CALLER();
    STORE_FRAME();
    if (!thread_reserve(vm, thread, cont->closure->proto->max_slots)) RUNTIME_ERROR("stack overflow");
    sp = thread->sp;
    Value *base = sp;
    for (int i = 0; i < cont->count; i++) PUSH(cont->values[i]);
    PUSH(value);
    thread->sp = sp;
    thread_push_frame(vm, thread, cont->closure, base);
    thread->frames[thread->frame_count - 1].ip = cont->ip;
    LOAD_FRAME();
    DISPATCH();
  }

  /* ---- primitives ---- */

  CASE(NATIVE): {
    /* a builtin function called by name (never a script's own: the compiler
     * emits NATIVE only for a builtin's name). The list loops' busiest
     * natives are inline on the values they expect (a test of isEmpty
     * branches at once), then an async wait's isNone and fromSome;
     * anything else, an error included, calls the builtin's entry, which
     * checks the arguments */
    int index = READ_BYTE();
    Value arg = PEEK(0);
    switch (index) { /* one jump to the native's case, not a test of each */
      case BUILTIN_isEmpty:
        if (IS_NIL(arg)) CONDITION(true, 1);
        if (IS_CONS(arg)) CONDITION(false, 1);
        break;
      case BUILTIN_head:
        if (!IS_CONS(arg)) break;
        PEEK(0) = AS_CONS(arg)->head;
        DISPATCH();
      case BUILTIN_tail:
        if (!IS_CONS(arg)) break;
        PEEK(0) = cons_tail(AS_CONS(arg));
        DISPATCH();
      case BUILTIN_cons:
        if (!IS_LIST(arg)) break;
        STORE_FRAME(); /* it allocates: the collector sees both on the stack */
        ObjCons *cell = cons_new(vm, PEEK(1), arg);
        sp--;
        PEEK(0) = OBJ_VAL(cell);
        DISPATCH();
    }
    if (index == BUILTIN_isNone) CONDITION(IS_NONE(arg), 1);
    if (index == BUILTIN_fromSome && IS_SOME(arg)) {
      PEEK(0) = AS_SOME(arg)->value;
      DISPATCH();
    }
    const Builtin *called = &builtin_table[index];
    Value value;
    STORE_FRAME(); /* it may allocate, or report an error here */
    CHECK(called->native(vm, sp - called->arity, &value));
    sp -= called->arity;
    PUSH(value);
    DISPATCH();
  }
  CASE(PRIM):
    builtin = &builtin_table[READ_BYTE()];
    by_prelude = frame->closure->proto->prelude;
    goto prim_call;
  /* kill(t) and fork(act), the argument on top, builtin and by_prelude
   * set: their common cases here, calling no primitive's entry (a sleeping
   * target, prim_kill_sleeper; a fork outside a transaction), anything
   * else, an error included, as prim_call runs it */
  kill: {
    Value target = PEEK(0);
    if (IS_THREAD(target) && !thread->in_transaction && prim_kill_sleeper(vm, thread, AS_THREAD(target))) {
      sp--;
      PUSH_UNIT_RESULT(); /* it goes on at once: a POP after it runs now */
      DISPATCH();
    }
    goto prim_call;
  }
  fork:
    if (IS_RUNNABLE(PEEK(0)) && !thread->in_transaction) {
      STORE_FRAME(); /* making the thread may collect: the action is on the stack */
      ObjThread *child = prim_fork_child(vm, thread, PEEK(0), false);
      if (!child) {
        vm->steps = steps;
        return vm->halt_status;
      }
      PEEK(0) = OBJ_VAL(child);
      EXPLORE_POINT(NULL, false);
      DISPATCH();
    }
  prim_call:
    /* the builtin's arguments are on the stack; its entry checks them */
    STORE_FRAME();
    result = ((PrimFn)builtin->prim)(vm, thread, sp - builtin->arity, by_prelude);
  prim_done:
    if (__builtin_expect(result == PRIM_NEXT, 1)) {
      LOAD_FRAME();
      DISPATCH();
    }
    switch (result) {
      case PRIM_NEXT: break;
      case PRIM_SWITCH: goto next_thread;
      case PRIM_RAISE: exc = thread->sp[-1]; goto throw_exception;
      case PRIM_ERROR: goto prim_error;
      case PRIM_STOP: vm->steps = steps; return vm->halt_status;
    }
    RUNTIME_ERROR("internal error: a primitive gave result %d", (int)result);
  CASE(DELAY_K):
    /* a duration of 0 or more (the verifier's rule): the common case needs
     * none of DELAY's checks of the argument */
    delay_ns = AS_DURATION(CONSTANT(READ_U16()));
    if (__builtin_expect(thread->in_transaction || thread->pending_count || vm->sink_count || vm->explore, 0)) {
      PUSH(DURATION_VAL(delay_ns));
      goto delay;
    }
    goto delay_plain;
  CASE(DELAY):
  delay: {
    /* the common case inline; an argument to report, a transaction, a
     * negative delay, an exception waiting for an interruptible point or
     * an event to report: the builtin's function */
    Value d = PEEK(0);
    if (!IS_DURATION(d) || AS_DURATION(d) < 0 || thread->in_transaction || thread->pending_count || vm->sink_count ||
        vm->explore) {
      builtin = &builtin_table[BUILTIN_delay];
      by_prelude = false;
      goto prim_call;
    }
    delay_ns = AS_DURATION(d);
    sp--;
  }
  delay_plain: /* the argument is off the stack: the unit result goes on here */
    if (sched_delay_alone(vm, delay_ns)) { /* nothing runs before it wakes */
      PUSH_UNIT_RESULT(); /* the delay is over: a POP after it runs now */
      DISPATCH();
    }
    switch (sched_delay_own_timeout(vm, thread, delay_ns, steps, &exc)) { /* only its own timeout is due first */
      case DELAY_BLOCKS: break;
      case DELAY_DONE: PUSH_UNIT_RESULT(); DISPATCH();
      case DELAY_INTERRUPTED:
        PUSH(UNIT_VAL);
        STORE_FRAME();
        if (!prim_timeout_caught_at_once(vm, thread, exc)) goto throw_exception;
        steps++; /* the TIMEOUT_CATCH it ran */
        LOAD_FRAME();
        DISPATCH();
    }
    /* not fused: a POP after it runs when the thread wakes, unless it is
     * killed first (the profiled loop would never count that POP) */
    PUSH(UNIT_VAL);
    vm->stats.events++; /* its delay event, which no sink wants */
    STORE_FRAME();
    sched_delay(vm, thread, delay_ns);
    goto next_thread;
  CASE(SAY_K): {
    /* a constant is never an action (those are made at run time) */
    Value what = CONSTANT(READ_U16());
    if (__builtin_expect(!vm->config.write_say && !vm->sink_count && !thread->in_transaction, 1)) {
      vm->stats.events++; /* nothing is printed: nothing is shown */
      if (__builtin_expect(vm->explore != NULL, 0)) { /* a switch here: a POP after it may never run */
        PUSH(UNIT_VAL);
        EXPLORE_POINT(NULL, false);
        DISPATCH();
      }
      PUSH_UNIT_RESULT();
      DISPATCH();
    }
    PUSH(what);
    if (thread->in_transaction) goto say_builtin;
    goto say_shown;
  }
  CASE(SAY):
    /* the common case inline; a transaction or an action to report: the
     * builtin's function */
    if (thread->in_transaction || IS_RUNNABLE(PEEK(0))) {
    say_builtin:
      builtin = &builtin_table[BUILTIN_say];
      by_prelude = false;
      goto prim_call;
    }
  say_shown:
    if (vm->config.write_say || vm->sink_count) {
      STORE_FRAME();
      if (!prim_emit_say(vm, thread, PEEK(0))) goto halted_stored;
    } else {
      vm->stats.events++; /* nothing is printed: nothing is shown */
    }
    PEEK(0) = UNIT_VAL;
    EXPLORE_POINT(NULL, false);
    DISPATCH();
  CASE(LABEL_NEW): {
    /* the compiler emits this only after binding a constructor's result */
    ObjString *name = AS_STRING(CONSTANT(READ_U16()));
    Value made = PEEK(0);
    if (IS_TVAR(made) && !AS_TVAR(made)->label && !AS_TVAR(made)->async_thread) AS_TVAR(made)->label = name;
    else if (IS_MVAR(made) && !AS_MVAR(made)->label) AS_MVAR(made)->label = name;
    DISPATCH();
  }

  /* ---- the VM's own instructions (vm/prim.h) ---- */

  CASE(TIMEOUT_ARM): VM_OP(op_timeout_arm);
  CASE(TIMEOUT_DISARM): VM_OP(op_timeout_disarm);
  CASE(TIMEOUT_CATCH): VM_OP(op_timeout_catch);
  CASE(CATCH_HANDLER): VM_OP(op_catch_handler);
  CASE(MASK_POP): VM_OP(op_mask_pop);
  CASE(MASK_UNWIND): VM_OP(op_mask_unwind);
  CASE(TX_BEGIN): op_tx_begin(vm, thread, frame); DISPATCH(); /* it reads no ip or sp, and goes on */
  CASE(TX_COMMIT): VM_OP(op_tx_commit);
  CASE(TX_TRACE): VM_OP(op_tx_trace);
  CASE(TX_TRACED): VM_OP(op_tx_traced);
  CASE(TX_MARK): VM_OP(op_tx_mark);
  CASE(OR_ELSE_CATCH): VM_OP(op_or_else_catch);
  CASE(CATCH_STM): VM_OP(op_catch_stm);
  CASE(TX_ABORT): vm->steps = steps; VM_OP(op_tx_abort); /* steps: for stm_retry_alone */
  CASE(ASYNC_VAR): VM_OP(op_async_var);
  CASE(ASYNC_FORK): VM_OP(op_async_fork);
  CASE(ASYNC_DONE): VM_OP(op_async_done);
  CASE(ASYNC_OK): VM_OP(op_async_ok);
  CASE(ASYNC_FAILED): VM_OP(op_async_failed);
  CASE(ASYNC_WRITE): VM_OP(op_async_write);
  /* replicateMOnto's loop (vm/prim_loop.c): slot 0 counts down, slot 2
   * is the list of results, in order, slot 3 its last cell (cells of its
   * own, which only it can see until it returns) */
  CASE(REPEAT_STEP):
    if (AS_INT(slots[0]) > 0) DISPATCH();
    PUSH(slots[2]);
    ip += 4; /* over GET_LOCAL 1, BIND, REPEAT_NEXT: to the RETURN */
    DISPATCH();
  CASE(REPEAT_NEXT): {
    STORE_FRAME(); /* the cell allocates: the result is rooted on the stack */
    ObjCons *cell = cons_new(vm, PEEK(0), NIL_VAL);
    sp--;
    if (IS_NIL(slots[3])) slots[2] = OBJ_VAL(cell);
    else AS_CONS(slots[3])->tail = cell;
    slots[3] = OBJ_VAL(cell);
    slots[0] = INT_VAL(AS_INT(slots[0]) - 1);
    ip = frame->closure->proto->chunk.code;
    DISPATCH();
  }
  /* traverse_'s loop (vm/prim_loop.c): slot 0 is f, slot 1 the rest */
  CASE(EACH_STEP): {
    Value rest = slots[1];
    if (IS_NIL(rest)) {
      PUSH(UNIT_VAL);
      ip += 4; /* over CALL_BIND 1, BIND, EACH_NEXT: to the RETURN */
      DISPATCH();
    }
    PUSH(slots[0]);
    PUSH(AS_CONS(rest)->head);
    slots[1] = cons_tail(AS_CONS(rest));
    DISPATCH();
  }
  CASE(EACH_NEXT):
    sp--;
    ip = frame->closure->proto->chunk.code;
    DISPATCH();
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
  if (__builtin_expect(vm->halted, 0)) goto halted_stored;
prim_error:
  if (__builtin_expect(vm->halted, 0)) goto halted_stored; /* a primitive's C loop gave up */
  exc = unwind_error_exception(vm, thread);
  thread_note_raise(vm, thread, exc, NULL);
throw_exception:
  /* frame->ip was stored by the raising instruction */
  if (unwind(vm, thread, exc)) {
    LOAD_FRAME();
    DISPATCH();
  }
  if (thread == vm->main_thread || unwind_death_fails_run(vm, exc)) {
    vm->steps = steps;
    vm->failed_thread = thread;
    vm->failure = exc;
    return thread == vm->main_thread ? sched_main_ended(vm, SIM_FAILED) : SIM_FAILED;
  }
  goto next_thread;

switch_thread: /* EXPLORE_POINT: another thread runs now */
  STORE_FRAME();
  goto next_thread;

halted: /* a loop in C inside this instruction gave up: the run stops (vm_work_halts) */
  STORE_FRAME();
halted_stored:
  vm->halted = false;
  vm->steps = steps;
  return sched_stopped(vm);

limit_reached:
  /* at a call or bind, before it runs: the frame shows where the thread is */
  STORE_FRAME();
  vm->steps = steps - 1;
  return sched_stopped(vm);
}
