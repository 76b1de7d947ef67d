/*
 * The public pages: the redemption form and its answer, the health check,
 * the error page. No JavaScript; the form works with a keyboard and a
 * screen reader; GET never changes state.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "../core/redeem.h"
#include "../db/db.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "tmpl.h"
#include "web.h"

enum redeem_key {
	RK_TITLE,
	RK_CODE,
	RK_ACCOUNT,
	RK_CSRF,
	RK_RESULT,
	RK_WORD,
	RK_SUCCESS,
	RK_ALREADY,
	RK_MESSAGE,
	RK_CAMPAIGN,
	RK_REDEEMED_CODE,
	RK_REDEEMED_AT,
	RK_REDEEMED_AT_TEXT,
	RK__MAX
};

static const char *const redeem_keys[RK__MAX + 1] = {"title", "code", "account",
    "csrf", "result", "word", "success", "already", "message", "campaign",
    "redeemed_code", "redeemed_at", "redeemed_at_text", NULL};

enum error_key { EK_TITLE, EK_STATUS, EK_WORD, EK_MESSAGE, EK__MAX };

static const char *const error_keys[EK__MAX + 1] = {
    "title", "status", "word", "message", NULL};

#define CSRF_COOKIE "redeem_csrf"
#define CSRF_RAND 16
#define CSRF_MAC 16
#define CSRF_HEX (2 * (CSRF_RAND + CSRF_MAC))

void
pages_load(struct web *w, const char *dir)
{
	char err[256];

	w->page[PAGE_REDEEM] =
	    tmpl_load(dir, "redeem.html", redeem_keys, err, sizeof(err));
	if (w->page[PAGE_REDEEM] == NULL)
		errx(2, "templates: %s", err);
	w->page[PAGE_ERROR] =
	    tmpl_load(dir, "error.html", error_keys, err, sizeof(err));
	if (w->page[PAGE_ERROR] == NULL)
		errx(2, "templates: %s", err);
}

/* What the page says for each word: plain words for the person at the
 * form, not for an integrator. */
static const char *
page_sentence(enum error_word e)
{
	switch (e) {
	case ERROR_NONE:
		return "Your code is redeemed.";
	case ERROR_INVALID:
		return "We could not find that code. Check it for typos and "
		       "try again.";
	case ERROR_EXPIRED:
		return "This code has expired.";
	case ERROR_EXHAUSTED:
		return "This code has been used up: no uses are left.";
	case ERROR_REVOKED:
		return "This code is no longer valid: it was withdrawn or its "
		       "campaign has ended.";
	case ERROR_INELIGIBLE:
		return "This account cannot redeem this code: it has reached "
		       "its limit, or the offer has not started yet.";
	case ERROR_RATE_LIMITED:
		return "Too many attempts failed. Please wait a few minutes "
		       "and try again.";
	case ERROR_BAD_REQUEST:
		return "Please enter a code and an e-mail address.";
	case ERROR_FORBIDDEN:
		return "This form has expired. Please send it again.";
	case ERROR_NOT_FOUND:
		return "There is no page at this address.";
	case ERROR_METHOD_NOT_ALLOWED:
		return "This page cannot be used that way.";
	case ERROR_TOO_LARGE:
		return "What you sent is too large.";
	case ERROR_UNAVAILABLE:
		return "The service is busy right now. Please try again in a "
		       "moment.";
	default:
		return error_sentence(e);
	}
}

static void
html_answer(struct resp *resp)
{
	resp->ctype = "text/html; charset=utf-8";
}

int
page_error(struct web *w, struct req *req, struct resp *resp, enum error_word e,
    const char *detail)
{
	struct tval v[EK__MAX];
	char status[8];
	int code = error_http_status(e);

	(void)detail; /* integrators' words; the page speaks plainly */
	if (admin_area(req->path))
		return admin_error(w, req, resp, e, NULL);
	if (e == ERROR_UNAVAILABLE && resp->retry_after <= 0)
		resp->retry_after = 2;
	snprintf(status, sizeof(status), "%d", code);
	v[EK_TITLE] = tv(http_reason(code));
	v[EK_STATUS] = tv(status);
	v[EK_WORD] = tv(error_name(e));
	v[EK_MESSAGE] = tv(page_sentence(e));
	buf_reset(&resp->body);
	html_answer(resp);
	resp->status = code;
	if (tmpl_render(w->page[PAGE_ERROR], v, &resp->body) == -1)
		return resp_text(resp, 503, "unavailable\n");
	return code;
}

/* token = hex(random) hex(HMAC(key, random)), checked in constant time. */
static char *
csrf_new(struct web *w, struct arena *a)
{
	unsigned char raw[CSRF_RAND], mac[crypto_auth_hmacsha256_BYTES];
	char *hex = arena_alloc(a, CSRF_HEX + 1);

	if (hex == NULL)
		return NULL;
	randombytes_buf(raw, sizeof(raw));
	crypto_auth_hmacsha256(mac, raw, sizeof(raw), w->csrf_key);
	sodium_bin2hex(hex, 2 * CSRF_RAND + 1, raw, sizeof(raw));
	sodium_bin2hex(hex + 2 * CSRF_RAND, 2 * CSRF_MAC + 1, mac, CSRF_MAC);
	return hex;
}

static int
csrf_valid(struct web *w, const char *tok)
{
	unsigned char raw[CSRF_RAND + CSRF_MAC];
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	size_t n;

	if (tok == NULL || strlen(tok) != CSRF_HEX || !w->have_csrf_key)
		return 0;
	if (sodium_hex2bin(raw, sizeof(raw), tok, CSRF_HEX, NULL, &n, NULL) !=
		0 ||
	    n != sizeof(raw))
		return 0;
	crypto_auth_hmacsha256(mac, raw, CSRF_RAND, w->csrf_key);
	return sodium_memcmp(mac, raw + CSRF_RAND, CSRF_MAC) == 0;
}

/* The token of the cookie when it is still good, else a new one (set). */
const char *
web_csrf_token(struct web *w, struct req *req, struct resp *resp)
{
	const char *have;
	char *tok;

	cookie_parse(req->a, req->cookie_header, &req->cookie);
	have = kv_get(&req->cookie, CSRF_COOKIE);
	if (csrf_valid(w, have))
		return have;
	if ((tok = csrf_new(w, req->a)) == NULL)
		return NULL;
	buf_printf(&resp->head,
	    "Set-Cookie: " CSRF_COOKIE "=%s; Path=/; HttpOnly; "
	    "SameSite=Strict%s\r\n",
	    tok, w->secure_cookies ? "; Secure" : "");
	return tok;
}

int
web_csrf_check(struct web *w, struct req *req)
{
	const char *field = kv_get(&req->form, "csrf"), *cookie;

	cookie_parse(req->a, req->cookie_header, &req->cookie);
	cookie = kv_get(&req->cookie, CSRF_COOKIE);
	if (!csrf_valid(w, field) || !csrf_valid(w, cookie))
		return 0;
	return sodium_memcmp(field, cookie, CSRF_HEX) == 0;
}

static int
render_redeem(struct web *w, struct req *req, struct resp *resp, struct tval *v,
    int status)
{
	v[RK_TITLE] = tv("Redeem a code");
	if ((v[RK_CSRF].s = web_csrf_token(w, req, resp)) == NULL)
		return page_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	v[RK_CSRF].type = TV_STR;
	buf_reset(&resp->body);
	html_answer(resp);
	resp->status = status;
	if (tmpl_render(w->page[PAGE_REDEEM], v, &resp->body) == -1)
		return page_error(w, req, resp, ERROR_UNAVAILABLE, NULL);
	return status;
}

int
h_page_root(struct web *w, struct req *req, struct resp *resp)
{
	(void)w;
	(void)req;
	return resp_redirect(resp, "/redeem");
}

int
h_ping(struct web *w, struct req *req, struct resp *resp)
{
	(void)w;
	(void)req;
	return resp_text(resp, 200, "pong\n");
}

int
h_healthz(struct web *w, struct req *req, struct resp *resp)
{
	struct svc s;
	enum error_word e;

	(void)req;
	if (web_db(w) == NULL)
		return resp_text(resp, 503, "unavailable\n");
	e = svc_open(&s, w->db, w->tenant);
	if (e == ERROR_UNAVAILABLE) {
		resp->retry_after = 2;
		return resp_text(resp, 503, "unavailable\n");
	}
	return resp_text(resp, 200, "ok\n");
}

int
h_page_redeem_form(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[RK__MAX] = {0};
	const char *code = kv_get(&req->q, "code");

	/* A link only pre-fills the form: no lookup, no write. */
	if (code != NULL && strlen(code) <= 64)
		v[RK_CODE] = tv(code);
	return render_redeem(w, req, resp, v, 200);
}

int
h_page_redeem_post(struct web *w, struct req *req, struct resp *resp)
{
	struct tval v[RK__MAX] = {0};
	struct redeem_result res;
	const char *code = kv_get(&req->form, "code");
	const char *account = kv_get(&req->form, "account");
	char at[32], *text;
	enum error_word e;

	if (code != NULL && strlen(code) <= 64)
		v[RK_CODE] = tv(code);
	if (account != NULL && strlen(account) <= ACCOUNT_MAX)
		v[RK_ACCOUNT] = tv(account);
	if (!web_csrf_check(w, req)) {
		e = ERROR_FORBIDDEN;
	} else if (code == NULL || account == NULL || *code == '\0' ||
		   *account == '\0' || kv_count(&req->form, "code") > 1 ||
		   kv_count(&req->form, "account") > 1) {
		e = ERROR_BAD_REQUEST;
	} else {
		if (redeem_code(&req->svc, code, account, req->client, &res) ==
		    -1)
			res.error = ERROR_UNAVAILABLE;
		e = res.error;
		if (e == ERROR_RATE_LIMITED)
			resp->retry_after = res.retry_after;
		if (e == ERROR_UNAVAILABLE)
			resp->retry_after = 2;
	}
	v[RK_RESULT] = tv("1");
	v[RK_MESSAGE] = tv(page_sentence(e));
	if (e != ERROR_NONE) {
		v[RK_WORD] = tv(error_name(e));
		return render_redeem(w, req, resp, v, error_http_status(e));
	}
	v[RK_WORD] = tv(res.already ? "already" : "ok");
	v[RK_SUCCESS] = tv("1");
	if (res.already) {
		v[RK_ALREADY] = tv("1");
		v[RK_MESSAGE] = tv("You had already redeemed this code; "
				   "nothing changed.");
	}
	v[RK_CAMPAIGN] = tv(arena_strdup(req->a, res.r.campaign));
	v[RK_REDEEMED_CODE] = tv(arena_strdup(req->a, res.r.code));
	str_rfc3339(res.r.redeemed_at, at);
	v[RK_REDEEMED_AT] = tv(arena_strdup(req->a, at));
	text = arena_strdup(req->a, at);
	if (text != NULL && strlen(text) >= 20) {
		text[10] = ' ';
		memcpy(text + 16, " UTC", 5);
	}
	v[RK_REDEEMED_AT_TEXT] = tv(text);
	/* The form is shown again empty for the next code. */
	v[RK_CODE] = tv(NULL);
	return render_redeem(w, req, resp, v, 200);
}
