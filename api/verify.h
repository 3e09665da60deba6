/* The bytecode verifier: what makes a prototype read from a bytecode file
 * safe to run without further checks in the interpreter.
 *
 * It walks every path through the code, tracking the stack depth at each
 * instruction, and checks every operand against that tracked state (the
 * depth, the constant pool, the globals, the builtins, the captures of the
 * closure being made) so that the interpreter can run the code with no
 * check on operands, jumps or the stack. */
#ifndef SIMVM_VERIFY_H
#define SIMVM_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../vm/runtime/state.h"

/* Check `proto` and every CLOSURE it makes of the prototypes in its
 * constant pool (their own code is checked when they are read, before it).
 * A module's top level (`top_level`) runs with no enclosing function, so it
 * may capture nothing. On failure the reason, "NAME (FILE:LINE): WHAT at
 * offset N", is written to `error` and false returned. */
bool verify_proto(VM *vm, const ObjProto *proto, bool top_level, char *error, size_t size);

#endif
