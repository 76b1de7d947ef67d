#include "fixture.h"

Suite *
suite_redeem(void)
{
	Suite *s = suite_create("redeem");

	return s;
}
