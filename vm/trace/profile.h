/* The built-in profiler (simvm --profile).
 *
 * Always-on counters live in VMStats (cheap increments on scheduler, GC and
 * bind paths). With profiling on, the run uses a second build of the
 * interpreter loop (vm/interp_profiled.c) that also counts every
 * instruction by opcode and by call path: each frame knows its node in a
 * tree of call paths rooted at its thread, so per-function self and
 * inclusive counts, per-thread counts and folded stacks are exact.
 * Every count is deterministic; only the wall times vary between runs. */
#ifndef SIMVM_PROFILE_H
#define SIMVM_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opcodes.h"

typedef struct VM VM;
typedef struct ObjThread ObjThread;

/* A run's counters: all kept for every run, profiled or not, but the three
 * bind counts, which only the profile reports and only the profiled loop
 * keeps (vm/interp.c's PROFILE_COUNT). */
typedef struct {
  uint64_t binds;               /* BIND, TAIL_BIND and CALL_BIND executed            */
  uint64_t stack_continuations; /* binds whose continuation is the frame left on the stack */
  uint64_t heap_continuations;  /* binds that copied their continuation to the heap (-O0) */
  uint64_t switches;            /* a different thread taken from the run queue       */
  uint64_t forks;
  uint64_t timers_set;
  uint64_t timers_fired;
  uint64_t timers_cancelled;
  uint64_t events;              /* trace events, counted even when not printed       */
  int run_queue_peak;           /* entries                                           */
  uint64_t allocations;         /* GC objects                                        */
  uint64_t bytes_allocated;     /* bytes, objects and stack growth                   */
  uint64_t gc_cycles;
  double gc_seconds;            /* wall time in the collector                        */
  uint64_t peak_heap;           /* bytes                                             */
} VMStats;

/* One call path: a function (or block) under its parent path, in one thread. */
typedef struct {
  const void *proto;            /* ObjProto; NULL for a thread's root            */
  int parent;                   /* node index, -1 for a root                     */
  int thread;                   /* index in Profile.threads                      */
  int depth;
  uint64_t self;                /* instructions executed with this path on top   */
  uint64_t calls;               /* frames entered on this path                   */
} ProfNode;

typedef struct {
  char *id;                     /* "1.2"                                         */
  char *label;                  /* labelThread, or NULL                          */
  int64_t started, ended;       /* simulated ns; ended < 0 while alive           */
  int64_t blocked_ns;           /* simulated time spent blocked                  */
  int64_t blocked_since;
  uint64_t blocks;              /* times it blocked                              */
  int root;                     /* its root node                                 */
} ProfThread;

typedef struct Profile {
  uint64_t op_counts[OP_COUNT];
  ProfNode *nodes;
  int node_count, node_capacity;
  int *index;                   /* open-addressing map (parent, proto) -> node + 1 */
  int index_capacity;
  ProfThread *threads;
  int thread_count, thread_capacity;
} Profile;

/* Call paths deeper than this share the node at this depth. */
#define PROFILE_MAX_DEPTH 128

Profile *profile_new(void);
void profile_free(Profile *profile);

/* The node for `proto` called under `parent` (created on first use). */
int profile_child(Profile *profile, int parent, const void *proto);

/* A thread was created / ended / labelled / blocked / woke, at vm->now. */
void profile_thread_start(VM *vm, ObjThread *thread);
void profile_thread_end(VM *vm, ObjThread *thread);
void profile_thread_label(VM *vm, ObjThread *thread);
void profile_thread_block(VM *vm, ObjThread *thread);
void profile_thread_wake(VM *vm, ObjThread *thread);

/* Write the report: text for people, JSON (docs/PROFILE.md has the schema),
 * or folded stacks ("thread;fn;fn count" lines weighted by instructions).
 * wall_seconds is the run's wall time. Return false on a write error. */
bool profile_write_text(VM *vm, FILE *out, double wall_seconds);
bool profile_write_json(VM *vm, FILE *out, double wall_seconds);
bool profile_write_folded(VM *vm, FILE *out);

#endif
