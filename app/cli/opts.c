#include <stdio.h>
#include <string.h>

#include "../lib/common.h"
#include "opts.h"

void
opts_usage(const struct cmd *c, int to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;
	const struct opt *o;

	fprintf(f, "usage: redeemctl %s%s%s [options]\n\n%s\n", c->verb,
	    c->usage[0] ? " " : "", c->usage, c->summary);
	fprintf(f, "\noptions:\n");
	for (o = c->opts; o->name != NULL; o++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", o->name,
		    o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-22s%s\n", left, o->help);
	}
	fprintf(f, "\nThe database comes from REDEEM_DB (default "
		   "sqlite:var/redeem.db).\n");
}

static struct opt *
find(const struct cmd *c, const char *name, size_t n)
{
	struct opt *o;

	for (o = c->opts; o != NULL && o->name != NULL; o++)
		if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
			return o;
	return NULL;
}

int
opts_parse(
    const struct cmd *c, int argc, char **argv, const char **pos, int *npos)
{
	int i, only_pos = 0;

	*npos = 0;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq;
		struct opt *o;

		if (!only_pos && strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (!only_pos &&
		    (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
			opts_usage(c, 0);
			return 1;
		}
		if (only_pos || strncmp(a, "--", 2) != 0 || a[2] == '\0') {
			if (*npos >= c->npos_max) {
				fprintf(stderr,
				    "redeemctl %s: unexpected argument "
				    "\"%s\"\n\n",
				    c->verb, a);
				opts_usage(c, 1);
				return -1;
			}
			pos[(*npos)++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		o = find(c, a, eq ? (size_t)(eq - a) : strlen(a));
		if (o == NULL) {
			fprintf(stderr,
			    "redeemctl %s: unknown option --%.*s\n\n", c->verb,
			    (int)(eq ? eq - a : (long)strlen(a)), a);
			opts_usage(c, 1);
			return -1;
		}
		if (o->arg == NULL) {
			if (eq != NULL) {
				fprintf(stderr,
				    "redeemctl %s: --%s takes no value\n",
				    c->verb, o->name);
				return -1;
			}
			o->value = "1";
		} else if (eq != NULL)
			o->value = eq + 1;
		else if (i + 1 < argc)
			o->value = argv[++i];
		else {
			fprintf(stderr, "redeemctl %s: --%s needs %s\n",
			    c->verb, o->name, o->arg);
			return -1;
		}
	}
	if (*npos < c->npos_min) {
		fprintf(
		    stderr, "redeemctl %s: missing %s\n\n", c->verb, c->usage);
		opts_usage(c, 1);
		return -1;
	}
	return 0;
}

const char *
opts_get(const struct cmd *c, const char *name)
{
	struct opt *o = find(c, name, strlen(name));

	return o ? o->value : NULL;
}
