/*
 * redeem-sweep: runs the sweeper's jobs on their intervals until SIGTERM
 * or SIGINT. Each run takes the job's lease first, so any number of
 * sweepers may run; `redeemctl sweep --once` runs them by hand.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sweep.h"

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
	fprintf(f,
	    "A job works in batches of at most %d rows (REDEEM_SWEEP_BATCH), "
	    "each its own\ntransaction, under a lease of %lld s "
	    "(REDEEM_SWEEP_LEASE) renewed after each\nbatch, so two "
	    "sweepers never run the same job at once and a killed\n"
	    "sweeper's jobs are taken over when its leases run out.\n",
	    sweep_batch(), (long long)sweep_lease_seconds());
}

int
main(int argc, char **argv)
{
	const char *dsn = getenv("REDEEM_DB");
	struct sigaction sa;

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
	sweep_loop(dsn, &stopping);
	return 0;
}
