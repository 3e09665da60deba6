/* embed: turn a file into a C array, so the .sim standard library is part
 * of the binary.  usage: embed SYMBOL INPUT OUTPUT.c */
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: embed SYMBOL INPUT OUTPUT.c\n");
    return 2;
  }
  FILE *in = fopen(argv[2], "rb");
  if (!in) {
    perror(argv[2]);
    return 1;
  }
  FILE *out = fopen(argv[3], "w");
  if (!out) {
    perror(argv[3]);
    fclose(in);
    return 1;
  }
  fprintf(out, "/* generated from %s by tools/embed.c; do not edit */\n", argv[2]);
  fprintf(out, "const char %s_source[] = {\n", argv[1]);
  unsigned long length = 0;
  int c;
  while ((c = fgetc(in)) != EOF) {
    fprintf(out, "%d,", c);
    if (++length % 20 == 0) fputc('\n', out);
  }
  fprintf(out, "0};\nconst unsigned long %s_length = %lu;\n", argv[1], length);
  fclose(in);
  return fclose(out) == 0 ? 0 : 1;
}
