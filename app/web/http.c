#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../lib/common.h"
#include "http.h"

static const char *const method_names[HTTP__MAX] = {
    [HTTP_GET] = "GET",
    [HTTP_HEAD] = "HEAD",
    [HTTP_POST] = "POST",
    [HTTP_PUT] = "PUT",
    [HTTP_DELETE] = "DELETE",
    [HTTP_PATCH] = "PATCH",
    [HTTP_OTHER] = "OTHER",
};

const char *
http_method_name(enum http_method m)
{
	return (unsigned)m < HTTP__MAX ? method_names[m] : "OTHER";
}

enum http_method
http_method_parse(const char *s)
{
	int m;

	for (m = 0; m < HTTP_OTHER; m++)
		if (s != NULL && strcmp(s, method_names[m]) == 0)
			return (enum http_method)m;
	return HTTP_OTHER;
}

const char *
http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 204:
		return "No Content";
	case 302:
		return "Found";
	case 303:
		return "See Other";
	case 304:
		return "Not Modified";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 413:
		return "Content Too Large";
	case 415:
		return "Unsupported Media Type";
	case 429:
		return "Too Many Requests";
	case 503:
		return "Service Unavailable";
	default:
		return status < 400 ? "OK" : "Error";
	}
}

void
resp_init(struct resp *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->head, 64 * 1024);
	buf_init(&r->body, 0);
	r->status = 200;
}

void
resp_free(struct resp *r)
{
	buf_free(&r->head);
	buf_free(&r->body);
}

void
resp_reset(struct resp *r)
{
	buf_reset(&r->head);
	buf_reset(&r->body);
	r->status = 200;
	r->ctype = NULL;
	r->retry_after = 0;
	r->stream = NULL;
	r->stream_arg = NULL;
}

void
resp_header(struct resp *r, const char *name, const char *value)
{
	buf_printf(&r->head, "%s: %s\r\n", name, value);
}

int
resp_json(struct resp *r, int status, json_t *obj)
{
	char *s;

	buf_reset(&r->body);
	r->ctype = "application/json";
	if (obj == NULL || (s = json_dumps(obj, JSON_COMPACT)) == NULL) {
		json_decref(obj);
		r->status = 503;
		r->retry_after = 1;
		buf_puts(&r->body, "{\"ok\":false,\"error\":\"unavailable\","
				   "\"detail\":\"Out of memory.\"}");
		return r->status;
	}
	json_decref(obj);
	buf_puts(&r->body, s);
	buf_putc(&r->body, '\n');
	free(s);
	r->status = status;
	return status;
}

int
resp_api_error(struct resp *r, enum error_word e, const char *detail)
{
	int status = error_http_status(e);

	if (e == ERROR_UNAVAILABLE && r->retry_after <= 0)
		r->retry_after = 2;
	if (e == ERROR_RATE_LIMITED && r->retry_after <= 0)
		r->retry_after = 60;
	return resp_json(r, status,
	    json_pack("{s:b,s:s,s:s}", "ok", 0, "error", error_name(e),
		"detail", detail != NULL ? detail : error_sentence(e)));
}

int
resp_text(struct resp *r, int status, const char *text)
{
	buf_reset(&r->body);
	r->ctype = "text/plain; charset=utf-8";
	buf_puts(&r->body, text);
	r->status = status;
	return status;
}

int
resp_redirect(struct resp *r, const char *location)
{
	resp_header(r, "Location", location);
	return resp_text(r, 302, "");
}

int
resp_see_other(struct resp *r, const char *location)
{
	resp_header(r, "Location", location);
	return resp_text(r, 303, "");
}
