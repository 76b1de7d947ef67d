#include <string.h>

#include <jansson.h>

#include "../lib/common.h"
#include "../lib/str.h"
#include "campaigns.h"

static const char *const kind_names[CAMPAIGN__MAX] = {
    [CAMPAIGN_SHARED] = "shared",
    [CAMPAIGN_POOL] = "pool",
};

const char *
campaign_kind_name(enum campaign_kind k)
{
	return (unsigned)k < CAMPAIGN__MAX ? kind_names[k] : "?";
}

int
campaign_kind_parse(const char *s, enum campaign_kind *out)
{
	int i = str_index(s, kind_names, CAMPAIGN__MAX);

	if (i < 0)
		return -1;
	*out = (enum campaign_kind)i;
	return 0;
}

int
campaign_name_ok(const char *s)
{
	return tenant_name_ok(s);
}

static int64_t
col_opt(struct db_stmt *st, int col)
{
	return db_col_null(st, col) ? 0 : db_col_i64(st, col);
}

void
campaign_from_row(struct db_stmt *st, int col, struct campaign *c)
{
	const char *name = db_col_text(st, col + 1);
	const char *kind = db_col_text(st, col + 2);
	const char *state = db_col_text(st, col + 3);

	memset(c, 0, sizeof(*c));
	c->id = db_col_i64(st, col);
	str_copy(c->name, name ? name : "", sizeof(c->name));
	if (kind == NULL || campaign_kind_parse(kind, &c->kind) == -1)
		c->kind = CAMPAIGN_SHARED;
	c->closed = state != NULL && strcmp(state, "closed") == 0;
	c->starts_at = col_opt(st, col + 4);
	c->ends_at = col_opt(st, col + 5);
	c->budget = col_opt(st, col + 6);
	c->redeemed = db_col_i64(st, col + 7);
	c->per_account_limit = col_opt(st, col + 8);
	c->created_at = db_col_i64(st, col + 9);
	c->closed_at = col_opt(st, col + 10);
}

static const int64_t *
opt(const int64_t *v)
{
	return *v > 0 ? v : NULL;
}

enum error_word
campaign_create(struct svc *s, struct campaign *c)
{
	int rc;

	if (!campaign_name_ok(c->name) || (unsigned)c->kind >= CAMPAIGN__MAX ||
	    c->budget < 0 || c->per_account_limit < 0 || c->starts_at < 0 ||
	    c->ends_at < 0 ||
	    (c->starts_at > 0 && c->ends_at > 0 && c->ends_at <= c->starts_at))
		return ERROR_BAD_REQUEST;
	rc = db_exec(s->db, STMT_CAMPAIGN_INSERT, NULL, "ittnnnn", s->tenant_id,
	    c->name, campaign_kind_name(c->kind), opt(&c->starts_at),
	    opt(&c->ends_at), opt(&c->budget), opt(&c->per_account_limit));
	if (rc == DB_EUNIQUE)
		return ERROR_CONFLICT;
	if (rc == DB_ECHECK)
		return ERROR_BAD_REQUEST;
	if (rc != DB_OK)
		return svc_db_error(rc);
	return campaign_get(s, c->name, c);
}

enum error_word
campaign_get(struct svc *s, const char *name, struct campaign *out)
{
	struct db_stmt *st;
	int rc;

	if (!campaign_name_ok(name))
		return ERROR_NOT_FOUND;
	rc = db_query(
	    s->db, STMT_CAMPAIGN_BY_NAME, &st, "it", s->tenant_id, name);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return svc_db_error(rc);
	campaign_from_row(st, 0, out);
	db_reset(st);
	return ERROR_NONE;
}

enum error_word
campaign_close(struct svc *s, const char *name, struct campaign *out)
{
	int rc;

	if (!campaign_name_ok(name))
		return ERROR_NOT_FOUND;
	rc =
	    db_exec(s->db, STMT_CAMPAIGN_CLOSE, NULL, "it", s->tenant_id, name);
	if (rc != DB_OK)
		return svc_db_error(rc);
	return campaign_get(s, name, out);
}

enum error_word
campaign_reopen(struct svc *s, const char *name, struct campaign *out)
{
	int rc;

	if (!campaign_name_ok(name))
		return ERROR_NOT_FOUND;
	rc = db_exec(
	    s->db, STMT_CAMPAIGN_REOPEN, NULL, "it", s->tenant_id, name);
	if (rc != DB_OK)
		return svc_db_error(rc);
	return campaign_get(s, name, out);
}

enum error_word
campaign_update(struct svc *s, const struct campaign *c, struct campaign *out)
{
	int64_t changes = 0;
	enum error_word e;
	int rc;

	if (!campaign_name_ok(c->name))
		return ERROR_NOT_FOUND;
	if (c->budget < 0 || c->per_account_limit < 0 || c->starts_at < 0 ||
	    c->ends_at < 0 ||
	    (c->starts_at > 0 && c->ends_at > 0 && c->ends_at <= c->starts_at))
		return ERROR_BAD_REQUEST;
	rc = db_exec(s->db, STMT_CAMPAIGN_UPDATE, &changes, "nnnnitnn",
	    opt(&c->starts_at), opt(&c->ends_at), opt(&c->budget),
	    opt(&c->per_account_limit), s->tenant_id, c->name, opt(&c->budget),
	    opt(&c->budget));
	if (rc == DB_ECHECK)
		return ERROR_BAD_REQUEST;
	if (rc != DB_OK)
		return svc_db_error(rc);
	if ((e = campaign_get(s, c->name, out)) != ERROR_NONE)
		return e;
	/* The row is there but was not matched: the budget was too low. */
	if (changes == 0 && c->budget > 0 && out->redeemed > c->budget)
		return ERROR_CONFLICT;
	return ERROR_NONE;
}

enum error_word
campaign_days(struct svc *s, int64_t id, int64_t per_day[CAMPAIGN_DAYS],
    int64_t *day0, int64_t *now)
{
	struct db_stmt *st;
	int64_t d;
	int rc;

	memset(per_day, 0, CAMPAIGN_DAYS * sizeof(*per_day));
	if ((rc = db_query(s->db, STMT_NOW, &st, "")) != DB_ROW)
		return svc_db_error(rc == DB_OK ? DB_EFAIL : rc);
	*now = db_col_i64(st, 0);
	db_reset(st);
	*day0 = (*now / 86400 - (CAMPAIGN_DAYS - 1)) * 86400;
	rc = db_query(s->db, STMT_ADMIN_CAMPAIGN_PER_DAY, &st, "iiii", *day0,
	    s->tenant_id, id, *day0);
	while (rc == DB_ROW) {
		d = db_col_i64(st, 0);
		if (d >= 0 && d < CAMPAIGN_DAYS)
			per_day[d] = db_col_i64(st, 1);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
}

enum error_word
campaign_recent(struct svc *s, int64_t since,
    void (*fn)(void *, int64_t, int64_t), void *arg)
{
	struct db_stmt *st;
	int rc;

	rc = db_query(
	    s->db, STMT_ADMIN_CAMPAIGN_RECENT, &st, "ii", s->tenant_id, since);
	while (rc == DB_ROW) {
		fn(arg, db_col_i64(st, 0), db_col_i64(st, 1));
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
}

enum error_word
campaign_list(
    struct svc *s, void (*fn)(void *, const struct campaign *), void *arg)
{
	struct campaign c;
	struct db_stmt *st;
	int rc;

	rc = db_query(s->db, STMT_CAMPAIGN_LIST, &st, "i", s->tenant_id);
	while (rc == DB_ROW) {
		campaign_from_row(st, 0, &c);
		c.codes = db_col_i64(st, 11);
		c.uses = db_col_i64(st, 12);
		fn(arg, &c);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
}

static void
set_time(json_t *o, const char *key, int64_t t)
{
	char at[32];

	if (t > 0) {
		str_rfc3339(t, at);
		json_object_set_new(o, key, json_string(at));
	} else
		json_object_set_new(o, key, json_null());
}

static void
set_opt(json_t *o, const char *key, int64_t v)
{
	json_object_set_new(o, key, v > 0 ? json_integer(v) : json_null());
}

json_t *
campaign_json(const struct campaign *c)
{
	json_t *o = json_pack("{s:s,s:s,s:s}", "name", c->name, "kind",
	    campaign_kind_name(c->kind), "state",
	    c->closed ? "closed" : "open");

	if (o == NULL)
		return NULL;
	set_time(o, "starts_at", c->starts_at);
	set_time(o, "ends_at", c->ends_at);
	set_opt(o, "budget", c->budget);
	if (c->budget > 0) /* counted only against a budget */
		json_object_set_new(
		    o, "budget_used", json_integer(c->redeemed));
	set_opt(o, "per_account_limit", c->per_account_limit);
	set_time(o, "created_at", c->created_at);
	set_time(o, "closed_at", c->closed_at);
	return o;
}
