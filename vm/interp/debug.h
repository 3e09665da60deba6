/* The disassembler: bytecode listings for `simc -l`, driven by the opcode
 * table's operand kinds. */
#ifndef SIMVM_DEBUG_H
#define SIMVM_DEBUG_H

#include "state.h"

/* List `proto` and, after it, every prototype in its constant pool. With a
 * VM, global operands are annotated with the globals' names. */
void debug_list_proto(Buffer *out, const ObjProto *proto, const VM *vm);

/* Append one instruction at `offset`; returns the next instruction's offset.
 * `vm` may be NULL (no names for globals). */
int debug_instruction(Buffer *out, const ObjProto *proto, int offset, const VM *vm);

#endif
