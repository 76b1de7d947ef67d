/*
 * Templates: a small mustache-like language, parsed at start-up, escaping
 * by default.
 *
 *   {{key}}              the value, HTML-escaped (& < > " ')
 *   {{&key}}             the value as is: only for HTML the program made
 *   {{#key}}...{{/key}}  shown when key is set (a non-empty string or a
 *                        list); for a list, once per item, and inside it
 *                        the item's values come first
 *   {{^key}}...{{/key}}  shown when key is not set
 *   {{>file.html}}       another file of the same directory, inlined at
 *                        parse time (depth at most 4)
 *   {{! comment }}
 *
 * A template is compiled against the list of keys its page provides; a
 * key the list lacks is an error at parse time, so a typo fails start-up,
 * not a request. Values are indexed like the key list.
 */
#ifndef TMPL_H
#define TMPL_H

#include <stddef.h>

struct buf;
struct tmpl;

enum tval_type { TV_NONE, TV_STR, TV_RAW, TV_LIST, TV__MAX };

struct tval {
	enum tval_type type;
	const char *s;                   /* TV_STR, TV_RAW: NUL-terminated */
	const struct tval *const *items; /* TV_LIST: n arrays of nkeys values */
	size_t n;
};

/* A string value (TV_NONE when s is NULL or empty), escaped on output. */
static inline struct tval
tv(const char *s)
{
	struct tval v = {.type = s != NULL && *s ? TV_STR : TV_NONE, .s = s};

	return v;
}

/* HTML the program made (never a user's text): shown as is. */
static inline struct tval
tv_raw(const char *s)
{
	struct tval v = {.type = s != NULL && *s ? TV_RAW : TV_NONE, .s = s};

	return v;
}

/* A list of n items, each an array of the page's values. */
static inline struct tval
tv_list(struct tval **items, size_t n)
{
	struct tval v = {.type = TV_LIST,
	    .items = (const struct tval *const *)items,
	    .n = n};

	return v;
}

/* keys: NULL-terminated; a key's index is its position. err gets a message
 * with the file and line. */
struct tmpl *tmpl_parse(const char *name, const char *text, size_t len,
    const char *const *keys, char *err, size_t errlen);
/* Reads dir/file and parses it (partials from dir too). */
struct tmpl *tmpl_load(const char *dir, const char *file,
    const char *const *keys, char *err, size_t errlen);
void tmpl_free(struct tmpl *);

/* Renders with vals[nkeys] (TV_NONE for unset) into out; -1 when out
 * failed (out->err), which the caller checks once. */
int tmpl_render(const struct tmpl *, const struct tval *vals, struct buf *out);

/* Appends s, HTML-escaped. */
void tmpl_escape(struct buf *, const char *s);

#endif
