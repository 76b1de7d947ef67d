/*
 * libFuzzer: form_parse on the input as a request body. Checks what the
 * parser promises: on success every key and value is NUL-terminated text
 * without C0 controls but tab, CR and LF; on failure the list is empty.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/lib/arena.h"
#include "../../app/web/form.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One arena for the whole run, as a worker has; freed at exit so that
 * LeakSanitizer sees nothing. */
static struct arena *arena;

static void
arena_done(void)
{
	arena_free(arena);
}

static void
text_check(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++)
		if ((*p < 0x20 && *p != '\t' && *p != '\r' && *p != '\n') ||
		    *p == 0x7f)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvlist l;
	size_t i;

	if (arena == NULL) {
		if ((arena = arena_new(64 * 1024)) == NULL)
			abort();
		atexit(arena_done);
	}
	arena_reset(arena);
	if (form_parse(arena, (const char *)data, size, &l) == -1) {
		if (l.n != 0 || l.v != NULL)
			abort();
		return 0;
	}
	if (l.n > FORM_FIELDS_MAX || (l.n > 0) != (l.v != NULL) ||
	    arena_err(arena))
		abort();
	for (i = 0; i < l.n; i++) {
		text_check(l.v[i].key);
		text_check(l.v[i].val);
		/* Decoding never grows the text. */
		if (strlen(l.v[i].key) + strlen(l.v[i].val) >= size + 1)
			abort();
	}
	return 0;
}
