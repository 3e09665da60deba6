/* Quiet runs, their records, and the program's identity (explore_run.h). */
#include "explore_run.h"

#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "../vm/value/random.h"
#include "../vm/value/show.h"

/* Diagnostics of the runs explored are kept, not printed: the last run's. */
static Buffer captured;

Buffer *explore_captured(void) { return &captured; }

static void write_captured(void *user, const char *text, size_t length) {
  (void)user;
  buf_append(&captured, text, length);
}

void explore_quiet(Context *cx) {
  VMConfig *config = &cx->vm->config;
  config->write_say = NULL;
  config->trace = false;
  config->write_trace = NULL;
  config->write_error = write_captured;
}

const char *const explore_kinds[] = {"pass", "assertion", "error", "uncaught", "deadlock", "limit", "strict-shutdown",
                                     NULL};

int explore_kind_index(const char *kind) {
  for (int i = 0; explore_kinds[i]; i++)
    if (strcmp(explore_kinds[i], kind) == 0) return i;
  return 0;
}

static char *text_of(Buffer *b) {
  buf_append(b, "", 0);
  if (!b->data) { /* an empty buffer owns nothing yet */
    char *empty = xrealloc(NULL, 1);
    *empty = '\0';
    return empty;
  }
  return b->data;
}

Record explore_record(Context *cx, uint64_t id, SimStatus status) {
  Record r = {id, false, NULL, NULL, NULL, explore_steps(cx->ex), explore_deviation_count(cx->ex),
              explore_preemptions(cx->ex), explore_run_hash(cx->ex)};
  Buffer text, where;
  buf_init(&text);
  buf_init(&where);
  r.failure = explore_describe(cx->vm, status, cx->options->fail_on_limit, &r.kind, &text, &where);
  r.description = text_of(&text);
  r.where = text_of(&where);
  captured.length = 0;
  return r;
}

void record_free(Record *r) {
  free(r->description);
  free(r->where);
  r->description = r->where = NULL;
}

bool record_in_class(const Record *r, const char *kind, const char *where) {
  return r->failure && strcmp(r->kind, kind) == 0 && strcmp(r->where, where) == 0;
}

/* ---- the program's identity ---- */

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

const char *explore_program_name(VM *vm) {
  return vm->module_inits.count ? base_name(vm->loader->module_keys[vm->module_inits.count - 1]) : "?";
}

bool explore_is_definition(VM *vm, int i) {
  const GlobalInfo *info = &vm->global_info[i];
  return !info->builtin && info->file && !vm_is_library_file(info->file);
}

static uint64_t fnv(uint64_t h, const void *bytes, size_t n) {
  const unsigned char *p = bytes;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

typedef struct {
  uint64_t *items;
  int count, capacity;
} Hashes;

static void hashes_add(Hashes *h, uint64_t x) {
  if (h->count == h->capacity) {
    h->capacity = h->capacity ? 2 * h->capacity : 32;
    h->items = xrealloc(h->items, (size_t)h->capacity * sizeof *h->items);
  }
  h->items[h->count++] = x;
}

/* The scalar constants of a prototype and the ones nested in it, each
 * hashed with its type: what the code computes with, the same under every
 * bind strategy (whose code differs). */
static void proto_constants(const ObjProto *proto, Hashes *out, int depth) {
  if (depth > 200) return; /* nesting that deep: enough is hashed */
  for (int i = 0; i < proto->chunk.constants.count; i++) {
    Value v = proto->chunk.constants.values[i];
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)v.type;
    if (IS_INT(v) || IS_DURATION(v)) h = fnv(h, &v.as.integer, sizeof v.as.integer);
    else if (IS_FLOAT(v)) h = fnv(h, &v.as.number, sizeof v.as.number);
    else if (IS_STRING(v)) h = fnv(h, AS_CSTRING(v), (size_t)AS_STRING(v)->length);
    else if (IS_PROTO(v)) {
      proto_constants(AS_PROTO(v), out, depth + 1);
      continue;
    } else continue;
    hashes_add(out, h);
  }
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

uint64_t explore_definition_hash(VM *vm, int global) {
  const GlobalInfo *info = &vm->global_info[global];
  uint64_t h = fnv(0xcbf29ce484222325ull, info->name->chars, (size_t)info->name->length + 1);
  int32_t numbers[2] = {info->arity, info->line};
  h = fnv(h, numbers, sizeof numbers);
  h = fnv(h, base_name(info->file), strlen(base_name(info->file)) + 1);
  Value v = vm->globals.values[global];
  if (IS_CLOSURE(v)) {
    /* its constants as a set: their order and repeats follow the code */
    Hashes constants = {NULL, 0, 0};
    proto_constants(AS_CLOSURE(v)->proto, &constants, 0);
    if (constants.count) qsort(constants.items, (size_t)constants.count, sizeof *constants.items, compare_u64);
    for (int i = 0; i < constants.count; i++)
      if (i == 0 || constants.items[i] != constants.items[i - 1]) h = fnv(h, &constants.items[i], sizeof(uint64_t));
    free(constants.items);
  } else if (!IS_UNDEFINED(v)) {
    Buffer shown;
    buf_init(&shown);
    value_show_line(&shown, v, true, 4096);
    h = fnv(h, buf_text(&shown), shown.length);
    buf_free(&shown);
  }
  return splitmix64_mix(h);
}

uint64_t explore_program_hash(VM *vm) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < vm->globals.count; i++) {
    if (!explore_is_definition(vm, i)) continue;
    uint64_t d = explore_definition_hash(vm, i);
    h = fnv(h, &d, sizeof d);
  }
  return h;
}

void explore_json_string(Buffer *out, const char *text) {
  buf_append(out, "\"", 1);
  for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
    if (*s == '"' || *s == '\\') buf_printf(out, "\\%c", *s);
    else if (*s == '\n') buf_append(out, "\\n", 2);
    else if (*s < 0x20) buf_printf(out, "\\u%04x", *s);
    else buf_append(out, (const char *)s, 1);
  }
  buf_append(out, "\"", 1);
}
