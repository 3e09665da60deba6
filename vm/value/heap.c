/* Size-class blocks and large objects (see heap.h). */
#include "heap.h"

#include <stdlib.h>

#include "../../base/alloc.h"
#include "object.h"

#define MAX_SPARE 64 /* blocks kept for reuse beyond that are freed */

struct HeapBlock {
  HeapBlock *next;
  char *top;        /* end of the slots handed out (the bump point of a class's last block) */
  char *end;        /* end of the last whole slot: its class's limit    */
  int slot;         /* bytes per slot                                   */
  _Alignas(16) char data[]; /* objects hold int64s and doubles */
};

struct HeapLarge {
  HeapLarge *next;
  size_t size;
  long double align; /* the object after this header stays max-aligned */
};


#define BLOCK_DATA (HEAP_BLOCK_BYTES - (int)sizeof(HeapBlock))

_Static_assert(sizeof(Obj) == HEAP_HEADER, "a free slot's header is an object header");

static Obj *large_obj(HeapLarge *large) { return (Obj *)(large + 1); }

void heap_init(Heap *heap) {
  *heap = (Heap){0};
}

static HeapBlock *take_block(Heap *heap) {
  HeapBlock *block = heap->spare;
  if (block) {
    heap->spare = block->next;
    heap->spare_count--;
  } else {
    block = xrealloc(NULL, HEAP_BLOCK_BYTES);
  }
  block->next = NULL;
  return block;
}

static void spare_block(Heap *heap, HeapBlock *block) {
  if (heap->spare_count >= MAX_SPARE) {
    free(block);
    return;
  }
  block->next = heap->spare;
  heap->spare = block;
  heap->spare_count++;
}

/* The class's bump point, written back into its last block. */
static void sync_top(HeapClass *c) {
  if (c->last) c->last->top = c->bump;
}

static Obj *new_block(Heap *heap, int index, size_t slot) {
  HeapClass *c = &heap->classes[index];
  sync_top(c);
  HeapBlock *block = take_block(heap);
  block->slot = (int)slot;
  if (c->last) c->last->next = block;
  else c->first = block;
  c->last = block;
  heap->used |= UINT64_C(1) << index;
  c->bump = block->data + slot;
  c->limit = block->end = block->data + BLOCK_DATA - (BLOCK_DATA % slot);
  return (Obj *)block->data;
}

static Obj *alloc_large(Heap *heap, size_t size) {
  HeapLarge *large = xrealloc(NULL, sizeof(HeapLarge) + size);
  large->size = size;
  large->next = heap->large;
  heap->large = large;
  return large_obj(large);
}

Obj *heap_alloc_slow(Heap *heap, size_t size) {
  if (size > HEAP_SMALL_MAX) return alloc_large(heap, size);
  int index = heap_class_of(size);
  return new_block(heap, index, (size_t)(index + 1) * HEAP_GRANULE);
}

void heap_sweep(Heap *heap, HeapVisit visit, void *ctx) {
  for (int index = 0; index < HEAP_CLASSES; index++) {
    if (!(heap->used >> index & 1)) continue;
    HeapClass *c = &heap->classes[index];
    sync_top(c);
    c->free = NULL;
    HeapBlock **link = &c->first, *previous = NULL;
    while (*link) {
      HeapBlock *block = *link;
      HeapFree *dead = NULL;
      int live = 0;
      for (char *p = block->data; p < block->top; p += block->slot) {
        Obj *obj = (Obj *)p;
        if (obj->type == OBJ_FREE) {
          ((HeapFree *)obj)->next = dead;
          dead = (HeapFree *)obj;
        } else if (visit(ctx, obj)) {
          obj->type = OBJ_FREE;
          ((HeapFree *)obj)->next = dead;
          dead = (HeapFree *)obj;
        } else {
          live++;
        }
      }
      if (live == 0 && block != c->last) {
        *link = block->next; /* the whole block is free: any class may use it */
        spare_block(heap, block);
        continue;
      }
      /* chain this block's dead slots in front of the class's free list */
      for (HeapFree *slot = dead, *next; slot; slot = next) {
        next = slot->next;
        slot->next = c->free;
        c->free = slot;
      }
      previous = block;
      link = &block->next;
    }
    c->last = previous; /* never spared: the bump goes on in it */
  }
  for (HeapLarge **link = &heap->large; *link;) {
    HeapLarge *large = *link;
    if (visit(ctx, large_obj(large))) {
      *link = large->next;
      free(large);
    } else {
      link = &large->next;
    }
  }
}

static void each_block(HeapBlock *block, HeapVisit visit, void *ctx) {
  for (; block; block = block->next)
    for (char *p = block->data; p < block->top; p += block->slot)
      if (((Obj *)p)->type != OBJ_FREE) visit(ctx, (Obj *)p);
}

static void each_large(HeapLarge *large, HeapVisit visit, void *ctx) {
  for (; large; large = large->next) visit(ctx, large_obj(large));
}

void heap_each(Heap *heap, bool young_only, HeapVisit visit, void *ctx) {
  for (uint64_t used = heap->used; used; used &= used - 1) {
    HeapClass *c = &heap->classes[__builtin_ctzll(used)];
    sync_top(c);
    each_block(c->first, visit, ctx);
  }
  each_large(heap->large, visit, ctx);
  if (young_only) return;
  each_block(heap->old_blocks, visit, ctx);
  each_large(heap->old_large, visit, ctx);
}

/* Detach every young block and large object, leaving the classes empty;
 * `keep` (or, when NULL, the spare list) takes the blocks. */
static void detach_young(Heap *heap, HeapBlock **keep) {
  for (uint64_t used = heap->used; used; used &= used - 1) {
    HeapClass *c = &heap->classes[__builtin_ctzll(used)];
    sync_top(c);
    if (keep) {
      c->last->next = *keep;
      *keep = c->first;
    } else {
      for (HeapBlock *block = c->first, *next; block; block = next) {
        next = block->next;
        spare_block(heap, block);
      }
    }
    *c = (HeapClass){0};
  }
  heap->used = 0;
}

void heap_promote(Heap *heap) {
  /* the slots still free in these blocks are given up: the old generation never allocates */
  for (int index = 0; index < HEAP_CLASSES; index++) heap->classes[index].free = NULL;
  detach_young(heap, &heap->old_blocks);
  while (heap->large) {
    HeapLarge *large = heap->large;
    heap->large = large->next;
    large->next = heap->old_large;
    heap->old_large = large;
  }
}

void heap_reset_young(Heap *heap) {
  /* each class keeps its first block, emptied: the next run, most often
   * the same program, bumps into it again without taking a block */
  for (uint64_t used = heap->used; used; used &= used - 1) {
    HeapClass *c = &heap->classes[__builtin_ctzll(used)];
    for (HeapBlock *block = c->first->next, *next; block; block = next) {
      next = block->next;
      spare_block(heap, block);
    }
    HeapBlock *first = c->first;
    first->next = NULL;
    first->top = first->data;
    c->last = first;
    c->bump = first->data;
    c->limit = first->end; /* the last block's limit was another's */
    c->free = NULL;
  }
  while (heap->large) {
    HeapLarge *large = heap->large;
    heap->large = large->next;
    free(large);
  }
}

static void free_blocks(HeapBlock *block) {
  while (block) {
    HeapBlock *next = block->next;
    free(block);
    block = next;
  }
}

static void free_large(HeapLarge *large) {
  while (large) {
    HeapLarge *next = large->next;
    free(large);
    large = next;
  }
}

void heap_free(Heap *heap) {
  for (int index = 0; index < HEAP_CLASSES; index++) free_blocks(heap->classes[index].first);
  free_large(heap->large);
  free_blocks(heap->old_blocks);
  free_large(heap->old_large);
  free_blocks(heap->spare);
  heap_init(heap);
}
