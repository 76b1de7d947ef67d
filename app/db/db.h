/*
 * Driver-neutral database API. Statements come only from the fixed catalog
 * (catalog.h) and are prepared once per connection, on first use; values
 * are always bound. Errors are classified for the service layer.
 *
 * Ownership: struct db owns its connection and every prepared statement;
 * a struct db_stmt pointer stays valid until db_close. Text returned by
 * db_col_text is owned by the statement and valid until the next
 * db_step/db_reset on it.
 */
#ifndef DB_H
#define DB_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

enum db_status {
	DB_OK = 0,       /* call succeeded; db_step: statement finished */
	DB_ROW = 1,      /* db_step: a row is ready */
	DB_ROLLBACK = 2, /* a db_transact body asked for a rollback */
	DB_EUNIQUE = -1, /* unique or primary key violation */
	DB_ECHECK = -2,  /* CHECK, NOT NULL or foreign key violation */
	DB_EBUSY = -3,   /* busy, deadlock, lock wait timeout: retry */
	DB_ELOST = -4,   /* connection lost: next db_begin reconnects once */
	DB_EFAIL = -5,   /* anything else */
};

enum db_tx {
	DB_TX_WRITE, /* SQLite: BEGIN IMMEDIATE; MySQL: START TRANSACTION */
	DB_TX_READ,  /* one consistent snapshot, read only */
	DB_TX__MAX
};

struct db;
struct db_stmt;

/* Bounded retries of a transaction that met DB_EBUSY: this many, and
 * none started after this many seconds (a busy database answers
 * "unavailable" rather than hang). */
#define DB_RETRIES 12
#define DB_RETRY_SECONDS 10

/*
 * dsn: "sqlite:PATH" or "mysql://[user[:password]@]host[:port]/database
 * [?socket=/path]". Returns NULL and a message in err on failure.
 */
struct db *db_open(const char *dsn, char *err, size_t errlen);
void db_close(struct db *);
/* "sqlite" or "mysql": for messages and reports only, never for SQL. */
const char *db_engine(const struct db *);
/* The last error message of the connection (never a bound value). */
const char *db_errmsg(const struct db *);

int db_begin(struct db *, enum db_tx);
int db_commit(struct db *);
int db_rollback(struct db *);

/*
 * Runs fn inside a transaction: commits when fn returns DB_OK, rolls back
 * otherwise. DB_EBUSY (from fn or the commit) is retried up to DB_RETRIES
 * times with jittered backoff, DB_ELOST once after a reconnect; fn must
 * therefore reset its own outputs each time it starts. Returns DB_OK,
 * DB_ROLLBACK, or the error that ended the attempts.
 */
typedef int (*db_tx_fn)(struct db *, void *arg);
int db_transact(struct db *, enum db_tx, db_tx_fn fn, void *arg);
/*
 * Batches: between db_batch_begin and db_batch_end every db_transact runs
 * as a savepoint of one write transaction (its failure undoes only its
 * own work), so that many short transactions share one commit, one sync
 * and one turn at the writer lock. Only where the engine gains from it
 * (SQLite, one writer at a time); elsewhere both calls do nothing and
 * transactions stay separate. If db_batch_end fails, every transaction of
 * the batch is undone and none may be reported as done. Reads in a batch
 * see the batch's own writes.
 */
int db_batch_begin(struct db *);
int db_batch_end(struct db *);
int db_batching(const struct db *);

/* How many times db_transact retried since the connection opened. */
int64_t db_retries(const struct db *);

/* A block of a counter's numbers that this connection reserved (one
 * committed UPDATE for many numbers) and hands out itself: key names
 * the counter, next..end the numbers left. It lives as long as the
 * connection, never in another database. */
struct db_block {
	int64_t key, next, end;
};
struct db_block *db_block(struct db *);

struct db_stmt *db_prepare(struct db *, enum stmt_id);
/* Parameters are numbered from 1; text is copied. */
void db_bind_i64(struct db_stmt *, int, int64_t);
void db_bind_text(struct db_stmt *, int, const char *); /* NULL binds NULL */
void db_bind_null(struct db_stmt *, int);
int db_step(struct db_stmt *);
/* Columns are numbered from 0. */
int64_t db_col_i64(struct db_stmt *, int);
const char *db_col_text(struct db_stmt *, int); /* NULL for SQL NULL */
int db_col_null(struct db_stmt *, int);
void db_reset(struct db_stmt *);
/* Rows matched by the last write of this statement. */
int64_t db_changes(const struct db_stmt *);
/* The id of the row the last INSERT of this statement created. */
int64_t db_last_id(const struct db_stmt *);

/*
 * Shorthands. fmt has one letter per parameter: 'i' int64_t, 't' const
 * char * (NULL binds NULL), 'n' a nullable int64_t given as const int64_t *.
 * db_exec runs the statement to its end and stores matched rows in
 * *changes (may be NULL). db_query steps once: DB_ROW leaves *out
 * positioned on the first row (the caller reads it, then db_reset),
 * DB_OK means no row (already reset).
 */
int db_exec(struct db *, enum stmt_id, int64_t *changes, const char *fmt, ...);
/* The same, and *last_id gets the id the statement made (an INSERT's
 * row, or LAST_INSERT_ID(expr) of an UPDATE); 0 on failure. */
int db_exec_id(struct db *, enum stmt_id, int64_t *changes, int64_t *last_id,
    const char *fmt, ...);
int db_query(
    struct db *, enum stmt_id, struct db_stmt **out, const char *fmt, ...);

/*
 * Deletes a batch in one write transaction: the ids that the query pick
 * gives for (age, limit), then for each id every statement of del in
 * order, each with the id as its one parameter. *done: how many ids.
 * Returns DB_OK or a DB_E* code.
 */
int db_purge(struct db *, enum stmt_id pick, int64_t age, int limit,
    const enum stmt_id *del, int ndel, int64_t *done);

/* Runs a script of several statements (migrations only). */
int db_exec_script(struct db *, const char *sql);

/* Sleeps a jittered, growing delay for retry number attempt. */
void db_backoff(int attempt);

#endif
