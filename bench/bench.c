/*
 * make bench: redemptions per second through the service layer against
 * the raw transaction (the conditional UPDATE and the INSERT alone, same
 * schema, no service code), measured back to back in one run, with
 * forked clients hammering one hot code; then one million codes generated
 * and exported. Prints a table; the ratios are the point, not the
 * absolute numbers of this machine.
 *
 * usage: bench SECONDS ENGINE:DSN:CLIENTS[,CLIENTS...] ... [--gen N]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../app/lib/common.h"
#include "../app/core/campaigns.h"
#include "../app/core/codes.h"
#include "../app/core/redeem.h"
#include "../app/core/svc.h"
#include "../app/db/migrate.h"

#define HIST 20000 /* latency buckets of 10 us: up to 200 ms */

struct child_report {
	int64_t ops, errors;
	uint32_t hist[HIST];
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct db *
open_or_die(const char *dsn)
{
	char e[512];
	struct db *db = db_open(dsn, e, sizeof(e));

	if (db == NULL) {
		fprintf(stderr, "bench: %s\n", e);
		exit(1);
	}
	return db;
}

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

struct target {
	const char *dsn;
	char code[96];
	int64_t code_id, campaign_id, tenant;
};

/* Each child fills its own slot of a shared mapping: reports are far
 * larger than PIPE_BUF, so several children writing one pipe would
 * interleave. */
static void
child(const struct target *t, int raw, int idx, int run, double seconds,
    int go_fd, struct child_report *slot)
{
	struct child_report rep;
	char account[96], client[32], c;
	struct redeem_result res;
	struct svc svc;
	struct db *db = open_or_die(t->dsn);
	double end, t0, dt;
	int64_t i;
	size_t b;

	memset(&rep, 0, sizeof(rep));
	if (svc_open(&svc, db, "default") != ERROR_NONE)
		_exit(1);
	snprintf(client, sizeof(client), "10.%d.0.1", idx);
	if (read(go_fd, &c, 1) < 0)
		_exit(1);
	end = now() + seconds;
	for (i = 0; (t0 = now()) < end; i++) {
		snprintf(account, sizeof(account), "%s%d-c%d-%lld@bench",
		    raw ? "raw" : "svc", run, idx, (long long)i);
		if (raw) {
			/* seq: unique per run, client and attempt */
			struct raw r = {t->tenant, t->code_id, t->campaign_id,
			    -((int64_t)run * 1000000000000LL +
				(int64_t)idx * 10000000000LL + i + 1),
			    account};

			if (db_transact(db, DB_TX_WRITE, raw_tx, &r) != DB_OK)
				rep.errors++;
			else
				rep.ops++;
		} else {
			redeem_code(&svc, t->code, account, client, &res);
			if (res.error != ERROR_NONE || res.already)
				rep.errors++;
			else
				rep.ops++;
		}
		dt = (now() - t0) * 1e5; /* 10 us units */
		b = dt >= HIST - 1 ? HIST - 1 : (size_t)dt;
		rep.hist[b]++;
	}
	db_close(db);
	memcpy(slot, &rep, sizeof(rep));
	_exit(0);
}

struct result {
	double rate, p50, p99;
	int64_t errors;
};

static void
measure(const struct target *t, int raw, int clients, int run, double seconds,
    struct result *out)
{
	static struct child_report sum;
	struct child_report *slots;
	size_t b, len = sizeof(*slots) * (size_t)clients;
	int64_t total = 0, acc;
	int go[2], i, st;

	memset(&sum, 0, sizeof(sum));
	slots = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED || pipe(go) == -1)
		exit(1);
	memset(slots, 0, len);
	for (i = 0; i < clients; i++) {
		pid_t p = fork();

		if (p == 0) {
			close(go[1]);
			child(t, raw, i, run, seconds, go[0], &slots[i]);
		}
	}
	close(go[0]);
	usleep(200000); /* let every client connect */
	close(go[1]);
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			sum.errors++;
	for (i = 0; i < clients; i++) {
		sum.ops += slots[i].ops;
		sum.errors += slots[i].errors;
		for (b = 0; b < HIST; b++)
			sum.hist[b] += slots[i].hist[b];
	}
	munmap(slots, len);
	out->rate = (double)sum.ops / seconds;
	out->errors = sum.errors;
	for (b = 0; b < HIST; b++)
		total += sum.hist[b];
	out->p50 = out->p99 = 0;
	for (b = 0, acc = 0; b < HIST; b++) {
		acc += sum.hist[b];
		if (out->p50 == 0 && acc * 2 >= total)
			out->p50 = (double)(b + 1) / 100.0;
		if (acc * 100 >= total * 99) {
			out->p99 = (double)(b + 1) / 100.0;
			break;
		}
	}
}

static void
emit_one(void *arg, const char *display)
{
	snprintf(arg, 96, "%s", display);
}

static void
setup(struct target *t, const char *engine, int run)
{
	struct db *db = open_or_die(t->dsn);
	struct codes_gen g;
	struct campaign k;
	struct code_info ci;
	struct svc svc;
	int64_t created;

	if (migrate_run(db, NULL, NULL) == -1 ||
	    svc_open(&svc, db, "default") != ERROR_NONE) {
		fprintf(stderr, "bench: %s: %s\n", engine, db_errmsg(db));
		exit(1);
	}
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "hot%d", run);
	if (campaign_create(&svc, &k) != ERROR_NONE) {
		fprintf(stderr, "bench: campaign: %s\n", db_errmsg(db));
		exit(1);
	}
	memset(&g, 0, sizeof(g));
	g.campaign = k.name;
	g.count = 1;
	g.max_uses = INT64_C(1000000000);
	g.emit = emit_one;
	g.arg = t->code;
	if (codes_generate(&svc, &g, &created) != ERROR_NONE ||
	    code_get(&svc, t->code, &ci) != ERROR_NONE)
		exit(1);
	t->code_id = ci.id;
	t->campaign_id = k.id;
	t->tenant = svc.tenant_id;
	db_close(db);
}

/* One million codes: generated, then exported by redeemctl (its peak
 * memory shows the export streams). */
static void
generation(const char *engine, const char *dsn, int64_t n)
{
	struct db *db = open_or_die(dsn);
	struct codes_gen g;
	struct campaign k;
	struct svc svc;
	struct rusage ru;
	int64_t created;
	double t0, gen, exp;
	pid_t p;
	int st;

	if (svc_open(&svc, db, "default") != ERROR_NONE)
		exit(1);
	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "million%ld", (long)time(NULL));
	if (campaign_create(&svc, &k) != ERROR_NONE)
		exit(1);
	memset(&g, 0, sizeof(g));
	g.campaign = k.name;
	g.count = n;
	g.max_uses = 1;
	t0 = now();
	if (codes_generate(&svc, &g, &created) != ERROR_NONE) {
		fprintf(
		    stderr, "bench: generation failed: %s\n", db_errmsg(db));
		exit(1);
	}
	gen = now() - t0;
	db_close(db);
	t0 = now();
	if ((p = fork()) == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL)
			_exit(1);
		setenv("REDEEM_DB", dsn, 1);
		execl("build/redeemctl", "redeemctl", "codes", "export",
		    "--campaign", k.name, (char *)NULL);
		_exit(127);
	}
	if (wait4(p, &st, 0, &ru) == -1 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench: export failed\n");
		exit(1);
	}
	exp = now() - t0;
	printf("%-8s %lld codes generated in %.1f s (%.0f codes/s); "
	       "exported in %.1f s, redeemctl peak memory %.1f MiB\n",
	    engine, (long long)created, gen, (double)created / gen, exp,
	    (double)ru.ru_maxrss / 1024.0);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	double seconds;
	int64_t gen = 1000000;
	int i, run = 0;

	if (argc < 3 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: bench SECONDS ENGINE=DSN=CLIENTS,... "
				"[--gen N]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	srand((unsigned)time(NULL));
	printf("Hot code (max_uses 1e9), every client redeeming it with fresh "
	       "accounts; %.0f s per cell.\n"
	       "raw = BEGIN; conditional UPDATE; INSERT; COMMIT. service = "
	       "redeem_code(): abuse gate, lookup, claim, sequence, insert, "
	       "outbox event.\n\n",
	    seconds);
	printf("%-8s %7s %12s %8s %8s %12s %8s %8s %7s\n", "engine", "clients",
	    "raw tx/s", "p50 ms", "p99 ms", "service/s", "p50 ms", "p99 ms",
	    "ratio");
	for (i = 2; i < argc; i++) {
		char spec[2048], *engine, *dsn, *clients, *c, *save = NULL;

		if (strcmp(argv[i], "--gen") == 0 && i + 1 < argc) {
			gen = atoll(argv[++i]);
			continue;
		}
		snprintf(spec, sizeof(spec), "%s", argv[i]);
		engine = spec;
		if ((dsn = strchr(engine, '=')) == NULL ||
		    (clients = strrchr(dsn + 1, '=')) == NULL)
			return 2;
		*dsn++ = '\0';
		*clients++ = '\0';
		for (c = strtok_r(clients, ",", &save); c != NULL;
		     c = strtok_r(NULL, ",", &save)) {
			struct target t;
			struct result raw, svc;

			memset(&t, 0, sizeof(t));
			t.dsn = dsn;
			setup(&t, engine, ++run);
			measure(&t, 1, atoi(c), run, seconds, &raw);
			measure(&t, 0, atoi(c), run, seconds, &svc);
			printf("%-8s %7d %12.0f %8.2f %8.2f %12.0f %8.2f %8.2f "
			       "%6.0f%%\n",
			    engine, atoi(c), raw.rate, raw.p50, raw.p99,
			    svc.rate, svc.p50, svc.p99,
			    raw.rate > 0 ? 100.0 * svc.rate / raw.rate : 0);
			if (raw.errors + svc.errors > 0)
				printf("         (failed attempts: raw %lld, "
				       "service %lld)\n",
				    (long long)raw.errors,
				    (long long)svc.errors);
			fflush(stdout);
		}
	}
	if (gen > 0) {
		printf("\n");
		for (i = 2; i < argc; i++) {
			char spec[2048], *dsn, *end;

			if (strcmp(argv[i], "--gen") == 0) {
				i++;
				continue;
			}
			snprintf(spec, sizeof(spec), "%s", argv[i]);
			dsn = strchr(spec, '=');
			end = strrchr(dsn + 1, '=');
			*dsn++ = '\0';
			*end = '\0';
			generation(spec, dsn, gen);
		}
	}
	return 0;
}
