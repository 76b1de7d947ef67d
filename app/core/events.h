/* The transactional outbox: events are rows written inside the transaction
 * whose effect they announce; delivery reads them later. */
#ifndef EVENTS_H
#define EVENTS_H

#include <stdint.h>

#include "svc.h"

#define EVENT_ID_LEN 28 /* "evt_" + 24 characters */

/* A fresh random event id: "evt_" and 24 base32 characters. */
void event_id(char out[EVENT_ID_LEN + 1]);

/* Inserts an event with a fresh id; payload is a JSON text (the "data"
 * object). redemption_id 0: none. Returns a db status. */
int events_insert(
    struct svc *, const char *type, int64_t redemption_id, const char *payload);

#endif
