/*
 * The audit log. A row is written as given, cleaned rather than refused:
 * an action that happened is recorded even when its object is hostile
 * text. Reading is keyset paged, newest first, and always by tenant.
 */
#include <string.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "account.h"
#include "audit.h"

_Static_assert(sizeof(((struct audit_entry *)0)->email) == ACCOUNT_MAX + 1,
    "an audit row's e-mail is an admin's");

void
audit_clean(const char *in, char *out, size_t size)
{
	size_t i = 0, o = 0, len;
	unsigned char c;

	if (size == 0)
		return;
	while (in != NULL && in[i] != '\0') {
		c = (unsigned char)in[i];
		/* One character (by its lead byte), or one bad byte. */
		len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		if (strnlen(in + i, len) < len || !str_utf8_ok(in + i, len)) {
			if (o + 1 >= size)
				break;
			out[o++] = '?';
			i++;
			continue;
		}
		if (o + len >= size)
			break;
		memcpy(out + o, in + i, len);
		o += len;
		i += len;
	}
	out[o] = '\0';
}

/* 1-63 of [a-z0-9._-]: a word the program chose, never user text. */
static int
action_ok(const char *a)
{
	size_t i,
	    n = a ? strnlen(a, sizeof(((struct audit_entry *)0)->action)) : 0;

	if (n == 0 || n >= sizeof(((struct audit_entry *)0)->action))
		return 0;
	for (i = 0; i < n; i++)
		if (!((a[i] >= 'a' && a[i] <= 'z') ||
			(a[i] >= '0' && a[i] <= '9') || a[i] == '.' ||
			a[i] == '_' || a[i] == '-'))
			return 0;
	return 1;
}

int
audit_insert(struct db *db, int64_t tenant_id, int64_t admin_id,
    const char *email, const char *ip, const char *action, const char *object,
    const char *detail)
{
	struct audit_entry e; /* the buffers, for their sizes */

	if (!action_ok(action) || admin_id < 0)
		return DB_ECHECK;
	audit_clean(email, e.email, sizeof(e.email));
	audit_clean(ip, e.ip, sizeof(e.ip));
	audit_clean(object, e.object, sizeof(e.object));
	audit_clean(detail, e.detail, sizeof(e.detail));
	return db_exec(db, STMT_AUDIT_INSERT, NULL, "iitiitttt", tenant_id,
	    admin_id, email != NULL ? e.email : NULL, admin_id, tenant_id, e.ip,
	    action, e.object, detail != NULL ? e.detail : NULL);
}

enum error_word
audit_write(struct svc *s, int64_t admin_id, const char *ip, const char *action,
    const char *object, const char *detail)
{
	int rc;

	if (!action_ok(action) || admin_id < 0)
		return ERROR_BAD_REQUEST;
	rc = audit_insert(
	    s->db, s->tenant_id, admin_id, NULL, ip, action, object, detail);
	if (rc != DB_OK) {
		log_err("audit: writing %s in tenant %s failed: %s", action,
		    s->tenant, db_errmsg(s->db));
		return svc_db_error(rc);
	}
	return ERROR_NONE;
}

/* AUDIT_COLUMNS of the catalog. */
static void
entry_from_row(struct db_stmt *st, struct audit_entry *e)
{
	const char *t;

	memset(e, 0, sizeof(*e));
	e->id = db_col_i64(st, 0);
	e->tenant_id = db_col_i64(st, 1);
	e->admin_id = db_col_i64(st, 2);
	e->at = db_col_i64(st, 3);
	if ((t = db_col_text(st, 4)) != NULL)
		str_copy(e->email, t, sizeof(e->email));
	if ((t = db_col_text(st, 5)) != NULL)
		str_copy(e->ip, t, sizeof(e->ip));
	if ((t = db_col_text(st, 6)) != NULL)
		str_copy(e->action, t, sizeof(e->action));
	if ((t = db_col_text(st, 7)) != NULL)
		str_copy(e->object, t, sizeof(e->object));
	if ((t = db_col_text(st, 8)) != NULL)
		str_copy(e->detail, t, sizeof(e->detail));
}

enum error_word
audit_list(struct svc *s, const struct audit_filter *f,
    void (*fn)(void *, const struct audit_entry *), void *arg)
{
	static const struct audit_filter any;
	char email[ACCOUNT_MAX + 1] = "";
	int64_t before, until, limit;
	struct audit_entry e;
	struct db_stmt *st;
	int rc;

	if (f == NULL)
		f = &any;
	/* A filter no row can match (not an action word, not an e-mail)
	 * matches nothing, without asking the database. */
	if (f->action != NULL && *f->action != '\0' && !action_ok(f->action))
		return ERROR_NONE;
	if (f->email != NULL && *f->email != '\0' &&
	    account_canonical(f->email, email) == -1)
		return ERROR_NONE;
	before = f->before_id > 0 ? f->before_id : INT64_MAX;
	until = f->until > 0 ? f->until : INT64_MAX;
	limit = f->limit > 0 && f->limit <= AUDIT_LIST_MAX ? f->limit
							   : AUDIT_LIST_MAX;
	if (f->action != NULL && *f->action != '\0')
		rc = db_query(s->db, STMT_AUDIT_LIST_ACTION, &st, "itiiitti",
		    s->tenant_id, f->action, before, f->since, until, email,
		    email, limit);
	else
		rc = db_query(s->db, STMT_AUDIT_LIST, &st, "iiiitti",
		    s->tenant_id, before, f->since, until, email, email, limit);
	while (rc == DB_ROW) {
		entry_from_row(st, &e);
		fn(arg, &e);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	if (rc != DB_OK) {
		log_err("audit: listing tenant %s failed: %s", s->tenant,
		    db_errmsg(s->db));
		return svc_db_error(rc);
	}
	return ERROR_NONE;
}
