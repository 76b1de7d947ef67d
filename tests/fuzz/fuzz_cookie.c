/*
 * libFuzzer: cookie_parse on a NUL-terminated copy of the input (a header
 * value, as FastCGI gives it). Every pair kept has a token name and a
 * value of cookie-octets.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/web/form.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
printable_check(const char *s, int may_be_empty)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!may_be_empty && *p == '\0')
		abort();
	for (; *p != '\0'; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == ';' || *p == '"')
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *arena;
	struct kvlist l;
	char *header;
	size_t i;
	int rc;

	arena = fuzz_arena(32 * 1024);
	/* Exactly size + 1 bytes: ASan sees a read past the NUL. */
	if ((header = malloc(size + 1)) == NULL)
		return 0;
	memcpy(header, data, size);
	header[size] = '\0';
	rc = cookie_parse(arena, header, &l);
	free(header);
	if (rc == -1) {
		if (l.n != 0)
			abort();
		return 0;
	}
	if (l.n > FORM_FIELDS_MAX)
		abort();
	for (i = 0; i < l.n; i++) {
		printable_check(l.v[i].key, 0);
		printable_check(l.v[i].val, 1);
		if (kv_get(&l, l.v[i].key) == NULL)
			abort();
	}
	return 0;
}
