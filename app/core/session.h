/*
 * Dashboard sessions. A login checks an e-mail and password across
 * tenants and makes a session: a random token for the cookie (stored only
 * as a BLAKE2b hash) and an anti-forgery token for its forms. Sessions
 * end on logout, on a new login over them, on a password change or a
 * disable of their admin, after REDEEM_SESSION_IDLE seconds without a
 * request, and REDEEM_SESSION_MAX seconds after the login whatever
 * happens; every limit is judged by the database clock.
 */
#ifndef SESSION_H
#define SESSION_H

#include <stdint.h>

#include "../db/db.h"
#include "account.h"
#include "admin.h"
#include "errors.h"
#include "svc.h"

#define SESSION_TOKEN_LEN 43 /* base64url of 32 random bytes, no padding */
#define SESSION_CSRF_LEN 43
#define SESSION_IDLE_DEFAULT 1800        /* s; REDEEM_SESSION_IDLE */
#define SESSION_MAX_DEFAULT 43200        /* s; REDEEM_SESSION_MAX (absolute) */
#define SESSION_LOGIN_LIMIT_DEFAULT 10   /* REDEEM_LOGIN_LIMIT */
#define SESSION_LOGIN_WINDOW_DEFAULT 900 /* s; REDEEM_LOGIN_WINDOW */

struct session {
	int64_t id, tenant_id, admin_id;
	char tenant[TENANT_NAME_MAX + 1];
	char email[ACCOUNT_MAX + 1];
	enum admin_role role;
	char csrf[SESSION_CSRF_LEN + 1]; /* the session's anti-forgery token */
	char time_zone[ADMIN_TIME_ZONE_MAX + 1]; /* the admin's, "UTC" */
	/* expires_at: the sooner of the idle and the absolute limit */
	int64_t created_at, last_seen_at, expires_at;
};

struct session_config {
	int64_t idle;         /* REDEEM_SESSION_IDLE, 60 s to 30 days */
	int64_t max;          /* REDEEM_SESSION_MAX, 60 s to 30 days */
	int64_t login_limit;  /* REDEEM_LOGIN_LIMIT failures, per address */
	int64_t login_window; /* and per e-mail, in REDEEM_LOGIN_WINDOW s */
};

/* The settings from the environment, read at each call (cheap). */
void session_config_defaults(struct session_config *);

/*
 * Checks e-mail and password against every tenant's admins with that
 * e-mail, oldest first (16 at most); the first enabled one whose
 * password matches wins. Throttled before any hash is checked: REDEEM_LOGIN_LIMIT failed
 * logins in REDEEM_LOGIN_WINDOW seconds per client address (client_ip,
 * NULL or "" for none) or per e-mail -> ERROR_RATE_LIMITED with
 * *retry_after (a throttled attempt does not count). Unknown e-mail,
 * wrong password and disabled admin are all ERROR_UNAUTHORIZED, in about
 * the same time, each counted as a failure and audited as "login.failed"
 * (object the e-mail, admin_id 0) in the tenant of each admin with that
 * e-mail (an e-mail no admin has is only logged).
 *
 * On success a new session row is made (a login always makes a new
 * token; old_token, when it names a session, is ended in the same
 * transaction, with a "login" audit row), token gets the new token
 * (NUL-terminated) and *out the session. ERROR_UNAVAILABLE when the
 * database failed. token is "" unless ERROR_NONE.
 */
enum error_word session_login(struct db *, const char *email,
    const char *password, const char *client_ip, const char *old_token,
    char token[SESSION_TOKEN_LEN + 1], struct session *out,
    int64_t *retry_after);

/*
 * The live session a token names: ERROR_NONE and *out for a session not
 * ended, within both limits, of an enabled admin; last_seen_at is moved
 * to now at most once a minute. ERROR_UNAUTHORIZED otherwise (malformed
 * token included), ERROR_UNAVAILABLE when the database failed.
 */
enum error_word session_check(
    struct db *, const char *token, struct session *out);

/* Ends the session (logout); idempotent, and ERROR_NONE for a token that
 * names none. ERROR_UNAVAILABLE when the database failed. */
enum error_word session_end(struct db *, const char *token);

/* 1 when token (a form field or header) equals the session's csrf, in
 * constant time; 0 for NULL or any other length. */
int session_csrf_ok(const struct session *, const char *token);

/* 1 when the role may change things (owner, admin); viewer: 0. */
int session_can_write(const struct session *);

/*
 * For the cleanup job: deletes up to batch sessions that ended, or passed
 * their idle or absolute limit, more than age seconds ago. *done gets how
 * many; call again while it equals batch. Returns 0 or -1.
 */
int session_cleanup(struct db *, int64_t age, int batch, int64_t *done);

#endif
