/*
 * Form bodies, query strings and Cookie headers. Each parser walks its
 * input twice: once to count the pairs (so that too many fail before any
 * allocation), once to decode them into the arena.
 */
#include <stdint.h>
#include <string.h>

#include "../lib/common.h"
#include "../lib/arena.h"
#include "../lib/str.h"
#include "form.h"

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes s[0..len) into the arena; NULL on a bad escape, bad text or a
 * full arena. */
static const char *
form_decode(struct arena *a, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char *out;
	size_t i, n = 0;
	int hi, lo;

	if ((out = arena_alloc(a, len + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (p[i] == '+')
			out[n++] = ' ';
		else if (p[i] != '%')
			out[n++] = p[i];
		else if (len - i < 3 || (hi = hexval(p[i + 1])) < 0 ||
			 (lo = hexval(p[i + 2])) < 0)
			return NULL;
		else {
			out[n++] = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
	}
	out[n] = '\0';
	return str_utf8_text((const char *)out, n, 1) ? (const char *)out
						      : NULL;
}

int
form_parse(struct arena *a, const char *s, size_t len, struct kvlist *out)
{
	const char *seg, *end, *amp, *eq;
	size_t count = 0, i = 0;
	struct kv *v;

	out->v = NULL;
	out->n = 0;
	if (len == 0)
		return 0;
	end = s + len;
	for (seg = s;; seg = amp + 1) {
		if ((amp = memchr(seg, '&', (size_t)(end - seg))) == NULL)
			amp = end;
		if (amp > seg && ++count > FORM_FIELDS_MAX)
			return -1;
		if (amp == end)
			break;
	}
	if (count == 0)
		return 0;
	if ((v = arena_alloc(a, count * sizeof(*v))) == NULL)
		return -1;
	for (seg = s;; seg = amp + 1) {
		if ((amp = memchr(seg, '&', (size_t)(end - seg))) == NULL)
			amp = end;
		if (amp == seg)
			continue;
		if ((eq = memchr(seg, '=', (size_t)(amp - seg))) == NULL)
			eq = amp;
		v[i].key = form_decode(a, seg, (size_t)(eq - seg));
		v[i].val = eq == amp
			       ? form_decode(a, "", 0)
			       : form_decode(a, eq + 1, (size_t)(amp - eq - 1));
		if (v[i].key == NULL || v[i].val == NULL)
			return -1;
		if (++i == count)
			break;
	}
	out->v = v;
	out->n = i;
	return 0;
}

/* RFC 6265 token characters, for a cookie's name. */
static int
cookie_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c >= 0x7f || strchr("()<>@,;:\\\"/[]?={}", c))
			return 0;
	}
	return 1;
}

/* RFC 6265 cookie-octets: no space, quote, comma, semicolon, backslash or
 * anything outside printable ASCII. */
static int
cookie_value_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c >= 0x7f || c == '"' || c == ',' ||
		    c == ';' || c == '\\')
			return 0;
	}
	return 1;
}

static int
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits one "name=value" piece; 0 when it is to be skipped. */
static int
cookie_pair(const char *p, const char *end, const char **name, size_t *nlen,
    const char **val, size_t *vlen)
{
	const char *eq, *ne, *vs, *ve;

	while (p < end && is_ows(*p))
		p++;
	while (end > p && is_ows(end[-1]))
		end--;
	if ((eq = memchr(p, '=', (size_t)(end - p))) == NULL)
		return 0;
	ne = eq;
	while (ne > p && is_ows(ne[-1]))
		ne--;
	vs = eq + 1;
	while (vs < end && is_ows(*vs))
		vs++;
	ve = end;
	if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
		vs++;
		ve--;
	}
	if (!cookie_name_ok(p, (size_t)(ne - p)) ||
	    !cookie_value_ok(vs, (size_t)(ve - vs)))
		return 0;
	*name = p;
	*nlen = (size_t)(ne - p);
	*val = vs;
	*vlen = (size_t)(ve - vs);
	return 1;
}

int
cookie_parse(struct arena *a, const char *header, struct kvlist *out)
{
	const char *p, *end, *semi, *name, *val;
	size_t count = 0, i = 0, nlen, vlen;
	struct kv *v;

	out->v = NULL;
	out->n = 0;
	if (header == NULL || *header == '\0')
		return 0;
	end = header + strlen(header);
	for (p = header;; p = semi + 1) {
		if ((semi = memchr(p, ';', (size_t)(end - p))) == NULL)
			semi = end;
		if (cookie_pair(p, semi, &name, &nlen, &val, &vlen) &&
		    ++count > FORM_FIELDS_MAX)
			return -1;
		if (semi == end)
			break;
	}
	if (count == 0)
		return 0;
	if ((v = arena_alloc(a, count * sizeof(*v))) == NULL)
		return -1;
	for (p = header;; p = semi + 1) {
		if ((semi = memchr(p, ';', (size_t)(end - p))) == NULL)
			semi = end;
		if (!cookie_pair(p, semi, &name, &nlen, &val, &vlen))
			continue;
		v[i].key = arena_strndup(a, name, nlen);
		v[i].val = arena_strndup(a, val, vlen);
		if (v[i].key == NULL || v[i].val == NULL)
			return -1;
		if (++i == count)
			break;
	}
	out->v = v;
	out->n = i;
	return 0;
}

const char *
kv_get(const struct kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, key) == 0)
			return l->v[i].val;
	return NULL;
}

size_t
kv_count(const struct kvlist *l, const char *key)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, key) == 0)
			n++;
	return n;
}
