/* app/lib: bounded strings, integers, UTF-8, times, the growable buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/lib/buf.h"
#include "../../app/lib/str.h"
#include "fixture.h"

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

START_TEST(test_lib_str_copy_fits)
{
	char dst[8];

	memset(dst, 'x', sizeof(dst));
	ck_assert_int_eq(str_copy(dst, "", sizeof(dst)), 0);
	ck_assert_str_eq(dst, "");
	ck_assert_int_eq(str_copy(dst, "abc", sizeof(dst)), 0);
	ck_assert_str_eq(dst, "abc");
	/* 7 characters and the NUL fill it exactly. */
	ck_assert_int_eq(str_copy(dst, "1234567", sizeof(dst)), 0);
	ck_assert_str_eq(dst, "1234567");
}
END_TEST

START_TEST(test_lib_str_copy_truncates)
{
	char dst[8], one[1], guard[16];

	ck_assert_int_eq(str_copy(dst, "12345678", sizeof(dst)), -1);
	ck_assert_str_eq(dst, "1234567");
	ck_assert_int_eq(str_copy(dst, "a much longer text", sizeof(dst)), -1);
	ck_assert_str_eq(dst, "a much ");
	ck_assert_int_eq(str_copy(one, "x", sizeof(one)), -1);
	ck_assert_str_eq(one, "");
	ck_assert_int_eq(str_copy(one, "", sizeof(one)), 0);
	ck_assert_str_eq(one, "");
	/* Size 0: nothing is written at all. */
	memset(guard, 'g', sizeof(guard));
	ck_assert_int_eq(str_copy(guard, "abc", 0), -1);
	ck_assert_int_eq(guard[0], 'g');
}
END_TEST

START_TEST(test_lib_str_to_i64_ranges)
{
	static const struct {
		const char *in;
		int64_t min, max, want;
	} ok[] = {
	    {"0", 0, 10, 0},
	    {"10", 0, 10, 10},
	    {"-5", -5, 5, -5},
	    {"-0", 0, 0, 0},
	    {"007", 0, 10, 7},
	    {"9223372036854775807", INT64_MIN, INT64_MAX, INT64_MAX},
	    {"-9223372036854775808", INT64_MIN, INT64_MAX, INT64_MIN},
	    {"65535", 1, 65535, 65535},
	};
	static const struct {
		const char *in;
		int64_t min, max;
	} bad[] = {
	    {"11", 0, 10},
	    {"-1", 0, 10},
	    {"0", 1, 65535},
	    {"65536", 1, 65535},
	    {"-6", -5, 5},
	};
	int64_t v;
	size_t i;

	for (i = 0; i < NELEM(ok); i++) {
		v = 42;
		ck_assert_msg(
		    str_to_i64(ok[i].in, ok[i].min, ok[i].max, &v) == 0,
		    "\"%s\" refused", ok[i].in);
		ck_assert_int_eq(v, ok[i].want);
	}
	for (i = 0; i < NELEM(bad); i++) {
		v = 42;
		ck_assert_msg(
		    str_to_i64(bad[i].in, bad[i].min, bad[i].max, &v) == -1,
		    "\"%s\" accepted in [%lld, %lld]", bad[i].in,
		    (long long)bad[i].min, (long long)bad[i].max);
		ck_assert_int_eq(v, 42); /* untouched on failure */
	}
}
END_TEST

START_TEST(test_lib_str_to_i64_garbage)
{
	static const char *const bad[] = {
	    "",
	    "+1",
	    " 1",
	    "1 ",
	    "1\n",
	    "-",
	    "--1",
	    "-+1",
	    "- 1",
	    "abc",
	    "1a",
	    "a1",
	    "0x10",
	    "1e3",
	    "1.0",
	    "1,000",
	    "١", /* ARABIC-INDIC DIGIT ONE */
	    "9223372036854775808",
	    "-9223372036854775809",
	    "99999999999999999999999",
	};
	int64_t v = 42;
	size_t i;

	ck_assert_int_eq(str_to_i64(NULL, INT64_MIN, INT64_MAX, &v), -1);
	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(
		    str_to_i64(bad[i], INT64_MIN, INT64_MAX, &v) == -1,
		    "bad[%zu] \"%s\" accepted as %lld", i, bad[i],
		    (long long)v);
	ck_assert_int_eq(v, 42);
}
END_TEST

/* strtoll skips any leading white space; " 1" is refused, so must the
 * other spaces be: a whole decimal integer starts with '-' or a digit. */
START_TEST(test_lib_str_to_i64_leading_space)
{
	static const char *const bad[] = {
	    "\t1", "\n1", "\r1", "\v1", "\f1", " -1", "\t-1"};
	int64_t v = 42;
	size_t i;

	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(
		    str_to_i64(bad[i], INT64_MIN, INT64_MAX, &v) == -1,
		    "bad[%zu] (white space before a number) accepted as %lld",
		    i, (long long)v);
	ck_assert_int_eq(v, 42);
}
END_TEST

START_TEST(test_lib_str_utf8_ok_valid)
{
	static const struct {
		const char *s;
		size_t len;
	} ok[] = {
#define T(lit) {lit, sizeof(lit) - 1}
	    T(""), T("plain ASCII, with punctuation ~!"), T("tab\tinside"),
	    T("\xc2\xa0"),                  /* U+00A0, right after C1 */
	    T("\xc3\xa9"),                  /* U+00E9 */
	    T("\xdf\xbf"),                  /* U+07FF, last of 2 bytes */
	    T("\xe0\xa0\x80"),              /* U+0800, first of 3 bytes */
	    T("\xe2\x82\xac"),              /* U+20AC euro */
	    T("\xed\x9f\xbf"),              /* U+D7FF, before the surrogates */
	    T("\xee\x80\x80"),              /* U+E000, after them */
	    T("\xef\xbf\xbd"),              /* U+FFFD */
	    T("\xef\xbf\xbf"),              /* U+FFFF */
	    T("\xf0\x90\x80\x80"),          /* U+10000, first of 4 bytes */
	    T("\xf0\x9f\x98\x80"),          /* U+1F600 */
	    T("\xf4\x8f\xbf\xbf"),          /* U+10FFFF, the last */
	    T("Zo\xc3\xab \xe2\x82\xac 5"), /* mixed */
#undef T
	};
	size_t i;
	char *p;

	for (i = 0; i < NELEM(ok); i++) {
		p = exact_copy(ok[i].s, ok[i].len);
		ck_assert_msg(
		    str_utf8_ok(p, ok[i].len) == 1, "ok[%zu] refused", i);
		free(p);
	}
}
END_TEST

START_TEST(test_lib_str_utf8_ok_invalid)
{
	static const struct {
		const char *s;
		size_t len;
		const char *why;
	} bad[] = {
#define T(lit, why) {lit, sizeof(lit) - 1, why}
	    T("a\0b", "embedded NUL"),
	    T("\0", "NUL alone"),
	    T("\x01", "C0 control"),
	    T("line\nbreak", "newline"),
	    T("cr\r", "carriage return"),
	    T("\x1b[31m", "escape"),
	    T("\x1f", "unit separator"),
	    T("\x7f", "DEL"),
	    T("\xc2\x80", "C1 U+0080"),
	    T("\xc2\x85", "C1 NEL"),
	    T("\xc2\x9f", "C1 U+009F"),
	    T("\x80", "lone continuation"),
	    T("\xbf", "lone continuation"),
	    T("a\x80z", "continuation in ASCII"),
	    T("\xc0\x80", "overlong NUL"),
	    T("\xc0\xaf", "overlong slash"),
	    T("\xc1\xbf", "overlong 2 bytes"),
	    T("\xe0\x80\x80", "overlong 3 bytes NUL"),
	    T("\xe0\x9f\xbf", "overlong U+07FF"),
	    T("\xf0\x80\x80\x80", "overlong 4 bytes NUL"),
	    T("\xf0\x8f\xbf\xbf", "overlong U+FFFF"),
	    T("\xed\xa0\x80", "surrogate U+D800"),
	    T("\xed\xaf\xbf", "surrogate U+DBFF"),
	    T("\xed\xb0\x80", "surrogate U+DC00"),
	    T("\xed\xbf\xbf", "surrogate U+DFFF"),
	    T("\xed\xa0\xbd\xed\xb8\x80", "CESU-8 pair"),
	    T("\xf4\x90\x80\x80", "U+110000"),
	    T("\xf5\x80\x80\x80", "F5 lead"),
	    T("\xf7\xbf\xbf\xbf", "F7 lead"),
	    T("\xf8\x88\x80\x80\x80", "5-byte form"),
	    T("\xfc\x84\x80\x80\x80\x80", "6-byte form"),
	    T("\xfe", "FE"),
	    T("\xff", "FF"),
	    T("\xc3", "truncated 2 bytes"),
	    T("abc\xc3", "truncated at the end"),
	    T("\xe2\x82", "truncated 3 bytes"),
	    T("\xe2", "truncated 3 bytes, lead only"),
	    T("\xf0\x9f\x98", "truncated 4 bytes"),
	    T("\xe2\x82"
	      "A",
		"ASCII inside a sequence"),
	    T("\xc3\xc3\xa9", "lead inside a sequence"),
	    T("\xf0\x9f\x98\x80\x80", "extra continuation"),
#undef T
	};
	size_t i;
	char *p;

	for (i = 0; i < NELEM(bad); i++) {
		p = exact_copy(bad[i].s, bad[i].len);
		ck_assert_msg(str_utf8_ok(p, bad[i].len) == 0,
		    "bad[%zu] (%s) accepted", i, bad[i].why);
		free(p);
	}
}
END_TEST

START_TEST(test_lib_str_utf8_ok_honours_length)
{
	/* The length decides, not a terminator: a valid sequence cut by
	 * len is truncated, and bad bytes past len are not looked at. */
	static const char euro[] = "\xe2\x82\xac";
	static const char tail[] = "ok\xff\x01";
	char *p;

	p = exact_copy(euro, 2);
	ck_assert_int_eq(str_utf8_ok(p, 2), 0);
	free(p);
	p = exact_copy(euro, 3);
	ck_assert_int_eq(str_utf8_ok(p, 3), 1);
	free(p);
	ck_assert_int_eq(str_utf8_ok(tail, 2), 1);
	ck_assert_int_eq(str_utf8_ok(tail, 3), 0);
	ck_assert_int_eq(str_utf8_ok(tail, 0), 1);
}
END_TEST

START_TEST(test_lib_str_rfc3339)
{
	static const struct {
		int64_t t;
		const char *want;
	} cases[] = {
	    {0, "1970-01-01T00:00:00Z"},
	    {1, "1970-01-01T00:00:01Z"},
	    {951782400, "2000-02-29T00:00:00Z"},
	    {1795341600, "2026-11-22T10:00:00Z"},
	    {INT64_C(253402300799), "9999-12-31T23:59:59Z"},
	};
	char out[32];
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		memset(out, 'x', sizeof(out));
		str_rfc3339(cases[i].t, out);
		ck_assert_str_eq(out, cases[i].want);
	}
}
END_TEST

START_TEST(test_lib_str_parse_time_ok)
{
	static const struct {
		const char *in;
		int64_t want;
	} ok[] = {
	    {"2026-11-22T10:00:00Z", 1795341600},
	    {"2026-11-22T10:00:00z", 1795341600},
	    {"2026-11-22T12:00:00+02:00", 1795341600},
	    {"2026-11-22T04:30:00-05:30", 1795341600},
	    {"2026-11-22T10:00:00+00:00", 1795341600},
	    {"2026-11-22T10:00:00-00:00", 1795341600},
	    {"2026-11-22T10:00:00.123Z", 1795341600},
	    {"2026-11-22T10:00:00.999999999Z", 1795341600},
	    {"2026-11-22T11:00:00.5+01:00", 1795341600},
	    {"1970-01-01T00:00:00Z", 0},
	    {"2000-02-29T00:00:00Z", 951782400},
	    {"9999-12-31T23:59:59Z", INT64_C(253402300799)},
	    {"0", 0},
	    {"1795341600", 1795341600},
	    {"253402300799", INT64_C(253402300799)},
	};
	int64_t v;
	size_t i;
	char back[32];

	for (i = 0; i < NELEM(ok); i++) {
		v = -42;
		ck_assert_msg(str_parse_time(ok[i].in, &v) == 0,
		    "\"%s\" refused", ok[i].in);
		ck_assert_msg(v == ok[i].want, "\"%s\": %lld, want %lld",
		    ok[i].in, (long long)v, (long long)ok[i].want);
	}
	/* Formatting and parsing agree. */
	str_rfc3339(1795341600, back);
	ck_assert_int_eq(str_parse_time(back, &v), 0);
	ck_assert_int_eq(v, 1795341600);
}
END_TEST

START_TEST(test_lib_str_parse_time_garbage)
{
	static const char *const bad[] = {
	    "",
	    "now",
	    "-1",
	    "+1795341600",
	    " 1795341600",
	    "1795341600 ",
	    "1e9",
	    "253402300800",
	    "2026-11-22",
	    "2026-11-22T10:00",
	    "2026-11-22T10:00:00",
	    "2026-11-22 10:00:00Z",
	    "2026/11/22T10:00:00Z",
	    "2026-11-22T10:00:00+0200",
	    "2026-11-22T10:00:00+02",
	    "2026-11-22T10:00:00+2:00",
	    "2026-11-22T10:00:00+02:0x",
	    "2026-11-22T10:00:00+02:00x",
	    "2026-11-22T10:00:00Zjunk",
	    "2026-11-22T10:00:00ZZ",
	    "2026-11-22T10:00:00 Z",
	    "2026-11-22T10:00:00.Zjunk",
	    "2026-11-22T10:00:00.12a",
	    "2026-13-01T00:00:00Z",
	    "2026-00-10T00:00:00Z",
	    "2026-11-32T00:00:00Z",
	    "2026-11-22T25:00:00Z",
	    "2026-11-22T10:60:00Z",
	    "1969-12-31T23:59:59Z",
	    "1970-01-01T00:30:00+01:00",
	    "2026-11-22T10:00:00Z\n",
	};
	int64_t v = 42;
	size_t i;

	ck_assert_int_eq(str_parse_time(NULL, &v), -1);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_msg(str_parse_time(bad[i], &v) == -1,
		    "bad[%zu] \"%s\" accepted as %lld", i, bad[i],
		    (long long)v);
	}
}
END_TEST

/* RFC 3339 is strict: fixed-width fields, a real calendar date, an
 * offset of at most 23:59, at least one digit after the point. A lenient
 * parse turns a typo in an expiry into another date without a word. */
START_TEST(test_lib_str_parse_time_strict)
{
	static const char *const bad[] = {
	    "2026-02-30T00:00:00Z",
	    "2026-02-29T00:00:00Z",
	    "2026-04-31T00:00:00Z",
	    " 2026-11-22T10:00:00Z",
	    "2026-11-22T 10:00:00Z",
	    "2026-1-2T3:4:5Z",
	    "2026-11-22T10:00:00.Z",
	    "2026-11-22T10:00:00+24:00",
	    "2026-11-22T10:00:00+02:60",
	};
	int64_t v = 42;
	size_t i;

	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(str_parse_time(bad[i], &v) == -1,
		    "bad[%zu] \"%s\" accepted as %lld", i, bad[i],
		    (long long)v);
}
END_TEST

START_TEST(test_lib_str_hex)
{
	static const unsigned char in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
	char out[2 * sizeof(in) + 1];

	str_hex(in, sizeof(in), out);
	ck_assert_str_eq(out, "00017f80abff");
	str_hex(in, 0, out);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_lib_buf_grows)
{
	struct buf b;
	size_t i;

	buf_init(&b, 0);
	ck_assert_str_eq(buf_cstr(&b), "");
	ck_assert_int_eq(b.err, 0);
	for (i = 0; i < 10000; i++)
		buf_putc(&b, 'a' + (int)(i % 26));
	ck_assert_int_eq(b.err, 0);
	ck_assert_uint_eq(b.len, 10000);
	ck_assert_uint_ge(b.cap, b.len + 1);
	ck_assert_uint_eq(strlen(b.data), 10000);
	for (i = 0; i < 10000; i++)
		ck_assert_int_eq(b.data[i], 'a' + (int)(i % 26));
	buf_add(&b, "", 0);
	buf_puts(&b, "");
	ck_assert_uint_eq(b.len, 10000);
	buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(buf_cstr(&b), "");
	buf_puts(&b, "again");
	ck_assert_str_eq(buf_cstr(&b), "again");
	buf_free(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
}
END_TEST

START_TEST(test_lib_buf_binary)
{
	struct buf b;

	buf_init(&b, 0);
	buf_add(&b, "a\0b", 3);
	ck_assert_uint_eq(b.len, 3);
	ck_assert_int_eq(memcmp(b.data, "a\0b", 4), 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_lib_buf_max_sets_err_sticky)
{
	struct buf b;

	buf_init(&b, 10);
	buf_puts(&b, "12345");
	buf_puts(&b, "67890"); /* exactly at the cap: still fine */
	ck_assert_int_eq(b.err, 0);
	ck_assert_uint_eq(b.len, 10);
	ck_assert_str_eq(buf_cstr(&b), "1234567890");
	buf_putc(&b, 'x');
	ck_assert_int_eq(b.err, 1);
	ck_assert_uint_eq(b.len, 10);
	/* Sticky: even what would fit is refused, and the text reads as
	 * empty so a half-rendered result is never used. */
	buf_reset(&b);
	buf_puts(&b, "abc");
	ck_assert_int_eq(b.err, 0);
	buf_puts(&b, "0123456789");
	ck_assert_int_eq(b.err, 1);
	ck_assert_uint_eq(b.len, 3);
	buf_puts(&b, "d");
	buf_add(&b, "e", 1);
	buf_printf(&b, "%d", 1);
	ck_assert_int_eq(b.err, 1);
	ck_assert_uint_eq(b.len, 3);
	ck_assert_str_eq(buf_cstr(&b), "");
	/* buf_reset clears the flag. */
	buf_reset(&b);
	ck_assert_int_eq(b.err, 0);
	buf_puts(&b, "ok");
	ck_assert_str_eq(buf_cstr(&b), "ok");
	buf_free(&b);
}
END_TEST

START_TEST(test_lib_buf_printf)
{
	struct buf b;
	char want[400];
	int i;

	buf_init(&b, 0);
	buf_printf(&b, "%s=%d;", "a", 1);
	buf_printf(&b, "%lld|%05.1f|%%|%c", (long long)INT64_MIN, 2.5, 'z');
	ck_assert_str_eq(buf_cstr(&b), "a=1;-9223372036854775808|002.5|%|z");
	buf_reset(&b);
	/* Longer than the first allocation: the buffer grows for it. */
	for (i = 0; i < 300; i++)
		want[i] = (char)('A' + i % 26);
	want[300] = '\0';
	buf_printf(&b, "<%s>", want);
	ck_assert_int_eq(b.err, 0);
	ck_assert_uint_eq(b.len, 302);
	ck_assert_int_eq(b.data[0], '<');
	ck_assert_int_eq(b.data[301], '>');
	ck_assert_int_eq(memcmp(b.data + 1, want, 300), 0);
	buf_printf(&b, "%s", "");
	ck_assert_uint_eq(b.len, 302);
	buf_free(&b);

	/* printf past the cap sets err and writes nothing. */
	buf_init(&b, 8);
	buf_printf(&b, "%d", 1234);
	buf_printf(&b, "%d", 56789);
	ck_assert_int_eq(b.err, 1);
	ck_assert_uint_eq(b.len, 4);
	ck_assert_str_eq(buf_cstr(&b), "");
	buf_free(&b);
}
END_TEST

START_TEST(test_lib_str_index_token_env)
{
	static const char *const names[] = {"a", "bb", "c"};
	char big[130];

	ck_assert_int_eq(str_index("bb", names, 3), 1);
	ck_assert_int_eq(str_index("c", names, 2), -1);
	ck_assert_int_eq(str_index("", names, 3), -1);
	ck_assert_int_eq(str_index(NULL, names, 3), -1);
	ck_assert_int_eq(str_token_ok("Az09._~:@-", 10), 1);
	ck_assert_int_eq(str_token_ok("Az09._~:@-", 9), 0);
	ck_assert_int_eq(str_token_ok("", 9), 0);
	ck_assert_int_eq(str_token_ok(NULL, 9), 0);
	ck_assert_int_eq(str_token_ok("a/b", 9), 0);
	ck_assert_int_eq(str_token_ok("a b", 9), 0);
	ck_assert_int_eq(str_token_ok("\xc3\xa9", 9), 0);
	memset(big, 'x', 128);
	big[128] = '\0';
	ck_assert_int_eq(str_token_ok(big, 128), 1);
	ck_assert_int_eq(str_token_ok(big, 127), 0);
	unsetenv("REDEEM_TEST_ENV");
	ck_assert_int_eq(env_i64("REDEEM_TEST_ENV", 7, 1, 10), 7);
	setenv("REDEEM_TEST_ENV", "9", 1);
	ck_assert_int_eq(env_i64("REDEEM_TEST_ENV", 7, 1, 10), 9);
	setenv("REDEEM_TEST_ENV", "11", 1);
	ck_assert_int_eq(env_i64("REDEEM_TEST_ENV", 7, 1, 10), 7);
	setenv("REDEEM_TEST_ENV", "9x", 1);
	ck_assert_int_eq(env_i64("REDEEM_TEST_ENV", 7, 1, 10), 7);
	setenv("REDEEM_TEST_ENV", "", 1);
	ck_assert_int_eq(env_i64("REDEEM_TEST_ENV", 7, 1, 10), 7);
	unsetenv("REDEEM_TEST_ENV");
}
END_TEST

Suite *
suite_lib(void)
{
	Suite *s = suite_create("lib");
	TCase *tc = tcase_create("str");

	tcase_add_test(tc, test_lib_str_copy_fits);
	tcase_add_test(tc, test_lib_str_copy_truncates);
	tcase_add_test(tc, test_lib_str_to_i64_ranges);
	tcase_add_test(tc, test_lib_str_to_i64_garbage);
	tcase_add_test(tc, test_lib_str_to_i64_leading_space);
	tcase_add_test(tc, test_lib_str_utf8_ok_valid);
	tcase_add_test(tc, test_lib_str_utf8_ok_invalid);
	tcase_add_test(tc, test_lib_str_utf8_ok_honours_length);
	tcase_add_test(tc, test_lib_str_rfc3339);
	tcase_add_test(tc, test_lib_str_parse_time_ok);
	tcase_add_test(tc, test_lib_str_parse_time_garbage);
	tcase_add_test(tc, test_lib_str_parse_time_strict);
	tcase_add_test(tc, test_lib_str_hex);
	suite_add_tcase(s, tc);
	tc = tcase_create("buf");
	tcase_add_test(tc, test_lib_buf_grows);
	tcase_add_test(tc, test_lib_buf_binary);
	tcase_add_test(tc, test_lib_buf_max_sets_err_sticky);
	tcase_add_test(tc, test_lib_buf_printf);
	tcase_add_test(tc, test_lib_str_index_token_env);
	suite_add_tcase(s, tc);
	return s;
}
