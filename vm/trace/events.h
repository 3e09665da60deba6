/* Typed events: one table of kinds (vm/events.def) and one entry point,
 * vm_event(), feeding every sink of the run.
 *
 * The VM reports what happens as a typed Event; nothing is formatted where
 * it happens. vm_event() counts it and, only when some sink is active, hands
 * it to each: the text trace (--trace), JSON lines (--trace-json), the
 * timeline (--timeline), the profiler (--profile) and any other. A sink is
 * one file, vm/sink_NAME.c, defining `const EventSink sink_NAME`; the build
 * lists every such file in the registry (build/gen/sinks.h), so adding a
 * sink touches nothing else. Its start() decides from the configuration
 * whether it runs; it writes through the host's callbacks (VMConfig,
 * vm_write_trace), and renders events with event_name() and event_detail().
 * (A sink with an output of its own also needs that output: a VMConfig
 * callback, its simvm option, and its name in the trace-size report.) */
#ifndef SIMVM_EVENTS_H
#define SIMVM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buffer.h"
#include "object.h"

typedef enum {
#define EVENT(kind, name, class, separator, fields) EV_##kind,
#include "events.def"
#undef EVENT
  EV_COUNT
} EventKind;

/* The MVar operation of an EV_MVAR event: one that did not block (a
 * blocked one is EV_MVAR_BLOCKED, its hand-off a wake). */
typedef enum { MVAR_OP_TAKE, MVAR_OP_READ, MVAR_OP_PUT, MVAR_OP_TRY_TAKE, MVAR_OP_TRY_READ, MVAR_OP_TRY_PUT } MVarOp;

/* What a thread's timeline track shows from a THREAD_STATE event on. */
typedef enum { TRACK_RUNNABLE, TRACK_DELAYED, TRACK_BLOCKED, TRACK_DONE } TrackState;

#define TRACE_SHOW_LIMIT 4096 /* bytes of a value in a trace event */

/* One event: its kind, whose it is, and the fields its kind uses (see
 * vm/events.def); the others are zero. Values and objects are the run's
 * own, valid while the sinks see the event. */
typedef struct {
  EventKind kind;
  ObjThread *thread;    /* whose event; NULL: the run's own (END)          */
  bool internal;        /* the prelude's internals: --trace=user hides it  */
  int mode;
  int count;
  int64_t ns;           /* nanoseconds                                     */
  Value value;
  Value datum;          /* MVAR, READ_TVAR_IO: the value put, got or read */
  ObjThread *other;
  ObjTVar **tvars;
  const char *text;
  size_t length;        /* bytes of text                                   */
} Event;

/* A sink of events. start() is called as each run starts: it returns the
 * sink's state for the run, or NULL when it has nothing to do in it (its
 * output was not asked for). event() sees every event of the run in order;
 * stop() is called when the run is discarded (the next run starts, or the
 * VM goes), with the state start() gave. */
typedef struct EventSink {
  const char *name;
  void *(*start)(VM *vm);
  void (*event)(VM *vm, void *state, const Event *event);
  void (*stop)(VM *vm, void *state);
} EventSink;

/* Whether events of this kind are traced (counted, and shown by the trace
 * sinks), rather than a thread's state changes. */
extern const bool event_traced[EV_COUNT];

/* Hand `event` to every active sink (vm_event's slow path). */
void events_dispatch(VM *vm, const Event *event);

/* Count and report an event. Free when no sink is active, but for the count:
 * the event is only built for the sinks. The fields must be free of side
 * effects (the kind is read apart from them, for the count). */
/* Whether --trace (the user's trace) leaves the event out: the prelude's
 * or a module's code caused it, or a quiet thread (forkQuiet) did, or it
 * forks or labels one. A net event is the model's story whichever thread
 * tells it. */
bool event_internal(const Event *e);

#define vm_event(vm, ...)                                     \
  do {                                                        \
    if (event_traced[((Event){__VA_ARGS__}).kind]) (vm)->stats.events++; \
    if ((vm)->sink_count) {                                   \
      const Event vm_event_ = {__VA_ARGS__};                  \
      events_dispatch((vm), &vm_event_);                      \
    }                                                         \
  } while (0)

/* Start the sinks a run needs (at the start of every run). */
void events_start(VM *vm);

/* Stop the run's sinks (the run is discarded). */
void events_stop(VM *vm);

/* The event's name, as the trace shows it first: "fork", "takeMVar" ... */
const char *event_name(const Event *event);

/* Append the event's detail as the trace shows it after the name ("1.2",
 * "\"hello\"", "wrote <tvar a>"); nothing for an event without one. */
void event_detail(VM *vm, const Event *event, Buffer *out);

/* Append the event as the text trace shows it: name, separator, detail. */
void event_text(VM *vm, const Event *event, Buffer *out);

/* The timeline sink's (vm/sink_timeline.c): write the last run's timeline
 * ({"traceEvents": [...]}; open slices end at the current simulated time),
 * false on a write error; free it. */
bool timeline_write(VM *vm, FILE *out);
void timeline_free(VM *vm);

#endif
