/*
 * The JSON API of the contract: redeem, pool claims, reversals,
 * campaigns, codes. The dispatcher has already checked the key, its
 * scope and the body's syntax; handlers read their fields (unknown ones
 * are ignored) and answer through the one error table.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "../core/campaigns.h"
#include "../core/codes.h"
#include "../core/redeem.h"
#include "../lib/arena.h"
#include "../lib/common.h"
#include "../lib/str.h"
#include "jsonin.h"
#include "web.h"

#define API_CODES_MAX INT64_C(100000) /* per request; more with redeemctl */
#define API_PAGE_MAX 1000

static void
f_ip(struct jfields *f, const char *ip)
{
	if (f->bad || ip == NULL)
		return;
	if (!web_ip_ok(ip)) {
		f->bad = 1;
		snprintf(f->why, sizeof(f->why),
		    "Field \"client_ip\" must be an IPv4 or IPv6 address.");
	}
}

static int
bad(struct resp *resp, struct jfields *f)
{
	return resp_api_error(resp, ERROR_BAD_REQUEST, f->why);
}

static int
ok_with(struct resp *resp, int status, const char *name, json_t *obj)
{
	if (obj == NULL)
		return resp_api_error(
		    resp, ERROR_UNAVAILABLE, "Out of memory.");
	return resp_json(
	    resp, status, json_pack("{s:b,s:o}", "ok", 1, name, obj));
}

static int
result_answer(
    struct resp *resp, int rc, struct redeem_result *res, const char *pool_code)
{
	if (rc == -1)
		res->error = ERROR_UNAVAILABLE;
	if (res->error == ERROR_RATE_LIMITED)
		resp->retry_after = res->retry_after > 0 ? res->retry_after : 1;
	if (res->error != ERROR_NONE)
		return resp_api_error(resp, res->error, NULL);
	return resp_json(resp, 200, redeem_result_json(res, pool_code));
}

int
h_api_redeem(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct redeem_result res;
	const char *code, *account, *ip;
	int rc;

	(void)w;
	code = jf_str(&f, "code", 256, 1);
	account = jf_str(&f, "account", 1024, 1);
	ip = jf_str(&f, "client_ip", 64, 0);
	f_ip(&f, ip);
	if (f.bad)
		return bad(resp, &f);
	rc = redeem_code(
	    &req->svc, code, account, ip != NULL ? ip : req->client, &res);
	return result_answer(resp, rc, &res, NULL);
}

int
h_api_pool_claim(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct redeem_result res;
	const char *account, *ip;
	int rc;

	(void)w;
	account = jf_str(&f, "account", 1024, 1);
	ip = jf_str(&f, "client_ip", 64, 0);
	f_ip(&f, ip);
	if (f.bad)
		return bad(resp, &f);
	rc = redeem_pool_claim(&req->svc, req->param[0], account,
	    ip != NULL ? ip : req->client, &res);
	return result_answer(resp, rc, &res, res.r.code);
}

int
h_api_reverse(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct redeem_result res;
	enum reversal_policy policy;
	const char *reason, *pol;
	int64_t id;

	(void)w;
	if (str_to_i64(req->param[0], 1, INT64_MAX, &id) == -1)
		return resp_api_error(
		    resp, ERROR_NOT_FOUND, "No redemption has that id.");
	reason = jf_str(&f, "reason", 500, 1);
	pol = jf_str(&f, "policy", 32, 1);
	if (!f.bad && reversal_policy_parse(pol, &policy) == -1) {
		f.bad = 1;
		snprintf(f.why, sizeof(f.why),
		    "Field \"policy\" is return_seat or keep_seat.");
	}
	if (f.bad)
		return bad(resp, &f);
	if (redeem_reverse(&req->svc, id, reason, policy, &res) == -1)
		res.error = ERROR_UNAVAILABLE;
	if (res.error != ERROR_NONE)
		return resp_api_error(resp, res.error, NULL);
	return ok_with(resp, 200, "redemption", redemption_json(&res.r));
}

int
h_api_campaign_create(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct campaign c;
	const char *name, *kind;
	enum error_word e;

	(void)w;
	memset(&c, 0, sizeof(c));
	name = jf_str(&f, "name", CAMPAIGN_NAME_MAX, 1);
	kind = jf_str(&f, "kind", 16, 0);
	c.budget = jf_int(&f, "budget", 1, INT64_MAX, 0, 0);
	c.starts_at = jf_time(&f, "starts_at");
	c.ends_at = jf_time(&f, "ends_at");
	c.per_account_limit =
	    jf_int(&f, "per_account_limit", 1, INT64_MAX, 0, 0);
	if (!f.bad && !campaign_name_ok(name)) {
		f.bad = 1;
		snprintf(f.why, sizeof(f.why),
		    "Field \"name\" takes 1-64 of A-Z a-z 0-9 . _ -.");
	}
	c.kind = CAMPAIGN_SHARED;
	if (!f.bad && kind != NULL &&
	    campaign_kind_parse(kind, &c.kind) == -1) {
		f.bad = 1;
		snprintf(
		    f.why, sizeof(f.why), "Field \"kind\" is shared or pool.");
	}
	if (f.bad)
		return bad(resp, &f);
	str_copy(c.name, name, sizeof(c.name));
	if ((e = campaign_create(&req->svc, &c)) != ERROR_NONE)
		return resp_api_error(resp, e,
		    e == ERROR_CONFLICT ? "A campaign of that name exists."
					: NULL);
	return ok_with(resp, 201, "campaign", campaign_json(&c));
}

static void
list_one(void *arg, const struct campaign *c)
{
	json_t *o = campaign_json(c);

	if (o == NULL)
		return;
	json_object_set_new(o, "codes", json_integer(c->codes));
	json_object_set_new(o, "uses", json_integer(c->uses));
	json_array_append_new(arg, o);
}

int
h_api_campaign_list(struct web *w, struct req *req, struct resp *resp)
{
	json_t *a = json_array();
	enum error_word e;

	(void)w;
	if (a == NULL)
		return resp_api_error(resp, ERROR_UNAVAILABLE, NULL);
	if ((e = campaign_list(&req->svc, list_one, a)) != ERROR_NONE) {
		json_decref(a);
		return resp_api_error(resp, e, NULL);
	}
	return ok_with(resp, 200, "campaigns", a);
}

/* The answer of a handler that reads or changes one object: obj (stolen)
 * is built by the caller only when e is ERROR_NONE. */
static int
one_answer(struct resp *resp, enum error_word e, const char *name,
    const char *missing, json_t *obj)
{
	if (e != ERROR_NONE)
		return resp_api_error(
		    resp, e, e == ERROR_NOT_FOUND ? missing : NULL);
	return ok_with(resp, 200, name, obj);
}

int
h_api_campaign_get(struct web *w, struct req *req, struct resp *resp)
{
	struct campaign c;
	enum error_word e;

	(void)w;
	e = campaign_get(&req->svc, req->param[0], &c);
	return one_answer(resp, e, "campaign", "No campaign has that name.",
	    e == ERROR_NONE ? campaign_json(&c) : NULL);
}

int
h_api_campaign_close(struct web *w, struct req *req, struct resp *resp)
{
	struct campaign c;
	enum error_word e;

	(void)w;
	e = campaign_close(&req->svc, req->param[0], &c);
	return one_answer(resp, e, "campaign", "No campaign has that name.",
	    e == ERROR_NONE ? campaign_json(&c) : NULL);
}

static void
emit_code(void *arg, const char *display)
{
	json_array_append_new(arg, json_string(display));
}

/* {"codes": [...], "max_uses"}: imported as given, normalized. */
static int
codes_import_answer(struct req *req, struct resp *resp, json_t *list)
{
	struct jfields f = {.obj = req->json};
	const char **codes;
	json_t *out, *v;
	int64_t max_uses, expires_at, created = 0, dups = 0;
	enum error_word e;
	size_t i, n = json_array_size(list);

	max_uses = jf_int(&f, "max_uses", 1, INT32_MAX, 1, 0);
	expires_at = jf_time(&f, "expires_at");
	if (!f.bad && (n == 0 || n > API_CODES_MAX)) {
		f.bad = 1;
		snprintf(f.why, sizeof(f.why),
		    "Field \"codes\" takes 1 to %lld codes.",
		    (long long)API_CODES_MAX);
	}
	if (f.bad)
		return bad(resp, &f);
	if ((codes = arena_alloc(req->a, n * sizeof(*codes))) == NULL)
		return resp_api_error(resp, ERROR_TOO_LARGE, NULL);
	json_array_foreach(list, i, v)
	{
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > 64)
			return resp_api_error(resp, ERROR_BAD_REQUEST,
			    "Field \"codes\" takes strings of 1-64 bytes.");
		codes[i] = json_string_value(v);
	}
	if ((out = json_array()) == NULL)
		return resp_api_error(resp, ERROR_UNAVAILABLE, NULL);
	e = codes_import_list(&req->svc, req->param[0], codes, n, max_uses,
	    expires_at, emit_code, out, &created, &dups);
	if (e == ERROR_NONE && created == 0 && dups > 0)
		e = ERROR_CONFLICT; /* nothing new: every code exists */
	if (e != ERROR_NONE) {
		json_decref(out);
		return resp_api_error(resp, e,
		    e == ERROR_NOT_FOUND  ? "No campaign has that name."
		    : e == ERROR_CONFLICT ? "Every one of these codes exists "
					    "already."
					  : NULL);
	}
	return resp_json(resp, 201,
	    json_pack("{s:b,s:I,s:I,s:o}", "ok", 1, "created",
		(json_int_t)created, "duplicates", (json_int_t)dups, "codes",
		out));
}

int
h_api_codes_create(struct web *w, struct req *req, struct resp *resp)
{
	struct jfields f = {.obj = req->json};
	struct codes_gen g;
	json_t *out, *list = json_object_get(req->json, "codes");
	int64_t created = 0;
	enum error_word e;

	(void)w;
	if (list != NULL && json_is_array(list))
		return codes_import_answer(req, resp, list);
	if (list != NULL && !json_is_null(list))
		return resp_api_error(resp, ERROR_BAD_REQUEST,
		    "Field \"codes\" must be an array of strings.");
	memset(&g, 0, sizeof(g));
	g.campaign = req->param[0];
	g.count = jf_int(&f, "count", 1, API_CODES_MAX, 1, 0);
	g.max_uses = jf_int(&f, "max_uses", 1, INT32_MAX, 1, 0);
	g.expires_at = jf_time(&f, "expires_at");
	g.length = (int)jf_int(&f, "length", 1, 64, 0, 0);
	g.prefix = jf_str(&f, "prefix", 16, 0);
	if (f.bad)
		return bad(resp, &f);
	if ((out = json_array()) == NULL)
		return resp_api_error(resp, ERROR_UNAVAILABLE, NULL);
	g.emit = emit_code;
	g.arg = out;
	if ((e = codes_generate(&req->svc, &g, &created)) != ERROR_NONE) {
		json_decref(out);
		return resp_api_error(resp, e,
		    e == ERROR_NOT_FOUND ? "No campaign has that name." : NULL);
	}
	return resp_json(resp, 201,
	    json_pack("{s:b,s:I,s:o}", "ok", 1, "created", (json_int_t)created,
		"codes", out));
}

static void
page_one(void *arg, const struct code_info *ci)
{
	json_array_append_new(arg, code_info_json(ci));
}

int
h_api_codes_list(struct web *w, struct req *req, struct resp *resp)
{
	const char *state = kv_get(&req->q, "state");
	const char *after = kv_get(&req->q, "after");
	const char *limit = kv_get(&req->q, "limit");
	enum codes_filter filter = CODES_ALL;
	int64_t after_id = 0, n = 100, last = 0;
	enum error_word e;
	json_t *a, *o;

	(void)w;
	if ((state != NULL && codes_filter_parse(state, &filter) == -1) ||
	    (after != NULL &&
		str_to_i64(after, 0, INT64_MAX, &after_id) == -1) ||
	    (limit != NULL && str_to_i64(limit, 1, API_PAGE_MAX, &n) == -1))
		return resp_api_error(resp, ERROR_BAD_REQUEST,
		    "Query: state=all|used|unused, after=<id>, "
		    "limit=1..1000.");
	if ((a = json_array()) == NULL)
		return resp_api_error(resp, ERROR_UNAVAILABLE, NULL);
	e = codes_page(&req->svc, req->param[0], filter, after_id, (int)n,
	    page_one, a, &last);
	if (e != ERROR_NONE) {
		json_decref(a);
		return resp_api_error(resp, e,
		    e == ERROR_NOT_FOUND ? "No campaign has that name." : NULL);
	}
	o = json_pack("{s:b,s:o}", "ok", 1, "codes", a);
	if (o != NULL)
		json_object_set_new(o, "next_after",
		    (int64_t)json_array_size(a) == n ? json_integer(last)
						     : json_null());
	return resp_json(resp, 200, o);
}

int
h_api_code_get(struct web *w, struct req *req, struct resp *resp)
{
	struct code_info ci;
	enum error_word e;

	(void)w;
	e = code_get(&req->svc, req->param[0], &ci);
	return one_answer(resp, e, "code", "No code has that text.",
	    e == ERROR_NONE ? code_info_json(&ci) : NULL);
}

int
h_api_code_revoke(struct web *w, struct req *req, struct resp *resp)
{
	struct code_info ci;
	enum error_word e;

	(void)w;
	e = code_revoke(&req->svc, req->param[0], &ci);
	return one_answer(resp, e, "code", "No code has that text.",
	    e == ERROR_NONE ? code_info_json(&ci) : NULL);
}
