/*
 * Holds: a seat of a code reserved for an account for a TTL (a checkout,
 * a sign-up form), named by the client's external_id (its idempotency
 * key) and carrying a fencing token from the code's counter.
 *
 * Accounting: a hold takes, in one transaction and with the claim's own
 * statements, everything its redemption will need: a seat of the code
 * (uses counts live holds, G2), the campaign's budget and the account's
 * per-campaign count when they apply (G4 counts live holds too). Confirm
 * then takes nothing more and cannot fail for want of room; release and
 * expiry give all of it back (a returned seat never re-opens a revoked or
 * expired code). A code whose last seat is held reads "exhausted", even a
 * single-use one; confirming that seat makes a single-use code "redeemed".
 *
 * A hold is lost at its expires_at by the database clock, swept or not:
 * read back, it says "expired" from then on, and confirm or release of it
 * returns its seat at once if the sweeper has not.
 */
#ifndef HOLDS_H
#define HOLDS_H

#include <stdint.h>

#include "redeem.h"

#define HOLD_ID_MAX 128      /* external_id: 1-128 of [A-Za-z0-9._~:@-] */
#define HOLD_TTL_MAX 86400   /* seconds */
#define HOLD_EXPIRE_MAX 1000 /* holds per hold_expire_due call */

enum hold_state {
	HOLD_HELD,
	HOLD_CONFIRMED,
	HOLD_RELEASED,
	HOLD_EXPIRED,
	HOLD__MAX
};

struct hold {
	int64_t id;
	char external_id[HOLD_ID_MAX + 1];
	enum hold_state state; /* expired once past expires_at, swept or not */
	int64_t code_id;
	char code[CODE_DISPLAY_MAX]; /* as shown */
	char campaign[CAMPAIGN_NAME_MAX + 1];
	char account[ACCOUNT_MAX + 1]; /* canonical */
	int64_t fencing_token;
	int64_t expires_at, created_at;
	int64_t ended_at;      /* when it left "held"; 0: not yet */
	int64_t redemption_id; /* confirmed: its redemption; else 0 */
};

struct hold_result {
	enum error_word error; /* ERROR_NONE: ok */
	int created;           /* hold_create: 1 a new hold, 0 the same again */
	struct hold h;
	int64_t retry_after; /* with ERROR_RATE_LIMITED */
};

const char *hold_state_name(enum hold_state);
int hold_external_id_ok(const char *);

/*
 * Takes a seat of code for account until ttl_seconds from now (database
 * clock), through the redemption's abuse gate, lookup and eligibility
 * (client: the end user's address or NULL). The same external_id again
 * returns that hold, whatever its state, with created 0; with another
 * code or account it is ERROR_CONFLICT, as is a hold for an account that
 * has redeemed the code already. ERROR_EXHAUSTED, _INELIGIBLE, ... as a
 * redemption would answer. Returns 0, or -1 when the database failed.
 */
int hold_create(struct svc *, const char *code, const char *account,
    const char *external_id, int64_t ttl_seconds, const char *client,
    struct hold_result *);

/*
 * Turns a held hold into a redemption without a second claim: res is the
 * redeem answer (redeem_result_json prints it). Idempotent: a confirmed
 * hold answers its redemption with already 1. When the account redeemed
 * the code meanwhile, that redemption is the answer (already 1) and the
 * hold's seat goes back. ERROR_EXPIRED for a hold past its expires_at
 * (swept or not) or released, ERROR_REVOKED when the code was revoked or
 * its campaign closed meanwhile (the hold stays until released or
 * expired), ERROR_NOT_FOUND. h (may be NULL) gets the hold afterwards.
 * Returns 0, or -1 when the database failed.
 */
int hold_confirm(struct svc *, const char *external_id,
    struct redeem_result *res, struct hold *h);

/*
 * Gives the seat back: held -> released. Idempotent; a confirmed hold is
 * left as it is and reported "confirmed", an expired one "expired" (its
 * seat returned now if the sweeper has not yet). ERROR_NOT_FOUND.
 */
int hold_release(struct svc *, const char *external_id, struct hold_result *);

int hold_get(struct svc *, const char *external_id, struct hold_result *);

/*
 * For the sweeper, every tenant at once: up to batch (1..HOLD_EXPIRE_MAX)
 * held holds past their expires_at by the database clock -> expired, their
 * seats returned, one hold.expired event each, in one transaction. *done
 * gets how many; call again while it equals batch. Returns 0 or -1.
 */
int hold_expire_due(struct db *, int batch, int64_t *done);

/*
 * The same batch for one tenant (the dashboard's release of leaked
 * holds), or only its hold id when id > 0. fn (may be NULL) is called
 * inside the transaction for each hold expired, after its seat and event;
 * a status other than DB_OK rolls the whole batch back. Returns 0 or -1.
 */
typedef int hold_expired_fn(
    struct db *, void *arg, int64_t id, const char *external_id);
int hold_expire_tenant(struct db *, int64_t tenant_id, int64_t id, int batch,
    hold_expired_fn *fn, void *arg, int64_t *done);

/*
 * For the cleanup job: deletes up to batch (1..HOLD_EXPIRE_MAX) holds that
 * ended (confirmed, released or expired) more than age seconds ago; their
 * external_ids are free again. *done gets how many. Returns 0 or -1.
 */
int hold_cleanup(struct db *, int64_t age, int batch, int64_t *done);

/* The hold object of the contract (a new reference). */
struct json_t *hold_json(const struct hold *);
/* {"ok": true, "hold": {...}} or the error object. */
struct json_t *hold_result_json(const struct hold_result *);

#endif
