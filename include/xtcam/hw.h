/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The NIC offload variant's tables (NFP-style).  What such a NIC takes:
 * one program (no tail calls), array and hash maps only, at most 64 bytes
 * of key plus value per map entry, no per-CPU maps, counters by atomic
 * add, return codes 0-3, no clock.  So the offloaded TCAM is a short array
 * of ternary entries over a compact key, in priority order, first match
 * wins; port ranges are expanded into prefixes (one entry each).
 * No libc.
 */
#ifndef XTCAM_HW_H
#define XTCAM_HW_H

#include <linux/types.h>
#include "key.h"

/* The compact key: what an offloaded rule can match (24 bytes). */
struct xtcam_hw_key {
	__be16 eth_type;
	__u8   ip_proto;
	__u8   ip_tos;
	__be16 src_port;
	__be16 dst_port;
	__be32 src_ip;         /* IPv4 only */
	__be32 dst_ip;
	__be16 vlan_tci;
	__be16 tcp_flags;
	__u16  flags;          /* XTCAM_F_* */
	__u8   icmp_type;
	__u8   icmp_code;
} __attribute__((aligned(4)));

/* One TCAM entry: 48 bytes of value (+ 4 of key) per map entry. */
struct xtcam_hw_entry {
	struct xtcam_hw_key value;
	struct xtcam_hw_key mask;
};

/* The associated memory: what the entry does and where it counts. */
struct xtcam_hw_act {
	__u32 type;            /* XTCAM_ACT_DROP, PASS or TX */
	__u32 cnt;             /* counter index (the rule's) */
};

struct xtcam_hw_counter {
	__u64 packets;
	__u64 bytes;
};

struct xtcam_hw_cfg {
	__u32 nentries;        /* entries in use, from index 0 */
	__u32 dflt;            /* default action type */
	__u32 pad[2];
};

/* The largest table the program walks (fully unrolled: NFP has no
 * loops).  A device may take fewer: the loader sizes the maps to it. */
#define XTCAM_HW_MAX_ENTRIES 16

/*
 * What the loader wrote to a device, kept in a host map next to the
 * device's (hw_image, pinned with them): the rule of each counter index,
 * so that counters can be read per rule and carried across rewrites that
 * move rules to other indexes.  Never offloaded.
 */
struct xtcam_hw_image {
	__u32 nrules;          /* counter indexes in use, from 0 */
	__u32 nentries;        /* = hw_cfg.nentries */
	__u32 max;             /* entries the device's maps hold */
	__u32 seq;             /* rewrites */
	__u32 handle[XTCAM_HW_MAX_ENTRIES];
};

/* Fill a compact key from the full key (both sides use it). */
static inline void xtcam_hw_key_of(const struct xtcam_key *k, struct xtcam_hw_key *h)
{
	h->eth_type = k->eth_type;
	h->ip_proto = k->ip_proto;
	h->ip_tos = k->ip_tos;
	h->src_port = k->src_port;
	h->dst_port = k->dst_port;
	h->src_ip = k->src_ip[0];
	h->dst_ip = k->dst_ip[0];
	h->vlan_tci = k->vlan_tci;
	h->tcp_flags = k->tcp_flags;
	h->flags = k->flags;
	h->icmp_type = k->icmp_type;
	h->icmp_code = k->icmp_code;
}

#endif
