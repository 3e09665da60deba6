/* Primitives of the prelude's loops, run in the VM's own prototypes: a
 * loop instruction where the prelude's .sim loop ran ten (see prim.h). */
#include "prim.h"

/* replicateMOnto(n, act, acc): act run n times, each result consed onto
 * acc, then acc reversed, as the prelude's loop did:
 *   if n <= 0 then return reverse(acc) else { x <- act; replicateMOnto(n - 1, act, cons(x, acc)) }
 * Its prototype (vm.c's make_replicate) keeps n, act and acc in slots 0-2. */
PrimResult prim_replicate_m_onto(VM *vm, ObjThread *thread, Value *args, bool by_prelude) {
  (void)by_prelude;
  return prim_enter(vm, thread, vm->replicate_closure, args);
}
