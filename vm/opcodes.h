/* Opcodes, generated from vm/opcodes.def (see the comment there). */
#ifndef SIMVM_OPCODES_H
#define SIMVM_OPCODES_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
#define OPCODE(name, operand, pops, effect, where, doc) OP_##name,
#include "opcodes.def"
#undef OPCODE
  OP_COUNT
} OpCode;

/* Operand shapes. */
typedef enum { OPERAND_NONE = 0, OPERAND_U8 = 1, OPERAND_U16 = 2 } OperandShape;

/* Marks a stack effect that depends on the operand. */
#define STACK_EFFECT_VAR 0x7fff

typedef struct {
  const char *name;      /* "BIND", as in the table           */
  OperandShape operand;  /* also the operand's width in bytes */
  int pops;              /* values read from the stack, or STACK_EFFECT_VAR */
  int stack_effect;      /* or STACK_EFFECT_VAR               */
  bool vm_only;          /* only in the VM's own prototypes   */
  const char *doc;       /* one-line semantics                */
} OpInfo;

/* Indexed by OpCode. */
extern const OpInfo opcode_info[OP_COUNT];

/* Bytes taken by the instruction starting with `op` (1 + operand width). */
static inline int opcode_size(uint8_t op) { return 1 + (int)opcode_info[op].operand; }

#endif
