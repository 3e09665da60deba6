/* The running half of simvm's public interface: configuration, values,
 * running a loaded program and reading its results. api/simvm.h includes
 * it and adds making a VM and loading programs; embedders include that:
 *
 *   VM *vm = vm_new(&config);
 *   if (vm_load_file(vm, "prog.sim") == SIM_OK) status = vm_run(vm);
 *   vm_free(vm);
 *
 * All output goes through the callbacks in VMConfig, so tests and embedders
 * capture it without touching stdout. */
#ifndef SIMVM_VM_H
#define SIMVM_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "value.h"

/* Outcome of loading or running; the CLI maps each to a distinct exit status. */
typedef enum {
  SIM_OK = 0,             /* main finished                                  */
  SIM_FAILED = 1,         /* an uncaught exception or runtime error in main */
  SIM_USAGE = 2,          /* bad command line, or a file that cannot be read */
  SIM_COMPILE_ERROR = 3,  /* the script does not compile                    */
  SIM_DEADLOCK = 4,       /* main blocked with nothing left that could wake it */
  SIM_LIMIT = 5,          /* a --max-... limit reached                      */
  SIM_INTERRUPTED = 130   /* stopped by vm_stop (SIGINT, SIGTERM)          */
} SimStatus;

/* Why vm_stop stops a run. */
typedef enum {
  SIM_STOP_INTERRUPT = 1, /* the user interrupted it (SIGINT)                */
  SIM_STOP_TERMINATE,     /* it was asked to end (SIGTERM)                   */
  SIM_STOP_OUTPUT         /* an output could not be written (already reported) */
} SimStop;

/* Receives `len` bytes of text (not NUL-terminated); `user` is VMConfig.user. */
typedef void (*WriteFn)(void *user, const char *text, size_t len);

typedef struct {
  WriteFn write_say;     /* say output: whole lines ending in "\n", in blocks
                            of about say_block bytes (at the latest when the
                            run ends, and before any trace or error output);
                            NULL: discard                                   */
  size_t say_block;      /* bytes of say output gathered before write_say is
                            called; default 64 KiB; 0: every line at once   */
  WriteFn write_trace;   /* trace lines when `trace` is set                 */
  WriteFn write_error;   /* diagnostics and runtime errors                  */
  WriteFn write_trace_json; /* each trace event as a line of JSON (--trace-json); NULL: none */
  bool timeline;         /* record a timeline for vm_write_timeline (--timeline) */
  void *user;
  bool trace;            /* emit the full event trace (say events included) */
  bool trace_all;        /* ... prelude internals too (--trace=all); by default the
                            text trace hides those events                    */
  uint64_t max_steps;    /* instructions; 0: no limit                       */
  uint64_t max_work;     /* instructions plus the work done in C inside them
                            (roughly bytes copied, hashed or shown, list cells
                            and record fields visited); 0: no limit          */
  uint64_t max_trace_size; /* bytes of each trace output (text, JSON lines,
                            timeline); 0: no limit; default 1 GiB          */
  int64_t max_time;      /* simulated nanoseconds; < 0: no limit            */
  size_t max_heap;       /* bytes of live heap (objects and thread stacks); 0: no limit */
  int max_threads;       /* threads alive at once, main included; 0: no limit */
  bool fail_on_uncaught; /* a thread other than main dying of an uncaught
                            exception (but ThreadKilled or AsyncCancelled)
                            fails the run at once: SIM_FAILED (--fail-on uncaught).
                            A failed assertion always does.                 */
  bool strict_shutdown;  /* main finishing while other threads live is a failure
                            (io-sim's runSimStrictShutdown): SIM_FAILED, reported */
  bool profile;          /* count instructions by opcode, call path and thread (vm/profile.h) */
  bool no_prelude;       /* do not compile the standard library: for loading a
                            bytecode file, which carries its own copy, or a
                            script that uses only builtins (simc --no-prelude) */
  bool sandbox;          /* imports only under the directory of the file
                            loaded first, by relative paths (--sandbox)     */
  bool reify_actions;    /* compile every action as a value that a bind then
                            runs, as io-sim's free monad does (--actions=reified);
                            false (default): statement-level forms compiled inline,
                            primitives as direct opcodes (--actions=direct).
                            Recorded in bytecode files; -O0 sets it           */
  bool heap_continuations; /* every bind copies the rest of its block to a heap
                            continuation, as io-sim's >>= does
                            (--continuations=heap); false (default): the frame
                            stays on the thread's stack, one-shot
                            (--continuations=stack). Works with code compiled
                            either way; -O0 sets it                          */
  uint64_t seed;         /* the run's seed: main's stream of random numbers
                            (vm/random.h); simvm --seed N                  */
  const char *program;   /* prefix of messages not about a script line ("simvm") */
  const char **argv;     /* the script's arguments, returned by args()      */
  int argc;
} VMConfig;

typedef struct VM VM;

/* Defaults: no callbacks, no trace, no limits but a trace size of 1 GiB,
 * direct actions and stack continuations, no arguments. */
void vm_config_init(VMConfig *config);

/* Run `main` from simulated time 0 until main ends, fails, deadlocks or hits
 * a limit. Runtime errors go to write_error with thread, time and a trace.
 * May be called again: each run is a fresh simulation of the same compiled
 * program (threads, timers, top-level values and statistics start anew). */
SimStatus vm_run(VM *vm);

/* Schedule exploration (vm/explore.h; docs/EXPLORE.md): an explorer,
 * made by api/explore.h's setups, decides which thread runs at each
 * scheduling point of a run. */
typedef enum {
  EXPLORE_DEFAULT,     /* io-sim's schedule, decisions counted           */
  EXPLORE_PCT,
  EXPLORE_RANDOM,
  EXPLORE_REPLAY,      /* the deviations given, the default elsewhere     */
  EXPLORE_DFS,         /* depth-first, every choice within the bound      */
  EXPLORE_EXHAUSTIVE,  /* depth-first, pruned with sleep sets             */
  EXPLORE_DELAY        /* delay bounding: schedules of 0, 1, 2 ... deviations
                          replayed, early deviations first (api/explore.c) */
} ExploreStrategy;

typedef struct Explorer Explorer;

/* Run the program once with the explorer in charge (vm_run). */
SimStatus explore_run(Explorer *ex);

void explore_free(Explorer *ex);

/* Stop the running simulation at the next instruction boundary. Safe to
 * call from a signal handler (it only sets two fields), or from the
 * thread running the VM (not from another thread). vm_run then returns:
 * for SIM_STOP_INTERRUPT and SIM_STOP_TERMINATE, SIM_INTERRUPTED, after
 * reporting the time, the instructions run and where each thread is; for
 * SIM_STOP_OUTPUT, SIM_USAGE. Every later vm_run stops at once too. */
void vm_stop(VM *vm, SimStop why);

/* After vm_run: main's result (unit if it did not finish). */
Value vm_result(VM *vm);

/* After vm_run: the simulated time reached, in nanoseconds. */
int64_t vm_now(VM *vm);

/* After vm_run: instructions executed. */
uint64_t vm_steps(VM *vm);

/* After vm_run with config.profile: write the profile report to `out`:
 * format 't' text, 'j' JSON (docs/PROFILE.md), 'f' folded stacks. The
 * run's wall time is given in seconds. False on a write error. */
bool vm_write_profile(VM *vm, FILE *out, char format, double wall_seconds);

/* After vm_run with config.timeline: write the Chrome trace-event timeline
 * ({"traceEvents": [...]}, simulated microseconds). False on a write error. */
bool vm_write_timeline(VM *vm, FILE *out);

/* After vm_run: write the value the run last handed to statsOutput (the
 * stats module's report, docs/LIBRARY.md) as one line of JSON, or `null`
 * when it handed none (--stats-json). False on a write error. */
bool vm_write_stats_json(VM *vm, FILE *out);

/* After vm_run: trace events of the run (counted even when not printed). */
uint64_t vm_events(VM *vm);

/* Render a value as show() does (strings unquoted at top level) into a
 * malloc'd string the caller frees. */
char *vm_show(VM *vm, Value value);

#endif
