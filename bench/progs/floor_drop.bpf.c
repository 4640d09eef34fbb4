// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Benchmark floor: an XDP program that only drops. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int floor_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}
