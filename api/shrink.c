/* Shrinking (shrink.h): deletion by delta debugging, group by group, then
 * minimising values, then searching for fewer deviations and preemptions. */
#include "shrink.h"

#include <stdlib.h>
#include <string.h>

/* The budget, deterministic so that the result is too: replays, and
 * instructions over all of them (a test of a step-limit failure runs a
 * million). */
#define SHRINK_MAX_RUNS 5000
#define SHRINK_MAX_STEPS 200000000ull
#define SHRINK_MORE(s) ((s)->runs < SHRINK_MAX_RUNS && (s)->steps < SHRINK_MAX_STEPS)

int schedule_preemptions(const Schedule *s) {
  int n = 0;
  for (int i = 0; i < s->dev_count; i++) n += s->devs[i].preemption;
  return n;
}

void shrinker_free(Shrinker *shr) { schedule_free(&shr->got); }

bool shrink_test(Shrinker *shr, const Schedule *s) {
  Context *cx = shr->cx;
  shr->runs++;
  cx->vm->config.seed = shr->seed;
  explore_use_replay(cx->ex, s, false);
  SimStatus status = explore_run(cx->ex);
  shr->steps += vm_steps(cx->vm);
  Record r = explore_record(cx, 0, status);
  bool same = record_in_class(&r, shr->kind, shr->where);
  record_free(&r);
  if (same) explore_schedule(cx->ex, &shr->got, false);
  return same;
}

/* The groups shrinking deletes from, in the order it does: what a story
 * needs least of comes first. */
typedef enum { GROUP_DEVIATIONS, GROUP_CHOICES, GROUP_FAULTS, GROUP_DRAWS, GROUP_TIMING, GROUPS } Group;

static Group group_of(const Choice *c) {
  switch ((ChoiceKind)c->kind) {
    case CHOICE_FAULT: return GROUP_FAULTS;
    case CHOICE_RANDOM:
    case CHOICE_FLOAT:
    case CHOICE_SPAN: return GROUP_DRAWS;
    default: return GROUP_TIMING;
  }
}

/* Whether a choice is in group g: GROUP_CHOICES holds every choice, so
 * that a fault and the timing that follows from it can go together. */
static bool in_group(const Choice *c, Group g) { return g == GROUP_CHOICES || group_of(c) == g; }

static int group_size(const Schedule *s, Group g) {
  if (g == GROUP_DEVIATIONS) return s->dev_count;
  int n = 0;
  for (int i = 0; i < s->choice_count; i++) n += in_group(&s->choices[i], g);
  return n;
}

/* `s` with only the items of group g in [lo, hi) (keep_inside) or outside
 * it, every other item kept, into `out`. */
static void keep_part(const Schedule *s, Group g, int lo, int hi, bool keep_inside, Schedule *out) {
  schedule_copy(out, s);
  int k = 0;
  if (g == GROUP_DEVIATIONS) {
    out->dev_count = 0;
    for (int i = 0; i < s->dev_count; i++)
      if ((i >= lo && i < hi) == keep_inside) out->devs[out->dev_count++] = s->devs[i];
    return;
  }
  out->choice_count = 0;
  for (int i = 0; i < s->choice_count; i++) {
    bool in = in_group(&s->choices[i], g);
    bool keep = !in || ((k >= lo && k < hi) == keep_inside);
    if (in) k++;
    if (keep) out->choices[out->choice_count++] = s->choices[i];
  }
}

/* Zeller and Hildebrandt's ddmin over one group of `s`'s items: what is
 * left fails in the class, and removing any one of them would not (as far
 * as the budget goes). Each success keeps what the replay chose. */
static void ddmin(Shrinker *shr, Schedule *s, Group g) {
  Schedule test = {0};
  int n = 2;
  while (SHRINK_MORE(shr)) {
    int count = group_size(s, g);
    if (count == 0) break;
    if (count == 1) { /* is the last one needed? */
      keep_part(s, g, 0, 1, false, &test);
      if (shrink_test(shr, &test)) schedule_copy(s, &shr->got);
      break;
    }
    if (n > count) n = count;
    bool reduced = false;
    for (int phase = 0; phase < 2 && !reduced; phase++) { /* each subset, then each complement */
      for (int k = 0; k < n && !reduced && SHRINK_MORE(shr); k++) {
        int lo = (int)((int64_t)count * k / n), hi = (int)((int64_t)count * (k + 1) / n);
        if (hi - lo == 0 || (phase == 0 && hi - lo == count)) continue;
        keep_part(s, g, lo, hi, phase == 0, &test);
        if (shrink_test(shr, &test)) {
          schedule_copy(s, &shr->got);
          n = phase == 0 ? 2 : (n - 1 > 2 ? n - 1 : 2);
          reduced = true;
        }
      }
    }
    if (!reduced) {
      if (n >= count) break;
      n = 2 * n < count ? 2 * n : count;
    }
  }
  schedule_free(&test);
}

/* ---- minimising values ---- */

/* Try choice i of `s` at `value`: kept when the run still fails. */
static bool try_value(Shrinker *shr, Schedule *s, int i, int64_t value) {
  Schedule test = {0};
  schedule_copy(&test, s);
  test.choices[i].value = value;
  bool ok = shrink_test(shr, &test);
  schedule_free(&test);
  if (ok) schedule_copy(s, &shr->got);
  return ok;
}

/* Where choice i stands in the (possibly changed) schedule: the same name. */
static int find_choice(const Schedule *s, const Choice *c) {
  for (int i = 0; i < s->choice_count; i++)
    if (s->choices[i].kind == c->kind && s->choices[i].thread == c->thread && s->choices[i].index == c->index)
      return i;
  return -1;
}

/* The value of an int-like choice, moved as close to `target` as a
 * bisection finds (failure need not be monotone: this is a heuristic). */
static void bisect(Shrinker *shr, Schedule *s, Choice c, int64_t target) {
  int i = find_choice(s, &c);
  if (i < 0 || s->choices[i].value == target) return;
  if (try_value(shr, s, i, target)) return;
  int64_t near = target, far = s->choices[i].value; /* near fails not, far fails */
  for (int round = 0; round < 64 && SHRINK_MORE(shr); round++) { /* to the unit, over any int64 range */
    int64_t mid = near + (far - near) / 2;
    if (mid == near || mid == far) break;
    i = find_choice(s, &c);
    if (i < 0) return;
    if (try_value(shr, s, i, mid)) far = mid;
    else near = mid;
  }
}

/* A float draw halved towards 0 while the run still fails. */
static void halve_float(Shrinker *shr, Schedule *s, Choice c) {
  double zero = 0;
  int64_t bits;
  memcpy(&bits, &zero, sizeof bits);
  int i = find_choice(s, &c);
  if (i < 0 || try_value(shr, s, i, bits)) return;
  for (int round = 0; round < 24 && SHRINK_MORE(shr); round++) {
    i = find_choice(s, &c);
    if (i < 0) return;
    double x;
    memcpy(&x, &s->choices[i].value, sizeof x);
    x /= 2;
    memcpy(&bits, &x, sizeof bits);
    if (!try_value(shr, s, i, bits)) return;
  }
}

/* Draws as small as they go (ints and floats to 0, durations to lo), and
 * durations as near nominal. */
static void minimise_values(Shrinker *shr, Schedule *s) {
  int count = s->choice_count;
  Choice *order = xrealloc(NULL, (size_t)(count ? count : 1) * sizeof *order);
  memcpy(order, s->choices, (size_t)count * sizeof *order);
  for (int k = 0; k < count && SHRINK_MORE(shr); k++) {
    Choice c = order[k];
    switch ((ChoiceKind)c.kind) {
      case CHOICE_RANDOM: bisect(shr, s, c, 0); break;
      case CHOICE_SPAN: bisect(shr, s, c, c.lo); break;
      case CHOICE_DURATION: bisect(shr, s, c, c.nominal); break;
      case CHOICE_FLOAT: halve_float(shr, s, c); break;
      default: break;
    }
  }
  free(order);
}

/* ---- fewer deviations and preemptions ---- */

/* A search for fewer deviations than ddmin kept, which it cannot find (it
 * only removes deviations, and a deviation's step is another point once an
 * earlier one is gone): every schedule with k deviations, depth-first, for
 * k = 1, 2 ... below the count, the choices pinned, within a budget of
 * runs. Of those with k deviations that fail in the class, the one with
 * the fewest preemptions wins. */
#define SHRINK_LEVEL_RUNS 4000

static void fewer_deviations(Shrinker *shr, Schedule *s) {
  Context *cx = shr->cx;
  Schedule pinned = {0};
  schedule_copy(&pinned, s);
  pinned.dev_count = 0;
  for (int k = 1; k < s->dev_count && SHRINK_MORE(shr); k++) {
    explore_use_deviation_dfs(cx->ex, k);
    explore_pin(cx->ex, &pinned, false);
    int level_runs = 0, best = -1;
    bool exhausted = false;
    while (level_runs < SHRINK_LEVEL_RUNS && SHRINK_MORE(shr)) {
      shr->runs++;
      level_runs++;
      cx->vm->config.seed = shr->seed;
      SimStatus status = explore_run(cx->ex);
      shr->steps += vm_steps(cx->vm);
      Record r = explore_record(cx, 0, status);
      bool same = record_in_class(&r, shr->kind, shr->where);
      record_free(&r);
      int preemptions = explore_preemptions(cx->ex);
      if (same && (best < 0 || preemptions < best)) {
        best = preemptions;
        explore_schedule(cx->ex, s, false);
        if (best == 0) break;
      }
      if (!explore_dfs_next(cx->ex)) {
        exhausted = true;
        break;
      }
    }
    if (best >= 0 || !exhausted) break; /* found, or over budget: larger levels would be too */
  }
  schedule_free(&pinned);
}

/* Then fewer preemptions: move each preemption a few steps earlier or
 * later, where it may pick the same thread at a point where the running
 * thread has stopped anyway; keep any move that fails in the class with no
 * more deviations and fewer preemptions. */
#define SHRINK_MOVE 12

static void fewer_preemptions(Shrinker *shr, Schedule *s) {
  bool improved = true;
  Schedule test = {0};
  while (improved && SHRINK_MORE(shr)) {
    improved = false;
    int preemptions = schedule_preemptions(s);
    for (int i = 0; i < s->dev_count && !improved; i++) {
      if (!s->devs[i].preemption) continue;
      for (int delta = 1; delta <= SHRINK_MOVE && !improved && SHRINK_MORE(shr); delta++) {
        for (int sign = 1; sign >= -1 && !improved; sign -= 2) {
          int step = s->devs[i].step + sign * delta;
          if (step < 1 || (i > 0 && step <= s->devs[i - 1].step) || (i + 1 < s->dev_count && step >= s->devs[i + 1].step))
            continue;
          schedule_copy(&test, s);
          test.devs[i].step = step;
          if (shrink_test(shr, &test) && shr->got.dev_count <= s->dev_count &&
              schedule_preemptions(&shr->got) < preemptions) {
            schedule_copy(s, &shr->got);
            improved = true;
          }
        }
      }
    }
  }
  schedule_free(&test);
}

void shrink_schedule(Shrinker *shr, Schedule *s) {
  /* a plain run's random stream, the draws that matter pinned: then only
   * the draws the failure needs are off their default */
  if (shr->seed != 0) {
    uint64_t seed = shr->seed;
    shr->seed = 0;
    if (shrink_test(shr, s)) schedule_copy(s, &shr->got);
    else shr->seed = seed;
  } else if (shrink_test(shr, s)) {
    schedule_copy(s, &shr->got); /* the draws that were their default, dropped */
  }
  Schedule none = {0};
  if (s->dev_count + s->choice_count > 0 && shrink_test(shr, &none)) { /* the default fails too */
    schedule_copy(s, &shr->got);
    schedule_free(&none);
    return;
  }
  schedule_free(&none);
  /* the passes again while one of them made the story smaller: a later
   * pass can make an earlier one's deletion possible (a timer order found
   * may leave a deviation unneeded) */
  for (int round = 0; round < 3 && SHRINK_MORE(shr); round++) {
    Schedule before = {0};
    schedule_copy(&before, s);
    for (Group g = 0; g < GROUPS; g++) ddmin(shr, s, g);
    minimise_values(shr, s);
    fewer_deviations(shr, s);
    fewer_preemptions(shr, s);
    bool same = before.dev_count == s->dev_count && before.choice_count == s->choice_count &&
                (!s->dev_count || !memcmp(before.devs, s->devs, (size_t)s->dev_count * sizeof *s->devs)) &&
                (!s->choice_count || !memcmp(before.choices, s->choices, (size_t)s->choice_count * sizeof *s->choices));
    schedule_free(&before);
    if (same) break;
  }
}
