/*
 * What every dashboard page shares (h_admin.c): the layout's template
 * keys, first in each page's key list, a page's own keys following from
 * AK__COMMON; the layout's values; rendering a page.
 */
#ifndef ADMIN_PAGE_H
#define ADMIN_PAGE_H

#include <stddef.h>

struct arena;

#include "tmpl.h"
#include "web.h"

/* The layout's keys (_admin_head.html). */
#define ADMIN_KEYS                                                             \
	"title", "email", "role", "tenant", "csrf", "nav", "href", "label",    \
	    "current", "can_write"

enum admin_key {
	AK_TITLE,
	AK_EMAIL,
	AK_ROLE,
	AK_TENANT,
	AK_CSRF,
	AK_NAV,
	AK_HREF,
	AK_LABEL,
	AK_CURRENT,
	AK_CAN_WRITE,
	AK__COMMON
};

/* The layout's values into v (nkeys long): the title, who is signed in,
 * the CSRF token, whether the role may write, the nav with current (a
 * nav href, or NULL) marked. -1 when the arena is full. */
int admin_page_layout(struct req *, struct tval *v, size_t nkeys,
    const char *current, const char *title);
/* Renders page p with v as the response; returns the status sent. */
int admin_page_render(struct web *, struct resp *, enum web_page p,
    const struct tval *v, int status);
/* Compiles one dashboard page at start-up; errx when the key list
 * (NULL-terminated, nkeys long) or the template is wrong. */
void admin_page_load(struct web *, enum web_page p, const char *dir,
    const char *file, const char *const *keys, size_t nkeys);

/* n rows of nkeys values each, zeroed (TV_NONE), in the arena; NULL
 * when it is full. */
struct tval **admin_rows(struct arena *, size_t n, size_t nkeys);
/* A form field sent at most once, or NULL. */
const char *admin_form(struct req *, const char *key);
/* A query field: NULL when absent or empty; *bad set when it is sent
 * twice or is longer than max. */
const char *admin_query(struct req *, const char *key, size_t max, int *bad);
/* Milliseconds on the monotonic clock (a page's query time). */
double admin_now_ms(void);

#endif
