// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam's registry in bpffs: maps only, no programs.  Loaded once and
 * pinned under /sys/fs/bpf/xtcam/ by the loader.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xtcam/state.h"
#include "xtcam/rule.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* the blocks, by name */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xtcam_block_key);
	__type(value, struct xtcam_block_rec);
} blocks SEC(".maps");

/* every block's rules, one map per generation: a reader of the active
 * generation dumps only its map (half the entries of one map for both) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 23);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xtcam_rule_key);
	__type(value, struct xtcam_rule);
} rules0 SEC(".maps"), rules1 SEC(".maps");

/* every block's rules in (prio, handle) order, per generation (state.h) */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, (1 << 24) + 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xtcam_rank_key);
	__type(value, __u32);
} ranks SEC(".maps");

/* devices bound to blocks, by (netns, ifindex) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xtcam_bind_key);
	__type(value, struct xtcam_bind_rec);
} bindings SEC(".maps");
