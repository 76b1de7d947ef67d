/*
 * Redemption: the spec's algorithm, step by step (abuse gate, parse and
 * look up, idempotency pre-check, eligibility, atomic claim, insert under
 * UNIQUE(code_id, account), outbox event), pool claims and reversals.
 * The conditional UPDATE in the claim is the only path that increments
 * codes.uses.
 */
#ifndef REDEEM_H
#define REDEEM_H

#include <stdint.h>

#include "account.h"
#include "campaigns.h"
#include "codetext.h"
#include "svc.h"

struct json_t;

enum reversal_policy {
	REVERSAL_NONE,
	REVERSAL_RETURN_SEAT,
	REVERSAL_KEEP_SEAT,
	REVERSAL__MAX
};

struct redemption {
	int64_t id;
	int64_t seq;
	int64_t code_id;
	char code[CODE_DISPLAY_MAX];
	char account[ACCOUNT_MAX + 1];
	char campaign[CAMPAIGN_NAME_MAX + 1];
	int64_t redeemed_at;
	int64_t reversed_at; /* 0: not reversed */
	char reversal_reason[501];
	enum reversal_policy reversal_policy;
};

struct redeem_result {
	enum error_word error; /* ERROR_NONE: ok */
	int already;           /* a replay: the first redemption */
	struct redemption r;
	int64_t retry_after; /* with ERROR_RATE_LIMITED */
	/* How the answer came about, for tests and counters. */
	int compensated; /* a unique violation rolled the seat back */
	int rechecked;   /* the claim matched no row; the re-check found it */
};

/* code: as typed; account: as given; client: the end user's address or
 * NULL. Returns 0, or -1 when the database failed (error: unavailable). */
int redeem_code(struct svc *, const char *code, const char *account,
    const char *client, struct redeem_result *);

/* A pool claim: one unused code for the account, the same one again on a
 * repeat. The handed-out code is res->r.code. */
int redeem_pool_claim(struct svc *, const char *campaign, const char *account,
    const char *client, struct redeem_result *);

const char *reversal_policy_name(enum reversal_policy);
int reversal_policy_parse(const char *, enum reversal_policy *);

/* Reverses redemption id (idempotent: a second call returns the first
 * reversal unchanged). return_seat gives the use back to the code. */
int redeem_reverse(struct svc *, int64_t id, const char *reason,
    enum reversal_policy, struct redeem_result *);

/* Reads redemption id of the tenant into res (ERROR_NOT_FOUND). */
int redeem_get(struct svc *, int64_t id, struct redeem_result *);

/* The redemption object of the contract (a new reference). */
struct json_t *redemption_json(const struct redemption *);
/* The whole answer, {"ok": ...}: what the API and the CLI print. */
struct json_t *redeem_result_json(
    const struct redeem_result *, const char *pool_code);

#endif
