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

/* XTCAM_CRASH_AT=NAME: the process kills itself (SIGKILL, as kill -9)
 * when it reaches the point of that name: for the tests of what the next
 * invocation makes of a change cut short.  Points of a rule change, in
 * order: stage (the change marked in the registry), deliver (data paths
 * changed; the registry's other generation not yet written), flip
 * (committed, the other generation not yet caught up), commit (done);
 * and, inside a single change the data path publishes in place, publish
 * (the active generation written, the data path's own state not yet);
 * and dying: a block del past its commit (the record marked), its rules
 * not yet removed.
 * and catch-up: a flip's grace period over, its old generation not yet
 * brought up to date (in a thread of its own for a library's batch).
 * XTCAM_STOP_AT=NAME: the process stops itself there (SIGSTOP), holding
 * the lock, until it gets SIGCONT: for the tests of readers.
 * XTCAM_PAUSE_AT=NAME: the thread that gets there sleeps 300 ms, the
 * others go on: for the tests of what a library context does meanwhile. */
void xtcam_crash_point(const char *name);

#endif
