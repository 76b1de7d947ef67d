/*
 * The dashboard's webhooks and API keys pages, service side
 * (app/core/admin_hooks.c, webhook_rotate, apikey_verify's last use), on
 * the backend under test: an endpoint's numbers and keyset pages of its
 * deliveries, redelivering one or all dead (tenant and endpoint checked,
 * a disabled endpoint refused), a rotated secret, and "last used"
 * written at most once a minute.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/core/admin_hooks.h"
#include "../../app/core/apikey.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/redeem.h"
#include "../../app/core/webhooks.h"
#include "fixture.h"

Suite *suite_admin_hooks(void);

static int64_t
db_now(void)
{
	return fx_count("SELECT UNIX_TIMESTAMP()");
}

static int64_t
endpoint(struct svc *s, const char *url)
{
	char secret[WEBHOOK_SECRET_MAX];
	struct webhook w;

	ck_assert_int_eq(webhook_create(s, url, secret, &w), ERROR_NONE);
	return w.id;
}

/* n redemptions, each one event, fanned out to the enabled endpoints. */
static void
events(int n)
{
	static int serial;
	char codes[64][96], account[64];
	struct redeem_result res;
	struct webhooks_stats st = {0};
	struct campaign k;
	int i;

	ck_assert_int_le(n, 64);
	if (campaign_get(&fx.svc, "hooks", &k) == ERROR_NOT_FOUND)
		fx_campaign("hooks", 0, 0, 0);
	fx_codes("hooks", n, 1, codes);
	for (i = 0; i < n; i++) {
		snprintf(account, sizeof(account), "h%d@example.com", serial++);
		ck_assert_int_eq(
		    redeem_code(&fx.svc, codes[i], account, NULL, &res), 0);
		ck_assert_int_eq(res.error, ERROR_NONE);
	}
	ck_assert_int_eq(webhooks_enqueue(fx.db, 10000, &st), 0);
}

struct page {
	int n;
	int64_t id[ADMIN_HOOKS_PAGE];
};

static void
page_add(void *arg, const struct delivery *d)
{
	struct page *p = arg;

	ck_assert_int_lt(p->n, ADMIN_HOOKS_PAGE);
	p->id[p->n++] = d->id;
}

static int64_t count_where(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int64_t
count_where(const char *fmt, ...)
{
	char q[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof(q), fmt, ap);
	va_end(ap);
	return fx_count(q);
}

START_TEST(test_admin_hooks_counts_and_pages)
{
	const enum delivery_state dead = DELIVERY_DEAD;
	struct admin_hook_counts c;
	struct page p1 = {0}, p2 = {0};
	int64_t id = endpoint(&fx.svc, "https://example.com/a");
	int more = 0, i;

	events(ADMIN_HOOKS_PAGE + 1);
	fx_sql("UPDATE webhook_deliveries SET state = 'dead', attempts = 3, "
	       "last_status = 502, last_error = 'bad <gateway>', "
	       "last_attempt_at = 1 WHERE id IN (SELECT id FROM (SELECT id "
	       "FROM webhook_deliveries ORDER BY id LIMIT 2) x)");
	fx_sql("UPDATE webhook_deliveries SET state = 'delivered', "
	       "delivered_at = UNIX_TIMESTAMP() WHERE state = 'pending' AND "
	       "id IN (SELECT id FROM (SELECT id FROM webhook_deliveries "
	       "ORDER BY id DESC LIMIT 3) x)");
	ck_assert_int_eq(admin_hook_counts(&fx.svc, id, &c), ERROR_NONE);
	ck_assert_int_eq(c.pending, ADMIN_HOOKS_PAGE + 1 - 5);
	ck_assert_int_eq(c.dead, 2);
	ck_assert_int_eq(c.delivered_day, 3);
	ck_assert_int_eq(c.last_status, 502);
	ck_assert_str_eq(c.last_error, "bad <gateway>");

	/* Two pages, newest first, no row twice. */
	ck_assert_int_eq(
	    admin_hook_deliveries(&fx.svc, id, NULL, 0, page_add, &p1, &more),
	    ERROR_NONE);
	ck_assert_int_eq(p1.n, ADMIN_HOOKS_PAGE);
	ck_assert_int_eq(more, 1);
	for (i = 1; i < p1.n; i++)
		ck_assert_int_lt(p1.id[i], p1.id[i - 1]);
	ck_assert_int_eq(admin_hook_deliveries(&fx.svc, id, NULL,
			     p1.id[p1.n - 1], page_add, &p2, &more),
	    ERROR_NONE);
	ck_assert_int_eq(p2.n, 1);
	ck_assert_int_eq(more, 0);
	ck_assert_int_lt(p2.id[0], p1.id[p1.n - 1]);

	/* One state. */
	memset(&p1, 0, sizeof(p1));
	ck_assert_int_eq(
	    admin_hook_deliveries(&fx.svc, id, &dead, 0, page_add, &p1, &more),
	    ERROR_NONE);
	ck_assert_int_eq(p1.n, 2);
	ck_assert_int_eq(more, 0);
}
END_TEST

START_TEST(test_admin_hooks_redeliver)
{
	struct svc other;
	int64_t id = endpoint(&fx.svc, "https://example.com/b");
	int64_t id2 = endpoint(&fx.svc, "https://example.com/c");
	int64_t did, n = -1;

	events(3);
	fx_sql("UPDATE webhook_deliveries SET state = 'dead', attempts = 4, "
	       "last_error = 'gone'");
	did = count_where("SELECT MIN(id) FROM webhook_deliveries WHERE "
			  "endpoint_id = %lld",
	    (long long)id);

	/* Another tenant, another endpoint: nothing found, nothing moved. */
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(
	    admin_hook_redeliver(&other, id, did, &n), ERROR_NOT_FOUND);
	ck_assert_int_eq(
	    admin_hook_redeliver_dead(&other, id, &n), ERROR_NOT_FOUND);
	ck_assert_int_eq(
	    admin_hook_redeliver(&fx.svc, id2, did, &n), ERROR_NOT_FOUND);
	ck_assert_int_eq(
	    admin_hook_redeliver(&fx.svc, id, did + 1000, &n), ERROR_NOT_FOUND);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM webhook_deliveries "
				  "WHERE state <> 'dead'"),
	    0);

	/* One: pending and due now, attempts kept; again: nothing to do. */
	ck_assert_int_eq(
	    admin_hook_redeliver(&fx.svc, id, did, &n), ERROR_NONE);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(
	    count_where("SELECT COUNT(*) FROM webhook_deliveries "
			"WHERE id = %lld AND state = 'pending' AND "
			"attempts = 4 AND next_attempt_at <= "
			"UNIX_TIMESTAMP()",
		(long long)did),
	    1);
	ck_assert_int_eq(
	    admin_hook_redeliver(&fx.svc, id, did, &n), ERROR_NONE);
	ck_assert_int_eq(n, 0);

	/* All dead of the endpoint, not of the other one. */
	ck_assert_int_eq(
	    admin_hook_redeliver_dead(&fx.svc, id, &n), ERROR_NONE);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(count_where("SELECT COUNT(*) FROM webhook_deliveries "
				     "WHERE endpoint_id = %lld AND state = "
				     "'pending'",
			     (long long)id),
	    3);
	ck_assert_int_eq(count_where("SELECT COUNT(*) FROM webhook_deliveries "
				     "WHERE endpoint_id = %lld AND state = "
				     "'dead'",
			     (long long)id2),
	    3);

	/* A disabled endpoint would kill them again at once: refused. */
	ck_assert_int_eq(webhook_disable(&fx.svc, id2, NULL), ERROR_NONE);
	ck_assert_int_eq(
	    admin_hook_redeliver_dead(&fx.svc, id2, &n), ERROR_CONFLICT);
	ck_assert_int_eq(count_where("SELECT COUNT(*) FROM webhook_deliveries "
				     "WHERE endpoint_id = %lld AND state = "
				     "'dead'",
			     (long long)id2),
	    3);
}
END_TEST

START_TEST(test_admin_hooks_rotate)
{
	char old[WEBHOOK_SECRET_MAX], fresh[WEBHOOK_SECRET_MAX], q[256];
	struct svc other;
	struct webhook w;

	ck_assert_int_eq(
	    webhook_create(&fx.svc, "https://example.com/r", old, &w),
	    ERROR_NONE);
	ck_assert_int_eq(webhook_rotate(&fx.svc, w.id, fresh), ERROR_NONE);
	ck_assert_str_ne(old, fresh);
	ck_assert_int_eq(strncmp(fresh, WEBHOOK_SECRET_PREFIX, 6), 0);
	ck_assert_uint_eq(strlen(fresh), 70);
	snprintf(q, sizeof(q),
	    "SELECT COUNT(*) FROM webhook_endpoints WHERE secret = '%s'",
	    fresh);
	ck_assert_int_eq(fx_count(q), 1);

	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(webhook_rotate(&other, w.id, old), ERROR_NOT_FOUND);
	ck_assert_str_eq(old, "");
	ck_assert_int_eq(fx_count(q), 1);
}
END_TEST

static int64_t
last_used(int64_t id)
{
	return count_where(
	    "SELECT COALESCE(last_used_at, 0) FROM api_keys WHERE id = %lld",
	    (long long)id);
}

START_TEST(test_admin_hooks_apikey_last_used)
{
	char text[APIKEY_TEXT_MAX], q[128];
	struct apikey k, got;
	int64_t now;

	ck_assert_int_eq(
	    apikey_create(&fx.svc, APIKEY_REDEEM, "svc", text, &k), ERROR_NONE);
	ck_assert_int_eq(k.last_used_at, 0);
	ck_assert_int_eq(last_used(k.id), 0);

	/* The first use writes it. */
	ck_assert_int_eq(apikey_verify(fx.db, text, &got), ERROR_NONE);
	now = db_now();
	ck_assert_int_ge(last_used(k.id), now - 2);
	ck_assert_int_eq(got.last_used_at, last_used(k.id));

	/* Within the minute: no write. */
	snprintf(q, sizeof(q),
	    "UPDATE api_keys SET last_used_at = %lld WHERE id = %lld",
	    (long long)(now - 30), (long long)k.id);
	fx_sql(q);
	ck_assert_int_eq(apikey_verify(fx.db, text, &got), ERROR_NONE);
	ck_assert_int_eq(last_used(k.id), now - 30);
	ck_assert_int_eq(got.last_used_at, now - 30);

	/* A minute on: written again. */
	snprintf(q, sizeof(q),
	    "UPDATE api_keys SET last_used_at = %lld WHERE id = %lld",
	    (long long)(now - 61), (long long)k.id);
	fx_sql(q);
	ck_assert_int_eq(apikey_verify(fx.db, text, &got), ERROR_NONE);
	ck_assert_int_ge(last_used(k.id), now);

	/* A refused key is not "used". */
	fx_sql(q);
	ck_assert_int_eq(apikey_revoke(&fx.svc, k.id), ERROR_NONE);
	ck_assert_int_eq(apikey_verify(fx.db, text, &got), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(last_used(k.id), now - 61);
}
END_TEST

Suite *
suite_admin_hooks(void)
{
	Suite *s = suite_create("admin_hooks");
	TCase *tc = tcase_create("admin_hooks");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_admin_hooks_counts_and_pages);
	tcase_add_test(tc, test_admin_hooks_redeliver);
	tcase_add_test(tc, test_admin_hooks_rotate);
	tcase_add_test(tc, test_admin_hooks_apikey_last_used);
	suite_add_tcase(s, tc);
	return s;
}
