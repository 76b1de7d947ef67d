/*
 * The template engine. A template compiles to a flat array of nodes: text
 * (a slice of one text buffer), variables, and sections that know where
 * their body ends, so rendering is a walk with no parsing and no lookup
 * by name. Partials are inlined while parsing. The tmpl owns its nodes
 * and text; tmpl_free releases them.
 *
 * Raw output needs both sides to agree: {{&key}} prints a TV_RAW value as
 * is, but a TV_STR is escaped whatever the tag says, and {{key}} escapes
 * either. A template cannot turn a user's string into markup.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common.h"
#include "../lib/buf.h"
#include "tmpl.h"

#define TMPL_SECTIONS_MAX 16 /* sections inside sections */
#define TMPL_PARTIALS_MAX 4  /* partials inside partials */
#define TMPL_NODES_MAX ((size_t)1 << 18)
#define TMPL_TEXT_MAX ((size_t)8 << 20)
#define TMPL_FILE_MAX ((size_t)1 << 20)
#define TMPL_NAME_MAX 128 /* a partial's file name */

enum node_type { NODE_TEXT, NODE_VAR, NODE_RAW, NODE_SECT, NODE_INV };

struct node {
	enum node_type type;
	size_t key;      /* VAR, RAW, SECT, INV: index in the key list */
	size_t off, len; /* TEXT: text.data[off..off + len) */
	size_t end;      /* SECT, INV: the first node after the body */
};

struct tmpl {
	struct node *nodes;
	size_t n, cap;
	struct buf text; /* every text node's bytes */
};

/* A section being parsed; name points into its file's text, which lives
 * as long as the file is parsed (a section never spans files). */
struct open {
	size_t node;
	size_t line;
	const char *name;
	size_t namelen;
};

struct parser {
	struct tmpl *t;
	const char *const *keys;
	const char *dir; /* NULL: partials are refused */
	char *err;
	size_t errlen;
	struct open open[TMPL_SECTIONS_MAX];
	size_t depth;
};

static int perr(struct parser *p, const char *name, size_t line,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Writes "name:line: message" into p->err; returns -1. */
static int
perr(struct parser *p, const char *name, size_t line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err == NULL || p->errlen == 0)
		return -1;
	n = snprintf(p->err, p->errlen, "%s:%zu: ", name, line);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A tag's text fit for a message: printable ASCII, at most 40 bytes. */
static const char *
shown(const char *s, size_t n, char out[48])
{
	size_t i;

	for (i = 0; i < n && i < 40; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (n > 40) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

static size_t
count_nl(const char *s, size_t n)
{
	const char *q, *end = s + n;
	size_t c = 0;

	while (s < end && (q = memchr(s, '\n', (size_t)(end - s))) != NULL) {
		c++;
		s = q + 1;
	}
	return c;
}

static struct node *
node_add(struct parser *p, const char *name, size_t line, enum node_type type)
{
	struct tmpl *t = p->t;
	struct node *nn;
	size_t ncap;

	if (t->n == TMPL_NODES_MAX) {
		perr(p, name, line, "template too large");
		return NULL;
	}
	if (t->n == t->cap) {
		ncap = t->cap ? t->cap * 2 : 64;
		if ((nn = realloc(t->nodes, ncap * sizeof(*nn))) == NULL) {
			perr(p, name, line, "out of memory");
			return NULL;
		}
		t->nodes = nn;
		t->cap = ncap;
	}
	nn = &t->nodes[t->n++];
	memset(nn, 0, sizeof(*nn));
	nn->type = type;
	return nn;
}

static int
text_add(
    struct parser *p, const char *name, size_t line, const char *s, size_t n)
{
	struct node *nd;
	size_t off = p->t->text.len;

	if (n == 0)
		return 0;
	buf_add(&p->t->text, s, n);
	if (p->t->text.err)
		return perr(p, name, line, "template too large");
	if ((nd = node_add(p, name, line, NODE_TEXT)) == NULL)
		return -1;
	nd->off = off;
	nd->len = n;
	return 0;
}

/* The index of the key s[0..n), or -1 with the error written. */
static int
key_find(struct parser *p, const char *name, size_t line, const char *s,
    size_t n, size_t *out)
{
	char sh[48];
	size_t i;

	for (i = 0; p->keys != NULL && p->keys[i] != NULL; i++)
		if (strlen(p->keys[i]) == n && memcmp(p->keys[i], s, n) == 0) {
			*out = i;
			return 0;
		}
	return perr(p, name, line, "unknown key \"%s\"", shown(s, n, sh));
}

static int parse_file(struct parser *, const char *, const char *, size_t, int);

/* Reads path whole into a malloc'd buffer (the caller frees it); -1 with
 * errno set. */
static int
read_whole(const char *path, char **out, size_t *outlen)
{
	FILE *f;
	char *data;
	size_t n = 0, got;
	int e;

	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	if ((data = malloc(TMPL_FILE_MAX + 1)) == NULL) {
		fclose(f);
		errno = ENOMEM;
		return -1;
	}
	while ((got = fread(data + n, 1, TMPL_FILE_MAX + 1 - n, f)) > 0)
		if ((n += got) > TMPL_FILE_MAX)
			break;
	e = ferror(f) ? EIO : n > TMPL_FILE_MAX ? EFBIG : 0;
	fclose(f);
	if (e != 0) {
		free(data);
		errno = e;
		return -1;
	}
	*out = data;
	*outlen = n;
	return 0;
}

/* A partial is a plain file name of the same directory: no path. */
static int
partial_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= TMPL_NAME_MAX || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
			s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static int
partial(struct parser *p, const char *name, size_t line, const char *s,
    size_t n, int level)
{
	char pname[TMPL_NAME_MAX], path[PATH_MAX], sh[48];
	char *data;
	size_t len;
	int rc;

	if (!partial_name_ok(s, n))
		return perr(
		    p, name, line, "bad partial name \"%s\"", shown(s, n, sh));
	if (p->dir == NULL)
		return perr(p, name, line,
		    "partial \"%s\" without a directory (use tmpl_load)",
		    shown(s, n, sh));
	if (level >= TMPL_PARTIALS_MAX)
		return perr(p, name, line,
		    "partial \"%s\" nested deeper than %d", shown(s, n, sh),
		    TMPL_PARTIALS_MAX);
	memcpy(pname, s, n);
	pname[n] = '\0';
	rc = snprintf(path, sizeof(path), "%s/%s", p->dir, pname);
	if (rc < 0 || (size_t)rc >= sizeof(path))
		return perr(
		    p, name, line, "partial \"%s\": path too long", pname);
	if (read_whole(path, &data, &len) == -1)
		return perr(p, name, line, "partial \"%s\": %s", pname,
		    strerror(errno));
	rc = parse_file(p, pname, data, len, level + 1);
	free(data);
	return rc;
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* One tag's content c[0..n), without the braces. */
static int
tag(struct parser *p, const char *name, size_t line, const char *c, size_t n,
    size_t base, int level)
{
	struct open *o;
	struct node *nd;
	char sigil = 0, sh[48], sh2[48];
	size_t key;

	if (n > 0 && c[0] != '\0' && strchr("#^/&>!{", c[0]) != NULL) {
		sigil = c[0];
		c++;
		n--;
	}
	if (sigil == '!')
		return 0;
	if (sigil == '{')
		return perr(p, name, line,
		    "triple braces are not supported: use {{&key}}");
	while (n > 0 && is_space(c[0])) {
		c++;
		n--;
	}
	while (n > 0 && is_space(c[n - 1]))
		n--;
	if (n == 0)
		return perr(p, name, line, "empty tag");
	switch (sigil) {
	case '>':
		return partial(p, name, line, c, n, level);
	case '/':
		if (p->depth == base)
			return perr(p, name, line,
			    "\"{{/%s}}\" closes no section", shown(c, n, sh));
		o = &p->open[p->depth - 1];
		if (o->namelen != n || memcmp(o->name, c, n) != 0)
			return perr(p, name, line,
			    "section \"%s\" (line %zu) closed by \"%s\"",
			    shown(o->name, o->namelen, sh), o->line,
			    shown(c, n, sh2));
		p->t->nodes[o->node].end = p->t->n;
		p->depth--;
		return 0;
	case '#':
	case '^':
		if (key_find(p, name, line, c, n, &key) == -1)
			return -1;
		if (p->depth == TMPL_SECTIONS_MAX)
			return perr(p, name, line,
			    "sections nested deeper than %d",
			    TMPL_SECTIONS_MAX);
		if ((nd = node_add(p, name, line,
			 sigil == '#' ? NODE_SECT : NODE_INV)) == NULL)
			return -1;
		nd->key = key;
		o = &p->open[p->depth++];
		o->node = p->t->n - 1;
		o->line = line;
		o->name = c;
		o->namelen = n;
		return 0;
	default:
		if (key_find(p, name, line, c, n, &key) == -1)
			return -1;
		if ((nd = node_add(p, name, line,
			 sigil == '&' ? NODE_RAW : NODE_VAR)) == NULL)
			return -1;
		nd->key = key;
		return 0;
	}
}

/* Compiles one file (level 0) or partial into p->t; its sections must
 * close within it. */
static int
parse_file(
    struct parser *p, const char *name, const char *text, size_t len, int level)
{
	const char *s = text, *end = text + len, *open, *close;
	size_t base = p->depth, line = 1, tagline;
	struct open *o;
	char sh[48];

	while (s < end) {
		open = memmem(s, (size_t)(end - s), "{{", 2);
		if (open == NULL)
			open = end;
		if (text_add(p, name, line, s, (size_t)(open - s)) == -1)
			return -1;
		line += count_nl(s, (size_t)(open - s));
		if (open == end)
			break;
		s = open + 2;
		close = memmem(s, (size_t)(end - s), "}}", 2);
		if (close == NULL)
			return perr(p, name, line, "unterminated tag");
		tagline = line;
		line += count_nl(s, (size_t)(close - s));
		if (tag(p, name, tagline, s, (size_t)(close - s), base,
			level) == -1)
			return -1;
		s = close + 2;
	}
	if (p->depth > base) {
		o = &p->open[p->depth - 1];
		return perr(p, name, o->line, "section \"%s\" is not closed",
		    shown(o->name, o->namelen, sh));
	}
	return 0;
}

static struct tmpl *
parse(const char *name, const char *text, size_t len, const char *dir,
    const char *const *keys, char *err, size_t errlen)
{
	struct parser p;
	struct tmpl *t;

	memset(&p, 0, sizeof(p));
	p.keys = keys;
	p.dir = dir;
	p.err = err;
	p.errlen = errlen;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		perr(&p, name, 0, "out of memory");
		return NULL;
	}
	buf_init(&t->text, TMPL_TEXT_MAX);
	p.t = t;
	if (parse_file(&p, name, text != NULL ? text : "", len, 0) == -1) {
		tmpl_free(t);
		return NULL;
	}
	return t;
}

struct tmpl *
tmpl_parse(const char *name, const char *text, size_t len,
    const char *const *keys, char *err, size_t errlen)
{
	return parse(name, text, len, NULL, keys, err, errlen);
}

struct tmpl *
tmpl_load(const char *dir, const char *file, const char *const *keys, char *err,
    size_t errlen)
{
	char path[PATH_MAX];
	struct tmpl *t;
	char *data;
	size_t len;
	int rc;

	rc = snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (rc < 0 || (size_t)rc >= sizeof(path)) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: path too long", file);
		return NULL;
	}
	if (read_whole(path, &data, &len) == -1) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	t = parse(file, data, len, dir, keys, err, errlen);
	free(data);
	return t;
}

void
tmpl_free(struct tmpl *t)
{
	if (t == NULL)
		return;
	free(t->nodes);
	buf_free(&t->text);
	free(t);
}

struct render {
	const struct tmpl *t;
	const struct tval *vals;
	/* The items of the lists being iterated, innermost last. */
	const struct tval *items[TMPL_SECTIONS_MAX];
	size_t depth;
	struct buf *out;
};

static const struct tval *
lookup(const struct render *r, size_t key)
{
	size_t i;

	for (i = r->depth; i > 0; i--)
		if (r->items[i - 1] != NULL &&
		    r->items[i - 1][key].type != TV_NONE)
			return &r->items[i - 1][key];
	return &r->vals[key];
}

static int
is_set(const struct tval *v)
{
	switch (v->type) {
	case TV_STR:
	case TV_RAW:
		return v->s != NULL && v->s[0] != '\0';
	case TV_LIST:
		return v->items != NULL && v->n > 0;
	default:
		return 0;
	}
}

static void
render_range(struct render *r, size_t from, size_t to)
{
	const struct node *nd;
	const struct tval *v;
	size_t i = from, j;

	while (i < to && !r->out->err) {
		nd = &r->t->nodes[i];
		switch (nd->type) {
		case NODE_TEXT:
			buf_add(r->out, r->t->text.data + nd->off, nd->len);
			i++;
			break;
		case NODE_VAR:
		case NODE_RAW:
			v = lookup(r, nd->key);
			if ((v->type == TV_STR || v->type == TV_RAW) &&
			    v->s != NULL) {
				if (nd->type == NODE_RAW && v->type == TV_RAW)
					buf_puts(r->out, v->s);
				else
					tmpl_escape(r->out, v->s);
			}
			i++;
			break;
		case NODE_SECT:
			v = lookup(r, nd->key);
			if (v->type == TV_LIST && is_set(v)) {
				/* Sections nest at most TMPL_SECTIONS_MAX
				 * deep, which the parser made sure of. */
				for (j = 0; j < v->n && !r->out->err; j++) {
					r->items[r->depth++] = v->items[j];
					render_range(r, i + 1, nd->end);
					r->depth--;
				}
			} else if (is_set(v))
				render_range(r, i + 1, nd->end);
			i = nd->end;
			break;
		case NODE_INV:
			if (!is_set(lookup(r, nd->key)))
				render_range(r, i + 1, nd->end);
			i = nd->end;
			break;
		}
	}
}

int
tmpl_render(const struct tmpl *t, const struct tval *vals, struct buf *out)
{
	struct render r;

	memset(&r, 0, sizeof(r));
	r.t = t;
	r.vals = vals;
	r.out = out;
	render_range(&r, 0, t->n);
	return out->err ? -1 : 0;
}

void
tmpl_escape(struct buf *b, const char *s)
{
	const char *run;

	if (s == NULL)
		return;
	for (run = s;; s++) {
		const char *rep;

		switch (*s) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		case '\0':
			buf_add(b, run, (size_t)(s - run));
			return;
		default:
			continue;
		}
		buf_add(b, run, (size_t)(s - run));
		buf_puts(b, rep);
		run = s + 1;
	}
}
