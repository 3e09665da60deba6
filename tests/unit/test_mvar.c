/* vm/runtime/mvar.c: FIFO hand-off between an MVar and the threads waiting on it,
 * called directly on threads built with thread_new (never run), then whole
 * programs through the public API. The rules are those of vm/runtime/mvar.h and
 * docs/SEMANTICS.md (GHC's). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "mvar.h"
#include "sched.h"

#define US 1000

/* ---- fixtures and helpers for the direct tests ---- */



/* Marks a thread's result slot, to see whether a hand-off wrote it. */
#define UNTOUCHED INT_VAL(-999)

/* Children "1", "2", ... of `parent`; the root (parent NULL) is "main". Each
 * has its result slot (stack top) set to UNTOUCHED. */
static ObjThread *new_thread(VM *vm, ObjThread *parent) {
  ObjThread *t = thread_new(vm, parent, UNIT_VAL);
  t->sp[-1] = UNTOUCHED;
  return t;
}



/* The ids of a wait queue, head first, after checking its links: each
 * thread's prev is the one before it, the head's prev and the tail's next
 * are NULL, and `tail` is the last one. */
static const char *queue_ids(ObjThread *head, ObjThread *tail, const char *file, int line) {
  ObjThread *threads[64];
  int count = 0;
  ObjThread *prev = NULL;
  for (ObjThread *t = head; t; prev = t, t = t->wait_next) {
    if (t->wait_prev != prev || count == 64) {
      print_error("wait queue: broken prev link at position %d\n", count);
      _fail(file, line);
    }
    threads[count++] = t;
  }
  if (prev != tail) {
    print_error("wait queue: the tail is not the last thread\n");
    _fail(file, line);
  }
  return unit_thread_ids(threads, count);
}
#define takers(m) queue_ids((m)->takers_head, (m)->takers_tail, __FILE__, __LINE__)
#define readers(m) queue_ids((m)->readers_head, (m)->readers_tail, __FILE__, __LINE__)
#define putters(m) queue_ids((m)->putters_head, (m)->putters_tail, __FILE__, __LINE__)


static void assert_int_value(Value v, int64_t expected) {
  assert_true(IS_INT(v));
  assert_int_equal(AS_INT(v), expected);
}

static void assert_woken(ObjThread *t) {
  assert_int_equal(t->state, THREAD_RUNNABLE);
  assert_int_equal(t->blocked_on, BLOCKED_NONE);
  assert_null(t->wait_object);
  assert_null(t->wait_prev);
  assert_null(t->wait_next);
}

static void assert_waiting(ObjThread *t, ObjMVar *m, BlockReason reason) {
  assert_int_equal(t->state, THREAD_BLOCKED);
  assert_int_equal(t->blocked_on, reason);
  assert_ptr_equal(t->wait_object, &m->obj);
}

/* ---- takers and putters ---- */

static void test_takers_served_fifo(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t1 = new_thread(vm, root), *t2 = new_thread(vm, root), *t3 = new_thread(vm, root);
  ObjMVar *m = obj_mvar(vm, false, UNIT_VAL);
  Value out = UNTOUCHED;
  assert_false(mvar_try_take(vm, m, &out));
  assert_int_value(out, -999);

  mvar_wait(vm, m, t1, BLOCKED_TAKE, UNIT_VAL);
  mvar_wait(vm, m, t2, BLOCKED_TAKE, UNIT_VAL);
  mvar_wait(vm, m, t3, BLOCKED_TAKE, UNIT_VAL);
  assert_waiting(t2, m, BLOCKED_TAKE);
  assert_string_equal(takers(m), "1 2 3");
  assert_string_equal(putters(m), "");

  assert_true(mvar_try_put(vm, m, INT_VAL(10)));
  assert_false(m->full); /* handed over: the MVar stays empty */
  assert_int_value(t1->sp[-1], 10);
  assert_woken(t1);
  assert_string_equal(takers(m), "2 3");
  assert_ptr_equal(t2->wait_prev, NULL);

  assert_true(mvar_try_put(vm, m, INT_VAL(20)));
  assert_true(mvar_try_put(vm, m, INT_VAL(30)));
  assert_int_value(t2->sp[-1], 20);
  assert_int_value(t3->sp[-1], 30);
  assert_string_equal(takers(m), "");
  assert_null(m->takers_head);
  assert_null(m->takers_tail);
  assert_string_equal(unit_run_queue_ids(vm), "1 2 3");

  /* nobody waits: the value stays, and a second put is refused */
  assert_true(mvar_try_put(vm, m, INT_VAL(40)));
  assert_true(m->full);
  assert_int_value(m->value, 40);
  assert_false(mvar_try_put(vm, m, INT_VAL(50)));
  assert_int_value(m->value, 40);
  assert_int_equal(vm->run_queue.count, 3);
}

/* A take from a full MVar refills it from the first waiting putter, which
 * wakes with () as its result. */
static void test_take_refills_from_first_putter(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *p1 = new_thread(vm, root), *p2 = new_thread(vm, root), *p3 = new_thread(vm, root);
  ObjMVar *m = obj_mvar(vm, true, INT_VAL(0));
  mvar_wait(vm, m, p1, BLOCKED_PUT, INT_VAL(1));
  mvar_wait(vm, m, p2, BLOCKED_PUT, INT_VAL(2));
  mvar_wait(vm, m, p3, BLOCKED_PUT, INT_VAL(3));
  assert_waiting(p3, m, BLOCKED_PUT);
  assert_int_value(p3->wait_value, 3);
  assert_string_equal(putters(m), "1 2 3");
  assert_string_equal(takers(m), "");

  Value out;
  for (int i = 0; i < 3; i++) {
    assert_true(mvar_try_take(vm, m, &out));
    assert_int_value(out, i);
    assert_true(m->full);
    assert_int_value(m->value, i + 1);
  }
  assert_string_equal(putters(m), "");
  assert_string_equal(unit_run_queue_ids(vm), "1 2 3");
  assert_woken(p1);
  assert_true(IS_UNIT(p1->sp[-1]));
  assert_true(IS_UNIT(p3->wait_value));

  assert_true(mvar_try_take(vm, m, &out));
  assert_int_value(out, 3);
  assert_false(m->full);
  assert_false(mvar_try_take(vm, m, &out));
  assert_int_value(out, 3);
}

/* A put into an empty MVar wakes every waiting reader with the value (in
 * queue order), then hands it to the first taker; later takers keep waiting. */
static void test_readers_served_before_first_taker(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t[6];
  for (int i = 0; i < 6; i++) t[i] = new_thread(vm, root);
  ObjMVar *m = obj_mvar(vm, false, UNIT_VAL);
  mvar_wait(vm, m, t[0], BLOCKED_TAKE, UNIT_VAL); /* 1 taker  */
  mvar_wait(vm, m, t[1], BLOCKED_READ, UNIT_VAL); /* 2 reader */
  mvar_wait(vm, m, t[2], BLOCKED_TAKE, UNIT_VAL); /* 3 taker  */
  mvar_wait(vm, m, t[3], BLOCKED_READ, UNIT_VAL); /* 4 reader */
  mvar_wait(vm, m, t[4], BLOCKED_TAKE, UNIT_VAL); /* 5 taker  */
  mvar_wait(vm, m, t[5], BLOCKED_READ, UNIT_VAL); /* 6 reader */
  assert_waiting(t[1], m, BLOCKED_READ);
  assert_string_equal(takers(m), "1 3 5"); /* readers queue apart */
  assert_string_equal(readers(m), "2 4 6");

  assert_true(mvar_try_put(vm, m, INT_VAL(7)));
  assert_string_equal(unit_run_queue_ids(vm), "2 4 6 1");
  assert_string_equal(takers(m), "3 5");
  assert_string_equal(readers(m), "");
  assert_false(m->full);
  assert_int_value(t[1]->sp[-1], 7);
  assert_int_value(t[3]->sp[-1], 7);
  assert_int_value(t[5]->sp[-1], 7);
  assert_int_value(t[0]->sp[-1], 7);
  assert_int_value(t[2]->sp[-1], -999);
  assert_woken(t[5]);
  assert_waiting(t[2], m, BLOCKED_TAKE);

  /* a reader arriving after a taker is still served before it */
  ObjThread *late = new_thread(vm, root); /* 7 */
  mvar_wait(vm, m, late, BLOCKED_READ, UNIT_VAL);
  assert_true(mvar_try_put(vm, m, INT_VAL(8)));
  assert_string_equal(unit_run_queue_ids(vm), "2 4 6 1 7 3");
  assert_string_equal(takers(m), "5");
  assert_int_value(late->sp[-1], 8);
  assert_int_value(t[2]->sp[-1], 8);
  assert_false(m->full);
}

/* With only readers waiting, a put wakes them all and the value stays. */
static void test_readers_only_leave_the_value(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *r1 = new_thread(vm, root), *r2 = new_thread(vm, root);
  ObjMVar *m = obj_mvar(vm, false, UNIT_VAL);
  mvar_wait(vm, m, r1, BLOCKED_READ, UNIT_VAL);
  mvar_wait(vm, m, r2, BLOCKED_READ, UNIT_VAL);
  assert_true(mvar_try_put(vm, m, INT_VAL(5)));
  assert_true(m->full);
  assert_int_value(m->value, 5);
  assert_int_value(r1->sp[-1], 5);
  assert_int_value(r2->sp[-1], 5);
  assert_string_equal(takers(m), "");
  assert_string_equal(unit_run_queue_ids(vm), "1 2");
}

/* ---- try operations ---- */

static void test_try_operations(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjMVar *m = obj_mvar(vm, false, UNIT_VAL);
  Value out = UNTOUCHED;
  assert_false(mvar_try_read(m, &out));
  assert_false(mvar_try_take(vm, m, &out));
  assert_int_value(out, -999);

  assert_true(mvar_try_put(vm, m, INT_VAL(1)));
  assert_false(mvar_try_put(vm, m, INT_VAL(2)));
  assert_true(mvar_try_read(m, &out));
  assert_int_value(out, 1);
  assert_true(m->full); /* reading leaves it */
  assert_true(mvar_try_read(m, &out));
  assert_int_value(out, 1);
  assert_true(mvar_try_take(vm, m, &out));
  assert_int_value(out, 1);
  assert_false(m->full);
  assert_true(IS_UNIT(m->value));
  assert_false(mvar_try_read(m, &out));
  assert_int_value(out, 1);
  assert_int_equal(vm->run_queue.count, 0);

  ObjMVar *full = obj_mvar(vm, true, INT_VAL(3));
  assert_true(mvar_try_read(full, &out));
  assert_int_value(out, 3);
}

/* ---- cancelling a wait ---- */

static void test_cancel_wait_head_middle_tail(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t[5];
  for (int i = 0; i < 5; i++) t[i] = new_thread(vm, root);
  ObjMVar *m = obj_mvar(vm, false, UNIT_VAL);
  for (int i = 0; i < 5; i++) mvar_wait(vm, m, t[i], i == 2 ? BLOCKED_READ : BLOCKED_TAKE, UNIT_VAL);
  assert_string_equal(takers(m), "1 2 4 5");
  assert_string_equal(readers(m), "3");

  mvar_cancel_wait(t[0]); /* the head */
  assert_string_equal(takers(m), "2 4 5");
  assert_null(t[0]->wait_prev);
  assert_null(t[0]->wait_next);
  assert_null(t[0]->wait_object);

  mvar_cancel_wait(t[2]); /* a reader, its queue's only one */
  assert_string_equal(takers(m), "2 4 5");
  assert_string_equal(readers(m), "");
  assert_null(m->readers_tail);
  assert_null(t[2]->wait_next);

  mvar_cancel_wait(t[4]); /* the tail */
  assert_string_equal(takers(m), "2 4");
  assert_ptr_equal(m->takers_tail, t[3]);

  /* a thread queued after cancellations goes to the (new) tail */
  ObjThread *late = new_thread(vm, root); /* 6 */
  mvar_wait(vm, m, late, BLOCKED_TAKE, UNIT_VAL);
  assert_string_equal(takers(m), "2 4 6");

  mvar_cancel_wait(t[3]);
  mvar_cancel_wait(t[1]);
  assert_string_equal(takers(m), "6");
  assert_ptr_equal(m->takers_head, late);
  mvar_cancel_wait(late); /* the only one */
  assert_null(m->takers_head);
  assert_null(m->takers_tail);
  assert_int_equal(vm->run_queue.count, 0); /* cancelling wakes nobody */

  /* the cancelled took nothing: a put finds nobody waiting */
  assert_true(mvar_try_put(vm, m, INT_VAL(1)));
  assert_true(m->full);
  for (int i = 0; i < 5; i++) assert_int_value(t[i]->sp[-1], -999);
}

/* A cancelled putter's value never gets into the MVar; the next putter's does. */
static void test_cancel_putter(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *p1 = new_thread(vm, root), *p2 = new_thread(vm, root), *p3 = new_thread(vm, root);
  ObjMVar *m = obj_mvar(vm, true, INT_VAL(0));
  mvar_wait(vm, m, p1, BLOCKED_PUT, INT_VAL(1));
  mvar_wait(vm, m, p2, BLOCKED_PUT, INT_VAL(2));
  mvar_wait(vm, m, p3, BLOCKED_PUT, INT_VAL(3));
  mvar_cancel_wait(p2);
  assert_string_equal(putters(m), "1 3");
  assert_true(IS_UNIT(p2->wait_value));
  mvar_cancel_wait(p1);
  assert_string_equal(putters(m), "3");
  Value out;
  assert_true(mvar_try_take(vm, m, &out));
  assert_int_value(out, 0);
  assert_int_value(m->value, 3);
  assert_string_equal(unit_run_queue_ids(vm), "3");
  assert_string_equal(putters(m), "");
  assert_true(mvar_try_take(vm, m, &out));
  assert_int_value(out, 3);
  assert_false(m->full);
}

/* Takers and putters of different MVars do not mix. */
static void test_queues_are_per_mvar(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t1 = new_thread(vm, root), *t2 = new_thread(vm, root), *t3 = new_thread(vm, root);
  ObjMVar *a = obj_mvar(vm, false, UNIT_VAL), *b = obj_mvar(vm, false, UNIT_VAL);
  mvar_wait(vm, a, t1, BLOCKED_TAKE, UNIT_VAL);
  mvar_wait(vm, b, t2, BLOCKED_TAKE, UNIT_VAL);
  mvar_wait(vm, a, t3, BLOCKED_TAKE, UNIT_VAL);
  assert_string_equal(takers(a), "1 3");
  assert_string_equal(takers(b), "2");
  assert_true(mvar_try_put(vm, b, INT_VAL(1)));
  assert_string_equal(unit_run_queue_ids(vm), "2");
  assert_string_equal(takers(a), "1 3");
  mvar_cancel_wait(t1);
  assert_string_equal(takers(a), "3");
  assert_string_equal(takers(b), "");
}

/* ---- whole programs ---- */

static void test_program_takers_fifo(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn taker(name, m) { x <- takeMVar(m); say(name ++ \" \" ++ show(x)) }\n"
                          "main = {\n"
                          "  m <- newEmptyMVar()\n"
                          "  labelMVar(m, \"box\")\n"
                          "  fork(taker(\"t1\", m))\n"
                          "  fork(taker(\"t2\", m))\n"
                          "  fork(taker(\"t3\", m))\n"
                          "  yield()\n"
                          "  putMVar(m, 1)\n"
                          "  putMVar(m, 2)\n"
                          "  putMVar(m, 3)\n"
                          "  putMVar(m, 4)\n"
                          "  say(\"main put 4\")\n"
                          "  yield()\n"
                          "  x <- takeMVar(m)\n"
                          "  say(x)\n"
                          "}\n",
                          "main put 4\nt1 1\nt2 2\nt3 3\n4\n");
  assert_contains(unit_text(&u->trace),
                  "       0ns  1            takeMVar blocked on <mvar box>\n"
                  "       0ns  2            takeMVar blocked on <mvar box>\n"
                  "       0ns  3            takeMVar blocked on <mvar box>\n"
                  "       0ns  main         putMVar <mvar box> 1\n"
                  "       0ns  1            wake\n"
                  "       0ns  main         putMVar <mvar box> 2\n"
                  "       0ns  2            wake\n"
                  "       0ns  main         putMVar <mvar box> 3\n"
                  "       0ns  3            wake\n"
                  "       0ns  main         putMVar <mvar box> 4\n"
                  "       0ns  main         say \"main put 4\"\n");
}

/* Blocked putters get in one by one, in order, as takes make room. */
static void test_program_putters_fifo(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn putter(name, m, v) { putMVar(m, v); say(name ++ \" done\") }\n"
                          "main = {\n"
                          "  m <- newMVar(0)\n"
                          "  fork(putter(\"p1\", m, 1))\n"
                          "  fork(putter(\"p2\", m, 2))\n"
                          "  fork(putter(\"p3\", m, 3))\n"
                          "  yield()\n"
                          "  a <- takeMVar(m)\n"
                          "  b <- takeMVar(m)\n"
                          "  say([a, b])\n"
                          "  yield()\n"
                          "  c <- takeMVar(m)\n"
                          "  d <- takeMVar(m)\n"
                          "  e <- tryTakeMVar(m)\n"
                          "  say([c, d, e])\n"
                          "  yield()\n"
                          "}\n",
                          "[0, 1]\np1 done\np2 done\n[2, 3, none]\np3 done\n");
}

/* readMVar leaves the value; readers are served before the first taker. */
static void test_program_readers_and_takers(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  m <- newEmptyMVar()\n"
                          "  fork({ x <- takeMVar(m); say(\"t1 \" ++ x) })\n"
                          "  fork({ x <- readMVar(m); say(\"r1 \" ++ x) })\n"
                          "  fork({ x <- takeMVar(m); say(\"t2 \" ++ x) })\n"
                          "  fork({ x <- readMVar(m); say(\"r2 \" ++ x) })\n"
                          "  yield()\n"
                          "  putMVar(m, \"v\")\n"
                          "  say(\"put v\")\n"
                          "  yield()\n"
                          "  putMVar(m, \"w\")\n"
                          "  yield()\n"
                          "  putMVar(m, \"x\")\n"
                          "  y <- readMVar(m)\n"
                          "  z <- readMVar(m)\n"
                          "  e <- tryTakeMVar(m)\n"
                          "  f <- tryTakeMVar(m)\n"
                          "  say([y, z, e, f])\n"
                          "}\n",
                          "put v\nr1 v\nr2 v\nt1 v\nt2 w\n[\"x\", \"x\", some(\"x\"), none]\n");
}

/* tryPutMVar/tryTakeMVar never block; tryTakeMVar refills from a waiting
 * putter and tryPutMVar hands over to a waiting taker. */
static void test_program_try_operations(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  m <- newEmptyMVar()\n"
                          "  a <- tryTakeMVar(m)\n"
                          "  b <- tryPutMVar(m, 1)\n"
                          "  c <- tryPutMVar(m, 2)\n"
                          "  fork({ putMVar(m, 3); say(\"putter done\") })\n"
                          "  yield()\n"
                          "  d <- tryTakeMVar(m)\n"
                          "  e <- tryTakeMVar(m)\n"
                          "  f <- tryTakeMVar(m)\n"
                          "  say([a, b, c, d, e, f])\n"
                          "  fork({ x <- takeMVar(m); say(\"taker got \" ++ show(x)) })\n"
                          "  yield()\n"
                          "  g <- tryPutMVar(m, 4)\n"
                          "  h <- tryTakeMVar(m)\n"
                          "  say([g, h])\n"
                          "  yield()\n"
                          "}\n",
                          "[none, true, false, some(1), some(3), none]\n"
                          "putter done\n"
                          "[true, none]\n"
                          "taker got 4\n");
}

/* A taker cut off by a timeout leaves the queue and takes nothing later. */
static void test_program_timeout_leaves_queue(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  m <- newEmptyMVar()\n"
                          "  fork({ r <- timeout(2us, takeMVar(m)); say(\"t1 \" ++ show(r)) })\n"
                          "  fork({ r <- timeout(5us, takeMVar(m)); say(\"t2 \" ++ show(r)) })\n"
                          "  delay(3us)\n"
                          "  putMVar(m, \"a\")\n"
                          "  putMVar(m, \"b\")\n"
                          "  yield()\n"
                          "  x <- takeMVar(m)\n"
                          "  say(x)\n"
                          "  return m\n"
                          "}\n",
                          "t1 none\nt2 some(\"a\")\nb\n");
  Value result = vm_result(u->vm);
  assert_true(IS_MVAR(result));
  assert_null(AS_MVAR(result)->takers_head);
  assert_null(AS_MVAR(result)->putters_head);
  assert_false(AS_MVAR(result)->full);
  assert_int_equal(vm_now(u->vm), 3 * US);
}

/* A deadlock names each thread with the MVar operation it waits in. */
static void test_program_deadlock_report(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "main = {\n"
                   "  full <- newMVar(0)\n"
                   "  labelMVar(full, \"full\")\n"
                   "  empty <- newEmptyMVar()\n"
                   "  labelMVar(empty, \"empty\")\n"
                   "  fork({ putMVar(full, 1) })\n"
                   "  fork({ readMVar(empty) })\n"
                   "  delay(2us)\n"
                   "  takeMVar(empty)\n"
                   "}\n",
                   SIM_DEADLOCK,
                   "simvm: deadlock at 2us: no thread can run and no timer is set\n"
                   "  thread main is blocked in takeMVar on <mvar empty> at test.sim:9; never filled\n"
                   "  thread 1 is blocked in putMVar on <mvar full> at test.sim:6; full from the start\n"
                   "  thread 2 is blocked in readMVar on <mvar empty> at test.sim:7; never filled\n");
}

static void test_program_type_errors(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u, "main = {\n  m <- newMVar(1)\n  putMVar(3, m)\n}\n", SIM_FAILED,
                   "test.sim:3: runtime error: putMVar needs an MVar, not int\n"
                   "  in thread main at simulated time 0ns\n"
                   "  at test.sim:3 in main\n");
}

/* ---- cost: each operation is O(1), whatever waits ---- */

/* The work (vm->work: a unit per waiting thread an operation visits) of
 * `n` takers and a reader served by n + 1 puts, the reader last in line. */
static uint64_t work_of_puts(VM *vm, int n) {
  ObjThread *root = new_thread(vm, NULL);
  ObjMVar *m = obj_mvar(vm, false, UNIT_VAL);
  for (int i = 0; i < n; i++) mvar_wait(vm, m, new_thread(vm, root), BLOCKED_TAKE, UNIT_VAL);
  ObjThread *reader = new_thread(vm, root);
  mvar_wait(vm, m, reader, BLOCKED_READ, UNIT_VAL);
  uint64_t before = vm->work;
  for (int i = 0; i <= n; i++) assert_true(mvar_try_put(vm, m, INT_VAL(i)));
  assert_int_value(reader->sp[-1], 0); /* the first put served the reader too */
  assert_null(m->takers_head);
  return vm->work - before;
}

/* A put used to walk every waiting taker looking for readers: n puts to n
 * takers visited n^2 / 2 threads (50,000 takers 2.9 s, 100,000 14.4 s).
 * Now readers wait in a queue of their own: the work is linear. */
static void test_puts_linear_in_takers(void **state) {
  UnitVM *u = *state;
  uint64_t small = work_of_puts(u->vm, 1000), large = work_of_puts(u->vm, 4000);
  if (large > 5 * small) {
    print_error("4x the takers took %.1fx the work (%llu, %llu)\n", (double)large / (double)small,
                (unsigned long long)small, (unsigned long long)large);
    fail();
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_takers_served_fifo, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_take_refills_from_first_putter, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_readers_served_before_first_taker, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_readers_only_leave_the_value, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_try_operations, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_cancel_wait_head_middle_tail, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_cancel_putter, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_queues_are_per_mvar, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_puts_linear_in_takers, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_program_takers_fifo, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_program_putters_fifo, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_program_readers_and_takers, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_program_try_operations, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_program_timeout_leaves_queue, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_program_deadlock_report, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_program_type_errors, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
