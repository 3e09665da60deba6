/* JSON lines (--trace-json): every event, the prelude's internals
 * included, as {"time_ns", "thread", "label", "event", "detail"} through
 * write_trace_json (docs/CLI.md). */
#include <inttypes.h>

#include "state.h"
#include "show.h"
#include "events.h"

static void *start(VM *vm) { return vm->config.write_trace_json ? vm : NULL; }

static void event(VM *vm, void *state, const Event *e) {
  (void)state;
  if (!event_traced[e->kind]) return;
  Buffer line, text;
  buf_init(&line);
  buf_init(&text);
  buf_printf(&line, "{\"time_ns\": %" PRId64 ", \"thread\": ", vm->now);
  if (e->thread) {
    thread_id(&text, e->thread);
    buf_append_json(&line, buf_text(&text));
  } else {
    buf_append(&line, "null", 4);
  }
  buf_append(&line, ", \"label\": ", 11);
  if (e->thread && e->thread->label) buf_append_json_bytes(&line, e->thread->label->chars, (size_t)e->thread->label->length);
  else buf_append(&line, "null", 4);
  buf_append(&line, ", \"event\": ", 11);
  buf_append_json(&line, event_name(e));
  buf_append(&line, ", \"detail\": ", 12);
  buf_truncate(&text, 0);
  event_detail(vm, e, &text);
  buf_append_json(&line, buf_text(&text));
  buf_append(&line, "}\n", 2);
  vm_work(vm, line.length);
  vm_write_trace(vm, 1, line.data, line.length);
  buf_free(&line);
  buf_free(&text);
}

const EventSink sink_json = {"json", start, event, NULL};
