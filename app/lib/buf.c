#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "buf.h"

void
buf_init(struct buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static int
buf_grow(struct buf *b, size_t need)
{
	size_t ncap;
	char *p;

	if (b->err)
		return -1;
	if (need > SIZE_MAX - b->len - 1 ||
	    (b->max != 0 && b->len + need > b->max)) {
		b->err = 1;
		return -1;
	}
	if (b->len + need + 1 <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < b->len + need + 1)
		ncap *= 2;
	if ((p = realloc(b->data, ncap)) == NULL) {
		b->err = 1;
		return -1;
	}
	b->data = p;
	b->cap = ncap;
	return 0;
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	if (buf_grow(b, n) == -1)
		return;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_putc(struct buf *b, int c)
{
	char ch = (char)c;

	buf_add(b, &ch, 1);
}

void
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		b->err = 1;
		return;
	}
	if (buf_grow(b, (size_t)n) == -1)
		return;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *
buf_cstr(struct buf *b)
{
	if (b->data == NULL)
		buf_add(b, "", 0);
	return b->err || b->data == NULL ? "" : b->data;
}
