/* The text trace (--trace): a line per event, "  time  thread  event",
 * through write_trace; the prelude's internals only with --trace=all. */
#include "state.h"
#include "show.h"
#include "events.h"

static void *start(VM *vm) { return vm->config.trace && vm->config.write_trace ? vm : NULL; }

static void event(VM *vm, void *state, const Event *e) {
  (void)state;
  if (!event_traced[e->kind] || (!vm->config.trace_all && event_internal(e))) return;
  Buffer line, when, name, text;
  buf_init(&line);
  buf_init(&when);
  buf_init(&name);
  buf_init(&text);
  duration_show(&when, vm->now);
  if (e->thread) thread_name(&name, e->thread);
  else buf_append(&name, "-", 1);
  event_text(vm, e, &text);
  buf_printf(&line, "%10s  %-12s %s\n", buf_text(&when), buf_text(&name), buf_text(&text));
  vm_work(vm, line.length);
  vm_write_trace(vm, 0, line.data, line.length);
  buf_free(&line);
  buf_free(&when);
  buf_free(&name);
  buf_free(&text);
}

const EventSink sink_text = {"text", start, event, NULL};
