/*
 * The JSON API of holds, semaphores and permits, and webhook endpoints:
 * thin faces on app/core/holds.c, permits.c and webhooks.c. The answers'
 * bodies come from the core's JSON helpers; 201 for a new hold or permit,
 * 200 for the same external_id again.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "../core/holds.h"
#include "../core/permits.h"
#include "../core/webhooks.h"
#include "../lib/common.h"
#include "jsonin.h"
#include "web.h"

#define ID_FIELD_MAX 256

static int
answer(struct resp *resp, int rc, enum error_word e, int64_t retry_after,
    int status, json_t *body)
{
	if (rc == -1)
		e = ERROR_UNAVAILABLE;
	if (e != ERROR_NONE) {
		json_decref(body);
		if (e == ERROR_RATE_LIMITED)
			resp->retry_after = retry_after > 0 ? retry_after : 1;
		return resp_api_error(resp, e, NULL);
	}
	return resp_json(resp, status, body);
}

int
h_api_hold_create(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct hold_result res;
	const char *code, *account, *id, *ip;
	int64_t ttl;
	int rc;

	(void)w;
	code = jf_str(&f, "code", 256, 1);
	account = jf_str(&f, "account", 1024, 1);
	id = jf_str(&f, "external_id", ID_FIELD_MAX, 1);
	ttl = jf_int(&f, "ttl_seconds", 1, HOLD_TTL_MAX, 1, 0);
	ip = jf_str(&f, "client_ip", 64, 0);
	if (!f.bad && ip != NULL && !web_ip_ok(ip)) {
		f.bad = 1;
		snprintf(f.why, sizeof(f.why),
		    "Field \"client_ip\" must be an IPv4 or IPv6 address.");
	}
	if (f.bad)
		return resp_api_error(resp, ERROR_BAD_REQUEST, f.why);
	rc = hold_create(&req->svc, code, account, id, ttl,
	    ip != NULL ? ip : req->client, &res);
	return answer(resp, rc, res.error, res.retry_after,
	    res.created ? 201 : 200,
	    rc == 0 && res.error == ERROR_NONE ? hold_result_json(&res) : NULL);
}

int
h_api_hold_confirm(struct web *w, struct req *req, struct resp *resp)
{
	struct redeem_result res;
	int rc;

	(void)w;
	rc = hold_confirm(&req->svc, req->param[0], &res, NULL);
	return answer(resp, rc, res.error, res.retry_after, 200,
	    rc == 0 && res.error == ERROR_NONE ? redeem_result_json(&res, NULL)
					       : NULL);
}

int
h_api_hold_release(struct web *w, struct req *req, struct resp *resp)
{
	struct hold_result res;
	int rc;

	(void)w;
	rc = hold_release(&req->svc, req->param[0], &res);
	return answer(resp, rc, res.error, 0, 200,
	    rc == 0 && res.error == ERROR_NONE ? hold_result_json(&res) : NULL);
}

int
h_api_hold_get(struct web *w, struct req *req, struct resp *resp)
{
	struct hold_result res;
	int rc;

	(void)w;
	rc = hold_get(&req->svc, req->param[0], &res);
	return answer(resp, rc, res.error, 0, 200,
	    rc == 0 && res.error == ERROR_NONE ? hold_result_json(&res) : NULL);
}

int
h_api_semaphore_put(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct semaphore sem;
	enum error_word e;
	int64_t capacity;

	(void)w;
	capacity = jf_int(&f, "capacity", 0, SEMAPHORE_CAPACITY_MAX, 1, 0);
	if (f.bad)
		return resp_api_error(resp, ERROR_BAD_REQUEST, f.why);
	e = semaphore_put(&req->svc, req->param[0], capacity,
	    req->who != NULL && *req->who ? req->who : "api", &sem, NULL);
	if (e != ERROR_NONE)
		return resp_api_error(resp, e, NULL);
	return resp_json(resp, 200,
	    json_pack("{s:b,s:o}", "ok", 1, "semaphore", semaphore_json(&sem)));
}

int
h_api_semaphore_get(struct web *w, struct req *req, struct resp *resp)
{
	struct semaphore sem;
	enum error_word e;

	(void)w;
	if ((e = semaphore_get(&req->svc, req->param[0], &sem)) != ERROR_NONE)
		return resp_api_error(resp, e,
		    e == ERROR_NOT_FOUND ? "No semaphore has that name."
					 : NULL);
	return resp_json(resp, 200,
	    json_pack("{s:b,s:o}", "ok", 1, "semaphore", semaphore_json(&sem)));
}

/* A 409 that names the semaphore that was full. */
static int
permit_answer(struct resp *resp, int rc, struct permit_result *res, int status)
{
	json_t *o;

	if (rc == -1)
		res->error = ERROR_UNAVAILABLE;
	if (res->error == ERROR_NONE)
		return resp_json(resp, status, permit_result_json(res));
	if (res->semaphore[0] == '\0')
		return resp_api_error(resp, res->error, NULL);
	resp_api_error(resp, res->error, NULL);
	o = json_pack("{s:b,s:s,s:s,s:s}", "ok", 0, "error",
	    error_name(res->error), "detail",
	    res->error == ERROR_EXHAUSTED
		? "Not enough room on a semaphore; nothing was taken."
		: "No semaphore has that name; nothing was taken.",
	    "semaphore", res->semaphore);
	return resp_json(resp, error_http_status(res->error), o);
}

int
h_api_permit_acquire(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct permit_item items[PERMIT_ITEMS_MAX];
	struct permit_result res;
	const char *id, *owner;
	json_t *list, *it;
	int64_t ttl;
	size_t i, n;
	int rc;

	(void)w;
	memset(items, 0, sizeof(items));
	id = jf_str(&f, "external_id", ID_FIELD_MAX, 1);
	owner = jf_str(&f, "owner", PERMIT_OWNER_MAX, 1);
	ttl = jf_int(&f, "ttl_seconds", 1, PERMIT_TTL_MAX, 1, 0);
	list = json_object_get(req->json, "semaphores");
	n = json_array_size(list);
	if (!f.bad &&
	    (!json_is_array(list) || n == 0 || n > PERMIT_ITEMS_MAX)) {
		f.bad = 1;
		snprintf(f.why, sizeof(f.why),
		    "Field \"semaphores\" takes 1-%d objects "
		    "{\"name\", \"count\"}.",
		    PERMIT_ITEMS_MAX);
	}
	json_array_foreach(list, i, it)
	{
		struct jfields g = {.obj = it};
		const char *name;

		if (f.bad)
			break;
		if (!json_is_object(it)) {
			f.bad = 1;
			snprintf(f.why, sizeof(f.why),
			    "Field \"semaphores\" takes objects.");
			break;
		}
		name = jf_str(&g, "name", SEMAPHORE_NAME_MAX, 1);
		items[i].count =
		    jf_int(&g, "count", 1, SEMAPHORE_CAPACITY_MAX, 0, 1);
		if (g.bad) {
			f = g;
			f.obj = req->json;
			break;
		}
		snprintf(items[i].name, sizeof(items[i].name), "%s", name);
	}
	if (f.bad)
		return resp_api_error(resp, ERROR_BAD_REQUEST, f.why);
	rc = permit_acquire(&req->svc, id, owner, ttl, items, (int)n, &res);
	return permit_answer(resp, rc, &res, res.created ? 201 : 200);
}

int
h_api_permit_heartbeat(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct permit_result res;
	int64_t ttl;

	(void)w;
	ttl = jf_int(&f, "ttl_seconds", 1, PERMIT_TTL_MAX, 1, 0);
	if (f.bad)
		return resp_api_error(resp, ERROR_BAD_REQUEST, f.why);
	return permit_answer(resp,
	    permit_heartbeat(&req->svc, req->param[0], ttl, &res), &res, 200);
}

int
h_api_permit_release(struct web *w, struct req *req, struct resp *resp)
{
	struct permit_result res;

	(void)w;
	return permit_answer(
	    resp, permit_release(&req->svc, req->param[0], &res), &res, 200);
}

int
h_api_webhook_create(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	char secret[WEBHOOK_SECRET_MAX];
	struct webhook wh;
	json_t *body;
	enum error_word e;
	const char *url;

	(void)w;
	url = jf_str(&f, "url", WEBHOOK_URL_MAX, 1);
	if (!f.bad && !webhook_url_ok(url)) {
		f.bad = 1;
		snprintf(f.why, sizeof(f.why),
		    "Field \"url\" must be an http or https URL.");
	}
	if (f.bad)
		return resp_api_error(resp, ERROR_BAD_REQUEST, f.why);
	if ((e = webhook_create(&req->svc, url, secret, &wh)) != ERROR_NONE)
		return resp_api_error(resp, e, NULL);
	/* The answer's copy goes with the request's buffers; ours now. */
	body = json_pack(
	    "{s:b,s:o}", "ok", 1, "webhook", webhook_json(&wh, secret));
	sodium_memzero(secret, sizeof(secret));
	return resp_json(resp, 201, body);
}
