#include "fixture.h"

Suite *
suite_abuse(void)
{
	Suite *s = suite_create("abuse");

	return s;
}
