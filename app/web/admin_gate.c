/*
 * The dashboard's gate (web.h): the session cookie, the session check
 * that makes the session's tenant the request's, and the anti-forgery and
 * role checks every admin POST passes before its handler runs. The
 * session's token and CSRF token are never logged.
 */
#include <string.h>

#include "../core/session.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "fmt.h"
#include "web.h"

int
admin_area(const char *path)
{
	return path != NULL && strncmp(path, "/admin", 6) == 0 &&
	       (path[6] == '\0' || path[6] == '/');
}

void
admin_cookie_set(struct web *w, struct resp *resp, const char *token)
{
	/* No Max-Age: the browser forgets it when it closes; the server's
	 * idle and absolute timeouts end it sooner. */
	buf_printf(&resp->head,
	    "Set-Cookie: " ADMIN_COOKIE "=%s; Path=/admin; HttpOnly; "
	    "SameSite=Strict%s\r\n",
	    token, w->secure_cookies ? "; Secure" : "");
}

void
admin_cookie_clear(struct web *w, struct resp *resp)
{
	buf_printf(&resp->head,
	    "Set-Cookie: " ADMIN_COOKIE "=; Path=/admin; Max-Age=0; "
	    "HttpOnly; SameSite=Strict%s\r\n",
	    w->secure_cookies ? "; Secure" : "");
}

/* The cookie's token when it has a token's shape, else NULL. */
static const char *
cookie_token(struct req *req)
{
	const char *t;

	if (cookie_parse(req->a, req->cookie_header, &req->cookie) == -1)
		return NULL;
	t = kv_get(&req->cookie, ADMIN_COOKIE);
	return t != NULL && strlen(t) == SESSION_TOKEN_LEN ? t : NULL;
}

enum error_word
admin_session_load(struct web *w, struct req *req)
{
	struct session *sess;
	const char *tok;
	enum error_word e;

	if (req->sess != NULL)
		return ERROR_NONE;
	fmt_zone(NULL); /* until a session says otherwise */
	if ((tok = cookie_token(req)) == NULL)
		return ERROR_UNAUTHORIZED;
	if ((sess = arena_alloc(req->a, sizeof(*sess))) == NULL)
		return ERROR_UNAVAILABLE;
	e = session_check(w->db, tok, sess);
	if (e == ERROR_NONE) {
		e = svc_open(&req->svc, w->db, sess->tenant);
		/* A tenant gone, or another under the name: no session. */
		if (e == ERROR_NOT_FOUND ||
		    (e == ERROR_NONE && req->svc.tenant_id != sess->tenant_id))
			e = ERROR_UNAUTHORIZED;
	}
	if (e != ERROR_NONE)
		return e == ERROR_UNAUTHORIZED ? e : ERROR_UNAVAILABLE;
	req->svc.cfg = w->svc_cfg;
	req->sess = sess;
	req->sess_token = tok;
	fmt_zone(sess->time_zone);
	req->who = arena_printf(req->a, "admin %s", sess->email);
	return ERROR_NONE;
}

int
admin_gate_session(struct web *w, struct req *req, struct resp *resp)
{
	enum error_word e = admin_session_load(w, req);

	if (e == ERROR_NONE)
		return 0;
	if (e != ERROR_UNAUTHORIZED)
		return admin_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	/* A cookie that no longer works goes, so the browser stops sending
	 * it. */
	if (kv_get(&req->cookie, ADMIN_COOKIE) != NULL)
		admin_cookie_clear(w, resp);
	if (req->method == HTTP_GET || req->method == HTTP_HEAD)
		return resp_see_other(resp, "/admin/login");
	return admin_error(w, req, resp, ERROR_UNAUTHORIZED,
	    "You are not signed in, or your session has ended. Sign in and "
	    "try again.");
}

int
admin_gate_post(struct web *w, struct req *req, struct resp *resp, int write)
{
	const char *field = kv_get(&req->form, "csrf");

	if (req->sess == NULL)
		return admin_gate_session(w, req, resp);
	if (field == NULL || kv_count(&req->form, "csrf") != 1 ||
	    !session_csrf_ok(req->sess, field))
		return admin_error(w, req, resp, ERROR_FORBIDDEN,
		    "This form was out of date or did not come from this "
		    "dashboard, so nothing was changed. Reload the page and "
		    "try again.");
	if (write && !session_can_write(req->sess))
		return admin_error(w, req, resp, ERROR_FORBIDDEN,
		    "Your role lets you look but not change anything; nothing "
		    "was changed.");
	return 0;
}
