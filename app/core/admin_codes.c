/*
 * The dashboard's codes and redemptions lists: one page is one statement
 * with LIMIT one more than the page, so the page knows whether another
 * follows without counting.
 */
#include <stdio.h>
#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "account.h"
#include "admin_codes.h"

static const char *const code_states[] = {
    "active", "redeemed", "exhausted", "expired", "revoked"};

int
admin_code_state_ok(const char *s)
{
	size_t i;

	for (i = 0; s != NULL && i < NELEM(code_states); i++)
		if (strcmp(s, code_states[i]) == 0)
			return 1;
	return 0;
}

static int
set(const char *s)
{
	return s != NULL && *s != '\0';
}

enum error_word
admin_codes_page(struct svc *s, const struct admin_codes_query *q,
    void (*fn)(void *, const struct code_info *), void *arg, int *more)
{
	struct db_stmt *st;
	struct code_info ci;
	int by_campaign = set(q->campaign), by_state = set(q->state);
	int rc, n = 0, col = 1;
	enum stmt_id id;

	*more = 0;
	if ((by_state && !admin_code_state_ok(q->state)) || q->after_id < 0)
		return ERROR_BAD_REQUEST;
	if (by_campaign)
		id = by_state ? STMT_ADMIN_CODES_CAMPAIGN_STATE
			      : STMT_ADMIN_CODES_CAMPAIGN;
	else
		id = by_state ? STMT_ADMIN_CODES_STATE : STMT_ADMIN_CODES_ALL;
	if ((st = db_prepare(s->db, id)) == NULL)
		return ERROR_UNAVAILABLE;
	/* The campaign and state statement leaves the codes' tenant to the
	 * campaign's subquery (its index has no tenant_id). */
	if (!(by_campaign && by_state))
		db_bind_i64(st, col++, s->tenant_id);
	if (by_campaign) {
		db_bind_i64(st, col++, s->tenant_id);
		db_bind_text(st, col++, q->campaign);
	}
	if (by_state)
		db_bind_text(st, col++, q->state);
	db_bind_i64(st, col++, q->after_id);
	db_bind_i64(st, col++, ADMIN_CODES_PAGE + 1);
	while ((rc = db_step(st)) == DB_ROW) {
		if (n++ == ADMIN_CODES_PAGE) {
			*more = 1;
			continue;
		}
		code_from_row(st, &ci);
		fn(arg, &ci);
	}
	db_reset(st);
	if (rc != DB_OK) {
		log_err("admin codes: the page failed");
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}

static void
hold_from_row(struct db_stmt *st, struct admin_hold *h)
{
	const char *t;

	memset(h, 0, sizeof(*h));
	h->id = db_col_i64(st, 0);
	if ((t = db_col_text(st, 1)) != NULL)
		str_copy(h->external_id, t, sizeof(h->external_id));
	if ((t = db_col_text(st, 2)) != NULL)
		str_copy(h->account, t, sizeof(h->account));
	if ((t = db_col_text(st, 3)) != NULL)
		str_copy(h->state, t, sizeof(h->state));
	h->expires_at = db_col_i64(st, 4);
	h->created_at = db_col_i64(st, 5);
	h->ended_at = db_col_null(st, 6) ? 0 : db_col_i64(st, 6);
	h->redemption_id = db_col_null(st, 7) ? 0 : db_col_i64(st, 7);
}

enum error_word
admin_code_history(struct svc *s, int64_t code_id,
    void (*on_redemption)(void *, const struct redemption *),
    void (*on_hold)(void *, const struct admin_hold *), void *arg)
{
	struct db_stmt *st;
	struct redemption r;
	struct admin_hold h;
	int rc;

	if ((st = db_prepare(s->db, STMT_ADMIN_CODE_REDEMPTIONS)) == NULL)
		return ERROR_UNAVAILABLE;
	db_bind_i64(st, 1, code_id);
	db_bind_i64(st, 2, s->tenant_id);
	db_bind_i64(st, 3, ADMIN_CODE_ROWS_MAX);
	while ((rc = db_step(st)) == DB_ROW) {
		redemption_from_row(st, 0, &r);
		on_redemption(arg, &r);
	}
	db_reset(st);
	if (rc != DB_OK)
		return ERROR_UNAVAILABLE;
	if ((st = db_prepare(s->db, STMT_ADMIN_CODE_HOLDS)) == NULL)
		return ERROR_UNAVAILABLE;
	db_bind_i64(st, 1, code_id);
	db_bind_i64(st, 2, s->tenant_id);
	db_bind_i64(st, 3, ADMIN_CODE_ROWS_MAX);
	while ((rc = db_step(st)) == DB_ROW) {
		hold_from_row(st, &h);
		on_hold(arg, &h);
	}
	db_reset(st);
	return rc == DB_OK ? ERROR_NONE : ERROR_UNAVAILABLE;
}

enum error_word
admin_redemptions_page(struct svc *s, const struct admin_redemptions_query *q,
    void (*fn)(void *, const struct redemption *), void *arg, int *more)
{
	char account[ACCOUNT_MAX + 1];
	const char *acc = NULL, *campaign = NULL;
	struct db_stmt *st;
	struct redemption r;
	int rc, n = 0;

	*more = 0;
	if (set(q->account)) {
		if (account_canonical(q->account, account) != 0)
			return ERROR_BAD_REQUEST;
		acc = account;
	}
	if (set(q->campaign))
		campaign = q->campaign;
	if (q->since < 0 || q->until < 0 || q->before_id < 0)
		return ERROR_BAD_REQUEST;
	if ((st = db_prepare(s->db, STMT_ADMIN_REDEMPTIONS)) == NULL)
		return ERROR_UNAVAILABLE;
	db_bind_i64(st, 1, s->tenant_id);
	db_bind_text(st, 2, campaign);
	db_bind_text(st, 3, campaign);
	db_bind_text(st, 4, acc);
	db_bind_text(st, 5, acc);
	db_bind_i64(st, 6, q->since);
	db_bind_i64(st, 7, q->until > 0 ? q->until : INT64_MAX);
	db_bind_i64(st, 8, q->before_id > 0 ? q->before_id : INT64_MAX);
	db_bind_i64(st, 9, ADMIN_CODES_PAGE + 1);
	while ((rc = db_step(st)) == DB_ROW) {
		if (n++ == ADMIN_CODES_PAGE) {
			*more = 1;
			continue;
		}
		redemption_from_row(st, 0, &r);
		fn(arg, &r);
	}
	db_reset(st);
	if (rc != DB_OK) {
		log_err("admin redemptions: the page failed");
		return ERROR_UNAVAILABLE;
	}
	return ERROR_NONE;
}
