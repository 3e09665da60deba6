#include "parse.h"

#include "parser.h"

int yyparse(Parser *p);

bool parse_source(const Source *source, Diag *diag, Module *module) { return parse_source_within(source, diag, module, 0); }

bool parse_source_within(const Source *source, Diag *diag, Module *module, size_t ast_limit) {
  Parser parser = {0};
  parser.ast_limit = ast_limit;
  module->arena = arena_new();
  module->decls = (NodeList){0};
  parser.source = source;
  parser.diag = diag;
  parser.arena = module->arena;
  parser.module = module;
  lexer_init(&parser.lexer, source->text, source->length);
  int before = diag->errors;
  int status = yyparse(&parser);
  return status == 0 && diag->errors == before;
}
