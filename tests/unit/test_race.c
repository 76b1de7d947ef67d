/*
 * Races with real processes: each round forks RACE_CHILDREN children that
 * open their own connection to the test's database, wait at a barrier,
 * then go through the real service code all at the same instant. Each
 * child reports every outcome to the parent as a fixed-size record on a
 * pipe; the parent reaps every child, tallies, asserts, and runs verify
 * after every round. RACE_ROUNDS (default 100) sets the rounds per
 * scenario (fr_rounds), RACE_SEED the seed that picks when the revoker
 * strikes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "../../app/core/verify.h"
#include "fixture.h"
#include "forkrace.h"

#define RACE_CHILDREN 16
#define RACE_MAX_CHILDREN (RACE_CHILDREN + 1)
#define RACE_MAX_RECS 256
#define RACE_TIMEOUT 600

enum rec_kind { REC_REDEEM, REC_POOL, REC_REVOKE };

/* One outcome, written by a child with one write(2): records from
 * several children never interleave (PIPE_BUF). */
struct rec {
	int32_t child;
	int32_t kind;
	int32_t rc; /* what the call returned */
	int32_t error;
	int32_t already;
	int32_t compensated;
	int32_t rechecked;
	int32_t pad;
	int64_t id;
	int64_t code_id;
	char code[CODE_DISPLAY_MAX];
	char account[ACCOUNT_MAX + 1];
	char state[16]; /* REC_REVOKE: the code's state afterwards */
	int64_t uses;   /* REC_REVOKE: its uses when the revoke landed */
	int64_t us;     /* how long the call took */
};

_Static_assert(sizeof(struct rec) <= PIPE_BUF, "a record is one write");

struct race;
/* Runs in a child, after the barrier, with the child's own svc. */
typedef void (*race_fn)(struct race *, struct svc *, int child);

struct race {
	const char *name;
	int round, rounds;
	unsigned seed;
	int nchildren;
	race_fn fn;
	race_fn warm; /* NULL, or before the barrier */
	/* The round's data, set by the parent before it forks. */
	char campaign[CAMPAIGN_NAME_MAX + 1];
	char code[96];
	char (*codes)[96];
	int ncodes;
	int attempts;      /* spread over the children */
	int revoke_at;     /* the revoker waits for this many uses, */
	unsigned delay_us; /* or this long */
	int out;           /* child: the write end of the results pipe */
	/* Filled by the parent. */
	struct rec recs[RACE_MAX_RECS];
	int nrecs;
};

struct tally {
	long ok, fresh, replay, exhausted, revoked, other;
	long compensated, rechecked;
};

static struct race race; /* too large for the stack of a test */

static unsigned
race_seed(void)
{
	const char *e = getenv("RACE_SEED");

	if (e != NULL && *e != '\0')
		return (unsigned)strtoul(e, NULL, 10);
	return (unsigned)time(NULL) ^ (unsigned)getpid();
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
race_init(struct race *r, const char *name, race_fn fn, int nchildren)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->fn = fn;
	r->nchildren = nchildren;
	r->rounds = fr_rounds(100);
	r->seed = race_seed();
}

/* Child side: one record, or the child dies (the parent sees it). */
static void
race_emit(struct race *r, struct rec *rec)
{
	ssize_t n;

	do
		n = write(r->out, rec, sizeof(*rec));
	while (n == -1 && errno == EINTR);
	if (n != (ssize_t)sizeof(*rec))
		_exit(4);
}

static void
rec_from_result(struct rec *rec, int child, enum rec_kind kind, int rc,
    const struct redeem_result *res, const char *account)
{
	memset(rec, 0, sizeof(*rec));
	rec->child = child;
	rec->kind = kind;
	rec->rc = rc;
	rec->error = (int32_t)res->error;
	rec->already = res->already;
	rec->compensated = res->compensated;
	rec->rechecked = res->rechecked;
	rec->id = res->r.id;
	rec->code_id = res->r.code_id;
	snprintf(rec->code, sizeof(rec->code), "%s", res->r.code);
	snprintf(rec->account, sizeof(rec->account), "%s", account);
}

static void
child_redeem(struct race *r, struct svc *svc, int child, const char *code,
    const char *account)
{
	struct redeem_result res;
	struct rec rec;
	double t = now_s();
	int rc;

	rc = redeem_code(svc, code, account, NULL, &res);
	rec_from_result(&rec, child, REC_REDEEM, rc, &res, account);
	rec.us = (int64_t)((now_s() - t) * 1e6);
	race_emit(r, &rec);
}

/*
 * The child: its own connection, opened after the fork (a connection is
 * never shared across processes). db_open rather than fx_connect: an
 * assertion here would leave through Check's machinery (with CK_FORK=no,
 * back into the runner) instead of _exit.
 */
static _Noreturn void
race_child(struct race *r, int child, int go, int ready)
{
	struct db *db;
	struct svc svc;
	char err[512], b;
	ssize_t n;
	int ok;

	db = db_open(fx.dsn, err, sizeof(err));
	if (db == NULL)
		fprintf(stderr, "race child %d: connect: %s\n", child, err);
	ok = db != NULL && svc_open(&svc, db, "default") == ERROR_NONE;
	if (ok && r->warm != NULL)
		r->warm(r, &svc, child);
	b = ok ? 'R' : 'F';
	if (write(ready, &b, 1) != 1)
		_exit(3);
	close(ready);
	if (!ok)
		_exit(2);
	/* The barrier: EOF when the parent closes the write end. */
	do
		n = read(go, &b, 1);
	while (n == -1 && errno == EINTR);
	close(go);
	r->fn(r, &svc, child);
	db_close(db);
	close(r->out);
	_exit(0);
}

/* Reads exactly n bytes; 0 at a clean EOF, -1 on a torn record. */
static int
read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		k = read(fd, (char *)buf + got, n - got);
		if (k == -1 && errno == EINTR)
			continue;
		if (k <= 0)
			return got == 0 && k == 0 ? 0 : -1;
		got += (size_t)k;
	}
	return 1;
}

/*
 * One round: fork, wait until every child is connected, release them all
 * at once, collect the records until every child has closed its end, reap
 * every child, and only then assert about how they ended.
 */
static void
race_round(struct race *r)
{
	pid_t pids[RACE_MAX_CHILDREN];
	int go[2], ready[2], out[2];
	int i, forked, nready = 0, torn = 0, bad = 0, status, lost = 0;
	struct rec rec;
	char b;
	pid_t w;

	ck_assert_int_le(r->nchildren, RACE_MAX_CHILDREN);
	r->nrecs = 0;
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(out), 0);
	fflush(stdout);
	fflush(stderr);
	for (forked = 0; forked < r->nchildren; forked++) {
		pids[forked] = fork();
		if (pids[forked] == -1)
			break;
		if (pids[forked] == 0) {
			close(go[1]);
			close(ready[0]);
			close(out[0]);
			r->out = out[1];
			race_child(r, forked, go[0], ready[1]);
		}
	}
	close(go[0]);
	close(ready[1]);
	close(out[1]);
	/* EOF once every child has signalled (or died). */
	while (nready < forked && read(ready[0], &b, 1) == 1)
		if (b == 'R')
			nready++;
	close(ready[0]);
	close(go[1]); /* go */
	for (;;) {
		int k = read_full(out[0], &rec, sizeof(rec));

		if (k == 0)
			break;
		if (k == -1) {
			torn++;
			break;
		}
		if (r->nrecs < RACE_MAX_RECS)
			r->recs[r->nrecs++] = rec;
		else
			lost++;
	}
	close(out[0]);
	for (i = 0; i < forked; i++) {
		do
			w = waitpid(pids[i], &status, 0);
		while (w == -1 && errno == EINTR);
		if (w != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad++;
	}
	ck_assert_msg(forked == r->nchildren, "%s round %d: fork: %s", r->name,
	    r->round, strerror(errno));
	ck_assert_msg(nready == forked,
	    "%s round %d: %d of %d children connected", r->name, r->round,
	    nready, forked);
	ck_assert_msg(bad == 0, "%s round %d: %d children failed", r->name,
	    r->round, bad);
	ck_assert_msg(torn == 0 && lost == 0, "%s round %d: torn records",
	    r->name, r->round);
}

static void
tally_add(struct tally *t, const struct rec *rec)
{
	switch (rec->error) {
	case ERROR_NONE:
		t->ok++;
		if (rec->already)
			t->replay++;
		else
			t->fresh++;
		break;
	case ERROR_EXHAUSTED:
		t->exhausted++;
		break;
	case ERROR_REVOKED:
		t->revoked++;
		break;
	default:
		t->other++;
	}
	t->compensated += rec->compensated;
	t->rechecked += rec->rechecked;
}

static void
tally_print(
    const struct race *r, const struct tally *t, double t0, const char *extra)
{
	printf("race %-22s %s: %d rounds x %d children (seed %u): ok %ld "
	       "(fresh %ld, replay %ld), exhausted %ld, revoked %ld, "
	       "other %ld; compensated %ld, rechecked %ld%s; %.1f s\n",
	    r->name, db_engine(fx.db), r->rounds, r->nchildren, r->seed, t->ok,
	    t->fresh, t->replay, t->exhausted, t->revoked, t->other,
	    t->compensated, t->rechecked, extra ? extra : "", now_s() - t0);
	fflush(stdout);
}

static void
code_info(const char *code, struct code_info *ci)
{
	ck_assert_int_eq(code_get(&fx.svc, code, ci), ERROR_NONE);
}

/* Every record is a call that returned normally with a word of the set
 * the scenario allows. */
static void
check_words(const struct race *r, int expect_recs, unsigned allowed)
{
	int i;

	ck_assert_msg(r->nrecs == expect_recs,
	    "%s round %d: %d outcomes, want %d", r->name, r->round, r->nrecs,
	    expect_recs);
	for (i = 0; i < r->nrecs; i++) {
		const struct rec *x = &r->recs[i];

		ck_assert_msg(x->rc == 0 && (allowed & (1u << x->error)) != 0,
		    "%s round %d (seed %u): child %d got %s (rc %d)", r->name,
		    r->round, r->seed, x->child,
		    error_name((enum error_word)x->error), x->rc);
	}
}

#define W(e) (1u << (e))

/* 1: one seat, children alternating two accounts. */
static void
fn_one_seat(struct race *r, struct svc *svc, int child)
{
	char account[64];

	snprintf(account, sizeof(account), "%s-r%d@race.test",
	    child % 2 ? "b" : "a", r->round);
	child_redeem(r, svc, child, r->code, account);
}

/* Odd rounds race on codes whose seats are split over counter rows
 * (seats.c): every assertion holds for both kinds. */
static int
split_round(int round)
{
	return round % 2 == 1 ? 4 : 1;
}

START_TEST(test_race_one_seat_two_accounts)
{
	struct race *r = &race;
	struct tally t = {0};
	struct code_info ci;
	char codes[1][96], name[32];
	double t0 = now_s();
	int i;

	race_init(r, "one_seat_two_accounts", fn_one_seat, RACE_CHILDREN);
	for (r->round = 0; r->round < r->rounds; r->round++) {
		const struct rec *win = NULL;

		snprintf(name, sizeof(name), "r%d", r->round);
		fx_campaign(name, 0, 0, 0);
		fx_codes(name, 1, 1, codes);
		snprintf(r->code, sizeof(r->code), "%s", codes[0]);
		race_round(r);
		check_words(
		    r, r->nchildren, W(ERROR_NONE) | W(ERROR_EXHAUSTED));
		for (i = 0; i < r->nrecs; i++) {
			tally_add(&t, &r->recs[i]);
			if (r->recs[i].error == ERROR_NONE &&
			    !r->recs[i].already) {
				ck_assert_msg(win == NULL,
				    "round %d: two fresh wins of one seat",
				    r->round);
				win = &r->recs[i];
			}
		}
		ck_assert_msg(win != NULL, "round %d: nobody won", r->round);
		for (i = 0; i < r->nrecs; i++) {
			const struct rec *x = &r->recs[i];
			int same = strcmp(x->account, win->account) == 0;

			if (x == win)
				continue;
			if (same) {
				ck_assert_msg(x->error == ERROR_NONE &&
						  x->already &&
						  x->id == win->id,
				    "round %d: child %d of the winner's "
				    "account: "
				    "%s, already %d, id %lld (winner %lld)",
				    r->round, x->child,
				    error_name((enum error_word)x->error),
				    x->already, (long long)x->id,
				    (long long)win->id);
			} else {
				ck_assert_msg(x->error == ERROR_EXHAUSTED,
				    "round %d: child %d of the other account: "
				    "%s",
				    r->round, x->child,
				    error_name((enum error_word)x->error));
			}
		}
		code_info(r->code, &ci);
		ck_assert_int_eq(ci.uses, 1);
		ck_assert_str_eq(ci.state, "redeemed");
		fx_verify_clean();
	}
	ck_assert_int_eq(t.fresh, r->rounds);
	tally_print(r, &t, t0, NULL);
}
END_TEST

/* 2 and 3: child i takes attempts i, i + n, i + 2n, ...; attempt j
 * redeems code j % ncodes for its own account. */
static void
fn_spread(struct race *r, struct svc *svc, int child)
{
	char account[64];
	int j;

	for (j = child; j < r->attempts; j += r->nchildren) {
		snprintf(
		    account, sizeof(account), "u%d-r%d@race.test", j, r->round);
		child_redeem(r, svc, child,
		    r->codes ? r->codes[j % r->ncodes] : r->code, account);
	}
}

START_TEST(test_race_twenty_seats_200_accounts)
{
	struct race *r = &race;
	struct tally t = {0}, rt;
	struct code_info ci;
	char codes[1][96], name[32];
	double t0 = now_s();
	int i;

	race_init(r, "twenty_seats_200_accounts", fn_spread, RACE_CHILDREN);
	r->attempts = 200;
	for (r->round = 0; r->round < r->rounds; r->round++) {
		snprintf(name, sizeof(name), "r%d", r->round);
		fx_campaign(name, 0, 0, 0);
		fx.shards = split_round(r->round);
		fx_codes(name, 1, 20, codes);
		snprintf(r->code, sizeof(r->code), "%s", codes[0]);
		race_round(r);
		check_words(r, 200, W(ERROR_NONE) | W(ERROR_EXHAUSTED));
		memset(&rt, 0, sizeof(rt));
		for (i = 0; i < r->nrecs; i++) {
			tally_add(&rt, &r->recs[i]);
			tally_add(&t, &r->recs[i]);
		}
		ck_assert_msg(
		    rt.fresh == 20 && rt.replay == 0 && rt.exhausted == 180,
		    "round %d: fresh %ld, replay %ld, exhausted %ld", r->round,
		    rt.fresh, rt.replay, rt.exhausted);
		code_info(r->code, &ci);
		ck_assert_int_eq(ci.uses, 20);
		ck_assert_str_eq(ci.state, "exhausted");
		fx_verify_clean();
	}
	tally_print(r, &t, t0, NULL);
}
END_TEST

/* 3: the budget is the limit, not the seats (50 codes x 2 = 100). */
START_TEST(test_race_campaign_budget)
{
	struct race *r = &race;
	struct tally t = {0}, rt;
	struct campaign k;
	struct code_info ci;
	static char codes[50][96];
	char name[32];
	double t0 = now_s();
	int64_t uses;
	int i;

	race_init(r, "campaign_budget", fn_spread, RACE_CHILDREN);
	r->attempts = 100;
	r->codes = codes;
	r->ncodes = 50;
	for (r->round = 0; r->round < r->rounds; r->round++) {
		snprintf(name, sizeof(name), "r%d", r->round);
		fx_campaign(name, 0, 30, 0);
		fx.shards = split_round(r->round);
		fx_codes(name, 50, 2, codes);
		race_round(r);
		check_words(r, 100, W(ERROR_NONE) | W(ERROR_EXHAUSTED));
		memset(&rt, 0, sizeof(rt));
		for (i = 0; i < r->nrecs; i++) {
			tally_add(&rt, &r->recs[i]);
			tally_add(&t, &r->recs[i]);
		}
		ck_assert_msg(
		    rt.fresh == 30 && rt.replay == 0 && rt.exhausted == 70,
		    "round %d: fresh %ld, replay %ld, exhausted %ld", r->round,
		    rt.fresh, rt.replay, rt.exhausted);
		ck_assert_int_eq(campaign_get(&fx.svc, name, &k), ERROR_NONE);
		ck_assert_int_eq(k.redeemed, 30);
		for (uses = 0, i = 0; i < 50; i++) {
			code_info(codes[i], &ci);
			uses += ci.uses;
		}
		ck_assert_int_eq(uses, 30);
		fx_verify_clean();
	}
	tally_print(r, &t, t0, NULL);
}
END_TEST

/* 4: one account racing itself. */
static void
fn_same_account(struct race *r, struct svc *svc, int child)
{
	char account[64];

	snprintf(account, sizeof(account), "same-r%d@race.test", r->round);
	child_redeem(r, svc, child, r->code, account);
}

START_TEST(test_race_same_account_compensation)
{
	struct race *r = &race;
	struct tally t = {0}, rt;
	struct code_info ci;
	char codes[1][96], name[32];
	double t0 = now_s();
	int64_t win;
	int i;

	race_init(r, "same_account", fn_same_account, RACE_CHILDREN);
	for (r->round = 0; r->round < r->rounds; r->round++) {
		snprintf(name, sizeof(name), "r%d", r->round);
		fx_campaign(name, 0, 0, 0);
		fx.shards = split_round(r->round);
		fx_codes(name, 1, 5, codes);
		snprintf(r->code, sizeof(r->code), "%s", codes[0]);
		race_round(r);
		check_words(r, r->nchildren, W(ERROR_NONE));
		memset(&rt, 0, sizeof(rt));
		for (win = 0, i = 0; i < r->nrecs; i++) {
			tally_add(&rt, &r->recs[i]);
			tally_add(&t, &r->recs[i]);
			if (!r->recs[i].already)
				win = r->recs[i].id;
		}
		ck_assert_msg(
		    rt.fresh == 1, "round %d: %ld fresh", r->round, rt.fresh);
		for (i = 0; i < r->nrecs; i++)
			ck_assert_msg(r->recs[i].id == win,
			    "round %d: child %d has redemption %lld, the "
			    "winner %lld",
			    r->round, r->recs[i].child,
			    (long long)r->recs[i].id, (long long)win);
		code_info(r->code, &ci);
		ck_assert_int_eq(ci.uses, 1);
		ck_assert_str_eq(ci.state, "active");
		fx_verify_clean();
	}
	tally_print(r, &t, t0, NULL);
	ck_assert_msg(t.compensated > 0,
	    "the unique-violation compensation was never taken in %d rounds",
	    r->rounds);
}
END_TEST

/* 5: a pool of 10 codes, 30 claimers. */
static void
fn_pool(struct race *r, struct svc *svc, int child)
{
	struct redeem_result res;
	struct rec rec;
	char account[64];
	int j, rc;

	for (j = child; j < r->attempts; j += r->nchildren) {
		snprintf(
		    account, sizeof(account), "p%d-r%d@race.test", j, r->round);
		rc = redeem_pool_claim(svc, r->campaign, account, NULL, &res);
		rec_from_result(&rec, child, REC_POOL, rc, &res, account);
		race_emit(r, &rec);
	}
}

START_TEST(test_race_pool)
{
	struct race *r = &race;
	struct tally t = {0}, rt;
	struct code_info ci;
	char codes[10][96];
	const char *handed[10];
	double t0 = now_s();
	int i, j, n, found;

	race_init(r, "pool", fn_pool, RACE_CHILDREN);
	r->attempts = 30;
	for (r->round = 0; r->round < r->rounds; r->round++) {
		snprintf(r->campaign, sizeof(r->campaign), "r%d", r->round);
		fx_campaign(r->campaign, 1, 0, 0);
		fx_codes(r->campaign, 10, 1, codes);
		race_round(r);
		check_words(r, 30, W(ERROR_NONE) | W(ERROR_EXHAUSTED));
		memset(&rt, 0, sizeof(rt));
		for (n = 0, i = 0; i < r->nrecs; i++) {
			tally_add(&rt, &r->recs[i]);
			tally_add(&t, &r->recs[i]);
			if (r->recs[i].error == ERROR_NONE && n < 10)
				handed[n++] = r->recs[i].code;
		}
		ck_assert_msg(
		    rt.fresh == 10 && rt.replay == 0 && rt.exhausted == 20,
		    "round %d: fresh %ld, replay %ld, exhausted %ld", r->round,
		    rt.fresh, rt.replay, rt.exhausted);
		for (i = 0; i < 10; i++) {
			for (j = 0; j < i; j++)
				ck_assert_msg(strcmp(handed[i], handed[j]) != 0,
				    "round %d: %s handed out twice", r->round,
				    handed[i]);
			for (found = 0, j = 0; j < 10; j++)
				found |= strcmp(handed[i], codes[j]) == 0;
			ck_assert_msg(found, "round %d: %s is not in the pool",
			    r->round, handed[i]);
		}
		for (i = 0; i < 10; i++) {
			code_info(codes[i], &ci);
			ck_assert_int_eq(ci.uses, 1);
			ck_assert_str_eq(ci.state, "redeemed");
		}
		fx_verify_clean();
	}
	tally_print(r, &t, t0, NULL);
}
END_TEST

/*
 * 6: the last child revokes the code, on even rounds after a pause of
 * 0-1.5 ms, on odd rounds once it sees r->revoke_at seats taken; the
 * others redeem with two accounts each. A pause lets the revoke land
 * early (on InnoDB it queues for the code's row lock ahead of most
 * claims); waiting for a count lets it land late (behind every claim
 * already queued): across rounds it lands before, during and after the
 * claims, and the summary says how often.
 */
static void
fn_revoke(struct race *r, struct svc *svc, int child)
{
	struct code_info ci;
	struct timespec ts;
	struct rec rec;
	char account[64];
	double t, until = now_s() + 5;
	int j;

	if (child == r->nchildren - 1) {
		ts.tv_sec = 0;
		ts.tv_nsec = (long)r->delay_us * 1000;
		if (r->delay_us > 0)
			nanosleep(&ts, NULL);
		while (r->revoke_at > 0 && now_s() < until &&
		       code_get(svc, r->code, &ci) == ERROR_NONE &&
		       ci.uses < r->revoke_at)
			;
		memset(&rec, 0, sizeof(rec));
		memset(&ci, 0, sizeof(ci));
		rec.child = child;
		rec.kind = REC_REVOKE;
		t = now_s();
		rec.error = (int32_t)code_revoke(svc, r->code, &ci);
		rec.us = (int64_t)((now_s() - t) * 1e6);
		rec.uses = ci.uses;
		snprintf(rec.state, sizeof(rec.state), "%s", ci.state);
		race_emit(r, &rec);
		return;
	}
	for (j = child; j < r->attempts; j += r->nchildren - 1) {
		snprintf(
		    account, sizeof(account), "v%d-r%d@race.test", j, r->round);
		child_redeem(r, svc, child, r->code, account);
	}
}

/* The revoker prepares its two statements before the barrier (a revoke
 * of no code), so that its first revoke is one round trip like the
 * claimers' UPDATE, not two. */
static void
warm_revoke(struct race *r, struct svc *svc, int child)
{
	struct code_info ci;

	if (child == r->nchildren - 1)
		(void)code_revoke(svc, "NO-SUCH-CODE", &ci);
}

START_TEST(test_race_revoke_vs_claims)
{
	struct race *r = &race;
	struct tally t = {0}, rt;
	struct redeem_result res;
	struct code_info ci;
	char codes[1][96], name[32], extra[256];
	double t0 = now_s();
	long first = 0, mid = 0, last = 0;
	int64_t landed, us_max = 0, us_sum = 0, rus_max = 0, rus_sum = 0;
	unsigned seed;
	int i;

	race_init(r, "revoke_vs_claims", fn_revoke, RACE_CHILDREN + 1);
	r->warm = warm_revoke;
	r->attempts = 2 * RACE_CHILDREN;
	seed = r->seed;
	for (r->round = 0; r->round < r->rounds; r->round++) {
		snprintf(name, sizeof(name), "r%d", r->round);
		fx_campaign(name, 0, 0, 0);
		fx.shards = split_round(r->round);
		fx_codes(name, 1, 10, codes);
		snprintf(r->code, sizeof(r->code), "%s", codes[0]);
		if (r->round % 2 == 0) {
			r->revoke_at = 0;
			r->delay_us = (unsigned)rand_r(&seed) % 1500;
		} else {
			r->revoke_at = 1 + rand_r(&seed) % 10;
			r->delay_us = 0;
		}
		race_round(r);
		ck_assert_int_eq(r->nrecs, r->attempts + 1);
		memset(&rt, 0, sizeof(rt));
		for (i = 0; i < r->nrecs; i++) {
			const struct rec *x = &r->recs[i];

			if (x->kind == REC_REVOKE) {
				ck_assert_msg(
				    x->error == ERROR_NONE &&
					strcmp(x->state, "revoked") == 0,
				    "round %d: revoke: %s, state %s", r->round,
				    error_name((enum error_word)x->error),
				    x->state);
				landed = x->uses;
				us_sum += x->us;
				us_max = x->us > us_max ? x->us : us_max;
				continue;
			}
			ck_assert_msg(x->rc == 0 &&
					  (x->error == ERROR_NONE ||
					      x->error == ERROR_REVOKED ||
					      x->error == ERROR_EXHAUSTED) &&
					  !x->already,
			    "round %d (seed %u, revoke at %d): child %d: %s, "
			    "already %d",
			    r->round, r->seed, r->revoke_at, x->child,
			    error_name((enum error_word)x->error), x->already);
			tally_add(&rt, x);
			tally_add(&t, x);
			rus_sum += x->us;
			rus_max = x->us > rus_max ? x->us : rus_max;
		}
		/* Every seat was taken before the revoke, none after. */
		ck_assert_msg(rt.fresh == landed,
		    "round %d: %ld successes, %lld seats taken at the revoke",
		    r->round, rt.fresh, (long long)landed);
		if (landed == 0)
			first++;
		else if (landed == 10)
			last++;
		else
			mid++;
		code_info(r->code, &ci);
		ck_assert_int_eq(ci.uses, rt.fresh);
		ck_assert_str_eq(ci.state, "revoked");
		for (i = 0; i < r->nrecs; i++) {
			if (r->recs[i].kind == REC_REVOKE ||
			    r->recs[i].error != ERROR_NONE)
				continue;
			ck_assert_int_eq(
			    redeem_reverse(&fx.svc, r->recs[i].id, "race",
				REVERSAL_RETURN_SEAT, &res),
			    0);
			ck_assert_int_eq(res.error, ERROR_NONE);
			ck_assert_int_eq(res.already, 0);
		}
		code_info(r->code, &ci);
		ck_assert_int_eq(ci.uses, 0);
		ck_assert_str_eq(ci.state, "revoked");
		fx_verify_clean();
	}
	snprintf(extra, sizeof(extra),
	    "; revoke landed before any seat %ld, mid-race %ld, after all "
	    "10 %ld; revoke took %lld us on average, %lld at most, a "
	    "redeem %lld, %lld",
	    first, mid, last, (long long)(us_sum / r->rounds),
	    (long long)us_max,
	    (long long)(rus_sum / (t.ok + t.exhausted + t.revoked)),
	    (long long)rus_max);
	tally_print(r, &t, t0, extra);
}
END_TEST

/* One TCase per scenario: its own fixture database and timeout. */
static TCase *
race_case(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, RACE_TIMEOUT);
	suite_add_tcase(s, tc);
	return tc;
}

Suite *
suite_race(void)
{
	Suite *s = suite_create("race");

	tcase_add_test(
	    race_case(s, "one_seat"), test_race_one_seat_two_accounts);
	tcase_add_test(
	    race_case(s, "twenty_seats"), test_race_twenty_seats_200_accounts);
	tcase_add_test(race_case(s, "budget"), test_race_campaign_budget);
	tcase_add_test(
	    race_case(s, "same_account"), test_race_same_account_compensation);
	tcase_add_test(race_case(s, "pool"), test_race_pool);
	tcase_add_test(race_case(s, "revoke"), test_race_revoke_vs_claims);
	return s;
}
