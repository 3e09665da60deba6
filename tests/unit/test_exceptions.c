/* Exceptions through the public API: unwinding (vm/interp/interp.c's unwind and the
 * CATCH, WITH_MASK, MASK_*, TIMEOUT_* handlers), masking, and throwTo's rules
 * (vm/runtime/sched.c): pending exceptions, blocked throwers, and threads taken out
 * of what they wait on when an exception reaches them. The rules are those of
 * docs/SEMANTICS.md (GHC's and io-sim's). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#define US 1000


/* ---- masking state around mask and withMaskingState ---- */

static const char *const st_fn =
    "fn st(label) { s <- getMaskingState(); say(label ++ \": \" ++ s) }\n";

static void test_mask_restored_on_normal_exit(void **state) {
  UnitVM *u = *state;
  char source[2048];
  snprintf(source, sizeof source, "%s%s", st_fn,
           "main = {\n"
           "  st(\"start\")\n"
           "  mask(fn(restore) {\n"
           "    st(\"mask\")\n"
           "    uninterruptibleMask_(st(\"uninterruptible\"))\n"
           "    st(\"mask again\")\n"
           "    restore(st(\"restore\"))\n"
           "    withMaskingState(\"Unmasked\", st(\"explicit unmask\"))\n"
           "    mask_(st(\"mask in mask\"))\n"
           "    st(\"mask end\")\n"
           "  })\n"
           "  st(\"after mask\")\n"
           "  uninterruptibleMask(fn(restore) {\n"
           "    restore(st(\"restore from uninterruptible\"))\n"
           "    mask_(st(\"mask_ in uninterruptible\"))\n"
           "  })\n"
           "  withMaskingState(\"MaskedUninterruptible\", withMaskingState(\"MaskedInterruptible\", st(\"by name\")))\n"
           "  st(\"end\")\n"
           "}\n");
  assert_runs_with_output(u, source,
                          "start: Unmasked\n"
                          "mask: MaskedInterruptible\n"
                          "uninterruptible: MaskedUninterruptible\n"
                          "mask again: MaskedInterruptible\n"
                          "restore: Unmasked\n"
                          "explicit unmask: Unmasked\n"
                          "mask in mask: MaskedInterruptible\n"
                          "mask end: MaskedInterruptible\n"
                          "after mask: Unmasked\n"
                          "restore from uninterruptible: Unmasked\n"
                          "mask_ in uninterruptible: MaskedUninterruptible\n"
                          "by name: MaskedInterruptible\n"
                          "end: Unmasked\n");
}

/* The trace shows each change of state and nothing for a no-op (all of
 * them with --trace=all: mask_ is the prelude's). */
static void test_mask_trace(void **state) {
  UnitVM *u = *state;
  u->vm->config.trace_all = true;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  mask_(mask_(uninterruptibleMask_(return ())))\n"
                          "  withMaskingState(\"Unmasked\", return ())\n"
                          "}\n",
                          "");
  assert_text_equal(unit_text(&u->trace),
                    "       0ns  main         mask MaskedInterruptible\n"
                    "       0ns  main         mask MaskedUninterruptible\n"
                    "       0ns  main         mask MaskedInterruptible\n"
                    "       0ns  main         mask Unmasked\n"
                    "       0ns  main         exit\n");
}

/* How many times `needle` occurs in `haystack`. */
static int count_occurrences(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *s = strstr(haystack, needle); s; s = strstr(s + 1, needle)) n++;
  return n;
}

/* --trace=user, the default, hides the masking the prelude's code does
 * (mask_, bracket, try's handler), but not withMaskingState called by the
 * script, nor a script's own catch; --trace=all shows them all. */
static void test_mask_trace_user(void **state) {
  UnitVM *u = *state;
  const char *source = "main = {\n"
                       "  mask_(withMaskingState(\"MaskedUninterruptible\", return ()))\n"
                       "  r <- try(throw(\"x\"))\n"
                       "  catch(throw(\"y\"), fn(e) => return ())\n"
                       "  bracket(return 1, fn(x) => return (), fn(x) => return x)\n"
                       "}\n";
  assert_runs_with_output(u, source, "");
  assert_text_equal(unit_text(&u->trace),
                    "       0ns  main         mask MaskedUninterruptible\n"
                    "       0ns  main         mask MaskedInterruptible\n"
                    "       0ns  main         throw \"x\"\n"
                    "       0ns  main         throw \"y\"\n"
                    "       0ns  main         caught \"y\"\n"
                    "       0ns  main         mask MaskedInterruptible\n"
                    "       0ns  main         mask Unmasked\n"
                    "       0ns  main         exit\n");
  unit_text_clear(&u->trace);
  u->vm->config.trace_all = true;
  assert_status(vm_run(u->vm), SIM_OK, u);
  const char *all = unit_text(&u->trace);
  assert_contains(all, "       0ns  main         mask MaskedInterruptible\n"
                       "       0ns  main         mask MaskedUninterruptible\n");
  assert_contains(all, "       0ns  main         caught \"x\"\n");
  assert_int_equal(count_occurrences(all, "mask "), 12);
}

/* Leaving mask/withMaskingState by an exception restores the state each
 * frame saved, however many are unwound at once; a runtime error too. */
static void test_mask_restored_by_exception(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  r1 <- try(mask_(throw(\"a\")))\n"
                          "  s1 <- getMaskingState()\n"
                          "  r2 <- try(uninterruptibleMask_(mask_(withMaskingState(\"Unmasked\", throw(\"b\")))))\n"
                          "  s2 <- getMaskingState()\n"
                          "  mask_({\n"
                          "    r3 <- try(uninterruptibleMask_({ say(1 / 0) }))\n"
                          "    s3 <- getMaskingState()\n"
                          "    r4 <- try(withMaskingState(\"Unmasked\", uninterruptibleMask_(throw(\"d\"))))\n"
                          "    s4 <- getMaskingState()\n"
                          "    say([exceptionMessage(r3.exception), s3, r4.exception, s4])\n"
                          "  })\n"
                          "  s5 <- getMaskingState()\n"
                          "  say([r1.exception, s1, r2.exception, s2, s5])\n"
                          "}\n",
                          "[\"division by zero\", \"MaskedInterruptible\", \"d\", \"MaskedInterruptible\"]\n"
                          "[\"a\", \"Unmasked\", \"b\", \"Unmasked\", \"Unmasked\"]\n");
}

/* A child starts in its parent's masking state; a thread dying masked
 * leaves main's state alone (and its death is reported in one line). */
static void test_uncaught_exception_in_mask(void **state) {
  UnitVM *u = *state;
  assert_status(unit_run(u,
                         "main = {\n"
                         "  t <- fork(uninterruptibleMask_({ fork(getMaskingState() >>= say); throw(\"x\") }))\n"
                         "  delay(1us)\n"
                         "  s <- getMaskingState()\n"
                         "  say(\"main \" ++ s)\n"
                         "}\n"),
                SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "MaskedUninterruptible\nmain Unmasked\n");
  assert_text_equal(unit_text(&u->err), "simvm: thread 1 at 0ns: uncaught \"x\" at test.sim:2\n");
}

/* ---- handlers ---- */

/* Handlers run with exceptions masked: MaskedInterruptible, or
 * MaskedUninterruptible when that was the state where catch ran; the state
 * of inner masks the exception left does not count. */
static void test_handler_masking_state(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn h(e) { s <- getMaskingState(); say(show(e) ++ \" \" ++ s) }\n"
                          "main = {\n"
                          "  catch(throw(1), h)\n"
                          "  mask_(catch(throw(2), h))\n"
                          "  uninterruptibleMask_(catch(throw(3), h))\n"
                          "  catch(mask_(throw(4)), h)\n"
                          "  catch(uninterruptibleMask_(throw(5)), h)\n"
                          "  uninterruptibleMask_(catch(withMaskingState(\"Unmasked\", throw(6)), h))\n"
                          "  mask_({ catch(throw(7), h); s <- getMaskingState(); say(\"after 7 \" ++ s) })\n"
                          "  catch({ say(1 / 0) }, fn(e) => getMaskingState() >>= fn(s) => say(exceptionKind(e) ++ \" \" ++ s))\n"
                          "  s <- getMaskingState()\n"
                          "  say(\"end \" ++ s)\n"
                          "}\n",
                          "1 MaskedInterruptible\n"
                          "2 MaskedInterruptible\n"
                          "3 MaskedUninterruptible\n"
                          "4 MaskedInterruptible\n"
                          "5 MaskedInterruptible\n"
                          "6 MaskedUninterruptible\n"
                          "7 MaskedInterruptible\n"
                          "after 7 MaskedInterruptible\n"
                          "ErrorCall MaskedInterruptible\n"
                          "end Unmasked\n");
}

/* A handler runs masked, so a kill arriving while it runs (without
 * blocking) waits for it to finish; the killer waits too. */
static void test_handler_not_interrupted(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork({\n"
                          "    catch(throw(\"x\"), fn(e) { say(\"handler start\"); yield(); say(\"handler end\") })\n"
                          "    say(\"after catch: not reached\")\n"
                          "  })\n"
                          "  yield()\n"
                          "  kill(t)\n"
                          "  say(\"kill returned\")\n"
                          "}\n",
                          "handler start\nhandler end\nkill returned\n");
  assert_contains(unit_text(&u->trace),
                  "       0ns  1            yield\n"
                  "       0ns  main         kill 1\n"
                  "       0ns  1            say \"handler end\"\n"
                  "       0ns  1            mask Unmasked\n"
                  "       0ns  main         wake\n"
                  "       0ns  1            died: ThreadKilled\n");
}

/* catch inside mask: the handler and what follows stay masked; an exception
 * thrown from restore() is caught masked again. */
static void test_catch_inside_mask(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  r <- mask(fn(restore) {\n"
                          "    a <- catch(throw(\"x\"), fn(e) => return \"caught \" ++ e)\n"
                          "    s <- getMaskingState()\n"
                          "    b <- catch(restore(throw(\"y\")), fn(e) { s2 <- getMaskingState(); return e ++ \" in \" ++ s2 })\n"
                          "    s3 <- getMaskingState()\n"
                          "    return [a, s, b, s3]\n"
                          "  })\n"
                          "  say(r)\n"
                          "  w <- fork(mask_({\n"
                          "    r <- catch(delay(10us) >> return \"slept\", fn(e) => return show(e))\n"
                          "    s <- getMaskingState()\n"
                          "    t <- now()\n"
                          "    say([r, s, show(t)])\n"
                          "  }))\n"
                          "  delay(1us)\n"
                          "  kill(w)\n"
                          "  delay(1us)\n"
                          "}\n",
                          "[\"caught x\", \"MaskedInterruptible\", \"y in MaskedInterruptible\", \"MaskedInterruptible\"]\n"
                          "[\"ThreadKilled\", \"MaskedInterruptible\", \"1us\"]\n");
}

/* Nested catches: a rethrow goes to the next catch out, never to the catch
 * whose handler threw; cleanups of nested finally run innermost first. */
static void test_nested_catch_rethrow(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  r <- catch(\n"
                          "         catch(\n"
                          "           catch(throw(\"e1\"), fn(e) { say(\"inner \" ++ e); throw(e ++ \"+\") }),\n"
                          "           fn(e) { say(\"middle \" ++ e); throw(\"e2\") }),\n"
                          "         fn(e) => return \"outer \" ++ e)\n"
                          "  say(r)\n"
                          "  r2 <- catch(catch(return 5, fn(e) => return -1), fn(e) => return -2)\n"
                          "  say(r2)\n"
                          "  r3 <- try(catch(throw(\"a\"), fn(e) => throw(\"from handler\")))\n"
                          "  say(r3)\n"
                          "  r4 <- try(finally(finally(throw(#{kind: \"K\", n: 1}), say(\"inner cleanup\")), say(\"outer cleanup\")))\n"
                          "  say([exceptionKind(r4.exception), r4.exception.n])\n"
                          "  r5 <- catch(catch(throw(\"x\"), throw), fn(e) => return \"rethrown \" ++ e)\n"
                          "  say(r5)\n"
                          "}\n",
                          "inner e1\n"
                          "middle e1+\n"
                          "outer e2\n"
                          "5\n"
                          "#{ok: false, exception: \"from handler\"}\n"
                          "inner cleanup\n"
                          "outer cleanup\n"
                          "[\"K\", 1]\n"
                          "rethrown x\n");
}

/* An exception nobody catches ends main with its report, after the
 * handlers that rethrew it ran. */
static void test_rethrown_to_the_top(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "main = {\n"
                   "  delay(2us)\n"
                   "  catch(mask_(throw(\"boom\")), fn(e) { say(\"cleanup\"); throw(e) })\n"
                   "  say(\"not reached\")\n"
                   "}\n",
                   SIM_FAILED, "simvm: uncaught exception \"boom\" in thread main at simulated time 2us\n");
  assert_text_equal(unit_text(&u->out), "cleanup\n");
}

/* ---- timeouts unwound ---- */

/* A timeout left by another exception cancels its timer: it never fires
 * later, and no timer is left behind. */
static void test_unwound_timeouts_cancel_timers(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  r1 <- try(timeout(5us, throw(\"boom\")))\n"
                          "  r2 <- try(timeout(3us, timeout(6us, { delay(1us); throw(\"deep\") })))\n"
                          "  r3 <- timeout(2us, catch(timeout(5us, delay(10us)), fn(e) { say(\"saw \" ++ exceptionKind(e)); throw(e) }))\n"
                          "  t1 <- now()\n"
                          "  say([r1.exception, r2.exception, r3, t1])\n"
                          "  delay(10us)\n"
                          "  t2 <- now()\n"
                          "  say(t2)\n"
                          "}\n",
                          "saw Timeout\n[\"boom\", \"deep\", none, 3us]\n13us\n");
  assert_int_equal(timer_heap_size(&u->vm->timers), 0);
  assert_int_equal(vm_now(u->vm), 13 * US);
}

/* A timeout's interrupt waiting for a masked action is withdrawn when
 * another exception unwinds the timeout: it never escapes. */
static void test_pending_timeout_withdrawn_when_unwound(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  r <- try(timeout(1us, uninterruptibleMask_({ delay(5us); throw(\"boom\") })))\n"
                          "  t <- now()\n"
                          "  say([r.exception, t])\n"
                          "  delay(1us)\n"
                          "  say(\"still alive\")\n"
                          "}\n",
                          "[\"boom\", 5us]\nstill alive\n");
  assert_int_equal(timer_heap_size(&u->vm->timers), 0);
}

/* ---- pending exceptions and unmasking ---- */

/* Exceptions thrown to a masked, running thread wait; on unmask they are
 * raised in the order thrown, one per unmask, and each thrower wakes when
 * its own is raised. */
static void test_pending_raised_on_unmask(void **state) {
  UnitVM *u = *state;
  u->vm->config.trace_all = true; /* the masking of mask_ and try too */
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork(catch({\n"
                          "    r <- try(mask_({ yield(); yield(); say(\"t unmasking\") }))\n"
                          "    say(\"t got \" ++ show(r))\n"
                          "  }, fn(e) => say(\"t outer caught \" ++ show(e))))\n"
                          "  yield()\n"
                          "  fork({ throwTo(t, \"second\"); say(\"thrower 2 returned\") })\n"
                          "  throwTo(t, \"first\")\n"
                          "  say(\"main returned\")\n"
                          "  delay(1us)\n"
                          "}\n",
                          "t unmasking\nt outer caught second\nmain returned\nthrower 2 returned\n");
  assert_text_equal(unit_text(&u->trace),
                    "       0ns  main         fork 1\n"
                    "       0ns  main         yield\n"
                    "       0ns  1            mask MaskedInterruptible\n"
                    "       0ns  1            yield\n"
                    "       0ns  main         fork 2\n"
                    "       0ns  main         throwTo 1 \"first\"\n"
                    "       0ns  1            yield\n"
                    "       0ns  2            throwTo 1 \"second\"\n"
                    "       0ns  1            say \"t unmasking\"\n"
                    "       0ns  1            mask Unmasked\n"
                    "       0ns  main         wake\n"
                    "       0ns  1            caught \"first\"\n"
                    "       0ns  1            mask MaskedInterruptible\n"
                    "       0ns  1            mask Unmasked\n"
                    "       0ns  2            wake\n"
                    "       0ns  1            caught \"second\"\n"
                    "       0ns  1            mask MaskedInterruptible\n"
                    "       0ns  1            say \"t outer caught second\"\n"
                    "       0ns  1            mask Unmasked\n"
                    "       0ns  1            exit\n"
                    "       0ns  main         say \"main returned\"\n"
                    "       0ns  main         delay 1us\n"
                    "       0ns  2            say \"thrower 2 returned\"\n"
                    "       0ns  2            exit\n"
                    "       1us  main         wake\n"
                    "       1us  main         exit\n");
}

/* restore() inside mask raises what is pending before its action runs;
 * withMaskingState("Unmasked") likewise. */
static void test_pending_raised_by_restore(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn victim(how) = catch(mask(fn(restore) {\n"
                          "    yield()\n"
                          "    say(how ++ \": still masked\")\n"
                          "    if how == \"restore\" then restore(say(\"not reached\")) else withMaskingState(\"Unmasked\", say(\"not reached\"))\n"
                          "    say(\"not reached either\")\n"
                          "  }), fn(e) { s <- getMaskingState(); say(how ++ \": caught \" ++ show(e) ++ \" \" ++ s) })\n"
                          "main = {\n"
                          "  a <- fork(victim(\"restore\"))\n"
                          "  b <- fork(victim(\"unmask\"))\n"
                          "  fork(throwTo(a, \"x\"))\n"
                          "  fork(throwTo(b, \"y\"))\n"
                          "  delay(1us)\n"
                          "  say(\"main done\")\n"
                          "}\n",
                          "restore: still masked\n"
                          "restore: caught x MaskedInterruptible\n"
                          "unmask: still masked\n"
                          "unmask: caught y MaskedInterruptible\n"
                          "main done\n");
}

/* A masked thread that blocks interruptibly (delay, takeMVar, retry) raises
 * what is pending there, before blocking. */
static void test_pending_raised_at_blocking_operation(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn victim(name, act) = catch(mask_({ yield(); say(name ++ \" blocks\"); act; say(\"not reached\") }),\n"
                          "                             fn(e) => say(name ++ \" caught \" ++ show(e)))\n"
                          "main = {\n"
                          "  m <- newEmptyMVar()\n"
                          "  tv <- newTVar(0)\n"
                          "  a <- fork(victim(\"delay\", delay(5us)))\n"
                          "  b <- fork(victim(\"take\", takeMVar(m)))\n"
                          "  c <- fork(victim(\"retry\", atomically(readTVar(tv) >>= fn(v) => check(v > 0))))\n"
                          "  fork(throwTo(a, 1))\n"
                          "  fork(throwTo(b, 2))\n"
                          "  fork(throwTo(c, 3))\n"
                          "  delay(1us)\n"
                          "  t <- now()\n"
                          "  say(\"main done at \" ++ show(t))\n"
                          "  return [m, tv]\n"
                          "}\n",
                          "delay blocks\ndelay caught 1\ntake blocks\ntake caught 2\nretry blocks\nretry caught 3\n"
                          "main done at 1us\n");
  Value result = vm_result(u->vm);
  assert_true(IS_CONS(result));
  Value m = AS_CONS(result)->head, tv = AS_CONS(result)->tail->head;
  assert_null(AS_MVAR(m)->takers_head);
  assert_int_equal(unit_waiter_count(AS_TVAR(tv)), 0);
}

/* ---- a masked target blocks the thrower ---- */

/* Uninterruptibly masked and blocked: the killer waits until the target
 * unmasks; interruptibly masked and blocked: delivered at once. */
static void test_masked_target_blocks_thrower(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork(catch(uninterruptibleMask_({ delay(5us); say(\"target unmasking\") }) >> say(\"not reached\"),\n"
                          "                  fn(e) => say(\"target caught \" ++ show(e))))\n"
                          "  delay(1us)\n"
                          "  kill(t)\n"
                          "  n <- now()\n"
                          "  say(\"kill returned at \" ++ show(n))\n"
                          "  w <- fork(catch(mask_(delay(5us)), fn(e) { s <- getMaskingState(); t <- now(); say(\"w caught \" ++ show(e) ++ \" \" ++ s ++ \" at \" ++ show(t)) }))\n"
                          "  delay(1us)\n"
                          "  kill(w)\n"
                          "  n2 <- now()\n"
                          "  say(\"second kill returned at \" ++ show(n2))\n"
                          "  delay(10us)\n"
                          "}\n",
                          "target unmasking\n"
                          "target caught ThreadKilled\n"
                          "kill returned at 5us\n"
                          "second kill returned at 6us\n"
                          "w caught ThreadKilled MaskedInterruptible at 6us\n");
  assert_int_equal(vm_now(u->vm), 16 * US);
}

/* A thrower waiting on a target that never unmasks is reported in the deadlock. */
static void test_blocked_thrower_in_deadlock_report(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "main = {\n"
                   "  m <- newEmptyMVar()\n"
                   "  t <- fork({ uninterruptibleMask_({ takeMVar(m) }) })\n"
                   "  labelThread(t, \"stuck\")\n"
                   "  delay(1us)\n"
                   "  kill(t)\n"
                   "}\n",
                   SIM_DEADLOCK,
                   "simvm: deadlock at 1us: no thread can run and no timer is set\n"
                   "  thread main is blocked in throwTo 1 (stuck) (it has exceptions masked) at test.sim:6\n"
                   "  thread 1 (stuck) is blocked in takeMVar on <mvar m> at test.sim:3; never filled\n");
}

/* A thrower blocked on a masked target is woken when the target ends
 * without unmasking (it started masked); the exception is dropped. */
static void test_thrower_woken_when_target_ends(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- uninterruptibleMask_(fork({ delay(3us); say(\"target done\") }))\n"
                          "  delay(1us)\n"
                          "  throwTo(t, \"late\")\n"
                          "  n <- now()\n"
                          "  say(\"throwTo returned at \" ++ show(n))\n"
                          "}\n",
                          "target done\nthrowTo returned at 3us\n");
  assert_contains(unit_text(&u->trace),
                  "       3us  1            say \"target done\"\n"
                  "       3us  1            exit\n"
                  "       3us  main         wake\n");
}

/* A thread waiting in throwTo that is itself killed stops waiting, but its
 * exception is still raised when the target unmasks (io-sim's unit_async_10). */
static void test_waiting_thrower_killed_still_delivers(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork(catch(uninterruptibleMask_(delay(5us)) >> say(\"target finished\"),\n"
                          "                  fn(e) => say(\"target caught \" ++ show(e))))\n"
                          "  thrower <- fork(throwTo(t, \"x\") >> say(\"thrower not reached\"))\n"
                          "  delay(1us)\n"
                          "  kill(thrower)\n"
                          "  delay(10us)\n"
                          "}\n",
                          "target caught x\n");
  assert_int_equal(u->vm->live_threads, 0);
}

/* A thread that is made to raise a pending exception at the interruptible
 * point of its own throwTo (masked, with an exception already waiting for
 * it) has abandoned that throwTo: it must not be woken later, from whatever
 * it waits on by then, when the target takes the exception. */
static void test_interrupted_thrower_not_woken_later(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t2 <- fork(uninterruptibleMask_(delay(10us)))\n"
                          "  t1 <- fork(catch(mask_({ yield(); throwTo(t2, \"x\") }),\n"
                          "                   fn(e) { delay(50us); t <- now(); say(\"t1 slept until \" ++ show(t)) }))\n"
                          "  yield()\n"
                          "  throwTo(t1, \"k\")\n"
                          "  delay(100us)\n"
                          "}\n",
                          "t1 slept until 50us\n");
}

/* ... and the exception of that abandoned throwTo is withdrawn, as for a
 * thrower interrupted while waiting (docs/SEMANTICS.md; GHC revokes it). */
static void test_interrupted_throw_to_withdrawn(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t2 <- fork(catch(uninterruptibleMask_(delay(10us)) >> say(\"t2 finished\"),\n"
                          "                   fn(e) => say(\"t2 caught \" ++ show(e))))\n"
                          "  t1 <- fork(catch(mask_({ yield(); throwTo(t2, \"x\"); say(\"t1 not reached\") }),\n"
                          "                   fn(e) => say(\"t1 caught \" ++ show(e))))\n"
                          "  yield()\n"
                          "  throwTo(t1, \"k\")\n"
                          "  delay(100us)\n"
                          "}\n",
                          "t1 caught k\nt2 finished\n");
}

/* ---- kill takes a thread out of what it waits on ---- */

static void test_kill_in_delay_cancels_timer(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "main = {\n"
                   "  t <- fork({ delay(100us); say(\"never\") })\n"
                   "  delay(1us)\n"
                   "  kill(t)\n"
                   "  m <- newEmptyMVar()\n"
                   "  takeMVar(m)\n"
                   "}\n",
                   SIM_DEADLOCK,
                   "simvm: deadlock at 1us: no thread can run and no timer is set\n"
                   "  thread main is blocked in takeMVar on <mvar m> at test.sim:6; never filled\n");
  assert_int_equal(timer_heap_size(&u->vm->timers), 0);
  assert_int_equal(vm_now(u->vm), US);
  assert_text_equal(unit_text(&u->out), "");
}

/* Killed takers, readers and putters leave the MVar's queues and take or
 * put nothing. */
static void test_kill_in_mvar_wait_leaves_queue(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  m <- newEmptyMVar()\n"
                          "  t1 <- fork({ x <- takeMVar(m); say(\"t1 got \" ++ x) })\n"
                          "  r <- fork({ x <- readMVar(m); say(\"r got \" ++ x) })\n"
                          "  t2 <- fork({ x <- takeMVar(m); say(\"t2 got \" ++ x) })\n"
                          "  t3 <- fork({ x <- takeMVar(m); say(\"t3 got \" ++ x) })\n"
                          "  full <- newMVar(\"old\")\n"
                          "  p1 <- fork(putMVar(full, \"p1\"))\n"
                          "  p2 <- fork(putMVar(full, \"p2\"))\n"
                          "  yield()\n"
                          "  kill(t1)\n"
                          "  kill(r)\n"
                          "  kill(t3)\n"
                          "  kill(p1)\n"
                          "  putMVar(m, \"v\")\n"
                          "  yield()\n"
                          "  e <- tryTakeMVar(m)\n"
                          "  a <- takeMVar(full)\n"
                          "  b <- takeMVar(full)\n"
                          "  c <- tryTakeMVar(full)\n"
                          "  say([e, some(a), some(b), c])\n"
                          "  return [m, full]\n"
                          "}\n",
                          "t2 got v\n[none, some(\"old\"), some(\"p2\"), none]\n");
  Value result = vm_result(u->vm);
  assert_true(IS_CONS(result));
  ObjMVar *m = AS_MVAR(AS_CONS(result)->head), *full = AS_MVAR(AS_CONS(result)->tail->head);
  assert_null(m->takers_head);
  assert_null(m->takers_tail);
  assert_null(full->putters_head);
  assert_null(full->putters_tail);
}

/* A killed thread blocked in retry (unmasked, or interruptibly masked) leaves
 * the TVar's waiters: the commit after they died wakes only the other one. */
static void test_kill_in_retry_leaves_waiters(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn waiter(name, tv) { atomically({ v <- readTVar(tv); check(v > 0) }); say(name ++ \" woke\") }\n"
                          "main = {\n"
                          "  tv <- newTVar(0)\n"
                          "  t1 <- fork(waiter(\"t1\", tv))\n"
                          "  t2 <- fork(waiter(\"t2\", tv))\n"
                          "  t3 <- fork(mask_(waiter(\"t3\", tv)))\n"
                          "  yield()\n"
                          "  kill(t1)\n"
                          "  kill(t3)\n"
                          "  yield()\n" /* both have died before the commit */
                          "  atomically(writeTVar(tv, 1))\n"
                          "  say(\"main\")\n"
                          "  yield()\n" /* t2's commit yielded to main: let it say */
                          "  return tv\n"
                          "}\n",
                          "main\nt2 woke\n");
  Value result = vm_result(u->vm);
  assert_true(IS_TVAR(result));
  assert_int_equal(unit_waiter_count(AS_TVAR(result)), 0);
  assert_int_equal(u->vm->live_threads, 0);
}

/* A thread killed before it ever ran, or while runnable in the queue, runs
 * nothing more; its catch handler still sees the kill. */
static void test_kill_runnable_thread(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  a <- fork(catch(say(\"a ran\"), fn(e) => say(\"a caught\")))\n"
                          "  b <- fork(catch({ yield(); say(\"b not reached\") }, fn(e) => say(\"b caught \" ++ show(e))))\n"
                          "  kill(a)\n"
                          "  yield()\n"
                          "  kill(b)\n"
                          "  yield()\n"
                          "  say(\"main\")\n"
                          "}\n",
                          "b caught ThreadKilled\nmain\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_mask_restored_on_normal_exit, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_mask_trace, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_mask_trace_user, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_mask_restored_by_exception, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_uncaught_exception_in_mask, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_handler_masking_state, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_handler_not_interrupted, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_catch_inside_mask, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_nested_catch_rethrow, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_rethrown_to_the_top, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_unwound_timeouts_cancel_timers, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_pending_timeout_withdrawn_when_unwound, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_pending_raised_on_unmask, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_pending_raised_by_restore, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_pending_raised_at_blocking_operation, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_masked_target_blocks_thrower, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_blocked_thrower_in_deadlock_report, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_thrower_woken_when_target_ends, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_waiting_thrower_killed_still_delivers, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_interrupted_thrower_not_woken_later, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_interrupted_throw_to_withdrawn, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_in_delay_cancels_timer, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_in_mvar_wait_leaves_queue, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_in_retry_leaves_waiters, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_kill_runnable_thread, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
