/* Schedule exploration: which thread runs at each scheduling point.
 *
 * Without an explorer (vm->explore NULL) the scheduler is io-sim's: the
 * running thread goes on until it blocks, yields or ends, then the head of
 * the run queue runs. With one, every scheduling point is a decision:
 *
 *   - a point in running code, just after an effect on shared state (say,
 *     fork, an MVar operation, readTVarIO, throwTo or kill that did not
 *     block): the candidates are the running thread (the default) and every
 *     runnable thread in the run queue;
 *   - the scheduler picking the next thread (the running one blocked,
 *     yielded, committed a transaction or ended; or threads woke at an
 *     instant): the candidates are the run queue's runnable threads, the
 *     head being the default.
 *
 * A decision with two or more candidates is a step; picking another than
 * the default is a deviation, and at a point in running code a preemption.
 * A schedule is its list of deviations (step, simulated time, thread), and
 * replaying it gives the same run, byte for byte: everything else in a run
 * is deterministic. Picking a thread removes it from the run queue; a
 * preempted thread goes back to the front of the queue, so one deviation
 * moves one thread's turn and nothing else. A timeout's interrupt keeps its
 * place in the queue: it is thrown when it reaches the front.
 *
 * Strategies: the default schedule (decisions counted, for PCT's estimate
 * of a run's length), pct (Burckhardt et al. 2010), random, replay of a
 * schedule, and depth-first search (dfs) over every choice within a
 * preemption bound, plain or pruned with sleep sets (exhaustive; Godefroid
 * 1996, made sound with the bound as Coons et al. 2013 ask: see
 * docs/EXPLORE.md).
 *
 * Threads are named by keys: small ints that stand for fork-tree ids
 * ("main", "2.1"), the same in every run of the program. */
#ifndef SIMVM_EXPLORE_H
#define SIMVM_EXPLORE_H

#include "choice.h"
#include "explorer.h"
#include "state.h"

/* ExploreStrategy, Explorer, explore_run and explore_free are public:
 * vm/vm.h. */

/* One deviation from the default schedule. */
typedef struct {
  int step;            /* the step (decision with a choice), from 1      */
  int64_t time;        /* simulated time of the step                     */
  int thread;          /* key of the thread picked                       */
  int instead;         /* key of the default candidate                   */
  bool preemption;     /* at a point in running code: the default was still running */
} Deviation;

/* Everything a run chose that was not the default: its deviations, then
 * its other choices (vm/choice.h) with the order table their TIMERS
 * choices index. What a schedule file records, and what shrinking
 * shrinks. */
typedef struct {
  Deviation *devs;
  int dev_count;
  Choice *choices;
  int choice_count;
  int64_t *orders;
  int order_count;
} Schedule;

void schedule_free(Schedule *s);
/* `to` becomes a copy of `from` (its arrays its own). */
void schedule_copy(Schedule *to, const Schedule *from);

/* Why a replay stopped matching its schedule (EXPLORE_REPLAY, strict). */
typedef struct {
  bool mismatch;
  int deviation;       /* which deviation, from 1; 0: a choice          */
  char line[160];      /* a choice: its line in the file                 */
  char why[256];       /* "at step 7 (0ns) thread 2 is not runnable ..." */
} ReplayMismatch;

Explorer *explore_new(VM *vm);

/* ---- set up the next run ---- */

void explore_use_default(Explorer *ex);
/* pct with bug depth `depth` (>= 1, d - 1 priority change points) over
 * runs of about `steps` steps, or random; each seeded by `seed`. */
void explore_use_pct(Explorer *ex, uint64_t seed, int depth, int steps);
void explore_use_random(Explorer *ex, uint64_t seed);
/* Replay a schedule (copied). Strict: each deviation and choice must apply
 * where it says, or the run stops (explore_mismatch says where); lenient
 * (shrinking): one that does not apply is skipped. */
void explore_use_replay(Explorer *ex, const Schedule *schedule, bool strict);
/* Pin the choices of `schedule` (not its deviations) for the strategy set
 * up last (shrinking's depth-first search over deviations). */
void explore_pin(Explorer *ex, const Schedule *schedule, bool strict);
/* Durations within ±ppm parts per million of nominal are choices from now
 * on (--jitter; 0: none). */
void explore_set_jitter(Explorer *ex, uint32_t ppm);
/* Depth-first search; `pruned` adds sleep sets. The first run is the
 * default schedule; explore_dfs_next prepares the next one. The bound is
 * on preemptions, or (`deviations`, for shrinking; never pruned) on
 * deviations. */
void explore_use_dfs(Explorer *ex, int bound, bool pruned);
void explore_use_deviation_dfs(Explorer *ex, int bound);
/* After a run: move to the next unexplored schedule; false when the
 * space within the bound is exhausted. */
bool explore_dfs_next(Explorer *ex);
/* Split the depth-first search (from its next explore_use_dfs) into
 * `count` slices and keep slice `index` (from 0): the tree's subtrees
 * below a few branching nodes are numbered in the order the search meets
 * them, the same in every slice, and a slice runs those whose number is
 * its index modulo count; a run that ends above them is one subtree too.
 * Every slice explores the nodes above the subtrees alike, so each
 * subtree's sleep sets are what one search would give it: the slices'
 * schedules together are the whole search's. */
void explore_split(Explorer *ex, int index, int count);

/* A step of a run as recorded (explore_record_steps): its number, time,
 * whether it was a point in running code, and its candidates' keys (the
 * default first). */
typedef struct {
  int step;
  int64_t time;
  bool point;
  int first;           /* where its candidates start (explore_step_candidates) */
  int count;           /* candidates, 2 or more                          */
} StepRecord;

/* Record every step of the runs from now on (delay bounding enumerates
 * the deviations a run could take, from its steps). */
void explore_record_steps(Explorer *ex, bool on);
int explore_step_count(const Explorer *ex);
const StepRecord *explore_step(const Explorer *ex, int i);
const int *explore_step_candidates(const Explorer *ex, const StepRecord *r);

/* Write a line into the trace at each deviation, "<- 2 runs here instead
 * of main", when the VM's text trace is on. */
void explore_mark_deviations(Explorer *ex, bool on);


/* ---- after a run ---- */

/* The run was abandoned: every choice left was equivalent to one explored
 * (sleep sets) or over the preemption bound; it has no outcome. */
bool explore_abandoned(const Explorer *ex);
/* The run belongs to another slice of a split search: it is not counted. */
bool explore_skipped(const Explorer *ex);
/* The run's subtree in a split search (its order in the whole search), or
 * -1. */
int explore_run_unit(const Explorer *ex);
int explore_steps(const Explorer *ex);

/* Run queue entries the explorer has visited or moved, over every run:
 * a deterministic measure of its cost, for the tests. */
uint64_t explore_queue_work(const Explorer *ex);
int explore_deviation_count(const Explorer *ex);
const Deviation *explore_deviations(const Explorer *ex);
int explore_preemptions(const Explorer *ex);
const ReplayMismatch *explore_mismatch(const Explorer *ex);
/* The run's schedule into `out` (its arrays replaced): the deviations and
 * the choices that were not the default; with `draws`, every random draw
 * too, default or not (to replay it under another seed). */
void explore_schedule(Explorer *ex, Schedule *out, bool draws);
/* The run's choices of every kind, default or not, and the choice log
 * (fault points, totals over the runs so far). */
const ChoiceLog *explore_choices(const Explorer *ex);
/* Zero those totals (before a sweep: the load's and calibration's runs
 * are not its). */
void explore_reset_totals(Explorer *ex);
/* A choice as its schedule file line says it ("random 2#3 = 0 of 6"),
 * appended to `out`; `orders`: the table its TIMERS choice indexes. */
void explore_choice_text(Explorer *ex, const Choice *c, const int64_t *orders, Buffer *out);
/* A 64-bit hash of every decision of the run that just ended: equal runs
 * have equal hashes (for counting distinct schedules). */
uint64_t explore_run_hash(const Explorer *ex);

/* The thread id of a key ("main", "2.1"), valid while the explorer lives. */
const char *explore_thread_id(Explorer *ex, int key);
/* The key of a thread id; -1 if `id` is not one ("2.x"). */
int explore_key_of(Explorer *ex, const char *id);

/* How the run that just ended went, for grouping runs by outcome: a kind
 * ("pass", "assertion", "error", "uncaught", "deadlock", "limit",
 * "strict-shutdown") and a one-line description appended to `out`, with no
 * time in it ("main returned 50", "bank.sim:14: assertion failed: overdrawn",
 * "deadlock: 1 waits for <mvar a>, last taken by 2, which ..."). True for a
 * failure: anything but a pass, and a limit only with `fail_on_limit`.
 * Appended to `where`: the failure's place, which with the kind names its
 * class (what shrinking keeps and runs are grouped by, whatever values the
 * message shows): " at bank.sim:14" for an assertion or error, "
 * ErrorCall in main at x.sim:3" for an uncaught exception (its kind, main
 * or another thread, where raised), " at x.sim:4 at x.sim:9" for a deadlock or a
 * strict shutdown (where each thread left waits), " step" for a limit. */
bool explore_describe(VM *vm, SimStatus status, bool fail_on_limit, const char **kind, Buffer *out, Buffer *where);

/* The hooks the VM calls when vm->explore is set: vm/runtime/explorer.h. */

#endif
