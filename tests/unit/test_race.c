#include "fixture.h"

Suite *
suite_race(void)
{
	Suite *s = suite_create("race");

	return s;
}
