/*
 * Redemption: the spec's algorithm, step by step (abuse gate, parse and
 * look up, idempotency pre-check, eligibility, atomic claim, insert under
 * UNIQUE(code_id, account), outbox event), pool claims and reversals.
 * The conditional UPDATE in the claim is the only path that increments
 * codes.uses (a hold takes its seat with the same UPDATE, which also
 * bumps the code's fencing counter: STMT_HOLD_CLAIM).
 *
 * The pieces of a claim are exported for holds (holds.c): the checks of
 * steps 1 to 4, the seat with budget and per-account count, the record
 * of steps 6 and 7, the seat given back, and the word for a lost claim.
 */
#ifndef REDEEM_H
#define REDEEM_H

#include <stdint.h>

#include "account.h"
#include "campaigns.h"
#include "codetext.h"
#include "svc.h"

struct db_stmt;
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

/* How a claim transaction ended. */
enum redeem_claim {
	REDEEM_CLAIM_OK,
	REDEEM_CLAIM_NO_SEAT, /* the code's conditional UPDATE matched nothing */
	REDEEM_CLAIM_NO_BUDGET, /* the campaign's budget UPDATE matched nothing */
	REDEEM_CLAIM_LIMIT,     /* the account's per-campaign count is full */
	REDEEM_CLAIM_DUPLICATE, /* UNIQUE(code_id, account): a twin won */
	REDEEM_CLAIM__MAX
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

/*
 * What steps 1 to 4 found, for a caller that claims in a transaction of
 * its own (holds). Filled by redeem_precheck; never copied (client
 * points into it).
 */
struct redeem_check {
	char account[ACCOUNT_MAX + 1]; /* canonical */
	char client_buf[255];
	const char *client; /* the client key: NULL or client_buf */
	char norm[CODE_MAX + 1];
	int64_t code_id;
	int64_t max_uses;
	int shards; /* the code's counter rows (seats.h); 0: its own row */
	char display[CODE_DISPLAY_MAX];
	struct campaign k;
	int64_t limit;       /* the per-account limit that applies; 0: none */
	int pool_one;        /* as asked of redeem_precheck */
	int64_t now;         /* the database clock at the lookup */
	int have_redemption; /* step 3 found the account's redemption, r */
	struct redemption r;
};

/*
 * Steps 1 to 4 of a redemption: the gate, the lookup, the account's own
 * redemption of the code (reported in chk, not answered), eligibility,
 * and the per-account counter row when a limit applies. pool_one: a pool
 * campaign's codes count one per account, as pool claims do. Returns 1
 * to go on to the claim, 0 when res holds the answer, -1 when the
 * database failed. Counted failures are recorded for the gate.
 */
int redeem_precheck(struct svc *, const char *code, const char *account,
    const char *client, int pool_one, struct redeem_check *chk,
    struct redeem_result *res);
/* After a claim transaction lost (out): the word that explains it, from
 * a fresh lookup, recorded for the gate. Returns 0, or -1 (unavailable). */
int redeem_explain(struct svc *, const struct redeem_check *chk,
    enum redeem_claim out, struct redeem_result *res);

/*
 * Inside a write transaction, in the claim's lock order (campaign, code,
 * campaign_accounts): the campaign's budget when it has one, a seat of
 * chk's code with its next fencing token in *fence, and chk's
 * account's per-campaign count when limit > 0. DB_OK, DB_ROLLBACK with
 * *out saying what was full, or a database error.
 */
int redeem_take_seat(struct svc *, const struct redeem_check *chk,
    int64_t *fence, enum redeem_claim *out);
/* The reverse of redeem_take_seat, in the same lock order: a returned
 * seat re-opens a redeemed or exhausted code, never a revoked or expired
 * one. Returns a db status. */
int redeem_give_seat(struct svc *, const struct campaign *k, int64_t code_id,
    const char *account, int64_t limit);
/*
 * Steps 6 and 7 inside a write transaction: the tenant's next sequence
 * number (or seq, when one was taken before: a hot code's), the
 * redemption under UNIQUE(code_id, account) and its code.redeemed event.
 * r->code (the code as shown) is the caller's; the rest is filled here.
 * DB_EUNIQUE when the account has a redemption of the code already (roll
 * back: the sequence number was taken).
 */
int redeem_record(struct svc *, int64_t code_id, const struct campaign *k,
    const char *account, int64_t now, int64_t seq, struct redemption *r);

const char *reversal_policy_name(enum reversal_policy);
int reversal_policy_parse(const char *, enum reversal_policy *);

/* Reverses redemption id (idempotent: a second call returns the first
 * reversal unchanged). return_seat gives the use back to the code. */
int redeem_reverse(struct svc *, int64_t id, const char *reason,
    enum reversal_policy, struct redeem_result *);

/* The account's redemption of code_id into r: DB_ROW, DB_OK (none), or a
 * database error. Works inside a transaction. */
int redeem_find(
    struct svc *, int64_t code_id, const char *account, struct redemption *r);

/* Reads redemption id of the tenant into res (ERROR_NOT_FOUND). */
int redeem_get(struct svc *, int64_t id, struct redeem_result *);

/* Reads the catalog's REDEMPTION_COLUMNS starting at col. */
void redemption_from_row(struct db_stmt *, int col, struct redemption *);

/* The redemption object of the contract (a new reference). */
struct json_t *redemption_json(const struct redemption *);
/* The whole answer, {"ok": ...}: what the API and the CLI print. */
struct json_t *redeem_result_json(
    const struct redeem_result *, const char *pool_code);

#endif
