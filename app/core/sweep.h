/*
 * The scheduled sweeps of the spec: each job runs under a lease row of
 * its own (sweep_leases), in batches, by the database's clock. The
 * sweeper process and `redeemctl sweep --once` are thin faces on this.
 */
#ifndef SWEEP_H
#define SWEEP_H

#include <signal.h>
#include <stdint.h>

#include "../db/db.h"
#include "errors.h"

enum sweep_job {
	SWEEP_EXPIRE,
	SWEEP_RELEASE_LEAKED,
	SWEEP_STALENESS,
	SWEEP_DELIVER,
	SWEEP_CLEANUP,
	SWEEP_GENERATE, /* the dashboard's bulk generate jobs (admin_jobs.h) */
	SWEEP__MAX
};

struct sweep_report {
	int skipped;  /* another sweeper holds the lease */
	int64_t done; /* rows the job changed */
	int64_t batches;
};

const char *sweep_job_name(enum sweep_job);
int sweep_job_parse(const char *, enum sweep_job *);
/* Seconds between runs: the spec's default, or REDEEM_SWEEP_<JOB>
 * (e.g. REDEEM_SWEEP_EXPIRE=30). */
int64_t sweep_job_interval(enum sweep_job);

/* Seconds a job's lease lasts (REDEEM_SWEEP_LEASE, default 60); renewed
 * after every batch, so only a dead sweeper's lease runs out. */
int64_t sweep_lease_seconds(void);
/* Rows a batch of a job takes at most, each batch one transaction
 * (REDEEM_SWEEP_BATCH, 1 to 10,000, default 800). */
int sweep_batch(void);

/* A name for this sweeper in lease rows: host:pid. */
void sweep_holder(char *out, size_t len);

/*
 * Runs one job now, whatever its interval: takes the lease (or reports
 * skipped), works through its batches, gives the lease back. Returns
 * ERROR_NONE or ERROR_UNAVAILABLE.
 */
enum error_word sweep_run(
    struct db *, enum sweep_job, const char *holder, struct sweep_report *);

/*
 * The sweeper: runs every job on its interval on dsn until *stop is set
 * (from a signal handler), opening the database again after a failure.
 * Any number may run at once; the leases share the jobs out.
 */
void sweep_loop(const char *dsn, volatile sig_atomic_t *stop);

#endif
