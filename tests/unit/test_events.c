/* vm/runtime/events.c: the JSON-lines events (--trace-json) and the Chrome
 * trace-event timeline (--timeline) of small runs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"
#include "events.h"
#include "show.h"

/* A VM recording a timeline, and JSON lines into u->trace. */
static UnitVM *events_vm(bool timeline, bool json) {
  VMConfig config;
  vm_config_init(&config);
  config.timeline = timeline;
  UnitVM *u = unit_vm_new_with(&config);
  assert_non_null(u);
  if (json) {
    u->config.write_trace_json = unit_write_trace;
    u->vm->config.write_trace_json = unit_write_trace;
  }
  return u;
}

/* The timeline as written, in a malloc'd string. */
static char *timeline_text(UnitVM *u) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_non_null(f);
  assert_true(vm_write_timeline(u->vm, f));
  assert_int_equal(fclose(f), 0);
  return text;
}

static int count(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

#define HEADER                                                                  \
  "{\"displayTimeUnit\": \"ns\",\n"                                             \
  "\"otherData\": {\"clock\": \"simulated time, in microseconds\"},\n"         \
  "\"traceEvents\": [\n"                                                        \
  "{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"simvm\"}}"

#define TRACK(tid, name)                                                                                    \
  ",\n{\"ph\": \"M\", \"pid\": 1, \"tid\": " #tid ", \"name\": \"thread_name\", \"args\": {\"name\": " name \
  "}},\n{\"ph\": \"M\", \"pid\": 1, \"tid\": " #tid                                                         \
  ", \"name\": \"thread_sort_index\", \"args\": {\"sort_index\": " #tid "}}"

/* an instant: its seq in the run and its order in its instant, then its detail */
#define INSTANT(tid, ts, name, seq, order, detail)                                                  \
  ",\n{\"ph\": \"i\", \"s\": \"t\", \"pid\": 1, \"tid\": " #tid ", \"ts\": " ts ", \"name\": \"" name \
  "\", \"args\": {\"seq\": " #seq ", \"order\": " #order ", \"detail\": \"" detail "\"}}"

#define SLICE(tid, ts, dur, name) \
  ",\n{\"ph\": \"X\", \"pid\": 1, \"tid\": " #tid ", \"ts\": " ts ", \"dur\": " dur ", \"name\": \"" name "\"}"

static const char delay_program[] =
    "main = {\n"
    "  t <- fork({\n"
    "    delay(1ms)\n"
    "    say(\"w\")\n"
    "  })\n"
    "  labelThread(t, \"worker\")\n"
    "  delay(3ms)\n"
    "  say(\"m\")\n"
    "}\n";

static void test_timeline_delays(void **state) {
  (void)state;
  UnitVM *u = events_vm(true, false);
  assert_runs_with_output(u, delay_program, "w\nm\n");
  char *text = timeline_text(u);
  assert_text_equal(text, HEADER TRACK(0, "\"main\"") TRACK(1, "\"1 (worker)\"")
                    INSTANT(0, "0.000", "fork", 1, 1, "1")
                    INSTANT(0, "0.000", "label", 2, 2, "1 \\\"worker\\\"")
                    INSTANT(0, "0.000", "delay", 3, 3, "3ms")
                    INSTANT(1, "0.000", "delay", 4, 4, "1ms")
                    SLICE(1, "0.000", "1000.000", "delayed")
                    INSTANT(1, "1000.000", "wake", 5, 1, "")
                    INSTANT(1, "1000.000", "say", 6, 2, "\\\"w\\\"")
                    INSTANT(1, "1000.000", "exit", 7, 3, "")
                    SLICE(0, "0.000", "3000.000", "delayed")
                    INSTANT(0, "3000.000", "wake", 8, 1, "")
                    INSTANT(0, "3000.000", "say", 9, 2, "\\\"m\\\"")
                    INSTANT(0, "3000.000", "exit", 10, 3, "")
                    "\n]}\n");
  assert_int_equal(count(text, "\"ph\": \"i\""), 10);
  assert_int_equal(count(text, "\"ph\": \"X\""), 2);
  assert_int_equal(count(text, "\"ph\": \"i\""), (int)vm_events(u->vm));
  free(text);
  unit_vm_free(u);
}

/* Blocked on an MVar: a "blocked" slice; a thread still delayed when main
 * ends has its slice closed at the end time; a second run starts afresh. */
static void test_timeline_blocked_and_open(void **state) {
  (void)state;
  UnitVM *u = events_vm(true, false);
  assert_runs_with_output(u,
                          "main = {\n"
                          "  m <- newEmptyMVar()\n"
                          "  fork({\n"
                          "    x <- takeMVar(m)\n"
                          "    say(x)\n"
                          "  })\n"
                          "  fork(delay(1s))\n"
                          "  delay(2500ns)\n"
                          "  putMVar(m, 1)\n"
                          "  delay(1us)\n"
                          "}\n",
                          "1\n");
  char *text = timeline_text(u);
  assert_contains(text, SLICE(1, "0.000", "2.500", "blocked"));
  assert_contains(text, SLICE(2, "0.000", "3.500", "delayed"));
  assert_contains(text, SLICE(0, "0.000", "2.500", "delayed") INSTANT(0, "2.500", "wake", 6, 1, ""));
  assert_contains(text, SLICE(0, "2.500", "1.000", "delayed"));
  assert_int_equal(count(text, "\"ph\": \"X\""), 4);
  assert_int_equal(count(text, "\"name\": \"thread_name\""), 3);
  /* every event is an instant but the run's own last one, naming thread 2
   * (still delayed when main ended): it belongs to no thread's track */
  assert_int_equal(count(text, "\"ph\": \"i\""), (int)vm_events(u->vm) - 1);
  free(text);

  /* run again: the same timeline, not two of them */
  unit_text_clear(&u->out);
  assert_status(vm_run(u->vm), SIM_OK, u);
  char *again = timeline_text(u);
  assert_int_equal(count(again, "\"name\": \"thread_name\""), 3);
  assert_int_equal(count(again, "\"ph\": \"X\""), 4);
  free(again);
  unit_vm_free(u);
}

static void test_json_lines(void **state) {
  (void)state;
  UnitVM *u = events_vm(false, true);
  assert_runs_with_output(u, delay_program, "w\nm\n");
  assert_text_equal(unit_text(&u->trace),
                    "{\"time_ns\": 0, \"thread\": \"main\", \"label\": null, \"event\": \"fork\", \"detail\": \"1\"}\n"
                    "{\"time_ns\": 0, \"thread\": \"main\", \"label\": null, \"event\": \"label\", \"detail\": \"1 \\\"worker\\\"\"}\n"
                    "{\"time_ns\": 0, \"thread\": \"main\", \"label\": null, \"event\": \"delay\", \"detail\": \"3ms\"}\n"
                    "{\"time_ns\": 0, \"thread\": \"1\", \"label\": \"worker\", \"event\": \"delay\", \"detail\": \"1ms\"}\n"
                    "{\"time_ns\": 1000000, \"thread\": \"1\", \"label\": \"worker\", \"event\": \"wake\", \"detail\": \"\"}\n"
                    "{\"time_ns\": 1000000, \"thread\": \"1\", \"label\": \"worker\", \"event\": \"say\", \"detail\": \"\\\"w\\\"\"}\n"
                    "{\"time_ns\": 1000000, \"thread\": \"1\", \"label\": \"worker\", \"event\": \"exit\", \"detail\": \"\"}\n"
                    "{\"time_ns\": 3000000, \"thread\": \"main\", \"label\": null, \"event\": \"wake\", \"detail\": \"\"}\n"
                    "{\"time_ns\": 3000000, \"thread\": \"main\", \"label\": null, \"event\": \"say\", \"detail\": \"\\\"m\\\"\"}\n"
                    "{\"time_ns\": 3000000, \"thread\": \"main\", \"label\": null, \"event\": \"exit\", \"detail\": \"\"}\n");
  assert_int_equal(vm_events(u->vm), 10);
  unit_vm_free(u);
}

/* Events made directly: a death's detail stays on one line (its control
 * bytes escaped), a thread-less event has a null thread and is left off the
 * timeline, an event without a detail has an empty one. */
static void test_events_direct(void **state) {
  (void)state;
  UnitVM *u = events_vm(true, true);
  VM *vm = u->vm;
  vm->gc_paused++;
  vm->now = 1500;
  events_start(vm);
  ObjThread *t = thread_new(vm, NULL, UNIT_VAL);
  ObjThread *c = thread_new(vm, t, UNIT_VAL);
  c->label = obj_cstring(vm, "a\"b");
  vm_event(vm, .kind = EV_DIED, .thread = c, .value = OBJ_VAL(obj_cstring(vm, "boom\n")));
  vm_event(vm, .kind = EV_END, .mode = SIM_OK, .count = 2);
  vm_event(vm, .kind = EV_EXIT, .thread = t);
  assert_int_equal(vm_events(vm), 3); /* the threads' starts are not traced events */
  assert_text_equal(unit_text(&u->trace),
                    "{\"time_ns\": 1500, \"thread\": \"1\", \"label\": \"a\\\"b\", \"event\": \"died\", \"detail\": \"\\\"boom\\\\n\\\"\"}\n"
                    "{\"time_ns\": 1500, \"thread\": null, \"label\": null, \"event\": \"end\", \"detail\": \"main finished with 2 threads still alive: main, 1 (a\\\\\\\"b)\"}\n"
                    "{\"time_ns\": 1500, \"thread\": \"main\", \"label\": null, \"event\": \"exit\", \"detail\": \"\"}\n");
  vm->now = 4000;
  char *text = timeline_text(u);
  assert_text_equal(text, HEADER TRACK(0, "\"main\"") TRACK(1, "\"1\"")
                    INSTANT(1, "1.500", "died", 1, 1, "\\\"boom\\\\n\\\"")
                    INSTANT(0, "1.500", "exit", 2, 2, "")
                    SLICE(0, "1.500", "2.500", "runnable")
                    SLICE(1, "1.500", "2.500", "runnable")
                    "\n]}\n");
  free(text);
  events_stop(vm);
  vm->gc_paused--;
  unit_vm_free(u);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeline_delays),
      cmocka_unit_test(test_timeline_blocked_and_open),
      cmocka_unit_test(test_json_lines),
      cmocka_unit_test(test_events_direct),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
