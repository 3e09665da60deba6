/* AST -> bytecode (see compiler.h for the shape of the output). */
#include "compiler.h"
#include "pattern.h"
#include "../vm/interp/builtins.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOCALS 256
#define MAX_UPVALUES 255
#define MAX_ARGS 255
#define MAX_NESTING 2000  /* deeper expressions would exhaust the C stack */

typedef struct {
  const char *name;
  int slot;
} Local;

typedef struct {
  const char *name;
  uint8_t from_local;   /* 1: a local of the enclosing function; 0: its upvalue */
  uint8_t index;
} Upvalue;

/* The function being compiled; `enclosing` links outward for captures. */
typedef struct FnState {
  struct FnState *enclosing;
  ObjProto *proto;
  Local locals[MAX_LOCALS];
  int local_count;
  Upvalue upvalues[MAX_UPVALUES];
  int upvalue_count;
  int depth;            /* stack depth from slot 0, slot 0 included */
  int self_global;      /* a top-level fn: its own global, for self calls; else -1 */
} FnState;

typedef struct {
  VM *vm;
  Diag *diag;
  const Source *source;
  const char *file;     /* source->path, as the VM keeps it (vm_file_name) */
  FnState *fn;
  int line;             /* attributed to the bytes being emitted */
  const char *decl;     /* the top-level name being defined: names its blocks */
  int decl_global;      /* the global of the top-level fn about to be compiled, or -1 */
  int nesting;          /* compile_expr/compile_run recursion depth      */
  bool nesting_reported;
  bool locals_reported; /* one "too many" error per module is enough     */
  bool constants_reported;
  const char *known_field;  /* the arm being compiled has this field ...   */
  int known_record;         /* ... of the subject in this slot read ...    */
  int known_slot;           /* ... into this one (begin_field_run)         */
} Compiler;

static void compile_expr(Compiler *c, const Expr *e, bool tail);
static void compile_run(Compiler *c, const Expr *e, bool tail);
static void compile_stmts(Compiler *c, const NodeList *stmts, bool tail, Loc loc);
static const GlobalInfo *check_call(Compiler *c, const Expr *e);
static void compile_match(Compiler *c, const Expr *e, bool tail, bool run);
static void compile_destructure(Compiler *c, const Expr *pattern, const char *what);

static void error_at(Compiler *c, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void error_at(Compiler *c, Loc loc, const char *fmt, ...) {
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  diag_error(c->diag, c->source, loc.line, loc.col, "%s", message);
}

/* ---- emission ---- */

static Chunk *chunk(Compiler *c) { return &c->fn->proto->chunk; }

static void adjust_depth(Compiler *c, int effect) {
  c->fn->depth += effect;
  if (c->fn->depth > c->fn->proto->max_slots) c->fn->proto->max_slots = c->fn->depth;
}

static void emit_byte(Compiler *c, uint8_t byte) { chunk_write(chunk(c), byte, c->line); }

/* Emit `op` and its operand (none if the table gives it none), tracking
 * the stack depth by the table's pops and pushes for that operand. */
static void emit(Compiler *c, OpCode op, int operand) {
  int width = opcode_info[op].width;
  emit_byte(c, (uint8_t)op);
  if (width == 2) emit_byte(c, (uint8_t)(operand >> 8));
  if (width >= 1) emit_byte(c, (uint8_t)operand);
  adjust_depth(c, opcode_effect((uint8_t)op, operand));
}

/* An opcode without an operand. */
static void emit_op(Compiler *c, OpCode op) { emit(c, op, 0); }

/* Run the action on top as this frame's result. The RETURN after it is
 * reached only when the action is a primitive, which runs in this frame. */
static void emit_tail_bind(Compiler *c) {
  emit_op(c, OP_TAIL_BIND);
  emit_op(c, OP_RETURN);
}

static int make_constant(Compiler *c, Value value, Loc loc) {
  int index = chunk_add_constant(chunk(c), value);
  if (index > UINT16_MAX) {
    if (!c->constants_reported) error_at(c, loc, "too many constants in one function (the limit is 65536)");
    c->constants_reported = true;
    return 0;
  }
  return index;
}

static void emit_constant(Compiler *c, Value value, Loc loc) {
  emit(c, OP_CONST, make_constant(c, value, loc));
}

static int emit_jump(Compiler *c, OpCode op) {
  emit(c, op, 0xffff);
  return chunk(c)->count - 2;
}

static void patch_jump(Compiler *c, int at, Loc loc) {
  int distance = chunk(c)->count - (at + 2);
  if (distance > UINT16_MAX) {
    error_at(c, loc, "this expression is too large to jump over (split it into functions)");
    return;
  }
  chunk(c)->code[at] = (uint8_t)(distance >> 8);
  chunk(c)->code[at + 1] = (uint8_t)distance;
}

/* ---- names ---- */

static ObjString *intern(Compiler *c, const char *name) { return obj_cstring(c->vm, name); }

/* Name the value just pushed (at depth - 1) as a local. */
static void declare_local(Compiler *c, const char *name, Loc loc) {
  FnState *fn = c->fn;
  int slot = fn->depth - 1;
  if (fn->local_count == MAX_LOCALS || slot >= MAX_LOCALS) {
    if (!c->locals_reported)
      error_at(c, loc, "too many parameters and local variables in one function (the limit is %d)", MAX_LOCALS - 1);
    c->locals_reported = true;
    return;
  }
  fn->locals[fn->local_count].name = name;
  fn->locals[fn->local_count].slot = slot;
  fn->local_count++;
}

/* Drop the locals declared since `base`, keeping the value on top. */
static void end_scope(Compiler *c, int base) {
  int dropped = 0;
  for (int i = base; i < c->fn->local_count; i++)
    if (c->fn->locals[i].slot >= 0) dropped++;
  c->fn->local_count = base;
  if (dropped) emit(c, OP_SLIDE, dropped);
}

static int resolve_local(FnState *fn, const char *name) {
  for (int i = fn->local_count - 1; i >= 0; i--)
    if (strcmp(fn->locals[i].name, name) == 0) return fn->locals[i].slot;
  return -1;
}

static int add_upvalue(Compiler *c, FnState *fn, const char *name, int from_local, int index, Loc loc) {
  for (int i = 0; i < fn->upvalue_count; i++)
    if (fn->upvalues[i].from_local == from_local && fn->upvalues[i].index == index) return i;
  if (fn->upvalue_count == MAX_UPVALUES) {
    error_at(c, loc, "a function captures too many variables (the limit is %d)", MAX_UPVALUES);
    return 0;
  }
  fn->upvalues[fn->upvalue_count] = (Upvalue){name, (uint8_t)from_local, (uint8_t)index};
  return fn->upvalue_count++;
}

/* How many of a self call's arguments TAIL_SELF_BIND must copy: the
 * trailing ones that pass a parameter on as itself (`act` in
 * replicateM_(n - 1, act), the only one in forever(act)) stay where they
 * are. Locals are never assigned, so parameter i's slot (i + 1) still
 * holds it, unless a later local of that name shadows it. */
static int changed_arguments(Compiler *c, const Expr *call) {
  int n = call->as.call.args.count;
  while (n > 0) {
    const Expr *arg = call->as.call.args.items[n - 1];
    if (arg->kind != EXPR_NAME || resolve_local(c->fn, arg->as.name) != n) break;
    n--;
  }
  return n;
}

static int resolve_upvalue(Compiler *c, FnState *fn, const char *name, Loc loc) {
  if (!fn->enclosing) return -1;
  int slot = resolve_local(fn->enclosing, name);
  if (slot >= 0) return add_upvalue(c, fn, name, 1, slot, loc);
  int upvalue = resolve_upvalue(c, fn->enclosing, name, loc);
  if (upvalue >= 0) return add_upvalue(c, fn, name, 0, upvalue, loc);
  return -1;
}

static bool is_local_name(Compiler *c, const char *name) {
  for (FnState *fn = c->fn; fn; fn = fn->enclosing)
    if (resolve_local(fn, name) >= 0) return true;
  return false;
}

/* The global a name refers to here, or -1 (locals shadow globals). */
static int global_for(Compiler *c, const char *name) {
  if (is_local_name(c, name)) return -1;
  return vm_find_global(c->vm, intern(c, name));
}

static void compile_name(Compiler *c, const char *name, Loc loc) {
  int slot = resolve_local(c->fn, name);
  if (slot >= 0) {
    emit(c, OP_GET_LOCAL, slot);
    return;
  }
  int upvalue = resolve_upvalue(c, c->fn, name, loc);
  if (upvalue >= 0) {
    emit(c, OP_GET_UPVALUE, upvalue);
    return;
  }
  int global = vm_find_global(c->vm, intern(c, name));
  if (global >= 0) {
    emit(c, OP_GET_GLOBAL, global);
    return;
  }
  error_at(c, loc, "undefined name '%s'", name);
  emit_op(c, OP_UNIT);
}

/* Whether `e` calls the function being compiled by its own (global) name,
 * with as many arguments as it has parameters: a self call (CALL_SELF,
 * TAIL_SELF, TAIL_SELF_BIND) needs no callee fetched or checked. */
static bool is_self_call(Compiler *c, const Expr *e) {
  if (c->fn->self_global < 0 || e->kind != EXPR_CALL) return false;
  const Expr *callee = e->as.call.callee;
  return callee->kind == EXPR_NAME && e->as.call.args.count == c->fn->proto->arity &&
         global_for(c, callee->as.name) == c->fn->self_global;
}

/* The builtin action a call invokes directly, with the right argument count. */
static const Builtin *direct_primitive(Compiler *c, const Expr *e) {
  if (e->kind != EXPR_CALL || e->as.call.callee->kind != EXPR_NAME) return NULL;
  int global = global_for(c, e->as.call.callee->as.name);
  if (global < 0) return NULL;
  const Builtin *builtin = c->vm->global_info[global].builtin;
  if (!builtin || !builtin_is_action(builtin) || builtin->arity != e->as.call.args.count) return NULL;
  return builtin;
}

/* Whether `e` calls a constructor of a TVar or MVar (newTVar, newMVar, the
 * prelude's newTQueue ..., also inside atomically(...)): `x <- e` then
 * labels what it made `x`. Only these binds pay for a label. */
static bool makes_labelled(Compiler *c, const Expr *e) {
  static const char *const constructors[] = {"newTVar", "newMVar", "newEmptyMVar", "registerDelay", "newTMVar",
                                             "newEmptyTMVar", "newTQueue", "newTSem"};
  if (e->kind != EXPR_CALL || e->as.call.callee->kind != EXPR_NAME) return false;
  const char *name = e->as.call.callee->as.name;
  if (is_local_name(c, name)) return false;
  if (strcmp(name, "atomically") == 0) return e->as.call.args.count == 1 && makes_labelled(c, e->as.call.args.items[0]);
  for (size_t i = 0; i < sizeof constructors / sizeof constructors[0]; i++)
    if (strcmp(name, constructors[i]) == 0) return true;
  return false;
}

/* ---- functions and blocks ---- */

static void begin_fn(Compiler *c, FnState *fn, ProtoKind kind, const char *name, Loc loc) {
  fn->enclosing = c->fn;
  fn->proto = obj_proto(c->vm, kind, c->file, loc.line);
  fn->proto->name = intern(c, name);
  fn->local_count = 0;
  fn->upvalue_count = 0;
  fn->depth = 1; /* slot 0: the callee, or the running block closure */
  fn->self_global = -1;
  fn->locals[fn->local_count++] = (Local){"", 0};
  c->fn = fn;
}

/* Finish the function and emit, in the enclosing one, the closure that captures its upvalues. */
static void end_fn(Compiler *c, FnState *fn, Loc loc) {
  ObjProto *proto = fn->proto;
  proto->upvalue_count = fn->upvalue_count;
  if (fn->upvalue_count) {
    proto->captures = xrealloc(NULL, (size_t)fn->upvalue_count * 2);
    for (int i = 0; i < fn->upvalue_count; i++) {
      proto->captures[2 * i] = fn->upvalues[i].from_local;
      proto->captures[2 * i + 1] = fn->upvalues[i].index;
    }
  }
  c->fn = fn->enclosing;
  c->line = loc.line; /* the closure is made where the function is written */
  if (c->fn) emit(c, OP_CLOSURE, make_constant(c, OBJ_VAL(proto), loc));
}

/* Blocks are named after the function (or top-level value) they appear in. */
static const char *enclosing_name(Compiler *c) {
  if (!c->fn->enclosing && c->decl) return c->decl;
  return c->fn->proto->name ? c->fn->proto->name->chars : "<block>";
}

/* `local`: a function of a block's `fn name(...)`, whose name in its body
 * is slot 0, the callee itself (it calls itself with no capture). */
static void compile_lambda(Compiler *c, const Expr *e, const char *name, bool local) {
  FnState fn;
  begin_fn(c, &fn, PROTO_FUNCTION, name ? name : "<lambda>", e->loc);
  if (local) fn.locals[0].name = name;
  fn.proto->arity = e->as.lambda.params.count;
  fn.self_global = c->decl_global; /* the top-level fn being compiled, not a lambda in it */
  c->decl_global = -1;
  for (int i = 0; i < e->as.lambda.params.count; i++) {
    const char *param = e->as.lambda.params.items[i];
    for (int j = 0; j < i; j++)
      if (strcmp(param, e->as.lambda.params.items[j]) == 0)
        error_at(c, e->loc, "parameter '%s' is declared twice", param);
    adjust_depth(c, 1);
    declare_local(c, param, e->loc);
  }
  if (e->as.lambda.body->kind == EXPR_BLOCK) {
    /* fn(params) { stmts }: the statements run with the parameters as locals */
    fn.proto->kind = PROTO_ACTION_FN;
    compile_stmts(c, &e->as.lambda.body->as.block, true, e->as.lambda.body->loc);
  } else {
    compile_expr(c, e->as.lambda.body, true);
    emit_op(c, OP_RETURN);
  }
  end_fn(c, &fn, e->loc);
}

/* An action value whose body runs `e` (a block, or `a >> b` ...). */
static void compile_action(Compiler *c, const Expr *e) {
  FnState fn;
  begin_fn(c, &fn, PROTO_BLOCK, enclosing_name(c), e->loc);
  if (e->kind == EXPR_BLOCK) compile_stmts(c, &e->as.block, true, e->loc); /* its own body, at any -O */
  else compile_run(c, e, true);
  end_fn(c, &fn, e->loc);
}

/* ---- statements: running actions ---- */

/* Statements [first, end) of a block are `fn name(...)`s, in a row: each
 * a local, and each sees all of them, as top-level functions do. One calls
 * itself through its callee slot; several are made with each of their
 * names holding () first, and LETREC then gives each closure the others
 * (values are immutable, so a cycle needs that one step). */
static void compile_fn_group(Compiler *c, const NodeList *stmts, int first, int end) {
  for (int i = first; i < end; i++) {
    const Stmt *s = stmts->items[i];
    for (int j = first; j < i; j++) {
      const Stmt *t = stmts->items[j];
      if (strcmp(s->name, t->name) == 0) error_at(c, s->loc, "'%s' is already defined on line %d", s->name, t->loc.line);
    }
  }
  int n = end - first;
  if (n == 1) {
    const Stmt *s = stmts->items[first];
    compile_lambda(c, s->expr, s->name, true);
    declare_local(c, s->name, s->loc);
    return;
  }
  if (n > MAX_ARGS) {
    error_at(c, ((const Stmt *)stmts->items[first])->loc, "at most %d local functions in a row (put a statement between)",
             MAX_ARGS);
    return;
  }
  for (int i = first; i < end; i++) {
    const Stmt *s = stmts->items[i];
    c->line = s->loc.line;
    emit_op(c, OP_UNIT);
    declare_local(c, s->name, s->loc);
  }
  for (int i = first; i < end; i++) {
    const Stmt *s = stmts->items[i];
    compile_lambda(c, s->expr, s->name, true);
  }
  emit(c, OP_LETREC, n);
}

static void compile_stmts(Compiler *c, const NodeList *stmts, bool tail, Loc loc) {
  int base = c->fn->local_count;
  if (stmts->count == 0) {
    c->line = loc.line;
    emit_op(c, OP_UNIT);
    if (tail) emit_op(c, OP_RETURN);
    return;
  }
  for (int i = 0; i < stmts->count; i++) {
    const Stmt *s = stmts->items[i];
    bool last = i == stmts->count - 1;
    c->line = s->loc.line;
    switch (s->kind) {
      case STMT_FN: {
        int end = i + 1;
        while (end < stmts->count && ((const Stmt *)stmts->items[end])->kind == STMT_FN) end++;
        if (end == stmts->count)
          error_at(c, ((const Stmt *)stmts->items[end - 1])->loc,
                   "a block cannot end with a function definition: end it with an action");
        compile_fn_group(c, stmts, i, end);
        i = end - 1;
        break;
      }
      case STMT_BIND:
      case STMT_LET:
        if (last && s->pattern) {
          error_at(c, s->loc, "a block cannot end with a destructuring '%s': end it with an action",
                   s->kind == STMT_LET ? "let" : "<-");
        } else if (last) {
          error_at(c, s->loc, "a block cannot end with '%s %s ...': end it with an action, or `return %s`",
                   s->kind == STMT_LET ? "let" : s->name, s->kind == STMT_LET ? s->name : "<-", s->name);
        }
        if (s->kind == STMT_BIND) {
          compile_run(c, s->expr, false);
          if (!s->pattern && makes_labelled(c, s->expr))
            emit(c, OP_LABEL_NEW, make_constant(c, OBJ_VAL(intern(c, s->name)), s->loc));
        } else {
          compile_expr(c, s->expr, false);
        }
        if (s->pattern) compile_destructure(c, s->pattern, s->kind == STMT_LET ? "this let's pattern does not fit " : "this bind's pattern does not fit ");
        else declare_local(c, s->name, s->loc);
        break;
      case STMT_EXPR:
        if (last) {
          compile_run(c, s->expr, tail);
        } else {
          if (s->expr->kind == EXPR_RETURN)
            error_at(c, s->loc, "'return' does not leave a block early: it can only be the last statement");
          compile_run(c, s->expr, false);
          emit_op(c, OP_POP);
        }
        break;
    }
  }
  if (!tail) end_scope(c, base);
  else c->fn->local_count = base;
}

/* Run the action `e` here: its result is pushed (or, in tail position,
 * returned from this frame). Statement-level forms are compiled inline. */
static void compile_run_form(Compiler *c, const Expr *e, bool tail) {
  c->line = e->loc.line;
  bool inline_forms = c->vm->direct_actions;
  switch (e->kind) {
    case EXPR_THEN:
      compile_run(c, e->as.then.left, false);
      emit_op(c, OP_POP);
      compile_run(c, e->as.then.right, tail);
      return;
    case EXPR_BIND: {
      compile_run(c, e->as.then.left, false);
      const Expr *f = e->as.then.right;
      int base = c->fn->local_count;
      if (inline_forms && f->kind == EXPR_LAMBDA && f->as.lambda.params.count == 1) {
        declare_local(c, f->as.lambda.params.items[0], f->loc);
        compile_run(c, f->as.lambda.body, tail);
      } else {
        declare_local(c, "", e->loc); /* the result, as a hidden local */
        int slot = c->fn->depth - 1;
        compile_expr(c, f, false);
        emit(c, OP_GET_LOCAL, slot);
        /* f(x) bound at once, as a statement's call is: an action
         * function's body runs without its suspended call built */
        if (inline_forms) emit(c, tail ? OP_TAIL_CALL_BIND : OP_CALL_BIND, 1);
        else emit(c, OP_CALL, 1);
        if (tail) emit_tail_bind(c);
        else emit_op(c, OP_BIND);
      }
      if (!tail) end_scope(c, base);
      else c->fn->local_count = base;
      return;
    }
    default:
      break;
  }
  if (inline_forms) {
    switch (e->kind) {
      case EXPR_BLOCK:
        compile_stmts(c, &e->as.block, tail, e->loc);
        return;
      case EXPR_IF: {
        compile_expr(c, e->as.if_.cond, false);
        int to_else = emit_jump(c, OP_JUMP_IF_FALSE);
        compile_run(c, e->as.if_.then, tail);
        int to_end = tail ? -1 : emit_jump(c, OP_JUMP);
        patch_jump(c, to_else, e->loc);
        if (!tail) adjust_depth(c, -1);
        compile_run(c, e->as.if_.otherwise, tail);
        if (!tail) patch_jump(c, to_end, e->loc);
        return;
      }
      case EXPR_LET: {
        int base = c->fn->local_count;
        compile_expr(c, e->as.let.value, false);
        if (e->as.let.pattern) compile_destructure(c, e->as.let.pattern, "this let's pattern does not fit ");
        else declare_local(c, e->as.let.name, e->as.let.name_loc);
        compile_run(c, e->as.let.body, tail);
        if (!tail) end_scope(c, base);
        else c->fn->local_count = base;
        return;
      }
      case EXPR_RETURN:
        compile_expr(c, e->as.ret, false);
        if (tail) emit_op(c, OP_RETURN);
        return;
      case EXPR_MATCH:
        compile_match(c, e, tail, true);
        return;
      case EXPR_CALL: {
        const Builtin *builtin = direct_primitive(c, e);
        if (builtin && (builtin->op == OP_DELAY || builtin->op == OP_SAY)) {
          /* delay(5us), say("text"): the constant in the instruction */
          const Expr *arg = e->as.call.args.items[0];
          if (arg->kind == (builtin->op == OP_DELAY ? EXPR_DURATION : EXPR_STRING)) {
            Value k = arg->kind == EXPR_DURATION ? DURATION_VAL(arg->as.integer)
                                                 : OBJ_VAL(obj_string(c->vm, arg->as.string.chars, arg->as.string.length));
            c->line = e->loc.line;
            emit(c, builtin->op == OP_DELAY ? OP_DELAY_K : OP_SAY_K, make_constant(c, k, arg->loc));
            if (tail) emit_op(c, OP_RETURN);
            return;
          }
        }
        if (builtin) {
          for (int i = 0; i < e->as.call.args.count; i++) compile_expr(c, e->as.call.args.items[i], false);
          c->line = e->loc.line;
          if (builtin->op == OP_PRIM) emit(c, OP_PRIM, (int)(builtin - builtin_table));
          else emit_op(c, (OpCode)builtin->op);
          if (tail) emit_op(c, OP_RETURN);
          return;
        }
        if (e->as.call.args.count > MAX_ARGS) break; /* compile_call reports it */
        /* f(args) bound at once: the fused pair skips building the action */
        check_call(c, e);
        int argc = e->as.call.args.count;
        if (tail && c->fn->proto->kind == PROTO_ACTION_FN && is_self_call(c, e)) {
          /* an action function's last statement calling itself: start it again */
          argc = changed_arguments(c, e);
          for (int i = 0; i < argc; i++) compile_expr(c, e->as.call.args.items[i], false);
          c->line = e->loc.line;
          emit(c, OP_TAIL_SELF_BIND, argc);
          return;
        }
        compile_expr(c, e->as.call.callee, false);
        for (int i = 0; i < argc; i++) compile_expr(c, e->as.call.args.items[i], false);
        c->line = e->loc.line;
        emit(c, tail ? OP_TAIL_CALL_BIND : OP_CALL_BIND, argc);
        if (tail) emit_tail_bind(c);
        else emit_op(c, OP_BIND);
        return;
      }
      default:
        break;
    }
  }
  int slot = !tail && e->kind == EXPR_NAME ? resolve_local(c->fn, e->as.name) : -1;
  if (slot >= 0) { /* a local's action, as forever's act */
    c->line = e->loc.line;
    emit(c, OP_BIND_LOCAL, slot);
    return;
  }
  compile_expr(c, e, false);
  c->line = e->loc.line;
  if (tail) emit_tail_bind(c);
  else emit_op(c, OP_BIND);
}

/* Run `e`, checking the nesting. In tail position the path ends (a RETURN
 * or a tail bind), so whatever it declared or pushed is gone afterwards:
 * the depth and the locals are those from before, ready for an else branch. */
static void compile_run(Compiler *c, const Expr *e, bool tail) {
  int depth = c->fn->depth, locals = c->fn->local_count;
  if (c->nesting >= MAX_NESTING) {
    if (!c->nesting_reported) error_at(c, e->loc, "expression nested too deeply (more than %d levels)", MAX_NESTING);
    c->nesting_reported = true;
    return;
  }
  c->nesting++;
  compile_run_form(c, e, tail);
  c->nesting--;
  if (tail) {
    c->fn->depth = depth;
    c->fn->local_count = locals;
  }
}

/* ---- expressions ---- */

static bool fold_negation(Compiler *c, const Expr *operand) {
  switch (operand->kind) {
    case EXPR_INT:
      if (operand->as.integer == INT64_MIN) return false;
      emit_constant(c, INT_VAL(-operand->as.integer), operand->loc);
      return true;
    case EXPR_FLOAT:
      emit_constant(c, FLOAT_VAL(-operand->as.number), operand->loc);
      return true;
    case EXPR_DURATION:
      emit_constant(c, DURATION_VAL(-operand->as.integer), operand->loc);
      return true;
    default:
      return false;
  }
}

static const OpCode binary_ops[] = {
    [BIN_ADD] = OP_ADD, [BIN_SUB] = OP_SUB, [BIN_MUL] = OP_MUL, [BIN_DIV] = OP_DIV,
    [BIN_MOD] = OP_MOD, [BIN_EQ] = OP_EQ,   [BIN_NE] = OP_NE,   [BIN_LT] = OP_LT,
    [BIN_LE] = OP_LE,   [BIN_GT] = OP_GT,   [BIN_GE] = OP_GE,   [BIN_CONCAT] = OP_CONCAT,
};

/* Items [start, start + count) of a list literal, left to right, as one
 * list on the stack. LIST takes at most 255 values, so a longer literal is
 * built from up to 255 parts of 255^k items each, evaluated in order, then
 * joined right to left: a ++ copies only its left side, so each level of
 * parts copies every item once, and the whole is linear in practice (three
 * levels reach 16 million items) with the stack at most 255 per level. */
static void compile_list_part(Compiler *c, const Expr *e, int start, int count) {
  const NodeList *items = &e->as.items;
  if (count <= MAX_ARGS) {
    for (int i = 0; i < count; i++) compile_expr(c, items->items[start + i], false);
    c->line = e->loc.line;
    emit(c, OP_LIST, count);
    return;
  }
  int size = MAX_ARGS;
  while ((int64_t)size * MAX_ARGS < count) size *= MAX_ARGS;
  int parts = 0;
  for (int at = 0; at < count; at += size, parts++)
    compile_list_part(c, e, start + at, count - at < size ? count - at : size);
  c->line = e->loc.line;
  for (int i = 1; i < parts; i++) emit_op(c, OP_CONCAT);
}

/* The instruction for `x OP k` with k an int literal that fits a signed
 * byte (ADDI, LTI ...), or OP_COUNT: none. */
static OpCode immediate_op(const Expr *e) {
  static const OpCode ops[] = {[BIN_ADD] = OP_ADDI, [BIN_SUB] = OP_SUBI, [BIN_EQ] = OP_EQI, [BIN_LT] = OP_LTI,
                               [BIN_LE] = OP_LEI,   [BIN_GT] = OP_GTI,   [BIN_GE] = OP_GEI};
  const Expr *k = e->as.binary.right;
  int op = e->as.binary.op;
  if (k->kind != EXPR_INT || k->as.integer < -128 || k->as.integer > 127) return OP_COUNT;
  if (op >= (int)(sizeof ops / sizeof ops[0]) || ops[op] == 0) return OP_COUNT;
  return ops[op];
}

static void compile_list(Compiler *c, const Expr *e) {
  if (e->as.items.count == 0) emit_op(c, OP_NIL);
  else compile_list_part(c, e, 0, e->as.items.count);
}

static void compile_record(Compiler *c, const Expr *e) {
  const NodeList *pairs = &e->as.record.names;
  int n = pairs->count / 2;
  if (n > MAX_ARGS) {
    error_at(c, e->loc, "a record literal has at most %d fields", MAX_ARGS);
    return;
  }
  for (int i = 0; i < n; i++) {
    const char *name = pairs->items[2 * i];
    for (int j = 0; j < i; j++)
      if (strcmp(name, pairs->items[2 * j]) == 0) error_at(c, e->loc, "field '%s' is given twice", name);
    emit_constant(c, OBJ_VAL(intern(c, name)), e->loc);
    compile_expr(c, pairs->items[2 * i + 1], false);
  }
  c->line = e->loc.line;
  emit(c, OP_RECORD, n);
}

/* "a{x}b{y}": the parts in order, empty text left out, and INTERP builds
 * the one string of them (a string of more than 255 parts in steps, each
 * taking the one before as its first part). */
static void compile_interp(Compiler *c, const Expr *e) {
  const NodeList *parts = &e->as.items;
  int pending = 0; /* values on the stack for the next INTERP */
  for (int i = 0; i < parts->count; i++) {
    const Expr *part = parts->items[i];
    if (part->kind == EXPR_STRING && part->as.string.length == 0) continue;
    if (pending == MAX_ARGS) {
      c->line = e->loc.line;
      emit(c, OP_INTERP, pending);
      pending = 1;
    }
    compile_expr(c, part, false);
    pending++;
  }
  c->line = e->loc.line;
  emit(c, OP_INTERP, pending);
}

/* #{r | f: e, +g: e}: r, then a (name, may add, value) triple per field,
 * and UPDATE copies r once with them set. */
static void compile_update(Compiler *c, const Expr *e) {
  const NodeList *fields = &e->as.update.fields;
  if (fields->count > MAX_ARGS) {
    error_at(c, e->loc, "a record update sets at most %d fields", MAX_ARGS);
    return;
  }
  compile_expr(c, e->as.update.record, false);
  for (int i = 0; i < fields->count; i++) {
    const FieldUpdate *f = fields->items[i];
    for (int j = 0; j < i; j++)
      if (strcmp(f->name, ((const FieldUpdate *)fields->items[j])->name) == 0)
        error_at(c, f->loc, "field '%s' is given twice", f->name);
    emit_constant(c, OBJ_VAL(intern(c, f->name)), f->loc);
    emit_op(c, f->add ? OP_TRUE : OP_FALSE);
    compile_expr(c, f->value, false);
  }
  c->line = e->loc.line;
  emit(c, OP_UPDATE, fields->count);
}

/* The global a call's callee names, or NULL; reports a wrong argument count. */
static const GlobalInfo *check_call(Compiler *c, const Expr *e) {
  int argc = e->as.call.args.count;
  const Expr *callee = e->as.call.callee;
  int global = callee->kind == EXPR_NAME ? global_for(c, callee->as.name) : -1;
  if (global < 0) return NULL;
  const GlobalInfo *info = &c->vm->global_info[global];
  if (info->arity >= 0 && info->arity != argc) {
    error_at(c, e->loc, "'%s' takes %d argument%s, but %d %s given", info->name->chars, info->arity,
             info->arity == 1 ? "" : "s", argc, argc == 1 ? "is" : "are");
  }
  return info;
}

static void compile_call(Compiler *c, const Expr *e, bool tail) {
  int argc = e->as.call.args.count;
  if (argc > MAX_ARGS) {
    error_at(c, e->loc, "a call has at most %d arguments", MAX_ARGS);
    return;
  }
  const GlobalInfo *info = check_call(c, e);
  if (c->fn->proto->kind == PROTO_FUNCTION && is_self_call(c, e)) {
    if (!tail) emit(c, OP_GET_LOCAL, 0); /* the callee's slot: this frame's own function */
    for (int i = 0; i < argc; i++) compile_expr(c, e->as.call.args.items[i], false);
    c->line = e->loc.line;
    emit(c, tail ? OP_TAIL_SELF : OP_CALL_SELF, argc);
    return;
  }
  if (info) {
    if (info->builtin && info->arity == argc) {
      /* build the primitive action, or call the builtin function, without
       * fetching and checking a callee */
      for (int i = 0; i < argc; i++) compile_expr(c, e->as.call.args.items[i], false);
      c->line = e->loc.line;
      emit(c, builtin_is_action(info->builtin) ? OP_ACTION : OP_NATIVE, (int)(info->builtin - builtin_table));
      return;
    }
  }
  compile_expr(c, e->as.call.callee, false);
  for (int i = 0; i < argc; i++) compile_expr(c, e->as.call.args.items[i], false);
  c->line = e->loc.line;
  emit(c, tail ? OP_TAIL_CALL : OP_CALL, argc);
}

static void compile_expr_form(Compiler *c, const Expr *e, bool tail);

static void compile_expr(Compiler *c, const Expr *e, bool tail) {
  if (c->nesting >= MAX_NESTING) {
    if (!c->nesting_reported) error_at(c, e->loc, "expression nested too deeply (more than %d levels)", MAX_NESTING);
    c->nesting_reported = true;
    emit_op(c, OP_UNIT);
    return;
  }
  c->nesting++;
  compile_expr_form(c, e, tail);
  c->nesting--;
}

static void compile_expr_form(Compiler *c, const Expr *e, bool tail) {
  c->line = e->loc.line;
  switch (e->kind) {
    case EXPR_INT: emit_constant(c, INT_VAL(e->as.integer), e->loc); return;
    case EXPR_FLOAT: emit_constant(c, FLOAT_VAL(e->as.number), e->loc); return;
    case EXPR_DURATION: emit_constant(c, DURATION_VAL(e->as.integer), e->loc); return;
    case EXPR_STRING:
      emit_constant(c, OBJ_VAL(obj_string(c->vm, e->as.string.chars, e->as.string.length)), e->loc);
      return;
    case EXPR_BOOL: emit_op(c, e->as.boolean ? OP_TRUE : OP_FALSE); return;
    case EXPR_UNIT: emit_op(c, OP_UNIT); return;
    case EXPR_NONE: emit_op(c, OP_NONE); return;
    case EXPR_NAME: compile_name(c, e->as.name, e->loc); return;
    case EXPR_LIST: compile_list(c, e); return;
    case EXPR_RECORD: compile_record(c, e); return;
    case EXPR_UPDATE: compile_update(c, e); return;
    case EXPR_INTERP: compile_interp(c, e); return;
    case EXPR_CALL: compile_call(c, e, tail); return;
    case EXPR_FIELD:
      compile_expr(c, e->as.field.object, false);
      c->line = e->loc.line;
      emit(c, OP_FIELD, make_constant(c, OBJ_VAL(intern(c, e->as.field.name)), e->loc));
      return;
    case EXPR_INDEX:
      compile_expr(c, e->as.index.object, false);
      compile_expr(c, e->as.index.index, false);
      c->line = e->loc.line;
      emit_op(c, OP_INDEX);
      return;
    case EXPR_UNARY:
      if (e->as.binary.op == UN_NEG && fold_negation(c, e->as.binary.left)) return;
      compile_expr(c, e->as.binary.left, false);
      c->line = e->loc.line;
      emit_op(c, e->as.binary.op == UN_NEG ? OP_NEG : OP_NOT);
      return;
    case EXPR_BINARY:
      if (immediate_op(e) != OP_COUNT) {
        /* x + 1, n < 2: the int in the instruction */
        compile_expr(c, e->as.binary.left, false);
        c->line = e->loc.line;
        emit(c, immediate_op(e), (uint8_t)(int8_t)e->as.binary.right->as.integer);
        return;
      }
      compile_expr(c, e->as.binary.left, false);
      compile_expr(c, e->as.binary.right, false);
      c->line = e->loc.line;
      if (e->as.binary.op == BIN_CONS) emit(c, OP_NATIVE, (int)(builtin_find("cons") - builtin_table));
      else emit_op(c, binary_ops[e->as.binary.op]);
      return;
    case EXPR_AND:
    case EXPR_OR: {
      /* a && b  is  if a then b else false;  a || b  is  if a then true else b */
      compile_expr(c, e->as.then.left, false);
      int to_else = emit_jump(c, OP_JUMP_IF_FALSE);
      if (e->kind == EXPR_AND) compile_expr(c, e->as.then.right, tail);
      else emit_op(c, OP_TRUE);
      int to_end = emit_jump(c, OP_JUMP);
      patch_jump(c, to_else, e->loc);
      adjust_depth(c, -1);
      if (e->kind == EXPR_AND) emit_op(c, OP_FALSE);
      else compile_expr(c, e->as.then.right, tail);
      patch_jump(c, to_end, e->loc);
      return;
    }
    case EXPR_IF: {
      compile_expr(c, e->as.if_.cond, false);
      int to_else = emit_jump(c, OP_JUMP_IF_FALSE);
      compile_expr(c, e->as.if_.then, tail);
      int to_end = emit_jump(c, OP_JUMP);
      patch_jump(c, to_else, e->loc);
      adjust_depth(c, -1);
      compile_expr(c, e->as.if_.otherwise, tail);
      patch_jump(c, to_end, e->loc);
      return;
    }
    case EXPR_LET: {
      int base = c->fn->local_count;
      compile_expr(c, e->as.let.value, false);
      if (e->as.let.pattern) compile_destructure(c, e->as.let.pattern, "this let's pattern does not fit ");
      else declare_local(c, e->as.let.name, e->as.let.name_loc);
      compile_expr(c, e->as.let.body, tail);
      end_scope(c, base);
      return;
    }
    case EXPR_MATCH: compile_match(c, e, tail, false); return;
    case EXPR_LAMBDA: compile_lambda(c, e, e->as.lambda.name, false); return;
    case EXPR_BLOCK:
    case EXPR_THEN:
    case EXPR_BIND:
      compile_action(c, e);
      return;
    case EXPR_RETURN: {
      compile_expr(c, e->as.ret, false);
      c->line = e->loc.line;
      const Builtin *pure = builtin_find("pure");
      emit(c, OP_ACTION, (int)(pure - builtin_table));
      return;
    }
  }
}

/* ---- patterns (pattern.h): tests and jumps ----
 *
 * The value a pattern looks at is in a slot of the frame. Each test pushes
 * a bool and a JUMP_IF_FALSE leaves the arm when it fails; the values the
 * pattern took apart are hidden locals above the subject, and its names are
 * locals. A failing test jumps with some of those on the stack, so the arm's
 * failure path (fail_path) pops them, from the deepest, before the next arm. */

/* The failing tests of one pattern: each jump to patch and the stack depth
 * after it, which the failure path pops back to. */
typedef struct {
  int *at;
  int *depth;
  int count;
  int capacity;
} Fails;

/* A JUMP_IF_FALSE on the bool just pushed, taken when the test fails. */
static void test_fails(Compiler *c, Fails *fails) {
  int at = emit_jump(c, OP_JUMP_IF_FALSE);
  if (fails->count == fails->capacity) {
    fails->capacity = fails->capacity ? fails->capacity * 2 : 8;
    fails->at = xrealloc(fails->at, (size_t)fails->capacity * sizeof(int));
    fails->depth = xrealloc(fails->depth, (size_t)fails->capacity * sizeof(int));
  }
  fails->at[fails->count] = at;
  fails->depth[fails->count] = c->fn->depth;
  fails->count++;
}

/* Here the failing tests land, each where the POPs that follow leave the
 * stack `depth` deep (the depth at the pattern's start): the code after
 * runs when the pattern did not fit, with the depth and locals of before. */
static void fail_path(Compiler *c, Fails *fails, int depth, int locals, Loc loc) {
  int deepest = depth;
  for (int i = 0; i < fails->count; i++)
    if (fails->depth[i] > deepest) deepest = fails->depth[i];
  c->fn->depth = deepest;
  c->fn->local_count = locals;
  for (int d = deepest; d >= depth; d--) {
    for (int i = 0; i < fails->count; i++)
      if (fails->depth[i] == d) patch_jump(c, fails->at[i], loc);
    if (d > depth) emit_op(c, OP_POP);
  }
  free(fails->at);
  free(fails->depth);
  *fails = (Fails){0};
}

static void compile_pattern_at(Compiler *c, const Expr *p, int slot, Fails *fails);

/* The literal pattern `p` against the value on top, which the test takes,
 * or with `keep` leaves there (a subject several arms test). */
static void compile_literal_test(Compiler *c, const Expr *p, Fails *fails, bool keep) {
  bool constant = p->kind != EXPR_BOOL && p->kind != EXPR_UNIT && p->kind != EXPR_NONE;
  if (keep && !constant) emit(c, OP_GET_LOCAL, c->fn->depth - 1);
  switch (p->kind) {
    case EXPR_BOOL: emit_op(c, p->as.boolean ? OP_TRUE : OP_FALSE); emit_op(c, OP_EQ); break;
    case EXPR_UNIT: emit_op(c, OP_UNIT); emit_op(c, OP_EQ); break;
    case EXPR_NONE: emit_op(c, OP_NONE); emit_op(c, OP_EQ); break;
    default: {
      /* a number (negated or not), a duration or a string: a constant */
      const Expr *k = p->kind == EXPR_UNARY ? p->as.binary.left : p;
      bool negate = p->kind == EXPR_UNARY;
      Value value = k->kind == EXPR_STRING ? OBJ_VAL(obj_string(c->vm, k->as.string.chars, k->as.string.length))
                    : k->kind == EXPR_FLOAT ? FLOAT_VAL(negate ? -k->as.number : k->as.number)
                    : k->kind == EXPR_DURATION ? DURATION_VAL(negate ? -k->as.integer : k->as.integer)
                                               : INT_VAL(negate ? -k->as.integer : k->as.integer);
      emit(c, keep ? OP_IS_K : OP_EQ_K, make_constant(c, value, p->loc));
      break;
    }
  }
  test_fails(c, fails);
}

/* The pattern `p` against the value on top, just pushed: a name makes it
 * a local, `_` drops it, a literal's test takes it, and anything else keeps
 * it as a hidden local to take apart. */
static void compile_pattern_top(Compiler *c, const Expr *p, Fails *fails) {
  switch (pattern_kind(p)) {
    case PATTERN_WILDCARD: emit_op(c, OP_POP); return;
    case PATTERN_BINDING: declare_local(c, p->as.name, p->loc); return;
    case PATTERN_LITERAL: compile_literal_test(c, p, fails, false); return;
    default:
      declare_local(c, "", p->loc);
      compile_pattern_at(c, p, c->fn->depth - 1, fails);
      return;
  }
}

/* Push the builtin function `name` of the value in `slot` (head, tail,
 * fromSome), which a test has shown it accepts. */
static void push_part(Compiler *c, const char *name, int slot) {
  emit(c, OP_GET_LOCAL, slot);
  emit(c, OP_NATIVE, (int)(builtin_find(name) - builtin_table));
}

/* The pattern `p` against the value in `slot`. */
static void compile_pattern_at(Compiler *c, const Expr *p, int slot, Fails *fails) {
  if (c->nesting >= MAX_NESTING) {
    if (!c->nesting_reported) error_at(c, p->loc, "pattern nested too deeply (more than %d levels)", MAX_NESTING);
    c->nesting_reported = true;
    return;
  }
  c->nesting++;
  c->line = p->loc.line;
  switch (pattern_kind(p)) {
    case PATTERN_WILDCARD:
    case PATTERN_INVALID: /* reported by pattern_check */
      break;
    case PATTERN_BINDING:
      emit(c, OP_GET_LOCAL, slot);
      declare_local(c, p->as.name, p->loc);
      break;
    case PATTERN_LITERAL:
      if (slot == c->fn->depth - 1) {
        compile_literal_test(c, p, fails, true); /* on top already */
        break;
      }
      emit(c, OP_GET_LOCAL, slot);
      compile_literal_test(c, p, fails, false);
      break;
    case PATTERN_SOME: {
      const Expr *inner = p->as.call.args.items[0];
      emit(c, OP_IS_SOME, slot);
      test_fails(c, fails);
      if (pattern_kind(inner) == PATTERN_WILDCARD) break;
      push_part(c, "fromSome", slot);
      compile_pattern_top(c, inner, fails);
      break;
    }
    case PATTERN_CONS: {
      const Expr *head = p->as.binary.left, *rest = p->as.binary.right;
      emit(c, OP_IS_CONS, slot);
      test_fails(c, fails);
      if (pattern_kind(head) != PATTERN_WILDCARD) {
        push_part(c, "head", slot);
        compile_pattern_top(c, head, fails);
      }
      if (pattern_kind(rest) != PATTERN_WILDCARD) {
        push_part(c, "tail", slot);
        compile_pattern_top(c, rest, fails);
      }
      break;
    }
    case PATTERN_LIST: {
      /* [p1, ..., pn]: n cells, each its head tested, then [] */
      int cell = slot;
      for (int i = 0; i < p->as.items.count; i++) {
        const Expr *item = p->as.items.items[i];
        emit(c, OP_IS_CONS, cell);
        test_fails(c, fails);
        if (pattern_kind(item) != PATTERN_WILDCARD) {
          push_part(c, "head", cell);
          compile_pattern_top(c, item, fails);
        }
        push_part(c, "tail", cell);
        declare_local(c, "", p->loc);
        cell = c->fn->depth - 1;
      }
      emit(c, OP_IS_NIL, cell);
      test_fails(c, fails);
      break;
    }
    case PATTERN_RECORD: {
      const NodeList *pairs = &p->as.record.names;
      if (pairs->count == 0) {
        emit(c, OP_IS_RECORD, slot);
        test_fails(c, fails);
      }
      for (int i = 0; i < pairs->count / 2; i++) {
        if (c->known_field && slot == c->known_record && strcmp(pairs->items[2 * i], c->known_field) == 0) {
          /* read once for a run of arms (compile_match) */
          compile_pattern_at(c, pairs->items[2 * i + 1], c->known_slot, fails);
          continue;
        }
        emit(c, OP_GET_LOCAL, slot);
        emit(c, OP_TRY_FIELD, make_constant(c, OBJ_VAL(intern(c, pairs->items[2 * i])), p->loc));
        test_fails(c, fails);
        compile_pattern_top(c, pairs->items[2 * i + 1], fails);
      }
      break;
    }
  }
  c->nesting--;
}

/* The runtime error of a value (in `slot`) that no pattern fitted, at `loc`. */
static void emit_match_fail(Compiler *c, const char *what, int slot, Loc loc) {
  c->line = loc.line;
  emit(c, OP_GET_LOCAL, slot);
  emit(c, OP_MATCH_FAIL, make_constant(c, OBJ_VAL(intern(c, what)), loc));
}

/* `let p = e` or `p <- e` with the value of e on top: it becomes a hidden
 * local, the pattern's names locals after it; a value that does not fit
 * is a runtime error. */
static void compile_destructure(Compiler *c, const Expr *pattern, const char *what) {
  if (!pattern_check(pattern, c->diag, c->source)) return;
  declare_local(c, "", pattern->loc);
  int slot = c->fn->depth - 1, depth = c->fn->depth, locals = c->fn->local_count;
  Fails fails = {0};
  compile_pattern_at(c, pattern, slot, &fails);
  if (fails.count == 0) return; /* it fits every value */
  int after_depth = c->fn->depth, after_locals = c->fn->local_count;
  int to_fit = emit_jump(c, OP_JUMP);
  Local fitted[MAX_LOCALS];
  int bound = after_locals - locals;
  memcpy(fitted, c->fn->locals + locals, (size_t)bound * sizeof(Local));
  fail_path(c, &fails, depth, locals, pattern->loc);
  emit_match_fail(c, what, slot, pattern->loc);
  patch_jump(c, to_fit, pattern->loc);
  c->fn->depth = after_depth;
  memcpy(c->fn->locals + locals, fitted, (size_t)bound * sizeof(Local));
  c->fn->local_count = after_locals;
}

/* Arms in a row whose record patterns all name the field a run's first
 * names (`#{kind: "vote", ...}`, `#{kind: "ack", ...}`) read it once, into
 * a hidden local above the subject, where a literal's test keeps it: one
 * instruction an arm. A subject without it skips them all. Starting at arm
 * `first`, returns the arm after the run, or -1 for no run (of two or more). */
static int begin_field_run(Compiler *c, const NodeList *arms, int first, int subject, Fails *no_field,
                           const char **field_read) {
  const Expr *p = ((const MatchArm *)arms->items[first])->pattern;
  if (p->kind != EXPR_RECORD || p->as.record.names.count == 0) return -1;
  const char *field = p->as.record.names.items[0];
  int end = first;
  for (; end < arms->count; end++) {
    const Expr *q = ((const MatchArm *)arms->items[end])->pattern;
    bool names_it = false;
    for (int i = 0; q->kind == EXPR_RECORD && i < q->as.record.names.count && !names_it; i += 2)
      names_it = strcmp(q->as.record.names.items[i], field) == 0;
    if (!names_it) break;
  }
  if (end - first < 2) return -1;
  emit(c, OP_GET_LOCAL, subject);
  emit(c, OP_TRY_FIELD, make_constant(c, OBJ_VAL(intern(c, field)), p->loc));
  test_fails(c, no_field);
  declare_local(c, "", p->loc);
  *field_read = field;
  return end;
}

/* After a run of arms: drop the field it read (where a subject without it
 * lands too), back to the match's `depth` and `locals`. */
static void end_field_run(Compiler *c, Fails *no_field, int depth, int locals, Loc loc) {
  c->fn->depth = depth + 1;
  for (int i = 0; i < no_field->count; i++) patch_jump(c, no_field->at[i], loc);
  emit_op(c, OP_POP);
  free(no_field->at);
  free(no_field->depth);
  *no_field = (Fails){0};
  c->fn->local_count = locals;
}

/* match e { p [if g] => body ... }: the subject is a hidden local; each arm
 * tests it, binds its names, checks its guard and computes (run: runs) its
 * body, or goes on to the next. `tail`: in tail position, where a run
 * body's path ends, as compile_run's does. */
static void compile_match(Compiler *c, const Expr *e, bool tail, bool run) {
  int base = c->fn->local_count;
  const NodeList *arms = &e->as.match.arms;
  /* a local's value is tested where it is; anything else, or a subject of
   * literal arms (whose tests keep it on top), is a hidden local */
  const Expr *what = e->as.match.subject;
  int subject = what->kind == EXPR_NAME ? resolve_local(c->fn, what->as.name) : -1;
  for (int i = 0; i < arms->count && subject >= 0; i++)
    if (pattern_kind(((const MatchArm *)arms->items[i])->pattern) == PATTERN_LITERAL) subject = -1;
  bool hidden = subject < 0;
  if (hidden) {
    compile_expr(c, what, false);
    declare_local(c, "", e->loc);
    subject = c->fn->depth - 1;
  }
  int depth = c->fn->depth, locals = c->fn->local_count;
  int *ends = xrealloc(NULL, (size_t)arms->count * sizeof(int));
  int end_count = 0;
  const MatchArm *catch_all = NULL;
  Fails no_field = {0};  /* the run of arms' field missing: on past the run */
  int run_end = -1;      /* the arm after the run of arms that read one field */
  const char *field_read = NULL;
  for (int i = 0; i < arms->count; i++) {
    const MatchArm *arm = arms->items[i];
    if (i == run_end) {
      end_field_run(c, &no_field, depth, locals, e->loc);
      field_read = NULL;
    }
    if (!field_read) run_end = begin_field_run(c, arms, i, subject, &no_field, &field_read);
    int arm_depth = c->fn->depth, arm_locals = c->fn->local_count;
    if (catch_all) {
      diag_warning(c->diag, c->source, arm->loc.line, arm->loc.col,
                   "this arm is never chosen: an earlier arm (line %d) fits every value", catch_all->loc.line);
      catch_all = NULL; /* one warning per catch-all is enough */
    }
    if (!catch_all && !arm->guard && pattern_matches_all(arm->pattern)) catch_all = arm;
    if (!pattern_check(arm->pattern, c->diag, c->source)) continue;
    Fails fails = {0};
    c->known_field = field_read; /* for the arm's pattern only: not its guard's or body's */
    c->known_record = subject;
    c->known_slot = arm_depth - 1;
    compile_pattern_at(c, arm->pattern, subject, &fails);
    c->known_field = NULL;
    if (arm->guard) {
      compile_expr(c, arm->guard, false);
      c->line = arm->guard->loc.line;
      test_fails(c, &fails);
    }
    if (run) compile_run(c, arm->body, tail);
    else compile_expr(c, arm->body, tail);
    if (!(run && tail)) {
      end_scope(c, locals);
      ends[end_count++] = emit_jump(c, OP_JUMP);
    }
    fail_path(c, &fails, arm_depth, arm_locals, arm->loc);
  }
  if (field_read) end_field_run(c, &no_field, depth, locals, e->loc);
  emit_match_fail(c, "no arm of this match fits ", subject, e->loc);
  c->fn->depth = depth + 1;
  for (int i = 0; i < end_count; i++) patch_jump(c, ends[i], e->loc);
  free(ends);
  if (run && tail) return; /* every path has ended */
  if (hidden) end_scope(c, base);
}

/* ---- modules ---- */

ObjClosure *compile_module(VM *vm, const Source *source, const Module *module, Diag *diag) {
  Compiler c = {vm, diag, source, vm_file_name(vm, source->path), NULL, 1, NULL, -1, 0, false, false, false, NULL, 0, 0};
  int errors_before = diag->errors;
  FnState script;
  begin_fn(&c, &script, PROTO_BLOCK, "<top level>", (Loc){1, 1});

  /* Declare every top-level name first, so definitions may refer to each other. */
  int *slots = xrealloc(NULL, (size_t)(module->decls.count + 1) * sizeof(int));
  Table defined; /* this module's names -> line, for duplicates */
  table_init(&defined);
  for (int i = 0; i < module->decls.count; i++) {
    const Decl *d = module->decls.items[i];
    slots[i] = -1;
    if (d->kind == DECL_IMPORT) continue;
    ObjString *name = intern(&c, d->name);
    int existing = vm_find_global(vm, name);
    if (existing >= 0 && vm->global_info[existing].builtin) {
      error_at(&c, d->loc, "'%s' is a builtin and cannot be redefined", d->name);
      continue;
    }
    Value earlier;
    if (table_get(&defined, name, &earlier)) {
      error_at(&c, d->loc, "'%s' is already defined on line %d", d->name, (int)AS_INT(earlier));
      continue;
    }
    table_set(&defined, name, INT_VAL(d->loc.line));
    int arity = d->kind == DECL_FN ? d->expr->as.lambda.params.count : -1;
    slots[i] = vm_declare_global(vm, name, arity, c.file, d->loc.line);
  }
  /* Functions are defined before any value is computed. */
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < module->decls.count; i++) {
      const Decl *d = module->decls.items[i];
      if (slots[i] < 0 || (d->kind == DECL_FN) != (pass == 0)) continue;
      c.line = d->loc.line;
      c.decl = d->name;
      c.decl_global = d->kind == DECL_FN ? slots[i] : -1;
      if (d->kind == DECL_FN) compile_lambda(&c, d->expr, d->name, false);
      else compile_expr(&c, d->expr, false);
      emit(&c, OP_DEFINE_GLOBAL, slots[i]);
    }
  }
  free(slots);
  table_free(&defined);
  emit_op(&c, OP_UNIT);
  emit_op(&c, OP_RETURN);
  end_fn(&c, &script, (Loc){1, 1});
  if (diag->errors != errors_before) return NULL;
  ObjClosure *closure = obj_closure(vm, script.proto, 0);
  return closure;
}
