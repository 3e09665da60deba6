#include "debug.h"
#include "show.h"
#include "builtins.h"

#include <stdio.h>

int debug_instruction(Buffer *out, const ObjProto *proto, int offset, const VM *vm) {
  const Chunk *chunk = &proto->chunk;
  uint8_t op = opcode_as_compiled(chunk->code[offset]);
  if (op >= OP_COUNT) {
    buf_printf(out, "  %04d %4d  <bad opcode %d>\n", offset, chunk->lines[offset], op);
    return offset + 1;
  }
  const OpInfo *info = &opcode_info[op];
  bool same_line = offset > 0 && chunk->lines[offset] == chunk->lines[offset - 1];
  if (same_line) buf_printf(out, "  %04d    |  %-15s", offset, info->name);
  else buf_printf(out, "  %04d %4d  %-15s", offset, chunk->lines[offset], info->name);
  if (offset + opcode_size(op) > chunk->count) {
    buf_printf(out, " <truncated>\n");
    return chunk->count;
  }
  int operand = opcode_operand(chunk->code + offset);
  if (info->width) buf_printf(out, " %5d", operand);
  /* what the operand names, by its kind */
  const ValueArray *k = &chunk->constants;
  switch (info->operand) {
    case OPERAND_PROTO:
      if (operand < k->count && IS_PROTO(k->values[operand])) {
        const ObjProto *inner = AS_PROTO(k->values[operand]);
        buf_printf(out, "    ; %s (%s:%d)", inner->name ? inner->name->chars : "?", inner->file, inner->line);
      }
      break;
    case OPERAND_GLOBAL:
    case OPERAND_DEFINE:
      if (vm && operand < vm->globals.count) buf_printf(out, "    ; %s", vm->global_info[operand].name->chars);
      break;
    case OPERAND_CONST:
    case OPERAND_NAME:
    case OPERAND_DURATION:
      if (operand < k->count) {
        buf_append(out, "    ; ", 6);
        value_show(out, k->values[operand], true);
      }
      break;
    case OPERAND_JUMP:
      buf_printf(out, "    ; to %04d", offset + opcode_size(op) + operand);
      break;
    case OPERAND_BUILTIN:
    case OPERAND_NATIVE:
      if (operand < builtin_count) buf_printf(out, "    ; %s", builtin_table[operand].name);
      break;
    case OPERAND_NONE:
    case OPERAND_LOCAL:
    case OPERAND_UPVALUE:
    case OPERAND_COUNT:
    case OPERAND_IMM:
    case OPERAND_SELF:
    case OPERAND_SELF_ACTION:
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
