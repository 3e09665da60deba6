/* The bytecode verifier (see verify.h).
 *
 * Every rule compares an operand with state the verifier tracks itself: the
 * stack depth at that instruction (found by walking every path), the
 * constant pool, the globals declared, the builtin table, and the upvalues
 * of the function. The only numbers taken from the file are those the
 * interpreter obeys too: max_slots (the stack it reserves for a frame),
 * arity (the arguments a call must pass) and upvalue_count (the values a
 * closure of it holds). The rules on operands, stack effects and what
 * must follow come from the opcode table (vm/value/opcodes.def): one rule per
 * operand kind and flag, not per opcode. Each rule is one line, with its
 * message, so that tests/unit/test_verify.c can name them all, and
 * tools/verify_mutants.sh proves each is needed. */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>

#include "../vm/interp/builtins.h"

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

/* `format` with the opcode's name, in `why`. */
static const char *named(char *why, size_t size, const char *format, const char *name) {
  snprintf(why, size, format, name);
  return why;
}

/* Why the operand of `op` (`operand`, at an instruction where the stack is
 * `depth` deep, the next instruction at `next`) is wrong, or NULL: each
 * operand kind of the opcode table has its rules here, so a new opcode
 * needs none of its own. */
static const char *check_operand(const VM *vm, const ObjProto *proto, uint8_t op, int operand, int depth, int next,
                                 char *why, size_t size) {
  const char *name = opcode_info[op].name;
  const ValueArray *k = &proto->chunk.constants;
  switch (opcode_info[op].operand) {
    case OPERAND_NONE:
    case OPERAND_COUNT:
    case OPERAND_IMM:
      break;
    case OPERAND_SELF:
      if (proto->kind != PROTO_FUNCTION) return "a value function's self call in another kind of prototype";
      if (operand != proto->arity) return "a self call that is not of this value function's arity";
      break;
    case OPERAND_SELF_ACTION:
      if (proto->kind != PROTO_ACTION_FN) return "an action function's self call in another kind of prototype";
      if (operand > proto->arity) return "a self call with more arguments than this action function has parameters";
      break;
    case OPERAND_LOCAL:
      if (operand >= depth) return "a local slot beyond the stack";
      break;
    case OPERAND_UPVALUE:
      if (operand >= proto->upvalue_count) return "an upvalue out of range";
      break;
    case OPERAND_GLOBAL:
      if (operand >= vm->globals.count) return "a global out of range";
      break;
    case OPERAND_DEFINE:
      if (operand >= vm->globals.count) return "a global out of range";
      if (operand < builtin_count) return "a definition of a builtin";
      break;
    case OPERAND_JUMP:
      if (next + operand > proto->chunk.count) return "a jump off the end of the code";
      break;
    case OPERAND_BUILTIN:
      if (operand >= builtin_count) return named(why, size, "%s of a builtin that does not exist", name);
      if (!builtin_is_action(&builtin_table[operand])) return named(why, size, "%s of a builtin that is not an action", name);
      break;
    case OPERAND_NATIVE:
      if (operand >= builtin_count) return named(why, size, "%s of a builtin that does not exist", name);
      if (builtin_is_action(&builtin_table[operand])) return named(why, size, "%s of a builtin that is an action", name);
      break;
    case OPERAND_CONST:
      if (operand >= k->count) return "a constant out of range";
      if (IS_PROTO(k->values[operand])) return named(why, size, "%s of a prototype (only CLOSURE may use one)", name);
      break;
    case OPERAND_NAME:
      if (operand >= k->count) return "a constant out of range";
      if (!IS_STRING(k->values[operand])) return named(why, size, "%s of a constant that is not a name", name);
      break;
    case OPERAND_DURATION:
      if (operand >= k->count) return "a constant out of range";
      if (!IS_DURATION(k->values[operand]) || AS_DURATION(k->values[operand]) < 0)
        return named(why, size, "%s of a constant that is not a duration of 0 or more", name);
      break;
    case OPERAND_PROTO:
      if (operand >= k->count) return "a constant out of range";
      if (!IS_PROTO(k->values[operand])) return named(why, size, "%s of a constant that is not a prototype", name);
      return check_captures(proto, AS_PROTO(k->values[operand]), depth, why, size);
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
    int operand = 0, effect = 0, next = at + 1, jump = -1;
    if (op >= OP_COUNT) why = "an unknown opcode";
    else if (opcode_info[op].flags & OPF_VM_ONLY) why = "an opcode only the VM may use";
    else if (at + opcode_size(op) > n) why = "an instruction cut off by the end of the code";
    if (!why) {
      const OpInfo *info = &opcode_info[op];
      next = at + opcode_size(op);
      operand = opcode_operand(chunk->code + at);
      if (info->operand == OPERAND_JUMP) jump = next + operand;
      /* the pops and pushes of the table; a formula the handler decides
       * (OPCODE_VAR, the VM's own opcodes only) fails the depth rules */
      int pops = opcode_pops(op, operand);
      effect = opcode_effect(op, operand);
      int then = info->flags & OPF_THEN_BIND ? OP_BIND : info->flags & OPF_THEN_RETURN ? OP_RETURN : -1;
      if (then >= 0 && next >= n) why = named(why_text, sizeof why_text, "%s at the end of the code", info->name);
      else if (then >= 0 && chunk->code[next] != then) {
        snprintf(why_text, sizeof why_text, "%s not followed by %s", info->name, opcode_info[then].name);
        why = why_text;
      } else {
        why = check_operand(vm, proto, op, operand, d, next, why_text, sizeof why_text);
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
    int targets[2] = {opcode_info[op].flags & OPF_ENDS ? -1 : next, jump};
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
