/*
 * redeemctl: the operator's tool. A thin face on the service layer: it
 * parses arguments, calls core, prints. Exit status: 0 done, 1 the
 * operation failed (the error word says why), 2 bad usage, 3 the database
 * could not be reached.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../lib/common.h"
#include "../lib/str.h"
#include "../db/db.h"
#include "../db/migrate.h"
#include "../core/account.h"
#include "../core/admin.h"
#include "../core/apikey.h"
#include "../core/audit.h"
#include "../core/campaigns.h"
#include "../core/codes.h"
#include "../core/redeem.h"
#include "../core/seats.h"
#include "../core/svc.h"
#include "../core/sweep.h"
#include "../core/verify.h"
#include "opts.h"
#include "progress.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_DB 3

#define TENANT_OPT                                                             \
	{                                                                      \
		"tenant", "T", "the tenant (default \"default\")", NULL        \
	}
#define MAXPOS 4

struct verb {
	struct cmd cmd;
	int (*run)(struct cmd *, const char **pos, int npos);
};

static struct db *the_db;
static struct svc the_svc;

static const char *
dsn(void)
{
	const char *d = getenv("REDEEM_DB");

	return d && *d ? d : "sqlite:var/redeem.db";
}

static struct db *
open_db(void)
{
	char e[512];

	if (the_db == NULL && (the_db = db_open(dsn(), e, sizeof(e))) == NULL) {
		fprintf(stderr, "redeemctl: unavailable: %s\n", e);
		exit(EXIT_DB);
	}
	return the_db;
}

static int
fail(const char *verb, enum error_word e, const char *detail)
{
	fprintf(stderr, "redeemctl %s: %s: %s\n", verb, error_name(e),
	    detail ? detail : error_sentence(e));
	return e == ERROR_UNAVAILABLE ? EXIT_DB : EXIT_FAILED;
}

/* The tenant's service, opened on first use: after the arguments are
 * checked, so a usage error is reported as one whatever the database. */
static struct svc *
tsvc(struct cmd *c)
{
	static int opened;
	const char *tenant = opts_get(c, "tenant");
	enum error_word e;

	if (opened)
		return &the_svc;
	e = svc_open(&the_svc, open_db(), tenant ? tenant : "default");
	if (e != ERROR_NONE) {
		int rc = fail(c->verb, e,
		    e == ERROR_NOT_FOUND
			? "no such tenant (is the database migrated? run "
			  "redeemctl migrate)"
			: db_errmsg(the_db));

		db_close(the_db);
		exit(rc);
	}
	opened = 1;
	return &the_svc;
}

static void
print_json(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	if (s != NULL) {
		puts(s);
		free(s);
	}
	json_decref(o);
}

/* An integer option in [min, max]; def when absent; exits on garbage. */
static int64_t
opt_i64(struct cmd *c, const char *name, int64_t def, int64_t min, int64_t max)
{
	const char *v = opts_get(c, name);
	int64_t n;

	if (v == NULL)
		return def;
	if (str_to_i64(v, min, max, &n) == -1) {
		fprintf(stderr,
		    "redeemctl %s: --%s wants a whole number from %lld to "
		    "%lld, not \"%s\"\n",
		    c->verb, name, (long long)min, (long long)max, v);
		exit(EXIT_USAGE);
	}
	return n;
}

static int64_t
opt_time(struct cmd *c, const char *name)
{
	const char *v = opts_get(c, name);
	int64_t t;

	if (v == NULL)
		return 0;
	if (str_parse_time(v, &t) == -1) {
		fprintf(stderr,
		    "redeemctl %s: --%s wants an RFC 3339 time "
		    "(2026-11-22T10:00:00Z) or Unix seconds, not \"%s\"\n",
		    c->verb, name, v);
		exit(EXIT_USAGE);
	}
	return t;
}

static const char *
opt_req(struct cmd *c, const char *name)
{
	const char *v = opts_get(c, name);

	if (v == NULL || *v == '\0') {
		fprintf(stderr, "redeemctl %s: --%s is required\n\n", c->verb,
		    name);
		opts_usage(c, 1);
		exit(EXIT_USAGE);
	}
	return v;
}

static void
on_migration(void *arg, const struct migration *m, int applied)
{
	int *n = arg;

	if (applied) {
		printf("applied %03d_%s\n", m->version, m->name);
		(*n)++;
	}
}

static int
v_migrate(struct cmd *c, const char **pos, int npos)
{
	int n = 0;

	(void)pos;
	(void)npos;
	if (migrate_run(open_db(), on_migration, &n) == -1)
		return fail(c->verb, ERROR_UNAVAILABLE, db_errmsg(the_db));
	if (n == 0)
		printf(
		    "schema is up to date (%u migrations)\n", migrations_count);
	return 0;
}

static int
v_tenant_create(struct cmd *c, const char **pos, int npos)
{
	enum error_word e;

	(void)npos;
	if ((e = tenant_create(open_db(), pos[0])) != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_CONFLICT ? "that tenant exists already"
		    : e == ERROR_BAD_REQUEST
			? "a tenant name is 1-64 of A-Z a-z 0-9 . _ -"
			: NULL);
	printf("created tenant %s\n", pos[0]);
	return 0;
}

static int
v_campaign_create(struct cmd *c, const char **pos, int npos)
{
	struct campaign k;
	enum error_word e;
	const char *kind = opts_get(c, "kind");

	(void)pos;
	(void)npos;
	memset(&k, 0, sizeof(k));
	if (str_copy(k.name, opt_req(c, "name"), sizeof(k.name)) == -1 ||
	    !campaign_name_ok(k.name))
		return fail(c->verb, ERROR_BAD_REQUEST,
		    "a campaign name is 1-64 of A-Z a-z 0-9 . _ -");
	if (kind != NULL && campaign_kind_parse(kind, &k.kind) == -1)
		return fail(
		    c->verb, ERROR_BAD_REQUEST, "--kind is shared or pool");
	k.budget = opt_i64(c, "budget", 0, 1, INT64_C(1000000000000));
	k.per_account_limit =
	    opt_i64(c, "per-account-limit", 0, 1, INT64_C(1000000000));
	k.starts_at = opt_time(c, "starts");
	k.ends_at = opt_time(c, "ends");
	if (k.starts_at > 0 && k.ends_at > 0 && k.ends_at <= k.starts_at)
		return fail(c->verb, ERROR_BAD_REQUEST,
		    "--ends must come after --starts");
	if ((e = campaign_create(tsvc(c), &k)) != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_CONFLICT ? "a campaign of that name exists"
					: NULL);
	print_json(
	    json_pack("{s:b,s:o}", "ok", 1, "campaign", campaign_json(&k)));
	return 0;
}

static int
v_campaign_close(struct cmd *c, const char **pos, int npos)
{
	struct campaign k;
	enum error_word e;
	const char *name = npos > 0 ? pos[0] : opt_req(c, "name");

	if ((e = campaign_close(tsvc(c), name, &k)) != ERROR_NONE)
		return fail(c->verb, e, NULL);
	print_json(
	    json_pack("{s:b,s:o}", "ok", 1, "campaign", campaign_json(&k)));
	return 0;
}

static void
list_campaign(void *arg, const struct campaign *k)
{
	char budget[32] = "-", limit[32] = "-", ends[32] = "-";

	(void)arg;
	if (k->budget > 0)
		snprintf(budget, sizeof(budget), "%lld/%lld",
		    (long long)k->redeemed, (long long)k->budget);
	if (k->per_account_limit > 0)
		snprintf(limit, sizeof(limit), "%lld",
		    (long long)k->per_account_limit);
	if (k->ends_at > 0)
		str_rfc3339(k->ends_at, ends);
	printf("%-24s %-6s %-6s %10lld %10lld %-14s %-6s %s\n", k->name,
	    campaign_kind_name(k->kind), k->closed ? "closed" : "open",
	    (long long)k->codes, (long long)k->uses, budget, limit, ends);
}

static int
v_campaign_list(struct cmd *c, const char **pos, int npos)
{
	enum error_word e;

	(void)pos;
	(void)npos;
	printf("%-24s %-6s %-6s %10s %10s %-14s %-6s %s\n", "NAME", "KIND",
	    "STATE", "CODES", "USES", "BUDGET", "LIMIT", "ENDS");
	if ((e = campaign_list(tsvc(c), list_campaign, NULL)) != ERROR_NONE)
		return fail(c->verb, e, NULL);
	return 0;
}

struct gen_out {
	struct progress p;
};

static void
gen_emit(void *arg, const char *display)
{
	(void)arg;
	puts(display);
}

static void
gen_progress(void *arg, int64_t done, int64_t total)
{
	struct gen_out *g = arg;

	fflush(stdout);
	progress_update(&g->p, done, total);
}

static int
v_codes_generate(struct cmd *c, const char **pos, int npos)
{
	struct codes_gen g;
	struct gen_out out;
	enum error_word e;
	int64_t created;

	(void)pos;
	(void)npos;
	memset(&g, 0, sizeof(g));
	g.campaign = opt_req(c, "campaign");
	g.count = opt_i64(c, "count", -1, 1, CODES_MAX_PER_CALL);
	g.max_uses = opt_i64(c, "max-uses", -1, 1, INT64_C(1000000000));
	if (g.count < 0 || g.max_uses < 0) {
		opt_req(c, g.count < 0 ? "count" : "max-uses");
	}
	g.expires_at = opt_time(c, "expires");
	g.length = (int)opt_i64(
	    c, "length", CODE_LENGTH_DEFAULT, CODE_LENGTH_MIN, CODE_LENGTH_MAX);
	g.prefix = opts_get(c, "prefix");
	g.no_check = opts_get(c, "no-check") != NULL;
	g.shards = (int)opt_i64(c, "shards", 0, 1, SEATS_SHARDS_MAX);
	g.emit = gen_emit;
	g.progress = gen_progress;
	g.arg = &out;
	progress_init(&out.p, "generating");
	e = codes_generate(tsvc(c), &g, &created);
	fflush(stdout);
	progress_done(&out.p);
	if (e != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_BAD_REQUEST
			? "check --prefix (letters and digits of the code "
			  "alphabet, 16 at most) and, for a pool, --max-uses 1"
		    : e == ERROR_NOT_FOUND ? "no campaign of that name"
					   : NULL);
	if (out.p.tty)
		fprintf(stderr, "generated %lld codes in %.1f s\n",
		    (long long)created, progress_now() - out.p.start);
	return 0;
}

static void
import_progress(void *arg, int64_t done, int64_t total)
{
	progress_update(arg, done, total);
}

static int
v_codes_import(struct cmd *c, const char **pos, int npos)
{
	struct codes_import im;
	struct progress p;
	enum error_word e;
	FILE *fp;

	(void)npos;
	memset(&im, 0, sizeof(im));
	im.campaign = opt_req(c, "campaign");
	im.max_uses = opt_i64(c, "max-uses", 1, 1, INT64_C(1000000000));
	im.expires_at = opt_time(c, "expires");
	if ((fp = fopen(pos[0], "r")) == NULL) {
		fprintf(stderr, "redeemctl %s: cannot open %s: %m\n", c->verb,
		    pos[0]);
		return EXIT_FAILED;
	}
	progress_init(&p, "importing");
	im.progress = import_progress;
	im.arg = &p;
	e = codes_import(tsvc(c), fp, &im);
	progress_done(&p);
	fclose(fp);
	if (e == ERROR_BAD_REQUEST && im.bad_line > 0) {
		fprintf(stderr,
		    "redeemctl %s: bad_request: %s line %lld: %s; nothing "
		    "imported\n",
		    c->verb, pos[0], (long long)im.bad_line, im.bad_reason);
		return EXIT_FAILED;
	}
	if (e != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_BAD_REQUEST
			? (im.bad_reason[0] ? im.bad_reason
					    : "a pool's codes are single-use")
			: NULL);
	fprintf(stderr, "imported %lld codes, %lld already there\n",
	    (long long)im.created, (long long)im.duplicates);
	return 0;
}

static void
export_row(void *arg, const struct code_info *ci)
{
	char exp[32] = "";

	(void)arg;
	if (ci->expires_at > 0)
		str_rfc3339(ci->expires_at, exp);
	printf("%s,%s,%s,%lld,%lld,%s\n", ci->code, ci->campaign, ci->state,
	    (long long)ci->uses, (long long)ci->max_uses, exp);
}

static int
v_codes_export(struct cmd *c, const char **pos, int npos)
{
	enum codes_filter f = CODES_ALL;
	const char *sel = opts_get(c, "select");
	enum error_word e;

	(void)pos;
	(void)npos;
	if (sel != NULL && codes_filter_parse(sel, &f) == -1) {
		fprintf(stderr,
		    "redeemctl %s: --select is used, unused or all\n", c->verb);
		return EXIT_USAGE;
	}
	printf("code,campaign,state,uses,max_uses,expires_at\n");
	e = codes_export(tsvc(c), opts_get(c, "campaign"), f, export_row, NULL);
	if (e != ERROR_NONE)
		return fail(c->verb, e, NULL);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILED;
}

static int
print_code(struct cmd *c, enum error_word e, const struct code_info *ci)
{
	if (e != ERROR_NONE)
		return fail(c->verb, e, NULL);
	print_json(json_pack("{s:b,s:o}", "ok", 1, "code", code_info_json(ci)));
	return 0;
}

static int
v_codes_show(struct cmd *c, const char **pos, int npos)
{
	struct code_info ci;

	(void)npos;
	return print_code(c, code_get(tsvc(c), pos[0], &ci), &ci);
}

static int
v_revoke(struct cmd *c, const char **pos, int npos)
{
	struct code_info ci;

	(void)npos;
	return print_code(c, code_revoke(tsvc(c), pos[0], &ci), &ci);
}

static int
print_result(const struct redeem_result *r, const char *pool_code)
{
	print_json(redeem_result_json(r, pool_code));
	if (r->error == ERROR_UNAVAILABLE)
		return EXIT_DB;
	return r->error == ERROR_NONE ? 0 : EXIT_FAILED;
}

static int
v_redeem(struct cmd *c, const char **pos, int npos)
{
	struct redeem_result r;

	(void)npos;
	redeem_code(tsvc(c), pos[0], pos[1], opts_get(c, "client-ip"), &r);
	return print_result(&r, NULL);
}

static int
v_pool_claim(struct cmd *c, const char **pos, int npos)
{
	struct redeem_result r;

	(void)npos;
	redeem_pool_claim(
	    tsvc(c), pos[0], pos[1], opts_get(c, "client-ip"), &r);
	return print_result(&r, r.error == ERROR_NONE ? r.r.code : NULL);
}

static int
v_reverse(struct cmd *c, const char **pos, int npos)
{
	enum reversal_policy policy;
	struct redeem_result r;
	int64_t id;

	(void)npos;
	if (str_to_i64(pos[0], 1, INT64_MAX, &id) == -1) {
		fprintf(stderr,
		    "redeemctl %s: ID is a redemption id, a "
		    "positive number\n",
		    c->verb);
		return EXIT_USAGE;
	}
	if (reversal_policy_parse(opt_req(c, "policy"), &policy) == -1) {
		fprintf(stderr,
		    "redeemctl %s: --policy is return_seat or "
		    "keep_seat\n",
		    c->verb);
		return EXIT_USAGE;
	}
	redeem_reverse(tsvc(c), id, opt_req(c, "reason"), policy, &r);
	if (r.error != ERROR_NONE)
		return print_result(&r, NULL);
	print_json(json_pack(
	    "{s:b,s:o}", "ok", 1, "redemption", redemption_json(&r.r)));
	return 0;
}

static void
verify_line(void *arg, enum verify_check chk, const char *line)
{
	(void)arg;
	printf("VIOLATION %s: %s\n", verify_check_name(chk), line);
}

static int
v_verify(struct cmd *c, const char **pos, int npos)
{
	struct verify_report rep;
	int i;

	(void)pos;
	(void)npos;
	if (verify_run(open_db(), &rep, verify_line, NULL) == -1)
		return fail(c->verb, ERROR_UNAVAILABLE, db_errmsg(the_db));
	if (rep.total == 0) {
		printf("verify: ok: G1 safety (split counter rows too), G2 "
		       "conservation (with live holds), G3 idempotency, G4 "
		       "budget and per-account limits, G5 semaphore capacity, "
		       "G6 fencing tokens, G7 one event per redemption, G8 "
		       "state all hold\n");
		return 0;
	}
	for (i = 0; i < VERIFY__MAX; i++)
		if (rep.violations[i] > 0)
			printf("verify: %s: %lld violation(s)\n",
			    verify_check_name((enum verify_check)i),
			    (long long)rep.violations[i]);
	return EXIT_FAILED;
}

/* sweep --once [JOB]: every job (or the one named) now, whatever its
 * interval; a job whose lease another sweeper holds is skipped, saying
 * so. */
static int
v_sweep(struct cmd *c, const char **pos, int npos)
{
	struct sweep_report r;
	enum sweep_job j, only = SWEEP__MAX;
	enum error_word e;
	char holder[128];
	int failed = 0;

	if (opts_get(c, "once") == NULL) {
		fprintf(stderr, "redeemctl sweep: say --once (the sweeper "
				"process that runs on a schedule is "
				"build/redeem-sweep)\n");
		opts_usage(c, 1);
		return EXIT_USAGE;
	}
	if (npos == 1 && sweep_job_parse(pos[0], &only) == -1) {
		fprintf(stderr,
		    "redeemctl sweep: no job \"%s\"; the jobs are expire, "
		    "release_leaked, staleness, deliver, cleanup\n",
		    pos[0]);
		return EXIT_USAGE;
	}
	sweep_holder(holder, sizeof(holder));
	for (j = 0; j < SWEEP__MAX; j++) {
		if (only != SWEEP__MAX && j != only)
			continue;
		e = sweep_run(open_db(), j, holder, &r);
		if (e != ERROR_NONE) {
			failed = 1;
			fprintf(stderr, "redeemctl sweep: %s: %s: %s\n",
			    sweep_job_name(j), error_name(e),
			    db_errmsg(the_db));
		} else if (r.skipped)
			printf("%-15s skipped: another sweeper holds its "
			       "lease\n",
			    sweep_job_name(j));
		else
			printf("%-15s %lld done in %lld batch(es)\n",
			    sweep_job_name(j), (long long)r.done,
			    (long long)r.batches);
	}
	return failed ? EXIT_DB : 0;
}

static void
print_apikey(void *arg, const struct apikey *k)
{
	char created[32], revoked[32] = "-";

	(void)arg;
	str_rfc3339(k->created_at, created);
	if (k->revoked_at > 0)
		str_rfc3339(k->revoked_at, revoked);
	printf("%-6lld rdm_%-8s %-6s %-20s %-20s %s\n", (long long)k->id,
	    k->lookup, apikey_scope_name(k->scope), created, revoked, k->label);
}

static int
v_apikey_create(struct cmd *c, const char **pos, int npos)
{
	char text[APIKEY_TEXT_MAX];
	enum apikey_scope scope;
	const char *label = opts_get(c, "label");
	enum error_word e;

	(void)pos;
	(void)npos;
	if (apikey_scope_parse(opt_req(c, "scope"), &scope) == -1) {
		fprintf(stderr, "redeemctl %s: --scope is redeem or admin\n",
		    c->verb);
		return EXIT_USAGE;
	}
	if (label != NULL && strlen(label) > APIKEY_LABEL_MAX)
		return fail(
		    c->verb, ERROR_BAD_REQUEST, "a label is 100 bytes at most");
	e = apikey_create(tsvc(c), scope, label, text, NULL);
	if (e != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_BAD_REQUEST ? "a label is UTF-8 text" : NULL);
	/* The key alone, once: it is stored only as a hash. */
	puts(text);
	explicit_bzero(text, sizeof(text));
	return fflush(stdout) == 0 ? 0 : EXIT_FAILED;
}

static int
v_apikey_list(struct cmd *c, const char **pos, int npos)
{
	enum error_word e;

	(void)pos;
	(void)npos;
	printf("%-6s %-12s %-6s %-20s %-20s %s\n", "ID", "LOOKUP", "SCOPE",
	    "CREATED", "REVOKED", "LABEL");
	if ((e = apikey_list(tsvc(c), print_apikey, NULL)) != ERROR_NONE)
		return fail(c->verb, e, NULL);
	return 0;
}

static int
v_apikey_revoke(struct cmd *c, const char **pos, int npos)
{
	enum error_word e;
	int64_t id;

	(void)npos;
	if (str_to_i64(pos[0], 1, INT64_MAX, &id) == -1) {
		fprintf(stderr,
		    "redeemctl %s: ID is a key's id (see apikey list), a "
		    "positive number\n",
		    c->verb);
		return EXIT_USAGE;
	}
	if ((e = apikey_revoke(tsvc(c), id)) != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_NOT_FOUND ? "no key of that id in the tenant"
					 : NULL);
	printf("revoked key %lld\n", (long long)id);
	return 0;
}

/* One line of standard input without its line end; -1 when there is
 * none or it is longer than ADMIN_PASSWORD_MAX. */
static int
read_password(char *buf, size_t size)
{
	size_t n;

	if (fgets(buf, (int)size, stdin) == NULL)
		return -1;
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	else if (n == size - 1) {
		/* no line end within the buffer: overlong, unless at EOF */
		if (getchar() != EOF)
			return -1;
	}
	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = '\0';
	return 0;
}

static int
v_admin_create(struct cmd *c, const char **pos, int npos)
{
	char pw[ADMIN_PASSWORD_MAX + 2], gen[ADMIN_PASSWORD_GEN + 1];
	const char *email = opt_req(c, "email"), *role_s = opts_get(c, "role");
	enum admin_role role = ADMIN_ADMIN;
	int from_stdin = opts_get(c, "password-stdin") != NULL;
	struct admin a;
	enum error_word e;

	(void)pos;
	(void)npos;
	if (role_s != NULL && admin_role_parse(role_s, &role) == -1) {
		fprintf(stderr,
		    "redeemctl %s: --role is owner, admin or viewer\n",
		    c->verb);
		return EXIT_USAGE;
	}
	if (from_stdin && read_password(pw, sizeof(pw)) == -1) {
		explicit_bzero(pw, sizeof(pw));
		return fail(c->verb, ERROR_BAD_REQUEST,
		    "no password on standard input, or one longer than 256 "
		    "bytes");
	}
	e = admin_create(tsvc(c), email, role, from_stdin ? pw : NULL, gen, &a);
	explicit_bzero(pw, sizeof(pw));
	if (e != ERROR_NONE) {
		explicit_bzero(gen, sizeof(gen));
		return fail(c->verb, e,
		    e == ERROR_CONFLICT ? "an admin with that e-mail exists"
		    : e == ERROR_BAD_REQUEST
			? "want an e-mail address and a password of 8 to 256 "
			  "bytes"
			: NULL);
	}
	fprintf(stderr, "created admin %s (%s) in tenant %s\n", a.email,
	    admin_role_name(a.role), the_svc.tenant);
	if (!from_stdin)
		puts(gen);
	explicit_bzero(gen, sizeof(gen));
	return fflush(stdout) == 0 ? 0 : EXIT_FAILED;
}

/* The audit row of an operator's change (admin_id 0, from "cli"). The
 * change is made by then, so a failure here is reported, not undone. */
static int
audit_cli(struct cmd *c, const char *action, const char *object, int rc)
{
	enum error_word e;

	e = audit_write(&the_svc, 0, "cli", action, object, NULL);
	if (e != ERROR_NONE)
		return fail(
		    c->verb, e, "done, but its audit row could not be written");
	return rc;
}

static int
v_admin_passwd(struct cmd *c, const char **pos, int npos)
{
	char pw[ADMIN_PASSWORD_MAX + 2], gen[ADMIN_PASSWORD_GEN + 1];
	char canon[ACCOUNT_MAX + 1];
	const char *email = opt_req(c, "email");
	int from_stdin = opts_get(c, "password-stdin") != NULL, rc;
	enum error_word e;

	(void)pos;
	(void)npos;
	if (from_stdin && read_password(pw, sizeof(pw)) == -1) {
		explicit_bzero(pw, sizeof(pw));
		return fail(c->verb, ERROR_BAD_REQUEST,
		    "no password on standard input, or one longer than 256 "
		    "bytes");
	}
	e = admin_passwd(tsvc(c), email, from_stdin ? pw : NULL, gen);
	explicit_bzero(pw, sizeof(pw));
	if (e != ERROR_NONE) {
		explicit_bzero(gen, sizeof(gen));
		return fail(c->verb, e,
		    e == ERROR_NOT_FOUND ? "no admin with that e-mail in the "
					   "tenant"
		    : e == ERROR_BAD_REQUEST
			? "want an e-mail address and a password of 8 to 256 "
			  "bytes"
			: NULL);
	}
	if (admin_email_canonical(email, canon) == -1)
		canon[0] = '\0'; /* unreachable: admin_passwd took it */
	fprintf(stderr,
	    "changed the password of %s in tenant %s; its sessions are "
	    "ended\n",
	    canon, the_svc.tenant);
	if (!from_stdin)
		puts(gen);
	explicit_bzero(gen, sizeof(gen));
	rc = fflush(stdout) == 0 ? 0 : EXIT_FAILED;
	return audit_cli(c, "admin.passwd", canon, rc);
}

static int
v_admin_disable(struct cmd *c, const char **pos, int npos)
{
	char canon[ACCOUNT_MAX + 1];
	const char *email = opt_req(c, "email");
	enum error_word e;

	(void)pos;
	(void)npos;
	if ((e = admin_disable(tsvc(c), email)) != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_NOT_FOUND ? "no admin with that e-mail in the "
					   "tenant"
		    : e == ERROR_BAD_REQUEST ? "want an e-mail address"
					     : NULL);
	if (admin_email_canonical(email, canon) == -1)
		canon[0] = '\0'; /* unreachable: admin_disable took it */
	printf("disabled admin %s in tenant %s; its sessions are ended\n",
	    canon, the_svc.tenant);
	return audit_cli(
	    c, "admin.disable", canon, fflush(stdout) == 0 ? 0 : EXIT_FAILED);
}

static int
v_admin_time_zone(struct cmd *c, const char **pos, int npos)
{
	char canon[ACCOUNT_MAX + 1];
	const char *email = opt_req(c, "email");
	enum error_word e;

	(void)npos;
	if ((e = admin_set_time_zone(tsvc(c), email, pos[0])) != ERROR_NONE)
		return fail(c->verb, e,
		    e == ERROR_NOT_FOUND ? "no admin with that e-mail in the "
					   "tenant"
		    : e == ERROR_BAD_REQUEST
			? "want an e-mail address and a zone of the tz "
			  "database, such as Europe/Berlin or UTC"
			: NULL);
	if (admin_email_canonical(email, canon) == -1)
		canon[0] = '\0'; /* unreachable: admin_set_time_zone took it */
	printf("admin %s in tenant %s now sees times in %s\n", canon,
	    the_svc.tenant, pos[0]);
	return audit_cli(
	    c, "admin.time_zone", canon, fflush(stdout) == 0 ? 0 : EXIT_FAILED);
}

struct first_run {
	struct svc *s;
	char password[ADMIN_PASSWORD_GEN + 1];
	char key[APIKEY_TEXT_MAX];
	enum error_word e;
	int exists;
};

#define FIRST_ADMIN "admin@localhost"

/* The first admin and an admin key, both or neither: a crash between
 * them cannot leave an admin whose password nobody saw. */
static int
first_run_tx(struct db *db, void *arg)
{
	struct first_run *f = arg;
	int64_t n;

	(void)db;
	f->exists = 0;
	f->e = admin_count(f->s, &n);
	if (f->e != ERROR_NONE)
		return DB_EFAIL;
	if (n > 0) {
		f->exists = 1;
		return DB_ROLLBACK;
	}
	f->e = admin_create(
	    f->s, FIRST_ADMIN, ADMIN_OWNER, NULL, f->password, NULL);
	if (f->e == ERROR_CONFLICT) {
		f->exists = 1; /* another init won the race */
		return DB_ROLLBACK;
	}
	if (f->e == ERROR_NONE)
		f->e = apikey_create(
		    f->s, APIKEY_ADMIN, "first run", f->key, NULL);
	return f->e == ERROR_NONE ? DB_OK : DB_EFAIL;
}

static int
v_init(struct cmd *c, const char **pos, int npos)
{
	struct first_run f;
	int rc;

	(void)pos;
	(void)npos;
	if (migrate_run(open_db(), NULL, NULL) == -1)
		return fail(c->verb, ERROR_UNAVAILABLE, db_errmsg(the_db));
	memset(&f, 0, sizeof(f));
	f.s = tsvc(c);
	rc = db_transact(the_db, DB_TX_WRITE, first_run_tx, &f);
	if (rc == DB_OK) {
		printf("admin login: %s %s\napi key: %s\n", FIRST_ADMIN,
		    f.password, f.key);
		rc = fflush(stdout) == 0 ? 0 : EXIT_FAILED;
	} else if (rc == DB_ROLLBACK && f.exists)
		rc = 0;
	else
		rc = fail(c->verb, f.e != ERROR_NONE ? f.e : ERROR_UNAVAILABLE,
		    db_errmsg(the_db));
	explicit_bzero(&f, sizeof(f));
	return rc;
}

static struct opt o_tenant_only[] = {TENANT_OPT, {NULL, NULL, NULL, NULL}};
static struct opt o_none[] = {{NULL, NULL, NULL, NULL}};
static struct opt o_sweep[] = {
    {"once", NULL, "run now, once (required)", NULL}, {NULL, NULL, NULL, NULL}};
static struct opt o_campaign_create[] = {
    {"name", "N", "the campaign's name (1-64 of A-Z a-z 0-9 . _ -)", NULL},
    {"kind", "K", "shared (codes with max_uses, default) or pool", NULL},
    {"budget", "B", "at most B redemptions in the whole campaign", NULL},
    {"starts", "T", "not redeemable before T (RFC 3339)", NULL},
    {"ends", "T", "not redeemable from T on (RFC 3339)", NULL},
    {"per-account-limit", "K", "at most K redemptions per account", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_campaign_close[] = {
    {"name", "N", "the campaign (or give it as the argument)", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_codes_generate[] = {
    {"campaign", "N", "the campaign the codes belong to", NULL},
    {"count", "C", "how many codes (up to 10,000,000)", NULL},
    {"max-uses", "M", "uses per code (1 for a pool)", NULL},
    {"expires", "T", "the codes expire at T (RFC 3339)", NULL},
    {"length", "L",
	"characters after the prefix, check included "
	"(6-32, default 8)",
	NULL},
    {"prefix", "P", "text before the random part", NULL},
    {"no-check", NULL, "leave out the check character", NULL},
    {"shards", "S",
	"counter rows each code's seats are split over, for a hot code "
	"(1-256, at most max-uses; default 16 when max-uses is at least "
	"REDEEM_SPLIT_MIN_USES, 1000, else 1)",
	NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_codes_import[] = {
    {"campaign", "N", "the campaign the codes join", NULL},
    {"max-uses", "M", "uses per code when the row has none (default 1)", NULL},
    {"expires", "T", "expiry when the row has none (RFC 3339)", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_codes_export[] = {
    {"campaign", "N", "only this campaign (default: all)", NULL},
    {"select", "S", "used, unused or all (default all)", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_redeem[] = {
    {"client-ip", "A", "the end user's address, for the abuse gate", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_reverse[] = {
    {"reason", "R", "why (kept on the redemption)", NULL},
    {"policy", "P",
	"return_seat (the code gets the use back) or "
	"keep_seat (a chargeback: it does not)",
	NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};

static struct opt o_apikey_create[] = {
    {"scope", "S",
	"redeem (redeem, holds, pools, permits) or admin (everything)", NULL},
    {"label", "L", "a note to tell keys apart (100 bytes at most)", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_admin_create[] = {
    {"email", "E", "the admin's e-mail, the login name", NULL},
    {"role", "R", "owner, admin (default) or viewer", NULL},
    {"password-stdin", NULL,
	"read the password (8-256 bytes) from one line of standard input; "
	"without it one is generated and printed",
	NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_admin_passwd[] = {
    {"email", "E", "the admin's e-mail", NULL},
    {"password-stdin", NULL,
	"read the new password (8-256 bytes) from one line of standard "
	"input; without it one is generated and printed",
	NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_admin_time_zone[] = {
    {"email", "E", "the admin's e-mail", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};
static struct opt o_admin_disable[] = {
    {"email", "E", "the admin's e-mail", NULL},
    TENANT_OPT,
    {NULL, NULL, NULL, NULL},
};

static struct verb verbs[] = {
    {{"migrate", "",
	 "Applies the migrations the database lacks (safe to "
	 "run again).",
	 o_none, 0, 0},
	v_migrate},
    {{"init", "",
	 "First-run set-up: migrates, then, when the tenant has no admin "
	 "yet, creates admin@localhost (owner) with a generated password "
	 "and an admin API key, and prints both (once: later runs print "
	 "nothing).",
	 o_tenant_only, 0, 0},
	v_init},
    {{"tenant create", "NAME", "Creates a tenant.", o_none, 1, 1},
	v_tenant_create},
    {{"admin create", "",
	 "Creates a dashboard admin; prints the generated password alone "
	 "on standard output unless --password-stdin.",
	 o_admin_create, 0, 0},
	v_admin_create},
    {{"admin passwd", "",
	 "Sets a dashboard admin's password and ends all its sessions; "
	 "prints the generated password alone on standard output unless "
	 "--password-stdin. Audited as admin.passwd.",
	 o_admin_passwd, 0, 0},
	v_admin_passwd},
    {{"admin disable", "",
	 "Disables a dashboard admin (idempotent): its sessions end and it "
	 "cannot log in any more. Audited as admin.disable.",
	 o_admin_disable, 0, 0},
	v_admin_disable},
    {{"admin time-zone", "ZONE",
	 "Sets the time zone (of the tz database, such as Europe/Berlin; "
	 "UTC by default) the dashboard shows a dashboard admin's times "
	 "in, UTC on hover. Audited as admin.time_zone.",
	 o_admin_time_zone, 1, 1},
	v_admin_time_zone},
    {{"apikey create", "",
	 "Creates an API key and prints it alone on standard output: it is "
	 "shown this once and stored only as a hash.",
	 o_apikey_create, 0, 0},
	v_apikey_create},
    {{"apikey list", "",
	 "Lists the tenant's API keys (their public lookup part, never the "
	 "secret).",
	 o_tenant_only, 0, 0},
	v_apikey_list},
    {{"apikey revoke", "ID",
	 "Revokes API key ID (idempotent): it is refused from now on.",
	 o_tenant_only, 1, 1},
	v_apikey_revoke},
    {{"campaign create", "", "Creates a campaign.", o_campaign_create, 0, 0},
	v_campaign_create},
    {{"campaign close", "[NAME]",
	 "Closes a campaign: its codes answer "
	 "\"revoked\" from now on.",
	 o_campaign_close, 0, 1},
	v_campaign_close},
    {{"campaign list", "", "Lists the tenant's campaigns.", o_tenant_only, 0,
	 0},
	v_campaign_list},
    {{"codes generate", "",
	 "Generates random codes and prints them, one "
	 "per line (a progress bar goes to a "
	 "terminal's standard error).",
	 o_codes_generate, 0, 0},
	v_codes_generate},
    {{"codes import", "FILE.csv",
	 "Imports codes from CSV lines "
	 "code[,max_uses[,expires_at]] (a "
	 "header line \"code,...\" is skipped); "
	 "every line is checked first, existing "
	 "codes are skipped.",
	 o_codes_import, 1, 1},
	v_codes_import},
    {{"codes export", "", "Writes codes as CSV, streamed.", o_codes_export, 0,
	 0},
	v_codes_export},
    {{"codes show", "CODE", "Shows one code.", o_tenant_only, 1, 1},
	v_codes_show},
    {{"redeem", "CODE ACCOUNT",
	 "Redeems CODE for ACCOUNT and prints the "
	 "API's JSON answer; exits 0 when ok is "
	 "true, 1 when it is false.",
	 o_redeem, 2, 2},
	v_redeem},
    {{"pool claim", "CAMPAIGN ACCOUNT",
	 "Hands ACCOUNT a code from a pool "
	 "campaign (the same one again on "
	 "a repeat).",
	 o_redeem, 2, 2},
	v_pool_claim},
    {{"reverse", "ID", "Reverses redemption ID (idempotent).", o_reverse, 1, 1},
	v_reverse},
    {{"revoke", "CODE", "Revokes a code (idempotent).", o_tenant_only, 1, 1},
	v_revoke},
    {{"sweep", "[JOB]",
	 "Runs the sweeper's jobs once now (expire, release_leaked, "
	 "staleness, deliver, cleanup, generate, or the one named), each "
	 "under its lease; a job another sweeper is running is skipped.",
	 o_sweep, 0, 1},
	v_sweep},
    {{"verify", "",
	 "Checks guarantees G1-G8 on the live database (G2 counting live "
	 "holds, G5 semaphore capacity, G6 fencing tokens); exits 1 "
	 "naming each violation.",
	 o_none, 0, 0},
	v_verify},
};

/* One verb in a list: its name and positionals, and the first sentence
 * of its summary, cut at a word to fit a line. */
static void
verb_line(FILE *f, const struct cmd *c)
{
	char name[40];
	size_t n = strcspn(c->summary, ".;:("), max = 50;
	int cut = n > max;

	snprintf(name, sizeof(name), "%s%s%s", c->verb, *c->usage ? " " : "",
	    c->usage);
	if (cut)
		for (n = max; n > 0 && c->summary[n] != ' '; n--)
			;
	while (n > 0 && c->summary[n - 1] == ' ')
		n--;
	fprintf(
	    f, "  %-26s %.*s%s\n", name, (int)n, c->summary, cut ? " ..." : "");
}

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: redeemctl VERB [options]\n\n"
		   "The operator's tool for Redeem. Verbs:\n");
	for (i = 0; i < NELEM(verbs); i++)
		verb_line(f, &verbs[i].cmd);
	fprintf(f, "\n`redeemctl VERB --help` explains each. Every verb reads "
		   "REDEEM_DB (default sqlite:var/redeem.db;\n"
		   "mysql://user:password@host:port/db?socket=/path for "
		   "MySQL/MariaDB) and takes --tenant T.\n"
		   "Exit status: 0 done, 1 the operation failed, 2 bad usage, "
		   "3 database unreachable.\n");
}

/* "apikey" alone, or "apikey --help": the verbs that start with it, in
 * f; 0 when there are none. */
static int
group_usage(FILE *f, const char *word)
{
	size_t i, n = 0, len = strlen(word);

	for (i = 0; i < NELEM(verbs); i++) {
		const char *vb = verbs[i].cmd.verb;

		if (strncmp(vb, word, len) != 0 || vb[len] != ' ')
			continue;
		if (n++ == 0)
			fprintf(
			    f, "usage: redeemctl %s VERB [options]\n\n", word);
		verb_line(f, &verbs[i].cmd);
	}
	if (n > 0)
		fprintf(
		    f, "\n`redeemctl %s VERB --help` explains each.\n", word);
	return n > 0;
}

int
main(int argc, char **argv)
{
	const char *pos[MAXPOS];
	struct verb *v = NULL;
	size_t i, vlen;
	int npos, rc, skip = 0;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	for (i = 0; i < NELEM(verbs) && v == NULL; i++) {
		const char *sp = strchr(verbs[i].cmd.verb, ' ');

		vlen = sp ? (size_t)(sp - verbs[i].cmd.verb)
			  : strlen(verbs[i].cmd.verb);
		if (strlen(argv[1]) != vlen ||
		    strncmp(argv[1], verbs[i].cmd.verb, vlen) != 0)
			continue;
		if (sp == NULL) {
			v = &verbs[i];
			skip = 2;
		} else if (argc > 2 && strcmp(argv[2], sp + 1) == 0) {
			v = &verbs[i];
			skip = 3;
		}
	}
	if (v == NULL && argc > 2 &&
	    (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0) &&
	    group_usage(stdout, argv[1]))
		return 0;
	if (v == NULL && argc == 2 && group_usage(stderr, argv[1]))
		return EXIT_USAGE;
	if (v == NULL) {
		fprintf(stderr, "redeemctl: unknown verb \"%s%s%s\"\n\n",
		    argv[1], argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
		usage(stderr);
		return EXIT_USAGE;
	}
	rc = opts_parse(&v->cmd, argc - skip, argv + skip, pos, &npos);
	if (rc != 0)
		return rc == 1 ? 0 : EXIT_USAGE;
	rc = v->run(&v->cmd, pos, npos);
	db_close(the_db);
	return rc;
}
