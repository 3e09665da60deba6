/* Builtin functions, described by vm/builtins.def.
 *
 * Two kinds: natives compute a value in C and never call back into the VM;
 * action builtins (delay, say, fork ...) build a primitive action value
 * whose opcode runs when the action is bound. In statement position the
 * compiler skips the value and emits that opcode directly. */
#ifndef SIMVM_BUILTINS_H
#define SIMVM_BUILTINS_H

#include "object.h"

/* A native: read args[0..arity-1], store the result, return true; or report
 * with rt_error() and return false. Natives may allocate (args are rooted). */
typedef bool (*NativeFn)(VM *vm, Value *args, Value *result);

struct Builtin {
  const char *name;
  int arity;
  NativeFn native;    /* NULL for action builtins   */
  int op;             /* the primitive opcode, or -1 */
};

/* The table, in vm/builtins.def order; builtin_count entries. */
extern const Builtin builtin_table[];
extern const int builtin_count;

/* The builtin named `name`, or NULL. */
const Builtin *builtin_find(const char *name);

/* Record a runtime error message (printf-style) for the interpreter to raise. */
void rt_error(VM *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
