/* vm/runtime/stm.c: the undo log, the read set, commit and the waiters of TVars,
 * called directly on threads built with thread_new; then whole programs
 * (orElse, retry, exceptions in transactions, registerDelay) through the
 * public API. The rules are those of vm/runtime/stm.h and docs/SEMANTICS.md. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "sched.h"
#include "stm.h"

#define US 1000

/* ---- fixtures and helpers for the direct tests ---- */



/* The root thread ("main") and its children "1", "2", ... (never queued, never run). */
static ObjThread *new_thread(VM *vm, ObjThread *parent) { return thread_new(vm, parent, UNIT_VAL); }

static ObjTVar *new_tvar(VM *vm, int64_t value) { return obj_tvar(vm, INT_VAL(value)); }

static int64_t tvar_int(const ObjTVar *tvar) {
  assert_true(IS_INT(tvar->value));
  return AS_INT(tvar->value);
}

/* The ids of a list of threads, space-separated, into a static buffer. */

static const char *waiter_ids(ObjTVar *tvar) {
  ObjThread *threads[64];
  int n = unit_waiter_count(tvar);
  assert_true(n <= 64);
  for (int i = 0; i < n; i++) threads[i] = tvar->waiters[i].thread;
  return unit_thread_ids(threads, n);
}


/* Block `thread` in retry after a transaction that read `tvars` in order. */
static void block_on(VM *vm, ObjThread *thread, ObjTVar **tvars, int count) {
  stm_begin(vm, thread);
  for (int i = 0; i < count; i++) stm_read(vm, tvars[i]);
  stm_block(vm, thread);
}

/* How many times `needle` occurs in `haystack`. */
static int count_occurrences(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *s = strstr(haystack, needle); s; s = strstr(s + 1, needle)) n++;
  return n;
}

/* ---- the undo log ---- */

/* Rolling back to a mark undoes exactly the writes after it, newest first:
 * a TVar written twice after the mark gets the value from before both. */
static void test_rollback_to_mark_restores_in_reverse(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *t = new_thread(vm, NULL);
  ObjTVar *a = new_tvar(vm, 1), *b = new_tvar(vm, 2);

  stm_begin(vm, t);
  assert_true(t->in_transaction);
  assert_int_equal(vm->stm.undo_count, 0);
  stm_write(vm, a, INT_VAL(10));
  int mark = vm->stm.undo_count;
  assert_int_equal(mark, 1);
  stm_write(vm, b, INT_VAL(20));
  stm_write(vm, a, INT_VAL(30));
  stm_write(vm, a, INT_VAL(40));
  stm_write(vm, b, INT_VAL(50));
  assert_int_equal(vm->stm.undo_count, 5);
  assert_int_equal(tvar_int(a), 40);
  assert_int_equal(tvar_int(b), 50);
  /* each entry holds the value just before its write */
  assert_ptr_equal(vm->stm.undo[3].tvar, a);
  assert_int_equal(AS_INT(vm->stm.undo[3].old), 30);
  assert_ptr_equal(vm->stm.undo[4].tvar, b);
  assert_int_equal(AS_INT(vm->stm.undo[4].old), 20);

  stm_rollback(vm, mark);
  assert_int_equal(vm->stm.undo_count, 1);
  assert_int_equal(tvar_int(a), 10); /* the value at the mark, not 30 (forward order would give 30) */
  assert_int_equal(tvar_int(b), 2);

  /* the mark where the log already is: nothing changes */
  stm_rollback(vm, 1);
  assert_int_equal(vm->stm.undo_count, 1);
  assert_int_equal(tvar_int(a), 10);

  stm_write(vm, b, INT_VAL(7));
  stm_rollback(vm, 0);
  assert_int_equal(vm->stm.undo_count, 0);
  assert_int_equal(tvar_int(a), 1);
  assert_int_equal(tvar_int(b), 2);
  assert_true(t->in_transaction); /* rollback alone does not end the transaction */
}

/* Nested marks, as nested orElse uses them: the inner rollback keeps the
 * outer branch's writes, the outer one removes both. */
static void test_nested_marks(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *t = new_thread(vm, NULL);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0), *c = new_tvar(vm, 0);
  stm_begin(vm, t);
  stm_write(vm, a, INT_VAL(1));
  int outer = vm->stm.undo_count;
  stm_write(vm, b, INT_VAL(2));
  stm_write(vm, a, INT_VAL(3));
  int inner = vm->stm.undo_count;
  stm_write(vm, c, INT_VAL(4));
  stm_write(vm, b, INT_VAL(5));
  stm_rollback(vm, inner);
  assert_int_equal(vm->stm.undo_count, 3);
  assert_int_equal(tvar_int(a), 3);
  assert_int_equal(tvar_int(b), 2);
  assert_int_equal(tvar_int(c), 0);
  stm_rollback(vm, outer);
  assert_int_equal(vm->stm.undo_count, 1);
  assert_int_equal(tvar_int(a), 1);
  assert_int_equal(tvar_int(b), 0);
  assert_int_equal(tvar_int(c), 0);
}

/* The log grows past its first allocation and still undoes every write. */
static void test_long_undo_log(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *t = new_thread(vm, NULL);
  ObjTVar *tvars[5];
  for (int i = 0; i < 5; i++) tvars[i] = new_tvar(vm, -i);
  stm_begin(vm, t);
  for (int i = 0; i < 100; i++) stm_write(vm, tvars[i % 5], INT_VAL(i));
  assert_int_equal(vm->stm.undo_count, 100);
  for (int i = 0; i < 5; i++) assert_int_equal(tvar_int(tvars[i]), 95 + i);
  stm_rollback(vm, 50);
  for (int i = 0; i < 5; i++) assert_int_equal(tvar_int(tvars[i]), 45 + i);
  stm_rollback(vm, 0);
  for (int i = 0; i < 5; i++) assert_int_equal(tvar_int(tvars[i]), -i);
}

/* ---- the read set ---- */

static void test_read_set_holds_each_tvar_once(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *t = new_thread(vm, NULL);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0), *c = new_tvar(vm, 0);
  stm_begin(vm, t);
  stm_read(vm, a);
  stm_read(vm, b);
  stm_read(vm, a);
  stm_write(vm, c, INT_VAL(1)); /* a write is not a read */
  stm_read(vm, c);
  stm_read(vm, b);
  stm_read(vm, c);
  assert_int_equal(vm->stm.read_count, 3);
  assert_ptr_equal(vm->stm.reads[0], a);
  assert_ptr_equal(vm->stm.reads[1], b);
  assert_ptr_equal(vm->stm.reads[2], c);

  /* a new transaction starts with an empty read set, and reads again */
  stm_begin(vm, t);
  assert_int_equal(vm->stm.read_count, 0);
  assert_int_equal(vm->stm.undo_count, 0);
  stm_read(vm, b);
  stm_read(vm, b);
  assert_int_equal(vm->stm.read_count, 1);
  assert_ptr_equal(vm->stm.reads[0], b);

  /* blocking in retry makes the read set the thread's wait set: the
   * next transaction, another thread's, starts empty and leaves it alone */
  stm_read(vm, a);
  stm_block(vm, t);
  assert_int_equal(t->wait_count, 2);
  assert_ptr_equal(t->wait_set[0], b);
  assert_ptr_equal(t->wait_set[1], a);
  ObjThread *other = new_thread(vm, t);
  stm_begin(vm, other);
  assert_int_equal(vm->stm.read_count, 0);
  stm_read(vm, c);
  stm_read(vm, b);
  assert_int_equal(vm->stm.read_count, 2);
  assert_ptr_equal(vm->stm.reads[0], c);
  assert_int_equal(t->wait_count, 2);
  assert_ptr_equal(t->wait_set[0], b);
  assert_ptr_equal(t->wait_set[1], a);
}

/* Many distinct TVars: the set grows, each is kept once, in read order. */
static void test_read_set_grows(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *t = new_thread(vm, NULL);
  ObjTVar *tvars[40];
  for (int i = 0; i < 40; i++) tvars[i] = new_tvar(vm, i);
  stm_begin(vm, t);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 40; i++) stm_read(vm, tvars[(i * 7) % 40]);
  assert_int_equal(vm->stm.read_count, 40);
  for (int i = 0; i < 40; i++) assert_ptr_equal(vm->stm.reads[i], tvars[(i * 7) % 40]);
}

/* ---- blocking, cancelling, committing ---- */

static void test_block_registers_waiters(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t1 = new_thread(vm, root), *t2 = new_thread(vm, root);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0);

  stm_begin(vm, t1);
  stm_read(vm, a);
  stm_write(vm, b, INT_VAL(9));
  stm_rollback(vm, 0); /* as TX_ABORT does before blocking */
  stm_read(vm, b);
  stm_block(vm, t1);
  assert_int_equal(t1->state, THREAD_BLOCKED);
  assert_int_equal(t1->blocked_on, BLOCKED_STM);
  assert_false(t1->in_transaction);
  assert_int_equal(vm->stm.undo_count, 0);
  assert_int_equal(t1->wait_count, 2); /* kept: the deadlock report names them */
  assert_int_equal(tvar_int(b), 0);

  ObjTVar *both[] = {b, a};
  block_on(vm, t2, both, 2);
  assert_true(t2->block_seq > t1->block_seq);
  assert_string_equal(waiter_ids(a), "1 2");
  assert_string_equal(waiter_ids(b), "1 2");
  assert_int_equal(vm->run_queue.count, 0);
}

/* stm_cancel_wait takes the thread off every TVar it waits on, wherever it
 * is in their lists, and leaves the others in order. */
static void test_cancel_wait_keeps_lists_consistent(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t[5];
  for (int i = 0; i < 5; i++) t[i] = new_thread(vm, root);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0), *c = new_tvar(vm, 0);
  ObjTVar *abc[] = {a, b, c}, *ba[] = {b, a}, *onlyb[] = {b}, *ca[] = {c, a};
  block_on(vm, t[0], abc, 3);   /* 1: a b c */
  block_on(vm, t[1], onlyb, 1); /* 2: b     */
  block_on(vm, t[2], ba, 2);    /* 3: a b   */
  block_on(vm, t[3], ca, 2);    /* 4: a c   */
  block_on(vm, t[4], abc, 3);   /* 5: a b c */
  assert_string_equal(waiter_ids(a), "1 3 4 5");
  assert_string_equal(waiter_ids(b), "1 2 3 5");
  assert_string_equal(waiter_ids(c), "1 4 5");

  stm_cancel_wait(t[0]); /* the head of every list */
  assert_string_equal(waiter_ids(a), "3 4 5");
  assert_string_equal(waiter_ids(b), "2 3 5");
  assert_string_equal(waiter_ids(c), "4 5");
  assert_int_equal(t[0]->wait_count, 0);

  stm_cancel_wait(t[2]); /* the middle */
  assert_string_equal(waiter_ids(a), "4 5");
  assert_string_equal(waiter_ids(b), "2 5");
  assert_string_equal(waiter_ids(c), "4 5");

  stm_cancel_wait(t[4]); /* the tail */
  assert_string_equal(waiter_ids(a), "4");
  assert_string_equal(waiter_ids(b), "2");
  assert_string_equal(waiter_ids(c), "4");

  stm_cancel_wait(t[3]);
  stm_cancel_wait(t[1]);
  assert_int_equal(unit_waiter_count(a), 0);
  assert_int_equal(unit_waiter_count(b), 0);
  assert_int_equal(unit_waiter_count(c), 0);

  /* cancelling again (nothing left to leave) changes nothing */
  stm_cancel_wait(t[1]);
  assert_int_equal(unit_waiter_count(b), 0);
  assert_int_equal(vm->run_queue.count, 0); /* cancelling wakes nobody */
}

/* A transaction of `writer` that writes the `count` TVars in that order
 * and commits (waking their waiters TVar by TVar): how many woke. */
static int commit_writes(VM *vm, ObjThread *writer, ObjTVar **tvars, int count) {
  stm_begin(vm, writer);
  for (int i = 0; i < count; i++) stm_write(vm, tvars[i], INT_VAL(1));
  return stm_commit(vm, writer, false);
}

/* Waking many waiters is linear: a thread that stops waiting leaves a stale
 * entry rather than being searched for in every list (which made 160 000
 * waiters take 4 s). Stale entries are dropped when the TVar is written,
 * when its list is full, and by the collector, so lists stay small. */
static void test_many_waiters_wake_in_order(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  enum { N = 20000 };
  ObjThread *root = new_thread(vm, NULL);
  ObjThread **t = malloc(N * sizeof *t);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0);
  ObjTVar *ab[] = {a, b};
  for (int i = 0; i < N; i++) {
    t[i] = new_thread(vm, root);
    block_on(vm, t[i], ab, 2);
  }
  ObjThread *writer = new_thread(vm, root);
  assert_int_equal(commit_writes(vm, writer, &b, 1), N);
  assert_int_equal(vm->run_queue.count, N);
  for (int i = 0; i < N; i++) {
    Obj *entry = vm->run_queue.items[(vm->run_queue.head + i) & (vm->run_queue.capacity - 1)];
    assert_ptr_equal(entry, &t[i]->obj); /* in the order they blocked */
    assert_int_equal(t[i]->blocked_on, BLOCKED_NONE);
  }
  assert_int_equal(unit_waiter_count(a), 0); /* all stale on a, which was not written */
  assert_int_equal(commit_writes(vm, writer, &a, 1), 0);
  free(t);
}

static void test_stale_waiters_do_not_pile_up(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *t = new_thread(vm, NULL);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0);
  ObjTVar *ab[] = {a, b};
  for (int i = 0; i < 1000; i++) {
    block_on(vm, t, ab, 2);
    assert_int_equal(commit_writes(vm, t, &b, 1), 1);
    t->state = THREAD_RUNNABLE;
    vm->run_queue.count = 0;
  }
  assert_true(a->waiter_capacity <= 16); /* a is never written: its stale entries were dropped as it filled */
  block_on(vm, t, ab, 2);
  stm_cancel_wait(t);
  t->state = THREAD_RUNNABLE;
  assert_int_equal(unit_waiter_count(a), 0);
  assert_int_equal(unit_waiter_count(b), 0);
}

/* A commit wakes the threads blocked on what it wrote, in the order they
 * blocked, each once even when it waits on several written TVars, and
 * returns how many woke; the others keep waiting. */
static void test_commit_wakes_in_block_order_once(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t[5];
  for (int i = 0; i < 5; i++) t[i] = new_thread(vm, root);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0), *c = new_tvar(vm, 0);
  ObjTVar *ab[] = {a, b}, *onlyb[] = {b}, *onlyc[] = {c}, *onlya[] = {a};
  block_on(vm, t[2], ab, 2);    /* 3 first, on a and b */
  block_on(vm, t[0], onlyb, 1); /* then 1 on b         */
  block_on(vm, t[3], onlyc, 1); /* 4 on c: not written */
  block_on(vm, t[1], onlya, 1); /* 2 on a              */

  ObjThread *committer = t[4];
  stm_begin(vm, committer);
  stm_read(vm, c);
  stm_write(vm, b, INT_VAL(1)); /* b first: the order written must not matter */
  stm_write(vm, a, INT_VAL(2));
  stm_write(vm, a, INT_VAL(3));
  stm_write(vm, b, INT_VAL(4));
  int woken = stm_commit(vm, committer, false);

  assert_int_equal(woken, 3);
  assert_string_equal(unit_run_queue_ids(vm), "3 1 2");
  assert_int_equal(tvar_int(a), 3);
  assert_int_equal(tvar_int(b), 4);
  assert_int_equal(a->waiter_count, 0);
  assert_int_equal(b->waiter_count, 0);
  assert_string_equal(waiter_ids(c), "4");
  for (int i = 0; i < 3; i++) {
    assert_int_equal(t[i]->state, THREAD_RUNNABLE);
    assert_int_equal(t[i]->blocked_on, BLOCKED_NONE);
    assert_int_equal(t[i]->wait_count, 0);
  }
  assert_int_equal(t[3]->state, THREAD_BLOCKED);
  assert_int_equal(t[3]->blocked_on, BLOCKED_STM);
  assert_false(committer->in_transaction);
  assert_int_equal(vm->stm.undo_count, 0);
  assert_int_equal(vm->stm.read_count, 0);
  /* reading a TVar does not make the reader's commit a write to it */
  assert_int_equal(c->waiter_count, 1);
}

/* A commit that wrote nothing, or only TVars nobody waits on, wakes nobody. */
static void test_commit_without_waiters(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *waiter = new_thread(vm, root), *committer = new_thread(vm, root);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0);
  ObjTVar *onlya[] = {a};
  block_on(vm, waiter, onlya, 1);

  stm_begin(vm, committer);
  stm_read(vm, a);
  assert_int_equal(stm_commit(vm, committer, false), 0);

  stm_begin(vm, committer);
  stm_write(vm, b, INT_VAL(1));
  assert_int_equal(stm_commit(vm, committer, false), 0);
  assert_int_equal(vm->run_queue.count, 0);
  assert_string_equal(waiter_ids(a), "1");
  assert_int_equal(tvar_int(b), 1);

  /* writing the value a TVar already holds is still a write (io-sim's rule) */
  stm_begin(vm, committer);
  stm_write(vm, a, INT_VAL(0));
  assert_int_equal(stm_commit(vm, committer, false), 1);
  assert_string_equal(unit_run_queue_ids(vm), "1");
  assert_int_equal(a->waiter_count, 0);
}

/* Woken threads that block again go to the back of their TVar's waiters;
 * a commit wakes TVar by TVar, in the order written (io-sim's order). */
static void test_reblocked_thread_orders_by_new_block(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t1 = new_thread(vm, root), *t2 = new_thread(vm, root), *t3 = new_thread(vm, root);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0);
  ObjTVar *onlya[] = {a}, *onlyb[] = {b};
  block_on(vm, t1, onlya, 1);
  block_on(vm, t2, onlyb, 1);
  ObjTVar *written[] = {a};
  assert_int_equal(commit_writes(vm, root, written, 1), 1);
  block_on(vm, t1, onlyb, 1); /* 1 re-blocks, now after 2 */
  block_on(vm, t3, onlya, 1);
  ObjTVar *both[] = {a, b};
  assert_int_equal(commit_writes(vm, root, both, 2), 3);
  assert_string_equal(unit_run_queue_ids(vm), "1 3 2 1");
}

/* A commit wakes TVar by TVar in the order first written, as io-sim does,
 * each TVar's waiters in the order they blocked, each thread once. */
static void test_wake_readers_order(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjThread *root = new_thread(vm, NULL);
  ObjThread *t1 = new_thread(vm, root), *t2 = new_thread(vm, root), *t3 = new_thread(vm, root);
  ObjTVar *a = new_tvar(vm, 0), *b = new_tvar(vm, 0), *c = new_tvar(vm, 0);
  ObjTVar *onlya[] = {a}, *cb[] = {c, b}, *onlyc[] = {c};
  block_on(vm, t2, onlya, 1);
  block_on(vm, t3, cb, 2);
  block_on(vm, t1, onlyc, 1);
  ObjTVar *written[] = {c, a, b};
  assert_int_equal(commit_writes(vm, root, written, 3), 3);
  assert_string_equal(unit_run_queue_ids(vm), "3 1 2");
  assert_int_equal(commit_writes(vm, root, written, 3), 0);
  assert_int_equal(vm->run_queue.count, 3);
}

/* ---- whole programs ---- */

/* orElse: a retrying left branch's writes are undone before the right one
 * runs; a nested orElse undoes only its own branch. */
static void test_or_else_rollback(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  a <- newTVar(0)\n"
                          "  b <- newTVar(0)\n"
                          "  r1 <- atomically(orElse({ writeTVar(a, 1); writeTVar(b, 1); retry() },\n"
                          "                          { x <- readTVar(a); y <- readTVar(b); writeTVar(b, 2); return [x, y] }))\n"
                          "  a1 <- readTVarIO(a)\n"
                          "  b1 <- readTVarIO(b)\n"
                          "  say([r1, a1, b1])\n"
                          "  r2 <- atomically({\n"
                          "    writeTVar(a, 10)\n"
                          "    orElse({ writeTVar(a, 11); writeTVar(b, 11); retry() }, return ())\n"
                          "    x <- readTVar(a)\n"
                          "    y <- readTVar(b)\n"
                          "    writeTVar(b, x + y)\n"
                          "    return [x, y]\n"
                          "  })\n"
                          "  a2 <- readTVarIO(a)\n"
                          "  b2 <- readTVarIO(b)\n"
                          "  say([r2, a2, b2])\n"
                          "  r3 <- atomically(orElse({ writeTVar(a, 20)\n"
                          "                            orElse({ writeTVar(b, 21); retry() }, writeTVar(b, 22))\n"
                          "                            retry() },\n"
                          "                          { x <- readTVar(a); y <- readTVar(b); return [x, y] }))\n"
                          "  a3 <- readTVarIO(a)\n"
                          "  b3 <- readTVarIO(b)\n"
                          "  say([r3, a3, b3])\n"
                          "  r4 <- atomically(orElse(writeTVar(a, 30) >> return \"left\", writeTVar(a, 31) >> return \"right\"))\n"
                          "  a4 <- readTVarIO(a)\n"
                          "  say([r4, a4])\n"
                          "}\n",
                          "[[0, 0], 0, 2]\n"
                          "[[10, 2], 10, 12]\n"
                          "[[10, 12], 10, 12]\n"
                          "[\"left\", 30]\n");
}

/* A retrying transaction's writes are undone while it waits; when both
 * branches of an orElse retry, it waits on what either read. */
static void test_retry_rolls_back_and_waits_on_both_branches(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  a <- newTVar(0)\n"
                          "  flag <- newTVar(false)\n"
                          "  other <- newTVar(false)\n"
                          "  fork({\n"
                          "    r <- atomically(orElse({ writeTVar(a, 99); f <- readTVar(flag); check(f); return \"flag\" },\n"
                          "                           { o <- readTVar(other); check(o); writeTVar(a, 1); return \"other\" }))\n"
                          "    say(r)\n"
                          "  })\n"
                          "  yield()\n"
                          "  v1 <- readTVarIO(a)\n"
                          "  atomically(writeTVar(other, true))\n" /* the right branch's TVar wakes it */
                          "  v2 <- readTVarIO(a)\n"
                          "  say([v1, v2])\n"
                          "  yield()\n" /* the waiter's commit yielded to main: let it say */
                          "}\n",
                          "[0, 1]\nother\n");
}

/* Threads blocked in retry wake TVar by TVar in the order the commit first
 * wrote them (b, then a), each TVar's waiters in the order they blocked, as
 * io-sim does; one waiting on two written TVars wakes once. The whole
 * instant of the commit, from the trace. */
static void test_retry_wake_order(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn waiter(name, tv, d) {\n"
                          "  delay(d)\n"
                          "  atomically({ v <- readTVar(tv); check(v > 0) })\n"
                          "  say(name)\n"
                          "}\n"
                          "main = {\n"
                          "  a <- newTVar(0)\n"
                          "  b <- newTVar(0)\n"
                          "  labelTVar(a, \"a\")\n"
                          "  labelTVar(b, \"b\")\n"
                          "  fork(waiter(\"w1\", a, 2us))\n"
                          "  fork(waiter(\"w2\", b, 3us))\n"
                          "  fork(waiter(\"w3\", a, 1us))\n"
                          "  fork({ delay(4us); atomically({ x <- readTVar(a); y <- readTVar(b); check(x + y >= 2) }); say(\"both\") })\n"
                          "  delay(5us)\n"
                          "  atomically({ writeTVar(b, 1); writeTVar(a, 1); writeTVar(b, 2) })\n"
                          "  yield()\n" /* each waiter's commit yields in turn: let them say */
                          "  say(\"main\")\n"
                          "}\n",
                          "w2\nboth\nw3\nw1\nmain\n");
  const char *trace = unit_text(&u->trace);
  assert_contains(trace,
                  "       4us  4            retry: blocked on <tvar a>, <tvar b>\n"
                  "       5us  main         wake\n"
                  "       5us  main         committed: wrote <tvar b>, <tvar a>\n"
                  "       5us  2            wake (by <tvar b>)\n"
                  "       5us  4            wake (by <tvar b>)\n"
                  "       5us  3            wake (by <tvar a>)\n"
                  "       5us  1            wake (by <tvar a>)\n"
                  "       5us  2            committed\n");
  /* 4 woke twice in all: from its delay, then from the commit */
  assert_int_equal(count_occurrences(trace, "  4            wake"), 2);
  assert_int_equal(count_occurrences(trace, "  4            committed\n"), 1);
  assert_int_equal(vm_now(u->vm), 5 * US);
}

/* Every commit yields, as in io-sim: behind the threads it woke, then behind
 * the rest of the run queue; one that wakes nobody too. */
static void test_every_commit_yields(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  tv <- newTVar(0)\n"
                          "  fork({ atomically({ v <- readTVar(tv); check(v > 0) }); say(\"woken\") })\n"
                          "  yield()\n"
                          "  atomically(writeTVar(tv, 1))\n"
                          "  say(\"main 1\")\n"
                          "  fork(say(\"other\"))\n"
                          "  atomically(writeTVar(tv, 2))\n"
                          "  say(\"main 2\")\n"
                          "}\n",
                          "main 1\nwoken\nother\nmain 2\n");
  assert_text_equal(unit_text(&u->trace),
                    "       0ns  main         fork 1\n"
                    "       0ns  main         yield\n"
                    "       0ns  1            retry: blocked on <tvar tv>\n"
                    "       0ns  main         committed: wrote <tvar tv>\n"
                    "       0ns  1            wake (by <tvar tv>)\n"
                    "       0ns  1            committed\n"
                    "       0ns  main         say \"main 1\"\n"
                    "       0ns  main         fork 2\n"
                    "       0ns  main         committed: wrote <tvar tv>\n"
                    "       0ns  1            say \"woken\"\n"
                    "       0ns  1            exit\n"
                    "       0ns  2            say \"other\"\n"
                    "       0ns  2            exit\n"
                    "       0ns  main         say \"main 2\"\n"
                    "       0ns  main         exit\n");
}

/* An exception in a transaction undoes its writes (orElse's right branch's
 * too) and wakes nobody; a runtime error does the same. */
static void test_exception_rolls_back(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  a <- newTVar(0)\n"
                          "  b <- newTVar(0)\n"
                          "  fork(atomically({ v <- readTVar(a); check(v == 42) }))\n"
                          "  yield()\n"
                          "  r1 <- try(atomically({ writeTVar(a, 1); writeTVar(b, 1); throw(\"boom\") }))\n"
                          "  r2 <- try(atomically(orElse({ writeTVar(a, 2); retry() }, { writeTVar(b, 2); throw(#{kind: \"Bad\"}) })))\n"
                          "  r3 <- try(atomically({ writeTVar(a, 3); x <- readTVar(b); writeTVar(b, 1 / x) }))\n"
                          "  x <- readTVarIO(a)\n"
                          "  y <- readTVarIO(b)\n"
                          "  say([r1.ok, r1.exception, r2.ok, exceptionKind(r2.exception), r3.ok, exceptionMessage(r3.exception), x, y])\n"
                          "  t <- atomically({ writeTVar(b, 5); readTVar(b) })\n"
                          "  say(t)\n"
                          "  return a\n"
                          "}\n",
                          "[false, \"boom\", false, \"Bad\", false, \"division by zero\", 0, 0]\n5\n");
  /* the waiter on a never woke: it is still on a's list, the only one */
  assert_int_equal(count_occurrences(unit_text(&u->trace), "  1            wake\n"), 0);
  Value result = vm_result(u->vm);
  assert_true(IS_TVAR(result));
  assert_int_equal(unit_waiter_count(AS_TVAR(result)), 1);
  assert_int_equal(AS_TVAR(result)->waiters[0].thread->blocked_on, BLOCKED_STM);
}

/* An uncaught exception in a transaction ends the thread with its writes undone. */
static void test_uncaught_exception_in_transaction(void **state) {
  UnitVM *u = *state;
  assert_status(unit_run(u,
                         "main = {\n"
                         "  a <- newTVar(\"before\")\n"
                         "  fork(atomically({ writeTVar(a, \"during\"); x <- readTVar(a); throw(x) }))\n"
                         "  delay(1us)\n"
                         "  v <- readTVarIO(a)\n"
                         "  say(v)\n"
                         "}\n"),
                SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "before\n");
  assert_text_equal(unit_text(&u->err), "simvm: thread 1 at 0ns: uncaught \"during\" at test.sim:3\n");
  assert_contains(unit_text(&u->trace), "       0ns  1            died: \"during\"\n");
}

/* registerDelay: false until its time, then true; its readers wake TVar by
 * TVar in timer order (before the delays due at that instant), not in the
 * order they blocked. */
static void test_register_delay(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  d1 <- registerDelay(5us)\n"
                          "  d2 <- registerDelay(5us)\n"
                          "  z <- registerDelay(0ns)\n"
                          "  n <- registerDelay(-1ns)\n"
                          "  v <- mapM(readTVarIO, [d1, d2, z, n])\n"
                          "  say(v)\n"
                          "  fork({ delay(2us); atomically(readTVar(d1) >>= check); t <- now(); say(\"on d1 at \" ++ show(t)) })\n"
                          "  fork({ delay(1us); atomically(readTVar(d2) >>= check); t <- now(); say(\"on d2 at \" ++ show(t)) })\n"
                          "  fork({ delay(5us); say(\"delay\") })\n"
                          "  atomically(readTVar(z) >>= check)\n"
                          "  t0 <- now()\n"
                          "  say(t0)\n"
                          "  delay(10us)\n"
                          "  w <- mapM(readTVarIO, [d1, d2, z, n])\n"
                          "  say(w)\n"
                          "}\n",
                          "[false, false, false, true]\n"
                          "0ns\n"
                          "delay\n"
                          "on d1 at 5us\n"
                          "on d2 at 5us\n"
                          "[true, true, true, true]\n");
  assert_int_equal(vm_now(u->vm), 10 * US);
}

/* A timeout around a retrying transaction takes the thread off the TVar's
 * waiters: the later write wakes nobody (its commit still yields to "other"). */
static void test_timeout_leaves_waiters(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "main = {\n"
                          "  tv <- newTVar(0)\n"
                          "  r <- timeout(3us, atomically({ v <- readTVar(tv); check(v > 0) }))\n"
                          "  t <- now()\n"
                          "  say([r, t])\n"
                          "  fork(say(\"other\"))\n"
                          "  atomically(writeTVar(tv, 1))\n"
                          "  say(\"main\")\n"
                          "  return tv\n"
                          "}\n",
                          "[none, 3us]\nother\nmain\n");
  Value result = vm_result(u->vm);
  assert_true(IS_TVAR(result));
  assert_int_equal(AS_TVAR(result)->waiter_count, 0);
}

/* A transaction with nothing to wait for is a deadlock, reported as such. */
static void test_retry_on_nothing_deadlocks(void **state) {
  UnitVM *u = *state;
  assert_run_fails(u,
                   "main = {\n"
                   "  tv <- newTVar(0)\n"
                   "  labelTVar(tv, \"never\")\n"
                   "  me <- myThreadId()\n"
                   "  fork({ atomically({ v <- readTVar(tv); check(v > 0) }) })\n"
                   "  delay(1us)\n"
                   "  atomically(retry())\n"
                   "}\n",
                   SIM_DEADLOCK,
                   "simvm: deadlock at 1us: no thread can run and no timer is set\n"
                   "  thread main is blocked in atomically (retry) on no TVar at all at test.sim:7\n"
                   "  thread 1 is blocked in atomically (retry) on <tvar never> at test.sim:5; never written\n");
}

/* Effects other than TVars are refused inside a transaction; TVar
 * operations outside one. */
static void test_transaction_boundaries(void **state) {
  (void)state;
  static const struct {
    const char *stmt;
    const char *message;
  } cases[] = {
      {"atomically(say(1))", "say inside atomically: a transaction may only use TVars (readTVar, writeTVar, newTVar, retry, orElse, throw)"},
      {"atomically(delay(1us))", "delay inside atomically: a transaction may only use TVars (readTVar, writeTVar, newTVar, retry, orElse, throw)"},
      {"atomically(atomically(return 1))", "atomically inside atomically: transactions do not nest"},
      {"readTVar(tv)", "readTVar outside a transaction: run it with atomically(...)"},
      {"writeTVar(tv, 1)", "writeTVar outside a transaction: run it with atomically(...)"},
      {"retry()", "retry outside a transaction: run it with atomically(...)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char source[256], expected[512];
    snprintf(source, sizeof source, "main = {\n  tv <- newTVar(0)\n  %s\n}\n", cases[i].stmt);
    snprintf(expected, sizeof expected,
             "test.sim:3: runtime error: %s\n  in thread main at simulated time 0ns\n  at test.sim:3 in main\n",
             cases[i].message);
    UnitVM *u = unit_vm_new();
    assert_non_null(u);
    SimStatus status = unit_run(u, source);
    if (status != SIM_FAILED || strcmp(unit_text(&u->err), expected) != 0) {
      print_error("%s: status %s, errors:\n%s--- expected:\n%s", cases[i].stmt, unit_status_name(status),
                  unit_text(&u->err), expected);
      unit_vm_free(u);
      fail();
    }
    unit_vm_free(u);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_rollback_to_mark_restores_in_reverse, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_nested_marks, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_long_undo_log, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_read_set_holds_each_tvar_once, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_read_set_grows, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_block_registers_waiters, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_cancel_wait_keeps_lists_consistent, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_commit_wakes_in_block_order_once, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_commit_without_waiters, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_many_waiters_wake_in_order, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_stale_waiters_do_not_pile_up, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_reblocked_thread_orders_by_new_block, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_wake_readers_order, unit_setup_vm_direct, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_or_else_rollback, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_retry_rolls_back_and_waits_on_both_branches, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_retry_wake_order, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_every_commit_yields, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_exception_rolls_back, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_uncaught_exception_in_transaction, unit_setup_vm_traced, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_register_delay, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_timeout_leaves_waiters, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_retry_on_nothing_deadlocks, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_transaction_boundaries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
