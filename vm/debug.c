#include "debug.h"

#include <stdio.h>

int debug_instruction(Buffer *out, const ObjProto *proto, int offset, const VM *vm) {
  const Chunk *chunk = &proto->chunk;
  uint8_t op = chunk->code[offset];
  if (op >= OP_COUNT) {
    buf_printf(out, "  %04d %4d  <bad opcode %d>\n", offset, chunk->lines[offset], op);
    return offset + 1;
  }
  const OpInfo *info = &opcode_info[op];
  bool same_line = offset > 0 && chunk->lines[offset] == chunk->lines[offset - 1];
  if (same_line) buf_printf(out, "  %04d    |  %-15s", offset, info->name);
  else buf_printf(out, "  %04d %4d  %-15s", offset, chunk->lines[offset], info->name);
  int operand = -1;
  if (offset + opcode_size(op) > chunk->count) {
    buf_printf(out, " <truncated>\n");
    return chunk->count;
  }
  if (info->operand == OPERAND_U8) operand = chunk->code[offset + 1];
  if (info->operand == OPERAND_U16) operand = (chunk->code[offset + 1] << 8) | chunk->code[offset + 2];
  if (opcode_info[op].operand == OPERAND_U8 && op >= OP_ADDI && op <= OP_GEI) operand = (int8_t)operand; /* immediates */
  if (info->operand != OPERAND_NONE) buf_printf(out, " %5d", operand);
  switch (op) {
    case OP_CLOSURE:
      if (operand < chunk->constants.count && IS_PROTO(chunk->constants.values[operand])) {
        const ObjProto *inner = AS_PROTO(chunk->constants.values[operand]);
        buf_printf(out, "    ; %s (%s:%d)", inner->name ? inner->name->chars : "?", inner->file, inner->line);
      }
      break;
    case OP_GET_GLOBAL:
    case OP_DEFINE_GLOBAL:
      if (vm && operand < vm->globals.count) buf_printf(out, "    ; %s", vm->global_info[operand].name->chars);
      break;
    case OP_CONST:
    case OP_DELAY_K:
    case OP_SAY_K:
    case OP_FIELD:
    case OP_LABEL_NEW:
      if (operand < chunk->constants.count) {
        buf_append(out, "    ; ", 6);
        value_show(out, chunk->constants.values[operand], true);
      }
      break;
    case OP_JUMP:
    case OP_JUMP_IF_FALSE:
      buf_printf(out, "    ; to %04d", offset + 3 + operand);
      break;
    case OP_ACTION:
    case OP_PRIM:
      if (operand < builtin_count) buf_printf(out, "    ; %s", builtin_table[operand].name);
      break;
    default:
      break;
  }
  buf_append(out, "\n", 1);
  return offset + opcode_size(op);
}

void debug_list_proto(Buffer *out, const ObjProto *proto, const VM *vm) {
  static const char *kinds[] = {"function", "action function", "block", "script", "internal"};
  buf_printf(out, "%s %s (%s:%d): %d param%s, %d slots, %d upvalue%s, %d constants, %d bytes\n",
             kinds[proto->kind], proto->name ? proto->name->chars : "?", proto->file, proto->line, proto->arity,
             proto->arity == 1 ? "" : "s", proto->max_slots, proto->upvalue_count,
             proto->upvalue_count == 1 ? "" : "s", proto->chunk.constants.count, proto->chunk.count);
  for (int offset = 0; offset < proto->chunk.count;) offset = debug_instruction(out, proto, offset, vm);
  buf_append(out, "\n", 1);
  for (int i = 0; i < proto->chunk.constants.count; i++) {
    Value constant = proto->chunk.constants.values[i];
    if (IS_PROTO(constant)) debug_list_proto(out, AS_PROTO(constant), vm);
  }
}
