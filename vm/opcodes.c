#include "opcodes.h"

#define NONE OPERAND_NONE
#define U8 OPERAND_U8
#define U16 OPERAND_U16
#define VAR STACK_EFFECT_VAR
#define ANY false
#define VM true

const OpInfo opcode_info[OP_COUNT] = {
#define OPCODE(name, operand, pops, effect, where, doc) [OP_##name] = {#name, operand, pops, effect, where, doc},
#include "opcodes.def"
#undef OPCODE
};
