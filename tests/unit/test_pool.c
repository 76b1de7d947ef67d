#include "fixture.h"

Suite *
suite_pool(void)
{
	Suite *s = suite_create("pool");

	return s;
}
