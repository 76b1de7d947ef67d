/* Bounded strings, range-checked integers, UTF-8 and time formatting. */
#ifndef STR_H
#define STR_H

#include <stddef.h>
#include <stdint.h>

/* Copies src into dst; returns -1 (dst truncated) when it does not fit. */
int str_copy(char *dst, const char *src, size_t dstsz);
/* Parses a whole decimal integer in [min, max]; -1 on anything else. */
int str_to_i64(const char *s, int64_t min, int64_t max, int64_t *out);
/* The environment variable name as an integer in [min, max]; def when it
 * is unset or empty, and (with a warning in the log) when it is not such
 * a number. */
int64_t env_i64(const char *name, int64_t def, int64_t min, int64_t max);
/* The index of s among names[0..n), or -1 (also for NULL). */
int str_index(const char *s, const char *const *names, int n);
/* 1 when s is 1..max bytes of [A-Za-z0-9._~:@-]: an id a client chose,
 * safe in a URL path as it is. */
int str_token_ok(const char *s, size_t max);
/* 1 when s[0..len) is valid UTF-8 without NUL or C0 controls (but tab). */
int str_utf8_ok(const char *s, size_t len);
/* The same, also allowing CR and LF when newlines is 1 (a textarea). */
int str_utf8_text(const char *s, size_t len, int newlines);
/* Formats epoch seconds as RFC 3339 UTC: 2026-11-22T10:00:00Z. */
void str_rfc3339(int64_t t, char out[32]);
/* Parses RFC 3339 (Z or +hh:mm) or bare epoch seconds; -1 on error. */
int str_parse_time(const char *s, int64_t *out);
/* Hex-encodes n bytes into out (2n+1 bytes). */
void str_hex(const unsigned char *p, size_t n, char *out);

#endif
