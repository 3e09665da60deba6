/* The opcode table's pops and pushes formulas (vm/opcodes.def), and the
 * check that the action builtins agree with their opcodes. */
#include "opcodes.h"

#include <stdio.h>

#include "builtins.h"

/* The parameters of builtin A, or OPCODE_VAR when there is none (the
 * verifier's rule for the operand's kind says whether it may be an action
 * or a function). */
static int builtin_arity(int a) { return a < builtin_count ? builtin_table[a].arity : OPCODE_VAR; }

/* The formulas' names: the operand is A. */
#define ARITY builtin_arity(A)
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
    if (!builtin_is_action(b) || b->op == OP_PRIM) continue;
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
