/*
 * The dashboard's webhooks and API keys: the endpoints with their
 * numbers, adding one, rotating its secret, disabling it; an endpoint's
 * deliveries (keyset pages, a state filter) and redelivering one or all
 * dead; the API keys, creating one and revoking one. A new secret or key
 * is shown once, on the page that answers the POST (every answer is
 * Cache-Control: no-store), and never again. Every change is audited
 * after it is made. The gate has checked the session, the tenant, the
 * CSRF token and the role before a handler here runs.
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "../core/admin_hooks.h"
#include "../core/apikey.h"
#include "../core/audit.h"
#include "../core/session.h"
#include "../core/webhooks.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_page.h"
#include "fmt.h"
#include "tmpl.h"
#include "web.h"

#define KEYS_MAX 1000 /* API keys listed at most */

enum hooks_key {
	HK_ROWS = AK__COMMON,
	HK_HAS_ROWS,
	HK_WID,
	HK_URL,
	HK_ENABLED,
	HK_CREATED,
	HK_DISABLED,
	HK_PENDING,
	HK_DEAD,
	HK_DELIVERED,
	HK_ANSWER,
	HK_NOTICE,
	HK__MAX
};
static const char *const hooks_keys[HK__MAX + 1] = {ADMIN_KEYS, "rows",
    "has_rows", "wid", "url", "enabled", "created", "disabled", "pending",
    "dead", "delivered", "answer", "notice", NULL};

enum hook_key {
	WK_WID = AK__COMMON,
	WK_URL,
	WK_ENABLED,
	WK_CREATED,
	WK_DISABLED,
	WK_PENDING,
	WK_DEAD,
	WK_DELIVERED,
	WK_ANSWER,
	WK_STATES,
	WK_VALUE,
	WK_SELECTED,
	WK_ROWS,
	WK_DID,
	WK_EVENT,
	WK_TYPE,
	WK_STATE,
	WK_ATTEMPTS,
	WK_NEXT,
	WK_LAST_AT,
	WK_STATUS,
	WK_ERROR,
	WK_AT,
	WK_DONE_AT,
	WK_REDELIVERABLE,
	WK_HAS_ROWS,
	WK_NEXT_HREF,
	WK_FIRST_HREF,
	WK_NOTICE,
	WK__MAX
};
static const char *const hook_keys[WK__MAX + 1] = {ADMIN_KEYS, "wid", "url",
    "enabled", "created", "disabled", "pending", "dead", "delivered", "answer",
    "states", "value", "selected", "rows", "did", "event", "type", "state",
    "attempts", "next", "last_at", "status", "error", "at", "done_at",
    "redeliverable", "has_rows", "next_href", "first_href", "notice", NULL};

enum secret_key {
	SK_WHAT = AK__COMMON,
	SK_NAME,
	SK_SECRET,
	SK_NOTE,
	SK_BACK_HREF,
	SK_BACK_LABEL,
	SK__MAX
};
static const char *const secret_keys[SK__MAX + 1] = {ADMIN_KEYS, "what", "name",
    "secret", "note", "back_href", "back_label", NULL};

enum keys_key {
	KK_ROWS = AK__COMMON,
	KK_HAS_ROWS,
	KK_KID,
	KK_LOOKUP,
	KK_SCOPE,
	KK_LABEL_TEXT,
	KK_CREATED,
	KK_LAST_USED,
	KK_REVOKED,
	KK_NOTICE,
	KK__MAX
};
static const char *const keys_keys[KK__MAX + 1] = {ADMIN_KEYS, "rows",
    "has_rows", "kid", "lookup", "scope", "label_text", "created", "last_used",
    "revoked", "notice", NULL};

void
admin_hooks_pages_load(struct web *w, const char *dir)
{
	admin_page_load(w, PAGE_ADMIN_WEBHOOKS, dir, "admin_webhooks.html",
	    hooks_keys, HK__MAX);
	admin_page_load(w, PAGE_ADMIN_WEBHOOK, dir, "admin_webhook.html",
	    hook_keys, WK__MAX);
	admin_page_load(w, PAGE_ADMIN_SECRET, dir, "admin_secret.html",
	    secret_keys, SK__MAX);
	admin_page_load(
	    w, PAGE_ADMIN_KEYS, dir, "admin_keys.html", keys_keys, KK__MAX);
}

/* A path's id: not a number is nothing of this tenant's either. */
static int
path_id(const char *s, int64_t *id)
{
	return s != NULL ? str_to_i64(s, 1, INT64_MAX, id) : -1;
}

/* "HTTP 500: text", "No answer: text", "HTTP 502", or NULL for none. */
static const char *
answer_words(struct arena *a, int status, const char *error)
{
	if (status > 0 && error[0] != '\0')
		return arena_printf(a, "HTTP %d: %s", status, error);
	if (status > 0)
		return arena_printf(a, "HTTP %d", status);
	if (error[0] != '\0')
		return arena_printf(a, "No answer: %s", error);
	return NULL;
}

/* ---- the shown-once page ---- */

/* The endpoint's URL for the audit log (webhook_url_public). */
static const char *
url_public(struct arena *a, const char *url)
{
	char out[WEBHOOK_URL_MAX + 1];

	webhook_url_public(url, out, sizeof(out));
	return arena_strdup(a, out);
}

static int
secret_page(struct web *w, struct req *req, struct resp *resp,
    const char *title, const char *name, const char *secret, const char *note,
    const char *back_href, const char *back_label, const char *current)
{
	struct tval v[SK__MAX] = {0};

	if (admin_page_layout(req, v, SK__MAX, current, title) == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	v[SK_WHAT] = tv(title);
	v[SK_NAME] = tv(name);
	v[SK_SECRET] = tv(secret);
	v[SK_NOTE] = tv(note);
	v[SK_BACK_HREF] = tv(back_href);
	v[SK_BACK_LABEL] = tv(back_label);
	return admin_page_render(w, resp, PAGE_ADMIN_SECRET, v, 200);
}

/* ---- the endpoints ---- */

struct hooks_run {
	struct webhook *w;
	size_t n, cap;
};

static void
hook_collect(void *arg, const struct webhook *w)
{
	struct hooks_run *u = arg;

	if (u->n < u->cap)
		u->w[u->n++] = *w;
}

int
h_admin_webhooks(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[HK__MAX] = {0};
	struct hooks_run u = {.cap = ADMIN_HOOKS_ENDPOINTS};
	struct admin_hook_counts c;
	struct arena *a = req->a;
	struct tval **rows;
	const char *disabled;
	enum error_word e;
	int64_t n;
	size_t i;
	int bad = 0;

	disabled = admin_query(req, "disabled", 20, &bad);
	if (bad)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST, NULL);
	if ((u.w = arena_alloc(a, u.cap * sizeof(*u.w))) == NULL ||
	    admin_page_layout(req, v, HK__MAX, "/admin/webhooks", "Webhooks") ==
		-1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if ((e = webhook_list(&req->svc, hook_collect, &u)) != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if ((rows = admin_rows(a, u.n, HK__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	for (i = 0; i < u.n; i++) {
		const struct webhook *h = &u.w[i];
		struct tval *r = rows[i];

		if (admin_hook_counts(&req->svc, h->id, &c) != ERROR_NONE)
			return admin_error(
			    w, req, resp, ERROR_UNAVAILABLE, NULL);
		r[HK_WID] = tv(arena_printf(a, "%lld", (long long)h->id));
		r[HK_URL] = tv(arena_strdup(a, h->url));
		r[HK_ENABLED] = tv(h->enabled ? "1" : NULL);
		r[HK_CREATED] = tv_raw(fmt_time_html(a, h->created_at));
		if (h->disabled_at > 0)
			r[HK_DISABLED] =
			    tv_raw(fmt_time_html(a, h->disabled_at));
		r[HK_PENDING] = tv(fmt_count_a(a, c.pending));
		r[HK_DEAD] = tv(fmt_count_a(a, c.dead));
		r[HK_DELIVERED] = tv(fmt_count_a(a, c.delivered_day));
		r[HK_ANSWER] = tv(answer_words(a, c.last_status, c.last_error));
	}
	v[HK_ROWS] = tv_list(rows, u.n);
	v[HK_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (disabled != NULL && str_to_i64(disabled, 1, INT64_MAX, &n) == 0)
		v[HK_NOTICE] = tv(arena_printf(a,
		    "Endpoint %lld is disabled; its pending deliveries ended "
		    "dead.",
		    (long long)n));
	if (arena_err(a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_WEBHOOKS, v, 200);
}

static const char *const secret_note =
    "Copy it now: this is the only time it is shown. Receivers check the "
    "Redeem-Signature header with it (HMAC-SHA256 of \"<t>.<body>\").";

int
h_admin_webhook_create(struct web *w, struct req *req, struct resp *resp)
{
	const char *url = admin_form(req, "url");
	struct webhook *wh = arena_alloc(req->a, sizeof(*wh));
	char secret[WEBHOOK_SECRET_MAX];
	enum error_word e;
	int status;

	if (wh == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (url == NULL || !webhook_url_ok(url))
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "Give the endpoint's URL: http:// or https://, a host, an "
		    "optional port, up to 2,048 characters, no user name.");
	e = webhook_create(&req->svc, url, secret, wh);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	/* Made, then recorded; a failed record is told, with the secret
	 * still shown (there is no other chance to see it). */
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "webhook.create",
	    arena_printf(req->a, "webhook %lld", (long long)wh->id),
	    url_public(req->a, wh->url));
	status = secret_page(w, req, resp, "New webhook endpoint",
	    arena_printf(
		req->a, "Endpoint %lld: %s", (long long)wh->id, wh->url),
	    secret,
	    e == ERROR_NONE ? secret_note
			    : "Copy it now: this is the only time it is shown. "
			      "The audit log could not record the change.",
	    arena_printf(req->a, "/admin/webhooks/%lld", (long long)wh->id),
	    "The endpoint's deliveries", "/admin/webhooks");
	sodium_memzero(secret, sizeof(secret));
	return status;
}

int
h_admin_webhook_rotate(struct web *w, struct req *req, struct resp *resp)
{
	struct webhook *wh = arena_alloc(req->a, sizeof(*wh));
	char secret[WEBHOOK_SECRET_MAX];
	enum error_word e;
	int64_t id;
	int status;

	if (wh == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (path_id(req->param[0], &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	if ((e = webhook_get(&req->svc, id, wh)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if ((e = webhook_rotate(&req->svc, id, secret)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "webhook.rotate",
	    arena_printf(req->a, "webhook %lld", (long long)id),
	    url_public(req->a, wh->url));
	status = secret_page(w, req, resp, "New webhook secret",
	    arena_printf(req->a, "Endpoint %lld: %s", (long long)id, wh->url),
	    secret,
	    e == ERROR_NONE
		? "Copy it now: this is the only time it is shown. Every "
		  "attempt from now on, retries included, is signed with it; "
		  "the old secret no longer signs anything."
		: "Copy it now: this is the only time it is shown. The audit "
		  "log could not record the change.",
	    arena_printf(req->a, "/admin/webhooks/%lld", (long long)id),
	    "The endpoint's deliveries", "/admin/webhooks");
	sodium_memzero(secret, sizeof(secret));
	return status;
}

int
h_admin_webhook_disable(struct web *w, struct req *req, struct resp *resp)
{
	struct webhook *wh = arena_alloc(req->a, sizeof(*wh));
	const char *next = admin_form(req, "next");
	int64_t id;
	enum error_word e;

	if (wh == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (path_id(req->param[0], &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	e = webhook_disable(&req->svc, id, wh);
	if (e == ERROR_NOT_FOUND)
		return admin_error(w, req, resp, e, NULL);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* The change is made; the record of it is written after (the core
	 * has no transaction that spans both). If the record fails the
	 * admin is told and can send the form again: disabling is
	 * idempotent and the next try writes the record. */
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "webhook.disable",
	    arena_printf(req->a, "webhook %lld", (long long)id),
	    url_public(req->a, wh->url));
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    "The endpoint was disabled, but the audit log could not "
		    "record it. Send the form again in a moment.");
	/* Back where the form was: the webhooks page says so, the overview
	 * (its failing list) by default. */
	if (next != NULL && strcmp(next, "webhooks") == 0)
		return resp_see_other(
		    resp, arena_printf(req->a, "/admin/webhooks?disabled=%lld",
			      (long long)id));
	return resp_see_other(resp, "/admin/");
}

/* ---- an endpoint's deliveries ---- */

struct hook_run {
	struct arena *a;
	struct tval **rows;
	size_t n;
	int64_t last_id;
	int enabled;
};

static void
delivery_row(void *arg, const struct delivery *d)
{
	struct hook_run *u = arg;
	struct tval *v = u->rows[u->n++];
	struct arena *a = u->a;

	v[WK_DID] = tv(arena_printf(a, "%lld", (long long)d->id));
	v[WK_EVENT] = tv(arena_strdup(a, d->event));
	v[WK_TYPE] = tv(arena_strdup(a, d->type));
	v[WK_STATE] = tv(delivery_state_name(d->state));
	v[WK_ATTEMPTS] = tv(fmt_count_a(a, d->attempts));
	if (d->state == DELIVERY_PENDING)
		v[WK_NEXT] = tv_raw(fmt_time_html(a, d->next_attempt_at));
	if (d->last_attempt_at > 0)
		v[WK_LAST_AT] = tv_raw(fmt_time_html(a, d->last_attempt_at));
	if (d->last_status > 0)
		v[WK_STATUS] = tv(arena_printf(a, "%d", d->last_status));
	v[WK_ERROR] = tv(arena_strdup(a, d->last_error));
	v[WK_AT] = tv_raw(fmt_time_html(a, d->created_at));
	if (d->delivered_at > 0)
		v[WK_DONE_AT] = tv_raw(fmt_time_html(a, d->delivered_at));
	if (u->enabled && d->state != DELIVERY_PENDING)
		v[WK_REDELIVERABLE] = tv("1");
	u->last_id = d->id;
}

static int
hook_facts(struct req *req, const struct webhook *wh, struct tval *v)
{
	struct admin_hook_counts c;
	struct arena *a = req->a;

	if (admin_hook_counts(&req->svc, wh->id, &c) != ERROR_NONE)
		return -1;
	v[WK_WID] = tv(arena_printf(a, "%lld", (long long)wh->id));
	v[WK_URL] = tv(wh->url);
	v[WK_ENABLED] = tv(wh->enabled ? "1" : NULL);
	v[WK_CREATED] = tv_raw(fmt_time_html(a, wh->created_at));
	if (wh->disabled_at > 0)
		v[WK_DISABLED] = tv_raw(fmt_time_html(a, wh->disabled_at));
	v[WK_PENDING] = tv(fmt_count_a(a, c.pending));
	v[WK_DEAD] = tv(fmt_count_a(a, c.dead));
	v[WK_DELIVERED] = tv(fmt_count_a(a, c.delivered_day));
	v[WK_ANSWER] = tv(answer_words(a, c.last_status, c.last_error));
	return 0;
}

int
h_admin_webhook(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[WK__MAX] = {0};
	struct webhook *wh = arena_alloc(req->a, sizeof(*wh));
	struct hook_run u = {.a = req->a};
	struct arena *a = req->a;
	enum delivery_state ds;
	const char *state, *before, *notice;
	struct tval **st;
	enum error_word e;
	int64_t id, before_id = 0, n;
	int bad = 0, more = 0;
	size_t i;

	if (wh == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (path_id(req->param[0], &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	state = admin_query(req, "state", 16, &bad);
	before = admin_query(req, "before", 20, &bad);
	notice = admin_query(req, "redelivered", 20, &bad);
	if (bad || (state != NULL && delivery_state_parse(state, &ds) == -1) ||
	    (before != NULL &&
		str_to_i64(before, 1, INT64_MAX, &before_id) == -1))
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "The filters are not valid: a state is one of pending, "
		    "delivered, dead.");
	if ((e = webhook_get(&req->svc, id, wh)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	u.enabled = wh->enabled;
	if (admin_page_layout(req, v, WK__MAX, "/admin/webhooks",
		arena_printf(a, "Webhook endpoint %lld", (long long)id)) ==
		-1 ||
	    (u.rows = admin_rows(a, ADMIN_HOOKS_PAGE, WK__MAX)) == NULL ||
	    (st = admin_rows(a, DELIVERY__MAX, WK__MAX)) == NULL ||
	    hook_facts(req, wh, v) == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	e = admin_hook_deliveries(&req->svc, id, state != NULL ? &ds : NULL,
	    before_id, delivery_row, &u, &more);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	for (i = 0; i < DELIVERY__MAX; i++) {
		st[i][WK_VALUE] = tv(delivery_state_name(i));
		if (state != NULL && ds == i)
			st[i][WK_SELECTED] = tv("1");
	}
	v[WK_STATES] = tv_list(st, DELIVERY__MAX);
	v[WK_ROWS] = tv_list(u.rows, u.n);
	v[WK_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (more)
		v[WK_NEXT_HREF] = tv(arena_printf(a,
		    "/admin/webhooks/%lld?state=%s&before=%lld", (long long)id,
		    state != NULL ? state : "", (long long)u.last_id));
	if (before_id > 0)
		v[WK_FIRST_HREF] =
		    tv(arena_printf(a, "/admin/webhooks/%lld?state=%s",
			(long long)id, state != NULL ? state : ""));
	if (notice != NULL && str_to_i64(notice, 0, INT64_MAX, &n) == 0)
		v[WK_NOTICE] = tv(arena_printf(a,
		    "%s deliver%s sent back to pending: the sweeper tries "
		    "them now.",
		    fmt_count_a(a, n), n == 1 ? "y" : "ies"));
	if (arena_err(a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_WEBHOOK, v, 200);
}

static const char *const disabled_words =
    "This endpoint is disabled: a delivery sent to it would end dead at "
    "once. Nothing was changed.";

/* After a redelivery: the audit row, then back to the endpoint. */
static int
redelivered(struct web *w, struct req *req, struct resp *resp, int64_t id,
    const char *action, const char *detail, int64_t n)
{
	enum error_word e;

	e = audit_write(&req->svc, req->sess->admin_id, req->client, action,
	    arena_printf(req->a, "webhook %lld", (long long)id),
	    arena_printf(req->a, "%s: %lld redelivered", detail, (long long)n));
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    "The deliveries are pending again, but the audit log "
		    "could not record it.");
	return resp_see_other(
	    resp, arena_printf(req->a, "/admin/webhooks/%lld?redelivered=%lld",
		      (long long)id, (long long)n));
}

int
h_admin_delivery_redeliver(struct web *w, struct req *req, struct resp *resp)
{
	enum error_word e;
	int64_t id, did, n;

	if (path_id(req->param[0], &id) == -1 ||
	    path_id(req->param[1], &did) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	e = admin_hook_redeliver(&req->svc, id, did, &n);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e,
		    e == ERROR_CONFLICT ? disabled_words : NULL);
	return redelivered(w, req, resp, id, "webhook.redeliver",
	    arena_printf(req->a, "delivery %lld", (long long)did), n);
}

int
h_admin_webhook_redeliver_dead(
    struct web *w, struct req *req, struct resp *resp)
{
	enum error_word e;
	int64_t id, n;

	if (path_id(req->param[0], &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	e = admin_hook_redeliver_dead(&req->svc, id, &n);
	if (e == ERROR_UNAVAILABLE && n > 0)
		return admin_error(w, req, resp, e,
		    "Part of the dead deliveries are pending again; the rest "
		    "are not. Send the form again in a moment.");
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e,
		    e == ERROR_CONFLICT ? disabled_words : NULL);
	return redelivered(
	    w, req, resp, id, "webhook.redeliver_dead", "all dead", n);
}

/* ---- API keys ---- */

struct keys_run {
	struct apikey *k;
	size_t n, cap, more;
};

static void
key_collect(void *arg, const struct apikey *k)
{
	struct keys_run *u = arg;

	if (u->n < u->cap)
		u->k[u->n++] = *k;
	else
		u->more++;
}

int
h_admin_keys(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[KK__MAX] = {0};
	struct keys_run u = {.cap = KEYS_MAX};
	struct arena *a = req->a;
	struct tval **rows;
	const char *revoked;
	int64_t n;
	size_t i;
	int bad = 0;

	revoked = admin_query(req, "revoked", 20, &bad);
	if (bad)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST, NULL);
	if ((u.k = arena_alloc(a, u.cap * sizeof(*u.k))) == NULL ||
	    admin_page_layout(req, v, KK__MAX, "/admin/keys", "API keys") == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (apikey_list(&req->svc, key_collect, &u) != ERROR_NONE ||
	    (rows = admin_rows(a, u.n, KK__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	for (i = 0; i < u.n; i++) {
		const struct apikey *k = &u.k[i];
		struct tval *r = rows[i];

		r[KK_KID] = tv(arena_printf(a, "%lld", (long long)k->id));
		r[KK_LOOKUP] = tv(arena_printf(a, "rdm_%s_", k->lookup));
		r[KK_SCOPE] = tv(apikey_scope_name(k->scope));
		r[KK_LABEL_TEXT] = tv(arena_strdup(a, k->label));
		r[KK_CREATED] = tv_raw(fmt_time_html(a, k->created_at));
		if (k->last_used_at > 0)
			r[KK_LAST_USED] =
			    tv_raw(fmt_time_html(a, k->last_used_at));
		if (k->revoked_at > 0)
			r[KK_REVOKED] = tv_raw(fmt_time_html(a, k->revoked_at));
	}
	v[KK_ROWS] = tv_list(rows, u.n);
	v[KK_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (revoked != NULL && str_to_i64(revoked, 1, INT64_MAX, &n) == 0)
		v[KK_NOTICE] = tv(arena_printf(a,
		    "Key %lld is revoked: the API refuses it from now on.",
		    (long long)n));
	else if (u.more > 0)
		v[KK_NOTICE] = tv(arena_printf(a,
		    "The first %d keys are shown; %s more are not.", KEYS_MAX,
		    fmt_count_a(a, (int64_t)u.more)));
	if (arena_err(a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_KEYS, v, 200);
}

int
h_admin_key_create(struct web *w, struct req *req, struct resp *resp)
{
	const char *scope = admin_form(req, "scope");
	const char *label = admin_form(req, "label");
	struct apikey *k = arena_alloc(req->a, sizeof(*k));
	char text[APIKEY_TEXT_MAX];
	enum apikey_scope sc;
	enum error_word e;
	int status;

	if (k == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (scope == NULL || apikey_scope_parse(scope, &sc) == -1 ||
	    kv_count(&req->form, "label") > 1 ||
	    (label != NULL && strlen(label) > APIKEY_LABEL_MAX))
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "Choose a scope, redeem or admin, and a label of up to "
		    "100 characters (or none).");
	e = apikey_create(&req->svc, sc, label, text, k);
	if (e == ERROR_BAD_REQUEST)
		return admin_error(w, req, resp, e,
		    "The label must be text of up to 100 characters.");
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "apikey.create",
	    arena_printf(
		req->a, "key %lld rdm_%s_", (long long)k->id, k->lookup),
	    arena_printf(req->a, "scope %s%s%s", apikey_scope_name(sc),
		k->label[0] ? ", label " : "", k->label));
	status = secret_page(w, req, resp, "New API key",
	    arena_printf(req->a, "Key %lld, scope %s%s%s", (long long)k->id,
		apikey_scope_name(sc), k->label[0] ? ": " : "", k->label),
	    text,
	    e == ERROR_NONE
		? "Copy it now: this is the only time it is shown (only a "
		  "hash is stored). Send it as Authorization: Bearer <key>."
		: "Copy it now: this is the only time it is shown. The audit "
		  "log could not record the change.",
	    "/admin/keys", "All API keys", "/admin/keys");
	sodium_memzero(text, sizeof(text));
	return status;
}

int
h_admin_key_revoke(struct web *w, struct req *req, struct resp *resp)
{
	struct apikey *k = arena_alloc(req->a, sizeof(*k));
	enum error_word e;
	int64_t id;

	if (k == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (path_id(req->param[0], &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	if ((e = apikey_revoke(&req->svc, id)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	/* Idempotent: a failed record is mended by sending it again. */
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "apikey.revoke", arena_printf(req->a, "key %lld", (long long)id),
	    NULL);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    "The key was revoked, but the audit log could not record "
		    "it. Send the form again in a moment.");
	return resp_see_other(resp,
	    arena_printf(req->a, "/admin/keys?revoked=%lld", (long long)id));
}
