/* The total order of keys, and a stable sort by it (see order.h). */
#include "order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "show.h"

/* The rank of a value's kind: values of different ranks are not ordered,
 * but for ints and floats (one rank). 0: never a key. */
static int kind_rank(Value v) {
  switch (v.type) {
    case VAL_UNIT: return 1;
    case VAL_BOOL: return 2;
    case VAL_INT:
    case VAL_FLOAT: return 3;
    case VAL_DURATION: return 4;
    case VAL_NIL: return 6;
    case VAL_NONE: return 7;
    case VAL_UNDEFINED: return 0;
    case VAL_OBJ: break;
  }
  switch (OBJ_TYPE(v)) {
    case OBJ_STRING: return 5;
    case OBJ_CONS: return 6;
    case OBJ_SOME: return 7;
    case OBJ_RECORD: return 8;
    case OBJ_MAP: return 9;
    default: return 0;
  }
}

/* Two strings bytewise, as value_compare orders them: -1, 0 or 1. */
static int compare_strings(const ObjString *a, const ObjString *b) {
  int order = 0;
  value_compare(OBJ_VAL(a), OBJ_VAL(b), &order); /* two strings: always ordered */
  return order;
}

/* A record's field indices in the order of their names (insertion sort:
 * records have few fields). */
static void sorted_fields(const ObjRecord *r, int *index) {
  for (int i = 0; i < r->count; i++) {
    int j = i;
    while (j > 0) {
      if (compare_strings(r->fields[index[j - 1]].name, r->fields[i].name) <= 0) break;
      index[j] = index[j - 1];
      j--;
    }
    index[j] = i;
  }
}

/* The pairs still to compare, in order (the top is compared first). */
typedef struct {
  Value *items;
  int count, capacity;
  Value small[64];
} PairStack;

static void push_pair(PairStack *s, Value a, Value b) {
  if (s->count + 2 > s->capacity) {
    int capacity = s->capacity * 2;
    Value *items = xrealloc(s->items == s->small ? NULL : s->items, (size_t)capacity * sizeof(Value));
    if (s->items == s->small) memcpy(items, s->small, sizeof s->small);
    s->items = items;
    s->capacity = capacity;
  }
  s->items[s->count++] = a;
  s->items[s->count++] = b;
}

/* Compare two records' field names (sorted); when they are the same, push
 * their values' pairs, the first name's on top. */
static int order_records(PairStack *s, const ObjRecord *x, const ObjRecord *y, uint64_t *work) {
  int small_x[16], small_y[16];
  int *ix = x->count <= 16 ? small_x : xrealloc(NULL, (size_t)x->count * sizeof(int));
  int *iy = y->count <= 16 ? small_y : xrealloc(NULL, (size_t)y->count * sizeof(int));
  sorted_fields(x, ix);
  sorted_fields(y, iy);
  int order = 0, n = x->count < y->count ? x->count : y->count;
  for (int i = 0; i < n && !order; i++) {
    const ObjString *a = x->fields[ix[i]].name, *b = y->fields[iy[i]].name;
    if (a != b) order = compare_strings(a, b); /* names are interned: one object is one name */
  }
  if (!order) order = (x->count > y->count) - (x->count < y->count);
  if (!order)
    for (int i = n - 1; i >= 0; i--) push_pair(s, x->fields[ix[i]].value, y->fields[iy[i]].value);
  *work += (uint64_t)(x->count + y->count);
  if (ix != small_x) free(ix);
  if (iy != small_y) free(iy);
  return order;
}

bool order_values(VM *vm, Value a, Value b, int *order, Value *bad_a, Value *bad_b, uint64_t *work) {
  PairStack s; /* its small array stays uninitialised: only pushed pairs are read */
  s.items = s.small;
  s.count = 0;
  s.capacity = 64;
  push_pair(&s, a, b);
  bool ordered = true;
  *order = 0;
  while (s.count && !*order) {
    Value y = s.items[--s.count], x = s.items[--s.count];
    if (++*work >= VM_WORK_CHUNK && vm) {
      uint64_t units = *work;
      *work = 0;
      if (vm_work_halts(vm, units)) {
        ordered = false;
        *bad_a = *bad_b = UNIT_VAL;
        break;
      }
    }
    int rx = kind_rank(x), ry = kind_rank(y);
    if (!rx || rx != ry) { /* ([] and a cons share a rank, as none and some do) */
      ordered = false;
      *bad_a = x;
      *bad_b = y;
      break;
    }
    switch (rx) {
      case 1: break;
      case 2: *order = (AS_BOOL(x) > AS_BOOL(y)) - (AS_BOOL(x) < AS_BOOL(y)); break;
      case 3:
      case 4:
      case 5: {
        int o;
        value_compare(x, y, &o);
        if (o == 2) { /* a NaN */
          ordered = false;
          *bad_a = x;
          *bad_b = y;
        } else {
          *order = o;
        }
        if (rx == 5) *work += (uint64_t)AS_STRING(x)->length;
        break;
      }
      case 6: /* lists: [] first, then head by head */
        if (IS_NIL(x) || IS_NIL(y)) {
          *order = IS_NIL(x) && IS_NIL(y) ? 0 : IS_NIL(x) ? -1 : 1;
        } else {
          push_pair(&s, cons_tail(AS_CONS(x)), cons_tail(AS_CONS(y)));
          push_pair(&s, AS_CONS(x)->head, AS_CONS(y)->head);
        }
        break;
      case 7:
        if (IS_NONE(x) || IS_NONE(y)) *order = IS_NONE(x) == IS_NONE(y) ? 0 : IS_NONE(x) ? -1 : 1;
        else push_pair(&s, AS_SOME(x)->value, AS_SOME(y)->value);
        break;
      case 8: *order = order_records(&s, AS_RECORD(x), AS_RECORD(y), work); break;
      case 9: { /* as the record #{key, value, left, right, height, size} it was: by
                   height, key, left, right, size, value (the names' order) */
        const ObjMap *mx = AS_MAP(x), *my = AS_MAP(y);
        *order = (mx->height > my->height) - (mx->height < my->height);
        if (!*order) {
          push_pair(&s, mx->value, my->value);
          push_pair(&s, INT_VAL(mx->size), INT_VAL(my->size));
          push_pair(&s, mx->right ? OBJ_VAL(mx->right) : NONE_VAL, my->right ? OBJ_VAL(my->right) : NONE_VAL);
          push_pair(&s, mx->left ? OBJ_VAL(mx->left) : NONE_VAL, my->left ? OBJ_VAL(my->left) : NONE_VAL);
          push_pair(&s, mx->key, my->key);
        }
        *work += 12; /* the two records' fields */
        break;
      }
    }
    if (!ordered) break;
  }
  if (s.items != s.small) free(s.items);
  return ordered;
}

bool order_or_error(VM *vm, const char *who, Value a, Value b, int *order) {
  if (order_quick(a, b, order)) {
    vm_work(vm, IS_INT(a) ? 1 : 1 + (uint64_t)AS_STRING(a)->length);
    return true;
  }
  Value bad_a = UNIT_VAL, bad_b = UNIT_VAL;
  uint64_t work = 0;
  bool ordered = order_values(vm, a, b, order, &bad_a, &bad_b, &work);
  vm_work(vm, work);
  if (ordered) return true;
  if (vm->halted) return false;
  if ((IS_FLOAT(bad_a) && isnan(AS_FLOAT(bad_a))) || (IS_FLOAT(bad_b) && isnan(AS_FLOAT(bad_b)))) {
    rt_error(vm, "%s cannot order nan: it is neither below, equal to nor above any number", who);
    return false;
  }
  Buffer x, y;
  buf_init(&x);
  buf_init(&y);
  value_show_bounded(&x, bad_a, true, 200);
  value_show_bounded(&y, bad_b, true, 200);
  rt_error(vm, "%s cannot order %s %s against %s %s: keys must be of one kind (ints and floats, durations, strings, "
           "bools, or lists, options and records of those)",
           who, value_type_name(bad_a), buf_text(&x), value_type_name(bad_b), buf_text(&y));
  buf_free(&x);
  buf_free(&y);
  return false;
}

/* ---- the stable merge sort ---- */

typedef struct {
  Value key, value;
} SortEntry;

/* Merge the sorted runs a[lo, mid) and a[mid, hi) through tmp; false
 * after an error or when the run must stop (vm->halted). Equal keys keep
 * their order: the left run's first. Two ints or two strings are ordered
 * inline (order_quick), their work counted in *work for the caller to
 * charge; the rest go through order_or_error, which charges its own. */
static bool merge(VM *vm, const char *who, SortEntry *a, SortEntry *tmp, int lo, int mid, int hi, uint64_t *work) {
  int i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    int order;
    Value x = a[j].key, y = a[i].key;
    if (IS_INT(x) && IS_INT(y)) {
      order = AS_INT(x) < AS_INT(y) ? -1 : 0;
      (*work)++;
    } else if (order_quick(x, y, &order)) {
      *work += 1 + (uint64_t)AS_STRING(x)->length;
    } else if (!order_or_error(vm, who, x, y, &order)) {
      return false;
    }
    tmp[k++] = order < 0 ? a[j++] : a[i++];
  }
  while (i < mid) tmp[k++] = a[i++];
  while (j < hi) tmp[k++] = a[j++];
  memcpy(a + lo, tmp + lo, (size_t)(hi - lo) * sizeof(SortEntry));
  if (*work >= VM_WORK_CHUNK) {
    uint64_t units = *work;
    *work = 0;
    if (vm_work_halts(vm, units)) return false;
  }
  return true;
}

static int list_length(Value list) {
  int n = 0;
  for (Value v = list; IS_CONS(v); v = cons_tail(AS_CONS(v))) n++;
  return n;
}

bool order_sort(VM *vm, const char *who, Value list, Value keys, Value *result) {
  int n = list_length(list);
  if (!IS_NIL(keys) && list_length(keys) != n) {
    rt_error(vm, "%s: %d keys for %d values", who, list_length(keys), n);
    return false;
  }
  SortEntry *a = xrealloc(NULL, (size_t)(n ? n : 1) * sizeof(SortEntry));
  SortEntry *tmp = xrealloc(NULL, (size_t)(n ? n : 1) * sizeof(SortEntry));
  Value v = list, k = keys;
  for (int i = 0; i < n; i++, v = cons_tail(AS_CONS(v))) {
    a[i].value = AS_CONS(v)->head;
    a[i].key = IS_NIL(keys) ? a[i].value : AS_CONS(k)->head;
    if (!IS_NIL(keys)) k = cons_tail(AS_CONS(k));
  }
  vm_work(vm, (uint64_t)n);
  bool ok = true;
  uint64_t work = 0; /* the inline comparisons' work not charged yet */
  /* bottom-up: runs of 1, 2, 4 ... merged pairwise */
  for (int width = 1; ok && width < n; width *= 2)
    for (int lo = 0; ok && lo < n - width; lo += 2 * width) {
      int mid = lo + width, hi = lo + 2 * width < n ? lo + 2 * width : n;
      ok = merge(vm, who, a, tmp, lo, mid, hi, &work);
    }
  if (ok && work) vm_work(vm, work);
  free(tmp);
  if (!ok) {
    free(a);
    return false;
  }
  /* the new list, back to front; its values live on in `list` (rooted by
   * the caller), the cells made so far in a temporary root */
  gc_push_root(vm, NIL_VAL);
  for (int i = n - 1; i >= 0; i--)
    vm->temp_roots[vm->temp_root_count - 1] = OBJ_VAL(obj_cons(vm, a[i].value, vm->temp_roots[vm->temp_root_count - 1]));
  *result = vm->temp_roots[vm->temp_root_count - 1];
  gc_pop_root(vm);
  free(a);
  return true;
}
