/* vm/runtime/thread.c: fork-tree thread ids and names, stack growth that keeps the
 * frames' slot pointers right, the frame limit, and the FIFO of pending
 * asynchronous exceptions. Threads are made directly on a fresh VM with the
 * collector paused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

static int setup(void **state) {
  if (unit_setup_vm(state) != 0) return -1;
  ((UnitVM *)*state)->vm->gc_paused++;
  return 0;
}
static int teardown(void **state) { return unit_teardown_vm(state); }

static VM *vm_of(void **state) { return ((UnitVM *)*state)->vm; }

static void check_id(const ObjThread *t, bool with_name, const char *expected, const char *file, int line) {
  Buffer buf;
  buf_init(&buf);
  buf_append(&buf, "[", 1);
  if (with_name) thread_name(&buf, t);
  else thread_id(&buf, t);
  char actual[512];
  snprintf(actual, sizeof actual, "%s", buf_text(&buf));
  buf_free(&buf);
  unit_assert_text(actual, expected, with_name ? "thread_name" : "thread_id", file, line);
}
#define assert_id(t, expected) check_id((t), false, (expected), __FILE__, __LINE__)
#define assert_name(t, expected) check_id((t), true, (expected), __FILE__, __LINE__)

static void test_new_thread(void **state) {
  VM *vm = vm_of(state);
  int live = vm->live_threads;
  ObjThread *t = thread_new(vm, NULL, INT_VAL(7));
  assert_int_equal(vm->live_threads, live + 1);
  assert_ptr_equal(vm->live, t);
  assert_int_equal(t->state, THREAD_RUNNABLE);
  assert_int_equal(t->blocked_on, BLOCKED_NONE);
  assert_int_equal(t->mask, MASK_NONE);
  assert_int_equal(t->frame_count, 1);
  assert_ptr_equal(t->frames[0].closure, vm->entry_closure);
  assert_ptr_equal(t->frames[0].slots, t->stack);
  assert_ptr_equal(t->frames[0].ip, vm->entry_closure->proto->chunk.code);
  assert_int_equal(t->frames[0].profile_node, -1);
  assert_int_equal(t->sp - t->stack, 1);
  assert_true(IS_INT(t->stack[0]));
  assert_int_equal(AS_INT(t->stack[0]), 7);
  assert_int_equal(t->pending_count, 0);
  assert_ptr_equal(t->pending, t->pending_one); /* the first pending exception costs no malloc */
  assert_false(timer_is_set(&t->delay_timer));
  assert_ptr_equal(timer_owner(&t->delay_timer), &t->obj);
}

static void test_ids(void **state) {
  VM *vm = vm_of(state);
  ObjThread *main_thread = thread_new(vm, NULL, UNIT_VAL);
  ObjThread *c1 = thread_new(vm, main_thread, UNIT_VAL);
  ObjThread *c2 = thread_new(vm, main_thread, UNIT_VAL);
  ObjThread *c11 = thread_new(vm, c1, UNIT_VAL);
  ObjThread *c12 = thread_new(vm, c1, UNIT_VAL);
  ObjThread *c3 = thread_new(vm, main_thread, UNIT_VAL);
  ObjThread *c121 = thread_new(vm, c12, UNIT_VAL);
  ObjThread *c21 = thread_new(vm, c2, UNIT_VAL);
  assert_id(main_thread, "[main");
  assert_id(c1, "[1");
  assert_id(c2, "[2");
  assert_id(c3, "[3");
  assert_id(c11, "[1.1");
  assert_id(c12, "[1.2");
  assert_id(c121, "[1.2.1");
  assert_id(c21, "[2.1");
  assert_int_equal(c12->child_number, 2);
  assert_int_equal(c1->next_child, 2);
  /* serials: creation order */
  assert_int_equal(c1->serial, main_thread->serial + 1);
  assert_int_equal(c21->serial, main_thread->serial + 7);
}

/* Deeper than the 32 numbers kept on the C stack. */
static void test_deep_id(void **state) {
  VM *vm = vm_of(state);
  ObjThread *t = thread_new(vm, NULL, UNIT_VAL);
  Buffer expected;
  buf_init(&expected);
  buf_append(&expected, "[", 1);
  for (int depth = 1; depth <= 40; depth++) {
    if (depth % 3 == 0) thread_new(vm, t, UNIT_VAL); /* a sibling first: this one is 2 */
    t = thread_new(vm, t, UNIT_VAL);
    buf_printf(&expected, depth == 1 ? "%d" : ".%d", depth % 3 == 0 ? 2 : 1);
    if (depth == 32 || depth == 33 || depth == 40) assert_id(t, buf_text(&expected));
  }
  buf_free(&expected);
}

static void test_names(void **state) {
  VM *vm = vm_of(state);
  ObjThread *m = thread_new(vm, NULL, UNIT_VAL);
  ObjThread *c = thread_new(vm, m, UNIT_VAL);
  ObjThread *cc = thread_new(vm, c, UNIT_VAL);
  assert_name(m, "[main");
  assert_name(cc, "[1.1");
  m->label = obj_cstring(vm, "boss");
  cc->label = obj_cstring(vm, "client");
  assert_name(m, "[main (boss)");
  assert_name(cc, "[1.1 (client)");
  assert_id(cc, "[1.1"); /* the id has no label */
  assert_name(c, "[1");
}

/* Growing the stack moves it; every frame's slots still point at the same
 * slot index, and the values are kept. */
static void test_reserve_keeps_frames(void **state) {
  VM *vm = vm_of(state);
  ObjThread *t = thread_new(vm, thread_new(vm, NULL, UNIT_VAL), INT_VAL(0)); /* forked: inline stacks */
  assert_int_equal(t->stack_capacity, THREAD_INLINE_STACK);
  assert_ptr_equal(t->stack, t->inline_stack); /* a new thread's stack is inside it */
  assert_true(thread_reserve(vm, t, 31));      /* 32: moves out of the object */
  assert_int_equal(t->stack_capacity, 32);
  assert_true(t->stack != t->inline_stack);
  assert_int_equal(AS_INT(t->stack[0]), 0);    /* what was there is copied */
  assert_ptr_equal(t->frames[0].slots, t->stack);
  for (int i = 1; i < 20; i++) *t->sp++ = INT_VAL(i);
  assert_true(thread_push_frame(vm, t, vm->entry_closure, t->stack + 5));
  assert_true(thread_push_frame(vm, t, vm->entry_closure, t->stack + 12));
  assert_true(thread_push_frame(vm, t, vm->entry_closure, t->stack + 19));
  assert_int_equal(t->frame_count, 4);
  assert_int_equal(t->stack_capacity, 32);
  assert_true(thread_reserve(vm, t, 12)); /* 20 + 12 fits */
  assert_int_equal(t->stack_capacity, 32);
  assert_true(thread_reserve(vm, t, 13));  /* 33: doubles */
  assert_int_equal(t->stack_capacity, 64);
  assert_true(thread_reserve(vm, t, 1000)); /* 1020: 1024 */
  assert_int_equal(t->stack_capacity, 1024);
  assert_int_equal(t->sp - t->stack, 20);
  static const int slot_of[] = {0, 5, 12, 19};
  for (int f = 0; f < 4; f++) {
    assert_int_equal(t->frames[f].slots - t->stack, slot_of[f]);
    assert_int_equal(AS_INT(t->frames[f].slots[0]), slot_of[f]);
  }
  for (int i = 0; i < 20; i++) assert_int_equal(AS_INT(t->stack[i]), i);
  /* past the limit: refused, nothing changed */
  Value *stack = t->stack;
  assert_false(thread_reserve(vm, t, THREAD_MAX_STACK));
  assert_ptr_equal(t->stack, stack);
  assert_int_equal(t->stack_capacity, 1024);
  assert_int_equal(t->sp - t->stack, 20);
  assert_true(thread_reserve(vm, t, THREAD_MAX_STACK - 20)); /* exactly the limit */
  assert_int_equal(t->stack_capacity, THREAD_MAX_STACK);
  assert_int_equal(t->frames[3].slots - t->stack, 19);
  assert_int_equal(AS_INT(t->frames[2].slots[0]), 12);
}

static void test_frame_growth_and_limit(void **state) {
  VM *vm = vm_of(state);
  ObjThread *t = thread_new(vm, thread_new(vm, NULL, UNIT_VAL), UNIT_VAL); /* forked: inline frames */
  assert_int_equal(t->frame_capacity, THREAD_INLINE_FRAMES);
  assert_ptr_equal(t->frames, t->inline_frames);
  for (int i = 1; i < 4; i++) assert_true(thread_push_frame(vm, t, vm->entry_closure, t->stack));
  assert_int_equal(t->frame_count, 4);
  assert_int_equal(t->frame_capacity, 8); /* out of the object: the pooled size */
  assert_true(t->frames != t->inline_frames);
  assert_ptr_equal(t->frames[0].closure, vm->entry_closure); /* copied out */
  while (t->frame_count < THREAD_MAX_FRAMES) assert_true(thread_push_frame(vm, t, vm->entry_closure, t->stack));
  assert_false(thread_push_frame(vm, t, vm->entry_closure, t->stack));
  assert_int_equal(t->frame_count, THREAD_MAX_FRAMES);
}

/* Runaway recursion in a script is the frame limit's runtime error. */
static void test_frame_limit_in_script(void **state) {
  UnitVM *u = *state;
  SimStatus status = unit_run(u, "fn f(n) = 1 + f(n + 1)\nmain = say(f(0))\n");
  assert_status(status, SIM_FAILED, u);
  static const char head[] = "test.sim:1: runtime error: stack overflow (1000000 nested calls)\n"
                             "  in thread main at simulated time 0ns\n"
                             "  at test.sim:1 in f\n";
  assert_memory_equal(unit_text(&u->err), head, sizeof head - 1);
  assert_string_equal(unit_text(&u->out), "");
}

static void test_pending_fifo(void **state) {
  VM *vm = vm_of(state);
  ObjThread *t = thread_new(vm, NULL, UNIT_VAL);
  ObjThread *thrower = thread_new(vm, t, UNIT_VAL);
  for (int i = 1; i <= 5; i++) thread_add_pending(vm, t, INT_VAL(i * 10), i == 2 ? thrower : NULL);
  assert_int_equal(t->pending_count, 5);
  assert_int_equal(t->pending_capacity, 8);
  for (int i = 1; i <= 3; i++) {
    Pending p = thread_take_pending(t);
    assert_int_equal(AS_INT(p.exception), i * 10);
    assert_ptr_equal(p.thrower, i == 2 ? thrower : NULL);
  }
  thread_add_pending(vm, t, INT_VAL(60), thrower);
  assert_int_equal(t->pending_count, 3);
  static const int rest[] = {40, 50, 60};
  for (int i = 0; i < 3; i++) {
    Pending p = thread_take_pending(t);
    assert_int_equal(AS_INT(p.exception), rest[i]);
    assert_ptr_equal(p.thrower, i == 2 ? thrower : NULL);
  }
  assert_int_equal(t->pending_count, 0);
}

/* Stacks that left their thread object go back to a pool when the thread
 * ends, and the next thread that outgrows its inline stacks takes them. */
static void test_stacks_are_pooled(void **state) {
  VM *vm = vm_of(state);
  ObjThread *parent = thread_new(vm, NULL, UNIT_VAL);
  ObjThread *t = thread_new(vm, parent, UNIT_VAL);
  assert_true(thread_reserve(vm, t, 10));
  for (int i = 0; i < THREAD_INLINE_FRAMES; i++) assert_true(thread_push_frame(vm, t, vm->entry_closure, t->stack));
  Value *stack = t->stack;
  CallFrame *frames = t->frames;
  assert_int_equal(t->stack_capacity, 32);
  int pooled = vm->stack_pool.count;
  thread_release(vm, t);
  assert_int_equal(vm->stack_pool.count, pooled + 1);
  ObjThread *u = thread_new(vm, parent, UNIT_VAL);
  assert_ptr_equal(u->stack, u->inline_stack);
  assert_true(thread_reserve(vm, u, 10));
  assert_ptr_equal(u->stack, stack);
  for (int i = 0; i < THREAD_INLINE_FRAMES; i++) assert_true(thread_push_frame(vm, u, vm->entry_closure, u->stack));
  assert_ptr_equal(u->frames, frames);
  assert_int_equal(vm->stack_pool.count, pooled);
  /* a stack grown past the pooled size is freed, not pooled */
  assert_true(thread_reserve(vm, u, 100));
  thread_release(vm, u);
  assert_int_equal(vm->stack_pool.count, pooled);
  /* main starts on pooled stacks (it most often runs the whole program),
   * and gives them back */
  thread_release(vm, parent);
  int stacks = vm->stack_pool.count, frame_arrays = vm->frame_pool.count;
  ObjThread *main_thread = thread_new(vm, NULL, UNIT_VAL);
  assert_int_equal(main_thread->stack_capacity, 32);
  assert_true(main_thread->stack != main_thread->inline_stack);
  assert_true(main_thread->frames != main_thread->inline_frames);
  assert_int_equal(vm->stack_pool.count, stacks - 1);
  assert_int_equal(vm->frame_pool.count, frame_arrays - 1);
  thread_release(vm, main_thread);
  assert_int_equal(vm->stack_pool.count, stacks);
  assert_int_equal(vm->frame_pool.count, frame_arrays);
}

static void test_release(void **state) {
  VM *vm = vm_of(state);
  ObjThread *t = thread_new(vm, NULL, UNIT_VAL);
  ObjThread *u = thread_new(vm, NULL, UNIT_VAL);
  int live = vm->live_threads;
  thread_add_pending(vm, t, INT_VAL(1), NULL);
  thread_release(vm, t);
  assert_int_equal(vm->live_threads, live - 1);
  assert_int_equal(t->state, THREAD_DONE);
  assert_null(t->stack);
  assert_null(t->frames);
  assert_null(t->pending);
  assert_int_equal(t->pending_count, 0);
  assert_int_equal(t->frame_count, 0);
  assert_ptr_equal(vm->live, u);
  for (ObjThread *l = vm->live; l; l = l->live_next) assert_ptr_not_equal(l, t);
  thread_release(vm, t); /* twice: no change */
  assert_int_equal(vm->live_threads, live - 1);
  assert_id(t, "[main"); /* lives on as an id */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_new_thread, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deep_id, setup, teardown),
      cmocka_unit_test_setup_teardown(test_names, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reserve_keeps_frames, setup, teardown),
      cmocka_unit_test_setup_teardown(test_frame_growth_and_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_frame_limit_in_script, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_pending_fifo, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stacks_are_pooled, setup, teardown),
      cmocka_unit_test_setup_teardown(test_release, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
