/*
 * The dashboard's bulk work on codes: generate (a job the sweeper runs;
 * its page shows it advancing and refreshes itself while it runs),
 * import CSV (a file or pasted text; every refused line reported with
 * its number, text and reason) and export CSV (streamed a page of codes
 * at a time, so memory does not grow with the codes). Every action is
 * audited; the gate has checked the session, tenant, CSRF and role.
 */
#include <stdio.h>
#include <string.h>

#include "../core/admin_jobs.h"
#include "../core/audit.h"
#include "../core/campaigns.h"
#include "../core/codes.h"
#include "../core/session.h"
#include "../lib/arena.h"
#include "../lib/buf.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "admin_page.h"
#include "fmt.h"
#include "tmpl.h"
#include "web.h"

#define REPORT_ROWS_MAX 1000 /* refused lines shown; the rest counted */
#define REPORT_TEXT_MAX 200  /* bytes of a refused line shown */
#define EXPORT_PAGE 1000     /* codes per streamed chunk */

enum generate_key {
	GK_CAMPAIGN = AK__COMMON,
	GK_COUNT,
	GK_MAX_USES,
	GK_EXPIRES,
	GK__MAX
};
static const char *const generate_keys[GK__MAX + 1] = {
    ADMIN_KEYS, "campaign", "count", "max_uses", "expires", NULL};

enum job_key {
	JK_ID = AK__COMMON,
	JK_CAMPAIGN,
	JK_CAMPAIGN_HREF,
	JK_STATE,
	JK_DONE,
	JK_TOTAL,
	JK_DONE_RAW,
	JK_TOTAL_RAW,
	JK_PERCENT,
	JK_RATE,
	JK_MAX_USES,
	JK_CREATED,
	JK_STARTED,
	JK_FINISHED,
	JK_ACTIVE,
	JK_FINISHED_OK,
	JK_FAILED,
	JK_ERROR,
	JK_CODES_HREF,
	JK_EXPORT_HREF,
	JK__MAX
};
static const char *const job_keys[JK__MAX + 1] = {ADMIN_KEYS, "id", "campaign",
    "campaign_href", "state", "done", "total", "done_raw", "total_raw",
    "percent", "rate", "max_uses", "created", "started", "finished", "active",
    "finished_ok", "failed", "error", "codes_href", "export_href", NULL};

enum import_key {
	IK_CAMPAIGN = AK__COMMON,
	IK_MAX_USES,
	IK_CHECK,
	IK_REPORTED,
	IK_CREATED,
	IK_DUPLICATES,
	IK_REFUSED,
	IK_ROWS,
	IK_LINE,
	IK_TEXT,
	IK_WHY,
	IK_HAS_ROWS,
	IK_MORE,
	IK_CODES_HREF,
	IK__MAX
};
static const char *const import_keys[IK__MAX + 1] = {ADMIN_KEYS, "campaign",
    "max_uses", "check", "reported", "created", "duplicates", "refused", "rows",
    "line", "text", "why", "has_rows", "more", "codes_href", NULL};

void
admin_jobs_pages_load(struct web *w, const char *dir)
{
	admin_page_load(w, PAGE_ADMIN_GENERATE, dir, "admin_generate.html",
	    generate_keys, GK__MAX);
	admin_page_load(
	    w, PAGE_ADMIN_JOB, dir, "admin_job.html", job_keys, JK__MAX);
	admin_page_load(w, PAGE_ADMIN_IMPORT, dir, "admin_import.html",
	    import_keys, IK__MAX);
}

/* A form field sent at most once ("" when absent); *bad when twice. */
static const char *
field(struct req *req, const char *key, int *bad)
{
	size_t n = kv_count(&req->form, key);

	if (n > 1)
		*bad = 1;
	return n == 1 ? kv_get(&req->form, key) : "";
}

/* "" is 0 (never); RFC 3339, a datetime-local value (UTC) or a date. */
static int
parse_time(struct arena *a, const char *s, int64_t *out)
{
	size_t n = strlen(s);

	*out = 0;
	if (n == 0)
		return 0;
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

/* prefix, the campaign's name URL-encoded, suffix. */
static const char *
url_of(struct arena *a, const char *prefix, const char *campaign,
    const char *suffix)
{
	const char *e = fmt_url(a, campaign);

	return e != NULL ? arena_printf(a, "%s%s%s", prefix, e, suffix) : NULL;
}

/* ---- generate ---- */

int
h_admin_generate_form(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[GK__MAX] = {0};
	int bad = 0;

	v[GK_CAMPAIGN] = tv(admin_query(req, "campaign", 64, &bad));
	if (bad)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "The campaign is not one a campaign can be.");
	v[GK_COUNT] = tv("1000");
	v[GK_MAX_USES] = tv("1");
	if (admin_page_layout(
		req, v, GK__MAX, "/admin/codes", "Generate codes") == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_GENERATE, v, 200);
}

int
h_admin_generate(struct web *w, struct req *req, struct resp *resp)
{
	const char *campaign, *count_s, *uses_s, *exp_s;
	enum error_word e;
	int64_t count, max_uses, expires_at, id;
	int bad = 0;

	campaign = field(req, "campaign", &bad);
	count_s = field(req, "count", &bad);
	uses_s = field(req, "max_uses", &bad);
	exp_s = field(req, "expires", &bad);
	if (bad || *campaign == '\0' ||
	    str_to_i64(count_s, 1, ADMIN_JOB_COUNT_MAX, &count) == -1 ||
	    str_to_i64(uses_s, 1, ADMIN_JOB_MAX_USES, &max_uses) == -1 ||
	    parse_time(req->a, exp_s, &expires_at) == -1)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "Give a campaign, a count from 1 to 1,000,000, max_uses "
		    "of at least 1 and, if any, an expiry time in the "
		    "future (UTC).");
	e = admin_job_create(&req->svc, req->sess->admin_id, campaign, count,
	    max_uses, expires_at, &id);
	if (e == ERROR_BAD_REQUEST)
		return admin_error(w, req, resp, e,
		    "These codes cannot be made: the expiry must be in the "
		    "future, and a pool's codes are single-use (max_uses 1).");
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e,
		    e == ERROR_NOT_FOUND ? "There is no such campaign." : NULL);
	e = audit_write(&req->svc, req->sess->admin_id, req->client,
	    "codes.generate", campaign,
	    arena_printf(req->a, "job %lld: %lld codes, max_uses %lld",
		(long long)id, (long long)count, (long long)max_uses));
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    arena_printf(req->a,
			"Job %lld was queued, but the audit log could not "
			"record it.",
			(long long)id));
	return resp_see_other(
	    resp, arena_printf(req->a, "/admin/jobs/%lld", (long long)id));
}

int
h_admin_job(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[JK__MAX] = {0};
	struct admin_job *j = arena_alloc(req->a, sizeof(*j));
	struct arena *a = req->a;
	enum error_word e;
	int64_t id;
	int active;

	if (j == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (str_to_i64(req->param[0], 1, INT64_MAX, &id) == -1)
		return admin_error(w, req, resp, ERROR_NOT_FOUND, NULL);
	if ((e = admin_job_get(&req->svc, id, j)) != ERROR_NONE)
		return admin_error(w, req, resp, e, NULL);
	if (admin_page_layout(req, v, JK__MAX, "/admin/codes",
		arena_printf(a, "Job %lld", (long long)id)) == -1)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	active =
	    strcmp(j->state, "queued") == 0 || strcmp(j->state, "running") == 0;
	v[JK_ID] = tv(arena_printf(a, "%lld", (long long)j->id));
	v[JK_CAMPAIGN] = tv(j->campaign);
	v[JK_CAMPAIGN_HREF] =
	    tv(url_of(a, "/admin/campaigns/", j->campaign, ""));
	v[JK_STATE] = tv(j->state);
	v[JK_DONE] = tv(fmt_count_a(a, j->done));
	v[JK_TOTAL] = tv(fmt_count_a(a, j->total));
	v[JK_DONE_RAW] = tv(arena_printf(a, "%lld", (long long)j->done));
	v[JK_TOTAL_RAW] = tv(arena_printf(a, "%lld", (long long)j->total));
	v[JK_PERCENT] = tv(arena_printf(a, "%lld%%",
	    (long long)(j->total > 0 ? j->done * 100 / j->total : 0)));
	v[JK_RATE] = tv(arena_printf(a, "%s codes/s",
	    fmt_count_a(a, (int64_t)(admin_job_rate(j) + 0.5))));
	v[JK_MAX_USES] = tv(fmt_count_a(a, j->max_uses));
	v[JK_CREATED] = tv_raw(fmt_time_html(a, j->created_at));
	if (j->started_at > 0)
		v[JK_STARTED] = tv_raw(fmt_time_html(a, j->started_at));
	if (j->finished_at > 0)
		v[JK_FINISHED] = tv_raw(fmt_time_html(a, j->finished_at));
	v[JK_ACTIVE] = tv(active ? "1" : NULL);
	v[JK_FINISHED_OK] = tv(strcmp(j->state, "done") == 0 ? "1" : NULL);
	v[JK_FAILED] = tv(strcmp(j->state, "failed") == 0 ? "1" : NULL);
	v[JK_ERROR] = tv(j->error);
	v[JK_CODES_HREF] =
	    tv(url_of(a, "/admin/codes?campaign=", j->campaign, ""));
	v[JK_EXPORT_HREF] = tv(url_of(
	    a, "/admin/codes/export?campaign=", j->campaign, "&which=all"));
	if (arena_err(a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* The page follows the job by itself, no script needed. */
	if (active)
		resp_header(resp, "Refresh", "1");
	return admin_page_render(w, resp, PAGE_ADMIN_JOB, v, 200);
}

/* ---- import ---- */

struct import_run {
	struct arena *a;
	struct tval **rows;
	size_t n;
};

static void
refused_row(
    void *arg, int64_t line, const char *text, size_t tlen, const char *why)
{
	struct import_run *u = arg;
	char clean[REPORT_TEXT_MAX + 1];
	char *raw;
	struct tval *v;

	if (u->n == REPORT_ROWS_MAX)
		return;
	v = u->rows[u->n++];
	/* The line as sent, cut, bad bytes and controls shown as '?'. */
	if (tlen > REPORT_TEXT_MAX)
		tlen = REPORT_TEXT_MAX;
	if ((raw = arena_strndup(u->a, text, tlen)) != NULL) {
		size_t i;

		for (i = 0; i < tlen; i++)
			if (raw[i] == '\0')
				raw[i] = '?';
		audit_clean(raw, clean, sizeof(clean));
		v[IK_TEXT] = tv(arena_strdup(u->a, clean));
	}
	v[IK_LINE] = tv(fmt_count_a(u->a, line));
	v[IK_WHY] = tv(arena_strdup(u->a, why));
}

static int
import_page(struct web *w, struct req *req, struct resp *resp, struct tval *v,
    int status)
{
	if (admin_page_layout(
		req, v, IK__MAX, "/admin/codes", "Import codes") == -1 ||
	    arena_err(req->a))
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return admin_page_render(w, resp, PAGE_ADMIN_IMPORT, v, status);
}

int
h_admin_import_form(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[IK__MAX] = {0};
	int bad = 0;

	v[IK_CAMPAIGN] = tv(admin_query(req, "campaign", 64, &bad));
	if (bad)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "The campaign is not one a campaign can be.");
	v[IK_MAX_USES] = tv("1");
	return import_page(w, req, resp, v, 200);
}

int
h_admin_import(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[IK__MAX] = {0};
	struct codes_import im;
	struct import_run u = {.a = req->a};
	const char *campaign, *uses_s, *check, *text;
	size_t len;
	enum error_word e;
	int bad = 0;

	memset(&im, 0, sizeof(im));
	campaign = field(req, "campaign", &bad);
	uses_s = field(req, "max_uses", &bad);
	check = field(req, "check", &bad);
	text = req->file;
	len = req->file_len;
	if (text == NULL) {
		text = field(req, "csv", &bad);
		len = strlen(text);
	}
	if (bad || *campaign == '\0' || len == 0 ||
	    str_to_i64(uses_s, 1, ADMIN_JOB_MAX_USES, &im.max_uses) == -1)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "Give a campaign, max_uses of at least 1, and a CSV file "
		    "or pasted lines: code[,max_uses[,expires_at]].");
	if ((u.rows = admin_rows(req->a, REPORT_ROWS_MAX, IK__MAX)) == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	im.campaign = campaign;
	e = codes_import_report(
	    &req->svc, text, len, *check != '\0', &im, refused_row, &u);
	if (e == ERROR_BAD_REQUEST)
		return admin_error(w, req, resp, e,
		    "A pool's codes are single-use: max_uses must be 1.");
	if (e == ERROR_NOT_FOUND)
		return admin_error(
		    w, req, resp, e, "There is no such campaign.");
	/* Rows committed before a failure stay: record them all the same. */
	if (audit_write(&req->svc, req->sess->admin_id, req->client,
		"codes.import", campaign,
		arena_printf(req->a, "%lld created, %lld refused",
		    (long long)im.created, (long long)im.refused)) !=
	    ERROR_NONE)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE,
		    "The codes were imported, but the audit log could not "
		    "record it.");
	if (e != ERROR_NONE)
		return admin_error(w, req, resp, e,
		    arena_printf(req->a,
			"The import stopped after %lld codes were created. "
			"Send it again: those are counted as duplicates.",
			(long long)im.created));
	v[IK_CAMPAIGN] = tv(campaign);
	v[IK_MAX_USES] = tv(uses_s);
	v[IK_CHECK] = tv(*check != '\0' ? "1" : NULL);
	v[IK_REPORTED] = tv("1");
	v[IK_CREATED] = tv(fmt_count_a(req->a, im.created));
	v[IK_DUPLICATES] = tv(fmt_count_a(req->a, im.duplicates));
	v[IK_REFUSED] = tv(fmt_count_a(req->a, im.refused));
	v[IK_ROWS] = tv_list(u.rows, u.n);
	v[IK_HAS_ROWS] = tv(u.n > 0 ? "1" : NULL);
	if (im.refused > (int64_t)u.n)
		v[IK_MORE] = tv(fmt_count_a(req->a, im.refused - (int64_t)u.n));
	v[IK_CODES_HREF] =
	    tv(url_of(req->a, "/admin/codes?campaign=", campaign, ""));
	return import_page(w, req, resp, v, 200);
}

/* ---- export ---- */

struct export_run {
	struct svc svc;
	const char *campaign; /* NULL: every campaign */
	enum codes_filter filter;
	int64_t after_id;
	int started;
	struct buf *out; /* the chunk being written */
	int n;
};

/* A CSV field: codes, states and numbers need no quoting. */
static void
export_row(void *arg, const struct code_info *c)
{
	struct export_run *u = arg;
	char exp[32] = "", created[32];

	if (c->expires_at > 0)
		str_rfc3339(c->expires_at, exp);
	str_rfc3339(c->created_at, created);
	buf_printf(u->out, "%s,%s,%lld,%lld,%s,%s\r\n", c->code, c->state,
	    (long long)c->uses, (long long)c->max_uses, exp, created);
	u->n++;
}

static int
export_chunk(void *arg, struct buf *chunk)
{
	struct export_run *u = arg;
	enum error_word e;
	int64_t last;

	u->out = chunk;
	u->n = 0;
	if (!u->started) {
		buf_puts(chunk, "code,state,uses,max_uses,expires_at,"
				"created_at\r\n");
		u->started = 1;
	}
	e = codes_page(&u->svc, u->campaign, u->filter, u->after_id,
	    EXPORT_PAGE, export_row, u, &last);
	if (e != ERROR_NONE) {
		log_err("web: export of tenant %s stopped after id %lld: %s",
		    u->svc.tenant, (long long)u->after_id, error_name(e));
		/* The status is sent: the file itself says it is cut
		 * short. */
		buf_puts(chunk, "# the export stopped here: the database did "
				"not answer; this file is incomplete\r\n");
		return -1;
	}
	u->after_id = last;
	return u->n == EXPORT_PAGE ? 1 : 0;
}

int
h_admin_export(struct web *w, struct req *req, struct resp *resp)
{
	struct export_run *u = arena_alloc(req->a, sizeof(*u));
	const char *campaign, *which;
	struct campaign *k = arena_alloc(req->a, sizeof(*k));
	enum error_word e = ERROR_NONE;
	int bad = 0, more;

	if (u == NULL || k == NULL)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	memset(u, 0, sizeof(*u));
	campaign = admin_query(req, "campaign", 64, &bad);
	which = admin_query(req, "which", 16, &bad);
	if (which == NULL)
		which = "all";
	if (bad || codes_filter_parse(which, &u->filter) == -1)
		return admin_error(w, req, resp, ERROR_BAD_REQUEST,
		    "which is one of used, unused and all.");
	/* Before the headers: a missing campaign is still a 404. */
	if (campaign != NULL &&
	    (e = campaign_get(&req->svc, campaign, k)) != ERROR_NONE)
		return admin_error(w, req, resp, e,
		    e == ERROR_NOT_FOUND ? "There is no such campaign." : NULL);
	u->svc = req->svc;
	u->campaign = campaign;
	/* The first page now, then the record: a database that does not
	 * answer is still a 503, not an empty file. */
	more = export_chunk(u, &resp->body);
	if (more != -1)
		e = audit_write(&req->svc, req->sess->admin_id, req->client,
		    "codes.export",
		    campaign != NULL ? campaign : "all campaigns",
		    arena_printf(req->a, "which=%s", which));
	if (more == -1 || e != ERROR_NONE) {
		buf_reset(&resp->body);
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	}
	if (more == 1) {
		resp->stream = export_chunk;
		resp->stream_arg = u;
	}
	resp->status = 200;
	resp->ctype = "text/csv; charset=utf-8";
	/* Campaign names are [A-Za-z0-9._-]: safe in a filename. */
	resp_header(resp, "Content-Disposition",
	    arena_printf(req->a, "attachment; filename=\"codes-%s-%s.csv\"",
		campaign != NULL ? campaign : "all", which));
	return 200;
}
