/* simvm: run a .sim script on the simulated clock. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../api/simvm.h"
#include "../api/explore.h"
#include "../base/options.h"
#include "../base/outfile.h"

static const char usage_text[] =
    "usage: simvm [options] file.sim [args...]\n"
    "       simvm [options] file.simc [args...]\n"
    "\n"
    "Run a .sim script (or a program compiled by simc -o) on a simulated clock\n"
    "and print what it says.\n"
    "Arguments after the file are the script's; it reads them with args()\n"
    "(one of simvm's options there gets a warning, unless after --).\n"
    "-- ends the options (simvm -- -odd-name.sim).\n"
    "\n"
    "options:\n"
    "  -q, --quiet        print nothing on stdout: no say lines, no trace (it\n"
    "                     wins over --trace); errors and --result still print\n"
    "  --trace            print the full event trace (time, thread, event)\n"
    "                     instead of the bare say lines; the same as\n"
    "                     --trace=user, which hides the prelude's internals\n"
    "                     (masking in bracket, commits of the async library)\n"
    "  --trace=all        the trace with the prelude's internals too\n"
    "  --result           print main's result after the run\n"
    "  --sandbox          refuse imports outside the script's directory tree\n"
    "                     and imports by absolute path\n"
    "  --max-steps N      stop after N instructions, checked at every call and\n"
    "                     bind (so a run may pass N by a few); the load of\n"
    "                     top-level values has a budget of N of its own\n"
    "  --max-work N       stop when instructions plus the work done inside them\n"
    "                     (about a unit per byte copied, hashed or shown) pass N\n"
    "  --max-time D       stop before simulated time passes D (e.g. 10s, 500ms)\n"
    "  --max-heap SIZE    stop when the live heap passes SIZE (e.g. 512MB, 2GB;\n"
    "                     default 8GB)\n"
    "  --max-threads N    stop when a fork would make more than N threads alive\n"
    "                     (default 4000000)\n"
    "  --strict-shutdown  fail (exit 1) if main finishes while other threads are\n"
    "                     alive, listing them (io-sim's runSimStrictShutdown)\n"
    "  --fail-on LIST     what else fails a run: uncaught (any thread dying of an\n"
    "                     uncaught exception, not a kill or cancel), limit (in\n"
    "                     --explore: a --max-... limit), or uncaught,limit\n"
    "  -O0                bind as io-sim does: the same as --actions=reified\n"
    "                     --continuations=heap; same output and trace, more work\n"
    "  -O1, -O            the default: --actions=direct --continuations=stack\n"
    "  --actions=reified  compile every action as a value that a bind then runs\n"
    "                     (io-sim's free monad); a .simc keeps simc's choice\n"
    "  --actions=direct   the default: statement-level actions compiled inline,\n"
    "                     primitives as direct opcodes\n"
    "  --continuations=heap   every bind copies the rest of its block to a heap\n"
    "                     continuation (io-sim's >>=)\n"
    "  --continuations=stack  the default: one-shot continuations stay on the\n"
    "                     thread's stack\n"
    "  --profile          after the run, print a profile on stderr: instructions\n"
    "                     by opcode, function and thread, binds, scheduler, memory\n"
    "  --profile-json F   write the profile as JSON to file F (docs/PROFILE.md)\n"
    "  --profile-folded F write folded stacks (thread;fn;fn count) to file F\n"
    "  --trace-json F     write every trace event as a line of JSON to file F\n"
    "  --stats-json F     write the statistics the run's last statsReport (import\n"
    "                     \"stats\") handed over as JSON to file F (docs/LIBRARY.md)\n"
    "  --timeline F       write a timeline of the run to file F (Chrome trace\n"
    "                     events: open it in Perfetto or chrome://tracing)\n"
    "  --max-trace-size SIZE  stop when a trace output (--trace, --trace-json,\n"
    "                     --timeline) would pass SIZE (default 1GB)\n"
    "  --repeat N         run N fresh simulations in this process, timing them\n"
    "                     (short runs in batches); lines and a summary on stderr\n"
    "\n"
    "schedule exploration (docs/EXPLORE.md):\n"
    "  --explore N        run N schedules and report their outcomes by class; each\n"
    "                     failing class is shrunk and written as a schedule file,\n"
    "                     the first shown as a trace (exit 0: all passed, 1: one\n"
    "                     failed)\n"
    "  --strategy S       pct (the default), random, exhaustive: depth-first,\n"
    "                     bound after bound of preemptions, pruned with sleep sets\n"
    "                     (dfs: the same unpruned, for comparison), or delay:\n"
    "                     every schedule of 0, 1, 2 ... deviations, early ones first\n"
    "  --seed N           one schedule, seed N's of the strategy (its random(n)\n"
    "                     numbers too); with --explore, the first seed (default 1)\n"
    "  --data-seed N      a plain run whose random numbers (random, the net\n"
    "                     module's draws ...) come from seed N, on the default\n"
    "                     schedule and with no step limit (default 0)\n"
    "  --depth D          pct's bug depth: D - 1 priority changes (default 3)\n"
    "  --preemptions K    exhaustive's last bound, or delay's (default: none)\n"
    "  --jitter P%        durations of delay, timeout and registerDelay become\n"
    "                     choices within P% of their own (10%, 2.5%)\n"
    "  --jobs J           run the schedules in J processes (same results; an\n"
    "                     exhaustive search needs --preemptions K)\n"
    "  --shard I/N        run the I-th of N slices of the seeds (or of an\n"
    "                     exhaustive search's tree)\n"
    "  --json             a JSON line per schedule and a summary line\n"
    "  --schedule-out F   write the failing schedule to F (default NAME.schedule)\n"
    "  --no-shrink        report the failing schedule as found\n"
    "  --replay F         run the schedule in file F (exit 3 if it no longer fits)\n"
    "  runs in --explore stop after 1000000 instructions unless --max-steps says\n"
    "\n"
    "  -h, --help         show this help\n"
    "  --version          show the version\n"
    "\n"
    "SIGINT and SIGTERM stop the run at the next instruction, complete every\n"
    "output and report where each thread is; under --explore, they stop the\n"
    "sweep after the running schedule and report what it found so far.\n"
    "An output file is written whole (to a temporary file, then renamed) and\n"
    "may not be an input: the script, the --replay file or an import.\n"
    "\n"
    "exit status:\n"
    "  0  main finished; with --explore, every schedule passed\n"
    "  1  the run failed: main's uncaught exception or runtime error, a failed\n"
    "     assert, --fail-on, --strict-shutdown; with --explore, a schedule failed\n"
    "  2  usage error, unreadable file or a failed write\n"
    "  3  compile error, bad bytecode, a bad or no longer matching --replay file\n"
    "  4  deadlock\n"
    "  5  a --max-... limit reached\n"
    " 70  out of memory (the machine's)\n"
    "130  stopped by SIGINT       143  stopped by SIGTERM\n";


static OutFile trace_json; /* --trace-json, open from after the load to the end */
static const char *trace_json_path;
static VM *volatile running_vm; /* the VM whose run a signal or a write error stops */
static bool output_broken;    /* an output failed: the run stops, exit status 2 */
static volatile sig_atomic_t stop_signal; /* SIGINT or SIGTERM, once one stopped the run */

/* An output could not be written: say so once and stop the run at the next
 * instruction (the other outputs are still completed), exit status 2. */
static void output_error(const char *what, int error) {
  if (output_broken) return;
  output_broken = true;
  fflush(stdout);
  fprintf(stderr, "simvm: cannot write %s: %s\n", what, strerror(error));
  if (running_vm) vm_stop(running_vm, SIM_STOP_OUTPUT);
}

static void write_trace_json(void *user, const char *text, size_t length) {
  (void)user;
  if (output_broken || !trace_json.file) return;
  if (fwrite(text, 1, length, trace_json.file) != length) {
    char what[1100];
    snprintf(what, sizeof what, "'%s'", trace_json_path);
    output_error(what, errno);
  }
}

/* stdout is fully buffered; a write that fails (a full disk, a closed pipe)
 * stops the run rather than simulating on with the output lost. */
static void write_out(void *user, const char *text, size_t length) {
  (void)user;
  if (output_broken) return;
  if (fwrite(text, 1, length, stdout) != length || ferror(stdout)) output_error("output", errno);
}

/* Before any run (help, version): a failed write ends at once. */
static int output_failed(void) {
  fprintf(stderr, "simvm: cannot write output: %s\n", strerror(errno));
  return SIM_USAGE;
}

/* SIGINT and SIGTERM stop the run at the next instruction boundary, so
 * every output is completed (vm_stop only sets two fields, which is safe
 * here), or --explore's sweep at the next schedule, which then reports.
 * A second signal a second or more after the first (the run seems stuck,
 * or writing its outputs takes too long) ends the process at once; one
 * sooner is the same signal sent twice, as timeout(1) does to the process
 * and its group, and is ignored. */
static volatile sig_atomic_t exploring; /* --explore's sweep reads stop_signal */

static void on_signal(int sig) {
  static volatile sig_atomic_t first; /* time() of the first signal */
  bool stoppable = running_vm || exploring;
  if (stop_signal || !stoppable) {
    if (stoppable && time(NULL) - first < 1) return;
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  first = (sig_atomic_t)time(NULL);
  stop_signal = sig;
  if (running_vm) vm_stop(running_vm, sig == SIGINT ? SIM_STOP_INTERRUPT : SIM_STOP_TERMINATE);
}

static void catch_signals(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART; /* a write in progress goes on, it does not fail */
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
}

static void write_err(void *user, const char *text, size_t length) {
  (void)user;
  fflush(stdout);
  fwrite(text, 1, length, stderr);
}

static double clock_seconds(clockid_t clock) {
  struct timespec now;
  clock_gettime(clock, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static double wall_now(void) { return clock_seconds(CLOCK_MONOTONIC); }

/* --seed and --replay: the schedule's explorer runs each run */
static Explorer *explorer;

static SimStatus run_vm(VM *vm) { return explorer ? explore_run(explorer) : vm_run(vm); }

static SimStatus run_once(VM *vm, double *wall) {
  double started = wall_now();
  SimStatus status = run_vm(vm);
  *wall = wall_now() - started;
  return status;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* --repeat N: N fresh simulations of the loaded program in this process.
 * Run 1 also loads the program, so it is timed and reported alone. The
 * others are timed in batches long enough that reading the clock (tens of
 * nanoseconds) does not count: a batch doubles while twice its runs would
 * still fit in REPEAT_BATCH_SECONDS and REPEAT_MIN_BATCHES such batches
 * remain. A line per batch and a summary on stderr; the summary also gives
 * the median CPU time per run (the process's, read around each batch), for
 * comparisons with programs timed by CPU time. Every run must count the same
 * instructions and events as run 2 (nothing of one run reaches the next);
 * a run that does not, or that fails, ends the repeat. */
#define REPEAT_BATCH_SECONDS 20e-6
#define REPEAT_MIN_BATCHES 16

static SimStatus run_repeated(VM *vm, uint64_t runs, double *wall) {
  SimStatus status = run_once(vm, wall);
  fflush(stdout);
  fprintf(stderr, "run 1: %.3f us, %" PRIu64 " instructions, %" PRIu64 " events (with the load)\n", *wall * 1e6,
          vm_steps(vm), vm_events(vm));
  if (status != SIM_OK || runs == 1) return status;
  status = run_once(vm, wall);
  uint64_t steps = vm_steps(vm), events = vm_events(vm);
  uint64_t batch = 1, largest = 1;
  double *times = malloc(2 * (size_t)runs * sizeof(double)), *cpu_times = times + runs;
  if (!times) {
    fprintf(stderr, "simvm: out of memory\n");
    return SIM_FAILED;
  }
  int count = 0;
  cpu_times[count] = *wall; /* run 2 was not timed by CPU: its wall time stands in */
  times[count++] = *wall;
  fflush(stdout);
  fprintf(stderr, "run 2: %.3f us, %" PRIu64 " instructions, %" PRIu64 " events\n", *wall * 1e6, steps, events);
  uint64_t next = 3;
  while (status == SIM_OK && next <= runs) {
    uint64_t n = runs - next + 1 < batch ? runs - next + 1 : batch;
    double cpu_started = clock_seconds(CLOCK_PROCESS_CPUTIME_ID), started = wall_now();
    for (uint64_t k = 0; k < n && status == SIM_OK; k++) {
      status = run_vm(vm);
      if (status == SIM_OK && (vm_steps(vm) != steps || vm_events(vm) != events)) {
        fprintf(stderr, "simvm: run %" PRIu64 " counted %" PRIu64 " instructions and %" PRIu64
                        " events, run 2 %" PRIu64 " and %" PRIu64 ": runs are not independent\n",
                next + k, vm_steps(vm), vm_events(vm), steps, events);
        status = SIM_FAILED;
      }
    }
    *wall = (wall_now() - started) / (double)n;
    cpu_times[count] = (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_started) / (double)n;
    times[count++] = *wall;
    fflush(stdout);
    if (n == 1) fprintf(stderr, "run %" PRIu64 ": %.3f us", next, *wall * 1e6);
    else fprintf(stderr, "runs %" PRIu64 "-%" PRIu64 ": %.3f us per run", next, next + n - 1, *wall * 1e6);
    fprintf(stderr, ", %" PRIu64 " instructions, %" PRIu64 " events\n", steps, events);
    next += n;
    if (*wall * (double)(2 * batch) <= REPEAT_BATCH_SECONDS && runs - next + 1 >= 2 * batch * REPEAT_MIN_BATCHES)
      batch *= 2;
    if (batch > largest) largest = batch;
  }
  qsort(times, (size_t)count, sizeof *times, by_value);
  qsort(cpu_times, (size_t)count, sizeof *times, by_value);
  fprintf(stderr, "runs: %" PRIu64 ", median %.3f us, min %.3f us, max %.3f us per run (runs 2-%" PRIu64,
          next - 1, times[count / 2] * 1e6, times[0] * 1e6, times[count - 1] * 1e6, next - 1);
  if (largest > 1) fprintf(stderr, " in batches of up to %" PRIu64, largest);
  fprintf(stderr, "), cpu median %.3f us; %" PRIu64 " instructions and %" PRIu64 " events per run\n",
          cpu_times[count / 2] * 1e6, steps, events);
  free(times);
  return status;
}

/* Write an output file after the run: format 'j' or 'f' a profile (see
 * vm_write_profile), 'l' the timeline, 's' the statistics (--stats-json); whole or not at all
 * (base/outfile.h). Reports a failure. */
static bool write_output_file(VM *vm, const char *path, char format, double wall) {
  OutFile out;
  if (!outfile_open(&out, path)) {
    fprintf(stderr, "simvm: cannot write '%s': %s\n", path, strerror(errno));
    return false;
  }
  bool ok = format == 'l'   ? vm_write_timeline(vm, out.file)
            : format == 's' ? vm_write_stats_json(vm, out.file)
                            : vm_write_profile(vm, out.file, format, wall);
  if (!ok) {
    int saved = errno;
    outfile_discard(&out);
    errno = saved;
  }
  if (!ok || !outfile_commit(&out)) {
    fprintf(stderr, "simvm: cannot write '%s': %s\n", path, strerror(errno));
    return false;
  }
  return true;
}

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "simvm: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'simvm --help' for more information.\n");
  return SIM_USAGE;
}

/* An output file option and its path (NULL: not given). */
typedef struct {
  const char *option, *path;
} Output;

/* An output that is one of the inputs would destroy it: false, with a
 * usage error, when one is the script, the --replay file or (once `vm` has
 * loaded the program) a file the script imports. Compared by device and
 * inode, so another name for the same file is caught too. */
static bool outputs_spare_inputs(const Output *outputs, int count, const char *script, const char *replay, VM *vm) {
  for (int k = 0; k < count; k++) {
    const char *out = outputs[k].path, *what = NULL;
    if (!out) continue;
    if (same_file(out, script)) what = "the script itself";
    else if (replay && same_file(out, replay)) what = "the --replay file";
    else if (vm && vm_read_file(vm, out)) what = "a file the script imports";
    if (!what) continue;
    char message[1200];
    snprintf(message, sizeof message, "%s '%.1000s' is %s: an output must not overwrite an input", outputs[k].option,
             out, what);
    usage_error("%s", message);
    return false;
  }
  return true;
}

/* simvm's own options, as --help lists them: one of them after the script
 * is most likely meant for simvm, not the script (tests/run_cli.sh checks
 * this list against --help). */
static const char *const simvm_options[] = {
    "-q", "--quiet", "--trace", "--result", "--sandbox", "--max-steps", "--max-work", "--max-time", "--max-heap",
    "--max-threads", "--strict-shutdown", "--fail-on", "-O0", "-O1", "-O", "--profile", "--profile-json",
    "--profile-folded", "--trace-json", "--stats-json", "--timeline", "--max-trace-size", "--repeat", "--explore",
    "--strategy", "--seed", "--data-seed", "--depth", "--preemptions", "--jitter", "--jobs", "--shard", "--json",
    "--schedule-out", "--no-shrink", "--replay", "-h", "--help", "--version",
};

static bool is_simvm_option(const char *word) {
  if (strncmp(word, "--trace=", 8) == 0 || strncmp(word, "--actions=", 10) == 0 ||
      strncmp(word, "--continuations=", 16) == 0)
    return true;
  for (size_t k = 0; k < sizeof simvm_options / sizeof simvm_options[0]; k++)
    if (strcmp(word, simvm_options[k]) == 0) return true;
  return false;
}

/* `simvm x.sim --trace` runs x.sim with "--trace" in args() and no trace:
 * say so on stderr, for each of simvm's options among the script's
 * arguments before any "--" (which, like a "--" before the script, says the
 * words are meant for the script). */
static void warn_options_after_script(int argc, char **argv, int first) {
  for (int k = first; k < argc && strcmp(argv[k], "--") != 0; k++)
    if (is_simvm_option(argv[k]))
      fprintf(stderr, "simvm: warning: '%s' after the script is passed to the script; put simvm's options before "
                      "the script\n", argv[k]);
}

int main(int argc, char **argv) {
  static char out_buffer[1 << 16];
  setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
  signal(SIGPIPE, SIG_IGN); /* a closed pipe is a write error, reported */

  VMConfig config;
  vm_config_init(&config);
  config.write_say = write_out;
  config.write_trace = write_out;
  config.write_error = write_err;
  bool quiet = false, print_result = false, fail_on_limit = false;
  bool actions_given = false; /* --actions: only for a script, which is compiled here */
  const char *profile_json = NULL, *profile_folded = NULL, *timeline_path = NULL, *stats_json = NULL;
  uint64_t repeat = 0; /* 0: one plain run */
  ExploreOptions explore;
  explore_options_init(&explore);
  bool strategy_given = false, explore_only = false, jitter_given = false; /* explore_only: an option that needs --explore */
  const char *explore_option = NULL, *replay_path = NULL;
  bool seed_given = false, data_seed_given = false;
  uint64_t seed = 0;
  const char *argv_seed = NULL, *argv_shard = NULL; /* as given, for messages */
  bool options_ended = false; /* by "--": the script's arguments are meant as they are */
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      i++;
      options_ended = true;
      break;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      fputs(usage_text, stdout);
      return fflush(stdout) != 0 ? output_failed() : SIM_OK;
    } else if (strcmp(arg, "--version") == 0) {
      printf("simvm %s\n", SIMVM_VERSION);
      return fflush(stdout) != 0 ? output_failed() : SIM_OK;
    } else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
      quiet = true;
    } else if (strcmp(arg, "--trace") == 0 || strcmp(arg, "--trace=user") == 0) {
      config.trace = true;
      config.trace_all = false;
    } else if (strcmp(arg, "--trace=all") == 0) {
      config.trace = config.trace_all = true;
    } else if (strncmp(arg, "--trace=", 8) == 0) {
      return usage_error("--trace= takes user or all, not '%s'", arg + 8);
    } else if (strcmp(arg, "--sandbox") == 0) {
      config.sandbox = true;
    } else if (strcmp(arg, "--result") == 0) {
      print_result = true;
    } else if (strcmp(arg, "--strict-shutdown") == 0) {
      config.strict_shutdown = true;
    } else if (strcmp(arg, "--fail-on") == 0) {
      if (++i == argc) return usage_error("%s needs a list of failures (uncaught, limit)", arg);
      if (!parse_fail_on(argv[i], &config.fail_on_uncaught, &fail_on_limit))
        return usage_error("--fail-on takes uncaught, limit or both (uncaught,limit), not '%s'", argv[i]);
    } else if (strcmp(arg, "--max-heap") == 0) {
      if (++i == argc) return usage_error("%s needs a size", arg);
      if (!parse_size(argv[i], &config.max_heap) || config.max_heap == 0)
        return usage_error("--max-heap needs a size such as 512MB, 2GB or 100000KB, not '%s'", argv[i]);
    } else if (strcmp(arg, "--max-threads") == 0) {
      uint64_t n;
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &n) || n == 0 || n > 1000000000)
        return usage_error("--max-threads needs a positive whole number, not '%s'", argv[i]);
      config.max_threads = (int)n;
    } else if (strcmp(arg, "-O0") == 0) {
      config.reify_actions = config.heap_continuations = true;
    } else if (strcmp(arg, "-O1") == 0 || strcmp(arg, "-O") == 0) {
      config.reify_actions = config.heap_continuations = false;
    } else if (strcmp(arg, "--actions=reified") == 0 || strcmp(arg, "--actions=direct") == 0) {
      config.reify_actions = arg[10] == 'r';
      actions_given = true;
    } else if (strncmp(arg, "--actions", 9) == 0 && (arg[9] == '\0' || arg[9] == '=')) {
      return usage_error("--actions takes =reified or =direct (--actions=reified), not '%s'", arg);
    } else if (strcmp(arg, "--continuations=heap") == 0 || strcmp(arg, "--continuations=stack") == 0) {
      config.heap_continuations = arg[16] == 'h';
    } else if (strncmp(arg, "--continuations", 15) == 0 && (arg[15] == '\0' || arg[15] == '=')) {
      return usage_error("--continuations takes =heap or =stack (--continuations=heap), not '%s'", arg);
    } else if (strcmp(arg, "--profile") == 0) {
      config.profile = true;
    } else if (strcmp(arg, "--profile-json") == 0 || strcmp(arg, "--profile-folded") == 0) {
      if (++i == argc) return usage_error("%s needs a file name", arg);
      if (arg[10] == 'j') profile_json = argv[i];
      else profile_folded = argv[i];
      config.profile = true;
    } else if (strcmp(arg, "--trace-json") == 0) {
      if (++i == argc) return usage_error("%s needs a file name", arg);
      trace_json_path = argv[i];
    } else if (strcmp(arg, "--stats-json") == 0) {
      if (++i == argc) return usage_error("%s needs a file name", arg);
      stats_json = argv[i];
    } else if (strcmp(arg, "--timeline") == 0) {
      if (++i == argc) return usage_error("%s needs a file name", arg);
      timeline_path = argv[i];
      config.timeline = true;
    } else if (strcmp(arg, "--repeat") == 0) {
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &repeat) || repeat == 0 || repeat > 100000000)
        return usage_error("--repeat needs a positive whole number, not '%s'", argv[i]);
    } else if (strcmp(arg, "--explore") == 0) {
      if (++i == argc) return usage_error("%s needs a number of schedules", arg);
      if (!parse_count(argv[i], &explore.count) || explore.count == 0)
        return usage_error("--explore needs a positive whole number of schedules, not '%s'", argv[i]);
    } else if (strcmp(arg, "--seed") == 0) {
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &seed)) return usage_error("--seed needs a whole number, not '%s'", argv[i]);
      argv_seed = argv[i];
      seed_given = true;
    } else if (strcmp(arg, "--data-seed") == 0) {
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &config.seed))
        return usage_error("--data-seed needs a whole number, not '%s'", argv[i]);
      data_seed_given = true;
    } else if (strcmp(arg, "--strategy") == 0) {
      if (++i == argc) return usage_error("%s needs a strategy (pct, random, exhaustive or delay)", arg);
      if (!explore_parse_strategy(argv[i], &explore.strategy))
        return usage_error("--strategy takes pct, random, exhaustive or delay (or dfs, unpruned), not '%s'", argv[i]);
      strategy_given = true;
    } else if (strcmp(arg, "--depth") == 0) {
      uint64_t n;
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &n) || n == 0 || n > 1000)
        return usage_error("--depth needs a whole number from 1 to 1000, not '%s'", argv[i]);
      explore.depth = (int)n;
    } else if (strcmp(arg, "--preemptions") == 0) {
      uint64_t n;
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &n) || n > 1000000)
        return usage_error("--preemptions needs a whole number (0 or more), not '%s'", argv[i]);
      explore.preemptions = (int)n;
      explore_option = arg;
      explore_only = true;
    } else if (strcmp(arg, "--jitter") == 0) {
      if (++i == argc) return usage_error("%s needs a percentage (10%%)", arg);
      if (!parse_percent(argv[i], &explore.jitter))
        return usage_error("--jitter needs a percentage above 0%% and below 100%%, with at most four decimals (10%%, "
                           "2.5%%), not '%s'", argv[i]);
      jitter_given = true;
    } else if (strcmp(arg, "--jobs") == 0) {
      uint64_t n;
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &n) || n == 0 || n > 1024)
        return usage_error("--jobs needs a number of processes from 1 to 1024, not '%s'", argv[i]);
      explore.jobs = (int)n;
      explore_option = arg;
      explore_only = true;
    } else if (strcmp(arg, "--shard") == 0) {
      if (++i == argc) return usage_error("%s needs I/N", arg);
      argv_shard = argv[i];
      if (!parse_shard(argv[i], &explore.shard, &explore.shards))
        return usage_error("--shard needs I/N with 1 <= I <= N (the I-th of N slices of the seeds), not '%s'",
                           argv[i]);
      explore_option = arg;
      explore_only = true;
    } else if (strcmp(arg, "--json") == 0) {
      explore.json = true;
      explore_option = arg;
      explore_only = true;
    } else if (strcmp(arg, "--no-shrink") == 0) {
      explore.shrink = false;
      explore_option = arg;
      explore_only = true;
    } else if (strcmp(arg, "--schedule-out") == 0) {
      if (++i == argc) return usage_error("%s needs a file name", arg);
      explore.schedule_out = argv[i];
      explore_option = arg;
      explore_only = true;
    } else if (strcmp(arg, "--replay") == 0) {
      if (++i == argc) return usage_error("%s needs a schedule file", arg);
      replay_path = argv[i];
    } else if (strcmp(arg, "--max-steps") == 0) {
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &config.max_steps) || config.max_steps == 0)
        return usage_error("--max-steps needs a positive whole number, not '%s'", argv[i]);
    } else if (strcmp(arg, "--max-work") == 0) {
      if (++i == argc) return usage_error("%s needs a number", arg);
      if (!parse_count(argv[i], &config.max_work) || config.max_work == 0)
        return usage_error("--max-work needs a positive whole number, not '%s'", argv[i]);
    } else if (strcmp(arg, "--max-trace-size") == 0) {
      size_t size;
      if (++i == argc) return usage_error("%s needs a size", arg);
      if (!parse_size(argv[i], &size) || size == 0)
        return usage_error("--max-trace-size needs a size such as 100MB or 2GB, not '%s'", argv[i]);
      config.max_trace_size = size;
    } else if (strcmp(arg, "--max-time") == 0) {
      if (++i == argc) return usage_error("%s needs a duration", arg);
      if (!parse_duration(argv[i], &config.max_time))
        return usage_error("--max-time needs a duration such as 10s, 500ms or 2us, not '%s'", argv[i]);
    } else {
      return usage_error("unknown option '%s'", arg);
    }
  }
  if (i == argc) return usage_error("%s", "no script given");
  const char *path = argv[i++];
  /* which options go together */
  bool dfs = explore.strategy == EXPLORE_EXHAUSTIVE || explore.strategy == EXPLORE_DFS ||
             explore.strategy == EXPLORE_DELAY;
  if (data_seed_given && (explore.count || seed_given || replay_path))
    return usage_error("%s", "--data-seed seeds the random numbers of a plain run, on io-sim's schedule; --seed, "
                             "--explore and --replay choose the numbers with the schedule");
  if (explore.count) {
    if (replay_path) return usage_error("%s", "--replay runs one schedule: it cannot be combined with --explore");
    if (repeat || config.profile || trace_json_path || timeline_path || stats_json || print_result)
      return usage_error("%s", "--explore reports on its own: --repeat, --profile..., --trace-json, --timeline, "
                               "--stats-json and --result go with single runs (--seed, --replay)");
    if (explore.strategy == EXPLORE_DELAY && (explore.jobs > 1 || explore.shards > 1))
      return usage_error("%s", "--jobs and --shard split seeds or the exhaustive search's tree; delay bounding runs "
                               "in one process");
    if (dfs && (explore.jobs > 1 || explore.shards > 1) && explore.preemptions < 0)
      return usage_error("%s", "--jobs and --shard split an exhaustive search bound by bound: give its last bound, "
                               "--preemptions K");
    if (!dfs && explore.preemptions >= 0)
      return usage_error("%s", "--preemptions bounds exhaustive, dfs and delay search, not pct or random");
    /* the seeds are first_seed .. first_seed + N - 1: they must not wrap */
    char message[400];
    if (seed_given && !dfs && explore.count - 1 > UINT64_MAX - seed) {
      snprintf(message, sizeof message, "--seed %s with --explore %" PRIu64 " is out of range: the seeds would pass "
               "18446744073709551615", argv_seed, explore.count);
      return usage_error("%s", message);
    }
    /* a slice of the seeds that gets none would pass having run nothing */
    if (!dfs && explore.shard > explore.count) {
      snprintf(message, sizeof message, "--shard %s gets none of --explore %" PRIu64 "'s seeds: slice I has seeds only "
               "when I <= the number of schedules", argv_shard, explore.count);
      return usage_error("%s", message);
    }
    if (seed_given) explore.first_seed = seed;
    explore.seed_given = seed_given;
  } else {
    if (explore_only) return usage_error("%s needs --explore", explore_option);
    if (replay_path && (seed_given || strategy_given))
      return usage_error("%s", "--replay runs the schedule its file gives: no --seed or --strategy with it");
    if (seed_given && dfs)
      return usage_error("%s", "--seed runs one schedule of pct or random; exhaustive and delay search need --explore");
    if (strategy_given && !seed_given && !replay_path)
      return usage_error("%s", "--strategy needs --explore, or --seed for one schedule");
  }
  /* a seed's run stops where --explore's would, so a schedule that loops
   * forever under exploration reproduces as its step limit */
  if (seed_given && !explore.count && !config.max_steps) config.max_steps = EXPLORE_DEFAULT_MAX_STEPS;
  if (jitter_given && !explore.count && !seed_given)
    return usage_error("%s", "--jitter needs --explore, or --seed for one schedule (a replay takes its file's)");
  explore.script = path;
  explore.quiet = quiet;
  explore.fail_on_limit = fail_on_limit;
  if (!options_ended) warn_options_after_script(argc, argv, i);
  config.argv = (const char **)argv + i;
  config.argc = argc - i;
  if (quiet || config.trace) config.write_say = NULL;
  if (quiet) config.trace = false;

  config.no_prelude = vm_is_bytecode_file(path); /* a compiled program carries its own */
  /* a compiled program's actions were chosen by simc, and its file records
   * them; the continuations are the run's, either way */
  if (config.no_prelude && actions_given)
    return usage_error("--actions chooses how a script is compiled: '%s' is compiled already (simc --actions=...)",
                       path);
  const Output outputs[] = {{"--trace-json", trace_json_path}, {"--timeline", timeline_path},
                            {"--profile-json", profile_json}, {"--profile-folded", profile_folded},
                            {"--schedule-out", explore.schedule_out}, {"--stats-json", stats_json}};
  int output_count = (int)(sizeof outputs / sizeof *outputs);
  if (!outputs_spare_inputs(outputs, output_count, path, replay_path, NULL)) return SIM_USAGE;
  if (trace_json_path) config.write_trace_json = write_trace_json;
  VM *vm = vm_new(&config);
  if (!vm) {
    fprintf(stderr, "simvm: internal error: the standard library did not compile\n");
    return SIM_FAILED;
  }
  SimStatus status = vm_load_file(vm, path);
  /* the imports are known once loaded; nothing has been written yet */
  if (!outputs_spare_inputs(outputs, output_count, path, replay_path, vm)) {
    vm_free(vm);
    return SIM_USAGE;
  }
  if (status == SIM_OK && explore.count) {
    explore.stop = &stop_signal;
    exploring = true;
    catch_signals();
    int code = explore_command(vm, &explore);
    vm_free(vm);
    return stop_signal && code != SIM_USAGE ? 128 + stop_signal : code;
  }
  if (status == SIM_OK && replay_path) {
    int code;
    explorer = explore_replay_file(vm, replay_path, config.max_steps != 0, &code);
    if (!explorer && code >= 0) {
      vm_free(vm);
      return code;
    }
  } else if (status == SIM_OK && seed_given) {
    explorer = explore_seeded(vm, &explore, seed);
  }
  if (trace_json_path && !outfile_open(&trace_json, trace_json_path)) {
    fprintf(stderr, "simvm: cannot write '%s': %s\n", trace_json_path, strerror(errno));
    explore_free(explorer);
    vm_free(vm);
    return SIM_USAGE;
  }
  double wall = 0;
  bool ran = status == SIM_OK;
  if (ran) {
    running_vm = vm;
    catch_signals();
    status = repeat ? run_repeated(vm, repeat, &wall) : run_once(vm, &wall);
    ran = status != SIM_COMPILE_ERROR; /* no main: nothing ran */
  }
  if (explorer && replay_path && ran && explore_replay_failed(vm, explorer, replay_path, status))
    status = SIM_COMPILE_ERROR;
  /* what ran is written out whatever ended it: a failure, a limit, a
   * signal or a write error */
  if (config.profile && ran) {
    fflush(stdout);
    /* the text profile is an output too: a failed write is exit status 2 */
    if (!profile_json && !profile_folded && (!vm_write_profile(vm, stderr, 't', wall) || fflush(stderr) != 0))
      status = SIM_USAGE;
    if (profile_json && !write_output_file(vm, profile_json, 'j', wall)) status = SIM_USAGE;
    if (profile_folded && !write_output_file(vm, profile_folded, 'f', wall)) status = SIM_USAGE;
  }
  if (timeline_path && ran && !write_output_file(vm, timeline_path, 'l', wall)) status = SIM_USAGE;
  if (stats_json && ran && !write_output_file(vm, stats_json, 's', wall)) status = SIM_USAGE;
  if (trace_json.file && !outfile_commit(&trace_json) && !output_broken) {
    fprintf(stderr, "simvm: cannot write '%s': %s\n", trace_json_path, strerror(errno));
    status = SIM_USAGE;
  }
  if (print_result && status == SIM_OK) {
    char *text = vm_show(vm, vm_result(vm));
    printf("%s\n", text);
    free(text);
  }
  running_vm = NULL;
  explore_free(explorer);
  vm_free(vm);
  if (fflush(stdout) != 0 && !output_broken) status = output_failed();
  if (output_broken) status = SIM_USAGE;
  if (status == SIM_INTERRUPTED) return 128 + (stop_signal ? stop_signal : SIGINT);
  return (int)status;
}
