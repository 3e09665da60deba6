/* lang/lexer.re: tokens, values, locations, semicolon insertion and lexical
 * errors, driven token by token through lexer_next(). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "parser.h"

#define MAX_TOKENS 256

typedef struct {
  int count;
  int kinds[MAX_TOKENS];
  YYSTYPE values[MAX_TOKENS];
  YYLTYPE locs[MAX_TOKENS];
  UnitText diag_text;
  int errors;
  Source *source;
  Arena *arena;
} Lexed;

/* Lex all of `text` (up to and including YYEOF). */
static Lexed *lex_text(const char *text, size_t length) {
  Lexed *lx = calloc(1, sizeof *lx);
  if (!lx) abort();
  lx->source = source_from_memory("lex.sim", text, length);
  lx->arena = arena_new();
  Diag diag = {unit_write_text, &lx->diag_text, 0};
  Module module = {{0}, lx->arena};
  Parser p;
  memset(&p, 0, sizeof p);
  p.source = lx->source;
  p.diag = &diag;
  p.arena = lx->arena;
  p.module = &module;
  lexer_init(&p.lexer, lx->source->text, lx->source->length);
  for (;;) {
    YYSTYPE value;
    YYLTYPE loc;
    memset(&value, 0, sizeof value);
    int kind = lexer_next(&p.lexer, &p, &value, &loc);
    if (lx->count < MAX_TOKENS) {
      lx->kinds[lx->count] = kind;
      lx->values[lx->count] = value;
      lx->locs[lx->count] = loc;
      lx->count++;
    }
    if (kind == YYEOF || lx->count == MAX_TOKENS) break;
  }
  lx->errors = diag.errors;
  return lx;
}
static Lexed *lex(const char *text) { return lex_text(text, strlen(text)); }

static void lexed_free(Lexed *lx) {
  arena_free(lx->arena);
  source_free(lx->source);
  unit_text_free(&lx->diag_text);
  free(lx);
}

static const char *kind_name(int kind) {
  static char buf[8][16];
  static int next;
  switch (kind) {
    case YYEOF: return "EOF";
    case YYerror: return "error";
    case INT: return "INT";
    case DURATION: return "DURATION";
    case FLOAT: return "FLOAT";
    case STRING: return "STRING";
    case IDENT: return "IDENT";
    case FN: return "fn";
    case IF: return "if";
    case THEN: return "then";
    case ELSE: return "else";
    case LET: return "let";
    case IN: return "in";
    case RETURN: return "return";
    case TRUE: return "true";
    case FALSE: return "false";
    case NONE: return "none";
    case IMPORT: return "import";
    case ARROW: return "<-";
    case FAT_ARROW: return "=>";
    case THEN_OP: return ">>";
    case BIND_OP: return ">>=";
    case CONCAT: return "++";
    case EQ: return "==";
    case NE: return "!=";
    case LE: return "<=";
    case GE: return ">=";
    case AND: return "&&";
    case OR: return "||";
    case HASH_BRACE: return "#{";
    default: break;
  }
  char *b = buf[next++ % 8];
  if (kind > 0 && kind < 128) snprintf(b, 16, "%c", kind);
  else snprintf(b, 16, "<%d>", kind);
  return b;
}

/* The token kinds as one space-separated string: "IDENT = INT ; EOF". */
static void kinds_string(const Lexed *lx, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < lx->count && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%s", i ? " " : "", kind_name(lx->kinds[i]));
}

static void check_tokens(const char *text, const char *expected, const char *file, int line) {
  Lexed *lx = lex(text);
  char actual[2048];
  kinds_string(lx, actual, sizeof actual);
  if (lx->errors) {
    print_error("unexpected lexical errors:\n%s", unit_text(&lx->diag_text));
    lexed_free(lx);
    _fail(file, line);
  }
  lexed_free(lx);
  unit_assert_text(actual, expected, "tokens", file, line);
}
/* Lexing `text` gives exactly the tokens `expected` and no error. */
#define assert_tokens(text, expected) check_tokens((text), (expected), __FILE__, __LINE__)

static void check_lex_error(const char *text, const char *expected_diag, const char *file, int line) {
  Lexed *lx = lex(text);
  bool has_error_token = false;
  for (int i = 0; i < lx->count; i++)
    if (lx->kinds[i] == YYerror) has_error_token = true;
  UnitText diag = lx->diag_text;
  lx->diag_text = (UnitText){0};
  int errors = lx->errors;
  lexed_free(lx);
  if (!has_error_token) {
    unit_text_free(&diag);
    print_error("no error token for %s\n", text);
    _fail(file, line);
  }
  if (errors != 1) {
    print_error("%d errors reported, expected 1:\n%s", errors, unit_text(&diag));
    unit_text_free(&diag);
    _fail(file, line);
  }
  char actual[4096];
  snprintf(actual, sizeof actual, "%s", unit_text(&diag));
  unit_text_free(&diag);
  unit_assert_text(actual, expected_diag, "diagnostic", file, line);
}
/* Lexing `text` yields an error token and exactly this one diagnostic. */
#define assert_lex_error(text, expected) check_lex_error((text), (expected), __FILE__, __LINE__)

/* ---- tokens ---- */

static void test_all_token_kinds(void **state) {
  (void)state;
  assert_tokens("fn if then else let in return true false none import",
                "fn if then else let in return true false none import EOF");
  assert_tokens("<- => >> >>= ++ == != <= >= && || #{",
                "<- => >> >>= ++ == != <= >= && || #{ EOF");
  assert_tokens("+ - * / % < > = ! ( ) { } [ ] , ; . :", "+ - * / % < > = ! ( ) { } [ ] , ; . : EOF");
  assert_tokens("x _y fnord iff 42 2.5 3us \"s\"", "IDENT IDENT IDENT IDENT INT FLOAT DURATION STRING EOF");
  assert_tokens("", "EOF");
  assert_tokens("   \t  ", "EOF");
}

static void test_longest_match(void **state) {
  (void)state;
  assert_tokens("a>>=b", "IDENT >>= IDENT EOF");
  assert_tokens("a>>b", "IDENT >> IDENT EOF");
  assert_tokens("a> >b", "IDENT > > IDENT EOF");
  assert_tokens("x<-y", "IDENT <- IDENT EOF");
  assert_tokens("x< -y", "IDENT < - IDENT EOF");
  assert_tokens("a+++b", "IDENT ++ + IDENT EOF");
  assert_tokens("#{x: 1}", "#{ IDENT : INT } EOF");
  assert_tokens("r.x", "IDENT . IDENT EOF");
}

static void test_comments(void **state) {
  (void)state;
  assert_tokens("x -- a comment ) ] }\n-- a whole line\ny", "IDENT ; IDENT EOF");
  assert_tokens("\"--not a comment\"", "STRING EOF");
  assert_tokens("a - -b", "IDENT - - IDENT EOF");
}

static void test_literal_values(void **state) {
  (void)state;
  Lexed *lx = lex("1_000_000 007 9223372036854775807 2.5 0.125 1.0e-7 1.5e+3 1.5e3");
  assert_int_equal(lx->errors, 0);
  assert_int_equal(lx->count, 9);
  assert_int_equal(lx->kinds[0], INT);
  assert_int_equal(lx->values[0].integer, 1000000);
  assert_int_equal(lx->values[1].integer, 7);
  assert_int_equal(lx->values[2].integer, INT64_MAX);
  assert_int_equal(lx->kinds[3], FLOAT);
  assert_true(lx->values[3].number == 2.5);
  assert_true(lx->values[4].number == 0.125);
  assert_true(lx->values[5].number == 1.0e-7);
  assert_int_equal(lx->kinds[6], FLOAT);
  assert_true(lx->values[6].number == 1500.0);
  /* an exponent without a sign is a float too */
  assert_int_equal(lx->kinds[7], FLOAT);
  assert_true(lx->values[7].number == 1500.0);
  lexed_free(lx);
}

static void test_duration_values(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int64_t ns;
  } cases[] = {
      {"500ns", 500},          {"3us", 3000},           {"2ms", 2000000},
      {"1s", 1000000000},      {"1.5ms", 1500000},      {"0.5us", 500},
      {"1_000us", 1000000},    {"0ns", 0},              {"90s", 90000000000},
      {"9223372036854775807ns", INT64_MAX},            {"1.25s", 1250000000},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    Lexed *lx = lex(cases[i].text);
    if (lx->errors || lx->kinds[0] != DURATION || lx->values[0].integer != cases[i].ns) {
      print_error("%s: kind %s, %lld ns, errors:\n%s\n", cases[i].text, kind_name(lx->kinds[0]),
                  (long long)lx->values[0].integer, unit_text(&lx->diag_text));
      lexed_free(lx);
      fail();
    }
    assert_int_equal(lx->kinds[1], YYEOF);
    lexed_free(lx);
  }
}

static void test_string_escapes(void **state) {
  (void)state;
  Lexed *lx = lex("\"a\\n\\t\\r\\\"\\\\\\x41z\" \"\" \"-- x\"");
  assert_int_equal(lx->errors, 0);
  assert_int_equal(lx->kinds[0], STRING);
  assert_int_equal(lx->values[0].string.length, 8);
  assert_memory_equal(lx->values[0].string.chars, "a\n\t\r\"\\Az", 8);
  assert_int_equal(lx->kinds[1], STRING);
  assert_int_equal(lx->values[1].string.length, 0);
  assert_int_equal(lx->values[2].string.length, 4);
  assert_memory_equal(lx->values[2].string.chars, "-- x", 4);
  lexed_free(lx);
  /* non-ASCII text is allowed inside strings */
  lx = lex("\"caf\xc3\xa9\"");
  assert_int_equal(lx->errors, 0);
  assert_int_equal(lx->kinds[0], STRING);
  assert_int_equal(lx->values[0].string.length, 5);
  lexed_free(lx);
}

static void test_identifier_text(void **state) {
  (void)state;
  Lexed *lx = lex("labelThread x_1 _");
  assert_int_equal(lx->kinds[0], IDENT);
  assert_string_equal(lx->values[0].name, "labelThread");
  assert_string_equal(lx->values[1].name, "x_1");
  assert_string_equal(lx->values[2].name, "_");
  lexed_free(lx);
}

static void test_locations(void **state) {
  (void)state;
  Lexed *lx = lex("main = {\n  say(\"hi\")\n\tx\n}");
  /* main = { say ( "hi" ) ; x ; } EOF */
  assert_int_equal(lx->kinds[3], IDENT); /* say */
  assert_int_equal(lx->locs[0].first_line, 1);
  assert_int_equal(lx->locs[0].first_column, 1);
  assert_int_equal(lx->locs[1].first_column, 6); /* = */
  assert_int_equal(lx->locs[2].first_column, 8); /* { */
  assert_int_equal(lx->locs[3].first_line, 2);
  assert_int_equal(lx->locs[3].first_column, 3);
  assert_int_equal(lx->locs[5].first_line, 2); /* "hi" */
  assert_int_equal(lx->locs[5].first_column, 7);
  assert_int_equal(lx->kinds[7], ';');
  assert_int_equal(lx->kinds[8], IDENT); /* x, after a tab: columns count bytes */
  assert_int_equal(lx->locs[8].first_line, 3);
  assert_int_equal(lx->locs[8].first_column, 2);
  lexed_free(lx);
}

/* ---- semicolon insertion ---- */

static void test_semicolon_at_line_end(void **state) {
  (void)state;
  assert_tokens("x = 1\ny = 2\n", "IDENT = INT ; IDENT = INT EOF");
  /* after every token that can end an expression */
  assert_tokens("a\nb", "IDENT ; IDENT EOF");
  assert_tokens("1\nb", "INT ; IDENT EOF");
  assert_tokens("2.5\nb", "FLOAT ; IDENT EOF");
  assert_tokens("1us\nb", "DURATION ; IDENT EOF");
  assert_tokens("\"s\"\nb", "STRING ; IDENT EOF");
  assert_tokens("true\nfalse\nnone\nb", "true ; false ; none ; IDENT EOF");
  assert_tokens("f()\nb", "IDENT ( ) ; IDENT EOF");
  assert_tokens("[]\nb", "[ ] ; IDENT EOF");
  assert_tokens("{}\nb", "{ } ; IDENT EOF");
  /* blank lines and comments between do not matter */
  assert_tokens("a\n\n-- c\n\nb", "IDENT ; IDENT EOF");
  /* not at the end of the file */
  assert_tokens("a\n", "IDENT EOF");
  assert_tokens("a\n\n\n", "IDENT EOF");
}

static void test_no_semicolon_after_incomplete_line(void **state) {
  (void)state;
  /* the line ends with a token that cannot end an expression */
  assert_tokens("x =\n1", "IDENT = INT EOF");
  assert_tokens("a +\nb", "IDENT + IDENT EOF");
  assert_tokens("a >>\nb", "IDENT >> IDENT EOF");
  assert_tokens("x <-\nf", "IDENT <- IDENT EOF");
  assert_tokens("if c then\nx else\ny", "if IDENT then IDENT else IDENT EOF");
  assert_tokens("{\na}", "{ IDENT } EOF");
  assert_tokens("fn f(a,\nb)", "fn IDENT ( IDENT , IDENT ) EOF");
}

/* An operator at the start of the next line continues the expression. */
static void test_operator_at_line_start_continues(void **state) {
  (void)state;
  assert_tokens("x = 1\n  + 2\n", "IDENT = INT + INT EOF");
  static const char *continuing[] = {">>", ">>=", "||", "&&", "==", "!=", "<", "<=", ">", ">=",
                                     "++", "+",   "*",  "/",  "%",  ".",  "=", ",",  ")", "]"};
  for (size_t i = 0; i < sizeof continuing / sizeof continuing[0]; i++) {
    char text[64], expected[64];
    snprintf(text, sizeof text, "a\n%s b", continuing[i]);
    snprintf(expected, sizeof expected, "IDENT %s IDENT EOF", continuing[i]);
    assert_tokens(text, expected);
  }
  assert_tokens("if c\nthen a\nelse b", "if IDENT then IDENT else IDENT EOF");
  assert_tokens("let x = 1\nin x", "let IDENT = INT in IDENT EOF");
  assert_tokens("fn(x)\n=> x", "fn ( IDENT ) => IDENT EOF");
  assert_tokens("{ a }\nelse { b }", "{ IDENT } else { IDENT } EOF");
}

/* A line starting with - ! ( [ { or <- starts a new statement. */
static void test_prefix_tokens_start_a_statement(void **state) {
  (void)state;
  assert_tokens("{\n  a\n  -1\n}", "{ IDENT ; - INT ; } EOF");
  assert_tokens("a\n!b", "IDENT ; ! IDENT EOF");
  assert_tokens("a\n(b)", "IDENT ; ( IDENT ) EOF");
  assert_tokens("a\n[b]", "IDENT ; [ IDENT ] EOF");
  assert_tokens("a\n{b}", "IDENT ; { IDENT } EOF");
  assert_tokens("a\n<- b", "IDENT ; <- IDENT EOF");
  assert_tokens("}\n{", "} ; { EOF");
}

/* Inside ( ), [ ] and #{ } line breaks are ignored; inside { } they count. */
static void test_brackets_control_insertion(void **state) {
  (void)state;
  assert_tokens("f(a\nb)", "IDENT ( IDENT IDENT ) EOF");
  assert_tokens("[1\n2]", "[ INT INT ] EOF");
  assert_tokens("#{x: 1\ny: 2}", "#{ IDENT : INT IDENT : INT } EOF");
  assert_tokens("{a\nb}", "{ IDENT ; IDENT } EOF");
  /* the innermost bracket decides */
  assert_tokens("f({\na\nb\n})", "IDENT ( { IDENT ; IDENT ; } ) EOF");
  assert_tokens("{ f(a\nb)\nc }", "{ IDENT ( IDENT IDENT ) ; IDENT } EOF");
  /* an unbalanced closer does not make the depth negative */
  assert_tokens(")\na\nb", ") ; IDENT ; IDENT EOF");
}

/* ---- lexical errors: exact diagnostics ---- */

static void test_error_unterminated_string(void **state) {
  (void)state;
  assert_lex_error("x = \"abc\n",
                   "lex.sim:1:5: error: unterminated string (a string must end on the line it starts)\n"
                   "    x = \"abc\n"
                   "        ^\n");
}

static void test_error_invalid_number(void **state) {
  (void)state;
  assert_lex_error("n = 3x",
                   "lex.sim:1:5: error: invalid number '3x' (duration units are ns, us, ms and s)\n"
                   "    n = 3x\n"
                   "        ^\n");
  assert_lex_error("10min",
                   "lex.sim:1:1: error: invalid number '10min' (duration units are ns, us, ms and s)\n"
                   "    10min\n"
                   "    ^\n");
  assert_lex_error("0x10",
                   "lex.sim:1:1: error: invalid number '0x10' (duration units are ns, us, ms and s)\n"
                   "    0x10\n"
                   "    ^\n");
  assert_lex_error("1ms2",
                   "lex.sim:1:1: error: invalid number '1ms2' (duration units are ns, us, ms and s)\n"
                   "    1ms2\n"
                   "    ^\n");
}

static void test_error_number_ranges(void **state) {
  (void)state;
  assert_lex_error("9223372036854775808",
                   "lex.sim:1:1: error: integer literal is too large for 64 bits\n"
                   "    9223372036854775808\n"
                   "    ^\n");
  assert_lex_error("d = 1.5ns",
                   "lex.sim:1:5: error: duration literal is not a whole number of nanoseconds\n"
                   "    d = 1.5ns\n"
                   "        ^\n");
  assert_lex_error("9300000000s",
                   "lex.sim:1:1: error: duration literal is too large for 64-bit nanoseconds\n"
                   "    9300000000s\n"
                   "    ^\n");
}

static void test_error_unexpected_characters(void **state) {
  (void)state;
  assert_lex_error("x = @",
                   "lex.sim:1:5: error: unexpected '@'\n"
                   "    x = @\n"
                   "        ^\n");
  assert_lex_error("  \x01",
                   "lex.sim:1:3: error: unexpected byte 0x01\n"
                   "      ?\n"
                   "      ^\n");
  /* a non-ASCII character outside a string is named whole; the caret
   * counts characters, not bytes */
  assert_lex_error("\"\xc3\xa9\" \xc3\xa9",
                   "lex.sim:1:6: error: unexpected character '\xc3\xa9'\n"
                   "    \"\xc3\xa9\" \xc3\xa9\n"
                   "        ^\n");
}

static void test_error_bad_escapes(void **state) {
  (void)state;
  Lexed *lx = lex("\"\\q\"");
  assert_int_equal(lx->kinds[0], YYerror);
  assert_int_equal(lx->errors, 1);
  assert_contains(unit_text(&lx->diag_text), "error: unknown escape '\\q' in string\n");
  lexed_free(lx);
  lx = lex("\"\\x00\"");
  assert_int_equal(lx->kinds[0], YYerror);
  assert_contains(unit_text(&lx->diag_text), "error: invalid escape '\\x00' (two hex digits, not 00)\n");
  lexed_free(lx);
  lx = lex("\"\\xg1\"");
  assert_int_equal(lx->kinds[0], YYerror);
  assert_contains(unit_text(&lx->diag_text), "error: invalid escape '\\xg1' (two hex digits, not 00)\n");
  lexed_free(lx);
}

/* The lexer goes on after an error: the next tokens come out normally. */
static void test_continues_after_error(void **state) {
  (void)state;
  Lexed *lx = lex("a @ b $ c");
  char kinds[256];
  kinds_string(lx, kinds, sizeof kinds);
  assert_text_equal(kinds, "IDENT error IDENT error IDENT EOF");
  assert_int_equal(lx->errors, 2);
  lexed_free(lx);
}

/* Random bytes, NULs included, never crash the lexer and always end in EOF. */
static void test_random_bytes(void **state) {
  (void)state;
  UnitRng rng = {0xdeadbeefcafef00dULL};
  char text[512];
  for (int round = 0; round < 2000; round++) {
    size_t length = (size_t)unit_rng_below(&rng, sizeof text);
    for (size_t i = 0; i < length; i++) text[i] = (char)unit_rng_below(&rng, 256);
    Lexed *lx = lex_text(text, length);
    assert_true(lx->count < MAX_TOKENS || length >= MAX_TOKENS / 2);
    if (lx->count < MAX_TOKENS) assert_int_equal(lx->kinds[lx->count - 1], YYEOF);
    lexed_free(lx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_token_kinds),
      cmocka_unit_test(test_longest_match),
      cmocka_unit_test(test_comments),
      cmocka_unit_test(test_literal_values),
      cmocka_unit_test(test_duration_values),
      cmocka_unit_test(test_string_escapes),
      cmocka_unit_test(test_identifier_text),
      cmocka_unit_test(test_locations),
      cmocka_unit_test(test_semicolon_at_line_end),
      cmocka_unit_test(test_no_semicolon_after_incomplete_line),
      cmocka_unit_test(test_operator_at_line_start_continues),
      cmocka_unit_test(test_prefix_tokens_start_a_statement),
      cmocka_unit_test(test_brackets_control_insertion),
      cmocka_unit_test(test_error_unterminated_string),
      cmocka_unit_test(test_error_invalid_number),
      cmocka_unit_test(test_error_number_ranges),
      cmocka_unit_test(test_error_unexpected_characters),
      cmocka_unit_test(test_error_bad_escapes),
      cmocka_unit_test(test_continues_after_error),
      cmocka_unit_test(test_random_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
