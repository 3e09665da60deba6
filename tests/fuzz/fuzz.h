/* Shared by the fuzz targets (fuzz_source.c, fuzz_bytecode.c, fuzz_schedule.c): the bounds
 * every run is held to, the options an input picks, and output sinks.
 *
 * Each input runs bounded in every way the VM can be: instructions, work
 * done inside them, heap, threads, simulated time and trace size, so that
 * an input is slow only if the VM has a defect. What it prints is thrown
 * away, but formatted (say, the text trace, JSON lines, the timeline and
 * the profile are all built), so that their code is fuzzed too. */
#ifndef SIMVM_FUZZ_H
#define SIMVM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

#include "../../api/simvm.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_discard(void *user, const char *text, size_t length) {
  (void)user;
  (void)text;
  (void)length;
}

static inline void fuzz_config(VMConfig *config) {
  vm_config_init(config);
  config->write_say = fuzz_discard;
  config->write_trace = fuzz_discard;
  config->write_error = fuzz_discard;
  config->max_steps = 20000;
  config->max_work = 200000;
  config->max_heap = (size_t)32 << 20;
  config->max_threads = 200;
  config->max_time = 60000000000; /* 60 s of simulated time */
  config->max_trace_size = 1 << 20;
}

/* Send stdout to /dev/null until fuzz_stdout_back (what a command prints
 * outside the VM's sinks: explore's report, a replay's run): the saved
 * descriptor to hand back. */
static inline int fuzz_stdout_off(void) {
  static int null_fd = -1;
  if (null_fd < 0 && (null_fd = open("/dev/null", O_WRONLY)) < 0) abort();
  fflush(stdout);
  int saved = dup(1);
  if (saved < 0 || dup2(null_fd, 1) < 0) abort();
  return saved;
}

static inline void fuzz_stdout_back(int saved) {
  fflush(stdout);
  if (dup2(saved, 1) < 0) abort();
  close(saved);
}

/* FNV-1a of the input: which options it runs with, the same every time. */
static inline uint32_t fuzz_hash(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
  return h;
}

/* The outputs of a run that are written after it, written to /dev/null. */
static inline void fuzz_write_outputs(VM *vm) {
  static FILE *null;
  if (!null) null = fopen("/dev/null", "w");
  if (!null) abort();
  if (vm->profile) {
    vm_write_profile(vm, null, 't', 0.5);
    vm_write_profile(vm, null, 'j', 0.5);
    vm_write_profile(vm, null, 'f', 0.5);
  }
  if (vm->config.timeline) vm_write_timeline(vm, null);
  char *result = vm_show(vm, vm_result(vm));
  free(result);
}

/* Options from bits of the hash: the text trace, JSON lines, the timeline,
 * the profile. */
static inline void fuzz_options(VMConfig *config, uint32_t h) {
  config->trace = h & 1;
  config->write_trace_json = (h & 2) ? fuzz_discard : NULL;
  config->timeline = (h & 4) != 0;
  config->profile = (h & 8) != 0;
}

#endif
