/*
 * The dashboard's webhooks page: per-endpoint numbers from indexes on
 * (endpoint_id, state, ...), keyset pages of an endpoint's deliveries
 * (one statement with LIMIT one more than the page), and redelivery by
 * conditional UPDATEs that only move finished rows.
 */
#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_hooks.h"

enum error_word
admin_hook_counts(struct svc *s, int64_t id, struct admin_hook_counts *out)
{
	struct db_stmt *st;
	const char *t;
	int rc;

	memset(out, 0, sizeof(*out));
	/* No row: not the tenant's endpoint (callers have checked; this
	 * keeps another tenant's numbers out all the same). */
	rc = db_query(s->db, STMT_ADMIN_HOOKS_COUNTS, &st, "iii",
	    (int64_t)ADMIN_HOOKS_DAY, id, s->tenant_id);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW) {
		log_err("admin hooks: counts of %lld: %s", (long long)id,
		    db_errmsg(s->db));
		return ERROR_UNAVAILABLE;
	}
	out->pending = db_col_i64(st, 0);
	out->dead = db_col_i64(st, 1);
	out->delivered_day = db_col_i64(st, 2);
	/* A pending delivery's failure is the current trouble; else the
	 * newest dead one's. */
	if (!db_col_null(st, 3) || !db_col_null(st, 4)) {
		out->last_status =
		    db_col_null(st, 3) ? 0 : (int)db_col_i64(st, 3);
		t = db_col_text(st, 4);
	} else {
		out->last_status =
		    db_col_null(st, 5) ? 0 : (int)db_col_i64(st, 5);
		t = db_col_text(st, 6);
	}
	if (t != NULL)
		str_copy(out->last_error, t, sizeof(out->last_error));
	db_reset(st);
	return ERROR_NONE;
}

enum error_word
admin_hook_deliveries(struct svc *s, int64_t endpoint_id,
    const enum delivery_state *state, int64_t before_id,
    void (*fn)(void *, const struct delivery *), void *arg, int *more)
{
	struct db_stmt *st;
	struct delivery d;
	int rc, n = 0, col = 1;

	*more = 0;
	st = db_prepare(s->db, state != NULL ? STMT_ADMIN_HOOKS_DELIVERIES_STATE
					     : STMT_ADMIN_HOOKS_DELIVERIES);
	if (st == NULL)
		return ERROR_UNAVAILABLE;
	db_bind_i64(st, col++, endpoint_id);
	if (state != NULL)
		db_bind_text(st, col++, delivery_state_name(*state));
	db_bind_i64(st, col++, s->tenant_id);
	db_bind_i64(st, col++, before_id > 0 ? before_id : INT64_MAX);
	db_bind_i64(st, col++, ADMIN_HOOKS_PAGE + 1);
	while ((rc = db_step(st)) == DB_ROW) {
		if (n++ == ADMIN_HOOKS_PAGE) {
			*more = 1;
			continue;
		}
		delivery_from_row(st, &d);
		fn(arg, &d);
	}
	db_reset(st);
	if (rc != DB_OK) {
		log_err("admin hooks: deliveries of %lld: %s",
		    (long long)endpoint_id, db_errmsg(s->db));
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}

/* The endpoint is the tenant's and enabled. */
static enum error_word
endpoint_open(struct svc *s, int64_t endpoint_id)
{
	struct webhook w;
	enum error_word e = webhook_get(s, endpoint_id, &w);

	if (e != ERROR_NONE)
		return e;
	return w.enabled ? ERROR_NONE : ERROR_CONFLICT;
}

enum error_word
admin_hook_redeliver(
    struct svc *s, int64_t endpoint_id, int64_t delivery_id, int64_t *n)
{
	struct db_stmt *st;
	enum error_word e;
	int rc;

	*n = 0;
	rc = db_query(s->db, STMT_ADMIN_HOOKS_DELIVERY_STATE, &st, "iii",
	    delivery_id, endpoint_id, s->tenant_id);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return svc_db_error(rc);
	db_reset(st);
	if ((e = endpoint_open(s, endpoint_id)) != ERROR_NONE)
		return e;
	rc = db_exec(s->db, STMT_ADMIN_HOOKS_REDELIVER, n, "iii", delivery_id,
	    endpoint_id, s->tenant_id);
	if (rc != DB_OK) {
		log_err("admin hooks: redeliver %lld: %s",
		    (long long)delivery_id, db_errmsg(s->db));
		return svc_db_error(rc);
	}
	return ERROR_NONE;
}

enum error_word
admin_hook_redeliver_dead(struct svc *s, int64_t endpoint_id, int64_t *n)
{
	enum error_word e;
	int64_t got;
	int rc;

	*n = 0;
	if ((e = endpoint_open(s, endpoint_id)) != ERROR_NONE)
		return e;
	/* Short writes: each batch commits on its own, so the sweeper's
	 * claims never wait behind one long UPDATE. */
	do {
		got = 0;
		rc =
		    db_exec(s->db, STMT_ADMIN_HOOKS_REDELIVER_DEAD, &got, "iii",
			endpoint_id, s->tenant_id, (int64_t)ADMIN_HOOKS_BATCH);
		if (rc != DB_OK) {
			log_err("admin hooks: redeliver the dead of %lld: %s",
			    (long long)endpoint_id, db_errmsg(s->db));
			return svc_db_error(rc);
		}
		*n += got;
	} while (got == ADMIN_HOOKS_BATCH);
	return ERROR_NONE;
}
