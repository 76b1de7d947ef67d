/*
 * A code's seats (G1, G2, G8). A code keeps them on its own row
 * (codes.uses), or, when it is hot (a public promo that every request
 * claims), split over counter rows (code_shards, migration 013): a claim
 * takes a seat from a row picked at random and falls back to the others
 * when that one runs dry, so claims on one code stop queueing on one row
 * lock. G1 holds per row (conditional UPDATE, CHECK), the rows' max_uses
 * sum to the code's, and the claim that fills the last row marks the code
 * exhausted in its own transaction (G8).
 */
#ifndef SEATS_H
#define SEATS_H

#include <stdint.h>

#include "../db/db.h"
#include "svc.h"

#define SEATS_SHARDS_MAX 256

/* The counter rows of a new code with max_uses: want when > 0 (1: its
 * own row), else REDEEM_SPLIT_MIN_USES and REDEEM_SPLIT_SHARDS (cfg);
 * never more than max_uses. 1 means not split. */
int seats_shards_for(const struct svc_config *, int want, int64_t max_uses);

/* Inside the transaction that created the code (uses 0): its rows. */
int seats_split(struct db *, int64_t code_id, int64_t max_uses, int shards);

/* Inside a write transaction: one seat of a split code into *taken (0:
 * none, every row full or the code no longer claimable). A db status. */
int seats_take(
    struct db *, int64_t code_id, int64_t max_uses, int shards, int *taken);

/* Inside a write transaction: one seat back to the code, split or not
 * (compensation, a hold released, a reversal); it re-opens a redeemed or
 * exhausted code, never a revoked or expired one. A db status. */
int seats_return(struct db *, int64_t code_id);

#endif
