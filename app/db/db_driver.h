/*
 * The thin vtable each driver fills. Only db.c and the drivers include this
 * file. A driver never knows a domain table: it runs SQL it is given.
 */
#ifndef DB_DRIVER_H
#define DB_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct dsn {
	char engine[16];    /* "sqlite" | "mysql" */
	char path[1024];    /* sqlite: file path */
	char user[128];     /* mysql */
	char password[256]; /* mysql */
	char host[256];     /* mysql */
	unsigned port;      /* mysql; 0: default */
	char database[128]; /* mysql */
	char socket[1024];  /* mysql; empty: TCP */
};

struct db_driver {
	const char *name;
	/* 1 when many transactions gain from sharing one (db_batch_begin). */
	int batches;
	/* Opens conn; on failure writes a message into db->errmsg. */
	int (*open)(struct db *, const struct dsn *);
	void (*close)(struct db *);
	int (*begin)(struct db *, enum db_tx);
	int (*commit)(struct db *);
	int (*rollback)(struct db *);
	/* Prepares sql into st->h; stream: rows are fetched one at a time. */
	int (*prepare)(
	    struct db *, struct db_stmt *, const char *sql, int stream);
	void (*finalize)(struct db_stmt *);
	int (*bind_i64)(struct db_stmt *, int, int64_t);
	int (*bind_text)(struct db_stmt *, int, const char *, size_t);
	int (*bind_null)(struct db_stmt *, int);
	/* Returns DB_ROW, DB_OK (done; sets st->changes, st->last_id). */
	int (*step)(struct db_stmt *);
	int64_t (*col_i64)(struct db_stmt *, int);
	const char *(*col_text)(struct db_stmt *, int);
	int (*col_null)(struct db_stmt *, int);
	void (*reset)(struct db_stmt *);
	int (*exec_script)(struct db *, const char *sql);
};

struct db {
	const struct db_driver *drv;
	struct dsn dsn;
	void *conn;    /* the driver's connection */
	void *drvdata; /* anything else the driver keeps */
	struct db_stmt *stmts[STMT__MAX];
	char errmsg[512];
	int in_tx;
	int batch; /* in db_batch_begin: transactions are savepoints */
	int lost;  /* DB_ELOST seen: reconnect before next begin */
	int64_t retries;
	/* REDEEM_DB_RTT_US: a network round trip emulated before each
	 * statement, begin and commit (0: none), as from a host on another
	 * machine than the database's; for benchmarks and fault runs. */
	long rtt_us;
	struct db_block block; /* db_block: the connection's reserved block */
};

struct db_stmt {
	struct db *db;
	enum stmt_id id;
	void *h; /* the driver's statement */
	int64_t changes;
	int64_t last_id;
	int failed;  /* a bind failed: step returns DB_EFAIL */
	int stepped; /* executed since the last reset (rtt_us) */
};

extern const struct db_driver db_driver_sqlite;
extern const struct db_driver db_driver_mysql;

/* Records a status from a driver call; marks the connection lost. */
int db_note(struct db *, int status);

#endif
