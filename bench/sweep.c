/*
 * The sweeper: N holds past their TTL released by one process, through
 * sweep_run(SWEEP_RELEASE_LEAKED) (hold_expire_due in batches of 800),
 * against raw batches of the same statements:
 *
 *   BEGIN; SELECT up to 800 due ids; for each: UPDATE hold held ->
 *     expired; UPDATE code (seat back); INSERT hold.expired event; COMMIT
 *
 * Each side releases N holds in 10 turns, the two sides alternating;
 * before each turn N/10 fresh holds are made straight with the claim's
 * statements (STMT_HOLD_CLAIM, STMT_HOLD_INSERT with a TTL already
 * past), untimed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../app/lib/common.h"
#include "../app/core/events.h"
#include "../app/core/sweep.h"
#include "bench.h"

#define BATCH 800 /* the sweeper's (app/core/sweep.c) */
#define SETUP_BATCH 1000
#define ROUNDS 10 /* turns of each side */

struct make {
	const struct bench_code *t;
	int64_t from, n;
	int pass;
};

static int
make_tx(struct db *db, void *arg)
{
	struct make *m = arg;
	char xid[96];
	int64_t i, n, fence;
	int rc;

	for (i = m->from; i < m->from + m->n; i++) {
		snprintf(xid, sizeof(xid), "w%s-%d-%lld", bench_tag, m->pass,
		    (long long)i);
		rc = db_exec_id(
		    db, STMT_HOLD_CLAIM, &n, &fence, "i", m->t->code_id);
		if (rc != DB_OK)
			return rc;
		if (n != 1)
			return DB_ROLLBACK;
		/* One live hold per account and code: an account each. */
		rc = db_exec_id(db, STMT_HOLD_INSERT, NULL, NULL, "itiitii",
		    m->t->tenant, xid, m->t->code_id, m->t->campaign_id, xid,
		    fence, (int64_t)-60);
		if (rc != DB_OK)
			return rc;
	}
	return DB_OK;
}

/* N holds of code t, expired a minute ago. */
static void
make_holds(struct db *db, const struct bench_code *t, int pass, int64_t n)
{
	struct make m = {t, 0, 0, pass};

	for (m.from = 0; m.from < n; m.from += SETUP_BATCH) {
		m.n = n - m.from < SETUP_BATCH ? n - m.from : SETUP_BATCH;
		if (db_transact(db, DB_TX_WRITE, make_tx, &m) != DB_OK) {
			fprintf(
			    stderr, "bench: making holds: %s\n", db_errmsg(db));
			exit(1);
		}
	}
}

struct raw_batch {
	const struct bench_code *t;
	int64_t ids[BATCH];
	int64_t seen, done;
};

static int
raw_batch_tx(struct db *db, void *arg)
{
	struct raw_batch *w = arg;
	const struct bench_code *t = w->t;
	char ev[EVENT_ID_LEN + 1], payload[1024];
	struct db_stmt *st;
	int64_t i, n;
	int rc;

	w->seen = w->done = 0;
	rc = db_query(db, STMT_HOLD_DUE, &st, "i", (int64_t)BATCH);
	while (rc == DB_ROW) {
		if (w->seen < BATCH)
			w->ids[w->seen++] = db_col_i64(st, 0);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK)
		return rc;
	for (i = 0; i < w->seen; i++) {
		rc = db_exec_id(db, STMT_HOLD_EXPIRE, &n, NULL, "i", w->ids[i]);
		if (rc != DB_OK)
			return rc;
		if (n == 0)
			continue;
		rc = db_exec_id(
		    db, STMT_CODE_RETURN_SEAT, NULL, NULL, "i", t->code_id);
		if (rc != DB_OK)
			return rc;
		/* the service's payload: the hold object */
		event_id(ev);
		snprintf(payload, sizeof(payload),
		    "{\"hold\":{\"external_id\":\"w%s-%lld\",\"state\":"
		    "\"expired\",\"expires_at\":\"2025-01-01T00:00:00Z\","
		    "\"fencing_token\":%lld,\"code\":\"%s\",\"campaign\":"
		    "\"%s\",\"account\":\"sweep@bench\",\"created_at\":"
		    "\"2025-01-01T00:00:00Z\"}}",
		    bench_tag, (long long)w->ids[i], (long long)w->ids[i],
		    t->code, t->campaign);
		rc = db_exec_id(db, STMT_EVENT_INSERT, NULL, NULL, "ittnt",
		    t->tenant, ev, "hold.expired", NULL, payload);
		if (rc != DB_OK)
			return rc;
		w->done++;
	}
	return DB_OK;
}

void
bench_sweep_header(int64_t holds)
{
	printf("\nSweeper: %lld holds past their TTL released by one "
	       "process (held -> expired, seat back, hold.expired event), "
	       "batches of %d,\nin %d turns of each side, alternating.\n"
	       "raw = per batch: BEGIN; SELECT due ids; per hold UPDATE "
	       "hold, UPDATE code, INSERT event; COMMIT.\n"
	       "service = sweep_run(SWEEP_RELEASE_LEAKED): lease, "
	       "hold_expire_due() batches (read back each hold), the "
	       "permits' pass.\n\n",
	    (long long)holds, BATCH, ROUNDS);
	printf("%-8s %9s %13s %8s %13s %8s %7s %s\n", "engine", "holds",
	    "raw holds/s", "s", "service/s", "s", "ratio", "(target 0.70)");
	fflush(stdout);
}

/* One turn of either side over the holds due now: how many it
 * released, and the seconds in *secs. */
static int64_t
raw_turn(struct db *db, struct raw_batch *w, double *secs)
{
	double t0 = bench_now();
	int64_t done = 0;

	do {
		if (db_transact(db, DB_TX_WRITE, raw_batch_tx, w) != DB_OK) {
			fprintf(
			    stderr, "bench: raw sweep: %s\n", db_errmsg(db));
			break;
		}
		done += w->done;
	} while (w->seen == BATCH);
	*secs += bench_now() - t0;
	return done;
}

static int64_t
svc_turn(struct db *db, const char *holder, double *secs)
{
	double t0 = bench_now();
	struct sweep_report rep;

	if (sweep_run(db, SWEEP_RELEASE_LEAKED, holder, &rep) != ERROR_NONE ||
	    rep.skipped)
		fprintf(stderr, "bench: sweep_run failed or skipped\n");
	*secs += bench_now() - t0;
	return rep.done;
}

void
bench_sweep(const struct bench_engine *e, int64_t holds)
{
	struct db *db = bench_open(e->dsn);
	struct raw_batch *w;
	struct bench_code t;
	char holder[128];
	double raw_s = 0, svc_s = 0;
	int64_t raw_done = 0, svc_done = 0, n;
	int round, side;

	bench_code(e->dsn, "sweep", &t);
	sweep_holder(holder, sizeof(holder));
	if ((w = calloc(1, sizeof(*w))) == NULL)
		exit(1);
	w->t = &t;
	/* Each side's holds in ROUNDS turns, the order swapped every
	 * round: both meet the tables at the same sizes on average. */
	for (round = 0; round < ROUNDS; round++) {
		n = holds / ROUNDS + (round < holds % ROUNDS);
		for (side = 0; side < 2; side++) {
			make_holds(db, &t, round * 2 + side, n);
			if ((side + round) % 2 == 0)
				raw_done += raw_turn(db, w, &raw_s);
			else
				svc_done += svc_turn(db, holder, &svc_s);
		}
	}
	free(w);
	db_close(db);
	printf("%-8s %9lld %13.0f %8.1f %13.0f %8.1f ", e->name,
	    (long long)holds, (double)raw_done / raw_s, raw_s,
	    (double)svc_done / svc_s, svc_s);
	bench_ratio((double)raw_done / raw_s, (double)svc_done / svc_s);
	if (raw_done != holds || svc_done != holds)
		printf("         (released: raw %lld, service %lld of %lld)\n",
		    (long long)raw_done, (long long)svc_done, (long long)holds);
	fflush(stdout);
	bench_record("sweeper", e->name, "service", (double)svc_done / svc_s,
	    "holds/s",
	    bench_ratio_value(
		(double)raw_done / raw_s, (double)svc_done / svc_s),
	    "service/raw", "%lld leaked holds released", (long long)holds);
}
