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

enum web_page { PAGE_REDEEM, PAGE_ERROR, PAGE__MAX };

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

/* 1 for an IPv4 or IPv6 address (an API body's client_ip). */
int web_ip_ok(const char *);

/* A page answering an error word in plain words (HTML). */
int page_error(struct web *, struct req *, struct resp *, enum error_word,
    const char *detail);

#endif
