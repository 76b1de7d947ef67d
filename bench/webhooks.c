/*
 * Webhooks: N events fanned out to one endpoint on a local receiver and
 * delivered, by one process, through webhooks_enqueue and
 * webhooks_deliver_due, against raw statements and libcurl doing the same
 * work with the same parallelism:
 *
 *   fan-out, per 200 events: BEGIN; SELECT events not enqueued; per
 *     event INSERT delivery, UPDATE event; COMMIT
 *   per round of `parallel` deliveries: BEGIN; SELECT due; per delivery
 *     UPDATE (claim), read event and endpoint; COMMIT; the signed POSTs
 *     at once (curl multi); BEGIN; per delivery UPDATE delivered; COMMIT
 *
 * The raw side keeps one curl multi handle and its easy handles for the
 * whole run, so its connections stay open between rounds (keep-alive).
 * Each side delivers N in 10 turns, the two alternating, each turn on
 * N/10 events put in the outbox just before it, untimed.
 * Each engine's webhook row has a database of its own: the fan-out scans
 * every event not yet enqueued, and the other rows leave many.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <sodium.h>

#include "../app/lib/common.h"
#include "../app/core/events.h"
#include "../app/lib/str.h"
#include "../app/core/webhooks.h"
#include "bench.h"

#define ENQUEUE_BATCH 200 /* the service's (app/core/webhook_deliver.c) */
#define SETUP_BATCH 1000
#define PARALLEL_MAX 64
#define ROUNDS 10 /* turns of each side */

struct events {
	int64_t tenant, n;
	int pass;
};

static int
events_tx(struct db *db, void *arg)
{
	struct events *e = arg;
	char ev[EVENT_ID_LEN + 1], account[64], payload[1024];
	int64_t i;
	int rc;

	for (i = 0; i < e->n; i++) {
		event_id(ev);
		snprintf(account, sizeof(account), "hook%d-%lld@bench", e->pass,
		    (long long)i);
		bench_redemption_json(payload, sizeof(payload), i + 1,
		    "ABCD-EFGH-JKMN", account, "webhooks", i + 1);
		rc = db_exec_id(db, STMT_EVENT_INSERT, NULL, NULL, "ittnt",
		    e->tenant, ev, "code.redeemed", NULL, payload);
		if (rc != DB_OK)
			return rc;
	}
	return DB_OK;
}

/* N events in the outbox, not yet enqueued. */
static void
make_events(struct db *db, int64_t tenant, int pass, int64_t n)
{
	struct events e = {tenant, 0, pass};
	int64_t done;

	for (done = 0; done < n; done += e.n) {
		e.n = n - done < SETUP_BATCH ? n - done : SETUP_BATCH;
		if (db_transact(db, DB_TX_WRITE, events_tx, &e) != DB_OK) {
			fprintf(stderr, "bench: events: %s\n", db_errmsg(db));
			exit(1);
		}
	}
}

/* --- raw ------------------------------------------------------------------ */

struct fan {
	int64_t endpoint;
	int64_t rows;
};

static int
raw_fan_tx(struct db *db, void *arg)
{
	struct fan *f = arg;
	int64_t ids[ENQUEUE_BATCH], tenants[ENQUEUE_BATCH], i;
	struct db_stmt *st;
	int rc;

	f->rows = 0;
	rc = db_query(
	    db, STMT_WEBHOOK_ENQUEUE_SCAN, &st, "i", (int64_t)ENQUEUE_BATCH);
	while (rc == DB_ROW) {
		if (f->rows < ENQUEUE_BATCH) {
			ids[f->rows] = db_col_i64(st, 0);
			tenants[f->rows++] = db_col_i64(st, 1);
		}
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK)
		return rc;
	for (i = 0; i < f->rows; i++) {
		rc = db_exec_id(db, STMT_WEBHOOK_ENQUEUE_FAN, NULL, NULL, "iii",
		    tenants[i], ids[i], f->endpoint);
		if (rc == DB_OK)
			rc = db_exec_id(db, STMT_WEBHOOK_ENQUEUE_MARK, NULL,
			    NULL, "i", ids[i]);
		if (rc != DB_OK)
			return rc;
	}
	return DB_OK;
}

struct slot {
	int64_t id, attempt;
	char *body;
	struct curl_slist *hdr;
	CURL *h;
	long status;
};

struct raw_round {
	int64_t due_by, lease;
	int want, n;
	struct slot s[PARALLEL_MAX];
	int64_t delivered;
};

/* The contract's body around the stored payload, and its signature. */
static int
slot_fill(struct slot *s, const char *ev, const char *type, int64_t created,
    const char *payload, const char *secret)
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	char at[32], ts[32], hex[2 * sizeof(mac) + 1], sig[160];
	size_t len;
	int n;

	str_rfc3339(created, at);
	len = strlen(ev) + strlen(type) + strlen(payload) + 128;
	if ((s->body = malloc(len)) == NULL)
		return -1;
	snprintf(s->body, len,
	    "{\"id\":\"%s\",\"type\":\"%s\",\"created_at\":\"%s\","
	    "\"data\":%s}",
	    ev, type, at, payload);
	n = snprintf(ts, sizeof(ts), "%lld.", (long long)time(NULL));
	crypto_auth_hmacsha256_init(
	    &st, (const unsigned char *)secret, strlen(secret));
	crypto_auth_hmacsha256_update(
	    &st, (const unsigned char *)ts, (unsigned long long)n);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)s->body,
	    (unsigned long long)strlen(s->body));
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
	ts[n - 1] = '\0';
	snprintf(sig, sizeof(sig), "Redeem-Signature: t=%s,v1=%s", ts, hex);
	s->hdr = curl_slist_append(NULL, "Content-Type: application/json");
	if (s->hdr == NULL || curl_slist_append(s->hdr, sig) == NULL ||
	    curl_slist_append(s->hdr, "Expect:") == NULL)
		return -1;
	return 0;
}

static int
raw_claim_tx(struct db *db, void *arg)
{
	struct raw_round *r = arg;
	struct db_stmt *st;
	int64_t n;
	int i, kept = 0, rc;

	for (i = 0; i < r->n; i++) {
		free(r->s[i].body);
		r->s[i].body = NULL;
		curl_slist_free_all(r->s[i].hdr);
		r->s[i].hdr = NULL;
	}
	r->n = 0;
	rc = db_query(
	    db, STMT_WEBHOOK_DUE, &st, "ii", r->due_by, (int64_t)r->want);
	while (rc == DB_ROW) {
		if (r->n < r->want) {
			r->s[r->n].id = db_col_i64(st, 0);
			r->s[r->n++].attempt = db_col_i64(st, 1);
		}
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK)
		return rc;
	for (i = 0; i < r->n; i++) {
		struct slot *s = &r->s[i];

		rc = db_exec_id(db, STMT_WEBHOOK_CLAIM, &n, NULL, "iii",
		    r->lease, s->id, s->attempt);
		if (rc != DB_OK)
			return rc;
		if (n != 1)
			continue;
		r->s[kept].id = s->id;
		r->s[kept].attempt = s->attempt + 1;
		kept++;
	}
	r->n = kept;
	for (i = 0; i < r->n; i++) {
		struct slot *s = &r->s[i];
		const char *ev, *type, *payload, *secret;

		rc = db_query(db, STMT_WEBHOOK_JOB, &st, "i", s->id);
		if (rc != DB_ROW)
			return rc == DB_OK ? DB_EFAIL : rc;
		ev = db_col_text(st, 0);
		type = db_col_text(st, 1);
		payload = db_col_text(st, 3);
		secret = db_col_text(st, 5);
		rc = slot_fill(s, ev ? ev : "", type ? type : "",
		    db_col_i64(st, 2), payload ? payload : "{}",
		    secret ? secret : "");
		db_reset(st);
		if (rc == -1)
			return DB_EFAIL;
	}
	return DB_OK;
}

static int
raw_finish_tx(struct db *db, void *arg)
{
	struct raw_round *r = arg;
	int64_t n;
	int i, rc;

	r->delivered = 0;
	for (i = 0; i < r->n; i++) {
		struct slot *s = &r->s[i];

		if (s->status < 200 || s->status >= 300)
			continue; /* the receiver always says 200 */
		rc = db_exec_id(db, STMT_WEBHOOK_DELIVERED, &n, NULL, "iii",
		    (int64_t)s->status, s->id, s->attempt);
		if (rc != DB_OK)
			return rc;
		r->delivered += n;
	}
	return DB_OK;
}

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* The round's POSTs at once, on the multi handle's kept connections. */
static void
raw_send(CURLM *m, struct raw_round *r, const char *url)
{
	CURLMsg *msg;
	int i, running = 0, left;

	for (i = 0; i < r->n; i++) {
		struct slot *s = &r->s[i];

		s->status = 0;
		curl_easy_setopt(s->h, CURLOPT_URL, url);
		curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdr);
		curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->body);
		curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)strlen(s->body));
		curl_multi_add_handle(m, s->h);
	}
	do {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct slot *s = NULL;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(
			    msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
			curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_RESPONSE_CODE, &s->status);
		}
	} while (
	    running > 0 && curl_multi_poll(m, NULL, 0, 1000, NULL) == CURLM_OK);
	for (i = 0; i < r->n; i++)
		curl_multi_remove_handle(m, r->s[i].h);
}

/* The raw side: one curl multi handle and one easy handle per slot for
 * the whole row, so connections are kept between rounds. */
struct raw_side {
	CURLM *m;
	struct raw_round *r;
	struct fan f;
	const char *url;
};

static void
raw_open(struct raw_side *x, int64_t endpoint, const char *url,
    const struct webhooks_config *cfg)
{
	struct raw_round *r;
	int i;

	memset(x, 0, sizeof(*x));
	if ((r = x->r = calloc(1, sizeof(*r))) == NULL ||
	    (x->m = curl_multi_init()) == NULL)
		exit(1);
	x->f.endpoint = endpoint;
	x->url = url;
	r->want = cfg->parallel < 1              ? 1
		  : cfg->parallel > PARALLEL_MAX ? PARALLEL_MAX
						 : cfg->parallel;
	r->lease = cfg->timeout_ms / 1000 + 2 > cfg->lease
		       ? cfg->timeout_ms / 1000 + 2
		       : cfg->lease;
	/* every slot's connection stays in the cache between rounds */
	curl_multi_setopt(x->m, CURLMOPT_MAXCONNECTS, (long)r->want);
	for (i = 0; i < r->want; i++) {
		CURL *h = r->s[i].h = curl_easy_init();

		if (h == NULL)
			exit(1);
		curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(h, CURLOPT_PROXY, "");
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)cfg->timeout_ms);
		curl_easy_setopt(h, CURLOPT_USERAGENT, "Redeem-Webhooks/1");
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(h, CURLOPT_PRIVATE, &r->s[i]);
	}
}

static void
raw_close(struct raw_side *x)
{
	int i;

	for (i = 0; i < PARALLEL_MAX; i++) {
		free(x->r->s[i].body);
		curl_slist_free_all(x->r->s[i].hdr);
		if (x->r->s[i].h != NULL)
			curl_easy_cleanup(x->r->s[i].h);
	}
	curl_multi_cleanup(x->m);
	free(x->r);
}

/* Fan-out and delivery of every pending event: the deliveries made, and
 * the seconds in *secs. */
static int64_t
raw_turn(struct db *db, struct raw_side *x, double *secs)
{
	struct raw_round *r = x->r;
	double t0 = bench_now();
	struct db_stmt *st;
	int64_t done = 0;

	do {
		if (db_transact(db, DB_TX_WRITE, raw_fan_tx, &x->f) != DB_OK) {
			fprintf(
			    stderr, "bench: raw fan-out: %s\n", db_errmsg(db));
			break;
		}
	} while (x->f.rows == ENQUEUE_BATCH);
	if (db_query(db, STMT_NOW, &st, "") != DB_ROW)
		exit(1);
	r->due_by = db_col_i64(st, 0);
	db_reset(st);
	for (;;) {
		if (db_transact(db, DB_TX_WRITE, raw_claim_tx, r) != DB_OK) {
			fprintf(
			    stderr, "bench: raw claim: %s\n", db_errmsg(db));
			break;
		}
		if (r->n == 0)
			break;
		raw_send(x->m, r, x->url);
		if (db_transact(db, DB_TX_WRITE, raw_finish_tx, r) != DB_OK) {
			fprintf(
			    stderr, "bench: raw finish: %s\n", db_errmsg(db));
			break;
		}
		done += r->delivered;
	}
	*secs += bench_now() - t0;
	return done;
}

/* The service's deliver job on n pending events. */
static int64_t
svc_turn(
    struct db *db, const struct webhooks_config *cfg, int64_t n, double *secs)
{
	struct webhooks_stats st;
	double t0 = bench_now();

	memset(&st, 0, sizeof(st));
	if (webhooks_enqueue(db, n, &st) == -1 ||
	    webhooks_deliver_due(db, cfg, n, &st) == -1)
		fprintf(stderr, "bench: webhooks: %s\n", db_errmsg(db));
	*secs += bench_now() - t0;
	return st.delivered;
}

/* --- the row -------------------------------------------------------------- */

/* Enabled endpoints of earlier runs on this database: they would get
 * the events too, and nobody answers them now. */
struct old {
	int64_t id[256];
	int n;
};

static void
note_endpoint(void *arg, const struct webhook *w)
{
	struct old *o = arg;

	if (w->enabled && o->n < (int)NELEM(o->id))
		o->id[o->n++] = w->id;
}

void
bench_webhooks_header(int64_t deliveries)
{
	struct webhooks_config cfg;

	webhooks_config_defaults(&cfg);
	printf("\nWebhooks: %lld events fanned out to one endpoint on a local "
	       "receiver (keep-alive, answers 200) and delivered by one "
	       "process, %d at once,\nin %d turns of each side, "
	       "alternating.\n"
	       "raw = per 200 events: SELECT, INSERT delivery, UPDATE event; "
	       "per round: SELECT due, UPDATE claim, read job; signed POSTs "
	       "(curl multi,\nconnections kept); UPDATE delivered. "
	       "service = webhooks_enqueue() + webhooks_deliver_due(). "
	       "conns: TCP connections the receiver accepted.\n\n",
	    (long long)deliveries, cfg.parallel, ROUNDS);
	printf("%-8s %9s %13s %8s %8s %13s %8s %8s %7s %s\n", "engine",
	    "events", "raw deliv/s", "s", "conns", "service/s", "s", "conns",
	    "ratio", "(target 0.70)");
	fflush(stdout);
}

void
bench_webhooks(const struct bench_engine *e, int64_t n)
{
	char url[64], secret[WEBHOOK_SECRET_MAX];
	struct webhooks_config cfg;
	struct bench_receiver rc;
	struct raw_side raw;
	struct webhook w;
	struct db *db;
	struct svc s;
	double raw_s = 0, svc_s = 0;
	int64_t raw_done = 0, svc_done = 0, posts, k;
	int64_t conns, raw_conns = 0, svc_conns = 0;
	struct old old;
	int i, round, side;

	if (e->hooks_dsn[0] == '\0')
		return;
	setenv("REDEEM_WEBHOOK_ALLOW_PRIVATE", "1", 1);
	webhooks_config_defaults(&cfg);
	cfg.allow_private = 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	bench_receiver_start(&rc);
	db = bench_open(e->hooks_dsn);
	bench_svc(db, &s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", rc.port);
	memset(&old, 0, sizeof(old));
	webhook_list(&s, note_endpoint, &old);
	for (i = 0; i < old.n; i++)
		webhook_disable(&s, old.id[i], NULL);
	if (webhook_create(&s, url, secret, &w) != ERROR_NONE) {
		fprintf(stderr, "bench: webhook: %s\n", db_errmsg(db));
		exit(1);
	}

	/* Each side's events in ROUNDS turns, the order swapped every
	 * round: both meet the tables at the same sizes on average. */
	raw_open(&raw, w.id, url, &cfg);
	for (round = 0; round < ROUNDS; round++) {
		k = n / ROUNDS + (round < n % ROUNDS);
		for (side = 0; side < 2; side++) {
			make_events(db, s.tenant_id, round * 2 + side, k);
			conns = *rc.accepted;
			if ((side + round) % 2 == 0) {
				raw_done += raw_turn(db, &raw, &raw_s);
				raw_conns += *rc.accepted - conns;
			} else {
				svc_done += svc_turn(db, &cfg, k, &svc_s);
				svc_conns += *rc.accepted - conns;
			}
		}
	}
	raw_close(&raw);
	posts = *rc.requests;
	db_close(db);
	bench_receiver_stop(&rc);

	printf("%-8s %9lld %13.0f %8.1f %8lld %13.0f %8.1f %8lld ", e->name,
	    (long long)n, (double)raw_done / raw_s, raw_s, (long long)raw_conns,
	    (double)svc_done / svc_s, svc_s, (long long)svc_conns);
	bench_ratio((double)raw_done / raw_s, (double)svc_done / svc_s);
	if (raw_done != n || svc_done != n || posts != 2 * n)
		printf("         (delivered: raw %lld, service %lld of %lld; "
		       "the receiver answered %lld)\n",
		    (long long)raw_done, (long long)svc_done, (long long)n,
		    (long long)posts);
	fflush(stdout);
	bench_record("webhooks", e->name, "service", (double)svc_done / svc_s,
	    "deliveries/s",
	    bench_ratio_value(
		(double)raw_done / raw_s, (double)svc_done / svc_s),
	    "service/raw", "%lld events, one process", (long long)n);
}
