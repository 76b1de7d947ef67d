/*
 * A small fork-race harness for the hold and permit races (test_race.c
 * keeps its own for the redemption races): each round forks n children
 * that open their own connection to the test's database, wait at a
 * barrier, run fn at the same instant and report fixed-size records on a
 * pipe, in the order they write them. The parent reaps every child and
 * asserts that each one ended well.
 */
#ifndef FORKRACE_H
#define FORKRACE_H

#include <stdint.h>

#include "../../app/core/svc.h"

#define FR_MAX_CHILDREN 32
#define FR_MAX_RECS 4096

/* One outcome; written with one write(2), so records never interleave. */
struct fr_rec {
	int32_t child;
	int32_t kind;  /* the scenario's */
	int32_t rc;    /* what the call returned */
	int32_t error; /* enum error_word */
	int32_t flag;  /* created, already, ... */
	int32_t pad;
	int64_t a, b, c; /* tokens, ids, counts */
	char s[96];      /* a name, a code */
};

struct fr {
	const char *name;
	int round, rounds, nchildren;
	void (*fn)(struct fr *, struct svc *, int child);
	void *arg; /* the round's data, set by the parent before fr_round */
	int out;   /* child: the write end of the pipe */
	struct fr_rec *recs; /* parent: this round's records, in pipe order */
	int nrecs;
};

/* A scenario's rounds: def by default (100 for the redemption races),
 * scaled by RACE_ROUNDS / 100 when it is set (RACE_ROUNDS=50 halves every
 * scenario's rounds), and 2 at the least. */
int fr_rounds(int def);
/* Child side: one record. */
void fr_emit(struct fr *, const struct fr_rec *);
/* One round; every child must exit 0 and no record may be lost. */
void fr_round(struct fr *);
/* A fresh record for child. */
void fr_rec_init(struct fr_rec *, int child, int kind, int rc, int error);

#endif
