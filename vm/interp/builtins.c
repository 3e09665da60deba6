/* Native builtins. Natives are pure: they compute from their arguments and
 * never call back into the interpreter; higher-order helpers (map, filter,
 * forever ...) are written in .sim in stdlib/prelude.sim. */
#include "builtins.h"
#include "show.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "ops.h"
#include "order.h"
#include "state.h"

#define EXPECT(cond, ...)     \
  do {                        \
    if (!(cond)) {            \
      rt_error(vm, __VA_ARGS__); \
      return false;           \
    }                         \
  } while (0)

/* A new (not interned) string of the buffer's text: the result of show,
 * join ... (see ObjString). */
static bool string_result(VM *vm, Buffer *buf, const char *what, Value *result) {
  if (buf->length > INT32_MAX) {
    buf_free(buf);
    rt_error(vm, "%s: string too long", what);
    return false;
  }
  ObjString *s = obj_string_new(vm, (int)buf->length);
  if (buf->length) memcpy(s->chars, buf->data, buf->length);
  vm_work(vm, buf->length);
  buf_free(buf);
  *result = OBJ_VAL(s);
  return true;
}

static bool nat_show(VM *vm, Value *args, Value *result) {
  char small[64]; /* most shown values: an int, a thread id, a short string */
  Buffer buf;
  buf_init_local(&buf, small, sizeof small);
  if (!value_show_vm(vm, &buf, args[0], false)) { /* the run stops (vm->halted) */
    buf_free(&buf);
    return false;
  }
  return string_result(vm, &buf, "show", result);
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
  for (ObjCons *c = list_cell(args[0]); c; c = c->tail) n++;
  vm_work(vm, (uint64_t)n);
  *result = INT_VAL(n);
  return true;
}

static bool nat_cons(VM *vm, Value *args, Value *result) {
  *result = OBJ_VAL(obj_cons(vm, args[0], args[1]));
  return true;
}

static bool nat_head(VM *vm, Value *args, Value *result) {
  EXPECT(IS_CONS(args[0]), "head of an empty list");
  *result = AS_CONS(args[0])->head;
  return true;
}

static bool nat_tail(VM *vm, Value *args, Value *result) {
  EXPECT(IS_CONS(args[0]), "tail of an empty list");
  *result = cons_tail(AS_CONS(args[0]));
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

/* a loop in C, since every reverse ends every replicateM, mapM and map */
static bool nat_reverse_onto(VM *vm, Value *args, Value *result) {
  *result = ops_reverse_onto(vm, args[0], args[1]);
  return true;
}

static bool nat_nth(VM *vm, Value *args, Value *result) { return ops_list_nth(vm, args[0], AS_INT(args[1]), result); }

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
  ObjRecord *old = AS_RECORD(args[0]);
  ObjString *name = obj_intern(vm, AS_STRING(args[1])); /* field names are interned */
  args[1] = OBJ_VAL(name); /* rooted there: the intern set holds it weakly */
  int found = record_field_index(old, name);
  if (found < 0) { /* a new field: written after the record's own, if there is room */
    ObjRecord *longer = obj_record_extend(vm, old, name, args[2]);
    vm_work(vm, longer ? 1 : (uint64_t)old->count);
    if (longer) {
      *result = OBJ_VAL(longer);
      return true;
    }
  } else {
    vm_work(vm, (uint64_t)old->count); /* a copy */
  }
  /* a copy; one that adds a field gets room to add more without copying */
  int count = old->count + (found < 0);
  ObjRecord *record = obj_record_with_room(vm, count, found < 0 ? 2 * count : count);
  old = AS_RECORD(args[0]); /* still rooted in args; reload for clarity */
  for (int i = 0; i < old->count; i++) record->fields[i] = old->fields[i];
  if (found < 0) found = old->count;
  record->fields[found].name = name;
  record->fields[found].value = args[2];
  *result = OBJ_VAL(record);
  return true;
}

static bool nat_has_field(VM *vm, Value *args, Value *result) {
  ObjString *name = obj_find_interned(vm, AS_STRING(args[1]));
  vm_work(vm, (uint64_t)AS_RECORD(args[0])->count);
  *result = BOOL_VAL(name && record_field_index(AS_RECORD(args[0]), name) >= 0);
  return true;
}

static bool nat_get_field(VM *vm, Value *args, Value *result) {
  ObjString *name = obj_find_interned(vm, AS_STRING(args[1]));
  vm_work(vm, (uint64_t)AS_RECORD(args[0])->count);
  if (!name || !record_field_value(AS_RECORD(args[0]), name, result)) {
    Buffer shown;
    buf_init(&shown);
    value_show_bounded(&shown, args[0], true, 200);
    rt_error(vm, "getField: %s has no field '%.*s'", buf_text(&shown), AS_STRING(args[1])->length, AS_CSTRING(args[1]));
    buf_free(&shown);
    return false;
  }
  return true;
}

/* The names in source order, the list built back to front (each name is
 * the record's own interned string: nothing is allocated but the cells). */
static bool nat_field_names(VM *vm, Value *args, Value *result) {
  ObjRecord *record = AS_RECORD(args[0]);
  vm_work(vm, (uint64_t)record->count);
  gc_push_root(vm, NIL_VAL);
  for (int i = record->count - 1; i >= 0; i--)
    vm->temp_roots[vm->temp_root_count - 1] =
        OBJ_VAL(obj_cons(vm, OBJ_VAL(record->fields[i].name), vm->temp_roots[vm->temp_root_count - 1]));
  *result = vm->temp_roots[vm->temp_root_count - 1];
  gc_pop_root(vm);
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
    const char *text = obj_string_cstring(vm, &args[0]); /* strtoll, strtod need the NUL */
    char *end;
    vm_work(vm, (uint64_t)AS_STRING(v)->length);
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
    const char *text = obj_string_cstring(vm, &args[0]); /* strtoll, strtod need the NUL */
    char *end;
    vm_work(vm, (uint64_t)AS_STRING(v)->length);
    double f = strtod(text, &end);
    EXPECT(*text && *end == '\0', "toFloat: \"%s\" is not a number", text);
    *result = FLOAT_VAL(f);
  } else {
    EXPECT(false, "toFloat cannot convert %s", value_type_name(v));
  }
  return true;
}

static bool nat_nanoseconds(VM *vm, Value *args, Value *result) {
  (void)vm;
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

static bool nat_compare(VM *vm, Value *args, Value *result) {
  int order;
  if (!order_or_error(vm, "compare", args[0], args[1], &order)) return false;
  *result = INT_VAL(order);
  return true;
}

static bool nat_sort(VM *vm, Value *args, Value *result) { return order_sort(vm, "sort", args[0], NIL_VAL, result); }

static bool nat_sort_on_keys(VM *vm, Value *args, Value *result) {
  if (IS_NIL(args[0]) != IS_NIL(args[1])) {
    rt_error(vm, "sortOnKeys needs as many keys as values");
    return false;
  }
  return order_sort(vm, "sortOn", args[1], args[0], result);
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
  if (!value_show_vm(vm, &buf, args[0], false)) { /* the run stops (vm->halted) */
    buf_free(&buf);
    return false;
  }
  vm_work(vm, buf.length);
  rt_error(vm, "%s", buf.data ? buf.data : "");
  buf_free(&buf);
  return false;
}

/* The strings of a list joined with sep between them, in linear time. */
static bool nat_join(VM *vm, Value *args, Value *result) {
  Buffer out;
  buf_init(&out);
  for (ObjCons *c = list_cell(args[1]); c; c = c->tail) {
    Value item = c->head;
    if (!IS_STRING(item)) {
      buf_free(&out);
      rt_error(vm, "join needs a list of strings, but it holds %s", value_type_name(item));
      return false;
    }
    if (c != AS_CONS(args[1])) buf_append(&out, AS_CSTRING(args[0]), (size_t)AS_STRING(args[0])->length);
    buf_append(&out, AS_CSTRING(item), (size_t)AS_STRING(item)->length);
  }
  return string_result(vm, &out, "join", result);
}

/* split(s, sep): the pieces of s between the separators, found left to
 * right (join's inverse: join(sep, split(s, sep)) is s). The separators'
 * places first, then the list built back to front, the list made so far
 * rooted while each piece is made. */
static bool nat_split(VM *vm, Value *args, Value *result) {
  ObjString *s = AS_STRING(args[0]), *sep = AS_STRING(args[1]);
  EXPECT(sep->length > 0, "split needs a separator of at least one character, not \"\"");
  vm_work(vm, (uint64_t)s->length);
  int *at = NULL, count = 0, capacity = 0;
  for (int i = 0; i + sep->length <= s->length;) {
    if (memcmp(s->chars + i, sep->chars, (size_t)sep->length) != 0) {
      i++;
      continue;
    }
    GROW(at, count, capacity);
    at[count++] = i;
    i += sep->length;
  }
  gc_push_root(vm, NIL_VAL);
  int end = s->length;
  for (int k = count; k >= 0; k--) {
    int start = k == 0 ? 0 : at[k - 1] + sep->length;
    ObjString *piece = obj_string(vm, s->chars + start, end - start);
    gc_push_root(vm, OBJ_VAL(piece));
    Value list = OBJ_VAL(obj_cons(vm, OBJ_VAL(piece), vm->temp_roots[vm->temp_root_count - 2]));
    gc_pop_root(vm);
    vm->temp_roots[vm->temp_root_count - 1] = list;
    if (k > 0) end = at[k - 1];
  }
  free(at);
  *result = vm->temp_roots[vm->temp_root_count - 1];
  gc_pop_root(vm);
  return true;
}

static bool nat_type_of(VM *vm, Value *args, Value *result) {
  *result = OBJ_VAL(obj_cstring(vm, value_type_name(args[0])));
  return true;
}

const char *exception_kind_name(Value e, Value *kind) {
  if (IS_EXCEPTION(e))
    return AS_EXCEPTION(e)->kind == EXC_KILLED ? "ThreadKilled" : AS_EXCEPTION(e)->kind == EXC_ASSERT ? "AssertionFailed" : "ErrorCall";
  if (IS_TIMEOUT(e)) return "Timeout";
  if (IS_RECORD(e)) {
    ObjRecord *record = AS_RECORD(e);
    for (int i = 0; i < record->count; i++)
      if (strcmp(record->fields[i].name->chars, "kind") == 0 && IS_STRING(record->fields[i].value)) {
        *kind = record->fields[i].value;
        return NULL;
      }
  }
  return value_type_name(e);
}

static bool nat_exception_kind(VM *vm, Value *args, Value *result) {
  Value kind;
  const char *name = exception_kind_name(args[0], &kind);
  *result = name ? OBJ_VAL(obj_cstring(vm, name)) : kind;
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

/* ---- each builtin's checks, and the table, from builtins.def ---- */

#include "prim.h"

static const char *const arg_phrases[] = {
#define ARG_PHRASE(name, check, phrase) phrase,
    ARG_TYPES(ARG_PHRASE)
#undef ARG_PHRASE
};

/* The error of argument i of builtin `index`, a value of the wrong type. */
static bool arg_failed(VM *vm, int index, int i, Value v) {
  const Builtin *builtin = &builtin_table[index];
  ArgType type = (ArgType)builtin->args[i];
  if (type == ARG_DELAY && IS_INT(v))
    rt_error(vm, "%s needs a duration, not int (write %" PRId64 "us, or n * 1us)", builtin->name, AS_INT(v));
  else
    rt_error(vm, "%s needs %s, not %s", builtin->name, arg_phrases[type], value_type_name(v));
  return false;
}

/* The error of an action run on the wrong side of a transaction. */
static bool tx_failed(VM *vm, int index) {
  const Builtin *builtin = &builtin_table[index];
  if (builtin->where == TX_OUTSIDE)
    rt_error(vm, "%s inside atomically: a transaction may only use TVars (readTVar, writeTVar, newTVar, retry, "
                 "orElse, throw)", builtin->name);
  else
    rt_error(vm, "%s outside a transaction: run it with atomically(...)", builtin->name);
  return false;
}

/* One test per argument type (prim.h's ARG_TYPES) ... */
#define ARG_TEST(name, check, phrase) \
  static inline bool arg_is_##name(Value v) { (void)v; return check; }
ARG_TYPES(ARG_TEST)
#undef ARG_TEST

/* ... and each builtin's checks as code of its own, the types constants,
 * so a check costs what the hand-written test did. */
#define CHECK_ARG(type, i) \
  if (!arg_is_##type(args[i])) return arg_failed(vm, self, i, args[i]);
#define ARGS0()
#define ARGS1(a) CHECK_ARG(a, 0)
#define ARGS2(a, b) CHECK_ARG(a, 0) CHECK_ARG(b, 1)
#define ARGS3(a, b, c) CHECK_ARG(a, 0) CHECK_ARG(b, 1) CHECK_ARG(c, 2)
#define WHERE_ANYWHERE
#define WHERE_OUTSIDE if (thread->in_transaction) return tx_failed(vm, self);
#define WHERE_INSIDE if (!thread->in_transaction) return tx_failed(vm, self);
#define ACTION(name, where, argtypes, fn, op)                                              \
  static inline bool check_##name(VM *vm, const ObjThread *thread, Value *args) {         \
    const int self = BUILTIN_##name;                                                       \
    (void)self;                                                                            \
    (void)thread;                                                                          \
    (void)args;                                                                            \
    WHERE_##where argtypes return true;                                                    \
  }                                                                                        \
  static PrimResult run_##name(VM *vm, ObjThread *thread, Value *args, bool by_prelude) { \
    return check_##name(vm, thread, args) ? fn(vm, thread, args, by_prelude) : PRIM_ERROR; \
  }
#define BUILTIN(name, argtypes, fn)                             \
  static bool run_##name(VM *vm, Value *args, Value *result) { \
    const int self = BUILTIN_##name;                            \
    (void)self;                                                 \
    argtypes return fn(vm, args, result);                       \
  }
#include "builtins.def"
#undef ACTION
#undef BUILTIN
#undef ARGS0
#undef ARGS1
#undef ARGS2
#undef ARGS3

#define ARGS0() 0, {0}
#define ARGS1(a) 1, {ARG_##a}
#define ARGS2(a, b) 2, {ARG_##a, ARG_##b}
#define ARGS3(a, b, c) 3, {ARG_##a, ARG_##b, ARG_##c}

const Builtin builtin_table[] = {
#define ACTION(name, where, argtypes, fn, op) {#name, argtypes, TX_##where, NULL, (void *)run_##name, OP_##op},
#define BUILTIN(name, argtypes, fn) {#name, argtypes, TX_ANYWHERE, run_##name, NULL, -1},
#include "builtins.def"
#undef ACTION
#undef BUILTIN
};

const int builtin_count = (int)(sizeof builtin_table / sizeof builtin_table[0]);

/* ACTION and NATIVE name a builtin by a one-byte operand (vm/opcodes.def);
 * 255 is left unused, so a test can name "no such builtin". */
_Static_assert(BUILTIN_COUNT < 255, "a builtin's index fits the BUILTIN and NATIVE operands");

const Builtin *builtin_find(const char *name) {
  for (int i = 0; i < builtin_count; i++)
    if (strcmp(builtin_table[i].name, name) == 0) return &builtin_table[i];
  return NULL;
}
