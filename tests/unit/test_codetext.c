/* app/core/codetext.c and account.c: the text of codes and accounts, no
 * database. */
#include <stdlib.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/lib/str.h"
#include "../../app/core/account.h"
#include "../../app/core/codetext.h"
#include "fixture.h"

#define RANDOM_CODES 500 /* generated codes per mutation test */

/* Output buffers of exactly the documented size, on the heap, so that
 * ASan reports a write past them. */
static char *
out_buf(size_t n)
{
	char *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	memset(p, 'x', n);
	return p;
}

static char *
repeat(char c, size_t n)
{
	char *p = malloc(n + 1);

	ck_assert_ptr_nonnull(p);
	memset(p, c, n);
	p[n] = '\0';
	return p;
}

START_TEST(test_codetext_normalize_ok)
{
	static const struct {
		const char *in, *want;
	} ok[] = {
	    {"ABCD", "ABCD"},
	    {"abcd", "ABCD"},
	    {"aBcD-eFgH", "ABCDEFGH"},
	    {"  k7pq - xm3d  ", "K7PQXM3D"},
	    {"K7PQ\tXM3D", "K7PQXM3D"},
	    {"--K--7--", "K7"},
	    {"summer2026", "SUMMER2026"}, /* 0, 1, O, I, L are not refused */
	    {"x", "X"},
	};
	char *out = out_buf(CODE_MAX + 1);
	size_t i;

	for (i = 0; i < NELEM(ok); i++) {
		ck_assert_msg(codetext_normalize(ok[i].in, out) == CODETEXT_OK,
		    "\"%s\" refused", ok[i].in);
		ck_assert_str_eq(out, ok[i].want);
	}
	free(out);
}
END_TEST

START_TEST(test_codetext_normalize_hostile)
{
	static const struct {
		const char *in;
		enum codetext_status want;
	} bad[] = {
	    {"", CODETEXT_EMPTY},
	    {" ", CODETEXT_EMPTY},
	    {" - -\t", CODETEXT_EMPTY},
	    {"AB_CD", CODETEXT_BAD_CHAR},
	    {"AB.CD", CODETEXT_BAD_CHAR},
	    {"AB/CD", CODETEXT_BAD_CHAR},
	    {"AB+CD", CODETEXT_BAD_CHAR},
	    {"AB'CD", CODETEXT_BAD_CHAR},
	    {"%00", CODETEXT_BAD_CHAR},
	    {"\xc3\xa9t\xc3\xa9", CODETEXT_BAD_CHAR}, /* "été" */
	    {"AB\xc2\xa0"
	     "CD",
		CODETEXT_BAD_CHAR}, /* NBSP */
	    {"\xef\xbc\xa1"
	     "BCD",
		CODETEXT_BAD_CHAR}, /* fullwidth A */
	    {"AB\nCD", CODETEXT_BAD_UTF8},
	    {"AB\rCD", CODETEXT_BAD_UTF8},
	    {"\x01", CODETEXT_BAD_UTF8},
	    {"AB\x7f", CODETEXT_BAD_UTF8},
	    {"AB\xc2\x85", CODETEXT_BAD_UTF8}, /* C1 */
	    {"AB\xff", CODETEXT_BAD_UTF8},
	    {"AB\xc3", CODETEXT_BAD_UTF8},
	    {"\xc0\xc1", CODETEXT_BAD_UTF8},
	    {"\xed\xa0\x80", CODETEXT_BAD_UTF8},
	};
	char *out = out_buf(CODE_MAX + 1);
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		enum codetext_status got = codetext_normalize(bad[i].in, out);

		ck_assert_msg(got == bad[i].want, "bad[%zu]: %d, want %d", i,
		    (int)got, (int)bad[i].want);
	}
	free(out);
}
END_TEST

START_TEST(test_codetext_normalize_lengths)
{
	char *out = out_buf(CODE_MAX + 1);
	char *s, *dashes;
	size_t i;

	/* CODE_MAX normalized characters fit; one more does not. */
	s = repeat('a', CODE_MAX);
	ck_assert_int_eq(codetext_normalize(s, out), CODETEXT_OK);
	ck_assert_uint_eq(strlen(out), CODE_MAX);
	free(s);
	s = repeat('a', CODE_MAX + 1);
	ck_assert_int_eq(codetext_normalize(s, out), CODETEXT_TOO_LONG);
	free(s);
	/* CODE_INPUT_MAX raw characters are read; one more is refused
	 * before anything else, even when it would normalize to little. */
	dashes = repeat('-', CODE_INPUT_MAX);
	ck_assert_int_eq(codetext_normalize(dashes, out), CODETEXT_EMPTY);
	dashes[0] = 'A';
	ck_assert_int_eq(codetext_normalize(dashes, out), CODETEXT_OK);
	ck_assert_str_eq(out, "A");
	free(dashes);
	dashes = repeat('-', CODE_INPUT_MAX + 1);
	dashes[0] = 'A';
	ck_assert_int_eq(codetext_normalize(dashes, out), CODETEXT_TOO_LONG);
	free(dashes);
	/* 64 characters spread over 128 with dashes: fine. */
	s = repeat('-', CODE_INPUT_MAX);
	for (i = 0; i < CODE_INPUT_MAX; i += 2)
		s[i] = 'k';
	ck_assert_int_eq(codetext_normalize(s, out), CODETEXT_OK);
	ck_assert_uint_eq(strlen(out), CODE_INPUT_MAX / 2);
	free(s);
	free(out);
}
END_TEST

START_TEST(test_codetext_alphabet)
{
	const char *a = CODE_ALPHABET;
	size_t i;

	ck_assert_uint_eq(strlen(a), CODE_ALPHABET_LEN);
	/* The ambiguous characters are left out. */
	ck_assert_ptr_null(strchr(a, '0'));
	ck_assert_ptr_null(strchr(a, '1'));
	ck_assert_ptr_null(strchr(a, 'O'));
	ck_assert_ptr_null(strchr(a, 'I'));
	ck_assert_ptr_null(strchr(a, 'L'));
	for (i = 1; i < CODE_ALPHABET_LEN; i++)
		ck_assert_ptr_null(memchr(a, a[i], i)); /* no repeats */
	ck_assert_int_eq(codetext_in_alphabet(a), 1);
	ck_assert_int_eq(codetext_in_alphabet(""), 1);
	ck_assert_int_eq(codetext_in_alphabet("SUMMER2026"), 0);
	ck_assert_int_eq(codetext_in_alphabet("ABCl"), 0);
	ck_assert_int_eq(codetext_in_alphabet("abcd"), 0);
	ck_assert_int_eq(codetext_in_alphabet("AB-CD"), 0);
}
END_TEST

START_TEST(test_codetext_check_char)
{
	char s[CODE_MAX + 1];
	size_t n;

	ck_assert_int_eq(codetext_check_ok(""), 0);
	/* One character is never a checked code. */
	ck_assert_int_eq(codetext_check_ok("2"), 0);
	ck_assert_int_eq(codetext_check_ok("A0"), 0);
	/* The check character makes any body in the alphabet check. */
	str_copy(s, "K7PQXM3", sizeof(s));
	n = strlen(s);
	s[n] = codetext_check_char("K7PQXM3");
	s[n + 1] = '\0';
	ck_assert_ptr_nonnull(strchr(CODE_ALPHABET, s[n]));
	ck_assert_int_eq(codetext_check_ok(s), 1);
	/* Lower case is not normalized here. */
	s[0] = 'k';
	ck_assert_int_eq(codetext_check_ok(s), 0);
}
END_TEST

/* Codes of several shapes: default, prefixed, long. */
static void
random_code(int i, char *norm)
{
	static const struct {
		const char *prefix;
		int length;
	} shapes[] = {
	    {"", CODE_LENGTH_DEFAULT},
	    {"VXP", 12},
	    {"", CODE_LENGTH_MIN},
	    {"SPRNG", CODE_LENGTH_MAX},
	};
	char display[CODE_DISPLAY_MAX];

	ck_assert_int_eq(codetext_generate(shapes[i % 4].prefix,
			     shapes[i % 4].length, 1, norm, display),
	    0);
	ck_assert_int_eq(codetext_check_ok(norm), 1);
}

START_TEST(test_codetext_check_catches_substitutions)
{
	char norm[CODE_MAX + 1], typo[CODE_MAX + 1];
	size_t n, pos, k;
	int i;

	for (i = 0; i < RANDOM_CODES; i++) {
		random_code(i, norm);
		n = strlen(norm);
		for (pos = 0; pos < n; pos++) {
			for (k = 0; k < CODE_ALPHABET_LEN; k++) {
				if (CODE_ALPHABET[k] == norm[pos])
					continue;
				memcpy(typo, norm, n + 1);
				typo[pos] = CODE_ALPHABET[k];
				ck_assert_msg(!codetext_check_ok(typo),
				    "%s -> %s: the typo checks", norm, typo);
			}
		}
	}
}
END_TEST

START_TEST(test_codetext_check_catches_transpositions)
{
	char norm[CODE_MAX + 1], swapped[CODE_MAX + 1];
	size_t n, pos;
	int i, tried = 0;

	for (i = 0; i < RANDOM_CODES; i++) {
		random_code(i, norm);
		n = strlen(norm);
		for (pos = 0; pos + 1 < n; pos++) {
			if (norm[pos] == norm[pos + 1])
				continue;
			memcpy(swapped, norm, n + 1);
			swapped[pos] = norm[pos + 1];
			swapped[pos + 1] = norm[pos];
			ck_assert_msg(!codetext_check_ok(swapped),
			    "%s -> %s: the swap checks", norm, swapped);
			tried++;
		}
	}
	ck_assert_int_gt(tried, RANDOM_CODES * 5);
}
END_TEST

/*
 * Deterministic and complete: every character at every position of a
 * 9-character code (8 of body, then the check character), replaced by
 * every other character or swapped with every distinct neighbour.
 */
START_TEST(test_codetext_check_exhaustive)
{
	char body[CODE_MAX + 1], code[CODE_MAX + 1], typo[CODE_MAX + 1], t;
	size_t a, b, pos;

	for (pos = 0; pos < 9; pos++) {
		for (a = 0; a < CODE_ALPHABET_LEN; a++) {
			for (b = 0; b < CODE_ALPHABET_LEN; b++) {
				if (a == b)
					continue;
				str_copy(body, "K7PQXM3D", sizeof(body));
				if (pos < 7) {
					body[pos] = CODE_ALPHABET[a];
					body[pos + 1] = CODE_ALPHABET[b];
				} else
					body[7] = CODE_ALPHABET[a];
				memcpy(code, body, 8);
				code[8] = codetext_check_char(body);
				code[9] = '\0';
				ck_assert_int_eq(codetext_check_ok(code), 1);
				/* Substitution at pos. */
				memcpy(typo, code, 10);
				if (typo[pos] != CODE_ALPHABET[b]) {
					typo[pos] = CODE_ALPHABET[b];
					ck_assert_msg(!codetext_check_ok(typo),
					    "%s -> %s checks", code, typo);
				}
				/* Swap of pos and its right neighbour. */
				memcpy(typo, code, 10);
				if (pos < 8 && typo[pos] != typo[pos + 1]) {
					t = typo[pos];
					typo[pos] = typo[pos + 1];
					typo[pos + 1] = t;
					ck_assert_msg(!codetext_check_ok(typo),
					    "%s -> %s checks", code, typo);
				}
			}
		}
	}
}
END_TEST

/* One generated code has the shape asked for: prefix, length, alphabet,
 * check, and a display of PREFIX-XXXX-XXXX-... that normalizes back. */
static void
check_generated(const char *prefix, int length, int check)
{
	char norm[CODE_MAX + 1], display[CODE_DISPLAY_MAX];
	char back[CODE_MAX + 1], group[CODE_DISPLAY_MAX];
	size_t plen = strlen(prefix);

	ck_assert_int_eq(
	    codetext_generate(prefix, length, check, norm, display), 0);
	ck_assert_uint_eq(strlen(norm), plen + (size_t)length);
	ck_assert_int_eq(strncmp(norm, prefix, plen), 0);
	ck_assert_int_eq(codetext_in_alphabet(norm), 1);
	if (check)
		ck_assert_int_eq(codetext_check_ok(norm), 1);
	ck_assert_uint_lt(strlen(display), CODE_DISPLAY_MAX);
	codetext_group(norm + plen, group);
	if (plen > 0) {
		ck_assert_int_eq(strncmp(display, prefix, plen), 0);
		ck_assert_int_eq(display[plen], '-');
		ck_assert_str_eq(display + plen + 1, group);
	} else
		ck_assert_str_eq(display, group);
	ck_assert_int_eq(codetext_normalize(display, back), CODETEXT_OK);
	ck_assert_str_eq(back, norm);
}

START_TEST(test_codetext_generate_shapes)
{
	static const char *const prefixes[] = {
	    "", "A", "VXP", "ABCDEFGHJKMNPQRS"}; /* CODE_PREFIX_MAX */
	size_t p;
	int length;

	ck_assert_uint_eq(strlen(prefixes[3]), CODE_PREFIX_MAX);
	for (p = 0; p < NELEM(prefixes); p++)
		for (length = CODE_LENGTH_MIN; length <= CODE_LENGTH_MAX;
		     length++) {
			check_generated(prefixes[p], length, 0);
			check_generated(prefixes[p], length, 1);
		}
}
END_TEST

START_TEST(test_codetext_generate_bad)
{
	char norm[CODE_MAX + 1], display[CODE_DISPLAY_MAX];
	static const int lengths[] = {
	    -1, 0, 1, CODE_LENGTH_MIN - 1, CODE_LENGTH_MAX + 1, 1000};
	size_t i;

	for (i = 0; i < NELEM(lengths); i++) {
		ck_assert_int_eq(
		    codetext_generate("", lengths[i], 1, norm, display), -1);
		ck_assert_int_eq(
		    codetext_generate("", lengths[i], 0, norm, display), -1);
	}
	ck_assert_int_eq(
	    codetext_generate("ABCDEFGHJKMNPQRST", 8, 1, norm, display), -1);
}
END_TEST

static int
cmp_code(const void *a, const void *b)
{
	return strcmp(a, b);
}

START_TEST(test_codetext_generate_random)
{
	enum { N = 2000 };
	static char codes[N][CODE_MAX + 1];
	char display[CODE_DISPLAY_MAX];
	int seen[CODE_ALPHABET_LEN] = {0};
	size_t i, j;

	for (i = 0; i < N; i++) {
		ck_assert_int_eq(codetext_generate("", CODE_LENGTH_DEFAULT, 1,
				     codes[i], display),
		    0);
		for (j = 0; j + 1 < CODE_LENGTH_DEFAULT; j++)
			seen[strchr(CODE_ALPHABET, codes[i][j]) -
			     CODE_ALPHABET]++;
	}
	/* Every character of the alphabet is drawn. */
	for (j = 0; j < CODE_ALPHABET_LEN; j++)
		ck_assert_msg(seen[j] > 0, "%c never drawn", CODE_ALPHABET[j]);
	/* 31^7 bodies: 2000 draws do not collide. */
	qsort(codes, N, sizeof(codes[0]), cmp_code);
	for (i = 1; i < N; i++)
		ck_assert_str_ne(codes[i - 1], codes[i]);
}
END_TEST

START_TEST(test_codetext_group)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"", ""},
	    {"A", "A"},
	    {"ABCD", "ABCD"},
	    {"ABCDE", "ABCD-E"},
	    {"ABCDEFGH", "ABCD-EFGH"},
	    {"ABCDEFGHJK", "ABCD-EFGH-JK"},
	};
	char out[CODE_DISPLAY_MAX];
	char *long_norm = repeat('Q', CODE_MAX);
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		codetext_group(cases[i].in, out);
		ck_assert_str_eq(out, cases[i].want);
	}
	/* The longest code still fits its display buffer. */
	codetext_group(long_norm, out);
	ck_assert_uint_eq(strlen(out), CODE_MAX + CODE_MAX / 4 - 1);
	free(long_norm);
}
END_TEST

START_TEST(test_codetext_account_canonical_ok)
{
	static const struct {
		const char *in, *want;
	} ok[] = {
	    {"alice@example.com", "alice@example.com"},
	    {"Alice@Example.COM", "alice@example.com"},
	    {"  bob@x.org  ", "bob@x.org"},
	    {"\tbob@x.org\t ", "bob@x.org"},
	    {"Zo\xc3\xab@X.org", "zo\xc3\xab@x.org"}, /* only ASCII folds */
	    {"user 42", "user 42"},
	    {"x", "x"},
	};
	char *out = out_buf(ACCOUNT_MAX + 1);
	size_t i;

	for (i = 0; i < NELEM(ok); i++) {
		ck_assert_msg(account_canonical(ok[i].in, out) == 0,
		    "\"%s\" refused", ok[i].in);
		ck_assert_str_eq(out, ok[i].want);
	}
	free(out);
}
END_TEST

START_TEST(test_codetext_account_canonical_hostile)
{
	static const char *const bad[] = {
	    "",
	    " ",
	    "   ",
	    "\t",
	    " \t \t",
	    "a\tb",
	    "a\nb",
	    "a@b\r",
	    "\x01"
	    "a",
	    "a\x1b[2J",
	    "a\x7f",
	    "a\xc2\x85"
	    "b", /* C1 NEL */
	    "a\xff",
	    "a\xc3",
	    "\xc0\xae",
	    "\xed\xa0\x80@x",
	    "\xf4\x90\x80\x80",
	};
	char *out = out_buf(ACCOUNT_MAX + 1);
	size_t i;

	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(account_canonical(bad[i], out) == -1,
		    "bad[%zu] accepted", i);
	free(out);
}
END_TEST

START_TEST(test_codetext_account_canonical_length)
{
	char *out = out_buf(ACCOUNT_MAX + 1);
	char *s, *padded;

	s = repeat('A', ACCOUNT_MAX);
	ck_assert_int_eq(account_canonical(s, out), 0);
	ck_assert_uint_eq(strlen(out), ACCOUNT_MAX);
	ck_assert_int_eq(out[0], 'a');
	free(s);
	s = repeat('a', ACCOUNT_MAX + 1);
	ck_assert_int_eq(account_canonical(s, out), -1);
	free(s);
	/* The limit is in bytes: 253 + a 2-byte letter is 255. */
	s = repeat('a', ACCOUNT_MAX + 1);
	s[ACCOUNT_MAX - 1] = '\xc3';
	s[ACCOUNT_MAX] = '\xa9';
	ck_assert_int_eq(account_canonical(s, out), -1);
	free(s);
	/* Trimmed first, then measured. */
	padded = repeat(' ', ACCOUNT_MAX + 20);
	memset(padded + 10, 'b', ACCOUNT_MAX);
	ck_assert_int_eq(account_canonical(padded, out), 0);
	ck_assert_uint_eq(strlen(out), ACCOUNT_MAX);
	free(padded);
	free(out);
}
END_TEST

Suite *
suite_codetext(void)
{
	Suite *s = suite_create("codetext");
	TCase *tc = tcase_create("codetext");

	/* Pure functions: no database, so no fixture. */
	tcase_add_test(tc, test_codetext_normalize_ok);
	tcase_add_test(tc, test_codetext_normalize_hostile);
	tcase_add_test(tc, test_codetext_normalize_lengths);
	tcase_add_test(tc, test_codetext_alphabet);
	tcase_add_test(tc, test_codetext_check_char);
	tcase_add_test(tc, test_codetext_check_catches_substitutions);
	tcase_add_test(tc, test_codetext_check_catches_transpositions);
	tcase_add_test(tc, test_codetext_check_exhaustive);
	tcase_add_test(tc, test_codetext_generate_shapes);
	tcase_add_test(tc, test_codetext_generate_bad);
	tcase_add_test(tc, test_codetext_generate_random);
	tcase_add_test(tc, test_codetext_group);
	suite_add_tcase(s, tc);
	tc = tcase_create("account");
	tcase_add_test(tc, test_codetext_account_canonical_ok);
	tcase_add_test(tc, test_codetext_account_canonical_hostile);
	tcase_add_test(tc, test_codetext_account_canonical_length);
	suite_add_tcase(s, tc);
	return s;
}
