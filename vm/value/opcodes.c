/* The opcode table, from vm/opcodes.def (its formulas are in
 * opcode_effects.c, apart: they read the builtin table, which points at
 * the primitives, and the table here is read by all, the profiler's
 * names included). */
#include "opcodes.h"

/* Each operand kind's width in bytes. */
#define WIDTH_NONE 0
#define WIDTH_LOCAL 1
#define WIDTH_UPVALUE 1
#define WIDTH_COUNT 1
#define WIDTH_IMM 1
#define WIDTH_SELF 1
#define WIDTH_SELF_ACTION 1
#define WIDTH_BUILTIN 1
#define WIDTH_NATIVE 1
#define WIDTH_CONST 2
#define WIDTH_NAME 2
#define WIDTH_DURATION 2
#define WIDTH_PROTO 2
#define WIDTH_GLOBAL 2
#define WIDTH_DEFINE 2
#define WIDTH_JUMP 2

/* The flags' names in the table. */
#define ENDS OPF_ENDS
#define VM_ONLY OPF_VM_ONLY
#define THEN_BIND OPF_THEN_BIND
#define THEN_RETURN OPF_THEN_RETURN

const OpInfo opcode_info[OP_COUNT] = {
#define OPCODE(name, operand, pops, pushes, flags, doc) \
  [OP_##name] = {#name, OPERAND_##operand, WIDTH_##operand, #pops, #pushes, flags, doc},
#include "opcodes.def"
#undef OPCODE
};
