/* The VM's internal state, shared by the files of vm/ and the layers above
 * it (compiler/, api/). Embedders use api/simvm.h only.
 *
 * An interface header (tools/layers.sh): every folder of vm/ may include
 * it, vm/value/ and vm/trace/ below this one too, since every function
 * takes the VM and allocating counts in it (gc_alloc). So it includes only
 * what its struct holds by value and its inline functions use, none of it
 * above vm/runtime/ but vm/vm.h, the public header.
 *
 * How vm/ depends on itself, from the bottom (docs/INTERNALS.md draws it):
 * vm/value/: buffer, heap, table, timer, value, chunk, opcodes, object,
 * show, order, import "map"'s tree (map.c); vm/trace/: the events' type,
 * their sinks, profile; vm/runtime/: thread, the collector (memory.c,
 * behind value/memory.h), stm, mvar, events.c (dispatch and details),
 * state.c (this header's services: reports, runtime errors, limits,
 * globals), sched; vm/explore/; vm/interp/: the primitives (prim*.c),
 * unwinding, value operations, the builtin table and opcode_effects.c,
 * which reads it, debug (the disassembler), interp; vm.c (VM lifetime,
 * running). The files that call each other, and why:
 *   memory.c <-> thread.c, stm.c   the collector frees what objects own (memory.h)
 *   sched.c  <-> stm.c, mvar.c     blocking: stm and mvar park and wake
 *                                  threads through the scheduler, which
 *                                  cancels their waits on kill or timeout
 *                                  and describes them in deadlock reports
 *   events.c <-> sink_json.c, sink_text.c, sink_timeline.c
 *                                  the registry: events.c lists each sink's
 *                                  table, the sinks render with its helpers
 *   events.c <-> thread.c, stm.c   they emit events, and events.c renders
 *                                  their details with their helpers (thread
 *                                  names, TVar lists): so events.c is in
 *                                  vm/runtime/ with them, not in vm/trace/
 *   builtins.c <-> show.c          names and rendering (show.h)
 *   sched.c  <-> explore.c         under exploration the scheduler asks the
 *                                  explorer which thread runs (explore_pick,
 *                                  one of the hooks of explorer.h, which is
 *                                  all of the explorer the layers below
 *                                  vm/explore/ see) and reports accesses; the
 *                                  explorer puts a
 *                                  preempted thread back at the queue's front
 *                                  (sched_enqueue when the ring must grow)
 *                                  and names a deadlock outcome from the
 *                                  scheduler's report (explore.h); the timers
 *                                  due at one instant fire in the order it
 *                                  chooses (explore_order_timers)
 *   explore.c <-> vm.c             the explorer runs the VM (vm_run); every
 *                                  thread the run queue takes in, vm.c's
 *                                  first one too, is told to it
 *                                  (explore_queued, for pct's heap)
 *   state.c <-> value.c            == charges its work as it goes and stops
 *                                  with the run (vm_work_halts: a value
 *                                  sharing its parts can be 2^30 pairs)
 * tools/layers.sh --cycles lists them from the objects' symbols. */
#ifndef SIMVM_STATE_H
#define SIMVM_STATE_H

#include <signal.h>
#include <stdatomic.h>

/* Only what the struct holds by value and its inline functions use (the
 * events, the builtin table, show and the rest are included by the files
 * that use them), so that including the VM's state brings in no layer
 * above vm/runtime/. */
#include "buffer.h"
#include "heap.h"
#include "memory.h"
#include "profile.h"
#include "table.h"
#include "thread.h"
#include "timer.h"
#include "vm.h"

typedef struct EventSink EventSink; /* vm/trace/events.h */

#define VM_MAX_SINKS 8

/* FIFO ring buffer of run entries. An entry is a thread to resume, or (an
 * ObjTimeout, told apart by its type) the interrupt of a fired timeout for
 * the timeout's thread, queued behind the threads woken at the same
 * instant as io-sim forks a thread to throw it. One pointer an entry: a
 * million runnable threads are a million entries. */
typedef struct {
  Obj **items;
  int head;
  int count;
  int capacity;       /* a power of two */
} RunQueue;

/* The prelude's file name, as its prototypes carry it. */
#define PRELUDE_FILE "stdlib/prelude.sim"

/* Whether `file` is the standard library's: the prelude or one of its
 * modules (stdlib/NAME.sim, embedded). Their code is the library's, not
 * the script's (ObjProto.prelude): its events are internal (hidden from
 * --trace=user) and errors are placed at the script's line that called it. */
bool vm_is_library_file(const char *file);

/* A file name the VM keeps for its lifetime: prototypes, globals and
 * exceptions point at it (vm_file_name). */
typedef struct FileName {
  struct FileName *next;
  char name[];
} FileName;

/* What the compiler knows about a global slot. */
typedef struct {
  ObjString *name;
  int arity;               /* parameters of a known function, or -1     */
  const Builtin *builtin;  /* set for builtins: they cannot be redefined */
  const char *file;        /* where it was defined (NULL: builtin)       */
  int line;
} GlobalInfo;

/* The names forkAsync's records and label use, and waitAsync's (the
 * prelude's waitSTM): vm->async_names. */
enum { ASYNC_NAME_THREAD, ASYNC_NAME_RESULT, ASYNC_NAME_VAR, ASYNC_NAME_OK, ASYNC_NAME_VALUE, ASYNC_NAME_EXCEPTION,
       ASYNC_NAME_WAIT_STM, ASYNC_NAMES };

struct VM {
  VMConfig config;

  /* heap */
  Heap heap;               /* both generations (vm/heap.h, vm/memory.h) */
  size_t old_bytes;        /* of the old generation: the loaded program */
  size_t bytes_allocated;
  size_t next_gc;
  size_t alloc_limit;      /* the least of next_gc and max_heap (0: stress) */
  int gc_paused;           /* > 0 while the compiler builds protos      */
  bool gc_stress;
  Table strings;           /* the intern set (weak)                     */
  Buffer out;              /* say output not yet written (vm_flush_output) */
  Buffer stats_json;       /* the value statsOutput last handed over this run,
                              as JSON (vm_write_stats_json); empty: none     */
  Obj **young_owners;      /* young objects owning more than their slot:  */
  int young_owner_count;   /* interned strings, TVars, prototypes; what   */
  int young_owner_capacity;/* gc_free_young must visit                    */
  Value temp_roots[32];
  int temp_root_count;

  /* program */
  ValueArray globals;      /* UNDEFINED_VAL until defined               */
  GlobalInfo *global_info; /* parallel to globals                        */
  int global_capacity;
  Table global_index;      /* name -> INT index, as the compiler sees it */
  FileName *files;         /* the names of every file code came from      */
  ValueArray module_inits; /* each module's top-level action, load order */
  struct Loader *loader;   /* the api layer's bookkeeping (api/api.h): the
                              modules' names, sources, sandbox; vm/ never
                              looks inside                                */
  bool stack_continuations; /* binds keep their frame on the thread's stack
                              (default) or copy it to a heap continuation
                              (config.heap_continuations): read by BIND    */
  bool direct_actions;     /* the compiler inlines statement-level forms and
                              primitives (default) or builds every action as
                              a value (config.reify_actions)               */
  ObjClosure *entry_closure;    /* [BIND, THREAD_EXIT]: every thread's base frame */
  ObjClosure *timeout_closure;  /* the body of timeout(d, act)                    */
  ObjClosure *catch_closure;    /* the body of catch(act, handler)               */
  ObjClosure *mask_closure;     /* the body of withMaskingState(state, act)      */
  ObjClosure *atomically_closure; /* the body of atomically(stm)                 */
  ObjClosure *prelude_catch;    /* the same three for calls made by the prelude's */
  ObjClosure *prelude_mask;     /* code: their events are internal (their protos  */
  ObjClosure *prelude_atomically; /* are marked `prelude`: their events are internal) */
  ObjClosure *or_else_closure;  /* the body of orElse(a, b)                      */
  ObjClosure *catch_stm_closure; /* the body of catchSTM(act, handler)          */
  ObjClosure *async_closure;    /* the body of forkAsync(outer, act) ...          */
  ObjClosure *prelude_async;    /* ... and the same for the prelude's async       */
  ObjClosure *async_thread_closure; /* an async's thread: asyncThread(outer, act, var) */
  ObjClosure *replicate_closure; /* replicateMOnto's loop (vm/prim_loop.c) */
  ObjClosure *traverse_closure;  /* traverse_'s loop (vm/prim_loop.c) */
  int wait_stm_global;     /* the prelude's waitSTM, found at waitAsync's first slow way (-1: not yet) */
  ObjString *async_names[ASYNC_NAMES]; /* the names forkAsync gives, made once    */
  ObjClosure *resume_closure;   /* heap continuations: [BIND, RESUME] stands for a heap continuation */
  ObjException *retry_signal;   /* raised by retry(), caught by orElse/atomically */
  ObjException *thread_killed;  /* the ThreadKilled exception value               */
  ObjString *mask_strings[3];   /* getMaskingState's results, made once (mask_names) */
  ObjString *timeout_states[3]; /* a newTimeout TVar's values, by TimerState (timeout_state_names) */
  int modules_run;         /* module_inits whose top level has run (the load) */
  uint64_t load_steps;     /* instructions the load took                */
  Value main_action;       /* what a run's main thread runs; UNDEFINED until the first run */
  bool keep_young;         /* loads are not promoted, so that a program can be
                              taken back (loader_rollback, for the fuzzer) */

  /* scheduler */
  int64_t now;             /* simulated nanoseconds                     */
  int64_t time_limit;      /* config.max_time, INT64_MAX for none: set per run */
  uint64_t timer_seq;
  uint64_t transaction_counter; /* numbers transactions and commits          */
  uint64_t block_counter;       /* orders threads blocked in retry           */
  StmLog stm;              /* the running transaction's logs (vm/stm.h) */
  TimerHeap timers;
  RunQueue run_queue;
  ObjThread *live;         /* threads not yet done                      */
  StackPool stack_pool;    /* value and frame arrays of finished threads */
  StackPool frame_pool;
  ObjThread *main_thread;
  ObjThread *current;
  Timer **due;             /* scratch: the timers of one instant        */
  struct Explorer *explore; /* schedule exploration (vm/explore.h), or NULL:
                               io-sim's schedule                           */
  int due_capacity;

  /* stopping: before every instruction the loop compares the instructions
   * run with stop_at, the least of --max-steps and what --max-work leaves,
   * or 0 once vm_stop or a trace cap asks the run to end (vm_update_stop) */
  _Atomic uint64_t stop_at;
  volatile sig_atomic_t stop; /* a SimStop or STOP_TRACE_SIZE; 0: none  */
  uint64_t work;           /* work done in C this run, beyond instructions */
  uint64_t trace_bytes[3]; /* written to the text trace, JSON lines, timeline */
  int trace_capped;        /* which of them reached max_trace_size        */

  /* results and accounting */
  uint64_t steps;          /* instructions executed                     */
  VMStats stats;           /* counters of the current run               */
  Profile *profile;        /* per-instruction figures, with config.profile */
  struct Timeline *timeline; /* with config.timeline (vm/sink_timeline.c) */
  const EventSink *sinks[VM_MAX_SINKS]; /* the run's active sinks (vm/events.h) */
  void *sink_states[VM_MAX_SINKS];
  int sink_count;
  int thread_serial;       /* threads created this run: their timeline tracks */
  Value result;
  SimStatus halt_status;   /* how the run ends when a primitive stops it (vm/prim.h) */
  ObjThread *failed_thread; /* the thread whose death failed the run (main's, an
                               assertion's, --fail-on uncaught), or NULL     */
  Value failure;           /* the exception it died of                    */
  char error[512];         /* message of the runtime error being raised */
  bool has_error;
  bool heap_exceeded;      /* set by the allocator past max_heap; the loop stops */
  bool halted;             /* a loop in C gave up as the run must stop (vm_work_halts) */
  size_t halted_bytes;     /* what that loop held outside the heap, for the report */
  int live_threads;        /* threads not yet done                      */
};

/* A VM with the builtins and the VM's own prototypes, and no program: api/
 * makes one (vm_new) with the prelude loaded. Never NULL. */
VM *vm_create(const VMConfig *config);
/* Free the VM and everything it owns but config.user and `loader` (api/
 * frees that first). */
void vm_destroy(VM *vm);

/* Loaded code as this VM runs it: under heap continuations every CALL_BIND
 * of `proto` and the prototypes in its constants becomes CALL_BIND_HEAP,
 * so that CALL_BIND never asks which continuations the run takes (nothing
 * to do with stack continuations). Every module's code comes through here
 * (api_add_module); bytecode_write writes it as compiled. */
void vm_place_continuations(VM *vm, ObjProto *proto);
/* Superinstructions in loaded code: every GET_LOCAL of `proto` and the
 * prototypes in its constants that a NATIVE of isEmpty, head, tail or
 * cons, or an ADDI, SUBI, LTI or LEI follows becomes LOCAL_IS_EMPTY ...
 * LOCAL_LEI, which runs the pair at once when it can (vm/interp.c). The
 * second instruction stays where it was, so a jump to it, or the profiled
 * loop (which runs them as GET_LOCAL), runs it on its own. */
void vm_place_superinstructions(ObjProto *proto);
/* `proto`'s code as it was compiled (CALL_BIND for CALL_BIND_HEAP,
 * GET_LOCAL for the superinstructions) into `code`, chunk.count bytes. */
void vm_code_as_compiled(const ObjProto *proto, uint8_t *code);

/* The VM's own copy of the file name `name`, made once and kept for the
 * VM's lifetime: what prototypes, globals and exceptions point at. */
const char *vm_file_name(VM *vm, const char *name);

/* Declare global `name` (a new slot, shadowing any earlier global of that
 * name for code compiled afterwards). Returns its index. */
int vm_declare_global(VM *vm, ObjString *name, int arity, const char *file, int line);

/* The index of the global `name` currently visible, or -1. */
int vm_find_global(VM *vm, ObjString *name);

/* Forget the last run (its threads, timers and young heap), if any. */
void vm_discard_run(VM *vm);

/* Before loading more code into a VM that may have run: forget the run (new
 * code must not be allocated among its objects) and the boot action (the
 * new code may define main). */
void vm_begin_load(VM *vm);
/* The limits a run has when none is given (0 in its config), so that a fork
 * bomb or a runaway heap stops with a report before the machine swaps:
 * 8 GiB of live heap, 4,000,000 threads alive (docs/CLI.md). */
#define VM_DEFAULT_MAX_HEAP ((size_t)8 << 30)
#define VM_DEFAULT_MAX_THREADS 4000000
static inline size_t vm_max_heap(const VM *vm) {
  return vm->config.max_heap ? vm->config.max_heap : VM_DEFAULT_MAX_HEAP;
}
static inline int vm_max_threads(const VM *vm) {
  return vm->config.max_threads ? vm->config.max_threads : VM_DEFAULT_MAX_THREADS;
}

/* An internal reason to stop, beside the SimStop values. */
#define STOP_TRACE_SIZE 16

/* Recompute stop_at from the limits and the work done. */
void vm_update_stop(VM *vm);

/* Charge `units` of work done in C inside one instruction (roughly bytes
 * copied, hashed or shown, list cells or record fields visited) to the
 * --max-work budget: the run stops before the next instruction once the
 * instructions run plus the work charged pass it. */
static inline void vm_work(VM *vm, uint64_t units) {
  vm->work += units;
  if (vm->config.max_work) vm_update_stop(vm);
}

/* For a loop in C that may run long inside one instruction (== or show of
 * a value sharing its parts, whose tree can be 2^30 nodes): charge `units`
 * more of its work, every few thousand, and ask whether the run must stop
 * now: a signal or another vm_stop, the heap limit passed, or --max-work
 * (instructions plus work) passed. True sets vm->halted: the loop gives up,
 * and its native returns failure (or its instruction checks halted), and
 * the interpreter then stops the run with the limit's report instead of
 * raising an error. */
static inline bool vm_must_halt(VM *vm, uint64_t pending) {
  if (vm->stop || vm->heap_exceeded ||
      (vm->config.max_work && vm->work + vm->steps + pending > vm->config.max_work)) {
    vm->halted = true;
    return true;
  }
  return false;
}
static inline bool vm_work_halts(VM *vm, uint64_t units) {
  vm_work(vm, units);
  return vm_must_halt(vm, 0);
}
/* vm_must_halt(vm, pending): the same question for a loop that charges its
 * work when it ends, with `pending` units done and not charged yet. */
/* How much work a loop does between vm_work_halts. */
#define VM_WORK_CHUNK 4096


/* Count `bytes` about to be written to trace output `which` (0 text, 1 JSON
 * lines, 2 timeline): false, and the run stops, when that would pass
 * --max-trace-size (the bytes are then not to be written). */
bool vm_trace_room(VM *vm, int which, size_t bytes);

/* Report a formatted message on write_error. */
void vm_report(VM *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record a runtime error message (printf-style) for the interpreter to
 * raise: natives and primitives call it, then return their failure. */
void rt_error(VM *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write `text` on write_error, after the say output buffered before it. */
void vm_write_error(VM *vm, const char *text, size_t length);

/* Write a line of trace output `which` (0 text on write_trace, 1 JSON lines
 * on write_trace_json), after the say output buffered before it, if
 * vm_trace_room allows. */
void vm_write_trace(VM *vm, int which, const char *text, size_t length);

/* Say output is gathered in vm->out and written on write_say in blocks of
 * whole lines: once config.say_block bytes are waiting, before any trace or
 * error output (so the streams interleave as the events happened), and
 * when a run ends. */
void vm_flush_output(VM *vm);

/* The run's peak heap, stats.peak_heap, is kept up to date lazily: the
 * heap only grows between the moments it shrinks (a sweep, a reset, stacks
 * given back), so the peak is noted just before each of them, and read
 * through vm_peak_heap; an allocation need not compare. */
static inline void gc_note_peak(VM *vm) {
  if (vm->bytes_allocated > vm->stats.peak_heap) vm->stats.peak_heap = vm->bytes_allocated;
}
/* The most bytes in use at any time of this run so far. */
static inline uint64_t vm_peak_heap(VM *vm) {
  gc_note_peak(vm);
  return vm->stats.peak_heap;
}

/* See vm/memory.h (both count in the VM, so they are defined here). */
static inline void gc_account(VM *vm, ptrdiff_t delta) {
  if (delta < 0) gc_note_peak(vm); /* before the heap shrinks */
  vm->bytes_allocated += (size_t)delta;
  if (delta > 0) vm->stats.bytes_allocated += (uint64_t)delta;
}

static inline __attribute__((always_inline)) Obj *gc_alloc(VM *vm, size_t size, ObjType type) {
  if (__builtin_expect(vm->bytes_allocated + size > vm->alloc_limit, 0)) gc_make_room(vm, size);
  vm->bytes_allocated += size;
  vm->stats.allocations++;
  vm->stats.bytes_allocated += size; /* the peak: gc_note_peak */
  Obj *obj = heap_alloc(&vm->heap, size);
  obj->type = type;
  obj->marked = false;
  if (GC_OWNER_TYPES >> type & 1) gc_note_owner(vm, obj);
  return obj;
}

/* Make room for `bytes` of objects that gc_alloc_reserved will allocate
 * next, collecting now if need be (so whatever the caller holds must be
 * rooted here, and only here): those objects are then made with no
 * collection between them, and need no roots until the next gc_alloc or
 * gc_reserve. For code that builds a structure whose parts hold each other
 * (a tree's path of new nodes). */
static inline void gc_reserve(VM *vm, size_t bytes) {
  if (__builtin_expect(vm->bytes_allocated + bytes > vm->alloc_limit, 0)) gc_make_room(vm, bytes);
}

/* gc_alloc without collecting: after gc_reserve of at least `size` more. */
static inline __attribute__((always_inline)) Obj *gc_alloc_reserved(VM *vm, size_t size, ObjType type) {
  vm->bytes_allocated += size;
  vm->stats.allocations++;
  vm->stats.bytes_allocated += size;
  Obj *obj = heap_alloc(&vm->heap, size);
  obj->type = type;
  obj->marked = false;
  return obj;
}

/* A list cell: obj_cons, inline for the interpreter's cons (a list loop
 * makes a cell per element). */
static inline ObjCons *cons_new(VM *vm, Value head, Value tail) {
  ObjCons *cons = (ObjCons *)gc_alloc(vm, sizeof(ObjCons), OBJ_CONS);
  cons->head = head;
  cons->tail = IS_NIL(tail) ? NULL : AS_CONS(tail);
  return cons;
}

#endif
