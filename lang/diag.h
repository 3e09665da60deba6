/* Compile-time diagnostics: `file:line:col: error: message`, then the source
 * line and a caret under the column. */
#ifndef SIMVM_DIAG_H
#define SIMVM_DIAG_H

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

#endif
