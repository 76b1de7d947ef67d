#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "migrate.h"

struct mig_tx {
	const struct migration *m;
	int applied;
};

static int
mig_one(struct db *db, void *arg)
{
	struct mig_tx *t = arg;
	struct db_stmt *st;
	int rc;

	t->applied = 0;
	rc = db_query(
	    db, STMT_MIGRATE_APPLIED, &st, "i", (int64_t)t->m->version);
	if (rc == DB_ROW) {
		db_reset(st);
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	rc = db_exec_script(db,
	    strcmp(db_engine(db), "mysql") == 0 ? t->m->mysql : t->m->sqlite);
	if (rc != DB_OK)
		return rc;
	t->applied = 1;
	return db_exec(db, STMT_MIGRATE_RECORD, NULL, "it",
	    (int64_t)t->m->version, t->m->name);
}

int
migrate_lock_wait(void)
{
	return (int)env_i64("REDEEM_MIGRATE_WAIT", MIGRATE_LOCK_WAIT, 0, 86400);
}

int
migrate_run(
    struct db *db, void (*fn)(void *, const struct migration *, int), void *arg)
{
	struct db_stmt *st;
	unsigned i;
	int rc, locked;

	/* One migrator at a time across hosts (MariaDB's named lock; SQLite
	 * has its writer lock): a lock not had within its wait is an error,
	 * never a second migrator running beside the first. */
	if ((rc = db_query(db, STMT_MIGRATE_LOCK, &st, "i",
		 (int64_t)migrate_lock_wait())) != DB_ROW)
		return -1;
	locked = !db_col_null(st, 0) && db_col_i64(st, 0) == 1;
	db_reset(st);
	if (!locked) {
		log_err("migrate: another process has been migrating this "
			"database for %d s; try again when it is done",
		    migrate_lock_wait());
		return -1;
	}
	rc = db_exec(db, STMT_MIGRATE_TABLE, NULL, "");
	for (i = 0; rc == DB_OK && i < migrations_count; i++) {
		struct mig_tx t = {&migrations[i], 0};

		rc = db_transact(db, DB_TX_WRITE, mig_one, &t);
		if (rc == DB_ROLLBACK)
			rc = DB_OK;
		if (rc == DB_OK && fn != NULL)
			fn(arg, t.m, t.applied);
	}
	if (db_query(db, STMT_MIGRATE_UNLOCK, &st, "") == DB_ROW)
		db_reset(st);
	return rc == DB_OK ? 0 : -1;
}
