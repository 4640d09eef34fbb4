// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Progress on stderr: "\r<phase> <done> of <total> rules, <rate>/s", at
 * most ten times a second, from about a second into the command, and only
 * when stderr is a terminal (a pipe or a file gets nothing).  The line is
 * cleared when the command is done.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "xtcam/loader.h"
#include "progress.h"

static bool on, shown;
static double t0, t_after, t_last, t_phase, t_seen;
static char phase_now[32];
static size_t done_last;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void report(void *arg, const char *phase, size_t done, size_t total)
{
	double t = now_s(), rate;

	(void)arg;
	if (!on)
		return;
	/* a phase starts where the previous report left off */
	if (strncmp(phase, phase_now, sizeof(phase_now) - 1) || done < done_last) {
		snprintf(phase_now, sizeof(phase_now), "%s", phase);
		t_phase = t_seen ? t_seen : t0;
	}
	t_seen = t;
	done_last = done;
	if (t - t0 < t_after || (t - t_last < 0.1 && done != total))
		return;
	t_last = t;
	rate = t > t_phase ? (double)done / (t - t_phase) : 0;
	if (total)
		fprintf(stderr, "\r\033[K%s %zu of %zu rules, %.0f/s", phase, done, total, rate);
	else
		fprintf(stderr, "\r\033[K%s %zu rules, %.0f/s", phase, done, rate);
	fflush(stderr);
	shown = true;
}

void cli_progress_init(void)
{
	const char *e = getenv("XTCAM_PROGRESS_AFTER_MS");

	if (!isatty(STDERR_FILENO))
		return;
	on = true;
	t0 = now_s();
	t_after = e && *e ? atof(e) / 1000 : 1.0;
	xtcam_progress_set(report, NULL);
}

void cli_progress(const char *phase, size_t done, size_t total)
{
	report(NULL, phase, done, total);
}

void cli_progress_done(void)
{
	if (shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	shown = false;
}
