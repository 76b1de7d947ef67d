/*
 * The unit and race tests (Check). REDEEM_TEST_DB picks the backend;
 * CK_RUN_SUITE / CK_RUN_CASE pick a part, as Check defines them.
 */
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "../../app/lib/common.h"
#include "fixture.h"

Suite *suite_admin_hooks(void);  /* test_admin_hooks.c */
Suite *suite_admin_jobs(void);   /* test_admin_jobs.c */
Suite *suite_admin_leases(void); /* test_admin_leases.c */

int
main(void)
{
	Suite *(*const suites[])(void) = {suite_lib, suite_codetext, suite_db,
	    suite_campaigns, suite_codes, suite_redeem, suite_pool,
	    suite_reverse, suite_abuse, suite_verify, suite_race, suite_web,
	    suite_apikey, suite_holds, suite_permits, suite_webhooks,
	    suite_sweep, suite_session, suite_audit, suite_admin_hooks,
	    suite_admin_leases, suite_admin_jobs, suite_seats};
	const char *b = getenv("REDEEM_TEST_DB");
	SRunner *sr;
	size_t i;
	int failed;

	printf("backend: %s\n", b ? b : "sqlite");
	sr = srunner_create(NULL);
	for (i = 0; i < NELEM(suites); i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
