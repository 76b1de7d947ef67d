/*
 * The dashboard's campaigns (list, create, a campaign's numbers and
 * chart, edit, close, reopen) and its audit log (filtered, paged by id).
 * The gate has checked the session, its tenant, the CSRF token and the
 * role before a handler here runs; every change is recorded with
 * audit_write after it is made. Every value lives in the request's arena.
 */
#include <stdio.h>
#include <string.h>

#include "../core/audit.h"
#include "../core/campaigns.h"
#include "../core/session.h"
#include "../lib/arena.h"
#include "../lib/buf.h"
#include "../lib/common.h"
#include "../lib/str.h"
#include "admin_page.h"
#include "chart.h"
#include "fmt.h"
#include "form.h"
#include "web.h"

#define AUDIT_PAGE 50 /* audit rows per page */

enum list_key {
	CL_HAS_ROWS = AK__COMMON,
	CL_ROWS,
	CL_NAME,
	CL_KIND,
	CL_STATE,
	CL_CLOSED,
	CL_STARTS,
	CL_ENDS,
	CL_USED,
	CL_BUDGET,
	CL_LIMIT,
	CL_RECENT,
	CL__MAX
};
static const char *const list_keys[CL__MAX + 1] = {ADMIN_KEYS, "has_rows",
    "rows", "name", "kind", "state", "closed", "starts", "ends", "used",
    "budget", "limit", "recent", NULL};

/* The fields of the create and edit forms, as sent (to show them again)
 * and the error that sent them back. */
enum form_key {
	CF_ERROR = AK__COMMON,
	CF_NAME,
	CF_POOL,
	CF_BUDGET,
	CF_STARTS,
	CF_ENDS,
	CF_LIMIT,
	CF__MAX
};
static const char *const form_keys[CF__MAX + 1] = {ADMIN_KEYS, "error",
    "f_name", "f_pool", "f_budget", "f_starts", "f_ends", "f_limit", NULL};

enum campaign_key {
	CP_ERROR = AK__COMMON,
	CP_NAME,
	CP_POOL,
	CP_BUDGET,
	CP_STARTS,
	CP_ENDS,
	CP_LIMIT,
	CP_KIND,
	CP_STATE,
	CP_CLOSED,
	CP_STARTS_AT,
	CP_ENDS_AT,
	CP_BUDGET_TEXT,
	CP_USED,
	CP_LIMIT_TEXT,
	CP_CREATED,
	CP_CLOSED_AT,
	CP_TODAY,
	CP_WEEK,
	CP_MONTH,
	CP_QUIET,
	CP_CHART,
	CP_DAYS,
	CP_DAY_ISO,
	CP_DAY_TEXT,
	CP_COUNT,
	CP__MAX
};
static const char *const campaign_keys[CP__MAX + 1] = {ADMIN_KEYS, "error",
    "f_name", "f_pool", "f_budget", "f_starts", "f_ends", "f_limit", "kind",
    "state", "closed", "starts_at", "ends_at", "budget_text", "used",
    "limit_text", "created", "closed_at", "today", "week", "month", "quiet",
    "chart", "days", "day_iso", "day_text", "count", NULL};

enum audit_key {
	AU_F_ACTION = AK__COMMON,
	AU_F_EMAIL,
	AU_F_SINCE,
	AU_F_UNTIL,
	AU_ERROR,
	AU_HAS_ROWS,
	AU_ROWS,
	AU_AT,
	AU_WHO,
	AU_IP,
	AU_ACTION,
	AU_OBJECT,
	AU_DETAIL,
	AU_OLDER,
	AU_FILTERED,
	AU__MAX
};
static const char *const audit_keys[AU__MAX + 1] = {ADMIN_KEYS, "f_action",
    "f_email", "f_since", "f_until", "error", "has_rows", "rows", "at", "who",
    "ip", "action", "object", "detail", "older", "filtered", NULL};

void
admin_campaign_pages_load(struct web *w, const char *dir)
{
	admin_page_load(w, PAGE_ADMIN_CAMPAIGNS, dir, "admin_campaigns.html",
	    list_keys, CL__MAX);
	admin_page_load(w, PAGE_ADMIN_CAMPAIGN_FORM, dir,
	    "admin_campaign_new.html", form_keys, CF__MAX);
	admin_page_load(w, PAGE_ADMIN_CAMPAIGN, dir, "admin_campaign.html",
	    campaign_keys, CP__MAX);
	admin_page_load(
	    w, PAGE_ADMIN_AUDIT, dir, "admin_audit.html", audit_keys, AU__MAX);
}

/* "2026-05-01T10:00" (a datetime-local input's value, in UTC); "" for
 * 0. */
static const char *
input_time(struct arena *a, int64_t t)
{
	char iso[32];

	if (t <= 0)
		return "";
	str_rfc3339(t, iso);
	iso[16] = '\0';
	return arena_strdup(a, iso);
}

/*
 * A time field: "" is 0 (none); RFC 3339, a datetime-local value
 * ("2026-05-01T10:00", taken as UTC) or a date. -1 for anything else.
 */
static int
parse_time(struct arena *a, const char *s, int64_t *out)
{
	size_t n;

	*out = 0;
	if (s == NULL || *s == '\0')
		return 0;
	n = strlen(s);
	if (n == 10)
		s = arena_printf(a, "%sT00:00:00Z", s);
	else if (n == 16)
		s = arena_printf(a, "%s:00Z", s);
	else if (n == 19)
		s = arena_printf(a, "%sZ", s);
	if (s == NULL || str_parse_time(s, out) == -1 || *out <= 0)
		return -1;
	return 0;
}

/* A count field: "" is 0 (none); otherwise 1 to 10^12. */
static int
parse_count(const char *s, int64_t *out)
{
	*out = 0;
	if (s == NULL || *s == '\0')
		return 0;
	return str_to_i64(s, 1, 1000000000000LL, out);
}

/*
 * The window, budget and limit from the form into c; NULL when they are
 * good, else the sentence that says what is wrong.
 */
static const char *
read_settings(struct req *req, struct campaign *c)
{
	if (parse_time(req->a, admin_form(req, "starts_at"), &c->starts_at) ==
	    -1)
		return "The start is not a date and time (use "
		       "2026-05-01T10:00, in UTC), or leave it empty.";
	if (parse_time(req->a, admin_form(req, "ends_at"), &c->ends_at) == -1)
		return "The end is not a date and time (use "
		       "2026-05-01T10:00, in UTC), or leave it empty.";
	if (c->starts_at > 0 && c->ends_at > 0 && c->ends_at <= c->starts_at)
		return "The end must come after the start.";
	if (parse_count(admin_form(req, "budget"), &c->budget) == -1)
		return "The budget must be a whole number of redemptions, 1 "
		       "or more, or empty for none.";
	if (parse_count(admin_form(req, "per_account_limit"),
		&c->per_account_limit) == -1)
		return "The per-account limit must be a whole number, 1 or "
		       "more, or empty for none.";
	return NULL;
}

/* A count, or "none" for 0 (no budget, no limit). */
static const char *
count_or_none(struct arena *a, int64_t n)
{
	return n > 0 ? fmt_count_a(a, n) : "none";
}

/* ---- the list ---- */

struct list_run {
	struct req *req;
	struct campaign *c;
	size_t n, cap;
	int64_t *recent_id, *recent_n;
	size_t nrecent, recent_cap;
	int err;
};

static void
list_one(void *arg, const struct campaign *c)
{
	struct list_run *u = arg;

	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 16;
		struct campaign *x = arena_alloc(u->req->a, cap * sizeof(*x));

		if (x == NULL) {
			u->err = 1;
			return;
		}
		if (u->n > 0)
			memcpy(x, u->c, u->n * sizeof(*x));
		u->c = x;
		u->cap = cap;
	}
	u->c[u->n++] = *c;
}

static void
recent_one(void *arg, int64_t id, int64_t n)
{
	struct list_run *u = arg;

	if (u->nrecent == u->recent_cap) {
		size_t cap = u->recent_cap ? u->recent_cap * 2 : 16;
		int64_t *a = arena_alloc(u->req->a, cap * sizeof(*a));
		int64_t *b = arena_alloc(u->req->a, cap * sizeof(*b));

		if (a == NULL || b == NULL) {
			u->err = 1;
			return;
		}
		if (u->nrecent > 0) {
			memcpy(a, u->recent_id, u->nrecent * sizeof(*a));
			memcpy(b, u->recent_n, u->nrecent * sizeof(*b));
		}
		u->recent_id = a;
		u->recent_n = b;
		u->recent_cap = cap;
	}
	u->recent_id[u->nrecent] = id;
	u->recent_n[u->nrecent++] = n;
}

static int64_t
recent_of(const struct list_run *u, int64_t id)
{
	size_t i;

	for (i = 0; i < u->nrecent; i++)
		if (u->recent_id[i] == id)
			return u->recent_n[i];
	return 0;
}

int
h_admin_campaigns(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[CL__MAX] = {0};
	struct list_run u = {.req = req};
	struct arena *a = req->a;
	int64_t days[CAMPAIGN_DAYS], day0, now;
	struct tval **it;
	size_t i;

	if (campaign_list(&req->svc, list_one, &u) != ERROR_NONE ||
	    campaign_days(&req->svc, 0, days, &day0, &now) != ERROR_NONE ||
	    campaign_recent(&req->svc, day0, recent_one, &u) != ERROR_NONE ||
	    u.err)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (admin_page_layout(
		req, v, CL__MAX, "/admin/campaigns", "Campaigns") == -1 ||
	    (it = admin_rows(a, u.n, CL__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	for (i = 0; i < u.n; i++) {
		const struct campaign *c = &u.c[i];

		it[i][CL_NAME] = tv(c->name);
		it[i][CL_KIND] = tv(campaign_kind_name(c->kind));
		it[i][CL_STATE] = tv(c->closed ? "closed" : "open");
		it[i][CL_CLOSED] = tv(c->closed ? "1" : NULL);
		it[i][CL_STARTS] = tv_raw(fmt_time_html(a, c->starts_at));
		it[i][CL_ENDS] = tv_raw(fmt_time_html(a, c->ends_at));
		it[i][CL_USED] =
		    tv(c->budget > 0 ? fmt_count_a(a, c->redeemed) : NULL);
		it[i][CL_BUDGET] = tv(count_or_none(a, c->budget));
		it[i][CL_LIMIT] = tv(count_or_none(a, c->per_account_limit));
		it[i][CL_RECENT] = tv(fmt_count_a(a, recent_of(&u, c->id)));
	}
	v[CL_ROWS] = tv_list(it, u.n);
	v[CL_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (arena_err(a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_CAMPAIGNS, v, 200);
}

/* ---- create ---- */

static int
form_page(struct web *w, struct req *req, struct resp *resp, const char *error,
    int status)
{
	struct tval v[CF__MAX] = {0};

	if (admin_page_layout(
		req, v, CF__MAX, "/admin/campaigns", "New campaign") == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	v[CF_ERROR] = tv(error);
	if (error != NULL) {
		const char *kind = admin_form(req, "kind");

		v[CF_NAME] = tv(admin_form(req, "name"));
		v[CF_POOL] =
		    tv(kind != NULL && strcmp(kind, "pool") == 0 ? "1" : NULL);
		v[CF_BUDGET] = tv(admin_form(req, "budget"));
		v[CF_STARTS] = tv(admin_form(req, "starts_at"));
		v[CF_ENDS] = tv(admin_form(req, "ends_at"));
		v[CF_LIMIT] = tv(admin_form(req, "per_account_limit"));
	}
	return admin_page_render(w, resp, PAGE_ADMIN_CAMPAIGN_FORM, v, status);
}

int
h_admin_campaign_new(struct web *w, struct req *req, struct resp *resp)
{
	return form_page(w, req, resp, NULL, 200);
}

/* "window ... budget ... limit ...": what an audit row says was set. */
static const char *
settings_words(struct arena *a, const struct campaign *c)
{
	char s[32], e[32];

	if (c->starts_at > 0)
		str_rfc3339(c->starts_at, s);
	else
		str_copy(s, "-", sizeof(s));
	if (c->ends_at > 0)
		str_rfc3339(c->ends_at, e);
	else
		str_copy(e, "-", sizeof(e));
	return arena_printf(a, "window %s..%s budget %lld limit %lld", s, e,
	    (long long)c->budget, (long long)c->per_account_limit);
}

static int
audit_or_fail(struct web *w, struct req *req, struct resp *resp,
    const char *action, const char *name, const char *detail, const char *where)
{
	if (audit_write(&req->svc, req->sess->admin_id, req->client, action,
		name, detail) != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    "The change was made, but the audit log could not record "
		    "it. Send the form again in a moment.");
	return resp_see_other(resp, where);
}

static const char *
campaign_href(struct arena *a, const char *name)
{
	/* Names are [A-Za-z0-9._-] (campaign_name_ok): safe in a path. */
	return arena_printf(a, "/admin/campaigns/%s", name);
}

int
h_admin_campaign_create(struct web *w, struct req *req, struct resp *resp)
{
	struct campaign *c = arena_alloc(req->a, sizeof(*c));
	const char *name = admin_form(req, "name");
	const char *kind = admin_form(req, "kind");
	const char *why;
	enum error_word e;

	if (c == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	memset(c, 0, sizeof(*c));
	if (name == NULL || !campaign_name_ok(name) ||
	    str_copy(c->name, name, sizeof(c->name)) == -1)
		return form_page(w, req, resp,
		    "The name must be 1 to 64 letters, digits, dots, dashes "
		    "or underscores.",
		    400);
	if (kind == NULL || campaign_kind_parse(kind, &c->kind) == -1)
		return form_page(
		    w, req, resp, "Choose the kind: shared or pool.", 400);
	if ((why = read_settings(req, c)) != NULL)
		return form_page(w, req, resp, why, 400);
	e = campaign_create(&req->svc, c);
	if (e == ERROR_CONFLICT)
		return form_page(w, req, resp,
		    "A campaign with this name exists already. Choose "
		    "another name.",
		    409);
	if (e == ERROR_BAD_REQUEST)
		return form_page(w, req, resp,
		    "The form was not filled in as it should be.", 400);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return audit_or_fail(w, req, resp, "campaign.create", c->name,
	    arena_printf(req->a, "%s, %s", campaign_kind_name(c->kind),
		settings_words(req->a, c)),
	    campaign_href(req->a, c->name));
}

/* ---- one campaign ---- */

static int
campaign_chart(
    struct req *req, struct tval *v, const int64_t *per_day, int64_t day0)
{
	const char *tip[CAMPAIGN_DAYS], *tick[CAMPAIGN_DAYS];
	char day[16], iso[32], n[FMT_COUNT_MAX];
	struct tval **it;
	struct buf svg;
	size_t i;
	int rc;

	if ((it = admin_rows(req->a, CAMPAIGN_DAYS, CP__MAX)) == NULL)
		return -1;
	for (i = 0; i < CAMPAIGN_DAYS; i++) {
		int64_t t = day0 + (int64_t)i * 86400;
		size_t row = CAMPAIGN_DAYS - 1 - i; /* newest first */

		fmt_day(t, day);
		fmt_count(per_day[i], n);
		str_rfc3339(t, iso);
		iso[10] = '\0';
		tip[i] = arena_printf(req->a, "%s: %s redemption%s", day, n,
		    per_day[i] == 1 ? "" : "s");
		tick[i] = NULL;
		if (i == CAMPAIGN_DAYS - 1)
			tick[i] = "today";
		else if ((CAMPAIGN_DAYS - 1 - i) % 7 == 0)
			tick[i] = arena_strdup(req->a, day);
		it[row][CP_DAY_ISO] = tv(arena_strdup(req->a, iso));
		it[row][CP_DAY_TEXT] = tv(arena_strdup(req->a, day));
		it[row][CP_COUNT] = tv(arena_strdup(req->a, n));
	}
	if (arena_err(req->a))
		return -1;
	v[CP_DAYS] = tv_list(it, CAMPAIGN_DAYS);
	buf_init(&svg, 256 * 1024);
	rc = chart_bars(
	    &svg, per_day, CAMPAIGN_DAYS, tip, tick, "campaign-chart-title");
	if (rc == 0 && !svg.err)
		v[CP_CHART] = tv_raw(arena_strndup(req->a, svg.data, svg.len));
	buf_free(&svg);
	return rc == 0 && v[CP_CHART].type == TV_RAW ? 0 : -1;
}

/* The campaign page; error (with the status) re-shows the edit form as
 * it was sent. */
static int
campaign_page(struct web *w, struct req *req, struct resp *resp,
    const char *name, const char *error, int status)
{
	struct tval v[CP__MAX] = {0};
	struct campaign *c = arena_alloc(req->a, sizeof(*c));
	struct arena *a = req->a;
	int64_t per_day[CAMPAIGN_DAYS], day0, now, week = 0, month = 0;
	enum error_word e;
	size_t i;

	if (c == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if ((e = campaign_get(&req->svc, name, c)) == ERROR_NOT_FOUND)
		return admin_error(w, req, resp, e, NULL);
	if (e != ERROR_NONE ||
	    campaign_days(&req->svc, c->id, per_day, &day0, &now) != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (admin_page_layout(req, v, CP__MAX, "/admin/campaigns", c->name) ==
	    -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	for (i = 0; i < CAMPAIGN_DAYS; i++) {
		month += per_day[i];
		if (i >= CAMPAIGN_DAYS - 7)
			week += per_day[i];
	}
	v[CP_ERROR] = tv(error);
	v[CP_NAME] = tv(c->name);
	v[CP_KIND] = tv(campaign_kind_name(c->kind));
	v[CP_STATE] = tv(c->closed ? "closed" : "open");
	v[CP_CLOSED] = tv(c->closed ? "1" : NULL);
	v[CP_STARTS_AT] = tv_raw(fmt_time_html(a, c->starts_at));
	v[CP_ENDS_AT] = tv_raw(fmt_time_html(a, c->ends_at));
	v[CP_BUDGET_TEXT] = tv(count_or_none(a, c->budget));
	v[CP_USED] = tv(c->budget > 0 ? fmt_count_a(a, c->redeemed) : NULL);
	v[CP_LIMIT_TEXT] = tv(count_or_none(a, c->per_account_limit));
	v[CP_CREATED] = tv_raw(fmt_time_html(a, c->created_at));
	v[CP_CLOSED_AT] = tv_raw(fmt_time_html(a, c->closed_at));
	v[CP_TODAY] = tv(fmt_count_a(a, per_day[CAMPAIGN_DAYS - 1]));
	v[CP_WEEK] = tv(fmt_count_a(a, week));
	v[CP_MONTH] = tv(fmt_count_a(a, month));
	v[CP_QUIET] = tv(month == 0 ? "1" : NULL);
	if (error != NULL) {
		v[CP_BUDGET] = tv(admin_form(req, "budget"));
		v[CP_STARTS] = tv(admin_form(req, "starts_at"));
		v[CP_ENDS] = tv(admin_form(req, "ends_at"));
		v[CP_LIMIT] = tv(admin_form(req, "per_account_limit"));
	} else {
		v[CP_BUDGET] = tv(c->budget > 0 ? arena_printf(a, "%lld",
						      (long long)c->budget)
						: NULL);
		v[CP_STARTS] = tv(input_time(a, c->starts_at));
		v[CP_ENDS] = tv(input_time(a, c->ends_at));
		v[CP_LIMIT] = tv(c->per_account_limit > 0
				     ? arena_printf(a, "%lld",
					   (long long)c->per_account_limit)
				     : NULL);
	}
	if (campaign_chart(req, v, per_day, day0) == -1 || arena_err(a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_CAMPAIGN, v, status);
}

int
h_admin_campaign(struct web *w, struct req *req, struct resp *resp)
{
	return campaign_page(w, req, resp, req->param[0], NULL, 200);
}

int
h_admin_campaign_update(struct web *w, struct req *req, struct resp *resp)
{
	struct campaign *c = arena_alloc(req->a, sizeof(*c));
	struct campaign *out = arena_alloc(req->a, sizeof(*out));
	const char *name = req->param[0];
	const char *why;
	enum error_word e;

	if (c == NULL || out == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	memset(c, 0, sizeof(*c));
	/* Another tenant's name, or none: the same 404 as a GET. */
	if ((e = campaign_get(&req->svc, name, out)) != ERROR_NONE)
		return admin_error(w, req, resp,
		    e == ERROR_NOT_FOUND ? e : ERROR_UNAVAILABLE, NULL);
	str_copy(c->name, out->name, sizeof(c->name));
	if ((why = read_settings(req, c)) != NULL)
		return campaign_page(w, req, resp, name, why, 400);
	e = campaign_update(&req->svc, c, out);
	if (e == ERROR_CONFLICT)
		return campaign_page(w, req, resp, name,
		    arena_printf(req->a,
			"The budget cannot be less than the %lld redemptions "
			"already counted against it.",
			(long long)out->redeemed),
		    409);
	if (e == ERROR_BAD_REQUEST)
		return campaign_page(w, req, resp, name,
		    "The form was not filled in as it should be.", 400);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp,
		    e == ERROR_NOT_FOUND ? e : ERROR_UNAVAILABLE, NULL);
	return audit_or_fail(w, req, resp, "campaign.update", out->name,
	    settings_words(req->a, out), campaign_href(req->a, out->name));
}

static int
close_or_reopen(struct web *w, struct req *req, struct resp *resp, int reopen)
{
	struct campaign *c = arena_alloc(req->a, sizeof(*c));
	enum error_word e;

	if (c == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* Both are idempotent and say nothing of a name not the tenant's. */
	if ((e = campaign_get(&req->svc, req->param[0], c)) == ERROR_NONE)
		e = reopen ? campaign_reopen(&req->svc, req->param[0], c)
			   : campaign_close(&req->svc, req->param[0], c);
	if (e == ERROR_NOT_FOUND)
		return admin_error(w, req, resp, e, NULL);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return audit_or_fail(w, req, resp,
	    reopen ? "campaign.reopen" : "campaign.close", c->name, NULL,
	    campaign_href(req->a, c->name));
}

int
h_admin_campaign_close(struct web *w, struct req *req, struct resp *resp)
{
	return close_or_reopen(w, req, resp, 0);
}

int
h_admin_campaign_reopen(struct web *w, struct req *req, struct resp *resp)
{
	return close_or_reopen(w, req, resp, 1);
}

/* ---- the audit log ---- */

struct audit_run {
	struct req *req;
	struct tval **it;
	size_t n;
	int64_t last_id;
	int more; /* a row past the page: there is an older page */
	int err;
};

static void
audit_one(void *arg, const struct audit_entry *e)
{
	struct audit_run *u = arg;
	struct arena *a = u->req->a;
	struct tval *r;

	if (u->n >= AUDIT_PAGE) {
		u->more = 1;
		return;
	}
	if ((r = arena_alloc(a, AU__MAX * sizeof(*r))) == NULL) {
		u->err = 1;
		return;
	}
	memset(r, 0, AU__MAX * sizeof(*r));
	r[AU_AT] = tv_raw(fmt_time_html(a, e->at));
	r[AU_WHO] = tv(e->email[0] ? arena_strdup(a, e->email) : "operator");
	r[AU_IP] = tv(arena_strdup(a, e->ip));
	r[AU_ACTION] = tv(arena_strdup(a, e->action));
	r[AU_OBJECT] = tv(arena_strdup(a, e->object));
	r[AU_DETAIL] = tv(arena_strdup(a, e->detail));
	u->it[u->n++] = r;
	u->last_id = e->id;
}

/* Appends "&key=value", the value percent-encoded. */
static void
query_add(struct buf *b, const char *key, const char *val)
{
	const unsigned char *p;

	if (val == NULL || *val == '\0')
		return;
	buf_printf(b, "&%s=", key);
	for (p = (const unsigned char *)val; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL)
			buf_printf(b, "%c", *p);
		else
			buf_printf(b, "%%%02X", *p);
	}
}

int
h_admin_audit(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[AU__MAX] = {0};
	struct audit_run u = {.req = req};
	struct audit_filter f = {.limit = AUDIT_PAGE + 1};
	const char *action = kv_get(&req->q, "action");
	const char *email = kv_get(&req->q, "email");
	const char *since = kv_get(&req->q, "since");
	const char *until = kv_get(&req->q, "until");
	const char *before = kv_get(&req->q, "before");
	const char *error = NULL;
	int status = 200;
	struct buf q;

	if (admin_page_layout(req, v, AU__MAX, "/admin/audit", "Audit log") ==
		-1 ||
	    (u.it = arena_alloc(req->a, AUDIT_PAGE * sizeof(*u.it))) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	v[AU_F_ACTION] = tv(action);
	v[AU_F_EMAIL] = tv(email);
	v[AU_F_SINCE] = tv(since);
	v[AU_F_UNTIL] = tv(until);
	f.action = action != NULL && *action ? action : NULL;
	f.email = email != NULL && *email ? email : NULL;
	if ((f.action != NULL && strlen(f.action) > 63) ||
	    (f.email != NULL && strlen(f.email) > 254))
		error = "The action or e-mail is too long.";
	else if (parse_time(req->a, since, &f.since) == -1 ||
		 parse_time(req->a, until, &f.until) == -1)
		error = "The times must look like 2026-05-01T10:00 (UTC), or "
			"be left empty.";
	else if (before != NULL && *before != '\0' &&
		 str_to_i64(before, 1, INT64_MAX, &f.before_id) == -1)
		error = "That page of the log does not exist.";
	if (error != NULL) {
		v[AU_ERROR] = tv(error);
		status = 400;
	} else if (audit_list(&req->svc, &f, audit_one, &u) != ERROR_NONE ||
		   u.err)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	v[AU_ROWS] = tv_list(u.it, u.n);
	v[AU_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	v[AU_FILTERED] =
	    tv(f.action || f.email || f.since || f.until || f.before_id ? "1"
									: NULL);
	/* One row more than a page was asked for: there is an older page. */
	if (u.more && error == NULL) {
		buf_init(&q, 4096);
		buf_printf(
		    &q, "/admin/audit?before=%lld", (long long)u.last_id);
		query_add(&q, "action", f.action);
		query_add(&q, "email", f.email);
		query_add(&q, "since", since);
		query_add(&q, "until", until);
		if (!q.err)
			v[AU_OLDER] = tv(arena_strndup(req->a, q.data, q.len));
		buf_free(&q);
	}
	if (arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_AUDIT, v, status);
}
