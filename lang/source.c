#include "source.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"

#define MAX_SOURCE (64u * 1024 * 1024)

static char *copy_string(const char *s) {
  size_t n = strlen(s);
  char *copy = mem_realloc(NULL, n + 1);
  memcpy(copy, s, n + 1);
  return copy;
}

Source *source_from_memory(const char *name, const char *text, size_t length) {
  Source *source = mem_realloc(NULL, sizeof *source);
  memset(source, 0, sizeof *source);
  source->path = copy_string(name);
  source->text = mem_realloc(NULL, length + 1);
  memcpy(source->text, text, length);
  source->text[length] = '\0';
  source->length = length;
  return source;
}

/* The text is read into one buffer that becomes the Source's: a regular
 * file's is allocated once at its size (a large script costs its size, not
 * three times it); a pipe's or a device's grows by doubling. */
Source *source_read(const char *path, char *err, size_t errsize) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    snprintf(err, errsize, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  bool regular = fstat(fileno(file), &st) == 0 && S_ISREG(st.st_mode);
  if (regular && (uint64_t)st.st_size > MAX_SOURCE) {
    snprintf(err, errsize, "'%s' is larger than %u MiB", path, MAX_SOURCE >> 20);
    fclose(file);
    return NULL;
  }
  /* one byte more than a regular file's size, to see it end (or grow) */
  size_t capacity = regular ? (size_t)st.st_size + 1 : 4096, length = 0;
  char *text = mem_realloc(NULL, capacity + 1);
  size_t n;
  while ((n = fread(text + length, 1, capacity - length, file)) > 0) {
    length += n;
    if (length > MAX_SOURCE) {
      snprintf(err, errsize, "'%s' is larger than %u MiB", path, MAX_SOURCE >> 20);
      free(text);
      fclose(file);
      return NULL;
    }
    if (length == capacity) {
      capacity *= 2;
      text = mem_realloc(text, capacity + 1);
    }
  }
  if (ferror(file)) {
    snprintf(err, errsize, "cannot read '%s': %s", path, strerror(errno));
    free(text);
    fclose(file);
    return NULL;
  }
  fclose(file);
  text[length] = '\0';
  Source *source = mem_realloc(NULL, sizeof *source);
  memset(source, 0, sizeof *source);
  source->path = copy_string(path);
  source->text = text;
  source->length = length;
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
