/* Placeholder: replaced by the real suite. */
#include <check.h>

#include "../../app/lib/common.h"
#include "fixture.h"

Suite *
suite_permits(void)
{
	return suite_create("permits");
}
