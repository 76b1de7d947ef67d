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
#define ADMIN_PASSWORD_GEN 20 /* characters of a generated password */

enum admin_role { ADMIN_OWNER, ADMIN_ADMIN, ADMIN_VIEWER, ADMIN__MAX };

struct admin {
	int64_t id;
	char email[255];
	enum admin_role role;
	int64_t created_at;
};

const char *admin_role_name(enum admin_role);
int admin_role_parse(const char *, enum admin_role *);

/* password NULL: one is generated into generated[ADMIN_PASSWORD_GEN + 1].
 * ERROR_CONFLICT when the e-mail exists in the tenant, ERROR_BAD_REQUEST
 * for a bad e-mail or a password outside MIN..MAX. */
enum error_word admin_create(struct svc *, const char *email, enum admin_role,
    const char *password, char *generated, struct admin *out);

/* ERROR_NONE when the password is right, ERROR_UNAUTHORIZED otherwise
 * (unknown e-mail included, in about the same time). */
enum error_word admin_check_password(
    struct svc *, const char *email, const char *password, struct admin *out);

/* How many admins the tenant has (for the first-run set-up). */
enum error_word admin_count(struct svc *, int64_t *n);

#endif
