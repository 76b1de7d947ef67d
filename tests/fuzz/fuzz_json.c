/*
 * libFuzzer: jsonin_parse on the input as a request body, then the field
 * readers on the names the API uses and on every key the object has. The
 * error sentence goes back to the client inside JSON, so it must be
 * printable text whatever the input was.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../app/lib/common.h"
#include "../../app/lib/str.h"
#include "../../app/web/jsonin.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* A parse error is one of our sentences: printable. A reader's names
 * the field, which here may be any key the input had: it must still be
 * text that JSON can carry. */
static void
why_check(const char *why, int printable)
{
	json_t *s;

	if (why[0] == '\0' || (printable && !str_utf8_ok(why, strlen(why))))
		abort();
	if ((s = json_string(why)) == NULL)
		abort();
	json_decref(s);
}

static void
read_field(json_t *o, const char *key)
{
	const char *s;
	char why[160];
	int64_t i;
	int rc;

	why[0] = '\0';
	rc = jsonin_str(o, key, 64, &s, why, sizeof(why));
	if (rc == 1 &&
	    (strlen(s) == 0 || strlen(s) > 64 || !str_utf8_ok(s, strlen(s))))
		abort();
	if (rc == -1)
		why_check(why, 0);
	rc = jsonin_int(o, key, -1000, 1000, &i, why, sizeof(why));
	if (rc == 1 && (i < -1000 || i > 1000))
		abort();
	if (rc == -1)
		why_check(why, 0);
	rc = jsonin_time(o, key, &i, why, sizeof(why));
	if (rc == 1 && i < 0)
		abort();
	if (rc == -1)
		why_check(why, 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *arena;
	static const char *const names[] = {
	    "code", "account", "max_uses", "expires_at", "ttl", "", "a"};
	const char *key;
	char why[160];
	void *it;
	json_t *o;
	size_t i;

	arena = fuzz_arena(32 * 1024);
	why[0] = '\0';
	if ((o = jsonin_parse((const char *)data, size, why, sizeof(why))) ==
	    NULL) {
		why_check(why, 1);
		return 0;
	}
	if (!json_is_object(o))
		abort();
	for (i = 0; i < NELEM(names); i++)
		read_field(o, names[i]);
	/* The object's own keys, copied as a handler would keep them. */
	for (it = json_object_iter(o); it != NULL;
	     it = json_object_iter_next(o, it))
		if ((key = arena_strdup(arena, json_object_iter_key(it))) !=
		    NULL)
			read_field(o, key);
	json_decref(o);
	return 0;
}
