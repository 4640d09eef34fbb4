// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The library API for controllers (xtcam/xtcam.h) against a block that
 * exists (bench/api.sh makes it: bound, filled): the rate of changes and
 * the latency of one change, for
 *   - single changes, each committed (xtcam_ctl_rule_add, _del), and
 *   - atomic batches (xtcam_ctl_batch_*, one commit each),
 * each for /32 source addresses (one mask; rules given as text, as a
 * controller writes them) and for rules of a ClassBench-style set
 * (tests/lib/classbench.c: several masks and port ranges, rules given as
 * struct xtcam_rule), whose new tuples the changes create and fill.  Every
 * rule added is deleted again: the rate counts adds and deletes.  The
 * latency of a change is the time to its commit: of a single change, its
 * call; of a batch's change, the batch's commit.
 *
 * Usage: api -b BLOCK [-n SINGLES] [-B BATCHES] [-s BATCH_SIZE] [-o FILE]
 * Writes markdown table rows (| set | mode | changes | s | changes/s |
 * p50 ms | p99 ms |) to FILE (appended) or stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "xtcam/xtcam.h"
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

/* nearest rank */
static double pct(double *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	k = (size_t)(p / 100 * (double)n + 0.999999);
	return v[k ? k - 1 : 0];
}

static FILE *out;

static void row(const char *set, const char *mode, size_t changes, double secs, double *lat,
		size_t nlat)
{
	double p50 = pct(lat, nlat, 50), p99 = pct(lat, nlat, 99);

	fprintf(out, "| %s | %s | %zu | %.2f | %.0f | %.3f | %.3f |\n", set, mode, changes, secs,
		secs > 0 ? (double)changes / secs : 0, p50 * 1e3, p99 * 1e3);
	fflush(out);
	fprintf(stderr, "api: %s %s: %zu changes in %.2f s, %.0f/s, p50 %.3f ms, p99 %.3f ms\n",
		set, mode, changes, secs, secs > 0 ? (double)changes / secs : 0, p50 * 1e3,
		p99 * 1e3);
}

static void die(struct xtcam_ctl *c, const char *what)
{
	fprintf(stderr, "api: %s: %s\n", what, xtcam_ctl_strerror(c));
	exit(1);
}

/* rule i of the /32 set: 198.18.0.0/15 has room for 131072 */
static void text32(char *buf, size_t len, size_t i)
{
	snprintf(buf, len, "prio 7 handle %zu src_ip 198.%zu.%zu.%zu action drop",
		 4000000000u + i, 18 + i / 65536 % 2, i / 256 % 256, i % 256);
}

int main(int argc, char **argv)
{
	size_t singles = 2000, batches = 20, bsz = 1000, i, k, n;
	const char *block = NULL;
	char err[XTCAM_CTL_ERR_MAX], text[160];
	struct xtcam_ctl *c;
	struct xtcam_ctl_batch *b;
	struct cb_set cb;
	double *lat, t0, t1, t;
	int opt;

	out = stdout;
	while ((opt = getopt(argc, argv, "b:n:B:s:o:")) != -1) {
		switch (opt) {
		case 'b': block = optarg; break;
		case 'n': singles = strtoul(optarg, NULL, 10); break;
		case 'B': batches = strtoul(optarg, NULL, 10); break;
		case 's': bsz = strtoul(optarg, NULL, 10); break;
		case 'o':
			out = fopen(optarg, "a");
			if (!out) {
				perror(optarg);
				return 1;
			}
			break;
		default:
			fprintf(stderr, "usage: api -b BLOCK [-n SINGLES] [-B BATCHES] "
				"[-s BATCH_SIZE] [-o FILE]\n");
			return 2;
		}
	}
	if (!block || !bsz || bsz > XTCAM_CTL_BATCH_MAX || singles + batches * bsz > 131072) {
		fprintf(stderr, "api: -b BLOCK; 1 <= -s <= %u; -n + -B x -s <= 131072\n",
			XTCAM_CTL_BATCH_MAX);
		return 2;
	}
	n = singles > batches * bsz ? singles : batches * bsz;
	lat = calloc(2 * n + 1, sizeof(*lat));
	if (!lat || cb_generate(&cb, &(struct cb_params){ (uint32_t)n, 4, 10 }, 24))
		return 1;
	/* the set's rules get handles of their own, above the /32 ones */
	for (i = 0; i < cb.n; i++)
		cb.rules[i].handle = (__u32)(4200000000u + i);
	if (xtcam_ctl_open(&c, NULL, err, sizeof(err))) {
		fprintf(stderr, "api: %s\n", err);
		return 1;
	}
	b = xtcam_ctl_batch_begin(c, block);
	if (!b)
		return 1;

	/* /32, single changes */
	t0 = now();
	for (i = 0; i < singles; i++) {
		text32(text, sizeof(text), i);
		t = now();
		if (xtcam_ctl_rule_add(c, block, text, NULL))
			die(c, "rule add");
		lat[i] = now() - t;
	}
	for (i = 0; i < singles; i++) {
		t = now();
		if (xtcam_ctl_rule_del(c, block, (__u32)(4000000000u + i)))
			die(c, "rule del");
		lat[singles + i] = now() - t;
	}
	t1 = now();
	row("/32, one mask", "single", 2 * singles, t1 - t0, lat, 2 * singles);

	/* /32, batches */
	t0 = now();
	for (k = 0; k < 2 * batches; k++) {
		for (i = 0; i < bsz; i++) {
			size_t r = (k % batches) * bsz + i;

			if (k < batches) {
				text32(text, sizeof(text), r);
				if (xtcam_ctl_batch_add(b, text, NULL))
					die(c, "batch add");
			} else if (xtcam_ctl_batch_del(b, (__u32)(4000000000u + r))) {
				die(c, "batch del");
			}
		}
		t = now();
		if (xtcam_ctl_batch_commit(b))
			die(c, "batch commit");
		lat[k] = now() - t;
	}
	t1 = now();
	snprintf(text, sizeof(text), "batches of %zu", bsz);
	row("/32, one mask", text, 2 * batches * bsz, t1 - t0, lat, 2 * batches);

	/* ClassBench-style, single changes */
	t0 = now();
	for (i = 0; i < singles; i++) {
		t = now();
		if (xtcam_ctl_rule_add_r(c, block, &cb.rules[i], NULL))
			die(c, "rule add (ClassBench)");
		lat[i] = now() - t;
	}
	for (i = 0; i < singles; i++) {
		t = now();
		if (xtcam_ctl_rule_del(c, block, cb.rules[i].handle))
			die(c, "rule del (ClassBench)");
		lat[singles + i] = now() - t;
	}
	t1 = now();
	row("ClassBench-style ACL", "single", 2 * singles, t1 - t0, lat, 2 * singles);

	/* ClassBench-style, batches */
	t0 = now();
	for (k = 0; k < 2 * batches; k++) {
		for (i = 0; i < bsz; i++) {
			size_t r = (k % batches) * bsz + i;

			if (k < batches ? xtcam_ctl_batch_add_r(b, &cb.rules[r], NULL) :
					  xtcam_ctl_batch_del(b, cb.rules[r].handle))
				die(c, "batch (ClassBench)");
		}
		t = now();
		if (xtcam_ctl_batch_commit(b))
			die(c, "batch commit (ClassBench)");
		lat[k] = now() - t;
	}
	t1 = now();
	snprintf(text, sizeof(text), "batches of %zu", bsz);
	row("ClassBench-style ACL", text, 2 * batches * bsz, t1 - t0, lat, 2 * batches);

	xtcam_ctl_batch_free(b);
	xtcam_ctl_close(c);
	cb_free(&cb);
	free(lat);
	if (out != stdout)
		fclose(out);
	return 0;
}
