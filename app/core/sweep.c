#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "holds.h"
#include "permits.h"
#include "svc.h"
#include "sweep.h"
#include "webhooks.h"

#define SWEEP_BATCH 800
#define SWEEP_LEASE_SECONDS 300
#define SWEEP_STALE_SECONDS (24 * 3600)    /* the spec's staleness limit */
#define SWEEP_KEEP_SECONDS (7 * 24 * 3600) /* ended holds and permits */
/* A job gives its lease back after this many batches and runs again at
 * its next turn, so one huge backlog cannot hold a lease for ever. */
#define SWEEP_BATCHES_MAX 1000

static const struct {
	const char *name;
	const char *env;
	int64_t interval;
} jobs[SWEEP__MAX] = {
    [SWEEP_EXPIRE] = {"expire", "REDEEM_SWEEP_EXPIRE", 60},
    [SWEEP_RELEASE_LEAKED] = {"release_leaked", "REDEEM_SWEEP_RELEASE_LEAKED",
	30},
    [SWEEP_STALENESS] = {"staleness", "REDEEM_SWEEP_STALENESS", 600},
    [SWEEP_DELIVER] = {"deliver", "REDEEM_SWEEP_DELIVER", 1},
    [SWEEP_CLEANUP] = {"cleanup", "REDEEM_SWEEP_CLEANUP", 4 * 3600},
};

const char *
sweep_job_name(enum sweep_job j)
{
	return (unsigned)j < SWEEP__MAX ? jobs[j].name : "?";
}

int
sweep_job_parse(const char *s, enum sweep_job *out)
{
	int j;

	for (j = 0; j < SWEEP__MAX; j++)
		if (s != NULL && strcmp(s, jobs[j].name) == 0) {
			*out = (enum sweep_job)j;
			return 0;
		}
	return -1;
}

int64_t
sweep_job_interval(enum sweep_job j)
{
	const char *s = getenv(jobs[j].env);
	int64_t v;

	if (s != NULL && str_to_i64(s, 1, 86400 * 7, &v) == 0)
		return v;
	return jobs[j].interval;
}

void
sweep_holder(char *out, size_t len)
{
	char host[64] = "localhost";

	gethostname(host, sizeof(host) - 1);
	snprintf(out, len, "%s:%ld", host, (long)getpid());
}

struct batch_tx {
	enum stmt_id stmt;
	const char *fmt;
	int64_t a, b;
	int64_t changed;
};

static int
batch_tx(struct db *db, void *arg)
{
	struct batch_tx *t = arg;

	return db_exec(db, t->stmt, &t->changed, t->fmt, t->a, t->b);
}

/* Repeats one statement that changes at most a batch of rows until a
 * batch comes back short. */
static enum error_word
batches(struct db *db, struct batch_tx *t, struct sweep_report *r)
{
	int rc;

	do {
		t->changed = 0;
		rc = db_transact(db, DB_TX_WRITE, batch_tx, t);
		if (rc != DB_OK)
			return ERROR_UNAVAILABLE;
		r->done += t->changed;
		r->batches++;
	} while (t->changed >= SWEEP_BATCH && r->batches < SWEEP_BATCHES_MAX);
	return ERROR_NONE;
}

/* Runs fn(db, arg, batch, &n) while batches come back full. */
static enum error_word
each_batch(struct db *db, int (*fn)(struct db *, int64_t, int, int64_t *),
    int64_t arg, struct sweep_report *r)
{
	int64_t n;

	do {
		if (fn(db, arg, SWEEP_BATCH, &n) == -1)
			return ERROR_UNAVAILABLE;
		r->done += n;
		r->batches++;
	} while (n >= SWEEP_BATCH && r->batches < SWEEP_BATCHES_MAX);
	return ERROR_NONE;
}

static enum error_word
job_expire(struct db *db, struct sweep_report *r)
{
	struct batch_tx t = {STMT_SWEEP_EXPIRE_CODES, "i", SWEEP_BATCH, 0, 0};

	return batches(db, &t, r);
}

static enum error_word
job_cleanup(struct db *db, struct sweep_report *r)
{
	struct svc_config cfg;
	struct batch_tx t = {STMT_SWEEP_CLEANUP_ABUSE, "ii", 0, SWEEP_BATCH, 0};

	/* Failed attempts older than the gate's window count for nothing; holds
 * and permits that ended more than a week ago go. */
	svc_config_defaults(&cfg);
	t.a = cfg.abuse_window;
	if (batches(db, &t, r) != ERROR_NONE ||
	    each_batch(db, hold_cleanup, SWEEP_KEEP_SECONDS, r) != ERROR_NONE)
		return ERROR_UNAVAILABLE;
	return each_batch(db, permit_cleanup, SWEEP_KEEP_SECONDS, r);
}

/* Holds and permits past their TTL: expired, seats and room returned. */
static enum error_word
job_release_leaked(struct db *db, struct sweep_report *r)
{
	int (*const fn[])(struct db *, int, int64_t *) = {
	    hold_expire_due, permit_expire_due};
	int64_t n;
	size_t i;

	for (i = 0; i < NELEM(fn); i++) {
		do {
			if (fn[i](db, SWEEP_BATCH, &n) == -1)
				return ERROR_UNAVAILABLE;
			r->done += n;
			r->batches++;
		} while (n >= SWEEP_BATCH && r->batches < SWEEP_BATCHES_MAX);
	}
	return ERROR_NONE;
}

/* Permits acquired longer than the staleness limit (heartbeats or not)
 * are released. Holds need none: their TTL is at most the limit. */
static enum error_word
job_staleness(struct db *db, struct sweep_report *r)
{
	return each_batch(db, permit_release_stale, SWEEP_STALE_SECONDS, r);
}

/* Webhooks: events fanned out into deliveries, then the due attempts. */
static enum error_word
job_deliver(struct db *db, struct sweep_report *r)
{
	struct webhooks_config cfg;
	struct webhooks_stats st;

	memset(&st, 0, sizeof(st));
	webhooks_config_defaults(&cfg);
	if (webhooks_enqueue(db, 10 * SWEEP_BATCH, &st) == -1 ||
	    webhooks_deliver_due(db, &cfg, SWEEP_BATCH, &st) == -1)
		return ERROR_UNAVAILABLE;
	r->done = st.claimed;
	r->batches = 1;
	return ERROR_NONE;
}

static enum error_word (*const job_fn[SWEEP__MAX])(
    struct db *, struct sweep_report *) = {
    [SWEEP_EXPIRE] = job_expire,
    [SWEEP_RELEASE_LEAKED] = job_release_leaked,
    [SWEEP_STALENESS] = job_staleness,
    [SWEEP_DELIVER] = job_deliver,
    [SWEEP_CLEANUP] = job_cleanup,
};

enum error_word
sweep_run(
    struct db *db, enum sweep_job j, const char *holder, struct sweep_report *r)
{
	enum error_word e;
	int64_t n = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((unsigned)j >= SWEEP__MAX)
		return ERROR_BAD_REQUEST;
	rc = db_exec(db, STMT_SWEEP_LEASE_TAKE, &n, "titt", holder,
	    (int64_t)SWEEP_LEASE_SECONDS, jobs[j].name, holder);
	if (rc != DB_OK)
		return ERROR_UNAVAILABLE;
	if (n == 0) {
		r->skipped = 1;
		return ERROR_NONE;
	}
	e = job_fn[j](db, r);
	if (e != ERROR_NONE)
		log_warn("sweep %s: stopped after %lld rows: %s", jobs[j].name,
		    (long long)r->done, db_errmsg(db));
	/* A failed give-back only delays the next run to the lease's end. */
	db_exec(db, STMT_SWEEP_LEASE_DONE, NULL, "itt", r->done, jobs[j].name,
	    holder);
	return e;
}
