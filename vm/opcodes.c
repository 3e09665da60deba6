/* The opcode table and its formulas, from vm/opcodes.def. */
#include "opcodes.h"

#include <stdio.h>

#include "builtins.h"

/* Each operand kind's width in bytes. */
#define WIDTH_NONE 0
#define WIDTH_LOCAL 1
#define WIDTH_UPVALUE 1
#define WIDTH_COUNT 1
#define WIDTH_BUILTIN 1
#define WIDTH_CONST 2
#define WIDTH_NAME 2
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

/* The parameters of the action builtin A, or OPCODE_VAR. */
static int action_arity(int a) {
  return a < builtin_count && builtin_table[a].op >= 0 ? builtin_table[a].arity : OPCODE_VAR;
}

/* The formulas' names: the operand is A. */
#define ARITY action_arity(A)
#define VAR OPCODE_VAR

int opcode_pops(uint8_t op, int A) {
  (void)A;
  switch (op) {
#define OPCODE(name, operand, pops, pushes, flags, doc) \
  case OP_##name: return (pops);
#include "opcodes.def"
#undef OPCODE
    default: return OPCODE_VAR;
  }
}

int opcode_pushes(uint8_t op, int A) {
  (void)A;
  switch (op) {
#define OPCODE(name, operand, pops, pushes, flags, doc) \
  case OP_##name: return (pushes);
#include "opcodes.def"
#undef OPCODE
    default: return OPCODE_VAR;
  }
}

const char *opcode_check_builtins(void) {
  static char why[160];
  for (int i = 0; i < builtin_count; i++) {
    const Builtin *b = &builtin_table[i];
    if (b->op < 0) continue;
    if (b->op >= OP_COUNT || opcode_info[b->op].width || (opcode_info[b->op].flags & OPF_VM_ONLY)) {
      snprintf(why, sizeof why, "builtin '%s' names an opcode that is not a script's operand-less one", b->name);
      return why;
    }
    if (opcode_pops((uint8_t)b->op, 0) != b->arity) {
      snprintf(why, sizeof why, "builtin '%s' takes %d arguments, its opcode %s pops %s", b->name, b->arity,
               opcode_info[b->op].name, opcode_info[b->op].pops);
      return why;
    }
  }
  return NULL;
}
