#include <stdio.h>
#include <string.h>

#include "../lib/common.h"
#include "verify.h"

#define VERIFY_SHOW 50 /* rows listed per check; all are counted */

static const struct {
	const char *name;
	enum stmt_id stmt;
	const char *fmt; /* the line for one offending row */
} checks[VERIFY__MAX] = {
    [VERIFY_G1_SAFETY] = {"G1 safety", STMT_VERIFY_G1,
	"code %s: uses %s outside 0..max_uses %s"},
    [VERIFY_G1_SPLIT] = {"G1 split counter rows", STMT_VERIFY_G1_SPLIT,
	"code %s: its %s counter rows (max_uses summing to %s) disagree "
	"with the code or one is outside 0..max_uses"},
    [VERIFY_G2_CONSERVATION] = {"G2 conservation", STMT_VERIFY_G2_HOLDS,
	"code %s: uses %s but %s seats are held (redemptions and holds)"},
    [VERIFY_G3_IDEMPOTENCY] = {"G3 idempotency", STMT_VERIFY_G3,
	"code %s: account %s holds %s redemptions"},
    [VERIFY_G4_BUDGET] = {"G4 budget", STMT_VERIFY_G4_HOLDS,
	"campaign %s: redeemed %s, budget %s, seats held "
	"by redemptions and holds differ or exceed it"},
    [VERIFY_G4_ACCOUNT_LIMIT] = {"G4 per-account limit",
	STMT_VERIFY_G4_ACCOUNTS_HOLDS,
	"campaign %s: account %s counted %s, which disagrees with its "
	"redemptions and holds or the limit"},
    [VERIFY_G5_CAPACITY] = {"G5 capacity", STMT_VERIFY_G5,
	"semaphore %s: in_use %s but live permits hold %s"},
    [VERIFY_G5_GRANTS] = {"G5 capacity at grant", STMT_VERIFY_G5_GRANTS,
	"semaphore %s: a grant left in_use at %s over its capacity %s"},
    [VERIFY_G6_FENCING] = {"G6 fencing", STMT_VERIFY_G6,
	"%s %s: fencing token %s repeats, passes the counter or breaks "
	"grant order"},
    [VERIFY_G7_ONE_EVENT] = {"G7 exactly one event", STMT_VERIFY_G7,
	"redemption %s: %s code.redeemed events (want 1)%s"},
    [VERIFY_G8_STATE] = {"G8 state", STMT_VERIFY_G8,
	"code %s: state %s disagrees with its uses (%s) and max_uses"},
};

const char *
verify_check_name(enum verify_check c)
{
	return (unsigned)c < VERIFY__MAX ? checks[c].name : "?";
}

struct verify_ctx {
	struct verify_report *rep;
	void (*fn)(void *, enum verify_check, const char *);
	void *arg;
};

static const char *
col(struct db_stmt *st, int i)
{
	const char *t = db_col_text(st, i);

	return t ? t : "NULL";
}

static int
verify_tx(struct db *db, void *arg)
{
	struct verify_ctx *v = arg;
	struct db_stmt *st;
	char line[512];
	int i, rc;

	memset(v->rep, 0, sizeof(*v->rep));
	for (i = 0; i < VERIFY__MAX; i++) {
		rc = db_query(db, checks[i].stmt, &st, "");
		while (rc == DB_ROW) {
			if (v->fn != NULL &&
			    v->rep->violations[i] < VERIFY_SHOW) {
				/* A fixed format of the table above. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
				snprintf(line, sizeof(line), checks[i].fmt,
				    col(st, 0), col(st, 1), col(st, 2));
#pragma GCC diagnostic pop
				v->fn(v->arg, (enum verify_check)i, line);
			}
			v->rep->violations[i]++;
			v->rep->total++;
			rc = db_step(st);
		}
		if (st != NULL)
			db_reset(st);
		if (rc != DB_OK)
			return rc;
	}
	return DB_ROLLBACK; /* read only: nothing to commit */
}

int
verify_run(struct db *db, struct verify_report *rep,
    void (*fn)(void *, enum verify_check, const char *), void *arg)
{
	struct verify_ctx v = {rep, fn, arg};
	int rc = db_transact(db, DB_TX_READ, verify_tx, &v);

	return rc == DB_ROLLBACK ? 0 : -1;
}
