/* simvm's schedule exploration commands (docs/EXPLORE.md): --explore runs
 * many schedules and reports their outcomes, the first failure shrunk and
 * written as a replay file; --seed and --replay set up one run. */
#ifndef SIMVM_API_EXPLORE_H
#define SIMVM_API_EXPLORE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "../vm/vm.h"

/* A run inside exploration stops after this many instructions unless
 * --max-steps says otherwise: a schedule may loop forever. */
#define EXPLORE_DEFAULT_MAX_STEPS 1000000

typedef struct {
  const char *script;        /* as given on the command line             */
  ExploreStrategy strategy;  /* PCT (default), RANDOM, EXHAUSTIVE or DFS  */
  uint64_t count;            /* --explore N                              */
  uint64_t first_seed;       /* --seed S: the first seed (default 1)     */
  bool seed_given;           /* exhaustive: the program's random seed (default 0) */
  int depth;                 /* pct's bug depth (--depth, default 3)     */
  int preemptions;           /* exhaustive's last bound (--preemptions; -1, the
                                default: none, bound after bound until N) */
  uint32_t jitter;           /* --jitter, parts per million (0: none)     */
  int jobs;                  /* processes (--jobs, default 1)            */
  uint64_t shard, shards;    /* --shard I/N: the I-th of N slices        */
  bool json;                 /* JSON lines instead of the text report    */
  const char *schedule_out;  /* --schedule-out FILE, or NULL: the default */
  bool fail_on_limit;        /* --fail-on limit                          */
  bool shrink;               /* false with --no-shrink                   */
  bool quiet;                /* -q: no trace in the report               */
  const volatile sig_atomic_t *stop; /* becomes a signal's number (SIGINT,
                                SIGTERM) when the sweep is to stop at the next
                                schedule and report what it found; or NULL */
} ExploreOptions;

void explore_options_init(ExploreOptions *options);

/* Run --explore on the loaded program: the exit status (0 every schedule
 * passed, 1 one failed, or the load's own status). When *options->stop
 * becomes a signal's number, the sweep (and its --jobs processes) stops
 * after the schedule it is running, and the report, marked interrupted,
 * covers the schedules run: the caller exits 128 + the signal. */
int explore_command(VM *vm, const ExploreOptions *options);

/* Set up a single run of seed `seed` under the options' strategy (PCT or
 * RANDOM), depth and jitter, as --explore would run that seed: the
 * explorer to run it with (explore_run), or NULL when the program failed
 * to load (run it plainly to report why). */
Explorer *explore_seeded(VM *vm, const ExploreOptions *options, uint64_t seed);

/* Set up a run replaying the schedule file `path` for the loaded program:
 * the explorer, or NULL with the problem reported (exit status in *status:
 * 2 unreadable, 3 malformed or for another program; -1 when the program
 * does not load: run it plainly to report why). The file's options apply;
 * its --max-steps only if the command line gave none (`max_steps_set`). */
Explorer *explore_replay_file(VM *vm, const char *path, bool max_steps_set, int *status);

/* After a --replay run that ended with `status`: report a replay that
 * stopped matching its file, or whose outcome is not the class the file
 * records (true: exit status 3). */
bool explore_replay_failed(VM *vm, Explorer *ex, const char *path, SimStatus status);

/* The one-line form of a strategy name; NULL for an unknown one. */
bool explore_parse_strategy(const char *name, ExploreStrategy *out);

#endif
