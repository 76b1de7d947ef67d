/*
 * Test fixture: a fresh, migrated database per test on the backend named
 * by REDEEM_TEST_DB ("sqlite", the default, or a MySQL DSN whose database
 * exists: each test then creates and drops its own database beside it).
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdint.h>

#include <check.h>

#include "../../app/core/svc.h"

struct fixture {
	char dsn[1400]; /* the test's own database */
	char name[64];  /* its name (MySQL) or file (SQLite) */
	char dir[256];  /* SQLite: the temp folder */
	struct db *db;  /* open, migrated */
	struct svc svc; /* tenant "default" */
	int shards;     /* fx_codes' counter rows per code (codes_gen) */
};

extern struct fixture fx;

/* For tcase_add_checked_fixture: set up and tear down `fx`. */
void fx_setup(void);
void fx_teardown(void);
/* 1 when the tests run on MySQL/MariaDB. */
int fx_mysql(void);
/* A second connection to the test's database (children of a race). */
struct db *fx_connect(void);
/* Creates a shared campaign (budget, limit 0: none). */
void fx_campaign(const char *name, int pool, int64_t budget, int64_t limit);
/* Generates n codes with max_uses into out[n][CODE_DISPLAY_MAX]. */
void fx_codes(const char *campaign, int n, int64_t max_uses, char (*out)[96]);
/* The same with an expiry (0: none) and without the check character. */
void fx_codes_with(const char *campaign, int n, int64_t max_uses,
    int64_t expires_at, int no_check, char (*out)[96]);
/* Runs SQL as is (test set-up that no API offers, e.g. breaking a row to
 * see verify catch it). */
void fx_sql(const char *sql);
/* The number a SELECT COUNT(*) gives, read back through the `redeemed`
 * column of a budget-less campaign "probe" (tests only: the catalog has no
 * statement for ad-hoc counts, and verify ignores such a campaign). */
int64_t fx_count(const char *select);
/* Asserts a code's state and uses (any spelling of the code). */
void fx_assert_code(const char *code, const char *state, int64_t uses);
/* Asserts that verify finds nothing. */
void fx_verify_clean(void);
/* Asserts that verify finds n violations of check (enum verify_check)
 * and none of any other. */
void fx_verify_only(int check, int64_t n);
/* Puts the hold or permit (table "holds" or "permits") with external_id
 * xid a minute past its expires_at, by the database clock. */
void fx_lapse(const char *table, const char *xid);

/* Suites, one per module. */
Suite *suite_lib(void);
Suite *suite_codetext(void);
Suite *suite_db(void);
Suite *suite_campaigns(void);
Suite *suite_codes(void);
Suite *suite_redeem(void);
Suite *suite_pool(void);
Suite *suite_reverse(void);
Suite *suite_abuse(void);
Suite *suite_verify(void);
Suite *suite_race(void);
Suite *suite_web(void);
Suite *suite_apikey(void);
Suite *suite_holds(void);
Suite *suite_permits(void);
Suite *suite_webhooks(void);
Suite *suite_sweep(void);
Suite *suite_session(void);
Suite *suite_audit(void);
Suite *suite_seats(void);

#endif
