#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_jobs.h"
#include "campaigns.h"
#include "codes.h"

enum error_word
admin_job_create(struct svc *s, int64_t admin_id, const char *campaign,
    int64_t count, int64_t max_uses, int64_t expires_at, int64_t *id)
{
	struct campaign k;
	enum error_word e;
	int rc;

	*id = 0;
	if (count < 1 || count > ADMIN_JOB_COUNT_MAX || max_uses < 1 ||
	    max_uses > ADMIN_JOB_MAX_USES || expires_at < 0 ||
	    (expires_at > 0 && expires_at <= (int64_t)time(NULL)))
		return ERROR_BAD_REQUEST;
	if ((e = campaign_get(s, campaign, &k)) != ERROR_NONE)
		return e;
	if (k.kind == CAMPAIGN_POOL && max_uses != 1)
		return ERROR_BAD_REQUEST;
	rc = db_exec_id(s->db, STMT_ADMIN_JOB_INSERT, NULL, id, "iiiini",
	    s->tenant_id, k.id, count, max_uses,
	    expires_at > 0 ? &expires_at : NULL, admin_id);
	if (rc != DB_OK || *id <= 0) {
		log_err("admin jobs: queue a job: %s", db_errmsg(s->db));
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}

static void
copy_col(struct db_stmt *st, int col, char *out, size_t len)
{
	const char *t = db_col_text(st, col);

	str_copy(out, t != NULL ? t : "", len);
}

static int64_t
col_time(struct db_stmt *st, int col)
{
	return db_col_null(st, col) ? 0 : db_col_i64(st, col);
}

enum error_word
admin_job_get(struct svc *s, int64_t id, struct admin_job *j)
{
	struct db_stmt *st;
	int rc;

	memset(j, 0, sizeof(*j));
	rc = db_query(s->db, STMT_ADMIN_JOB_GET, &st, "ii", id, s->tenant_id);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return svc_db_error(rc);
	j->id = db_col_i64(st, 0);
	copy_col(st, 1, j->kind, sizeof(j->kind));
	copy_col(st, 2, j->campaign, sizeof(j->campaign));
	j->total = db_col_i64(st, 3);
	j->done = db_col_i64(st, 4);
	j->max_uses = db_col_i64(st, 5);
	j->expires_at = col_time(st, 6);
	copy_col(st, 7, j->state, sizeof(j->state));
	copy_col(st, 8, j->error, sizeof(j->error));
	j->created_at = col_time(st, 9);
	j->started_at = col_time(st, 10);
	j->updated_at = col_time(st, 11);
	j->finished_at = col_time(st, 12);
	j->now = db_col_i64(st, 13);
	db_reset(st);
	return ERROR_NONE;
}

double
admin_job_rate(const struct admin_job *j)
{
	int64_t end = j->finished_at > 0 ? j->finished_at : j->now;
	int64_t secs = end - j->started_at;

	if (j->started_at == 0 || j->done == 0)
		return 0;
	return (double)j->done / (double)(secs > 0 ? secs : 1);
}

/* One job's run: the fence each batch's transaction passes. */
struct job_run {
	struct db *db;
	const char *holder;
	int64_t id, lease;
	int lost; /* the lease is another runner's now */
};

/* Inside a batch's transaction: done grows with the codes, only while
 * the lease is ours and never past the total. */
static int
fence_tx(struct db *db, void *arg, int64_t n)
{
	struct job_run *u = arg;
	int64_t changed = 0;
	int rc;

	rc = db_exec(db, STMT_ADMIN_JOB_PROGRESS, &changed, "iiiti", n,
	    u->lease, u->id, u->holder, n);
	if (rc != DB_OK)
		return rc;
	if (changed == 0) {
		u->lost = 1;
		return DB_ROLLBACK;
	}
	return DB_OK;
}

static int
finish(struct job_run *u, const char *state, const char *error)
{
	if (db_exec(u->db, STMT_ADMIN_JOB_FINISH, NULL, "ttit", state, error,
		u->id, u->holder) != DB_OK) {
		log_err("admin jobs: job %lld: %s", (long long)u->id,
		    db_errmsg(u->db));
		return -1;
	}
	return 0;
}

/* Runs a job we hold to its end, or until renew says stop or the
 * batches run out (*batches counts down). */
static int
run_one(struct job_run *u, int64_t *batches, int (*renew)(void *),
    void *renew_arg, int64_t *codes)
{
	char tenant[TENANT_NAME_MAX + 1], campaign[65];
	struct codes_gen g;
	struct db_stmt *st;
	struct svc s;
	enum error_word e;
	int64_t total, done, max_uses, expires_at, created;
	int rc;

	rc = db_query(u->db, STMT_ADMIN_JOB_LOAD, &st, "it", u->id, u->holder);
	if (rc == DB_OK)
		return 0; /* lost already */
	if (rc != DB_ROW)
		return -1;
	copy_col(st, 0, tenant, sizeof(tenant));
	copy_col(st, 1, campaign, sizeof(campaign));
	total = db_col_i64(st, 2);
	done = db_col_i64(st, 3);
	max_uses = db_col_i64(st, 4);
	expires_at = col_time(st, 5);
	db_reset(st);
	if ((e = svc_open(&s, u->db, tenant)) != ERROR_NONE)
		return e == ERROR_NOT_FOUND ? finish(u, "failed", error_name(e))
					    : -1;
	while (done < total) {
		if (*batches <= 0)
			return 0;
		memset(&g, 0, sizeof(g));
		g.campaign = campaign;
		g.count = total - done < ADMIN_JOB_BATCH ? total - done
							 : ADMIN_JOB_BATCH;
		g.max_uses = max_uses;
		g.expires_at = expires_at;
		g.in_tx = fence_tx;
		g.arg = u;
		u->lost = 0;
		e = codes_generate(&s, &g, &created);
		if (u->lost) {
			log_warn("admin jobs: job %lld: the lease went to "
				 "another runner",
			    (long long)u->id);
			return 0;
		}
		if (e == ERROR_NOT_FOUND || e == ERROR_BAD_REQUEST)
			return finish(u, "failed", error_name(e));
		if (e != ERROR_NONE) {
			log_err("admin jobs: job %lld stopped at %lld of %lld",
			    (long long)u->id, (long long)done,
			    (long long)total);
			return -1;
		}
		done += g.count;
		*codes += g.count;
		(*batches)--;
		if (renew != NULL && !renew(renew_arg))
			return 0;
	}
	return finish(u, "done", "");
}

int
admin_jobs_run(struct db *db, const char *holder, int64_t lease_seconds,
    int64_t batches_max, int (*renew)(void *), void *renew_arg, int64_t *codes)
{
	struct job_run u = {db, holder, 0, lease_seconds, 0};
	struct db_stmt *st;
	int64_t batches = batches_max, claimed;
	int rc;

	*codes = 0;
	while (batches > 0) {
		rc = db_query(db, STMT_ADMIN_JOB_DUE, &st, "t", holder);
		if (rc == DB_OK)
			return 0;
		if (rc != DB_ROW)
			return -1;
		u.id = db_col_i64(st, 0);
		db_reset(st);
		claimed = 0;
		if (db_exec(db, STMT_ADMIN_JOB_CLAIM, &claimed, "tiit", holder,
			lease_seconds, u.id, holder) != DB_OK)
			return -1;
		if (claimed == 0)
			continue; /* another runner was quicker */
		if (run_one(&u, &batches, renew, renew_arg, codes) == -1)
			return -1;
		if (u.lost ||
		    (renew != NULL && batches > 0 && !renew(renew_arg)))
			return 0;
	}
	return 0;
}
