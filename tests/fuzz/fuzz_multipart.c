/*
 * libFuzzer: multipart_form on the input as a request body with a fixed
 * boundary, and multipart_boundary on it as a Content-Type. Checks what
 * the parser promises: on success every field is NUL-terminated text
 * without C0 controls but tab, CR and LF, the file lies inside the body,
 * at most MULTIPART_PARTS_MAX parts; on failure everything is empty.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/lib/arena.h"
#include "../../app/web/form.h"
#include "../../app/web/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

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
	char boundary[MULTIPART_BOUNDARY_MAX + 1], *ctype;
	const char *body = (const char *)data, *file;
	struct kvlist l;
	size_t i, flen;

	if (arena == NULL) {
		if ((arena = arena_new(256 * 1024)) == NULL)
			abort();
		atexit(arena_done);
	}
	arena_reset(arena);
	if (multipart_form(arena, "multipart/form-data; boundary=XyZ", body,
		size, &l, &file, &flen) == -1) {
		if (l.n != 0 || l.v != NULL || file != NULL || flen != 0)
			abort();
	} else {
		if (l.n > MULTIPART_PARTS_MAX || (l.n > 0) != (l.v != NULL))
			abort();
		for (i = 0; i < l.n; i++) {
			text_check(l.v[i].key);
			text_check(l.v[i].val);
			if (strlen(l.v[i].val) > size)
				abort();
		}
		if (file != NULL && (file < body || file + flen > body + size))
			abort();
	}
	/* The input as a Content-Type header. */
	if ((ctype = arena_strndup(arena, body, size)) == NULL)
		return 0;
	if (multipart_boundary(ctype, boundary) == 0) {
		size_t n = strlen(boundary);

		if (n == 0 || n > MULTIPART_BOUNDARY_MAX)
			abort();
	} else if (boundary[0] != '\0')
		abort();
	return 0;
}
