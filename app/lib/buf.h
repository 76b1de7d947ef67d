/*
 * Growable byte buffer with a sticky error flag: appends after a failed
 * allocation are ignored and the caller checks buf.err once at the end.
 * The buffer owns data; buf_free releases it.
 */
#ifndef BUF_H
#define BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data; /* always NUL-terminated when len > 0 or after buf_cstr */
	size_t len;
	size_t cap;
	size_t max; /* 0: no limit; past it err is set */
	int err;
};

void buf_init(struct buf *, size_t max);
void buf_free(struct buf *);
void buf_reset(struct buf *);
void buf_add(struct buf *, const void *, size_t);
void buf_puts(struct buf *, const char *);
void buf_putc(struct buf *, int);
void buf_printf(struct buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *, const char *, va_list)
    __attribute__((format(printf, 2, 0)));
const char *buf_cstr(struct buf *);

#endif
