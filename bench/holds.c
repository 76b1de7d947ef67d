/*
 * Holds: hold_create then hold_confirm, a fresh account each time, on one
 * code with 1e9 seats, against the raw statements of the same two
 * transactions:
 *
 *   BEGIN; claim UPDATE of the code (uses, fence: STMT_HOLD_CLAIM);
 *     INSERT hold; COMMIT
 *   BEGIN; UPDATE hold held -> confirmed; sequence; INSERT redemption;
 *     INSERT code.redeemed event; UPDATE hold's redemption_id; COMMIT
 */
#include <stdio.h>
#include <string.h>

#include "../app/lib/common.h"
#include "../app/core/events.h"
#include "../app/core/holds.h"
#include "bench.h"

#define TTL HOLD_TTL_MAX /* never due while the bench runs */

struct raw_hold {
	const struct bench_code *t;
	const char *xid, *account;
	int64_t hold_id;
};

static int
raw_create_tx(struct db *db, void *arg)
{
	struct raw_hold *h = arg;
	struct db_stmt *st;
	int64_t n, fence;
	int rc;

	rc = db_exec_id(db, STMT_HOLD_CLAIM, &n, &fence, "i", h->t->code_id);
	if (rc != DB_OK)
		return rc;
	if (n != 1)
		return DB_ROLLBACK;
	rc = db_query(db, STMT_HOLD_INSERT, &st, "itiitii", h->t->tenant,
	    h->xid, h->t->code_id, h->t->campaign_id, h->account, fence,
	    (int64_t)TTL);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	h->hold_id = db_col_i64(st, 0);
	db_reset(st);
	return DB_OK;
}

static int
raw_confirm_tx(struct db *db, void *arg)
{
	struct raw_hold *h = arg;
	const struct bench_code *t = h->t;
	char ev[EVENT_ID_LEN + 1], payload[1024];
	int64_t n, seq, rid;
	int rc;

	rc = db_exec_id(
	    db, STMT_HOLD_CONFIRM, &n, NULL, "it", t->tenant, h->xid);
	if (rc != DB_OK)
		return rc;
	if (n != 1)
		return DB_ROLLBACK;
	rc = db_exec_id(db, STMT_SEQ_NEXT, NULL, &seq, "i", t->tenant);
	if (rc != DB_OK)
		return rc;
	rc = db_exec_id(db, STMT_BENCH_RAW_INSERT, NULL, &rid, "iiiti",
	    t->tenant, t->code_id, t->campaign_id, h->account, seq);
	if (rc != DB_OK)
		return rc;
	event_id(ev);
	bench_redemption_json(payload, sizeof(payload), rid, t->code,
	    h->account, t->campaign, seq);
	rc = db_exec_id(db, STMT_EVENT_INSERT, NULL, NULL, "ittnt", t->tenant,
	    ev, "code.redeemed", &rid, payload);
	if (rc != DB_OK)
		return rc;
	return db_exec_id(
	    db, STMT_HOLD_SET_REDEMPTION, NULL, NULL, "ii", rid, h->hold_id);
}

static int
raw_op(struct bench_client *c, int64_t i)
{
	char xid[96], account[128];
	struct raw_hold h;

	snprintf(xid, sizeof(xid), "r%s-%lld-%d-%lld", bench_tag,
	    (long long)c->run, c->idx, (long long)i);
	snprintf(account, sizeof(account), "%s@bench", xid);
	memset(&h, 0, sizeof(h));
	h.t = c->arg;
	h.xid = xid;
	h.account = account;
	if (db_transact(c->db, DB_TX_WRITE, raw_create_tx, &h) != DB_OK)
		return -1;
	return db_transact(c->db, DB_TX_WRITE, raw_confirm_tx, &h) == DB_OK
		   ? 0
		   : -1;
}

static int
svc_op(struct bench_client *c, int64_t i)
{
	const struct bench_code *t = c->arg;
	char xid[96], account[128], client[32];
	struct hold_result hr;
	struct redeem_result rr;

	snprintf(xid, sizeof(xid), "s%s-%lld-%d-%lld", bench_tag,
	    (long long)c->run, c->idx, (long long)i);
	snprintf(account, sizeof(account), "%s@bench", xid);
	snprintf(client, sizeof(client), "10.%d.0.2", c->idx);
	if (hold_create(&c->svc, t->code, account, xid, TTL, client, &hr) !=
		0 ||
	    hr.error != ERROR_NONE || !hr.created)
		return -1;
	if (hold_confirm(&c->svc, xid, &rr, NULL) != 0 ||
	    rr.error != ERROR_NONE || rr.already)
		return -1;
	return 0;
}

void
bench_holds_header(double seconds)
{
	printf("\nHolds: hold_create then hold_confirm, fresh accounts, one "
	       "code with 1e9 seats; %.0f s per cell; one op = the pair.\n"
	       "raw = BEGIN; claim UPDATE; INSERT hold; COMMIT; BEGIN; "
	       "UPDATE hold; sequence; INSERT redemption; INSERT event; "
	       "UPDATE hold; COMMIT.\n"
	       "service = hold_create() (replay read, gate and lookup, "
	       "claim, INSERT ... RETURNING) + hold_confirm() (the flip, "
	       "read, the redemption, its event).\n\n",
	    seconds);
	printf("%-8s %7s %12s %8s %8s %12s %8s %8s %7s %s\n", "engine",
	    "clients", "raw ops/s", "p50 ms", "p99 ms", "service/s", "p50 ms",
	    "p99 ms", "ratio", "(target 0.70)");
	fflush(stdout);
}

void
bench_holds(const struct bench_engine *e, double seconds)
{
	struct bench_result raw, svc;
	struct bench_code t;
	int i;

	bench_code(e->dsn, "holds", &t);
	for (i = 0; i < e->nclients; i++) {
		bench_measure(e->dsn, raw_op, svc_op, &t, e->clients[i],
		    seconds, &raw, &svc);
		bench_row(e->name, NULL, e->clients[i], &raw, &svc);
		bench_record("holds", e->name, "service", svc.rate, "pairs/s",
		    bench_ratio_value(raw.rate, svc.rate), "service/raw",
		    "hold+confirm, %d client%s", e->clients[i],
		    e->clients[i] == 1 ? "" : "s");
	}
}
