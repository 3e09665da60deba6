/* Schedule exploration: decisions, strategies, replay and the depth-first
 * search with sleep sets (see explore.h for the model). */
#include "explore.h"
#include "show.h"
#include "events.h"
#include "builtins.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random.h"
#include "sched.h"

/* ---- footprints: what a transition touched ----
 * An object is a TVar or MVar (its explore_id, tag bit 0) or a thread (its
 * key, tag bit 1); each item is the object shifted left once, with the low
 * bit set for a write. Every transition also reads its own thread, and
 * one that ended the run is global: dependent on everything. */

typedef struct {
  uint64_t *items;
  int count;
  int capacity;
  bool global;
} Footprint;

static uint64_t thread_object(int key) { return ((uint64_t)key << 1) | 1; }

static void fp_add(Footprint *fp, uint64_t object, bool write) {
  for (int i = 0; i < fp->count; i++) {
    if (fp->items[i] >> 1 == object) {
      fp->items[i] |= write;
      return;
    }
  }
  GROW(fp->items, fp->count, fp->capacity);
  fp->items[fp->count++] = object << 1 | write;
}

static void fp_copy(Footprint *to, const Footprint *from) {
  to->count = 0;
  to->global = from->global;
  for (int i = 0; i < from->count; i++) {
    GROW(to->items, to->count, to->capacity);
    to->items[to->count++] = from->items[i];
  }
}

/* Whether the transitions of threads `ta` and `tb` do not commute: one
 * ended the run, one wrote what the other touched, or one threw to the
 * other (wrote its thread). */
static bool dependent(const Footprint *a, int ta, const Footprint *b, int tb) {
  if (a->global || b->global) return true;
  uint64_t self_a = thread_object(ta), self_b = thread_object(tb);
  for (int i = 0; i < a->count; i++) {
    uint64_t object = a->items[i] >> 1;
    bool write = a->items[i] & 1;
    if (write && object == self_b) return true;
    for (int j = 0; j < b->count; j++)
      if (b->items[j] >> 1 == object && (write || (b->items[j] & 1))) return true;
  }
  for (int j = 0; j < b->count; j++)
    if ((b->items[j] & 1) && b->items[j] >> 1 == self_a) return true;
  return false;
}

/* ---- the depth-first search's tree ----
 * One node per scheduling decision of the run being replayed and extended,
 * forced ones (a single candidate) included, so each transition is one
 * thread's step from one decision to the next. */

typedef struct {
  int key;
  Footprint fp;       /* its transition, explored from an equivalent state */
} Sleeper;

typedef struct {
  bool point;         /* in running code: cand[0] is the running thread  */
  bool interrupt;     /* a timeout's interrupt waits in the run queue    */
  int count;          /* candidates, the default first                   */
  int *cand;          /* their keys                                      */
  uint8_t *done;      /* explored from here                              */
  uint8_t *ended_point; /* that candidate's transition ended at a point in running code */
  Footprint *fps;     /* that candidate's transition                     */
  Sleeper *sleep;     /* asleep on arrival (sleep sets)                  */
  int sleep_count;
  int chosen;
  int spent;          /* of the bound, on the path before this node      */
  int branching;      /* nodes of two or more candidates before it       */
  int unit;           /* a split search's subtree rooted here, or -1     */
} Node;

static void node_free(Node *node) {
  for (int i = 0; i < node->count; i++) free(node->fps[i].items);
  for (int i = 0; i < node->sleep_count; i++) free(node->sleep[i].fp.items);
  free(node->cand);
  free(node->done);
  free(node->ended_point);
  free(node->fps);
  free(node->sleep);
}

/* pct's heap of the threads in the run queue: an entry stands while its
 * thread is runnable and it is the newest for its key (a thread queued
 * again, or given another priority, gets a new one). */
typedef struct {
  int64_t priority;
  uint32_t seq;
  int key;
  ObjThread *thread;
} PctEntry;

/* ---- thread keys ---- */

typedef struct {
  int parent;         /* key of the parent, -1 for main */
  int child;          /* child number under it          */
  char *id;           /* "main", "2.1": made when asked */
  uint64_t stable;    /* a hash of its fork-tree path: unlike the key,
                         the same in every process and after any runs */
} KeyInfo;

struct Explorer {
  VM *vm;
  uint64_t queue_work;        /* run queue entries visited (explore_queue_work) */
  ExploreStrategy strategy;
  bool marking;
  bool recording;             /* keep every step's candidates (explore_record_steps) */
  StepRecord *records;
  int record_count, record_capacity;
  int *record_keys;           /* the records' candidates, in their order   */
  int record_key_count, record_key_capacity;

  KeyInfo *keys;
  int key_count, key_capacity;
  int *table;                 /* (parent, child) -> key + 1, open addressing */
  int table_capacity;         /* a power of two                             */

  /* per run, by key; valid where seen[key] == run */
  uint32_t run;
  uint32_t *seen;
  int64_t *priority;          /* pct                                        */
  uint32_t *objects;          /* TVars and MVars the thread created          */
  int per_key_capacity;

  ObjThread **cand;           /* this decision's candidates                 */
  int *cand_key;
  int cand_capacity;

  /* the run */
  int steps;
  bool skip_next;             /* a point in running code picked the next thread */
  bool abandoned;
  Deviation *devs;
  int dev_count, dev_capacity;
  int preemptions;

  /* pct and random */
  PctEntry *heap;             /* pct: queued threads by priority (a max-heap, lazily cleaned) */
  int heap_count, heap_capacity;
  uint32_t *pseq;             /* per key: the sequence number of its valid heap entry */
  uint64_t seed, rng;
  int depth, estimate;
  int *change;                /* pct's priority change points, ascending steps */
  int change_count, change_next;
  int64_t lowest;

  /* replay */
  Deviation *replay;
  int replay_count, replay_capacity, replay_next;
  bool strict;
  ReplayMismatch mismatch;

  /* choices beyond the schedule (vm/choice.h) */
  ChoiceLog choices;
  uint64_t hash;              /* of the run's decisions (explore_run_hash)   */

  /* depth-first */
  int bound;
  bool pruned;
  bool count_deviations;      /* the bound is on deviations, not preemptions */
  Node *stack;
  int stack_count, stack_capacity;
  /* a split search (explore_split): this process's slice of the tree */
  int split_index, split_count, split_depth;
  bool split_active;          /* the search set up last is the split one    */
  int unit_counter;           /* subtrees and short runs met so far, in order */
  int run_unit;               /* the run's subtree, or -1                   */
  bool skipped;               /* the run is another slice's                 */
  int at;                     /* the next node's index in this run          */
  int open;                   /* the node whose chosen transition runs, or -1 */
  Footprint fp;               /* what that transition touched so far         */
};

Explorer *explore_new(VM *vm) {
  Explorer *ex = calloc(1, sizeof *ex);
  if (!ex) return NULL;
  ex->vm = vm;
  ex->strategy = EXPLORE_DEFAULT;
  ex->open = -1;
  ex->dev_capacity = 16; /* never NULL: explore_deviations of a run with none */
  ex->devs = xrealloc(NULL, (size_t)ex->dev_capacity * sizeof *ex->devs);
  choices_init(&ex->choices);
  return ex;
}

static void stack_truncate(Explorer *ex, int count) {
  while (ex->stack_count > count) node_free(&ex->stack[--ex->stack_count]);
}

void explore_free(Explorer *ex) {
  if (!ex) return;
  stack_truncate(ex, 0);
  free(ex->stack);
  for (int i = 0; i < ex->key_count; i++) free(ex->keys[i].id);
  free(ex->keys);
  free(ex->table);
  free(ex->seen);
  free(ex->priority);
  free(ex->pseq);
  free(ex->heap);
  free(ex->objects);
  free(ex->cand);
  free(ex->cand_key);
  free(ex->devs);
  free(ex->change);
  free(ex->replay);
  free(ex->fp.items);
  free(ex->records);
  free(ex->record_keys);
  choices_free(&ex->choices);
  free(ex);
}

static uint32_t key_hash(int parent, int child) {
  return (uint32_t)splitmix64_mix(((uint64_t)(uint32_t)parent << 32) | (uint32_t)child);
}

static void table_insert(Explorer *ex, int key) {
  uint32_t mask = (uint32_t)ex->table_capacity - 1;
  for (uint32_t i = key_hash(ex->keys[key].parent, ex->keys[key].child) & mask;; i = (i + 1) & mask) {
    if (!ex->table[i]) {
      ex->table[i] = key + 1;
      return;
    }
  }
}

/* The key of (parent, child), made if new. */
static int intern_key(Explorer *ex, int parent, int child) {
  if (ex->table_capacity) {
    uint32_t mask = (uint32_t)ex->table_capacity - 1;
    for (uint32_t i = key_hash(parent, child) & mask; ex->table[i]; i = (i + 1) & mask) {
      KeyInfo *info = &ex->keys[ex->table[i] - 1];
      if (info->parent == parent && info->child == child) return ex->table[i] - 1;
    }
  }
  if (2 * (ex->key_count + 1) > ex->table_capacity) {
    free(ex->table);
    ex->table_capacity = ex->table_capacity ? 2 * ex->table_capacity : 64;
    ex->table = calloc((size_t)ex->table_capacity, sizeof *ex->table);
    if (!ex->table) xrealloc(NULL, SIZE_MAX); /* out of memory, reported there */
    for (int k = 0; k < ex->key_count; k++) table_insert(ex, k);
  }
  GROW(ex->keys, ex->key_count, ex->key_capacity);
  int key = ex->key_count++;
  uint64_t above = parent < 0 ? 0x6d61696eull : ex->keys[parent].stable;
  ex->keys[key] = (KeyInfo){parent, child, NULL, splitmix64_mix(above ^ ((uint64_t)(uint32_t)child << 1))};
  table_insert(ex, key);
  if (ex->key_count > ex->per_key_capacity) {
    int capacity = ex->per_key_capacity ? 2 * ex->per_key_capacity : 64;
    ex->seen = xrealloc(ex->seen, (size_t)capacity * sizeof *ex->seen);
    ex->priority = xrealloc(ex->priority, (size_t)capacity * sizeof *ex->priority);
    ex->pseq = xrealloc(ex->pseq, (size_t)capacity * sizeof *ex->pseq);
    ex->objects = xrealloc(ex->objects, (size_t)capacity * sizeof *ex->objects);
    memset(ex->seen + ex->per_key_capacity, 0, (size_t)(capacity - ex->per_key_capacity) * sizeof *ex->seen);
    ex->per_key_capacity = capacity;
  }
  return key;
}

/* The key of a thread of this run, remembered in the thread: its parent's
 * key and its child number, found from the nearest ancestor known. */
static int key_of(Explorer *ex, ObjThread *thread) {
  if (thread->explore_key >= 0) return thread->explore_key;
  int depth = 0;
  for (ObjThread *t = thread; t && t->explore_key < 0; t = t->parent) depth++;
  ObjThread **path = xrealloc(NULL, (size_t)depth * sizeof *path);
  int n = 0;
  ObjThread *t = thread;
  for (; t && t->explore_key < 0; t = t->parent) path[n++] = t;
  int key = t ? t->explore_key : -1;
  for (int i = n - 1; i >= 0; i--) {
    key = intern_key(ex, key, path[i]->parent ? path[i]->child_number : 0);
    path[i]->explore_key = key;
  }
  free(path);
  return key;
}

const char *explore_thread_id(Explorer *ex, int key) {
  KeyInfo *info = &ex->keys[key];
  if (info->id) return info->id;
  Buffer id;
  buf_init(&id);
  if (info->parent < 0) buf_printf(&id, "main");
  else if (ex->keys[info->parent].parent < 0) buf_printf(&id, "%d", info->child);
  else buf_printf(&id, "%s.%d", explore_thread_id(ex, info->parent), info->child);
  ex->keys[key].id = id.data;
  return info->id;
}

int explore_key_of(Explorer *ex, const char *id) {
  int key = intern_key(ex, -1, 0);
  if (strcmp(id, "main") == 0) return key;
  const char *s = id;
  for (;;) {
    if (*s < '1' || *s > '9') return -1;
    long child = 0;
    while (*s >= '0' && *s <= '9') {
      child = child * 10 + (*s++ - '0');
      if (child > 1000000000) return -1;
    }
    key = intern_key(ex, key, (int)child);
    if (!*s) return key;
    if (*s++ != '.') return -1;
  }
}

/* Per-run data of a key, initialised on first use in this run. */
static void touch(Explorer *ex, int key) {
  if (ex->seen[key] == ex->run) return;
  ex->seen[key] = ex->run;
  ex->objects[key] = 0;
  ex->pseq[key] = 0;
  /* pct: a thread's first priority is random, so a new thread lands at a
   * uniform rank among the others; lowered ones stay below them all */
  if (ex->strategy == EXPLORE_PCT)
    ex->priority[key] = (int64_t)((uint64_t)1 << 62) + (int64_t)(splitmix64_next(&ex->rng) >> 3);
}

uint64_t explore_object_id(VM *vm) {
  Explorer *ex = vm->explore;
  if (!vm->current) return 0;
  int key = key_of(ex, vm->current);
  touch(ex, key);
  /* (creator, its n-th object), shifted for the tag bit */
  return (((uint64_t)key << 32) | ++ex->objects[key]) << 1;
}

/* ---- setting up runs ---- */

static void use(Explorer *ex, ExploreStrategy strategy) {
  ex->strategy = strategy;
  ex->split_active = false;
  stack_truncate(ex, 0);
  choices_use_default(&ex->choices);
}

void explore_set_jitter(Explorer *ex, uint32_t ppm) { ex->choices.jitter = ppm; }

void explore_use_default(Explorer *ex) { use(ex, EXPLORE_DEFAULT); }

void explore_use_pct(Explorer *ex, uint64_t seed, int depth, int steps) {
  use(ex, EXPLORE_PCT);
  ex->seed = seed;
  ex->depth = depth < 1 ? 1 : depth;
  ex->estimate = steps;
  ex->change = xrealloc(ex->change, (size_t)ex->depth * sizeof *ex->change);
  choices_use_random(&ex->choices, seed);
}

void explore_use_random(Explorer *ex, uint64_t seed) {
  use(ex, EXPLORE_RANDOM);
  ex->seed = seed;
  choices_use_random(&ex->choices, seed);
}

void explore_use_replay(Explorer *ex, const Schedule *schedule, bool strict) {
  use(ex, EXPLORE_REPLAY);
  ex->replay_count = 0;
  for (int i = 0; i < schedule->dev_count; i++) {
    GROW(ex->replay, ex->replay_count, ex->replay_capacity);
    ex->replay[ex->replay_count++] = schedule->devs[i];
  }
  ex->strict = strict;
  explore_pin(ex, schedule, strict);
}

void explore_pin(Explorer *ex, const Schedule *schedule, bool strict) {
  choices_use_pins(&ex->choices, schedule->choices, schedule->choice_count, schedule->orders, strict);
}

void explore_split(Explorer *ex, int index, int count) {
  ex->split_index = index;
  ex->split_count = count;
  /* enough branching nodes above the subtrees that there are many more
   * subtrees than slices: 6 + log2(count) */
  int depth = 6;
  for (int n = 1; n < count; n *= 2) depth++;
  ex->split_depth = depth;
}

void explore_use_dfs(Explorer *ex, int bound, bool pruned) {
  use(ex, pruned ? EXPLORE_EXHAUSTIVE : EXPLORE_DFS);
  ex->unit_counter = 0;
  ex->split_active = ex->split_count > 1; /* not shrinking's searches */
  ex->bound = bound;
  ex->pruned = pruned;
  ex->count_deviations = false;
}

void explore_use_deviation_dfs(Explorer *ex, int bound) {
  use(ex, EXPLORE_DFS);
  ex->bound = bound;
  ex->pruned = false;
  ex->count_deviations = true;
}

void explore_mark_deviations(Explorer *ex, bool on) { ex->marking = on; }

void explore_record_steps(Explorer *ex, bool on) { ex->recording = on; }
int explore_step_count(const Explorer *ex) { return ex->record_count; }
const StepRecord *explore_step(const Explorer *ex, int i) { return &ex->records[i]; }
const int *explore_step_candidates(const Explorer *ex, const StepRecord *r) { return ex->record_keys + r->first; }

/* pct's d - 1 change points: distinct steps drawn uniformly from
 * [1, estimate] (Burckhardt et al.'s k1 ... k(d-1)), ascending. */
static void pct_change_points(Explorer *ex) {
  ex->change_count = ex->change_next = 0;
  int want = ex->depth - 1;
  if (want > ex->estimate) want = ex->estimate;
  while (ex->change_count < want) {
    int step = 1 + (int)splitmix64_below(&ex->rng, (uint64_t)ex->estimate);
    int i = 0;
    while (i < ex->change_count && ex->change[i] < step) i++;
    if (i < ex->change_count && ex->change[i] == step) continue;
    memmove(&ex->change[i + 1], &ex->change[i], (size_t)(ex->change_count - i) * sizeof *ex->change);
    ex->change[i] = step;
    ex->change_count++;
  }
}

static void choice_mismatch(Explorer *ex);

/* The stream of a strategy's own choices, apart from the program's. */
#define SCHEDULE_SALT 0x5ced0ffeull

SimStatus explore_run(Explorer *ex) {
  VM *vm = ex->vm;
  if (++ex->run == 0) { /* the generation wrapped: forget every stamp */
    memset(ex->seen, 0, (size_t)ex->per_key_capacity * sizeof *ex->seen);
    ex->run = 1;
  }
  ex->steps = 0;
  ex->skip_next = ex->abandoned = false;
  ex->dev_count = 0;
  ex->preemptions = 0;
  ex->replay_next = 0;
  ex->mismatch.mismatch = false;
  ex->at = 0;
  ex->open = -1;
  ex->fp.count = 0;
  ex->fp.global = false;
  ex->lowest = (int64_t)1 << 61;
  ex->heap_count = 0;
  ex->record_count = ex->record_key_count = 0;
  ex->run_unit = -1;
  ex->skipped = false;
  ex->rng = splitmix64_mix(ex->seed ^ SCHEDULE_SALT);
  ex->hash = 0xcbf29ce484222325ull;
  if (ex->strategy == EXPLORE_PCT) pct_change_points(ex);
  choices_begin_run(&ex->choices);
  vm->explore = ex;
  SimStatus status = vm_run(vm);
  vm->explore = NULL;
  choices_end_run(&ex->choices);
  if (ex->split_active && !ex->skipped && ex->run_unit < 0) {
    /* a run that ended (or was abandoned) above the subtrees: one slice's */
    ex->run_unit = ex->unit_counter++;
    if (ex->run_unit % ex->split_count != ex->split_index) ex->skipped = true;
  }
  if (!ex->mismatch.mismatch && !ex->abandoned && ex->choices.mismatch) choice_mismatch(ex);
  if (ex->open >= 0 && ex->open < ex->stack_count) {
    /* the run ended in this transition: it commutes with nothing */
    Node *node = &ex->stack[ex->open];
    ex->fp.global = true;
    fp_copy(&node->fps[node->chosen], &ex->fp);
    node->ended_point[node->chosen] = false;
  }
  if (ex->strategy == EXPLORE_REPLAY && ex->strict && !ex->abandoned && !ex->mismatch.mismatch &&
      ex->replay_next < ex->replay_count) {
    const Deviation *d = &ex->replay[ex->replay_next];
    ex->mismatch.mismatch = true;
    ex->mismatch.deviation = ex->replay_next + 1;
    snprintf(ex->mismatch.why, sizeof ex->mismatch.why, "the run ended after step %d, before step %d", ex->steps,
             d->step);
  }
  return status;
}

bool explore_abandoned(const Explorer *ex) { return ex->abandoned && !ex->skipped; }
bool explore_skipped(const Explorer *ex) { return ex->skipped; }
int explore_run_unit(const Explorer *ex) { return ex->run_unit; }
uint64_t explore_queue_work(const Explorer *ex) { return ex->queue_work; }

int explore_steps(const Explorer *ex) { return ex->steps; }
int explore_deviation_count(const Explorer *ex) { return ex->dev_count; }
const Deviation *explore_deviations(const Explorer *ex) { return ex->devs; }
int explore_preemptions(const Explorer *ex) { return ex->preemptions; }
const ReplayMismatch *explore_mismatch(const Explorer *ex) { return &ex->mismatch; }
const ChoiceLog *explore_choices(const Explorer *ex) { return &ex->choices; }
void explore_reset_totals(Explorer *ex) { choices_reset_totals(&ex->choices); }
uint64_t explore_run_hash(const Explorer *ex) {
  uint64_t h = ex->hash;
  for (int i = 0; i < ex->choices.made_count; i++) {
    const Choice *c = &ex->choices.made[i];
    h = splitmix64_mix(h ^ (uint64_t)c->value ^ ((uint64_t)c->kind << 56));
  }
  return h;
}

void schedule_free(Schedule *s) {
  free(s->devs);
  free(s->choices);
  free(s->orders);
  memset(s, 0, sizeof *s);
}

#define COPY_ARRAY(to, from, n)                                                  \
  do {                                                                           \
    (to) = xrealloc((to), (size_t)((n) ? (n) : 1) * sizeof *(to));                \
    if (n) memcpy((to), (from), (size_t)(n) * sizeof *(to));                     \
  } while (0)

void schedule_copy(Schedule *to, const Schedule *from) {
  if (to == from) return;
  COPY_ARRAY(to->devs, from->devs, from->dev_count);
  to->dev_count = from->dev_count;
  COPY_ARRAY(to->choices, from->choices, from->choice_count);
  to->choice_count = from->choice_count;
  COPY_ARRAY(to->orders, from->orders, from->order_count);
  to->order_count = from->order_count;
}

void explore_schedule(Explorer *ex, Schedule *out, bool draws) {
  COPY_ARRAY(out->devs, ex->devs, ex->dev_count);
  out->dev_count = ex->dev_count;
  const ChoiceLog *log = &ex->choices;
  out->choice_count = out->order_count = 0;
  out->choices = xrealloc(out->choices, (size_t)(log->made_count ? log->made_count : 1) * sizeof *out->choices);
  for (int i = 0; i < log->made_count; i++) {
    Choice c = log->made[i];
    bool draw = choice_family(c.kind) == FAMILY_DRAW;
    if (!choice_differs(&c, log->orders) && !(draws && draw)) continue;
    if (c.kind == CHOICE_TIMERS) { /* its chosen order, into the schedule's own table */
      out->orders = xrealloc(out->orders, (size_t)(out->order_count + c.hi) * sizeof *out->orders);
      memcpy(out->orders + out->order_count, log->orders + c.lo, (size_t)c.hi * sizeof *out->orders);
      c.lo = out->order_count;
      out->order_count += (int)c.hi;
    }
    out->choices[out->choice_count++] = c;
  }
}

/* ---- the run queue ---- */

static Obj **queue_at(RunQueue *q, int i) { return &q->items[(q->head + i) & (q->capacity - 1)]; }

/* What a taken-out entry leaves in the middle of the run queue: a timeout
 * that never fired, which the scheduler and collect() pass over as they
 * pass a finished timeout's entry. Always marked, so the collector never
 * traces it. */
static ObjTimeout removed_entry = {.obj = {.type = OBJ_TIMEOUT, .marked = true}, .state = TIMEOUT_DISARMED};

/* Take `thread`'s entry out of the run queue, keeping the others' order,
 * in O(1): the thread knows its entry's slot (queue_slot); the head or the
 * tail leaves the ring, an entry between them leaves removed_entry. (It
 * used to be found by a scan and the shorter side moved up: at 4,000
 * runnable threads pct spent most of its time there.) */
static void queue_remove(VM *vm, ObjThread *thread) {
  RunQueue *q = &vm->run_queue;
  int mask = q->capacity - 1, slot = thread->queue_slot & mask; /* (stale when not queued: checked) */
  int i = (slot - q->head) & mask; /* its place from the head */
  if (q->count == 0 || i >= q->count || q->items[slot] != &thread->obj) return; /* not queued */
  vm->explore->queue_work++;
  if (i == 0) {
    q->head = (q->head + 1) & mask;
    q->count--;
  } else if (i == q->count - 1) {
    q->count--;
  } else {
    q->items[slot] = &removed_entry.obj;
  }
}

static void pct_heap_push(Explorer *ex, ObjThread *thread);

static void queue_push_front(VM *vm, ObjThread *thread) {
  RunQueue *q = &vm->run_queue;
  if (vm->explore->strategy == EXPLORE_PCT) pct_heap_push(vm->explore, thread);
  if (q->count == q->capacity) {
    sched_enqueue(vm, thread); /* grows the ring; then rotate it to the front */
    Obj *last = *queue_at(q, q->count - 1);
    for (int i = q->count - 1; i > 0; i--) {
      Obj *entry = *queue_at(q, i) = *queue_at(q, i - 1);
      if (entry->type == OBJ_THREAD) ((ObjThread *)entry)->queue_slot = (q->head + i) & (q->capacity - 1);
    }
    *queue_at(q, 0) = last;
    thread->queue_slot = q->head;
    return;
  }
  q->head = (q->head - 1) & (q->capacity - 1);
  q->items[q->head] = &thread->obj;
  thread->queue_slot = q->head;
  q->count++;
}

/* How many candidates a decision needs: all, unless it can only count the
 * step (the default strategy, or a replay with no deviation due there),
 * for which two tell. Collecting all of thousands of runnable threads at
 * every step made the default run (pct's calibration) quadratic. */
static int candidates_needed(const Explorer *ex) {
  if (ex->recording) return INT_MAX;
  if (ex->strategy == EXPLORE_DEFAULT) return 2;
  if (ex->strategy == EXPLORE_REPLAY &&
      (ex->replay_next >= ex->replay_count || ex->replay[ex->replay_next].step != ex->steps + 1))
    return 2;
  return INT_MAX;
}

/* The candidates: `first` (the default), then every other runnable thread
 * waiting in the run queue, in queue order, up to candidates_needed. How
 * many. */
static int collect(Explorer *ex, ObjThread *first) {
  RunQueue *q = &ex->vm->run_queue;
  if (q->count + 1 > ex->cand_capacity) {
    ex->cand_capacity = 2 * (q->count + 1);
    ex->cand = xrealloc(ex->cand, (size_t)ex->cand_capacity * sizeof *ex->cand);
    ex->cand_key = xrealloc(ex->cand_key, (size_t)ex->cand_capacity * sizeof *ex->cand_key);
  }
  int n = 0, most = candidates_needed(ex);
  ex->cand[n++] = first;
  for (int i = 0; i < q->count && n < most; i++) {
    ex->queue_work++;
    Obj *entry = *queue_at(q, i);
    if (entry->type != OBJ_THREAD || entry == &first->obj || ((ObjThread *)entry)->state != THREAD_RUNNABLE) continue;
    ex->cand[n++] = (ObjThread *)entry;
  }
  bool keyed = ex->strategy != EXPLORE_DEFAULT && ex->strategy != EXPLORE_RANDOM;
  for (int i = 0; i < n; i++) ex->cand_key[i] = keyed || i == 0 ? key_of(ex, ex->cand[i]) : -1;
  return n;
}

static int cand_key(Explorer *ex, int i) {
  if (ex->cand_key[i] < 0) ex->cand_key[i] = key_of(ex, ex->cand[i]);
  return ex->cand_key[i];
}

/* ---- strategies ---- */

/* ---- pct's heap: the queued thread of highest priority in O(log n) ---- */

static bool heap_above(const PctEntry *a, const PctEntry *b) { return a->priority > b->priority; }

static void heap_sift_up(Explorer *ex, int i) {
  PctEntry e = ex->heap[i];
  while (i > 0 && heap_above(&e, &ex->heap[(i - 1) / 2])) {
    ex->heap[i] = ex->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  ex->heap[i] = e;
}

static void heap_pop(Explorer *ex) {
  PctEntry e = ex->heap[--ex->heap_count];
  int i = 0, n = ex->heap_count;
  for (;;) {
    int child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_above(&ex->heap[child + 1], &ex->heap[child])) child++;
    if (!heap_above(&ex->heap[child], &e)) break;
    ex->heap[i] = ex->heap[child];
    i = child;
  }
  if (n) ex->heap[i] = e;
}

/* `thread` is queued (again), or its priority changed: a new entry, which
 * leaves its older ones stale. */
static void pct_heap_push(Explorer *ex, ObjThread *thread) {
  int key = key_of(ex, thread);
  touch(ex, key);
  GROW(ex->heap, ex->heap_count, ex->heap_capacity);
  ex->heap[ex->heap_count] = (PctEntry){ex->priority[key], ++ex->pseq[key], key, thread};
  heap_sift_up(ex, ex->heap_count++);
}

void explore_queued(VM *vm, Obj *entry) {
  Explorer *ex = vm->explore;
  RunQueue *q = &vm->run_queue;
  if (entry->type == OBJ_THREAD) ((ObjThread *)entry)->queue_slot = (q->head + q->count - 1) & (q->capacity - 1);
  if (ex->strategy == EXPLORE_PCT && entry->type == OBJ_THREAD) pct_heap_push(ex, (ObjThread *)entry);
}

/* The queued runnable thread of highest priority but `other` (the
 * candidate compared apart: at a point the running thread, whose entry from
 * its last time in the queue still stands), or NULL; stale entries on top
 * are dropped. */
static ObjThread *pct_heap_best(Explorer *ex, ObjThread *other) {
  while (ex->heap_count) {
    const PctEntry *top = &ex->heap[0];
    if (top->thread->state == THREAD_RUNNABLE && top->seq == ex->pseq[top->key] && top->thread != other)
      return top->thread;
    heap_pop(ex);
  }
  return NULL;
}

static void lower(Explorer *ex, int key) {
  touch(ex, key);
  ex->priority[key] = --ex->lowest;
}

static void set_mismatch(Explorer *ex, int deviation, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_mismatch(Explorer *ex, int deviation, const char *fmt, ...) {
  ex->mismatch.mismatch = true;
  ex->mismatch.deviation = deviation;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ex->mismatch.why, sizeof ex->mismatch.why, fmt, ap);
  va_end(ap);
}

/* replay: the deviation listed for this step, if any; -1 when a strict
 * replay no longer matches. */
static int replay_choose(Explorer *ex, int n) {
  if (ex->replay_next >= ex->replay_count || ex->replay[ex->replay_next].step != ex->steps) return 0;
  const Deviation *d = &ex->replay[ex->replay_next++];
  int found = -1;
  for (int i = 0; i < n && found < 0; i++)
    if (ex->cand_key[i] == d->thread) found = i;
  if (!ex->strict) return found < 0 ? 0 : found;
  int number = ex->replay_next;
  Buffer when, want, names;
  buf_init(&when);
  buf_init(&want);
  buf_init(&names);
  duration_show(&when, ex->vm->now);
  duration_show(&want, d->time);
  for (int i = 0; i < n; i++) {
    if (i) buf_append(&names, ", ", 2);
    thread_name(&names, ex->cand[i]);
  }
  if (d->time != ex->vm->now)
    set_mismatch(ex, number, "it is for step %d at %s, but step %d is at %s", d->step, want.data, d->step, when.data);
  else if (found < 0)
    set_mismatch(ex, number, "at step %d (%s) thread %s is not among the runnable threads (%s)", d->step, when.data,
                 explore_thread_id(ex, d->thread), names.data);
  else if (found == 0)
    set_mismatch(ex, number, "at step %d (%s) thread %s would run anyway", d->step, when.data,
                 explore_thread_id(ex, d->thread));
  buf_free(&when);
  buf_free(&want);
  buf_free(&names);
  return ex->mismatch.mismatch ? -1 : found;
}

/* ---- depth-first search ---- */

static int cost(const Node *node, int i) { return node->point && i != 0; }

/* What a choice spends of the bound. */
static int spend(const Explorer *ex, const Node *node, int i) { return ex->count_deviations ? i != 0 : cost(node, i); }

static bool asleep(const Node *node, int key) {
  for (int i = 0; i < node->sleep_count; i++)
    if (node->sleep[i].key == key) return true;
  return false;
}

/* The first candidate, in the default order, not explored yet, not asleep
 * and within the bound; -1 if none. */
static int choosable(const Explorer *ex, const Node *node) {
  for (int i = 0; i < node->count; i++) {
    if (node->done[i] || asleep(node, node->cand[i])) continue;
    if (node->spent + spend(ex, node, i) > ex->bound) continue;
    return i;
  }
  return -1;
}

static void add_sleeper(Node *node, int key, const Footprint *fp) {
  node->sleep = xrealloc(node->sleep, (size_t)(node->sleep_count + 1) * sizeof *node->sleep);
  Sleeper *s = &node->sleep[node->sleep_count++];
  s->key = key;
  s->fp = (Footprint){NULL, 0, 0, false};
  fp_copy(&s->fp, fp);
}

static bool is_candidate(const Node *node, int key) {
  for (int i = 0; i < node->count; i++)
    if (node->cand[i] == key) return true;
  return false;
}

/* The sleep set on arriving at `node` from `parent` by its chosen
 * transition u: the parent's sleepers, and the siblings explored before u,
 * that commute with u (Godefroid's sleep sets). A sibling t goes to sleep
 * only if u cost at least t's preemption plus the one that running u after
 * t would have cost (t's transition ended in running code): then the
 * explored order t.u... had at least the budget this order has left for
 * every continuation, so nothing within the bound is lost (the bound's
 * dependences, Coons et al. 2013). */
static void inherit_sleep(const Node *parent, Node *node) {
  /* A timeout's interrupt is thrown when it reaches the front of the run
   * queue, that is when the threads queued before it have all been picked:
   * which transition throws it depends on their order, a dependence no
   * footprint shows. While one waits, nothing goes to sleep. */
  if (parent->interrupt || node->interrupt) return;
  int u = parent->chosen, tu = parent->cand[u];
  const Footprint *fu = &parent->fps[u];
  for (int i = 0; i < parent->sleep_count; i++) {
    const Sleeper *s = &parent->sleep[i];
    if (is_candidate(node, s->key) && !dependent(&s->fp, s->key, fu, tu)) add_sleeper(node, s->key, &s->fp);
  }
  for (int t = 0; t < parent->count; t++) {
    if (!parent->done[t] || t == u) continue;
    if (cost(parent, u) < cost(parent, t) + parent->ended_point[t]) continue;
    if (is_candidate(node, parent->cand[t]) && !dependent(&parent->fps[t], parent->cand[t], fu, tu))
      add_sleeper(node, parent->cand[t], &parent->fps[t]);
  }
}

/* Whether a fired timeout's interrupt waits in the run queue. */
static bool interrupt_queued(VM *vm) {
  RunQueue *q = &vm->run_queue;
  for (int i = 0; i < q->count; i++) {
    Obj *entry = *queue_at(q, i);
    if (entry->type == OBJ_TIMEOUT && ((ObjTimeout *)entry)->state == TIMEOUT_FIRED) return true;
  }
  return false;
}

/* The transition chosen at the open node ended at a decision (`point`: in
 * the running code of the same thread). */
static void close_transition(Explorer *ex, bool point) {
  if (ex->open < 0) return;
  Node *node = &ex->stack[ex->open];
  fp_copy(&node->fps[node->chosen], &ex->fp);
  node->ended_point[node->chosen] = point;
  ex->fp.count = 0;
  ex->fp.global = false;
  ex->open = -1;
}

static int dfs_choose(Explorer *ex, bool point, int n) {
  close_transition(ex, point);
  int at = ex->at++;
  Node *node;
  if (at < ex->stack_count) {
    node = &ex->stack[at];
    bool same = node->count == n;
    for (int i = 0; i < n && same; i++) same = node->cand[i] == ex->cand_key[i];
    if (!same) {
      /* cannot happen: a run is a function of its decisions */
      fprintf(stderr, "simvm: internal error: the program ran differently on the same schedule (step %d)\n", at);
      abort();
    }
  } else {
    GROW(ex->stack, ex->stack_count, ex->stack_capacity);
    node = &ex->stack[ex->stack_count++];
    memset(node, 0, sizeof *node);
    node->point = point;
    node->interrupt = interrupt_queued(ex->vm);
    node->count = n;
    node->cand = xrealloc(NULL, (size_t)n * sizeof *node->cand);
    node->done = calloc((size_t)n, 1);
    node->ended_point = calloc((size_t)n, 1);
    node->fps = calloc((size_t)n, sizeof *node->fps);
    if (!node->done || !node->ended_point || !node->fps) xrealloc(NULL, SIZE_MAX);
    for (int i = 0; i < n; i++) node->cand[i] = ex->cand_key[i];
    node->unit = -1;
    if (at > 0) {
      Node *parent = &ex->stack[at - 1];
      node->spent = parent->spent + spend(ex, parent, parent->chosen);
      node->branching = parent->branching + (parent->count >= 2);
      if (ex->pruned) inherit_sleep(parent, node);
    }
    if (ex->split_active && n >= 2 && node->branching == ex->split_depth) {
      /* the root of a subtree: in every slice the same one, numbered in the
       * same order, since everything above is explored alike */
      node->unit = ex->unit_counter++;
      ex->run_unit = node->unit; /* also when the run is abandoned right here */
      if (node->unit % ex->split_count != ex->split_index) {
        node_free(node);
        ex->stack_count--;
        ex->skipped = true;
        return -1;
      }
    }
    node->chosen = choosable(ex, node);
    if (node->chosen < 0) { /* every choice is asleep or over the bound */
      node_free(node);
      ex->stack_count--;
      return -1;
    }
  }
  if (node->unit >= 0) ex->run_unit = node->unit;
  ex->open = at;
  return node->chosen;
}

bool explore_dfs_next(Explorer *ex) {
  while (ex->stack_count > 0) {
    Node *node = &ex->stack[ex->stack_count - 1];
    node->done[node->chosen] = 1;
    int next = choosable(ex, node);
    if (next >= 0) {
      node->chosen = next;
      return true;
    }
    stack_truncate(ex, ex->stack_count - 1);
  }
  return false;
}

/* ---- decisions ---- */

/* A deviation or choice off its default, `text` ("2 runs here instead of
 * 1"): a line of the text trace ("<- ..."), and an event for the sinks
 * that draw (the timeline marks it on `thread`'s track). `named`: the
 * text trace names `thread` in its thread column, else shows "-". Only in
 * runs that mark (--seed, --replay, the report). */
static void mark(Explorer *ex, ObjThread *thread, bool named, const char *text) {
  VM *vm = ex->vm;
  if (!ex->marking) return;
  vm_event(vm, .kind = EV_MARK, .thread = thread, .text = text, .length = strlen(text));
  if (!vm->config.trace || !vm->config.write_trace) return;
  Buffer line, when, who;
  buf_init(&line);
  buf_init(&when);
  buf_init(&who);
  duration_show(&when, vm->now);
  if (named && thread) thread_name(&who, thread); /* the thread column: who chose, or - */
  else buf_append(&who, "-", 1);
  buf_printf(&line, "%10s  %-12s <- %s\n", when.data, who.data, text);
  vm_write_trace(vm, 0, line.data, line.length);
  buf_free(&line);
  buf_free(&when);
  buf_free(&who);
}

static void write_marker(Explorer *ex, ObjThread *chosen, ObjThread *instead) {
  if (!ex->marking) return;
  Buffer text;
  buf_init(&text);
  thread_name(&text, chosen);
  buf_printf(&text, " runs here instead of ");
  thread_name(&text, instead);
  mark(ex, chosen, false, text.data);
  buf_free(&text);
}

/* Decide among the `n` collected candidates (every strategy but pct). The
 * index picked, or -1 to stop the run. */
static int decide(Explorer *ex, bool point, int n) {
  bool dfs = ex->strategy == EXPLORE_DFS || ex->strategy == EXPLORE_EXHAUSTIVE;
  if (n < 2 && !dfs) return 0;
  if (n >= 2) ex->steps++;
  if (n >= 2 && ex->recording) {
    GROW(ex->records, ex->record_count, ex->record_capacity);
    ex->records[ex->record_count++] = (StepRecord){ex->steps, ex->vm->now, point, ex->record_key_count, n};
    for (int i = 0; i < n; i++) {
      GROW(ex->record_keys, ex->record_key_count, ex->record_key_capacity);
      ex->record_keys[ex->record_key_count++] = cand_key(ex, i);
    }
  }
  int k = 0;
  switch (ex->strategy) {
    case EXPLORE_DEFAULT:
    case EXPLORE_PCT:   /* pct decides in pct_decide */
    case EXPLORE_DELAY: /* api/explore.c's: it runs replays */
      break;
    case EXPLORE_RANDOM: k = (int)splitmix64_below(&ex->rng, (uint64_t)n); break;
    case EXPLORE_REPLAY: k = replay_choose(ex, n); break;
    case EXPLORE_DFS:
    case EXPLORE_EXHAUSTIVE: k = dfs_choose(ex, point, n); break;
  }
  if (k >= 0) {
    /* cand_key may intern a key and move ex->keys: read the array after it
     * (fuzz_explore found ex->keys read before, then indexed after a realloc) */
    int key = cand_key(ex, k);
    ex->hash = (ex->hash ^ ex->keys[key].stable) * 0x100000001b3ull;
  }
  if (k <= 0) {
    if (k < 0) ex->abandoned = ex->strategy != EXPLORE_REPLAY;
    return k;
  }
  GROW(ex->devs, ex->dev_count, ex->dev_capacity);
  ex->devs[ex->dev_count++] =
      (Deviation){ex->steps, ex->vm->now, cand_key(ex, k), cand_key(ex, 0), point};
  if (point) ex->preemptions++;
  write_marker(ex, ex->cand[k], ex->cand[0]);
  return k;
}

/* pct (Burckhardt et al.), without collecting the candidates: the runnable
 * thread of highest priority runs, `first` (the running thread at a point,
 * else the head just taken off the queue) against the heap's best. At each
 * change point the thread that was running drops below every other; so
 * does a thread that yields, as in Shuttle and Coyote, or a yield loop
 * would keep the highest priority forever. The thread to run. */
static ObjThread *pct_decide(Explorer *ex, bool point, ObjThread *previous, ObjThread *first) {
  ObjThread *best = pct_heap_best(ex, first);
  if (!best) return first;  /* a single candidate: no step */
  ex->steps++;
  while (ex->change_next < ex->change_count && ex->change[ex->change_next] < ex->steps) ex->change_next++;
  bool change = ex->change_next < ex->change_count && ex->change[ex->change_next] == ex->steps;
  if (previous && (change || (!point && previous->state == THREAD_RUNNABLE))) {
    int key = key_of(ex, previous);
    lower(ex, key);
    /* queued (it yielded): its entry now has another priority */
    if (previous != first && previous->state == THREAD_RUNNABLE) pct_heap_push(ex, previous);
    best = pct_heap_best(ex, first);
    if (!best) return first;
  }
  int kf = key_of(ex, first), kb = key_of(ex, best);
  touch(ex, kf);
  ObjThread *chosen = ex->priority[kb] > ex->priority[kf] ? best : first;
  int kc = chosen == first ? kf : kb;
  ex->hash = (ex->hash ^ ex->keys[kc].stable) * 0x100000001b3ull;
  if (chosen == first) return first;
  GROW(ex->devs, ex->dev_count, ex->dev_capacity);
  ex->devs[ex->dev_count++] = (Deviation){ex->steps, ex->vm->now, kb, kf, point};
  if (point) ex->preemptions++;
  write_marker(ex, best, first);
  return best;
}

/* ---- hooks ---- */

static void note(Explorer *ex, Obj *object, bool write) {
  if (object->type == OBJ_THREAD) {
    ObjThread *thread = (ObjThread *)object;
    fp_add(&ex->fp, thread_object(key_of(ex, thread)), write);
    if (!write || thread->state != THREAD_BLOCKED) return;
    /* an exception thrown to a blocked thread takes it out of the queue of
     * what it waits on: that changes too */
    Obj *waited = thread_wait_object(thread);
    if (thread->blocked_on == BLOCKED_STM) {
      for (int i = 0; i < thread->wait_count; i++) fp_add(&ex->fp, thread->wait_set[i]->explore_id, true);
    } else if (waited && waited->type != OBJ_THREAD) {
      note(ex, waited, true);
    } else if (waited) {
      fp_add(&ex->fp, thread_object(key_of(ex, (ObjThread *)waited)), true);
    }
  } else if (object->type == OBJ_TVAR) fp_add(&ex->fp, ((ObjTVar *)object)->explore_id, write);
  else if (object->type == OBJ_MVAR) fp_add(&ex->fp, ((ObjMVar *)object)->explore_id, write);
}

void explore_access(VM *vm, Obj *object, bool write) {
  Explorer *ex = vm->explore;
  if (ex->strategy == EXPLORE_EXHAUSTIVE) note(ex, object, write);
}

bool explore_point(VM *vm, ObjThread *thread, Obj *object, bool write) {
  Explorer *ex = vm->explore;
  if (ex->choices.mismatch) { /* a strict replay's choice did not apply: stop (explore_pick) */
    queue_push_front(vm, thread);
    return true;
  }
  if (object && ex->strategy == EXPLORE_EXHAUSTIVE) note(ex, object, write);
  if (ex->strategy == EXPLORE_PCT) {
    ObjThread *chosen = pct_decide(ex, true, thread, thread);
    if (chosen == thread) return false;
    queue_push_front(vm, thread);
    queue_remove(vm, chosen);
    queue_push_front(vm, chosen);
    ex->skip_next = true;
    return true;
  }
  int n = collect(ex, thread);
  int k = decide(ex, true, n);
  if (k == 0) return false;
  queue_push_front(vm, thread);
  if (k > 0) {
    /* the chosen thread runs now; the preempted one is next by default */
    queue_remove(vm, ex->cand[k]);
    queue_push_front(vm, ex->cand[k]);
    ex->skip_next = true;
  }
  return true;
}

ObjThread *explore_pick(VM *vm, ObjThread *head) {
  Explorer *ex = vm->explore;
  if (ex->abandoned || ex->mismatch.mismatch || ex->choices.mismatch) return NULL;
  if (ex->skip_next) { /* the rest of a decision made in running code */
    ex->skip_next = false;
    return head;
  }
  ObjThread *previous = vm->current;
  if (previous && ex->strategy == EXPLORE_EXHAUSTIVE) {
    /* how its transition ended: what it blocks on, or its end */
    if (previous->state == THREAD_DONE) note(ex, &previous->obj, true);
    else if (previous->state == THREAD_BLOCKED && thread_wait_object(previous))
      note(ex, thread_wait_object(previous), true); /* an MVar's queue, or a throwTo's target */
  }
  if (ex->strategy == EXPLORE_PCT) {
    ObjThread *chosen = pct_decide(ex, false, previous, head);
    if (chosen != head) {
      queue_remove(vm, chosen);
      queue_push_front(vm, head);
    }
    return chosen;
  }
  int n = collect(ex, head);
  int k = decide(ex, false, n);
  if (k < 0) return NULL;
  if (k == 0) return head;
  queue_remove(vm, ex->cand[k]);
  queue_push_front(vm, head);
  return ex->cand[k];
}

/* ---- choices beyond the schedule ---- */

/* A choice's name in a file and a trace: "2#3", thread 2's third. */
static void choice_name(Explorer *ex, Buffer *out, int thread, int index) {
  buf_printf(out, "%s#%d", explore_thread_id(ex, thread), index);
}


static void show_float_bits(Buffer *out, int64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  buf_printf(out, "%.17g", x);
}

void explore_choice_text(Explorer *ex, const Choice *c, const int64_t *orders, Buffer *out) {
  switch ((ChoiceKind)c->kind) {
    case CHOICE_RANDOM:
    case CHOICE_FLOAT:
    case CHOICE_SPAN:
      buf_printf(out, "random ");
      choice_name(ex, out, c->thread, c->index);
      buf_printf(out, " = ");
      if (c->kind == CHOICE_RANDOM) buf_printf(out, "%" PRId64 " of %" PRId64, c->value, c->hi + 1);
      else if (c->kind == CHOICE_FLOAT) {
        show_float_bits(out, c->value);
        buf_printf(out, " of float");
      } else {
        duration_show(out, c->value);
        buf_printf(out, " of ");
        duration_show(out, c->lo);
        buf_printf(out, "..");
        duration_show(out, c->hi);
      }
      break;
    case CHOICE_DURATION:
      buf_printf(out, "%s ", timer_kind_names[c->op]);
      choice_name(ex, out, c->thread, c->index);
      buf_printf(out, " = ");
      duration_show(out, c->value);
      buf_printf(out, " of ");
      duration_show(out, c->nominal);
      break;
    case CHOICE_FAULT:
      buf_printf(out, "fault ");
      choice_name(ex, out, c->thread, c->index);
      buf_printf(out, " \"%s\" %s", ex->choices.faults[c->name].name, c->value ? "fired" : "not fired");
      break;
    case CHOICE_TIMERS:
      buf_printf(out, "timers at ");
      duration_show(out, c->time);
      buf_printf(out, " fire ");
      for (int64_t i = 0; i < c->hi; i++) {
        int64_t name = orders[c->lo + i];
        if (i) buf_printf(out, ", ");
        choice_name(ex, out, TIMER_NAME_KEY(name), TIMER_NAME_INDEX(name));
      }
      break;
    case CHOICE_KINDS: break;
  }
}

/* A strict replay's pin did not apply (vm/choice.h): say which and why. */
static void choice_mismatch(Explorer *ex) {
  const ChoiceLog *log = &ex->choices;
  const Choice *pin = &log->mismatch_pin;
  Buffer line, why;
  buf_init(&line);
  buf_init(&why);
  explore_choice_text(ex, pin, log->pin_orders, &line);
  if (log->mismatch == MISMATCH_UNUSED) {
    if (pin->kind == CHOICE_TIMERS) buf_printf(&why, "no such timers are due together then");
    else buf_printf(&why, "the run ended without making that choice");
  } else {
    buf_printf(&why, "the run makes another choice there: ");
    explore_choice_text(ex, &log->mismatch_made, log->orders, &why);
    if (log->mismatch_made.kind == CHOICE_RANDOM || log->mismatch_made.kind == CHOICE_SPAN) {
      /* the default value says nothing: the range is what differs */
      buf_truncate(&why, (size_t)(strrchr(why.data, '=') - why.data));
      buf_printf(&why, "of another range");
    }
  }
  ex->mismatch.mismatch = true;
  ex->mismatch.deviation = 0;
  snprintf(ex->mismatch.line, sizeof ex->mismatch.line, "%s", buf_text(&line));
  snprintf(ex->mismatch.why, sizeof ex->mismatch.why, "%s", buf_text(&why));
  buf_free(&line);
  buf_free(&why);
}

/* A line in the trace for a choice that is not the default, where it is
 * made: "<- random(6) = 0 (the stream gave 4)". */
static void mark_choice(Explorer *ex, ObjThread *thread, const Choice *c) {
  if (!ex->marking || !choice_differs(c, ex->choices.orders)) return;
  Buffer what;
  buf_init(&what);
  switch ((ChoiceKind)c->kind) {
    case CHOICE_RANDOM:
      buf_printf(&what, "random(%" PRId64 ") = %" PRId64 " (the stream gave %" PRId64 ")", c->hi + 1, c->value,
                 c->nominal);
      break;
    case CHOICE_FLOAT:
      buf_printf(&what, "randomFloat() = ");
      show_float_bits(&what, c->value);
      buf_printf(&what, " (the stream gave ");
      show_float_bits(&what, c->nominal);
      buf_printf(&what, ")");
      break;
    case CHOICE_SPAN:
      buf_printf(&what, "randomDuration(");
      duration_show(&what, c->lo);
      buf_printf(&what, ", ");
      duration_show(&what, c->hi);
      buf_printf(&what, ") = ");
      duration_show(&what, c->value);
      buf_printf(&what, " (the stream gave ");
      duration_show(&what, c->nominal);
      buf_printf(&what, ")");
      break;
    case CHOICE_DURATION:
      buf_printf(&what, "%s ", timer_kind_names[c->op]);
      duration_show(&what, c->nominal);
      buf_printf(&what, " %s to ", c->value > c->nominal ? "stretched" : "shrunk");
      duration_show(&what, c->value);
      break;
    case CHOICE_FAULT:
      buf_printf(&what, "fault \"%s\" fired", ex->choices.faults[c->name].name);
      break;
    case CHOICE_TIMERS:
      explore_choice_text(ex, c, ex->choices.orders, &what);
      buf_printf(&what, " (io-sim's order: ");
      for (int64_t i = 0; i < c->hi; i++) {
        int64_t name = ex->choices.orders[c->lo + c->hi + i];
        if (i) buf_printf(&what, ", ");
        choice_name(ex, &what, TIMER_NAME_KEY(name), TIMER_NAME_INDEX(name));
      }
      buf_printf(&what, ")");
      break;
    case CHOICE_KINDS: break;
  }
  /* a timer order concerns no one thread: the timeline draws it on main's track */
  if (thread) mark(ex, thread, true, what.data);
  else mark(ex, ex->vm->main_thread, false, what.data);
  buf_free(&what);
}

static const Choice *last_choice(Explorer *ex) { return &ex->choices.made[ex->choices.made_count - 1]; }

int64_t explore_random(VM *vm, ObjThread *thread, int64_t n, int64_t stream) {
  Explorer *ex = vm->explore;
  int64_t value = choices_random(&ex->choices, key_of(ex, thread), vm->now, n, stream);
  mark_choice(ex, thread, last_choice(ex));
  return value;
}

double explore_float(VM *vm, ObjThread *thread, double stream) {
  Explorer *ex = vm->explore;
  double value = choices_float(&ex->choices, key_of(ex, thread), vm->now, stream);
  mark_choice(ex, thread, last_choice(ex));
  return value;
}

int64_t explore_span(VM *vm, ObjThread *thread, int64_t lo, int64_t hi, int64_t stream) {
  Explorer *ex = vm->explore;
  int64_t value = choices_span(&ex->choices, key_of(ex, thread), vm->now, lo, hi, stream);
  mark_choice(ex, thread, last_choice(ex));
  return value;
}

int64_t explore_timer(VM *vm, ObjThread *thread, Timer *timer, int op, int64_t ns) {
  Explorer *ex = vm->explore;
  int before = ex->choices.made_count;
  int64_t value = choices_duration(&ex->choices, key_of(ex, thread), vm->now, op, ns, &timer->tag);
  if (ex->choices.made_count > before) mark_choice(ex, thread, last_choice(ex));
  return value;
}

bool explore_fault(VM *vm, ObjThread *thread, const char *name, double p) {
  Explorer *ex = vm->explore;
  bool fired = choices_fault(&ex->choices, key_of(ex, thread), vm->now, name, p);
  mark_choice(ex, thread, last_choice(ex));
  return fired;
}

void explore_order_timers(VM *vm, Timer **due, int count) {
  Explorer *ex = vm->explore;
  choices_order(&ex->choices, vm->now, due, count);
  mark_choice(ex, NULL, last_choice(ex));
}

/* ---- outcomes ---- */

#define DESCRIBE_LIMIT 300 /* bytes of a value in a description */

/* A deadlock in one line: its first wait-for cycle, else what each thread
 * waits on ("main is blocked in takeMVar on <mvar m> at x.sim:4; ..."). */
static void describe_deadlock(VM *vm, Buffer *out) {
  Buffer report;
  buf_init(&report);
  sched_describe_deadlock(vm, &report);
  const char *text = buf_text(&report);
  const char *cycle = strstr(text, "\n  cycle: ");
  if (strncmp(text, "  cycle: ", 9) == 0) cycle = text - 1;
  buf_printf(out, "deadlock: ");
  if (cycle) {
    const char *start = cycle + 10, *end = strchr(start, '\n');
    buf_append(out, start, end ? (size_t)(end - start) : strlen(start));
  } else {
    bool first = true;
    for (const char *line = text; *line;) {
      const char *end = strchr(line, '\n');
      size_t length = end ? (size_t)(end - line) : strlen(line);
      if (length > 9 && strncmp(line, "  thread ", 9) == 0) {
        if (!first) buf_append(out, "; ", 2);
        buf_append(out, line + 9, length - 9);
        first = false;
      }
      line += length + (end != NULL);
    }
  }
  buf_free(&report);
}

/* A deadlock's place: where each blocked thread waits, sorted, each once
 * (" at x.sim:4 at x.sim:9"). */
static void deadlock_place(VM *vm, Buffer *where) {
  int count = 0;
  for (ObjThread *t = vm->live; t; t = t->live_next) count++;
  char **places = xrealloc(NULL, (size_t)(count ? count : 1) * sizeof *places);
  int n = 0;
  for (ObjThread *t = vm->live; t; t = t->live_next) {
    Buffer place;
    buf_init(&place);
    sched_thread_place(vm, &place, t);
    places[n++] = xrealloc(NULL, place.length + 1);
    memcpy(places[n - 1], buf_text(&place), place.length + 1);
    buf_free(&place);
  }
  for (int i = 1; i < n; i++) /* insertion sort: few threads */
    for (int j = i; j > 0 && strcmp(places[j - 1], places[j]) > 0; j--) {
      char *t = places[j];
      places[j] = places[j - 1];
      places[j - 1] = t;
    }
  for (int i = 0; i < n; i++)
    if (i == 0 || strcmp(places[i], places[i - 1]) != 0) buf_printf(where, "%s", places[i]);
  for (int i = 0; i < n; i++) free(places[i]);
  free(places);
}

/* An uncaught exception's kind, as exceptionKind gives it. */
static void exception_class(Buffer *out, Value e) {
  Value kind;
  const char *name = exception_kind_name(e, &kind);
  if (name) buf_printf(out, "%s", name);
  else value_show_line(out, kind, false, 60);
}

static bool describe(VM *vm, SimStatus status, bool fail_on_limit, const char **kind, Buffer *out, Buffer *where) {
  size_t start = out->length;
  switch (status) {
    case SIM_OK:
      *kind = "pass";
      buf_printf(out, "main returned ");
      value_show_line(out, vm->result, true, DESCRIBE_LIMIT);
      return false;
    case SIM_DEADLOCK:
      *kind = "deadlock";
      describe_deadlock(vm, out);
      deadlock_place(vm, where);
      return true;
    case SIM_LIMIT:
      *kind = "limit";
      if (vm->heap_exceeded) buf_printf(out, "heap limit reached (--max-heap)");
      else if (vm->config.max_steps && vm->steps >= vm->config.max_steps)
        buf_printf(out, "step limit reached (--max-steps %" PRIu64 ")", vm->config.max_steps);
      else if (vm->live_threads >= vm_max_threads(vm))
        buf_printf(out, "thread limit reached (--max-threads %d)", vm_max_threads(vm));
      else {
        buf_printf(out, "time limit reached (--max-time ");
        duration_show(out, vm->config.max_time);
        buf_printf(out, ")");
      }
      /* its place: which limit (the description up to " limit") */
      buf_append(where, " ", 1);
      buf_append(where, out->data + start, (size_t)(strstr(out->data + start, " limit") - (out->data + start)));
      return fail_on_limit;
    default:
      break;
  }
  ObjThread *thread = vm->failed_thread;
  if (!thread && !vm->config.strict_shutdown) { /* no run failed so: the load (reported apart) */
    *kind = "error";
    buf_printf(out, "the program failed to load");
    return true;
  }
  if (!thread) { /* main finished leaving threads behind (--strict-shutdown) */
    *kind = "strict-shutdown";
    deadlock_place(vm, where);
    int count = 0;
    for (ObjThread *t = vm->live; t; t = t->live_next) count++;
    buf_printf(out, "strict shutdown: main finished with %d thread%s still alive: ", count, count == 1 ? "" : "s");
    ObjThread *oldest = vm->live;
    while (oldest && oldest->live_next) oldest = oldest->live_next;
    for (ObjThread *t = oldest; t; t = t->live_prev) {
      if (t != oldest) buf_append(out, ", ", 2);
      thread_name(out, t);
    }
    return true;
  }
  Value exc = vm->failure;
  if (IS_EXCEPTION(exc) && (AS_EXCEPTION(exc)->kind == EXC_ASSERT || AS_EXCEPTION(exc)->kind == EXC_ERROR)) {
    ObjException *e = AS_EXCEPTION(exc);
    *kind = e->kind == EXC_ASSERT ? "assertion" : "error";
    if (e->where) buf_printf(out, "%s: ", e->where->chars);
    if (e->where) buf_printf(where, " at %s", e->where->chars);
    buf_printf(out, "%s: ", e->kind == EXC_ASSERT ? "assertion failed" : "runtime error");
    value_show_line(out, OBJ_VAL(e->message), false, DESCRIBE_LIMIT);
    return true;
  }
  *kind = "uncaught";
  if (thread == vm->main_thread) buf_printf(out, "main");
  else {
    buf_printf(out, "thread ");
    thread_name(out, thread);
  }
  buf_printf(out, " died: uncaught ");
  value_show_line(out, exc, true, DESCRIBE_LIMIT);
  if (thread->raise_file) buf_printf(out, " at %s:%d", thread->raise_file, thread->raise_line);
  /* its place: main or another thread, the exception's kind, where raised */
  buf_printf(where, " ");
  exception_class(where, exc);
  buf_printf(where, " in %s", thread == vm->main_thread ? "main" : "a thread");
  if (thread->raise_file) buf_printf(where, " at %s:%d", thread->raise_file, thread->raise_line);
  return true;
}

bool explore_describe(VM *vm, SimStatus status, bool fail_on_limit, const char **kind, Buffer *out, Buffer *where) {
  size_t from = where->length;
  bool failure = describe(vm, status, fail_on_limit, kind, out, where);
  /* a place names files by their base names: the class is the same from
   * any directory (each word keeps what follows its last '/') */
  size_t to = from;
  for (size_t i = from; i < where->length;) {
    size_t end = i;
    while (end < where->length && where->data[end] != ' ') end++;
    size_t keep = i;
    for (size_t k = i; k < end; k++)
      if (where->data[k] == '/') keep = k + 1;
    memmove(where->data + to, where->data + keep, end - keep);
    to += end - keep;
    if (end < where->length) where->data[to++] = ' ';
    i = end + (end < where->length);
  }
  buf_truncate(where, to);
  return failure;
}
