/*
 * Semaphores and permits (app/core/permits.c): capacity changes with
 * their history, all-or-nothing grants over several semaphores, fencing
 * tokens, heartbeats and releases judged by the database clock, the
 * sweeper's batches, verify's G5 and G6, and races of real processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/lib/str.h"
#include "../../app/core/permits.h"
#include "../../app/core/verify.h"
#include "fixture.h"
#include "forkrace.h"

#define TTL 300

static void
sem(const char *name, int64_t capacity)
{
	struct semaphore m;

	ck_assert_int_eq(
	    semaphore_put(&fx.svc, name, capacity, "tester", &m, NULL),
	    ERROR_NONE);
}

static struct semaphore
sem_get(const char *name)
{
	struct semaphore m;

	ck_assert_int_eq(semaphore_get(&fx.svc, name, &m), ERROR_NONE);
	return m;
}

/* Acquires "name:count[,name:count...]". */
static int
acquire(const char *xid, const char *spec, struct permit_result *res)
{
	struct permit_item items[PERMIT_ITEMS_MAX];
	char buf[256], *save = NULL, *tok, *colon;
	int n = 0, rc;

	snprintf(buf, sizeof(buf), "%s", spec);
	memset(items, 0, sizeof(items));
	for (tok = strtok_r(buf, ",", &save); tok != NULL && n < 16;
	     tok = strtok_r(NULL, ",", &save)) {
		colon = strchr(tok, ':');
		ck_assert_ptr_nonnull(colon);
		*colon = '\0';
		snprintf(items[n].name, sizeof(items[n].name), "%s", tok);
		items[n].count = strtoll(colon + 1, NULL, 10);
		n++;
	}
	rc = permit_acquire(&fx.svc, xid, "owner-1", TTL, items, n, res);
	ck_assert_int_eq(rc, 0);
	return res->error;
}

static void
acquire_ok(const char *xid, const char *spec, struct permit_result *res)
{
	ck_assert_msg(acquire(xid, spec, res) == ERROR_NONE,
	    "acquire %s %s: %s", xid, spec, error_name(res->error));
}

static enum permit_state
release_state(const char *xid)
{
	struct permit_result res;

	ck_assert_int_eq(permit_release(&fx.svc, xid, &res), 0);
	ck_assert_msg(res.error == ERROR_NONE, "release %s: %s", xid,
	    error_name(res.error));
	return res.p.state;
}

struct hist {
	int n;
	char who[4][32];
	int64_t at[4], from[4], to[4];
};

static void
on_hist(void *arg, const char *who, int64_t at, int64_t from, int64_t to)
{
	struct hist *h = arg;

	if (h->n < 4) {
		snprintf(h->who[h->n], sizeof(h->who[h->n]), "%s", who);
		h->at[h->n] = at;
		h->from[h->n] = from;
		h->to[h->n] = to;
	}
	h->n++;
}

START_TEST(test_permits_semaphore_put_and_history)
{
	struct semaphore m;
	struct hist h;
	int created;
	time_t now = time(NULL);

	ck_assert_int_eq(
	    semaphore_put(&fx.svc, "backup", 3, "ops@x", &m, &created),
	    ERROR_NONE);
	ck_assert_int_eq(created, 1);
	ck_assert_str_eq(m.name, "backup");
	ck_assert_int_eq(m.capacity, 3);
	ck_assert_int_eq(m.in_use, 0);
	ck_assert_int_eq(m.leaked, 0);
	ck_assert_int_eq(
	    semaphore_put(&fx.svc, "backup", 5, "key:ci", &m, &created),
	    ERROR_NONE);
	ck_assert_int_eq(created, 0);
	ck_assert_int_eq(m.capacity, 5);
	/* The same capacity again changes nothing and records nothing. */
	ck_assert_int_eq(
	    semaphore_put(&fx.svc, "backup", 5, "key:ci", &m, NULL),
	    ERROR_NONE);
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(
	    semaphore_history(&fx.svc, "backup", on_hist, &h), ERROR_NONE);
	ck_assert_int_eq(h.n, 2);
	ck_assert_str_eq(h.who[0], "ops@x");
	ck_assert_int_eq(h.from[0], -1);
	ck_assert_int_eq(h.to[0], 3);
	ck_assert_str_eq(h.who[1], "key:ci");
	ck_assert_int_eq(h.from[1], 3);
	ck_assert_int_eq(h.to[1], 5);
	ck_assert_int_ge(h.at[1], (int64_t)now - 5);
	ck_assert_int_le(h.at[1], (int64_t)time(NULL) + 5);
	ck_assert_int_eq(
	    semaphore_history(&fx.svc, "nope", on_hist, &h), ERROR_NOT_FOUND);
	ck_assert_int_eq(semaphore_get(&fx.svc, "nope", &m), ERROR_NOT_FOUND);
	ck_assert_int_eq(
	    semaphore_get(&fx.svc, "bad name", &m), ERROR_NOT_FOUND);
	/* Capacity 0 is allowed: it admits nobody. */
	ck_assert_int_eq(
	    semaphore_put(&fx.svc, "zero", 0, "ops@x", &m, NULL), ERROR_NONE);
}
END_TEST

START_TEST(test_permits_semaphore_put_bad_request)
{
	static const struct {
		const char *name, *who;
		int64_t capacity;
	} bad[] = {
	    {NULL, "w", 1},
	    {"", "w", 1},
	    {"has space", "w", 1},
	    {"slash/x", "w", 1},
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	     "a",
		"w", 1},
	    {"ok", "w", -1},
	    {"ok", "w", SEMAPHORE_CAPACITY_MAX + 1},
	    {"ok", NULL, 1},
	    {"ok", "", 1},
	    {"ok", "bad\x01", 1},
	    {"ok", "\xff", 1},
	};
	struct semaphore m;
	size_t i;

	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(
		    semaphore_put(&fx.svc, bad[i].name, bad[i].capacity,
			bad[i].who, &m, NULL) == ERROR_BAD_REQUEST,
		    "case %zu", i);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM semaphores"), 0);
}
END_TEST

START_TEST(test_permits_acquire_release)
{
	struct permit_result a, b, c;
	time_t now = time(NULL);

	sem("A", 3);
	acquire_ok("p-1", "A:2", &a);
	ck_assert_int_eq(a.created, 1);
	ck_assert_int_eq(a.p.state, PERMIT_ACQUIRED);
	ck_assert_str_eq(a.p.external_id, "p-1");
	ck_assert_str_eq(a.p.owner, "owner-1");
	ck_assert_int_eq(a.p.fencing_token, 1);
	ck_assert_int_eq(a.p.nitems, 1);
	ck_assert_str_eq(a.p.items[0].name, "A");
	ck_assert_int_eq(a.p.items[0].count, 2);
	ck_assert_int_eq(a.p.items[0].fencing_token, 1);
	ck_assert_int_ge(a.p.expires_at, (int64_t)now + TTL - 5);
	ck_assert_int_le(a.p.expires_at, (int64_t)now + TTL + 5);
	ck_assert_int_eq(sem_get("A").in_use, 2);
	ck_assert_int_eq(acquire("p-2", "A:2", &b), ERROR_EXHAUSTED);
	ck_assert_str_eq(b.semaphore, "A");
	acquire_ok("p-3", "A:1", &c);
	ck_assert_int_eq(c.p.fencing_token, 2);
	ck_assert_int_eq(sem_get("A").in_use, 3);
	fx_verify_clean();
	ck_assert_int_eq(release_state("p-1"), PERMIT_RELEASED);
	ck_assert_int_eq(sem_get("A").in_use, 1);
	/* Idempotent: the room goes back once. */
	ck_assert_int_eq(release_state("p-1"), PERMIT_RELEASED);
	ck_assert_int_eq(sem_get("A").in_use, 1);
	ck_assert_int_eq(permit_release(&fx.svc, "p-9", &a), 0);
	ck_assert_int_eq(a.error, ERROR_NOT_FOUND);
	acquire_ok("p-2", "A:2", &b);
	ck_assert_int_eq(b.p.fencing_token, 3);
	fx_verify_clean();
}
END_TEST

START_TEST(test_permits_acquire_replay_and_conflict)
{
	struct permit_item items[2];
	struct permit_result a, b;

	sem("A", 3);
	sem("B", 3);
	acquire_ok("p-1", "B:1,A:2", &a);
	/* The same request, in any order of its items: the same permit. */
	acquire_ok("p-1", "A:2,B:1", &b);
	ck_assert_int_eq(b.created, 0);
	ck_assert_int_eq(b.p.id, a.p.id);
	ck_assert_int_eq(b.p.fencing_token, a.p.fencing_token);
	ck_assert_int_eq(sem_get("A").in_use, 2);
	ck_assert_int_eq(acquire("p-1", "A:1,B:1", &b), ERROR_CONFLICT);
	ck_assert_int_eq(acquire("p-1", "A:2", &b), ERROR_CONFLICT);
	memset(items, 0, sizeof(items));
	snprintf(items[0].name, sizeof(items[0].name), "A");
	items[0].count = 2;
	snprintf(items[1].name, sizeof(items[1].name), "B");
	items[1].count = 1;
	ck_assert_int_eq(
	    permit_acquire(&fx.svc, "p-1", "someone-else", TTL, items, 2, &b),
	    0);
	ck_assert_int_eq(b.error, ERROR_CONFLICT);
	/* After release the same request answers the released permit. */
	ck_assert_int_eq(release_state("p-1"), PERMIT_RELEASED);
	acquire_ok("p-1", "A:2,B:1", &b);
	ck_assert_int_eq(b.created, 0);
	ck_assert_int_eq(b.p.state, PERMIT_RELEASED);
	ck_assert_int_eq(sem_get("A").in_use, 0);
	ck_assert_int_eq(sem_get("B").in_use, 0);
	fx_verify_clean();
}
END_TEST

/* Items are taken in name order; the permit's token is its first
 * semaphore's, each semaphore keeps its own counter. */
START_TEST(test_permits_sorted_items_and_tokens)
{
	struct permit_result a, b;

	sem("alpha", 5);
	sem("beta", 5);
	acquire_ok("p-0", "beta:1", &a);
	acquire_ok("p-1", "beta:2,alpha:1", &a);
	ck_assert_int_eq(a.p.nitems, 2);
	ck_assert_str_eq(a.p.items[0].name, "alpha");
	ck_assert_int_eq(a.p.items[0].count, 1);
	ck_assert_int_eq(a.p.items[0].fencing_token, 1);
	ck_assert_str_eq(a.p.items[1].name, "beta");
	ck_assert_int_eq(a.p.items[1].count, 2);
	ck_assert_int_eq(a.p.items[1].fencing_token, 2);
	ck_assert_int_eq(a.p.fencing_token, 1);
	ck_assert_int_eq(release_state("p-1"), PERMIT_RELEASED);
	acquire_ok("p-2", "alpha:1", &b);
	ck_assert_int_eq(b.p.fencing_token, 2); /* never reused */
	ck_assert_int_eq(sem_get("alpha").fence, 2);
	ck_assert_int_eq(sem_get("beta").fence, 2);
	fx_verify_clean();
}
END_TEST

/* One full semaphore refuses the whole request: nothing is taken, no
 * token is spent. */
START_TEST(test_permits_all_or_nothing)
{
	struct permit_result a, b;

	sem("A", 5);
	sem("B", 1);
	sem("C", 5);
	acquire_ok("p-1", "B:1", &a);
	ck_assert_int_eq(acquire("p-2", "A:2,B:1,C:1", &b), ERROR_EXHAUSTED);
	ck_assert_str_eq(b.semaphore, "B");
	ck_assert_int_eq(sem_get("A").in_use, 0);
	ck_assert_int_eq(sem_get("A").fence, 0);
	ck_assert_int_eq(sem_get("C").in_use, 0);
	ck_assert_int_eq(acquire("p-2", "A:2,Z:1", &b), ERROR_NOT_FOUND);
	ck_assert_str_eq(b.semaphore, "Z");
	ck_assert_int_eq(acquire("p-2", "A:6", &b), ERROR_EXHAUSTED);
	ck_assert_int_eq(sem_get("A").in_use, 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM permits"), 1);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM permit_items"), 1);
	acquire_ok("p-2", "A:2,C:1", &b);
	ck_assert_int_eq(b.p.fencing_token, 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_permits_acquire_bad_request)
{
	struct permit_item it[PERMIT_ITEMS_MAX + 1];
	struct permit_result res;
	char longid[PERMIT_ID_MAX + 2], owner[PERMIT_OWNER_MAX + 2];
	int i;

	sem("A", 5);
	memset(it, 0, sizeof(it));
	for (i = 0; i <= PERMIT_ITEMS_MAX; i++) {
		snprintf(it[i].name, sizeof(it[i].name), "S%d", i);
		it[i].count = 1;
	}
	snprintf(it[0].name, sizeof(it[0].name), "A");
#define BAD(xid, own, ttl, items, n)                                           \
	do {                                                                   \
		ck_assert_int_eq(                                              \
		    permit_acquire(&fx.svc, xid, own, ttl, items, n, &res),    \
		    0);                                                        \
		ck_assert_msg(res.error == ERROR_BAD_REQUEST, "line %d: %s",   \
		    __LINE__, error_name(res.error));                          \
	} while (0)
	BAD(NULL, "o", TTL, it, 1);
	BAD("", "o", TTL, it, 1);
	BAD("a b", "o", TTL, it, 1);
	BAD("a/b", "o", TTL, it, 1);
	BAD("x", NULL, TTL, it, 1);
	BAD("x", "", TTL, it, 1);
	BAD("x", "bad\x01", TTL, it, 1);
	BAD("x", "\xc3", TTL, it, 1);
	BAD("x", "o", 0, it, 1);
	BAD("x", "o", PERMIT_TTL_MAX + 1, it, 1);
	BAD("x", "o", TTL, NULL, 1);
	BAD("x", "o", TTL, it, 0);
	BAD("x", "o", TTL, it, PERMIT_ITEMS_MAX + 1);
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	BAD(longid, "o", TTL, it, 1);
	memset(owner, 'o', sizeof(owner) - 1);
	owner[sizeof(owner) - 1] = '\0';
	BAD("x", owner, TTL, it, 1);
	it[1].count = 0;
	BAD("x", "o", TTL, it, 2);
	it[1].count = -3;
	BAD("x", "o", TTL, it, 2);
	it[1].count = 1;
	snprintf(it[1].name, sizeof(it[1].name), "A"); /* named twice */
	BAD("x", "o", TTL, it, 2);
	snprintf(it[1].name, sizeof(it[1].name), "bad name");
	BAD("x", "o", TTL, it, 2);
#undef BAD
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM permits"), 0);
	ck_assert_int_eq(sem_get("A").in_use, 0);
}
END_TEST

START_TEST(test_permits_heartbeat)
{
	struct permit_result a, h;
	time_t now = time(NULL);

	sem("A", 2);
	acquire_ok("p-1", "A:1", &a);
	ck_assert_int_eq(permit_heartbeat(&fx.svc, "p-1", 3600, &h), 0);
	ck_assert_int_eq(h.error, ERROR_NONE);
	ck_assert_int_eq(h.p.state, PERMIT_ACQUIRED);
	ck_assert_int_ge(h.p.expires_at, (int64_t)now + 3600 - 5);
	ck_assert_int_le(h.p.expires_at, (int64_t)time(NULL) + 3600 + 5);
	ck_assert_int_eq(h.p.fencing_token, a.p.fencing_token);
	ck_assert_int_eq(permit_heartbeat(&fx.svc, "p-1", 0, &h), 0);
	ck_assert_int_eq(h.error, ERROR_BAD_REQUEST);
	ck_assert_int_eq(permit_heartbeat(&fx.svc, "p-9", 60, &h), 0);
	ck_assert_int_eq(h.error, ERROR_NOT_FOUND);
	/* A lease past its expires_at is lost, swept or not. */
	fx_lapse("permits", "p-1");
	ck_assert_int_eq(permit_get(&fx.svc, "p-1", &h), 0);
	ck_assert_int_eq(h.p.state, PERMIT_EXPIRED);
	ck_assert_int_eq(sem_get("A").leaked, 1);
	ck_assert_int_eq(permit_heartbeat(&fx.svc, "p-1", 60, &h), 0);
	ck_assert_int_eq(h.error, ERROR_EXPIRED);
	ck_assert_int_eq(sem_get("A").in_use, 0); /* taken back now */
	ck_assert_int_eq(sem_get("A").leaked, 0);
	ck_assert_int_eq(permit_get(&fx.svc, "p-1", &h), 0);
	ck_assert_int_eq(h.p.state, PERMIT_EXPIRED);
	ck_assert_int_gt(h.p.ended_at, 0);
	fx_verify_clean();
	/* Released: a heartbeat is refused too. */
	acquire_ok("p-2", "A:1", &a);
	ck_assert_int_eq(release_state("p-2"), PERMIT_RELEASED);
	ck_assert_int_eq(permit_heartbeat(&fx.svc, "p-2", 60, &h), 0);
	ck_assert_int_eq(h.error, ERROR_EXPIRED);
	ck_assert_int_eq(sem_get("A").in_use, 0);
	fx_verify_clean();
}
END_TEST

/* Release after the TTL says expired, swept or not, and gives the room
 * back once. */
START_TEST(test_permits_release_after_expiry)
{
	struct permit_result a;
	int64_t done;

	sem("A", 2);
	acquire_ok("p-1", "A:1", &a);
	acquire_ok("p-2", "A:1", &a);
	fx_lapse("permits", "p-1");
	fx_lapse("permits", "p-2");
	ck_assert_int_eq(release_state("p-1"), PERMIT_EXPIRED);
	ck_assert_int_eq(sem_get("A").in_use, 1);
	ck_assert_int_eq(release_state("p-1"), PERMIT_EXPIRED);
	ck_assert_int_eq(sem_get("A").in_use, 1);
	ck_assert_int_eq(permit_expire_due(fx.db, 10, &done), 0);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(release_state("p-2"), PERMIT_EXPIRED);
	ck_assert_int_eq(sem_get("A").in_use, 0);
	fx_verify_clean();
}
END_TEST

/* A capacity lowered below in_use is allowed and admits nobody until
 * enough permits are released. */
START_TEST(test_permits_capacity_lowered)
{
	struct permit_result a;
	struct semaphore m;

	sem("A", 3);
	acquire_ok("p-1", "A:1", &a);
	acquire_ok("p-2", "A:1", &a);
	acquire_ok("p-3", "A:1", &a);
	ck_assert_int_eq(
	    semaphore_put(&fx.svc, "A", 1, "ops@x", &m, NULL), ERROR_NONE);
	ck_assert_int_eq(m.capacity, 1);
	ck_assert_int_eq(m.in_use, 3);
	fx_verify_clean(); /* allowed: no grant went past its capacity */
	ck_assert_int_eq(acquire("p-4", "A:1", &a), ERROR_EXHAUSTED);
	ck_assert_int_eq(release_state("p-1"), PERMIT_RELEASED);
	ck_assert_int_eq(release_state("p-2"), PERMIT_RELEASED);
	ck_assert_int_eq(acquire("p-4", "A:1", &a), ERROR_EXHAUSTED);
	ck_assert_int_eq(release_state("p-3"), PERMIT_RELEASED);
	acquire_ok("p-4", "A:1", &a);
	ck_assert_int_eq(acquire("p-5", "A:1", &a), ERROR_EXHAUSTED);
	fx_verify_clean();
}
END_TEST

START_TEST(test_permits_expire_due_batches)
{
	struct permit_result a;
	char xid[16];
	int64_t done, total = 0;
	int i;

	sem("A", 10);
	sem("B", 10);
	for (i = 0; i < 7; i++) {
		snprintf(xid, sizeof(xid), "p-%d", i);
		acquire_ok(xid, i % 2 ? "A:1,B:2" : "A:1", &a);
	}
	ck_assert_int_eq(release_state("p-0"), PERMIT_RELEASED);
	for (i = 0; i < 6; i++) { /* p-6 stays live */
		snprintf(xid, sizeof(xid), "p-%d", i);
		fx_lapse("permits", xid);
	}
	ck_assert_int_eq(sem_get("A").leaked, 5);
	ck_assert_int_eq(sem_get("B").leaked, 3);
	ck_assert_int_eq(permit_expire_due(fx.db, 0, &done), -1);
	ck_assert_int_eq(
	    permit_expire_due(fx.db, PERMIT_EXPIRE_MAX + 1, &done), -1);
	ck_assert_int_eq(permit_expire_due(fx.db, 2, &done), 0);
	ck_assert_int_eq(done, 2);
	total += done;
	fx_verify_clean();
	ck_assert_int_eq(permit_expire_due(fx.db, 2, &done), 0);
	total += done;
	ck_assert_int_eq(permit_expire_due(fx.db, 2, &done), 0);
	ck_assert_int_eq(done, 1);
	total += done;
	ck_assert_int_eq(permit_expire_due(fx.db, 2, &done), 0);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(total, 5);
	ck_assert_int_eq(sem_get("A").in_use, 1);
	ck_assert_int_eq(sem_get("A").leaked, 0);
	ck_assert_int_eq(sem_get("B").in_use, 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM permits WHERE state "
				  "= 'expired' AND ended_at IS NOT NULL"),
	    5);
	ck_assert_int_eq(permit_get(&fx.svc, "p-0", &a), 0);
	ck_assert_int_eq(a.p.state, PERMIT_RELEASED);
	ck_assert_int_eq(permit_get(&fx.svc, "p-6", &a), 0);
	ck_assert_int_eq(a.p.state, PERMIT_ACQUIRED);
	fx_verify_clean();
}
END_TEST

/* The staleness job releases what was granted too long ago, however
 * often its lease was renewed. */
START_TEST(test_permits_release_stale)
{
	struct permit_result a;
	int64_t done;

	sem("A", 3);
	acquire_ok("p-1", "A:1", &a);
	acquire_ok("p-2", "A:2", &a);
	fx_sql("UPDATE permits SET created_at = UNIX_TIMESTAMP() - 90000 "
	       "WHERE external_id = 'p-1'");
	ck_assert_int_eq(permit_heartbeat(&fx.svc, "p-1", 600, &a), 0);
	ck_assert_int_eq(a.error, ERROR_NONE);
	ck_assert_int_eq(permit_release_stale(fx.db, 0, 10, &done), -1);
	ck_assert_int_eq(permit_release_stale(fx.db, 86400, 10, &done), 0);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(permit_release_stale(fx.db, 86400, 10, &done), 0);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(permit_get(&fx.svc, "p-1", &a), 0);
	ck_assert_int_eq(a.p.state, PERMIT_RELEASED);
	ck_assert_int_eq(permit_get(&fx.svc, "p-2", &a), 0);
	ck_assert_int_eq(a.p.state, PERMIT_ACQUIRED);
	ck_assert_int_eq(sem_get("A").in_use, 2);
	ck_assert_int_eq(permit_heartbeat(&fx.svc, "p-1", 600, &a), 0);
	ck_assert_int_eq(a.error, ERROR_EXPIRED);
	fx_verify_clean();
}
END_TEST

START_TEST(test_permits_cleanup)
{
	struct permit_result a;
	int64_t done;

	sem("A", 5);
	sem("B", 5);
	acquire_ok("p-1", "A:1,B:1", &a);
	acquire_ok("p-2", "A:1", &a);
	acquire_ok("p-3", "A:1", &a);
	ck_assert_int_eq(release_state("p-1"), PERMIT_RELEASED);
	fx_lapse("permits", "p-2");
	ck_assert_int_eq(permit_expire_due(fx.db, 10, &done), 0);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(permit_cleanup(fx.db, 3600, 10, &done), 0);
	ck_assert_int_eq(done, 0);
	fx_sql("UPDATE permits SET ended_at = UNIX_TIMESTAMP() - 8 * 86400 "
	       "WHERE ended_at IS NOT NULL");
	ck_assert_int_eq(permit_cleanup(fx.db, 7 * 86400, 0, &done), -1);
	ck_assert_int_eq(permit_cleanup(fx.db, 7 * 86400, 10, &done), 0);
	ck_assert_int_eq(done, 2);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM permits"), 1);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM permit_items"), 1);
	ck_assert_int_eq(permit_get(&fx.svc, "p-1", &a), 0);
	ck_assert_int_eq(a.error, ERROR_NOT_FOUND);
	acquire_ok("p-1", "B:1", &a);
	ck_assert_int_eq(a.created, 1);
	ck_assert_int_eq(sem_get("A").in_use, 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_permits_json)
{
	struct permit_result a, b;
	struct semaphore m;
	char exp[32];
	json_t *o, *p, *arr;

	sem("A", 3);
	sem("B", 3);
	acquire_ok("p-1", "B:2,A:1", &a);
	o = permit_result_json(&a);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_true(json_object_get(o, "ok")));
	p = json_object_get(o, "permit");
	ck_assert_str_eq(
	    json_string_value(json_object_get(p, "external_id")), "p-1");
	ck_assert_str_eq(
	    json_string_value(json_object_get(p, "state")), "acquired");
	ck_assert(json_is_integer(json_object_get(p, "fencing_token")));
	str_rfc3339(a.p.expires_at, exp);
	ck_assert_str_eq(
	    json_string_value(json_object_get(p, "expires_at")), exp);
	arr = json_object_get(p, "semaphores");
	ck_assert_int_eq(json_array_size(arr), 2);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_array_get(arr, 0), "name")),
	    "A");
	json_decref(o);
	ck_assert_int_eq(acquire("p-2", "B:2", &b), ERROR_EXHAUSTED);
	o = permit_result_json(&b);
	ck_assert(json_is_false(json_object_get(o, "ok")));
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "error")), "exhausted");
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "semaphore")), "B");
	json_decref(o);
	m = sem_get("B");
	o = semaphore_json(&m);
	ck_assert_str_eq(json_string_value(json_object_get(o, "name")), "B");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "capacity")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "in_use")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "leaked")), 0);
	json_decref(o);
	ck_assert_str_eq(permit_state_name(PERMIT_EXPIRED), "expired");
	ck_assert_str_eq(permit_state_name(PERMIT__MAX), "");
}
END_TEST

START_TEST(test_permits_tenant_scoped)
{
	struct permit_result a;
	struct semaphore m;
	struct svc o;

	sem("A", 1);
	acquire_ok("p-1", "A:1", &a);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&o, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(semaphore_get(&o, "A", &m), ERROR_NOT_FOUND);
	ck_assert_int_eq(permit_get(&o, "p-1", &a), 0);
	ck_assert_int_eq(a.error, ERROR_NOT_FOUND);
	ck_assert_int_eq(semaphore_put(&o, "A", 1, "w", &m, NULL), ERROR_NONE);
	ck_assert_int_eq(m.in_use, 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_permits_verify_catches_g5)
{
	struct permit_result a;

	sem("A", 3);
	acquire_ok("p-1", "A:2", &a);
	fx_verify_clean();
	fx_sql("UPDATE semaphores SET in_use = 1");
	fx_verify_only(VERIFY_G5_CAPACITY, 1);
	fx_sql("UPDATE semaphores SET in_use = 2");
	fx_sql("UPDATE permits SET state = 'released'");
	fx_verify_only(VERIFY_G5_CAPACITY, 1);
	fx_sql("UPDATE permits SET state = 'acquired'");
	fx_verify_clean();
	fx_sql("UPDATE permit_items SET in_use_after = 4");
	fx_verify_only(VERIFY_G5_GRANTS, 1);
}
END_TEST

START_TEST(test_permits_verify_catches_g6)
{
	struct permit_result a;

	sem("A", 5);
	acquire_ok("p-1", "A:1", &a);
	acquire_ok("p-2", "A:1", &a);
	acquire_ok("p-3", "A:1", &a);
	fx_verify_clean();
	fx_sql("UPDATE permit_items SET fencing_token = 1 WHERE fencing_token "
	       "= 2");
	fx_verify_only(VERIFY_G6_FENCING, 1);
	fx_sql("UPDATE permit_items SET fencing_token = 2 WHERE permit_id = "
	       "(SELECT id FROM permits WHERE external_id = 'p-2')");
	fx_verify_clean();
	fx_sql("UPDATE semaphores SET fence = 1");
	fx_verify_only(VERIFY_G6_FENCING, 2);
	fx_sql("UPDATE semaphores SET fence = 3");
	fx_sql("UPDATE permit_items SET created_at = created_at - 100 WHERE "
	       "fencing_token = 3");
	fx_verify_only(VERIFY_G6_FENCING, 1);
}
END_TEST

/* --- races ------------------------------------------------------------- */

enum { K_ACQUIRE, K_RELEASE };

static void
emit(struct fr *r, int child, int kind, int rc, const struct permit_result *p)
{
	struct fr_rec x;
	int i;

	fr_rec_init(&x, child, kind, rc, (int)p->error);
	x.flag = p->created;
	x.a = p->p.fencing_token;
	x.b = p->p.nitems;
	for (i = 0; i < p->p.nitems && i < 2; i++)
		x.c += p->p.items[i].count << (16 * i);
	snprintf(x.s, sizeof(x.s), "%s", p->semaphore);
	fr_emit(r, &x);
}

static int
acquire_in(struct svc *svc, const char *xid, const char *a, int64_t na,
    const char *b, int64_t nb, struct permit_result *res)
{
	struct permit_item it[2];

	memset(it, 0, sizeof(it));
	snprintf(it[0].name, sizeof(it[0].name), "%s", a);
	it[0].count = na;
	if (b != NULL) {
		snprintf(it[1].name, sizeof(it[1].name), "%s", b);
		it[1].count = nb;
	}
	return permit_acquire(svc, xid, "racer", TTL, it, b ? 2 : 1, res);
}

/* 32 processes, one permit each, on one semaphore of capacity 5. */
static void
fn_capacity(struct fr *r, struct svc *svc, int child)
{
	struct permit_result res;
	char xid[32];
	int rc;

	snprintf(xid, sizeof(xid), "c%d-r%d", child, r->round);
	rc = acquire_in(svc, xid, r->arg, 1, NULL, 0, &res);
	emit(r, child, K_ACQUIRE, rc, &res);
}

START_TEST(test_permits_race_capacity_32)
{
	struct fr r = {0};
	struct permit_result res;
	char name[32], xid[32];
	int i, round, ok;

	r.name = "permits_capacity";
	r.fn = fn_capacity;
	r.nchildren = 32;
	r.rounds = fr_rounds(20);
	r.arg = name;
	for (round = 0; round < r.rounds; round++) {
		r.round = round;
		snprintf(name, sizeof(name), "s%d", round);
		sem(name, 5);
		fr_round(&r);
		ck_assert_int_eq(r.nrecs, 32);
		for (ok = 0, i = 0; i < r.nrecs; i++) {
			const struct fr_rec *x = &r.recs[i];

			ck_assert_msg(
			    x->rc == 0 && (x->error == ERROR_NONE ||
					      x->error == ERROR_EXHAUSTED),
			    "round %d: child %d: rc %d, %s", round, x->child,
			    x->rc, error_name((enum error_word)x->error));
			if (x->error == ERROR_NONE) {
				ck_assert_int_eq(x->flag, 1);
				ok++;
			} else {
				ck_assert_str_eq(x->s, name);
			}
		}
		ck_assert_int_eq(ok, 5);
		ck_assert_int_eq(sem_get(name).in_use, 5);
		fx_verify_clean();
		for (i = 0; i < 32; i++) {
			snprintf(xid, sizeof(xid), "c%d-r%d", i, round);
			ck_assert_int_eq(permit_release(&fx.svc, xid, &res), 0);
		}
		ck_assert_int_eq(sem_get(name).in_use, 0);
		fx_verify_clean();
	}
}
END_TEST

/*
 * Two semaphores named in opposite orders by alternate children, with
 * counts that do not all fit, and a few children on one of them only:
 * no deadlock surfaces (the locks go in name order), every grant has all
 * its items, and in_use is exactly what the grants took.
 */
static void
fn_orders(struct fr *r, struct svc *svc, int child)
{
	struct permit_result res;
	char xid[32];
	int rc, k;

	for (k = 0; k < 2; k++) {
		snprintf(xid, sizeof(xid), "o%d-%d-r%d", child, k, r->round);
		if (child >= 12)
			rc = acquire_in(svc, xid, "A", 1, NULL, 0, &res);
		else if (child % 2 == 0)
			rc = acquire_in(svc, xid, "A", 1, "B", 2, &res);
		else
			rc = acquire_in(svc, xid, "B", 2, "A", 1, &res);
		emit(r, child, K_ACQUIRE, rc, &res);
		if (rc == 0 && res.error == ERROR_NONE && k == 0 &&
		    child % 3 == 0) {
			rc = permit_release(svc, xid, &res);
			emit(r, child, K_RELEASE, rc, &res);
		}
	}
}

START_TEST(test_permits_race_opposite_orders)
{
	struct fr r = {0};
	struct semaphore m;
	int i, round, both, one;
	int64_t a_used, b_used;

	r.name = "permits_orders";
	r.fn = fn_orders;
	r.nchildren = 16;
	r.rounds = fr_rounds(20);
	for (round = 0; round < r.rounds; round++) {
		r.round = round;
		fx_sql("DELETE FROM permit_items");
		fx_sql("DELETE FROM permits");
		fx_sql("UPDATE semaphores SET in_use = 0");
		sem("A", 9);
		sem("B", 10);
		fr_round(&r);
		both = one = 0;
		a_used = b_used = 0;
		for (i = 0; i < r.nrecs; i++) {
			const struct fr_rec *x = &r.recs[i];
			int pair = x->child < 12;

			ck_assert_msg(
			    x->rc == 0 && (x->error == ERROR_NONE ||
					      x->error == ERROR_EXHAUSTED),
			    "round %d: child %d: rc %d, %s", round, x->child,
			    x->rc, error_name((enum error_word)x->error));
			if (x->error != ERROR_NONE) {
				ck_assert(strcmp(x->s, "A") == 0 ||
					  strcmp(x->s, "B") == 0);
				continue;
			}
			if (x->kind == K_RELEASE) {
				a_used -= 1;
				b_used -= pair ? 2 : 0;
				continue;
			}
			/* All of it: A:1 then B:2, in name order. */
			ck_assert_int_eq(x->b, pair ? 2 : 1);
			ck_assert_int_eq(x->c, pair ? 1 + (2 << 16) : 1);
			if (pair)
				both++;
			else
				one++;
			a_used += 1;
			b_used += pair ? 2 : 0;
		}
		ck_assert_int_gt(both, 0);
		m = sem_get("A");
		ck_assert_int_eq(m.in_use, a_used);
		ck_assert_int_le(m.in_use, 9);
		m = sem_get("B");
		ck_assert_int_eq(m.in_use, b_used);
		ck_assert_int_le(m.in_use, 10);
		fx_verify_clean();
	}
}
END_TEST

/* A semaphore of capacity 1: each child takes it, reports its token
 * while holding it, releases; the pipe's order is the grant order, so
 * the tokens must rise strictly. */
static void
fn_fence(struct fr *r, struct svc *svc, int child)
{
	struct permit_result res, rel;
	struct timespec ts = {0, 200000};
	char xid[32];
	int got = 0, tries = 0, rc;

	while (got < 3 && tries++ < 20000) {
		snprintf(xid, sizeof(xid), "f%d-%d-r%d", child, got, r->round);
		rc = acquire_in(svc, xid, r->arg, 1, NULL, 0, &res);
		if (rc == 0 && res.error == ERROR_EXHAUSTED) {
			nanosleep(&ts, NULL);
			continue;
		}
		emit(r, child, K_ACQUIRE, rc, &res);
		if (rc != 0 || res.error != ERROR_NONE)
			return;
		rc = permit_release(svc, xid, &rel);
		if (rc != 0 || rel.error != ERROR_NONE)
			return;
		got++;
	}
}

START_TEST(test_permits_race_fencing_grant_order)
{
	struct fr r = {0};
	char name[32];
	int64_t last;
	int i, round;

	r.name = "permits_fence";
	r.fn = fn_fence;
	r.nchildren = 16;
	r.rounds = fr_rounds(10);
	r.arg = name;
	for (round = 0; round < r.rounds; round++) {
		r.round = round;
		snprintf(name, sizeof(name), "m%d", round);
		sem(name, 1);
		fr_round(&r);
		ck_assert_int_eq(r.nrecs, 3 * r.nchildren);
		for (last = 0, i = 0; i < r.nrecs; i++) {
			const struct fr_rec *x = &r.recs[i];

			ck_assert_msg(x->rc == 0 && x->error == ERROR_NONE,
			    "round %d: child %d: %s", round, x->child,
			    error_name((enum error_word)x->error));
			ck_assert_msg(x->a > last,
			    "round %d: token %lld granted after %lld", round,
			    (long long)x->a, (long long)last);
			last = x->a;
		}
		ck_assert_int_eq(last, 3 * r.nchildren);
		ck_assert_int_eq(sem_get(name).in_use, 0);
		fx_verify_clean();
	}
}
END_TEST

Suite *
suite_permits(void)
{
	Suite *s = suite_create("permits");
	TCase *tc = tcase_create("permits");
	TCase *race = tcase_create("permits_race");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_permits_semaphore_put_and_history);
	tcase_add_test(tc, test_permits_semaphore_put_bad_request);
	tcase_add_test(tc, test_permits_acquire_release);
	tcase_add_test(tc, test_permits_acquire_replay_and_conflict);
	tcase_add_test(tc, test_permits_sorted_items_and_tokens);
	tcase_add_test(tc, test_permits_all_or_nothing);
	tcase_add_test(tc, test_permits_acquire_bad_request);
	tcase_add_test(tc, test_permits_heartbeat);
	tcase_add_test(tc, test_permits_release_after_expiry);
	tcase_add_test(tc, test_permits_capacity_lowered);
	tcase_add_test(tc, test_permits_expire_due_batches);
	tcase_add_test(tc, test_permits_release_stale);
	tcase_add_test(tc, test_permits_cleanup);
	tcase_add_test(tc, test_permits_json);
	tcase_add_test(tc, test_permits_tenant_scoped);
	tcase_add_test(tc, test_permits_verify_catches_g5);
	tcase_add_test(tc, test_permits_verify_catches_g6);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(race, fx_setup, fx_teardown);
	tcase_set_timeout(race, 600);
	tcase_add_test(race, test_permits_race_capacity_32);
	tcase_add_test(race, test_permits_race_opposite_orders);
	tcase_add_test(race, test_permits_race_fencing_grant_order);
	suite_add_tcase(s, race);
	return s;
}
