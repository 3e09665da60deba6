/* VM lifetime, globals, the VM's own prototypes, and running a program. */
#include "vm.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/loader.h"
#include "memory.h"
#include "interp.h"
#include "sched.h"
#include "stm.h"
#include "state.h"

void vm_config_init(VMConfig *config) {
  memset(config, 0, sizeof *config);
  config->max_time = -1;
  config->max_trace_size = (uint64_t)1 << 30;
  config->say_block = 64 * 1024;
  config->opt_level = 1;
  config->program = "simvm";
}

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

/* ---- stopping ---- */

void vm_update_stop(VM *vm) {
  uint64_t at = vm->config.max_steps ? vm->config.max_steps : UINT64_MAX;
  if (vm->config.max_work) {
    uint64_t left = vm->work < vm->config.max_work ? vm->config.max_work - vm->work : 0;
    if (left < at) at = left;
  }
  atomic_store(&vm->stop_at, at);
  /* a signal handler may have set stop (then stop_at) meanwhile: it wins */
  if (vm->stop || vm->heap_exceeded) atomic_store(&vm->stop_at, 0);
}

void vm_stop(VM *vm, SimStop why) {
  vm->stop = (sig_atomic_t)why;
  atomic_store(&vm->stop_at, 0);
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

SimStatus vm_stopped(VM *vm) {
  int stop = vm->stop;
  if (stop == SIM_STOP_INTERRUPT || stop == SIM_STOP_TERMINATE) {
    Buffer out;
    buf_init(&out);
    buf_printf(&out, "simvm: %s at ", stop == SIM_STOP_INTERRUPT ? "interrupted" : "terminated");
    duration_show(&out, vm->now);
    buf_printf(&out, " after %" PRIu64 " instruction%s\n", vm->steps, vm->steps == 1 ? "" : "s");
    sched_report_threads(vm, &out);
    vm_write_error(vm, out.data, out.length);
    buf_free(&out);
    return SIM_INTERRUPTED;
  }
  if (stop == SIM_STOP_OUTPUT) return SIM_USAGE;
  if (vm->heap_exceeded) {
    vm_report(vm, "simvm: heap limit reached: %zu bytes in use (--max-heap)\n", vm->bytes_allocated);
    return SIM_LIMIT;
  }
  if (stop == STOP_TRACE_SIZE) {
    static const char *const outputs[] = {"--trace output", "--trace-json file", "--timeline file"};
    vm_report(vm, "simvm: trace size limit reached: the %s would pass %" PRIu64 " bytes (--max-trace-size)\n",
              outputs[vm->trace_capped - 1], vm->config.max_trace_size);
  } else if (vm->config.max_steps && vm->steps >= vm->config.max_steps) {
    /* checked at calls and binds: the count may be a little past the limit,
     * by how far depends on the code, so the message gives the limit */
    vm_report(vm, "simvm: step limit reached: at least %" PRIu64 " instruction%s executed (--max-steps)\n",
              vm->config.max_steps, vm->config.max_steps == 1 ? "" : "s");
  } else {
    vm_report(vm, "simvm: work limit reached: at least %" PRIu64 " units of work done (--max-work)\n",
              vm->config.max_work);
  }
  return SIM_LIMIT;
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

static void define_builtins(VM *vm) {
  for (int i = 0; i < builtin_count; i++) {
    const Builtin *builtin = &builtin_table[i];
    int index = vm_declare_global(vm, obj_cstring(vm, builtin->name), builtin->arity, NULL, 0);
    vm->global_info[index].builtin = builtin;
    vm->globals.values[index] = OBJ_VAL(obj_builtin(vm, builtin));
  }
}

/* ---- the VM's own code ---- */

/* A closure of the VM's own code: `code` is raw bytecode; `handler` is the
 * offset of its exception handler (or -1), which starts with the stack
 * `handler_depth` deep and the exception pushed. */
static ObjClosure *internal(VM *vm, const char *name, int max_slots, const uint8_t *code, int length, int handler,
                            int handler_depth) {
  ObjProto *proto = obj_proto(vm, PROTO_INTERNAL, "<vm>", 0);
  proto->name = obj_cstring(vm, name);
  proto->max_slots = max_slots;
  for (int i = 0; i < length; i++) chunk_write(&proto->chunk, code[i], 0);
  proto->handler = handler;
  proto->handler_depth = handler_depth;
  return obj_closure(vm, proto, 0);
}

#define INTERNAL(vm, name, slots, handler, depth, ...)                                             \
  internal((vm), (name), (slots), (const uint8_t[]){__VA_ARGS__},                                  \
           (int)sizeof((const uint8_t[]){__VA_ARGS__}), (handler), (depth))

/* Every thread's base frame: slot 0 holds the thread's action. */
static ObjClosure *make_entry(VM *vm) { return INTERNAL(vm, "<thread>", 2, -1, 0, OP_BIND, OP_THREAD_EXIT); }

/* timeout(d, act): slots 0 and 1 hold d and act, slot 2 the armed timeout. */
static ObjClosure *make_timeout(VM *vm) {
  return INTERNAL(vm, "timeout", 5, 6, 3, OP_TIMEOUT_ARM, OP_GET_LOCAL, 1, OP_BIND, OP_TIMEOUT_DISARM, OP_RETURN,
                  /* 6: handler */ OP_TIMEOUT_CATCH);
}

/* catch(act, handler): slots 0 and 1 hold them; the handler's code starts
 * with the exception in slot 2, and runs handler(e) under withMaskingState. */
static ObjClosure *make_catch(VM *vm) {
  return INTERNAL(vm, "catch", 6, 4, 2, OP_GET_LOCAL, 0, OP_BIND, OP_RETURN,
                  /* 4: handler */ OP_CATCH_HANDLER, OP_GET_LOCAL, 1, OP_GET_LOCAL, 2, OP_CALL, 1, OP_PRIM,
                  BUILTIN_withMaskingState, OP_RETURN);
}

/* withMaskingState(state, act): slot 0 the state (an int), slot 1 the
 * action, slot 2 the state to restore. */
static ObjClosure *make_mask(VM *vm) {
  return INTERNAL(vm, "withMaskingState", 5, 6, 3, OP_MASK_PUSH, OP_GET_LOCAL, 1, OP_BIND, OP_MASK_POP, OP_RETURN,
                  /* 6: handler */ OP_MASK_UNWIND);
}

/* atomically(stm): slot 0 the transaction, slot 1 its result, slot 2 the
 * traceTVar calls due after the commit, each made by TX_TRACE (slot 3 the
 * TVar, then f, old, new) and CALL, and traced by TX_TRACED, which loops
 * back; then the thread yields and RETURNs. The handler sees the exception
 * in slot 1. */
static ObjClosure *make_atomically(VM *vm) {
  return INTERNAL(vm, "atomically", 8, 10, 1, OP_TX_BEGIN, OP_GET_LOCAL, 0, OP_BIND, OP_TX_COMMIT,
                  /* 5: */ OP_TX_TRACE, OP_CALL, 2, OP_TX_TRACED, OP_RETURN,
                  /* 10: handler */ OP_TX_ABORT);
}

/* orElse(a, b): slots 0 and 1 the branches, slot 2 the undo-log mark. */
static ObjClosure *make_or_else(VM *vm) {
  return INTERNAL(vm, "orElse", 6, 5, 3, OP_TX_MARK, OP_GET_LOCAL, 0, OP_BIND, OP_RETURN,
                  /* 5: handler */ OP_OR_ELSE_CATCH, OP_GET_LOCAL, 1, OP_BIND, OP_RETURN);
}

/* -O0's heap continuations: slot 0 holds the continuation; the bound action
 * runs as if this frame had bound it, then RESUME rebuilds the frame. */
static ObjClosure *make_resume(VM *vm) { return INTERNAL(vm, "<continuation>", 3, -1, 0, OP_BIND, OP_RESUME); }

VM *vm_new(const VMConfig *config) {
  VM *vm = xrealloc(NULL, sizeof *vm);
  memset(vm, 0, sizeof *vm);
  vm->config = *config;
  vm->next_gc = 1024 * 1024;
  const char *stress = getenv("SIMVM_GC_STRESS");
  vm->gc_stress = stress && *stress && strcmp(stress, "0") != 0;
  gc_update_limit(vm);
  vm->optimize = config->opt_level > 0;
  vm->result = vm->failure = UNIT_VAL;
  vm->main_action = UNDEFINED_VAL;
  table_init(&vm->strings);
  table_init(&vm->global_index);
  value_array_init(&vm->globals);
  value_array_init(&vm->module_inits);
  timer_heap_init(&vm->timers);

  vm->gc_paused++;
  define_builtins(vm);
  vm->entry_closure = make_entry(vm);
  vm->timeout_closure = make_timeout(vm);
  vm->catch_closure = make_catch(vm);
  vm->mask_closure = make_mask(vm);
  vm->atomically_closure = make_atomically(vm);
  vm->prelude_catch = make_catch(vm);
  vm->prelude_mask = make_mask(vm);
  vm->prelude_atomically = make_atomically(vm);
  vm->prelude_catch->proto->prelude = vm->prelude_mask->proto->prelude = vm->prelude_atomically->proto->prelude = true;
  vm->or_else_closure = make_or_else(vm);
  vm->resume_closure = make_resume(vm);
  vm->retry_signal = obj_exception(vm, EXC_RETRY, NULL);
  vm->thread_killed = obj_exception(vm, EXC_KILLED, NULL);
  vm->gc_paused--;

  if (!config->no_prelude && loader_load_prelude(vm) != SIM_OK) {
    vm_free(vm);
    return NULL;
  }
  return vm;
}

void vm_free(VM *vm) {
  if (!vm) return;
  events_stop(vm);
  buf_free(&vm->out);
  /* the heap points into objects about to be freed: empty it first */
  timer_heap_clear(&vm->timers);
  gc_free_all(vm);
  thread_pools_free(vm);
  timer_heap_free(&vm->timers);
  run_queue_free(&vm->run_queue);
  table_free(&vm->strings);
  table_free(&vm->global_index);
  loader_free(vm);
  profile_free(vm->profile);
  timeline_free(vm);
  value_array_free(&vm->globals);
  value_array_free(&vm->module_inits);
  free(vm->global_info);
  free(vm->young_owners);
  stm_log_free(vm);
  free(vm->due);
  while (vm->sources) {
    Source *next = vm->sources->next;
    source_free(vm->sources);
    vm->sources = next;
  }
  free(vm);
}

/* ---- running ---- */

/* `code` as the body of a new block closure of the VM's own (line 0). */
static ObjClosure *boot_closure(VM *vm, const char *name, const Chunk *code) {
  ObjProto *proto = obj_proto(vm, PROTO_BLOCK, "<vm>", 0);
  proto->name = obj_cstring(vm, name);
  proto->max_slots = 3;
  proto->chunk = *code;
  return obj_closure(vm, proto, 0);
}

static void emit_u16(Chunk *chunk, OpCode op, int operand) {
  chunk_write(chunk, (uint8_t)op, 0);
  chunk_write(chunk, (uint8_t)(operand >> 8), 0);
  chunk_write(chunk, (uint8_t)operand, 0);
}

/* The action a run's main thread starts with: `main` itself when it is an
 * action, or a closure that calls `fn main()` and runs what it returns.
 * Found after the load, since main is a top-level value. False (reported)
 * when no script defines a main without parameters. */
static bool find_main(VM *vm, int *index) {
  ObjString *name = obj_cstring(vm, "main");
  *index = vm_find_global(vm, name);
  if (*index < 0 || vm->global_info[*index].builtin) {
    vm_report(vm, "%s: error: the program defines no 'main' (write `main = { ... }`)\n", vm->config.program);
    return false;
  }
  const GlobalInfo *info = &vm->global_info[*index];
  if (info->arity > 0) {
    vm_report(vm, "%s:%d: error: 'main' must take no parameters (read arguments with args())\n", info->file,
              info->line);
    return false;
  }
  return true;
}

static Value main_action(VM *vm, int index) {
  if (vm->global_info[index].arity < 0) return vm->globals.values[index];
  Chunk code;
  chunk_init(&code);
  emit_u16(&code, OP_GET_GLOBAL, index);
  chunk_write(&code, OP_CALL, 0);
  chunk_write(&code, 0, 0);
  chunk_write(&code, OP_TAIL_BIND, 0);
  chunk_write(&code, OP_RETURN, 0);
  return OBJ_VAL(boot_closure(vm, "<boot>", &code));
}

/* Empty the scheduler: the threads, timers and run queue a run left. */
static void reset_scheduler(VM *vm) {
  events_stop(vm); /* the run's sinks see nothing of its end */
  while (vm->live) thread_release(vm, vm->live);
  timer_heap_clear(&vm->timers);
  vm->run_queue.count = 0;
  vm->run_queue.head = 0;
  vm->main_thread = vm->current = vm->failed_thread = NULL;
  vm->result = vm->failure = UNIT_VAL;
}

/* Start a simulation at time 0 with a main thread running `action`. */
static SimStatus simulate(VM *vm, Value action) {
  vm->now = 0;
  vm->steps = 0;
  vm->work = 0;
  memset(vm->trace_bytes, 0, sizeof vm->trace_bytes);
  vm->trace_capped = 0;
  if (vm->stop == STOP_TRACE_SIZE) vm->stop = 0; /* a trace cap ends one run; vm_stop all */
  vm->heap_exceeded = false;
  gc_update_limit(vm); /* --max-heap may have changed since the last run */
  vm_update_stop(vm);
  vm->timer_seq = vm->transaction_counter = vm->block_counter = 0;
  vm->stm.undo_count = vm->stm.read_count = 0; /* a run may stop inside a transaction */
  memset(&vm->stats, 0, sizeof vm->stats);
  vm->thread_serial = 0;
  profile_free(vm->profile);
  vm->profile = vm->config.profile ? profile_new() : NULL;
  events_start(vm);
  vm->main_thread = thread_new(vm, NULL, action);
  sched_enqueue(vm, vm->main_thread);
  SimStatus status = interp_run(vm);
  vm_flush_output(vm);
  return status;
}

/* The load: every module's top level not yet run, in load order, on a main
 * thread of its own at time 0 (so its errors read as a run's), unprofiled
 * and untraced (top levels only compute values: nothing to trace). Then one
 * full collection, and what survives becomes the old generation every run
 * shares. */
static SimStatus load_program(VM *vm) {
  Chunk code;
  chunk_init(&code);
  for (int i = vm->modules_run; i < vm->module_inits.count; i++) {
    emit_u16(&code, OP_CONST, chunk_add_constant(&code, vm->module_inits.values[i]));
    chunk_write(&code, OP_BIND, 0);
    chunk_write(&code, OP_POP, 0);
  }
  chunk_write(&code, OP_UNIT, 0);
  chunk_write(&code, OP_RETURN, 0);
  vm->gc_paused++;
  ObjClosure *load = boot_closure(vm, "<load>", &code);
  vm->gc_paused--;
  VMConfig config = vm->config;
  struct Explorer *explore = vm->explore; /* top levels have no schedule to explore */
  vm->explore = NULL;
  vm->config.trace = vm->config.timeline = vm->config.profile = false;
  vm->config.write_trace_json = NULL;
  profile_free(vm->profile);
  vm->profile = NULL;
  SimStatus status = simulate(vm, OBJ_VAL(load));
  vm->config = config;
  vm->explore = explore;
  vm->load_steps += vm->steps;
  reset_scheduler(vm);
  if (status != SIM_OK) return status;
  vm->modules_run = vm->module_inits.count;
  gc_collect(vm);
  if (!vm->keep_young) gc_promote(vm);
  return SIM_OK;
}

void vm_discard_run(VM *vm) {
  if (!vm->main_thread) return;
  reset_scheduler(vm);
  /* the profile names the run's prototypes, which may be young: it goes
   * with them (a vm_run that then fails early has none to write) */
  profile_free(vm->profile);
  vm->profile = NULL;
  timeline_free(vm);
  gc_free_young(vm);
}

SimStatus vm_run(VM *vm) {
  vm_discard_run(vm);
  if (IS_UNDEFINED(vm->main_action)) { /* the first run since code was loaded */
    int index;
    if (!find_main(vm, &index)) return SIM_COMPILE_ERROR;
    if (vm->modules_run < vm->module_inits.count) {
      SimStatus status = load_program(vm);
      if (status != SIM_OK) return status;
    }
    vm->gc_paused++;
    vm->main_action = main_action(vm, index);
    vm->gc_paused--;
    if (!vm->keep_young) gc_promote(vm);
  }
  return simulate(vm, vm->main_action);
}

Value vm_result(VM *vm) { return vm->result; }
uint64_t vm_events(VM *vm) { return vm->stats.events; }

bool vm_write_timeline(VM *vm, FILE *out) { return timeline_write(vm, out); }

bool vm_write_profile(VM *vm, FILE *out, char format, double wall_seconds) {
  if (!vm->profile) return false;
  switch (format) {
    case 'j': return profile_write_json(vm, out, wall_seconds);
    case 'f': return profile_write_folded(vm, out);
    default: return profile_write_text(vm, out, wall_seconds);
  }
}
int64_t vm_now(VM *vm) { return vm->now; }
uint64_t vm_steps(VM *vm) { return vm->steps; }

char *vm_show(VM *vm, Value value) {
  (void)vm;
  Buffer buf;
  buf_init(&buf);
  value_show(&buf, value, false);
  if (!buf.data) buf_append(&buf, "", 0);
  return buf.data;
}
