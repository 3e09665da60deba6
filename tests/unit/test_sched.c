/* vm/runtime/sched.c (through the public API): run-queue order, simulated time,
 * timers at the same instant, timeouts, kill, thread ids, the end of a run.
 * The rules are those of docs/SEMANTICS.md. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "sched.h"

#define US 1000
#define MS 1000000


/* ---- the run queue ---- */

static void test_say_order_across_threads(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  fork({ say(\"a1\"); yield(); say(\"a2\") })\n"
                          "  fork({ say(\"b1\"); delay(1us); say(\"b2\") })\n"
                          "  say(\"m1\")\n"
                          "  yield()\n"
                          "  say(\"m2\")\n"
                          "  delay(2us)\n"
                          "  say(\"m3\")\n"
                          "}\n",
                          "m1\na1\nb1\nm2\na2\nb2\nm3\n");
  assert_int_equal(vm_now(u->vm), 2 * US);
}

/* fork appends the child; the parent goes on running. */
static void test_fork_runs_child_later(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  fork(say(\"child 1\"))\n"
                          "  fork(say(\"child 2\"))\n"
                          "  say(\"parent\")\n"
                          "  yield()\n"
                          "  say(\"parent again\")\n"
                          "}\n",
                          "parent\nchild 1\nchild 2\nparent again\n");
  assert_int_equal(vm_now(u->vm), 0);
}

/* delay(0) waits for the whole run queue to drain; yield for one round. */
static void test_delay_zero_drains_the_queue(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  fork({ say(\"c1\"); yield(); say(\"c2\"); yield(); say(\"c3\") })\n"
                          "  delay(0ns)\n"
                          "  say(\"main\")\n"
                          "  fork({ say(\"d1\"); yield(); say(\"d2\") })\n"
                          "  yield()\n"
                          "  say(\"main 2\")\n"
                          "  delay(-5ms)\n" /* returns at once: no yield, so d2 is never said */
                          "  say(\"main 3\")\n"
                          "}\n",
                          "c1\nc2\nc3\nmain\nd1\nmain 2\nmain 3\n");
  assert_int_equal(vm_now(u->vm), 0);
}

/* ---- time ---- */

static void test_simulated_time(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t0 <- now()\n"
                          "  delay(3ms)\n"
                          "  delay(500us)\n"
                          "  t1 <- now()\n"
                          "  say([t0, t1, t1 - t0])\n"
                          "}\n",
                          "[0ns, 3500us, 3500us]\n");
  assert_int_equal(vm_now(u->vm), 3 * MS + 500 * US);
}

/* The clock jumps to the earliest timer; threads wake in time order. */
static void test_wake_in_time_order(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn sleeper(name, d) {\n"
                          "  delay(d)\n"
                          "  t <- now()\n"
                          "  say(name ++ \" \" ++ show(t))\n"
                          "}\n"
                          "main = {\n"
                          "  fork(sleeper(\"c\", 30us))\n"
                          "  fork(sleeper(\"a\", 10us))\n"
                          "  fork(sleeper(\"b\", 20us))\n"
                          "  fork(sleeper(\"a2\", 10us))\n"
                          "  delay(1ms)\n"
                          "}\n",
                          "a 10us\na2 10us\nb 20us\nc 30us\n");
  assert_int_equal(vm_now(u->vm), MS);
}

/* Computation takes no simulated time. */
static void test_computation_takes_no_time(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn spin(n) = if n == 0 then 0 else spin(n - 1)\n"
                          "main = {\n"
                          "  let x = spin(100000)\n"
                          "  t <- now()\n"
                          "  say(t)\n"
                          "}\n",
                          "0ns\n");
  assert_int_equal(vm_now(u->vm), 0);
}

/* Delays due at one instant wake in timer-creation order, then timeouts
 * fire (docs/SEMANTICS.md's example, whole trace). */
static void test_same_instant_trace(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  b <- fork({ delay(1us); delay(1us); say(\"b\") })\n"
                          "  a <- fork({ delay(2us); say(\"a\") })\n"
                          "  c <- fork({ r <- timeout(2us, delay(5us)); say(r) })\n"
                          "  delay(3us)\n"
                          "}\n",
                          "a\nb\nnone\n");
  assert_text_equal(unit_text(&u->trace),
                    "       0ns  main         fork 1\n"
                    "       0ns  main         fork 2\n"
                    "       0ns  main         fork 3\n"
                    "       0ns  main         delay 3us\n"
                    "       0ns  1            delay 1us\n"
                    "       0ns  2            delay 2us\n"
                    "       0ns  3            timeout 2us\n"
                    "       0ns  3            delay 5us\n"
                    "       1us  1            wake\n"
                    "       1us  1            delay 1us\n"
                    "       2us  2            wake\n"
                    "       2us  1            wake\n"
                    "       2us  2            say \"a\"\n"
                    "       2us  2            exit\n"
                    "       2us  1            say \"b\"\n"
                    "       2us  1            exit\n"
                    "       2us  3            timeout fired\n"
                    "       2us  3            say \"none\"\n"
                    "       2us  3            exit\n"
                    "       3us  main         wake\n"
                    "       3us  main         exit\n");
}

/* ---- timeouts ---- */

static void test_timeouts(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  r1 <- timeout(1us, delay(1us))\n"                        /* the action wins a tie */
                          "  r2 <- timeout(1us, { delay(1us); yield(); say(\"x\") })\n" /* unless it blocks again */
                          "  r3 <- timeout(0ns, say(\"never\"))\n"                     /* 0: none, not run */
                          "  r4 <- timeout(-1ns, return 5)\n"                          /* < 0: no limit */
                          "  r5 <- timeout(5us, delay(2us) >> return \"done\")\n"
                          "  t <- now()\n"
                          "  say([r1, r2, r3, r4, r5, t])\n"
                          "}\n",
                          "[some(()), none, none, some(5), some(\"done\"), 4us]\n");
  assert_int_equal(vm_now(u->vm), 4 * US);
}

static void test_nested_timeouts(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  r1 <- timeout(2us, timeout(1us, delay(3us)))\n"
                          "  t1 <- now()\n"
                          "  r2 <- timeout(1us, timeout(2us, delay(3us)))\n"
                          "  t2 <- now()\n"
                          "  say([r1, t1, r2, t2])\n"
                          "  delay(10us)\n" /* the cancelled timers must not fire later */
                          "  say(\"quiet\")\n"
                          "}\n",
                          "[some(none), 1us, none, 2us]\nquiet\n");
  assert_int_equal(vm_now(u->vm), 12 * US);
}

/* A timeout in one thread does not disturb another. */
static void test_timeouts_in_two_threads(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn worker(name, work) {\n"
                          "  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")\n"
                          "  t <- now()\n"
                          "  say(show(t) ++ \": \" ++ (if isSome(r) then fromSome(r) else name ++ \" timed out\"))\n"
                          "}\n"
                          "main = {\n"
                          "  fork(worker(\"fast\", 1ms))\n"
                          "  fork(worker(\"slow\", 5ms))\n"
                          "  delay(10ms)\n"
                          "  say(\"done\")\n"
                          "}\n",
                          "1ms: fast finished\n3ms: slow timed out\ndone\n");
  assert_int_equal(vm_now(u->vm), 10 * MS);
}

/* ---- kill ---- */

static void test_kill_blocked_thread(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork({ delay(5us); say(\"never\") })\n"
                          "  delay(1us)\n"
                          "  kill(t)\n"
                          "  kill(t)\n"      /* again: nothing happens */
                          "  delay(10us)\n"
                          "  say(\"done\")\n"
                          "}\n",
                          "done\n");
  assert_int_equal(vm_now(u->vm), 11 * US);
}

/* A thread killed before it ever ran dies without running anything. */
static void test_kill_before_first_run(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork(say(\"x\"))\n"
                          "  kill(t)\n"
                          "  yield()\n"
                          "  say(\"end\")\n"
                          "}\n",
                          "end\n");
}

/* Killing a finished thread does nothing; the killer goes on. */
static void test_kill_finished_thread(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork(say(\"child\"))\n"
                          "  delay(1us)\n"
                          "  kill(t)\n"
                          "  say(\"after\")\n"
                          "}\n",
                          "child\nafter\n");
}

/* kill(myThreadId()) in main ends the run: an uncaught ThreadKilled. */
static void test_kill_self_in_main(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "main = {\n"
                   "  delay(1us)\n"
                   "  me <- myThreadId()\n"
                   "  kill(me)\n"
                   "  say(\"not reached\")\n"
                   "}\n",
                   SIM_FAILED, "simvm: uncaught exception ThreadKilled in thread main at simulated time 1us\n");
  assert_text_equal(unit_text(&u->out), "");
}

/* Killing a thread inside a timeout cancels the timeout's timer too. */
static void test_kill_inside_timeout(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork({ r <- timeout(5us, delay(10us)); say(r) })\n"
                          "  delay(1us)\n"
                          "  kill(t)\n"
                          "  delay(20us)\n"
                          "  say(\"main\")\n"
                          "}\n",
                          "main\n");
  assert_int_equal(vm_now(u->vm), 21 * US);
}

/* ---- thread ids ---- */

static void test_thread_ids(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  a <- fork({\n"
                          "    x <- fork(return ())\n"
                          "    y <- fork({ z <- fork(return ()); say(z) })\n"
                          "    me <- myThreadId()\n"
                          "    say([me, x, y])\n"
                          "  })\n"
                          "  b <- fork(return ())\n"
                          "  me <- myThreadId()\n"
                          "  say([me, a, b])\n"
                          "  labelThread(a, \"worker\")\n"
                          "  say(show(a))\n"
                          "  delay(1us)\n"
                          "}\n",
                          "[main, 1, 2]\n1\n[1, 1.1, 1.2]\n1.2.1\n");
}

/* ---- the end of the run ---- */

/* When main ends, the run ends: other threads are dropped, and the trace
 * ends with an event naming them. */
static void test_main_end_drops_threads(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  fork({ delay(1us); say(\"late\") })\n"
                          "  fork(forever(yield()))\n"
                          "  yield()\n"
                          "  say(\"bye\")\n"
                          "}\n",
                          "bye\n");
  assert_int_equal(vm_now(u->vm), 0);
  assert_text_equal(unit_text(&u->trace),
                    "       0ns  main         fork 1\n"
                    "       0ns  main         fork 2\n"
                    "       0ns  main         yield\n"
                    "       0ns  1            delay 1us\n"
                    "       0ns  2            yield\n"
                    "       0ns  main         say \"bye\"\n"
                    "       0ns  main         exit\n"
                    "       0ns  -            end: main finished with 2 threads still alive: 1, 2\n");
}

/* --max-time: events at exactly the limit still happen. */
static void test_max_time(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.max_time = 3 * MS;
  UnitVM *u = unit_vm_new_with(&config);
  assert_non_null(u);
  assert_run_fails(u, "main = forever(delay(1ms) >> (now() >>= say))\n", SIM_LIMIT,
                   "simvm: time limit reached: the next event is after 3ms (--max-time)\n");
  assert_text_equal(unit_text(&u->out), "1ms\n2ms\n3ms\n");
  assert_int_equal(vm_now(u->vm), 3 * MS);
  unit_vm_free(u);
}

/* Deadlines saturate at the largest time instead of overflowing. */
static void test_deadline_saturates(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  delay(9223372036854775807ns)\n"
                          "  delay(1s)\n"
                          "  t <- now()\n"
                          "  say(t)\n"
                          "}\n",
                          "9223372036854775807ns\n");
  assert_int_equal(vm_now(u->vm), INT64_MAX);
  assert_int_equal(sched_deadline(INT64_MAX - 5, 10), INT64_MAX);
  assert_int_equal(sched_deadline(100, -7), 100);
  assert_int_equal(sched_deadline(100, 7), 107);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_say_order_across_threads, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_fork_runs_child_later, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_delay_zero_drains_the_queue, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_simulated_time, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_wake_in_time_order, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_computation_takes_no_time, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_same_instant_trace, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_timeouts, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_nested_timeouts, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_timeouts_in_two_threads, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_blocked_thread, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_before_first_run, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_finished_thread, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_self_in_main, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_inside_timeout, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_thread_ids, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_main_end_drops_threads, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test(test_max_time),
      cmocka_unit_test_setup_teardown(test_deadline_saturates, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
