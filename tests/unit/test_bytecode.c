/* Bytecode files: a compiled program round-trips, and a damaged file is
 * rejected with a message or, when it still verifies, runs without harm. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../vm/bytecode.h"

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
  data[8] = 99; /* the version */
  u = bare_vm();
  assert_int_equal(bytecode_load(u->vm, "p.simc", data, size), SIM_COMPILE_ERROR);
  assert_string_equal(unit_text(&u->err),
                      "p.simc: bad bytecode: format version 99, this simvm reads version 1 (recompile it with simc)\n");
  unit_vm_free(u);
  data[8] = BYTECODE_VERSION;
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_messages),
      cmocka_unit_test(test_random_damage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
