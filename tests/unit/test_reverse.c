/*
 * Reversals (redeem_reverse): return_seat gives the use, the budget and
 * the per-account count back; keep_seat gives nothing back; both are
 * idempotent and emit one redemption.reversed event.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "fixture.h"

#define CLIENT "198.51.100.7"

static int64_t
reversed_events(void)
{
	return fx_count(
	    "SELECT COUNT(*) FROM events WHERE type = 'redemption.reversed'");
}

static void
redeem_fresh(const char *code, const char *account, struct redeem_result *res)
{
	ck_assert_int_eq(redeem_code(&fx.svc, code, account, CLIENT, res), 0);
	ck_assert_msg(res->error == ERROR_NONE, "%s by %s: %s", code, account,
	    error_name(res->error));
	ck_assert_int_eq(res->already, 0);
}

static enum error_word
redeem_word(const char *code, const char *account)
{
	struct redeem_result res;

	ck_assert_int_eq(redeem_code(&fx.svc, code, account, CLIENT, &res), 0);
	return res.error;
}

static void
reverse_ok(int64_t id, const char *reason, enum reversal_policy p,
    struct redeem_result *res)
{
	ck_assert_int_eq(redeem_reverse(&fx.svc, id, reason, p, res), 0);
	ck_assert_msg(res->error == ERROR_NONE, "reverse %lld: %s",
	    (long long)id, error_name(res->error));
}

START_TEST(test_reverse_return_seat_redeemed)
{
	struct redeem_result r, v, got;
	char codes[1][96];
	time_t before;
	json_t *o;

	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 1, 1, codes);
	redeem_fresh(codes[0], "a@example.com", &r);
	fx_assert_code(codes[0], "redeemed", 1);
	before = time(NULL);
	reverse_ok(r.r.id, "refund", REVERSAL_RETURN_SEAT, &v);
	ck_assert_int_eq(v.already, 0);
	ck_assert_int_eq(v.r.id, r.r.id);
	ck_assert_int_eq(v.r.seq, r.r.seq);
	ck_assert_str_eq(v.r.code, codes[0]);
	ck_assert_str_eq(v.r.account, "a@example.com");
	ck_assert_int_ge(v.r.reversed_at, (int64_t)before - 5);
	ck_assert_int_le(v.r.reversed_at, (int64_t)time(NULL) + 5);
	ck_assert_str_eq(v.r.reversal_reason, "refund");
	ck_assert_int_eq(v.r.reversal_policy, REVERSAL_RETURN_SEAT);
	fx_assert_code(codes[0], "active", 0);
	/* Stored as answered. */
	ck_assert_int_eq(redeem_get(&fx.svc, r.r.id, &got), 0);
	ck_assert_int_eq(got.r.reversed_at, v.r.reversed_at);
	ck_assert_str_eq(got.r.reversal_reason, "refund");
	ck_assert_int_eq(got.r.reversal_policy, REVERSAL_RETURN_SEAT);
	/* The contract's object carries the reversal. */
	o = redemption_json(&v.r);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "reversal_reason")), "refund");
	ck_assert_ptr_nonnull(json_object_get(o, "reversed_at"));
	json_decref(o);
	ck_assert_int_eq(reversed_events(), 1);
	fx_verify_clean();
	/* The seat is free for another account. */
	redeem_fresh(codes[0], "b@example.com", &r);
	fx_assert_code(codes[0], "redeemed", 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_return_seat_exhausted)
{
	struct redeem_result a, b, v;
	char codes[1][96];

	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 1, 2, codes);
	redeem_fresh(codes[0], "a@example.com", &a);
	redeem_fresh(codes[0], "b@example.com", &b);
	fx_assert_code(codes[0], "exhausted", 2);
	reverse_ok(b.r.id, "mistake", REVERSAL_RETURN_SEAT, &v);
	fx_assert_code(codes[0], "active", 1);
	fx_verify_clean();
	reverse_ok(a.r.id, "mistake", REVERSAL_RETURN_SEAT, &v);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
	/* A reversed redemption is still the account's: a replay. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, codes[0], "a@example.com", CLIENT, &v), 0);
	ck_assert_int_eq(v.error, ERROR_NONE);
	ck_assert_int_eq(v.already, 1);
	ck_assert_int_eq(v.r.id, a.r.id);
	ck_assert_int_ne(v.r.reversed_at, 0);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_keep_seat)
{
	struct redeem_result r, v;
	struct campaign k;
	char codes[1][96], multi[1][96];

	fx_campaign("spring", 0, 1, 0);
	fx_codes("spring", 1, 1, codes);
	redeem_fresh(codes[0], "a@example.com", &r);
	reverse_ok(r.r.id, "chargeback", REVERSAL_KEEP_SEAT, &v);
	ck_assert_int_eq(v.r.reversal_policy, REVERSAL_KEEP_SEAT);
	ck_assert_str_eq(v.r.reversal_reason, "chargeback");
	ck_assert_int_ne(v.r.reversed_at, 0);
	fx_assert_code(codes[0], "redeemed", 1);
	ck_assert_int_eq(
	    redeem_word(codes[0], "b@example.com"), ERROR_EXHAUSTED);
	/* Nor is the budget given back. */
	ck_assert_int_eq(campaign_get(&fx.svc, "spring", &k), ERROR_NONE);
	ck_assert_int_eq(k.redeemed, 1);
	fx_verify_clean();
	/* A multi-use code keeps its count and state too. */
	fx_campaign("summer", 0, 0, 0);
	fx_codes("summer", 1, 3, multi);
	redeem_fresh(multi[0], "a@example.com", &r);
	reverse_ok(r.r.id, "chargeback", REVERSAL_KEEP_SEAT, &v);
	fx_assert_code(multi[0], "active", 1);
	ck_assert_int_eq(reversed_events(), 2);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_idempotent)
{
	struct redeem_result a, b, first, again;
	char codes[1][96];
	int i;

	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 1, 2, codes);
	redeem_fresh(codes[0], "a@example.com", &a);
	redeem_fresh(codes[0], "b@example.com", &b);
	reverse_ok(a.r.id, "refund", REVERSAL_RETURN_SEAT, &first);
	ck_assert_int_eq(first.already, 0);
	fx_assert_code(codes[0], "active", 1);
	/* Again, the same or another policy and reason: the first reversal,
	 * unchanged; the seat is not returned twice. */
	for (i = 0; i < 3; i++) {
		reverse_ok(a.r.id, i == 1 ? "another reason" : "refund",
		    i == 2 ? REVERSAL_KEEP_SEAT : REVERSAL_RETURN_SEAT, &again);
		ck_assert_int_eq(again.already, 1);
		ck_assert_int_eq(again.r.id, a.r.id);
		ck_assert_int_eq(again.r.reversed_at, first.r.reversed_at);
		ck_assert_str_eq(again.r.reversal_reason, "refund");
		ck_assert_int_eq(again.r.reversal_policy, REVERSAL_RETURN_SEAT);
		fx_assert_code(codes[0], "active", 1);
	}
	ck_assert_int_eq(reversed_events(), 1);
	fx_verify_clean();
	/* A keep_seat reversal stays one too. */
	reverse_ok(b.r.id, "chargeback", REVERSAL_KEEP_SEAT, &first);
	reverse_ok(b.r.id, "chargeback", REVERSAL_RETURN_SEAT, &again);
	ck_assert_int_eq(again.already, 1);
	ck_assert_int_eq(again.r.reversal_policy, REVERSAL_KEEP_SEAT);
	fx_assert_code(codes[0], "active", 1);
	ck_assert_int_eq(reversed_events(), 2);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_not_found)
{
	static const int64_t ids[] = {0, -1, 999999, INT64_MAX, INT64_MIN};
	struct redeem_result r, v;
	struct svc other;
	char codes[1][96];
	size_t i;

	for (i = 0; i < NELEM(ids); i++) {
		ck_assert_int_eq(redeem_reverse(&fx.svc, ids[i], "refund",
				     REVERSAL_RETURN_SEAT, &v),
		    0);
		ck_assert_int_eq(v.error, ERROR_NOT_FOUND);
	}
	/* Another tenant's redemption is not found either. */
	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 1, 1, codes);
	redeem_fresh(codes[0], "a@example.com", &r);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(
	    redeem_reverse(&other, r.r.id, "refund", REVERSAL_RETURN_SEAT, &v),
	    0);
	ck_assert_int_eq(v.error, ERROR_NOT_FOUND);
	fx_assert_code(codes[0], "redeemed", 1);
	ck_assert_int_eq(reversed_events(), 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_bad_request)
{
	struct redeem_result r, v, got;
	char codes[1][96], long_reason[600], max_reason[600];
	size_t i;
	static const struct {
		int reason; /* index into the reasons below */
		enum reversal_policy policy;
	} bad[] = {
	    {0, REVERSAL_NONE}, {0, REVERSAL__MAX},
	    {0, (enum reversal_policy) - 1}, {0, (enum reversal_policy)42},
	    {1, REVERSAL_RETURN_SEAT}, /* NULL */
	    {2, REVERSAL_RETURN_SEAT}, /* empty */
	    {3, REVERSAL_RETURN_SEAT}, /* 501 bytes */
	    {4, REVERSAL_KEEP_SEAT},   /* bad UTF-8 */
	    {5, REVERSAL_KEEP_SEAT},   /* control character */
	    {6, REVERSAL_RETURN_SEAT}, /* an embedded NUL: empty */
	};
	const char *reasons[] = {"refund", NULL, "", long_reason,
	    "re\xff"
	    "fund",
	    "re\x01"
	    "fund",
	    "\0refund"};

	memset(long_reason, 'r', 501);
	long_reason[501] = '\0';
	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 1, 1, codes);
	redeem_fresh(codes[0], "a@example.com", &r);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_eq(redeem_reverse(&fx.svc, r.r.id,
				     reasons[bad[i].reason], bad[i].policy, &v),
		    0);
		ck_assert_msg(v.error == ERROR_BAD_REQUEST, "case %zu: %s", i,
		    error_name(v.error));
	}
	ck_assert_int_eq(redeem_get(&fx.svc, r.r.id, &got), 0);
	ck_assert_int_eq(got.r.reversed_at, 0);
	fx_assert_code(codes[0], "redeemed", 1);
	ck_assert_int_eq(reversed_events(), 0);
	/* The boundary: 500 bytes of UTF-8 is a reason. */
	memset(max_reason, 'r', 498);
	memcpy(max_reason + 498, "\xc3\xa9", 3);
	ck_assert_int_eq(strlen(max_reason), 500);
	reverse_ok(r.r.id, max_reason, REVERSAL_RETURN_SEAT, &v);
	ck_assert_str_eq(v.r.reversal_reason, max_reason);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_policy_names)
{
	enum reversal_policy p;
	size_t i;
	static const char *const bad[] = {
	    "", "none", "RETURN_SEAT", "return_seat ", "keep", "return_seatx"};

	ck_assert_int_eq(reversal_policy_parse("return_seat", &p), 0);
	ck_assert_int_eq(p, REVERSAL_RETURN_SEAT);
	ck_assert_int_eq(reversal_policy_parse("keep_seat", &p), 0);
	ck_assert_int_eq(p, REVERSAL_KEEP_SEAT);
	for (i = 0; i < NELEM(bad); i++)
		ck_assert_int_eq(reversal_policy_parse(bad[i], &p), -1);
	ck_assert_str_eq(
	    reversal_policy_name(REVERSAL_RETURN_SEAT), "return_seat");
	ck_assert_str_eq(reversal_policy_name(REVERSAL_KEEP_SEAT), "keep_seat");
	ck_assert_str_eq(reversal_policy_name(REVERSAL__MAX), "");
}
END_TEST

/* A returned seat never re-opens a revoked or expired code. */
START_TEST(test_reverse_revoked_stays_revoked)
{
	struct redeem_result a, b, v;
	struct code_info ci;
	char codes[2][96];

	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 2, 2, codes);
	redeem_fresh(codes[0], "a@example.com", &a);
	redeem_fresh(codes[0], "b@example.com", &b);
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	reverse_ok(a.r.id, "refund", REVERSAL_RETURN_SEAT, &v);
	fx_assert_code(codes[0], "revoked", 1);
	reverse_ok(b.r.id, "refund", REVERSAL_RETURN_SEAT, &v);
	fx_assert_code(codes[0], "revoked", 0);
	ck_assert_int_eq(redeem_word(codes[0], "c@example.com"), ERROR_REVOKED);
	fx_verify_clean();
	/* Expired by the sweep: stays expired. */
	redeem_fresh(codes[1], "a@example.com", &a);
	redeem_fresh(codes[1], "b@example.com", &b);
	fx_sql("UPDATE codes SET state = 'expired', expires_at = 1 "
	       "WHERE state = 'exhausted'");
	reverse_ok(a.r.id, "refund", REVERSAL_RETURN_SEAT, &v);
	fx_assert_code(codes[1], "expired", 1);
	ck_assert_int_eq(redeem_word(codes[1], "c@example.com"), ERROR_EXPIRED);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_returns_budget)
{
	struct redeem_result r, v;
	struct campaign k;
	char codes[1][96];

	fx_campaign("one", 0, 1, 0);
	fx_codes("one", 1, 5, codes);
	redeem_fresh(codes[0], "a@example.com", &r);
	ck_assert_int_eq(
	    redeem_word(codes[0], "b@example.com"), ERROR_EXHAUSTED);
	reverse_ok(r.r.id, "refund", REVERSAL_RETURN_SEAT, &v);
	ck_assert_int_eq(campaign_get(&fx.svc, "one", &k), ERROR_NONE);
	ck_assert_int_eq(k.redeemed, 0);
	fx_verify_clean();
	redeem_fresh(codes[0], "b@example.com", &r);
	ck_assert_int_eq(
	    redeem_word(codes[0], "c@example.com"), ERROR_EXHAUSTED);
	fx_assert_code(codes[0], "active", 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_reverse_returns_account_count)
{
	struct redeem_result r, v;
	char codes[2][96];

	fx_campaign("limited", 0, 0, 1);
	fx_codes("limited", 2, 5, codes);
	redeem_fresh(codes[0], "a@example.com", &r);
	ck_assert_int_eq(
	    redeem_word(codes[1], "a@example.com"), ERROR_INELIGIBLE);
	reverse_ok(r.r.id, "refund", REVERSAL_RETURN_SEAT, &v);
	fx_verify_clean();
	redeem_fresh(codes[1], "A@example.com", &r);
	ck_assert_int_eq(redeem_word(codes[1], "b@example.com"), ERROR_NONE);
	fx_verify_clean();
	/* keep_seat does not give the count back. */
	reverse_ok(r.r.id, "chargeback", REVERSAL_KEEP_SEAT, &v);
	fx_campaign("limited2", 0, 0, 1);
	fx_codes("limited2", 2, 5, codes);
	redeem_fresh(codes[0], "a@example.com", &r);
	reverse_ok(r.r.id, "chargeback", REVERSAL_KEEP_SEAT, &v);
	ck_assert_int_eq(
	    redeem_word(codes[1], "a@example.com"), ERROR_INELIGIBLE);
	fx_verify_clean();
}
END_TEST

Suite *
suite_reverse(void)
{
	Suite *s = suite_create("reverse");
	TCase *tc = tcase_create("reverse");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_reverse_return_seat_redeemed);
	tcase_add_test(tc, test_reverse_return_seat_exhausted);
	tcase_add_test(tc, test_reverse_keep_seat);
	tcase_add_test(tc, test_reverse_idempotent);
	tcase_add_test(tc, test_reverse_not_found);
	tcase_add_test(tc, test_reverse_bad_request);
	tcase_add_test(tc, test_reverse_policy_names);
	tcase_add_test(tc, test_reverse_revoked_stays_revoked);
	tcase_add_test(tc, test_reverse_returns_budget);
	tcase_add_test(tc, test_reverse_returns_account_count);
	suite_add_tcase(s, tc);
	return s;
}
