/*
 * The worker: one process, one database connection (opened lazily and
 * kept), templates compiled at start-up. Requests bring their own arena.
 */
#ifndef WEB_H
#define WEB_H

#include <stddef.h>
#include <stdint.h>

#include "../core/svc.h"
#include "http.h"

struct arena;
struct tmpl;

enum web_page {
	PAGE_REDEEM,
	PAGE_ERROR,
	PAGE_ADMIN_LOGIN,
	PAGE_ADMIN_OVERVIEW,
	PAGE_ADMIN_PLACEHOLDER,
	PAGE_ADMIN_ERROR,
	PAGE_ADMIN_CAMPAIGNS,
	PAGE_ADMIN_CAMPAIGN_FORM,
	PAGE_ADMIN_CAMPAIGN,
	PAGE_ADMIN_AUDIT,
	/* admin: codes and redemptions */
	PAGE_ADMIN_CODES,
	PAGE_ADMIN_CODE,
	PAGE_ADMIN_REDEMPTIONS,
	/* admin: generate jobs, import, export */
	PAGE_ADMIN_GENERATE,
	PAGE_ADMIN_JOB,
	PAGE_ADMIN_IMPORT,
	/* admin: semaphores and leaked permits */
	PAGE_ADMIN_SEMAPHORES,
	PAGE_ADMIN_SEMAPHORE,
	PAGE_ADMIN_LEAKED,
	/* admin: webhooks and API keys */
	PAGE_ADMIN_WEBHOOKS,
	PAGE_ADMIN_WEBHOOK,
	PAGE_ADMIN_SECRET,
	PAGE_ADMIN_KEYS,
	PAGE__MAX
};

#define WEB_PROXIES_MAX 16

struct web_proxy {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int bits;
};

struct web {
	const char *dsn;
	const char *tenant; /* the public page's tenant */
	struct db *db;      /* NULL until a request reaches the database */
	struct tmpl *page[PAGE__MAX];
	struct svc_config svc_cfg;
	unsigned char csrf_key[32];
	int have_csrf_key;
	struct web_proxy proxy[WEB_PROXIES_MAX];
	size_t nproxy;
	int secure_cookies; /* REDEEM_COOKIE_SECURE=1 behind TLS */
};

/* Start-up: reads the environment and the templates; errx on failure.
 * The caller owns the struct and calls web_free at shutdown. */
void web_init(struct web *, const char *dsn, const char *templates_dir);
void web_free(struct web *);

/* The connection, opened now if it is not yet; NULL when the database
 * cannot be reached (logged). */
struct db *web_db(struct web *);

/*
 * Serves one request: the dispatcher (route.c) checks the path, the
 * method, the body and the credentials, then runs the handler; the
 * response is complete when it returns.
 */
void web_handle(struct web *, struct req *, struct resp *);

/* The client address rule: REMOTE_ADDR, or X-Forwarded-For's nearest
 * untrusted hop when REMOTE_ADDR is a trusted proxy. */
const char *web_client_addr(
    const struct web *, struct arena *, const char *peer, const char *xff);
/* Parses REDEEM_TRUSTED_PROXIES ("10.0.0.1, 192.168.0.0/16, ::1"); -1 on
 * a bad entry. */
int web_proxies_parse(struct web *, const char *list);

/* Handlers: return the HTTP status they answered. */
typedef int (*web_handler)(struct web *, struct req *, struct resp *);

int h_page_root(struct web *, struct req *, struct resp *);
int h_page_redeem_form(struct web *, struct req *, struct resp *);
int h_page_redeem_post(struct web *, struct req *, struct resp *);
int h_healthz(struct web *, struct req *, struct resp *);
int h_ping(struct web *, struct req *, struct resp *);

int h_api_redeem(struct web *, struct req *, struct resp *);
int h_api_pool_claim(struct web *, struct req *, struct resp *);
int h_api_reverse(struct web *, struct req *, struct resp *);
int h_api_campaign_create(struct web *, struct req *, struct resp *);
int h_api_campaign_list(struct web *, struct req *, struct resp *);
int h_api_campaign_get(struct web *, struct req *, struct resp *);
int h_api_campaign_close(struct web *, struct req *, struct resp *);
int h_api_codes_create(struct web *, struct req *, struct resp *);
int h_api_codes_list(struct web *, struct req *, struct resp *);
int h_api_code_get(struct web *, struct req *, struct resp *);
int h_api_code_revoke(struct web *, struct req *, struct resp *);

/* Compiles the page templates of dir; errx on any error. */
void pages_load(struct web *, const char *dir);
/* The same for the dashboard's pages (h_admin.c). */
void admin_pages_load(struct web *, const char *dir);

/* The public pages' anti-forgery token (cookie redeem_csrf, Path=/): the
 * cookie's when it is still good, else a new one set on resp; NULL when
 * out of memory. web_csrf_check: 1 when the form's csrf field matches a
 * good cookie. The login form uses them too. */
const char *web_csrf_token(struct web *, struct req *, struct resp *);
int web_csrf_check(struct web *, struct req *);

/*
 * The dashboard (/admin and below), admin_gate.c and h_admin.c. Every
 * admin page but the login form needs a session: the cookie redeem_admin
 * (HttpOnly, SameSite=Strict, Path=/admin, Secure with
 * REDEEM_COOKIE_SECURE=1). Without a valid one a GET or HEAD is sent to
 * /admin/login (303) and anything else is refused 401 unauthorized. With
 * one, a POST must carry the session's token in the form field csrf (else
 * 403 forbidden), and a route that changes something needs a role that
 * may (a viewer gets 403 forbidden). The session's tenant becomes
 * req->svc, so a page sees nothing of another tenant.
 */
#define ADMIN_COOKIE "redeem_admin"

/* 1 for /admin and every path below it. */
int admin_area(const char *path);
/* The cookie's session: ERROR_NONE with req->sess, req->sess_token and
 * req->svc set; ERROR_UNAUTHORIZED (none, or not valid any more) or
 * ERROR_UNAVAILABLE. */
enum error_word admin_session_load(struct web *, struct req *);
/* The session gate: 0 with req->sess, req->sess_token and req->svc set;
 * otherwise the answer (redirect or error) is made and its status
 * returned. */
int admin_gate_session(struct web *, struct req *, struct resp *);
/* After the form is parsed: 0 when the request's csrf field is the
 * session's and (write) its role may change things; else the 403 answer's
 * status. */
int admin_gate_post(struct web *, struct req *, struct resp *, int write);
/* Set-Cookie for a new session token, or one that ends the cookie. */
void admin_cookie_set(struct web *, struct resp *, const char *token);
void admin_cookie_clear(struct web *, struct resp *);
/* The dashboard's error page (with the nav when there is a session);
 * message in plain words, or NULL for the word's own sentence. */
int admin_error(struct web *, struct req *, struct resp *, enum error_word,
    const char *message);

int h_admin_root(struct web *, struct req *, struct resp *);
int h_admin_login_form(struct web *, struct req *, struct resp *);
int h_admin_login(struct web *, struct req *, struct resp *);
int h_admin_logout(struct web *, struct req *, struct resp *);
int h_admin_overview(struct web *, struct req *, struct resp *);
int h_admin_placeholder(struct web *, struct req *, struct resp *);

/* Campaigns and the audit log (h_admin_campaigns.c). */
void admin_campaign_pages_load(struct web *, const char *dir);
int h_admin_campaigns(struct web *, struct req *, struct resp *);
int h_admin_campaign_new(struct web *, struct req *, struct resp *);
int h_admin_campaign_create(struct web *, struct req *, struct resp *);
int h_admin_campaign(struct web *, struct req *, struct resp *);
int h_admin_campaign_update(struct web *, struct req *, struct resp *);
int h_admin_campaign_close(struct web *, struct req *, struct resp *);
int h_admin_campaign_reopen(struct web *, struct req *, struct resp *);
int h_admin_audit(struct web *, struct req *, struct resp *);

/* Codes and redemptions (h_admin_codes.c). */
void admin_codes_pages_load(struct web *, const char *dir);
int h_admin_codes(struct web *, struct req *, struct resp *);
int h_admin_codes_revoke(struct web *, struct req *, struct resp *);
int h_admin_code(struct web *, struct req *, struct resp *);
int h_admin_code_revoke(struct web *, struct req *, struct resp *);
int h_admin_redemptions(struct web *, struct req *, struct resp *);
int h_admin_redemption_reverse(struct web *, struct req *, struct resp *);

/* Generate jobs, import, export (h_admin_jobs.c). */
void admin_jobs_pages_load(struct web *, const char *dir);
int h_admin_generate_form(struct web *, struct req *, struct resp *);
int h_admin_generate(struct web *, struct req *, struct resp *);
int h_admin_job(struct web *, struct req *, struct resp *);
int h_admin_import_form(struct web *, struct req *, struct resp *);
int h_admin_import(struct web *, struct req *, struct resp *);
int h_admin_export(struct web *, struct req *, struct resp *);

/* Semaphores and leaked permits (h_admin_leases.c). */
void admin_leases_pages_load(struct web *, const char *dir);
int h_admin_semaphores(struct web *, struct req *, struct resp *);
int h_admin_semaphore(struct web *, struct req *, struct resp *);
int h_admin_semaphore_capacity(struct web *, struct req *, struct resp *);
int h_admin_leaked(struct web *, struct req *, struct resp *);
int h_admin_leaked_hold_release(struct web *, struct req *, struct resp *);
int h_admin_leaked_permit_release(struct web *, struct req *, struct resp *);
int h_admin_leaked_release_all(struct web *, struct req *, struct resp *);

/* Webhooks and API keys (h_admin_hooks.c). */
void admin_hooks_pages_load(struct web *, const char *dir);
int h_admin_webhooks(struct web *, struct req *, struct resp *);
int h_admin_webhook_create(struct web *, struct req *, struct resp *);
int h_admin_webhook(struct web *, struct req *, struct resp *);
int h_admin_webhook_rotate(struct web *, struct req *, struct resp *);
int h_admin_webhook_disable(struct web *, struct req *, struct resp *);
int h_admin_delivery_redeliver(struct web *, struct req *, struct resp *);
int h_admin_webhook_redeliver_dead(struct web *, struct req *, struct resp *);
int h_admin_keys(struct web *, struct req *, struct resp *);
int h_admin_key_create(struct web *, struct req *, struct resp *);
int h_admin_key_revoke(struct web *, struct req *, struct resp *);

int h_api_hold_create(struct web *, struct req *, struct resp *);
int h_api_hold_confirm(struct web *, struct req *, struct resp *);
int h_api_hold_release(struct web *, struct req *, struct resp *);
int h_api_hold_get(struct web *, struct req *, struct resp *);
int h_api_semaphore_put(struct web *, struct req *, struct resp *);
int h_api_semaphore_get(struct web *, struct req *, struct resp *);
int h_api_permit_acquire(struct web *, struct req *, struct resp *);
int h_api_permit_heartbeat(struct web *, struct req *, struct resp *);
int h_api_permit_release(struct web *, struct req *, struct resp *);
int h_api_webhook_create(struct web *, struct req *, struct resp *);

/* 1 for an IPv4 or IPv6 address (an API body's client_ip). */
int web_ip_ok(const char *);

/* A page answering an error word in plain words (HTML). */
int page_error(struct web *, struct req *, struct resp *, enum error_word,
    const char *detail);

#endif
