#include "../lib/common.h"
#include "errors.h"

static const struct {
	const char *name;
	int status;
	int counted;
	const char *sentence;
} error_table[ERROR__MAX] = {
    [ERROR_NONE] = {"ok", 200, 0, "Done."},
    [ERROR_INVALID] = {"invalid", 404, 1,
	"That code does not exist. Check it for typos."},
    [ERROR_EXPIRED] = {"expired", 410, 1, "That code has expired."},
    [ERROR_EXHAUSTED] = {"exhausted", 409, 0, "That code has no uses left."},
    [ERROR_REVOKED] = {"revoked", 410, 1, "That code has been withdrawn."},
    [ERROR_INELIGIBLE] = {"ineligible", 403, 1,
	"This account cannot redeem that code."},
    [ERROR_RATE_LIMITED] = {"rate_limited", 429, 0,
	"Too many failed attempts. Wait a few minutes and try again."},
    [ERROR_BAD_REQUEST] = {"bad_request", 400, 0, "The request is malformed."},
    [ERROR_TOO_LARGE] = {"too_large", 413, 0, "The request is too large."},
    [ERROR_UNAUTHORIZED] = {"unauthorized", 401, 0,
	"Credentials are missing or wrong."},
    [ERROR_FORBIDDEN] = {"forbidden", 403, 0,
	"These credentials may not do that."},
    [ERROR_NOT_FOUND] = {"not_found", 404, 0, "Nothing is there."},
    [ERROR_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405, 0,
	"That method is not served here."},
    [ERROR_CONFLICT] = {"conflict", 409, 0, "That exists already."},
    [ERROR_UNAVAILABLE] = {"unavailable", 503, 0,
	"The service is busy or its database is down. Try again."},
};

const char *
error_name(enum error_word e)
{
	return (unsigned)e < ERROR__MAX ? error_table[e].name : "unavailable";
}

int
error_http_status(enum error_word e)
{
	return (unsigned)e < ERROR__MAX ? error_table[e].status : 503;
}

const char *
error_sentence(enum error_word e)
{
	return (unsigned)e < ERROR__MAX ? error_table[e].sentence : "";
}

int
error_counts_as_failure(enum error_word e)
{
	return (unsigned)e < ERROR__MAX && error_table[e].counted;
}
