/* The top of vm/: a VM's lifetime, the VM's own prototypes, and running a
 * program (the load's top levels, then main) on the interpreter. Making a
 * VM with its prelude and loading code into it is api/load.c's. */
#include "vm.h"
#include "show.h"
#include "events.h"
#include "builtins.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "interp.h"
#include "prim.h"
#include "sched.h"
#include "stm.h"
#include "state.h"

void vm_config_init(VMConfig *config) {
  memset(config, 0, sizeof *config);
  config->max_time = -1;
  config->max_trace_size = (uint64_t)1 << 30;
  config->say_block = 64 * 1024;
  config->program = "simvm";
}

void vm_stop(VM *vm, SimStop why) {
  vm->stop = (sig_atomic_t)why;
  atomic_store(&vm->stop_at, 0);
}

static void define_builtins(VM *vm) {
  for (int i = 0; i < builtin_count; i++) {
    const Builtin *builtin = &builtin_table[i];
    int index = vm_declare_global(vm, obj_cstring(vm, builtin->name), builtin->arity, NULL, 0);
    vm->global_info[index].builtin = builtin;
    vm->globals.values[index] = OBJ_VAL(obj_builtin(vm, builtin));
  }
}

/* ---- the VM's own code: a tiny assembler ---- */

/* The places the VM's own code names: where a prototype's exception
 * handler starts, and the ends of atomically's loop over traceTVar calls. */
typedef enum { L_HANDLER, L_TRACE, L_DONE, LABEL_COUNT } Label;

/* One line of assembly: an opcode and its operand (none if the opcode
 * table gives it none), or a label placed here. */
typedef struct {
  int op;           /* an OpCode, or -1 - label */
  int operand;
} Insn;

#define OP(name) {OP_##name, 0}
#define OP1(name, operand) {OP_##name, (operand)}
#define LABEL(l) {-1 - (l), 0}
#define HANDLER LABEL(L_HANDLER)

/* Append `op` and its operand at line 0 (the VM's own code has no line). */
static void emit(Chunk *chunk, OpCode op, int operand) {
  int width = opcode_info[op].width;
  chunk_write(chunk, (uint8_t)op, 0);
  if (width == 2) chunk_write(chunk, (uint8_t)(operand >> 8), 0);
  if (width >= 1) chunk_write(chunk, (uint8_t)operand, 0);
}

/* A closure of the VM's own code, `slots` deep: the instructions with the
 * labels' offsets stored in `at` (-1 for those not placed). The handler,
 * if placed, starts with the stack `handler_depth` deep and the exception
 * pushed. */
static ObjClosure *assemble(VM *vm, const char *name, int slots, int handler_depth, const Insn *code, int n,
                            int at[LABEL_COUNT]) {
  ObjProto *proto = obj_proto(vm, PROTO_INTERNAL, "<vm>", 0);
  proto->name = obj_cstring(vm, name);
  proto->max_slots = slots;
  for (int l = 0; l < LABEL_COUNT; l++) at[l] = -1;
  for (int i = 0; i < n; i++) {
    if (code[i].op < 0) at[-1 - code[i].op] = proto->chunk.count;
    else emit(&proto->chunk, (OpCode)code[i].op, code[i].operand);
  }
  proto->handler = at[L_HANDLER];
  proto->handler_depth = at[L_HANDLER] >= 0 ? handler_depth : 0;
  return obj_closure(vm, proto, 0);
}

#define ASSEMBLE(vm, name, slots, handler_depth, at, ...)                                              \
  assemble((vm), (name), (slots), (handler_depth), (const Insn[]){__VA_ARGS__},                        \
           (int)(sizeof((const Insn[]){__VA_ARGS__}) / sizeof(Insn)), (at))

/* Every thread's base frame: slot 0 holds the thread's action. */
static ObjClosure *make_entry(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "<thread>", 2, 0, at, OP(BIND), OP(THREAD_EXIT));
}

/* timeout(d, act): slots 0 and 1 hold d and act, slot 2 the armed timeout. */
static ObjClosure *make_timeout(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "timeout", 5, 3, at,
                  OP(TIMEOUT_ARM), OP1(GET_LOCAL, 1), OP(BIND), OP(TIMEOUT_DISARM), OP(RETURN),
                  HANDLER, OP(TIMEOUT_CATCH));
}

/* catch(act, handler): slots 0 and 1 hold them; the handler's code starts
 * with the exception in slot 2, and runs handler(e) under withMaskingState. */
static ObjClosure *make_catch(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "catch", 6, 2, at,
                  OP1(GET_LOCAL, 0), OP(BIND), OP(RETURN),
                  HANDLER, OP(CATCH_HANDLER), OP1(GET_LOCAL, 1), OP1(GET_LOCAL, 2), OP1(CALL, 1), OP1(PRIM, BUILTIN_withMaskingState),
                  OP(RETURN));
}

/* withMaskingState(state, act): slot 0 the state (an int), slot 1 the
 * action, slot 2 the state to restore, which prim_with_mask pushes as it
 * sets the state and enters. */
static ObjClosure *make_mask(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "withMaskingState", 5, 3, at,
                  OP1(GET_LOCAL, 1), OP(BIND), OP(MASK_POP), OP(RETURN),
                  HANDLER, OP(MASK_UNWIND));
}

/* atomically(stm): slot 0 the transaction, slot 1 its result, slot 2 the
 * traceTVar calls due after the commit, each made by TX_TRACE (slot 3 the
 * TVar, then f, old, new) and CALL, and traced by TX_TRACED, which loops
 * back; then the thread yields and RETURNs (TX_COMMIT does both when no
 * call is due). prim_atomically starts the transaction and the frame after
 * TX_BEGIN, which starts it again when a retry is woken. The handler sees
 * the exception in slot 1. */
static ObjClosure *make_atomically(VM *vm) {
  int at[LABEL_COUNT];
  ObjClosure *closure = ASSEMBLE(vm, "atomically", 8, 1, at,
                                 OP(TX_BEGIN), OP1(GET_LOCAL, 0), OP(BIND), OP(TX_COMMIT),
                                 LABEL(L_TRACE), OP(TX_TRACE), OP1(CALL, 2), OP(TX_TRACED),
                                 LABEL(L_DONE), OP(RETURN),
                                 HANDLER, OP(TX_ABORT));
  /* interp.c's TX_TRACE and TX_TRACED move ip by fixed distances: to the
   * RETURN when no call is left (3 bytes on from the TX_TRACE just read),
   * and back to TX_TRACE (4 bytes back from past TX_TRACED) */
  if (at[L_DONE] - at[L_TRACE] != 4) {
    fprintf(stderr, "simvm: internal error: atomically's trace loop is %d bytes, interp.c expects 4\n",
            at[L_DONE] - at[L_TRACE]);
    abort();
  }
  return closure;
}

/* orElse(a, b): slots 0 and 1 the branches, slot 2 the undo-log mark. */
static ObjClosure *make_or_else(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "orElse", 6, 3, at,
                  OP(TX_MARK), OP1(GET_LOCAL, 0), OP(BIND), OP(RETURN),
                  HANDLER, OP(OR_ELSE_CATCH), OP1(GET_LOCAL, 1), OP(BIND), OP(RETURN));
}

/* catchSTM(act, handler): slots 0 and 1 them, slot 2 the undo-log mark;
 * the handler's code starts with the exception in slot 3. */
static ObjClosure *make_catch_stm(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "catchSTM", 7, 3, at,
                  OP(TX_MARK), OP1(GET_LOCAL, 0), OP(BIND), OP(RETURN),
                  HANDLER, OP(CATCH_STM), OP1(GET_LOCAL, 1), OP1(GET_LOCAL, 3), OP1(CALL, 1), OP(BIND), OP(RETURN));
}

/* forkAsync(outer, act): slots 0 and 1 hold them, slot 2 the masking
 * state to restore (prim_fork_async pushes it as it masks), slot 3 the
 * result TVar, slot 4 the thread running asyncThread(outer, act, TVar).
 * Each step ends where the prelude's code had a scheduling point: the
 * commit's yield, the fork. */
static ObjClosure *make_async(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "forkAsync", 7, 0, at, OP(ASYNC_VAR), OP(ASYNC_FORK), OP(ASYNC_DONE), OP(RETURN));
}

/* An async's thread, as the prelude wrote it:
 *   r <- catch({ x <- withMaskingState(outer, act); return #{ok: true, value: x} }, tryFailed)
 *   atomically(writeTVar(var, some(r)))
 * Slots 1 to 3 hold outer, act and var. The handler, catch's own (from
 * slot 4, the exception), runs tryFailed(e) under withMaskingState as
 * catch runs a handler, then goes on to the write, which no handler
 * covers. */
static ObjClosure *make_async_thread(VM *vm) {
  int at[LABEL_COUNT];
  ObjClosure *closure = ASSEMBLE(vm, "asyncThread", 8, 4, at,
                                 OP1(GET_LOCAL, 1), OP1(GET_LOCAL, 2), OP1(PRIM, BUILTIN_withMaskingState),
                                 OP(ASYNC_OK), OP1(JUMP, 4),
                                 HANDLER, OP(CATCH_HANDLER), OP(ASYNC_FAILED), OP1(PRIM, BUILTIN_withMaskingState),
                                 LABEL(L_DONE), OP(ASYNC_WRITE), OP(RETURN));
  if (at[L_DONE] - at[L_HANDLER] != 4) { /* JUMP's distance, from past it to the write */
    fprintf(stderr, "simvm: internal error: asyncThread's handler is %d bytes, the JUMP skips 4\n",
            at[L_DONE] - at[L_HANDLER]);
    abort();
  }
  closure->proto->prelude = true; /* the prelude's code it stands for: its events are internal */
  return closure;
}

/* A loop of the VM's own under a prelude builtin (vm/prim_loop.c), six
 * slots deep: `step` ends it, skipping the 4 bytes to the RETURN (interp.c
 * counts on it), or sets up a round; `round` (a one-byte operand) and a
 * BIND run the round's action; `next` goes back to the start. The bind
 * checks the limits every round. */
static ObjClosure *make_loop(VM *vm, const char *name, Insn step, Insn round, Insn next) {
  int at[LABEL_COUNT];
  ObjClosure *closure = ASSEMBLE(vm, name, 6, 0, at, step, round, OP(BIND), next, LABEL(L_DONE), OP(RETURN));
  if (at[L_DONE] != 5) {
    fprintf(stderr, "simvm: internal error: %s's loop is %d bytes, interp.c expects 5\n", name, at[L_DONE]);
    abort();
  }
  closure->proto->prelude = true; /* the prelude's loop it stands for */
  return closure;
}

/* replicateMOnto(n, act, acc): slots 0 and 1 hold n and act, slots 2 and
 * 3 the results so far and their last cell. */
static ObjClosure *make_replicate(VM *vm) {
  return make_loop(vm, "replicateMOnto", (Insn)OP(REPEAT_STEP), (Insn)OP1(GET_LOCAL, 1), (Insn)OP(REPEAT_NEXT));
}

/* traverse_(f, xs): slots 0 and 1 hold f and the rest of xs; EACH_STEP
 * pushes f and the next element for the call. */
static ObjClosure *make_traverse(VM *vm) {
  return make_loop(vm, "traverse_", (Insn)OP(EACH_STEP), (Insn)OP1(CALL_BIND, 1), (Insn)OP(EACH_NEXT));
}

/* Heap continuations (--continuations=heap, -O0): slot 0 holds the continuation; the bound action
 * runs as if this frame had bound it, then RESUME rebuilds the frame (the
 * interpreter resumes such a frame just past the BIND, at offset 1). */
static ObjClosure *make_resume(VM *vm) {
  int at[LABEL_COUNT];
  return ASSEMBLE(vm, "<continuation>", 3, 0, at, OP(BIND), OP(RESUME));
}

/* A rewrite of one instruction: opcode `from` becomes `to` where the next
 * instruction is opcode `then` with the one-byte operand `with` (ANY_NEXT:
 * whatever comes next; ANY_OPERAND: any operand). The two opcodes have
 * the same operand and stack effect. */
#define ANY_NEXT (-1)
#define ANY_OPERAND (-1)
typedef struct {
  uint8_t from, to;
  int then, with;
} Rewrite;

/* Apply the first of the `count` rewrites that fits to every instruction
 * some path of `chunk` reaches, in `code` (the chunk's own code or a
 * copy), in one walk: a bytecode file may hold bytes no path reaches,
 * which the verifier never read, so the instructions are found as the
 * verifier walks them, not byte after byte. */
static void rewrite_reachable(const Chunk *chunk, uint8_t *code, const Rewrite *rewrites, int count) {
  int n = chunk->count, pending = 0;
  bool *seen = xrealloc(NULL, (size_t)n + 1);
  int *work = xrealloc(NULL, (2 * (size_t)n + 1) * sizeof(int));
  memset(seen, 0, (size_t)n + 1);
  work[pending++] = 0;
  while (pending) {
    int at = work[--pending];
    if (at >= n || seen[at]) continue;
    seen[at] = true;
    uint8_t op = chunk->code[at];
    if (op >= OP_COUNT) continue; /* not verified code: nothing to follow */
    int next = at + opcode_size(op);
    for (int i = 0; i < count; i++) {
      const Rewrite *r = &rewrites[i];
      if (code[at] == r->from && (r->then == ANY_NEXT || (next + 1 < n && chunk->code[next] == r->then &&
                                                          (r->with == ANY_OPERAND || chunk->code[next + 1] == r->with)))) {
        code[at] = r->to;
        break;
      }
    }
    if (!(opcode_info[op].flags & OPF_ENDS)) work[pending++] = next;
    if (opcode_info[op].operand == OPERAND_JUMP && next <= n) work[pending++] = next + opcode_operand(chunk->code + at);
  }
  free(seen);
  free(work);
}

/* The rewrite of each nested prototype too. */
static void rewrite_all(ObjProto *proto, const Rewrite *rewrites, int count) {
  rewrite_reachable(&proto->chunk, proto->chunk.code, rewrites, count);
  for (int i = 0; i < proto->chunk.constants.count; i++)
    if (IS_PROTO(proto->chunk.constants.values[i])) rewrite_all(AS_PROTO(proto->chunk.constants.values[i]), rewrites, count);
}

void vm_place_continuations(VM *vm, ObjProto *proto) {
  static const Rewrite heap[] = {{OP_CALL_BIND, OP_CALL_BIND_HEAP, ANY_NEXT, ANY_OPERAND}};
  if (!vm->stack_continuations) rewrite_all(proto, heap, 1);
}

/* GET_LOCAL and the instruction after it, as one (vm/interp.c). */
static const Rewrite superinstructions[] = {
    {OP_GET_LOCAL, OP_LOCAL_IS_EMPTY, OP_NATIVE, BUILTIN_isEmpty}, {OP_GET_LOCAL, OP_LOCAL_HEAD, OP_NATIVE, BUILTIN_head},
    {OP_GET_LOCAL, OP_LOCAL_TAIL, OP_NATIVE, BUILTIN_tail},        {OP_GET_LOCAL, OP_LOCAL_CONS, OP_NATIVE, BUILTIN_cons},
    {OP_GET_LOCAL, OP_LOCAL_ADDI, OP_ADDI, ANY_OPERAND},           {OP_GET_LOCAL, OP_LOCAL_SUBI, OP_SUBI, ANY_OPERAND},
    {OP_GET_LOCAL, OP_LOCAL_LTI, OP_LTI, ANY_OPERAND},             {OP_GET_LOCAL, OP_LOCAL_LEI, OP_LEI, ANY_OPERAND}};
#define SUPERINSTRUCTIONS ((int)(sizeof superinstructions / sizeof superinstructions[0]))

void vm_place_superinstructions(ObjProto *proto) { rewrite_all(proto, superinstructions, SUPERINSTRUCTIONS); }

void vm_code_as_compiled(const ObjProto *proto, uint8_t *code) {
  /* every placed opcode back to the one it stands for */
  Rewrite back[1 + SUPERINSTRUCTIONS] = {{OP_CALL_BIND_HEAP, OP_CALL_BIND, ANY_NEXT, ANY_OPERAND}};
  for (int i = 0; i < SUPERINSTRUCTIONS; i++)
    back[1 + i] = (Rewrite){superinstructions[i].to, superinstructions[i].from, ANY_NEXT, ANY_OPERAND};
  memcpy(code, proto->chunk.code, (size_t)proto->chunk.count);
  rewrite_reachable(&proto->chunk, code, back, 1 + SUPERINSTRUCTIONS);
}

VM *vm_create(const VMConfig *config) {
  const char *defect = opcode_check_builtins();
  if (defect) { /* the tables disagree: nothing could run right */
    fprintf(stderr, "simvm: internal error: %s (vm/builtins.def, vm/opcodes.def)\n", defect);
    abort();
  }
  VM *vm = xrealloc(NULL, sizeof *vm);
  memset(vm, 0, sizeof *vm);
  vm->config = *config;
  vm->next_gc = 1024 * 1024;
  const char *stress = getenv("SIMVM_GC_STRESS");
  vm->gc_stress = stress && *stress && strcmp(stress, "0") != 0;
  gc_update_limit(vm);
  vm->stack_continuations = !config->heap_continuations;
  vm->direct_actions = !config->reify_actions;
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
  vm->catch_stm_closure = make_catch_stm(vm);
  vm->async_closure = make_async(vm);
  vm->prelude_async = make_async(vm);
  vm->prelude_async->proto->prelude = true;
  vm->async_thread_closure = make_async_thread(vm);
  vm->wait_stm_global = -1;
  vm->replicate_closure = make_replicate(vm);
  vm->traverse_closure = make_traverse(vm);
  static const char *const async_names[ASYNC_NAMES] = {"thread", "result", "var", "ok", "value", "exception", "waitSTM"};
  for (int i = 0; i < ASYNC_NAMES; i++) vm->async_names[i] = obj_cstring(vm, async_names[i]);
  vm->resume_closure = make_resume(vm);
  vm->retry_signal = obj_exception(vm, EXC_RETRY, NULL);
  vm->thread_killed = obj_exception(vm, EXC_KILLED, NULL);
  for (int i = 0; i < 3; i++) vm->mask_strings[i] = obj_cstring(vm, mask_names[i]);
  for (int i = 0; i < 3; i++) vm->timeout_states[i] = obj_cstring(vm, timeout_state_names[i]);
  vm->gc_paused--;
  return vm;
}

void vm_destroy(VM *vm) {
  events_stop(vm);
  buf_free(&vm->out);
  buf_free(&vm->stats_json);
  /* the heap points into objects about to be freed: empty it first */
  timer_heap_clear(&vm->timers);
  gc_free_all(vm);
  thread_pools_free(vm);
  timer_heap_free(&vm->timers);
  run_queue_free(&vm->run_queue);
  table_free(&vm->strings);
  table_free(&vm->global_index);
  profile_free(vm->profile);
  timeline_free(vm);
  value_array_free(&vm->globals);
  value_array_free(&vm->module_inits);
  free(vm->global_info);
  free(vm->young_owners);
  stm_log_free(vm);
  free(vm->due);
  while (vm->files) {
    FileName *next = vm->files->next;
    free(vm->files);
    vm->files = next;
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
  emit(&code, OP_GET_GLOBAL, index);
  emit(&code, OP_CALL, 0);
  emit(&code, OP_TAIL_BIND, 0);
  emit(&code, OP_RETURN, 0);
  return OBJ_VAL(boot_closure(vm, "<boot>", &code));
}

/* Empty the scheduler: the threads, timers and run queue a run left. */
static inline void reset_scheduler(VM *vm) {
  events_stop(vm); /* the run's sinks see nothing of its end */
  thread_release_all(vm);
  timer_heap_clear(&vm->timers);
  vm->run_queue.count = 0;
  vm->run_queue.head = 0;
  vm->main_thread = vm->current = vm->failed_thread = NULL;
  vm->result = vm->failure = UNIT_VAL;
}

/* Start a simulation at time 0 with a main thread running `action`. */
static SimStatus simulate(VM *vm, Value action) {
  vm->now = 0;
  vm->time_limit = vm->config.max_time >= 0 ? vm->config.max_time : INT64_MAX;
  vm->steps = 0;
  vm->work = 0;
  memset(vm->trace_bytes, 0, sizeof vm->trace_bytes);
  vm->trace_capped = 0;
  if (vm->stop == STOP_TRACE_SIZE) vm->stop = 0; /* a trace cap ends one run; vm_stop all */
  vm->heap_exceeded = vm->halted = false;
  vm->halted_bytes = 0;
  gc_update_limit(vm); /* --max-heap may have changed since the last run */
  vm_update_stop(vm);
  vm->timer_seq = vm->transaction_counter = vm->block_counter = 0;
  vm->stm.undo_count = vm->stm.read_count = 0; /* a run may stop inside a transaction */
  memset(&vm->stats, 0, sizeof vm->stats);
  buf_truncate(&vm->stats_json, 0);
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
    emit(&code, OP_CONST, chunk_add_constant(&code, vm->module_inits.values[i]));
    emit(&code, OP_BIND, 0);
    emit(&code, OP_POP, 0);
  }
  emit(&code, OP_UNIT, 0);
  emit(&code, OP_RETURN, 0);
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

void vm_begin_load(VM *vm) {
  vm_discard_run(vm); /* new code must not be allocated among a finished run's objects */
  vm->main_action = UNDEFINED_VAL; /* the new code may define main */
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

bool vm_write_stats_json(VM *vm, FILE *out) {
  if (vm->stats_json.length == 0) return fputs("null\n", out) >= 0;
  return fwrite(vm->stats_json.data, 1, vm->stats_json.length, out) == vm->stats_json.length && fputc('\n', out) != EOF;
}

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
