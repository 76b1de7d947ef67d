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
#include "../../app/web/form.h"
#include "../../app/web/multipart.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *arena;
	char boundary[MULTIPART_BOUNDARY_MAX + 1], *ctype;
	const char *body = (const char *)data, *file;
	struct kvlist l;
	size_t i, flen;

	arena = fuzz_arena(256 * 1024);
	if (multipart_form(arena, "multipart/form-data; boundary=XyZ", body,
		size, &l, &file, &flen) == -1) {
		if (l.n != 0 || l.v != NULL || file != NULL || flen != 0)
			abort();
	} else {
		if (l.n > MULTIPART_PARTS_MAX || (l.n > 0) != (l.v != NULL))
			abort();
		for (i = 0; i < l.n; i++) {
			fuzz_text_check(l.v[i].key);
			fuzz_text_check(l.v[i].val);
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
