/*
 * JSON request bodies through jansson, which already refuses bad UTF-8,
 * \u0000 and (with JSON_REJECT_DUPLICATES) a key sent twice. What it
 * reports is turned into a sentence of our own: its text can quote the
 * offending bytes, which need not be UTF-8, and the sentence goes back to
 * the client.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "../lib/common.h"
#include "../lib/str.h"
#include "jsonin.h"

static void say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* why may be NULL (or whylen 0) when the caller does not want it. */
static void
say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	size_t i, need;
	unsigned char c;
	int n;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n < whylen)
		return;
	/* Cut short: do not leave half a UTF-8 character (a field name may
	 * hold any), the sentence goes into a JSON string. */
	i = strlen(why);
	while (i > 0 && ((unsigned char)why[i - 1] & 0xc0) == 0x80)
		i--;
	if (i > 0 && (unsigned char)why[i - 1] >= 0xc0) {
		c = (unsigned char)why[i - 1];
		need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		if (strlen(why) - (i - 1) < need)
			why[i - 1] = '\0';
	}
}

/* 1 when v nests no deeper than max (an object or array is one level). */
static int
depth_ok(const json_t *v, int max)
{
	void *it;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v))
		return 1;
	if (max <= 0)
		return 0;
	for (it = json_object_iter((json_t *)v); it != NULL;
	     it = json_object_iter_next((json_t *)v, it))
		if (!depth_ok(json_object_iter_value(it), max - 1))
			return 0;
	for (i = 0; i < json_array_size(v); i++)
		if (!depth_ok(json_array_get(v, i), max - 1))
			return 0;
	return 1;
}

static int
all_space(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return 0;
	return 1;
}

json_t *
jsonin_parse(const char *body, size_t len, char *why, size_t whylen)
{
	json_error_t e;
	json_t *v;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (body == NULL || all_space(body, len)) {
		if ((v = json_object()) == NULL)
			say(why, whylen, "out of memory");
		return v;
	}
	v = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
	if (v == NULL) {
		switch (json_error_code(&e)) {
		case json_error_out_of_memory:
			say(why, whylen, "out of memory");
			break;
		case json_error_stack_overflow:
			say(why, whylen, "the body is nested too deeply");
			break;
		case json_error_invalid_utf8:
			say(why, whylen,
			    "the body is not valid UTF-8 (line %d, column %d)",
			    e.line, e.column);
			break;
		case json_error_null_character:
		case json_error_null_byte_in_key:
			say(why, whylen,
			    "the body holds a NUL character (line %d, "
			    "column %d)",
			    e.line, e.column);
			break;
		case json_error_duplicate_key:
			say(why, whylen,
			    "the body has a duplicate key (line %d, "
			    "column %d)",
			    e.line, e.column);
			break;
		case json_error_numeric_overflow:
			say(why, whylen,
			    "a number in the body is out of range (line %d, "
			    "column %d)",
			    e.line, e.column);
			break;
		case json_error_premature_end_of_input:
			say(why, whylen, "the body ends before its JSON does");
			break;
		default:
			say(why, whylen,
			    "the body is not valid JSON (line %d, column %d)",
			    e.line, e.column);
			break;
		}
		return NULL;
	}
	if (!json_is_object(v)) {
		say(why, whylen, "the body must be a JSON object");
		json_decref(v);
		return NULL;
	}
	if (!depth_ok(v, JSONIN_DEPTH_MAX)) {
		say(why, whylen, "the body is nested deeper than %d levels",
		    JSONIN_DEPTH_MAX);
		json_decref(v);
		return NULL;
	}
	return v;
}

int
jsonin_str(json_t *obj, const char *key, size_t maxlen, const char **out,
    char *why, size_t whylen)
{
	json_t *v = json_object_get(obj, key);
	const char *s;
	size_t n;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		say(why, whylen, "field \"%s\" must be a string", key);
		return -1;
	}
	s = json_string_value(v);
	n = json_string_length(v);
	if (n == 0) {
		say(why, whylen, "field \"%s\" must not be empty", key);
		return -1;
	}
	if (n > maxlen) {
		say(why, whylen, "field \"%s\" is longer than %zu bytes", key,
		    maxlen);
		return -1;
	}
	if (!str_utf8_ok(s, n)) {
		say(why, whylen, "field \"%s\" holds a control character", key);
		return -1;
	}
	*out = s;
	return 1;
}

int
jsonin_int(json_t *obj, const char *key, int64_t min, int64_t max, int64_t *out,
    char *why, size_t whylen)
{
	json_t *v = json_object_get(obj, key);
	json_int_t i;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v)) {
		say(why, whylen, "field \"%s\" must be an integer", key);
		return -1;
	}
	i = json_integer_value(v);
	if (i < min || i > max) {
		say(why, whylen,
		    "field \"%s\" must be an integer from %" PRId64
		    " to %" PRId64,
		    key, min, max);
		return -1;
	}
	*out = (int64_t)i;
	return 1;
}

/* The latest time str_parse_time accepts: 9999-12-31T23:59:59Z. */
#define JSONIN_TIME_MAX INT64_C(253402300799)

int
jsonin_time(
    json_t *obj, const char *key, int64_t *out, char *why, size_t whylen)
{
	json_t *v = json_object_get(obj, key);
	json_int_t i;
	int64_t t;

	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		i = json_integer_value(v);
		if (i < 0 || i > JSONIN_TIME_MAX) {
			say(why, whylen,
			    "field \"%s\" must be epoch seconds from 0 to "
			    "%" PRId64,
			    key, JSONIN_TIME_MAX);
			return -1;
		}
		*out = (int64_t)i;
		return 1;
	}
	/* str_parse_time also takes a string of digits: not here, a string
	 * must be a date ("2026-..."). */
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v) ||
	    json_string_length(v) < 20 || json_string_value(v)[4] != '-' ||
	    str_parse_time(json_string_value(v), &t) == -1) {
		say(why, whylen,
		    "field \"%s\" must be an RFC 3339 time such as "
		    "2026-11-22T10:00:00Z",
		    key);
		return -1;
	}
	*out = t;
	return 1;
}

static void
jf_required(struct jfields *f, const char *key)
{
	f->bad = 1;
	snprintf(f->why, sizeof(f->why), "Field \"%s\" is required.", key);
}

const char *
jf_str(struct jfields *f, const char *key, size_t maxlen, int required)
{
	const char *s = NULL;
	int rc;

	if (f->bad)
		return NULL;
	rc = jsonin_str(f->obj, key, maxlen, &s, f->why, sizeof(f->why));
	if (rc == -1)
		f->bad = 1;
	else if (rc == 0 && required)
		jf_required(f, key);
	return rc == 1 ? s : NULL;
}

int64_t
jf_int(struct jfields *f, const char *key, int64_t min, int64_t max,
    int required, int64_t def)
{
	int64_t v = def;
	int rc;

	if (f->bad)
		return def;
	rc = jsonin_int(f->obj, key, min, max, &v, f->why, sizeof(f->why));
	if (rc == -1)
		f->bad = 1;
	else if (rc == 0 && required)
		jf_required(f, key);
	return rc == 1 ? v : def;
}

int64_t
jf_time(struct jfields *f, const char *key)
{
	int64_t v = 0;

	if (f->bad)
		return 0;
	if (jsonin_time(f->obj, key, &v, f->why, sizeof(f->why)) == -1)
		f->bad = 1;
	return v;
}
