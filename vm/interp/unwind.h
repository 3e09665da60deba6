/* Runtime errors and exceptions: where a frame is in the script, the
 * exception a runtime error becomes, unwinding to a handler, and the death
 * of a thread whose exception nobody caught (with GHC's one-line report). */
#ifndef SIMVM_UNWIND_H
#define SIMVM_UNWIND_H

#include "state.h"

/* An exception of `kind` (a runtime error, a failed assertion) carrying
 * `message`, where it was raised and the thread's stack trace (at most 20
 * frames). A runtime error is where its innermost frame is; an assertion
 * where the innermost frame of the script's own code is. */
Value unwind_located_exception(VM *vm, ObjThread *thread, ExceptionKind kind, const char *message);

/* The runtime error in vm->error as an exception value (as above); clears
 * the error. */
Value unwind_error_exception(VM *vm, ObjThread *thread);

/* Whether the death of a thread other than main, of `exc`, fails the whole
 * run: a failed assertion always; with --fail-on uncaught any death that
 * is not a quiet one (a kill, an async cancel). */
bool unwind_death_fails_run(VM *vm, Value exc);

/* Unwind `thread` to the innermost frame with a handler it has not entered
 * yet, and start that handler with `exc` pushed (true). When no frame
 * handles it, the thread dies: the death is traced and, unless it is a
 * kill or an async cancel, reported on write_error; false. */
bool unwind(VM *vm, ObjThread *thread, Value exc);

#endif
