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
#include "../../app/web/form.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *arena;
	struct kvlist l;
	size_t i;

	arena = fuzz_arena(64 * 1024);
	if (form_parse(arena, (const char *)data, size, &l) == -1) {
		if (l.n != 0 || l.v != NULL)
			abort();
		return 0;
	}
	if (l.n > FORM_FIELDS_MAX || (l.n > 0) != (l.v != NULL) ||
	    arena_err(arena))
		abort();
	for (i = 0; i < l.n; i++) {
		fuzz_text_check(l.v[i].key);
		fuzz_text_check(l.v[i].val);
		/* Decoding never grows the text. */
		if (strlen(l.v[i].key) + strlen(l.v[i].val) >= size + 1)
			abort();
	}
	return 0;
}
