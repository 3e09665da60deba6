/* The bytecode verifier (see verify.h).
 *
 * Every rule compares an operand with state the verifier tracks itself: the
 * stack depth at that instruction (found by walking every path), the
 * constant pool, the globals declared, the builtin table, and the upvalues
 * of the function. The only numbers taken from the file are those the
 * interpreter obeys too: max_slots (the stack it reserves for a frame),
 * arity (the arguments a call must pass) and upvalue_count (the values a
 * closure of it holds). Each rule is one line, with its message, so that
 * tests/unit/test_verify.c can name them all. */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>

#include "builtins.h"

bool verify_stack_effect(uint8_t op, int operand, int *pops, int *effect) {
  const OpInfo *info = &opcode_info[op];
  *pops = info->pops;
  *effect = info->stack_effect;
  switch (op) {
    case OP_SLIDE: *pops = operand + 1; *effect = -operand; break;
    case OP_LIST: *pops = operand; *effect = 1 - operand; break;
    case OP_RECORD: *pops = 2 * operand; *effect = 1 - 2 * operand; break;
    case OP_CALL: case OP_TAIL_CALL: case OP_CALL_BIND: case OP_TAIL_CALL_BIND:
      *pops = operand + 1; *effect = -operand; break;
    case OP_RETURN: *effect = -1; break;
    case OP_CALL_SELF: *pops = operand + 1; *effect = -operand; break;
    case OP_TAIL_SELF: case OP_TAIL_SELF_BIND: *pops = operand; *effect = 1 - operand; break;
    case OP_ACTION:
    case OP_PRIM:
    case OP_NATIVE:
      if (operand < builtin_count && builtin_is_action(&builtin_table[operand]) == (op != OP_NATIVE)) {
        *pops = builtin_table[operand].arity;
        *effect = 1 - *pops;
      }
      break;
    default: break;
  }
  return *pops != STACK_EFFECT_VAR && *effect != STACK_EFFECT_VAR;
}

/* Why the closure `inner` cannot be made by a CLOSURE instruction of
 * `proto` with the stack `depth` deep, or NULL: each capture copies a slot
 * of the live stack or an upvalue of the function making the closure. */
static const char *check_captures(const ObjProto *proto, const ObjProto *inner, int depth, char *why, size_t size) {
  for (int i = 0; i < inner->upvalue_count; i++) {
    int from_local = inner->captures[2 * i], index = inner->captures[2 * i + 1];
    if (from_local > 1) snprintf(why, size, "CLOSURE of '%s': capture %d has an unknown kind %d", inner->name->chars, i, from_local);
    else if (from_local && index >= depth) snprintf(why, size, "CLOSURE of '%s': capture %d copies slot %d of a stack %d deep", inner->name->chars, i, index, depth);
    else if (!from_local && index >= proto->upvalue_count) snprintf(why, size, "CLOSURE of '%s': capture %d copies upvalue %d of %d", inner->name->chars, i, index, proto->upvalue_count);
    else continue;
    return why;
  }
  return NULL;
}

/* Walk every path of the code, tracking the stack depth, so the interpreter
 * can run it without further checks on operands, jumps or the stack. */
bool verify_proto(VM *vm, const ObjProto *proto, bool top_level, char *error, size_t size) {
  const Chunk *chunk = &proto->chunk;
  const char *name = proto->name->chars;
  int n = chunk->count, first_slot = 1 + proto->arity;
  if (proto->max_slots < first_slot) {
    snprintf(error, size, "%s (%s:%d): %d slots cannot hold the callee and %d parameters", name, proto->file,
             proto->line, proto->max_slots, proto->arity);
    return false;
  }
  const char *shape = NULL;
  if (proto->kind != PROTO_FUNCTION && proto->kind != PROTO_ACTION_FN && proto->arity) shape = "a block with parameters";
  if (top_level && proto->upvalue_count) shape = "a module's top level with captured variables";
  if (n == 0) shape = "no code";
  if (shape) {
    snprintf(error, size, "%s (%s:%d): %s", name, proto->file, proto->line, shape);
    return false;
  }
  int *depth = xrealloc(NULL, (size_t)(n + 1) * sizeof(int));
  int *work = xrealloc(NULL, (size_t)(n + 1) * sizeof(int));
  for (int i = 0; i <= n; i++) depth[i] = -1;
  int pending = 0;
  bool ok = true;
  char why_text[160];
  depth[0] = first_slot;
  work[pending++] = 0;
  while (ok && pending) {
    int at = work[--pending], d = depth[at];
    uint8_t op = chunk->code[at];
    const char *why = NULL;
    int operand = 0, pops = 0, effect = 0, next = at + 1, jump = -1;
    if (op >= OP_COUNT) why = "an unknown opcode";
    else if (opcode_info[op].vm_only) why = "an opcode only the VM may use";
    else if (at + opcode_size(op) > n) why = "an instruction cut off by the end of the code";
    if (!why) {
      const OpInfo *info = &opcode_info[op];
      const ValueArray *k = &chunk->constants;
      next = at + opcode_size(op);
      if (info->operand == OPERAND_U8) operand = chunk->code[at + 1];
      if (info->operand == OPERAND_U16) operand = (chunk->code[at + 1] << 8) | chunk->code[at + 2];
      if (!verify_stack_effect(op, operand, &pops, &effect)) why = "an opcode with an unknown stack effect";
      switch (op) {
        case OP_CALL_BIND: if (next >= n || chunk->code[next] != OP_BIND) why = "CALL_BIND not followed by BIND"; break;
        case OP_TAIL_BIND: if (next >= n || chunk->code[next] != OP_RETURN) why = "TAIL_BIND not followed by RETURN"; break;
        case OP_ACTION: if (operand >= builtin_count || !builtin_is_action(&builtin_table[operand])) why = "ACTION of a builtin that is not an action"; break;
        case OP_PRIM: if (operand >= builtin_count || !builtin_is_action(&builtin_table[operand])) why = "PRIM of a builtin that is not an action"; break;
        case OP_NATIVE: if (operand >= builtin_count || builtin_is_action(&builtin_table[operand])) why = "NATIVE of a builtin that is an action, or none"; break;
        case OP_CONST:
        case OP_DELAY_K:
        case OP_SAY_K:
          if (operand >= k->count) why = "a constant out of range";
          else if (IS_PROTO(k->values[operand])) why = "CONST of a prototype (only CLOSURE may use one)";
          break;
        case OP_CLOSURE:
          if (operand >= k->count || !IS_PROTO(k->values[operand])) why = "CLOSURE of a constant that is not a prototype";
          else why = check_captures(proto, AS_PROTO(k->values[operand]), d, why_text, sizeof why_text);
          break;
        case OP_FIELD: if (operand >= k->count || !IS_STRING(k->values[operand])) why = "FIELD of a constant that is not a name"; break;
        case OP_LABEL_NEW: if (operand >= k->count || !IS_STRING(k->values[operand])) why = "LABEL_NEW of a constant that is not a name"; break;
        case OP_GET_LOCAL: if (operand >= d) why = "a local slot beyond the stack"; break;
        case OP_GET_UPVALUE: if (operand >= proto->upvalue_count) why = "an upvalue out of range"; break;
        case OP_GET_GLOBAL: if (operand >= vm->globals.count) why = "a global out of range"; break;
        case OP_DEFINE_GLOBAL:
          if (operand >= vm->globals.count) why = "a global out of range";
          else if (operand < builtin_count) why = "a definition of a builtin";
          break;
        case OP_JUMP: case OP_JUMP_IF_FALSE: jump = next + operand; if (jump > n) why = "a jump off the end of the code"; break;
        case OP_CALL_SELF: case OP_TAIL_SELF:
          if (proto->kind != PROTO_FUNCTION || operand != proto->arity) why = "a self call that is not of this value function's arity";
          break;
        case OP_TAIL_SELF_BIND:
          if (proto->kind != PROTO_ACTION_FN || operand != proto->arity) why = "a self call that is not of this action function's arity";
          break;
        default: break;
      }
      if (!why && d - pops < 1) why = "a stack underflow";
      if (!why && d + effect > proto->max_slots) why = "a stack deeper than the frame's slots";
    }
    if (why) {
      snprintf(error, size, "%s (%s:%d): %s at offset %d", name, proto->file, proto->line, why, at);
      ok = false;
      break;
    }
    int after = d + effect;
    bool ends = op == OP_RETURN || op == OP_JUMP || op == OP_TAIL_SELF || op == OP_TAIL_SELF_BIND;
    int targets[2] = {ends ? -1 : next, jump};
    for (int t = 0; t < 2 && ok; t++) {
      int target = targets[t];
      if (target < 0) continue;
      if (target >= n) {
        snprintf(error, size, "%s (%s:%d): the code runs off its end after offset %d", name, proto->file,
                 proto->line, at);
        ok = false;
      } else if (depth[target] < 0) {
        depth[target] = after;
        work[pending++] = target;
      } else if (depth[target] != after) {
        snprintf(error, size, "%s (%s:%d): paths meet at offset %d with different stack depths", name,
                 proto->file, proto->line, target);
        ok = false;
      }
    }
  }
  free(depth);
  free(work);
  return ok;
}
