/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The maps of one block, as the host (native/generic XDP) programs use them.
 * Sizes here are placeholders: the loader sets max_entries from the block's
 * capacity before loading.
 */
#ifndef XTCAM_BPF_MAPS_H
#define XTCAM_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xtcam/table.h"

/* block configuration: active generation, bucket geometry, raw fields */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xtcam_config);
} config SEC(".maps");

/* per-generation header: tuple count, rule and entry counts, default */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct xtcam_gen);
} gens SEC(".maps");

/* tuple table, [gen * XTCAM_TUPLE_REGION + i]: the set sorted by
 * min_rank (the loader's; the classifier walks tlists) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * XTCAM_TUPLE_REGION);
	__type(key, __u32);
	__type(value, struct xtcam_tuple);
} tuples SEC(".maps");

/* each packet family's tuple list, [gen * XTCAM_NLISTS + family]: the
 * classifier's view of the tuple set, one lookup a frame.  Mapped by the
 * loader, which lowers bounds in place by word stores. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2 * XTCAM_NLISTS);
	__type(key, __u32);
	__type(value, struct xtcam_tlist);
} tlists SEC(".maps");

/* bucket array, [gen * bregion + i]: candidate slots per hash bucket.
 * Mapped by the loader, which publishes single changes by word stores. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct xtcam_bucket);
} buckets SEC(".maps");

/* TCAM records, by slot: value, mask, port ranges, rank */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xtcam_rec);
} records SEC(".maps");

/* action table (associated memory), by slot */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xtcam_action);
} actions SEC(".maps");

/* per-rule counters, by the rule's counter index */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xtcam_counter);
} counters SEC(".maps");

/* block counters: misses (default action), internal errors */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XTCAM_STAT_MAX);
	__type(key, __u32);
	__type(value, struct xtcam_counter);
} stats SEC(".maps");

/* rule registry, (gen, handle) -> slot and tuple; loader only.
 * Preallocated (a generation holds at most the capacity's rules, and the
 * loader removes a generation's entries before it adds): an insert takes
 * an element from a free list instead of allocating one. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct xtcam_hkey);
	__type(value, struct xtcam_hval);
} rules SEC(".maps");

/* allocation bitmaps (slots, counters, overflow buckets) per generation;
 * loader only */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} alloc SEC(".maps");

/* redirect targets */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, XTCAM_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} devmap SEC(".maps");

/* what each devmap slot is, by name (loader only) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XTCAM_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct xtcam_target);
} targets SEC(".maps");

/* CPU steering targets */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, XTCAM_CPUMAP_SIZE);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpumap SEC(".maps");

/* The same two for the no-frags classifier (xtcam.bpf.c): a map that can
 * hold programs takes only programs like its owner, frags included, so
 * each classifier has its own; the loader writes both alike. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, XTCAM_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} devmap_nf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, XTCAM_CPUMAP_SIZE);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpumap_nf SEC(".maps");

/* the key, from parser to classifier */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xtcam_scratch);
} scratch SEC(".maps");

#endif
