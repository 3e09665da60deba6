/* simvm --explore, --seed and --replay (docs/EXPLORE.md).
 *
 * --explore runs schedules in this process or in --jobs processes, each
 * with a slice of the seeds; their results come back in seed order, so the
 * report does not depend on the number of processes. The first failure
 * (the lowest seed) is run again here, shrunk by delta debugging over its
 * deviations, then to fewer preemptions, written as a schedule file and
 * shown as a trace with its deviations marked. */
#include "explore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "../vm/explore.h"
#include "../base/options.h"

void explore_options_init(ExploreOptions *options) {
  memset(options, 0, sizeof *options);
  options->strategy = EXPLORE_PCT;
  options->first_seed = 1;
  options->depth = 3;
  options->preemptions = 2;
  options->jobs = 1;
  options->shard = options->shards = 1;
  options->shrink = true;
}

bool explore_parse_strategy(const char *name, ExploreStrategy *out) {
  static const struct { const char *name; ExploreStrategy strategy; } names[] = {
      {"pct", EXPLORE_PCT}, {"random", EXPLORE_RANDOM}, {"exhaustive", EXPLORE_EXHAUSTIVE}, {"dfs", EXPLORE_DFS}};
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
    default: return "default";
  }
}

/* ---- output ---- */

static void out_failed(void) {
  fprintf(stderr, "simvm: cannot write output: %s\n", strerror(errno));
  exit(SIM_FAILED);
}

static void write_stdout(void *user, const char *text, size_t length) {
  (void)user;
  if (fwrite(text, 1, length, stdout) != length || ferror(stdout)) out_failed();
}

/* Diagnostics of the runs explored are kept, not printed: the last run's. */
static Buffer captured;

static void write_captured(void *user, const char *text, size_t length) {
  (void)user;
  buf_append(&captured, text, length);
}

static void json_string(Buffer *out, const char *text) {
  buf_append(out, "\"", 1);
  for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
    if (*s == '"' || *s == '\\') buf_printf(out, "\\%c", *s);
    else if (*s == '\n') buf_append(out, "\\n", 2);
    else if (*s < 0x20) buf_printf(out, "\\u%04x", *s);
    else buf_append(out, (const char *)s, 1);
  }
  buf_append(out, "\"", 1);
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the program's identity ---- */

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The script's file name, as its compiled form also knows it. */
static const char *program_name(VM *vm) {
  return vm->module_inits.count ? base_name(vm->loader->module_keys[vm->module_inits.count - 1]) : "?";
}

/* FNV-1a over every definition: name, arity, file name and line. The same
 * for the script, its bytecode file and either bind strategy, wherever it
 * is run from; another program, or this one edited, has another. */
static uint64_t program_hash(VM *vm) {
  uint64_t h = 0xcbf29ce484222325ull;
#define MIX(bytes, n)                                                  \
  do {                                                                 \
    const unsigned char *p_ = (const unsigned char *)(bytes);          \
    for (size_t i_ = 0; i_ < (size_t)(n); i_++) h = (h ^ p_[i_]) * 0x100000001b3ull; \
  } while (0)
  for (int i = 0; i < vm->globals.count; i++) {
    const GlobalInfo *info = &vm->global_info[i];
    if (info->builtin) continue;
    int32_t numbers[2] = {info->arity, info->line};
    MIX(info->name->chars, info->name->length + 1);
    MIX(numbers, sizeof numbers);
    if (info->file) MIX(base_name(info->file), strlen(base_name(info->file)) + 1);
  }
#undef MIX
  return h;
}

/* ---- quiet runs ---- */

typedef struct {
  VM *vm;
  Explorer *ex;
  const ExploreOptions *options;
  VMConfig saved;              /* the configuration the command line made */
  int estimate;                /* steps of the default schedule (pct)     */
} Context;

/* Runs print nothing; their diagnostics are captured. */
static void quiet(Context *cx) {
  VMConfig *config = &cx->vm->config;
  config->write_say = NULL;
  config->trace = false;
  config->write_trace = NULL;
  config->write_error = write_captured;
}

/* Outcome of the run that just ended. */
typedef struct {
  uint64_t id;                 /* seed, or schedule number (dfs)          */
  bool failure;
  const char *kind;
  char *description;
  int steps, deviations, preemptions;
} Record;

static const char *const kinds[] = {"pass", "assertion", "error", "uncaught", "deadlock", "limit", "strict-shutdown"};
#define KIND_COUNT (int)(sizeof kinds / sizeof kinds[0])

static int kind_index(const char *kind) {
  for (int i = 0; i < KIND_COUNT; i++)
    if (strcmp(kinds[i], kind) == 0) return i;
  return 0;
}

static Record record_run(Context *cx, uint64_t id, SimStatus status) {
  Record r = {id, false, NULL, NULL, explore_steps(cx->ex), explore_deviation_count(cx->ex),
              explore_preemptions(cx->ex)};
  Buffer text;
  buf_init(&text);
  r.failure = explore_describe(cx->vm, status, cx->options->fail_on_limit, &r.kind, &text);
  buf_append(&text, "", 0);
  r.description = text.data;
  captured.length = 0;
  return r;
}

/* Set up seed `seed` of a seeded strategy: the schedule and the program's
 * random numbers both come from it. */
static void use_seed(Context *cx, uint64_t seed) {
  cx->vm->config.seed = seed;
  if (cx->options->strategy == EXPLORE_RANDOM) explore_use_random(cx->ex, seed);
  else explore_use_pct(cx->ex, seed, cx->options->depth, cx->estimate);
}

static Record run_seed(Context *cx, uint64_t seed) {
  use_seed(cx, seed);
  SimStatus status = explore_run(cx->ex);
  return record_run(cx, seed, status);
}

/* ---- outcomes: runs grouped ---- */

typedef struct {
  const char *kind;
  char *description;
  bool failure;
  uint64_t count;
  uint64_t first;              /* lowest seed or schedule with it          */
} Outcome;

typedef struct {
  Outcome *items;
  int count, capacity;
  int *table;                  /* index + 1, open addressing              */
  int table_capacity;
} Outcomes;

static uint64_t text_hash(const char *kind, const char *text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *s = kind; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  for (const char *s = text; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static void outcomes_index(Outcomes *o, int i) {
  uint64_t mask = (uint64_t)o->table_capacity - 1;
  for (uint64_t j = text_hash(o->items[i].kind, o->items[i].description) & mask;; j = (j + 1) & mask) {
    if (!o->table[j]) {
      o->table[j] = i + 1;
      return;
    }
  }
}

static void outcomes_add(Outcomes *o, const Record *r) {
  if (o->table_capacity) {
    uint64_t mask = (uint64_t)o->table_capacity - 1;
    for (uint64_t j = text_hash(r->kind, r->description) & mask; o->table[j]; j = (j + 1) & mask) {
      Outcome *x = &o->items[o->table[j] - 1];
      if (strcmp(x->kind, r->kind) == 0 && strcmp(x->description, r->description) == 0) {
        x->count++;
        return;
      }
    }
  }
  if (2 * (o->count + 1) > o->table_capacity) {
    free(o->table);
    o->table_capacity = o->table_capacity ? 2 * o->table_capacity : 64;
    o->table = calloc((size_t)o->table_capacity, sizeof *o->table);
    if (!o->table) xrealloc(NULL, SIZE_MAX);
    for (int i = 0; i < o->count; i++) outcomes_index(o, i);
  }
  if (o->count == o->capacity) {
    o->capacity = o->capacity ? 2 * o->capacity : 16;
    o->items = xrealloc(o->items, (size_t)o->capacity * sizeof *o->items);
  }
  size_t length = strlen(r->description) + 1;
  char *copy = xrealloc(NULL, length);
  memcpy(copy, r->description, length);
  o->items[o->count] = (Outcome){r->kind, copy, r->failure, 1, r->id};
  outcomes_index(o, o->count++);
}

static void outcomes_free(Outcomes *o) {
  for (int i = 0; i < o->count; i++) free(o->items[i].description);
  free(o->items);
  free(o->table);
}

/* ---- the sweep ---- */

typedef struct {
  Outcomes outcomes;
  uint64_t runs, failures, abandoned;
  uint64_t stopped;            /* at a limit, not a failure               */
  bool found;                  /* a failure: the first is below           */
  Record first;                /* its record (description owned)          */
  Deviation *first_devs;       /* dfs: its deviations                     */
  int first_dev_count;
  bool exhausted;
  double started, last_progress;
  bool progress;               /* a progress line on the terminal         */
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
  bool dfs = cx->options->strategy == EXPLORE_EXHAUSTIVE || cx->options->strategy == EXPLORE_DFS;
  buf_printf(&line, "{\"%s\": %" PRIu64 ", \"outcome\": \"%s\", \"kind\": \"%s\", \"description\": ",
             dfs ? "schedule" : "seed", r->id, json_verdict(r->failure, r->kind), r->kind);
  json_string(&line, r->description);
  buf_printf(&line, ", \"steps\": %d, \"deviations\": %d, \"preemptions\": %d}\n", r->steps, r->deviations,
             r->preemptions);
  write_stdout(NULL, line.data, line.length);
  buf_free(&line);
}

/* Count a run; it keeps or frees r's description. */
static void take_record(Context *cx, Sweep *s, Record *r) {
  s->runs++;
  if (!r->failure && strcmp(r->kind, "limit") == 0) s->stopped++;
  outcomes_add(&s->outcomes, r);
  if (cx->options->json) json_record(cx, r);
  if (r->failure) {
    s->failures++;
    if (!s->found) {
      s->found = true;
      s->first = *r;
      return;
    }
  }
  free(r->description);
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

typedef struct {
  uint64_t id;
  uint8_t failure, kind;
  int32_t steps, deviations, preemptions;
  uint32_t length;
} WireRecord;

static void child_sweep(Context *cx, int job, int jobs, uint64_t size, FILE *out) {
  for (uint64_t chunk = (uint64_t)job; chunk * CHUNK < size; chunk += (uint64_t)jobs) {
    for (uint64_t i = chunk * CHUNK; i < size && i < (chunk + 1) * CHUNK; i++) {
      Record r = run_seed(cx, shard_seed(cx->options, i));
      WireRecord w = {r.id, r.failure, (uint8_t)kind_index(r.kind), r.steps, r.deviations, r.preemptions,
                      (uint32_t)strlen(r.description)};
      if (fwrite(&w, sizeof w, 1, out) != 1 || fwrite(r.description, 1, w.length, out) != w.length) _exit(1);
      free(r.description);
    }
    WireRecord end = {CHUNK_END, 0, 0, 0, 0, 0, 0};
    if (fwrite(&end, sizeof end, 1, out) != 1) _exit(1);
  }
  if (fflush(out) != 0) _exit(1);
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
    int fds[2];
    if (pipe(fds) != 0) {
      fprintf(stderr, "simvm: cannot start --jobs: %s\n", strerror(errno));
      return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "simvm: cannot start --jobs: %s\n", strerror(errno));
      return false;
    }
    if (pid == 0) {
      close(fds[0]);
      for (int k = 0; k < j; k++) fclose(from[k]);
      FILE *out = fdopen(fds[1], "w");
      child_sweep(cx, j, jobs, size, out);
      _exit(0);
    }
    close(fds[1]);
    pids[j] = pid;
    from[j] = fdopen(fds[0], "r");
  }
  bool ok = true;
  for (uint64_t chunk = 0; chunk < chunks && ok; chunk++) {
    FILE *in = from[chunk % (uint64_t)jobs];
    for (;;) {
      WireRecord w;
      if (fread(&w, sizeof w, 1, in) != 1) {
        ok = false;
        break;
      }
      if (w.id == CHUNK_END) break;
      char *text = xrealloc(NULL, (size_t)w.length + 1);
      if (fread(text, 1, w.length, in) != w.length) {
        free(text);
        ok = false;
        break;
      }
      text[w.length] = '\0';
      Record r = {w.id, w.failure, kinds[w.kind < KIND_COUNT ? w.kind : 0], text, w.steps, w.deviations,
                  w.preemptions};
      take_record(cx, s, &r);
      show_progress(s, false);
    }
  }
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

/* ---- shrinking ---- */

typedef struct {
  Context *cx;
  const char *kind;
  const char *description;
  uint64_t seed;               /* the program's random numbers             */
  int runs;
  uint64_t steps;              /* instructions the tests ran              */
  Deviation *got;              /* the deviations the last failing test made */
  int got_count;
} Shrinker;

/* Shrinking's budget, deterministic so that its result is too: runs, and
 * instructions over all of them (a test of a step-limit failure runs a
 * million). */
#define SHRINK_MAX_RUNS 5000
#define SHRINK_MAX_STEPS 200000000ull
#define SHRINK_MORE(s) ((s)->runs < SHRINK_MAX_RUNS && (s)->steps < SHRINK_MAX_STEPS)

/* Replay `devs` leniently: does the run fail the same way? If so, its own
 * deviations (those that applied) are in s->got. */
static bool same_failure(Shrinker *s, const Deviation *devs, int count) {
  Context *cx = s->cx;
  s->runs++;
  cx->vm->config.seed = s->seed;
  explore_use_replay(cx->ex, devs, count, false);
  SimStatus status = explore_run(cx->ex);
  s->steps += vm_steps(cx->vm);
  Record r = record_run(cx, 0, status);
  bool same = r.failure && strcmp(r.kind, s->kind) == 0 && strcmp(r.description, s->description) == 0;
  free(r.description);
  if (same) {
    s->got_count = explore_deviation_count(cx->ex);
    s->got = xrealloc(s->got, (size_t)(s->got_count ? s->got_count : 1) * sizeof *s->got);
    memcpy(s->got, explore_deviations(cx->ex), (size_t)s->got_count * sizeof *s->got);
  }
  return same;
}

static int count_preemptions(const Deviation *devs, int count) {
  int n = 0;
  for (int i = 0; i < count; i++) n += devs[i].preemption;
  return n;
}

/* Zeller and Hildebrandt's ddmin over the deviations: the result fails the
 * same way, and removing any one of its deviations would not (as far as
 * SHRINK_MAX_RUNS tests go). */
static void ddmin(Shrinker *s, Deviation **devs, int *count) {
  if (*count == 0) return;
  if (same_failure(s, NULL, 0)) { /* the default schedule fails too */
    *count = 0;
    return;
  }
  Deviation *test = xrealloc(NULL, (size_t)*count * sizeof *test);
  int n = 2;
  while (*count >= 2 && SHRINK_MORE(s)) {
    if (n > *count) n = *count;
    bool reduced = false;
    /* try each subset, then each complement */
    for (int phase = 0; phase < 2 && !reduced; phase++) {
      for (int k = 0; k < n && !reduced && SHRINK_MORE(s); k++) {
        int lo = (int)((int64_t)*count * k / n), hi = (int)((int64_t)*count * (k + 1) / n), m = 0;
        for (int i = 0; i < *count; i++)
          if ((i >= lo && i < hi) == (phase == 0)) test[m++] = (*devs)[i];
        if (m == 0 || m == *count) continue;
        if (same_failure(s, test, m)) {
          memcpy(*devs, s->got, (size_t)s->got_count * sizeof **devs);
          *count = s->got_count;
          n = phase == 0 ? 2 : (n - 1 > 2 ? n - 1 : 2);
          reduced = true;
        }
      }
    }
    if (!reduced) {
      if (n >= *count) break;
      n = 2 * n < *count ? 2 * n : *count;
    }
  }
  /* a single deviation left: is it needed? (the default was tried) */
  free(test);
}

/* Then a search for fewer deviations than ddmin kept, which it cannot
 * find (it only removes deviations, and a deviation's step means another
 * point once an earlier one is gone): every schedule with k deviations,
 * depth-first, for k = 1, 2 ... below the count, within a budget of runs.
 * Of the schedules with k deviations that fail the same way, the one with
 * the fewest preemptions wins. */
#define SHRINK_LEVEL_RUNS 4000

static bool fewer_deviations(Shrinker *s, Deviation **devs, int *count) {
  Context *cx = s->cx;
  for (int k = 1; k < *count && SHRINK_MORE(s); k++) {
    explore_use_deviation_dfs(cx->ex, k);
    int level_runs = 0, best = -1;
    bool exhausted = false;
    while (level_runs < SHRINK_LEVEL_RUNS && SHRINK_MORE(s)) {
      s->runs++;
      level_runs++;
      cx->vm->config.seed = s->seed;
      SimStatus status = explore_run(cx->ex);
      s->steps += vm_steps(cx->vm);
      Record r = record_run(cx, 0, status);
      bool same = r.failure && strcmp(r.kind, s->kind) == 0 && strcmp(r.description, s->description) == 0;
      free(r.description);
      int preemptions = explore_preemptions(cx->ex);
      if (same && (best < 0 || preemptions < best)) {
        best = preemptions;
        *count = explore_deviation_count(cx->ex);
        memcpy(*devs, explore_deviations(cx->ex), (size_t)*count * sizeof **devs);
        if (best == 0) break;
      }
      if (!explore_dfs_next(cx->ex)) {
        exhausted = true;
        break;
      }
    }
    if (best >= 0) return true;
    if (!exhausted) return false; /* over budget: larger levels would be too */
  }
  return false;
}

/* Then fewer preemptions: move each preemption a few steps earlier or
 * later, where it may pick the same thread at a point where the running
 * thread has stopped anyway; keep any move that fails the same way with
 * no more deviations and fewer preemptions. */
#define SHRINK_MOVE 12

static void fewer_preemptions(Shrinker *s, Deviation **devs, int *count) {
  bool improved = true;
  Deviation *test = xrealloc(NULL, (size_t)(*count ? *count : 1) * sizeof *test);
  while (improved && SHRINK_MORE(s)) {
    improved = false;
    int preemptions = count_preemptions(*devs, *count);
    for (int i = 0; i < *count && !improved; i++) {
      if (!(*devs)[i].preemption) continue;
      for (int delta = 1; delta <= SHRINK_MOVE && !improved && SHRINK_MORE(s); delta++) {
        for (int sign = 1; sign >= -1 && !improved; sign -= 2) {
          int step = (*devs)[i].step + sign * delta;
          if (step < 1 || (i > 0 && step <= (*devs)[i - 1].step) || (i + 1 < *count && step >= (*devs)[i + 1].step))
            continue;
          memcpy(test, *devs, (size_t)*count * sizeof *test);
          test[i].step = step;
          if (same_failure(s, test, *count) && s->got_count <= *count &&
              count_preemptions(s->got, s->got_count) < preemptions) {
            memcpy(*devs, s->got, (size_t)s->got_count * sizeof **devs);
            *count = s->got_count;
            improved = true;
          }
        }
      }
    }
  }
  free(test);
}

/* ---- schedule files ---- */

static void deviations_text(Explorer *ex, Buffer *out, const Deviation *devs, int count) {
  for (int i = 0; i < count; i++) {
    buf_printf(out, "step %d at ", devs[i].step);
    duration_show(out, devs[i].time);
    buf_printf(out, " runs %s", explore_thread_id(ex, devs[i].thread));
    buf_printf(out, "    # instead of %s%s\n", explore_thread_id(ex, devs[i].instead),
               devs[i].preemption ? ", preempting it" : "");
  }
}

static bool write_schedule(Context *cx, const char *path, const Record *first, uint64_t seed, const Deviation *devs,
                           int count, int original, const char *found) {
  Buffer text;
  buf_init(&text);
  buf_printf(&text, "# simvm schedule: simvm --replay %s %s\n", path, cx->options->script);
  buf_printf(&text, "# found by %s; %d deviation%s from the default schedule", found, count, count == 1 ? "" : "s");
  if (original != count) buf_printf(&text, " (shrunk from %d)", original);
  buf_printf(&text, "\n# outcome: %s\n", first->description);
  buf_printf(&text, "simvm-schedule 1\n");
  buf_printf(&text, "program %s %016" PRIx64 "\n", program_name(cx->vm), program_hash(cx->vm));
  buf_printf(&text, "seed %" PRIu64 "\n", seed);
  buf_printf(&text, "option --max-steps %" PRIu64 "\n", cx->vm->config.max_steps);
  if (cx->vm->config.fail_on_uncaught) buf_printf(&text, "option --fail-on uncaught\n");
  if (cx->vm->config.strict_shutdown) buf_printf(&text, "option --strict-shutdown\n");
  deviations_text(cx->ex, &text, devs, count);
  FILE *file = fopen(path, "w");
  bool ok = file && fwrite(text.data, 1, text.length, file) == text.length;
  if (file && fclose(file) != 0) ok = false;
  if (!ok) fprintf(stderr, "simvm: cannot write '%s': %s\n", path, strerror(errno));
  buf_free(&text);
  return ok;
}

typedef struct {
  char name[256];
  uint64_t hash;
  uint64_t seed;
  uint64_t max_steps;          /* 0: none recorded */
  bool fail_on_uncaught, strict_shutdown;
  Deviation *devs;
  int count;
} ScheduleFile;

static bool bad_file(const char *path, int line, const char *fmt, const char *arg) {
  fflush(stdout);
  if (line) fprintf(stderr, "simvm: %s:%d: ", path, line);
  else fprintf(stderr, "simvm: %s: ", path);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  return false;
}

static bool read_schedule(Explorer *ex, const char *path, ScheduleFile *f, int *status) {
  memset(f, 0, sizeof *f);
  *status = SIM_COMPILE_ERROR;
  FILE *file = fopen(path, "r");
  if (!file) {
    *status = SIM_USAGE;
    fflush(stdout);
    fprintf(stderr, "simvm: cannot open '%s': %s\n", path, strerror(errno));
    return false;
  }
  char line[1024];
  int number = 0, capacity = 0;
  bool header = false, program = false;
  bool ok = true;
  while (ok && fgets(line, sizeof line, file)) {
    number++;
    size_t length = strlen(line);
    if (length == sizeof line - 1 && line[length - 1] != '\n') {
      ok = bad_file(path, number, "%s", "line too long");
      break;
    }
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *end = line + strlen(line);
    while (end > line && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) *--end = '\0';
    char *text = line;
    while (*text == ' ' || *text == '\t') text++;
    if (!*text) continue;
    if (!header) {
      if (strcmp(text, "simvm-schedule 1") != 0) {
        ok = bad_file(path, number, "%s", "not a simvm schedule file (its first line must be 'simvm-schedule 1')");
        break;
      }
      header = true;
      continue;
    }
    char word[64], a[256], b[256], c[256];
    int got = sscanf(text, "%63s %255s %255s %255s", word, a, b, c);
    if (strcmp(word, "program") == 0 && got == 3) {
      char *rest;
      errno = 0;
      f->hash = strtoull(b, &rest, 16);
      if (*rest || errno || strlen(b) != 16) { ok = bad_file(path, number, "malformed program line: '%s'", text); break; }
      snprintf(f->name, sizeof f->name, "%s", a);
      program = true;
    } else if (strcmp(word, "seed") == 0 && got == 2) {
      if (!parse_count(a, &f->seed)) { ok = bad_file(path, number, "malformed seed line: '%s'", text); break; }
    } else if (strcmp(word, "option") == 0 && got >= 2) {
      if (strcmp(a, "--max-steps") == 0 && got == 3 && parse_count(b, &f->max_steps) && f->max_steps > 0) continue;
      if (strcmp(a, "--fail-on") == 0 && got == 3 && strcmp(b, "uncaught") == 0) {
        f->fail_on_uncaught = true;
        continue;
      }
      if (strcmp(a, "--strict-shutdown") == 0 && got == 2) {
        f->strict_shutdown = true;
        continue;
      }
      ok = bad_file(path, number, "unknown option line: '%s'", text);
    } else if (strcmp(word, "step") == 0) {
      uint64_t step;
      int64_t time;
      char at[8], runs[8], id[64];
      int key;
      if (sscanf(text, "step %255s %7s %255s %7s %63s %255s", a, at, b, runs, id, c) != 5 || strcmp(at, "at") != 0 ||
          strcmp(runs, "runs") != 0 || !parse_count(a, &step) || step < 1 || step > 1000000000 ||
          !parse_duration(b, &time) || (key = explore_key_of(ex, id)) < 0) {
        ok = bad_file(path, number, "malformed step line: '%s' (it should read 'step N at TIME runs THREAD')", text);
        break;
      }
      if (f->count && (int)step <= f->devs[f->count - 1].step) {
        ok = bad_file(path, number, "steps must increase: '%s'", text);
        break;
      }
      if (f->count == capacity) {
        capacity = capacity ? 2 * capacity : 16;
        f->devs = xrealloc(f->devs, (size_t)capacity * sizeof *f->devs);
      }
      f->devs[f->count++] = (Deviation){(int)step, time, key, -1, false};
    } else {
      ok = bad_file(path, number, "unknown line: '%s'", text);
    }
  }
  fclose(file);
  if (ok && !header) ok = bad_file(path, 0, "%s", "not a simvm schedule file (it is empty)");
  if (ok && !program) ok = bad_file(path, 0, "%s", "no 'program' line");
  if (!ok) {
    free(f->devs);
    f->devs = NULL;
  }
  return ok;
}

/* ---- single runs ---- */

/* The default schedule's steps, for pct's change points; also runs the
 * load. False when the program does not load (no main, an error in a top
 * level): *status is then that run's, its messages in `captured`. */
static bool default_run(Context *cx, SimStatus *status) {
  explore_use_default(cx->ex);
  *status = explore_run(cx->ex);
  cx->estimate = explore_steps(cx->ex);
  if (IS_UNDEFINED(cx->vm->main_action)) return false;
  captured.length = 0;
  return true;
}

Explorer *explore_seeded(VM *vm, ExploreStrategy strategy, uint64_t seed, int depth) {
  Context cx = {vm, explore_new(vm), NULL, vm->config, 0};
  ExploreOptions options;
  explore_options_init(&options);
  options.strategy = strategy;
  options.depth = depth;
  cx.options = &options;
  quiet(&cx);
  SimStatus status;
  bool loaded = default_run(&cx, &status);
  vm->config = cx.saved;
  captured.length = 0;
  if (!loaded) { /* the plain run that follows says why */
    explore_free(cx.ex);
    return NULL;
  }
  use_seed(&cx, seed);
  explore_mark_deviations(cx.ex, true);
  return cx.ex;
}

Explorer *explore_replay_file(VM *vm, const char *path, bool max_steps_set, int *status) {
  Explorer *ex = explore_new(vm);
  ScheduleFile f;
  if (!read_schedule(ex, path, &f, status)) {
    explore_free(ex);
    return NULL;
  }
  /* the load, quietly, to know the program (its name is the script's) */
  Context cx = {vm, ex, NULL, vm->config, 0};
  ExploreOptions options;
  explore_options_init(&options);
  cx.options = &options;
  quiet(&cx);
  SimStatus load;
  bool loaded = default_run(&cx, &load);
  vm->config = cx.saved;
  captured.length = 0;
  if (!loaded) {
    free(f.devs);
    explore_free(ex);
    *status = -1; /* run it plainly: the load reports */
    return NULL;
  }
  if (strcmp(f.name, program_name(vm)) != 0) {
    fflush(stdout);
    fprintf(stderr, "simvm: %s is a schedule for %s, not %s\n", path, f.name, program_name(vm));
    free(f.devs);
    explore_free(ex);
    *status = SIM_COMPILE_ERROR;
    return NULL;
  }
  if (f.hash != program_hash(vm)) {
    fflush(stdout);
    fprintf(stderr, "simvm: note: %s has changed since %s was written; replaying it anyway\n", program_name(vm), path);
  }
  vm->config.seed = f.seed;
  if (f.max_steps && !max_steps_set) vm->config.max_steps = f.max_steps;
  if (f.fail_on_uncaught) vm->config.fail_on_uncaught = true;
  if (f.strict_shutdown) vm->config.strict_shutdown = true;
  explore_use_replay(ex, f.devs, f.count, true);
  explore_mark_deviations(ex, true);
  free(f.devs);
  return ex;
}

bool explore_replay_failed(VM *vm, Explorer *ex, const char *path) {
  const ReplayMismatch *m = explore_mismatch(ex);
  if (!m->mismatch) return false;
  fflush(stdout);
  fprintf(stderr, "simvm: %s no longer matches %s: it stopped matching at deviation %d: %s\n", path,
          program_name(vm), m->deviation, m->why);
  return true;
}

/* ---- the report ---- */

/* "pass", "FAIL", or "stop" for a limit that is not a failure. */
static const char *verdict(bool failure, const char *kind) {
  return failure ? "FAIL" : strcmp(kind, "limit") == 0 ? "stop" : "pass";
}

static void print_outcomes(const Sweep *s) {
  uint64_t widest = 1;
  for (int i = 0; i < s->outcomes.count; i++)
    if (s->outcomes.items[i].count > widest) widest = s->outcomes.items[i].count;
  int width = snprintf(NULL, 0, "%" PRIu64, widest);
  for (int i = 0; i < s->outcomes.count; i++) {
    const Outcome *o = &s->outcomes.items[i];
    printf("  %*" PRIu64 "  %s  %s\n", width, o->count, verdict(o->failure, o->kind), o->description);
  }
}

static void print_header(const Context *cx, const Sweep *s) {
  const ExploreOptions *o = cx->options;
  printf("simvm --explore: %" PRIu64 " schedule%s of %s, %s", s->runs, s->runs == 1 ? "" : "s", program_name(cx->vm),
         strategy_name(o->strategy));
  if (o->strategy == EXPLORE_PCT) printf(" (depth %d)", o->depth);
  if (o->strategy == EXPLORE_EXHAUSTIVE || o->strategy == EXPLORE_DFS) {
    printf(" (at most %d preemption%s%s)\n", o->preemptions, o->preemptions == 1 ? "" : "s",
           o->strategy == EXPLORE_DFS ? ", no pruning" : "");
    if (s->exhausted) printf("every schedule within the bound was explored");
    else printf("stopped at --explore %" PRIu64 " before the space within the bound was exhausted", o->count);
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

static void json_summary(const Context *cx, const Sweep *s, double seconds, const Deviation *devs, int count,
                         int shrink_runs, const char *schedule) {
  const ExploreOptions *o = cx->options;
  Buffer out;
  buf_init(&out);
  buf_printf(&out, "{\"summary\": {\"program\": ");
  json_string(&out, program_name(cx->vm));
  buf_printf(&out, ", \"strategy\": \"%s\"", strategy_name(o->strategy));
  if (o->strategy == EXPLORE_PCT) buf_printf(&out, ", \"depth\": %d", o->depth);
  if (o->strategy == EXPLORE_EXHAUSTIVE || o->strategy == EXPLORE_DFS)
    buf_printf(&out, ", \"preemptions\": %d, \"exhausted\": %s, \"abandoned\": %" PRIu64, o->preemptions,
               s->exhausted ? "true" : "false", s->abandoned);
  else
    buf_printf(&out, ", \"first_seed\": %" PRIu64 ", \"last_seed\": %" PRIu64 ", \"shard\": %" PRIu64
                     ", \"shards\": %" PRIu64,
               o->first_seed, o->first_seed + o->count - 1, o->shard, o->shards);
  buf_printf(&out, ", \"schedules\": %" PRIu64 ", \"failures\": %" PRIu64 ", \"outcomes\": [", s->runs, s->failures);
  for (int i = 0; i < s->outcomes.count; i++) {
    const Outcome *x = &s->outcomes.items[i];
    buf_printf(&out, "%s{\"outcome\": \"%s\", \"kind\": \"%s\", \"description\": ", i ? ", " : "",
               json_verdict(x->failure, x->kind), x->kind);
    json_string(&out, x->description);
    buf_printf(&out, ", \"count\": %" PRIu64 ", \"first\": %" PRIu64 "}", x->count, x->first);
  }
  buf_printf(&out, "]");
  if (s->found) {
    buf_printf(&out, ", \"first_failure\": {\"%s\": %" PRIu64 ", \"deviations\": %d, \"preemptions\": %d",
               o->strategy == EXPLORE_EXHAUSTIVE || o->strategy == EXPLORE_DFS ? "schedule" : "seed", s->first.id,
               s->first.deviations, s->first.preemptions);
    buf_printf(&out, ", \"shrunk\": {\"deviations\": %d, \"preemptions\": %d, \"runs\": %d, \"schedule\": [", count,
               count_preemptions(devs, count), shrink_runs);
    for (int i = 0; i < count; i++)
      buf_printf(&out, "%s{\"step\": %d, \"time_ns\": %" PRId64 ", \"thread\": \"%s\", \"instead_of\": \"%s\"}",
                 i ? ", " : "", devs[i].step, devs[i].time, explore_thread_id(cx->ex, devs[i].thread),
                 explore_thread_id(cx->ex, devs[i].instead));
    buf_printf(&out, "]}, \"schedule_file\": ");
    if (schedule) json_string(&out, schedule);
    else buf_printf(&out, "null");
    buf_printf(&out, "}");
  }
  buf_printf(&out, ", \"wall_seconds\": %.6f}}\n", seconds);
  write_stdout(NULL, out.data, out.length);
  buf_free(&out);
}

/* The default schedule file: the script's name with .schedule for .sim. */
static char *default_schedule_path(const char *script) {
  const char *name = base_name(script);
  size_t length = strlen(name);
  if (length > 4 && strcmp(name + length - 4, ".sim") == 0) length -= 4;
  else if (length > 5 && strcmp(name + length - 5, ".simc") == 0) length -= 5;
  char *path = xrealloc(NULL, length + 10);
  memcpy(path, name, length);
  strcpy(path + length, ".schedule");
  return path;
}

int explore_command(VM *vm, const ExploreOptions *options) {
  Context cx = {vm, explore_new(vm), options, vm->config, 0};
  Context *c = &cx;
  quiet(c);
  if (!vm->config.max_steps) vm->config.max_steps = EXPLORE_DEFAULT_MAX_STEPS;
  double started = now_seconds();
  SimStatus load;
  if (!default_run(c, &load)) { /* the program did not load: say why, as a plain run would */
    fflush(stdout);
    if (captured.length) fwrite(captured.data, 1, captured.length, stderr);
    explore_free(cx.ex);
    buf_free(&captured);
    vm->config = cx.saved;
    return load;
  }
  Sweep s;
  memset(&s, 0, sizeof s);
  s.started = s.last_progress = started;
  s.progress = !options->json && isatty(STDERR_FILENO);
  bool dfs = options->strategy == EXPLORE_EXHAUSTIVE || options->strategy == EXPLORE_DFS;
  bool ok = true;
  if (dfs) {
    vm->config.seed = options->seed_given ? options->first_seed : 0;
    explore_use_dfs(cx.ex, options->preemptions, options->strategy == EXPLORE_EXHAUSTIVE);
    uint64_t number = 0;
    for (;;) {
      SimStatus status = explore_run(cx.ex);
      if (explore_abandoned(cx.ex)) {
        s.abandoned++;
        captured.length = 0;
      } else {
        Record r = record_run(c, ++number, status);
        bool first = r.failure && !s.found;
        take_record(c, &s, &r);
        if (first) {
          s.first_dev_count = explore_deviation_count(cx.ex);
          s.first_devs = xrealloc(NULL, (size_t)(s.first_dev_count ? s.first_dev_count : 1) * sizeof *s.first_devs);
          memcpy(s.first_devs, explore_deviations(cx.ex), (size_t)s.first_dev_count * sizeof *s.first_devs);
        }
        show_progress(&s, false);
      }
      if (!explore_dfs_next(cx.ex)) {
        s.exhausted = true;
        break;
      }
      if (number >= options->count) break;
    }
  } else {
    uint64_t size = shard_size(options);
    if (options->jobs > 1 && size > CHUNK) {
      ok = parallel_sweep(c, &s, size);
    } else {
      for (uint64_t i = 0; i < size; i++) {
        Record r = run_seed(c, shard_seed(options, i));
        take_record(c, &s, &r);
        show_progress(&s, false);
      }
    }
  }
  show_progress(&s, true);
  if (!ok) {
    explore_free(cx.ex);
    return SIM_FAILED;
  }

  /* the first failure: its schedule, shrunk */
  Deviation *devs = NULL;
  int count = 0, original = 0;
  Shrinker shrinker = {c, NULL, NULL, 0, 0, 0, NULL, 0};
  char found[256] = "";
  if (s.found) {
    uint64_t seed;
    if (dfs) {
      seed = vm->config.seed;
      devs = s.first_devs;
      count = s.first_dev_count;
      s.first_devs = NULL;
      snprintf(found, sizeof found, "simvm --explore %" PRIu64 " --strategy %s --preemptions %d as schedule %" PRIu64,
               options->count, strategy_name(options->strategy), options->preemptions, s.first.id);
    } else {
      seed = s.first.id;
      use_seed(c, seed);
      explore_run(cx.ex);
      captured.length = 0;
      count = explore_deviation_count(cx.ex);
      devs = xrealloc(NULL, (size_t)(count ? count : 1) * sizeof *devs);
      memcpy(devs, explore_deviations(cx.ex), (size_t)count * sizeof *devs);
      if (options->strategy == EXPLORE_PCT)
        snprintf(found, sizeof found, "simvm --explore (pct, depth %d) as seed %" PRIu64, options->depth, seed);
      else snprintf(found, sizeof found, "simvm --explore (random) as seed %" PRIu64, seed);
    }
    original = count;
    shrinker = (Shrinker){c, s.first.kind, s.first.description, seed, 0, 0, NULL, 0};
    if (options->shrink) {
      ddmin(&shrinker, &devs, &count);
      fewer_deviations(&shrinker, &devs, &count);
      fewer_preemptions(&shrinker, &devs, &count);
    }
    vm->config.seed = seed;
    /* what is written must fail the same way, replayed strictly */
    explore_use_replay(cx.ex, devs, count, true);
    Record check = record_run(c, 0, explore_run(cx.ex));
    bool same = !explore_mismatch(cx.ex)->mismatch && strcmp(check.kind, s.first.kind) == 0 &&
                strcmp(check.description, s.first.description) == 0;
    free(check.description);
    if (!same) {
      fprintf(stderr, "simvm: internal error: the schedule of seed or schedule %" PRIu64 " does not fail the same way "
                      "when replayed\n", s.first.id);
      ok = false;
    }
  }
  char *schedule = NULL; /* the file written, or NULL */
  if (s.found && ok) {
    if (options->schedule_out) {
      size_t length = strlen(options->schedule_out) + 1;
      schedule = xrealloc(NULL, length);
      memcpy(schedule, options->schedule_out, length);
    } else {
      schedule = default_schedule_path(options->script);
    }
    if (!write_schedule(c, schedule, &s.first, vm->config.seed, devs, count, original, found)) {
      ok = false;
      free(schedule);
      schedule = NULL;
    }
  }
  double seconds = now_seconds() - started;

  if (options->json) {
    json_summary(c, &s, seconds, devs, count, shrinker.runs, schedule);
  } else {
    print_header(c, &s);
    print_outcomes(&s);
    if (!s.found && s.stopped) {
      printf("no schedule failed, but %" PRIu64 " stopped at a limit (a failure with --fail-on limit)\n", s.stopped);
    } else if (!s.found) {
      printf("every schedule passed\n");
    } else {
      printf("%" PRIu64 " of %" PRIu64 " schedules failed; the first, %s %" PRIu64 ", has %d deviation%s (%d preemption%s)\n",
             s.failures, s.runs, dfs ? "schedule" : "seed", s.first.id, original, original == 1 ? "" : "s",
             s.first.preemptions, s.first.preemptions == 1 ? "" : "s");
      if (options->shrink)
        printf("shrunk to %d deviation%s (%d preemption%s) in %d runs\n", count, count == 1 ? "" : "s",
               count_preemptions(devs, count), count_preemptions(devs, count) == 1 ? "" : "s", shrinker.runs);
      if (schedule)
        printf("schedule written to %s; replay it with: simvm --replay %s %s\n", schedule, schedule, options->script);
      if (schedule && !options->quiet) {
        printf("\nthe %sschedule's trace, its deviations marked <-:\n", options->shrink ? "shrunk " : "");
        fflush(stdout);
        /* the failing run once more, traced, its messages after the trace */
        vm->config.trace = true;
        vm->config.trace_all = cx.saved.trace_all;
        vm->config.write_trace = write_stdout;
        vm->config.write_error = write_stdout;
        explore_use_replay(cx.ex, devs, count, true);
        explore_mark_deviations(cx.ex, true);
        explore_run(cx.ex);
      }
    }
  }
  if (fflush(stdout) != 0) out_failed();
  int status = !ok ? SIM_FAILED : s.found ? 1 : 0;
  free(devs);
  free(schedule);
  free(shrinker.got);
  free(s.first_devs);
  if (s.found) free(s.first.description);
  outcomes_free(&s.outcomes);
  explore_free(cx.ex);
  buf_free(&captured);
  vm->config = cx.saved;
  return status;
}
