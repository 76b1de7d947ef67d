#include "fixture.h"

Suite *
suite_codetext(void)
{
	Suite *s = suite_create("codetext");

	return s;
}
