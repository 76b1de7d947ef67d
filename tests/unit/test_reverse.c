#include "fixture.h"

Suite *
suite_reverse(void)
{
	Suite *s = suite_create("reverse");

	return s;
}
