/* api/verify.c: every rule of the bytecode verifier, each with a malformed
 * chunk that only that rule rejects, checked by its exact message (so the
 * test fails if the rule is deleted), next to the corrected chunk, which
 * verifies. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"
#include "../../api/verify.h"
#include "builtins.h"

/* A prototype named f in t.sim:1 with this code and these constants. */
typedef struct {
  ProtoKind kind;
  int arity, slots, upvalues;
  const uint8_t *captures;     /* 2 x upvalues bytes */
  const uint8_t *code;
  int length;
  const Value *constants;
  int constant_count;
} Shape;

static ObjProto *make(VM *vm, const char *name, const Shape *s) {
  ObjProto *proto = obj_proto(vm, s->kind, "t.sim", 1);
  proto->name = obj_cstring(vm, name);
  proto->arity = s->arity;
  proto->max_slots = s->slots;
  proto->upvalue_count = s->upvalues;
  if (s->upvalues) {
    proto->captures = xrealloc(NULL, (size_t)s->upvalues * 2);
    memcpy(proto->captures, s->captures, (size_t)s->upvalues * 2);
  }
  for (int i = 0; i < s->length; i++) chunk_write(&proto->chunk, s->code[i], 1);
  for (int i = 0; i < s->constant_count; i++) value_array_push(&proto->chunk.constants, s->constants[i]);
  return proto;
}

/* The verifier's message for `proto`, or "ok". */
static const char *verdict(VM *vm, const ObjProto *proto, bool top_level) {
  static char error[256];
  if (verify_proto(vm, proto, top_level, error, sizeof error)) return "ok";
  return error;
}

#define CODE(...) .code = (const uint8_t[]){__VA_ARGS__}, .length = (int)sizeof((const uint8_t[]){__VA_ARGS__})

/* A function f(x) with 4 slots running `code`. */
#define FN(...) ((Shape){PROTO_FUNCTION, 1, 4, 0, NULL, CODE(__VA_ARGS__), NULL, 0})

static void assert_verdict(VM *vm, Shape shape, const char *expected) {
  assert_string_equal(verdict(vm, make(vm, "f", &shape), false), expected);
}

static void test_valid_function(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_RETURN), "ok");
}

static void test_slots_hold_parameters(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Shape s = FN(OP_UNIT, OP_RETURN);
  s.arity = 4;
  assert_verdict(vm, s, "f (t.sim:1): 4 slots cannot hold the callee and 4 parameters");
  s.slots = 6;
  assert_verdict(vm, s, "ok");
}

static void test_block_has_no_parameters(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Shape s = FN(OP_UNIT, OP_RETURN);
  s.kind = PROTO_BLOCK;
  assert_verdict(vm, s, "f (t.sim:1): a block with parameters");
  s.arity = 0;
  assert_verdict(vm, s, "ok");
}

static void test_top_level_captures_nothing(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Shape s = {PROTO_BLOCK, 0, 2, 1, (const uint8_t[]){1, 0}, CODE(OP_UNIT, OP_RETURN), NULL, 0};
  ObjProto *proto = make(vm, "f", &s);
  assert_string_equal(verdict(vm, proto, true), "f (t.sim:1): a module's top level with captured variables");
  assert_string_equal(verdict(vm, proto, false), "ok");
}

static void test_no_code(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Shape s = FN(OP_UNIT);
  s.length = 0;
  assert_verdict(vm, s, "f (t.sim:1): no code");
}

static void test_unknown_opcode(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_UNIT, OP_COUNT, OP_RETURN), "f (t.sim:1): an unknown opcode at offset 1");
  assert_verdict(vm, FN(OP_UNIT, 255, OP_RETURN), "f (t.sim:1): an unknown opcode at offset 1");
}

static void test_vm_only_opcode(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_TX_BEGIN, OP_UNIT, OP_RETURN), "f (t.sim:1): an opcode only the VM may use at offset 0");
  assert_verdict(vm, FN(OP_UNIT, OP_RESUME, OP_RETURN), "f (t.sim:1): an opcode only the VM may use at offset 1");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_CALL_BIND_HEAP, 0, OP_BIND, OP_RETURN),
                 "f (t.sim:1): an opcode only the VM may use at offset 2");
}

static void test_cut_off_instruction(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_UNIT, OP_RETURN, OP_GET_LOCAL), "ok"); /* unreachable bytes are not read */
  assert_verdict(vm, FN(OP_GET_LOCAL), "f (t.sim:1): an instruction cut off by the end of the code at offset 0");
  assert_verdict(vm, FN(OP_UNIT, OP_CONST, 0), "f (t.sim:1): an instruction cut off by the end of the code at offset 1");
}

static void test_call_bind_then_bind(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_CALL_BIND, 0, OP_RETURN), "f (t.sim:1): CALL_BIND not followed by BIND at offset 2");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_CALL_BIND, 0), "f (t.sim:1): CALL_BIND at the end of the code at offset 2");
  /* the byte just past the end is a BIND, which must not count */
  ObjProto *cut = make(vm, "f", &FN(OP_GET_LOCAL, 1, OP_CALL_BIND, 0, OP_BIND));
  cut->chunk.count--;
  assert_string_equal(verdict(vm, cut, false), "f (t.sim:1): CALL_BIND at the end of the code at offset 2");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_CALL_BIND, 0, OP_BIND, OP_RETURN), "ok");
}

static void test_tail_bind_then_return(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_TAIL_BIND, OP_UNIT, OP_RETURN), "f (t.sim:1): TAIL_BIND not followed by RETURN at offset 2");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_TAIL_BIND), "f (t.sim:1): TAIL_BIND at the end of the code at offset 2");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_TAIL_BIND, OP_RETURN), "ok");
}

static void test_action_of_an_action(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  uint8_t show = (uint8_t)(builtin_find("show") - builtin_table), say = (uint8_t)(builtin_find("say") - builtin_table);
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_ACTION, show, OP_RETURN), "f (t.sim:1): ACTION of a builtin that is not an action at offset 2");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_ACTION, (uint8_t)builtin_count, OP_RETURN),
                 "f (t.sim:1): ACTION of a builtin that does not exist at offset 2");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_ACTION, say, OP_RETURN), "ok");
}

static void test_constants(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Value k[2] = {INT_VAL(7), UNIT_VAL};
  Shape s = FN(OP_CONST, 0, 1, OP_RETURN);
  s.constants = k;
  s.constant_count = 1;
  assert_verdict(vm, s, "f (t.sim:1): a constant out of range at offset 0");
  s.constant_count = 2;
  assert_verdict(vm, s, "ok");
  k[1] = OBJ_VAL(make(vm, "g", &FN(OP_UNIT, OP_RETURN)));
  assert_verdict(vm, s, "f (t.sim:1): CONST of a prototype (only CLOSURE may use one) at offset 0");
}

static void test_closure_of_a_prototype(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Value k[1] = {INT_VAL(1)};
  Shape s = FN(OP_CLOSURE, 0, 0, OP_RETURN);
  s.constants = k;
  s.constant_count = 1;
  assert_verdict(vm, s, "f (t.sim:1): CLOSURE of a constant that is not a prototype at offset 0");
  s.constant_count = 0;
  assert_verdict(vm, s, "f (t.sim:1): a constant out of range at offset 0");
  k[0] = OBJ_VAL(make(vm, "g", &FN(OP_UNIT, OP_RETURN)));
  s.constant_count = 1;
  assert_verdict(vm, s, "ok");
}

/* The defect found by fuzzing: a capture was checked against max_slots, a
 * number the file sets, instead of the stack depth at the CLOSURE. */
static void test_captures_against_the_stack(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Shape inner = {PROTO_FUNCTION, 0, 2, 1, (const uint8_t[]){1, 1}, CODE(OP_GET_UPVALUE, 0, OP_RETURN), NULL, 0};
  Value k[1] = {OBJ_VAL(make(vm, "g", &inner))};
  /* f(x): the stack is 2 deep (callee, x) at the CLOSURE: slot 1 is x */
  Shape s = FN(OP_CLOSURE, 0, 0, OP_RETURN);
  s.constants = k;
  s.constant_count = 1;
  assert_verdict(vm, s, "ok");
  /* slot 2 is within f's 4 slots but not on its stack yet */
  inner.captures = (const uint8_t[]){1, 2};
  k[0] = OBJ_VAL(make(vm, "g", &inner));
  assert_verdict(vm, s, "f (t.sim:1): CLOSURE of 'g': capture 0 copies slot 2 of a stack 2 deep at offset 0");
  /* pushed first, slot 2 exists */
  s = FN(OP_UNIT, OP_CLOSURE, 0, 0, OP_SLIDE, 1, OP_RETURN);
  s.constants = k;
  s.constant_count = 1;
  assert_verdict(vm, s, "ok");
}

static void test_captures_of_upvalues(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Shape inner = {PROTO_FUNCTION, 0, 2, 1, (const uint8_t[]){0, 1}, CODE(OP_GET_UPVALUE, 0, OP_RETURN), NULL, 0};
  Value k[1] = {OBJ_VAL(make(vm, "g", &inner))};
  Shape s = {PROTO_FUNCTION, 1, 4, 2, (const uint8_t[]){1, 1, 1, 1}, CODE(OP_CLOSURE, 0, 0, OP_RETURN), k, 1};
  assert_verdict(vm, s, "ok");
  s.upvalues = 1;
  assert_verdict(vm, s, "f (t.sim:1): CLOSURE of 'g': capture 0 copies upvalue 1 of 1 at offset 0");
  /* an upvalue's index is not a stack slot: upvalue 2 of 3 with the stack 2 deep */
  Shape deep = {PROTO_FUNCTION, 1, 4, 3, (const uint8_t[]){1, 1, 1, 1, 1, 1}, CODE(OP_CLOSURE, 0, 0, OP_RETURN), k, 1};
  inner.captures = (const uint8_t[]){0, 2};
  k[0] = OBJ_VAL(make(vm, "g", &inner));
  assert_verdict(vm, deep, "ok");
  inner.captures = (const uint8_t[]){2, 0};
  k[0] = OBJ_VAL(make(vm, "g", &inner));
  assert_verdict(vm, s, "f (t.sim:1): CLOSURE of 'g': capture 0 has an unknown kind 2 at offset 0");
}

static void test_field_of_a_name(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Value k[1] = {INT_VAL(3)};
  Shape s = FN(OP_GET_LOCAL, 1, OP_FIELD, 0, 0, OP_RETURN);
  s.constants = k;
  s.constant_count = 1;
  assert_verdict(vm, s, "f (t.sim:1): FIELD of a constant that is not a name at offset 2");
  k[0] = OBJ_VAL(obj_cstring(vm, "x"));
  assert_verdict(vm, s, "ok");
}

/* DELAY_K's constant is a duration of 0 or more: its handler checks neither. */
static void test_delay_of_a_duration(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Value k[1] = {INT_VAL(3)};
  Shape s = FN(OP_DELAY_K, 0, 0, OP_RETURN);
  s.kind = PROTO_ACTION_FN;
  s.constants = k;
  s.constant_count = 1;
  assert_verdict(vm, s, "f (t.sim:1): DELAY_K of a constant that is not a duration of 0 or more at offset 0");
  k[0] = DURATION_VAL(-1);
  assert_verdict(vm, s, "f (t.sim:1): DELAY_K of a constant that is not a duration of 0 or more at offset 0");
  k[0] = DURATION_VAL(0);
  assert_verdict(vm, s, "ok");
  s.constant_count = 0;
  assert_verdict(vm, s, "f (t.sim:1): a constant out of range at offset 0");
}

static void test_label_of_a_name(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Value k[1] = {INT_VAL(3)};
  Shape s = FN(OP_GET_LOCAL, 1, OP_LABEL_NEW, 0, 0, OP_RETURN);
  s.constants = k;
  s.constant_count = 1;
  assert_verdict(vm, s, "f (t.sim:1): LABEL_NEW of a constant that is not a name at offset 2");
  s.constant_count = 0;
  assert_verdict(vm, s, "f (t.sim:1): a constant out of range at offset 2");
  k[0] = OBJ_VAL(obj_cstring(vm, "x"));
  s.constant_count = 1;
  assert_verdict(vm, s, "ok");
}

static void test_locals_on_the_stack(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_GET_LOCAL, 2, OP_RETURN), "f (t.sim:1): a local slot beyond the stack at offset 0");
  assert_verdict(vm, FN(OP_UNIT, OP_GET_LOCAL, 2, OP_SLIDE, 1, OP_RETURN), "ok");
}

static void test_upvalues_in_range(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  Shape s = {PROTO_FUNCTION, 0, 2, 1, (const uint8_t[]){1, 0}, CODE(OP_GET_UPVALUE, 1, OP_RETURN), NULL, 0};
  assert_verdict(vm, s, "f (t.sim:1): an upvalue out of range at offset 0");
  s.code = (const uint8_t[]){OP_GET_UPVALUE, 0, OP_RETURN};
  assert_verdict(vm, s, "ok");
}

static void test_globals_in_range(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  int n = vm->globals.count;
  assert_verdict(vm, FN(OP_GET_GLOBAL, (uint8_t)(n >> 8), (uint8_t)n, OP_RETURN), "f (t.sim:1): a global out of range at offset 0");
  assert_verdict(vm, FN(OP_GET_GLOBAL, (uint8_t)((n - 1) >> 8), (uint8_t)(n - 1), OP_RETURN), "ok");
  assert_verdict(vm, FN(OP_UNIT, OP_DEFINE_GLOBAL, (uint8_t)(n >> 8), (uint8_t)n, OP_UNIT, OP_RETURN),
                 "f (t.sim:1): a global out of range at offset 1");
  assert_verdict(vm, FN(OP_UNIT, OP_DEFINE_GLOBAL, (uint8_t)((n - 1) >> 8), (uint8_t)(n - 1), OP_UNIT, OP_RETURN), "ok");
}

static void test_no_builtin_redefined(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  int b = builtin_count - 1;
  assert_verdict(vm, FN(OP_UNIT, OP_DEFINE_GLOBAL, (uint8_t)(b >> 8), (uint8_t)b, OP_UNIT, OP_RETURN),
                 "f (t.sim:1): a definition of a builtin at offset 1");
}

static void test_jumps_in_the_code(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_JUMP, 0, 3, OP_UNIT, OP_RETURN), "f (t.sim:1): a jump off the end of the code at offset 0");
  assert_verdict(vm, FN(OP_JUMP, 0xff, 0xff, OP_UNIT, OP_RETURN), "f (t.sim:1): a jump off the end of the code at offset 0");
  /* a jump to the very end runs off it */
  assert_verdict(vm, FN(OP_JUMP, 0, 2, OP_UNIT, OP_RETURN), "f (t.sim:1): the code runs off its end after offset 0");
  assert_verdict(vm, FN(OP_JUMP, 0, 1, OP_UNIT, OP_UNIT, OP_RETURN), "ok");
}

static void test_stack_underflow(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_POP, OP_POP, OP_UNIT, OP_RETURN), "f (t.sim:1): a stack underflow at offset 1");
  assert_verdict(vm, FN(OP_POP, OP_RETURN), "f (t.sim:1): a stack underflow at offset 1");
  assert_verdict(vm, FN(OP_POP, OP_UNIT, OP_RETURN), "ok");
}

static void test_stack_within_slots(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_UNIT, OP_UNIT, OP_UNIT, OP_LIST, 3, OP_RETURN), "f (t.sim:1): a stack deeper than the frame's slots at offset 2");
  assert_verdict(vm, FN(OP_UNIT, OP_UNIT, OP_LIST, 2, OP_RETURN), "ok");
}

static void test_runs_off_the_end(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_UNIT), "f (t.sim:1): the code runs off its end after offset 0");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_JUMP_IF_FALSE, 0, 2, OP_UNIT, OP_RETURN),
                 "f (t.sim:1): the code runs off its end after offset 2");
}

static void test_paths_meet_at_one_depth(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  /* if x then (unit, unit) else unit: the join sees depth 3 and 2 */
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_JUMP_IF_FALSE, 0, 2, OP_UNIT, OP_UNIT, OP_UNIT, OP_RETURN),
                 "f (t.sim:1): paths meet at offset 7 with different stack depths");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_JUMP_IF_FALSE, 0, 4, OP_UNIT, OP_JUMP, 0, 1, OP_UNIT, OP_RETURN), "ok");
}

/* NATIVE calls a builtin function; an action builtin is PRIM's. */
static void test_native_of_a_function(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  int head = -1, delay = -1;
  for (int i = 0; i < builtin_count; i++) {
    if (strcmp(builtin_table[i].name, "head") == 0) head = i;
    if (strcmp(builtin_table[i].name, "delay") == 0) delay = i;
  }
  assert_true(head >= 0 && delay >= 0);
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_NATIVE, (uint8_t)head, OP_RETURN), "ok");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_NATIVE, (uint8_t)delay, OP_RETURN),
                 "f (t.sim:1): NATIVE of a builtin that is an action at offset 2");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_NATIVE, (uint8_t)builtin_count, OP_RETURN),
                 "f (t.sim:1): NATIVE of a builtin that does not exist at offset 2");
}

/* A self call must match this prototype: a value function's CALL_SELF and
 * TAIL_SELF of its arity, an action function's TAIL_SELF_BIND of at most
 * its arity (the parameters after those passed on unchanged). TAIL_SELF
 * ends its path (the frame starts again). */
static void test_self_calls_match_the_prototype(void **state) {
  VM *vm = ((UnitVM *)*state)->vm;
  assert_verdict(vm, FN(OP_GET_LOCAL, 0, OP_GET_LOCAL, 1, OP_CALL_SELF, 1, OP_RETURN), "ok");
  Shape two = FN(OP_GET_LOCAL, 0, OP_GET_LOCAL, 1, OP_UNIT, OP_CALL_SELF, 2, OP_RETURN);
  two.slots = 5;
  assert_verdict(vm, two, "f (t.sim:1): a self call that is not of this value function's arity at offset 5");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_TAIL_SELF, 1), "ok");
  assert_verdict(vm, FN(OP_GET_LOCAL, 1, OP_TAIL_SELF_BIND, 1),
                 "f (t.sim:1): an action function's self call in another kind of prototype at offset 2");
  Shape action = FN(OP_GET_LOCAL, 1, OP_TAIL_SELF_BIND, 1);
  action.kind = PROTO_ACTION_FN;
  assert_verdict(vm, action, "ok");
  Shape unchanged = FN(OP_TAIL_SELF_BIND, 0); /* its parameter passed on as itself */
  unchanged.kind = PROTO_ACTION_FN;
  assert_verdict(vm, unchanged, "ok");
  Shape wrong = FN(OP_GET_LOCAL, 1, OP_UNIT, OP_TAIL_SELF_BIND, 2);
  wrong.kind = PROTO_ACTION_FN;
  assert_verdict(vm, wrong,
                 "f (t.sim:1): a self call with more arguments than this action function has parameters at offset 3");
  action = FN(OP_GET_LOCAL, 1, OP_TAIL_SELF, 1);
  action.kind = PROTO_ACTION_FN;
  assert_verdict(vm, action, "f (t.sim:1): a value function's self call in another kind of prototype at offset 2");
}

int main(void) {
#define T(name) cmocka_unit_test_setup_teardown(name, unit_setup_vm_direct, unit_teardown_vm)
  const struct CMUnitTest tests[] = {
      T(test_valid_function),          T(test_slots_hold_parameters),    T(test_block_has_no_parameters),
      T(test_top_level_captures_nothing), T(test_no_code),              T(test_unknown_opcode),
      T(test_vm_only_opcode),          T(test_cut_off_instruction),      
      T(test_call_bind_then_bind),     T(test_tail_bind_then_return),    T(test_action_of_an_action),
      T(test_constants),               T(test_closure_of_a_prototype),   T(test_captures_against_the_stack),
      T(test_captures_of_upvalues),    T(test_field_of_a_name),          T(test_delay_of_a_duration),      T(test_label_of_a_name),
      T(test_locals_on_the_stack),
      T(test_upvalues_in_range),       T(test_globals_in_range),         T(test_no_builtin_redefined),
      T(test_jumps_in_the_code),       T(test_stack_underflow),          T(test_stack_within_slots),
      T(test_runs_off_the_end),        T(test_paths_meet_at_one_depth),
      T(test_self_calls_match_the_prototype), T(test_native_of_a_function),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
