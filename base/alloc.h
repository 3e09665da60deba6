/* The one allocation funnel of simvm: every allocation of lang/, compiler/
 * and vm/ goes through mem_realloc (xrealloc below, and the GC's
 * gc_alloc included), so that running out of memory ends the same way
 * wherever it happens: "simvm: out of memory (allocating N bytes); --max-heap
 * sets a limit" on stderr, what was printed before flushed first, and exit
 * status 70. Nothing below it has to handle a NULL.
 *
 * Built with -DSIMVM_FAULT_INJECTION (make faultinject), the funnel fails
 * on purpose, as Lua's test allocator does: SIMVM_FAIL_ALLOC=N in the
 * environment makes the Nth allocation (from 1) fail, and
 * SIMVM_COUNT_ALLOCS=1 prints "allocations: N" on stderr at exit, so that
 * tests/run_faults.sh can fail every allocation of a run in turn. */
#ifndef SIMVM_ALLOC_H
#define SIMVM_ALLOC_H

#include <stddef.h>

/* realloc that never returns NULL for a size > 0 (see above); size 0 frees
 * `ptr` and returns NULL. */
void *mem_realloc(void *ptr, size_t size);

/* mem_realloc(NULL, size), for bison's YYMALLOC. */
void *mem_malloc(size_t size);

/* The name vm/ and compiler/ use for mem_realloc. */
static inline void *xrealloc(void *ptr, size_t size) { return mem_realloc(ptr, size); }

/* Room for one more element at array[count]: the array (of `capacity`
 * elements) doubles, from 16, when full. */
#define GROW(array, count, capacity)                                      \
  do {                                                                    \
    if ((count) >= (capacity)) {                                          \
      (capacity) = (capacity) ? (capacity) * 2 : 16;                      \
      if ((capacity) <= (count)) (capacity) = (count) + 1;                \
      (array) = xrealloc((array), (size_t)(capacity) * sizeof *(array));  \
    }                                                                     \
  } while (0)

#endif
