/* The disassembler: bytecode listings for `simc -l`, driven by the opcode table. */
#ifndef SIMVM_DEBUG_H
#define SIMVM_DEBUG_H

#include "state.h"

/* List `proto` and, after it, every prototype in its constant pool. */
void debug_list_proto(Buffer *out, const ObjProto *proto);

/* Append one instruction at `offset`; returns the next instruction's offset. */
int debug_instruction(Buffer *out, const ObjProto *proto, int offset);

#endif
