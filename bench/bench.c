/*
 * make bench: the service layer against the raw transactions (the same
 * schema and statements, no service code), measured back to back in one
 * run with forked clients, each with its own connection: redemptions of
 * one hot code (and of one split over counter rows against one that is
 * not), holds (create + confirm), permits (acquire + release) on
 * one hot semaphore or one each, the sweeper releasing expired holds,
 * webhook deliveries to a local receiver; then one million codes
 * generated and exported. Prints tables; the ratios are the point, not
 * the absolute numbers of this machine.
 *
 * usage: bench SECONDS ENGINE=DSN=CLIENTS[,CLIENTS...] ... [--gen N]
 *     [--permit-clients N,N,...] [--sweep-holds N] [--deliveries N]
 *     [--hooks ENGINE=DSN] [--only SECTION,...]
 * sections: redeem, split, holds, permits, sweep, webhooks, gen
 *
 * BENCH_SUMMARY, when set, names a file each row is also appended to
 * (bench_record); REDEEM_BIN, the directory of redeemctl (build).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "../app/lib/common.h"
#include "../app/lib/str.h"
#include "../app/core/campaigns.h"
#include "../app/core/codes.h"
#include "../app/core/redeem.h"
#include "../app/core/svc.h"
#include "../app/db/migrate.h"
#include "bench.h"

/* Latency buckets of 10 us: up to 1 s (on a loaded 2-core machine the
 * p99 of 32 clients passes 200 ms, the old cap, printed as 200.00). */
#define HIST 100000
#define ENGINES_MAX 8

struct child_report {
	int64_t ops, errors, retries;
	uint32_t hist[HIST];
};

char bench_tag[16];

double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct db *
bench_open(const char *dsn)
{
	char e[512];
	struct db *db = db_open(dsn, e, sizeof(e));

	if (db == NULL) {
		fprintf(stderr, "bench: %s\n", e);
		exit(1);
	}
	return db;
}

void
bench_svc(struct db *db, struct svc *svc)
{
	if (svc_open(svc, db, "default") != ERROR_NONE) {
		fprintf(stderr, "bench: tenant: %s\n", db_errmsg(db));
		exit(1);
	}
}

void
bench_redemption_json(char *out, size_t len, int64_t id, const char *code,
    const char *account, const char *campaign, int64_t seq)
{
	char at[32];

	str_rfc3339((int64_t)time(NULL), at);
	snprintf(out, len,
	    "{\"redemption\":{\"id\":%lld,\"code\":\"%s\",\"account\":\"%s\","
	    "\"campaign\":\"%s\",\"redeemed_at\":\"%s\",\"seq\":%lld}}",
	    (long long)id, code, account, campaign, at, (long long)seq);
}

double
bench_ratio_value(double raw, double svc)
{
	/* as printed, so that "0.70x" is never called below 0.70 */
	return raw > 0 ? floor(svc / raw * 100 + 0.5) / 100 : 0;
}

void
bench_ratio(double raw, double svc)
{
	double r = bench_ratio_value(raw, svc);

	if (r < BENCH_TARGET)
		printf("%6.2fx  (below %.2f)\n", r, BENCH_TARGET);
	else
		printf("%6.2fx\n", r);
	fflush(stdout);
}

void
bench_row(const char *engine, const char *label, int clients,
    const struct bench_result *raw, const struct bench_result *svc)
{
	printf("%-8s ", engine);
	if (label != NULL)
		printf("%-5s ", label);
	printf("%7d %12.0f %8.2f %8.2f %12.0f %8.2f %8.2f ", clients, raw->rate,
	    raw->p50, raw->p99, svc->rate, svc->p50, svc->p99);
	bench_ratio(raw->rate, svc->rate);
	if (raw->errors + svc->errors > 0)
		printf("         (failed operations: raw %lld, service %lld)\n",
		    (long long)raw->errors, (long long)svc->errors);
	if (raw->retries + svc->retries > 0)
		printf("         (transactions run again, busy or deadlocked: "
		       "raw %lld, service %lld)\n",
		    (long long)raw->retries, (long long)svc->retries);
	fflush(stdout);
}

void
bench_record(const char *section, const char *engine, const char *metric,
    double value, const char *unit, double ratio, const char *ratio_of,
    const char *row_fmt, ...)
{
	const char *path = getenv("BENCH_SUMMARY");
	char row[256];
	va_list ap;
	FILE *f;

	if (path == NULL || *path == '\0')
		return;
	va_start(ap, row_fmt);
	vsnprintf(row, sizeof(row), row_fmt, ap);
	va_end(ap);
	if ((f = fopen(path, "a")) == NULL) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(f, "%s\t%s\t%s\t%s\t%.2f\t%s\t", section, row, engine, metric,
	    value, unit);
	if (ratio >= 0)
		fprintf(f, "%.2f\t%s", ratio, ratio_of);
	else
		fprintf(f, "\t");
	fprintf(f, "\n");
	if (fclose(f) == EOF)
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
}

/*
 * Measured together, raw and service take turns in slices of this many
 * seconds, every client switching at the same moment, so that a change
 * in the machine's load (other processes, the disk's sync latency) falls
 * on both alike.
 */
#define SLICE 0.5

/* Each child fills its own slot of a shared mapping: reports are far
 * larger than PIPE_BUF, so several children writing one pipe would
 * interleave. */
struct slot {
	double start;               /* the common start, set before the go */
	struct child_report rep[2]; /* raw, service */
};

static void
child(const char *dsn, bench_op const op[2], const void *arg, int idx,
    int64_t run, double seconds, int go_fd, struct slot *slot)
{
	struct child_report *rep;
	struct bench_client c;
	double start, end, t0, dt;
	int64_t i, retries;
	int m, modes = op[1] != NULL ? 2 : 1;
	char go;
	size_t b;

	memset(&c, 0, sizeof(c));
	c.db = bench_open(dsn);
	bench_svc(c.db, &c.svc);
	c.idx = idx;
	c.run = run;
	c.arg = arg;
	if (read(go_fd, &go, 1) < 0)
		_exit(1);
	start = slot->start;
	end = start + seconds * modes;
	for (i = 0; (t0 = bench_now()) < end; i++) {
		m = modes == 2 ? (int)((t0 - start) / SLICE) % 2 : 0;
		rep = &slot->rep[m];
		retries = db_retries(c.db);
		if (op[m](&c, i) == 0)
			rep->ops++;
		else
			rep->errors++;
		rep->retries += db_retries(c.db) - retries;
		dt = (bench_now() - t0) * 1e5; /* 10 us units */
		b = dt >= HIST - 1 ? HIST - 1 : (size_t)dt;
		rep->hist[b]++;
	}
	db_close(c.db);
	_exit(0);
}

static void
summarize(
    const struct child_report *sum, double seconds, struct bench_result *out)
{
	int64_t total = 0, acc = 0;
	size_t b;

	out->ops = sum->ops;
	out->rate = (double)sum->ops / seconds;
	out->errors = sum->errors;
	out->retries = sum->retries;
	for (b = 0; b < HIST; b++)
		total += sum->hist[b];
	out->p50 = out->p99 = 0;
	for (b = 0; b < HIST; b++) {
		acc += sum->hist[b];
		if (out->p50 == 0 && acc * 2 >= total)
			out->p50 = (double)(b + 1) / 100.0;
		if (acc * 100 >= total * 99) {
			out->p99 = (double)(b + 1) / 100.0;
			break;
		}
	}
}

void
bench_measure(const char *dsn, bench_op raw, bench_op svc, const void *arg,
    int clients, double seconds, struct bench_result *raw_out,
    struct bench_result *svc_out)
{
	static struct child_report sum[2];
	static int64_t runs;
	bench_op const op[2] = {raw, svc};
	struct slot *slots;
	size_t b, len = sizeof(*slots) * (size_t)clients;
	pid_t pids[4096];
	int go[2], i, m, st;

	if (clients < 1 || clients > (int)NELEM(pids))
		exit(2);
	memset(sum, 0, sizeof(sum));
	runs++;
	slots = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED || pipe(go) == -1)
		exit(1);
	memset(slots, 0, len);
	fflush(stdout);
	for (i = 0; i < clients; i++) {
		if ((pids[i] = fork()) == 0) {
			close(go[1]);
			child(dsn, op, arg, i, runs, seconds, go[0], &slots[i]);
		}
	}
	close(go[0]);
	usleep(200000); /* let every client connect */
	for (i = 0; i < clients; i++)
		slots[i].start = bench_now();
	close(go[1]);
	for (i = 0; i < clients; i++)
		if (pids[i] == -1 || waitpid(pids[i], &st, 0) == -1 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			sum[0].errors++;
	for (i = 0; i < clients; i++)
		for (m = 0; m < 2; m++) {
			sum[m].ops += slots[i].rep[m].ops;
			sum[m].errors += slots[i].rep[m].errors;
			sum[m].retries += slots[i].rep[m].retries;
			for (b = 0; b < HIST; b++)
				sum[m].hist[b] += slots[i].rep[m].hist[b];
		}
	munmap(slots, len);
	summarize(&sum[0], seconds, raw_out);
	if (svc != NULL)
		summarize(&sum[1], seconds, svc_out);
}

/* --- redemptions of one hot code --------------------------------------- */

struct target {
	struct bench_code c;
	int run; /* the setup's number: accounts and seqs stay unique */
};

struct raw {
	int64_t tenant, code_id, campaign_id, seq;
	const char *account;
};

static int
raw_tx(struct db *db, void *arg)
{
	struct raw *r = arg;
	int64_t n;
	int rc;

	rc = db_exec(db, STMT_BENCH_RAW_CLAIM, &n, "i", r->code_id);
	if (rc != DB_OK)
		return rc;
	if (n != 1)
		return DB_ROLLBACK;
	return db_exec(db, STMT_BENCH_RAW_INSERT, NULL, "iiiti", r->tenant,
	    r->code_id, r->campaign_id, r->account, r->seq);
}

static int
redeem_raw_op(struct bench_client *c, int64_t i)
{
	const struct target *t = c->arg;
	char account[96];
	/* seq: unique per run, client and attempt */
	struct raw r = {t->c.tenant, t->c.code_id, t->c.campaign_id,
	    -((int64_t)t->run * 1000000000000LL +
		(int64_t)c->idx * 10000000000LL + i + 1),
	    account};

	snprintf(account, sizeof(account), "raw%d-c%d-%lld@bench", t->run,
	    c->idx, (long long)i);
	return db_transact(c->db, DB_TX_WRITE, raw_tx, &r) == DB_OK ? 0 : -1;
}

/* One redemption of t's code through the service, a fresh account. */
static int
svc_claim(struct bench_client *c, const struct target *t, int64_t i)
{
	char account[96], client[32];
	struct redeem_result res;

	snprintf(account, sizeof(account), "svc%d-c%d-%lld@bench", t->run,
	    c->idx, (long long)i);
	snprintf(client, sizeof(client), "10.%d.0.1", c->idx);
	redeem_code(&c->svc, t->c.code, account, client, &res);
	return res.error == ERROR_NONE && !res.already ? 0 : -1;
}

static int
redeem_svc_op(struct bench_client *c, int64_t i)
{
	return svc_claim(c, c->arg, i);
}

/* The split rows: two codes of 1e9 seats, taking turns. */
struct split_pair {
	struct target one;   /* one counter row */
	struct target split; /* SPLIT_SHARDS rows */
};

#define SPLIT_SHARDS 16

static int
redeem_one_op(struct bench_client *c, int64_t i)
{
	const struct split_pair *p = c->arg;

	return svc_claim(c, &p->one, i);
}

static int
redeem_split_op(struct bench_client *c, int64_t i)
{
	const struct split_pair *p = c->arg;

	return svc_claim(c, &p->split, i);
}

static void
emit_one(void *arg, const char *display)
{
	snprintf(arg, 96, "%s", display);
}

void
bench_code(const char *dsn, const char *name, struct bench_code *out)
{
	bench_code_split(dsn, name, 1, out);
}

void
bench_code_split(
    const char *dsn, const char *name, int shards, struct bench_code *out)
{
	struct db *db = bench_open(dsn);
	struct codes_gen g;
	struct campaign k;
	struct code_info ci;
	struct svc svc;
	int64_t created;

	bench_svc(db, &svc);
	memset(out, 0, sizeof(*out));
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "%s-%s", name, bench_tag);
	if (campaign_create(&svc, &k) != ERROR_NONE) {
		fprintf(stderr, "bench: campaign: %s\n", db_errmsg(db));
		exit(1);
	}
	memset(&g, 0, sizeof(g));
	g.campaign = k.name;
	g.count = 1;
	g.max_uses = INT64_C(1000000000);
	g.shards = shards;
	g.emit = emit_one;
	g.arg = out->code;
	if (codes_generate(&svc, &g, &created) != ERROR_NONE ||
	    code_get(&svc, out->code, &ci) != ERROR_NONE) {
		fprintf(stderr, "bench: code: %s\n", db_errmsg(db));
		exit(1);
	}
	str_copy(out->campaign, k.name, sizeof(out->campaign));
	out->code_id = ci.id;
	out->campaign_id = k.id;
	out->tenant = svc.tenant_id;
	db_close(db);
}

static void
redemptions(const struct bench_engine *e, double seconds)
{
	static int run;
	int i;

	for (i = 0; i < e->nclients; i++) {
		struct target t;
		struct bench_result raw, svc;
		char name[32];

		snprintf(name, sizeof(name), "hot%d", ++run);
		bench_code(e->dsn, name, &t.c);
		t.run = run;
		bench_measure(e->dsn, redeem_raw_op, NULL, &t, e->clients[i],
		    seconds, &raw, NULL);
		bench_measure(e->dsn, redeem_svc_op, NULL, &t, e->clients[i],
		    seconds, &svc, NULL);
		printf("%-8s %7d %12.0f %8.2f %8.2f %12.0f %8.2f %8.2f "
		       "%6.0f%%\n",
		    e->name, e->clients[i], raw.rate, raw.p50, raw.p99,
		    svc.rate, svc.p50, svc.p99,
		    raw.rate > 0 ? 100.0 * svc.rate / raw.rate : 0);
		if (raw.errors + svc.errors > 0)
			printf("         (failed attempts: raw %lld, "
			       "service %lld)\n",
			    (long long)raw.errors, (long long)svc.errors);
		fflush(stdout);
		bench_record("hot code", e->name, "service", svc.rate,
		    "claims/s", bench_ratio_value(raw.rate, svc.rate),
		    "service/raw", "%d client%s", e->clients[i],
		    e->clients[i] == 1 ? "" : "s");
	}
}

/* BENCH_RTT_US: the emulated round trip of the split's second MariaDB
 * rows (default 200 us, a network inside one data centre). */
static long
split_rtt_us(void)
{
	const char *v = getenv("BENCH_RTT_US");

	return v != NULL && atol(v) >= 0 ? atol(v) : 200;
}

static void
split_header(double seconds)
{
	printf("\nThe hot code split over counter rows: service claims "
	       "(redeem_code(), fresh accounts) of one code on one\n"
	       "counter row (codes_gen.shards 1) and of one split over %d "
	       "(shards %d), taking turns every half second;\n%.0f s each "
	       "per cell; clients above 1 on each engine.\n\n",
	    SPLIT_SHARDS, SPLIT_SHARDS, seconds);
	printf("engine+rtt: MariaDB again with a %ld us network round trip "
	       "emulated before each statement (REDEEM_DB_RTT_US),\nas "
	       "from hosts on other machines: there the row lock, not the "
	       "CPU, bounds one row.\n\n",
	    split_rtt_us());
	printf("%-12s %7s %12s %8s %8s %12s %8s %8s %7s %s\n", "engine",
	    "clients", "one row/s", "p50 ms", "p99 ms", "split/s", "p50 ms",
	    "p99 ms", "ratio", "(split/one)");
	fflush(stdout);
}

/*
 * rtt_us > 0: every statement, begin and commit of the clients waits
 * that long first (REDEEM_DB_RTT_US), as from hosts on other machines
 * than the database's; a row lock is then held through the round trips
 * of its transaction, as it is over a network. Over the local socket a
 * 2-core machine is short of CPU before a row lock binds.
 */
static void
split_rows(const struct bench_engine *e, double seconds, long rtt_us)
{
	static int run;
	struct split_pair p;
	struct bench_result one, split;
	char name[32], rtt[16], label[48];
	double r;
	int i;

	snprintf(rtt, sizeof(rtt), "%ld", rtt_us);
	snprintf(
	    label, sizeof(label), "%s%s", e->name, rtt_us > 0 ? "+rtt" : "");
	for (i = 0; i < e->nclients; i++) {
		if (e->clients[i] < 2)
			continue;
		snprintf(name, sizeof(name), "one%d", ++run);
		bench_code_split(e->dsn, name, 1, &p.one.c);
		p.one.run = 1000 + run;
		snprintf(name, sizeof(name), "split%d", run);
		bench_code_split(e->dsn, name, SPLIT_SHARDS, &p.split.c);
		p.split.run = 2000 + run;
		if (rtt_us > 0)
			setenv("REDEEM_DB_RTT_US", rtt, 1);
		bench_measure(e->dsn, redeem_one_op, redeem_split_op, &p,
		    e->clients[i], seconds, &one, &split);
		unsetenv("REDEEM_DB_RTT_US");
		r = bench_ratio_value(one.rate, split.rate);
		printf("%-12s %7d %12.0f %8.2f %8.2f %12.0f %8.2f %8.2f "
		       "%6.2fx\n",
		    label, e->clients[i], one.rate, one.p50, one.p99,
		    split.rate, split.p50, split.p99, r);
		if (one.errors + split.errors > 0)
			printf("         (failed claims: one row %lld, "
			       "split %lld)\n",
			    (long long)one.errors, (long long)split.errors);
		fflush(stdout);
		bench_record("hot code split", e->name, "one counter row",
		    one.rate, "claims/s", -1, "", "%d clients, service%s%s%s",
		    e->clients[i], rtt_us > 0 ? ", " : "",
		    rtt_us > 0 ? rtt : "", rtt_us > 0 ? " us round trip" : "");
		bench_record("hot code split", e->name, "16 counter rows",
		    split.rate, "claims/s", r, "split/one",
		    "%d clients, service%s%s%s", e->clients[i],
		    rtt_us > 0 ? ", " : "", rtt_us > 0 ? rtt : "",
		    rtt_us > 0 ? " us round trip" : "");
	}
}

/* One million codes: generated, then exported by redeemctl (its peak
 * memory shows the export streams). */
static void
generation(const char *engine, const char *dsn, int64_t n)
{
	struct db *db = bench_open(dsn);
	struct codes_gen g;
	struct campaign k;
	struct svc svc;
	struct rusage ru;
	int64_t created;
	double t0, gen, exp;
	const char *dir = getenv("REDEEM_BIN");
	char bin[1024];
	pid_t p;
	int st;

	/* redeemctl of the same build (make bench's BUILD) */
	snprintf(bin, sizeof(bin), "%s/redeemctl",
	    dir != NULL && *dir != '\0' ? dir : "build");
	bench_svc(db, &svc);
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "million%ld", (long)time(NULL));
	if (campaign_create(&svc, &k) != ERROR_NONE)
		exit(1);
	memset(&g, 0, sizeof(g));
	g.campaign = k.name;
	g.count = n;
	g.max_uses = 1;
	t0 = bench_now();
	if (codes_generate(&svc, &g, &created) != ERROR_NONE) {
		fprintf(
		    stderr, "bench: generation failed: %s\n", db_errmsg(db));
		exit(1);
	}
	gen = bench_now() - t0;
	db_close(db);
	fflush(stdout); /* or the child's freopen writes it out again */
	t0 = bench_now();
	if ((p = fork()) == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL)
			_exit(1);
		setenv("REDEEM_DB", dsn, 1);
		execl(bin, "redeemctl", "codes", "export", "--campaign", k.name,
		    (char *)NULL);
		_exit(127);
	}
	if (wait4(p, &st, 0, &ru) == -1 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench: export failed\n");
		exit(1);
	}
	exp = bench_now() - t0;
	printf("%-8s %lld codes generated in %.1f s (%.0f codes/s); "
	       "exported in %.1f s, redeemctl peak memory %.1f MiB\n",
	    engine, (long long)created, gen, (double)created / gen, exp,
	    (double)ru.ru_maxrss / 1024.0);
	fflush(stdout);
	bench_record("generation", engine, "generate", (double)created / gen,
	    "codes/s", -1, "", "%lld codes", (long long)created);
	bench_record("generation", engine, "export", exp, "s", -1, "",
	    "%lld codes, redeemctl peak %.1f MiB", (long long)created,
	    (double)ru.ru_maxrss / 1024.0);
}

/* --- the command line --------------------------------------------------- */

/* "1,8,32" into v; the count, or -1. */
static int
parse_counts(const char *s, int *v, int max)
{
	char buf[256], *c, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (c = strtok_r(buf, ",", &save); c != NULL;
	     c = strtok_r(NULL, ",", &save)) {
		if (n == max || (v[n] = atoi(c)) < 1)
			return -1;
		n++;
	}
	return n > 0 ? n : -1;
}

/* ENGINE=DSN=CLIENTS (the DSN may hold '='). */
static int
parse_engine(const char *s, struct bench_engine *e)
{
	char spec[2048], *dsn, *clients;

	memset(e, 0, sizeof(*e));
	snprintf(spec, sizeof(spec), "%s", s);
	if ((dsn = strchr(spec, '=')) == NULL ||
	    (clients = strrchr(dsn + 1, '=')) == NULL)
		return -1;
	*dsn++ = '\0';
	*clients++ = '\0';
	if (str_copy(e->name, spec, sizeof(e->name)) == -1 ||
	    str_copy(e->dsn, dsn, sizeof(e->dsn)) == -1)
		return -1;
	e->nclients = parse_counts(clients, e->clients, 16);
	return e->nclients > 0 ? 0 : -1;
}

/* --hooks ENGINE=DSN: the engine's webhook database. */
static int
parse_hooks(const char *s, struct bench_engine *v, int n)
{
	const char *eq = strchr(s, '=');
	int i;

	for (i = 0; eq != NULL && i < n; i++)
		if (strlen(v[i].name) == (size_t)(eq - s) &&
		    strncmp(v[i].name, s, (size_t)(eq - s)) == 0)
			return str_copy(
			    v[i].hooks_dsn, eq + 1, sizeof(v[i].hooks_dsn));
	return -1;
}

static int
wanted(const char *only, const char *section)
{
	size_t n = strlen(section);
	const char *p;

	if (only == NULL)
		return 1;
	for (p = only; (p = strstr(p, section)) != NULL; p += n)
		if ((p == only || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ','))
			return 1;
	return 0;
}

/* Every engine's schema, once, before any row. */
static void
migrate_all(const struct bench_engine *v, int n)
{
	struct db *db;
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < 2; j++) {
			const char *dsn = j == 0 ? v[i].dsn : v[i].hooks_dsn;

			if (*dsn == '\0')
				continue;
			db = bench_open(dsn);
			if (migrate_run(db, NULL, NULL) == -1) {
				fprintf(stderr, "bench: %s: %s\n", v[i].name,
				    db_errmsg(db));
				exit(1);
			}
			db_close(db);
		}
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: bench SECONDS ENGINE=DSN=CLIENTS,... [--gen N] "
	    "[--permit-clients N,...]\n"
	    "    [--sweep-holds N] [--deliveries N] [--hooks ENGINE=DSN] "
	    "[--only SECTION,...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct bench_engine eng[ENGINES_MAX];
	int permit_clients[16] = {1, 8, 32}, npermit = 3;
	int64_t gen = 1000000, sweep_holds = 100000, deliveries = 10000;
	const char *only = NULL;
	double seconds;
	int i, n = 0;

	if (argc < 3 || (seconds = atof(argv[1])) <= 0)
		usage();
	for (i = 2; i < argc; i++) {
		const char *opt = argv[i],
			   *val = i + 1 < argc ? argv[i + 1] : "";

		if (strncmp(opt, "--", 2) != 0) {
			if (n == ENGINES_MAX ||
			    parse_engine(opt, &eng[n]) == -1)
				usage();
			n++;
			continue;
		}
		i++;
		if (strcmp(opt, "--gen") == 0)
			gen = atoll(val);
		else if (strcmp(opt, "--permit-clients") == 0) {
			if ((npermit = parse_counts(val, permit_clients, 16)) <
			    0)
				usage();
		} else if (strcmp(opt, "--sweep-holds") == 0)
			sweep_holds = atoll(val);
		else if (strcmp(opt, "--deliveries") == 0)
			deliveries = atoll(val);
		else if (strcmp(opt, "--hooks") == 0) {
			if (parse_hooks(val, eng, n) == -1)
				usage();
		} else if (strcmp(opt, "--only") == 0)
			only = val;
		else
			usage();
	}
	if (n == 0 || sodium_init() < 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	srand((unsigned)time(NULL));
	snprintf(bench_tag, sizeof(bench_tag), "%lx", (long)time(NULL));
	migrate_all(eng, n);

	if (wanted(only, "redeem")) {
		printf("Hot code (max_uses 1e9), every client redeeming it "
		       "with fresh accounts; %.0f s per cell.\n"
		       "raw = BEGIN; conditional UPDATE; INSERT; COMMIT. "
		       "service = redeem_code(): abuse gate, lookup, claim, "
		       "sequence, insert, outbox event.\n\n",
		    seconds);
		printf("%-8s %7s %12s %8s %8s %12s %8s %8s %7s\n", "engine",
		    "clients", "raw tx/s", "p50 ms", "p99 ms", "service/s",
		    "p50 ms", "p99 ms", "ratio");
		for (i = 0; i < n; i++)
			redemptions(&eng[i], seconds);
	}
	if (wanted(only, "split")) {
		split_header(seconds);
		for (i = 0; i < n; i++)
			split_rows(&eng[i], seconds, 0);
		for (i = 0; i < n; i++)
			if (strncmp(eng[i].dsn, "mysql:", 6) == 0 &&
			    split_rtt_us() > 0)
				split_rows(&eng[i], seconds, split_rtt_us());
	}
	if (wanted(only, "holds")) {
		bench_holds_header(seconds);
		for (i = 0; i < n; i++)
			bench_holds(&eng[i], seconds);
	}
	if (wanted(only, "permits")) {
		bench_permits_header(seconds, permit_clients, npermit);
		for (i = 0; i < n; i++)
			bench_permits(
			    &eng[i], seconds, permit_clients, npermit);
	}
	if (wanted(only, "sweep") && sweep_holds > 0) {
		bench_sweep_header(sweep_holds);
		for (i = 0; i < n; i++)
			bench_sweep(&eng[i], sweep_holds);
	}
	if (wanted(only, "webhooks") && deliveries > 0) {
		bench_webhooks_header(deliveries);
		for (i = 0; i < n; i++)
			bench_webhooks(&eng[i], deliveries);
	}
	if (wanted(only, "gen") && gen > 0) {
		printf("\n");
		for (i = 0; i < n; i++)
			generation(eng[i].name, eng[i].dsn, gen);
	}
	return 0;
}
