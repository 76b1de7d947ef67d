/*
 * Webhook endpoints, their URLs and signing secrets, the signature, the
 * retry schedule and the JSON of endpoints and deliveries (the delivery
 * itself is webhook_deliver.c). A secret never reaches a log.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "webhooks.h"

#define SECRET_BYTES 32
#define SECRET_LEN (sizeof(WEBHOOK_SECRET_PREFIX) - 1 + SECRET_BYTES * 2)
#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_LEASE 60
#define DEFAULT_MAX_AGE (3 * 86400)
#define DEFAULT_PARALLEL 16
#define RETRY_CAP 3600

_Static_assert(SECRET_LEN < WEBHOOK_SECRET_MAX, "the secret fits");

static const char *const state_names[DELIVERY__MAX] = {
    [DELIVERY_PENDING] = "pending",
    [DELIVERY_DELIVERED] = "delivered",
    [DELIVERY_DEAD] = "dead",
};

/* After failed attempt n, the delay is schedule[n - 1]; the last one
 * repeats. */
static const int64_t schedule[] = {1, 5, 30, 120, 600, 3600};

const char *
delivery_state_name(enum delivery_state s)
{
	return (unsigned)s < DELIVERY__MAX ? state_names[s] : "?";
}

int
delivery_state_parse(const char *s, enum delivery_state *out)
{
	int i = str_index(s, state_names, DELIVERY__MAX);

	if (i < 0)
		return -1;
	*out = (enum delivery_state)i;
	return 0;
}

void
webhooks_config_defaults(struct webhooks_config *c)
{
	memset(c, 0, sizeof(*c));
	c->timeout_ms = DEFAULT_TIMEOUT_MS;
	c->lease = DEFAULT_LEASE;
	c->max_age =
	    env_i64("REDEEM_WEBHOOK_MAX_AGE", DEFAULT_MAX_AGE, 1, 86400 * 365);
	c->allow_private =
	    (int)env_i64("REDEEM_WEBHOOK_ALLOW_PRIVATE", 1, 0, 1);
	c->parallel = DEFAULT_PARALLEL;
}

/* ---- URLs ---- */

static int
hostname_ok(const char *h, size_t n)
{
	size_t i, label = 0;

	if (n > 0 && h[n - 1] == '.')
		n--; /* the root's dot */
	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i <= n; i++) {
		char c = i < n ? h[i] : '.';

		if (c == '.') {
			/* 1-63 bytes, no hyphen at either end */
			if (label == 0 || label > 63 || h[i - 1] == '-' ||
			    h[i - label] == '-')
				return 0;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '-')
			label++;
		else
			return 0;
	}
	return 1;
}

static int
port_ok(const char *p, size_t n)
{
	size_t i;
	long v = 0;

	if (n == 0 || n > 5)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (p[i] - '0');
	}
	return v >= 1 && v <= 65535;
}

/* The URL as curl itself reads it: the same scheme, no user. */
static int
curl_agrees(const char *url)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *user = NULL;
	int ok;

	if (u == NULL)
		return 0;
	ok = curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	     curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	     (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0) &&
	     curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_NO_USER;
	curl_free(scheme);
	curl_free(user);
	curl_url_cleanup(u);
	return ok;
}

int
webhook_url_ok(const char *url)
{
	const char *auth, *end, *host_end;
	size_t n, i;

	if (url == NULL)
		return 0;
	n = strnlen(url, WEBHOOK_URL_MAX + 1);
	if (n == 0 || n > WEBHOOK_URL_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 ||
		    (unsigned char)url[i] >= 0x7f)
			return 0;
	if (strncasecmp(url, "http://", 7) == 0)
		auth = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		auth = url + 8;
	else
		return 0;
	end = auth + strcspn(auth, "/?#");
	/* No user name, no percent-encoded or zoned host. */
	if (memchr(auth, '@', (size_t)(end - auth)) != NULL ||
	    memchr(auth, '%', (size_t)(end - auth)) != NULL)
		return 0;
	if (*auth == '[') {
		const char *close = memchr(auth, ']', (size_t)(end - auth));
		struct in6_addr a6;
		char lit[INET6_ADDRSTRLEN];
		size_t len;

		if (close == NULL)
			return 0;
		len = (size_t)(close - auth - 1);
		if (len == 0 || len >= sizeof(lit))
			return 0;
		memcpy(lit, auth + 1, len);
		lit[len] = '\0';
		if (inet_pton(AF_INET6, lit, &a6) != 1)
			return 0;
		host_end = close + 1;
	} else {
		host_end = memchr(auth, ':', (size_t)(end - auth));
		if (host_end == NULL)
			host_end = end;
		if (!hostname_ok(auth, (size_t)(host_end - auth)))
			return 0;
	}
	if (host_end < end &&
	    (*host_end != ':' ||
		!port_ok(host_end + 1, (size_t)(end - host_end - 1))))
		return 0;
	return curl_agrees(url);
}

/* ---- addresses ---- */

static int
v4_private(const unsigned char b[4])
{
	return b[0] == 0 || b[0] == 10 || b[0] == 127 ||
	       (b[0] == 100 && (b[1] & 0xc0) == 64) ||       /* CGNAT */
	       (b[0] == 169 && b[1] == 254) ||               /* link-local */
	       (b[0] == 172 && (b[1] & 0xf0) == 16) ||       /* 172.16/12 */
	       (b[0] == 192 && b[1] == 0 && b[2] == 0) ||    /* IETF */
	       (b[0] == 192 && b[1] == 0 && b[2] == 2) ||    /* docs */
	       (b[0] == 192 && b[1] == 168) ||               /* private */
	       (b[0] == 198 && (b[1] & 0xfe) == 18) ||       /* benchmark */
	       (b[0] == 198 && b[1] == 51 && b[2] == 100) || /* docs */
	       (b[0] == 203 && b[1] == 0 && b[2] == 113) ||  /* docs */
	       b[0] >= 224; /* multicast, reserved, broadcast */
}

int
webhook_addr_private(const struct sockaddr *sa)
{
	static const unsigned char mapped[12] = {
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char compat[12] = {0};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	const unsigned char *b;

	if (sa == NULL)
		return 1;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		return v4_private((const unsigned char *)&in->sin_addr);
	}
	if (sa->sa_family != AF_INET6)
		return 1;
	b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	/* ::a.b.c.d (also :: and ::1), ::ffff:a.b.c.d, 64:ff9b::a.b.c.d */
	if (memcmp(b, compat, 12) == 0 || memcmp(b, mapped, 12) == 0 ||
	    memcmp(b, nat64, 12) == 0)
		return v4_private(b + 12);
	return (b[0] & 0xfe) == 0xfc ||                   /* unique local */
	       (b[0] == 0xfe && (b[1] & 0x80) == 0x80) || /* link, site */
	       b[0] == 0xff ||                            /* multicast */
	       (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d &&
		   b[3] == 0xb8); /* documentation */
}

/* ---- signatures ---- */

void
webhook_signature(const char *secret, int64_t t, const char *body, size_t len,
    char out[WEBHOOK_SIG_HEX])
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	char ts[32];
	int n;

	n = snprintf(ts, sizeof(ts), "%lld.", (long long)t);
	crypto_auth_hmacsha256_init(
	    &st, (const unsigned char *)secret, strlen(secret));
	crypto_auth_hmacsha256_update(
	    &st, (const unsigned char *)ts, (unsigned long long)n);
	crypto_auth_hmacsha256_update(
	    &st, (const unsigned char *)body, (unsigned long long)len);
	crypto_auth_hmacsha256_final(&st, mac);
	str_hex(mac, sizeof(mac), out);
	sodium_memzero(&st, sizeof(st));
	sodium_memzero(mac, sizeof(mac));
}

void
webhook_signature_header(const char *secret, int64_t t, const char *body,
    size_t len, char out[WEBHOOK_SIG_MAX])
{
	char hex[WEBHOOK_SIG_HEX];

	webhook_signature(secret, t, body, len, hex);
	snprintf(out, WEBHOOK_SIG_MAX, "t=%lld,v1=%s", (long long)t, hex);
}

int
webhook_signature_verify(const char *secret, const char *header,
    const char *body, size_t len, int64_t now, int64_t tolerance)
{
	char want[WEBHOOK_SIG_HEX], digits[21];
	const char *comma, *v1;
	int64_t t;
	size_t n;

	if (secret == NULL || header == NULL || body == NULL ||
	    strncmp(header, "t=", 2) != 0 ||
	    (comma = strchr(header, ',')) == NULL)
		return 0;
	n = (size_t)(comma - header - 2);
	if (n == 0 || n >= sizeof(digits))
		return 0;
	memcpy(digits, header + 2, n);
	digits[n] = '\0';
	v1 = comma + 1;
	if (str_to_i64(digits, 0, INT64_MAX / 2, &t) == -1 ||
	    strncmp(v1, "v1=", 3) != 0 ||
	    strlen(v1 + 3) != WEBHOOK_SIG_HEX - 1 ||
	    (t > now ? t - now : now - t) > tolerance)
		return 0;
	webhook_signature(secret, t, body, len, want);
	return sodium_memcmp(want, v1 + 3, WEBHOOK_SIG_HEX - 1) == 0;
}

int64_t
webhook_retry_delay(int64_t attempts)
{
	size_t i = NELEM(schedule) - 1;
	int64_t d, spread;

	if (attempts < 1)
		i = 0;
	else if ((uint64_t)attempts <= NELEM(schedule))
		i = (size_t)attempts - 1;
	d = schedule[i];
	spread = d / 5;
	if (spread > 0)
		d += (int64_t)randombytes_uniform((uint32_t)(2 * spread + 1)) -
		     spread;
	return d > RETRY_CAP ? RETRY_CAP : d < 1 ? 1 : d;
}

/* ---- endpoints ---- */

/* The columns of WEBHOOK_COLUMNS. */
static void
webhook_from_row(struct db_stmt *st, struct webhook *w)
{
	const char *t;

	memset(w, 0, sizeof(*w));
	w->id = db_col_i64(st, 0);
	if ((t = db_col_text(st, 1)) != NULL)
		str_copy(w->url, t, sizeof(w->url));
	w->enabled = db_col_i64(st, 2) != 0;
	w->created_at = db_col_i64(st, 3);
	w->disabled_at = db_col_null(st, 4) ? 0 : db_col_i64(st, 4);
}

enum error_word
webhook_get(struct svc *s, int64_t id, struct webhook *out)
{
	struct db_stmt *st;
	int rc;

	rc = db_query(s->db, STMT_WEBHOOK_BY_ID, &st, "ii", id, s->tenant_id);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW) {
		log_err("webhook %lld: %s", (long long)id, db_errmsg(s->db));
		return svc_db_error(rc);
	}
	webhook_from_row(st, out);
	db_reset(st);
	return ERROR_NONE;
}

/* "whsec_" + 64 hex digits from libsodium's CSPRNG. */
static void
secret_new(char secret[WEBHOOK_SECRET_MAX])
{
	unsigned char rnd[SECRET_BYTES];
	char hex[SECRET_BYTES * 2 + 1];

	randombytes_buf(rnd, sizeof(rnd));
	str_hex(rnd, sizeof(rnd), hex);
	snprintf(
	    secret, WEBHOOK_SECRET_MAX, "%s%s", WEBHOOK_SECRET_PREFIX, hex);
	sodium_memzero(rnd, sizeof(rnd));
	sodium_memzero(hex, sizeof(hex));
}

enum error_word
webhook_create(struct svc *s, const char *url, char secret[WEBHOOK_SECRET_MAX],
    struct webhook *out)
{
	struct db_stmt *st;
	int64_t id;
	int rc;

	secret[0] = '\0';
	if (!webhook_url_ok(url))
		return ERROR_BAD_REQUEST;
	secret_new(secret);
	if ((st = db_prepare(s->db, STMT_WEBHOOK_INSERT)) == NULL)
		rc = DB_EFAIL;
	else {
		db_bind_i64(st, 1, s->tenant_id);
		db_bind_text(st, 2, url);
		db_bind_text(st, 3, secret);
		rc = db_step(st);
		id = db_last_id(st);
		db_reset(st);
	}
	if (rc != DB_OK) {
		sodium_memzero(secret, WEBHOOK_SECRET_MAX);
		log_err("webhook create: %s", db_errmsg(s->db));
		return svc_db_error(rc);
	}
	log_info("webhook create: endpoint %lld in tenant %s", (long long)id,
	    s->tenant);
	if (out != NULL)
		return webhook_get(s, id, out);
	return ERROR_NONE;
}

enum error_word
webhook_list(
    struct svc *s, void (*fn)(void *, const struct webhook *), void *arg)
{
	struct db_stmt *st;
	struct webhook w;
	int rc;

	if ((st = db_prepare(s->db, STMT_WEBHOOK_LIST)) == NULL)
		return ERROR_UNAVAILABLE;
	db_bind_i64(st, 1, s->tenant_id);
	while ((rc = db_step(st)) == DB_ROW) {
		webhook_from_row(st, &w);
		fn(arg, &w);
	}
	db_reset(st);
	if (rc != DB_OK) {
		log_err("webhook list: %s", db_errmsg(s->db));
		return svc_db_error(rc);
	}
	return ERROR_NONE;
}

struct rotate {
	struct svc *s;
	int64_t id, n;
	const char *secret;
};

static int
rotate_tx(struct db *db, void *arg)
{
	struct rotate *r = arg;

	return db_exec(db, STMT_WEBHOOK_ROTATE, &r->n, "tii", r->secret, r->id,
	    r->s->tenant_id);
}

enum error_word
webhook_rotate(struct svc *s, int64_t id, char secret[WEBHOOK_SECRET_MAX])
{
	struct rotate r = {.s = s, .id = id, .secret = secret};
	int rc;

	secret_new(secret);
	rc = db_transact(s->db, DB_TX_WRITE, rotate_tx, &r);
	if (rc != DB_OK || r.n == 0) {
		sodium_memzero(secret, WEBHOOK_SECRET_MAX);
		if (rc != DB_OK) {
			log_err("webhook rotate %lld: %s", (long long)id,
			    db_errmsg(s->db));
			return svc_db_error(rc);
		}
		return ERROR_NOT_FOUND;
	}
	log_info("webhook rotate: endpoint %lld in tenant %s", (long long)id,
	    s->tenant);
	return ERROR_NONE;
}

struct disable {
	struct svc *s;
	int64_t id;
	int found;
};

static int
disable_tx(struct db *db, void *arg)
{
	struct disable *d = arg;
	int64_t n = 0;
	int rc;

	rc =
	    db_exec(db, STMT_WEBHOOK_DISABLE, &n, "ii", d->id, d->s->tenant_id);
	if (rc != DB_OK)
		return rc;
	if ((d->found = n > 0) == 0)
		return DB_ROLLBACK;
	return db_exec(db, STMT_WEBHOOK_DISABLE_PENDING, NULL, "ii", d->id,
	    d->s->tenant_id);
}

enum error_word
webhook_disable(struct svc *s, int64_t id, struct webhook *out)
{
	struct disable d = {s, id, 0};
	int rc;

	rc = db_transact(s->db, DB_TX_WRITE, disable_tx, &d);
	if (rc == DB_ROLLBACK)
		return ERROR_NOT_FOUND;
	if (rc != DB_OK) {
		log_err("webhook disable %lld: %s", (long long)id,
		    db_errmsg(s->db));
		return svc_db_error(rc);
	}
	return out != NULL ? webhook_get(s, id, out) : ERROR_NONE;
}

void
delivery_from_row(struct db_stmt *st, struct delivery *d)
{
	const char *t;

	memset(d, 0, sizeof(*d));
	d->id = db_col_i64(st, 0);
	if ((t = db_col_text(st, 1)) != NULL)
		str_copy(d->event, t, sizeof(d->event));
	if ((t = db_col_text(st, 2)) != NULL)
		str_copy(d->type, t, sizeof(d->type));
	d->webhook_id = db_col_i64(st, 3);
	if (delivery_state_parse(db_col_text(st, 4), &d->state) == -1)
		d->state = DELIVERY_PENDING; /* the CHECK keeps this away */
	d->attempts = db_col_i64(st, 5);
	d->next_attempt_at = db_col_i64(st, 6);
	d->last_attempt_at = db_col_null(st, 7) ? 0 : db_col_i64(st, 7);
	d->last_status = db_col_null(st, 8) ? 0 : (int)db_col_i64(st, 8);
	if ((t = db_col_text(st, 9)) != NULL)
		str_copy(d->last_error, t, sizeof(d->last_error));
	d->created_at = db_col_i64(st, 10);
	d->delivered_at = db_col_null(st, 11) ? 0 : db_col_i64(st, 11);
}

enum error_word
webhook_deliveries(struct svc *s, const char *state, int64_t before_id,
    int limit, void (*fn)(void *, const struct delivery *), void *arg)
{
	enum delivery_state ds;
	struct delivery d;
	struct db_stmt *st;
	int rc;

	if (state == NULL)
		state = "";
	if ((*state != '\0' && delivery_state_parse(state, &ds) == -1) ||
	    before_id < 0 || limit < 1)
		return ERROR_BAD_REQUEST;
	if ((st = db_prepare(s->db, STMT_WEBHOOK_DELIVERY_LIST)) == NULL)
		return ERROR_UNAVAILABLE;
	db_bind_i64(st, 1, s->tenant_id);
	db_bind_text(st, 2, state);
	db_bind_text(st, 3, state);
	db_bind_i64(st, 4, before_id > 0 ? before_id : INT64_MAX);
	db_bind_i64(st, 5, limit);
	while ((rc = db_step(st)) == DB_ROW) {
		delivery_from_row(st, &d);
		fn(arg, &d);
	}
	db_reset(st);
	if (rc != DB_OK) {
		log_err("webhook deliveries: %s", db_errmsg(s->db));
		return svc_db_error(rc);
	}
	return ERROR_NONE;
}

/* ---- JSON ---- */

json_t *
webhook_json(const struct webhook *w, const char *secret)
{
	char at[32];
	json_t *o;

	str_rfc3339(w->created_at, at);
	o = json_pack("{s:I,s:s,s:b,s:s}", "id", (json_int_t)w->id, "url",
	    w->url, "enabled", w->enabled, "created_at", at);
	if (o != NULL && secret != NULL)
		json_object_set_new(o, "secret", json_string(secret));
	return o;
}

static json_t *
time_or_null(int64_t t)
{
	char at[32];

	if (t == 0)
		return json_null();
	str_rfc3339(t, at);
	return json_string(at);
}

json_t *
delivery_json(const struct delivery *d)
{
	json_t *o;

	o = json_pack("{s:I,s:s,s:s,s:I,s:s,s:I}", "id", (json_int_t)d->id,
	    "event", d->event, "type", d->type, "webhook",
	    (json_int_t)d->webhook_id, "state", delivery_state_name(d->state),
	    "attempts", (json_int_t)d->attempts);
	if (o == NULL)
		return NULL;
	json_object_set_new(o, "next_attempt_at",
	    d->state == DELIVERY_PENDING ? time_or_null(d->next_attempt_at)
					 : json_null());
	json_object_set_new(
	    o, "last_attempt_at", time_or_null(d->last_attempt_at));
	json_object_set_new(o, "last_status",
	    d->last_status != 0 ? json_integer(d->last_status) : json_null());
	json_object_set_new(o, "last_error",
	    d->last_error[0] != '\0' ? json_string(d->last_error)
				     : json_null());
	json_object_set_new(o, "created_at", time_or_null(d->created_at));
	json_object_set_new(o, "delivered_at", time_or_null(d->delivered_at));
	return o;
}

void
webhook_url_public(const char *url, char *out, size_t len)
{
	const char *scheme = strstr(url, "://");
	const char *auth = scheme != NULL ? scheme + 3 : url;
	const char *auth_end = auth + strcspn(auth, "/?#");
	const char *host = auth, *p, *path_end;

	/* user:password@host: the host alone. */
	for (p = auth; p < auth_end; p++)
		if (*p == '@')
			host = p + 1;
	path_end = auth_end + strcspn(auth_end, "?#");
	snprintf(out, len, "%.*s%.*s", (int)(auth - url), url,
	    (int)(path_end - host), host);
}
