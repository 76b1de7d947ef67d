/* The sweeper's jobs and their leases. */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "../../app/core/sweep.h"
#include "fixture.h"

START_TEST(test_sweep_job_names_and_intervals)
{
	enum sweep_job j;

	ck_assert_int_eq(sweep_job_parse("release_leaked", &j), 0);
	ck_assert_int_eq(j, SWEEP_RELEASE_LEAKED);
	ck_assert_int_eq(sweep_job_parse("nope", &j), -1);
	ck_assert_int_eq(sweep_job_parse(NULL, &j), -1);
	ck_assert_int_eq(sweep_job_interval(SWEEP_EXPIRE), 60);
	ck_assert_int_eq(sweep_job_interval(SWEEP_DELIVER), 1);
	ck_assert_str_eq(sweep_job_name(SWEEP_CLEANUP), "cleanup");
}
END_TEST

/* A lease held by another sweeper makes the job skip; once it has run
 * out, the job runs. */
START_TEST(test_sweep_lease_skips_and_expires)
{
	struct sweep_report r;

	fx_sql("UPDATE sweep_leases SET holder = 'other:1', expires_at = "
	       "UNIX_TIMESTAMP() + 300 WHERE job = 'expire'");
	ck_assert_int_eq(sweep_run(fx.db, SWEEP_EXPIRE, "me:2", &r), 0);
	ck_assert_int_eq(r.skipped, 1);
	ck_assert_int_eq(r.batches, 0);
	/* Its own lease does not stop a sweeper (a restarted one). */
	ck_assert_int_eq(sweep_run(fx.db, SWEEP_EXPIRE, "other:1", &r), 0);
	ck_assert_int_eq(r.skipped, 0);
	fx_sql("UPDATE sweep_leases SET holder = 'other:1', expires_at = "
	       "UNIX_TIMESTAMP() - 1 WHERE job = 'expire'");
	ck_assert_int_eq(sweep_run(fx.db, SWEEP_EXPIRE, "me:2", &r), 0);
	ck_assert_int_eq(r.skipped, 0);
	ck_assert_int_eq(r.batches, 1);
	/* Given back when done, with the time and the count. */
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM sweep_leases WHERE "
				  "job = 'expire' AND expires_at = 0 AND "
				  "holder = 'me:2' AND last_done = 0 AND "
				  "last_run_at IS NOT NULL"),
	    1);
}
END_TEST

/* Active codes past their expiry become expired, in batches; nothing
 * else changes. */
START_TEST(test_sweep_expire_codes_in_batches)
{
	static char codes[1900][96];
	struct sweep_report r;
	struct redeem_result res;
	struct code_info ci;

	fx_campaign("exp", 0, 0, 0);
	fx_codes_with("exp", 1900, 1, 0, 0, codes);
	ck_assert_int_eq(
	    redeem_code(&fx.svc, codes[0], "a@example.com", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(code_revoke(&fx.svc, codes[1], &ci), ERROR_NONE);
	/* codes[0] and [1] are the first two ids. */
	fx_sql("UPDATE codes SET expires_at = UNIX_TIMESTAMP() - 5 WHERE "
	       "id <= (SELECT MIN(id) + 1799 FROM codes)");
	fx_sql("UPDATE codes SET expires_at = UNIX_TIMESTAMP() + 600 WHERE "
	       "id > (SELECT MIN(id) + 1849 FROM codes)");
	fx_assert_code(codes[0], "redeemed", 1);
	ck_assert_int_eq(sweep_run(fx.db, SWEEP_EXPIRE, "me:1", &r), 0);
	ck_assert_int_eq(r.done, 1798);
	ck_assert_int_eq(r.batches, 3); /* 800, 800, 198 */
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM codes WHERE state = 'expired'"),
	    1798);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM codes WHERE state = 'active'"), 100);
	ck_assert_int_eq(sweep_run(fx.db, SWEEP_EXPIRE, "me:1", &r), 0);
	ck_assert_int_eq(r.done, 0);
	fx_assert_code(codes[0], "redeemed", 1);
	fx_assert_code(codes[1], "revoked", 0);
	fx_verify_clean();
}
END_TEST

/* Failed attempts older than the gate's window are deleted. */
START_TEST(test_sweep_cleanup_old_failures)
{
	struct sweep_report r;

	fx_sql("INSERT INTO abuse_failures (tenant_id, kind, subject, at) "
	       "VALUES (1, 1, 'a', UNIX_TIMESTAMP() - 100000), "
	       "(1, 1, 'b', UNIX_TIMESTAMP() - 100000), "
	       "(1, 2, 'c', UNIX_TIMESTAMP())");
	ck_assert_int_eq(sweep_run(fx.db, SWEEP_CLEANUP, "me:1", &r), 0);
	ck_assert_int_eq(r.done, 2);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures"), 1);
}
END_TEST

Suite *
suite_sweep(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("sweep");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sweep_job_names_and_intervals);
	tcase_add_test(tc, test_sweep_lease_skips_and_expires);
	tcase_add_test(tc, test_sweep_expire_codes_in_batches);
	tcase_add_test(tc, test_sweep_cleanup_old_failures);
	suite_add_tcase(s, tc);
	return s;
}
