/* Memory: the garbage collector, on top of the one allocation funnel (base/alloc.h).
 *
 * Declared here, with the objects it allocates; defined in
 * vm/runtime/memory.c, above them, as it traces and frees what the
 * runtime holds (threads, transactions, the run queue).
 *
 * GC invariant: every object reachable by the running program is reachable
 * from a root listed in mark_roots() (vm/runtime/memory.c): globals, every live
 * thread's stack, frames and pending exceptions, the run queue, the timer
 * heap, the VM's own closures and exceptions, the prototypes the profile
 * names, and the temporary root stack.
 * Any C code holding an object across an allocation must keep it on a
 * thread's stack or push it with gc_push_root(). Collection is a plain
 * stop-the-world mark-sweep, triggered from the funnel when the bytes
 * allocated pass a threshold (twice the live heap after the last cycle).
 * SIMVM_GC_STRESS=1 in the environment collects at every allocation.
 *
 * Two generations. What exists when the program has loaded (the prelude,
 * the program's prototypes and top-level values, interned names) is
 * promoted to an old generation that is never marked or swept again: its
 * objects are immutable (top-level definitions are pure values) and point
 * only at each other, so no young object is reachable from them and no
 * write barrier is needed. A run allocates young objects only; its
 * collections trace and sweep the young heap alone, and the next run
 * frees the whole young heap without tracing it.
 *
 * Why the collector and the objects need each other: every constructor
 * (vm/object.c, thread_new, the STM's and scheduler's allocations) calls
 * gc_alloc and pushes temporary roots here, and the collector in turn
 * must know what each kind of object owns besides its header: it frees a
 * thread's stacks (thread_free) and drops a TVar's waiter entries for
 * threads that died (stm_drop_stale_waiters). That is the mutual
 * dependency of memory.c with thread.c and stm.c; nothing else in vm/
 * calls into the collector's file but to allocate, root or collect. */
#ifndef SIMVM_MEMORY_H
#define SIMVM_MEMORY_H

#include <stddef.h>

#include "../../base/alloc.h"

#include "object.h"

/* gc_alloc(vm, size, type): a new GC object of `size` bytes and type
 * `type`, uninitialised past its header; may collect first (when the heap
 * would pass alloc_limit). Inline, at the end of vm/state.h (it counts in
 * the VM): most of a thread's or a cons cell's cost is its allocation.
 * Its ways out of line: */

/* The heap would pass alloc_limit: collect, and check --max-heap. */
void gc_make_room(VM *vm, size_t size);

/* The types whose objects own storage outside their slot (young_owners).
 * A TVar owns some only once its waiters leave the object: stm.c notes it
 * then, so most TVars cost the reset nothing. */
#define GC_OWNER_TYPES (1u << OBJ_STRING | 1u << OBJ_PROTO)

/* Remember a young object of an owner type, to finalise it at the reset. */
void gc_note_owner(VM *vm, Obj *obj);

/* gc_account(vm, delta): account for `delta` bytes of storage owned by
 * objects (thread stacks); the heap-size figure and the GC trigger count
 * it. Inline, in vm/state.h beside gc_alloc. */

/* Set alloc_limit, the heap size at which an allocation stops to collect
 * or check --max-heap, from next_gc, max_heap and gc_stress (after any of
 * them changes). */
void gc_update_limit(VM *vm);

/* Run a full collection now. */
void gc_collect(VM *vm);

/* Keep `value` alive until the matching gc_pop_root(). At most 32 deep. */
void gc_push_root(VM *vm, Value value);
void gc_pop_root(VM *vm);

/* Move every object allocated so far into the old generation, for good
 * (after the load's final collection). */
void gc_promote(VM *vm);

/* Free every young object without tracing: the previous run's heap, which
 * nothing of the next run can reach. Threads must be released and the
 * timer heap emptied first. */
void gc_free_young(VM *vm);

/* Free every object (VM shutdown). */
void gc_free_all(VM *vm);

#endif
