/* A growable text buffer: messages, traces and show() build their text here,
 * so nothing is cut at a fixed size. The text is always NUL-terminated once
 * something was appended; `data` is NULL while the buffer is empty. */
#ifndef SIMVM_BUFFER_H
#define SIMVM_BUFFER_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

typedef struct {
  char *data;
  size_t length;      /* bytes, excluding the NUL */
  size_t capacity;
  char *local;        /* the caller's storage buf_init_local gave, or NULL */
} Buffer;

void buf_init(Buffer *buf);
/* Start in the caller's `storage` (`capacity` bytes, at least 1, which must
 * outlive the buffer): a short text then costs no allocation (show(), say
 * lines). The text moves to the heap when it outgrows it; buf_free frees
 * only what was allocated. Unlike buf_init's, `data` is never NULL. */
void buf_init_local(Buffer *buf, char *storage, size_t capacity);
/* Make room for `length` more bytes and the NUL (buf_append's way out of line). */
void buf_reserve(Buffer *buf, size_t length);
/* Append `length` bytes of `text`. Inline: most appends fit (say lines,
 * trace fields), and then cost a compare and a copy. */
static inline void buf_append(Buffer *buf, const char *text, size_t length) {
  if (buf->length + length + 1 > buf->capacity) buf_reserve(buf, length);
  memcpy(buf->data + buf->length, text, length);
  buf->length += length;
  buf->data[buf->length] = '\0';
}
/* Append text, then a newline: one capacity check, and no call to copy an
 * empty line. */
static inline void buf_append_line(Buffer *buf, const char *text, size_t length) {
  if (buf->length + length + 2 > buf->capacity) buf_reserve(buf, length + 1);
  char *at = buf->data + buf->length;
  if (length) memcpy(at, text, length);
  at[length] = '\n';
  at[length + 1] = '\0';
  buf->length += length + 1;
}
void buf_printf(Buffer *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buffer *buf, const char *fmt, va_list ap);
/* Append text in double quotes, escaping quotes, backslashes and control bytes. */
void buf_append_quoted(Buffer *buf, const char *text, size_t length);
/* The same without the quotes: text that must stay on one line of a report. */
void buf_append_escaped(Buffer *buf, const char *text, size_t length);
/* Append text as a JSON string literal (quotes, escapes). */
void buf_append_json(Buffer *buf, const char *text);
void buf_append_json_bytes(Buffer *buf, const char *text, size_t length);
/* Cut the text back to its first `length` bytes (at most its length). */
void buf_truncate(Buffer *buf, size_t length);
/* The text so far ("" when empty). */
const char *buf_text(const Buffer *buf);
void buf_free(Buffer *buf);

#endif
