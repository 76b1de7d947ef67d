/*
 * The redemption algorithm of the spec, one request at a time:
 *
 *   1 abuse gate       2 parse, look up    3 idempotency pre-check
 *   4 eligibility      5 atomic claim      6 insert under UNIQUE
 *   7 outbox event (same transaction)
 *
 * Lock order inside a claim, kept everywhere: campaign row, code row,
 * campaign_accounts row, the tenant's sequence counter, then inserts.
 */
#include <stdlib.h>
#include <string.h>
#ifdef REDEEM_PLANTED_BUG
#include <unistd.h>
#endif

#include <jansson.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "abuse.h"
#include "events.h"
#include "redeem.h"
#include "seats.h"

/* Columns of STMT_REDEEM_LOOKUP. */
enum {
	LK_FAILS_CLIENT,
	LK_FAILS_ACCOUNT,
	LK_CODE_ID,
	LK_DISPLAY,
	LK_STATE,
	LK_USES,
	LK_MAX_USES,
	LK_EXPIRES,
	LK_CAMPAIGN,                /* CAMPAIGN_COLUMNS: 11 columns from here */
	LK_R_ID = LK_CAMPAIGN + 11, /* REDEMPTION_COLUMNS: 10 from here */
	LK_ACCOUNT_N = LK_R_ID + 10,
	LK_NOW,
	LK_SHARDS,
	LK__MAX
};

struct lookup {
	int64_t fails_client, fails_account; /* the abuse gate's counts */
	int found;
	int64_t code_id;
	char display[CODE_DISPLAY_MAX];
	char state[16];
	int64_t uses, max_uses, expires_at;
	int shards; /* 0: seats on the code's row; else counter rows */
	struct campaign k;
	int have_redemption;
	struct redemption r;
	int64_t account_n;
	int64_t now;
};

struct claim {
	struct svc *s;
	int pool;            /* pick a code inside the transaction */
	int64_t code_id;     /* in, or out for a pool */
	int64_t max_uses;    /* the code's (not for a pool) */
	int shards;          /* its counter rows; 0: its own row */
	int64_t seq;         /* taken before the transaction, or 0 */
	const char *display; /* the code as shown (not for a pool) */
	const struct campaign *k;
	const char *account;
	int64_t limit; /* 0: none */
	int64_t now;   /* the database clock at the lookup */
	enum redeem_claim out;
	struct redemption *r; /* filled on REDEEM_CLAIM_OK */
#ifdef REDEEM_PLANTED_BUG
	int64_t planted_uses; /* read before the claim's transaction */
#endif
};

static const char *const policy_names[REVERSAL__MAX] = {
    [REVERSAL_NONE] = "",
    [REVERSAL_RETURN_SEAT] = "return_seat",
    [REVERSAL_KEEP_SEAT] = "keep_seat",
};

const char *
reversal_policy_name(enum reversal_policy p)
{
	return (unsigned)p < REVERSAL__MAX ? policy_names[p] : "";
}

int
reversal_policy_parse(const char *s, enum reversal_policy *out)
{
	int i;

	for (i = REVERSAL_RETURN_SEAT; i < REVERSAL__MAX; i++)
		if (strcmp(s, policy_names[i]) == 0) {
			*out = (enum reversal_policy)i;
			return 0;
		}
	return -1;
}

void
redemption_from_row(struct db_stmt *st, int col, struct redemption *r)
{
	const char *t;

	memset(r, 0, sizeof(*r));
	r->id = db_col_i64(st, col);
	r->seq = db_col_i64(st, col + 1);
	r->code_id = db_col_i64(st, col + 2);
	if ((t = db_col_text(st, col + 3)) != NULL)
		str_copy(r->code, t, sizeof(r->code));
	if ((t = db_col_text(st, col + 4)) != NULL)
		str_copy(r->account, t, sizeof(r->account));
	if ((t = db_col_text(st, col + 5)) != NULL)
		str_copy(r->campaign, t, sizeof(r->campaign));
	r->redeemed_at = db_col_i64(st, col + 6);
	r->reversed_at = db_col_null(st, col + 7) ? 0 : db_col_i64(st, col + 7);
	if ((t = db_col_text(st, col + 8)) != NULL)
		str_copy(r->reversal_reason, t, sizeof(r->reversal_reason));
	if ((t = db_col_text(st, col + 9)) == NULL ||
	    reversal_policy_parse(t, &r->reversal_policy) == -1)
		r->reversal_policy = REVERSAL_NONE;
}

/* Steps 1 to 4 read in one statement: the gate's counts, the code. */
static int
lookup(struct svc *s, const char *client, const char *norm, const char *account,
    struct lookup *lk)
{
	struct db_stmt *st;
	const char *t;
	int rc;

	memset(lk, 0, sizeof(*lk));
	rc = db_query(s->db, STMT_REDEEM_LOOKUP, &st, "itiitiittt",
	    s->tenant_id, client ? client : "", s->cfg.abuse_window,
	    s->tenant_id, account, s->cfg.abuse_window, s->tenant_id, norm,
	    account, account);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	lk->fails_client = client ? db_col_i64(st, LK_FAILS_CLIENT) : 0;
	lk->fails_account = db_col_i64(st, LK_FAILS_ACCOUNT);
	lk->found = !db_col_null(st, LK_CODE_ID);
	if (!lk->found) {
		db_reset(st);
		return DB_ROW;
	}
	lk->code_id = db_col_i64(st, LK_CODE_ID);
	if ((t = db_col_text(st, LK_DISPLAY)) != NULL)
		str_copy(lk->display, t, sizeof(lk->display));
	if ((t = db_col_text(st, LK_STATE)) != NULL)
		str_copy(lk->state, t, sizeof(lk->state));
	lk->uses = db_col_i64(st, LK_USES);
	lk->max_uses = db_col_i64(st, LK_MAX_USES);
	lk->expires_at =
	    db_col_null(st, LK_EXPIRES) ? 0 : db_col_i64(st, LK_EXPIRES);
	campaign_from_row(st, LK_CAMPAIGN, &lk->k);
	if (!db_col_null(st, LK_R_ID)) {
		lk->have_redemption = 1;
		redemption_from_row(st, LK_R_ID, &lk->r);
	}
	lk->account_n =
	    db_col_null(st, LK_ACCOUNT_N) ? 0 : db_col_i64(st, LK_ACCOUNT_N);
	lk->now = db_col_i64(st, LK_NOW);
	lk->shards = (int)db_col_i64(st, LK_SHARDS);
	db_reset(st);
	return DB_ROW;
}

/* Step 4 for the campaign: advisory; the claim re-checks in its WHERE. */
static enum error_word
campaign_eligible(const struct campaign *k, int64_t now)
{
	if (k->closed)
		return ERROR_REVOKED;
	if (k->ends_at > 0 && k->ends_at <= now)
		return ERROR_EXPIRED;
	if (k->starts_at > 0 && k->starts_at > now)
		return ERROR_INELIGIBLE;
	return ERROR_NONE;
}

/* Step 4, all of it. */
static enum error_word
eligible(const struct lookup *lk, int64_t limit)
{
	enum error_word e;

	if (strcmp(lk->state, "revoked") == 0)
		return ERROR_REVOKED;
	if ((e = campaign_eligible(&lk->k, lk->now)) == ERROR_REVOKED)
		return e;
	if (strcmp(lk->state, "expired") == 0 ||
	    (lk->expires_at > 0 && lk->expires_at <= lk->now))
		return ERROR_EXPIRED;
	if (e != ERROR_NONE)
		return e;
	if (limit > 0 && lk->account_n >= limit)
		return ERROR_INELIGIBLE;
	if (lk->uses >= lk->max_uses || strcmp(lk->state, "active") != 0)
		return ERROR_EXHAUSTED;
	if (lk->k.budget > 0 && lk->k.redeemed >= lk->k.budget)
		return ERROR_EXHAUSTED;
	return ERROR_NONE;
}

static int
fetch_redemption(struct svc *s, enum stmt_id id, int64_t a, const char *b,
    struct redemption *r)
{
	struct db_stmt *st;
	int rc;

	rc = db_query(s->db, id, &st, "it", a, b);
	if (rc != DB_ROW)
		return rc;
	redemption_from_row(st, 0, r);
	db_reset(st);
	return DB_ROW;
}

static int
payload_json(const struct redemption *r, char **out)
{
	json_t *o = json_pack("{s:o}", "redemption", redemption_json(r));

	*out = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return *out ? DB_OK : DB_EFAIL;
}

/* Pool only: the first free code of the campaign, skipping rows other
 * claimers hold (MySQL: FOR UPDATE SKIP LOCKED). */
static int
pool_pick(struct claim *c, struct redemption *r)
{
	struct db_stmt *st;
	const char *t;
	int rc;

	rc = db_query(c->s->db, STMT_POOL_PICK, &st, "i", c->k->id);
	if (rc != DB_ROW)
		return rc;
	c->code_id = db_col_i64(st, 0);
	if ((t = db_col_text(st, 1)) != NULL)
		str_copy(r->code, t, sizeof(r->code));
	db_reset(st);
	return DB_ROW;
}

/* Step 5 for the campaign, in a claim's lock order (first). */
static int
take_budget(struct db *db, const struct campaign *k, enum redeem_claim *out)
{
	int64_t n;
	int rc;

	if (k->budget <= 0)
		return DB_OK;
	rc = db_exec(db, STMT_CAMPAIGN_TAKE_BUDGET, &n, "i", k->id);
	if (rc == DB_OK && n == 0) {
		*out = REDEEM_CLAIM_NO_BUDGET;
		return DB_ROLLBACK;
	}
	return rc;
}

/* Step 5 for the account's per-campaign count (after the code's row). */
static int
take_account(struct db *db, int64_t campaign_id, const char *account,
    int64_t limit, enum redeem_claim *out)
{
	int64_t n;
	int rc;

	if (limit <= 0)
		return DB_OK;
	rc = db_exec(
	    db, STMT_ACCOUNT_TAKE, &n, "iti", campaign_id, account, limit);
	if (rc == DB_OK && n == 0) {
		*out = REDEEM_CLAIM_LIMIT;
		return DB_ROLLBACK;
	}
	return rc;
}

/* The tenant's next sequence number (STMT_SEQ_NEXT), in the caller's
 * transaction. */
static int
seq_next(struct db *db, int64_t tenant_id, int64_t *seq)
{
	return db_exec_id(db, STMT_SEQ_NEXT, NULL, seq, "i", tenant_id);
}

#define SEQ_BLOCK 64 /* numbers a connection reserves for hot codes */

struct seq_tx {
	int64_t tenant_id, last;
};

static int
seq_reserve_tx(struct db *db, void *arg)
{
	struct seq_tx *q = arg;
	int64_t n;
	int rc;

	rc = db_exec_id(db, STMT_SEQ_RESERVE, &n, &q->last, "ii",
	    (int64_t)SEQ_BLOCK, q->tenant_id);
	return rc == DB_OK && n != 1 ? DB_EFAIL : rc;
}

/* A hot code's number: from the block this connection reserved. */
static int
seq_from_block(struct svc *s, int64_t *seq)
{
	struct db_block *b = db_block(s->db);
	struct seq_tx q = {s->tenant_id, 0};

	if (b->key != s->tenant_id || b->next > b->end) {
		if (db_transact(s->db, DB_TX_WRITE, seq_reserve_tx, &q) !=
		    DB_OK)
			return -1;
		b->key = s->tenant_id;
		b->next = q.last - SEQ_BLOCK + 1;
		b->end = q.last;
	}
	*seq = b->next++;
	return 0;
}

int
redeem_record(struct svc *s, int64_t code_id, const struct campaign *k,
    const char *account, int64_t now, int64_t seq, struct redemption *r)
{
	struct db_stmt *st;
	char *payload;
	int rc;

	r->seq = seq;
	if (seq == 0 && (rc = seq_next(s->db, s->tenant_id, &r->seq)) != DB_OK)
		return rc;
	r->redeemed_at = now;
	st = db_prepare(s->db, STMT_REDEMPTION_INSERT);
	if (st == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, s->tenant_id);
	db_bind_i64(st, 2, code_id);
	db_bind_i64(st, 3, k->id);
	db_bind_text(st, 4, account);
	db_bind_i64(st, 5, r->seq);
	db_bind_i64(st, 6, r->redeemed_at);
	rc = db_step(st);
	r->id = db_last_id(st);
	db_reset(st);
	if (rc != DB_OK)
		return rc;
	r->code_id = code_id;
	str_copy(r->account, account, sizeof(r->account));
	str_copy(r->campaign, k->name, sizeof(r->campaign));
	if ((rc = payload_json(r, &payload)) != DB_OK)
		return rc;
	rc = events_insert(s, "code.redeemed", r->id, payload);
	free(payload);
	return rc;
}

/* A seat with the code's next fencing token: one UPDATE of the code's
 * row, or for a split code the token on the row and the seat from a
 * counter row (the code's row lock taken first, as a revoke takes it). */
static int
take_fenced_seat(
    struct db *db, const struct redeem_check *chk, int64_t *fence, int *taken)
{
	struct db_stmt *st;
	int64_t n;
	int rc;

	*taken = 0;
	if ((st = db_prepare(db,
		 chk->shards > 0 ? STMT_CODE_FENCE : STMT_HOLD_CLAIM)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, chk->code_id);
	rc = db_step(st);
	n = db_changes(st);
	*fence = db_last_id(st);
	db_reset(st);
	if (rc != DB_OK || n == 0)
		return rc;
	if (chk->shards == 0) {
		*taken = 1;
		return DB_OK;
	}
	return seats_take(db, chk->code_id, chk->max_uses, chk->shards, taken);
}

int
redeem_take_seat(struct svc *s, const struct redeem_check *chk, int64_t *fence,
    enum redeem_claim *out)
{
	int rc, taken;

	*out = REDEEM_CLAIM_OK;
	*fence = 0;
	if ((rc = take_budget(s->db, &chk->k, out)) != DB_OK)
		return rc;
	if ((rc = take_fenced_seat(s->db, chk, fence, &taken)) != DB_OK)
		return rc;
	if (!taken) {
		*out = REDEEM_CLAIM_NO_SEAT;
		return DB_ROLLBACK;
	}
	return take_account(s->db, chk->k.id, chk->account, chk->limit, out);
}

int
redeem_give_seat(struct svc *s, const struct campaign *k, int64_t code_id,
    const char *account, int64_t limit)
{
	int rc;

	if (k->budget > 0 && (rc = db_exec(s->db, STMT_CAMPAIGN_RETURN_BUDGET,
				  NULL, "i", k->id)) != DB_OK)
		return rc;
	if ((rc = seats_return(s->db, code_id)) != DB_OK)
		return rc;
	if (limit > 0 && (rc = db_exec(s->db, STMT_ACCOUNT_RETURN, NULL, "it",
			      k->id, account)) != DB_OK)
		return rc;
	return DB_OK;
}

/* Step 5's seat: the code's row, or a split code's counter rows. */
static int
claim_seat(struct db *db, const struct claim *c, int64_t *n)
{
	int taken, rc;

#ifdef REDEEM_PLANTED_BUG
	/* The negative control's bug (make PLANTED_BUG=1): a read-then-write
	 * claim, two racers both win. */
	if (!c->pool && c->shards == 0)
		return db_exec(db, STMT_PLANTED_CODE_WRITE, n, "iii",
		    c->planted_uses + 1, c->planted_uses + 1, c->code_id);
#endif
	if (c->shards == 0)
		return db_exec(db, STMT_CODE_CLAIM, n, "i", c->code_id);
	rc = seats_take(db, c->code_id, c->max_uses, c->shards, &taken);
	*n = taken;
	return rc;
}

/* Steps 5, 6 and 7: one transaction. */
static int
claim_tx(struct db *db, void *arg)
{
	struct claim *c = arg;
	struct redemption *r = c->r;
	int64_t n;
	int rc, tries;

	c->out = REDEEM_CLAIM_OK;
	if ((rc = take_budget(db, c->k, &c->out)) != DB_OK)
		return rc;
	for (tries = 0;; tries++) {
		if (c->pool) {
			rc = pool_pick(c, r);
			if (rc == DB_OK) {
				c->out = REDEEM_CLAIM_NO_SEAT;
				return DB_ROLLBACK;
			}
			if (rc != DB_ROW)
				return rc;
		}
		rc = claim_seat(db, c, &n);
		if (rc != DB_OK)
			return rc;
		if (n == 1) {
			if (!c->pool)
				str_copy(r->code, c->display, sizeof(r->code));
			break;
		}
		if (!c->pool || tries >= 3) {
			c->out = REDEEM_CLAIM_NO_SEAT;
			return DB_ROLLBACK;
		}
	}
	if ((rc = take_account(db, c->k->id, c->account, c->limit, &c->out)) !=
	    DB_OK)
		return rc;
	rc = redeem_record(
	    c->s, c->code_id, c->k, c->account, c->now, c->seq, r);
	if (rc == DB_EUNIQUE) {
		c->out = REDEEM_CLAIM_DUPLICATE;
		return DB_ROLLBACK;
	}
	return rc;
}

struct account_row {
	int64_t campaign_id;
	const char *account;
};

static int
account_row_tx(struct db *db, void *arg)
{
	struct account_row *a = arg;

	return db_exec(
	    db, STMT_ACCOUNT_ENSURE, NULL, "it", a->campaign_id, a->account);
}

/*
 * The per-account counter row exists before the claim, committed on its
 * own: creating it inside the claim would make two same-account claims
 * share a lock and then both want to upgrade it (a deadlock on InnoDB).
 */
static int
ensure_account_row(struct svc *s, int64_t campaign_id, const char *account)
{
	struct account_row a = {campaign_id, account};

	return db_transact(s->db, DB_TX_WRITE, account_row_tx, &a);
}

static int
fail(struct svc *s, struct redeem_result *res, enum error_word e,
    const char *client, const char *account)
{
	res->error = e;
	if (error_counts_as_failure(e))
		abuse_record(s, client, account);
	return e == ERROR_UNAVAILABLE ? -1 : 0;
}

static int
unavailable(struct redeem_result *res)
{
	res->error = ERROR_UNAVAILABLE;
	return -1;
}

/*
 * The canonical account, and the client key trimmed (MariaDB's collation
 * ignores trailing spaces where SQLite does not: trimmed, both engines
 * count "1.2.3.4 " as "1.2.3.4"). client_out: NULL when none was given.
 */
static int
inputs_ok(const char *account_in, char *account, const char *client,
    char *client_buf, const char **client_out)
{
	size_t b = 0, n;

	*client_out = NULL;
	if (account_in == NULL || account_canonical(account_in, account) == -1)
		return 0;
	if (client == NULL)
		return 1;
	n = strlen(client);
	if (n > 254 || !str_utf8_ok(client, n))
		return 0;
	while (b < n && (client[b] == ' ' || client[b] == '\t'))
		b++;
	while (n > b && (client[n - 1] == ' ' || client[n - 1] == '\t'))
		n--;
	memcpy(client_buf, client + b, n - b);
	client_buf[n - b] = '\0';
	*client_out = n > b ? client_buf : NULL;
	return 1;
}

/* Step 1 on its own (pool claims): 1 to go on, else the answer is set. */
static int
gate(struct svc *s, const char *account, const char *client,
    struct redeem_result *res)
{
	enum error_word e = abuse_check(s, client, account, &res->retry_after);

	if (e == ERROR_NONE)
		return 1;
	res->error = e;
	return e == ERROR_UNAVAILABLE ? -1 : 0;
}

/*
 * Steps 5 to 7, then, when the claim lost, step 3 again: a same-account
 * twin may have committed first (twin: the statement that finds it, by
 * key and account). Returns 1 when res is the answer, 0 when the caller
 * must explain the loss, -1 when the database failed.
 */
static int
claim(struct svc *s, struct claim *c, enum stmt_id twin, int64_t key,
    struct redeem_result *res)
{
	int rc;

#ifdef REDEEM_PLANTED_BUG
	struct db_stmt *st;

	if (!c->pool && db_query(s->db, STMT_PLANTED_CODE_USES, &st, "i",
			    c->code_id) == DB_ROW) {
		c->planted_uses = db_col_i64(st, 0);
		db_reset(st);
		usleep(2000); /* a window wide enough for a racer to commit */
	}
#endif
	rc = db_transact(s->db, DB_TX_WRITE, claim_tx, c);
	if (rc < 0)
		return unavailable(res);
	if (c->out == REDEEM_CLAIM_OK)
		return 1;
	res->compensated = c->out == REDEEM_CLAIM_DUPLICATE;
	rc = fetch_redemption(s, twin, key, c->account, &res->r);
	if (rc == DB_ROW) {
		res->already = 1;
		res->rechecked = !res->compensated;
		return 1;
	}
	if (rc != DB_OK)
		return unavailable(res);
	memset(&res->r, 0, sizeof(res->r));
	return 0;
}

int
redeem_precheck(struct svc *s, const char *code, const char *account_in,
    const char *client_in, int pool_one, struct redeem_check *chk,
    struct redeem_result *res)
{
	struct lookup lk;
	enum error_word e;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(chk, 0, sizeof(*chk));
	if (!inputs_ok(account_in, chk->account, client_in, chk->client_buf,
		&chk->client) ||
	    code == NULL) {
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	switch (codetext_normalize(code, chk->norm)) {
	case CODETEXT_OK:
		break;
	case CODETEXT_BAD_CHAR:
		chk->norm[0] = '\0'; /* no code can match: invalid, after the
					gate */
		break;
	default:
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	rc = lookup(s, chk->client, chk->norm, chk->account, &lk);
	if (rc != DB_ROW)
		return unavailable(res);
	/* Step 1: the gate is decided before anything of the lookup. */
	if ((lk.fails_client >= s->cfg.abuse_limit_client ||
		lk.fails_account >= s->cfg.abuse_limit_account) &&
	    (rc = gate(s, chk->account, chk->client, res)) != 1)
		return rc; /* the gate's own read gives Retry-After */
	/* Step 2: the check character fails a typo without using the
	 * lookup, unless the tenant holds codes that have none. */
	if (chk->norm[0] == '\0' ||
	    (s->unchecked_codes == 0 && codetext_in_alphabet(chk->norm) &&
		!codetext_check_ok(chk->norm)) ||
	    !lk.found)
		return fail(s, res, ERROR_INVALID, chk->client, chk->account);
	chk->code_id = lk.code_id;
	chk->max_uses = lk.max_uses;
	chk->shards = lk.shards;
	str_copy(chk->display, lk.display, sizeof(chk->display));
	chk->k = lk.k;
	chk->now = lk.now;
	chk->limit =
	    pool_one && lk.k.kind == CAMPAIGN_POOL ? 1 : lk.k.per_account_limit;
	chk->pool_one = pool_one;
	/* Step 3: the caller decides (a redemption answers a replay). */
	if (lk.have_redemption) {
		chk->have_redemption = 1;
		chk->r = lk.r;
		return 1;
	}
	/* Step 4. */
	if ((e = eligible(&lk, chk->limit)) != ERROR_NONE)
		return fail(s, res, e, chk->client, chk->account);
	if (chk->limit > 0 && ensure_account_row(s, lk.k.id, chk->account) < 0)
		return unavailable(res);
	return 1;
}

int
redeem_explain(struct svc *s, const struct redeem_check *chk,
    enum redeem_claim out, struct redeem_result *res)
{
	struct lookup lk;
	enum error_word e;
	int rc;

	memset(&res->r, 0, sizeof(res->r));
	rc = lookup(s, chk->client, chk->norm, chk->account, &lk);
	if (rc != DB_ROW)
		return unavailable(res);
	if (!lk.found)
		return fail(s, res, ERROR_INVALID, chk->client, chk->account);
	e = eligible(&lk, chk->limit);
	if (e == ERROR_NONE)
		e = out == REDEEM_CLAIM_LIMIT ? ERROR_INELIGIBLE
					      : ERROR_EXHAUSTED;
	return fail(s, res, e, chk->client, chk->account);
}

int
redeem_code(struct svc *s, const char *code, const char *account_in,
    const char *client_in, struct redeem_result *res)
{
	struct redeem_check chk;
	struct claim c;
	int rc;

	if ((rc = redeem_precheck(
		 s, code, account_in, client_in, 0, &chk, res)) != 1)
		return rc;
	/* Step 3: a retry returns the first redemption, whatever happened
	 * to the code since. */
	if (chk.have_redemption) {
		res->already = 1;
		res->r = chk.r;
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.code_id = chk.code_id;
	c.max_uses = chk.max_uses;
	c.shards = chk.shards;
	c.k = &chk.k;
	c.account = chk.account;
	c.limit = chk.limit;
	c.now = chk.now;
	c.r = &res->r;
	c.display = chk.display;
	/*
	 * A hot code's claims do not queue on one row of the code; they
	 * must not queue on the tenant's sequence row instead, which a
	 * claim holds from its number to its commit. Theirs come from a
	 * block of numbers the connection reserved: unique, increasing for
	 * each worker, but not in commit order across workers, and a claim
	 * that loses (or a worker that exits) leaves a gap.
	 */
	if (chk.shards > 0 && seq_from_block(s, &c.seq) == -1)
		return unavailable(res);
	if ((rc = claim(s, &c, STMT_REDEMPTION_BY_CODE_ACCOUNT, chk.code_id,
		 res)) != 0)
		return rc < 0 ? -1 : 0;
	/* Re-read to give the word that explains the loss. */
	return redeem_explain(s, &chk, c.out, res);
}

int
redeem_pool_claim(struct svc *s, const char *campaign, const char *account_in,
    const char *client_in, struct redeem_result *res)
{
	char account[ACCOUNT_MAX + 1], client_buf[255];
	const char *client;
	struct campaign k;
	struct claim c;
	enum error_word e;
	int64_t now;
	struct db_stmt *st;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!inputs_ok(account_in, account, client_in, client_buf, &client)) {
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	if ((rc = gate(s, account, client, res)) != 1)
		return rc;
	e = campaign ? campaign_get(s, campaign, &k) : ERROR_NOT_FOUND;
	if (e == ERROR_NONE && k.kind != CAMPAIGN_POOL)
		e = ERROR_NOT_FOUND;
	if (e != ERROR_NONE)
		return fail(s, res, e, client, account);
	/* Step 3: the account's code from this pool, if it has one. */
	rc = fetch_redemption(
	    s, STMT_REDEMPTION_BY_CAMPAIGN_ACCOUNT, k.id, account, &res->r);
	if (rc == DB_ROW) {
		res->already = 1;
		return 0;
	}
	if (rc != DB_OK)
		return unavailable(res);
	rc = db_query(s->db, STMT_NOW, &st, "");
	if (rc != DB_ROW)
		return unavailable(res);
	now = db_col_i64(st, 0);
	db_reset(st);
	if ((e = campaign_eligible(&k, now)) != ERROR_NONE)
		return fail(s, res, e, client, account);
	if (k.budget > 0 && k.redeemed >= k.budget)
		return fail(s, res, ERROR_EXHAUSTED, client, account);
	if (ensure_account_row(s, k.id, account) < 0)
		return unavailable(res);
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.pool = 1;
	c.k = &k;
	c.account = account;
	c.limit = 1; /* one code per account per pool */
	c.now = now;
	c.r = &res->r;
	if ((rc = claim(
		 s, &c, STMT_REDEMPTION_BY_CAMPAIGN_ACCOUNT, k.id, res)) != 0)
		return rc < 0 ? -1 : 0;
	if (campaign_get(s, k.name, &k) == ERROR_NONE &&
	    (e = campaign_eligible(&k, now)) != ERROR_NONE)
		return fail(s, res, e, client, account);
	return fail(s, res, ERROR_EXHAUSTED, client, account);
}

int
redeem_find(
    struct svc *s, int64_t code_id, const char *account, struct redemption *r)
{
	return fetch_redemption(
	    s, STMT_REDEMPTION_BY_CODE_ACCOUNT, code_id, account, r);
}

int
redeem_get(struct svc *s, int64_t id, struct redeem_result *res)
{
	struct db_stmt *st;
	int rc;

	memset(res, 0, sizeof(*res));
	rc =
	    db_query(s->db, STMT_REDEMPTION_BY_ID, &st, "ii", id, s->tenant_id);
	if (rc == DB_OK) {
		res->error = ERROR_NOT_FOUND;
		return 0;
	}
	if (rc != DB_ROW)
		return unavailable(res);
	redemption_from_row(st, 0, &res->r);
	db_reset(st);
	return 0;
}

struct reverse {
	struct svc *s;
	int64_t id;
	const char *reason;
	enum reversal_policy policy;
	struct redeem_result *res;
};

static int
reverse_tx(struct db *db, void *arg)
{
	struct reverse *v = arg;
	struct redemption *r = &v->res->r;
	struct db_stmt *st;
	int64_t n, campaign_id, budget, limit;
	char *payload;
	int rc;

	v->res->error = ERROR_NONE;
	v->res->already = 0;
	rc = db_query(db, STMT_REVERSE_READ, &st, "ii", v->id, v->s->tenant_id);
	if (rc == DB_OK) {
		v->res->error = ERROR_NOT_FOUND;
		return DB_ROLLBACK;
	}
	if (rc != DB_ROW)
		return rc;
	redemption_from_row(st, 0, r);
	campaign_id = db_col_i64(st, 10);
	budget = db_col_null(st, 11) ? 0 : db_col_i64(st, 11);
	limit = db_col_null(st, 12) ? 0 : db_col_i64(st, 12);
	if (strcmp(db_col_text(st, 13), "pool") == 0)
		limit = 1;
	db_reset(st);
	if (r->reversed_at != 0) {
		v->res->already = 1;
		return DB_ROLLBACK;
	}
	rc = db_exec(db, STMT_REDEMPTION_REVERSE, &n, "ttii", v->reason,
	    reversal_policy_name(v->policy), v->id, v->s->tenant_id);
	if (rc != DB_OK)
		return rc;
	if (n == 0) { /* a concurrent reversal won */
		v->res->already = 1;
		return DB_ROLLBACK;
	}
	if (v->policy == REVERSAL_RETURN_SEAT) {
		if (budget > 0 && (rc = db_exec(db, STMT_CAMPAIGN_RETURN_BUDGET,
				       NULL, "i", campaign_id)) != DB_OK)
			return rc;
		if ((rc = seats_return(db, r->code_id)) != DB_OK)
			return rc;
		if (limit > 0 && (rc = db_exec(db, STMT_ACCOUNT_RETURN, NULL,
				      "it", campaign_id, r->account)) != DB_OK)
			return rc;
	}
	rc = db_query(
	    db, STMT_REDEMPTION_BY_ID, &st, "ii", v->id, v->s->tenant_id);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	redemption_from_row(st, 0, r);
	db_reset(st);
	if ((rc = payload_json(r, &payload)) != DB_OK)
		return rc;
	rc = events_insert(v->s, "redemption.reversed", r->id, payload);
	free(payload);
	return rc;
}

int
redeem_reverse(struct svc *s, int64_t id, const char *reason,
    enum reversal_policy policy, struct redeem_result *res)
{
	struct reverse v = {s, id, reason, policy, res};
	int rc;

	memset(res, 0, sizeof(*res));
	if (reason == NULL || *reason == '\0' || strlen(reason) > 500 ||
	    !str_utf8_ok(reason, strlen(reason)) ||
	    (policy != REVERSAL_RETURN_SEAT && policy != REVERSAL_KEEP_SEAT)) {
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	rc = db_transact(s->db, DB_TX_WRITE, reverse_tx, &v);
	if (rc < 0)
		return unavailable(res);
	if (res->already) { /* reversed before: answer the first reversal */
		if (redeem_get(s, id, res) == -1)
			return -1;
		res->already = res->error == ERROR_NONE;
	}
	return 0;
}

json_t *
redemption_json(const struct redemption *r)
{
	char at[32];
	json_t *o;

	str_rfc3339(r->redeemed_at, at);
	o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:I}", "id", (json_int_t)r->id,
	    "code", r->code, "account", r->account, "campaign", r->campaign,
	    "redeemed_at", at, "seq", (json_int_t)r->seq);
	if (o != NULL && r->reversed_at != 0) {
		str_rfc3339(r->reversed_at, at);
		json_object_set_new(o, "reversed_at", json_string(at));
		json_object_set_new(
		    o, "reversal_reason", json_string(r->reversal_reason));
		json_object_set_new(o, "reversal_policy",
		    json_string(reversal_policy_name(r->reversal_policy)));
	}
	return o;
}

json_t *
redeem_result_json(const struct redeem_result *res, const char *pool_code)
{
	json_t *o;

	if (res->error != ERROR_NONE)
		return json_pack("{s:b,s:s,s:s}", "ok", 0, "error",
		    error_name(res->error), "detail",
		    error_sentence(res->error));
	o = json_pack("{s:b,s:b}", "ok", 1, "already", res->already);
	if (o == NULL)
		return NULL;
	if (pool_code != NULL)
		json_object_set_new(o, "code", json_string(pool_code));
	json_object_set_new(o, "redemption", redemption_json(&res->r));
	return o;
}
