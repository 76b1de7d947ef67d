/*
 * The audit log (app/core/audit.c): rows as written, cleaned hostile
 * text, filters, keyset paging newest first, and tenant isolation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "../../app/lib/str.h"
#include "../../app/core/admin.h"
#include "../../app/core/audit.h"
#include "fixture.h"

#define MAXROWS 1100

/* What a listing saw, in order. */
struct seen {
	int n;
	struct audit_entry e[MAXROWS];
};

static void
collect(void *arg, const struct audit_entry *e)
{
	struct seen *s = arg;

	ck_assert_int_lt(s->n, MAXROWS);
	s->e[s->n++] = *e;
}

static struct seen *
list_on(struct svc *svc, const struct audit_filter *f)
{
	static struct seen s;
	int i;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(audit_list(svc, f, collect, &s), ERROR_NONE);
	for (i = 1; i < s.n; i++)
		ck_assert_int_lt(s.e[i].id, s.e[i - 1].id);
	for (i = 0; i < s.n; i++)
		ck_assert_int_eq(s.e[i].tenant_id, svc->tenant_id);
	return &s;
}

static struct seen *
list(const struct audit_filter *f)
{
	return list_on(&fx.svc, f);
}

static void
write_on(
    struct svc *s, int64_t admin_id, const char *action, const char *object)
{
	ck_assert_int_eq(
	    audit_write(s, admin_id, "192.0.2.1", action, object, NULL),
	    ERROR_NONE);
}

START_TEST(test_audit_write_and_list)
{
	struct admin a;
	struct seen *s;
	int64_t now;

	ck_assert_int_eq(admin_create(&fx.svc, "Ann@example.com", ADMIN_OWNER,
			     "correct horse", NULL, &a),
	    ERROR_NONE);
	now = fx_count("SELECT UNIX_TIMESTAMP()");
	ck_assert_int_eq(audit_write(&fx.svc, a.id, "198.51.100.4",
			     "campaign.create", "spring", "budget 100"),
	    ERROR_NONE);
	ck_assert_int_eq(audit_write(&fx.svc, 0, "cli", "admin.passwd",
			     "b@example.com", NULL),
	    ERROR_NONE);
	ck_assert_int_eq(
	    audit_write(&fx.svc, a.id, NULL, "logout", NULL, NULL), ERROR_NONE);
	s = list(NULL);
	ck_assert_int_eq(s->n, 3);
	/* Newest first. */
	ck_assert_str_eq(s->e[0].action, "logout");
	ck_assert_str_eq(s->e[0].ip, "");
	ck_assert_str_eq(s->e[0].object, "");
	ck_assert_str_eq(s->e[0].email, "ann@example.com");
	ck_assert_str_eq(s->e[1].action, "admin.passwd");
	ck_assert_int_eq(s->e[1].admin_id, 0);
	ck_assert_str_eq(s->e[1].email, "");
	ck_assert_str_eq(s->e[1].ip, "cli");
	ck_assert_str_eq(s->e[1].object, "b@example.com");
	ck_assert_str_eq(s->e[1].detail, "");
	ck_assert_str_eq(s->e[2].action, "campaign.create");
	ck_assert_int_eq(s->e[2].admin_id, a.id);
	ck_assert_str_eq(s->e[2].email, "ann@example.com");
	ck_assert_str_eq(s->e[2].ip, "198.51.100.4");
	ck_assert_str_eq(s->e[2].object, "spring");
	ck_assert_str_eq(s->e[2].detail, "budget 100");
	ck_assert_int_ge(s->e[2].at, now - 5);
	ck_assert_int_le(s->e[2].at, now + 5);
	/* NULL detail is NULL in the row, not "". */
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM audit_log WHERE detail IS NULL"), 2);
	/* The e-mail is kept as it was when the row was written. */
	fx_sql("UPDATE admins SET email = 'changed@example.com'");
	s = list(NULL);
	ck_assert_str_eq(s->e[0].email, "ann@example.com");
}
END_TEST

START_TEST(test_audit_filters)
{
	struct audit_filter f;
	struct admin a, b;
	struct seen *s;
	int i;

	ck_assert_int_eq(admin_create(&fx.svc, "ann@example.com", ADMIN_OWNER,
			     "correct horse", NULL, &a),
	    ERROR_NONE);
	ck_assert_int_eq(admin_create(&fx.svc, "bob@example.com", ADMIN_ADMIN,
			     "correct horse", NULL, &b),
	    ERROR_NONE);
	for (i = 0; i < 3; i++) {
		write_on(&fx.svc, a.id, "code.revoke", "K7PQ-XM3D");
		write_on(&fx.svc, b.id, "code.revoke", "K7PQ-XM3E");
		write_on(&fx.svc, b.id, "campaign.close", "spring");
	}
	/* By id (1-9): three rows a day ago, three an hour ago. */
	fx_sql("UPDATE audit_log SET at = at - 3600 WHERE id <= 6");
	fx_sql("UPDATE audit_log SET at = at - 86400 WHERE id <= 3");

	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(list(&f)->n, 9);
	f.action = "code.revoke";
	ck_assert_int_eq(list(&f)->n, 6);
	f.email = " BOB@example.com";
	s = list(&f);
	ck_assert_int_eq(s->n, 3);
	for (i = 0; i < s->n; i++) {
		ck_assert_str_eq(s->e[i].action, "code.revoke");
		ck_assert_str_eq(s->e[i].email, "bob@example.com");
	}
	f.action = "";
	ck_assert_int_eq(list(&f)->n, 6);
	f.action = NULL;
	f.email = NULL;
	f.since = fx_count("SELECT UNIX_TIMESTAMP()") - 600;
	ck_assert_int_eq(list(&f)->n, 3);
	f.since = fx_count("SELECT UNIX_TIMESTAMP()") - 7200;
	ck_assert_int_eq(list(&f)->n, 6);
	f.until = fx_count("SELECT UNIX_TIMESTAMP()") - 600;
	ck_assert_int_eq(list(&f)->n, 3);
	f.since = 0;
	ck_assert_int_eq(list(&f)->n, 6);
	f.action = "campaign.close";
	ck_assert_int_eq(list(&f)->n, 2);
	/* Filters no row can match, hostile ones included. */
	memset(&f, 0, sizeof(f));
	f.action = "nothing.like.this";
	ck_assert_int_eq(list(&f)->n, 0);
	f.action = "code.revoke' OR '1'='1";
	ck_assert_int_eq(list(&f)->n, 0);
	f.action = "\xff\xfe";
	ck_assert_int_eq(list(&f)->n, 0);
	f.action = NULL;
	f.email = "nobody@example.com";
	ck_assert_int_eq(list(&f)->n, 0);
	f.email = "\xc3(@example.com";
	ck_assert_int_eq(list(&f)->n, 0);
	f.email = "%";
	ck_assert_int_eq(list(&f)->n, 0);
}
END_TEST

/* Pages follow one another by the last id seen: every row once, newest
 * first, whatever the page size; rows written meanwhile do not shift
 * the pages already read. */
START_TEST(test_audit_keyset_paging)
{
	static const int sizes[] = {1, 7, 10, 25, 26};
	struct audit_filter f;
	struct seen *s;
	int64_t last;
	size_t k;
	int i, n, total, pages;
	char obj[16];

	for (i = 0; i < 25; i++) {
		snprintf(obj, sizeof(obj), "o%d", i);
		write_on(&fx.svc, 0, i % 2 ? "odd" : "even", obj);
	}
	for (k = 0; k < NELEM(sizes); k++) {
		memset(&f, 0, sizeof(f));
		f.limit = sizes[k];
		total = 0;
		pages = 0;
		last = INT64_MAX;
		do {
			s = list(&f);
			n = s->n;
			ck_assert_int_le(n, sizes[k]);
			for (i = 0; i < n; i++) {
				ck_assert_int_lt(s->e[i].id, last);
				last = s->e[i].id;
				total++;
			}
			if (n > 0)
				f.before_id = last;
			pages++;
			if (pages == 1 && sizes[k] == 7)
				write_on(&fx.svc, 0, "even", "late");
		} while (n == sizes[k]);
		/* The late row is newer than page one: never seen. */
		ck_assert_int_eq(total, 25);
		ck_assert_int_eq(pages, 25 / sizes[k] + 1);
		fx_sql("DELETE FROM audit_log WHERE object = 'late'");
	}
	/* With an action: its own rows only, paged the same way. */
	memset(&f, 0, sizeof(f));
	f.action = "odd";
	f.limit = 5;
	s = list(&f);
	ck_assert_int_eq(s->n, 5);
	ck_assert_str_eq(s->e[0].object, "o23");
	f.before_id = s->e[4].id;
	s = list(&f);
	ck_assert_int_eq(s->n, 5);
	ck_assert_str_eq(s->e[0].object, "o13");
	f.before_id = s->e[4].id;
	s = list(&f);
	ck_assert_int_eq(s->n, 2);
	ck_assert_str_eq(s->e[1].object, "o1");
}
END_TEST

/* limit 0 or too big: AUDIT_LIST_MAX rows. */
START_TEST(test_audit_limit)
{
	struct audit_filter f;

	/* 1005 rows in one statement (MariaDB stops a recursion at 1000
	 * rounds: 35 x 35 numbers instead). */
	fx_sql("INSERT INTO audit_log (tenant_id, admin_id, email, ip, "
	       "action, object, at) WITH RECURSIVE n(i) AS (SELECT 1 UNION "
	       "ALL SELECT i + 1 FROM n WHERE i < 35) SELECT t.id, 0, '', "
	       "'', 'bulk', '', UNIX_TIMESTAMP() FROM n a, n b, tenants t "
	       "WHERE t.name = 'default' AND (a.i - 1) * 35 + b.i <= 1005");
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM audit_log"), 1005);
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(list(&f)->n, AUDIT_LIST_MAX);
	f.limit = AUDIT_LIST_MAX + 1;
	ck_assert_int_eq(list(&f)->n, AUDIT_LIST_MAX);
	f.limit = -3;
	ck_assert_int_eq(list(&f)->n, AUDIT_LIST_MAX);
	f.limit = 3;
	ck_assert_int_eq(list(&f)->n, 3);
	ck_assert_int_eq(list(NULL)->n, AUDIT_LIST_MAX);
}
END_TEST

/* Each tenant sees its own rows; an admin of another tenant lends no
 * e-mail. */
START_TEST(test_audit_tenant_isolation)
{
	struct audit_filter f;
	struct svc acme;
	struct admin a;
	struct seen *s;

	ck_assert_int_eq(tenant_create(fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&acme, fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(admin_create(&acme, "eve@example.com", ADMIN_OWNER,
			     "correct horse", NULL, &a),
	    ERROR_NONE);
	write_on(&acme, a.id, "code.revoke", "ACME-1");
	write_on(&acme, a.id, "code.revoke", "ACME-2");
	write_on(&fx.svc, a.id, "code.revoke", "DEF-1");
	s = list_on(&acme, NULL);
	ck_assert_int_eq(s->n, 2);
	ck_assert_str_eq(s->e[0].email, "eve@example.com");
	s = list(NULL);
	ck_assert_int_eq(s->n, 1);
	ck_assert_str_eq(s->e[0].object, "DEF-1");
	ck_assert_str_eq(s->e[0].email, "");
	memset(&f, 0, sizeof(f));
	f.email = "eve@example.com";
	ck_assert_int_eq(list(&f)->n, 0);
	f.action = "code.revoke";
	ck_assert_int_eq(list_on(&acme, &f)->n, 2);
	ck_assert_int_eq(list(&f)->n, 0);
}
END_TEST

/* Actions are the program's words: anything else is refused. Values are
 * cleaned and cut, never refused. */
START_TEST(test_audit_hostile_values)
{
	static const char *const bad_actions[] = {NULL, "", "Login", "a b",
	    "x\n", "caf\xc3\xa9", "'; DROP TABLE audit_log; --",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
	char huge[2000], accents[1200];
	struct seen *s;
	size_t i;

	for (i = 0; i < NELEM(bad_actions); i++)
		ck_assert_msg(audit_write(&fx.svc, 0, "", bad_actions[i], "",
				  NULL) == ERROR_BAD_REQUEST,
		    "action %zu", i);
	ck_assert_int_eq(
	    audit_write(&fx.svc, -1, "", "ok", "", NULL), ERROR_BAD_REQUEST);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM audit_log"), 0);
	/* 63 bytes of action is the most. */
	ck_assert_int_eq(
	    audit_write(&fx.svc, 0, "", bad_actions[7] + 1, "", NULL),
	    ERROR_NONE);

	memset(huge, 'x', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	/* "é" is two bytes: a cut never splits one. */
	for (i = 0; i + 2 < sizeof(accents); i += 2)
		memcpy(accents + i, "\xc3\xa9", 2);
	accents[i] = '\0';
	ck_assert_int_eq(
	    audit_write(&fx.svc, 0, huge, "hostile", huge, accents),
	    ERROR_NONE);
	ck_assert_int_eq(audit_write(&fx.svc, 0, "1.2.3.4\r\n", "hostile",
			     "a\x01"
			     "b\xff"
			     "c\xc3(",
			     "x\x1b[31m"),
	    ERROR_NONE);
	ck_assert_int_eq(audit_write(&fx.svc, 0, "ip", "hostile",
			     "'; DROP TABLE audit_log; --", "\xf0\x9f\x98\x80"),
	    ERROR_NONE);
	s = list(NULL);
	ck_assert_int_eq(s->n, 4);
	ck_assert_str_eq(s->e[0].object, "'; DROP TABLE audit_log; --");
	ck_assert_str_eq(s->e[0].detail, "\xf0\x9f\x98\x80");
	ck_assert_str_eq(s->e[1].ip, "1.2.3.4??");
	ck_assert_str_eq(s->e[1].object, "a?b?c?(");
	ck_assert_str_eq(s->e[1].detail, "x?[31m");
	ck_assert_uint_eq(strlen(s->e[2].ip), 63);
	ck_assert_uint_eq(strlen(s->e[2].object), 255);
	ck_assert_uint_eq(strlen(s->e[2].detail), 510);
	ck_assert(str_utf8_ok(s->e[2].detail, strlen(s->e[2].detail)));
}
END_TEST

START_TEST(test_audit_clean)
{
	static const struct {
		const char *in;
		size_t size;
		const char *out;
	} cases[] = {
	    {"", 8, ""},
	    {"abc", 8, "abc"},
	    {"abcdefgh", 8, "abcdefg"},
	    {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, "\xc3\xa9\xc3\xa9\xc3\xa9"},
	    {"a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8,
		"a\xc3\xa9\xc3\xa9\xc3\xa9"},
	    {"\xc3", 8, "?"},
	    {"\xc3\xa9", 2, ""},
	    {"\xe2\x82", 8, "??"},
	    {"\xe2\x82\xac!", 8, "\xe2\x82\xac!"},
	    {"\xed\xa0\x80", 8, "???"},
	    {"\xc0\xaf", 8, "??"},
	    {"a\tb\x7f", 8, "a\tb?"},
	    {"\xc2\x85", 8, "??"},
	    {"x", 1, ""},
	};
	char out[16];
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		memset(out, 'Z', sizeof(out));
		audit_clean(cases[i].in, out, cases[i].size);
		ck_assert_msg(
		    strcmp(out, cases[i].out) == 0, "case %zu: \"%s\"", i, out);
	}
	audit_clean(NULL, out, sizeof(out));
	ck_assert_str_eq(out, "");
	out[0] = 'Z';
	audit_clean("abc", out, 0);
	ck_assert_int_eq(out[0], 'Z');
}
END_TEST

Suite *
suite_audit(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("audit");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_audit_write_and_list);
	tcase_add_test(tc, test_audit_filters);
	tcase_add_test(tc, test_audit_keyset_paging);
	tcase_add_test(tc, test_audit_limit);
	tcase_add_test(tc, test_audit_tenant_isolation);
	tcase_add_test(tc, test_audit_hostile_values);
	tcase_add_test(tc, test_audit_clean);
	suite_add_tcase(s, tc);
	return s;
}
