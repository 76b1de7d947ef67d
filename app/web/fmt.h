/*
 * How the dashboard writes numbers and times: counts with thousands
 * separators, times in UTC inside a <time> element whose datetime is the
 * RFC 3339 form. The output is plain text (escape it like any other) or,
 * for fmt_time_html, HTML this program made.
 */
#ifndef FMT_H
#define FMT_H

#include <stdint.h>

struct arena;

#define FMT_COUNT_MAX 32 /* "-9,223,372,036,854,775,808" and its NUL */

/* 1234567 -> "1,234,567"; negative numbers keep their sign. */
void fmt_count(int64_t n, char out[FMT_COUNT_MAX]);
/* The same, copied into the arena (NULL when it is full). */
const char *fmt_count_a(struct arena *, int64_t n);
/* "2026-05-01 10:00 UTC" (minutes: the dashboard needs no seconds). */
void fmt_utc(int64_t t, char out[32]);
/* "May 1": a day's short name in the chart. */
void fmt_day(int64_t t, char out[16]);
/* The time zone (an IANA name; NULL or "UTC" for UTC) that later
 * fmt_time_html calls show: the signed-in admin's, set per request. */
void fmt_zone(const char *tz);
/* <time datetime="2026-05-01T10:00:00Z" title="2026-05-01 10:00
 * UTC">2026-05-01 12:00 CEST</time> (the text in fmt_zone's zone, UTC on
 * hover), in the arena; "" for 0 (no time). NULL when full. */
const char *fmt_time_html(struct arena *, int64_t t);
/* s percent-encoded for a query string or a path segment (all but the
 * unreserved characters), in the arena; NULL when it is full. */
const char *fmt_url(struct arena *, const char *s);

#endif
