/*
 * The dashboard's semaphores and leaked permits. Releases go through the
 * sweeper's batches (hold_expire_tenant, permit_sweep_tenant), so the
 * states, the seats, the room and the hold.expired events are the
 * sweeper's; the audit row of each item is written by their callback, in
 * the batch's transaction, so a release is never without its row.
 */
#include <stdio.h>
#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_leases.h"
#include "audit.h"

/* A release-all stops after this many batches of each kind. */
#define RELEASE_BATCHES_MAX 1000

static void
text(struct db_stmt *st, int col, char *dst, size_t n)
{
	const char *t = db_col_text(st, col);

	/* Display only: a name cut to fit is still shown. */
	str_copy(dst, t ? t : "", n);
}

/* --- semaphores -------------------------------------------------------- */

enum error_word
admin_semaphores(struct svc *s,
    void (*fn)(void *, const struct admin_semaphore *), void *arg, int *more)
{
	struct admin_semaphore m;
	struct db_stmt *st;
	int rc, n = 0;

	*more = 0;
	rc = db_query(s->db, STMT_ADMIN_SEMAPHORES, &st, "ii", s->tenant_id,
	    (int64_t)ADMIN_LEASES_MAX + 1);
	while (rc == DB_ROW) {
		if (n++ == ADMIN_LEASES_MAX)
			*more = 1;
		else {
			memset(&m, 0, sizeof(m));
			m.m.id = db_col_i64(st, 0);
			text(st, 1, m.m.name, sizeof(m.m.name));
			m.m.capacity = db_col_i64(st, 2);
			m.m.in_use = db_col_i64(st, 3);
			m.m.fence = db_col_i64(st, 4);
			m.m.created_at = db_col_i64(st, 5);
			m.m.updated_at = db_col_i64(st, 6);
			m.holders = db_col_i64(st, 7);
			m.leaked = m.m.leaked = db_col_i64(st, 8);
			fn(arg, &m);
		}
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK) {
		log_err("admin semaphores: the list failed");
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}

enum error_word
admin_semaphore_holders(struct svc *s, int64_t semaphore_id,
    void (*fn)(void *, const struct admin_permit *), void *arg)
{
	struct admin_permit p;
	struct db_stmt *st;
	int rc;

	rc = db_query(s->db, STMT_ADMIN_SEMAPHORE_HOLDERS, &st, "iii",
	    semaphore_id, s->tenant_id, (int64_t)ADMIN_LEASES_MAX);
	while (rc == DB_ROW) {
		memset(&p, 0, sizeof(p));
		p.id = db_col_i64(st, 0);
		text(st, 1, p.external_id, sizeof(p.external_id));
		text(st, 2, p.owner, sizeof(p.owner));
		p.fencing_token = db_col_i64(st, 3);
		p.created_at = db_col_i64(st, 4);
		p.expires_at = db_col_i64(st, 5);
		p.count = db_col_i64(st, 6);
		p.now = db_col_i64(st, 7);
		fn(arg, &p);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK) {
		log_err("admin semaphore: the holders failed");
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}

/* --- the leaked page --------------------------------------------------- */

struct leaked_run {
	struct svc *s;
	struct admin_leaked *out;
	void (*on_hold)(void *, const struct admin_leaked_hold *);
	void (*on_permit)(void *, const struct admin_permit *);
	void (*on_stale)(void *, const struct admin_permit *);
	void *arg;
};

static int
leaked_holds(struct db *db, struct leaked_run *u)
{
	struct admin_leaked_hold h;
	struct db_stmt *st;
	int rc;

	rc = db_query(db, STMT_ADMIN_LEAKED_HOLDS, &st, "ii", u->s->tenant_id,
	    (int64_t)ADMIN_LEASES_MAX);
	while (rc == DB_ROW) {
		memset(&h, 0, sizeof(h));
		h.id = db_col_i64(st, 0);
		text(st, 1, h.external_id, sizeof(h.external_id));
		text(st, 2, h.code, sizeof(h.code));
		text(st, 3, h.account, sizeof(h.account));
		text(st, 4, h.campaign, sizeof(h.campaign));
		h.created_at = db_col_i64(st, 5);
		h.expires_at = db_col_i64(st, 6);
		u->on_hold(u->arg, &h);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc;
}

/* The permits past their TTL, or (stale) those acquired too long ago. */
static int
leaked_permits(struct db *db, struct leaked_run *u, int stale)
{
	struct admin_permit p;
	struct db_stmt *st;
	int rc;

	if (stale)
		rc = db_query(db, STMT_ADMIN_STALE_PERMITS, &st, "iii",
		    u->s->tenant_id, (int64_t)ADMIN_LEASES_STALE,
		    (int64_t)ADMIN_LEASES_MAX);
	else
		rc = db_query(db, STMT_ADMIN_LEAKED_PERMITS, &st, "ii",
		    u->s->tenant_id, (int64_t)ADMIN_LEASES_MAX);
	while (rc == DB_ROW) {
		memset(&p, 0, sizeof(p));
		p.id = db_col_i64(st, 0);
		text(st, 1, p.external_id, sizeof(p.external_id));
		text(st, 2, p.owner, sizeof(p.owner));
		p.created_at = db_col_i64(st, 3);
		p.expires_at = db_col_i64(st, 4);
		text(st, 5, p.semaphores, sizeof(p.semaphores));
		p.now = u->out->now;
		(stale ? u->on_stale : u->on_permit)(u->arg, &p);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc;
}

static int
leaked_tx(struct db *db, void *arg)
{
	struct leaked_run *u = arg;
	struct db_stmt *st;
	int64_t t = u->s->tenant_id;
	int rc;

	rc = db_query(db, STMT_ADMIN_LEAKED_COUNTS, &st, "iiii", t, t, t,
	    (int64_t)ADMIN_LEASES_STALE);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	u->out->holds = db_col_i64(st, 0);
	u->out->permits = db_col_i64(st, 1);
	u->out->stale = db_col_i64(st, 2);
	u->out->now = db_col_i64(st, 3);
	db_reset(st);
	if ((rc = leaked_holds(db, u)) != DB_OK ||
	    (rc = leaked_permits(db, u, 0)) != DB_OK)
		return rc;
	return leaked_permits(db, u, 1);
}

enum error_word
admin_leaked(struct svc *s, struct admin_leaked *out,
    void (*on_hold)(void *, const struct admin_leaked_hold *),
    void (*on_permit)(void *, const struct admin_permit *),
    void (*on_stale)(void *, const struct admin_permit *), void *arg)
{
	struct leaked_run u = {s, out, on_hold, on_permit, on_stale, arg};

	memset(out, 0, sizeof(*out));
	if (db_transact(s->db, DB_TX_READ, leaked_tx, &u) != DB_OK) {
		log_err("admin leaked: the lists failed");
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}

/* --- releases ---------------------------------------------------------- */

struct audit_ctx {
	int64_t tenant_id, admin_id;
	const char *ip;
	const char *kind;   /* "hold", "permit" */
	const char *detail; /* why it was leaked, and how it was released */
};

/* The sweeper's callback: the release's audit row, in its transaction. */
static int
audit_release(struct db *db, void *arg, int64_t id, const char *xid)
{
	struct audit_ctx *c = arg;
	char object[256];

	snprintf(
	    object, sizeof(object), "%s %lld %s", c->kind, (long long)id, xid);
	return audit_insert(db, c->tenant_id, c->admin_id, NULL, c->ip,
	    strcmp(c->kind, "hold") == 0 ? "hold.release" : "permit.release",
	    object, c->detail);
}

/* After a release that changed nothing: not the tenant's (404), or no
 * longer leaked (409). */
static enum error_word
why_not(struct svc *s, int hold, int64_t id)
{
	struct db_stmt *st;
	int64_t n;
	int rc;

	rc = db_query(s->db, STMT_ADMIN_LEASE_OWNER, &st, "iiii", id,
	    s->tenant_id, id, s->tenant_id);
	if (rc != DB_ROW)
		return ERROR_UNAVAILABLE;
	n = db_col_i64(st, hold ? 0 : 1);
	db_reset(st);
	return n > 0 ? ERROR_CONFLICT : ERROR_NOT_FOUND;
}

enum error_word
admin_leaked_release_hold(
    struct svc *s, int64_t admin_id, const char *ip, int64_t id)
{
	struct audit_ctx c = {s->tenant_id, admin_id, ip, "hold",
	    "leaked: past its TTL; expired by hand"};
	int64_t done;

	if (id < 1)
		return ERROR_NOT_FOUND;
	if (hold_expire_tenant(
		s->db, s->tenant_id, id, 1, audit_release, &c, &done) == -1)
		return ERROR_UNAVAILABLE;
	return done == 1 ? ERROR_NONE : why_not(s, 1, id);
}

enum error_word
admin_leaked_release_permit(
    struct svc *s, int64_t admin_id, const char *ip, int64_t id)
{
	struct audit_ctx c = {s->tenant_id, admin_id, ip, "permit",
	    "leaked: past its TTL; expired by hand"};
	int64_t done;

	if (id < 1)
		return ERROR_NOT_FOUND;
	/* Past its TTL first, as the sweeper's release_leaked job runs
	 * before its staleness job. */
	if (permit_sweep_tenant(
		s->db, s->tenant_id, id, 0, 1, audit_release, &c, &done) == -1)
		return ERROR_UNAVAILABLE;
	if (done == 1)
		return ERROR_NONE;
	c.detail = "leaked: acquired longer than the staleness limit; "
		   "released by hand";
	if (permit_sweep_tenant(s->db, s->tenant_id, id, ADMIN_LEASES_STALE, 1,
		audit_release, &c, &done) == -1)
		return ERROR_UNAVAILABLE;
	return done == 1 ? ERROR_NONE : why_not(s, 0, id);
}

enum error_word
admin_leaked_release_all(struct svc *s, int64_t admin_id, const char *ip,
    int64_t *holds, int64_t *permits)
{
	struct audit_ctx c = {s->tenant_id, admin_id, ip, "hold",
	    "leaked: past its TTL; expired by hand (release all)"};
	int64_t done;
	int i;

	/* Each kind until a batch releases nothing: a short batch may be
	 * one whose rows the sweeper took first, with more left behind. */
	*holds = *permits = 0;
	for (i = 0; i < RELEASE_BATCHES_MAX; i++) {
		if (hold_expire_tenant(s->db, s->tenant_id, 0,
			ADMIN_LEASES_BATCH, audit_release, &c, &done) == -1)
			return ERROR_UNAVAILABLE;
		*holds += done;
		if (done == 0)
			break;
	}
	c.kind = "permit";
	for (i = 0; i < RELEASE_BATCHES_MAX; i++) {
		if (permit_sweep_tenant(s->db, s->tenant_id, 0, 0,
			ADMIN_LEASES_BATCH, audit_release, &c, &done) == -1)
			return ERROR_UNAVAILABLE;
		*permits += done;
		if (done == 0)
			break;
	}
	c.detail = "leaked: acquired longer than the staleness limit; "
		   "released by hand (release all)";
	for (i = 0; i < RELEASE_BATCHES_MAX; i++) {
		if (permit_sweep_tenant(s->db, s->tenant_id, 0,
			ADMIN_LEASES_STALE, ADMIN_LEASES_BATCH, audit_release,
			&c, &done) == -1)
			return ERROR_UNAVAILABLE;
		*permits += done;
		if (done == 0)
			break;
	}
	return ERROR_NONE;
}

/* --- the sweeper's jobs ------------------------------------------------ */

enum error_word
admin_sweep_status(struct svc *s,
    void (*fn)(void *, const struct admin_sweep_job *), void *arg)
{
	struct admin_sweep_job jobs[SWEEP__MAX];
	int seen[SWEEP__MAX] = {0};
	struct db_stmt *st;
	enum sweep_job j;
	int rc, i;

	memset(jobs, 0, sizeof(jobs));
	rc = db_query(s->db, STMT_ADMIN_SWEEP_STATUS, &st, "");
	while (rc == DB_ROW) {
		if (sweep_job_parse(db_col_text(st, 0), &j) == 0) {
			struct admin_sweep_job *b = &jobs[j];

			seen[j] = 1;
			text(st, 1, b->holder, sizeof(b->holder));
			b->lease_ends = db_col_i64(st, 2);
			b->last_run =
			    db_col_null(st, 3) ? 0 : db_col_i64(st, 3);
			b->last_done =
			    db_col_null(st, 4) ? 0 : db_col_i64(st, 4);
			b->now = db_col_i64(st, 5);
		}
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK) {
		log_err("admin sweep status: the read failed");
		return ERROR_UNAVAILABLE;
	}
	for (i = 0; i < SWEEP__MAX; i++) {
		struct admin_sweep_job *b = &jobs[i];

		b->job = (enum sweep_job)i;
		b->interval = sweep_job_interval(b->job);
		/* A lease that ran out is nobody's. */
		if (!seen[i] || b->lease_ends <= b->now) {
			b->holder[0] = '\0';
			b->lease_ends = 0;
		}
		b->late =
		    b->last_run == 0 || b->now - b->last_run > 2 * b->interval;
		fn(arg, b);
	}
	return ERROR_NONE;
}
