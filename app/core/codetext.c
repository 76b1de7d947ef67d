#include <string.h>

#include <sodium.h>

#include "../lib/common.h"
#include "../lib/str.h"
#include "codetext.h"

static int
alpha_index(char c)
{
	const char *p = c ? strchr(CODE_ALPHABET, c) : NULL;

	return p == NULL ? -1 : (int)(p - CODE_ALPHABET);
}

enum codetext_status
codetext_normalize(const char *in, char *out)
{
	size_t n = strlen(in), i, o = 0;

	if (n > CODE_INPUT_MAX)
		return CODETEXT_TOO_LONG;
	if (!str_utf8_ok(in, n))
		return CODETEXT_BAD_UTF8;
	for (i = 0; i < n; i++) {
		char c = in[i];

		if (c == ' ' || c == '-' || c == '\t')
			continue;
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return CODETEXT_BAD_CHAR;
		if (o >= CODE_MAX)
			return CODETEXT_TOO_LONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return o == 0 ? CODETEXT_EMPTY : CODETEXT_OK;
}

int
codetext_in_alphabet(const char *norm)
{
	for (; *norm != '\0'; norm++)
		if (alpha_index(*norm) < 0)
			return 0;
	return 1;
}

/*
 * Luhn mod 31: from the right, every second value doubled. The modulus is
 * prime, so doubling mod 31 is a permutation (Luhn's digit fold is one only
 * for an even modulus): every substitution of one character and every
 * swap of two different neighbours changes the sum.
 */
static int
luhn_sum(const char *s, size_t n, int factor)
{
	int sum = 0;
	size_t i;

	for (i = n; i > 0; i--) {
		sum += alpha_index(s[i - 1]) * factor % CODE_ALPHABET_LEN;
		factor = factor == 2 ? 1 : 2;
	}
	return sum;
}

char
codetext_check_char(const char *body)
{
	int sum = luhn_sum(body, strlen(body), 2);
	int r =
	    (CODE_ALPHABET_LEN - sum % CODE_ALPHABET_LEN) % CODE_ALPHABET_LEN;

	return CODE_ALPHABET[r];
}

int
codetext_check_ok(const char *norm)
{
	size_t n = strlen(norm);

	if (n < 2 || !codetext_in_alphabet(norm))
		return 0;
	return luhn_sum(norm, n, 1) % CODE_ALPHABET_LEN == 0;
}

void
codetext_group(const char *norm, char *display)
{
	size_t i, o = 0;

	for (i = 0; norm[i] != '\0' && o + 2 < CODE_DISPLAY_MAX; i++) {
		if (i > 0 && i % 4 == 0)
			display[o++] = '-';
		display[o++] = norm[i];
	}
	display[o] = '\0';
}

int
codetext_generate(
    const char *prefix, int length, int check, char *norm, char *display)
{
	char body[CODE_LENGTH_MAX + 1], grouped[CODE_DISPLAY_MAX];
	size_t plen = strlen(prefix);
	int i, nrand = check ? length - 1 : length;

	if (length < CODE_LENGTH_MIN || length > CODE_LENGTH_MAX ||
	    plen > CODE_PREFIX_MAX)
		return -1;
	memcpy(norm, prefix, plen);
	for (i = 0; i < nrand; i++)
		norm[plen + (size_t)i] =
		    CODE_ALPHABET[randombytes_uniform(CODE_ALPHABET_LEN)];
	norm[plen + (size_t)nrand] = '\0';
	if (check) {
		norm[plen + (size_t)nrand] = codetext_check_char(norm);
		norm[plen + (size_t)length] = '\0';
	}
	memcpy(body, norm + plen, (size_t)length + 1);
	codetext_group(body, grouped);
	if (plen > 0) {
		memcpy(display, prefix, plen);
		display[plen] = '-';
		memcpy(display + plen + 1, grouped, strlen(grouped) + 1);
	} else
		memcpy(display, grouped, strlen(grouped) + 1);
	return 0;
}
