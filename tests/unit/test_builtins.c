/* vm/interp/builtins.c: every native builtin, called from small programs; exact
 * results and exact runtime-error messages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"
#include "builtins.h"

/* `main = say(EXPR)` in a fresh VM prints exactly `expected` and a newline. */
static void check_says(const char *expr, const char *expected, const char *file, int line) {
  UnitVM *u = unit_vm_new();
  if (!u) _fail(file, line);
  char source[512], want[512];
  snprintf(source, sizeof source, "main = say(%s)\n", expr);
  snprintf(want, sizeof want, "%s\n", expected);
  unit_assert_runs_with_output(u, source, want, file, line);
  unit_vm_free(u);
}
#define assert_says(expr, expected) check_says((expr), (expected), __FILE__, __LINE__)

/* `main = { say(EXPR) }` fails at line 2 of main with runtime error `message`. */
static void check_fails(const char *expr, const char *message, const char *file, int line) {
  UnitVM *u = unit_vm_new();
  if (!u) _fail(file, line);
  char source[512], want[1024];
  snprintf(source, sizeof source, "main = {\n  say(%s)\n}\n", expr);
  snprintf(want, sizeof want,
           "test.sim:2: runtime error: %s\n"
           "  in thread main at simulated time 0ns\n"
           "  at test.sim:2 in main\n",
           message);
  unit_assert_run_fails(u, source, SIM_FAILED, want, file, line);
  unit_assert_text(unit_text(&u->out), "", "say output", file, line);
  unit_vm_free(u);
}
#define assert_fails_with(expr, message) check_fails((expr), (message), __FILE__, __LINE__)

static void test_show(void **state) {
  (void)state;
  assert_says("show([1, \"a\", some(2), none, #{x: 1}])", "[1, \"a\", some(2), none, #{x: 1}]");
  assert_says("show(\"top\")", "top");
  assert_says("show(1500us)", "1500us");
  assert_says("length(show(12345))", "5");
  assert_says("show([\"a\\\"b\"])", "[\"a\\\"b\"]");
}

static void test_length(void **state) {
  (void)state;
  assert_says("length([1, 2, 3])", "3");
  assert_says("length([])", "0");
  assert_says("length(\"h\xc3\xa9llo\")", "6"); /* bytes, not characters */
  assert_says("length(\"\")", "0");
  assert_says("length(#{a: 1, b: 2})", "2");
  assert_says("length(#{})", "0");
  assert_fails_with("length(1)", "length needs a list, string or record, not int");
  assert_fails_with("length(none)", "length needs a list, string or record, not none");
}

static void test_cons_head_tail(void **state) {
  (void)state;
  assert_says("cons(1, [2])", "[1, 2]");
  assert_says("cons([], [])", "[[]]");
  assert_says("head([7, 8])", "7");
  assert_says("tail([7, 8])", "[8]");
  assert_says("tail([7])", "[]");
  assert_fails_with("cons(1, 2)", "cons needs a list as its second argument, not int");
  assert_fails_with("head([])", "head of an empty list");
  assert_fails_with("head(1)", "head needs a list, not int");
  assert_fails_with("tail([])", "tail of an empty list");
  assert_fails_with("tail(\"x\")", "tail needs a list, not string");
}

static void test_is_empty(void **state) {
  (void)state;
  assert_says("isEmpty([])", "true");
  assert_says("isEmpty([1])", "false");
  assert_says("isEmpty(\"\")", "true");
  assert_says("isEmpty(\"a\")", "false");
  assert_fails_with("isEmpty(1)", "isEmpty needs a list or string, not int");
  assert_fails_with("isEmpty(#{})", "isEmpty needs a list or string, not record");
}

static void test_nth(void **state) {
  (void)state;
  assert_says("nth([1, 2, 3], 0)", "1");
  assert_says("nth([1, 2, 3], 2)", "3");
  assert_fails_with("nth([1, 2], 2)", "list index 2 out of range (length 2)");
  assert_fails_with("nth([1, 2], -1)", "list index -1 out of range (length 2)");
  assert_fails_with("nth([], 0)", "list index 0 out of range (length 0)");
  assert_fails_with("nth(1, 0)", "nth needs a list, not int");
  assert_fails_with("nth([1], \"a\")", "nth needs an int index, not string");
  assert_fails_with("nth([1], 0.0)", "nth needs an int index, not float");
}

static void test_options(void **state) {
  (void)state;
  assert_says("some(1)", "some(1)");
  assert_says("some(some(\"x\"))", "some(some(\"x\"))");
  assert_says("isSome(some(1))", "true");
  assert_says("isSome(none)", "false");
  assert_says("isSome(1)", "false");
  assert_says("isNone(none)", "true");
  assert_says("isNone(some(none))", "false");
  assert_says("isNone(1)", "false");
  assert_says("fromSome(some(5))", "5");
  assert_says("fromSome(some(none))", "none");
  assert_fails_with("fromSome(none)", "fromSome needs some(x), not none");
  assert_fails_with("fromSome(3)", "fromSome needs some(x), not int");
}

static void test_fields(void **state) {
  (void)state;
  assert_says("setField(#{a: 1}, \"b\", 2)", "#{a: 1, b: 2}");
  assert_says("setField(#{a: 1, b: 2}, \"a\", 9)", "#{a: 9, b: 2}");
  assert_says("setField(#{}, \"z\", [1])", "#{z: [1]}");
  assert_says("hasField(#{a: 1}, \"a\")", "true");
  assert_says("hasField(#{a: 1}, \"z\")", "false");
  assert_says("hasField(#{}, \"a\")", "false");
  assert_fails_with("setField(1, \"a\", 2)", "setField needs a record, not int");
  assert_fails_with("setField(#{a: 1}, 1, 2)", "setField needs a field name string, not int");
  assert_fails_with("hasField([], \"a\")", "hasField needs a record, not list");
  assert_fails_with("hasField(#{a: 1}, 2)", "hasField needs a field name string, not int");
}

/* setField copies: the original record is unchanged. */
static void test_set_field_copies(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  let r = #{a: 1}\n"
                          "  let s = setField(r, \"a\", 2)\n"
                          "  say(r)\n"
                          "  say(s)\n"
                          "}\n",
                          "#{a: 1}\n#{a: 2}\n");
}

/* Records made by adding fields share storage with the record they grew
 * from; each still reads as its own value, whichever grows next. */
static void test_set_field_shares_storage(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn build(r, i, n) = if i == n then r else build(setField(r, \"f\" ++ show(i), i), i + 1, n)\n"
                          "main = {\n"
                          "  let r = build(#{a: 0}, 0, 20)\n"
                          "  let x = setField(r, \"x\", 1)\n"  /* written after r's fields */
                          "  let y = setField(r, \"y\", 2)\n"  /* r is no longer the last: a copy */
                          "  let z = setField(x, \"f3\", 30)\n" /* an update: a copy */
                          "  say([hasField(r, \"x\"), hasField(x, \"x\"), hasField(x, \"y\"), hasField(y, \"y\"), hasField(y, \"x\")])\n"
                          "  say([r.f19, x.x, y.y, z.f3, x.f3])\n"
                          "  say([setField(r, \"x\", 1) == x, x == y, z == x])\n"
                          "  let a = setField(setField(#{a: 1}, \"b\", 2), \"c\", 3)\n"
                          "  let b = setField(a, \"d\", 4)\n"
                          "  let c = setField(a, \"e\", 5)\n"
                          "  say([a, b, c])\n"
                          "}\n",
                          "[false, true, false, true, false]\n[19, 1, 2, 30, 3]\n[true, false, false]\n"
                          "[#{a: 1, b: 2, c: 3}, #{a: 1, b: 2, c: 3, d: 4}, #{a: 1, b: 2, c: 3, e: 5}]\n");
}

/* The work (instructions, and the work inside them) of the program
 * `format` gives with n put in. */
static uint64_t work_of(const char *format, int n) {
  UnitVM *u = unit_vm_new();
  char program[300];
  snprintf(program, sizeof program, format, n);
  assert_status(unit_run(u, program), SIM_OK, u);
  uint64_t work = vm_steps(u->vm) + u->vm->work;
  unit_vm_free(u);
  return work;
}

/* Amortised linear: 4x the input (`what`) costs at most 5x the work. */
static void assert_linear(const char *what, const char *format) {
  uint64_t small = work_of(format, 1000), large = work_of(format, 4000);
  if (large > 5 * small) {
    print_error("4x the %s took %.1fx the work (%llu, %llu)\n", what, (double)large / (double)small,
                (unsigned long long)small, (unsigned long long)large);
    fail();
  }
}

/* setField adding a field copied the whole record each time: building n
 * fields cost n^2 / 2 (16x the fields, 436x the time). */
static void test_set_field_linear(void **state) {
  (void)state;
  assert_linear("fields", "fn build(r, i, n) = if i == n then r else build(setField(r, \"f\" ++ show(i), i), i + 1, n)\n"
                          "main = {\n  let r = build(#{}, 0, %d)\n  say(hasField(r, \"f7\"))\n}\n");
}

/* A string made by ++ shares its left operand's storage when that ends it
 * (vm/value/object.h): the older string, whose terminator the append wrote
 * over, still reads as itself wherever it goes: said, parsed, a label, an
 * error's message, a field name. */
static void test_concat_shares_storage(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn boom(p) = error(p)\n"
                          "main = {\n"
                          "  let p = \"0000000000000000000000000000000000000000000000000000000000000000\" ++ \"12\"\n"
                          "  let q = p ++ \"x\"\n" /* written after p */
                          "  let r = p ++ \"y\"\n" /* p no longer ends it: a copy */
                          "  say([p, q, r])\n"
                          "  say(toInt(p) + 1)\n"
                          "  m <- newMVar(1)\n"
                          "  labelMVar(m, p)\n"
                          "  say(show(m) == \"<mvar \" ++ p ++ \">\")\n"
                          "  e <- try(return 1 >>= fn(x) => return boom(p))\n"
                          "  say(show(e.exception) == \"ErrorCall(\" ++ p ++ \")\")\n"
                          "  say(setField(#{}, p, 1) == setField(#{}, \"0000000000000000000000000000000000000000000000000000000000000000\" ++ \"12\", 1))\n"
                          "}\n",
                          "[\"000000000000000000000000000000000000000000000000000000000000000012\", "
                          "\"000000000000000000000000000000000000000000000000000000000000000012x\", "
                          "\"000000000000000000000000000000000000000000000000000000000000000012y\"]\n"
                          "13\ntrue\ntrue\ntrue\n");
}

/* s ++ t copied s every time: n appends cost n^2 / 2 bytes (201x the time
 * for 16x the pieces). */
static void test_concat_linear(void **state) {
  (void)state;
  assert_linear("appends", "fn grow(s, i, n) = if i == n then s else grow(s ++ \"piece \", i + 1, n)\n"
                           "main = {\n  let s = grow(\"\", 0, %d)\n  say(length(s))\n}\n");
}

static void test_to_int(void **state) {
  (void)state;
  assert_says("toInt(3)", "3");
  assert_says("toInt(-3)", "-3");
  assert_says("toInt(1500us)", "1500000");
  assert_says("toInt(2.9)", "2");
  assert_says("toInt(-2.9)", "-2");
  assert_says("toInt(-9223372036854775808.0)", "-9223372036854775808");
  assert_says("toInt(\"42\")", "42");
  assert_says("toInt(\"-7\")", "-7");
  assert_says("toInt(\" +7\")", "7");
  assert_says("toInt(\"9223372036854775807\")", "9223372036854775807");
  assert_fails_with("toInt(1e300)", "toInt: 1e+300 does not fit in 64 bits");
  assert_fails_with("toInt(9223372036854775807.0)", "toInt: 9.223372036854776e+18 does not fit in 64 bits");
  assert_fails_with("toInt(0.0 / 0.0)", "toInt: nan does not fit in 64 bits");
  assert_fails_with("toInt(\"\")", "toInt: \"\" is not an integer");
  assert_fails_with("toInt(\"12x\")", "toInt: \"12x\" is not an integer");
  assert_fails_with("toInt(\"0x10\")", "toInt: \"0x10\" is not an integer");
  assert_fails_with("toInt(\"99999999999999999999\")", "toInt: \"99999999999999999999\" does not fit in 64 bits");
  assert_fails_with("toInt(true)", "toInt cannot convert bool");
  assert_fails_with("toInt([])", "toInt cannot convert list");
  assert_fails_with("toInt(none)", "toInt cannot convert none");
}

static void test_to_float(void **state) {
  (void)state;
  assert_says("toFloat(3)", "3.0");
  assert_says("toFloat(2.5)", "2.5");
  assert_says("toFloat(\"1.25\")", "1.25");
  assert_says("toFloat(\"1e3\")", "1000.0");
  assert_says("toFloat(\"-2\")", "-2.0");
  assert_fails_with("toFloat(\"\")", "toFloat: \"\" is not a number");
  assert_fails_with("toFloat(\"abc\")", "toFloat: \"abc\" is not a number");
  assert_fails_with("toFloat(\"1.5 \")", "toFloat: \"1.5 \" is not a number");
  assert_fails_with("toFloat(1ms)", "toFloat cannot convert duration");
  assert_fails_with("toFloat(none)", "toFloat cannot convert none");
  assert_fails_with("toFloat([1])", "toFloat cannot convert list");
}

static void test_nanoseconds_abs(void **state) {
  (void)state;
  assert_says("nanoseconds(2ms)", "2000000");
  assert_says("nanoseconds(0ns)", "0");
  assert_fails_with("nanoseconds(5)", "nanoseconds needs a duration, not int");
  assert_says("abs(-3)", "3");
  assert_says("abs(4)", "4");
  assert_says("abs(-2.5)", "2.5");
  assert_says("abs(-5ms)", "5ms");
  assert_says("abs(-9223372036854775807)", "9223372036854775807");
  assert_fails_with("abs(\"x\")", "abs needs a number or duration, not string");
  assert_fails_with("abs(-9223372036854775807 - 1)", "integer overflow in abs");
  assert_fails_with("abs(-9223372036854775807ns - 1ns)", "duration overflow in abs");
}

static void test_min_max(void **state) {
  (void)state;
  assert_says("min(3, 2)", "2");
  assert_says("max(3, 2)", "3");
  assert_says("min(\"b\", \"a\")", "a");
  assert_says("max(1ms, 2ms)", "2ms");
  assert_says("min(2.0, 2)", "2.0"); /* equal: the first */
  assert_says("max(2, 2.0)", "2");
  assert_says("max(1, 1.5)", "1.5");
  assert_fails_with("min(1, \"a\")", "min cannot compare int and string");
  assert_fails_with("max([], 1)", "max cannot compare list and int");
}

static void test_args(void **state) {
  (void)state;
  assert_says("args()", "[]");
  VMConfig config;
  vm_config_init(&config);
  const char *argv[] = {"A", "b c", ""};
  config.argv = argv;
  config.argc = 3;
  UnitVM *u = unit_vm_new_with(&config);
  assert_non_null(u);
  assert_runs_with_output(u, "main = say(args())\n", "[\"A\", \"b c\", \"\"]\n");
  unit_vm_free(u);
}

static void test_error(void **state) {
  (void)state;
  assert_fails_with("error(\"boom\")", "boom");
  assert_fails_with("error([1, \"a\"])", "[1, \"a\"]");
  assert_fails_with("error(\"\")", "");
}

static void test_type_of(void **state) {
  (void)state;
  assert_says("typeOf(1)", "int");
  assert_says("typeOf(1.5)", "float");
  assert_says("typeOf(\"s\")", "string");
  assert_says("typeOf([])", "list");
  assert_says("typeOf([1])", "list");
  assert_says("typeOf(none)", "none");
  assert_says("typeOf(some(1))", "some");
  assert_says("typeOf(#{a: 1})", "record");
  assert_says("typeOf(1ms)", "duration");
  assert_says("typeOf(true)", "bool");
  assert_says("typeOf(fn(x) => x)", "function");
}

static void test_join(void **state) {
  (void)state;
  assert_says("join(\", \", [\"a\", \"b\", \"c\"])", "a, b, c");
  assert_says("length(join(\", \", []))", "0");
  assert_says("join(\"-\", [\"x\"])", "x");
  assert_says("join(\"\", [\"a\", \"\", \"b\"])", "ab");
  assert_fails_with("join(1, [])", "join needs a separator string, not int");
  assert_fails_with("join(\",\", 1)", "join needs a list of strings, not int");
  assert_fails_with("join(\",\", [\"a\", 2])", "join needs a list of strings, but it holds int");
}

static void test_exception_kind_and_message(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn h(e) = say(exceptionKind(e) ++ \" | \" ++ exceptionMessage(e))\n"
                          "main = {\n"
                          "  catch({ say(1 / 0) }, h)\n"
                          "  catch({ say(error(\"boom\")) }, h)\n"
                          "  catch({ say(error(#{n: 1})) }, h)\n"
                          "  catch(throw(#{kind: \"Custom\", n: 1}), h)\n"
                          "  catch(throw(#{kind: 5}), h)\n"
                          "  catch(throw(\"plain\"), h)\n"
                          "  catch(throw([1, \"a\"]), h)\n"
                          "  catch(throw(some(2)), h)\n"
                          "  timeout(1ms, catch(delay(1s), h))\n"
                          "  m <- newEmptyMVar()\n"
                          "  t <- fork(catch(delay(1s), fn(e) => putMVar(m, exceptionKind(e) ++ \" | \" ++ exceptionMessage(e))))\n"
                          "  yield()\n"
                          "  kill(t)\n"
                          "  r <- takeMVar(m)\n"
                          "  say(r)\n"
                          "  say(exceptionKind(42))\n"
                          "  say(exceptionMessage(42))\n"
                          "  say(exceptionMessage(\"s\"))\n"
                          "}\n",
                          "ErrorCall | division by zero\n"
                          "ErrorCall | boom\n"
                          "ErrorCall | #{n: 1}\n"
                          "Custom | #{kind: \"Custom\", n: 1}\n"
                          "record | #{kind: 5}\n"
                          "string | plain\n"
                          "list | [1, \"a\"]\n"
                          "some | some(2)\n"
                          "Timeout | Timeout\n"
                          "ThreadKilled | ThreadKilled\n"
                          "int\n"
                          "42\n"
                          "s\n");
}

/* The table: every native is found by name with its arity. */
static void test_builtin_find(void **state) {
  (void)state;
  const Builtin *b = builtin_find("setField");
  assert_non_null(b);
  assert_string_equal(b->name, "setField");
  assert_int_equal(b->arity, 3);
  assert_non_null(b->native);
  assert_int_equal(b->op, -1);
  b = builtin_find("delay");
  assert_non_null(b);
  assert_int_equal(b->arity, 1);
  assert_null(b->native);
  assert_int_equal(b->op, OP_DELAY);
  assert_null(builtin_find("nosuch"));
  assert_null(builtin_find(""));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_show),
      cmocka_unit_test(test_length),
      cmocka_unit_test(test_cons_head_tail),
      cmocka_unit_test(test_is_empty),
      cmocka_unit_test(test_nth),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_fields),
      cmocka_unit_test_setup_teardown(test_set_field_copies, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_set_field_shares_storage, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_set_field_linear),
      cmocka_unit_test_setup_teardown(test_concat_shares_storage, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_concat_linear),
      cmocka_unit_test(test_to_int),
      cmocka_unit_test(test_to_float),
      cmocka_unit_test(test_nanoseconds_abs),
      cmocka_unit_test(test_min_max),
      cmocka_unit_test(test_args),
      cmocka_unit_test(test_error),
      cmocka_unit_test(test_type_of),
      cmocka_unit_test(test_join),
      cmocka_unit_test_setup_teardown(test_exception_kind_and_message, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_builtin_find),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
