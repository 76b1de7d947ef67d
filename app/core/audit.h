/*
 * The audit log: one append-only row per admin action (who, from which
 * address, what, on which object, when), in the acting admin's tenant.
 * Rows are never changed or deleted by the program.
 */
#ifndef AUDIT_H
#define AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "svc.h"

#define AUDIT_LIST_MAX 1000 /* rows per audit_list call at most */

struct audit_entry {
	int64_t id, tenant_id, admin_id, at;
	char email[255];  /* the admin's e-mail at the time; "" for 0 */
	char ip[64];      /* the client's address, "cli" for redeemctl */
	char action[64];  /* "login", "campaign.create", ... */
	char object[256]; /* what it acted on, "" for nothing */
	char detail[512]; /* "" when there was none */
};

/*
 * Appends one row in the svc's tenant. admin_id 0 is the operator's tool
 * or nobody (a failed login); otherwise the admin's e-mail is looked up
 * and kept on the row. action: 1-63 of [a-z0-9._-] (else
 * ERROR_BAD_REQUEST); ip, object and detail are cut to the entry's sizes
 * at a character boundary, with bad UTF-8 and control characters turned
 * into '?', so a hostile value is recorded rather than refused. ip,
 * object may be NULL (""), detail NULL (none). ERROR_NONE or
 * ERROR_UNAVAILABLE.
 */
enum error_word audit_write(struct svc *, int64_t admin_id, const char *ip,
    const char *action, const char *object, const char *detail);

/* 0/NULL: any. since <= at < until; before_id: keyset paging (the last
 * id of the page before); limit 0 or past AUDIT_LIST_MAX: AUDIT_LIST_MAX.
 * email matches the canonical form (case does not matter). */
struct audit_filter {
	const char *action;
	const char *email;
	int64_t since, until;
	int64_t before_id;
	int limit;
};

/* Calls fn for each matching entry of the svc's tenant, newest first
 * (by id); the entry is valid during the call only. filter may be NULL.
 * ERROR_NONE or ERROR_UNAVAILABLE. */
enum error_word audit_list(struct svc *, const struct audit_filter *,
    void (*fn)(void *, const struct audit_entry *), void *arg);

/*
 * For callers that write in their own transaction (a login): the row as
 * audit_write makes it, email NULL to look it up by admin_id. Returns a
 * DB_* status (DB_ECHECK for a bad action).
 */
int audit_insert(struct db *, int64_t tenant_id, int64_t admin_id,
    const char *email, const char *ip, const char *action, const char *object,
    const char *detail);

/* Copies in (NULL: "") into out[size] as valid UTF-8 without control
 * characters (each bad byte becomes '?'), cut at a character boundary. */
void audit_clean(const char *in, char *out, size_t size);

#endif
