#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "log.h"

static enum log_level log_level = LOG_WARN;
static int log_level_read;

static const char *const log_names[LOG__MAX] = {
    [LOG_ERR] = "error",
    [LOG_WARN] = "warn",
    [LOG_INFO] = "info",
    [LOG_DEBUG] = "debug",
};

static void
log_read_env(void)
{
	const char *e = getenv("REDEEM_LOG");
	int i;

	log_level_read = 1;
	if (e == NULL)
		return;
	for (i = 0; i < LOG__MAX; i++)
		if (strcmp(e, log_names[i]) == 0)
			log_level = (enum log_level)i;
}

void
log_msg(enum log_level l, const char *fmt, ...)
{
	char raw[1024], out[2048];
	size_t i, o = 0;
	va_list ap;

	if (!log_level_read)
		log_read_env();
	if (l > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	for (i = 0; raw[i] != '\0' && o + 5 < sizeof(out); i++) {
		unsigned char c = (unsigned char)raw[i];

		if (c < 0x20 || c == 0x7f) {
			snprintf(out + o, 5, "\\x%02x", c);
			o += 4;
		} else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	fprintf(
	    stderr, "redeem[%ld] %s: %s\n", (long)getpid(), log_names[l], out);
}
