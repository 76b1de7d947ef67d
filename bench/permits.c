/*
 * Permits: permit_acquire then permit_release of one permit (count 1),
 * every client on one hot semaphore or each on its own, against the raw
 * statements of the same two transactions:
 *
 *   BEGIN; conditional UPDATE of the semaphore (room, fence); read it
 *     back (id, token); INSERT permit; INSERT permit item; COMMIT
 *   BEGIN; UPDATE permit acquired -> released; UPDATE semaphore (room
 *     given back); COMMIT
 */
#include <stdio.h>
#include <string.h>

#include "../app/lib/common.h"
#include "../app/core/permits.h"
#include "bench.h"

#define TTL PERMIT_TTL_MAX /* never due while the bench runs */
#define CAPACITY 1000000   /* room for every client at once */
#define SEMAPHORES_MAX 256 /* own semaphores: one per client */

struct target {
	int own; /* 0: every client on the hot semaphore */
	int64_t tenant;
};

static void
sem_name(const struct target *t, int idx, char out[SEMAPHORE_NAME_MAX + 1])
{
	if (t->own)
		snprintf(
		    out, SEMAPHORE_NAME_MAX + 1, "own-%s-%d", bench_tag, idx);
	else
		snprintf(out, SEMAPHORE_NAME_MAX + 1, "hot-%s", bench_tag);
}

struct raw_permit {
	int64_t tenant;
	const char *xid, *owner, *sem;
	int64_t sem_id;
};

static int
raw_acquire_tx(struct db *db, void *arg)
{
	struct raw_permit *p = arg;
	struct db_stmt *st;
	int64_t n, fence, in_use, cap, pid;
	int rc;

	rc = db_exec_id(db, STMT_SEMAPHORE_TAKE, &n, NULL, "iiti", (int64_t)1,
	    p->tenant, p->sem, (int64_t)1);
	if (rc != DB_OK)
		return rc;
	if (n != 1)
		return DB_ROLLBACK;
	rc = db_query(db, STMT_SEMAPHORE_READ, &st, "it", p->tenant, p->sem);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_ROLLBACK : rc;
	p->sem_id = db_col_i64(st, 0);
	fence = db_col_i64(st, 1);
	in_use = db_col_i64(st, 2);
	cap = db_col_i64(st, 3);
	db_reset(st);
	rc = db_query(db, STMT_PERMIT_INSERT, &st, "ittii", p->tenant, p->xid,
	    p->owner, fence, (int64_t)TTL);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	pid = db_col_i64(st, 0);
	db_reset(st);
	return db_exec_id(db, STMT_PERMIT_ITEM_INSERT, NULL, NULL, "iiiiii",
	    pid, p->sem_id, (int64_t)1, fence, in_use, cap);
}

static int
raw_release_tx(struct db *db, void *arg)
{
	struct raw_permit *p = arg;
	int64_t n;
	int rc;

	rc = db_exec_id(
	    db, STMT_PERMIT_RELEASE, &n, NULL, "it", p->tenant, p->xid);
	if (rc != DB_OK)
		return rc;
	if (n != 1)
		return DB_ROLLBACK;
	return db_exec_id(db, STMT_SEMAPHORE_GIVE, &n, NULL, "iii", (int64_t)1,
	    p->sem_id, (int64_t)1);
}

static int
raw_op(struct bench_client *c, int64_t i)
{
	const struct target *t = c->arg;
	char xid[96], owner[32], sem[SEMAPHORE_NAME_MAX + 1];
	struct raw_permit p;

	snprintf(xid, sizeof(xid), "r%s-%lld-%d-%lld", bench_tag,
	    (long long)c->run, c->idx, (long long)i);
	snprintf(owner, sizeof(owner), "client-%d", c->idx);
	sem_name(t, c->idx, sem);
	memset(&p, 0, sizeof(p));
	p.tenant = t->tenant;
	p.xid = xid;
	p.owner = owner;
	p.sem = sem;
	if (db_transact(c->db, DB_TX_WRITE, raw_acquire_tx, &p) != DB_OK)
		return -1;
	return db_transact(c->db, DB_TX_WRITE, raw_release_tx, &p) == DB_OK
		   ? 0
		   : -1;
}

static int
svc_op(struct bench_client *c, int64_t i)
{
	const struct target *t = c->arg;
	char xid[96], owner[32];
	struct permit_item it;
	struct permit_result res;

	snprintf(xid, sizeof(xid), "s%s-%lld-%d-%lld", bench_tag,
	    (long long)c->run, c->idx, (long long)i);
	snprintf(owner, sizeof(owner), "client-%d", c->idx);
	memset(&it, 0, sizeof(it));
	sem_name(t, c->idx, it.name);
	it.count = 1;
	if (permit_acquire(&c->svc, xid, owner, TTL, &it, 1, &res) != 0 ||
	    res.error != ERROR_NONE || !res.created)
		return -1;
	if (permit_release(&c->svc, xid, &res) != 0 ||
	    res.error != ERROR_NONE || res.p.state != PERMIT_RELEASED)
		return -1;
	return 0;
}

void
bench_permits_header(double seconds, const int *clients, int n)
{
	int i;

	printf("\nPermits: permit_acquire then permit_release (count 1), "
	       "every client on one hot semaphore or each on its own; "
	       "%.0f s per cell;\none op = the pair; clients",
	    seconds);
	for (i = 0; i < n; i++)
		printf("%s %d", i ? "," : "", clients[i]);
	printf(" on each engine.\n"
	       "raw = BEGIN; conditional UPDATE semaphore; read it back; "
	       "INSERT permit; INSERT item; COMMIT; BEGIN; UPDATE permit; "
	       "UPDATE semaphore; COMMIT.\n"
	       "service = permit_acquire() (the same, INSERT ... "
	       "RETURNING; a retry is looked for only when refused) + "
	       "permit_release() (the same, read back).\n\n");
	printf("%-8s %-5s %7s %12s %8s %8s %12s %8s %8s %7s %s\n", "engine",
	    "sem", "clients", "raw ops/s", "p50 ms", "p99 ms", "service/s",
	    "p50 ms", "p99 ms", "ratio", "(target 0.70)");
	fflush(stdout);
}

void
bench_permits(
    const struct bench_engine *e, double seconds, const int *clients, int n)
{
	struct bench_result raw, svc;
	struct target t;
	struct semaphore m;
	struct db *db = bench_open(e->dsn);
	struct svc s;
	char name[SEMAPHORE_NAME_MAX + 1];
	int i, k, most = 1;

	bench_svc(db, &s);
	memset(&t, 0, sizeof(t));
	t.tenant = s.tenant_id;
	for (i = 0; i < n; i++)
		if (clients[i] > most)
			most = clients[i];
	if (most > SEMAPHORES_MAX)
		most = SEMAPHORES_MAX;
	for (k = -1; k < most; k++) {
		t.own = k >= 0;
		sem_name(&t, k, name);
		if (semaphore_put(&s, name, CAPACITY, "bench", &m, NULL) !=
		    ERROR_NONE) {
			fprintf(
			    stderr, "bench: semaphore: %s\n", db_errmsg(db));
			return;
		}
	}
	db_close(db);
	for (i = 0; i < n; i++)
		for (t.own = 0; t.own < 2; t.own++) {
			/* one client: its own semaphore is the hot one */
			if (t.own &&
			    (clients[i] == 1 || clients[i] > SEMAPHORES_MAX))
				continue;
			bench_measure(e->dsn, raw_op, svc_op, &t, clients[i],
			    seconds, &raw, &svc);
			bench_row(e->name, t.own ? "own" : "hot", clients[i],
			    &raw, &svc);
			bench_record("permits", e->name, "service", svc.rate,
			    "pairs/s", bench_ratio_value(raw.rate, svc.rate),
			    "service/raw", "%s semaphore, %d client%s",
			    t.own ? "own" : "hot", clients[i],
			    clients[i] == 1 ? "" : "s");
		}
}
