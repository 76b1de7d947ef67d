/*
 * Server-wide secrets shared by every worker on every host (CSRF tokens,
 * session signing): 32 random bytes per name, kept in the database and
 * created on first use.
 */
#ifndef SECRET_H
#define SECRET_H

#include "../db/db.h"

#define SERVER_SECRET_BYTES 32
#define SERVER_SECRET_NAME_MAX 64
/* A token's stored form: BLAKE2b-256 in hex, and its NUL. */
#define SECRET_HASH_HEX 65

/*
 * The secret called name (1-64 bytes), created on first use without a
 * race: processes that ask at the same time all get the first one
 * written. Call it outside a transaction (each statement commits on its
 * own, so a later one sees what another process committed). 0, or -1
 * (bad name, database error; logged).
 */
int server_secret(
    struct db *, const char *name, unsigned char out[SERVER_SECRET_BYTES]);

/* How a bearer token (an API key, a session cookie) is stored: the hex
 * BLAKE2b-256 of text (unkeyed: the token itself is random), compared in
 * constant time by the caller. */
void secret_hash_hex(const char *text, char hex[SECRET_HASH_HEX]);

#endif
