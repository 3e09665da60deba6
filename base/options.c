#include "options.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

bool parse_count(const char *text, uint64_t *out) {
  if (!*text) return false;
  uint64_t n = 0;
  for (const char *s = text; *s; s++) {
    if (*s < '0' || *s > '9') return false;
    if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return false;
    n = n * 10 + (uint64_t)(*s - '0');
  }
  *out = n;
  return true;
}

bool parse_size(const char *text, size_t *out) {
  static const struct { const char *unit; uint64_t scale; } units[] = {
      {"B", 1}, {"KB", 1024}, {"MB", 1024 * 1024}, {"GB", 1024ull * 1024 * 1024}};
  size_t digits = strspn(text, "0123456789");
  if (digits == 0 || digits > 15) return false;
  uint64_t n = 0;
  for (size_t j = 0; j < digits; j++) n = n * 10 + (uint64_t)(text[j] - '0');
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(text + digits, units[i].unit) != 0) continue;
    if (n > SIZE_MAX / units[i].scale) return false;
    *out = (size_t)(n * units[i].scale);
    return true;
  }
  return false;
}

bool parse_duration(const char *text, int64_t *out) {
  static const struct { const char *unit; int64_t scale; } units[] = {
      {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
  size_t digits = strspn(text, "0123456789");
  if (digits == 0) return false;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(text + digits, units[i].unit) != 0) continue;
    uint64_t n = 0;
    for (size_t j = 0; j < digits; j++) {
      if (n > (uint64_t)(INT64_MAX / 10)) return false;
      n = n * 10 + (uint64_t)(text[j] - '0');
    }
    if (n > (uint64_t)(INT64_MAX / units[i].scale)) return false;
    *out = (int64_t)n * units[i].scale;
    return true;
  }
  return false;
}

bool parse_fail_on(const char *text, bool *uncaught, bool *limit) {
  bool u = false, l = false;
  const char *s = text;
  for (;;) {
    size_t n = strcspn(s, ",");
    if (n == 8 && strncmp(s, "uncaught", 8) == 0) u = true;
    else if (n == 5 && strncmp(s, "limit", 5) == 0) l = true;
    else return false;
    if (!s[n]) break;
    s += n + 1;
  }
  *uncaught = u;
  *limit = l;
  return true;
}

bool parse_percent(const char *text, uint32_t *ppm) {
  size_t whole = strspn(text, "0123456789");
  if (whole == 0 || whole > 2) return false;
  uint32_t value = 0;
  for (size_t i = 0; i < whole; i++) value = value * 10 + (uint32_t)(text[i] - '0');
  value *= 10000;
  const char *s = text + whole;
  if (*s == '.') {
    size_t decimals = strspn(s + 1, "0123456789");
    if (decimals == 0 || decimals > 4) return false;
    uint32_t scale = 1000;
    for (size_t i = 0; i < decimals; i++, scale /= 10) value += (uint32_t)(s[1 + i] - '0') * scale;
    s += 1 + decimals;
  }
  if (strcmp(s, "%") != 0 || value == 0 || value >= 1000000) return false;
  *ppm = value;
  return true;
}

bool parse_shard(const char *text, uint64_t *index, uint64_t *count) {
  const char *slash = strchr(text, '/');
  if (!slash || slash == text || slash - text > 19) return false;
  char number[20];
  memcpy(number, text, (size_t)(slash - text));
  number[slash - text] = '\0';
  uint64_t i, n;
  if (!parse_count(number, &i) || !parse_count(slash + 1, &n) || i < 1 || i > n) return false;
  *index = i;
  *count = n;
  return true;
}
