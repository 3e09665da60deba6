/* Ordered maps in C: the tree behind import "map" (stdlib/map.sim wraps
 * these natives in its API names; docs/LIBRARY.md).
 *
 * A map is `none` (empty) or an ObjMap node (vm/object.h) of a persistent
 * AVL tree, keys in the order of vm/order.h. Every update copies the
 * O(log n) nodes on its path and shares the rest, so the old map stays as
 * it was. Why an AVL tree and not a wider node (a B-tree's, which would
 * make fewer and larger allocations): the map shows and compares (==,
 * compare) as the tree of records the .sim module built, and the tests and
 * programs that print or compare maps must see the same text and the same
 * answers; these functions are that module's algorithms step for step
 * (the same rotations, the same key kept on a replace), so every map has
 * the shape it had. The nodes are made with gc_reserve and
 * gc_alloc_reserved: a path of new nodes needs no roots while it is built.
 *
 * Each native reads its arguments from args (rooted on the thread's
 * stack), stores *result and returns true, or returns false after
 * rt_error (a key of another kind: "compare cannot order ...", as the
 * .sim module's compare said; a value that is not a map: "mapInsert needs
 * a map, not int") or with vm->halted set (a long loop stopped for
 * --max-work, --max-heap or a signal). Work is charged per comparison and
 * per node or cell visited. */
#ifndef SIMVM_MAP_H
#define SIMVM_MAP_H

#include "state.h"

bool nat_map_insert(VM *vm, Value *args, Value *result);      /* (m, k, v): m with k bound to v     */
bool nat_map_lookup(VM *vm, Value *args, Value *result);      /* (m, k): some(v) or none            */
bool nat_map_member(VM *vm, Value *args, Value *result);      /* (m, k): whether k is bound         */
bool nat_map_find(VM *vm, Value *args, Value *result);        /* (m, k, d): v, or d                 */
bool nat_map_delete(VM *vm, Value *args, Value *result);      /* (m, k): m without k (m if absent)  */
bool nat_map_size(VM *vm, Value *args, Value *result);        /* (m): keys, O(1)                    */
bool nat_map_height(VM *vm, Value *args, Value *result);      /* (m): the tree's height, O(1)       */
bool nat_map_min(VM *vm, Value *args, Value *result);         /* (m): some([k, v]) of the least key */
bool nat_map_max(VM *vm, Value *args, Value *result);         /* (m): ... of the greatest           */
bool nat_map_keys(VM *vm, Value *args, Value *result);        /* (m): the keys in order             */
bool nat_map_values(VM *vm, Value *args, Value *result);      /* (m): the values in key order       */
bool nat_map_to_list(VM *vm, Value *args, Value *result);     /* (m): [[k, v], ...] in key order    */
bool nat_map_from_list(VM *vm, Value *args, Value *result);   /* (pairs): inserted in list order    */
bool nat_map_from_keys(VM *vm, Value *args, Value *result);   /* (keys, v): each key bound to v     */
bool nat_map_with_values(VM *vm, Value *args, Value *result); /* (m, vs): m's shape, vs in key order */
bool nat_map_union(VM *vm, Value *args, Value *result);       /* (a, b): a's value where both       */
bool nat_map_intersection(VM *vm, Value *args, Value *result); /* (a, b): a's keys in b, bound to true */
bool nat_map_difference(VM *vm, Value *args, Value *result);  /* (a, b): a without b's keys         */

#endif
