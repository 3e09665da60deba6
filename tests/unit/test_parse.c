/* lang/parse.c and lang/parser.y (with lang/diag.c): parse_source on small
 * sources, the shape of the tree, and syntax errors as reported. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "parse.h"

typedef struct {
  Source *source;
  Module module;
  Diag diag;
  UnitText text;   /* everything written through the Diag */
  bool ok;
} Parsed;

static Parsed *parse_n(const char *text, size_t length) {
  Parsed *p = calloc(1, sizeof *p);
  if (!p) abort();
  p->source = source_from_memory("test.sim", text, length);
  p->diag = (Diag){unit_write_text, &p->text, 0};
  p->ok = parse_source(p->source, &p->diag, &p->module);
  return p;
}
static Parsed *parse(const char *text) { return parse_n(text, strlen(text)); }

static void parsed_free(Parsed *p) {
  ast_free(&p->module);
  source_free(p->source);
  unit_text_free(&p->text);
  free(p);
}

static Decl *decl_at(const Parsed *p, int i) { return p->module.decls.items[i]; }

/* Parse `text`; it must succeed silently. */
static Parsed *parse_ok_at(const char *text, const char *file, int line) {
  Parsed *p = parse(text);
  if (!p->ok || p->diag.errors || p->text.length) {
    print_error("parse failed (%d errors):\n%s", p->diag.errors, unit_text(&p->text));
    parsed_free(p);
    _fail(file, line);
  }
  return p;
}
#define parse_ok(text) parse_ok_at((text), __FILE__, __LINE__)

/* Parse `text`; it must fail with exactly these diagnostics. */
static void check_parse_error(const char *text, int errors, const char *expected, const char *file, int line) {
  Parsed *p = parse(text);
  bool ok = p->ok;
  int count = p->diag.errors;
  char actual[8192];
  snprintf(actual, sizeof actual, "%s", unit_text(&p->text));
  parsed_free(p);
  if (ok) {
    print_error("parse_source returned true for a source with errors\n");
    _fail(file, line);
  }
  if (count != errors) {
    print_error("%d errors counted, expected %d:\n%s", count, errors, actual);
    _fail(file, line);
  }
  unit_assert_text(actual, expected, "diagnostics", file, line);
}
#define assert_parse_error(text, errors, expected) check_parse_error((text), (errors), (expected), __FILE__, __LINE__)

/* ---- declarations ---- */

static void test_empty_sources(void **state) {
  (void)state;
  static const char *empty[] = {"", "\n\n", "-- only a comment\n", "   ", "\t\r\n"};
  for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
    Parsed *p = parse_ok(empty[i]);
    assert_int_equal(p->module.decls.count, 0);
    parsed_free(p);
  }
}

static void test_declaration_kinds(void **state) {
  (void)state;
  Parsed *p = parse_ok("fn add(a, b) = a + b\n"
                       "limit = 10\n"
                       "import \"lib/other.sim\"\n"
                       "fn main() {\n"
                       "  say(add(1, limit))\n"
                       "}\n"
                       "fn none_() = ()\n");
  assert_int_equal(p->module.decls.count, 5);

  Decl *d = decl_at(p, 0);
  assert_int_equal(d->kind, DECL_FN);
  assert_string_equal(d->name, "add");
  assert_int_equal(d->loc.line, 1);
  assert_int_equal(d->loc.col, 4); /* the name */
  assert_int_equal(d->expr->kind, EXPR_LAMBDA);
  assert_int_equal(d->expr->as.lambda.params.count, 2);
  assert_string_equal(d->expr->as.lambda.params.items[0], "a");
  assert_string_equal(d->expr->as.lambda.params.items[1], "b");
  assert_string_equal(d->expr->as.lambda.name, "add");
  assert_int_equal(d->expr->as.lambda.body->kind, EXPR_BINARY);
  assert_int_equal(d->expr->as.lambda.body->as.binary.op, BIN_ADD);

  d = decl_at(p, 1);
  assert_int_equal(d->kind, DECL_VALUE);
  assert_string_equal(d->name, "limit");
  assert_int_equal(d->loc.line, 2);
  assert_int_equal(d->expr->kind, EXPR_INT);
  assert_int_equal(d->expr->as.integer, 10);

  d = decl_at(p, 2);
  assert_int_equal(d->kind, DECL_IMPORT);
  assert_string_equal(d->name, "lib/other.sim");
  assert_null(d->expr);

  d = decl_at(p, 3);
  assert_int_equal(d->kind, DECL_FN);
  assert_string_equal(d->name, "main");
  assert_int_equal(d->expr->as.lambda.params.count, 0);
  const Expr *body = d->expr->as.lambda.body;
  assert_int_equal(body->kind, EXPR_BLOCK);
  assert_int_equal(body->as.block.count, 1);
  const Stmt *s = body->as.block.items[0];
  assert_int_equal(s->kind, STMT_EXPR);
  assert_int_equal(s->loc.line, 5);
  assert_int_equal(s->expr->kind, EXPR_CALL);
  assert_int_equal(s->expr->as.call.args.count, 1);
  assert_int_equal(s->expr->as.call.callee->kind, EXPR_NAME);
  assert_string_equal(s->expr->as.call.callee->as.name, "say");

  d = decl_at(p, 4);
  assert_int_equal(d->expr->as.lambda.body->kind, EXPR_UNIT);
  parsed_free(p);
}

static void test_statement_kinds(void **state) {
  (void)state;
  Parsed *p = parse_ok("main = {\n"
                       "  t <- now()\n"
                       "  let n = 2\n"
                       "  delay(n * 1us); say(t)\n"
                       "  return n\n"
                       "}\n");
  assert_int_equal(p->module.decls.count, 1);
  const Expr *block = decl_at(p, 0)->expr;
  assert_int_equal(block->kind, EXPR_BLOCK);
  assert_int_equal(block->as.block.count, 5);
  const Stmt *s0 = block->as.block.items[0], *s1 = block->as.block.items[1];
  const Stmt *s2 = block->as.block.items[2], *s3 = block->as.block.items[3], *s4 = block->as.block.items[4];
  assert_int_equal(s0->kind, STMT_BIND);
  assert_string_equal(s0->name, "t");
  assert_int_equal(s1->kind, STMT_LET);
  assert_string_equal(s1->name, "n");
  assert_int_equal(s2->kind, STMT_EXPR);
  assert_int_equal(s3->kind, STMT_EXPR);
  assert_int_equal(s2->loc.line, 4);
  assert_int_equal(s3->loc.line, 4);
  assert_int_equal(s3->loc.col, 19);
  assert_int_equal(s4->expr->kind, EXPR_RETURN);
  assert_int_equal(s4->expr->as.ret->kind, EXPR_NAME);
  parsed_free(p);
}

static void test_expression_forms(void **state) {
  (void)state;
  Parsed *p = parse_ok("a = [1, \"s\", 2.5, 3ms, true, none, ()]\n"
                       "b = #{x: 1, y: [2],}\n"
                       "c = r.x[0](1, 2)\n"
                       "d = if c then 1 else 2\n"
                       "e = let x = 1 in x\n"
                       "f = fn(x, y) => x\n"
                       "g = fn() { yield() }\n"
                       "h = -x\n"
                       "i = !x\n"
                       "j = {}\n");
  assert_int_equal(p->module.decls.count, 10);
  const Expr *e = decl_at(p, 0)->expr;
  assert_int_equal(e->kind, EXPR_LIST);
  assert_int_equal(e->as.items.count, 7);
  static const ExprKind kinds[] = {EXPR_INT, EXPR_STRING, EXPR_FLOAT, EXPR_DURATION, EXPR_BOOL, EXPR_NONE, EXPR_UNIT};
  for (int i = 0; i < 7; i++) assert_int_equal(((Expr *)e->as.items.items[i])->kind, kinds[i]);
  assert_int_equal(((Expr *)e->as.items.items[3])->as.integer, 3000000);

  e = decl_at(p, 1)->expr;
  assert_int_equal(e->kind, EXPR_RECORD);
  assert_int_equal(e->as.record.names.count, 4); /* names and values alternate */
  assert_string_equal(e->as.record.names.items[0], "x");
  assert_string_equal(e->as.record.names.items[2], "y");

  e = decl_at(p, 2)->expr; /* ((r.x)[0])(1, 2) */
  assert_int_equal(e->kind, EXPR_CALL);
  assert_int_equal(e->as.call.args.count, 2);
  assert_int_equal(e->as.call.callee->kind, EXPR_INDEX);
  assert_int_equal(e->as.call.callee->as.index.object->kind, EXPR_FIELD);
  assert_string_equal(e->as.call.callee->as.index.object->as.field.name, "x");

  assert_int_equal(decl_at(p, 3)->expr->kind, EXPR_IF);
  assert_int_equal(decl_at(p, 4)->expr->kind, EXPR_LET);
  assert_string_equal(decl_at(p, 4)->expr->as.let.name, "x");
  e = decl_at(p, 5)->expr;
  assert_int_equal(e->kind, EXPR_LAMBDA);
  assert_int_equal(e->as.lambda.params.count, 2);
  assert_null(e->as.lambda.name);
  assert_int_equal(decl_at(p, 6)->expr->as.lambda.body->kind, EXPR_BLOCK);
  assert_int_equal(decl_at(p, 7)->expr->kind, EXPR_UNARY);
  assert_int_equal(decl_at(p, 7)->expr->as.binary.op, UN_NEG);
  assert_int_equal(decl_at(p, 8)->expr->as.binary.op, UN_NOT);
  assert_int_equal(decl_at(p, 9)->expr->kind, EXPR_BLOCK);
  assert_int_equal(decl_at(p, 9)->expr->as.block.count, 0);
  parsed_free(p);
}

static void test_precedence(void **state) {
  (void)state;
  /* ((1 + (2 * 3)) == 7 && true) || false */
  Parsed *p = parse_ok("x = 1 + 2 * 3 == 7 && true || false\n"
                       "y = a >> b >>= c\n"
                       "z = \"a\" ++ \"b\" ++ \"c\"\n"
                       "w = 10 - 4 - 3\n");
  const Expr *e = decl_at(p, 0)->expr;
  assert_int_equal(e->kind, EXPR_OR);
  const Expr *and_ = e->as.then.left;
  assert_int_equal(and_->kind, EXPR_AND);
  const Expr *eq = and_->as.then.left;
  assert_int_equal(eq->kind, EXPR_BINARY);
  assert_int_equal(eq->as.binary.op, BIN_EQ);
  const Expr *add = eq->as.binary.left;
  assert_int_equal(add->as.binary.op, BIN_ADD);
  assert_int_equal(add->as.binary.right->as.binary.op, BIN_MUL);

  e = decl_at(p, 1)->expr; /* (a >> b) >>= c */
  assert_int_equal(e->kind, EXPR_BIND);
  assert_int_equal(e->as.then.left->kind, EXPR_THEN);

  e = decl_at(p, 2)->expr; /* "a" ++ ("b" ++ "c") */
  assert_int_equal(e->as.binary.op, BIN_CONCAT);
  assert_int_equal(e->as.binary.left->kind, EXPR_STRING);
  assert_int_equal(e->as.binary.right->as.binary.op, BIN_CONCAT);

  e = decl_at(p, 3)->expr; /* (10 - 4) - 3 */
  assert_int_equal(e->as.binary.op, BIN_SUB);
  assert_int_equal(e->as.binary.left->kind, EXPR_BINARY);
  assert_int_equal(e->as.binary.right->kind, EXPR_INT);
  parsed_free(p);
}

/* if / let / fn take everything to their right; `return e >>= f` binds the
 * return first (lang/parser.y: RETURN_ARG). */
static void test_right_extending_forms(void **state) {
  (void)state;
  Parsed *p = parse_ok("a = if c then x else y >> z\n"
                       "b = return 1 >>= f\n"
                       "c = return 1 + 2\n"
                       "d = fn(x) => x >> y\n");
  const Expr *e = decl_at(p, 0)->expr;
  assert_int_equal(e->kind, EXPR_IF);
  assert_int_equal(e->as.if_.otherwise->kind, EXPR_THEN);
  e = decl_at(p, 1)->expr;
  assert_int_equal(e->kind, EXPR_BIND);
  assert_int_equal(e->as.then.left->kind, EXPR_RETURN);
  e = decl_at(p, 2)->expr;
  assert_int_equal(e->kind, EXPR_RETURN);
  assert_int_equal(e->as.ret->kind, EXPR_BINARY);
  e = decl_at(p, 3)->expr;
  assert_int_equal(e->kind, EXPR_LAMBDA);
  assert_int_equal(e->as.lambda.body->kind, EXPR_THEN);
  parsed_free(p);
}

/* ---- semicolon insertion, seen from the parser ---- */

static void test_operator_at_line_start_continues(void **state) {
  (void)state;
  Parsed *p = parse_ok("x = 1\n"
                       "  + 2 * 3\n"
                       "y = say(1)\n"
                       "  >> say(2)\n"
                       "  >> say(3)\n"
                       "z = if ok\n"
                       "  then 1\n"
                       "  else 2\n");
  assert_int_equal(p->module.decls.count, 3);
  const Expr *x = decl_at(p, 0)->expr;
  assert_int_equal(x->kind, EXPR_BINARY);
  assert_int_equal(x->as.binary.op, BIN_ADD);
  assert_int_equal(x->as.binary.right->as.binary.op, BIN_MUL);
  const Expr *y = decl_at(p, 1)->expr;
  assert_int_equal(y->kind, EXPR_THEN);
  assert_int_equal(y->as.then.left->kind, EXPR_THEN);
  assert_int_equal(decl_at(p, 2)->expr->kind, EXPR_IF);
  assert_string_equal(decl_at(p, 2)->name, "z");
  assert_int_equal(decl_at(p, 2)->loc.line, 6);
  parsed_free(p);
}

static void test_newlines_separate_statements(void **state) {
  (void)state;
  Parsed *p = parse_ok("main = {\n"
                       "  let y = 10\n"
                       "  - 3\n"           /* a new statement: -3 */
                       "  f(1,\n"
                       "    2)\n"          /* one call across lines */
                       "  if a then {\n"
                       "    say(1)\n"
                       "  }\n"
                       "  else {\n"        /* `else` continues the if */
                       "    say(2)\n"
                       "  }\n"
                       "}\n");
  const Expr *block = decl_at(p, 0)->expr;
  assert_int_equal(block->as.block.count, 4);
  const Stmt *neg = block->as.block.items[1];
  assert_int_equal(neg->expr->kind, EXPR_UNARY);
  const Stmt *call = block->as.block.items[2];
  assert_int_equal(call->expr->kind, EXPR_CALL);
  assert_int_equal(call->expr->as.call.args.count, 2);
  const Stmt *cond = block->as.block.items[3];
  assert_int_equal(cond->expr->kind, EXPR_IF);
  assert_int_equal(cond->expr->as.if_.otherwise->kind, EXPR_BLOCK);
  parsed_free(p);
}

/* ---- errors ---- */

static void test_syntax_error_text(void **state) {
  (void)state;
  assert_parse_error("x = )\n", 1,
                     "test.sim:1:5: error: syntax error, unexpected ')'\n"
                     "    x = )\n"
                     "        ^\n");
  assert_parse_error("a = 1 < 2 < 3\n", 1,
                     "test.sim:1:11: error: syntax error, unexpected '<'\n"
                     "    a = 1 < 2 < 3\n"
                     "              ^\n");
  /* tabs in the line are kept under the caret */
  assert_parse_error("\tx = ]\n", 1,
                     "test.sim:1:6: error: syntax error, unexpected ']'\n"
                     "    \tx = ]\n"
                     "    \t    ^\n");
}

/* A syntax error on a later line than an unclosed bracket names the bracket. */
static void test_unclosed_bracket_is_named(void **state) {
  (void)state;
  assert_parse_error("main = {\n  say(1)\n", 1,
                     "test.sim:3:1: error: syntax error, unexpected end of file "
                     "(the '{' at line 1, column 8 is not closed)\n"
                     "    \n"
                     "    ^\n");
  assert_parse_error("x = f(1,\n  2\ny = 3\n", 1,
                     "test.sim:3:1: error: syntax error, unexpected name "
                     "(the '(' at line 1, column 6 is not closed)\n"
                     "    y = 3\n"
                     "    ^\n");
}

static void test_several_errors_in_one_parse(void **state) {
  (void)state;
  Parsed *p = parse("x = )\n"
                    "y = 1\n"
                    "z = ]\n"
                    "w = 2\n"
                    "v = 1 +\n"
                    "u = 3\n");
  assert_false(p->ok);
  assert_int_equal(p->diag.errors, 3);
  assert_text_equal(unit_text(&p->text),
                    "test.sim:1:5: error: syntax error, unexpected ')'\n"
                    "    x = )\n"
                    "        ^\n"
                    "test.sim:3:5: error: syntax error, unexpected ']'\n"
                    "    z = ]\n"
                    "        ^\n"
                    "test.sim:6:3: error: syntax error, unexpected '='\n"
                    "    u = 3\n"
                    "      ^\n");
  /* the good declarations between the errors are kept */
  assert_int_equal(p->module.decls.count, 2);
  assert_string_equal(decl_at(p, 0)->name, "y");
  assert_string_equal(decl_at(p, 1)->name, "w");
  parsed_free(p);
}

/* A lexical error is a boundary like a syntax error: the error on the next
 * line is reported too, and the declarations after it are parsed. */
static void test_error_after_lexical_error_is_reported(void **state) {
  (void)state;
  Parsed *p = parse("v = @\n"
                    "u = )\n"
                    "t = 1\n");
  /* read everything, free, then assert (a failed assertion does not return) */
  bool ok = p->ok;
  int errors = p->diag.errors, decls = p->module.decls.count;
  char text[2048];
  snprintf(text, sizeof text, "%s", unit_text(&p->text));
  parsed_free(p);
  assert_false(ok);
  assert_text_equal(text,
                    "test.sim:1:5: error: unexpected '@'\n"
                    "    v = @\n"
                    "        ^\n"
                    "test.sim:2:5: error: syntax error, unexpected ')'\n"
                    "    u = )\n"
                    "        ^\n");
  assert_int_equal(errors, 2);
  assert_int_equal(decls, 1);
}

/* The "is not closed" note is for brackets that are really left open, not for
 * every error inside a block that spans lines. */
static void test_no_bracket_note_for_closed_blocks(void **state) {
  (void)state;
  assert_parse_error("main = {\n  x = 1\n}\n", 1,
                     "test.sim:2:5: error: syntax error, unexpected '='\n"
                     "      x = 1\n"
                     "        ^\n");
  assert_parse_error("main = {\n  say(1 +)\n}\n", 1,
                     "test.sim:2:10: error: syntax error, unexpected ')'\n"
                     "      say(1 +)\n"
                     "             ^\n");
}

static void test_errors_inside_blocks_recover(void **state) {
  (void)state;
  Parsed *p = parse("main = {\n"
                    "  say(1 +)\n"
                    "  say(2)\n"
                    "  x <- )\n"
                    "  say(3)\n"
                    "}\n");
  assert_false(p->ok);
  assert_int_equal(p->diag.errors, 2);
  assert_contains(unit_text(&p->text), "test.sim:2:10: error: syntax error, unexpected ')'");
  assert_contains(unit_text(&p->text), "test.sim:4:8: error: syntax error, unexpected ')'\n");
  parsed_free(p);
}

/* Reporting stops at DIAG_MAX_ERRORS, counting goes on. */
static void test_error_limit(void **state) {
  (void)state;
  UnitText src = {0};
  for (int i = 0; i < DIAG_MAX_ERRORS + 5; i++) {
    char line[32];
    int n = snprintf(line, sizeof line, "x%d = )\n", i);
    unit_text_append(&src, line, (size_t)n);
  }
  Parsed *p = parse(unit_text(&src));
  assert_int_equal(p->diag.errors, DIAG_MAX_ERRORS + 5);
  int shown = 0;
  for (const char *s = unit_text(&p->text); (s = strstr(s, ": error: ")) != NULL; s++) shown++;
  assert_int_equal(shown, DIAG_MAX_ERRORS);
  assert_contains(unit_text(&p->text), "test.sim:20:7: error:");
  assert_null(strstr(unit_text(&p->text), "test.sim:21:"));
  parsed_free(p);
  unit_text_free(&src);
}

/* With no write callback, errors are only counted. */
static void test_silent_diag(void **state) {
  (void)state;
  Source *source = source_from_memory("q.sim", "x = )\ny = (\n", 12);
  Diag diag = {NULL, NULL, 0};
  Module module;
  assert_false(parse_source(source, &diag, &module));
  assert_int_equal(diag.errors, 2);
  ast_free(&module);
  source_free(source);
}

/* Diag counts continue across parses: parse_source reports failure by the
 * errors of this parse only. */
static void test_diag_shared_across_parses(void **state) {
  (void)state;
  Source *bad = source_from_memory("bad.sim", "x = )", 5);
  Source *good = source_from_memory("good.sim", "x = 1", 5);
  Diag diag = {NULL, NULL, 0};
  Module m1, m2;
  assert_false(parse_source(bad, &diag, &m1));
  assert_true(parse_source(good, &diag, &m2));
  assert_int_equal(diag.errors, 1);
  assert_int_equal(m2.decls.count, 1);
  ast_free(&m1);
  ast_free(&m2);
  source_free(bad);
  source_free(good);
}

/* Random bytes: an error, never a crash; the result always agrees with the count. */
static void test_random_bytes_give_errors(void **state) {
  (void)state;
  UnitRng rng = {0x0123456789abcdefULL};
  char text[300];
  for (int round = 0; round < 3000; round++) {
    size_t length = 16 + (size_t)unit_rng_below(&rng, sizeof text - 16);
    for (size_t i = 0; i < length; i++) text[i] = (char)unit_rng_below(&rng, 256);
    Parsed *p = parse_n(text, length);
    if (p->ok || p->diag.errors == 0) {
      print_error("round %d: random input parsed without error\n", round);
      parsed_free(p);
      fail();
    }
    assert_true(p->text.length > 0);
    parsed_free(p);
  }
}

/* Random token soup exercises error recovery everywhere in the grammar. */
static void test_random_tokens_never_crash(void **state) {
  (void)state;
  static const char *words[] = {"fn ", "f", "x", "main", "=", "(", ")", "{", "}", "[", "]", "#{", ",", ":", ";",
                                "\n", "if ", "then ", "else ", "let ", "in ", "return ", "<-", "=>", ">>", ">>=",
                                "+", "-", "*", "==", "&&", "1", "2us", "\"s\"", "true", "none", ".", "import "};
  enum { WORDS = sizeof words / sizeof words[0] };
  UnitRng rng = {42};
  int failures = 0, successes = 0;
  for (int round = 0; round < 3000; round++) {
    UnitText src = {0};
    int n = 1 + (int)unit_rng_below(&rng, 60);
    for (int i = 0; i < n; i++) {
      const char *w = words[unit_rng_below(&rng, WORDS)];
      unit_text_append(&src, w, strlen(w));
      unit_text_append(&src, " ", 1);
    }
    Parsed *p = parse(unit_text(&src));
    assert_int_equal(p->ok, p->diag.errors == 0);
    assert_int_equal(p->ok, p->text.length == 0);
    if (p->ok) successes++;
    else failures++;
    parsed_free(p);
    unit_text_free(&src);
  }
  /* both outcomes occur, so both paths are exercised */
  assert_true(failures > 0);
  assert_true(successes > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_sources),
      cmocka_unit_test(test_declaration_kinds),
      cmocka_unit_test(test_statement_kinds),
      cmocka_unit_test(test_expression_forms),
      cmocka_unit_test(test_precedence),
      cmocka_unit_test(test_right_extending_forms),
      cmocka_unit_test(test_operator_at_line_start_continues),
      cmocka_unit_test(test_newlines_separate_statements),
      cmocka_unit_test(test_syntax_error_text),
      cmocka_unit_test(test_unclosed_bracket_is_named),
      cmocka_unit_test(test_several_errors_in_one_parse),
      cmocka_unit_test(test_error_after_lexical_error_is_reported),
      cmocka_unit_test(test_no_bracket_note_for_closed_blocks),
      cmocka_unit_test(test_errors_inside_blocks_recover),
      cmocka_unit_test(test_error_limit),
      cmocka_unit_test(test_silent_diag),
      cmocka_unit_test(test_diag_shared_across_parses),
      cmocka_unit_test(test_random_bytes_give_errors),
      cmocka_unit_test(test_random_tokens_never_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
