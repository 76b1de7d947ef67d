/*
 * The service context: one database connection, one tenant, the settings.
 * Every core call takes it; every query is scoped by svc->tenant_id.
 * The svc does not own the db (the caller opens and closes it).
 */
#ifndef SVC_H
#define SVC_H

#include <stdint.h>

#include "../db/db.h"
#include "errors.h"

#define TENANT_NAME_MAX 64 /* a tenant's name: 1-64 of [A-Za-z0-9._-] */

struct svc_config {
	int64_t abuse_limit_client;  /* counted failures per client key */
	int64_t abuse_limit_account; /* counted failures per account */
	int64_t abuse_window;        /* seconds of the sliding window */
	/* A new code with max_uses at or above split_min_uses (0: never)
	 * has its seats split over split_shards counter rows (seats.h). */
	int64_t split_min_uses;
	int64_t split_shards;
};

struct svc {
	struct db *db;
	int64_t tenant_id;
	char tenant[TENANT_NAME_MAX + 1];
	int64_t unchecked_codes; /* read at svc_open */
	struct svc_config cfg;
};

/* Settings from the environment (REDEEM_ABUSE_LIMIT, _WINDOW,
 * REDEEM_SPLIT_MIN_USES, REDEEM_SPLIT_SHARDS), defaults
 * as the contract says. */
void svc_config_defaults(struct svc_config *);

/* ERROR_NONE, ERROR_NOT_FOUND (no such tenant) or ERROR_UNAVAILABLE. */
enum error_word svc_open(struct svc *, struct db *, const char *tenant);
/* A svc for a tenant already read (with an API key, say): no query. */
void svc_init(struct svc *, struct db *, int64_t tenant_id, const char *tenant,
    int64_t unchecked_codes, const struct svc_config *);
/* Re-reads the tenant's flags (after an import, say). */
enum error_word svc_refresh(struct svc *);

/* Tenants: name 1-64 of [A-Za-z0-9._-]. */
enum error_word tenant_create(struct db *, const char *name);
int tenant_name_ok(const char *);

/* Maps a database status to the service's word: busy or lost ->
 * unavailable. */
enum error_word svc_db_error(int status);

#endif
