#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "../lib/common.h"
#include "progress.h"

double
progress_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
progress_init(struct progress *p, const char *what)
{
	p->what = what;
	p->tty = isatty(STDERR_FILENO);
	p->start = progress_now();
	p->last = 0;
}

void
progress_update(struct progress *p, int64_t done, int64_t total)
{
	char bar[31];
	double now = progress_now(), rate;
	int i, fill;

	if (!p->tty || (now - p->last < 0.1 && done < total))
		return;
	p->last = now;
	fill = total > 0 ? (int)(done * 30 / total) : 30;
	for (i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[30] = '\0';
	rate = now > p->start ? (double)done / (now - p->start) : 0;
	fprintf(stderr, "\r%s [%s] %3d%% %lld/%lld %.0f/s ", p->what, bar,
	    total > 0 ? (int)(done * 100 / total) : 100, (long long)done,
	    (long long)total, rate);
	fflush(stderr);
}

void
progress_done(struct progress *p)
{
	if (p->tty && p->last > 0)
		fputc('\n', stderr);
}
