/* show(): how values read as text, for show(), say, traces and reports.
 *
 * It reads the builtin table (a primitive action shows as the builtin
 * that builds it: <action delay(...)>), and the builtins' show, join and
 * error call it: builtins.c and show.c need each other, the one for its
 * table of names, the other for rendering. */
#ifndef SIMVM_SHOW_H
#define SIMVM_SHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "value.h"

/* Render `value` as show() does into a growable buffer (vm/buffer.h). */
/* quote: render strings with quotes and escapes (inside lists, records). */
void value_show(Buffer *buf, Value value, bool quote);
/* The same, stopping soon after the text passes `limit` bytes (a value that
 * shares its parts can be far larger shown than in memory); false if cut. */
bool value_show_bounded(Buffer *buf, Value value, bool quote, size_t limit);
/* value_show for a run's own show (show, error ...): false, `buf` holding
 * part, once the run must stop (vm->halted set: a signal, --max-work passed
 * counting the bytes shown, --max-heap passed counting the text's buffer).
 * The caller charges the bytes shown (vm_work). */
bool value_show_vm(VM *vm, Buffer *buf, Value value, bool quote);
/* `value` as show renders it, on one line (line breaks and other control
 * bytes escaped) and at most `limit` bytes of it, then "...": a report stays
 * one line whatever the value, even one whose rendering, sharing its parts,
 * would take more memory than there is. For traces, reports, outcomes. */
void value_show_line(Buffer *out, Value value, bool quote, size_t limit);
/* `value` as JSON (statsOutput, --stats-json): a record an object of its
 * fields in order, a list an array, an int or float a number (a NaN or
 * infinity null), a duration its int nanoseconds, a string a string,
 * none and () null, some(x) x. False for any other value (a function, an
 * action, a thread, an MVar, a TVar, an exception) or one nested deeper
 * than JSON_MAX_DEPTH, which *bad is then set to; `buf` then holds part. */
#define JSON_MAX_DEPTH 100
bool value_json(Buffer *buf, Value value, Value *bad);
/* Format a duration with the largest unit that is exact: "1500us", "2ms". */
void duration_show(Buffer *buf, int64_t ns);

#endif
