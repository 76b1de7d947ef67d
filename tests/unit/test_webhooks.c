/*
 * Webhooks (app/core/webhooks.c, webhook_deliver.c) on the backend under
 * test, delivering to a real HTTP receiver: a forked process on a
 * loopback port that reads each request (request line, headers,
 * Content-Length body), appends it as one line to a log file, and answers
 * from a script of statuses (0: never answers). Races fork real sweeper
 * processes with their own connections.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/core/events.h"
#include "../../app/core/redeem.h"
#include "../../app/core/sweep.h"
#include "../../app/core/webhooks.h"
#include "fixture.h"

#define RCV_SCRIPT 16
#define RCV_HELD 64
#define REQ_MAX 128
#define BODY_MAX 4096
#define FOUR_DAYS (4 * 86400)

/* ---- the receiver ---- */

struct rcv {
	pid_t pid;
	int port;
	char url[64];
	char log[300];
};

struct req {
	int status; /* what it was answered (0: nothing) */
	char line[128];
	char ctype[128];
	char sig[160];
	char body[BODY_MAX];
	char id[48]; /* the body's "id" */
};

static struct req reqs[REQ_MAX];

/* The value of header name in the head hd[0..n), or "". */
static void
rcv_header(const char *hd, size_t n, const char *name, char *out, size_t len)
{
	const char *p = hd, *end = hd + n, *eol;
	size_t k = strlen(name), v;

	out[0] = '\0';
	while (p < end && (eol = strstr(p, "\r\n")) != NULL && eol < end) {
		if ((size_t)(eol - p) > k && strncasecmp(p, name, k) == 0 &&
		    p[k] == ':') {
			p += k + 1;
			while (*p == ' ')
				p++;
			v = (size_t)(eol - p) < len - 1 ? (size_t)(eol - p)
							: len - 1;
			memcpy(out, p, v);
			out[v] = '\0';
			return;
		}
		p = eol + 2;
	}
}

static void
rcv_serve(int lfd, int logfd, const int *script, int n, int delay_ms)
{
	static char buf[1 << 16], rec[(1 << 16) + 1024];
	int held[RCV_HELD], nheld = 0, i = 0;

	for (;;) {
		int c = accept(lfd, NULL, NULL), status, k;
		char *end = NULL, line[128], ct[128], sig[160], cl[32];
		size_t len = 0, hlen, clen, blen;
		ssize_t got;

		if (c < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		while (len < sizeof(buf) - 1 &&
		       (got = read(c, buf + len, sizeof(buf) - 1 - len)) > 0) {
			len += (size_t)got;
			buf[len] = '\0';
			if ((end = strstr(buf, "\r\n\r\n")) != NULL)
				break;
		}
		if (end == NULL) {
			close(c);
			continue;
		}
		hlen = (size_t)(end + 4 - buf);
		rcv_header(buf, hlen, "content-length", cl, sizeof(cl));
		clen = (size_t)strtoul(cl, NULL, 10);
		while (len < hlen + clen && len < sizeof(buf) - 1 &&
		       (got = read(c, buf + len, sizeof(buf) - 1 - len)) > 0)
			len += (size_t)got;
		buf[len] = '\0';
		blen = len - hlen < clen ? len - hlen : clen;
		snprintf(
		    line, sizeof(line), "%.*s", (int)strcspn(buf, "\r\n"), buf);
		rcv_header(buf, hlen, "content-type", ct, sizeof(ct));
		rcv_header(buf, hlen, "redeem-signature", sig, sizeof(sig));
		status = script[i < n ? i : n - 1];
		i++;
		/* One write(2) per request: a reader never sees half. */
		k = snprintf(rec, sizeof(rec), "%d\t%s\t%s\t%s\t%.*s\n", status,
		    line, ct, sig, (int)blen, buf + hlen);
		if (k > 0 && write(logfd, rec, (size_t)k) != k)
			_exit(1);
		if (status == 0) {
			if (nheld < RCV_HELD)
				held[nheld++] = c;
			else
				close(c);
			continue;
		}
		if (delay_ms > 0)
			usleep((useconds_t)delay_ms * 1000);
		dprintf(c,
		    "HTTP/1.1 %d Scripted\r\nContent-Length: 2\r\n"
		    "Connection: close\r\n\r\nok",
		    status);
		close(c);
	}
	(void)held;
}

/* Starts a receiver answering script[i] to request i (the last one
 * repeats; 0: never answers), after delay_ms. */
static void
rcv_start(struct rcv *r, const int *script, int n, int delay_ms)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int lfd, logfd, one = 1;
	const char *tmp = getenv("TMPDIR");

	memset(r, 0, sizeof(*r));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(lfd, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(lfd, 128), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
	r->port = ntohs(a.sin_port);
	snprintf(r->url, sizeof(r->url), "http://127.0.0.1:%d/hook", r->port);
	snprintf(r->log, sizeof(r->log), "%s/redeem-rcv-%ld-%d.log",
	    tmp ? tmp : "/tmp", (long)getpid(), r->port);
	logfd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	ck_assert_int_ge(logfd, 0);
	fflush(NULL);
	r->pid = fork();
	ck_assert_int_ge(r->pid, 0);
	if (r->pid == 0) {
		/* gone with the test, even one that fails before rcv_stop */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		rcv_serve(lfd, logfd, script, n, delay_ms);
	}
	close(lfd);
	close(logfd);
}

static void
rcv_stop(struct rcv *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
		r->pid = 0;
	}
	unlink(r->log);
}

/* Reads the log into reqs; returns how many requests it holds. */
static int
rcv_read(const struct rcv *r)
{
	static char data[REQ_MAX * (BODY_MAX + 600)];
	char *p, *nl, *f[5];
	ssize_t len;
	int fd, n = 0, i;

	memset(reqs, 0, sizeof(reqs));
	fd = open(r->log, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	len = read(fd, data, sizeof(data) - 1);
	close(fd);
	ck_assert_int_ge(len, 0);
	data[len] = '\0';
	for (p = data; n < REQ_MAX && (nl = strchr(p, '\n')) != NULL;
	     p = nl + 1) {
		struct req *q = &reqs[n++];
		json_t *o;

		*nl = '\0';
		for (i = 0; i < 5; i++) {
			f[i] = p;
			if (i < 4) {
				p = strchr(p, '\t');
				ck_assert_ptr_nonnull(p);
				*p++ = '\0';
			}
		}
		q->status = atoi(f[0]);
		snprintf(q->line, sizeof(q->line), "%s", f[1]);
		snprintf(q->ctype, sizeof(q->ctype), "%s", f[2]);
		snprintf(q->sig, sizeof(q->sig), "%s", f[3]);
		snprintf(q->body, sizeof(q->body), "%s", f[4]);
		if ((o = json_loads(q->body, 0, NULL)) != NULL) {
			const char *id =
			    json_string_value(json_object_get(o, "id"));

			snprintf(q->id, sizeof(q->id), "%s", id ? id : "");
			json_decref(o);
		}
	}
	return n;
}

/* Waits up to ms for at least n requests; returns how many came. */
static int
rcv_wait(const struct rcv *r, int n, int ms)
{
	int got;

	while ((got = rcv_read(r)) < n && ms > 0) {
		usleep(20000);
		ms -= 20;
	}
	return got;
}

/* ---- set-up helpers ---- */

static int64_t
db_now(void)
{
	return fx_count("SELECT UNIX_TIMESTAMP()");
}

static int64_t
endpoint(const char *url, char secret[WEBHOOK_SECRET_MAX])
{
	char scratch[WEBHOOK_SECRET_MAX];
	struct webhook w;

	ck_assert_int_eq(
	    webhook_create(&fx.svc, url, secret ? secret : scratch, &w),
	    ERROR_NONE);
	ck_assert_int_gt(w.id, 0);
	return w.id;
}

/* n fresh redemptions in campaign "spring" (made on first use); each
 * writes one code.redeemed event. */
static void
redeem_n(int n, struct redemption *out)
{
	static int serial;
	char codes[64][96], account[64];
	struct redeem_result res;
	struct campaign k;
	int i;

	ck_assert_int_le(n, 64);
	if (campaign_get(&fx.svc, "spring", &k) == ERROR_NOT_FOUND)
		fx_campaign("spring", 0, 0, 0);
	fx_codes("spring", n, 1, codes);
	for (i = 0; i < n; i++) {
		snprintf(account, sizeof(account), "u%d@example.com", serial++);
		ck_assert_int_eq(
		    redeem_code(&fx.svc, codes[i], account, NULL, &res), 0);
		ck_assert_int_eq(res.error, ERROR_NONE);
		if (out != NULL)
			out[i] = res.r;
	}
}

static void
cfg_test(struct webhooks_config *c)
{
	webhooks_config_defaults(c);
	c->timeout_ms = 3000;
	c->allow_private = 1;
}

static void
enqueue(struct webhooks_stats *st)
{
	ck_assert_int_eq(webhooks_enqueue(fx.db, 10000, st), 0);
}

static void
deliver(const struct webhooks_config *c, struct webhooks_stats *st)
{
	ck_assert_int_eq(webhooks_deliver_due(fx.db, c, 1000, st), 0);
}

struct dlist {
	int n;
	struct delivery d[REQ_MAX];
};

static void
dlist_add(void *arg, const struct delivery *d)
{
	struct dlist *l = arg;

	ck_assert_int_lt(l->n, REQ_MAX);
	l->d[l->n++] = *d;
}

/* The tenant's deliveries in a state ("" all), oldest first. */
static int
dlist(struct dlist *l, const char *state)
{
	struct delivery t;
	int i;

	memset(l, 0, sizeof(*l));
	ck_assert_int_eq(
	    webhook_deliveries(&fx.svc, state, 0, REQ_MAX, dlist_add, l),
	    ERROR_NONE);
	for (i = 0; i < l->n / 2; i++) {
		t = l->d[i];
		l->d[i] = l->d[l->n - 1 - i];
		l->d[l->n - 1 - i] = t;
	}
	return l->n;
}

static void
make_due(void)
{
	fx_sql("UPDATE webhook_deliveries SET next_attempt_at = 0 "
	       "WHERE state = 'pending'");
}

/* The request verifies with secret and is the contract's shape. */
static void
assert_signed(const struct req *q, const char *secret)
{
	ck_assert_str_eq(q->line, "POST /hook HTTP/1.1");
	ck_assert_str_eq(q->ctype, "application/json");
	ck_assert_msg(webhook_signature_verify(secret, q->sig, q->body,
			  strlen(q->body), (int64_t)time(NULL), 300),
	    "signature %s does not verify", q->sig);
	ck_assert_int_eq(strncmp(q->id, "evt_", 4), 0);
	ck_assert_int_eq(strlen(q->id), EVENT_ID_LEN);
}

/* ---- endpoints ---- */

START_TEST(test_webhooks_create_list_disable)
{
	char secret[WEBHOOK_SECRET_MAX];
	struct webhook w, g;
	struct svc other;
	size_t i;

	ck_assert_int_eq(
	    webhook_create(&fx.svc, "https://example.com/hook", secret, &w),
	    ERROR_NONE);
	ck_assert_int_gt(w.id, 0);
	ck_assert_str_eq(w.url, "https://example.com/hook");
	ck_assert_int_eq(w.enabled, 1);
	ck_assert_int_gt(w.created_at, 0);
	ck_assert_int_eq(w.disabled_at, 0);
	ck_assert_int_eq(strlen(secret), 70);
	ck_assert_int_eq(strncmp(secret, "whsec_", 6), 0);
	for (i = 6; i < 70; i++)
		ck_assert(strchr("0123456789abcdef", secret[i]) != NULL);
	endpoint("http://example.org:8080/x?y=1", NULL);

	/* Two secrets never match. */
	{
		char s2[WEBHOOK_SECRET_MAX];

		ck_assert_int_eq(
		    webhook_create(&fx.svc, "https://example.com/2", s2, NULL),
		    ERROR_NONE);
		ck_assert_str_ne(secret, s2);
	}
	ck_assert_int_eq(webhook_get(&fx.svc, w.id, &g), ERROR_NONE);
	ck_assert_str_eq(g.url, w.url);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM webhook_endpoints"), 3);

	ck_assert_int_eq(webhook_disable(&fx.svc, w.id, &g), ERROR_NONE);
	ck_assert_int_eq(g.enabled, 0);
	ck_assert_int_gt(g.disabled_at, 0);
	ck_assert_int_eq(webhook_disable(&fx.svc, w.id, NULL), ERROR_NONE);
	ck_assert_int_eq(
	    webhook_disable(&fx.svc, 999999, NULL), ERROR_NOT_FOUND);
	ck_assert_int_eq(webhook_get(&fx.svc, 999999, &g), ERROR_NOT_FOUND);

	/* Another tenant sees none of it. */
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(webhook_get(&other, w.id, &g), ERROR_NOT_FOUND);
	ck_assert_int_eq(webhook_disable(&other, w.id, NULL), ERROR_NOT_FOUND);
}
END_TEST

static void
count_webhook(void *arg, const struct webhook *w)
{
	int *n = arg;

	ck_assert_int_gt(w->id, 0);
	(*n)++;
}

START_TEST(test_webhooks_list_per_tenant)
{
	struct svc other;
	int n = 0;

	endpoint("https://a.example/1", NULL);
	endpoint("https://a.example/2", NULL);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(webhook_list(&fx.svc, count_webhook, &n), ERROR_NONE);
	ck_assert_int_eq(n, 2);
	n = 0;
	ck_assert_int_eq(webhook_list(&other, count_webhook, &n), ERROR_NONE);
	ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(test_webhooks_url_validation)
{
	static const struct {
		const char *url;
		int ok;
	} t[] = {
	    {"https://example.com/hook", 1},
	    {"http://example.com", 1},
	    {"HTTPS://Example.COM/a?b=c#d", 1},
	    {"http://127.0.0.1:8080/x", 1},
	    {"http://[::1]:8080/x", 1},
	    {"http://[2001:db8::1]/", 1},
	    {"http://a-b.c-d.example./", 1},
	    {"https://example.com:1/", 1},
	    {"https://example.com:65535/", 1},
	    {NULL, 0},
	    {"", 0},
	    {"example.com/hook", 0},
	    {"//example.com/hook", 0},
	    {"ftp://example.com/", 0},
	    {"file:///etc/passwd", 0},
	    {"gopher://example.com/", 0},
	    {"javascript:alert(1)", 0},
	    {"http:example.com", 0},
	    {"http://", 0},
	    {"http:///path", 0},
	    {"http://:80/", 0},
	    {"http://exa mple.com/", 0},
	    {"http://example.com/a b", 0},
	    {" http://example.com/", 0},
	    {"http://example.com/\t", 0},
	    {"http://example.com/\r\nX-Injected: 1", 0},
	    {"http://example.com/\x7f", 0},
	    {"http://ex\xc3\xa4mple.com/", 0},
	    {"http://example.com/\xff", 0},
	    {"http://user:pass@example.com/", 0},
	    {"http://user@example.com/", 0},
	    {"http://example.com@evil.example/", 0},
	    {"http://ex%41mple.com/", 0},
	    {"http://[fe80::1%25eth0]/", 0},
	    {"http://example.com:0/", 0},
	    {"http://example.com:65536/", 0},
	    {"http://example.com:99999999/", 0},
	    {"http://example.com:-1/", 0},
	    {"http://example.com:/", 0},
	    {"http://example.com:80:80/", 0},
	    {"http://-example.com/", 0},
	    {"http://example-.com/", 0},
	    {"http://a..b/", 0},
	    {"http://.example.com/", 0},
	    {"http://under_score.example/", 0},
	    {"http://[::1/", 0},
	    {"http://[]/", 0},
	    {"http://[not:an:address]/", 0},
	    {"http://[::1]x/", 0},
	};
	char long_url[WEBHOOK_URL_MAX + 2], label[80],
	    secret[WEBHOOK_SECRET_MAX];
	size_t i;

	for (i = 0; i < NELEM(t); i++)
		ck_assert_msg(webhook_url_ok(t[i].url) == t[i].ok,
		    "%s: want %d", t[i].url ? t[i].url : "(null)", t[i].ok);

	/* Length: the limit passes, one more byte does not. */
	memset(long_url, 'a', sizeof(long_url));
	memcpy(long_url, "http://example.com/", 19);
	long_url[WEBHOOK_URL_MAX] = '\0';
	ck_assert_int_eq(webhook_url_ok(long_url), 1);
	long_url[WEBHOOK_URL_MAX] = 'a';
	long_url[WEBHOOK_URL_MAX + 1] = '\0';
	ck_assert_int_eq(webhook_url_ok(long_url), 0);
	/* What the audit log may keep: no user information, query or
	 * fragment (tokens travel there). */
	{
		static const char *const pub[][2] = {
		    {"https://u:p@h.example:8443/x/y?token=1#f",
			"https://h.example:8443/x/y"},
		    {"http://h.example?k=v", "http://h.example"},
		    {"http://a@b@h.example/p#x", "http://h.example/p"},
		    {"http://h.example/a@b?c", "http://h.example/a@b"},
		};
		char out[WEBHOOK_URL_MAX + 1];

		for (i = 0; i < NELEM(pub); i++) {
			webhook_url_public(pub[i][0], out, sizeof(out));
			ck_assert_str_eq(out, pub[i][1]);
		}
	}
	/* A 64-byte label is one too many. */
	memset(label, 'b', sizeof(label));
	memcpy(label, "http://", 7);
	memcpy(label + 7 + 64, ".com/", 6);
	ck_assert_int_eq(webhook_url_ok(label), 0);
	memcpy(label + 7 + 63, ".com/", 6);
	ck_assert_int_eq(webhook_url_ok(label), 1);

	/* Refused at creation, nothing stored. */
	ck_assert_int_eq(webhook_create(&fx.svc, "ftp://x/", secret, NULL),
	    ERROR_BAD_REQUEST);
	ck_assert_str_eq(secret, "");
	ck_assert_int_eq(
	    webhook_create(&fx.svc, NULL, secret, NULL), ERROR_BAD_REQUEST);
	ck_assert_int_eq(fx_count("SELECT COUNT(*) FROM webhook_endpoints"), 0);
}
END_TEST

START_TEST(test_webhooks_addr_private)
{
	static const struct {
		int family;
		const char *addr;
		int private;
	} t[] = {
	    {AF_INET, "127.0.0.1", 1},
	    {AF_INET, "127.255.0.9", 1},
	    {AF_INET, "10.1.2.3", 1},
	    {AF_INET, "172.16.0.1", 1},
	    {AF_INET, "172.31.255.255", 1},
	    {AF_INET, "192.168.1.1", 1},
	    {AF_INET, "169.254.169.254", 1},
	    {AF_INET, "100.64.0.1", 1},
	    {AF_INET, "0.0.0.0", 1},
	    {AF_INET, "224.0.0.1", 1},
	    {AF_INET, "255.255.255.255", 1},
	    {AF_INET, "8.8.8.8", 0},
	    {AF_INET, "172.32.0.1", 0},
	    {AF_INET, "100.128.0.1", 0},
	    {AF_INET, "93.184.216.34", 0},
	    {AF_INET6, "::1", 1},
	    {AF_INET6, "::", 1},
	    {AF_INET6, "fe80::1", 1},
	    {AF_INET6, "fc00::1", 1},
	    {AF_INET6, "fd12:3456::1", 1},
	    {AF_INET6, "ff02::1", 1},
	    {AF_INET6, "::ffff:127.0.0.1", 1},
	    {AF_INET6, "::ffff:10.0.0.1", 1},
	    {AF_INET6, "64:ff9b::192.168.0.1", 1},
	    {AF_INET6, "::ffff:8.8.8.8", 0},
	    {AF_INET6, "2606:4700:4700::1111", 0},
	    {AF_INET6, "2a00:1450:4001::200e", 0},
	};
	size_t i;

	for (i = 0; i < NELEM(t); i++) {
		struct sockaddr_in a4;
		struct sockaddr_in6 a6;
		const struct sockaddr *sa;

		memset(&a4, 0, sizeof(a4));
		memset(&a6, 0, sizeof(a6));
		if (t[i].family == AF_INET) {
			a4.sin_family = AF_INET;
			ck_assert_int_eq(
			    inet_pton(AF_INET, t[i].addr, &a4.sin_addr), 1);
			sa = (const struct sockaddr *)&a4;
		} else {
			a6.sin6_family = AF_INET6;
			ck_assert_int_eq(
			    inet_pton(AF_INET6, t[i].addr, &a6.sin6_addr), 1);
			sa = (const struct sockaddr *)&a6;
		}
		ck_assert_msg(webhook_addr_private(sa) == t[i].private,
		    "%s: want %d", t[i].addr, t[i].private);
	}
	ck_assert_int_eq(webhook_addr_private(NULL), 1);
}
END_TEST

/* ---- signatures, schedule, settings, JSON ---- */

START_TEST(test_webhooks_signature)
{
	char hex[WEBHOOK_SIG_HEX], hdr[WEBHOOK_SIG_MAX], bad[WEBHOOK_SIG_MAX];
	char key[80];
	const char *body = "{\"a\":1}";
	int64_t now = 1700000000;

	/* Known answers (Python's hmac), one key longer than the SHA-256
	 * block, as a real secret is. */
	webhook_signature("whsec_test", now, body, strlen(body), hex);
	ck_assert_str_eq(hex, "38877139021993b830af32feea6e18a8da83eb2f6e49ee5"
			      "0bd9e4cf4ca4d3789");
	snprintf(key, sizeof(key), "whsec_%s",
	    "abababababababababababababababababababababababababababababababab");
	webhook_signature(key, now, "{}", 2, hex);
	ck_assert_str_eq(hex, "b92e2f8ad8c0846d4cf9c719c9dfa0fa0dcff77f004615f"
			      "b3f922c6ffe96915b");

	webhook_signature_header("whsec_test", now, body, strlen(body), hdr);
	ck_assert_str_eq(hdr, "t=1700000000,v1=38877139021993b830af32feea6e18a"
			      "8da83eb2f6e49ee50bd9e4cf4ca4d3789");
	ck_assert_int_eq(webhook_signature_verify("whsec_test", hdr, body,
			     strlen(body), now + 10, 300),
	    1);
	/* Tampered body, wrong secret, stale or future t, broken header. */
	ck_assert_int_eq(webhook_signature_verify(
			     "whsec_test", hdr, "{\"a\":2}", 7, now, 300),
	    0);
	ck_assert_int_eq(webhook_signature_verify(
			     "whsec_tesT", hdr, body, strlen(body), now, 300),
	    0);
	ck_assert_int_eq(webhook_signature_verify("whsec_test", hdr, body,
			     strlen(body), now + 301, 300),
	    0);
	ck_assert_int_eq(webhook_signature_verify("whsec_test", hdr, body,
			     strlen(body), now - 301, 300),
	    0);
	snprintf(bad, sizeof(bad), "t=1700000001%s", strchr(hdr, ','));
	ck_assert_int_eq(webhook_signature_verify(
			     "whsec_test", bad, body, strlen(body), now, 300),
	    0);
	ck_assert_int_eq(webhook_signature_verify(
			     "whsec_test", "", body, strlen(body), now, 300),
	    0);
	ck_assert_int_eq(webhook_signature_verify("whsec_test", "t=,v1=00",
			     body, strlen(body), now, 300),
	    0);
	ck_assert_int_eq(webhook_signature_verify(
			     "whsec_test", NULL, body, strlen(body), now, 300),
	    0);
}
END_TEST

START_TEST(test_webhooks_retry_delay_bounds)
{
	static const int64_t base[] = {1, 5, 30, 120, 600, 3600, 3600, 3600};
	int64_t a, d, lo, hi;
	int i, spread;

	for (a = 1; a <= (int64_t)NELEM(base); a++) {
		lo = base[a - 1] - base[a - 1] / 5;
		hi = base[a - 1] + base[a - 1] / 5;
		if (hi > 3600)
			hi = 3600;
		spread = 0;
		for (i = 0; i < 500; i++) {
			d = webhook_retry_delay(a);
			ck_assert_msg(d >= lo && d <= hi,
			    "attempt %lld: %lld not in [%lld, %lld]",
			    (long long)a, (long long)d, (long long)lo,
			    (long long)hi);
			spread |= d != base[a - 1];
		}
		/* jittered from 5 s on */
		ck_assert_int_eq(spread, base[a - 1] >= 5);
	}
	ck_assert_int_eq(webhook_retry_delay(0), 1);
	ck_assert_int_le(webhook_retry_delay(1000000), 3600);
}
END_TEST

START_TEST(test_webhooks_config_env)
{
	struct webhooks_config c;

	unsetenv("REDEEM_WEBHOOK_ALLOW_PRIVATE");
	unsetenv("REDEEM_WEBHOOK_MAX_AGE");
	webhooks_config_defaults(&c);
	ck_assert_int_eq(c.timeout_ms, 10000);
	ck_assert_int_eq(c.max_age, 3 * 86400);
	ck_assert_int_eq(c.allow_private, 1);
	ck_assert_int_ge(c.lease, c.timeout_ms / 1000 * 2);
	setenv("REDEEM_WEBHOOK_ALLOW_PRIVATE", "0", 1);
	setenv("REDEEM_WEBHOOK_MAX_AGE", "3600", 1);
	webhooks_config_defaults(&c);
	ck_assert_int_eq(c.allow_private, 0);
	ck_assert_int_eq(c.max_age, 3600);
	setenv("REDEEM_WEBHOOK_ALLOW_PRIVATE", "yes", 1);
	setenv("REDEEM_WEBHOOK_MAX_AGE", "-5", 1);
	webhooks_config_defaults(&c);
	ck_assert_int_eq(c.allow_private, 1);
	ck_assert_int_eq(c.max_age, 3 * 86400);
	unsetenv("REDEEM_WEBHOOK_ALLOW_PRIVATE");
	unsetenv("REDEEM_WEBHOOK_MAX_AGE");
}
END_TEST

START_TEST(test_webhooks_json)
{
	struct webhook w;
	struct delivery d;
	json_t *o;

	memset(&w, 0, sizeof(w));
	w.id = 7;
	snprintf(w.url, sizeof(w.url), "https://example.com/h");
	w.enabled = 1;
	w.created_at = 1700000000;
	o = webhook_json(&w, "whsec_x");
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "id")), 7);
	ck_assert_str_eq(json_string_value(json_object_get(o, "url")),
	    "https://example.com/h");
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "secret")), "whsec_x");
	ck_assert(json_is_true(json_object_get(o, "enabled")));
	json_decref(o);
	o = webhook_json(&w, NULL);
	ck_assert_ptr_null(json_object_get(o, "secret"));
	json_decref(o);

	memset(&d, 0, sizeof(d));
	d.id = 3;
	snprintf(d.event, sizeof(d.event), "evt_abc");
	snprintf(d.type, sizeof(d.type), "code.redeemed");
	d.webhook_id = 7;
	d.state = DELIVERY_PENDING;
	d.attempts = 2;
	d.next_attempt_at = 1700000100;
	d.last_attempt_at = 1700000050;
	d.last_status = 500;
	snprintf(d.last_error, sizeof(d.last_error), "HTTP 500");
	d.created_at = 1700000000;
	o = delivery_json(&d);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "state")), "pending");
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "event")), "evt_abc");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "webhook")), 7);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(o, "last_status")), 500);
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "next_attempt_at")),
	    "2023-11-14T22:15:00Z");
	ck_assert(json_is_null(json_object_get(o, "delivered_at")));
	json_decref(o);
	d.state = DELIVERY_DELIVERED;
	d.last_status = 0;
	d.last_error[0] = '\0';
	d.delivered_at = 1700000200;
	o = delivery_json(&d);
	ck_assert(json_is_null(json_object_get(o, "next_attempt_at")));
	ck_assert(json_is_null(json_object_get(o, "last_status")));
	ck_assert(json_is_null(json_object_get(o, "last_error")));
	ck_assert(json_is_string(json_object_get(o, "delivered_at")));
	json_decref(o);
}
END_TEST

/* ---- delivery ---- */

START_TEST(test_webhooks_delivers_signed_events)
{
	static const int ok[] = {200};
	char s1[WEBHOOK_SECRET_MAX], s2[WEBHOOK_SECRET_MAX];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct redemption r[3];
	struct redeem_result rev;
	struct rcv a, b;
	struct dlist l;
	int i, j, n;

	cfg_test(&c);
	rcv_start(&a, ok, 1, 0);
	rcv_start(&b, ok, 1, 0);
	endpoint(a.url, s1);
	endpoint(b.url, s2);
	redeem_n(3, r);
	ck_assert_int_eq(
	    redeem_reverse(&fx.svc, r[0].id, "test", REVERSAL_KEEP_SEAT, &rev),
	    0);
	ck_assert_int_eq(events_insert(&fx.svc, "hold.expired", 0,
			     "{\"hold\":{\"external_id\":\"h1\"}}"),
	    DB_OK);

	memset(&st, 0, sizeof(st));
	enqueue(&st);
	ck_assert_int_eq(st.events, 5);
	ck_assert_int_eq(st.enqueued, 10);
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 10);
	ck_assert_int_eq(st.delivered, 10);
	ck_assert_int_eq(st.retried + st.dead + st.stale, 0);

	ck_assert_int_eq(rcv_wait(&a, 5, 2000), 5);
	n = rcv_read(&a);
	ck_assert_int_eq(n, 5);
	for (i = 0; i < n; i++) {
		json_t *o = json_loads(reqs[i].body, 0, NULL), *data;
		const char *type;

		assert_signed(&reqs[i], s1);
		ck_assert_int_eq(
		    webhook_signature_verify(s2, reqs[i].sig, reqs[i].body,
			strlen(reqs[i].body), (int64_t)time(NULL), 300),
		    0);
		ck_assert_ptr_nonnull(o);
		type = json_string_value(json_object_get(o, "type"));
		ck_assert_ptr_nonnull(type);
		ck_assert(json_is_string(json_object_get(o, "created_at")));
		data = json_object_get(o, "data");
		ck_assert(json_is_object(data));
		if (strcmp(type, "hold.expired") == 0) {
			ck_assert_str_eq(
			    json_string_value(json_object_get(
				json_object_get(data, "hold"), "external_id")),
			    "h1");
		} else {
			json_t *red = json_object_get(data, "redemption");
			json_int_t id =
			    json_integer_value(json_object_get(red, "id"));
			json_t *want;

			ck_assert(strcmp(type, "code.redeemed") == 0 ||
				  strcmp(type, "redemption.reversed") == 0);
			for (j = 0; j < 3 && r[j].id != id; j++)
				;
			ck_assert_int_lt(j, 3);
			/* the same object as the redeem answer */
			if (strcmp(type, "code.redeemed") == 0) {
				want = redemption_json(&r[j]);
				ck_assert(json_equal(want, red));
				json_decref(want);
			} else {
				ck_assert(json_is_string(
				    json_object_get(red, "reversed_at")));
			}
		}
		json_decref(o);
	}
	/* each event once, with a distinct id */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			ck_assert_str_ne(reqs[i].id, reqs[j].id);
	ck_assert_int_eq(rcv_wait(&b, 5, 2000), 5);
	for (i = 0; i < 5; i++)
		assert_signed(&reqs[i], s2);

	ck_assert_int_eq(dlist(&l, "delivered"), 10);
	for (i = 0; i < l.n; i++) {
		ck_assert_int_eq(l.d[i].attempts, 1);
		ck_assert_int_eq(l.d[i].last_status, 200);
		ck_assert_int_gt(l.d[i].delivered_at, 0);
		ck_assert_str_eq(l.d[i].last_error, "");
	}
	ck_assert_int_eq(dlist(&l, "pending"), 0);
	/* Nothing more to do. */
	memset(&st, 0, sizeof(st));
	enqueue(&st);
	deliver(&c, &st);
	ck_assert_int_eq(st.events + st.enqueued + st.claimed, 0);
	rcv_stop(&a);
	rcv_stop(&b);
	fx_verify_clean();
}
END_TEST

START_TEST(test_webhooks_tenant_isolation)
{
	static const int ok[] = {200};
	struct webhooks_config c;
	struct webhooks_stats st;
	struct svc mine = fx.svc, other;
	char s[WEBHOOK_SECRET_MAX];
	struct rcv a, b;
	struct dlist l;

	cfg_test(&c);
	rcv_start(&a, ok, 1, 0);
	rcv_start(&b, ok, 1, 0);
	endpoint(a.url, s);
	ck_assert_int_eq(tenant_create(fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "other"), ERROR_NONE);
	ck_assert_int_eq(webhook_create(&other, b.url, s, NULL), ERROR_NONE);
	redeem_n(2, NULL);
	fx.svc = other;
	ck_assert_int_eq(
	    events_insert(&other, "hold.expired", 0, "{\"hold\":{}}"), DB_OK);
	fx.svc = mine;
	memset(&st, 0, sizeof(st));
	enqueue(&st);
	ck_assert_int_eq(st.enqueued, 3);
	deliver(&c, &st);
	ck_assert_int_eq(st.delivered, 3);
	ck_assert_int_eq(rcv_wait(&a, 2, 2000), 2);
	ck_assert_int_eq(rcv_wait(&b, 1, 2000), 1);
	ck_assert_ptr_nonnull(strstr(reqs[0].body, "hold.expired"));
	ck_assert_int_eq(dlist(&l, ""), 2); /* the default tenant's */
	rcv_stop(&a);
	rcv_stop(&b);
}
END_TEST

START_TEST(test_webhooks_retry_same_id_backoff)
{
	static const int script[] = {500, 302, 503, 404, 200};
	static const int64_t base[] = {1, 5, 30, 120};
	char s[WEBHOOK_SECRET_MAX], first[BODY_MAX];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct rcv a;
	struct dlist l;
	int64_t before, after, d;
	int i;

	cfg_test(&c);
	rcv_start(&a, script, NELEM(script), 0);
	endpoint(a.url, s);
	redeem_n(1, NULL);
	enqueue(NULL);
	for (i = 0; i < 4; i++) {
		memset(&st, 0, sizeof(st));
		before = db_now();
		deliver(&c, &st);
		after = db_now();
		ck_assert_int_eq(st.claimed, 1);
		ck_assert_int_eq(st.retried, 1);
		/* One run, one attempt: the new time is not due yet. */
		memset(&st, 0, sizeof(st));
		deliver(&c, &st);
		ck_assert_int_eq(st.claimed, 0);
		ck_assert_int_eq(dlist(&l, "pending"), 1);
		ck_assert_int_eq(l.d[0].attempts, i + 1);
		ck_assert_int_eq(l.d[0].last_status, script[i]);
		d = l.d[0].next_attempt_at;
		ck_assert_msg(d >= before + base[i] - base[i] / 5 &&
				  d <= after + base[i] + base[i] / 5,
		    "attempt %d: next at %lld, run %lld-%lld", i + 1,
		    (long long)d, (long long)before, (long long)after);
		ck_assert_int_ge(l.d[0].last_attempt_at, before);
		make_due();
	}
	ck_assert_str_eq(l.d[0].last_error, "HTTP 404");
	deliver(&c, NULL);
	ck_assert_int_eq(dlist(&l, "delivered"), 1);
	ck_assert_int_eq(l.d[0].attempts, 5);
	ck_assert_int_eq(l.d[0].last_status, 200);
	ck_assert_str_eq(l.d[0].last_error, "");

	/* Five requests, the same event and body each time. */
	ck_assert_int_eq(rcv_wait(&a, 5, 2000), 5);
	snprintf(first, sizeof(first), "%s", reqs[0].body);
	for (i = 0; i < 5; i++) {
		assert_signed(&reqs[i], s);
		ck_assert_int_eq(reqs[i].status, script[i]);
		ck_assert_str_eq(reqs[i].id, reqs[0].id);
		ck_assert_str_eq(reqs[i].body, first);
	}
	ck_assert_str_eq(reqs[0].id, l.d[0].event);
	rcv_stop(&a);
}
END_TEST

START_TEST(test_webhooks_redirect_not_followed)
{
	static const int script[] = {301};
	char s[WEBHOOK_SECRET_MAX];
	struct webhooks_config c;
	struct rcv a;
	struct dlist l;

	cfg_test(&c);
	rcv_start(&a, script, 1, 0);
	endpoint(a.url, s);
	redeem_n(1, NULL);
	enqueue(NULL);
	deliver(&c, NULL);
	ck_assert_int_eq(dlist(&l, "pending"), 1);
	ck_assert_int_eq(l.d[0].last_status, 301);
	ck_assert_str_eq(
	    l.d[0].last_error, "HTTP 301 (redirects are not followed)");
	ck_assert_int_eq(rcv_wait(&a, 1, 1000), 1);
	rcv_stop(&a);
}
END_TEST

START_TEST(test_webhooks_timeout)
{
	static const int never[] = {0};
	char s[WEBHOOK_SECRET_MAX];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct timespec t0, t1;
	struct rcv a;
	struct dlist l;
	long ms;

	cfg_test(&c);
	c.timeout_ms = 400;
	rcv_start(&a, never, 1, 0);
	endpoint(a.url, s);
	redeem_n(2, NULL);
	enqueue(NULL);
	memset(&st, 0, sizeof(st));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	deliver(&c, &st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	     (t1.tv_nsec - t0.tv_nsec) / 1000000;
	/* both in parallel, each cut at the timeout */
	ck_assert_int_ge(ms, 350);
	ck_assert_int_lt(ms, 2500);
	ck_assert_int_eq(st.claimed, 2);
	ck_assert_int_eq(st.retried, 2);
	ck_assert_int_eq(dlist(&l, "pending"), 2);
	ck_assert_int_eq(l.d[0].last_status, 0);
	ck_assert_ptr_nonnull(strcasestr(l.d[0].last_error, "timed out"));
	ck_assert_int_eq(rcv_wait(&a, 2, 1000), 2);
	rcv_stop(&a);
}
END_TEST

/* The sweeper's deliver run stops after about a second (DELIVER_RUN_MS)
 * so the process's other jobs, leaked seats first, are not held up by a
 * slow receiver; the next run goes on where it stopped. */
START_TEST(test_webhooks_sweep_run_time_boxed)
{
	static const int ok[] = {200};
	char s[WEBHOOK_SECRET_MAX];
	struct sweep_report r;
	struct rcv a;
	int64_t first;

	rcv_start(&a, ok, 1, 20); /* 64 take 1.3 s: one chunk a run */
	endpoint(a.url, s);
	redeem_n(64, NULL);
	redeem_n(64, NULL);
	redeem_n(64, NULL);
	ck_assert_int_eq(
	    sweep_run(fx.db, SWEEP_DELIVER, "t:1", &r), ERROR_NONE);
	first = r.done;
	ck_assert_int_ge(first, 64);
	ck_assert_int_lt(first, 192);
	ck_assert_int_eq(
	    sweep_run(fx.db, SWEEP_DELIVER, "t:1", &r), ERROR_NONE);
	ck_assert_int_gt(r.done, 0);
	rcv_stop(&a);
}
END_TEST

START_TEST(test_webhooks_dead_after_max_age)
{
	static const int fail[] = {500};
	char s[WEBHOOK_SECRET_MAX], sql[256];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct rcv a;
	struct dlist l;
	int64_t now, created;

	cfg_test(&c);
	rcv_start(&a, fail, 1, 0);
	endpoint(a.url, s);
	redeem_n(1, NULL);
	enqueue(NULL);
	/* The event is four days old: one more try, then the dead letter. */
	snprintf(sql, sizeof(sql),
	    "UPDATE events SET created_at = created_at - %d", FOUR_DAYS);
	fx_sql(sql);
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 1);
	ck_assert_int_eq(st.dead, 1);
	ck_assert_int_eq(dlist(&l, "dead"), 1);
	ck_assert_int_eq(l.d[0].attempts, 1);
	ck_assert_int_eq(l.d[0].last_status, 500);
	ck_assert_str_eq(l.d[0].last_error, "HTTP 500");
	make_due();
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 0);
	ck_assert_int_eq(rcv_wait(&a, 1, 1000), 1);

	/* Near the end of its age a retry is set no later than the end,
	 * and fails there for good; the age is a setting. */
	c.max_age = 1000;
	now = db_now();
	snprintf(sql, sizeof(sql), "UPDATE events SET created_at = %lld",
	    (long long)(now - 990));
	fx_sql(sql);
	fx_sql("UPDATE webhook_endpoints SET created_at = 0");
	fx_sql("DELETE FROM webhook_deliveries");
	fx_sql("UPDATE events SET enqueued_at = NULL");
	enqueue(NULL);
	fx_sql("UPDATE webhook_deliveries SET attempts = 5");
	deliver(&c, NULL);
	ck_assert_int_eq(dlist(&l, "pending"), 1);
	created = now - 990;
	ck_assert_int_eq(l.d[0].next_attempt_at, created + 1000);
	snprintf(sql, sizeof(sql), "UPDATE events SET created_at = %lld",
	    (long long)(now - 1000));
	fx_sql(sql);
	make_due();
	deliver(&c, NULL);
	ck_assert_int_eq(dlist(&l, "dead"), 1);
	ck_assert_int_eq(l.d[0].attempts, 7);
	rcv_stop(&a);
}
END_TEST

START_TEST(test_webhooks_enqueue_idempotent)
{
	struct webhooks_stats st;
	int64_t a, b, x;
	char sql[256];

	a = endpoint("http://127.0.0.1:9/a", NULL);
	x = endpoint("http://127.0.0.1:9/x", NULL);
	ck_assert_int_eq(webhook_disable(&fx.svc, x, NULL), ERROR_NONE);
	redeem_n(2, NULL);
	b = endpoint("http://127.0.0.1:9/b", NULL);
	/* The events came before b, after a. */
	fx_sql("UPDATE events SET created_at = created_at - 5");
	snprintf(sql, sizeof(sql),
	    "UPDATE webhook_endpoints SET created_at = created_at - 10 "
	    "WHERE id IN (%lld, %lld)",
	    (long long)a, (long long)x);
	fx_sql(sql);
	memset(&st, 0, sizeof(st));
	enqueue(&st);
	ck_assert_int_eq(st.events, 2);
	ck_assert_int_eq(st.enqueued, 2);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = %lld",
	    (long long)a);
	ck_assert_int_eq(fx_count(sql), 2);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM webhook_deliveries"), 2);
	/* Again: nothing new, even with the marks gone (UNIQUE). */
	memset(&st, 0, sizeof(st));
	enqueue(&st);
	ck_assert_int_eq(st.events + st.enqueued, 0);
	fx_sql("UPDATE events SET enqueued_at = NULL");
	memset(&st, 0, sizeof(st));
	enqueue(&st);
	ck_assert_int_eq(st.events, 2);
	ck_assert_int_eq(st.enqueued, 0);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM webhook_deliveries"), 2);
	/* A new event reaches a and b, not the disabled x. */
	redeem_n(1, NULL);
	memset(&st, 0, sizeof(st));
	enqueue(&st);
	ck_assert_int_eq(st.enqueued, 2);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = %lld",
	    (long long)b);
	ck_assert_int_eq(fx_count(sql), 1);
	snprintf(sql, sizeof(sql),
	    "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = %lld",
	    (long long)x);
	ck_assert_int_eq(fx_count(sql), 0);
	/* Every event is marked, in batches. */
	redeem_n(30, NULL);
	ck_assert_int_eq(webhooks_enqueue(fx.db, 7, NULL), 0);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM events WHERE enqueued_at IS NULL"),
	    23);
	enqueue(NULL);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM events WHERE enqueued_at IS NULL"),
	    0);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM webhook_deliveries"), 2 + 2 + 60);
}
END_TEST

/* Forks n children that wait at a barrier, then run fn with their own
 * connection; returns after all exited (each must exit 0). */
static void
race(int n, void (*fn)(struct db *, int, void *), void *arg)
{
	pid_t pids[8];
	int gate[2], i, status;
	char go = 0;

	ck_assert_int_le(n, 8);
	ck_assert_int_eq(pipe(gate), 0);
	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct db *db = fx_connect();

			close(gate[1]);
			if (read(gate[0], &go, 1) < 0)
				_exit(3);
			fn(db, i, arg);
			db_close(db);
			_exit(0);
		}
	}
	close(gate[0]);
	close(gate[1]); /* go */
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "child %d: status %d", i, status);
	}
}

static void
child_enqueue(struct db *db, int i, void *arg)
{
	(void)i;
	(void)arg;
	if (webhooks_enqueue(db, 10000, NULL) != 0)
		_exit(1);
}

START_TEST(test_webhooks_enqueue_race)
{
	endpoint("http://127.0.0.1:9/a", NULL);
	endpoint("http://127.0.0.1:9/b", NULL);
	redeem_n(60, NULL);
	race(4, child_enqueue, NULL);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM webhook_deliveries"), 120);
	ck_assert_int_eq(
	    fx_count("SELECT COUNT(*) FROM events WHERE enqueued_at IS NULL"),
	    0);
}
END_TEST

START_TEST(test_webhooks_disabled_gets_nothing)
{
	static const int ok[] = {200};
	char sa[WEBHOOK_SECRET_MAX], sb[WEBHOOK_SECRET_MAX], sql[200];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct rcv a, b;
	struct dlist l;
	int64_t ia, ib;

	cfg_test(&c);
	rcv_start(&a, ok, 1, 0);
	rcv_start(&b, ok, 1, 0);
	ia = endpoint(a.url, sa);
	ib = endpoint(b.url, sb);
	ck_assert_int_eq(webhook_disable(&fx.svc, ib, NULL), ERROR_NONE);
	redeem_n(1, NULL);
	enqueue(NULL);
	deliver(&c, NULL);
	ck_assert_int_eq(rcv_wait(&a, 1, 2000), 1);
	ck_assert_int_eq(rcv_read(&b), 0);

	/* Disabled with a delivery pending: it ends dead, visibly. */
	redeem_n(1, NULL);
	enqueue(NULL);
	ck_assert_int_eq(webhook_disable(&fx.svc, ia, NULL), ERROR_NONE);
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 0);
	ck_assert_int_eq(dlist(&l, "dead"), 1);
	ck_assert_str_eq(l.d[0].last_error, "endpoint disabled");
	ck_assert_int_eq(l.d[0].attempts, 0);

	/* Disabled between the claim's read and the send (the flag seen
	 * by the attempt itself): not sent, dead. */
	snprintf(sql, sizeof(sql),
	    "UPDATE webhook_endpoints SET enabled = 1, disabled_at = NULL "
	    "WHERE id = %lld",
	    (long long)ia);
	fx_sql(sql);
	redeem_n(1, NULL);
	enqueue(NULL);
	snprintf(sql, sizeof(sql),
	    "UPDATE webhook_endpoints SET enabled = 0 WHERE id = %lld",
	    (long long)ia);
	fx_sql(sql);
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 1);
	ck_assert_int_eq(st.dead, 1);
	ck_assert_int_eq(dlist(&l, "dead"), 2);
	ck_assert_int_eq(rcv_read(&a), 1);
	rcv_stop(&a);
	rcv_stop(&b);
}
END_TEST

START_TEST(test_webhooks_bad_payload_dead)
{
	static const int ok[] = {200};
	char s[WEBHOOK_SECRET_MAX];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct rcv a;
	struct dlist l;

	cfg_test(&c);
	rcv_start(&a, ok, 1, 0);
	endpoint(a.url, s);
	ck_assert_int_eq(
	    events_insert(&fx.svc, "hold.expired", 0, "not json"), DB_OK);
	ck_assert_int_eq(
	    events_insert(&fx.svc, "hold.expired", 0, "[1]"), DB_OK);
	enqueue(NULL);
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.dead, 2);
	ck_assert_int_eq(dlist(&l, "dead"), 2);
	ck_assert_str_eq(l.d[0].last_error, "bad event payload");
	usleep(100000);
	ck_assert_int_eq(rcv_read(&a), 0);
	rcv_stop(&a);
}
END_TEST

START_TEST(test_webhooks_private_refused)
{
	static const int ok[] = {200};
	char s[WEBHOOK_SECRET_MAX];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct rcv a;
	struct dlist l;

	setenv("REDEEM_WEBHOOK_ALLOW_PRIVATE", "0", 1);
	webhooks_config_defaults(&c);
	unsetenv("REDEEM_WEBHOOK_ALLOW_PRIVATE");
	c.timeout_ms = 2000;
	ck_assert_int_eq(c.allow_private, 0);
	rcv_start(&a, ok, 1, 0);
	endpoint(a.url, s);
	redeem_n(1, NULL);
	enqueue(NULL);
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.retried, 1);
	ck_assert_int_eq(dlist(&l, "pending"), 1);
	ck_assert_str_eq(
	    l.d[0].last_error, "refused: private or loopback address");
	ck_assert_int_eq(l.d[0].last_status, 0);
	usleep(200000);
	ck_assert_int_eq(rcv_read(&a), 0);
	/* The operator allows it: the next attempt goes through. */
	c.allow_private = 1;
	make_due();
	deliver(&c, NULL);
	ck_assert_int_eq(dlist(&l, "delivered"), 1);
	ck_assert_int_eq(rcv_wait(&a, 1, 2000), 1);
	rcv_stop(&a);
}
END_TEST

struct deliver_race {
	struct webhooks_config c;
	int seconds; /* keep running this long */
};

static void
child_deliver(struct db *db, int i, void *arg)
{
	struct deliver_race *d = arg;
	struct timespec t0, t;

	(void)i;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (webhooks_deliver_due(db, &d->c, 1000, NULL) != 0)
			_exit(1);
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < d->seconds);
}

/* How many requests carried event id. */
static int
requests_for(int n, const char *id)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += strcmp(reqs[i].id, id) == 0;
	return k;
}

START_TEST(test_webhooks_concurrent_deliver)
{
	static const int ok[] = {200}, fail[] = {500};
	char s[WEBHOOK_SECRET_MAX];
	struct deliver_race d;
	struct rcv a;
	struct dlist l;
	int64_t sum = 0;
	int i, n;

	/* All succeed: each event arrives exactly once. */
	cfg_test(&d.c);
	d.c.parallel = 3; /* many small rounds to interleave */
	d.seconds = 1;
	rcv_start(&a, ok, 1, 15);
	endpoint(a.url, s);
	redeem_n(30, NULL);
	enqueue(NULL);
	race(3, child_deliver, &d);
	n = rcv_read(&a);
	ck_assert_int_eq(n, 30);
	ck_assert_int_eq(dlist(&l, "delivered"), 30);
	for (i = 0; i < l.n; i++) {
		ck_assert_int_eq(l.d[i].attempts, 1);
		ck_assert_int_eq(requests_for(n, l.d[i].event), 1);
	}
	rcv_stop(&a);

	/* All fail and are retried while both run: as many requests per
	 * event as attempts recorded, never one attempt sent twice. */
	fx_sql("UPDATE webhook_endpoints SET enabled = 0");
	rcv_start(&a, fail, 1, 15);
	endpoint(a.url, s);
	redeem_n(20, NULL);
	enqueue(NULL);
	d.seconds = 3;
	race(3, child_deliver, &d);
	n = rcv_read(&a);
	ck_assert_int_eq(dlist(&l, "pending"), 20);
	for (i = 0; i < l.n; i++) {
		ck_assert_int_ge(l.d[i].attempts, 2);
		ck_assert_int_eq(
		    requests_for(n, l.d[i].event), (int)l.d[i].attempts);
		sum += l.d[i].attempts;
	}
	ck_assert_int_eq(n, (int)sum);
	rcv_stop(&a);
}
END_TEST

static void
child_deliver_once(struct db *db, int i, void *arg)
{
	(void)i;
	webhooks_deliver_due(db, arg, 1000, NULL);
}

START_TEST(test_webhooks_killed_claim_comes_due)
{
	static const int script[] = {0, 200}; /* hang, then answer */
	char s[WEBHOOK_SECRET_MAX];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct rcv a;
	struct dlist l;
	pid_t pid;
	int64_t now;

	/* The lease is never shorter than the timeout and 2 s: 3 s here. */
	cfg_test(&c);
	c.timeout_ms = 1500;
	c.lease = 1;
	rcv_start(&a, script, NELEM(script), 0);
	endpoint(a.url, s);
	redeem_n(1, NULL);
	enqueue(NULL);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct db *db = fx_connect();

		child_deliver_once(db, 0, &c);
		_exit(0);
	}
	/* The sweeper is mid-attempt when it dies. */
	ck_assert_int_eq(rcv_wait(&a, 1, 5000), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	now = db_now();
	ck_assert_int_eq(dlist(&l, "pending"), 1);
	ck_assert_int_eq(l.d[0].attempts, 1);
	ck_assert_int_gt(l.d[0].next_attempt_at, now - 1);
	ck_assert_int_le(l.d[0].next_attempt_at, now + 3);
	/* Leased: nobody takes it yet. */
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 0);
	/* The lease runs out: due again, the same event sent again. */
	sleep(4);
	c.timeout_ms = 3000;
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 1);
	ck_assert_int_eq(st.delivered, 1);
	ck_assert_int_eq(dlist(&l, "delivered"), 1);
	ck_assert_int_eq(l.d[0].attempts, 2);
	ck_assert_int_eq(rcv_wait(&a, 2, 2000), 2);
	ck_assert_str_eq(reqs[0].id, reqs[1].id);
	ck_assert_str_eq(reqs[0].body, reqs[1].body);
	assert_signed(&reqs[1], s);
	rcv_stop(&a);
}
END_TEST

START_TEST(test_webhooks_stale_result_not_written)
{
	static const int script[] = {0, 500}; /* hang, then fail */
	char s[WEBHOOK_SECRET_MAX];
	struct webhooks_config c;
	struct webhooks_stats st;
	struct rcv a;
	struct dlist l;
	pid_t pid;
	int status;

	/* A sweeper whose attempt outlives its lease (moved back here, as
	 * a clock jump would): meanwhile another claims and records the
	 * next attempt, and the late result is dropped (fenced by the
	 * attempt number), not written over it. */
	cfg_test(&c);
	c.timeout_ms = 2500;
	rcv_start(&a, script, NELEM(script), 0);
	endpoint(a.url, s);
	redeem_n(1, NULL);
	enqueue(NULL);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct db *db = fx_connect();

		memset(&st, 0, sizeof(st));
		if (webhooks_deliver_due(db, &c, 1, &st) != 0)
			_exit(1);
		_exit(st.claimed == 1 && st.stale == 1 ? 0 : 2);
	}
	ck_assert_int_eq(rcv_wait(&a, 1, 5000), 1);
	make_due();
	c.timeout_ms = 2000;
	memset(&st, 0, sizeof(st));
	deliver(&c, &st);
	ck_assert_int_eq(st.claimed, 1);
	ck_assert_int_eq(st.retried, 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "the first sweeper: status %d", status);
	ck_assert_int_eq(dlist(&l, "pending"), 1);
	ck_assert_int_eq(l.d[0].attempts, 2);
	ck_assert_int_eq(l.d[0].last_status, 500);
	ck_assert_str_eq(l.d[0].last_error, "HTTP 500");
	rcv_stop(&a);
}
END_TEST

Suite *
suite_webhooks(void)
{
	Suite *s = suite_create("webhooks");
	TCase *tc = tcase_create("webhooks");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_webhooks_create_list_disable);
	tcase_add_test(tc, test_webhooks_list_per_tenant);
	tcase_add_test(tc, test_webhooks_url_validation);
	tcase_add_test(tc, test_webhooks_addr_private);
	tcase_add_test(tc, test_webhooks_signature);
	tcase_add_test(tc, test_webhooks_retry_delay_bounds);
	tcase_add_test(tc, test_webhooks_config_env);
	tcase_add_test(tc, test_webhooks_json);
	tcase_add_test(tc, test_webhooks_delivers_signed_events);
	tcase_add_test(tc, test_webhooks_tenant_isolation);
	tcase_add_test(tc, test_webhooks_retry_same_id_backoff);
	tcase_add_test(tc, test_webhooks_redirect_not_followed);
	tcase_add_test(tc, test_webhooks_timeout);
	tcase_add_test(tc, test_webhooks_sweep_run_time_boxed);
	tcase_add_test(tc, test_webhooks_dead_after_max_age);
	tcase_add_test(tc, test_webhooks_enqueue_idempotent);
	tcase_add_test(tc, test_webhooks_enqueue_race);
	tcase_add_test(tc, test_webhooks_disabled_gets_nothing);
	tcase_add_test(tc, test_webhooks_bad_payload_dead);
	tcase_add_test(tc, test_webhooks_private_refused);
	tcase_add_test(tc, test_webhooks_concurrent_deliver);
	tcase_add_test(tc, test_webhooks_killed_claim_comes_due);
	tcase_add_test(tc, test_webhooks_stale_result_not_written);
	suite_add_tcase(s, tc);
	return s;
}
