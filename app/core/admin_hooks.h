/*
 * The dashboard's webhooks page, read and redelivery side: each
 * endpoint's numbers, an endpoint's deliveries in keyset pages, and
 * sending finished deliveries again. Endpoints themselves are
 * webhooks.h's (create, rotate, disable). The caller owns every struct.
 */
#ifndef ADMIN_HOOKS_H
#define ADMIN_HOOKS_H

#include <stdint.h>

#include "svc.h"
#include "webhooks.h"

#define ADMIN_HOOKS_PAGE 50       /* deliveries per page */
#define ADMIN_HOOKS_BATCH 500     /* dead deliveries redelivered per write */
#define ADMIN_HOOKS_DAY 86400     /* "delivered in the last day" */
#define ADMIN_HOOKS_ENDPOINTS 200 /* endpoints listed at most */

struct admin_hook_counts {
	int64_t pending, dead, delivered_day;
	int last_status; /* the newest failure's: pending first, else dead */
	char last_error[WEBHOOK_ERROR_MAX + 1];
};

/* The endpoint's numbers (its id must be the svc tenant's: the caller
 * has read it with webhook_get). ERROR_NONE or ERROR_UNAVAILABLE. */
enum error_word admin_hook_counts(
    struct svc *, int64_t endpoint_id, struct admin_hook_counts *out);

/* The endpoint's deliveries newest first, below before_id (0: from the
 * newest), of one state or all (NULL); up to ADMIN_HOOKS_PAGE, *more 1
 * when another page follows. ERROR_NONE or ERROR_UNAVAILABLE. */
enum error_word admin_hook_deliveries(struct svc *, int64_t endpoint_id,
    const enum delivery_state *state, int64_t before_id,
    void (*fn)(void *, const struct delivery *), void *arg, int *more);

/*
 * One delivered or dead delivery of the endpoint back to pending, due
 * now; attempts keep counting (the attempt number fences each result,
 * so it never goes back), and the event's age limit still applies: an
 * event past it gets this one attempt. *n: 1, or 0 when it was pending
 * already. ERROR_NOT_FOUND (not this tenant's, or not this endpoint's),
 * ERROR_CONFLICT (the endpoint is disabled: it would end dead at once),
 * ERROR_UNAVAILABLE.
 */
enum error_word admin_hook_redeliver(
    struct svc *, int64_t endpoint_id, int64_t delivery_id, int64_t *n);

/* Every dead delivery of the endpoint back to pending, in writes of
 * ADMIN_HOOKS_BATCH; *n: how many. Errors as admin_hook_redeliver; on
 * ERROR_UNAVAILABLE the batches before stay done (*n says how many). */
enum error_word admin_hook_redeliver_dead(
    struct svc *, int64_t endpoint_id, int64_t *n);

#endif
