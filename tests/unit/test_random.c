/* vm/value/random.h: SplitMix64 against its published outputs, and the ranges of
 * random(n) and randomFloat(). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "random.h"

/* The first outputs from state 0 and from state 1234567, as the reference
 * implementation (Vigna's splitmix64.c) gives them. */
static void test_reference_outputs(void **state) {
  (void)state;
  uint64_t s = 0;
  assert_int_equal(splitmix64_next(&s), 0xe220a8397b1dcdafull);
  assert_int_equal(splitmix64_next(&s), 0x6e789e6aa1b965f4ull);
  assert_int_equal(splitmix64_next(&s), 0x06c45d188009454full);
  s = 1234567;
  assert_int_equal(splitmix64_next(&s), 6457827717110365317ull);
  assert_int_equal(splitmix64_next(&s), 3203168211198807973ull);
}

/* below(n) stays in [0, n), reaches both ends of a small range, and below(1)
 * is always 0; the float is in [0, 1). */
static void test_ranges(void **state) {
  (void)state;
  uint64_t s = 42;
  bool seen[7] = {false};
  for (int i = 0; i < 1000; i++) {
    uint64_t x = splitmix64_below(&s, 7);
    assert_true(x < 7);
    seen[x] = true;
    assert_int_equal(splitmix64_below(&s, 1), 0);
    double f = splitmix64_float(&s);
    assert_true(f >= 0.0 && f < 1.0);
  }
  for (int i = 0; i < 7; i++) assert_true(seen[i]);
  uint64_t big = splitmix64_below(&s, UINT64_MAX);
  assert_true(big < UINT64_MAX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_outputs),
      cmocka_unit_test(test_ranges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
