/* Fuzz target: source text -> compile -> run (see fuzz.h for the bounds).
 * Built three ways (tests/fuzz/README.md):
 *   fuzz_source   the bounds of fuzz.h;
 *   fuzz_wide     (FUZZ_WIDE) bounds wide enough for 10^5 threads, fields
 *                 and waiters and a heap collected many times over, with
 *                 args() = ["4000"] so the complexity scan's scripts
 *                 (tests/complexity) grow large;
 *   fuzz_explore  (FUZZ_EXPLORE) the program explored: a few schedules
 *                 under a strategy picked by bits of the hash, the first
 *                 failure shrunk and written as a schedule file.
 *
 * The prelude is compiled and its top level run once per process (once
 * for each of the four combinations of --actions and --continuations: bit
 * 4 of the hash alone picks the default or -O0, bit 5 the mixed ones); each input's program is kept young and rolled
 * back after its run (loader_rollback), so an input costs its own
 * compilation and run only. */
#include "fuzz.h"

#include <fcntl.h>
#include <unistd.h>

#include "../../api/api.h"
#include "../../vm/value/memory.h"
#ifdef FUZZ_EXPLORE
#include "../../api/explore.h"
#endif

static VM *vms[4];
static LoaderMark marks[4];

#ifdef FUZZ_WIDE
static const char *wide_args[] = {"4000"};
#endif

#ifdef FUZZ_EXPLORE
/* Explore the loaded program: 1-8 schedules of a strategy the hash picks,
 * its report sent to /dev/null and its schedule file to a temporary one,
 * removed after. */
static void explore(VM *vm, uint32_t h) {
  static char schedule[64];
  if (!schedule[0]) snprintf(schedule, sizeof schedule, "/tmp/simvm-fuzz-%d.schedule", (int)getpid());
  static const ExploreStrategy strategies[] = {EXPLORE_PCT, EXPLORE_RANDOM, EXPLORE_DFS, EXPLORE_DELAY};
  ExploreOptions options;
  explore_options_init(&options);
  options.script = "/dev/null/fuzz.sim";
  options.strategy = strategies[(h >> 8) & 3];
  options.count = 1 + ((h >> 10) & 7);
  options.depth = 1 + (int)((h >> 13) & 3);
  options.jitter = (h >> 15) & 1 ? 100000 : 0; /* 10% */
  options.json = (h >> 16) & 1;
  options.shrink = (h >> 17) & 1;
  options.schedule_out = schedule;
  int saved = fuzz_stdout_off();
  explore_command(vm, &options);
  fuzz_stdout_back(saved);
  unlink(schedule);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t h = fuzz_hash(data, size);
#ifdef FUZZ_EXPLORE
  /* a VM of its own per input, as simvm --explore has: exploration resets
   * the VM between schedules, which the rolled-back VM below is not made
   * for (it keeps the input young) */
  VMConfig config;
  fuzz_config(&config);
  config.sandbox = true;
  fuzz_options(&config, h);
  VM *fresh = vm_new(&config);
  if (!fresh) abort();
  if (vm_load_source(fresh, "/dev/null/fuzz.sim", (const char *)data, size) == SIM_OK) explore(fresh, h);
  vm_free(fresh);
  return 0;
#endif
  int opt = (h >> 4) & 3;
  if (!vms[opt]) {
    VMConfig config;
    fuzz_config(&config);
#ifdef FUZZ_WIDE
    config.max_steps = 2000000;
    config.max_work = 20000000;
    config.max_heap = (size_t)256 << 20;
    config.max_threads = 200000;
    config.argv = wide_args;
    config.argc = 1;
#endif
    config.reify_actions = !(opt & 1);
    config.heap_continuations = config.reify_actions ^ ((opt >> 1) & 1);
    config.sandbox = true;
    VM *vm = vms[opt] = vm_new(&config);
    if (!vm) abort(); /* the prelude did not compile */
    loader_mark(vm, &marks[opt]);
    /* one run computes the prelude's top level and makes it old, for good;
     * the inputs' programs then stay young, to be rolled back */
    static const char setup[] = "main = return ()\n";
    if (vm_load_source(vm, "/dev/null/setup.sim", setup, sizeof setup - 1) != SIM_OK || vm_run(vm) != SIM_OK) abort();
    loader_rollback(vm, &marks[opt]);
    vm->keep_young = true;
  }
  VM *vm = vms[opt];
  fuzz_options(&vm->config, h);
  /* a name in no directory: with the sandbox, every import fails the same way */
  if (vm_load_source(vm, "/dev/null/fuzz.sim", (const char *)data, size) == SIM_OK) {
    vm_run(vm);
    fuzz_write_outputs(vm);
  }
  loader_rollback(vm, &marks[opt]);
  /* a program that did not compile, or whose top level failed, has no run
   * to discard: its objects stay young until a collection. Free them now,
   * so that an input frees what it allocates and libFuzzer's leak check
   * (run after any input that does not) stays rare */
  gc_free_young(vm);
  return 0;
}
