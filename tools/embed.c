/* embed: turn files into C arrays, so the .sim standard library is part of
 * the binary.
 *   embed SYMBOL INPUT OUTPUT.c
 *       SYMBOL_source[] and SYMBOL_length: the prelude
 *   embed --modules OUTPUT.c INPUT...
 *       stdlib_module_names[], _files[], _sources[] and _lengths[] (NULL
 *       ended): the modules `import "NAME"` finds, NAME being each
 *       INPUT's base name without ".sim" */
#include <stdio.h>
#include <string.h>

/* Write the bytes of `in` as the initialiser of a char array. */
static unsigned long put_bytes(FILE *in, FILE *out) {
  unsigned long length = 0;
  int c;
  while ((c = fgetc(in)) != EOF) {
    fprintf(out, "%d,", c);
    if (++length % 20 == 0) fputc('\n', out);
  }
  fprintf(out, "0};\n");
  return length;
}

static int embed_one(const char *symbol, const char *input, const char *output) {
  FILE *in = fopen(input, "rb");
  if (!in) {
    perror(input);
    return 1;
  }
  FILE *out = fopen(output, "w");
  if (!out) {
    perror(output);
    fclose(in);
    return 1;
  }
  fprintf(out, "/* generated from %s by tools/embed.c; do not edit */\n", input);
  fprintf(out, "const char %s_source[] = {\n", symbol);
  unsigned long length = put_bytes(in, out);
  fprintf(out, "const unsigned long %s_length = %lu;\n", symbol, length);
  fclose(in);
  return fclose(out) == 0 ? 0 : 1;
}

/* The module's name: the file's base name without ".sim". */
static void module_name(const char *path, char *name, size_t size) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  snprintf(name, size, "%s", base);
  char *dot = strstr(name, ".sim");
  if (dot) *dot = '\0';
}

static int embed_modules(const char *output, char **inputs, int count) {
  FILE *out = fopen(output, "w");
  if (!out) {
    perror(output);
    return 1;
  }
  fprintf(out, "/* generated from the modules of stdlib/ by tools/embed.c; do not edit */\n#include <stddef.h>\n");
  unsigned long lengths[256];
  if (count > 256) {
    fprintf(stderr, "embed: at most 256 modules\n");
    fclose(out);
    return 1;
  }
  for (int i = 0; i < count; i++) {
    FILE *in = fopen(inputs[i], "rb");
    if (!in) {
      perror(inputs[i]);
      fclose(out);
      return 1;
    }
    fprintf(out, "static const char source_%d[] = {\n", i);
    lengths[i] = put_bytes(in, out);
    fclose(in);
  }
  char name[256];
  fprintf(out, "const char *const stdlib_module_names[] = {");
  for (int i = 0; i < count; i++) {
    module_name(inputs[i], name, sizeof name);
    fprintf(out, "\"%s\", ", name);
  }
  fprintf(out, "NULL};\nconst char *const stdlib_module_files[] = {");
  for (int i = 0; i < count; i++) fprintf(out, "\"%s\", ", inputs[i]);
  fprintf(out, "NULL};\nconst char *const stdlib_module_sources[] = {");
  for (int i = 0; i < count; i++) fprintf(out, "source_%d, ", i);
  fprintf(out, "NULL};\nconst unsigned long stdlib_module_lengths[] = {");
  for (int i = 0; i < count; i++) fprintf(out, "%lu, ", lengths[i]);
  fprintf(out, "0};\n");
  return fclose(out) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "--modules") == 0) return embed_modules(argv[2], argv + 3, argc - 3);
  if (argc != 4) {
    fprintf(stderr, "usage: embed SYMBOL INPUT OUTPUT.c\n       embed --modules OUTPUT.c INPUT...\n");
    return 2;
  }
  return embed_one(argv[1], argv[2], argv[3]);
}
