/* The opcode table (vm/opcodes.def) is consistent: every opcode has a unique
 * name, a known operand width, and a stack effect that fits what it pops. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "unit.h"

static void test_names_unique_and_present(void **state) {
  (void)state;
  for (int a = 0; a < OP_COUNT; a++) {
    assert_non_null(opcode_info[a].name);
    assert_non_null(opcode_info[a].doc);
    assert_true(strlen(opcode_info[a].doc) > 0);
    for (int b = a + 1; b < OP_COUNT; b++) assert_string_not_equal(opcode_info[a].name, opcode_info[b].name);
  }
  assert_string_equal(opcode_info[OP_BIND].name, "BIND");
  assert_string_equal(opcode_info[OP_TAIL_CALL_BIND].name, "TAIL_CALL_BIND");
}

static void test_operands_and_effects(void **state) {
  (void)state;
  for (int op = 0; op < OP_COUNT; op++) {
    const OpInfo *info = &opcode_info[op];
    assert_true(info->operand == OPERAND_NONE || info->operand == OPERAND_U8 || info->operand == OPERAND_U16);
    assert_int_equal(opcode_size((uint8_t)op), 1 + (int)info->operand);
    /* VAR in one column means VAR in the other, and then there is an operand
     * to compute it from (or, for RUN_CALL and RETURN, the frame) */
    bool var_pops = info->pops == STACK_EFFECT_VAR, var_effect = info->stack_effect == STACK_EFFECT_VAR;
    if (var_pops) assert_true(var_effect);
    if (!var_effect) {
      assert_true(info->pops >= 0);
      assert_true(info->stack_effect >= -info->pops); /* cannot drop more than it reads */
      assert_true(info->stack_effect <= 1);          /* pushes at most one result */
    }
  }
}

static void test_vm_only_opcodes(void **state) {
  (void)state;
  /* the opcodes of the VM's own prototypes, never in compiled scripts */
  const OpCode vm_only[] = {OP_THREAD_EXIT, OP_TIMEOUT_ARM, OP_TIMEOUT_CATCH, OP_CATCH_HANDLER, OP_MASK_PUSH,
                            OP_TX_BEGIN,    OP_TX_ABORT,    OP_OR_ELSE_CATCH, OP_RESUME};
  for (size_t i = 0; i < sizeof vm_only / sizeof vm_only[0]; i++) assert_true(opcode_info[vm_only[i]].vm_only);
  const OpCode script[] = {OP_BIND, OP_TAIL_BIND, OP_CALL_BIND, OP_DELAY, OP_SAY, OP_PRIM, OP_CONST};
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) assert_false(opcode_info[script[i]].vm_only);
}

/* Every builtin is a native or an action with a function; an action runs
 * by PRIM or by a script-level opcode of its own that reads its arguments;
 * arities fit the argument-type columns. */
static void test_builtin_actions(void **state) {
  (void)state;
  assert_int_equal(builtin_count, BUILTIN_COUNT);
  for (int i = 0; i < builtin_count; i++) {
    const Builtin *b = &builtin_table[i];
    assert_true(b->arity >= 0 && b->arity <= BUILTIN_MAX_ARGS);
    if (!builtin_is_action(b)) {
      assert_non_null(b->native);
      assert_int_equal(b->op, -1);
      continue;
    }
    assert_null(b->native);
    assert_true(b->op < OP_COUNT);
    assert_false(opcode_info[b->op].vm_only);
    if (b->op == OP_PRIM) continue;
    assert_int_equal(opcode_info[b->op].operand, OPERAND_NONE);
    assert_int_equal(opcode_info[b->op].pops, b->arity);
  }
  assert_int_equal(builtin_table[BUILTIN_delay].op, OP_DELAY);
  assert_string_equal(builtin_table[BUILTIN_say].name, "say");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names_unique_and_present),
      cmocka_unit_test(test_operands_and_effects),
      cmocka_unit_test(test_vm_only_opcodes),
      cmocka_unit_test(test_builtin_actions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
