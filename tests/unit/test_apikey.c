/*
 * The web layer's service parts: API keys (app/core/apikey.c), dashboard
 * admins (admin.c), server secrets (secret.c), and the code import from a
 * list and keyset paging that the JSON API and the dashboard use
 * (codes.c), on the backend under test. Password hashes are slow on
 * purpose, so the admin tests hash as few times as they can.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "../../app/lib/common.h"
#include "../../app/core/admin.h"
#include "../../app/core/apikey.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "../../app/core/secret.h"
#include "fixture.h"

#define KEY_LEN 45 /* "rdm_" + 8 + "_" + 32 */

/* A second tenant and its service. */
static void
other_tenant(const char *name, struct svc *out)
{
	ck_assert_int_eq(tenant_create(fx.db, name), ERROR_NONE);
	ck_assert_int_eq(svc_open(out, fx.db, name), ERROR_NONE);
}

static void
new_key(struct svc *s, enum apikey_scope scope, const char *label,
    char text[APIKEY_TEXT_MAX], struct apikey *k)
{
	ck_assert_int_eq(apikey_create(s, scope, label, text, k), ERROR_NONE);
}

/* ---- API keys ---- */

START_TEST(test_apikey_scope_names)
{
	enum apikey_scope sc;
	int i;

	for (i = 0; i < APIKEY__MAX; i++) {
		ck_assert_int_eq(
		    apikey_scope_parse(
			apikey_scope_name((enum apikey_scope)i), &sc),
		    0);
		ck_assert_int_eq(sc, i);
	}
	ck_assert_str_eq(apikey_scope_name(APIKEY_REDEEM), "redeem");
	ck_assert_str_eq(apikey_scope_name(APIKEY_ADMIN), "admin");
	ck_assert_int_eq(apikey_scope_parse("Admin", &sc), -1);
	ck_assert_int_eq(apikey_scope_parse("", &sc), -1);
	ck_assert_int_eq(apikey_scope_parse("redeem ", &sc), -1);
	ck_assert_int_eq(apikey_scope_parse(NULL, &sc), -1);
	ck_assert_str_eq(apikey_scope_name(APIKEY__MAX), "?");
}
END_TEST

START_TEST(test_apikey_create_verify)
{
	char text[APIKEY_TEXT_MAX];
	struct apikey k, v;
	size_t i;

	new_key(&fx.svc, APIKEY_ADMIN, "ci deploy", text, &k);
	ck_assert_uint_eq(strlen(text), KEY_LEN);
	ck_assert_int_eq(strncmp(text, "rdm_", 4), 0);
	ck_assert_int_eq(text[12], '_');
	for (i = 4; i < KEY_LEN; i++)
		if (i != 12)
			ck_assert_msg(strchr("abcdefghijklmnopqrstuvwxyz234567",
					  text[i]) != NULL,
			    "key character %zu", i);
	ck_assert_int_eq(memcmp(k.lookup, text + 4, 8), 0);
	ck_assert_uint_eq(strlen(k.lookup), 8);
	ck_assert_int_gt(k.id, 0);
	ck_assert_int_eq(k.scope, APIKEY_ADMIN);
	ck_assert_str_eq(k.label, "ci deploy");
	ck_assert_int_gt(k.created_at, 0);
	ck_assert_int_eq(k.revoked_at, 0);
	ck_assert_int_eq(k.tenant_id, fx.svc.tenant_id);
	ck_assert_str_eq(k.tenant, "default");

	ck_assert_int_eq(apikey_verify(fx.db, text, &v), ERROR_NONE);
	ck_assert_int_eq(v.id, k.id);
	ck_assert_int_eq(v.tenant_id, fx.svc.tenant_id);
	ck_assert_str_eq(v.tenant, "default");
	ck_assert_int_eq(v.unchecked_codes, 0);
	ck_assert_int_eq(v.scope, APIKEY_ADMIN);
	ck_assert_str_eq(v.lookup, k.lookup);
	ck_assert_str_eq(v.label, "ci deploy");
	ck_assert_int_eq(v.created_at, k.created_at);
	ck_assert_int_eq(v.revoked_at, 0);

	/* No label is an empty one; out may be NULL. */
	ck_assert_int_eq(
	    apikey_create(&fx.svc, APIKEY_REDEEM, NULL, text, NULL),
	    ERROR_NONE);
	ck_assert_int_eq(apikey_verify(fx.db, text, &v), ERROR_NONE);
	ck_assert_int_eq(v.scope, APIKEY_REDEEM);
	ck_assert_str_eq(v.label, "");
	ck_assert_int_ne(v.id, k.id);
}
END_TEST

/* The stored row holds the lookup and a hash, never the key or its
 * secret part. */
START_TEST(test_apikey_stored_hashed)
{
	char text[APIKEY_TEXT_MAX], sql[384];
	struct apikey k;

	new_key(&fx.svc, APIKEY_REDEEM, "x", text, &k);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM api_keys WHERE hash = '%s' OR hash LIKE "
	    "'%%%s%%' OR lookup = '%s' OR label LIKE '%%%s%%'",
	    text, text + 13, text, text + 13);
	ck_assert_int_eq(fx_count(sql), 0);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM api_keys WHERE lookup = '%s' AND "
	    "LENGTH(hash) = 64",
	    k.lookup);
	ck_assert_int_eq(fx_count(sql), 1);
}
END_TEST

START_TEST(test_apikey_hostile_texts)
{
	char text[APIKEY_TEXT_MAX], other[APIKEY_TEXT_MAX];
	char wrong[APIKEY_TEXT_MAX], upper[APIKEY_TEXT_MAX];
	char longer[APIKEY_TEXT_MAX + 8], shorter[APIKEY_TEXT_MAX];
	char unknown[APIKEY_TEXT_MAX], noseparator[APIKEY_TEXT_MAX];
	char huge[4096];
	struct apikey k, v;
	size_t i;

	new_key(&fx.svc, APIKEY_REDEEM, "", text, &k);
	new_key(&fx.svc, APIKEY_REDEEM, "", other, NULL);
	/* Right lookup, wrong secret: the last character changed, or the
	 * secret of another live key. */
	snprintf(wrong, sizeof(wrong), "%s", text);
	wrong[KEY_LEN - 1] = wrong[KEY_LEN - 1] == 'a' ? 'b' : 'a';
	snprintf(unknown, sizeof(unknown), "%s", text);
	memcpy(unknown + 13, other + 13, 32);
	snprintf(upper, sizeof(upper), "%s", text);
	for (i = 0; upper[i]; i++)
		if (upper[i] >= 'a' && upper[i] <= 'z')
			upper[i] = (char)(upper[i] - 'a' + 'A');
	snprintf(longer, sizeof(longer), "%sa", text);
	snprintf(shorter, sizeof(shorter), "%.*s", KEY_LEN - 1, text);
	snprintf(noseparator, sizeof(noseparator), "%s", text);
	noseparator[12] = 'a';
	memset(huge, 'a', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	memcpy(huge, text, KEY_LEN);

	{
		const char *const bad[] = {
		    NULL,
		    "",
		    "rdm_",
		    "rdm__",
		    "Bearer",
		    "rdm_aaaaaaaa_",
		    "rdm_aaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* unknown */
		    "rdm_aaaaaaa1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* not b32 */
		    "xdm_aaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "rdm_aaaa'--_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "rdm_\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9_"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "rdm_\x01\x02\x03\x04\x05\x06\x07\x08_"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "\xff\xfe\xfd",
		    wrong,
		    unknown,
		    upper,
		    longer,
		    shorter,
		    noseparator,
		    huge,
		};

		for (i = 0; i < NELEM(bad); i++) {
			memset(&v, 0x5a, sizeof(v));
			ck_assert_msg(apikey_verify(fx.db, bad[i], &v) ==
					  ERROR_UNAUTHORIZED,
			    "bad[%zu] accepted", i);
			/* Nothing of a refused key is handed back. */
			ck_assert_int_eq(v.id, 0);
			ck_assert_int_eq(v.tenant_id, 0);
		}
	}
	/* The good keys still work. */
	ck_assert_int_eq(apikey_verify(fx.db, text, &v), ERROR_NONE);
	ck_assert_int_eq(v.id, k.id);
	ck_assert_int_eq(apikey_verify(fx.db, other, &v), ERROR_NONE);
}
END_TEST

START_TEST(test_apikey_bad_create)
{
	char text[APIKEY_TEXT_MAX], label[APIKEY_LABEL_MAX + 2];

	memset(label, 'l', sizeof(label) - 1);
	label[sizeof(label) - 1] = '\0';
	ck_assert_int_eq(
	    apikey_create(&fx.svc, APIKEY_REDEEM, label, text, NULL),
	    ERROR_BAD_REQUEST);
	ck_assert_str_eq(text, "");
	label[APIKEY_LABEL_MAX] = '\0'; /* exactly the maximum: fine */
	ck_assert_int_eq(
	    apikey_create(&fx.svc, APIKEY_REDEEM, label, text, NULL),
	    ERROR_NONE);
	ck_assert_int_eq(
	    apikey_create(&fx.svc, APIKEY_REDEEM, "bad \xff utf8", text, NULL),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(
	    apikey_create(&fx.svc, APIKEY_REDEEM, "a\nb", text, NULL),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(apikey_create(&fx.svc, APIKEY__MAX, "", text, NULL),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM api_keys"), 1);
}
END_TEST

START_TEST(test_apikey_revoke)
{
	char text[APIKEY_TEXT_MAX], keep[APIKEY_TEXT_MAX];
	struct apikey k, v;

	new_key(&fx.svc, APIKEY_ADMIN, "old", text, &k);
	new_key(&fx.svc, APIKEY_ADMIN, "new", keep, NULL);
	ck_assert_int_eq(apikey_revoke(&fx.svc, k.id), ERROR_NONE);
	ck_assert_int_eq(apikey_verify(fx.db, text, &v), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(apikey_verify(fx.db, keep, &v), ERROR_NONE);
	/* Idempotent, and the first revocation time stays. */
	ck_assert_int_eq(apikey_revoke(&fx.svc, k.id), ERROR_NONE);
	ck_assert_int_eq(apikey_verify(fx.db, text, &v), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(apikey_revoke(&fx.svc, 999999), ERROR_NOT_FOUND);
	ck_assert_int_eq(apikey_revoke(&fx.svc, 0), ERROR_NOT_FOUND);
	ck_assert_int_eq(apikey_revoke(&fx.svc, -1), ERROR_NOT_FOUND);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM api_keys WHERE "
				  "revoked_at IS NOT NULL"),
	    1);
}
END_TEST

struct key_list {
	struct apikey v[8];
	int n;
};

static void
on_key(void *arg, const struct apikey *k)
{
	struct key_list *l = arg;

	ck_assert_int_lt(l->n, (int)NELEM(l->v));
	l->v[l->n++] = *k;
}

START_TEST(test_apikey_list)
{
	char t1[APIKEY_TEXT_MAX], t2[APIKEY_TEXT_MAX];
	struct key_list l;
	struct apikey k1, k2;

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(apikey_list(&fx.svc, on_key, &l), ERROR_NONE);
	ck_assert_int_eq(l.n, 0);
	new_key(&fx.svc, APIKEY_REDEEM, "shop", t1, &k1);
	new_key(&fx.svc, APIKEY_ADMIN, "ops", t2, &k2);
	ck_assert_int_eq(apikey_revoke(&fx.svc, k1.id), ERROR_NONE);
	ck_assert_int_eq(apikey_list(&fx.svc, on_key, &l), ERROR_NONE);
	ck_assert_int_eq(l.n, 2);
	ck_assert_int_eq(l.v[0].id, k1.id); /* by id */
	ck_assert_str_eq(l.v[0].lookup, k1.lookup);
	ck_assert_str_eq(l.v[0].label, "shop");
	ck_assert_int_eq(l.v[0].scope, APIKEY_REDEEM);
	ck_assert_int_gt(l.v[0].revoked_at, 0);
	ck_assert_str_eq(l.v[1].lookup, k2.lookup);
	ck_assert_int_eq(l.v[1].scope, APIKEY_ADMIN);
	ck_assert_int_eq(l.v[1].revoked_at, 0);
	ck_assert_str_eq(l.v[1].tenant, "default");
	/* Nothing listed holds the secret part. */
	ck_assert_ptr_null(memmem(&l, sizeof(l), t1 + 13, 32));
	ck_assert_ptr_null(memmem(&l, sizeof(l), t2 + 13, 32));
}
END_TEST

START_TEST(test_apikey_tenant_isolation)
{
	char mine[APIKEY_TEXT_MAX], theirs[APIKEY_TEXT_MAX];
	struct key_list l;
	struct apikey k, t, v;
	struct svc acme;

	other_tenant("acme", &acme);
	new_key(&fx.svc, APIKEY_ADMIN, "mine", mine, &k);
	new_key(&acme, APIKEY_REDEEM, "theirs", theirs, &t);
	ck_assert_int_eq(t.tenant_id, acme.tenant_id);

	/* A key names its tenant: verify hands back the right one. */
	ck_assert_int_eq(apikey_verify(fx.db, theirs, &v), ERROR_NONE);
	ck_assert_int_eq(v.tenant_id, acme.tenant_id);
	ck_assert_str_eq(v.tenant, "acme");
	ck_assert_int_eq(apikey_verify(fx.db, mine, &v), ERROR_NONE);
	ck_assert_int_eq(v.tenant_id, fx.svc.tenant_id);

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(apikey_list(&fx.svc, on_key, &l), ERROR_NONE);
	ck_assert_int_eq(l.n, 1);
	ck_assert_str_eq(l.v[0].label, "mine");

	/* One tenant cannot revoke another's key. */
	ck_assert_int_eq(apikey_revoke(&fx.svc, t.id), ERROR_NOT_FOUND);
	ck_assert_int_eq(apikey_verify(fx.db, theirs, &v), ERROR_NONE);
	ck_assert_int_eq(apikey_revoke(&acme, k.id), ERROR_NOT_FOUND);
	ck_assert_int_eq(apikey_revoke(&acme, t.id), ERROR_NONE);
	ck_assert_int_eq(apikey_verify(fx.db, theirs, &v), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(apikey_verify(fx.db, mine, &v), ERROR_NONE);
}
END_TEST

/* verify reports the tenant's unchecked-code counter, so a worker can
 * build its svc from the key alone (svc_init). */
START_TEST(test_apikey_verify_carries_unchecked)
{
	const char *const codes[] = {"ABCDEFGH"};
	char text[APIKEY_TEXT_MAX], norm[CODE_MAX + 1];
	struct apikey v;
	int64_t created, dups;

	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(codetext_normalize(codes[0], norm), CODETEXT_OK);
	ck_assert_int_eq(codetext_check_ok(norm), 0); /* fails the check */
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", codes, 1, 1, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_NONE);
	new_key(&fx.svc, APIKEY_REDEEM, "", text, NULL);
	ck_assert_int_eq(apikey_verify(fx.db, text, &v), ERROR_NONE);
	ck_assert_int_eq(v.unchecked_codes, 1);
}
END_TEST

/* ---- admins ---- */

START_TEST(test_admin_role_names)
{
	enum admin_role r;
	int i;

	for (i = 0; i < ADMIN__MAX; i++) {
		ck_assert_int_eq(
		    admin_role_parse(admin_role_name((enum admin_role)i), &r),
		    0);
		ck_assert_int_eq(r, i);
	}
	ck_assert_str_eq(admin_role_name(ADMIN_OWNER), "owner");
	ck_assert_str_eq(admin_role_name(ADMIN_ADMIN), "admin");
	ck_assert_str_eq(admin_role_name(ADMIN_VIEWER), "viewer");
	ck_assert_int_eq(admin_role_parse("root", &r), -1);
	ck_assert_int_eq(admin_role_parse("", &r), -1);
	ck_assert_int_eq(admin_role_parse(NULL, &r), -1);
}
END_TEST

START_TEST(test_admin_create_and_check)
{
	struct admin a, b;
	int64_t n;

	ck_assert_int_eq(admin_count(&fx.svc, &n), ERROR_NONE);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(admin_create(&fx.svc, "  Ann@Example.COM\t",
			     ADMIN_VIEWER, "correct horse", NULL, &a),
	    ERROR_NONE);
	ck_assert_int_gt(a.id, 0);
	ck_assert_str_eq(a.email, "ann@example.com");
	ck_assert_int_eq(a.role, ADMIN_VIEWER);
	ck_assert_int_gt(a.created_at, 0);
	ck_assert_int_eq(admin_count(&fx.svc, &n), ERROR_NONE);
	ck_assert_int_eq(n, 1);
	/* Stored hashed (argon2id), never in clear. */
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admins WHERE "
				  "password_hash LIKE '$argon2id$%' AND "
				  "password_hash NOT LIKE '%correct horse%'"),
	    1);

	/* Any spelling of the e-mail logs in. */
	ck_assert_int_eq(admin_check_password(
			     &fx.svc, "ANN@example.com ", "correct horse", &b),
	    ERROR_NONE);
	ck_assert_int_eq(b.id, a.id);
	ck_assert_str_eq(b.email, "ann@example.com");
	ck_assert_int_eq(b.role, ADMIN_VIEWER);
	memset(&b, 0x5a, sizeof(b));
	ck_assert_int_eq(admin_check_password(
			     &fx.svc, "ann@example.com", "Correct horse", &b),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(b.id, 0);
	ck_assert_int_eq(admin_check_password(
			     &fx.svc, "bob@example.com", "correct horse", &b),
	    ERROR_UNAUTHORIZED);
}
END_TEST

START_TEST(test_admin_hostile_logins)
{
	static const char *const alphabet =
	    "23456789abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ";
	char gen[ADMIN_PASSWORD_GEN + 1], huge[ADMIN_PASSWORD_MAX + 2];
	struct admin a, b;
	size_t i;

	/* A generated password: the right length and alphabet, and it
	 * works. */
	ck_assert_int_eq(admin_create(&fx.svc, "gen@example.com", ADMIN_OWNER,
			     NULL, gen, &a),
	    ERROR_NONE);
	ck_assert_uint_eq(strlen(gen), ADMIN_PASSWORD_GEN);
	for (i = 0; gen[i]; i++)
		ck_assert_ptr_nonnull(strchr(alphabet, gen[i]));
	ck_assert_int_eq(a.role, ADMIN_OWNER);
	ck_assert_int_eq(
	    admin_check_password(&fx.svc, "gen@example.com", gen, &b),
	    ERROR_NONE);
	ck_assert_int_eq(b.id, a.id);

	/* Refused without a database hit worth the name: each still runs
	 * one verify, so keep the table short. */
	memset(huge, 'p', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	{
		const char *const bad[][2] = {
		    {"gen@example.com", ""},
		    {"gen@example.com", NULL},
		    {"", gen},
		    {NULL, gen},
		    {"gen@example.com", huge},
		};

		for (i = 0; i < NELEM(bad); i++)
			ck_assert_msg(admin_check_password(&fx.svc, bad[i][0],
					  bad[i][1], &b) == ERROR_UNAUTHORIZED,
			    "bad[%zu] logged in", i);
	}
}
END_TEST

START_TEST(test_admin_duplicate)
{
	struct admin a;

	ck_assert_int_eq(admin_create(&fx.svc, "ann@example.com", ADMIN_ADMIN,
			     "password1", NULL, &a),
	    ERROR_NONE);
	ck_assert_int_eq(admin_create(&fx.svc, " ANN@example.com", ADMIN_OWNER,
			     "password2", NULL, &a),
	    ERROR_CONFLICT);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admins"), 1);
}
END_TEST

/* Refused before any hashing: cheap to list many. */
START_TEST(test_admin_bad_inputs)
{
	char longmail[300], pw_long[ADMIN_PASSWORD_MAX + 2];
	char pw_max[ADMIN_PASSWORD_MAX + 1], gen[ADMIN_PASSWORD_GEN + 1];
	struct admin a;
	size_t i;

	memset(longmail, 'a', sizeof(longmail) - 1);
	longmail[sizeof(longmail) - 1] = '\0';
	memcpy(longmail + 200, "@example.com", 12);
	memset(pw_long, 'p', sizeof(pw_long) - 1);
	pw_long[sizeof(pw_long) - 1] = '\0';
	memset(pw_max, 'p', sizeof(pw_max) - 1);
	pw_max[sizeof(pw_max) - 1] = '\0';
	{
		const char *const emails[] = {
		    NULL,
		    "",
		    "   ",
		    "no-at-sign",
		    "@example.com",
		    "ann@",
		    "ann@@example.com",
		    "a@b@c",
		    "ann smith@example.com",
		    "ann\x01@example.com",
		    "ann@exa\tmple.com",
		    "\xff\xfe@example.com",
		    longmail,
		};

		for (i = 0; i < NELEM(emails); i++)
			ck_assert_msg(
			    admin_create(&fx.svc, emails[i], ADMIN_ADMIN,
				"password1", NULL, &a) == ERROR_BAD_REQUEST,
			    "email[%zu] accepted", i);
	}
	{
		const char *const pws[] = {"", "short", "1234567", pw_long};

		for (i = 0; i < NELEM(pws); i++)
			ck_assert_msg(admin_create(&fx.svc, "ann@example.com",
					  ADMIN_ADMIN, pws[i], NULL,
					  &a) == ERROR_BAD_REQUEST,
			    "password[%zu] accepted", i);
	}
	ck_assert_int_eq(admin_create(&fx.svc, "ann@example.com", ADMIN__MAX,
			     "password1", gen, &a),
	    ERROR_BAD_REQUEST);
	/* No password and nowhere to put a generated one. */
	ck_assert_int_eq(admin_create(&fx.svc, "ann@example.com", ADMIN_ADMIN,
			     NULL, NULL, &a),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admins"), 0);
	/* The longest password is fine. */
	ck_assert_int_eq(admin_create(&fx.svc, "ann@example.com", ADMIN_ADMIN,
			     pw_max, NULL, &a),
	    ERROR_NONE);
}
END_TEST

START_TEST(test_admin_tenant_isolation)
{
	struct admin a, b;
	struct svc acme;
	int64_t n;

	other_tenant("acme", &acme);
	ck_assert_int_eq(admin_create(&fx.svc, "ann@example.com", ADMIN_OWNER,
			     "default-pw", NULL, &a),
	    ERROR_NONE);
	/* The same e-mail in another tenant is another admin. */
	ck_assert_int_eq(admin_create(&acme, "ann@example.com", ADMIN_VIEWER,
			     "acme-pw-1", NULL, &b),
	    ERROR_NONE);
	ck_assert_int_ne(a.id, b.id);
	ck_assert_int_eq(admin_count(&acme, &n), ERROR_NONE);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(
	    admin_check_password(&acme, "ann@example.com", "default-pw", &b),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    admin_check_password(&acme, "ann@example.com", "acme-pw-1", &b),
	    ERROR_NONE);
	ck_assert_int_eq(b.role, ADMIN_VIEWER);
}
END_TEST

/* ---- server secrets ---- */

START_TEST(test_secret_get_or_create)
{
	unsigned char a[SERVER_SECRET_BYTES], b[SERVER_SECRET_BYTES];
	unsigned char c[SERVER_SECRET_BYTES], zero[SERVER_SECRET_BYTES];
	char name[SERVER_SECRET_NAME_MAX + 2];
	struct db *db2;

	memset(zero, 0, sizeof(zero));
	ck_assert_int_eq(server_secret(fx.db, "csrf", a), 0);
	ck_assert_int_ne(memcmp(a, zero, sizeof(a)), 0);
	ck_assert_int_eq(server_secret(fx.db, "csrf", b), 0);
	ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
	ck_assert_int_eq(server_secret(fx.db, "session", c), 0);
	ck_assert_int_ne(memcmp(a, c, sizeof(a)), 0);
	/* Another connection (another worker) reads the same. */
	db2 = fx_connect();
	ck_assert_int_eq(server_secret(db2, "csrf", b), 0);
	ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
	db_close(db2);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM server_secrets"), 2);

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ck_assert_int_eq(server_secret(fx.db, name, b), -1);
	ck_assert_int_eq(server_secret(fx.db, "", b), -1);
	ck_assert_int_eq(server_secret(fx.db, NULL, b), -1);
	ck_assert_int_eq(server_secret(fx.db, "bad\xff", b), -1);
	name[SERVER_SECRET_NAME_MAX] = '\0';
	ck_assert_int_eq(server_secret(fx.db, name, b), 0);

	/* A damaged row is an error, not a weak secret. */
	fx_sql("UPDATE server_secrets SET value = 'abc' WHERE name = "
	       "'session'");
	ck_assert_int_eq(server_secret(fx.db, "session", b), -1);
}
END_TEST

#define SECRET_CHILDREN 6
#define SECRET_ROUNDS 4

struct secret_rec {
	unsigned char ok;
	unsigned char value[SERVER_SECRET_BYTES];
};

/* A child: its own connection, then the barrier, then one call. */
static void
secret_child(const char *name, int go, int ready, int out)
{
	struct secret_rec rec;
	struct db *db;
	char err[256], b;

	memset(&rec, 0, sizeof(rec));
	db = db_open(fx.dsn, err, sizeof(err));
	if (write(ready, "r", 1) != 1)
		_exit(1);
	if (read(go, &b, 1) < 0)
		_exit(1);
	if (db != NULL && server_secret(db, name, rec.value) == 0)
		rec.ok = 1;
	if (write(out, &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
		_exit(1);
	_exit(0);
}

/* Processes racing to create the same secret all get the one that was
 * written first. */
START_TEST(test_secret_race)
{
	unsigned char mine[SERVER_SECRET_BYTES];
	struct secret_rec rec[SECRET_CHILDREN];
	pid_t pids[SECRET_CHILDREN];
	int go[2], ready[2], out[2], round, i, status, nready;
	char name[32], b;

	for (round = 0; round < SECRET_ROUNDS; round++) {
		snprintf(name, sizeof(name), "race-%d", round);
		ck_assert_int_eq(pipe(go), 0);
		ck_assert_int_eq(pipe(ready), 0);
		ck_assert_int_eq(pipe(out), 0);
		for (i = 0; i < SECRET_CHILDREN; i++) {
			pids[i] = fork();
			ck_assert_int_ne(pids[i], -1);
			if (pids[i] == 0) {
				close(go[1]);
				close(ready[0]);
				close(out[0]);
				secret_child(name, go[0], ready[1], out[1]);
			}
		}
		close(go[0]);
		close(ready[1]);
		close(out[1]);
		for (nready = 0;
		     nready < SECRET_CHILDREN && read(ready[0], &b, 1) == 1;)
			nready++;
		close(go[1]); /* every child's read returns: go */
		for (i = 0; i < SECRET_CHILDREN; i++)
			ck_assert_int_eq(read(out[0], &rec[i], sizeof(rec[i])),
			    (ssize_t)sizeof(rec[i]));
		for (i = 0; i < SECRET_CHILDREN; i++) {
			ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
			ck_assert(
			    WIFEXITED(status) && WEXITSTATUS(status) == 0);
		}
		close(ready[0]);
		close(out[0]);
		ck_assert_int_eq(nready, SECRET_CHILDREN);
		ck_assert_int_eq(server_secret(fx.db, name, mine), 0);
		for (i = 0; i < SECRET_CHILDREN; i++) {
			ck_assert_msg(rec[i].ok, "child %d failed", i);
			ck_assert_msg(
			    memcmp(rec[i].value, mine, sizeof(mine)) == 0,
			    "round %d: child %d got another secret", round, i);
		}
	}
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM server_secrets"), SECRET_ROUNDS);
}
END_TEST

/* ---- codes_import_list ---- */

struct names {
	char v[64][CODE_DISPLAY_MAX];
	int n;
};

static void
on_name(void *arg, const char *display)
{
	struct names *l = arg;

	ck_assert_int_lt(l->n, (int)NELEM(l->v));
	snprintf(l->v[l->n++], CODE_DISPLAY_MAX, "%s", display);
}

static int64_t
code_count(void)
{
	return fx_count("SELECT COUNT(*) FROM codes");
}

START_TEST(test_codes_import_list_basic)
{
	char checked[CODE_MAX + 1] = "K7PQXM3";
	const char *codes[8];
	struct names got;
	struct code_info ci;
	struct svc fresh;
	int64_t created, dups, unchecked = 0;
	char norm[CODE_MAX + 1];
	size_t i, n = 0;

	checked[7] = codetext_check_char(checked);
	checked[8] = '\0';
	fx_campaign("promo", 0, 0, 0);
	codes[n++] = "summer-2026"; /* outside the alphabet: no check */
	codes[n++] = " abcd efgh "; /* fails the check character */
	codes[n++] = checked;       /* passes it */
	codes[n++] = "ABCD-EFGH";   /* a repeat of the second */
	codes[n++] = "WXYZ2345";
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(
		    codetext_normalize(codes[i], norm), CODETEXT_OK);
		if (i != 3 && codetext_in_alphabet(norm) &&
		    !codetext_check_ok(norm))
			unchecked++;
	}
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", codes, n, 3, 0,
			     on_name, &got, &created, &dups),
	    ERROR_NONE);
	ck_assert_int_eq(created, 4);
	ck_assert_int_eq(dups, 1);
	/* emit: each created code once, as stored (normalized). */
	ck_assert_int_eq(got.n, 4);
	ck_assert_str_eq(got.v[0], "SUMMER2026");
	ck_assert_str_eq(got.v[1], "ABCDEFGH");
	ck_assert_str_eq(got.v[2], checked);
	ck_assert_str_eq(got.v[3], "WXYZ2345");
	ck_assert_int_eq(code_get(&fx.svc, "Summer 2026", &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 3);
	ck_assert_str_eq(ci.campaign, "promo");
	ck_assert_str_eq(ci.state, "active");
	/* The unchecked counter, in memory and in the tenant row. */
	ck_assert_int_eq(fx.svc.unchecked_codes, unchecked);
	ck_assert_int_eq(svc_open(&fresh, fx.db, "default"), ERROR_NONE);
	ck_assert_int_eq(fresh.unchecked_codes, unchecked);

	/* Again: everything is a duplicate, nothing emitted, no bump. */
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", codes, n, 3, 0,
			     on_name, &got, &created, &dups),
	    ERROR_NONE);
	ck_assert_int_eq(created, 0);
	ck_assert_int_eq(dups, 5);
	ck_assert_int_eq(got.n, 0);
	ck_assert_int_eq(svc_open(&fresh, fx.db, "default"), ERROR_NONE);
	ck_assert_int_eq(fresh.unchecked_codes, unchecked);
	ck_assert_int_eq(code_count(), 4);

	/* An imported code without a check character is redeemable. */
	{
		struct redeem_result r;

		ck_assert_int_eq(
		    redeem_code(&fx.svc, "abcd-efgh", "a@x", NULL, &r), 0);
		ck_assert_int_eq(r.error, ERROR_NONE);
	}
	fx_verify_clean();
}
END_TEST

START_TEST(test_codes_import_list_expiry_and_pool)
{
	const char *const one[] = {"POOLCODE1", "POOLCODE2"};
	struct code_info ci;
	int64_t created, dups;

	fx_campaign("promo", 0, 0, 0);
	fx_campaign("pool", 1, 0, 0);
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", one, 1, 1,
			     INT64_C(4102444800), NULL, NULL, &created, &dups),
	    ERROR_NONE);
	ck_assert_int_eq(code_get(&fx.svc, one[0], &ci), ERROR_NONE);
	ck_assert_int_eq(ci.expires_at, INT64_C(4102444800));
	/* A pool's codes are single-use. */
	ck_assert_int_eq(codes_import_list(&fx.svc, "pool", one + 1, 1, 2, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(codes_import_list(&fx.svc, "pool", one + 1, 1, 1, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_NONE);
	ck_assert_int_eq(created, 1);
	/* A code lives once in a tenant, whatever the campaign. */
	ck_assert_int_eq(codes_import_list(&fx.svc, "pool", one, 1, 1, 0, NULL,
			     NULL, &created, &dups),
	    ERROR_NONE);
	ck_assert_int_eq(created, 0);
	ck_assert_int_eq(dups, 1);
	ck_assert_int_eq(codes_import_list(&fx.svc, "nosuch", one, 1, 1, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_NOT_FOUND);
}
END_TEST

/* One bad code: nothing written, whatever its place in the list. */
START_TEST(test_codes_import_list_bad_code_writes_nothing)
{
	char overlong[CODE_MAX + 2], raw_long[CODE_INPUT_MAX + 2];
	const char *bad[] = {
	    "",
	    "   ",
	    "--",
	    "bad code!",
	    "caf\xc3\xa9",
	    "\xff\xfe",
	    "ab\x01"
	    "cd",
	    "new\nline",
	    NULL,
	    overlong,
	    raw_long,
	};
	const char *list[3];
	struct names got;
	int64_t created = -1, dups = -1;
	size_t i, pos;

	memset(overlong, 'A', sizeof(overlong) - 1);
	overlong[sizeof(overlong) - 1] = '\0';
	memset(raw_long, '-', sizeof(raw_long) - 1);
	raw_long[0] = 'A';
	raw_long[sizeof(raw_long) - 1] = '\0';
	fx_campaign("promo", 0, 0, 0);
	for (i = 0; i < NELEM(bad); i++)
		for (pos = 0; pos < 3; pos++) {
			list[0] = "GOODONE1";
			list[1] = "GOODONE2";
			list[2] = "GOODONE3";
			list[pos] = bad[i];
			memset(&got, 0, sizeof(got));
			ck_assert_msg(codes_import_list(&fx.svc, "promo", list,
					  3, 1, 0, on_name, &got, &created,
					  &dups) == ERROR_BAD_REQUEST,
			    "bad[%zu] at %zu imported", i, pos);
			ck_assert_int_eq(got.n, 0);
			ck_assert_int_eq(created, 0);
			ck_assert_int_eq(dups, 0);
		}
	ck_assert_int_eq(code_count(), 0);
	ck_assert_int_eq(fx.svc.unchecked_codes, 0);
	/* Bad arguments. */
	list[0] = "GOODONE1";
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", list, 0, 1, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", NULL, 1, 1, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", list, 1, 0, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", list, 1, -1, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", list, 1, 1, -5,
			     NULL, NULL, &created, &dups),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(code_count(), 0);
}
END_TEST

START_TEST(test_codes_import_list_other_tenant)
{
	const char *const list[] = {"SHAREDCODE"};
	struct code_info ci;
	struct svc acme;
	struct campaign k;
	int64_t created, dups;

	other_tenant("acme", &acme);
	fx_campaign("promo", 0, 0, 0);
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "promo");
	ck_assert_int_eq(campaign_create(&acme, &k), ERROR_NONE);
	ck_assert_int_eq(codes_import_list(&fx.svc, "promo", list, 1, 1, 0,
			     NULL, NULL, &created, &dups),
	    ERROR_NONE);
	/* The same text in another tenant is another code. */
	ck_assert_int_eq(codes_import_list(&acme, "promo", list, 1, 2, 0, NULL,
			     NULL, &created, &dups),
	    ERROR_NONE);
	ck_assert_int_eq(created, 1);
	ck_assert_int_eq(code_get(&acme, list[0], &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 2);
	ck_assert_int_eq(code_get(&fx.svc, list[0], &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 1);
}
END_TEST

/* ---- codes_page ---- */

#define PAGE_CODES 2500

struct page {
	int64_t ids[PAGE_CODES + 16];
	char (*codes)[CODE_DISPLAY_MAX];
	int n;
	int64_t last;
	int ordered;
};

static void
on_page(void *arg, const struct code_info *ci)
{
	struct page *p = arg;

	ck_assert_int_lt(p->n, PAGE_CODES + 16);
	if (ci->id <= p->last)
		p->ordered = 0;
	p->last = ci->id;
	p->ids[p->n] = ci->id;
	if (p->codes != NULL)
		snprintf(p->codes[p->n], CODE_DISPLAY_MAX, "%s", ci->code);
	p->n++;
}

/* Every page of a listing, limit codes at a time; returns the pages. */
static int
page_all(struct svc *s, const char *campaign, enum codes_filter f, int limit,
    struct page *p)
{
	int64_t after = 0, last;
	int pages = 0, before;

	p->n = 0;
	p->last = 0;
	p->ordered = 1;
	for (;;) {
		before = p->n;
		ck_assert_int_eq(
		    codes_page(s, campaign, f, after, limit, on_page, p, &last),
		    ERROR_NONE);
		if (p->n == before) {
			ck_assert_int_eq(last, 0);
			break;
		}
		pages++;
		ck_assert_int_le(p->n - before, limit);
		ck_assert_int_eq(last, p->ids[p->n - 1]);
		after = last;
		if (p->n - before < limit)
			break; /* a short page is the last */
	}
	return pages;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

START_TEST(test_codes_page_each_once)
{
	static char gen[PAGE_CODES][CODE_DISPLAY_MAX];
	static char seen[PAGE_CODES + 16][CODE_DISPLAY_MAX];
	static struct page p;
	int i;

	fx_campaign("big", 0, 0, 0);
	fx_campaign("small", 0, 0, 0);
	fx_codes("big", PAGE_CODES, 1, gen);
	fx_codes("small", 7, 1, NULL);
	memset(&p, 0, sizeof(p));
	p.codes = seen;
	ck_assert_int_eq(page_all(&fx.svc, "big", CODES_ALL, 1000, &p), 3);
	ck_assert_int_eq(p.n, PAGE_CODES);
	ck_assert_int_eq(p.ordered, 1); /* strictly by id: no repeats */
	qsort(gen, PAGE_CODES, CODE_DISPLAY_MAX, cmp_str);
	qsort(seen, PAGE_CODES, CODE_DISPLAY_MAX, cmp_str);
	for (i = 0; i < PAGE_CODES; i++)
		ck_assert_str_eq(seen[i], gen[i]);

	/* Every campaign; an exact multiple of the limit ends with an
	 * empty page. */
	p.codes = NULL;
	ck_assert_int_eq(page_all(&fx.svc, NULL, CODES_ALL, 1000, &p), 3);
	ck_assert_int_eq(p.n, PAGE_CODES + 7);
	ck_assert_int_eq(p.ordered, 1);
	ck_assert_int_eq(page_all(&fx.svc, "small", CODES_ALL, 7, &p), 1);
	ck_assert_int_eq(p.n, 7);
	ck_assert_int_eq(page_all(&fx.svc, "small", CODES_ALL, 1, &p), 7);
	ck_assert_int_eq(p.n, 7);
}
END_TEST

START_TEST(test_codes_page_filters_and_args)
{
	static char gen[20][CODE_DISPLAY_MAX];
	static struct page p;
	struct redeem_result r;
	struct svc acme;
	int64_t last = -1;
	int i;

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 20, 2, gen);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(
		    redeem_code(&fx.svc, gen[i * 3], "a@x", NULL, &r), 0);
		ck_assert_int_eq(r.error, ERROR_NONE);
	}
	memset(&p, 0, sizeof(p));
	page_all(&fx.svc, "promo", CODES_USED, 2, &p);
	ck_assert_int_eq(p.n, 5);
	ck_assert_int_eq(p.ordered, 1);
	page_all(&fx.svc, "promo", CODES_UNUSED, 4, &p);
	ck_assert_int_eq(p.n, 15);
	page_all(&fx.svc, NULL, CODES_USED, 1000, &p);
	ck_assert_int_eq(p.n, 5);
	page_all(&fx.svc, "promo", CODES_ALL, 1000, &p);
	ck_assert_int_eq(p.n, 20);

	/* Another tenant sees none of them. */
	other_tenant("acme", &acme);
	page_all(&acme, NULL, CODES_ALL, 1000, &p);
	ck_assert_int_eq(p.n, 0);
	ck_assert_int_eq(
	    codes_page(&acme, "promo", CODES_ALL, 0, 10, on_page, &p, &last),
	    ERROR_NOT_FOUND);
	ck_assert_int_eq(last, 0);

	ck_assert_int_eq(
	    codes_page(&fx.svc, "promo", CODES_ALL, 0, 0, on_page, &p, &last),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(codes_page(&fx.svc, "promo", CODES_ALL, 0,
			     CODES_PAGE_MAX + 1, on_page, &p, &last),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(
	    codes_page(&fx.svc, "promo", CODES_ALL, 0, -1, on_page, &p, &last),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(
	    codes_page(&fx.svc, "promo", CODES_ALL, -1, 10, on_page, &p, &last),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(
	    codes_page(&fx.svc, "promo", CODES__MAX, 0, 10, on_page, &p, &last),
	    ERROR_BAD_REQUEST);
	/* Past the end: nothing, last 0. */
	ck_assert_int_eq(codes_page(&fx.svc, "promo", CODES_ALL, INT64_MAX, 10,
			     on_page, &p, &last),
	    ERROR_NONE);
	ck_assert_int_eq(last, 0);
}
END_TEST

Suite *
suite_apikey(void)
{
	Suite *s = suite_create("apikey");
	TCase *tc = tcase_create("apikey");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_apikey_scope_names);
	tcase_add_test(tc, test_apikey_create_verify);
	tcase_add_test(tc, test_apikey_stored_hashed);
	tcase_add_test(tc, test_apikey_hostile_texts);
	tcase_add_test(tc, test_apikey_bad_create);
	tcase_add_test(tc, test_apikey_revoke);
	tcase_add_test(tc, test_apikey_list);
	tcase_add_test(tc, test_apikey_tenant_isolation);
	tcase_add_test(tc, test_apikey_verify_carries_unchecked);
	tcase_add_test(tc, test_admin_role_names);
	tcase_add_test(tc, test_admin_create_and_check);
	tcase_add_test(tc, test_admin_hostile_logins);
	tcase_add_test(tc, test_admin_duplicate);
	tcase_add_test(tc, test_admin_bad_inputs);
	tcase_add_test(tc, test_admin_tenant_isolation);
	tcase_add_test(tc, test_secret_get_or_create);
	tcase_add_test(tc, test_secret_race);
	tcase_add_test(tc, test_codes_import_list_basic);
	tcase_add_test(tc, test_codes_import_list_expiry_and_pool);
	tcase_add_test(tc, test_codes_import_list_bad_code_writes_nothing);
	tcase_add_test(tc, test_codes_import_list_other_tenant);
	tcase_add_test(tc, test_codes_page_each_once);
	tcase_add_test(tc, test_codes_page_filters_and_args);
	suite_add_tcase(s, tc);
	return s;
}
