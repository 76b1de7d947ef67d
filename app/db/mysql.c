/*
 * MySQL / MariaDB driver over the Connector/C prepared-statement API.
 *
 * Ownership: db->conn is the MYSQL handle, opened by my_open and released
 * by my_close. st->h is a struct my_stmt owned by the statement: it holds
 * the MYSQL_STMT, the parameter storage (bound text is copied there) and
 * one growable buffer per result column; my_finalize frees all of it.
 * Every value is fetched as text, NUL-terminated, so db_col_text hands out
 * a pointer into the column buffer, valid until the next step or reset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include "../lib/common.h"
#include "db_driver.h"

#define MY_COL_MIN 64 /* first size of a column buffer */

enum my_state {
	MY_IDLE, /* not executed since prepare, bind or reset */
	MY_ROWS, /* a result set is open */
	MY_DONE, /* finished: DB_OK or an error was returned */
};

struct my_param {
	int64_t i;
	char *text;        /* owned; NUL-terminated copy of the bound text */
	size_t cap;        /* allocated bytes of text */
	unsigned long len; /* bytes of text in use */
};

struct my_col {
	char *buf; /* owned; cap bytes, always NUL-terminated */
	unsigned long cap;
	unsigned long len; /* full length of the value, even if truncated */
	my_bool is_null;
	my_bool error; /* set by the connector on truncation */
};

struct my_stmt {
	MYSQL_STMT *stmt;
	int stream; /* 1: rows are read from the socket one by one */
	enum my_state state;
	int done_rc;  /* what step returns again in MY_DONE */
	int64_t rows; /* rows fetched by the current execution */
	unsigned nparams;
	MYSQL_BIND *pbind; /* nparams entries, pointing into params */
	struct my_param *params;
	unsigned ncols;    /* result columns allocated */
	MYSQL_BIND *rbind; /* ncols entries, pointing into cols */
	struct my_col *cols;
};

/* The one place where a server or client error number becomes a status. */
static int
my_classify(unsigned int code)
{
	switch (code) {
	case ER_DUP_ENTRY:               /* 1062 */
	case ER_DUP_ENTRY_WITH_KEY_NAME: /* 1586 */
	case ER_DUP_UNIQUE:              /* 1169 */
		return DB_EUNIQUE;
	case ER_LOCK_DEADLOCK:            /* 1213 */
	case ER_LOCK_WAIT_TIMEOUT:        /* 1205 */
	case ER_CHECKREAD:                /* 1020: record changed */
	case ER_XA_RBDEADLOCK:            /* 1614 */
	case ER_TOO_MANY_CONCURRENT_TRXS: /* 1637 */
	case ER_LOCK_ABORTED:             /* 1689 */
		return DB_EBUSY;
	case ER_CONSTRAINT_FAILED:               /* 4025: MariaDB CHECK */
	case 3819:                               /* MySQL 8 CHECK */
	case ER_BAD_NULL_ERROR:                  /* 1048 */
	case ER_NO_DEFAULT_FOR_FIELD:            /* 1364 */
	case ER_WARN_NULL_TO_NOTNULL:            /* 1263 */
	case ER_NO_REFERENCED_ROW:               /* 1216 */
	case ER_ROW_IS_REFERENCED:               /* 1217 */
	case ER_ROW_IS_REFERENCED_2:             /* 1451 */
	case ER_NO_REFERENCED_ROW_2:             /* 1452 */
	case ER_WARN_DATA_OUT_OF_RANGE:          /* 1264 */
	case ER_DATA_TOO_LONG:                   /* 1406 */
	case WARN_DATA_TRUNCATED:                /* 1265 */
	case ER_TRUNCATED_WRONG_VALUE:           /* 1292 */
	case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: /* 1366 */
		return DB_ECHECK;
	case CR_CONNECTION_ERROR:     /* 2002 */
	case CR_CONN_HOST_ERROR:      /* 2003 */
	case CR_SERVER_GONE_ERROR:    /* 2006 */
	case CR_SERVER_LOST:          /* 2013 */
	case CR_SERVER_LOST_EXTENDED: /* 2055 */
	case ER_CON_COUNT_ERROR:      /* 1040 */
	case ER_SERVER_SHUTDOWN:      /* 1053 */
	case ER_CONNECTION_KILLED:    /* 1927 */
		return DB_ELOST;
	default:
		return DB_EFAIL;
	}
}

/* Records "mysql: <errno>: <message>" and returns the noted status. */
static int
my_fail(struct db *db, unsigned int code, const char *msg)
{
	if (code == 0)
		snprintf(db->errmsg, sizeof(db->errmsg), "mysql: %s",
		    msg != NULL && *msg ? msg : "unknown error");
	else
		snprintf(db->errmsg, sizeof(db->errmsg), "mysql: %u: %s", code,
		    msg != NULL ? msg : "");
	return db_note(db, my_classify(code));
}

static int
my_nomem(struct db *db)
{
	snprintf(db->errmsg, sizeof(db->errmsg), "mysql: out of memory");
	return db_note(db, DB_EFAIL);
}

static int
my_conn_fail(struct db *db)
{
	MYSQL *conn = db->conn;

	return my_fail(db, mysql_errno(conn), mysql_error(conn));
}

static int
my_stmt_fail(struct db_stmt *st)
{
	struct my_stmt *s = st->h;

	return my_fail(
	    st->db, mysql_stmt_errno(s->stmt), mysql_stmt_error(s->stmt));
}

static int
my_query(struct db *db, const char *sql)
{
	if (mysql_real_query(db->conn, sql, strlen(sql)) != 0)
		return my_conn_fail(db);
	return DB_OK;
}

static int
my_open(struct db *db, const struct dsn *d)
{
	static const char *const session[] = {
	    "SET SESSION sql_mode='STRICT_ALL_TABLES,NO_ZERO_DATE,"
	    "NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,"
	    "NO_ENGINE_SUBSTITUTION'",
	    "SET SESSION innodb_lock_wait_timeout=5",
	    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
	    "SET SESSION time_zone='+00:00'",
	    "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
	};
	unsigned int connect_timeout = 5, io_timeout = 30, no_infile = 0, code;
	my_bool off = 0, on = 1;
	MYSQL *conn;
	size_t i;
	int rc;

	if ((conn = mysql_init(NULL)) == NULL)
		return my_nomem(db);
	db->conn = conn;
	/*
	 * No automatic reconnect: it would silently drop the session
	 * settings and an open transaction. db.c reconnects by itself.
	 */
	if (mysql_options(conn, MYSQL_SET_CHARSET_NAME, "utf8mb4") != 0 ||
	    mysql_options(conn, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout) !=
		0 ||
	    mysql_options(conn, MYSQL_OPT_READ_TIMEOUT, &io_timeout) != 0 ||
	    mysql_options(conn, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout) != 0 ||
	    mysql_options(conn, MYSQL_OPT_RECONNECT, &off) != 0 ||
	    mysql_options(conn, MYSQL_REPORT_DATA_TRUNCATION, &on) != 0 ||
	    mysql_options(conn, MYSQL_OPT_LOCAL_INFILE, &no_infile) != 0)
		return my_conn_fail(db);

	/* The message names host and user, never the password. */
	if (mysql_real_connect(conn, d->host[0] ? d->host : NULL,
		d->user[0] ? d->user : NULL,
		d->password[0] ? d->password : NULL,
		d->database[0] ? d->database : NULL, d->port,
		d->socket[0] ? d->socket : NULL,
		CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS) == NULL) {
		/*
		 * A client-side failure (no socket, no answer) is
		 * connection-level; a refusal by the server (access denied,
		 * unknown database) stays DB_EFAIL.
		 */
		code = mysql_errno(conn);
		rc = my_conn_fail(db);
		if (code >= CR_MIN_ERROR && code <= CR_MAX_ERROR)
			rc = db_note(db, DB_ELOST);
		return rc;
	}
	for (i = 0; i < NELEM(session); i++)
		if ((rc = my_query(db, session[i])) != DB_OK)
			return rc;
	return DB_OK;
}

static void
my_close(struct db *db)
{
	if (db->conn != NULL)
		mysql_close(db->conn);
	db->conn = NULL;
}

static int
my_begin(struct db *db, enum db_tx kind)
{
	int rc;

	if (kind == DB_TX_READ) {
		/* Applies to the next transaction only. */
		rc = my_query(
		    db, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
		if (rc != DB_OK)
			return rc;
		return my_query(db,
		    "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
	}
	return my_query(db, "START TRANSACTION");
}

static int
my_commit(struct db *db)
{
	return my_query(db, "COMMIT");
}

static int
my_rollback(struct db *db)
{
	return my_query(db, "ROLLBACK");
}

/* Makes room for n result columns; the buffers start at MY_COL_MIN. */
static int
my_cols_alloc(struct db *db, struct my_stmt *s, unsigned n)
{
	MYSQL_BIND *rb;
	struct my_col *c;
	unsigned i;

	if (n <= s->ncols)
		return DB_OK;
	if ((rb = calloc(n, sizeof(*rb))) == NULL ||
	    (c = calloc(n, sizeof(*c))) == NULL) {
		free(rb);
		goto nomem;
	}
	if (s->ncols > 0)
		memcpy(c, s->cols, s->ncols * sizeof(*c));
	for (i = s->ncols; i < n; i++) {
		if ((c[i].buf = malloc(MY_COL_MIN)) == NULL) {
			while (i-- > s->ncols)
				free(c[i].buf);
			free(c);
			free(rb);
			goto nomem;
		}
		c[i].cap = MY_COL_MIN;
		c[i].buf[0] = '\0';
	}
	free(s->rbind);
	free(s->cols);
	s->rbind = rb;
	s->cols = c;
	s->ncols = n;
	return DB_OK;
nomem:
	return my_nomem(db);
}

/* Points column i's bind at its buffer, keeping one byte for the NUL. */
static void
my_col_bind(struct my_stmt *s, unsigned i)
{
	MYSQL_BIND *b = &s->rbind[i];
	struct my_col *c = &s->cols[i];

	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = c->buf;
	b->buffer_length = c->cap - 1;
	b->length = &c->len;
	b->is_null = &c->is_null;
	b->error = &c->error;
}

static void
my_stmt_free(struct my_stmt *s)
{
	unsigned i;

	if (s == NULL)
		return;
	if (s->stmt != NULL)
		mysql_stmt_close(s->stmt);
	for (i = 0; i < s->nparams; i++)
		free(s->params[i].text);
	for (i = 0; i < s->ncols; i++)
		free(s->cols[i].buf);
	free(s->pbind);
	free(s->params);
	free(s->rbind);
	free(s->cols);
	free(s);
}

static int
my_prepare(struct db *db, struct db_stmt *st, const char *sql, int stream)
{
	struct my_stmt *s;
	unsigned i;
	int rc;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		goto nomem;
	s->stream = stream;
	if ((s->stmt = mysql_stmt_init(db->conn)) == NULL) {
		free(s);
		return my_conn_fail(db);
	}
	if (mysql_stmt_prepare(s->stmt, sql, strlen(sql)) != 0) {
		rc = my_fail(
		    db, mysql_stmt_errno(s->stmt), mysql_stmt_error(s->stmt));
		my_stmt_free(s);
		return rc;
	}
	s->nparams = (unsigned)mysql_stmt_param_count(s->stmt);
	if (s->nparams > 0) {
		s->pbind = calloc(s->nparams, sizeof(*s->pbind));
		s->params = calloc(s->nparams, sizeof(*s->params));
		if (s->pbind == NULL || s->params == NULL) {
			/* my_stmt_free must not walk params[] it lacks. */
			free(s->params);
			s->params = NULL;
			s->nparams = 0;
			my_stmt_free(s);
			goto nomem;
		}
		/* Unbound parameters are NULL, as in SQLite. */
		for (i = 0; i < s->nparams; i++)
			s->pbind[i].buffer_type = MYSQL_TYPE_NULL;
	}
	if ((rc = my_cols_alloc(db, s, mysql_stmt_field_count(s->stmt))) !=
	    DB_OK) {
		my_stmt_free(s);
		return rc;
	}
	st->h = s;
	return DB_OK;
nomem:
	return my_nomem(db);
}

static void
my_finalize(struct db_stmt *st)
{
	my_stmt_free(st->h);
	st->h = NULL;
}

/*
 * Ends the current execution so that the next step executes again and the
 * connection is free for other statements. Only an open stream holds the
 * connection: mysql_stmt_free_result drains its rows. A stored result
 * already left the connection free; its rows are dropped by the next
 * execute or by finalize. free_result is never called in any other state:
 * the connector would then drain whichever statement streams at the time.
 * No mysql_stmt_reset: it costs a round trip and execute does not need it.
 */
static void
my_end(struct my_stmt *s)
{
	if (s->state == MY_ROWS && s->stream)
		mysql_stmt_free_result(s->stmt);
	s->state = MY_IDLE;
}

static void
my_reset(struct db_stmt *st)
{
	struct my_stmt *s = st->h;
	unsigned i;

	my_end(s);
	/* Bindings are cleared as in the SQLite driver; storage is kept. */
	for (i = 0; i < s->nparams; i++)
		s->pbind[i].buffer_type = MYSQL_TYPE_NULL;
}

/* Checks the 1-based index i and ends a running execution. */
static struct my_param *
my_param(struct db_stmt *st, int i)
{
	struct my_stmt *s = st->h;

	if (i < 1 || (unsigned)i > s->nparams) {
		snprintf(st->db->errmsg, sizeof(st->db->errmsg),
		    "mysql: parameter %d out of range (1..%u)", i, s->nparams);
		return NULL;
	}
	if (s->state != MY_IDLE)
		my_end(s);
	return &s->params[i - 1];
}

static int
my_bind_i64(struct db_stmt *st, int i, int64_t v)
{
	struct my_stmt *s = st->h;
	struct my_param *p;
	MYSQL_BIND *b;

	if ((p = my_param(st, i)) == NULL)
		return db_note(st->db, DB_EFAIL);
	p->i = v;
	b = &s->pbind[i - 1];
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = &p->i;
	return DB_OK;
}

static int
my_bind_text(struct db_stmt *st, int i, const char *text, size_t n)
{
	struct my_stmt *s = st->h;
	struct my_param *p;
	MYSQL_BIND *b;
	char *t;

	if ((p = my_param(st, i)) == NULL)
		return db_note(st->db, DB_EFAIL);
	if (n > UINT32_MAX) {
		snprintf(st->db->errmsg, sizeof(st->db->errmsg),
		    "mysql: parameter %d too long", i);
		return db_note(st->db, DB_EFAIL);
	}
	if (p->cap < n + 1) {
		if ((t = realloc(p->text, n + 1)) == NULL)
			return my_nomem(st->db);
		p->text = t;
		p->cap = n + 1;
	}
	if (n > 0)
		memcpy(p->text, text, n);
	p->text[n] = '\0';
	p->len = (unsigned long)n;
	b = &s->pbind[i - 1];
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = p->text;
	b->buffer_length = p->len;
	b->length = &p->len;
	return DB_OK;
}

static int
my_bind_null(struct db_stmt *st, int i)
{
	struct my_stmt *s = st->h;
	MYSQL_BIND *b;

	if (my_param(st, i) == NULL)
		return db_note(st->db, DB_EFAIL);
	b = &s->pbind[i - 1];
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_NULL;
	return DB_OK;
}

/* Ends the execution with an error; step repeats it until a reset. */
static int
my_step_fail(struct db_stmt *st, int rc)
{
	struct my_stmt *s = st->h;

	my_end(s);
	s->state = MY_DONE;
	s->done_rc = rc;
	return rc;
}

static int
my_execute(struct db_stmt *st)
{
	struct my_stmt *s = st->h;
	unsigned i, n;
	int rc;

	st->changes = 0;
	st->last_id = 0;
	s->rows = 0;
	if (s->nparams > 0 && mysql_stmt_bind_param(s->stmt, s->pbind) != 0)
		return my_step_fail(st, my_stmt_fail(st));
	if (mysql_stmt_execute(s->stmt) != 0)
		return my_step_fail(st, my_stmt_fail(st));
	if ((n = mysql_stmt_field_count(s->stmt)) == 0) {
		st->changes = (int64_t)mysql_stmt_affected_rows(s->stmt);
		st->last_id = (int64_t)mysql_stmt_insert_id(s->stmt);
		s->state = MY_DONE;
		s->done_rc = DB_OK;
		return DB_OK;
	}
	/* From here on the result set is open and must be ended. */
	s->state = MY_ROWS;
	if ((rc = my_cols_alloc(st->db, s, n)) != DB_OK)
		return my_step_fail(st, rc);
	for (i = 0; i < n; i++)
		my_col_bind(s, i);
	if (mysql_stmt_bind_result(s->stmt, s->rbind) != 0 ||
	    (!s->stream && mysql_stmt_store_result(s->stmt) != 0))
		return my_step_fail(st, my_stmt_fail(st));
	return DB_ROW;
}

/* Grows the truncated columns of the current row and reads them again. */
static int
my_refetch(struct db_stmt *st)
{
	struct my_stmt *s = st->h;
	unsigned i, n = mysql_stmt_field_count(s->stmt);
	struct my_col *c;
	unsigned long cap;
	char *p;

	for (i = 0; i < n; i++) {
		c = &s->cols[i];
		if (!c->error || c->is_null)
			continue;
		/* Doubling: no realloc per row for a slowly growing column. */
		cap = c->len + 1 > c->cap * 2 ? c->len + 1 : c->cap * 2;
		if ((p = realloc(c->buf, cap)) == NULL)
			return my_nomem(st->db);
		c->buf = p;
		c->cap = cap;
		my_col_bind(s, i);
		if (mysql_stmt_fetch_column(s->stmt, &s->rbind[i], i, 0) != 0)
			return my_stmt_fail(st);
	}
	/* The connector keeps a copy of the binds: give it the new buffers. */
	if (mysql_stmt_bind_result(s->stmt, s->rbind) != 0)
		return my_stmt_fail(st);
	return DB_OK;
}

static int
my_step(struct db_stmt *st)
{
	struct my_stmt *s = st->h;
	unsigned i, n;
	int rc;

	if (s->state == MY_DONE)
		return s->done_rc;
	if (s->state == MY_IDLE && (rc = my_execute(st)) != DB_ROW)
		return rc;
	n = mysql_stmt_field_count(s->stmt);
	switch (mysql_stmt_fetch(s->stmt)) {
	case 0:
		break;
	case MYSQL_DATA_TRUNCATED:
		if ((rc = my_refetch(st)) != DB_OK)
			return my_step_fail(st, rc);
		break;
	case MYSQL_NO_DATA:
		/* A result set counts its rows (SELECT, ... RETURNING). */
		st->changes = s->rows;
		st->last_id = (int64_t)mysql_stmt_insert_id(s->stmt);
		s->state = MY_DONE;
		s->done_rc = DB_OK;
		return DB_OK;
	default:
		return my_step_fail(st, my_stmt_fail(st));
	}
	for (i = 0; i < n; i++) {
		struct my_col *c = &s->cols[i];
		unsigned long end = c->len < c->cap ? c->len : c->cap - 1;

		c->buf[c->is_null ? 0 : end] = '\0';
	}
	s->rows++;
	return DB_ROW;
}

/* The column i of the current row, or NULL outside a row or range. */
static struct my_col *
my_col(struct db_stmt *st, int i)
{
	struct my_stmt *s = st->h;

	if (s->state != MY_ROWS || i < 0 ||
	    (unsigned)i >= mysql_stmt_field_count(s->stmt))
		return NULL;
	return &s->cols[i];
}

static int64_t
my_col_i64(struct db_stmt *st, int i)
{
	struct my_col *c = my_col(st, i);

	if (c == NULL || c->is_null)
		return 0;
	return (int64_t)strtoll(c->buf, NULL, 10);
}

static const char *
my_col_text(struct db_stmt *st, int i)
{
	struct my_col *c = my_col(st, i);

	return c == NULL || c->is_null ? NULL : c->buf;
}

static int
my_col_null(struct db_stmt *st, int i)
{
	struct my_col *c = my_col(st, i);

	return c == NULL || c->is_null;
}

/*
 * Runs a multi-statement script and consumes every result so that the
 * connection is usable afterwards. The first error ends the script.
 */
static int
my_exec_script(struct db *db, const char *sql)
{
	MYSQL *conn = db->conn;
	MYSQL_RES *res;
	int more;

	if (mysql_real_query(conn, sql, strlen(sql)) != 0)
		return my_conn_fail(db);
	do {
		if ((res = mysql_store_result(conn)) != NULL)
			mysql_free_result(res);
		else if (mysql_field_count(conn) != 0)
			return my_conn_fail(db);
		if ((more = mysql_next_result(conn)) > 0)
			return my_conn_fail(db);
	} while (more == 0);
	return DB_OK;
}

const struct db_driver db_driver_mysql = {
    .name = "mysql",
    .open = my_open,
    .close = my_close,
    .begin = my_begin,
    .commit = my_commit,
    .rollback = my_rollback,
    .prepare = my_prepare,
    .finalize = my_finalize,
    .bind_i64 = my_bind_i64,
    .bind_text = my_bind_text,
    .bind_null = my_bind_null,
    .step = my_step,
    .col_i64 = my_col_i64,
    .col_text = my_col_text,
    .col_null = my_col_null,
    .reset = my_reset,
    .exec_script = my_exec_script,
};
