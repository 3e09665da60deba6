/* Chunks: code with a line per byte, and a constant pool that shares equal
 * constants within its window. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

static void test_code_and_lines(void **state) {
  (void)state;
  Chunk chunk;
  chunk_init(&chunk);
  for (int i = 0; i < 1000; i++) chunk_write(&chunk, (uint8_t)(i % 251), 1 + i / 10);
  assert_int_equal(chunk.count, 1000);
  assert_true(chunk.capacity >= 1000);
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(chunk.code[i], i % 251);
    assert_int_equal(chunk.lines[i], 1 + i / 10);
  }
  chunk_free(&chunk);
  assert_int_equal(chunk.count, 0);
  assert_null(chunk.code);
}

static void test_constants_shared(void **state) {
  (void)state;
  Chunk chunk;
  chunk_init(&chunk);
  assert_int_equal(chunk_add_constant(&chunk, INT_VAL(7)), 0);
  assert_int_equal(chunk_add_constant(&chunk, FLOAT_VAL(7.0)), 1);    /* another type: its own */
  assert_int_equal(chunk_add_constant(&chunk, DURATION_VAL(7)), 2);
  assert_int_equal(chunk_add_constant(&chunk, INT_VAL(7)), 0);        /* shared */
  assert_int_equal(chunk_add_constant(&chunk, FLOAT_VAL(0.0)), 3);
  assert_int_equal(chunk_add_constant(&chunk, FLOAT_VAL(-0.0)), 4);   /* -0.0 is not 0.0 */
  assert_int_equal(chunk_add_constant(&chunk, FLOAT_VAL(-0.0)), 4);
  chunk_free(&chunk);
}

/* Only the last 64 constants are searched, so big functions compile in
 * linear time; an equal constant further back is added again. */
static void test_constant_window(void **state) {
  (void)state;
  Chunk chunk;
  chunk_init(&chunk);
  for (int i = 0; i < 100; i++) assert_int_equal(chunk_add_constant(&chunk, INT_VAL(i)), i);
  assert_int_equal(chunk_add_constant(&chunk, INT_VAL(99)), 99);  /* within the window */
  assert_int_equal(chunk_add_constant(&chunk, INT_VAL(36)), 36);  /* the window's oldest */
  assert_int_equal(chunk_add_constant(&chunk, INT_VAL(35)), 100); /* just outside: added */
  chunk_free(&chunk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_code_and_lines),
      cmocka_unit_test(test_constants_shared),
      cmocka_unit_test(test_constant_window),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
