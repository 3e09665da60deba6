/* vm/interp/interp.c (through the public API): exit statuses, runtime errors and
 * their reports, step counting and limits, tail calls, -O0 equivalence. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

/* Run `source` in a fresh VM built from `config` (NULL: defaults). */
static UnitVM *run_fresh(const VMConfig *config, const char *source, SimStatus *status) {
  UnitVM *u = unit_vm_new_with(config);
  assert_non_null(u);
  *status = unit_run(u, source);
  return u;
}

/* ---- exit statuses ---- */

static void test_ok_and_result(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u, "main = {\n  say(\"hi\")\n  return [1, \"a\"]\n}\n", "hi\n");
  char *shown = vm_show(u->vm, vm_result(u->vm));
  assert_string_equal(shown, "[1, \"a\"]");
  free(shown);
}

static void test_main_as_function(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u, "fn main() {\n  say(1)\n  return 2\n}\n", "1\n");
  assert_true(IS_INT(vm_result(u->vm)));
  assert_int_equal(AS_INT(vm_result(u->vm)), 2);
}

static void test_runtime_error_in_main(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "main = {\n"
                   "  say(1)\n"
                   "  say(1 / 0)\n"
                   "  say(2)\n"
                   "}\n",
                   SIM_FAILED,
                   "test.sim:3: runtime error: division by zero\n"
                   "  in thread main at simulated time 0ns\n"
                   "  at test.sim:3 in main\n");
  assert_text_equal(unit_text(&u->out), "1\n");
  assert_true(IS_UNIT(vm_result(u->vm))); /* main did not finish */
}

/* The report lists the calls, innermost first, with time and thread. */
static void test_runtime_error_trace(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "fn ratio(n) = 10 / n\n"
                   "fn go(n) = ratio(n) + 1\n"
                   "main = {\n"
                   "  delay(2ms)\n"
                   "  say(go(0))\n"
                   "}\n",
                   SIM_FAILED,
                   "test.sim:1: runtime error: division by zero\n"
                   "  in thread main at simulated time 2ms\n"
                   "  at test.sim:1 in ratio\n"
                   "  at test.sim:2 in go\n"
                   "  at test.sim:5 in main\n");
}

/* error(msg) raises a runtime error with that message. */
static void test_error_builtin(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u, "main = {\n  say(\"before\")\n  say(error(\"boom\"))\n}\n", SIM_FAILED,
                   "test.sim:3: runtime error: boom\n"
                   "  in thread main at simulated time 0ns\n"
                   "  at test.sim:3 in main\n");
}

/* An error in another thread ends that thread only; the run succeeds. */
static void test_runtime_error_in_child(void **state) {
  UnitVM *u = *state;
  SimStatus status = unit_run(u,
                              "main = {\n"
                              "  t <- fork({ me <- myThreadId(); labelThread(me, \"worker\"); delay(1us); say(1 + \"a\") })\n"
                              "  delay(2us)\n"
                              "  say(\"main done\")\n"
                              "}\n");
  assert_status(status, SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "main done\n");
  assert_text_equal(unit_text(&u->err),
                    "test.sim:2: runtime error: cannot add int and string (join strings with ++, convert with show)\n"
                    "  in thread 1 (worker) at simulated time 1us\n"
                    "  at test.sim:2 in main\n");
}

/* Runtime type errors: one line each, exact messages. */
static void test_runtime_error_messages(void **state) {
  (void)state;
  static const struct {
    const char *expr;
    const char *message;
  } cases[] = {
      {"9223372036854775807 + 1", "integer overflow in addition"},
      {"1ms + 1", "cannot add duration and int"},
      {"[1] ++ \"a\"", "cannot concatenate list and string (convert with show)"},
      {"head([])", "head of an empty list"},
      {"[1, 2][2]", "list index 2 out of range (length 2)"},
      {"#{x: 1}.y", "record has no field 'y'"},
      {"!1", "'!' needs a bool, not int"},
      {"if 1 then 2 else 3", "a condition must be a bool, not int"},
      {"[1] < [2]", "cannot compare list and list"},
      {"fromSome(none)", "fromSome needs some(x), not none"},
      {"toInt(\"x1\")", "toInt: \"x1\" is not an integer"},
      {"(fn(x) => x)(1, 2)", "'<lambda>' takes 1 argument, but 2 are given"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char source[256], expected[512];
    snprintf(source, sizeof source, "main = {\n  say(%s)\n}\n", cases[i].expr);
    snprintf(expected, sizeof expected,
             "test.sim:2: runtime error: %s\n  in thread main at simulated time 0ns\n  at test.sim:2 in main\n",
             cases[i].message);
    SimStatus status;
    UnitVM *u = run_fresh(NULL, source, &status);
    if (status != SIM_FAILED || strcmp(unit_text(&u->err), expected) != 0) {
      print_error("%s: status %s, errors:\n%s--- expected:\n%s", cases[i].expr, unit_status_name(status),
                  unit_text(&u->err), expected);
      unit_vm_free(u);
      fail();
    }
    unit_vm_free(u);
  }
}

/* A statement that is not an action fails when it runs. */
static void test_statement_not_an_action(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u, "main = {\n  say(1)\n  5\n  say(2)\n}\n", SIM_FAILED,
                   "test.sim:3: runtime error: cannot run int: it is not an action\n"
                   "  in thread main at simulated time 0ns\n"
                   "  at test.sim:3 in main\n");
  assert_text_equal(unit_text(&u->out), "1\n");
}

static void test_compile_error_status(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, "main = say(\n"), SIM_COMPILE_ERROR, u);
  assert_contains(unit_text(&u->err), "test.sim:2:1: error: syntax error, unexpected end of file");
}

static void test_no_main(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, "x = 1\n"), SIM_OK, u);
  assert_status(vm_run(u->vm), SIM_COMPILE_ERROR, u);
  assert_text_equal(unit_text(&u->err), "simvm: error: the program defines no 'main' (write `main = { ... }`)\n");
}

static void test_main_with_parameters(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u, "fn main(x) = return x\n", SIM_COMPILE_ERROR,
                   "test.sim:1: error: 'main' must take no parameters (read arguments with args())\n");
}

/* ---- steps ---- */

static const char *const busy_program =
    "fn worker(n, d) {\n"
    "  delay(d)\n"
    "  say(n * 2)\n"
    "  if n > 0 then worker(n - 1, d) else return ()\n"
    "}\n"
    "main = {\n"
    "  fork(worker(5, 3us))\n"
    "  fork(worker(5, 2us))\n"
    "  xs <- mapM(fn(x) => return x * x, range(0, 50))\n"
    "  say(sum(xs))\n"
    "  delay(100us)\n"
    "}\n";

/* The same program takes the same number of steps, and says the same, every run. */
static void test_steps_identical_across_runs(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.trace = true;
  SimStatus s1, s2;
  UnitVM *a = run_fresh(&config, busy_program, &s1);
  UnitVM *b = run_fresh(&config, busy_program, &s2);
  assert_status(s1, SIM_OK, a);
  assert_status(s2, SIM_OK, b);
  assert_true(vm_steps(a->vm) > 1000);
  assert_int_equal(vm_steps(a->vm), vm_steps(b->vm));
  assert_int_equal(vm_now(a->vm), 100 * 1000);
  assert_int_equal(vm_now(a->vm), vm_now(b->vm));
  assert_text_equal(unit_text(&a->out), unit_text(&b->out));
  assert_text_equal(unit_text(&a->trace), unit_text(&b->trace));
  /* at 6us and 12us both workers wake: the timer made first (worker 1's) first */
  assert_text_equal(unit_text(&a->out), "40425\n10\n10\n8\n8\n6\n4\n6\n2\n4\n0\n2\n0\n");
  unit_vm_free(a);
  unit_vm_free(b);
}

/* -O0 computes the same output and trace (not the same step count). */
static void test_O0_same_behaviour(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.trace = true;
  SimStatus s1, s2;
  UnitVM *a = run_fresh(&config, busy_program, &s1);
  config.reify_actions = config.heap_continuations = true;
  UnitVM *b = run_fresh(&config, busy_program, &s2);
  assert_status(s1, SIM_OK, a);
  assert_status(s2, SIM_OK, b);
  assert_text_equal(unit_text(&b->out), unit_text(&a->out));
  assert_text_equal(unit_text(&b->trace), unit_text(&a->trace));
  assert_true(vm_steps(b->vm) > vm_steps(a->vm)); /* -O0 builds and binds every action */
  unit_vm_free(a);
  unit_vm_free(b);
}

/* The A/B axes are independent: each of the four combinations says and
 * traces the same. --actions decides how many binds there are (reified:
 * every action is bound), --continuations only where their continuations
 * go: the same binds and continuations, on the heap (but the VM's own
 * frames') or all on the thread's stack. */
static void test_ab_axes_independent(void **state) {
  (void)state;
  UnitVM *runs[2][2]; /* [reify_actions][heap_continuations] */
  for (int reify = 0; reify < 2; reify++)
    for (int heap = 0; heap < 2; heap++) {
      VMConfig config;
      vm_config_init(&config);
      config.trace = true;
      config.profile = true; /* the bind counts are the profiled loop's */
      config.reify_actions = reify;
      config.heap_continuations = heap;
      SimStatus status;
      UnitVM *u = runs[reify][heap] = run_fresh(&config, busy_program, &status);
      assert_status(status, SIM_OK, u);
      assert_int_equal(u->vm->direct_actions, !reify);
      assert_int_equal(u->vm->stack_continuations, !heap);
      assert_text_equal(unit_text(&u->out), unit_text(&runs[0][0]->out));
      assert_text_equal(unit_text(&u->trace), unit_text(&runs[0][0]->trace));
    }
  for (int reify = 0; reify < 2; reify++) {
    const VMStats *stack = &runs[reify][0]->vm->stats, *heap = &runs[reify][1]->vm->stats;
    assert_int_equal(heap->binds, stack->binds);
    assert_int_equal(heap->heap_continuations + heap->stack_continuations, stack->stack_continuations);
    assert_int_equal(stack->heap_continuations, 0);
    assert_true(heap->heap_continuations > 0);
    assert_true(heap->stack_continuations < heap->heap_continuations); /* the VM's own frames only */
    /* each heap continuation is resumed by one more instruction (RESUME) */
    assert_int_equal(vm_steps(runs[reify][1]->vm), vm_steps(runs[reify][0]->vm) + heap->heap_continuations);
  }
  assert_true(runs[1][0]->vm->stats.binds > runs[0][0]->vm->stats.binds);
  for (int reify = 0; reify < 2; reify++)
    for (int heap = 0; heap < 2; heap++) unit_vm_free(runs[reify][heap]);
}

/* max_steps: exactly the steps a run needs is enough; one fewer is the limit. */
static void test_step_limit_boundary(void **state) {
  (void)state;
  SimStatus status;
  UnitVM *free_run = run_fresh(NULL, busy_program, &status);
  assert_status(status, SIM_OK, free_run);
  uint64_t needed = vm_steps(free_run->vm);
  unit_vm_free(free_run);

  VMConfig config;
  vm_config_init(&config);
  config.max_steps = needed;
  UnitVM *enough = run_fresh(&config, busy_program, &status);
  assert_status(status, SIM_OK, enough);
  assert_int_equal(vm_steps(enough->vm), needed);
  unit_vm_free(enough);

  /* checked at calls and binds: the run stops at the first one after the
   * limit, a few instructions past it */
  config.max_steps = needed / 2;
  UnitVM *short_ = run_fresh(&config, busy_program, &status);
  assert_status(status, SIM_LIMIT, short_);
  assert_true(vm_steps(short_->vm) >= needed / 2);
  assert_true(vm_steps(short_->vm) < needed / 2 + 20);
  char expected[128];
  snprintf(expected, sizeof expected, "simvm: step limit reached: at least %llu instructions executed (--max-steps)\n",
           (unsigned long long)(needed / 2));
  assert_text_equal(unit_text(&short_->err), expected);
  unit_vm_free(short_);
}

/* A program that never blocks is stopped by max_steps. */
static void test_step_limit_stops_busy_loop(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.max_steps = 10000;
  SimStatus status;
  UnitVM *u = run_fresh(&config, "main = forever(yield())\n", &status);
  assert_status(status, SIM_LIMIT, u);
  assert_true(vm_steps(u->vm) >= 10000 && vm_steps(u->vm) < 10000 + 20);
  assert_int_equal(vm_now(u->vm), 0);
  assert_text_equal(unit_text(&u->err), "simvm: step limit reached: at least 10000 instructions executed (--max-steps)\n");
  unit_vm_free(u);
}

/* ---- stacks ---- */

/* Tail binds and tail calls run in constant stack: far more iterations than
 * the frame limit. */
static void test_tail_recursion_constant_stack(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn countdown(n) = if n == 0 then 0 else countdown(n - 1)\n"
                          "fn loop(n) = if n == 0 then return \"done\" else { yield(); loop(n - 1) }\n"
                          "fn loop2(n) {\n"
                          "  when(n % 500000 == 0, say(n))\n"
                          "  if n == 0 then return () else loop2(n - 1)\n"
                          "}\n"
                          "main = {\n"
                          "  say(countdown(1500000))\n"
                          "  r <- loop(1500000)\n"
                          "  say(r)\n"
                          "  loop2(1500000)\n"
                          "}\n",
                          "0\ndone\n1500000\n1000000\n500000\n0\n");
}

/* Evaluating main's value happens at load, in "<top level>": an error in
 * a say() argument there is not inside main's block. */
static void test_error_computing_top_level_value(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u, "limit = 10\nmain = say(limit / 0)\n", SIM_FAILED,
                   "test.sim:2: runtime error: division by zero\n"
                   "  in thread main at simulated time 0ns\n"
                   "  at test.sim:2 in <top level>\n");
}

/* Deep non-tail recursion is a runtime error, not a crash; the report is capped. */
static void test_stack_overflow(void **state) {
  UnitVM *u = *state;
  SimStatus status = unit_run(u, "fn deep(n) = 1 + deep(n + 1)\nmain = say(deep(0))\n");
  assert_status(status, SIM_FAILED, u);
  const char *err = unit_text(&u->err);
  assert_contains(err, "test.sim:1: runtime error: stack overflow");
  assert_contains(err, "  in thread main at simulated time 0ns\n  at test.sim:1 in deep\n");
  assert_contains(err, " more frames\n");
  int lines = 0;
  for (const char *s = err; *s; s++) lines += *s == '\n';
  assert_true(lines <= 25);
}

/* An overflow in a child thread leaves main running. */
static void test_stack_overflow_in_child(void **state) {
  UnitVM *u = *state;
  SimStatus status = unit_run(u,
                              "fn deep(n) = 1 + deep(n + 1)\n"
                              "main = {\n"
                              "  fork({ say(deep(0)) })\n"
                              "  delay(1us)\n"
                              "  say(\"survived\")\n"
                              "}\n");
  assert_status(status, SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "survived\n");
  assert_contains(unit_text(&u->err), "runtime error: stack overflow");
  assert_contains(unit_text(&u->err), "in thread 1 at simulated time 0ns");
}

/* ---- language-level behaviour the interpreter implements ---- */

static void test_actions_are_values(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  let hello = say(\"hello\")\n"
                          "  hello\n"
                          "  hello\n"
                          "  x <- pure(3) >>= fn(v) => return v + 1\n"
                          "  say(x)\n"
                          "  say(\"a\") >> say(\"b\")\n"
                          "  let acts = [say(1), say(2)]\n"
                          "  sequence_(acts)\n"
                          "  say(typeOf(hello))\n"
                          "  say(show(hello))\n"
                          "}\n",
                          "hello\nhello\n4\na\nb\n1\n2\naction\n<action say>\n");
}

static void test_arithmetic(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  say([-7 / 2, -7 % 2, 1 + 0.5, 3ms / 1ms, 3ms / 2, 2 * 1us, 10ns % 3ns, 1.0 / 0.0])\n"
                          "  say([1 == 1, [1, 2] == [1, 2], some(1) != none, \"a\" ++ \"b\", [1] ++ [2, 3]])\n"
                          "  say([1 <= 1.0, \"abc\" < \"abd\", abs(-3), min(2us, 1us), max(1.5, 2.5)])\n"
                          "  say([toInt(2.9), toInt(1us), toFloat(2), nanoseconds(1ms), length(\"caf\xc3\xa9\")])\n"
                          "}\n",
                          "[-3, -1, 1.5, 3, 1500us, 2us, 1ns, inf]\n"
                          "[true, true, true, \"ab\", [1, 2, 3]]\n"
                          "[true, true, 3, 1us, 2.5]\n"
                          "[2, 1000, 2.0, 1000000, 5]\n");
}

/* NaN is equal to nothing, ints included (vm/value/value.h: numbers by value). */
static void test_nan_comparisons(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  let nan = 0.0 / 0.0\n"
                          "  say([nan == nan, 1 == nan, nan == 1, nan != 1])\n"
                          "}\n",
                          "[false, false, false, true]\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_ok_and_result, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_main_as_function, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_runtime_error_in_main, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_runtime_error_trace, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_error_builtin, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_runtime_error_in_child, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_runtime_error_messages),
      cmocka_unit_test_setup_teardown(test_statement_not_an_action, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_compile_error_status, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_no_main, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_main_with_parameters, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_steps_identical_across_runs),
      cmocka_unit_test(test_O0_same_behaviour),
      cmocka_unit_test(test_ab_axes_independent),
      cmocka_unit_test(test_step_limit_boundary),
      cmocka_unit_test(test_step_limit_stops_busy_loop),
      cmocka_unit_test_setup_teardown(test_tail_recursion_constant_stack, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_error_computing_top_level_value, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_stack_overflow, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_stack_overflow_in_child, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_actions_are_values, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_arithmetic, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_nan_comparisons, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
