#include "diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void emit(Diag *diag, const char *text, size_t length) {
  if (diag->write) diag->write(diag->user, text, length);
}

/* Control bytes (and, in text that is not UTF-8, every byte above 0x7f)
 * are shown as '?', so even random input stays readable and cannot drive
 * the terminal. */
void diag_printable(const char *text, int length, bool cut, char *out) {
  bool utf8 = true;
  for (int i = 0; i < length && utf8;) {
    unsigned char c = (unsigned char)text[i];
    int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    for (int j = 1; j < n; j++)
      if (i + j >= length || ((unsigned char)text[i + j] & 0xc0) != 0x80) n = 0;
    bool cut_at_end = cut && i + 4 >= length; /* the cut split a character */
    if (n == 0 && !cut_at_end) utf8 = false;
    i += n ? n : 1;
  }
  for (int i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    bool plain = c == '\t' || (c >= 0x20 && c != 0x7f && (c < 0x80 || utf8));
    out[i] = plain ? (char)c : '?';
  }
}

/* `file:line:col: KIND: message`, then the source line and its caret. */
static void report(Diag *diag, const Source *source, int line, int col, const char *kind, const char *fmt, va_list ap) {
  char text[1024];
  int n = snprintf(text, sizeof text, "%s:%d:%d: %s: ", source->path, line, col, kind);
  if (n >= 0 && (size_t)n < sizeof text) vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
  emit(diag, text, strlen(text));
  emit(diag, "\n", 1);

  /* only a script's own lines are shown: a file that is not a .sim source
   * (an import of /etc/passwd, a stray text file) never has one printed */
  size_t path_length = strlen(source->path);
  if (path_length < 4 || strcmp(source->path + path_length - 4, ".sim") != 0) return;
  int length = 0;
  const char *line_text = source_line(source, line, &length);
  if (!line_text) return;
  /* a window of the line around the column, so the caret is always on it */
  enum { WINDOW = 200, BEFORE = 100 };
  int from = col - 1 > WINDOW - 20 ? col - 1 - BEFORE : 0;
  if (from > length) from = length;
  while (from > 0 && ((unsigned char)line_text[from] & 0xc0) == 0x80) from--; /* not mid-character */
  const char *start = line_text + from;
  int shown_length = length - from < WINDOW ? length - from : WINDOW;
  char shown[WINDOW];
  diag_printable(start, shown_length, length - from > WINDOW, shown);
  emit(diag, from ? "    ..." : "    ", from ? 7 : 4);
  emit(diag, shown, (size_t)shown_length);
  emit(diag, from ? "\n       " : "\n    ", from ? 8 : 5);
  /* one space per character before the column: UTF-8 continuation bytes take none */
  for (int i = 0; i < col - 1 - from && i < shown_length; i++) {
    if (((unsigned char)start[i] & 0xc0) == 0x80 && shown[i] != '?') continue;
    emit(diag, start[i] == '\t' ? "\t" : " ", 1);
  }
  emit(diag, "^\n", 2);
}

void diag_error(Diag *diag, const Source *source, int line, int col, const char *fmt, ...) {
  diag->errors++;
  if (diag->errors > DIAG_MAX_ERRORS) return;
  va_list ap;
  va_start(ap, fmt);
  report(diag, source, line, col, "error", fmt, ap);
  va_end(ap);
}

void diag_warning(Diag *diag, const Source *source, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(diag, source, line, col, "warning", fmt, ap);
  va_end(ap);
}
