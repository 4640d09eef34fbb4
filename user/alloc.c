// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Allocation wrappers with fault injection for the unit tests. */
#include <stdint.h>
#include <stdlib.h>
#include "alloc.h"

static long fail_left = -1;   /* allocations that still succeed; <0: off */
static long nallocs;          /* allocations since the last fail_after() */

static int should_fail(void)
{
	nallocs++;
	if (fail_left < 0)
		return 0;
	if (fail_left == 0) {
		fail_left = -1;   /* one failure, then off again */
		return 1;
	}
	fail_left--;
	return 0;
}

void *xtcam_malloc(size_t size)
{
	if (should_fail())
		return NULL;
	return malloc(size ? size : 1);
}

void *xtcam_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	if (should_fail())
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

long xtcam_alloc_fail_after(long n)
{
	long made = nallocs;

	nallocs = 0;
	fail_left = n < 0 ? -1 : n;
	return made;
}
