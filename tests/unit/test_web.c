/*
 * app/web's pure modules: the arena, form and cookie decoding, JSON
 * bodies, templates. No database: every test makes what it needs and
 * frees it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/lib/arena.h"
#include "../../app/lib/buf.h"
#include "../../app/web/chart.h"
#include "../../app/web/fmt.h"
#include "../../app/web/form.h"
#include "../../app/web/jsonin.h"
#include "../../app/web/tmpl.h"
#include "../../app/web/web.h"
#include "fixture.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#include <sanitizer/asan_interface.h>
#endif
#endif

/* A heap copy of exactly n bytes, no terminator: ASan catches a reader
 * that looks past the length it was given. The caller frees it. */
static char *
exact_copy(const char *s, size_t n)
{
	char *p = malloc(n > 0 ? n : 1);

	ck_assert_ptr_nonnull(p);
	if (n > 0)
		memcpy(p, s, n);
	return p;
}

/* Parses s[0..n) from an exact copy; returns form_parse's result. */
static int
form_exact(struct arena *a, const char *s, size_t n, struct kvlist *out)
{
	char *p = exact_copy(s, n);
	int rc = form_parse(a, p, n, out);

	free(p);
	return rc;
}

/* ---- arena ---- */

START_TEST(test_web_arena_alloc_aligned_zeroed)
{
	static const size_t sizes[] = {0, 1, 3, 7, 16, 17, 100, 5000, 40000};
	struct arena *a = arena_new(1 << 20);
	unsigned char *p, *prev = NULL;
	size_t i, k;

	ck_assert_ptr_nonnull(a);
	for (i = 0; i < NELEM(sizes); i++) {
		p = arena_alloc(a, sizes[i]);
		ck_assert_ptr_nonnull(p);
		ck_assert_ptr_ne(p, prev);
		ck_assert_uint_eq((uintptr_t)p % _Alignof(max_align_t), 0);
		for (k = 0; k < sizes[i]; k++)
			ck_assert_uint_eq(p[k], 0);
		/* Dirty it: the next round after a reset must be zeroed. */
		memset(p, 0xa5, sizes[i]);
		prev = p;
	}
	ck_assert_int_eq(arena_err(a), 0);
	arena_reset(a);
	ck_assert_uint_eq(arena_used(a), 0);
	for (i = 0; i < NELEM(sizes); i++) {
		p = arena_alloc(a, sizes[i]);
		ck_assert_ptr_nonnull(p);
		for (k = 0; k < sizes[i]; k++)
			ck_assert_uint_eq(p[k], 0);
	}
	arena_free(a);
}
END_TEST

START_TEST(test_web_arena_cap_is_sticky)
{
	struct arena *a = arena_new(1024);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(arena_alloc(a, 1000));
	ck_assert_uint_ge(arena_used(a), 1000);
	ck_assert_uint_le(arena_used(a), 1024);
	ck_assert_int_eq(arena_err(a), 0);
	ck_assert_ptr_null(arena_alloc(a, 100));
	ck_assert_int_eq(arena_err(a), 1);
	/* Sticky: even what would fit fails until the reset. */
	ck_assert_ptr_null(arena_alloc(a, 1));
	ck_assert_ptr_null(arena_strdup(a, "x"));
	ck_assert_ptr_null(arena_printf(a, "%d", 1));
	ck_assert_int_eq(arena_err(a), 1);
	arena_reset(a);
	ck_assert_int_eq(arena_err(a), 0);
	ck_assert_ptr_nonnull(arena_alloc(a, 1024));
	ck_assert_ptr_null(arena_alloc(a, 0));
	arena_reset(a);
	/* Sizes that would overflow the rounding. */
	ck_assert_ptr_null(arena_alloc(a, SIZE_MAX));
	ck_assert_int_eq(arena_err(a), 1);
	arena_reset(a);
	ck_assert_ptr_null(arena_alloc(a, SIZE_MAX - 8));
	arena_reset(a);
	ck_assert_ptr_null(arena_strndup(a, "", SIZE_MAX));
	ck_assert_int_eq(arena_err(a), 1);
	arena_free(a);
}
END_TEST

START_TEST(test_web_arena_many_chunks_reset)
{
	struct arena *a = arena_new(8 << 20);
	size_t i, round;
	char *p;

	ck_assert_ptr_nonnull(a);
	/* Several rounds past the first chunk: the extra chunks are freed by
	 * each reset (LeakSanitizer would see them otherwise). */
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 200; i++) {
			p = arena_alloc(a, 1000 + i * 37);
			ck_assert_ptr_nonnull(p);
			memset(p, (int)i, 1000 + i * 37);
		}
		p = arena_alloc(a, 3 << 20); /* bigger than any chunk */
		ck_assert_ptr_nonnull(p);
		memset(p, 1, 3 << 20);
		ck_assert_int_eq(arena_err(a), 0);
		arena_reset(a);
		ck_assert_uint_eq(arena_used(a), 0);
	}
	arena_free(a);
	arena_free(NULL);
	/* A zero cap refuses everything but still frees cleanly. */
	a = arena_new(0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(arena_alloc(a, 0));
	arena_free(a);
}
END_TEST

START_TEST(test_web_arena_poisons_unused_bytes)
{
#ifdef TEST_ASAN
	struct arena *a = arena_new(1 << 20);
	char *p, *q;

	ck_assert_ptr_nonnull(a);
	p = arena_alloc(a, 5);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(__asan_address_is_poisoned(p), 0);
	ck_assert_int_eq(__asan_address_is_poisoned(p + 4), 0);
	/* The padding up to the next allocation is not the caller's. */
	ck_assert_int_ne(__asan_address_is_poisoned(p + 5), 0);
	q = arena_alloc(a, 100000); /* a chunk of its own */
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(__asan_address_is_poisoned(q + 99999), 0);
	arena_reset(a);
	/* After the reset nothing of the first chunk may be used. */
	ck_assert_int_ne(__asan_address_is_poisoned(p), 0);
	p = arena_alloc(a, 8);
	ck_assert_int_eq(__asan_address_is_poisoned(p + 7), 0);
	ck_assert_int_ne(__asan_address_is_poisoned(p + 8), 0);
	arena_free(a);
#endif
}
END_TEST

START_TEST(test_web_arena_strings)
{
	struct arena *a = arena_new(1 << 20);
	char big[40000];
	char *s;

	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(arena_strdup(a, "hello"), "hello");
	ck_assert_str_eq(arena_strdup(a, ""), "");
	s = arena_strndup(a, "abcdef", 3);
	ck_assert_str_eq(s, "abc");
	s = arena_strndup(a, "a\0b", 3);
	ck_assert_int_eq(memcmp(s, "a\0b", 4), 0);
	ck_assert_str_eq(
	    arena_printf(a, "%d-%s-%05.1f", -42, "x", 2.25), "-42-x-002.2");
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	s = arena_printf(a, "<%s>", big);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), sizeof(big) + 1);
	ck_assert_int_eq(s[0], '<');
	ck_assert_int_eq(s[sizeof(big)], '>');
	ck_assert_int_eq(arena_err(a), 0);
	arena_free(a);
}
END_TEST

/* ---- forms ---- */

START_TEST(test_web_form_decodes)
{
	static const struct {
		const char *in;
		size_t n;
		const char *kv[8]; /* key, value, ... */
	} cases[] = {
	    {"a=1&b=x+y%21", 2, {"a", "1", "b", "x y!"}},
	    {"a", 1, {"a", ""}},
	    {"a=", 1, {"a", ""}},
	    {"a=1&&b=2", 2, {"a", "1", "b", "2"}},
	    {"&a=1&", 1, {"a", "1"}},
	    {"&&&", 0, {NULL}},
	    {"", 0, {NULL}},
	    {"=x", 1, {"", "x"}},
	    {"a=b=c", 1, {"a", "b=c"}},
	    {"k%20ey=%C3%A9t%c3%a9", 1, {"k ey", "\xc3\xa9t\xc3\xa9"}},
	    {"m=%e2%82%ac%F0%9F%98%80", 1,
		{"m", "\xe2\x82\xac\xf0\x9f\x98\x80"}},
	    {"t=line1%0D%0Aline2%09x", 1, {"t", "line1\r\nline2\tx"}},
	    {"t=raw\xc3\xa9", 1, {"t", "raw\xc3\xa9"}},
	    {"t=x\ny", 1, {"t", "x\ny"}},
	    {"p=%2B%26%3D%25", 1, {"p", "+&=%"}},
	    {"a=1&a=2", 2, {"a", "1", "a", "2"}},
	};
	struct arena *a = arena_new(1 << 16);
	struct kvlist l;
	size_t i, k;

	for (i = 0; i < NELEM(cases); i++) {
		arena_reset(a);
		ck_assert_msg(
		    form_exact(a, cases[i].in, strlen(cases[i].in), &l) == 0,
		    "form_parse(\"%s\") failed", cases[i].in);
		ck_assert_uint_eq(l.n, cases[i].n);
		for (k = 0; k < l.n; k++) {
			ck_assert_str_eq(l.v[k].key, cases[i].kv[2 * k]);
			ck_assert_str_eq(l.v[k].val, cases[i].kv[2 * k + 1]);
		}
	}
	arena_free(a);
}
END_TEST

START_TEST(test_web_form_refuses_hostile)
{
	static const struct {
		const char *in;
		size_t len; /* 0: strlen */
	} bad[] = {
	    {"a=%00", 0},          /* NUL */
	    {"a%00=1", 0},         /* NUL in a key */
	    {"a=b\0c", 5},         /* a raw NUL */
	    {"a=%", 0},            /* lone % */
	    {"a=%4", 0},           /* short escape */
	    {"a=%G1", 0},          /* not hex */
	    {"a=%1G", 0},          /* not hex */
	    {"a=%%41", 0},         /* %% */
	    {"%=1", 0},            /* in a key */
	    {"a=1&b=%", 0},        /* the last field */
	    {"a=%C3%28", 0},       /* bad continuation */
	    {"a=%C3", 0},          /* truncated sequence */
	    {"a=%ED%A0%80", 0},    /* surrogate */
	    {"a=%C0%AF", 0},       /* overlong '/' */
	    {"a=%E0%80%AF", 0},    /* overlong, three bytes */
	    {"a=%F4%90%80%80", 0}, /* past U+10FFFF */
	    {"a=%FF", 0},          /* never in UTF-8 */
	    {"a=\xff", 0},         /* raw bad byte */
	    {"a=\xc3", 0},         /* raw truncated */
	    {"a=%01", 0},          /* C0 control */
	    {"a=%1B", 0},          /* ESC */
	    {"a=%7F", 0},          /* DEL */
	    {"a=%C2%85", 0},       /* C1 control (NEL) */
	};
	struct arena *a = arena_new(1 << 16);
	struct kvlist l;
	size_t i, n;
	int rc;

	for (i = 0; i < NELEM(bad); i++) {
		n = bad[i].len ? bad[i].len : strlen(bad[i].in);
		arena_reset(a);
		l.v = (struct kv *)1;
		l.n = 99;
		rc = form_exact(a, bad[i].in, n, &l);
		ck_assert_msg(
		    rc == -1, "form_parse(\"%s\") took it", bad[i].in);
		ck_assert_ptr_null(l.v);
		ck_assert_uint_eq(l.n, 0);
	}
	arena_free(a);
}
END_TEST

START_TEST(test_web_form_honours_length)
{
	struct arena *a = arena_new(1 << 16);
	struct kvlist l;

	/* Only the bytes given count, and the reader stops there (exact
	 * copies: ASan would see a read past them). */
	ck_assert_int_eq(form_exact(a, "a=1&b=2", 3, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(kv_get(&l, "a"), "1");
	ck_assert_int_eq(form_exact(a, "a=%41", 5, &l), 0);
	ck_assert_str_eq(kv_get(&l, "a"), "A");
	/* "%4" then the end: the escape is cut short. */
	ck_assert_int_eq(form_exact(a, "a=%41", 4, &l), -1);
	ck_assert_int_eq(form_exact(a, "a=%C3%A9", 5, &l), -1);
	ck_assert_int_eq(form_exact(a, "", 0, &l), 0);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_int_eq(form_parse(a, NULL, 0, &l), 0);
	ck_assert_uint_eq(l.n, 0);
	arena_free(a);
}
END_TEST

START_TEST(test_web_form_field_limit)
{
	struct arena *a = arena_new(1 << 20);
	struct buf b;
	struct kvlist l;
	int i;

	buf_init(&b, 0);
	for (i = 0; i < FORM_FIELDS_MAX; i++)
		buf_printf(&b, "%sf%d=%d&", i % 2 ? "&&" : "", i, i);
	ck_assert_int_eq(form_exact(a, b.data, b.len, &l), 0);
	ck_assert_uint_eq(l.n, FORM_FIELDS_MAX);
	ck_assert_str_eq(kv_get(&l, "f255"), "255");
	buf_puts(&b, "one=more");
	arena_reset(a);
	ck_assert_int_eq(form_exact(a, b.data, b.len, &l), -1);
	ck_assert_uint_eq(l.n, 0);
	/* Refused before anything is allocated. */
	ck_assert_uint_eq(arena_used(a), 0);
	buf_free(&b);
	arena_free(a);
}
END_TEST

START_TEST(test_web_form_overlong_and_arena_full)
{
	size_t n = 200000;
	struct arena *a = arena_new(1 << 20);
	struct kvlist l;
	char *s = malloc(n);

	ck_assert_ptr_nonnull(s);
	memcpy(s, "v=", 2);
	memset(s + 2, 'x', n - 2);
	ck_assert_int_eq(form_parse(a, s, n, &l), 0);
	ck_assert_uint_eq(strlen(kv_get(&l, "v")), n - 2);
	arena_free(a);
	/* The same in an arena too small for it. */
	a = arena_new(4096);
	ck_assert_int_eq(form_parse(a, s, n, &l), -1);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_int_eq(arena_err(a), 1);
	arena_free(a);
	free(s);
}
END_TEST

START_TEST(test_web_kv_get_count)
{
	struct arena *a = arena_new(1 << 16);
	struct kvlist l, empty = {NULL, 0};

	ck_assert_int_eq(form_exact(a, "a=1&b=&a=2&c", 12, &l), 0);
	ck_assert_str_eq(kv_get(&l, "a"), "1");
	ck_assert_uint_eq(kv_count(&l, "a"), 2);
	ck_assert_str_eq(kv_get(&l, "b"), "");
	ck_assert_uint_eq(kv_count(&l, "b"), 1);
	ck_assert_str_eq(kv_get(&l, "c"), "");
	ck_assert_ptr_null(kv_get(&l, "d"));
	ck_assert_uint_eq(kv_count(&l, "d"), 0);
	ck_assert_ptr_null(kv_get(&l, "A"));
	ck_assert_ptr_null(kv_get(&empty, "a"));
	ck_assert_uint_eq(kv_count(&empty, "a"), 0);
	arena_free(a);
}
END_TEST

/* ---- cookies ---- */

START_TEST(test_web_cookie_parses)
{
	static const struct {
		const char *in;
		size_t n;
		const char *kv[8];
	} cases[] = {
	    {"a=1; b=2", 2, {"a", "1", "b", "2"}},
	    {"sid=abc", 1, {"sid", "abc"}},
	    {"  sid = \"q v\" ;x=y", 1, {"x", "y"}},
	    {" sid = \"qv\" ;x=y", 2, {"sid", "qv", "x", "y"}},
	    {"a=\"\"", 1, {"a", ""}},
	    {"a=", 1, {"a", ""}},
	    {"a=%41+b", 1, {"a", "%41+b"}},
	    {"a=b=c", 1, {"a", "b=c"}},
	    {"a=1;b;c=3", 2, {"a", "1", "c", "3"}},
	    {"=v; c=d", 1, {"c", "d"}},
	    {"a=\"x; b=2", 1, {"b", "2"}},
	    {"a=b c; d=e", 1, {"d", "e"}},
	    {"a=\xc3\xa9; d=e", 1, {"d", "e"}},
	    {"\xc3\xa9=1; d=e", 1, {"d", "e"}},
	    {"a b=1; d=e", 1, {"d", "e"}},
	    {"a\x01=1; d=e\x7f; f=g", 1, {"f", "g"}},
	    {"a=1;;; ;", 1, {"a", "1"}},
	    {"a=1; a=2", 2, {"a", "1", "a", "2"}},
	    {";", 0, {NULL}},
	    {"", 0, {NULL}},
	    {"garbage", 0, {NULL}},
	};
	struct arena *a = arena_new(1 << 16);
	struct kvlist l;
	size_t i, k;

	for (i = 0; i < NELEM(cases); i++) {
		arena_reset(a);
		ck_assert_int_eq(cookie_parse(a, cases[i].in, &l), 0);
		ck_assert_msg(
		    l.n == cases[i].n, "\"%s\": %zu pairs", cases[i].in, l.n);
		for (k = 0; k < l.n; k++) {
			ck_assert_str_eq(l.v[k].key, cases[i].kv[2 * k]);
			ck_assert_str_eq(l.v[k].val, cases[i].kv[2 * k + 1]);
		}
	}
	ck_assert_int_eq(cookie_parse(a, NULL, &l), 0);
	ck_assert_uint_eq(l.n, 0);
	arena_free(a);
}
END_TEST

START_TEST(test_web_cookie_limits)
{
	struct arena *a = arena_new(1 << 20);
	struct kvlist l;
	struct buf b;
	int i;

	buf_init(&b, 0);
	/* Malformed pairs do not count. */
	for (i = 0; i < 2 * FORM_FIELDS_MAX; i++)
		buf_printf(&b, "bad%d; ", i);
	for (i = 0; i < FORM_FIELDS_MAX; i++)
		buf_printf(&b, "c%d=%d; ", i, i);
	ck_assert_int_eq(cookie_parse(a, buf_cstr(&b), &l), 0);
	ck_assert_uint_eq(l.n, FORM_FIELDS_MAX);
	ck_assert_str_eq(kv_get(&l, "c0"), "0");
	buf_puts(&b, "x=1");
	arena_reset(a);
	ck_assert_int_eq(cookie_parse(a, buf_cstr(&b), &l), -1);
	ck_assert_uint_eq(l.n, 0);
	arena_free(a);
	/* A full arena. */
	a = arena_new(64);
	ck_assert_int_eq(cookie_parse(a, buf_cstr(&b), &l), -1);
	ck_assert_uint_eq(l.n, 0);
	arena_free(a);
	buf_free(&b);
}
END_TEST

/* ---- JSON ---- */

START_TEST(test_web_json_parses_objects)
{
	static const char *const ok[] = {"{}", " {\"a\": \"x\", \"n\": 5} \n",
	    "{\"a\":[1,2,{\"b\":null}],\"c\":{\"d\":true}}",
	    "{\"\xc3\xa9\":\"\xe2\x82\xac\"}",
	    "{\"a\":\"\\u00e9\\ud83d\\ude00\"}"};
	static const char *const empty[] = {"", " ", "\r\n\t "};
	char why[200];
	json_t *v;
	size_t i;

	for (i = 0; i < NELEM(ok); i++) {
		v = jsonin_parse(ok[i], strlen(ok[i]), why, sizeof(why));
		ck_assert_msg(v != NULL, "%s: %s", ok[i], why);
		ck_assert(json_is_object(v));
		json_decref(v);
	}
	for (i = 0; i < NELEM(empty); i++) {
		v = jsonin_parse(empty[i], strlen(empty[i]), why, sizeof(why));
		ck_assert_ptr_nonnull(v);
		ck_assert(json_is_object(v));
		ck_assert_uint_eq(json_object_size(v), 0);
		json_decref(v);
	}
	v = jsonin_parse(NULL, 0, why, sizeof(why));
	ck_assert_ptr_nonnull(v);
	json_decref(v);
}
END_TEST

START_TEST(test_web_json_refuses_hostile)
{
	static const struct {
		const char *in;
		size_t len; /* 0: strlen */
		const char *why;
	} bad[] = {
	    {"{\"a\":1,\"a\":2}", 0, "the body has a duplicate key (line 1, "},
	    {"{\"a\":{\"b\":1,\"b\":1}}", 0, "duplicate key"},
	    {"[1]", 0, "the body must be a JSON object"},
	    {"[]", 0, "the body must be a JSON object"},
	    {"1", 0, "the body must be a JSON object"},
	    {"\"s\"", 0, "the body must be a JSON object"},
	    {"null", 0, "the body must be a JSON object"},
	    {"true", 0, "the body must be a JSON object"},
	    {"{", 0, "the body ends before its JSON does"},
	    {"{\"a\":}", 0, "the body is not valid JSON (line 1, column 6)"},
	    {"{\"a\":1}\n x", 0, "the body is not valid JSON (line 2, "},
	    {"{\"a\":1}{}", 0, "the body is not valid JSON"},
	    {"{\"a\":1}\0", 8, "the body is not valid JSON"},
	    {"{\"a\":\"x\0\"}", 10, "the body"},
	    {"{\"a\":\"\\u0000\"}", 0, "NUL character"},
	    {"{\"\\u0000\":1}", 0, "NUL character"},
	    {"{\"a\":\"\xff\"}", 0, "not valid UTF-8"},
	    {"{\"a\":\"\xed\xa0\x80\"}", 0, "not valid UTF-8"},
	    {"{\"a\":\"\xc3\x28\"}", 0, "not valid UTF-8"},
	    {"{\"a\":\"\\ud800\"}", 0, "the body"},
	    {"{\"a\":99999999999999999999}", 0, "out of range"},
	    {"{\"a\":1e999}", 0, "out of range"},
	    {"{a:1}", 0, "not valid JSON"},
	    {"{'a':1}", 0, "not valid JSON"},
	    {"{\"a\":1,}", 0, "not valid JSON"},
	    {"\xef\xbb\xbf{}", 0, "not valid JSON"},
	};
	char why[200];
	json_t *v;
	size_t i, n;
	char *p;

	for (i = 0; i < NELEM(bad); i++) {
		n = bad[i].len ? bad[i].len : strlen(bad[i].in);
		p = exact_copy(bad[i].in, n);
		why[0] = 'X';
		v = jsonin_parse(p, n, why, sizeof(why));
		free(p);
		ck_assert_msg(v == NULL, "case %zu accepted", i);
		ck_assert_msg(strstr(why, bad[i].why) != NULL,
		    "case %zu: \"%s\" lacks \"%s\"", i, why, bad[i].why);
	}
	/* why is optional. */
	ck_assert_ptr_null(jsonin_parse("[", 1, NULL, 0));
	ck_assert_ptr_null(jsonin_parse("[", 1, why, 0));
}
END_TEST

/* A body of depth levels, objects and arrays in turn. */
static void
nested(struct buf *b, int depth)
{
	int i;

	buf_reset(b);
	for (i = 0; i < depth; i++)
		buf_puts(b, i % 2 ? "[" : "{\"k\":");
	buf_puts(b, "1");
	for (i = depth - 1; i >= 0; i--)
		buf_puts(b, i % 2 ? "]" : "}");
}

START_TEST(test_web_json_depth_limit)
{
	char why[200];
	struct buf b;
	json_t *v;

	buf_init(&b, 0);
	nested(&b, JSONIN_DEPTH_MAX);
	v = jsonin_parse(b.data, b.len, why, sizeof(why));
	ck_assert_msg(v != NULL, "%s", why);
	json_decref(v);
	nested(&b, JSONIN_DEPTH_MAX + 1);
	ck_assert_ptr_null(jsonin_parse(b.data, b.len, why, sizeof(why)));
	ck_assert_str_eq(why, "the body is nested deeper than 32 levels");
	/* Past jansson's own limit it stops parsing itself. */
	nested(&b, 5000);
	ck_assert_ptr_null(jsonin_parse(b.data, b.len, why, sizeof(why)));
	ck_assert_str_eq(why, "the body is nested too deeply");
	buf_free(&b);
}
END_TEST

/* The object a test reads fields from. */
static json_t *
fields(void)
{
	static const char body[] =
	    "{\"account\":\"a@example.com\", \"num\":42, \"str\":\"5\", "
	    "\"real\":1.0, \"neg\":-3, \"t\":true, \"nul\":null, "
	    "\"empty\":\"\", \"tab\":\"a\\tb\", \"lf\":\"a\\nb\", "
	    "\"cr\":\"a\\rb\", \"esc\":\"\\u001b\", \"del\":\"\\u007f\", "
	    "\"arr\":[1], \"obj\":{}, \"big\":9223372036854775807, "
	    "\"small\":-9223372036854775808, "
	    "\"when\":\"2026-11-22T10:00:00Z\", "
	    "\"whenoff\":\"2026-11-22T12:00:00+02:00\", \"feb30\":"
	    "\"2026-02-30T00:00:00Z\", \"epoch\":1795341600, "
	    "\"epochstr\":\"1795341600\", "
	    "\"fivek\":\"\xe2\x82\xac\"}";
	char why[200];
	json_t *v = jsonin_parse(body, sizeof(body) - 1, why, sizeof(why));

	ck_assert_msg(v != NULL, "%s", why);
	return v;
}

START_TEST(test_web_json_str_reader)
{
	static const struct {
		const char *key;
		size_t maxlen;
		int rc;
		const char *want; /* rc 1: the value; -1: the why */
	} cases[] = {
	    {"account", 254, 1, "a@example.com"},
	    {"account", 13, 1, "a@example.com"},
	    {"account", 12, -1, "field \"account\" is longer than 12 bytes"},
	    {"fivek", 3, 1, "\xe2\x82\xac"},
	    {"fivek", 2, -1, "longer than 2 bytes"},
	    {"tab", 10, 1, "a\tb"},
	    {"missing", 10, 0, NULL},
	    {"nul", 10, 0, NULL},
	    {"num", 10, -1, "field \"num\" must be a string"},
	    {"t", 10, -1, "field \"t\" must be a string"},
	    {"arr", 10, -1, "field \"arr\" must be a string"},
	    {"obj", 10, -1, "field \"obj\" must be a string"},
	    {"empty", 10, -1, "field \"empty\" must not be empty"},
	    {"lf", 10, -1, "field \"lf\" holds a control character"},
	    {"cr", 10, -1, "control character"},
	    {"esc", 10, -1, "control character"},
	    {"del", 10, -1, "control character"},
	};
	json_t *o = fields();
	const char *out;
	char why[200];
	size_t i;
	int rc;

	for (i = 0; i < NELEM(cases); i++) {
		out = "untouched";
		why[0] = '\0';
		rc = jsonin_str(
		    o, cases[i].key, cases[i].maxlen, &out, why, sizeof(why));
		ck_assert_msg(rc == cases[i].rc, "%s: %d", cases[i].key, rc);
		if (rc == 1)
			ck_assert_str_eq(out, cases[i].want);
		else
			ck_assert_str_eq(out, "untouched");
		if (rc == -1)
			ck_assert_msg(strstr(why, cases[i].want) != NULL,
			    "%s: %s", cases[i].key, why);
	}
	/* A JSON string with an embedded NUL, built in code (a body cannot
	 * carry one). */
	json_object_set_new(o, "bin", json_stringn("a\0b", 3));
	ck_assert_int_eq(jsonin_str(o, "bin", 10, &out, why, sizeof(why)), -1);
	ck_assert_int_eq(jsonin_str(o, "num", 10, &out, NULL, 0), -1);
	json_decref(o);
}
END_TEST

START_TEST(test_web_json_why_cut_on_character)
{
	char key[201], why[80];
	json_t *o = json_object(), *s;
	const char *out;
	size_t len;
	int i;

	/* A field name of 100 two-byte characters: however short why is,
	 * what it holds stays UTF-8, fit for a JSON string. */
	for (i = 0; i < 100; i++)
		memcpy(key + 2 * i, "\xc3\xa9", 2);
	key[200] = '\0';
	json_object_set_new(o, key, json_integer(1));
	for (len = 1; len <= sizeof(why); len++) {
		ck_assert_int_eq(jsonin_str(o, key, 10, &out, why, len), -1);
		ck_assert_uint_lt(strlen(why), len);
		s = json_string(why);
		ck_assert_msg(s != NULL, "whylen %zu: bad UTF-8", len);
		json_decref(s);
	}
	ck_assert_uint_ge(strlen(why), sizeof(why) - 2);
	json_decref(o);
}
END_TEST

START_TEST(test_web_json_int_reader)
{
	static const struct {
		const char *key;
		int64_t min, max;
		int rc;
		int64_t want;
		const char *why;
	} cases[] = {
	    {"num", 0, 100, 1, 42, NULL},
	    {"num", 42, 42, 1, 42, NULL},
	    {"num", 43, 100, -1, 0,
		"field \"num\" must be an integer from "
		"43 to 100"},
	    {"num", 0, 41, -1, 0, "from 0 to 41"},
	    {"neg", -3, 0, 1, -3, NULL},
	    {"neg", 0, 10, -1, 0, "field \"neg\""},
	    {"big", INT64_MIN, INT64_MAX, 1, INT64_MAX, NULL},
	    {"small", INT64_MIN, INT64_MAX, 1, INT64_MIN, NULL},
	    {"big", 0, INT64_MAX - 1, -1, 0, "field \"big\""},
	    {"real", 0, 10, -1, 0, "field \"real\" must be an integer"},
	    {"str", 0, 10, -1, 0, "field \"str\" must be an integer"},
	    {"t", 0, 10, -1, 0, "field \"t\" must be an integer"},
	    {"arr", 0, 10, -1, 0, "must be an integer"},
	    {"nul", 0, 10, 0, 0, NULL},
	    {"missing", 0, 10, 0, 0, NULL},
	};
	json_t *o = fields();
	char why[200];
	int64_t out;
	size_t i;
	int rc;

	for (i = 0; i < NELEM(cases); i++) {
		out = 7777;
		why[0] = '\0';
		rc = jsonin_int(o, cases[i].key, cases[i].min, cases[i].max,
		    &out, why, sizeof(why));
		ck_assert_msg(rc == cases[i].rc, "case %zu: %d", i, rc);
		ck_assert_int_eq(out, rc == 1 ? cases[i].want : 7777);
		if (rc == -1)
			ck_assert_msg(strstr(why, cases[i].why) != NULL,
			    "case %zu: %s", i, why);
	}
	json_decref(o);
}
END_TEST

START_TEST(test_web_json_time_reader)
{
	static const struct {
		const char *key;
		int rc;
		int64_t want;
	} cases[] = {
	    {"when", 1, 1795341600},
	    {"whenoff", 1, 1795341600},
	    {"epoch", 1, 1795341600},
	    {"num", 1, 42},
	    {"epochstr", -1, 0},
	    {"str", -1, 0},
	    {"feb30", -1, 0},
	    {"neg", -1, 0},
	    {"big", -1, 0},
	    {"real", -1, 0},
	    {"account", -1, 0},
	    {"empty", -1, 0},
	    {"t", -1, 0},
	    {"nul", 0, 0},
	    {"missing", 0, 0},
	};
	json_t *o = fields();
	char why[200];
	int64_t out;
	size_t i;
	int rc;

	for (i = 0; i < NELEM(cases); i++) {
		out = 7777;
		why[0] = '\0';
		rc = jsonin_time(o, cases[i].key, &out, why, sizeof(why));
		ck_assert_msg(rc == cases[i].rc, "%s: %d", cases[i].key, rc);
		ck_assert_int_eq(out, rc == 1 ? cases[i].want : 7777);
		if (rc == -1) {
			ck_assert_msg(
			    strstr(why, cases[i].key) != NULL, "%s", why);
			ck_assert(strstr(why, "RFC 3339") != NULL ||
				  strstr(why, "epoch seconds") != NULL);
		}
	}
	json_decref(o);
}
END_TEST

/* ---- templates ---- */

static const char *const tkeys[] = {
    "title", "body", "items", "name", "flag", "inner", "html", NULL};
enum { K_TITLE, K_BODY, K_ITEMS, K_NAME, K_FLAG, K_INNER, K_HTML, K__MAX };

static struct tval
S(const char *s) {
	struct tval v = {TV_STR, s, NULL, 0};

	return v;
}

/* Parses text with tkeys, renders it with vals; returns the output in a
 * static buffer. */
static const char *
render(const char *text, const struct tval *vals)
{
	static char out[4096];
	char err[256];
	struct tmpl *t;
	struct buf b;

	t = tmpl_parse("t.html", text, strlen(text), tkeys, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	buf_init(&b, 0);
	ck_assert_int_eq(tmpl_render(t, vals, &b), 0);
	ck_assert_uint_lt(b.len, sizeof(out));
	memcpy(out, buf_cstr(&b), b.len + 1);
	buf_free(&b);
	tmpl_free(t);
	return out;
}

START_TEST(test_web_tmpl_escapes)
{
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	struct buf b;

	v[K_TITLE] = S("<script>\"'&</script>");
	ck_assert_str_eq(render("<h1>{{title}}</h1>", v),
	    "<h1>&lt;script&gt;&quot;&#39;&amp;&lt;/script&gt;</h1>");
	ck_assert_str_eq(render("<a title='{{ title }}'>", v),
	    "<a title='&lt;script&gt;&quot;&#39;&amp;&lt;/script&gt;'>");
	buf_init(&b, 0);
	tmpl_escape(&b, "plain \xc3\xa9 text");
	tmpl_escape(&b, "&&");
	tmpl_escape(&b, "");
	tmpl_escape(&b, NULL);
	ck_assert_str_eq(buf_cstr(&b), "plain \xc3\xa9 text&amp;&amp;");
	buf_free(&b);
}
END_TEST

START_TEST(test_web_tmpl_raw_needs_raw_value)
{
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};

	v[K_HTML].type = TV_RAW;
	v[K_HTML].s = "<b>bold</b>";
	v[K_TITLE] = S("<i>");
	ck_assert_str_eq(render("{{&html}}", v), "<b>bold</b>");
	/* A program's HTML under a plain tag is escaped... */
	ck_assert_str_eq(render("{{html}}", v), "&lt;b&gt;bold&lt;/b&gt;");
	/* ...and a user's string stays text under {{&}}. */
	ck_assert_str_eq(render("{{&title}}", v), "&lt;i&gt;");
}
END_TEST

START_TEST(test_web_tmpl_plain_values)
{
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	const struct tval *row[1];
	struct tval item[K__MAX] = {{TV_NONE, NULL, NULL, 0}};

	ck_assert_str_eq(render("", v), "");
	ck_assert_str_eq(render("no tags } { }}", v), "no tags } { }}");
	ck_assert_str_eq(render("[{{title}}]", v), "[]");
	v[K_TITLE] = S("");
	ck_assert_str_eq(render("[{{title}}]", v), "[]");
	v[K_TITLE].s = NULL;
	ck_assert_str_eq(render("[{{title}}]", v), "[]");
	/* A list printed as a value prints nothing. */
	row[0] = item;
	v[K_ITEMS].type = TV_LIST;
	v[K_ITEMS].items = row;
	v[K_ITEMS].n = 1;
	ck_assert_str_eq(render("[{{items}}]", v), "[]");
	v[K_NAME] = S("n");
	ck_assert_str_eq(
	    render("a{{! a comment\n with {{ braces }}b{{name}}", v), "abn");
}
END_TEST

START_TEST(test_web_tmpl_sections)
{
	static const char text[] = "{{#flag}}yes{{/flag}}{{^flag}}no{{/flag}}";
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	struct tval item[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	const struct tval *rows[2] = {item, item};

	ck_assert_str_eq(render(text, v), "no");
	v[K_FLAG] = S("");
	ck_assert_str_eq(render(text, v), "no");
	v[K_FLAG] = S("1");
	ck_assert_str_eq(render(text, v), "yes");
	v[K_FLAG].type = TV_RAW;
	ck_assert_str_eq(render(text, v), "yes");
	v[K_FLAG].type = TV_LIST;
	v[K_FLAG].s = NULL;
	v[K_FLAG].items = rows;
	v[K_FLAG].n = 0;
	ck_assert_str_eq(render(text, v), "no");
	v[K_FLAG].n = 2;
	ck_assert_str_eq(render(text, v), "yesyes");
	v[K_FLAG].items = NULL;
	ck_assert_str_eq(render(text, v), "no");
	/* Nested and inverted inside normal. */
	v[K_FLAG] = S("x");
	v[K_NAME] = S("N");
	ck_assert_str_eq(render("{{#flag}}<{{#name}}{{name}}{{^title}}-"
				"{{/title}}{{/name}}>{{/flag}}",
			     v),
	    "<N->");
}
END_TEST

START_TEST(test_web_tmpl_list_shadowing)
{
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	struct tval it[3][K__MAX] = {{{TV_NONE, NULL, NULL, 0}}};
	struct tval in[2][K__MAX] = {{{TV_NONE, NULL, NULL, 0}}};
	const struct tval *rows[3] = {it[0], it[1], it[2]};
	const struct tval *inner[2] = {in[0], in[1]};

	v[K_TITLE] = S("T");
	v[K_NAME] = S("top");
	v[K_ITEMS].type = TV_LIST;
	v[K_ITEMS].items = rows;
	v[K_ITEMS].n = 3;
	it[0][K_NAME] = S("a<");
	it[0][K_FLAG] = S("on");
	/* it[1] has no name: the top-level one shows through. */
	it[2][K_NAME] = S("c");
	it[2][K_TITLE] = S("shadow");
	ck_assert_str_eq(render("{{#items}}[{{name}}|{{title}}{{#flag}}!"
				"{{/flag}}{{^flag}}?{{/flag}}]{{/items}}"
				"{{name}}",
			     v),
	    "[a&lt;|T!][top|T?][c|shadow?]top");
	/* A list inside an item: the inner item first, then the outer
	 * item, then the top level. */
	it[0][K_INNER].type = TV_LIST;
	it[0][K_INNER].items = inner;
	it[0][K_INNER].n = 2;
	in[0][K_NAME] = S("x");
	in[1][K_TITLE] = S("y");
	ck_assert_str_eq(render("{{#items}}{{#inner}}({{name}},{{title}})"
				"{{/inner}};{{/items}}",
			     v),
	    "(x,T)(a&lt;,y);;;");
	/* The same list nested in itself: a nameless inner item shows the
	 * outer item's name, and only with neither the top-level one. */
	v[K_ITEMS].n = 2;
	ck_assert_str_eq(render("{{#items}}{{#items}}{{name}}{{/items}}."
				"{{/items}}",
			     v),
	    "a&lt;a&lt;.a&lt;top.");
}
END_TEST

START_TEST(test_web_tmpl_parse_errors)
{
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
	    {"{{nope}}", "t.html:1: unknown key \"nope\""},
	    {"a\nb\n{{#nope}}{{/nope}}", "t.html:3: unknown key \"nope\""},
	    {"{{title }}\n{{ Title}}", "t.html:2: unknown key \"Title\""},
	    {"{{&nope}}", "t.html:1: unknown key \"nope\""},
	    {"{{^nope}}{{/nope}}", "t.html:1: unknown key \"nope\""},
	    {"{{}}", "t.html:1: empty tag"},
	    {"{{ }}", "t.html:1: empty tag"},
	    {"{{#}}", "t.html:1: empty tag"},
	    {"a\n{{#flag}}\nb", "t.html:2: section \"flag\" is not closed"},
	    {"{{#flag}}{{/name}}",
		"t.html:1: section \"flag\" (line 1) closed by \"name\""},
	    {"{{#flag}}{{#name}}\n{{/flag}}{{/name}}",
		"t.html:2: section \"name\" (line 1) closed by \"flag\""},
	    {"x\n{{/flag}}", "t.html:2: \"{{/flag}}\" closes no section"},
	    {"{{#flag}}{{/flag}}{{/flag}}", "closes no section"},
	    {"x\n\n{{title", "t.html:3: unterminated tag"},
	    {"x {{title}", "t.html:1: unterminated tag"},
	    {"{{! never closed", "t.html:1: unterminated tag"},
	    {"{{!\n\n}}\n{{nope}}", "t.html:4: unknown key \"nope\""},
	    {"{{{title}}}", "t.html:1: triple braces are not supported"},
	    {"{{>foot.html}}", "t.html:1: partial \"foot.html\" without a "
			       "directory"},
	    {"{{>../etc/passwd}}", "t.html:1: bad partial name"},
	    {"{{>/etc/passwd}}", "bad partial name"},
	    {"{{>.hidden}}", "bad partial name"},
	    {"{{ti\ntle}}", "t.html:1: unknown key \"ti?tle\""},
	    {"{{a\x01\xff}}", "t.html:1: unknown key \"a??\""},
	};
	char err[256];
	struct tmpl *t;
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		err[0] = '\0';
		t = tmpl_parse("t.html", bad[i].text, strlen(bad[i].text),
		    tkeys, err, sizeof(err));
		ck_assert_msg(t == NULL, "case %zu parsed", i);
		ck_assert_msg(strstr(err, bad[i].err) == err ||
				  (strncmp(bad[i].err, "t.html", 6) != 0 &&
				      strstr(err, bad[i].err) != NULL),
		    "case %zu: \"%s\" is not \"%s\"", i, err, bad[i].err);
	}
	/* A NUL inside a tag does not end the name early. */
	t = tmpl_parse("t.html", "{{title\0x}}", 11, tkeys, err, sizeof(err));
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err, "t.html:1: unknown key \"title?x\"");
	/* err is optional; a short one is cut, not overrun. */
	ck_assert_ptr_null(tmpl_parse("t", "{{x}}", 5, tkeys, NULL, 0));
	ck_assert_ptr_null(tmpl_parse("t", "{{x}}", 5, tkeys, err, 4));
	ck_assert_str_eq(err, "t:1");
	/* No keys at all. */
	ck_assert_ptr_null(tmpl_parse("t", "{{x}}", 5, NULL, err, sizeof(err)));
	tmpl_free(NULL);
}
END_TEST

START_TEST(test_web_tmpl_nesting_limit)
{
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	struct buf text;
	char err[256];
	struct tmpl *t;
	int i;

	buf_init(&text, 0);
	for (i = 0; i < 16; i++)
		buf_puts(&text, "{{#flag}}");
	buf_puts(&text, "deep");
	for (i = 0; i < 16; i++)
		buf_puts(&text, "{{/flag}}");
	v[K_FLAG] = S("y");
	ck_assert_str_eq(render(buf_cstr(&text), v), "deep");
	buf_reset(&text);
	for (i = 0; i < 17; i++)
		buf_puts(&text, "{{^flag}}\n");
	t = tmpl_parse("t.html", text.data, text.len, tkeys, err, sizeof(err));
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err, "t.html:17: sections nested deeper than 16");
	buf_free(&text);
}
END_TEST

START_TEST(test_web_tmpl_nul_and_buf_max)
{
	static const char text[] = "a\0b{{title}}";
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	char err[256];
	struct tmpl *t;
	struct buf b;

	v[K_TITLE] = S("0123456789");
	t = tmpl_parse(
	    "t.html", text, sizeof(text) - 1, tkeys, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	buf_init(&b, 0);
	ck_assert_int_eq(tmpl_render(t, v, &b), 0);
	ck_assert_uint_eq(b.len, 13);
	ck_assert_int_eq(memcmp(b.data, "a\0b0123456789", 13), 0);
	buf_free(&b);
	/* Past the buffer's max: -1, err set, and it stays set. */
	buf_init(&b, 8);
	ck_assert_int_eq(tmpl_render(t, v, &b), -1);
	ck_assert_int_eq(b.err, 1);
	ck_assert_int_eq(tmpl_render(t, v, &b), -1);
	buf_free(&b);
	tmpl_free(t);
}
END_TEST

/* Writes dir/name with text. */
static void
put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	ck_assert_int_eq(fclose(f), 0);
}

static void
rm_file(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

START_TEST(test_web_tmpl_partials_from_dir)
{
	static const char *const files[] = {"page.html", "foot.html",
	    "row.html", "broken.html", "uses-broken.html", "self.html",
	    "open.html", "uses-open.html", "d1.html", "d2.html", "d3.html",
	    "d4.html", "d5.html", "d6.html"};
	struct tval v[K__MAX] = {{TV_NONE, NULL, NULL, 0}};
	struct tval it[2][K__MAX] = {{{TV_NONE, NULL, NULL, 0}}};
	const struct tval *rows[2] = {it[0], it[1]};
	char dir[] = "/tmp/redeem-tmpl-XXXXXX", err[512];
	struct tmpl *t;
	struct buf b;
	size_t i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put_file(dir, "page.html",
	    "<h1>{{title}}</h1>\n{{#items}}{{>row.html}}{{/items}}"
	    "{{>foot.html}}");
	put_file(dir, "row.html", "<li>{{name}}</li>");
	put_file(dir, "foot.html", "<p>{{&html}}</p>");
	put_file(dir, "broken.html", "ok\n{{nope}}");
	put_file(dir, "uses-broken.html", "x\n\n{{>broken.html}}");
	put_file(dir, "self.html", "{{>self.html}}");
	put_file(dir, "open.html", "{{#flag}}");
	put_file(dir, "uses-open.html", "{{#flag}}{{>open.html}}{{/flag}}");
	put_file(dir, "d1.html", "1{{>d2.html}}");
	put_file(dir, "d2.html", "2{{>d3.html}}");
	put_file(dir, "d3.html", "3{{>d4.html}}");
	put_file(dir, "d4.html", "4{{>d5.html}}");
	put_file(dir, "d5.html", "5{{>d6.html}}");
	put_file(dir, "d6.html", "6");

	t = tmpl_load(dir, "page.html", tkeys, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	v[K_TITLE] = S("Hi & bye");
	v[K_HTML].type = TV_RAW;
	v[K_HTML].s = "<em>x</em>";
	v[K_ITEMS].type = TV_LIST;
	v[K_ITEMS].items = rows;
	v[K_ITEMS].n = 2;
	it[0][K_NAME] = S("one");
	it[1][K_NAME] = S("<two>");
	buf_init(&b, 0);
	ck_assert_int_eq(tmpl_render(t, v, &b), 0);
	ck_assert_str_eq(buf_cstr(&b),
	    "<h1>Hi &amp; bye</h1>\n<li>one</li><li>&lt;two&gt;</li>"
	    "<p><em>x</em></p>");
	buf_free(&b);
	tmpl_free(t);

	/* Four levels of partials are fine, five not. */
	t = tmpl_load(dir, "d2.html", tkeys, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	buf_init(&b, 0);
	ck_assert_int_eq(tmpl_render(t, v, &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "23456");
	buf_free(&b);
	tmpl_free(t);
	ck_assert_ptr_null(tmpl_load(dir, "d1.html", tkeys, err, sizeof(err)));
	ck_assert_str_eq(
	    err, "d5.html:1: partial \"d6.html\" nested deeper than 4");

	ck_assert_ptr_null(
	    tmpl_load(dir, "uses-broken.html", tkeys, err, sizeof(err)));
	ck_assert_str_eq(err, "broken.html:2: unknown key \"nope\"");
	ck_assert_ptr_null(
	    tmpl_load(dir, "self.html", tkeys, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "nested deeper than 4"));
	/* A partial's section must close in the partial. */
	ck_assert_ptr_null(
	    tmpl_load(dir, "uses-open.html", tkeys, err, sizeof(err)));
	ck_assert_str_eq(err, "open.html:1: section \"flag\" is not closed");
	put_file(dir, "missing.html", "a\n{{>gone.html}}");
	ck_assert_ptr_null(
	    tmpl_load(dir, "missing.html", tkeys, err, sizeof(err)));
	ck_assert_str_eq(err,
	    "missing.html:2: partial \"gone.html\": No such file or "
	    "directory");
	rm_file(dir, "missing.html");
	ck_assert_ptr_null(
	    tmpl_load(dir, "nothere.html", tkeys, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "nothere.html: No such file"));

	for (i = 0; i < NELEM(files); i++)
		rm_file(dir, files[i]);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* The abuse gate's client key: the peer, or X-Forwarded-For's nearest
 * untrusted hop only when the peer is a trusted proxy. */
START_TEST(test_web_client_addr_trusted_proxies)
{
	static const struct {
		const char *peer, *xff, *want;
	} cases[] = {
	    {"203.0.113.9", "198.51.100.1", "203.0.113.9"}, /* untrusted */
	    {"10.0.0.1", "198.51.100.1", "198.51.100.1"},
	    {"10.0.0.1", NULL, "10.0.0.1"},
	    {"10.0.0.1", "198.51.100.1, 10.0.0.7", "198.51.100.1"},
	    {"10.0.0.1", "6.6.6.6, 198.51.100.1", "198.51.100.1"},
	    {"10.0.0.1", "garbage", "10.0.0.1"},
	    {"10.0.0.1", "", "10.0.0.1"},
	    {"10.0.0.1", " , ,", "10.0.0.1"},
	    {"10.0.0.1", "10.0.0.2, 10.255.0.1", "10.0.0.1"}, /* all ours */
	    {"::1", "2001:db8::5", "2001:db8::5"},
	    {"192.168.1.1", "198.51.100.1", "192.168.1.1"}, /* not in /24 */
	    {"192.168.0.77", "198.51.100.1", "198.51.100.1"},
	};
	struct web w;
	struct arena *a = arena_new(4096);
	size_t i;

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(
	    web_proxies_parse(&w, "10.0.0.0/8, 192.168.0.0/24,::1"), 0);
	ck_assert_uint_eq(w.nproxy, 3);
	for (i = 0; i < NELEM(cases); i++) {
		const char *got =
		    web_client_addr(&w, a, cases[i].peer, cases[i].xff);

		ck_assert_msg(strcmp(got, cases[i].want) == 0,
		    "case %zu: %s, want %s", i, got, cases[i].want);
		arena_reset(a);
	}
	/* Without a list, the header is never believed. */
	memset(&w, 0, sizeof(w));
	ck_assert_str_eq(
	    web_client_addr(&w, a, "10.0.0.1", "198.51.100.1"), "10.0.0.1");
	arena_free(a);
}
END_TEST

START_TEST(test_web_proxies_parse_refuses_garbage)
{
	static const char *const bad[] = {"10.0.0.1/33", "nope", "10.0.0/8",
	    "::1/129", "1.2.3.4/-1", "1.2.3.4/x"};
	struct web w;
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		memset(&w, 0, sizeof(w));
		ck_assert_msg(
		    web_proxies_parse(&w, bad[i]) == -1, "%s", bad[i]);
	}
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(web_proxies_parse(&w, ""), 0);
	ck_assert_uint_eq(w.nproxy, 0);
}
END_TEST

/* ---- the dashboard's formatting and chart ---- */

START_TEST(test_web_fmt_count_separators)
{
	static const struct {
		int64_t n;
		const char *want;
	} cases[] = {
	    {0, "0"},
	    {7, "7"},
	    {999, "999"},
	    {1000, "1,000"},
	    {1004, "1,004"},
	    {999999, "999,999"},
	    {1000000, "1,000,000"},
	    {-1, "-1"},
	    {-1234, "-1,234"},
	    {-999, "-999"},
	    {INT64_MAX, "9,223,372,036,854,775,807"},
	    {INT64_MIN, "-9,223,372,036,854,775,808"},
	};
	char out[FMT_COUNT_MAX];
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		fmt_count(cases[i].n, out);
		ck_assert_str_eq(out, cases[i].want);
	}
}
END_TEST

START_TEST(test_web_fmt_times_utc)
{
	struct arena *a = arena_new(4096);
	char out[32], day[16];

	fmt_utc(1795341294, out); /* 2026-11-22T09:54:54Z */
	ck_assert_str_eq(out, "2026-11-22 09:54 UTC");
	fmt_day(1795341294, day);
	ck_assert_str_eq(day, "Nov 22");
	fmt_day(0, day);
	ck_assert_str_eq(day, "Jan 1");
	ck_assert_str_eq(fmt_time_html(a, 1795341294),
	    "<time datetime=\"2026-11-22T09:54:54Z\" "
	    "title=\"2026-11-22 09:54 UTC\">2026-11-22 09:54 UTC</time>");
	/* In the admin's zone, UTC on hover; summer time too. */
	fmt_zone("Europe/Berlin");
	ck_assert_str_eq(fmt_time_html(a, 1795341294),
	    "<time datetime=\"2026-11-22T09:54:54Z\" "
	    "title=\"2026-11-22 09:54 UTC\">2026-11-22 10:54 CET</time>");
	ck_assert_str_eq(fmt_time_html(a, 1782000000), /* 2026-06-21 */
	    "<time datetime=\"2026-06-21T00:00:00Z\" "
	    "title=\"2026-06-21 00:00 UTC\">2026-06-21 02:00 CEST</time>");
	fmt_zone("America/New_York");
	ck_assert_str_eq(fmt_time_html(a, 1795341294),
	    "<time datetime=\"2026-11-22T09:54:54Z\" "
	    "title=\"2026-11-22 09:54 UTC\">2026-11-22 04:54 EST</time>");
	fmt_zone("UTC");
	ck_assert_str_eq(fmt_time_html(a, 1795341294),
	    "<time datetime=\"2026-11-22T09:54:54Z\" "
	    "title=\"2026-11-22 09:54 UTC\">2026-11-22 09:54 UTC</time>");
	ck_assert_str_eq(fmt_time_html(a, 0), "");
	ck_assert_str_eq(fmt_count_a(a, 12345), "12,345");
	arena_free(a);
}
END_TEST

/* How many times needle occurs in hay. */
static int
count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

START_TEST(test_web_chart_bars_svg)
{
	const int64_t v[] = {0, 1, 100, -5, 50};
	const char *const tip[] = {"a<b>", "one & two", "max", NULL, "half"};
	const char *const tick[] = {"Oct \"1\"", NULL, NULL, NULL, "today"};
	const int64_t huge[] = {INT64_MAX, 1, INT64_MAX / 2};
	int64_t many[CHART_BARS_MAX + 1] = {0};
	struct buf b;

	buf_init(&b, 0);
	ck_assert_int_eq(chart_bars(&b, v, 0, NULL, NULL, "t"), -1);
	ck_assert_int_eq(
	    chart_bars(&b, many, CHART_BARS_MAX + 1, NULL, NULL, "t"), -1);
	ck_assert_uint_eq(b.len, 0);

	ck_assert_int_eq(chart_bars(&b, v, NELEM(v), tip, tick, "x\"y"), 0);
	buf_cstr(&b);
	ck_assert_int_eq(strncmp(b.data, "<svg ", 5), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "aria-labelledby=\"x&quot;y\""));
	ck_assert_int_eq(count_of(b.data, "<rect "), 5);
	/* Days without redemptions (0, and a negative count) are marked. */
	ck_assert_int_eq(count_of(b.data, "class=\"bar-zero\""), 2);
	ck_assert_int_eq(count_of(b.data, "class=\"bar\""), 3);
	/* The tallest reaches the top; 1 of 100 is still drawn; 50 half. */
	ck_assert_ptr_nonnull(strstr(b.data, "height=\"100\"><title>max"));
	ck_assert_ptr_nonnull(strstr(b.data, "height=\"1\"><title>one"));
	ck_assert_ptr_nonnull(strstr(b.data, "height=\"50\"><title>half"));
	/* Text is escaped; the scale says the maximum. */
	ck_assert_ptr_nonnull(strstr(b.data, "<title>a&lt;b&gt;</title>"));
	ck_assert_ptr_nonnull(strstr(b.data, "one &amp; two"));
	ck_assert_ptr_nonnull(strstr(b.data, "Oct &quot;1&quot;"));
	ck_assert_ptr_nonnull(strstr(b.data, ">100</text>"));
	ck_assert_int_eq(count_of(b.data, "class=\"tick\""), 3);
	ck_assert_ptr_null(strstr(b.data, "<b>"));
	ck_assert_int_eq(strcmp(b.data + b.len - 6, "</svg>"), 0);

	/* Counts near the top of int64_t: no overflow (UBSan), sane bars. */
	buf_reset(&b);
	ck_assert_int_eq(chart_bars(&b, huge, NELEM(huge), NULL, NULL, "t"), 0);
	buf_cstr(&b);
	ck_assert_int_eq(count_of(b.data, "height=\"100\""), 1);
	ck_assert_int_eq(count_of(b.data, "height=\"1\""), 1);
	ck_assert_int_eq(count_of(b.data, "height=\"50\""), 1);
	ck_assert_ptr_nonnull(strstr(b.data, "9,223,372,036,854,775,807"));
	ck_assert_int_eq(b.err, 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_web_admin_area_paths)
{
	ck_assert_int_eq(admin_area("/admin"), 1);
	ck_assert_int_eq(admin_area("/admin/"), 1);
	ck_assert_int_eq(admin_area("/admin/login"), 1);
	ck_assert_int_eq(admin_area("/admin/webhooks/1/disable"), 1);
	ck_assert_int_eq(admin_area("/administrator"), 0);
	ck_assert_int_eq(admin_area("/adminx/"), 0);
	ck_assert_int_eq(admin_area("/adm"), 0);
	ck_assert_int_eq(admin_area("/"), 0);
	ck_assert_int_eq(admin_area("/redeem"), 0);
	ck_assert_int_eq(admin_area("/api/v1/admin"), 0);
	ck_assert_int_eq(admin_area(""), 0);
	ck_assert_int_eq(admin_area(NULL), 0);
}
END_TEST

Suite *
suite_web(void)
{
	Suite *s = suite_create("web");
	TCase *tc = tcase_create("arena");

	tcase_add_test(tc, test_web_arena_alloc_aligned_zeroed);
	tcase_add_test(tc, test_web_arena_cap_is_sticky);
	tcase_add_test(tc, test_web_arena_many_chunks_reset);
	tcase_add_test(tc, test_web_arena_poisons_unused_bytes);
	tcase_add_test(tc, test_web_arena_strings);
	suite_add_tcase(s, tc);
	tc = tcase_create("form");
	tcase_add_test(tc, test_web_form_decodes);
	tcase_add_test(tc, test_web_form_refuses_hostile);
	tcase_add_test(tc, test_web_form_honours_length);
	tcase_add_test(tc, test_web_form_field_limit);
	tcase_add_test(tc, test_web_form_overlong_and_arena_full);
	tcase_add_test(tc, test_web_kv_get_count);
	tcase_add_test(tc, test_web_cookie_parses);
	tcase_add_test(tc, test_web_cookie_limits);
	suite_add_tcase(s, tc);
	tc = tcase_create("jsonin");
	tcase_add_test(tc, test_web_json_parses_objects);
	tcase_add_test(tc, test_web_json_refuses_hostile);
	tcase_add_test(tc, test_web_json_depth_limit);
	tcase_add_test(tc, test_web_json_str_reader);
	tcase_add_test(tc, test_web_json_why_cut_on_character);
	tcase_add_test(tc, test_web_json_int_reader);
	tcase_add_test(tc, test_web_json_time_reader);
	suite_add_tcase(s, tc);
	tc = tcase_create("tmpl");
	tcase_add_test(tc, test_web_tmpl_escapes);
	tcase_add_test(tc, test_web_tmpl_raw_needs_raw_value);
	tcase_add_test(tc, test_web_tmpl_plain_values);
	tcase_add_test(tc, test_web_tmpl_sections);
	tcase_add_test(tc, test_web_tmpl_list_shadowing);
	tcase_add_test(tc, test_web_tmpl_parse_errors);
	tcase_add_test(tc, test_web_tmpl_nesting_limit);
	tcase_add_test(tc, test_web_tmpl_nul_and_buf_max);
	tcase_add_test(tc, test_web_tmpl_partials_from_dir);
	suite_add_tcase(s, tc);
	tc = tcase_create("client");
	tcase_add_test(tc, test_web_client_addr_trusted_proxies);
	tcase_add_test(tc, test_web_proxies_parse_refuses_garbage);
	suite_add_tcase(s, tc);
	tc = tcase_create("dashboard");
	tcase_add_test(tc, test_web_fmt_count_separators);
	tcase_add_test(tc, test_web_fmt_times_utc);
	tcase_add_test(tc, test_web_chart_bars_svg);
	tcase_add_test(tc, test_web_admin_area_paths);
	suite_add_tcase(s, tc);
	return s;
}
