// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Trivial XDP programs for the vmtest smoke checks (not part of xtcam):
 * small enough for netdevsim's offload (one map of one entry, no flags).
 * vmtest/run.sh builds it into BUILD/vmtest/xdp-test.bpf.o.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} vmtest_cnt SEC(".maps");

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* counts packets, then passes them */
SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&vmtest_cnt, &zero);

	if (c)
		__sync_fetch_and_add(c, 1);
	return XDP_PASS;
}

/* bpf_loop (5.17+): sums 1..10 into the counter, XDP_PASS when it got 55 */
static long add_one(__u32 i, void *ctx)
{
	*(__u64 *)ctx += i + 1;
	return 0;
}

SEC("xdp")
int xdp_loop(struct xdp_md *ctx)
{
	__u64 sum = 0;

	bpf_loop(10, add_one, &sum, 0);
	return sum == 55 ? XDP_PASS : XDP_ABORTED;
}
