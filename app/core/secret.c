#include <string.h>

#include <sodium.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "secret.h"

#define SECRET_HEX (SERVER_SECRET_BYTES * 2 + 1)

/* 1: read into out; 0: no such row; -1: error. */
static int
secret_read(
    struct db *db, const char *name, unsigned char out[SERVER_SECRET_BYTES])
{
	struct db_stmt *st;
	const char *hex;
	size_t n = 0;
	int rc, ok;

	rc = db_query(db, STMT_SECRET_GET, &st, "t", name);
	if (rc == DB_OK)
		return 0;
	if (rc != DB_ROW) {
		log_err("server secret %s: %s", name, db_errmsg(db));
		return -1;
	}
	hex = db_col_text(st, 0);
	ok = hex != NULL && strlen(hex) == SECRET_HEX - 1 &&
	     sodium_hex2bin(out, SERVER_SECRET_BYTES, hex, SECRET_HEX - 1, NULL,
		 &n, NULL) == 0 &&
	     n == SERVER_SECRET_BYTES;
	db_reset(st);
	if (!ok) {
		sodium_memzero(out, SERVER_SECRET_BYTES);
		log_err("server secret %s: the stored value is not %d bytes "
			"of hex",
		    name, SERVER_SECRET_BYTES);
		return -1;
	}
	return 1;
}

int
server_secret(
    struct db *db, const char *name, unsigned char out[SERVER_SECRET_BYTES])
{
	unsigned char fresh[SERVER_SECRET_BYTES];
	char hex[SECRET_HEX];
	size_t n;
	int rc;

	n = name ? strnlen(name, SERVER_SECRET_NAME_MAX + 1) : 0;
	if (n == 0 || n > SERVER_SECRET_NAME_MAX || !str_utf8_ok(name, n))
		return -1;
	/* The common case reads only. */
	if ((rc = secret_read(db, name, out)) != 0)
		return rc == 1 ? 0 : -1;
	randombytes_buf(fresh, sizeof(fresh));
	str_hex(fresh, sizeof(fresh), hex);
	sodium_memzero(fresh, sizeof(fresh));
	/* Ignored when another process got there first: then its value
	 * is the one read back. */
	rc = db_exec(db, STMT_SECRET_CREATE, NULL, "tt", name, hex);
	sodium_memzero(hex, sizeof(hex));
	if (rc != DB_OK) {
		log_err("server secret %s: %s", name, db_errmsg(db));
		return -1;
	}
	if (secret_read(db, name, out) != 1) {
		log_err("server secret %s: not there after creating it", name);
		return -1;
	}
	return 0;
}

_Static_assert(SECRET_HASH_HEX == crypto_generichash_BYTES * 2 + 1,
    "a hash in hex and its NUL");

void
secret_hash_hex(const char *text, char hex[SECRET_HASH_HEX])
{
	unsigned char h[crypto_generichash_BYTES];

	crypto_generichash(
	    h, sizeof(h), (const unsigned char *)text, strlen(text), NULL, 0);
	str_hex(h, sizeof(h), hex);
	sodium_memzero(h, sizeof(h));
}
