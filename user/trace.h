/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * XTCAM_TRACE=1: where a command's time goes.  Each mark prints, on
 * stderr, the wall time since the previous mark (the first: since the
 * process started running main's callers) under the name of the phase
 * that just ended.  Off, a mark is one test of a flag.
 */
#ifndef XTCAM_TRACE_H
#define XTCAM_TRACE_H

#include <stdbool.h>

extern bool xtcam_tracing;

void xtcam_trace_mark(const char *phase);

#define xtcam_trace(phase) do { if (xtcam_tracing) xtcam_trace_mark(phase); } while (0)

#endif
