/*
 * The dashboard's codes and redemptions pages, read side: keyset pages
 * of a tenant's codes (by campaign, by state) and redemptions (by
 * campaign, account, time), and a code's redemptions and holds. Writes go
 * through code_revoke and redeem_reverse. The caller owns every struct.
 */
#ifndef ADMIN_CODES_H
#define ADMIN_CODES_H

#include <stddef.h>
#include <stdint.h>

#include "codes.h"
#include "redeem.h"
#include "svc.h"

#define ADMIN_CODES_PAGE 50    /* rows per page */
#define ADMIN_CODE_ROWS_MAX 50 /* a code's redemptions, holds shown */

/* NULL or "": any. state: active, redeemed, exhausted, expired or
 * revoked (else ERROR_BAD_REQUEST). */
struct admin_codes_query {
	const char *campaign;
	const char *state;
	int64_t after_id; /* 0: from the start */
};

/* fn gets up to ADMIN_CODES_PAGE codes in id order; *more is 1 when a
 * page follows (its after_id is the last row's id). ERROR_NONE,
 * ERROR_BAD_REQUEST or ERROR_UNAVAILABLE. */
enum error_word admin_codes_page(struct svc *, const struct admin_codes_query *,
    void (*fn)(void *, const struct code_info *), void *arg, int *more);

/* 1 for a state word a code can have. */
int admin_code_state_ok(const char *);

struct admin_hold {
	int64_t id;
	char external_id[129];
	char account[ACCOUNT_MAX + 1];
	char state[16];
	int64_t expires_at, created_at, ended_at; /* ended_at 0: not */
	int64_t redemption_id;                    /* 0: none */
};

/* The code's redemptions and holds, newest first, up to
 * ADMIN_CODE_ROWS_MAX of each. ERROR_NONE or ERROR_UNAVAILABLE. */
enum error_word admin_code_history(struct svc *, int64_t code_id,
    void (*on_redemption)(void *, const struct redemption *),
    void (*on_hold)(void *, const struct admin_hold *), void *arg);

/* NULL or "": any; account as typed (made canonical here). */
struct admin_redemptions_query {
	const char *campaign;
	const char *account;
	int64_t since, until; /* 0: open */
	int64_t before_id;    /* 0: from the newest */
};

/* Newest first, up to ADMIN_CODES_PAGE; *more as for codes (the next
 * page's before_id is the last row's id). ERROR_NONE, ERROR_BAD_REQUEST
 * (a malformed account) or ERROR_UNAVAILABLE. */
enum error_word admin_redemptions_page(struct svc *,
    const struct admin_redemptions_query *,
    void (*fn)(void *, const struct redemption *), void *arg, int *more);

#endif
