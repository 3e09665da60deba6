/* simc: compile .sim scripts and list their bytecode. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../api/simvm.h"
#include "../base/options.h"
#include "../base/outfile.h"

static const char usage_text[] =
    "usage: simc [options] file.sim\n"
    "\n"
    "Compile a .sim script and report its errors; with -l, list its bytecode;\n"
    "with -o, write it to a bytecode file that simvm runs (simvm prog.simc).\n"
    "\n"
    "options:\n"
    "  -o FILE        write the compiled program (with the standard library) to FILE\n"
    "  -l, --list     list the bytecode of every function, block and module\n"
    "  --prelude      with -l, list the standard library too\n"
    "  --no-prelude   compile without the standard library (builtins only): a\n"
    "                 small program, for tests and fuzzing seeds\n"
    "  --sandbox      refuse imports outside the script's directory tree\n"
    "  --actions=reified  compile every action as a value that a bind then runs\n"
    "                 (io-sim's free monad); the file records it\n"
    "  --actions=direct   the default: statement-level actions compiled inline\n"
    "  -O0            the same as --actions=reified (simvm chooses the\n"
    "                 continuations when it runs the file: see simvm --help)\n"
    "  -O1, -O        the default, --actions=direct\n"
    "  -h, --help     show this help\n"
    "  --version      show the version\n"
    "\n"
    "exit status: 0 compiled, 2 usage error, unreadable or unwritable file, 3 compile error\n";

static void write_err(void *user, const char *text, size_t length) {
  (void)user;
  fflush(stdout);
  fwrite(text, 1, length, stderr);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  bool list = false, prelude = false, reify_actions = false, no_prelude = false, sandbox = false;
  const char *output = NULL;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      fputs(usage_text, stdout);
      return fflush(stdout) == 0 ? 0 : SIM_FAILED;
    } else if (strcmp(arg, "--version") == 0) {
      printf("simc %s\n", SIMVM_VERSION);
      return fflush(stdout) == 0 ? 0 : SIM_FAILED;
    } else if (strcmp(arg, "--") == 0 && i + 1 < argc && !path) {
      path = argv[++i];
    } else if (strcmp(arg, "-o") == 0) {
      if (++i == argc) {
        fprintf(stderr, "simc: -o needs a file name\nTry 'simc --help' for more information.\n");
        return SIM_USAGE;
      }
      output = argv[i];
    } else if (strcmp(arg, "-l") == 0 || strcmp(arg, "--list") == 0) {
      list = true;
    } else if (strcmp(arg, "--prelude") == 0) {
      prelude = true;
    } else if (strcmp(arg, "--no-prelude") == 0) {
      no_prelude = true;
    } else if (strcmp(arg, "--sandbox") == 0) {
      sandbox = true;
    } else if (strcmp(arg, "-O0") == 0 || strcmp(arg, "--actions=reified") == 0) {
      reify_actions = true;
    } else if (strcmp(arg, "-O1") == 0 || strcmp(arg, "-O") == 0 || strcmp(arg, "--actions=direct") == 0) {
      reify_actions = false;
    } else if (strncmp(arg, "--actions", 9) == 0 && (arg[9] == '\0' || arg[9] == '=')) {
      fprintf(stderr, "simc: --actions takes =reified or =direct (--actions=reified), not '%s'\n"
                      "Try 'simc --help' for more information.\n", arg);
      return SIM_USAGE;
    } else if (strncmp(arg, "--continuations", 15) == 0 && (arg[15] == '\0' || arg[15] == '=')) {
      fprintf(stderr, "simc: %s chooses how a program runs, not how it is compiled: give it to simvm\n"
                      "Try 'simc --help' for more information.\n", arg);
      return SIM_USAGE;
    } else if (arg[0] == '-' && arg[1]) {
      fprintf(stderr, "simc: unknown option '%s'\nTry 'simc --help' for more information.\n", arg);
      return SIM_USAGE;
    } else if (path) {
      fprintf(stderr, "simc: give one script, not '%s' and '%s'\n", path, arg);
      return SIM_USAGE;
    } else {
      path = arg;
    }
  }
  if (!path) {
    fprintf(stderr, "simc: no script given\nTry 'simc --help' for more information.\n");
    return SIM_USAGE;
  }
  VMConfig config;
  vm_config_init(&config);
  config.write_error = write_err;
  config.program = "simc";
  config.reify_actions = reify_actions;
  config.no_prelude = no_prelude;
  config.sandbox = sandbox;
  VM *vm = vm_new(&config);
  if (!vm) return SIM_FAILED;
  SimStatus status = vm_load_file(vm, path);
  if (status == SIM_OK && list) vm_write_listing(vm, stdout, prelude);
  /* -o over the script or a file it imports would destroy the source */
  if (status == SIM_OK && output && (same_file(output, path) || vm_read_file(vm, output))) {
    fprintf(stderr, "simc: -o '%s' is %s: an output must not overwrite an input\n"
                    "Try 'simc --help' for more information.\n",
            output, same_file(output, path) ? "the script itself" : "a file the script imports");
    status = SIM_USAGE;
  } else if (status == SIM_OK && output) {
    OutFile out;
    bool ok = outfile_open(&out, output);
    if (ok && !vm_write_bytecode(vm, out.file)) {
      int saved = errno;
      outfile_discard(&out);
      errno = saved;
      ok = false;
    } else if (ok) {
      ok = outfile_commit(&out);
    }
    if (!ok) {
      fprintf(stderr, "simc: cannot write '%s': %s\n", output, strerror(errno));
      status = SIM_USAGE;
    }
  }
  vm_free(vm);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "simc: cannot write output: %s\n", strerror(errno));
    return SIM_FAILED;
  }
  return (int)status;
}
