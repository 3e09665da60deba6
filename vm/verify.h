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

#include "state.h"

/* Check `proto`, whose nested prototypes (its constants) have been checked
 * already; `enclosing` is the prototype whose code makes closures of it, or
 * NULL for a module's top level. On failure the reason is written to
 * `error` and false returned. */
bool verify_proto(VM *vm, const ObjProto *proto, const ObjProto *enclosing, char *error, size_t size);

#endif
