/* The grammar of .sim scripts: a pure (reentrant) LALR(1) parser with
 * locations and no conflicts. Errors recover at statement and declaration
 * boundaries, so one run reports several. The language is described in
 * docs/LANGUAGE.md. */
%require "3.6"
%define api.pure full
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {Parser *p}

%code top {
/* the parser's stacks come from the one allocation funnel too */
#include <stdlib.h>
#include "../base/alloc.h"
#define YYMALLOC mem_malloc
#define YYFREE free
}

%code requires {
#include "ast.h"
#include "diag.h"
#include "lexer.h"
#include "source.h"
typedef struct Parser Parser;
}

%union {
  int64_t integer;
  double number;
  struct { char *chars; int length; } string;
  char *name;
  Expr *expr;
  Stmt *stmt;
  Decl *decl;
  NodeList list;
  MatchArm *arm;
  FieldUpdate *update;
}

%code provides {
/* Everything one parse needs; the parse result lands in `module`. */
struct Parser {
  Lexer lexer;
  const Source *source;
  Diag *diag;
  Arena *arena;
  Module *module;
  YYSTYPE peek_value;       /* the token behind an inserted ';' */
  YYLTYPE peek_loc;
  size_t ast_limit;         /* bytes the syntax tree may take; 0: no limit */
  bool too_large;           /* it passed them: the parse ends, no more errors */
};

/* The lexer (lang/lexer.re): the next token, with semicolon insertion. */
int lexer_next(Lexer *lexer, Parser *p, YYSTYPE *value, YYLTYPE *loc);
}

%code {
#include <stdio.h>
#include <string.h>

static int yylex(YYSTYPE *value, YYLTYPE *loc, Parser *p) { return lexer_next(&p->lexer, p, value, loc); }

/* Report `message` at `loc`, adding the bracket left open when that is the
 * likely cause: a ( [ or #{ opened on an earlier line, or any bracket at
 * the end of input (blocks span lines, so an open { alone says nothing). */
static void report(Parser *p, const YYLTYPE *loc, const char *message) {
  if (p->too_large) return; /* the end of input was made up */
  int line, col;
  const char *open = lexer_open_bracket(&p->lexer, &line, &col);
  bool at_end = p->lexer.last_token == YYEOF;
  if (open && line < loc->first_line && (open[0] != '{' || at_end))
    diag_error(p->diag, p->source, loc->first_line, loc->first_column, "%s (the '%s' at line %d, column %d is not closed)",
               message, open, line, col);
  else
    diag_error(p->diag, p->source, loc->first_line, loc->first_column, "%s", message);
}

static void yyerror(YYLTYPE *loc, Parser *p, const char *message) {
  if (strcmp(message, "memory exhausted") == 0) message = "nested too deeply (more than 10000 levels)";
  report(p, loc, message);
}

#define LOC(l) ((Loc){(l).first_line, (l).first_column})
#define NEW(kind, l) ast_expr(p->arena, (kind), LOC(l))

static Expr *binary(Parser *p, Operator op, Expr *left, Expr *right, YYLTYPE l) {
  Expr *e = NEW(EXPR_BINARY, l);
  e->as.binary.op = op;
  e->as.binary.left = left;
  e->as.binary.right = right;
  return e;
}

static Expr *pair(Parser *p, ExprKind kind, Expr *left, Expr *right, YYLTYPE l) {
  Expr *e = NEW(kind, l);
  e->as.then.left = left;
  e->as.then.right = right;
  return e;
}

/* The left side of `x <- e` or `let x = e`: a plain name as it always was,
 * anything else a pattern for the compiler to check and destructure with. */
static void name_or_pattern(Parser *p, Stmt *s, Expr *left) {
  (void)p;
  if (left->kind == EXPR_NAME) s->name = left->as.name;
  else s->pattern = left;
}

/* A string literal's piece of an interpolated string. */
static Expr *string_part(Parser *p, char *chars, int length, YYLTYPE l) {
  Expr *e = NEW(EXPR_STRING, l);
  e->as.string.chars = chars;
  e->as.string.length = length;
  return e;
}

/* A statement `if c then a` (or `unless c then a`): the if expression
 * whose other branch is `return ()`, so `a` is evaluated only when chosen. */
static Stmt *statement_if(Parser *p, Expr *cond, Expr *action, bool unless, YYLTYPE l) {
  Expr *nothing = NEW(EXPR_RETURN, l);
  nothing->as.ret = NEW(EXPR_UNIT, l);
  Expr *e = NEW(EXPR_IF, l);
  e->as.if_.cond = cond;
  e->as.if_.then = unless ? nothing : action;
  e->as.if_.otherwise = unless ? action : nothing;
  return ast_stmt(p->arena, STMT_EXPR, LOC(l), NULL, e);
}

static Expr *lambda(Parser *p, NodeList params, Expr *body, const char *name, YYLTYPE l) {
  Expr *e = NEW(EXPR_LAMBDA, l);
  e->as.lambda.params = params;
  e->as.lambda.body = body;
  e->as.lambda.name = name;
  return e;
}
}

%token <integer> INT "integer" DURATION "duration"
%token <number> FLOAT "float"
%token <string> STRING "string"
%token <string> STRING_HEAD "string with '{'" STRING_MIDDLE "'}' of an interpolation" STRING_TAIL "end of an interpolated string"
%token <name> IDENT "name"
%token FN "fn" IF "if" THEN "then" ELSE "else" LET "let" IN "in" RETURN "return"
%token TRUE "true" FALSE "false" NONE "none" IMPORT "import" MATCH "match" UNLESS "unless"
%token ARROW "<-" FAT_ARROW "=>" THEN_OP ">>" BIND_OP ">>=" CONCAT "++"
%token EQ "==" NE "!=" LE "<=" GE ">=" AND "&&" OR "||" HASH_BRACE "#{" CONS_OP "::"

%type <expr> expr postfix primary block
%type <stmt> stmt
%type <decl> decl
%type <list> interpolation
%type <list> stmt_seq stmt_list params param_list args arg_list fields field_list arms arm_list updates update_list
%type <update> update
%type <arm> arm

%precedence BODY
%left THEN_OP BIND_OP
%precedence RETURN_ARG   /* return e >>= f  is  (return e) >>= f */
%left OR
%left AND
%nonassoc EQ NE '<' LE '>' GE
%right CONCAT CONS_OP
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY

%%

program
  : decl_seq
  ;

decl_seq
  : %empty
  | decl_list
  | decl_list ';'
  ;

decl_list
  : decl                  { if ($1) node_list_push(p->arena, &p->module->decls, $1); }
  | decl_list ';' decl    { if ($3) node_list_push(p->arena, &p->module->decls, $3); }
  ;

decl
  : IMPORT STRING                        { $$ = ast_decl(p->arena, DECL_IMPORT, LOC(@1), $2.chars, NULL); }
  | FN IDENT '(' params ')' '=' expr     { $$ = ast_decl(p->arena, DECL_FN, LOC(@2), $2, lambda(p, $4, $7, $2, @1)); }
  | FN IDENT '(' params ')' block        { $$ = ast_decl(p->arena, DECL_FN, LOC(@2), $2, lambda(p, $4, $6, $2, @1)); }
  | IDENT '=' expr                       { $$ = ast_decl(p->arena, DECL_VALUE, LOC(@1), $1, $3); }
  | error                                { $$ = NULL; }
  ;

params
  : %empty                 { $$ = (NodeList){0}; }
  | param_list
  ;

param_list
  : IDENT                  { $$ = (NodeList){0}; node_list_push(p->arena, &$$, $1); }
  | param_list ',' IDENT   { $$ = $1; node_list_push(p->arena, &$$, $3); }
  ;

block
  : '{' stmt_seq '}'       { $$ = NEW(EXPR_BLOCK, @1); $$->as.block = $2; }
  ;

stmt_seq
  : %empty                 { $$ = (NodeList){0}; }
  | stmt_list
  | stmt_list ';'
  ;

stmt_list
  : stmt                   { $$ = (NodeList){0}; if ($1) node_list_push(p->arena, &$$, $1); }
  | stmt_list ';' stmt     { $$ = $1; if ($3) node_list_push(p->arena, &$$, $3); }
  ;

stmt
  : expr ARROW expr        { $$ = ast_stmt(p->arena, STMT_BIND, LOC(@1), NULL, $3); name_or_pattern(p, $$, $1); }
  | LET expr '=' expr      { $$ = ast_stmt(p->arena, STMT_LET, LOC(@2), NULL, $4); name_or_pattern(p, $$, $2); }
  | expr                   { $$ = ast_stmt(p->arena, STMT_EXPR, LOC(@1), NULL, $1); }
  | FN IDENT '(' params ')' '=' expr { $$ = ast_stmt(p->arena, STMT_FN, LOC(@2), $2, lambda(p, $4, $7, $2, @1)); }
  | FN IDENT '(' params ')' block    { $$ = ast_stmt(p->arena, STMT_FN, LOC(@2), $2, lambda(p, $4, $6, $2, @1)); }
  | IF expr THEN expr      { $$ = statement_if(p, $2, $4, false, @1); }
  | UNLESS expr THEN expr  { $$ = statement_if(p, $2, $4, true, @1); }
  | error                  { $$ = NULL; }
  ;

expr
  : expr THEN_OP expr      { $$ = pair(p, EXPR_THEN, $1, $3, @2); }
  | expr BIND_OP expr      { $$ = pair(p, EXPR_BIND, $1, $3, @2); }
  | expr OR expr           { $$ = pair(p, EXPR_OR, $1, $3, @2); }
  | expr AND expr          { $$ = pair(p, EXPR_AND, $1, $3, @2); }
  | expr EQ expr           { $$ = binary(p, BIN_EQ, $1, $3, @2); }
  | expr NE expr           { $$ = binary(p, BIN_NE, $1, $3, @2); }
  | expr '<' expr          { $$ = binary(p, BIN_LT, $1, $3, @2); }
  | expr LE expr           { $$ = binary(p, BIN_LE, $1, $3, @2); }
  | expr '>' expr          { $$ = binary(p, BIN_GT, $1, $3, @2); }
  | expr GE expr           { $$ = binary(p, BIN_GE, $1, $3, @2); }
  | expr CONCAT expr       { $$ = binary(p, BIN_CONCAT, $1, $3, @2); }
  | expr CONS_OP expr      { $$ = binary(p, BIN_CONS, $1, $3, @2); }
  | expr '+' expr          { $$ = binary(p, BIN_ADD, $1, $3, @2); }
  | expr '-' expr          { $$ = binary(p, BIN_SUB, $1, $3, @2); }
  | expr '*' expr          { $$ = binary(p, BIN_MUL, $1, $3, @2); }
  | expr '/' expr          { $$ = binary(p, BIN_DIV, $1, $3, @2); }
  | expr '%' expr          { $$ = binary(p, BIN_MOD, $1, $3, @2); }
  | '-' expr %prec UNARY   { $$ = binary(p, UN_NEG, $2, NULL, @1); $$->kind = EXPR_UNARY; }
  | '!' expr %prec UNARY   { $$ = binary(p, UN_NOT, $2, NULL, @1); $$->kind = EXPR_UNARY; }
  | IF expr THEN expr ELSE expr %prec BODY {
      $$ = NEW(EXPR_IF, @1);
      $$->as.if_.cond = $2; $$->as.if_.then = $4; $$->as.if_.otherwise = $6;
    }
  | LET expr '=' expr IN expr %prec BODY {
      $$ = NEW(EXPR_LET, @1);
      if ($2->kind == EXPR_NAME) $$->as.let.name = $2->as.name;
      else $$->as.let.pattern = $2;
      $$->as.let.name_loc = LOC(@2); $$->as.let.value = $4; $$->as.let.body = $6;
    }
  | FN '(' params ')' FAT_ARROW expr %prec BODY { $$ = lambda(p, $3, $6, NULL, @1); }
  | FN '(' params ')' block                     { $$ = lambda(p, $3, $5, NULL, @1); }
  | RETURN expr %prec RETURN_ARG { $$ = NEW(EXPR_RETURN, @1); $$->as.ret = $2; }
  | postfix
  ;

postfix
  : primary
  | postfix '(' args ')'   { $$ = NEW(EXPR_CALL, @1); $$->as.call.callee = $1; $$->as.call.args = $3; }
  | postfix '[' expr ']'   { $$ = NEW(EXPR_INDEX, @2); $$->as.index.object = $1; $$->as.index.index = $3; }
  | postfix '.' IDENT      { $$ = NEW(EXPR_FIELD, @3); $$->as.field.object = $1; $$->as.field.name = $3; }
  ;

primary
  : INT                    { $$ = NEW(EXPR_INT, @1); $$->as.integer = $1; }
  | FLOAT                  { $$ = NEW(EXPR_FLOAT, @1); $$->as.number = $1; }
  | DURATION               { $$ = NEW(EXPR_DURATION, @1); $$->as.integer = $1; }
  | STRING                 { $$ = NEW(EXPR_STRING, @1); $$->as.string.chars = $1.chars; $$->as.string.length = $1.length; }
  | TRUE                   { $$ = NEW(EXPR_BOOL, @1); $$->as.boolean = true; }
  | FALSE                  { $$ = NEW(EXPR_BOOL, @1); $$->as.boolean = false; }
  | NONE                   { $$ = NEW(EXPR_NONE, @1); }
  | '(' ')'                { $$ = NEW(EXPR_UNIT, @1); }
  | IDENT                  { $$ = NEW(EXPR_NAME, @1); $$->as.name = $1; }
  | '(' expr ')'           { $$ = $2; }
  | '[' args ']'           { $$ = NEW(EXPR_LIST, @1); $$->as.items = $2; }
  | interpolation STRING_TAIL { $$ = NEW(EXPR_INTERP, @1); $$->as.items = $1; node_list_push(p->arena, &$$->as.items, string_part(p, $2.chars, $2.length, @2)); }
  | HASH_BRACE fields '}'  { $$ = NEW(EXPR_RECORD, @1); $$->as.record.names = $2; }
  | HASH_BRACE expr '|' updates '}' { $$ = NEW(EXPR_UPDATE, @1); $$->as.update.record = $2; $$->as.update.fields = $4; }
  | block
  | MATCH expr '{' arms '}' { $$ = NEW(EXPR_MATCH, @1); $$->as.match.subject = $2; $$->as.match.arms = $4; }
  ;

/* match e { pattern [if guard] => expr; ... }: arms end at a line break
 * (an inserted ';'), a ';' or a ','. A pattern is parsed as an expression
 * and checked as a pattern by the compiler (lang/pattern.h), as are the
 * left sides of let and <-. */
arms
  : arm_list
  | arm_list ';'
  | arm_list ','
  ;

arm_list
  : arm                    { $$ = (NodeList){0}; node_list_push(p->arena, &$$, $1); }
  | arm_list ';' arm       { $$ = $1; node_list_push(p->arena, &$$, $3); }
  | arm_list ',' arm       { $$ = $1; node_list_push(p->arena, &$$, $3); }
  ;

arm
  : expr FAT_ARROW expr            { $$ = ast_arm(p->arena, LOC(@1), $1, NULL, $3); }
  | expr IF expr FAT_ARROW expr    { $$ = ast_arm(p->arena, LOC(@1), $1, $3, $5); }
  ;

args
  : %empty                 { $$ = (NodeList){0}; }
  | arg_list
  | arg_list ','
  ;

arg_list
  : expr                   { $$ = (NodeList){0}; node_list_push(p->arena, &$$, $1); }
  | arg_list ',' expr      { $$ = $1; node_list_push(p->arena, &$$, $3); }
  ;

/* A record's names and values alternate in one list until the action splits them. */
fields
  : %empty                 { $$ = (NodeList){0}; }
  | field_list
  | field_list ','
  ;

field_list
  : IDENT ':' expr                 { $$ = (NodeList){0}; node_list_push(p->arena, &$$, $1); node_list_push(p->arena, &$$, $3); }
  | field_list ',' IDENT ':' expr  { $$ = $1; node_list_push(p->arena, &$$, $3); node_list_push(p->arena, &$$, $5); }
  ;

/* "a{x}b{y}c": the lexer gives the text before each "{" and after each "}"
 * as tokens around the expressions' own; the parts alternate, text first. */
interpolation
  : STRING_HEAD expr       { $$ = (NodeList){0}; node_list_push(p->arena, &$$, string_part(p, $1.chars, $1.length, @1)); node_list_push(p->arena, &$$, $2); }
  | interpolation STRING_MIDDLE expr { $$ = $1; node_list_push(p->arena, &$$, string_part(p, $2.chars, $2.length, @2)); node_list_push(p->arena, &$$, $3); }
  ;

/* #{r | f: e, +g: e}: the fields a record update sets; `+` lets one be new. */
updates
  : update_list
  | update_list ','
  ;

update_list
  : update                 { $$ = (NodeList){0}; node_list_push(p->arena, &$$, $1); }
  | update_list ',' update { $$ = $1; node_list_push(p->arena, &$$, $3); }
  ;

update
  : IDENT ':' expr         { $$ = arena_alloc(p->arena, sizeof(FieldUpdate)); *$$ = (FieldUpdate){LOC(@1), $1, $3, false}; }
  | '+' IDENT ':' expr     { $$ = arena_alloc(p->arena, sizeof(FieldUpdate)); *$$ = (FieldUpdate){LOC(@2), $2, $4, true}; }
  ;

%%

/* Syntax errors in the user's terms: a ';' the lexer inserted is the end of
 * a line, and an 'if' that still wants its 'else' says so. */
static int yyreport_syntax_error(const yypcontext_t *ctx, Parser *p) {
  yysymbol_kind_t expected[YYNTOKENS];
  int count = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
  yysymbol_kind_t lookahead = yypcontext_token(ctx);
  char text[512];
  int n = snprintf(text, sizeof text, "syntax error");
  if (lookahead != YYSYMBOL_YYEMPTY) {
    const char *name = yysymbol_name(lookahead);
    if (lookahead == YYSYMBOL_YYEOF) name = "end of file";
    else if (p->lexer.inserted && strcmp(name, "';'") == 0) name = "end of line";
    n += snprintf(text + n, sizeof text - (size_t)n, ", unexpected %s", name);
  }
  bool wants_else = false;
  for (int i = 0; i < count; i++) wants_else |= expected[i] == YYSYMBOL_ELSE;
  if (count > 0 && count <= 4) {
    for (int i = 0; i < count && n < (int)sizeof text; i++)
      n += snprintf(text + n, sizeof text - (size_t)n, "%s%s", i ? " or " : ", expecting ", yysymbol_name(expected[i]));
  }
  if (wants_else && n < (int)sizeof text)
    snprintf(text + n, sizeof text - (size_t)n,
             " ('if c then a' without 'else' is a statement of a block: as a value it needs 'else b')");
  report(p, yypcontext_location(ctx), text);
  return 0;
}
