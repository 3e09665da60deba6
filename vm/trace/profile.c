/* Profiler data and reports (see profile.h). */
#include "profile.h"
#include "show.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

Profile *profile_new(void) {
  Profile *profile = xrealloc(NULL, sizeof *profile);
  memset(profile, 0, sizeof *profile);
  return profile;
}

void profile_free(Profile *profile) {
  if (!profile) return;
  for (int i = 0; i < profile->thread_count; i++) {
    free(profile->threads[i].id);
    free(profile->threads[i].label);
  }
  free(profile->threads);
  free(profile->nodes);
  free(profile->index);
  free(profile);
}

static uint32_t key_hash(int parent, const void *proto) {
  uint64_t h = (uint64_t)(uintptr_t)proto * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)parent * 0xc2b2ae3d27d4eb4full;
  return (uint32_t)(h >> 32);
}

static void index_insert(Profile *profile, int node) {
  uint32_t mask = (uint32_t)profile->index_capacity - 1;
  uint32_t i = key_hash(profile->nodes[node].parent, profile->nodes[node].proto) & mask;
  while (profile->index[i]) i = (i + 1) & mask;
  profile->index[i] = node + 1;
}

static int add_node(Profile *profile, int parent, const void *proto, int thread) {
  if (profile->node_count == profile->node_capacity) {
    profile->node_capacity = profile->node_capacity ? profile->node_capacity * 2 : 256;
    profile->nodes = xrealloc(profile->nodes, (size_t)profile->node_capacity * sizeof(ProfNode));
  }
  if ((profile->node_count + 1) * 2 > profile->index_capacity) {
    free(profile->index);
    profile->index_capacity = profile->index_capacity ? profile->index_capacity * 2 : 512;
    profile->index = xrealloc(NULL, (size_t)profile->index_capacity * sizeof(int));
    memset(profile->index, 0, (size_t)profile->index_capacity * sizeof(int));
    for (int i = 0; i < profile->node_count; i++)
      if (profile->nodes[i].parent >= 0) index_insert(profile, i);
  }
  int node = profile->node_count++;
  ProfNode *n = &profile->nodes[node];
  n->proto = proto;
  n->parent = parent;
  n->thread = thread;
  n->depth = parent >= 0 ? profile->nodes[parent].depth + 1 : 0;
  n->self = n->calls = 0;
  if (parent >= 0) index_insert(profile, node);
  return node;
}

int profile_child(Profile *profile, int parent, const void *proto) {
  if (profile->nodes[parent].depth >= PROFILE_MAX_DEPTH) return parent;
  if (profile->index_capacity) {
    uint32_t mask = (uint32_t)profile->index_capacity - 1;
    for (uint32_t i = key_hash(parent, proto) & mask; profile->index[i]; i = (i + 1) & mask) {
      ProfNode *n = &profile->nodes[profile->index[i] - 1];
      if (n->parent == parent && n->proto == proto) return profile->index[i] - 1;
    }
  }
  return add_node(profile, parent, proto, profile->nodes[parent].thread);
}

/* ---- threads ---- */

static char *copy_text(const char *text) {
  size_t n = strlen(text);
  char *copy = xrealloc(NULL, n + 1);
  memcpy(copy, text, n + 1);
  return copy;
}

void profile_thread_start(VM *vm, ObjThread *thread) {
  Profile *profile = vm->profile;
  if (profile->thread_count == profile->thread_capacity) {
    profile->thread_capacity = profile->thread_capacity ? profile->thread_capacity * 2 : 16;
    profile->threads = xrealloc(profile->threads, (size_t)profile->thread_capacity * sizeof(ProfThread));
  }
  int index = profile->thread_count++;
  ProfThread *t = &profile->threads[index];
  Buffer id;
  buf_init(&id);
  thread_id(&id, thread);
  vm_work(vm, id.length); /* as long as the thread is deep in the fork tree */
  t->id = copy_text(buf_text(&id));
  buf_free(&id);
  t->label = NULL;
  t->started = vm->now;
  t->ended = -1;
  t->blocked_ns = 0;
  t->blocked_since = 0;
  t->blocks = 0;
  t->root = add_node(profile, -1, NULL, index);
  thread->profile_index = index;
}

void profile_thread_end(VM *vm, ObjThread *thread) { vm->profile->threads[thread->profile_index].ended = vm->now; }

void profile_thread_label(VM *vm, ObjThread *thread) {
  ProfThread *t = &vm->profile->threads[thread->profile_index];
  free(t->label);
  size_t n = (size_t)thread->label->length; /* a label made by ++ may lack its NUL (vm/object.h) */
  t->label = xrealloc(NULL, n + 1);
  memcpy(t->label, thread->label->chars, n);
  t->label[n] = '\0';
}

void profile_thread_block(VM *vm, ObjThread *thread) {
  ProfThread *t = &vm->profile->threads[thread->profile_index];
  t->blocks++;
  t->blocked_since = vm->now;
}

void profile_thread_wake(VM *vm, ObjThread *thread) {
  ProfThread *t = &vm->profile->threads[thread->profile_index];
  t->blocked_ns += vm->now - t->blocked_since;
}

/* ---- derived figures ---- */

typedef struct {
  const ObjProto *proto;
  uint64_t calls, self, inclusive;
} FunctionRow;

static int by_inclusive(const void *a, const void *b) {
  const FunctionRow *x = a, *y = b;
  if (x->inclusive != y->inclusive) return x->inclusive < y->inclusive ? 1 : -1;
  if (x->self != y->self) return x->self < y->self ? 1 : -1;
  int c = strcmp(x->proto->file, y->proto->file);
  return c ? c : x->proto->line - y->proto->line;
}

/* Per-function calls, self and inclusive counts: a node's self count goes to
 * each distinct function on its path (so recursion is not counted twice). */
static FunctionRow *function_rows(const Profile *profile, int *count) {
  FunctionRow *rows = NULL;
  int n = 0, capacity = 0;
  int *row_of = xrealloc(NULL, (size_t)(profile->node_count + 1) * sizeof(int));
  /* proto -> row + 1, open addressing: a search of the rows for each node
   * cost nodes x functions */
  uint32_t mask = 64;
  while (mask < (uint32_t)profile->node_count * 2) mask *= 2;
  int *slot = xrealloc(NULL, (size_t)mask * sizeof(int));
  memset(slot, 0, (size_t)mask * sizeof(int));
  mask--;
  for (int i = 0; i < profile->node_count; i++) {
    const ProfNode *node = &profile->nodes[i];
    row_of[i] = -1;
    if (!node->proto) continue;
    uint32_t h = key_hash(0, node->proto) & mask;
    while (slot[h] && rows[slot[h] - 1].proto != node->proto) h = (h + 1) & mask;
    int row = slot[h] - 1;
    if (row < 0) {
      if (n == capacity) {
        capacity = capacity ? capacity * 2 : 32;
        rows = xrealloc(rows, (size_t)capacity * sizeof *rows);
      }
      rows[n] = (FunctionRow){node->proto, 0, 0, 0};
      row = n++;
      slot[h] = n;
    }
    row_of[i] = row;
    rows[row].calls += node->calls;
    rows[row].self += node->self;
  }
  int *seen = xrealloc(NULL, (size_t)(n + 1) * sizeof(int));
  for (int r = 0; r < n; r++) seen[r] = -1;
  for (int i = 0; i < profile->node_count; i++) {
    if (!profile->nodes[i].self) continue;
    for (int j = i; j >= 0; j = profile->nodes[j].parent) {
      int row = row_of[j];
      if (row < 0 || seen[row] == i) continue;
      seen[row] = i;
      rows[row].inclusive += profile->nodes[i].self;
    }
  }
  free(seen);
  free(slot);
  free(row_of);
  qsort(rows, (size_t)n, sizeof *rows, by_inclusive);
  *count = n;
  return rows;
}

/* Every thread's instructions, in one pass over the call paths (the caller
 * frees it): summing each thread's paths apart cost threads x paths. */
static uint64_t *thread_instructions(const Profile *profile) {
  uint64_t *total = xrealloc(NULL, (size_t)(profile->thread_count + 1) * sizeof *total);
  memset(total, 0, (size_t)(profile->thread_count + 1) * sizeof *total);
  for (int i = 0; i < profile->node_count; i++) total[profile->nodes[i].thread] += profile->nodes[i].self;
  return total;
}

static const char *proto_name(const ObjProto *proto) { return proto->name ? proto->name->chars : "?"; }

/* Append `text` as the text and folded reports show names: control bytes
 * and backslashes (and, in folded stacks, the ';' that separates frames) as
 * \xHH, so a thread label or a name from a bytecode file cannot break a
 * line or add a frame. */
static void append_name(Buffer *out, const char *text, bool folded) {
  for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
    if (*s < 0x20 || *s == 0x7f || *s == '\\' || (folded && *s == ';')) buf_printf(out, "\\x%02x", *s);
    else buf_append(out, (const char *)s, 1);
  }
}

static int64_t lifetime(const VM *vm, const ProfThread *t) { return (t->ended >= 0 ? t->ended : vm->now) - t->started; }

static const char *show_ns(Buffer *buf, int64_t ns) {
  buf->length = 0;
  if (buf->data) buf->data[0] = '\0';
  duration_show(buf, ns);
  return buf_text(buf);
}

typedef struct {
  int op;
  uint64_t count;
} OpRow;

static int by_count(const void *a, const void *b) {
  const OpRow *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return x->op - y->op;
}

/* ---- text ---- */

#define TEXT_THREADS 20

typedef struct {
  int thread;
  uint64_t instructions;
} ThreadRow;

static int by_instructions(const void *a, const void *b) {
  const ThreadRow *x = a, *y = b;
  if (x->instructions != y->instructions) return x->instructions < y->instructions ? 1 : -1;
  return x->thread - y->thread;
}

bool profile_write_text(VM *vm, FILE *out, double wall) {
  const Profile *profile = vm->profile;
  const VMStats *s = &vm->stats;
  Buffer a, b;
  buf_init(&a);
  buf_init(&b);
  fprintf(out, "simvm profile (every count is deterministic; only wall and GC times vary)\n\n");
  fprintf(out, "  wall time            %.3f ms\n", wall * 1e3);
  fprintf(out, "  simulated time       %s\n", show_ns(&a, vm->now));
  fprintf(out, "  instructions         %" PRIu64 "  (%.1f million per second)\n", vm->steps,
          wall > 0 ? (double)vm->steps / wall / 1e6 : 0.0);
  fprintf(out, "  events               %" PRIu64 "  (%.1f million per second)\n", s->events,
          wall > 0 ? (double)s->events / wall / 1e6 : 0.0);
  fprintf(out, "  load                 %" PRIu64 " instructions, once: the top-level values, not counted above\n",
          vm->load_steps);

  fprintf(out, "\nopcodes                     count   share\n");
  OpRow rows[OP_COUNT];
  int n = 0;
  uint64_t counted = 0;
  for (int op = 0; op < OP_COUNT; op++) {
    counted += profile->op_counts[op];
    if (profile->op_counts[op]) rows[n++] = (OpRow){op, profile->op_counts[op]};
  }
  qsort(rows, (size_t)n, sizeof *rows, by_count);
  for (int i = 0; i < n; i++)
    fprintf(out, "  %-16s %12" PRIu64 "  %5.1f%%\n", opcode_info[rows[i].op].name, rows[i].count,
            counted ? 100.0 * (double)rows[i].count / (double)counted : 0.0);

  fprintf(out, "\nbinds and continuations\n");
  fprintf(out, "  binds                %" PRIu64 "\n", s->binds);
  fprintf(out, "  continuations        %" PRIu64 "  (on the thread's stack %" PRIu64 ", on the heap %" PRIu64 ")\n",
          s->stack_continuations + s->heap_continuations, s->stack_continuations, s->heap_continuations);

  int fn_count;
  FunctionRow *fns = function_rows(profile, &fn_count);
  fprintf(out, "\nfunctions (by inclusive instructions)        calls          self     inclusive\n");
  for (int i = 0; i < fn_count; i++) {
    buf_free(&a);
    append_name(&a, proto_name(fns[i].proto), false);
    buf_append(&a, " (", 2);
    append_name(&a, fns[i].proto->file, false);
    buf_printf(&a, ":%d)", fns[i].proto->line);
    fprintf(out, "  %-40s %9" PRIu64 " %13" PRIu64 " %13" PRIu64 "\n", buf_text(&a), fns[i].calls, fns[i].self,
            fns[i].inclusive);
  }
  free(fns);

  /* the busiest threads (all of them in the JSON) */
  int shown = profile->thread_count < TEXT_THREADS ? profile->thread_count : TEXT_THREADS;
  ThreadRow *order = xrealloc(NULL, (size_t)(profile->thread_count + 1) * sizeof *order);
  uint64_t *instructions = thread_instructions(profile);
  for (int i = 0; i < profile->thread_count; i++) order[i] = (ThreadRow){i, instructions[i]};
  free(instructions);
  qsort(order, (size_t)profile->thread_count, sizeof *order, by_instructions);
  fprintf(out, "\nthreads (%d, busiest first)  instructions     lifetime      blocked   blocks\n", profile->thread_count);
  for (int k = 0; k < shown; k++) {
    int i = order[k].thread;
    const ProfThread *t = &profile->threads[i];
    buf_free(&a);
    buf_printf(&a, "%s", t->id[0] ? t->id : "main");
    if (t->label) {
      buf_append(&a, " (", 2);
      append_name(&a, t->label, false);
      buf_append(&a, ")", 1);
    }
    Buffer c;
    buf_init(&c);
    duration_show(&c, t->blocked_ns);
    fprintf(out, "  %-26s %14" PRIu64 " %12s %12s %8" PRIu64 "\n", buf_text(&a), order[k].instructions,
            show_ns(&b, lifetime(vm, t)), buf_text(&c), t->blocks);
    buf_free(&c);
  }
  if (shown < profile->thread_count)
    fprintf(out, "  ... and %d more threads (all of them in --profile-json)\n", profile->thread_count - shown);
  free(order);

  fprintf(out, "\nscheduler\n");
  fprintf(out, "  thread switches      %" PRIu64 "\n", s->switches);
  fprintf(out, "  forks                %" PRIu64 "\n", s->forks);
  fprintf(out, "  timers               %" PRIu64 " set, %" PRIu64 " fired, %" PRIu64 " cancelled\n", s->timers_set,
          s->timers_fired, s->timers_cancelled);
  fprintf(out, "  run queue peak       %d\n", s->run_queue_peak);

  fprintf(out, "\nmemory\n");
  fprintf(out, "  allocations          %" PRIu64 " objects, %" PRIu64 " bytes\n", s->allocations, s->bytes_allocated);
  fprintf(out, "  garbage collection   %" PRIu64 " cycles, %.3f ms\n", s->gc_cycles, s->gc_seconds * 1e3);
  fprintf(out, "  peak heap            %" PRIu64 " bytes\n", vm_peak_heap(vm));
  buf_free(&a);
  buf_free(&b);
  return !ferror(out);
}

/* ---- JSON ---- */

static void json_string(FILE *out, const char *text) {
  Buffer quoted;
  buf_init(&quoted);
  buf_append_json(&quoted, text);
  fputs(buf_text(&quoted), out);
  buf_free(&quoted);
}

bool profile_write_json(VM *vm, FILE *out, double wall) {
  const Profile *profile = vm->profile;
  const VMStats *s = &vm->stats;
  fprintf(out, "{\n  \"schema\": \"simvm-profile/1\",\n");
  fprintf(out, "  \"instructions\": %" PRIu64 ",\n", vm->steps);
  fprintf(out, "  \"load_instructions\": %" PRIu64 ",\n", vm->load_steps);
  fprintf(out, "  \"simulated_ns\": %" PRId64 ",\n", vm->now);
  fprintf(out, "  \"wall_seconds\": %.6f,\n", wall);
  fprintf(out, "  \"events\": %" PRIu64 ",\n", s->events);
  fprintf(out, "  \"opcodes\": {");
  bool first = true;
  for (int op = 0; op < OP_COUNT; op++) {
    if (!profile->op_counts[op]) continue;
    fprintf(out, "%s\n    \"%s\": %" PRIu64, first ? "" : ",", opcode_info[op].name, profile->op_counts[op]);
    first = false;
  }
  fprintf(out, "\n  },\n");
  fprintf(out, "  \"binds\": {\"binds\": %" PRIu64 ", \"stack_continuations\": %" PRIu64
               ", \"heap_continuations\": %" PRIu64 "},\n",
          s->binds, s->stack_continuations, s->heap_continuations);
  int fn_count;
  FunctionRow *fns = function_rows(profile, &fn_count);
  fprintf(out, "  \"functions\": [");
  for (int i = 0; i < fn_count; i++) {
    fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
    json_string(out, proto_name(fns[i].proto));
    fprintf(out, ", \"file\": ");
    json_string(out, fns[i].proto->file);
    fprintf(out, ", \"line\": %d, \"calls\": %" PRIu64 ", \"self\": %" PRIu64 ", \"inclusive\": %" PRIu64 "}",
            fns[i].proto->line, fns[i].calls, fns[i].self, fns[i].inclusive);
  }
  free(fns);
  fprintf(out, "\n  ],\n  \"threads\": [");
  uint64_t *instructions = thread_instructions(profile);
  for (int i = 0; i < profile->thread_count; i++) {
    const ProfThread *t = &profile->threads[i];
    fprintf(out, "%s\n    {\"id\": ", i ? "," : "");
    json_string(out, t->id);
    fprintf(out, ", \"label\": ");
    if (t->label) json_string(out, t->label);
    else fprintf(out, "null");
    fprintf(out, ", \"instructions\": %" PRIu64 ", \"started_ns\": %" PRId64 ", \"lifetime_ns\": %" PRId64
                 ", \"blocked_ns\": %" PRId64 ", \"blocks\": %" PRIu64 "}",
            instructions[i], t->started, lifetime(vm, t), t->blocked_ns, t->blocks);
  }
  free(instructions);
  fprintf(out, "\n  ],\n");
  fprintf(out, "  \"scheduler\": {\"switches\": %" PRIu64 ", \"forks\": %" PRIu64 ", \"timers_set\": %" PRIu64
               ", \"timers_fired\": %" PRIu64 ", \"timers_cancelled\": %" PRIu64 ", \"run_queue_peak\": %d},\n",
          s->switches, s->forks, s->timers_set, s->timers_fired, s->timers_cancelled, s->run_queue_peak);
  fprintf(out, "  \"memory\": {\"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"gc_cycles\": %" PRIu64
               ", \"gc_seconds\": %.6f, \"peak_heap\": %" PRIu64 "}\n}\n",
          s->allocations, s->bytes_allocated, s->gc_cycles, s->gc_seconds, vm_peak_heap(vm));
  return !ferror(out);
}

/* ---- folded stacks ---- */

static void append_path(Buffer *out, const Profile *profile, int node) {
  const ProfNode *n = &profile->nodes[node];
  if (n->parent >= 0) {
    append_path(out, profile, n->parent);
    buf_append(out, ";", 1);
    append_name(out, proto_name(n->proto), true);
    return;
  }
  const ProfThread *t = &profile->threads[n->thread];
  buf_printf(out, "%s", t->id);
  if (t->label) {
    buf_append(out, " (", 2);
    append_name(out, t->label, true);
    buf_append(out, ")", 1);
  }
}

bool profile_write_folded(VM *vm, FILE *out) {
  const Profile *profile = vm->profile;
  Buffer line;
  buf_init(&line);
  for (int i = 0; i < profile->node_count; i++) {
    if (!profile->nodes[i].self) continue;
    line.length = 0;
    append_path(&line, profile, i);
    fprintf(out, "%s %" PRIu64 "\n", buf_text(&line), profile->nodes[i].self);
  }
  buf_free(&line);
  return !ferror(out);
}
