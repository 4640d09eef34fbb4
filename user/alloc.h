/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Allocation wrappers for libxtcam's control path, with fault injection so
 * that unit tests can make the n-th allocation fail and check that every
 * -ENOMEM path leaves things as they were.  Internal to libxtcam and its
 * tests; not installed.
 */
#ifndef XTCAM_ALLOC_H
#define XTCAM_ALLOC_H

#include <stddef.h>

void *xtcam_malloc(size_t size);
void *xtcam_calloc(size_t n, size_t size);   /* fails on n * size overflow */

/*
 * Fault injection (tests only; process-wide, not thread-safe): after this
 * call, `n` more allocations succeed, the next one fails, and injection
 * turns itself off again; n < 0 turns it off now (the default).  Returns
 * how many allocations were made through the wrappers since the previous
 * call, so a test can count the allocations of an operation and then fail
 * each one in turn.
 */
long xtcam_alloc_fail_after(long n);

#endif
