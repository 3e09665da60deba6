/* Primitives of the prelude's loops, run in the VM's own prototypes: two
 * loop instructions where the prelude's .sim loops ran nine or ten (see
 * prim.h). */
#include "prim.h"

#include "ops.h"

/* replicateMOnto(n, act, acc): act run n times, each result consed onto
 * acc, then acc reversed, as the prelude's loop did:
 *   if n <= 0 then return reverse(acc) else { x <- act; replicateMOnto(n - 1, act, cons(x, acc)) }
 * Its prototype (vm.c's make_replicate) keeps n and act in slots 0 and 1,
 * and builds the result in order: acc reversed, a fresh list (slot 2),
 * each result appended to its last cell (slot 3), so nothing is reversed
 * at the end. */
PrimResult prim_replicate_m_onto(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  /* before the frame: entering may move the stack, and args with it */
  args[2] = ops_reverse_onto(vm, args[2], NIL_VAL); /* the arguments are rooted on the stack */
  ObjCons *last = list_cell(args[2]);
  while (last && last->tail) last = last->tail;
  PrimResult result = prim_enter(vm, thread, vm->replicate_closure, args);
  if (result != PRIM_NEXT) return result;
  *thread->sp++ = last ? OBJ_VAL(last) : NIL_VAL; /* the cell is the list's, rooted in slot 2 */
  return PRIM_NEXT;
}

/* traverse_(f, xs): f(x) run for each x of xs, in order, the results
 * dropped: the loop under the prelude's mapM_ and forM_, which ran
 *   if isEmpty(xs) then return () else { f(head(xs)); mapM_(f, tail(xs)) }
 * Its prototype (vm.c's make_traverse) keeps f and the rest of xs in slots
 * 0 and 1, and calls f as that statement did (CALL_BIND, BIND). */
PrimResult prim_traverse(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_enter(vm, thread, vm->traverse_closure, args);
}
