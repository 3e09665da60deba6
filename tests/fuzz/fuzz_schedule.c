/* fuzz_schedule: a schedule file replayed, as `simvm --replay FILE
 * prog.sim` does. The input is the file; the program is the one its
 * `program NAME` line names among examples/ and tests/explore/ (the
 * programs the seeds were written for), or tests/explore/choices.sim
 * (every kind of choice) when it names none of them. What must hold: the
 * reader refuses a malformed file with a message, and a well-formed one
 * replays to some ending (or is reported as no longer fitting); never a
 * crash, a sanitizer report or a hang.
 *
 * A fresh VM per input, as simvm has: a replay sets the run's options
 * from the file. FUZZ_ROOT is the repository, set by the Makefile. */
#include "fuzz.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../../api/explore.h"

#ifndef FUZZ_ROOT
#error "build with -DFUZZ_ROOT=\"/path/to/simvm\""
#endif

/* The program the file names, if it is a plain file name (letters,
 * digits, '_', '-', '.'; no path) of one of the seeds' programs. */
static bool named_program(const uint8_t *data, size_t size, char *path, size_t capacity) {
  static const char *const dirs[] = {FUZZ_ROOT "/examples", FUZZ_ROOT "/tests/explore"};
  const char *text = (const char *)data;
  for (size_t at = 0; at + 8 < size; at++) {
    if ((at == 0 || text[at - 1] == '\n') && memcmp(text + at, "program ", 8) == 0) {
      size_t start = at + 8, end = start;
      while (end < size && end - start < 64 &&
             (text[end] == '_' || text[end] == '-' || text[end] == '.' || (text[end] >= '0' && text[end] <= '9') ||
              ((text[end] | 32) >= 'a' && (text[end] | 32) <= 'z')))
        end++;
      if (end == start || text[start] == '.' || end - start >= 64) return false;
      for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        snprintf(path, capacity, "%s/%.*s", dirs[d], (int)(end - start), text + start);
        if (access(path, R_OK) == 0) return true;
      }
      return false;
    }
  }
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char file[64];
  if (!file[0]) snprintf(file, sizeof file, "/tmp/simvm-fuzz-%d.replay", (int)getpid());
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0) abort();

  char program[512];
  if (!named_program(data, size, program, sizeof program))
    snprintf(program, sizeof program, "%s", FUZZ_ROOT "/tests/explore/choices.sim");
  VMConfig config;
  fuzz_config(&config);
  config.max_steps = 0; /* the file's own --max-steps applies, as in simvm */
  VM *vm = vm_new(&config);
  if (!vm) abort();
  /* the replay's messages are one line on stderr: stdout (a say the
   * program's run prints outside the VM's sinks) goes to /dev/null */
  int saved = fuzz_stdout_off();
  if (vm_load_file(vm, program) == SIM_OK) {
    int status;
    Explorer *ex = explore_replay_file(vm, file, false, &status);
    if (ex) {
      /* the file may lift the step limit; hold the run to the fuzz bounds */
      if (!vm->config.max_steps || vm->config.max_steps > 200000) vm->config.max_steps = 200000;
      SimStatus run = explore_run(ex);
      explore_replay_failed(vm, ex, file, run);
      explore_free(ex);
    }
  }
  fuzz_stdout_back(saved);
  vm_free(vm);
  unlink(file);
  return 0;
}
