/* Command-line value parsing shared by simvm and simc. */
#ifndef SIMVM_OPTIONS_H
#define SIMVM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIMVM_VERSION "0.1.0"

/* A whole number >= 0 with no sign or suffix; false if malformed or too big. */
bool parse_count(const char *text, uint64_t *out);

/* A size in bytes: digits then B, KB, MB or GB (powers of 1024). */
bool parse_size(const char *text, size_t *out);

/* A duration as in scripts: digits then ns, us, ms or s ("10s", "500ms"),
 * into nanoseconds; false if malformed, negative or too big. */
bool parse_duration(const char *text, int64_t *out);

/* --fail-on's list: "uncaught", "limit", or both separated by a comma. */
bool parse_fail_on(const char *text, bool *uncaught, bool *limit);

/* --jitter's P%: a percentage above 0 and below 100 with at most four
 * decimals ("10%", "2.5%"), into parts per million; false otherwise. */
bool parse_percent(const char *text, uint32_t *ppm);

/* --shard's I/N: whole numbers with 1 <= I <= N. */
bool parse_shard(const char *text, uint64_t *index, uint64_t *count);

#endif
