/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Assertions the Criterion tests of the CLI share: a command that must
 * succeed, and frames that must be made, sent and counted.
 */
#ifndef XTCAM_TCLI_H
#define XTCAM_TCLI_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "tnet.h"

/* xtcam ARGS... exits 0, or the test fails with its exit code and output */
#define XT_OK(...) do { char *o_ = NULL; int rc_ = t_xtcam(&o_, __VA_ARGS__); \
	cr_assert_eq(rc_, 0, "xtcam %s: exit %d: %s", #__VA_ARGS__, rc_, o_); free(o_); } while (0)
/* the shell command exits 0 */
#define SH_OK(...) do { char *o_ = NULL; int rc_ = t_sh(&o_, __VA_ARGS__); \
	cr_assert_eq(rc_, 0, "%s: exit %d: %s", #__VA_ARGS__, rc_, o_); free(o_); } while (0)

/* In a suite's .init: skip without root, else run the CLI (XTCAM_BIN,
 * default build/xtcam) on an instance of this test's own, named into
 * inst ("xtcam-test-PID"). */
static inline void t_cli_instance(char *inst, size_t len)
{
	if (geteuid())
		cr_skip_test("needs root (BPF, namespaces)");
	snprintf(inst, len, "xtcam-test-%d", (int)getpid());
	setenv("XTCAM_INSTANCE", inst, 1);
	if (!getenv("XTCAM_BIN"))
		setenv("XTCAM_BIN", "build/xtcam", 1);
}

/* n copies of a frame sent from b: how many reached a */
static inline int through(const struct t_pair *p, const struct pkt_spec *s, uint32_t marker,
			  int n)
{
	int got = t_through(p, s, marker, n);

	cr_assert_geq(got, 0, "frames not made, sent or counted");
	return got;
}

#endif
