#include "fixture.h"

Suite *
suite_codes(void)
{
	Suite *s = suite_create("codes");

	return s;
}
