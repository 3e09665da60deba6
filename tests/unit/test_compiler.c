/* compiler/compiler.c: the bytecode it produces (walked with opcode_size and
 * listed with debug_list_proto), stack depths, and compile errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "../../compiler/compiler.h"
#include "debug.h"
#include "parse.h"
#include "builtins.h"

/* ---- compiling straight through compile_module ---- */

/* Parse and compile `text` as test.sim in u's VM; the module's init closure,
 * or NULL with the diagnostics in u->err. The VM keeps its own copy of the
 * file name (vm_file_name), so the source goes once compiled. Nothing
 * roots the result, so the collector stays paused for the rest of the test
 * (the VM is freed whole at teardown). */
static ObjClosure *compile_text(UnitVM *u, const char *text) {
  VM *vm = u->vm;
  Source *source = source_from_memory(UNIT_SCRIPT_NAME, text, strlen(text));
  Diag diag = {unit_write_err, u, 0};
  Module module;
  ObjClosure *init = NULL;
  vm->gc_paused++;
  if (parse_source(source, &diag, &module)) init = compile_module(vm, source, &module, &diag);
  ast_free(&module);
  source_free(source);
  return init;
}

static ObjClosure *compile_ok_at(UnitVM *u, const char *text, const char *file, int line) {
  ObjClosure *init = compile_text(u, text);
  if (!init || u->err.length) {
    print_error("compile failed:\n%s", unit_text(&u->err));
    _fail(file, line);
  }
  return init;
}
#define compile_ok(u, text) compile_ok_at((u), (text), __FILE__, __LINE__)

/* ---- prototypes and instructions ---- */

#define MAX_PROTOS 4096

typedef struct {
  const ObjProto *items[MAX_PROTOS];
  int count;
} ProtoList;

/* `proto` and every prototype in its constants, depth first. */
static void collect_protos(const ObjProto *proto, ProtoList *list) {
  for (int i = 0; i < list->count; i++)
    if (list->items[i] == proto) return;
  if (list->count < MAX_PROTOS) list->items[list->count++] = proto;
  for (int i = 0; i < proto->chunk.constants.count; i++) {
    Value k = proto->chunk.constants.values[i];
    if (IS_PROTO(k)) collect_protos(AS_PROTO(k), list);
  }
}

/* The first prototype named `name` under `root`, or NULL. */
static const ObjProto *find_proto(const ObjProto *root, const char *name) {
  static ProtoList list;
  list.count = 0;
  collect_protos(root, &list);
  for (int i = 0; i < list.count; i++)
    if (list.items[i]->name && strcmp(list.items[i]->name->chars, name) == 0) return list.items[i];
  return NULL;
}

typedef struct {
  int offset;
  uint8_t op;
  int operand; /* -1 when none */
  int line;
} Insn;

#define MAX_INSNS 4096

typedef struct {
  Insn items[MAX_INSNS];
  int count;
} InsnList;

/* Decode a chunk instruction by instruction with opcode_size(). */
static void decode(const ObjProto *proto, InsnList *out) {
  const Chunk *chunk = &proto->chunk;
  out->count = 0;
  for (int offset = 0; offset < chunk->count && out->count < MAX_INSNS;) {
    uint8_t op = chunk->code[offset];
    assert_true(op < OP_COUNT);
    int size = opcode_size(op);
    assert_true(offset + size <= chunk->count);
    int operand = opcode_info[op].width ? opcode_operand(chunk->code + offset) : -1;
    out->items[out->count++] = (Insn){offset, op, operand, chunk->lines[offset]};
    offset += size;
  }
}

static int count_op(const InsnList *insns, OpCode op) {
  int n = 0;
  for (int i = 0; i < insns->count; i++) n += insns->items[i].op == op;
  return n;
}

/* How often `op` occurs in `root` and every prototype below it. */
static int count_op_in_tree(const ObjProto *root, OpCode op) {
  static ProtoList list;
  static InsnList insns;
  list.count = 0;
  collect_protos(root, &list);
  int n = 0;
  for (int i = 0; i < list.count; i++) {
    decode(list.items[i], &insns);
    n += count_op(&insns, op);
  }
  return n;
}

/* The prototype under `root` whose code contains `op`, or NULL. */
static const ObjProto *proto_with_op(const ObjProto *root, OpCode op) {
  static ProtoList list;
  static InsnList insns;
  list.count = 0;
  collect_protos(root, &list);
  for (int i = 0; i < list.count; i++) {
    decode(list.items[i], &insns);
    if (count_op(&insns, op)) return list.items[i];
  }
  return NULL;
}

/* The opcodes as "NAME NAME ..." (for failure messages). */
static void ops_string(const InsnList *insns, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < insns->count && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%s", i ? " " : "", opcode_info[insns->items[i].op].name);
}

static int builtin_index(const char *name) {
  const Builtin *b = builtin_find(name);
  assert_non_null(b);
  return (int)(b - builtin_table);
}

/* ---- a stack-depth verifier ---- */

/* The net stack effect of one instruction; false for an opcode whose
 * effect this verifier does not know. Those that depend on the operand are
 * worked out here by hand, apart from the opcode table's formulas, so that
 * a wrong formula shows as a compiler test failing. */
static bool insn_effect(uint8_t op, int operand, int *effect) {
  switch (op) {
    case OP_SLIDE: *effect = -operand; return true;
    case OP_ACTION:
    case OP_PRIM:
    case OP_NATIVE: *effect = 1 - builtin_table[operand].arity; return true;
    case OP_LIST: *effect = 1 - operand; return true;
    case OP_RECORD: *effect = 1 - 2 * operand; return true;
    case OP_CALL:
    case OP_TAIL_CALL: *effect = -operand; return true;
    case OP_CALL_SELF: *effect = -operand; return true; /* the callee is GET_LOCAL 0's copy */
    case OP_TAIL_SELF:
    case OP_TAIL_SELF_BIND: *effect = -operand; return true; /* ends the path: no callee pushed */
    default:
      /* the fused call-and-bind variants pop their arguments like CALL */
      if (opcode_info[op].operand == OPERAND_COUNT && strstr(opcode_info[op].name, "CALL")) {
        *effect = -operand;
        return true;
      }
      *effect = opcode_effect(op, operand);
      return *effect != OPCODE_VAR;
  }
}

/* Follow every path through `proto` from its entry depth (slot 0 plus the
 * parameters); returns the deepest stack seen, or -1 with a message. Paths
 * must agree on the depth where they meet, stay above slot 0, jump to
 * instruction starts and end in RETURN. */
static int verify_depths(const ObjProto *proto, char *err, size_t errsize) {
  const Chunk *chunk = &proto->chunk;
  int n = chunk->count;
  int *depth = malloc(((size_t)n + 1) * sizeof(int));
  int *work = malloc(((size_t)n + 1) * sizeof(int));
  bool *start = calloc((size_t)n + 1, 1);
  if (!depth || !work || !start) abort();
  for (int i = 0; i <= n; i++) depth[i] = -1;
  for (int offset = 0; offset < n; offset += opcode_size(chunk->code[offset])) {
    start[offset] = true;
    if (chunk->code[offset] >= OP_COUNT) {
      snprintf(err, errsize, "bad opcode %d at %d", chunk->code[offset], offset);
      goto fail;
    }
  }
  int max = 1 + proto->arity, top = 0;
  depth[0] = max;
  work[top++] = 0;
  while (top > 0) {
    int offset = work[--top];
    int d = depth[offset];
    for (;;) {
      if (offset >= n) {
        snprintf(err, errsize, "code falls off the end of the chunk");
        goto fail;
      }
      uint8_t op = chunk->code[offset];
      int size = opcode_size(op);
      int operand = opcode_info[op].width ? opcode_operand(chunk->code + offset) : -1;
      if (op == OP_RETURN || op == OP_THREAD_EXIT) {
        if (d < 2) {
          snprintf(err, errsize, "%s at %d with nothing to return (depth %d)", opcode_info[op].name, offset, d);
          goto fail;
        }
        break;
      }
      int effect;
      if (!insn_effect(op, operand, &effect)) {
        snprintf(err, errsize, "the verifier does not know the stack effect of %s", opcode_info[op].name);
        goto fail;
      }
      d += effect;
      if (d < 1) {
        snprintf(err, errsize, "%s at %d pops into slot 0 (depth %d)", opcode_info[op].name, offset, d);
        goto fail;
      }
      if (d > max) max = d;
      if (op == OP_TAIL_SELF || op == OP_TAIL_SELF_BIND) break; /* the frame starts again */
      int next = offset + size;
      if (op == OP_JUMP || op == OP_JUMP_IF_FALSE) {
        int target = next + operand;
        if (target > n || !start[target]) {
          snprintf(err, errsize, "%s at %d jumps to %d, not an instruction", opcode_info[op].name, offset, target);
          goto fail;
        }
        if (depth[target] < 0) {
          depth[target] = d;
          work[top++] = target;
        } else if (depth[target] != d) {
          snprintf(err, errsize, "paths meet at %d with depths %d and %d", target, depth[target], d);
          goto fail;
        }
        if (op == OP_JUMP) break;
      }
      if (next < n && depth[next] >= 0) {
        if (depth[next] != d) {
          snprintf(err, errsize, "paths meet at %d with depths %d and %d", next, depth[next], d);
          goto fail;
        }
        break; /* already followed from here */
      }
      if (next < n) depth[next] = d;
      offset = next;
    }
  }
  free(depth);
  free(work);
  free(start);
  return max;
fail:
  free(depth);
  free(work);
  free(start);
  return -1;
}

/* Every compiled prototype under `root` passes the verifier and reserves
 * at least the depth it reaches. Returns how many were checked. */
static int check_all_protos(const ObjProto *root, const char *file, int line) {
  static ProtoList list;
  list.count = 0;
  collect_protos(root, &list);
  for (int i = 0; i < list.count; i++) {
    const ObjProto *proto = list.items[i];
    char err[256] = "";
    int max = verify_depths(proto, err, sizeof err);
    const char *name = proto->name ? proto->name->chars : "?";
    if (max < 0) {
      print_error("%s (%s:%d): %s\n", name, proto->file, proto->line, err);
      _fail(file, line);
    }
    if (max > proto->max_slots) {
      print_error("%s (%s:%d): reaches depth %d but max_slots is %d\n", name, proto->file, proto->line, max,
                  proto->max_slots);
      _fail(file, line);
    }
  }
  return list.count;
}
#define assert_protos_verify(root) check_all_protos((root), __FILE__, __LINE__)

/* ---- tests ---- */

/* The verifier itself rejects broken code (so its passes mean something). */
static void test_verifier_rejects_bad_code(void **state) {
  UnitVM *u = *state;
  static const struct {
    uint8_t code[8];
    int length;
    int expected; /* max depth, or -1 */
  } cases[] = {
      {{OP_UNIT, OP_UNIT, OP_POP, OP_RETURN}, 4, 3},
      {{OP_POP, OP_UNIT, OP_RETURN}, 3, -1},                              /* pops slot 0 */
      {{OP_UNIT}, 1, -1},                                                 /* falls off the end */
      {{OP_UNIT, OP_JUMP, 0, 1, OP_RETURN}, 5, -1},                       /* jumps into an operand */
      {{OP_TRUE, OP_JUMP_IF_FALSE, 0, 1, OP_UNIT, OP_RETURN}, 6, -1},     /* depths disagree */
      {{OP_TRUE, OP_JUMP_IF_FALSE, 0, 2, OP_UNIT, OP_POP, OP_UNIT, OP_RETURN}, 8, 2},
      {{OP_RETURN}, 1, -1},                                               /* nothing to return */
  };
  u->vm->gc_paused++;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ObjProto *proto = obj_proto(u->vm, PROTO_BLOCK, "<unit>", 1);
    for (int j = 0; j < cases[i].length; j++) chunk_write(&proto->chunk, cases[i].code[j], 1);
    char err[256] = "";
    int depth = verify_depths(proto, err, sizeof err);
    if (depth != cases[i].expected) {
      print_error("case %zu: depth %d, expected %d (%s)\n", i, depth, cases[i].expected, err);
      fail();
    }
  }
}

static const char *const actions_source =
    "fn f(act) {\n"
    "  delay(1us)\n"
    "  say(\"x\")\n"
    "  act\n"
    "}\n"
    "main = f(pure(1))\n";

/* delay(...) as a statement is the DELAY instruction itself, with a
 * literal argument in it (DELAY_K, SAY_K); the last statement is run with
 * TAIL_BIND. */
static void test_statement_primitives_are_opcodes(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, actions_source);
  const ObjProto *f = find_proto(init->proto, "f");
  assert_non_null(f);
  assert_int_equal(count_op_in_tree(f, OP_DELAY_K), 1);
  assert_int_equal(count_op_in_tree(f, OP_SAY_K), 1);
  assert_int_equal(count_op_in_tree(f, OP_DELAY) + count_op_in_tree(f, OP_SAY), 0);
  assert_int_equal(count_op_in_tree(f, OP_ACTION), 0); /* no action values built */
  assert_int_equal(count_op_in_tree(f, OP_BIND), 0);   /* and none bound */

  const ObjProto *body = proto_with_op(f, OP_DELAY_K);
  InsnList insns;
  decode(body, &insns);
  char listing[1024];
  ops_string(&insns, listing, sizeof listing);
  /* the DELAY_K carries the line of its statement and the duration */
  for (int i = 0; i < insns.count; i++) {
    if (insns.items[i].op == OP_DELAY_K) {
      assert_int_equal(insns.items[i].line, 2);
      Value k = body->chunk.constants.values[insns.items[i].operand];
      assert_true(IS_DURATION(k));
      assert_int_equal(AS_DURATION(k), 1000);
    }
    if (insns.items[i].op == OP_SAY_K) assert_int_equal(insns.items[i].line, 3);
  }
  /* ... and the result of a statement is dropped */
  assert_int_equal(count_op(&insns, OP_POP), 2);
  /* the last statement, `act`, runs in tail position */
  int last = insns.count - 1;
  if (insns.items[last].op == OP_RETURN) last--; /* a RETURN may follow TAIL_BIND */
  if (insns.items[last].op != OP_TAIL_BIND) {
    print_error("the block should end with TAIL_BIND: %s\n", listing);
    fail();
  }
  assert_int_equal(insns.items[last].line, 4);
  assert_int_equal(count_op(&insns, OP_TAIL_BIND), 1);
}

/* Only a bind of a constructor's result labels it (LABEL_NEW, with the
 * bound name): other binds get no extra instruction. */
static void test_label_only_constructor_binds(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u,
                                "fn g(n) = newTVar(n)\n"
                                "fn f() {\n"
                                "  a <- newTVar(1)\n"
                                "  b <- atomically(newTVar(2))\n"
                                "  m <- newEmptyMVar()\n"
                                "  c <- g(3)\n"
                                "  d <- return a\n"
                                "  let e = newTVar(4)\n"
                                "  n <- now()\n"
                                "  return [a, b, m, c, d, e, n]\n"
                                "}\n"
                                "main = f()\n");
  const ObjProto *f = find_proto(init->proto, "f");
  assert_non_null(f);
  assert_int_equal(count_op_in_tree(f, OP_LABEL_NEW), 3);
  InsnList insns;
  decode(f, &insns);
  const char *names[] = {"a", "b", "m"};
  int seen = 0;
  for (int i = 0; i < insns.count; i++) {
    if (insns.items[i].op != OP_LABEL_NEW) continue;
    Value k = f->chunk.constants.values[insns.items[i].operand];
    assert_true(IS_STRING(k));
    assert_string_equal(AS_CSTRING(k), names[seen++]);
  }
  assert_int_equal(seen, 3);
}

/* -O0: every action is built as a value (ACTION) and bound (BIND). */
static void test_O0_builds_and_binds_actions(void **state) {
  UnitVM *u = *state;
  assert_true(u->config.reify_actions);
  assert_false(u->vm->direct_actions);
  ObjClosure *init = compile_ok(u, actions_source);
  const ObjProto *f = find_proto(init->proto, "f");
  assert_non_null(f);
  assert_int_equal(count_op_in_tree(f, OP_DELAY), 0);
  assert_int_equal(count_op_in_tree(f, OP_SAY), 0);
  const ObjProto *body = proto_with_op(f, OP_ACTION);
  assert_non_null(body);
  InsnList insns;
  decode(body, &insns);
  char listing[1024];
  ops_string(&insns, listing, sizeof listing);
  int delay = builtin_index("delay"), say = builtin_index("say");
  bool saw_delay = false, saw_say = false;
  for (int i = 0; i + 1 < insns.count; i++) {
    if (insns.items[i].op != OP_ACTION) continue;
    if (insns.items[i + 1].op != OP_BIND) {
      print_error("ACTION not followed by BIND: %s\n", listing);
      fail();
    }
    if (insns.items[i].operand == delay) saw_delay = true;
    if (insns.items[i].operand == say) saw_say = true;
  }
  assert_true(saw_delay);
  assert_true(saw_say);
  assert_int_equal(count_op(&insns, OP_BIND), 2);
  int last = insns.count - 1;
  if (insns.items[last].op == OP_RETURN) last--;
  if (insns.items[last].op != OP_TAIL_BIND) {
    print_error("the block should end with TAIL_BIND: %s\n", listing);
    fail();
  }
}

/* Outside statement position a primitive call builds an action value even
 * with optimisation: `x = delay(1us)` must not wait when computed. */
static void test_primitive_value_is_an_action(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, "pause = delay(1us)\nmain = pause\n");
  InsnList insns;
  decode(init->proto, &insns);
  assert_int_equal(count_op(&insns, OP_DELAY), 0);
  int delay = builtin_index("delay");
  int actions = 0;
  for (int i = 0; i < insns.count; i++)
    if (insns.items[i].op == OP_ACTION && insns.items[i].operand == delay) actions++;
  assert_int_equal(actions, 1);
}

/* How often PRIM runs the builtin `name` in `root` and every prototype below it. */
static int count_prim_in_tree(const ObjProto *root, const char *name) {
  static ProtoList list;
  static InsnList insns;
  list.count = 0;
  collect_protos(root, &list);
  int n = 0, index = (int)(builtin_find(name) - builtin_table);
  for (int i = 0; i < list.count; i++) {
    decode(list.items[i], &insns);
    for (int j = 0; j < insns.count; j++) n += insns.items[j].op == OP_PRIM && insns.items[j].operand == index;
  }
  return n;
}

/* A bind statement of a primitive with a result: PRIM now pushes the time. */
static void test_bind_of_primitive(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, "fn g() {\n  t <- now()\n  me <- myThreadId()\n  say(t)\n}\nmain = g()\n");
  const ObjProto *g = find_proto(init->proto, "g");
  assert_non_null(g);
  assert_int_equal(count_prim_in_tree(g, "now"), 1);
  assert_int_equal(count_prim_in_tree(g, "myThreadId"), 1);
  assert_int_equal(count_op_in_tree(g, OP_SAY), 1);
  assert_int_equal(count_op_in_tree(g, OP_ACTION), 0);
}

/* max_slots is the deepest stack use, slot 0 and the parameters included. */
static void test_max_slots_exact(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u,
                                "fn g(a) = [a, a, [a, a, a], a]\n"
                                "fn h(a, b, c) = a\n"
                                "fn k() = 1\n"
                                "main = say(g(1))\n");
  const ObjProto *g = find_proto(init->proto, "g");
  assert_non_null(g);
  assert_int_equal(g->arity, 1);
  assert_int_equal(g->max_slots, 7); /* slot 0, a, then a a [a a a] */
  char err[256];
  assert_int_equal(verify_depths(g, err, sizeof err), 7);
  const ObjProto *h = find_proto(init->proto, "h");
  assert_int_equal(h->arity, 3);
  assert_true(h->max_slots >= 5); /* slot 0, a b c, and a pushed to return */
  const ObjProto *k = find_proto(init->proto, "k");
  assert_true(k->max_slots >= 2);
}

/* Every prototype of a program using every statement form verifies, and
 * reserves enough stack. */
static const char *const forms_source =
    "fn pick(c, a, b) = if c then a else b\n"
    "fn sumTo(n, acc) = if n == 0 then acc else sumTo(n - 1, acc + n)\n"
    "fn both(p, q) = p && q || !p\n"
    "fn rec(x) = #{a: x, b: [x, x], c: some(x)}\n"
    "fn withLet(x) = let y = x * 2 in let z = y + 1 in [x, y, z]\n"
    "fn loop(n) = if n <= 0 then return () else { delay(1ns); loop(n - 1) }\n"
    "fn worker(name) {\n"
    "  me <- myThreadId()\n"
    "  labelThread(me, name)\n"
    "  let r = rec(1)\n"
    "  x <- timeout(5us, delay(1us) >> return r.a)\n"
    "  if isSome(x) then say(name) else say(\"timeout\")\n"
    "  pure(1) >>= fn(v) => say(v)\n"
    "  pure(2) >>= say\n"
    "  let f = fn(a) { say(a); return a }\n"
    "  y <- f(3)\n"
    "  when(y == 3, say(\"three\"))\n"
    "  return [x, y, withLet(y)]\n"
    "}\n"
    "main = {\n"
    "  t <- fork(worker(\"w\"))\n"
    "  yield()\n"
    "  loop(3)\n"
    "  kill(t)\n"
    "  say(pick(true, sumTo(10, 0), 0))\n"
    "  { say(\"nested\"); say(both(true, false)) }\n"
    "  let xs = [1, 2, 3]\n"
    "  say(xs[1] + length(xs))\n"
    "}\n";

static void test_all_protos_verify(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, forms_source);
  assert_true(assert_protos_verify(init->proto) >= 9);
}

static void test_all_protos_verify_O0(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, forms_source);
  assert_true(assert_protos_verify(init->proto) >= 9);
}

/* The prelude, compiled at vm_new, verifies as well (both strategies). */
static void test_prelude_protos_verify(void **state) {
  UnitVM *u = *state;
  assert_true(u->vm->module_inits.count >= 1);
  int checked = 0;
  for (int i = 0; i < u->vm->module_inits.count; i++)
    checked += assert_protos_verify(AS_CLOSURE(u->vm->module_inits.values[i])->proto);
  assert_true(checked >= 30);
}

/* Equal constants share one slot of the pool. */
static void test_constants_are_shared(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, "fn h() = [1, 1, 1, \"a\", \"a\", 2.5, 2.5, 1us, 1us]\nmain = say(h())\n");
  const ObjProto *h = find_proto(init->proto, "h");
  assert_non_null(h);
  /* 1, "a", 2.5, 1us: an int and a duration of the same bits stay apart */
  assert_int_equal(h->chunk.constants.count, 4);
  ObjClosure *init2 = compile_ok(u, "fn h2() = [1000, 1us]\n");
  const ObjProto *h2 = find_proto(init2->proto, "h2");
  assert_int_equal(h2->chunk.constants.count, 2);
}

/* The listing shows the instructions this file looks for. */
static void test_debug_listing(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, actions_source);
  const ObjProto *f = find_proto(init->proto, "f");
  Buffer out;
  buf_init(&out);
  debug_list_proto(&out, f, NULL);
  assert_non_null(out.data);
  assert_contains(out.data, "DELAY");
  assert_contains(out.data, "SAY");
  assert_contains(out.data, "TAIL_BIND");
  assert_contains(out.data, "; 1us");
  assert_contains(out.data, "; \"x\"");
  /* one line per instruction of each listed prototype, plus headers and blank lines */
  buf_free(&out);
}

/* Top-level functions are defined before values are computed. */
static void test_functions_defined_before_values(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, "a = twice(2)\nfn twice(x) = x * 2\nmain = say(a)\n");
  InsnList insns;
  decode(init->proto, &insns);
  /* DEFINE_GLOBAL order: twice first, then a, then main */
  int twice = vm_find_global(u->vm, obj_cstring(u->vm, "twice"));
  int a = vm_find_global(u->vm, obj_cstring(u->vm, "a"));
  int main_ = vm_find_global(u->vm, obj_cstring(u->vm, "main"));
  int order[3], n = 0;
  for (int i = 0; i < insns.count && n < 3; i++)
    if (insns.items[i].op == OP_DEFINE_GLOBAL) order[n++] = insns.items[i].operand;
  assert_int_equal(n, 3);
  assert_int_equal(order[0], twice);
  assert_int_equal(order[1], a);
  assert_int_equal(order[2], main_);
}

/* ---- compile errors, as vm_load_source reports them ---- */

static void test_error_undefined_name(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, "main = say(nope)\n"), SIM_COMPILE_ERROR, u);
  assert_text_equal(unit_text(&u->err),
                    "test.sim:1:12: error: undefined name 'nope'\n"
                    "    main = say(nope)\n"
                    "               ^\n");
}

static void test_error_argument_count(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, "fn two(a, b) = a\nmain = {\n  delay()\n  say(two(1))\n}\n"), SIM_COMPILE_ERROR, u);
  assert_contains(unit_text(&u->err), "error: 'delay' takes 1 argument, but 0 are given\n");
  assert_contains(unit_text(&u->err), "error: 'two' takes 2 arguments, but 1 is given\n");
}

static void test_error_block_endings(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u,
                          "main = {\n"
                          "  return 1\n"
                          "  x <- now()\n"
                          "}\n"
                          "other = {\n"
                          "  let y = 2\n"
                          "}\n"),
                SIM_COMPILE_ERROR, u);
  assert_text_equal(unit_text(&u->err),
                    "test.sim:2:3: error: 'return' does not leave a block early: it can only be the last statement\n"
                    "      return 1\n"
                    "      ^\n"
                    "test.sim:3:3: error: a block cannot end with 'x <- ...': end it with an action, or `return x`\n"
                    "      x <- now()\n"
                    "      ^\n"
                    "test.sim:6:7: error: a block cannot end with 'let y ...': end it with an action, or `return y`\n"
                    "      let y = 2\n"
                    "          ^\n");
}

static void test_error_definitions(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u,
                          "x = 1\n"
                          "x = 2\n"
                          "say = 3\n"
                          "fn f(a, a) = a\n"
                          "main = say(x)\n"),
                SIM_COMPILE_ERROR, u);
  assert_text_equal(unit_text(&u->err),
                    "test.sim:2:1: error: 'x' is already defined on line 1\n"
                    "    x = 2\n"
                    "    ^\n"
                    "test.sim:3:1: error: 'say' is a builtin and cannot be redefined\n"
                    "    say = 3\n"
                    "    ^\n"
                    "test.sim:4:1: error: parameter 'a' is declared twice\n"
                    "    fn f(a, a) = a\n"
                    "    ^\n");
}

/* A failed compile returns NULL; the module is not added. */
static void test_failed_compile_returns_null(void **state) {
  UnitVM *u = *state;
  int modules = u->vm->module_inits.count;
  assert_null(compile_text(u, "main = say(undefinedThing)\n"));
  assert_int_equal(u->vm->module_inits.count, modules);
  assert_contains(unit_text(&u->err), "undefined name 'undefinedThing'");
}

/* Locals shadow globals, builtins included: a parameter named `delay` is
 * called, not compiled to DELAY. */
static void test_locals_shadow_builtins(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, "fn f(delay) {\n  delay(1us)\n}\nmain = f(fn(d) => say(d))\n");
  const ObjProto *f = find_proto(init->proto, "f");
  assert_int_equal(count_op_in_tree(f, OP_DELAY), 0);
  assert_int_equal(count_op_in_tree(f, OP_ACTION), 0);
  assert_protos_verify(init->proto);
}

static const char *const self_calls_source =
    "fn sumTo(n, acc) = if n == 0 then acc else sumTo(n - 1, acc + n)\n"
    "fn fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2)\n"
    "fn ticks(n) {\n"
    "  say(n)\n"
    "  if n > 0 then ticks(n - 1) else return ()\n"
    "}\n"
    "fn shadowed(fib) = fib(1)\n"
    "fn inner(n) = (fn(k) => inner(k))(n)\n"
    "fn other(n) = sumTo(n, 0)\n"
    "main = ticks(sumTo(3, 0))\n";

/* A top-level function calling itself by name needs no callee check:
 * CALL_SELF, TAIL_SELF in tail position, TAIL_SELF_BIND for an action
 * function's last statement. A shadowed name, a lambda calling its outer
 * function, or a call of another function is an ordinary call. */
static void test_self_calls(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, self_calls_source);
  const ObjProto *sum = find_proto(init->proto, "sumTo");
  assert_int_equal(count_op_in_tree(sum, OP_TAIL_SELF), 1);
  assert_int_equal(count_op_in_tree(sum, OP_TAIL_CALL) + count_op_in_tree(sum, OP_CALL), 0);
  const ObjProto *fib = find_proto(init->proto, "fib");
  assert_int_equal(count_op_in_tree(fib, OP_CALL_SELF), 2);
  assert_int_equal(count_op_in_tree(fib, OP_CALL), 0);
  assert_int_equal(count_op_in_tree(find_proto(init->proto, "ticks"), OP_TAIL_SELF_BIND), 1);
  const char *ordinary[] = {"shadowed", "inner", "other"};
  for (int i = 0; i < 3; i++) {
    const ObjProto *f = find_proto(init->proto, ordinary[i]);
    assert_non_null(f);
    assert_int_equal(count_op_in_tree(f, OP_CALL_SELF) + count_op_in_tree(f, OP_TAIL_SELF), 0);
  }
  assert_protos_verify(init->proto);
}

/* -O0 changes how actions are built and bound, not calls: the value
 * functions call themselves as at -O1, but an action function's last
 * statement is bound as io-sim binds (TAIL_BIND of the action built). */
static void test_self_calls_O0(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u, self_calls_source);
  assert_int_equal(count_op_in_tree(find_proto(init->proto, "sumTo"), OP_TAIL_SELF), 1);
  assert_int_equal(count_op_in_tree(find_proto(init->proto, "fib"), OP_CALL_SELF), 2);
  assert_int_equal(count_op_in_tree(init->proto, OP_TAIL_SELF_BIND), 0);
  assert_protos_verify(init->proto);
}

/* A builtin function called by its name is NATIVE, with no callee fetched;
 * passed as a value, or shadowed by a local, it is an ordinary call. */
static void test_builtin_calls_are_native(void **state) {
  UnitVM *u = *state;
  ObjClosure *init = compile_ok(u,
                                "fn f(xs) = if isEmpty(xs) then 0 else head(xs) + length(tail(xs))\n"
                                "fn g(xs) = map(head, xs)\n"
                                "fn h(head, xs) = head(xs)\n"
                                "main = say(f([1, 2]) + length(g([[1]])) + h(fn(x) => 0, []))\n");
  const ObjProto *f = find_proto(init->proto, "f");
  assert_int_equal(count_op_in_tree(f, OP_NATIVE), 4);
  assert_int_equal(count_op_in_tree(f, OP_GET_GLOBAL) + count_op_in_tree(f, OP_CALL), 0);
  const ObjProto *g = find_proto(init->proto, "g");
  assert_int_equal(count_op_in_tree(g, OP_NATIVE), 0);
  assert_int_equal(count_op_in_tree(g, OP_GET_GLOBAL), 2); /* map, and head as a value */
  assert_int_equal(count_op_in_tree(find_proto(init->proto, "h"), OP_NATIVE), 0);
  assert_protos_verify(init->proto);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_verifier_rejects_bad_code, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_statement_primitives_are_opcodes, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_O0_builds_and_binds_actions, unit_setup_vm_O0, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_primitive_value_is_an_action, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_bind_of_primitive, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_max_slots_exact, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_all_protos_verify, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_all_protos_verify_O0, unit_setup_vm_O0, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_prelude_protos_verify, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_prelude_protos_verify, unit_setup_vm_O0, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_constants_are_shared, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_debug_listing, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_label_only_constructor_binds, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_functions_defined_before_values, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_error_undefined_name, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_error_argument_count, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_error_block_endings, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_error_definitions, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_failed_compile_returns_null, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_locals_shadow_builtins, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_self_calls, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_self_calls_O0, unit_setup_vm_O0, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_builtin_calls_are_native, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
