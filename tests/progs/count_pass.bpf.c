// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * "Somebody else's" XDP program for the attach tests: counts the frames it
 * sees and passes them.  Loaded with xdp-loader, so that it sits on the
 * interface before xtcam comes (in libxdp's dispatcher where the kernel
 * allows one).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cp_hits SEC(".maps");

SEC("xdp")
int count_pass(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&cp_hits, &zero);

	(void)ctx;
	if (n)
		__sync_fetch_and_add(n, 1);
	return XDP_PASS;
}
