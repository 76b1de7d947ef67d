/*
 * The dashboard's pages: sign in and out, the overview, the pages still
 * to come, and its error page. Server-rendered, no script: every form is
 * a plain POST that answers with a redirect (303) or a page, so it works
 * with JavaScript off and with a keyboard. The gate (admin_gate.c) has
 * checked the session, its tenant, the CSRF token and the role before a
 * handler here runs; the login form is the one page without a session.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "../core/admin.h"
#include "../core/audit.h"
#include "../core/session.h"
#include "../core/stats.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_page.h"
#include "chart.h"
#include "fmt.h"
#include "tmpl.h"
#include "web.h"

enum login_key { LK_FORM_EMAIL = AK__COMMON, LK_ERROR, LK_WORD, LK__MAX };
static const char *const login_keys[LK__MAX + 1] = {
    ADMIN_KEYS, "form_email", "error", "word", NULL};

enum aerror_key { AE_STATUS = AK__COMMON, AE_WORD, AE_MESSAGE, AE__MAX };
static const char *const aerror_keys[AE__MAX + 1] = {
    ADMIN_KEYS, "status", "word", "message", NULL};

enum placeholder_key { AP_WHAT = AK__COMMON, AP__MAX };
static const char *const placeholder_keys[AP__MAX + 1] = {
    ADMIN_KEYS, "what", NULL};

enum overview_key {
	OV_NOW = AK__COMMON,
	OV_TODAY,
	OV_WEEK,
	OV_MONTH,
	OV_CHART,
	OV_QUIET,
	OV_DAYS,
	OV_DAY_ISO,
	OV_DAY_TEXT,
	OV_COUNT,
	OV_HAS_TOP,
	OV_TOP,
	OV_NAME,
	OV_LIVE_HOLDS,
	OV_LEAKED,
	OV_LEAKED_WARN,
	OV_LEAKED_PERMITS,
	OV_LEAKED_HOLDS,
	OV_HAS_FAILING,
	OV_FAILING,
	OV_WID,
	OV_URL,
	OV_RETRYING,
	OV_DEAD,
	OV_ANSWER,
	OV_LAST_AT,
	OV__MAX
};
static const char *const overview_keys[OV__MAX + 1] = {ADMIN_KEYS, "now",
    "today", "week", "month", "chart", "quiet", "days", "day_iso", "day_text",
    "count", "has_top", "top", "name", "live_holds", "leaked", "leaked_warn",
    "leaked_permits", "leaked_holds", "has_failing", "failing", "wid", "url",
    "retrying", "dead", "answer", "last_at", NULL};

/* The nav, in order; what: the page to come, shown by its placeholder. */
struct admin_nav {
	const char *href, *label, *what;
};

static const struct admin_nav admin_nav[] = {
    {"/admin/", "Overview", NULL},
    {"/admin/campaigns", "Campaigns",
	"Campaigns: create and edit them (window, budget, per-account "
	"limit), close and reopen them, and see each one's numbers."},
    {"/admin/codes", "Codes",
	"Codes: search, filter, generate, import, export and revoke."},
    {"/admin/redemptions", "Redemptions",
	"Redemptions: find them by campaign, account and time, and reverse "
	"them."},
    {"/admin/semaphores", "Semaphores",
	"Semaphores: capacity, permits in use and who holds them."},
    {"/admin/leaked", "Leaked",
	"Leaked permits and holds: past their time and not released; "
	"release one or all."},
    {"/admin/webhooks", "Webhooks",
	"Webhooks: endpoints, deliveries and their answers, redelivery."},
    {"/admin/keys", "API keys", "API keys: create, revoke, last used."},
    {"/admin/audit", "Audit",
	"The audit log: every admin action, who, when and from where."},
};

struct tval **
admin_rows(struct arena *a, size_t n, size_t nkeys)
{
	struct tval **it = arena_alloc(a, (n > 0 ? n : 1) * sizeof(*it));
	size_t i;

	if (it == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if ((it[i] = arena_alloc(a, nkeys * sizeof(**it))) == NULL)
			return NULL;
	return it;
}

const char *
admin_form(struct req *req, const char *key)
{
	return kv_count(&req->form, key) > 1 ? NULL : kv_get(&req->form, key);
}

const char *
admin_query(struct req *req, const char *key, size_t max, int *bad)
{
	const char *v = kv_get(&req->q, key);

	if (kv_count(&req->q, key) > 1 || (v != NULL && strlen(v) > max))
		*bad = 1;
	return v != NULL && *v != '\0' ? v : NULL;
}

double
admin_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
load(struct web *w, enum web_page p, const char *dir, const char *file,
    const char *const *keys, size_t nkeys)
{
	char err[256];

	/* A key list one short would make the page's last key unknown to
	 * the templates: caught here, at start-up. */
	if (keys[nkeys] != NULL || keys[nkeys - 1] == NULL)
		errx(2, "templates: %s: the key list does not match its enum",
		    file);
	if ((w->page[p] = tmpl_load(dir, file, keys, err, sizeof(err))) == NULL)
		errx(2, "templates: %s", err);
}

void
admin_pages_load(struct web *w, const char *dir)
{
	load(w, PAGE_ADMIN_LOGIN, dir, "admin_login.html", login_keys, LK__MAX);
	load(
	    w, PAGE_ADMIN_ERROR, dir, "admin_error.html", aerror_keys, AE__MAX);
	load(w, PAGE_ADMIN_PLACEHOLDER, dir, "admin_placeholder.html",
	    placeholder_keys, AP__MAX);
	load(w, PAGE_ADMIN_OVERVIEW, dir, "admin_overview.html", overview_keys,
	    OV__MAX);
	admin_campaign_pages_load(w, dir);
	admin_codes_pages_load(w, dir);
	admin_jobs_pages_load(w, dir);
	admin_leases_pages_load(w, dir);
	admin_hooks_pages_load(w, dir);
}

void
admin_page_load(struct web *w, enum web_page p, const char *dir,
    const char *file, const char *const *keys, size_t nkeys)
{
	load(w, p, dir, file, keys, nkeys);
}

/*
 * The layout's values: the title, and with a session who is signed in,
 * the session's CSRF token for the sign-out form (and the page's own
 * forms), whether the role may change things, and the nav with current
 * marked. -1 when the arena is full.
 */
static int
layout(struct req *req, struct tval *v, size_t nkeys, const char *current,
    const char *title)
{
	const struct session *s = req->sess;
	struct tval **it;
	size_t i;

	v[AK_TITLE] = tv(title);
	if (s == NULL)
		return 0;
	v[AK_EMAIL] = tv(s->email);
	v[AK_ROLE] = tv(admin_role_name(s->role));
	v[AK_TENANT] = tv(s->tenant);
	v[AK_CSRF] = tv(s->csrf);
	v[AK_CAN_WRITE] = tv(session_can_write(s) ? "1" : NULL);
	if ((it = admin_rows(req->a, NELEM(admin_nav), nkeys)) == NULL)
		return -1;
	for (i = 0; i < NELEM(admin_nav); i++) {
		it[i][AK_HREF] = tv(admin_nav[i].href);
		it[i][AK_LABEL] = tv(admin_nav[i].label);
		if (current != NULL && strcmp(current, admin_nav[i].href) == 0)
			it[i][AK_CURRENT] = tv("1");
	}
	v[AK_NAV] = tv_list(it, NELEM(admin_nav));
	return 0;
}

static int
render(struct web *w, struct resp *resp, enum web_page p, const struct tval *v,
    int status)
{
	buf_reset(&resp->body);
	resp->ctype = "text/html; charset=utf-8";
	resp->status = status;
	if (tmpl_render(w->page[p], v, &resp->body) == -1) {
		resp->retry_after = 2;
		return resp_text(resp, 503, "unavailable\n");
	}
	return status;
}

int
admin_page_layout(struct req *req, struct tval *v, size_t nkeys,
    const char *current, const char *title)
{
	return layout(req, v, nkeys, current, title);
}

int
admin_page_render(struct web *w, struct resp *resp, enum web_page p,
    const struct tval *v, int status)
{
	return render(w, resp, p, v, status);
}

/* What the dashboard says for each word: to an admin, in plain words. */
static const char *
admin_sentence(enum error_word e)
{
	switch (e) {
	case ERROR_NOT_FOUND:
		return "There is nothing at this address in the dashboard, or "
		       "it belongs to another tenant.";
	case ERROR_METHOD_NOT_ALLOWED:
		return "This page cannot be used that way.";
	case ERROR_UNAUTHORIZED:
		return "You are not signed in, or your session has ended.";
	case ERROR_FORBIDDEN:
		return "You may not do this here; nothing was changed.";
	case ERROR_BAD_REQUEST:
		return "The form was not filled in as it should be.";
	case ERROR_TOO_LARGE:
		return "What you sent is too large.";
	case ERROR_RATE_LIMITED:
		return "Too many attempts. Wait a little and try again.";
	case ERROR_UNAVAILABLE:
		return "The service is busy right now. Try again in a moment.";
	default:
		return error_sentence(e);
	}
}

int
admin_error(struct web *w, struct req *req, struct resp *resp,
    enum error_word e, const char *message)
{
	struct tval v[AE__MAX] = {0};
	char status[8];
	int code = error_http_status(e);

	if (e == ERROR_UNAVAILABLE && resp->retry_after <= 0)
		resp->retry_after = 2;
	if (e == ERROR_RATE_LIMITED && resp->retry_after <= 0)
		resp->retry_after = 60;
	snprintf(status, sizeof(status), "%d", code);
	if (layout(req, v, AE__MAX, NULL, http_reason(code)) == -1)
		return resp_text(resp, 503, "unavailable\n");
	v[AE_STATUS] = tv(status);
	v[AE_WORD] = tv(error_name(e));
	v[AE_MESSAGE] = tv(message != NULL ? message : admin_sentence(e));
	return render(w, resp, PAGE_ADMIN_ERROR, v, code);
}

int
h_admin_root(struct web *w, struct req *req, struct resp *resp)
{
	(void)w;
	(void)req;
	return resp_redirect(resp, "/admin/");
}

/* ---- signing in and out ---- */

static int
render_login(struct web *w, struct req *req, struct resp *resp, struct tval *v,
    int status)
{
	if (layout(req, v, LK__MAX, NULL, "Sign in") == -1 ||
	    (v[AK_CSRF].s = web_csrf_token(w, req, resp)) == NULL)
		return resp_text(resp, 503, "unavailable\n");
	v[AK_CSRF].type = TV_STR;
	return render(w, resp, PAGE_ADMIN_LOGIN, v, status);
}

int
h_admin_login_form(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[LK__MAX] = {0};
	enum error_word e = admin_session_load(w, req);

	/* Signed in already: the dashboard. */
	if (e == ERROR_NONE)
		return resp_see_other(resp, "/admin/");
	req->sess = NULL;
	return render_login(w, req, resp, v, 200);
}

/* "about 3 minutes": how long a throttled sign-in waits. */
static const char *
wait_words(struct arena *a, int64_t s)
{
	if (s <= 60)
		return "a minute";
	if (s < 3600)
		return arena_printf(
		    a, "about %lld minutes", (long long)((s + 59) / 60));
	return arena_printf(
	    a, "about %lld hours", (long long)((s + 3599) / 3600));
}

int
h_admin_login(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[LK__MAX] = {0};
	struct session *sess;
	char token[SESSION_TOKEN_LEN + 1];
	const char *email = kv_get(&req->form, "email");
	const char *password = kv_get(&req->form, "password");
	const char *old;
	int64_t retry = 0;
	enum error_word e;

	req->sess = NULL; /* the form is shown as to someone signed out */
	if (email != NULL && strlen(email) <= 254)
		v[LK_FORM_EMAIL] = tv(email);
	if (!web_csrf_check(w, req)) {
		v[LK_WORD] = tv(error_name(ERROR_FORBIDDEN));
		v[LK_ERROR] = tv("The sign-in form had expired. Please sign "
				 "in again.");
		return render_login(w, req, resp, v, 403);
	}
	if (email == NULL || password == NULL || *email == '\0' ||
	    *password == '\0' || kv_count(&req->form, "email") != 1 ||
	    kv_count(&req->form, "password") != 1 || strlen(email) > 254 ||
	    strlen(password) > ADMIN_PASSWORD_MAX) {
		v[LK_WORD] = tv(error_name(ERROR_BAD_REQUEST));
		v[LK_ERROR] = tv("Enter your e-mail address and your "
				 "password.");
		return render_login(w, req, resp, v, 400);
	}
	if ((sess = arena_alloc(req->a, sizeof(*sess))) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* The cookie sent with the form, whatever it holds, is ended by
	 * the login: the session gets a token nobody saw before. */
	cookie_parse(req->a, req->cookie_header, &req->cookie);
	old = kv_get(&req->cookie, ADMIN_COOKIE);
	if (old != NULL && strlen(old) != SESSION_TOKEN_LEN)
		old = NULL;
	e = session_login(
	    w->db, email, password, req->client, old, token, sess, &retry);
	switch (e) {
	case ERROR_NONE:
		admin_cookie_set(w, resp, token);
		sodium_memzero(token, sizeof(token));
		return resp_see_other(resp, "/admin/");
	case ERROR_UNAUTHORIZED:
		v[LK_WORD] = tv(error_name(e));
		v[LK_ERROR] = tv("That e-mail address and password do not "
				 "match an account that may sign in.");
		return render_login(w, req, resp, v, 401);
	case ERROR_RATE_LIMITED:
		resp->retry_after = retry > 0 ? retry : 60;
		v[LK_WORD] = tv(error_name(e));
		v[LK_ERROR] = tv(arena_printf(req->a,
		    "Too many sign-ins failed. Wait %s and try again.",
		    wait_words(req->a, resp->retry_after)));
		return render_login(w, req, resp, v, 429);
	case ERROR_BAD_REQUEST:
		v[LK_WORD] = tv(error_name(e));
		v[LK_ERROR] = tv("Enter your e-mail address and your "
				 "password.");
		return render_login(w, req, resp, v, 400);
	default:
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	}
}

int
h_admin_logout(struct web *w, struct req *req, struct resp *resp)
{
	if (session_end(w->db, req->sess_token) == ERROR_UNAVAILABLE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* The session has ended either way: a lost audit row is logged by
	 * audit_write, and the admin is still signed out. */
	(void)audit_write(&req->svc, req->sess->admin_id, req->client,
	    "admin.logout", req->sess->email, NULL);
	admin_cookie_clear(w, resp);
	return resp_see_other(resp, "/admin/login");
}

/* ---- the overview ---- */

/* "HTTP 500: text", "No answer: text", "HTTP 502". */
static const char *
answer_words(struct arena *a, const struct stats_endpoint *e)
{
	if (e->last_status > 0 && e->last_error[0] != '\0')
		return arena_printf(
		    a, "HTTP %d: %s", e->last_status, e->last_error);
	if (e->last_status > 0)
		return arena_printf(a, "HTTP %d", e->last_status);
	if (e->last_error[0] != '\0')
		return arena_printf(a, "No answer: %s", e->last_error);
	return "No answer";
}

/* The chart and its table: one bar and one row per day. */
static int
overview_days(struct req *req, const struct stats_overview *o, struct tval *v)
{
	const char *tip[STATS_DAYS], *tick[STATS_DAYS];
	char day[16], iso[32], n[FMT_COUNT_MAX];
	struct tval **it;
	struct buf svg;
	size_t i;
	int rc;

	if ((it = admin_rows(req->a, STATS_DAYS, OV__MAX)) == NULL)
		return -1;
	for (i = 0; i < STATS_DAYS; i++) {
		int64_t t = o->day0 + (int64_t)i * 86400;

		fmt_day(t, day);
		fmt_count(o->per_day[i], n);
		str_rfc3339(t, iso);
		iso[10] = '\0'; /* the date alone */
		tip[i] = arena_printf(req->a, "%s: %s redemption%s", day, n,
		    o->per_day[i] == 1 ? "" : "s");
		/* A tick every 7 days, counted back from today. */
		tick[i] = NULL;
		if (i == STATS_DAYS - 1)
			tick[i] = "today";
		else if ((STATS_DAYS - 1 - i) % 7 == 0)
			tick[i] = arena_strdup(req->a, day);
		it[i][OV_DAY_ISO] = tv(arena_strdup(req->a, iso));
		it[i][OV_DAY_TEXT] = tv(arena_strdup(req->a, day));
		it[i][OV_COUNT] = tv(arena_strdup(req->a, n));
	}
	if (arena_err(req->a))
		return -1;
	/* The newest day first in the table; the chart reads left to
	 * right. */
	for (i = 0; i < STATS_DAYS / 2; i++) {
		struct tval *x = it[i];

		it[i] = it[STATS_DAYS - 1 - i];
		it[STATS_DAYS - 1 - i] = x;
	}
	v[OV_DAYS] = tv_list(it, STATS_DAYS);
	buf_init(&svg, 256 * 1024);
	rc = chart_bars(&svg, o->per_day, STATS_DAYS, tip, tick, "chart-title");
	if (rc == 0 && !svg.err)
		v[OV_CHART] = tv_raw(arena_strndup(req->a, svg.data, svg.len));
	buf_free(&svg);
	return rc == 0 && v[OV_CHART].type == TV_RAW ? 0 : -1;
}

static int
overview_values(struct req *req, const struct stats_overview *o, struct tval *v)
{
	struct arena *a = req->a;
	struct tval **it;
	size_t i;

	v[OV_NOW] = tv_raw(fmt_time_html(a, o->now));
	v[OV_TODAY] = tv(fmt_count_a(a, o->today));
	v[OV_WEEK] = tv(fmt_count_a(a, o->week));
	v[OV_MONTH] = tv(fmt_count_a(a, o->month));
	v[OV_QUIET] = tv(o->month == 0 ? "1" : NULL);
	if (overview_days(req, o, v) == -1)
		return -1;

	if ((it = admin_rows(a, o->ntop, OV__MAX)) == NULL)
		return -1;
	for (i = 0; i < o->ntop; i++) {
		it[i][OV_NAME] = tv(arena_strdup(a, o->top[i].name));
		it[i][OV_COUNT] = tv(fmt_count_a(a, o->top[i].redemptions));
	}
	v[OV_TOP] = tv_list(it, o->ntop);
	v[OV_HAS_TOP] = tv(o->ntop > 0 ? "1" : NULL);

	v[OV_LIVE_HOLDS] = tv(fmt_count_a(a, o->live_holds));
	v[OV_LEAKED] = tv(fmt_count_a(a, o->leaked_permits + o->leaked_holds));
	v[OV_LEAKED_PERMITS] = tv(fmt_count_a(a, o->leaked_permits));
	v[OV_LEAKED_HOLDS] = tv(fmt_count_a(a, o->leaked_holds));
	v[OV_LEAKED_WARN] =
	    tv(o->leaked_permits + o->leaked_holds > 0 ? "1" : NULL);

	if ((it = admin_rows(a, o->nfailing, OV__MAX)) == NULL)
		return -1;
	for (i = 0; i < o->nfailing; i++) {
		const struct stats_endpoint *e = &o->failing[i];

		it[i][OV_WID] = tv(arena_printf(a, "%lld", (long long)e->id));
		it[i][OV_URL] = tv(arena_strdup(a, e->url));
		it[i][OV_RETRYING] = tv(fmt_count_a(a, e->retrying));
		it[i][OV_DEAD] = tv(fmt_count_a(a, e->dead));
		it[i][OV_ANSWER] = tv(answer_words(a, e));
		it[i][OV_LAST_AT] =
		    tv_raw(fmt_time_html(a, e->last_attempt_at));
	}
	v[OV_FAILING] = tv_list(it, o->nfailing);
	v[OV_HAS_FAILING] = tv(o->nfailing > 0 ? "1" : NULL);
	return arena_err(a) ? -1 : 0;
}

int
h_admin_overview(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[OV__MAX] = {0};
	struct stats_overview *o = arena_alloc(req->a, sizeof(*o));

	if (o == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (stats_overview(&req->svc, o) != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (layout(req, v, OV__MAX, "/admin/", "Overview") == -1 ||
	    overview_values(req, o, v) == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return render(w, resp, PAGE_ADMIN_OVERVIEW, v, 200);
}

/* ---- the pages to come ---- */

int
h_admin_placeholder(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[AP__MAX] = {0};
	const struct admin_nav *n = NULL;
	size_t i;

	for (i = 0; i < NELEM(admin_nav) && n == NULL; i++)
		if (strcmp(req->path, admin_nav[i].href) == 0)
			n = &admin_nav[i];
	if (n == NULL)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	if (layout(req, v, AP__MAX, n->href, n->label) == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	v[AP_WHAT] = tv(n->what);
	return render(w, resp, PAGE_ADMIN_PLACEHOLDER, v, 200);
}
