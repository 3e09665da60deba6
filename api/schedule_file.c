/* Schedule files: writing, reading and checking them (schedule_file.h). */
#include "schedule_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shrink.h"
#include "../vm/value/show.h"
#include "../base/options.h"
#include "../base/outfile.h"

/* ---- what a schedule needs ---- */

static void count_phrase(Buffer *out, int n, const char *one, const char *many, bool *first, bool last) {
  if (!*first) buf_printf(out, last ? " and " : ", ");
  buf_printf(out, "%d %s", n, n == 1 ? one : many);
  *first = false;
}

void schedule_story(const Schedule *s, Buffer *out) {
  int counts[CHOICE_KINDS] = {0};
  for (int i = 0; i < s->choice_count; i++) counts[s->choices[i].kind]++;
  int draws = counts[CHOICE_RANDOM] + counts[CHOICE_FLOAT] + counts[CHOICE_SPAN];
  int items[5] = {s->dev_count, counts[CHOICE_FAULT], draws, counts[CHOICE_DURATION], counts[CHOICE_TIMERS]};
  static const char *const one[] = {"thread deviation", "fault fired", "chosen random draw", "chosen duration",
                                    "timer order"};
  static const char *const many[] = {"thread deviations", "faults fired", "chosen random draws", "chosen durations",
                                     "timer orders"};
  static const char *const none[] = {"no thread deviation", "fault", "random draw", "duration", "timer order"};
  int present = 0, last = -1;
  for (int k = 0; k < 5; k++)
    if (items[k]) present++, last = k;
  bool first = true;
  if (!present) {
    buf_printf(out, "fails with no deviation and no choice off its default");
    return;
  }
  buf_printf(out, "fails with ");
  for (int k = 0; k < 5; k++) {
    if (!items[k]) continue;
    count_phrase(out, items[k], one[k], many[k], &first, k == last && present > 1);
    if (k == 0 && schedule_preemptions(s) != s->dev_count)
      buf_printf(out, " (%d preemption%s)", schedule_preemptions(s), schedule_preemptions(s) == 1 ? "" : "s");
  }
  /* what does not matter */
  int absent = 0;
  for (int k = 1; k < 5; k++) absent += !items[k];
  if (!absent) return;
  buf_printf(out, "; no ");
  int said = 0;
  for (int k = 1; k < 5; k++) {
    if (items[k]) continue;
    if (said) buf_printf(out, said == absent - 1 ? " or " : ", ");
    buf_printf(out, "%s", none[k]);
    said++;
  }
  buf_printf(out, " matters");
}

/* ---- writing ---- */

static void deviations_text(Explorer *ex, Buffer *out, const Schedule *s) {
  for (int i = 0; i < s->dev_count; i++) {
    const Deviation *d = &s->devs[i];
    buf_printf(out, "step %d at ", d->step);
    duration_show(out, d->time);
    buf_printf(out, " runs %s", explore_thread_id(ex, d->thread));
    buf_printf(out, "    # instead of %s%s\n", explore_thread_id(ex, d->instead), d->preemption ? ", preempting it" : "");
  }
}

/* A choice's line, and a comment on what its default was. */
static void choice_line(Explorer *ex, Buffer *out, const Schedule *s, const Choice *c) {
  explore_choice_text(ex, c, s->orders, out);
  buf_printf(out, "    # at ");
  duration_show(out, c->time);
  if (c->kind == CHOICE_RANDOM) buf_printf(out, "; the stream gave %" PRId64, c->nominal);
  else if (c->kind == CHOICE_SPAN) {
    buf_printf(out, "; the stream gave ");
    duration_show(out, c->nominal);
  } else if (c->kind == CHOICE_FLOAT) {
    double x;
    memcpy(&x, &c->nominal, sizeof x);
    buf_printf(out, "; the stream gave ");
    value_show(out, FLOAT_VAL(x), false);
  }
  buf_printf(out, "\n");
}

/* Write `text` to `path` whole or not at all (base/outfile.h). */
static bool write_whole(const char *path, const Buffer *text) {
  OutFile out;
  bool ok = outfile_open(&out, path);
  if (ok) {
    if (fwrite(text->data, 1, text->length, out.file) != text->length) {
      int saved = errno;
      outfile_discard(&out);
      errno = saved;
      ok = false;
    } else {
      ok = outfile_commit(&out);
    }
  }
  if (!ok) fprintf(stderr, "simvm: cannot write '%s': %s\n", path, strerror(errno));
  return ok;
}

bool schedule_file_write(Context *cx, const char *path, const Schedule *s, const ScheduleNote *note) {
  VM *vm = cx->vm;
  Buffer text, story;
  buf_init(&text);
  buf_init(&story);
  schedule_story(s, &story);
  int now = s->dev_count + s->choice_count;
  buf_printf(&text, "# simvm schedule: simvm --replay %s %s\n", path, cx->options->script);
  buf_printf(&text, "# found by %s; %d deviation%s and %d other choice%s", note->found, s->dev_count,
             s->dev_count == 1 ? "" : "s", s->choice_count, s->choice_count == 1 ? "" : "s");
  if (note->before != now) buf_printf(&text, " (shrunk from %d in all)", note->before);
  buf_printf(&text, "\n# %s\n# outcome: %s\n", story.data, note->outcome->description);
  buf_printf(&text, "simvm-schedule 2\n");
  buf_printf(&text, "program %s %016" PRIx64 "\n", explore_program_name(vm), explore_program_hash(vm));
  for (int i = 0; i < vm->globals.count; i++)
    if (explore_is_definition(vm, i))
      buf_printf(&text, "def %s %016" PRIx64 "\n", vm->global_info[i].name->chars, explore_definition_hash(vm, i));
  buf_printf(&text, "seed %" PRIu64 "\n", note->seed);
  buf_printf(&text, "option --max-steps %" PRIu64 "\n", vm->config.max_steps);
  if (vm->config.max_time >= 0) {
    buf_printf(&text, "option --max-time ");
    duration_show(&text, vm->config.max_time);
    buf_printf(&text, "\n");
  }
  if (vm->config.max_heap) buf_printf(&text, "option --max-heap %zuB\n", vm->config.max_heap);
  if (vm->config.max_threads) buf_printf(&text, "option --max-threads %d\n", vm->config.max_threads);
  if (vm->config.fail_on_uncaught || cx->options->fail_on_limit)
    buf_printf(&text, "option --fail-on %s%s%s\n", vm->config.fail_on_uncaught ? "uncaught" : "",
               vm->config.fail_on_uncaught && cx->options->fail_on_limit ? "," : "",
               cx->options->fail_on_limit ? "limit" : "");
  if (vm->config.strict_shutdown) buf_printf(&text, "option --strict-shutdown\n");
  uint32_t jitter = explore_choices(cx->ex)->jitter;
  if (jitter) {
    buf_printf(&text, "option --jitter %u", jitter / 10000);
    if (jitter % 10000) {
      char decimals[8];
      snprintf(decimals, sizeof decimals, "%04u", jitter % 10000);
      for (int k = 3; k > 0 && decimals[k] == '0'; k--) decimals[k] = '\0';
      buf_printf(&text, ".%s", decimals);
    }
    buf_printf(&text, "%%\n");
  }
  buf_printf(&text, "outcome %s%s\n", note->outcome->kind, note->outcome->where);
  deviations_text(cx->ex, &text, s);
  for (int i = 0; i < s->choice_count; i++) choice_line(cx->ex, &text, s, &s->choices[i]);
  bool ok = write_whole(path, &text);
  buf_free(&text);
  buf_free(&story);
  return ok;
}

/* ---- reading ---- */

/* The longest line read: a timers line names every timer due at once. */
#define SCHEDULE_LINE_MAX (16u << 20)
/* and the whole file: a device or a pipe that never ends (/dev/zero,
 * `yes ''`) is refused once past it, not read forever */
#define SCHEDULE_FILE_MAX ((size_t)256 << 20)

/* One line of `file` into *line (its '\n' kept, NUL-terminated), reading at
 * most `max` + 1 bytes of it: its length, -1 at the end of the file, or
 * max + 1 when the line is longer (the rest of it unread); it stops after a
 * NUL byte too. getline would grow its buffer without bound on a stream
 * with no newline. */
static ssize_t read_line(FILE *file, char **line, size_t *capacity, size_t max) {
  size_t length = 0;
  int c = 0;
  while (length <= max && (c = getc(file)) != EOF) {
    if (length + 2 > *capacity) {
      *capacity = *capacity ? 2 * *capacity : 256;
      *line = xrealloc(*line, *capacity);
    }
    (*line)[length++] = (char)c;
    if (c == '\n' || c == '\0') break; /* a NUL: the caller refuses the file */
  }
  if (length == 0 && c == EOF) return -1;
  (*line)[length] = '\0';
  return (ssize_t)length;
}

static bool bad_file(const char *path, int line, const char *fmt, const char *arg) {
  fflush(stdout);
  if (line) fprintf(stderr, "simvm: %s:%d: ", path, line);
  else fprintf(stderr, "simvm: %s: ", path);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  return false;
}

void schedule_file_free(ScheduleFile *f) {
  free(f->defs);
  free(f->choice_lines);
  schedule_free(&f->schedule);
  f->defs = NULL;
  f->choice_lines = NULL;
}

/* A number refused only for its size (or a step or choice number of 0):
 * digits alone, or digits and a duration's unit. The file is then not
 * malformed but out of range, and says so. */
static bool out_of_range(const char *text) {
  size_t digits = strspn(text, "0123456789");
  const char *unit = text + digits;
  return digits > 0 && (!*unit || strcmp(unit, "ns") == 0 || strcmp(unit, "us") == 0 || strcmp(unit, "ms") == 0 ||
                        strcmp(unit, "s") == 0);
}

/* T#N whose N is out of range (parse_name refused it). */
static bool name_out_of_range(const char *text) {
  const char *hash = strchr(text, '#');
  return hash && out_of_range(hash + 1);
}

/* "2#3": a thread's key and a number from 1; false if malformed. */
static bool parse_name(Explorer *ex, const char *text, int *key, int *index) {
  const char *hash = strchr(text, '#');
  if (!hash || hash == text || hash - text > 60) return false;
  char id[64];
  memcpy(id, text, (size_t)(hash - text));
  id[hash - text] = '\0';
  uint64_t n;
  if (!parse_count(hash + 1, &n) || n < 1 || n > 1000000000) return false;
  *key = explore_key_of(ex, id);
  *index = (int)n;
  return *key >= 0;
}

static void add_choice(Schedule *s, Choice c) {
  s->choices = xrealloc(s->choices, (size_t)(s->choice_count + 1) * sizeof *s->choices);
  s->choices[s->choice_count++] = c;
}

/* The words of a line, split at spaces (at most `max`); how many. */
static int split_words(char *text, char **words, int max) {
  int n = 0;
  for (char *s = text; *s && n < max;) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) break;
    words[n++] = s;
    while (*s && *s != ' ' && *s != '\t') s++;
    if (*s) *s++ = '\0';
  }
  return n;
}

static const char *parse_choice_words(Explorer *ex, ScheduleFile *f, char *text, char **w, int n);

/* A choice line (random, delay, timeout, registerDelay, newTimeout, fault, timers):
 * NULL when well formed, else what is wrong. */
static const char *parse_choice(Explorer *ex, ScheduleFile *f, char *text) {
  size_t length = strlen(text);
  char *copy = xrealloc(NULL, length + 1);
  memcpy(copy, text, length + 1);
  int max = 1;
  for (const char *p = text; *p; p++) max += *p == ' ' || *p == '\t';
  char **w = xrealloc(NULL, (size_t)max * sizeof *w);
  int n = split_words(copy, w, max);
  const char *problem = n == 0 ? "an empty choice line" : parse_choice_words(ex, f, text, w, n);
  free(w);
  free(copy);
  return problem;
}

static const char *parse_choice_words(Explorer *ex, ScheduleFile *f, char *text, char **w, int n) {
  Choice c = {0};
  if (strcmp(w[0], "timers") == 0) {
    /* timers at TIME fire A, B, ... */
    if (n >= 5 && strcmp(w[1], "at") == 0 && strcmp(w[3], "fire") == 0 && !parse_duration(w[2], &c.time) &&
        out_of_range(w[2]))
      return "a time out of range in a timers line (at most 9223372036854775807ns)";
    if (n < 5 || strcmp(w[1], "at") != 0 || strcmp(w[3], "fire") != 0 || !parse_duration(w[2], &c.time))
      return "malformed timers line (it should read 'timers at TIME fire T#N, T#N, ...')";
    c.kind = CHOICE_TIMERS;
    c.thread = -1;
    c.lo = f->schedule.order_count;
    for (int i = 4; i < n; i++) {
      size_t length = strlen(w[i]);
      if (i + 1 < n) {
        if (length < 2 || w[i][length - 1] != ',') return "malformed timers line (the timers are separated by commas)";
        w[i][length - 1] = '\0';
      }
      int key, index;
      if (!parse_name(ex, w[i], &key, &index))
        return name_out_of_range(w[i]) ? "a timer number out of range (T#N: N from 1 to 1000000000)"
                                       : "malformed timer name in a timers line (it should read T#N)";
      for (int64_t k = c.lo; k < f->schedule.order_count; k++)
        if (f->schedule.orders[k] == TIMER_NAME(key, index)) return "a timer is named twice in a timers line";
      f->schedule.orders = xrealloc(f->schedule.orders, (size_t)(f->schedule.order_count + 1) * sizeof(int64_t));
      f->schedule.orders[f->schedule.order_count++] = TIMER_NAME(key, index);
    }
    c.hi = f->schedule.order_count - c.lo;
    if (c.hi < 2) return "a timers line needs two timers or more";
    add_choice(&f->schedule, c);
    return NULL;
  }
  if (strcmp(w[0], "fault") == 0) {
    /* fault T#N "NAME" fired: the name has no quote or space inside? it may
     * have spaces: take it between the first and the last quote */
    char *open = strchr(text, '"'), *close = strrchr(text, '"');
    if (n < 3 || !open || close == open || strcmp(close, "\" fired") != 0)
      return "malformed fault line (it should read 'fault T#N \"NAME\" fired')";
    if (!parse_name(ex, w[1], &c.thread, &c.index))
      return name_out_of_range(w[1]) ? "a fault number out of range (T#N: N from 1 to 1000000000)"
                                     : "malformed fault line (its choice should be named T#N)";
    *close = '\0';
    c.kind = CHOICE_FAULT;
    c.value = 1;
    c.name = -1;
    if (strlen(open + 1) == 0) return "a fault line needs a name";
    /* the name's index comes from the explorer's table, the same as the run's */
    c.name = choices_fault_index((ChoiceLog *)explore_choices(ex), open + 1);
    add_choice(&f->schedule, c);
    return NULL;
  }
  /* random T#N = V of RANGE; delay|timeout|registerDelay|newTimeout T#N = D of NOMINAL */
  if (n == 6 && strcmp(w[2], "=") == 0 && strcmp(w[4], "of") == 0 && !parse_name(ex, w[1], &c.thread, &c.index) &&
      name_out_of_range(w[1]))
    return "a choice number out of range (T#N: N from 1 to 1000000000)";
  if (n != 6 || strcmp(w[2], "=") != 0 || strcmp(w[4], "of") != 0 || !parse_name(ex, w[1], &c.thread, &c.index))
    return "malformed choice line (it should read 'random T#N = V of RANGE' or 'delay T#N = D of NOMINAL')";
  if (strcmp(w[0], "random") == 0) {
    char *dots = strstr(w[5], "..");
    if (strcmp(w[5], "float") == 0) {
      char *end;
      errno = 0;
      double x = strtod(w[3], &end);
      if (*end || errno || !(x >= 0 && x < 1)) return "a float draw out of its range [0, 1)";
      c.kind = CHOICE_FLOAT;
      memcpy(&c.value, &x, sizeof x);
    } else if (dots) {
      *dots = '\0';
      c.kind = CHOICE_SPAN;
      if ((!parse_duration(w[5], &c.lo) && out_of_range(w[5])) || (!parse_duration(dots + 2, &c.hi) && out_of_range(dots + 2)))
        return "a duration out of range in a random line (at most 9223372036854775807ns)";
      if (!parse_duration(w[5], &c.lo) || !parse_duration(dots + 2, &c.hi) || c.lo > c.hi)
        return "malformed randomDuration range (it should read LO..HI with LO <= HI)";
      if (!parse_duration(w[3], &c.value))
        return out_of_range(w[3]) ? "a duration out of range in a random line (at most 9223372036854775807ns)"
                                  : "malformed duration in a random line";
      if (c.value < c.lo || c.value > c.hi) return "a random draw out of its range";
    } else {
      uint64_t range, value;
      if (!parse_count(w[5], &range) || range < 1 || range > (uint64_t)INT64_MAX)
        return out_of_range(w[5]) ? "a random range n out of range (from 1 to 9223372036854775807)"
                                  : "malformed random range (it should be a whole number n >= 1)";
      if (!parse_count(w[3], &value))
        return out_of_range(w[3]) ? "a random draw out of its range" : "malformed value in a random line";
      if (value >= range) return "a random draw out of its range";
      c.kind = CHOICE_RANDOM;
      c.hi = (int64_t)range - 1;
      c.value = (int64_t)value;
    }
    add_choice(&f->schedule, c);
    return NULL;
  }
  for (int op = 0; op < TIMER_KIND_COUNT; op++) {
    if (strcmp(w[0], timer_kind_names[op]) != 0) continue;
    c.kind = CHOICE_DURATION;
    c.op = (uint8_t)op;
    if (!parse_duration(w[3], &c.value) || !parse_duration(w[5], &c.nominal))
      return out_of_range(w[3]) || out_of_range(w[5]) ? "a duration out of range (at most 9223372036854775807ns)"
                                                     : "malformed duration in a timer line";
    add_choice(&f->schedule, c);
    return NULL;
  }
  return NULL; /* not reached: the caller knows the word */
}

static bool is_choice_word(const char *word) {
  static const char *const words[] = {"random", "fault", "timers"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strcmp(word, words[i]) == 0) return true;
  for (int op = 0; op < TIMER_KIND_COUNT; op++)
    if (strcmp(word, timer_kind_names[op]) == 0) return true;
  return false;
}

/* Checks that need the whole file: durations within its --jitter, and no
 * choice named twice. The problem, with the choice's line in *line. */
static const char *check_choices(ScheduleFile *f, int *line) {
  const Schedule *s = &f->schedule;
  for (int i = 0; i < s->choice_count; i++) {
    const Choice *c = &s->choices[i];
    *line = f->choice_lines[i];
    if (c->kind == CHOICE_DURATION) {
      if (!f->jitter) return "a timer line, but no --jitter option line to choose durations within";
      int64_t lo, hi;
      choice_jitter_range(c->nominal, f->jitter, &lo, &hi);
      if (c->value < lo || c->value > hi) return "a duration out of its --jitter range";
    }
    for (int j = 0; j < i; j++) {
      const Choice *d = &s->choices[j];
      if (c->kind == CHOICE_TIMERS || d->kind == CHOICE_TIMERS) continue;
      if (choice_family(c->kind) == choice_family(d->kind) && c->thread == d->thread && c->index == d->index)
        return "a choice is given twice";
    }
  }
  return NULL;
}

bool schedule_file_read(Explorer *ex, const char *path, ScheduleFile *f, int *status) {
  memset(f, 0, sizeof *f);
  *status = SIM_COMPILE_ERROR;
  f->max_time = -1;
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    *status = SIM_USAGE;
    fflush(stdout);
    fprintf(stderr, "simvm: cannot read '%s': it is a directory\n", path);
    return false;
  }
  FILE *file = fopen(path, "r");
  if (!file) {
    *status = SIM_USAGE;
    fflush(stdout);
    fprintf(stderr, "simvm: cannot open '%s': %s\n", path, strerror(errno));
    return false;
  }
  char *line = NULL;
  size_t line_capacity = 0;
  ssize_t got_length;
  int number = 0;
  bool program = false;
  bool ok = true;
  Schedule *s = &f->schedule;
  size_t total = 0;
  while (ok && (got_length = read_line(file, &line, &line_capacity, SCHEDULE_LINE_MAX)) >= 0) {
    number++;
    size_t length = (size_t)got_length;
    if (length > SCHEDULE_LINE_MAX) {
      ok = bad_file(path, number, "%s", "line too long");
      break;
    }
    if ((total += length) > SCHEDULE_FILE_MAX) {
      ok = bad_file(path, number, "%s", "file too big (over 256 MB)");
      break;
    }
    if (memchr(line, '\0', length)) {
      ok = bad_file(path, number, "%s", "not a text file (a NUL byte)");
      break;
    }
    /* a comment's '#' starts the line or follows a space, outside quotes
     * (2#3 names a choice; a fault's name may hold one) */
    bool quoted = false;
    for (char *p = line; *p; p++) {
      if (*p == '"') quoted = !quoted;
      if (*p == '#' && !quoted && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
        *p = '\0';
        break;
      }
    }
    char *end = line + strlen(line);
    while (end > line && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) *--end = '\0';
    char *text = line;
    while (*text == ' ' || *text == '\t') text++;
    if (!*text) continue;
    if (!f->version) {
      if (strcmp(text, "simvm-schedule 1") == 0) f->version = 1;
      else if (strcmp(text, "simvm-schedule 2") == 0) f->version = 2;
      else {
        ok = bad_file(path, number, "%s", "not a simvm schedule file (its first line must be 'simvm-schedule 2')");
        break;
      }
      continue;
    }
    char word[64], a[256], b[256], c[256];
    int got = sscanf(text, "%63s %255s %255s %255s", word, a, b, c);
    if (strcmp(word, "program") == 0 && got == 3) {
      char *rest;
      errno = 0;
      f->hash = strtoull(b, &rest, 16);
      if (*rest || errno || strlen(b) != 16) { ok = bad_file(path, number, "malformed program line: '%s'", text); break; }
      snprintf(f->name, sizeof f->name, "%s", a);
      program = true;
    } else if (strcmp(word, "def") == 0 && got == 3 && f->version >= 2) {
      char *rest;
      errno = 0;
      uint64_t h = strtoull(b, &rest, 16);
      if (*rest || errno || strlen(b) != 16 || strlen(a) >= sizeof f->defs->name) {
        ok = bad_file(path, number, "malformed def line: '%s'", text);
        break;
      }
      f->defs = xrealloc(f->defs, (size_t)(f->def_count + 1) * sizeof *f->defs);
      snprintf(f->defs[f->def_count].name, sizeof f->defs->name, "%s", a);
      f->defs[f->def_count++].hash = h;
    } else if (strcmp(word, "seed") == 0 && got == 2) {
      if (!parse_count(a, &f->seed)) {
        ok = bad_file(path, number,
                      out_of_range(a) ? "a seed out of range (at most 18446744073709551615): '%s'" : "malformed seed line: '%s'",
                      text);
        break;
      }
    } else if (strcmp(word, "outcome") == 0 && got >= 2 && f->version >= 2) {
      const char *rest = text + strlen("outcome ");
      size_t kind_length = strcspn(rest, " ");
      bool known = false;
      for (int k = 0; explore_kinds[k] && !known; k++)
        known = strlen(explore_kinds[k]) == kind_length && strncmp(explore_kinds[k], rest, kind_length) == 0;
      if (f->has_outcome) {
        ok = bad_file(path, number, "a second outcome line: '%s'", text);
        break;
      }
      if (!known || strlen(rest + kind_length) >= sizeof f->where) {
        ok = bad_file(path, number, "malformed outcome line: '%s' (it should read 'outcome KIND PLACE', KIND one of pass, assertion, error, uncaught, deadlock, limit, strict-shutdown)", text);
        break;
      }
      memcpy(f->kind, rest, kind_length);
      f->kind[kind_length] = '\0';
      snprintf(f->where, sizeof f->where, "%s", rest + kind_length);
      f->has_outcome = true;
    } else if (strcmp(word, "option") == 0 && got >= 2) {
      if (strcmp(a, "--max-steps") == 0 && got == 3 && parse_count(b, &f->max_steps) && f->max_steps > 0) continue;
      if (strcmp(a, "--fail-on") == 0 && got == 3 && parse_fail_on(b, &f->fail_on_uncaught, &f->fail_on_limit)) continue;
      if (strcmp(a, "--max-time") == 0 && got == 3 && f->version >= 2 && parse_duration(b, &f->max_time)) continue;
      if (strcmp(a, "--max-heap") == 0 && got == 3 && f->version >= 2 && parse_size(b, &f->max_heap) && f->max_heap)
        continue;
      uint64_t threads;
      if (strcmp(a, "--max-threads") == 0 && got == 3 && f->version >= 2 && parse_count(b, &threads) && threads >= 1 &&
          threads <= 100000000) {
        f->max_threads = (int)threads;
        continue;
      }
      if (strcmp(a, "--strict-shutdown") == 0 && got == 2) {
        f->strict_shutdown = true;
        continue;
      }
      if (strcmp(a, "--jitter") == 0 && got == 3 && f->version >= 2) {
        if (parse_percent(b, &f->jitter)) continue;
        ok = bad_file(path, number, "a jitter above 0%% and below 100%%, not '%s'", b);
        break;
      }
      ok = bad_file(path, number, "unknown option line: '%s'", text);
    } else if (strcmp(word, "step") == 0) {
      uint64_t step;
      int64_t time;
      char at[8], runs[8], id[64];
      int key;
      bool shaped = sscanf(text, "step %255s %7s %255s %7s %63s %255s", a, at, b, runs, id, c) == 5 &&
                    strcmp(at, "at") == 0 && strcmp(runs, "runs") == 0;
      if (shaped && (!parse_count(a, &step) || step < 1 || step > 1000000000) && out_of_range(a)) {
        ok = bad_file(path, number, "a step number out of range (from 1 to 1000000000): '%s'", text);
        break;
      }
      if (shaped && !parse_duration(b, &time) && out_of_range(b)) {
        ok = bad_file(path, number, "a time out of range (at most 9223372036854775807ns): '%s'", text);
        break;
      }
      if (!shaped || !parse_count(a, &step) || step < 1 || step > 1000000000 ||
          !parse_duration(b, &time) || (key = explore_key_of(ex, id)) < 0) {
        ok = bad_file(path, number, "malformed step line: '%s' (it should read 'step N at TIME runs THREAD')", text);
        break;
      }
      if (s->dev_count && (int)step <= s->devs[s->dev_count - 1].step) {
        ok = bad_file(path, number, "steps must increase: '%s'", text);
        break;
      }
      s->devs = xrealloc(s->devs, (size_t)(s->dev_count + 1) * sizeof *s->devs);
      s->devs[s->dev_count++] = (Deviation){(int)step, time, key, -1, false};
    } else if (f->version >= 2 && is_choice_word(word)) {
      int before = s->choice_count;
      const char *problem = parse_choice(ex, f, text);
      if (!problem && s->choice_count > before) {
        f->choice_lines = xrealloc(f->choice_lines, (size_t)s->choice_count * sizeof *f->choice_lines);
        f->choice_lines[s->choice_count - 1] = number;
      }
      if (problem) {
        char message[1200];
        snprintf(message, sizeof message, "%s: '%s'", problem, text);
        ok = bad_file(path, number, "%s", message);
        break;
      }
    } else {
      ok = bad_file(path, number, "unknown line: '%s'", text);
    }
  }
  if (ok && ferror(file)) {
    *status = SIM_USAGE;
    ok = bad_file(path, 0, "cannot read it: %s", strerror(errno));
  }
  free(line);
  fclose(file);
  if (ok && !f->version) ok = bad_file(path, 0, "%s", "not a simvm schedule file (it is empty)");
  if (ok && !program) ok = bad_file(path, 0, "%s", "no 'program' line");
  int problem_line = 0;
  const char *problem = ok ? check_choices(f, &problem_line) : NULL;
  if (problem) ok = bad_file(path, problem_line, "%s", problem);
  if (!ok) schedule_file_free(f);
  return ok;
}

bool schedule_file_changes(Context *cx, const ScheduleFile *f, Buffer *out) {
  VM *vm = cx->vm;
  Buffer changed, added, removed;
  buf_init(&changed);
  buf_init(&added);
  buf_init(&removed);
  int n_changed = 0, n_added = 0, n_removed = 0;
#define NAME(list, count, text)                                  \
  do {                                                           \
    if ((count) < 5) buf_printf(&(list), "%s%s", (count) ? ", " : "", (text)); \
    (count)++;                                                   \
  } while (0)
  for (int i = 0; i < vm->globals.count; i++) {
    if (!explore_is_definition(vm, i)) continue;
    const char *name = vm->global_info[i].name->chars;
    int found = -1;
    for (int k = 0; k < f->def_count && found < 0; k++)
      if (strcmp(f->defs[k].name, name) == 0) found = k;
    if (found < 0) NAME(added, n_added, name);
    else if (f->defs[found].hash != explore_definition_hash(vm, i)) NAME(changed, n_changed, name);
  }
  for (int k = 0; k < f->def_count; k++) {
    bool present = false;
    for (int i = 0; i < vm->globals.count && !present; i++)
      present = explore_is_definition(vm, i) && strcmp(vm->global_info[i].name->chars, f->defs[k].name) == 0;
    if (!present) NAME(removed, n_removed, f->defs[k].name);
  }
#undef NAME
  bool any = n_changed || n_added || n_removed;
  const char *sep = "";
  if (n_changed) {
    buf_printf(out, "%s%s%s changed", changed.data, n_changed > 5 ? " ..." : "", "");
    sep = "; ";
  }
  if (n_added) {
    buf_printf(out, "%s%s%s %s new", sep, added.data, n_added > 5 ? " ..." : "", n_added == 1 ? "is" : "are");
    sep = "; ";
  }
  if (n_removed) buf_printf(out, "%s%s%s %s gone", sep, removed.data, n_removed > 5 ? " ..." : "",
                            n_removed == 1 ? "is" : "are");
  buf_free(&changed);
  buf_free(&added);
  buf_free(&removed);
  return any;
}
