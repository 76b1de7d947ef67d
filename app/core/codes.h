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
	/* Counter rows per code (a hot code's seats split over several rows,
	 * claimed at random): 0 = by REDEEM_SPLIT_MIN_USES and
	 * REDEEM_SPLIT_SHARDS (codes_split_default), 1 = one row, the code's
	 * own; N > 1 = N rows. */
	int shards;
	/* Called after each committed batch with the new codes' display
	 * texts, then with progress. Either may be NULL. */
	void (*emit)(void *arg, const char *display);
	void (*progress)(void *arg, int64_t done, int64_t total);
	/* Called inside each batch's transaction, after its rows, with the
	 * batch's size (a job's counter grows with its codes); anything but
	 * DB_OK rolls the batch back and ends the call, ERROR_UNAVAILABLE.
	 * NULL: none. */
	int (*in_tx)(struct db *, void *arg, int64_t n);
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
	int64_t refused; /* codes_import_report: lines refused, duplicates
			    included */
};

/*
 * Imports a CSV stream: code[,max_uses[,expires_at]] per line, an optional
 * header line starting with "code". Every line is checked before anything
 * is written (the stream is read twice, so it must be seekable); codes
 * that exist already are counted as duplicates and skipped.
 */
enum error_word codes_import(struct svc *, FILE *, struct codes_import *);

/*
 * The dashboard's import: the same CSV (len bytes of text, in memory),
 * but every good line is written and every bad one reported to refused
 * (its line number, its text as sent, without the line end, and why in
 * plain words), duplicates included, after the good rows around it are
 * committed. need_check: a code must carry a good check character.
 * im->created, duplicates and refused count; ERROR_NOT_FOUND
 * (campaign), ERROR_BAD_REQUEST (im->max_uses) or ERROR_UNAVAILABLE (the
 * rows committed before stay).
 */
enum error_word codes_import_report(struct svc *, const char *text, size_t len,
    int need_check, struct codes_import *im,
    void (*refused)(void *arg, int64_t line, const char *text, size_t tlen,
	const char *why),
    void *arg);

/*
 * Imports a list of codes as given (the JSON API's {"codes": [...]}):
 * each is normalized, no check character required; one bad code is
 * ERROR_BAD_REQUEST with nothing written. The rest go in one transaction;
 * codes that exist already, and repeats within the list, are skipped and
 * counted in *duplicates. emit (may be NULL) gets each created code's
 * display text after the commit. ERROR_NOT_FOUND (campaign),
 * ERROR_BAD_REQUEST (a bad code, an empty list, max_uses < 1, or not 1
 * for a pool) or ERROR_UNAVAILABLE.
 */
enum error_word codes_import_list(struct svc *, const char *campaign,
    const char *const *codes, size_t n, int64_t max_uses, int64_t expires_at,
    void (*emit)(void *, const char *display), void *arg, int64_t *created,
    int64_t *duplicates);

enum codes_filter { CODES_ALL, CODES_USED, CODES_UNUSED, CODES__MAX };
int codes_filter_parse(const char *, enum codes_filter *);

#define CODES_PAGE_MAX 1000

/*
 * One page of codes by id, keyset style: up to limit (1..CODES_PAGE_MAX)
 * codes of the campaign (NULL: every campaign) with an id above after_id
 * (0: from the start), in id order, each passed to fn. *last_id gets the
 * id of the last one (0: none, past the end); pass it as after_id for the
 * next page. A page shorter than limit is the last. ERROR_NOT_FOUND
 * (campaign), ERROR_BAD_REQUEST (limit, after_id) or ERROR_UNAVAILABLE.
 */
enum error_word codes_page(struct svc *, const char *campaign,
    enum codes_filter, int64_t after_id, int limit,
    void (*fn)(void *, const struct code_info *), void *arg, int64_t *last_id);

/* Streams the codes of a campaign (by state, then creation) or of every
 * campaign (NULL: by code) to fn, one row at a time, in constant memory. */
enum error_word codes_export(struct svc *, const char *campaign,
    enum codes_filter, void (*fn)(void *, const struct code_info *), void *arg);

enum error_word code_get(struct svc *, const char *code, struct code_info *out);
/* active, redeemed or exhausted -> revoked; idempotent. */
enum error_word code_revoke(
    struct svc *, const char *code, struct code_info *out);

struct json_t *code_info_json(const struct code_info *);

struct db_stmt;
/* Reads the catalog's CODE_COLUMNS (from column 0) into ci. */
void code_from_row(struct db_stmt *, struct code_info *ci);

#endif
