// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam offload variant: what an NFP-style NIC can run.  The same parser
 * as the host programs, then a linear TCAM over a compact key in array
 * maps, all in one program: no tail call, no loops (unrolled), no helper
 * but map lookup, no per-CPU map, counters by atomic add, verdicts drop,
 * pass and tx only.  It also runs in native XDP, which is how the tests
 * prove its verdicts.
 *
 * No global data either: an offloaded map has no direct value access, so
 * the kernel refuses a device-bound program that reads .rodata ("no
 * direct value access support for this map type").  The device's limit is
 * the size the loader gives hw_entries: a lookup past it finds nothing,
 * and cfg.nentries never exceeds it.
 */
#include "parse.h"
#include "xtcam/table.h"
#include "xtcam/hw.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* entries in use and the default action */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xtcam_hw_cfg);
} hw_cfg SEC(".maps");

/* the TCAM: value and mask per entry, in priority order */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XTCAM_HW_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct xtcam_hw_entry);
} hw_entries SEC(".maps");

/* the associated memory: action and counter of each entry */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XTCAM_HW_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct xtcam_hw_act);
} hw_acts SEC(".maps");

/* per-rule counters (atomic adds) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XTCAM_HW_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct xtcam_hw_counter);
} hw_counters SEC(".maps");

static __always_inline int hw_match(const struct xtcam_hw_key *k,
				    const struct xtcam_hw_entry *e)
{
	const __u32 *kw = (const __u32 *)k;
	const __u32 *v = (const __u32 *)&e->value;
	const __u32 *m = (const __u32 *)&e->mask;
	__u32 d = 0;
	int i;

#pragma unroll
	for (i = 0; i < (int)(sizeof(*k) / 4); i++)
		d |= (kw[i] & m[i]) ^ v[i];
	return !d;
}

static __always_inline int verdict(__u32 type)
{
	switch (type) {
	case XTCAM_ACT_DROP:
		return XDP_DROP;
	case XTCAM_ACT_TX:
		return XDP_TX;
	default:
		return XDP_PASS;
	}
}

SEC("xdp")
int xtcam_hw(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xtcam_hw_counter *c;
	struct xtcam_hw_key hk;
	struct xtcam_hw_cfg *cfg;
	struct xtcam_key k;
	__u32 zero = 0, n, i;

	cfg = bpf_map_lookup_elem(&hw_cfg, &zero);
	if (!cfg)
		return XDP_PASS;
	xtcam_parse_frame(data, data_end, &k, 0, 0);
	xtcam_hw_key_of(&k, &hk);
	n = cfg->nentries;

#pragma unroll
	for (i = 0; i < XTCAM_HW_MAX_ENTRIES; i++) {
		struct xtcam_hw_entry *e;
		struct xtcam_hw_act *a;
		__u32 idx = i;

		if (i >= n)
			break;
		e = bpf_map_lookup_elem(&hw_entries, &idx);
		if (!e)
			break;          /* past the device's map */
		if (!hw_match(&hk, e))
			continue;
		a = bpf_map_lookup_elem(&hw_acts, &idx);
		if (!a)
			return XDP_PASS;
		c = bpf_map_lookup_elem(&hw_counters, &a->cnt);
		if (c) {
			__sync_fetch_and_add(&c->packets, 1);
			__sync_fetch_and_add(&c->bytes, (__u64)(data_end - data));
		}
		return verdict(a->type);
	}
	return verdict(cfg->dflt);
}
