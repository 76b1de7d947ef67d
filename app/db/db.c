/* The driver-neutral half of the database layer: DSNs, statement cache,
 * binding shorthands and the retrying transaction runner. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "db_driver.h"

static int
pct_decode(const char *s, size_t n, char *out, size_t outsz)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%' && i + 2 < n &&
		    isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char hx[3] = {s[i + 1], s[i + 2], 0};

			c = (int)strtol(hx, NULL, 16);
			i += 2;
		}
		if (o + 1 >= outsz || c == 0)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

static int
dsn_parse(const char *s, struct dsn *d, char *err, size_t errlen)
{
	const char *p, *at, *slash, *q, *hostend, *colon;

	memset(d, 0, sizeof(*d));
	if (strncmp(s, "sqlite:", 7) == 0) {
		str_copy(d->engine, "sqlite", sizeof(d->engine));
		p = s + 7;
		if (strncmp(p, "//", 2) == 0)
			p += 2;
		if (*p == '\0' || str_copy(d->path, p, sizeof(d->path)) == -1) {
			snprintf(err, errlen, "sqlite DSN needs a file path");
			return -1;
		}
		return 0;
	}
	if (strncmp(s, "mysql://", 8) != 0 &&
	    strncmp(s, "mariadb://", 10) != 0) {
		snprintf(err, errlen,
		    "unknown database URL (want sqlite:PATH or mysql://...)");
		return -1;
	}
	str_copy(d->engine, "mysql", sizeof(d->engine));
	p = strstr(s, "://") + 3;
	slash = strchr(p, '/');
	if (slash == NULL) {
		snprintf(err, errlen, "mysql DSN needs /database");
		return -1;
	}
	at = memchr(p, '@', (size_t)(slash - p));
	if (at != NULL) {
		colon = memchr(p, ':', (size_t)(at - p));
		if (pct_decode(p, (size_t)((colon ? colon : at) - p), d->user,
			sizeof(d->user)) == -1 ||
		    (colon != NULL &&
			pct_decode(colon + 1, (size_t)(at - colon - 1),
			    d->password, sizeof(d->password)) == -1)) {
			snprintf(err, errlen, "bad user or password in DSN");
			return -1;
		}
		p = at + 1;
	}
	hostend = slash;
	colon = memchr(p, ':', (size_t)(hostend - p));
	if (colon != NULL) {
		int64_t port;
		char pb[16];

		if ((size_t)(hostend - colon - 1) >= sizeof(pb)) {
			snprintf(err, errlen, "bad port in DSN");
			return -1;
		}
		memcpy(pb, colon + 1, (size_t)(hostend - colon - 1));
		pb[hostend - colon - 1] = '\0';
		if (str_to_i64(pb, 1, 65535, &port) == -1) {
			snprintf(err, errlen, "bad port in DSN");
			return -1;
		}
		d->port = (unsigned)port;
		hostend = colon;
	}
	if (pct_decode(p, (size_t)(hostend - p), d->host, sizeof(d->host)) ==
	    -1) {
		snprintf(err, errlen, "bad host in DSN");
		return -1;
	}
	p = slash + 1;
	q = strchr(p, '?');
	if (pct_decode(p, q ? (size_t)(q - p) : strlen(p), d->database,
		sizeof(d->database)) == -1 ||
	    d->database[0] == '\0') {
		snprintf(err, errlen, "mysql DSN needs a database name");
		return -1;
	}
	if (q != NULL) {
		if (strncmp(q, "?socket=", 8) != 0 || q[8] == '\0' ||
		    pct_decode(q + 8, strlen(q + 8), d->socket,
			sizeof(d->socket)) == -1) {
			snprintf(err, errlen,
			    "the only DSN option is ?socket=/path");
			return -1;
		}
	}
	return 0;
}

int
db_note(struct db *db, int status)
{
	if (status == DB_ELOST)
		db->lost = 1;
	return status;
}

struct db *
db_open(const char *dsn, char *err, size_t errlen)
{
	struct db *db;

	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium failed to start");
		return NULL;
	}
	if ((db = calloc(1, sizeof(*db))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (dsn_parse(dsn, &db->dsn, err, errlen) == -1) {
		free(db);
		return NULL;
	}
	db->drv = strcmp(db->dsn.engine, "sqlite") == 0 ? &db_driver_sqlite
							: &db_driver_mysql;
	if (db->drv->open(db, &db->dsn) != DB_OK) {
		snprintf(err, errlen, "%s", db->errmsg);
		db->drv->close(db);
		free(db);
		return NULL;
	}
	db->rtt_us = (long)env_i64("REDEEM_DB_RTT_US", 0, 0, 1000000);
	return db;
}

static void
db_finalize_all(struct db *db)
{
	size_t i;

	for (i = 0; i < STMT__MAX; i++) {
		if (db->stmts[i] == NULL)
			continue;
		db->drv->finalize(db->stmts[i]);
		free(db->stmts[i]);
		db->stmts[i] = NULL;
	}
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	db_finalize_all(db);
	db->drv->close(db);
	explicit_bzero(db->dsn.password, sizeof(db->dsn.password));
	free(db);
}

const char *
db_engine(const struct db *db)
{
	return db->drv->name;
}

const char *
db_errmsg(const struct db *db)
{
	return db->errmsg;
}

/* A lost connection is replaced once, here, before a new transaction. */
static int
db_reconnect(struct db *db)
{
	db_finalize_all(db);
	db->drv->close(db);
	db->conn = NULL;
	db->drvdata = NULL;
	db->lost = 0;
	db->in_tx = 0;
	if (db->drv->open(db, &db->dsn) != DB_OK) {
		log_err("database reconnect failed: %s", db->errmsg);
		db->lost = 1;
		return DB_ELOST;
	}
	log_warn("database connection re-established");
	return DB_OK;
}

/* The emulated round trip (rtt_us), in the caller's time: a lock taken
 * before it is held through it, as over a real network. */
static void
db_rtt(const struct db *db)
{
	struct timespec ts;

	if (db->rtt_us <= 0)
		return;
	ts.tv_sec = db->rtt_us / 1000000;
	ts.tv_nsec = (db->rtt_us % 1000000) * 1000;
	while (nanosleep(&ts, &ts) == -1)
		;
}

int
db_begin(struct db *db, enum db_tx kind)
{
	int rc;

	db_rtt(db);
	if (db->lost && (rc = db_reconnect(db)) != DB_OK)
		return rc;
	rc = db_note(db, db->drv->begin(db, kind));
	if (rc == DB_OK)
		db->in_tx = 1;
	return rc;
}

int
db_commit(struct db *db)
{
	int rc;

	db_rtt(db);
	rc = db_note(db, db->drv->commit(db));

	if (rc != DB_OK && !db->lost)
		db->drv->rollback(db);
	db->in_tx = 0;
	return rc;
}

int
db_rollback(struct db *db)
{
	int rc = DB_OK;

	if (db->in_tx && !db->lost) {
		db_rtt(db);
		rc = db_note(db, db->drv->rollback(db));
	}
	db->in_tx = 0;
	return rc;
}

void
db_backoff(int attempt)
{
	struct timespec ts;
	uint32_t base, us;

	if (attempt > 8)
		attempt = 8;
	base = 200u << attempt; /* 200 us .. 51 ms */
	us = base / 2 + randombytes_uniform(base);
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

static double
db_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
db_batch_begin(struct db *db)
{
	int rc;

	if (!db->drv->batches || db->in_tx)
		return DB_OK;
	if ((rc = db_begin(db, DB_TX_WRITE)) == DB_OK)
		db->batch = 1;
	return rc;
}

int
db_batch_end(struct db *db)
{
	if (!db->batch)
		return DB_OK;
	db->batch = 0;
	return db_commit(db);
}

int
db_batching(const struct db *db)
{
	return db->batch;
}

/* One transaction of a batch: a savepoint, never retried (the batch holds
 * the writer lock, so nothing is busy). */
static int
batch_transact(struct db *db, db_tx_fn fn, void *arg)
{
	int rc;

	if ((rc = db_note(db, db->drv->exec_script(db, "SAVEPOINT tx"))) !=
	    DB_OK)
		return rc;
	rc = fn(db, arg);
	if (rc != DB_OK)
		db_note(
		    db, db->drv->exec_script(db, "ROLLBACK TO SAVEPOINT tx"));
	if (db_note(db, db->drv->exec_script(db, "RELEASE SAVEPOINT tx")) !=
		DB_OK &&
	    rc == DB_OK)
		rc = DB_EFAIL;
	if (rc < 0)
		log_err("transaction failed in a batch (%s): %s", db->drv->name,
		    db->errmsg);
	return rc;
}

int
db_transact(struct db *db, enum db_tx kind, db_tx_fn fn, void *arg)
{
	double deadline = db_clock() + DB_RETRY_SECONDS;
	int attempt, rc, reconnected = 0;

	if (db->batch)
		return batch_transact(db, fn, arg);
	for (attempt = 0;; attempt++) {
		rc = db_begin(db, kind);
		if (rc == DB_OK) {
			rc = fn(db, arg);
			if (rc == DB_OK)
				rc = db_commit(db);
			else
				db_rollback(db);
		}
		if (rc == DB_EBUSY && attempt < DB_RETRIES &&
		    db_clock() < deadline) {
			db->retries++;
			db_backoff(attempt);
			continue;
		}
		if (rc == DB_ELOST && !reconnected) {
			reconnected = 1;
			db->retries++;
			continue;
		}
		if (rc < 0)
			log_err("transaction failed (%s): %s", db->drv->name,
			    db->errmsg);
		return rc;
	}
}

struct purge {
	enum stmt_id pick;
	const enum stmt_id *del;
	int ndel, limit;
	int64_t age, *ids, done;
};

static int
purge_tx(struct db *db, void *arg)
{
	struct purge *p = arg;
	struct db_stmt *st;
	int64_t n = 0, i;
	int rc, k;

	p->done = 0;
	rc = db_query(db, p->pick, &st, "ii", p->age, (int64_t)p->limit);
	while (rc == DB_ROW) {
		if (n < p->limit)
			p->ids[n++] = db_col_i64(st, 0);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	for (i = 0; rc == DB_OK && i < n; i++)
		for (k = 0; rc == DB_OK && k < p->ndel; k++)
			rc = db_exec(db, p->del[k], NULL, "i", p->ids[i]);
	if (rc == DB_OK)
		p->done = n;
	return rc;
}

int
db_purge(struct db *db, enum stmt_id pick, int64_t age, int limit,
    const enum stmt_id *del, int ndel, int64_t *done)
{
	struct purge p = {pick, del, ndel, limit, age, NULL, 0};
	int rc;

	*done = 0;
	if (limit < 1 ||
	    (p.ids = calloc((size_t)limit, sizeof(*p.ids))) == NULL)
		return DB_EFAIL;
	rc = db_transact(db, DB_TX_WRITE, purge_tx, &p);
	if (rc == DB_OK)
		*done = p.done;
	free(p.ids);
	return rc;
}

int64_t
db_retries(const struct db *db)
{
	return db->retries;
}

struct db_block *
db_block(struct db *db)
{
	return &db->block;
}

struct db_stmt *
db_prepare(struct db *db, enum stmt_id id)
{
	const struct stmt_def *def;
	struct db_stmt *st;
	const char *sql;

	if ((unsigned)id >= STMT__MAX)
		return NULL;
	/* Outside a transaction a lost connection is replaced first: its
	 * cached statements are dead with it. */
	if (db->lost && !db->in_tx && db_reconnect(db) != DB_OK)
		return NULL;
	if (db->stmts[id] != NULL)
		return db->stmts[id];
	def = &stmt_catalog[id];
	sql = strcmp(db->drv->name, "mysql") == 0 && def->mysql != NULL
		  ? def->mysql
		  : def->sql;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	st->db = db;
	st->id = id;
	if (db_note(db, db->drv->prepare(db, st, sql, def->stream)) != DB_OK) {
		log_err("prepare %s failed: %s", def->name, db->errmsg);
		free(st);
		return NULL;
	}
	db->stmts[id] = st;
	return st;
}

void
db_bind_i64(struct db_stmt *st, int i, int64_t v)
{
	if (st->db->drv->bind_i64(st, i, v) != DB_OK)
		st->failed = 1;
}

void
db_bind_text(struct db_stmt *st, int i, const char *s)
{
	int rc = s == NULL ? st->db->drv->bind_null(st, i)
			   : st->db->drv->bind_text(st, i, s, strlen(s));

	if (rc != DB_OK)
		st->failed = 1;
}

void
db_bind_null(struct db_stmt *st, int i)
{
	if (st->db->drv->bind_null(st, i) != DB_OK)
		st->failed = 1;
}

int
db_step(struct db_stmt *st)
{
	if (st->failed) {
		snprintf(st->db->errmsg, sizeof(st->db->errmsg),
		    "binding a parameter of %s failed",
		    stmt_catalog[st->id].name);
		return DB_EFAIL;
	}
	if (!st->stepped) {
		st->stepped = 1;
		db_rtt(st->db);
	}
	return db_note(st->db, st->db->drv->step(st));
}

int64_t
db_col_i64(struct db_stmt *st, int i)
{
	return st->db->drv->col_i64(st, i);
}

const char *
db_col_text(struct db_stmt *st, int i)
{
	return st->db->drv->col_text(st, i);
}

int
db_col_null(struct db_stmt *st, int i)
{
	return st->db->drv->col_null(st, i);
}

void
db_reset(struct db_stmt *st)
{
	st->failed = 0;
	st->stepped = 0;
	st->db->drv->reset(st);
}

int64_t
db_changes(const struct db_stmt *st)
{
	return st->changes;
}

int64_t
db_last_id(const struct db_stmt *st)
{
	return st->last_id;
}

static void
db_bindv(struct db_stmt *st, const char *fmt, va_list ap)
{
	const int64_t *np;
	int i;

	st->stepped = 0;
	for (i = 1; *fmt != '\0'; fmt++, i++) {
		switch (*fmt) {
		case 'i':
			db_bind_i64(st, i, va_arg(ap, int64_t));
			break;
		case 't':
			db_bind_text(st, i, va_arg(ap, const char *));
			break;
		case 'n':
			np = va_arg(ap, const int64_t *);
			if (np == NULL)
				db_bind_null(st, i);
			else
				db_bind_i64(st, i, *np);
			break;
		default:
			st->failed = 1;
		}
	}
}

/*
 * A read outside a transaction that finds the connection lost is run once
 * more on a new connection: reads are safe to repeat. A write is not (it
 * may have been applied before the answer was lost), nor is anything
 * inside a transaction, which db_transact retries whole.
 */
static int
db_read_again(struct db *db, enum stmt_id id, int rc)
{
	if (rc != DB_ELOST || db->in_tx ||
	    strncmp(stmt_catalog[id].sql, "SELECT", 6) != 0)
		return 0;
	db->retries++;
	return db_reconnect(db) == DB_OK;
}

static int
db_execv(struct db *db, enum stmt_id id, int64_t *changes, int64_t *last_id,
    const char *fmt, va_list args)
{
	struct db_stmt *st;
	va_list ap;
	int rc, again = 1;

	do {
		if ((st = db_prepare(db, id)) == NULL) {
			rc = db->lost ? DB_ELOST : DB_EFAIL;
			continue;
		}
		va_copy(ap, args);
		db_bindv(st, fmt, ap);
		va_end(ap);
		while ((rc = db_step(st)) == DB_ROW)
			;
		if (changes != NULL)
			*changes = rc == DB_OK ? st->changes : 0;
		if (last_id != NULL)
			*last_id = rc == DB_OK ? db_last_id(st) : 0;
		db_reset(st);
	} while (again-- > 0 && db_read_again(db, id, rc));
	return rc;
}

int
db_exec(struct db *db, enum stmt_id id, int64_t *changes, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = db_execv(db, id, changes, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

int
db_exec_id(struct db *db, enum stmt_id id, int64_t *changes, int64_t *last_id,
    const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = db_execv(db, id, changes, last_id, fmt, ap);
	va_end(ap);
	return rc;
}

int
db_query(
    struct db *db, enum stmt_id id, struct db_stmt **out, const char *fmt, ...)
{
	struct db_stmt *st;
	va_list ap;
	int rc, again = 1;

	*out = NULL;
	do {
		if ((st = db_prepare(db, id)) == NULL) {
			rc = db->lost ? DB_ELOST : DB_EFAIL;
			continue;
		}
		va_start(ap, fmt);
		db_bindv(st, fmt, ap);
		va_end(ap);
		rc = db_step(st);
		if (rc == DB_ROW)
			*out = st;
		else
			db_reset(st);
	} while (again-- > 0 && db_read_again(db, id, rc));
	return rc;
}

int
db_exec_script(struct db *db, const char *sql)
{
	if (db->lost && db_reconnect(db) != DB_OK)
		return DB_ELOST;
	return db_note(db, db->drv->exec_script(db, sql));
}
