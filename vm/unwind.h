/* Runtime errors and exceptions: where a frame is in the script, the
 * exception a runtime error becomes, unwinding to a handler, and the death
 * of a thread whose exception nobody caught (with GHC's one-line report). */
#ifndef SIMVM_UNWIND_H
#define SIMVM_UNWIND_H

#include "state.h"

/* The runtime error in vm->error as an exception value, with where it was
 * raised and the thread's stack trace (at most 20 frames); clears the error. */
Value unwind_error_exception(VM *vm, ObjThread *thread);

/* Unwind `thread` to the innermost frame with a handler it has not entered
 * yet, and start that handler with `exc` pushed (true). When no frame
 * handles it, the thread dies: the death is traced and, unless it is a
 * kill or an async cancel, reported on write_error; false. */
bool unwind(VM *vm, ObjThread *thread, Value exc);

/* `exc` as show renders it (strings quoted), on one line (line breaks and
 * other control bytes escaped) and at most `limit` bytes, then "...". */
void unwind_show_one_line(Buffer *out, Value exc, size_t limit);

#endif
