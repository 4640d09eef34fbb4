// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Fill xdp-filter's port table to N entries in one batch: the xdp-filter
 * CLI takes tens of seconds per 10,000 rules (one command each), so the
 * live benchmark lets the CLI add port 9 and copies its value to ports
 * 10 .. N+8 here.  The program is the one attached to DEV in NETNS.
 *
 * Usage: xf_fill NETNS DEV N      (exit 0, or 1 with a message)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tlib.h"

int main(int argc, char **argv)
{
	int ncpu = libbpf_num_possible_cpus(), n, i, mfd, err;
	__u32 id = 0, k9 = htons(9), count;
	__u64 *vals, tmpl[256];
	__u32 *keys;

	if (argc != 4 || (n = atoi(argv[3])) < 1 || n > 65000 || ncpu <= 0 || ncpu > 256) {
		fprintf(stderr, "usage: xf_fill NETNS DEV N (1-65000)\n");
		return 1;
	}
	err = t_xdp_prog_in(argv[1], argv[2], &id);
	if (err) {
		fprintf(stderr, "xf_fill: no XDP program on %s in %s: %s\n", argv[2], argv[1], strerror(-err));
		return 1;
	}
	mfd = t_prog_map(id, "filter_ports");
	if (mfd < 0) {
		fprintf(stderr, "xf_fill: program %u has no filter_ports map\n", id);
		return 1;
	}
	if (bpf_map_lookup_elem(mfd, &k9, tmpl)) {
		fprintf(stderr, "xf_fill: port 9 is not in the table: %s\n", strerror(errno));
		return 1;
	}
	if (n == 1)
		return 0;
	keys = calloc((size_t)n, sizeof(*keys));
	vals = calloc((size_t)n * (size_t)ncpu, sizeof(*vals));
	if (!keys || !vals)
		return 1;
	for (i = 0; i < n - 1; i++) {
		keys[i] = htons((__u16)(10 + i));
		memcpy(vals + (size_t)i * (size_t)ncpu, tmpl, sizeof(__u64) * (size_t)ncpu);
	}
	count = (__u32)(n - 1);
	if (bpf_map_update_batch(mfd, keys, vals, &count, NULL)) {
		fprintf(stderr, "xf_fill: batch update: %s\n", strerror(errno));
		return 1;
	}
	free(keys);
	free(vals);
	close(mfd);
	return 0;
}
