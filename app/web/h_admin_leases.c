/*
 * The dashboard's semaphores and leaked permits: the semaphores list, a
 * semaphore's holders and capacity history with the form that changes
 * its capacity (semaphore_put, the API's own path); the leaked page (holds
 * and permits past their TTL, permits past the staleness limit, the
 * sweeper's jobs) with release one and release all. The gate has checked
 * the session, the tenant, the CSRF token and the role before a handler
 * here runs; every change is audited.
 */
#include <stdio.h>
#include <string.h>

#include "../core/admin_leases.h"
#include "../core/audit.h"
#include "../core/session.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/str.h"
#include "admin_page.h"
#include "fmt.h"
#include "tmpl.h"
#include "web.h"

enum semaphores_key {
	SK_ROWS = AK__COMMON,
	SK_HAS_ROWS,
	SK_MORE,
	SK_NAME,
	SK_HREF,
	SK_CAPACITY,
	SK_IN_USE,
	SK_HOLDERS,
	SK_LEAKED,
	SK_UPDATED,
	SK__MAX
};
static const char *const semaphores_keys[SK__MAX + 1] = {ADMIN_KEYS, "rows",
    "has_rows", "more", "name", "sem_href", "capacity", "in_use", "holders",
    "leaked", "updated", NULL};

enum semaphore_key {
	MK_NAME = AK__COMMON,
	MK_HREF,
	MK_CAPACITY,
	MK_CAPACITY_RAW,
	MK_IN_USE,
	MK_NHOLDERS,
	MK_NLEAKED,
	MK_CREATED,
	MK_UPDATED,
	MK_NOTICE,
	MK_HOLDERS,
	MK_HAS_HOLDERS,
	MK_EXTERNAL,
	MK_OWNER,
	MK_TOKEN,
	MK_COUNT,
	MK_GRANTED,
	MK_EXPIRES,
	MK_AGE,
	MK_LAPSED,
	MK_HISTORY,
	MK_HAS_HISTORY,
	MK_WHO,
	MK_AT,
	MK_FROM,
	MK_TO,
	MK__MAX
};
static const char *const semaphore_keys[MK__MAX + 1] = {ADMIN_KEYS, "name",
    "sem_href", "capacity", "capacity_raw", "in_use", "nholders", "nleaked",
    "created", "updated", "notice", "holders", "has_holders", "external",
    "owner", "token", "count", "granted", "expires", "age", "lapsed", "history",
    "has_history", "who", "at", "from", "to", NULL};

enum leaked_key {
	LK_NHOLDS = AK__COMMON,
	LK_NPERMITS,
	LK_NSTALE,
	LK_NTOTAL,
	LK_ANY,
	LK_NOTICE,
	LK_HOLDS,
	LK_HAS_HOLDS,
	LK_MORE_HOLDS,
	LK_PERMITS,
	LK_HAS_PERMITS,
	LK_MORE_PERMITS,
	LK_STALE,
	LK_HAS_STALE,
	LK_MORE_STALE,
	LK_ID,
	LK_EXTERNAL,
	LK_CODE,
	LK_CODE_HREF,
	LK_ACCOUNT,
	LK_CAMPAIGN,
	LK_OWNER,
	LK_SEMAPHORES,
	LK_CREATED,
	LK_EXPIRES,
	LK_OVERDUE,
	LK_JOBS,
	LK_JOB,
	LK_INTERVAL,
	LK_LAST_RUN,
	LK_LAST_DONE,
	LK_HOLDER,
	LK_LATE,
	LK_ANY_LATE,
	LK_STALE_LIMIT,
	LK__MAX
};
static const char *const leaked_keys[LK__MAX + 1] = {ADMIN_KEYS, "nholds",
    "npermits", "nstale", "ntotal", "any", "notice", "holds", "has_holds",
    "more_holds", "permits", "has_permits", "more_permits", "stale",
    "has_stale", "more_stale", "id", "external", "code", "code_href", "account",
    "campaign", "owner", "semaphores", "created", "expires", "overdue", "jobs",
    "job", "interval", "last_run", "last_done", "holder", "late", "any_late",
    "stale_limit", NULL};

void
admin_leases_pages_load(struct web *w, const char *dir)
{
	admin_page_load(w, PAGE_ADMIN_SEMAPHORES, dir, "admin_semaphores.html",
	    semaphores_keys, SK__MAX);
	admin_page_load(w, PAGE_ADMIN_SEMAPHORE, dir, "admin_semaphore.html",
	    semaphore_keys, MK__MAX);
	admin_page_load(w, PAGE_ADMIN_LEAKED, dir, "admin_leaked.html",
	    leaked_keys, LK__MAX);
}

/* "45 s", "12 min", "3 h 5 min", "2 d 4 h": how long, to the unit that
 * matters; negative counts as 0. */
static const char *
duration(struct arena *a, int64_t s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		return arena_printf(a, "%lld s", (long long)s);
	if (s < 3600)
		return arena_printf(a, "%lld min", (long long)(s / 60));
	if (s < 86400 && s % 3600 < 60)
		return arena_printf(a, "%lld h", (long long)(s / 3600));
	if (s < 86400)
		return arena_printf(a, "%lld h %lld min", (long long)(s / 3600),
		    (long long)(s % 3600 / 60));
	if (s % 86400 < 3600)
		return arena_printf(a, "%lld d", (long long)(s / 86400));
	return arena_printf(a, "%lld d %lld h", (long long)(s / 86400),
	    (long long)(s % 86400 / 3600));
}

static const char *
semaphore_href(struct arena *a, const char *name)
{
	const char *e = fmt_url(a, name);

	return e != NULL ? arena_printf(a, "/admin/semaphores/%s", e) : NULL;
}

/* ---- the semaphores list ---- */

struct list_run {
	struct arena *a;
	struct tval **rows;
	size_t n;
};

static void
semaphore_row(void *arg, const struct admin_semaphore *m)
{
	struct list_run *u = arg;
	struct tval *v = u->rows[u->n++];

	v[SK_NAME] = tv(arena_strdup(u->a, m->m.name));
	v[SK_HREF] = tv(semaphore_href(u->a, m->m.name));
	v[SK_CAPACITY] = tv(fmt_count_a(u->a, m->m.capacity));
	v[SK_IN_USE] = tv(fmt_count_a(u->a, m->m.in_use));
	v[SK_HOLDERS] = tv(fmt_count_a(u->a, m->holders));
	if (m->leaked > 0)
		v[SK_LEAKED] = tv(fmt_count_a(u->a, m->leaked));
	v[SK_UPDATED] = tv_raw(fmt_time_html(u->a, m->m.updated_at));
}

int
h_admin_semaphores(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[SK__MAX] = {0};
	struct list_run u = {.a = req->a};
	enum error_word e;
	int more = 0;

	if (admin_page_layout(
		req, v, SK__MAX, "/admin/semaphores", "Semaphores") == -1 ||
	    (u.rows = admin_rows(req->a, ADMIN_LEASES_MAX, SK__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if ((e = admin_semaphores(&req->svc, semaphore_row, &u, &more)) !=
	    ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	v[SK_ROWS] = tv_list(u.rows, u.n);
	v[SK_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (more)
		v[SK_MORE] = tv(arena_printf(req->a,
		    "Showing the first %d semaphores by name.",
		    ADMIN_LEASES_MAX));
	if (arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_SEMAPHORES, v, 200);
}

/* ---- a semaphore's page ---- */

#define HISTORY_MAX 200 /* the newest changes shown */

struct sem_run {
	struct arena *a;
	struct tval **holders, **history;
	size_t nholders, nhistory, nskipped;
	int64_t nleaked;
};

static void
holder_row(void *arg, const struct admin_permit *p)
{
	struct sem_run *u = arg;
	struct tval *v = u->holders[u->nholders++];

	v[MK_EXTERNAL] = tv(arena_strdup(u->a, p->external_id));
	v[MK_OWNER] = tv(arena_strdup(u->a, p->owner));
	v[MK_TOKEN] =
	    tv(arena_printf(u->a, "%lld", (long long)p->fencing_token));
	v[MK_COUNT] = tv(fmt_count_a(u->a, p->count));
	v[MK_GRANTED] = tv_raw(fmt_time_html(u->a, p->created_at));
	v[MK_EXPIRES] = tv_raw(fmt_time_html(u->a, p->expires_at));
	v[MK_AGE] = tv(duration(u->a, p->now - p->created_at));
	if (p->expires_at <= p->now) {
		v[MK_LAPSED] = tv("1");
		u->nleaked++;
	}
}

/* The history comes oldest first; the page shows the newest HISTORY_MAX,
 * newest first: each row goes in at the front of a ring. */
static void
history_row(void *arg, const char *who, int64_t at, int64_t from, int64_t to)
{
	struct sem_run *u = arg;
	struct tval *v;

	if (u->nhistory == HISTORY_MAX) {
		u->nskipped++;
		memmove(u->history, u->history + 1,
		    (HISTORY_MAX - 1) * sizeof(*u->history));
		u->nhistory--;
		/* The dropped row's values live on in the arena, unused. */
		if ((u->history[HISTORY_MAX - 1] = arena_alloc(
			 u->a, MK__MAX * sizeof(struct tval))) == NULL)
			return;
		memset(u->history[HISTORY_MAX - 1], 0,
		    MK__MAX * sizeof(struct tval));
	}
	v = u->history[u->nhistory++];
	v[MK_WHO] = tv(arena_strdup(u->a, who));
	v[MK_AT] = tv_raw(fmt_time_html(u->a, at));
	v[MK_FROM] = from < 0 ? tv("created") : tv(fmt_count_a(u->a, from));
	v[MK_TO] = tv(fmt_count_a(u->a, to));
}

static void
reverse(struct tval **r, size_t n)
{
	size_t i;
	struct tval *t;

	for (i = 0; i < n / 2; i++) {
		t = r[i];
		r[i] = r[n - 1 - i];
		r[n - 1 - i] = t;
	}
}

int
h_admin_semaphore(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[MK__MAX] = {0};
	struct semaphore *m = arena_alloc(req->a, sizeof(*m));
	struct sem_run u = {.a = req->a};
	const char *changed;
	enum error_word e;
	int bad = 0;

	if (m == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	changed = admin_query(req, "changed", 8, &bad);
	if ((e = semaphore_get(&req->svc, req->param[0], m)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if (admin_page_layout(req, v, MK__MAX, "/admin/semaphores", m->name) ==
		-1 ||
	    (u.holders = admin_rows(req->a, ADMIN_LEASES_MAX, MK__MAX)) ==
		NULL ||
	    (u.history = admin_rows(req->a, HISTORY_MAX, MK__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if ((e = admin_semaphore_holders(&req->svc, m->id, holder_row, &u)) !=
	    ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	e = semaphore_history(&req->svc, m->name, history_row, &u);
	if (e != ERROR_NONE && e != ERROR_NOT_FOUND)
		return admin_error(w, req, resp, e, NULL);
	reverse(u.history, u.nhistory);
	v[MK_NAME] = tv(m->name);
	v[MK_HREF] = tv(semaphore_href(req->a, m->name));
	v[MK_CAPACITY] = tv(fmt_count_a(req->a, m->capacity));
	v[MK_CAPACITY_RAW] =
	    tv(arena_printf(req->a, "%lld", (long long)m->capacity));
	v[MK_IN_USE] = tv(fmt_count_a(req->a, m->in_use));
	v[MK_NHOLDERS] = tv(fmt_count_a(req->a, (int64_t)u.nholders));
	v[MK_NLEAKED] = tv(fmt_count_a(req->a, m->leaked));
	v[MK_CREATED] = tv_raw(fmt_time_html(req->a, m->created_at));
	v[MK_UPDATED] = tv_raw(fmt_time_html(req->a, m->updated_at));
	v[MK_HOLDERS] = tv_list(u.holders, u.nholders);
	v[MK_HAS_HOLDERS] = tv(u.nholders > 0 ? "1" : NULL);
	v[MK_HISTORY] = tv_list(u.history, u.nhistory);
	v[MK_HAS_HISTORY] = tv(u.nhistory > 0 ? "1" : NULL);
	if (changed != NULL)
		v[MK_NOTICE] = tv(strcmp(changed, "1") == 0
				      ? "The capacity was changed."
				      : "The capacity was already that.");
	if (arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_SEMAPHORE, v, 200);
}

int
h_admin_semaphore_capacity(struct web *w, struct req *req, struct resp *resp)
{
	struct semaphore *m = arena_alloc(req->a, sizeof(*m));
	const char *cap = admin_form(req, "capacity"), *name;
	int64_t capacity, old;
	enum error_word e;

	if (m == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* Only an existing semaphore of this tenant: semaphore_put would
	 * create one. */
	if ((e = semaphore_get(&req->svc, req->param[0], m)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if (cap == NULL ||
	    str_to_i64(cap, 0, SEMAPHORE_CAPACITY_MAX, &capacity) == -1)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "The capacity is a whole number from 0 to "
		    "1,000,000,000.");
	old = m->capacity;
	/* semaphore_put clears its out first: the name goes in a copy. */
	if ((name = arena_strdup(req->a, m->name)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	e = semaphore_put(&req->svc, name, capacity, req->sess->email, m, NULL);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if (old == capacity)
		return resp_see_other(
		    resp, arena_printf(req->a, "%s?changed=0",
			      semaphore_href(req->a, m->name)));
	/* Made, then recorded (semaphore_put has its own transaction); the
	 * semaphore's history has the change either way. */
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "semaphore.capacity", arena_printf(req->a, "semaphore %s", m->name),
	    arena_printf(req->a, "from %lld to %lld", (long long)old,
		(long long)capacity));
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    "The capacity was changed, but the audit log could not "
		    "record it.");
	return resp_see_other(resp, arena_printf(req->a, "%s?changed=1",
					semaphore_href(req->a, m->name)));
}

/* ---- the leaked page ---- */

struct leaked_run {
	struct arena *a;
	const struct admin_leaked *t; /* its clock is read before the rows */
	struct tval **holds, **permits, **stale;
	size_t nholds, npermits, nstale;
};

static void
leaked_hold(void *arg, const struct admin_leaked_hold *h)
{
	struct leaked_run *u = arg;
	struct tval *v = u->holds[u->nholds++];
	const char *e = fmt_url(u->a, h->code);

	v[LK_ID] = tv(arena_printf(u->a, "%lld", (long long)h->id));
	v[LK_EXTERNAL] = tv(arena_strdup(u->a, h->external_id));
	v[LK_CODE] = tv(arena_strdup(u->a, h->code));
	v[LK_CODE_HREF] =
	    tv(e != NULL ? arena_printf(u->a, "/admin/codes/%s", e) : NULL);
	v[LK_ACCOUNT] = tv(arena_strdup(u->a, h->account));
	v[LK_CAMPAIGN] = tv(arena_strdup(u->a, h->campaign));
	v[LK_CREATED] = tv_raw(fmt_time_html(u->a, h->created_at));
	v[LK_EXPIRES] = tv_raw(fmt_time_html(u->a, h->expires_at));
	v[LK_OVERDUE] = tv(duration(u->a, u->t->now - h->expires_at));
}

static void
permit_values(
    struct leaked_run *u, struct tval *v, const struct admin_permit *p)
{
	v[LK_ID] = tv(arena_printf(u->a, "%lld", (long long)p->id));
	v[LK_EXTERNAL] = tv(arena_strdup(u->a, p->external_id));
	v[LK_OWNER] = tv(arena_strdup(u->a, p->owner));
	v[LK_SEMAPHORES] = tv(arena_strdup(u->a, p->semaphores));
	v[LK_CREATED] = tv_raw(fmt_time_html(u->a, p->created_at));
	v[LK_EXPIRES] = tv_raw(fmt_time_html(u->a, p->expires_at));
}

static void
leaked_permit(void *arg, const struct admin_permit *p)
{
	struct leaked_run *u = arg;
	struct tval *v = u->permits[u->npermits++];

	permit_values(u, v, p);
	v[LK_OVERDUE] = tv(duration(u->a, u->t->now - p->expires_at));
}

static void
stale_permit(void *arg, const struct admin_permit *p)
{
	struct leaked_run *u = arg;
	struct tval *v = u->stale[u->nstale++];

	permit_values(u, v, p);
	v[LK_OVERDUE] = tv(
	    duration(u->a, u->t->now - (p->created_at + ADMIN_LEASES_STALE)));
}

struct jobs_run {
	struct arena *a;
	struct tval **rows;
	size_t n;
	int late;
};

static void
job_row(void *arg, const struct admin_sweep_job *j)
{
	struct jobs_run *u = arg;
	struct tval *v = u->rows[u->n++];

	v[LK_JOB] = tv(sweep_job_name(j->job));
	v[LK_INTERVAL] = tv(duration(u->a, j->interval));
	v[LK_LAST_RUN] = j->last_run > 0
			     ? tv_raw(fmt_time_html(u->a, j->last_run))
			     : tv("never");
	if (j->last_run > 0)
		v[LK_LAST_DONE] = tv(fmt_count_a(u->a, j->last_done));
	v[LK_HOLDER] = tv(arena_strdup(u->a, j->holder));
	if (j->late) {
		v[LK_LATE] = tv(j->last_run > 0
				    ? arena_printf(u->a,
					  "has not run for %s, more than "
					  "twice its interval",
					  duration(u->a, j->now - j->last_run))
				    : "has never run");
		u->late = 1;
	}
}

/* "Showing the 200 most overdue of 1,234." when the list is cut. */
static const char *
more_text(struct arena *a, size_t shown, int64_t total)
{
	if ((int64_t)shown >= total)
		return NULL;
	return arena_printf(a, "Showing the %zu most overdue of %s.", shown,
	    fmt_count_a(a, total));
}

/* The notice after a release (the redirect's query): released=hold or
 * permit with id, or released=all with holds and permits counts;
 * already=hold or permit with id. NULL for anything else. */
static const char *
notice(struct req *req)
{
	const char *r, *al, *n, *h, *p;
	int64_t id, nh, np;
	int bad = 0;

	r = admin_query(req, "released", 8, &bad);
	al = admin_query(req, "already", 8, &bad);
	n = admin_query(req, "id", 20, &bad);
	h = admin_query(req, "holds", 20, &bad);
	p = admin_query(req, "permits", 20, &bad);
	if (bad)
		return NULL;
	if (r != NULL && strcmp(r, "all") == 0 && h != NULL && p != NULL &&
	    str_to_i64(h, 0, INT64_MAX, &nh) == 0 &&
	    str_to_i64(p, 0, INT64_MAX, &np) == 0)
		return arena_printf(req->a,
		    "Released %s hold%s and %s permit%s.",
		    fmt_count_a(req->a, nh), nh == 1 ? "" : "s",
		    fmt_count_a(req->a, np), np == 1 ? "" : "s");
	if ((r == NULL) == (al == NULL) || n == NULL ||
	    str_to_i64(n, 1, INT64_MAX, &id) == -1)
		return NULL;
	if (r == NULL)
		r = al;
	if (strcmp(r, "hold") != 0 && strcmp(r, "permit") != 0)
		return NULL;
	if (al != NULL)
		return arena_printf(req->a,
		    "The %s %lld was no longer leaked: it was released or "
		    "swept meanwhile.",
		    r, (long long)id);
	return arena_printf(req->a, "Released the %s %lld.", r, (long long)id);
}

int
h_admin_leaked(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[LK__MAX] = {0};
	struct admin_leaked t;
	struct leaked_run u = {.a = req->a, .t = &t};
	struct jobs_run j = {.a = req->a};
	enum error_word e;

	if (admin_page_layout(
		req, v, LK__MAX, "/admin/leaked", "Leaked permits") == -1 ||
	    (u.holds = admin_rows(req->a, ADMIN_LEASES_MAX, LK__MAX)) == NULL ||
	    (u.permits = admin_rows(req->a, ADMIN_LEASES_MAX, LK__MAX)) ==
		NULL ||
	    (u.stale = admin_rows(req->a, ADMIN_LEASES_MAX, LK__MAX)) == NULL ||
	    (j.rows = admin_rows(req->a, SWEEP__MAX, LK__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	e = admin_leaked(
	    &req->svc, &t, leaked_hold, leaked_permit, stale_permit, &u);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if ((e = admin_sweep_status(&req->svc, job_row, &j)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	v[LK_NHOLDS] = tv(fmt_count_a(req->a, t.holds));
	v[LK_NPERMITS] = tv(fmt_count_a(req->a, t.permits));
	v[LK_NSTALE] = tv(fmt_count_a(req->a, t.stale));
	v[LK_NTOTAL] = tv(fmt_count_a(req->a, t.holds + t.permits + t.stale));
	v[LK_ANY] = tv(t.holds + t.permits + t.stale > 0 ? "1" : NULL);
	v[LK_HOLDS] = tv_list(u.holds, u.nholds);
	v[LK_HAS_HOLDS] = tv(u.nholds > 0 ? "1" : NULL);
	v[LK_MORE_HOLDS] = tv(more_text(req->a, u.nholds, t.holds));
	v[LK_PERMITS] = tv_list(u.permits, u.npermits);
	v[LK_HAS_PERMITS] = tv(u.npermits > 0 ? "1" : NULL);
	v[LK_MORE_PERMITS] = tv(more_text(req->a, u.npermits, t.permits));
	v[LK_STALE] = tv_list(u.stale, u.nstale);
	v[LK_HAS_STALE] = tv(u.nstale > 0 ? "1" : NULL);
	v[LK_MORE_STALE] = tv(more_text(req->a, u.nstale, t.stale));
	v[LK_JOBS] = tv_list(j.rows, j.n);
	v[LK_ANY_LATE] = tv(j.late ? "1" : NULL);
	v[LK_STALE_LIMIT] = tv(duration(req->a, ADMIN_LEASES_STALE));
	v[LK_NOTICE] = tv(notice(req));
	if (arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_LEAKED, v, 200);
}

/* Release one: 303 back with a notice, also when it was released
 * meanwhile (releasing is idempotent, as in the API). */
static int
release_one(struct web *w, struct req *req, struct resp *resp, int hold)
{
	const char *kind = hold ? "hold" : "permit";
	enum error_word e;
	int64_t id;

	/* Not a number is no hold or permit of this tenant's either. */
	if (str_to_i64(req->param[0], 1, INT64_MAX, &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	if (hold)
		e = admin_leaked_release_hold(
		    &req->svc, req->sess->admin_id, req->client, id);
	else
		e = admin_leaked_release_permit(
		    &req->svc, req->sess->admin_id, req->client, id);
	if (e == ERROR_CONFLICT)
		return resp_see_other(resp,
		    arena_printf(req->a, "/admin/leaked?already=%s&id=%lld",
			kind, (long long)id));
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	return resp_see_other(
	    resp, arena_printf(req->a, "/admin/leaked?released=%s&id=%lld",
		      kind, (long long)id));
}

int
h_admin_leaked_hold_release(struct web *w, struct req *req, struct resp *resp)
{
	return release_one(w, req, resp, 1);
}

int
h_admin_leaked_permit_release(struct web *w, struct req *req, struct resp *resp)
{
	return release_one(w, req, resp, 0);
}

int
h_admin_leaked_release_all(struct web *w, struct req *req, struct resp *resp)
{
	int64_t holds, permits;
	enum error_word e;

	e = admin_leaked_release_all(
	    &req->svc, req->sess->admin_id, req->client, &holds, &permits);
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e,
		    "Releasing stopped on a database error; what was released "
		    "before it stays released. Try again in a moment.");
	return resp_see_other(resp, arena_printf(req->a,
					"/admin/leaked?released=all&holds=%lld&"
					"permits=%lld",
					(long long)holds, (long long)permits));
}
