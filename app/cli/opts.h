/* A small option parser for redeemctl's verbs: --name VALUE, --name=VALUE,
 * flags, positionals; unknown options are errors. */
#ifndef OPTS_H
#define OPTS_H

struct opt {
	const char *name; /* without the dashes */
	const char *arg;  /* NULL: a flag; else the value's name for help */
	const char *help;
	const char *value; /* out: the value, or "1" for a flag given */
};

struct cmd {
	const char *verb;  /* "campaign create" */
	const char *usage; /* positionals, for the usage line */
	const char *summary;
	struct opt *opts; /* NULL-name terminated */
	int npos_min, npos_max;
};

/* Fills opts[].value and pos; returns 0, 1 for --help shown, -1 after
 * printing a message and the usage. */
int opts_parse(
    const struct cmd *, int argc, char **argv, const char **pos, int *npos);
void opts_usage(const struct cmd *, int to_stderr);
const char *opts_get(const struct cmd *, const char *name);

#endif
