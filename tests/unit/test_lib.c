#include "fixture.h"

Suite *
suite_lib(void)
{
	Suite *s = suite_create("lib");

	return s;
}
