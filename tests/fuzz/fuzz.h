/*
 * What the fuzz targets share: one arena for the whole run, as a worker
 * has, freed at exit so that LeakSanitizer sees nothing; the check that
 * decoded text holds no control character but tab, CR and LF.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stdlib.h>

#include "../../app/lib/arena.h"

static struct arena *fuzz_arena_;

static void
fuzz_arena_done(void)
{
	arena_free(fuzz_arena_);
}

/* The run's arena (cap bytes), emptied for this input. */
static inline struct arena *
fuzz_arena(size_t cap)
{
	if (fuzz_arena_ == NULL) {
		if ((fuzz_arena_ = arena_new(cap)) == NULL)
			abort();
		atexit(fuzz_arena_done);
	}
	arena_reset(fuzz_arena_);
	return fuzz_arena_;
}

/* Aborts on a control character other than tab, CR and LF, or DEL. */
static inline void
fuzz_text_check(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++)
		if ((*p < 0x20 && *p != '\t' && *p != '\r' && *p != '\n') ||
		    *p == 0x7f)
			abort();
}

#endif
