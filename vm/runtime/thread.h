/* Simulated threads: heap objects with their own growable value stack and
 * frame stack. The interpreter switches threads by loading another thread's
 * top frame: no C recursion, no native stacks, no copying.
 *
 * Thread ids follow io-sim: main has the empty path, its children are 1, 2,
 * 3 ... and the children of 1 are 1.1, 1.2 ..., so ids do not depend on the
 * schedule. */
#ifndef SIMVM_THREAD_H
#define SIMVM_THREAD_H

#include "buffer.h"
#include "object.h"
#include "random.h"

/* One activation: a closure running at `ip` with its slots starting at `slots`
 * (slot 0 is the callee, or the action for blocks, then the parameters). */
typedef struct {
  ObjClosure *closure;
  uint8_t *ip;
  Value *slots;
  int profile_node;  /* its call path when profiling (vm/profile.h); -1 until it
                        runs (only the profiled loop keeps it up to date) */
} CallFrame;

typedef enum {
  THREAD_RUNNABLE,   /* running, or waiting in the run queue */
  THREAD_BLOCKED,    /* parked: see `blocked_on`              */
  THREAD_DONE        /* finished, killed or failed            */
} ThreadState;

typedef enum {
  BLOCKED_NONE,
  BLOCKED_DELAY,     /* in delay(); its delay timer is set           */
  BLOCKED_TAKE,      /* takeMVar on an empty MVar (wait_object)      */
  BLOCKED_READ,      /* readMVar on an empty MVar                    */
  BLOCKED_PUT,       /* putMVar on a full MVar; wait_value to put    */
  BLOCKED_THROW,     /* throwTo a masked thread (wait_object), until it is delivered */
  BLOCKED_STM        /* a transaction retried: waits for a write to a TVar it read */
} BlockReason;

/* Asynchronous exceptions masking, as in GHC: while masked, exceptions
 * thrown to the thread wait until it unmasks or, for the interruptible
 * state, until it blocks (delay, an MVar wait). */
typedef enum {
  MASK_NONE = 0,            /* "Unmasked"              */
  MASK_INTERRUPTIBLE = 1,   /* "MaskedInterruptible"   */
  MASK_UNINTERRUPTIBLE = 2  /* "MaskedUninterruptible" */
} MaskState;

/* The masking states' names, "Unmasked" ..., by MaskState: what
 * getMaskingState returns and the trace shows (vm/runtime/thread.c). */
extern const char *const mask_names[3];

/* A transaction's undo log entry: the TVar's value before a write. */
typedef struct {
  ObjTVar *tvar;
  Value old;
} UndoEntry;

/* A thread to wake, and the first written TVar it was waiting on. */
typedef struct {
  ObjThread *thread;
  ObjTVar *by;
} Waking;

/* The running transaction's logs, the VM's own: threads are cooperative, so
 * at most one transaction runs at a time (vm/stm.h), and its arrays are
 * reused by the next, in this run and the next, with no malloc once warm. */
typedef struct {
  uint64_t id;             /* numbers the transaction (for read stamps)     */
  UndoEntry *undo;         /* the writes, oldest first                      */
  int undo_count, undo_capacity;
  ObjTVar **reads;         /* the read set, each TVar once                  */
  int read_count, read_capacity;
  ObjTVar **written;       /* scratch: the TVars a commit or timers wrote   */
  int written_capacity;
  Waking *waking;          /* scratch: the threads those writes wake        */
  int waking_capacity;
} StmLog;

/* An exception thrown to a thread and not yet raised in it. */
typedef struct {
  Value exception;
  ObjThread *thrower;      /* blocked in throwTo until this is raised, or NULL */
  ObjThread *from;         /* the thread that threw it (NULL: a timeout)       */
} Pending;

/* What `delay(d) >> say(s)` needs, even when it is killed while it waits:
 * each inline value is 16 bytes of every thread (bench: forkIO 1000000). */
#define THREAD_INLINE_STACK 3   /* values */
#define THREAD_INLINE_FRAMES 2

struct ObjThread {
  /* Fields are grouped by size so the object has no holes (but 2 bytes
   * after rng_mixed), small ones are bytes, and those of the hot paths
   * come first, together: a thread's first run, a kill of it asleep and
   * its release read little beyond the first 64 bytes, the delay timer
   * and the live links, so that they touch few cache lines of it (a
   * million parked threads are a million of these: bench forkIO 1000000,
   * and forkIO 250 is slower per thread than 50 by its cache misses). */
  Obj obj;
  ThreadState state : 8;   /* a byte each */
  BlockReason blocked_on : 8;
  MaskState mask : 8;
  bool interrupted;        /* woken from a wait by an exception: raise it even if masked */
  bool in_transaction;
  bool rng_mixed;          /* false: `rng` is the parent's state at the fork,
                              not yet mixed into this thread's own */
  bool quiet;              /* forkQuiet's, or a quiet thread's child: its
                              events are internal (event_internal) */
  int pending_count;       /* asynchronous exceptions not yet raised, FIFO */
  int frame_count;
  int frame_capacity;
  int stack_capacity;      /* values                                */
  Value *stack;            /* value stack: [stack, sp)              */
  Value *sp;
  CallFrame *frames;
  Pending *pending;        /* pending_one, until a second one is pending   */

  Timer delay_timer;       /* owned: a thread waits on one delay at a time */
  int queue_slot;          /* its run queue entry's index in the ring, while
                              queued: the explorer takes it out in O(1)  */
  ObjThread *live_prev;    /* the VM's list of threads not yet done   */
  ObjThread *live_next;
  int wait_count;          /* TVars in wait_set, 0 when it holds none: outside
                              the union, so it is always true */
  int pending_capacity;
  Pending pending_one[1];  /* so a kill costs no malloc                    */

  /* A new thread's stacks are these, inside the object, so creating one
   * is a single allocation; a stack that outgrows them moves to pooled or
   * malloc'd storage (vm/thread.c). THREAD_INLINE_* cover a thread that
   * runs a plain action such as `delay(d) >> say(s)`. */
  CallFrame inline_frames[THREAD_INLINE_FRAMES];
  Value inline_stack[THREAD_INLINE_STACK];

  ObjThread *parent;       /* io-sim's fork-tree id: the parent's id ... */
  ObjString *label;        /* labelThread, or NULL                  */
  int child_number;        /* ... then this number (main: NULL, 0)   */
  int next_child;          /* number given to the next child - 1    */

  /* What a blocked thread waits on. It waits on one thing at a time, so an
   * MVar's (or throwTo's) fields and a retry's share their storage: each
   * kind means something only while `blocked_on` says it is that kind's
   * wait (read them through it, or thread_wait_object). */
  union {
    struct {               /* BLOCKED_TAKE, _READ, _PUT and _THROW          */
      Obj *wait_object;    /* the MVar (or, for BLOCKED_THROW, the thread) waited on */
      Value wait_value;    /* BLOCKED_PUT: the value to put                */
      ObjThread *wait_prev; /* the MVar's queue of waiting threads (not for throwTo) */
      ObjThread *wait_next;
    };
    struct {               /* BLOCKED_STM; the running transaction's logs are the VM's (StmLog) */
      ObjTVar **wait_set;  /* the read set it waits on: wait_count TVars  */
      ObjTVar *wait_one;   /* (wait_one when it is one TVar: no malloc)   */
      uint64_t block_seq;  /* when it blocked in retry                    */
    };
  };

  ObjThread *raised_by;    /* who threw the exception last raised: NULL when the
                              thread raised it itself (for the report if it dies) */
  Value raised_value;      /* that exception: throwing it again keeps raised_by */
  const char *raise_file;  /* where it was raised: the innermost frame of the
                              script's own code (NULL: none, prelude's only) */
  int raise_line;          /* see raise_file                               */

  int explore_key;         /* its id in schedule exploration (vm/explore.h), -1 until needed */
  uint64_t rng;            /* its stream of random(n) numbers (vm/random.h):
                              read it through thread_rng */
  int profile_index;       /* its row in the profile, when profiling */
  int serial;              /* creation order in this run: its timeline track */
};

/* The thread's random stream (vm/random.h). A child's state is its
 * parent's next number at the fork; a fork only advances the parent's
 * stream, and the number is mixed here, the first time the child draws or
 * forks (most threads never do). */
static inline uint64_t *thread_rng(ObjThread *thread) {
  if (!thread->rng_mixed) {
    thread->rng = splitmix64_mix(thread->rng);
    thread->rng_mixed = true;
  }
  return &thread->rng;
}

/* The MVar, or for throwTo the thread, that `thread` is blocked on; NULL
 * when it waits on nothing of the kind (a delay, a retry, or runnable). */
static inline Obj *thread_wait_object(const ObjThread *thread) {
  switch (thread->blocked_on) {
    case BLOCKED_TAKE:
    case BLOCKED_READ:
    case BLOCKED_PUT:
    case BLOCKED_THROW: return thread->wait_object;
    default: return NULL;
  }
}

/* The object a timer is part of, by its kind: a delay's thread, a
 * timeout's ObjTimeout, a registerDelay's or newTimeout's TVar (a Timer is always a field
 * of its owner, so it needs no pointer back). */
static inline Obj *timer_owner(Timer *timer) {
  switch (timer->kind) {
    case TIMER_DELAY: return (Obj *)((char *)timer - offsetof(ObjThread, delay_timer));
    case TIMER_TIMEOUT: return (Obj *)((char *)timer - offsetof(ObjTimeout, timer));
    case TIMER_TVAR:
    case TIMER_TVAR_STATE: break;
  }
  return (Obj *)((char *)timer - offsetof(ObjTVar, timer));
}

/* Limits that turn runaway recursion into a runtime error, not a crash. */
#define THREAD_MAX_FRAMES  1000000
#define THREAD_MAX_STACK   (16 * 1024 * 1024)   /* values */

/* A new runnable thread whose entry frame will run `action`. The id is the
 * next child id of `parent` (NULL: the main thread). Not yet queued. A
 * child's `action` must be reachable from a root (fork's argument lies on
 * the parent's stack): creating the thread may collect. */
ObjThread *thread_new(VM *vm, ObjThread *parent, Value action);

/* Make room for `needed` more values above sp; false (nothing changed) when
 * that would pass THREAD_MAX_STACK. Moves the stack: frame slot pointers are
 * fixed up, but any Value* the caller holds into the stack is stale. */
bool thread_reserve(VM *vm, ObjThread *thread, int needed);

/* Push a frame for `closure` whose slots start at `slots`; false when the
 * frame limit is reached. Grows the frame array as needed. */
bool thread_push_frame(VM *vm, ObjThread *thread, ObjClosure *closure, Value *slots);

/* Queue an asynchronous exception for the thread; `thrower` (or NULL) is
 * blocked until it is raised. Its `from` is `thrower` (set it when another
 * thread threw it without blocking). */
void thread_add_pending(VM *vm, ObjThread *thread, Value exception, ObjThread *thrower);

/* Remove and return the oldest pending exception. */
Pending thread_take_pending(ObjThread *thread);

/* A free list of arrays of one size, for thread stacks (vm/thread.c). */
typedef struct {
  void *items;
  int count;
} StackPool;

/* Free the pooled stack arrays (VM shutdown). */
void thread_pools_free(VM *vm);

/* Forget the TVars the thread waited on in retry (vm/stm.c). */
void thread_drop_wait_set(ObjThread *thread);

/* Release the stacks of a finished thread (the object lives on as an id). */
void thread_release(VM *vm, ObjThread *thread);

/* Free the thread's arrays; called by the GC sweep. */
void thread_free(VM *vm, ObjThread *thread);

/* Release every live thread at a run's end, when nothing is told: what
 * thread_release does but the timers (the caller empties the heap), the
 * events (the sinks are stopped) and the unlinking one by one. */
void thread_release_all(VM *vm);

/* The script position of a frame, "what the user would call it": false for
 * the VM's own frames; a -O0 continuation frame reports the frame it holds. */
bool thread_frame_location(VM *vm, const CallFrame *frame, const ObjProto **proto, int *line);

/* `thread` raises `exc`, thrown by `from` (NULL: by itself): remember who
 * and where, for the report if it dies of it. Raising again the exception
 * it last raised itself (a handler passing it on) changes nothing. */
void thread_note_raise(VM *vm, ObjThread *thread, Value exc, ObjThread *from);

/* Append the id: "main", "1", "1.2". */
void thread_id(Buffer *out, const ObjThread *thread);

/* Append the id followed by the label, if any: "1.2 (client)"; the label
 * escaped as a say is in the trace (newline \n, control bytes \xHH), so it
 * stays on its line. */
void thread_name(Buffer *out, const ObjThread *thread);

#endif
