/* Where GC objects live: size-class blocks for small objects, malloc for
 * large ones, in two generations (see memory.h for the collector and the
 * generations' invariant).
 *
 * Every small object lives in a block of one size class (8-byte steps up
 * to HEAP_SMALL_MAX bytes). A new object is taken from its class's free
 * list (the slots the last sweep found dead) or, when that is empty, by a
 * pointer bump in the class's newest block; all blocks have one size, so a
 * block emptied by a sweep or a reset serves any class next. Objects never
 * move. The heap does not interpret objects: the collector marks them and
 * tells the sweep which are dead, and frees what they own itself. */
#ifndef SIMVM_HEAP_H
#define SIMVM_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Obj Obj;

#define HEAP_GRANULE 8                         /* bytes: slot sizes step by it  */
#define HEAP_SMALL_MAX 512                     /* bytes: larger objects are malloc'd */
#define HEAP_CLASSES (HEAP_SMALL_MAX / HEAP_GRANULE)
#define HEAP_BLOCK_BYTES (32 * 1024)

typedef struct HeapBlock HeapBlock;
typedef struct HeapLarge HeapLarge;
typedef struct HeapFree HeapFree;

#define HEAP_HEADER 8 /* bytes: sizeof(Obj), checked in heap.c */

/* A dead slot on a class's free list: an object header of type OBJ_FREE,
 * then the link. */
struct HeapFree {
  _Alignas(8) unsigned char header[HEAP_HEADER];
  HeapFree *next;
};

typedef struct {
  HeapBlock *first, *last;  /* young blocks, oldest first; `last` is bumped */
  char *bump, *limit;       /* free space of `last`                        */
  HeapFree *free;           /* dead slots found by the last sweep          */
} HeapClass;

typedef struct {
  HeapClass classes[HEAP_CLASSES];
  uint64_t used;            /* bit c: class c has young blocks             */
  HeapLarge *large;         /* young large objects                         */
  HeapBlock *old_blocks;    /* the old generation: never swept             */
  HeapLarge *old_large;
  HeapBlock *spare;         /* empty blocks, kept for reuse                */
  int spare_count;
} Heap;

void heap_init(Heap *heap);

/* The size class of a small object of `size` bytes. */
static inline int heap_class_of(size_t size) { return (int)((size + HEAP_GRANULE - 1) / HEAP_GRANULE) - 1; }

/* heap_alloc's way out of line: a new block, or a large object. */
Obj *heap_alloc_slow(Heap *heap, size_t size);

/* Storage for a young object of `size` bytes (at least 16), 8-aligned and
 * uninitialised. Never NULL: out of memory exits (xrealloc). Inline: a
 * dead slot of its class, else a pointer bump. */
static inline Obj *heap_alloc(Heap *heap, size_t size) {
  if (size <= HEAP_SMALL_MAX) {
    HeapClass *c = &heap->classes[heap_class_of(size)];
    HeapFree *dead = c->free;
    if (dead) {
      c->free = dead->next;
      return (Obj *)dead;
    }
    size_t slot = (size + HEAP_GRANULE - 1) & ~(size_t)(HEAP_GRANULE - 1);
    if (c->bump < c->limit) {
      Obj *obj = (Obj *)c->bump;
      c->bump += slot;
      return obj;
    }
  }
  return heap_alloc_slow(heap, size);
}

/* Called by heap_sweep for each object it visits: return true when the
 * object is dead (the callback finalises it; the heap takes the storage). */
typedef bool (*HeapVisit)(void *ctx, Obj *obj);

/* Visit every young object; dead ones become free slots (a block left with
 * no live object becomes spare). */
void heap_sweep(Heap *heap, HeapVisit visit, void *ctx);

/* Visit every young object (young_only) or every object, in no particular
 * order; `visit`'s result is ignored. For promotion, resets and shutdown. */
void heap_each(Heap *heap, bool young_only, HeapVisit visit, void *ctx);

/* Make every young object old, for good. */
void heap_promote(Heap *heap);

/* Forget every young object at once, without visiting them: each class
 * keeps one empty block, the others become spare. The caller has released
 * what they own. */
void heap_reset_young(Heap *heap);

/* Free all storage (after heap_each has finalised the objects). */
void heap_free(Heap *heap);

#endif
