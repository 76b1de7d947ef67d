#include <string.h>
#include <strings.h>

#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/str.h"
#include "form.h"
#include "multipart.h"

static const char mp_type[] = "multipart/form-data";

int
multipart_is(const char *ctype)
{
	size_t n = sizeof(mp_type) - 1;

	return ctype != NULL && strncasecmp(ctype, mp_type, n) == 0 &&
	       (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ');
}

/* RFC 2046's bchars (the last may not be a space). */
static int
bchar(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
	       (c >= 'a' && c <= 'z') || strchr("'()+_,-./:=? ", c) != NULL;
}

int
multipart_boundary(const char *ctype, char out[MULTIPART_BOUNDARY_MAX + 1])
{
	const char *p, *end;
	size_t n;
	int quoted;

	out[0] = '\0';
	if (!multipart_is(ctype))
		return -1;
	for (p = ctype + sizeof(mp_type) - 1; *p != '\0';) {
		while (*p == ' ' || *p == ';' || *p == '\t')
			p++;
		if (strncasecmp(p, "boundary=", 9) != 0) {
			p += strcspn(p, ";"); /* another parameter */
			continue;
		}
		p += 9;
		if ((quoted = *p == '"'))
			p++;
		end = quoted ? strchr(p, '"') : p + strcspn(p, "; \t");
		if (end == NULL)
			return -1;
		n = (size_t)(end - p);
		if (n == 0 || n > MULTIPART_BOUNDARY_MAX || p[n - 1] == ' ')
			return -1;
		memcpy(out, p, n);
		out[n] = '\0';
		for (n = 0; out[n] != '\0'; n++)
			if (!bchar((unsigned char)out[n]) ||
			    (!quoted && out[n] == ' ')) {
				out[0] = '\0';
				return -1;
			}
		return 0;
	}
	return -1;
}

/* A parameter of Content-Disposition, name="value" or name=token, into
 * the arena; NULL when absent (*bad on a malformed one). */
static const char *
disp_param(
    struct arena *a, const char *h, size_t hlen, const char *key, int *bad)
{
	size_t klen = strlen(key), i = 0, n;
	const char *v, *end;

	while (i < hlen) {
		/* Parameters follow a ';' (outside quotes). */
		int q = 0;

		for (; i < hlen && (q || h[i] != ';'); i++)
			if (h[i] == '"')
				q = !q;
		if (i >= hlen)
			return NULL;
		i++;
		while (i < hlen && (h[i] == ' ' || h[i] == '\t'))
			i++;
		if (hlen - i <= klen || strncasecmp(h + i, key, klen) != 0 ||
		    h[i + klen] != '=')
			continue;
		v = h + i + klen + 1;
		n = hlen - (i + klen + 1);
		if (n > 0 && *v == '"') {
			end = memchr(v + 1, '"', n - 1);
			if (end == NULL) {
				*bad = 1;
				return NULL;
			}
			v++;
		} else {
			for (end = v; end < v + n && *end != ';' &&
				      *end != ' ' && *end != '\t';
			     end++)
				;
		}
		return arena_strndup(a, v, (size_t)(end - v));
	}
	return NULL;
}

/* One part's header block (without its final CRLF CRLF). */
static int
part_headers(struct arena *a, const char *h, size_t len, struct mpart *p)
{
	const char *line = h, *end = h + len, *eol, *colon;
	int bad = 0, seen = 0;
	size_t n;

	while (line < end) {
		eol = memmem(line, (size_t)(end - line), "\r\n", 2);
		n = eol != NULL ? (size_t)(eol - line) : (size_t)(end - line);
		/* No bare CR or LF, no controls but tab, no NUL. */
		if (n == 0 || memchr(line, 0x7f, n) != NULL ||
		    !str_utf8_ok(line, n))
			return -1;
		colon = memchr(line, ':', n);
		if (colon == NULL || colon == line)
			return -1;
		if ((size_t)(colon - line) == 19 &&
		    strncasecmp(line, "Content-Disposition", 19) == 0) {
			const char *v = colon + 1;
			size_t vn = n - (size_t)(v - line);

			if (seen++)
				return -1;
			while (vn > 0 && (*v == ' ' || *v == '\t'))
				v++, vn--;
			if (vn < 9 || strncasecmp(v, "form-data", 9) != 0 ||
			    (vn > 9 && v[9] != ';' && v[9] != ' '))
				return -1;
			p->name = disp_param(a, v, vn, "name", &bad);
			p->filename = disp_param(a, v, vn, "filename", &bad);
			if (bad || p->name == NULL || p->name[0] == '\0')
				return -1;
		}
		line = eol != NULL ? eol + 2 : end;
	}
	return seen ? 0 : -1;
}

int
multipart_parse(struct arena *a, const char *boundary, const char *body,
    size_t len, struct multipart *out)
{
	char delim[MULTIPART_BOUNDARY_MAX + 5]; /* CRLF "--" boundary */
	const char *p = body, *end = body + len, *hend, *next;
	size_t dlen, blen = strlen(boundary);
	struct mpart *m;

	out->n = 0;
	if (blen == 0 || blen > MULTIPART_BOUNDARY_MAX)
		return -1;
	memcpy(delim, "\r\n--", 4);
	memcpy(delim + 4, boundary, blen);
	dlen = blen + 4;
	/* The first delimiter has no CRLF before it. */
	if (len < dlen - 2 || memcmp(p, delim + 2, dlen - 2) != 0)
		return -1;
	p += dlen - 2;
	for (;;) {
		if (end - p >= 2 && memcmp(p, "--", 2) == 0)
			return 0; /* the close delimiter; the rest is epilogue */
		if (end - p < 2 || memcmp(p, "\r\n", 2) != 0 ||
		    out->n == MULTIPART_PARTS_MAX)
			goto bad;
		p += 2;
		hend = memmem(p,
		    (size_t)(end - p) < MULTIPART_HEADER_MAX + 4
			? (size_t)(end - p)
			: MULTIPART_HEADER_MAX + 4,
		    "\r\n\r\n", 4);
		if (hend == NULL)
			goto bad;
		m = &out->part[out->n];
		memset(m, 0, sizeof(*m));
		if (part_headers(a, p, (size_t)(hend - p), m) == -1)
			goto bad;
		m->data = hend + 4;
		next = memmem(m->data, (size_t)(end - m->data), delim, dlen);
		if (next == NULL)
			goto bad;
		m->len = (size_t)(next - m->data);
		out->n++;
		p = next + dlen;
	}
bad:
	out->n = 0;
	return -1;
}

/* Text a form field may hold (form_parse's rule): UTF-8 without NUL or
 * C0 controls but tab, CR and LF. A multi-byte character never holds a
 * CR or LF byte, so the lines between them are checked one by one. */
static int
field_ok(const char *s, size_t n)
{
	size_t i, start = 0;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '\r' && s[i] != '\n')
			continue;
		if (i > start && !str_utf8_ok(s + start, i - start))
			return 0;
		start = i + 1;
	}
	return memchr(s, 0x7f, n) == NULL;
}

int
multipart_form(struct arena *a, const char *ctype, const char *body, size_t len,
    struct kvlist *form, const char **file, size_t *file_len)
{
	char boundary[MULTIPART_BOUNDARY_MAX + 1];
	struct multipart *mp;
	size_t i, nf = 0;

	form->v = NULL;
	form->n = 0;
	*file = NULL;
	*file_len = 0;
	if (multipart_boundary(ctype, boundary) == -1 ||
	    (mp = arena_alloc(a, sizeof(*mp))) == NULL ||
	    multipart_parse(a, boundary, body, len, mp) == -1)
		return -1;
	if (mp->n > 0 &&
	    (form->v = arena_alloc(a, mp->n * sizeof(*form->v))) == NULL)
		return -1;
	for (i = 0; i < mp->n; i++) {
		struct mpart *m = &mp->part[i];

		if (m->filename != NULL) {
			/* No file chosen: an empty part named "". */
			if (m->filename[0] == '\0' && m->len == 0)
				continue;
			if (nf++ > 0)
				goto bad;
			*file = m->data;
			*file_len = m->len;
			continue;
		}
		if (!field_ok(m->data, m->len))
			goto bad;
		form->v[form->n].key = m->name;
		form->v[form->n].val = arena_strndup(a, m->data, m->len);
		if (form->v[form->n].val == NULL)
			goto bad;
		form->n++;
	}
	if (form->n == 0)
		form->v = NULL;
	return 0;
bad:
	form->v = NULL;
	form->n = 0;
	*file = NULL;
	*file_len = 0;
	return -1;
}
