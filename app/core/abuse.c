#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "abuse.h"

enum { ABUSE_CLIENT = 1, ABUSE_ACCOUNT = 2 };

enum error_word
abuse_check(struct svc *s, const char *client, const char *account,
    int64_t *retry_after)
{
	struct db_stmt *st;
	int64_t nclient, naccount, left;
	int rc, over_client, over_account;

	*retry_after = 0;
	const char *c = client ? client : "";
	int64_t w = s->cfg.abuse_window, t = s->tenant_id;

	/* kinds: 1 client key, 2 account (literals in the statement) */
	rc = db_query(s->db, STMT_ABUSE_COUNT, &st, "itiitiitiiitii", t, c, w,
	    t, account, w, t, c, w, w, t, account, w, w);
	if (rc != DB_ROW)
		return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
	nclient = client ? db_col_i64(st, 0) : 0;
	naccount = db_col_i64(st, 1);
	over_client = nclient >= s->cfg.abuse_limit_client;
	over_account = naccount >= s->cfg.abuse_limit_account;
	/* The wait is until every key over its limit is under it again:
	 * for each, when its oldest failure leaves the window. */
	if (over_client && !db_col_null(st, 2) &&
	    (left = db_col_i64(st, 2)) > *retry_after)
		*retry_after = left;
	if (over_account && !db_col_null(st, 3) &&
	    (left = db_col_i64(st, 3)) > *retry_after)
		*retry_after = left;
	db_reset(st);
	if (over_client || over_account) {
		if (*retry_after < 1)
			*retry_after = 1;
		return ERROR_RATE_LIMITED;
	}
	*retry_after = 0;
	return ERROR_NONE;
}

static void
abuse_record_one(struct svc *s, int kind, const char *subject)
{
	int rc;

	rc = db_exec(s->db, STMT_ABUSE_PRUNE, NULL, "iiti", s->tenant_id,
	    (int64_t)kind, subject, s->cfg.abuse_window);
	if (rc == DB_OK)
		rc = db_exec(s->db, STMT_ABUSE_INSERT, NULL, "iit",
		    s->tenant_id, (int64_t)kind, subject);
	if (rc != DB_OK)
		log_warn("abuse gate: recording a failure failed: %s",
		    db_errmsg(s->db));
}

void
abuse_record(struct svc *s, const char *client, const char *account)
{
	if (client != NULL && *client != '\0')
		abuse_record_one(s, ABUSE_CLIENT, client);
	if (account != NULL && *account != '\0')
		abuse_record_one(s, ABUSE_ACCOUNT, account);
}
