#include "fixture.h"

Suite *
suite_campaigns(void)
{
	Suite *s = suite_create("campaigns");

	return s;
}
