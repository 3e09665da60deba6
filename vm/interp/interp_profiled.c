/* The interpreter loop again, counting every instruction for the profiler
 * (see the top of vm/interp.c). */
#define SIMVM_PROFILED 1
#include "interp.c"
