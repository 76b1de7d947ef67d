/*
 * Decoders for what a browser sends: application/x-www-form-urlencoded
 * bodies and query strings (the same grammar), and Cookie headers. All
 * output lives in the caller's arena.
 */
#ifndef FORM_H
#define FORM_H

#include <stddef.h>

struct arena;

struct kv {
	const char *key; /* decoded, NUL-terminated */
	const char *val; /* decoded, NUL-terminated */
};

struct kvlist {
	struct kv *v;
	size_t n;
};

#define FORM_FIELDS_MAX 256

/*
 * Decodes "a=1&b=x+y%21": '+' is a space, %XX a byte. A pair without '='
 * has an empty value; empty pairs ("a=1&&b=2") are skipped. Returns -1 on
 * a malformed escape, decoded text that is not UTF-8 or holds a NUL or a
 * C0 control other than tab, CR and LF, more than FORM_FIELDS_MAX pairs,
 * or a full arena; out is then empty.
 */
int form_parse(struct arena *, const char *s, size_t len, struct kvlist *out);

/*
 * Decodes a Cookie header: "a=1; b=2". Values are taken as sent (an
 * enclosing pair of double quotes is removed), not percent-decoded.
 * Malformed pairs (no '=', empty name, bad bytes) are skipped, as
 * browsers do; -1 only for a full arena or more than FORM_FIELDS_MAX.
 */
int cookie_parse(struct arena *, const char *header, struct kvlist *out);

/* The value of the first pair named key, or NULL. */
const char *kv_get(const struct kvlist *, const char *key);
/* How many pairs are named key (a field sent twice is refused). */
size_t kv_count(const struct kvlist *, const char *key);

#endif
