/*
 * Dashboard sessions (app/core/session.c) and the admin changes that end
 * them (admin_passwd, admin_disable): login across tenants, throttling
 * per address and per e-mail, rotation, idle and absolute timeouts,
 * logout, CSRF, roles, cleanup. Times are moved by ageing rows with SQL,
 * never by sleeping. Password hashes are slow on purpose: each test
 * hashes as few times as it can.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "../../app/core/abuse.h"
#include "../../app/core/admin.h"
#include "../../app/core/audit.h"
#include "../../app/core/session.h"
#include "../../app/core/sweep.h"
#include "fixture.h"

#define PW "correct horse"
#define IP "203.0.113.7"
#define WEEK (7 * 24 * 3600)

static int64_t
mk_admin(struct svc *s, const char *email, enum admin_role role, const char *pw)
{
	struct admin a;

	ck_assert_int_eq(
	    admin_create(s, email, role, pw, NULL, &a), ERROR_NONE);
	return a.id;
}

static void
other_tenant(const char *name, struct svc *out)
{
	ck_assert_int_eq(tenant_create(fx.db, name), ERROR_NONE);
	ck_assert_int_eq(svc_open(out, fx.db, name), ERROR_NONE);
}

static int
token_chars_ok(const char *t)
{
	size_t i;

	if (strlen(t) != SESSION_TOKEN_LEN)
		return 0;
	for (i = 0; t[i] != '\0'; i++)
		if (!((t[i] >= 'A' && t[i] <= 'Z') ||
			(t[i] >= 'a' && t[i] <= 'z') ||
			(t[i] >= '0' && t[i] <= '9') || t[i] == '-' ||
			t[i] == '_'))
			return 0;
	return 1;
}

/* A login, with the contract's invariants on every outcome. */
static enum error_word
login_from(const char *email, const char *pw, const char *ip, const char *old,
    char token[SESSION_TOKEN_LEN + 1], struct session *s)
{
	int64_t ra = -1;
	enum error_word e;

	memset(token, 'x', SESSION_TOKEN_LEN + 1);
	memset(s, 0x5a, sizeof(*s));
	e = session_login(fx.db, email, pw, ip, old, token, s, &ra);
	if (e == ERROR_NONE) {
		ck_assert(token_chars_ok(token));
		ck_assert(token_chars_ok(s->csrf));
		ck_assert_str_ne(token, s->csrf);
		ck_assert_int_gt(s->id, 0);
		ck_assert_int_eq(ra, 0);
	} else {
		ck_assert_str_eq(token, "");
		ck_assert_int_eq(s->id, 0);
		ck_assert_str_eq(s->csrf, "");
		if (e == ERROR_RATE_LIMITED)
			ck_assert_int_gt(ra, 0);
		else
			ck_assert_int_eq(ra, 0);
	}
	return e;
}

static enum error_word
login(const char *email, const char *pw, char token[SESSION_TOKEN_LEN + 1],
    struct session *s)
{
	return login_from(email, pw, IP, NULL, token, s);
}

static enum error_word
check(const char *token)
{
	struct session s;
	enum error_word e;

	memset(&s, 0x5a, sizeof(s));
	e = session_check(fx.db, token, &s);
	if (e != ERROR_NONE)
		ck_assert_int_eq(s.id, 0);
	return e;
}

static int64_t
db_now(void)
{
	return fx_count("SELECT UNIX_TIMESTAMP()");
}

static double
seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

START_TEST(test_session_login_ok)
{
	char token[SESSION_TOKEN_LEN + 1], sql[256];
	struct session s, c;
	int64_t id, now;

	id = mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	now = db_now();
	ck_assert_int_eq(login(" ANN@Example.com", PW, token, &s), ERROR_NONE);
	ck_assert_int_eq(s.admin_id, id);
	ck_assert_int_eq(s.tenant_id, fx.svc.tenant_id);
	ck_assert_str_eq(s.tenant, "default");
	ck_assert_str_eq(s.email, "ann@example.com");
	ck_assert_int_eq(s.role, ADMIN_OWNER);
	ck_assert_int_ge(s.created_at, now - 5);
	ck_assert_int_le(s.created_at, now + 5);
	ck_assert_int_eq(s.last_seen_at, s.created_at);
	ck_assert_int_eq(s.expires_at, s.created_at + SESSION_IDLE_DEFAULT);

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(session_check(fx.db, token, &c), ERROR_NONE);
	ck_assert_int_eq(c.id, s.id);
	ck_assert_int_eq(c.admin_id, id);
	ck_assert_int_eq(c.tenant_id, fx.svc.tenant_id);
	ck_assert_str_eq(c.tenant, "default");
	ck_assert_str_eq(c.csrf, s.csrf);
	ck_assert_int_eq(c.role, ADMIN_OWNER);

	/* Only a hash of the token is stored; the address is kept. */
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM admin_sessions WHERE token_hash = '%s' "
	    "OR csrf = '%s'",
	    token, token);
	ck_assert_int_eq(fx_count(sql), 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "LENGTH(token_hash) = 64 AND ip = '" IP "'"),
	    1);
	/* Audited in the tenant, with who and from where. */
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM audit_log WHERE action = 'login' "
		     "AND email = 'ann@example.com' AND ip = '" IP "'"),
	    1);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM audit_log WHERE admin_id = %lld "
	    "AND tenant_id = %lld",
	    (long long)id, (long long)fx.svc.tenant_id);
	ck_assert_int_eq(fx_count(sql), 1);
	/* A success counts no failure. */
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures"), 0);
}
END_TEST

START_TEST(test_session_login_wrong_password)
{
	char token[SESSION_TOKEN_LEN + 1];
	struct session s;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	ck_assert_int_eq(login("ann@example.com", "Correct horse", token, &s),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    login("ann@example.com", "", token, &s), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    login("ann@example.com", NULL, token, &s), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions"), 0);
	/* Each failure is counted per address and per e-mail (tenant 0,
	 * kinds 3 and 4) and audited in the admin's tenant. */
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures WHERE "
				  "tenant_id = 0 AND kind = 3 AND subject = "
				  "'" IP "'"),
	    3);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures WHERE "
				  "tenant_id = 0 AND kind = 4 AND subject = "
				  "'ann@example.com'"),
	    3);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM audit_log WHERE action = "
		     "'login.failed' AND admin_id = 0 AND object = "
		     "'ann@example.com' AND ip = '" IP "' AND detail = "
		     "'wrong password'"),
	    3);
}
END_TEST

/* An unknown e-mail: the same word, about the same time (a hash is
 * checked anyway), counted, not audited (no tenant has it). */
START_TEST(test_session_login_unknown_email)
{
	char token[SESSION_TOKEN_LEN + 1];
	struct session s;
	double t0, unknown = 1e9, wrong = 1e9, d;
	int i;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	for (i = 0; i < 3; i++) {
		t0 = seconds();
		ck_assert_int_eq(login("bob@example.com", PW, token, &s),
		    ERROR_UNAUTHORIZED);
		if ((d = seconds() - t0) < unknown)
			unknown = d;
		t0 = seconds();
		ck_assert_int_eq(
		    login("ann@example.com", "wrong pass", token, &s),
		    ERROR_UNAUTHORIZED);
		if ((d = seconds() - t0) < wrong)
			wrong = d;
	}
	ck_assert_msg(unknown > 0.3 * wrong,
	    "unknown e-mail %.3f s, wrong password %.3f s", unknown, wrong);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures WHERE "
				  "kind = 4 AND subject = 'bob@example.com'"),
	    3);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM audit_log WHERE "
				  "object = 'bob@example.com'"),
	    0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions"), 0);
}
END_TEST

START_TEST(test_session_login_disabled)
{
	char token[SESSION_TOKEN_LEN + 1], t2[SESSION_TOKEN_LEN + 1];
	struct session s;
	struct admin a;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_ADMIN, PW);
	mk_admin(&fx.svc, "bob@example.com", ADMIN_ADMIN, PW);
	ck_assert_int_eq(login("ann@example.com", PW, token, &s), ERROR_NONE);
	ck_assert_int_eq(login("bob@example.com", PW, t2, &s), ERROR_NONE);
	ck_assert_int_eq(
	    admin_disable(&fx.svc, " Ann@example.COM"), ERROR_NONE);
	/* Its sessions are over, another admin's are not. */
	ck_assert_int_eq(check(token), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(check(t2), ERROR_NONE);
	/* The right password no longer logs in, here or per tenant. */
	ck_assert_int_eq(
	    login("ann@example.com", PW, token, &s), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    admin_check_password(&fx.svc, "ann@example.com", PW, &a),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM audit_log WHERE action = "
		     "'login.failed' AND detail = 'admin disabled'"),
	    1);
	/* Idempotent: the first disabled_at stays. */
	fx_sql("UPDATE admins SET disabled_at = 1000 WHERE email = "
	       "'ann@example.com'");
	ck_assert_int_eq(admin_disable(&fx.svc, "ann@example.com"), ERROR_NONE);
	ck_assert_int_eq(fx_count("SELECT disabled_at FROM admins WHERE "
				  "email = 'ann@example.com'"),
	    1000);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admins WHERE "
				  "disabled_at IS NULL"),
	    1);
	ck_assert_int_eq(
	    admin_disable(&fx.svc, "cy@example.com"), ERROR_NOT_FOUND);
	ck_assert_int_eq(admin_disable(&fx.svc, "nobody"), ERROR_BAD_REQUEST);
	ck_assert_int_eq(admin_disable(&fx.svc, NULL), ERROR_BAD_REQUEST);
}
END_TEST

START_TEST(test_session_hostile_inputs)
{
	char token[SESSION_TOKEN_LEN + 1], big[600], bad_token[64];
	struct session s;
	size_t i;
	const char *emails[] = {NULL, "", "   ", "ann", "ann@", "@x", "a@b@c",
	    "ann@example.com\x01", "\xc3(@example.com", big};
	const char *tokens[] = {NULL, "", "short", bad_token, big,
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.",
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'"};

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	setenv("REDEEM_LOGIN_LIMIT", "1000", 1); /* many failures here */
	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	for (i = 0; i < NELEM(emails); i++)
		ck_assert_msg(
		    login(emails[i], PW, token, &s) == ERROR_UNAUTHORIZED,
		    "e-mail %zu", i);
	/* A password past the maximum never matches. */
	ck_assert_int_eq(
	    login("ann@example.com", big, token, &s), ERROR_UNAUTHORIZED);
	/* A hostile client address is recorded cleaned and cut. */
	ck_assert_int_eq(
	    login_from("ann@example.com", PW, big, NULL, token, &s),
	    ERROR_NONE);
	ck_assert_int_eq(
	    fx_count("SELECT MAX(LENGTH(ip)) FROM admin_sessions"), 63);
	ck_assert_int_eq(login_from("ann@example.com", PW,
			     "1.2.3.4'\x01\xff; --", NULL, token, &s),
	    ERROR_NONE);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "ip = '1.2.3.4''??; --'"),
	    1);
	ck_assert_int_eq(
	    login_from("ann@example.com", PW, NULL, NULL, token, &s),
	    ERROR_NONE);
	/* Tokens that cannot be one are refused without a lookup. */
	memcpy(bad_token, token, SESSION_TOKEN_LEN);
	bad_token[0] = token[0] == 'A' ? 'B' : 'A';
	bad_token[SESSION_TOKEN_LEN] = '\0';
	for (i = 0; i < NELEM(tokens); i++) {
		ck_assert_msg(
		    check(tokens[i]) == ERROR_UNAUTHORIZED, "token %zu", i);
		ck_assert_int_eq(session_end(fx.db, tokens[i]), ERROR_NONE);
	}
	ck_assert_int_eq(check(token), ERROR_NONE);
	unsetenv("REDEEM_LOGIN_LIMIT");
}
END_TEST

static void
limit3(void)
{
	setenv("REDEEM_LOGIN_LIMIT", "3", 1);
}

/* Failures from one address, over several e-mails, close it to every
 * e-mail (right password included) until they leave the window. */
START_TEST(test_session_throttle_address)
{
	char token[SESSION_TOKEN_LEN + 1];
	struct session s;
	int64_t ra = 0;
	int i;

	limit3();
	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	ck_assert_int_eq(
	    login_from("bob@example.com", PW, "192.0.2.1", NULL, token, &s),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    login_from("cy@example.com", PW, "192.0.2.1", NULL, token, &s),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(login_from("ann@example.com", "nope-nope", "192.0.2.1",
			     NULL, token, &s),
	    ERROR_UNAUTHORIZED);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(session_login(fx.db, "ann@example.com", PW,
				     "192.0.2.1", NULL, token, &s, &ra),
		    ERROR_RATE_LIMITED);
		ck_assert_int_gt(ra, SESSION_LOGIN_WINDOW_DEFAULT - 10);
		ck_assert_int_le(ra, SESSION_LOGIN_WINDOW_DEFAULT);
		ck_assert_str_eq(token, "");
	}
	/* A throttled attempt does not count; other addresses go on. */
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures WHERE "
				  "kind = 3"),
	    3);
	ck_assert_int_eq(
	    login_from("ann@example.com", PW, "192.0.2.2", NULL, token, &s),
	    ERROR_NONE);
	/* The redemption gate's counts are apart. */
	ck_assert_int_eq(
	    abuse_check(&fx.svc, "192.0.2.1", "x@example.com", &ra),
	    ERROR_NONE);
	/* By the database clock: almost out of the window, still closed,
	 * with a short wait; out of it, open. */
	fx_sql("UPDATE abuse_failures SET at = at - 890");
	ck_assert_int_eq(session_login(fx.db, "ann@example.com", PW,
			     "192.0.2.1", NULL, token, &s, &ra),
	    ERROR_RATE_LIMITED);
	ck_assert_int_ge(ra, 1);
	ck_assert_int_le(ra, 10);
	fx_sql("UPDATE abuse_failures SET at = at - 11");
	ck_assert_int_eq(
	    login_from("ann@example.com", PW, "192.0.2.1", NULL, token, &s),
	    ERROR_NONE);
	unsetenv("REDEEM_LOGIN_LIMIT");
}
END_TEST

/* Failures on one e-mail, from several addresses, close that e-mail (in
 * any spelling) everywhere, and only it. */
START_TEST(test_session_throttle_email)
{
	char token[SESSION_TOKEN_LEN + 1], ip[32];
	struct session s;
	int64_t ra = 0;
	int i;

	limit3();
	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	mk_admin(&fx.svc, "bob@example.com", ADMIN_OWNER, PW);
	for (i = 0; i < 3; i++) {
		snprintf(ip, sizeof(ip), "198.51.100.%d", i + 1);
		ck_assert_int_eq(login_from("ann@example.com", "wrong-pass", ip,
				     NULL, token, &s),
		    ERROR_UNAUTHORIZED);
	}
	ck_assert_int_eq(session_login(fx.db, "ANN@example.com ", PW,
			     "198.51.100.9", NULL, token, &s, &ra),
	    ERROR_RATE_LIMITED);
	ck_assert_int_gt(ra, 0);
	ck_assert_int_eq(session_login(fx.db, "ann@example.com", PW, NULL, NULL,
			     token, &s, &ra),
	    ERROR_RATE_LIMITED);
	ck_assert_int_eq(
	    login_from("bob@example.com", PW, "198.51.100.1", NULL, token, &s),
	    ERROR_NONE);
	/* A shorter window, from the environment, lets it out sooner. */
	setenv("REDEEM_LOGIN_WINDOW", "60", 1);
	fx_sql("UPDATE abuse_failures SET at = at - 61");
	ck_assert_int_eq(
	    login_from("ann@example.com", PW, "198.51.100.9", NULL, token, &s),
	    ERROR_NONE);
	unsetenv("REDEEM_LOGIN_WINDOW");
	unsetenv("REDEEM_LOGIN_LIMIT");
}
END_TEST

START_TEST(test_session_config)
{
	struct session_config c;

	unsetenv("REDEEM_SESSION_IDLE");
	unsetenv("REDEEM_SESSION_MAX");
	unsetenv("REDEEM_LOGIN_LIMIT");
	unsetenv("REDEEM_LOGIN_WINDOW");
	session_config_defaults(&c);
	ck_assert_int_eq(c.idle, 1800);
	ck_assert_int_eq(c.max, 43200);
	ck_assert_int_eq(c.login_limit, 10);
	ck_assert_int_eq(c.login_window, 900);
	setenv("REDEEM_SESSION_IDLE", "600", 1);
	setenv("REDEEM_SESSION_MAX", "3600", 1);
	setenv("REDEEM_LOGIN_LIMIT", "5", 1);
	setenv("REDEEM_LOGIN_WINDOW", "bogus", 1);
	session_config_defaults(&c);
	ck_assert_int_eq(c.idle, 600);
	ck_assert_int_eq(c.max, 3600);
	ck_assert_int_eq(c.login_limit, 5);
	ck_assert_int_eq(c.login_window, 900);
	setenv("REDEEM_SESSION_IDLE", "5", 1); /* under the minimum */
	session_config_defaults(&c);
	ck_assert_int_eq(c.idle, 1800);
	unsetenv("REDEEM_SESSION_IDLE");
	unsetenv("REDEEM_SESSION_MAX");
	unsetenv("REDEEM_LOGIN_LIMIT");
	unsetenv("REDEEM_LOGIN_WINDOW");
}
END_TEST

/* The default limit is 10 failures. */
START_TEST(test_session_throttle_default_limit)
{
	char token[SESSION_TOKEN_LEN + 1];
	struct session s;
	int i;

	unsetenv("REDEEM_LOGIN_LIMIT");
	for (i = 0; i < 9; i++)
		fx_sql("INSERT INTO abuse_failures (tenant_id, kind, subject, "
		       "at) VALUES (0, 3, '" IP "', UNIX_TIMESTAMP())");
	ck_assert_int_eq(
	    login("bob@example.com", PW, token, &s), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    login("bob@example.com", PW, token, &s), ERROR_RATE_LIMITED);
}
END_TEST

/* A login over a session ends it; a login without one ends none. */
START_TEST(test_session_rotation)
{
	char t1[SESSION_TOKEN_LEN + 1], t2[SESSION_TOKEN_LEN + 1];
	char t3[SESSION_TOKEN_LEN + 1];
	struct session s1, s2, s3;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	ck_assert_int_eq(login("ann@example.com", PW, t1, &s1), ERROR_NONE);
	ck_assert_int_eq(
	    login_from("ann@example.com", PW, IP, t1, t2, &s2), ERROR_NONE);
	ck_assert_str_ne(t1, t2);
	ck_assert_str_ne(s1.csrf, s2.csrf);
	ck_assert_int_ne(s1.id, s2.id);
	ck_assert_int_eq(check(t1), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(check(t2), ERROR_NONE);
	/* Without an old token (or with garbage) nothing else ends. */
	ck_assert_int_eq(
	    login_from("ann@example.com", PW, IP, "garbage", t3, &s3),
	    ERROR_NONE);
	ck_assert_int_eq(check(t2), ERROR_NONE);
	ck_assert_int_eq(check(t3), ERROR_NONE);
	/* A failed login over a session leaves it alone. */
	ck_assert_int_eq(
	    login_from("ann@example.com", "wrong-pass", IP, t3, t1, &s1),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(check(t3), ERROR_NONE);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "ended_at IS NULL"),
	    2);
}
END_TEST

START_TEST(test_session_idle_timeout)
{
	char token[SESSION_TOKEN_LEN + 1];
	struct session s, c;
	int64_t now;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_VIEWER, PW);
	ck_assert_int_eq(login("ann@example.com", PW, token, &s), ERROR_NONE);
	/* Seen within the minute: no write. */
	fx_sql("UPDATE admin_sessions SET last_seen_at = UNIX_TIMESTAMP() - "
	       "30, created_at = UNIX_TIMESTAMP() - 100");
	ck_assert_int_eq(check(token), ERROR_NONE);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "last_seen_at <= UNIX_TIMESTAMP() - 25"),
	    1);
	/* Seen longer ago, still within the limit: moved to now. */
	fx_sql("UPDATE admin_sessions SET last_seen_at = UNIX_TIMESTAMP() - "
	       "1790");
	now = db_now();
	ck_assert_int_eq(session_check(fx.db, token, &c), ERROR_NONE);
	ck_assert_int_ge(c.last_seen_at, now);
	ck_assert_int_le(c.last_seen_at, now + 5);
	ck_assert_int_eq(c.expires_at, c.last_seen_at + SESSION_IDLE_DEFAULT);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "last_seen_at >= UNIX_TIMESTAMP() - 5"),
	    1);
	/* At the limit: over, and a check does not revive it. */
	fx_sql("UPDATE admin_sessions SET last_seen_at = UNIX_TIMESTAMP() - "
	       "1800");
	ck_assert_int_eq(check(token), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(check(token), ERROR_UNAUTHORIZED);
	/* The limit comes from the environment. */
	setenv("REDEEM_SESSION_IDLE", "120", 1);
	fx_sql("UPDATE admin_sessions SET last_seen_at = UNIX_TIMESTAMP() - "
	       "100");
	ck_assert_int_eq(session_check(fx.db, token, &c), ERROR_NONE);
	ck_assert_int_eq(c.expires_at, c.last_seen_at + 120);
	fx_sql("UPDATE admin_sessions SET last_seen_at = UNIX_TIMESTAMP() - "
	       "121");
	ck_assert_int_eq(check(token), ERROR_UNAUTHORIZED);
	unsetenv("REDEEM_SESSION_IDLE");
}
END_TEST

START_TEST(test_session_absolute_timeout)
{
	char token[SESSION_TOKEN_LEN + 1];
	struct session s, c;
	int i;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	ck_assert_int_eq(login("ann@example.com", PW, token, &s), ERROR_NONE);
	fx_sql("UPDATE admin_sessions SET created_at = UNIX_TIMESTAMP() - "
	       "43190, last_seen_at = UNIX_TIMESTAMP() - 120");
	ck_assert_int_eq(session_check(fx.db, token, &c), ERROR_NONE);
	/* The absolute limit is the sooner one now, and activity does not
	 * move it. */
	ck_assert_int_eq(c.expires_at, c.created_at + SESSION_MAX_DEFAULT);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(check(token), ERROR_NONE);
	fx_sql("UPDATE admin_sessions SET created_at = UNIX_TIMESTAMP() - "
	       "43200");
	ck_assert_int_eq(check(token), ERROR_UNAUTHORIZED);
	setenv("REDEEM_SESSION_MAX", "3600", 1);
	fx_sql("UPDATE admin_sessions SET created_at = UNIX_TIMESTAMP() - "
	       "3599, last_seen_at = UNIX_TIMESTAMP()");
	ck_assert_int_eq(check(token), ERROR_NONE);
	fx_sql("UPDATE admin_sessions SET created_at = UNIX_TIMESTAMP() - "
	       "3600");
	ck_assert_int_eq(check(token), ERROR_UNAUTHORIZED);
	unsetenv("REDEEM_SESSION_MAX");
}
END_TEST

START_TEST(test_session_logout)
{
	char t1[SESSION_TOKEN_LEN + 1], t2[SESSION_TOKEN_LEN + 1];
	struct session s;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	ck_assert_int_eq(login("ann@example.com", PW, t1, &s), ERROR_NONE);
	ck_assert_int_eq(login("ann@example.com", PW, t2, &s), ERROR_NONE);
	ck_assert_int_eq(session_end(fx.db, t1), ERROR_NONE);
	ck_assert_int_eq(check(t1), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(check(t2), ERROR_NONE);
	/* Idempotent: the first end stays. */
	fx_sql("UPDATE admin_sessions SET ended_at = 5 WHERE ended_at IS NOT "
	       "NULL");
	ck_assert_int_eq(session_end(fx.db, t1), ERROR_NONE);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "ended_at = 5"),
	    1);
	ck_assert_int_eq(session_end(fx.db, t2), ERROR_NONE);
	ck_assert_int_eq(check(t2), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "ended_at IS NULL"),
	    0);
}
END_TEST

START_TEST(test_session_csrf)
{
	char t1[SESSION_TOKEN_LEN + 1], t2[SESSION_TOKEN_LEN + 1];
	char bad[SESSION_CSRF_LEN + 2];
	struct session s1, s2, c;
	size_t i;

	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	ck_assert_int_eq(login("ann@example.com", PW, t1, &s1), ERROR_NONE);
	ck_assert_int_eq(login("ann@example.com", PW, t2, &s2), ERROR_NONE);
	ck_assert_str_ne(s1.csrf, s2.csrf);
	ck_assert_int_eq(session_csrf_ok(&s1, s1.csrf), 1);
	ck_assert_int_eq(session_check(fx.db, t1, &c), ERROR_NONE);
	ck_assert_int_eq(session_csrf_ok(&c, s1.csrf), 1);
	ck_assert_int_eq(session_csrf_ok(&s1, s2.csrf), 0);
	ck_assert_int_eq(session_csrf_ok(&s1, t1), 0);
	ck_assert_int_eq(session_csrf_ok(&s1, NULL), 0);
	ck_assert_int_eq(session_csrf_ok(&s1, ""), 0);
	ck_assert_int_eq(session_csrf_ok(NULL, s1.csrf), 0);
	/* Any one character changed, one short, one long. */
	for (i = 0; i < SESSION_CSRF_LEN; i++) {
		memcpy(bad, s1.csrf, sizeof(s1.csrf));
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		ck_assert_int_eq(session_csrf_ok(&s1, bad), 0);
	}
	memcpy(bad, s1.csrf, sizeof(s1.csrf));
	bad[SESSION_CSRF_LEN - 1] = '\0';
	ck_assert_int_eq(session_csrf_ok(&s1, bad), 0);
	memcpy(bad, s1.csrf, SESSION_CSRF_LEN);
	bad[SESSION_CSRF_LEN] = 'A';
	bad[SESSION_CSRF_LEN + 1] = '\0';
	ck_assert_int_eq(session_csrf_ok(&s1, bad), 0);
	/* A session without a token (zeroed) matches nothing. */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(session_csrf_ok(&c, ""), 0);
}
END_TEST

START_TEST(test_session_roles)
{
	static const struct {
		const char *email;
		enum admin_role role;
		int write;
	} cases[] = {
	    {"o@example.com", ADMIN_OWNER, 1},
	    {"a@example.com", ADMIN_ADMIN, 1},
	    {"v@example.com", ADMIN_VIEWER, 0},
	};
	char token[SESSION_TOKEN_LEN + 1];
	struct session s, c;
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		mk_admin(&fx.svc, cases[i].email, cases[i].role, PW);
		ck_assert_int_eq(
		    login(cases[i].email, PW, token, &s), ERROR_NONE);
		ck_assert_int_eq(s.role, cases[i].role);
		ck_assert_int_eq(session_can_write(&s), cases[i].write);
		ck_assert_int_eq(session_check(fx.db, token, &c), ERROR_NONE);
		ck_assert_int_eq(c.role, cases[i].role);
		ck_assert_int_eq(session_can_write(&c), cases[i].write);
	}
	ck_assert_int_eq(session_can_write(NULL), 0);
	memset(&c, 0, sizeof(c));
	c.role = ADMIN__MAX;
	ck_assert_int_eq(session_can_write(&c), 0);
}
END_TEST

/* One e-mail in two tenants: the password picks the admin, oldest first;
 * each session and audit row stays in its tenant. */
START_TEST(test_session_email_in_two_tenants)
{
	char t1[SESSION_TOKEN_LEN + 1], t2[SESSION_TOKEN_LEN + 1], sql[256];
	struct session s1, s2;
	struct svc acme;
	int64_t id_acme, id_def;

	other_tenant("acme", &acme);
	id_acme = mk_admin(&acme, "bob@example.com", ADMIN_VIEWER, "acme-pass");
	id_def = mk_admin(&fx.svc, "bob@example.com", ADMIN_OWNER, "home-pass");
	ck_assert_int_eq(
	    login("bob@example.com", "home-pass", t1, &s1), ERROR_NONE);
	ck_assert_int_eq(s1.admin_id, id_def);
	ck_assert_str_eq(s1.tenant, "default");
	ck_assert_int_eq(s1.role, ADMIN_OWNER);
	ck_assert_int_eq(
	    login("bob@example.com", "acme-pass", t2, &s2), ERROR_NONE);
	ck_assert_int_eq(s2.admin_id, id_acme);
	ck_assert_int_eq(s2.tenant_id, acme.tenant_id);
	ck_assert_str_eq(s2.tenant, "acme");
	ck_assert_int_eq(s2.role, ADMIN_VIEWER);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM audit_log WHERE action = 'login' AND "
	    "tenant_id = %lld AND admin_id = %lld",
	    (long long)acme.tenant_id, (long long)id_acme);
	ck_assert_int_eq(fx_count(sql), 1);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM admin_sessions WHERE tenant_id = %lld",
	    (long long)acme.tenant_id);
	ck_assert_int_eq(fx_count(sql), 1);
	/* A wrong password is audited in both tenants. */
	ck_assert_int_eq(login("bob@example.com", "neither-one", t1, &s1),
	    ERROR_UNAUTHORIZED);
	ck_assert_int_eq(fx_count("SELECT COUNT(DISTINCT tenant_id) FROM "
				  "audit_log WHERE action = 'login.failed'"),
	    2);
	/* The same password in both: the oldest admin (acme's) wins, and
	 * the other once the oldest is disabled. */
	ck_assert_int_eq(
	    admin_passwd(&fx.svc, "bob@example.com", "acme-pass", NULL),
	    ERROR_NONE);
	ck_assert_int_eq(
	    login("bob@example.com", "acme-pass", t1, &s1), ERROR_NONE);
	ck_assert_int_eq(s1.admin_id, id_acme);
	/* Disabling acme's admin ends acme's sessions only. */
	ck_assert_int_eq(admin_disable(&acme, "bob@example.com"), ERROR_NONE);
	ck_assert_int_eq(check(t1), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    login("bob@example.com", "acme-pass", t2, &s2), ERROR_NONE);
	ck_assert_int_eq(s2.admin_id, id_def);
	ck_assert_str_eq(s2.tenant, "default");
}
END_TEST

START_TEST(test_session_admin_passwd)
{
	char t1[SESSION_TOKEN_LEN + 1], t2[SESSION_TOKEN_LEN + 1];
	char gen[ADMIN_PASSWORD_GEN + 1];
	struct session s;
	struct svc acme;

	other_tenant("acme", &acme);
	mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	mk_admin(&acme, "ann@example.com", ADMIN_OWNER, "acme-pass");
	ck_assert_int_eq(login("ann@example.com", PW, t1, &s), ERROR_NONE);
	ck_assert_int_eq(
	    login("ann@example.com", "acme-pass", t2, &s), ERROR_NONE);
	ck_assert_int_eq(
	    admin_passwd(&fx.svc, "Ann@example.com", "new horse staple", NULL),
	    ERROR_NONE);
	/* Every session of that admin is over; the other tenant's go on. */
	ck_assert_int_eq(check(t1), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(check(t2), ERROR_NONE);
	ck_assert_int_eq(
	    login("ann@example.com", PW, t1, &s), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(
	    login("ann@example.com", "new horse staple", t1, &s), ERROR_NONE);
	ck_assert_str_eq(s.tenant, "default");
	/* Generated: 20 characters of the alphabet, and it logs in. */
	memset(gen, 'x', sizeof(gen));
	ck_assert_int_eq(
	    admin_passwd(&fx.svc, "ann@example.com", NULL, gen), ERROR_NONE);
	ck_assert_uint_eq(strlen(gen), ADMIN_PASSWORD_GEN);
	ck_assert_int_eq(check(t1), ERROR_UNAUTHORIZED);
	ck_assert_int_eq(login("ann@example.com", gen, t1, &s), ERROR_NONE);
	/* Refusals change nothing. */
	memset(gen, 'x', sizeof(gen));
	ck_assert_int_eq(admin_passwd(&fx.svc, "cy@example.com", NULL, gen),
	    ERROR_NOT_FOUND);
	ck_assert_str_eq(gen, "");
	ck_assert_int_eq(admin_passwd(&fx.svc, "ann@example.com", "short", gen),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(admin_passwd(&fx.svc, "nobody", "long enough", gen),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(admin_passwd(&fx.svc, "ann@example.com", NULL, NULL),
	    ERROR_BAD_REQUEST);
	ck_assert_int_eq(check(t1), ERROR_NONE);
	/* A disabled admin stays disabled under a new password. */
	ck_assert_int_eq(admin_disable(&acme, "ann@example.com"), ERROR_NONE);
	ck_assert_int_eq(
	    admin_passwd(&acme, "ann@example.com", "acme-pass-2", NULL),
	    ERROR_NONE);
	ck_assert_int_eq(login("ann@example.com", "acme-pass-2", t2, &s),
	    ERROR_UNAUTHORIZED);
}
END_TEST

/* A session row planted with times relative to the database clock. */
static void
plant(int64_t admin_id, int n, const char *created, const char *seen,
    const char *ended)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
	    "INSERT INTO admin_sessions (tenant_id, admin_id, token_hash, "
	    "csrf, ip, created_at, last_seen_at, ended_at) VALUES (%lld, "
	    "%lld, 'h%d', 'c', '', UNIX_TIMESTAMP() - %s, UNIX_TIMESTAMP() - "
	    "%s, %s)",
	    (long long)fx.svc.tenant_id, (long long)admin_id, n, created, seen,
	    ended);
	fx_sql(sql);
}

START_TEST(test_session_cleanup)
{
	struct sweep_report r;
	int64_t id, done = -1;

	id = mk_admin(&fx.svc, "ann@example.com", ADMIN_OWNER, PW);
	/* Gone: ended 8 days ago; idle since 8 days (the idle limit
	 * included); past the absolute limit for 8 days. */
	plant(id, 1, "700000", "700000", "UNIX_TIMESTAMP() - 691200");
	plant(id, 2, "700000", "606600", "NULL");
	plant(id, 3, "648000", "10", "NULL");
	/* Kept: ended 6 days ago; idle 6 days; past the absolute limit
	 * for 6 days; live. */
	plant(id, 4, "700000", "700000", "UNIX_TIMESTAMP() - 518400");
	plant(id, 5, "600000", "520000", "NULL");
	plant(id, 6, "561600", "10", "NULL");
	plant(id, 7, "100", "10", "NULL");
	/* In batches: one at a time, then the rest. */
	ck_assert_int_eq(session_cleanup(fx.db, WEEK, 1, &done), 0);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(session_cleanup(fx.db, WEEK, 800, &done), 0);
	ck_assert_int_eq(done, 2);
	ck_assert_int_eq(session_cleanup(fx.db, WEEK, 800, &done), 0);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions WHERE "
				  "token_hash IN ('h1', 'h2', 'h3')"),
	    0);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions"), 4);
	ck_assert_int_eq(session_cleanup(fx.db, -1, 800, &done), -1);
	ck_assert_int_eq(session_cleanup(fx.db, WEEK, 0, &done), -1);

	/* The sweeper's cleanup job does it too, and keeps failed logins
	 * for the login window, longer than the redemption gate's. */
	plant(id, 8, "700000", "700000", "UNIX_TIMESTAMP() - 691200");
	fx_sql("INSERT INTO abuse_failures (tenant_id, kind, subject, at) "
	       "VALUES (0, 3, '" IP "', UNIX_TIMESTAMP() - 700), "
	       "(0, 4, 'x@example.com', UNIX_TIMESTAMP() - 1000)");
	ck_assert_int_eq(
	    sweep_run(fx.db, SWEEP_CLEANUP, "test", &r), ERROR_NONE);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM admin_sessions"), 4);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures"), 1);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM abuse_failures WHERE "
				  "kind = 3"),
	    1);
}
END_TEST

Suite *
suite_session(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("session");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_session_login_ok);
	tcase_add_test(tc, test_session_login_wrong_password);
	tcase_add_test(tc, test_session_login_unknown_email);
	tcase_add_test(tc, test_session_login_disabled);
	tcase_add_test(tc, test_session_hostile_inputs);
	tcase_add_test(tc, test_session_throttle_address);
	tcase_add_test(tc, test_session_throttle_email);
	tcase_add_test(tc, test_session_throttle_default_limit);
	tcase_add_test(tc, test_session_config);
	tcase_add_test(tc, test_session_rotation);
	tcase_add_test(tc, test_session_idle_timeout);
	tcase_add_test(tc, test_session_absolute_timeout);
	tcase_add_test(tc, test_session_logout);
	tcase_add_test(tc, test_session_csrf);
	tcase_add_test(tc, test_session_roles);
	tcase_add_test(tc, test_session_email_in_two_tenants);
	tcase_add_test(tc, test_session_admin_passwd);
	tcase_add_test(tc, test_session_cleanup);
	suite_add_tcase(s, tc);
	return s;
}
