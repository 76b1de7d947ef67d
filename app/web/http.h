/*
 * One HTTP exchange as FastCGI hands it over: the request read into the
 * request's arena, the response built in buffers and written at the end.
 * Who owns what: everything in struct req lives in req->a (reset after
 * the response is written) except json, which the dispatcher decrefs.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "../core/errors.h"
#include "../core/svc.h"
#include "../lib/buf.h"
#include "form.h"

struct arena;
struct json_t;
struct session;

#define HTTP_BODY_MAX (1024 * 1024)
#define HTTP_PARAMS_MAX 4

enum http_method {
	HTTP_GET,
	HTTP_HEAD,
	HTTP_POST,
	HTTP_PUT,
	HTTP_DELETE,
	HTTP_PATCH,
	HTTP_OTHER,
	HTTP__MAX
};

struct req {
	struct arena *a;
	enum http_method method;
	const char *path;  /* decoded and normalized by nginx */
	const char *query; /* raw, "" when none */
	const char *ctype; /* "" when none */
	const char *authorization;
	const char *cookie_header;
	const char *peer;   /* REMOTE_ADDR */
	const char *client; /* the end user's address (trusted proxies) */
	const char *body;
	size_t body_len;
	int api; /* under /api/: errors answer JSON */
	/* Set while reading (too_large, bad_request): answered at once. */
	enum error_word early;
	const char *early_detail;
	/* Filled by the dispatcher: */
	const char *param[HTTP_PARAMS_MAX]; /* the route's {...} segments */
	size_t nparam;
	struct kvlist q;      /* the query string */
	struct kvlist form;   /* an urlencoded body */
	struct kvlist cookie; /* the Cookie header */
	struct json_t *json;  /* a JSON body (API POST/PUT) */
	/* A multipart form's one file (route BODY_UPLOAD): its bytes in
	 * body, not NUL-terminated; NULL, 0 when none was sent. */
	const char *file;
	size_t file_len;
	struct svc svc;  /* the tenant the credentials or page name */
	const char *who; /* the API key's label or lookup, for records */
	/* An admin page's session (in req->a) and its cookie's token; NULL
	 * outside the dashboard or without a valid session. */
	const struct session *sess;
	const char *sess_token;
};

struct resp {
	int status;
	const char *ctype;
	struct buf head; /* extra header lines, each ending in \r\n */
	struct buf body;
	int64_t retry_after; /* 0: no Retry-After */
	/* A streamed body (a big export): when set, after the headers (no
	 * Content-Length) main.c writes body (the handler's first chunk),
	 * then calls stream with body emptied, writes what it appended,
	 * and again while it returns 1; 0 ends the body, -1 cuts it short
	 * (logged). Memory stays one chunk, whatever the length; streamed
	 * answers go after the batch's others. stream_arg lives in the
	 * request's arena, which outlives the writing. */
	int (*stream)(void *stream_arg, struct buf *chunk);
	void *stream_arg;
};

const char *http_method_name(enum http_method);
enum http_method http_method_parse(const char *);
const char *http_reason(int status);

void resp_init(struct resp *);
void resp_free(struct resp *);
/* Forgets the previous answer, keeping the buffers' memory. */
void resp_reset(struct resp *);
void resp_header(struct resp *, const char *name, const char *value);

/* JSON answers: status and obj (stolen; NULL means out of memory). */
int resp_json(struct resp *, int status, struct json_t *obj);
/* {"ok": false, "error": word, "detail": detail or the word's sentence},
 * with Retry-After where the contract asks for it. */
int resp_api_error(struct resp *, enum error_word, const char *detail);
int resp_text(struct resp *, int status, const char *text);
int resp_redirect(struct resp *, const char *location);
/* 303 See Other: where a form post sends the browser next (a GET). */
int resp_see_other(struct resp *, const char *location);

#endif
