/* The dashboard's semaphores and leaked permits (admin_leases.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "../../app/core/admin_leases.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/stats.h"
#include "fixture.h"

#define TTL 300

Suite *suite_admin_leases(void);

/* What the lists handed out, by external_id, in order. */
struct seen {
	char holds[16][HOLD_ID_MAX + 1];
	char permits[16][PERMIT_ID_MAX + 1];
	char stale[16][PERMIT_ID_MAX + 1];
	char sems[16][PERMIT_ITEMS_MAX * (SEMAPHORE_NAME_MAX + 2) + 1];
	int nholds, npermits, nstale;
};

static void
on_hold(void *arg, const struct admin_leaked_hold *h)
{
	struct seen *s = arg;

	ck_assert_int_lt(s->nholds, 16);
	snprintf(s->holds[s->nholds++], HOLD_ID_MAX + 1, "%s", h->external_id);
}

static void
on_permit(void *arg, const struct admin_permit *p)
{
	struct seen *s = arg;

	ck_assert_int_lt(s->npermits, 16);
	snprintf(s->sems[s->npermits], sizeof(s->sems[0]), "%s", p->semaphores);
	snprintf(
	    s->permits[s->npermits++], PERMIT_ID_MAX + 1, "%s", p->external_id);
}

static void
on_stale(void *arg, const struct admin_permit *p)
{
	struct seen *s = arg;

	ck_assert_int_lt(s->nstale, 16);
	snprintf(
	    s->stale[s->nstale++], PERMIT_ID_MAX + 1, "%s", p->external_id);
}

static void
leaked(struct svc *svc, struct admin_leaked *t, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(
	    admin_leaked(svc, t, on_hold, on_permit, on_stale, s), ERROR_NONE);
}

static int64_t
hold(const char *code, const char *account, const char *xid)
{
	struct hold_result res;

	ck_assert_int_eq(
	    hold_create(&fx.svc, code, account, xid, TTL, NULL, &res), 0);
	ck_assert_msg(
	    res.error == ERROR_NONE, "hold %s: %s", xid, error_name(res.error));
	return res.h.id;
}

static void
sem(const char *name, int64_t capacity)
{
	struct semaphore m;

	ck_assert_int_eq(
	    semaphore_put(&fx.svc, name, capacity, "tester", &m, NULL),
	    ERROR_NONE);
}

static int64_t
in_use(const char *name)
{
	struct semaphore m;

	ck_assert_int_eq(semaphore_get(&fx.svc, name, &m), ERROR_NONE);
	return m.in_use;
}

/* A permit on one semaphore, or on "a" and "b" when two. */
static int64_t
permit(const char *xid, int two)
{
	struct permit_item items[2];
	struct permit_result res;

	memset(items, 0, sizeof(items));
	snprintf(items[0].name, sizeof(items[0].name), "a");
	snprintf(items[1].name, sizeof(items[1].name), "b");
	items[0].count = items[1].count = 1;
	ck_assert_int_eq(permit_acquire(&fx.svc, xid, "worker-1", TTL, items,
			     two ? 2 : 1, &res),
	    0);
	ck_assert_msg(res.error == ERROR_NONE, "permit %s: %s", xid,
	    error_name(res.error));
	return res.p.id;
}

/* Granted more than the staleness limit ago, its TTL still running. */
static void
make_stale(const char *xid)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
	    "UPDATE permits SET created_at = UNIX_TIMESTAMP() - %d "
	    "WHERE external_id = '%s'",
	    ADMIN_LEASES_STALE + 60, xid);
	fx_sql(sql);
}

/* Three holds (two lapsed) and four permits: one lapsed on a and b, one
 * stale, two live. */
static void
scene(char (*codes)[96])
{
	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 3, 5, codes);
	hold(codes[0], "a@x.test", "h-1");
	hold(codes[1], "b@x.test", "h-2");
	hold(codes[2], "c@x.test", "h-3");
	fx_lapse("holds", "h-1");
	fx_lapse("holds", "h-3");
	sem("a", 10);
	sem("b", 10);
	permit("p-1", 1);
	permit("p-2", 1);
	permit("p-3", 0);
	permit("p-4", 0);
	fx_lapse("permits", "p-1");
	make_stale("p-2");
}

START_TEST(test_admin_leases_lists_exact)
{
	char codes[3][96];
	struct admin_leaked t;
	struct stats_overview *o = calloc(1, sizeof(*o));
	struct seen s;

	ck_assert_ptr_nonnull(o);
	leaked(&fx.svc, &t, &s);
	ck_assert_int_eq(t.holds + t.permits + t.stale, 0);
	ck_assert_int_eq(s.nholds + s.npermits + s.nstale, 0);
	scene(codes);
	fx_sql("UPDATE holds SET expires_at = UNIX_TIMESTAMP() - 600 "
	       "WHERE external_id = 'h-3'");
	leaked(&fx.svc, &t, &s);
	ck_assert_int_eq(t.holds, 2);
	ck_assert_int_eq(t.permits, 1);
	ck_assert_int_eq(t.stale, 1);
	/* Most overdue first. */
	ck_assert_int_eq(s.nholds, 2);
	ck_assert_str_eq(s.holds[0], "h-3");
	ck_assert_str_eq(s.holds[1], "h-1");
	ck_assert_int_eq(s.npermits, 1);
	ck_assert_str_eq(s.permits[0], "p-1");
	ck_assert_str_eq(s.sems[0], "a, b");
	ck_assert_int_eq(s.nstale, 1);
	ck_assert_str_eq(s.stale[0], "p-2");
	/* The overview counts the same. */
	ck_assert_int_eq(stats_overview(&fx.svc, o), ERROR_NONE);
	ck_assert_int_eq(o->leaked_holds, t.holds);
	ck_assert_int_eq(o->leaked_permits, t.permits + t.stale);
	free(o);
}
END_TEST

START_TEST(test_admin_leases_release_one)
{
	char codes[3][96];
	struct admin_leaked t;
	struct seen s;
	int64_t h1, h2, p1, p2, p3;

	scene(codes);
	h1 = fx_count("SELECT id FROM holds WHERE external_id = 'h-1'");
	h2 = fx_count("SELECT id FROM holds WHERE external_id = 'h-2'");
	p1 = fx_count("SELECT id FROM permits WHERE external_id = 'p-1'");
	p2 = fx_count("SELECT id FROM permits WHERE external_id = 'p-2'");
	p3 = fx_count("SELECT id FROM permits WHERE external_id = 'p-3'");
	ck_assert_int_eq(in_use("a"), 4);
	ck_assert_int_eq(in_use("b"), 2);
	/* A hold past its TTL: expired as the sweeper does, seat back, its
	 * event, one audit row. */
	ck_assert_int_eq(
	    admin_leaked_release_hold(&fx.svc, 0, "192.0.2.1", h1), ERROR_NONE);
	fx_assert_code(codes[0], "active", 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds WHERE "
				  "external_id = 'h-1' AND state = 'expired'"),
	    1);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM events WHERE "
				  "type = 'hold.expired'"),
	    1);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM audit_log WHERE "
		     "action = 'hold.release' AND "
		     "object LIKE 'hold % h-1' AND ip = '192.0.2.1'"),
	    1);
	/* Again: no longer leaked, nothing written. A live hold is not
	 * leaked either; no such id is 404. */
	ck_assert_int_eq(
	    admin_leaked_release_hold(&fx.svc, 0, "x", h1), ERROR_CONFLICT);
	ck_assert_int_eq(
	    admin_leaked_release_hold(&fx.svc, 0, "x", h2), ERROR_CONFLICT);
	fx_assert_code(codes[1], "active", 1);
	ck_assert_int_eq(admin_leaked_release_hold(&fx.svc, 0, "x", 999999),
	    ERROR_NOT_FOUND);
	/* A permit past its TTL -> expired; a stale one -> released; both
	 * give their room back on every semaphore. */
	ck_assert_int_eq(
	    admin_leaked_release_permit(&fx.svc, 0, "x", p1), ERROR_NONE);
	ck_assert_int_eq(in_use("a"), 3);
	ck_assert_int_eq(in_use("b"), 1);
	ck_assert_int_eq(
	    admin_leaked_release_permit(&fx.svc, 0, "x", p2), ERROR_NONE);
	ck_assert_int_eq(in_use("a"), 2);
	ck_assert_int_eq(in_use("b"), 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM permits WHERE "
				  "(external_id = 'p-1' AND state = 'expired') "
				  "OR (external_id = 'p-2' AND "
				  "state = 'released')"),
	    2);
	ck_assert_int_eq(
	    admin_leaked_release_permit(&fx.svc, 0, "x", p3), ERROR_CONFLICT);
	ck_assert_int_eq(in_use("a"), 2);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM audit_log WHERE "
				  "action = 'permit.release'"),
	    2);
	leaked(&fx.svc, &t, &s);
	ck_assert_int_eq(t.holds, 1);
	ck_assert_int_eq(t.permits + t.stale, 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_admin_leases_release_all)
{
	char codes[3][96];
	struct admin_leaked t;
	struct seen s;
	int64_t nh, np;

	scene(codes);
	ck_assert_int_eq(
	    admin_leaked_release_all(&fx.svc, 0, "x", &nh, &np), ERROR_NONE);
	ck_assert_int_eq(nh, 2);
	ck_assert_int_eq(np, 2);
	fx_assert_code(codes[0], "active", 0);
	fx_assert_code(codes[1], "active", 1);
	fx_assert_code(codes[2], "active", 0);
	ck_assert_int_eq(in_use("a"), 2); /* p-3, p-4 */
	ck_assert_int_eq(in_use("b"), 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM events WHERE "
				  "type = 'hold.expired'"),
	    2);
	/* One audit row per item. */
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM audit_log WHERE "
				  "action IN ('hold.release', "
				  "'permit.release')"),
	    4);
	leaked(&fx.svc, &t, &s);
	ck_assert_int_eq(t.holds + t.permits + t.stale, 0);
	/* Nothing left: nothing more is written. */
	ck_assert_int_eq(
	    admin_leaked_release_all(&fx.svc, 0, "x", &nh, &np), ERROR_NONE);
	ck_assert_int_eq(nh + np, 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM audit_log"), 4);
	fx_verify_clean();
}
END_TEST

START_TEST(test_admin_leases_tenant_scoped)
{
	char codes[3][96];
	struct admin_leaked t;
	struct seen s;
	struct svc other;
	int64_t nh, np, h1, p1;

	scene(codes);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	h1 = fx_count("SELECT id FROM holds WHERE external_id = 'h-1'");
	p1 = fx_count("SELECT id FROM permits WHERE external_id = 'p-1'");
	leaked(&other, &t, &s);
	ck_assert_int_eq(t.holds + t.permits + t.stale, 0);
	ck_assert_int_eq(s.nholds + s.npermits + s.nstale, 0);
	ck_assert_int_eq(
	    admin_leaked_release_hold(&other, 0, "x", h1), ERROR_NOT_FOUND);
	ck_assert_int_eq(
	    admin_leaked_release_permit(&other, 0, "x", p1), ERROR_NOT_FOUND);
	ck_assert_int_eq(
	    admin_leaked_release_all(&other, 0, "x", &nh, &np), ERROR_NONE);
	ck_assert_int_eq(nh + np, 0);
	leaked(&fx.svc, &t, &s);
	ck_assert_int_eq(t.holds + t.permits + t.stale, 4);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM audit_log"), 0);
}
END_TEST

struct jobs {
	int n, late[SWEEP__MAX];
	int64_t last[SWEEP__MAX];
};

static void
on_job(void *arg, const struct admin_sweep_job *j)
{
	struct jobs *u = arg;

	ck_assert_int_eq(j->job, u->n);
	ck_assert_int_eq(j->interval, sweep_job_interval(j->job));
	u->late[j->job] = j->late;
	u->last[j->job] = j->last_run;
	u->n++;
}

START_TEST(test_admin_leases_sweep_status)
{
	struct jobs u;
	char sql[256];

	/* Never run: every job is late. */
	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(admin_sweep_status(&fx.svc, on_job, &u), ERROR_NONE);
	ck_assert_int_eq(u.n, SWEEP__MAX);
	ck_assert(u.late[SWEEP_EXPIRE] && u.late[SWEEP_CLEANUP]);
	/* Just now: none; release_leaked ran three intervals ago: late;
	 * staleness ran one and a half ago: not. */
	fx_sql("UPDATE sweep_leases SET last_run_at = UNIX_TIMESTAMP(), "
	       "last_done = 0");
	snprintf(sql, sizeof(sql),
	    "UPDATE sweep_leases SET last_run_at = UNIX_TIMESTAMP() - %lld "
	    "WHERE job = 'release_leaked'",
	    (long long)(3 * sweep_job_interval(SWEEP_RELEASE_LEAKED)));
	fx_sql(sql);
	snprintf(sql, sizeof(sql),
	    "UPDATE sweep_leases SET last_run_at = UNIX_TIMESTAMP() - %lld "
	    "WHERE job = 'staleness'",
	    (long long)(3 * sweep_job_interval(SWEEP_STALENESS) / 2));
	fx_sql(sql);
	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(admin_sweep_status(&fx.svc, on_job, &u), ERROR_NONE);
	ck_assert_int_eq(u.late[SWEEP_RELEASE_LEAKED], 1);
	ck_assert_int_eq(u.late[SWEEP_STALENESS], 0);
	ck_assert_int_eq(u.late[SWEEP_EXPIRE], 0);
	ck_assert_int_eq(u.late[SWEEP_DELIVER], 0);
	ck_assert(u.last[SWEEP_EXPIRE] > 0);
}
END_TEST

struct sems {
	int n;
	char name[4][SEMAPHORE_NAME_MAX + 1];
	int64_t holders[4], leaked[4], in_use[4];
};

static void
on_sem(void *arg, const struct admin_semaphore *m)
{
	struct sems *u = arg;

	ck_assert_int_lt(u->n, 4);
	snprintf(u->name[u->n], sizeof(u->name[0]), "%s", m->m.name);
	u->holders[u->n] = m->holders;
	u->leaked[u->n] = m->leaked;
	u->in_use[u->n++] = m->m.in_use;
}

static void
on_holder(void *arg, const struct admin_permit *p)
{
	int *n = arg;

	ck_assert(p->fencing_token > 0);
	ck_assert_int_eq(p->count, 1);
	(*n)++;
}

START_TEST(test_admin_leases_semaphores)
{
	char codes[3][96];
	struct sems u;
	struct semaphore m;
	int more, n = 0;

	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(
	    admin_semaphores(&fx.svc, on_sem, &u, &more), ERROR_NONE);
	ck_assert_int_eq(u.n, 0);
	scene(codes);
	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(
	    admin_semaphores(&fx.svc, on_sem, &u, &more), ERROR_NONE);
	ck_assert_int_eq(more, 0);
	ck_assert_int_eq(u.n, 2);
	ck_assert_str_eq(u.name[0], "a");
	ck_assert_int_eq(u.in_use[0], 4);
	ck_assert_int_eq(u.holders[0], 3); /* p-2 (stale, in TTL), p-3, p-4 */
	ck_assert_int_eq(u.leaked[0], 1);
	ck_assert_str_eq(u.name[1], "b");
	ck_assert_int_eq(u.holders[1], 1);
	ck_assert_int_eq(u.leaked[1], 1);
	ck_assert_int_eq(semaphore_get(&fx.svc, "a", &m), ERROR_NONE);
	ck_assert_int_eq(
	    admin_semaphore_holders(&fx.svc, m.id, on_holder, &n), ERROR_NONE);
	ck_assert_int_eq(n, 4);
}
END_TEST

Suite *
suite_admin_leases(void)
{
	Suite *s = suite_create("admin_leases");
	TCase *tc = tcase_create("admin_leases");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_admin_leases_lists_exact);
	tcase_add_test(tc, test_admin_leases_release_one);
	tcase_add_test(tc, test_admin_leases_release_all);
	tcase_add_test(tc, test_admin_leases_tenant_scoped);
	tcase_add_test(tc, test_admin_leases_sweep_status);
	tcase_add_test(tc, test_admin_leases_semaphores);
	suite_add_tcase(s, tc);
	return s;
}
