/* show(): values as text (see show.h). */
#include "show.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "state.h"

void duration_show(Buffer *buf, int64_t ns) {
  static const struct { const char *unit; int64_t size; } units[] = {
      {"s", 1000000000}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (ns != 0 && ns % units[i].size == 0) {
      buf_printf(buf, "%" PRId64 "%s", ns / units[i].size, units[i].unit);
      return;
    }
  }
  buf_printf(buf, "%" PRId64 "ns", ns);
}

static void show_float(Buffer *buf, double f) {
  if (isnan(f)) {
    buf_append(buf, "nan", 3);
    return;
  }
  if (isinf(f)) {
    buf_printf(buf, "%sinf", f < 0 ? "-" : "");
    return;
  }
  char text[64];
  /* the shortest of %.15g .. %.17g that reads back exactly */
  for (int precision = 15; precision <= 17; precision++) {
    snprintf(text, sizeof text, "%.*g", precision, f);
    if (strtod(text, NULL) == f) break;
  }
  buf_append(buf, text, strlen(text));
  if (!strpbrk(text, ".eE")) buf_append(buf, ".0", 2);
}


/* Show a value that contains no other values. */
static void show_leaf(Buffer *buf, Value value, bool quote) {
  switch (value.type) {
    case VAL_UNIT: buf_append(buf, "()", 2); return;
    case VAL_BOOL: buf_printf(buf, "%s", AS_BOOL(value) ? "true" : "false"); return;
    case VAL_INT: buf_printf(buf, "%" PRId64, AS_INT(value)); return;
    case VAL_FLOAT: show_float(buf, AS_FLOAT(value)); return;
    case VAL_DURATION: duration_show(buf, AS_DURATION(value)); return;
    case VAL_NIL: buf_append(buf, "[]", 2); return;
    case VAL_NONE: buf_append(buf, "none", 4); return;
    case VAL_UNDEFINED: buf_append(buf, "<undefined>", 11); return;
    case VAL_OBJ: break;
  }
  switch (OBJ_TYPE(value)) {
    case OBJ_STRING:
      if (quote) buf_append_quoted(buf, AS_CSTRING(value), (size_t)AS_STRING(value)->length);
      else buf_append(buf, AS_CSTRING(value), (size_t)AS_STRING(value)->length);
      return;
    case OBJ_PROTO: buf_append(buf, "<prototype>", 11); return;
    case OBJ_CLOSURE:
      if (AS_CLOSURE(value)->proto->kind == PROTO_BLOCK) buf_printf(buf, "<action %s>", obj_callable_name(value));
      else buf_printf(buf, "<fn %s>", obj_callable_name(value));
      return;
    case OBJ_BUILTIN: buf_printf(buf, "<fn %s>", AS_BUILTIN(value)->builtin->name); return;
    case OBJ_ACTION: {
      if (IS_SUSPENDED_CALL(value)) {
        buf_printf(buf, "<action %s(...)>", obj_callable_name(AS_ACTION(value)->args[0]));
        return;
      }
      buf_printf(buf, "<action %s>", builtin_table[AS_ACTION(value)->builtin].name);
      return;
    }
    case OBJ_THREAD:
      thread_id(buf, AS_THREAD(value));
      return;
    case OBJ_TIMEOUT: buf_append(buf, "Timeout", 7); return;
    case OBJ_MVAR:
      if (AS_MVAR(value)->label) buf_printf(buf, "<mvar %.*s>", AS_MVAR(value)->label->length, AS_MVAR(value)->label->chars);
      else buf_append(buf, "<mvar>", 6);
      return;
    case OBJ_TVAR:
      if (AS_TVAR(value)->label) {
        buf_printf(buf, "<tvar %.*s>", AS_TVAR(value)->label->length, AS_TVAR(value)->label->chars);
      } else if (AS_TVAR(value)->async_thread) {
        buf_append(buf, "<tvar async ", 12);
        thread_id(buf, AS_TVAR(value)->async_thread);
        buf_append(buf, ">", 1);
      } else {
        buf_append(buf, "<tvar>", 6);
      }
      return;
    case OBJ_EXCEPTION: {
      ObjException *exc = AS_EXCEPTION(value);
      if (exc->kind == EXC_KILLED) buf_append(buf, "ThreadKilled", 12);
      else if (exc->kind == EXC_ASSERT) buf_printf(buf, "AssertionFailed(%.*s)", exc->message->length, exc->message->chars);
      else buf_printf(buf, "ErrorCall(%.*s)", exc->message ? exc->message->length : 0, exc->message ? exc->message->chars : "");
      return;
    }
    default:
      return;
  }
}

/* Whether show opens the value: a list, record, some or map node. */
static bool is_container(Value v) { return IS_CONS(v) || IS_RECORD(v) || IS_SOME(v) || IS_MAP(v); }

/* A map node shows as the record of stdlib/map.sim's earlier tree of
 * records: these fields, in this order (an empty subtree is none). */
static const char *const map_field_names[6] = {"key", "value", "left", "right", "height", "size"};
static Value map_field(const ObjMap *node, int i) {
  switch (i) {
    case 0: return node->key;
    case 1: return node->value;
    case 2: return node->left ? OBJ_VAL(node->left) : NONE_VAL;
    case 3: return node->right ? OBJ_VAL(node->right) : NONE_VAL;
    case 4: return INT_VAL(node->height);
    default: return INT_VAL(node->size);
  }
}

/* A container being shown: the value and how far it has got. */
typedef struct {
  Value value;
  Value rest;   /* lists: the cells still to show   */
  int next;     /* records and maps: the next field; some: 1 once its value is shown */
} ShowFrame;

void value_show(Buffer *buf, Value value, bool quote) { value_show_bounded(buf, value, quote, SIZE_MAX); }

void value_show_line(Buffer *out, Value value, bool quote, size_t limit) {
  Buffer text;
  buf_init(&text);
  bool complete = value_show_bounded(&text, value, quote, limit);
  size_t length = text.length < limit ? text.length : limit;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text.data[i];
    if (c == '\n') buf_append(out, "\\n", 2);
    else if (c < 0x20 || c == 0x7f) buf_printf(out, "\\x%02x", c);
    else buf_append(out, (const char *)&c, 1);
  }
  if (!complete || text.length > limit) buf_append(out, "...", 3);
  if (!out->data) buf_append(out, "", 0);
  buf_free(&text);
}

/* Iterative, with an explicit stack, so deeply nested values cannot
 * overflow the C stack; it stops once the text passes `limit` bytes. */
static bool show_bounded(VM *vm, Buffer *buf, Value value, bool quote, size_t limit);

bool value_show_bounded(Buffer *buf, Value value, bool quote, size_t limit) {
  return show_bounded(NULL, buf, value, quote, limit);
}

/* Every VM_WORK_CHUNK bytes of text: the run must stop now (a signal,
 * --max-work passed counting the bytes shown so far, which the caller
 * charges once done), or the text's buffer and the heap together pass
 * --max-heap (the text lives outside the heap, but a value sharing its parts
 * can take far more memory shown than in memory, 2^30 times). */
static bool show_halts(VM *vm, const Buffer *buf, size_t shown) {
  if (!vm->heap_exceeded && vm->bytes_allocated + buf->capacity > vm_max_heap(vm)) {
    vm->heap_exceeded = true;
    vm->halted_bytes = buf->capacity;
    vm_update_stop(vm);
  }
  return vm_must_halt(vm, shown);
}

bool value_show_vm(VM *vm, Buffer *buf, Value value, bool quote) {
  return show_bounded(vm, buf, value, quote, SIZE_MAX);
}

static bool show_bounded(VM *vm, Buffer *buf, Value value, bool quote, size_t limit) {
  size_t start = buf->length, checked = start;
  if (!is_container(value)) {
    show_leaf(buf, value, quote);
    return buf->length - start <= limit;
  }
  ShowFrame *stack = NULL;
  int count = 0, capacity = 0;
  Value pending = value; /* a value to open, or UNIT when none */
  bool has_pending = true;
  bool complete = true;
  for (;;) {
    if (buf->length - start > limit) {
      complete = false;
      break;
    }
    if (vm && buf->length - checked >= VM_WORK_CHUNK) {
      checked = buf->length;
      if (show_halts(vm, buf, buf->length - start)) {
        complete = false;
        break;
      }
    }
    if (has_pending) {
      has_pending = false;
      if (!is_container(pending)) {
        show_leaf(buf, pending, true);
      } else {
        if (count == capacity) {
          capacity = capacity ? capacity * 2 : 16;
          stack = xrealloc(stack, (size_t)capacity * sizeof(ShowFrame));
        }
        stack[count++] = (ShowFrame){pending, pending, 0};
        buf_append(buf, IS_CONS(pending) ? "[" : IS_SOME(pending) ? "some(" : "#{", IS_CONS(pending) ? 1 : IS_SOME(pending) ? 5 : 2);
      }
    }
    if (count == 0) break;
    ShowFrame *top = &stack[count - 1];
    if (IS_CONS(top->value)) {
      if (IS_CONS(top->rest)) {
        if (top->rest.as.obj != top->value.as.obj) buf_append(buf, ", ", 2);
        pending = AS_CONS(top->rest)->head;
        top->rest = cons_tail(AS_CONS(top->rest));
        has_pending = true;
      } else {
        buf_append(buf, "]", 1);
        count--;
      }
    } else if (IS_RECORD(top->value)) {
      ObjRecord *record = AS_RECORD(top->value);
      if (top->next < record->count) {
        if (top->next) buf_append(buf, ", ", 2);
        buf_printf(buf, "%s: ", record->fields[top->next].name->chars);
        pending = record->fields[top->next++].value;
        has_pending = true;
      } else {
        buf_append(buf, "}", 1);
        count--;
      }
    } else if (IS_MAP(top->value)) {
      const ObjMap *node = AS_MAP(top->value);
      if (top->next < 6) {
        if (top->next) buf_append(buf, ", ", 2);
        buf_printf(buf, "%s: ", map_field_names[top->next]);
        pending = map_field(node, top->next++);
        has_pending = true;
      } else {
        buf_append(buf, "}", 1);
        count--;
      }
    } else {
      if (!top->next) {
        top->next = 1;
        pending = AS_SOME(top->value)->value;
        has_pending = true;
      } else {
        buf_append(buf, ")", 1);
        count--;
      }
    }
  }
  free(stack);
  return complete;
}

static bool json_value(Buffer *buf, Value value, Value *bad, int depth) {
  if (depth > JSON_MAX_DEPTH) {
    *bad = value;
    return false;
  }
  switch (value.type) {
    case VAL_UNIT:
    case VAL_NONE: buf_append(buf, "null", 4); return true;
    case VAL_BOOL: buf_printf(buf, "%s", AS_BOOL(value) ? "true" : "false"); return true;
    case VAL_INT: buf_printf(buf, "%" PRId64, AS_INT(value)); return true;
    case VAL_FLOAT:
      if (isfinite(AS_FLOAT(value))) show_float(buf, AS_FLOAT(value));
      else buf_append(buf, "null", 4);
      return true;
    case VAL_DURATION: buf_printf(buf, "%" PRId64, AS_DURATION(value)); return true;
    case VAL_NIL: buf_append(buf, "[]", 2); return true;
    default: break;
  }
  if (IS_STRING(value)) {
    buf_append_json(buf, AS_CSTRING(value));
    return true;
  }
  if (IS_SOME(value)) return json_value(buf, AS_SOME(value)->value, bad, depth + 1);
  if (IS_CONS(value)) {
    buf_append(buf, "[", 1);
    for (Value cell = value; IS_CONS(cell); cell = cons_tail(AS_CONS(cell))) {
      if (cell.as.obj != value.as.obj) buf_append(buf, ", ", 2);
      if (!json_value(buf, AS_CONS(cell)->head, bad, depth + 1)) return false;
    }
    buf_append(buf, "]", 1);
    return true;
  }
  if (IS_RECORD(value)) {
    ObjRecord *record = AS_RECORD(value);
    buf_append(buf, "{", 1);
    for (int i = 0; i < record->count; i++) {
      if (i) buf_append(buf, ", ", 2);
      buf_append_json(buf, record->fields[i].name->chars);
      buf_append(buf, ": ", 2);
      if (!json_value(buf, record->fields[i].value, bad, depth + 1)) return false;
    }
    buf_append(buf, "}", 1);
    return true;
  }
  if (IS_MAP(value)) {
    buf_append(buf, "{", 1);
    for (int i = 0; i < 6; i++) {
      if (i) buf_append(buf, ", ", 2);
      buf_append_json(buf, map_field_names[i]);
      buf_append(buf, ": ", 2);
      if (!json_value(buf, map_field(AS_MAP(value), i), bad, depth + 1)) return false;
    }
    buf_append(buf, "}", 1);
    return true;
  }
  *bad = value;
  return false;
}

bool value_json(Buffer *buf, Value value, Value *bad) { return json_value(buf, value, bad, 0); }
