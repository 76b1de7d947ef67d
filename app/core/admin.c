/*
 * Dashboard accounts. Passwords are hashed with argon2id
 * (crypto_pwhash_str, interactive limits); a login for an unknown e-mail
 * still verifies against a dummy hash, so the answer takes about as long
 * either way and does not tell which e-mails exist.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "account.h"
#include "admin.h"

#define ADMIN_OPSLIMIT crypto_pwhash_OPSLIMIT_INTERACTIVE
#define ADMIN_MEMLIMIT crypto_pwhash_MEMLIMIT_INTERACTIVE

_Static_assert(sizeof(((struct admin *)0)->email) == ACCOUNT_MAX + 1,
    "an admin's e-mail is an account");

/* Without 0/O, 1/l/I: a generated password is read off a terminal. */
static const char pw_alphabet[] =
    "23456789abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ";

/* A hash of a password nobody has, with the same algorithm and limits
 * as the live ones (keep them in step if those change). */
static const char dummy_hash[] =
    "$argon2id$v=19$m=65536,t=2,p=1$EidU9EHrGgA/V4OUwVt7eQ$"
    "vm3+vLQ35a4vL9B/mnFaKLeA5K1ZLxIjJrE5/Dop0AE";

static const char *const role_names[ADMIN__MAX] = {
    [ADMIN_OWNER] = "owner",
    [ADMIN_ADMIN] = "admin",
    [ADMIN_VIEWER] = "viewer",
};

const char *
admin_role_name(enum admin_role r)
{
	return (unsigned)r < ADMIN__MAX ? role_names[r] : "?";
}

int
admin_role_parse(const char *s, enum admin_role *out)
{
	int i = str_index(s, role_names, ADMIN__MAX);

	if (i < 0)
		return -1;
	*out = (enum admin_role)i;
	return 0;
}

/* The canonical account form, and something@something without spaces. */
int
admin_email_canonical(const char *in, char *out)
{
	const char *at;

	if (in == NULL || account_canonical(in, out) == -1)
		return -1;
	if ((at = strchr(out, '@')) == NULL || at == out || at[1] == '\0' ||
	    strchr(at + 1, '@') != NULL || strchr(out, ' ') != NULL)
		return -1;
	return 0;
}

static int
password_ok(const char *pw)
{
	size_t n = pw ? strnlen(pw, ADMIN_PASSWORD_MAX + 1) : 0;

	return n >= ADMIN_PASSWORD_MIN && n <= ADMIN_PASSWORD_MAX;
}

static void
password_generate(char *out)
{
	size_t i;

	for (i = 0; i < ADMIN_PASSWORD_GEN; i++)
		out[i] = pw_alphabet[randombytes_uniform(
		    (uint32_t)(sizeof(pw_alphabet) - 1))];
	out[ADMIN_PASSWORD_GEN] = '\0';
}

/* ADMIN_COLUMNS of the catalog. */
static void
admin_from_row(struct db_stmt *st, struct admin *a)
{
	const char *t;

	memset(a, 0, sizeof(*a));
	a->id = db_col_i64(st, 0);
	if ((t = db_col_text(st, 1)) != NULL)
		str_copy(a->email, t, sizeof(a->email));
	if ((t = db_col_text(st, 2)) == NULL ||
	    admin_role_parse(t, &a->role) == -1)
		a->role = ADMIN_VIEWER; /* the CHECK keeps this unreachable */
	a->created_at = db_col_i64(st, 3);
	a->disabled_at = db_col_null(st, 4) ? 0 : db_col_i64(st, 4);
}

static enum error_word
admin_by_id(struct svc *s, int64_t id, struct admin *out)
{
	struct db_stmt *st;
	int rc;

	rc = db_query(s->db, STMT_ADMIN_BY_ID, &st, "ii", s->tenant_id, id);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return svc_db_error(rc);
	admin_from_row(st, out);
	db_reset(st);
	return ERROR_NONE;
}

/* The argon2id hash of password into hash, or of a new one generated
 * into generated (password NULL; generated NULL too is a bad request).
 * ERROR_BAD_REQUEST for a password of the wrong length,
 * ERROR_UNAVAILABLE when hashing ran out of memory. */
static enum error_word
password_hash(
    const char *password, char *generated, char hash[crypto_pwhash_STRBYTES])
{
	if (password == NULL) {
		if (generated == NULL)
			return ERROR_BAD_REQUEST;
		password_generate(generated);
		password = generated;
	} else if (!password_ok(password))
		return ERROR_BAD_REQUEST;
	if (crypto_pwhash_str(hash, password, strlen(password), ADMIN_OPSLIMIT,
		ADMIN_MEMLIMIT) != 0) {
		log_err("admin: out of memory hashing a password");
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}

enum error_word
admin_create(struct svc *s, const char *email, enum admin_role role,
    const char *password, char *generated, struct admin *out)
{
	char canon[ACCOUNT_MAX + 1], hash[crypto_pwhash_STRBYTES];
	struct db_stmt *st;
	enum error_word e;
	int64_t id;
	int rc;

	if (generated != NULL)
		generated[0] = '\0';
	if ((unsigned)role >= ADMIN__MAX ||
	    admin_email_canonical(email, canon) == -1)
		return ERROR_BAD_REQUEST;
	if ((e = password_hash(password, generated, hash)) != ERROR_NONE)
		return e;
	if ((st = db_prepare(s->db, STMT_ADMIN_INSERT)) == NULL)
		return svc_db_error(DB_EFAIL);
	db_bind_i64(st, 1, s->tenant_id);
	db_bind_text(st, 2, canon);
	db_bind_text(st, 3, role_names[role]);
	db_bind_text(st, 4, hash);
	rc = db_step(st);
	id = db_last_id(st);
	db_reset(st);
	sodium_memzero(hash, sizeof(hash));
	if (rc == DB_EUNIQUE)
		return ERROR_CONFLICT;
	if (rc != DB_OK)
		return svc_db_error(rc);
	log_info("admin create: %s (%s) in tenant %s", canon, role_names[role],
	    s->tenant);
	if (out != NULL)
		return admin_by_id(s, id, out);
	return ERROR_NONE;
}

int
admin_password_verify(const char *hash, const char *password)
{
	char h[crypto_pwhash_STRBYTES];
	int real, ok;

	real = hash != NULL && str_copy(h, hash, sizeof(h)) == 0;
	if (!real)
		str_copy(h, dummy_hash, sizeof(h));
	/* The verify runs whatever the hash: the same work either way. */
	ok = crypto_pwhash_str_verify(h, password ? password : "",
		 password ? strnlen(password, ADMIN_PASSWORD_MAX + 1) : 0) == 0;
	sodium_memzero(h, sizeof(h));
	return real && ok && password_ok(password);
}

enum error_word
admin_check_password(
    struct svc *s, const char *email, const char *password, struct admin *out)
{
	char canon[ACCOUNT_MAX + 1], hash[crypto_pwhash_STRBYTES];
	struct db_stmt *st;
	struct admin a;
	int rc, found = 0, ok;
	const char *h;

	memset(&a, 0, sizeof(a));
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (admin_email_canonical(email, canon) == 0) {
		rc = db_query(
		    s->db, STMT_ADMIN_BY_EMAIL, &st, "it", s->tenant_id, canon);
		if (rc != DB_ROW && rc != DB_OK)
			return svc_db_error(rc);
		if (rc == DB_ROW) {
			admin_from_row(st, &a);
			h = db_col_text(st, 5);
			found =
			    h != NULL && str_copy(hash, h, sizeof(hash)) == 0;
			db_reset(st);
		}
	}
	ok = admin_password_verify(found ? hash : NULL, password);
	sodium_memzero(hash, sizeof(hash));
	if (!ok || a.disabled_at != 0)
		return ERROR_UNAUTHORIZED;
	if (out != NULL)
		*out = a;
	return ERROR_NONE;
}

enum error_word
admin_count(struct svc *s, int64_t *n)
{
	struct db_stmt *st;
	int rc;

	*n = 0;
	rc = db_query(s->db, STMT_ADMIN_COUNT, &st, "i", s->tenant_id);
	if (rc == DB_OK)
		return ERROR_NONE;
	if (rc != DB_ROW)
		return svc_db_error(rc);
	*n = db_col_i64(st, 0);
	db_reset(st);
	return ERROR_NONE;
}

/* admin_passwd and admin_disable: one change to the admin's row and the
 * end of its sessions, together. */
struct change_tx {
	struct svc *s;
	const char *email; /* canonical */
	const char *hash;  /* the new password's; NULL: disable */
	enum error_word e;
};

static int
change_tx(struct db *db, void *arg)
{
	struct change_tx *t = arg;
	struct db_stmt *st;
	int64_t id;
	int rc;

	t->e = ERROR_NONE;
	rc = db_query(
	    db, STMT_ADMIN_BY_EMAIL, &st, "it", t->s->tenant_id, t->email);
	if (rc == DB_OK) {
		t->e = ERROR_NOT_FOUND;
		return DB_ROLLBACK;
	}
	if (rc != DB_ROW)
		return rc;
	id = db_col_i64(st, 0);
	db_reset(st);
	if (t->hash != NULL)
		rc = db_exec(db, STMT_ADMIN_SET_PASSWORD, NULL, "tii", t->hash,
		    id, t->s->tenant_id);
	else
		rc = db_exec(
		    db, STMT_ADMIN_DISABLE, NULL, "ii", id, t->s->tenant_id);
	if (rc != DB_OK)
		return rc;
	return db_exec(
	    db, STMT_SESSION_END_ADMIN, NULL, "ii", id, t->s->tenant_id);
}

static enum error_word
change(struct svc *s, const char *canon, const char *hash)
{
	struct change_tx t = {s, canon, hash, ERROR_NONE};
	int rc;

	rc = db_transact(s->db, DB_TX_WRITE, change_tx, &t);
	if (rc == DB_ROLLBACK)
		return t.e;
	if (rc != DB_OK)
		return svc_db_error(rc);
	return ERROR_NONE;
}

enum error_word
admin_passwd(
    struct svc *s, const char *email, const char *password, char *generated)
{
	char canon[ACCOUNT_MAX + 1], hash[crypto_pwhash_STRBYTES];
	enum error_word e;

	if (generated != NULL)
		generated[0] = '\0';
	if (admin_email_canonical(email, canon) == -1)
		return ERROR_BAD_REQUEST;
	/* Hashed before the transaction: argon2 takes its time, the
	 * transaction should not. */
	if ((e = password_hash(password, generated, hash)) == ERROR_NONE)
		e = change(s, canon, hash);
	sodium_memzero(hash, sizeof(hash));
	if (e != ERROR_NONE) {
		if (generated != NULL)
			sodium_memzero(generated, ADMIN_PASSWORD_GEN + 1);
		return e;
	}
	log_info("admin passwd: %s in tenant %s; its sessions ended", canon,
	    s->tenant);
	return ERROR_NONE;
}

enum error_word
admin_disable(struct svc *s, const char *email)
{
	char canon[ACCOUNT_MAX + 1];
	enum error_word e;

	if (admin_email_canonical(email, canon) == -1)
		return ERROR_BAD_REQUEST;
	if ((e = change(s, canon, NULL)) == ERROR_NONE)
		log_info("admin disable: %s in tenant %s; its sessions ended",
		    canon, s->tenant);
	return e;
}

int
admin_time_zone_ok(const char *zone)
{
	const char *dir = getenv("TZDIR"), *p;
	char path[PATH_MAX];
	struct stat sb;
	size_t n;

	if (zone == NULL || (n = strlen(zone)) == 0 || n > ADMIN_TIME_ZONE_MAX)
		return 0;
	if (strcmp(zone, "UTC") == 0)
		return 1;
	/* Names only: no "..", no leading or doubled '/'. */
	for (p = zone; *p != '\0'; p++) {
		int ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			 (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
			 *p == '+' || *p == '/';

		if (!ok ||
		    (*p == '/' && (p == zone || p[1] == '/' || p[1] == '\0')))
			return 0;
		if (*p == '-' && (p == zone || p[-1] == '/'))
			return 0;
	}
	if (dir == NULL || *dir == '\0')
		dir = "/usr/share/zoneinfo";
	if (snprintf(path, sizeof(path), "%s/%s", dir, zone) >=
	    (int)sizeof(path))
		return 0;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

enum error_word
admin_set_time_zone(struct svc *s, const char *email, const char *zone)
{
	char canon[ACCOUNT_MAX + 1];
	int64_t n = 0;
	int rc;

	if (admin_email_canonical(email, canon) == -1 ||
	    !admin_time_zone_ok(zone))
		return ERROR_BAD_REQUEST;
	rc = db_exec(s->db, STMT_ADMIN_SET_TIME_ZONE, &n, "tit", zone,
	    s->tenant_id, canon);
	if (rc != DB_OK)
		return svc_db_error(rc);
	if (n == 0)
		return ERROR_NOT_FOUND;
	log_info(
	    "admin time zone: %s in tenant %s: %s", canon, s->tenant, zone);
	return ERROR_NONE;
}
