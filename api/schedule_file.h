/* Schedule files: a failing run written for --replay (docs/EXPLORE.md
 * "Replay files"). Text, one item per line, `#` comments. Version 2:
 *
 *   simvm-schedule 2
 *   program NAME HASH            the script and a hash of its definitions
 *   def NAME HASH                one per definition: a replay names what changed
 *   seed N                       the program's random seed
 *   option --max-steps N         and --max-time, --max-heap, --max-threads,
 *                                --fail-on, --strict-shutdown, --jitter P%:
 *                                what the run needs
 *   outcome KIND PLACE           the class the run ends in: a replay checks it
 *   step N at TIME runs THREAD   a deviation from the default schedule
 *   random T#N = V of RANGE      a draw: RANGE an int n, `float`, or LO..HI
 *   delay T#N = D of NOMINAL     a duration chosen within --jitter (also
 *                                timeout, registerDelay)
 *   fault T#N "NAME" fired       a fault point that fired
 *   timers at TIME fire T#N, ... the order of the timers due at TIME
 *
 * T#N names a thread's N-th draw, timer or fault (vm/explore/choice.h). Version 1
 * files (no def, outcome or choice lines) are read too. */
#ifndef SIMVM_API_SCHEDULE_FILE_H
#define SIMVM_API_SCHEDULE_FILE_H

#include "explore_run.h"

typedef struct {
  char name[128];
  uint64_t hash;
} Definition;

typedef struct {
  int version;
  char name[256];              /* the program's file name                 */
  uint64_t hash;
  Definition *defs;            /* version 2: each definition's hash        */
  int def_count;
  uint64_t seed;
  uint64_t max_steps;          /* 0: none recorded                        */
  int64_t max_time;            /* -1: none recorded                       */
  size_t max_heap;             /* 0: none                                 */
  int max_threads;             /* 0: none                                 */
  bool fail_on_uncaught, fail_on_limit, strict_shutdown;
  uint32_t jitter;             /* parts per million; 0: none              */
  bool has_outcome;
  char kind[32];               /* the outcome's class: kind and place     */
  char where[512];
  Schedule schedule;
  int *choice_lines;           /* the line of each choice, for messages    */
} ScheduleFile;

/* Read `path` for the program `ex` explores (thread ids become its keys).
 * False with the problem reported on stderr and *status set: 2 when it
 * cannot be read, 3 when it is not a well-formed schedule file. */
bool schedule_file_read(Explorer *ex, const char *path, ScheduleFile *f, int *status);
void schedule_file_free(ScheduleFile *f);

/* What a written file says besides the schedule. */
typedef struct {
  const char *found;           /* "simvm --explore (pct, depth 3) as seed 1" */
  const Record *outcome;       /* the run's outcome                       */
  uint64_t seed;               /* the program's random seed              */
  int before;                  /* non-default choices and deviations before shrinking */
} ScheduleNote;

/* Write `s` to `path` through a temporary file renamed into place. False
 * with the problem reported. */
bool schedule_file_write(Context *cx, const char *path, const Schedule *s, const ScheduleNote *note);

/* What a schedule needs, in words: "1 thread deviation (1 preemption) and
 * 2 chosen durations; no random draw, fault or timer order matters". */
void schedule_story(const Schedule *s, Buffer *out);

/* Definitions that differ between the file and the loaded program, in
 * words ("worker and limit changed; helper is new"), appended; false when
 * none differ. */
bool schedule_file_changes(Context *cx, const ScheduleFile *f, Buffer *out);

#endif
