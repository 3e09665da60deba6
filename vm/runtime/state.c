/* The VM's shared services (see state.h): output and reports, runtime
 * errors, the run's limits and stopping, globals and file names. Everything in vm/ calls these, so they
 * call nothing above them. */
#include "state.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vm_flush_output(VM *vm) {
  if (vm->out.length && vm->config.write_say) vm->config.write_say(vm->config.user, vm->out.data, vm->out.length);
  /* the text stays in place: a say event the sinks are still seeing points at it */
  vm->out.length = 0;
}

void vm_write_error(VM *vm, const char *text, size_t length) {
  vm_flush_output(vm);
  if (vm->config.write_error) vm->config.write_error(vm->config.user, text, length);
}

void vm_write_trace(VM *vm, int which, const char *text, size_t length) {
  WriteFn write = which == 0 ? vm->config.write_trace : vm->config.write_trace_json;
  if (!write || !vm_trace_room(vm, which, length)) return;
  vm_flush_output(vm);
  write(vm->config.user, text, length);
}

void vm_report(VM *vm, const char *fmt, ...) {
  if (!vm->config.write_error) return;
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  vm_write_error(vm, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

void rt_error(VM *vm, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(vm->error, sizeof vm->error, fmt, ap);
  va_end(ap);
  vm->has_error = true;
}

/* ---- stopping ---- */

void vm_update_stop(VM *vm) {
  uint64_t at = vm->config.max_steps ? vm->config.max_steps : UINT64_MAX;
  if (vm->config.max_work) {
    uint64_t left = vm->work < vm->config.max_work ? vm->config.max_work - vm->work : 0;
    if (left < at) at = left;
  }
  if (vm->stop || vm->heap_exceeded) at = 0;
  /* relaxed, with a compiler fence: vm_stop runs on this thread (a signal
   * handler), so no CPU barrier is needed, and a seq_cst store (xchg) would
   * cost every run tens of cycles */
  atomic_store_explicit(&vm->stop_at, at, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  /* a signal handler may have set stop (then stop_at) meanwhile: it wins */
  if (vm->stop) atomic_store_explicit(&vm->stop_at, 0, memory_order_relaxed);
}

bool vm_trace_room(VM *vm, int which, size_t bytes) {
  if (vm->trace_capped) return false;
  uint64_t max = vm->config.max_trace_size;
  if (max && vm->trace_bytes[which] + bytes > max) {
    vm->trace_capped = which + 1;
    if (!vm->stop) vm->stop = STOP_TRACE_SIZE;
    vm_update_stop(vm);
    return false;
  }
  vm->trace_bytes[which] += bytes;
  return true;
}

/* ---- globals ---- */

int vm_declare_global(VM *vm, ObjString *name, int arity, const char *file, int line) {
  int index = vm->globals.count;
  value_array_push(&vm->globals, UNDEFINED_VAL);
  if (index >= vm->global_capacity) {
    vm->global_capacity = vm->global_capacity ? vm->global_capacity * 2 : 64;
    vm->global_info = xrealloc(vm->global_info, (size_t)vm->global_capacity * sizeof(GlobalInfo));
  }
  vm->global_info[index] = (GlobalInfo){name, arity, NULL, file, line};
  table_set(&vm->global_index, name, INT_VAL(index));
  return index;
}

int vm_find_global(VM *vm, ObjString *name) {
  Value index;
  return table_get(&vm->global_index, name, &index) ? (int)AS_INT(index) : -1;
}

const char *vm_file_name(VM *vm, const char *name) {
  for (FileName *f = vm->files; f; f = f->next)
    if (strcmp(f->name, name) == 0) return f->name;
  size_t n = strlen(name);
  FileName *f = xrealloc(NULL, sizeof *f + n + 1);
  memcpy(f->name, name, n + 1);
  f->next = vm->files;
  vm->files = f;
  return f->name;
}
