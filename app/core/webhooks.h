/*
 * Webhooks: a tenant's endpoints, and the signed, retried delivery of
 * every outbox event to each endpoint that was enabled when it happened.
 *
 * The sweeper's deliver job runs two steps, by the database's clock:
 *
 *   webhooks_enqueue      fans events not yet handled out into delivery
 *                         rows, one per (event, endpoint) under UNIQUE,
 *                         and marks each event done; the claim
 *                         transaction that wrote the event is untouched
 *   webhooks_deliver_due  claims due rows (a lease: the attempt number
 *                         goes up and the row is not due again for
 *                         `lease` seconds), POSTs them in parallel with
 *                         libcurl, and writes each result back fenced by
 *                         the attempt number it claimed
 *
 * Delivery is at least once: a sweeper killed after its POST leaves the
 * row to come due again when its lease runs out. Every delivery ends
 * `delivered` or `dead` (after max_age from the event, or when its
 * endpoint is disabled), and stays visible.
 */
#ifndef WEBHOOKS_H
#define WEBHOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "svc.h"

struct json_t;
struct sockaddr;

#define WEBHOOK_URL_MAX 2048
#define WEBHOOK_SECRET_PREFIX "whsec_"
/* "whsec_" + 64 hex digits (32 random bytes), with its NUL. */
#define WEBHOOK_SECRET_MAX 71
#define WEBHOOK_SIG_HEX 65  /* hex HMAC-SHA256, with its NUL */
#define WEBHOOK_SIG_MAX 100 /* "t=<seconds>,v1=<hex>", with its NUL */
#define WEBHOOK_ERROR_MAX 200

struct webhook {
	int64_t id;
	char url[WEBHOOK_URL_MAX + 1];
	int enabled;
	int64_t created_at;
	int64_t disabled_at; /* 0: enabled */
};

enum delivery_state {
	DELIVERY_PENDING,
	DELIVERY_DELIVERED,
	DELIVERY_DEAD,
	DELIVERY__MAX
};

struct delivery {
	int64_t id;
	char event[48]; /* the event's id, "evt_..." */
	char type[48];
	int64_t webhook_id;
	enum delivery_state state;
	int64_t attempts;
	int64_t next_attempt_at; /* meaningful while pending */
	int64_t last_attempt_at; /* 0: none yet */
	int last_status;         /* HTTP status; 0: no answer or none yet */
	char last_error[WEBHOOK_ERROR_MAX + 1]; /* "": none */
	int64_t created_at;
	int64_t delivered_at; /* 0: not delivered */
};

struct webhooks_config {
	int64_t timeout_ms; /* one attempt, all told (contract: 10 s) */
	int64_t lease;      /* seconds before a claimed attempt is due again */
	int64_t max_age;    /* seconds from the event to the dead letter */
	int allow_private;  /* 0: refuse private and loopback addresses */
	int parallel;       /* attempts in flight at once */
};

/* Added to, never reset, by the calls that take it. */
struct webhooks_stats {
	int64_t events;    /* events fanned out */
	int64_t enqueued;  /* delivery rows created */
	int64_t claimed;   /* attempts made */
	int64_t delivered; /* attempts answered 2xx */
	int64_t retried;   /* failed attempts scheduled again */
	int64_t dead;      /* deliveries given up */
	int64_t stale;     /* results not written: the claim had moved on */
};

/* The contract's settings; REDEEM_WEBHOOK_ALLOW_PRIVATE (1, the
 * default, or 0) and REDEEM_WEBHOOK_MAX_AGE (seconds, 3 days) from the
 * environment. */
void webhooks_config_defaults(struct webhooks_config *);

const char *delivery_state_name(enum delivery_state);
int delivery_state_parse(const char *, enum delivery_state *);

/* 1 when url is an absolute http or https URL we deliver to: at most
 * WEBHOOK_URL_MAX bytes of printable ASCII, a host name or IP literal,
 * an optional port 1-65535, no user name or password. */
int webhook_url_ok(const char *url);
/* url as it may be recorded (the audit log): without user information,
 * query or fragment, which may carry a token, into out[len]. */
void webhook_url_public(const char *url, char *out, size_t len);

/*
 * Creates an enabled endpoint in the svc's tenant. secret gets the
 * signing secret, the only time it is handed out (it is stored as is:
 * it is the HMAC key). ERROR_BAD_REQUEST for a URL webhook_url_ok
 * refuses, ERROR_UNAVAILABLE.
 */
enum error_word webhook_create(struct svc *, const char *url,
    char secret[WEBHOOK_SECRET_MAX], struct webhook *out);
/*
 * A new signing secret for the endpoint, handed out in secret this once
 * (ERROR_NOT_FOUND for an id not of this tenant). Deliveries are signed
 * when they are sent, with the secret of that moment: every attempt that
 * starts after this returns carries the new one, pending retries
 * included; one already in flight keeps the old.
 */
enum error_word webhook_rotate(
    struct svc *, int64_t id, char secret[WEBHOOK_SECRET_MAX]);
/* ERROR_NOT_FOUND for an id not of this tenant. */
enum error_word webhook_get(struct svc *, int64_t id, struct webhook *out);
enum error_word webhook_list(
    struct svc *, void (*fn)(void *, const struct webhook *), void *arg);
/* Idempotent. The endpoint gets nothing more: its pending deliveries
 * end dead ("endpoint disabled"). out may be NULL. */
enum error_word webhook_disable(struct svc *, int64_t id, struct webhook *out);

/* A row of the catalog's DELIVERY_COLUMNS into d (admin_hooks.c). */
void delivery_from_row(struct db_stmt *, struct delivery *d);

/* The tenant's deliveries, newest first: state NULL or "" for all,
 * before_id 0 for the newest (else ids below it), at most limit. */
enum error_word webhook_deliveries(struct svc *, const char *state,
    int64_t before_id, int limit, void (*fn)(void *, const struct delivery *),
    void *arg);

/*
 * The deliver job's first step: fans out up to max_events events (of
 * every tenant) not yet enqueued, in transactions of a few hundred.
 * Safe to run from two sweepers at once. 0, or -1 (database; logged).
 */
int webhooks_enqueue(struct db *, int64_t max_events, struct webhooks_stats *);

/*
 * The second: makes up to limit due attempts, cfg->parallel at a time
 * (cfg NULL: the defaults). Safe to run from several sweepers at once:
 * no attempt is sent twice at once. 0, or -1 when the database failed
 * (logged); a failed attempt is not an error.
 */
int webhooks_deliver_due(struct db *, const struct webhooks_config *,
    int64_t limit, struct webhooks_stats *);

/* The jittered delay before the next attempt after failed attempt
 * number attempts (1, 2, ...): about 1 s, 5 s, 30 s, 2 min, 10 min,
 * 1 h, then hourly, each within 20% and never over an hour. */
int64_t webhook_retry_delay(int64_t attempts);

/* Hex HMAC-SHA256 of "<t>.<body>" keyed with the bytes of secret. */
void webhook_signature(const char *secret, int64_t t, const char *body,
    size_t len, char out[WEBHOOK_SIG_HEX]);
/* The Redeem-Signature value: "t=<t>,v1=<hex>". */
void webhook_signature_header(const char *secret, int64_t t, const char *body,
    size_t len, char out[WEBHOOK_SIG_MAX]);
/* What a receiver does: 1 when header signs body with secret and its t
 * is within tolerance seconds of now; 0 otherwise. */
int webhook_signature_verify(const char *secret, const char *header,
    const char *body, size_t len, int64_t now, int64_t tolerance);

/* 1 when the address is loopback, private, link-local or otherwise not
 * a public unicast one (also IPv4 inside IPv6); 0 for a public one. */
int webhook_addr_private(const struct sockaddr *);

/* {"id", "url", "enabled", "created_at"} and "secret" when given (only
 * at creation). A new reference, or NULL. */
struct json_t *webhook_json(const struct webhook *, const char *secret);
/* {"id", "event", "type", "webhook", "state", "attempts",
 * "next_attempt_at", "last_attempt_at", "last_status", "last_error",
 * "created_at", "delivered_at"}, null where there is none. */
struct json_t *delivery_json(const struct delivery *);

#endif
