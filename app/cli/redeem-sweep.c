/*
 * redeem-sweep: runs the sweeper's jobs on their intervals until SIGTERM
 * or SIGINT. Each run takes the job's lease first, so any number of
 * sweepers may run; `redeemctl sweep --once` runs them by hand.
 */
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/sweep.h"
#include "../lib/common.h"
#include "../lib/log.h"

static volatile sig_atomic_t stopping;

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void
usage(FILE *f)
{
	int j;

	fprintf(f, "usage: redeem-sweep\n\n"
		   "Runs the scheduled sweeps on REDEEM_DB (default "
		   "sqlite:var/redeem.db) until\nSIGTERM or SIGINT. Jobs and "
		   "their intervals (REDEEM_SWEEP_<JOB>=seconds):\n");
	for (j = 0; j < SWEEP__MAX; j++)
		fprintf(f, "  %-15s every %lld s\n",
		    sweep_job_name((enum sweep_job)j),
		    (long long)sweep_job_interval((enum sweep_job)j));
}

int
main(int argc, char **argv)
{
	const char *dsn = getenv("REDEEM_DB");
	time_t next[SWEEP__MAX] = {0}, now, wake;
	struct sweep_report r;
	struct sigaction sa;
	struct db *db = NULL;
	char holder[128], msg[256];
	int j;

	if (argc > 1) {
		int help = strcmp(argv[1], "--help") == 0 ||
			   strcmp(argv[1], "-h") == 0;

		usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	if (dsn == NULL || *dsn == '\0')
		dsn = "sqlite:var/redeem.db";
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sweep_holder(holder, sizeof(holder));
	log_info("redeem-sweep: %s", holder);
	while (!stopping) {
		if (db == NULL &&
		    (db = db_open(dsn, msg, sizeof(msg))) == NULL) {
			log_err("redeem-sweep: database: %s", msg);
			sleep(1);
			continue;
		}
		now = time(NULL);
		wake = now + 60;
		for (j = 0; j < SWEEP__MAX && !stopping; j++) {
			enum sweep_job job = (enum sweep_job)j;

			if (now >= next[j]) {
				if (sweep_run(db, job, holder, &r) !=
				    ERROR_NONE)
					log_warn("redeem-sweep: %s failed",
					    sweep_job_name(job));
				else if (r.done > 0)
					log_info("redeem-sweep: %s: %lld",
					    sweep_job_name(job),
					    (long long)r.done);
				next[j] = time(NULL) + sweep_job_interval(job);
			}
			if (next[j] < wake)
				wake = next[j];
		}
		now = time(NULL);
		if (!stopping && wake > now)
			sleep((unsigned)(wake - now)); /* a signal cuts it */
	}
	if (db != NULL)
		db_close(db);
	return 0;
}
