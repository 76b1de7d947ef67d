/*
 * The abuse gate (abuse_check, abuse_record) on its own: counted failures
 * per client key and per account in a sliding window, scoped by tenant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "../../app/core/abuse.h"
#include "fixture.h"

static void
limits(int64_t client, int64_t account, int64_t window)
{
	fx.svc.cfg.abuse_limit_client = client;
	fx.svc.cfg.abuse_limit_account = account;
	fx.svc.cfg.abuse_window = window;
}

static enum error_word
check_on(struct svc *s, const char *client, const char *account,
    int64_t *retry_after)
{
	int64_t ra = -1;
	enum error_word e;

	e = abuse_check(s, client, account, &ra);
	if (e == ERROR_NONE)
		ck_assert_int_eq(ra, 0);
	else {
		ck_assert_int_eq(e, ERROR_RATE_LIMITED);
		ck_assert_int_gt(ra, 0);
		ck_assert_int_le(ra, s->cfg.abuse_window);
	}
	if (retry_after != NULL)
		*retry_after = ra;
	return e;
}

static enum error_word
check(const char *client, const char *account)
{
	return check_on(&fx.svc, client, account, NULL);
}

/* n failures planted `age` seconds ago, behind the gate's back. */
static void
plant(int kind, const char *subject, int n, int64_t age)
{
	char sql[256];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(sql, sizeof(sql),
		    "INSERT INTO abuse_failures (tenant_id, kind, subject, at) "
		    "VALUES (%lld, %d, '%s', UNIX_TIMESTAMP() - %lld)",
		    (long long)fx.svc.tenant_id, kind, subject, (long long)age);
		fx_sql(sql);
	}
}

START_TEST(test_abuse_window_counting)
{
	int64_t ra;
	int i;

	limits(3, 3, 600);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(
		    check("203.0.113.9", "x@example.com"), ERROR_NONE);
		abuse_record(&fx.svc, "203.0.113.9", "x@example.com");
	}
	/* Checking does not count. */
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(
		    check("203.0.113.9", "x@example.com"), ERROR_NONE);
	abuse_record(&fx.svc, "203.0.113.9", "x@example.com");
	ck_assert_int_eq(check_on(&fx.svc, "203.0.113.9", "x@example.com", &ra),
	    ERROR_RATE_LIMITED);
	/* The oldest failure leaves the window in about 600 s. */
	ck_assert_int_ge(ra, 595);
	ck_assert_int_eq(check("203.0.113.10", "y@example.com"), ERROR_NONE);
}
END_TEST

/* Exactly the limit: limit - 1 failures pass, the limit-th closes. */
START_TEST(test_abuse_limit_boundary)
{
	static const int64_t limit[] = {1, 2, 5, 20};
	char client[32], account[64];
	size_t i;
	int64_t j;

	for (i = 0; i < NELEM(limit); i++) {
		limits(limit[i], limit[i], 600);
		snprintf(client, sizeof(client), "192.0.2.%zu", i + 1);
		snprintf(account, sizeof(account), "a%zu@example.com", i);
		for (j = 0; j < limit[i] - 1; j++)
			abuse_record(&fx.svc, client, account);
		ck_assert_msg(check(client, account) == ERROR_NONE,
		    "limit %lld: limited after %lld failures",
		    (long long)limit[i], (long long)(limit[i] - 1));
		abuse_record(&fx.svc, client, account);
		ck_assert_msg(check(client, account) == ERROR_RATE_LIMITED,
		    "limit %lld: allowed after %lld failures",
		    (long long)limit[i], (long long)limit[i]);
	}
}
END_TEST

/* The two keys are counted and limited apart. */
START_TEST(test_abuse_client_and_account_apart)
{
	int i;

	limits(3, 5, 600);
	for (i = 0; i < 3; i++)
		abuse_record(&fx.svc, "203.0.113.9", "x@example.com");
	/* The client key is at its limit, the account below its own. */
	ck_assert_int_eq(
	    check("203.0.113.9", "other@example.com"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(check("203.0.113.10", "x@example.com"), ERROR_NONE);
	ck_assert_int_eq(
	    check("203.0.113.10", "other@example.com"), ERROR_NONE);
	for (i = 0; i < 2; i++)
		abuse_record(&fx.svc, "203.0.113.11", "x@example.com");
	/* Now the account is at 5, from two client keys. */
	ck_assert_int_eq(
	    check("203.0.113.10", "x@example.com"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(check(NULL, "x@example.com"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(check("203.0.113.11", "y@example.com"), ERROR_NONE);
	/* Subjects match whole, not by prefix: the caller canonicalizes.
	 * (Trailing spaces are left out: MariaDB's PAD SPACE collation
	 * ignores them, SQLite does not.) */
	ck_assert_int_eq(check("203.0.113.99", "x@example.co"), ERROR_NONE);
	ck_assert_int_eq(check("203.0.113.", "y@example.com"), ERROR_NONE);
}
END_TEST

/* Kinds are apart too: a client key spelled like an account is not the
 * account. */
START_TEST(test_abuse_kinds_apart)
{
	int i;

	limits(2, 2, 600);
	for (i = 0; i < 2; i++)
		abuse_record(&fx.svc, "same", "other");
	ck_assert_int_eq(check("other", "same"), ERROR_NONE);
	ck_assert_int_eq(check("same", "x"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(check("x", "other"), ERROR_RATE_LIMITED);
}
END_TEST

START_TEST(test_abuse_null_client)
{
	int i;

	limits(3, 3, 600);
	/* A NULL (or empty) client records the account only. */
	for (i = 0; i < 3; i++)
		abuse_record(&fx.svc, NULL, "x@example.com");
	ck_assert_int_eq(check(NULL, "x@example.com"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(check("203.0.113.9", "y@example.com"), ERROR_NONE);
	ck_assert_int_eq(check("", "y@example.com"), ERROR_NONE);
	for (i = 0; i < 3; i++)
		abuse_record(&fx.svc, "", "z@example.com");
	ck_assert_int_eq(check("", "y@example.com"), ERROR_NONE);
	/* A client key at its limit does not bind a caller without one. */
	for (i = 0; i < 3; i++) {
		char account[32];

		snprintf(account, sizeof(account), "u%d@example.com", i);
		abuse_record(&fx.svc, "203.0.113.9", account);
	}
	ck_assert_int_eq(
	    check("203.0.113.9", "w@example.com"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(check(NULL, "w@example.com"), ERROR_NONE);
	/* NULL account records the client only. */
	for (i = 0; i < 3; i++)
		abuse_record(&fx.svc, "203.0.113.20", NULL);
	ck_assert_int_eq(
	    check("203.0.113.20", "w@example.com"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(check("203.0.113.21", "w@example.com"), ERROR_NONE);
}
END_TEST

START_TEST(test_abuse_tenant_scoped)
{
	struct svc other;
	int i;

	limits(2, 2, 600);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	other.cfg = fx.svc.cfg;
	for (i = 0; i < 2; i++)
		abuse_record(&fx.svc, "203.0.113.9", "x@example.com");
	ck_assert_int_eq(
	    check("203.0.113.9", "x@example.com"), ERROR_RATE_LIMITED);
	ck_assert_int_eq(
	    check_on(&other, "203.0.113.9", "x@example.com", NULL), ERROR_NONE);
	for (i = 0; i < 2; i++)
		abuse_record(&other, "203.0.113.1", "y@example.com");
	ck_assert_int_eq(check_on(&other, "203.0.113.1", "q@example.com", NULL),
	    ERROR_RATE_LIMITED);
	ck_assert_int_eq(check("203.0.113.1", "y@example.com"), ERROR_NONE);
}
END_TEST

/* Failures older than the window do not count; retry_after is when the
 * oldest one in it leaves. */
START_TEST(test_abuse_sliding_window)
{
	int64_t ra;

	limits(3, 3, 600);
	plant(1, "203.0.113.9", 5, 700);
	plant(2, "x@example.com", 5, 600);
	ck_assert_int_eq(check("203.0.113.9", "x@example.com"), ERROR_NONE);
	plant(1, "203.0.113.9", 2, 500);
	plant(1, "203.0.113.9", 1, 100);
	ck_assert_int_eq(check_on(&fx.svc, "203.0.113.9", "y@example.com", &ra),
	    ERROR_RATE_LIMITED);
	ck_assert_int_ge(ra, 98);
	ck_assert_int_le(ra, 101);
	/* A narrower window leaves the older ones out. */
	fx.svc.cfg.abuse_window = 300;
	ck_assert_int_eq(check("203.0.113.9", "y@example.com"), ERROR_NONE);
}
END_TEST

/*
 * retry_after says when the limit lifts: here the client key is limited
 * by three recent failures, and an older failure of the account (which
 * is below its own limit) must not shorten the wait.
 */
START_TEST(test_abuse_retry_after_lifts_limit)
{
	int64_t ra;

	limits(3, 3, 600);
	plant(2, "x@example.com", 1, 590);
	plant(1, "203.0.113.9", 3, 10);
	ck_assert_int_eq(check_on(&fx.svc, "203.0.113.9", "x@example.com", &ra),
	    ERROR_RATE_LIMITED);
	ck_assert_msg(ra >= 588,
	    "retry_after %lld, but the client key stays limited ~590 s",
	    (long long)ra);
	/* The same with the roles swapped. */
	plant(1, "203.0.113.50", 1, 590);
	plant(2, "y@example.com", 3, 10);
	ck_assert_int_eq(
	    check_on(&fx.svc, "203.0.113.50", "y@example.com", &ra),
	    ERROR_RATE_LIMITED);
	ck_assert_msg(ra >= 588,
	    "retry_after %lld, but the account stays limited ~590 s",
	    (long long)ra);
}
END_TEST

/* A real short window: after it passes, allowed again. */
START_TEST(test_abuse_short_window)
{
	int i;

	/* Two seconds, so that a second boundary between record and check
	 * cannot empty the window early. */
	limits(2, 2, 2);
	for (i = 0; i < 2; i++)
		abuse_record(&fx.svc, "203.0.113.9", "x@example.com");
	ck_assert_int_eq(
	    check("203.0.113.9", "x@example.com"), ERROR_RATE_LIMITED);
	sleep(3);
	ck_assert_int_eq(check("203.0.113.9", "x@example.com"), ERROR_NONE);
	/* And new failures count from zero. */
	abuse_record(&fx.svc, "203.0.113.9", "x@example.com");
	ck_assert_int_eq(check("203.0.113.9", "x@example.com"), ERROR_NONE);
}
END_TEST

/* The settings come from the environment; bad values keep the
 * defaults. */
START_TEST(test_abuse_config_environment)
{
	static const struct {
		const char *limit, *window;
		int64_t want_limit, want_window;
	} cases[] = {
	    {NULL, NULL, 20, 600},
	    {"3", "30", 3, 30},
	    {"", "", 20, 600},
	    {"0", "0", 20, 600},
	    {"-1", "-5", 20, 600},
	    {"abc", "1x", 20, 600},
	    {"99999999999999999999", "2592001", 20, 600},
	    {"1000000", "2592000", 1000000, 2592000},
	};
	struct svc_config c;
	size_t i;

	unsetenv("REDEEM_ABUSE_LIMIT_CLIENT");
	unsetenv("REDEEM_ABUSE_LIMIT_ACCOUNT");
	for (i = 0; i < NELEM(cases); i++) {
		if (cases[i].limit)
			setenv("REDEEM_ABUSE_LIMIT", cases[i].limit, 1);
		else
			unsetenv("REDEEM_ABUSE_LIMIT");
		if (cases[i].window)
			setenv("REDEEM_ABUSE_WINDOW", cases[i].window, 1);
		else
			unsetenv("REDEEM_ABUSE_WINDOW");
		svc_config_defaults(&c);
		ck_assert_msg(
		    c.abuse_limit_client == cases[i].want_limit &&
			c.abuse_limit_account == cases[i].want_limit &&
			c.abuse_window == cases[i].want_window,
		    "case %zu: %lld %lld %lld", i,
		    (long long)c.abuse_limit_client,
		    (long long)c.abuse_limit_account,
		    (long long)c.abuse_window);
	}
	setenv("REDEEM_ABUSE_LIMIT", "7", 1);
	setenv("REDEEM_ABUSE_LIMIT_ACCOUNT", "2", 1);
	svc_config_defaults(&c);
	ck_assert_int_eq(c.abuse_limit_client, 7);
	ck_assert_int_eq(c.abuse_limit_account, 2);
	unsetenv("REDEEM_ABUSE_LIMIT");
	unsetenv("REDEEM_ABUSE_LIMIT_ACCOUNT");
	unsetenv("REDEEM_ABUSE_WINDOW");
}
END_TEST

/* Hostile subjects are stored and matched as bound values. */
START_TEST(test_abuse_hostile_subjects)
{
	char long_subject[300];
	size_t i;
	const char *subjects[] = {
	    "'; DROP TABLE abuse_failures; --",
	    "j\xc3\xb6rg@example.com",
	    long_subject,
	    "%",
	    "_",
	};

	memset(long_subject, 'a', 254);
	long_subject[254] = '\0';
	limits(2, 2, 600);
	for (i = 0; i < NELEM(subjects); i++) {
		abuse_record(&fx.svc, subjects[i], subjects[i]);
		abuse_record(&fx.svc, subjects[i], subjects[i]);
		ck_assert_msg(
		    check(subjects[i], "q@example.com") == ERROR_RATE_LIMITED,
		    "subject %zu", i);
	}
	/* LIKE wildcards are not patterns; accents are not folded. */
	ck_assert_int_eq(check("anything", "jorg@example.com"), ERROR_NONE);
	ck_assert_int_eq(check("x", "y"), ERROR_NONE);
	fx_verify_clean();
}
END_TEST

Suite *
suite_abuse(void)
{
	Suite *s = suite_create("abuse");
	TCase *tc = tcase_create("abuse");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_abuse_window_counting);
	tcase_add_test(tc, test_abuse_limit_boundary);
	tcase_add_test(tc, test_abuse_client_and_account_apart);
	tcase_add_test(tc, test_abuse_kinds_apart);
	tcase_add_test(tc, test_abuse_null_client);
	tcase_add_test(tc, test_abuse_tenant_scoped);
	tcase_add_test(tc, test_abuse_sliding_window);
	tcase_add_test(tc, test_abuse_retry_after_lifts_limit);
	tcase_add_test(tc, test_abuse_short_window);
	tcase_add_test(tc, test_abuse_config_environment);
	tcase_add_test(tc, test_abuse_hostile_subjects);
	suite_add_tcase(s, tc);
	return s;
}
