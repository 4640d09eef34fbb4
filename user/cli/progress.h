/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Progress of long commands on stderr, when it is a terminal. */
#ifndef XTCAM_CLI_PROGRESS_H
#define XTCAM_CLI_PROGRESS_H

#include <stddef.h>

/* Show the library's progress reports (xtcam_progress_set()) on stderr if
 * it is a terminal, once the command has run about a second
 * (XTCAM_PROGRESS_AFTER_MS overrides the second); nothing otherwise. */
void cli_progress_init(void);
/* A report of the CLI's own (reading a rule file). */
void cli_progress(const char *phase, size_t done, size_t total);
/* Clear the progress line, if one was shown (before other output). */
void cli_progress_done(void);

#endif
