/* vm/explore/explore.c: thread keys, the default strategy changing nothing, the
 * depth-first search's counts, replay, and the outcome of a run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "explore.h"

/* Thread ids and keys name the same fork-tree positions both ways; ids
 * that are not fork-tree positions have no key. */
static void test_thread_keys(void **state) {
  UnitVM *u = *state;
  Explorer *ex = explore_new(u->vm);
  int main_key = explore_key_of(ex, "main");
  int two = explore_key_of(ex, "2"), two_one = explore_key_of(ex, "2.1"), deep = explore_key_of(ex, "3.10.2");
  assert_true(main_key >= 0 && two >= 0 && two_one >= 0 && deep >= 0);
  assert_int_not_equal(two, two_one);
  assert_int_equal(explore_key_of(ex, "2"), two); /* interned: the same key again */
  assert_text_equal(explore_thread_id(ex, main_key), "main");
  assert_text_equal(explore_thread_id(ex, two), "2");
  assert_text_equal(explore_thread_id(ex, two_one), "2.1");
  assert_text_equal(explore_thread_id(ex, deep), "3.10.2");
  const char *bad[] = {"", "0", "01", "2.", ".2", "2..1", "x", "2.x", "main.1", "-1", "1 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(explore_key_of(ex, bad[i]), -1);
  explore_free(ex);
}

static const char *const two_sayers = "main = {\n  fork(say(\"a\"))\n  say(\"b\")\n}\n";

/* The default strategy counts steps but runs io-sim's schedule: the same
 * trace as a run with no explorer. */
static void test_default_changes_nothing(void **state) {
  UnitVM *u = *state;
  const char *program =
      "main = {\n  m <- newEmptyMVar()\n  fork({ say(1); putMVar(m, 2) })\n  fork({ x <- takeMVar(m); say(x) })\n"
      "  delay(1us)\n  yield()\n}\n";
  assert_status(unit_run(u, program), SIM_OK, u);
  char *plain = strdup(unit_text(&u->trace));
  unit_text_clear(&u->trace);
  Explorer *ex = explore_new(u->vm);
  explore_use_default(ex);
  assert_status(explore_run(ex), SIM_OK, u);
  assert_text_equal(unit_text(&u->trace), plain);
  assert_int_equal(explore_deviation_count(ex), 0);
  assert_true(explore_steps(ex) > 0);
  free(plain);
  explore_free(ex);
}

/* Schedules the depth-first search runs, until exhausted. */
static int count_schedules(UnitVM *u, int bound, bool pruned, int *abandoned) {
  Explorer *ex = explore_new(u->vm);
  explore_use_dfs(ex, bound, pruned);
  int runs = 0;
  *abandoned = 0;
  do {
    explore_run(ex);
    if (explore_abandoned(ex)) (*abandoned)++;
    else runs++;
    assert_true(explore_preemptions(ex) <= bound);
  } while (explore_dfs_next(ex) && runs < 1000);
  explore_free(ex);
  return runs;
}

/* main forks 1 (a point: main or 1), then says "b" (a point); 1 says "a".
 * Every schedule: main ends first (0 preemptions); 1 preempts main after
 * its say and goes on (1), or main preempts 1 back (2); 1 runs at the fork
 * and ends (1), or is preempted by main, which ends (2), or runs again
 * after main's say (3). */
static void test_dfs_counts(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, two_sayers), SIM_OK, u);
  int abandoned;
  assert_int_equal(count_schedules(u, 0, false, &abandoned), 1);
  assert_int_equal(count_schedules(u, 1, false, &abandoned), 3);
  assert_int_equal(count_schedules(u, 2, false, &abandoned), 5);
  assert_int_equal(count_schedules(u, 3, false, &abandoned), 6);
  assert_int_equal(count_schedules(u, 9, false, &abandoned), 6);
  assert_int_equal(abandoned, 0);
  /* sleep sets: the says commute, so fewer runs, none over the plain count */
  int pruned = count_schedules(u, 9, true, &abandoned);
  assert_true(pruned >= 1 && pruned < 6);
}

/* A lenient replay of a schedule's deviations makes those deviations again;
 * a strict one of a deviation that cannot apply stops, saying why. */
static void test_replay(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, two_sayers), SIM_OK, u);
  Explorer *ex = explore_new(u->vm);
  explore_use_dfs(ex, 3, false);
  Deviation devs[8];
  int count = 0;
  do {
    explore_run(ex);
    count = explore_deviation_count(ex);
    memcpy(devs, explore_deviations(ex), (size_t)count * sizeof *devs);
  } while (count < 2 && explore_dfs_next(ex));
  assert_int_equal(count, 2);
  char *trace = strdup(unit_text(&u->trace));
  Schedule schedule = {devs, count, NULL, 0, NULL, 0};
  explore_use_replay(ex, &schedule, true);
  explore_run(ex);
  assert_false(explore_mismatch(ex)->mismatch);
  assert_int_equal(explore_deviation_count(ex), count);
  for (int i = 0; i < count; i++) {
    assert_int_equal(explore_deviations(ex)[i].step, devs[i].step);
    assert_int_equal(explore_deviations(ex)[i].thread, devs[i].thread);
  }
  Deviation wrong = {1, 0, explore_key_of(ex, "7"), -1, false};
  Schedule bad = {&wrong, 1, NULL, 0, NULL, 0};
  explore_use_replay(ex, &bad, true);
  explore_run(ex);
  assert_true(explore_mismatch(ex)->mismatch);
  assert_int_equal(explore_mismatch(ex)->deviation, 1);
  assert_text_equal(explore_mismatch(ex)->why, "at step 1 (0ns) thread 7 is not among the runnable threads (main, 1)");
  explore_use_replay(ex, &bad, false); /* lenient: skipped */
  explore_run(ex);
  assert_false(explore_mismatch(ex)->mismatch);
  assert_int_equal(explore_deviation_count(ex), 0);
  free(trace);
  explore_free(ex);
}

/* The kind and description of how a run ended. */
static void expect_outcome(const char *program, const char *kind, const char *description, const char *place,
                           bool failure, bool strict) {
  VMConfig config;
  vm_config_init(&config);
  config.strict_shutdown = strict;
  config.max_steps = 100000;
  UnitVM *u = unit_vm_new_with(&config);
  assert_non_null(u);
  assert_status(unit_load(u, program), SIM_OK, u);
  SimStatus status = vm_run(u->vm);
  const char *got_kind = NULL;
  Buffer text, where;
  buf_init(&text);
  buf_init(&where);
  assert_int_equal(explore_describe(u->vm, status, false, &got_kind, &text, &where), failure);
  assert_text_equal(got_kind, kind);
  assert_text_equal(buf_text(&text), description);
  assert_text_equal(buf_text(&where), place);
  buf_free(&text);
  buf_free(&where);
  unit_vm_free(u);
}

static void test_outcomes(void **state) {
  (void)state;
  expect_outcome("main = return \"x\\ny\"\n", "pass", "main returned \"x\\ny\"", "", false, false);
  expect_outcome("main = {\n  assert(1 > 2, \"no\")\n}\n", "assertion", "test.sim:2: assertion failed: no",
                 " at test.sim:2", true, false);
  expect_outcome("main = {\n  fork(assert(false, [1]))\n  delay(1us)\n}\n", "assertion",
                 "assertion failed: [1]", "", true, false);
  expect_outcome("main = {\n  say(1 / 0)\n}\n", "error", "test.sim:2: runtime error: division by zero",
                 " at test.sim:2", true, false);
  expect_outcome("main = {\n  fork(throw(\"x\"))\n  return 2\n}\n", "pass", "main returned 2", "", false, false);
  expect_outcome("main = {\n  throw(#{kind: \"Oops\"})\n}\n", "uncaught",
                 "main died: uncaught #{kind: \"Oops\"} at test.sim:2", " Oops in main at test.sim:2", true, false);
  expect_outcome("main = {\n  m <- newEmptyMVar()\n  takeMVar(m)\n}\n", "deadlock",
                 "deadlock: main is blocked in takeMVar on <mvar m> at test.sim:3; never filled",
                 " at test.sim:3", true, false);
  expect_outcome("main = {\n  a <- newEmptyMVar()\n  b <- newEmptyMVar()\n"
                 "  fork({ takeMVar(a); putMVar(b, 1) })\n  takeMVar(b)\n}\n",
                 "deadlock", "deadlock: main is blocked in takeMVar on <mvar b> at test.sim:5; never filled; "
                 "1 is blocked in takeMVar on <mvar a> at test.sim:4; never filled",
                 " at test.sim:4 at test.sim:5", true, false);
  expect_outcome("main = forever(yield())\n", "limit", "step limit reached (--max-steps 100000)", " step",
                 false, false);
  expect_outcome("main = {\n  fork(delay(1s))\n  return 1\n}\n", "strict-shutdown",
                 "strict shutdown: main finished with 1 thread still alive: 1",
                 " (it has not started)", true, true);
}

/* The run queue work (explore_queue_work) of one run of n threads that
 * each yield twice, under the default strategy and then pct's seed 1. */
static uint64_t queue_work_of(int n, ExploreStrategy strategy) {
  UnitVM *u = unit_vm_new();
  char program[256];
  snprintf(program, sizeof program,
           "fn worker(i) = yield() >> yield()\nmain = {\n  forM_(range(0, %d), fn(i) => fork(worker(i)))\n"
           "  delay(1ms)\n}\n", n);
  assert_status(unit_run(u, program), SIM_OK, u);
  Explorer *ex = explore_new(u->vm);
  if (strategy == EXPLORE_PCT) explore_use_pct(ex, 1, 3, 100);
  else explore_use_default(ex);
  assert_status(explore_run(ex), SIM_OK, u);
  uint64_t work = explore_queue_work(ex);
  explore_free(ex);
  unit_vm_free(u);
  return work;
}

/* A decision among thousands of runnable threads is O(1) for the default
 * strategy and pct: the default used to collect every candidate at every
 * step to count it, and pct took its chosen thread out of the run queue by
 * a scan and a shift (4,000 threads 1.2 s, 8,000 5.0 s). The work at 4n
 * must be at most 5x the work at n. */
static void test_choice_linear_in_threads(void **state) {
  (void)state;
  ExploreStrategy strategies[] = {EXPLORE_DEFAULT, EXPLORE_PCT};
  for (int i = 0; i < 2; i++) {
    uint64_t small = queue_work_of(1000, strategies[i]), large = queue_work_of(4000, strategies[i]);
    if (large > 5 * small) {
      print_error("%s: 4x the threads took %.1fx the run queue work (%llu, %llu)\n", i ? "pct" : "default",
                  (double)large / (double)small, (unsigned long long)small, (unsigned long long)large);
      fail();
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_thread_keys, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_default_changes_nothing, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_dfs_counts, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_replay, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test(test_outcomes),
      cmocka_unit_test(test_choice_linear_in_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
