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
#define CODE_COLUMNS                                                      \
	"c.id, c.display, k.name, c.state, c.uses, c.max_uses, "          \
	"c.expires_at, c.created_at"
#define APIKEY_COLUMNS                                                    \
	"a.id, a.lookup, a.scope, a.label, a.created_at, a.revoked_at"
#define ADMIN_COLUMNS "id, email, role, created_at"
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
	S(STMT_MIGRATE_LOCK) "SELECT 1",
	    "SELECT GET_LOCK('redeem_migrate', 25)"},
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
	    "(SELECT COALESCE(SUM(c.uses), 0) FROM codes c "
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
	/* Exports follow an index, (campaign_id, state, id) or (tenant_id,
	 * code): rows stream out without a sort, in constant memory. */
	S(STMT_CODES_EXPORT_CAMPAIGN)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND c.campaign_id = ? AND (? = 0 "
	    "OR (? = 1 AND c.uses > 0) OR (? = 2 AND c.uses = 0)) "
	    "ORDER BY c.state, c.id", NULL, 1},
	S(STMT_CODES_EXPORT_ALL)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND (? = 0 "
	    "OR (? = 1 AND c.uses > 0) OR (? = 2 AND c.uses = 0)) "
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
	    "AND (? = 0 OR (? = 1 AND c.uses > 0) OR (? = 2 AND c.uses = 0)) "
	    "ORDER BY c.id LIMIT ?"},
	S(STMT_CODES_PAGE_ALL)
	    "SELECT " CODE_COLUMNS " FROM codes c "
	    "JOIN campaigns k ON k.id = c.campaign_id "
	    "WHERE c.tenant_id = ? AND c.id > ? AND (? = 0 "
	    "OR (? = 1 AND c.uses > 0) OR (? = 2 AND c.uses = 0)) "
	    "ORDER BY c.id LIMIT ?"},

	/* Steps 1 to 4 in one read, always one row: the abuse gate's counts
	 * for the client key and the account (decided first: nothing else
	 * of the row is used when they are over the limit), then the code,
	 * its campaign, the account's redemption of it, the account's
	 * per-campaign count and the clock. */
	S(STMT_REDEEM_LOOKUP)
	    "SELECT g.nc, g.na, c.id, c.display, c.state, c.uses, c.max_uses, "
	    "c.expires_at, " CAMPAIGN_COLUMNS ", " REDEMPTION_COLUMNS ", "
	    "a.n, UNIX_TIMESTAMP() FROM (SELECT "
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
	    "t.unchecked_codes, a.hash FROM api_keys a "
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

	/* webhooks */

	S(STMT_VERIFY_G1)
	    "SELECT id, uses, max_uses FROM codes "
	    "WHERE uses < 0 OR uses > max_uses ORDER BY id"},
	S(STMT_VERIFY_G2)
	    "SELECT c.id, c.uses, COALESCE(r.n, 0) FROM codes c LEFT JOIN "
	    "(SELECT code_id, COUNT(*) AS n FROM redemptions WHERE "
	    HOLDS_SEAT " GROUP BY code_id) r ON r.code_id = c.id "
	    "WHERE c.uses <> COALESCE(r.n, 0) ORDER BY c.id"},
	S(STMT_VERIFY_G3)
	    "SELECT code_id, account, COUNT(*) FROM redemptions "
	    "GROUP BY code_id, account HAVING COUNT(*) > 1"},
	S(STMT_VERIFY_G4)
	    "SELECT k.id, k.redeemed, k.budget FROM campaigns k LEFT JOIN "
	    "(SELECT campaign_id, COUNT(*) AS n FROM redemptions WHERE "
	    HOLDS_SEAT " GROUP BY campaign_id) r ON r.campaign_id = k.id "
	    "WHERE k.budget IS NOT NULL AND (k.redeemed <> COALESCE(r.n, 0) "
	    "OR k.redeemed > k.budget) ORDER BY k.id"},
	/* A correlated count, not a join against a grouped derived table:
	 * MariaDB cannot key a derived table on (campaign_id, account)
	 * (1026 bytes) and falls back to a block nested loop, O(accounts x
	 * redemptions); this one uses redemptions_campaign_account. */
	S(STMT_VERIFY_G4_ACCOUNTS)
	    "SELECT a.campaign_id, a.account, a.n FROM campaign_accounts a "
	    "WHERE a.n <> (SELECT COUNT(*) FROM redemptions r "
	    "WHERE r.campaign_id = a.campaign_id AND r.account = a.account "
	    "AND (r.reversal_policy IS NULL OR "
	    "r.reversal_policy <> 'return_seat')) "
	    "UNION ALL "
	    "SELECT r.campaign_id, r.account, COUNT(*) FROM redemptions r "
	    "JOIN campaigns k ON k.id = r.campaign_id WHERE "
	    "(r.reversal_policy IS NULL OR r.reversal_policy <> "
	    "'return_seat') AND (k.kind = 'pool' OR k.per_account_limit IS "
	    "NOT NULL) GROUP BY r.campaign_id, r.account, k.kind, "
	    "k.per_account_limit HAVING COUNT(*) > (CASE WHEN k.kind = 'pool' "
	    "THEN 1 ELSE k.per_account_limit END)"},
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
	    "SELECT id, state, uses FROM codes WHERE state NOT IN ('revoked', "
	    "'expired') AND ((CASE WHEN state IN ('redeemed', 'exhausted') "
	    "THEN 1 ELSE 0 END) <> (CASE WHEN uses = max_uses THEN 1 ELSE 0 "
	    "END) OR (state = 'redeemed' AND max_uses <> 1)) ORDER BY id"},

	S(STMT_BENCH_RAW_CLAIM)
	    "UPDATE codes SET "
	    "state = CASE WHEN uses + 1 >= max_uses THEN 'exhausted' "
	    "ELSE state END, uses = uses + 1 "
	    "WHERE id = ? AND state = 'active' AND uses < max_uses"},
	S(STMT_BENCH_RAW_INSERT)
	    "INSERT INTO redemptions (tenant_id, code_id, campaign_id, "
	    "account, seq, redeemed_at) VALUES (?, ?, ?, ?, ?, "
	    "UNIX_TIMESTAMP())"},
};
// clang-format on
