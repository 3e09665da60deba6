/* vm/value/buffer.c: the growable text buffer, printf into it, and the quoted
 * and JSON string escapes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "buffer.h"

static void test_empty(void **state) {
  (void)state;
  Buffer buf;
  buf_init(&buf);
  assert_null(buf.data);
  assert_int_equal(buf.length, 0);
  assert_int_equal(buf.capacity, 0);
  assert_string_equal(buf_text(&buf), "");
  buf_free(&buf);
  assert_null(buf.data);
}

/* A buffer in the caller's storage keeps a text that fits there, with no
 * allocation; one that outgrows it moves to the heap with every byte, and
 * buf_free frees only that (ASan would report a free of the storage). */
static void test_local_storage(void **state) {
  (void)state;
  char storage[8];
  Buffer buf;
  buf_init_local(&buf, storage, sizeof storage);
  assert_ptr_equal(buf.data, storage);
  assert_string_equal(buf_text(&buf), "");
  buf_append(&buf, "1234567", 7);
  assert_ptr_equal(buf.data, storage);
  assert_string_equal(buf_text(&buf), "1234567");
  buf_free(&buf);
  assert_null(buf.data);
  buf_init_local(&buf, storage, sizeof storage);
  buf_append(&buf, "abcd", 4);
  buf_printf(&buf, "%s-%d", "efgh", 42);
  assert_true(buf.data != storage);
  assert_string_equal(buf_text(&buf), "abcdefgh-42");
  buf_append(&buf, "!", 1);
  assert_string_equal(buf_text(&buf), "abcdefgh-42!");
  buf_free(&buf);
  assert_null(buf.data);
}

/* Appending byte by byte past 256 keeps every byte, the NUL and a capacity
 * that is a doubling of 64. */
static void test_growth(void **state) {
  (void)state;
  Buffer buf;
  buf_init(&buf);
  char expected[1001];
  for (int i = 0; i < 1000; i++) {
    char c = (char)('a' + i % 26);
    expected[i] = c;
    buf_append(&buf, &c, 1);
    assert_int_equal(buf.length, (size_t)i + 1);
    assert_true(buf.capacity > buf.length);
    assert_int_equal(buf.data[buf.length], '\0');
  }
  expected[1000] = '\0';
  assert_int_equal(buf.capacity, 1024);
  assert_string_equal(buf_text(&buf), expected);
  buf_free(&buf);
  assert_null(buf.data);
  assert_int_equal(buf.length, 0);
  assert_int_equal(buf.capacity, 0);
}

/* One big append grows straight to the first doubling that fits. */
static void test_big_append(void **state) {
  (void)state;
  Buffer buf;
  buf_init(&buf);
  buf_append(&buf, "ab", 2);
  assert_int_equal(buf.capacity, 64);
  char big[300];
  memset(big, 'x', sizeof big);
  buf_append(&buf, big, sizeof big);
  assert_int_equal(buf.length, 302);
  assert_int_equal(buf.capacity, 512);
  assert_memory_equal(buf.data, "abxxx", 5);
  assert_int_equal(buf.data[301], 'x');
  assert_int_equal(buf.data[302], '\0');
  /* bytes with NULs inside are kept */
  buf_append(&buf, "c\0d", 3);
  assert_int_equal(buf.length, 305);
  assert_memory_equal(buf.data + 302, "c\0d", 4);
  buf_free(&buf);
}

static void test_printf_short_and_long(void **state) {
  (void)state;
  Buffer buf;
  buf_init(&buf);
  buf_printf(&buf, "%d-%s|", 42, "x");
  assert_string_equal(buf_text(&buf), "42-x|");
  /* longer than the 256-byte first attempt */
  char long_text[1001];
  for (int i = 0; i < 1000; i++) long_text[i] = (char)('0' + i % 10);
  long_text[1000] = '\0';
  buf_printf(&buf, "<%s>%d", long_text, 7);
  assert_int_equal(buf.length, 5 + 1 + 1000 + 1 + 1);
  assert_memory_equal(buf.data, "42-x|<0123456789", 16);
  assert_memory_equal(buf.data + 5 + 1 + 990, "0123456789>7", 13);
  /* exactly 255 and 256 bytes: either side of the small buffer */
  Buffer a, b;
  buf_init(&a);
  buf_init(&b);
  buf_printf(&a, "%.255s", long_text);
  buf_printf(&b, "%.256s", long_text);
  assert_int_equal(a.length, 255);
  assert_int_equal(b.length, 256);
  assert_memory_equal(a.data, long_text, 255);
  assert_memory_equal(b.data, long_text, 256);
  assert_int_equal(b.data[256], '\0');
  buf_printf(&a, "%s", "");
  assert_int_equal(a.length, 255);
  buf_free(&a);
  buf_free(&b);
  buf_free(&buf);
}

static void check_quoted(const char *text, size_t length, const char *expected, const char *file, int line) {
  Buffer buf;
  buf_init(&buf);
  buf_append(&buf, "<", 1);
  buf_append_quoted(&buf, text, length);
  char actual[512];
  snprintf(actual, sizeof actual, "%s", buf_text(&buf));
  size_t n = buf.length;
  buf_free(&buf);
  unit_assert_text(actual, expected, "buf_append_quoted", file, line);
  if (n != strlen(expected)) _fail(file, line);
}
#define assert_quoted(text, length, expected) check_quoted((text), (length), (expected), __FILE__, __LINE__)

static void test_quoted(void **state) {
  (void)state;
  assert_quoted("", 0, "<\"\"");
  assert_quoted("plain", 5, "<\"plain\"");
  assert_quoted("a\"b\\c", 5, "<\"a\\\"b\\\\c\"");
  assert_quoted("l1\nl2\tx", 7, "<\"l1\\nl2\\tx\"");
  assert_quoted("\r\x01\x1f\x7f", 4, "<\"\\x0d\\x01\\x1f\\x7f\"");
  assert_quoted("a\0b", 3, "<\"a\\x00b\"");         /* NUL inside the length */
  assert_quoted("h\xc3\xa9!", 4, "<\"h\xc3\xa9!\""); /* UTF-8 kept */
  assert_quoted("\xff", 1, "<\"\xff\"");
  assert_quoted("abc", 2, "<\"ab\"");                /* only `length` bytes */
}

static void check_json(const char *text, const char *expected, const char *file, int line) {
  Buffer buf;
  buf_init(&buf);
  buf_append_json(&buf, text);
  unit_assert_text(buf_text(&buf), expected, "buf_append_json", file, line);
  if (buf.length != strlen(expected)) _fail(file, line);
  buf_free(&buf);
}
#define assert_json(text, expected) check_json((text), (expected), __FILE__, __LINE__)

static void test_json(void **state) {
  (void)state;
  assert_json("", "\"\"");
  assert_json("say \"hi\"", "\"say \\\"hi\\\"\"");
  assert_json("a\\b", "\"a\\\\b\"");
  assert_json("l1\nl2\t\r\x01\x1f", "\"l1\\u000al2\\u0009\\u000d\\u0001\\u001f\"");
  assert_json(" ~\x7f", "\" ~\x7f\"");
  assert_json("\xe2\x82\xac", "\"\xe2\x82\xac\"");
  assert_json("/", "\"/\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_growth),
      cmocka_unit_test(test_local_storage),
      cmocka_unit_test(test_big_append),
      cmocka_unit_test(test_printf_short_and_long),
      cmocka_unit_test(test_quoted),
      cmocka_unit_test(test_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
