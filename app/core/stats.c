/*
 * The overview's numbers, in one read transaction so that the counts
 * agree with each other. Days are UTC calendar days by the database's
 * clock: "today" starts at midnight UTC, "7 days" is today and the six
 * before it.
 */
#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "stats.h"

struct overview_run {
	struct svc *s;
	struct stats_overview *o;
};

/* Copies a column's text into out, cut to fit (display only). */
static void
col_text(struct db_stmt *st, int col, char *out, size_t len)
{
	const char *t = db_col_text(st, col);

	if (str_copy(out, t != NULL ? t : "", len) == -1 && len > 4)
		memcpy(out + len - 4, "...", 4);
}

static int
read_days(struct db *db, struct overview_run *u)
{
	struct stats_overview *o = u->o;
	struct db_stmt *st;
	int64_t d;
	int rc;

	if ((rc = db_query(db, STMT_NOW, &st, "")) != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	o->now = db_col_i64(st, 0);
	db_reset(st);
	o->day0 = (o->now / 86400 - (STATS_DAYS - 1)) * 86400;
	if ((st = db_prepare(db, STMT_ADMIN_STATS_PER_DAY)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, o->day0);
	db_bind_i64(st, 2, u->s->tenant_id);
	db_bind_i64(st, 3, o->day0);
	while ((rc = db_step(st)) == DB_ROW) {
		d = db_col_i64(st, 0);
		/* A row stamped after now (a clock stepped back) is left out
		 * rather than shown on a day that has not come. */
		if (d >= 0 && d < STATS_DAYS)
			o->per_day[d] = db_col_i64(st, 1);
	}
	db_reset(st);
	if (rc != DB_OK)
		return rc;
	for (d = 0; d < STATS_DAYS; d++) {
		o->month += o->per_day[d];
		if (d >= STATS_DAYS - 7)
			o->week += o->per_day[d];
	}
	o->today = o->per_day[STATS_DAYS - 1];
	return DB_OK;
}

static int
read_top(struct db *db, struct overview_run *u)
{
	struct stats_overview *o = u->o;
	struct db_stmt *st;
	int rc;

	if ((st = db_prepare(db, STMT_ADMIN_STATS_TOP_CAMPAIGNS)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, u->s->tenant_id);
	db_bind_i64(st, 2, o->day0);
	db_bind_i64(st, 3, STATS_TOP);
	while ((rc = db_step(st)) == DB_ROW && o->ntop < STATS_TOP) {
		struct stats_campaign *c = &o->top[o->ntop++];

		col_text(st, 0, c->name, sizeof(c->name));
		c->redemptions = db_col_i64(st, 1);
	}
	db_reset(st);
	return rc == DB_ROW ? DB_OK : rc;
}

static int
read_leases(struct db *db, struct overview_run *u)
{
	struct stats_overview *o = u->o;
	struct db_stmt *st;
	int64_t t = u->s->tenant_id;
	int rc;

	rc = db_query(db, STMT_ADMIN_STATS_LEASES, &st, "iiii", t, t, t,
	    (int64_t)STATS_STALE_SECONDS);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	o->live_holds = db_col_i64(st, 0);
	o->leaked_holds = db_col_i64(st, 1);
	o->leaked_permits = db_col_i64(st, 2);
	db_reset(st);
	return DB_OK;
}

static int
read_failing(struct db *db, struct overview_run *u)
{
	struct stats_overview *o = u->o;
	struct db_stmt *st;
	int rc;

	if ((st = db_prepare(db, STMT_ADMIN_STATS_FAILING_WEBHOOKS)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, u->s->tenant_id);
	db_bind_i64(st, 2, u->s->tenant_id);
	db_bind_i64(st, 3, STATS_FAILING_WINDOW);
	db_bind_i64(st, 4, STATS_FAILING_MAX);
	while (
	    (rc = db_step(st)) == DB_ROW && o->nfailing < STATS_FAILING_MAX) {
		struct stats_endpoint *e = &o->failing[o->nfailing++];

		e->id = db_col_i64(st, 0);
		col_text(st, 1, e->url, sizeof(e->url));
		e->retrying = db_col_i64(st, 2);
		e->dead = db_col_i64(st, 3);
		e->last_attempt_at = db_col_null(st, 4) ? 0 : db_col_i64(st, 4);
		e->last_status =
		    db_col_null(st, 5) ? 0 : (int)db_col_i64(st, 5);
		col_text(st, 6, e->last_error, sizeof(e->last_error));
	}
	db_reset(st);
	return rc == DB_ROW ? DB_OK : rc;
}

static int
overview_tx(struct db *db, void *arg)
{
	struct overview_run *u = arg;
	int rc;

	memset(u->o, 0, sizeof(*u->o)); /* a retry starts afresh */
	if ((rc = read_days(db, u)) != DB_OK ||
	    (rc = read_top(db, u)) != DB_OK ||
	    (rc = read_leases(db, u)) != DB_OK ||
	    (rc = read_failing(db, u)) != DB_OK)
		return rc;
	return DB_ROLLBACK; /* read only: nothing to commit */
}

enum error_word
stats_overview(struct svc *s, struct stats_overview *out)
{
	struct overview_run u = {s, out};
	int rc = db_transact(s->db, DB_TX_READ, overview_tx, &u);

	if (rc != DB_ROLLBACK) {
		log_err("stats: the overview of tenant %s: %s", s->tenant,
		    db_errmsg(s->db));
		return svc_db_error(rc);
	}
	return ERROR_NONE;
}
