/* The re2c lexer. Produces bison tokens (parser.h) with locations, inserts
 * statement-ending semicolons at line ends (see lexer.h), and reports bad
 * characters, numbers and strings as diagnostics, returning YYerror so the
 * parser recovers without a second message. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser.h"

void lexer_init(Lexer *lexer, const char *text, unsigned long length) {
  memset(lexer, 0, sizeof *lexer);
  lexer->text = text;
  lexer->cursor = text;
  lexer->limit = text + length;
  lexer->line_start = text;
  lexer->line = 1;
  lexer->last_token = ';';
  if (length >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) { /* a UTF-8 byte order mark */
    lexer->cursor += 3;
    lexer->line_start += 3;
  }
}

#define lex_error(p, line, col, ...) diag_error((p)->diag, (p)->source, (line), (col), __VA_ARGS__)

/* Decode the body of a string literal (between the quotes) into the arena. */
static bool decode_string(Parser *p, const char *start, const char *end, int line, int col, YYSTYPE *value) {
  char *out = arena_alloc(p->arena, (size_t)(end - start) + 1);
  int length = 0;
  for (const char *s = start; s < end; s++) {
    if (*s != '\\') {
      out[length++] = *s;
      continue;
    }
    s++;
    switch (*s) {
      case 'n': out[length++] = '\n'; break;
      case 't': out[length++] = '\t'; break;
      case 'r': out[length++] = '\r'; break;
      case '\\': out[length++] = '\\'; break;
      case '"': out[length++] = '"'; break;
      case '{': out[length++] = '{'; break;
      case '}': out[length++] = '}'; break;
      case 'x': {
        int hi = s + 1 < end ? s[1] : 0, lo = s + 2 < end ? s[2] : 0;
        char hex[3] = {(char)hi, (char)lo, 0};
        char *stop;
        long code = strtol(hex, &stop, 16);
        if (stop != hex + 2 || code == 0) {
          lex_error(p, line, col + (int)(s - 1 - start), "invalid escape '\\x%s' (two hex digits, not 00)", hex);
          return false;
        }
        out[length++] = (char)code;
        s += 2;
        break;
      }
      default: {
        char shown[2] = {*s, 0};
        lex_error(p, line, col + (int)(s - 1 - start), "unknown escape '\\%s' in string", shown);
        return false;
      }
    }
  }
  out[length] = '\0';
  value->string.chars = out;
  value->string.length = length;
  return true;
}

/* Parse digits with optional '_' separators; false on overflow. */
static bool parse_integer(const char *start, const char *end, int64_t *out) {
  uint64_t n = 0;
  for (const char *s = start; s < end; s++) {
    if (*s == '_') continue;
    int digit = *s - '0';
    if (n > (uint64_t)(INT64_MAX - digit) / 10) return false;
    n = n * 10 + (uint64_t)digit;
  }
  *out = (int64_t)n;
  return true;
}

static double parse_float(const char *start, const char *end) {
  char text[128];
  size_t n = 0;
  for (const char *s = start; s < end && n < sizeof text - 1; s++)
    if (*s != '_') text[n++] = *s;
  text[n] = '\0';
  return strtod(text, NULL);
}

/* A duration literal: number and unit, computed exactly in decimal (no
 * rounding through double): digits * 10^exponent nanoseconds, which must be
 * a whole number that fits in 64 bits. */
static int lex_duration(Parser *p, const char *start, const char *end, int line, int col, YYSTYPE *value) {
  const char *unit = end;
  while (unit > start && unit[-1] >= 'a' && unit[-1] <= 'z') unit--;
  int exponent = unit == end - 1 ? 9 : unit[0] == 'm' ? 6 : unit[0] == 'u' ? 3 : 0;
  /* the significant digits, and the exponent the point and 'e' add */
  char digits[64];
  int count = 0;
  bool after_point = false, too_long = false;
  const char *s = start;
  for (; s < unit && *s != 'e' && *s != 'E'; s++) {
    if (*s == '_') continue;
    if (*s == '.') {
      after_point = true;
      continue;
    }
    if (count == 0 && *s == '0') { /* leading zeros carry nothing */
      if (after_point) exponent--;
      continue;
    }
    if (count == (int)sizeof digits) too_long = true;
    else digits[count++] = *s;
    if (after_point) exponent--;
  }
  if (s < unit) { /* the exponent part, clamped: beyond it the answer is the same */
    long e = strtol(s + 1, NULL, 10);
    exponent += (int)(e > 1000 ? 1000 : e < -1000 ? -1000 : e);
  }
  /* trailing zeros of the digits move into the exponent */
  while (count > 0 && digits[count - 1] == '0') {
    count--;
    exponent++;
  }
  if (count == 0) exponent = 0; /* zero, whatever its exponent */
  if (exponent < 0) {
    lex_error(p, line, col, "duration literal is not a whole number of nanoseconds");
    return YYerror;
  }
  uint64_t ns = 0;
  bool overflow = too_long;
  for (int i = 0; i < count && !overflow; i++)
    overflow = __builtin_mul_overflow(ns, 10, &ns) || __builtin_add_overflow(ns, (uint64_t)(digits[i] - '0'), &ns);
  for (int i = 0; i < exponent && ns != 0 && !overflow; i++) overflow = __builtin_mul_overflow(ns, 10, &ns);
  if (overflow || ns > INT64_MAX) {
    lex_error(p, line, col, "duration literal is too large for 64-bit nanoseconds");
    return YYerror;
  }
  value->integer = (int64_t)ns;
  return DURATION;
}

/* The error of a string's "{" whose "}" is missing on its line (at the
 * innermost one), reported at that "{"; the lexer goes on as if outside. */
static int unclosed_interpolation(Lexer *lx, Parser *p) {
  int at = lx->interpolation_depth - 1;
  lex_error(p, lx->interpolations[at].line, lx->interpolations[at].col,
            "unclosed '{' in a string: an interpolation ends with '}' on its line (write '\\{' for a brace)");
  lx->interpolation_depth = 0;
  return YYerror;
}

/* Past the rest of a string after an error in it: to its closing quote
 * (escapes skipped), or to the end of the line. */
static void skip_string(Lexer *lx) {
  const char *s = lx->cursor;
  while (s < lx->limit && *s != '"' && *s != '\n') s += *s == '\\' && s + 1 < lx->limit && s[1] != '\n' ? 2 : 1;
  lx->cursor = s < lx->limit && *s == '"' ? s + 1 : s;
}

/* A string's text from lx->cursor: after its opening quote, or with
 * `resume` after the "}" of an interpolation. It runs to the closing quote
 * (STRING, or STRING_TAIL after an interpolation) or to a "{" that starts
 * an interpolation (STRING_HEAD, or STRING_MIDDLE), whose expression's
 * tokens come next. (line, col): the quote or the "}". */
static int lex_string(Lexer *lx, Parser *p, YYSTYPE *value, int line, int col, bool resume) {
  const char *start = lx->cursor, *s = start;
  while (s < lx->limit && *s != '"' && *s != '{' && *s != '\n') s += *s == '\\' && s + 1 < lx->limit && s[1] != '\n' ? 2 : 1;
  if (s >= lx->limit || *s == '\n') {
    lx->cursor = s;
    if (lx->interpolation_depth) return unclosed_interpolation(lx, p); /* the string's end was taken for another's */
    lex_error(p, line, col, "unterminated string (a string must end on the line it starts)");
    return YYerror;
  }
  lx->cursor = s + 1;
  if (!decode_string(p, start, s, line, col + 1, value)) {
    if (*s == '{') skip_string(lx); /* and its interpolations: one error is enough */
    return YYerror;
  }
  if (*s == '"') return resume ? STRING_TAIL : STRING;
  int brace_col = col + 1 + (int)(s - start);
  const char *next = s + 1;
  while (next < lx->limit && (*next == ' ' || *next == '\t')) next++;
  if (next < lx->limit && *next == '}') {
    lex_error(p, line, brace_col, "empty '{}' in a string: put an expression in it, or write '\\{}' for braces");
    skip_string(lx);
    return YYerror;
  }
  if (lx->interpolation_depth == LEXER_MAX_INTERPOLATION) {
    lex_error(p, line, brace_col, "interpolations nested too deeply (more than %d strings)", LEXER_MAX_INTERPOLATION);
    lx->interpolation_depth = 0;
    while (lx->cursor < lx->limit && *lx->cursor != '\n') lx->cursor++;
    return YYerror;
  }
  lx->interpolations[lx->interpolation_depth].braces = 0;
  lx->interpolations[lx->interpolation_depth].line = line;
  lx->interpolations[lx->interpolation_depth].col = brace_col;
  lx->interpolation_depth++;
  return resume ? STRING_MIDDLE : STRING_HEAD;
}

/* The raw scanner: one token, no semicolon insertion. */
static int lex_raw(Lexer *lx, Parser *p, YYSTYPE *value, YYLTYPE *loc) {
  lx->newline_before = false;
  for (;;) {
    lx->token = lx->cursor;
    int line = lx->line, col = (int)(lx->token - lx->line_start) + 1;
    loc->first_line = loc->last_line = line;
    loc->first_column = loc->last_column = col;
    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:define:YYCURSOR = "lx->cursor";
      re2c:define:YYMARKER = "lx->marker";
      re2c:define:YYLIMIT = "lx->limit";
      re2c:yyfill:enable = 0;
      re2c:eof = 0;

      digit  = [0-9];
      digits = digit (digit | "_")*;
      ident  = [a-zA-Z_] [a-zA-Z0-9_]*;
      number = digits ("." digits)? ([eE] [+-]? digits)?;
      unit   = "ns" | "us" | "ms" | "s";

      $ {
        if (lx->interpolation_depth) return unclosed_interpolation(lx, p);
        return YYEOF;
      }

      "\n" {
        if (lx->interpolation_depth) {
          lx->cursor--; /* the line still ends here, for the parser's recovery */
          return unclosed_interpolation(lx, p);
        }
        lx->line++; lx->line_start = lx->cursor; lx->newline_before = true; continue; }
      [ \t\r]+ { continue; }
      "--" [^\n\x00]* { continue; }

      "fn"     { return FN; }
      "if"     { return IF; }
      "then"   { return THEN; }
      "else"   { return ELSE; }
      "let"    { return LET; }
      "in"     { return IN; }
      "return" { return RETURN; }
      "true"   { return TRUE; }
      "false"  { return FALSE; }
      "none"   { return NONE; }
      "import" { return IMPORT; }
      "match"  { return MATCH; }

      number unit { return lex_duration(p, (const char *)lx->token, (const char *)lx->cursor, line, col, value); }
      digits {
        if (!parse_integer(lx->token, lx->cursor, &value->integer)) {
          lex_error(p, line, col, "integer literal is too large for 64 bits");
          return YYerror;
        }
        return INT;
      }
      digits ("." digits)? [eE] [+-]? digits | digits "." digits {
        value->number = parse_float(lx->token, lx->cursor);
        return FLOAT;
      }

      number [a-zA-Z_] [a-zA-Z0-9_]* {
        lex_error(p, line, col, "invalid number '%.*s' (duration units are ns, us, ms and s)",
                  (int)(lx->cursor - lx->token), lx->token);
        return YYerror;
      }
      ident {
        value->name = arena_strndup(p->arena, lx->token, (size_t)(lx->cursor - lx->token));
        return IDENT;
      }

      ["] { return lex_string(lx, p, value, line, col, false); }
      "}" {
        if (lx->interpolation_depth) {
          if (lx->interpolations[lx->interpolation_depth - 1].braces == 0) {
            lx->interpolation_depth--; /* the interpolation's own: the string goes on */
            return lex_string(lx, p, value, line, col, true);
          }
          lx->interpolations[lx->interpolation_depth - 1].braces--;
        }
        return '}';
      }

      "<-"  { return ARROW; }
      "=>"  { return FAT_ARROW; }
      ">>=" { return BIND_OP; }
      ">>"  { return THEN_OP; }
      "++"  { return CONCAT; }
      "=="  { return EQ; }
      "!="  { return NE; }
      "<="  { return LE; }
      ">="  { return GE; }
      "&&"  { return AND; }
      "||"  { return OR; }
      "#{"  { return HASH_BRACE; }
      "::"  { return CONS_OP; }
      [-+*/%<>=!(){}[\],;.:|] { return *lx->token; }

      [\xc0-\xdf] [\x80-\xbf] | [\xe0-\xef] [\x80-\xbf]{2} | [\xf0-\xf7] [\x80-\xbf]{3} {
        lex_error(p, line, col, "unexpected character '%.*s'", (int)(lx->cursor - lx->token), lx->token);
        return YYerror;
      }

      * {
        unsigned char c = (unsigned char)*lx->token;
        char shown[16];
        if (c >= 0x20 && c < 0x7f) snprintf(shown, sizeof shown, "'%c'", c);
        else snprintf(shown, sizeof shown, "byte 0x%02x", c);
        lex_error(p, line, col, "unexpected %s", shown);
        return YYerror;
      }
    */
  }
}

static bool ends_statement(int kind) {
  switch (kind) {
    case IDENT: case INT: case FLOAT: case DURATION: case STRING:
    case TRUE: case FALSE: case NONE: case ')': case ']': case '}': case STRING_TAIL:
    case YYerror: /* so the parser's recovery can resume on the next line */
      return true;
    default:
      return false;
  }
}

static bool continues_expression(int kind) {
  switch (kind) {
    case THEN_OP: case BIND_OP: case OR: case AND: case EQ: case NE: case LE: case GE:
    case CONCAT: case CONS_OP: case '<': case '>': case '+': case '*': case '/': case '%': case '.':
    case THEN: case ELSE: case IN: case FAT_ARROW: case ')': case ']': case ',': case '=':
    case YYEOF:
      return true;
    default:
      return false;
  }
}

const char *lexer_open_bracket(const Lexer *lx, int *line, int *col) {
  if (lx->depth == 0 || lx->depth > LEXER_MAX_NESTING) return NULL;
  *line = lx->brackets[lx->depth - 1].line;
  *col = lx->brackets[lx->depth - 1].col;
  switch (lx->brackets[lx->depth - 1].kind) {
    case '(': return "(";
    case '[': return "[";
    case '#': return "#{";
    default: return "{";
  }
}

static void track_brackets(Lexer *lx, int kind, const YYLTYPE *loc) {
  char open = 0;
  switch (kind) {
    case '(': open = '('; break;
    case '[': open = '['; break;
    case '{': open = '{'; break;
    case HASH_BRACE: open = '#'; break;
    case ')': case ']': case '}':
      if (lx->depth > 0) lx->depth--;
      return;
    default:
      return;
  }
  if (lx->depth < LEXER_MAX_NESTING) {
    lx->brackets[lx->depth].kind = open;
    lx->brackets[lx->depth].line = loc->first_line;
    lx->brackets[lx->depth].col = loc->first_column;
  }
  lx->depth++;
}

static bool in_statement_context(const Lexer *lx) {
  if (lx->depth == 0) return true;
  if (lx->depth > LEXER_MAX_NESTING) return false;
  return lx->brackets[lx->depth - 1].kind == '{';
}

/* Whether the `(` at `s` closes, on its line, before the word `then`:
 * `unless(ready) then a` starts a statement, `unless(c, act)` calls the
 * prelude's function. Strings are skipped whole. */
static bool paren_then_follows(const char *s, const char *limit) {
  int depth = 0;
  for (; s < limit && *s != '\n'; s++) {
    if (*s == '"') {
      for (s++; s < limit && *s != '"' && *s != '\n'; s++)
        if (*s == '\\' && s + 1 < limit) s++;
      if (s >= limit || *s == '\n') return false;
    } else if (*s == '(') {
      depth++;
    } else if (*s == ')' && --depth == 0) {
      for (s++; s < limit && (*s == ' ' || *s == '\t'); s++) {}
      return limit - s >= 4 && memcmp(s, "then", 4) == 0 &&
             !(s + 4 < limit && (s[4] == '_' || (unsigned)((s[4] | 32) - 'a') < 26 || (unsigned)(s[4] - '0') < 10));
    }
  }
  return false;
}

/* `unless` begins a statement `unless c then a` where a statement starts in
 * a block, but for a call of the prelude's unless(c, act) (a `(` right
 * after it that does not close before `then`); anywhere else it is a name. */
static bool starts_unless(const Lexer *lx, int kind, const YYSTYPE *value) {
  if (kind != IDENT || strcmp(value->name, "unless") != 0) return false;
  if (lx->depth == 0 || !in_statement_context(lx) || (lx->last_token != ';' && lx->last_token != '{')) return false;
  return *lx->cursor != '(' || paren_then_follows(lx->cursor, lx->limit);
}

int lexer_next(Lexer *lx, Parser *p, YYSTYPE *value, YYLTYPE *loc) {
  int kind;
  if (p->ast_limit && arena_size(p->arena) > p->ast_limit) {
    /* too dense to compile in memory proportional to its size: end the
     * input here, and say why once */
    loc->first_line = loc->last_line = lx->line;
    loc->first_column = loc->last_column = (int)(lx->cursor - lx->line_start) + 1;
    if (!p->too_large)
      lex_error(p, lx->line, loc->first_column,
                "too large to compile: its syntax tree passed %zu MB (the limit is twice the size of this file and "
                "those importing it, plus 16 MB)", (p->ast_limit + ((size_t)1 << 20) - 1) >> 20);
    p->too_large = true;
    return YYEOF;
  }
  if (lx->has_peek) {
    lx->has_peek = false;
    *value = p->peek_value;
    *loc = p->peek_loc;
    kind = lx->peek_kind;
  } else {
    kind = lex_raw(lx, p, value, loc);
    /* a { inside an interpolation: the "}" that closes it is not the
     * interpolation's own (lex_raw's "}" rule counts them down) */
    if (lx->interpolation_depth && (kind == '{' || kind == HASH_BRACE))
      lx->interpolations[lx->interpolation_depth - 1].braces++;
    if (lx->newline_before && ends_statement(lx->last_token) && in_statement_context(lx) &&
        !continues_expression(kind)) {
      lx->has_peek = true;
      lx->peek_kind = kind;
      p->peek_value = *value;
      p->peek_loc = *loc;
      lx->last_token = ';';
      lx->inserted = true;
      /* the line's end: just after the token before it */
      loc->first_line = loc->last_line = lx->end_line;
      loc->first_column = loc->last_column = lx->end_col;
      return ';';
    }
  }
  lx->inserted = false;
  if (starts_unless(lx, kind, value)) kind = UNLESS;
  track_brackets(lx, kind, loc);
  lx->last_token = kind;
  if (!lx->has_peek) {
    lx->end_line = lx->line;
    lx->end_col = (int)(lx->cursor - lx->line_start) + 1;
  }
  return kind;
}
