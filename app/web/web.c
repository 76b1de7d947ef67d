/* The worker's long-lived state: settings, templates, the connection. */
#include <arpa/inet.h>
#include <err.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "../core/secret.h"
#include "../db/db.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "tmpl.h"
#include "web.h"

void
web_init(struct web *w, const char *dsn, const char *templates_dir)
{
	const char *s;

	memset(w, 0, sizeof(*w));
	w->dsn = dsn;
	w->tenant = getenv("REDEEM_TENANT");
	if (w->tenant == NULL || *w->tenant == '\0')
		w->tenant = "default";
	if (!tenant_name_ok(w->tenant))
		errx(2, "REDEEM_TENANT: not a tenant name");
	svc_config_defaults(&w->svc_cfg);
	if ((s = getenv("REDEEM_TRUSTED_PROXIES")) != NULL &&
	    web_proxies_parse(w, s) == -1)
		errx(2, "REDEEM_TRUSTED_PROXIES: want addresses or "
			"address/bits, separated by commas");
	s = getenv("REDEEM_COOKIE_SECURE");
	w->secure_cookies = s != NULL && strcmp(s, "1") == 0;
	pages_load(w, templates_dir);
	admin_pages_load(w, templates_dir);
}

void
web_free(struct web *w)
{
	size_t i;

	for (i = 0; i < PAGE__MAX; i++)
		tmpl_free(w->page[i]);
	if (w->db != NULL)
		db_close(w->db);
	sodium_memzero(w->csrf_key, sizeof(w->csrf_key));
	memset(w, 0, sizeof(*w));
}

struct db *
web_db(struct web *w)
{
	char msg[256];

	if (w->db != NULL)
		return w->db;
	w->db = db_open(w->dsn, msg, sizeof(msg));
	if (w->db == NULL) {
		log_err("web: database: %s", msg);
		return NULL;
	}
	if (server_secret(w->db, "csrf", w->csrf_key) == -1) {
		log_err("web: cannot read the CSRF secret");
		db_close(w->db);
		w->db = NULL;
		return NULL;
	}
	w->have_csrf_key = 1;
	return w->db;
}

static int
parse_addr(const char *s, int *family, unsigned char addr[16])
{
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

int
web_ip_ok(const char *s)
{
	unsigned char a[16];
	int family;

	return s != NULL && parse_addr(s, &family, a) == 0;
}

int
web_proxies_parse(struct web *w, const char *list)
{
	char item[64], *slash;
	const char *p = list, *end;
	size_t len;
	int64_t bits;

	w->nproxy = 0;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		end = p + strcspn(p, ", ");
		len = (size_t)(end - p);
		if (len >= sizeof(item) || w->nproxy == WEB_PROXIES_MAX)
			return -1;
		memcpy(item, p, len);
		item[len] = '\0';
		p = end;
		struct web_proxy *x = &w->proxy[w->nproxy];
		if ((slash = strchr(item, '/')) != NULL)
			*slash = '\0';
		if (parse_addr(item, &x->family, x->addr) == -1)
			return -1;
		x->bits = x->family == AF_INET ? 32 : 128;
		if (slash != NULL) {
			if (str_to_i64(slash + 1, 0, x->bits, &bits) == -1)
				return -1;
			x->bits = (int)bits;
		}
		w->nproxy++;
	}
	return 0;
}

static int
trusted(const struct web *w, const char *s)
{
	unsigned char a[16];
	int family, i, bits, mask;
	size_t k;

	if (s == NULL || parse_addr(s, &family, a) == -1)
		return 0;
	for (k = 0; k < w->nproxy; k++) {
		const struct web_proxy *x = &w->proxy[k];

		if (x->family != family)
			continue;
		bits = x->bits;
		for (i = 0; bits >= 8; i++, bits -= 8)
			if (a[i] != x->addr[i])
				break;
		if (bits >= 8)
			continue;
		mask = bits == 0 ? 0 : (0xff << (8 - bits)) & 0xff;
		if (bits == 0 || (a[i] & mask) == (x->addr[i] & mask))
			return 1;
	}
	return 0;
}

const char *
web_client_addr(
    const struct web *w, struct arena *a, const char *peer, const char *xff)
{
	const char *end, *start;
	char *hop;

	if (xff == NULL || w->nproxy == 0 || !trusted(w, peer))
		return peer;
	/* From the right: the first hop that is not one of ours. */
	end = xff + strlen(xff);
	while (end > xff) {
		start = end;
		while (start > xff && start[-1] != ',')
			start--;
		hop = arena_strndup(a, start, (size_t)(end - start));
		if (hop == NULL)
			return peer;
		while (*hop == ' ')
			hop++;
		hop[strcspn(hop, " ")] = '\0';
		if (!trusted(w, hop)) {
			unsigned char tmp[16];
			int fam;

			return parse_addr(hop, &fam, tmp) == 0 ? hop : peer;
		}
		end = start > xff ? start - 1 : xff;
	}
	return peer;
}
