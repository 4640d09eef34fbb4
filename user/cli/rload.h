/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* The lines of a `rule load` file parsed, on two cores when it is long. */
#ifndef XTCAM_CLI_RLOAD_H
#define XTCAM_CLI_RLOAD_H

#include <stdio.h>
#include "xtcam/loader.h"
#include "xtcam/rule.h"
#include "rpack.h"

enum cli_rload_why {
	CLI_RLOAD_OK,
	CLI_RLOAD_READ,         /* reading line `lineno` failed: e */
	CLI_RLOAD_NUL,          /* a NUL byte in line `lineno` */
	CLI_RLOAD_PARSE,        /* line `lineno` is not a rule: e, err */
	CLI_RLOAD_NOMEM,
};

struct cli_rload {
	enum cli_rload_why why;
	int e;
	unsigned long lineno;
	char err[XTCAM_MSG_MAX];
};

/*
 * Every line of f (from where it is to its end) parsed into out, which
 * this initialises and, on a failure, frees; res says what failed, at the
 * first line that did, as if read from the top.  lines: how many the file
 * has (for the progress, "reading"; 0 when unknown).  A long file that
 * can be opened a second time is read in two halves, one a thread.
 */
void cli_rules_parse(FILE *f, size_t lines, const struct xtcam_block_spec *spec,
		     struct xtcam_rpack *out, struct cli_rload *res);

#endif
