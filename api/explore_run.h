/* Quiet runs of the loaded program under an explorer: what --explore
 * (api/explore.c), shrinking (api/shrink.c) and schedule files
 * (api/schedule_file.c) share. A run prints nothing; its diagnostics are
 * kept (explore_captured) and its outcome becomes a Record. */
#ifndef SIMVM_API_EXPLORE_RUN_H
#define SIMVM_API_EXPLORE_RUN_H

#include "explore.h"
#include "../vm/explore/explore.h"

typedef struct {
  VM *vm;
  Explorer *ex;
  const ExploreOptions *options;
  VMConfig saved;              /* the configuration the command line made */
  int estimate;                /* pct's k: steps of the longest calibration run */
} Context;

/* Runs print nothing; their diagnostics go to explore_captured(). */
void explore_quiet(Context *cx);
/* The diagnostics of the last quiet run (cleared by each Record). */
Buffer *explore_captured(void);

/* Outcome of the run that just ended. */
typedef struct {
  uint64_t id;                 /* seed, or schedule number (dfs)          */
  bool failure;
  const char *kind;            /* explore_describe's                      */
  char *description;           /* owned                                   */
  char *where;                 /* owned: the place, which with the kind is the class */
  int steps, deviations, preemptions;
  uint64_t hash;               /* of the run's decisions                  */
} Record;

Record explore_record(Context *cx, uint64_t id, SimStatus status);
void record_free(Record *r);
/* Whether the run's outcome is of the class kind + where. */
bool record_in_class(const Record *r, const char *kind, const char *where);

/* The kinds of outcome, in a fixed order (for the --jobs wire). */
extern const char *const explore_kinds[];
int explore_kind_index(const char *kind);

/* The script's file name, as its compiled form also knows it. */
const char *explore_program_name(VM *vm);
/* A 64-bit hash of one top-level definition of the script (its name,
 * arity, line, and its value: a function's code and constants, nested
 * functions included, or a value as shown): the same for the script and
 * its bytecode file, under -O0, from any directory. */
uint64_t explore_definition_hash(VM *vm, int global);
/* Whether global `i` is one of the program's own definitions (not a
 * builtin, not the prelude's). */
bool explore_is_definition(VM *vm, int i);
/* The program's hash: of every definition's. */
uint64_t explore_program_hash(VM *vm);

/* JSON string syntax for `text`, appended. */
void explore_json_string(Buffer *out, const char *text);

#endif
