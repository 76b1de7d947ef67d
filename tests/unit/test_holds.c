/*
 * Holds (app/core/holds.c): a seat taken for a TTL with the claim's own
 * UPDATE, confirmed into a redemption, released, or lost at expires_at by
 * the database clock; the sweeper's batches; verify with holds; and races
 * of real processes mixing holds, confirms, releases, claims and sweeps.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/lib/str.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/holds.h"
#include "../../app/core/redeem.h"
#include "../../app/core/verify.h"
#include "fixture.h"
#include "forkrace.h"

#define TTL 300

static void
hold_ok(const char *code, const char *account, const char *xid,
    struct hold_result *res)
{
	ck_assert_int_eq(
	    hold_create(&fx.svc, code, account, xid, TTL, NULL, res), 0);
	ck_assert_msg(res->error == ERROR_NONE, "hold %s on %s: %s", xid, code,
	    error_name(res->error));
}

static enum error_word
hold_word(const char *code, const char *account, const char *xid)
{
	struct hold_result res;

	ck_assert_int_eq(
	    hold_create(&fx.svc, code, account, xid, TTL, NULL, &res), 0);
	return res.error;
}

static void
confirm_ok(const char *xid, struct redeem_result *res)
{
	ck_assert_int_eq(hold_confirm(&fx.svc, xid, res, NULL), 0);
	ck_assert_msg(res->error == ERROR_NONE, "confirm %s: %s", xid,
	    error_name(res->error));
}

static enum error_word
confirm_word(const char *xid)
{
	struct redeem_result res;

	ck_assert_int_eq(hold_confirm(&fx.svc, xid, &res, NULL), 0);
	return res.error;
}

static enum hold_state
release_state(const char *xid)
{
	struct hold_result res;

	ck_assert_int_eq(hold_release(&fx.svc, xid, &res), 0);
	ck_assert_msg(res.error == ERROR_NONE, "release %s: %s", xid,
	    error_name(res.error));
	return res.h.state;
}

/* The hold is lost: its expires_at a minute in the past. */
static int64_t
events_of(const char *type)
{
	char sql[128];

	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM events WHERE type = '%s'", type);
	return fx_count(sql);
}

static int64_t
budget_used(const char *campaign)
{
	struct campaign k;

	ck_assert_int_eq(campaign_get(&fx.svc, campaign, &k), ERROR_NONE);
	return k.redeemed;
}

START_TEST(test_holds_create_takes_seat)
{
	struct hold_result a, b;
	char codes[1][96];
	time_t now = time(NULL);

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 2, codes);
	hold_ok(codes[0], "a@x", "h-1", &a);
	ck_assert_int_eq(a.created, 1);
	ck_assert_int_eq(a.h.state, HOLD_HELD);
	ck_assert_int_eq(a.h.fencing_token, 1);
	ck_assert_str_eq(a.h.external_id, "h-1");
	ck_assert_str_eq(a.h.code, codes[0]);
	ck_assert_str_eq(a.h.account, "a@x");
	ck_assert_str_eq(a.h.campaign, "k");
	ck_assert_int_ge(a.h.expires_at, (int64_t)now + TTL - 5);
	ck_assert_int_le(a.h.expires_at, (int64_t)now + TTL + 5);
	ck_assert_int_eq(a.h.ended_at, 0);
	fx_assert_code(codes[0], "active", 1);
	hold_ok(codes[0], "b@x", "h-2", &b);
	ck_assert_int_eq(b.h.fencing_token, 2);
	fx_assert_code(codes[0], "exhausted", 2);
	ck_assert_int_eq(hold_word(codes[0], "c@x", "h-3"), ERROR_EXHAUSTED);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds"), 2);
	fx_verify_clean();
}
END_TEST

/* A single-use code with its seat held reads exhausted; confirmed, it is
 * redeemed. */
START_TEST(test_holds_single_use_exhausted_then_redeemed)
{
	struct hold_result h;
	struct redeem_result r;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 1, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	fx_assert_code(codes[0], "exhausted", 1);
	fx_verify_clean();
	confirm_ok("h-1", &r);
	fx_assert_code(codes[0], "redeemed", 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_create_replay_same_hold)
{
	struct hold_result a, b;
	char codes[1][96], lower[96];
	size_t i;

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, codes);
	hold_ok(codes[0], "a@x", "h-1", &a);
	/* Any spelling of the code and the account is the same request. */
	for (i = 0; codes[0][i] != '\0'; i++)
		lower[i] = (char)(codes[0][i] >= 'A' && codes[0][i] <= 'Z'
				      ? codes[0][i] + 32
				      : codes[0][i]);
	lower[i] = '\0';
	hold_ok(lower, " A@X ", "h-1", &b);
	ck_assert_int_eq(b.created, 0);
	ck_assert_int_eq(b.h.id, a.h.id);
	ck_assert_int_eq(b.h.fencing_token, a.h.fencing_token);
	ck_assert_int_eq(b.h.expires_at, a.h.expires_at);
	fx_assert_code(codes[0], "active", 1);
	/* Whatever its state: a released hold is answered as released. */
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	hold_ok(codes[0], "a@x", "h-1", &b);
	ck_assert_int_eq(b.created, 0);
	ck_assert_int_eq(b.h.state, HOLD_RELEASED);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_create_conflict)
{
	struct hold_result a;
	char codes[2][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 2, 3, codes);
	hold_ok(codes[0], "a@x", "h-1", &a);
	ck_assert_int_eq(hold_word(codes[1], "a@x", "h-1"), ERROR_CONFLICT);
	ck_assert_int_eq(hold_word(codes[0], "b@x", "h-1"), ERROR_CONFLICT);
	ck_assert_int_eq(
	    hold_word("NO-SUCH-CODE", "a@x", "h-1"), ERROR_CONFLICT);
	fx_assert_code(codes[0], "active", 1);
	fx_assert_code(codes[1], "active", 0);
	/* Another tenant's external_ids are its own. */
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	{
		struct svc o;
		struct hold_result res;

		ck_assert_int_eq(svc_open(&o, fx.db, "other"), ERROR_NONE);
		ck_assert_int_eq(
		    hold_create(&o, codes[0], "a@x", "h-1", TTL, NULL, &res),
		    0);
		ck_assert_int_eq(res.error, ERROR_INVALID);
	}
	fx_verify_clean();
}
END_TEST

/* An account that redeemed the code has its seat: no hold on top. */
START_TEST(test_holds_create_after_redemption_conflict)
{
	struct redeem_result r;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, codes);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "a@x", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	ck_assert_int_eq(hold_word(codes[0], "A@x", "h-1"), ERROR_CONFLICT);
	fx_assert_code(codes[0], "active", 1);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds"), 0);
	fx_verify_clean();
}
END_TEST

/* One live hold per account and code: a second one under another
 * external_id would lock a seat out for nothing (G3 gives the account
 * one redemption there). Another code, or after the first ended or
 * lapsed, is fine. */
START_TEST(test_holds_create_second_of_account_conflict)
{
	struct hold_result h;
	char codes[2][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 2, 5, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	ck_assert_int_eq(hold_word(codes[0], "A@x", "h-2"), ERROR_CONFLICT);
	fx_assert_code(codes[0], "active", 1);
	hold_ok(codes[1], "a@x", "h-3", &h);
	hold_ok(codes[0], "b@x", "h-4", &h);
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	hold_ok(codes[0], "a@x", "h-5", &h);
	fx_lapse("holds", "h-5");
	hold_ok(codes[0], "a@x", "h-6", &h);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds"), 5);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds WHERE "
				  "external_id = 'h-2'"),
	    0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_create_refusals)
{
	struct campaign k;
	struct code_info ci;
	char a[1][96], b[1][96], c[1][96], d[1][96], e[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, a);
	fx_codes("k", 1, 3, b);
	fx_codes("k", 1, 3, c);
	fx_campaign("closed", 0, 0, 0);
	fx_codes("closed", 1, 3, d);
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "later");
	k.starts_at = (int64_t)time(NULL) + 3600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	fx_codes("later", 1, 3, e);
	ck_assert_int_eq(code_revoke(&fx.svc, b[0], &ci), ERROR_NONE);
	fx_sql("UPDATE codes SET expires_at = UNIX_TIMESTAMP() - 10 WHERE "
	       "id = (SELECT MAX(id) FROM codes WHERE campaign_id = "
	       "(SELECT id FROM campaigns WHERE name = 'k'))");
	ck_assert_int_eq(campaign_close(&fx.svc, "closed", &k), ERROR_NONE);
	ck_assert_int_eq(hold_word("23456789", "a@x", "h-1"), ERROR_INVALID);
	ck_assert_int_eq(hold_word(b[0], "a@x", "h-2"), ERROR_REVOKED);
	ck_assert_int_eq(hold_word(c[0], "a@x", "h-3"), ERROR_EXPIRED);
	ck_assert_int_eq(hold_word(d[0], "a@x", "h-4"), ERROR_REVOKED);
	ck_assert_int_eq(hold_word(e[0], "a@x", "h-5"), ERROR_INELIGIBLE);
	ck_assert_int_eq(hold_word(a[0], "a@x", "h-6"), ERROR_NONE);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds"), 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_create_bad_request)
{
	static const struct {
		const char *code, *account, *xid;
		int64_t ttl;
	} bad[] = {
	    {NULL, "a@x", "h", TTL},
	    {"X", NULL, "h", TTL},
	    {"X", "a@x", NULL, TTL},
	    {"X", "a@x", "", TTL},
	    {"X", "a@x", "has space", TTL},
	    {"X", "a@x", "slash/no", TTL},
	    {"X", "a@x", "pct%41", TTL},
	    {"X", "a@x", "h\xc3\xa9", TTL},
	    {"X", "a@x", "h", 0},
	    {"X", "a@x", "h", -1},
	    {"X", "a@x", "h", HOLD_TTL_MAX + 1},
	    {"X", "", "h", TTL},
	    {"X", "bad\x01@x", "h", TTL},
	    {"X", "\xff@x", "h", TTL},
	    {"", "a@x", "h", TTL},
	};
	char longid[HOLD_ID_MAX + 2];
	struct hold_result res;
	char codes[1][96];
	size_t i;

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, codes);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_eq(
		    hold_create(&fx.svc,
			bad[i].code && *bad[i].code ? codes[0] : bad[i].code,
			bad[i].account, bad[i].xid, bad[i].ttl, NULL, &res),
		    0);
		ck_assert_msg(res.error == ERROR_BAD_REQUEST, "case %zu: %s", i,
		    error_name(res.error));
	}
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	ck_assert_int_eq(hold_word(codes[0], "a@x", longid), ERROR_BAD_REQUEST);
	longid[HOLD_ID_MAX] = '\0';
	ck_assert_int_eq(hold_word(codes[0], "a@x", longid), ERROR_NONE);
	ck_assert_int_eq(hold_word(codes[0], "b@x", "A-z.0_9~:@-"), ERROR_NONE);
	fx_assert_code(codes[0], "active", 2);
}
END_TEST

/* The hold passes the same abuse gate as a redemption. */
START_TEST(test_holds_create_rate_limited)
{
	struct hold_result res;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, codes);
	fx.svc.cfg.abuse_limit_client = 2;
	ck_assert_int_eq(hold_create(&fx.svc, "23456789", "a@x", "h-1", TTL,
			     "198.51.100.9", &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_INVALID);
	ck_assert_int_eq(hold_create(&fx.svc, "23456789", "b@x", "h-2", TTL,
			     "198.51.100.9", &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_INVALID);
	ck_assert_int_eq(hold_create(&fx.svc, codes[0], "c@x", "h-3", TTL,
			     "198.51.100.9", &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_RATE_LIMITED);
	ck_assert_int_gt(res.retry_after, 0);
	fx_assert_code(codes[0], "active", 0);
}
END_TEST

/* The budget is taken at hold time and given back by release. */
START_TEST(test_holds_budget_reserved)
{
	struct hold_result h;
	struct redeem_result r;
	char codes[3][96];

	fx_campaign("k", 0, 2, 0);
	fx_codes("k", 3, 5, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	hold_ok(codes[1], "b@x", "h-2", &h);
	ck_assert_int_eq(budget_used("k"), 2);
	fx_verify_clean();
	ck_assert_int_eq(redeem_code(&fx.svc, codes[2], "c@x", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_EXHAUSTED);
	ck_assert_int_eq(hold_word(codes[2], "c@x", "h-3"), ERROR_EXHAUSTED);
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	ck_assert_int_eq(budget_used("k"), 1);
	fx_verify_clean();
	ck_assert_int_eq(redeem_code(&fx.svc, codes[2], "c@x", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	/* Confirm takes nothing more: the hold had it already. */
	confirm_ok("h-2", &r);
	ck_assert_int_eq(budget_used("k"), 2);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_account_limit_reserved)
{
	struct hold_result h;
	struct redeem_result r;
	char codes[3][96];

	fx_campaign("k", 0, 0, 1);
	fx_codes("k", 3, 5, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	fx_verify_clean();
	ck_assert_int_eq(hold_word(codes[1], "a@x", "h-2"), ERROR_INELIGIBLE);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[1], "a@x", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_INELIGIBLE);
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	fx_verify_clean();
	hold_ok(codes[1], "a@x", "h-3", &h);
	confirm_ok("h-3", &r);
	ck_assert_int_eq(hold_word(codes[2], "a@x", "h-4"), ERROR_INELIGIBLE);
	fx_assert_code(codes[0], "active", 0);
	fx_assert_code(codes[1], "active", 1);
	fx_verify_clean();
}
END_TEST

/* In a pool, a hold counts one per account like a pool claim. */
START_TEST(test_holds_pool_one_per_account)
{
	struct redeem_result r;
	struct hold_result h;
	char codes[3][96];

	fx_campaign("p", 1, 0, 0);
	fx_codes("p", 3, 1, codes);
	ck_assert_int_eq(redeem_pool_claim(&fx.svc, "p", "a@x", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	ck_assert_str_eq(r.r.code, codes[0]);
	ck_assert_int_eq(hold_word(codes[1], "a@x", "h-1"), ERROR_INELIGIBLE);
	hold_ok(codes[1], "b@x", "h-2", &h);
	fx_verify_clean();
	/* The pool's own claim is refused too (in its word, exhausted). */
	ck_assert_int_eq(redeem_pool_claim(&fx.svc, "p", "b@x", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_EXHAUSTED);
	ck_assert_int_eq(release_state("h-2"), HOLD_RELEASED);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_confirm_fresh_and_replay)
{
	struct hold_result h;
	struct redeem_result r, again;
	struct hold got;
	char codes[1][96];
	json_t *o;

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	ck_assert_int_eq(hold_confirm(&fx.svc, "h-1", &r, &got), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	ck_assert_int_eq(r.already, 0);
	ck_assert_int_gt(r.r.id, 0);
	ck_assert_int_gt(r.r.seq, 0);
	ck_assert_str_eq(r.r.code, codes[0]);
	ck_assert_str_eq(r.r.account, "a@x");
	ck_assert_str_eq(r.r.campaign, "k");
	ck_assert_int_eq(got.state, HOLD_CONFIRMED);
	ck_assert_int_eq(got.redemption_id, r.r.id);
	ck_assert_int_gt(got.ended_at, 0);
	fx_assert_code(codes[0], "active", 1); /* the same seat */
	ck_assert_int_eq(events_of("code.redeemed"), 1);
	fx_verify_clean();
	ck_assert_int_eq(hold_confirm(&fx.svc, "h-1", &again, NULL), 0);
	ck_assert_int_eq(again.error, ERROR_NONE);
	ck_assert_int_eq(again.already, 1);
	ck_assert_int_eq(again.r.id, r.r.id);
	ck_assert_int_eq(again.r.seq, r.r.seq);
	ck_assert_int_eq(events_of("code.redeemed"), 1);
	/* The answer is a redemption, as redeem's. */
	o = redeem_result_json(&again, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_true(json_object_get(o, "already")));
	ck_assert_int_eq(json_integer_value(json_object_get(
			     json_object_get(o, "redemption"), "id")),
	    r.r.id);
	json_decref(o);
	/* Release after confirm changes nothing and says confirmed. */
	ck_assert_int_eq(release_state("h-1"), HOLD_CONFIRMED);
	fx_assert_code(codes[0], "active", 1);
	/* The redemption then replays through redeem as well. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, codes[0], "a@x", NULL, &again), 0);
	ck_assert_int_eq(again.already, 1);
	ck_assert_int_eq(again.r.id, r.r.id);
	fx_verify_clean();
}
END_TEST

/* The account redeemed the code on its own while holding a seat of it:
 * confirm answers that redemption and the hold's seat goes back. */
START_TEST(test_holds_confirm_account_redeemed_meanwhile)
{
	struct hold_result h;
	struct redeem_result direct, r;
	struct hold got;
	char codes[1][96];

	fx_campaign("k", 0, 5, 1);
	fx_codes("k", 1, 3, codes);
	/* Two holds of one account on one code are allowed. */
	hold_ok(codes[0], "a@x", "h-1", &h);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "b@x", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	/* The limit of 1 is held by the hold: a direct redeem is refused;
	 * confirm settles it. Lift the limit to let one through. */
	fx_sql("UPDATE campaigns SET per_account_limit = 2 WHERE name = 'k'");
	ck_assert_int_eq(
	    redeem_code(&fx.svc, codes[0], "a@x", NULL, &direct), 0);
	ck_assert_int_eq(direct.error, ERROR_NONE);
	fx_assert_code(codes[0], "exhausted", 3);
	ck_assert_int_eq(hold_confirm(&fx.svc, "h-1", &r, &got), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	ck_assert_int_eq(r.already, 1);
	ck_assert_int_eq(r.r.id, direct.r.id);
	ck_assert_int_eq(got.state, HOLD_CONFIRMED);
	ck_assert_int_eq(got.redemption_id, direct.r.id);
	fx_assert_code(codes[0], "active", 2);
	ck_assert_int_eq(budget_used("k"), 2);
	ck_assert_int_eq(events_of("code.redeemed"), 2);
	fx_verify_clean();
	ck_assert_int_eq(hold_confirm(&fx.svc, "h-1", &r, NULL), 0);
	ck_assert_int_eq(r.already, 1);
	ck_assert_int_eq(r.r.id, direct.r.id);
}
END_TEST

START_TEST(test_holds_confirm_expired_by_db_clock)
{
	struct hold_result h;
	struct redeem_result r;
	struct hold got;
	char codes[1][96];

	fx_campaign("k", 0, 3, 1);
	fx_codes("k", 1, 1, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	fx_assert_code(codes[0], "exhausted", 1);
	fx_lapse("holds", "h-1");
	/* Read back, a lost hold says so before any sweep. */
	ck_assert_int_eq(hold_get(&fx.svc, "h-1", &h), 0);
	ck_assert_int_eq(h.h.state, HOLD_EXPIRED);
	fx_assert_code(codes[0], "exhausted", 1);
	fx_verify_clean();
	/* Confirm: expired, and the seat goes back now. */
	ck_assert_int_eq(hold_confirm(&fx.svc, "h-1", &r, &got), 0);
	ck_assert_int_eq(r.error, ERROR_EXPIRED);
	ck_assert_int_eq(got.state, HOLD_EXPIRED);
	ck_assert_int_gt(got.ended_at, 0);
	fx_assert_code(codes[0], "active", 0);
	ck_assert_int_eq(budget_used("k"), 0);
	ck_assert_int_eq(events_of("hold.expired"), 1);
	ck_assert_int_eq(events_of("code.redeemed"), 0);
	fx_verify_clean();
	ck_assert_int_eq(confirm_word("h-1"), ERROR_EXPIRED);
	ck_assert_int_eq(release_state("h-1"), HOLD_EXPIRED);
	ck_assert_int_eq(events_of("hold.expired"), 1);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_confirm_released_expired)
{
	struct hold_result h;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	ck_assert_int_eq(confirm_word("h-1"), ERROR_EXPIRED);
	ck_assert_int_eq(confirm_word("h-2"), ERROR_NOT_FOUND);
	ck_assert_int_eq(confirm_word("bad id"), ERROR_NOT_FOUND);
	fx_assert_code(codes[0], "active", 0);
	ck_assert_int_eq(events_of("code.redeemed"), 0);
	fx_verify_clean();
}
END_TEST

/* A revoke or a close wins over a confirm; the hold keeps its seat until
 * released or expired, and the returned seat leaves the code revoked. */
START_TEST(test_holds_confirm_revoked)
{
	struct hold_result h;
	struct code_info ci;
	struct campaign k;
	char codes[2][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 2, 1, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	hold_ok(codes[1], "a@x", "h-2", &h);
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_int_eq(confirm_word("h-1"), ERROR_REVOKED);
	ck_assert_int_eq(hold_get(&fx.svc, "h-1", &h), 0);
	ck_assert_int_eq(h.h.state, HOLD_HELD);
	fx_assert_code(codes[0], "revoked", 1);
	fx_verify_clean();
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	fx_assert_code(codes[0], "revoked", 0);
	ck_assert_int_eq(campaign_close(&fx.svc, "k", &k), ERROR_NONE);
	ck_assert_int_eq(confirm_word("h-2"), ERROR_REVOKED);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_release_returns_seat)
{
	struct hold_result h, res;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 1, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	fx_assert_code(codes[0], "exhausted", 1);
	ck_assert_int_eq(hold_release(&fx.svc, "h-1", &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(res.h.state, HOLD_RELEASED);
	ck_assert_int_gt(res.h.ended_at, 0);
	ck_assert_int_eq(res.h.fencing_token, h.h.fencing_token);
	fx_assert_code(codes[0], "active", 0);
	fx_verify_clean();
	/* Idempotent: the seat goes back once. */
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	fx_assert_code(codes[0], "active", 0);
	ck_assert_int_eq(hold_release(&fx.svc, "nope", &res), 0);
	ck_assert_int_eq(res.error, ERROR_NOT_FOUND);
	/* The seat is free for the next one, with the next token. */
	hold_ok(codes[0], "b@x", "h-2", &h);
	ck_assert_int_eq(h.h.fencing_token, 2);
	fx_verify_clean();
}
END_TEST

/* A returned seat never re-opens a revoked or expired code. */
START_TEST(test_holds_seat_return_keeps_revoked_expired)
{
	struct hold_result h;
	struct code_info ci;
	char codes[3][96], sql[256], norm[CODE_MAX + 1];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 3, 1, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	hold_ok(codes[1], "a@x", "h-2", &h);
	hold_ok(codes[2], "a@x", "h-3", &h);
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_int_eq(codetext_normalize(codes[1], norm), CODETEXT_OK);
	snprintf(sql, sizeof(sql),
	    "UPDATE codes SET state = 'expired', expires_at = "
	    "UNIX_TIMESTAMP() - 5 WHERE code = '%s'",
	    norm);
	fx_sql(sql);
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	fx_assert_code(codes[0], "revoked", 0);
	fx_lapse("holds", "h-2");
	ck_assert_int_eq(release_state("h-2"), HOLD_EXPIRED);
	fx_assert_code(codes[1], "expired", 0);
	ck_assert_int_eq(release_state("h-3"), HOLD_RELEASED);
	fx_assert_code(codes[2], "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_get)
{
	struct hold_result h, got;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 2, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	ck_assert_int_eq(hold_get(&fx.svc, "h-1", &got), 0);
	ck_assert_int_eq(got.error, ERROR_NONE);
	ck_assert_int_eq(got.created, 0);
	ck_assert_int_eq(got.h.id, h.h.id);
	ck_assert_int_eq(got.h.state, HOLD_HELD);
	ck_assert_int_eq(got.h.fencing_token, h.h.fencing_token);
	ck_assert_int_eq(got.h.expires_at, h.h.expires_at);
	ck_assert_int_eq(hold_get(&fx.svc, "h-2", &got), 0);
	ck_assert_int_eq(got.error, ERROR_NOT_FOUND);
	ck_assert_int_eq(hold_get(&fx.svc, "", &got), 0);
	ck_assert_int_eq(got.error, ERROR_NOT_FOUND);
}
END_TEST

START_TEST(test_holds_json)
{
	struct hold_result h;
	char codes[1][96], exp[32];
	json_t *o, *x;

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 2, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	o = hold_result_json(&h);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_true(json_object_get(o, "ok")));
	x = json_object_get(o, "hold");
	ck_assert_str_eq(
	    json_string_value(json_object_get(x, "external_id")), "h-1");
	ck_assert_str_eq(
	    json_string_value(json_object_get(x, "state")), "held");
	ck_assert(json_is_integer(json_object_get(x, "fencing_token")));
	ck_assert_int_eq(
	    json_integer_value(json_object_get(x, "fencing_token")), 1);
	str_rfc3339(h.h.expires_at, exp);
	ck_assert_str_eq(
	    json_string_value(json_object_get(x, "expires_at")), exp);
	ck_assert_str_eq(
	    json_string_value(json_object_get(x, "code")), codes[0]);
	ck_assert_ptr_null(json_object_get(x, "redemption_id"));
	json_decref(o);
	h.error = ERROR_CONFLICT;
	o = hold_result_json(&h);
	ck_assert(json_is_false(json_object_get(o, "ok")));
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "error")), "conflict");
	ck_assert_ptr_null(json_object_get(o, "hold"));
	json_decref(o);
	ck_assert_str_eq(hold_state_name(HOLD_CONFIRMED), "confirmed");
	ck_assert_str_eq(hold_state_name(HOLD__MAX), "");
}
END_TEST

/* The sweeper's batches: only held holds past their TTL, every seat,
 * budget and account count back, one hold.expired event each. */
START_TEST(test_holds_expire_due_batches)
{
	struct hold_result h;
	struct redeem_result r;
	char codes[3][96], xid[16];
	int64_t done, total = 0;
	int i;

	fx_campaign("k", 0, 20, 5);
	fx_codes("k", 3, 5, codes);
	for (i = 0; i < 8; i++) {
		char account[16];

		snprintf(xid, sizeof(xid), "h-%d", i);
		snprintf(account, sizeof(account), "u%d@x", i);
		hold_ok(codes[i % 3], account, xid, &h);
	}
	confirm_ok("h-0", &r);
	ck_assert_int_eq(release_state("h-1"), HOLD_RELEASED);
	for (i = 0; i < 7; i++) { /* h-7 stays live */
		snprintf(xid, sizeof(xid), "h-%d", i);
		fx_lapse("holds", xid);
	}
	ck_assert_int_eq(hold_expire_due(fx.db, 0, &done), -1);
	ck_assert_int_eq(
	    hold_expire_due(fx.db, HOLD_EXPIRE_MAX + 1, &done), -1);
	ck_assert_int_eq(hold_expire_due(fx.db, 2, &done), 0);
	ck_assert_int_eq(done, 2);
	total += done;
	fx_verify_clean();
	ck_assert_int_eq(hold_expire_due(fx.db, 2, &done), 0);
	ck_assert_int_eq(done, 2);
	total += done;
	ck_assert_int_eq(hold_expire_due(fx.db, 2, &done), 0);
	ck_assert_int_eq(done, 1);
	total += done;
	ck_assert_int_eq(hold_expire_due(fx.db, 2, &done), 0);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(total, 5);
	ck_assert_int_eq(events_of("hold.expired"), 5);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds WHERE state = "
				  "'expired' AND ended_at IS NOT NULL"),
	    5);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM holds WHERE state = "
				  "'held'"),
	    1);
	/* The confirmed one's redemption and the live h-7 keep seats. */
	ck_assert_int_eq(budget_used("k"), 2);
	ck_assert_int_eq(hold_get(&fx.svc, "h-0", &h), 0);
	ck_assert_int_eq(h.h.state, HOLD_CONFIRMED);
	ck_assert_int_eq(hold_get(&fx.svc, "h-1", &h), 0);
	ck_assert_int_eq(h.h.state, HOLD_RELEASED);
	ck_assert_int_eq(confirm_word("h-3"), ERROR_EXPIRED);
	confirm_ok("h-7", &r);
	fx_verify_clean();
}
END_TEST

/* The event of an expired hold carries the hold. */
START_TEST(test_holds_expired_event_payload)
{
	struct hold_result h;
	char codes[1][96];
	int64_t done;

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 2, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	fx_lapse("holds", "h-1");
	ck_assert_int_eq(hold_expire_due(fx.db, 10, &done), 0);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM events WHERE type = "
		     "'hold.expired' AND redemption_id IS NULL AND payload "
		     "LIKE '%\"external_id\":\"h-1\"%' AND payload LIKE "
		     "'%\"state\":\"expired\"%'"),
	    1);
}
END_TEST

/* The cleanup job deletes holds that ended long enough ago, never a live
 * one; their external_ids are free again. */
START_TEST(test_holds_cleanup)
{
	struct hold_result h;
	struct redeem_result r;
	char codes[1][96];
	int64_t done;

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 5, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	hold_ok(codes[0], "b@x", "h-2", &h);
	hold_ok(codes[0], "c@x", "h-3", &h);
	hold_ok(codes[0], "d@x", "h-4", &h);
	confirm_ok("h-1", &r);
	ck_assert_int_eq(release_state("h-2"), HOLD_RELEASED);
	ck_assert_int_eq(release_state("h-4"), HOLD_RELEASED);
	ck_assert_int_eq(hold_cleanup(fx.db, 3600, 10, &done), 0);
	ck_assert_int_eq(done, 0); /* too recent */
	fx_sql("UPDATE holds SET ended_at = UNIX_TIMESTAMP() - 8 * 86400 "
	       "WHERE external_id IN ('h-1', 'h-2')");
	ck_assert_int_eq(hold_cleanup(fx.db, 7 * 86400, 0, &done), -1);
	ck_assert_int_eq(hold_cleanup(fx.db, 7 * 86400, 1, &done), 0);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(hold_cleanup(fx.db, 7 * 86400, 10, &done), 0);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(hold_cleanup(fx.db, 7 * 86400, 10, &done), 0);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(hold_get(&fx.svc, "h-1", &h), 0);
	ck_assert_int_eq(h.error, ERROR_NOT_FOUND);
	ck_assert_int_eq(hold_get(&fx.svc, "h-3", &h), 0);
	ck_assert_int_eq(h.h.state, HOLD_HELD);
	ck_assert_int_eq(hold_get(&fx.svc, "h-4", &h), 0);
	ck_assert_int_eq(h.h.state, HOLD_RELEASED);
	hold_ok(codes[0], "e@x", "h-2", &h);
	ck_assert_int_eq(h.created, 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_fencing_per_code)
{
	struct hold_result h;
	char codes[2][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 2, 10, codes);
	hold_ok(codes[0], "a@x", "a1", &h);
	ck_assert_int_eq(h.h.fencing_token, 1);
	hold_ok(codes[1], "a@x", "b1", &h);
	ck_assert_int_eq(h.h.fencing_token, 1);
	ck_assert_int_eq(release_state("a1"), HOLD_RELEASED);
	hold_ok(codes[0], "b@x", "a2", &h);
	ck_assert_int_eq(h.h.fencing_token, 2);
	/* A refused hold takes no token. */
	ck_assert_int_eq(hold_word("23456789", "c@x", "a3"), ERROR_INVALID);
	hold_ok(codes[0], "c@x", "a4", &h);
	ck_assert_int_eq(h.h.fencing_token, 3);
	fx_verify_clean();
}
END_TEST

START_TEST(test_holds_verify_catches_g2)
{
	struct hold_result h;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 3, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	/* A hold that ends without giving its seat back. */
	fx_sql("UPDATE holds SET state = 'released' WHERE external_id = "
	       "'h-1'");
	fx_verify_only(VERIFY_G2_CONSERVATION, 1);
}
END_TEST

START_TEST(test_holds_verify_catches_g4)
{
	struct hold_result h;
	char codes[1][96];

	fx_campaign("k", 0, 5, 2);
	fx_codes("k", 1, 3, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	fx_verify_clean();
	fx_sql("UPDATE campaigns SET redeemed = 0 WHERE name = 'k'");
	fx_verify_only(VERIFY_G4_BUDGET, 1);
	fx_sql("UPDATE campaigns SET redeemed = 1 WHERE name = 'k'");
	fx_sql("UPDATE campaign_accounts SET n = 0");
	fx_verify_only(VERIFY_G4_ACCOUNT_LIMIT, 1);
}
END_TEST

START_TEST(test_holds_verify_catches_g6)
{
	struct hold_result h;
	char codes[1][96];

	fx_campaign("k", 0, 0, 0);
	fx_codes("k", 1, 5, codes);
	hold_ok(codes[0], "a@x", "h-1", &h);
	hold_ok(codes[0], "b@x", "h-2", &h);
	hold_ok(codes[0], "c@x", "h-3", &h);
	fx_verify_clean();
	/* A token handed out twice. */
	fx_sql("UPDATE holds SET fencing_token = 1 WHERE external_id = 'h-2'");
	fx_verify_only(VERIFY_G6_FENCING, 1);
	fx_sql("UPDATE holds SET fencing_token = 2 WHERE external_id = 'h-2'");
	fx_verify_clean();
	/* The counter behind a token. */
	fx_sql("UPDATE codes SET fence = 2");
	fx_verify_only(VERIFY_G6_FENCING, 1);
	fx_sql("UPDATE codes SET fence = 3");
	/* A later token granted earlier. */
	fx_sql("UPDATE holds SET created_at = created_at - 100 WHERE "
	       "external_id = 'h-3'");
	fx_verify_only(VERIFY_G6_FENCING, 1);
}
END_TEST

/* --- races ------------------------------------------------------------- */

enum { K_REDEEM, K_HOLD, K_CONFIRM, K_RELEASE, K_SWEEP };

struct hold_race {
	char code[96];
	int attempts;
	char xids[FR_MAX_CHILDREN][32];
};

static struct hold_race hr;

static void
emit_hold(
    struct fr *r, int child, int kind, int rc, const struct hold_result *h)
{
	struct fr_rec x;

	fr_rec_init(&x, child, kind, rc, (int)h->error);
	x.flag = h->created;
	x.a = h->h.fencing_token;
	x.b = h->h.state;
	fr_emit(r, &x);
}

static void
emit_redeem(
    struct fr *r, int child, int kind, int rc, const struct redeem_result *res)
{
	struct fr_rec x;

	fr_rec_init(&x, child, kind, rc, (int)res->error);
	x.flag = res->already;
	x.a = res->r.id;
	fr_emit(r, &x);
}

/* Attempt j: 0 redeem, 1 hold + confirm, 2 hold + release, 3 hold. */
static void
fn_mixed(struct fr *r, struct svc *svc, int child)
{
	struct hold_result h, rel;
	struct redeem_result res;
	char account[64], xid[64];
	int j, rc;

	for (j = child; j < hr.attempts; j += r->nchildren) {
		snprintf(
		    account, sizeof(account), "u%d-r%d@race.test", j, r->round);
		snprintf(xid, sizeof(xid), "x%d-r%d", j, r->round);
		if (j % 4 == 0) {
			rc = redeem_code(svc, hr.code, account, NULL, &res);
			emit_redeem(r, child, K_REDEEM, rc, &res);
			continue;
		}
		rc = hold_create(svc, hr.code, account, xid, TTL, NULL, &h);
		emit_hold(r, child, K_HOLD, rc, &h);
		if (rc != 0 || h.error != ERROR_NONE || j % 4 == 3)
			continue;
		if (j % 4 == 1) {
			rc = hold_confirm(svc, xid, &res, NULL);
			emit_redeem(r, child, K_CONFIRM, rc, &res);
		} else {
			rc = hold_release(svc, xid, &rel);
			emit_hold(r, child, K_RELEASE, rc, &rel);
		}
	}
}

START_TEST(test_holds_race_mixed_with_claims)
{
	struct fr r = {0};
	struct code_info ci;
	char codes[1][96], name[32];
	int64_t done;
	int i, round, fresh, live, held, max = 8;

	r.name = "holds_mixed";
	r.fn = fn_mixed;
	r.nchildren = 16;
	r.rounds = fr_rounds(20);
	hr.attempts = 48;
	for (round = 0; round < r.rounds; round++) {
		r.round = round;
		snprintf(name, sizeof(name), "r%d", round);
		fx_campaign(name, 0, 0, 0);
		fx.shards = round % 2 == 1 ? 4 : 1; /* odd: split */
		fx_codes(name, 1, max, codes);
		snprintf(hr.code, sizeof(hr.code), "%s", codes[0]);
		fr_round(&r);
		fresh = live = held = 0;
		for (i = 0; i < r.nrecs; i++) {
			const struct fr_rec *x = &r.recs[i];

			ck_assert_msg(
			    x->rc == 0 && (x->error == ERROR_NONE ||
					      x->error == ERROR_EXHAUSTED),
			    "round %d: child %d kind %d: rc %d, %s", round,
			    x->child, x->kind, x->rc,
			    error_name((enum error_word)x->error));
			if (x->error != ERROR_NONE)
				continue;
			switch (x->kind) {
			case K_REDEEM:
			case K_CONFIRM:
				ck_assert_int_eq(x->flag, 0);
				fresh++;
				break;
			case K_HOLD:
				ck_assert_int_eq(x->flag, 1);
				held++;
				break;
			case K_RELEASE:
				ck_assert_int_eq(x->b, HOLD_RELEASED);
				break;
			}
		}
		live = (int)fx_count("SELECT COUNT(*) FROM holds WHERE state "
				     "= 'held'");
		ck_assert_int_eq(code_get(&fx.svc, hr.code, &ci), ERROR_NONE);
		/* G1, G2: every seat taken is a redemption or a live hold. */
		ck_assert_int_le(ci.uses, max);
		ck_assert_int_eq(ci.uses, fresh + live);
		ck_assert_int_ge(held, live);
		fx_verify_clean();
		/* The live holds lapse and the sweeper takes them back. */
		fx_sql("UPDATE holds SET expires_at = UNIX_TIMESTAMP() - 1 "
		       "WHERE state = 'held'");
		ck_assert_int_eq(hold_expire_due(fx.db, 100, &done), 0);
		ck_assert_int_eq(done, live);
		ck_assert_int_eq(code_get(&fx.svc, hr.code, &ci), ERROR_NONE);
		ck_assert_int_eq(ci.uses, fresh);
		fx_verify_clean();
	}
}
END_TEST

/* Confirm against release of the same hold, and the sweeper on lapsed
 * ones: each hold ends exactly one way, each lapsed one with one event. */
static void
fn_end(struct fr *r, struct svc *svc, int child)
{
	struct redeem_result res;
	struct hold_result h;
	struct fr_rec x;
	int64_t done = 0, total = 0;
	int rc, i;

	if (child == r->nchildren - 1) { /* the sweeper */
		do {
			rc = hold_expire_due(svc->db, 3, &done);
			total += done;
		} while (rc == 0 && done > 0);
		fr_rec_init(&x, child, K_SWEEP, rc, 0);
		x.a = total;
		fr_emit(r, &x);
		return;
	}
	i = child / 2;
	if (child % 2 == 0) {
		rc = hold_confirm(svc, hr.xids[i], &res, NULL);
		emit_redeem(r, child, K_CONFIRM, rc, &res);
	} else {
		rc = hold_release(svc, hr.xids[i], &h);
		emit_hold(r, child, K_RELEASE, rc, &h);
	}
}

static int
round_holds(const char *state, int round)
{
	char sql[160];

	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM holds WHERE state = '%s' AND external_id "
	    "LIKE 'e%%-r%d'",
	    state, round);
	return (int)fx_count(sql);
}

START_TEST(test_holds_race_confirm_release_sweep)
{
	struct fr r = {0};
	struct hold_result h;
	struct code_info ci;
	char codes[1][96], name[32], account[32], sql[160];
	int i, round, nholds = 8, confirmed, released, expired;
	int64_t swept, ev0;

	r.name = "holds_end";
	r.fn = fn_end;
	r.nchildren = 2 * nholds + 1;
	r.rounds = fr_rounds(20);
	for (round = 0; round < r.rounds; round++) {
		r.round = round;
		snprintf(name, sizeof(name), "r%d", round);
		fx_campaign(name, 0, 0, 0);
		fx.shards = round % 2 == 1 ? 4 : 1; /* odd: split */
		fx_codes(name, 1, nholds, codes);
		snprintf(hr.code, sizeof(hr.code), "%s", codes[0]);
		for (i = 0; i < nholds; i++) {
			snprintf(hr.xids[i], sizeof(hr.xids[i]), "e%d-r%d", i,
			    round);
			snprintf(account, sizeof(account), "e%d@x", i);
			hold_ok(codes[0], account, hr.xids[i], &h);
			if (i % 2 == 1) { /* odd ones have lapsed */
				snprintf(sql, sizeof(sql),
				    "UPDATE holds SET expires_at = "
				    "UNIX_TIMESTAMP() - 1 WHERE "
				    "external_id = '%s'",
				    hr.xids[i]);
				fx_sql(sql);
			}
		}
		ev0 = events_of("hold.expired");
		fr_round(&r);
		ck_assert_int_eq(r.nrecs, r.nchildren);
		swept = 0;
		for (i = 0; i < r.nrecs; i++) {
			const struct fr_rec *x = &r.recs[i];
			int k = x->child / 2, lapsed = k % 2 == 1;

			ck_assert_int_eq(x->rc, 0);
			if (x->kind == K_SWEEP) {
				swept = x->a;
				continue;
			}
			if (lapsed && x->kind == K_CONFIRM)
				ck_assert_int_eq(x->error, ERROR_EXPIRED);
			else if (lapsed)
				ck_assert_int_eq(x->b, HOLD_EXPIRED);
			else if (x->kind == K_CONFIRM)
				ck_assert(x->error == ERROR_NONE ||
					  x->error == ERROR_EXPIRED);
			else
				ck_assert(x->b == HOLD_RELEASED ||
					  x->b == HOLD_CONFIRMED);
		}
		confirmed = round_holds("confirmed", round);
		released = round_holds("released", round);
		expired = round_holds("expired", round);
		ck_assert_int_eq(confirmed + released, nholds / 2);
		ck_assert_int_eq(expired, nholds / 2);
		ck_assert_int_le(swept, expired);
		/* Exactly one event per lapsed hold, whoever expired it. */
		ck_assert_int_eq(events_of("hold.expired") - ev0, nholds / 2);
		ck_assert_int_eq(code_get(&fx.svc, hr.code, &ci), ERROR_NONE);
		ck_assert_int_eq(ci.uses, confirmed);
		/* The answers agree with the rows. */
		for (i = 0; i < r.nrecs; i++) {
			const struct fr_rec *x = &r.recs[i];
			int k = x->child / 2;

			if (x->kind != K_CONFIRM || k % 2 == 1)
				continue;
			ck_assert_int_eq(hold_get(&fx.svc, hr.xids[k], &h), 0);
			ck_assert_int_eq(h.h.state, x->error == ERROR_NONE
							? HOLD_CONFIRMED
							: HOLD_RELEASED);
		}
		fx_verify_clean();
	}
}
END_TEST

/* One seat, many takers: each takes it with a hold, reports its token
 * while holding it, then releases. The seat admits one at a time, so the
 * pipe's order is the grant order: tokens must rise strictly. */
static void
fn_fence(struct fr *r, struct svc *svc, int child)
{
	struct hold_result h, rel;
	struct timespec ts = {0, 200000};
	char account[64], xid[64];
	int got = 0, tries = 0, rc;

	snprintf(account, sizeof(account), "f%d@race.test", child);
	while (got < 3 && tries++ < 20000) {
		snprintf(xid, sizeof(xid), "f%d-%d-r%d", child, got, r->round);
		rc = hold_create(svc, hr.code, account, xid, TTL, NULL, &h);
		if (rc == 0 && h.error == ERROR_EXHAUSTED) {
			nanosleep(&ts, NULL);
			continue;
		}
		emit_hold(r, child, K_HOLD, rc, &h);
		if (rc != 0 || h.error != ERROR_NONE)
			return;
		rc = hold_release(svc, xid, &rel);
		if (rc != 0 || rel.error != ERROR_NONE)
			return;
		got++;
	}
}

START_TEST(test_holds_race_fencing_grant_order)
{
	struct fr r = {0};
	char codes[1][96], name[32];
	int64_t last;
	int i, round;

	r.name = "holds_fence";
	r.fn = fn_fence;
	r.nchildren = 16;
	r.rounds = fr_rounds(10);
	for (round = 0; round < r.rounds; round++) {
		r.round = round;
		snprintf(name, sizeof(name), "r%d", round);
		fx_campaign(name, 0, 0, 0);
		fx_codes(name, 1, 1, codes);
		snprintf(hr.code, sizeof(hr.code), "%s", codes[0]);
		fr_round(&r);
		ck_assert_int_eq(r.nrecs, 3 * r.nchildren);
		for (last = 0, i = 0; i < r.nrecs; i++) {
			const struct fr_rec *x = &r.recs[i];

			ck_assert_msg(x->rc == 0 && x->error == ERROR_NONE,
			    "round %d: child %d: %s", round, x->child,
			    error_name((enum error_word)x->error));
			ck_assert_msg(x->a > last,
			    "round %d: token %lld granted after %lld", round,
			    (long long)x->a, (long long)last);
			last = x->a;
		}
		ck_assert_int_eq(last, 3 * r.nchildren);
		fx_assert_code(codes[0], "active", 0);
		fx_verify_clean();
	}
}
END_TEST

Suite *
suite_holds(void)
{
	Suite *s = suite_create("holds");
	TCase *tc = tcase_create("holds");
	TCase *race = tcase_create("holds_race");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_holds_create_takes_seat);
	tcase_add_test(tc, test_holds_single_use_exhausted_then_redeemed);
	tcase_add_test(tc, test_holds_create_replay_same_hold);
	tcase_add_test(tc, test_holds_create_conflict);
	tcase_add_test(tc, test_holds_create_after_redemption_conflict);
	tcase_add_test(tc, test_holds_create_second_of_account_conflict);
	tcase_add_test(tc, test_holds_create_refusals);
	tcase_add_test(tc, test_holds_create_bad_request);
	tcase_add_test(tc, test_holds_create_rate_limited);
	tcase_add_test(tc, test_holds_budget_reserved);
	tcase_add_test(tc, test_holds_account_limit_reserved);
	tcase_add_test(tc, test_holds_pool_one_per_account);
	tcase_add_test(tc, test_holds_confirm_fresh_and_replay);
	tcase_add_test(tc, test_holds_confirm_account_redeemed_meanwhile);
	tcase_add_test(tc, test_holds_confirm_expired_by_db_clock);
	tcase_add_test(tc, test_holds_confirm_released_expired);
	tcase_add_test(tc, test_holds_confirm_revoked);
	tcase_add_test(tc, test_holds_release_returns_seat);
	tcase_add_test(tc, test_holds_seat_return_keeps_revoked_expired);
	tcase_add_test(tc, test_holds_get);
	tcase_add_test(tc, test_holds_json);
	tcase_add_test(tc, test_holds_expire_due_batches);
	tcase_add_test(tc, test_holds_expired_event_payload);
	tcase_add_test(tc, test_holds_cleanup);
	tcase_add_test(tc, test_holds_fencing_per_code);
	tcase_add_test(tc, test_holds_verify_catches_g2);
	tcase_add_test(tc, test_holds_verify_catches_g4);
	tcase_add_test(tc, test_holds_verify_catches_g6);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(race, fx_setup, fx_teardown);
	tcase_set_timeout(race, 600);
	tcase_add_test(race, test_holds_race_mixed_with_claims);
	tcase_add_test(race, test_holds_race_confirm_release_sweep);
	tcase_add_test(race, test_holds_race_fencing_grant_order);
	suite_add_tcase(s, race);
	return s;
}
