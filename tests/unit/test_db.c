#include "fixture.h"

Suite *
suite_db(void)
{
	Suite *s = suite_create("db");

	return s;
}
