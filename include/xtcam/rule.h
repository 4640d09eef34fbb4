/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A rule as the user wrote it, parsed: the matches (ternary value/mask over
 * the key, port ranges), priority, handle and action.  Userspace only.
 *
 * The syntax layer (user/syntax.c) fills value/mask for the fields the user
 * named, and sets `keywords`; it adds nothing implicit except the address
 * family that an IP address implies (eth_type).  The compiler
 * (user/compile.c) adds the presence flags that cover each matched field
 * (so a truncated header never matches) and expands ranges.
 *
 * No libc: the state BPF object includes this for BTF.
 */
#ifndef XTCAM_RULE_H
#define XTCAM_RULE_H

#include <linux/types.h>
#include "key.h"
#include "table.h"

/* Match keywords (tc-flower's where flower has them). */
enum xtcam_kw {
	XTCAM_KW_SRC_MAC,
	XTCAM_KW_DST_MAC,
	XTCAM_KW_VLAN,          /* vlan tagged | untagged */
	XTCAM_KW_VLAN_ID,
	XTCAM_KW_VLAN_PRIO,
	XTCAM_KW_VLAN_ETHTYPE,
	XTCAM_KW_CVLAN_ID,
	XTCAM_KW_CVLAN_PRIO,
	XTCAM_KW_CVLAN_ETHTYPE,
	XTCAM_KW_ETH_TYPE,      /* alias: protocol */
	XTCAM_KW_IP_PROTO,
	XTCAM_KW_SRC_IP,
	XTCAM_KW_DST_IP,
	XTCAM_KW_IP_TOS,
	XTCAM_KW_IP_TTL,
	XTCAM_KW_IP_FLAGS,
	XTCAM_KW_SRC_PORT,
	XTCAM_KW_DST_PORT,
	XTCAM_KW_TCP_FLAGS,
	XTCAM_KW_TYPE,          /* icmp/icmpv6 type */
	XTCAM_KW_CODE,
	XTCAM_KW_RAW1,
	XTCAM_KW_RAW2,
	/* after the first ones, so that the bits of rules kept in pinned
	 * maps keep their meaning */
	XTCAM_KW_PROTOCOL,      /* flower's: the outermost ethertype */
	XTCAM_KW_NUM_VLANS,
	XTCAM_KW_ARP_OP,
	XTCAM_KW_ARP_SIP,
	XTCAM_KW_ARP_TIP,
	XTCAM_KW_ARP_SHA,
	XTCAM_KW_ARP_THA,
	XTCAM_KW_MPLS_LABEL,    /* the first label stack entry */
	XTCAM_KW_MPLS_TC,
	XTCAM_KW_MPLS_BOS,
	XTCAM_KW_MPLS_TTL,
	XTCAM_KW_MPLS,          /* mpls lse depth N ... */
	XTCAM_KW_PPPOE_SID,
	XTCAM_KW_PPP_PROTO,
	XTCAM_KW_L2TPV3_SID,
	XTCAM_KW_SPI,
	XTCAM_KW_CFM,           /* cfm mdl M op O */
	XTCAM_KW_INDEV,
	XTCAM_KW_MAX,
};

#define XTCAM_KW_BIT(kw) (1ull << (kw))

#define XTCAM_IFNAME_MAX 16      /* IF_NAMESIZE */
#define XTCAM_NETNS_MAX 64      /* netns names, as under /run/netns */
#define XTCAM_NAME_MAX  32      /* block names */

struct xtcam_rule_action {
	__u32 type;             /* enum xtcam_action_type */
	__u32 cpu;              /* XTCAM_ACT_CPU */
	char  dev[XTCAM_IFNAME_MAX]; /* XTCAM_ACT_REDIRECT */
	char  netns[XTCAM_NETNS_MAX]; /* "" = the bound device's namespace */
};

struct xtcam_rule {
	__u32 prio;             /* 1..65535, lower first */
	__u32 handle;           /* 1..2^32-1, unique in the block */
	__u64 keywords;         /* XTCAM_KW_BIT()s the user gave (once a
	                         * __u32 and a zero pad: the same bytes) */
	struct xtcam_key value; /* value & ~mask == 0; port fields zero */
	struct xtcam_key mask;
	__u16 sport_lo, sport_hi;  /* host order; 0-65535 when not matched */
	__u16 dport_lo, dport_hi;
	struct xtcam_rule_action action;
};

/* A block's settings. */
struct xtcam_block_spec {
	char name[XTCAM_NAME_MAX];
	__u32 capacity;                 /* TCAM entries, default 65536 */
	struct xtcam_action dflt;       /* default pass */
	struct xtcam_raw_spec raw[2];
};

#define XTCAM_DEFAULT_CAPACITY 65536u
#define XTCAM_MAX_CAPACITY     (1u << 22)

static inline __u64 xtcam_rule_rank(const struct xtcam_rule *r)
{
	return XTCAM_RANK(r->prio, r->handle);
}

#ifndef __bpf__
/* Initialise a rule that matches everything (ranges full, action pass). */
void xtcam_rule_init(struct xtcam_rule *r);
#endif

#endif
