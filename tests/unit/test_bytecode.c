/* Bytecode files: a compiled program round-trips, and a damaged file is
 * rejected with a message or, when it still verifies, runs without harm. */
#define _GNU_SOURCE /* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../api/bytecode.h"
#include "builtins.h"

static const char *program =
    "fn fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2)\n"
    "fn worker(d) {\n"
    "  delay(d)\n"
    "  say(show(fib(10)) ++ \" \" ++ show(#{x: 1.5, y: [1, 2]}))\n"
    "}\n"
    "main = {\n"
    "  fork(worker(2us))\n"
    "  r <- timeout(1us, delay(5us))\n"
    "  v <- newTVar(0)\n"
    "  atomically(modifyTVar(v, fn(x) => x + 1))\n"
    "  n <- readTVarIO(v)\n"
    "  say(show([r, n]))\n"
    "  delay(3us)\n"
    "}\n";

/* The program compiled and written as a bytecode image. */
static uint8_t *compiled(size_t *size) {
  UnitVM *u = unit_vm_new();
  assert_int_equal(unit_load(u, program), SIM_OK);
  char *data = NULL;
  FILE *out = open_memstream(&data, size);
  assert_true(vm_write_bytecode(u->vm, out));
  fclose(out);
  unit_vm_free(u);
  return (uint8_t *)data;
}

static UnitVM *bare_vm(void) {
  VMConfig config;
  vm_config_init(&config);
  config.no_prelude = true;
  config.max_steps = 200000;
  config.max_time = 1000000000;
  return unit_vm_new_with(&config);
}

static void test_round_trip(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = compiled(&size);
  UnitVM *u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", data, size), SIM_OK);
  assert_int_equal(vm_run(u->vm), SIM_OK);
  assert_string_equal(unit_text(&u->out), "[none, 1]\n55 #{x: 1.5, y: [1, 2]}\n");
  assert_string_equal(unit_text(&u->err), "");
  unit_vm_free(u);
  free(data);
}

/* The opcodes `op` in `proto` and the prototypes in its constants. */
static int count_op(const ObjProto *proto, uint8_t op) {
  int n = 0;
  for (int i = 0; i < proto->chunk.count; i += opcode_size(proto->chunk.code[i])) n += proto->chunk.code[i] == op;
  for (int i = 0; i < proto->chunk.constants.count; i++)
    if (IS_PROTO(proto->chunk.constants.values[i])) n += count_op(AS_PROTO(proto->chunk.constants.values[i]), op);
  return n;
}

static int count_op_in_modules(VM *vm, uint8_t op) {
  int n = 0;
  for (int i = 0; i < vm->module_inits.count; i++) n += count_op(AS_CLOSURE(vm->module_inits.values[i])->proto, op);
  return n;
}

/* The VM puts superinstructions in code it compiled and in code it loaded
 * (fib's `n < 2` and `n - 1`; the prelude's list loops), and writes the
 * code as compiled: a file with one in it would not load (VM_ONLY). */
static void test_superinstructions_placed(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = compiled(&size);
  UnitVM *u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", data, size), SIM_OK);
  assert_true(count_op_in_modules(u->vm, OP_LOCAL_LTI) > 0);
  assert_true(count_op_in_modules(u->vm, OP_LOCAL_SUBI) > 0);
  assert_true(count_op_in_modules(u->vm, OP_LOCAL_HEAD) > 0);
  assert_true(count_op_in_modules(u->vm, OP_LOCAL_IS_EMPTY) > 0);
  assert_int_equal(vm_run(u->vm), SIM_OK);
  assert_string_equal(unit_text(&u->out), "[none, 1]\n55 #{x: 1.5, y: [1, 2]}\n");
  unit_vm_free(u);
  free(data);
}

static uint8_t *written(UnitVM *u, size_t *size) {
  char *data = NULL;
  FILE *out = open_memstream(&data, size);
  assert_true(vm_write_bytecode(u->vm, out));
  fclose(out);
  return (uint8_t *)data;
}

/* Under heap continuations the VM runs CALL_BIND as CALL_BIND_HEAP, in
 * code it compiled and in code it loaded, and writes the code as compiled:
 * the file is the same byte for byte, and runs the same. */
static void test_heap_continuations_round_trip(void **state) {
  (void)state;
  size_t size, heap_size, again_size;
  uint8_t *data = compiled(&size);
  VMConfig config;
  vm_config_init(&config);
  config.heap_continuations = true;
  UnitVM *h = unit_vm_new_with(&config);
  assert_int_equal(unit_load(h, program), SIM_OK);
  assert_true(count_op_in_modules(h->vm, OP_CALL_BIND_HEAP) > 0);
  assert_int_equal(count_op_in_modules(h->vm, OP_CALL_BIND), 0);
  uint8_t *heap_data = written(h, &heap_size);
  assert_int_equal(heap_size, size);
  assert_memory_equal(heap_data, data, size);

  UnitVM *u = bare_vm();
  u->vm->stack_continuations = false; /* as config.heap_continuations makes it */
  assert_int_equal(bytecode_load(u->vm, "p.simc", data, size), SIM_OK);
  assert_true(count_op_in_modules(u->vm, OP_CALL_BIND_HEAP) > 0);
  assert_int_equal(count_op_in_modules(u->vm, OP_CALL_BIND), 0);
  uint8_t *again = written(u, &again_size);
  assert_int_equal(again_size, size);
  assert_memory_equal(again, data, size);
  assert_int_equal(vm_run(u->vm), SIM_OK);
  assert_string_equal(unit_text(&u->out), "[none, 1]\n55 #{x: 1.5, y: [1, 2]}\n");
  unit_vm_free(u);
  unit_vm_free(h);
  free(again);
  free(heap_data);
  free(data);
}

/* Every prefix of the file is rejected as truncated (or as not bytecode). */
static void test_truncated(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = compiled(&size);
  for (size_t n = 0; n < size; n += (n < 64 ? 1 : 37)) {
    UnitVM *u = bare_vm();
    assert_int_equal(bytecode_load(u->vm, "p.simc", data, n), SIM_COMPILE_ERROR);
    assert_non_null(strstr(unit_text(&u->err), "p.simc: bad bytecode: "));
    unit_vm_free(u);
  }
  free(data);
}

static void test_messages(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = compiled(&size);
  UnitVM *u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", (const uint8_t *)"#!/bin/sh\n", 10), SIM_COMPILE_ERROR);
  assert_string_equal(unit_text(&u->err),
                      "p.simc: bad bytecode: it does not start with the simvm bytecode signature\n");
  unit_vm_free(u);
  /* the version, little-endian after the signature: one bit off is another simvm's */
  uint32_t version = bytecode_version();
  assert_int_equal(data[8] | data[9] << 8 | data[10] << 16 | (uint32_t)data[11] << 24, version);
  data[8] ^= 1;
  u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", data, size), SIM_COMPILE_ERROR);
  char expected[200];
  snprintf(expected, sizeof expected,
           "p.simc: bad bytecode: format version %08x, this simvm reads version %08x (recompile it with simc)\n",
           version ^ 1, version);
  assert_string_equal(unit_text(&u->err), expected);
  unit_vm_free(u);
  data[8] ^= 1;
  uint8_t *longer = malloc(size + 3);
  memcpy(longer, data, size);
  memcpy(longer + size, "xyz", 3);
  u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", longer, size + 3), SIM_COMPILE_ERROR);
  assert_string_equal(unit_text(&u->err), "p.simc: bad bytecode: 3 bytes of junk after the program\n");
  unit_vm_free(u);
  free(longer);
  free(data);
}

/* Random damage: each damaged file is rejected, or it verifies and then
 * runs (within limits) to some ending; never a crash (ASan watches). */
static void test_random_damage(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = compiled(&size);
  uint8_t *copy = malloc(size);
  uint32_t seed = 12345;
  int rejected = 0, ran = 0;
  for (int round = 0; round < 1500; round++) {
    memcpy(copy, data, size);
    for (int k = 0; k < 1 + round % 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = 9 + (seed >> 8) % (size - 9);
      seed = seed * 1103515245u + 12345u;
      copy[at] = (uint8_t)(seed >> 16);
    }
    UnitVM *u = bare_vm();
    if (bytecode_load(u->vm, "p.simc", copy, size) == SIM_OK) {
      vm_run(u->vm);
      ran++;
    } else {
      assert_non_null(strstr(unit_text(&u->err), "p.simc: bad bytecode: "));
      rejected++;
    }
    unit_vm_free(u);
  }
  assert_true(rejected > 0);
  assert_true(ran > 0);
  free(copy);
  free(data);
}

/* ---- the reader's rules, on files written by hand ---- */

typedef struct {
  uint8_t data[65536];
  size_t length;
} Bytes;

static void put(Bytes *b, const void *data, size_t n) {
  assert_true(b->length + n <= sizeof b->data);
  memcpy(b->data + b->length, data, n);
  b->length += n;
}
static void put_u8(Bytes *b, uint32_t v) { uint8_t x = (uint8_t)v; put(b, &x, 1); }
static void put_u32(Bytes *b, uint32_t v) {
  for (int i = 0; i < 4; i++) put_u8(b, (v >> (8 * i)) & 0xff);
}
static void put_str(Bytes *b, const char *s) {
  put_u32(b, (uint32_t)strlen(s));
  put(b, s, strlen(s));
}

/* What varies in a file of one module "m.sim" whose block returns (). */
typedef struct {
  uint32_t opt_level, builtins, kind, arity, slots, upvalues, handler, line, code_length, constants, tag;
  int flipped_arity;       /* index of a builtin whose arity is written wrong, or -1 */
  int renamed;             /* index of a builtin whose name is written wrong, or -1 */
  uint32_t globals, global_name_length, modules, key_length, nesting;
  int32_t global_arity;    /* -1: not a function */
} FileShape;

static FileShape good(void) {
  return (FileShape){1, (uint32_t)builtin_count, PROTO_BLOCK, 0, 2, 0, 0xffffffffu, 1, 2, 0, 0, -1, -1, 0, 1, 1, 5, 0, -1};
}

static void put_proto(Bytes *b, const FileShape *s, uint32_t nesting) {
  put_u8(b, nesting ? PROTO_BLOCK : s->kind);
  put_u32(b, s->arity);
  put_u32(b, s->slots);
  put_u32(b, s->upvalues);
  for (uint32_t i = 0; i < s->upvalues && i < 4; i++) put(b, "\x01\x00", 2);
  put_u32(b, s->handler);
  put_u32(b, 0);
  put_str(b, "m");
  put_str(b, "m.sim");
  put_u32(b, s->line);
  put_u32(b, s->code_length);
  put(b, (const uint8_t[]){OP_UNIT, OP_RETURN}, s->code_length < 2 ? s->code_length : 2);
  for (uint32_t i = 0; i < s->code_length && i < 2; i++) put_u32(b, 1);
  put_u32(b, nesting ? 1 : s->constants);
  if (nesting) {
    put_u8(b, 4);
    put_proto(b, s, nesting - 1);
  } else if (s->constants) {
    put_u8(b, s->tag);
    put(b, "\0\0\0\0\0\0\0\0", 8);
  }
}

static Bytes file_of(const FileShape *s) {
  static Bytes b;
  b.length = 0;
  put(&b, BYTECODE_MAGIC, 8);
  put_u32(&b, bytecode_version());
  put_u8(&b, s->opt_level);
  put_u32(&b, s->builtins);
  for (uint32_t i = 0; i < s->builtins && i < (uint32_t)builtin_count; i++) {
    put_str(&b, (int)i == s->renamed ? "bogus" : builtin_table[i].name);
    put_u8(&b, (uint32_t)builtin_table[i].arity + ((int)i == s->flipped_arity));
  }
  put_u32(&b, s->globals);
  for (uint32_t i = 0; i < s->globals && i < 2; i++) {
    put_u32(&b, s->global_name_length);
    put(&b, "gg", s->global_name_length < 2 ? s->global_name_length : 2);
    put_u32(&b, (uint32_t)s->global_arity);
    put_str(&b, "m.sim");
    put_u32(&b, 1);
  }
  put_u32(&b, s->modules);
  if (s->modules) {
    put_u32(&b, s->key_length);
    put(&b, "m.sim", s->key_length < 5 ? s->key_length : 5);
    put_proto(&b, s, s->nesting);
  }
  return b;
}

/* The message loading the file gives ("" when it loads). */
static const char *load_message(const FileShape *s) {
  static char text[512];
  Bytes b = file_of(s);
  UnitVM *u = bare_vm();
  SimStatus status = bytecode_load(u->vm, "p.simc", b.data, b.length);
  snprintf(text, sizeof text, "%s", unit_text(&u->err));
  assert_int_equal(status, text[0] ? SIM_COMPILE_ERROR : SIM_OK);
  unit_vm_free(u);
  return text;
}

#define assert_load_message(shape, expected) assert_string_equal(load_message(&(shape)), (expected))

static void test_reader_rules(void **state) {
  (void)state;
  FileShape s = good();
  assert_load_message(s, "");
  s = good(), s.opt_level = 2;
  assert_load_message(s, "p.simc: bad bytecode: its actions byte 2 is neither 0 (reified) nor 1 (direct)\n");
  s = good(), s.builtins = 3;
  char expected[256];
  snprintf(expected, sizeof expected, "p.simc: bad bytecode: it was compiled for 3 builtins, this simvm has %d (recompile it)\n",
           builtin_count);
  assert_load_message(s, expected);
  int kind = (int)(builtin_find("exceptionKind") - builtin_table);
  s = good(), s.flipped_arity = kind;
  snprintf(expected, sizeof expected,
           "p.simc: bad bytecode: builtin %d 'exceptionKind' takes 2 arguments in the file, 1 in this simvm (recompile it)\n", kind);
  assert_load_message(s, expected);
  s = good(), s.renamed = kind;
  snprintf(expected, sizeof expected, "p.simc: bad bytecode: builtin %d is 'bogus', this simvm's is 'exceptionKind' (recompile it)\n", kind);
  assert_load_message(s, expected);
  s = good(), s.builtins = 4097;
  assert_load_message(s, "p.simc: bad bytecode: a builtin count 4097 is out of range\n");
  s = good(), s.line = 0x80000000u;
  assert_load_message(s, "p.simc: bad bytecode: a line 2147483648 is out of range\n");
  s = good(), s.globals = 70000;
  assert_load_message(s, "p.simc: bad bytecode: a global count 70000 is out of range\n");
  s = good(), s.globals = 1, s.global_name_length = 0;
  assert_load_message(s, "p.simc: bad bytecode: global 0 has an empty name\n");
  s = good(), s.globals = 1, s.global_name_length = 2, s.global_arity = -2;
  assert_load_message(s, "p.simc: bad bytecode: global 0 has arity -2, below -1 (not a function)\n");
  s = good(), s.globals = 1, s.global_name_length = 2, s.global_arity = 256;
  assert_load_message(s, "p.simc: bad bytecode: global 0 has arity 256, above 255\n");
  s = good(), s.globals = 1, s.global_name_length = 2, s.global_arity = 255;
  assert_load_message(s, "");
  s = good(), s.modules = 5000;
  assert_load_message(s, "p.simc: bad bytecode: a module count 5000 is out of range\n");
  s = good(), s.key_length = 1u << 29;
  assert_load_message(s, "p.simc: bad bytecode: a string length 536870912 is out of range\n");
  s = good(), s.kind = PROTO_INTERNAL;
  assert_load_message(s, "p.simc: bad bytecode: unknown prototype kind 4\n");
  s = good(), s.kind = PROTO_FUNCTION;
  assert_load_message(s, "p.simc: bad bytecode: module 0 is not a block\n");
  s = good(), s.arity = 256;
  assert_load_message(s, "p.simc: bad bytecode: an arity 256 is out of range\n");
  s = good(), s.slots = 65536;
  assert_load_message(s, "p.simc: bad bytecode: a slot count 65536 is out of range\n");
  s = good(), s.upvalues = 256;
  assert_load_message(s, "p.simc: bad bytecode: an upvalue count 256 is out of range\n");
  s = good(), s.handler = 0;
  assert_load_message(s, "p.simc: bad bytecode: a script prototype has an exception handler\n");
  s = good(), s.line = 0;
  assert_load_message(s, "p.simc: bad bytecode: a script prototype has line 0\n");
  s = good(), s.code_length = (1u << 24) + 1;
  assert_load_message(s, "p.simc: bad bytecode: a code length 16777217 is out of range\n");
  s = good(), s.constants = 65537;
  assert_load_message(s, "p.simc: bad bytecode: a constant count 65537 is out of range\n");
  s = good(), s.constants = 1, s.tag = 9;
  assert_load_message(s, "p.simc: bad bytecode: unknown constant tag 9\n");
  s = good(), s.nesting = 199; /* 200 prototypes, one in another */
  assert_load_message(s, "");
  s = good(), s.nesting = 200;
  assert_load_message(s, "p.simc: bad bytecode: prototypes nested too deeply\n");
  /* the verifier's verdict, with the prototype it is about */
  s = good(), s.code_length = 0;
  assert_load_message(s, "p.simc: bad bytecode: m (m.sim:1): no code\n");
  s = good(), s.upvalues = 1, s.slots = 3;
  assert_load_message(s, "p.simc: bad bytecode: m (m.sim:1): a module's top level with captured variables\n");
}

/* A file that is the signature cut short is bytecode, reported as
 * truncated, not a script with a syntax error. */
static void test_short_signature(void **state) {
  (void)state;
  assert_true(bytecode_is((const uint8_t *)"SIMVMBC", 7));
  assert_false(bytecode_is((const uint8_t *)"SIMVMB", 6));
  assert_false(bytecode_is((const uint8_t *)"SIMVMBC = 1\n", 12));
  UnitVM *u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", (const uint8_t *)"SIMVMBC", 7), SIM_COMPILE_ERROR);
  assert_string_equal(unit_text(&u->err), "p.simc: bad bytecode: the file is truncated\n");
  unit_vm_free(u);
}

static void test_second_program(void **state) {
  (void)state;
  FileShape s = good();
  s.globals = 1;
  s.global_name_length = 2;
  Bytes b = file_of(&s);
  UnitVM *u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", b.data, b.length), SIM_OK);
  assert_int_equal(bytecode_load(u->vm, "q.simc", b.data, b.length), SIM_COMPILE_ERROR);
  assert_string_equal(unit_text(&u->err), "q.simc: bad bytecode: internal: the VM already has a program loaded\n");
  unit_vm_free(u);
}

/* The defect fuzzing found: one changed byte makes a closure capture a slot
 * above the live stack (but within max_slots, which the old verifier
 * checked); the VM then read uninitialised memory in show. */
static void test_capture_beyond_the_stack(void **state) {
  (void)state;
  const char *source = "fn adder(n) = fn(x) => x + n\nmain = say(show(adder(1)(2)))\n";
  UnitVM *c = unit_vm_new();
  assert_int_equal(unit_load(c, source), SIM_OK);
  char *data = NULL;
  size_t size;
  FILE *out = open_memstream(&data, &size);
  assert_true(vm_write_bytecode(c->vm, out));
  fclose(out);
  unit_vm_free(c);
  /* the last lambda of the file is the script's (the prelude comes first) */
  const char name[] = "\x08\x00\x00\x00<lambda>";
  uint8_t *at = NULL;
  for (uint8_t *p = (uint8_t *)data; (p = memmem(p, size - (size_t)(p - (uint8_t *)data), name, sizeof name - 1)); p++) at = p;
  assert_non_null(at);
  assert_memory_equal(at - 10, "\x01\x01\xff\xff\xff\xff", 6); /* capture: local slot 1 (n) */
  UnitVM *u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", (uint8_t *)data, size), SIM_OK);
  assert_int_equal(vm_run(u->vm), SIM_OK);
  assert_string_equal(unit_text(&u->out), "3\n");
  unit_vm_free(u);
  at[-9] = 2; /* slot 2: within adder's 3 slots, above its stack of 2 */
  u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", (uint8_t *)data, size), SIM_COMPILE_ERROR);
  assert_string_equal(unit_text(&u->err),
                      "p.simc: bad bytecode: adder (test.sim:1): CLOSURE of '<lambda>': capture 0 copies slot 2 of a stack 2 deep at offset 0\n");
  unit_vm_free(u);
  free(data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_heap_continuations_round_trip),
      cmocka_unit_test(test_superinstructions_placed),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_messages),
      cmocka_unit_test(test_random_damage),
      cmocka_unit_test(test_reader_rules),
      cmocka_unit_test(test_short_signature),
      cmocka_unit_test(test_second_program),
      cmocka_unit_test(test_capture_beyond_the_stack),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
