/* Shared fixtures and domain assertions for the cmocka unit tests.
 *
 * Every test file includes <stdarg.h> <stddef.h> <stdint.h> <setjmp.h>
 * <cmocka.h> (in that order) and then this header. The assertions here are
 * macros that pass __FILE__ and __LINE__ on, so a failure points at the
 * test's line, not at this header.
 *
 * The VM fixture: unit_setup_vm() builds a fresh VM whose say, trace and
 * error output is captured into text buffers, and stores a UnitVM in *state:
 *
 *   static void test_x(void **state) {
 *     UnitVM *u = *state;
 *     assert_runs_with_output(u, "main = say(1)\n", "1\n");
 *   }
 *   ... cmocka_unit_test_setup_teardown(test_x, unit_setup_vm, unit_teardown_vm)
 *
 * A VM loads one program: a test that runs several makes a UnitVM for each
 * (unit_vm_new / unit_vm_new_with, freed with unit_vm_free). */
#ifndef SIMVM_TESTS_UNIT_H
#define SIMVM_TESTS_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/simvm.h"
#include "state.h"
#include "stm.h"

/* ---- captured text ---- */

typedef struct {
  char *data;
  size_t length;
  size_t capacity;
} UnitText;

static inline void unit_text_append(UnitText *t, const char *text, size_t length) {
  if (t->length + length + 1 > t->capacity) {
    size_t capacity = t->capacity ? t->capacity : 256;
    while (capacity < t->length + length + 1) capacity *= 2;
    char *data = realloc(t->data, capacity);
    if (!data) abort();
    t->data = data;
    t->capacity = capacity;
  }
  memcpy(t->data + t->length, text, length);
  t->length += length;
  t->data[t->length] = '\0';
}

/* The text so far, "" when nothing was written. */
static inline const char *unit_text(const UnitText *t) { return t->data ? t->data : ""; }

static inline void unit_text_clear(UnitText *t) {
  t->length = 0;
  if (t->data) t->data[0] = '\0';
}

static inline void unit_text_free(UnitText *t) {
  free(t->data);
  t->data = NULL;
  t->length = t->capacity = 0;
}

/* A WriteFn / DiagWriteFn that appends to the UnitText in `user`. */
static inline void unit_write_text(void *user, const char *text, size_t length) {
  unit_text_append(user, text, length);
}

/* ---- a VM with captured output ---- */

typedef struct {
  VM *vm;
  VMConfig config;   /* as given to vm_new */
  UnitText out;      /* say output                       */
  UnitText err;      /* diagnostics and runtime errors   */
  UnitText trace;    /* trace lines, when config.trace   */
  void *data;        /* free for a test's own fixture     */
} UnitVM;

static inline void unit_write_say(void *user, const char *text, size_t length) {
  unit_text_append(&((UnitVM *)user)->out, text, length);
}
static inline void unit_write_err(void *user, const char *text, size_t length) {
  unit_text_append(&((UnitVM *)user)->err, text, length);
}
static inline void unit_write_trace(void *user, const char *text, size_t length) {
  unit_text_append(&((UnitVM *)user)->trace, text, length);
}

/* A VM built from `base` (NULL: the defaults), its callbacks replaced by the
 * capturing ones. NULL if vm_new fails (the embedded prelude is broken); the
 * reason is printed. */
static inline UnitVM *unit_vm_new_with(const VMConfig *base) {
  UnitVM *u = calloc(1, sizeof *u);
  if (!u) return NULL;
  if (base) u->config = *base;
  else vm_config_init(&u->config);
  u->config.write_say = unit_write_say;
  u->config.write_error = unit_write_err;
  u->config.write_trace = unit_write_trace;
  u->config.user = u;
  u->vm = vm_new(&u->config);
  if (!u->vm) {
    print_error("vm_new failed:\n%s", unit_text(&u->err));
    unit_text_free(&u->err);
    free(u);
    return NULL;
  }
  return u;
}

static inline UnitVM *unit_vm_new(void) { return unit_vm_new_with(NULL); }

/* opt_level 0: -O0 (reified actions, heap continuations); 1: the default. */
static inline UnitVM *unit_vm_new_opt(int opt_level) {
  VMConfig config;
  vm_config_init(&config);
  config.reify_actions = config.heap_continuations = opt_level == 0;
  return unit_vm_new_with(&config);
}

static inline void unit_vm_free(UnitVM *u) {
  if (!u) return;
  vm_free(u->vm);
  unit_text_free(&u->out);
  unit_text_free(&u->err);
  unit_text_free(&u->trace);
  free(u);
}

/* Thread ids separated by spaces ("main 1 2"), in a static buffer that is
 * valid until the next call. */
static inline const char *unit_thread_ids(ObjThread *const *threads, int count) {
  static char text[256];
  Buffer buf;
  buf_init(&buf);
  for (int i = 0; i < count; i++) {
    if (i) buf_append(&buf, " ", 1);
    thread_id(&buf, threads[i]);
  }
  snprintf(text, sizeof text, "%s", buf_text(&buf));
  buf_free(&buf);
  return text;
}

/* The threads still waiting on a TVar (its stale entries dropped first). */
static inline int unit_waiter_count(ObjTVar *tvar) {
  stm_drop_stale_waiters(tvar);
  return tvar->waiter_count;
}

/* The threads of the run queue, front first (no timeout interrupts in it). */
static inline const char *unit_run_queue_ids(VM *vm) {
  ObjThread *threads[64];
  RunQueue *q = &vm->run_queue;
  assert_true(q->count <= 64);
  for (int i = 0; i < q->count; i++) {
    Obj *entry = q->items[(q->head + i) & (q->capacity - 1)];
    assert_int_equal(entry->type, OBJ_THREAD); /* no timeout's interrupt */
    threads[i] = (ObjThread *)entry;
  }
  return unit_thread_ids(threads, q->count);
}

/* cmocka fixtures: a fresh default VM (or -O0 VM) in *state. */
static inline int unit_setup_vm(void **state) {
  *state = unit_vm_new();
  return *state ? 0 : -1;
}
static inline int unit_setup_vm_O0(void **state) {
  *state = unit_vm_new_opt(0);
  return *state ? 0 : -1;
}
/* A VM tracing into u->trace. */
static inline int unit_setup_vm_traced(void **state) {
  VMConfig config;
  vm_config_init(&config);
  config.trace = true;
  *state = unit_vm_new_with(&config);
  return *state ? 0 : -1;
}

/* A VM whose collector never runs: for tests that hold objects in C locals. */
static inline int unit_setup_vm_direct(void **state) {
  UnitVM *u = unit_vm_new();
  if (!u) return -1;
  u->vm->gc_paused++;
  *state = u;
  return 0;
}

static inline int unit_teardown_vm(void **state) {
  unit_vm_free(*state);
  *state = NULL;
  return 0;
}

/* ---- loading and running ---- */

#define UNIT_SCRIPT_NAME "test.sim"

static inline const char *unit_status_name(SimStatus status) {
  switch (status) {
    case SIM_OK: return "SIM_OK";
    case SIM_FAILED: return "SIM_FAILED";
    case SIM_USAGE: return "SIM_USAGE";
    case SIM_COMPILE_ERROR: return "SIM_COMPILE_ERROR";
    case SIM_DEADLOCK: return "SIM_DEADLOCK";
    case SIM_LIMIT: return "SIM_LIMIT";
    case SIM_INTERRUPTED: return "SIM_INTERRUPTED";
  }
  return "(not a SimStatus)";
}

/* Load `source` as test.sim. */
static inline SimStatus unit_load(UnitVM *u, const char *source) {
  return vm_load_source(u->vm, UNIT_SCRIPT_NAME, source, strlen(source));
}

/* Load and run; the load status when loading fails. */
static inline SimStatus unit_run(UnitVM *u, const char *source) {
  SimStatus status = unit_load(u, source);
  return status == SIM_OK ? vm_run(u->vm) : status;
}

/* ---- assertions (each reports the caller's file and line) ---- */

static inline void unit_assert_status(SimStatus actual, SimStatus expected, const UnitVM *u, const char *what,
                                      const char *file, int line) {
  if (actual == expected) return;
  print_error("%s: status %s, expected %s\n", what, unit_status_name(actual), unit_status_name(expected));
  if (u) print_error("say output:\n%s\nerror output:\n%s\n", unit_text(&u->out), unit_text(&u->err));
  _fail(file, line);
}

static inline void unit_assert_text(const char *actual, const char *expected, const char *what, const char *file,
                                    int line) {
  if (strcmp(actual, expected) == 0) return;
  print_error("%s differs.\n--- expected ---\n%s\n--- actual ---\n%s\n---\n", what, expected, actual);
  _fail(file, line);
}

static inline void unit_assert_contains(const char *haystack, const char *needle, const char *file, int line) {
  if (strstr(haystack, needle)) return;
  print_error("expected to find\n  %s\nin\n%s\n", needle, haystack);
  _fail(file, line);
}

static inline void unit_assert_runs_with_output(UnitVM *u, const char *source, const char *expected, const char *file,
                                                int line) {
  unit_assert_status(unit_load(u, source), SIM_OK, u, "vm_load_source", file, line);
  unit_assert_status(vm_run(u->vm), SIM_OK, u, "vm_run", file, line);
  unit_assert_text(unit_text(&u->out), expected, "say output", file, line);
  unit_assert_text(unit_text(&u->err), "", "error output", file, line);
}

static inline void unit_assert_run_fails(UnitVM *u, const char *source, SimStatus expected_status,
                                         const char *expected_err, const char *file, int line) {
  unit_assert_status(unit_run(u, source), expected_status, u, "load and run", file, line);
  unit_assert_text(unit_text(&u->err), expected_err, "error output", file, line);
}

/* SimStatus equality, printing the captured output on failure (u may be NULL). */
#define assert_status(actual, expected, u) \
  unit_assert_status((actual), (expected), (u), #actual, __FILE__, __LINE__)

/* Exact text comparison that prints both texts in full on failure. */
#define assert_text_equal(actual, expected) \
  unit_assert_text((actual), (expected), #actual, __FILE__, __LINE__)

/* `needle` occurs in `haystack`. */
#define assert_contains(haystack, needle) unit_assert_contains((haystack), (needle), __FILE__, __LINE__)

/* Load `source`, run it: SIM_OK, say output exactly `expected`, no errors. */
#define assert_runs_with_output(u, source, expected) \
  unit_assert_runs_with_output((u), (source), (expected), __FILE__, __LINE__)

/* Load and run `source`: the given status, and error output exactly `expected_err`. */
#define assert_run_fails(u, source, status, expected_err) \
  unit_assert_run_fails((u), (source), (status), (expected_err), __FILE__, __LINE__)

/* ---- deterministic pseudo-random numbers (xorshift64*) ---- */

typedef struct {
  uint64_t s;
} UnitRng;

static inline uint64_t unit_rng_next(UnitRng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform-ish in [0, n). */
static inline uint64_t unit_rng_below(UnitRng *r, uint64_t n) { return unit_rng_next(r) % n; }

#endif
