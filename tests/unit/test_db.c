/* app/db: the driver-neutral API through the real driver of the backend
 * under test (REDEEM_TEST_DB), with the fixed catalog only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codetext.h"
#include "../../app/core/redeem.h"
#include "../../app/db/migrate.h"
#include "fixture.h"

/* The tenant's id by name, or 0 when there is none. */
static int64_t
tenant_id(struct db *db, const char *name)
{
	struct db_stmt *st;
	int64_t id;
	int rc;

	rc = db_query(db, STMT_TENANT_BY_NAME, &st, "t", name);
	if (rc == DB_OK) {
		ck_assert_ptr_null(st);
		return 0;
	}
	ck_assert_msg(
	    rc == DB_ROW, "tenant %s: %d %s", name, rc, db_errmsg(db));
	id = db_col_i64(st, 0);
	db_reset(st);
	ck_assert_int_gt(id, 0);
	return id;
}

static char *
repeat(const char *unit, size_t times)
{
	size_t n = strlen(unit);
	char *p = malloc(n * times + 1);
	size_t i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < times; i++)
		memcpy(p + i * n, unit, n);
	p[n * times] = '\0';
	return p;
}

START_TEST(test_db_open_bad_dsn)
{
	static const char *const bad[] = {
	    "",
	    "garbage",
	    "sqlite:",
	    "sqlite://",
	    "mysql://",
	    "mysql://localhost",
	    "mysql://u@h/",
	    "mysql://u@h:99999/d",
	    "mysql://u@h:0/d",
	    "mysql://u@h:-1/d",
	    "mysql://u@h:abc/d",
	    "mysql://u@h:/d",
	    "mysql://u@h:123456789012345678901234567890/d",
	    "mysql://u@h/d?ssl=1",
	    "mysql://u%00x@h/d",
	    "postgres://u@h/d",
	    "MYSQL://u@h/d",
	    "file:/tmp/x.db",
	    "/tmp/x.db",
	};
	char err[256];
	struct db *db;
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		err[0] = '\0';
		db = db_open(bad[i], err, sizeof(err));
		ck_assert_msg(db == NULL, "\"%s\" opened", bad[i]);
		ck_assert_msg(err[0] != '\0', "\"%s\": no message", bad[i]);
	}
}
END_TEST

START_TEST(test_db_open_failures_name_no_password)
{
	static const char *const bad[] = {
	    "mysql://u:s3cr3tpw@h:99999/d",
	    "mysql://u:s3cr3tpw@localhost/d?socket=/nonexistent/h2.sock",
	};
	char err[512], small[8];
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_ptr_null(db_open(bad[i], err, sizeof(err)));
		ck_assert_ptr_null(strstr(err, "s3cr3tpw"));
		/* A short buffer gets a truncated, terminated message. */
		ck_assert_ptr_null(db_open(bad[i], small, sizeof(small)));
		ck_assert_uint_lt(strlen(small), sizeof(small));
	}
}
END_TEST

START_TEST(test_db_open_sqlite_unwritable)
{
	char err[512];

	ck_assert_ptr_null(
	    db_open("sqlite:/proc/redeem-h2-none/t.db", err, sizeof(err)));
	ck_assert_str_ne(err, "");
}
END_TEST

START_TEST(test_db_engine)
{
	ck_assert_str_eq(db_engine(fx.db), fx_mysql() ? "mysql" : "sqlite");
}
END_TEST

START_TEST(test_db_query_now)
{
	struct db_stmt *st;
	int64_t now, t0 = (int64_t)time(NULL);

	ck_assert_int_eq(db_query(fx.db, STMT_NOW, &st, ""), DB_ROW);
	ck_assert_ptr_nonnull(st);
	now = db_col_i64(st, 0);
	ck_assert_int_eq(db_col_null(st, 0), 0);
	/* Only one row. */
	ck_assert_int_eq(db_step(st), DB_OK);
	db_reset(st);
	/* The database clock; the server runs on this host. */
	ck_assert_int_ge(now, t0 - 5);
	ck_assert_int_le(now, (int64_t)time(NULL) + 5);
}
END_TEST

START_TEST(test_db_query_tenant_by_name)
{
	struct db_stmt *st;

	ck_assert_int_eq(
	    db_query(fx.db, STMT_TENANT_BY_NAME, &st, "t", "default"), DB_ROW);
	ck_assert_int_eq(db_col_i64(st, 0), fx.svc.tenant_id);
	ck_assert_int_eq(db_col_i64(st, 1), 0); /* unchecked_codes */
	db_reset(st);
	ck_assert_int_eq(
	    db_query(fx.db, STMT_TENANT_BY_NAME, &st, "t", "nobody"), DB_OK);
	ck_assert_ptr_null(st);
	/* NULL matches nothing either. */
	ck_assert_int_eq(
	    db_query(fx.db, STMT_TENANT_BY_NAME, &st, "t", (char *)NULL),
	    DB_OK);
}
END_TEST

/* Values are bound, never spliced into SQL: quotes, backslashes, LIKE
 * wildcards and 4-byte UTF-8 go in and come back as they were. */
START_TEST(test_db_bound_text_round_trip)
{
	static const char *const names[] = {
	    "x'); DROP TABLE tenants; --",
	    "back\\slash \"quoted\" 'single'",
	    "%_",
	    "\xf0\x9f\x98\x80 emoji",
	    "tab\there",
	};
	struct db_stmt *st;
	size_t i;
	int64_t n;
	int rc;

	for (i = 0; i < NELEM(names); i++) {
		ck_assert_int_eq(
		    db_exec(fx.db, STMT_TENANT_INSERT, &n, "t", names[i]),
		    DB_OK);
		ck_assert_int_eq(n, 1);
	}
	for (i = 0; i < NELEM(names); i++)
		ck_assert_int_gt(tenant_id(fx.db, names[i]), 0);
	ck_assert_int_eq(tenant_id(fx.db, "%"), 0);
	/* All rows there, the table too. */
	n = 0;
	for (rc = db_query(fx.db, STMT_TENANT_LIST, &st, ""); rc == DB_ROW;
	     rc = db_step(st))
		n++;
	ck_assert_int_eq(rc, DB_OK);
	db_reset(st);
	ck_assert_int_eq(n, (int64_t)NELEM(names) + 1);
}
END_TEST

START_TEST(test_db_unique_violation)
{
	int64_t n = 42;

	ck_assert_int_eq(
	    db_exec(fx.db, STMT_TENANT_INSERT, &n, "t", "default"), DB_EUNIQUE);
	ck_assert_int_eq(n, 0);
	ck_assert_str_ne(db_errmsg(fx.db), "");
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_TENANT_INSERT, &n, "t", "acme"), DB_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_TENANT_INSERT, NULL, "t", "acme"), DB_EUNIQUE);
	/* The connection is fine afterwards. */
	ck_assert_int_gt(tenant_id(fx.db, "acme"), 0);
	/* Campaign names are unique per tenant. */
	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
		fx.svc.tenant_id, "promo", "shared", NULL, NULL, NULL, NULL),
	    DB_EUNIQUE);
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
			     tenant_id(fx.db, "acme"), "promo", "shared", NULL,
			     NULL, NULL, NULL),
	    DB_OK);
}
END_TEST

START_TEST(test_db_check_violation)
{
	const int64_t minus = -1, zero = 0, one = 1;
	int64_t tid = fx.svc.tenant_id;

	/* CHECK constraints. */
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
			     tid, "k1", "shared", NULL, NULL, &minus, NULL),
	    DB_ECHECK);
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
			     tid, "k2", "shared", NULL, NULL, NULL, &zero),
	    DB_ECHECK);
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
			     tid, "k3", "bogus", NULL, NULL, NULL, NULL),
	    DB_ECHECK);
	/* NOT NULL. */
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
			     tid, NULL, "shared", NULL, NULL, NULL, NULL),
	    DB_ECHECK);
	/* Foreign key: no such tenant. */
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
		INT64_C(999999), "k4", "shared", NULL, NULL, NULL, NULL),
	    DB_ECHECK);
	/* None of them left a row; a good one still goes in. */
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn",
			     tid, "k1", "shared", NULL, NULL, &one, &one),
	    DB_OK);
}
END_TEST

/* G1's last line of defence: the CHECK on codes, from plain SQL too. */
START_TEST(test_db_check_uses_le_max_uses)
{
	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 3, 2, NULL);
	ck_assert_int_eq(
	    db_exec_script(fx.db, "UPDATE codes SET uses = max_uses + 1"),
	    DB_ECHECK);
	ck_assert_int_eq(
	    db_exec_script(fx.db, "UPDATE codes SET uses = -1"), DB_ECHECK);
	ck_assert_int_eq(
	    db_exec_script(fx.db, "UPDATE codes SET max_uses = 0"), DB_ECHECK);
	fx_verify_clean();
}
END_TEST

START_TEST(test_db_other_failures)
{
	struct db_stmt *st;

	ck_assert_int_eq(db_exec_script(fx.db, "THIS IS NOT SQL"), DB_EFAIL);
	ck_assert_str_ne(db_errmsg(fx.db), "");
	/* An unknown letter in the format fails the statement, and the
	 * statement is usable again afterwards. */
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_TENANT_BY_NAME, NULL, "x", 1), DB_EFAIL);
	ck_assert_int_gt(tenant_id(fx.db, "default"), 0);
	/* A parameter out of range. */
	st = db_prepare(fx.db, STMT_TENANT_BY_NAME);
	ck_assert_ptr_nonnull(st);
	db_bind_text(st, 1, "default");
	db_bind_i64(st, 7, 1);
	ck_assert_int_eq(db_step(st), DB_EFAIL);
	db_reset(st);
	ck_assert_int_gt(tenant_id(fx.db, "default"), 0);
	/* An id outside the catalog. */
	ck_assert_ptr_null(db_prepare(fx.db, STMT__MAX));
	ck_assert_ptr_null(db_prepare(fx.db, (enum stmt_id) - 1));
}
END_TEST

START_TEST(test_db_changes_and_last_id)
{
	struct db_stmt *st;
	int64_t n;

	st = db_prepare(fx.db, STMT_TENANT_INSERT);
	ck_assert_ptr_nonnull(st);
	db_bind_text(st, 1, "acme");
	ck_assert_int_eq(db_step(st), DB_OK);
	ck_assert_int_eq(db_changes(st), 1);
	ck_assert_int_eq(db_last_id(st), tenant_id(fx.db, "acme"));
	db_reset(st);
	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_CLOSE, &n, "it",
			     fx.svc.tenant_id, "promo"),
	    DB_OK);
	ck_assert_int_eq(n, 1);
	/* Closed already: the WHERE matches nothing now. */
	ck_assert_int_eq(db_exec(fx.db, STMT_CAMPAIGN_CLOSE, &n, "it",
			     fx.svc.tenant_id, "promo"),
	    DB_OK);
	ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(test_db_null_columns)
{
	struct db_stmt *st;
	struct campaign k;

	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(db_query(fx.db, STMT_CAMPAIGN_BY_NAME, &st, "it",
			     fx.svc.tenant_id, "promo"),
	    DB_ROW);
	ck_assert_str_eq(db_col_text(st, 1), "promo");
	ck_assert_int_eq(db_col_null(st, 1), 0);
	/* starts_at, ends_at, budget: NULL. */
	ck_assert_int_eq(db_col_null(st, 4), 1);
	ck_assert_ptr_null(db_col_text(st, 4));
	ck_assert_int_eq(db_col_i64(st, 4), 0);
	ck_assert_int_eq(db_col_null(st, 6), 1);
	db_reset(st);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &k), ERROR_NONE);
	ck_assert_int_eq(k.budget, 0);
}
END_TEST

struct tx_arg {
	const char *name;
	int ret; /* what the body returns after its insert */
	int calls;
};

static int
tx_insert(struct db *db, void *arg)
{
	struct tx_arg *a = arg;
	int rc;

	a->calls++;
	rc = db_exec(db, STMT_TENANT_INSERT, NULL, "t", a->name);
	if (rc != DB_OK)
		return rc;
	if (a->ret == DB_EUNIQUE) /* fail on a second statement */
		return db_exec(db, STMT_TENANT_INSERT, NULL, "t", "default");
	return a->ret;
}

START_TEST(test_db_transact_commit_and_rollback)
{
	struct tx_arg commit = {"t-commit", DB_OK, 0};
	struct tx_arg rollback = {"t-rollback", DB_ROLLBACK, 0};
	struct tx_arg fail = {"t-fail", DB_EUNIQUE, 0};
	struct db *other = fx_connect();

	ck_assert_int_eq(
	    db_transact(fx.db, DB_TX_WRITE, tx_insert, &commit), DB_OK);
	ck_assert_int_eq(commit.calls, 1);
	ck_assert_int_gt(tenant_id(fx.db, "t-commit"), 0);
	ck_assert_int_gt(tenant_id(other, "t-commit"), 0);

	ck_assert_int_eq(
	    db_transact(fx.db, DB_TX_WRITE, tx_insert, &rollback), DB_ROLLBACK);
	ck_assert_int_eq(rollback.calls, 1);
	ck_assert_int_eq(tenant_id(fx.db, "t-rollback"), 0);
	ck_assert_int_eq(tenant_id(other, "t-rollback"), 0);

	/* An error ends the transaction at once, undoing its first insert;
	 * only busy and lost connections are retried. */
	ck_assert_int_eq(
	    db_transact(fx.db, DB_TX_WRITE, tx_insert, &fail), DB_EUNIQUE);
	ck_assert_int_eq(fail.calls, 1);
	ck_assert_int_eq(tenant_id(fx.db, "t-fail"), 0);
	ck_assert_int_eq(db_retries(fx.db), 0);
	db_close(other);
}
END_TEST

/*
 * SQLite's group commit: processes committing at once share syncs of the
 * WAL through "<db>.sync". At rest every ticket handed out is covered by
 * a finished sync: a commit that returned without waiting for one would
 * leave synced behind committed.
 */
START_TEST(test_db_sqlite_group_commit)
{
	enum { KIDS = 6, EACH = 40 };
	uint64_t before[2], after[2];
	char path[2000];
	FILE *f;
	pid_t pid;
	int i, k, st;

	if (fx_mysql())
		return;
	snprintf(path, sizeof(path), "%s.sync", fx.dsn + strlen("sqlite:"));
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(before, sizeof(uint64_t), 2, f), 2);
	fclose(f);
	ck_assert(before[1] == before[0]);
	for (k = 0; k < KIDS; k++) {
		if ((pid = fork()) == 0) {
			struct db *db = fx_connect();
			char name[64];
			struct tx_arg a = {name, DB_OK, 0};

			for (i = 0; i < EACH; i++) {
				snprintf(name, sizeof(name), "gc-%d-%d", k, i);
				if (db_transact(db, DB_TX_WRITE, tx_insert,
					&a) != DB_OK)
					_exit(1);
			}
			db_close(db);
			_exit(0);
		}
		ck_assert_int_gt(pid, 0);
	}
	for (k = 0; k < KIDS; k++) {
		ck_assert_int_gt(wait(&st), 0);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(after, sizeof(uint64_t), 2, f), 2);
	fclose(f);
	ck_assert(after[0] == before[0] + KIDS * EACH);
	ck_assert(after[1] == after[0]);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM tenants WHERE name "
				  "LIKE 'gc-%'"),
	    KIDS * EACH);
}
END_TEST

/*
 * A batch: its transactions are savepoints of one write transaction (on
 * SQLite; elsewhere separate transactions), a failing one undoes only
 * itself, reads see the batch's writes, and nothing is visible to another
 * connection before db_batch_end.
 */
START_TEST(test_db_batch_savepoints)
{
	struct tx_arg one = {"b-one", DB_OK, 0};
	struct tx_arg bad = {"b-bad", DB_EUNIQUE, 0};
	struct tx_arg two = {"b-two", DB_OK, 0};
	struct db *other = fx_connect();

	ck_assert_int_eq(db_batch_begin(fx.db), DB_OK);
	ck_assert_int_eq(db_batching(fx.db), !fx_mysql());
	ck_assert_int_eq(
	    db_transact(fx.db, DB_TX_WRITE, tx_insert, &one), DB_OK);
	ck_assert_int_eq(
	    db_transact(fx.db, DB_TX_WRITE, tx_insert, &bad), DB_EUNIQUE);
	ck_assert_int_eq(
	    db_transact(fx.db, DB_TX_WRITE, tx_insert, &two), DB_OK);
	ck_assert_int_gt(tenant_id(fx.db, "b-one"), 0);
	ck_assert_int_eq(tenant_id(fx.db, "b-bad"), 0);
	if (db_batching(fx.db))
		ck_assert_int_eq(tenant_id(other, "b-one"), 0);
	ck_assert_int_eq(db_batch_end(fx.db), DB_OK);
	ck_assert_int_eq(db_batching(fx.db), 0);
	ck_assert_int_gt(tenant_id(other, "b-one"), 0);
	ck_assert_int_gt(tenant_id(other, "b-two"), 0);
	ck_assert_int_eq(tenant_id(other, "b-bad"), 0);
	ck_assert_int_eq(db_retries(fx.db), 0);
	db_close(other);
}
END_TEST

/* Many redemptions in one batch keep every guarantee: the seats of a
 * 3-seat code go to the first three accounts, a repeat is a replay. */
START_TEST(test_db_batch_redemptions)
{
	char code[1][96];
	struct redeem_result r;
	char account[64];
	int i, fresh = 0, already = 0, exhausted = 0;

	fx_campaign("batch", 0, 0, 0);
	fx_codes("batch", 1, 3, code);
	ck_assert_int_eq(db_batch_begin(fx.db), DB_OK);
	for (i = 0; i < 8; i++) {
		snprintf(account, sizeof(account), "u%d@example.com", i % 5);
		ck_assert_int_eq(
		    redeem_code(&fx.svc, code[0], account, NULL, &r), 0);
		if (r.error == ERROR_NONE && !r.already)
			fresh++;
		else if (r.error == ERROR_NONE)
			already++;
		else if (r.error == ERROR_EXHAUSTED)
			exhausted++;
	}
	ck_assert_int_eq(db_batch_end(fx.db), DB_OK);
	ck_assert_int_eq(fresh, 3);
	ck_assert_int_eq(already, 3); /* u0, u1, u2 again */
	ck_assert_int_eq(exhausted, 2);
	fx_assert_code(code[0], "exhausted", 3);
	fx_verify_clean();
}
END_TEST

START_TEST(test_db_uncommitted_is_invisible)
{
	struct db *other = fx_connect();

	ck_assert_int_eq(db_begin(fx.db, DB_TX_WRITE), DB_OK);
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_TENANT_INSERT, NULL, "t", "t-open"), DB_OK);
	ck_assert_int_gt(tenant_id(fx.db, "t-open"), 0);
	ck_assert_int_eq(tenant_id(other, "t-open"), 0);
	ck_assert_int_eq(db_commit(fx.db), DB_OK);
	ck_assert_int_gt(tenant_id(other, "t-open"), 0);

	ck_assert_int_eq(db_begin(fx.db, DB_TX_WRITE), DB_OK);
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_TENANT_INSERT, NULL, "t", "t-gone"), DB_OK);
	ck_assert_int_eq(db_rollback(fx.db), DB_OK);
	ck_assert_int_eq(tenant_id(fx.db, "t-gone"), 0);
	ck_assert_int_eq(tenant_id(other, "t-gone"), 0);
	/* A rollback outside a transaction is harmless. */
	ck_assert_int_eq(db_rollback(fx.db), DB_OK);
	db_close(other);
}
END_TEST

static int
tx_read_now(struct db *db, void *arg)
{
	struct db_stmt *st;
	int rc;

	rc = db_query(db, STMT_NOW, &st, "");
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	*(int64_t *)arg = db_col_i64(st, 0);
	db_reset(st);
	return DB_OK;
}

START_TEST(test_db_transact_read)
{
	int64_t now = 0;

	ck_assert_int_eq(
	    db_transact(fx.db, DB_TX_READ, tx_read_now, &now), DB_OK);
	ck_assert_int_gt(now, 0);
	/* And a write transaction works after it. */
	ck_assert_int_eq(tenant_create(fx.db, "after-read"), ERROR_NONE);
}
END_TEST

struct mig_count {
	unsigned calls, applied;
};

static void
mig_note(void *arg, const struct migration *m, int applied)
{
	struct mig_count *c = arg;

	ck_assert_ptr_nonnull(m->name);
	c->calls++;
	c->applied += applied != 0;
}

START_TEST(test_db_migrations_idempotent)
{
	struct mig_count c = {0, 0};
	struct db_stmt *st;
	unsigned i;
	int64_t n = 0;
	int rc;

	ck_assert_uint_gt(migrations_count, 0);
	/* The fixture ran them once; twice more apply nothing. */
	ck_assert_int_eq(migrate_run(fx.db, mig_note, &c), 0);
	ck_assert_uint_eq(c.calls, migrations_count);
	ck_assert_uint_eq(c.applied, 0);
	ck_assert_int_eq(migrate_run(fx.db, NULL, NULL), 0);
	/* One row per migration in schema_migrations. */
	for (i = 0; i < migrations_count; i++) {
		ck_assert_int_eq(db_query(fx.db, STMT_MIGRATE_APPLIED, &st, "i",
				     (int64_t)migrations[i].version),
		    DB_ROW);
		ck_assert_int_eq(db_col_i64(st, 0), migrations[i].version);
		ck_assert_int_eq(db_step(st), DB_OK);
		db_reset(st);
		if (i > 0)
			ck_assert_int_gt(
			    migrations[i].version, migrations[i - 1].version);
	}
	ck_assert_int_eq(
	    db_query(fx.db, STMT_MIGRATE_APPLIED, &st, "i", INT64_C(999999)),
	    DB_OK);
	/* The seed rows went in once: one tenant, and it still works. */
	for (rc = db_query(fx.db, STMT_TENANT_LIST, &st, ""); rc == DB_ROW;
	     rc = db_step(st)) {
		ck_assert_str_eq(db_col_text(st, 1), "default");
		n++;
	}
	ck_assert_int_eq(rc, DB_OK);
	db_reset(st);
	ck_assert_int_eq(n, 1);
	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 2, 1, NULL);
	fx_verify_clean();
}
END_TEST

/* Another migrator holding the lock (MariaDB's named lock, from another
 * connection): this one waits REDEEM_MIGRATE_WAIT and fails, never runs
 * beside it; once the lock is free it runs. */
START_TEST(test_db_migrate_waits_for_the_lock)
{
	struct db *other;
	struct db_stmt *st;

	if (!fx_mysql())
		return; /* SQLite serializes writers itself */
	other = fx_connect();
	ck_assert_int_eq(
	    db_exec_script(other, "DO GET_LOCK('redeem_migrate', 0)"), DB_OK);
	setenv("REDEEM_MIGRATE_WAIT", "1", 1);
	ck_assert_int_eq(migrate_run(fx.db, NULL, NULL), -1);
	ck_assert_int_eq(
	    db_exec_script(other, "DO RELEASE_LOCK('redeem_migrate')"), DB_OK);
	ck_assert_int_eq(migrate_run(fx.db, NULL, NULL), 0);
	unsetenv("REDEEM_MIGRATE_WAIT");
	/* The lock is given back after a run. */
	ck_assert_int_eq(
	    db_query(other, STMT_MIGRATE_LOCK, &st, "i", (int64_t)0), DB_ROW);
	ck_assert_int_eq(db_col_i64(st, 0), 1);
	db_reset(st);
	db_close(other);
}
END_TEST

/*
 * Text longer than the driver's first column buffer comes back whole.
 * The catalog has no statement that reads a free-form long text (event
 * payloads are written only), so the longest readable columns are used:
 * a 254-byte account and a 500-character reversal reason of 3-byte
 * characters (1500 bytes). A 100 kB payload is written only.
 */
START_TEST(test_db_long_text_round_trip)
{
	char *account = repeat("a", 254), *reason = repeat("\xe2\x82\xac", 500);
	char *payload = repeat("{\"k\":\"0123456789\"},", 5000);
	const char *t;
	struct db_stmt *st;
	int64_t code_id, campaign_id, rid, n;
	char codes[1][96], norm[CODE_MAX + 1];

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 1, 5, codes);
	ck_assert_int_eq(db_query(fx.db, STMT_CAMPAIGN_BY_NAME, &st, "it",
			     fx.svc.tenant_id, "promo"),
	    DB_ROW);
	campaign_id = db_col_i64(st, 0);
	db_reset(st);
	ck_assert_int_eq(codetext_normalize(codes[0], norm), CODETEXT_OK);
	ck_assert_int_eq(db_query(fx.db, STMT_CODE_BY_TEXT, &st, "it",
			     fx.svc.tenant_id, norm),
	    DB_ROW);
	code_id = db_col_i64(st, 0);
	db_reset(st);
	/* A short account first, then the long one on the same statement:
	 * the column buffer grows between rows. */
	ck_assert_int_eq(db_exec(fx.db, STMT_REDEMPTION_INSERT, NULL, "iiitii",
			     fx.svc.tenant_id, code_id, campaign_id, "x@y",
			     INT64_C(1), INT64_C(1)),
	    DB_OK);
	st = db_prepare(fx.db, STMT_REDEMPTION_INSERT);
	db_bind_i64(st, 1, fx.svc.tenant_id);
	db_bind_i64(st, 2, code_id);
	db_bind_i64(st, 3, campaign_id);
	db_bind_text(st, 4, account);
	db_bind_i64(st, 5, 2);
	db_bind_i64(st, 6, 1);
	ck_assert_int_eq(db_step(st), DB_OK);
	rid = db_last_id(st);
	db_reset(st);
	ck_assert_int_gt(rid, 0);
	ck_assert_int_eq(db_exec(fx.db, STMT_REDEMPTION_REVERSE, &n, "ttii",
			     reason, "keep_seat", rid, fx.svc.tenant_id),
	    DB_OK);
	ck_assert_int_eq(n, 1);

	ck_assert_int_eq(db_query(fx.db, STMT_REDEMPTION_BY_CODE_ACCOUNT, &st,
			     "it", code_id, "x@y"),
	    DB_ROW);
	ck_assert_str_eq(db_col_text(st, 4), "x@y");
	db_reset(st);
	ck_assert_int_eq(db_query(fx.db, STMT_REDEMPTION_BY_ID, &st, "ii", rid,
			     fx.svc.tenant_id),
	    DB_ROW);
	t = db_col_text(st, 4);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(strlen(t), 254);
	ck_assert_str_eq(t, account);
	t = db_col_text(st, 8);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(strlen(t), 1500);
	ck_assert_str_eq(t, reason);
	ck_assert_str_eq(db_col_text(st, 9), "keep_seat");
	db_reset(st);
	/* The short one again after the long one. */
	ck_assert_int_eq(db_query(fx.db, STMT_REDEMPTION_BY_CODE_ACCOUNT, &st,
			     "it", code_id, "x@y"),
	    DB_ROW);
	ck_assert_str_eq(db_col_text(st, 4), "x@y");
	ck_assert_int_eq(db_col_null(st, 8), 1);
	db_reset(st);

	ck_assert_uint_gt(strlen(payload), 90000);
	ck_assert_int_eq(
	    db_exec(fx.db, STMT_EVENT_INSERT, &n, "ittnt", fx.svc.tenant_id,
		"evt_h2_long", "test.long", NULL, payload),
	    DB_OK);
	ck_assert_int_eq(n, 1);
	free(account);
	free(reason);
	free(payload);
}
END_TEST

START_TEST(test_db_retries_start_at_zero)
{
	struct db *other = fx_connect();

	ck_assert_int_eq(db_retries(fx.db), 0);
	ck_assert_int_eq(db_retries(other), 0);
	ck_assert_int_eq(tenant_create(other, "acme"), ERROR_NONE);
	ck_assert_int_eq(db_retries(other), 0);
	db_close(other);
	db_close(NULL); /* harmless */
}
END_TEST

/*
 * A connection the server drops (here: killed by another session) is
 * replaced once, inside the request that finds it dead: the redemption
 * still succeeds. MySQL/MariaDB only; SQLite has no connection to lose.
 */
START_TEST(test_db_reconnect_once)
{
	struct redeem_result res;
	char code[1][96], sql[512], err[256];
	struct db *admin;
	int64_t before;

	if (!fx_mysql())
		return;
	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 1, 10, code);
	ck_assert_int_eq(redeem_code(&fx.svc, code[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	admin = db_open(getenv("REDEEM_TEST_DB"), err, sizeof(err));
	ck_assert_msg(admin != NULL, "%s", err);
	snprintf(sql, sizeof(sql),
	    "SET @victim = (SELECT ID FROM information_schema.PROCESSLIST "
	    "WHERE DB = '%s' LIMIT 1); "
	    "EXECUTE IMMEDIATE CONCAT('KILL CONNECTION ', @victim)",
	    fx.name);
	ck_assert_int_eq(db_exec_script(admin, sql), DB_OK);
	db_close(admin);
	before = db_retries(fx.db);
	ck_assert_int_eq(redeem_code(&fx.svc, code[0], "b@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(res.already, 0);
	ck_assert_int_gt(db_retries(fx.db), before);
	/* The replay of the first one still answers from the new link. */
	ck_assert_int_eq(redeem_code(&fx.svc, code[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.already, 1);
	fx_verify_clean();
}
END_TEST

Suite *
suite_db(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create("dsn");

	/* DSNs that never reach a server: no fixture needed. */
	tcase_add_test(tc, test_db_open_bad_dsn);
	tcase_add_test(tc, test_db_open_failures_name_no_password);
	tcase_add_test(tc, test_db_open_sqlite_unwritable);
	suite_add_tcase(s, tc);

	tc = tcase_create("db");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_db_engine);
	tcase_add_test(tc, test_db_query_now);
	tcase_add_test(tc, test_db_query_tenant_by_name);
	tcase_add_test(tc, test_db_bound_text_round_trip);
	tcase_add_test(tc, test_db_unique_violation);
	tcase_add_test(tc, test_db_check_violation);
	tcase_add_test(tc, test_db_check_uses_le_max_uses);
	tcase_add_test(tc, test_db_other_failures);
	tcase_add_test(tc, test_db_changes_and_last_id);
	tcase_add_test(tc, test_db_null_columns);
	tcase_add_test(tc, test_db_transact_commit_and_rollback);
	tcase_add_test(tc, test_db_uncommitted_is_invisible);
	tcase_add_test(tc, test_db_sqlite_group_commit);
	tcase_add_test(tc, test_db_batch_savepoints);
	tcase_add_test(tc, test_db_batch_redemptions);
	tcase_add_test(tc, test_db_transact_read);
	tcase_add_test(tc, test_db_migrations_idempotent);
	tcase_add_test(tc, test_db_migrate_waits_for_the_lock);
	tcase_add_test(tc, test_db_long_text_round_trip);
	tcase_add_test(tc, test_db_retries_start_at_zero);
	tcase_add_test(tc, test_db_reconnect_once);
	suite_add_tcase(s, tc);
	return s;
}
