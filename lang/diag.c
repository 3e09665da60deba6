#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void emit(Diag *diag, const char *text, size_t length) {
  if (diag->write) diag->write(diag->user, text, length);
}

void diag_error(Diag *diag, const Source *source, int line, int col, const char *fmt, ...) {
  diag->errors++;
  if (diag->errors > DIAG_MAX_ERRORS) return;
  char text[1024];
  int n = snprintf(text, sizeof text, "%s:%d:%d: error: ", source->path, line, col);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < sizeof text) vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
  va_end(ap);
  emit(diag, text, strlen(text));
  emit(diag, "\n", 1);

  int length = 0;
  const char *start = source_line(source, line, &length);
  if (!start) return;
  /* the line, with control bytes shown as '?' so random input stays readable */
  char shown[256];
  int shown_length = length < (int)sizeof shown - 1 ? length : (int)sizeof shown - 1;
  for (int i = 0; i < shown_length; i++) {
    unsigned char c = (unsigned char)start[i];
    shown[i] = (c == '\t' || (c >= 0x20 && c != 0x7f)) ? (char)c : '?';
  }
  emit(diag, "    ", 4);
  emit(diag, shown, (size_t)shown_length);
  emit(diag, "\n    ", 5);
  for (int i = 0; i < col - 1 && i < shown_length; i++) emit(diag, start[i] == '\t' ? "\t" : " ", 1);
  emit(diag, "^\n", 2);
}
