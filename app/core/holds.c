/*
 * Holds. Lock order, the claim's everywhere: a hold's row first when one
 * exists (confirm, release, sweep), then campaign rows, code rows,
 * campaign_accounts rows, the sequence counter, inserts. The sweeper
 * flips every hold of its batch first, then gives the seats back sorted
 * by campaign, code, account, so that it never holds a later lock while
 * waiting for an earlier one that a claim holds.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "events.h"
#include "holds.h"
#include "seats.h"

/* Columns of HOLD_COLUMNS in the catalog. */
enum {
	HC_ID,
	HC_EXTERNAL_ID,
	HC_STATE,
	HC_CODE_ID,
	HC_DISPLAY,
	HC_NORM,
	HC_CAMPAIGN,
	HC_ACCOUNT,
	HC_TOKEN,
	HC_EXPIRES,
	HC_CREATED,
	HC_ENDED,
	HC_REDEMPTION,
	HC_CAMPAIGN_ID,
	HC_BUDGET,
	HC_LIMIT,
	HC_KIND,
	HC_CODE_STATE,
	HC_CAMPAIGN_STATE,
	HC_TENANT,
	HC_NOW,
	HC__MAX
};

/* A hold as stored, with what giving its seat back needs. */
struct hold_row {
	struct hold h;          /* as answered */
	enum hold_state stored; /* the state column */
	struct campaign k;      /* id, name, budget, limit, kind */
	int64_t limit;          /* the per-account count it took; 0: none */
	int64_t tenant_id;
	char norm[CODE_MAX + 1];
	int revoked;   /* its code revoked or its campaign closed */
	int exhausted; /* its code reads exhausted (every seat taken) */
	int64_t now;   /* the database clock */
};

static const char *const state_names[HOLD__MAX] = {
    [HOLD_HELD] = "held",
    [HOLD_CONFIRMED] = "confirmed",
    [HOLD_RELEASED] = "released",
    [HOLD_EXPIRED] = "expired",
};

const char *
hold_state_name(enum hold_state st)
{
	return (unsigned)st < HOLD__MAX ? state_names[st] : "";
}

static enum hold_state
state_parse(const char *t)
{
	int i = str_index(t, state_names, HOLD__MAX);

	return i < 0 ? HOLD_EXPIRED : (enum hold_state)i;
}

int
hold_external_id_ok(const char *s)
{
	return str_token_ok(s, HOLD_ID_MAX);
}

static void
text(struct db_stmt *st, int col, char *dst, size_t n)
{
	const char *t = db_col_text(st, col);

	str_copy(dst, t ? t : "", n);
}

static int64_t
opt(struct db_stmt *st, int col)
{
	return db_col_null(st, col) ? 0 : db_col_i64(st, col);
}

static void
row_from(struct db_stmt *st, struct hold_row *w)
{
	const char *t;

	memset(w, 0, sizeof(*w));
	w->h.id = db_col_i64(st, HC_ID);
	text(st, HC_EXTERNAL_ID, w->h.external_id, sizeof(w->h.external_id));
	w->stored = state_parse(db_col_text(st, HC_STATE));
	w->h.code_id = db_col_i64(st, HC_CODE_ID);
	text(st, HC_DISPLAY, w->h.code, sizeof(w->h.code));
	text(st, HC_NORM, w->norm, sizeof(w->norm));
	text(st, HC_CAMPAIGN, w->h.campaign, sizeof(w->h.campaign));
	text(st, HC_ACCOUNT, w->h.account, sizeof(w->h.account));
	w->h.fencing_token = db_col_i64(st, HC_TOKEN);
	w->h.expires_at = db_col_i64(st, HC_EXPIRES);
	w->h.created_at = db_col_i64(st, HC_CREATED);
	w->h.ended_at = opt(st, HC_ENDED);
	w->h.redemption_id = opt(st, HC_REDEMPTION);
	w->k.id = db_col_i64(st, HC_CAMPAIGN_ID);
	str_copy(w->k.name, w->h.campaign, sizeof(w->k.name));
	w->k.budget = opt(st, HC_BUDGET);
	w->k.per_account_limit = opt(st, HC_LIMIT);
	t = db_col_text(st, HC_KIND);
	w->k.kind = t != NULL && strcmp(t, "pool") == 0 ? CAMPAIGN_POOL
							: CAMPAIGN_SHARED;
	/* What redeem_precheck(pool_one) made hold_create take. */
	w->limit = w->k.kind == CAMPAIGN_POOL ? 1 : w->k.per_account_limit;
	t = db_col_text(st, HC_CODE_STATE);
	w->revoked = t != NULL && strcmp(t, "revoked") == 0;
	w->exhausted = t != NULL && strcmp(t, "exhausted") == 0;
	t = db_col_text(st, HC_CAMPAIGN_STATE);
	w->revoked |= t != NULL && strcmp(t, "closed") == 0;
	w->k.closed = t != NULL && strcmp(t, "closed") == 0;
	w->tenant_id = db_col_i64(st, HC_TENANT);
	w->now = db_col_i64(st, HC_NOW);
	w->h.state = w->stored;
	if (w->stored == HOLD_HELD && w->h.expires_at <= w->now)
		w->h.state = HOLD_EXPIRED; /* lost, not swept yet */
}

/* DB_ROW with *w filled, DB_OK when there is no such hold, or an error. */
static int
read_xid(struct svc *s, const char *xid, struct hold_row *w)
{
	struct db_stmt *st;
	int rc = db_query(s->db, STMT_HOLD_GET, &st, "it", s->tenant_id, xid);

	if (rc != DB_ROW)
		return rc;
	row_from(st, w);
	db_reset(st);
	return DB_ROW;
}

static int
read_id(struct db *db, int64_t id, struct hold_row *w)
{
	struct db_stmt *st;
	int rc = db_query(db, STMT_HOLD_BY_ID, &st, "i", id);

	if (rc != DB_ROW)
		return rc;
	row_from(st, w);
	db_reset(st);
	return DB_ROW;
}

json_t *
hold_json(const struct hold *h)
{
	char exp[32], at[32];
	json_t *o;

	str_rfc3339(h->expires_at, exp);
	str_rfc3339(h->created_at, at);
	o = json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:s}", "external_id",
	    h->external_id, "state", hold_state_name(h->state), "expires_at",
	    exp, "fencing_token", (json_int_t)h->fencing_token, "code", h->code,
	    "campaign", h->campaign, "account", h->account, "created_at", at);
	if (o != NULL && h->redemption_id > 0)
		json_object_set_new(
		    o, "redemption_id", json_integer(h->redemption_id));
	return o;
}

json_t *
hold_result_json(const struct hold_result *res)
{
	if (res->error != ERROR_NONE)
		return json_pack("{s:b,s:s,s:s}", "ok", 0, "error",
		    error_name(res->error), "detail",
		    error_sentence(res->error));
	return json_pack("{s:b,s:o}", "ok", 1, "hold", hold_json(&res->h));
}

static int
unavailable(enum error_word *e)
{
	*e = ERROR_UNAVAILABLE;
	return -1;
}

/* --- giving seats back ------------------------------------------------ */

static int
by_campaign(const void *a, const void *b)
{
	const struct hold_row *x = *(const struct hold_row *const *)a;
	const struct hold_row *y = *(const struct hold_row *const *)b;

	return (x->k.id > y->k.id) - (x->k.id < y->k.id);
}

static int
by_code(const void *a, const void *b)
{
	const struct hold_row *x = *(const struct hold_row *const *)a;
	const struct hold_row *y = *(const struct hold_row *const *)b;

	return (x->h.code_id > y->h.code_id) - (x->h.code_id < y->h.code_id);
}

static int
by_account(const void *a, const void *b)
{
	const struct hold_row *x = *(const struct hold_row *const *)a;
	const struct hold_row *y = *(const struct hold_row *const *)b;
	int c = by_campaign(a, b);

	return c != 0 ? c : strcmp(x->h.account, y->h.account);
}

/* The seats of holds that have just left "held" for released or expired,
 * all the campaigns first, then the codes, then the accounts. */
static int
give_back(struct db *db, struct hold_row **v, size_t n)
{
	size_t i;
	int rc;

	qsort(v, n, sizeof(*v), by_campaign);
	for (i = 0; i < n; i++)
		if (v[i]->k.budget > 0 &&
		    (rc = db_exec(db, STMT_CAMPAIGN_RETURN_BUDGET, NULL, "i",
			 v[i]->k.id)) != DB_OK)
			return rc;
	qsort(v, n, sizeof(*v), by_code);
	for (i = 0; i < n; i++)
		if ((rc = seats_return(db, v[i]->h.code_id)) != DB_OK)
			return rc;
	qsort(v, n, sizeof(*v), by_account);
	for (i = 0; i < n; i++)
		if (v[i]->limit > 0 &&
		    (rc = db_exec(db, STMT_ACCOUNT_RETURN, NULL, "it",
			 v[i]->k.id, v[i]->h.account)) != DB_OK)
			return rc;
	return DB_OK;
}

/* The hold.expired event, in the hold's tenant. */
static int
expired_event(struct db *db, const struct hold_row *w)
{
	struct svc t;
	json_t *o;
	char *payload;
	int rc;

	memset(&t, 0, sizeof(t));
	t.db = db;
	t.tenant_id = w->tenant_id;
	o = json_pack("{s:o}", "hold", hold_json(&w->h));
	payload = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (payload == NULL)
		return DB_EFAIL;
	rc = events_insert(&t, "hold.expired", 0, payload);
	free(payload);
	return rc;
}

/*
 * Inside a transaction: w (held, past its expires_at) -> expired, its
 * seat back, its event. *done: 0 when someone else ended it first (w is
 * then re-read either way).
 */
static int
expire_one(struct db *db, struct hold_row *w, int *done)
{
	struct hold_row *v[1] = {w};
	int64_t n;
	int rc;

	*done = 0;
	if ((rc = db_exec(db, STMT_HOLD_EXPIRE, &n, "i", w->h.id)) != DB_OK)
		return rc;
	if (n == 1) {
		*done = 1;
		if ((rc = give_back(db, v, 1)) != DB_OK)
			return rc;
	}
	if ((rc = read_id(db, w->h.id, w)) != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	return *done ? expired_event(db, w) : DB_OK;
}

/* --- create ------------------------------------------------------------ */

/*
 * The same external_id again: 1 when res is the answer (the hold, or a
 * conflict), 0 when there is no such hold, -1 when the database failed.
 */
static int
replay(struct svc *s, const char *xid, const char *norm, const char *account,
    struct hold_result *res)
{
	struct hold_row w;
	int rc = read_xid(s, xid, &w);

	if (rc == DB_OK)
		return 0;
	if (rc != DB_ROW)
		return unavailable(&res->error);
	if (strcmp(w.norm, norm) != 0 || strcmp(w.h.account, account) != 0) {
		res->error = ERROR_CONFLICT;
		return 1;
	}
	res->h = w.h;
	return 1;
}

struct create {
	struct svc *s;
	const struct redeem_check *chk;
	const char *xid;
	int64_t ttl;
	enum redeem_claim out;
	int twin;  /* UNIQUE(tenant_id, external_id): a twin won */
	int again; /* the account holds a seat of the code already */
	struct hold_row w;
};

static int
create_tx(struct db *db, void *arg)
{
	struct create *c = arg;
	const struct redeem_check *chk = c->chk;
	struct hold *h = &c->w.h;
	struct db_stmt *st;
	int64_t fence;
	int rc;

	c->twin = 0;
	memset(h, 0, sizeof(*h));
	rc = redeem_take_seat(c->s, chk, &fence, &c->out);
	if (rc != DB_OK)
		return rc;
	rc = db_query(db, STMT_HOLD_INSERT, &st, "itiitii", c->s->tenant_id,
	    c->xid, chk->code_id, chk->k.id, chk->account, fence, c->ttl);
	if (rc == DB_EUNIQUE) {
		c->twin = 1;
		return DB_ROLLBACK;
	}
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	h->id = db_col_i64(st, 0);
	h->expires_at = db_col_i64(st, 1);
	h->created_at = db_col_i64(st, 2);
	db_reset(st);
	str_copy(h->external_id, c->xid, sizeof(h->external_id));
	h->state = HOLD_HELD;
	h->code_id = chk->code_id;
	str_copy(h->code, chk->display, sizeof(h->code));
	str_copy(h->campaign, chk->k.name, sizeof(h->campaign));
	str_copy(h->account, chk->account, sizeof(h->account));
	h->fencing_token = fence;
	return DB_OK;
}

struct lapsed {
	const struct redeem_check *chk;
	int ended;
};

static int
end_lapsed_tx(struct db *db, void *arg)
{
	struct lapsed *l = arg;
	struct hold_row w;
	struct db_stmt *st;
	int64_t id, lapsed;
	int rc;

	l->ended = 0;
	rc = db_query(db, STMT_HOLD_LIVE_OF_ACCOUNT, &st, "it", l->chk->code_id,
	    l->chk->account);
	if (rc != DB_ROW)
		return rc;
	id = db_col_i64(st, 0);
	lapsed = db_col_i64(st, 1);
	db_reset(st);
	if (!lapsed)
		return DB_OK;
	if ((rc = read_id(db, id, &w)) != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	return expire_one(db, &w, &l->ended);
}

/*
 * The account's live hold of the code stood in the way of a new one: if
 * it has lapsed (not swept yet), it is expired now, seat given back.
 * 1 when it was (try again), 0 when it is live, -1 on a database error.
 */
static int
end_lapsed(struct svc *s, const struct redeem_check *chk)
{
	struct lapsed l = {chk, 0};

	if (db_transact(s->db, DB_TX_WRITE, end_lapsed_tx, &l) != DB_OK)
		return -1;
	return l.ended;
}

int
hold_create(struct svc *s, const char *code, const char *account_in,
    const char *xid, int64_t ttl, const char *client, struct hold_result *res)
{
	char account[ACCOUNT_MAX + 1], norm[CODE_MAX + 1];
	struct redeem_check chk;
	struct redeem_result rr;
	struct create c;
	int rc, tries;

	memset(res, 0, sizeof(*res));
	if (code == NULL || account_in == NULL || !hold_external_id_ok(xid) ||
	    ttl < 1 || ttl > HOLD_TTL_MAX ||
	    account_canonical(account_in, account) == -1) {
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	switch (codetext_normalize(code, norm)) {
	case CODETEXT_OK:
		break;
	case CODETEXT_BAD_CHAR:
		norm[0] = '\0'; /* no hold's code: a conflict, or invalid */
		break;
	default:
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	/* A retry of a hold is answered before the gate: it names nothing
	 * the client did not choose itself. */
	if ((rc = replay(s, xid, norm, account, res)) != 0)
		return rc < 0 ? -1 : 0;
	rc = redeem_precheck(s, code, account_in, client, 1, &chk, &rr);
	res->retry_after = rr.retry_after;
	if (rc != 1) {
		res->error = rr.error;
		return rc;
	}
	if (chk.have_redemption) {
		res->error = ERROR_CONFLICT; /* it has that seat already */
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.chk = &chk;
	c.xid = xid;
	c.ttl = ttl;
	for (tries = 0;; tries++) {
		rc = db_transact(s->db, DB_TX_WRITE, create_tx, &c);
		if (rc < 0)
			return unavailable(&res->error);
		if (!c.twin)
			break;
		/* The same external_id committed first, or the account holds
		 * a seat of the code already (holds_live). */
		if ((rc = replay(s, xid, chk.norm, chk.account, res)) != 0)
			return rc < 0 ? -1 : 0;
		if ((rc = end_lapsed(s, &chk)) != 1 || tries == 1) {
			if (rc == -1)
				return unavailable(&res->error);
			res->error = ERROR_CONFLICT;
			return 0;
		}
	}
	if (rc == DB_ROLLBACK) {
		rc = redeem_explain(s, &chk, c.out, &rr);
		res->error = rr.error;
		return rc;
	}
	res->created = 1;
	res->h = c.w.h;
	return 0;
}

int
hold_get(struct svc *s, const char *xid, struct hold_result *res)
{
	struct hold_row w;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!hold_external_id_ok(xid)) {
		res->error = ERROR_NOT_FOUND;
		return 0;
	}
	rc = read_xid(s, xid, &w);
	if (rc == DB_OK)
		res->error = ERROR_NOT_FOUND;
	else if (rc != DB_ROW)
		return unavailable(&res->error);
	else
		res->h = w.h;
	return 0;
}

/* --- confirm ----------------------------------------------------------- */

struct confirm {
	struct svc *s;
	const char *xid;
	struct redeem_result *res;
	struct hold_row w;
	int found;
	int twin;    /* recording met the account's redemption: again */
	int careful; /* so look for it first this time */
};

/* A hold that is no longer held: its answer, or its expiry now. */
static int
confirm_ended(struct confirm *c)
{
	struct redeem_result got;
	int done;

	switch (c->w.stored) {
	case HOLD_CONFIRMED:
		if (redeem_get(c->s, c->w.h.redemption_id, &got) == -1)
			return DB_EFAIL;
		c->res->error = got.error;
		c->res->r = got.r;
		c->res->already = got.error == ERROR_NONE;
		return DB_ROLLBACK;
	case HOLD_HELD: /* past its expires_at: lost, not swept yet */
		c->res->error = ERROR_EXPIRED;
		return expire_one(c->s->db, &c->w, &done);
	default:
		c->res->error = ERROR_EXPIRED;
		return DB_ROLLBACK;
	}
}

static int
confirm_tx(struct db *db, void *arg)
{
	struct confirm *c = arg;
	struct redeem_result *res = c->res;
	int64_t n;
	int rc;

	memset(res, 0, sizeof(*res));
	c->found = c->twin = 0;
	rc = db_exec(db, STMT_HOLD_CONFIRM, &n, "it", c->s->tenant_id, c->xid);
	if (rc != DB_OK)
		return rc;
	if ((rc = read_xid(c->s, c->xid, &c->w)) == DB_OK) {
		res->error = ERROR_NOT_FOUND;
		return DB_ROLLBACK;
	}
	if (rc != DB_ROW)
		return rc;
	c->found = 1;
	if (n == 0)
		return confirm_ended(c);
	/* This transaction owns held -> confirmed (and the row's lock). */
	if (c->w.revoked) {
		res->error = ERROR_REVOKED;
		return DB_ROLLBACK;
	}
	str_copy(res->r.code, c->w.h.code, sizeof(res->r.code));
	/* The account's own redemption of the code is looked for only when
	 * recording ours met it (the unique key says so): rare, and one
	 * statement less under the lock every other time. */
	rc = c->careful
		 ? redeem_find(c->s, c->w.h.code_id, c->w.h.account, &res->r)
		 : DB_OK;
	if (rc == DB_ROW) {
		/* The account redeemed the code on its own meanwhile: that
		 * redemption holds the seat, the hold's goes back. */
		res->already = 1;
		rc = redeem_give_seat(
		    c->s, &c->w.k, c->w.h.code_id, c->w.h.account, c->w.limit);
	} else if (rc == DB_OK) {
		/* A single-use code's one seat is now redeemed (our hold has
		 * it, so the code reads exhausted unless it is revoked). */
		if (c->w.exhausted)
			rc = db_exec(db, STMT_HOLD_CODE_REDEEMED, NULL, "i",
			    c->w.h.code_id);
		if (rc == DB_OK)
			rc = redeem_record(c->s, c->w.h.code_id, &c->w.k,
			    c->w.h.account, c->w.now, 0, &res->r);
		if (rc == DB_EUNIQUE) { /* the account's redemption */
			c->twin = 1;
			return DB_ROLLBACK;
		}
	}
	if (rc != DB_OK)
		return rc;
	rc = db_exec(
	    db, STMT_HOLD_SET_REDEMPTION, NULL, "ii", res->r.id, c->w.h.id);
	/* The row read after the flip says confirmed and ended_at. */
	c->w.h.redemption_id = res->r.id;
	return rc;
}

int
hold_confirm(
    struct svc *s, const char *xid, struct redeem_result *res, struct hold *h)
{
	struct confirm c;
	int rc, tries;

	memset(res, 0, sizeof(*res));
	if (h != NULL)
		memset(h, 0, sizeof(*h));
	if (!hold_external_id_ok(xid)) {
		res->error = ERROR_NOT_FOUND;
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.xid = xid;
	c.res = res;
	for (tries = 0;; tries++) {
		rc = db_transact(s->db, DB_TX_WRITE, confirm_tx, &c);
		if (rc < 0)
			return unavailable(&res->error);
		if (!c.twin)
			break;
		c.careful = 1;
		if (tries == 3) {
			log_err("hold confirm: the redemption stays out of "
				"sight after %d tries",
			    tries + 1);
			return unavailable(&res->error);
		}
	}
	if (h != NULL && c.found)
		*h = c.w.h;
	return 0;
}

/* --- release ----------------------------------------------------------- */

struct release {
	struct svc *s;
	const char *xid;
	struct hold_result *res;
	struct hold_row w;
};

static int
release_tx(struct db *db, void *arg)
{
	struct release *c = arg;
	int64_t n;
	int rc, done;

	c->res->error = ERROR_NONE;
	rc = db_exec(db, STMT_HOLD_RELEASE, &n, "it", c->s->tenant_id, c->xid);
	if (rc != DB_OK)
		return rc;
	if ((rc = read_xid(c->s, c->xid, &c->w)) == DB_OK) {
		c->res->error = ERROR_NOT_FOUND;
		return DB_ROLLBACK;
	}
	if (rc != DB_ROW)
		return rc;
	if (n == 1)
		return redeem_give_seat(
		    c->s, &c->w.k, c->w.h.code_id, c->w.h.account, c->w.limit);
	if (c->w.stored == HOLD_HELD) /* past its expires_at */
		return expire_one(db, &c->w, &done);
	return DB_ROLLBACK; /* ended before: nothing changes */
}

int
hold_release(struct svc *s, const char *xid, struct hold_result *res)
{
	struct release c;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!hold_external_id_ok(xid)) {
		res->error = ERROR_NOT_FOUND;
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.xid = xid;
	c.res = res;
	rc = db_transact(s->db, DB_TX_WRITE, release_tx, &c);
	if (rc < 0)
		return unavailable(&res->error);
	if (res->error == ERROR_NONE)
		res->h = c.w.h;
	return 0;
}

/* --- the sweeper ------------------------------------------------------- */

struct sweep {
	int batch;
	int64_t tenant_id; /* 0: every tenant */
	int64_t id;        /* > 0: this hold only (with tenant_id) */
	hold_expired_fn *fn;
	void *arg;
	struct hold_row *rows; /* batch of them */
	int64_t *ids;
	int64_t done;
};

static int
sweep_tx(struct db *db, void *arg)
{
	struct sweep *w = arg;
	struct hold_row **v;
	struct db_stmt *st;
	int64_t n, nids = 0, i;
	int rc;

	w->done = 0;
	if (w->id > 0)
		rc = db_query(
		    db, STMT_HOLD_DUE_ONE, &st, "ii", w->id, w->tenant_id);
	else if (w->tenant_id > 0)
		rc = db_query(db, STMT_HOLD_DUE_TENANT, &st, "ii", w->tenant_id,
		    (int64_t)w->batch);
	else
		rc = db_query(db, STMT_HOLD_DUE, &st, "i", (int64_t)w->batch);
	while (rc == DB_ROW) {
		if (nids < w->batch)
			w->ids[nids++] = db_col_i64(st, 0);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK)
		return rc;
	for (i = 0; i < nids; i++) {
		rc = db_exec(db, STMT_HOLD_EXPIRE, &n, "i", w->ids[i]);
		if (rc != DB_OK)
			return rc;
		if (n == 0) /* confirmed, released or expired meanwhile */
			continue;
		rc = read_id(db, w->ids[i], &w->rows[w->done]);
		if (rc != DB_ROW)
			return rc == DB_OK ? DB_EFAIL : rc;
		w->done++;
	}
	if (w->done == 0)
		return DB_OK;
	if ((v = calloc((size_t)w->done, sizeof(*v))) == NULL)
		return DB_EFAIL;
	for (i = 0; i < w->done; i++)
		v[i] = &w->rows[i];
	rc = give_back(db, v, (size_t)w->done);
	free(v);
	for (i = 0; rc == DB_OK && i < w->done; i++)
		rc = expired_event(db, &w->rows[i]);
	for (i = 0; rc == DB_OK && w->fn != NULL && i < w->done; i++)
		rc = w->fn(
		    db, w->arg, w->rows[i].h.id, w->rows[i].h.external_id);
	return rc;
}

int
hold_expire_due(struct db *db, int batch, int64_t *done)
{
	return hold_expire_tenant(db, 0, 0, batch, NULL, NULL, done);
}

int
hold_expire_tenant(struct db *db, int64_t tenant_id, int64_t id, int batch,
    hold_expired_fn *fn, void *arg, int64_t *done)
{
	struct sweep w;
	int rc;

	*done = 0;
	if (batch < 1 || batch > HOLD_EXPIRE_MAX || tenant_id < 0 ||
	    (id > 0 && tenant_id == 0))
		return -1;
	memset(&w, 0, sizeof(w));
	w.batch = batch;
	w.tenant_id = tenant_id;
	w.id = id;
	w.fn = fn;
	w.arg = arg;
	w.rows = calloc((size_t)batch, sizeof(*w.rows));
	w.ids = calloc((size_t)batch, sizeof(*w.ids));
	if (w.rows == NULL || w.ids == NULL) {
		free(w.rows);
		free(w.ids);
		log_err("hold sweep: out of memory");
		return -1;
	}
	rc = db_transact(db, DB_TX_WRITE, sweep_tx, &w);
	if (rc == DB_OK)
		*done = w.done;
	free(w.rows);
	free(w.ids);
	return rc == DB_OK ? 0 : -1;
}

int
hold_cleanup(struct db *db, int64_t age, int batch, int64_t *done)
{
	static const enum stmt_id del[] = {STMT_HOLD_DELETE};

	*done = 0;
	if (age < 0 || batch < 1 || batch > HOLD_EXPIRE_MAX)
		return -1;
	if (db_purge(db, STMT_HOLD_ENDED_OLD, age, batch, del, NELEM(del),
		done) != DB_OK)
		return -1;
	return 0;
}
