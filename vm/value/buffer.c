#include "buffer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/alloc.h"

void buf_init(Buffer *buf) {
  buf->data = NULL;
  buf->length = 0;
  buf->capacity = 0;
  buf->local = NULL;
}

void buf_init_local(Buffer *buf, char *storage, size_t capacity) {
  buf->data = buf->local = storage;
  buf->length = 0;
  buf->capacity = capacity;
  storage[0] = '\0';
}

void buf_reserve(Buffer *buf, size_t length) {
  if (buf->length + length + 1 <= buf->capacity) return;
  size_t capacity = buf->capacity ? buf->capacity : 64;
  while (capacity < buf->length + length + 1) capacity *= 2;
  if (buf->local && buf->data == buf->local) { /* out of the caller's storage */
    buf->data = xrealloc(NULL, capacity);
    memcpy(buf->data, buf->local, buf->length + 1);
  } else {
    buf->data = xrealloc(buf->data, capacity);
  }
  buf->capacity = capacity;
}

void buf_vprintf(Buffer *buf, const char *fmt, va_list ap) {
  char small[256];
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= 0 && (size_t)n < sizeof small) {
    buf_append(buf, small, (size_t)n);
  } else if (n >= 0) {
    char *big = xrealloc(NULL, (size_t)n + 1);
    vsnprintf(big, (size_t)n + 1, fmt, again);
    buf_append(buf, big, (size_t)n);
    free(big);
  }
  va_end(again);
}

void buf_printf(Buffer *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(buf, fmt, ap);
  va_end(ap);
}

void buf_truncate(Buffer *buf, size_t length) {
  if (length >= buf->length) return;
  buf->length = length;
  buf->data[length] = '\0';
}

const char *buf_text(const Buffer *buf) { return buf->data ? buf->data : ""; }

void buf_append_json(Buffer *buf, const char *text) { buf_append_json_bytes(buf, text, strlen(text)); }

void buf_append_json_bytes(Buffer *buf, const char *text, size_t length) {
  buf_append(buf, "\"", 1);
  for (const unsigned char *c = (const unsigned char *)text; c < (const unsigned char *)text + length; c++) {
    if (*c == '"' || *c == '\\') buf_printf(buf, "\\%c", *c);
    else if (*c < 0x20) buf_printf(buf, "\\u%04x", *c);
    else buf_append(buf, (const char *)c, 1);
  }
  buf_append(buf, "\"", 1);
}

void buf_free(Buffer *buf) {
  if (buf->data != buf->local) free(buf->data);
  buf_init(buf);
}

void buf_append_escaped(Buffer *buf, const char *text, size_t length) {
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    switch (c) {
      case '"': buf_append(buf, "\\\"", 2); break;
      case '\\': buf_append(buf, "\\\\", 2); break;
      case '\n': buf_append(buf, "\\n", 2); break;
      case '\t': buf_append(buf, "\\t", 2); break;
      default:
        if (c < 0x20 || c == 0x7f) buf_printf(buf, "\\x%02x", c);
        else buf_append(buf, (const char *)&c, 1);
    }
  }
}

void buf_append_quoted(Buffer *buf, const char *text, size_t length) {
  buf_append(buf, "\"", 1);
  buf_append_escaped(buf, text, length);
  buf_append(buf, "\"", 1);
}
