#include <stdlib.h>
#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "svc.h"

void
svc_config_defaults(struct svc_config *c)
{
	int64_t limit = env_i64("REDEEM_ABUSE_LIMIT", 20, 1, 1000000);

	c->abuse_limit_client =
	    env_i64("REDEEM_ABUSE_LIMIT_CLIENT", limit, 1, 1000000);
	c->abuse_limit_account =
	    env_i64("REDEEM_ABUSE_LIMIT_ACCOUNT", limit, 1, 1000000);
	c->abuse_window = env_i64("REDEEM_ABUSE_WINDOW", 600, 1, 86400 * 30);
	c->split_min_uses =
	    env_i64("REDEEM_SPLIT_MIN_USES", 1000, 0, INT64_C(1000000000000));
	c->split_shards = env_i64("REDEEM_SPLIT_SHARDS", 16, 2, 256);
}

enum error_word
svc_db_error(int status)
{
	(void)status;
	return ERROR_UNAVAILABLE;
}

int
tenant_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '.' || c == '_' ||
			c == '-'))
			return 0;
	}
	return 1;
}

enum error_word
svc_refresh(struct svc *s)
{
	struct db_stmt *st;
	int rc;

	rc = db_query(s->db, STMT_TENANT_BY_NAME, &st, "t", s->tenant);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return ERROR_UNAVAILABLE;
	s->tenant_id = db_col_i64(st, 0);
	s->unchecked_codes = db_col_i64(st, 1);
	db_reset(st);
	return ERROR_NONE;
}

enum error_word
svc_open(struct svc *s, struct db *db, const char *tenant)
{
	memset(s, 0, sizeof(*s));
	s->db = db;
	svc_config_defaults(&s->cfg);
	if (!tenant_name_ok(tenant))
		return ERROR_NOT_FOUND;
	str_copy(s->tenant, tenant, sizeof(s->tenant));
	return svc_refresh(s);
}

void
svc_init(struct svc *s, struct db *db, int64_t tenant_id, const char *tenant,
    int64_t unchecked_codes, const struct svc_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->db = db;
	s->tenant_id = tenant_id;
	str_copy(s->tenant, tenant, sizeof(s->tenant));
	s->unchecked_codes = unchecked_codes;
	s->cfg = *cfg;
}

struct tenant_tx {
	const char *name;
	enum error_word err;
};

static int
tenant_create_tx(struct db *db, void *arg)
{
	struct tenant_tx *t = arg;
	int rc;

	t->err = ERROR_NONE;
	rc = db_exec(db, STMT_TENANT_INSERT, NULL, "t", t->name);
	if (rc == DB_EUNIQUE) {
		t->err = ERROR_CONFLICT;
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	return db_exec(db, STMT_COUNTER_CREATE, NULL, "t", t->name);
}

enum error_word
tenant_create(struct db *db, const char *name)
{
	struct tenant_tx t = {name, ERROR_NONE};
	int rc;

	if (!tenant_name_ok(name))
		return ERROR_BAD_REQUEST;
	rc = db_transact(db, DB_TX_WRITE, tenant_create_tx, &t);
	if (rc < 0)
		return svc_db_error(rc);
	return t.err;
}
