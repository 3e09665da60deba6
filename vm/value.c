/* Values: equality, type names and show(). */
#include "value.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "opcodes.h"
#include "state.h"

void value_array_init(ValueArray *array) {
  array->count = 0;
  array->capacity = 0;
  array->values = NULL;
}

void value_array_push(ValueArray *array, Value value) {
  if (array->count == array->capacity) {
    array->capacity = array->capacity ? array->capacity * 2 : 8;
    array->values = xrealloc(array->values, (size_t)array->capacity * sizeof(Value));
  }
  array->values[array->count++] = value;
}

void value_array_free(ValueArray *array) {
  free(array->values);
  value_array_init(array);
}

/* int64 vs double, exactly (no rounding of the int through double). */
static int compare_int_float(int64_t a, double b) {
  if (isnan(b)) return 2;
  if (b >= 9223372036854775808.0) return -1;
  if (b < -9223372036854775808.0) return 1;
  int64_t whole = (int64_t)b; /* truncates toward zero; exact in this range */
  if (a != whole) return a < whole ? -1 : 1;
  double fraction = b - (double)whole;
  return fraction > 0 ? -1 : fraction < 0 ? 1 : 0;
}

bool value_compare(Value a, Value b, int *order) {
  if ((IS_INT(a) && IS_INT(b)) || (IS_DURATION(a) && IS_DURATION(b))) {
    *order = (AS_INT(a) > AS_INT(b)) - (AS_INT(a) < AS_INT(b));
  } else if (IS_FLOAT(a) && IS_FLOAT(b)) {
    double x = AS_FLOAT(a), y = AS_FLOAT(b);
    *order = (isnan(x) || isnan(y)) ? 2 : (x > y) - (x < y);
  } else if (IS_INT(a) && IS_FLOAT(b)) {
    *order = compare_int_float(AS_INT(a), AS_FLOAT(b));
  } else if (IS_FLOAT(a) && IS_INT(b)) {
    int o = compare_int_float(AS_INT(b), AS_FLOAT(a));
    *order = o == 2 ? 2 : -o;
  } else if (IS_STRING(a) && IS_STRING(b)) {
    ObjString *x = (ObjString *)AS_OBJ(a), *y = (ObjString *)AS_OBJ(b);
    int n = x->length < y->length ? x->length : y->length;
    int c = memcmp(x->chars, y->chars, (size_t)n);
    *order = c ? (c > 0) - (c < 0) : (x->length > y->length) - (x->length < y->length);
  } else {
    return false;
  }
  return true;
}

static bool record_field(const ObjRecord *record, const ObjString *name, Value *value) {
  for (int i = 0; i < record->count; i++) {
    if (record->fields[i].name == name) {
      *value = record->fields[i].value;
      return true;
    }
  }
  return false;
}

/* Equality of two values without looking inside objects; *deeper is set when
 * both are containers of the same kind whose parts must be compared too. */
static bool equal_shallow(Value a, Value b, bool *deeper) {
  *deeper = false;
  if ((IS_INT(a) || IS_FLOAT(a)) && (IS_INT(b) || IS_FLOAT(b))) {
    int order;
    return value_compare(a, b, &order) && order == 0;
  }
  if (a.type != b.type) return false;
  switch (a.type) {
    case VAL_UNIT:
    case VAL_NIL:
    case VAL_NONE:
    case VAL_UNDEFINED: return true;
    case VAL_BOOL: return AS_BOOL(a) == AS_BOOL(b);
    case VAL_INT:
    case VAL_DURATION: return AS_INT(a) == AS_INT(b);
    case VAL_FLOAT: return AS_FLOAT(a) == AS_FLOAT(b);
    case VAL_OBJ: break;
  }
  if (AS_OBJ(a) == AS_OBJ(b)) return true;
  if (OBJ_TYPE(a) != OBJ_TYPE(b)) return false;
  switch (OBJ_TYPE(a)) {
    case OBJ_CONS:
    case OBJ_SOME:
      *deeper = true;
      return true;
    case OBJ_RECORD:
      *deeper = true;
      return AS_RECORD(a)->count == AS_RECORD(b)->count;
    case OBJ_STRING: {
      /* two interned strings are equal only if they are one object */
      const ObjString *x = AS_STRING(a), *y = AS_STRING(b);
      return !(x->interned && y->interned) && x->length == y->length && memcmp(x->chars, y->chars, (size_t)x->length) == 0;
    }
    default:
      return false; /* others compare by identity */
  }
}

bool value_equal(Value a, Value b) {
  uint64_t visited;
  return value_equal_counted(a, b, &visited);
}

/* Iterative, with an explicit stack of pairs, so deeply nested values
 * cannot overflow the C stack. */
bool value_equal_counted(Value a, Value b, uint64_t *visited) {
  uint64_t work = 0;
  Value small[64];
  Value *stack = small;
  int count = 0, capacity = 64;
  bool equal = true;
  stack[count++] = a;
  stack[count++] = b;
  while (equal && count > 0) {
    Value y = stack[--count], x = stack[--count];
    bool deeper;
    work += IS_STRING(x) && IS_STRING(y) ? 1 + (uint64_t)AS_STRING(x)->length : 1;
    if (!equal_shallow(x, y, &deeper)) equal = false;
    if (!equal || !deeper) continue;
    int needed = IS_RECORD(x) ? 2 * AS_RECORD(x)->count : 4;
    if (count + needed > capacity) {
      while (count + needed > capacity) capacity *= 2;
      if (stack == small) {
        stack = xrealloc(NULL, (size_t)capacity * sizeof(Value));
        memcpy(stack, small, sizeof small);
      } else {
        stack = xrealloc(stack, (size_t)capacity * sizeof(Value));
      }
    }
    if (IS_CONS(x)) {
      stack[count++] = AS_CONS(x)->tail;
      stack[count++] = AS_CONS(y)->tail;
      stack[count++] = AS_CONS(x)->head;
      stack[count++] = AS_CONS(y)->head;
    } else if (IS_SOME(x)) {
      stack[count++] = AS_SOME(x)->value;
      stack[count++] = AS_SOME(y)->value;
    } else {
      ObjRecord *rx = AS_RECORD(x), *ry = AS_RECORD(y);
      for (int i = 0; i < rx->count && equal; i++) {
        Value other = UNIT_VAL;
        if (!record_field(ry, rx->fields[i].name, &other)) {
          equal = false;
          break;
        }
        stack[count++] = rx->fields[i].value;
        stack[count++] = other;
      }
    }
  }
  if (stack != small) free(stack);
  *visited = work;
  return equal;
}

const char *value_type_name(Value v) {
  switch (v.type) {
    case VAL_UNIT: return "unit";
    case VAL_BOOL: return "bool";
    case VAL_INT: return "int";
    case VAL_FLOAT: return "float";
    case VAL_DURATION: return "duration";
    case VAL_NIL: return "list";
    case VAL_NONE: return "none";
    case VAL_UNDEFINED: return "undefined";
    case VAL_OBJ: break;
  }
  switch (OBJ_TYPE(v)) {
    case OBJ_STRING: return "string";
    case OBJ_CONS: return "list";
    case OBJ_RECORD: return "record";
    case OBJ_SOME: return "some";
    case OBJ_PROTO: return "prototype";
    case OBJ_CLOSURE: return AS_CLOSURE(v)->proto->kind == PROTO_BLOCK ? "action" : "function";
    case OBJ_BUILTIN: return "function";
    case OBJ_FREE: return "freed object";
    case OBJ_ACTION: return "action";
    case OBJ_THREAD: return "thread";
    case OBJ_TIMEOUT: return "exception";
    case OBJ_EXCEPTION: return "exception";
    case OBJ_MVAR: return "mvar";
    case OBJ_TVAR: return "tvar";
    case OBJ_CONTINUATION: return "continuation";
  }
  return "?";
}

/* ---- show ---- */

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
      if (AS_MVAR(value)->label) buf_printf(buf, "<mvar %s>", AS_MVAR(value)->label->chars);
      else buf_append(buf, "<mvar>", 6);
      return;
    case OBJ_TVAR:
      if (AS_TVAR(value)->label) buf_printf(buf, "<tvar %s>", AS_TVAR(value)->label->chars);
      else buf_append(buf, "<tvar>", 6);
      return;
    case OBJ_EXCEPTION: {
      ObjException *exc = AS_EXCEPTION(value);
      if (exc->kind == EXC_KILLED) buf_append(buf, "ThreadKilled", 12);
      else if (exc->kind == EXC_ASSERT) buf_printf(buf, "AssertionFailed(%s)", exc->message->chars);
      else buf_printf(buf, "ErrorCall(%s)", exc->message ? exc->message->chars : "");
      return;
    }
    default:
      return;
  }
}

/* A container being shown: the value and how far it has got. */
typedef struct {
  Value value;
  Value rest;   /* lists: the cells still to show   */
  int next;     /* records: the next field; some: 1 once its value is shown */
} ShowFrame;

void value_show(Buffer *buf, Value value, bool quote) { value_show_bounded(buf, value, quote, SIZE_MAX); }

/* Iterative, with an explicit stack, so deeply nested values cannot
 * overflow the C stack; it stops once the text passes `limit` bytes. */
bool value_show_bounded(Buffer *buf, Value value, bool quote, size_t limit) {
  size_t start = buf->length;
  if (!IS_CONS(value) && !IS_RECORD(value) && !IS_SOME(value)) {
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
    if (has_pending) {
      has_pending = false;
      if (!IS_CONS(pending) && !IS_RECORD(pending) && !IS_SOME(pending)) {
        show_leaf(buf, pending, true);
      } else {
        if (count == capacity) {
          capacity = capacity ? capacity * 2 : 16;
          stack = xrealloc(stack, (size_t)capacity * sizeof(ShowFrame));
        }
        stack[count++] = (ShowFrame){pending, pending, 0};
        buf_append(buf, IS_CONS(pending) ? "[" : IS_RECORD(pending) ? "#{" : "some(", IS_RECORD(pending) ? 2 : IS_CONS(pending) ? 1 : 5);
      }
    }
    if (count == 0) break;
    ShowFrame *top = &stack[count - 1];
    if (IS_CONS(top->value)) {
      if (IS_CONS(top->rest)) {
        if (top->rest.as.obj != top->value.as.obj) buf_append(buf, ", ", 2);
        pending = AS_CONS(top->rest)->head;
        top->rest = AS_CONS(top->rest)->tail;
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
