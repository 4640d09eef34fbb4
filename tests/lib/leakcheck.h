/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * assert_no_leaks(): fail the current Criterion test if LeakSanitizer finds
 * memory that nothing points to any more.  LeakSanitizer's own report at
 * exit comes after Criterion has counted the test as passed, so a test that
 * frees everything it made calls this at its end.  A no-op without ASan
 * (valgrind runs report leaks themselves).
 */
#ifndef XTCAM_TEST_LEAKCHECK_H
#define XTCAM_TEST_LEAKCHECK_H

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define assert_no_leaks() \
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, \
		     "LeakSanitizer found leaks (report above)")
#else
#define assert_no_leaks() do { } while (0)
#endif

#endif
