/* Debug information: where running code is in the script (frames, raises),
 * read from the chunks' line tables, and the disassembler (simc -l),
 * driven by the opcode table. Below the interpreter and the scheduler,
 * which both report places. */
#ifndef SIMVM_DEBUG_H
#define SIMVM_DEBUG_H

#include "state.h"

/* List `proto` and, after it, every prototype in its constant pool. With a
 * VM, global operands are annotated with the globals' names. */
void debug_list_proto(Buffer *out, const ObjProto *proto, const VM *vm);

/* Append one instruction at `offset`; returns the next instruction's offset.
 * `vm` may be NULL (no names for globals). */
int debug_instruction(Buffer *out, const ObjProto *proto, int offset, const VM *vm);

/* The script position of a frame, "what the user would call it": false for
 * the VM's own frames; a -O0 continuation frame reports the frame it holds. */
bool debug_frame_location(VM *vm, const CallFrame *frame, const ObjProto **proto, int *line);

/* `thread` raises `exc`, thrown by `from` (NULL: by itself): remember who
 * and where, for the report if it dies of it. Raising again the exception
 * it last raised itself (a handler passing it on) changes nothing. */
void debug_note_raise(VM *vm, ObjThread *thread, Value exc, ObjThread *from);

#endif
