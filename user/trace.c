// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* XTCAM_TRACE: per-phase times of a command (see trace.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "trace.h"

bool xtcam_tracing;
static double t_start, t_last;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* before main: libraries are loaded by now, so "start" is what main and
 * the library do, not exec */
__attribute__((constructor)) static void trace_init(void)
{
	const char *e = getenv("XTCAM_TRACE");

	xtcam_tracing = e && *e && *e != '0';
	t_start = t_last = now_ms();
}

void xtcam_trace_mark(const char *phase)
{
	double t = now_ms();

	fprintf(stderr, "xtcam: trace %-10s %9.3f ms  (at %9.3f ms)\n", phase, t - t_last,
		t - t_start);
	t_last = t;
}

void xtcam_crash_point(const char *name)
{
	const char *at = getenv("XTCAM_CRASH_AT");

	if (at && !strcmp(at, name))
		raise(SIGKILL);
	at = getenv("XTCAM_STOP_AT");
	if (at && !strcmp(at, name))
		raise(SIGSTOP);
}
