/* Runtime errors, exceptions and their unwinding, and the death of a
 * thread that nobody caught an exception for (see unwind.h). */
#include "unwind.h"
#include "show.h"

#include <stdlib.h>
#include <string.h>

#include "prim.h"
#include "sched.h"

#define MAX_TRACE_FRAMES 20   /* a stack overflow would print a million lines */

Value unwind_located_exception(VM *vm, ObjThread *thread, ExceptionKind kind, const char *message) {
  ObjException *exc = obj_exception(vm, kind, NULL);
  gc_push_root(vm, OBJ_VAL(exc));
  exc->message = obj_cstring(vm, message);
  if (kind == EXC_ASSERT) { /* the script's own line: the prelude's `when` would say nothing */
    for (int i = thread->frame_count - 1; i >= 0 && !exc->where; i--) {
      const ObjProto *proto;
      int line;
      if (thread_frame_location(vm, &thread->frames[i], &proto, &line) && !proto->prelude)
        exc->where = obj_stringf(vm, "%s:%d", proto->file, line);
    }
  }
  Buffer trace;
  buf_init(&trace);
  int shown = 0, hidden = 0;
  for (int i = thread->frame_count - 1; i >= 0; i--) {
    const ObjProto *proto;
    int line;
    if (!thread_frame_location(vm, &thread->frames[i], &proto, &line)) continue;
    if (!exc->where) exc->where = obj_stringf(vm, "%s:%d", proto->file, line);
    if (shown == MAX_TRACE_FRAMES) {
      hidden++;
      continue;
    }
    buf_printf(&trace, "  at %s:%d in %s\n", proto->file, line, proto->name ? proto->name->chars : "?");
    shown++;
  }
  if (hidden) buf_printf(&trace, "  ... and %d more frame%s\n", hidden, hidden == 1 ? "" : "s");
  if (trace.length) exc->trace = obj_string(vm, trace.data, (int)trace.length);
  buf_free(&trace);
  gc_pop_root(vm);
  return OBJ_VAL(exc);
}

Value unwind_error_exception(VM *vm, ObjThread *thread) {
  vm->has_error = false;
  return unwind_located_exception(vm, thread, EXC_ERROR, vm->error);
}

/* Deaths that need no report: kill() and the async library's cancel(). */
static bool quiet_death(Value exc) {
  if (IS_EXCEPTION(exc)) return AS_EXCEPTION(exc)->kind == EXC_KILLED;
  if (!IS_RECORD(exc)) return false;
  ObjRecord *record = AS_RECORD(exc);
  for (int i = 0; i < record->count; i++)
    if (strcmp(record->fields[i].name->chars, "kind") == 0 && IS_STRING(record->fields[i].value))
      return AS_STRING(record->fields[i].value)->length == 14 &&
             memcmp(AS_CSTRING(record->fields[i].value), "AsyncCancelled", 14) == 0;
  return false;
}

bool unwind_death_fails_run(VM *vm, Value exc) {
  if (IS_EXCEPTION(exc) && AS_EXCEPTION(exc)->kind == EXC_ASSERT) return true;
  return vm->config.fail_on_uncaught && !quiet_death(exc);
}

#define DEATH_SHOW_LIMIT 200    /* bytes of the exception in a death report */

/* The thread ends with an exception nobody caught. */
static __attribute__((noinline)) void thread_died(VM *vm, ObjThread *thread, Value exc) {
  Buffer name_text;
  buf_init(&name_text);
  thread_name(&name_text, thread);
  const char *name = buf_text(&name_text);
  Buffer text;
  buf_init(&text);
  value_show_line(&text, exc, true, TRACE_SHOW_LIMIT);
  vm_work(vm, name_text.length + text.length); /* an id is as long as the fork tree is deep */
  vm_event(vm, .kind = EV_DIED, .thread = thread, .value = exc);
  Buffer when;
  buf_init(&when);
  duration_show(&when, vm->now);
  if (IS_EXCEPTION(exc) && (AS_EXCEPTION(exc)->kind == EXC_ERROR || AS_EXCEPTION(exc)->kind == EXC_ASSERT)) {
    ObjException *e = AS_EXCEPTION(exc);
    Buffer report;
    buf_init(&report);
    buf_printf(&report, "%s: %s: %.*s\n  in thread %s at simulated time %s\n", e->where ? e->where->chars : "simvm",
               e->kind == EXC_ASSERT ? "assertion failed" : "runtime error", e->message->length, e->message->chars,
               name, when.data);
    if (e->trace) buf_append(&report, e->trace->chars, (size_t)e->trace->length);
    vm_write_error(vm, report.data, report.length);
    buf_free(&report);
  } else if (thread == vm->main_thread) {
    vm_report(vm, "simvm: uncaught exception %s in thread %s at simulated time %s\n", text.data, name, when.data);
  } else if (!quiet_death(exc)) {
    /* as GHC reports a forked thread's uncaught exception: one line */
    Buffer report;
    buf_init(&report);
    buf_printf(&report, "simvm: thread %s at %s: uncaught ", name, when.data);
    value_show_line(&report, exc, true, DEATH_SHOW_LIMIT);
    if (thread->raise_file) buf_printf(&report, " at %s:%d", thread->raise_file, thread->raise_line);
    if (thread->raised_by) {
      buf_append(&report, " (thrown by thread ", 19);
      thread_name(&report, thread->raised_by);
      buf_append(&report, ")", 1);
    }
    buf_append(&report, "\n", 1);
    vm_write_error(vm, report.data, report.length);
    buf_free(&report);
  }
  buf_free(&text);
  buf_free(&when);
  buf_free(&name_text);
  sched_thread_done(vm, thread);
}

bool unwind(VM *vm, ObjThread *thread, Value exc) {
  /* the frame count is stored once, at the end: the loop keeps to registers
   * and the death, out of line, is the only call */
  for (int count = thread->frame_count; count > 0; count--) {
    CallFrame *frame = &thread->frames[count - 1];
    ObjProto *proto = frame->closure->proto;
    if (proto->handler >= 0 && frame->ip <= proto->chunk.code + proto->handler) {
      thread->frame_count = count;
      thread->sp = frame->slots + proto->handler_depth;
      *thread->sp++ = exc;
      frame->ip = proto->chunk.code + proto->handler;
      return true;
    }
  }
  thread->frame_count = 0;
  thread_died(vm, thread, exc);
  return false;
}
