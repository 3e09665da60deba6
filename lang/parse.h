/* Parsing a source file into a Module (lang/ast.h). */
#ifndef SIMVM_PARSE_H
#define SIMVM_PARSE_H

#include <stdbool.h>

#include "ast.h"
#include "diag.h"
#include "source.h"

/* Parse `source` into `module` (which owns a fresh arena afterwards, to be
 * freed with ast_free even on failure). Errors are reported on `diag`;
 * returns true when there were none. */
bool parse_source(const Source *source, Diag *diag, Module *module);

#endif
