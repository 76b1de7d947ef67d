/*
 * Semaphores and permits. A semaphore is a named capacity; a permit takes
 * a count from one or more semaphores at once, all or nothing, for a TTL,
 * named by the client's external_id (its idempotency key).
 *
 * One transaction per request locks the semaphores in name order (so two
 * requests that name the same semaphores in opposite orders queue instead
 * of deadlocking) and takes room with a conditional UPDATE
 * (in_use + count <= capacity) that also bumps the semaphore's fencing
 * counter under its row lock (G5, G6). A permit's fencing_token is that
 * of its first semaphore in name order; each semaphore's own token is in
 * its items.
 *
 * A permit is lost at its expires_at by the database clock, swept or not:
 * read back it says "expired", a heartbeat or a release of it answers
 * ERROR_EXPIRED / "expired" and gives its room back at once if the sweeper
 * has not. Release is one-way (acquired -> released) and idempotent.
 */
#ifndef PERMITS_H
#define PERMITS_H

#include <stdint.h>

#include "svc.h"

#define SEMAPHORE_NAME_MAX 64 /* 1-64 of [A-Za-z0-9._-] */
#define SEMAPHORE_CAPACITY_MAX INT64_C(1000000000)
#define PERMIT_ID_MAX 128 /* external_id: 1-128 of [A-Za-z0-9._~:@-] */
#define PERMIT_OWNER_MAX 254
#define PERMIT_ITEMS_MAX 16 /* semaphores per permit */
#define PERMIT_TTL_MAX 86400
#define PERMIT_EXPIRE_MAX 1000 /* permits per permit_expire_due call */
#define SEMAPHORE_WHO_MAX 254

struct semaphore {
	int64_t id;
	char name[SEMAPHORE_NAME_MAX + 1];
	int64_t capacity;
	int64_t in_use;
	int64_t leaked; /* permits past their TTL, not swept yet */
	int64_t fence;  /* the last fencing token handed out */
	int64_t created_at, updated_at;
};

enum permit_state {
	PERMIT_ACQUIRED,
	PERMIT_RELEASED,
	PERMIT_EXPIRED,
	PERMIT__MAX
};

struct permit_item {
	char name[SEMAPHORE_NAME_MAX + 1];
	int64_t count;
	int64_t fencing_token; /* out: this semaphore's token */
};

struct permit {
	int64_t id;
	char external_id[PERMIT_ID_MAX + 1];
	char owner[PERMIT_OWNER_MAX + 1];
	enum permit_state state; /* expired once past expires_at */
	int64_t fencing_token;   /* the first semaphore's, by name */
	int64_t expires_at, created_at;
	int64_t ended_at; /* when it left "acquired"; 0: not yet */
	int nitems;
	struct permit_item items[PERMIT_ITEMS_MAX]; /* by name */
};

struct permit_result {
	enum error_word error; /* ERROR_NONE: ok */
	int created;           /* permit_acquire: 1 new, 0 the same again */
	struct permit p;
	/* With ERROR_EXHAUSTED or ERROR_NOT_FOUND from permit_acquire: the
	 * semaphore that refused. */
	char semaphore[SEMAPHORE_NAME_MAX + 1];
};

const char *permit_state_name(enum permit_state);
int semaphore_name_ok(const char *);
int permit_external_id_ok(const char *);

/*
 * Creates the semaphore, or sets the capacity (0..SEMAPHORE_CAPACITY_MAX)
 * of an existing one; every change is recorded with who (1-254 bytes of
 * UTF-8: the key's label, the admin's e-mail) and the database's time. A
 * capacity below in_use is allowed: it admits nobody until enough permits
 * are released. *created (may be NULL): 1 when it was created.
 * ERROR_BAD_REQUEST or ERROR_UNAVAILABLE.
 */
enum error_word semaphore_put(struct svc *, const char *name, int64_t capacity,
    const char *who, struct semaphore *out, int *created);
/* ERROR_NOT_FOUND, ERROR_UNAVAILABLE. */
enum error_word semaphore_get(
    struct svc *, const char *name, struct semaphore *out);
/* The capacity history, oldest first: from is -1 for the creation. */
enum error_word semaphore_history(struct svc *, const char *name,
    void (*fn)(void *, const char *who, int64_t at, int64_t from, int64_t to),
    void *arg);

/*
 * Takes items[0..n) (names distinct, 1..PERMIT_ITEMS_MAX of them, counts
 * >= 1) for owner until ttl_seconds from now, all or nothing: ERROR_
 * EXHAUSTED or ERROR_NOT_FOUND names the semaphore in res->semaphore and
 * takes nothing. The same external_id again returns that permit, whatever
 * its state, with created 0 (another owner or other items: ERROR_
 * CONFLICT). ERROR_BAD_REQUEST for bad input (a name given twice too).
 * Returns 0, or -1 when the database failed.
 */
int permit_acquire(struct svc *, const char *external_id, const char *owner,
    int64_t ttl_seconds, const struct permit_item *items, int n,
    struct permit_result *);
/* A new expires_at, ttl_seconds from now; ERROR_EXPIRED for a permit past
 * its expires_at (swept or not) or released; ERROR_NOT_FOUND. */
int permit_heartbeat(struct svc *, const char *external_id, int64_t ttl_seconds,
    struct permit_result *);
/* acquired -> released, idempotent; res->p.state says "expired" when its
 * TTL had passed (its room is back either way). ERROR_NOT_FOUND. */
int permit_release(
    struct svc *, const char *external_id, struct permit_result *);
int permit_get(struct svc *, const char *external_id, struct permit_result *);

/*
 * For the sweeper, every tenant at once: up to batch
 * (1..PERMIT_EXPIRE_MAX) acquired permits past their expires_at by the
 * database clock -> expired, their room given back, in one transaction.
 * *done gets how many; call again while it equals batch. Returns 0 or -1.
 */
int permit_expire_due(struct db *, int batch, int64_t *done);

/*
 * For the staleness job: up to batch acquired permits granted more than
 * max_age seconds ago (however often renewed) -> released, their room
 * given back. *done gets how many. Returns 0 or -1.
 */
int permit_release_stale(
    struct db *, int64_t max_age, int batch, int64_t *done);

/*
 * The same two batches for one tenant (the dashboard's release of leaked
 * permits), or only its permit id when id > 0: max_age 0 is
 * permit_expire_due's (past the TTL -> expired), max_age > 0
 * permit_release_stale's (-> released). fn (may be NULL) is called inside
 * the transaction for each permit ended, after its room is back; a status
 * other than DB_OK rolls the whole batch back. Returns 0 or -1.
 */
typedef int permit_ended_fn(
    struct db *, void *arg, int64_t id, const char *external_id);
int permit_sweep_tenant(struct db *, int64_t tenant_id, int64_t id,
    int64_t max_age, int batch, permit_ended_fn *fn, void *arg, int64_t *done);
/*
 * For the cleanup job: deletes up to batch permits that ended (released
 * or expired) more than age seconds ago, with their items; their
 * external_ids are free again. Returns 0 or -1.
 */
int permit_cleanup(struct db *, int64_t age, int batch, int64_t *done);

/* The objects of the contract (new references) and whole answers. */
struct json_t *semaphore_json(const struct semaphore *);
struct json_t *permit_json(const struct permit *);
/* {"ok": true, "permit": {...}}, or the error object (with "semaphore"
 * naming the one that refused). */
struct json_t *permit_result_json(const struct permit_result *);

#endif
