/* The profiler and the event exports: every count is deterministic and adds
 * up, and each output format is well formed (JSON is checked by a small
 * validating parser). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

static const char *program =
    "fn fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2)\n"
    "fn worker(d) {\n"
    "  delay(d)\n"
    "  say(show(fib(10)))\n"
    "}\n"
    "main = {\n"
    "  t <- fork(worker(2us))\n"
    "  labelThread(t, \"w\")\n"
    "  r <- timeout(1us, delay(5us))\n"
    "  v <- newTVar(0)\n"
    "  atomically(modifyTVar(v, fn(x) => x + 1))\n"
    "  delay(3us)\n"
    "}\n";

/* ---- a minimal JSON validator: true when the text is one JSON value ---- */

typedef struct {
  const char *p;
} Json;

static void skip_space(Json *j) {
  while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r') j->p++;
}

static bool json_value(Json *j);

static bool json_string(Json *j) {
  if (*j->p != '"') return false;
  for (j->p++; *j->p != '"'; j->p++) {
    if ((unsigned char)*j->p < 0x20 || !*j->p) return false;
    if (*j->p == '\\') {
      j->p++;
      if (!strchr("\"\\/bfnrtu", *j->p)) return false;
    }
  }
  j->p++;
  return true;
}

static bool json_number(Json *j) {
  char *end;
  strtod(j->p, &end);
  if (end == j->p) return false;
  j->p = end;
  return true;
}

static bool json_sequence(Json *j, char close, bool object) {
  j->p++;
  skip_space(j);
  if (*j->p == close) {
    j->p++;
    return true;
  }
  for (;;) {
    skip_space(j);
    if (object) {
      if (!json_string(j)) return false;
      skip_space(j);
      if (*j->p++ != ':') return false;
    }
    if (!json_value(j)) return false;
    skip_space(j);
    if (*j->p == close) {
      j->p++;
      return true;
    }
    if (*j->p++ != ',') return false;
  }
}

static bool json_value(Json *j) {
  skip_space(j);
  switch (*j->p) {
    case '{': return json_sequence(j, '}', true);
    case '[': return json_sequence(j, ']', false);
    case '"': return json_string(j);
    case 't': return strncmp(j->p, "true", 4) == 0 && (j->p += 4);
    case 'f': return strncmp(j->p, "false", 5) == 0 && (j->p += 5);
    case 'n': return strncmp(j->p, "null", 4) == 0 && (j->p += 4);
    default: return json_number(j);
  }
}

static bool valid_json(const char *text) {
  Json j = {text};
  if (!json_value(&j)) return false;
  skip_space(&j);
  return *j.p == '\0';
}

/* ---- helpers ---- */

static UnitVM *profiled_vm(int opt_level) {
  VMConfig config;
  vm_config_init(&config);
  config.profile = true;
  config.reify_actions = config.heap_continuations = opt_level == 0;
  return unit_vm_new_with(&config);
}

/* The report in `format`, as a malloc'd string. */
static char *report(UnitVM *u, char format) {
  char *text = NULL;
  size_t length = 0;
  FILE *out = open_memstream(&text, &length);
  assert_non_null(out);
  assert_true(vm_write_profile(u->vm, out, format, 0.001));
  fclose(out);
  return text;
}

/* The number after "key": in a JSON text. */
static uint64_t json_field(const char *json, const char *key) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\": ", key);
  const char *at = strstr(json, pattern);
  assert_non_null(at);
  return strtoull(at + strlen(pattern), NULL, 10);
}

/* Sum of the numbers in the "opcodes" object. */
static uint64_t opcode_total(const char *json) {
  const char *p = strstr(json, "\"opcodes\": {");
  assert_non_null(p);
  const char *end = strchr(p, '}');
  uint64_t total = 0;
  for (p = strchr(p, '{'); p && p < end; p = strchr(p + 1, ':')) {
    if (p == strchr(json, '{')) continue;
    if (*p == ':') total += strtoull(p + 1, NULL, 10);
  }
  return total;
}

/* Blank out the wall and GC times, the only figures that may vary. */
static void strip_times(char *json) {
  for (const char *key = "\"wall_seconds\": "; key; key = strcmp(key, "\"gc_seconds\": ") ? "\"gc_seconds\": " : NULL) {
    char *at = strstr(json, key);
    assert_non_null(at);
    for (at += strlen(key); (*at >= '0' && *at <= '9') || *at == '.'; at++) *at = '0';
  }
}

/* ---- tests ---- */

static void test_json_is_valid_and_adds_up(void **state) {
  (void)state;
  UnitVM *u = profiled_vm(1);
  assert_runs_with_output(u, program, "55\n");
  char *json = report(u, 'j');
  assert_true(valid_json(json));
  assert_int_equal(json_field(json, "instructions"), vm_steps(u->vm));
  assert_int_equal(opcode_total(json), vm_steps(u->vm));
  assert_int_equal(json_field(json, "simulated_ns"), 4000); /* the 1us timeout, then 3us */
  assert_int_equal(json_field(json, "forks"), 1);
  assert_int_equal(json_field(json, "timers_set"), 4);      /* 3 delays and the timeout */
  assert_int_equal(json_field(json, "timers_fired"), 3);    /* the timeout and two delays */
  assert_int_equal(json_field(json, "timers_cancelled"), 1); /* the delay it interrupted */
  assert_non_null(strstr(json, "\"label\": \"w\""));
  assert_non_null(strstr(json, "\"name\": \"fib\", \"file\": \"test.sim\", \"line\": 1, \"calls\": 177"));
  free(json);
  unit_vm_free(u);
}

static void test_counts_are_deterministic(void **state) {
  (void)state;
  UnitVM *a = profiled_vm(1), *b = profiled_vm(1);
  assert_runs_with_output(a, program, "55\n");
  assert_runs_with_output(b, program, "55\n");
  char *ja = report(a, 'j'), *jb = report(b, 'j');
  strip_times(ja);
  strip_times(jb);
  assert_string_equal(ja, jb);
  /* and a second run in the same VM counts the same */
  assert_int_equal(vm_run(a->vm), SIM_OK);
  char *again = report(a, 'j');
  strip_times(again);
  assert_string_equal(ja, again);
  free(ja);
  free(jb);
  free(again);
  unit_vm_free(a);
  unit_vm_free(b);
}

/* The plain loop takes an `if` on a comparison in one step where the
 * profiled loop runs the comparison and the JUMP_IF_FALSE apart: both count
 * the same instructions, for every comparison (two operands and immediate),
 * taken and not taken. */
static void test_fused_branches_count_the_same(void **state) {
  (void)state;
  static const char *source =
      "fn count(i, n, acc) = if i >= n then acc else count(i + 1, n, if i % 3 == 0 then acc + 1 else if i != 5 "
      "then (if i < 4 then acc else if i <= 7 then acc + 2 else if i > 8 then acc + 3 else acc) else acc)\n"
      "fn pairs(a, b) = (if a < b then 1 else 0) + (if a <= b then 10 else 0) + (if a > b then 100 else 0) + "
      "(if a >= b then 1000 else 0) + (if a == b then 10000 else 0) + (if a != b then 100000 else 0)\n"
      "main = { say(count(0, 20, 0)); say(pairs(1, 2)); say(pairs(2, 2)); say(pairs(3, 2)) }\n";
  UnitVM *plain = unit_vm_new(), *profiled = profiled_vm(1);
  assert_runs_with_output(plain, source, "32\n100011\n11010\n101100\n");
  assert_runs_with_output(profiled, source, "32\n100011\n11010\n101100\n");
  assert_true(vm_steps(plain->vm) > 300);
  assert_int_equal(vm_steps(plain->vm), vm_steps(profiled->vm));
  unit_vm_free(plain);
  unit_vm_free(profiled);
}

/* `source` run in a plain VM that shows nothing (write_say NULL: SAY_K's
 * silent path), and run to the end. */
static UnitVM *quiet_run(const char *source) {
  UnitVM *quiet = unit_vm_new();
  quiet->vm->config.write_say = NULL;
  assert_int_equal(unit_load(quiet, source), SIM_OK);
  assert_int_equal(vm_run(quiet->vm), SIM_OK);
  return quiet;
}

/* Run `source` again in the profiled loop, printing: it says `expected`
 * and counts the instructions `quiet` (a quiet_run of it) counted. Frees
 * both. */
static void assert_profiled_counts_the_same(UnitVM *quiet, const char *source, const char *expected) {
  UnitVM *profiled = profiled_vm(1);
  assert_int_equal(profiled->vm->config.write_say != NULL, 1);
  assert_runs_with_output(profiled, source, expected);
  assert_int_equal(vm_steps(quiet->vm), vm_steps(profiled->vm));
  unit_vm_free(quiet);
  unit_vm_free(profiled);
}

/* The plain loop runs a POP after delay or a silent say in the same step
 * (nothing pushed): both loops count the same instructions, the stack
 * stays balanced, and a delay's result is unit where it is used. */
static void test_fused_pops_count_the_same(void **state) {
  (void)state;
  static const char *source =
      "fn loop(n) { if n <= 0 then return 7 else {\n"
      "  delay(1us); say(\"x\"); let d = 2us; delay(d); u <- delay(1us); say(u); loop(n - 1) } }\n"
      "main = { r <- loop(50); say(r); return r }\n";
  UnitVM *quiet = quiet_run(source);
  assert_true(IS_INT(vm_result(quiet->vm)) && AS_INT(vm_result(quiet->vm)) == 7);
  assert_int_equal(vm_now(quiet->vm), 50 * 4000);
  assert_true(vm_steps(quiet->vm) > 500);
  char expected[512] = "";
  for (int i = 0; i < 50; i++) strcat(expected, "x\n()\n");
  strcat(expected, "7\n");
  assert_profiled_counts_the_same(quiet, source, expected);
}

/* A delay statement that does not end where it starts (another thread
 * runs, or the sleeper is killed or timed out) leaves its POP to run when
 * the thread wakes, in both loops: a killed sleeper's POP never runs, and
 * neither loop counts it. */
static void test_pops_after_interrupted_delays_count_the_same(void **state) {
  (void)state;
  static const char *source =
      "fn sleeper(d) { delay(d); say(\"late\") }\n"
      "main = { ts <- replicateM(5, fork(sleeper(2us))); delay(1us); forM_(ts, kill);\n"
      "  r <- timeout(1us, { delay(2us); say(\"late\") }); say(r) }\n";
  assert_profiled_counts_the_same(quiet_run(source), source, "none\n");
}

/* An action builtin called as a statement through a value (f(x), f = say)
 * runs without its action value in both loops: the BIND it skips is still
 * an instruction, counted and profiled, and both loops allocate the same. */
static void test_fused_builtin_binds_count_the_same(void **state) {
  (void)state;
  static const char *source =
      "fn each(f, xs) { if isEmpty(xs) then return () else { f(head(xs)); each(f, tail(xs)) } }\n"
      "main = { each(say, [1, 2, 3]); each(delay, [1us, 2us]) }\n";
  UnitVM *plain = unit_vm_new(), *profiled = profiled_vm(1);
  assert_runs_with_output(plain, source, "1\n2\n3\n");
  assert_runs_with_output(profiled, source, "1\n2\n3\n");
  assert_int_equal(vm_steps(plain->vm), vm_steps(profiled->vm));
  char *json = report(profiled, 'j');
  assert_int_equal(json_field(json, "BIND"), 6); /* the 5 say and delay skip, and <thread>'s */
  assert_int_equal(json_field(json, "stack_continuations"), 7);
  free(json);
  unit_vm_free(plain);
  unit_vm_free(profiled);
}

static void test_folded_stacks(void **state) {
  (void)state;
  UnitVM *u = profiled_vm(1);
  assert_runs_with_output(u, program, "55\n");
  char *folded = report(u, 'f');
  uint64_t total = 0;
  for (char *line = folded; *line;) {
    char *end = strchr(line, '\n');
    assert_non_null(end);
    char *space = end;
    while (space > line && space[-1] != ' ') space--;
    assert_true(space > line + 1);           /* "path count" */
    for (char *c = space; c < end; c++) assert_true(*c >= '0' && *c <= '9');
    total += strtoull(space, NULL, 10);
    line = end + 1;
  }
  assert_int_equal(total, vm_steps(u->vm));
  assert_non_null(strstr(folded, "\n1 (w);<thread>;worker;fib "));
  assert_non_null(strstr(folded, "\nmain;<thread>;main "));
  free(folded);
  unit_vm_free(u);
}

typedef struct {
  const void *wanted;
  bool found;
} Search;

static bool find_object(void *ctx, Obj *obj) {
  Search *search = ctx;
  search->found |= obj == search->wanted;
  return false;
}

/* The profile names prototypes whose frames are gone: the boot block that
 * calls `fn main()` is replaced by main at once. A program that collects
 * once freed it and the report read freed memory (--profile crashed, or
 * printed a garbage name); every prototype it names must stay a live object. */
static void test_profile_keeps_its_prototypes(void **state) {
  (void)state;
  UnitVM *u = profiled_vm(1);
  u->vm->gc_stress = true;
  gc_update_limit(u->vm);
  assert_runs_with_output(u, "fn loop(i, xs) = if i == 0 then length(xs) else loop(i - 1, if i % 10 == 0 then [i] else cons(i, xs))\n"
                             "fn main() {\n  let n = loop(100, [])\n  say(n)\n}\n", "10\n");
  gc_collect(u->vm);
  const Profile *profile = u->vm->profile;
  for (int i = 0; i < profile->node_count; i++) {
    if (!profile->nodes[i].proto) continue;
    Search search = {profile->nodes[i].proto, false};
    heap_each(&u->vm->heap, false, find_object, &search);
    assert_true(search.found);
  }
  char *folded = report(u, 'f');
  assert_non_null(strstr(folded, "main;<thread>;<boot> "));
  free(folded);
  unit_vm_free(u);
}

/* Found by fuzzing: loading more code discards the last run, whose young
 * prototypes the profile named; the profile went on naming them, and was
 * written (the fuzzer's next program had no main, so no run replaced it). */
static void test_profile_goes_with_its_run(void **state) {
  (void)state;
  UnitVM *u = profiled_vm(1);
  assert_runs_with_output(u, "fn f(n) = if n == 0 then 0 else f(n - 1)\nmain = say(f(10))\n", "0\n");
  assert_status(unit_load(u, "g = 1\n"), SIM_OK, u);
  FILE *null = fopen("/dev/null", "w");
  assert_false(vm_write_profile(u->vm, null, 't', 0));
  fclose(null);
  unit_vm_free(u);
}

/* A label or name with control bytes or ';' cannot break a folded line or
 * add a frame; the text report escapes control bytes too. */
static void test_names_are_escaped(void **state) {
  (void)state;
  UnitVM *u = profiled_vm(1);
  assert_runs_with_output(u, "fn w() { delay(1us) }\nmain = {\n  me <- myThreadId()\n  labelThread(me, \"a;b\\nc\\\\\")\n  t <- fork(w())\n  labelThread(t, \"\\x01\")\n  delay(2us)\n}\n", "");
  char *folded = report(u, 'f');
  assert_non_null(strstr(folded, "main (a\\x3bb\\x0ac\\x5c);<thread>;main"));
  assert_non_null(strstr(folded, "\n1 (\\x01);<thread>;w "));
  for (const char *c = folded; *c; c++) assert_true(*c == '\n' || (*c >= 0x20 && *c < 0x7f));
  char *text = report(u, 't');
  assert_non_null(strstr(text, "  main (a;b\\x0ac\\x5c) "));
  free(text);
  free(folded);
  unit_vm_free(u);
}

static void test_text_report(void **state) {
  (void)state;
  UnitVM *u = profiled_vm(1);
  assert_runs_with_output(u, program, "55\n");
  char *text = report(u, 't');
  assert_non_null(strstr(text, "every count is deterministic"));
  assert_non_null(strstr(text, "\n  simulated time       4us\n"));
  assert_non_null(strstr(text, "on the heap 0)"));
  assert_non_null(strstr(text, "\n  forks                1\n"));
  free(text);
  unit_vm_free(u);
}

/* -O0 keeps every continuation on the heap; the default none. */
static void test_O0_continuations_on_the_heap(void **state) {
  (void)state;
  UnitVM *fast = profiled_vm(1), *slow = profiled_vm(0);
  assert_runs_with_output(fast, program, "55\n");
  assert_runs_with_output(slow, program, "55\n");
  char *jf = report(fast, 'j'), *js = report(slow, 'j');
  assert_int_equal(json_field(jf, "heap_continuations"), 0);
  assert_true(json_field(jf, "stack_continuations") > 0);
  assert_true(json_field(js, "heap_continuations") > 0);
  assert_true(json_field(js, "allocations") > json_field(jf, "allocations"));
  free(jf);
  free(js);
  unit_vm_free(fast);
  unit_vm_free(slow);
}

static size_t count_of(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* --trace-json: one valid JSON object per event, as many as trace lines. */
static void test_trace_json(void **state) {
  (void)state;
  UnitText json = {0};
  VMConfig c2;
  vm_config_init(&c2);
  c2.trace = true;
  c2.write_trace = unit_write_text;
  c2.write_trace_json = unit_write_text;
  c2.write_say = NULL;
  c2.user = &json;
  VM *vm = vm_new(&c2);
  assert_non_null(vm);
  assert_int_equal(vm_load_source(vm, "test.sim", program, strlen(program)), SIM_OK);
  assert_int_equal(vm_run(vm), SIM_OK);
  /* text lines and JSON lines went to one buffer: split them */
  size_t text_lines = 0, json_lines = 0;
  char *all = strdup(unit_text(&json));
  for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '{') {
      assert_true(valid_json(line));
      assert_non_null(strstr(line, "\"time_ns\": "));
      assert_non_null(strstr(line, "\"event\": "));
      json_lines++;
    } else {
      text_lines++;
    }
  }
  assert_int_equal(json_lines, text_lines);
  assert_int_equal(json_lines, vm_events(vm));
  assert_non_null(strstr(unit_text(&json), "{\"time_ns\": 2000, \"thread\": \"1\", \"label\": \"w\", \"event\": \"say\", \"detail\": \"\\\"55\\\"\"}"));
  free(all);
  vm_free(vm);
  unit_text_free(&json);
}

/* --timeline: valid JSON, a named track per thread, slices and instants. */
static void test_timeline(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.timeline = true;
  UnitVM *u = unit_vm_new_with(&config);
  assert_runs_with_output(u, program, "55\n");
  char *text = NULL;
  size_t length = 0;
  FILE *out = open_memstream(&text, &length);
  assert_true(vm_write_timeline(u->vm, out));
  fclose(out);
  assert_true(valid_json(text));
  assert_non_null(strstr(text, "\"traceEvents\": ["));
  assert_int_equal(count_of(text, "\"name\": \"thread_name\""), 2);
  assert_non_null(strstr(text, "\"args\": {\"name\": \"1 (w)\"}"));
  assert_non_null(strstr(text, "{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 0.000, \"dur\": 2.000, \"name\": \"delayed\"}"));
  assert_int_equal(count_of(text, "\"ph\": \"i\""), vm_events(u->vm));
  free(text);
  unit_vm_free(u);
}

static void test_validator_rejects_bad_json(void **state) {
  (void)state;
  assert_true(valid_json("{\"a\": [1, 2.5, \"x\", null, true], \"b\": {}}"));
  assert_false(valid_json("{\"a\": 1,}"));
  assert_false(valid_json("{\"a\" 1}"));
  assert_false(valid_json("[1, 2"));
  assert_false(valid_json("{} extra"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validator_rejects_bad_json),
      cmocka_unit_test(test_json_is_valid_and_adds_up),
      cmocka_unit_test(test_counts_are_deterministic),
      cmocka_unit_test(test_fused_branches_count_the_same),
      cmocka_unit_test(test_fused_builtin_binds_count_the_same),
      cmocka_unit_test(test_fused_pops_count_the_same),
      cmocka_unit_test(test_pops_after_interrupted_delays_count_the_same),
      cmocka_unit_test(test_folded_stacks),
      cmocka_unit_test(test_text_report),
      cmocka_unit_test(test_profile_keeps_its_prototypes),
      cmocka_unit_test(test_names_are_escaped),
      cmocka_unit_test(test_profile_goes_with_its_run),
      cmocka_unit_test(test_O0_continuations_on_the_heap),
      cmocka_unit_test(test_trace_json),
      cmocka_unit_test(test_timeline),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
