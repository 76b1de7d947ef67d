/* app/core/campaigns.c and the tenants of svc.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "../../app/lib/str.h"
#include "fixture.h"

static void
campaign_init(struct campaign *k, const char *name, enum campaign_kind kind)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->kind = kind;
}

START_TEST(test_campaigns_create_shared)
{
	struct campaign k, got;
	int64_t now = (int64_t)time(NULL);

	campaign_init(&k, "spring-2026", CAMPAIGN_SHARED);
	k.starts_at = 1795341600;
	k.ends_at = 1795341600 + 86400;
	k.budget = 100;
	k.per_account_limit = 2;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	/* The row comes back in k. */
	ck_assert_int_gt(k.id, 0);
	ck_assert_int_ge(k.created_at, now - 5);
	ck_assert_int_eq(
	    campaign_get(&fx.svc, "spring-2026", &got), ERROR_NONE);
	ck_assert_int_eq(got.id, k.id);
	ck_assert_str_eq(got.name, "spring-2026");
	ck_assert_int_eq(got.kind, CAMPAIGN_SHARED);
	ck_assert_int_eq(got.closed, 0);
	ck_assert_int_eq(got.starts_at, 1795341600);
	ck_assert_int_eq(got.ends_at, 1795341600 + 86400);
	ck_assert_int_eq(got.budget, 100);
	ck_assert_int_eq(got.redeemed, 0);
	ck_assert_int_eq(got.per_account_limit, 2);
	ck_assert_int_eq(got.closed_at, 0);
	ck_assert_int_eq(got.created_at, k.created_at);
}
END_TEST

START_TEST(test_campaigns_create_pool)
{
	struct campaign k, got;

	campaign_init(&k, "Pool_1.x", CAMPAIGN_POOL);
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	ck_assert_int_eq(campaign_get(&fx.svc, "Pool_1.x", &got), ERROR_NONE);
	ck_assert_int_eq(got.kind, CAMPAIGN_POOL);
	/* No window, budget or limit: all "none". */
	ck_assert_int_eq(got.starts_at, 0);
	ck_assert_int_eq(got.ends_at, 0);
	ck_assert_int_eq(got.budget, 0);
	ck_assert_int_eq(got.per_account_limit, 0);
	/* Names are case-sensitive: another campaign. */
	ck_assert_int_eq(
	    campaign_get(&fx.svc, "pool_1.x", &got), ERROR_NOT_FOUND);
}
END_TEST

START_TEST(test_campaigns_duplicate_conflict)
{
	struct campaign k, got;

	campaign_init(&k, "promo", CAMPAIGN_SHARED);
	k.budget = 5;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	/* Same name, other settings or kind: still a conflict, and the
	 * first campaign is unchanged. */
	campaign_init(&k, "promo", CAMPAIGN_POOL);
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_CONFLICT);
	campaign_init(&k, "promo", CAMPAIGN_SHARED);
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_CONFLICT);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &got), ERROR_NONE);
	ck_assert_int_eq(got.kind, CAMPAIGN_SHARED);
	ck_assert_int_eq(got.budget, 5);
}
END_TEST

static int n_listed;

static void
count_campaign(void *arg, const struct campaign *c)
{
	(void)arg;
	(void)c;
	n_listed++;
}

START_TEST(test_campaigns_bad_names)
{
	static const char *const bad[] = {
	    "",
	    " ",
	    "a b",
	    " promo",
	    "promo ",
	    "../x",
	    "a/b",
	    "a\\b",
	    "a'b",
	    "a;b",
	    "a%b",
	    "promo\n",
	    "tab\there",
	    "\x01",
	    "caf\xc3\xa9",      /* UTF-8 */
	    "\xf0\x9f\x98\x80", /* emoji */
	    "\xff",
	};
	char sixty_four[CAMPAIGN_NAME_MAX + 1], too_long[CAMPAIGN_NAME_MAX + 2];
	struct campaign k;
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		campaign_init(&k, bad[i], CAMPAIGN_SHARED);
		ck_assert_msg(campaign_create(&fx.svc, &k) == ERROR_BAD_REQUEST,
		    "bad[%zu] created", i);
		ck_assert_int_eq(campaign_name_ok(bad[i]), 0);
		ck_assert_int_eq(
		    campaign_get(&fx.svc, bad[i], &k), ERROR_NOT_FOUND);
	}
	/* 64 characters are the most; 65 do not even fit struct campaign,
	 * so they are refused by every lookup. */
	memset(sixty_four, 'n', CAMPAIGN_NAME_MAX);
	sixty_four[CAMPAIGN_NAME_MAX] = '\0';
	memset(too_long, 'n', CAMPAIGN_NAME_MAX + 1);
	too_long[CAMPAIGN_NAME_MAX + 1] = '\0';
	ck_assert_int_eq(campaign_name_ok(too_long), 0);
	ck_assert_int_eq(campaign_get(&fx.svc, too_long, &k), ERROR_NOT_FOUND);
	ck_assert_int_eq(
	    campaign_close(&fx.svc, too_long, &k), ERROR_NOT_FOUND);
	campaign_init(&k, sixty_four, CAMPAIGN_SHARED);
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	ck_assert_int_eq(campaign_get(&fx.svc, sixty_four, &k), ERROR_NONE);
	ck_assert_str_eq(k.name, sixty_four);
	/* Only the good one exists. */
	n_listed = 0;
	ck_assert_int_eq(
	    campaign_list(&fx.svc, count_campaign, NULL), ERROR_NONE);
	ck_assert_int_eq(n_listed, 1);
}
END_TEST

START_TEST(test_campaigns_bad_fields)
{
	struct campaign k;
	int i;

	for (i = 0; i < 8; i++) {
		campaign_init(&k, "promo", CAMPAIGN_SHARED);
		switch (i) {
		case 0:
			k.budget = -1;
			break;
		case 1:
			k.per_account_limit = -1;
			break;
		case 2:
			k.starts_at = -1;
			break;
		case 3:
			k.ends_at = -1;
			break;
		case 4: /* ends before it starts */
			k.starts_at = 1795341600;
			k.ends_at = 1795341600 - 1;
			break;
		case 5: /* an empty window */
			k.starts_at = 1795341600;
			k.ends_at = 1795341600;
			break;
		case 6:
			k.kind = CAMPAIGN__MAX;
			break;
		case 7:
			k.kind = (enum campaign_kind) - 1;
			break;
		}
		ck_assert_msg(campaign_create(&fx.svc, &k) == ERROR_BAD_REQUEST,
		    "case %d created", i);
	}
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &k), ERROR_NOT_FOUND);
	/* Either end alone is fine. */
	campaign_init(&k, "ends-only", CAMPAIGN_SHARED);
	k.ends_at = 1795341600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	campaign_init(&k, "starts-only", CAMPAIGN_SHARED);
	k.starts_at = 1795341600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
}
END_TEST

START_TEST(test_campaigns_get_unknown)
{
	struct campaign k;

	ck_assert_int_eq(campaign_get(&fx.svc, "nope", &k), ERROR_NOT_FOUND);
	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo2", &k), ERROR_NOT_FOUND);
	ck_assert_int_eq(campaign_get(&fx.svc, "Promo", &k), ERROR_NOT_FOUND);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &k), ERROR_NONE);
}
END_TEST

START_TEST(test_campaigns_close_idempotent)
{
	struct campaign k, again;
	struct redeem_result res;
	char codes[1][96];

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 1, 5, codes);
	ck_assert_int_eq(campaign_close(&fx.svc, "promo", &k), ERROR_NONE);
	ck_assert_int_eq(k.closed, 1);
	ck_assert_int_gt(k.closed_at, 0);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &again), ERROR_NONE);
	ck_assert_int_eq(again.closed, 1);
	ck_assert_int_eq(again.closed_at, k.closed_at);
	/* Again: no error, nothing changes (an old closed_at shows that the
	 * second close did not write it again within the same second). */
	fx_sql("UPDATE campaigns SET closed_at = 1000 WHERE name = 'promo'");
	ck_assert_int_eq(campaign_close(&fx.svc, "promo", &again), ERROR_NONE);
	ck_assert_int_eq(again.closed, 1);
	ck_assert_int_eq(again.closed_at, 1000);
	/* Visible where it matters: its codes no longer redeem. */
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_REVOKED);
	ck_assert_int_eq(campaign_close(&fx.svc, "nope", &k), ERROR_NOT_FOUND);
	fx_verify_clean();
}
END_TEST

struct listed {
	int n;
	struct campaign c[8];
};

static void
collect(void *arg, const struct campaign *c)
{
	struct listed *l = arg;

	ck_assert_int_lt(l->n, 8);
	l->c[l->n++] = *c;
}

START_TEST(test_campaigns_list_order_and_counts)
{
	struct listed l;
	struct redeem_result res;
	char codes[3][96];

	/* Byte order on both engines: upper case first. */
	fx_campaign("zeta", 0, 0, 0);
	fx_campaign("alpha", 0, 10, 0);
	fx_campaign("Mid", 1, 0, 0);
	fx_codes("alpha", 3, 2, codes);
	fx_codes("zeta", 1, 1, NULL);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "b@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[1], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(campaign_list(&fx.svc, collect, &l), ERROR_NONE);
	ck_assert_int_eq(l.n, 3);
	ck_assert_str_eq(l.c[0].name, "Mid");
	ck_assert_str_eq(l.c[1].name, "alpha");
	ck_assert_str_eq(l.c[2].name, "zeta");
	ck_assert_int_eq(l.c[0].kind, CAMPAIGN_POOL);
	ck_assert_int_eq(l.c[0].codes, 0);
	ck_assert_int_eq(l.c[0].uses, 0);
	ck_assert_int_eq(l.c[1].codes, 3);
	ck_assert_int_eq(l.c[1].uses, 3);
	ck_assert_int_eq(l.c[1].budget, 10);
	ck_assert_int_eq(l.c[1].redeemed, 3);
	ck_assert_int_eq(l.c[2].codes, 1);
	ck_assert_int_eq(l.c[2].uses, 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_campaigns_list_empty)
{
	n_listed = 0;
	ck_assert_int_eq(
	    campaign_list(&fx.svc, count_campaign, NULL), ERROR_NONE);
	ck_assert_int_eq(n_listed, 0);
}
END_TEST

START_TEST(test_campaigns_json)
{
	struct campaign k;
	json_t *o;

	campaign_init(&k, "promo", CAMPAIGN_POOL);
	k.budget = 7;
	k.ends_at = 1795341600;
	ck_assert_int_eq(campaign_create(&fx.svc, &k), ERROR_NONE);
	o = campaign_json(&k);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "name")), "promo");
	ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "pool");
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "state")), "open");
	ck_assert_str_eq(json_string_value(json_object_get(o, "ends_at")),
	    "2026-11-22T10:00:00Z");
	ck_assert(json_is_null(json_object_get(o, "starts_at")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "budget")), 7);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(o, "budget_used")), 0);
	ck_assert(json_is_null(json_object_get(o, "per_account_limit")));
	json_decref(o);
}
END_TEST

START_TEST(test_campaigns_kind_names)
{
	enum campaign_kind kind;

	ck_assert_str_eq(campaign_kind_name(CAMPAIGN_SHARED), "shared");
	ck_assert_str_eq(campaign_kind_name(CAMPAIGN_POOL), "pool");
	ck_assert_str_eq(campaign_kind_name(CAMPAIGN__MAX), "?");
	ck_assert_int_eq(campaign_kind_parse("pool", &kind), 0);
	ck_assert_int_eq(kind, CAMPAIGN_POOL);
	ck_assert_int_eq(campaign_kind_parse("shared", &kind), 0);
	ck_assert_int_eq(kind, CAMPAIGN_SHARED);
	ck_assert_int_eq(campaign_kind_parse("Pool", &kind), -1);
	ck_assert_int_eq(campaign_kind_parse("", &kind), -1);
}
END_TEST

START_TEST(test_campaigns_tenant_create)
{
	static const char *const bad[] = {
	    "", "a b", "../x", "caf\xc3\xa9", "x\n"};
	char too_long[66];
	struct svc other;
	size_t i;

	ck_assert_int_eq(tenant_create(fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(tenant_create(fx.db, "acme"), ERROR_CONFLICT);
	ck_assert_int_eq(tenant_create(fx.db, "default"), ERROR_CONFLICT);
	for (i = 0; i < NELEM(bad); i++)
		ck_assert_int_eq(
		    tenant_create(fx.db, bad[i]), ERROR_BAD_REQUEST);
	memset(too_long, 't', 65);
	too_long[65] = '\0';
	ck_assert_int_eq(tenant_create(fx.db, too_long), ERROR_BAD_REQUEST);
	too_long[64] = '\0';
	ck_assert_int_eq(tenant_create(fx.db, too_long), ERROR_NONE);

	ck_assert_int_eq(svc_open(&other, fx.db, "acme"), ERROR_NONE);
	ck_assert_int_gt(other.tenant_id, 0);
	ck_assert_int_ne(other.tenant_id, fx.svc.tenant_id);
	ck_assert_str_eq(other.tenant, "acme");
	ck_assert_int_eq(other.unchecked_codes, 0);
	ck_assert_int_eq(svc_open(&other, fx.db, "nobody"), ERROR_NOT_FOUND);
	ck_assert_int_eq(svc_open(&other, fx.db, ""), ERROR_NOT_FOUND);
	ck_assert_int_eq(svc_open(&other, fx.db, "a b"), ERROR_NOT_FOUND);
}
END_TEST

/* Every query is scoped by tenant: another tenant sees nothing of
 * "default", and may reuse its names. */
START_TEST(test_campaigns_tenant_scoping)
{
	struct svc other;
	struct campaign k;
	struct code_info ci;
	struct redeem_result res;
	char codes[1][96];

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 1, 5, codes);
	ck_assert_int_eq(tenant_create(fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "acme"), ERROR_NONE);

	ck_assert_int_eq(campaign_get(&other, "promo", &k), ERROR_NOT_FOUND);
	n_listed = 0;
	ck_assert_int_eq(
	    campaign_list(&other, count_campaign, NULL), ERROR_NONE);
	ck_assert_int_eq(n_listed, 0);
	ck_assert_int_eq(code_get(&other, codes[0], &ci), ERROR_NOT_FOUND);
	ck_assert_int_eq(redeem_code(&other, codes[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_INVALID);
	/* Closing by name in the other tenant does not touch ours. */
	ck_assert_int_eq(campaign_close(&other, "promo", &k), ERROR_NOT_FOUND);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &k), ERROR_NONE);
	ck_assert_int_eq(k.closed, 0);

	/* The same name in the other tenant is another campaign. */
	campaign_init(&k, "promo", CAMPAIGN_POOL);
	ck_assert_int_eq(campaign_create(&other, &k), ERROR_NONE);
	ck_assert_int_eq(campaign_get(&other, "promo", &k), ERROR_NONE);
	ck_assert_int_eq(k.kind, CAMPAIGN_POOL);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &k), ERROR_NONE);
	ck_assert_int_eq(k.kind, CAMPAIGN_SHARED);
	ck_assert_int_eq(campaign_close(&other, "promo", &k), ERROR_NONE);
	ck_assert_int_eq(campaign_get(&fx.svc, "promo", &k), ERROR_NONE);
	ck_assert_int_eq(k.closed, 0);
	fx_verify_clean();
}
END_TEST

START_TEST(test_campaigns_update_and_reopen)
{
	struct campaign k, got;
	struct redeem_result res;
	char codes[2][96];

	fx_campaign("promo", 0, 10, 0);
	fx_codes("promo", 2, 1, codes);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);

	campaign_init(&k, "promo", CAMPAIGN_SHARED);
	k.starts_at = 1000;
	k.ends_at = 4102444800;
	k.budget = 5;
	k.per_account_limit = 3;
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_NONE);
	ck_assert_int_eq(got.starts_at, 1000);
	ck_assert_int_eq(got.ends_at, 4102444800);
	ck_assert_int_eq(got.budget, 5);
	ck_assert_int_eq(got.redeemed, 1);
	ck_assert_int_eq(got.per_account_limit, 3);

	/* 0 clears each; the same values again change nothing. */
	memset(&k, 0, sizeof(k));
	campaign_init(&k, "promo", CAMPAIGN_SHARED);
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_NONE);
	ck_assert_int_eq(got.starts_at, 0);
	ck_assert_int_eq(got.ends_at, 0);
	ck_assert_int_eq(got.budget, 0);
	ck_assert_int_eq(got.per_account_limit, 0);
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_NONE);

	/* Hostile fields; nothing is written. */
	k.ends_at = 500;
	k.starts_at = 500;
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_BAD_REQUEST);
	k.starts_at = k.ends_at = 0;
	k.budget = -1;
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_BAD_REQUEST);
	k.budget = 0;
	k.per_account_limit = -5;
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_BAD_REQUEST);
	k.per_account_limit = 0;
	str_copy(k.name, "nope", sizeof(k.name));
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_NOT_FOUND);
	str_copy(k.name, "bad name", sizeof(k.name));
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_NOT_FOUND);

	/* A budget below what was counted against it is refused. */
	fx_sql("UPDATE campaigns SET budget = 10, redeemed = 4 "
	       "WHERE name = 'promo'");
	str_copy(k.name, "promo", sizeof(k.name));
	k.budget = 3;
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_CONFLICT);
	ck_assert_int_eq(got.budget, 10);
	k.budget = 4;
	ck_assert_int_eq(campaign_update(&fx.svc, &k, &got), ERROR_NONE);
	ck_assert_int_eq(got.budget, 4);

	/* Close, reopen (twice: idempotent); the codes redeem again. */
	fx_sql("UPDATE campaigns SET budget = NULL, redeemed = 0 "
	       "WHERE name = 'promo'");
	ck_assert_int_eq(campaign_close(&fx.svc, "promo", &got), ERROR_NONE);
	ck_assert_int_eq(got.closed, 1);
	ck_assert_int_eq(campaign_reopen(&fx.svc, "promo", &got), ERROR_NONE);
	ck_assert_int_eq(got.closed, 0);
	ck_assert_int_eq(got.closed_at, 0);
	ck_assert_int_eq(campaign_reopen(&fx.svc, "promo", &got), ERROR_NONE);
	ck_assert_int_eq(got.closed, 0);
	ck_assert_int_eq(redeem_code(&fx.svc, codes[1], "b@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_NONE);
	ck_assert_int_eq(
	    campaign_reopen(&fx.svc, "nope", &got), ERROR_NOT_FOUND);
	fx_verify_clean();
}
END_TEST

Suite *
suite_campaigns(void)
{
	Suite *s = suite_create("campaigns");
	TCase *tc = tcase_create("campaigns");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_campaigns_create_shared);
	tcase_add_test(tc, test_campaigns_create_pool);
	tcase_add_test(tc, test_campaigns_duplicate_conflict);
	tcase_add_test(tc, test_campaigns_bad_names);
	tcase_add_test(tc, test_campaigns_bad_fields);
	tcase_add_test(tc, test_campaigns_get_unknown);
	tcase_add_test(tc, test_campaigns_close_idempotent);
	tcase_add_test(tc, test_campaigns_list_order_and_counts);
	tcase_add_test(tc, test_campaigns_list_empty);
	tcase_add_test(tc, test_campaigns_json);
	tcase_add_test(tc, test_campaigns_kind_names);
	tcase_add_test(tc, test_campaigns_tenant_create);
	tcase_add_test(tc, test_campaigns_tenant_scoping);
	tcase_add_test(tc, test_campaigns_update_and_reopen);
	suite_add_tcase(s, tc);
	return s;
}
