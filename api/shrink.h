/* Shrinking a failing run to the smallest story that still fails in its
 * class (docs/EXPLORE.md "Shrinking"): the fewest thread deviations, then
 * the fewest faults fired, then the fewest other choices off their
 * default, then draws as small and durations as near nominal as they can
 * be. Hypothesis's idea (MacIver and Donaldson, "Test-Case Reduction via
 * Test-Case Generation", ECOOP 2020): one sequence of choices, shrunk by
 * deleting and minimising choices, each attempt a replay. */
#ifndef SIMVM_API_SHRINK_H
#define SIMVM_API_SHRINK_H

#include "explore_run.h"

typedef struct {
  Context *cx;
  const char *kind, *where;    /* the class the failure must stay in      */
  uint64_t seed;               /* the program's random seed (0 once rebased) */
  int runs;                    /* replays tried                           */
  uint64_t steps;              /* instructions they ran                   */
  Schedule got;                /* what the last replay that failed chose  */
} Shrinker;

/* Shrink `s`, a schedule that fails in the class (kind, where) under
 * program seed `seed` (its draws all pinned: explore_schedule with draws,
 * so that it fails the same way under another seed). On return `s` is the
 * smallest schedule found and shr->seed the seed it is for: 0, a plain
 * run's, when the failure does not need the seed's stream but for the
 * draws the schedule pins. Deterministic: a budget of runs and
 * instructions, never of time. */
void shrink_schedule(Shrinker *shr, Schedule *s);

/* Replay `s` leniently under shr->seed: whether the run fails in the
 * class (its choices, if so, in shr->got). */
bool shrink_test(Shrinker *shr, const Schedule *s);

void shrinker_free(Shrinker *shr);

/* Preemptions among a schedule's deviations. */
int schedule_preemptions(const Schedule *s);

#endif
