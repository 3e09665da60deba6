/* vm/runtime/memory.c: the collector. Programs that allocate many lists, strings,
 * records, closures, threads and timeouts must compute exactly the same
 * under SIMVM_GC_STRESS=1 (a collection at every allocation), and garbage
 * must actually be freed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

/* A VM built with SIMVM_GC_STRESS set (it is read once, by vm_new). */
static UnitVM *stress_vm(const char *value) {
  setenv("SIMVM_GC_STRESS", value, 1);
  UnitVM *u = unit_vm_new();
  unsetenv("SIMVM_GC_STRESS");
  return u;
}

typedef struct {
  int count;
  const Obj *wanted;
  bool found;
} Census;

static bool count_object(void *ctx, Obj *obj) {
  Census *census = ctx;
  census->count++;
  census->found |= obj == census->wanted;
  return false;
}

/* Objects in the heap, both generations; whether `wanted` is among them. */
static Census census_of(VM *vm, const void *wanted) {
  Census census = {0, wanted, false};
  heap_each(&vm->heap, false, count_object, &census);
  return census;
}

static int count_objects(VM *vm) { return census_of(vm, NULL).count; }

static const char *const alloc_program =
    "fn build(n, acc) = if n == 0 then acc else build(n - 1, cons([n, show(n)], acc))\n"
    "fn churn(i) {\n"
    "  let xs = build(60, [])\n"
    "  let r = #{id: i, total: sum(map(fn(p) => head(p), xs)),\n"
    "            names: join(\",\", map(fn(p) => nth(p, 1), take(3, xs)))}\n"
    "  delay(1us)\n"
    "  say(r)\n"
    "}\n"
    "main = {\n"
    "  t1 <- fork(mapM_(churn, range(0, 3)))\n"
    "  t2 <- fork({ r <- timeout(1us, delay(5us)); say(r) })\n"
    "  ys <- mapM(fn(i) => return [i, i * i], range(0, 40))\n"
    "  delay(10us)\n"
    "  say(length(ys))\n"
    "  say(last(ys))\n"
    "  say(filter(fn(p) => head(p) % 13 == 0, ys))\n"
    "  say(reverse(take(5, map(fn(p) => show(head(p)) ++ \"!\", ys))))\n"
    "  return ys\n"
    "}\n";

static const char *const alloc_output =
    "#{id: 0, total: 1830, names: \"1,2,3\"}\n"
    "none\n"
    "#{id: 1, total: 1830, names: \"1,2,3\"}\n"
    "#{id: 2, total: 1830, names: \"1,2,3\"}\n"
    "40\n"
    "[39, 1521]\n"
    "[[0, 0], [13, 169], [26, 676], [39, 1521]]\n"
    "[\"4!\", \"3!\", \"2!\", \"1!\", \"0!\"]\n";

static void test_program_without_stress(void **state) {
  (void)state;
  UnitVM *u = stress_vm("0");
  assert_non_null(u);
  assert_false(u->vm->gc_stress);
  assert_runs_with_output(u, alloc_program, alloc_output);
  unit_vm_free(u);
}

/* The same program with a collection at every allocation: the same output,
 * main's result intact, far fewer objects left than without collections. */
static void test_program_under_gc_stress(void **state) {
  (void)state;
  UnitVM *plain = stress_vm("0");
  assert_non_null(plain);
  assert_runs_with_output(plain, alloc_program, alloc_output);
  int plain_objects = count_objects(plain->vm);

  UnitVM *u = stress_vm("1");
  assert_non_null(u);
  assert_true(u->vm->gc_stress);
  assert_runs_with_output(u, alloc_program, alloc_output);
  assert_int_equal(u->vm->temp_root_count, 0);
  int stressed_objects = count_objects(u->vm);
  assert_true(stressed_objects < plain_objects / 2);

  /* main's result is a root: it survives more collections */
  gc_collect(u->vm);
  char *shown = vm_show(u->vm, vm_result(u->vm));
  assert_int_equal(strncmp(shown, "[[0, 0], [1, 1], [2, 4], ", 25), 0);
  assert_non_null(strstr(shown, ", [39, 1521]]"));
  free(shown);
  unit_vm_free(u);
  unit_vm_free(plain);
}

/* Under stress too: strings built at run time, records updated with
 * setField, closures capturing lists, exceptions, args(). */
static void test_more_kinds_under_gc_stress(void **state) {
  (void)state;
  static const char *argv[] = {"one", "two"};
  setenv("SIMVM_GC_STRESS", "1", 1);
  VMConfig config;
  vm_config_init(&config);
  config.argv = argv;
  config.argc = 2;
  UnitVM *u = unit_vm_new_with(&config);
  unsetenv("SIMVM_GC_STRESS");
  assert_non_null(u);
  SimStatus status = unit_run(u,
                              "fn adders(xs) = map(fn(x) => fn(y) => x + y, xs)\n"
                              "fn bump(r, k) = setField(r, \"n\", r.n + k)\n"
                              "main = {\n"
                              "  let fs = adders(range(1, 20))\n"
                              "  say(map(fn(f) => f(100), take(4, fs)))\n"
                              "  let r = foldl(bump, #{n: 0, tag: \"t\"}, range(0, 50))\n"
                              "  say(r)\n"
                              "  say(join(\"-\", map(show, range(0, 12))) ++ \"|\" ++ join(\"+\", args()))\n"
                              "  t <- fork({ delay(1ms); say(\"never\") })\n"
                              "  bad <- fork({ say(head([])) })\n"
                              "  yield()\n"
                              "  kill(t)\n"
                              "  rs <- mapM(fn(d) => timeout(d, delay(2us) >> return d), [1us, 2us, 3us])\n"
                              "  say(rs)\n"
                              "  say(zip(range(0, 3), [\"a\", \"b\", \"c\"]))\n"
                              "}\n");
  assert_status(status, SIM_OK, u);
  assert_text_equal(unit_text(&u->out),
                    "[101, 102, 103, 104]\n"
                    "#{n: 1225, tag: \"t\"}\n"
                    "0-1-2-3-4-5-6-7-8-9-10-11|one+two\n"
                    "[none, some(2us), some(3us)]\n"
                    "[[0, \"a\"], [1, \"b\"], [2, \"c\"]]\n");
  assert_text_equal(unit_text(&u->err),
                    "test.sim:10: runtime error: head of an empty list\n"
                    "  in thread 2 at simulated time 0ns\n"
                    "  at test.sim:10 in main\n");
  assert_int_equal(u->vm->temp_root_count, 0);
  unit_vm_free(u);
}

/* Collections between loading and running keep everything the program needs. */
static void test_collect_between_load_and_run(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, "main = say(map(fn(x) => x * 3, filter(fn(x) => x % 2 == 0, range(0, 10))))\n"), SIM_OK,
                u);
  gc_collect(u->vm);
  gc_collect(u->vm);
  assert_status(vm_run(u->vm), SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "[0, 6, 12, 18, 24]\n");
}

/* Without stress, collections start once the heap passes its threshold,
 * and garbage is reclaimed: ~140 MB of short-lived lists leave a small heap. */
static void test_garbage_is_reclaimed(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u,
                          "fn build(n, acc) = if n == 0 then acc else build(n - 1, cons(n, acc))\n"
                          "fn rounds(k, total) = if k == 0 then total else rounds(k - 1, total + length(build(100000, [])))\n"
                          "main = say(rounds(30, 0))\n",
                          "3000000\n");
  assert_true(u->vm->bytes_allocated < 32u * 1024 * 1024);
  size_t before = u->vm->bytes_allocated;
  gc_collect(u->vm);
  assert_true(u->vm->bytes_allocated <= before);
  assert_true(u->vm->bytes_allocated < 4u * 1024 * 1024);
}

/* Pushed roots keep values alive; popping lets them go. */
static void test_temp_roots(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  ObjCons *kept = obj_cons(vm, INT_VAL(1), NIL_VAL);
  gc_push_root(vm, OBJ_VAL(kept));
  ObjCons *dropped = obj_cons(vm, INT_VAL(2), NIL_VAL);
  (void)dropped;
  int before = count_objects(vm);
  gc_collect(vm);
  assert_int_equal(count_objects(vm), before - 1);
  assert_true(census_of(vm, kept).found);
  assert_int_equal(AS_INT(kept->head), 1);
  gc_pop_root(vm);
  gc_collect(vm);
  assert_int_equal(count_objects(vm), before - 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_program_without_stress),
      cmocka_unit_test(test_program_under_gc_stress),
      cmocka_unit_test(test_more_kinds_under_gc_stress),
      cmocka_unit_test_setup_teardown(test_collect_between_load_and_run, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_garbage_is_reclaimed, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_temp_roots, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
