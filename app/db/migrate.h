/* Numbered migrations per engine, embedded at build time; a
 * schema_migrations table records each one applied, once. */
#ifndef MIGRATE_H
#define MIGRATE_H

#include "db.h"

/* Seconds a migrator waits for another to finish (MariaDB's
 * GET_LOCK('redeem_migrate')): REDEEM_MIGRATE_WAIT, default 600 (an index
 * built on a big table takes minutes). */
#define MIGRATE_LOCK_WAIT 600
int migrate_lock_wait(void);

struct migration {
	int version;
	const char *name;
	const char *sqlite;
	const char *mysql;
};

extern const struct migration migrations[];
extern const unsigned migrations_count;

/*
 * Applies every migration not yet recorded, in order. fn (may be NULL) is
 * told of each one: applied now (1) or already there (0). Idempotent;
 * concurrent runs are serialized: one that cannot have the lock within
 * migrate_lock_wait() seconds fails (logged). Returns 0 or -1 (message in
 * db_errmsg, or logged).
 */
int migrate_run(struct db *,
    void (*fn)(void *, const struct migration *, int applied), void *arg);

#endif
