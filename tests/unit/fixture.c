#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/verify.h"
#include "../../app/db/migrate.h"
#include "fixture.h"

struct fixture fx;
static int fx_serial;

int
fx_mysql(void)
{
	const char *b = getenv("REDEEM_TEST_DB");

	return b != NULL && strncmp(b, "mysql://", 8) == 0;
}

/* The base DSN with its database name replaced by name. */
static void
mysql_dsn_with(const char *base, const char *name, char *out, size_t n)
{
	const char *q = strchr(base, '?');
	const char *end = q ? q : base + strlen(base);
	const char *slash = end;

	while (slash > base && *slash != '/')
		slash--;
	snprintf(
	    out, n, "%.*s/%s%s", (int)(slash - base), base, name, q ? q : "");
}

void
fx_setup(void)
{
	const char *base = getenv("REDEEM_TEST_DB");
	char err[512], sql[256];
	struct db *admin;

	memset(&fx, 0, sizeof(fx));
	if (fx_mysql()) {
		snprintf(fx.name, sizeof(fx.name), "t_%ld_%d", (long)getpid(),
		    fx_serial++);
		admin = db_open(base, err, sizeof(err));
		ck_assert_msg(admin != NULL, "mysql: %s", err);
		snprintf(sql, sizeof(sql),
		    "DROP DATABASE IF EXISTS %s; CREATE DATABASE %s", fx.name,
		    fx.name);
		ck_assert_int_eq(db_exec_script(admin, sql), DB_OK);
		db_close(admin);
		mysql_dsn_with(base, fx.name, fx.dsn, sizeof(fx.dsn));
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(fx.dir, sizeof(fx.dir), "%s/redeem-test-XXXXXX",
		    tmp ? tmp : "/tmp");
		ck_assert_ptr_nonnull(mkdtemp(fx.dir));
		snprintf(fx.name, sizeof(fx.name), "t.db");
		snprintf(fx.dsn, sizeof(fx.dsn), "sqlite:%s/t.db", fx.dir);
	}
	fx.db = db_open(fx.dsn, err, sizeof(err));
	ck_assert_msg(fx.db != NULL, "open %s: %s", fx.dsn, err);
	ck_assert_int_eq(migrate_run(fx.db, NULL, NULL), 0);
	ck_assert_int_eq(svc_open(&fx.svc, fx.db, "default"), ERROR_NONE);
}

void
fx_teardown(void)
{
	char err[512], sql[128], path[400];
	struct db *admin;

	db_close(fx.db);
	fx.db = NULL;
	if (fx_mysql()) {
		admin = db_open(getenv("REDEEM_TEST_DB"), err, sizeof(err));
		if (admin != NULL) {
			snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s",
			    fx.name);
			db_exec_script(admin, sql);
			db_close(admin);
		}
	} else if (fx.dir[0] != '\0') {
		static const char *const suffix[] = {
		    "", "-wal", "-shm", ".lock"};
		size_t i;

		for (i = 0; i < NELEM(suffix); i++) {
			snprintf(
			    path, sizeof(path), "%s/t.db%s", fx.dir, suffix[i]);
			unlink(path);
		}
		rmdir(fx.dir);
	}
}

struct db *
fx_connect(void)
{
	char err[512];
	struct db *db = db_open(fx.dsn, err, sizeof(err));

	ck_assert_msg(db != NULL, "connect: %s", err);
	return db;
}

void
fx_campaign(const char *name, int pool, int64_t budget, int64_t limit)
{
	struct campaign k;

	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "%s", name);
	k.kind = pool ? CAMPAIGN_POOL : CAMPAIGN_SHARED;
	k.budget = budget;
	k.per_account_limit = limit;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
}

struct fx_gen {
	char (*out)[96];
	int n;
};

static void
fx_emit(void *arg, const char *display)
{
	struct fx_gen *g = arg;

	if (g->out != NULL)
		snprintf(g->out[g->n], 96, "%s", display);
	g->n++;
}

void
fx_codes_with(const char *campaign, int n, int64_t max_uses, int64_t expires_at,
    int no_check, char (*out)[96])
{
	struct codes_gen g;
	struct fx_gen fg = {out, 0};
	int64_t created;

	memset(&g, 0, sizeof(g));
	g.campaign = campaign;
	g.count = n;
	g.max_uses = max_uses;
	g.expires_at = expires_at;
	g.no_check = no_check;
	g.shards = fx.shards;
	g.emit = fx_emit;
	g.arg = &fg;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, n);
	ck_assert_int_eq(fg.n, n);
}

void
fx_codes(const char *campaign, int n, int64_t max_uses, char (*out)[96])
{
	fx_codes_with(campaign, n, max_uses, 0, 0, out);
}

int64_t
fx_count(const char *select)
{
	struct campaign k;
	char sql[512];

	if (campaign_get(&fx.svc, "probe", &k) == ERROR_NOT_FOUND)
		fx_campaign("probe", 0, 0, 0);
	snprintf(sql, sizeof(sql),
	    "UPDATE campaigns SET redeemed = (%s) WHERE tenant_id = %lld "
	    "AND name = 'probe'",
	    select, (long long)fx.svc.tenant_id);
	fx_sql(sql);
	ck_assert_int_eq(campaign_get(&fx.svc, "probe", &k), ERROR_NONE);
	return k.redeemed;
}

void
fx_assert_code(const char *code, const char *state, int64_t uses)
{
	struct code_info ci;

	ck_assert_int_eq(code_get(&fx.svc, code, &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, state);
	ck_assert_int_eq(ci.uses, uses);
}

void
fx_sql(const char *sql)
{
	ck_assert_msg(db_exec_script(fx.db, sql) == DB_OK, "%s: %s", sql,
	    db_errmsg(fx.db));
}

static void
fx_verify_line(void *arg, enum verify_check c, const char *line)
{
	(void)arg;
	fprintf(stderr, "verify: %s: %s\n", verify_check_name(c), line);
}

void
fx_verify_clean(void)
{
	struct verify_report rep;

	ck_assert_int_eq(verify_run(fx.db, &rep, fx_verify_line, NULL), 0);
	ck_assert_int_eq(rep.total, 0);
}

void
fx_verify_only(int check, int64_t n)
{
	struct verify_report rep;
	int i;

	ck_assert_int_eq(verify_run(fx.db, &rep, NULL, NULL), 0);
	for (i = 0; i < VERIFY__MAX; i++)
		ck_assert_msg(rep.violations[i] == (i == check ? n : 0),
		    "%s: %lld violations", verify_check_name(i),
		    (long long)rep.violations[i]);
}

void
fx_lapse(const char *table, const char *xid)
{
	char sql[384];

	snprintf(sql, sizeof(sql),
	    "UPDATE %s SET expires_at = UNIX_TIMESTAMP() - 60 "
	    "WHERE external_id = '%s'",
	    table, xid);
	fx_sql(sql);
}
