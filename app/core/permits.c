/*
 * Semaphores and permits. Lock order: a permit's row first when one exists
 * (heartbeat, release, sweep), then semaphore rows in name order, then
 * inserts. The sweeper flips every permit of its batch first, then gives
 * the room back semaphore by semaphore in name order.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "permits.h"

/* Columns of PERMIT_COLUMNS in the catalog. */
enum {
	PC_ID,
	PC_EXTERNAL_ID,
	PC_OWNER,
	PC_STATE,
	PC_TOKEN,
	PC_EXPIRES,
	PC_CREATED,
	PC_ENDED,
	PC_TENANT,
	PC_NOW,
	PC__MAX
};

/* A permit as stored, with its semaphores' ids. */
struct permit_row {
	struct permit p;          /* as answered */
	enum permit_state stored; /* the state column */
	int64_t sem_ids[PERMIT_ITEMS_MAX];
	int64_t tenant_id;
	int64_t now;
};

static const char *const state_names[PERMIT__MAX] = {
    [PERMIT_ACQUIRED] = "acquired",
    [PERMIT_RELEASED] = "released",
    [PERMIT_EXPIRED] = "expired",
};

const char *
permit_state_name(enum permit_state st)
{
	return (unsigned)st < PERMIT__MAX ? state_names[st] : "";
}

static enum permit_state
state_parse(const char *t)
{
	int i = str_index(t, state_names, PERMIT__MAX);

	return i < 0 ? PERMIT_EXPIRED : (enum permit_state)i;
}

int
semaphore_name_ok(const char *s)
{
	return s != NULL && tenant_name_ok(s); /* the same alphabet */
}

int
permit_external_id_ok(const char *s)
{
	return str_token_ok(s, PERMIT_ID_MAX);
}

static int
text_ok(const char *s, size_t max)
{
	size_t n;

	return s != NULL && (n = strlen(s)) > 0 && n <= max &&
	       str_utf8_ok(s, n);
}

static void
text(struct db_stmt *st, int col, char *dst, size_t n)
{
	const char *t = db_col_text(st, col);

	str_copy(dst, t ? t : "", n);
}

static int
unavailable(enum error_word *e)
{
	*e = ERROR_UNAVAILABLE;
	return -1;
}

/* --- semaphores -------------------------------------------------------- */

enum error_word
semaphore_get(struct svc *s, const char *name, struct semaphore *out)
{
	struct db_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!semaphore_name_ok(name))
		return ERROR_NOT_FOUND;
	rc = db_query(s->db, STMT_SEMAPHORE_GET, &st, "it", s->tenant_id, name);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return ERROR_UNAVAILABLE;
	out->id = db_col_i64(st, 0);
	text(st, 1, out->name, sizeof(out->name));
	out->capacity = db_col_i64(st, 2);
	out->in_use = db_col_i64(st, 3);
	out->fence = db_col_i64(st, 4);
	out->created_at = db_col_i64(st, 5);
	out->updated_at = db_col_i64(st, 6);
	out->leaked = db_col_i64(st, 7);
	db_reset(st);
	return ERROR_NONE;
}

struct put {
	struct svc *s;
	const char *name, *who;
	int64_t capacity;
	int created;
	int twin; /* a concurrent creator won: again */
};

static int
put_tx(struct db *db, void *arg)
{
	struct put *p = arg;
	struct db_stmt *st;
	int64_t id, old;
	int rc;

	p->created = p->twin = 0;
	rc = db_query(
	    db, STMT_SEMAPHORE_LOCK, &st, "it", p->s->tenant_id, p->name);
	if (rc == DB_ROW) {
		id = db_col_i64(st, 0);
		old = db_col_i64(st, 1);
		db_reset(st);
		if (old == p->capacity)
			return DB_ROLLBACK; /* no change, nothing recorded */
		rc = db_exec(db, STMT_SEMAPHORE_SET_CAPACITY, NULL, "ii",
		    p->capacity, id);
		if (rc != DB_OK)
			return rc;
		return db_exec(db, STMT_SEMAPHORE_HISTORY_INSERT, NULL, "itni",
		    id, p->who, &old, p->capacity);
	}
	if (rc != DB_OK)
		return rc;
	if ((st = db_prepare(db, STMT_SEMAPHORE_INSERT)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, p->s->tenant_id);
	db_bind_text(st, 2, p->name);
	db_bind_i64(st, 3, p->capacity);
	rc = db_step(st);
	id = db_last_id(st);
	db_reset(st);
	if (rc == DB_EUNIQUE) {
		p->twin = 1;
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	p->created = 1;
	return db_exec(db, STMT_SEMAPHORE_HISTORY_INSERT, NULL, "itni", id,
	    p->who, NULL, p->capacity);
}

enum error_word
semaphore_put(struct svc *s, const char *name, int64_t capacity,
    const char *who, struct semaphore *out, int *created)
{
	struct put p;
	int rc, tries;

	memset(out, 0, sizeof(*out));
	if (created != NULL)
		*created = 0;
	if (!semaphore_name_ok(name) || capacity < 0 ||
	    capacity > SEMAPHORE_CAPACITY_MAX ||
	    !text_ok(who, SEMAPHORE_WHO_MAX))
		return ERROR_BAD_REQUEST;
	memset(&p, 0, sizeof(p));
	p.s = s;
	p.name = name;
	p.who = who;
	p.capacity = capacity;
	for (tries = 0;; tries++) {
		rc = db_transact(s->db, DB_TX_WRITE, put_tx, &p);
		if (rc < 0)
			return ERROR_UNAVAILABLE;
		if (!p.twin)
			break;
		if (tries == 3)
			return ERROR_UNAVAILABLE;
	}
	if (created != NULL)
		*created = p.created;
	return semaphore_get(s, name, out);
}

enum error_word
semaphore_history(struct svc *s, const char *name,
    void (*fn)(void *, const char *, int64_t, int64_t, int64_t), void *arg)
{
	struct db_stmt *st;
	const char *who;
	int rc, any = 0;

	if (!semaphore_name_ok(name))
		return ERROR_NOT_FOUND;
	rc = db_query(
	    s->db, STMT_SEMAPHORE_HISTORY_LIST, &st, "it", s->tenant_id, name);
	while (rc == DB_ROW) {
		any = 1;
		who = db_col_text(st, 0);
		fn(arg, who ? who : "", db_col_i64(st, 1),
		    db_col_null(st, 2) ? -1 : db_col_i64(st, 2),
		    db_col_i64(st, 3));
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK)
		return ERROR_UNAVAILABLE;
	return any ? ERROR_NONE : ERROR_NOT_FOUND;
}

json_t *
semaphore_json(const struct semaphore *m)
{
	return json_pack("{s:s,s:I,s:I,s:I}", "name", m->name, "capacity",
	    (json_int_t)m->capacity, "in_use", (json_int_t)m->in_use, "leaked",
	    (json_int_t)m->leaked);
}

/* --- permits: reading -------------------------------------------------- */

static int
read_items(struct db *db, struct permit_row *w)
{
	struct db_stmt *st;
	int rc;

	w->p.nitems = 0;
	rc = db_query(db, STMT_PERMIT_ITEMS, &st, "i", w->p.id);
	while (rc == DB_ROW) {
		if (w->p.nitems < PERMIT_ITEMS_MAX) {
			struct permit_item *it = &w->p.items[w->p.nitems];

			text(st, 0, it->name, sizeof(it->name));
			it->count = db_col_i64(st, 1);
			it->fencing_token = db_col_i64(st, 2);
			w->sem_ids[w->p.nitems++] = db_col_i64(st, 3);
		}
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc;
}

/* DB_ROW with *w filled, DB_OK when there is no such permit, or an error.
 * key: the external_id (tenant's) or, when NULL, id. */
static int
read_permit(struct svc *s, struct db *db, const char *xid, int64_t id,
    struct permit_row *w)
{
	struct db_stmt *st;
	int rc;

	memset(w, 0, sizeof(*w));
	if (xid != NULL)
		rc =
		    db_query(db, STMT_PERMIT_GET, &st, "it", s->tenant_id, xid);
	else
		rc = db_query(db, STMT_PERMIT_BY_ID, &st, "i", id);
	if (rc != DB_ROW)
		return rc;
	w->p.id = db_col_i64(st, PC_ID);
	text(st, PC_EXTERNAL_ID, w->p.external_id, sizeof(w->p.external_id));
	text(st, PC_OWNER, w->p.owner, sizeof(w->p.owner));
	w->stored = state_parse(db_col_text(st, PC_STATE));
	w->p.fencing_token = db_col_i64(st, PC_TOKEN);
	w->p.expires_at = db_col_i64(st, PC_EXPIRES);
	w->p.created_at = db_col_i64(st, PC_CREATED);
	w->p.ended_at =
	    db_col_null(st, PC_ENDED) ? 0 : db_col_i64(st, PC_ENDED);
	w->tenant_id = db_col_i64(st, PC_TENANT);
	w->now = db_col_i64(st, PC_NOW);
	db_reset(st);
	w->p.state = w->stored;
	if (w->stored == PERMIT_ACQUIRED && w->p.expires_at <= w->now)
		w->p.state = PERMIT_EXPIRED; /* lost, not swept yet */
	rc = read_items(db, w);
	return rc == DB_OK ? DB_ROW : rc;
}

json_t *
permit_json(const struct permit *p)
{
	char exp[32], at[32];
	json_t *o, *a;
	int i;

	str_rfc3339(p->expires_at, exp);
	str_rfc3339(p->created_at, at);
	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < p->nitems; i++)
		json_array_append_new(a,
		    json_pack("{s:s,s:I,s:I}", "name", p->items[i].name,
			"count", (json_int_t)p->items[i].count, "fencing_token",
			(json_int_t)p->items[i].fencing_token));
	o = json_pack("{s:s,s:s,s:I,s:s,s:s,s:s,s:o}", "external_id",
	    p->external_id, "state", permit_state_name(p->state),
	    "fencing_token", (json_int_t)p->fencing_token, "expires_at", exp,
	    "owner", p->owner, "created_at", at, "semaphores", a);
	return o;
}

json_t *
permit_result_json(const struct permit_result *res)
{
	json_t *o;

	if (res->error == ERROR_NONE)
		return json_pack(
		    "{s:b,s:o}", "ok", 1, "permit", permit_json(&res->p));
	o = json_pack("{s:b,s:s,s:s}", "ok", 0, "error", error_name(res->error),
	    "detail", error_sentence(res->error));
	if (o != NULL && res->semaphore[0] != '\0')
		json_object_set_new(
		    o, "semaphore", json_string(res->semaphore));
	return o;
}

int
permit_get(struct svc *s, const char *xid, struct permit_result *res)
{
	struct permit_row w;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!permit_external_id_ok(xid)) {
		res->error = ERROR_NOT_FOUND;
		return 0;
	}
	rc = read_permit(s, s->db, xid, 0, &w);
	if (rc == DB_OK)
		res->error = ERROR_NOT_FOUND;
	else if (rc != DB_ROW)
		return unavailable(&res->error);
	else
		res->p = w.p;
	return 0;
}

/* --- giving room back -------------------------------------------------- */

struct give {
	const char *name;
	int64_t sem_id, count;
};

static int
by_name(const void *a, const void *b)
{
	const struct give *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : (x->sem_id > y->sem_id) - (x->sem_id < y->sem_id);
}

/* The room of permits that have just left "acquired", in name order. */
static int
give_back(struct db *db, struct give *g, size_t n)
{
	int64_t changed;
	size_t i;
	int rc;

	qsort(g, n, sizeof(*g), by_name);
	for (i = 0; i < n; i++) {
		rc = db_exec(db, STMT_SEMAPHORE_GIVE, &changed, "iii",
		    g[i].count, g[i].sem_id, g[i].count);
		if (rc != DB_OK)
			return rc;
		/* in_use below what a live permit holds: G5 is broken
		 * already; verify names it, the release goes on. */
		if (changed == 0)
			log_err("semaphore %lld: in_use below a permit's "
				"count %lld",
			    (long long)g[i].sem_id, (long long)g[i].count);
	}
	return DB_OK;
}

static int
give_row(struct db *db, const struct permit_row *w)
{
	struct give g[PERMIT_ITEMS_MAX];
	int i;

	for (i = 0; i < w->p.nitems; i++) {
		g[i].name = w->p.items[i].name;
		g[i].sem_id = w->sem_ids[i];
		g[i].count = w->p.items[i].count;
	}
	return give_back(db, g, (size_t)w->p.nitems);
}

/* Inside a transaction: w (acquired, past its TTL) -> expired, its room
 * back; w re-read. */
static int
expire_one(struct svc *s, struct permit_row *w)
{
	int64_t n;
	int rc;

	if ((rc = db_exec(s->db, STMT_PERMIT_EXPIRE, &n, "i", w->p.id)) !=
	    DB_OK)
		return rc;
	if (n == 1 && (rc = give_row(s->db, w)) != DB_OK)
		return rc;
	rc = read_permit(s, s->db, NULL, w->p.id, w);
	return rc == DB_ROW ? DB_OK : rc == DB_OK ? DB_EFAIL : rc;
}

/* --- acquire ----------------------------------------------------------- */

static int
by_item_name(const void *a, const void *b)
{
	return strcmp(((const struct permit_item *)a)->name,
	    ((const struct permit_item *)b)->name);
}

/* The request's items, checked and sorted by name into out. */
static int
items_ok(const struct permit_item *items, int n, struct permit_item *out)
{
	int i;

	if (items == NULL || n < 1 || n > PERMIT_ITEMS_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		if (!semaphore_name_ok(items[i].name) || items[i].count < 1 ||
		    items[i].count > SEMAPHORE_CAPACITY_MAX)
			return 0;
		memset(&out[i], 0, sizeof(out[i]));
		str_copy(out[i].name, items[i].name, sizeof(out[i].name));
		out[i].count = items[i].count;
	}
	qsort(out, (size_t)n, sizeof(*out), by_item_name);
	for (i = 1; i < n; i++)
		if (strcmp(out[i - 1].name, out[i].name) == 0)
			return 0; /* named twice */
	return 1;
}

/* The same request again: same owner, same items. */
static int
same_request(const struct permit *p, const char *owner,
    const struct permit_item *items, int n)
{
	int i;

	if (strcmp(p->owner, owner) != 0 || p->nitems != n)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(p->items[i].name, items[i].name) != 0 ||
		    p->items[i].count != items[i].count)
			return 0;
	return 1;
}

/* 1 when res is the answer (the permit, or a conflict), 0 when there is
 * no such permit, -1 when the database failed. */
static int
replay(struct svc *s, const char *xid, const char *owner,
    const struct permit_item *items, int n, struct permit_result *res)
{
	struct permit_row w;
	int rc = read_permit(s, s->db, xid, 0, &w);

	if (rc == DB_OK)
		return 0;
	if (rc != DB_ROW)
		return unavailable(&res->error);
	if (!same_request(&w.p, owner, items, n))
		res->error = ERROR_CONFLICT;
	else
		res->p = w.p;
	return 1;
}

struct acquire {
	struct svc *s;
	const char *xid, *owner;
	int64_t ttl;
	struct permit_item *items; /* sorted */
	int n;
	int twin;
	struct permit_result *res;
	struct permit_row w;
};

static int
acquire_tx(struct db *db, void *arg)
{
	struct acquire *a = arg;
	struct permit_result *res = a->res;
	int64_t ids[PERMIT_ITEMS_MAX], in_use[PERMIT_ITEMS_MAX];
	int64_t cap[PERMIT_ITEMS_MAX], n;
	struct permit *p = &a->w.p;
	struct db_stmt *st;
	int i, rc;

	res->error = ERROR_NONE;
	res->semaphore[0] = '\0';
	a->twin = 0;
	memset(p, 0, sizeof(*p));
	for (i = 0; i < a->n; i++) {
		struct permit_item *it = &a->items[i];

		rc = db_exec(db, STMT_SEMAPHORE_TAKE, &n, "iiti", it->count,
		    a->s->tenant_id, it->name, it->count);
		if (rc != DB_OK)
			return rc;
		rc = db_query(db, STMT_SEMAPHORE_READ, &st, "it",
		    a->s->tenant_id, it->name);
		if (rc == DB_OK || n == 0) {
			if (rc == DB_ROW)
				db_reset(st);
			else if (rc != DB_OK)
				return rc;
			res->error =
			    rc == DB_OK ? ERROR_NOT_FOUND : ERROR_EXHAUSTED;
			str_copy(
			    res->semaphore, it->name, sizeof(res->semaphore));
			return DB_ROLLBACK;
		}
		if (rc != DB_ROW)
			return rc;
		ids[i] = db_col_i64(st, 0);
		it->fencing_token = db_col_i64(st, 1);
		in_use[i] = db_col_i64(st, 2);
		cap[i] = db_col_i64(st, 3);
		db_reset(st);
	}
	rc = db_query(db, STMT_PERMIT_INSERT, &st, "ittii", a->s->tenant_id,
	    a->xid, a->owner, a->items[0].fencing_token, a->ttl);
	if (rc == DB_EUNIQUE) {
		a->twin = 1;
		return DB_ROLLBACK;
	}
	if (rc != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	p->id = db_col_i64(st, 0);
	p->expires_at = db_col_i64(st, 1);
	p->created_at = db_col_i64(st, 2);
	db_reset(st);
	for (i = 0; i < a->n; i++) {
		rc = db_exec(db, STMT_PERMIT_ITEM_INSERT, NULL, "iiiiii", p->id,
		    ids[i], a->items[i].count, a->items[i].fencing_token,
		    in_use[i], cap[i]);
		if (rc != DB_OK)
			return rc;
	}
	/* The answer is what was written: no reading back under the
	 * semaphores' locks. */
	str_copy(p->external_id, a->xid, sizeof(p->external_id));
	str_copy(p->owner, a->owner, sizeof(p->owner));
	p->state = PERMIT_ACQUIRED;
	p->fencing_token = a->items[0].fencing_token;
	p->nitems = a->n;
	for (i = 0; i < a->n; i++)
		p->items[i] = a->items[i];
	return DB_OK;
}

int
permit_acquire(struct svc *s, const char *xid, const char *owner, int64_t ttl,
    const struct permit_item *items, int n, struct permit_result *res)
{
	struct permit_item sorted[PERMIT_ITEMS_MAX];
	struct acquire a;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!permit_external_id_ok(xid) || !text_ok(owner, PERMIT_OWNER_MAX) ||
	    ttl < 1 || ttl > PERMIT_TTL_MAX || !items_ok(items, n, sorted)) {
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	memset(&a, 0, sizeof(a));
	a.s = s;
	a.xid = xid;
	a.owner = owner;
	a.ttl = ttl;
	a.items = sorted;
	a.n = n;
	a.res = res;
	rc = db_transact(s->db, DB_TX_WRITE, acquire_tx, &a);
	if (rc < 0)
		return unavailable(&res->error);
	if (a.twin) { /* the same external_id committed first */
		if ((rc = replay(s, xid, owner, sorted, n, res)) != 0)
			return rc < 0 ? -1 : 0;
		return unavailable(&res->error);
	}
	if (rc == DB_ROLLBACK) {
		/* Refused; unless it is a retry of a permit that has the room
		 * itself (a retry is looked for only now: one statement less
		 * for every new permit). */
		enum error_word e = res->error;
		char sem[SEMAPHORE_NAME_MAX + 1];

		str_copy(sem, res->semaphore, sizeof(sem));
		res->error = ERROR_NONE;
		res->semaphore[0] = '\0';
		if ((rc = replay(s, xid, owner, sorted, n, res)) != 0)
			return rc < 0 ? -1 : 0;
		res->error = e;
		str_copy(res->semaphore, sem, sizeof(res->semaphore));
		return 0; /* res says which semaphore refused */
	}
	res->created = 1;
	res->p = a.w.p;
	return 0;
}

/* --- heartbeat and release --------------------------------------------- */

struct change {
	struct svc *s;
	const char *xid;
	int64_t ttl; /* heartbeat; 0: release */
	struct permit_result *res;
	struct permit_row w;
};

static int
change_tx(struct db *db, void *arg)
{
	struct change *c = arg;
	int64_t n;
	int rc;

	c->res->error = ERROR_NONE;
	if (c->ttl > 0)
		rc = db_exec(db, STMT_PERMIT_HEARTBEAT, &n, "iit", c->ttl,
		    c->s->tenant_id, c->xid);
	else
		rc = db_exec(
		    db, STMT_PERMIT_RELEASE, &n, "it", c->s->tenant_id, c->xid);
	if (rc != DB_OK)
		return rc;
	if ((rc = read_permit(c->s, db, c->xid, 0, &c->w)) == DB_OK) {
		c->res->error = ERROR_NOT_FOUND;
		return DB_ROLLBACK;
	}
	if (rc != DB_ROW)
		return rc;
	if (n == 1) /* a heartbeat is done; a release gives the room back */
		return c->ttl > 0 ? DB_OK : give_row(db, &c->w);
	/* Lost or ended before: a heartbeat is too late either way. */
	if (c->ttl > 0)
		c->res->error = ERROR_EXPIRED;
	if (c->w.stored == PERMIT_ACQUIRED) /* past its TTL, not swept */
		return expire_one(c->s, &c->w);
	return DB_ROLLBACK;
}

static int
change(struct svc *s, const char *xid, int64_t ttl, struct permit_result *res)
{
	struct change c;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!permit_external_id_ok(xid)) {
		res->error = ERROR_NOT_FOUND;
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.xid = xid;
	c.ttl = ttl;
	c.res = res;
	rc = db_transact(s->db, DB_TX_WRITE, change_tx, &c);
	if (rc < 0)
		return unavailable(&res->error);
	if (res->error == ERROR_NONE)
		res->p = c.w.p;
	return 0;
}

int
permit_heartbeat(
    struct svc *s, const char *xid, int64_t ttl, struct permit_result *res)
{
	if (ttl < 1 || ttl > PERMIT_TTL_MAX) {
		memset(res, 0, sizeof(*res));
		res->error = ERROR_BAD_REQUEST;
		return 0;
	}
	return change(s, xid, ttl, res);
}

int
permit_release(struct svc *s, const char *xid, struct permit_result *res)
{
	return change(s, xid, 0, res);
}

/* --- the sweeper ------------------------------------------------------- */

struct sweep {
	int batch;
	int64_t max_age;   /* > 0: the staleness job */
	int64_t tenant_id; /* 0: every tenant */
	int64_t id;        /* > 0: this permit only (with tenant_id) */
	permit_ended_fn *fn;
	void *arg;
	int64_t *ids;
	struct permit_row *rows;
	struct give *g;
	int64_t done;
};

static int
sweep_tx(struct db *db, void *arg)
{
	struct sweep *w = arg;
	struct svc none;
	struct db_stmt *st;
	int64_t n, nids = 0, i;
	size_t ng = 0;
	int j, rc;

	w->done = 0;
	memset(&none, 0, sizeof(none));
	none.db = db;
	if (w->id > 0 && w->max_age > 0)
		rc = db_query(db, STMT_PERMIT_STALE_ONE, &st, "iii", w->id,
		    w->tenant_id, w->max_age);
	else if (w->id > 0)
		rc = db_query(
		    db, STMT_PERMIT_DUE_ONE, &st, "ii", w->id, w->tenant_id);
	else if (w->tenant_id > 0 && w->max_age > 0)
		rc = db_query(db, STMT_PERMIT_STALE_TENANT, &st, "iii",
		    w->tenant_id, w->max_age, (int64_t)w->batch);
	else if (w->tenant_id > 0)
		rc = db_query(db, STMT_PERMIT_DUE_TENANT, &st, "ii",
		    w->tenant_id, (int64_t)w->batch);
	else if (w->max_age > 0)
		rc = db_query(db, STMT_PERMIT_STALE, &st, "ii", w->max_age,
		    (int64_t)w->batch);
	else
		rc = db_query(db, STMT_PERMIT_DUE, &st, "i", (int64_t)w->batch);
	while (rc == DB_ROW) {
		if (nids < w->batch)
			w->ids[nids++] = db_col_i64(st, 0);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK)
		return rc;
	for (i = 0; i < nids; i++) {
		if (w->max_age > 0)
			rc = db_exec(db, STMT_PERMIT_RELEASE_STALE, &n, "ii",
			    w->ids[i], w->max_age);
		else
			rc =
			    db_exec(db, STMT_PERMIT_EXPIRE, &n, "i", w->ids[i]);
		if (rc != DB_OK)
			return rc;
		if (n == 0) /* released or expired meanwhile */
			continue;
		rc = read_permit(&none, db, NULL, w->ids[i], &w->rows[w->done]);
		if (rc != DB_ROW)
			return rc == DB_OK ? DB_EFAIL : rc;
		for (j = 0; j < w->rows[w->done].p.nitems; j++) {
			w->g[ng].name = w->rows[w->done].p.items[j].name;
			w->g[ng].sem_id = w->rows[w->done].sem_ids[j];
			w->g[ng].count = w->rows[w->done].p.items[j].count;
			ng++;
		}
		w->done++;
	}
	if ((rc = give_back(db, w->g, ng)) != DB_OK)
		return rc;
	for (i = 0; w->fn != NULL && i < w->done; i++)
		if ((rc = w->fn(db, w->arg, w->rows[i].p.id,
			 w->rows[i].p.external_id)) != DB_OK)
			return rc;
	return DB_OK;
}

static int
sweep(struct db *db, int64_t tenant_id, int64_t id, int64_t max_age, int batch,
    permit_ended_fn *fn, void *arg, int64_t *done)
{
	struct sweep w;
	int rc;

	*done = 0;
	if (batch < 1 || batch > PERMIT_EXPIRE_MAX || tenant_id < 0 ||
	    (id > 0 && tenant_id == 0))
		return -1;
	memset(&w, 0, sizeof(w));
	w.batch = batch;
	w.max_age = max_age;
	w.tenant_id = tenant_id;
	w.id = id;
	w.fn = fn;
	w.arg = arg;
	w.ids = calloc((size_t)batch, sizeof(*w.ids));
	w.rows = calloc((size_t)batch, sizeof(*w.rows));
	w.g = calloc((size_t)batch * PERMIT_ITEMS_MAX, sizeof(*w.g));
	if (w.ids == NULL || w.rows == NULL || w.g == NULL) {
		log_err("permit sweep: out of memory");
		rc = DB_EFAIL;
	} else
		rc = db_transact(db, DB_TX_WRITE, sweep_tx, &w);
	if (rc == DB_OK)
		*done = w.done;
	free(w.ids);
	free(w.rows);
	free(w.g);
	return rc == DB_OK ? 0 : -1;
}

int
permit_expire_due(struct db *db, int batch, int64_t *done)
{
	return sweep(db, 0, 0, 0, batch, NULL, NULL, done);
}

int
permit_release_stale(struct db *db, int64_t max_age, int batch, int64_t *done)
{
	if (max_age < 1) {
		*done = 0;
		return -1;
	}
	return sweep(db, 0, 0, max_age, batch, NULL, NULL, done);
}

int
permit_sweep_tenant(struct db *db, int64_t tenant_id, int64_t id,
    int64_t max_age, int batch, permit_ended_fn *fn, void *arg, int64_t *done)
{
	if (max_age < 0 || tenant_id < 1) {
		*done = 0;
		return -1;
	}
	return sweep(db, tenant_id, id, max_age, batch, fn, arg, done);
}

int
permit_cleanup(struct db *db, int64_t age, int batch, int64_t *done)
{
	static const enum stmt_id del[] = {
	    STMT_PERMIT_ITEMS_DELETE, STMT_PERMIT_DELETE};

	*done = 0;
	if (age < 0 || batch < 1 || batch > PERMIT_EXPIRE_MAX)
		return -1;
	if (db_purge(db, STMT_PERMIT_ENDED_OLD, age, batch, del, NELEM(del),
		done) != DB_OK)
		return -1;
	return 0;
}
