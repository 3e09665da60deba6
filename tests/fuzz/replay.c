/* A main() for the fuzz targets where libFuzzer is not there (gcc): run
 * every file named, or every file in every directory named (in name order),
 * through LLVMFuzzerTestOneInput once. make test replays the seed corpus
 * and every past finding (tests/fuzz/corpus) this way, in the plain and
 * the ASan builds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replayed;

static void replay_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "replay: cannot open '%s'\n", path);
    exit(2);
  }
  size_t capacity = 4096, size = 0, n;
  uint8_t *data = malloc(capacity);
  while (data && (n = fread(data + size, 1, capacity - size, file)) > 0) {
    size += n;
    if (size == capacity) data = realloc(data, capacity *= 2);
  }
  fclose(file);
  if (!data) abort();
  LLVMFuzzerTestOneInput(data, size);
  free(data);
  replayed++;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void replay(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: cannot open '%s'\n", path);
    exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    replay_file(path);
    return;
  }
  DIR *dir = opendir(path);
  if (!dir) return;
  char **names = NULL;
  size_t count = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    if (e->d_name[0] == '.') continue;
    names = realloc(names, (count + 1) * sizeof *names);
    size_t length = strlen(path) + strlen(e->d_name) + 2;
    names[count] = malloc(length);
    snprintf(names[count++], length, "%s/%s", path, e->d_name);
  }
  closedir(dir);
  if (count) qsort(names, count, sizeof *names, by_name);
  for (size_t i = 0; i < count; i++) {
    replay(names[i]);
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) replay(argv[i]);
  printf("%s: %d inputs replayed\n", argv[0], replayed);
  return 0;
}
