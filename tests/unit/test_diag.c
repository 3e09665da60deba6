/* lang/source.c and lang/diag.c: source lines, and the three-line error
 * report with its caret. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "diag.h"
#include "source.h"

static Source *src(const char *text) {
  Source *s = source_from_memory("f.sim", text, strlen(text));
  assert_non_null(s);
  return s;
}

static void check_line(const Source *s, int line, const char *expected, const char *file, int at) {
  int length = -1;
  const char *text = source_line(s, line, &length);
  if (!expected) {
    if (text) {
      print_error("line %d: expected NULL, got \"%.*s\"\n", line, length, text);
      _fail(file, at);
    }
    return;
  }
  if (!text) {
    print_error("line %d: expected \"%s\", got NULL\n", line, expected);
    _fail(file, at);
  }
  if (length != (int)strlen(expected) || memcmp(text, expected, (size_t)length) != 0) {
    print_error("line %d: expected \"%s\", got \"%.*s\"\n", line, expected, length, text);
    _fail(file, at);
  }
}
#define assert_line(s, line, expected) check_line((s), (line), (expected), __FILE__, __LINE__)

static void test_source_from_memory(void **state) {
  (void)state;
  Source *s = source_from_memory("name.sim", "a\0b", 3);
  assert_non_null(s);
  assert_string_equal(s->path, "name.sim");
  assert_int_equal(s->length, 3);
  assert_memory_equal(s->text, "a\0b\0", 4);
  assert_null(s->next);
  source_free(s);
}

static void test_source_read_missing(void **state) {
  (void)state;
  char err[256] = "";
  assert_null(source_read("/nonexistent/dir/x.sim", err, sizeof err));
  assert_string_equal(err, "cannot open '/nonexistent/dir/x.sim': No such file or directory");
}

static void test_source_lines(void **state) {
  (void)state;
  Source *s = src("first\nsecond\n\nlast");
  assert_line(s, 1, "first");
  assert_line(s, 2, "second");
  assert_line(s, 3, "");
  assert_line(s, 4, "last");
  assert_line(s, 5, NULL);
  assert_line(s, 100, NULL);
  source_free(s);

  /* a final newline: the line after it is empty, the next one missing */
  s = src("a\nb\n");
  assert_line(s, 2, "b");
  assert_line(s, 3, "");
  assert_line(s, 4, NULL);
  source_free(s);

  s = src("");
  assert_line(s, 1, "");
  assert_line(s, 2, NULL);
  source_free(s);
}

/* Lines before the first do not exist either. */
static void test_source_line_zero(void **state) {
  (void)state;
  Source *s = src("first\nsecond\n");
  assert_line(s, 0, NULL);
  assert_line(s, -1, NULL);
  source_free(s);
}

static void test_source_crlf(void **state) {
  (void)state;
  Source *s = src("one\r\ntwo\r\nthree\r");
  assert_line(s, 1, "one");
  assert_line(s, 2, "two");
  assert_line(s, 3, "three");
  assert_line(s, 4, NULL);
  source_free(s);
  s = src("a\r\r\nb");
  assert_line(s, 1, "a\r"); /* only one \r goes */
  source_free(s);
}

/* diag_error on `text` into a fresh capture; returns the Diag's count. */
static int report(UnitText *out, const char *text, int line, int col, const char *message) {
  Source *s = src(text);
  Diag diag = {unit_write_text, out, 0};
  diag_error(&diag, s, line, col, "%s", message);
  source_free(s);
  return diag.errors;
}

/* Only a .sim file has its line shown: an error in any other file (an
 * import of /etc/passwd, a script named x.txt) gives the position alone. */
static void test_lines_of_sim_files_only(void **state) {
  (void)state;
  UnitText out = {0};
  const char *names[] = {"passwd", "x.txt", "a.simc", "sim", "x.sim.bak"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    Source *s = source_from_memory(names[i], "root:x:0:0\n", 11);
    Diag diag = {unit_write_text, &out, 0};
    diag_error(&diag, s, 1, 1, "syntax error");
    char expected[64];
    snprintf(expected, sizeof expected, "%s:1:1: error: syntax error\n", names[i]);
    assert_text_equal(unit_text(&out), expected);
    unit_text_clear(&out);
    source_free(s);
  }
  Source *s = source_from_memory("dir.x/ok.sim", "abc\n", 4);
  Diag diag = {unit_write_text, &out, 0};
  diag_error(&diag, s, 1, 2, "here");
  assert_text_equal(unit_text(&out), "dir.x/ok.sim:1:2: error: here\n    abc\n     ^\n");
  source_free(s);
  unit_text_free(&out);
}

static void test_three_lines(void **state) {
  (void)state;
  UnitText out = {0};
  assert_int_equal(report(&out, "x = 1\ny = (2 +\n", 2, 8, "syntax error"), 1);
  assert_text_equal(unit_text(&out),
                    "f.sim:2:8: error: syntax error\n"
                    "    y = (2 +\n"
                    "           ^\n");
  unit_text_clear(&out);
  report(&out, "abc", 1, 1, "at the start");
  assert_text_equal(unit_text(&out), "f.sim:1:1: error: at the start\n    abc\n    ^\n");
  unit_text_clear(&out);
  /* a column just past the end: the caret follows the text */
  report(&out, "abc\n", 1, 4, "end");
  assert_text_equal(unit_text(&out), "f.sim:1:4: error: end\n    abc\n       ^\n");
  unit_text_clear(&out);
  /* a missing line: only the message */
  report(&out, "abc\n", 7, 1, "nowhere");
  assert_text_equal(unit_text(&out), "f.sim:7:1: error: nowhere\n");
  unit_text_clear(&out);
  /* CRLF: the \r is not shown */
  report(&out, "ab\r\ncd\r\n", 2, 2, "crlf");
  assert_text_equal(unit_text(&out), "f.sim:2:2: error: crlf\n    cd\n     ^\n");
  unit_text_free(&out);
}

static void test_format_arguments(void **state) {
  (void)state;
  UnitText out = {0};
  Source *s = src("q\n");
  Diag diag = {unit_write_text, &out, 0};
  diag_error(&diag, s, 1, 1, "'%s' takes %d argument%s", "f", 2, "s");
  assert_text_equal(unit_text(&out), "f.sim:1:1: error: 'f' takes 2 arguments\n    q\n    ^\n");
  source_free(s);
  unit_text_free(&out);
}

/* Tabs before the column are repeated in the caret line, so the caret lines
 * up whatever the tab width. */
static void test_tabs(void **state) {
  (void)state;
  UnitText out = {0};
  report(&out, "\tx =\t\tbad\n", 1, 7, "tabs");
  assert_text_equal(unit_text(&out),
                    "f.sim:1:7: error: tabs\n"
                    "    \tx =\t\tbad\n"
                    "    \t   \t\t^\n");
  unit_text_free(&out);
}

/* UTF-8 characters before the column take one caret space each. */
static void test_utf8_before_caret(void **state) {
  (void)state;
  UnitText out = {0};
  /* "é" is 2 bytes, "€" 3, "😀" 4: the column counts bytes */
  report(&out, "s = \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\" +\n", 1, 16, "utf8");
  assert_text_equal(unit_text(&out),
                    "f.sim:1:16: error: utf8\n"
                    "    s = \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\" +\n"
                    "             ^\n");
  unit_text_free(&out);
}

/* Control bytes show as '?'; on a line that is not UTF-8 every high byte
 * does, and takes one caret space. */
static void test_control_bytes(void **state) {
  (void)state;
  UnitText out = {0};
  report(&out, "a\x01" "b\x7f" "c\x1b" "d\n", 1, 7, "ctl");
  assert_text_equal(unit_text(&out), "f.sim:1:7: error: ctl\n    a?b?c?d\n          ^\n");
  unit_text_clear(&out);
  report(&out, "\xff\xc3\xa9x\n", 1, 4, "latin");
  assert_text_equal(unit_text(&out), "f.sim:1:4: error: latin\n    ???x\n       ^\n");
  unit_text_free(&out);
}

/* A long line is shown as a window around the column, with "..." before. */
static void test_long_line_window(void **state) {
  (void)state;
  char line[1001];
  for (int i = 0; i < 1000; i++) line[i] = (char)('a' + i % 26);
  line[1000] = '\0';
  UnitText out = {0};
  /* column 500: the window starts 100 bytes before it (byte 399) */
  report(&out, line, 1, 500, "far");
  char expected[2048];
  char spaces[101];
  memset(spaces, ' ', 100);
  spaces[100] = '\0';
  snprintf(expected, sizeof expected, "f.sim:1:500: error: far\n    ...%.200s\n       %s^\n", line + 399, spaces);
  assert_text_equal(unit_text(&out), expected);
  unit_text_clear(&out);
  /* column 180 is still shown from the start, cut at 200 bytes */
  report(&out, line, 1, 180, "near");
  char spaces179[180];
  memset(spaces179, ' ', 179);
  spaces179[179] = '\0';
  snprintf(expected, sizeof expected, "f.sim:1:180: error: near\n    %.200s\n    %s^\n", line, spaces179);
  assert_text_equal(unit_text(&out), expected);
  unit_text_clear(&out);
  /* column 182: windowed (from byte 81) */
  report(&out, line, 1, 182, "edge");
  snprintf(expected, sizeof expected, "f.sim:1:182: error: edge\n    ...%.200s\n       %s^\n", line + 81, spaces);
  assert_text_equal(unit_text(&out), expected);
  unit_text_free(&out);
}

/* The window never starts inside a UTF-8 character. */
static void test_long_line_window_utf8(void **state) {
  (void)state;
  char line[600];
  int n = 0;
  for (int i = 0; i < 150; i++) {
    line[n++] = '\xc3';
    line[n++] = '\xa9';
  }
  line[n++] = 'X';
  line[n] = '\0';
  UnitText out = {0};
  /* column 301 (the X, byte 300): 300 - 100 = byte 200, a lead byte; */
  report(&out, line, 1, 301, "u");
  char expected[1024];
  char spaces[51];
  memset(spaces, ' ', 50);
  spaces[50] = '\0';
  snprintf(expected, sizeof expected, "f.sim:1:301: error: u\n    ...%s\n       %s^\n", line + 200, spaces);
  assert_text_equal(unit_text(&out), expected);
  unit_text_clear(&out);
  /* column 302: 301 - 100 = byte 201, a continuation byte: back to 200 */
  report(&out, line, 1, 302, "v");
  snprintf(expected, sizeof expected, "f.sim:1:302: error: v\n    ...%s\n       %s ^\n", line + 200, spaces);
  assert_text_equal(unit_text(&out), expected);
  unit_text_free(&out);
}

/* After 20 errors the rest are counted but not shown. */
static void test_error_cap(void **state) {
  (void)state;
  UnitText out = {0};
  Source *s = src("x\n");
  Diag diag = {unit_write_text, &out, 0};
  UnitText expected = {0};
  for (int i = 1; i <= 25; i++) {
    diag_error(&diag, s, 1, 1, "error %d", i);
    if (i <= DIAG_MAX_ERRORS) {
      char one[64];
      int n = snprintf(one, sizeof one, "f.sim:1:1: error: error %d\n    x\n    ^\n", i);
      unit_text_append(&expected, one, (size_t)n);
    }
    assert_int_equal(diag.errors, i);
  }
  assert_int_equal(DIAG_MAX_ERRORS, 20);
  assert_text_equal(unit_text(&out), unit_text(&expected));
  /* silent counting without a writer */
  Diag quiet = {NULL, NULL, 0};
  diag_error(&quiet, s, 1, 1, "hidden");
  assert_int_equal(quiet.errors, 1);
  source_free(s);
  unit_text_free(&out);
  unit_text_free(&expected);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_source_from_memory),
      cmocka_unit_test(test_source_read_missing),
      cmocka_unit_test(test_source_lines),
      cmocka_unit_test(test_source_line_zero),
      cmocka_unit_test(test_source_crlf),
      cmocka_unit_test(test_lines_of_sim_files_only),
      cmocka_unit_test(test_three_lines),
      cmocka_unit_test(test_format_arguments),
      cmocka_unit_test(test_tabs),
      cmocka_unit_test(test_utf8_before_caret),
      cmocka_unit_test(test_control_bytes),
      cmocka_unit_test(test_long_line_window),
      cmocka_unit_test(test_long_line_window_utf8),
      cmocka_unit_test(test_error_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
