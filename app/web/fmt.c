/* Numbers and times for people (fmt.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/str.h"
#include "fmt.h"

void
fmt_count(int64_t n, char out[FMT_COUNT_MAX])
{
	char digits[24];
	/* The magnitude as unsigned: -INT64_MIN does not fit an int64_t. */
	uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
	size_t nd = 0, i, o = 0;

	do {
		digits[nd++] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (n < 0)
		out[o++] = '-';
	for (i = nd; i > 0; i--) {
		out[o++] = digits[i - 1];
		if (i > 1 && (i - 1) % 3 == 0)
			out[o++] = ',';
	}
	out[o] = '\0';
}

const char *
fmt_count_a(struct arena *a, int64_t n)
{
	char s[FMT_COUNT_MAX];

	fmt_count(n, s);
	return arena_strdup(a, s);
}

void
fmt_utc(int64_t t, char out[32])
{
	str_rfc3339(t, out); /* 2026-05-01T10:00:00Z */
	if (strlen(out) != 20) {
		out[0] = '\0';
		return;
	}
	out[10] = ' ';
	memcpy(out + 16, " UTC", 5);
}

void
fmt_day(int64_t t, char out[16])
{
	static const char *const months[12] = {"Jan", "Feb", "Mar", "Apr",
	    "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL || tm.tm_mon < 0 || tm.tm_mon > 11) {
		out[0] = '\0';
		return;
	}
	snprintf(out, 16, "%s %d", months[tm.tm_mon], tm.tm_mday);
}

/* The zone fmt_time_html shows: "" (or "UTC") is UTC. */
static char zone[64];

void
fmt_zone(const char *tz)
{
	if (tz == NULL || strcmp(tz, "UTC") == 0)
		tz = "";
	if (strcmp(tz, zone) == 0)
		return;
	snprintf(zone, sizeof(zone), "%s", tz);
	/* ":Europe/Berlin": a file of the tz database, never a POSIX rule
	 * string; unknown names read as UTC. */
	if (*zone != '\0') {
		char env[sizeof(zone) + 2];

		snprintf(env, sizeof(env), ":%s", zone);
		setenv("TZ", env, 1);
	} else
		setenv("TZ", "UTC0", 1);
	tzset();
}

const char *
fmt_time_html(struct arena *a, int64_t t)
{
	char iso[32], utc[32], text[64];
	time_t tt = (time_t)t;
	struct tm tm;

	if (t == 0)
		return "";
	str_rfc3339(t, iso);
	fmt_utc(t, utc);
	if (*zone == '\0' || localtime_r(&tt, &tm) == NULL ||
	    strftime(text, sizeof(text), "%Y-%m-%d %H:%M %Z", &tm) == 0)
		snprintf(text, sizeof(text), "%s", utc);
	/* Digits, dashes, colons, '+' and letters (a zone's abbreviation
	 * is at most a few of them): nothing to escape. */
	return arena_printf(
	    a, "<time datetime=\"%s\" title=\"%s\">%s</time>", iso, utc, text);
}

const char *
fmt_url(struct arena *a, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), i, j = 0;
	char *o = arena_alloc(a, 3 * n + 1);

	if (o == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == '~') {
			o[j++] = (char)c;
			continue;
		}
		o[j++] = '%';
		o[j++] = hex[c >> 4];
		o[j++] = hex[c & 15];
	}
	o[j] = '\0';
	return o;
}
