/* Builtins, described by vm/interp/builtins.def.
 *
 * An interface header (tools/layers.sh): the layers below vm/interp/ may
 * include it too, as a builtin value points at its entry of the table and
 * an action value holds its index (show and object names), and
 * the explorer names an exception's kind (exception_kind_name).
 *
 * Two kinds: natives compute a value in C and never call back into the VM;
 * action builtins (delay, say, fork ...) build a primitive action value
 * whose function (vm/prim.h) runs when the action is bound. In statement
 * position the compiler skips the value and emits the instruction that
 * runs it directly (PRIM, or the builtin's own opcode). */
#ifndef SIMVM_BUILTINS_H
#define SIMVM_BUILTINS_H

#include "object.h"

/* A native: read args[0..arity-1] (already checked against the builtin's
 * argument types), store the result, return true; or report with
 * rt_error() and return false. Natives may allocate (args are rooted). */
typedef bool (*NativeFn)(VM *vm, Value *args, Value *result);

#define BUILTIN_MAX_ARGS 3

struct Builtin {
  const char *name;
  int arity;
  uint8_t args[BUILTIN_MAX_ARGS]; /* ArgType of each (vm/prim.h)            */
  uint8_t where;                  /* TxRule: where an action may run        */
  NativeFn native;                /* natives; NULL for actions              */
  void *prim;                     /* actions: a PrimFn; NULL for natives    */
  int op;                         /* actions: OP_PRIM or their own opcode; -1 for natives */
};

/* Each builtin's index in the table: BUILTIN_delay, BUILTIN_show ... */
enum {
#define ACTION(name, where, args, fn, op) BUILTIN_##name,
#define BUILTIN(name, args, fn) BUILTIN_##name,
#include "builtins.def"
#undef ACTION
#undef BUILTIN
  BUILTIN_COUNT
};

/* The table, in vm/builtins.def order; builtin_count entries. */
extern const Builtin builtin_table[];
extern const int builtin_count;

/* True for action builtins. */
static inline bool builtin_is_action(const Builtin *builtin) { return builtin->prim != NULL; }

/* The builtin named `name`, or NULL. */
const Builtin *builtin_find(const char *name);

/* exceptionKind(e): "ThreadKilled", "ErrorCall", "AssertionFailed",
 * "Timeout", or the thrown value's type name; NULL, with *kind set to it,
 * for a thrown record with a string field `kind`. */
const char *exception_kind_name(Value e, Value *kind);

/* rt_error (vm/state.h) records the message of a native's runtime error. */

#endif
