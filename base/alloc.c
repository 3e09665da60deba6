/* The allocation funnel (see alloc.h). */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef SIMVM_FAULT_INJECTION
static long fail_at = -1; /* -1: not read from the environment yet; 0: never */
static long allocations;

static void print_count(void) { fprintf(stderr, "allocations: %ld\n", allocations); }

/* Whether this allocation is the one to fail. */
static int injected_failure(void) {
  if (fail_at < 0) {
    const char *n = getenv("SIMVM_FAIL_ALLOC"), *count = getenv("SIMVM_COUNT_ALLOCS");
    fail_at = n ? atol(n) : 0;
    if (count && *count == '1') atexit(print_count);
  }
  return ++allocations == fail_at;
}
#endif

void *mem_realloc(void *ptr, size_t size) {
  if (size == 0) {
    free(ptr);
    return NULL;
  }
  void *result;
#ifdef SIMVM_FAULT_INJECTION
  result = injected_failure() ? NULL : realloc(ptr, size);
#else
  result = realloc(ptr, size);
#endif
  if (!result) {
    fflush(NULL); /* what was printed before comes first */
    fprintf(stderr, "simvm: out of memory (allocating %zu bytes); --max-heap sets a limit\n", size);
    exit(70);
  }
  return result;
}

void *mem_malloc(size_t size) { return mem_realloc(NULL, size ? size : 1); }
