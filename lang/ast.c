#include "ast.h"

#include "../base/alloc.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chain of large blocks; allocation is a pointer bump. */
typedef struct Block {
  struct Block *next;
  size_t used;
  size_t size;
  _Alignas(16) unsigned char data[];  /* allocations 8-aligned within */
} Block;

struct Arena {
  Block *blocks;
  size_t size;        /* bytes of all blocks */
};

#define BLOCK_SIZE (64 * 1024)

Arena *arena_new(void) {
  Arena *arena = mem_realloc(NULL, sizeof(Arena));
  arena->blocks = NULL;
  arena->size = 0;
  return arena;
}

void *arena_alloc(Arena *arena, size_t size) {
  size = (size + 7) & ~(size_t)7;
  Block *block = arena->blocks;
  if (!block || block->used + size > block->size) {
    size_t capacity = size > BLOCK_SIZE ? size : BLOCK_SIZE;
    block = mem_realloc(NULL, sizeof(Block) + capacity);
    arena->size += sizeof(Block) + capacity;
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

size_t arena_size(const Arena *arena) { return arena ? arena->size : 0; }

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
    int capacity = list->capacity ? list->capacity * 2 : 1; /* most lists hold one or two */
    void **items = arena_alloc(arena, (size_t)capacity * sizeof(void *));
    if (list->count) memcpy(items, list->items, (size_t)list->count * sizeof(void *));
    list->items = items;
    list->capacity = capacity;
  }
  list->items[list->count++] = item;
}

/* The bytes of an Expr of `kind`: its header and the member of `as` it
 * uses, no more (a literal takes 24 bytes, not the 48 of the largest), so a
 * dense script's tree stays small. Nothing copies a whole Expr. */
static size_t expr_size(ExprKind kind) {
  const Expr *e = NULL;
  size_t head = offsetof(Expr, as), body = sizeof e->as;
  switch (kind) {
    case EXPR_UNIT: case EXPR_NONE: body = 0; break;
    case EXPR_INT: case EXPR_DURATION: body = sizeof e->as.integer; break;
    case EXPR_FLOAT: body = sizeof e->as.number; break;
    case EXPR_BOOL: body = sizeof e->as.boolean; break;
    case EXPR_STRING: body = sizeof e->as.string; break;
    case EXPR_NAME: body = sizeof e->as.name; break;
    case EXPR_LIST: case EXPR_INTERP: body = sizeof e->as.items; break;
    case EXPR_RECORD: body = sizeof e->as.record; break;
    case EXPR_CALL: body = sizeof e->as.call; break;
    case EXPR_FIELD: body = sizeof e->as.field; break;
    case EXPR_INDEX: body = sizeof e->as.index; break;
    case EXPR_UNARY: case EXPR_BINARY: body = sizeof e->as.binary; break;
    case EXPR_AND: case EXPR_OR: case EXPR_THEN: case EXPR_BIND: body = sizeof e->as.then; break;
    case EXPR_IF: body = sizeof e->as.if_; break;
    case EXPR_LET: body = sizeof e->as.let; break;
    case EXPR_LAMBDA: body = sizeof e->as.lambda; break;
    case EXPR_BLOCK: body = sizeof e->as.block; break;
    case EXPR_RETURN: body = sizeof e->as.ret; break;
    case EXPR_MATCH: body = sizeof e->as.match; break;
    case EXPR_UPDATE: body = sizeof e->as.update; break;
  }
  return head + body;
}

Expr *ast_expr(Arena *arena, ExprKind kind, Loc loc) {
  Expr *expr = arena_alloc(arena, expr_size(kind));
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

MatchArm *ast_arm(Arena *arena, Loc loc, Expr *pattern, Expr *guard, Expr *body) {
  MatchArm *arm = arena_alloc(arena, sizeof(MatchArm));
  arm->loc = loc;
  arm->pattern = pattern;
  arm->guard = guard;
  arm->body = body;
  return arm;
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
