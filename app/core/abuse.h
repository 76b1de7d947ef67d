/*
 * The abuse gate: counted failures (invalid, expired, revoked, ineligible)
 * per client key and per account in a sliding window, kept in the database
 * so every worker shares them. Checked before any lookup.
 */
#ifndef ABUSE_H
#define ABUSE_H

#include "svc.h"

/* ERROR_NONE, ERROR_RATE_LIMITED, or ERROR_UNAVAILABLE. client may be
 * NULL (the operator's own tool). *retry_after gets seconds to wait. */
enum error_word abuse_check(struct svc *, const char *client,
    const char *account, int64_t *retry_after);
/* Records one failure for each key given; errors are logged only. */
void abuse_record(struct svc *, const char *client, const char *account);

#endif
