/* Trace events as text: a line for the --trace output, and the same event
 * handed to events.c for JSON lines and the timeline. (Issue 8 item 4 makes
 * these typed events, one vm_event feeding every sink.) */
#include "state.h"

#include <stdarg.h>
#include <stdio.h>

static void trace_event(VM *vm, ObjThread *thread, bool text, const char *fmt, va_list ap) {
  vm->stats.events++;
  if (!text && !vm->config.write_trace_json && !vm->config.timeline) return;
  Buffer event;
  buf_init(&event);
  buf_vprintf(&event, fmt, ap);
  if (text) {
    Buffer line, when, name;
    buf_init(&line);
    buf_init(&when);
    buf_init(&name);
    duration_show(&when, vm->now);
    if (thread) thread_name(&name, thread);
    else buf_append(&name, "-", 1);
    buf_printf(&line, "%10s  %-12s %s\n", buf_text(&when), buf_text(&name), buf_text(&event));
    vm_work(vm, line.length);
    if (vm_trace_room(vm, 0, line.length)) vm->config.write_trace(vm->config.user, line.data, line.length);
    buf_free(&line);
    buf_free(&when);
    buf_free(&name);
  }
  if (vm->config.write_trace_json || vm->config.timeline) events_record(vm, thread, buf_text(&event));
  buf_free(&event);
}

void vm_trace(VM *vm, ObjThread *thread, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  trace_event(vm, thread, vm->config.trace && vm->config.write_trace, fmt, ap);
  va_end(ap);
}

void vm_trace_internal(VM *vm, ObjThread *thread, bool internal, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool text = vm->config.trace && vm->config.write_trace && (vm->config.trace_all || !internal);
  trace_event(vm, thread, text, fmt, ap);
  va_end(ap);
}
