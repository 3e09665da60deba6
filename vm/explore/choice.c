/* Choices beyond the schedule: making, recording and pinning them (see
 * choice.h). */
#include "choice.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/alloc.h"
#include "random.h"

void choice_jitter_range(int64_t nominal, uint32_t ppm, int64_t *lo, int64_t *hi) {
  /* in 128 bits: nominal * ppm overflows 64 for long durations */
  int64_t spread = (int64_t)((__int128)nominal * ppm / 1000000);
  *lo = nominal - spread;
  *hi = nominal > INT64_MAX - spread ? INT64_MAX : nominal + spread;
}

ChoiceFamily choice_family(ChoiceKind kind) {
  switch (kind) {
    case CHOICE_RANDOM:
    case CHOICE_FLOAT:
    case CHOICE_SPAN: return FAMILY_DRAW;
    case CHOICE_DURATION: return FAMILY_TIMER;
    case CHOICE_FAULT: return FAMILY_FAULT;
    default: return FAMILY_NONE;
  }
}

bool choice_differs(const Choice *c, const int64_t *orders) {
  if (c->kind != CHOICE_TIMERS) return c->value != c->nominal;
  /* the order chosen, then io-sim's */
  for (int64_t i = 0; i < c->hi; i++)
    if (orders[c->lo + i] != orders[c->lo + c->hi + i]) return true;
  return false;
}

void choices_init(ChoiceLog *log) {
  memset(log, 0, sizeof *log);
  log->mode = CHOOSE_DEFAULT;
}

void choices_free(ChoiceLog *log) {
  free(log->made);
  free(log->orders);
  free(log->stamp);
  free(log->counts);
  free(log->timer_names);
  free(log->pins);
  free(log->pin_orders);
  free(log->pin_used);
  free(log->pin_table);
  for (int i = 0; i < log->fault_count; i++) free(log->faults[i].name);
  free(log->faults);
}

void choices_use_default(ChoiceLog *log) { log->mode = CHOOSE_DEFAULT; }

/* The stream of the data choices, apart from the program's and from the
 * schedule's. */
#define CHOICE_SALT 0xc401ce5ull

void choices_use_random(ChoiceLog *log, uint64_t seed) {
  log->mode = CHOOSE_RANDOMLY;
  log->seed = seed;
}

/* ---- pins: a table from (family, thread, index) to the pin ---- */

static uint32_t pin_hash(int family, int thread, int index) {
  return (uint32_t)splitmix64_mix(((uint64_t)(uint32_t)thread << 32) ^ ((uint64_t)(uint32_t)index << 2) ^
                                  (uint64_t)family);
}

static void pin_insert(ChoiceLog *log, int i) {
  const Choice *c = &log->pins[i];
  uint32_t mask = (uint32_t)log->pin_table_capacity - 1;
  for (uint32_t j = pin_hash(choice_family(c->kind), c->thread, c->index) & mask;; j = (j + 1) & mask) {
    if (!log->pin_table[j]) {
      log->pin_table[j] = i + 1;
      return;
    }
  }
}

void choices_use_pins(ChoiceLog *log, const Choice *pins, int count, const int64_t *orders, bool strict) {
  log->mode = CHOOSE_PINNED;
  log->strict = strict;
  log->pin_count = 0;
  log->pin_order_count = 0;
  for (int i = 0; i < count; i++) {
    GROW(log->pins, log->pin_count, log->pin_capacity);
    Choice c = pins[i];
    if (c.kind == CHOICE_TIMERS) { /* its order, copied into the pins' table */
      int64_t at = log->pin_order_count;
      for (int64_t k = 0; k < c.hi; k++) {
        GROW(log->pin_orders, log->pin_order_count, log->pin_order_capacity);
        log->pin_orders[log->pin_order_count++] = orders[c.lo + k];
      }
      c.lo = at;
    }
    log->pins[log->pin_count++] = c;
  }
  free(log->pin_used);
  log->pin_used = calloc((size_t)(count ? count : 1), sizeof *log->pin_used);
  if (!log->pin_used) xrealloc(NULL, SIZE_MAX); /* out of memory, reported there */
  int capacity = 16;
  while (capacity < 2 * count + 2) capacity *= 2;
  free(log->pin_table);
  log->pin_table_capacity = capacity;
  log->pin_table = calloc((size_t)capacity, sizeof *log->pin_table);
  if (!log->pin_table) xrealloc(NULL, SIZE_MAX);
  for (int i = 0; i < log->pin_count; i++)
    if (log->pins[i].kind != CHOICE_TIMERS) pin_insert(log, i);
}

/* The pin for the choice (family, thread, index), or NULL. */
static Choice *find_pin(ChoiceLog *log, int family, int thread, int index, int *which) {
  if (log->mode != CHOOSE_PINNED || !log->pin_count) return NULL;
  uint32_t mask = (uint32_t)log->pin_table_capacity - 1;
  for (uint32_t j = pin_hash(family, thread, index) & mask; log->pin_table[j]; j = (j + 1) & mask) {
    Choice *c = &log->pins[log->pin_table[j] - 1];
    if ((int)choice_family(c->kind) == family && c->thread == thread && c->index == index) {
      *which = log->pin_table[j] - 1;
      return c;
    }
  }
  return NULL;
}

/* A strict pin did not apply: the first such is kept, for explore.c to
 * say (it knows the threads' ids). */
static void set_mismatch(ChoiceLog *log, ChoiceMismatch reason, const Choice *pin) {
  if (log->mismatch) return;
  log->mismatch = reason;
  log->mismatch_pin = *pin;
}

/* ---- runs ---- */

void choices_begin_run(ChoiceLog *log) {
  if (++log->run == 0) {
    memset(log->stamp, 0, (size_t)log->key_capacity * sizeof *log->stamp);
    log->run = 1;
  }
  log->made_count = 0;
  log->order_count = 0;
  log->timer_count = 0;
  log->mismatch = MISMATCH_NONE;
  log->rng = splitmix64_mix(log->seed ^ CHOICE_SALT);
  if (log->mode == CHOOSE_PINNED) memset(log->pin_used, 0, (size_t)(log->pin_count ? log->pin_count : 1));
}

void choices_reset_totals(ChoiceLog *log) {
  memset(log->totals, 0, sizeof log->totals);
  memset(log->changed, 0, sizeof log->changed);
  for (int i = 0; i < log->fault_count; i++) log->faults[i].reached = log->faults[i].fired = 0;
}

void choices_end_run(ChoiceLog *log) {
  if (log->mode == CHOOSE_PINNED && log->strict) {
    for (int i = 0; i < log->pin_count && !log->mismatch; i++)
      if (!log->pin_used[i]) set_mismatch(log, MISMATCH_UNUSED, &log->pins[i]);
  }
  for (int i = 0; i < log->made_count; i++) {
    const Choice *c = &log->made[i];
    log->totals[c->kind]++;
    if (choice_differs(c, log->orders)) log->changed[c->kind]++;
    if (c->kind == CHOICE_FAULT) {
      log->faults[c->name].reached++;
      log->faults[c->name].fired += c->value != 0;
    }
  }
}

/* The next number of `family` for the thread of `key`, from 1. */
static int next_index(ChoiceLog *log, int key, int family) {
  if (key >= log->key_capacity) {
    int capacity = log->key_capacity ? log->key_capacity : 64;
    while (capacity <= key) capacity *= 2;
    log->stamp = xrealloc(log->stamp, (size_t)capacity * sizeof *log->stamp);
    log->counts = xrealloc(log->counts, (size_t)capacity * FAMILY_NONE * sizeof *log->counts);
    memset(log->stamp + log->key_capacity, 0, (size_t)(capacity - log->key_capacity) * sizeof *log->stamp);
    log->key_capacity = capacity;
  }
  if (log->stamp[key] != log->run) {
    log->stamp[key] = log->run;
    memset(&log->counts[key * FAMILY_NONE], 0, FAMILY_NONE * sizeof *log->counts);
  }
  return ++log->counts[key * FAMILY_NONE + family];
}

static Choice *record(ChoiceLog *log, Choice c) {
  GROW(log->made, log->made_count, log->made_capacity);
  log->made[log->made_count] = c;
  return &log->made[log->made_count++];
}

/* The pin for this choice when it applies: the same kind and range. A pin
 * that does not is a mismatch when strict, else ignored. */
static const Choice *applying_pin(ChoiceLog *log, const Choice *c) {
  int which;
  const Choice *pin = find_pin(log, choice_family(c->kind), c->thread, c->index, &which);
  if (!pin) return NULL;
  log->pin_used[which] = true;
  bool same = pin->kind == c->kind;
  if (same && (c->kind == CHOICE_RANDOM || c->kind == CHOICE_SPAN)) same = pin->lo == c->lo && pin->hi == c->hi;
  if (same && c->kind == CHOICE_DURATION) same = pin->op == c->op && pin->nominal == c->nominal;
  if (same && c->kind == CHOICE_FAULT) same = pin->name == c->name;
  if (same && c->kind == CHOICE_DURATION) same = pin->value >= c->lo && pin->value <= c->hi;
  if (same) return pin;
  if (log->strict) {
    set_mismatch(log, MISMATCH_OTHER, pin);
    log->mismatch_made = *c;
  }
  return NULL;
}

int64_t choices_random(ChoiceLog *log, int key, int64_t time, int64_t n, int64_t stream) {
  Choice c = {.kind = CHOICE_RANDOM, .thread = key, .index = next_index(log, key, FAMILY_DRAW), .time = time,
              .lo = 0, .hi = n - 1, .nominal = stream, .value = stream};
  const Choice *pin = applying_pin(log, &c);
  if (pin) c.value = pin->value;
  return record(log, c)->value;
}

double choices_float(ChoiceLog *log, int key, int64_t time, double stream) {
  int64_t bits;
  memcpy(&bits, &stream, sizeof bits);
  Choice c = {.kind = CHOICE_FLOAT, .thread = key, .index = next_index(log, key, FAMILY_DRAW), .time = time,
              .nominal = bits, .value = bits};
  const Choice *pin = applying_pin(log, &c);
  if (pin) c.value = pin->value;
  double value;
  memcpy(&value, &record(log, c)->value, sizeof value);
  return value;
}

int64_t choices_span(ChoiceLog *log, int key, int64_t time, int64_t lo, int64_t hi, int64_t stream) {
  Choice c = {.kind = CHOICE_SPAN, .thread = key, .index = next_index(log, key, FAMILY_DRAW), .time = time,
              .lo = lo, .hi = hi, .nominal = stream, .value = stream};
  const Choice *pin = applying_pin(log, &c);
  if (pin) c.value = pin->value;
  return record(log, c)->value;
}

int64_t choices_duration(ChoiceLog *log, int key, int64_t time, int op, int64_t ns, uint32_t *tag) {
  int index = next_index(log, key, FAMILY_TIMER);
  GROW(log->timer_names, log->timer_count, log->timer_capacity);
  log->timer_names[log->timer_count++] = TIMER_NAME(key, index);
  *tag = (uint32_t)log->timer_count;
  if (!log->jitter || ns <= 0) return ns; /* nothing to choose */
  Choice c = {.kind = CHOICE_DURATION, .op = (uint8_t)op, .thread = key, .index = index, .time = time,
              .nominal = ns, .value = ns};
  choice_jitter_range(ns, log->jitter, &c.lo, &c.hi);
  if (log->mode == CHOOSE_RANDOMLY && c.hi > c.lo) {
    /* the ends of the range as often as the middle: timing bugs live at
     * ties and at the extremes */
    switch (splitmix64_below(&log->rng, 4)) {
      case 0: break;
      case 1: c.value = c.lo; break;
      case 2: c.value = c.hi; break;
      default: c.value = c.lo + (int64_t)splitmix64_below(&log->rng, (uint64_t)(c.hi - c.lo) + 1); break;
    }
  } else {
    const Choice *pin = applying_pin(log, &c);
    if (pin) c.value = pin->value;
  }
  return record(log, c)->value;
}

int choices_fault_index(ChoiceLog *log, const char *name) {
  for (int i = 0; i < log->fault_count; i++)
    if (strcmp(log->faults[i].name, name) == 0) return i;
  GROW(log->faults, log->fault_count, log->fault_capacity);
  size_t length = strlen(name) + 1;
  char *copy = xrealloc(NULL, length);
  memcpy(copy, name, length);
  log->faults[log->fault_count] = (FaultPoint){copy, 0, 0};
  return log->fault_count++;
}

bool choices_fault(ChoiceLog *log, int key, int64_t time, const char *name, double p) {
  int at = choices_fault_index(log, name);
  Choice c = {.kind = CHOICE_FAULT, .thread = key, .index = next_index(log, key, FAMILY_FAULT), .time = time,
              .name = at, .p = p};
  if (log->mode == CHOOSE_RANDOMLY) {
    c.value = p > 0 && splitmix64_float(&log->rng) < p;
  } else {
    const Choice *pin = applying_pin(log, &c);
    if (pin) c.value = pin->value;
  }
  return record(log, c)->value != 0;
}

int64_t choices_timer_name(const ChoiceLog *log, uint32_t tag) {
  return tag >= 1 && (int)tag <= log->timer_count ? log->timer_names[tag - 1] : -1;
}

static void add_order(ChoiceLog *log, int64_t name) {
  GROW(log->orders, log->order_count, log->order_capacity);
  log->orders[log->order_count++] = name;
}

/* The pin for the timers due at `time`: the same instant and the same
 * timers. */
static const Choice *timers_pin(ChoiceLog *log, int64_t time, const int64_t *names, int count) {
  if (log->mode != CHOOSE_PINNED) return NULL;
  for (int i = 0; i < log->pin_count; i++) {
    const Choice *pin = &log->pins[i];
    if (pin->kind != CHOICE_TIMERS || pin->time != time || pin->hi != count || log->pin_used[i]) continue;
    bool same = true;
    for (int k = 0; k < count && same; k++) {
      bool found = false;
      for (int j = 0; j < count && !found; j++) found = log->pin_orders[pin->lo + j] == names[k];
      same = found;
    }
    if (!same) continue;
    log->pin_used[i] = true;
    return pin;
  }
  return NULL;
}

void choices_order(ChoiceLog *log, int64_t time, Timer **due, int count) {
  int64_t at = log->order_count;
  /* the chosen order, then io-sim's, by the timers' names */
  for (int i = 0; i < 2 * count; i++) add_order(log, choices_timer_name(log, due[i % count]->tag));
  int64_t *chosen = &log->orders[at];
  if (log->mode == CHOOSE_RANDOMLY) {
    if (splitmix64_below(&log->rng, 2)) { /* half the time another order: Fisher and Yates */
      for (int i = count - 1; i > 0; i--) {
        int j = (int)splitmix64_below(&log->rng, (uint64_t)i + 1);
        Timer *t = due[i];
        due[i] = due[j];
        due[j] = t;
      }
    }
  } else {
    const Choice *pin = timers_pin(log, time, chosen, count);
    if (pin) { /* put each timer where the pin's order has it */
      for (int i = 0; i < count; i++) {
        for (int j = i; j < count; j++) {
          if (choices_timer_name(log, due[j]->tag) != log->pin_orders[pin->lo + i]) continue;
          Timer *t = due[i];
          due[i] = due[j];
          due[j] = t;
          break;
        }
      }
    }
  }
  for (int i = 0; i < count; i++) chosen[i] = choices_timer_name(log, due[i]->tag);
  record(log, (Choice){.kind = CHOICE_TIMERS, .thread = -1, .time = time, .lo = at, .hi = count});
}
