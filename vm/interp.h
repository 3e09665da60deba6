/* The interpreter loop: runs simulated threads until main ends. */
#ifndef SIMVM_INTERP_H
#define SIMVM_INTERP_H

#include "state.h"

/* Run from the current state (the main thread queued) until main finishes
 * (SIM_OK), main dies (SIM_FAILED), or the run deadlocks or hits a limit.
 * Threads switch inside the loop: blocking opcodes park the current thread
 * and the loop loads the next one from the scheduler. */
SimStatus interp_run(VM *vm);

/* `thread` raises `exc`, thrown by `from` (NULL: by itself): remember who
 * and where, for the report if it dies of it. Raising again the exception
 * it last raised itself (a handler passing it on) changes nothing. */
void interp_note_raise(VM *vm, ObjThread *thread, Value exc, ObjThread *from);

/* The script position of a frame, "what the user would call it": false for
 * the VM's own frames; a -O0 continuation frame reports the frame it holds. */
bool interp_frame_location(VM *vm, const CallFrame *frame, const ObjProto **proto, int *line);

#endif
