/* Opcodes, generated from vm/opcodes.def (see the comment there). */
#ifndef SIMVM_OPCODES_H
#define SIMVM_OPCODES_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
#define OPCODE(name, operand, pops, pushes, flags, doc) OP_##name,
#include "opcodes.def"
#undef OPCODE
  OP_COUNT
} OpCode;

/* What an operand names (opcodes.def lists them); its width follows. */
typedef enum {
  OPERAND_NONE,
  OPERAND_LOCAL,
  OPERAND_UPVALUE,
  OPERAND_COUNT,
  OPERAND_IMM,
  OPERAND_SELF,
  OPERAND_SELF_ACTION,
  OPERAND_BUILTIN,
  OPERAND_NATIVE,
  OPERAND_CONST,
  OPERAND_NAME,
  OPERAND_DURATION,
  OPERAND_PROTO,
  OPERAND_GLOBAL,
  OPERAND_DEFINE,
  OPERAND_JUMP
} OperandKind;

/* Flags. */
#define OPF_ENDS        1u  /* control never falls through          */
#define OPF_VM_ONLY     2u  /* only in the VM's own prototypes      */
#define OPF_THEN_BIND   4u  /* a BIND must follow                   */
#define OPF_THEN_RETURN 8u  /* a RETURN must follow                 */

/* A pop or push count the handler decides (the VM's own code only). */
#define OPCODE_VAR 0x7fff

typedef struct {
  const char *name;      /* "BIND", as in the table                   */
  OperandKind operand;
  int width;             /* operand bytes: 0, 1 or 2                  */
  const char *pops;      /* the formulas as the table writes them     */
  const char *pushes;
  unsigned flags;        /* OPF_*                                     */
  const char *doc;       /* one-line semantics                        */
} OpInfo;

/* Indexed by OpCode. */
extern const OpInfo opcode_info[OP_COUNT];

/* Bytes taken by the instruction starting with `op` (1 + operand width). */
static inline int opcode_size(uint8_t op) { return 1 + opcode_info[op].width; }

/* The opcode the compiler wrote where the VM put a superinstruction
 * (vm_place_superinstructions), for listings; any other is itself. */
static inline uint8_t opcode_as_compiled(uint8_t op) {
  return op >= OP_LOCAL_IS_EMPTY && op <= OP_LOCAL_LEI ? OP_GET_LOCAL : op;
}

/* The operand of the instruction at `code` (0 when it has none; an IMM's
 * sign extended); the instruction must be whole. */
static inline int opcode_operand(const uint8_t *code) {
  switch (opcode_info[code[0]].width) {
    case 1: return opcode_info[code[0]].operand == OPERAND_IMM ? (int8_t)code[1] : code[1];
    case 2: return (code[1] << 8) | code[2];
    default: return 0;
  }
}

/* The values `op` with operand `operand` pops and then pushes, from the
 * table's formulas; OPCODE_VAR when the handler decides. An ACTION of a
 * builtin that builds no action pops OPCODE_VAR. */
int opcode_pops(uint8_t op, int operand);
int opcode_pushes(uint8_t op, int operand);

/* pushes - pops, or OPCODE_VAR. */
static inline int opcode_effect(uint8_t op, int operand) {
  int pops = opcode_pops(op, operand), pushes = opcode_pushes(op, operand);
  return pops == OPCODE_VAR || pushes == OPCODE_VAR ? OPCODE_VAR : pushes - pops;
}

/* NULL when every action builtin that has an opcode of its own (not PRIM)
 * names an operand-less script opcode popping as many values as the
 * builtin takes; otherwise what is wrong (a defect of the tables). */
const char *opcode_check_builtins(void);

#endif
