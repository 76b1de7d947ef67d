/*
 * The dashboard's bulk generate jobs (admin_jobs.c) and the import with a
 * per-line report (codes_import_report): a job runs to done with exact
 * counts, a second runner does not run a held job, a lapsed lease is
 * taken over without a code too many, other tenants see nothing, bad
 * input is refused; an import writes the good lines and reports the rest.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "../../app/core/admin_jobs.h"
#include "../../app/core/codes.h"
#include "../../app/lib/common.h"
#include "fixture.h"

Suite *suite_admin_jobs(void);

static int64_t
job_new(const char *campaign, int64_t count, int64_t max_uses)
{
	int64_t id = 0;

	ck_assert_int_eq(
	    admin_job_create(&fx.svc, 0, campaign, count, max_uses, 0, &id),
	    ERROR_NONE);
	ck_assert_int_gt(id, 0);
	return id;
}

static int64_t
run(const char *holder, int64_t batches)
{
	int64_t codes = -1;

	ck_assert_int_eq(
	    admin_jobs_run(fx.db, holder, 60, batches, NULL, NULL, &codes), 0);
	return codes;
}

static int64_t
codes_of(const char *campaign)
{
	char q[200];

	snprintf(q, sizeof(q),
	    "SELECT COUNT(*) FROM codes c JOIN campaigns k ON k.id = "
	    "c.campaign_id WHERE k.name = '%s'",
	    campaign);
	return fx_count(q);
}

START_TEST(test_admin_jobs_run_to_done)
{
	struct admin_job j;
	int64_t id;

	fx_campaign("gen", 0, 0, 0);
	id = job_new("gen", 5000, 3);
	ck_assert_int_eq(admin_job_get(&fx.svc, id, &j), ERROR_NONE);
	ck_assert_str_eq(j.state, "queued");
	ck_assert_str_eq(j.campaign, "gen");
	ck_assert_int_eq(j.done, 0);
	ck_assert_int_eq(run("runner:1", 1000), 5000);
	ck_assert_int_eq(admin_job_get(&fx.svc, id, &j), ERROR_NONE);
	ck_assert_str_eq(j.state, "done");
	ck_assert_int_eq(j.done, 5000);
	ck_assert_int_eq(j.total, 5000);
	ck_assert_int_gt(j.finished_at, 0);
	ck_assert_int_eq(codes_of("gen"), 5000);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM codes WHERE max_uses <> 3"), 0);
	/* Nothing is left to run. */
	ck_assert_int_eq(run("runner:1", 1000), 0);
	ck_assert_int_eq(codes_of("gen"), 5000);
}
END_TEST

START_TEST(test_admin_jobs_second_runner_waits)
{
	struct admin_job j;
	int64_t id;

	fx_campaign("gen", 0, 0, 0);
	id = job_new("gen", 3000, 1);
	/* A runs one batch and keeps the lease. */
	ck_assert_int_eq(run("A:1", 1), ADMIN_JOB_BATCH);
	ck_assert_int_eq(admin_job_get(&fx.svc, id, &j), ERROR_NONE);
	ck_assert_str_eq(j.state, "running");
	ck_assert_int_eq(j.done, ADMIN_JOB_BATCH);
	/* B finds nothing it may run. */
	ck_assert_int_eq(run("B:2", 1000), 0);
	ck_assert_int_eq(codes_of("gen"), ADMIN_JOB_BATCH);
	/* A goes on where it stopped. */
	ck_assert_int_eq(run("A:1", 1000), 3000 - ADMIN_JOB_BATCH);
	ck_assert_int_eq(admin_job_get(&fx.svc, id, &j), ERROR_NONE);
	ck_assert_str_eq(j.state, "done");
	ck_assert_int_eq(j.done, 3000);
	ck_assert_int_eq(codes_of("gen"), 3000);
}
END_TEST

START_TEST(test_admin_jobs_lapsed_lease_taken_over)
{
	struct admin_job j;
	int64_t id;

	fx_campaign("gen", 0, 0, 0);
	id = job_new("gen", 5000, 1);
	ck_assert_int_eq(run("A:1", 1), ADMIN_JOB_BATCH);
	/* A dies: its lease runs out. */
	fx_sql("UPDATE admin_jobs SET lease_until = 0");
	ck_assert_int_eq(run("B:2", 1), ADMIN_JOB_BATCH);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM admin_jobs WHERE lease_holder = "
		     "'B:2'"),
	    1);
	/* A comes back: the job is B's now. */
	ck_assert_int_eq(run("A:1", 1000), 0);
	ck_assert_int_eq(run("B:2", 1000), 5000 - 2 * ADMIN_JOB_BATCH);
	ck_assert_int_eq(admin_job_get(&fx.svc, id, &j), ERROR_NONE);
	ck_assert_str_eq(j.state, "done");
	ck_assert_int_eq(j.done, 5000);
	ck_assert_int_eq(codes_of("gen"), 5000);
}
END_TEST

START_TEST(test_admin_jobs_tenant_and_bad_input)
{
	struct admin_job j;
	struct svc other;
	int64_t id, none;

	fx_campaign("gen", 0, 0, 0);
	fx_campaign("pool", 1, 0, 0);
	id = job_new("gen", 10, 1);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(admin_job_get(&other, id, &j), ERROR_NOT_FOUND);
	ck_assert_int_eq(admin_job_get(&fx.svc, id + 1, &j), ERROR_NOT_FOUND);
	ck_assert_int_eq(admin_job_create(&other, 0, "gen", 10, 1, 0, &none),
	    ERROR_NOT_FOUND);
	ck_assert_int_eq(admin_job_create(&fx.svc, 0, "gen", 0, 1, 0, &none),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(admin_job_create(&fx.svc, 0, "gen",
			     ADMIN_JOB_COUNT_MAX + 1, 1, 0, &none),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(admin_job_create(&fx.svc, 0, "gen", 10, 0, 0, &none),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(
	    admin_job_create(&fx.svc, 0, "gen", 10, 1, 1000, &none),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(admin_job_create(&fx.svc, 0, "pool", 10, 2, 0, &none),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_jobs"), 1);
}
END_TEST

struct refusals {
	int n;
	int64_t line[16];
	char why[16][128];
	char text[16][64];
};

static void
refused(void *arg, int64_t line, const char *text, size_t tlen, const char *why)
{
	struct refusals *r = arg;

	ck_assert_int_lt(r->n, 16);
	r->line[r->n] = line;
	snprintf(r->why[r->n], sizeof(r->why[0]), "%s", why);
	snprintf(r->text[r->n], sizeof(r->text[0]), "%.*s", (int)tlen, text);
	r->n++;
}

START_TEST(test_admin_jobs_import_report)
{
	static const char csv[] = "code,max_uses\r\n"
				  "GOOD-ONE-AA\r\n"
				  "bad*code\n"
				  "GOOD-TWO-BB,5\n"
				  "\n"
				  "GOOD-ONE-AA\n"
				  "THREE-CC,0\n"
				  "a,1,2,3\n"
				  "NUL\0BYTE\n"
				  "EXISTING\n"
				  "LAST-ONE";
	struct codes_import im;
	struct refusals r;
	char made[1][96];

	fx_campaign("imp", 0, 0, 0);
	fx_codes("imp", 1, 1, made);
	memset(&r, 0, sizeof(r));
	memset(&im, 0, sizeof(im));
	im.campaign = "imp";
	im.max_uses = 2;
	/* A code that exists already: the one generated above. */
	{
		char text[sizeof(csv) + 96];
		size_t n = sizeof(csv) - 1, at;
		const char *e = memmem(csv, n, "EXISTING", 8);

		at = (size_t)(e - csv);
		memcpy(text, csv, at);
		memcpy(text + at, made[0], strlen(made[0]));
		memcpy(text + at + strlen(made[0]), e + 8, n - at - 8);
		n = n - 8 + strlen(made[0]);
		ck_assert_int_eq(
		    codes_import_report(&fx.svc, text, n, 0, &im, refused, &r),
		    ERROR_NONE);
	}
	ck_assert_int_eq(im.created, 3);
	ck_assert_int_eq(im.duplicates, 2);
	ck_assert_int_eq(im.refused, 6);
	ck_assert_int_eq(r.n, 6);
	/* Bad lines first, in order, then the duplicates of their chunk. */
	ck_assert_int_eq(r.line[0], 3);
	ck_assert_str_eq(r.text[0], "bad*code");
	ck_assert_int_eq(r.line[1], 7);
	ck_assert(strstr(r.why[1], "max_uses") != NULL);
	ck_assert_int_eq(r.line[2], 8);
	ck_assert(strstr(r.why[2], "columns") != NULL);
	ck_assert_int_eq(r.line[3], 9);
	ck_assert(strstr(r.why[3], "NUL") != NULL);
	ck_assert_int_eq(r.line[4], 6);
	ck_assert(strstr(r.why[4], "duplicate") != NULL);
	ck_assert_int_eq(r.line[5], 10);
	ck_assert(strstr(r.why[5], "duplicate") != NULL);
	ck_assert_int_eq(
	    fx_count("SELECT max_uses FROM codes WHERE code = 'GOODTWOBB'"), 5);
	ck_assert_int_eq(
	    fx_count("SELECT max_uses FROM codes WHERE code = 'LASTONE'"), 2);
	/* With the check character asked for: a made-up code is refused. */
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(
	    codes_import_report(&fx.svc, "ABCDEFGH\n", 9, 1, &im, refused, &r),
	    ERROR_NONE);
	ck_assert_int_eq(im.created, 0);
	ck_assert_int_eq(r.n, 1);
	ck_assert(strstr(r.why[0], "check character") != NULL);
	im.campaign = "nope";
	ck_assert_int_eq(
	    codes_import_report(&fx.svc, "X\n", 2, 0, &im, refused, &r),
	    ERROR_NOT_FOUND);
}
END_TEST

Suite *
suite_admin_jobs(void)
{
	Suite *s = suite_create("admin_jobs");
	TCase *tc = tcase_create("admin_jobs");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_admin_jobs_run_to_done);
	tcase_add_test(tc, test_admin_jobs_second_runner_waits);
	tcase_add_test(tc, test_admin_jobs_lapsed_lease_taken_over);
	tcase_add_test(tc, test_admin_jobs_tenant_and_bad_input);
	tcase_add_test(tc, test_admin_jobs_import_report);
	suite_add_tcase(s, tc);
	return s;
}
