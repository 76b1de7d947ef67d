/* Codes in the database: bulk generation, CSV import, streamed export,
 * lookup and revocation. */
#ifndef CODES_H
#define CODES_H

#include <stdint.h>
#include <stdio.h>

#include "codetext.h"
#include "svc.h"

struct code_info {
	int64_t id;
	char code[CODE_DISPLAY_MAX];
	char campaign[65];
	char state[16];
	int64_t uses, max_uses;
	int64_t expires_at; /* 0: none */
	int64_t created_at;
};

struct codes_gen {
	const char *campaign;
	int64_t count;
	int64_t max_uses;
	int64_t expires_at; /* 0: none */
	int length;         /* 0: CODE_LENGTH_DEFAULT */
	const char *prefix; /* NULL or "" */
	int no_check;       /* leave the check character out */
	/* Called after each committed batch with the new codes' display
	 * texts, then with progress. Either may be NULL. */
	void (*emit)(void *arg, const char *display);
	void (*progress)(void *arg, int64_t done, int64_t total);
	void *arg;
};

#define CODES_MAX_PER_CALL INT64_C(10000000)

/* ERROR_NONE, ERROR_NOT_FOUND (campaign), ERROR_BAD_REQUEST, or
 * ERROR_UNAVAILABLE; *created counts the codes committed. */
enum error_word codes_generate(
    struct svc *, const struct codes_gen *, int64_t *created);

struct codes_import {
	const char *campaign;
	int64_t max_uses;   /* default for rows without a max_uses column */
	int64_t expires_at; /* default; 0: none */
	void (*progress)(void *arg, int64_t done, int64_t total);
	void *arg;
	/* Out: */
	int64_t created, duplicates;
	int64_t bad_line; /* the first bad line, with ERROR_BAD_REQUEST */
	char bad_reason[128];
};

/*
 * Imports a CSV stream: code[,max_uses[,expires_at]] per line, an optional
 * header line starting with "code". Every line is checked before anything
 * is written (the stream is read twice, so it must be seekable); codes
 * that exist already are counted as duplicates and skipped.
 */
enum error_word codes_import(struct svc *, FILE *, struct codes_import *);

enum codes_filter { CODES_ALL, CODES_USED, CODES_UNUSED, CODES__MAX };
int codes_filter_parse(const char *, enum codes_filter *);

/* Streams the codes of a campaign (by state, then creation) or of every
 * campaign (NULL: by code) to fn, one row at a time, in constant memory. */
enum error_word codes_export(struct svc *, const char *campaign,
    enum codes_filter, void (*fn)(void *, const struct code_info *), void *arg);

enum error_word code_get(struct svc *, const char *code, struct code_info *out);
/* active, redeemed or exhausted -> revoked; idempotent. */
enum error_word code_revoke(
    struct svc *, const char *code, struct code_info *out);

struct json_t *code_info_json(const struct code_info *);

#endif
