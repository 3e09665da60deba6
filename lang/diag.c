#include "diag.h"

#include <stdarg.h>
#include <stdbool.h>
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
  /* the line, with control bytes (and, on a line that is not UTF-8, every
   * byte above 0x7f) shown as '?', so even random input stays readable */
  char shown[256];
  int shown_length = length < (int)sizeof shown - 1 ? length : (int)sizeof shown - 1;
  bool utf8 = true;
  for (int i = 0; i < shown_length && utf8;) {
    unsigned char c = (unsigned char)start[i];
    int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    for (int j = 1; j < n; j++)
      if (i + j >= shown_length || ((unsigned char)start[i + j] & 0xc0) != 0x80) n = 0;
    if (n == 0) utf8 = false;
    i += n;
  }
  for (int i = 0; i < shown_length; i++) {
    unsigned char c = (unsigned char)start[i];
    bool plain = c == '\t' || (c >= 0x20 && c != 0x7f && (c < 0x80 || utf8));
    shown[i] = plain ? (char)c : '?';
  }
  emit(diag, "    ", 4);
  emit(diag, shown, (size_t)shown_length);
  emit(diag, "\n    ", 5);
  /* one space per character before the column: UTF-8 continuation bytes take none */
  for (int i = 0; i < col - 1 && i < shown_length; i++) {
    if (((unsigned char)start[i] & 0xc0) == 0x80) continue;
    emit(diag, start[i] == '\t' ? "\t" : " ", 1);
  }
  emit(diag, "^\n", 2);
}
