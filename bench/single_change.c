// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Single rule changes on a loaded data path: how each one was published
 * (in place, by kind of store, or through a flip and why), and what a
 * change costs the updater.
 *
 * For ClassBench-style sets (tests/lib/classbench.c) of N rules, IPv4,
 * IPv6 and mixed: the set is loaded in one batch, then for S rules of it
 * (evenly spread) three single changes each: delete it, add it back,
 * replace it with another priority (and another destination port range
 * half of the time).  The counts come from xtcam_dp_timing.  Then probes a
 * frame (the C lookup over the same structure) on a frame mix, after the
 * changes and after a flip that compacts what they left.
 *
 * With -k (root): the same on a data path in the kernel (BPF maps), and
 * the median time per change, in place and with every change through a
 * flip (XTCAM_DP_FLIP_ONLY, the way all changes went before).
 *
 * Usage: single_change [-k] [-n RULES] [-s SAMPLE]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "xtcam/compile.h"
#include "xtcam/dp.h"
#include "classbench.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double probes_per_frame(struct xtcam_dp *dp, const struct cb_set *s, uint64_t seed)
{
	struct t_rng g = { seed };
	unsigned long total = 0;
	int i;

	for (i = 0; i < 5000; i++) {
		struct pkt_spec ps;
		struct pkt p;
		unsigned int np = 0;

		cb_packet(&g, s, t_below(&g, 2) ? &s->rules[t_below(&g, (uint32_t)s->n)] : NULL, &ps);
		pkt_build(&ps, NULL, &p);
		xtcam_dp_classify(dp, &p.key, NULL, &np);
		total += np;
	}
	return (double)total / 5000;
}

static int run(uint32_t n, int family, uint32_t sample, unsigned int flags, bool timed)
{
	struct cb_params cp = { .nrules = n, .family = family, .pass_pct = 50 };
	struct xtcam_block_spec spec = { .capacity = 4 * n };
	struct xtcam_dp_op *ops;
	struct xtcam_dp_timing t0, t1;
	struct xtcam_dp *dp;
	struct cb_set s;
	double *dt = NULL, before, after, compact;
	size_t i, nd = 0, step;
	char err[256];
	int e, pass;

	if (cb_generate(&s, &cp, 0x5eedu + n + (unsigned)family))
		return -ENOMEM;
	ops = calloc(s.n, sizeof(*ops));
	dt = calloc(3 * (size_t)sample, sizeof(*dt));
	if (!ops || !dt)
		return -ENOMEM;
	e = xtcam_dp_create(&spec, flags, &dp);
	if (e) {
		fprintf(stderr, "create: %s\n", strerror(-e));
		return e;
	}
	for (i = 0; i < s.n; i++)
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &s.rules[i],
					      .act = { .type = s.rules[i].action.type } };
	e = xtcam_dp_apply(dp, ops, s.n, err, sizeof(err));
	if (e) {
		fprintf(stderr, "load: %s\n", err);
		return e;
	}
	before = probes_per_frame(dp, &s, 7);
	xtcam_dp_timing(dp, &t0);
	step = s.n / sample ? s.n / sample : 1;
	for (i = 0; i < s.n && nd < 3 * (size_t)sample; i += step) {
		struct xtcam_rule r = s.rules[i];

		for (pass = 0; pass < 3; pass++) {
			struct xtcam_dp_op op;
			double a;

			if (pass == 0) {
				op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = r.handle };
			} else if (pass == 1) {
				op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &r,
							   .act = { .type = r.action.type } };
			} else {
				r.prio = 1 + (r.prio + 7919) % 65534;
				if (i % 2 && r.dport_hi < 65535)
					r.dport_hi++;
				op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE, .rule = &r,
							   .act = { .type = r.action.type } };
			}
			a = now();
			e = xtcam_dp_apply(dp, &op, 1, err, sizeof(err));
			dt[nd++] = now() - a;
			if (e) {
				fprintf(stderr, "change: %s\n", err);
				return e;
			}
		}
		s.rules[i] = r;
	}
	xtcam_dp_timing(dp, &t1);
	after = probes_per_frame(dp, &s, 7);
	{
		/* a flip: an add and a delete in one batch */
		struct xtcam_rule x = s.rules[0];
		struct xtcam_dp_op two[2] = {
			{ .cmd = XTCAM_DP_DEL, .handle = x.handle },
			{ .cmd = XTCAM_DP_ADD, .rule = &x, .act = { .type = x.action.type } },
		};

		x.handle = 0x7fffffff;
		e = xtcam_dp_apply(dp, two, 2, err, sizeof(err));
		if (e)
			fprintf(stderr, "flip: %s\n", err);
		s.rules[0] = x;
	}
	compact = probes_per_frame(dp, &s, 7);
	e = xtcam_dp_verify(dp, err, sizeof(err));
	if (e)
		fprintf(stderr, "verify: %s\n", err);
	qsort(dt, nd, sizeof(*dt), cmp_d);
#define D(f) (t1.f - t0.f)
	printf("| %s | %u | %zu | %lu | %lu | %lu | %lu | %lu | %.1f | %lu | %lu | %lu | %lu | %lu | %lu | %lu | %.2f / %.2f / %.2f |",
	       family == 4 ? "IPv4" : family == 6 ? "IPv6" : "mixed", n, nd, D(inplace),
	       D(pub_append), D(pub_elem), D(pub_hole), D(pub_shift),
	       D(pub_shift) ? (double)D(shift_len) / (double)D(pub_shift) : 0.0,
	       D(pub_del), D(pub_swap), D(pub_two), D(flip_tuple), D(flip_bounds), D(flip_space),
	       D(limbo_syncs), before, after, compact);
	if (timed)
		printf(" %.1f / %.1f us | %lu |", dt[nd / 2] * 1e6, dt[nd * 99 / 100] * 1e6, D(syncs));
	printf("\n");
#undef D
	xtcam_dp_free(dp);
	cb_free(&s);
	free(ops);
	free(dt);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t sizes[2] = { 10000, 100000 }, sample = 2000, nsz = 2;
	const int fams[3] = { 4, 6, 0 };
	bool kernel = false;
	int c, f;
	uint32_t i;

	while ((c = getopt(argc, argv, "kn:s:")) != -1) {
		switch (c) {
		case 'k':
			kernel = true;
			break;
		case 'n':
			sizes[0] = (uint32_t)atoi(optarg);
			nsz = 1;
			break;
		case 's':
			sample = (uint32_t)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: single_change [-k] [-n RULES] [-s SAMPLE]\n");
			return 2;
		}
	}
	printf("| set | rules | changes | in place | append | new element | hole | shift | "
	       "shift length | delete | replace, 1 store | replace, 2 stores | flip: new tuple | "
	       "flip: bounds | flip: no room | limbo waits | probes a frame: before / after / after a flip |%s\n",
	       kernel ? " time a change: median / p99 | grace periods |" : "");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|%s\n",
	       kernel ? "---|---:|" : "");
	for (i = 0; i < nsz; i++)
		for (f = 0; f < 3; f++)
			if (run(sizes[i], fams[f], sample, kernel ? XTCAM_DP_NOTIME : XTCAM_DP_MEMORY,
				kernel))
				return 1;
	return 0;
}
