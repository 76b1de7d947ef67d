/*
 * verify: checks the guarantees with SQL on a live database, inside one
 * read snapshot. Each violation is reported with the ids that break it.
 * Live holds (state "held", until swept) count as seats (G2), as budget
 * and as the account's per-campaign count (G4). G5: a semaphore's in_use
 * is what its live permits hold, and no grant ever took it past the
 * capacity it had then (lowering a capacity below in_use is allowed).
 * G6: per code and per semaphore no fencing token repeats or passes its
 * counter, and in token order grant times never go back.
 */
#ifndef VERIFY_H
#define VERIFY_H

#include <stdint.h>

#include "../db/db.h"

enum verify_check {
	VERIFY_G1_SAFETY,
	VERIFY_G1_SPLIT,
	VERIFY_G2_CONSERVATION,
	VERIFY_G3_IDEMPOTENCY,
	VERIFY_G4_BUDGET,
	VERIFY_G4_ACCOUNT_LIMIT,
	VERIFY_G5_CAPACITY,
	VERIFY_G5_GRANTS,
	VERIFY_G6_FENCING,
	VERIFY_G7_ONE_EVENT,
	VERIFY_G8_STATE,
	VERIFY__MAX
};

struct verify_report {
	int64_t violations[VERIFY__MAX];
	int64_t total;
};

const char *verify_check_name(enum verify_check);

/* Checks every tenant. fn (may be NULL) gets one line per violation.
 * Returns 0 when the checks ran (see report->total), -1 on a database
 * error. */
int verify_run(struct db *, struct verify_report *,
    void (*fn)(void *, enum verify_check, const char *line), void *arg);

#endif
