#include "fixture.h"

Suite *
suite_verify(void)
{
	Suite *s = suite_create("verify");

	return s;
}
