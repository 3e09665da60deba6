/* simvm --explore, --seed and --replay (docs/EXPLORE.md).
 *
 * --explore runs schedules in this process or in --jobs processes, each
 * with a slice of the seeds; their results come back in seed order, so the
 * report does not depend on the number of processes. Runs are grouped by
 * outcome class (kind and place, vm/explore/explore.h); the first run of each
 * failing class is run again here, shrunk (shrink.c), written as a
 * schedule file (schedule_file.c), and the first class's is shown as a
 * trace with its deviations and choices marked. */
#include "explore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "explore_run.h"
#include "schedule_file.h"
#include "shrink.h"
#include "../base/options.h"

void explore_options_init(ExploreOptions *options) {
  memset(options, 0, sizeof *options);
  options->strategy = EXPLORE_PCT;
  options->first_seed = 1;
  options->depth = 3;
  options->preemptions = -1;
  options->jobs = 1;
  options->shard = options->shards = 1;
  options->shrink = true;
}

bool explore_parse_strategy(const char *name, ExploreStrategy *out) {
  static const struct { const char *name; ExploreStrategy strategy; } names[] = {
      {"pct", EXPLORE_PCT},   {"random", EXPLORE_RANDOM}, {"exhaustive", EXPLORE_EXHAUSTIVE},
      {"dfs", EXPLORE_DFS},   {"delay", EXPLORE_DELAY}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].strategy;
      return true;
    }
  }
  return false;
}

static const char *strategy_name(ExploreStrategy strategy) {
  switch (strategy) {
    case EXPLORE_PCT: return "pct";
    case EXPLORE_RANDOM: return "random";
    case EXPLORE_EXHAUSTIVE: return "exhaustive";
    case EXPLORE_DFS: return "dfs";
    case EXPLORE_DELAY: return "delay";
    default: return "default";
  }
}

/* The strategies that number their schedules rather than seed them. */
static bool is_dfs(const ExploreOptions *o) {
  return o->strategy == EXPLORE_EXHAUSTIVE || o->strategy == EXPLORE_DFS || o->strategy == EXPLORE_DELAY;
}

/* ---- output ---- */

/* A signal asked the sweep to stop (ExploreOptions.stop). */
static int stop_signal(const Context *cx) { return cx->options->stop ? (int)*cx->options->stop : 0; }

static void out_failed(void) {
  fprintf(stderr, "simvm: cannot write output: %s\n", strerror(errno));
  exit(SIM_FAILED);
}

static void write_stdout(void *user, const char *text, size_t length) {
  (void)user;
  if (fwrite(text, 1, length, stdout) != length || ferror(stdout)) out_failed();
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- seeds ---- */

/* Set up seed `seed` of a seeded strategy: the schedule, the program's
 * random numbers and the other choices all come from it. */
static void use_seed(Context *cx, uint64_t seed) {
  cx->vm->config.seed = seed;
  if (cx->options->strategy == EXPLORE_RANDOM) explore_use_random(cx->ex, seed);
  else explore_use_pct(cx->ex, seed, cx->options->depth, cx->estimate);
}

static Record run_seed(Context *cx, uint64_t seed) {
  use_seed(cx, seed);
  SimStatus status = explore_run(cx->ex);
  return explore_record(cx, seed, status);
}

/* The default schedule's steps; also runs the load. False when the
 * program does not load (no main, an error in a top level): *status is
 * then that run's, its messages captured. */
static bool default_run(Context *cx, SimStatus *status) {
  explore_use_default(cx->ex);
  *status = explore_run(cx->ex);
  cx->estimate = explore_steps(cx->ex);
  if (IS_UNDEFINED(cx->vm->main_action)) return false;
  explore_captured()->length = 0;
  return true;
}

/* pct's k, the length of a run in steps: the longest of the default run
 * and of CALIBRATION pct runs of seeds of their own, but for runs stopped
 * at a limit (Shuttle and Coyote take it from the longest run seen; runs
 * under pct are longer than the default one). Measured the same way in every process, so that a seed's
 * run never depends on the runs before it, on --jobs or on --shard. */
#define CALIBRATION 16
#define CALIBRATION_SEED 0xca11b4a7e0000000ull

static void calibrate(Context *cx) {
  if (cx->options->strategy != EXPLORE_PCT) return;
  int longest = cx->estimate;
  for (int i = 0; i < CALIBRATION; i++) {
    cx->vm->config.seed = CALIBRATION_SEED + (uint64_t)i;
    explore_use_pct(cx->ex, CALIBRATION_SEED + (uint64_t)i, cx->options->depth, cx->estimate);
    /* a run stopped at a limit may loop: its length says nothing */
    if (explore_run(cx->ex) != SIM_LIMIT && explore_steps(cx->ex) > longest) longest = explore_steps(cx->ex);
  }
  explore_captured()->length = 0;
  cx->estimate = longest;
}

/* ---- outcome classes ---- */

/* The first runs of a failing class that are shrunk, the smallest story
 * kept: shrinking only deletes and minimises, so another run of the class
 * may hold a smaller story than the first one's. */
#define SHRINK_CANDIDATES 4

typedef struct {
  const char *kind;
  char *where;
  char *description;           /* of its first run                        */
  bool failure;
  uint64_t count;
  uint64_t first;              /* lowest seed or schedule with it          */
  uint64_t runs[SHRINK_CANDIDATES]; /* its first runs' seeds or schedule numbers */
  Schedule found[SHRINK_CANDIDATES]; /* dfs: their schedules, draws and all */
  int candidates;
} Class;

typedef struct {
  Class *items;
  int count, capacity;
  int *table;                  /* index + 1, open addressing              */
  int table_capacity;
} Classes;

/* A pass is classed by its description (what main returned); a failure by
 * its kind and place, whatever its message says. */
static const char *class_text(const Record *r) { return r->failure ? r->where : r->description; }

static uint64_t class_hash(const char *kind, const char *text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *s = kind; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  h = (h ^ 0xff) * 0x100000001b3ull;
  for (const char *s = text; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static const char *class_key(const Class *c) { return c->failure ? c->where : c->description; }

static void classes_index(Classes *o, int i) {
  uint64_t mask = (uint64_t)o->table_capacity - 1;
  for (uint64_t j = class_hash(o->items[i].kind, class_key(&o->items[i])) & mask;; j = (j + 1) & mask) {
    if (!o->table[j]) {
      o->table[j] = i + 1;
      return;
    }
  }
}

static char *copy_text(const char *text) {
  size_t length = strlen(text) + 1;
  char *copy = xrealloc(NULL, length);
  memcpy(copy, text, length);
  return copy;
}

/* Count `r` in its class: the class's index, and whether it is new. */
static int classes_add(Classes *o, const Record *r, bool *added) {
  *added = false;
  if (o->table_capacity) {
    uint64_t mask = (uint64_t)o->table_capacity - 1;
    for (uint64_t j = class_hash(r->kind, class_text(r)) & mask; o->table[j]; j = (j + 1) & mask) {
      Class *x = &o->items[o->table[j] - 1];
      if (x->failure == r->failure && strcmp(x->kind, r->kind) == 0 && strcmp(class_key(x), class_text(r)) == 0) {
        x->count++;
        return o->table[j] - 1;
      }
    }
  }
  if (2 * (o->count + 1) > o->table_capacity) {
    free(o->table);
    o->table_capacity = o->table_capacity ? 2 * o->table_capacity : 64;
    o->table = calloc((size_t)o->table_capacity, sizeof *o->table);
    if (!o->table) xrealloc(NULL, SIZE_MAX);
    for (int i = 0; i < o->count; i++) classes_index(o, i);
  }
  if (o->count == o->capacity) {
    o->capacity = o->capacity ? 2 * o->capacity : 16;
    o->items = xrealloc(o->items, (size_t)o->capacity * sizeof *o->items);
  }
  o->items[o->count] = (Class){r->kind, copy_text(r->where), copy_text(r->description), r->failure, 1, r->id, {0}, {{0}}, 0};
  classes_index(o, o->count);
  *added = true;
  return o->count++;
}

static void classes_free(Classes *o) {
  for (int i = 0; i < o->count; i++) {
    free(o->items[i].where);
    free(o->items[i].description);
    for (int k = 0; k < SHRINK_CANDIDATES; k++) schedule_free(&o->items[i].found[k]);
  }
  free(o->items);
  free(o->table);
}

/* ---- distinct schedules: a set of the runs' hashes ---- */

typedef struct {
  uint64_t *slots;             /* 0: empty (a hash of 0 is stored as 1)    */
  uint64_t count, capacity;
} HashSet;

static void hashset_add(HashSet *h, uint64_t x) {
  if (!x) x = 1;
  if (2 * (h->count + 1) > h->capacity) {
    uint64_t *old = h->slots, old_capacity = h->capacity;
    h->capacity = h->capacity ? 2 * h->capacity : 1024;
    h->slots = calloc(h->capacity, sizeof *h->slots);
    if (!h->slots) xrealloc(NULL, SIZE_MAX);
    h->count = 0;
    for (uint64_t i = 0; i < old_capacity; i++)
      if (old[i]) hashset_add(h, old[i]);
    free(old);
  }
  for (uint64_t j = x & (h->capacity - 1);; j = (j + 1) & (h->capacity - 1)) {
    if (h->slots[j] == x) return;
    if (!h->slots[j]) {
      h->slots[j] = x;
      h->count++;
      return;
    }
  }
}

/* ---- the sweep ---- */

/* The choices of a sweep's runs, by kind, and its fault points: the
 * explorer's totals, or the sum of every --jobs process's. */
typedef struct {
  uint64_t totals[CHOICE_KINDS], changed[CHOICE_KINDS];
  FaultPoint *faults;
  int fault_count;
} Coverage;

static void coverage_add_fault(Coverage *c, const char *name, uint64_t reached, uint64_t fired) {
  for (int i = 0; i < c->fault_count; i++) {
    if (strcmp(c->faults[i].name, name) != 0) continue;
    c->faults[i].reached += reached;
    c->faults[i].fired += fired;
    return;
  }
  c->faults = xrealloc(c->faults, (size_t)(c->fault_count + 1) * sizeof *c->faults);
  c->faults[c->fault_count++] = (FaultPoint){copy_text(name), reached, fired};
}

static void coverage_add(Coverage *c, const ChoiceLog *log) {
  for (int k = 0; k < CHOICE_KINDS; k++) {
    c->totals[k] += log->totals[k];
    c->changed[k] += log->changed[k];
  }
  for (int i = 0; i < log->fault_count; i++)
    if (log->faults[i].reached) coverage_add_fault(c, log->faults[i].name, log->faults[i].reached, log->faults[i].fired);
}

/* The choices of the run that just ended (log->made), for sweeps that do
 * not count every run they make (a search's repeated and abandoned runs,
 * delay bounding's replays of a parent). */
static void coverage_add_run(Coverage *c, const ChoiceLog *log) {
  for (int i = 0; i < log->made_count; i++) {
    const Choice *x = &log->made[i];
    c->totals[x->kind]++;
    bool changed = choice_differs(x, log->orders);
    c->changed[x->kind] += changed;
    if (x->kind == CHOICE_FAULT) coverage_add_fault(c, log->faults[x->name].name, 1, changed);
  }
}

/* Add one Coverage into another. */
static void coverage_merge(Coverage *into, const Coverage *c) {
  for (int k = 0; k < CHOICE_KINDS; k++) {
    into->totals[k] += c->totals[k];
    into->changed[k] += c->changed[k];
  }
  for (int i = 0; i < c->fault_count; i++)
    coverage_add_fault(into, c->faults[i].name, c->faults[i].reached, c->faults[i].fired);
}

static void coverage_free(Coverage *c) {
  for (int i = 0; i < c->fault_count; i++) free(c->faults[i].name);
  free(c->faults);
}

typedef struct {
  Classes classes;
  HashSet distinct;
  Coverage coverage;
  uint64_t runs, failures, abandoned;
  uint64_t stopped;            /* at a limit, not a failure               */
  uint64_t repeated;           /* dfs: runs of a smaller bound again       */
  uint64_t steps, deviations;  /* over every run                          */
  int first_failing;           /* the class of the first failure, or -1   */
  bool exhausted;
  int bound;                   /* dfs: the last bound explored            */
  double started, last_progress;
  bool progress;               /* a progress line on the terminal         */
  int interrupted;             /* the signal that stopped the sweep, or 0 */
} Sweep;

static void show_progress(Sweep *s, bool final) {
  if (!s->progress) return;
  double now = now_seconds();
  if (!final && now - s->last_progress < 0.25) return;
  s->last_progress = now;
  if (final) {
    fputs("\r\033[K", stderr);
    return;
  }
  double rate = now > s->started ? (double)s->runs / (now - s->started) : 0;
  fprintf(stderr, "\r\033[K  %" PRIu64 " schedules, %.0f per second, %" PRIu64 " failing", s->runs, rate, s->failures);
  fflush(stderr);
}

static const char *json_verdict(bool failure, const char *kind) {
  return failure ? "fail" : strcmp(kind, "limit") == 0 ? "stop" : "pass";
}

/* A run's JSON line (--json). */
static void json_record(const Context *cx, const Record *r) {
  Buffer line;
  buf_init(&line);
  buf_printf(&line, "{\"%s\": %" PRIu64 ", \"outcome\": \"%s\", \"kind\": \"%s\", \"place\": ",
             is_dfs(cx->options) ? "schedule" : "seed", r->id, json_verdict(r->failure, r->kind), r->kind);
  explore_json_string(&line, r->where);
  buf_printf(&line, ", \"description\": ");
  explore_json_string(&line, r->description);
  buf_printf(&line, ", \"steps\": %d, \"deviations\": %d, \"preemptions\": %d, \"hash\": \"%016" PRIx64 "\"}\n",
             r->steps, r->deviations, r->preemptions, r->hash);
  write_stdout(NULL, line.data, line.length);
  buf_free(&line);
}

/* Count a run (r is freed); `found`: its schedule when the run is a dfs
 * one (kept if it opens a class). */
static void take_record(Context *cx, Sweep *s, Record *r, const Schedule *found) {
  s->runs++;
  s->steps += (uint64_t)r->steps;
  s->deviations += (uint64_t)r->deviations;
  if (!r->failure && strcmp(r->kind, "limit") == 0) s->stopped++;
  hashset_add(&s->distinct, r->hash);
  bool added;
  int c = classes_add(&s->classes, r, &added);
  Class *class = &s->classes.items[c];
  if (r->failure && class->candidates < SHRINK_CANDIDATES) {
    if (found) schedule_copy(&class->found[class->candidates], found);
    class->runs[class->candidates++] = r->id;
  }
  if (cx->options->json) json_record(cx, r);
  if (r->failure) {
    s->failures++;
    if (s->first_failing < 0) s->first_failing = c;
  }
  record_free(r);
}

/* The shard's i-th seed. */
static uint64_t shard_seed(const ExploreOptions *o, uint64_t i) { return o->first_seed + (o->shard - 1) + i * o->shards; }

static uint64_t shard_size(const ExploreOptions *o) {
  uint64_t k = o->shard - 1;
  return o->count > k ? (o->count - k + o->shards - 1) / o->shards : 0;
}

/* ---- --jobs: processes, each with every J-th chunk of the seeds ---- */

#define CHUNK 256
#define CHUNK_END UINT64_MAX
#define CHILD_END (UINT64_MAX - 1)

typedef struct {
  uint64_t id;
  uint64_t hash;
  uint8_t failure, kind;
  int32_t steps, deviations, preemptions;
  uint32_t where_length, length;
} WireRecord;

static bool put(FILE *out, const void *data, size_t size) { return fwrite(data, 1, size, out) == size; }
static bool get(FILE *in, void *data, size_t size) { return fread(data, 1, size, in) == size; }

static char *get_text(FILE *in, uint32_t length);

/* A Coverage down a pipe: the counts by kind, then each fault point. */
static bool put_coverage(FILE *out, const Coverage *c) {
  bool ok = put(out, c->totals, sizeof c->totals) && put(out, c->changed, sizeof c->changed) &&
            put(out, &c->fault_count, sizeof c->fault_count);
  for (int i = 0; i < c->fault_count && ok; i++) {
    uint32_t length = (uint32_t)strlen(c->faults[i].name);
    ok = put(out, &length, sizeof length) && put(out, c->faults[i].name, length) &&
         put(out, &c->faults[i].reached, sizeof(uint64_t)) && put(out, &c->faults[i].fired, sizeof(uint64_t));
  }
  return ok;
}

/* One read back, added into *c. */
static bool get_coverage(FILE *in, Coverage *c) {
  uint64_t totals[CHOICE_KINDS], changed[CHOICE_KINDS];
  int count;
  if (!get(in, totals, sizeof totals) || !get(in, changed, sizeof changed) || !get(in, &count, sizeof count) ||
      count < 0 || count > 1000000)
    return false;
  for (int k = 0; k < CHOICE_KINDS; k++) {
    c->totals[k] += totals[k];
    c->changed[k] += changed[k];
  }
  for (int i = 0; i < count; i++) {
    uint32_t length;
    uint64_t reached, fired;
    if (!get(in, &length, sizeof length) || length > 1000) return false;
    char *name = get_text(in, length);
    if (!name) return false;
    bool ok = get(in, &reached, sizeof reached) && get(in, &fired, sizeof fired);
    if (ok && reached) coverage_add_fault(c, name, reached, fired);
    free(name);
    if (!ok) return false;
  }
  return true;
}

static void child_sweep(Context *cx, int job, int jobs, uint64_t size, FILE *out) {
  for (uint64_t chunk = (uint64_t)job; chunk * CHUNK < size; chunk += (uint64_t)jobs) {
    for (uint64_t i = chunk * CHUNK; i < size && i < (chunk + 1) * CHUNK; i++) {
      Record r = run_seed(cx, shard_seed(cx->options, i));
      WireRecord w = {r.id, r.hash, r.failure, (uint8_t)explore_kind_index(r.kind), r.steps, r.deviations,
                      r.preemptions, (uint32_t)strlen(r.where), (uint32_t)strlen(r.description)};
      if (!put(out, &w, sizeof w) || !put(out, r.where, w.where_length) || !put(out, r.description, w.length))
        _exit(1);
      record_free(&r);
    }
    WireRecord end = {.id = CHUNK_END};
    if (!put(out, &end, sizeof end)) _exit(1);
  }
  /* then its choices' totals and fault points */
  Coverage totals;
  memset(&totals, 0, sizeof totals);
  coverage_add(&totals, explore_choices(cx->ex));
  WireRecord end = {.id = CHILD_END};
  if (!put(out, &end, sizeof end) || !put_coverage(out, &totals)) _exit(1);
  if (fflush(out) != 0) _exit(1);
}

static char *get_text(FILE *in, uint32_t length) {
  char *text = xrealloc(NULL, (size_t)length + 1);
  if (!get(in, text, length)) {
    free(text);
    return NULL;
  }
  text[length] = '\0';
  return text;
}

/* A child's totals, after its last chunk. */
static bool read_totals(FILE *in, Sweep *s) {
  WireRecord w;
  return get(in, &w, sizeof w) && w.id == CHILD_END && get_coverage(in, &s->coverage);
}

/* A --jobs process and a pipe from it: in the parent, the child's pid (-1,
 * reported, when it cannot start) and *in the pipe's read end; in the
 * child, 0 and *out its write end. */
static pid_t start_job(FILE **in, FILE **out) {
  int fds[2];
  pid_t pid = -1;
  if (pipe(fds) != 0 || (pid = fork()) < 0) {
    fprintf(stderr, "simvm: cannot start --jobs: %s\n", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    /* the parent stops the sweep, and then this process: a signal sent to
     * the whole group (Ctrl-C, timeout) must not end it first */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    close(fds[0]);
    *out = fdopen(fds[1], "w");
  } else {
    close(fds[1]);
    *in = fdopen(fds[0], "r");
  }
  return pid;
}

/* After an interrupted sweep: its processes have more to say, unread. */
static void stop_jobs(const pid_t *pids, int jobs) {
  for (int j = 0; j < jobs; j++) kill(pids[j], SIGKILL);
  for (int j = 0; j < jobs; j++) waitpid(pids[j], NULL, 0);
}

static bool parallel_sweep(Context *cx, Sweep *s, uint64_t size) {
  int jobs = cx->options->jobs;
  uint64_t chunks = (size + CHUNK - 1) / CHUNK;
  if ((uint64_t)jobs > chunks) jobs = chunks ? (int)chunks : 1;
  FILE **from = calloc((size_t)jobs, sizeof *from);
  pid_t *pids = calloc((size_t)jobs, sizeof *pids);
  fflush(stdout);
  fflush(stderr);
  for (int j = 0; j < jobs; j++) {
    FILE *out;
    if ((pids[j] = start_job(&from[j], &out)) < 0) return false;
    if (pids[j] == 0) {
      for (int k = 0; k < j; k++) fclose(from[k]);
      child_sweep(cx, j, jobs, size, out);
      _exit(0);
    }
  }
  bool ok = true;
  for (uint64_t chunk = 0; chunk < chunks && ok; chunk++) {
    FILE *in = from[chunk % (uint64_t)jobs];
    for (;;) {
      WireRecord w;
      if (!get(in, &w, sizeof w)) {
        ok = false;
        break;
      }
      if (w.id == CHUNK_END) break;
      char *where = get_text(in, w.where_length), *text = where ? get_text(in, w.length) : NULL;
      if (!text) {
        free(where);
        ok = false;
        break;
      }
      Record r = {w.id, w.failure, explore_kinds[w.kind < 7 ? w.kind : 0], text, where, w.steps, w.deviations,
                  w.preemptions, w.hash};
      take_record(cx, s, &r, NULL);
      show_progress(s, false);
      if ((s->interrupted = stop_signal(cx))) break;
    }
    if (s->interrupted) break;
  }
  if (s->interrupted) { /* the choices' totals come at a process's end: not counted */
    stop_jobs(pids, jobs);
    for (int j = 0; j < jobs; j++) fclose(from[j]);
    free(from);
    free(pids);
    return ok;
  }
  for (int j = 0; j < jobs && ok; j++) ok = read_totals(from[j], s);
  for (int j = 0; j < jobs; j++) {
    fclose(from[j]);
    int wstatus;
    if (waitpid(pids[j], &wstatus, 0) < 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) ok = false;
  }
  if (!ok) fprintf(stderr, "simvm: a --jobs process failed\n");
  free(from);
  free(pids);
  return ok;
}

/* ---- exhaustive search: iterative bounding ---- */

/* Depth-first search at bound 0, then 1, 2 ..., each exhausted before the
 * next (CHESS's iterative preemption bounding: Musuvathi and Qadeer, PLDI
 * 2007): runs with fewer preemptions than the bound were run at a smaller
 * one, and are not counted again. Stops at --explore N schedules, at
 * --preemptions K's bound, or when a bound adds nothing (the whole space
 * is explored). */
/* What a depth-first sweep's run was: counted, or not. */
typedef enum { RUN_COUNTED, RUN_ABANDONED, RUN_REPEATED } RunFate;

/* Where a depth-first sweep's runs go: into the sweep, or (a --jobs
 * process) down a pipe. `r` and `found` only for a counted run. */
typedef void (*DfsEmit)(Context *cx, Sweep *s, RunFate fate, Record *r, const Schedule *found, int bound, void *user);

static void dfs_take(Context *cx, Sweep *s, RunFate fate, Record *r, const Schedule *found, int bound, void *user) {
  (void)bound;
  (void)user;
  if (fate == RUN_ABANDONED) s->abandoned++;
  else if (fate == RUN_REPEATED) s->repeated++;
  else {
    coverage_add_run(&s->coverage, explore_choices(cx->ex));
    take_record(cx, s, r, found);
    show_progress(s, false);
  }
}

static void dfs_sweep(Context *cx, Sweep *s, DfsEmit emit, void *user) {
  const ExploreOptions *o = cx->options;
  uint64_t number = 0;
  Schedule found = {0};
  bool split = o->shards > 1 || o->jobs > 1; /* (never without --preemptions K) */
  bool full = false; /* the last bound's search reached no run at its bound */
  for (int bound = 0; !full && (o->preemptions < 0 || bound <= o->preemptions); bound++) {
    s->bound = bound;
    explore_use_dfs(cx->ex, bound, o->strategy == EXPLORE_EXHAUSTIVE);
    bool at_bound = false, more = true;
    while (more) {
      SimStatus status = explore_run(cx->ex);
      if (explore_skipped(cx->ex)) { /* another slice's */
        explore_captured()->length = 0;
      } else if (explore_abandoned(cx->ex)) {
        emit(cx, s, RUN_ABANDONED, NULL, NULL, bound, user);
        explore_captured()->length = 0;
      } else if (explore_preemptions(cx->ex) < bound) {
        emit(cx, s, RUN_REPEATED, NULL, NULL, bound, user);
        explore_captured()->length = 0;
      } else {
        at_bound = true;
        Record r = explore_record(cx, ++number, status);
        explore_schedule(cx->ex, &found, true);
        emit(cx, s, RUN_COUNTED, &r, &found, bound, user);
        if (number >= o->count) break;
        if ((s->interrupted = stop_signal(cx))) break;
      }
      more = explore_dfs_next(cx->ex);
    }
    if (s->interrupted) break;
    if (number >= o->count && more) break; /* stopped by --explore N */
    /* with no last bound given: a slice of a split search cannot tell
     * (another may reach the bound), and with one, bounds to it are run
     * alike by one process and by slices */
    if (!at_bound && bound > 0 && !split && o->preemptions < 0) full = true;
    if (!more && o->preemptions >= 0 && bound == o->preemptions) s->exhausted = true;
  }
  if (full) s->exhausted = true;
  schedule_free(&found);
}

/* ---- --jobs for a depth-first search: each process a slice of the tree ----
 * Each process explores its slice (explore_split) and sends each counted
 * run with its bound and subtree, which order the whole search's runs:
 * the parent merges the streams in that order and numbers the runs as one
 * process would. A failing run among its process's first
 * SHRINK_CANDIDATES of its class comes with its schedule, thread ids
 * spelt out (keys are each process's own). */

typedef struct {
  WireRecord w;
  int32_t bound, unit;
  uint8_t fate;                /* a RunFate: only a counted run has the rest */
  uint8_t has_schedule;
} DfsWire;

static bool put_id(FILE *out, Explorer *ex, int key) {
  const char *id = key < 0 ? "" : explore_thread_id(ex, key);
  uint32_t length = (uint32_t)strlen(id);
  return put(out, &length, sizeof length) && put(out, id, length);
}

static bool get_id(FILE *in, Explorer *ex, int *key) {
  uint32_t length;
  if (!get(in, &length, sizeof length) || length > 4096) return false;
  char *id = get_text(in, length);
  if (!id) return false;
  *key = length ? explore_key_of(ex, id) : -1;
  free(id);
  return length == 0 || *key >= 0;
}

static bool put_schedule(FILE *out, Explorer *ex, const Schedule *sc) {
  int32_t counts[3] = {sc->dev_count, sc->choice_count, sc->order_count};
  if (!put(out, counts, sizeof counts)) return false;
  for (int i = 0; i < sc->dev_count; i++) {
    Deviation d = sc->devs[i];
    if (!put(out, &d, sizeof d) || !put_id(out, ex, d.thread) || !put_id(out, ex, d.instead)) return false;
  }
  for (int i = 0; i < sc->choice_count; i++) {
    Choice c = sc->choices[i];
    if (c.kind == CHOICE_FAULT) return false; /* a search makes no fault fire */
    if (!put(out, &c, sizeof c) || !put_id(out, ex, c.thread)) return false;
  }
  for (int i = 0; i < sc->order_count; i++) {
    int32_t index = TIMER_NAME_INDEX(sc->orders[i]);
    if (!put(out, &index, sizeof index) || !put_id(out, ex, TIMER_NAME_KEY(sc->orders[i]))) return false;
  }
  return true;
}

static bool get_schedule(FILE *in, Explorer *ex, Schedule *sc) {
  int32_t counts[3];
  if (!get(in, counts, sizeof counts) || counts[0] < 0 || counts[1] < 0 || counts[2] < 0 || counts[0] > 10000000 ||
      counts[1] > 10000000 || counts[2] > 10000000)
    return false;
  sc->devs = xrealloc(sc->devs, (size_t)(counts[0] ? counts[0] : 1) * sizeof *sc->devs);
  sc->choices = xrealloc(sc->choices, (size_t)(counts[1] ? counts[1] : 1) * sizeof *sc->choices);
  sc->orders = xrealloc(sc->orders, (size_t)(counts[2] ? counts[2] : 1) * sizeof *sc->orders);
  sc->dev_count = counts[0];
  sc->choice_count = counts[1];
  sc->order_count = counts[2];
  for (int i = 0; i < sc->dev_count; i++)
    if (!get(in, &sc->devs[i], sizeof sc->devs[i]) || !get_id(in, ex, &sc->devs[i].thread) ||
        !get_id(in, ex, &sc->devs[i].instead))
      return false;
  for (int i = 0; i < sc->choice_count; i++)
    if (!get(in, &sc->choices[i], sizeof sc->choices[i]) || !get_id(in, ex, &sc->choices[i].thread)) return false;
  for (int i = 0; i < sc->order_count; i++) {
    int32_t index;
    int key;
    if (!get(in, &index, sizeof index) || !get_id(in, ex, &key)) return false;
    sc->orders[i] = TIMER_NAME(key, index);
  }
  return true;
}

typedef struct {
  FILE *out;
  Classes classes;             /* this process's, to know its first runs of each class */
} DfsChild;

/* A counted run's choices (coverage_add_run's), sent with it: the parent
 * counts those of the runs it keeps. */
static bool put_run_choices(FILE *out, const ChoiceLog *log) {
  Coverage c;
  memset(&c, 0, sizeof c);
  coverage_add_run(&c, log);
  bool ok = put_coverage(out, &c);
  coverage_free(&c);
  return ok;
}

static void dfs_send(Context *cx, Sweep *s, RunFate fate, Record *r, const Schedule *found, int bound, void *user) {
  (void)s;
  DfsChild *child = user;
  if (fate != RUN_COUNTED) { /* sent too, so that the parent counts those of the first N schedules only */
    DfsWire d = {{.id = 0}, bound, explore_run_unit(cx->ex), (uint8_t)fate, 0};
    if (!put(child->out, &d, sizeof d)) _exit(1);
    return;
  }
  bool added;
  int c = classes_add(&child->classes, r, &added);
  Class *class = &child->classes.items[c];
  bool send = r->failure && class->candidates < SHRINK_CANDIDATES;
  if (send) class->candidates++;
  DfsWire d = {{r->id, r->hash, r->failure, (uint8_t)explore_kind_index(r->kind), r->steps, r->deviations,
                r->preemptions, (uint32_t)strlen(r->where), (uint32_t)strlen(r->description)},
               bound, explore_run_unit(cx->ex), RUN_COUNTED, send};
  if (!put(child->out, &d, sizeof d) || !put(child->out, r->where, d.w.where_length) ||
      !put(child->out, r->description, d.w.length) || (send && !put_schedule(child->out, cx->ex, found)) ||
      !put_run_choices(child->out, explore_choices(cx->ex)))
    _exit(1);
  record_free(r);
}

/* One process's stream: its next run, read ahead. */
typedef struct {
  FILE *in;
  bool has, ended;
  DfsWire d;
  char *where, *text;
  Schedule schedule;
  Coverage choices;            /* the run's choices                       */
} DfsStream;

static bool stream_next(Context *cx, DfsStream *st) {
  st->has = false;
  if (st->ended) return true;
  if (!get(st->in, &st->d, sizeof st->d)) return false;
  if (st->d.w.id == CHILD_END) {
    st->ended = true;
    return true;
  }
  st->has = true;
  if (st->d.fate != RUN_COUNTED) return true;
  st->where = get_text(st->in, st->d.w.where_length);
  st->text = st->where ? get_text(st->in, st->d.w.length) : NULL;
  if (!st->text) return false;
  if (st->d.has_schedule && !get_schedule(st->in, cx->ex, &st->schedule)) return false;
  coverage_free(&st->choices);
  memset(&st->choices, 0, sizeof st->choices);
  return get_coverage(st->in, &st->choices);
}

static bool parallel_dfs(Context *cx, Sweep *s) {
  const ExploreOptions *o = cx->options;
  int jobs = o->jobs;
  DfsStream *streams = calloc((size_t)jobs, sizeof *streams);
  pid_t *pids = calloc((size_t)jobs, sizeof *pids);
  if (!streams || !pids) xrealloc(NULL, SIZE_MAX);
  fflush(stdout);
  fflush(stderr);
  int slices = (int)o->shards * jobs, first = (int)(o->shard - 1) * jobs;
  for (int j = 0; j < jobs; j++) {
    FILE *out;
    if ((pids[j] = start_job(&streams[j].in, &out)) < 0) return false;
    if (pids[j] == 0) {
      for (int k = 0; k < j; k++) fclose(streams[k].in);
      DfsChild child = {out, {0}};
      Sweep mine;
      memset(&mine, 0, sizeof mine);
      explore_split(cx->ex, first + j, slices);
      dfs_sweep(cx, &mine, dfs_send, &child);
      int32_t tail[2] = {mine.exhausted, mine.bound};
      DfsWire end = {{.id = CHILD_END}, 0, 0, 0, 0};
      if (!put(child.out, &end, sizeof end) || !put(child.out, tail, sizeof tail) || fflush(child.out) != 0) _exit(1);
      _exit(0);
    }
  }
  bool ok = true;
  for (int j = 0; j < jobs && ok; j++) ok = stream_next(cx, &streams[j]);
  uint64_t number = 0;
  bool truncated = false;
  while (ok) {
    /* the next run of the whole search: the least (bound, subtree) */
    int best = -1;
    for (int j = 0; j < jobs; j++) {
      if (!streams[j].has) continue;
      if (best < 0 || streams[j].d.bound < streams[best].d.bound ||
          (streams[j].d.bound == streams[best].d.bound && streams[j].d.unit < streams[best].d.unit))
        best = j;
    }
    if (best < 0) break;
    DfsStream *st = &streams[best];
    if (st->d.fate != RUN_COUNTED) {
      if (number >= o->count) truncated = true;
      else if (st->d.fate == RUN_ABANDONED) s->abandoned++;
      else s->repeated++;
    } else if (number < o->count) {
      Record r = {++number, st->d.w.failure, explore_kinds[st->d.w.kind < 7 ? st->d.w.kind : 0], st->text,
                  st->where, st->d.w.steps, st->d.w.deviations, st->d.w.preemptions, st->d.w.hash};
      if (st->d.bound > s->bound) s->bound = st->d.bound;
      coverage_merge(&s->coverage, &st->choices);
      take_record(cx, s, &r, st->d.has_schedule ? &st->schedule : NULL);
      show_progress(s, false);
      if ((s->interrupted = stop_signal(cx))) break;
    } else {
      truncated = true;
      free(st->text);
      free(st->where);
    }
    ok = stream_next(cx, st);
  }
  if (s->interrupted) {
    stop_jobs(pids, jobs);
    for (int j = 0; j < jobs; j++) {
      fclose(streams[j].in);
      schedule_free(&streams[j].schedule);
      coverage_free(&streams[j].choices);
    }
    free(streams);
    free(pids);
    return true;
  }
  bool exhausted = !truncated;
  for (int j = 0; j < jobs && ok; j++) {
    int32_t tail[2];
    ok = get(streams[j].in, tail, sizeof tail);
    if (!ok) break;
    exhausted = exhausted && tail[0];
    if (exhausted && tail[1] > s->bound) s->bound = tail[1];
  }
  s->exhausted = exhausted;
  for (int j = 0; j < jobs; j++) {
    fclose(streams[j].in);
    schedule_free(&streams[j].schedule);
    coverage_free(&streams[j].choices);
    int wstatus;
    if (waitpid(pids[j], &wstatus, 0) < 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) ok = false;
  }
  if (!ok) fprintf(stderr, "simvm: a --jobs process failed\n");
  free(streams);
  free(pids);
  return ok;
}

/* ---- delay bounding ---- */

/* Every schedule with exactly `bound` deviations from the default one
 * (Emmi, Qadeer and Rakamarić, "Delay-Bounded Scheduling", POPL 2011),
 * bound 0, 1, 2 ..., and within a bound the earliest deviations first: a
 * schedule's children deviate once more, at a later step, to each other
 * candidate there, found by replaying it with its steps recorded. A bug
 * one preemption deep among a hundred threads is then a few thousand
 * schedules away, where a depth-first search meets it only after every
 * later step's alternatives. */
typedef struct {
  Context *cx;
  Sweep *s;
  uint64_t number;             /* schedules counted                       */
  bool more;                   /* a schedule with `bound` deviations had a later step */
  bool stop;
  Schedule found;
} Delay;

static void delay_level(Delay *d, Schedule *prefix, int after, int left) {
  Context *cx = d->cx;
  const ExploreOptions *o = cx->options;
  if (d->stop) return;
  explore_use_replay(cx->ex, prefix, false);
  explore_record_steps(cx->ex, left > 0);
  SimStatus status = explore_run(cx->ex);
  if (left == 0) { /* a schedule of this bound: count it */
    coverage_add_run(&d->s->coverage, explore_choices(cx->ex));
    Record r = explore_record(cx, ++d->number, status);
    explore_schedule(cx->ex, &d->found, true);
    take_record(cx, d->s, &r, &d->found);
    show_progress(d->s, false);
    if (d->number >= o->count) d->stop = true;
    if ((d->s->interrupted = stop_signal(cx))) d->stop = true;
    return;
  }
  explore_captured()->length = 0;
  /* its steps after `after`, each a place to deviate to each other candidate */
  int count = explore_step_count(cx->ex);
  StepRecord *steps = xrealloc(NULL, (size_t)(count ? count : 1) * sizeof *steps);
  /* a run with no step recorded has no records at all (fuzz_explore found
   * &records[0] of NULL) */
  if (count) memcpy(steps, explore_step(cx->ex, 0), (size_t)count * sizeof *steps);
  int total = count ? steps[count - 1].first + steps[count - 1].count : 0;
  int *keys = xrealloc(NULL, (size_t)(total ? total : 1) * sizeof *keys);
  if (total) memcpy(keys, explore_step_candidates(cx->ex, &steps[0]), (size_t)total * sizeof *keys);
  Schedule child = {0};
  for (int i = 0; i < count && !d->stop; i++) {
    if (steps[i].step <= after) continue;
    if (left == 1) d->more = true;
    for (int c = 1; c < steps[i].count && !d->stop; c++) {
      schedule_copy(&child, prefix);
      child.devs = xrealloc(child.devs, (size_t)(child.dev_count + 1) * sizeof *child.devs);
      child.devs[child.dev_count++] = (Deviation){steps[i].step, steps[i].time, keys[steps[i].first + c],
                                                  keys[steps[i].first], steps[i].point};
      delay_level(d, &child, steps[i].step, left - 1);
    }
  }
  schedule_free(&child);
  free(steps);
  free(keys);
}

static void delay_sweep(Context *cx, Sweep *s) {
  const ExploreOptions *o = cx->options;
  Delay d = {cx, s, 0, false, false, {0}};
  Schedule none = {0};
  for (int bound = 0; !d.stop && (o->preemptions < 0 || bound <= o->preemptions); bound++) {
    s->bound = bound;
    d.more = bound == 0;
    delay_level(&d, &none, 0, bound);
    if (!d.more) { /* no schedule of the last bound had a step to deviate at */
      s->exhausted = !d.stop;
      break;
    }
  }
  if (!d.stop && o->preemptions >= 0) s->exhausted = true;
  if (s->interrupted) s->exhausted = false;
  explore_record_steps(cx->ex, false);
  schedule_free(&d.found);
}

/* ---- a failing class: found again, shrunk, written ---- */

#define MAX_SHRUNK_CLASSES 8
#define TO_TEXT_(x) #x
#define TO_TEXT(x) TO_TEXT_(x)

typedef struct {
  int class_index;
  Record check;                /* the shrunk schedule's strict replay     */
  Schedule schedule;           /* shrunk                                  */
  uint64_t seed;               /* the program seed it is for              */
  int before;                  /* deviations and choices before shrinking */
  int before_devs, before_preemptions, before_choices;
  int runs;                    /* shrinking's replays                     */
  int tried;                   /* the class's runs shrunk                 */
  bool write_failed;           /* its schedule file could not be written  */
  bool shrunk;                 /* false with --no-shrink, or once a signal stopped the sweep */
  char *path;                  /* the file written, or NULL               */
} Failure;

static void failure_free(Failure *f) {
  schedule_free(&f->schedule);
  record_free(&f->check);
  free(f->path);
}

/* The schedule file of the n-th failing class (from 1): NAME.schedule,
 * then NAME.2.schedule ..., or --schedule-out's name likewise. */
static char *schedule_path(const ExploreOptions *o, int n) {
  const char *given = o->schedule_out;
  const char *name = given ? given : strrchr(o->script, '/') ? strrchr(o->script, '/') + 1 : o->script;
  size_t length = strlen(name);
  const char *suffix = given ? "" : ".schedule";
  if (!given && length > 4 && strcmp(name + length - 4, ".sim") == 0) length -= 4;
  else if (!given && length > 5 && strcmp(name + length - 5, ".simc") == 0) length -= 5;
  size_t extra = given && length > 9 && strcmp(name + length - 9, ".schedule") == 0 ? 9 : 0;
  char *path = xrealloc(NULL, length + 32);
  if (n == 1) snprintf(path, length + 32, "%.*s%s", (int)length, name, suffix);
  else if (given) snprintf(path, length + 32, "%.*s.%d%s", (int)(length - extra), name, n, extra ? ".schedule" : "");
  else snprintf(path, length + 32, "%.*s.%d%s", (int)length, name, n, suffix);
  return path;
}

static void found_by(const Context *cx, uint64_t id, char *out, size_t size) {
  const ExploreOptions *o = cx->options;
  if (is_dfs(o))
    snprintf(out, size, "simvm --explore %" PRIu64 " --strategy %s as schedule %" PRIu64, o->count,
             strategy_name(o->strategy), id);
  else if (o->strategy == EXPLORE_PCT)
    snprintf(out, size, "simvm --explore (pct, depth %d) as seed %" PRIu64, o->depth, id);
  else snprintf(out, size, "simvm --explore (random) as seed %" PRIu64, id);
}

/* A story's size, to compare shrunk schedules: fewest deviations, then
 * faults fired, then other choices, then preemptions. */
static void story_size(const Schedule *sc, int size[4]) {
  size[0] = sc->dev_count;
  size[1] = size[2] = 0;
  for (int i = 0; i < sc->choice_count; i++) size[sc->choices[i].kind == CHOICE_FAULT ? 1 : 2]++;
  size[3] = schedule_preemptions(sc);
}

static bool smaller_story(const Schedule *a, const Schedule *b) {
  int x[4], y[4];
  story_size(a, x);
  story_size(b, y);
  for (int k = 0; k < 4; k++)
    if (x[k] != y[k]) return x[k] < y[k];
  return false;
}

/* Candidate k of a failing class: its schedule, draws and all, and the
 * program seed it runs under. */
static uint64_t candidate(Context *cx, Class *c, int k, Schedule *out) {
  if (is_dfs(cx->options)) {
    schedule_copy(out, &c->found[k]);
    return cx->vm->config.seed;
  }
  use_seed(cx, c->runs[k]);
  explore_run(cx->ex);
  explore_captured()->length = 0;
  explore_schedule(cx->ex, out, true);
  return c->runs[k];
}

/* Shrink the class's first runs, keep the smallest story, check it, write
 * it. False on an internal error or a write error. */
static bool settle_failure(Context *cx, Sweep *s, Failure *f, int n) {
  VM *vm = cx->vm;
  Class *c = &s->classes.items[f->class_index];
  const ExploreOptions *o = cx->options;
  f->shrunk = o->shrink && !stop_signal(cx); /* stopped: written as found, at once */
  int tries = f->shrunk ? c->candidates : 1;
  Schedule trial = {0};
  uint64_t winner = c->first;
  for (int k = 0; k < tries; k++) {
    uint64_t seed = candidate(cx, c, k, &trial);
    /* the choices of the story as found: all but the draws at their default */
    int others = 0;
    for (int i = 0; i < trial.choice_count; i++)
      others += choice_differs(&trial.choices[i], trial.orders) || choice_family(trial.choices[i].kind) != FAMILY_DRAW;
    if (k == 0) { /* the first run, as found, for the report */
      f->before_devs = trial.dev_count;
      f->before_preemptions = schedule_preemptions(&trial);
      f->before_choices = others;
    }
    int before = trial.dev_count + others;
    Shrinker shr = {cx, c->kind, c->where, seed, 0, 0, {0}};
    if (f->shrunk) {
      shrink_schedule(&shr, &trial);
    } else if (shrink_test(&shr, &trial)) { /* the draws at their default, not listed */
      schedule_copy(&trial, &shr.got);
    }
    f->runs += shr.runs;
    if (k == 0 || smaller_story(&trial, &f->schedule)) {
      schedule_copy(&f->schedule, &trial);
      f->seed = shr.seed;
      f->before = before;
      winner = c->runs[k];
    }
    shrinker_free(&shr);
  }
  f->tried = tries;
  schedule_free(&trial);
  /* what is written must fail in the class, replayed strictly */
  vm->config.seed = f->seed;
  explore_use_replay(cx->ex, &f->schedule, true);
  f->check = explore_record(cx, 0, explore_run(cx->ex));
  if (explore_mismatch(cx->ex)->mismatch || !record_in_class(&f->check, c->kind, c->where)) {
    fprintf(stderr, "simvm: internal error: the schedule of %s %" PRIu64 " does not fail the same way when replayed\n",
            is_dfs(o) ? "schedule" : "seed", winner);
    return false;
  }
  char found[256];
  found_by(cx, winner, found, sizeof found);
  f->path = schedule_path(o, n);
  ScheduleNote note = {found, &f->check, f->seed, f->before};
  if (!schedule_file_write(cx, f->path, &f->schedule, &note)) {
    free(f->path);
    f->path = NULL;
    f->write_failed = true;
    return false;
  }
  return true;
}

/* ---- the report ---- */

/* "pass", "FAIL", or "stop" for a limit that is not a failure. */
static const char *verdict(bool failure, const char *kind) {
  return failure ? "FAIL" : strcmp(kind, "limit") == 0 ? "stop" : "pass";
}

static const char *signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

/* A sweep a signal stopped reports the schedules it ran. */
static void print_interrupted(const Context *cx, const Sweep *s) {
  if (!s->interrupted) return;
  printf("interrupted by %s after %" PRIu64 " schedule%s of --explore %" PRIu64 "\n", signal_name(s->interrupted),
         s->runs, s->runs == 1 ? "" : "s", cx->options->count);
}

static void print_classes(const Sweep *s) {
  uint64_t widest = 1;
  for (int i = 0; i < s->classes.count; i++)
    if (s->classes.items[i].count > widest) widest = s->classes.items[i].count;
  int width = snprintf(NULL, 0, "%" PRIu64, widest);
  for (int i = 0; i < s->classes.count; i++) {
    const Class *c = &s->classes.items[i];
    printf("  %*" PRIu64 "  %s  %s\n", width, c->count, verdict(c->failure, c->kind), c->description);
  }
}

static void print_header(const Context *cx, const Sweep *s) {
  const ExploreOptions *o = cx->options;
  printf("simvm --explore: %" PRIu64 " schedule%s of %s, %s", s->runs, s->runs == 1 ? "" : "s",
         explore_program_name(cx->vm), strategy_name(o->strategy));
  if (o->strategy == EXPLORE_PCT) printf(" (depth %d, k %d)", o->depth, cx->estimate);
  if (is_dfs(o)) {
    bool delay = o->strategy == EXPLORE_DELAY;
    const char *what = delay ? "deviation" : "preemption";
    printf(" (iterative %s bounding", delay ? "delay" : "preemption");
    if (o->preemptions >= 0) printf(" to %d", o->preemptions);
    printf("%s)\n", o->strategy == EXPLORE_DFS ? ", no pruning" : "");
    if (s->exhausted && o->preemptions >= 0)
      printf("every schedule within %d %s%s was explored", o->preemptions, what, o->preemptions == 1 ? "" : "s");
    else if (s->exhausted) printf("every schedule was explored (%d %s%s at most)", s->bound - 1, what,
                                  s->bound - 1 == 1 ? "" : "s");
    else if (s->interrupted) printf("stopped in bound %d, before the space was exhausted", s->bound);
    else printf("stopped at --explore %" PRIu64 " in bound %d, before the space was exhausted", o->count, s->bound);
    if (s->abandoned) printf("; %" PRIu64 " run%s abandoned as equivalent to explored ones", s->abandoned,
                             s->abandoned == 1 ? "" : "s");
    printf("\n");
    return;
  }
  uint64_t last = o->first_seed + o->count - 1;
  if (o->count == 1) printf(", seed %" PRIu64, o->first_seed);
  else printf(", seeds %" PRIu64 "-%" PRIu64, o->first_seed, last);
  if (o->shards > 1) printf(", shard %" PRIu64 "/%" PRIu64, o->shard, o->shards);
  printf("\n");
}

static void print_coverage(const Context *cx, const Sweep *s) {
  const Coverage *c = &s->coverage;
  uint64_t draws = c->totals[CHOICE_RANDOM] + c->totals[CHOICE_FLOAT] + c->totals[CHOICE_SPAN];
  uint64_t changed = c->changed[CHOICE_RANDOM] + c->changed[CHOICE_FLOAT] + c->changed[CHOICE_SPAN];
  printf("coverage: %" PRIu64 " distinct schedule%s, %d outcome class%s, %" PRIu64 " steps with %" PRIu64
         " deviations\n",
         s->distinct.count, s->distinct.count == 1 ? "" : "s", s->classes.count, s->classes.count == 1 ? "" : "es",
         s->steps, s->deviations);
  printf("choices: random draws %" PRIu64 " (%" PRIu64 " off the stream), durations %" PRIu64, draws, changed,
         c->totals[CHOICE_DURATION]);
  if (explore_choices(cx->ex)->jitter) printf(" (%" PRIu64 " jittered)", c->changed[CHOICE_DURATION]);
  else printf(" (no --jitter)");
  printf(", timer ties %" PRIu64 " (%" PRIu64 " reordered), fault points %" PRIu64 " (%" PRIu64 " fired)\n",
         c->totals[CHOICE_TIMERS], c->changed[CHOICE_TIMERS], c->totals[CHOICE_FAULT], c->changed[CHOICE_FAULT]);
  if (c->fault_count) {
    printf("fault points:");
    for (int i = 0; i < c->fault_count; i++)
      printf("%s \"%s\" reached %" PRIu64 ", fired %" PRIu64, i ? ";" : "", c->faults[i].name, c->faults[i].reached,
             c->faults[i].fired);
    printf("\n");
  }
}

static void print_failures(const Context *cx, const Sweep *s, const Failure *failures, int count) {
  const ExploreOptions *o = cx->options;
  int failing = 0;
  for (int i = 0; i < s->classes.count; i++) failing += s->classes.items[i].failure;
  printf("%" PRIu64 " of %" PRIu64 " schedules failed, in %d class%s:\n", s->failures, s->runs, failing,
         failing == 1 ? "" : "es");
  for (int i = 0; i < count; i++) {
    const Failure *f = &failures[i];
    const Class *c = &s->classes.items[f->class_index];
    printf("%d. %s%s: %" PRIu64 " run%s; the first, %s %" PRIu64 ", has %d deviation%s (%d preemption%s) and %d "
           "other choice%s\n",
           i + 1, c->kind, c->where, c->count, c->count == 1 ? "" : "s", is_dfs(o) ? "schedule" : "seed", c->first,
           f->before_devs, f->before_devs == 1 ? "" : "s", f->before_preemptions, f->before_preemptions == 1 ? "" : "s",
           f->before_choices, f->before_choices == 1 ? "" : "s");
    Buffer story;
    buf_init(&story);
    schedule_story(&f->schedule, &story);
    if (f->shrunk)
      printf("   shrunk in %d run%s (%d failing run%s tried): it %s\n", f->runs, f->runs == 1 ? "" : "s", f->tried,
             f->tried == 1 ? "" : "s", story.data);
    else printf("   it %s\n", story.data);
    buf_free(&story);
    if (f->path) printf("   schedule written to %s; replay it with: simvm --replay %s %s\n", f->path, f->path, o->script);
  }
  if (failing > count)
    printf("(%d more class%s not shrunk: %s)\n", failing - count, failing - count == 1 ? "" : "es",
           count && failures[count - 1].write_failed ? "a schedule file could not be written"
                                                    : "at most " TO_TEXT(MAX_SHRUNK_CLASSES) " are");
}

static void json_schedule(Explorer *ex, Buffer *out, const Schedule *sc) {
  buf_printf(out, "\"schedule\": [");
  for (int i = 0; i < sc->dev_count; i++)
    buf_printf(out, "%s{\"step\": %d, \"time_ns\": %" PRId64 ", \"thread\": \"%s\", \"instead_of\": \"%s\"}",
               i ? ", " : "", sc->devs[i].step, sc->devs[i].time, explore_thread_id(ex, sc->devs[i].thread),
               explore_thread_id(ex, sc->devs[i].instead));
  buf_printf(out, "], \"choices\": [");
  for (int i = 0; i < sc->choice_count; i++) {
    Buffer line;
    buf_init(&line);
    explore_choice_text(ex, &sc->choices[i], sc->orders, &line);
    if (i) buf_printf(out, ", ");
    explore_json_string(out, buf_text(&line));
    buf_free(&line);
  }
  buf_printf(out, "]");
}

static void json_coverage(const Context *cx, const Sweep *s, Buffer *out) {
  const Coverage *c = &s->coverage;
  static const char *const names[] = {"random", "float", "span", "duration", "fault", "timers"};
  buf_printf(out, ", \"coverage\": {\"distinct_schedules\": %" PRIu64 ", \"outcome_classes\": %d, \"steps\": %" PRIu64
                  ", \"deviations\": %" PRIu64 ", \"choices\": {",
             s->distinct.count, s->classes.count, s->steps, s->deviations);
  for (int k = 0; k < CHOICE_KINDS; k++)
    buf_printf(out, "%s\"%s\": {\"made\": %" PRIu64 ", \"changed\": %" PRIu64 "}", k ? ", " : "", names[k],
               c->totals[k], c->changed[k]);
  buf_printf(out, "}, \"faults\": [");
  for (int i = 0; i < c->fault_count; i++) {
    buf_printf(out, "%s{\"name\": ", i ? ", " : "");
    explore_json_string(out, c->faults[i].name);
    buf_printf(out, ", \"reached\": %" PRIu64 ", \"fired\": %" PRIu64 "}", c->faults[i].reached, c->faults[i].fired);
  }
  buf_printf(out, "]");
  if (cx->options->strategy == EXPLORE_PCT) buf_printf(out, ", \"pct_k\": %d", cx->estimate);
  if (is_dfs(cx->options)) buf_printf(out, ", \"bound\": %d, \"repeated\": %" PRIu64, s->bound, s->repeated);
  buf_printf(out, "}");
}

static void json_failure(const Context *cx, const Sweep *s, const Failure *f, Buffer *out) {
  const Class *c = &s->classes.items[f->class_index];
  Buffer story;
  buf_init(&story);
  schedule_story(&f->schedule, &story);
  buf_printf(out, "{\"kind\": \"%s\", \"place\": ", c->kind);
  explore_json_string(out, c->where);
  buf_printf(out, ", \"description\": ");
  explore_json_string(out, c->description);
  buf_printf(out, ", \"count\": %" PRIu64 ", \"%s\": %" PRIu64 ", \"deviations\": %d, \"preemptions\": %d, "
                  "\"choices\": %d, \"shrunk\": {\"deviations\": %d, \"preemptions\": %d, \"choices\": %d, "
                  "\"runs\": %d, \"seed\": %" PRIu64 ", \"story\": ",
             c->count, is_dfs(cx->options) ? "schedule" : "seed", c->first, f->before_devs, f->before_preemptions,
             f->before_choices, f->schedule.dev_count, schedule_preemptions(&f->schedule), f->schedule.choice_count,
             f->runs, f->seed);
  explore_json_string(out, story.data);
  buf_printf(out, ", ");
  json_schedule(cx->ex, out, &f->schedule);
  buf_printf(out, "}, \"schedule_file\": ");
  if (f->path) explore_json_string(out, f->path);
  else buf_printf(out, "null");
  buf_printf(out, "}");
  buf_free(&story);
}

static void json_summary(const Context *cx, const Sweep *s, double seconds, const Failure *failures, int count) {
  const ExploreOptions *o = cx->options;
  Buffer out;
  buf_init(&out);
  buf_printf(&out, "{\"summary\": {\"program\": ");
  explore_json_string(&out, explore_program_name(cx->vm));
  buf_printf(&out, ", \"program_hash\": \"%016" PRIx64 "\"", explore_program_hash(cx->vm));
  if (cx->options->jitter) buf_printf(&out, ", \"jitter_ppm\": %u", cx->options->jitter);
  buf_printf(&out, ", \"strategy\": \"%s\"", strategy_name(o->strategy));
  if (o->strategy == EXPLORE_PCT) buf_printf(&out, ", \"depth\": %d", o->depth);
  if (is_dfs(o))
    buf_printf(&out, ", \"preemptions\": %d, \"exhausted\": %s, \"abandoned\": %" PRIu64 ", \"shard\": %" PRIu64
                     ", \"shards\": %" PRIu64,
               o->preemptions, s->exhausted ? "true" : "false", s->abandoned, o->shard, o->shards);
  else
    buf_printf(&out, ", \"first_seed\": %" PRIu64 ", \"last_seed\": %" PRIu64 ", \"shard\": %" PRIu64
                     ", \"shards\": %" PRIu64,
               o->first_seed, o->first_seed + o->count - 1, o->shard, o->shards);
  if (s->interrupted) buf_printf(&out, ", \"interrupted\": \"%s\"", signal_name(s->interrupted));
  buf_printf(&out, ", \"schedules\": %" PRIu64 ", \"failures\": %" PRIu64 ", \"outcomes\": [", s->runs, s->failures);
  for (int i = 0; i < s->classes.count; i++) {
    const Class *x = &s->classes.items[i];
    buf_printf(&out, "%s{\"outcome\": \"%s\", \"kind\": \"%s\", \"place\": ", i ? ", " : "",
               json_verdict(x->failure, x->kind), x->kind);
    explore_json_string(&out, x->where);
    buf_printf(&out, ", \"description\": ");
    explore_json_string(&out, x->description);
    buf_printf(&out, ", \"count\": %" PRIu64 ", \"first\": %" PRIu64 "}", x->count, x->first);
  }
  buf_printf(&out, "]");
  json_coverage(cx, s, &out);
  buf_printf(&out, ", \"failing_classes\": [");
  for (int i = 0; i < count; i++) {
    if (i) buf_printf(&out, ", ");
    json_failure(cx, s, &failures[i], &out);
  }
  buf_printf(&out, "], \"wall_seconds\": %.6f}}\n", seconds);
  write_stdout(NULL, out.data, out.length);
  buf_free(&out);
}

/* The failing run once more, traced, its deviations and choices marked,
 * its messages after the trace. */
static void print_trace(Context *cx, const Failure *f) {
  VM *vm = cx->vm;
  printf("\nthe %sschedule's trace, its deviations and choices marked <-:\n", f->shrunk ? "shrunk " : "");
  fflush(stdout);
  vm->config.trace = true;
  vm->config.trace_all = cx->saved.trace_all;
  vm->config.write_trace = write_stdout;
  vm->config.write_error = write_stdout;
  vm->config.seed = f->seed;
  explore_use_replay(cx->ex, &f->schedule, true);
  explore_mark_deviations(cx->ex, true);
  explore_run(cx->ex);
}

int explore_command(VM *vm, const ExploreOptions *options) {
  Context cx = {vm, explore_new(vm), options, vm->config, 0};
  Context *c = &cx;
  explore_quiet(c);
  explore_set_jitter(cx.ex, options->jitter);
  if (!vm->config.max_steps) vm->config.max_steps = EXPLORE_DEFAULT_MAX_STEPS;
  double started = now_seconds();
  SimStatus load;
  if (!default_run(c, &load)) { /* the program did not load: say why, as a plain run would */
    fflush(stdout);
    Buffer *captured = explore_captured();
    if (captured->length) fwrite(captured->data, 1, captured->length, stderr);
    explore_free(cx.ex);
    buf_free(captured);
    vm->config = cx.saved;
    return load;
  }
  calibrate(c);
  explore_reset_totals(cx.ex);
  Sweep s;
  memset(&s, 0, sizeof s);
  s.first_failing = -1;
  s.started = s.last_progress = started;
  s.progress = !options->json && isatty(STDERR_FILENO);
  bool ok = true;
  if (is_dfs(options)) {
    vm->config.seed = options->seed_given ? options->first_seed : 0;
    if (options->strategy == EXPLORE_DELAY) {
      delay_sweep(c, &s);
    } else if (options->jobs > 1) {
      ok = parallel_dfs(c, &s);
    } else {
      if (options->shards > 1) explore_split(cx.ex, (int)options->shard - 1, (int)options->shards);
      dfs_sweep(c, &s, dfs_take, NULL);
    }
  } else {
    uint64_t size = shard_size(options);
    if (options->jobs > 1 && size > CHUNK) {
      ok = parallel_sweep(c, &s, size);
    } else {
      for (uint64_t i = 0; i < size && !s.interrupted; i++) {
        Record r = run_seed(c, shard_seed(options, i));
        take_record(c, &s, &r, NULL);
        show_progress(&s, false);
        s.interrupted = stop_signal(c);
      }
    }
  }
  /* a seed sweep counts every run it makes; a search counted its own as it went */
  if (!is_dfs(options) && !(options->jobs > 1 && shard_size(options) > CHUNK))
    coverage_add(&s.coverage, explore_choices(cx.ex));
  show_progress(&s, true);
  if (!ok) {
    explore_free(cx.ex);
    return SIM_FAILED;
  }

  /* each failing class, in the order found: its schedule, shrunk */
  Failure *failures = NULL;
  int count = 0;
  for (int i = 0; i < s.classes.count && count < MAX_SHRUNK_CLASSES && ok; i++) {
    if (!s.classes.items[i].failure) continue;
    failures = xrealloc(failures, (size_t)(count + 1) * sizeof *failures);
    Failure *f = &failures[count++];
    memset(f, 0, sizeof *f);
    f->class_index = i;
    if (!settle_failure(c, &s, f, count)) ok = false;
  }
  if (!s.interrupted) s.interrupted = stop_signal(c); /* while shrinking: the rest were not */
  double seconds = now_seconds() - started;

  if (options->json) {
    json_summary(c, &s, seconds, failures, count);
  } else {
    print_header(c, &s);
    print_interrupted(c, &s);
    print_classes(&s);
    print_coverage(c, &s);
    if (!s.failures && s.stopped)
      printf("no schedule failed, but %" PRIu64 " stopped at a limit (a failure with --fail-on limit)\n", s.stopped);
    else if (!s.failures) printf("every schedule passed\n");
    else print_failures(c, &s, failures, count);
    if (count && failures[0].path && !options->quiet) print_trace(c, &failures[0]);
  }
  if (fflush(stdout) != 0) out_failed();
  /* a schedule that could not be written is an output error (2), as a
   * trace that cannot be; an internal error is 1 */
  bool write_failed = count && failures[count - 1].write_failed;
  int status = write_failed ? SIM_USAGE : !ok ? SIM_FAILED : s.failures ? 1 : 0;
  for (int i = 0; i < count; i++) failure_free(&failures[i]);
  free(failures);
  classes_free(&s.classes);
  free(s.distinct.slots);
  coverage_free(&s.coverage);
  explore_free(cx.ex);
  buf_free(explore_captured());
  vm->config = cx.saved;
  return status;
}

/* ---- single runs ---- */

Explorer *explore_seeded(VM *vm, const ExploreOptions *options, uint64_t seed) {
  Context cx = {vm, explore_new(vm), options, vm->config, 0};
  explore_quiet(&cx);
  explore_set_jitter(cx.ex, options->jitter);
  SimStatus status;
  bool loaded = default_run(&cx, &status);
  if (loaded) calibrate(&cx);
  vm->config = cx.saved;
  explore_captured()->length = 0;
  if (!loaded) { /* the plain run that follows says why */
    explore_free(cx.ex);
    return NULL;
  }
  use_seed(&cx, seed);
  explore_mark_deviations(cx.ex, true);
  return cx.ex;
}

/* What the replayed file says the run ends in (explore_replay_failed). */
static struct {
  bool has_outcome;
  char kind[32];
  char where[512];
} expected;

Explorer *explore_replay_file(VM *vm, const char *path, bool max_steps_set, int *status) {
  Explorer *ex = explore_new(vm);
  ScheduleFile f;
  if (!schedule_file_read(ex, path, &f, status)) {
    explore_free(ex);
    return NULL;
  }
  /* the load, quietly, to know the program (its name is the script's) */
  ExploreOptions options;
  explore_options_init(&options);
  Context cx = {vm, ex, &options, vm->config, 0};
  explore_quiet(&cx);
  SimStatus load;
  bool loaded = default_run(&cx, &load);
  vm->config = cx.saved;
  explore_captured()->length = 0;
  if (!loaded) {
    schedule_file_free(&f);
    explore_free(ex);
    *status = -1; /* run it plainly: the load reports */
    return NULL;
  }
  if (strcmp(f.name, explore_program_name(vm)) != 0) {
    fflush(stdout);
    fprintf(stderr, "simvm: %s is a schedule for %s, not %s\n", path, f.name, explore_program_name(vm));
    schedule_file_free(&f);
    explore_free(ex);
    *status = SIM_COMPILE_ERROR;
    return NULL;
  }
  if (f.version >= 2 && f.hash != explore_program_hash(vm)) {
    Buffer changes;
    buf_init(&changes);
    schedule_file_changes(&cx, &f, &changes);
    fflush(stdout);
    fprintf(stderr, "simvm: note: %s has changed since %s was written (%s); replaying it anyway\n",
            explore_program_name(vm), path, changes.length ? changes.data : "its definitions differ");
    buf_free(&changes);
  }
  expected.has_outcome = f.has_outcome;
  snprintf(expected.kind, sizeof expected.kind, "%s", f.kind);
  snprintf(expected.where, sizeof expected.where, "%s", f.where);
  vm->config.seed = f.seed;
  if (f.max_steps && !max_steps_set) vm->config.max_steps = f.max_steps;
  if (f.fail_on_uncaught) vm->config.fail_on_uncaught = true;
  if (f.strict_shutdown) vm->config.strict_shutdown = true;
  if (f.max_time >= 0 && vm->config.max_time < 0) vm->config.max_time = f.max_time;
  if (f.max_heap && !vm->config.max_heap) vm->config.max_heap = f.max_heap;
  if (f.max_threads && !vm->config.max_threads) vm->config.max_threads = f.max_threads;
  explore_set_jitter(ex, f.jitter);
  explore_use_replay(ex, &f.schedule, true);
  explore_mark_deviations(ex, true);
  schedule_file_free(&f);
  return ex;
}

bool explore_replay_failed(VM *vm, Explorer *ex, const char *path, SimStatus status) {
  const ReplayMismatch *m = explore_mismatch(ex);
  fflush(stdout);
  if (m->mismatch) {
    if (m->deviation)
      fprintf(stderr, "simvm: %s no longer matches %s: it stopped matching at deviation %d: %s\n", path,
              explore_program_name(vm), m->deviation, m->why);
    else
      fprintf(stderr, "simvm: %s no longer matches %s: it stopped matching at '%s': %s\n", path,
              explore_program_name(vm), m->line, m->why);
    return true;
  }
  if (!expected.has_outcome) return false;
  Buffer description, where;
  buf_init(&description);
  buf_init(&where);
  const char *kind;
  explore_describe(vm, status, false, &kind, &description, &where);
  /* the class: a pass's is its kind alone here (the file keeps no result) */
  bool same = strcmp(kind, expected.kind) == 0 && (strcmp(kind, "pass") == 0 || strcmp(buf_text(&where), expected.where) == 0);
  if (!same)
    fprintf(stderr, "simvm: %s ended differently than %s records: it records %s%s, but this run's outcome is %s%s (%s)\n",
            explore_program_name(vm), path, expected.kind, expected.where, kind, buf_text(&where),
            buf_text(&description));
  buf_free(&description);
  buf_free(&where);
  return !same;
}
