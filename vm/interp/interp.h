/* The interpreter loop: runs simulated threads until main ends. */
#ifndef SIMVM_INTERP_H
#define SIMVM_INTERP_H

#include "state.h"

/* Run from the current state (the main thread queued) until main finishes
 * (SIM_OK), main dies (SIM_FAILED), or the run deadlocks or hits a limit.
 * Threads switch inside the loop: blocking opcodes park the current thread
 * and the loop loads the next one from the scheduler. */
SimStatus interp_run(VM *vm);

#endif
