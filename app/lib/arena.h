/*
 * A per-request arena: bump allocation in chunks, a hard cap on the total,
 * a sticky error flag. Everything a request needs lives here and is
 * released at once by arena_reset; nothing is freed one by one. The arena
 * owns its chunks; arena_free releases them.
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>

struct arena;

/* cap: the most bytes the arena hands out between resets. NULL when out
 * of memory (start-up only). */
struct arena *arena_new(size_t cap);
void arena_free(struct arena *);
/* Forgets every allocation and clears the error; keeps the first chunk. */
void arena_reset(struct arena *);
/* Zeroed, aligned for any type. NULL (and the error set) past the cap or
 * when malloc fails. */
void *arena_alloc(struct arena *, size_t);
/* A NUL-terminated copy of s[0..n). */
char *arena_strndup(struct arena *, const char *s, size_t n);
char *arena_strdup(struct arena *, const char *s);
char *arena_printf(struct arena *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int arena_err(const struct arena *);
size_t arena_used(const struct arena *);

#endif
