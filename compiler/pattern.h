/* Patterns: what a match arm, a `let` and a bind (`<-`) destructure.
 *
 * The parser reads a pattern as an expression (so `#{term: t} <- e` needs
 * no lookahead to tell it from a statement); here it is read back as a
 * pattern and checked. The forms (docs/LANGUAGE.md, "Patterns"):
 *
 *   _                 matches anything, binds nothing
 *   x                 matches anything, binds x
 *   1  -2  "a"  1ms  2.5  true  ()  none
 *                     a literal: matches a value == to it
 *   some(p)           some(x) with x matching p
 *   []  [p1, ..., pn] a list of exactly n items matching p1 ... pn
 *   p :: rest         a list that is not empty: its head matches p, the
 *                     rest of it (a list) matches rest
 *   #{f: p, ...}      a record with at least the fields named, each
 *                     matching its pattern (other fields are allowed)
 *
 * compiler.c compiles them to tests and jumps. */
#ifndef SIMVM_PATTERN_H
#define SIMVM_PATTERN_H

#include <stdbool.h>

#include "../lang/ast.h"
#include "../lang/diag.h"

typedef enum {
  PATTERN_WILDCARD,  /* _ */
  PATTERN_BINDING,   /* a name */
  PATTERN_LITERAL,   /* a constant, true, false, (), none, or - a number */
  PATTERN_SOME,      /* some(p): the call's one argument */
  PATTERN_LIST,      /* [p, ...]: the list's items */
  PATTERN_CONS,      /* p :: rest: the binary's left and right */
  PATTERN_RECORD,    /* #{f: p, ...}: the record's names and values */
  PATTERN_INVALID    /* anything else */
} PatternKind;

/* What the expression `e` is as a pattern (its outermost form only). */
PatternKind pattern_kind(const Expr *e);

/* Check a whole pattern: report each part that is no pattern, a record
 * field named twice and a name bound twice, as compile errors on `diag`
 * (file:line:col of the part). True when there was nothing to report. */
bool pattern_check(const Expr *pattern, Diag *diag, const Source *source);

/* Whether the pattern matches every value (`_` or a name). */
bool pattern_matches_all(const Expr *pattern);

#endif
