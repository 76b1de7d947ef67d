/* The closed set of error words, the same on every surface. */
#ifndef ERRORS_H
#define ERRORS_H

enum error_word {
	ERROR_NONE = 0,
	ERROR_INVALID,
	ERROR_EXPIRED,
	ERROR_EXHAUSTED,
	ERROR_REVOKED,
	ERROR_INELIGIBLE,
	ERROR_RATE_LIMITED,
	ERROR_BAD_REQUEST,
	ERROR_TOO_LARGE,
	ERROR_UNAUTHORIZED,
	ERROR_FORBIDDEN,
	ERROR_NOT_FOUND,
	ERROR_METHOD_NOT_ALLOWED,
	ERROR_CONFLICT,
	ERROR_UNAVAILABLE,
	ERROR__MAX
};

/* "invalid", "expired", ...; "ok" for ERROR_NONE. */
const char *error_name(enum error_word);
/* The HTTP status of the contract's table (200 for ERROR_NONE). */
int error_http_status(enum error_word);
/* A plain sentence for people. */
const char *error_sentence(enum error_word);
/* Whether the abuse gate counts this failure (guessing, not losing). */
int error_counts_as_failure(enum error_word);

#endif
