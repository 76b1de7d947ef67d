/*
 * libFuzzer: form_parse on the input as a query string, then the lookups
 * a handler makes: every key found must be found again by kv_get and
 * counted by kv_count, and the first match must be the one returned.
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
	static const char *const names[] = {
	    "code", "account", "csrf", "a", "", "page", "q"};
	struct kvlist l;
	size_t i, j, n;
	const char *v;

	arena = fuzz_arena(32 * 1024);
	if (form_parse(arena, (const char *)data, size, &l) == -1) {
		if (l.n != 0 || kv_get(&l, "code") != NULL ||
		    kv_count(&l, "code") != 0)
			abort();
		return 0;
	}
	for (i = 0; i < NELEM(names); i++) {
		v = kv_get(&l, names[i]);
		n = kv_count(&l, names[i]);
		if ((v != NULL) != (n > 0))
			abort();
	}
	for (i = 0; i < l.n; i++) {
		v = kv_get(&l, l.v[i].key);
		if (v == NULL || kv_count(&l, l.v[i].key) == 0)
			abort();
		/* kv_get answers the first pair of that name. */
		for (j = 0; j < i; j++)
			if (strcmp(l.v[j].key, l.v[i].key) == 0)
				break;
		if (v != l.v[j].val)
			abort();
	}
	return 0;
}
