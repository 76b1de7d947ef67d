#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "../lib/common.h"
#include "../lib/log.h"
#include "../lib/str.h"
#include "campaigns.h"
#include "codes.h"
#include "seats.h"

#define GEN_CHUNK 10000 /* codes per transaction */
#define GEN_ROWS 100    /* rows per INSERT: STMT_CODE_INSERT_100 */
#define GEN_PARAMS 6    /* parameters per row */
#define IMPORT_LINE_MAX 1024

struct gen_chunk {
	struct svc *s;
	const struct codes_gen *g;
	int64_t campaign_id;
	int length, check;
	const char *prefix;
	int64_t n;
	char (*norm)[CODE_MAX + 1];
	char (*disp)[CODE_DISPLAY_MAX];
	int64_t unchecked;
	int shards; /* counter rows per code (seats.h); 1: not split */
};

static void
gen_one(struct gen_chunk *c, int64_t i)
{
	codetext_generate(
	    c->prefix, c->length, c->check, c->norm[i], c->disp[i]);
}

static void
bind_code_row(struct db_stmt *st, int base, struct gen_chunk *c, int64_t i)
{
	db_bind_i64(st, base + 1, c->s->tenant_id);
	db_bind_i64(st, base + 2, c->campaign_id);
	db_bind_text(st, base + 3, c->norm[i]);
	db_bind_text(st, base + 4, c->disp[i]);
	db_bind_i64(st, base + 5, c->g->max_uses);
	if (c->g->expires_at > 0)
		db_bind_i64(st, base + 6, c->g->expires_at);
	else
		db_bind_null(st, base + 6);
}

/* One row; a collision draws a new code (collision-safe generation). A
 * hot code's seats are split over its counter rows here. */
static int
gen_insert_single(struct db *db, struct gen_chunk *c, int64_t i)
{
	struct db_stmt *st;
	int64_t id;
	int rc, tries;

	if ((st = db_prepare(db, STMT_CODE_INSERT)) == NULL)
		return DB_EFAIL;
	for (tries = 0; tries < 20; tries++) {
		bind_code_row(st, 0, c, i);
		rc = db_step(st);
		id = db_last_id(st);
		db_reset(st);
		if (rc == DB_OK)
			return seats_split(db, id, c->g->max_uses, c->shards);
		if (rc != DB_EUNIQUE)
			return rc;
		gen_one(c, i);
	}
	log_err("code generation: 20 collisions in a row; the code space of "
		"this length is nearly full");
	return DB_EFAIL;
}

static int
gen_chunk_tx(struct db *db, void *arg)
{
	struct gen_chunk *c = arg;
	struct db_stmt *st;
	int64_t i, j;
	int rc;

	c->unchecked = 0;
	for (i = 0; i < c->n; i++)
		gen_one(c, i);
	for (i = 0; i < c->n;) {
		if (c->n - i >= GEN_ROWS && c->shards < 2) {
			if ((st = db_prepare(db, STMT_CODE_INSERT_100)) == NULL)
				return DB_EFAIL;
			for (j = 0; j < GEN_ROWS; j++)
				bind_code_row(
				    st, (int)j * GEN_PARAMS, c, i + j);
			rc = db_step(st);
			db_reset(st);
			if (rc == DB_OK) {
				i += GEN_ROWS;
				continue;
			}
			if (rc != DB_EUNIQUE)
				return rc;
			/* A collision: this batch goes row by row. */
			for (j = 0; j < GEN_ROWS; j++)
				if ((rc = gen_insert_single(db, c, i + j)) !=
				    DB_OK)
					return rc;
			i += GEN_ROWS;
			continue;
		}
		if ((rc = gen_insert_single(db, c, i)) != DB_OK)
			return rc;
		i++;
	}
	for (i = 0; i < c->n; i++)
		if (codetext_in_alphabet(c->norm[i]) &&
		    !codetext_check_ok(c->norm[i]))
			c->unchecked++;
	if (c->unchecked > 0 &&
	    (rc = db_exec(db, STMT_TENANT_ADD_UNCHECKED, NULL, "ii",
		 c->unchecked, c->s->tenant_id)) != DB_OK)
		return rc;
	return c->g->in_tx != NULL ? c->g->in_tx(db, c->g->arg, c->n) : DB_OK;
}

enum error_word
codes_generate(struct svc *s, const struct codes_gen *g, int64_t *created)
{
	char prefix[CODE_MAX + 1] = "";
	struct gen_chunk c;
	struct campaign k;
	enum error_word e;
	int64_t i, done = 0;
	int rc;

	*created = 0;
	if (g->count < 1 || g->count > CODES_MAX_PER_CALL || g->max_uses < 1 ||
	    g->expires_at < 0)
		return ERROR_BAD_REQUEST;
	if (g->prefix != NULL && *g->prefix != '\0' &&
	    (codetext_normalize(g->prefix, prefix) != CODETEXT_OK ||
		strlen(prefix) > CODE_PREFIX_MAX ||
		!codetext_in_alphabet(prefix)))
		return ERROR_BAD_REQUEST;
	memset(&c, 0, sizeof(c));
	c.length = g->length ? g->length : CODE_LENGTH_DEFAULT;
	if (c.length < CODE_LENGTH_MIN || c.length > CODE_LENGTH_MAX)
		return ERROR_BAD_REQUEST;
	if ((e = campaign_get(s, g->campaign, &k)) != ERROR_NONE)
		return e;
	if (k.kind == CAMPAIGN_POOL && g->max_uses != 1)
		return ERROR_BAD_REQUEST;
	c.s = s;
	c.g = g;
	c.shards = seats_shards_for(&s->cfg, g->shards, g->max_uses);
	c.campaign_id = k.id;
	c.check = !g->no_check;
	c.prefix = prefix;
	c.norm = calloc(GEN_CHUNK, sizeof(*c.norm));
	c.disp = calloc(GEN_CHUNK, sizeof(*c.disp));
	if (c.norm == NULL || c.disp == NULL) {
		e = ERROR_UNAVAILABLE;
		goto out;
	}
	e = ERROR_NONE;
	while (done < g->count) {
		c.n = g->count - done < GEN_CHUNK ? g->count - done : GEN_CHUNK;
		rc = db_transact(s->db, DB_TX_WRITE, gen_chunk_tx, &c);
		if (rc != DB_OK) {
			e = ERROR_UNAVAILABLE;
			break;
		}
		done += c.n;
		*created = done;
		if (c.unchecked > 0)
			s->unchecked_codes += c.unchecked;
		if (g->emit != NULL)
			for (i = 0; i < c.n; i++)
				g->emit(g->arg, c.disp[i]);
		if (g->progress != NULL)
			g->progress(g->arg, done, g->count);
	}
out:
	free(c.norm);
	free(c.disp);
	return e;
}

/* CSV fields: split on commas, trimmed, surrounding quotes dropped. */
static int
csv_split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line, *end;

	for (;;) {
		char *comma = strchr(p, ',');

		if (n == max)
			return -1;
		if (comma != NULL)
			*comma = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t' ||
				      end[-1] == '\r' || end[-1] == '\n'))
			*--end = '\0';
		if (end - p >= 2 && *p == '"' && end[-1] == '"') {
			end[-1] = '\0';
			p++;
		}
		f[n++] = p;
		if (comma == NULL)
			return n;
		p = comma + 1;
	}
}

struct import_row {
	char norm[CODE_MAX + 1];
	int64_t max_uses, expires_at;
};

/* 1: a row; 0: skip (blank or header); -1: bad, reason set. */
static int
import_parse(char *line, int first, const struct codes_import *im,
    struct import_row *row, char *reason, size_t rlen)
{
	char *f[4];
	int n;

	if (strchr(line, '\n') == NULL && strlen(line) >= IMPORT_LINE_MAX - 1) {
		snprintf(reason, rlen, "line too long");
		return -1;
	}
	if ((n = csv_split(line, f, 3)) == -1) {
		snprintf(reason, rlen,
		    "too many columns (want code[,max_uses[,expires_at]])");
		return -1;
	}
	if (n == 1 && f[0][0] == '\0')
		return 0;
	if (first && strcasecmp(f[0], "code") == 0)
		return 0;
	switch (codetext_normalize(f[0], row->norm)) {
	case CODETEXT_OK:
		break;
	case CODETEXT_TOO_LONG:
		snprintf(
		    reason, rlen, "code longer than %d characters", CODE_MAX);
		return -1;
	default:
		snprintf(reason, rlen,
		    "a code holds letters and digits only (spaces and dashes "
		    "are dropped)");
		return -1;
	}
	row->max_uses = im->max_uses;
	if (n >= 2 && f[1][0] != '\0' &&
	    str_to_i64(f[1], 1, INT64_C(1000000000), &row->max_uses) == -1) {
		snprintf(reason, rlen, "max_uses is not a positive number");
		return -1;
	}
	row->expires_at = im->expires_at;
	if (n >= 3 && f[2][0] != '\0' &&
	    str_parse_time(f[2], &row->expires_at) == -1) {
		snprintf(reason, rlen,
		    "expires_at is not an RFC 3339 time or Unix seconds");
		return -1;
	}
	return 1;
}

struct import_chunk {
	struct svc *s;
	int64_t campaign_id;
	struct import_row *rows;
	unsigned char *made; /* NULL, or n flags: row i was created */
	int64_t n, created, duplicates, unchecked;
};

static int
import_chunk_tx(struct db *db, void *arg)
{
	struct import_chunk *c = arg;
	struct db_stmt *st;
	int64_t i, id;
	int rc;

	c->created = c->duplicates = c->unchecked = 0;
	if ((st = db_prepare(db, STMT_CODE_INSERT)) == NULL)
		return DB_EFAIL;
	for (i = 0; i < c->n; i++) {
		struct import_row *r = &c->rows[i];

		db_bind_i64(st, 1, c->s->tenant_id);
		db_bind_i64(st, 2, c->campaign_id);
		db_bind_text(st, 3, r->norm);
		db_bind_text(st, 4, r->norm);
		db_bind_i64(st, 5, r->max_uses);
		if (r->expires_at > 0)
			db_bind_i64(st, 6, r->expires_at);
		else
			db_bind_null(st, 6);
		rc = db_step(st);
		id = db_last_id(st);
		db_reset(st);
		if (c->made != NULL)
			c->made[i] = rc == DB_OK;
		if (rc == DB_EUNIQUE) {
			c->duplicates++;
			continue;
		}
		if (rc != DB_OK || (rc = seats_split(db, id, r->max_uses,
					seats_shards_for(&c->s->cfg, 0,
					    r->max_uses))) != DB_OK)
			return rc;
		c->created++;
		if (codetext_in_alphabet(r->norm) &&
		    !codetext_check_ok(r->norm))
			c->unchecked++;
	}
	if (c->unchecked > 0)
		return db_exec(db, STMT_TENANT_ADD_UNCHECKED, NULL, "ii",
		    c->unchecked, c->s->tenant_id);
	return DB_OK;
}

enum error_word
codes_import(struct svc *s, FILE *fp, struct codes_import *im)
{
	char line[IMPORT_LINE_MAX];
	struct import_chunk c;
	struct import_row row;
	struct campaign k;
	enum error_word e;
	int64_t lineno = 0, total = 0, done = 0;
	int r;

	im->created = im->duplicates = im->bad_line = 0;
	im->bad_reason[0] = '\0';
	if ((e = campaign_get(s, im->campaign, &k)) != ERROR_NONE)
		return e;
	if (im->max_uses < 1 || (k.kind == CAMPAIGN_POOL && im->max_uses != 1))
		return ERROR_BAD_REQUEST;
	/* Pass one: every line checked before anything is written. */
	while (fgets(line, sizeof(line), fp) != NULL) {
		lineno++;
		r = import_parse(line, lineno == 1, im, &row, im->bad_reason,
		    sizeof(im->bad_reason));
		if (r == 1 && k.kind == CAMPAIGN_POOL && row.max_uses != 1) {
			snprintf(im->bad_reason, sizeof(im->bad_reason),
			    "a pool's codes are single-use (max_uses 1)");
			r = -1;
		}
		if (r == -1) {
			im->bad_line = lineno;
			return ERROR_BAD_REQUEST;
		}
		total += r;
		/* skip the rest of an overlong line already reported */
	}
	if (ferror(fp) || fseek(fp, 0, SEEK_SET) == -1) {
		snprintf(im->bad_reason, sizeof(im->bad_reason),
		    "the file cannot be read twice (is it a pipe?)");
		return ERROR_BAD_REQUEST;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.campaign_id = k.id;
	if ((c.rows = calloc(GEN_CHUNK, sizeof(*c.rows))) == NULL)
		return ERROR_UNAVAILABLE;
	lineno = 0;
	e = ERROR_NONE;
	for (;;) {
		int eof = fgets(line, sizeof(line), fp) == NULL;

		if (!eof) {
			lineno++;
			if (import_parse(line, lineno == 1, im, &c.rows[c.n],
				im->bad_reason, sizeof(im->bad_reason)) == 1)
				c.n++;
		}
		if (c.n == GEN_CHUNK || (eof && c.n > 0)) {
			if (db_transact(s->db, DB_TX_WRITE, import_chunk_tx,
				&c) != DB_OK) {
				e = ERROR_UNAVAILABLE;
				break;
			}
			im->created += c.created;
			im->duplicates += c.duplicates;
			s->unchecked_codes += c.unchecked;
			done += c.n;
			c.n = 0;
			if (im->progress != NULL)
				im->progress(im->arg, done, total);
		}
		if (eof)
			break;
	}
	free(c.rows);
	return e;
}

/* The dashboard's import: a chunk's rows keep where they came from. */
struct report_chunk {
	struct import_chunk c;
	int64_t *line;
	const char **text;
	size_t *tlen;
};

static enum error_word
report_flush(struct svc *s, struct report_chunk *r, struct codes_import *im,
    void (*refused)(void *, int64_t, const char *, size_t, const char *),
    void *arg)
{
	int64_t i;

	if (r->c.n == 0)
		return ERROR_NONE;
	if (db_transact(s->db, DB_TX_WRITE, import_chunk_tx, &r->c) != DB_OK)
		return ERROR_UNAVAILABLE;
	im->created += r->c.created;
	im->duplicates += r->c.duplicates;
	im->refused += r->c.duplicates;
	s->unchecked_codes += r->c.unchecked;
	for (i = 0; i < r->c.n; i++)
		if (!r->c.made[i])
			refused(arg, r->line[i], r->text[i], r->tlen[i],
			    "duplicate: the code exists already");
	r->c.n = 0;
	return ERROR_NONE;
}

enum error_word
codes_import_report(struct svc *s, const char *text, size_t len, int need_check,
    struct codes_import *im,
    void (*refused)(void *, int64_t, const char *, size_t, const char *),
    void *arg)
{
	char line[IMPORT_LINE_MAX], why[128];
	struct report_chunk r;
	struct campaign k;
	enum error_word e;
	const char *p = text, *end = text + len, *nl;
	size_t n;
	int64_t lineno = 0;
	int first = 1, ok;

	im->created = im->duplicates = im->refused = im->bad_line = 0;
	im->bad_reason[0] = '\0';
	if ((e = campaign_get(s, im->campaign, &k)) != ERROR_NONE)
		return e;
	if (im->max_uses < 1 || (k.kind == CAMPAIGN_POOL && im->max_uses != 1))
		return ERROR_BAD_REQUEST;
	memset(&r, 0, sizeof(r));
	r.c.s = s;
	r.c.campaign_id = k.id;
	r.c.rows = calloc(GEN_CHUNK, sizeof(*r.c.rows));
	r.c.made = calloc(GEN_CHUNK, 1);
	r.line = calloc(GEN_CHUNK, sizeof(*r.line));
	r.text = calloc(GEN_CHUNK, sizeof(*r.text));
	r.tlen = calloc(GEN_CHUNK, sizeof(*r.tlen));
	if (r.c.rows == NULL || r.c.made == NULL || r.line == NULL ||
	    r.text == NULL || r.tlen == NULL) {
		e = ERROR_UNAVAILABLE;
		goto out;
	}
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3; /* a spreadsheet's byte order mark */
	for (; p < end && e == ERROR_NONE; p = nl < end ? nl + 1 : end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		lineno++;
		ok = -1;
		if (n >= sizeof(line) - 1)
			snprintf(why, sizeof(why), "line too long");
		else if (n > 0 &&
			 (memchr(p, '\0', n) != NULL || !str_utf8_ok(p, n)))
			snprintf(why, sizeof(why),
			    "not text (a NUL byte or bad UTF-8)");
		else {
			memcpy(line, p, n);
			line[n] = '\0';
			ok = import_parse(line, first, im, &r.c.rows[r.c.n],
			    why, sizeof(why));
			if (ok == 1 && k.kind == CAMPAIGN_POOL &&
			    r.c.rows[r.c.n].max_uses != 1) {
				snprintf(why, sizeof(why),
				    "a pool's codes are single-use "
				    "(max_uses 1)");
				ok = -1;
			}
			if (ok == 1 && need_check &&
			    (!codetext_in_alphabet(r.c.rows[r.c.n].norm) ||
				!codetext_check_ok(r.c.rows[r.c.n].norm))) {
				snprintf(why, sizeof(why),
				    "bad check character (a typo?)");
				ok = -1;
			}
		}
		if (n > 0)
			first = 0;
		if (ok == 0)
			continue;
		if (ok == -1) {
			im->refused++;
			refused(arg, lineno, p, n, why);
			continue;
		}
		r.line[r.c.n] = lineno;
		r.text[r.c.n] = p;
		r.tlen[r.c.n] = n;
		if (++r.c.n == GEN_CHUNK)
			e = report_flush(s, &r, im, refused, arg);
	}
	if (e == ERROR_NONE)
		e = report_flush(s, &r, im, refused, arg);
out:
	free(r.c.rows);
	free(r.c.made);
	free(r.line);
	free(r.text);
	free(r.tlen);
	return e;
}

enum error_word
codes_import_list(struct svc *s, const char *campaign, const char *const *codes,
    size_t n, int64_t max_uses, int64_t expires_at,
    void (*emit)(void *, const char *display), void *arg, int64_t *created,
    int64_t *duplicates)
{
	struct import_chunk c;
	struct campaign k;
	enum error_word e;
	size_t i;

	*created = *duplicates = 0;
	if (codes == NULL || n == 0 || n > (size_t)CODES_MAX_PER_CALL ||
	    max_uses < 1 || expires_at < 0)
		return ERROR_BAD_REQUEST;
	if ((e = campaign_get(s, campaign, &k)) != ERROR_NONE)
		return e;
	if (k.kind == CAMPAIGN_POOL && max_uses != 1)
		return ERROR_BAD_REQUEST;
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.campaign_id = k.id;
	c.n = (int64_t)n;
	c.rows = calloc(n, sizeof(*c.rows));
	c.made = calloc(n, 1);
	if (c.rows == NULL || c.made == NULL) {
		e = ERROR_UNAVAILABLE;
		goto out;
	}
	/* Every code is checked before anything is written. */
	for (i = 0; i < n; i++) {
		if (codes[i] == NULL || codetext_normalize(codes[i],
					    c.rows[i].norm) != CODETEXT_OK) {
			e = ERROR_BAD_REQUEST;
			goto out;
		}
		c.rows[i].max_uses = max_uses;
		c.rows[i].expires_at = expires_at;
	}
	/* One transaction: all the new codes, or none. */
	if (db_transact(s->db, DB_TX_WRITE, import_chunk_tx, &c) != DB_OK) {
		e = ERROR_UNAVAILABLE;
		goto out;
	}
	*created = c.created;
	*duplicates = c.duplicates;
	s->unchecked_codes += c.unchecked;
	if (emit != NULL)
		for (i = 0; i < n; i++)
			if (c.made[i])
				emit(arg, c.rows[i].norm);
out:
	free(c.rows);
	free(c.made);
	return e;
}

static const char *const filter_names[CODES__MAX] = {
    [CODES_ALL] = "all",
    [CODES_USED] = "used",
    [CODES_UNUSED] = "unused",
};

int
codes_filter_parse(const char *s, enum codes_filter *out)
{
	int i = str_index(s, filter_names, CODES__MAX);

	if (i < 0)
		return -1;
	*out = (enum codes_filter)i;
	return 0;
}

/* CODE_COLUMNS of the catalog. */
void
code_from_row(struct db_stmt *st, struct code_info *ci)
{
	const char *t;

	memset(ci, 0, sizeof(*ci));
	ci->id = db_col_i64(st, 0);
	if ((t = db_col_text(st, 1)) != NULL)
		str_copy(ci->code, t, sizeof(ci->code));
	if ((t = db_col_text(st, 2)) != NULL)
		str_copy(ci->campaign, t, sizeof(ci->campaign));
	if ((t = db_col_text(st, 3)) != NULL)
		str_copy(ci->state, t, sizeof(ci->state));
	ci->uses = db_col_i64(st, 4);
	ci->max_uses = db_col_i64(st, 5);
	ci->expires_at = db_col_null(st, 6) ? 0 : db_col_i64(st, 6);
	ci->created_at = db_col_i64(st, 7);
}

enum error_word
codes_export(struct svc *s, const char *campaign, enum codes_filter filter,
    void (*fn)(void *, const struct code_info *), void *arg)
{
	struct code_info ci;
	struct campaign k;
	struct db_stmt *st;
	enum error_word e;
	int64_t f = filter;
	int rc;

	if (campaign != NULL) {
		if ((e = campaign_get(s, campaign, &k)) != ERROR_NONE)
			return e;
		rc = db_query(s->db, STMT_CODES_EXPORT_CAMPAIGN, &st, "iiiii",
		    s->tenant_id, k.id, f, f, f);
	} else
		rc = db_query(s->db, STMT_CODES_EXPORT_ALL, &st, "iiii",
		    s->tenant_id, f, f, f);
	while (rc == DB_ROW) {
		code_from_row(st, &ci);
		fn(arg, &ci);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
}

enum error_word
codes_page(struct svc *s, const char *campaign, enum codes_filter filter,
    int64_t after_id, int limit, void (*fn)(void *, const struct code_info *),
    void *arg, int64_t *last_id)
{
	struct code_info ci;
	struct campaign k;
	struct db_stmt *st;
	enum error_word e;
	int64_t f = filter;
	int rc;

	*last_id = 0;
	if (limit < 1 || limit > CODES_PAGE_MAX || after_id < 0 ||
	    (unsigned)filter >= CODES__MAX)
		return ERROR_BAD_REQUEST;
	if (campaign != NULL) {
		if ((e = campaign_get(s, campaign, &k)) != ERROR_NONE)
			return e;
		rc = db_query(s->db, STMT_CODES_PAGE_CAMPAIGN, &st, "iiiiiii",
		    s->tenant_id, k.id, after_id, f, f, f, (int64_t)limit);
	} else
		rc = db_query(s->db, STMT_CODES_PAGE_ALL, &st, "iiiiii",
		    s->tenant_id, after_id, f, f, f, (int64_t)limit);
	while (rc == DB_ROW) {
		code_from_row(st, &ci);
		*last_id = ci.id;
		fn(arg, &ci);
		rc = db_step(st);
	}
	if (st != NULL)
		db_reset(st);
	return rc == DB_OK ? ERROR_NONE : svc_db_error(rc);
}

enum error_word
code_get(struct svc *s, const char *code, struct code_info *out)
{
	char norm[CODE_MAX + 1];
	struct db_stmt *st;
	int rc;

	if (code == NULL || codetext_normalize(code, norm) != CODETEXT_OK)
		return ERROR_NOT_FOUND;
	rc = db_query(s->db, STMT_CODE_BY_TEXT, &st, "it", s->tenant_id, norm);
	if (rc == DB_OK)
		return ERROR_NOT_FOUND;
	if (rc != DB_ROW)
		return svc_db_error(rc);
	code_from_row(st, out);
	db_reset(st);
	return ERROR_NONE;
}

struct revoke_tx {
	struct svc *s;
	const char *norm;
};

/* The code's row, and a split code's counter rows with it. */
static int
revoke_tx(struct db *db, void *arg)
{
	struct revoke_tx *r = arg;
	int rc;

	rc =
	    db_exec(db, STMT_CODE_REVOKE, NULL, "it", r->s->tenant_id, r->norm);
	if (rc != DB_OK)
		return rc;
	return db_exec(
	    db, STMT_SHARD_REVOKE, NULL, "it", r->s->tenant_id, r->norm);
}

enum error_word
code_revoke(struct svc *s, const char *code, struct code_info *out)
{
	char norm[CODE_MAX + 1];
	int rc;

	if (code == NULL || codetext_normalize(code, norm) != CODETEXT_OK)
		return ERROR_NOT_FOUND;
	struct revoke_tx r = {s, norm};

	rc = db_transact(s->db, DB_TX_WRITE, revoke_tx, &r);
	if (rc != DB_OK)
		return svc_db_error(rc);
	return code_get(s, norm, out);
}

json_t *
code_info_json(const struct code_info *ci)
{
	char at[32];
	json_t *o;

	o = json_pack("{s:s,s:s,s:s,s:I,s:I}", "code", ci->code, "campaign",
	    ci->campaign, "state", ci->state, "uses", (json_int_t)ci->uses,
	    "max_uses", (json_int_t)ci->max_uses);
	if (o == NULL)
		return NULL;
	if (ci->expires_at > 0) {
		str_rfc3339(ci->expires_at, at);
		json_object_set_new(o, "expires_at", json_string(at));
	} else
		json_object_set_new(o, "expires_at", json_null());
	return o;
}
