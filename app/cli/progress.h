/* A progress bar on standard error, drawn only when it is a terminal. */
#ifndef PROGRESS_H
#define PROGRESS_H

#include <stdint.h>

struct progress {
	const char *what;
	int tty;
	double start;
	double last;
};

void progress_init(struct progress *, const char *what);
void progress_update(struct progress *, int64_t done, int64_t total);
void progress_done(struct progress *);
double progress_now(void);

#endif
