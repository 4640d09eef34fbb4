// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Benchmark floor: xtcam's parser stage into a per-CPU key, then drop. */
#include "../../bpf/parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xtcam_key);
} key SEC(".maps");

SEC("xdp")
int floor_parse(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xtcam_key *k = bpf_map_lookup_elem(&key, &zero);

	if (!k)
		return XDP_ABORTED;
	xtcam_parse_frame((void *)(long)ctx->data, (void *)(long)ctx->data_end, k, 0, 1);
	return XDP_DROP;
}
