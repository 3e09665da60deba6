/* vm/interp/debug.c: the disassembler's exact listing lines, for a compiled
 * function and for hand-made chunks (jumps, constants, a nested prototype,
 * a truncated instruction, a bad opcode byte). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "debug.h"

static void test_compiled_function(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn add(a, b) {\n"
                          "  let c = a + b\n"
                          "  return if c > 10 then \"big\" else c\n"
                          "}\n"
                          "main = {\n  x <- add(1, 2)\n  say(x)\n}\n",
                          "3\n");
  VM *vm = u->vm;
  vm->gc_paused++;
  int index = vm_find_global(vm, obj_cstring(vm, "add"));
  assert_true(index >= 0);
  Value add = vm->globals.values[index];
  assert_true(IS_CLOSURE(add));
  Buffer out;
  buf_init(&out);
  debug_list_proto(&out, AS_CLOSURE(add)->proto, NULL);
  assert_text_equal(buf_text(&out),
                    "action function add (test.sim:1): 2 params, 5 slots, 0 upvalues, 1 constants, 21 bytes\n"
                    "  0000    2  GET_LOCAL           1\n"
                    "  0002    |  GET_LOCAL           2\n"
                    "  0004    |  ADD            \n"
                    "  0005    3  GET_LOCAL           3\n"
                    "  0007    |  GTI                10\n"
                    "  0009    |  JUMP_IF_FALSE       6    ; to 0018\n"
                    "  0012    |  CONST               0    ; \"big\"\n"
                    "  0015    |  JUMP                2    ; to 0020\n"
                    "  0018    |  GET_LOCAL           3\n"
                    "  0020    |  RETURN         \n"
                    "\n");
  /* one instruction at a time: each returns the next offset */
  buf_free(&out);
  const ObjProto *proto = AS_CLOSURE(add)->proto;
  assert_int_equal(debug_instruction(&out, proto, 0, NULL), 2);
  assert_int_equal(debug_instruction(&out, proto, 4, NULL), 5);
  assert_int_equal(debug_instruction(&out, proto, 5, NULL), 7);
  assert_int_equal(debug_instruction(&out, proto, 7, NULL), 9);
  assert_int_equal(debug_instruction(&out, proto, 9, NULL), 12);
  assert_text_equal(buf_text(&out),
                    "  0000    2  GET_LOCAL           1\n"
                    "  0004    |  ADD            \n"
                    "  0005    3  GET_LOCAL           3\n"
                    "  0007    |  GTI                10\n"
                    "  0009    |  JUMP_IF_FALSE       6    ; to 0018\n");
  buf_free(&out);
  vm->gc_paused--;
}

/* A hand-made script proto holding a block proto, listed after it. */
static void test_hand_made(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  vm->gc_paused++;
  ObjProto *inner = obj_proto(vm, PROTO_BLOCK, "m.sim", 4);
  inner->name = obj_cstring(vm, "<block>");
  inner->max_slots = 1;
  inner->upvalue_count = 1;
  chunk_write(&inner->chunk, OP_UNIT, 4);
  chunk_write(&inner->chunk, OP_RETURN, 4);

  ObjProto *p = obj_proto(vm, PROTO_SCRIPT, "m.sim", 1);
  p->name = obj_cstring(vm, "<top level>");
  p->arity = 1;
  p->max_slots = 3;
  int k_inner = chunk_add_constant(&p->chunk, OBJ_VAL(inner));
  int k_name = chunk_add_constant(&p->chunk, OBJ_VAL(obj_cstring(vm, "x\ty")));
  assert_int_equal(k_inner, 0);
  assert_int_equal(k_name, 1);
  chunk_write(&p->chunk, OP_CLOSURE, 1);
  chunk_write(&p->chunk, 0, 1);
  chunk_write(&p->chunk, 0, 1);
  chunk_write(&p->chunk, OP_FIELD, 2);
  chunk_write(&p->chunk, 0, 2);
  chunk_write(&p->chunk, 1, 2);
  chunk_write(&p->chunk, OP_FIELD, 2); /* constant 300 does not exist: no comment */
  chunk_write(&p->chunk, 1, 2);
  chunk_write(&p->chunk, 44, 2);
  chunk_write(&p->chunk, OP_ACTION, 3);
  chunk_write(&p->chunk, 255, 3); /* no such builtin (builtins.c asserts fewer): no comment */
  chunk_write(&p->chunk, OP_JUMP, 3);
  chunk_write(&p->chunk, 0x01, 3);
  chunk_write(&p->chunk, 0x00, 3); /* 256 forward */
  chunk_write(&p->chunk, 0xff, 5); /* not an opcode */
  chunk_write(&p->chunk, OP_POP, 5);
  chunk_write(&p->chunk, OP_CONST, 6);
  chunk_write(&p->chunk, 0, 6); /* one operand byte of two */
  Buffer out;
  buf_init(&out);
  debug_list_proto(&out, p, NULL);
  assert_text_equal(buf_text(&out),
                    "script <top level> (m.sim:1): 1 param, 3 slots, 0 upvalues, 2 constants, 18 bytes\n"
                    "  0000    1  CLOSURE             0    ; <block> (m.sim:4)\n"
                    "  0003    2  FIELD               1    ; \"x\\ty\"\n"
                    "  0006    |  FIELD             300\n"
                    "  0009    3  ACTION            255\n"
                    "  0011    |  JUMP              256    ; to 0270\n"
                    "  0014    5  <bad opcode 255>\n"
                    "  0015    |  POP            \n"
                    "  0016    6  CONST           <truncated>\n"
                    "\n"
                    "block <block> (m.sim:4): 0 params, 1 slots, 1 upvalue, 0 constants, 2 bytes\n"
                    "  0000    4  UNIT           \n"
                    "  0001    |  RETURN         \n"
                    "\n");
  buf_free(&out);
  /* the truncated instruction ends the listing; the bad byte is one byte */
  assert_int_equal(debug_instruction(&out, p, 16, NULL), 18);
  assert_int_equal(debug_instruction(&out, p, 14, NULL), 15);
  assert_text_equal(buf_text(&out), "  0016    6  CONST           <truncated>\n  0014    5  <bad opcode 255>\n");
  buf_free(&out);
  vm->gc_paused--;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_compiled_function, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_hand_made, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
