/*
 * The route table and the dispatcher: the path and method are matched,
 * the body size, the credentials and the body's syntax are checked, and
 * only then does a handler run. Every error word maps to its status
 * through errors.c; nothing a client sends reaches a 500.
 */
#include <string.h>

#include <jansson.h>

#include "../core/apikey.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "jsonin.h"
#include "multipart.h"
#include "web.h"

enum route_auth {
	AUTH_NONE,    /* no database either (ping) */
	AUTH_PUBLIC,  /* pages: the public tenant */
	AUTH_REDEEM,  /* API key, scope redeem or admin */
	AUTH_ADMIN,   /* API key, scope admin */
	AUTH_LOGIN,   /* the database, no credentials: the login form */
	AUTH_SESSION, /* an admin session; a POST carries its CSRF token */
	AUTH_SESSION_WRITE, /* the same, and a role that changes things */
	AUTH__MAX
};

/* BODY_UPLOAD: a form urlencoded or multipart (multipart.h), its one
 * file in req->file. */
enum route_body { BODY_NONE, BODY_FORM, BODY_JSON, BODY_UPLOAD, BODY__MAX };

struct route {
	enum http_method method;
	const char *pattern; /* '*' stands for one non-empty segment */
	enum route_auth auth;
	enum route_body body;
	web_handler h;
};

static const struct route routes[] = {
    {HTTP_GET, "/", AUTH_NONE, BODY_NONE, h_page_root},
    {HTTP_GET, "/ping", AUTH_NONE, BODY_NONE, h_ping},
    {HTTP_GET, "/healthz", AUTH_NONE, BODY_NONE, h_healthz},
    {HTTP_GET, "/redeem", AUTH_PUBLIC, BODY_NONE, h_page_redeem_form},
    {HTTP_POST, "/redeem", AUTH_PUBLIC, BODY_FORM, h_page_redeem_post},
    {HTTP_POST, "/api/v1/redeem", AUTH_REDEEM, BODY_JSON, h_api_redeem},
    {HTTP_POST, "/api/v1/pools/*/claim", AUTH_REDEEM, BODY_JSON,
	h_api_pool_claim},
    {HTTP_POST, "/api/v1/redemptions/*/reverse", AUTH_ADMIN, BODY_JSON,
	h_api_reverse},
    {HTTP_GET, "/api/v1/campaigns", AUTH_ADMIN, BODY_NONE, h_api_campaign_list},
    {HTTP_POST, "/api/v1/campaigns", AUTH_ADMIN, BODY_JSON,
	h_api_campaign_create},
    {HTTP_GET, "/api/v1/campaigns/*", AUTH_ADMIN, BODY_NONE,
	h_api_campaign_get},
    {HTTP_POST, "/api/v1/campaigns/*/close", AUTH_ADMIN, BODY_JSON,
	h_api_campaign_close},
    {HTTP_GET, "/api/v1/campaigns/*/codes", AUTH_ADMIN, BODY_NONE,
	h_api_codes_list},
    {HTTP_POST, "/api/v1/campaigns/*/codes", AUTH_ADMIN, BODY_JSON,
	h_api_codes_create},
    {HTTP_GET, "/api/v1/codes/*", AUTH_ADMIN, BODY_NONE, h_api_code_get},
    {HTTP_POST, "/api/v1/holds", AUTH_REDEEM, BODY_JSON, h_api_hold_create},
    {HTTP_GET, "/api/v1/holds/*", AUTH_REDEEM, BODY_NONE, h_api_hold_get},
    {HTTP_POST, "/api/v1/holds/*/confirm", AUTH_REDEEM, BODY_JSON,
	h_api_hold_confirm},
    {HTTP_POST, "/api/v1/holds/*/release", AUTH_REDEEM, BODY_JSON,
	h_api_hold_release},
    {HTTP_PUT, "/api/v1/semaphores/*", AUTH_ADMIN, BODY_JSON,
	h_api_semaphore_put},
    {HTTP_GET, "/api/v1/semaphores/*", AUTH_REDEEM, BODY_NONE,
	h_api_semaphore_get},
    {HTTP_POST, "/api/v1/permits", AUTH_REDEEM, BODY_JSON,
	h_api_permit_acquire},
    {HTTP_POST, "/api/v1/permits/*/heartbeat", AUTH_REDEEM, BODY_JSON,
	h_api_permit_heartbeat},
    {HTTP_POST, "/api/v1/permits/*/release", AUTH_REDEEM, BODY_JSON,
	h_api_permit_release},
    {HTTP_POST, "/api/v1/webhooks", AUTH_ADMIN, BODY_JSON,
	h_api_webhook_create},
    {HTTP_POST, "/api/v1/codes/*/revoke", AUTH_ADMIN, BODY_JSON,
	h_api_code_revoke},
    /* The dashboard. Paths without a route still pass the session gate
     * (dispatch), so nobody learns which exist without signing in. */
    {HTTP_GET, "/admin", AUTH_NONE, BODY_NONE, h_admin_root},
    {HTTP_GET, "/admin/login", AUTH_LOGIN, BODY_NONE, h_admin_login_form},
    {HTTP_POST, "/admin/login", AUTH_LOGIN, BODY_FORM, h_admin_login},
    {HTTP_POST, "/admin/logout", AUTH_SESSION, BODY_FORM, h_admin_logout},
    {HTTP_GET, "/admin/", AUTH_SESSION, BODY_NONE, h_admin_overview},
    /* admin: webhooks and API keys */
    {HTTP_GET, "/admin/webhooks", AUTH_SESSION, BODY_NONE, h_admin_webhooks},
    {HTTP_POST, "/admin/webhooks", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_webhook_create},
    {HTTP_GET, "/admin/webhooks/*", AUTH_SESSION, BODY_NONE, h_admin_webhook},
    {HTTP_POST, "/admin/webhooks/*/disable", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_webhook_disable},
    {HTTP_POST, "/admin/webhooks/*/rotate", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_webhook_rotate},
    {HTTP_POST, "/admin/webhooks/*/redeliver-dead", AUTH_SESSION_WRITE,
	BODY_FORM, h_admin_webhook_redeliver_dead},
    {HTTP_POST, "/admin/webhooks/*/deliveries/*/redeliver", AUTH_SESSION_WRITE,
	BODY_FORM, h_admin_delivery_redeliver},
    {HTTP_GET, "/admin/keys", AUTH_SESSION, BODY_NONE, h_admin_keys},
    {HTTP_POST, "/admin/keys", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_key_create},
    {HTTP_POST, "/admin/keys/*/revoke", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_key_revoke},
    /* admin: semaphores and leaked permits */
    {HTTP_GET, "/admin/semaphores", AUTH_SESSION, BODY_NONE,
	h_admin_semaphores},
    {HTTP_GET, "/admin/semaphores/*", AUTH_SESSION, BODY_NONE,
	h_admin_semaphore},
    {HTTP_POST, "/admin/semaphores/*/capacity", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_semaphore_capacity},
    {HTTP_GET, "/admin/leaked", AUTH_SESSION, BODY_NONE, h_admin_leaked},
    {HTTP_POST, "/admin/leaked/holds/*/release", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_leaked_hold_release},
    {HTTP_POST, "/admin/leaked/permits/*/release", AUTH_SESSION_WRITE,
	BODY_FORM, h_admin_leaked_permit_release},
    {HTTP_POST, "/admin/leaked/release-all", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_leaked_release_all},
    /* admin: codes and redemptions */
    {HTTP_GET, "/admin/codes", AUTH_SESSION, BODY_NONE, h_admin_codes},
    {HTTP_POST, "/admin/codes/revoke", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_codes_revoke},
    /* admin: generate jobs, import, export (before /admin/codes/{code}) */
    {HTTP_GET, "/admin/codes/generate", AUTH_SESSION, BODY_NONE,
	h_admin_generate_form},
    {HTTP_POST, "/admin/codes/generate", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_generate},
    {HTTP_GET, "/admin/codes/import", AUTH_SESSION, BODY_NONE,
	h_admin_import_form},
    {HTTP_POST, "/admin/codes/import", AUTH_SESSION_WRITE, BODY_UPLOAD,
	h_admin_import},
    {HTTP_GET, "/admin/codes/export", AUTH_SESSION, BODY_NONE, h_admin_export},
    {HTTP_GET, "/admin/jobs/*", AUTH_SESSION, BODY_NONE, h_admin_job},
    {HTTP_GET, "/admin/codes/*", AUTH_SESSION, BODY_NONE, h_admin_code},
    {HTTP_POST, "/admin/codes/*/revoke", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_code_revoke},
    {HTTP_GET, "/admin/redemptions", AUTH_SESSION, BODY_NONE,
	h_admin_redemptions},
    {HTTP_POST, "/admin/redemptions/*/reverse", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_redemption_reverse},
    /* admin: campaigns and audit */
    {HTTP_GET, "/admin/campaigns", AUTH_SESSION, BODY_NONE, h_admin_campaigns},
    {HTTP_POST, "/admin/campaigns", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_campaign_create},
    {HTTP_GET, "/admin/campaigns/new", AUTH_SESSION, BODY_NONE,
	h_admin_campaign_new},
    {HTTP_GET, "/admin/campaigns/*", AUTH_SESSION, BODY_NONE, h_admin_campaign},
    {HTTP_POST, "/admin/campaigns/*", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_campaign_update},
    {HTTP_POST, "/admin/campaigns/*/close", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_campaign_close},
    {HTTP_POST, "/admin/campaigns/*/reopen", AUTH_SESSION_WRITE, BODY_FORM,
	h_admin_campaign_reopen},
    {HTTP_GET, "/admin/audit", AUTH_SESSION, BODY_NONE, h_admin_audit},
};

/* Matches path against pattern, storing the '*' segments in req. */
static int
match(const char *pattern, const char *path, struct req *req, int store)
{
	size_t n = 0;

	for (;;) {
		if (*pattern == '*') {
			const char *end = strchr(path, '/');
			size_t len = end ? (size_t)(end - path) : strlen(path);

			if (len == 0 || n == HTTP_PARAMS_MAX)
				return 0;
			if (store) {
				req->param[n] =
				    arena_strndup(req->a, path, len);
				if (req->param[n] == NULL)
					return 0;
			}
			n++;
			pattern++;
			path += len;
			continue;
		}
		if (*pattern != *path)
			return 0;
		if (*pattern == '\0')
			break;
		pattern++;
		path++;
	}
	if (store)
		req->nparam = n;
	return 1;
}

static int
error_answer(struct web *w, struct req *req, struct resp *resp,
    enum error_word e, const char *detail)
{
	if (req->api)
		return resp_api_error(resp, e, detail);
	return page_error(w, req, resp, e, detail);
}

/* The Authorization header's key: "Bearer <key>", case-insensitive
 * scheme. */
static const char *
bearer(const char *h)
{
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return NULL;
	h += 7;
	while (*h == ' ')
		h++;
	return *h ? h : NULL;
}

static int
authenticate(
    struct web *w, struct req *req, struct resp *resp, enum route_auth auth)
{
	struct apikey k;
	enum error_word e;
	const char *key;

	if (auth == AUTH_LOGIN)
		return 0;
	if (auth == AUTH_SESSION || auth == AUTH_SESSION_WRITE)
		return req->sess != NULL ? 0 : admin_gate_session(w, req, resp);
	if (auth == AUTH_PUBLIC) {
		e = svc_open(&req->svc, w->db, w->tenant);
		if (e == ERROR_NOT_FOUND)
			log_err("web: the public tenant \"%s\" does not exist",
			    w->tenant);
		if (e != ERROR_NONE)
			return error_answer(
			    w, req, resp, ERROR_UNAVAILABLE, NULL);
		req->svc.cfg = w->svc_cfg;
		return 0;
	}
	if ((key = bearer(req->authorization)) == NULL) {
		resp_header(resp, "WWW-Authenticate", "Bearer");
		return error_answer(w, req, resp, ERROR_UNAUTHORIZED,
		    "Send an API key: Authorization: Bearer <key>.");
	}
	e = apikey_verify(w->db, key, &k);
	if (e == ERROR_UNAUTHORIZED) {
		resp_header(
		    resp, "WWW-Authenticate", "Bearer error=\"invalid_token\"");
		return error_answer(w, req, resp, e,
		    "The API key is unknown, malformed or revoked.");
	}
	if (e != ERROR_NONE)
		return error_answer(w, req, resp, ERROR_UNAVAILABLE, NULL);
	if (auth == AUTH_ADMIN && k.scope != APIKEY_ADMIN)
		return error_answer(w, req, resp, ERROR_FORBIDDEN,
		    "This API key has the redeem scope; this needs admin.");
	svc_init(&req->svc, w->db, k.tenant_id, k.tenant, k.unchecked_codes,
	    &w->svc_cfg);
	req->who = arena_printf(
	    req->a, "api key %s%s%s", k.lookup, k.label[0] ? " " : "", k.label);
	return 0;
}

static int
is_form(const char *ctype)
{
	static const char form[] = "application/x-www-form-urlencoded";

	return strncasecmp(ctype, form, sizeof(form) - 1) == 0 &&
	       (ctype[sizeof(form) - 1] == '\0' ||
		   ctype[sizeof(form) - 1] == ';');
}

static int
parse_body(
    struct web *w, struct req *req, struct resp *resp, enum route_body body)
{
	char why[200];

	switch (body) {
	case BODY_NONE:
	case BODY__MAX:
		return 0;
	case BODY_UPLOAD:
		if (!multipart_is(req->ctype))
			goto form;
		if (multipart_form(req->a, req->ctype, req->body, req->body_len,
			&req->form, &req->file, &req->file_len) == -1)
			return error_answer(w, req, resp, ERROR_BAD_REQUEST,
			    "The form (multipart) is malformed.");
		return 0;
	case BODY_FORM:
	form:
		if (!is_form(req->ctype))
			return error_answer(w, req, resp, ERROR_BAD_REQUEST,
			    "The form must be sent urlencoded.");
		if (form_parse(req->a, req->body, req->body_len, &req->form) ==
		    -1)
			return error_answer(w, req, resp, ERROR_BAD_REQUEST,
			    "The form is malformed.");
		return 0;
	case BODY_JSON:
		req->json =
		    jsonin_parse(req->body, req->body_len, why, sizeof(why));
		if (req->json == NULL)
			return error_answer(
			    w, req, resp, ERROR_BAD_REQUEST, why);
		return 0;
	}
	return 0;
}

static void
dispatch(struct web *w, struct req *req, struct resp *resp)
{
	const struct route *rt = NULL;
	enum http_method m = req->method == HTTP_HEAD ? HTTP_GET : req->method;
	struct buf allow;
	size_t i;
	int status, known = 0;

	if (req->early != ERROR_NONE) {
		error_answer(w, req, resp, req->early, req->early_detail);
		return;
	}
	for (i = 0; i < NELEM(routes) && rt == NULL; i++) {
		if (!match(routes[i].pattern, req->path, req, 0))
			continue;
		known = 1;
		if (routes[i].method == m)
			rt = &routes[i];
	}
	/* The dashboard answers 404 and 405 only to a session. */
	if (admin_area(req->path) &&
	    (rt == NULL || (rt->auth != AUTH_NONE && rt->auth != AUTH_LOGIN))) {
		if (web_db(w) == NULL) {
			error_answer(w, req, resp, ERROR_UNAVAILABLE, NULL);
			return;
		}
		if (admin_gate_session(w, req, resp) != 0)
			return;
	}
	if (rt == NULL && known) {
		buf_init(&allow, 256);
		for (i = 0; i < NELEM(routes); i++) {
			if (!match(routes[i].pattern, req->path, req, 0))
				continue;
			if (allow.len > 0)
				buf_puts(&allow, ", ");
			buf_puts(&allow, http_method_name(routes[i].method));
			if (routes[i].method == HTTP_GET)
				buf_puts(&allow, ", HEAD");
		}
		resp_header(resp, "Allow", buf_cstr(&allow));
		buf_free(&allow);
		error_answer(w, req, resp, ERROR_METHOD_NOT_ALLOWED, NULL);
		return;
	}
	if (rt == NULL) {
		error_answer(w, req, resp, ERROR_NOT_FOUND, NULL);
		return;
	}
	if (!match(rt->pattern, req->path, req, 1)) {
		error_answer(w, req, resp, ERROR_UNAVAILABLE, "Out of memory.");
		return;
	}
	if (form_parse(req->a, req->query, strlen(req->query), &req->q) == -1) {
		error_answer(w, req, resp, ERROR_BAD_REQUEST,
		    "The query string is malformed.");
		return;
	}
	if (rt->auth != AUTH_NONE && web_db(w) == NULL) {
		error_answer(w, req, resp, ERROR_UNAVAILABLE, NULL);
		return;
	}
	if (rt->auth != AUTH_NONE && authenticate(w, req, resp, rt->auth))
		return;
	if (parse_body(w, req, resp, rt->body))
		return;
	if ((rt->auth == AUTH_SESSION || rt->auth == AUTH_SESSION_WRITE) &&
	    m != HTTP_GET &&
	    admin_gate_post(w, req, resp, rt->auth == AUTH_SESSION_WRITE))
		return;
	status = rt->h(w, req, resp);
	if (status >= 500 && status != 503)
		log_err("web: %s %s answered %d", http_method_name(req->method),
		    req->path, status);
}

void
web_handle(struct web *w, struct req *req, struct resp *resp)
{
	dispatch(w, req, resp);
	if (req->json != NULL) {
		json_decref(req->json);
		req->json = NULL;
	}
}
