#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_jobs.h"
#include "holds.h"
#include "permits.h"
#include "session.h"
#include "svc.h"
#include "sweep.h"
#include "webhooks.h"

/* Rows a batch (one transaction) takes at most: REDEEM_SWEEP_BATCH. */
#define SWEEP_BATCH 800
/* A lease lasts this long (REDEEM_SWEEP_LEASE) and is renewed after every
 * batch, so a killed sweeper's job is free again soon after. */
#define SWEEP_LEASE_SECONDS 60
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
    [SWEEP_GENERATE] = {"generate", "REDEEM_SWEEP_GENERATE", 1},
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
	return env_i64(jobs[j].env, jobs[j].interval, 1, 86400 * 7);
}

void
sweep_holder(char *out, size_t len)
{
	char host[64] = "localhost";

	gethostname(host, sizeof(host) - 1);
	snprintf(out, len, "%s:%ld", host, (long)getpid());
}

int64_t
sweep_lease_seconds(void)
{
	return env_i64("REDEEM_SWEEP_LEASE", SWEEP_LEASE_SECONDS, 1, 3600);
}

int
sweep_batch(void)
{
	return (int)env_i64("REDEEM_SWEEP_BATCH", SWEEP_BATCH, 1, 10000);
}

/* One run of one job: what each batch needs to renew the lease. */
struct run {
	struct db *db;
	enum sweep_job job;
	const char *holder;
	int64_t lease;
	struct sweep_report *r;
	int batch; /* sweep_batch() */
};

/*
 * Takes the job's lease, or renews it when it is already ours; 1 when we
 * hold it now, 0 when another sweeper does, -1 on a database error. A
 * job stops between batches when renewing fails: the lease ran out and
 * another sweeper has the job now.
 */
static int
lease_take(struct run *u)
{
	int64_t n = 0;

	if (db_exec(u->db, STMT_SWEEP_LEASE_TAKE, &n, "titt", u->holder,
		u->lease, jobs[u->job].name, u->holder) != DB_OK)
		return -1;
	return n > 0;
}

/* After a batch: goes on while batches come back full, the job is not
 * over its batch limit, and the lease is still ours. */
static int
more(struct run *u, int64_t n)
{
	u->r->done += n;
	u->r->batches++;
	if (n < u->batch || u->r->batches >= SWEEP_BATCHES_MAX)
		return 0;
	return lease_take(u) == 1;
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
batches(struct run *u, struct batch_tx *t)
{
	do {
		t->changed = 0;
		if (db_transact(u->db, DB_TX_WRITE, batch_tx, t) != DB_OK)
			return ERROR_UNAVAILABLE;
	} while (more(u, t->changed));
	return ERROR_NONE;
}

/* Runs fn(db, batch, &n) while batches come back full. */
static enum error_word
each_batch(struct run *u, int (*fn)(struct db *, int, int64_t *))
{
	int64_t n;

	do {
		if (fn(u->db, u->batch, &n) == -1)
			return ERROR_UNAVAILABLE;
	} while (more(u, n));
	return ERROR_NONE;
}

/* The same, for the cleanups that take an age. */
static enum error_word
each_batch_aged(
    struct run *u, int (*fn)(struct db *, int64_t, int, int64_t *), int64_t age)
{
	int64_t n;

	do {
		if (fn(u->db, age, u->batch, &n) == -1)
			return ERROR_UNAVAILABLE;
	} while (more(u, n));
	return ERROR_NONE;
}

static enum error_word
job_expire(struct run *u)
{
	struct batch_tx t = {STMT_SWEEP_EXPIRE_CODES, "i", u->batch, 0, 0};

	return batches(u, &t);
}

static enum error_word
job_cleanup(struct run *u)
{
	struct svc_config cfg;
	struct session_config sc;
	struct batch_tx t = {STMT_SWEEP_CLEANUP_ABUSE, "ii", 0, u->batch, 0};

	/* Failed attempts older than the gate's window (or the login
	 * throttle's, which shares the table) count for nothing; holds,
	 * permits and admin sessions that ended more than a week ago go. */
	svc_config_defaults(&cfg);
	session_config_defaults(&sc);
	t.a = cfg.abuse_window > sc.login_window ? cfg.abuse_window
						 : sc.login_window;
	if (batches(u, &t) != ERROR_NONE ||
	    each_batch_aged(u, hold_cleanup, SWEEP_KEEP_SECONDS) !=
		ERROR_NONE ||
	    each_batch_aged(u, session_cleanup, SWEEP_KEEP_SECONDS) !=
		ERROR_NONE)
		return ERROR_UNAVAILABLE;
	return each_batch_aged(u, permit_cleanup, SWEEP_KEEP_SECONDS);
}

/* Holds and permits past their TTL: expired, seats and room returned. */
static enum error_word
job_release_leaked(struct run *u)
{
	if (each_batch(u, hold_expire_due) != ERROR_NONE)
		return ERROR_UNAVAILABLE;
	return each_batch(u, permit_expire_due);
}

/* Permits acquired longer than the staleness limit (heartbeats or not)
 * are released. Holds need none: their TTL is at most the limit. */
static enum error_word
job_staleness(struct run *u)
{
	return each_batch_aged(u, permit_release_stale, SWEEP_STALE_SECONDS);
}

/* Webhooks: events fanned out into deliveries, then the due attempts. */
/*
 * A deliver run sends in chunks for about DELIVER_RUN_MS, renewing its
 * lease between chunks, then lets the process's other jobs have their
 * turn: in one sweeper a backlog sent to a slow receiver used to hold up
 * release_leaked for as long as the backlog took (and past the lease, so
 * a second sweeper joined the delivering), leaked seats waiting meanwhile.
 */
#define DELIVER_CHUNK 64
#define DELIVER_RUN_MS 1000

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static enum error_word
job_deliver(struct run *u)
{
	struct webhooks_config cfg;
	struct webhooks_stats st;
	int64_t t0 = mono_ms(), before;

	memset(&st, 0, sizeof(st));
	webhooks_config_defaults(&cfg);
	if (webhooks_enqueue(u->db, 10 * u->batch, &st) == -1)
		return ERROR_UNAVAILABLE;
	do {
		before = st.claimed;
		if (webhooks_deliver_due(u->db, &cfg, DELIVER_CHUNK, &st) == -1)
			return ERROR_UNAVAILABLE;
		u->r->batches++;
	} while (st.claimed - before == DELIVER_CHUNK &&
		 st.claimed < u->batch && mono_ms() - t0 < DELIVER_RUN_MS &&
		 lease_take(u) == 1);
	u->r->done = st.claimed;
	return ERROR_NONE;
}

/* After each batch of a generate job: the sweep lease is still ours. */
static int
generate_renew(void *arg)
{
	return lease_take(arg) == 1;
}

/* The dashboard's bulk generates, each under a lease of its own too. */
static enum error_word
job_generate(struct run *u)
{
	int64_t codes = 0;
	int rc;

	rc = admin_jobs_run(u->db, u->holder, u->lease, SWEEP_BATCHES_MAX,
	    generate_renew, u, &codes);
	u->r->done = codes;
	u->r->batches = (codes + ADMIN_JOB_BATCH - 1) / ADMIN_JOB_BATCH;
	return rc == 0 ? ERROR_NONE : ERROR_UNAVAILABLE;
}

static enum error_word (*const job_fn[SWEEP__MAX])(struct run *) = {
    [SWEEP_EXPIRE] = job_expire,
    [SWEEP_RELEASE_LEAKED] = job_release_leaked,
    [SWEEP_STALENESS] = job_staleness,
    [SWEEP_DELIVER] = job_deliver,
    [SWEEP_CLEANUP] = job_cleanup,
    [SWEEP_GENERATE] = job_generate,
};

enum error_word
sweep_run(
    struct db *db, enum sweep_job j, const char *holder, struct sweep_report *r)
{
	struct run u = {db, j, holder, sweep_lease_seconds(), r, sweep_batch()};
	enum error_word e;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((unsigned)j >= SWEEP__MAX)
		return ERROR_BAD_REQUEST;
	if ((rc = lease_take(&u)) != 1) {
		r->skipped = rc == 0;
		return rc == 0 ? ERROR_NONE : ERROR_UNAVAILABLE;
	}
	e = job_fn[j](&u);
	if (e != ERROR_NONE)
		log_warn("sweep %s: stopped after %lld rows: %s", jobs[j].name,
		    (long long)r->done, db_errmsg(db));
	/* A failed give-back only delays the next run to the lease's end;
	 * a lease lost meanwhile is not ours to give back (holder = us). */
	db_exec(db, STMT_SWEEP_LEASE_DONE, NULL, "itt", r->done, jobs[j].name,
	    holder);
	return e;
}

void
sweep_loop(const char *dsn, volatile sig_atomic_t *stop)
{
	time_t next[SWEEP__MAX] = {0}, now, wake;
	struct sweep_report r;
	struct db *db = NULL;
	char holder[128], msg[256];
	int j;

	sweep_holder(holder, sizeof(holder));
	log_info("redeem-sweep: %s", holder);
	while (!*stop) {
		if (db == NULL &&
		    (db = db_open(dsn, msg, sizeof(msg))) == NULL) {
			log_err("redeem-sweep: database: %s", msg);
			sleep(1);
			continue;
		}
		now = time(NULL);
		wake = now + 60;
		for (j = 0; j < SWEEP__MAX && !*stop; j++) {
			enum sweep_job job = (enum sweep_job)j;

			if (now >= next[j]) {
				if (sweep_run(db, job, holder, &r) !=
				    ERROR_NONE)
					log_warn("redeem-sweep: %s failed",
					    sweep_job_name(job));
				else if (r.done > 0)
					log_info("redeem-sweep: %s: %lld",
					    sweep_job_name(job),
					    (long long)r.done);
				next[j] = time(NULL) + sweep_job_interval(job);
			}
			if (next[j] < wake)
				wake = next[j];
		}
		now = time(NULL);
		if (!*stop && wake > now)
			sleep((unsigned)(wake - now)); /* a signal cuts it */
	}
	if (db != NULL)
		db_close(db);
}
