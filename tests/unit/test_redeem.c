/*
 * The redemption algorithm (app/core/redeem.c): a fresh claim, replays,
 * the state machine, every error word with its trigger, the abuse gate as
 * redeem_code sees it, hostile input, sequence numbers and the outbox.
 * Every test that writes ends with verify (G1-G8) clean.
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

static int64_t
redemptions(void)
{
	return fx_count("SELECT COUNT(*) FROM redemptions");
}

static int64_t
abuse_rows(void)
{
	return fx_count("SELECT COUNT(*) FROM abuse_failures");
}

/* One code of a new shared campaign. */
static void
one_code(const char *campaign, int64_t max_uses, char *out)
{
	char codes[1][96];

	fx_campaign(campaign, 0, 0, 0);
	fx_codes(campaign, 1, max_uses, codes);
	memcpy(out, codes[0], sizeof(codes[0]));
}

/* A fresh redemption, asserted. */
static void
redeem_fresh(const char *code, const char *account, struct redeem_result *res)
{
	ck_assert_int_eq(redeem_code(&fx.svc, code, account, CLIENT, res), 0);
	ck_assert_msg(res->error == ERROR_NONE, "%s by %s: %s", code, account,
	    error_name(res->error));
	ck_assert_int_eq(res->already, 0);
	ck_assert_int_gt(res->r.id, 0);
}

/* The word a redemption answers, with the client given. */
static enum error_word
redeem_word_from(const char *code, const char *account, const char *client)
{
	struct redeem_result res;

	ck_assert_int_eq(redeem_code(&fx.svc, code, account, client, &res), 0);
	if (res.error != ERROR_NONE)
		ck_assert_int_eq(res.already, 0);
	return res.error;
}

static enum error_word
redeem_word(const char *code, const char *account)
{
	return redeem_word_from(code, account, CLIENT);
}

static void
assert_same_redemption(const struct redemption *a, const struct redemption *b)
{
	ck_assert_int_eq(a->id, b->id);
	ck_assert_int_eq(a->seq, b->seq);
	ck_assert_int_eq(a->code_id, b->code_id);
	ck_assert_str_eq(a->code, b->code);
	ck_assert_str_eq(a->account, b->account);
	ck_assert_str_eq(a->campaign, b->campaign);
	ck_assert_int_eq(a->redeemed_at, b->redeemed_at);
}

/* Changes the last (check) character of a display code. */
static void
typo_check_char(const char *code, char *out, size_t n)
{
	size_t len;

	snprintf(out, n, "%s", code);
	len = strlen(out);
	ck_assert_int_gt(len, 0);
	out[len - 1] = out[len - 1] == 'X' ? 'Y' : 'X';
}

START_TEST(test_redeem_fresh)
{
	struct redeem_result res, got;
	char code[96];
	time_t before, after;

	one_code("spring", 1, code);
	before = time(NULL);
	redeem_fresh(code, "a@example.com", &res);
	after = time(NULL);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_gt(res.r.seq, 0);
	ck_assert_int_gt(res.r.code_id, 0);
	ck_assert_str_eq(res.r.code, code);
	ck_assert_str_eq(res.r.account, "a@example.com");
	ck_assert_str_eq(res.r.campaign, "spring");
	/* The database's clock; MariaDB runs on this host. */
	ck_assert_int_ge(res.r.redeemed_at, (int64_t)before - 5);
	ck_assert_int_le(res.r.redeemed_at, (int64_t)after + 5);
	ck_assert_int_eq(res.r.reversed_at, 0);
	ck_assert_int_eq(res.r.reversal_policy, REVERSAL_NONE);
	ck_assert_int_eq(res.compensated, 0);
	ck_assert_int_eq(res.rechecked, 0);
	fx_assert_code(code, "redeemed", 1);
	/* What was stored is what was answered. */
	ck_assert_int_eq(redeem_get(&fx.svc, res.r.id, &got), 0);
	ck_assert_int_eq(got.error, ERROR_NONE);
	assert_same_redemption(&got.r, &res.r);
	ck_assert_int_eq(redemptions(), 1);
	ck_assert_int_eq(redeemed_events(), 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_fresh_canonical_account)
{
	struct redeem_result res;
	char code[96];

	one_code("spring", 1, code);
	redeem_fresh(code, " \tMiXeD.Case@Example.COM \t", &res);
	ck_assert_str_eq(res.r.account, "mixed.case@example.com");
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_replay)
{
	static const struct {
		const char *account;
		int lower, nodash, spaced;
	} variant[] = {
	    {"a@example.com", 0, 0, 0},
	    {"A@EXAMPLE.COM", 0, 0, 0},
	    {"  a@Example.com\t", 1, 0, 0},
	    {"a@example.com", 0, 1, 0},
	    {"a@example.com", 1, 1, 1},
	    {"\tA@example.COM ", 0, 0, 1},
	};
	struct redeem_result first, res;
	char code[96], typed[CODE_INPUT_MAX + 1];
	size_t i, j, o;

	/* Three uses: a replay that took a seat would show in uses. */
	one_code("spring", 3, code);
	redeem_fresh(code, "a@example.com", &first);
	for (i = 0; i < NELEM(variant); i++) {
		for (j = 0, o = 0; code[j] != '\0'; j++) {
			char c = code[j];

			if (c == '-' && variant[i].nodash)
				continue;
			if (variant[i].lower && c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (variant[i].spaced)
				typed[o++] = ' ';
			typed[o++] = c;
		}
		typed[o] = '\0';
		ck_assert_int_eq(redeem_code(&fx.svc, typed, variant[i].account,
				     CLIENT, &res),
		    0);
		ck_assert_msg(res.error == ERROR_NONE, "%s by '%s': %s", typed,
		    variant[i].account, error_name(res.error));
		ck_assert_int_eq(res.already, 1);
		assert_same_redemption(&res.r, &first.r);
	}
	fx_assert_code(code, "active", 1);
	ck_assert_int_eq(redemptions(), 1);
	/* G7: a replay writes no event. */
	ck_assert_int_eq(redeemed_events(), 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_single_use_redeemed)
{
	struct redeem_result res;
	char code[96];

	one_code("spring", 1, code);
	fx_assert_code(code, "active", 0);
	redeem_fresh(code, "a@example.com", &res);
	fx_assert_code(code, "redeemed", 1);
	ck_assert_int_eq(redeem_word(code, "b@example.com"), ERROR_EXHAUSTED);
	fx_assert_code(code, "redeemed", 1);
	fx_verify_clean();
}
END_TEST

/*
 * The MySQL left-to-right SET trap: a CASE reading `uses` after
 * `uses = uses + 1` flips a multi-use code to exhausted one use early.
 */
START_TEST(test_redeem_multi_use_state_machine)
{
	static const int64_t max_uses[] = {2, 3, 5};
	struct redeem_result res;
	char code[96], name[32], account[64];
	size_t i;
	int64_t u;

	for (i = 0; i < NELEM(max_uses); i++) {
		snprintf(name, sizeof(name), "multi%zu", i);
		one_code(name, max_uses[i], code);
		for (u = 1; u <= max_uses[i]; u++) {
			snprintf(account, sizeof(account), "u%lld@example.com",
			    (long long)u);
			redeem_fresh(code, account, &res);
			fx_assert_code(
			    code, u < max_uses[i] ? "active" : "exhausted", u);
		}
		ck_assert_int_eq(
		    redeem_word(code, "late@example.com"), ERROR_EXHAUSTED);
		fx_assert_code(code, "exhausted", max_uses[i]);
	}
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_invalid)
{
	char code[96], typo[96], unknown[CODE_MAX + 1], disp[CODE_DISPLAY_MAX];
	size_t i;
	const char *bad[] = {
	    unknown,     /* well formed, good check character, absent */
	    typo,        /* a real code, check character changed */
	    "OOOO-0000", /* outside the alphabet: no check possible */
	    "ILL1-0O0O", "K7PQ!XM3D", /* punctuation */
	    "K7PQ_XM3D",
	    "\xc3\x84"
	    "BCD", /* UTF-8, but not a code character */
	};

	one_code("spring", 5, code);
	ck_assert_int_eq(codetext_generate("", 8, 1, unknown, disp), 0);
	typo_check_char(code, typo, sizeof(typo));
	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(redeem_word_from(bad[i], "a@example.com", NULL) ==
				  ERROR_INVALID,
		    "'%s' is not invalid", bad[i]);
	fx_assert_code(code, "active", 0);
	ck_assert_int_eq(redemptions(), 0);
	fx_verify_clean();
}
END_TEST

/*
 * A typo in the check character fails before the database: even a row
 * holding exactly the typed text (planted behind the service's back, so
 * the tenant does not know it holds unchecked codes) is not looked up.
 */
START_TEST(test_redeem_invalid_check_char_before_lookup)
{
	char code[96], typo[96], norm[CODE_MAX + 1], sql[512];
	struct code_info ci;

	one_code("spring", 1, code);
	typo_check_char(code, typo, sizeof(typo));
	ck_assert_int_eq(codetext_normalize(typo, norm), CODETEXT_OK);
	ck_assert_int_eq(codetext_check_ok(norm), 0);
	snprintf(sql, sizeof(sql),
	    "INSERT INTO codes (tenant_id, campaign_id, code, display, "
	    "max_uses, created_at) SELECT tenant_id, id, '%s', '%s', 1, "
	    "UNIX_TIMESTAMP() FROM campaigns WHERE tenant_id = %lld AND "
	    "name = 'spring'",
	    norm, typo, (long long)fx.svc.tenant_id);
	fx_sql(sql);
	ck_assert_int_eq(code_get(&fx.svc, typo, &ci), ERROR_NONE);
	ck_assert_int_eq(redeem_word(typo, "a@example.com"), ERROR_INVALID);
	fx_assert_code(typo, "active", 0);
	ck_assert_int_eq(redemptions(), 0);
	fx_verify_clean();
}
END_TEST

/* A tenant that holds codes without a check character looks every code
 * up, so those codes redeem whether their last character checks or not. */
START_TEST(test_redeem_unchecked_codes_redeem)
{
	struct redeem_result res;
	char codes[8][96];
	int i;

	fx_campaign("plain", 0, 0, 0);
	/* Eight: each passes the check by chance with odds 1/31. */
	fx_codes_with("plain", 8, 1, 0, 1, codes);
	ck_assert_int_gt(fx.svc.unchecked_codes, 0);
	for (i = 0; i < 8; i++)
		redeem_fresh(codes[i], "a@example.com", &res);
	fx_verify_clean();
}
END_TEST

static void
expire_all_codes(void)
{
	fx_sql("UPDATE codes SET expires_at = 1");
}

static void
mark_all_codes_expired(void)
{
	fx_sql("UPDATE codes SET state = 'expired'");
}

START_TEST(test_redeem_expired_code)
{
	struct redeem_result res;
	char past[1][96], later[1][96], code[96];

	fx_campaign("spring", 0, 0, 0);
	/* Generated with a past expiry: codes_generate accepts it. */
	fx_codes_with("spring", 1, 3, (int64_t)time(NULL) - 10, 0, past);
	ck_assert_int_eq(redeem_word(past[0], "a@example.com"), ERROR_EXPIRED);
	fx_assert_code(past[0], "active", 0);
	/* Redeemed while valid, then past its expires_at. */
	fx_codes_with("spring", 1, 3, (int64_t)time(NULL) + 3600, 0, later);
	redeem_fresh(later[0], "a@example.com", &res);
	expire_all_codes();
	ck_assert_int_eq(redeem_word(later[0], "b@example.com"), ERROR_EXPIRED);
	fx_assert_code(later[0], "active", 1);
	/* Swept: the state says expired. */
	one_code("summer", 3, code);
	mark_all_codes_expired();
	ck_assert_int_eq(redeem_word(code, "a@example.com"), ERROR_EXPIRED);
	fx_assert_code(code, "expired", 0);
	ck_assert_int_eq(redemptions(), 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_expired_campaign)
{
	struct campaign k;
	char codes[1][96];
	time_t now = time(NULL);

	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "over");
	k.kind = CAMPAIGN_SHARED;
	k.starts_at = (int64_t)now - 3600;
	k.ends_at = (int64_t)now - 10;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	fx_codes("over", 1, 5, codes);
	ck_assert_int_eq(redeem_word(codes[0], "a@example.com"), ERROR_EXPIRED);
	fx_assert_code(codes[0], "active", 0);
	ck_assert_int_eq(redemptions(), 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_revoked_code)
{
	struct code_info ci;
	char code[96];

	one_code("spring", 5, code);
	ck_assert_int_eq(code_revoke(&fx.svc, code, &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "revoked");
	ck_assert_int_eq(redeem_word(code, "a@example.com"), ERROR_REVOKED);
	fx_assert_code(code, "revoked", 0);
	ck_assert_int_eq(redemptions(), 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_revoked_campaign_closed)
{
	struct campaign k;
	char code[96];

	one_code("spring", 5, code);
	ck_assert_int_eq(campaign_close(&fx.svc, "spring", &k), ERROR_NONE);
	ck_assert_int_eq(k.closed, 1);
	ck_assert_int_eq(redeem_word(code, "a@example.com"), ERROR_REVOKED);
	fx_assert_code(code, "active", 0);
	ck_assert_int_eq(redemptions(), 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_ineligible_not_started)
{
	struct campaign k;
	char codes[1][96];

	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "later");
	k.kind = CAMPAIGN_SHARED;
	k.starts_at = (int64_t)time(NULL) + 3600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	fx_codes("later", 1, 5, codes);
	ck_assert_int_eq(
	    redeem_word(codes[0], "a@example.com"), ERROR_INELIGIBLE);
	fx_assert_code(codes[0], "active", 0);
	ck_assert_int_eq(redemptions(), 0);
	fx_verify_clean();
}
END_TEST

/* A window that is open now redeems. */
START_TEST(test_redeem_window_open)
{
	struct redeem_result res;
	struct campaign k;
	char codes[1][96];
	time_t now = time(NULL);

	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "now");
	k.kind = CAMPAIGN_SHARED;
	k.starts_at = (int64_t)now - 60;
	k.ends_at = (int64_t)now + 3600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	fx_codes("now", 1, 5, codes);
	redeem_fresh(codes[0], "a@example.com", &res);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_ineligible_account_limit)
{
	struct redeem_result res;
	char codes[3][96];

	fx_campaign("limited", 0, 0, 2);
	fx_codes("limited", 3, 5, codes);
	redeem_fresh(codes[0], "a@example.com", &res);
	redeem_fresh(codes[1], "a@example.com", &res);
	/* The limit is across the campaign's codes, on the canonical
	 * account. */
	ck_assert_int_eq(
	    redeem_word(codes[2], "a@example.com"), ERROR_INELIGIBLE);
	ck_assert_int_eq(
	    redeem_word(codes[2], " A@EXAMPLE.COM "), ERROR_INELIGIBLE);
	fx_assert_code(codes[2], "active", 0);
	/* A replay within the limit is still a replay. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, codes[1], "a@example.com", CLIENT, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(res.already, 1);
	/* Another account has its own count. */
	redeem_fresh(codes[2], "b@example.com", &res);
	fx_assert_code(codes[2], "active", 1);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_exhausted_no_seat)
{
	struct redeem_result res;
	char code[96];

	one_code("spring", 2, code);
	redeem_fresh(code, "a@example.com", &res);
	redeem_fresh(code, "b@example.com", &res);
	ck_assert_int_eq(redeem_word(code, "c@example.com"), ERROR_EXHAUSTED);
	fx_assert_code(code, "exhausted", 2);
	ck_assert_int_eq(redemptions(), 2);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_exhausted_budget)
{
	struct redeem_result res;
	struct campaign k;
	char codes[2][96];

	fx_campaign("budget", 0, 2, 0);
	fx_codes("budget", 2, 10, codes);
	redeem_fresh(codes[0], "a@example.com", &res);
	redeem_fresh(codes[1], "b@example.com", &res);
	/* The codes have room; the campaign has none. */
	ck_assert_int_eq(
	    redeem_word(codes[0], "c@example.com"), ERROR_EXHAUSTED);
	ck_assert_int_eq(
	    redeem_word(codes[1], "c@example.com"), ERROR_EXHAUSTED);
	fx_assert_code(codes[0], "active", 1);
	fx_assert_code(codes[1], "active", 1);
	ck_assert_int_eq(campaign_get(&fx.svc, "budget", &k), ERROR_NONE);
	ck_assert_int_eq(k.redeemed, 2);
	ck_assert_int_eq(redemptions(), 2);
	fx_verify_clean();
}
END_TEST

static void
abuse_limit(int64_t n)
{
	fx.svc.cfg.abuse_limit_client = n;
	fx.svc.cfg.abuse_limit_account = n;
}

START_TEST(test_redeem_rate_limited)
{
	struct redeem_result res;
	char code[96], unknown[CODE_MAX + 1], disp[CODE_DISPLAY_MAX];
	int i;

	abuse_limit(3);
	one_code("spring", 10, code);
	ck_assert_int_eq(codetext_generate("", 8, 1, unknown, disp), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(
		    redeem_word_from(disp, "x@example.com", "203.0.113.9"),
		    ERROR_INVALID);
	ck_assert_int_eq(abuse_rows(), 6);
	/* The gate is before the lookup: a good code is refused too. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, code, "x@example.com", "203.0.113.9", &res),
	    0);
	ck_assert_int_eq(res.error, ERROR_RATE_LIMITED);
	ck_assert_int_gt(res.retry_after, 0);
	ck_assert_int_le(res.retry_after, fx.svc.cfg.abuse_window);
	ck_assert_int_eq(res.already, 0);
	/* A rate_limited answer is not itself counted. */
	ck_assert_int_eq(abuse_rows(), 6);
	/* The same client key for another account, the same account from
	 * another client key: both limited. */
	ck_assert_int_eq(redeem_word_from(code, "y@example.com", "203.0.113.9"),
	    ERROR_RATE_LIMITED);
	ck_assert_int_eq(
	    redeem_word_from(code, "X@Example.com", "203.0.113.10"),
	    ERROR_RATE_LIMITED);
	/* Neither: redeems. */
	redeem_fresh(code, "z@example.com", &res);
	ck_assert_int_eq(redemptions(), 1);
	fx_verify_clean();
}
END_TEST

/* The per-account limit holds across client keys (a botnet guessing for
 * one account), and without one (the operator's tool). */
START_TEST(test_redeem_rate_limited_account_across_clients)
{
	char code[96], unknown[CODE_MAX + 1], disp[CODE_DISPLAY_MAX];
	char client[32];
	int i;

	abuse_limit(3);
	one_code("spring", 10, code);
	ck_assert_int_eq(codetext_generate("", 8, 1, unknown, disp), 0);
	for (i = 0; i < 3; i++) {
		snprintf(client, sizeof(client), "192.0.2.%d", i + 1);
		ck_assert_int_eq(
		    redeem_word_from(disp, "x@example.com", client),
		    ERROR_INVALID);
	}
	ck_assert_int_eq(redeem_word_from(code, "x@example.com", "192.0.2.99"),
	    ERROR_RATE_LIMITED);
	ck_assert_int_eq(
	    redeem_word_from(code, "x@example.com", NULL), ERROR_RATE_LIMITED);
	/* Each client key has one failure: still allowed. */
	ck_assert_int_eq(
	    redeem_word_from(code, "w@example.com", "192.0.2.1"), ERROR_NONE);
	fx_verify_clean();
}
END_TEST

/* Every counted word counts: invalid, expired, revoked, ineligible. */
START_TEST(test_redeem_rate_limited_counted_words)
{
	struct redeem_result res;
	struct code_info ci;
	struct campaign k;
	char codes[4][96], good[96], unknown[CODE_MAX + 1];
	char disp[CODE_DISPLAY_MAX], account[64], client[32];
	static const enum error_word want[] = {
	    ERROR_INVALID, ERROR_EXPIRED, ERROR_REVOKED, ERROR_INELIGIBLE};
	size_t i;
	int j;

	abuse_limit(3);
	ck_assert_int_eq(codetext_generate("", 8, 1, unknown, disp), 0);
	snprintf(codes[0], sizeof(codes[0]), "%s", disp);
	one_code("expiring", 5, codes[1]);
	expire_all_codes();
	one_code("revoking", 5, codes[2]);
	ck_assert_int_eq(code_revoke(&fx.svc, codes[2], &ci), ERROR_NONE);
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "later");
	k.starts_at = (int64_t)time(NULL) + 3600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	fx_codes("later", 1, 5, &codes[3]);
	one_code("good", 50, good);
	for (i = 0; i < NELEM(want); i++) {
		snprintf(account, sizeof(account), "a%zu@example.com", i);
		snprintf(client, sizeof(client), "192.0.2.%zu", i + 1);
		for (j = 0; j < 3; j++)
			ck_assert_int_eq(
			    redeem_word_from(codes[i], account, client),
			    want[i]);
		ck_assert_int_eq(
		    redeem_code(&fx.svc, good, account, client, &res), 0);
		ck_assert_msg(res.error == ERROR_RATE_LIMITED,
		    "after 3 x %s: %s", error_name(want[i]),
		    error_name(res.error));
	}
	fx_verify_clean();
}
END_TEST

/* Losing a race is not guessing: exhausted is not counted, nor is a
 * malformed request. */
START_TEST(test_redeem_rate_limit_ignores_exhausted)
{
	struct redeem_result res;
	char code[96], other[96];
	int i;

	abuse_limit(3);
	one_code("spring", 1, code);
	one_code("summer", 1, other);
	redeem_fresh(code, "a@example.com", &res);
	for (i = 0; i < 6; i++)
		ck_assert_int_eq(
		    redeem_word_from(code, "b@example.com", "203.0.113.9"),
		    ERROR_EXHAUSTED);
	for (i = 0; i < 6; i++)
		ck_assert_int_eq(redeem_word_from("\xff\xfe", "b@example.com",
				     "203.0.113.9"),
		    ERROR_BAD_REQUEST);
	ck_assert_int_eq(abuse_rows(), 0);
	redeem_fresh(other, "b@example.com", &res);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_bad_request_account)
{
	char long_account[300], max_account[300], code[96];
	struct redeem_result res;
	size_t i;
	const char *bad[] = {
	    NULL, "", "\0a@example.com", /* an embedded NUL ends the string */
	    " ", " \t \t", long_account, /* 255 bytes */
	    "\xff@example.com", "a@example.\xc3", /* truncated sequence */
	    "\xc0\xaf@example.com",               /* overlong encoding */
	    "\xed\xa0\x80@example.com",           /* a surrogate */
	    "a\x01@example.com", "a\x7f@example.com", "a\n@example.com",
	    "a\tb@example.com", "\xc2\x85@example.com", /* a C1 control */
	};

	memset(long_account, 'a', 255);
	long_account[255] = '\0';
	one_code("spring", 5, code);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_eq(
		    redeem_code(&fx.svc, code, bad[i], CLIENT, &res), 0);
		ck_assert_msg(res.error == ERROR_BAD_REQUEST, "account %zu: %s",
		    i, error_name(res.error));
	}
	fx_assert_code(code, "active", 0);
	ck_assert_int_eq(abuse_rows(), 0);
	/* The boundary: 254 bytes is an account, UTF-8 too. */
	memset(max_account, 'b', 254);
	max_account[254] = '\0';
	redeem_fresh(code, max_account, &res);
	ck_assert_str_eq(res.r.account, max_account);
	redeem_fresh(code, "j\xc3\xb6rg@example.com", &res);
	redeem_fresh(code, "jorg@example.com", &res);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_bad_request_code)
{
	char too_long[200], too_long_norm[80], max_raw[200], code[96];
	struct redeem_result res;
	size_t i;
	const char *bad[] = {
	    NULL,
	    "",
	    "\0K7PQ",
	    " ",
	    " - - ",
	    too_long,      /* 129 raw characters */
	    too_long_norm, /* 65 after normalization */
	    "\xff\xfe",
	    "K7PQ\xc3",
	    "\xc0\xaf",
	    "K7PQ\x01XM3D",
	    "K7PQ\nXM3D",
	    "K7PQ\x7f",
	};

	one_code("spring", 5, code);
	/* Spaces are dropped, so the raw limit is what fails here. */
	memset(too_long, ' ', 129);
	memcpy(too_long, code, strlen(code));
	too_long[129] = '\0';
	memset(too_long_norm, 'A', 65);
	too_long_norm[65] = '\0';
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_eq(
		    redeem_code(&fx.svc, bad[i], "a@example.com", CLIENT, &res),
		    0);
		ck_assert_msg(res.error == ERROR_BAD_REQUEST, "code %zu: %s", i,
		    error_name(res.error));
	}
	fx_assert_code(code, "active", 0);
	ck_assert_int_eq(abuse_rows(), 0);
	/* The boundary: 128 raw characters redeem. */
	memset(max_raw, ' ', 128);
	memcpy(max_raw, code, strlen(code));
	max_raw[128] = '\0';
	redeem_fresh(max_raw, "a@example.com", &res);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_bad_request_client)
{
	char long_client[300], code[96];
	struct redeem_result res;
	size_t i;
	const char *bad[] = {
	    long_client, /* 255 bytes */
	    "\xff",
	    "10.0.0.1\x01",
	    "\xc3",
	};

	memset(long_client, '1', 255);
	long_client[255] = '\0';
	one_code("spring", 5, code);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_eq(
		    redeem_code(&fx.svc, code, "a@example.com", bad[i], &res),
		    0);
		ck_assert_msg(res.error == ERROR_BAD_REQUEST, "client %zu: %s",
		    i, error_name(res.error));
	}
	fx_assert_code(code, "active", 0);
	long_client[254] = '\0';
	ck_assert_int_eq(
	    redeem_word_from(code, "a@example.com", long_client), ERROR_NONE);
	fx_verify_clean();
}
END_TEST

/* G3: a retry returns the first redemption whatever happened since. */
START_TEST(test_redeem_replay_after_revoke_expiry_close)
{
	struct redeem_result first[3], res;
	struct code_info ci;
	struct campaign k;
	char codes[3][96], sql[128];
	int i;

	fx_campaign("c0", 0, 0, 0);
	fx_campaign("c1", 0, 0, 0);
	fx_campaign("c2", 0, 0, 0);
	fx_codes("c0", 1, 1, &codes[0]);
	fx_codes("c1", 1, 2, &codes[1]);
	fx_codes("c2", 1, 2, &codes[2]);
	for (i = 0; i < 3; i++)
		redeem_fresh(codes[i], "a@example.com", &first[i]);
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "revoked");
	snprintf(sql, sizeof(sql),
	    "UPDATE codes SET expires_at = 1 WHERE "
	    "id = %lld",
	    (long long)first[1].r.code_id);
	fx_sql(sql);
	ck_assert_int_eq(campaign_close(&fx.svc, "c2", &k), ERROR_NONE);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(redeem_code(&fx.svc, codes[i], "a@example.com",
				     CLIENT, &res),
		    0);
		ck_assert_msg(res.error == ERROR_NONE, "code %d: %s", i,
		    error_name(res.error));
		ck_assert_int_eq(res.already, 1);
		assert_same_redemption(&res.r, &first[i].r);
	}
	/* Others get the word. */
	ck_assert_int_eq(redeem_word(codes[0], "b@example.com"), ERROR_REVOKED);
	ck_assert_int_eq(redeem_word(codes[1], "b@example.com"), ERROR_EXPIRED);
	ck_assert_int_eq(redeem_word(codes[2], "b@example.com"), ERROR_REVOKED);
	ck_assert_int_eq(redeemed_events(), 3);
	fx_verify_clean();
}
END_TEST

START_TEST(test_redeem_seq_increases)
{
	struct redeem_result res;
	char codes[4][96], account[64];
	int64_t last = 0, last_id = 0;
	int i, j;

	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 4, 3, codes);
	for (i = 0; i < 4; i++)
		for (j = 0; j < 3; j++) {
			snprintf(
			    account, sizeof(account), "u%d@example.com", j);
			redeem_fresh(codes[i], account, &res);
			ck_assert_int_gt(res.r.seq, last);
			ck_assert_int_gt(res.r.id, last_id);
			last = res.r.seq;
			last_id = res.r.id;
			/* A replay or a failure takes no number. */
			ck_assert_int_eq(redeem_code(&fx.svc, codes[i], account,
					     CLIENT, &res),
			    0);
			ck_assert_int_eq(res.already, 1);
			ck_assert_int_eq(res.r.seq, last);
		}
	ck_assert_int_eq(
	    redeem_word(codes[0], "late@example.com"), ERROR_EXHAUSTED);
	one_code("summer", 1, codes[0]);
	redeem_fresh(codes[0], "late@example.com", &res);
	ck_assert_int_gt(res.r.seq, last);
	ck_assert_int_eq(redeemed_events(), 13);
	fx_verify_clean();
}
END_TEST

/* G7: one event per fresh redemption, none for a replay or a failure. */
START_TEST(test_redeem_outbox_one_event)
{
	struct redeem_result res;
	char codes[3][96];
	int i;

	fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", 3, 2, codes);
	ck_assert_int_eq(redeemed_events(), 0);
	for (i = 0; i < 3; i++) {
		redeem_fresh(codes[i], "a@example.com", &res);
		ck_assert_int_eq(redeemed_events(), i + 1);
		ck_assert_int_eq(redeem_code(&fx.svc, codes[i], "A@example.com",
				     CLIENT, &res),
		    0);
		ck_assert_int_eq(res.already, 1);
		ck_assert_int_eq(redeemed_events(), i + 1);
		fx_verify_clean();
	}
	redeem_fresh(codes[0], "b@example.com", &res);
	ck_assert_int_eq(
	    redeem_word(codes[0], "c@example.com"), ERROR_EXHAUSTED);
	ck_assert_int_eq(redeemed_events(), 4);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM events"), 4);
	fx_verify_clean();
}
END_TEST

/* Every query is scoped by tenant: another tenant's code is unknown. */
START_TEST(test_redeem_tenant_scoped)
{
	struct redeem_result res;
	struct svc other;
	char code[96];

	one_code("spring", 5, code);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(
	    redeem_code(&other, code, "a@example.com", CLIENT, &res), 0);
	ck_assert_int_eq(res.error, ERROR_INVALID);
	fx_assert_code(code, "active", 0);
	/* Nor is the default tenant's redemption found from there. */
	redeem_fresh(code, "a@example.com", &res);
	ck_assert_int_eq(redeem_get(&other, res.r.id, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NOT_FOUND);
	fx_verify_clean();
}
END_TEST

Suite *
suite_redeem(void)
{
	Suite *s = suite_create("redeem");
	TCase *tc = tcase_create("redeem");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_redeem_fresh);
	tcase_add_test(tc, test_redeem_fresh_canonical_account);
	tcase_add_test(tc, test_redeem_replay);
	tcase_add_test(tc, test_redeem_single_use_redeemed);
	tcase_add_test(tc, test_redeem_multi_use_state_machine);
	tcase_add_test(tc, test_redeem_invalid);
	tcase_add_test(tc, test_redeem_invalid_check_char_before_lookup);
	tcase_add_test(tc, test_redeem_unchecked_codes_redeem);
	tcase_add_test(tc, test_redeem_expired_code);
	tcase_add_test(tc, test_redeem_expired_campaign);
	tcase_add_test(tc, test_redeem_revoked_code);
	tcase_add_test(tc, test_redeem_revoked_campaign_closed);
	tcase_add_test(tc, test_redeem_ineligible_not_started);
	tcase_add_test(tc, test_redeem_window_open);
	tcase_add_test(tc, test_redeem_ineligible_account_limit);
	tcase_add_test(tc, test_redeem_exhausted_no_seat);
	tcase_add_test(tc, test_redeem_exhausted_budget);
	tcase_add_test(tc, test_redeem_rate_limited);
	tcase_add_test(tc, test_redeem_rate_limited_account_across_clients);
	tcase_add_test(tc, test_redeem_rate_limited_counted_words);
	tcase_add_test(tc, test_redeem_rate_limit_ignores_exhausted);
	tcase_add_test(tc, test_redeem_bad_request_account);
	tcase_add_test(tc, test_redeem_bad_request_code);
	tcase_add_test(tc, test_redeem_bad_request_client);
	tcase_add_test(tc, test_redeem_replay_after_revoke_expiry_close);
	tcase_add_test(tc, test_redeem_seq_increases);
	tcase_add_test(tc, test_redeem_outbox_one_event);
	tcase_add_test(tc, test_redeem_tenant_scoped);
	suite_add_tcase(s, tc);
	return s;
}
