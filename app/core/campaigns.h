/* Campaigns: shared (codes with max_uses) or pool (single-use codes handed
 * out one per claimer); open or closed; optional window, budget and
 * per-account limit. */
#ifndef CAMPAIGNS_H
#define CAMPAIGNS_H

#include <stdint.h>

#include "svc.h"

#define CAMPAIGN_NAME_MAX 64

enum campaign_kind { CAMPAIGN_SHARED, CAMPAIGN_POOL, CAMPAIGN__MAX };

struct campaign {
	int64_t id;
	char name[CAMPAIGN_NAME_MAX + 1];
	enum campaign_kind kind;
	int closed;
	int64_t starts_at, ends_at; /* 0: none */
	int64_t budget;             /* 0: none */
	int64_t redeemed;           /* counted only with a budget */
	int64_t per_account_limit;  /* 0: none */
	int64_t created_at, closed_at;
	int64_t codes, uses; /* filled by campaign_list */
};

const char *campaign_kind_name(enum campaign_kind);
/* -1 for an unknown word. */
int campaign_kind_parse(const char *, enum campaign_kind *);
int campaign_name_ok(const char *);

/* c->name, kind, window, budget, limit in; the row out. ERROR_CONFLICT
 * when the name exists, ERROR_BAD_REQUEST for a bad field. */
enum error_word campaign_create(struct svc *, struct campaign *c);
enum error_word campaign_get(
    struct svc *, const char *name, struct campaign *out);
/* Idempotent. */
enum error_word campaign_close(
    struct svc *, const char *name, struct campaign *out);
/* Opens a closed campaign again; idempotent (an open one is left as
 * it is). ERROR_NOT_FOUND for no such campaign of the tenant. */
enum error_word campaign_reopen(
    struct svc *, const char *name, struct campaign *out);
/*
 * Sets the window, budget and per-account limit of c->name from c (0:
 * none for each); *out gets the row. ERROR_BAD_REQUEST for a negative
 * field or an end not after the start, ERROR_CONFLICT for a budget below
 * what was already redeemed, ERROR_NOT_FOUND for no such campaign.
 */
enum error_word campaign_update(
    struct svc *, const struct campaign *c, struct campaign *out);

#define CAMPAIGN_DAYS 30 /* the per-day counts of campaign_days */

/* Redemptions of campaign id per UTC day: per_day[CAMPAIGN_DAYS - 1] is
 * today by the database clock, *day0 the midnight starting per_day[0]
 * and *now the clock. ERROR_NONE or ERROR_UNAVAILABLE. */
enum error_word campaign_days(struct svc *, int64_t id,
    int64_t per_day[CAMPAIGN_DAYS], int64_t *day0, int64_t *now);
/* Calls fn(arg, campaign id, count) with the redemptions of each
 * campaign of the tenant since the time since (none: not called). */
enum error_word campaign_recent(struct svc *, int64_t since,
    void (*fn)(void *, int64_t, int64_t), void *arg);

/* Calls fn for each campaign of the tenant, by name. */
enum error_word campaign_list(
    struct svc *, void (*fn)(void *, const struct campaign *), void *arg);

/* The campaign object of the contract (a new reference). */
struct json_t *campaign_json(const struct campaign *);

/* Fills c from a row whose columns start at col, in the order of
 * CAMPAIGN_COLUMNS in the catalog. */
struct db_stmt;
void campaign_from_row(struct db_stmt *, int col, struct campaign *c);

#endif
