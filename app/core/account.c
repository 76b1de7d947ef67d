#include <string.h>

#include "../lib/common.h"
#include "../lib/str.h"
#include "account.h"

int
account_canonical(const char *in, char *out)
{
	size_t n = strlen(in), b = 0, i;

	if (!str_utf8_ok(in, n))
		return -1;
	while (b < n && (in[b] == ' ' || in[b] == '\t'))
		b++;
	while (n > b && (in[n - 1] == ' ' || in[n - 1] == '\t'))
		n--;
	if (n == b || n - b > ACCOUNT_MAX)
		return -1;
	for (i = b; i < n; i++) {
		char c = in[i];

		if (c == '\t')
			return -1;
		out[i - b] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	out[n - b] = '\0';
	return 0;
}
