/*
 * Webhook delivery: the fan-out of outbox events into delivery rows, the
 * claim (a lease per attempt), the signed POSTs (libcurl, in parallel),
 * and the results written back, fenced by the attempt number. Neither a
 * secret nor a URL (its query may carry a token) reaches a log or a
 * delivery's last_error.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "webhooks.h"

#define ENQUEUE_BATCH 200
#define MAX_PARALLEL 64

/* ---- the fan-out ---- */

struct enqueue {
	int64_t want;
	int64_t rows; /* events read this time */
	int64_t events, enqueued;
	struct {
		int64_t id, tenant_id, created_at;
	} ev[ENQUEUE_BATCH];
	int64_t tenant_id; /* whose endpoints targets holds (0: none yet) */
	struct target {
		int64_t id, created_at;
	} * targets; /* malloc, grows */
	size_t ntargets, cap;
};

/* The tenant's enabled endpoints, read once per run of its events. */
static int
enqueue_targets(struct db *db, struct enqueue *q, int64_t tenant_id)
{
	struct db_stmt *st;
	struct target *p;
	int rc;

	if (q->tenant_id == tenant_id)
		return DB_OK;
	q->tenant_id = 0;
	q->ntargets = 0;
	if ((st = db_prepare(db, STMT_WEBHOOK_ENQUEUE_TARGETS)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, tenant_id);
	while ((rc = db_step(st)) == DB_ROW) {
		if (q->ntargets == q->cap) {
			q->cap = q->cap ? q->cap * 2 : 16;
			if ((p = realloc(q->targets, q->cap * sizeof(*p))) ==
			    NULL) {
				rc = DB_EFAIL;
				break;
			}
			q->targets = p;
		}
		q->targets[q->ntargets].id = db_col_i64(st, 0);
		q->targets[q->ntargets].created_at = db_col_i64(st, 1);
		q->ntargets++;
	}
	db_reset(st);
	if (rc != DB_OK)
		return rc == DB_ROW ? DB_EFAIL : rc;
	q->tenant_id = tenant_id;
	return DB_OK;
}

static int
enqueue_tx(struct db *db, void *arg)
{
	struct enqueue *q = arg;
	struct db_stmt *st;
	int64_t i, n;
	size_t k;
	int rc = DB_OK;

	q->rows = q->events = q->enqueued = 0;
	q->tenant_id = 0;
	if ((st = db_prepare(db, STMT_WEBHOOK_ENQUEUE_SCAN)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, q->want);
	while (q->rows < q->want && (rc = db_step(st)) == DB_ROW) {
		q->ev[q->rows].id = db_col_i64(st, 0);
		q->ev[q->rows].tenant_id = db_col_i64(st, 1);
		q->ev[q->rows].created_at = db_col_i64(st, 2);
		q->rows++;
	}
	db_reset(st);
	if (rc != DB_OK && rc != DB_ROW)
		return rc;
	for (i = 0; i < q->rows; i++) {
		if ((rc = enqueue_targets(db, q, q->ev[i].tenant_id)) != DB_OK)
			return rc;
		for (k = 0; k < q->ntargets; k++) {
			/* an endpoint made after the event does not get it */
			if (q->targets[k].created_at > q->ev[i].created_at)
				continue;
			rc = db_exec(db, STMT_WEBHOOK_ENQUEUE_FAN, &n, "iii",
			    q->ev[i].tenant_id, q->ev[i].id, q->targets[k].id);
			if (rc != DB_OK)
				return rc;
			q->enqueued += n;
		}
		rc = db_exec(
		    db, STMT_WEBHOOK_ENQUEUE_MARK, &n, "i", q->ev[i].id);
		if (rc != DB_OK)
			return rc;
		q->events += n;
	}
	return DB_OK;
}

int
webhooks_enqueue(
    struct db *db, int64_t max_events, struct webhooks_stats *stats)
{
	struct enqueue *q;
	int64_t done = 0;
	int rc = DB_OK;

	if ((q = calloc(1, sizeof(*q))) == NULL) {
		log_err("webhooks enqueue: out of memory");
		return -1;
	}
	while (done < max_events) {
		q->want = max_events - done < ENQUEUE_BATCH ? max_events - done
							    : ENQUEUE_BATCH;
		if ((rc = db_transact(db, DB_TX_WRITE, enqueue_tx, q)) != DB_OK)
			break;
		if (stats != NULL) {
			stats->events += q->events;
			stats->enqueued += q->enqueued;
		}
		done += q->rows;
		if (q->rows < q->want)
			break;
	}
	free(q->targets);
	free(q);
	if (rc != DB_OK) {
		log_err("webhooks enqueue: %s", db_errmsg(db));
		return -1;
	}
	return 0;
}

/* ---- delivery ---- */

/* One attempt. The strings are the job's own (malloc). */
struct job {
	int64_t id;
	int64_t attempt; /* the number the claim took: the fence */
	int64_t event_created;
	int enabled;
	int gone; /* the event or endpoint row is no more */
	char *url, *secret, *body;
	int allow_private;
	CURL *h;
	struct curl_slist *hdr;
	int done;    /* curl finished it */
	int refused; /* a private address met allow_private 0 */
	CURLcode res;
	long status;
	char errbuf[CURL_ERROR_SIZE];
};

struct round {
	const struct webhooks_config *cfg;
	int64_t due_by; /* the database clock when the run began */
	int64_t lease;  /* seconds, always past the timeout */
	int64_t want;
	struct job *jobs; /* cfg->parallel of them */
	int64_t n;
	struct webhooks_stats st; /* this round's, added after commit */
};

static void
job_clear(struct job *j)
{
	if (j->secret != NULL) {
		sodium_memzero(j->secret, strlen(j->secret));
		free(j->secret);
	}
	free(j->url);
	free(j->body);
	memset(j, 0, sizeof(*j));
}

static void
round_clear(struct round *r)
{
	int64_t i;

	for (i = 0; i < r->n; i++)
		job_clear(&r->jobs[i]);
	r->n = 0;
}

/* The contract's body; NULL when the payload is not a JSON object. */
static char *
body_build(
    const char *event, const char *type, int64_t created, const char *payload)
{
	json_t *data, *o;
	char at[32], *s;

	if ((data = json_loads(payload, 0, NULL)) == NULL)
		return NULL;
	if (!json_is_object(data)) {
		json_decref(data);
		return NULL;
	}
	str_rfc3339(created, at);
	o = json_pack("{s:s,s:s,s:s,s:o}", "id", event, "type", type,
	    "created_at", at, "data", data);
	s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

/* Reads what a claimed attempt sends; DB_OK with j->body NULL when the
 * event's payload is unusable (the attempt then ends dead). */
static int
job_read(struct db *db, struct job *j)
{
	struct db_stmt *st;
	const char *ev, *type, *payload, *url, *secret;
	int rc;

	rc = db_query(db, STMT_WEBHOOK_JOB, &st, "i", j->id);
	if (rc == DB_OK) {
		j->gone = 1; /* ends dead rather than block the queue */
		return DB_OK;
	}
	if (rc != DB_ROW)
		return rc;
	ev = db_col_text(st, 0);
	type = db_col_text(st, 1);
	j->event_created = db_col_i64(st, 2);
	payload = db_col_text(st, 3);
	url = db_col_text(st, 4);
	secret = db_col_text(st, 5);
	j->enabled = db_col_i64(st, 6) != 0;
	if (ev != NULL && type != NULL && payload != NULL)
		j->body = body_build(ev, type, j->event_created, payload);
	j->url = strdup(url != NULL ? url : "");
	j->secret = strdup(secret != NULL ? secret : "");
	db_reset(st);
	if (j->url == NULL || j->secret == NULL)
		return DB_EFAIL;
	return DB_OK;
}

static int
claim_tx(struct db *db, void *arg)
{
	struct round *r = arg;
	struct db_stmt *st;
	int64_t i, kept = 0, changes = 0;
	int rc;

	round_clear(r);
	if ((st = db_prepare(db, STMT_WEBHOOK_DUE)) == NULL)
		return DB_EFAIL;
	db_bind_i64(st, 1, r->due_by);
	db_bind_i64(st, 2, r->want);
	while (r->n < r->want && (rc = db_step(st)) == DB_ROW) {
		r->jobs[r->n].id = db_col_i64(st, 0);
		r->jobs[r->n].attempt = db_col_i64(st, 1);
		r->n++;
	}
	db_reset(st);
	if (rc != DB_OK && rc != DB_ROW)
		return rc;
	for (i = 0; i < r->n; i++) {
		struct job *j = &r->jobs[i];

		rc = db_exec(db, STMT_WEBHOOK_CLAIM, &changes, "iii", r->lease,
		    j->id, j->attempt);
		if (rc != DB_OK)
			return rc;
		if (changes != 1)
			continue; /* another sweeper's now */
		r->jobs[kept].id = j->id;
		r->jobs[kept].attempt = j->attempt + 1;
		kept++;
	}
	r->n = kept;
	for (i = 0; i < r->n; i++)
		if ((rc = job_read(db, &r->jobs[i])) != DB_OK)
			return rc;
	return DB_OK;
}

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* Refuses a connection to a private address unless allowed: checked on
 * the address curl is about to connect to, so a name that resolves (or
 * later re-resolves) inward is caught too. */
static curl_socket_t
open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct job *j = arg;

	if (purpose == CURLSOCKTYPE_IPCXN && !j->allow_private &&
	    webhook_addr_private(&a->addr)) {
		j->refused = 1;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static int
job_start(CURLM *m, struct job *j, const struct webhooks_config *cfg)
{
	char sig[WEBHOOK_SIG_MAX + sizeof("Redeem-Signature: ")];
	struct curl_slist *h;
	size_t len = strlen(j->body);
	CURL *c;

	j->allow_private = cfg->allow_private;
	memcpy(sig, "Redeem-Signature: ", sizeof("Redeem-Signature: ") - 1);
	webhook_signature_header(j->secret, (int64_t)time(NULL), j->body, len,
	    sig + sizeof("Redeem-Signature: ") - 1);
	if ((h = curl_slist_append(NULL, "Content-Type: application/json")) ==
	    NULL)
		return -1;
	j->hdr = h;
	if (curl_slist_append(h, sig) == NULL ||
	    curl_slist_append(h, "Expect:") == NULL ||
	    (c = j->h = curl_easy_init()) == NULL)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, j->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, ""); /* the check sees the peer */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)cfg->timeout_ms);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, j->hdr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "Redeem-Webhooks/1");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, j->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, j->errbuf);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, j);
	curl_easy_setopt(c, CURLOPT_PRIVATE, j);
	return curl_multi_add_handle(m, c) == CURLM_OK ? 0 : -1;
}

/* Sends every sendable job of the round at once; each ends within the
 * timeout, so the round ends well inside the lease. */
/*
 * The multi handle lives as long as the process, so its connection cache
 * does too: deliveries to an endpoint reuse their connections (up to the
 * parallelism) instead of one TCP (and TLS) set-up per attempt. A forked
 * child leaves its parent's handle alone (its sockets are the parent's)
 * and makes its own.
 */
static CURLM *parents; /* a forked child's copy: kept reachable only */

static CURLM *
multi(void)
{
	static CURLM *kept;
	static pid_t owner;

	if (kept != NULL && owner != getpid()) {
		parents = kept; /* neither used nor freed here */
		kept = NULL;
	}
	if (kept == NULL && (kept = curl_multi_init()) != NULL) {
		owner = getpid();
		curl_multi_setopt(
		    kept, CURLMOPT_MAXCONNECTS, (long)MAX_PARALLEL);
	}
	return kept;
}

static void
round_send(struct round *r)
{
	CURLM *m = multi();
	CURLMsg *msg;
	int64_t i;
	int running = 0, left;

	for (i = 0; i < r->n; i++) {
		struct job *j = &r->jobs[i];

		j->res = CURLE_FAILED_INIT;
		if (m != NULL && j->enabled && j->body != NULL &&
		    job_start(m, j, r->cfg) == -1)
			j->res = CURLE_OUT_OF_MEMORY;
	}
	while (m != NULL) {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct job *j = NULL;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(
			    msg->easy_handle, CURLINFO_PRIVATE, (char **)&j);
			j->done = 1;
			j->res = msg->data.result;
			curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_RESPONSE_CODE, &j->status);
		}
		if (running == 0 ||
		    curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK)
			break;
	}
	for (i = 0; i < r->n; i++) {
		struct job *j = &r->jobs[i];

		if (j->h != NULL) {
			curl_multi_remove_handle(m, j->h);
			curl_easy_cleanup(j->h);
			j->h = NULL;
		}
		curl_slist_free_all(j->hdr);
		j->hdr = NULL;
	}
	if (m == NULL)
		log_err("webhooks: curl_multi_init failed");
}

/* What went wrong, short, one line, without the URL or the secret. */
static void
job_error(const struct job *j, char out[WEBHOOK_ERROR_MAX + 1])
{
	size_t i;

	if (j->gone)
		str_copy(out, "event or endpoint gone", WEBHOOK_ERROR_MAX + 1);
	else if (!j->enabled)
		str_copy(out, "endpoint disabled", WEBHOOK_ERROR_MAX + 1);
	else if (j->body == NULL)
		str_copy(out, "bad event payload", WEBHOOK_ERROR_MAX + 1);
	else if (j->refused)
		str_copy(out, "refused: private or loopback address",
		    WEBHOOK_ERROR_MAX + 1);
	else if (j->status != 0)
		snprintf(out, WEBHOOK_ERROR_MAX + 1, "HTTP %ld%s", j->status,
		    j->status >= 300 && j->status < 400
			? " (redirects are not followed)"
			: "");
	else
		str_copy(out,
		    j->errbuf[0] != '\0' ? j->errbuf
					 : curl_easy_strerror(j->res),
		    WEBHOOK_ERROR_MAX + 1); /* a cut message is fine */
	for (i = 0; out[i] != '\0'; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = ' ';
}

static int
finish_tx(struct db *db, void *arg)
{
	struct round *r = arg;
	char err[WEBHOOK_ERROR_MAX + 1];
	struct db_stmt *st;
	int64_t i, now, changes = 0, status;
	int rc;

	memset(&r->st, 0, sizeof(r->st));
	if ((rc = db_query(db, STMT_NOW, &st, "")) != DB_ROW)
		return rc == DB_OK ? DB_EFAIL : rc;
	now = db_col_i64(st, 0);
	db_reset(st);
	for (i = 0; i < r->n; i++) {
		struct job *j = &r->jobs[i];
		int64_t deadline = j->event_created + r->cfg->max_age, next;
		const int64_t *sp = j->status != 0 ? &status : NULL;

		status = j->status;
		if (j->enabled && j->body != NULL && j->status >= 200 &&
		    j->status < 300) {
			rc = db_exec(db, STMT_WEBHOOK_DELIVERED, &changes,
			    "iii", status, j->id, j->attempt);
			r->st.delivered += rc == DB_OK && changes > 0;
		} else if (!j->enabled || j->body == NULL || now >= deadline) {
			job_error(j, err);
			rc = db_exec(db, STMT_WEBHOOK_DEAD, &changes, "ntii",
			    sp, err, j->id, j->attempt);
			if (rc == DB_OK && changes > 0) {
				r->st.dead++;
				log_warn("webhook delivery %lld: dead after "
					 "%lld attempts: %s",
				    (long long)j->id, (long long)j->attempt,
				    err);
			}
		} else {
			job_error(j, err);
			next = now + webhook_retry_delay(j->attempt);
			rc = db_exec(db, STMT_WEBHOOK_RETRY, &changes, "intii",
			    next < deadline ? next : deadline, sp, err, j->id,
			    j->attempt);
			r->st.retried += rc == DB_OK && changes > 0;
		}
		if (rc != DB_OK)
			return rc;
		r->st.stale += changes == 0;
	}
	return DB_OK;
}

int
webhooks_deliver_due(struct db *db, const struct webhooks_config *cfg,
    int64_t limit, struct webhooks_stats *stats)
{
	static int curl_ready;
	struct webhooks_config def;
	struct db_stmt *st;
	struct round r;
	int64_t done = 0, room;
	int rc;

	if (cfg == NULL) {
		webhooks_config_defaults(&def);
		cfg = &def;
	}
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			log_err("webhooks: curl_global_init failed");
			return -1;
		}
		curl_ready = 1;
	}
	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	if ((rc = db_query(db, STMT_NOW, &st, "")) != DB_ROW) {
		log_err("webhooks deliver: %s", db_errmsg(db));
		return -1;
	}
	r.due_by = db_col_i64(st, 0);
	db_reset(st);
	/* An attempt must end before its lease, or another sweeper could
	 * send the same attempt while it is still in flight. */
	r.lease = cfg->timeout_ms / 1000 + 2;
	if (r.lease < cfg->lease)
		r.lease = cfg->lease;
	room = cfg->parallel < 1 ? 1 : cfg->parallel;
	if (room > MAX_PARALLEL)
		room = MAX_PARALLEL;
	if ((r.jobs = calloc((size_t)room, sizeof(*r.jobs))) == NULL) {
		log_err("webhooks deliver: out of memory");
		return -1;
	}
	rc = DB_OK;
	while (done < limit) {
		r.want = limit - done < room ? limit - done : room;
		if ((rc = db_transact(db, DB_TX_WRITE, claim_tx, &r)) != DB_OK)
			break;
		if (r.n == 0)
			break;
		round_send(&r);
		rc = db_transact(db, DB_TX_WRITE, finish_tx, &r);
		if (rc != DB_OK)
			break; /* the leases run out; the rows come due again */
		if (stats != NULL) {
			stats->claimed += r.n;
			stats->delivered += r.st.delivered;
			stats->retried += r.st.retried;
			stats->dead += r.st.dead;
			stats->stale += r.st.stale;
		}
		done += r.n;
		round_clear(&r);
	}
	round_clear(&r);
	free(r.jobs);
	if (rc != DB_OK) {
		log_err("webhooks deliver: %s", db_errmsg(db));
		return -1;
	}
	return 0;
}
