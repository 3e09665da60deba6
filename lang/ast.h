/* The abstract syntax tree. Every node carries its line and column; nodes
 * are allocated from the module's arena and freed together with it. */
#ifndef SIMVM_AST_H
#define SIMVM_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  int line;   /* 1-based */
  int col;    /* 1-based, in bytes */
} Loc;

typedef struct Expr Expr;
typedef struct Stmt Stmt;

/* A growable list of node pointers (arena-allocated). */
typedef struct {
  void **items;
  int count;
  int capacity;
} NodeList;

typedef enum {
  EXPR_INT, EXPR_FLOAT, EXPR_DURATION, EXPR_STRING, EXPR_BOOL, EXPR_UNIT, EXPR_NONE,
  EXPR_NAME,     /* a variable                                    */
  EXPR_LIST,     /* [a, b]                                        */
  EXPR_RECORD,   /* #{x: a, y: b}                                 */
  EXPR_CALL,     /* f(a, b)                                       */
  EXPR_FIELD,    /* r.x                                           */
  EXPR_INDEX,    /* xs[i]                                         */
  EXPR_UNARY,    /* -a  !a                                        */
  EXPR_BINARY,   /* a + b ... (op is the token)                   */
  EXPR_AND,      /* a && b (short-circuit)                        */
  EXPR_OR,       /* a || b                                        */
  EXPR_IF,       /* if c then a else b                            */
  EXPR_LET,      /* let x = a in b                                */
  EXPR_LAMBDA,   /* fn(x) => e  |  fn(x) { ... }                  */
  EXPR_BLOCK,    /* { stmts }: an action                          */
  EXPR_RETURN,   /* return e: the action that yields e            */
  EXPR_THEN,     /* a >> b                                        */
  EXPR_BIND,     /* a >>= f                                       */
  EXPR_MATCH,    /* match e { pattern => e ... }                  */
  EXPR_UPDATE,   /* #{r | f: e, +g: e}: a copy of record r         */
  EXPR_INTERP    /* "a{x}b": items the parts, strings and the rest */
} ExprKind;

/* Binary operator codes for EXPR_BINARY / EXPR_UNARY. */
typedef enum {
  BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_MOD, BIN_EQ, BIN_NE, BIN_LT, BIN_LE, BIN_GT, BIN_GE,
  BIN_CONCAT, UN_NEG, UN_NOT,
  BIN_CONS       /* x :: xs: cons(x, xs), and the head-and-rest pattern */
} Operator;

/* One arm of a match: `pattern [if guard] => body`. The pattern is an
 * expression read as a pattern (lang/pattern.h). */
typedef struct {
  Loc loc;
  Expr *pattern;
  Expr *guard;          /* NULL: none */
  Expr *body;
} MatchArm;

/* One field of a record update: `name: value`, or with `add` `+name: value`
 * (the field may be new). */
typedef struct {
  Loc loc;
  const char *name;
  Expr *value;
  bool add;
} FieldUpdate;

/* Allocated with only the member of `as` its kind uses (ast_expr): read
 * and write only that one. */
struct Expr {
  ExprKind kind;
  Loc loc;
  union {
    int64_t integer;                 /* INT, DURATION (nanoseconds)   */
    double number;                   /* FLOAT                         */
    bool boolean;                    /* BOOL                          */
    struct { char *chars; int length; } string;  /* STRING          */
    const char *name;                /* NAME                          */
    NodeList items;                  /* LIST, INTERP: Expr*           */
    struct { NodeList names; NodeList values; } record;  /* names: char* */
    struct { Expr *callee; NodeList args; } call;
    struct { Expr *object; const char *name; } field;
    struct { Expr *object; Expr *index; } index;
    struct { Operator op; Expr *left; Expr *right; } binary;  /* UNARY: left */
    struct { Expr *cond; Expr *then; Expr *otherwise; } if_;
    struct { const char *name; Loc name_loc; Expr *value; Expr *body; Expr *pattern; } let;  /* pattern: NULL for a name */
    struct { NodeList params; Expr *body; const char *name; } lambda;  /* params: char* */
    NodeList block;                  /* Stmt*                         */
    Expr *ret;                       /* RETURN                        */
    struct { Expr *left; Expr *right; } then;  /* THEN and BIND       */
    struct { Expr *subject; NodeList arms; } match;  /* arms: MatchArm* */
    struct { Expr *record; NodeList fields; } update;  /* fields: FieldUpdate* */
  } as;
};

typedef enum {
  STMT_BIND,     /* x <- e */
  STMT_LET,      /* let x = e */
  STMT_EXPR,     /* e (an action to run) */
  STMT_FN        /* fn name(params) = e | fn name(params) { ... }: expr an EXPR_LAMBDA */
} StmtKind;

struct Stmt {
  StmtKind kind;
  Loc loc;
  const char *name;   /* BIND, LET: the name bound, or NULL with a pattern; FN: the function's */
  Expr *expr;
  Expr *pattern;      /* BIND, LET: what `pattern <- e` or `let pattern = e` destructures */
};

typedef enum {
  DECL_FN,       /* fn name(params) = expr  |  fn name(params) { ... } */
  DECL_VALUE,    /* name = expr                                        */
  DECL_IMPORT    /* import "path"                                      */
} DeclKind;

typedef struct {
  DeclKind kind;
  Loc loc;
  const char *name;     /* FN, VALUE; the path for IMPORT */
  Expr *expr;           /* VALUE: the value; FN: an EXPR_LAMBDA */
} Decl;

/* One parsed file. */
typedef struct Arena Arena;
typedef struct {
  NodeList decls;       /* Decl* */
  Arena *arena;
} Module;

/* Arena allocation: zeroed memory freed all at once by ast_free(). */
Arena *arena_new(void);
void *arena_alloc(Arena *arena, size_t size);
char *arena_strndup(Arena *arena, const char *text, size_t length);
void arena_free(Arena *arena);
/* Bytes the arena holds (its blocks). */
size_t arena_size(const Arena *arena);

void node_list_push(Arena *arena, NodeList *list, void *item);

Expr *ast_expr(Arena *arena, ExprKind kind, Loc loc);
Stmt *ast_stmt(Arena *arena, StmtKind kind, Loc loc, const char *name, Expr *expr);
MatchArm *ast_arm(Arena *arena, Loc loc, Expr *pattern, Expr *guard, Expr *body);
Decl *ast_decl(Arena *arena, DeclKind kind, Loc loc, const char *name, Expr *expr);

/* Free a module and all its nodes. */
void ast_free(Module *module);

#endif
