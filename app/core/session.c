/*
 * Dashboard sessions. The token is 32 bytes from libsodium's CSPRNG; the
 * database keeps only its BLAKE2b hash (a stolen table opens no session),
 * found by an index and compared again in constant time. Failed logins
 * are counted in the abuse gate's table under tenant 0, which no tenant
 * has, so that the count spans tenants as the login does.
 */
#include <string.h>

#include <sodium.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "audit.h"
#include "secret.h"
#include "session.h"

/* The abuse gate uses kinds 1 and 2 (abuse.c, the catalog's literals);
 * failed logins the next two. */
enum { LOGIN_ADDRESS = 3, LOGIN_EMAIL = 4 };

#define TOKEN_BYTES 32
#define TOKEN_VARIANT sodium_base64_VARIANT_URLSAFE_NO_PADDING
#define TOUCH_EVERY 60 /* s; the catalog's STMT_SESSION_TOUCH says 60 */
/* Admins sharing one e-mail across tenants that a login tries. */
#define LOGIN_CANDIDATES 16

_Static_assert(sodium_base64_ENCODED_LEN(TOKEN_BYTES, TOKEN_VARIANT) ==
		   SESSION_TOKEN_LEN + 1,
    "a token is 43 characters of base64url");
_Static_assert(SESSION_CSRF_LEN == SESSION_TOKEN_LEN, "made alike");

void
session_config_defaults(struct session_config *c)
{
	c->idle = env_i64(
	    "REDEEM_SESSION_IDLE", SESSION_IDLE_DEFAULT, 60, 86400 * 30);
	c->max =
	    env_i64("REDEEM_SESSION_MAX", SESSION_MAX_DEFAULT, 60, 86400 * 30);
	c->login_limit = env_i64(
	    "REDEEM_LOGIN_LIMIT", SESSION_LOGIN_LIMIT_DEFAULT, 1, 1000000);
	c->login_window = env_i64(
	    "REDEEM_LOGIN_WINDOW", SESSION_LOGIN_WINDOW_DEFAULT, 1, 86400 * 30);
}

static void
token_new(char out[SESSION_TOKEN_LEN + 1])
{
	unsigned char b[TOKEN_BYTES];

	randombytes_buf(b, sizeof(b));
	sodium_bin2base64(
	    out, SESSION_TOKEN_LEN + 1, b, sizeof(b), TOKEN_VARIANT);
	sodium_memzero(b, sizeof(b));
}

/* Malformed tokens never reach the database. */
static int
token_ok(const char *t)
{
	size_t i;

	if (t == NULL || strnlen(t, SESSION_TOKEN_LEN + 1) != SESSION_TOKEN_LEN)
		return 0;
	for (i = 0; i < SESSION_TOKEN_LEN; i++)
		if (!((t[i] >= 'A' && t[i] <= 'Z') ||
			(t[i] >= 'a' && t[i] <= 'z') ||
			(t[i] >= '0' && t[i] <= '9') || t[i] == '-' ||
			t[i] == '_'))
			return 0;
	return 1;
}

static void
set_expiry(const struct session_config *c, struct session *s)
{
	int64_t idle = s->last_seen_at + c->idle, max = s->created_at + c->max;

	s->expires_at = idle < max ? idle : max;
}

/* The live session of a token hash: DB_ROW with *out and the database
 * clock in *now, DB_OK for none, or an error. */
static int
lookup(struct db *db, const struct session_config *c, const char *hash,
    struct session *out, int64_t *now)
{
	struct db_stmt *st;
	const char *t;
	int rc, match;

	memset(out, 0, sizeof(*out));
	rc = db_query(
	    db, STMT_SESSION_LOOKUP, &st, "tii", hash, c->idle, c->max);
	if (rc != DB_ROW)
		return rc;
	out->id = db_col_i64(st, 0);
	out->tenant_id = db_col_i64(st, 1);
	out->admin_id = db_col_i64(st, 2);
	if ((t = db_col_text(st, 3)) != NULL)
		str_copy(out->tenant, t, sizeof(out->tenant));
	if ((t = db_col_text(st, 4)) != NULL)
		str_copy(out->email, t, sizeof(out->email));
	if ((t = db_col_text(st, 5)) == NULL ||
	    admin_role_parse(t, &out->role) == -1)
		out->role = ADMIN_VIEWER; /* the CHECK keeps this unreachable */
	if ((t = db_col_text(st, 6)) != NULL)
		str_copy(out->csrf, t, sizeof(out->csrf));
	out->created_at = db_col_i64(st, 7);
	out->last_seen_at = db_col_i64(st, 8);
	t = db_col_text(st, 9);
	match = t != NULL && strlen(t) == SECRET_HASH_HEX - 1 &&
		sodium_memcmp(t, hash, SECRET_HASH_HEX - 1) == 0;
	*now = db_col_i64(st, 10);
	if ((t = db_col_text(st, 11)) != NULL)
		str_copy(out->time_zone, t, sizeof(out->time_zone));
	db_reset(st);
	if (!match) {
		memset(out, 0, sizeof(*out));
		return DB_OK;
	}
	set_expiry(c, out);
	return DB_ROW;
}

/* ERROR_NONE, ERROR_RATE_LIMITED with *retry_after, ERROR_UNAVAILABLE.
 * An empty key is never recorded, so it counts nothing. */
static enum error_word
login_throttle(struct db *db, const struct session_config *c, const char *ip,
    const char *email, int64_t *retry_after)
{
	struct db_stmt *st;
	int64_t w = c->login_window, left;
	int rc, over_ip, over_email;

	rc = db_query(db, STMT_LOGIN_THROTTLE, &st, "tititiitii", ip, w, email,
	    w, ip, w, w, email, w, w);
	if (rc != DB_ROW)
		return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
	over_ip = *ip != '\0' && db_col_i64(st, 0) >= c->login_limit;
	over_email = *email != '\0' && db_col_i64(st, 1) >= c->login_limit;
	/* The wait: until every key over its limit is under it again. */
	if (over_ip && !db_col_null(st, 2) &&
	    (left = db_col_i64(st, 2)) > *retry_after)
		*retry_after = left;
	if (over_email && !db_col_null(st, 3) &&
	    (left = db_col_i64(st, 3)) > *retry_after)
		*retry_after = left;
	db_reset(st);
	if (!over_ip && !over_email)
		return ERROR_NONE;
	if (*retry_after < 1)
		*retry_after = 1;
	return ERROR_RATE_LIMITED;
}

static void
login_record(
    struct db *db, const struct session_config *c, int kind, const char *key)
{
	int rc;

	if (*key == '\0')
		return;
	rc = db_exec(db, STMT_ABUSE_PRUNE, NULL, "iiti", (int64_t)0,
	    (int64_t)kind, key, c->login_window);
	if (rc == DB_OK)
		rc = db_exec(db, STMT_ABUSE_INSERT, NULL, "iit", (int64_t)0,
		    (int64_t)kind, key);
	if (rc != DB_OK)
		log_warn("admin login: recording a failure failed: %s",
		    db_errmsg(db));
}

/* An admin with the e-mail, in some tenant. */
struct candidate {
	struct admin a;
	int64_t tenant_id;
	char tenant[TENANT_NAME_MAX + 1];
	char hash[crypto_pwhash_STRBYTES];
	int has_hash, matched;
};

/* Reads every admin with the canonical e-mail into c (oldest first);
 * the statement is done with before any (slow) hash is checked. */
static int
candidates(struct db *db, const char *email, struct candidate *c, int *n)
{
	struct db_stmt *st;
	const char *t;
	int rc;

	*n = 0;
	rc = db_query(db, STMT_ADMIN_LOGIN_CANDIDATES, &st, "ti", email,
	    (int64_t)LOGIN_CANDIDATES);
	while (rc == DB_ROW && *n < LOGIN_CANDIDATES) {
		struct candidate *k = &c[(*n)++];

		memset(k, 0, sizeof(*k));
		k->a.id = db_col_i64(st, 0);
		if ((t = db_col_text(st, 1)) != NULL)
			str_copy(k->a.email, t, sizeof(k->a.email));
		if ((t = db_col_text(st, 2)) == NULL ||
		    admin_role_parse(t, &k->a.role) == -1)
			k->a.role = ADMIN_VIEWER;
		k->a.created_at = db_col_i64(st, 3);
		k->a.disabled_at = db_col_null(st, 4) ? 0 : db_col_i64(st, 4);
		k->has_hash = (t = db_col_text(st, 5)) != NULL &&
			      str_copy(k->hash, t, sizeof(k->hash)) == 0;
		k->tenant_id = db_col_i64(st, 6);
		if ((t = db_col_text(st, 7)) != NULL)
			str_copy(k->tenant, t, sizeof(k->tenant));
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc == DB_ROW ? DB_OK : rc;
}

struct login_tx {
	const struct candidate *c;
	const char *hash, *old_hash, *csrf, *ip;
};

/* The old session's end, the new session and its audit row: together. */
static int
login_tx(struct db *db, void *arg)
{
	struct login_tx *t = arg;
	int rc;

	if (t->old_hash != NULL && (rc = db_exec(db, STMT_SESSION_END, NULL,
					"t", t->old_hash)) != DB_OK)
		return rc;
	rc = db_exec(db, STMT_SESSION_INSERT, NULL, "iittt", t->c->tenant_id,
	    t->c->a.id, t->hash, t->csrf, t->ip);
	if (rc != DB_OK)
		return rc;
	return audit_insert(db, t->c->tenant_id, t->c->a.id, t->c->a.email,
	    t->ip, "login", "", NULL);
}

static enum error_word
login_failed(struct db *db, const struct session_config *cfg, const char *email,
    const char *ip, const struct candidate *c, int n)
{
	int i;

	login_record(db, cfg, LOGIN_ADDRESS, ip);
	login_record(db, cfg, LOGIN_EMAIL, email);
	for (i = 0; i < n; i++)
		if (audit_insert(db, c[i].tenant_id, 0, "", ip, "login.failed",
			email,
			c[i].matched ? "admin disabled" : "wrong password") !=
		    DB_OK)
			log_warn("admin login: audit in tenant %s failed: %s",
			    c[i].tenant, db_errmsg(db));
	log_info("admin login failed: %s from %s (%d admins)",
	    *email ? email : "(not an e-mail)", *ip ? ip : "-", n);
	return ERROR_UNAUTHORIZED;
}

enum error_word
session_login(struct db *db, const char *email, const char *password,
    const char *client_ip, const char *old_token,
    char token[SESSION_TOKEN_LEN + 1], struct session *out,
    int64_t *retry_after)
{
	struct candidate c[LOGIN_CANDIDATES];
	struct session_config cfg;
	struct login_tx t;
	char canon[ACCOUNT_MAX + 1] = "", ip[64], hash[SECRET_HASH_HEX];
	char old_hash[SECRET_HASH_HEX], csrf[SESSION_CSRF_LEN + 1];
	enum error_word e;
	int64_t now;
	int i, n = 0, win = -1, rc;

	token[0] = '\0';
	memset(out, 0, sizeof(*out));
	*retry_after = 0;
	session_config_defaults(&cfg);
	audit_clean(client_ip, ip, sizeof(ip));
	if (email == NULL || admin_email_canonical(email, canon) == -1)
		canon[0] = '\0';
	if ((e = login_throttle(db, &cfg, ip, canon, retry_after)) !=
	    ERROR_NONE) {
		if (e == ERROR_RATE_LIMITED)
			log_info("admin login throttled: %s from %s",
			    *canon ? canon : "(not an e-mail)", *ip ? ip : "-");
		return e;
	}
	if (*canon != '\0' && candidates(db, canon, c, &n) != DB_OK) {
		log_err("admin login: %s", db_errmsg(db));
		return ERROR_UNAVAILABLE;
	}
	/* One hash checked per admin tried, and one when there is none:
	 * unknown e-mail, wrong password and disabled take about as long. */
	if (n == 0)
		(void)admin_password_verify(NULL, password);
	for (i = 0; i < n && win < 0; i++) {
		c[i].matched = admin_password_verify(
		    c[i].has_hash ? c[i].hash : NULL, password);
		if (c[i].matched && c[i].a.disabled_at == 0)
			win = i;
	}
	for (i = 0; i < n; i++)
		sodium_memzero(c[i].hash, sizeof(c[i].hash));
	if (win < 0)
		return login_failed(db, &cfg, canon, ip, c, n);

	token_new(token);
	token_new(csrf);
	secret_hash_hex(token, hash);
	t.c = &c[win];
	t.hash = hash;
	t.old_hash = NULL;
	if (token_ok(old_token)) {
		secret_hash_hex(old_token, old_hash);
		t.old_hash = old_hash;
	}
	t.csrf = csrf;
	t.ip = ip;
	rc = db_transact(db, DB_TX_WRITE, login_tx, &t);
	if (rc == DB_OK)
		rc = lookup(db, &cfg, hash, out, &now);
	if (rc != DB_ROW) {
		sodium_memzero(token, SESSION_TOKEN_LEN + 1);
		memset(out, 0, sizeof(*out));
		if (rc == DB_OK) /* disabled in the meantime */
			return ERROR_UNAUTHORIZED;
		log_err("admin login: %s", db_errmsg(db));
		return svc_db_error(rc);
	}
	log_info("admin login: %s in tenant %s from %s", out->email,
	    out->tenant, *ip ? ip : "-");
	return ERROR_NONE;
}

enum error_word
session_check(struct db *db, const char *token, struct session *out)
{
	struct session_config cfg;
	char hash[SECRET_HASH_HEX];
	int64_t now, n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!token_ok(token))
		return ERROR_UNAUTHORIZED;
	session_config_defaults(&cfg);
	secret_hash_hex(token, hash);
	rc = lookup(db, &cfg, hash, out, &now);
	if (rc == DB_OK)
		return ERROR_UNAUTHORIZED;
	if (rc != DB_ROW) {
		log_err("admin session: %s", db_errmsg(db));
		return svc_db_error(rc);
	}
	if (out->last_seen_at <= now - TOUCH_EVERY) {
		/* A failed touch costs the session a minute at most: the
		 * request goes on. */
		if (db_exec(db, STMT_SESSION_TOUCH, &n, "ii", out->id,
			cfg.idle) != DB_OK)
			log_warn(
			    "admin session: touch failed: %s", db_errmsg(db));
		else if (n > 0) {
			out->last_seen_at = now;
			set_expiry(&cfg, out);
		}
	}
	return ERROR_NONE;
}

enum error_word
session_end(struct db *db, const char *token)
{
	char hash[SECRET_HASH_HEX];
	int rc;

	if (!token_ok(token))
		return ERROR_NONE;
	secret_hash_hex(token, hash);
	if ((rc = db_exec(db, STMT_SESSION_END, NULL, "t", hash)) != DB_OK) {
		log_err("admin logout: %s", db_errmsg(db));
		return svc_db_error(rc);
	}
	return ERROR_NONE;
}

int
session_csrf_ok(const struct session *s, const char *token)
{
	if (s == NULL || token == NULL ||
	    strnlen(token, SESSION_CSRF_LEN + 1) != SESSION_CSRF_LEN ||
	    strnlen(s->csrf, sizeof(s->csrf)) != SESSION_CSRF_LEN)
		return 0;
	return sodium_memcmp(s->csrf, token, SESSION_CSRF_LEN) == 0;
}

int
session_can_write(const struct session *s)
{
	return s != NULL && (s->role == ADMIN_OWNER || s->role == ADMIN_ADMIN);
}

int
session_cleanup(struct db *db, int64_t age, int batch, int64_t *done)
{
	static const enum stmt_id del[] = {STMT_SESSION_DELETE};
	struct session_config cfg;
	int64_t n;
	size_t i;

	*done = 0;
	if (age < 0 || batch < 1)
		return -1;
	session_config_defaults(&cfg);
	/* Ended, idle past the limit, past the absolute limit: each
	 * pick's time plus its limit is when the session died. */
	const struct {
		enum stmt_id pick;
		int64_t limit;
	} picks[] = {
	    {STMT_SESSION_ENDED_OLD, 0},
	    {STMT_SESSION_IDLE_OLD, cfg.idle},
	    {STMT_SESSION_ABSOLUTE_OLD, cfg.max},
	};
	for (i = 0; i < NELEM(picks) && *done < batch; i++) {
		if (db_purge(db, picks[i].pick, age + picks[i].limit,
			(int)(batch - *done), del, NELEM(del), &n) != DB_OK) {
			log_err("session cleanup: %s", db_errmsg(db));
			return -1;
		}
		*done += n;
	}
	return 0;
}
