/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Progress of long commands (rule load, restore): the library reports how
 * many rules of a phase are done; whoever set a reporter
 * (xtcam_progress_set()) shows it.  Without one, a report is one test of a
 * pointer.
 */
#ifndef XTCAM_PROGRESS_H
#define XTCAM_PROGRESS_H

#include <stddef.h>
#include "xtcam/loader.h"

extern xtcam_progress_fn xtcam_progress_hook;
extern void *xtcam_progress_arg;

static inline void xtcam_progress(const char *phase, size_t done, size_t total)
{
	if (xtcam_progress_hook)
		xtcam_progress_hook(xtcam_progress_arg, phase, done, total);
}

#endif
