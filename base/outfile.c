#include "outfile.h"

#include "alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void outfile_clear(OutFile *out) {
  free(out->path);
  free(out->temporary);
  out->file = NULL;
  out->path = out->temporary = NULL;
}

/* mkstemp makes the file 0600; an output gets the mode fopen would give. */
static bool open_temporary(OutFile *out) {
  size_t length = strlen(out->path);
  out->temporary = xrealloc(NULL, length + 8);
  memcpy(out->temporary, out->path, length);
  memcpy(out->temporary + length, ".XXXXXX", 8);
  int fd = mkstemp(out->temporary);
  if (fd < 0) return false;
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) == 0 && (out->file = fdopen(fd, "w"))) return true;
  int saved = errno;
  close(fd);
  unlink(out->temporary);
  errno = saved;
  return false;
}

bool outfile_open(OutFile *out, const char *path) {
  memset(out, 0, sizeof *out);
  size_t length = strlen(path) + 1;
  out->path = memcpy(xrealloc(NULL, length), path, length);
  struct stat st;
  bool ok = stat(path, &st) == 0 && !S_ISREG(st.st_mode) ? (out->file = fopen(path, "w")) != NULL
                                                          : open_temporary(out);
  if (!ok) {
    int saved = errno;
    outfile_clear(out);
    errno = saved;
  }
  return ok;
}

bool outfile_commit(OutFile *out) {
  bool ok = fflush(out->file) == 0 && !ferror(out->file);
  int saved = errno;
  if (fclose(out->file) != 0 && ok) ok = false, saved = errno;
  if (ok && out->temporary && rename(out->temporary, out->path) != 0) ok = false, saved = errno;
  if (!ok && out->temporary) unlink(out->temporary);
  outfile_clear(out);
  errno = saved;
  return ok;
}

void outfile_discard(OutFile *out) {
  if (!out->file) return;
  fclose(out->file);
  if (out->temporary) unlink(out->temporary);
  outfile_clear(out);
}

bool same_file(const char *a, const char *b) {
  struct stat x, y;
  return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}
