/*
 * SQLite driver. WAL, every commit synced before it is reported (a
 * granted seat survives power loss; see sq_sync), foreign keys on,
 * busy_timeout set first thing after opening.
 *
 * Writers queue on an flock(2) of "<db>.lock" before BEGIN IMMEDIATE: the
 * kernel wakes the next writer the moment the lock is free, where SQLite's
 * own busy handler would sleep in steps of milliseconds. The wait is
 * bounded by the busy timeout (an interval timer interrupts it).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../lib/common.h"
#include "../lib/str.h"
#include "db_driver.h"

#define SQLITE_BUSY_MS 5000

/*
 * Group commit, shared by every process of the database through a small
 * file mapped at "<db>.sync": each write transaction takes a ticket when
 * its COMMIT has appended its frames to the WAL (synchronous=NORMAL does
 * not sync them), and returns only once a sync that started after its
 * ticket has finished. One process syncs at a time (an flock of the same
 * file), covering every ticket handed out before it began; the others
 * wait for it and usually find their ticket covered. The WAL is written
 * in commit order, so a sync covers every earlier frame. The writer queue
 * is free during the sync, so the next writers work meanwhile.
 */
struct sq_shared {
	uint64_t committed; /* tickets handed out */
	uint64_t synced;    /* every ticket up to this one is durable */
};

struct sq {
	sqlite3 *h;
	int lockfd; /* -1: no writer queue */
	int locked;
	int writing;            /* in a write transaction */
	int syncfd;             /* -1: each commit syncs for itself */
	struct sq_shared *sync; /* mapped from syncfd */
};

static int
sq_status(struct db *db, int rc)
{
	sqlite3 *h = ((struct sq *)db->conn)->h;
	int ext = sqlite3_extended_errcode(h);

	snprintf(
	    db->errmsg, sizeof(db->errmsg), "sqlite: %s", sqlite3_errmsg(h));
	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
		if (ext == SQLITE_CONSTRAINT_UNIQUE ||
		    ext == SQLITE_CONSTRAINT_PRIMARYKEY)
			return DB_EUNIQUE;
		return DB_ECHECK;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return DB_EBUSY;
	default:
		return DB_EFAIL;
	}
}

/* UNIX_TIMESTAMP(): the database clock, spelled as MySQL spells it, so one
 * SQL text serves both engines. */
static void
sq_unix_timestamp(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, (sqlite3_int64)time(NULL));
}

/* LAST_INSERT_ID(x): MySQL's idiom for an atomic counter read back without
 * a second statement; db_last_id returns x after the statement. */
static void
sq_last_insert_id(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sqlite3_int64 v = sqlite3_value_int64(argv[0]);

	(void)argc;
	sqlite3_set_last_insert_rowid(sqlite3_context_db_handle(ctx), v);
	sqlite3_result_int64(ctx, v);
}

static void
sq_alarm(int sig)
{
	(void)sig;
}

static int
sq_mkparent(const char *path)
{
	char dir[1024];
	char *slash;

	if (str_copy(dir, path, sizeof(dir)) == -1)
		return -1;
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

static void
sq_map_sync(struct sq *s, const char *path)
{
	struct stat st;
	void *p;

	s->syncfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->syncfd == -1)
		return;
	/* Growing it is harmless if two processes race: zeros either way. */
	if (fstat(s->syncfd, &st) == -1 ||
	    (st.st_size < (off_t)sizeof(struct sq_shared) &&
		ftruncate(s->syncfd, sizeof(struct sq_shared)) == -1) ||
	    (p = mmap(NULL, sizeof(struct sq_shared), PROT_READ | PROT_WRITE,
		 MAP_SHARED, s->syncfd, 0)) == MAP_FAILED) {
		close(s->syncfd);
		s->syncfd = -1;
		return;
	}
	s->sync = p;
}

static int
sq_open(struct db *db, const struct dsn *d)
{
	/* NORMAL: the commit itself does not sync; sq_commit waits for a
	 * group sync after releasing the writer queue (see sq_shared). */
	static const char *const pragmas = "PRAGMA journal_mode=WAL;"
					   "PRAGMA synchronous=NORMAL;"
					   "PRAGMA foreign_keys=ON;"
					   "PRAGMA temp_store=MEMORY;";
	char lockpath[1100];
	struct sq *s;
	int rc;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(db->errmsg, sizeof(db->errmsg), "out of memory");
		return DB_EFAIL;
	}
	s->lockfd = -1;
	s->syncfd = -1;
	db->conn = s;
	if (sq_mkparent(d->path) == -1) {
		snprintf(db->errmsg, sizeof(db->errmsg),
		    "sqlite: cannot create the folder of %.300s: %s", d->path,
		    strerror(errno));
		return DB_EFAIL;
	}
	rc = sqlite3_open_v2(d->path, &s->h,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	    NULL);
	if (rc != SQLITE_OK) {
		snprintf(db->errmsg, sizeof(db->errmsg),
		    "sqlite: cannot open %.300s: %s", d->path,
		    s->h ? sqlite3_errmsg(s->h) : sqlite3_errstr(rc));
		return DB_EFAIL;
	}
	/* Before any statement: a busy database must wait, not fail. */
	sqlite3_busy_timeout(s->h, SQLITE_BUSY_MS);
	sqlite3_extended_result_codes(s->h, 1);
	if (sqlite3_exec(s->h, pragmas, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(s->h, "UNIX_TIMESTAMP", 0, SQLITE_UTF8,
		NULL, sq_unix_timestamp, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(s->h, "LAST_INSERT_ID", 1, SQLITE_UTF8,
		NULL, sq_last_insert_id, NULL, NULL) != SQLITE_OK)
		return sq_status(db, sqlite3_errcode(s->h));
	snprintf(lockpath, sizeof(lockpath), "%s.lock", d->path);
	s->lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	snprintf(lockpath, sizeof(lockpath), "%s.sync", d->path);
	sq_map_sync(s, lockpath);
	return DB_OK;
}

static void
sq_close(struct db *db)
{
	struct sq *s = db->conn;

	if (s == NULL)
		return;
	if (s->h != NULL)
		sqlite3_close(s->h);
	if (s->lockfd != -1)
		close(s->lockfd);
	if (s->sync != NULL)
		munmap(s->sync, sizeof(struct sq_shared));
	if (s->syncfd != -1)
		close(s->syncfd);
	free(s);
	db->conn = NULL;
}

/* Takes the writer queue, giving up after the busy timeout. */
static int
sq_lock(struct db *db, struct sq *s)
{
	struct sigaction sa, old;
	struct itimerval it, none;
	int rc;

	if (s->lockfd == -1)
		return DB_OK;
	if (flock(s->lockfd, LOCK_EX | LOCK_NB) == 0) {
		s->locked = 1;
		return DB_OK;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sq_alarm; /* no SA_RESTART: flock returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	memset(&it, 0, sizeof(it));
	memset(&none, 0, sizeof(none));
	it.it_value.tv_sec = SQLITE_BUSY_MS / 1000;
	it.it_value.tv_usec = (SQLITE_BUSY_MS % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	rc = flock(s->lockfd, LOCK_EX);
	setitimer(ITIMER_REAL, &none, NULL);
	sigaction(SIGALRM, &old, NULL);
	if (rc == -1) {
		snprintf(db->errmsg, sizeof(db->errmsg),
		    "sqlite: writer queue busy for %d ms", SQLITE_BUSY_MS);
		return DB_EBUSY;
	}
	s->locked = 1;
	return DB_OK;
}

static void
sq_unlock(struct sq *s)
{
	if (s->locked) {
		flock(s->lockfd, LOCK_UN);
		s->locked = 0;
	}
}

static int
sq_begin(struct db *db, enum db_tx kind)
{
	struct sq *s = db->conn;
	int rc;

	if (kind == DB_TX_READ)
		rc = sqlite3_exec(s->h, "BEGIN", NULL, NULL, NULL);
	else {
		if ((rc = sq_lock(db, s)) != DB_OK)
			return rc;
		rc = sqlite3_exec(s->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	}
	s->writing = kind != DB_TX_READ;
	if (rc != SQLITE_OK) {
		rc = sq_status(db, rc);
		sq_unlock(s);
		return rc;
	}
	return DB_OK;
}

/* Syncs the WAL of this connection. */
static int
sq_sync_wal(struct db *db, struct sq *s)
{
	sqlite3_file *f = NULL;

	if (sqlite3_file_control(
		s->h, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK ||
	    f == NULL || f->pMethods == NULL)
		return DB_OK; /* no WAL open: nothing was written */
	if (f->pMethods->xSync(f, SQLITE_SYNC_NORMAL) != SQLITE_OK) {
		snprintf(db->errmsg, sizeof(db->errmsg),
		    "sqlite: cannot sync the WAL: %s", strerror(errno));
		return DB_EFAIL;
	}
	return DB_OK;
}

/* Returns once ticket is durable (see struct sq_shared). */
static int
sq_sync(struct db *db, struct sq *s, uint64_t ticket)
{
	uint64_t upto;
	int rc;

	if (s->sync == NULL)
		return sq_sync_wal(db, s);
	for (;;) {
		if (__atomic_load_n(&s->sync->synced, __ATOMIC_ACQUIRE) >=
		    ticket)
			return DB_OK;
		if (flock(s->syncfd, LOCK_EX) == 0)
			break;
		if (errno != EINTR)
			return sq_sync_wal(db, s);
	}
	if (__atomic_load_n(&s->sync->synced, __ATOMIC_ACQUIRE) >= ticket) {
		flock(s->syncfd, LOCK_UN);
		return DB_OK;
	}
	/* Every ticket up to here has its frames in the WAL already. */
	upto = __atomic_load_n(&s->sync->committed, __ATOMIC_ACQUIRE);
	rc = sq_sync_wal(db, s);
	if (rc == DB_OK &&
	    upto > __atomic_load_n(&s->sync->synced, __ATOMIC_ACQUIRE))
		__atomic_store_n(&s->sync->synced, upto, __ATOMIC_RELEASE);
	flock(s->syncfd, LOCK_UN);
	return rc;
}

static int
sq_commit(struct db *db)
{
	struct sq *s = db->conn;
	int rc = sqlite3_exec(s->h, "COMMIT", NULL, NULL, NULL);
	uint64_t ticket = 0;

	if (rc != SQLITE_OK) {
		rc = sq_status(db, rc);
		if (sqlite3_get_autocommit(s->h)) {
			s->writing = 0;
			sq_unlock(s);
		}
		return rc;
	}
	if (!s->writing) {
		sq_unlock(s);
		return DB_OK;
	}
	s->writing = 0;
	if (s->sync != NULL)
		ticket = __atomic_add_fetch(
		    &s->sync->committed, 1, __ATOMIC_ACQ_REL);
	/* The next writer goes ahead while this one waits for the disk. */
	sq_unlock(s);
	return sq_sync(db, s, ticket);
}

static int
sq_rollback(struct db *db)
{
	struct sq *s = db->conn;
	int rc = DB_OK;

	if (!sqlite3_get_autocommit(s->h) &&
	    sqlite3_exec(s->h, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
		rc = sq_status(db, sqlite3_errcode(s->h));
	s->writing = 0;
	sq_unlock(s);
	return rc;
}

static int
sq_prepare(struct db *db, struct db_stmt *st, const char *sql, int stream)
{
	struct sq *s = db->conn;
	sqlite3_stmt *h = NULL;
	int rc;

	(void)stream;
	rc = sqlite3_prepare_v3(
	    s->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &h, NULL);
	if (rc != SQLITE_OK)
		return sq_status(db, rc);
	st->h = h;
	return DB_OK;
}

static void
sq_finalize(struct db_stmt *st)
{
	sqlite3_finalize(st->h);
	st->h = NULL;
}

static int
sq_bind_i64(struct db_stmt *st, int i, int64_t v)
{
	return sqlite3_bind_int64(st->h, i, v) == SQLITE_OK ? DB_OK : DB_EFAIL;
}

static int
sq_bind_text(struct db_stmt *st, int i, const char *p, size_t n)
{
	if (n > INT32_MAX)
		return DB_EFAIL;
	return sqlite3_bind_text(st->h, i, p, (int)n, SQLITE_TRANSIENT) ==
		       SQLITE_OK
		   ? DB_OK
		   : DB_EFAIL;
}

static int
sq_bind_null(struct db_stmt *st, int i)
{
	return sqlite3_bind_null(st->h, i) == SQLITE_OK ? DB_OK : DB_EFAIL;
}

static int
sq_step(struct db_stmt *st)
{
	struct sq *s = st->db->conn;
	int rc = sqlite3_step(st->h);

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE) {
		st->changes = sqlite3_changes64(s->h);
		st->last_id = sqlite3_last_insert_rowid(s->h);
		return DB_OK;
	}
	return sq_status(st->db, rc);
}

static int64_t
sq_col_i64(struct db_stmt *st, int i)
{
	return sqlite3_column_int64(st->h, i);
}

static const char *
sq_col_text(struct db_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st->h, i);
}

static int
sq_col_null(struct db_stmt *st, int i)
{
	return sqlite3_column_type(st->h, i) == SQLITE_NULL;
}

static void
sq_reset(struct db_stmt *st)
{
	sqlite3_reset(st->h);
	sqlite3_clear_bindings(st->h);
}

static int
sq_exec_script(struct db *db, const char *sql)
{
	struct sq *s = db->conn;
	int rc = sqlite3_exec(s->h, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? DB_OK : sq_status(db, rc);
}

const struct db_driver db_driver_sqlite = {
    .name = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .batches = 1,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .prepare = sq_prepare,
    .finalize = sq_finalize,
    .bind_i64 = sq_bind_i64,
    .bind_text = sq_bind_text,
    .bind_null = sq_bind_null,
    .step = sq_step,
    .col_i64 = sq_col_i64,
    .col_text = sq_col_text,
    .col_null = sq_col_null,
    .reset = sq_reset,
    .exec_script = sq_exec_script,
};
