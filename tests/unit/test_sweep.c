/* The sweeper's jobs and their leases. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "../../app/core/codes.h"
#include "../../app/core/holds.h"
#include "../../app/core/redeem.h"
#include "../../app/core/sweep.h"
#include "fixture.h"

/* How long a poll waits at most before the test fails: a guard against a
 * hang, not a speed claim. */
#define POLL_LIMIT 60

static volatile sig_atomic_t never;

/*
 * A sweeper process, as build/redeem-sweep runs it (sweep_loop), on the
 * test's database, with the environment the caller set; it runs until
 * it is killed. Its log goes to /dev/null.
 */
static pid_t
sweeper_start(void)
{
	pid_t pid = fork();

	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd != -1)
			dup2(fd, 2);
		sweep_loop(fx.dsn, &never);
		_exit(0);
	}
	return pid;
}

static void
kill_and_reap(pid_t pid)
{
	int status;

	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls a count until it reaches want; fails after POLL_LIMIT seconds. */
static void
await_count(const char *select, int64_t want)
{
	double limit = mono() + POLL_LIMIT;
	int64_t n;

	while ((n = fx_count(select)) != want) {
		ck_assert_msg(mono() < limit, "%s: %lld, not %lld, after %d s",
		    select, (long long)n, (long long)want, POLL_LIMIT);
		usleep(20000);
	}
}

/* n holds on one code of n seats, each of its own account, all past
 * their TTL already: what crashed holders leave behind. */
static void
leaked_holds(const char *campaign, int n, char code[96])
{
	char codes[1][96], xid[32], account[32];
	struct hold_result h;
	int i;

	fx_campaign(campaign, 0, 0, 0);
	fx_codes(campaign, 1, n, codes);
	memcpy(code, codes[0], 96);
	for (i = 0; i < n; i++) {
		snprintf(xid, sizeof(xid), "leak-%d", i);
		snprintf(account, sizeof(account), "u%d@x", i);
		ck_assert_int_eq(
		    hold_create(&fx.svc, code, account, xid, 300, NULL, &h), 0);
		ck_assert_int_eq(h.error, ERROR_NONE);
	}
	fx_sql("UPDATE holds SET expires_at = UNIX_TIMESTAMP() - 1");
}

/* After the sweep: every hold expired exactly once, every seat back. */
static void
assert_all_released(const char *code, int n)
{
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM holds WHERE state = 'expired'"), n);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM events WHERE type = "
				  "'hold.expired'"),
	    n);
	ck_assert_int_eq(fx_count("SELECT COUNT(DISTINCT payload) FROM events "
				  "WHERE type = 'hold.expired'"),
	    n);
	fx_assert_code(code, "active", 0);
	fx_verify_clean();
}

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

/*
 * A holder process takes the only seat and is killed with SIGKILL: the
 * sweeper process gives the seat back within the hold's TTL and one
 * sweep interval (by the database clock), and another account gets it.
 */
START_TEST(test_sweep_killed_holder_seat_returned)
{
	struct redeem_result res;
	struct hold_result h;
	char codes[1][96];
	int fd[2], status;
	int64_t ttl = 2, interval = 1, late;
	pid_t holder, sweeper;

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 1, codes);
	ck_assert_int_eq(pipe(fd), 0);
	holder = fork();
	ck_assert_int_ne(holder, -1);
	if (holder == 0) {
		struct db *db = fx_connect();
		struct svc svc;
		char ok = 'n';

		if (svc_open(&svc, db, "default") == ERROR_NONE &&
		    hold_create(
			&svc, codes[0], "a@x", "doomed", ttl, NULL, &h) == 0 &&
		    h.error == ERROR_NONE)
			ok = 'y';
		if (write(fd[1], &ok, 1) != 1)
			_exit(3);
		for (;;)
			pause(); /* holding, until killed */
	}
	close(fd[1]);
	{
		char ok = 0;

		ck_assert_int_eq(read(fd[0], &ok, 1), 1);
		ck_assert_int_eq(ok, 'y');
	}
	close(fd[0]);
	ck_assert_int_eq(kill(holder, SIGKILL), 0);
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	ck_assert(WIFSIGNALED(status));
	/* The seat is held, by nobody alive. */
	ck_assert_int_eq(fx_count("SELECT uses FROM codes"), 1);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "b@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_EXHAUSTED);

	setenv("REDEEM_SWEEP_RELEASE_LEAKED", "1", 1);
	sweeper = sweeper_start();
	unsetenv("REDEEM_SWEEP_RELEASE_LEAKED");
	await_count("SELECT COUNT(*) FROM holds WHERE state = 'expired'", 1);
	kill_and_reap(sweeper);
	/* Within TTL + one interval of the hold's creation, by the
	 * database's whole seconds (one more for the sweeper's sleep, which
	 * counts whole seconds too). */
	late = fx_count("SELECT ended_at - expires_at FROM holds");
	ck_assert_msg(late <= interval + 1,
	    "released %lld s after expiry, interval %lld s", (long long)late,
	    (long long)interval);
	ck_assert_int_eq(
	    fx_count("SELECT expires_at - created_at FROM holds"), ttl);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "b@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	fx_verify_clean();
}
END_TEST

/* Two sweeper processes at once on 2,000 leaked holds (3 batches): every
 * hold is expired once, with one event, and every seat comes back once. */
START_TEST(test_sweep_two_sweepers_at_once)
{
	char code[96];
	pid_t a, b;

	leaked_holds("k", 2000, code);
	setenv("REDEEM_SWEEP_RELEASE_LEAKED", "1", 1);
	a = sweeper_start();
	b = sweeper_start();
	unsetenv("REDEEM_SWEEP_RELEASE_LEAKED");
	await_count("SELECT COUNT(*) FROM holds WHERE state = 'held'", 0);
	kill_and_reap(a);
	kill_and_reap(b);
	assert_all_released(code, 2000);
}
END_TEST

/*
 * A sweeper killed with SIGKILL while it works through 2,400 leaked
 * holds in 24 batches of 100 (REDEEM_SWEEP_BATCH): the batch it was in
 * leaves nothing half done (the count of expired holds is a whole number
 * of batches), its lease runs out, and a new sweeper takes the job over
 * and finishes it, each hold expired once.
 */
START_TEST(test_sweep_killed_mid_batch_resumes)
{
	char code[96], holder[128];
	int64_t n = 0, lease;
	pid_t a, b;
	int tries;

	leaked_holds("k", 2400, code);
	setenv("REDEEM_SWEEP_RELEASE_LEAKED", "1", 1);
	setenv("REDEEM_SWEEP_LEASE", "3", 1);
	setenv("REDEEM_SWEEP_BATCH", "100", 1);
	/* Killed once its first batch shows: in the middle of one of the
	 * other 23, most often; a sweeper quicker than the poll gets another
	 * go. */
	for (tries = 0; tries < 20; tries++) {
		a = sweeper_start();
		/* fx_count writes (its probe row): a pause between polls
		 * keeps it from starving the sweeper of the writer lock. */
		while ((n = fx_count("SELECT COUNT(*) FROM holds WHERE state "
				     "= 'expired'")) == 0)
			usleep(2000);
		kill_and_reap(a);
		n = fx_count(
		    "SELECT COUNT(*) FROM holds WHERE state = 'expired'");
		ck_assert_msg(
		    n % 100 == 0, "a killed batch left %lld", (long long)n);
		if (n < 2400)
			break;
		fx_sql("UPDATE holds SET state = 'held', ended_at = NULL");
		fx_sql("UPDATE codes SET uses = 2400");
		fx_sql("DELETE FROM events WHERE type = 'hold.expired'");
		fx_sql("UPDATE sweep_leases SET expires_at = 0");
	}
	ck_assert_msg(n < 2400, "the sweeper always finished before its kill");
	/* The dead sweeper's lease is still there. */
	lease = fx_count("SELECT COUNT(*) FROM sweep_leases WHERE job = "
			 "'release_leaked' AND expires_at > UNIX_TIMESTAMP()");
	ck_assert_int_eq(lease, 1);
	b = sweeper_start();
	unsetenv("REDEEM_SWEEP_RELEASE_LEAKED");
	unsetenv("REDEEM_SWEEP_LEASE");
	unsetenv("REDEEM_SWEEP_BATCH");
	await_count("SELECT COUNT(*) FROM holds WHERE state = 'held'", 0);
	kill_and_reap(b);
	assert_all_released(code, 2400);
	/* The new sweeper finished the job under its own name. */
	snprintf(holder, sizeof(holder),
	    "SELECT COUNT(*) FROM sweep_leases WHERE job = 'release_leaked' "
	    "AND holder LIKE '%%:%ld'",
	    (long)b);
	ck_assert_int_eq(fx_count(holder), 1);
}
END_TEST

Suite *
suite_sweep(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("sweep");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_sweep_job_names_and_intervals);
	tcase_add_test(tc, test_sweep_lease_skips_and_expires);
	tcase_add_test(tc, test_sweep_expire_codes_in_batches);
	tcase_add_test(tc, test_sweep_cleanup_old_failures);
	tcase_add_test(tc, test_sweep_killed_holder_seat_returned);
	tcase_add_test(tc, test_sweep_two_sweepers_at_once);
	tcase_add_test(tc, test_sweep_killed_mid_batch_resumes);
	suite_add_tcase(s, tc);
	return s;
}
