/* Values: arrays, equality, order and type names (show() is vm/show.c). */
#include "value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/alloc.h"
#include "object.h"
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
    case OBJ_MAP: /* as the record tree it was: its shape too, not only its bindings */
      *deeper = true;
      return AS_MAP(a)->height == AS_MAP(b)->height && AS_MAP(a)->size == AS_MAP(b)->size;
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
  return value_equal_counted(NULL, a, b, &visited);
}

/* Iterative, with an explicit stack of pairs, so deeply nested values
 * cannot overflow the C stack. */
bool value_equal_counted(VM *vm, Value a, Value b, uint64_t *visited) {
  if (IS_STRING(a) && IS_STRING(b)) { /* the commonest (mask's state names): no stack of pairs */
    bool deeper;
    *visited = 1 + (uint64_t)AS_STRING(a)->length;
    if (vm && *visited > 1) vm_work(vm, *visited);
    return equal_shallow(a, b, &deeper);
  }
  uint64_t work = 0, charged = 0;
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
    if (vm && work - charged >= VM_WORK_CHUNK) {
      uint64_t units = work - charged;
      charged = work;
      if (vm_work_halts(vm, units)) {
        equal = false;
        break;
      }
    }
    if (!equal_shallow(x, y, &deeper)) equal = false;
    if (!equal || !deeper) continue;
    int needed = IS_RECORD(x) ? 2 * AS_RECORD(x)->count : IS_MAP(x) ? 8 : 4;
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
      stack[count++] = cons_tail(AS_CONS(x));
      stack[count++] = cons_tail(AS_CONS(y));
      stack[count++] = AS_CONS(x)->head;
      stack[count++] = AS_CONS(y)->head;
    } else if (IS_SOME(x)) {
      stack[count++] = AS_SOME(x)->value;
      stack[count++] = AS_SOME(y)->value;
    } else if (IS_MAP(x)) {
      ObjMap *mx = AS_MAP(x), *my = AS_MAP(y);
      stack[count++] = mx->right ? OBJ_VAL(mx->right) : NONE_VAL;
      stack[count++] = my->right ? OBJ_VAL(my->right) : NONE_VAL;
      stack[count++] = mx->left ? OBJ_VAL(mx->left) : NONE_VAL;
      stack[count++] = my->left ? OBJ_VAL(my->left) : NONE_VAL;
      stack[count++] = mx->value;
      stack[count++] = my->value;
      stack[count++] = mx->key;
      stack[count++] = my->key;
    } else {
      ObjRecord *rx = AS_RECORD(x), *ry = AS_RECORD(y);
      for (int i = 0; i < rx->count && equal; i++) {
        Value other = UNIT_VAL;
        if (!record_field_value(ry, rx->fields[i].name, &other)) {
          equal = false;
          break;
        }
        stack[count++] = rx->fields[i].value;
        stack[count++] = other;
      }
    }
  }
  if (stack != small) free(stack);
  if (vm && !vm->halted && work - charged > 1) vm_work(vm, work - charged);
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
    case OBJ_MAP: return "map";
  }
  return "?";
}
