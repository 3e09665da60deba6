#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOURCE (64u * 1024 * 1024)

static char *copy_string(const char *s) {
  size_t n = strlen(s);
  char *copy = malloc(n + 1);
  if (copy) memcpy(copy, s, n + 1);
  return copy;
}

Source *source_from_memory(const char *name, const char *text, size_t length) {
  Source *source = calloc(1, sizeof *source);
  if (!source) return NULL;
  source->path = copy_string(name);
  source->text = malloc(length + 1);
  if (!source->path || !source->text) {
    source_free(source);
    return NULL;
  }
  memcpy(source->text, text, length);
  source->text[length] = '\0';
  source->length = length;
  return source;
}

Source *source_read(const char *path, char *err, size_t errsize) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    snprintf(err, errsize, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t capacity = 4096, length = 0;
  char *text = malloc(capacity);
  size_t n;
  while (text && (n = fread(text + length, 1, capacity - length, file)) > 0) {
    length += n;
    if (length > MAX_SOURCE) {
      snprintf(err, errsize, "'%s' is larger than %u MiB", path, MAX_SOURCE >> 20);
      free(text);
      fclose(file);
      return NULL;
    }
    if (length == capacity) {
      capacity *= 2;
      char *bigger = realloc(text, capacity);
      if (!bigger) free(text);
      text = bigger;
    }
  }
  if (!text || ferror(file)) {
    snprintf(err, errsize, "cannot read '%s': %s", path, text ? strerror(errno) : "out of memory");
    free(text);
    fclose(file);
    return NULL;
  }
  fclose(file);
  Source *source = source_from_memory(path, text, length);
  free(text);
  if (!source) snprintf(err, errsize, "cannot read '%s': out of memory", path);
  return source;
}

void source_free(Source *source) {
  if (!source) return;
  free(source->path);
  free(source->text);
  free(source);
}

const char *source_line(const Source *source, int line, int *length) {
  if (line < 1) return NULL;
  const char *p = source->text, *end = source->text + source->length;
  for (int current = 1; current < line; current++) {
    const char *newline = memchr(p, '\n', (size_t)(end - p));
    if (!newline) return NULL;
    p = newline + 1;
  }
  if (p > end) return NULL;
  const char *newline = memchr(p, '\n', (size_t)(end - p));
  const char *stop = newline ? newline : end;
  if (stop > p && stop[-1] == '\r') stop--;
  *length = (int)(stop - p);
  return p;
}
