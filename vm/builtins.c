/* Native builtins. Natives are pure: they compute from their arguments and
 * never call back into the interpreter; higher-order helpers (map, filter,
 * forever ...) are written in .sim in stdlib/prelude.sim. */
#include "builtins.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

void rt_error(VM *vm, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(vm->error, sizeof vm->error, fmt, ap);
  va_end(ap);
  vm->has_error = true;
}

#define EXPECT(cond, ...)     \
  do {                        \
    if (!(cond)) {            \
      rt_error(vm, __VA_ARGS__); \
      return false;           \
    }                         \
  } while (0)

static bool nat_show(VM *vm, Value *args, Value *result) {
  Buffer buf;
  buf_init(&buf);
  value_show(&buf, args[0], false);
  *result = OBJ_VAL(obj_string(vm, buf.data ? buf.data : "", (int)buf.length));
  buf_free(&buf);
  return true;
}

static bool nat_length(VM *vm, Value *args, Value *result) {
  if (IS_STRING(args[0])) {
    *result = INT_VAL(AS_STRING(args[0])->length);
    return true;
  }
  if (IS_RECORD(args[0])) {
    *result = INT_VAL(AS_RECORD(args[0])->count);
    return true;
  }
  EXPECT(IS_LIST(args[0]), "length needs a list, string or record, not %s", value_type_name(args[0]));
  int64_t n = 0;
  for (Value v = args[0]; IS_CONS(v); v = AS_CONS(v)->tail) n++;
  *result = INT_VAL(n);
  return true;
}

static bool nat_cons(VM *vm, Value *args, Value *result) {
  EXPECT(IS_LIST(args[1]), "cons needs a list as its second argument, not %s", value_type_name(args[1]));
  *result = OBJ_VAL(obj_cons(vm, args[0], args[1]));
  return true;
}

static bool nat_head(VM *vm, Value *args, Value *result) {
  EXPECT(IS_LIST(args[0]), "head needs a list, not %s", value_type_name(args[0]));
  EXPECT(IS_CONS(args[0]), "head of an empty list");
  *result = AS_CONS(args[0])->head;
  return true;
}

static bool nat_tail(VM *vm, Value *args, Value *result) {
  EXPECT(IS_LIST(args[0]), "tail needs a list, not %s", value_type_name(args[0]));
  EXPECT(IS_CONS(args[0]), "tail of an empty list");
  *result = AS_CONS(args[0])->tail;
  return true;
}

static bool nat_is_empty(VM *vm, Value *args, Value *result) {
  if (IS_STRING(args[0])) {
    *result = BOOL_VAL(AS_STRING(args[0])->length == 0);
    return true;
  }
  EXPECT(IS_LIST(args[0]), "isEmpty needs a list or string, not %s", value_type_name(args[0]));
  *result = BOOL_VAL(IS_NIL(args[0]));
  return true;
}

static bool nat_nth(VM *vm, Value *args, Value *result) {
  EXPECT(IS_LIST(args[0]), "nth needs a list, not %s", value_type_name(args[0]));
  EXPECT(IS_INT(args[1]), "nth needs an int index, not %s", value_type_name(args[1]));
  int64_t i = AS_INT(args[1]), n = 0;
  for (Value v = args[0]; IS_CONS(v); v = AS_CONS(v)->tail, n++) {
    if (n == i) {
      *result = AS_CONS(v)->head;
      return true;
    }
  }
  rt_error(vm, "list index %" PRId64 " out of range (length %" PRId64 ")", i, n);
  return false;
}

static bool nat_some(VM *vm, Value *args, Value *result) {
  *result = OBJ_VAL(obj_some(vm, args[0]));
  return true;
}

static bool nat_is_some(VM *vm, Value *args, Value *result) {
  (void)vm;
  *result = BOOL_VAL(IS_SOME(args[0]));
  return true;
}

static bool nat_is_none(VM *vm, Value *args, Value *result) {
  (void)vm;
  *result = BOOL_VAL(IS_NONE(args[0]));
  return true;
}

static bool nat_from_some(VM *vm, Value *args, Value *result) {
  EXPECT(IS_SOME(args[0]), "fromSome needs some(x), not %s", IS_NONE(args[0]) ? "none" : value_type_name(args[0]));
  *result = AS_SOME(args[0])->value;
  return true;
}

static bool nat_set_field(VM *vm, Value *args, Value *result) {
  EXPECT(IS_RECORD(args[0]), "setField needs a record, not %s", value_type_name(args[0]));
  EXPECT(IS_STRING(args[1]), "setField needs a field name string, not %s", value_type_name(args[1]));
  ObjRecord *old = AS_RECORD(args[0]);
  ObjString *name = AS_STRING(args[1]);
  int found = -1;
  for (int i = 0; i < old->count; i++)
    if (old->fields[i].name == name) found = i;
  ObjRecord *record = obj_record(vm, old->count + (found < 0));
  old = AS_RECORD(args[0]); /* still rooted in args; reload for clarity */
  for (int i = 0; i < old->count; i++) record->fields[i] = old->fields[i];
  if (found < 0) found = old->count;
  record->fields[found].name = name;
  record->fields[found].value = args[2];
  *result = OBJ_VAL(record);
  return true;
}

static bool nat_has_field(VM *vm, Value *args, Value *result) {
  EXPECT(IS_RECORD(args[0]), "hasField needs a record, not %s", value_type_name(args[0]));
  EXPECT(IS_STRING(args[1]), "hasField needs a field name string, not %s", value_type_name(args[1]));
  bool found = false;
  for (int i = 0; i < AS_RECORD(args[0])->count; i++)
    if (AS_RECORD(args[0])->fields[i].name == AS_STRING(args[1])) found = true;
  *result = BOOL_VAL(found);
  return true;
}

static bool nat_to_int(VM *vm, Value *args, Value *result) {
  Value v = args[0];
  if (IS_INT(v)) {
    *result = v;
  } else if (IS_DURATION(v)) {
    *result = INT_VAL(AS_DURATION(v));
  } else if (IS_FLOAT(v)) {
    double f = AS_FLOAT(v);
    if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) {
      Buffer shown;
      buf_init(&shown);
      value_show(&shown, v, false);
      rt_error(vm, "toInt: %s does not fit in 64 bits", shown.data);
      buf_free(&shown);
      return false;
    }
    *result = INT_VAL((int64_t)f);
  } else if (IS_STRING(v)) {
    const char *text = AS_CSTRING(v);
    char *end;
    errno = 0;
    long long n = strtoll(text, &end, 10);
    EXPECT(*text && *end == '\0', "toInt: \"%s\" is not an integer", text);
    EXPECT(errno == 0, "toInt: \"%s\" does not fit in 64 bits", text);
    *result = INT_VAL(n);
  } else {
    EXPECT(false, "toInt cannot convert %s", value_type_name(v));
  }
  return true;
}

static bool nat_to_float(VM *vm, Value *args, Value *result) {
  Value v = args[0];
  if (IS_FLOAT(v)) {
    *result = v;
  } else if (IS_INT(v)) {
    *result = FLOAT_VAL((double)AS_INT(v));
  } else if (IS_STRING(v)) {
    const char *text = AS_CSTRING(v);
    char *end;
    double f = strtod(text, &end);
    EXPECT(*text && *end == '\0', "toFloat: \"%s\" is not a number", text);
    *result = FLOAT_VAL(f);
  } else {
    EXPECT(false, "toFloat cannot convert %s", value_type_name(v));
  }
  return true;
}

static bool nat_nanoseconds(VM *vm, Value *args, Value *result) {
  EXPECT(IS_DURATION(args[0]), "nanoseconds needs a duration, not %s", value_type_name(args[0]));
  *result = INT_VAL(AS_DURATION(args[0]));
  return true;
}

static bool nat_abs(VM *vm, Value *args, Value *result) {
  Value v = args[0];
  if (IS_FLOAT(v)) {
    *result = FLOAT_VAL(fabs(AS_FLOAT(v)));
    return true;
  }
  EXPECT(IS_INT(v) || IS_DURATION(v), "abs needs a number or duration, not %s", value_type_name(v));
  EXPECT(AS_INT(v) != INT64_MIN, "%s overflow in abs", IS_INT(v) ? "integer" : "duration");
  *result = v;
  if (AS_INT(v) < 0) result->as.integer = -AS_INT(v);
  return true;
}

static bool ordered(VM *vm, const char *name, Value a, Value b, int *order) {
  EXPECT(value_compare(a, b, order), "%s cannot compare %s and %s", name, value_type_name(a), value_type_name(b));
  return true;
}

static bool nat_min(VM *vm, Value *args, Value *result) {
  int order;
  if (!ordered(vm, "min", args[0], args[1], &order)) return false;
  *result = order <= 0 ? args[0] : args[1];
  return true;
}

static bool nat_max(VM *vm, Value *args, Value *result) {
  int order;
  if (!ordered(vm, "max", args[0], args[1], &order)) return false;
  *result = order >= 0 ? args[0] : args[1];
  return true;
}

static bool nat_args(VM *vm, Value *args, Value *result) {
  (void)args;
  /* build back to front; the list so far is rooted while each string is made */
  *result = NIL_VAL;
  gc_push_root(vm, NIL_VAL);
  for (int i = vm->config.argc - 1; i >= 0; i--) {
    ObjString *arg = obj_cstring(vm, vm->config.argv[i]);
    gc_push_root(vm, OBJ_VAL(arg));
    Value list = OBJ_VAL(obj_cons(vm, OBJ_VAL(arg), vm->temp_roots[vm->temp_root_count - 2]));
    gc_pop_root(vm);
    vm->temp_roots[vm->temp_root_count - 1] = list;
  }
  *result = vm->temp_roots[vm->temp_root_count - 1];
  gc_pop_root(vm);
  return true;
}

static bool nat_error(VM *vm, Value *args, Value *result) {
  (void)result;
  Buffer buf;
  buf_init(&buf);
  value_show(&buf, args[0], false);
  rt_error(vm, "%s", buf.data ? buf.data : "");
  buf_free(&buf);
  return false;
}

/* The strings of a list joined with sep between them, in linear time. */
static bool nat_join(VM *vm, Value *args, Value *result) {
  EXPECT(IS_STRING(args[0]), "join needs a separator string, not %s", value_type_name(args[0]));
  EXPECT(IS_LIST(args[1]), "join needs a list of strings, not %s", value_type_name(args[1]));
  Buffer out;
  buf_init(&out);
  for (Value v = args[1]; IS_CONS(v); v = AS_CONS(v)->tail) {
    Value item = AS_CONS(v)->head;
    if (!IS_STRING(item)) {
      buf_free(&out);
      rt_error(vm, "join needs a list of strings, but it holds %s", value_type_name(item));
      return false;
    }
    if (v.as.obj != args[1].as.obj) buf_append(&out, AS_CSTRING(args[0]), (size_t)AS_STRING(args[0])->length);
    buf_append(&out, AS_CSTRING(item), (size_t)AS_STRING(item)->length);
  }
  if (out.length > INT32_MAX) {
    buf_free(&out);
    rt_error(vm, "join: string too long");
    return false;
  }
  *result = OBJ_VAL(obj_string(vm, buf_text(&out), (int)out.length));
  buf_free(&out);
  return true;
}

static bool nat_type_of(VM *vm, Value *args, Value *result) {
  *result = OBJ_VAL(obj_cstring(vm, value_type_name(args[0])));
  return true;
}

/* "ThreadKilled", "ErrorCall", "AssertionFailed", "Timeout"; for a thrown record with a string
 * field `kind`, that; otherwise the thrown value's type name. */
static bool nat_exception_kind(VM *vm, Value *args, Value *result) {
  Value e = args[0];
  const char *kind = value_type_name(e);
  if (IS_EXCEPTION(e))
    kind = AS_EXCEPTION(e)->kind == EXC_KILLED ? "ThreadKilled" : AS_EXCEPTION(e)->kind == EXC_ASSERT ? "AssertionFailed" : "ErrorCall";
  else if (IS_TIMEOUT(e)) kind = "Timeout";
  else if (IS_RECORD(e)) {
    ObjRecord *record = AS_RECORD(e);
    for (int i = 0; i < record->count; i++)
      if (strcmp(record->fields[i].name->chars, "kind") == 0 && IS_STRING(record->fields[i].value)) {
        *result = record->fields[i].value;
        return true;
      }
  }
  *result = OBJ_VAL(obj_cstring(vm, kind));
  return true;
}

/* A runtime error's or failed assertion's message; otherwise show(e). */
static bool nat_exception_message(VM *vm, Value *args, Value *result) {
  Value e = args[0];
  if (IS_EXCEPTION(e) && AS_EXCEPTION(e)->message) {
    *result = OBJ_VAL(AS_EXCEPTION(e)->message);
    return true;
  }
  return nat_show(vm, args, result);
}

const Builtin builtin_table[] = {
#define ACTION(name, arity, op) {#name, arity, NULL, OP_##op},
#define BUILTIN(name, arity, fn) {#name, arity, fn, -1},
#include "builtins.def"
#undef ACTION
#undef BUILTIN
};

const int builtin_count = (int)(sizeof builtin_table / sizeof builtin_table[0]);

const Builtin *builtin_find(const char *name) {
  for (int i = 0; i < builtin_count; i++)
    if (strcmp(builtin_table[i].name, name) == 0) return &builtin_table[i];
  return NULL;
}
