/* Source files: their text, kept for diagnostics for the VM's lifetime. */
#ifndef SIMVM_SOURCE_H
#define SIMVM_SOURCE_H

#include <stddef.h>

typedef struct Source {
  char *path;            /* as given, or a name like "<prelude>"          */
  char *text;            /* NUL-terminated copy; may contain NUL bytes too */
  size_t length;         /* bytes, excluding the terminating NUL           */
  struct Source *next;   /* the VM's list                                  */
} Source;

/* Read a whole file. NULL on failure, with a message ("cannot open 'x': No
 * such file or directory") in err. Files over 64 MiB are refused. */
Source *source_read(const char *path, char *err, size_t errsize);

/* Copy `length` bytes of text under `name`. */
Source *source_from_memory(const char *name, const char *text, size_t length);

void source_free(Source *source);

/* The text of 1-based `line` (without its newline) and its length; NULL if
 * the line does not exist. */
const char *source_line(const Source *source, int line, int *length);

#endif
