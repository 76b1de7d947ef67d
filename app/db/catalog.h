/*
 * The fixed catalog of SQL statements. C code names a statement by its id;
 * where the dialects differ the catalog holds both texts, so no C code
 * branches on the driver. UNIX_TIMESTAMP() is the database clock on both
 * engines, and LAST_INSERT_ID(x) hands x to db_last_id (the SQLite driver
 * defines both as MySQL does).
 */
#ifndef CATALOG_H
#define CATALOG_H

enum stmt_id {
	STMT_NOW,
	/* migrations */
	STMT_MIGRATE_TABLE,
	STMT_MIGRATE_LOCK,
	STMT_MIGRATE_UNLOCK,
	STMT_MIGRATE_APPLIED,
	STMT_MIGRATE_RECORD,
	/* tenants */
	STMT_TENANT_BY_NAME,
	STMT_TENANT_INSERT,
	STMT_TENANT_LIST,
	STMT_TENANT_ADD_UNCHECKED,
	STMT_COUNTER_CREATE,
	/* campaigns */
	STMT_CAMPAIGN_INSERT,
	STMT_CAMPAIGN_BY_NAME,
	STMT_CAMPAIGN_CLOSE,
	STMT_CAMPAIGN_LIST,
	STMT_CAMPAIGN_TAKE_BUDGET,
	STMT_CAMPAIGN_RETURN_BUDGET,
	/* codes */
	STMT_CODE_INSERT,
	STMT_CODE_INSERT_100,
	STMT_CODE_BY_TEXT,
	STMT_CODE_REVOKE,
	STMT_CODE_CLAIM,
	STMT_CODE_RETURN_SEAT,
	STMT_CODES_EXPORT_CAMPAIGN,
	STMT_CODES_EXPORT_ALL,
	STMT_POOL_PICK,
	STMT_CODES_PAGE_CAMPAIGN,
	STMT_CODES_PAGE_ALL,
	/* redemptions */
	STMT_REDEEM_LOOKUP,
	STMT_REDEMPTION_BY_CODE_ACCOUNT,
	STMT_REDEMPTION_BY_CAMPAIGN_ACCOUNT,
	STMT_REDEMPTION_BY_ID,
	STMT_REDEMPTION_INSERT,
	STMT_REVERSE_READ,
	STMT_REDEMPTION_REVERSE,
	STMT_ACCOUNT_ENSURE,
	STMT_ACCOUNT_TAKE,
	STMT_ACCOUNT_RETURN,
	STMT_SEQ_NEXT,
	/* outbox */
	STMT_EVENT_INSERT,
	/* abuse gate */
	STMT_ABUSE_COUNT,
	STMT_ABUSE_PRUNE,
	STMT_ABUSE_INSERT,
	/* API keys, dashboard admins, server secrets */
	STMT_APIKEY_INSERT,
	STMT_APIKEY_VERIFY,
	STMT_APIKEY_BY_ID,
	STMT_APIKEY_LIST,
	STMT_APIKEY_REVOKE,
	STMT_ADMIN_INSERT,
	STMT_ADMIN_BY_EMAIL,
	STMT_ADMIN_BY_ID,
	STMT_ADMIN_COUNT,
	STMT_SECRET_CREATE,
	STMT_SECRET_GET,
	/* holds and permits */
	/* webhooks */
	/* verify */
	STMT_VERIFY_G1,
	STMT_VERIFY_G2,
	STMT_VERIFY_G3,
	STMT_VERIFY_G4,
	STMT_VERIFY_G4_ACCOUNTS,
	STMT_VERIFY_G7,
	STMT_VERIFY_G8,
	/* the raw transaction the benchmark compares against */
	STMT_BENCH_RAW_CLAIM,
	STMT_BENCH_RAW_INSERT,
	STMT__MAX
};

struct stmt_def {
	const char *name;
	const char *sql;   /* both engines, or SQLite where mysql is set */
	const char *mysql; /* NULL: same as sql */
	int stream;        /* rows fetched one by one (big exports) */
};

extern const struct stmt_def stmt_catalog[STMT__MAX];

#endif
