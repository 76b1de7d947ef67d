/*
 * The dashboard's background jobs: a bulk generate asked for on a page is
 * a row of admin_jobs, run later by the sweeper's generate job in batches
 * of ADMIN_JOB_BATCH codes, each batch and the job's done counter in one
 * transaction, so the page can show it advancing and a crash loses
 * nothing and counts nothing twice. A runner holds a job under a lease
 * (renewed after each batch); a killed runner's job is taken over when
 * its lease runs out, and a runner that lost its lease writes no more.
 */
#ifndef ADMIN_JOBS_H
#define ADMIN_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "svc.h"

#define ADMIN_JOB_BATCH 2000        /* codes per transaction */
#define ADMIN_JOB_COUNT_MAX 1000000 /* codes per job */
#define ADMIN_JOB_MAX_USES INT64_C(1000000000)

struct admin_job {
	int64_t id;
	char kind[16]; /* "generate" */
	char campaign[65];
	int64_t total, done, max_uses;
	int64_t expires_at; /* of the codes; 0: none */
	char state[16];     /* queued, running, done, failed */
	char error[32];     /* a failed job's error word, else "" */
	int64_t created_at, started_at, updated_at, finished_at; /* 0: not */
	int64_t now; /* the database's clock when it was read */
};

/*
 * Queues a generate job of count codes (1..ADMIN_JOB_COUNT_MAX) of the
 * svc's campaign, max_uses each (1..ADMIN_JOB_MAX_USES, 1 for a pool),
 * expiring at expires_at (0: never; else in the future); *id gets the
 * job's id. ERROR_NOT_FOUND (campaign), ERROR_BAD_REQUEST or
 * ERROR_UNAVAILABLE.
 */
enum error_word admin_job_create(struct svc *, int64_t admin_id,
    const char *campaign, int64_t count, int64_t max_uses, int64_t expires_at,
    int64_t *id);

/* The svc's tenant's job id: ERROR_NOT_FOUND (another tenant's too) or
 * ERROR_UNAVAILABLE. */
enum error_word admin_job_get(struct svc *, int64_t id, struct admin_job *);

/* Codes per second of a job so far (0 before it starts). */
double admin_job_rate(const struct admin_job *);

/*
 * The runner: takes due jobs (queued, or running with a lapsed lease)
 * one by one under a lease of lease_seconds named holder, and runs each
 * to its end. renew (may be NULL) is called after every batch: 0 stops
 * the run (the job is left to its lease). batches_max (>0) bounds the
 * batches of one call. *codes gets how many codes were made. 0, or -1
 * on a database error (the job is left to its lease).
 */
int admin_jobs_run(struct db *, const char *holder, int64_t lease_seconds,
    int64_t batches_max, int (*renew)(void *), void *renew_arg, int64_t *codes);

#endif
