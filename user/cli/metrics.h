/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* xtcam metrics: the counters in the Prometheus text format */
#ifndef XTCAM_CLI_METRICS_H
#define XTCAM_CLI_METRICS_H

/* `xtcam metrics [BLOCK] [--rules[=BLOCK,...]] [--output FILE]`; argv[0]
 * is the first word after `metrics`.  Returns the exit status. */
int xtcam_cli_metrics(int argc, char **argv);

#endif
