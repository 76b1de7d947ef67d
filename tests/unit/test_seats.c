/*
 * A hot code's seats split over counter rows (seats.c): the layout, a
 * split code redeemed to the last seat and given seats back, holds on
 * it, and verify catching a broken split. Races on split codes: the race
 * suites run again with every code split (REDEEM_SPLIT_MIN_USES=2, see
 * tests/run-all.sh), and test_seats_race below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../app/core/codes.h"
#include "../../app/core/holds.h"
#include "../../app/core/redeem.h"
#include "../../app/core/seats.h"
#include "../../app/core/verify.h"
#include "fixture.h"

/* One code of campaign "tv" with max_uses over `shards` rows. */
/* One code of campaign "tv" with max_uses over `shards` rows. */
static void
split_code(int64_t max_uses, int shards, char *out)
{
	struct codes_gen g;
	struct db_stmt *st;
	int64_t created;

	memset(&g, 0, sizeof(g));
	g.campaign = "tv";
	g.count = 1;
	g.max_uses = max_uses;
	g.shards = shards;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 1);
	/* The one code's text, read back through the export. */
	ck_assert_int_eq(
	    db_query(fx.db, STMT_CODES_EXPORT_ALL, &st, "iiii",
		fx.svc.tenant_id, (int64_t)0, (int64_t)0, (int64_t)0),
	    DB_ROW);
	snprintf(out, 96, "%s", db_col_text(st, 1));
	db_reset(st);
}

static void
redeem_ok(const char *code, const char *account)
{
	struct redeem_result r;

	ck_assert_int_eq(redeem_code(&fx.svc, code, account, NULL, &r), 0);
	ck_assert_msg(
	    r.error == ERROR_NONE, "%s: %s", account, error_name(r.error));
	ck_assert_int_eq(r.already, 0);
}

START_TEST(test_seats_layout)
{
	char code[96];

	fx_campaign("tv", 0, 0, 0);
	split_code(10, 4, code);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM code_shards"), 4);
	ck_assert_int_eq(fx_count("SELECT SUM(max_uses) FROM code_shards"), 10);
	/* 10 over 4: 3, 3, 2, 2. */
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM code_shards WHERE "
				  "shard < 2 AND max_uses = 3"),
	    2);
	ck_assert_int_eq(fx_count("SELECT shards FROM codes"), 4);
	fx_assert_code(code, "active", 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_seats_by_settings)
{
	struct svc_config c;

	memset(&c, 0, sizeof(c));
	c.split_min_uses = 1000;
	c.split_shards = 16;
	ck_assert_int_eq(seats_shards_for(&c, 0, 999), 1);
	ck_assert_int_eq(seats_shards_for(&c, 0, 1000), 16);
	ck_assert_int_eq(seats_shards_for(&c, 1, 5000), 1);
	ck_assert_int_eq(seats_shards_for(&c, 8, 5000), 8);
	ck_assert_int_eq(seats_shards_for(&c, 8, 3), 3);
	ck_assert_int_eq(
	    seats_shards_for(&c, 100000, 1000000), SEATS_SHARDS_MAX);
	c.split_min_uses = 0; /* never */
	ck_assert_int_eq(seats_shards_for(&c, 0, 1000000), 1);
}
END_TEST

START_TEST(test_seats_redeem_to_the_last)
{
	struct redeem_result r, v;
	char code[96], acct[64];
	int i;

	fx_campaign("tv", 0, 0, 0);
	split_code(10, 4, code);
	for (i = 0; i < 10; i++) {
		snprintf(acct, sizeof(acct), "u%d@example.com", i);
		redeem_ok(code, acct);
		fx_assert_code(code, i == 9 ? "exhausted" : "active", i + 1);
		fx_verify_clean();
	}
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM code_shards WHERE "
				  "uses = max_uses"),
	    4);
	ck_assert_int_eq(
	    redeem_code(&fx.svc, code, "late@example.com", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_EXHAUSTED);
	/* A replay still answers the first redemption. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, code, "u3@example.com", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	ck_assert_int_eq(r.already, 1);
	/* A seat given back re-opens the code, and is taken again. */
	ck_assert_int_eq(
	    redeem_reverse(&fx.svc, r.r.id, "refund", REVERSAL_RETURN_SEAT, &v),
	    0);
	ck_assert_int_eq(v.error, ERROR_NONE);
	fx_assert_code(code, "active", 9);
	fx_verify_clean();
	redeem_ok(code, "late@example.com");
	fx_assert_code(code, "exhausted", 10);
	fx_verify_clean();
	/* keep_seat gives nothing back. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, code, "u4@example.com", NULL, &r), 0);
	ck_assert_int_eq(redeem_reverse(&fx.svc, r.r.id, "chargeback",
			     REVERSAL_KEEP_SEAT, &v),
	    0);
	fx_assert_code(code, "exhausted", 10);
	fx_verify_clean();
}
END_TEST

START_TEST(test_seats_revoked)
{
	struct redeem_result r;
	struct code_info ci;
	char code[96];

	fx_campaign("tv", 0, 0, 0);
	split_code(100, 8, code);
	redeem_ok(code, "a@example.com");
	ck_assert_int_eq(code_revoke(&fx.svc, code, &ci), ERROR_NONE);
	ck_assert_int_eq(
	    redeem_code(&fx.svc, code, "b@example.com", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_REVOKED);
	fx_assert_code(code, "revoked", 1);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM code_shards WHERE active = 0"), 8);
	fx_verify_clean();
	/* A row left claimable under a revoked code. */
	fx_sql("UPDATE code_shards SET active = 1 WHERE shard = 3");
	fx_verify_only(VERIFY_G1_SPLIT, 1);
}
END_TEST

START_TEST(test_seats_holds)
{
	struct hold_result h;
	struct redeem_result r;
	char code[96], xid[32], acct[64];
	int i;

	fx_campaign("tv", 0, 0, 0);
	split_code(3, 3, code);
	for (i = 0; i < 3; i++) {
		snprintf(xid, sizeof(xid), "h%d", i);
		snprintf(acct, sizeof(acct), "h%d@example.com", i);
		ck_assert_int_eq(
		    hold_create(&fx.svc, code, acct, xid, 60, NULL, &h), 0);
		ck_assert_int_eq(h.error, ERROR_NONE);
		/* Fencing tokens come from the code's counter, in order. */
		ck_assert_int_eq(h.h.fencing_token, i + 1);
	}
	fx_assert_code(code, "exhausted", 3);
	fx_verify_clean();
	ck_assert_int_eq(
	    hold_create(&fx.svc, code, "x@example.com", "h9", 60, NULL, &h), 0);
	ck_assert_int_eq(h.error, ERROR_EXHAUSTED);
	ck_assert_int_eq(hold_release(&fx.svc, "h1", &h), 0);
	fx_assert_code(code, "active", 2);
	fx_verify_clean();
	ck_assert_int_eq(hold_confirm(&fx.svc, "h0", &r, NULL), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	fx_assert_code(code, "active", 2);
	redeem_ok(code, "y@example.com");
	fx_assert_code(code, "exhausted", 3);
	fx_verify_clean();
}
END_TEST

/* A split code's numbers come from the connection's reserved block: in
 * order, without the tenant's counter row in the claim; a one-row code's
 * next number comes after the block. */
START_TEST(test_seats_seq_block)
{
	struct redeem_result r;
	char code[96], one[1][96], acct[64];
	int64_t first = 0;
	int i;

	fx_campaign("tv", 0, 0, 0);
	split_code(100, 4, code);
	for (i = 0; i < 5; i++) {
		snprintf(acct, sizeof(acct), "s%d@example.com", i);
		ck_assert_int_eq(redeem_code(&fx.svc, code, acct, NULL, &r), 0);
		ck_assert_int_eq(r.error, ERROR_NONE);
		if (i == 0)
			first = r.r.seq;
		ck_assert_int_eq(r.r.seq, first + i);
	}
	fx_codes("tv", 1, 5, one);
	ck_assert_int_eq(
	    redeem_code(&fx.svc, one[0], "s0@example.com", NULL, &r), 0);
	ck_assert_int_eq(r.error, ERROR_NONE);
	ck_assert_int_ge(r.r.seq, first + 64);
	/* A retry answers the number first given. */
	ck_assert_int_eq(
	    redeem_code(&fx.svc, code, "s2@example.com", NULL, &r), 0);
	ck_assert_int_eq(r.already, 1);
	ck_assert_int_eq(r.r.seq, first + 2);
	fx_verify_clean();
}
END_TEST

/* REDEEM_DB_RTT_US: every statement, begin and commit waits that long
 * (bench's emulated network); 0 waits nothing. */
START_TEST(test_seats_rtt)
{
	struct timespec a, b;
	struct db_stmt *st;
	struct db *db;
	double ms;
	int i;

	setenv("REDEEM_DB_RTT_US", "20000", 1);
	db = fx_connect();
	unsetenv("REDEEM_DB_RTT_US");
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(db_query(db, STMT_NOW, &st, ""), DB_ROW);
		db_reset(st);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
	     (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	ck_assert_msg(ms >= 100, "5 statements in %.1f ms", ms);
	db_close(db);
}
END_TEST

START_TEST(test_seats_verify_catches)
{
	char code[96];

	fx_campaign("tv", 0, 0, 0);
	split_code(10, 4, code);
	redeem_ok(code, "a@example.com");
	/* A row's seats no longer summing to the code's. */
	fx_sql("UPDATE code_shards SET max_uses = max_uses + 1 "
	       "WHERE shard = 0");
	fx_verify_only(VERIFY_G1_SPLIT, 1);
	fx_sql("UPDATE code_shards SET max_uses = max_uses - 1 "
	       "WHERE shard = 0");
	fx_verify_clean();
	/* A seat taken on a row without its redemption: G2 counts rows. */
	fx_sql("UPDATE code_shards SET uses = uses + 1 WHERE shard = 1");
	fx_verify_only(VERIFY_G2_CONSERVATION, 1);
}
END_TEST

Suite *
suite_seats(void)
{
	Suite *s = suite_create("seats");
	TCase *tc = tcase_create("split");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_seats_layout);
	tcase_add_test(tc, test_seats_by_settings);
	tcase_add_test(tc, test_seats_redeem_to_the_last);
	tcase_add_test(tc, test_seats_revoked);
	tcase_add_test(tc, test_seats_holds);
	tcase_add_test(tc, test_seats_verify_catches);
	tcase_add_test(tc, test_seats_seq_block);
	tcase_add_test(tc, test_seats_rtt);
	suite_add_tcase(s, tc);
	return s;
}
