/* Bounding real time and output: the work budget (--max-work) charges what
 * one instruction does in C, vm_stop ends a run at the next instruction
 * with a report of every thread, and each trace output is capped
 * (--max-trace-size). Strings made at run time are not interned, so ++
 * costs its copy and no hashing. */
#define _GNU_SOURCE /* open_memstream */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>

#include "unit.h"

/* Doubling a string 20 times copies about 4 MB in 40 or so instructions. */
static const char *doubling =
    "fn grow(s, n) = if n == 0 then s else grow(s ++ s, n - 1)\n"
    "main = {\n  let s = grow(\"ab\", 20)\n  say(length(s))\n}\n";

static UnitVM *limited(uint64_t max_steps, uint64_t max_work) {
  VMConfig config;
  vm_config_init(&config);
  config.max_steps = max_steps;
  config.max_work = max_work;
  return unit_vm_new_with(&config);
}

static void test_work_budget_stops_long_instructions(void **state) {
  (void)state;
  UnitVM *u = limited(0, 0);
  assert_runs_with_output(u, doubling, "2097152\n");
  uint64_t steps = vm_steps(u->vm);
  assert_true(u->vm->work > 2000000); /* the bytes written (s ++ s writes s once after itself) */
  unit_vm_free(u);
  /* a step limit far above the instructions does not stop it ... */
  u = limited(steps * 10, 0);
  assert_runs_with_output(u, doubling, "2097152\n");
  unit_vm_free(u);
  /* ... a work budget does, right after the instruction that passed it */
  u = limited(steps * 10, 1000000);
  assert_status(unit_run(u, doubling), SIM_LIMIT, u);
  assert_text_equal(unit_text(&u->out), "");
  assert_text_equal(unit_text(&u->err), "simvm: work limit reached: at least 1000000 units of work done (--max-work)\n");
  assert_true(u->vm->work + vm_steps(u->vm) >= 1000000);
  /* at most one instruction too many: here the copy of 1 MB into a
   * storage of 2 MB, after 699,068 units of appends and copies */
  assert_true(u->vm->work + vm_steps(u->vm) < 1000000 + 1100000);
  unit_vm_free(u);
}

/* Instructions alone count one unit each: the budget is then a step limit. */
static void test_work_counts_instructions(void **state) {
  (void)state;
  const char *loop = "fn count(n) = if n == 0 then 0 else count(n - 1)\nmain = say(count(100000))\n";
  UnitVM *u = limited(0, 5000);
  assert_status(unit_run(u, loop), SIM_LIMIT, u);
  /* checked at calls and binds: a few instructions past it */
  assert_true(vm_steps(u->vm) + u->vm->work >= 5000);
  assert_true(vm_steps(u->vm) + u->vm->work < 5000 + 20);
  assert_text_equal(unit_text(&u->err), "simvm: work limit reached: at least 5000 units of work done (--max-work)\n");
  unit_vm_free(u);
  /* the step limit wins when it is reached first */
  u = limited(1000, 5000);
  assert_status(unit_run(u, loop), SIM_LIMIT, u);
  assert_text_equal(unit_text(&u->err), "simvm: step limit reached: at least 1000 instructions executed (--max-steps)\n");
  unit_vm_free(u);
}

/* What else stays O(n) in one instruction is charged too: the work of a
 * program that computes `expr` beyond one that only builds the list. */
static void test_work_charged(void **state) {
  (void)state;
  static const struct {
    const char *expr;
    uint64_t at_least;
  } cases[] = {
      {"length(xs)", 20000},                       /* cells counted */
      {"nth(xs, 19999)", 19999},                   /* cells walked */
      {"xs == range(0, 20000)", 40000},            /* pairs compared */
      {"show(xs)", 100000},                        /* bytes shown */
      {"join(\",\", map(show, xs))", 100000},      /* bytes joined (and shown) */
      {"xs ++ [1]", 20000},                        /* cells copied */
      {"setField(#{a: 1}, show(xs), 1)", 100000},  /* a name hashed */
      /* the 300 adds write after the record's fields; the 300 updates copy it */
      {"foldl(fn(r, i) => setField(r, show(i % 300), i), #{}, range(0, 600))", 300 * 300},
  };
  UnitVM *base = limited(0, 0);
  assert_status(unit_run(base, "main = {\n  let xs = range(0, 20000)\n  let x = xs\n  return ()\n}\n"), SIM_OK, base);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char source[512];
    snprintf(source, sizeof source, "main = {\n  let xs = range(0, 20000)\n  let x = %s\n  return ()\n}\n", cases[i].expr);
    UnitVM *u = limited(0, 0);
    assert_status(unit_run(u, source), SIM_OK, u);
    if (u->vm->work < base->vm->work + cases[i].at_least)
      fail_msg("%s: %" PRIu64 " units of work, expected at least %" PRIu64, cases[i].expr, u->vm->work,
               base->vm->work + cases[i].at_least);
    unit_vm_free(u);
  }
  unit_vm_free(base);
}

/* Found by fuzzing: a chain of forks makes ids as long as the chain is
 * deep, and every sink that formats or copies one (the profile, the
 * timeline, JSON lines, death reports) did O(depth) work per thread or
 * event that nothing counted: 50 000 instructions wrote a 41 MB folded
 * profile. That work is charged now, so the work budget bounds it. */
static void test_work_charged_for_deep_ids(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.max_work = 200000;
  config.profile = true;
  config.timeline = true;
  UnitVM *u = unit_vm_new_with(&config);
  assert_status(unit_run(u, "fn link(n) { fork(link(n + 1)); return () }\nmain = { fork(link(0)); delay(1s) }\n"), SIM_LIMIT, u);
  assert_non_null(strstr(unit_text(&u->err), "simvm: work limit reached: "));
  assert_true(u->vm->thread_serial < 2000); /* a unit of work per thread would have made 20 000 */
  assert_true(u->vm->work > vm_steps(u->vm));
  unit_vm_free(u);
}

/* ++ copies and does not hash: its results are not interned, yet compare,
 * index records and name fields like any other string. */
static void test_concat_does_not_intern(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u,
                          "fn grow(s, n) = if n == 0 then s else grow(s ++ \"x\", n - 1)\n"
                          "main = {\n"
                          "  let s = grow(\"\", 3000)\n"
                          "  let k = \"fi\" ++ \"eld\"\n"
                          "  let r = setField(#{a: 1}, k, 2)\n"
                          "  say([length(s), r.field, r[\"f\" ++ \"ield\"], r[k]])\n"
                          "  say([k == \"field\", \"field\" == k, k == \"fie\" ++ \"ld\", k != \"fielD\", r == #{a: 1, field: 2}])\n"
                          "  say([hasField(r, \"fie\" ++ \"ld\"), hasField(r, \"nope\" ++ \"x\"), \"ab\" ++ \"c\" < \"abd\"])\n"
                          "}\n"),
                SIM_OK, u);
  int interned = u->vm->strings.count;
  assert_status(vm_run(u->vm), SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "[3000, 2, 2, 2]\n[true, true, true, true, true]\n[true, false, true]\n");
  /* "field" is a name in the program; of the 3000 strings grown, none joined */
  assert_true(u->vm->strings.count - interned < 10);
}

static void test_record_field_of_unknown_name(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u, "main = say(#{a: 1}[\"zz\" ++ \"q\"])\n", SIM_FAILED,
                   "test.sim:1: runtime error: record has no field 'zzq'\n  in thread main at simulated time 0ns\n"
                   "  at test.sim:1 in <top level>\n");
}

/* A list literal longer than LIST's 255 takes parts joined right to left:
 * each ++ copies its left side only, so the cells copied stay under twice
 * the length (they were quadratic: the chunks were joined left to right). */
static void test_long_list_literal_is_linear(void **state) {
  (void)state;
  enum { N = 70000 };
  size_t size = 64 + (size_t)N * 7;
  char *source = malloc(size);
  int n = snprintf(source, size, "xs = [");
  for (int i = 0; i < N; i++) n += snprintf(source + n, size - (size_t)n, i ? ",%d" : "%d", i % 50);
  const char *check = "main = say([length(xs), nth(xs, 1), nth(xs, 65025), nth(xs, %d), xs == map(fn(i) => i %% 50, range(0, %d))])\n";
  n += snprintf(source + n, size - (size_t)n, "]\n");
  snprintf(source + n, size - (size_t)n, check, N - 1, N);
  UnitVM *u = limited(0, 0);
  assert_status(unit_load(u, source), SIM_OK, u);
  const ObjProto *top = AS_CLOSURE(u->vm->module_inits.values[u->vm->module_inits.count - 1])->proto;
  assert_true(top->max_slots < 600);
  uint64_t before = 0;
  assert_status(vm_run(u->vm), SIM_OK, u);
  char expected[64];
  snprintf(expected, sizeof expected, "[%d, 1, 25, 49, true]\n", N);
  assert_text_equal(unit_text(&u->out), expected);
  /* the work: the cells copied, plus length, nth and == walking the list */
  UnitVM *walk = limited(0, 0);
  n = snprintf(source, size, "xs = map(fn(i) => i %% 50, range(0, %d))\n", N);
  snprintf(source + n, size - (size_t)n, check, N - 1, N);
  assert_status(unit_run(walk, source), SIM_OK, walk);
  before = walk->vm->work;
  assert_true(u->vm->work - before < 2 * N);
  unit_vm_free(walk);
  unit_vm_free(u);
  free(source);
}

/* ---- vm_stop ---- */

/* A say callback that stops the run at the stop_after-th say. */
typedef struct {
  int says, stop_after;
  SimStop why;
} Stopper;

static void say_then_stop(void *user, const char *text, size_t length) {
  UnitVM *u = user;
  Stopper *s = u->data;
  unit_text_append(&u->out, text, length);
  if (++s->says == s->stop_after) vm_stop(u->vm, s->why);
}

static const char *ticker =
    "fn tick(n) {\n"
    "  delay(1ms)\n"
    "  say(n)\n"
    "  tick(n + 1)\n"
    "}\n"
    "fn idle() { delay(1s); idle() }\n"
    "main = {\n"
    "  t <- fork(tick(1))\n"
    "  labelThread(t, \"ticker\")\n"
    "  idle()\n"
    "}\n";

static UnitVM *stopping_vm(Stopper *s, int stop_after, SimStop why) {
  VMConfig config;
  vm_config_init(&config);
  config.timeline = true;
  UnitVM *u = unit_vm_new_with(&config);
  *s = (Stopper){0, stop_after, why};
  u->data = s;
  u->vm->config.write_say = say_then_stop;
  u->vm->config.say_block = 0; /* each say written at once: the stop follows it */
  assert_status(unit_load(u, ticker), SIM_OK, u);
  return u;
}

/* The run stops at its next call or bind, says when and where every thread
 * is, and what it recorded is complete; later runs stop at once. */
static void test_stop_reports_every_thread(void **state) {
  (void)state;
  Stopper s;
  UnitVM *u = stopping_vm(&s, 3, SIM_STOP_INTERRUPT);
  assert_int_equal(vm_run(u->vm), SIM_INTERRUPTED);
  assert_text_equal(unit_text(&u->out), "1\n2\n3\n");
  char expected[256];
  snprintf(expected, sizeof expected,
           "simvm: interrupted at 3ms after %" PRIu64 " instructions\n"
           "  thread main is blocked in delay until 1s at test.sim:6\n"
           "  thread 1 (ticker) is running at test.sim:4\n",
           vm_steps(u->vm));
  assert_text_equal(unit_text(&u->err), expected);
  char *timeline = NULL;
  size_t size;
  FILE *out = open_memstream(&timeline, &size);
  assert_true(vm_write_timeline(u->vm, out));
  fclose(out);
  assert_non_null(strstr(timeline, "\"ts\": 2000.000, \"dur\": 1000.000, \"name\": \"delayed\"}"));
  assert_int_equal(strcmp(timeline + size - 4, "\n]}\n"), 0);
  free(timeline);
  unit_text_clear(&u->err);
  assert_int_equal(vm_run(u->vm), SIM_INTERRUPTED);
  assert_text_equal(unit_text(&u->err), "simvm: interrupted at 0ns after 0 instructions\n  thread main is runnable (it has not started)\n");
  unit_vm_free(u);
}

static void test_stop_reasons(void **state) {
  (void)state;
  Stopper s;
  UnitVM *u = stopping_vm(&s, 1, SIM_STOP_TERMINATE);
  assert_int_equal(vm_run(u->vm), SIM_INTERRUPTED);
  assert_non_null(strstr(unit_text(&u->err), "simvm: terminated at 1ms after "));
  unit_vm_free(u);
  /* an output that failed was reported by whoever wrote it */
  u = stopping_vm(&s, 2, SIM_STOP_OUTPUT);
  assert_int_equal(vm_run(u->vm), SIM_USAGE);
  assert_text_equal(unit_text(&u->out), "1\n2\n");
  assert_text_equal(unit_text(&u->err), "");
  unit_vm_free(u);
}

/* Each trace output stops the run before it passes --max-trace-size; what
 * was written is whole lines. */
static void test_trace_cap(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.trace = true;
  config.max_trace_size = 200;
  UnitVM *u = unit_vm_new_with(&config);
  assert_status(unit_run(u, ticker), SIM_LIMIT, u);
  assert_text_equal(unit_text(&u->err), "simvm: trace size limit reached: the --trace output would pass 200 bytes (--max-trace-size)\n");
  const char *trace = unit_text(&u->trace);
  assert_true(strlen(trace) <= 200 && strlen(trace) > 100);
  assert_int_equal(trace[strlen(trace) - 1], '\n');
  /* the next run gets its own allowance */
  unit_text_clear(&u->trace);
  unit_text_clear(&u->err);
  assert_int_equal(vm_run(u->vm), SIM_LIMIT);
  assert_true(strlen(unit_text(&u->trace)) > 100);
  unit_vm_free(u);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_work_budget_stops_long_instructions),
      cmocka_unit_test(test_work_counts_instructions),
      cmocka_unit_test(test_work_charged),
      cmocka_unit_test_setup_teardown(test_concat_does_not_intern, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_record_field_of_unknown_name, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_long_list_literal_is_linear),
      cmocka_unit_test(test_work_charged_for_deep_ids),
      cmocka_unit_test(test_stop_reports_every_thread),
      cmocka_unit_test(test_stop_reasons),
      cmocka_unit_test(test_trace_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
