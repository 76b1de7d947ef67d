/* app/core/verify.c: every guarantee checked on a live database. Each
 * test breaks one guarantee with plain SQL and expects verify to name
 * it, and only it. */
#include <stdio.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "../../app/core/verify.h"
#include "fixture.h"

/* Codes of the world set up by world(). */
static char shared[3][96]; /* campaign "k": budget 10, limit 5, 3 uses */
static char single[1][96]; /* campaign "one": single use */

static void
redeem_ok(const char *code, const char *account)
{
	struct redeem_result res;

	ck_assert_int_eq(redeem_code(&fx.svc, code, account, NULL, &res), 0);
	ck_assert_msg(res.error == ERROR_NONE, "redeem %s: %s", code,
	    error_name(res.error));
}

/* A small consistent world: a@x has redeemed shared[0] and single[0]. */
static void
world(void)
{
	fx_campaign("k", 0, 10, 5);
	fx_campaign("one", 0, 0, 0);
	fx_codes("k", 3, 3, shared);
	fx_codes("one", 1, 1, single);
	redeem_ok(shared[0], "a@x");
	redeem_ok(single[0], "a@x");
	fx_verify_clean();
}

struct lines {
	int64_t n[VERIFY__MAX];
	char last[VERIFY__MAX][512];
};

static void
on_line(void *arg, enum verify_check c, const char *line)
{
	struct lines *l = arg;

	ck_assert_int_ge(c, 0);
	ck_assert_int_lt(c, VERIFY__MAX);
	ck_assert_ptr_nonnull(line);
	l->n[c]++;
	snprintf(l->last[c], sizeof(l->last[c]), "%s", line);
}

/*
 * Runs verify and asserts that check c has n violations (n < 0: at least
 * one) and every other check none. Returns the report.
 */
static struct verify_report
expect_only(enum verify_check c, int64_t n)
{
	struct verify_report rep;
	struct lines l;
	int i;

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(verify_run(fx.db, &rep, on_line, &l), 0);
	for (i = 0; i < VERIFY__MAX; i++) {
		if (i == (int)c)
			continue;
		ck_assert_msg(rep.violations[i] == 0, "%s: %lld unexpected: %s",
		    verify_check_name((enum verify_check)i),
		    (long long)rep.violations[i], l.last[i]);
	}
	if (n < 0)
		ck_assert_msg(rep.violations[c] > 0, "%s not found",
		    verify_check_name(c));
	else
		ck_assert_msg(rep.violations[c] == n, "%s: %lld, want %lld",
		    verify_check_name(c), (long long)rep.violations[c],
		    (long long)n);
	ck_assert_int_eq(rep.total, rep.violations[c]);
	/* Each violation is reported as a line naming it. */
	ck_assert_int_eq(l.n[c], rep.violations[c]);
	ck_assert_str_ne(l.last[c], "");
	return rep;
}

/* fx_sql with one normalized code spliced in (alphabet only: safe). */
static void
sql_code(const char *fmt, const char *display)
{
	char norm[CODE_MAX + 1], sql[512];

	ck_assert_int_eq(codetext_normalize(display, norm), CODETEXT_OK);
	ck_assert_int_eq(codetext_in_alphabet(norm), 1);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(sql, sizeof(sql), fmt, norm);
#pragma GCC diagnostic pop
	fx_sql(sql);
}

START_TEST(test_verify_clean_empty)
{
	struct verify_report rep;
	int i;

	memset(&rep, 0xff, sizeof(rep));
	ck_assert_int_eq(verify_run(fx.db, &rep, NULL, NULL), 0);
	ck_assert_int_eq(rep.total, 0);
	for (i = 0; i < VERIFY__MAX; i++)
		ck_assert_int_eq(rep.violations[i], 0);
}
END_TEST

/* Normal operation keeps every guarantee: redemptions, replays, budget,
 * limits, reversals of both policies, pools, revokes, closes. */
START_TEST(test_verify_clean_after_activity)
{
	struct redeem_result res;
	struct code_info ci;
	struct campaign k;
	int64_t rid;

	world();
	redeem_ok(shared[0], "b@x");
	ck_assert_int_eq(
	    redeem_code(&fx.svc, shared[0], "A@X ", NULL, &res), 0);
	ck_assert_int_eq(res.already, 1); /* replay: no second event */
	rid = res.r.id;
	redeem_ok(shared[1], "a@x");
	ck_assert_int_eq(
	    redeem_reverse(&fx.svc, rid, "refund", REVERSAL_RETURN_SEAT, &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(redeem_code(&fx.svc, single[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(redeem_reverse(&fx.svc, res.r.id, "chargeback",
			     REVERSAL_KEEP_SEAT, &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 2, 1, NULL);
	ck_assert_int_eq(
	    redeem_pool_claim(&fx.svc, "pool", "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(code_revoke(&fx.svc, shared[2], &ci), ERROR_NONE);
	ck_assert_int_eq(campaign_close(&fx.svc, "one", &k), ERROR_NONE);
	fx_verify_clean();
}
END_TEST

/* G1 cannot be broken while the CHECK constraint holds. */
START_TEST(test_verify_g1_enforced_by_check)
{
	world();
	ck_assert_int_ne(
	    db_exec_script(fx.db, "UPDATE codes SET uses = max_uses + 1"),
	    DB_OK);
	ck_assert_int_ne(
	    db_exec_script(fx.db, "UPDATE codes SET uses = -1"), DB_OK);
	fx_verify_clean();
}
END_TEST

/* G3 cannot be broken while UNIQUE(code_id, account) holds. */
START_TEST(test_verify_g3_enforced_by_unique)
{
	world();
	ck_assert_int_eq(db_exec_script(fx.db,
			     "INSERT INTO redemptions (tenant_id, code_id, "
			     "campaign_id, account, seq, redeemed_at) "
			     "SELECT tenant_id, code_id, campaign_id, "
			     "account, seq + 1000, redeemed_at "
			     "FROM redemptions"),
	    DB_EUNIQUE);
	fx_verify_clean();
}
END_TEST

START_TEST(test_verify_g2_uses_without_redemption)
{
	world();
	/* shared[0]: one redemption, uses 1 of 3; now uses 2. */
	sql_code(
	    "UPDATE codes SET uses = uses + 1 WHERE code = '%s'", shared[0]);
	expect_only(VERIFY_G2_CONSERVATION, 1);
}
END_TEST

START_TEST(test_verify_g2_redemption_without_use)
{
	world();
	sql_code("UPDATE codes SET uses = 0 WHERE code = '%s'", shared[0]);
	expect_only(VERIFY_G2_CONSERVATION, 1);
}
END_TEST

/* A reversal that returned the seat no longer counts; flipping its policy
 * to keep_seat makes the seat missing. */
START_TEST(test_verify_g2_reversal_policy)
{
	struct redeem_result res;

	fx_campaign("plain", 0, 0, 0);
	fx_codes("plain", 1, 2, shared);
	ck_assert_int_eq(redeem_code(&fx.svc, shared[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(redeem_reverse(&fx.svc, res.r.id, "refund",
			     REVERSAL_RETURN_SEAT, &res),
	    0);
	fx_verify_clean();
	fx_sql("UPDATE redemptions SET reversal_policy = 'keep_seat'");
	expect_only(VERIFY_G2_CONSERVATION, 1);
}
END_TEST

START_TEST(test_verify_g4_budget)
{
	world();
	/* Room left (2 <= 10), so the CHECK lets it through. */
	fx_sql("UPDATE campaigns SET redeemed = redeemed + 1 "
	       "WHERE name = 'k'");
	expect_only(VERIFY_G4_BUDGET, 1);
}
END_TEST

START_TEST(test_verify_g4_budget_undercount)
{
	world();
	fx_sql("UPDATE campaigns SET redeemed = 0 WHERE name = 'k'");
	expect_only(VERIFY_G4_BUDGET, 1);
}
END_TEST

START_TEST(test_verify_g4_account_count)
{
	world();
	fx_sql("UPDATE campaign_accounts SET n = n + 1");
	expect_only(VERIFY_G4_ACCOUNT_LIMIT, 1);
}
END_TEST

/* Counts that agree with the redemptions but exceed the limit. */
START_TEST(test_verify_g4_account_over_limit)
{
	char codes[2][96];

	fx_campaign("lim", 0, 0, 2);
	fx_codes("lim", 2, 1, codes);
	redeem_ok(codes[0], "a@x");
	redeem_ok(codes[1], "a@x");
	fx_verify_clean();
	fx_sql("UPDATE campaigns SET per_account_limit = 1 "
	       "WHERE name = 'lim'");
	expect_only(VERIFY_G4_ACCOUNT_LIMIT, 1);
}
END_TEST

START_TEST(test_verify_g7_event_missing)
{
	world();
	/* Events reference redemptions, not the other way: free to go. */
	fx_sql("DELETE FROM events WHERE type = 'code.redeemed'");
	expect_only(VERIFY_G7_ONE_EVENT, 2);
}
END_TEST

START_TEST(test_verify_g7_event_twice)
{
	world();
	sql_code("INSERT INTO events (tenant_id, event_id, type, "
		 "redemption_id, created_at, payload) "
		 "SELECT e.tenant_id, 'evt_h2_twice', e.type, e.redemption_id, "
		 "e.created_at, e.payload FROM events e "
		 "JOIN redemptions r ON r.id = e.redemption_id "
		 "JOIN codes c ON c.id = r.code_id WHERE c.code = '%s'",
	    shared[0]);
	expect_only(VERIFY_G7_ONE_EVENT, 1);
}
END_TEST

START_TEST(test_verify_g7_event_orphan)
{
	world();
	fx_sql("INSERT INTO events (tenant_id, event_id, type, "
	       "redemption_id, created_at, payload) "
	       "SELECT id, 'evt_h2_orphan', 'code.redeemed', NULL, 0, '{}' "
	       "FROM tenants WHERE name = 'default'");
	expect_only(VERIFY_G7_ONE_EVENT, 1);
	/* Other event types are not redemptions' business. */
	fx_sql("DELETE FROM events WHERE event_id = 'evt_h2_orphan'");
	fx_sql("INSERT INTO events (tenant_id, event_id, type, "
	       "redemption_id, created_at, payload) "
	       "SELECT id, 'evt_h2_other', 'something.else', NULL, 0, '{}' "
	       "FROM tenants WHERE name = 'default'");
	fx_verify_clean();
}
END_TEST

START_TEST(test_verify_g8_active_at_max)
{
	world();
	/* single[0]: uses 1 = max_uses 1, state redeemed; now active. */
	fx_sql("UPDATE codes SET state = 'active' WHERE uses = max_uses");
	expect_only(VERIFY_G8_STATE, 1);
}
END_TEST

START_TEST(test_verify_g8_exhausted_with_room)
{
	world();
	fx_sql("UPDATE codes SET state = 'exhausted' WHERE uses = 0");
	expect_only(VERIFY_G8_STATE, 2);
}
END_TEST

/* "redeemed" is for single-use codes only. */
START_TEST(test_verify_g8_redeemed_multi_use)
{
	world();
	redeem_ok(shared[1], "a@x");
	redeem_ok(shared[1], "b@x");
	redeem_ok(shared[1], "c@x");
	fx_verify_clean();
	fx_sql("UPDATE codes SET state = 'redeemed' "
	       "WHERE state = 'exhausted'");
	expect_only(VERIFY_G8_STATE, 1);
}
END_TEST

/* Revoked and expired codes may have any counters. */
START_TEST(test_verify_g8_revoked_expired_exempt)
{
	world();
	fx_sql("UPDATE codes SET state = 'revoked' WHERE uses = 0");
	fx_sql("UPDATE codes SET state = 'expired' WHERE uses = max_uses");
	fx_verify_clean();
}
END_TEST

/* Every row is counted; the report lists the first VERIFY_SHOW (50). */
START_TEST(test_verify_counts_all_lists_some)
{
	struct verify_report rep;
	struct lines l;

	fx_campaign("many", 0, 0, 0);
	fx_codes("many", 60, 2, NULL);
	fx_sql("UPDATE codes SET uses = 1");
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(verify_run(fx.db, &rep, on_line, &l), 0);
	ck_assert_int_eq(rep.violations[VERIFY_G2_CONSERVATION], 60);
	ck_assert_int_eq(rep.total, 60);
	ck_assert_int_eq(l.n[VERIFY_G2_CONSERVATION], 50);
	ck_assert_ptr_nonnull(
	    strstr(l.last[VERIFY_G2_CONSERVATION], "uses 1 but 0 seats"));
	/* Without a callback the counts are the same. */
	ck_assert_int_eq(verify_run(fx.db, &rep, NULL, NULL), 0);
	ck_assert_int_eq(rep.violations[VERIFY_G2_CONSERVATION], 60);
}
END_TEST

/* verify checks every tenant, not only "default". */
START_TEST(test_verify_all_tenants)
{
	struct svc other;
	struct campaign k;
	struct codes_gen g;
	int64_t created;

	ck_assert_int_eq(tenant_create(fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "acme"), ERROR_NONE);
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "acme-promo");
	ck_assert_int_eq(campaign_create(&other, &k), ERROR_NONE);
	memset(&g, 0, sizeof(g));
	g.campaign = "acme-promo";
	g.count = 1;
	g.max_uses = 1;
	ck_assert_int_eq(codes_generate(&other, &g, &created), ERROR_NONE);
	fx_verify_clean();
	fx_sql("UPDATE codes SET state = 'exhausted' WHERE tenant_id = "
	       "(SELECT id FROM tenants WHERE name = 'acme')");
	expect_only(VERIFY_G8_STATE, 1);
}
END_TEST

START_TEST(test_verify_check_names)
{
	int i, j;

	for (i = 0; i < VERIFY__MAX; i++) {
		ck_assert_str_ne(verify_check_name((enum verify_check)i), "?");
		ck_assert_int_eq(
		    verify_check_name((enum verify_check)i)[0], 'G');
		for (j = 0; j < i; j++)
			ck_assert_str_ne(
			    verify_check_name((enum verify_check)i),
			    verify_check_name((enum verify_check)j));
	}
	ck_assert_str_eq(verify_check_name(VERIFY__MAX), "?");
	ck_assert_str_eq(
	    verify_check_name(VERIFY_G2_CONSERVATION), "G2 conservation");
}
END_TEST

Suite *
suite_verify(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("verify");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_verify_clean_empty);
	tcase_add_test(tc, test_verify_clean_after_activity);
	tcase_add_test(tc, test_verify_g1_enforced_by_check);
	tcase_add_test(tc, test_verify_g3_enforced_by_unique);
	tcase_add_test(tc, test_verify_g2_uses_without_redemption);
	tcase_add_test(tc, test_verify_g2_redemption_without_use);
	tcase_add_test(tc, test_verify_g2_reversal_policy);
	tcase_add_test(tc, test_verify_g4_budget);
	tcase_add_test(tc, test_verify_g4_budget_undercount);
	tcase_add_test(tc, test_verify_g4_account_count);
	tcase_add_test(tc, test_verify_g4_account_over_limit);
	tcase_add_test(tc, test_verify_g7_event_missing);
	tcase_add_test(tc, test_verify_g7_event_twice);
	tcase_add_test(tc, test_verify_g7_event_orphan);
	tcase_add_test(tc, test_verify_g8_active_at_max);
	tcase_add_test(tc, test_verify_g8_exhausted_with_room);
	tcase_add_test(tc, test_verify_g8_redeemed_multi_use);
	tcase_add_test(tc, test_verify_g8_revoked_expired_exempt);
	tcase_add_test(tc, test_verify_counts_all_lists_some);
	tcase_add_test(tc, test_verify_all_tenants);
	tcase_add_test(tc, test_verify_check_names);
	suite_add_tcase(s, tc);
	return s;
}
