/* app/core/codes.c: generation, CSV import, streamed export, lookup and
 * revocation, on the backend under test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/core/campaigns.h"
#include "../../app/core/codes.h"
#include "../../app/core/redeem.h"
#include "fixture.h"

#define FAR_FUTURE INT64_C(4102444800) /* 2100-01-01T00:00:00Z */

/* Codes collected from emit or export; owns its array. */
struct coll {
	struct code_info *v;
	size_t n, cap;
	struct code_info last;
	int by_code; /* every campaign: ordered by code, else (state, id) */
	int ordered; /* rows came in the export's documented order */
};

static void
coll_push(struct coll *c, const struct code_info *ci)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		ck_assert_ptr_nonnull(c->v);
	}
	c->v[c->n++] = *ci;
}

static void
coll_free(struct coll *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static void
on_export(void *arg, const struct code_info *ci)
{
	struct coll *c = arg;

	int st = strcmp(ci->state, c->last.state);

	if (c->n > 0 &&
	    (c->by_code ? strcmp(ci->code, c->last.code) <= 0
			: st < 0 || (st == 0 && ci->id <= c->last.id)))
		c->ordered = 0;
	c->last = *ci;
	coll_push(c, ci);
}

static void
on_emit(void *arg, const char *display)
{
	struct code_info ci;

	memset(&ci, 0, sizeof(ci));
	ck_assert_uint_lt(strlen(display), sizeof(ci.code));
	memcpy(ci.code, display, strlen(display) + 1);
	coll_push(arg, &ci);
}

struct progress {
	int calls;
	int64_t done[8], total;
};

static void
on_progress(void *arg, int64_t done, int64_t total)
{
	struct progress *p = arg;

	if (p->calls < 8)
		p->done[p->calls] = done;
	p->calls++;
	p->total = total;
}

/* Exports with a filter into c (emptied first); returns the count. */
static size_t export(const char *campaign, enum codes_filter f, struct coll *c)
{
	coll_free(c);
	c->ordered = 1;
	c->by_code = campaign == NULL;
	ck_assert_int_eq(
	    codes_export(&fx.svc, campaign, f, on_export, c), ERROR_NONE);
	return c->n;
}

static int
cmp_info(const void *a, const void *b)
{
	const struct code_info *x = a, *y = b;

	return strcmp(x->code, y->code);
}

static void
gen_init(
    struct codes_gen *g, const char *campaign, int64_t count, int64_t max_uses)
{
	memset(g, 0, sizeof(*g));
	g->campaign = campaign;
	g->count = count;
	g->max_uses = max_uses;
}

/* A seekable stream holding text, rewound. */
static FILE *
csv(const char *text)
{
	FILE *fp = tmpfile();

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ge(fputs(text, fp), 0);
	rewind(fp);
	return fp;
}

static enum error_word
import_text(const char *campaign, const char *text, struct codes_import *im)
{
	FILE *fp = csv(text);
	enum error_word e;

	memset(im, 0, sizeof(*im));
	im->campaign = campaign;
	im->max_uses = 1;
	e = codes_import(&fx.svc, fp, im);
	fclose(fp);
	return e;
}

static void
redeem_ok(struct svc *s, const char *code, const char *account)
{
	struct redeem_result res;

	ck_assert_int_eq(redeem_code(s, code, account, NULL, &res), 0);
	ck_assert_msg(res.error == ERROR_NONE, "redeem %s by %s: %s", code,
	    account, error_name(res.error));
	ck_assert_int_eq(res.already, 0);
}

START_TEST(test_codes_generate_counts)
{
	struct coll emitted = {0}, got = {0};
	struct progress p = {0};
	struct codes_gen g;
	int64_t created = -1;
	size_t i;

	fx_campaign("promo", 0, 0, 0);
	gen_init(&g, "promo", 50, 3);
	g.expires_at = FAR_FUTURE;
	g.emit = on_emit;
	g.arg = &emitted;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 50);
	ck_assert_uint_eq(emitted.n, 50);
	ck_assert_uint_eq(export("promo", CODES_ALL, &got), 50);
	ck_assert_int_eq(got.ordered, 1);
	for (i = 0; i < got.n; i++) {
		ck_assert_str_eq(got.v[i].campaign, "promo");
		ck_assert_str_eq(got.v[i].state, "active");
		ck_assert_int_eq(got.v[i].uses, 0);
		ck_assert_int_eq(got.v[i].max_uses, 3);
		ck_assert_int_eq(got.v[i].expires_at, FAR_FUTURE);
		ck_assert_int_gt(got.v[i].created_at, 0);
	}
	/* What was emitted is what is stored. */
	qsort(emitted.v, emitted.n, sizeof(*emitted.v), cmp_info);
	qsort(got.v, got.n, sizeof(*got.v), cmp_info);
	for (i = 0; i < got.n; i++)
		ck_assert_str_eq(emitted.v[i].code, got.v[i].code);

	/* Progress alone, without emit. */
	gen_init(&g, "promo", 7, 1);
	g.progress = on_progress;
	g.arg = &p;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 7);
	ck_assert_int_eq(p.calls, 1);
	ck_assert_int_eq(p.done[0], 7);
	ck_assert_int_eq(p.total, 7);
	ck_assert_uint_eq(export("promo", CODES_ALL, &got), 57);
	coll_free(&emitted);
	coll_free(&got);
	fx_verify_clean();
}
END_TEST

START_TEST(test_codes_generate_unique_checked)
{
	struct coll emitted = {0};
	struct codes_gen g;
	char norm[CODE_MAX + 1];
	int64_t created;
	size_t i;

	fx_campaign("promo", 0, 0, 0);
	gen_init(&g, "promo", 1000, 1);
	g.emit = on_emit;
	g.arg = &emitted;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 1000);
	qsort(emitted.v, emitted.n, sizeof(*emitted.v), cmp_info);
	for (i = 0; i < emitted.n; i++) {
		if (i > 0)
			ck_assert_str_ne(
			    emitted.v[i - 1].code, emitted.v[i].code);
		ck_assert_int_eq(
		    codetext_normalize(emitted.v[i].code, norm), CODETEXT_OK);
		ck_assert_uint_eq(strlen(norm), CODE_LENGTH_DEFAULT);
		ck_assert_int_eq(codetext_check_ok(norm), 1);
		/* Displayed in groups of four. */
		ck_assert_int_eq(emitted.v[i].code[4], '-');
	}
	/* Every generated code checks: nothing to look up unchecked. */
	ck_assert_int_eq(fx.svc.unchecked_codes, 0);
	coll_free(&emitted);
}
END_TEST

START_TEST(test_codes_generate_prefix_length)
{
	static const struct {
		const char *prefix, *want;
		int length;
	} cases[] = {
	    {"vxp", "VXP", 12},
	    {"V-X p", "VXP", 6},
	    {"ABCDEFGHJKMNPQRS", "ABCDEFGHJKMNPQRS", 32},
	    {"", "", 10},
	};
	struct coll emitted = {0};
	struct codes_gen g;
	struct code_info ci;
	char norm[CODE_MAX + 1];
	int64_t created;
	size_t c, i, plen;

	fx_campaign("promo", 0, 0, 0);
	for (c = 0; c < NELEM(cases); c++) {
		coll_free(&emitted);
		gen_init(&g, "promo", 20, 2);
		g.prefix = cases[c].prefix;
		g.length = cases[c].length;
		g.emit = on_emit;
		g.arg = &emitted;
		ck_assert_int_eq(
		    codes_generate(&fx.svc, &g, &created), ERROR_NONE);
		ck_assert_int_eq(created, 20);
		plen = strlen(cases[c].want);
		for (i = 0; i < emitted.n; i++) {
			const char *d = emitted.v[i].code;

			ck_assert_int_eq(
			    codetext_normalize(d, norm), CODETEXT_OK);
			ck_assert_uint_eq(
			    strlen(norm), plen + (size_t)cases[c].length);
			ck_assert_int_eq(strncmp(norm, cases[c].want, plen), 0);
			ck_assert_int_eq(codetext_in_alphabet(norm), 1);
			ck_assert_int_eq(codetext_check_ok(norm), 1);
			if (plen > 0) {
				ck_assert_int_eq(
				    strncmp(d, cases[c].want, plen), 0);
				ck_assert_int_eq(d[plen], '-');
			}
			/* Stored as displayed. */
			ck_assert_int_eq(code_get(&fx.svc, d, &ci), ERROR_NONE);
			ck_assert_str_eq(ci.code, d);
		}
	}
	coll_free(&emitted);
}
END_TEST

START_TEST(test_codes_generate_pool_single_use)
{
	struct codes_gen g;
	int64_t created = -1;

	fx_campaign("pool", 1, 0, 0);
	gen_init(&g, "pool", 5, 2);
	ck_assert_int_eq(
	    codes_generate(&fx.svc, &g, &created), ERROR_BAD_REQUEST);
	ck_assert_int_eq(created, 0);
	gen_init(&g, "pool", 5, 1);
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 5);
}
END_TEST

START_TEST(test_codes_generate_bad_inputs)
{
	static const char *const bad_prefixes[] = {
	    "VXP0", "O", "I", "1", "L", "0ABC", "l", "AB_C", "AB.C",
	    "caf\xc3\xa9", "\xff", "AB\nC", "ABCDEFGHJKMNPQRST", /* 17 */
	};
	static const int bad_lengths[] = {
	    CODE_LENGTH_MIN - 1, CODE_LENGTH_MAX + 1, -1, 1000};
	static const int64_t bad_counts[] = {
	    0, -1, INT64_MIN, CODES_MAX_PER_CALL + 1, INT64_MAX};
	static const int64_t bad_max_uses[] = {0, -1, INT64_MIN};
	struct coll got = {0};
	struct codes_gen g;
	int64_t created;
	size_t i;

	fx_campaign("promo", 0, 0, 0);
	for (i = 0; i < NELEM(bad_prefixes); i++) {
		gen_init(&g, "promo", 3, 1);
		g.prefix = bad_prefixes[i];
		created = -1;
		ck_assert_msg(
		    codes_generate(&fx.svc, &g, &created) == ERROR_BAD_REQUEST,
		    "prefix %zu accepted", i);
		ck_assert_int_eq(created, 0);
	}
	for (i = 0; i < NELEM(bad_lengths); i++) {
		gen_init(&g, "promo", 3, 1);
		g.length = bad_lengths[i];
		ck_assert_int_eq(
		    codes_generate(&fx.svc, &g, &created), ERROR_BAD_REQUEST);
		ck_assert_int_eq(created, 0);
	}
	for (i = 0; i < NELEM(bad_counts); i++) {
		gen_init(&g, "promo", bad_counts[i], 1);
		ck_assert_int_eq(
		    codes_generate(&fx.svc, &g, &created), ERROR_BAD_REQUEST);
		ck_assert_int_eq(created, 0);
	}
	for (i = 0; i < NELEM(bad_max_uses); i++) {
		gen_init(&g, "promo", 3, bad_max_uses[i]);
		ck_assert_int_eq(
		    codes_generate(&fx.svc, &g, &created), ERROR_BAD_REQUEST);
	}
	gen_init(&g, "promo", 3, 1);
	g.expires_at = -1;
	ck_assert_int_eq(
	    codes_generate(&fx.svc, &g, &created), ERROR_BAD_REQUEST);
	/* Nothing was written by any of them. */
	ck_assert_uint_eq(export("promo", CODES_ALL, &got), 0);
	coll_free(&got);
}
END_TEST

START_TEST(test_codes_generate_unknown_campaign)
{
	struct codes_gen g;
	int64_t created = -1;

	gen_init(&g, "nope", 3, 1);
	ck_assert_int_eq(
	    codes_generate(&fx.svc, &g, &created), ERROR_NOT_FOUND);
	ck_assert_int_eq(created, 0);
	gen_init(&g, "../x", 3, 1);
	ck_assert_int_eq(
	    codes_generate(&fx.svc, &g, &created), ERROR_NOT_FOUND);
}
END_TEST

/* GEN_CHUNK is 10000 codes per transaction: 20000 take two. */
START_TEST(test_codes_generate_crosses_chunk)
{
	struct coll emitted = {0}, got = {0};
	struct progress p = {0};
	struct codes_gen g;
	int64_t created;
	size_t i;

	fx_campaign("big", 0, 0, 0);
	gen_init(&g, "big", 20000, 1);
	g.emit = on_emit;
	g.arg = &emitted;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 20000);
	ck_assert_uint_eq(emitted.n, 20000);
	ck_assert_uint_eq(export("big", CODES_ALL, &got), 20000);
	ck_assert_int_eq(got.ordered, 1);
	qsort(emitted.v, emitted.n, sizeof(*emitted.v), cmp_info);
	qsort(got.v, got.n, sizeof(*got.v), cmp_info);
	for (i = 0; i < got.n; i++) {
		ck_assert_str_eq(emitted.v[i].code, got.v[i].code);
		if (i > 0)
			ck_assert_str_ne(got.v[i - 1].code, got.v[i].code);
	}
	/* The progress of the next chunk-crossing run, 10001 codes. */
	gen_init(&g, "big", 10001, 1);
	g.progress = on_progress;
	g.arg = &p;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 10001);
	ck_assert_int_eq(p.calls, 2);
	ck_assert_int_eq(p.done[0], 10000);
	ck_assert_int_eq(p.done[1], 10001);
	ck_assert_int_eq(p.total, 10001);
	ck_assert_uint_eq(export(NULL, CODES_ALL, &got), 30001);
	coll_free(&emitted);
	coll_free(&got);
	fx_verify_clean();
}
END_TEST

/* Codes without a check character are counted in tenants.unchecked_codes
 * so that redemption still looks them up. */
START_TEST(test_codes_generate_no_check_redeemable)
{
	struct coll emitted = {0};
	struct codes_gen g;
	struct svc fresh;
	char norm[CODE_MAX + 1];
	const char *failing = NULL;
	int64_t created, unchecked = 0;
	size_t i;

	fx_campaign("promo", 0, 0, 0);
	gen_init(&g, "promo", 62, 2);
	g.no_check = 1;
	g.emit = on_emit;
	g.arg = &emitted;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	for (i = 0; i < emitted.n; i++) {
		ck_assert_int_eq(
		    codetext_normalize(emitted.v[i].code, norm), CODETEXT_OK);
		if (!codetext_check_ok(norm)) {
			unchecked++;
			failing = emitted.v[i].code;
		}
	}
	ck_assert_ptr_nonnull(failing); /* 62 draws, each 30/31 likely */
	ck_assert_int_eq(fx.svc.unchecked_codes, unchecked);
	ck_assert_int_eq(svc_open(&fresh, fx.db, "default"), ERROR_NONE);
	ck_assert_int_eq(fresh.unchecked_codes, unchecked);
	redeem_ok(&fx.svc, failing, "a@x");
	redeem_ok(&fresh, failing, "b@x");
	coll_free(&emitted);
	fx_verify_clean();
}
END_TEST

START_TEST(test_codes_import_basic)
{
	struct codes_import im;
	struct code_info ci;

	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(import_text("promo",
			     "code,max_uses,expires_at\n"
			     "SUMMER2026,5,\n"
			     "abcd-efgh\r\n"
			     "\n"
			     "  \"WINTER-SALE\" , 2 , 2099-01-01T00:00:00Z\n"
			     "k7pq xm3d,,1795341600\n"
			     "NOEOL",
			     &im),
	    ERROR_NONE);
	ck_assert_int_eq(im.created, 5);
	ck_assert_int_eq(im.duplicates, 0);
	ck_assert_int_eq(im.bad_line, 0);

	ck_assert_int_eq(code_get(&fx.svc, "summer2026", &ci), ERROR_NONE);
	ck_assert_str_eq(ci.code, "SUMMER2026");
	ck_assert_str_eq(ci.campaign, "promo");
	ck_assert_int_eq(ci.max_uses, 5);
	ck_assert_int_eq(ci.expires_at, 0);
	ck_assert_int_eq(code_get(&fx.svc, "ABCDEFGH", &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 1); /* the default */
	ck_assert_int_eq(code_get(&fx.svc, "wintersale", &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 2);
	ck_assert_int_eq(ci.expires_at, 4070908800);
	ck_assert_int_eq(code_get(&fx.svc, "K7PQXM3D", &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 1);
	ck_assert_int_eq(ci.expires_at, 1795341600);
	ck_assert_int_eq(code_get(&fx.svc, "noeol", &ci), ERROR_NONE);
	/* The header is not a code. */
	ck_assert_int_eq(code_get(&fx.svc, "code", &ci), ERROR_NOT_FOUND);
	fx_verify_clean();
}
END_TEST

START_TEST(test_codes_import_defaults_and_no_header)
{
	struct codes_import im;
	struct code_info ci;
	FILE *fp;

	fx_campaign("promo", 0, 0, 0);
	fp = csv("AAAA2222\nBBBB3333,4\n");
	memset(&im, 0, sizeof(im));
	im.campaign = "promo";
	im.max_uses = 3;
	im.expires_at = FAR_FUTURE;
	ck_assert_int_eq(codes_import(&fx.svc, fp, &im), ERROR_NONE);
	fclose(fp);
	ck_assert_int_eq(im.created, 2);
	ck_assert_int_eq(code_get(&fx.svc, "AAAA2222", &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 3);
	ck_assert_int_eq(ci.expires_at, FAR_FUTURE);
	ck_assert_int_eq(code_get(&fx.svc, "BBBB3333", &ci), ERROR_NONE);
	ck_assert_int_eq(ci.max_uses, 4);
	/* "code" only skips as the first line. */
	ck_assert_int_eq(import_text("promo", "XYZW\ncode\n", &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 2);
	ck_assert_int_eq(code_get(&fx.svc, "CODE", &ci), ERROR_NONE);
	/* An empty file imports nothing, fine. */
	ck_assert_int_eq(import_text("promo", "", &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 0);
	ck_assert_int_eq(import_text("promo", "code\n", &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 0);
}
END_TEST

START_TEST(test_codes_import_duplicates)
{
	static const char text[] = "code\n"
				   "SUMMER2026\n"
				   "summer-2026\n" /* the same code */
				   "ABCDEFGH\n"
				   "JKMN-PQRS\n";
	struct codes_import im;
	struct coll got = {0};
	char gen[1][96];

	fx_campaign("promo", 0, 0, 0);
	fx_campaign("other", 0, 0, 0);
	ck_assert_int_eq(import_text("promo", text, &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 3);
	ck_assert_int_eq(im.duplicates, 1);
	ck_assert_int_eq(import_text("promo", text, &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 0);
	ck_assert_int_eq(im.duplicates, 4);
	/* A code is unique in the tenant, across campaigns. */
	ck_assert_int_eq(import_text("other", text, &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 0);
	ck_assert_int_eq(im.duplicates, 4);
	/* A generated code imported again is a duplicate too. */
	fx_codes("promo", 1, 1, gen);
	ck_assert_int_eq(import_text("promo", gen[0], &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 0);
	ck_assert_int_eq(im.duplicates, 1);
	ck_assert_uint_eq(export("promo", CODES_ALL, &got), 4);
	ck_assert_uint_eq(export("other", CODES_ALL, &got), 0);
	coll_free(&got);
}
END_TEST

START_TEST(test_codes_import_bad_line_imports_nothing)
{
	char overlong[1200], huge_code[100];
	static const struct {
		const char *text;
		int64_t line;
	} bad[] = {
	    {"AB_CD\nGOOD1\n", 1},
	    {"code\nGOOD1\nAB CD!\nGOOD2\n", 3},
	    {"GOOD1\nGOOD2\nGOOD3\nGOOD4\nbad.code", 5},
	    {"GOOD1,0\n", 1},
	    {"GOOD1,-1\n", 1},
	    {"GOOD1,x\n", 1},
	    {"GOOD1,1.5\n", 1},
	    {"GOOD1,+2\n", 1},
	    {"GOOD1,1000000001\n", 1},
	    {"GOOD1,1,tomorrow\n", 1},
	    {"GOOD1,1,2026-13-01T00:00:00Z\n", 1},
	    {"GOOD1,1,-5\n", 1},
	    {"GOOD1,1,2099-01-01,extra\n", 1},
	    {"GOOD1,,,\n", 1},
	    {"GOOD1\n\xff\xfe\n", 2},
	    {"GOOD1\nGO\x01OD\n", 2},
	    {"GOOD1\ncaf\xc3\xa9\n", 2},
	    {"GOOD1\n,5\n", 2},
	};
	struct codes_import im;
	struct coll got = {0};
	size_t i;

	fx_campaign("promo", 0, 0, 0);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_msg(
		    import_text("promo", bad[i].text, &im) == ERROR_BAD_REQUEST,
		    "bad[%zu] imported", i);
		ck_assert_msg(im.bad_line == bad[i].line,
		    "bad[%zu]: line %lld, want %lld", i, (long long)im.bad_line,
		    (long long)bad[i].line);
		ck_assert_str_ne(im.bad_reason, "");
		ck_assert_int_eq(im.created, 0);
	}
	/* A line longer than the reader's buffer, and a code longer than
	 * CODE_MAX. */
	memset(overlong, 'A', sizeof(overlong) - 2);
	overlong[sizeof(overlong) - 2] = '\n';
	overlong[sizeof(overlong) - 1] = '\0';
	ck_assert_int_eq(
	    import_text("promo", overlong, &im), ERROR_BAD_REQUEST);
	ck_assert_int_eq(im.bad_line, 1);
	memset(huge_code, 'B', CODE_MAX + 1);
	huge_code[CODE_MAX + 1] = '\0';
	ck_assert_int_eq(
	    import_text("promo", huge_code, &im), ERROR_BAD_REQUEST);
	ck_assert_int_eq(im.bad_line, 1);
	huge_code[CODE_MAX] = '\0';
	/* Nothing from any of them. */
	ck_assert_uint_eq(export("promo", CODES_ALL, &got), 0);
	ck_assert_int_eq(fx.svc.unchecked_codes, 0);
	/* CODE_MAX characters are fine. */
	ck_assert_int_eq(import_text("promo", huge_code, &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 1);
	coll_free(&got);
}
END_TEST

START_TEST(test_codes_import_pool_and_bad_args)
{
	struct codes_import im;
	FILE *fp;

	fx_campaign("pool", 1, 0, 0);
	ck_assert_int_eq(
	    import_text("pool", "AAAA\nBBBB,1\n", &im), ERROR_NONE);
	ck_assert_int_eq(im.created, 2);
	ck_assert_int_eq(
	    import_text("pool", "CCCC\nDDDD,2\n", &im), ERROR_BAD_REQUEST);
	ck_assert_int_eq(im.bad_line, 2);
	ck_assert_int_eq(im.created, 0);
	/* The default max_uses of a pool must be 1 too. */
	fp = csv("EEEE\n");
	memset(&im, 0, sizeof(im));
	im.campaign = "pool";
	im.max_uses = 2;
	ck_assert_int_eq(codes_import(&fx.svc, fp, &im), ERROR_BAD_REQUEST);
	rewind(fp);
	im.max_uses = 0;
	ck_assert_int_eq(codes_import(&fx.svc, fp, &im), ERROR_BAD_REQUEST);
	rewind(fp);
	im.max_uses = 1;
	im.campaign = "nope";
	ck_assert_int_eq(codes_import(&fx.svc, fp, &im), ERROR_NOT_FOUND);
	fclose(fp);
	ck_assert_int_eq(import_text("nope", "AAAA\n", &im), ERROR_NOT_FOUND);
}
END_TEST

/* The stream is read twice; a pipe cannot be, and nothing is written. */
START_TEST(test_codes_import_pipe_refused)
{
	struct codes_import im;
	struct coll got = {0};
	int fds[2];
	FILE *fp;

	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(write(fds[1], "AAAA\nBBBB\n", 10), 10);
	close(fds[1]);
	fp = fdopen(fds[0], "r");
	ck_assert_ptr_nonnull(fp);
	memset(&im, 0, sizeof(im));
	im.campaign = "promo";
	im.max_uses = 1;
	ck_assert_int_eq(codes_import(&fx.svc, fp, &im), ERROR_BAD_REQUEST);
	ck_assert_str_ne(im.bad_reason, "");
	ck_assert_int_eq(im.created, 0);
	fclose(fp);
	ck_assert_uint_eq(export("promo", CODES_ALL, &got), 0);
	coll_free(&got);
}
END_TEST

/*
 * Imported codes that fail the check character are still redeemable:
 * tenants.unchecked_codes tells redemption to look them up. SUMMER2026
 * is outside the alphabet (the check does not apply); ABCDEFGH is inside
 * it and fails the check.
 */
START_TEST(test_codes_import_unchecked_redeemable)
{
	struct codes_import im;
	struct svc early, fresh;
	struct redeem_result res;
	char gen[1][96], typo[96];

	ck_assert_int_eq(codetext_in_alphabet("ABCDEFGH"), 1);
	ck_assert_int_eq(codetext_check_ok("ABCDEFGH"), 0);
	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 1, 5, gen);
	ck_assert_int_eq(svc_open(&early, fx.db, "default"), ERROR_NONE);
	ck_assert_int_eq(early.unchecked_codes, 0);

	ck_assert_int_eq(import_text("promo",
			     "code,max_uses\nSUMMER2026,5\nABCDEFGH,5\n", &im),
	    ERROR_NONE);
	ck_assert_int_eq(im.created, 2);
	ck_assert_int_eq(fx.svc.unchecked_codes, 1);
	redeem_ok(&fx.svc, "summer-2026", "a@x");
	redeem_ok(&fx.svc, "abcd-efgh", "a@x");

	/* A fresh svc reads the count from the tenant row. */
	ck_assert_int_eq(svc_open(&fresh, fx.db, "default"), ERROR_NONE);
	ck_assert_int_eq(fresh.unchecked_codes, 1);
	redeem_ok(&fresh, "ABCDEFGH", "b@x");
	redeem_ok(&fresh, "SUMMER2026", "b@x");
	/* One opened before the import learns it by svc_refresh. */
	ck_assert_int_eq(svc_refresh(&early), ERROR_NONE);
	ck_assert_int_eq(early.unchecked_codes, 1);
	redeem_ok(&early, "abcdefgh", "c@x");

	/* Generated codes still redeem, and their typos still fail. */
	redeem_ok(&fresh, gen[0], "a@x");
	snprintf(typo, sizeof(typo), "%s", gen[0]);
	typo[0] = typo[0] == 'Z' ? 'Y' : 'Z';
	ck_assert_int_eq(redeem_code(&fresh, typo, "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_INVALID);
	/* A second import adds to the count. */
	ck_assert_int_eq(import_text("promo", "JKMNPQRS\n", &im), ERROR_NONE);
	ck_assert_int_eq(
	    fx.svc.unchecked_codes, 1 + !codetext_check_ok("JKMNPQRS"));
	fx_verify_clean();
}
END_TEST

START_TEST(test_codes_import_expired_code)
{
	struct codes_import im;
	struct redeem_result res;

	fx_campaign("promo", 0, 0, 0);
	ck_assert_int_eq(
	    import_text("promo",
		"OLD2222,1,1000\nOLDER3333,1,1970-01-02T00:00:00Z\n", &im),
	    ERROR_NONE);
	ck_assert_int_eq(redeem_code(&fx.svc, "OLD2222", "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_EXPIRED);
	ck_assert_int_eq(
	    redeem_code(&fx.svc, "OLDER3333", "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_EXPIRED);
	fx_verify_clean();
}
END_TEST

/* Imports are written GEN_CHUNK (10000) rows per transaction. */
START_TEST(test_codes_import_crosses_chunk)
{
	enum { N = 10050 };
	struct codes_import im;
	struct progress p = {0};
	struct coll got = {0};
	FILE *fp = tmpfile();
	int i;

	fx_campaign("promo", 0, 0, 0);
	ck_assert_ptr_nonnull(fp);
	fputs("code,max_uses\n", fp);
	for (i = 0; i < N; i++)
		fprintf(fp, "IMP%06d,2\n", i);
	rewind(fp);
	memset(&im, 0, sizeof(im));
	im.campaign = "promo";
	im.max_uses = 1;
	im.progress = on_progress;
	im.arg = &p;
	ck_assert_int_eq(codes_import(&fx.svc, fp, &im), ERROR_NONE);
	fclose(fp);
	ck_assert_int_eq(im.created, N);
	ck_assert_int_eq(im.duplicates, 0);
	ck_assert_int_eq(p.calls, 2);
	ck_assert_int_eq(p.done[0], 10000);
	ck_assert_int_eq(p.done[1], N);
	ck_assert_int_eq(p.total, N);
	ck_assert_uint_eq(export("promo", CODES_ALL, &got), N);
	ck_assert_str_eq(got.v[0].code, "IMP000000");
	ck_assert_str_eq(got.v[N - 1].code, "IMP010049");
	ck_assert_int_eq(got.v[N - 1].max_uses, 2);
	coll_free(&got);
}
END_TEST

START_TEST(test_codes_export_filters)
{
	char codes[5][96];
	struct coll got = {0};
	struct code_info ci;

	fx_campaign("promo", 0, 0, 0);
	fx_campaign("other", 0, 0, 0);
	fx_codes("promo", 5, 2, codes);
	fx_codes("other", 2, 1, NULL);
	redeem_ok(&fx.svc, codes[0], "a@x");
	redeem_ok(&fx.svc, codes[1], "a@x");
	redeem_ok(&fx.svc, codes[1], "b@x");

	ck_assert_uint_eq(export("promo", CODES_ALL, &got), 5);
	ck_assert_int_eq(got.ordered, 1);
	ck_assert_uint_eq(export("promo", CODES_USED, &got), 2);
	ck_assert_str_eq(got.v[0].code, codes[0]);
	ck_assert_int_eq(got.v[0].uses, 1);
	ck_assert_str_eq(got.v[0].state, "active");
	ck_assert_str_eq(got.v[1].code, codes[1]);
	ck_assert_int_eq(got.v[1].uses, 2);
	ck_assert_str_eq(got.v[1].state, "exhausted");
	ck_assert_uint_eq(export("promo", CODES_UNUSED, &got), 3);
	ck_assert_str_eq(got.v[0].code, codes[2]);
	ck_assert_int_eq(got.v[0].uses, 0);
	/* Every campaign of the tenant. */
	ck_assert_uint_eq(export(NULL, CODES_ALL, &got), 7);
	ck_assert_int_eq(got.ordered, 1);
	ck_assert_uint_eq(export(NULL, CODES_USED, &got), 2);
	ck_assert_uint_eq(export(NULL, CODES_UNUSED, &got), 5);
	ck_assert_uint_eq(export("other", CODES_USED, &got), 0);
	/* A revoked code with uses still counts as used. */
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_uint_eq(export("promo", CODES_USED, &got), 2);
	ck_assert_int_eq(
	    codes_export(&fx.svc, "nope", CODES_ALL, on_export, &got),
	    ERROR_NOT_FOUND);
	coll_free(&got);
}
END_TEST

START_TEST(test_codes_export_other_tenant)
{
	struct svc other;
	struct coll got = {0};

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 3, 1, NULL);
	ck_assert_int_eq(tenant_create(fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "acme"), ERROR_NONE);
	got.ordered = 1;
	ck_assert_int_eq(
	    codes_export(&other, NULL, CODES_ALL, on_export, &got), ERROR_NONE);
	ck_assert_uint_eq(got.n, 0);
	ck_assert_int_eq(
	    codes_export(&other, "promo", CODES_ALL, on_export, &got),
	    ERROR_NOT_FOUND);
	coll_free(&got);
}
END_TEST

START_TEST(test_codes_filter_parse)
{
	enum codes_filter f;

	ck_assert_int_eq(codes_filter_parse("all", &f), 0);
	ck_assert_int_eq(f, CODES_ALL);
	ck_assert_int_eq(codes_filter_parse("used", &f), 0);
	ck_assert_int_eq(f, CODES_USED);
	ck_assert_int_eq(codes_filter_parse("unused", &f), 0);
	ck_assert_int_eq(f, CODES_UNUSED);
	ck_assert_int_eq(codes_filter_parse("", &f), -1);
	ck_assert_int_eq(codes_filter_parse("USED", &f), -1);
	ck_assert_int_eq(codes_filter_parse("used ", &f), -1);
}
END_TEST

START_TEST(test_codes_get_any_spelling)
{
	char codes[1][96], norm[CODE_MAX + 1], lower[96];
	char spaced[2 * CODE_MAX + 1], tabbed[2 * CODE_MAX + 1], dashed[104];
	const char *spellings[] = {
	    codes[0], lower, norm, spaced, tabbed, dashed};
	struct code_info ci;
	size_t i;

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 1, 3, codes);
	ck_assert_int_eq(codetext_normalize(codes[0], norm), CODETEXT_OK);
	for (i = 0; codes[0][i] != '\0'; i++)
		lower[i] = codes[0][i] >= 'A' && codes[0][i] <= 'Z'
			       ? (char)(codes[0][i] - 'A' + 'a')
			       : codes[0][i];
	lower[i] = '\0';
	for (i = 0; norm[i] != '\0'; i++) {
		spaced[2 * i] = tabbed[2 * i] = norm[i];
		spaced[2 * i + 1] = ' ';
		tabbed[2 * i + 1] = '\t';
	}
	spaced[2 * i] = tabbed[2 * i] = '\0';
	snprintf(dashed, sizeof(dashed), "--%s--", lower);
	for (i = 0; i < NELEM(spellings); i++) {
		memset(&ci, 0, sizeof(ci));
		ck_assert_msg(
		    code_get(&fx.svc, spellings[i], &ci) == ERROR_NONE,
		    "spelling \"%s\" not found", spellings[i]);
		ck_assert_str_eq(ci.code, codes[0]);
		ck_assert_str_eq(ci.campaign, "promo");
		ck_assert_str_eq(ci.state, "active");
		ck_assert_int_eq(ci.uses, 0);
		ck_assert_int_eq(ci.max_uses, 3);
		ck_assert_int_gt(ci.id, 0);
	}
}
END_TEST

START_TEST(test_codes_get_unknown)
{
	static const char *const bad[] = {
	    "", " ", "-", "!!!", "ZZZZ-ZZZZ", "\xff", "AB\nCD", "caf\xc3\xa9"};
	char overlong[300];
	struct code_info ci;
	size_t i;

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 3, 1, NULL);
	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(code_get(&fx.svc, bad[i], &ci) == ERROR_NOT_FOUND,
		    "bad[%zu] found", i);
	memset(overlong, 'A', sizeof(overlong) - 1);
	overlong[sizeof(overlong) - 1] = '\0';
	ck_assert_int_eq(code_get(&fx.svc, overlong, &ci), ERROR_NOT_FOUND);
	ck_assert_int_eq(code_get(&fx.svc, NULL, &ci), ERROR_NOT_FOUND);
}
END_TEST

START_TEST(test_codes_revoke)
{
	char codes[2][96];
	struct code_info ci;
	struct redeem_result res;
	struct svc other;

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 2, 1, codes);
	/* Revoke an active code, with another spelling. */
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "revoked");
	ck_assert_int_eq(code_get(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "revoked");
	/* Idempotent. */
	ck_assert_int_eq(code_revoke(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "revoked");
	ck_assert_int_eq(redeem_code(&fx.svc, codes[0], "a@x", NULL, &res), 0);
	ck_assert_int_eq(res.error, ERROR_REVOKED);
	/* A redeemed code can be revoked too; its redemption stays. */
	redeem_ok(&fx.svc, codes[1], "a@x");
	ck_assert_int_eq(code_get(&fx.svc, codes[1], &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "redeemed");
	ck_assert_int_eq(code_revoke(&fx.svc, codes[1], &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "revoked");
	ck_assert_int_eq(ci.uses, 1);
	/* Unknown and garbage. */
	ck_assert_int_eq(
	    code_revoke(&fx.svc, "ZZZZ-ZZZZ", &ci), ERROR_NOT_FOUND);
	ck_assert_int_eq(code_revoke(&fx.svc, "", &ci), ERROR_NOT_FOUND);
	ck_assert_int_eq(code_revoke(&fx.svc, NULL, &ci), ERROR_NOT_FOUND);
	fx_verify_clean();

	/* Another tenant cannot revoke ours. */
	fx_codes("promo", 1, 1, codes);
	ck_assert_int_eq(tenant_create(fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(svc_open(&other, fx.db, "acme"), ERROR_NONE);
	ck_assert_int_eq(code_revoke(&other, codes[0], &ci), ERROR_NOT_FOUND);
	ck_assert_int_eq(code_get(&fx.svc, codes[0], &ci), ERROR_NONE);
	ck_assert_str_eq(ci.state, "active");
}
END_TEST

START_TEST(test_codes_info_json)
{
	char codes[1][96];
	struct code_info ci;
	json_t *o;

	fx_campaign("promo", 0, 0, 0);
	fx_codes("promo", 1, 4, codes);
	ck_assert_int_eq(code_get(&fx.svc, codes[0], &ci), ERROR_NONE);
	o = code_info_json(&ci);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "code")), codes[0]);
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "campaign")), "promo");
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "state")), "active");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "uses")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "max_uses")), 4);
	ck_assert(json_is_null(json_object_get(o, "expires_at")));
	json_decref(o);
}
END_TEST

/*
 * Collision-safe generation: 150,000 codes of the shortest length (5
 * random characters and the check: 31^5, about 28.6 million bodies) must
 * meet about 390 collisions, each drawn again; all are created and unique.
 */
START_TEST(test_codes_generate_collisions)
{
	struct codes_gen g;
	struct coll got = {0};
	int64_t created;

	fx_campaign("tight", 0, 0, 0);
	memset(&g, 0, sizeof(g));
	g.campaign = "tight";
	g.count = 150000;
	g.max_uses = 1;
	g.length = CODE_LENGTH_MIN;
	ck_assert_int_eq(codes_generate(&fx.svc, &g, &created), ERROR_NONE);
	ck_assert_int_eq(created, 150000);
	ck_assert_uint_eq(export(NULL, CODES_ALL, &got), 150000);
	ck_assert_int_eq(got.ordered, 1); /* by code, strictly: all distinct */
	coll_free(&got);
}
END_TEST

Suite *
suite_codes(void)
{
	Suite *s = suite_create("codes");
	TCase *tc = tcase_create("codes");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_codes_generate_collisions);
	tcase_add_test(tc, test_codes_generate_counts);
	tcase_add_test(tc, test_codes_generate_unique_checked);
	tcase_add_test(tc, test_codes_generate_prefix_length);
	tcase_add_test(tc, test_codes_generate_pool_single_use);
	tcase_add_test(tc, test_codes_generate_bad_inputs);
	tcase_add_test(tc, test_codes_generate_unknown_campaign);
	tcase_add_test(tc, test_codes_generate_crosses_chunk);
	tcase_add_test(tc, test_codes_generate_no_check_redeemable);
	tcase_add_test(tc, test_codes_import_basic);
	tcase_add_test(tc, test_codes_import_defaults_and_no_header);
	tcase_add_test(tc, test_codes_import_duplicates);
	tcase_add_test(tc, test_codes_import_bad_line_imports_nothing);
	tcase_add_test(tc, test_codes_import_pool_and_bad_args);
	tcase_add_test(tc, test_codes_import_pipe_refused);
	tcase_add_test(tc, test_codes_import_unchecked_redeemable);
	tcase_add_test(tc, test_codes_import_expired_code);
	tcase_add_test(tc, test_codes_import_crosses_chunk);
	tcase_add_test(tc, test_codes_export_filters);
	tcase_add_test(tc, test_codes_export_other_tenant);
	tcase_add_test(tc, test_codes_filter_parse);
	tcase_add_test(tc, test_codes_get_any_spelling);
	tcase_add_test(tc, test_codes_get_unknown);
	tcase_add_test(tc, test_codes_revoke);
	tcase_add_test(tc, test_codes_info_json);
	suite_add_tcase(s, tc);
	return s;
}
