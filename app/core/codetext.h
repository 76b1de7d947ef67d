/*
 * The text of codes: normalization, the unambiguous alphabet, the check
 * character (Luhn mod 31, which catches every single-character typo and
 * every swap of two different neighbours) and random generation from libsodium.
 * No database here.
 */
#ifndef CODETEXT_H
#define CODETEXT_H

#include <stddef.h>

#define CODE_ALPHABET "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
#define CODE_ALPHABET_LEN 31
#define CODE_MAX 64        /* normalized */
#define CODE_INPUT_MAX 128 /* as typed, with spaces and dashes */
#define CODE_DISPLAY_MAX 96
#define CODE_LENGTH_DEFAULT 8 /* characters after the prefix, check incl. */
#define CODE_LENGTH_MIN 6
#define CODE_LENGTH_MAX 32
#define CODE_PREFIX_MAX 16

enum codetext_status {
	CODETEXT_OK = 0,
	CODETEXT_EMPTY,    /* nothing left after normalization */
	CODETEXT_TOO_LONG, /* over CODE_INPUT_MAX raw or CODE_MAX normalized */
	CODETEXT_BAD_UTF8, /* not UTF-8, or control characters */
	CODETEXT_BAD_CHAR, /* a character no code can hold */
};

/* Upper-cases and drops spaces and dashes into out (CODE_MAX + 1). */
enum codetext_status codetext_normalize(const char *in, char *out);
/* 1 when every character is in CODE_ALPHABET. */
int codetext_in_alphabet(const char *norm);
/* 1 when norm is in the alphabet and its last character checks. */
int codetext_check_ok(const char *norm);
/* The check character for body (all in the alphabet). */
char codetext_check_char(const char *body);
/*
 * A random code: prefix (normalized, in the alphabet, may be ""), then
 * length characters of which the last is the check character when check is
 * set. norm gets the normalized text, display the grouped one
 * ("PREFIX-K7PQ-XM3D"). Returns -1 on bad length.
 */
int codetext_generate(
    const char *prefix, int length, int check, char *norm, char *display);
/* Groups of four joined by dashes. */
void codetext_group(const char *norm, char *display);

#endif
