/* The opcode table (vm/value/opcodes.def) and what is derived from it: names,
 * operand widths by kind, the pops and pushes formulas, the flags, and the
 * builtin actions' agreement with their opcodes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "unit.h"
#include "builtins.h"

static void test_names_unique_and_present(void **state) {
  (void)state;
  for (int a = 0; a < OP_COUNT; a++) {
    assert_non_null(opcode_info[a].name);
    assert_true(strlen(opcode_info[a].doc) > 0);
    for (int b = a + 1; b < OP_COUNT; b++) assert_string_not_equal(opcode_info[a].name, opcode_info[b].name);
  }
  assert_string_equal(opcode_info[OP_BIND].name, "BIND");
  assert_string_equal(opcode_info[OP_TAIL_CALL_BIND].name, "TAIL_CALL_BIND");
}

/* The width follows the kind: one byte for slots, counts, immediates and
 * builtins, two for constants, globals and jumps; u16 operands read
 * big-endian, immediates as signed bytes. */
static void test_operand_widths(void **state) {
  (void)state;
  static const int width[] = {
      [OPERAND_NONE] = 0,  [OPERAND_LOCAL] = 1, [OPERAND_UPVALUE] = 1, [OPERAND_COUNT] = 1,
      [OPERAND_IMM] = 1,   [OPERAND_SELF] = 1,  [OPERAND_SELF_ACTION] = 1, [OPERAND_BUILTIN] = 1,
      [OPERAND_NATIVE] = 1, [OPERAND_CONST] = 2, [OPERAND_NAME] = 2,  [OPERAND_DURATION] = 2, [OPERAND_PROTO] = 2,
      [OPERAND_GLOBAL] = 2, [OPERAND_DEFINE] = 2, [OPERAND_JUMP] = 2,
  };
  for (int op = 0; op < OP_COUNT; op++) {
    assert_int_equal(opcode_info[op].width, width[opcode_info[op].operand]);
    assert_int_equal(opcode_size((uint8_t)op), 1 + width[opcode_info[op].operand]);
  }
  assert_int_equal(opcode_info[OP_CONST].operand, OPERAND_CONST);
  assert_int_equal(opcode_info[OP_CLOSURE].operand, OPERAND_PROTO);
  assert_int_equal(opcode_info[OP_FIELD].operand, OPERAND_NAME);
  assert_int_equal(opcode_info[OP_DEFINE_GLOBAL].operand, OPERAND_DEFINE);
  assert_int_equal(opcode_info[OP_SLIDE].operand, OPERAND_COUNT);
  /* (padded: the compiler cannot see that an ADD reads no operand) */
  const uint8_t jump[] = {OP_JUMP, 0x01, 0x02}, local[] = {OP_GET_LOCAL, 0xfe, 0}, add[] = {OP_ADD, 0, 0};
  assert_int_equal(opcode_operand(jump), 0x0102);
  assert_int_equal(opcode_operand(local), 0xfe);
  assert_int_equal(opcode_operand(add), 0);
  const uint8_t addi[] = {OP_ADDI, 0xff, 0};
  assert_int_equal(opcode_operand(addi), -1);
}

/* The formulas, for opcodes whose effect depends on the operand. */
static void test_formulas(void **state) {
  (void)state;
  assert_int_equal(opcode_pops(OP_RECORD, 3), 6);
  assert_int_equal(opcode_effect(OP_RECORD, 3), -5);
  assert_int_equal(opcode_pops(OP_SLIDE, 2), 3);
  assert_int_equal(opcode_effect(OP_SLIDE, 2), -2);
  assert_int_equal(opcode_effect(OP_LIST, 0), 1);
  assert_int_equal(opcode_pops(OP_CALL, 2), 3);
  assert_int_equal(opcode_effect(OP_TAIL_CALL_BIND, 4), -4);
  assert_int_equal(opcode_effect(OP_RETURN, 0), -1);
  int say = (int)(builtin_find("say") - builtin_table), show = (int)(builtin_find("show") - builtin_table);
  assert_int_equal(opcode_pops(OP_ACTION, say), 1);
  assert_int_equal(opcode_effect(OP_ACTION, say), 0);
  assert_int_equal(opcode_pops(OP_NATIVE, show), 1);
  assert_int_equal(opcode_pops(OP_ACTION, builtin_count), OPCODE_VAR);
  assert_int_equal(opcode_pushes(OP_RESUME, 0), OPCODE_VAR);
  assert_int_equal(opcode_pops(OP_PRIM, BUILTIN_putMVar), 2);
  assert_int_equal(opcode_effect(OP_PRIM, BUILTIN_putMVar), -1);
  assert_int_equal(opcode_effect(OP_TAIL_SELF, 3), -2);
  assert_string_equal(opcode_info[OP_RECORD].pops, "2*A");
}

/* What a bytecode file may contain has a known effect for every operand
 * its kind allows: a formula the handler decides (VAR) is the VM's own
 * code's only, so the verifier never meets one it would have to trust. */
static void test_script_opcodes_have_effects(void **state) {
  (void)state;
  for (int op = 0; op < OP_COUNT; op++) {
    if (opcode_info[op].flags & OPF_VM_ONLY) continue;
    int limit = opcode_info[op].width == 0 ? 1 : 256;
    for (int a = 0; a < limit; a++) {
      if (opcode_info[op].operand == OPERAND_BUILTIN && (a >= builtin_count || !builtin_is_action(&builtin_table[a])))
        continue;
      if (opcode_info[op].operand == OPERAND_NATIVE && (a >= builtin_count || builtin_is_action(&builtin_table[a])))
        continue;
      int pops = opcode_pops((uint8_t)op, a), pushes = opcode_pushes((uint8_t)op, a);
      if (pops == OPCODE_VAR || pushes == OPCODE_VAR) fail_msg("%s %d has no known effect", opcode_info[op].name, a);
      /* at most UPDATE's record and its 255 (name, may add, value) triples */
      assert_true(pops >= 0 && pops <= 3 * 255 + 1);
      /* one value, but TRY_FIELD's field (or ()) and whether it was there,
       * and LETREC's closures, back in the slots they were made for */
      assert_true(pushes >= 0 && pushes <= (op == OP_TRY_FIELD ? 2 : op == OP_LETREC ? a : 1));
    }
  }
}

static void test_flags(void **state) {
  (void)state;
  for (int op = 0; op < OP_COUNT; op++) {
    unsigned flags = opcode_info[op].flags;
    assert_int_equal(!!(flags & OPF_ENDS), op == OP_RETURN || op == OP_JUMP || op == OP_THREAD_EXIT || op == OP_TAIL_SELF ||
                                                op == OP_TAIL_SELF_BIND || op == OP_MATCH_FAIL);
    assert_int_equal(!!(flags & OPF_THEN_BIND), op == OP_CALL_BIND || op == OP_CALL_BIND_HEAP);
    assert_int_equal(!!(flags & OPF_THEN_RETURN), op == OP_TAIL_BIND);
  }
  /* the opcodes of the VM's own prototypes, or that the VM puts in compiled
   * code itself (CALL_BIND_HEAP, the superinstructions), never in bytecode
   * files */
  const OpCode vm_only[] = {OP_THREAD_EXIT, OP_TIMEOUT_ARM, OP_TIMEOUT_CATCH, OP_CATCH_HANDLER, OP_MASK_POP,
                            OP_TX_BEGIN,    OP_TX_ABORT,    OP_OR_ELSE_CATCH, OP_RESUME, OP_CALL_BIND_HEAP,
                            OP_LOCAL_IS_EMPTY, OP_LOCAL_HEAD, OP_LOCAL_TAIL, OP_LOCAL_CONS,
                            OP_LOCAL_ADDI,  OP_LOCAL_SUBI,  OP_LOCAL_LTI,     OP_LOCAL_LEI};
  for (size_t i = 0; i < sizeof vm_only / sizeof vm_only[0]; i++) assert_true(opcode_info[vm_only[i]].flags & OPF_VM_ONLY);
  const OpCode script[] = {OP_BIND, OP_TAIL_BIND, OP_CALL_BIND, OP_DELAY, OP_SAY, OP_PRIM, OP_CONST};
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) assert_false(opcode_info[script[i]].flags & OPF_VM_ONLY);
}

/* Every builtin is a native or an action with a function; an action runs
 * by PRIM or by a script-level opcode of its own that pops its arguments,
 * as opcode_check_builtins (run by vm_create) requires; arities fit the
 * argument-type columns. */
static void test_builtin_actions(void **state) {
  (void)state;
  assert_null(opcode_check_builtins());
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
    assert_false(opcode_info[b->op].flags & OPF_VM_ONLY);
    if (b->op == OP_PRIM) continue;
    assert_int_equal(opcode_info[b->op].operand, OPERAND_NONE);
    assert_int_equal(opcode_pops((uint8_t)b->op, 0), b->arity);
  }
  assert_int_equal(builtin_table[BUILTIN_delay].op, OP_DELAY);
  assert_string_equal(builtin_table[BUILTIN_say].name, "say");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names_unique_and_present),   cmocka_unit_test(test_operand_widths),
      cmocka_unit_test(test_formulas),                   cmocka_unit_test(test_script_opcodes_have_effects),
      cmocka_unit_test(test_flags),                      cmocka_unit_test(test_builtin_actions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
