/*
 * The dashboard's numbers: what the overview page shows of one tenant,
 * read in one snapshot by the database's clock. No formatting here (the
 * web layer does that); the caller owns the struct.
 */
#ifndef STATS_H
#define STATS_H

#include <stddef.h>
#include <stdint.h>

#include "svc.h"

#define STATS_DAYS 30        /* the chart's days, today the last */
#define STATS_TOP 5          /* top campaigns shown */
#define STATS_FAILING_MAX 10 /* failing webhook endpoints shown */
/* The spec's staleness limit: a permit acquired longer ago is leaked
 * whatever its TTL (the sweeper's staleness job uses the same). */
#define STATS_STALE_SECONDS (24 * 3600)
/* A failing endpoint: its failures within this long. */
#define STATS_FAILING_WINDOW 86400

struct stats_campaign {
	char name[65];
	int64_t redemptions; /* in the last STATS_DAYS days */
};

struct stats_endpoint {
	int64_t id;
	char url[2049];
	int64_t retrying;        /* pending, failed at least once */
	int64_t dead;            /* given up */
	int64_t last_attempt_at; /* 0: none */
	int last_status;         /* 0: no answer */
	char last_error[201];    /* "": none */
};

struct stats_overview {
	int64_t now;                 /* the database clock */
	int64_t day0;                /* UTC midnight starting per_day[0] */
	int64_t per_day[STATS_DAYS]; /* redemptions, [STATS_DAYS - 1]: today */
	int64_t today, week, month;  /* the calendar days: 1, 7, 30 */
	struct stats_campaign top[STATS_TOP];
	size_t ntop;
	int64_t live_holds;
	int64_t leaked_holds;   /* held, past expires_at, not swept */
	int64_t leaked_permits; /* acquired, past TTL or stale, not swept */
	struct stats_endpoint failing[STATS_FAILING_MAX];
	size_t nfailing;
};

/* ERROR_NONE or ERROR_UNAVAILABLE (logged). */
enum error_word stats_overview(struct svc *, struct stats_overview *out);

#endif
