/*
 * libFuzzer: tmpl_parse of the input against a fixed key list, then two
 * renders (every key set, including a list whose items shadow top-level
 * keys; then nothing set) into a buffer with a max. A parse error must
 * name the file and line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../app/lib/common.h"
#include "../../app/lib/arena.h"
#include "../../app/lib/buf.h"
#include "../../app/web/tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const keys[] = {
    "a", "b", "list", "x", "flag", "empty", NULL};
enum { K_A, K_B, K_LIST, K_X, K_FLAG, K_EMPTY, K__MAX };

static struct arena *arena;
static struct buf out;

static void
done(void)
{
	arena_free(arena);
	buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tval vals[K__MAX], none[K__MAX], item[2][K__MAX];
	const struct tval *items[2] = {item[0], item[1]};
	char err[256];
	struct tmpl *t;

	if (arena == NULL) {
		if ((arena = arena_new(16 * 1024)) == NULL)
			abort();
		buf_init(&out, 256 * 1024);
		atexit(done);
	}
	arena_reset(arena);
	buf_reset(&out);
	err[0] = '\0';
	t = tmpl_parse(
	    "fuzz.html", (const char *)data, size, keys, err, sizeof(err));
	if (t == NULL) {
		if (strncmp(err, "fuzz.html:", 10) != 0)
			abort();
		return 0;
	}
	memset(vals, 0, sizeof(vals));
	memset(none, 0, sizeof(none));
	memset(item, 0, sizeof(item));
	/* The input itself as a value, so escaping sees any byte. */
	vals[K_A].type = TV_STR;
	vals[K_A].s =
	    arena_strndup(arena, (const char *)data, size < 64 ? size : 64);
	if (vals[K_A].s == NULL)
		vals[K_A].s = "<&>\"'";
	vals[K_B].type = TV_RAW;
	vals[K_B].s = "<b>raw</b>";
	vals[K_FLAG].type = TV_STR;
	vals[K_FLAG].s = "1";
	vals[K_EMPTY].type = TV_STR;
	vals[K_EMPTY].s = "";
	/* Two items: a list nested in itself 16 deep is 2^16 rounds. */
	vals[K_LIST].type = TV_LIST;
	vals[K_LIST].items = items;
	vals[K_LIST].n = 2;
	item[0][K_X].type = TV_STR;
	item[0][K_X].s = "x0<";
	item[0][K_A].type = TV_RAW;
	item[0][K_A].s = "<i>shadow</i>";
	item[1][K_FLAG].type = TV_STR;
	item[1][K_FLAG].s = "";
	if (tmpl_render(t, vals, &out) != (out.err ? -1 : 0))
		abort();
	buf_reset(&out);
	if (tmpl_render(t, none, &out) != (out.err ? -1 : 0))
		abort();
	tmpl_free(t);
	return 0;
}
