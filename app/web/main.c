/*
 * redeem-fcgi: the FastCGI worker pool. The parent binds the socket,
 * compiles the templates (a broken template fails here, before any
 * request), forks the workers and replaces any that dies; SIGTERM or
 * SIGINT stops them all. Each worker accepts on the shared socket and
 * serves one request at a time with its own database connection.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "../db/db.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "web.h"

#define WORKERS_MAX 256
/* Every request's allocations: a 1 MiB body, its decoded form, the
 * answer's pieces. */
#define WEB_ARENA_CAP (4 * 1024 * 1024)
#define STOP_GRACE_SECONDS 10

static volatile sig_atomic_t stopping;

static const char csp[] =
    "default-src 'none'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: redeem-fcgi [--socket PATH] [--workers N] "
	    "[--templates DIR]\n\n"
	    "Serves the Redeem pages and JSON API over FastCGI on a unix "
	    "socket,\nwith N worker processes (default: one per core), each "
	    "replaced if it dies.\nSIGTERM or SIGINT stops them all.\n\n"
	    "  --socket PATH     the FastCGI socket (default "
	    "var/run/fcgi.sock)\n"
	    "  --workers N       worker processes, 1-%d\n"
	    "  --templates DIR   the HTML templates (default templates)\n\n"
	    "Environment: REDEEM_DB (default sqlite:var/redeem.db), "
	    "REDEEM_TENANT (the\npublic page's tenant, default default), "
	    "REDEEM_TRUSTED_PROXIES, REDEEM_ABUSE_LIMIT,\nREDEEM_ABUSE_WINDOW, "
	    "REDEEM_COOKIE_SECURE, REDEEM_LOG.\n",
	    WORKERS_MAX);
}

/* Valid UTF-8, no NUL or control characters: nginx has decoded it. */
static int
path_ok(const char *p)
{
	return p[0] == '/' && str_utf8_ok(p, strlen(p));
}

static void
read_request(struct web *w, struct arena *a, FCGX_Request *rq, struct req *req)
{
	const char *s, *len;
	char *body;
	int64_t n = 0;
	int got, total = 0;

	memset(req, 0, sizeof(*req));
	req->a = a;
	req->method =
	    http_method_parse(FCGX_GetParam("REQUEST_METHOD", rq->envp));
	s = FCGX_GetParam("DOCUMENT_URI", rq->envp);
	if (s == NULL)
		s = FCGX_GetParam("SCRIPT_NAME", rq->envp);
	req->path = s != NULL && *s ? s : "/";
	req->api = strncmp(req->path, "/api/", 5) == 0 ||
		   strcmp(req->path, "/api") == 0;
	s = FCGX_GetParam("QUERY_STRING", rq->envp);
	req->query = s != NULL ? s : "";
	s = FCGX_GetParam("CONTENT_TYPE", rq->envp);
	req->ctype = s != NULL ? s : "";
	req->authorization = FCGX_GetParam("HTTP_AUTHORIZATION", rq->envp);
	req->cookie_header = FCGX_GetParam("HTTP_COOKIE", rq->envp);
	s = FCGX_GetParam("REMOTE_ADDR", rq->envp);
	req->peer = s != NULL ? s : "";
	req->client = web_client_addr(w, req->a, req->peer,
	    FCGX_GetParam("HTTP_X_FORWARDED_FOR", rq->envp));
	req->body = "";
	if (!path_ok(req->path)) {
		req->path = "/";
		req->early = ERROR_BAD_REQUEST;
		req->early_detail = "The path is not valid UTF-8.";
		return;
	}
	len = FCGX_GetParam("CONTENT_LENGTH", rq->envp);
	if (len != NULL && *len != '\0' &&
	    str_to_i64(len, 0, INT64_MAX, &n) == -1) {
		req->early = ERROR_BAD_REQUEST;
		req->early_detail = "Content-Length is not a number.";
		return;
	}
	if (n > HTTP_BODY_MAX) {
		req->early = ERROR_TOO_LARGE;
		req->early_detail = "A body may hold up to 1 MiB.";
		return;
	}
	if (n == 0)
		return;
	if ((body = arena_alloc(a, (size_t)n + 1)) == NULL) {
		req->early = ERROR_TOO_LARGE;
		return;
	}
	while (total < n) {
		got = FCGX_GetStr(body + total, (int)n - total, rq->in);
		if (got <= 0)
			break;
		total += got;
	}
	if (total < n) {
		req->early = ERROR_BAD_REQUEST;
		req->early_detail = "The body ended before its Content-Length.";
		return;
	}
	body[n] = '\0';
	req->body = body;
	req->body_len = (size_t)n;
}

/* A streamed body, chunk by chunk through body's memory: the status is
 * sent already, so a failure can only cut the body short. */
static void
write_stream(FCGX_Request *rq, struct req *req, struct resp *resp)
{
	int more = 1;

	/* The first chunk, made by the handler (so a failure then was
	 * still an error answer). */
	if (resp->body.len > 0 &&
	    FCGX_PutStr(resp->body.data, (int)resp->body.len, rq->out) < 0)
		more = -1;
	while (more == 1) {
		buf_reset(&resp->body);
		more = resp->stream(resp->stream_arg, &resp->body);
		if (resp->body.err) {
			more = -1;
			break;
		}
		if (resp->body.len > 0 && FCGX_PutStr(resp->body.data,
					      (int)resp->body.len, rq->out) < 0)
			more = -1; /* the client went away */
	}
	if (more == -1)
		log_err("web: %s %s: the streamed answer was cut short",
		    http_method_name(req->method), req->path);
}

static void
write_response(
    FCGX_Request *rq, struct req *req, struct resp *resp, struct buf *h)
{
	if (resp->body.err || resp->head.err) {
		log_err("web: %s %s: the answer did not fit in memory",
		    http_method_name(req->method), req->path);
		resp_reset(resp);
		resp_api_error(resp, ERROR_UNAVAILABLE, "Out of memory.");
	}
	buf_reset(h);
	buf_printf(
	    h, "Status: %d %s\r\n", resp->status, http_reason(resp->status));
	buf_printf(h, "Content-Type: %s\r\n",
	    resp->ctype != NULL ? resp->ctype : "text/plain; charset=utf-8");
	if (resp->stream == NULL)
		buf_printf(h, "Content-Length: %zu\r\n", resp->body.len);
	buf_printf(h,
	    "X-Content-Type-Options: nosniff\r\n"
	    "X-Frame-Options: DENY\r\n"
	    "Content-Security-Policy: %s\r\n"
	    "Referrer-Policy: same-origin\r\n"
	    "Cache-Control: no-store\r\n",
	    csp);
	if (resp->retry_after > 0 &&
	    (resp->status == 429 || resp->status == 503))
		buf_printf(
		    h, "Retry-After: %lld\r\n", (long long)resp->retry_after);
	buf_add(h, resp->head.data, resp->head.len);
	buf_puts(h, "\r\n");
	FCGX_PutStr(h->data, (int)h->len, rq->out);
	if (resp->stream != NULL) {
		if (req->method != HTTP_HEAD)
			write_stream(rq, req, resp);
		return;
	}
	if (req->method != HTTP_HEAD && resp->body.len > 0)
		FCGX_PutStr(resp->body.data, (int)resp->body.len, rq->out);
}

/* SIGTERM and SIGINT reach a worker only while it waits for requests
 * (they are blocked otherwise), so it always finishes what it took. */
static void
on_worker_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/*
 * A worker takes the requests waiting on the socket, up to BATCH_MAX at a
 * time, and answers each. The redemptions among them run as one batch of
 * the database (db_batch_begin: one commit and one sync for them all where
 * the engine gains from it); everything else runs on its own first. The
 * answers are written only after the batch is durable.
 */
#define BATCH_MAX 32

struct slot {
	FCGX_Request rq;
	struct arena *a;
	struct req req;
	struct resp resp;
	int batch; /* runs in the batch (batchable) */
};

static int
batchable(const struct req *req)
{
	const char *p = req->path, *tail;

	if (req->method != HTTP_POST || req->early != ERROR_NONE)
		return 0;
	if (strcmp(p, "/api/v1/redeem") == 0 || strcmp(p, "/redeem") == 0 ||
	    strncmp(p, "/api/v1/holds", 13) == 0 ||
	    strncmp(p, "/api/v1/permits", 15) == 0)
		return 1;
	if (strncmp(p, "/api/v1/pools/", 14) != 0)
		return 0;
	tail = strchr(p + 14, '/');
	return tail != NULL && tail > p + 14 && strcmp(tail, "/claim") == 0;
}

/* Blocks until a connection waits on the socket or a stop signal comes
 * (the only moment those signals are let through). */
static void
wait_readable(int sock, const sigset_t *waiting)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};

	ppoll(&pfd, 1, NULL, waiting);
}

static void
serve_batch(struct web *w, struct slot *slot, int n)
{
	int i, nbatch = 0, batched = 0;

	for (i = 0; i < n; i++) {
		read_request(w, slot[i].a, &slot[i].rq, &slot[i].req);
		if ((slot[i].batch = batchable(&slot[i].req)))
			nbatch++;
		else
			web_handle(w, &slot[i].req, &slot[i].resp);
	}
	if (nbatch > 1 && web_db(w) != NULL && db_batch_begin(w->db) == DB_OK)
		batched = db_batching(w->db);
	for (i = 0; i < n; i++)
		if (slot[i].batch)
			web_handle(w, &slot[i].req, &slot[i].resp);
	if (batched && db_batch_end(w->db) != DB_OK) {
		/* Nothing of the batch happened: say so. */
		for (i = 0; i < n; i++) {
			if (!slot[i].batch)
				continue;
			resp_reset(&slot[i].resp);
			slot[i].req.early = ERROR_UNAVAILABLE;
			web_handle(w, &slot[i].req, &slot[i].resp);
		}
	}
}

static void
worker(struct web *w, int sock)
{
	static struct slot slot[BATCH_MAX];
	struct sigaction sa;
	sigset_t stop, waiting;
	struct buf h;
	int i, n, pass;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, &waiting);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGINT);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_worker_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (getppid() == 1)
		_exit(0);
	for (i = 0; i < BATCH_MAX; i++) {
		if (FCGX_InitRequest(&slot[i].rq, sock, 0) != 0)
			errx(1, "FCGX_InitRequest failed");
		if ((slot[i].a = arena_new(WEB_ARENA_CAP)) == NULL)
			errx(1, "out of memory");
		resp_init(&slot[i].resp);
	}
	buf_init(&h, 0);
	web_db(w); /* connect early; a failure is retried per request */
	while (!stopping) {
		/* The socket does not block: with many workers on it, the
		 * one that finds it empty goes back to waiting. */
		wait_readable(sock, &waiting);
		if (stopping)
			break;
		for (n = 0; n < BATCH_MAX; n++)
			if (FCGX_Accept_r(&slot[n].rq) < 0)
				break;
		if (n > 0)
			serve_batch(w, slot, n);
		/* Streamed answers (a big export) last: the batch's other
		 * answers, redemptions among them, do not wait for them. */
		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < n; i++) {
				if ((slot[i].resp.stream != NULL) != pass)
					continue;
				write_response(&slot[i].rq, &slot[i].req,
				    &slot[i].resp, &h);
				FCGX_Finish_r(&slot[i].rq);
				arena_reset(slot[i].a);
				resp_reset(&slot[i].resp);
			}
	}
	for (i = 0; i < BATCH_MAX; i++) {
		resp_free(&slot[i].resp);
		arena_free(slot[i].a);
	}
	buf_free(&h);
	web_free(w);
	exit(0);
}

static void
on_parent_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static pid_t
spawn(struct web *w, int sock)
{
	pid_t pid = fork();

	if (pid == -1) {
		log_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		worker(w, sock);
	return pid;
}

static void
stop_all(pid_t *kids, int n)
{
	time_t until = time(NULL) + STOP_GRACE_SECONDS;
	int i, left, st;

	for (i = 0; i < n; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGTERM);
	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (kids[i] <= 0)
				continue;
			if (waitpid(kids[i], &st, WNOHANG) == kids[i])
				kids[i] = 0;
			else
				left++;
		}
		if (left == 0)
			return;
		if (time(NULL) >= until) {
			for (i = 0; i < n; i++)
				if (kids[i] > 0)
					kill(kids[i], SIGKILL);
		}
		usleep(20000);
	}
}

int
main(int argc, char **argv)
{
	const char *sockpath = "var/run/fcgi.sock", *tdir = "templates";
	const char *dsn = getenv("REDEEM_DB");
	pid_t kids[WORKERS_MAX] = {0};
	time_t born[WORKERS_MAX] = {0};
	struct sigaction sa;
	struct web w;
	int64_t n = sysconf(_SC_NPROCESSORS_ONLN);
	int i, sock, st;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
			sockpath = argv[++i];
		} else if (strcmp(argv[i], "--templates") == 0 &&
			   i + 1 < argc) {
			tdir = argv[++i];
		} else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
			if (str_to_i64(argv[++i], 1, WORKERS_MAX, &n) == -1)
				errx(2, "--workers: a number from 1 to %d",
				    WORKERS_MAX);
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (n < 1)
		n = 1;
	if (dsn == NULL || *dsn == '\0')
		dsn = "sqlite:var/redeem.db";
	if (FCGX_Init() != 0)
		errx(1, "FCGX_Init failed");
	web_init(&w, dsn, tdir);
	if (unlink(sockpath) == -1 && errno != ENOENT)
		err(1, "%s", sockpath);
	if ((sock = FCGX_OpenSocket(sockpath, 1024)) < 0)
		errx(1, "%s: cannot listen", sockpath);
	if (fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK) == -1)
		err(1, "%s: fcntl", sockpath);
	if (chmod(sockpath, 0660) == -1)
		err(1, "chmod %s", sockpath);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_parent_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_info("redeem-fcgi: %d workers on %s", (int)n, sockpath);

	while (!stopping) {
		for (i = 0; i < n && !stopping; i++) {
			if (kids[i] > 0)
				continue;
			/* One that died young is not restarted in a loop. */
			if (born[i] != 0 && time(NULL) - born[i] < 1)
				sleep(1);
			born[i] = time(NULL);
			kids[i] = spawn(&w, sock);
		}
		pid = waitpid(-1, &st, 0);
		if (pid <= 0)
			continue; /* EINTR: a signal */
		for (i = 0; i < n; i++) {
			if (kids[i] != pid)
				continue;
			kids[i] = 0;
			if (!stopping)
				log_warn("redeem-fcgi: worker %d %s %d; "
					 "starting another",
				    (int)pid,
				    WIFSIGNALED(st) ? "killed by signal"
						    : "exited with",
				    WIFSIGNALED(st) ? WTERMSIG(st)
						    : WEXITSTATUS(st));
		}
	}
	stop_all(kids, (int)n);
	unlink(sockpath);
	web_free(&w);
	return 0;
}
