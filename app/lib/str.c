#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "log.h"
#include "str.h"

int
str_copy(char *dst, const char *src, size_t dstsz)
{
	size_t n = strlen(src);

	if (dstsz == 0)
		return -1;
	if (n >= dstsz) {
		memcpy(dst, src, dstsz - 1);
		dst[dstsz - 1] = '\0';
		return -1;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

int
str_to_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (s == NULL || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
str_utf8_ok(const char *s, size_t len)
{
	return str_utf8_text(s, len, 0);
}

int
str_utf8_text(const char *s, size_t len, int newlines)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n, k;
	uint32_t cp;

	while (i < len) {
		unsigned char c = p[i];

		if (c < 0x80) {
			if ((c < 0x20 && c != '\t' &&
				!(newlines && (c == '\r' || c == '\n'))) ||
			    c == 0x7f)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else
			return 0;
		if (len - i <= n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		if (cp >= 0x80 && cp < 0xa0) /* C1 controls */
			return 0;
		i += n + 1;
	}
	return 1;
}

void
str_rfc3339(int64_t t, char out[32])
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		out[0] = '\0';
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int
str_parse_time(const char *s, int64_t *out)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	struct tm tm, norm;
	const char *p;
	time_t t;
	int64_t v;
	int off = 0, i;

	if (s == NULL || *s == '\0')
		return -1;
	if (str_to_i64(s, 0, INT64_C(253402300799), &v) == 0) {
		*out = v;
		return 0;
	}
	/* Fixed-width fields, as RFC 3339 has them. */
	for (i = 0; shape[i] != '\0'; i++)
		if (shape[i] == 'd' ? !is_digit(s[i]) : s[i] != shape[i])
			return -1;
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p != s + sizeof(shape) - 1)
		return -1;
	if (*p == '.') { /* fractional seconds are accepted and dropped */
		if (!is_digit(*++p))
			return -1;
		while (is_digit(*p))
			p++;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
		 is_digit(p[1]) && is_digit(p[2]) && is_digit(p[4]) &&
		 is_digit(p[5])) {
		int hh = (p[1] - '0') * 10 + (p[2] - '0');
		int mm = (p[4] - '0') * 10 + (p[5] - '0');

		if (hh > 23 || mm > 59)
			return -1;
		off = hh * 3600 + mm * 60;
		if (*p == '-')
			off = -off;
		p += 6;
	} else
		return -1;
	if (*p != '\0')
		return -1;
	/* timegm normalizes Feb 30 to Mar 2: refuse what it had to move. */
	norm = tm;
	if ((t = timegm(&norm)) == (time_t)-1 || norm.tm_mday != tm.tm_mday ||
	    norm.tm_mon != tm.tm_mon || norm.tm_year != tm.tm_year)
		return -1;
	*out = (int64_t)t - off;
	return *out < 0 ? -1 : 0;
}

void
str_hex(const unsigned char *p, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hx[p[i] >> 4];
		out[2 * i + 1] = hx[p[i] & 15];
	}
	out[2 * n] = '\0';
}

int64_t
env_i64(const char *name, int64_t def, int64_t min, int64_t max)
{
	const char *e = getenv(name);
	int64_t v;

	if (e == NULL || *e == '\0')
		return def;
	if (str_to_i64(e, min, max, &v) == -1) {
		log_warn("%s=%s is not a number in [%lld, %lld]; using %lld",
		    name, e, (long long)min, (long long)max, (long long)def);
		return def;
	}
	return v;
}

int
str_index(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

int
str_token_ok(const char *s, size_t max)
{
	size_t i, n;

	if (s == NULL || (n = strlen(s)) == 0 || n > max)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || strchr("._~:@-", c) != NULL))
			return 0;
	}
	return 1;
}
