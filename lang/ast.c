#include "ast.h"

#include "../base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chain of large blocks; allocation is a pointer bump. */
typedef struct Block {
  struct Block *next;
  size_t used;
  size_t size;
  _Alignas(16) unsigned char data[];
} Block;

struct Arena {
  Block *blocks;
};

#define BLOCK_SIZE (64 * 1024)

Arena *arena_new(void) {
  Arena *arena = mem_realloc(NULL, sizeof(Arena));
  arena->blocks = NULL;
  return arena;
}

void *arena_alloc(Arena *arena, size_t size) {
  size = (size + 15) & ~(size_t)15;
  Block *block = arena->blocks;
  if (!block || block->used + size > block->size) {
    size_t capacity = size > BLOCK_SIZE ? size : BLOCK_SIZE;
    block = mem_realloc(NULL, sizeof(Block) + capacity);
    block->used = 0;
    block->size = capacity;
    block->next = arena->blocks;
    arena->blocks = block;
  }
  void *p = block->data + block->used;
  block->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *arena, const char *text, size_t length) {
  char *copy = arena_alloc(arena, length + 1);
  memcpy(copy, text, length);
  copy[length] = '\0';
  return copy;
}

void arena_free(Arena *arena) {
  if (!arena) return;
  Block *block = arena->blocks;
  while (block) {
    Block *next = block->next;
    free(block);
    block = next;
  }
  free(arena);
}

void node_list_push(Arena *arena, NodeList *list, void *item) {
  if (list->count == list->capacity) {
    int capacity = list->capacity ? list->capacity * 2 : 4;
    void **items = arena_alloc(arena, (size_t)capacity * sizeof(void *));
    if (list->count) memcpy(items, list->items, (size_t)list->count * sizeof(void *));
    list->items = items;
    list->capacity = capacity;
  }
  list->items[list->count++] = item;
}

Expr *ast_expr(Arena *arena, ExprKind kind, Loc loc) {
  Expr *expr = arena_alloc(arena, sizeof(Expr));
  expr->kind = kind;
  expr->loc = loc;
  return expr;
}

Stmt *ast_stmt(Arena *arena, StmtKind kind, Loc loc, const char *name, Expr *expr) {
  Stmt *stmt = arena_alloc(arena, sizeof(Stmt));
  stmt->kind = kind;
  stmt->loc = loc;
  stmt->name = name;
  stmt->expr = expr;
  return stmt;
}

Decl *ast_decl(Arena *arena, DeclKind kind, Loc loc, const char *name, Expr *expr) {
  Decl *decl = arena_alloc(arena, sizeof(Decl));
  decl->kind = kind;
  decl->loc = loc;
  decl->name = name;
  decl->expr = expr;
  return decl;
}

void ast_free(Module *module) {
  arena_free(module->arena);
  module->arena = NULL;
  module->decls.items = NULL;
  module->decls.count = 0;
}
