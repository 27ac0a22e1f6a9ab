/* check_run.h — the one way a libcheck suite binary runs: all tests, normal
 * output (tests/run.sh reads its "Checks: N" line), exit 1 on any failure. */
#ifndef VMM_TESTS_CHECK_RUN_H
#define VMM_TESTS_CHECK_RUN_H

#include <check.h>

static inline int check_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
