/*
 * JSON request bodies: exactly one object, strict UTF-8, no NUL, no
 * duplicate keys, bounded depth; and typed field readers that say which
 * field is wrong. The returned json_t is the caller's (json_decref).
 */
#ifndef JSONIN_H
#define JSONIN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JSONIN_DEPTH_MAX 32

/* NULL when body is not one JSON object; why says what is wrong, in a
 * sentence fit for the "detail" of a bad_request. An empty body is "{}". */
json_t *jsonin_parse(const char *body, size_t len, char *why, size_t whylen);

/*
 * Field readers. Each returns 1 when the field is present and valid (out
 * set), 0 when it is absent or JSON null (out untouched), -1 when it has
 * the wrong type or is out of range; why then names the field.
 */
/* A string of 1..maxlen bytes (no NUL, no C0 controls but tab). */
int jsonin_str(json_t *obj, const char *key, size_t maxlen, const char **out,
    char *why, size_t whylen);
/* An integer in [min, max] (a JSON integer, not a real or a string). */
int jsonin_int(json_t *obj, const char *key, int64_t min, int64_t max,
    int64_t *out, char *why, size_t whylen);
/* An RFC 3339 time string or an integer of epoch seconds. */
int jsonin_time(
    json_t *obj, const char *key, int64_t *out, char *why, size_t whylen);

/*
 * A request's fields read one after another: the first error is kept in
 * why (and bad set), and every read after it returns its default, so a
 * handler reads all its fields and then checks bad once.
 */
struct jfields {
	json_t *obj;
	int bad;
	char why[200];
};

/* The string, or NULL when absent (an error when required). */
const char *jf_str(
    struct jfields *, const char *key, size_t maxlen, int required);
/* The integer, or def when absent (an error when required). */
int64_t jf_int(struct jfields *, const char *key, int64_t min, int64_t max,
    int required, int64_t def);
/* A time (jsonin_time), or 0 when absent. */
int64_t jf_time(struct jfields *, const char *key);

#endif
