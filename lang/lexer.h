/* The lexer's state: reentrant, one per file being parsed.
 *
 * Semicolons are optional at line ends: when a line ends after a token that
 * can end a statement, inside a block or at top level (not inside ( ) [ ] or
 * a record), and the next line does not start with a token that continues
 * an expression (a binary operator, `then`, `else`, `in`, `=>` ...), the
 * lexer inserts a ';'. The rule lives in lexer_next() (lang/lexer.re). */
#ifndef SIMVM_LEXER_H
#define SIMVM_LEXER_H

#include <stdbool.h>

#define LEXER_MAX_NESTING 1024
#define LEXER_MAX_INTERPOLATION 16  /* "{f("{x}")}": strings in interpolations, nested */

typedef struct {
  const char *text;         /* start of the source            */
  const char *cursor;       /* re2c's YYCURSOR                */
  const char *marker;       /* re2c's YYMARKER                */
  const char *limit;        /* one past the last byte (a NUL) */
  const char *token;        /* start of the current token     */
  const char *line_start;   /* start of the current line      */
  int line;                 /* current line, 1-based          */

  int last_token;           /* kind of the last token returned */
  bool newline_before;      /* a newline preceded the token being lexed */
  struct {
    char kind;              /* '(' '[' '{' or '#' for "#{" */
    int line, col;          /* where it was opened          */
  } brackets[LEXER_MAX_NESTING];
  int depth;                /* may exceed the array; only the top matters */
  bool has_peek;            /* a token is stashed behind an inserted ';' */
  int peek_kind;
  bool inserted;            /* the last token returned is an inserted ';' */
  int end_line, end_col;    /* just after the last token returned      */
  struct {
    int braces;             /* { and #{ open inside it: its own } is the next at 0 */
    int line, col;          /* where its { is                         */
  } interpolations[LEXER_MAX_INTERPOLATION];  /* the open "...{ of strings */
  int interpolation_depth;
} Lexer;

/* Start lexing `length` bytes at `text`; text[length] must be NUL. */
void lexer_init(Lexer *lexer, const char *text, unsigned long length);

/* The innermost bracket still open, or NULL (for "the '(' opened at ..."). */
const char *lexer_open_bracket(const Lexer *lexer, int *line, int *col);

#endif
