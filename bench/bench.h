/*
 * What the parts of make bench share: the forked-client harness (every
 * client its own process and its own connection), the row printer, and
 * the sections, each measuring the service layer against the raw
 * statements of the same transactions (the catalog's, driven straight
 * through db.h, without the service's reads, checks and JSON), back to
 * back in one run.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "../app/core/svc.h"

/* The ratio the issue asks of every service row (printed, never
 * enforced). */
#define BENCH_TARGET 0.70

/* One engine of the command line. */
struct bench_engine {
	char name[32];
	char dsn[1024];
	char hooks_dsn[1024]; /* a database of its own; "": no webhook row */
	int clients[16];      /* the redemption and hold rows' counts */
	int nclients;
};

/* A campaign with one code of 1e9 seats (bench_code, bench_code_split). */
struct bench_code {
	char code[96]; /* as shown */
	char campaign[65];
	int64_t code_id, campaign_id, tenant;
};

/* A forked client: its own connection and service context. */
struct bench_client {
	struct db *db;
	struct svc svc;
	int idx;         /* 0 .. clients - 1 */
	int64_t run;     /* unique per measurement in this bench process */
	const void *arg; /* the section's setup, read only */
};

/* One operation of a client: 0 when it did what it should, -1 if not. */
typedef int (*bench_op)(struct bench_client *, int64_t i);

struct bench_result {
	double rate, p50, p99; /* operations per second, milliseconds */
	int64_t ops, errors;
	int64_t retries; /* transactions db_transact ran again (busy) */
};

/* A short token of this bench process, in names that must not meet
 * those of an earlier run on the same database. */
extern char bench_tag[16];

double bench_now(void);
/* Opens dsn, or exits with the driver's message. */
struct db *bench_open(const char *dsn);
/* The tenant "default" on db, or exits. */
void bench_svc(struct db *, struct svc *);

/* Creates campaign name-<bench_tag> with one code of 1e9 seats on one
 * counter row (the raw statements claim that row), or exits. */
void bench_code(const char *dsn, const char *name, struct bench_code *);
/* The same with the code's seats split over shards counter rows
 * (codes_gen.shards; 1: one row). */
void bench_code_split(
    const char *dsn, const char *name, int shards, struct bench_code *);

/*
 * Forks clients, each opening dsn and running raw(i), i = 0, 1, ..., for
 * seconds after a common start; or, with svc, raw and svc taking turns
 * (all clients switching together every half second) for seconds each.
 * Results: operations per second and the latency of one op.
 */
void bench_measure(const char *dsn, bench_op raw, bench_op svc, const void *arg,
    int clients, double seconds, struct bench_result *raw_out,
    struct bench_result *svc_out);

/* The redemption payload of a code.redeemed event, as the service
 * writes it. */
void bench_redemption_json(char *out, size_t len, int64_t id, const char *code,
    const char *account, const char *campaign, int64_t seq);

/* "engine  clients  raw: rate p50 p99  service: rate p50 p99  ratio". */
void bench_row(const char *engine, const char *label, int clients,
    const struct bench_result *raw, const struct bench_result *svc);
/* "0.83x", and a mark when it is below BENCH_TARGET. */
void bench_ratio(double raw, double svc);
/* svc / raw rounded to two decimals, as printed (0 when raw is 0). */
double bench_ratio_value(double raw, double svc);

/*
 * One row of the summary bench/run.sh prints last, appended as a line of
 * tab-separated fields to the file BENCH_SUMMARY names (nothing when it
 * is unset): section, row, engine, metric, value, unit, ratio (empty
 * when ratio < 0), and what the ratio is of (ratio_of). The row's text
 * is formatted from row_fmt.
 */
void bench_record(const char *section, const char *engine, const char *metric,
    double value, const char *unit, double ratio, const char *ratio_of,
    const char *row_fmt, ...) __attribute__((format(printf, 8, 9)));

/* The sections (bench/holds.c, permits.c, sweep.c, webhooks.c). */
void bench_holds_header(double seconds);
void bench_holds(const struct bench_engine *, double seconds);
void bench_permits_header(double seconds, const int *clients, int n);
void bench_permits(
    const struct bench_engine *, double seconds, const int *clients, int n);
void bench_sweep_header(int64_t holds);
void bench_sweep(const struct bench_engine *, int64_t holds);
void bench_webhooks_header(int64_t deliveries);
void bench_webhooks(const struct bench_engine *, int64_t deliveries);

/* The local receiver of the webhook row (bench/receiver.c): a forked
 * process answering every POST "200 OK" with keep-alive. */
struct bench_receiver {
	int pid;
	int port;
	volatile int64_t *requests; /* shared: requests answered, */
	volatile int64_t *accepted; /* and connections accepted */
};
void bench_receiver_start(struct bench_receiver *);
void bench_receiver_stop(struct bench_receiver *);

#endif
