/* The bytecode verifier (see verify.h). */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>

#include "builtins.h"

#define FAIL(...)                            \
  do {                                       \
    snprintf(error, size, __VA_ARGS__);      \
    return false;                            \
  } while (0)

static bool is_terminator(uint8_t op) { return op == OP_RETURN; }

/* Walk every path of the code, tracking the stack depth, so the interpreter
 * can run it without further checks on operands, jumps or the stack. */
bool verify_proto(VM *vm, const ObjProto *proto, const ObjProto *enclosing, char *error, size_t size) {
  const Chunk *chunk = &proto->chunk;
  int n = chunk->count, first_slot = 1 + proto->arity;
  if (proto->max_slots < first_slot) FAIL("%s: %d slots cannot hold %d parameters", proto->name->chars, proto->max_slots, proto->arity);
  for (int i = 0; i < proto->upvalue_count; i++) {
    int from_local = proto->captures[2 * i], index = proto->captures[2 * i + 1];
    if (from_local > 1 || !enclosing || index >= (from_local ? enclosing->max_slots : enclosing->upvalue_count))
      FAIL("%s: capture %d is out of range", proto->name->chars, i);
  }
  int *depth = xrealloc(NULL, (size_t)(n + 1) * sizeof(int));
  int *work = xrealloc(NULL, (size_t)(n + 1) * sizeof(int));
  for (int i = 0; i <= n; i++) depth[i] = -1;
  int pending = 0;
  bool ok = n > 0;
  if (!ok) snprintf(error, size, "%s: no code", proto->name->chars);
  if (ok) {
    depth[0] = first_slot;
    work[pending++] = 0;
  }
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
      next = at + opcode_size(op);
      if (info->operand == OPERAND_U8) operand = chunk->code[at + 1];
      if (info->operand == OPERAND_U16) operand = (chunk->code[at + 1] << 8) | chunk->code[at + 2];
      pops = info->pops;
      effect = info->stack_effect;
      const ValueArray *k = &chunk->constants;
      switch (op) {
        case OP_SLIDE: pops = operand + 1; effect = -operand; break;
        case OP_LIST: pops = operand; effect = 1 - operand; break;
        case OP_RECORD: pops = 2 * operand; effect = 1 - 2 * operand; break;
        case OP_CALL_BIND:
          if (next >= n || chunk->code[next] != OP_BIND) why = "CALL_BIND not followed by BIND";
          pops = operand + 1; effect = -operand; break;
        case OP_CALL: case OP_TAIL_CALL: case OP_TAIL_CALL_BIND:
          pops = operand + 1; effect = -operand; break;
        case OP_RETURN: effect = -1; break;
        case OP_ACTION:
          if (operand >= builtin_count || builtin_table[operand].op < 0) why = "ACTION of a builtin that is not an action";
          else { pops = builtin_table[operand].arity; effect = 1 - pops; }
          break;
        case OP_CONST: if (operand >= k->count) why = "a constant out of range"; break;
        case OP_CLOSURE: if (operand >= k->count || !IS_PROTO(k->values[operand])) why = "CLOSURE of a constant that is not a prototype"; break;
        case OP_FIELD: if (operand >= k->count || !IS_STRING(k->values[operand])) why = "FIELD of a constant that is not a name"; break;
        case OP_GET_LOCAL: if (operand >= d) why = "a local slot beyond the stack"; break;
        case OP_GET_UPVALUE: if (operand >= proto->upvalue_count) why = "an upvalue out of range"; break;
        case OP_GET_GLOBAL: case OP_DEFINE_GLOBAL: if (operand >= vm->globals.count) why = "a global out of range"; break;
        case OP_JUMP: case OP_JUMP_IF_FALSE: jump = next + operand; if (jump > n) why = "a jump off the end of the code"; break;
        default: break;
      }
      if (op == OP_TAIL_BIND && (next >= n || chunk->code[next] != OP_RETURN)) why = "TAIL_BIND not followed by RETURN";
      if (!why && (pops == STACK_EFFECT_VAR || effect == STACK_EFFECT_VAR)) why = "an opcode with an unknown stack effect";
      if (!why && op == OP_DEFINE_GLOBAL && operand < builtin_count) why = "a definition of a builtin";
      if (!why && d - pops < 1) why = "a stack underflow";
      if (!why && d + effect > proto->max_slots) why = "a stack deeper than the frame's slots";
    }
    if (why) {
      snprintf(error, size, "%s (%s:%d): %s at offset %d", proto->name->chars, proto->file, proto->line, why, at);
      ok = false;
      break;
    }
    int after = d + effect;
    int targets[2] = {is_terminator(op) ? -1 : next, jump};
    if (op == OP_JUMP) targets[0] = -1;
    for (int t = 0; t < 2 && ok; t++) {
      int target = targets[t];
      if (target < 0) continue;
      if (target >= n) {
        snprintf(error, size, "%s (%s:%d): the code runs off its end after offset %d", proto->name->chars,
                 proto->file, proto->line, at);
        ok = false;
      } else if (depth[target] < 0) {
        depth[target] = after;
        work[pending++] = target;
      } else if (depth[target] != after) {
        snprintf(error, size, "%s (%s:%d): paths meet at offset %d with different stack depths",
                 proto->name->chars, proto->file, proto->line, target);
        ok = false;
      }
    }
  }
  free(depth);
  free(work);
  return ok;
}

