/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Progress of long commands (rule load, restore): the library reports how
 * many rules of a phase are done; whoever set a reporter
 * (xtcam_progress_set()) shows it.  Without one, a report is one test of a
 * pointer.
 */
#ifndef XTCAM_PROGRESS_H
#define XTCAM_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include "xtcam/loader.h"

extern xtcam_progress_fn xtcam_progress_hook;
extern void *xtcam_progress_arg;
/* set in a thread that works beside the one that reports: it reports
 * nothing (the reporter is not made for two at once) */
extern __thread bool xtcam_progress_quiet;

static inline void xtcam_progress(const char *phase, size_t done, size_t total)
{
	if (xtcam_progress_hook && !xtcam_progress_quiet)
		xtcam_progress_hook(xtcam_progress_arg, phase, done, total);
}

#endif
