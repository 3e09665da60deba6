/* Value operations: the slow paths of the dispatch loop's arithmetic,
 * comparison, concatenation and field access (the loop inlines the int
 * cases). Each computes into *out, or sets the runtime error and returns
 * false. */
#include "ops.h"
#include "show.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "show.h"

#define NUMERIC(v) (IS_INT(v) || IS_FLOAT(v))
#define TO_DOUBLE(v) (IS_INT(v) ? (double)AS_INT(v) : AS_FLOAT(v))

static bool type_error(VM *vm, const char *verb, Value a, Value b) {
  rt_error(vm, "cannot %s %s and %s", verb, value_type_name(a), value_type_name(b));
  return false;
}

bool ops_arith(VM *vm, OpCode op, Value a, Value b, Value *out) {
  int64_t r;
  if (IS_INT(a) && IS_INT(b)) {
    int64_t x = AS_INT(a), y = AS_INT(b);
    switch (op) {
      case OP_ADD: if (__builtin_add_overflow(x, y, &r)) goto overflow; break;
      case OP_SUB: if (__builtin_sub_overflow(x, y, &r)) goto overflow; break;
      case OP_MUL: if (__builtin_mul_overflow(x, y, &r)) goto overflow; break;
      case OP_DIV:
      case OP_MOD:
        if (y == 0) { rt_error(vm, "division by zero"); return false; }
        if (y == -1) {
          if (op == OP_MOD) { r = 0; break; } /* INT64_MIN % -1 would trap in C */
          if (x == INT64_MIN) goto overflow;
        }
        r = op == OP_DIV ? x / y : x % y;
        break;
      default: return false;
    }
    *out = INT_VAL(r);
    return true;
  }
  if (NUMERIC(a) && NUMERIC(b)) {
    double x = TO_DOUBLE(a), y = TO_DOUBLE(b);
    switch (op) {
      case OP_ADD: *out = FLOAT_VAL(x + y); break;
      case OP_SUB: *out = FLOAT_VAL(x - y); break;
      case OP_MUL: *out = FLOAT_VAL(x * y); break;
      case OP_DIV: *out = FLOAT_VAL(x / y); break;
      case OP_MOD: *out = FLOAT_VAL(fmod(x, y)); break;
      default: return false;
    }
    return true;
  }
  /* durations: d+d, d-d, n*d, d*n, d/n, d/d (an int), d%d */
  if (IS_DURATION(a) && IS_DURATION(b)) {
    int64_t x = AS_DURATION(a), y = AS_DURATION(b);
    switch (op) {
      case OP_ADD: if (__builtin_add_overflow(x, y, &r)) goto overflow; *out = DURATION_VAL(r); return true;
      case OP_SUB: if (__builtin_sub_overflow(x, y, &r)) goto overflow; *out = DURATION_VAL(r); return true;
      case OP_DIV:
      case OP_MOD:
        if (y == 0) { rt_error(vm, "division by a zero duration"); return false; }
        if (y == -1 && op == OP_MOD) { *out = DURATION_VAL(0); return true; } /* as for ints; C would trap */
        if (x == INT64_MIN && y == -1) goto overflow;
        *out = op == OP_DIV ? INT_VAL(x / y) : DURATION_VAL(x % y);
        return true;
      default: break;
    }
  } else if (op == OP_MUL && ((IS_INT(a) && IS_DURATION(b)) || (IS_DURATION(a) && IS_INT(b)))) {
    if (__builtin_mul_overflow(AS_INT(a), AS_INT(b), &r)) goto overflow;
    *out = DURATION_VAL(r);
    return true;
  } else if (op == OP_DIV && IS_DURATION(a) && IS_INT(b)) {
    if (AS_INT(b) == 0) { rt_error(vm, "division by zero"); return false; }
    if (AS_INT(a) == INT64_MIN && AS_INT(b) == -1) goto overflow;
    *out = DURATION_VAL(AS_INT(a) / AS_INT(b));
    return true;
  }
  {
    static const char *verbs[] = {[OP_ADD] = "add", [OP_SUB] = "subtract", [OP_MUL] = "multiply",
                                  [OP_DIV] = "divide", [OP_MOD] = "take the remainder of"};
    if (op == OP_ADD && (IS_STRING(a) || IS_STRING(b))) {
      rt_error(vm, "cannot add %s and %s (join strings with ++, convert with show)", value_type_name(a),
               value_type_name(b));
      return false;
    }
    return type_error(vm, verbs[op], a, b);
  }
overflow:
  rt_error(vm, "%s overflow in %s", IS_DURATION(a) || IS_DURATION(b) ? "duration" : "integer",
           op == OP_ADD ? "addition" : op == OP_SUB ? "subtraction" : op == OP_MUL ? "multiplication" : "division");
  return false;
}

bool ops_compare(VM *vm, Value a, Value b, int *order) {
  if (IS_STRING(a) && IS_STRING(b)) vm_work(vm, (uint64_t)AS_STRING(a)->length);
  return value_compare(a, b, order) || type_error(vm, "compare", a, b);
}

bool ops_concat(VM *vm, Value a, Value b, Value *out) {
  if (IS_STRING(a) && IS_STRING(b)) {
    ObjString *x = AS_STRING(a), *y = AS_STRING(b);
    size_t length = (size_t)x->length + (size_t)y->length;
    if (length > INT32_MAX) {
      rt_error(vm, "string too long");
      return false;
    }
    /* not hashed (strings made at run time are not interned); a and b stay
     * rooted on the stack while it is allocated. Written after a, in a's
     * storage, when there is room (vm/object.h): a loop of appends is then
     * linear */
    ObjString *s = obj_string_append(vm, x, y->chars, y->length);
    if (s) {
      vm_work(vm, (uint64_t)y->length);
      *out = OBJ_VAL(s);
      return true;
    }
    /* a copy, with room to grow when long enough for it to matter */
    size_t room = length >= 64 && length <= INT32_MAX / 2 ? 2 * length : length;
    s = obj_string_with_room(vm, (int)length, (int)room);
    memcpy(s->chars, x->chars, (size_t)x->length);
    memcpy(s->chars + x->length, y->chars, (size_t)y->length);
    vm_work(vm, length);
    *out = OBJ_VAL(s);
    return true;
  }
  if (IS_LIST(a) && IS_LIST(b)) {
    if (IS_NIL(a)) {
      *out = b;
      return true;
    }
    /* copy a's cells, in order, onto b: build the copy front to back */
    ObjCons *first = obj_cons(vm, AS_CONS(a)->head, b);
    gc_push_root(vm, OBJ_VAL(first));
    ObjCons *last = first;
    uint64_t cells = 1;
    for (ObjCons *c = AS_CONS(a)->tail; c; c = c->tail, cells++) {
      ObjCons *cell = obj_cons(vm, c->head, b);
      last->tail = cell;
      last = cell;
    }
    gc_pop_root(vm);
    vm_work(vm, cells);
    *out = OBJ_VAL(first);
    return true;
  }
  if (IS_STRING(a) || IS_STRING(b)) {
    rt_error(vm, "cannot concatenate %s and %s (convert with show)", value_type_name(a), value_type_name(b));
    return false;
  }
  return type_error(vm, "concatenate", a, b);
}

bool ops_field(VM *vm, Value object, ObjString *name, Value *out) {
  if (!IS_RECORD(object)) {
    rt_error(vm, "cannot read field '%s' of %s", name->chars, value_type_name(object));
    return false;
  }
  ObjRecord *record = AS_RECORD(object);
  int i = record_field_index(record, name);
  if (i >= 0) {
    vm_work(vm, (uint64_t)i);
    *out = record->fields[i].value;
    return true;
  }
  vm_work(vm, (uint64_t)record->count);
  rt_error(vm, "record has no field '%s'", name->chars);
  return false;
}

bool ops_interpolate(VM *vm, const Value *parts, int n, Value *out) {
  char small[128]; /* most log lines */
  Buffer buf;
  buf_init_local(&buf, small, sizeof small);
  for (int i = 0; i < n; i++) {
    Value part = parts[i];
    if (IS_STRING(part)) {
      buf_append(&buf, AS_STRING(part)->chars, (size_t)AS_STRING(part)->length);
    } else if (IS_BLOCK_CLOSURE(part) || IS_ACTION(part)) {
      buf_free(&buf);
      rt_error(vm, "a string interpolates an action, not its result: run it first (`x <- act`, then \"{x}\")");
      return false;
    } else if (!value_show_vm(vm, &buf, part, false)) {
      buf_free(&buf);
      return false; /* the run stops (vm->halted) */
    }
  }
  if (buf.length > INT32_MAX) {
    buf_free(&buf);
    rt_error(vm, "string too long");
    return false;
  }
  ObjString *s = obj_string_new(vm, (int)buf.length);
  if (buf.length) memcpy(s->chars, buf.data, buf.length);
  vm_work(vm, buf.length);
  buf_free(&buf);
  *out = OBJ_VAL(s);
  return true;
}

bool ops_update(VM *vm, const Value *base, int n, Value *out) {
  if (!IS_RECORD(base[0])) {
    rt_error(vm, "cannot update fields of %s: it is not a record", value_type_name(base[0]));
    return false;
  }
  ObjRecord *old = AS_RECORD(base[0]);
  int added = 0;
  for (int k = 0; k < n; k++) {
    Value name = base[1 + 3 * k], add = base[2 + 3 * k];
    if (!IS_STRING(name) || !IS_BOOL(add)) {
      rt_error(vm, "a record update needs a name and a bool for each field");
      return false;
    }
    if (record_field_index(old, AS_STRING(name)) >= 0) continue;
    if (!AS_BOOL(add)) {
      rt_error(vm, "the record has no field '%s' to update (write '+%s: ...' to add it)", AS_STRING(name)->chars,
               AS_STRING(name)->chars);
      return false;
    }
    added++;
  }
  ObjRecord *record = obj_record_with_room(vm, old->count + added, old->count + added);
  old = AS_RECORD(base[0]); /* rooted on the stack: the same record */
  for (int i = 0; i < old->count; i++) record->fields[i] = old->fields[i];
  int count = old->count;
  for (int k = 0; k < n; k++) {
    ObjString *name = AS_STRING(base[1 + 3 * k]);
    int i = record_field_index(old, name);
    for (int j = old->count; j < count && i < 0; j++)
      if (record->fields[j].name == name) i = j; /* added by an earlier triple */
    if (i < 0) {
      i = count++;
      record->fields[i].name = name;
    }
    record->fields[i].value = base[3 + 3 * k];
  }
  vm_work(vm, (uint64_t)count);
  *out = OBJ_VAL(record);
  return true;
}

Value ops_reverse_onto(VM *vm, Value xs, Value acc) {
  gc_push_root(vm, acc);
  Value *built = &vm->temp_roots[vm->temp_root_count - 1];
  uint64_t cells = 0;
  for (ObjCons *c = list_cell(xs); c; c = c->tail, cells++) *built = OBJ_VAL(cons_new(vm, c->head, *built));
  Value result = *built;
  gc_pop_root(vm);
  vm_work(vm, cells);
  return result;
}

bool ops_list_nth(VM *vm, Value list, int64_t i, Value *out) {
  int64_t n = 0;
  for (ObjCons *c = list_cell(list); c; c = c->tail, n++) {
    if (n == i) {
      vm_work(vm, (uint64_t)n);
      *out = c->head;
      return true;
    }
  }
  vm_work(vm, (uint64_t)n);
  rt_error(vm, "list index %" PRId64 " out of range (length %" PRId64 ")", i, n);
  return false;
}

bool ops_index(VM *vm, Value object, Value index, Value *out) {
  if (IS_LIST(object)) {
    if (!IS_INT(index)) {
      rt_error(vm, "a list index must be an int, not %s", value_type_name(index));
      return false;
    }
    return ops_list_nth(vm, object, AS_INT(index), out);
  }
  if (IS_RECORD(object) && IS_STRING(index)) {
    /* field names are interned: a name that is not has no field */
    ObjString *name = obj_find_interned(vm, AS_STRING(index));
    if (name) return ops_field(vm, object, name, out);
    rt_error(vm, "record has no field '%.*s'", AS_STRING(index)->length, AS_CSTRING(index));
    return false;
  }
  rt_error(vm, "cannot index %s with %s", value_type_name(object), value_type_name(index));
  return false;
}

bool ops_negate(VM *vm, Value a, Value *out) {
  if (IS_FLOAT(a)) {
    *out = FLOAT_VAL(-AS_FLOAT(a));
    return true;
  }
  if (!IS_INT(a) && !IS_DURATION(a)) {
    rt_error(vm, "cannot negate %s", value_type_name(a));
    return false;
  }
  if (AS_INT(a) == INT64_MIN) {
    rt_error(vm, "%s overflow in negation", IS_INT(a) ? "integer" : "duration");
    return false;
  }
  *out = a;
  out->as.integer = -AS_INT(a);
  return true;
}

bool ops_match_failed(VM *vm, ObjString *what, Value value) {
  Buffer shown;
  buf_init(&shown);
  enum { LIMIT = 200 };
  bool whole = value_show_bounded(&shown, value, true, LIMIT) && shown.length <= LIMIT;
  vm_work(vm, shown.length);
  int length = whole ? (int)shown.length : LIMIT;
  rt_error(vm, "%s%.*s%s", what->chars, length, shown.data ? shown.data : "", whole ? "" : "...");
  buf_free(&shown);
  return false;
}
