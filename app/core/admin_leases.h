/*
 * The dashboard's semaphores and leaked permits, read side and releases:
 * a tenant's semaphores with their holders; its leaked holds and permits
 * (the spec's definition, the overview's count: held or acquired, past
 * the TTL by the database clock and not swept yet, or acquired longer
 * than the staleness limit); releasing one or all of them through the
 * sweeper's own batches (holds.c, permits.c), each release with its audit
 * row in the same transaction; the sweeper's jobs' last runs. The caller
 * owns every struct; rows passed to a callback are valid during the call
 * only.
 */
#ifndef ADMIN_LEASES_H
#define ADMIN_LEASES_H

#include <stdint.h>

#include "holds.h"
#include "permits.h"
#include "stats.h"
#include "svc.h"
#include "sweep.h"

#define ADMIN_LEASES_MAX 200 /* rows per list: the most overdue */
/* The staleness job's limit (sweep.c), the overview's too. */
#define ADMIN_LEASES_STALE STATS_STALE_SECONDS
#define ADMIN_LEASES_BATCH 200 /* releases per transaction */

struct admin_semaphore {
	struct semaphore m;
	int64_t holders; /* acquired permits within their TTL */
	int64_t leaked;  /* acquired permits past it */
};

/* fn gets up to ADMIN_LEASES_MAX semaphores by name; *more is 1 when
 * there are more. ERROR_NONE or ERROR_UNAVAILABLE. */
enum error_word admin_semaphores(struct svc *,
    void (*fn)(void *, const struct admin_semaphore *), void *arg, int *more);

/* An acquired permit: on a semaphore's page (token and count are that
 * semaphore's) or on the leaked page (semaphores names them all). */
struct admin_permit {
	int64_t id;
	char external_id[PERMIT_ID_MAX + 1];
	char owner[PERMIT_OWNER_MAX + 1];
	int64_t fencing_token, count;
	int64_t created_at, expires_at;
	char semaphores[PERMIT_ITEMS_MAX * (SEMAPHORE_NAME_MAX + 2) + 1];
	int64_t now; /* the database clock */
};

/* The acquired permits on semaphore id (the caller found it with
 * semaphore_get, in its tenant), oldest first, up to ADMIN_LEASES_MAX.
 * ERROR_NONE or ERROR_UNAVAILABLE. */
enum error_word admin_semaphore_holders(struct svc *, int64_t semaphore_id,
    void (*fn)(void *, const struct admin_permit *), void *arg);

struct admin_leaked_hold {
	int64_t id;
	char external_id[HOLD_ID_MAX + 1];
	char code[CODE_DISPLAY_MAX];
	char account[ACCOUNT_MAX + 1];
	char campaign[CAMPAIGN_NAME_MAX + 1];
	int64_t created_at, expires_at;
};

/* The leaked page's totals, in one read transaction with its lists. */
struct admin_leaked {
	int64_t holds;   /* held, past the TTL */
	int64_t permits; /* acquired, past the TTL */
	int64_t stale;   /* acquired longer than ADMIN_LEASES_STALE, in TTL */
	int64_t now;     /* the database clock */
};

/* The totals, and up to ADMIN_LEASES_MAX of each list: holds and permits
 * most overdue first, stale permits oldest first. ERROR_NONE or
 * ERROR_UNAVAILABLE. */
enum error_word admin_leaked(struct svc *, struct admin_leaked *,
    void (*on_hold)(void *, const struct admin_leaked_hold *),
    void (*on_permit)(void *, const struct admin_permit *),
    void (*on_stale)(void *, const struct admin_permit *), void *arg);

/*
 * Releases the tenant's leaked hold or permit id as the sweeper would (a
 * hold or a permit past its TTL -> expired, a stale permit -> released,
 * seats and room back, hold.expired events), with one audit row by
 * admin_id from ip in the same transaction. ERROR_NONE; ERROR_NOT_FOUND
 * when the id is not the tenant's; ERROR_CONFLICT when it is no longer
 * leaked (released or swept meanwhile; nothing written);
 * ERROR_UNAVAILABLE.
 */
enum error_word admin_leaked_release_hold(
    struct svc *, int64_t admin_id, const char *ip, int64_t id);
enum error_word admin_leaked_release_permit(
    struct svc *, int64_t admin_id, const char *ip, int64_t id);

/*
 * Releases every leaked hold and permit of the tenant, in the sweeper's
 * batches and order (past the TTL, then stale), one audit row per item
 * in the transaction of its batch. *holds, *permits get how many.
 * ERROR_NONE or ERROR_UNAVAILABLE (the batches committed before stay).
 */
enum error_word admin_leaked_release_all(struct svc *, int64_t admin_id,
    const char *ip, int64_t *holds, int64_t *permits);

struct admin_sweep_job {
	enum sweep_job job;
	char holder[128];   /* "" when no sweeper holds its lease */
	int64_t lease_ends; /* 0: free */
	int64_t last_run;   /* 0: never */
	int64_t last_done;  /* rows its last run changed */
	int64_t interval;   /* sweep_job_interval */
	int late;           /* never run, or not for over twice its interval */
	int64_t now;        /* the database clock */
};

/* Each sweep job, in the sweeper's order. ERROR_NONE or
 * ERROR_UNAVAILABLE. */
enum error_word admin_sweep_status(struct svc *,
    void (*fn)(void *, const struct admin_sweep_job *), void *arg);

#endif
