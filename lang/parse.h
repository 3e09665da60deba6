/* Parsing a source file into a Module (lang/ast.h). */
#ifndef SIMVM_PARSE_H
#define SIMVM_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"
#include "diag.h"
#include "source.h"

/* Parse `source` into `module` (which owns a fresh arena afterwards, to be
 * freed with ast_free even on failure). Errors are reported on `diag`;
 * returns true when there were none. */
bool parse_source(const Source *source, Diag *diag, Module *module);

/* The same, giving up with an error once the syntax tree takes more than
 * `ast_limit` bytes (0: no limit): memory stays proportional to the source
 * however dense it is (a node costs 30 to 50 bytes, a token as little as 2). */
bool parse_source_within(const Source *source, Diag *diag, Module *module, size_t ast_limit);

#endif
