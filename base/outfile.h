/* Output files written whole or not at all. A regular file (or a new one)
 * is written to a temporary file beside it and renamed over it once
 * complete, so a failed, interrupted or refused write never leaves half a
 * file, nor truncates what was there; a path that is not a regular file
 * (/dev/null, /dev/stdout, a pipe) is written in place, since a rename
 * would replace the device. Shared by simvm's outputs (trace, profile,
 * timeline, schedule files) and simc -o. */
#ifndef SIMVM_OUTFILE_H
#define SIMVM_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
  FILE *file;       /* where to write, between open and commit          */
  char *path;       /* the file it becomes                              */
  char *temporary;  /* the file being written; NULL when in place       */
} OutFile;

/* Open `path` for writing (binary-safe). False with errno set. */
bool outfile_open(OutFile *out, const char *path);

/* Close it and put it in place. False with errno set, the temporary file
 * removed and `path` as it was. */
bool outfile_commit(OutFile *out);

/* Close it and drop what was written (a regular file keeps its old
 * contents). */
void outfile_discard(OutFile *out);

/* Whether two paths name one existing file, by device and inode. */
bool same_file(const char *a, const char *b);

#endif
