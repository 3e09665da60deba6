/* The dispatch loop. Computed goto where GCC/Clang allow it, a switch
 * otherwise (or when built with -DSIMVM_SWITCH_DISPATCH; the tests run both).
 *
 * ip, the frame and its slots are hoisted into locals; STORE_FRAME() writes
 * ip back before anything that can switch threads, grow a stack, raise or
 * collect, and LOAD_FRAME() reloads after. The stack pointer lives in the
 * thread (thread->sp), so the collector always sees the exact stack. */
#include "interp.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "mvar.h"
#include "sched.h"
#include "stm.h"

/* ---- errors and exceptions ---- */

#define MAX_TRACE_FRAMES 20   /* a stack overflow would print a million lines */

#ifndef SIMVM_PROFILED
bool interp_frame_location(VM *vm, const CallFrame *frame, const ObjProto **proto, int *line) {
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
#endif

#ifndef SIMVM_PROFILED
void interp_note_raise(VM *vm, ObjThread *thread, Value exc, ObjThread *from) {
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
    if (!interp_frame_location(vm, &thread->frames[i], &proto, &line)) continue;
    if (proto->prelude) continue;
    thread->raise_file = proto->file;
    thread->raise_line = line;
    break;
  }
}
#endif

/* A runtime-error exception carrying vm->error, where it happened and the stack trace. */
static Value error_exception(VM *vm, ObjThread *thread) {
  ObjException *exc = obj_exception(vm, EXC_ERROR, NULL);
  gc_push_root(vm, OBJ_VAL(exc));
  exc->message = obj_cstring(vm, vm->error);
  Buffer trace;
  buf_init(&trace);
  int shown = 0, hidden = 0;
  for (int i = thread->frame_count - 1; i >= 0; i--) {
    const ObjProto *proto;
    int line;
    if (!interp_frame_location(vm, &thread->frames[i], &proto, &line)) continue;
    if (!exc->where) exc->where = obj_stringf(vm, "%s:%d", proto->file, line);
    if (shown == MAX_TRACE_FRAMES) {
      hidden++;
      continue;
    }
    buf_printf(&trace, "  at %s:%d in %s\n", proto->file, line, proto->name ? proto->name->chars : "?");
    shown++;
  }
  if (hidden) buf_printf(&trace, "  ... and %d more frame%s\n", hidden, hidden == 1 ? "" : "s");
  if (trace.length) exc->trace = obj_string(vm, trace.data, (int)trace.length);
  buf_free(&trace);
  gc_pop_root(vm);
  vm->has_error = false;
  return OBJ_VAL(exc);
}

/* Deaths that need no report: kill() and the async library's cancel(). */
static bool quiet_death(Value exc) {
  if (IS_EXCEPTION(exc)) return AS_EXCEPTION(exc)->kind == EXC_KILLED;
  if (!IS_RECORD(exc)) return false;
  ObjRecord *record = AS_RECORD(exc);
  for (int i = 0; i < record->count; i++)
    if (strcmp(record->fields[i].name->chars, "kind") == 0 && IS_STRING(record->fields[i].value))
      return strcmp(AS_CSTRING(record->fields[i].value), "AsyncCancelled") == 0;
  return false;
}

#define DEATH_SHOW_LIMIT 200    /* bytes of the exception in a death report */
#define TRACE_SHOW_LIMIT 4096   /* bytes of a value in a trace event        */

/* `exc` as show renders it (strings quoted), on one line (line breaks and
 * other control bytes escaped) and at most `limit` bytes, then "...": the
 * report stays one line whatever the value, even one whose rendering,
 * sharing its parts, would take more memory than there is. */
static void show_one_line(Buffer *out, Value exc, size_t limit) {
  Buffer text;
  buf_init(&text);
  bool complete = value_show_bounded(&text, exc, true, limit);
  size_t length = text.length < limit ? text.length : limit;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text.data[i];
    if (c == '\n') buf_append(out, "\\n", 2);
    else if (c < 0x20 || c == 0x7f) buf_printf(out, "\\x%02x", c);
    else buf_append(out, (const char *)&c, 1);
  }
  if (!complete || text.length > limit) buf_append(out, "...", 3);
  if (!out->data) buf_append(out, "", 0);
  buf_free(&text);
}

/* The thread ends with an exception nobody caught. */
static void thread_died(VM *vm, ObjThread *thread, Value exc) {
  Buffer name_text;
  buf_init(&name_text);
  thread_name(&name_text, thread);
  const char *name = buf_text(&name_text);
  Buffer text;
  buf_init(&text);
  show_one_line(&text, exc, TRACE_SHOW_LIMIT);
  vm_trace(vm, thread, "died: %s", text.data);
  Buffer when;
  buf_init(&when);
  duration_show(&when, vm->now);
  if (IS_EXCEPTION(exc) && AS_EXCEPTION(exc)->kind == EXC_ERROR) {
    ObjException *e = AS_EXCEPTION(exc);
    Buffer report;
    buf_init(&report);
    buf_printf(&report, "%s: runtime error: %s\n  in thread %s at simulated time %s\n",
               e->where ? e->where->chars : "simvm", e->message->chars, name, when.data);
    if (e->trace) buf_append(&report, e->trace->chars, (size_t)e->trace->length);
    if (vm->config.write_error) vm->config.write_error(vm->config.user, report.data, report.length);
    buf_free(&report);
  } else if (thread == vm->main_thread) {
    vm_report(vm, "simvm: uncaught exception %s in thread %s at simulated time %s\n", text.data, name, when.data);
  } else if (!quiet_death(exc)) {
    /* as GHC reports a forked thread's uncaught exception: one line */
    Buffer report;
    buf_init(&report);
    buf_printf(&report, "simvm: thread %s at %s: uncaught ", name, when.data);
    show_one_line(&report, exc, DEATH_SHOW_LIMIT);
    if (thread->raise_file) buf_printf(&report, " at %s:%d", thread->raise_file, thread->raise_line);
    if (thread->raised_by) {
      buf_append(&report, " (thrown by thread ", 19);
      thread_name(&report, thread->raised_by);
      buf_append(&report, ")", 1);
    }
    buf_append(&report, "\n", 1);
    if (vm->config.write_error) vm->config.write_error(vm->config.user, report.data, report.length);
    buf_free(&report);
  }
  buf_free(&text);
  buf_free(&when);
  buf_free(&name_text);
  sched_thread_done(vm, thread);
}

/* Unwind `thread` to the innermost frame with a handler it has not entered
 * yet, and start that handler with the exception pushed. False when no
 * frame handles it: the thread has died. */
static bool unwind(VM *vm, ObjThread *thread, Value exc) {
  while (thread->frame_count > 0) {
    CallFrame *frame = &thread->frames[thread->frame_count - 1];
    ObjProto *proto = frame->closure->proto;
    if (proto->handler >= 0 && frame->ip <= proto->chunk.code + proto->handler) {
      thread->sp = frame->slots + proto->handler_depth;
      *thread->sp++ = exc;
      frame->ip = proto->chunk.code + proto->handler;
      return true;
    }
    thread->frame_count--;
  }
  thread_died(vm, thread, exc);
  return false;
}

static const char *const mask_names[] = {"Unmasked", "MaskedInterruptible", "MaskedUninterruptible"};

/* Change the masking state, tracing real changes (`internal`: by the
 * prelude's code, see vm_trace_internal). */
static void set_mask(VM *vm, ObjThread *thread, MaskState mask, bool internal) {
  if (thread->mask != mask) vm_trace_internal(vm, thread, internal, "mask %s", mask_names[mask]);
  thread->mask = mask;
}

/* The masking state named by a string, or -1. */
static int mask_from_name(Value name) {
  if (!IS_STRING(name)) return -1;
  for (int i = 0; i < 3; i++)
    if (strcmp(AS_CSTRING(name), mask_names[i]) == 0) return i;
  return -1;
}

/* ---- arithmetic ---- */

#define NUMERIC(v) (IS_INT(v) || IS_FLOAT(v))
#define TO_DOUBLE(v) (IS_INT(v) ? (double)AS_INT(v) : AS_FLOAT(v))

static bool type_error(VM *vm, const char *verb, Value a, Value b) {
  rt_error(vm, "cannot %s %s and %s", verb, value_type_name(a), value_type_name(b));
  return false;
}

static bool arith(VM *vm, OpCode op, Value a, Value b, Value *out) {
  int64_t r;
  if (IS_INT(a) && IS_INT(b)) {
    int64_t x = AS_INT(a), y = AS_INT(b);
    switch (op) {
      case OP_ADD: if (__builtin_add_overflow(x, y, &r)) goto overflow; break;
      case OP_SUB: if (__builtin_sub_overflow(x, y, &r)) goto overflow; break;
      case OP_MUL: if (__builtin_mul_overflow(x, y, &r)) goto overflow; break;
      case OP_DIV:
      case OP_MOD:
        if (y == 0) { rt_error(vm, "division by zero"); return false; }
        if (y == -1) {
          if (op == OP_MOD) { r = 0; break; } /* INT64_MIN % -1 would trap in C */
          if (x == INT64_MIN) goto overflow;
        }
        r = op == OP_DIV ? x / y : x % y;
        break;
      default: return false;
    }
    *out = INT_VAL(r);
    return true;
  }
  if (NUMERIC(a) && NUMERIC(b)) {
    double x = TO_DOUBLE(a), y = TO_DOUBLE(b);
    switch (op) {
      case OP_ADD: *out = FLOAT_VAL(x + y); break;
      case OP_SUB: *out = FLOAT_VAL(x - y); break;
      case OP_MUL: *out = FLOAT_VAL(x * y); break;
      case OP_DIV: *out = FLOAT_VAL(x / y); break;
      case OP_MOD: *out = FLOAT_VAL(fmod(x, y)); break;
      default: return false;
    }
    return true;
  }
  /* durations: d+d, d-d, n*d, d*n, d/n, d/d (an int), d%d */
  if (IS_DURATION(a) && IS_DURATION(b)) {
    int64_t x = AS_DURATION(a), y = AS_DURATION(b);
    switch (op) {
      case OP_ADD: if (__builtin_add_overflow(x, y, &r)) goto overflow; *out = DURATION_VAL(r); return true;
      case OP_SUB: if (__builtin_sub_overflow(x, y, &r)) goto overflow; *out = DURATION_VAL(r); return true;
      case OP_DIV:
      case OP_MOD:
        if (y == 0) { rt_error(vm, "division by a zero duration"); return false; }
        if (y == -1 && op == OP_MOD) { *out = DURATION_VAL(0); return true; } /* as for ints; C would trap */
        if (x == INT64_MIN && y == -1) goto overflow;
        *out = op == OP_DIV ? INT_VAL(x / y) : DURATION_VAL(x % y);
        return true;
      default: break;
    }
  } else if (op == OP_MUL && ((IS_INT(a) && IS_DURATION(b)) || (IS_DURATION(a) && IS_INT(b)))) {
    if (__builtin_mul_overflow(AS_INT(a), AS_INT(b), &r)) goto overflow;
    *out = DURATION_VAL(r);
    return true;
  } else if (op == OP_DIV && IS_DURATION(a) && IS_INT(b)) {
    if (AS_INT(b) == 0) { rt_error(vm, "division by zero"); return false; }
    if (AS_INT(a) == INT64_MIN && AS_INT(b) == -1) goto overflow;
    *out = DURATION_VAL(AS_INT(a) / AS_INT(b));
    return true;
  }
  {
    static const char *verbs[] = {[OP_ADD] = "add", [OP_SUB] = "subtract", [OP_MUL] = "multiply",
                                  [OP_DIV] = "divide", [OP_MOD] = "take the remainder of"};
    if (op == OP_ADD && (IS_STRING(a) || IS_STRING(b))) {
      rt_error(vm, "cannot add %s and %s (join strings with ++, convert with show)", value_type_name(a),
               value_type_name(b));
      return false;
    }
    return type_error(vm, verbs[op], a, b);
  }
overflow:
  rt_error(vm, "%s overflow in %s", IS_DURATION(a) || IS_DURATION(b) ? "duration" : "integer",
           op == OP_ADD ? "addition" : op == OP_SUB ? "subtraction" : op == OP_MUL ? "multiplication" : "division");
  return false;
}

/* -1, 0, 1 into *order; false (error set) when the values are not ordered. */
static bool compare(VM *vm, Value a, Value b, int *order) {
  if (IS_STRING(a) && IS_STRING(b)) vm_work(vm, (uint64_t)AS_STRING(a)->length);
  return value_compare(a, b, order) || type_error(vm, "compare", a, b);
}

/* a ++ b for strings and lists; the result replaces nothing (caller pops). */
static bool concat(VM *vm, Value a, Value b, Value *out) {
  if (IS_STRING(a) && IS_STRING(b)) {
    ObjString *x = AS_STRING(a), *y = AS_STRING(b);
    size_t length = (size_t)x->length + (size_t)y->length;
    if (length > INT32_MAX) {
      rt_error(vm, "string too long");
      return false;
    }
    /* copied once, not hashed (strings made at run time are not interned);
     * a and b stay rooted on the stack while it is allocated */
    ObjString *s = obj_string_new(vm, (int)length);
    memcpy(s->chars, x->chars, (size_t)x->length);
    memcpy(s->chars + x->length, y->chars, (size_t)y->length);
    vm_work(vm, length);
    *out = OBJ_VAL(s);
    return true;
  }
  if (IS_LIST(a) && IS_LIST(b)) {
    if (IS_NIL(a)) {
      *out = b;
      return true;
    }
    /* copy a's cells, in order, onto b: build the copy front to back */
    ObjCons *first = obj_cons(vm, AS_CONS(a)->head, b);
    gc_push_root(vm, OBJ_VAL(first));
    ObjCons *last = first;
    uint64_t cells = 1;
    for (Value v = AS_CONS(a)->tail; IS_CONS(v); v = AS_CONS(v)->tail, cells++) {
      ObjCons *cell = obj_cons(vm, AS_CONS(v)->head, b);
      last->tail = OBJ_VAL(cell);
      last = cell;
    }
    gc_pop_root(vm);
    vm_work(vm, cells);
    *out = OBJ_VAL(first);
    return true;
  }
  if (IS_STRING(a) || IS_STRING(b)) {
    rt_error(vm, "cannot concatenate %s and %s (convert with show)", value_type_name(a), value_type_name(b));
    return false;
  }
  return type_error(vm, "concatenate", a, b);
}

static bool get_field(VM *vm, Value object, ObjString *name, Value *out) {
  if (!IS_RECORD(object)) {
    rt_error(vm, "cannot read field '%s' of %s", name->chars, value_type_name(object));
    return false;
  }
  ObjRecord *record = AS_RECORD(object);
  for (int i = 0; i < record->count; i++) {
    if (record->fields[i].name == name) {
      vm_work(vm, (uint64_t)i);
      *out = record->fields[i].value;
      return true;
    }
  }
  vm_work(vm, (uint64_t)record->count);
  rt_error(vm, "record has no field '%s'", name->chars);
  return false;
}

static bool get_index(VM *vm, Value object, Value index, Value *out) {
  if (IS_LIST(object)) {
    if (!IS_INT(index)) {
      rt_error(vm, "a list index must be an int, not %s", value_type_name(index));
      return false;
    }
    int64_t i = AS_INT(index), n = 0;
    for (Value v = object; IS_CONS(v); v = AS_CONS(v)->tail, n++) {
      if (n == i) {
        vm_work(vm, (uint64_t)n);
        *out = AS_CONS(v)->head;
        return true;
      }
    }
    vm_work(vm, (uint64_t)n);
    rt_error(vm, "list index %" PRId64 " out of range (length %" PRId64 ")", i, n);
    return false;
  }
  if (IS_RECORD(object) && IS_STRING(index)) {
    /* field names are interned: a name that is not has no field */
    ObjString *name = obj_find_interned(vm, AS_STRING(index));
    if (name) return get_field(vm, object, name, out);
    rt_error(vm, "record has no field '%s'", AS_CSTRING(index));
    return false;
  }
  rt_error(vm, "cannot index %s with %s", value_type_name(object), value_type_name(index));
  return false;
}

static void emit_say(VM *vm, ObjThread *thread, Value what) {
  Buffer text;
  buf_init(&text);
  value_show(&text, what, false);
  vm_work(vm, text.length);
  if (vm->config.write_say) {
    buf_append(&text, "\n", 1);
    vm->config.write_say(vm->config.user, text.data, text.length);
    text.data[--text.length] = '\0';
  }
  if (traced(vm)) {
    Buffer quoted;
    buf_init(&quoted);
    buf_append_quoted(&quoted, text.data ? text.data : "", text.length);
    vm_trace(vm, thread, "say %s", quoted.data);
    buf_free(&quoted);
  }
  buf_free(&text);
}

/* Trace an event followed by a shown value ("throw ThreadKilled");
 * `internal` as for vm_trace_internal. */
static void trace_value(VM *vm, ObjThread *thread, const char *event, Value value, bool quote, bool internal) {
  if (!traced(vm)) return;
  Buffer text;
  buf_init(&text);
  if (!value_show_bounded(&text, value, quote, TRACE_SHOW_LIMIT)) buf_append(&text, "...", 3);
  vm_trace_internal(vm, thread, internal, "%s%s", event, buf_text(&text));
  buf_free(&text);
}

/* The primitives whose trace events are internal when the prelude's code
 * calls them: run from an action value, the value says who built it. */
static const bool origin_ops[OP_COUNT] = {[OP_ATOMICALLY] = true, [OP_WITH_MASK] = true, [OP_CATCH] = true,
                                          [OP_THROW] = true};

/* ---- the loop ---- */

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
  ObjThread *thread;
  CallFrame *frame;
  uint8_t *ip;
  Value *slots;
  Value *constants;
  uint8_t op;
  Value exc;
  SimStatus status = SIM_OK;
  thread = NULL;
  frame = NULL;
  ip = NULL;
  slots = constants = NULL;
  bool from_action = false, action_prelude = false; /* see origin_ops */
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
#define RUNTIME_ERROR(...)   \
  do {                       \
    rt_error(vm, __VA_ARGS__); \
    goto runtime_error;      \
  } while (0)
/* A blocking operation is an interruptible point: with exceptions masked
 * (interruptibly), one that waits for this thread is raised here. */
#define INTERRUPTIBLE_POINT()                                     \
  do {                                                            \
    if (thread->pending_count && thread->mask != MASK_UNINTERRUPTIBLE) { \
      STORE_FRAME();                                              \
      exc = sched_take_pending(vm, thread);                       \
      goto throw_exception;                                       \
    }                                                             \
  } while (0)
/* Effects other than TVar access are not allowed inside a transaction. */
#define NOT_IN_TRANSACTION(name)                                                                 \
  do {                                                                                           \
    if (thread->in_transaction)                                                                  \
      RUNTIME_ERROR("%s inside atomically: a transaction may only use TVars (readTVar, writeTVar, " \
                    "newTVar, retry, orElse, throw)", name);                                     \
  } while (0)
/* TVar operations that only make sense inside a transaction. */
#define IN_TRANSACTION(name)                                                                     \
  do {                                                                                           \
    if (!thread->in_transaction)                                                                 \
      RUNTIME_ERROR("%s outside a transaction: run it with atomically(...)", name);             \
  } while (0)
/* Run one of the VM's own prototypes on the top `argc` stack values. */
#define ENTER_INTERNAL(closure, argc)                                        \
  do {                                                                     \
    STORE_FRAME();                                                         \
    if (!thread_reserve(vm, thread, (closure)->proto->max_slots)) RUNTIME_ERROR("stack overflow"); \
    if (!thread_push_frame(vm, thread, (closure), thread->sp - (argc)))     \
      RUNTIME_ERROR("stack overflow (%d nested binds)", THREAD_MAX_FRAMES); \
    LOAD_FRAME();                                                          \
    DISPATCH();                                                            \
  } while (0)
/* Whether the primitive running now (one of origin_ops) was called by the
 * prelude's code: directly, or by running an action value it built. */
#define CALLED_BY_PRELUDE() (from_action ? (from_action = false, action_prelude) : frame->closure->proto->prelude)
/* The one check before every instruction: the instructions run against
 * stop_at, which vm_update_stop lowers for --max-steps and --max-work and
 * vm_stop (a signal handler, a trace cap, an output error) sets to 0. It
 * is read from memory each time, so a stop is seen at the next
 * instruction; no other per-instruction test is needed. */
#define STEP_CHECK() \
  __builtin_expect(steps++ >= atomic_load_explicit(&vm->stop_at, memory_order_relaxed), 0)
#define CHECK(ok) \
  do {            \
    if (!(ok)) goto runtime_error; \
  } while (0)

#ifdef COMPUTED_GOTO
  static void *const dispatch_table[OP_COUNT] = {
#define OPCODE(name, operand, pops, effect, where, doc) [OP_##name] = &&op_##name,
#include "opcodes.def"
#undef OPCODE
  };
#define CASE(name) op_##name
#define DISPATCH()                                    \
  do {                                                \
    if (STEP_CHECK()) goto step_limit_reached;        \
    op = READ_BYTE();                                 \
    PROFILE_INSTRUCTION();                            \
    goto *dispatch_table[op];                         \
  } while (0)
#define EXECUTE(o) goto *dispatch_table[(op = (o))]
#define LOOP_START DISPATCH();
#define LOOP_END
#else
#define CASE(name) case OP_##name
#define DISPATCH() goto fetch
#define EXECUTE(o) do { op = (o); goto execute; } while (0)
#define LOOP_START                                                       \
  fetch:                                                                 \
  if (STEP_CHECK()) goto step_limit_reached;                             \
  op = READ_BYTE();                                                      \
  PROFILE_INSTRUCTION();                                                 \
  execute:                                                               \
  switch ((OpCode)op) {
#define LOOP_END \
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
    const Builtin *builtin = &builtin_table[READ_BYTE()];
    STORE_FRAME();
    ObjAction *action = obj_action(vm, (uint8_t)builtin->op, builtin->arity, thread->sp - builtin->arity);
    action->prelude = frame->closure->proto->prelude;
    thread->sp -= builtin->arity;
    PUSH(OBJ_VAL(action));
    DISPATCH();
  }

  CASE(ADD):
  CASE(SUB):
  CASE(MUL):
  CASE(DIV):
  CASE(MOD): {
    Value b = PEEK(0), a = PEEK(1), result;
    if (IS_INT(a) && IS_INT(b) && op == OP_ADD && !__builtin_add_overflow(AS_INT(a), AS_INT(b), &result.as.integer)) {
      result.type = VAL_INT;
    } else {
      STORE_FRAME();
      CHECK(arith(vm, (OpCode)op, a, b, &result));
    }
    thread->sp--;
    PEEK(0) = result;
    DISPATCH();
  }
  CASE(NEG): {
    Value a = PEEK(0);
    if (IS_INT(a) && AS_INT(a) != INT64_MIN) PEEK(0) = INT_VAL(-AS_INT(a));
    else if (IS_FLOAT(a)) PEEK(0) = FLOAT_VAL(-AS_FLOAT(a));
    else if (IS_DURATION(a) && AS_INT(a) != INT64_MIN) PEEK(0) = DURATION_VAL(-AS_INT(a));
    else if (IS_INT(a) || IS_DURATION(a)) RUNTIME_ERROR("%s overflow in negation", IS_INT(a) ? "integer" : "duration");
    else RUNTIME_ERROR("cannot negate %s", value_type_name(a));
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
    CHECK(compare(vm, PEEK(1), PEEK(0), &order));
    /* order 2 means unordered (NaN): every comparison is false */
    bool result = op == OP_LT ? order == -1 : op == OP_LE ? (order == -1 || order == 0)
                : op == OP_GT ? order == 1 : (order == 0 || order == 1);
    thread->sp--;
    PEEK(0) = BOOL_VAL(result);
    DISPATCH();
  }
  CASE(CONCAT): {
    Value result;
    STORE_FRAME();
    CHECK(concat(vm, PEEK(1), PEEK(0), &result));
    thread->sp--;
    PEEK(0) = result;
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
    CHECK(get_field(vm, PEEK(0), name, &PEEK(0)));
    DISPATCH();
  }
  CASE(INDEX): {
    Value result;
    STORE_FRAME();
    CHECK(get_index(vm, PEEK(1), PEEK(0), &result));
    thread->sp--;
    PEEK(0) = result;
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
        ObjAction *call = obj_action(vm, OP_RUN_CALL, argc + 1, thread->sp - argc - 1);
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
      } else {
        if (!thread_reserve(vm, thread, proto->max_slots)) RUNTIME_ERROR("stack overflow");
        if (!thread_push_frame(vm, thread, closure, thread->sp - argc - 1))
          RUNTIME_ERROR("stack overflow (%d nested calls)", THREAD_MAX_FRAMES);
      }
      LOAD_FRAME();
      DISPATCH();
    }
    STORE_FRAME();
    if (IS_BUILTIN(callee)) {
      const Builtin *builtin = AS_BUILTIN(callee)->builtin;
      if (argc != builtin->arity)
        RUNTIME_ERROR("'%s' takes %d argument%s, but %d %s given", builtin->name, builtin->arity,
                      builtin->arity == 1 ? "" : "s", argc, argc == 1 ? "is" : "are");
      Value result;
      if (builtin->native) {
        CHECK(builtin->native(vm, thread->sp - argc, &result));
      } else {
        ObjAction *action = obj_action(vm, (uint8_t)builtin->op, argc, thread->sp - argc);
        action->prelude = frame->closure->proto->prelude;
        result = OBJ_VAL(action);
      }
      thread->sp -= argc + 1;
      PUSH(result);
      DISPATCH();
    }
    if (IS_BLOCK_CLOSURE(callee) || IS_ACTION(callee))
      RUNTIME_ERROR("cannot call an action: run it with '<-' or as a statement instead");
    RUNTIME_ERROR("cannot call %s: it is not a function", value_type_name(callee));
  }
  CASE(RETURN): {
    Value result = POP();
    thread->sp = slots;
    thread->frame_count--;
    LOAD_FRAME();
    PUSH(result);
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
      ObjClosure *closure = AS_CLOSURE(action);
      STORE_FRAME();
      if (!thread_reserve(vm, thread, closure->proto->max_slots)) RUNTIME_ERROR("stack overflow");
      if (!thread_push_frame(vm, thread, closure, thread->sp - 1))
        RUNTIME_ERROR("stack overflow (%d nested binds)", THREAD_MAX_FRAMES);
      LOAD_FRAME();
      DISPATCH();
    }
    if (IS_ACTION(action)) {
      ObjAction *primitive = AS_ACTION(action);
      thread->sp--;
      STORE_FRAME();
      if (!thread_reserve(vm, thread, primitive->argc + 1)) RUNTIME_ERROR("stack overflow");
      for (int i = 0; i < primitive->argc; i++) PUSH(primitive->args[i]);
      if (origin_ops[primitive->op]) {
        from_action = true;
        action_prelude = primitive->prelude;
      }
      if (primitive->op != OP_RUN_CALL) EXECUTE(primitive->op);
      /* a suspended call: the closure and its arguments become the frame's slots */
      ObjClosure *closure = AS_CLOSURE(primitive->args[0]);
      if (!thread_reserve(vm, thread, closure->proto->max_slots)) RUNTIME_ERROR("stack overflow");
      if (!thread_push_frame(vm, thread, closure, thread->sp - primitive->argc))
        RUNTIME_ERROR("stack overflow (%d nested binds)", THREAD_MAX_FRAMES);
      LOAD_FRAME();
      DISPATCH();
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
  CASE(PURE): DISPATCH();

  CASE(NEW_TVAR): {
    STORE_FRAME();
    ObjTVar *tvar = obj_tvar(vm, PEEK(0));
    PEEK(0) = OBJ_VAL(tvar);
    DISPATCH();
  }
  CASE(READ_TVAR):
    IN_TRANSACTION("readTVar");
    /* fall into READ_TVAR_IO after recording the read */
    if (!IS_TVAR(PEEK(0))) RUNTIME_ERROR("readTVar needs a TVar, not %s", value_type_name(PEEK(0)));
    stm_read(vm, thread, AS_TVAR(PEEK(0)));
    PEEK(0) = AS_TVAR(PEEK(0))->value;
    DISPATCH();
  CASE(READ_TVAR_IO):
    if (!IS_TVAR(PEEK(0))) RUNTIME_ERROR("readTVarIO needs a TVar, not %s", value_type_name(PEEK(0)));
    if (thread->in_transaction) stm_read(vm, thread, AS_TVAR(PEEK(0)));
    PEEK(0) = AS_TVAR(PEEK(0))->value;
    DISPATCH();
  CASE(WRITE_TVAR): {
    IN_TRANSACTION("writeTVar");
    Value value = PEEK(0), target = PEEK(1);
    if (!IS_TVAR(target)) RUNTIME_ERROR("writeTVar needs a TVar, not %s", value_type_name(target));
    stm_write(vm, thread, AS_TVAR(target), value);
    thread->sp--;
    PEEK(0) = UNIT_VAL;
    DISPATCH();
  }
  CASE(TRACE_TVAR): {
    Value f = PEEK(0), target = PEEK(1);
    if (!IS_TVAR(target)) {
      STORE_FRAME();
      Buffer what;
      buf_init(&what);
      value_show(&what, f, false);
      rt_error(vm, "traceTVar needs a TVar and a function of (old, new): got %s and %s", value_type_name(target),
               buf_text(&what));
      buf_free(&what);
      goto runtime_error;
    }
    int arity = IS_FUNCTION_CLOSURE(f) ? AS_CLOSURE(f)->proto->arity : IS_BUILTIN(f) ? AS_BUILTIN(f)->builtin->arity : -1;
    if (arity != 2) {
      STORE_FRAME();
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
      goto runtime_error;
    }
    AS_TVAR(target)->trace_fn = f;
    thread->sp--;
    PEEK(0) = UNIT_VAL;
    DISPATCH();
  }
  CASE(LABEL_TVAR): {
    Value label = PEEK(0), target = PEEK(1);
    if (!IS_TVAR(target)) RUNTIME_ERROR("labelTVar needs a TVar, not %s", value_type_name(target));
    if (!IS_STRING(label)) RUNTIME_ERROR("labelTVar needs a string label, not %s", value_type_name(label));
    AS_TVAR(target)->label = AS_STRING(label);
    thread->sp--;
    PEEK(0) = UNIT_VAL;
    DISPATCH();
  }
  CASE(ATOMICALLY): {
    bool internal = CALLED_BY_PRELUDE();
    if (thread->in_transaction) RUNTIME_ERROR("atomically inside atomically: transactions do not nest");
    Value action = PEEK(0);
    if (!IS_BLOCK_CLOSURE(action) && !IS_ACTION(action))
      RUNTIME_ERROR("atomically needs a transaction to run, not %s", value_type_name(action));
    ENTER_INTERNAL(internal ? vm->prelude_atomically : vm->atomically_closure, 1);
  }
  CASE(RETRY):
    IN_TRANSACTION("retry");
    PUSH(UNIT_VAL);
    STORE_FRAME();
    exc = OBJ_VAL(vm->retry_signal);
    goto throw_exception;
  CASE(OR_ELSE): {
    IN_TRANSACTION("orElse");
    Value right = PEEK(0), left = PEEK(1);
    if ((!IS_BLOCK_CLOSURE(left) && !IS_ACTION(left)) || (!IS_BLOCK_CLOSURE(right) && !IS_ACTION(right)))
      RUNTIME_ERROR("orElse needs two transactions, not %s and %s", value_type_name(left), value_type_name(right));
    ENTER_INTERNAL(vm->or_else_closure, 2);
  }
  CASE(REGISTER_DELAY): {
    NOT_IN_TRANSACTION("registerDelay");
    Value d = PEEK(0);
    if (!IS_DURATION(d)) RUNTIME_ERROR("registerDelay needs a duration, not %s", value_type_name(d));
    STORE_FRAME();
    ObjTVar *tvar = obj_tvar(vm, BOOL_VAL(AS_DURATION(d) < 0));
    if (AS_DURATION(d) >= 0) sched_arm_tvar(vm, tvar, AS_DURATION(d));
    PEEK(0) = OBJ_VAL(tvar);
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
  CASE(RUN_CALL): RUNTIME_ERROR("internal error: RUN_CALL is not an instruction");

  CASE(DELAY): {
    NOT_IN_TRANSACTION("delay");
    Value d = POP();
    if (!IS_DURATION(d)) {
      if (IS_INT(d)) RUNTIME_ERROR("delay needs a duration, not int (write %" PRId64 "us, or n * 1us)", AS_INT(d));
      RUNTIME_ERROR("delay needs a duration, not %s", value_type_name(d));
    }
    /* a negative delay returns at once, without blocking or yielding (io-sim) */
    if (AS_DURATION(d) >= 0) INTERRUPTIBLE_POINT();
    PUSH(UNIT_VAL);
    STORE_FRAME();
    if (traced(vm)) {
      Buffer text;
      buf_init(&text);
      duration_show(&text, AS_DURATION(d));
      vm_trace(vm, thread, "delay %s", text.data);
      buf_free(&text);
    }
    if (AS_DURATION(d) < 0) DISPATCH();
    sched_delay(vm, thread, AS_DURATION(d));
    goto next_thread;
  }
  CASE(SAY): {
    NOT_IN_TRANSACTION("say");
    if (IS_BLOCK_CLOSURE(PEEK(0)) || IS_ACTION(PEEK(0)))
      RUNTIME_ERROR("say got an action, not its result: run it first (`x <- act`, then say(show(x)))");
    STORE_FRAME();
    emit_say(vm, thread, PEEK(0));
    PEEK(0) = UNIT_VAL;
    DISPATCH();
  }
  CASE(FORK): {
    NOT_IN_TRANSACTION("fork");
    Value action = PEEK(0);
    if (!IS_BLOCK_CLOSURE(action) && !IS_ACTION(action))
      RUNTIME_ERROR("fork needs an action, not %s", value_type_name(action));
    STORE_FRAME();
    if (vm->config.max_threads && vm->live_threads >= vm->config.max_threads) {
      vm->steps = steps;
      vm_report(vm, "simvm: thread limit reached: %d threads alive (--max-threads)\n", vm->live_threads);
      return SIM_LIMIT;
    }
    ObjThread *child = thread_new(vm, thread, action);
    vm->stats.forks++;
    child->mask = thread->mask; /* as forkIO: the child starts in the parent's masking state */
    sched_enqueue(vm, child);
    if (traced(vm)) {
      Buffer id;
      buf_init(&id);
      thread_id(&id, child);
      vm_trace(vm, thread, "fork %s", buf_text(&id));
      buf_free(&id);
    }
    PEEK(0) = OBJ_VAL(child);
    DISPATCH();
  }
  CASE(NOW):
    NOT_IN_TRANSACTION("now");
    PUSH(DURATION_VAL(vm->now));
    DISPATCH();
  CASE(MY_THREAD_ID):
    NOT_IN_TRANSACTION("myThreadId");
    PUSH(OBJ_VAL(thread));
    DISPATCH();
  CASE(LABEL_THREAD): {
    NOT_IN_TRANSACTION("labelThread");
    Value label = PEEK(0), target = PEEK(1);
    if (!IS_THREAD(target)) RUNTIME_ERROR("labelThread needs a thread id, not %s", value_type_name(target));
    if (!IS_STRING(label)) RUNTIME_ERROR("labelThread needs a string label, not %s", value_type_name(label));
    AS_THREAD(target)->label = AS_STRING(label);
    if (vm->profile) profile_thread_label(vm, AS_THREAD(target));
    if (vm->config.timeline) timeline_label(vm, AS_THREAD(target));
    if (traced(vm)) {
      Buffer text;
      buf_init(&text);
      thread_id(&text, AS_THREAD(target));
      buf_append(&text, " ", 1);
      buf_append_quoted(&text, AS_CSTRING(label), (size_t)AS_STRING(label)->length);
      vm_trace(vm, thread, "label %s", buf_text(&text));
      buf_free(&text);
    }
    thread->sp--;
    PEEK(0) = UNIT_VAL;
    DISPATCH();
  }
  CASE(KILL):
    PUSH(OBJ_VAL(vm->thread_killed)); /* kill(t) is throwTo(t, ThreadKilled) */
    goto throw_to;
  CASE(THROW_TO):
  throw_to: {
    NOT_IN_TRANSACTION(op == OP_KILL ? "kill" : "throwTo");
    Value target = PEEK(1);
    exc = PEEK(0);
    const char *what = op == OP_KILL ? "kill" : "throwTo";
    if (!IS_THREAD(target)) RUNTIME_ERROR("%s needs a thread id, not %s", what, value_type_name(target));
    STORE_FRAME();
    if (traced(vm)) {
      Buffer text;
      buf_init(&text);
      thread_id(&text, AS_THREAD(target));
      if (op != OP_KILL) {
        buf_append(&text, " ", 1);
        value_show(&text, exc, true);
      }
      vm_trace(vm, thread, "%s %s", what, buf_text(&text));
      buf_free(&text);
    }
    if (AS_THREAD(target) == thread) { /* to itself: synchronous */
      interp_note_raise(vm, thread, exc, NULL);
      goto throw_exception;
    }
    thread->sp--;
    PEEK(0) = UNIT_VAL;
    /* a throw that would wait is an interruptible point: an exception
     * already waiting for this thread comes first, and nothing is thrown */
    if (!sched_would_deliver(AS_THREAD(target))) INTERRUPTIBLE_POINT();
    if (sched_throw_to(vm, thread, AS_THREAD(target), exc)) DISPATCH();
    /* the target has exceptions masked: wait until it takes this one */
    sched_block(vm, thread, BLOCKED_THROW);
    thread->wait_object = &AS_THREAD(target)->obj;
    goto next_thread;
  }
  CASE(THROW): {
    bool internal = CALLED_BY_PRELUDE();
    exc = POP();
    PUSH(UNIT_VAL);
    STORE_FRAME();
    interp_note_raise(vm, thread, exc, NULL);
    trace_value(vm, thread, "throw ", exc, true, internal);
    goto throw_exception;
  }
  CASE(CATCH): {
    bool internal = CALLED_BY_PRELUDE();
    NOT_IN_TRANSACTION("catch");
    Value handler = PEEK(0), action = PEEK(1);
    if (!IS_BLOCK_CLOSURE(action) && !IS_ACTION(action))
      RUNTIME_ERROR("catch needs an action to run, not %s", value_type_name(action));
    if (!IS_FUNCTION_CLOSURE(handler) && !IS_BUILTIN(handler))
      RUNTIME_ERROR("catch needs a handler function, not %s", value_type_name(handler));
    ENTER_INTERNAL(internal ? vm->prelude_catch : vm->catch_closure, 2);
  }
  CASE(WITH_MASK): {
    bool internal = CALLED_BY_PRELUDE();
    NOT_IN_TRANSACTION("withMaskingState");
    Value action = PEEK(0);
    /* the prelude passes the state it saved as an int: only 0 to 2 are states */
    int64_t given = IS_INT(PEEK(1)) ? AS_INT(PEEK(1)) : -1;
    int state = given >= MASK_NONE && given <= MASK_UNINTERRUPTIBLE ? (int)given : mask_from_name(PEEK(1));
    if (state < 0)
      RUNTIME_ERROR("withMaskingState needs \"Unmasked\", \"MaskedInterruptible\" or \"MaskedUninterruptible\"");
    if (!IS_BLOCK_CLOSURE(action) && !IS_ACTION(action))
      RUNTIME_ERROR("withMaskingState needs an action to run, not %s", value_type_name(action));
    PEEK(1) = INT_VAL(state);
    ENTER_INTERNAL(internal ? vm->prelude_mask : vm->mask_closure, 2);
  }
  CASE(GET_MASK): {
    NOT_IN_TRANSACTION("getMaskingState");
    STORE_FRAME();
    ObjString *name = obj_cstring(vm, mask_names[thread->mask]);
    PUSH(OBJ_VAL(name));
    DISPATCH();
  }

  CASE(NEW_MVAR): {
    NOT_IN_TRANSACTION("newMVar");
    STORE_FRAME();
    ObjMVar *mvar = obj_mvar(vm, true, PEEK(0));
    PEEK(0) = OBJ_VAL(mvar);
    DISPATCH();
  }
  CASE(NEW_EMPTY_MVAR): {
    NOT_IN_TRANSACTION("newEmptyMVar");
    STORE_FRAME();
    ObjMVar *mvar = obj_mvar(vm, false, UNIT_VAL);
    PUSH(OBJ_VAL(mvar));
    DISPATCH();
  }
  CASE(TAKE_MVAR):
  CASE(READ_MVAR): {
    NOT_IN_TRANSACTION(op == OP_TAKE_MVAR ? "takeMVar" : "readMVar");
    Value target = PEEK(0);
    if (!IS_MVAR(target))
      RUNTIME_ERROR("%s needs an MVar, not %s", op == OP_TAKE_MVAR ? "takeMVar" : "readMVar", value_type_name(target));
    STORE_FRAME();
    Value value;
    bool done = op == OP_TAKE_MVAR ? mvar_try_take(vm, AS_MVAR(target), &value) : mvar_try_read(AS_MVAR(target), &value);
    if (done) {
      PEEK(0) = value;
      DISPATCH();
    }
    INTERRUPTIBLE_POINT();
    PEEK(0) = UNIT_VAL; /* replaced by the value when a put hands it over */
    mvar_wait(vm, AS_MVAR(target), thread, op == OP_TAKE_MVAR ? BLOCKED_TAKE : BLOCKED_READ, UNIT_VAL);
    trace_value(vm, thread, op == OP_TAKE_MVAR ? "takeMVar blocked on " : "readMVar blocked on ", target, false, false);
    goto next_thread;
  }
  CASE(PUT_MVAR): {
    NOT_IN_TRANSACTION("putMVar");
    Value value = PEEK(0), target = PEEK(1);
    if (!IS_MVAR(target)) RUNTIME_ERROR("putMVar needs an MVar, not %s", value_type_name(target));
    STORE_FRAME();
    if (mvar_try_put(vm, AS_MVAR(target), value)) {
      thread->sp--;
      PEEK(0) = UNIT_VAL;
      DISPATCH();
    }
    INTERRUPTIBLE_POINT();
    thread->sp--;
    PEEK(0) = UNIT_VAL;
    mvar_wait(vm, AS_MVAR(target), thread, BLOCKED_PUT, value);
    trace_value(vm, thread, "putMVar blocked on ", target, false, false);
    goto next_thread;
  }
  CASE(TRY_TAKE_MVAR): {
    NOT_IN_TRANSACTION("tryTakeMVar");
    Value target = PEEK(0), value;
    if (!IS_MVAR(target)) RUNTIME_ERROR("tryTakeMVar needs an MVar, not %s", value_type_name(target));
    STORE_FRAME();
    if (mvar_try_take(vm, AS_MVAR(target), &value)) {
      PEEK(0) = value; /* rooted while some() allocates */
      ObjSome *some = obj_some(vm, PEEK(0));
      PEEK(0) = OBJ_VAL(some);
    } else {
      PEEK(0) = NONE_VAL;
    }
    DISPATCH();
  }
  CASE(TRY_PUT_MVAR): {
    NOT_IN_TRANSACTION("tryPutMVar");
    Value value = PEEK(0), target = PEEK(1);
    if (!IS_MVAR(target)) RUNTIME_ERROR("tryPutMVar needs an MVar, not %s", value_type_name(target));
    STORE_FRAME();
    bool put = mvar_try_put(vm, AS_MVAR(target), value);
    thread->sp--;
    PEEK(0) = BOOL_VAL(put);
    DISPATCH();
  }
  CASE(LABEL_MVAR): {
    NOT_IN_TRANSACTION("labelMVar");
    Value label = PEEK(0), target = PEEK(1);
    if (!IS_MVAR(target)) RUNTIME_ERROR("labelMVar needs an MVar, not %s", value_type_name(target));
    if (!IS_STRING(label)) RUNTIME_ERROR("labelMVar needs a string label, not %s", value_type_name(label));
    AS_MVAR(target)->label = AS_STRING(label);
    thread->sp--;
    PEEK(0) = UNIT_VAL;
    DISPATCH();
  }
  CASE(YIELD): {
    NOT_IN_TRANSACTION("yield");
    PUSH(UNIT_VAL);
    STORE_FRAME();
    vm_trace(vm, thread, "yield");
    sched_enqueue(vm, thread);
    goto next_thread;
  }
  CASE(TIMEOUT): {
    NOT_IN_TRANSACTION("timeout");
    Value action = PEEK(0), limit = PEEK(1);
    if (!IS_DURATION(limit)) RUNTIME_ERROR("timeout needs a duration, not %s", value_type_name(limit));
    if (!IS_BLOCK_CLOSURE(action) && !IS_ACTION(action))
      RUNTIME_ERROR("timeout needs an action to run, not %s", value_type_name(action));
    ENTER_INTERNAL(vm->timeout_closure, 2);
  }

  CASE(TIMEOUT_ARM): {
    int64_t limit = AS_DURATION(slots[0]);
    if (limit < 0) {
      PUSH(UNIT_VAL); /* no limit: run the action plainly */
      DISPATCH();
    }
    if (limit == 0) {
      PUSH(UNIT_VAL);
      vm_trace(vm, thread, "timeout 0ns: timed out at once");
      PUSH(NONE_VAL);
      EXECUTE(OP_RETURN);
    }
    STORE_FRAME();
    ObjTimeout *timeout = obj_timeout(vm, thread);
    sched_arm_timeout(vm, timeout, limit);
    PUSH(OBJ_VAL(timeout));
    if (traced(vm)) {
      Buffer text;
      buf_init(&text);
      duration_show(&text, limit);
      vm_trace(vm, thread, "timeout %s", text.data);
      buf_free(&text);
    }
    /* starting a timeout yields, as io-sim's StartTimeout does; the action
     * runs when the thread's turn comes again */
    sched_enqueue(vm, thread);
    goto next_thread;
  }
  CASE(TIMEOUT_DISARM): {
    if (IS_TIMEOUT(slots[2])) sched_disarm_timeout(vm, AS_TIMEOUT(slots[2]));
    STORE_FRAME();
    ObjSome *some = obj_some(vm, PEEK(0));
    PEEK(0) = OBJ_VAL(some);
    DISPATCH();
  }
  CASE(TIMEOUT_CATCH): {
    exc = PEEK(0);
    if (IS_TIMEOUT(slots[2])) {
      ObjTimeout *timeout = AS_TIMEOUT(slots[2]);
      if (IS_TIMEOUT(exc) && AS_TIMEOUT(exc) == timeout) {
        PEEK(0) = NONE_VAL;
        EXECUTE(OP_RETURN);
      }
      sched_disarm_timeout(vm, timeout);
    }
    STORE_FRAME();
    goto throw_exception;
  }
  CASE(CATCH_HANDLER): {
    /* slot 2 holds the exception (any, a timeout's interrupt included, as in GHC) */
    exc = PEEK(0);
    trace_value(vm, thread, "caught ", exc, true, frame->closure->proto->prelude);
    /* handlers run with exceptions masked (at least interruptibly), as in GHC */
    PUSH(INT_VAL(thread->mask == MASK_NONE ? MASK_INTERRUPTIBLE : thread->mask));
    DISPATCH();
  }
  CASE(MASK_PUSH): {
    PUSH(INT_VAL(thread->mask));
    set_mask(vm, thread, (MaskState)AS_INT(slots[0]), frame->closure->proto->prelude);
    DISPATCH();
  }
  CASE(MASK_POP): {
    set_mask(vm, thread, (MaskState)AS_INT(slots[2]), frame->closure->proto->prelude);
    if (thread->mask == MASK_NONE && thread->pending_count) {
      STORE_FRAME();
      exc = sched_take_pending(vm, thread);
      goto throw_exception;
    }
    DISPATCH();
  }
  CASE(MASK_UNWIND): {
    set_mask(vm, thread, (MaskState)AS_INT(slots[2]), frame->closure->proto->prelude);
    exc = PEEK(0);
    STORE_FRAME();
    goto throw_exception;
  }
  CASE(RESUME): {
    /* the action bound by the continuation frame returned: rebuild the frame */
    Value result = POP();
    ObjContinuation *cont = AS_CONTINUATION(slots[0]);
    thread->sp = slots;
    thread->frame_count--;
    STORE_FRAME();
    if (!thread_reserve(vm, thread, cont->closure->proto->max_slots)) RUNTIME_ERROR("stack overflow");
    Value *base = thread->sp;
    for (int i = 0; i < cont->count; i++) PUSH(cont->values[i]);
    PUSH(result);
    thread_push_frame(vm, thread, cont->closure, base);
    thread->frames[thread->frame_count - 1].ip = cont->ip;
    LOAD_FRAME();
    DISPATCH();
  }
  CASE(TX_BEGIN):
    stm_begin(vm, thread);
    DISPATCH();
  CASE(TX_COMMIT): {
    STORE_FRAME();
    Value traces = stm_traced_writes(vm, thread);
    PUSH(traces);
    stm_commit(vm, thread, frame->closure->proto->prelude);
    DISPATCH();
  }
  CASE(TX_TRACE): {
    Value due = slots[2];
    if (IS_NIL(due)) {
      /* io-sim's fairness rule: every commit yields, behind the threads it
       * woke and then the rest of the run queue; RETURN follows */
      thread->sp = slots + 2;
      ip += 3;
      STORE_FRAME();
      sched_enqueue(vm, thread);
      goto next_thread;
    }
    Value entry = AS_CONS(due)->head;
    slots[2] = AS_CONS(due)->tail;
    Value f = AS_CONS(entry)->head, rest = AS_CONS(entry)->tail;
    Value old = AS_CONS(rest)->head, now_value = AS_CONS(AS_CONS(rest)->tail)->head;
    Value tvar = AS_CONS(AS_CONS(AS_CONS(rest)->tail)->tail)->head;
    PUSH(tvar);
    PUSH(f);
    PUSH(old);
    PUSH(now_value);
    DISPATCH(); /* CALL 2 */
  }
  CASE(TX_TRACED): {
    Value text = PEEK(0), tvar = PEEK(1);
    if (IS_BLOCK_CLOSURE(text) || IS_ACTION(text)) {
      Buffer name;
      buf_init(&name);
      value_show(&name, tvar, false);
      rt_error(vm, "traceTVar's function for %s gave an action: it must compute a string from (old, new), "
               "as fn(old, new) => show(old) ++ \" -> \" ++ show(new)", buf_text(&name));
      buf_free(&name);
      goto runtime_error;
    }
    if (traced(vm)) {
      Buffer line;
      buf_init(&line);
      value_show(&line, tvar, false);
      buf_append(&line, " ", 1);
      Buffer shown;
      buf_init(&shown);
      value_show(&shown, text, false);
      buf_append_quoted(&line, shown.data ? shown.data : "", shown.length);
      buf_free(&shown);
      vm_trace(vm, thread, "traceTVar %s", line.data);
      buf_free(&line);
    }
    thread->sp -= 2;
    ip -= 4; /* back to TX_TRACE */
    DISPATCH();
  }
  CASE(TX_MARK):
    PUSH(INT_VAL(thread->undo_count));
    DISPATCH();
  CASE(OR_ELSE_CATCH): {
    exc = PEEK(0);
    if (!(IS_EXCEPTION(exc) && AS_EXCEPTION(exc)->kind == EXC_RETRY)) {
      STORE_FRAME();
      goto throw_exception;
    }
    stm_rollback(thread, (int)AS_INT(slots[2]));
    thread->sp--;
    DISPATCH();
  }
  CASE(TX_ABORT): {
    exc = PEEK(0);
    stm_rollback(thread, 0);
    if (!(IS_EXCEPTION(exc) && AS_EXCEPTION(exc)->kind == EXC_RETRY) || !thread->in_transaction) {
      thread->in_transaction = false;
      thread->read_count = 0;
      STORE_FRAME();
      goto throw_exception;
    }
    /* retry: wait for a write to what it read, then run the transaction again */
    thread->sp = slots + 1;
    ip = frame->closure->proto->chunk.code;
    STORE_FRAME();
    thread->in_transaction = false;
    INTERRUPTIBLE_POINT();
    thread->in_transaction = true;
    stm_block(vm, thread);
    goto next_thread;
  }
  CASE(THREAD_EXIT): {
    Value result = POP();
    STORE_FRAME();
    vm_trace(vm, thread, "exit");
    if (thread == vm->main_thread) {
      vm->result = result;
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
  exc = error_exception(vm, thread);
  interp_note_raise(vm, thread, exc, NULL);
throw_exception:
  /* frame->ip was stored by the raising opcode */
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
