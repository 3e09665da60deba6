/* Compile-time diagnostics: `file:line:col: error: message`, then the source
 * line and a caret under the column. */
#ifndef SIMVM_DIAG_H
#define SIMVM_DIAG_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"

/* Receives `len` bytes of text; the same shape as the VM's WriteFn. */
typedef void (*DiagWriteFn)(void *user, const char *text, size_t len);

/* Stop reporting after this many errors in one compilation. */
#define DIAG_MAX_ERRORS 20

typedef struct {
  DiagWriteFn write;     /* NULL: count errors silently */
  void *user;
  int errors;            /* reported so far              */
} Diag;

/* Report an error at 1-based line and column of `source`; the source line
 * and a caret follow when the file's name ends in ".sim". */
void diag_error(Diag *diag, const Source *source, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Report a warning the same way, as `file:line:col: warning: message`:
 * it does not count as an error (the compilation goes on and succeeds).
 * Nothing is shown with no `write`, as for errors. */
void diag_warning(Diag *diag, const Source *source, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Copy `length` bytes of `text` to `out` (which may be `text`) as they may
 * reach a terminal: control bytes, and in text that is not UTF-8 every
 * byte above 0x7f, become '?'. `cut`: the text was cut short, so a
 * character split at its end does not count against UTF-8. Compile errors'
 * source lines and bytecode errors (names read from the file) go through it. */
void diag_printable(const char *text, int length, bool cut, char *out);

#endif
