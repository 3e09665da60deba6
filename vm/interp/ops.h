/* Value operations out of the dispatch loop (vm/ops.c). Each computes
 * into *out, or sets the runtime error (rt_error) and returns false. They
 * may allocate: the operands must be rooted (they are on the stack). */
#ifndef SIMVM_OPS_H
#define SIMVM_OPS_H

#include "state.h"

/* a OP b for OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD: ints (overflow is an
 * error; INT64_MIN % -1 is 0), floats and ints mixed, durations (d+d, d-d,
 * n*d, d*n, d/n, d/d an int, d%d). */
bool ops_arith(VM *vm, OpCode op, Value a, Value b, Value *out);

/* -1, 0, 1 (or 2: unordered, a NaN) into *order; false when a and b cannot
 * be ordered at all. Strings compare bytewise, charged as work. */
bool ops_compare(VM *vm, Value a, Value b, int *order);

/* a ++ b for two strings (copied once, not interned) or two lists (a's
 * cells copied onto b). */
bool ops_concat(VM *vm, Value a, Value b, Value *out);

/* -a for ints, floats and durations. */
bool ops_negate(VM *vm, Value a, Value *out);

/* The field `name` (interned) of record `object`. */
bool ops_field(VM *vm, Value object, ObjString *name, Value *out);

/* The record update #{r | f: v, +g: w}: base[0] the record r, then `n`
 * triples (an interned name, a bool: may it be new, the value) at
 * base[1 ...]: one copy of r with those fields set, new ones after its own.
 * Errors: r not a record; a name r lacks without the bool. The operands
 * must be rooted (on the stack). */
bool ops_update(VM *vm, const Value *base, int n, Value *out);

/* The interpolated string "a{x}b": the `n` values at `parts` joined into
 * one new string, a string as it is and anything else as show gives it
 * (say's rendering). Errors: an action among them (its result was meant),
 * a string too long; false with vm->halted when the run must stop. */
bool ops_interpolate(VM *vm, const Value *parts, int n, Value *out);

/* The runtime error of a pattern that nothing fitted (MATCH_FAIL):
 * `what` ("no arm of the match fits ") followed by `value` shown, cut
 * short after 200 bytes. Always false. */
bool ops_match_failed(VM *vm, ObjString *what, Value value);

/* object[index]: a list element by int, or a record field by name. */
bool ops_index(VM *vm, Value object, Value index, Value *out);

/* xs's elements, last first, consed onto acc (both lists): reverseOnto,
 * and replicateMOnto's start (its acc). The cells are charged as work; acc is rooted
 * while they are made (xs must be rooted by the caller). */
Value ops_reverse_onto(VM *vm, Value xs, Value acc);

/* The element at index i of a list (xs[i], nth(xs, i)): the walk to it is
 * charged as work; an index outside the list is an error naming its length. */
bool ops_list_nth(VM *vm, Value list, int64_t i, Value *out);

#endif
