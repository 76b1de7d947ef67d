/* The redeemer's identity in canonical form: trimmed, ASCII case-folded,
 * 1-254 bytes of UTF-8 without control characters. */
#ifndef ACCOUNT_H
#define ACCOUNT_H

#define ACCOUNT_MAX 254

/* 0, or -1 when the input cannot be an account. out: ACCOUNT_MAX + 1. */
int account_canonical(const char *in, char *out);

#endif
