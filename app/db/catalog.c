#include "../lib/common.h"
#include "catalog.h"

/* The table is laid out by hand: clang-format cannot see the brace that
 * S() opens. */
// clang-format off

#define S(id) [id] = {.name = #id, .sql =

/* Column lists shared by several statements (readers index them). */
#define CAMPAIGN_COLUMNS                                                  \
	"k.id, k.name, k.kind, k.state, k.starts_at, k.ends_at, k.budget, " \
	"k.redeemed, k.per_account_limit, k.created_at, k.closed_at"
#define REDEMPTION_COLUMNS                                                \
	"r.id, r.seq, r.code_id, c.display, r.account, k.name, "          \
	"r.redeemed_at, r.reversed_at, r.reversal_reason, r.reversal_policy"
#define REDEMPTION_FROM                                                   \
	" FROM redemptions r JOIN codes c ON c.id = r.code_id"            \
	" JOIN campaigns k ON k.id = r.campaign_id "
/* A code's uses: its own counter, or for a hot code split over counter
 * rows (codes.shards > 0, codes.uses 0) the sum of its rows. */
#define CODE_USES(c)                                                      \
	"(" c ".uses + CASE WHEN " c ".shards = 0 THEN 0 ELSE "           \
	"(SELECT COALESCE(SUM(cs.uses), 0) FROM code_shards cs "          \
	"WHERE cs.code_id = " c ".id) END)"
#define CODE_COLUMNS                                                      \
	"c.id, c.display, k.name, c.state, " CODE_USES("c") ", "          \
	"c.max_uses, c.expires_at, c.created_at"
#define APIKEY_COLUMNS                                                    \
	"a.id, a.lookup, a.scope, a.label, a.created_at, a.revoked_at, "  \
	"a.last_used_at"
#define ADMIN_COLUMNS "id, email, role, created_at, disabled_at"
#define CAMPAIGN_WINDOW_OPEN                                              \
	"k.state = 'open'"                                                \
	" AND (k.starts_at IS NULL OR k.starts_at <= UNIX_TIMESTAMP())"   \
	" AND (k.ends_at IS NULL OR k.ends_at > UNIX_TIMESTAMP())"
/* A redemption that still holds its seat (G2). */
#define HOLDS_SEAT                                                        \
	"(reversal_policy IS NULL OR reversal_policy <> 'return_seat')"

#define CODE_VALUES "(?, ?, ?, ?, ?, ?, UNIX_TIMESTAMP())"
#define CODE_VALUES_10                                                    \
	CODE_VALUES "," CODE_VALUES "," CODE_VALUES "," CODE_VALUES ","   \
	    CODE_VALUES "," CODE_VALUES "," CODE_VALUES "," CODE_VALUES   \
	    "," CODE_VALUES "," CODE_VALUES
#define CODE_VALUES_100                                                   \
	CODE_VALUES_10 "," CODE_VALUES_10 "," CODE_VALUES_10              \
	    "," CODE_VALUES_10 "," CODE_VALUES_10 "," CODE_VALUES_10      \
	    "," CODE_VALUES_10 "," CODE_VALUES_10 "," CODE_VALUES_10      \
	    "," CODE_VALUES_10
#define CODE_INSERT_HEAD                                                  \
	"INSERT INTO codes (tenant_id, campaign_id, code, display, "     \
	"max_uses, expires_at, created_at) VALUES "

const struct stmt_def stmt_catalog[STMT__MAX] = {
	S(STMT_NOW) "SELECT UNIX_TIMESTAMP()"},

	S(STMT_MIGRATE_TABLE)
	    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER "
	    "PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
	    "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT "
	    "NOT NULL PRIMARY KEY, name VARCHAR(200) NOT NULL, applied_at "
	    "BIGINT NOT NULL) ENGINE=InnoDB"},
	/* SQLite serializes migrators with BEGIN IMMEDIATE; MySQL's DDL
	 * commits implicitly, so a named lock does it there. */
	/* Waiting ? seconds (migrate_lock_wait); SQLite has its writer
	 * lock instead. */
	S(STMT_MIGRATE_LOCK) "SELECT 1 + 0 * ?",
	    "SELECT GET_LOCK('redeem_migrate', ?)"},
	S(STMT_MIGRATE_UNLOCK) "SELECT 1",
	    "SELECT RELEASE_LOCK('redeem_migrate')"},
	S(STMT_MIGRATE_APPLIED)
	    "SELECT version FROM schema_migrations WHERE version = ?"},
	S(STMT_MIGRATE_RECORD)
	    "INSERT INTO schema_migrations (version, name, applied_at) "
	    "VALUES (?, ?, UNIX_TIMESTAMP())"},

	S(STMT_TENANT_BY_NAME)
	    "SELECT id, unchecked_codes FROM tenants WHERE name = ?"},
	S(STMT_TENANT_INSERT)
	    "INSERT INTO tenants (name, created_at) "
	    "VALUES (?, UNIX_TIMESTAMP())"},
	S(STMT_TENANT_LIST) "SELECT id, name FROM tenants ORDER BY name"},
	S(STMT_TENANT_ADD_UNCHECKED)
	    "UPDATE tenants SET unchecked_codes = unchecked_codes + ? "
	    "WHERE id = ?"},
	S(STMT_COUNTER_CREATE)
	    "INSERT INTO counters (tenant_id, name, value) "
	    "SELECT id, 'redemption_seq', 0 FROM tenants WHERE name = ?"},

	S(STMT_CAMPAIGN_INSERT)
	    "INSERT INTO campaigns (tenant_id, name, kind, starts_at, ends_at, "
	    "budget, per_account_limit, created_at) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, UNIX_TIMESTAMP())"},
	S(STMT_CAMPAIGN_BY_NAME)
	    "SELECT " CAMPAIGN_COLUMNS " FROM campaigns k "
	    "WHERE k.tenant_id = ? AND k.name = ?"},
	S(STMT_CAMPAIGN_CLOSE)
	    "UPDATE campaigns SET state = 'closed', closed_at = "
	    "UNIX_TIMESTAMP() WHERE tenant_id = ? AND name = ? "
	    "AND state = 'open'"},
	S(STMT_CAMPAIGN_LIST)
	    "SELECT " CAMPAIGN_COLUMNS ", "
	    "(SELECT COUNT(*) FROM codes c WHERE c.campaign_id = k.id), "
	    "(SELECT COALESCE(SUM(" CODE_USES("c") "), 0) FROM codes c "
	    "WHERE c.campaign_id = k.id) "
	    "FROM campaigns k WHERE k.tenant_id = ? ORDER BY k.name"},
	/* G4: the budget is taken by a conditional UPDATE, which also
	 * re-checks that the campaign is open and within its window. */
	S(STMT_CAMPAIGN_TAKE_BUDGET)
	    "UPDATE campaigns SET redeemed = redeemed + 1 "
	    "WHERE id = ? AND budget IS NOT NULL AND redeemed < budget "
	    "AND state = 'open' "
	    "AND (starts_at IS NULL OR starts_at <= UNIX_TIMESTAMP()) "
	    "AND (ends_at IS NULL OR ends_at > UNIX_TIMESTAMP())"},
	S(STMT_CAMPAIGN_RETURN_BUDGET)
	    "UPDATE campaigns SET redeemed = redeemed - 1 "
	    "WHERE id = ? AND redeemed > 0"},

	S(STMT_CODE_INSERT) CODE_INSERT_HEAD CODE_VALUES},
	S(STMT_CODE_INSERT_100) CODE_INSERT_HEAD CODE_VALUES_100},
	S(STMT_CODE_BY_TEXT)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND c.code = ?"},
	S(STMT_CODE_REVOKE)
	    "UPDATE codes SET state = 'revoked', revoked_at = "
	    "UNIX_TIMESTAMP() WHERE tenant_id = ? AND code = ? "
	    "AND state IN ('active', 'redeemed', 'exhausted')"},
	/*
	 * G1 and G8: the only statement that takes a seat. The state is
	 * assigned before uses: MySQL applies SET left to right, so a CASE
	 * after "uses = uses + 1" would see the new value; written first it
	 * reads the old one on both engines. The WHERE re-checks state,
	 * expiry and the campaign, so a revoke, close or expiry committed
	 * after the advisory checks still wins.
	 */
	S(STMT_CODE_CLAIM)
	    "UPDATE codes SET "
	    "state = CASE WHEN uses + 1 >= max_uses THEN "
	    "(CASE WHEN max_uses = 1 THEN 'redeemed' ELSE 'exhausted' END) "
	    "ELSE state END, "
	    "uses = uses + 1 "
	    "WHERE id = ? AND state = 'active' AND uses < max_uses "
	    "AND shards = 0 "
	    "AND (expires_at IS NULL OR expires_at > UNIX_TIMESTAMP()) "
	    "AND EXISTS (SELECT 1 FROM campaigns k WHERE "
	    "k.id = codes.campaign_id AND " CAMPAIGN_WINDOW_OPEN ")"},
	/* Compensation: a returned seat re-opens a redeemed or exhausted
	 * code, never a revoked or expired one. */
	S(STMT_CODE_RETURN_SEAT)
	    "UPDATE codes SET "
	    "state = CASE WHEN state IN ('redeemed', 'exhausted') "
	    "THEN 'active' ELSE state END, "
	    "uses = uses - 1 WHERE id = ? AND uses > 0"},
	/*
	 * A hot code split over counter rows (migration 013). G1: a seat is
	 * taken from one row by the same kind of conditional UPDATE, whose
	 * WHERE re-checks the code's state, expiry and campaign; claims on
	 * different rows do not wait for each other. The code's row is not
	 * locked, so a revoke is seen on the claimed row itself (`active`,
	 * STMT_SHARD_REVOKE). db_last_id reads the row's new uses back.
	 */
	S(STMT_SHARD_CLAIM)
	    "UPDATE code_shards SET uses = LAST_INSERT_ID(uses + 1) "
	    "WHERE code_id = ? AND shard = ? AND uses < max_uses "
	    "AND active = 1 AND EXISTS (SELECT 1 FROM codes c JOIN campaigns k ON "
	    "k.id = c.campaign_id WHERE c.id = code_shards.code_id AND "
	    "c.state = 'active' AND (c.expires_at IS NULL OR c.expires_at > "
	    "UNIX_TIMESTAMP()) AND " CAMPAIGN_WINDOW_OPEN ")"},
	/* G8: read by the claim that filled its row (every row full is the
	 * code full). A locking read on InnoDB: two claims filling the last
	 * two rows at once cannot both miss it; one waits for the other,
	 * or they deadlock and one is retried. */
	S(STMT_SHARD_SUM)
	    "SELECT COALESCE(SUM(uses), 0) FROM code_shards WHERE code_id = ?",
	    "SELECT COALESCE(SUM(uses), 0) FROM code_shards WHERE code_id = ? "
	    "LOCK IN SHARE MODE"},
	S(STMT_SHARD_EXHAUST)
	    "UPDATE codes SET state = 'exhausted' WHERE id = ? "
	    "AND state = 'active' AND shards > 0"},
	/* A seat given back to a split code: to its lowest row that has one
	 * taken (the code's row is locked first, by STMT_CODE_RETURN_SEAT). */
	S(STMT_SHARD_RETURN)
	    "UPDATE code_shards SET uses = uses - 1 WHERE code_id = ?1 AND "
	    "shard = (SELECT MIN(shard) FROM code_shards WHERE code_id = ?1 "
	    "AND uses > 0)",
	    "UPDATE code_shards SET uses = uses - 1 WHERE code_id = ? "
	    "AND uses > 0 ORDER BY shard LIMIT 1"},
	S(STMT_SHARD_REOPEN)
	    "UPDATE codes SET state = 'active' WHERE id = ? AND shards > 0 "
	    "AND state = 'exhausted'"},
	/* With STMT_CODE_REVOKE, in its transaction: waits for the claims
	 * in flight on the rows; none takes a seat after it. */
	S(STMT_SHARD_REVOKE)
	    "UPDATE code_shards SET active = 0 WHERE code_id = (SELECT id "
	    "FROM codes WHERE tenant_id = ? AND code = ?)"},
	S(STMT_SHARD_INSERT)
	    "INSERT INTO code_shards (code_id, shard, max_uses, uses) "
	    "VALUES (?, ?, ?, 0)"},
	S(STMT_CODE_SET_SHARDS)
	    "UPDATE codes SET shards = ? WHERE id = ? AND uses = 0"},
	/* G6 for a hold on a split code: its fencing counter alone, bumped
	 * under the code's row lock before the seat is taken from a row. */
	S(STMT_CODE_FENCE)
	    "UPDATE codes SET fence = LAST_INSERT_ID(fence + 1) WHERE id = ? "
	    "AND state = 'active' AND shards > 0"},
	/* Exports follow an index, (campaign_id, state, id) or (tenant_id,
	 * code): rows stream out without a sort, in constant memory. */
	S(STMT_CODES_EXPORT_CAMPAIGN)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND c.campaign_id = ? AND (? = 0 "
	    "OR (? = 1 AND " CODE_USES("c") " > 0) OR (? = 2 AND " CODE_USES("c") " = 0)) "
	    "ORDER BY c.state, c.id", NULL, 1},
	S(STMT_CODES_EXPORT_ALL)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND (? = 0 "
	    "OR (? = 1 AND " CODE_USES("c") " > 0) OR (? = 2 AND " CODE_USES("c") " = 0)) "
	    "ORDER BY c.code", NULL, 1},
	/* A pool hands out its first free code; on MySQL concurrent
	 * claimers skip each other's locked rows instead of queueing. */
	S(STMT_POOL_PICK)
	    "SELECT id, display FROM codes WHERE campaign_id = ? "
	    "AND state = 'active' AND uses < max_uses "
	    "AND (expires_at IS NULL OR expires_at > UNIX_TIMESTAMP()) "
	    "ORDER BY id LIMIT 1",
	    "SELECT id, display FROM codes WHERE campaign_id = ? "
	    "AND state = 'active' AND uses < max_uses "
	    "AND (expires_at IS NULL OR expires_at > UNIX_TIMESTAMP()) "
	    "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"},

	/* Keyset paging by id: a page starts after the last id of the one
	 * before (no OFFSET to skip through). */
	S(STMT_CODES_PAGE_CAMPAIGN)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND c.campaign_id = ? AND c.id > ? "
	    "AND (? = 0 OR (? = 1 AND " CODE_USES("c") " > 0) OR (? = 2 AND " CODE_USES("c") " = 0)) "
	    "ORDER BY c.id LIMIT ?"},
	S(STMT_CODES_PAGE_ALL)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND c.id > ? AND (? = 0 "
	    "OR (? = 1 AND " CODE_USES("c") " > 0) OR (? = 2 AND " CODE_USES("c") " = 0)) "
	    "ORDER BY c.id LIMIT ?"},

	/* Steps 1 to 4 in one read, always one row: the abuse gate's counts
	 * for the client key and the account (decided first: nothing else
	 * of the row is used when they are over the limit), then the code,
	 * its campaign, the account's redemption of it, the account's
	 * per-campaign count and the clock. */
	S(STMT_REDEEM_LOOKUP)
	    "SELECT g.nc, g.na, c.id, c.display, c.state, c.uses, c.max_uses, "
	    "c.expires_at, " CAMPAIGN_COLUMNS ", " REDEMPTION_COLUMNS ", "
	    "a.n, UNIX_TIMESTAMP(), c.shards FROM (SELECT "
	    "(SELECT COUNT(*) FROM abuse_failures WHERE tenant_id = ? "
	    "AND kind = 1 AND subject = ? AND at > UNIX_TIMESTAMP() - ?) "
	    "AS nc, "
	    "(SELECT COUNT(*) FROM abuse_failures WHERE tenant_id = ? "
	    "AND kind = 2 AND subject = ? AND at > UNIX_TIMESTAMP() - ?) "
	    "AS na) g "
	    "LEFT JOIN codes c ON c.tenant_id = ? AND c.code = ? "
	    "LEFT JOIN campaigns k ON k.id = c.campaign_id "
	    "LEFT JOIN redemptions r ON r.code_id = c.id AND r.account = ? "
	    "LEFT JOIN campaign_accounts a ON a.campaign_id = k.id "
	    "AND a.account = ?"},
	S(STMT_REDEMPTION_BY_CODE_ACCOUNT)
	    "SELECT " REDEMPTION_COLUMNS REDEMPTION_FROM
	    "WHERE r.code_id = ? AND r.account = ?"},
	S(STMT_REDEMPTION_BY_CAMPAIGN_ACCOUNT)
	    "SELECT " REDEMPTION_COLUMNS REDEMPTION_FROM
	    "WHERE r.campaign_id = ? AND r.account = ? ORDER BY r.id LIMIT 1"},
	S(STMT_REDEMPTION_BY_ID)
	    "SELECT " REDEMPTION_COLUMNS REDEMPTION_FROM
	    "WHERE r.id = ? AND r.tenant_id = ?"},
	S(STMT_REDEMPTION_INSERT)
	    "INSERT INTO redemptions (tenant_id, code_id, campaign_id, "
	    "account, seq, redeemed_at) VALUES (?, ?, ?, ?, ?, ?)"},
	S(STMT_REVERSE_READ)
	    "SELECT " REDEMPTION_COLUMNS ", k.id, k.budget, "
	    "k.per_account_limit, k.kind" REDEMPTION_FROM
	    "WHERE r.id = ? AND r.tenant_id = ?"},
	S(STMT_REDEMPTION_REVERSE)
	    "UPDATE redemptions SET reversed_at = UNIX_TIMESTAMP(), "
	    "reversal_reason = ?, reversal_policy = ? "
	    "WHERE id = ? AND tenant_id = ? AND reversed_at IS NULL"},
	S(STMT_ACCOUNT_ENSURE)
	    "INSERT INTO campaign_accounts (campaign_id, account, n) "
	    "VALUES (?, ?, 0) ON CONFLICT DO NOTHING",
	    "INSERT IGNORE INTO campaign_accounts (campaign_id, account, n) "
	    "VALUES (?, ?, 0)"},
	S(STMT_ACCOUNT_TAKE)
	    "UPDATE campaign_accounts SET n = n + 1 "
	    "WHERE campaign_id = ? AND account = ? AND n < ?"},
	S(STMT_ACCOUNT_RETURN)
	    "UPDATE campaign_accounts SET n = n - 1 "
	    "WHERE campaign_id = ? AND account = ? AND n > 0"},
	/* The tenant's redemption sequence: bumped under the row lock, so
	 * numbers grow in commit order; read back through db_last_id. */
	S(STMT_SEQ_NEXT)
	    "UPDATE counters SET value = LAST_INSERT_ID(value + 1) "
	    "WHERE tenant_id = ? AND name = 'redemption_seq'"},
	/* A block of ? numbers at once (a hot code's claims, redeem.c):
	 * db_last_id reads back the block's last. */
	S(STMT_SEQ_RESERVE)
	    "UPDATE counters SET value = LAST_INSERT_ID(value + ?) "
	    "WHERE tenant_id = ? AND name = 'redemption_seq'"},

	S(STMT_EVENT_INSERT)
	    "INSERT INTO events (tenant_id, event_id, type, redemption_id, "
	    "created_at, payload) VALUES (?, ?, ?, ?, UNIX_TIMESTAMP(), ?)"},

	/* Failures in the window for the client key (kind 1) and the
	 * account (kind 2), and when the oldest of each leaves it. */
	S(STMT_ABUSE_COUNT)
	    "SELECT "
	    "(SELECT COUNT(*) FROM abuse_failures WHERE tenant_id = ? "
	    "AND kind = 1 AND subject = ? AND at > UNIX_TIMESTAMP() - ?), "
	    "(SELECT COUNT(*) FROM abuse_failures WHERE tenant_id = ? "
	    "AND kind = 2 AND subject = ? AND at > UNIX_TIMESTAMP() - ?), "
	    "(SELECT MIN(at) FROM abuse_failures WHERE tenant_id = ? "
	    "AND kind = 1 AND subject = ? AND at > UNIX_TIMESTAMP() - ?) "
	    "+ ? - UNIX_TIMESTAMP(), "
	    "(SELECT MIN(at) FROM abuse_failures WHERE tenant_id = ? "
	    "AND kind = 2 AND subject = ? AND at > UNIX_TIMESTAMP() - ?) "
	    "+ ? - UNIX_TIMESTAMP()"},
	S(STMT_ABUSE_PRUNE)
	    "DELETE FROM abuse_failures WHERE tenant_id = ? AND kind = ? "
	    "AND subject = ? AND at <= UNIX_TIMESTAMP() - ?"},
	S(STMT_ABUSE_INSERT)
	    "INSERT INTO abuse_failures (tenant_id, kind, subject, at) "
	    "VALUES (?, ?, ?, UNIX_TIMESTAMP())"},

	S(STMT_APIKEY_INSERT)
	    "INSERT INTO api_keys (tenant_id, lookup, hash, scope, label, "
	    "created_at) VALUES (?, ?, ?, ?, ?, UNIX_TIMESTAMP())"},
	/* A presented key and its tenant in one read (every API request). */
	S(STMT_APIKEY_VERIFY)
	    "SELECT " APIKEY_COLUMNS ", a.tenant_id, t.name, "
	    "t.unchecked_codes, a.hash, UNIX_TIMESTAMP() FROM api_keys a "
	    "JOIN tenants t ON t.id = a.tenant_id WHERE a.lookup = ?"},
	S(STMT_APIKEY_BY_ID)
	    "SELECT " APIKEY_COLUMNS " FROM api_keys a "
	    "WHERE a.id = ? AND a.tenant_id = ?"},
	S(STMT_APIKEY_LIST)
	    "SELECT " APIKEY_COLUMNS " FROM api_keys a "
	    "WHERE a.tenant_id = ? ORDER BY a.id"},
	/* Idempotent: a revoked key keeps its first revoked_at, and the
	 * row still counts as matched. */
	S(STMT_APIKEY_REVOKE)
	    "UPDATE api_keys SET revoked_at = "
	    "COALESCE(revoked_at, UNIX_TIMESTAMP()) "
	    "WHERE id = ? AND tenant_id = ?"},

	S(STMT_ADMIN_INSERT)
	    "INSERT INTO admins (tenant_id, email, role, password_hash, "
	    "created_at) VALUES (?, ?, ?, ?, UNIX_TIMESTAMP())"},
	S(STMT_ADMIN_BY_EMAIL)
	    "SELECT " ADMIN_COLUMNS ", password_hash FROM admins "
	    "WHERE tenant_id = ? AND email = ?"},
	S(STMT_ADMIN_BY_ID)
	    "SELECT " ADMIN_COLUMNS " FROM admins "
	    "WHERE tenant_id = ? AND id = ?"},
	S(STMT_ADMIN_COUNT) "SELECT COUNT(*) FROM admins WHERE tenant_id = ?"},

	/* Get-or-create without a race: the first insert wins, the others
	 * are ignored, and everyone reads the winner's value. */
	S(STMT_SECRET_CREATE)
	    "INSERT INTO server_secrets (name, value, created_at) "
	    "VALUES (?, ?, UNIX_TIMESTAMP()) ON CONFLICT DO NOTHING",
	    "INSERT IGNORE INTO server_secrets (name, value, created_at) "
	    "VALUES (?, ?, UNIX_TIMESTAMP())"},
	S(STMT_SECRET_GET) "SELECT value FROM server_secrets WHERE name = ?"},

	/* holds and permits */
#define HOLD_COLUMNS                                                      \
	"h.id, h.external_id, h.state, h.code_id, c.display, c.code, "    \
	"k.name, h.account, h.fencing_token, h.expires_at, h.created_at, " \
	"h.ended_at, h.redemption_id, h.campaign_id, k.budget, "          \
	"k.per_account_limit, k.kind, c.state, k.state, h.tenant_id, "    \
	"UNIX_TIMESTAMP()"
#define HOLD_FROM                                                         \
	" FROM holds h JOIN codes c ON c.id = h.code_id"                  \
	" JOIN campaigns k ON k.id = h.campaign_id "
#define SEMAPHORE_COLUMNS                                                 \
	"s.id, s.name, s.capacity, s.in_use, s.fence, s.created_at, "     \
	"s.updated_at"
#define PERMIT_COLUMNS                                                    \
	"p.id, p.external_id, p.owner, p.state, p.fencing_token, "        \
	"p.expires_at, p.created_at, p.ended_at, p.tenant_id, "           \
	"UNIX_TIMESTAMP()"
	/* G1, G2, G6: a hold takes its seat with the claim's UPDATE (the
	 * same SET order and WHERE as STMT_CODE_CLAIM) and bumps the code's
	 * fencing counter in it, under the row lock; db_last_id reads the
	 * token back. A held last seat reads 'exhausted', even for a
	 * single-use code: 'redeemed' comes with the confirm. */
	S(STMT_HOLD_CLAIM)
	    "UPDATE codes SET "
	    "state = CASE WHEN uses + 1 >= max_uses THEN 'exhausted' "
	    "ELSE state END, "
	    "uses = uses + 1, fence = LAST_INSERT_ID(fence + 1) "
	    "WHERE id = ? AND state = 'active' AND uses < max_uses "
	    "AND shards = 0 "
	    "AND (expires_at IS NULL OR expires_at > UNIX_TIMESTAMP()) "
	    "AND EXISTS (SELECT 1 FROM campaigns k WHERE "
	    "k.id = codes.campaign_id AND " CAMPAIGN_WINDOW_OPEN ")"},
	/* RETURNING (SQLite 3.35, MariaDB 10.5): the row's id and times by
	 * the clock under the code's row lock (G6: created_at follows the
	 * grant order), without a second trip. */
	S(STMT_HOLD_INSERT)
	    "INSERT INTO holds (tenant_id, external_id, code_id, campaign_id, "
	    "account, state, fencing_token, expires_at, created_at) "
	    "VALUES (?, ?, ?, ?, ?, 'held', ?, UNIX_TIMESTAMP() + ?, "
	    "UNIX_TIMESTAMP()) RETURNING id, expires_at, created_at"},
	/* The account's live hold of the code (holds_live said there is
	 * one) and whether it has lapsed by the database clock. */
	S(STMT_HOLD_LIVE_OF_ACCOUNT)
	    "SELECT id, expires_at <= UNIX_TIMESTAMP() FROM holds WHERE "
	    "code_id = ? AND account = ? AND state = 'held' LIMIT 1",
	    "SELECT id, expires_at <= UNIX_TIMESTAMP() FROM holds WHERE "
	    "code_id = ? AND live_account = ? LIMIT 1"},
	S(STMT_HOLD_GET)
	    "SELECT " HOLD_COLUMNS HOLD_FROM
	    "WHERE h.tenant_id = ? AND h.external_id = ?"},
	S(STMT_HOLD_BY_ID) "SELECT " HOLD_COLUMNS HOLD_FROM "WHERE h.id = ?"},
	/* The way out of 'held' is one conditional UPDATE each: whoever
	 * matches the row owns the transition (and, on InnoDB, its lock).
	 * A hold is lost at expires_at by the database clock, swept or not. */
	S(STMT_HOLD_CONFIRM)
	    "UPDATE holds SET state = 'confirmed', ended_at = "
	    "UNIX_TIMESTAMP() WHERE tenant_id = ? AND external_id = ? "
	    "AND state = 'held' AND expires_at > UNIX_TIMESTAMP()"},
	S(STMT_HOLD_CODE_REDEEMED)
	    "UPDATE codes SET state = 'redeemed' WHERE id = ? "
	    "AND max_uses = 1 AND state = 'exhausted'"},
	S(STMT_HOLD_SET_REDEMPTION)
	    "UPDATE holds SET redemption_id = ? WHERE id = ?"},
	S(STMT_HOLD_RELEASE)
	    "UPDATE holds SET state = 'released', ended_at = "
	    "UNIX_TIMESTAMP() WHERE tenant_id = ? AND external_id = ? "
	    "AND state = 'held' AND expires_at > UNIX_TIMESTAMP()"},
	S(STMT_HOLD_EXPIRE)
	    "UPDATE holds SET state = 'expired', ended_at = UNIX_TIMESTAMP() "
	    "WHERE id = ? AND state = 'held' "
	    "AND expires_at <= UNIX_TIMESTAMP()"},
	S(STMT_HOLD_DUE)
	    "SELECT id FROM holds WHERE state = 'held' AND "
	    "expires_at <= UNIX_TIMESTAMP() ORDER BY expires_at, id LIMIT ?"},
	/* The cleanup job: holds ended (confirmed, released, expired) more
	 * than ? seconds ago, deleted by id. */
	S(STMT_HOLD_ENDED_OLD)
	    "SELECT id FROM holds WHERE ended_at <= UNIX_TIMESTAMP() - ? "
	    "AND state <> 'held' ORDER BY ended_at LIMIT ?"},
	S(STMT_HOLD_DELETE) "DELETE FROM holds WHERE id = ?"},

	/* Leaked: permits past their TTL by the database clock that the
	 * sweeper has not taken back yet. */
	S(STMT_SEMAPHORE_GET)
	    "SELECT " SEMAPHORE_COLUMNS ", (SELECT COUNT(*) FROM permits p "
	    "JOIN permit_items i ON i.permit_id = p.id "
	    "AND i.semaphore_id = s.id WHERE p.state = 'acquired' "
	    "AND p.expires_at <= UNIX_TIMESTAMP()) FROM semaphores s "
	    "WHERE s.tenant_id = ? AND s.name = ?"},
	S(STMT_SEMAPHORE_INSERT)
	    "INSERT INTO semaphores (tenant_id, name, capacity, created_at, "
	    "updated_at) VALUES (?, ?, ?, UNIX_TIMESTAMP(), UNIX_TIMESTAMP())"},
	S(STMT_SEMAPHORE_LOCK)
	    "SELECT id, capacity FROM semaphores "
	    "WHERE tenant_id = ? AND name = ?",
	    "SELECT id, capacity FROM semaphores "
	    "WHERE tenant_id = ? AND name = ? FOR UPDATE"},
	S(STMT_SEMAPHORE_SET_CAPACITY)
	    "UPDATE semaphores SET capacity = ?, updated_at = "
	    "UNIX_TIMESTAMP() WHERE id = ?"},
	S(STMT_SEMAPHORE_HISTORY_INSERT)
	    "INSERT INTO semaphore_history (semaphore_id, who, at, "
	    "from_capacity, to_capacity) VALUES (?, ?, UNIX_TIMESTAMP(), ?, ?)"},
	S(STMT_SEMAPHORE_HISTORY_LIST)
	    "SELECT y.who, y.at, y.from_capacity, y.to_capacity "
	    "FROM semaphore_history y JOIN semaphores s "
	    "ON s.id = y.semaphore_id WHERE s.tenant_id = ? AND s.name = ? "
	    "ORDER BY y.id"},
	/* G5, G6: room is taken by a conditional UPDATE that bumps the
	 * fencing counter under the row lock; the taker then reads the
	 * row it holds (STMT_SEMAPHORE_READ). Callers go in name order. */
	S(STMT_SEMAPHORE_TAKE)
	    "UPDATE semaphores SET fence = fence + 1, in_use = in_use + ? "
	    "WHERE tenant_id = ? AND name = ? AND in_use + ? <= capacity"},
	S(STMT_SEMAPHORE_READ)
	    "SELECT id, fence, in_use, capacity FROM semaphores "
	    "WHERE tenant_id = ? AND name = ?"},
	S(STMT_SEMAPHORE_GIVE)
	    "UPDATE semaphores SET in_use = in_use - ? "
	    "WHERE id = ? AND in_use >= ?"},
	S(STMT_PERMIT_INSERT)
	    "INSERT INTO permits (tenant_id, external_id, owner, state, "
	    "fencing_token, expires_at, created_at) VALUES (?, ?, ?, "
	    "'acquired', ?, UNIX_TIMESTAMP() + ?, UNIX_TIMESTAMP()) "
	    "RETURNING id, expires_at, created_at"},
	S(STMT_PERMIT_ITEM_INSERT)
	    "INSERT INTO permit_items (permit_id, semaphore_id, count, "
	    "fencing_token, in_use_after, capacity_at, created_at) "
	    "VALUES (?, ?, ?, ?, ?, ?, UNIX_TIMESTAMP())"},
	S(STMT_PERMIT_GET)
	    "SELECT " PERMIT_COLUMNS " FROM permits p "
	    "WHERE p.tenant_id = ? AND p.external_id = ?"},
	S(STMT_PERMIT_BY_ID)
	    "SELECT " PERMIT_COLUMNS " FROM permits p WHERE p.id = ?"},
	S(STMT_PERMIT_ITEMS)
	    "SELECT s.name, i.count, i.fencing_token, i.semaphore_id "
	    "FROM permit_items i JOIN semaphores s ON s.id = i.semaphore_id "
	    "WHERE i.permit_id = ? ORDER BY s.name"},
	S(STMT_PERMIT_HEARTBEAT)
	    "UPDATE permits SET expires_at = UNIX_TIMESTAMP() + ? "
	    "WHERE tenant_id = ? AND external_id = ? AND state = 'acquired' "
	    "AND expires_at > UNIX_TIMESTAMP()"},
	S(STMT_PERMIT_RELEASE)
	    "UPDATE permits SET state = 'released', ended_at = "
	    "UNIX_TIMESTAMP() WHERE tenant_id = ? AND external_id = ? "
	    "AND state = 'acquired' AND expires_at > UNIX_TIMESTAMP()"},
	S(STMT_PERMIT_EXPIRE)
	    "UPDATE permits SET state = 'expired', ended_at = "
	    "UNIX_TIMESTAMP() WHERE id = ? AND state = 'acquired' "
	    "AND expires_at <= UNIX_TIMESTAMP()"},
	S(STMT_PERMIT_DUE)
	    "SELECT id FROM permits WHERE state = 'acquired' AND "
	    "expires_at <= UNIX_TIMESTAMP() ORDER BY expires_at, id LIMIT ?"},
	/* The staleness job: acquired longer than ? seconds ago, however
	 * often heartbeats renewed the lease. */
	S(STMT_PERMIT_STALE)
	    "SELECT id FROM permits WHERE state = 'acquired' AND "
	    "created_at <= UNIX_TIMESTAMP() - ? ORDER BY created_at, id "
	    "LIMIT ?"},
	S(STMT_PERMIT_RELEASE_STALE)
	    "UPDATE permits SET state = 'released', ended_at = "
	    "UNIX_TIMESTAMP() WHERE id = ? AND state = 'acquired' "
	    "AND created_at <= UNIX_TIMESTAMP() - ?"},
	S(STMT_PERMIT_ENDED_OLD)
	    "SELECT id FROM permits WHERE ended_at <= UNIX_TIMESTAMP() - ? "
	    "AND state <> 'acquired' ORDER BY ended_at LIMIT ?"},
	S(STMT_PERMIT_ITEMS_DELETE)
	    "DELETE FROM permit_items WHERE permit_id = ?"},
	S(STMT_PERMIT_DELETE) "DELETE FROM permits WHERE id = ?"},

	/* verify, with holds and permits: G2 and G4 count live holds (state
	 * 'held', expired or not until swept) beside the redemptions that
	 * hold a seat. */
	S(STMT_VERIFY_G2_HOLDS)
	    "SELECT c.id, " CODE_USES("c") ", COALESCE(r.n, 0) + COALESCE(h.n, 0) "
	    "FROM codes c LEFT JOIN "
	    "(SELECT code_id, COUNT(*) AS n FROM redemptions WHERE "
	    HOLDS_SEAT " GROUP BY code_id) r ON r.code_id = c.id LEFT JOIN "
	    "(SELECT code_id, COUNT(*) AS n FROM holds WHERE state = 'held' "
	    "GROUP BY code_id) h ON h.code_id = c.id "
	    "WHERE " CODE_USES("c") " <> COALESCE(r.n, 0) + COALESCE(h.n, 0) "
	    "ORDER BY c.id"},
	S(STMT_VERIFY_G4_HOLDS)
	    "SELECT k.id, k.redeemed, k.budget FROM campaigns k LEFT JOIN "
	    "(SELECT campaign_id, COUNT(*) AS n FROM redemptions WHERE "
	    HOLDS_SEAT " GROUP BY campaign_id) r ON r.campaign_id = k.id "
	    "LEFT JOIN (SELECT campaign_id, COUNT(*) AS n FROM holds WHERE "
	    "state = 'held' GROUP BY campaign_id) h ON h.campaign_id = k.id "
	    "WHERE k.budget IS NOT NULL AND (k.redeemed <> COALESCE(r.n, 0) "
	    "+ COALESCE(h.n, 0) OR k.redeemed > k.budget) ORDER BY k.id"},
	/* Correlated counts, not a join against a grouped derived table:
	 * MariaDB cannot key a derived table on (campaign_id, account)
	 * (1026 bytes) and falls back to a block nested loop, O(accounts x
	 * redemptions); these use redemptions_campaign_account. */
	S(STMT_VERIFY_G4_ACCOUNTS_HOLDS)
	    "SELECT a.campaign_id, a.account, a.n FROM campaign_accounts a "
	    "WHERE a.n <> (SELECT COUNT(*) FROM redemptions r "
	    "WHERE r.campaign_id = a.campaign_id AND r.account = a.account "
	    "AND (r.reversal_policy IS NULL OR "
	    "r.reversal_policy <> 'return_seat')) + (SELECT COUNT(*) FROM "
	    "holds h WHERE h.campaign_id = a.campaign_id AND h.account = "
	    "a.account AND h.state = 'held') "
	    "UNION ALL "
	    "SELECT x.campaign_id, x.account, COUNT(*) FROM (SELECT "
	    "campaign_id, account FROM redemptions WHERE " HOLDS_SEAT
	    " UNION ALL SELECT campaign_id, account FROM holds WHERE state = "
	    "'held') x JOIN campaigns k ON k.id = x.campaign_id WHERE "
	    "(k.kind = 'pool' OR k.per_account_limit IS NOT NULL) "
	    "GROUP BY x.campaign_id, x.account, k.kind, k.per_account_limit "
	    "HAVING COUNT(*) > (CASE WHEN k.kind = 'pool' THEN 1 ELSE "
	    "k.per_account_limit END)"},
	/* G5: in_use is what the live permits hold, and no grant ever left
	 * a semaphore over the capacity it had then (a capacity lowered
	 * later may sit below in_use: allowed). */
	S(STMT_VERIFY_G5)
	    "SELECT s.id, s.in_use, COALESCE(p.n, 0) FROM semaphores s "
	    "LEFT JOIN (SELECT i.semaphore_id, SUM(i.count) AS n FROM "
	    "permit_items i JOIN permits p ON p.id = i.permit_id WHERE "
	    "p.state = 'acquired' GROUP BY i.semaphore_id) p "
	    "ON p.semaphore_id = s.id WHERE s.in_use <> COALESCE(p.n, 0) "
	    "ORDER BY s.id"},
	S(STMT_VERIFY_G5_GRANTS)
	    "SELECT i.semaphore_id, i.in_use_after, i.capacity_at FROM "
	    "permit_items i WHERE i.in_use_after > i.capacity_at "
	    "ORDER BY i.semaphore_id, i.fencing_token"},
	/* G6, per code (holds) and per semaphore (permits): no token
	 * repeats, none passes its counter, and in token order the grant
	 * times never go back (the grant's insert runs after the earlier
	 * grant committed, by the database clock). */
	S(STMT_VERIFY_G6)
	    "SELECT 'code', x.code_id, x.fencing_token FROM (SELECT "
	    "h.code_id, h.fencing_token, h.created_at, c.fence, "
	    "LAG(h.fencing_token) OVER (PARTITION BY h.code_id ORDER BY "
	    "h.fencing_token, h.id) AS pt, LAG(h.created_at) OVER (PARTITION "
	    "BY h.code_id ORDER BY h.fencing_token, h.id) AS pc FROM holds h "
	    "JOIN codes c ON c.id = h.code_id) x WHERE x.fencing_token > "
	    "x.fence OR x.fencing_token = x.pt OR x.created_at < x.pc "
	    "UNION ALL "
	    "SELECT 'semaphore', x.semaphore_id, x.fencing_token FROM (SELECT "
	    "i.semaphore_id, i.fencing_token, i.created_at, s.fence, "
	    "LAG(i.fencing_token) OVER (PARTITION BY i.semaphore_id ORDER BY "
	    "i.fencing_token, i.permit_id) AS pt, LAG(i.created_at) OVER "
	    "(PARTITION BY i.semaphore_id ORDER BY i.fencing_token, "
	    "i.permit_id) AS pc FROM permit_items i JOIN semaphores s ON "
	    "s.id = i.semaphore_id) x WHERE x.fencing_token > x.fence OR "
	    "x.fencing_token = x.pt OR x.created_at < x.pc"},


	/* webhooks */
#define WEBHOOK_COLUMNS "id, url, enabled, created_at, disabled_at"
#define DELIVERY_COLUMNS                                                  \
	"d.id, e.event_id, e.type, d.endpoint_id, d.state, d.attempts, "  \
	"d.next_attempt_at, d.last_attempt_at, d.last_status, "           \
	"d.last_error, d.created_at, d.delivered_at"
	S(STMT_WEBHOOK_INSERT)
	    "INSERT INTO webhook_endpoints (tenant_id, url, secret, enabled, "
	    "created_at) VALUES (?, ?, ?, 1, UNIX_TIMESTAMP())"},
	S(STMT_WEBHOOK_BY_ID)
	    "SELECT " WEBHOOK_COLUMNS " FROM webhook_endpoints "
	    "WHERE id = ? AND tenant_id = ?"},
	S(STMT_WEBHOOK_LIST)
	    "SELECT " WEBHOOK_COLUMNS " FROM webhook_endpoints "
	    "WHERE tenant_id = ? ORDER BY id"},
	S(STMT_WEBHOOK_DISABLE)
	    "UPDATE webhook_endpoints SET enabled = 0, disabled_at = "
	    "COALESCE(disabled_at, UNIX_TIMESTAMP()) "
	    "WHERE id = ? AND tenant_id = ?"},
	/* What a disabled endpoint still had coming ends visibly dead. */
	S(STMT_WEBHOOK_DISABLE_PENDING)
	    "UPDATE webhook_deliveries SET state = 'dead', "
	    "last_error = 'endpoint disabled' "
	    "WHERE endpoint_id = ? AND tenant_id = ? AND state = 'pending'"},
	/* The fan-out: events not yet enqueued, oldest first (a plain
	 * read: no lock on the outbox the claims append to), a tenant's
	 * enabled endpoints (those older than an event get it), one
	 * delivery row each;
	 * UNIQUE(event_id, endpoint_id) makes a second run add nothing.
	 * Single-row inserts: MariaDB's INSERT ... SELECT takes the table's
	 * AUTO-INC lock, and two fan-outs then fail with error 1467. */
	S(STMT_WEBHOOK_ENQUEUE_SCAN)
	    "SELECT id, tenant_id, created_at FROM events "
	    "WHERE enqueued_at IS NULL ORDER BY id LIMIT ?"},
	S(STMT_WEBHOOK_ENQUEUE_TARGETS)
	    "SELECT id, created_at FROM webhook_endpoints WHERE tenant_id = ? "
	    "AND enabled = 1 ORDER BY id"},
	S(STMT_WEBHOOK_ENQUEUE_FAN)
	    "INSERT INTO webhook_deliveries (tenant_id, event_id, endpoint_id, "
	    "state, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, "
	    "'pending', 0, UNIX_TIMESTAMP(), UNIX_TIMESTAMP()) "
	    "ON CONFLICT DO NOTHING",
	    "INSERT IGNORE INTO webhook_deliveries (tenant_id, event_id, "
	    "endpoint_id, state, attempts, next_attempt_at, created_at) "
	    "VALUES (?, ?, ?, 'pending', 0, UNIX_TIMESTAMP(), "
	    "UNIX_TIMESTAMP())"},
	S(STMT_WEBHOOK_ENQUEUE_MARK)
	    "UPDATE events SET enqueued_at = UNIX_TIMESTAMP() "
	    "WHERE id = ? AND enqueued_at IS NULL"},
	/* Deliveries due by a time (when the run began, so that one run
	 * makes one attempt of each); MySQL skips rows another sweeper is
	 * claiming. */
	S(STMT_WEBHOOK_DUE)
	    "SELECT id, attempts FROM webhook_deliveries WHERE state = "
	    "'pending' AND next_attempt_at <= ? "
	    "ORDER BY next_attempt_at, id LIMIT ?",
	    "SELECT id, attempts FROM webhook_deliveries WHERE state = "
	    "'pending' AND next_attempt_at <= ? "
	    "ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED"},
	/* The lease: matches only the attempt read as due, so one claimer
	 * wins it; a claimer that dies leaves it due again after the
	 * lease. */
	S(STMT_WEBHOOK_CLAIM)
	    "UPDATE webhook_deliveries SET attempts = attempts + 1, "
	    "next_attempt_at = UNIX_TIMESTAMP() + ?, "
	    "last_attempt_at = UNIX_TIMESTAMP() WHERE id = ? AND attempts = ? "
	    "AND state = 'pending' AND next_attempt_at <= UNIX_TIMESTAMP()"},
	S(STMT_WEBHOOK_JOB)
	    "SELECT e.event_id, e.type, e.created_at, e.payload, w.url, "
	    "w.secret, w.enabled FROM webhook_deliveries d "
	    "JOIN events e ON e.id = d.event_id "
	    "JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.id = ?"},
	/* Results, fenced by the attempt number the claim took. A success
	 * is recorded even over a disabling that came while it flew. */
	S(STMT_WEBHOOK_DELIVERED)
	    "UPDATE webhook_deliveries SET state = 'delivered', "
	    "delivered_at = UNIX_TIMESTAMP(), last_status = ?, "
	    "last_error = NULL WHERE id = ? AND attempts = ? "
	    "AND state <> 'delivered'"},
	S(STMT_WEBHOOK_RETRY)
	    "UPDATE webhook_deliveries SET next_attempt_at = ?, "
	    "last_status = ?, last_error = ? WHERE id = ? AND attempts = ? "
	    "AND state = 'pending'"},
	S(STMT_WEBHOOK_DEAD)
	    "UPDATE webhook_deliveries SET state = 'dead', last_status = ?, "
	    "last_error = ? WHERE id = ? AND attempts = ? "
	    "AND state = 'pending'"},
	/* Newest first, before id; state '' lists every state. */
	S(STMT_WEBHOOK_DELIVERY_LIST)
	    "SELECT " DELIVERY_COLUMNS " FROM webhook_deliveries d "
	    "JOIN events e ON e.id = d.event_id WHERE d.tenant_id = ? "
	    "AND (? = '' OR d.state = ?) AND d.id < ? "
	    "ORDER BY d.id DESC LIMIT ?"},

	/* The sweeper. A lease is taken when it has run out or is already
	 * the taker's (a restarted sweeper of the same holder). */
	S(STMT_SWEEP_LEASE_TAKE)
	    "UPDATE sweep_leases SET holder = ?, "
	    "expires_at = UNIX_TIMESTAMP() + ? WHERE job = ? AND "
	    "(expires_at <= UNIX_TIMESTAMP() OR holder = ?)"},
	S(STMT_SWEEP_LEASE_DONE)
	    "UPDATE sweep_leases SET expires_at = 0, "
	    "last_run_at = UNIX_TIMESTAMP(), last_done = ? "
	    "WHERE job = ? AND holder = ?"},
	/* In batches: SQLite has no UPDATE ... LIMIT, MySQL no LIMIT in an
	 * IN subquery. Only active codes expire; a claim re-checks expiry
	 * itself, so a late sweep is never wrong, only late. */
	S(STMT_SWEEP_EXPIRE_CODES)
	    "UPDATE codes SET state = 'expired' WHERE id IN (SELECT id FROM "
	    "codes WHERE state = 'active' AND expires_at IS NOT NULL AND "
	    "expires_at <= UNIX_TIMESTAMP() LIMIT ?)",
	    "UPDATE codes SET state = 'expired' WHERE state = 'active' AND "
	    "expires_at IS NOT NULL AND expires_at <= UNIX_TIMESTAMP() "
	    "LIMIT ?"},
	S(STMT_SWEEP_CLEANUP_ABUSE)
	    "DELETE FROM abuse_failures WHERE id IN (SELECT id FROM "
	    "abuse_failures WHERE at <= UNIX_TIMESTAMP() - ? LIMIT ?)",
	    "DELETE FROM abuse_failures WHERE at <= UNIX_TIMESTAMP() - ? "
	    "LIMIT ?"},

	S(STMT_VERIFY_G1)
	    "SELECT c.id, " CODE_USES("c") ", c.max_uses FROM codes c "
	    "WHERE c.uses < 0 OR " CODE_USES("c") " > c.max_uses "
	    "ORDER BY c.id"},
	/* A split code: codes.uses 0, `shards` rows numbered 0.., their
	 * max_uses summing to the code's, each row within 0..max_uses, and
	 * active unless the code is revoked. */
	S(STMT_VERIFY_G1_SPLIT)
	    "SELECT c.id, COUNT(cs.shard), COALESCE(SUM(cs.max_uses), 0) "
	    "FROM codes c LEFT JOIN code_shards cs ON cs.code_id = c.id "
	    "GROUP BY c.id, c.shards, c.uses, c.max_uses, c.state "
	    "HAVING (c.shards = 0 AND COUNT(cs.shard) > 0) OR (c.shards > 0 "
	    "AND (c.uses <> 0 OR COUNT(cs.shard) <> c.shards OR "
	    "SUM(cs.active) <> CASE WHEN c.state = 'revoked' THEN 0 ELSE "
	    "c.shards END OR "
	    "SUM(cs.max_uses) <> c.max_uses OR MAX(cs.shard) <> c.shards - 1 "
	    "OR MIN(cs.uses) < 0 OR SUM(CASE WHEN cs.uses > cs.max_uses "
	    "THEN 1 ELSE 0 END) > 0)) ORDER BY c.id"},
	S(STMT_VERIFY_G3)
	    "SELECT code_id, account, COUNT(*) FROM redemptions "
	    "GROUP BY code_id, account HAVING COUNT(*) > 1"},
	S(STMT_VERIFY_G7)
	    "SELECT r.id, COUNT(e.id), '' FROM redemptions r LEFT JOIN events "
	    "e ON e.redemption_id = r.id AND e.type = 'code.redeemed' "
	    "GROUP BY r.id HAVING COUNT(e.id) <> 1 "
	    "UNION ALL "
	    "SELECT e.id, 0, ' (an event without its redemption)' FROM "
	    "events e WHERE e.type = 'code.redeemed' AND (e.redemption_id IS "
	    "NULL OR NOT EXISTS (SELECT 1 FROM redemptions r2 WHERE r2.id = "
	    "e.redemption_id))"},
	S(STMT_VERIFY_G8)
	    "SELECT c.id, c.state, " CODE_USES("c") " FROM codes c WHERE "
	    "c.state NOT IN ('revoked', 'expired') AND ((CASE WHEN c.state IN "
	    "('redeemed', 'exhausted') THEN 1 ELSE 0 END) <> (CASE WHEN "
	    CODE_USES("c") " = c.max_uses THEN 1 ELSE 0 END) OR "
	    "(c.state = 'redeemed' AND c.max_uses <> 1)) ORDER BY c.id"},

	/* admin dashboard pages */
	/* Redemptions per UTC day from ? (a midnight): day 0, 1, ...;
	 * integer division in both dialects. */
	S(STMT_ADMIN_STATS_PER_DAY)
	    "SELECT (r.redeemed_at - ?) / 86400 AS d, COUNT(*) FROM "
	    "redemptions r WHERE r.tenant_id = ? AND r.redeemed_at >= ? "
	    "GROUP BY d",
	    "SELECT (r.redeemed_at - ?) DIV 86400 AS d, COUNT(*) FROM "
	    "redemptions r WHERE r.tenant_id = ? AND r.redeemed_at >= ? "
	    "GROUP BY d"},
	S(STMT_ADMIN_STATS_TOP_CAMPAIGNS)
	    "SELECT k.name, COUNT(*) AS n FROM redemptions r JOIN campaigns k "
	    "ON k.id = r.campaign_id WHERE r.tenant_id = ? AND "
	    "r.redeemed_at >= ? GROUP BY k.id, k.name ORDER BY n DESC, k.name "
	    "LIMIT ?"},
	/* Live holds, leaked holds (past their TTL, not swept) and leaked
	 * permits (past their TTL or older than the staleness limit ?). */
	S(STMT_ADMIN_STATS_LEASES)
	    "SELECT (SELECT COUNT(*) FROM holds WHERE tenant_id = ? AND "
	    "state = 'held' AND expires_at > UNIX_TIMESTAMP()), "
	    "(SELECT COUNT(*) FROM holds WHERE tenant_id = ? AND "
	    "state = 'held' AND expires_at <= UNIX_TIMESTAMP()), "
	    "(SELECT COUNT(*) FROM permits WHERE tenant_id = ? AND "
	    "state = 'acquired' AND (expires_at <= UNIX_TIMESTAMP() OR "
	    "created_at <= UNIX_TIMESTAMP() - ?))"},
	/* Enabled endpoints with deliveries retrying (an attempt failed)
	 * or dead within the last ? seconds, and the newest such
	 * delivery's answer. */
	S(STMT_ADMIN_STATS_FAILING_WEBHOOKS)
	    "SELECT w.id, w.url, "
	    "SUM(CASE WHEN d.state = 'pending' THEN 1 ELSE 0 END), "
	    "SUM(CASE WHEN d.state = 'dead' THEN 1 ELSE 0 END), "
	    "MAX(d.last_attempt_at), "
	    "(SELECT x.last_status FROM webhook_deliveries x WHERE "
	    "x.endpoint_id = w.id AND x.state <> 'delivered' AND "
	    "x.last_attempt_at IS NOT NULL ORDER BY x.last_attempt_at DESC, "
	    "x.id DESC LIMIT 1), "
	    "(SELECT x.last_error FROM webhook_deliveries x WHERE "
	    "x.endpoint_id = w.id AND x.state <> 'delivered' AND "
	    "x.last_attempt_at IS NOT NULL ORDER BY x.last_attempt_at DESC, "
	    "x.id DESC LIMIT 1) "
	    "FROM webhook_endpoints w JOIN webhook_deliveries d "
	    "ON d.endpoint_id = w.id WHERE w.tenant_id = ? AND w.enabled = 1 "
	    "AND d.tenant_id = ? AND ((d.state = 'pending' AND d.attempts > 1) "
	    "OR d.state = 'dead') AND COALESCE(d.last_attempt_at, "
	    "d.created_at) >= UNIX_TIMESTAMP() - ? "
	    "GROUP BY w.id, w.url ORDER BY w.id LIMIT ?"},

	/* admin: campaigns and audit pages */
	/* The window, budget and limit of one campaign; a budget below what
	 * was already redeemed matches no row (the caller tells why). */
	S(STMT_CAMPAIGN_UPDATE)
	    "UPDATE campaigns SET starts_at = ?, ends_at = ?, budget = ?, "
	    "per_account_limit = ? WHERE tenant_id = ? AND name = ? AND "
	    "(? IS NULL OR redeemed <= ?)"},
	S(STMT_CAMPAIGN_REOPEN)
	    "UPDATE campaigns SET state = 'open', closed_at = NULL "
	    "WHERE tenant_id = ? AND name = ? AND state = 'closed'"},
	/* One campaign's redemptions per day since ? (day 0 starts there). */
	S(STMT_ADMIN_CAMPAIGN_PER_DAY)
	    "SELECT (r.redeemed_at - ?) / 86400 AS d, COUNT(*) FROM "
	    "redemptions r WHERE r.tenant_id = ? AND r.campaign_id = ? AND "
	    "r.redeemed_at >= ? GROUP BY d",
	    "SELECT (r.redeemed_at - ?) DIV 86400 AS d, COUNT(*) FROM "
	    "redemptions r WHERE r.tenant_id = ? AND r.campaign_id = ? AND "
	    "r.redeemed_at >= ? GROUP BY d"},
	/* Every campaign's redemptions since ?, for the list. */
	S(STMT_ADMIN_CAMPAIGN_RECENT)
	    "SELECT r.campaign_id, COUNT(*) FROM redemptions r WHERE "
	    "r.tenant_id = ? AND r.redeemed_at >= ? GROUP BY r.campaign_id"},

	/* admin: codes and redemptions pages */
	/* Keyset pages by id, one statement per filter so that each walks
	 * its own index (migration 007: (tenant_id, id), (tenant_id,
	 * campaign_id, id) and (tenant_id, state, id)): no sort, no OFFSET,
	 * whatever the table's size. */
	/* The page of codes first, then their campaigns' names: joined the
	 * other way round, MariaDB reads campaigns first and sorts every
	 * code of the tenant (23 ms on 20,000 codes, seconds on a
	 * million). */
#define ADMIN_CODES_PAGE(where)                                           \
	"SELECT " CODE_COLUMNS " FROM (SELECT * FROM codes WHERE " where  \
	" ORDER BY id LIMIT ?) c JOIN campaigns k ON k.id = c.campaign_id " \
	"ORDER BY c.id"
	S(STMT_ADMIN_CODES_ALL) ADMIN_CODES_PAGE("tenant_id = ? AND id > ?")},
	S(STMT_ADMIN_CODES_CAMPAIGN) ADMIN_CODES_PAGE(
	    "tenant_id = ? AND campaign_id = (SELECT x.id FROM campaigns x "
	    "WHERE x.tenant_id = ? AND x.name = ?) AND id > ?")},
	S(STMT_ADMIN_CODES_STATE) ADMIN_CODES_PAGE(
	    "tenant_id = ? AND state = ? AND id > ?")},
	/* The campaign is the tenant's (the subquery), so the codes follow
	 * codes_campaign_state (campaign_id, state, id) of migration 001. */
	S(STMT_ADMIN_CODES_CAMPAIGN_STATE) ADMIN_CODES_PAGE(
	    "campaign_id = (SELECT x.id FROM campaigns x WHERE x.tenant_id = "
	    "? AND x.name = ?) AND state = ? AND id > ?")},
	S(STMT_ADMIN_CODE_REDEMPTIONS)
	    "SELECT " REDEMPTION_COLUMNS REDEMPTION_FROM
	    "WHERE r.code_id = ? AND r.tenant_id = ? ORDER BY r.id DESC "
	    "LIMIT ?"},
	S(STMT_ADMIN_CODE_HOLDS)
	    "SELECT h.id, h.external_id, h.account, h.state, h.expires_at, "
	    "h.created_at, h.ended_at, h.redemption_id FROM holds h "
	    "WHERE h.code_id = ? AND h.tenant_id = ? ORDER BY h.id DESC "
	    "LIMIT ?"},
	/* Newest first; NULL campaign or account: any. The time range is
	 * since <= redeemed_at < until, before_id the last id of the page
	 * before. */
	/* The page first, then its codes and campaigns (as for the codes
	 * pages: joined at once, MariaDB reads campaigns first and sorts
	 * every redemption of the tenant). */
	S(STMT_ADMIN_REDEMPTIONS)
	    "SELECT " REDEMPTION_COLUMNS " FROM (SELECT * FROM redemptions r "
	    "WHERE r.tenant_id = ? AND (? IS NULL OR r.campaign_id = "
	    "(SELECT x.id FROM campaigns x WHERE x.tenant_id = r.tenant_id "
	    "AND x.name = ?)) AND (? IS NULL OR r.account = ?) AND "
	    "r.redeemed_at >= ? AND r.redeemed_at < ? AND r.id < ? "
	    "ORDER BY r.id DESC LIMIT ?) r JOIN codes c ON c.id = r.code_id "
	    "JOIN campaigns k ON k.id = r.campaign_id ORDER BY r.id DESC"},

	/* admin: semaphores and leaked permits. The tenant's batches of the
	 * sweeper (STMT_HOLD_DUE, STMT_PERMIT_DUE, STMT_PERMIT_STALE with a
	 * tenant, or one id); index holds_tenant_due, permits_tenant_due,
	 * permits_tenant_stale (009_admin_leases.sql). */
	S(STMT_HOLD_DUE_TENANT)
	    "SELECT id FROM holds WHERE tenant_id = ? AND state = 'held' AND "
	    "expires_at <= UNIX_TIMESTAMP() ORDER BY expires_at, id LIMIT ?"},
	S(STMT_HOLD_DUE_ONE)
	    "SELECT id FROM holds WHERE id = ? AND tenant_id = ? AND "
	    "state = 'held' AND expires_at <= UNIX_TIMESTAMP()"},
	S(STMT_PERMIT_DUE_TENANT)
	    "SELECT id FROM permits WHERE tenant_id = ? AND "
	    "state = 'acquired' AND expires_at <= UNIX_TIMESTAMP() "
	    "ORDER BY expires_at, id LIMIT ?"},
	S(STMT_PERMIT_DUE_ONE)
	    "SELECT id FROM permits WHERE id = ? AND tenant_id = ? AND "
	    "state = 'acquired' AND expires_at <= UNIX_TIMESTAMP()"},
	S(STMT_PERMIT_STALE_TENANT)
	    "SELECT id FROM permits WHERE tenant_id = ? AND "
	    "state = 'acquired' AND created_at <= UNIX_TIMESTAMP() - ? "
	    "ORDER BY created_at, id LIMIT ?"},
	S(STMT_PERMIT_STALE_ONE)
	    "SELECT id FROM permits WHERE id = ? AND tenant_id = ? AND "
	    "state = 'acquired' AND created_at <= UNIX_TIMESTAMP() - ?"},
	/* The tenant's semaphores by name, with their live holders and
	 * leaked permits (acquired, past the TTL, not swept). */
	S(STMT_ADMIN_SEMAPHORES)
	    "SELECT " SEMAPHORE_COLUMNS ", "
	    "(SELECT COUNT(*) FROM permit_items i JOIN permits p "
	    "ON p.id = i.permit_id WHERE i.semaphore_id = s.id AND "
	    "p.state = 'acquired' AND p.expires_at > UNIX_TIMESTAMP()), "
	    "(SELECT COUNT(*) FROM permit_items i JOIN permits p "
	    "ON p.id = i.permit_id WHERE i.semaphore_id = s.id AND "
	    "p.state = 'acquired' AND p.expires_at <= UNIX_TIMESTAMP()) "
	    "FROM semaphores s WHERE s.tenant_id = ? ORDER BY s.name LIMIT ?"},
	/* A semaphore's acquired permits, lapsed or not, oldest first,
	 * with this semaphore's own token and count. */
	S(STMT_ADMIN_SEMAPHORE_HOLDERS)
	    "SELECT p.id, p.external_id, p.owner, i.fencing_token, "
	    "p.created_at, p.expires_at, i.count, UNIX_TIMESTAMP() "
	    "FROM permit_items i JOIN permits p ON p.id = i.permit_id "
	    "WHERE i.semaphore_id = ? AND p.tenant_id = ? AND "
	    "p.state = 'acquired' ORDER BY p.created_at, p.id LIMIT ?"},
	/* The leaked page's totals: the overview's definition
	 * (STMT_ADMIN_STATS_LEASES), the permits split in past their TTL
	 * and stale but within it. */
	S(STMT_ADMIN_LEAKED_COUNTS)
	    "SELECT (SELECT COUNT(*) FROM holds WHERE tenant_id = ? AND "
	    "state = 'held' AND expires_at <= UNIX_TIMESTAMP()), "
	    "(SELECT COUNT(*) FROM permits WHERE tenant_id = ? AND "
	    "state = 'acquired' AND expires_at <= UNIX_TIMESTAMP()), "
	    "(SELECT COUNT(*) FROM permits WHERE tenant_id = ? AND "
	    "state = 'acquired' AND created_at <= UNIX_TIMESTAMP() - ? AND "
	    "expires_at > UNIX_TIMESTAMP()), UNIX_TIMESTAMP()"},
	/* Most overdue first. */
	S(STMT_ADMIN_LEAKED_HOLDS)
	    "SELECT h.id, h.external_id, c.display, h.account, k.name, "
	    "h.created_at, h.expires_at FROM holds h "
	    "JOIN codes c ON c.id = h.code_id "
	    "JOIN campaigns k ON k.id = h.campaign_id "
	    "WHERE h.tenant_id = ? AND h.state = 'held' AND "
	    "h.expires_at <= UNIX_TIMESTAMP() ORDER BY h.expires_at, h.id "
	    "LIMIT ?"},
#define LEAKED_PERMIT_COLUMNS                                             \
	"p.id, p.external_id, p.owner, p.created_at, p.expires_at, "      \
	"(SELECT group_concat(s.name, ', ') FROM permit_items i "         \
	"JOIN semaphores s ON s.id = i.semaphore_id "                     \
	"WHERE i.permit_id = p.id) "
#define LEAKED_PERMIT_COLUMNS_MYSQL                                       \
	"p.id, p.external_id, p.owner, p.created_at, p.expires_at, "      \
	"(SELECT GROUP_CONCAT(s.name ORDER BY s.name SEPARATOR ', ') "    \
	"FROM permit_items i JOIN semaphores s ON s.id = i.semaphore_id " \
	"WHERE i.permit_id = p.id) "
	S(STMT_ADMIN_LEAKED_PERMITS)
	    "SELECT " LEAKED_PERMIT_COLUMNS "FROM permits p "
	    "WHERE p.tenant_id = ? AND p.state = 'acquired' AND "
	    "p.expires_at <= UNIX_TIMESTAMP() ORDER BY p.expires_at, p.id "
	    "LIMIT ?",
	    "SELECT " LEAKED_PERMIT_COLUMNS_MYSQL "FROM permits p "
	    "WHERE p.tenant_id = ? AND p.state = 'acquired' AND "
	    "p.expires_at <= UNIX_TIMESTAMP() ORDER BY p.expires_at, p.id "
	    "LIMIT ?"},
	/* Acquired longer than the staleness limit (?) but within their
	 * TTL (those past it are in the list above), oldest first. */
	S(STMT_ADMIN_STALE_PERMITS)
	    "SELECT " LEAKED_PERMIT_COLUMNS "FROM permits p "
	    "WHERE p.tenant_id = ? AND p.state = 'acquired' AND "
	    "p.created_at <= UNIX_TIMESTAMP() - ? AND "
	    "p.expires_at > UNIX_TIMESTAMP() ORDER BY p.created_at, p.id "
	    "LIMIT ?",
	    "SELECT " LEAKED_PERMIT_COLUMNS_MYSQL "FROM permits p "
	    "WHERE p.tenant_id = ? AND p.state = 'acquired' AND "
	    "p.created_at <= UNIX_TIMESTAMP() - ? AND "
	    "p.expires_at > UNIX_TIMESTAMP() ORDER BY p.created_at, p.id "
	    "LIMIT ?"},
	/* Whose a hold or permit id is: 404 against "no longer leaked". */
	S(STMT_ADMIN_LEASE_OWNER)
	    "SELECT (SELECT COUNT(*) FROM holds WHERE id = ? AND "
	    "tenant_id = ?), (SELECT COUNT(*) FROM permits WHERE id = ? AND "
	    "tenant_id = ?)"},
	S(STMT_ADMIN_SWEEP_STATUS)
	    "SELECT job, holder, expires_at, last_run_at, last_done, "
	    "UNIX_TIMESTAMP() FROM sweep_leases"},

	/* admin sessions and audit */
	/* A login looks the e-mail up in every tenant, oldest admin first;
	 * the password decides which (if any) it is. */
	S(STMT_ADMIN_LOGIN_CANDIDATES)
	    "SELECT a.id, a.email, a.role, a.created_at, a.disabled_at, "
	    "a.password_hash, a.tenant_id, t.name FROM admins a "
	    "JOIN tenants t ON t.id = a.tenant_id WHERE a.email = ? "
	    "ORDER BY a.id LIMIT ?"},
	S(STMT_ADMIN_SET_PASSWORD)
	    "UPDATE admins SET password_hash = ? "
	    "WHERE id = ? AND tenant_id = ?"},
	S(STMT_ADMIN_DISABLE)
	    "UPDATE admins SET disabled_at = "
	    "COALESCE(disabled_at, UNIX_TIMESTAMP()) "
	    "WHERE id = ? AND tenant_id = ?"},
	S(STMT_ADMIN_SET_TIME_ZONE)
	    "UPDATE admins SET time_zone = ? WHERE tenant_id = ? AND email = ?"},
	/* Failed logins share the abuse gate's table under tenant 0 (no
	 * tenant has it): kind 3 the client address, kind 4 the e-mail;
	 * the counts in the window and when the oldest of each leaves it. */
	S(STMT_LOGIN_THROTTLE)
	    "SELECT "
	    "(SELECT COUNT(*) FROM abuse_failures WHERE tenant_id = 0 "
	    "AND kind = 3 AND subject = ? AND at > UNIX_TIMESTAMP() - ?), "
	    "(SELECT COUNT(*) FROM abuse_failures WHERE tenant_id = 0 "
	    "AND kind = 4 AND subject = ? AND at > UNIX_TIMESTAMP() - ?), "
	    "(SELECT MIN(at) FROM abuse_failures WHERE tenant_id = 0 "
	    "AND kind = 3 AND subject = ? AND at > UNIX_TIMESTAMP() - ?) "
	    "+ ? - UNIX_TIMESTAMP(), "
	    "(SELECT MIN(at) FROM abuse_failures WHERE tenant_id = 0 "
	    "AND kind = 4 AND subject = ? AND at > UNIX_TIMESTAMP() - ?) "
	    "+ ? - UNIX_TIMESTAMP()"},
	S(STMT_SESSION_INSERT)
	    "INSERT INTO admin_sessions (tenant_id, admin_id, token_hash, "
	    "csrf, ip, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, "
	    "UNIX_TIMESTAMP(), UNIX_TIMESTAMP())"},
	/* A live session of an enabled admin: not ended, seen within the
	 * idle limit, younger than the absolute one (both ? seconds). */
	S(STMT_SESSION_LOOKUP)
	    "SELECT s.id, s.tenant_id, s.admin_id, t.name, a.email, a.role, "
	    "s.csrf, s.created_at, s.last_seen_at, s.token_hash, "
	    "UNIX_TIMESTAMP(), a.time_zone FROM admin_sessions s "
	    "JOIN admins a ON a.id = s.admin_id AND a.tenant_id = s.tenant_id "
	    "JOIN tenants t ON t.id = s.tenant_id "
	    "WHERE s.token_hash = ? AND s.ended_at IS NULL "
	    "AND a.disabled_at IS NULL "
	    "AND s.last_seen_at > UNIX_TIMESTAMP() - ? "
	    "AND s.created_at > UNIX_TIMESTAMP() - ?"},
	/* At most once a minute, and never reviving a lapsed session. */
	S(STMT_SESSION_TOUCH)
	    "UPDATE admin_sessions SET last_seen_at = UNIX_TIMESTAMP() "
	    "WHERE id = ? AND ended_at IS NULL "
	    "AND last_seen_at <= UNIX_TIMESTAMP() - 60 "
	    "AND last_seen_at > UNIX_TIMESTAMP() - ?"},
	S(STMT_SESSION_END)
	    "UPDATE admin_sessions SET ended_at = UNIX_TIMESTAMP() "
	    "WHERE token_hash = ? AND ended_at IS NULL"},
	S(STMT_SESSION_END_ADMIN)
	    "UPDATE admin_sessions SET ended_at = UNIX_TIMESTAMP() "
	    "WHERE admin_id = ? AND tenant_id = ? AND ended_at IS NULL"},
	/* The cleanup job's picks (age, limit): ended, idle past the limit,
	 * or past the absolute limit, each more than age seconds ago (the
	 * caller adds the limit to age). */
	S(STMT_SESSION_ENDED_OLD)
	    "SELECT id FROM admin_sessions WHERE ended_at IS NOT NULL "
	    "AND ended_at <= UNIX_TIMESTAMP() - ? ORDER BY id LIMIT ?"},
	S(STMT_SESSION_IDLE_OLD)
	    "SELECT id FROM admin_sessions WHERE ended_at IS NULL "
	    "AND last_seen_at <= UNIX_TIMESTAMP() - ? ORDER BY id LIMIT ?"},
	S(STMT_SESSION_ABSOLUTE_OLD)
	    "SELECT id FROM admin_sessions WHERE ended_at IS NULL "
	    "AND created_at <= UNIX_TIMESTAMP() - ? ORDER BY id LIMIT ?"},
	S(STMT_SESSION_DELETE) "DELETE FROM admin_sessions WHERE id = ?"},
	/* The e-mail is the one given, else the admin's as it is now. */
	S(STMT_AUDIT_INSERT)
	    "INSERT INTO audit_log (tenant_id, admin_id, email, ip, action, "
	    "object, detail, at) VALUES (?, ?, COALESCE(?, (SELECT a.email "
	    "FROM admins a WHERE a.id = ? AND a.tenant_id = ?), ''), ?, ?, "
	    "?, ?, UNIX_TIMESTAMP())"},
	/* Newest first below an id, in [since, until), one e-mail or any
	 * (''); with an action it follows (tenant_id, action, id). */
#define AUDIT_COLUMNS                                                     \
	"id, tenant_id, admin_id, at, email, ip, action, object, detail"
	S(STMT_AUDIT_LIST)
	    "SELECT " AUDIT_COLUMNS " FROM audit_log WHERE tenant_id = ? "
	    "AND id < ? AND at >= ? AND at < ? AND (? = '' OR email = ?) "
	    "ORDER BY id DESC LIMIT ?"},
	S(STMT_AUDIT_LIST_ACTION)
	    "SELECT " AUDIT_COLUMNS " FROM audit_log WHERE tenant_id = ? "
	    "AND action = ? AND id < ? AND at >= ? AND at < ? "
	    "AND (? = '' OR email = ?) ORDER BY id DESC LIMIT ?"},

	/* admin: webhooks and API keys pages (h_admin_hooks.c) */
	S(STMT_WEBHOOK_ROTATE)
	    "UPDATE webhook_endpoints SET secret = ? "
	    "WHERE id = ? AND tenant_id = ?"},
	/* "Last used" to the minute: the caller runs it only when the
	 * verify read saw an older time, and the condition keeps racing
	 * workers to one write a minute. */
	S(STMT_APIKEY_TOUCH)
	    "UPDATE api_keys SET last_used_at = UNIX_TIMESTAMP() WHERE id = ? "
	    "AND (last_used_at IS NULL OR "
	    "last_used_at < UNIX_TIMESTAMP() - 60)"},
	/* One endpoint's numbers, each from an index on (endpoint_id,
	 * state, ...): pending, dead, delivered in the last ? seconds, and
	 * the answer of its newest failed pending and dead deliveries. */
	S(STMT_ADMIN_HOOKS_COUNTS)
	    "SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE "
	    "endpoint_id = w.id AND state = 'pending'), "
	    "(SELECT COUNT(*) FROM webhook_deliveries WHERE "
	    "endpoint_id = w.id AND state = 'dead'), "
	    "(SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = "
	    "w.id AND state = 'delivered' AND delivered_at >= "
	    "UNIX_TIMESTAMP() - ?), "
	    "(SELECT x.last_status FROM webhook_deliveries x WHERE "
	    "x.endpoint_id = w.id AND x.state = 'pending' AND "
	    "x.last_attempt_at IS NOT NULL ORDER BY x.id DESC LIMIT 1), "
	    "(SELECT x.last_error FROM webhook_deliveries x WHERE "
	    "x.endpoint_id = w.id AND x.state = 'pending' AND "
	    "x.last_attempt_at IS NOT NULL ORDER BY x.id DESC LIMIT 1), "
	    "(SELECT x.last_status FROM webhook_deliveries x WHERE "
	    "x.endpoint_id = w.id AND x.state = 'dead' ORDER BY x.id DESC "
	    "LIMIT 1), "
	    "(SELECT x.last_error FROM webhook_deliveries x WHERE "
	    "x.endpoint_id = w.id AND x.state = 'dead' ORDER BY x.id DESC "
	    "LIMIT 1) FROM webhook_endpoints w WHERE w.id = ? AND "
	    "w.tenant_id = ?"},
	/* An endpoint's deliveries newest first below an id: all states on
	 * (endpoint_id, id), one state on (endpoint_id, state) and its id
	 * suffix, read backwards with no sort. MariaDB, left alone, walks
	 * (tenant_id, id) instead and filters the tenant's every delivery
	 * to find a quiet endpoint's, hence its index hints. */
	S(STMT_ADMIN_HOOKS_DELIVERIES)
	    "SELECT " DELIVERY_COLUMNS " FROM webhook_deliveries d "
	    "JOIN events e ON e.id = d.event_id WHERE d.endpoint_id = ? "
	    "AND d.tenant_id = ? AND d.id < ? ORDER BY d.id DESC LIMIT ?",
	    "SELECT " DELIVERY_COLUMNS " FROM webhook_deliveries d "
	    "FORCE INDEX (webhook_deliveries_endpoint_id) "
	    "JOIN events e ON e.id = d.event_id WHERE d.endpoint_id = ? "
	    "AND d.tenant_id = ? AND d.id < ? ORDER BY d.id DESC LIMIT ?"},
	S(STMT_ADMIN_HOOKS_DELIVERIES_STATE)
	    "SELECT " DELIVERY_COLUMNS " FROM webhook_deliveries d "
	    "JOIN events e ON e.id = d.event_id WHERE d.endpoint_id = ? "
	    "AND d.state = ? AND d.tenant_id = ? AND d.id < ? "
	    "ORDER BY d.id DESC LIMIT ?",
	    "SELECT " DELIVERY_COLUMNS " FROM webhook_deliveries d "
	    "FORCE INDEX (webhook_deliveries_endpoint) "
	    "JOIN events e ON e.id = d.event_id WHERE d.endpoint_id = ? "
	    "AND d.state = ? AND d.tenant_id = ? AND d.id < ? "
	    "ORDER BY d.id DESC LIMIT ?"},
	/* A finished delivery due again now; attempts keep counting, so the
	 * claim's fence never sees an attempt number twice. */
	S(STMT_ADMIN_HOOKS_REDELIVER)
	    "UPDATE webhook_deliveries SET state = 'pending', "
	    "next_attempt_at = UNIX_TIMESTAMP(), delivered_at = NULL "
	    "WHERE id = ? AND endpoint_id = ? AND tenant_id = ? "
	    "AND state <> 'pending'"},
	S(STMT_ADMIN_HOOKS_DELIVERY_STATE)
	    "SELECT state FROM webhook_deliveries WHERE id = ? "
	    "AND endpoint_id = ? AND tenant_id = ?"},
	/* One batch of an endpoint's dead deliveries, oldest first. */
	S(STMT_ADMIN_HOOKS_REDELIVER_DEAD)
	    "UPDATE webhook_deliveries SET state = 'pending', "
	    "next_attempt_at = UNIX_TIMESTAMP() WHERE id IN (SELECT id FROM "
	    "webhook_deliveries WHERE endpoint_id = ? AND tenant_id = ? AND "
	    "state = 'dead' ORDER BY id LIMIT ?)",
	    "UPDATE webhook_deliveries SET state = 'pending', "
	    "next_attempt_at = UNIX_TIMESTAMP() WHERE endpoint_id = ? AND "
	    "tenant_id = ? AND state = 'dead' ORDER BY id LIMIT ?"},

	/* admin: jobs (bulk generate), import, export (admin_jobs.c). A
	 * runner holds a job while lease_until is ahead; done grows inside
	 * each batch's transaction, fenced by the holder, so a runner that
	 * lost its lease writes nothing more. */
	S(STMT_ADMIN_JOB_INSERT)
	    "INSERT INTO admin_jobs (tenant_id, kind, campaign_id, total, "
	    "max_uses, expires_at, admin_id, created_at, updated_at) VALUES "
	    "(?, 'generate', ?, ?, ?, ?, ?, UNIX_TIMESTAMP(), "
	    "UNIX_TIMESTAMP())"},
#define ADMIN_JOB_COLUMNS                                                 \
	"j.id, j.kind, k.name, j.total, j.done, j.max_uses, j.expires_at, " \
	"j.state, j.error, j.created_at, j.started_at, j.updated_at, "      \
	"j.finished_at, UNIX_TIMESTAMP()"
	S(STMT_ADMIN_JOB_GET)
	    "SELECT " ADMIN_JOB_COLUMNS " FROM admin_jobs j "
	    "JOIN campaigns k ON k.id = j.campaign_id "
	    "WHERE j.id = ? AND j.tenant_id = ?"},
	/* (holder): a job nobody holds, or ours. */
	S(STMT_ADMIN_JOB_DUE)
	    "SELECT id FROM admin_jobs WHERE state IN ('queued', 'running') "
	    "AND (lease_until <= UNIX_TIMESTAMP() OR lease_holder = ?) "
	    "ORDER BY id LIMIT 1"},
	/* (holder, lease seconds, id, holder): 1 row when the job is ours
	 * now. */
	S(STMT_ADMIN_JOB_CLAIM)
	    "UPDATE admin_jobs SET state = 'running', lease_holder = ?, "
	    "lease_until = UNIX_TIMESTAMP() + ?, "
	    "started_at = COALESCE(started_at, UNIX_TIMESTAMP()), "
	    "updated_at = UNIX_TIMESTAMP() WHERE id = ? "
	    "AND state IN ('queued', 'running') "
	    "AND (lease_until <= UNIX_TIMESTAMP() OR lease_holder = ?)"},
	S(STMT_ADMIN_JOB_LOAD)
	    "SELECT t.name, k.name, j.total, j.done, j.max_uses, "
	    "j.expires_at FROM admin_jobs j "
	    "JOIN tenants t ON t.id = j.tenant_id "
	    "JOIN campaigns k ON k.id = j.campaign_id "
	    "WHERE j.id = ? AND j.lease_holder = ? AND j.state = 'running'"},
	/* (n, lease seconds, id, holder, n) */
	S(STMT_ADMIN_JOB_PROGRESS)
	    "UPDATE admin_jobs SET done = done + ?, "
	    "lease_until = UNIX_TIMESTAMP() + ?, "
	    "updated_at = UNIX_TIMESTAMP() WHERE id = ? AND lease_holder = ? "
	    "AND state = 'running' AND done + ? <= total"},
	/* (state, error, id, holder) */
	S(STMT_ADMIN_JOB_FINISH)
	    "UPDATE admin_jobs SET state = ?, error = ?, lease_holder = '', "
	    "lease_until = 0, updated_at = UNIX_TIMESTAMP(), "
	    "finished_at = UNIX_TIMESTAMP() WHERE id = ? AND lease_holder = ? "
	    "AND state = 'running'"},

	S(STMT_BENCH_RAW_CLAIM)
	    "UPDATE codes SET "
	    "state = CASE WHEN uses + 1 >= max_uses THEN 'exhausted' "
	    "ELSE state END, uses = uses + 1 "
	    "WHERE id = ? AND state = 'active' AND uses < max_uses"},
	S(STMT_BENCH_RAW_INSERT)
	    "INSERT INTO redemptions (tenant_id, code_id, campaign_id, "
	    "account, seq, redeemed_at) VALUES (?, ?, ?, ?, ?, "
	    "UNIX_TIMESTAMP())"},
#ifdef REDEEM_PLANTED_BUG
	/* A lost update on purpose, for tests/faults' negative control:
	 * uses read outside the claim, written back as read + 1 with no
	 * "uses < max_uses" (uses + 1, uses + 1, id). */
	S(STMT_PLANTED_CODE_USES) "SELECT uses FROM codes WHERE id = ?"},
	S(STMT_PLANTED_CODE_WRITE)
	    "UPDATE codes SET state = CASE WHEN ? >= max_uses THEN "
	    "(CASE WHEN max_uses = 1 THEN 'redeemed' ELSE 'exhausted' END) "
	    "ELSE state END, uses = ? WHERE id = ?"},
#endif
};
// clang-format on
