/* The order of keys: one total order over the values a sorted list or an
 * ordered map (stdlib/map.sim) may hold as keys, so that their order, and
 * every output built from it, never depends on addresses or hashing.
 *
 *   unit; false < true; ints, floats (mixed, compared exactly) and
 *   durations by value; strings bytewise; lists lexicographically ([] first);
 *   none < some(x), then by x; records by their field names in sorted
 *   order, then by the fields' values in that order.
 *
 * Values of two different kinds (an int and a string, a list and a record)
 * are not ordered: the caller reports it. Functions, actions, threads,
 * MVars and TVars are never keys. */
#ifndef SIMVM_ORDER_H
#define SIMVM_ORDER_H

#include "state.h"

/* Order a and b: true with *order -1, 0 or 1; false when some part of one
 * cannot be ordered against the other's, with that pair in *bad_a and
 * *bad_b (a NaN, mixed kinds, a function). Iterative: nesting cannot
 * overflow the C stack. The work (values visited, string bytes) is added
 * to *work, which holds work not charged yet; with a `vm` (or NULL), each
 * VM_WORK_CHUNK of it is charged as it goes and *work emptied, and when the
 * run must stop (--max-work, --max-heap, a signal) it gives up: false with
 * vm->halted set. Two values sharing their parts (a list of 2^40 leaves
 * in 40 cells) are ordered in time their unshared size takes, so without
 * the checks a compare or a sort could run for ever. */
bool order_values(VM *vm, Value a, Value b, int *order, Value *bad_a, Value *bad_b, uint64_t *work);

/* The common case without order_values' stack of pairs: two ints, or two
 * strings (bytewise, as value_compare). True with *order set; false when
 * the pair needs order_values (any other kinds). No work is charged. */
static inline bool order_quick(Value a, Value b, int *order) {
  if (IS_INT(a) && IS_INT(b)) {
    *order = (AS_INT(a) > AS_INT(b)) - (AS_INT(a) < AS_INT(b));
    return true;
  }
  if (IS_STRING(a) && IS_STRING(b)) return value_compare(a, b, order);
  return false;
}

/* order_values for the builtins: false after a runtime error naming the
 * pair and what `who` (the builtin's name) was given, or with vm->halted
 * when the run must stop; the work charged to --max-work. */
bool order_or_error(VM *vm, const char *who, Value a, Value b, int *order);

/* A new list of the values of `list` in key order, equal ones in their
 * first order (stable: a merge sort, O(n log n) comparisons). With `keys`
 * (a list as long as `list`, or NIL_VAL), each value is sorted by the key
 * at its place (sortOn's decorated sort). False after a runtime error. */
bool order_sort(VM *vm, const char *who, Value list, Value keys, Value *result);

#endif
