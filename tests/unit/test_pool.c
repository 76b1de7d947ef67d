/*
 * Pool claims (redeem_pool_claim): one single-use code per claimer, the
 * same one on a repeat, exhausted when empty or out of budget, and a seat
 * returned by a reversal goes back into the pool.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "fixture.h"

#define CLIENT "198.51.100.7"

static int64_t
redeemed_events(void)
{
	return fx_count(
	    "SELECT COUNT(*) FROM events WHERE type = 'code.redeemed'");
}

static void
claim_fresh(const char *pool, const char *account, struct redeem_result *res)
{
	ck_assert_int_eq(
	    redeem_pool_claim(&fx.svc, pool, account, CLIENT, res), 0);
	ck_assert_msg(res->error == ERROR_NONE, "%s for %s: %s", pool, account,
	    error_name(res->error));
	ck_assert_int_eq(res->already, 0);
	ck_assert_int_gt(res->r.id, 0);
	ck_assert_str_eq(res->r.campaign, pool);
}

static enum error_word
claim_word(const char *pool, const char *account)
{
	struct redeem_result res;

	ck_assert_int_eq(
	    redeem_pool_claim(&fx.svc, pool, account, CLIENT, &res), 0);
	if (res.error != ERROR_NONE)
		ck_assert_int_eq(res.already, 0);
	return res.error;
}

/* The index of code in codes[n], or -1. */
static int
find_code(const char *code, char (*codes)[96], int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(codes[i], code) == 0)
			return i;
	return -1;
}

START_TEST(test_pool_claim)
{
	struct redeem_result res, again;
	char codes[3][96];
	int i;

	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 3, 1, codes);
	claim_fresh("pool", "a@example.com", &res);
	i = find_code(res.r.code, codes, 3);
	ck_assert_msg(i >= 0, "handed out %s, not a pool code", res.r.code);
	ck_assert_str_eq(res.r.account, "a@example.com");
	ck_assert_int_gt(res.r.seq, 0);
	ck_assert_int_gt(res.r.redeemed_at, 0);
	ck_assert_int_eq(res.r.reversed_at, 0);
	/* A pool claim is a redemption of the code handed out. */
	fx_assert_code(res.r.code, "redeemed", 1);
	ck_assert_int_eq(redeemed_events(), 1);
	/* The same account again: the same code, the same redemption. */
	ck_assert_int_eq(redeem_pool_claim(&fx.svc, "pool", " A@Example.COM ",
			     "203.0.113.1", &again),
	    0);
	ck_assert_int_eq(again.error, ERROR_NONE);
	ck_assert_int_eq(again.already, 1);
	ck_assert_str_eq(again.r.code, res.r.code);
	ck_assert_int_eq(again.r.id, res.r.id);
	ck_assert_int_eq(again.r.seq, res.r.seq);
	ck_assert_str_eq(again.r.account, "a@example.com");
	/* And redeem_code of that code by that account is a replay too. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, res.r.code, "a@example.com", CLIENT, &again),
	    0);
	ck_assert_int_eq(again.error, ERROR_NONE);
	ck_assert_int_eq(again.already, 1);
	ck_assert_int_eq(again.r.id, res.r.id);
	ck_assert_int_eq(redeemed_events(), 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_pool_distinct_codes_then_exhausted)
{
	struct redeem_result res;
	char codes[5][96], account[64];
	int seen[5] = {0}, i, k;

	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 5, 1, codes);
	for (i = 0; i < 5; i++) {
		snprintf(account, sizeof(account), "u%d@example.com", i);
		claim_fresh("pool", account, &res);
		k = find_code(res.r.code, codes, 5);
		ck_assert_msg(k >= 0, "handed out %s", res.r.code);
		ck_assert_msg(!seen[k], "%s handed out twice", res.r.code);
		seen[k] = 1;
		fx_assert_code(res.r.code, "redeemed", 1);
	}
	ck_assert_int_eq(
	    claim_word("pool", "late@example.com"), ERROR_EXHAUSTED);
	ck_assert_int_eq(
	    claim_word("pool", "later@example.com"), ERROR_EXHAUSTED);
	/* Those who have one still get theirs. */
	ck_assert_int_eq(claim_word("pool", "u3@example.com"), ERROR_NONE);
	ck_assert_int_eq(redeemed_events(), 5);
	fx_verify_clean();
}
END_TEST

START_TEST(test_pool_not_found)
{
	struct redeem_result res;
	char codes[1][96], long_name[100];
	size_t i;
	const char *bad[] = {
	    "nosuch",
	    "shared", /* a shared campaign is not a pool */
	    "",
	    long_name,
	    "po ol",
	    "\xff",
	};

	memset(long_name, 'p', 99);
	long_name[99] = '\0';
	fx_campaign("shared", 0, 0, 0);
	fx_codes("shared", 1, 5, codes);
	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(
		    claim_word(bad[i], "a@example.com") == ERROR_NOT_FOUND,
		    "campaign %zu", i);
	ck_assert_int_eq(
	    redeem_pool_claim(&fx.svc, NULL, "a@example.com", CLIENT, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NOT_FOUND);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_pool_bad_request)
{
	struct redeem_result res;
	char codes[2][96], long_account[300];
	size_t i;
	const char *bad[] = {
	    NULL,
	    "",
	    "  ",
	    long_account,
	    "\xff@example.com",
	    "a\x01@example.com",
	};

	memset(long_account, 'a', 255);
	long_account[255] = '\0';
	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 2, 1, codes);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_eq(
		    redeem_pool_claim(&fx.svc, "pool", bad[i], CLIENT, &res),
		    0);
		ck_assert_msg(res.error == ERROR_BAD_REQUEST, "account %zu: %s",
		    i, error_name(res.error));
	}
	fx_assert_code(codes[0], "active", 0);
	fx_assert_code(codes[1], "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_pool_closed_revoked)
{
	struct redeem_result res;
	struct campaign k;
	char codes[3][96];

	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 3, 1, codes);
	claim_fresh("pool", "a@example.com", &res);
	ck_assert_int_eq(campaign_close(&fx.svc, "pool", &k), ERROR_NONE);
	ck_assert_int_eq(claim_word("pool", "b@example.com"), ERROR_REVOKED);
	/* G3: the first claimer's repeat still answers its code. */
	ck_assert_int_eq(claim_word("pool", "a@example.com"), ERROR_NONE);
	ck_assert_int_eq(redeemed_events(), 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_pool_window)
{
	struct campaign k;
	char codes[1][96];
	time_t now = time(NULL);

	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "over");
	k.kind = CAMPAIGN_POOL;
	k.ends_at = (int64_t)now - 10;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	fx_codes("over", 1, 1, codes);
	ck_assert_int_eq(claim_word("over", "a@example.com"), ERROR_EXPIRED);
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "later");
	k.kind = CAMPAIGN_POOL;
	k.starts_at = (int64_t)now + 3600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	fx_codes("later", 1, 1, codes);
	ck_assert_int_eq(
	    claim_word("later", "a@example.com"), ERROR_INELIGIBLE);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM redemptions"), 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_pool_budget)
{
	struct redeem_result res;
	struct campaign k;
	char codes[4][96];
	int i, used = 0;

	fx_campaign("pool", 1, 2, 0);
	fx_codes("pool", 4, 1, codes);
	claim_fresh("pool", "a@example.com", &res);
	claim_fresh("pool", "b@example.com", &res);
	ck_assert_int_eq(claim_word("pool", "c@example.com"), ERROR_EXHAUSTED);
	ck_assert_int_eq(campaign_get(&fx.svc, "pool", &k), ERROR_NONE);
	ck_assert_int_eq(k.redeemed, 2);
	/* Two codes handed out, two left untouched. */
	for (i = 0; i < 4; i++) {
		struct code_info ci;

		ck_assert_int_eq(code_get(&fx.svc, codes[i], &ci), ERROR_NONE);
		used += (int)ci.uses;
		if (ci.uses == 0)
			ck_assert_str_eq(ci.state, "active");
	}
	ck_assert_int_eq(used, 2);
	fx_verify_clean();
}
END_TEST

/* A revoked or expired code is never handed out. */
START_TEST(test_pool_skips_unusable_codes)
{
	struct redeem_result res;
	struct code_info ci;
	char codes[3][96], sql[128];

	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 3, 1, codes);
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_int_eq(code_get(&fx.svc, codes[1], &ci), ERROR_NONE);
	snprintf(sql, sizeof(sql),
	    "UPDATE codes SET expires_at = 1 WHERE "
	    "id = %lld",
	    (long long)ci.id);
	fx_sql(sql);
	claim_fresh("pool", "a@example.com", &res);
	ck_assert_str_eq(res.r.code, codes[2]);
	ck_assert_int_eq(claim_word("pool", "b@example.com"), ERROR_EXHAUSTED);
	fx_assert_code(codes[0], "revoked", 0);
	fx_assert_code(codes[1], "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_pool_returned_seat)
{
	struct redeem_result a, b, rev;
	char codes[1][96];

	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 1, 1, codes);
	claim_fresh("pool", "a@example.com", &a);
	ck_assert_str_eq(a.r.code, codes[0]);
	ck_assert_int_eq(claim_word("pool", "b@example.com"), ERROR_EXHAUSTED);
	ck_assert_int_eq(redeem_reverse(&fx.svc, a.r.id, "refund",
			     REVERSAL_RETURN_SEAT, &rev),
	    0);
	ck_assert_int_eq(rev.error, ERROR_NONE);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
	/* The code is back in the pool for another account. */
	claim_fresh("pool", "b@example.com", &b);
	ck_assert_str_eq(b.r.code, codes[0]);
	ck_assert_int_ne(b.r.id, a.r.id);
	ck_assert_int_gt(b.r.seq, a.r.seq);
	fx_assert_code(codes[0], "redeemed", 1);
	ck_assert_int_eq(claim_word("pool", "c@example.com"), ERROR_EXHAUSTED);
	ck_assert_int_eq(redeemed_events(), 2);
	fx_verify_clean();
}
END_TEST

/* keep_seat does not free the code (a chargeback). */
START_TEST(test_pool_kept_seat)
{
	struct redeem_result a, rev;
	char codes[1][96];

	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 1, 1, codes);
	claim_fresh("pool", "a@example.com", &a);
	ck_assert_int_eq(redeem_reverse(&fx.svc, a.r.id, "chargeback",
			     REVERSAL_KEEP_SEAT, &rev),
	    0);
	ck_assert_int_eq(rev.error, ERROR_NONE);
	fx_assert_code(codes[0], "redeemed", 1);
	ck_assert_int_eq(claim_word("pool", "b@example.com"), ERROR_EXHAUSTED);
	fx_verify_clean();
}
END_TEST

/* The pool claim passes through the abuse gate. */
START_TEST(test_pool_rate_limited)
{
	struct redeem_result res;
	struct campaign k;
	char codes[2][96];
	int i;

	fx.svc.cfg.abuse_limit_client = 2;
	fx.svc.cfg.abuse_limit_account = 2;
	fx_campaign("pool", 1, 0, 0);
	fx_codes("pool", 2, 1, codes);
	fx_campaign("closed", 1, 0, 0);
	ck_assert_int_eq(campaign_close(&fx.svc, "closed", &k), ERROR_NONE);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(
		    claim_word("closed", "a@example.com"), ERROR_REVOKED);
	ck_assert_int_eq(
	    redeem_pool_claim(&fx.svc, "pool", "b@example.com", CLIENT, &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_RATE_LIMITED);
	ck_assert_int_gt(res.retry_after, 0);
	ck_assert_int_eq(redeem_pool_claim(&fx.svc, "pool", "b@example.com",
			     "203.0.113.1", &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	fx_assert_code(codes[0], "redeemed", 1);
	fx_verify_clean();
}
END_TEST

Suite *
suite_pool(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("pool");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pool_claim);
	tcase_add_test(tc, test_pool_distinct_codes_then_exhausted);
	tcase_add_test(tc, test_pool_not_found);
	tcase_add_test(tc, test_pool_bad_request);
	tcase_add_test(tc, test_pool_closed_revoked);
	tcase_add_test(tc, test_pool_window);
	tcase_add_test(tc, test_pool_budget);
	tcase_add_test(tc, test_pool_skips_unusable_codes);
	tcase_add_test(tc, test_pool_returned_seat);
	tcase_add_test(tc, test_pool_kept_seat);
	tcase_add_test(tc, test_pool_rate_limited);
	suite_add_tcase(s, tc);
	return s;
}
