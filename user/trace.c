// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* XTCAM_TRACE: per-phase times of a command (see trace.h). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "trace.h"

bool xtcam_tracing;
static double t_start, t_last;
/* marks may come from two threads (a big change's registry and data path) */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

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

/* resident and peak resident memory, MiB (0 when unknown) */
static void rss_mib(double *rss, double *hwm)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	unsigned long kb;

	*rss = *hwm = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %lu kB", &kb) == 1)
			*rss = kb / 1024.0;
		else if (sscanf(line, "VmHWM: %lu kB", &kb) == 1)
			*hwm = kb / 1024.0;
	}
	if (f)
		fclose(f);
}

void xtcam_trace_mark(const char *phase)
{
	double t, rss, hwm;

	pthread_mutex_lock(&mu);
	t = now_ms();
	rss_mib(&rss, &hwm);
	fprintf(stderr, "xtcam: trace %-10s %9.3f ms  (at %9.3f ms)  rss %.1f MiB, peak %.1f\n",
		phase, t - t_last, t - t_start, rss, hwm);
	t_last = t;
	pthread_mutex_unlock(&mu);
}

void xtcam_crash_point(const char *name)
{
	const char *at = getenv("XTCAM_CRASH_AT");

	if (at && !strcmp(at, name))
		raise(SIGKILL);
	at = getenv("XTCAM_STOP_AT");
	if (at && !strcmp(at, name))
		raise(SIGSTOP);
	/* the calling thread only, the others go on */
	at = getenv("XTCAM_PAUSE_AT");
	if (at && !strcmp(at, name))
		nanosleep(&(struct timespec){ 0, 300 * 1000000L }, NULL);
}
