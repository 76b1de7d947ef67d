/*
 * multipart/form-data (RFC 7578) as a browser sends a form with a file:
 * strict (the body starts with the first delimiter, every part has a
 * Content-Disposition: form-data with a name, the close delimiter ends
 * it), bounded (MULTIPART_PARTS_MAX parts, MULTIPART_HEADER_MAX bytes of
 * headers per part), and without copies of the data: a part's bytes
 * point into the body, which the caller keeps. Names live in the arena.
 */
#ifndef MULTIPART_H
#define MULTIPART_H

#include <stddef.h>

struct arena;
struct kvlist;

#define MULTIPART_PARTS_MAX 32
#define MULTIPART_HEADER_MAX 1024
#define MULTIPART_BOUNDARY_MAX 70 /* RFC 2046 */

struct mpart {
	const char *name;     /* NUL-terminated, UTF-8 */
	const char *filename; /* NULL for a plain field */
	const char *data;     /* in the body; not NUL-terminated */
	size_t len;
};

struct multipart {
	struct mpart part[MULTIPART_PARTS_MAX];
	size_t n;
};

/* 1 when ctype is multipart/form-data (any case, any parameters). */
int multipart_is(const char *ctype);

/* The boundary parameter of a multipart/form-data ctype into out
 * (1..MULTIPART_BOUNDARY_MAX characters of RFC 2046's set, quoted or
 * not); -1 when there is none or it is malformed. */
int multipart_boundary(const char *ctype, char out[MULTIPART_BOUNDARY_MAX + 1]);

/* Splits body into its parts; -1 on anything malformed or past the
 * bounds, or a full arena, with out->n 0. */
int multipart_parse(struct arena *, const char *boundary, const char *body,
    size_t len, struct multipart *out);

/*
 * A form sent as multipart: the plain fields into form (as form_parse
 * would give them: UTF-8 text without NUL or C0 controls but tab, CR
 * and LF), and the one file part's bytes into *file, *file_len (NULL, 0
 * when no file was chosen). -1 when ctype or body is malformed, a field
 * is not such text, or there is more than one file.
 */
int multipart_form(struct arena *, const char *ctype, const char *body,
    size_t len, struct kvlist *form, const char **file, size_t *file_len);

#endif
