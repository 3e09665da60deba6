/* The persistent AVL tree of import "map" (see map.h). */
#include "map.h"

#include <inttypes.h>

#include "memory.h"
#include "order.h"

/* Deepest an AVL tree of at most 2^31 keys can be (1.44 log2 n), with room. */
#define MAP_MAX_HEIGHT 96

/* ---- nodes ---- */

static inline int height_of(const ObjMap *m) { return m ? m->height : 0; }
static inline int size_of(const ObjMap *m) { return m ? m->size : 0; }
static inline Value map_value(ObjMap *m) { return m ? OBJ_VAL(m) : NONE_VAL; }

/* The nodes an insertion or a deletion in a tree of height h may make:
 * at most four at each level (a double rotation), one level more than h. */
static inline size_t update_bytes(const ObjMap *m) { return (size_t)(4 * (height_of(m) + 2)) * sizeof(ObjMap); }

/* A node over subtrees of heights hl and hr and `below` keys together
 * (after gc_reserve): mapNode, told what it would read. */
static inline ObjMap *node_known(VM *vm, Value key, Value value, ObjMap *left, int hl, ObjMap *right, int hr,
                                 int below) {
  ObjMap *node = (ObjMap *)gc_alloc_reserved(vm, sizeof(ObjMap), OBJ_MAP);
  node->height = (int16_t)((hl > hr ? hl : hr) + 1);
  node->tilt = (int8_t)(hl - hr);
  node->size = below + 1;
  node->key = key;
  node->value = value;
  node->left = left;
  node->right = right;
  return node;
}

/* stdlib/map.sim's mapNode: a node over two subtrees (after gc_reserve). */
static ObjMap *node_new(VM *vm, Value key, Value value, ObjMap *left, ObjMap *right) {
  return node_known(vm, key, value, left, height_of(left), right, height_of(right), size_of(left) + size_of(right));
}

/* The heights of m's subtrees, from m alone. */
static inline void child_heights(const ObjMap *m, int *hl, int *hr) {
  int h = m->height - 1;
  *hl = m->tilt >= 0 ? h : h + m->tilt;
  *hr = m->tilt <= 0 ? h : h - m->tilt;
}

static ObjMap *rotate_right(VM *vm, Value k, Value v, ObjMap *l, ObjMap *r) {
  return node_new(vm, l->key, l->value, l->left, node_new(vm, k, v, l->right, r));
}

static ObjMap *rotate_left(VM *vm, Value k, Value v, ObjMap *l, ObjMap *r) {
  return node_new(vm, r->key, r->value, node_new(vm, k, v, l, r->left), r->right);
}

/* mapBalance: a node over subtrees whose heights differ by at most 2,
 * rebalanced by the same rotations as the .sim module's. */
static ObjMap *balance(VM *vm, Value k, Value v, ObjMap *l, ObjMap *r) {
  int hl = height_of(l), hr = height_of(r);
  if (hl > hr + 1) {
    if (height_of(l->left) >= height_of(l->right)) return rotate_right(vm, k, v, l, r);
    return rotate_right(vm, k, v, rotate_left(vm, l->key, l->value, l->left, l->right), r);
  }
  if (hr > hl + 1) {
    if (height_of(r->right) >= height_of(r->left)) return rotate_left(vm, k, v, l, r);
    return rotate_left(vm, k, v, l, rotate_right(vm, r->key, r->value, r->left, r->right));
  }
  return node_new(vm, k, v, l, r);
}

/* ---- keys ---- */

/* compare(k, key): false after the runtime error naming the pair, worded
 * as the .sim module's compare was. */
static inline bool key_order(VM *vm, Value k, Value key, int *order, uint64_t *work) {
  if (IS_INT(k) && IS_INT(key)) {
    *order = (AS_INT(k) > AS_INT(key)) - (AS_INT(k) < AS_INT(key));
    (*work)++;
    return true;
  }
  Value bad_a, bad_b;
  if (order_values(vm, k, key, order, &bad_a, &bad_b, work)) return true;
  return !vm->halted && order_or_error(vm, "compare", k, key, order);
}

/* The node holding k, or NULL (*found false); false after an error. */
static bool find_node(VM *vm, ObjMap *m, Value k, ObjMap **found, uint64_t *work) {
  while (m) {
    int c;
    if (!key_order(vm, k, m->key, &c, work)) return false;
    if (c == 0) break;
    m = c < 0 ? m->left : m->right;
  }
  *found = m;
  return true;
}

/* ---- updates (after gc_reserve(update_bytes(m))) ---- */

/* mapBalance when the subtrees' heights and sizes are known: only a
 * rotation reads the nodes below. */
static inline ObjMap *balance_known(VM *vm, Value k, Value v, ObjMap *l, int hl, ObjMap *r, int hr, int below) {
  if (hl > hr + 1 || hr > hl + 1) return balance(vm, k, v, l, r);
  return node_known(vm, k, v, l, hl, r, hr, below);
}

/* mapInsert; NULL after an error. *added: k was not there. The side not
 * taken is never read (a cache miss a level saved): its height comes from
 * m's tilt, its size from m's. */
static ObjMap *insert(VM *vm, ObjMap *m, Value k, Value v, bool *added, uint64_t *work) {
  if (!m) {
    *added = true;
    return node_known(vm, k, v, NULL, 0, NULL, 0, 0);
  }
  int c, hl, hr;
  if (!key_order(vm, k, m->key, &c, work)) return NULL;
  child_heights(m, &hl, &hr);
  if (c == 0) { /* the new key: 2.0 replaces 2 */
    *added = false;
    return node_known(vm, k, v, m->left, hl, m->right, hr, m->size - 1);
  }
  ObjMap *sub = insert(vm, c < 0 ? m->left : m->right, k, v, added, work);
  if (!sub) return NULL;
  int below = m->size - 1 + (*added ? 1 : 0);
  return c < 0 ? balance_known(vm, m->key, m->value, sub, sub->height, m->right, hr, below)
               : balance_known(vm, m->key, m->value, m->left, hl, sub, sub->height, below);
}

/* mapDeleteMin: m (not NULL) without its least key. */
static ObjMap *delete_min(VM *vm, ObjMap *m) {
  if (!m->left) return m->right;
  return balance(vm, m->key, m->value, delete_min(vm, m->left), m->right);
}

/* mapDelete: *out is m without k, m itself when k is not there; false
 * after an error. */
static bool delete_key(VM *vm, ObjMap *m, Value k, ObjMap **out, uint64_t *work) {
  if (!m) {
    *out = NULL;
    return true;
  }
  int c;
  if (!key_order(vm, k, m->key, &c, work)) return false;
  if (c == 0) {
    if (!m->left) *out = m->right;
    else if (!m->right) *out = m->left;
    else {
      ObjMap *least = m->right;
      while (least->left) least = least->left;
      *out = balance(vm, least->key, least->value, m->left, delete_min(vm, m->right));
    }
    return true;
  }
  ObjMap *sub;
  if (!delete_key(vm, c < 0 ? m->left : m->right, k, &sub, work)) return false;
  if (sub == (c < 0 ? m->left : m->right)) *out = m; /* k was not there: nothing changed */
  else *out = c < 0 ? balance(vm, m->key, m->value, sub, m->right) : balance(vm, m->key, m->value, m->left, sub);
  return true;
}

/* ---- arguments and long loops ---- */

/* The tree of a map argument in *tree (NULL: empty); false after
 * "WHO needs a map, not TYPE". */
static bool map_arg(VM *vm, const char *who, Value v, ObjMap **tree) {
  if (IS_NONE(v)) {
    *tree = NULL;
    return true;
  }
  if (IS_MAP(v)) {
    *tree = AS_MAP(v);
    return true;
  }
  rt_error(vm, "%s needs a map, not %s", who, value_type_name(v));
  return false;
}

/* A loop's pending work: charged every VM_WORK_CHUNK units; true when the
 * run must stop now (vm->halted). */
static inline bool charge_halts(VM *vm, uint64_t *work) {
  if (*work < VM_WORK_CHUNK) return false;
  uint64_t units = *work;
  *work = 0;
  return vm_work_halts(vm, units);
}

/* An in-order walk of a tree with an explicit stack (no recursion): */
typedef struct {
  ObjMap *stack[MAP_MAX_HEIGHT];
  int depth;
  bool backwards; /* greatest key first */
} Walk;

static void walk_down(Walk *w, ObjMap *m) {
  for (; m; m = w->backwards ? m->right : m->left) w->stack[w->depth++] = m;
}

static void walk_start(Walk *w, ObjMap *m, bool backwards) {
  w->depth = 0;
  w->backwards = backwards;
  walk_down(w, m);
}

/* The next node, or NULL at the end. */
static ObjMap *walk_next(Walk *w) {
  if (!w->depth) return NULL;
  ObjMap *m = w->stack[--w->depth];
  walk_down(w, w->backwards ? m->left : m->right);
  return m;
}

/* The map being built by a loop lives in the last temporary root. */
static inline Value *built(VM *vm) { return &vm->temp_roots[vm->temp_root_count - 1]; }

/* *built(vm) with k bound to v (replace: true) or only when k is not
 * there yet (replace: false); false after an error. */
static bool built_insert(VM *vm, Value k, Value v, bool replace, uint64_t *work) {
  ObjMap *m = IS_NONE(*built(vm)) ? NULL : AS_MAP(*built(vm));
  if (!replace) {
    ObjMap *found;
    if (!find_node(vm, m, k, &found, work)) return false;
    if (found) return true;
  }
  gc_reserve(vm, update_bytes(m));
  bool added;
  ObjMap *next = insert(vm, m, k, v, &added, work);
  if (!next) return false;
  *built(vm) = OBJ_VAL(next);
  return true;
}

/* End a loop that built *built(vm): its result, or false (an error, or
 * halted), the temporary root popped either way. */
static bool built_end(VM *vm, bool ok, uint64_t work, Value *result) {
  *result = *built(vm);
  gc_pop_root(vm);
  if (ok && work) vm_work(vm, work);
  return ok;
}

/* ---- the natives ---- */

bool nat_map_insert(VM *vm, Value *args, Value *result) {
  ObjMap *m;
  if (!map_arg(vm, "mapInsert", args[0], &m)) return false;
  uint64_t work = 0;
  gc_reserve(vm, update_bytes(m));
  bool added;
  ObjMap *next = insert(vm, m, args[1], args[2], &added, &work);
  vm_work(vm, work);
  if (!next) return false;
  *result = OBJ_VAL(next);
  return true;
}

/* The node of args[1] in the map args[0] (named `who`), or NULL. */
static bool lookup(VM *vm, const char *who, Value *args, ObjMap **found) {
  ObjMap *m;
  if (!map_arg(vm, who, args[0], &m)) return false;
  uint64_t work = 0;
  bool ok = find_node(vm, m, args[1], found, &work);
  vm_work(vm, work);
  return ok;
}

bool nat_map_lookup(VM *vm, Value *args, Value *result) {
  ObjMap *found;
  if (!lookup(vm, "mapLookup", args, &found)) return false;
  *result = found ? OBJ_VAL(obj_some(vm, found->value)) : NONE_VAL;
  return true;
}

bool nat_map_member(VM *vm, Value *args, Value *result) {
  ObjMap *found;
  if (!lookup(vm, "mapMember", args, &found)) return false;
  *result = BOOL_VAL(found != NULL);
  return true;
}

bool nat_map_find(VM *vm, Value *args, Value *result) {
  ObjMap *found;
  if (!lookup(vm, "mapFindWithDefault", args, &found)) return false;
  *result = found ? found->value : args[2];
  return true;
}

bool nat_map_delete(VM *vm, Value *args, Value *result) {
  ObjMap *m, *next;
  if (!map_arg(vm, "mapDelete", args[0], &m)) return false;
  uint64_t work = 0;
  gc_reserve(vm, update_bytes(m));
  bool ok = delete_key(vm, m, args[1], &next, &work);
  vm_work(vm, work);
  if (ok) *result = map_value(next);
  return ok;
}

bool nat_map_size(VM *vm, Value *args, Value *result) {
  ObjMap *m;
  if (!map_arg(vm, "mapSize", args[0], &m)) return false;
  *result = INT_VAL(size_of(m));
  return true;
}

bool nat_map_height(VM *vm, Value *args, Value *result) {
  ObjMap *m;
  if (!map_arg(vm, "mapHeight", args[0], &m)) return false;
  *result = INT_VAL(height_of(m));
  return true;
}

/* some([key, value]) of the least (greatest) key, or none. */
static bool extreme(VM *vm, const char *who, Value *args, bool greatest, Value *result) {
  ObjMap *m;
  if (!map_arg(vm, who, args[0], &m)) return false;
  if (!m) {
    *result = NONE_VAL;
    return true;
  }
  uint64_t steps = 0;
  for (; greatest ? m->right : m->left; steps++) m = greatest ? m->right : m->left;
  vm_work(vm, steps);
  gc_reserve(vm, 2 * sizeof(ObjCons) + sizeof(ObjSome));
  ObjCons *last = (ObjCons *)gc_alloc_reserved(vm, sizeof(ObjCons), OBJ_CONS);
  last->head = m->value;
  last->tail = NULL;
  ObjCons *pair = (ObjCons *)gc_alloc_reserved(vm, sizeof(ObjCons), OBJ_CONS);
  pair->head = m->key;
  pair->tail = last;
  ObjSome *some = (ObjSome *)gc_alloc_reserved(vm, sizeof(ObjSome), OBJ_SOME);
  some->value = OBJ_VAL(pair);
  *result = OBJ_VAL(some);
  return true;
}

bool nat_map_min(VM *vm, Value *args, Value *result) { return extreme(vm, "mapMin", args, false, result); }
bool nat_map_max(VM *vm, Value *args, Value *result) { return extreme(vm, "mapMax", args, true, result); }

/* What a list of a map holds at each key. */
typedef enum { LIST_KEYS, LIST_VALUES, LIST_PAIRS } ListOf;

/* The list, built back to front (greatest key first) in a temporary root. */
static bool map_list(VM *vm, const char *who, Value map, ListOf what, Value *result) {
  ObjMap *m;
  if (!map_arg(vm, who, map, &m)) return false;
  gc_push_root(vm, NIL_VAL);
  Walk w;
  walk_start(&w, m, true);
  uint64_t work = 0;
  bool ok = true;
  for (ObjMap *node; (node = walk_next(&w));) {
    work++;
    if (charge_halts(vm, &work)) {
      ok = false;
      break;
    }
    gc_reserve(vm, 3 * sizeof(ObjCons)); /* node is in `map`, rooted by the caller */
    Value item = what == LIST_KEYS ? node->key : node->value;
    if (what == LIST_PAIRS) {
      ObjCons *last = (ObjCons *)gc_alloc_reserved(vm, sizeof(ObjCons), OBJ_CONS);
      last->head = node->value;
      last->tail = NULL;
      ObjCons *pair = (ObjCons *)gc_alloc_reserved(vm, sizeof(ObjCons), OBJ_CONS);
      pair->head = node->key;
      pair->tail = last;
      item = OBJ_VAL(pair);
    }
    ObjCons *cell = (ObjCons *)gc_alloc_reserved(vm, sizeof(ObjCons), OBJ_CONS);
    cell->head = item;
    cell->tail = IS_NIL(*built(vm)) ? NULL : AS_CONS(*built(vm));
    *built(vm) = OBJ_VAL(cell);
  }
  return built_end(vm, ok, work, result);
}

bool nat_map_keys(VM *vm, Value *args, Value *result) { return map_list(vm, "mapKeys", args[0], LIST_KEYS, result); }
bool nat_map_values(VM *vm, Value *args, Value *result) {
  return map_list(vm, "mapValues", args[0], LIST_VALUES, result);
}
bool nat_map_to_list(VM *vm, Value *args, Value *result) {
  return map_list(vm, "mapToList", args[0], LIST_PAIRS, result);
}

bool nat_map_from_list(VM *vm, Value *args, Value *result) {
  if (!IS_LIST(args[0])) {
    rt_error(vm, "mapFromList needs a list of [key, value] pairs, not %s", value_type_name(args[0]));
    return false;
  }
  gc_push_root(vm, NONE_VAL);
  uint64_t work = 0;
  bool ok = true;
  for (ObjCons *c = list_cell(args[0]); c && ok; c = c->tail) {
    Value p = c->head;
    if (!IS_CONS(p) || !AS_CONS(p)->tail) {
      rt_error(vm, "mapFromList needs [key, value] pairs, not %s", value_type_name(p));
      ok = false;
      break;
    }
    ok = built_insert(vm, AS_CONS(p)->head, AS_CONS(p)->tail->head, true, &work) && !charge_halts(vm, &work);
  }
  return built_end(vm, ok, work, result);
}

bool nat_map_from_keys(VM *vm, Value *args, Value *result) {
  if (!IS_LIST(args[0])) {
    rt_error(vm, "setFromList needs a list, not %s", value_type_name(args[0]));
    return false;
  }
  gc_push_root(vm, NONE_VAL);
  uint64_t work = 0;
  bool ok = true;
  for (ObjCons *c = list_cell(args[0]); c && ok; c = c->tail)
    ok = built_insert(vm, c->head, args[1], true, &work) && !charge_halts(vm, &work);
  return built_end(vm, ok, work, result);
}

/* m's shape with the values of *values in key order (after gc_reserve of
 * every node). */
static ObjMap *with_values(VM *vm, ObjMap *m, ObjCons **values) {
  if (!m) return NULL;
  ObjMap *left = with_values(vm, m->left, values);
  Value v = (*values)->head;
  *values = (*values)->tail;
  return node_new(vm, m->key, v, left, with_values(vm, m->right, values));
}

bool nat_map_with_values(VM *vm, Value *args, Value *result) {
  ObjMap *m;
  if (!map_arg(vm, "mapMap", args[0], &m)) return false;
  int64_t n = 0;
  for (ObjCons *c = list_cell(args[1]); c; c = c->tail) n++;
  if (!IS_LIST(args[1]) || n != size_of(m)) {
    rt_error(vm, "mapMap: %" PRId64 " values for %d keys", n, size_of(m));
    return false;
  }
  gc_reserve(vm, (size_t)n * sizeof(ObjMap));
  ObjCons *values = list_cell(args[1]);
  *result = map_value(with_values(vm, m, &values));
  vm_work(vm, 2 * (uint64_t)n);
  return true;
}

bool nat_map_union(VM *vm, Value *args, Value *result) {
  ObjMap *a, *b;
  if (!map_arg(vm, "mapUnion", args[0], &a) || !map_arg(vm, "mapUnion", args[1], &b)) return false;
  /* as the .sim module did: the smaller one's keys into the larger one,
   * in key order, a's value winning */
  bool into_a = size_of(a) >= size_of(b);
  gc_push_root(vm, into_a ? args[0] : args[1]);
  Walk w;
  walk_start(&w, into_a ? b : a, false);
  uint64_t work = 0;
  bool ok = true;
  for (ObjMap *node; ok && (node = walk_next(&w));)
    ok = built_insert(vm, node->key, node->value, !into_a, &work) && !charge_halts(vm, &work);
  return built_end(vm, ok, work, result);
}

bool nat_map_intersection(VM *vm, Value *args, Value *result) {
  ObjMap *a, *b;
  if (!map_arg(vm, "setIntersection", args[0], &a) || !map_arg(vm, "setIntersection", args[1], &b)) return false;
  gc_push_root(vm, NONE_VAL);
  Walk w;
  walk_start(&w, a, false);
  uint64_t work = 0;
  bool ok = true;
  for (ObjMap *node; ok && (node = walk_next(&w));) {
    ObjMap *found;
    ok = find_node(vm, b, node->key, &found, &work) && (!found || built_insert(vm, node->key, BOOL_VAL(true), true, &work)) &&
         !charge_halts(vm, &work);
  }
  return built_end(vm, ok, work, result);
}

bool nat_map_difference(VM *vm, Value *args, Value *result) {
  ObjMap *a, *b;
  if (!map_arg(vm, "setDifference", args[0], &a) || !map_arg(vm, "setDifference", args[1], &b)) return false;
  gc_push_root(vm, args[0]);
  Walk w;
  walk_start(&w, b, false);
  uint64_t work = 0;
  bool ok = true;
  for (ObjMap *node; ok && (node = walk_next(&w));) {
    ObjMap *m = IS_NONE(*built(vm)) ? NULL : AS_MAP(*built(vm)), *next;
    gc_reserve(vm, update_bytes(m));
    ok = delete_key(vm, m, node->key, &next, &work) && !charge_halts(vm, &work);
    if (ok) *built(vm) = map_value(next);
  }
  return built_end(vm, ok, work, result);
}
