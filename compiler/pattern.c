/* Reading expressions back as patterns (see pattern.h). */
#include "pattern.h"

#include <string.h>

PatternKind pattern_kind(const Expr *e) {
  switch (e->kind) {
    case EXPR_NAME: return strcmp(e->as.name, "_") == 0 ? PATTERN_WILDCARD : PATTERN_BINDING;
    case EXPR_INT: case EXPR_FLOAT: case EXPR_DURATION: case EXPR_STRING: case EXPR_BOOL: case EXPR_UNIT:
    case EXPR_NONE:
      return PATTERN_LITERAL;
    case EXPR_UNARY: {
      ExprKind operand = e->as.binary.left->kind;
      bool number = operand == EXPR_INT || operand == EXPR_FLOAT || operand == EXPR_DURATION;
      return e->as.binary.op == UN_NEG && number ? PATTERN_LITERAL : PATTERN_INVALID;
    }
    case EXPR_CALL: {
      const Expr *callee = e->as.call.callee;
      bool some = callee->kind == EXPR_NAME && strcmp(callee->as.name, "some") == 0;
      return some && e->as.call.args.count == 1 ? PATTERN_SOME : PATTERN_INVALID;
    }
    case EXPR_LIST: return PATTERN_LIST;
    case EXPR_BINARY: return e->as.binary.op == BIN_CONS ? PATTERN_CONS : PATTERN_INVALID;
    case EXPR_RECORD: return PATTERN_RECORD;
    default: return PATTERN_INVALID;
  }
}

bool pattern_matches_all(const Expr *pattern) {
  PatternKind kind = pattern_kind(pattern);
  return kind == PATTERN_WILDCARD || kind == PATTERN_BINDING;
}

/* What an expression that is no pattern is, for the message. */
static const char *what_it_is(const Expr *e) {
  switch (e->kind) {
    case EXPR_CALL: return "a call";
    case EXPR_FIELD: return "a field access";
    case EXPR_INDEX: return "an index";
    case EXPR_UNARY: case EXPR_BINARY: case EXPR_AND: case EXPR_OR: return "an operator";
    case EXPR_IF: return "an if";
    case EXPR_LET: return "a let";
    case EXPR_LAMBDA: return "a function";
    case EXPR_BLOCK: return "a block";
    case EXPR_RETURN: return "a return";
    case EXPR_THEN: case EXPR_BIND: return "an action";
    case EXPR_MATCH: return "a match";
    case EXPR_UPDATE: return "a record update";
    case EXPR_INTERP: return "an interpolated string";
    default: return "an expression";
  }
}

typedef struct {
  Diag *diag;
  const Source *source;
  const Expr *names[256];  /* the bindings seen so far, for duplicates */
  int count;
  bool ok;
} Check;

static void check(Check *k, const Expr *e) {
  switch (pattern_kind(e)) {
    case PATTERN_WILDCARD:
    case PATTERN_LITERAL:
      return;
    case PATTERN_BINDING:
      for (int i = 0; i < k->count; i++) {
        if (strcmp(k->names[i]->as.name, e->as.name) == 0) {
          diag_error(k->diag, k->source, e->loc.line, e->loc.col, "'%s' is bound twice in this pattern (first at column %d)",
                     e->as.name, k->names[i]->loc.col);
          k->ok = false;
          return;
        }
      }
      if (k->count < (int)(sizeof k->names / sizeof k->names[0])) k->names[k->count++] = e;
      return;
    case PATTERN_SOME:
      check(k, e->as.call.args.items[0]);
      return;
    case PATTERN_LIST:
      for (int i = 0; i < e->as.items.count; i++) check(k, e->as.items.items[i]);
      return;
    case PATTERN_CONS:
      check(k, e->as.binary.left);
      check(k, e->as.binary.right);
      return;
    case PATTERN_RECORD: {
      const NodeList *pairs = &e->as.record.names;
      for (int i = 0; i < pairs->count / 2; i++) {
        const char *name = pairs->items[2 * i];
        for (int j = 0; j < i; j++) {
          if (strcmp(name, pairs->items[2 * j]) == 0) {
            diag_error(k->diag, k->source, e->loc.line, e->loc.col, "field '%s' is given twice in this pattern", name);
            k->ok = false;
          }
        }
        check(k, pairs->items[2 * i + 1]);
      }
      return;
    }
    case PATTERN_INVALID:
      break;
  }
  const Expr *callee = e->kind == EXPR_CALL ? e->as.call.callee : NULL;
  if (callee && callee->kind == EXPR_NAME && strcmp(callee->as.name, "some") == 0)
    diag_error(k->diag, k->source, e->loc.line, e->loc.col, "malformed pattern: some(p) takes one pattern, not %d",
               e->as.call.args.count);
  else
    diag_error(k->diag, k->source, e->loc.line, e->loc.col,
               "malformed pattern: %s is not a pattern (a pattern is _, a name, a literal, none, some(p), "
               "[p, ...], p :: rest or #{field: p, ...})",
               what_it_is(e));
  k->ok = false;
}

bool pattern_check(const Expr *pattern, Diag *diag, const Source *source) {
  Check k = {.diag = diag, .source = source, .count = 0, .ok = true};
  check(&k, pattern);
  return k.ok;
}
