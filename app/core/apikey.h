/*
 * API keys: "rdm_" + 8 characters of lookup id + "_" + 32 characters of
 * secret (base32, from libsodium's CSPRNG). Only a BLAKE2b hash of the
 * whole key is stored; a presented key is found by its lookup id and
 * compared in constant time. Scope admin implies redeem.
 */
#ifndef APIKEY_H
#define APIKEY_H

#include <stdint.h>

#include "svc.h"

#define APIKEY_TEXT_MAX 64 /* the key as text, with its NUL */
#define APIKEY_LABEL_MAX 100
#define APIKEY_TOUCH_EVERY 60 /* seconds between last_used_at writes */

enum apikey_scope { APIKEY_REDEEM, APIKEY_ADMIN, APIKEY__MAX };

struct apikey {
	int64_t id;
	int64_t tenant_id;
	char tenant[65];
	int64_t unchecked_codes; /* the tenant's, for svc_init */
	enum apikey_scope scope;
	char lookup[9]; /* the public part, safe to show and log */
	char label[APIKEY_LABEL_MAX + 1];
	int64_t created_at;
	int64_t revoked_at;   /* 0: live */
	int64_t last_used_at; /* 0: never; to the minute (apikey_verify) */
};

const char *apikey_scope_name(enum apikey_scope);
int apikey_scope_parse(const char *, enum apikey_scope *);

/* Creates a key in the svc's tenant; text gets the whole key, which is
 * shown once and never stored. */
enum error_word apikey_create(struct svc *, enum apikey_scope,
    const char *label, char text[APIKEY_TEXT_MAX], struct apikey *out);

/* The key behind a presented text, with its tenant, in one query:
 * ERROR_NONE, ERROR_UNAUTHORIZED (malformed, unknown, wrong secret or
 * revoked: one answer for all) or ERROR_UNAVAILABLE. A good key's
 * last_used_at is written when the one read is a minute old or more
 * (APIKEY_TOUCH_EVERY), so the hot path writes at most once a minute per
 * key; a failed write is logged and does not fail the request. */
enum error_word apikey_verify(
    struct db *, const char *text, struct apikey *out);

/* Idempotent; ERROR_NOT_FOUND for an id not of this tenant. */
enum error_word apikey_revoke(struct svc *, int64_t id);
enum error_word apikey_list(
    struct svc *, void (*fn)(void *, const struct apikey *), void *arg);

#endif
