/* vm/value/value.c: value_equal, value_compare, value_type_name, value_show and
 * duration_show, on values built directly with the object constructors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "unit.h"
#include "builtins.h"
#include "show.h"

/* A fresh VM with the collector paused: the values built here are not rooted. */
static int setup(void **state) {
  if (unit_setup_vm(state) != 0) return -1;
  ((UnitVM *)*state)->vm->gc_paused++;
  return 0;
}
static int teardown(void **state) { return unit_teardown_vm(state); }

static VM *vm_of(void **state) { return ((UnitVM *)*state)->vm; }

static Value str(VM *vm, const char *s) { return OBJ_VAL(obj_cstring(vm, s)); }

/* A list of `n` values. */
static Value list_of(VM *vm, int n, const Value *items) {
  Value list = NIL_VAL;
  for (int i = n - 1; i >= 0; i--) list = OBJ_VAL(obj_cons(vm, items[i], list));
  return list;
}
#define LIST(vm, ...) list_of((vm), (int)(sizeof((Value[]){__VA_ARGS__}) / sizeof(Value)), (Value[]){__VA_ARGS__})

/* A record from alternating names and values. */
static Value record_of(VM *vm, int n, const char *const *names, const Value *values) {
  ObjRecord *r = obj_record(vm, n);
  for (int i = 0; i < n; i++) {
    r->fields[i].name = obj_cstring(vm, names[i]);
    r->fields[i].value = values[i];
  }
  return OBJ_VAL(r);
}

static Value some_of(VM *vm, Value v) { return OBJ_VAL(obj_some(vm, v)); }

static void check_shows(Value v, bool quote, const char *expected, const char *file, int line) {
  Buffer buf;
  buf_init(&buf);
  value_show(&buf, v, quote);
  char actual[1024];
  snprintf(actual, sizeof actual, "%s", buf.data ? buf.data : "");
  size_t length = buf.length;
  buf_free(&buf);
  unit_assert_text(actual, expected, "value_show", file, line);
  if (length != strlen(expected)) {
    print_error("buffer length %zu, expected %zu\n", length, strlen(expected));
    _fail(file, line);
  }
}
/* show(v) as the language prints it (strings raw at top level) */
#define assert_shows(v, expected) check_shows((v), false, (expected), __FILE__, __LINE__)
/* the quoted form used inside lists, records and some */
#define assert_shows_quoted(v, expected) check_shows((v), true, (expected), __FILE__, __LINE__)

static void check_duration(int64_t ns, const char *expected, const char *file, int line) {
  Buffer buf;
  buf_init(&buf);
  duration_show(&buf, ns);
  char actual[64];
  snprintf(actual, sizeof actual, "%s", buf.data ? buf.data : "");
  buf_free(&buf);
  unit_assert_text(actual, expected, "duration_show", file, line);
}
#define assert_duration_shows(ns, expected) check_duration((ns), (expected), __FILE__, __LINE__)

/* ---- equality ---- */

static void test_equal_scalars(void **state) {
  (void)state;
  assert_true(value_equal(UNIT_VAL, UNIT_VAL));
  assert_true(value_equal(NIL_VAL, NIL_VAL));
  assert_true(value_equal(NONE_VAL, NONE_VAL));
  assert_false(value_equal(NONE_VAL, NIL_VAL));
  assert_false(value_equal(UNIT_VAL, NONE_VAL));
  assert_true(value_equal(BOOL_VAL(true), BOOL_VAL(true)));
  assert_false(value_equal(BOOL_VAL(true), BOOL_VAL(false)));
  assert_true(value_equal(INT_VAL(-5), INT_VAL(-5)));
  assert_false(value_equal(INT_VAL(5), INT_VAL(6)));
  assert_true(value_equal(FLOAT_VAL(0.5), FLOAT_VAL(0.5)));
  assert_true(value_equal(FLOAT_VAL(0.0), FLOAT_VAL(-0.0)));
  assert_true(value_equal(DURATION_VAL(1000), DURATION_VAL(1000)));
  /* a duration is never an int, whatever the bits */
  assert_false(value_equal(DURATION_VAL(1000), INT_VAL(1000)));
  assert_false(value_equal(INT_VAL(0), BOOL_VAL(false)));
  assert_false(value_equal(INT_VAL(0), UNIT_VAL));
}

/* value.h: numbers by value, 1 == 1.0 as with <= ... */
static void test_equal_int_float_by_value(void **state) {
  (void)state;
  assert_true(value_equal(INT_VAL(1), FLOAT_VAL(1.0)));
  assert_true(value_equal(FLOAT_VAL(-3.0), INT_VAL(-3)));
  assert_false(value_equal(INT_VAL(1), FLOAT_VAL(1.5)));
  assert_false(value_equal(DURATION_VAL(1), FLOAT_VAL(1.0)));
}

/* ... by value exactly: a float that only rounds to the int is not equal. */
static void test_equal_int_float_exact(void **state) {
  (void)state;
  /* 2^53 + 1 is not 2^53; 2^63 - 1 is not 2^63 */
  assert_false(value_equal(INT_VAL(9007199254740993LL), FLOAT_VAL(9007199254740992.0)));
  assert_false(value_equal(INT_VAL(INT64_MAX), FLOAT_VAL(9223372036854775808.0)));
  assert_true(value_equal(INT_VAL(9007199254740992LL), FLOAT_VAL(9007199254740992.0)));
}

/* NaN equals nothing, an int included. */
static void test_equal_nan(void **state) {
  (void)state;
  assert_false(value_equal(FLOAT_VAL(NAN), FLOAT_VAL(NAN)));
  assert_false(value_equal(FLOAT_VAL(NAN), FLOAT_VAL(1.0)));
  assert_false(value_equal(INT_VAL(1), FLOAT_VAL(NAN)));
  assert_false(value_equal(FLOAT_VAL(NAN), INT_VAL(0)));
}

static void test_equal_strings(void **state) {
  VM *vm = vm_of(state);
  assert_true(value_equal(str(vm, "abc"), str(vm, "abc")));
  assert_false(value_equal(str(vm, "abc"), str(vm, "abd")));
  assert_false(value_equal(str(vm, "abc"), str(vm, "ab")));
  assert_true(value_equal(str(vm, ""), str(vm, "")));
  assert_false(value_equal(str(vm, "1"), INT_VAL(1)));
  /* the work counted: the pair and the bytes of the first, equal or not,
   * alone (value_equal_counted's shortcut) as inside a list */
  uint64_t visited = 0;
  assert_false(value_equal_counted(NULL, str(vm, "abcd"), str(vm, "ab"), &visited));
  assert_int_equal(visited, 5);
  assert_true(value_equal_counted(NULL, str(vm, "abc"), str(vm, "abc"), &visited));
  assert_int_equal(visited, 4);
  assert_true(value_equal_counted(NULL, LIST(vm, str(vm, "abc")), LIST(vm, str(vm, "abc")), &visited));
  assert_int_equal(visited, 6); /* the cells, the strings (1 + 3), the ends */
}

static void test_equal_lists(void **state) {
  VM *vm = vm_of(state);
  Value a = LIST(vm, INT_VAL(1), str(vm, "two"), DURATION_VAL(3));
  Value b = LIST(vm, INT_VAL(1), str(vm, "two"), DURATION_VAL(3));
  assert_ptr_not_equal(AS_OBJ(a), AS_OBJ(b));
  assert_true(value_equal(a, b));
  assert_true(value_equal(a, a));
  /* a prefix is not equal, in either order */
  Value prefix = LIST(vm, INT_VAL(1), str(vm, "two"));
  assert_false(value_equal(a, prefix));
  assert_false(value_equal(prefix, a));
  assert_false(value_equal(a, NIL_VAL));
  assert_false(value_equal(NIL_VAL, a));
  /* one element differs */
  assert_false(value_equal(a, LIST(vm, INT_VAL(1), str(vm, "two"), DURATION_VAL(4))));
  assert_false(value_equal(a, LIST(vm, INT_VAL(0), str(vm, "two"), DURATION_VAL(3))));
  /* nested lists, element-wise */
  Value n1 = LIST(vm, LIST(vm, INT_VAL(1)), NIL_VAL, LIST(vm, LIST(vm, BOOL_VAL(true))));
  Value n2 = LIST(vm, LIST(vm, INT_VAL(1)), NIL_VAL, LIST(vm, LIST(vm, BOOL_VAL(true))));
  Value n3 = LIST(vm, LIST(vm, INT_VAL(1)), NIL_VAL, LIST(vm, LIST(vm, BOOL_VAL(false))));
  assert_true(value_equal(n1, n2));
  assert_false(value_equal(n1, n3));
  /* a list is not a string or a record */
  assert_false(value_equal(LIST(vm, str(vm, "a")), str(vm, "a")));
}

/* Long lists compare without deep recursion. */
static void test_equal_long_lists(void **state) {
  VM *vm = vm_of(state);
  enum { N = 500000 };
  Value a = NIL_VAL, b = NIL_VAL, c = NIL_VAL;
  for (int i = 0; i < N; i++) {
    a = OBJ_VAL(obj_cons(vm, INT_VAL(i), a));
    b = OBJ_VAL(obj_cons(vm, INT_VAL(i), b));
    c = OBJ_VAL(obj_cons(vm, INT_VAL(i == 0 ? -1 : i), c)); /* differs at the very end */
  }
  assert_true(value_equal(a, b));
  assert_false(value_equal(a, c));
}

static void test_equal_records(void **state) {
  VM *vm = vm_of(state);
  static const char *xy[] = {"x", "y"}, *yx[] = {"y", "x"}, *xz[] = {"x", "z"}, *x[] = {"x"};
  Value r1 = record_of(vm, 2, xy, (Value[]){INT_VAL(1), str(vm, "a")});
  Value r2 = record_of(vm, 2, xy, (Value[]){INT_VAL(1), str(vm, "a")});
  assert_true(value_equal(r1, r2));
  assert_false(value_equal(r1, record_of(vm, 2, xy, (Value[]){INT_VAL(1), str(vm, "b")})));
  assert_false(value_equal(r1, record_of(vm, 2, xz, (Value[]){INT_VAL(1), str(vm, "a")})));
  Value only_x = record_of(vm, 1, x, (Value[]){INT_VAL(1)});
  assert_false(value_equal(r1, only_x));
  assert_false(value_equal(only_x, r1));
  assert_true(value_equal(record_of(vm, 0, NULL, NULL), record_of(vm, 0, NULL, NULL)));
  /* value.h: records compare by their set of fields */
  assert_true(value_equal(r1, record_of(vm, 2, yx, (Value[]){str(vm, "a"), INT_VAL(1)})));
  assert_false(value_equal(r1, record_of(vm, 2, yx, (Value[]){INT_VAL(1), str(vm, "a")})));
  /* fields compare structurally */
  Value deep1 = record_of(vm, 1, x, (Value[]){LIST(vm, some_of(vm, INT_VAL(2)))});
  Value deep2 = record_of(vm, 1, x, (Value[]){LIST(vm, some_of(vm, INT_VAL(2)))});
  assert_true(value_equal(deep1, deep2));
  assert_false(value_equal(r1, LIST(vm, INT_VAL(1), str(vm, "a"))));
}

static void test_equal_some(void **state) {
  VM *vm = vm_of(state);
  assert_true(value_equal(some_of(vm, INT_VAL(1)), some_of(vm, INT_VAL(1))));
  assert_false(value_equal(some_of(vm, INT_VAL(1)), some_of(vm, INT_VAL(2))));
  assert_false(value_equal(some_of(vm, NONE_VAL), NONE_VAL));
  assert_false(value_equal(NONE_VAL, some_of(vm, NONE_VAL)));
  assert_false(value_equal(some_of(vm, INT_VAL(1)), INT_VAL(1)));
  assert_true(value_equal(some_of(vm, some_of(vm, LIST(vm, str(vm, "x")))),
                          some_of(vm, some_of(vm, LIST(vm, str(vm, "x"))))));
  assert_false(value_equal(some_of(vm, some_of(vm, UNIT_VAL)), some_of(vm, UNIT_VAL)));
}

/* Functions, actions and threads compare by identity. */
static void test_equal_by_identity(void **state) {
  VM *vm = vm_of(state);
  ObjProto *proto = obj_proto(vm, PROTO_FUNCTION, "<unit>", 1);
  Value c1 = OBJ_VAL(obj_closure(vm, proto, 0)), c2 = OBJ_VAL(obj_closure(vm, proto, 0));
  assert_true(value_equal(c1, c1));
  assert_false(value_equal(c1, c2));
  Value args[] = {DURATION_VAL(1000)};
  Value a1 = OBJ_VAL(obj_action(vm, BUILTIN_delay, 1, args)), a2 = OBJ_VAL(obj_action(vm, BUILTIN_delay, 1, args));
  assert_true(value_equal(a1, a1));
  assert_false(value_equal(a1, a2));
}

/* ---- ordering ---- */

static void check_order(Value a, Value b, int expected, const char *file, int line) {
  int order = 99;
  if (!value_compare(a, b, &order)) {
    print_error("value_compare said the values cannot be ordered\n");
    _fail(file, line);
  }
  _assert_int_equal((LargestIntegralType)(order + 1), (LargestIntegralType)(expected + 1), file, line);
}
#define assert_order(a, b, expected) check_order((a), (b), (expected), __FILE__, __LINE__)

static void test_compare(void **state) {
  VM *vm = vm_of(state);
  assert_order(INT_VAL(1), INT_VAL(2), -1);
  assert_order(INT_VAL(2), INT_VAL(2), 0);
  assert_order(INT_VAL(INT64_MAX), INT_VAL(INT64_MIN), 1);
  assert_order(INT_VAL(1), FLOAT_VAL(1.5), -1);
  assert_order(FLOAT_VAL(2.0), INT_VAL(2), 0);
  assert_order(FLOAT_VAL(-0.5), FLOAT_VAL(-1.0), 1);
  assert_order(DURATION_VAL(1000), DURATION_VAL(999), 1);
  assert_order(str(vm, "a"), str(vm, "b"), -1);
  assert_order(str(vm, "ab"), str(vm, "a"), 1);
  assert_order(str(vm, ""), str(vm, "a"), -1);
  assert_order(str(vm, "B"), str(vm, "a"), -1); /* bytewise */
  assert_order(str(vm, "abc"), str(vm, "abc"), 0);
  assert_order(OBJ_VAL(obj_string(vm, "a\0b", 3)), OBJ_VAL(obj_string(vm, "a\0a", 3)), 1);
  assert_order(str(vm, "\xc3\xa9"), str(vm, "z"), 1); /* bytes are unsigned */

  int order;
  assert_false(value_compare(DURATION_VAL(1), INT_VAL(1), &order));
  assert_false(value_compare(INT_VAL(1), str(vm, "1"), &order));
  assert_false(value_compare(LIST(vm, INT_VAL(1)), LIST(vm, INT_VAL(1)), &order));
  assert_false(value_compare(BOOL_VAL(false), BOOL_VAL(true), &order));
  assert_false(value_compare(UNIT_VAL, UNIT_VAL, &order));
  assert_false(value_compare(NONE_VAL, NONE_VAL, &order));
}

/* NaN is not ordered: it must never come out "equal" to a number. */
static void test_compare_nan(void **state) {
  (void)state;
  int order = 99;
  bool ok = value_compare(FLOAT_VAL(NAN), FLOAT_VAL(1.0), &order);
  assert_false(ok && order == 0);
  order = 99;
  ok = value_compare(INT_VAL(1), FLOAT_VAL(NAN), &order);
  assert_false(ok && order == 0);
}

/* ---- type names ---- */

static void test_type_names(void **state) {
  VM *vm = vm_of(state);
  assert_string_equal(value_type_name(UNIT_VAL), "unit");
  assert_string_equal(value_type_name(BOOL_VAL(true)), "bool");
  assert_string_equal(value_type_name(INT_VAL(1)), "int");
  assert_string_equal(value_type_name(FLOAT_VAL(1)), "float");
  assert_string_equal(value_type_name(DURATION_VAL(1)), "duration");
  assert_string_equal(value_type_name(NIL_VAL), "list");
  assert_string_equal(value_type_name(LIST(vm, INT_VAL(1))), "list");
  assert_string_equal(value_type_name(NONE_VAL), "none");
  assert_string_equal(value_type_name(str(vm, "s")), "string");
  assert_string_equal(value_type_name(record_of(vm, 0, NULL, NULL)), "record");
  assert_string_equal(value_type_name(some_of(vm, UNIT_VAL)), "some");
  ObjProto *fn = obj_proto(vm, PROTO_FUNCTION, "<unit>", 1);
  ObjProto *block = obj_proto(vm, PROTO_BLOCK, "<unit>", 1);
  assert_string_equal(value_type_name(OBJ_VAL(obj_closure(vm, fn, 0))), "function");
  assert_string_equal(value_type_name(OBJ_VAL(obj_closure(vm, block, 0))), "action");
  assert_string_equal(value_type_name(OBJ_VAL(obj_builtin(vm, builtin_find("show")))), "function");
  assert_string_equal(value_type_name(OBJ_VAL(obj_action(vm, BUILTIN_yield, 0, NULL))), "action");
  assert_string_equal(value_type_name(OBJ_VAL(obj_exception(vm, EXC_KILLED, NULL))), "exception");
  ObjThread *t = thread_new(vm, NULL, UNIT_VAL);
  assert_string_equal(value_type_name(OBJ_VAL(t)), "thread");
}

/* ---- show ---- */

static void test_show_durations(void **state) {
  (void)state;
  assert_duration_shows(1500000, "1500us");
  assert_duration_shows(2000000, "2ms");
  assert_duration_shows(0, "0ns");
  assert_duration_shows(1, "1ns");
  assert_duration_shows(1000, "1us");
  assert_duration_shows(1001, "1001ns");
  assert_duration_shows(1000000000, "1s");
  assert_duration_shows(90000000000, "90s");
  assert_duration_shows(1500000000, "1500ms");
  assert_duration_shows(-1000000, "-1ms");
  assert_duration_shows(-1500, "-1500ns");
  assert_duration_shows(INT64_MAX, "9223372036854775807ns");
  assert_duration_shows(INT64_MIN, "-9223372036854775808ns");
  assert_shows(DURATION_VAL(1500000), "1500us");
  assert_shows_quoted(DURATION_VAL(0), "0ns");
}

static void test_show_floats(void **state) {
  (void)state;
  assert_shows(FLOAT_VAL(2.0), "2.0");
  assert_shows(FLOAT_VAL(0.1), "0.1");
  assert_shows(FLOAT_VAL(0.5), "0.5");
  assert_shows(FLOAT_VAL(-2.5), "-2.5");
  assert_shows(FLOAT_VAL(100.0), "100.0");
  assert_shows(FLOAT_VAL(0.1 + 0.2), "0.30000000000000004");
  assert_shows(FLOAT_VAL(1.0 / 3.0), "0.3333333333333333");
  assert_shows(FLOAT_VAL(1e-7), "1e-07");
  assert_shows(FLOAT_VAL(1e20), "1e+20");
  assert_shows(FLOAT_VAL(123456789.0), "123456789.0");
  assert_shows(FLOAT_VAL(-0.0), "-0.0");
  assert_shows(FLOAT_VAL(INFINITY), "inf");
  assert_shows(FLOAT_VAL(-INFINITY), "-inf");
  assert_shows(FLOAT_VAL(NAN), "nan");
}

static void test_show_scalars(void **state) {
  (void)state;
  assert_shows(UNIT_VAL, "()");
  assert_shows(BOOL_VAL(true), "true");
  assert_shows(BOOL_VAL(false), "false");
  assert_shows(INT_VAL(42), "42");
  assert_shows(INT_VAL(-3), "-3");
  assert_shows(INT_VAL(0), "0");
  assert_shows(INT_VAL(INT64_MIN), "-9223372036854775808");
  assert_shows(NIL_VAL, "[]");
  assert_shows(NONE_VAL, "none");
}

static void test_show_strings(void **state) {
  VM *vm = vm_of(state);
  assert_shows(str(vm, "plain \"text\"\n"), "plain \"text\"\n");
  assert_shows_quoted(str(vm, "plain"), "\"plain\"");
  assert_shows_quoted(str(vm, "q\"b\\n\nt\tr\rz\x01\x7f"), "\"q\\\"b\\\\n\\nt\\tr\\x0dz\\x01\\x7f\"");
  assert_shows_quoted(str(vm, "caf\xc3\xa9"), "\"caf\xc3\xa9\""); /* UTF-8 kept */
  assert_shows_quoted(str(vm, ""), "\"\"");
  assert_shows(str(vm, ""), "");
  char *shown = vm_show(vm, str(vm, ""));
  assert_non_null(shown);
  assert_string_equal(shown, "");
  free(shown);
}

static void test_show_lists(void **state) {
  VM *vm = vm_of(state);
  assert_shows(LIST(vm, INT_VAL(1), str(vm, "a")), "[1, \"a\"]");
  assert_shows(LIST(vm, INT_VAL(1)), "[1]");
  assert_shows(LIST(vm, NIL_VAL, LIST(vm, NIL_VAL)), "[[], [[]]]");
  assert_shows(LIST(vm, FLOAT_VAL(2.0), DURATION_VAL(1500000), NONE_VAL, UNIT_VAL, BOOL_VAL(false)),
               "[2.0, 1500us, none, (), false]");
  /* strings are quoted at every depth below the top */
  assert_shows(LIST(vm, LIST(vm, str(vm, "x\ny"))), "[[\"x\\ny\"]]");
  assert_shows_quoted(LIST(vm, str(vm, "s")), "[\"s\"]");
}

/* value_show_bounded stops soon after the limit, however large the value
 * would be shown: a list sharing its halves 2^50 times over. */
static void test_show_bounded(void **state) {
  VM *vm = vm_of(state);
  Value v = str(vm, "abc");
  for (int i = 0; i < 50; i++) v = LIST(vm, v, v);
  Buffer buf;
  buf_init(&buf);
  assert_false(value_show_bounded(&buf, v, true, 100));
  assert_true(buf.length > 100);
  assert_true(buf.length < 200);
  assert_memory_equal(buf.data, "[[[[", 4);
  buf_free(&buf);
  buf_init(&buf);
  assert_true(value_show_bounded(&buf, LIST(vm, INT_VAL(1), INT_VAL(2)), false, 6));
  assert_string_equal(buf.data, "[1, 2]");
  buf_free(&buf);
  buf_init(&buf);
  assert_false(value_show_bounded(&buf, LIST(vm, INT_VAL(1), INT_VAL(2)), false, 5));
  buf_free(&buf);
}

static void test_show_records_and_some(void **state) {
  VM *vm = vm_of(state);
  static const char *xy[] = {"x", "y"}, *inner[] = {"in"};
  Value r = record_of(vm, 2, xy, (Value[]){INT_VAL(1), str(vm, "a")});
  assert_shows(r, "#{x: 1, y: \"a\"}");
  assert_shows(record_of(vm, 0, NULL, NULL), "#{}");
  Value nested = record_of(vm, 1, inner, (Value[]){LIST(vm, r, some_of(vm, str(vm, "s")))});
  assert_shows(nested, "#{in: [#{x: 1, y: \"a\"}, some(\"s\")]}");
  assert_shows(some_of(vm, INT_VAL(1)), "some(1)");
  assert_shows(some_of(vm, str(vm, "a")), "some(\"a\")");
  assert_shows(some_of(vm, some_of(vm, NONE_VAL)), "some(some(none))");
  assert_shows(some_of(vm, UNIT_VAL), "some(())");
  assert_shows(some_of(vm, LIST(vm, INT_VAL(1), INT_VAL(2))), "some([1, 2])");
}

static void test_show_callables_and_actions(void **state) {
  VM *vm = vm_of(state);
  ObjProto *fib = obj_proto(vm, PROTO_FUNCTION, "<unit>", 1);
  fib->name = obj_cstring(vm, "fib");
  assert_shows(OBJ_VAL(obj_closure(vm, fib, 0)), "<fn fib>");
  ObjProto *lambda = obj_proto(vm, PROTO_FUNCTION, "<unit>", 1);
  lambda->name = obj_cstring(vm, "<lambda>");
  assert_shows(OBJ_VAL(obj_closure(vm, lambda, 0)), "<fn <lambda>>");
  ObjProto *block = obj_proto(vm, PROTO_BLOCK, "<unit>", 1);
  block->name = obj_cstring(vm, "main");
  assert_shows(OBJ_VAL(obj_closure(vm, block, 0)), "<action main>");
  assert_shows(OBJ_VAL(obj_builtin(vm, builtin_find("show"))), "<fn show>");
  assert_shows(OBJ_VAL(obj_builtin(vm, builtin_find("delay"))), "<fn delay>");
  Value d[] = {DURATION_VAL(1000)};
  assert_shows(OBJ_VAL(obj_action(vm, BUILTIN_delay, 1, d)), "<action delay>");
  Value x[] = {INT_VAL(1)};
  assert_shows(OBJ_VAL(obj_action(vm, BUILTIN_pure, 1, x)), "<action pure>");
  assert_shows(OBJ_VAL(obj_action(vm, BUILTIN_myThreadId, 0, NULL)), "<action myThreadId>");
  assert_shows(LIST(vm, OBJ_VAL(obj_action(vm, BUILTIN_yield, 0, NULL))), "[<action yield>]");
}

static void test_show_exceptions(void **state) {
  VM *vm = vm_of(state);
  assert_shows(OBJ_VAL(obj_exception(vm, EXC_KILLED, NULL)), "ThreadKilled");
  assert_shows(OBJ_VAL(obj_exception(vm, EXC_ERROR, obj_cstring(vm, "boom"))), "ErrorCall(boom)");
}

/* Thread ids follow the fork tree; labels are not part of show. */
static void test_show_thread_ids(void **state) {
  VM *vm = vm_of(state);
  ObjThread *main_ = thread_new(vm, NULL, UNIT_VAL);
  ObjThread *t1 = thread_new(vm, main_, UNIT_VAL);
  ObjThread *t2 = thread_new(vm, main_, UNIT_VAL);
  ObjThread *t11 = thread_new(vm, t1, UNIT_VAL);
  ObjThread *t12 = thread_new(vm, t1, UNIT_VAL);
  ObjThread *t121 = thread_new(vm, t12, UNIT_VAL);
  ObjThread *t21 = thread_new(vm, t2, UNIT_VAL);
  assert_shows(OBJ_VAL(main_), "main");
  assert_shows(OBJ_VAL(t1), "1");
  assert_shows(OBJ_VAL(t2), "2");
  assert_shows(OBJ_VAL(t11), "1.1");
  assert_shows(OBJ_VAL(t12), "1.2");
  assert_shows(OBJ_VAL(t121), "1.2.1");
  assert_shows(OBJ_VAL(t21), "2.1");
  t12->label = obj_cstring(vm, "worker");
  assert_shows(OBJ_VAL(t12), "1.2");
  assert_shows(LIST(vm, OBJ_VAL(main_), OBJ_VAL(t12)), "[main, 1.2]");
  Buffer name;
  buf_init(&name);
  thread_name(&name, t12);
  assert_string_equal(buf_text(&name), "1.2 (worker)");
  buf_free(&name);
  thread_name(&name, t1);
  assert_string_equal(buf_text(&name), "1");
  buf_free(&name);
  thread_id(&name, t121);
  assert_string_equal(buf_text(&name), "1.2.1");
  buf_free(&name);
  assert_true(value_equal(OBJ_VAL(t1), OBJ_VAL(t1)));
  assert_false(value_equal(OBJ_VAL(t1), OBJ_VAL(t2)));
}

/* vm_show renders like show() and hands back a malloc'd string. */
static void test_vm_show(void **state) {
  VM *vm = vm_of(state);
  char *s = vm_show(vm, LIST(vm, str(vm, "a"), INT_VAL(2)));
  assert_string_equal(s, "[\"a\", 2]");
  free(s);
  s = vm_show(vm, str(vm, "top \"level\""));
  assert_string_equal(s, "top \"level\"");
  free(s);
  s = vm_show(vm, DURATION_VAL(2000000));
  assert_string_equal(s, "2ms");
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal_scalars),
      cmocka_unit_test(test_equal_int_float_by_value),
      cmocka_unit_test(test_equal_int_float_exact),
      cmocka_unit_test(test_equal_nan),
      cmocka_unit_test_setup_teardown(test_equal_strings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_equal_lists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_equal_long_lists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_equal_records, setup, teardown),
      cmocka_unit_test_setup_teardown(test_equal_some, setup, teardown),
      cmocka_unit_test_setup_teardown(test_equal_by_identity, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compare, setup, teardown),
      cmocka_unit_test(test_compare_nan),
      cmocka_unit_test_setup_teardown(test_type_names, setup, teardown),
      cmocka_unit_test(test_show_durations),
      cmocka_unit_test(test_show_floats),
      cmocka_unit_test(test_show_scalars),
      cmocka_unit_test_setup_teardown(test_show_strings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_show_lists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_show_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_show_records_and_some, setup, teardown),
      cmocka_unit_test_setup_teardown(test_show_callables_and_actions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_show_exceptions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_show_thread_ids, setup, teardown),
      cmocka_unit_test_setup_teardown(test_vm_show, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
