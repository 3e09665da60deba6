/* The compiler: AST -> bytecode prototypes.
 *
 * Expressions compile to code that computes a value. Statements of a block
 * compile to code that *runs* actions: `x <- e` evaluates e to an action and
 * binds it (OP_BIND: the rest of the frame is the one-shot continuation,
 * living on the thread's own frame stack); the last statement runs in tail
 * position (OP_TAIL_BIND), so loops written as recursion run in constant
 * stack. With optimisation on (the default) a builtin action called in
 * statement position becomes its opcode (`delay(e)` -> DELAY), and blocks,
 * `>>`, `>>=`, `if` and `let` in statement position are compiled inline
 * instead of being built as action values and bound. */
#ifndef SIMVM_COMPILER_H
#define SIMVM_COMPILER_H

#include "../lang/ast.h"
#include "../lang/diag.h"
#include "../vm/runtime/state.h"

/* Compile a parsed module. Declares its top-level names as globals and
 * returns its initialisation action (a block closure that defines them), or
 * NULL after reporting errors on `diag`. The caller pauses the GC. */
ObjClosure *compile_module(VM *vm, const Source *source, const Module *module, Diag *diag);

#endif
