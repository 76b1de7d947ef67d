#include <sodium.h>

#include "../lib/common.h"
#include "seats.h"

int
seats_shards_for(const struct svc_config *cfg, int want, int64_t max_uses)
{
	int64_t n = want;

	if (n <= 0)
		n = cfg->split_min_uses > 0 && max_uses >= cfg->split_min_uses
			? cfg->split_shards
			: 1;
	if (n > SEATS_SHARDS_MAX)
		n = SEATS_SHARDS_MAX;
	return (int)(n > max_uses ? max_uses : n);
}

/* Row k's seats: max_uses spread as evenly as it goes. */
static int64_t
row_max(int64_t max_uses, int shards, int k)
{
	return max_uses / shards + (k < max_uses % shards);
}

int
seats_split(struct db *db, int64_t code_id, int64_t max_uses, int shards)
{
	int64_t n;
	int k, rc;

	if (shards < 2)
		return DB_OK;
	for (k = 0; k < shards; k++)
		if ((rc = db_exec(db, STMT_SHARD_INSERT, NULL, "iii", code_id,
			 (int64_t)k, row_max(max_uses, shards, k))) != DB_OK)
			return rc;
	rc = db_exec(
	    db, STMT_CODE_SET_SHARDS, &n, "ii", (int64_t)shards, code_id);
	return rc == DB_OK && n != 1 ? DB_EFAIL : rc;
}

/* The claim that filled its row: when every row is full, so is the code. */
static int
exhaust_if_full(struct db *db, int64_t code_id, int64_t max_uses)
{
	struct db_stmt *st;
	int64_t sum;
	int rc;

	rc = db_query(db, STMT_SHARD_SUM, &st, "i", code_id);
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	sum = db_col_i64(st, 0);
	db_reset(st);
	if (sum < max_uses)
		return DB_OK;
	return db_exec(db, STMT_SHARD_EXHAUST, NULL, "i", code_id);
}

int
seats_take(
    struct db *db, int64_t code_id, int64_t max_uses, int shards, int *taken)
{
	int64_t n, now_uses;
	int i, k, start, rc;

	*taken = 0;
	if (shards < 1)
		return DB_EFAIL;
	start = (int)randombytes_uniform((uint32_t)shards);
	for (i = 0; i < shards; i++) {
		k = (start + i) % shards;
		rc = db_exec_id(db, STMT_SHARD_CLAIM, &n, &now_uses, "ii",
		    code_id, (int64_t)k);
		if (rc != DB_OK)
			return rc;
		if (n == 1) {
			*taken = 1;
			if (now_uses < row_max(max_uses, shards, k))
				return DB_OK;
			return exhaust_if_full(db, code_id, max_uses);
		}
	}
	return DB_OK;
}

int
seats_return(struct db *db, int64_t code_id)
{
	int64_t n;
	int rc;

	if ((rc = db_exec(db, STMT_CODE_RETURN_SEAT, &n, "i", code_id)) !=
		DB_OK ||
	    n == 1)
		return rc;
	/* Not on the code's own row: a split code's (or none taken). */
	if ((rc = db_exec(db, STMT_SHARD_RETURN, &n, "i", code_id)) != DB_OK ||
	    n == 0)
		return rc;
	return db_exec(db, STMT_SHARD_REOPEN, NULL, "i", code_id);
}
