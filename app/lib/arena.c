/*
 * The per-request arena. Chunks form a list that the arena owns; the
 * first one lives as long as the arena, the others until the next reset.
 * The cap counts the bytes handed out (rounded to the alignment), so a
 * request cannot grow past it however its allocations are sized; the
 * memory actually held stays under about twice the cap.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "arena.h"

/*
 * Under ASan, bytes not handed out (the rest of a chunk, the padding after
 * each allocation, everything after a reset) are poisoned, so that a
 * small overrun or a use after arena_reset is reported like one on the
 * heap.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(ARENA_ASAN)
#define ARENA_ASAN 1
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENA_ALIGN _Alignof(max_align_t)
#define ARENA_FIRST ((size_t)16 * 1024)
#define ARENA_GROW_MAX ((size_t)1024 * 1024)

struct chunk {
	struct chunk *next;
	size_t size;        /* usable bytes in data */
	max_align_t data[]; /* aligned for any type */
};

struct arena {
	struct chunk *first; /* kept by arena_reset */
	struct chunk *cur;   /* the chunk being filled: the list's last */
	size_t off;          /* bytes of cur already handed out */
	size_t used;         /* bytes handed out since the last reset */
	size_t cap;
	int err; /* sticky until arena_reset: every allocation fails */
};

static size_t
round_up(size_t n)
{
	return (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
}

static struct chunk *
chunk_new(size_t size)
{
	struct chunk *c;

	if (size > SIZE_MAX - sizeof(*c))
		return NULL;
	if ((c = malloc(sizeof(*c) + size)) == NULL)
		return NULL;
	c->next = NULL;
	c->size = size;
	POISON(c->data, size);
	return c;
}

struct arena *
arena_new(size_t cap)
{
	struct arena *a;
	size_t first = cap < ARENA_FIRST ? round_up(cap) : ARENA_FIRST;

	if (first == 0)
		first = ARENA_ALIGN;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	if ((a->first = chunk_new(first)) == NULL) {
		free(a);
		return NULL;
	}
	a->cur = a->first;
	a->cap = cap;
	return a;
}

static void
chunks_free(struct chunk *c)
{
	struct chunk *next;

	for (; c != NULL; c = next) {
		next = c->next;
		UNPOISON(c->data, c->size);
		free(c);
	}
}

void
arena_free(struct arena *a)
{
	if (a == NULL)
		return;
	chunks_free(a->first);
	free(a);
}

void
arena_reset(struct arena *a)
{
	chunks_free(a->first->next);
	a->first->next = NULL;
	POISON(a->first->data, a->first->size);
	a->cur = a->first;
	a->off = 0;
	a->used = 0;
	a->err = 0;
}

void *
arena_alloc(struct arena *a, size_t n)
{
	struct chunk *c;
	size_t need, size;
	char *p;

	if (a->err)
		return NULL;
	/* Zero bytes still get a distinct pointer. */
	if (n > SIZE_MAX - ARENA_ALIGN ||
	    (need = round_up(n > 0 ? n : 1)) > a->cap - a->used) {
		a->err = 1;
		return NULL;
	}
	if (need > a->cur->size - a->off) {
		/* The rest of cur is abandoned until the reset. */
		size = a->cur->size < ARENA_GROW_MAX / 2 ? a->cur->size * 2
							 : ARENA_GROW_MAX;
		if (size > a->cap - a->used)
			size = round_up(a->cap - a->used);
		if (size < need)
			size = need;
		if ((c = chunk_new(size)) == NULL) {
			a->err = 1;
			return NULL;
		}
		a->cur->next = c;
		a->cur = c;
		a->off = 0;
	}
	p = (char *)a->cur->data + a->off;
	a->off += need;
	a->used += need;
	UNPOISON(p, n);
	memset(p, 0, n);
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX) {
		a->err = 1;
		return NULL;
	}
	if ((p = arena_alloc(a, n + 1)) == NULL)
		return NULL;
	if (n > 0)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		a->err = 1;
		return NULL;
	}
	if ((p = arena_alloc(a, (size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

int
arena_err(const struct arena *a)
{
	return a->err;
}

size_t
arena_used(const struct arena *a)
{
	return a->used;
}
