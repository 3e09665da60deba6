/* Command-line value parsing (base/options.c): counts, durations, sizes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../base/options.h"

static void test_counts(void **state) {
  (void)state;
  uint64_t n = 7;
  assert_true(parse_count("0", &n));
  assert_int_equal(n, 0);
  assert_true(parse_count("18446744073709551615", &n));
  assert_true(n == UINT64_MAX);
  assert_false(parse_count("18446744073709551616", &n)); /* one past the largest */
  assert_false(parse_count("", &n));
  assert_false(parse_count("-1", &n));
  assert_false(parse_count("+1", &n));
  assert_false(parse_count("10k", &n));
  assert_false(parse_count(" 1", &n));
}

static void test_durations(void **state) {
  (void)state;
  int64_t ns = -1;
  assert_true(parse_duration("10s", &ns));
  assert_int_equal(ns, 10000000000LL);
  assert_true(parse_duration("500ms", &ns));
  assert_int_equal(ns, 500000000);
  assert_true(parse_duration("2us", &ns));
  assert_int_equal(ns, 2000);
  assert_true(parse_duration("7ns", &ns));
  assert_int_equal(ns, 7);
  assert_true(parse_duration("9223372036854775807ns", &ns));
  assert_true(ns == INT64_MAX);
  assert_false(parse_duration("9223372036854775808ns", &ns));
  assert_false(parse_duration("9223372037s", &ns)); /* too many seconds */
  assert_false(parse_duration("10", &ns));          /* a unit is required */
  assert_false(parse_duration("1.5s", &ns));
  assert_false(parse_duration("-1s", &ns));
  assert_false(parse_duration("1m", &ns));
  assert_false(parse_duration("s", &ns));
}

static void test_sizes(void **state) {
  (void)state;
  size_t bytes = 0;
  assert_true(parse_size("512MB", &bytes));
  assert_int_equal(bytes, 512u * 1024 * 1024);
  assert_true(parse_size("2GB", &bytes));
  assert_true(bytes == 2ull * 1024 * 1024 * 1024);
  assert_true(parse_size("100KB", &bytes));
  assert_int_equal(bytes, 102400);
  assert_true(parse_size("64B", &bytes));
  assert_int_equal(bytes, 64);
  assert_false(parse_size("64", &bytes));
  assert_false(parse_size("1TB", &bytes));
  assert_false(parse_size("1.5GB", &bytes));
  assert_false(parse_size("1234567890123456GB", &bytes)); /* more than 15 digits */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts),
      cmocka_unit_test(test_durations),
      cmocka_unit_test(test_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
