// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The progress reporter of long commands (see progress.h). */
#include "progress.h"

xtcam_progress_fn xtcam_progress_hook;
void *xtcam_progress_arg;
__thread bool xtcam_progress_quiet;

void xtcam_progress_set(xtcam_progress_fn fn, void *arg)
{
	xtcam_progress_hook = fn;
	xtcam_progress_arg = arg;
}
