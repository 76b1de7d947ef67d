/*
 * API keys. The key text is "rdm_" + lookup + "_" + secret, both parts in
 * lower-case RFC 4648 base32 from libsodium's CSPRNG (40 + 160 bits). A
 * key carries 160 bits of secret, so a fast hash (BLAKE2b-256) is the
 * right one: it is checked on every API request, where argon2 would cost
 * more than the request. Only the lookup part ever reaches a log.
 */
#include <string.h>

#include <sodium.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "apikey.h"
#include "secret.h"

#define KEY_PREFIX "rdm_"
#define KEY_PREFIX_LEN 4
#define KEY_LOOKUP_LEN 8
#define KEY_SECRET_LEN 32
#define KEY_LEN (KEY_PREFIX_LEN + KEY_LOOKUP_LEN + 1 + KEY_SECRET_LEN)
#define KEY_CREATE_TRIES 5

_Static_assert(KEY_LEN < APIKEY_TEXT_MAX, "the key fits its buffer");

static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

static const char *const scope_names[APIKEY__MAX] = {
    [APIKEY_REDEEM] = "redeem",
    [APIKEY_ADMIN] = "admin",
};

const char *
apikey_scope_name(enum apikey_scope s)
{
	return (unsigned)s < APIKEY__MAX ? scope_names[s] : "?";
}

int
apikey_scope_parse(const char *s, enum apikey_scope *out)
{
	int i = str_index(s, scope_names, APIKEY__MAX);

	if (i < 0)
		return -1;
	*out = (enum apikey_scope)i;
	return 0;
}

static void
b32_random(char *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = b32[randombytes_uniform(32)];
	out[n] = '\0';
}

static int
b32_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(b32, s[i]) == NULL)
			return 0;
	return 1;
}

/* APIKEY_COLUMNS of the catalog; the tenant fields are the caller's. */
static void
key_from_row(struct db_stmt *st, struct apikey *k)
{
	const char *t;

	memset(k, 0, sizeof(*k));
	k->id = db_col_i64(st, 0);
	if ((t = db_col_text(st, 1)) != NULL)
		str_copy(k->lookup, t, sizeof(k->lookup));
	if ((t = db_col_text(st, 2)) == NULL ||
	    apikey_scope_parse(t, &k->scope) == -1)
		k->scope = APIKEY_REDEEM; /* the CHECK keeps this unreachable */
	if ((t = db_col_text(st, 3)) != NULL)
		str_copy(k->label, t, sizeof(k->label));
	k->created_at = db_col_i64(st, 4);
	k->revoked_at = db_col_null(st, 5) ? 0 : db_col_i64(st, 5);
	k->last_used_at = db_col_null(st, 6) ? 0 : db_col_i64(st, 6);
}

static void
key_tenant(struct apikey *k, const struct svc *s)
{
	k->tenant_id = s->tenant_id;
	str_copy(k->tenant, s->tenant, sizeof(k->tenant));
	k->unchecked_codes = s->unchecked_codes;
}

static enum error_word
key_by_id(struct svc *s, int64_t id, struct apikey *out)
{
	struct db_stmt *st;
	int rc;

	rc = db_query(s->db, STMT_APIKEY_BY_ID, &st, "ii", id, s->tenant_id);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return svc_db_error(rc);
	key_from_row(st, out);
	db_reset(st);
	key_tenant(out, s);
	return ERROR_NONE;
}

enum error_word
apikey_create(struct svc *s, enum apikey_scope scope, const char *label,
    char text[APIKEY_TEXT_MAX], struct apikey *out)
{
	char lookup[KEY_LOOKUP_LEN + 1], secret[KEY_SECRET_LEN + 1];
	char hash[SECRET_HASH_HEX];
	struct db_stmt *st;
	int64_t id = 0;
	int rc = DB_EUNIQUE, tries;

	text[0] = '\0';
	if (label == NULL)
		label = "";
	if ((unsigned)scope >= APIKEY__MAX ||
	    strlen(label) > APIKEY_LABEL_MAX ||
	    !str_utf8_ok(label, strlen(label)))
		return ERROR_BAD_REQUEST;
	/* A lookup collision (40 bits) is rare; a fresh key settles it. */
	for (tries = 0; tries < KEY_CREATE_TRIES && rc == DB_EUNIQUE; tries++) {
		b32_random(lookup, KEY_LOOKUP_LEN);
		b32_random(secret, KEY_SECRET_LEN);
		snprintf(text, APIKEY_TEXT_MAX, "%s%s_%s", KEY_PREFIX, lookup,
		    secret);
		secret_hash_hex(text, hash);
		if ((st = db_prepare(s->db, STMT_APIKEY_INSERT)) == NULL) {
			rc = DB_EFAIL;
			break;
		}
		db_bind_i64(st, 1, s->tenant_id);
		db_bind_text(st, 2, lookup);
		db_bind_text(st, 3, hash);
		db_bind_text(st, 4, scope_names[scope]);
		db_bind_text(st, 5, label);
		rc = db_step(st);
		id = db_last_id(st);
		db_reset(st);
	}
	sodium_memzero(secret, sizeof(secret));
	if (rc != DB_OK) {
		sodium_memzero(text, APIKEY_TEXT_MAX);
		log_err("apikey create: %s", db_errmsg(s->db));
		return svc_db_error(rc);
	}
	log_info("apikey create: key %s (%s) in tenant %s", lookup,
	    scope_names[scope], s->tenant);
	if (out != NULL)
		return key_by_id(s, id, out);
	return ERROR_NONE;
}

/* Malformed texts never reach the database. */
static int
key_parse(const char *text, char lookup[KEY_LOOKUP_LEN + 1])
{
	if (text == NULL || strnlen(text, KEY_LEN + 1) != KEY_LEN ||
	    strncmp(text, KEY_PREFIX, KEY_PREFIX_LEN) != 0 ||
	    !b32_ok(text + KEY_PREFIX_LEN, KEY_LOOKUP_LEN) ||
	    text[KEY_PREFIX_LEN + KEY_LOOKUP_LEN] != '_' ||
	    !b32_ok(text + KEY_PREFIX_LEN + KEY_LOOKUP_LEN + 1, KEY_SECRET_LEN))
		return -1;
	memcpy(lookup, text + KEY_PREFIX_LEN, KEY_LOOKUP_LEN);
	lookup[KEY_LOOKUP_LEN] = '\0';
	return 0;
}

enum error_word
apikey_verify(struct db *db, const char *text, struct apikey *out)
{
	char lookup[KEY_LOOKUP_LEN + 1], want[SECRET_HASH_HEX];
	const char *got, *t;
	struct db_stmt *st;
	struct apikey k;
	int64_t now;
	int rc, match;

	memset(out, 0, sizeof(*out));
	if (key_parse(text, lookup) == -1)
		return ERROR_UNAUTHORIZED;
	rc = db_query(db, STMT_APIKEY_VERIFY, &st, "t", lookup);
	if (rc == DB_OK) {
		log_info("apikey: unknown key %s", lookup);
		return ERROR_UNAUTHORIZED;
	}
	if (rc != DB_ROW)
		return svc_db_error(rc);
	key_from_row(st, &k);
	k.tenant_id = db_col_i64(st, 7);
	if ((t = db_col_text(st, 8)) != NULL)
		str_copy(k.tenant, t, sizeof(k.tenant));
	k.unchecked_codes = db_col_i64(st, 9);
	got = db_col_text(st, 10);
	now = db_col_i64(st, 11);
	secret_hash_hex(text, want);
	match = got != NULL && strlen(got) == SECRET_HASH_HEX - 1 &&
		sodium_memcmp(got, want, SECRET_HASH_HEX - 1) == 0;
	db_reset(st);
	if (!match) {
		log_info("apikey: wrong secret for key %s", lookup);
		return ERROR_UNAUTHORIZED;
	}
	if (k.revoked_at != 0) {
		log_info("apikey: key %s is revoked", lookup);
		return ERROR_UNAUTHORIZED;
	}
	/* The read decides whether to write at all: a conditional UPDATE
	 * that matches nothing would still take SQLite's write lock. */
	if (k.last_used_at < now - APIKEY_TOUCH_EVERY) {
		rc = db_exec(db, STMT_APIKEY_TOUCH, NULL, "i", k.id);
		if (rc != DB_OK)
			log_warn("apikey: last use of key %s not recorded: %s",
			    lookup, db_errmsg(db));
		else
			k.last_used_at = now;
	}
	*out = k;
	return ERROR_NONE;
}

struct revoke_tx {
	struct svc *s;
	int64_t id, n;
};

static int
revoke_tx(struct db *db, void *arg)
{
	struct revoke_tx *t = arg;

	return db_exec(
	    db, STMT_APIKEY_REVOKE, &t->n, "ii", t->id, t->s->tenant_id);
}

/* In a transaction, so that the revocation is durable when it returns. */
enum error_word
apikey_revoke(struct svc *s, int64_t id)
{
	struct revoke_tx t = {.s = s, .id = id};
	int rc;

	rc = db_transact(s->db, DB_TX_WRITE, revoke_tx, &t);
	if (rc != DB_OK)
		return svc_db_error(rc);
	return t.n > 0 ? ERROR_NONE : ERROR_NOT_FOUND;
}

enum error_word
apikey_list(struct svc *s, void (*fn)(void *, const struct apikey *), void *arg)
{
	struct db_stmt *st;
	struct apikey k;
	int rc;

	rc = db_query(s->db, STMT_APIKEY_LIST, &st, "i", s->tenant_id);
	while (rc == DB_ROW) {
		key_from_row(st, &k);
		key_tenant(&k, s);
		fn(arg, &k);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
}
