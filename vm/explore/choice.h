/* Choices beyond the schedule: the data of a run's nondeterminism, made by
 * the explorer, recorded, and given back by a replay (docs/EXPLORE.md
 * "Choices").
 *
 * Besides which thread runs at a scheduling point (vm/explore.h), a run
 * under exploration makes these choices:
 *
 *   CHOICE_RANDOM    random(n): an int in [0, n)
 *   CHOICE_FLOAT     randomFloat(): a float in [0, 1)
 *   CHOICE_SPAN      randomDuration(lo, hi): a duration in [lo, hi]
 *   CHOICE_DURATION  a delay, timeout or registerDelay's duration, within
 *                    --jitter of its nominal value
 *   CHOICE_FAULT     fault(name, p): fired or not (FoundationDB's BUGGIFY)
 *   CHOICE_TIMERS    the order in which the timers due at one instant fire
 *
 * Each has a default, what a plain run does: the thread's random stream
 * gives the draws (vm/random.h), durations are nominal, faults do not fire
 * and timers fire in io-sim's order. Choosing randomly (pct and random)
 * stretches durations, fires faults with their probability and shuffles
 * timers, from a stream of the seed's own; draws keep the stream, which
 * the seed already varies. Pinned (a replay, shrinking), each choice takes
 * the value its pin gives, the default elsewhere.
 *
 * A choice is named by the thread that made it (its key, vm/explore.h) and
 * its number among that thread's draws (RANDOM, FLOAT and SPAN share one
 * count, as they share the stream), timers (one per delay, timeout or
 * registerDelay) or faults, from 1: the thread's own program order, so a
 * name means the same choice under any schedule that lets the thread do
 * the same things. A timer is named the same way (TIMER_NAME), and a
 * TIMERS choice by its instant and the timers in it. */
#ifndef SIMVM_CHOICE_H
#define SIMVM_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

#include "timer.h"

typedef enum {
  CHOICE_RANDOM,
  CHOICE_FLOAT,
  CHOICE_SPAN,
  CHOICE_DURATION,
  CHOICE_FAULT,
  CHOICE_TIMERS,
  CHOICE_KINDS
} ChoiceKind;

/* The counts a choice is numbered in. */
typedef enum { FAMILY_DRAW, FAMILY_TIMER, FAMILY_FAULT, FAMILY_NONE } ChoiceFamily;

/* A timer's name: its thread's key and its number among the thread's timers. */
#define TIMER_NAME(key, index) (((int64_t)(key) << 32) | (uint32_t)(index))
#define TIMER_NAME_KEY(name) ((int)((name) >> 32))
#define TIMER_NAME_INDEX(name) ((int)((name) & 0xffffffff))

typedef struct {
  uint8_t kind;        /* a ChoiceKind                                       */
  uint8_t op;          /* DURATION: the TimerKind of what it times           */
  int thread;          /* key of the thread that made it; TIMERS: -1         */
  int index;           /* its number in the thread's family, from 1          */
  int64_t time;        /* simulated ns when it was made                      */
  int64_t lo, hi;      /* RANDOM: 0 and n - 1; SPAN, DURATION: the range (ns);
                          TIMERS: where its order starts in the order table,
                          and how many timers                               */
  int64_t nominal;     /* the default value: the stream's (RANDOM, SPAN;
                          FLOAT: a double's bits), the nominal duration, 0
                          for a fault                                        */
  int64_t value;       /* the value chosen, in the same units; FAULT: 1 fired */
  int name;            /* FAULT: its name, an index in the fault table       */
  double p;            /* FAULT: the probability it fires when chosen randomly */
} Choice;

/* The range a duration of `nominal` ns (>= 0) may be chosen in under a
 * jitter of `ppm` parts per million: nominal ± nominal·ppm/10^6, rounded
 * down to whole nanoseconds, saturating at 0 and the largest time. */
void choice_jitter_range(int64_t nominal, uint32_t ppm, int64_t *lo, int64_t *hi);

/* Whether a choice is not its default (TIMERS: not io-sim's order; the
 * order table is needed to say). */
bool choice_differs(const Choice *c, const int64_t *orders);

/* The family a kind's choices are numbered in. */
ChoiceFamily choice_family(ChoiceKind kind);

/* How choices are made. */
typedef enum { CHOOSE_DEFAULT, CHOOSE_RANDOMLY, CHOOSE_PINNED } ChoiceMode;

/* A named fault point and how often it was reached and fired over every
 * run so far. */
typedef struct {
  char *name;
  uint64_t reached, fired;
} FaultPoint;

/* Why a strict replay's pin did not apply. */
typedef enum {
  MISMATCH_NONE,
  MISMATCH_OTHER,     /* the choice of that name is of another kind, range or nominal value */
  MISMATCH_UNUSED     /* the run ended without making it                  */
} ChoiceMismatch;

/* Choices a run makes, and how it makes them. */
typedef struct {
  ChoiceMode mode;
  bool strict;              /* pinned: a pin that does not apply stops the run */
  uint32_t jitter;          /* --jitter, parts per million (0: durations are fixed) */
  uint64_t rng;             /* CHOOSE_RANDOMLY's stream, reset from `seed` each run */
  uint64_t seed;

  /* this run */
  Choice *made;             /* every choice made, in order                  */
  int made_count, made_capacity;
  int64_t *orders;          /* TIMERS choices' orders: timer names          */
  int order_count, order_capacity;
  uint32_t run;             /* stamps per key: counts valid where stamp == run */
  uint32_t *stamp;
  int *counts;              /* per key, FAMILY_NONE counts                  */
  int key_capacity;
  int64_t *timer_names;     /* the name of each timer armed, by its tag - 1 */
  int timer_count, timer_capacity;
  ChoiceMismatch mismatch; /* a strict pin did not apply: the run stops    */
  Choice mismatch_pin;      /* the first such pin                           */
  Choice mismatch_made;     /* MISMATCH_OTHER: the choice the run made      */

  /* pins */
  Choice *pins;
  int pin_count, pin_capacity;
  int64_t *pin_orders;
  int pin_order_count, pin_order_capacity;
  bool *pin_used;           /* this run                                     */
  int *pin_table;           /* (family, thread, index) -> pin + 1, open addressing */
  int pin_table_capacity;

  /* across runs */
  FaultPoint *faults;
  int fault_count, fault_capacity;
  uint64_t totals[CHOICE_KINDS], changed[CHOICE_KINDS]; /* made, and not the default */
} ChoiceLog;

void choices_init(ChoiceLog *log);
void choices_free(ChoiceLog *log);

/* How the next runs choose. Pins are copied (with the order table their
 * TIMERS choices index); strict: one that does not apply is a mismatch
 * (choices_mismatch), else it is skipped. */
void choices_use_default(ChoiceLog *log);
void choices_use_random(ChoiceLog *log, uint64_t seed);
void choices_use_pins(ChoiceLog *log, const Choice *pins, int count, const int64_t *orders, bool strict);

/* A run starts. */
void choices_begin_run(ChoiceLog *log);
/* The run ended: a strict pin never used is a mismatch (log->mismatch);
 * the run's choices go into the totals and the fault points' counts. */
void choices_end_run(ChoiceLog *log);
/* Zero the totals and the fault points' counts. */
void choices_reset_totals(ChoiceLog *log);

/* The choices, each made by the thread of key `key` at `time`; each
 * returns the value to use and appends the choice to log->made. `stream`
 * is what the thread's random stream gave. */
int64_t choices_random(ChoiceLog *log, int key, int64_t time, int64_t n, int64_t stream);
double choices_float(ChoiceLog *log, int key, int64_t time, double stream);
int64_t choices_span(ChoiceLog *log, int key, int64_t time, int64_t lo, int64_t hi, int64_t stream);
/* A timer of kind `op` armed for `ns` >= 0: the duration to arm it with;
 * *tag names the timer (choices_timer_name). */
int64_t choices_duration(ChoiceLog *log, int key, int64_t time, int op, int64_t ns, uint32_t *tag);
/* `name` is copied into the fault table the first time. */
bool choices_fault(ChoiceLog *log, int key, int64_t time, const char *name, double p);
/* The `count` >= 2 timers due at `time`, in io-sim's order: put them in the
 * order they fire. */
void choices_order(ChoiceLog *log, int64_t time, Timer **due, int count);

/* The name of a timer armed this run (TIMER_NAME), from its tag; -1 for
 * none. */
int64_t choices_timer_name(const ChoiceLog *log, uint32_t tag);
/* The fault table's index of `name`, added if new. */
int choices_fault_index(ChoiceLog *log, const char *name);

#endif
