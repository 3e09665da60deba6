/* vm/vm.c and api/load.c: the embedding API. Configuration and
 * callbacks, results, args(), loading files and sources, imports. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "../../api/api.h"

#include "debug.h"

static void test_config_defaults(void **state) {
  (void)state;
  VMConfig config;
  memset(&config, 0x5a, sizeof config);
  vm_config_init(&config);
  assert_null(config.write_say);
  assert_null(config.write_trace);
  assert_null(config.write_error);
  assert_null(config.user);
  assert_false(config.trace);
  assert_int_equal(config.max_steps, 0);
  assert_int_equal(config.max_time, -1);
  assert_false(config.reify_actions);
  assert_false(config.heap_continuations);
  assert_null(config.argv);
  assert_int_equal(config.argc, 0);
}

/* Without callbacks output is discarded; nothing crashes, statuses hold. */
static void test_no_callbacks(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.trace = true; /* but no write_trace */
  VM *vm = vm_new(&config);
  assert_non_null(vm);
  const char *src = "main = {\n  say(\"quiet\")\n  fork({ say(1 / 0) })\n  yield()\n  say(1 / 0)\n}\n";
  assert_int_equal(vm_load_source(vm, "t.sim", src, strlen(src)), SIM_OK);
  assert_int_equal(vm_run(vm), SIM_FAILED);
  vm_free(vm);
  vm = vm_new(&config);
  assert_int_equal(vm_load_source(vm, "t.sim", "main = )", 8), SIM_COMPILE_ERROR);
  vm_free(vm);
  vm_free(NULL);
}

/* Loading runs nothing: a program whose top level computes (and would
 * fail) is only compiled; its top level runs, as part of the first run
 * and not counted in its steps, when vm_run is called. */
static void test_fresh_vm_state(void **state) {
  UnitVM *u = *state;
  const char *src = "n = 6 * 7\nboom = if n == 42 then 1 / 0 else 0\nmain = say(n)\n";
  assert_int_equal(vm_load_source(u->vm, "t.sim", src, strlen(src)), SIM_OK);
  assert_int_equal(vm_now(u->vm), 0);
  assert_int_equal(vm_steps(u->vm), 0);
  assert_true(IS_UNIT(vm_result(u->vm)));
  assert_text_equal(unit_text(&u->out), "");
  assert_text_equal(unit_text(&u->err), "");
  assert_int_equal(vm_run(u->vm), SIM_FAILED); /* the top level's division, at the run */
  assert_text_equal(unit_text(&u->out), "");
  assert_non_null(strstr(unit_text(&u->err), "t.sim:2: runtime error: division by zero"));
}

/* Each say is one write_say call: the text and then "\n". */
typedef struct {
  int calls;
  char last[64];
} SayLog;

static void log_say(void *user, const char *text, size_t length) {
  SayLog *log = user;
  log->calls++;
  snprintf(log->last, sizeof log->last, "%.*s", (int)length, text);
}

/* write_say gets whole lines: by default all of a short run's at its end,
 * in one block; with say_block 0, each say's line at once. */
static void test_say_callback_shape(void **state) {
  (void)state;
  const char *src = "main = {\n  say(\"a\")\n  say([1, \"two\"])\n  say(\"multi\\nline\")\n}\n";
  for (int each_line = 0; each_line < 2; each_line++) {
    SayLog log = {0, ""};
    VMConfig config;
    vm_config_init(&config);
    config.write_say = log_say;
    config.user = &log;
    if (each_line) config.say_block = 0;
    VM *vm = vm_new(&config);
    assert_non_null(vm);
    assert_int_equal(vm_load_source(vm, "t.sim", src, strlen(src)), SIM_OK);
    assert_int_equal(vm_run(vm), SIM_OK);
    assert_int_equal(log.calls, each_line ? 3 : 1);
    assert_string_equal(log.last, each_line ? "multi\nline\n" : "a\n[1, \"two\"]\nmulti\nline\n");
    vm_free(vm);
  }
}

/* Say output and error or trace output, all in one log in the order written. */
static void log_stream(void *user, const char *text, size_t length, char stream) {
  Buffer *log = user;
  buf_printf(log, "%c:%.*s", stream, (int)length, text);
}
static void log_out(void *user, const char *text, size_t length) { log_stream(user, text, length, 'O'); }
static void log_err(void *user, const char *text, size_t length) { log_stream(user, text, length, 'E'); }

/* Buffered say output is written before anything on the other streams, so
 * they interleave as the events happened; long output goes in blocks of
 * whole lines of about say_block bytes. */
static void test_say_blocks_keep_order(void **state) {
  (void)state;
  Buffer log;
  buf_init(&log);
  VMConfig config;
  vm_config_init(&config);
  config.write_say = log_out;
  config.write_error = log_err;
  config.user = &log;
  VM *vm = vm_new(&config);
  const char *src = "fn f(n) = if n == 0 then 1 / n else f(n - 1)\n"
                    "main = {\n  say(\"before\")\n  fork({ say(\"child\"); throw(\"boom\") })\n  delay(1us)\n"
                    "  say(\"after\")\n  say(f(0))\n}\n";
  assert_int_equal(vm_load_source(vm, "t.sim", src, strlen(src)), SIM_OK);
  assert_int_equal(vm_run(vm), SIM_FAILED);
  const char *text = buf_text(&log);
  const char *child = strstr(text, "O:before\nchild\nE:simvm: thread 1 at 0ns: uncaught \"boom\"");
  assert_non_null(child);
  assert_non_null(strstr(child, "\nO:after\nE:t.sim:1:"));
  vm_free(vm);

  /* 20000 lines of 10 bytes in blocks of 64 KiB: 4 blocks, each whole lines */
  buf_truncate(&log, 0);
  buf_free(&log);
  buf_init(&log);
  vm = vm_new(&config);
  const char *many = "main = replicateM_(20000, say(\"123456789\"))\n";
  assert_int_equal(vm_load_source(vm, "t.sim", many, strlen(many)), SIM_OK);
  assert_int_equal(vm_run(vm), SIM_OK);
  int blocks = 0;
  size_t total = 0;
  for (const char *p = buf_text(&log); (p = strstr(p, "O:")); p += 2) {
    const char *end = strstr(p + 2, "O:");
    size_t length = end ? (size_t)(end - p - 2) : strlen(p + 2);
    assert_true(length % 10 == 0 && length <= 64 * 1024 + 10);
    total += length;
    blocks++;
  }
  assert_int_equal(blocks, 4);
  assert_int_equal(total, 200000);
  vm_free(vm);
  buf_free(&log);
}

/* The trace: time right-aligned in 10 columns, two spaces, the thread name
 * padded to 12, a space, the event. Say events appear in both streams. */
static void test_trace_format(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.trace = true;
  UnitVM *u = unit_vm_new_with(&config);
  assert_non_null(u);
  assert_runs_with_output(u,
                          "main = {\n"
                          "  t <- fork({ me <- myThreadId(); labelThread(me, \"alpha\"); delay(1500us); say(\"hi\\t\\\"x\\\"\") })\n"
                          "  delay(1s)\n"
                          "  kill(t)\n"
                          "}\n",
                          "hi\t\"x\"\n");
  assert_text_equal(unit_text(&u->trace),
                    "       0ns  main         fork 1\n"
                    "       0ns  main         delay 1s\n"
                    "       0ns  1 (alpha)    label 1 \"alpha\"\n"
                    "       0ns  1 (alpha)    delay 1500us\n"
                    "    1500us  1 (alpha)    wake\n"
                    "    1500us  1 (alpha)    say \"hi\\t\\\"x\\\"\"\n"
                    "    1500us  1 (alpha)    exit\n"
                    "        1s  main         wake\n"
                    "        1s  main         kill 1\n"
                    "        1s  main         exit\n");
  unit_vm_free(u);
}

static void test_args(void **state) {
  (void)state;
  static const char *argv[] = {"alpha", "b c", ""};
  VMConfig config;
  vm_config_init(&config);
  config.argv = argv;
  config.argc = 3;
  UnitVM *u = unit_vm_new_with(&config);
  assert_non_null(u);
  assert_runs_with_output(u, "main = {\n  say(args())\n  say(length(args()))\n}\n", "[\"alpha\", \"b c\", \"\"]\n3\n");
  unit_vm_free(u);
  u = unit_vm_new();
  assert_runs_with_output(u, "main = say(args())\n", "[]\n");
  unit_vm_free(u);
}

/* Sources loaded one after another share the global namespace. */
static void test_several_sources(void **state) {
  UnitVM *u = *state;
  const char *lib = "fn helper(x) = x * 2\nbase = 21\n";
  assert_status(vm_load_source(u->vm, "lib.sim", lib, strlen(lib)), SIM_OK, u);
  assert_runs_with_output(u, "main = say(helper(base))\n", "42\n");
}

/* A script may redefine prelude functions (not builtins). */
static void test_redefine_prelude_function(void **state) {
  UnitVM *u = *state;
  assert_runs_with_output(u, "fn map(f, xs) = \"mine\"\nmain = {\n  say(map(show, [1]))\n  say(filter(fn(x) => x > 1, [1, 2, 3]))\n}\n",
                          "mine\n[2, 3]\n");
}

/* Source text must be UTF-8 without NULs. */
static void test_not_a_text_file(void **state) {
  UnitVM *u = *state;
  assert_status(unit_load(u, "x = 1\ny = \"\xff\"\n"), SIM_COMPILE_ERROR, u);
  assert_text_equal(unit_text(&u->err),
                    "test.sim:2:6: error: this is not a text file: byte 0xff is not valid UTF-8 text\n"
                    "    y = \"?\"\n"
                    "         ^\n");
  UnitVM *v = unit_vm_new();
  assert_status(vm_load_source(v->vm, "nul.sim", "x = 1\0", 6), SIM_COMPILE_ERROR, v);
  assert_contains(unit_text(&v->err), "nul.sim:1:6: error: this is not a text file: it contains a NUL byte\n");
  unit_vm_free(v);
}

/* Random bytes never crash the loader and are always a compile error. */
static void test_random_bytes_rejected(void **state) {
  (void)state;
  UnitRng rng = {77};
  char text[200];
  for (int round = 0; round < 200; round++) {
    size_t length = 8 + (size_t)unit_rng_below(&rng, sizeof text - 8);
    for (size_t i = 0; i < length; i++) text[i] = (char)unit_rng_below(&rng, 256);
    UnitVM *u = unit_vm_new();
    assert_non_null(u);
    SimStatus status = vm_load_source(u->vm, "random.sim", text, length);
    assert_status(status, SIM_COMPILE_ERROR, u);
    assert_contains(unit_text(&u->err), "random.sim:");
    unit_vm_free(u);
  }
}

/* ---- files and imports ---- */

typedef struct {
  char dir[64];
} TempDir;

static void write_file(const char *dir, const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup_files(void **state) {
  if (unit_setup_vm(state) != 0) return -1;
  TempDir *t = calloc(1, sizeof *t);
  snprintf(t->dir, sizeof t->dir, "/tmp/simvm-unit-XXXXXX");
  if (!mkdtemp(t->dir)) return -1;
  char sub[128];
  snprintf(sub, sizeof sub, "%s/lib", t->dir);
  mkdir(sub, 0700);
  ((UnitVM *)*state)->data = t;
  return 0;
}

static int teardown_files(void **state) {
  UnitVM *u = *state;
  TempDir *t = u->data;
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
  if (system(cmd) != 0) return -1;
  free(t);
  return unit_teardown_vm(state);
}

static const char *dir_of(void **state) { return ((TempDir *)((UnitVM *)*state)->data)->dir; }

static void test_load_file_missing(void **state) {
  UnitVM *u = *state;
  assert_status(vm_load_file(u->vm, "/nonexistent-dir/x.sim"), SIM_USAGE, u);
  assert_text_equal(unit_text(&u->err), "simvm: cannot open '/nonexistent-dir/x.sim': No such file or directory\n");
}

/* Imports resolve relative to the importing file; each file loads once and
 * is initialised before its importer. */
static void test_imports(void **state) {
  UnitVM *u = *state;
  const char *dir = dir_of(state);
  write_file(dir, "lib/util.sim", "import \"shared.sim\"\nfn double(x) = x * 2\nutilReady = say(\"util\")\n");
  write_file(dir, "lib/shared.sim", "base = 20 + 1\n");
  write_file(dir, "main.sim",
             "import \"lib/util.sim\"\nimport \"lib/shared.sim\"\nmain = {\n  utilReady\n  say(double(base))\n}\n");
  char path[256];
  snprintf(path, sizeof path, "%s/main.sim", dir);
  assert_status(vm_load_file(u->vm, path), SIM_OK, u);
  assert_status(vm_run(u->vm), SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "util\n42\n");
  assert_text_equal(unit_text(&u->err), "");
}

static void test_import_errors(void **state) {
  UnitVM *u = *state;
  const char *dir = dir_of(state);
  write_file(dir, "a.sim", "import \"b.sim\"\nfn a() = 1\n");
  write_file(dir, "b.sim", "import \"a.sim\"\nfn b() = 2\n");
  write_file(dir, "missing.sim", "x = 1\nimport \"lib/nope.sim\"\nmain = say(x)\n");
  char path[256], expected[512];
  snprintf(path, sizeof path, "%s/a.sim", dir);
  assert_status(vm_load_file(u->vm, path), SIM_COMPILE_ERROR, u);
  snprintf(expected, sizeof expected,
           "%s/b.sim:1:1: error: import cycle: '%s/a.sim' is already being loaded\n"
           "    import \"a.sim\"\n"
           "    ^\n",
           dir, dir);
  assert_text_equal(unit_text(&u->err), expected);

  UnitVM *v = unit_vm_new();
  snprintf(path, sizeof path, "%s/missing.sim", dir);
  assert_status(vm_load_file(v->vm, path), SIM_COMPILE_ERROR, v);
  snprintf(expected, sizeof expected,
           "%s/missing.sim:2:1: error: cannot import: cannot open '%s/lib/nope.sim': No such file or directory\n"
           "    import \"lib/nope.sim\"\n"
           "    ^\n",
           dir, dir);
  assert_text_equal(unit_text(&v->err), expected);
  unit_vm_free(v);
}

/* Load once, run many: each run of one loaded program is a fresh simulation.
 * Thread ids, the clock, timers, TVars and MVars, the trace, the counters and
 * the heap start anew; the top-level values are shared and unchanged. */
static const char *fresh_program =
    "counter = newTVar(0)\n" /* an action at top level: each run makes its own TVar */
    "names = [\"a\", \"b\"]\n"
    "fn bump(v) = atomically(modifyTVar(v, fn(x) => x + 1))\n"
    "main = {\n"
    "  v <- counter\n"
    "  m <- newMVar(names)\n"
    "  t <- fork({ delay(3ms); bump(v) })\n"
    "  bump(v)\n"
    "  delay(5ms)\n"
    "  n <- readTVarIO(v)\n"
    "  xs <- takeMVar(m)\n"
    "  me <- myThreadId()\n"
    "  now0 <- now()\n"
    "  say(show(t) ++ \" \" ++ show(me) ++ \" \" ++ show(n) ++ \" \" ++ show(xs) ++ \" \" ++ show(now0))\n"
    "  r <- timeout(1ms, delay(2ms))\n"
    "  say(r)\n"
    "}\n";

static bool count_object(void *ctx, Obj *obj) {
  (void)obj;
  ++*(int *)ctx;
  return false;
}

static void test_runs_are_fresh(void **state) {
  (void)state;
  VMConfig config;
  vm_config_init(&config);
  config.trace = true;
  UnitVM *u = unit_vm_new_with(&config);
  assert_status(unit_load(u, fresh_program), SIM_OK, u);
  char *first_trace = NULL;
  uint64_t steps = 0, events = 0;
  size_t heap = 0;
  for (int run = 0; run < 3; run++) {
    unit_text_clear(&u->trace);
    assert_status(vm_run(u->vm), SIM_OK, u);
    assert_true(u->vm->heap.used != 0); /* the run's own objects, young */
    assert_int_equal(vm_now(u->vm), 6000000);
    if (run == 0) {
      first_trace = strdup(unit_text(&u->trace));
      steps = vm_steps(u->vm);
      events = vm_events(u->vm);
      assert_contains(first_trace, "say \"1 main 2 [\\\"a\\\", \\\"b\\\"] 5ms\"");
      assert_contains(first_trace, "say \"none\"");
    } else {
      assert_text_equal(unit_text(&u->trace), first_trace);
      assert_int_equal(vm_steps(u->vm), steps);
      assert_int_equal(vm_events(u->vm), events);
    }
    vm_discard_run(u->vm); /* what the next run does first */
    int young = 0;
    heap_each(&u->vm->heap, true, count_object, &young);
    assert_int_equal(young, 0);
    assert_null(u->vm->heap.large);
    assert_int_equal(u->vm->young_owner_count, 0);
    assert_null(u->vm->live);
    if (run == 0) heap = u->vm->bytes_allocated;
    assert_int_equal(u->vm->bytes_allocated, heap);
    assert_int_equal(u->vm->bytes_allocated, u->vm->old_bytes);
  }
  assert_text_equal(unit_text(&u->err), "");
  free(first_trace);
  unit_vm_free(u);
}

/* Only .sim files are imported, so no other file is ever parsed or has a
 * line shown; a compiled program is named as such. */
static void test_import_only_scripts(void **state) {
  const char *dir = dir_of(state);
  write_file(dir, "secret.txt", "password: hunter2\n");
  write_file(dir, "lib/prog.simc", "SIMVMBC");
  write_file(dir, "lib/fake.sim", "SIMVMBC");
  static const struct {
    const char *import, *message;
  } cases[] = {
      {"secret.txt", "cannot import 'secret.txt': only .sim files can be imported"},
      {"/etc/passwd", "cannot import '/etc/passwd': only .sim files can be imported"},
      {"lib/prog.simc", "cannot import 'lib/prog.simc': it is a compiled program; import the .sim file it was compiled from"},
      {"lib/fake.sim", "cannot import 'lib/fake.sim': it is a compiled program, not a script"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    UnitVM *u = unit_vm_new();
    char source[128], path[256], expected[512];
    snprintf(source, sizeof source, "import \"%s\"\nmain = say(1)\n", cases[i].import);
    write_file(dir, "main.sim", source);
    snprintf(path, sizeof path, "%s/main.sim", dir);
    assert_status(vm_load_file(u->vm, path), SIM_COMPILE_ERROR, u);
    snprintf(expected, sizeof expected, "%s:1:1: error: %s\n    import \"%s\"\n    ^\n", path, cases[i].message,
             cases[i].import);
    assert_text_equal(unit_text(&u->err), expected);
    assert_null(strstr(unit_text(&u->err), "hunter2"));
    unit_vm_free(u);
  }
}

/* The sandbox keeps imports in the main script's directory tree: no
 * absolute path, no way out by .. or by a symbolic link. */
static void test_sandbox(void **state) {
  const char *dir = dir_of(state);
  char outside[256], link[256];
  snprintf(outside, sizeof outside, "%s/out", dir);
  mkdir(outside, 0700);
  write_file(dir, "out/x.sim", "x = 1\n");
  write_file(dir, "lib/y.sim", "import \"../lib/z.sim\"\ny = z + 1\n");
  write_file(dir, "lib/z.sim", "z = 41\n");
  snprintf(outside, sizeof outside, "%s/out/x.sim", dir);
  snprintf(link, sizeof link, "%s/lib/app/link.sim", dir);
  char app[256];
  snprintf(app, sizeof app, "%s/lib/app", dir);
  mkdir(app, 0700);
  assert_int_equal(symlink(outside, link), 0);
  write_file(dir, "lib/app/ok.sim", "import \"../y.sim\"\nmain = say(y)\n");
  static const struct {
    const char *import, *message;
  } refused[] = {
      {"../../out/x.sim", "cannot import '../../out/x.sim': --sandbox allows only files under the script's directory"},
      {"link.sim", "cannot import 'link.sim': --sandbox allows only files under the script's directory"},
      {"/tmp/x.sim", "cannot import '/tmp/x.sim': --sandbox allows only relative paths"},
  };
  VMConfig config;
  vm_config_init(&config);
  config.sandbox = true;
  char path[256], expected[512], source[128];
  /* the script in lib/: ../y.sim is outside lib/ */
  snprintf(path, sizeof path, "%s/lib/app/ok.sim", dir);
  UnitVM *u = unit_vm_new_with(&config);
  assert_status(vm_load_file(u->vm, path), SIM_COMPILE_ERROR, u);
  snprintf(expected, sizeof expected,
           "%s:1:1: error: cannot import '../y.sim': --sandbox allows only files under the script's directory\n", path);
  assert_non_null(strstr(unit_text(&u->err), expected));
  unit_vm_free(u);
  /* from lib/: y.sim, and the z.sim it reaches by ../lib/, are inside */
  write_file(dir, "lib/main.sim", "import \"y.sim\"\nmain = say(y)\n");
  snprintf(path, sizeof path, "%s/lib/main.sim", dir);
  u = unit_vm_new_with(&config);
  assert_status(vm_load_file(u->vm, path), SIM_OK, u);
  assert_status(vm_run(u->vm), SIM_OK, u);
  assert_text_equal(unit_text(&u->out), "42\n");
  unit_vm_free(u);
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    snprintf(source, sizeof source, "import \"%s\"\nmain = say(1)\n", refused[i].import);
    write_file(dir, "lib/app/main.sim", source);
    snprintf(path, sizeof path, "%s/lib/app/main.sim", dir);
    u = unit_vm_new_with(&config);
    assert_status(vm_load_file(u->vm, path), SIM_COMPILE_ERROR, u);
    snprintf(expected, sizeof expected, "%s:1:1: error: %s\n", path, refused[i].message);
    assert_non_null(strstr(unit_text(&u->err), expected));
    unit_vm_free(u);
    /* without the sandbox the same imports load (those that exist) */
    u = unit_vm_new();
    SimStatus status = vm_load_file(u->vm, path);
    assert_int_equal(status, i < 2 ? SIM_OK : SIM_COMPILE_ERROR);
    unit_vm_free(u);
  }
}

/* The VM's own prototypes, assembled with labels (vm/vm.c): each handler
 * starts at its handler opcode, each prototype ends where control does,
 * and the listing of one reads as written. */
static void test_own_prototypes(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  const struct { ObjClosure *closure; OpCode handler; } own[] = {
      {vm->timeout_closure, OP_TIMEOUT_CATCH},   {vm->catch_closure, OP_CATCH_HANDLER},
      {vm->mask_closure, OP_MASK_UNWIND},        {vm->atomically_closure, OP_TX_ABORT},
      {vm->or_else_closure, OP_OR_ELSE_CATCH},   {vm->prelude_catch, OP_CATCH_HANDLER},
      {vm->prelude_mask, OP_MASK_UNWIND},        {vm->prelude_atomically, OP_TX_ABORT},
  };
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
    const ObjProto *proto = own[i].closure->proto;
    assert_int_equal(proto->kind, PROTO_INTERNAL);
    assert_true(proto->handler > 0 && proto->handler < proto->chunk.count);
    assert_int_equal(proto->chunk.code[proto->handler], own[i].handler);
    /* the instruction before the handler ends the body */
    int last = 0;
    for (int at = 0; at < proto->handler; at += opcode_size(proto->chunk.code[at])) last = at;
    assert_int_equal(proto->chunk.code[last], OP_RETURN);
  }
  /* an async's thread: its body jumps over catch's handler to the write,
   * which no handler covers */
  const ObjProto *async_thread = vm->async_thread_closure->proto;
  assert_int_equal(async_thread->chunk.code[async_thread->handler], OP_CATCH_HANDLER);
  const uint8_t *jump = async_thread->chunk.code + async_thread->handler - 3;
  assert_int_equal(jump[0], OP_JUMP);
  assert_int_equal(jump[3 + opcode_operand(jump)], OP_ASYNC_WRITE);
  assert_int_equal(vm->entry_closure->proto->handler, -1);
  assert_int_equal(vm->resume_closure->proto->handler, -1);
  assert_int_equal(vm->async_closure->proto->handler, -1);
  Buffer out;
  buf_init(&out);
  debug_list_proto(&out, vm->timeout_closure->proto, NULL);
  assert_text_equal(buf_text(&out),
                    "internal timeout (<vm>:0): 0 params, 5 slots, 0 upvalues, 0 constants, 7 bytes\n"
                    "  0000    0  TIMEOUT_ARM    \n"
                    "  0001    |  GET_LOCAL           1\n"
                    "  0003    |  BIND           \n"
                    "  0004    |  TIMEOUT_DISARM \n"
                    "  0005    |  RETURN         \n"
                    "  0006    |  TIMEOUT_CATCH  \n"
                    "\n");
  buf_free(&out);
}

/* However dense a large script, loading it takes memory in proportion: its
 * text once, a syntax tree of at most twice that plus 16 MB (a denser one
 * is refused with an error), so less than 4 times the file in all. A 50 MB
 * file of statements took 1.6 GB to compile. */
static void test_large_source_bounded_memory(void **state) {
  (void)state;
  enum { SIZE = 20 << 20 };
  static const char line[] = "  say(1)\n";
  char *text = malloc(SIZE + 64);
  size_t n = 0;
  memcpy(text, "main = {\n", 9);
  for (n = 9; n + sizeof line - 1 + 2 <= SIZE; n += sizeof line - 1) memcpy(text + n, line, sizeof line - 1);
  memcpy(text + n, "}\n", 2);
  n += 2;
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  UnitVM *u = unit_vm_new();
  assert_status(vm_load_source(u->vm, "big.sim", text, n), SIM_COMPILE_ERROR, u);
  getrusage(RUSAGE_SELF, &after);
  assert_non_null(strstr(unit_text(&u->err),
                         ": error: too large to compile: its syntax tree passed 56 MB (the limit is twice the size of this "
                         "file and those importing it, plus 16 MB)\n"));
  int lines = 0;
  for (const char *c = unit_text(&u->err); *c; c++) lines += *c == '\n';
  assert_int_equal(lines, 3); /* that error alone, with its line and caret */
  unit_vm_free(u);
  long grown_kb = after.ru_maxrss - before.ru_maxrss;
#ifdef __SANITIZE_ADDRESS__
  long allowed_kb = 5L * (SIZE >> 10); /* its shadow memory and redzones */
#else
  long allowed_kb = 4L * (SIZE >> 10);
#endif
  if (grown_kb > allowed_kb) {
    free(text);
    fail_msg("loading %d MB took %ld MB more", SIZE >> 20, grown_kb >> 10);
  }
  /* the same statements, fewer of them (1 MB), compile */
  n = 9 + 100000 * (sizeof line - 1);
  memcpy(text + n, "}\n", 2);
  u = unit_vm_new();
  assert_status(vm_load_source(u->vm, "big.sim", text, n + 2), SIM_OK, u);
  unit_vm_free(u);
  free(text);
}

/* The fuzzer's rollback: with the prelude run once, programs kept young
 * are loaded, run and taken back one after another, and each sees a VM as
 * it was: its own main or none, the prelude's names unshadowed, nothing
 * left in the old generation. */
static void test_rollback(void **state) {
  UnitVM *u = *state;
  VM *vm = u->vm;
  LoaderMark mark;
  loader_mark(vm, &mark);
  assert_status(unit_run(u, "main = return ()\n"), SIM_OK, u);
  loader_rollback(vm, &mark);
  vm->keep_young = true;
  size_t old = vm->old_bytes;
  const char *shadowing = "fn map(f, xs) = \"mine\"\nfv = newTVar(1)\nmain = { v <- fv\n  x <- readTVarIO(v)\n  say([map(0, 0), show(x)]) }\n";
  for (int round = 0; round < 3; round++) {
    unit_text_clear(&u->out);
    unit_text_clear(&u->err);
    assert_status(unit_run(u, shadowing), SIM_OK, u);
    assert_text_equal(unit_text(&u->out), "[\"mine\", \"1\"]\n");
    loader_rollback(vm, &mark);
    assert_status(unit_run(u, "x = 1\n"), SIM_COMPILE_ERROR, u);
    assert_text_equal(unit_text(&u->err), "simvm: error: the program defines no 'main' (write `main = { ... }`)\n");
    loader_rollback(vm, &mark);
    unit_text_clear(&u->out);
    assert_status(unit_run(u, "main = say(map(fn(x) => x + 1, [1, 2]))\n"), SIM_OK, u);
    assert_text_equal(unit_text(&u->out), "[2, 3]\n");
    loader_rollback(vm, &mark);
    assert_int_equal(vm->old_bytes, old);
  }
  loader_mark_free(&mark);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_config_defaults),
      cmocka_unit_test(test_runs_are_fresh),
      cmocka_unit_test(test_no_callbacks),
      cmocka_unit_test_setup_teardown(test_fresh_vm_state, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_own_prototypes, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_say_callback_shape),
      cmocka_unit_test(test_say_blocks_keep_order),
      cmocka_unit_test(test_trace_format),
      cmocka_unit_test(test_args),
      cmocka_unit_test_setup_teardown(test_several_sources, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_redefine_prelude_function, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_not_a_text_file, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test(test_random_bytes_rejected),
      cmocka_unit_test_setup_teardown(test_load_file_missing, unit_setup_vm, unit_teardown_vm),
      cmocka_unit_test_setup_teardown(test_imports, setup_files, teardown_files),
      cmocka_unit_test_setup_teardown(test_import_errors, setup_files, teardown_files),
      cmocka_unit_test_setup_teardown(test_import_only_scripts, setup_files, teardown_files),
      cmocka_unit_test_setup_teardown(test_sandbox, setup_files, teardown_files),
      cmocka_unit_test(test_large_source_bounded_memory),
      cmocka_unit_test_setup_teardown(test_rollback, unit_setup_vm, unit_teardown_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
