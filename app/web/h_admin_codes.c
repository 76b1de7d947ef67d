/*
 * The dashboard's codes and redemptions: the codes list (search by code,
 * filter by campaign and state, keyset pages of ADMIN_CODES_PAGE), a
 * code's page with its redemptions and holds, revoking one code or a
 * selection; the redemptions list (campaign, account, time) and
 * reversing one with a reason and a policy. Every change is audited
 * after it is made. The gate has checked the session, the tenant, the
 * CSRF token and the role before a handler here runs.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../core/admin_codes.h"
#include "../core/audit.h"
#include "../core/session.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_page.h"
#include "fmt.h"
#include "tmpl.h"
#include "web.h"

#define SEARCH_MAX 200 /* a search text longer than this is no code */

enum codes_key {
	CK_Q = AK__COMMON,
	CK_CAMPAIGN,
	CK_STATES,
	CK_VALUE,
	CK_SELECTED,
	CK_ROWS,
	CK_CODE,
	CK_CODE_HREF,
	CK_STATE,
	CK_USES,
	CK_MAX_USES,
	CK_EXPIRES,
	CK_HAS_ROWS,
	CK_NEXT_HREF,
	CK_FIRST_HREF,
	CK_QUERY_MS,
	CK_NOTICE,
	CK_SEARCHED,
	CK__MAX
};
static const char *const codes_keys[CK__MAX + 1] = {ADMIN_KEYS, "q", "campaign",
    "states", "value", "selected", "rows", "code", "code_href", "state", "uses",
    "max_uses", "expires", "has_rows", "next_href", "first_href", "query_ms",
    "notice", "searched", NULL};

enum code_key {
	DK_CODE = AK__COMMON,
	DK_CODE_HREF,
	DK_CAMPAIGN,
	DK_STATE,
	DK_USES,
	DK_MAX_USES,
	DK_EXPIRES,
	DK_CREATED,
	DK_REVOCABLE,
	DK_REDEMPTIONS,
	DK_HOLDS,
	DK_ID,
	DK_ACCOUNT,
	DK_AT,
	DK_REVERSED,
	DK_EXTERNAL,
	DK_ENDED,
	DK_REDEMPTION,
	DK_HAS_REDEMPTIONS,
	DK_HAS_HOLDS,
	DK__MAX
};
static const char *const code_keys[DK__MAX + 1] = {ADMIN_KEYS, "code",
    "code_href", "campaign", "state", "uses", "max_uses", "expires", "created",
    "revocable", "redemptions", "holds", "id", "account", "at", "reversed",
    "external", "ended", "redemption", "has_redemptions", "has_holds", NULL};

enum redemptions_key {
	RK_CAMPAIGN = AK__COMMON,
	RK_ACCOUNT,
	RK_SINCE,
	RK_UNTIL,
	RK_ROWS,
	RK_ID,
	RK_CODE,
	RK_CODE_HREF,
	RK_AT,
	RK_REVERSED,
	RK_POLICY,
	RK_REASON,
	RK_HAS_ROWS,
	RK_NEXT_HREF,
	RK_FIRST_HREF,
	RK_QUERY_MS,
	RK_NOTICE,
	RK__MAX
};
static const char *const redemptions_keys[RK__MAX + 1] = {ADMIN_KEYS,
    "campaign", "account", "since", "until", "rows", "id", "code", "code_href",
    "at", "reversed", "policy", "reason", "has_rows", "next_href", "first_href",
    "query_ms", "notice", NULL};

void
admin_codes_pages_load(struct web *w, const char *dir)
{
	admin_page_load(
	    w, PAGE_ADMIN_CODES, dir, "admin_codes.html", codes_keys, CK__MAX);
	admin_page_load(
	    w, PAGE_ADMIN_CODE, dir, "admin_code.html", code_keys, DK__MAX);
	admin_page_load(w, PAGE_ADMIN_REDEMPTIONS, dir,
	    "admin_redemptions.html", redemptions_keys, RK__MAX);
}

static const char *
code_href(struct arena *a, const char *display)
{
	const char *e = fmt_url(a, display);

	return e != NULL ? arena_printf(a, "/admin/codes/%s", e) : NULL;
}

/* ---- the codes list ---- */

struct codes_run {
	struct arena *a;
	struct tval **rows;
	size_t n;
	int64_t last_id;
};

static void
code_row(void *arg, const struct code_info *c)
{
	struct codes_run *u = arg;
	struct tval *v = u->rows[u->n++];

	v[CK_CODE] = tv(arena_strdup(u->a, c->code));
	v[CK_CODE_HREF] = tv(code_href(u->a, c->code));
	v[CK_CAMPAIGN] = tv(arena_strdup(u->a, c->campaign));
	v[CK_STATE] = tv(arena_strdup(u->a, c->state));
	v[CK_USES] = tv(fmt_count_a(u->a, c->uses));
	v[CK_MAX_USES] = tv(fmt_count_a(u->a, c->max_uses));
	v[CK_EXPIRES] = c->expires_at > 0
			    ? tv_raw(fmt_time_html(u->a, c->expires_at))
			    : tv("never");
	u->last_id = c->id;
}

static const char *const state_words[] = {
    "active", "redeemed", "exhausted", "expired", "revoked"};

int
h_admin_codes(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[CK__MAX] = {0};
	struct admin_codes_query q = {0};
	struct codes_run u = {.a = req->a};
	struct code_info *ci;
	struct tval **st;
	const char *search, *after, *revoked;
	enum error_word e = ERROR_NONE;
	double t0;
	size_t i;
	int64_t n;
	int bad = 0, more = 0;

	search = admin_query(req, "q", SEARCH_MAX, &bad);
	q.campaign = admin_query(req, "campaign", 64, &bad);
	q.state = admin_query(req, "state", 16, &bad);
	after = admin_query(req, "after", 20, &bad);
	revoked = admin_query(req, "revoked", 20, &bad);
	if (bad || (q.state != NULL && !admin_code_state_ok(q.state)) ||
	    (after != NULL &&
		str_to_i64(after, 1, INT64_MAX, &q.after_id) == -1))
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "The search or the filters are not valid: a state is "
		    "one of active, redeemed, exhausted, expired, revoked.");
	if (admin_page_layout(req, v, CK__MAX, "/admin/codes", "Codes") == -1 ||
	    (u.rows = admin_rows(req->a, ADMIN_CODES_PAGE, CK__MAX)) == NULL ||
	    (st = admin_rows(req->a, NELEM(state_words), CK__MAX)) == NULL ||
	    (ci = arena_alloc(req->a, sizeof(*ci))) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	t0 = admin_now_ms();
	if (search != NULL) {
		/* Any spelling of a code finds it: code_get normalizes. */
		e = code_get(&req->svc, search, ci);
		if (e == ERROR_NONE)
			code_row(&u, ci);
		else if (e == ERROR_NOT_FOUND)
			e = ERROR_NONE;
	} else
		e = admin_codes_page(&req->svc, &q, code_row, &u, &more);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	v[CK_QUERY_MS] =
	    tv(arena_printf(req->a, "%.1f ms", admin_now_ms() - t0));
	for (i = 0; i < NELEM(state_words); i++) {
		st[i][CK_VALUE] = tv(state_words[i]);
		if (q.state != NULL && strcmp(q.state, state_words[i]) == 0)
			st[i][CK_SELECTED] = tv("1");
	}
	v[CK_STATES] = tv_list(st, NELEM(state_words));
	v[CK_Q] = tv(search);
	v[CK_SEARCHED] = tv(search != NULL ? "1" : NULL);
	v[CK_CAMPAIGN] = tv(q.campaign);
	v[CK_ROWS] = tv_list(u.rows, u.n);
	v[CK_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (more)
		v[CK_NEXT_HREF] = tv(arena_printf(req->a,
		    "/admin/codes?campaign=%s&state=%s&after=%lld",
		    fmt_url(req->a, q.campaign ? q.campaign : ""),
		    q.state ? q.state : "", (long long)u.last_id));
	if (q.after_id > 0)
		v[CK_FIRST_HREF] =
		    tv(arena_printf(req->a, "/admin/codes?campaign=%s&state=%s",
			fmt_url(req->a, q.campaign ? q.campaign : ""),
			q.state ? q.state : ""));
	if (revoked != NULL && str_to_i64(revoked, 1, INT64_MAX, &n) == 0)
		v[CK_NOTICE] = tv(arena_printf(req->a, "Revoked %lld code%s.",
		    (long long)n, n == 1 ? "" : "s"));
	if (arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_CODES, v, 200);
}

/* Revokes one code (as typed) and records it in the audit log; ci gets
 * the code. *recorded is 0 when the code was revoked but the record
 * failed. */
static enum error_word
revoke_one(
    struct req *req, const char *code, struct code_info *ci, int *recorded)
{
	enum error_word e = code_revoke(&req->svc, code, ci);

	*recorded = 1;
	if (e != ERROR_NONE)
		return e;
	/* Made, then recorded: revoking is idempotent, so a failed record
	 * is mended by sending the form again. */
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "code.revoke", ci->code, NULL);
	if (e != ERROR_NONE)
		*recorded = 0;
	return e;
}

static const char *const audit_failed =
    "The code was revoked, but the audit log could not record it. Send "
    "the form again in a moment.";

int
h_admin_code_revoke(struct web *w, struct req *req, struct resp *resp)
{
	struct code_info *ci = arena_alloc(req->a, sizeof(*ci));
	enum error_word e;
	int recorded;

	if (ci == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* The code must be this tenant's: 404 before anything. */
	if ((e = code_get(&req->svc, req->param[0], ci)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if ((e = revoke_one(req, ci->code, ci, &recorded)) != ERROR_NONE)
		return admin_error(
		    w, req, resp, e, recorded ? NULL : audit_failed);
	return resp_see_other(resp, code_href(req->a, ci->code));
}

int
h_admin_codes_revoke(struct web *w, struct req *req, struct resp *resp)
{
	struct code_info *ci = arena_alloc(req->a, sizeof(*ci));
	const struct kvlist *f = &req->form;
	enum error_word e;
	size_t i, n = 0;
	int recorded;

	if (ci == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	for (i = 0; i < f->n; i++)
		if (strcmp(f->v[i].key, "code") == 0)
			n++;
	if (n == 0 || n > ADMIN_CODES_PAGE)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "Select between one code and a page of codes to revoke.");
	/* Every code is checked first: one that is not this tenant's
	 * changes nothing. */
	for (i = 0; i < f->n; i++) {
		if (strcmp(f->v[i].key, "code") != 0)
			continue;
		if ((e = code_get(&req->svc, f->v[i].val, ci)) != ERROR_NONE)
			return admin_error(w, req, resp, e, NULL);
	}
	for (i = 0; i < f->n; i++) {
		if (strcmp(f->v[i].key, "code") != 0)
			continue;
		e = revoke_one(req, f->v[i].val, ci, &recorded);
		if (e != ERROR_NONE)
			return admin_error(
			    w, req, resp, e, recorded ? NULL : audit_failed);
	}
	return resp_see_other(
	    resp, arena_printf(req->a, "/admin/codes?revoked=%zu", n));
}

/* ---- a code's page ---- */

struct code_run {
	struct arena *a;
	struct tval **red, **holds;
	size_t nred, nholds;
};

static void
code_redemption(void *arg, const struct redemption *r)
{
	struct code_run *u = arg;
	struct tval *v = u->red[u->nred++];

	v[DK_ID] = tv(arena_printf(u->a, "%lld", (long long)r->id));
	v[DK_ACCOUNT] = tv(arena_strdup(u->a, r->account));
	v[DK_AT] = tv_raw(fmt_time_html(u->a, r->redeemed_at));
	if (r->reversed_at > 0)
		v[DK_REVERSED] = tv(arena_printf(u->a, "reversed (%s): %s",
		    reversal_policy_name(r->reversal_policy),
		    r->reversal_reason));
}

static void
code_hold(void *arg, const struct admin_hold *h)
{
	struct code_run *u = arg;
	struct tval *v = u->holds[u->nholds++];

	v[DK_ID] = tv(arena_printf(u->a, "%lld", (long long)h->id));
	v[DK_EXTERNAL] = tv(arena_strdup(u->a, h->external_id));
	v[DK_ACCOUNT] = tv(arena_strdup(u->a, h->account));
	v[DK_STATE] = tv(arena_strdup(u->a, h->state));
	v[DK_AT] = tv_raw(fmt_time_html(u->a, h->created_at));
	v[DK_EXPIRES] = tv_raw(fmt_time_html(u->a, h->expires_at));
	if (h->ended_at > 0)
		v[DK_ENDED] = tv_raw(fmt_time_html(u->a, h->ended_at));
	if (h->redemption_id > 0)
		v[DK_REDEMPTION] =
		    tv(arena_printf(u->a, "%lld", (long long)h->redemption_id));
}

int
h_admin_code(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[DK__MAX] = {0};
	struct code_info *ci = arena_alloc(req->a, sizeof(*ci));
	struct code_run u = {.a = req->a};
	enum error_word e;

	if (ci == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if ((e = code_get(&req->svc, req->param[0], ci)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if (admin_page_layout(req, v, DK__MAX, "/admin/codes", ci->code) ==
		-1 ||
	    (u.red = admin_rows(req->a, ADMIN_CODE_ROWS_MAX, DK__MAX)) ==
		NULL ||
	    (u.holds = admin_rows(req->a, ADMIN_CODE_ROWS_MAX, DK__MAX)) ==
		NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	e = admin_code_history(
	    &req->svc, ci->id, code_redemption, code_hold, &u);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	v[DK_CODE] = tv(ci->code);
	v[DK_CODE_HREF] = tv(code_href(req->a, ci->code));
	v[DK_CAMPAIGN] = tv(ci->campaign);
	v[DK_STATE] = tv(ci->state);
	v[DK_USES] = tv(fmt_count_a(req->a, ci->uses));
	v[DK_MAX_USES] = tv(fmt_count_a(req->a, ci->max_uses));
	v[DK_EXPIRES] = ci->expires_at > 0
			    ? tv_raw(fmt_time_html(req->a, ci->expires_at))
			    : tv("never");
	v[DK_CREATED] = tv_raw(fmt_time_html(req->a, ci->created_at));
	if (strcmp(ci->state, "revoked") != 0 &&
	    strcmp(ci->state, "expired") != 0)
		v[DK_REVOCABLE] = tv("1");
	v[DK_REDEMPTIONS] = tv_list(u.red, u.nred);
	v[DK_HOLDS] = tv_list(u.holds, u.nholds);
	v[DK_HAS_REDEMPTIONS] = tv(u.nred > 0 ? "1" : NULL);
	v[DK_HAS_HOLDS] = tv(u.nholds > 0 ? "1" : NULL);
	if (arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_CODE, v, 200);
}

/* ---- redemptions ---- */

struct red_run {
	struct arena *a;
	struct tval **rows;
	size_t n;
	int64_t last_id;
};

static void
red_row(void *arg, const struct redemption *r)
{
	struct red_run *u = arg;
	struct tval *v = u->rows[u->n++];

	v[RK_ID] = tv(arena_printf(u->a, "%lld", (long long)r->id));
	v[RK_CODE] = tv(arena_strdup(u->a, r->code));
	v[RK_CODE_HREF] = tv(code_href(u->a, r->code));
	v[RK_CAMPAIGN] = tv(arena_strdup(u->a, r->campaign));
	v[RK_ACCOUNT] = tv(arena_strdup(u->a, r->account));
	v[RK_AT] = tv_raw(fmt_time_html(u->a, r->redeemed_at));
	if (r->reversed_at > 0) {
		v[RK_REVERSED] = tv_raw(fmt_time_html(u->a, r->reversed_at));
		v[RK_POLICY] = tv(reversal_policy_name(r->reversal_policy));
		v[RK_REASON] = tv(arena_strdup(u->a, r->reversal_reason));
	}
	u->last_id = r->id;
}

/* "2026-11-22" -> that midnight UTC; -1 when it is not such a date. */
static int
parse_day(const char *s, int64_t *out)
{
	struct tm tm = {0};
	int y, m, d;
	char tail;

	if (strlen(s) != 10 ||
	    sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || y < 1970 ||
	    y > 9999 || m < 1 || m > 12 || d < 1 || d > 31)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = m - 1;
	tm.tm_mday = d;
	*out = (int64_t)timegm(&tm);
	return tm.tm_mday == d ? 0 : -1; /* 2026-02-30 normalized away */
}

int
h_admin_redemptions(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[RK__MAX] = {0};
	struct admin_redemptions_query q = {0};
	struct red_run u = {.a = req->a};
	const char *since, *until, *before, *reversed;
	enum error_word e;
	double t0;
	int64_t n;
	int bad = 0, more = 0;

	q.campaign = admin_query(req, "campaign", 64, &bad);
	q.account = admin_query(req, "account", ACCOUNT_MAX, &bad);
	since = admin_query(req, "since", 10, &bad);
	until = admin_query(req, "until", 10, &bad);
	before = admin_query(req, "before", 20, &bad);
	reversed = admin_query(req, "reversed", 20, &bad);
	if (bad || (since != NULL && parse_day(since, &q.since) == -1) ||
	    (until != NULL && parse_day(until, &q.until) == -1) ||
	    (before != NULL &&
		str_to_i64(before, 1, INT64_MAX, &q.before_id) == -1))
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "The filters are not valid: dates are YYYY-MM-DD.");
	if (q.until > 0)
		q.until += 86400; /* the day itself is in the range */
	if (admin_page_layout(
		req, v, RK__MAX, "/admin/redemptions", "Redemptions") == -1 ||
	    (u.rows = admin_rows(req->a, ADMIN_CODES_PAGE, RK__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	t0 = admin_now_ms();
	e = admin_redemptions_page(&req->svc, &q, red_row, &u, &more);
	if (e == ERROR_BAD_REQUEST)
		return admin_error(w, req, resp, e,
		    "That account is not one an account can be.");
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	v[RK_QUERY_MS] =
	    tv(arena_printf(req->a, "%.1f ms", admin_now_ms() - t0));
	v[RK_CAMPAIGN] = tv(q.campaign);
	v[RK_ACCOUNT] = tv(q.account);
	v[RK_SINCE] = tv(since);
	v[RK_UNTIL] = tv(until);
	v[RK_ROWS] = tv_list(u.rows, u.n);
	v[RK_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (more)
		v[RK_NEXT_HREF] = tv(arena_printf(req->a,
		    "/admin/redemptions?campaign=%s&account=%s&since=%s&"
		    "until=%s&before=%lld",
		    fmt_url(req->a, q.campaign ? q.campaign : ""),
		    fmt_url(req->a, q.account ? q.account : ""),
		    since ? since : "", until ? until : "",
		    (long long)u.last_id));
	if (q.before_id > 0)
		v[RK_FIRST_HREF] = tv(arena_printf(req->a,
		    "/admin/redemptions?campaign=%s&account=%s&since=%s&"
		    "until=%s",
		    fmt_url(req->a, q.campaign ? q.campaign : ""),
		    fmt_url(req->a, q.account ? q.account : ""),
		    since ? since : "", until ? until : ""));
	if (reversed != NULL && str_to_i64(reversed, 1, INT64_MAX, &n) == 0)
		v[RK_NOTICE] = tv(arena_printf(
		    req->a, "Redemption %lld was reversed.", (long long)n));
	if (arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_REDEMPTIONS, v, 200);
}

int
h_admin_redemption_reverse(struct web *w, struct req *req, struct resp *resp)
{
	struct redeem_result *res = arena_alloc(req->a, sizeof(*res));
	const char *reason = kv_get(&req->form, "reason");
	const char *policy = kv_get(&req->form, "policy");
	enum reversal_policy p;
	enum error_word e;
	int64_t id;

	if (res == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (str_to_i64(req->param[0], 1, INT64_MAX, &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	if (reason == NULL || policy == NULL ||
	    kv_count(&req->form, "reason") != 1 ||
	    kv_count(&req->form, "policy") != 1 ||
	    reversal_policy_parse(policy, &p) == -1)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "Give a reason (up to 500 characters) and a policy: "
		    "return_seat or keep_seat.");
	if (redeem_reverse(&req->svc, id, reason, p, res) == -1 ||
	    res->error == ERROR_UNAVAILABLE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (res->error == ERROR_BAD_REQUEST)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "Give a reason (up to 500 characters) and a policy: "
		    "return_seat or keep_seat.");
	if (res->error != ERROR_NONE)
		return admin_error(w, req, resp, res->error, NULL);
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "redemption.reverse",
	    arena_printf(req->a, "redemption %lld", (long long)id),
	    arena_printf(req->a, "%s: %s", policy, reason));
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    "The redemption was reversed, but the audit log could not "
		    "record it. Send the form again in a moment.");
	return resp_see_other(
	    resp, arena_printf(req->a, "/admin/redemptions?reversed=%lld",
		      (long long)id));
}
