#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "fixture.h"
#include "forkrace.h"

_Static_assert(sizeof(struct fr_rec) <= PIPE_BUF, "a record is one write");

static struct fr_rec recs[FR_MAX_RECS]; /* too large for a stack */

int
fr_rounds(int def)
{
	const char *e = getenv("RACE_ROUNDS");
	long n;
	char *end;

	if (e == NULL || *e == '\0')
		return def;
	n = strtol(e, &end, 10);
	if (*end != '\0' || n < 1 || n > 100000)
		return def;
	n = n * def / 100;
	return n >= 2 ? (int)n : 2;
}

void
fr_rec_init(struct fr_rec *x, int child, int kind, int rc, int error)
{
	memset(x, 0, sizeof(*x));
	x->child = child;
	x->kind = kind;
	x->rc = rc;
	x->error = error;
}

void
fr_emit(struct fr *r, const struct fr_rec *x)
{
	ssize_t n;

	do
		n = write(r->out, x, sizeof(*x));
	while (n == -1 && errno == EINTR);
	if (n != (ssize_t)sizeof(*x))
		_exit(4);
}

/* The child: its own connection, opened after the fork; leaves by _exit
 * (never through Check's machinery). */
static _Noreturn void
child(struct fr *r, int i, int go, int ready)
{
	struct db *db;
	struct svc svc;
	char err[512], b;
	ssize_t n;
	int ok;

	db = db_open(fx.dsn, err, sizeof(err));
	if (db == NULL)
		fprintf(stderr, "%s child %d: connect: %s\n", r->name, i, err);
	ok = db != NULL && svc_open(&svc, db, "default") == ERROR_NONE;
	b = ok ? 'R' : 'F';
	if (write(ready, &b, 1) != 1)
		_exit(3);
	close(ready);
	if (!ok)
		_exit(2);
	do
		n = read(go, &b, 1);
	while (n == -1 && errno == EINTR);
	close(go);
	r->fn(r, &svc, i);
	db_close(db);
	close(r->out);
	_exit(0);
}

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

void
fr_round(struct fr *r)
{
	pid_t pids[FR_MAX_CHILDREN], w;
	int go[2], ready[2], out[2];
	int i, forked, nready = 0, torn = 0, bad = 0, lost = 0, status, k;
	struct fr_rec x;
	char b;

	ck_assert_int_le(r->nchildren, FR_MAX_CHILDREN);
	r->recs = recs;
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
			child(r, forked, go[0], ready[1]);
		}
	}
	close(go[0]);
	close(ready[1]);
	close(out[1]);
	while (nready < forked && read(ready[0], &b, 1) == 1)
		if (b == 'R')
			nready++;
	close(ready[0]);
	close(go[1]); /* go */
	while ((k = read_full(out[0], &x, sizeof(x))) != 0) {
		if (k == -1) {
			torn++;
			break;
		}
		if (r->nrecs < FR_MAX_RECS)
			recs[r->nrecs++] = x;
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
	ck_assert_msg(forked == r->nchildren, "%s round %d: fork failed",
	    r->name, r->round);
	ck_assert_msg(nready == forked,
	    "%s round %d: %d of %d children "
	    "connected",
	    r->name, r->round, nready, forked);
	ck_assert_msg(bad == 0 && torn == 0 && lost == 0,
	    "%s round %d: %d children ended badly, %d torn, %d lost records",
	    r->name, r->round, bad, torn, lost);
}
