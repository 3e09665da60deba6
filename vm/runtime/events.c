/* Typed events: the sinks' registry, dispatch, and how events read in a
 * trace (see vm/trace/events.h). Here in vm/runtime/, not beside the
 * sinks, as their details name threads and TVars with the runtime's
 * helpers (thread.h, stm.h). */
#include "events.h"

#include <string.h>

#include "show.h"
#include "state.h"
#include "stm.h"

/* The registry: every vm/trace/sink_*.c, listed by the build (events_start). */
#define SINK(name) extern const EventSink sink_##name;
#include "sinks.h"
#undef SINK

static const char *const separators[EV_COUNT] = {
#define EVENT(kind, name, class, separator, fields) separator,
#include "events.def"
#undef EVENT
};

static const char *const names[EV_COUNT] = {
#define EVENT(kind, name, class, separator, fields) name,
#include "events.def"
#undef EVENT
};

#define TRACE true
#define STATE false
const bool event_traced[EV_COUNT] = {
#define EVENT(kind, name, class, separator, fields) class,
#include "events.def"
#undef EVENT
};
#undef TRACE
#undef STATE

/* One sink's start: a call the compiler sees the callee of (each sink's is
 * a constant), so a run with no sink wanted costs a few tests, not a loop
 * of calls through the table. */
static inline void start_sink(VM *vm, const EventSink *sink) {
  if (vm->sink_count == VM_MAX_SINKS) return;
  void *state = sink->start(vm);
  if (!state) return;
  vm->sinks[vm->sink_count] = sink;
  vm->sink_states[vm->sink_count++] = state;
}

void events_start(VM *vm) {
  vm->sink_count = 0;
#define SINK(name) start_sink(vm, &sink_##name);
#include "sinks.h"
#undef SINK
}

void events_stop(VM *vm) {
  int count = vm->sink_count;
  vm->sink_count = 0; /* nothing more reaches them */
  for (int i = 0; i < count; i++)
    if (vm->sinks[i]->stop) vm->sinks[i]->stop(vm, vm->sink_states[i]);
}

bool event_internal(const Event *e) {
  if (e->internal) return true;
  if (e->kind == EV_NET) return false;
  return (e->thread && e->thread->quiet) || ((e->kind == EV_FORK || e->kind == EV_LABEL) && e->other && e->other->quiet);
}

void events_dispatch(VM *vm, const Event *event) {
  for (int i = 0; i < vm->sink_count; i++) vm->sinks[i]->event(vm, vm->sink_states[i], event);
}

/* ---- how events read ---- */

static const char *const mvar_ops[] = {[BLOCKED_TAKE] = "takeMVar", [BLOCKED_READ] = "readMVar",
                                       [BLOCKED_PUT] = "putMVar"};

static const char *const mvar_op_names[] = {
    [MVAR_OP_TAKE] = "takeMVar",         [MVAR_OP_READ] = "readMVar",         [MVAR_OP_PUT] = "putMVar",
    [MVAR_OP_TRY_TAKE] = "tryTakeMVar", [MVAR_OP_TRY_READ] = "tryReadMVar", [MVAR_OP_TRY_PUT] = "tryPutMVar"};

const char *event_name(const Event *event) {
  if (event->kind == EV_MVAR_BLOCKED) return mvar_ops[event->mode];
  if (event->kind == EV_MVAR) return mvar_op_names[event->mode];
  return names[event->kind];
}

/* A value in a trace, shown at most TRACE_SHOW_LIMIT bytes. */
static void show_bounded(Buffer *out, Value value, bool quote) {
  if (!value_show_bounded(out, value, quote, TRACE_SHOW_LIMIT)) buf_append(out, "...", 3);
}

/* The value an MVar or TVar operation moved, after its object: short, so
 * that a trace of many of them stays a line each ("... " past the limit). */
#define DATUM_SHOW_LIMIT 60
static void show_datum(Buffer *out, Value datum) {
  buf_append(out, " ", 1);
  if (!value_show_bounded(out, datum, true, DATUM_SHOW_LIMIT)) buf_append(out, "...", 3);
}

void event_detail(VM *vm, const Event *event, Buffer *out) {
  switch (event->kind) {
    case EV_FORK:
    case EV_KILL:
      thread_id(out, event->other);
      break;
    case EV_DELAY:
    case EV_TIMEOUT:
      duration_show(out, event->ns);
      break;
    case EV_WAKE:
      if (IS_UNIT(event->value)) break;
      buf_append(out, "(by ", 4);
      value_show(out, event->value, false);
      buf_append(out, ")", 1);
      break;
    case EV_SAY:
      if (event->text) {
        buf_append_quoted(out, event->text, event->length);
      } else {
        Buffer text;
        buf_init(&text);
        value_show(&text, event->value, false);
        buf_append_quoted(out, text.data ? text.data : "", text.length);
        buf_free(&text);
      }
      break;
    case EV_DIED:
      value_show_line(out, event->value, true, TRACE_SHOW_LIMIT);
      break;
    case EV_TIMEOUT_NOW:
      buf_append(out, "0ns: timed out at once", 22);
      break;
    case EV_TIMEOUT_FIRED:
      buf_append(out, "fired", 5);
      break;
    case EV_THROW:
    case EV_CAUGHT:
      show_bounded(out, event->value, true);
      break;
    case EV_THROW_TO:
      thread_id(out, event->other);
      buf_append(out, " ", 1);
      value_show(out, event->value, true);
      break;
    case EV_MASK:
      buf_append(out, mask_names[event->mode], strlen(mask_names[event->mode]));
      break;
    case EV_MVAR_BLOCKED:
      buf_append(out, "blocked on ", 11);
      show_bounded(out, event->value, false);
      break;
    case EV_MVAR:
      /* "putMVar <mvar m> 3"; a try that did nothing says why */
      show_bounded(out, event->value, false);
      if (!event->count) buf_printf(out, ": %s", event->mode == MVAR_OP_TRY_PUT ? "full" : "empty");
      else show_datum(out, event->datum);
      break;
    case EV_READ_TVAR_IO:
      show_bounded(out, event->value, false);
      show_datum(out, event->datum);
      break;
    case EV_TIMER_CANCELLED:
      show_bounded(out, event->value, false);
      break;
    case EV_USER:
      show_bounded(out, event->value, true);
      break;
    case EV_NET: /* "a -> b #{vote: 2}: dropped (partition)" */
      buf_append(out, event->text, event->length);
      if (!IS_UNIT(event->value)) show_datum(out, event->value);
      buf_append(out, ": ", 2);
      buf_append(out, AS_CSTRING(event->datum), (size_t)AS_STRING(event->datum)->length);
      break;
    case EV_COMMITTED:
      if (!event->count) break;
      buf_append(out, "wrote ", 6);
      stm_describe(out, event->tvars, event->count);
      break;
    case EV_RETRY:
      buf_append(out, "blocked on ", 11);
      if (event->count) stm_describe(out, event->tvars, event->count);
      else buf_append(out, "nothing", 7);
      break;
    case EV_LABEL:
      thread_id(out, event->other);
      buf_append(out, " ", 1);
      buf_append_quoted(out, AS_CSTRING(event->value), (size_t)AS_STRING(event->value)->length);
      break;
    case EV_TRACE_TVAR:
      value_show(out, event->value, false);
      buf_append(out, " ", 1);
      buf_append_quoted(out, event->text, event->length);
      break;
    case EV_END: {
      buf_printf(out, "main %s with %d thread%s still alive: ", event->mode == SIM_OK ? "finished" : "died",
                 event->count, event->count == 1 ? "" : "s");
      bool first = true;
      ObjThread *oldest = vm->live;
      while (oldest && oldest->live_next) oldest = oldest->live_next;
      for (ObjThread *t = oldest; t; t = t->live_prev, first = false) {
        if (!first) buf_append(out, ", ", 2);
        thread_name(out, t);
      }
      break;
    }
    case EV_MARK:
      buf_append(out, event->text, event->length);
      break;
    case EV_EXIT:
    case EV_YIELD:
    case EV_THREAD_START:
    case EV_THREAD_STATE:
    case EV_COUNT:
      break;
  }
}

void event_text(VM *vm, const Event *event, Buffer *out) {
  const char *name = event_name(event);
  buf_append(out, name, strlen(name));
  size_t before = out->length;
  buf_append(out, separators[event->kind], strlen(separators[event->kind]));
  size_t after = out->length;
  event_detail(vm, event, out);
  if (out->length == after) buf_truncate(out, before); /* no detail: no separator either */
}
