/*
 * Dashboard accounts: an e-mail (canonical form), a role, an argon2id
 * password hash (libsodium crypto_pwhash_str). Passwords are never stored
 * or logged in clear.
 */
#ifndef ADMIN_H
#define ADMIN_H

#include <stdint.h>

#include "svc.h"

#define ADMIN_PASSWORD_MIN 8
#define ADMIN_PASSWORD_MAX 256
#define ADMIN_PASSWORD_GEN 20  /* characters of a generated password */
#define ADMIN_TIME_ZONE_MAX 64 /* "America/Argentina/ComodRivadavia" */

enum admin_role { ADMIN_OWNER, ADMIN_ADMIN, ADMIN_VIEWER, ADMIN__MAX };

struct admin {
	int64_t id;
	char email[255];
	enum admin_role role;
	int64_t created_at;
	int64_t disabled_at; /* 0: enabled */
};

const char *admin_role_name(enum admin_role);
int admin_role_parse(const char *, enum admin_role *);

/* password NULL: one is generated into generated[ADMIN_PASSWORD_GEN + 1].
 * ERROR_CONFLICT when the e-mail exists in the tenant, ERROR_BAD_REQUEST
 * for a bad e-mail or a password outside MIN..MAX. */
enum error_word admin_create(struct svc *, const char *email, enum admin_role,
    const char *password, char *generated, struct admin *out);

/* ERROR_NONE when the password is right and the admin enabled,
 * ERROR_UNAUTHORIZED otherwise (unknown e-mail and disabled admin
 * included, in about the same time). */
enum error_word admin_check_password(
    struct svc *, const char *email, const char *password, struct admin *out);

/* How many admins the tenant has (for the first-run set-up). */
enum error_word admin_count(struct svc *, int64_t *n);

/* A new password for the tenant's admin with that e-mail (password NULL:
 * one is generated into generated[ADMIN_PASSWORD_GEN + 1], as for
 * admin_create); every session of that admin ends in the same
 * transaction. ERROR_NOT_FOUND when the tenant has no such admin,
 * ERROR_BAD_REQUEST for a bad e-mail or password. A disabled admin stays
 * disabled. */
enum error_word admin_passwd(
    struct svc *, const char *email, const char *password, char *generated);
/* Disables the tenant's admin with that e-mail (idempotent: the first
 * disabled_at stays) and ends its sessions; it cannot log in any more.
 * ERROR_NOT_FOUND when there is none, ERROR_BAD_REQUEST when email is
 * not an e-mail. */
enum error_word admin_disable(struct svc *, const char *email);
/* The time zone the dashboard shows the admin's times in (an IANA name,
 * such as Europe/Berlin, known to this system's tz database; "UTC" by
 * default). ERROR_NOT_FOUND when there is no such admin,
 * ERROR_BAD_REQUEST for a bad e-mail or an unknown zone. */
enum error_word admin_set_time_zone(
    struct svc *, const char *email, const char *zone);
/* 1 when zone names a zone of the tz database (TZDIR, or
 * /usr/share/zoneinfo): letters, digits, '_', '-', '+' and '/' between
 * names, at most ADMIN_TIME_ZONE_MAX bytes. */
int admin_time_zone_ok(const char *zone);

/* For logins across tenants (session.c). The canonical form of an
 * admin's e-mail into out[ACCOUNT_MAX + 1]: 0, or -1 when it is not an
 * e-mail. */
int admin_email_canonical(const char *in, char *out);
/* 1 when password (ADMIN_PASSWORD_MIN..MAX bytes) matches hash (a
 * crypto_pwhash_str string); hash NULL checks against a hash nobody's
 * password matches, in about the same time, and gives 0. */
int admin_password_verify(const char *hash, const char *password);

#endif
