/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The packet key: what the parser stage extracts from a frame and what every
 * TCAM entry is matched against.  Shared by the BPF programs, the rule
 * compiler, the reference classifier and (through BTF) bpftool.
 *
 * No libc here: this header is included by BPF code.
 */
#ifndef XTCAM_KEY_H
#define XTCAM_KEY_H

#include <linux/types.h>

/*
 * Presence flags (key.flags).  A field is only meaningful when the flag that
 * covers it is set: the rule compiler adds the covering flag to the value and
 * mask of every entry that matches the field, so a truncated or malformed
 * header (whose fields stay zero) can never match a rule on that field.
 */
enum xtcam_key_flag {
	XTCAM_F_ETH       = 1 << 0,  /* Ethernet header complete: MACs, eth_type */
	XTCAM_F_VLAN1     = 1 << 1,  /* outer 802.1Q/802.1ad tag complete */
	XTCAM_F_VLAN2     = 1 << 2,  /* inner tag complete */
	XTCAM_F_L3        = 1 << 3,  /* IPv4 header (with options) or IPv6 fixed
	                               * header complete: addresses, tos, ttl */
	XTCAM_F_PROTO     = 1 << 4,  /* ip_proto and fragment state known (IPv6:
	                               * extension header walk completed) */
	XTCAM_F_FRAG      = 1 << 5,  /* packet is a fragment */
	XTCAM_F_FIRSTFRAG = 1 << 6,  /* fragment with offset 0 */
	XTCAM_F_L4        = 1 << 7,  /* TCP/UDP/SCTP ports present (never on a
	                               * non-first fragment) */
	XTCAM_F_TCPFL     = 1 << 8,  /* TCP flags present */
	XTCAM_F_ICMP      = 1 << 9,  /* ICMP/ICMPv6 type and code present */
	XTCAM_F_RAW1      = 1 << 10, /* user raw field 1 read */
	XTCAM_F_RAW2      = 1 << 11, /* user raw field 2 read */
	XTCAM_F_TRUNC     = 1 << 12, /* some header was cut short: by the
	                               * frame's end or the IP datagram's
	                               * (tot_len, payload_len) */
	XTCAM_F_BAD       = 1 << 13, /* malformed: bad version/IHL, IPv4
	                               * tot_len below the header length, too
	                               * many VLAN tags or extension headers */
	XTCAM_F_L3X       = 1 << 14, /* a non-IP header after the tags is
	                               * complete and valid (ARP/RARP, MPLS,
	                               * PPPoE session, CFM): its fields sit
	                               * where the IP ones would (see below) */
	XTCAM_F_OUTER_AD  = 1 << 15, /* the outer tag's TPID is 802.1ad (with
	                               * XTCAM_F_VLAN1; 802.1Q without) */
};

/*
 * Frames that are not IP reuse the IP fields: eth_type says which header
 * they hold, XTCAM_F_L3X that it was read (XTCAM_F_L3 and XTCAM_F_PROTO
 * stay IP-only, so an IP match never sees these).
 *
 *   ARP, RARP (Ethernet/IPv4, request or reply; else not read, as for
 *   flower's dissector):
 *     ip_proto        opcode, low byte (as flower keeps it)
 *     src_ip[0]       sender IP          dst_ip[0]      target IP
 *     src_ip bytes 4-9  sender MAC       dst_ip bytes 4-9  target MAC
 *   MPLS (unicast, multicast): the first XTCAM_MAX_MPLS label stack
 *   entries as they are on the wire, entry d (1-based) in
 *   src_ip[d - 1]; ip_proto has bit d-1 set for each entry present.  IP under MPLS is not read (nor by
 *   flower).
 *   PPPoE session: src_ip[0] = session id << 16 | PPP protocol (a
 *   compressed one-byte protocol widened), both network order.
 *   CFM: ip_tos = the MD level and version byte, ip_proto = the opcode.
 *
 * IP frames: for ip_proto 115 (L2TPv3) the session id, 50 (ESP) and 51
 * (AH, IPv4; IPv6 walks AH as an extension header) the SPI, sit in
 * src_port (high half) and dst_port (low half), with XTCAM_F_L4.
 */
#define XTCAM_MAX_MPLS 4

/*
 * 80 bytes, ten 64-bit words.  The layout puts the fields that tuples hash
 * on most (eth_type, ip_proto, ports, addresses) in the first five words.
 * IPv4 addresses live in src_ip[0]/dst_ip[0]; eth_type tells the family.
 * Multi-byte fields are in network byte order, except flags.
 */
struct xtcam_key {
	/* word 0 */
	__be16 eth_type;      /* L3 protocol after any VLAN tags */
	__u8   ip_proto;      /* upper-layer protocol (after IPv6 ext headers) */
	__u8   ip_tos;        /* IPv4 TOS / IPv6 traffic class */
	__be16 src_port;
	__be16 dst_port;
	/* words 1-4 */
	__be32 src_ip[4];
	__be32 dst_ip[4];
	/* words 5-6 */
	__u8   dst_mac[6];
	__u8   src_mac[6];
	__be16 vlan_tci;      /* outer tag: pcp(3) dei(1) vid(12) */
	__be16 vlan_ethtype;  /* ethertype after the outer tag */
	/* word 7 */
	__be16 cvlan_tci;     /* inner tag */
	__be16 cvlan_ethtype; /* ethertype after the inner tag */
	__u8   ip_ttl;        /* IPv4 TTL / IPv6 hop limit */
	__u8   icmp_type;
	__u8   icmp_code;
	__u8   pad0;
	/* word 8 */
	__be16 tcp_flags;     /* 12 bits, as tc-flower */
	__u16  flags;         /* enum xtcam_key_flag, host order */
	__be32 raw1;          /* user field 1, right-aligned, network order */
	/* word 9 */
	__be32 raw2;
	__u32  ifindex;       /* the device the frame arrived on (host
	                       * order; 0 where the program cannot tell) */
} __attribute__((aligned(8)));   /* read as 64-bit words */

#define XTCAM_KEY_WORDS (sizeof(struct xtcam_key) / sizeof(__u64))

/* Raw (user-defined) field configuration, per block. */
enum xtcam_raw_layer {
	XTCAM_RAW_NONE = 0,
	XTCAM_RAW_L2   = 1,   /* from the first byte of the frame */
	XTCAM_RAW_L3   = 2,   /* from the first byte after the VLAN tags; for
	                       * IP, within the datagram */
	XTCAM_RAW_L4   = 3,   /* from the first byte of the L4 header, within
	                       * the datagram */
};

#define XTCAM_RAW_MAX_OFF 1024

struct xtcam_raw_spec {
	__u8  layer;          /* enum xtcam_raw_layer */
	__u8  len;            /* 1..4 bytes */
	__u16 offset;         /* bytes from the layer start, < XTCAM_RAW_MAX_OFF */
};

/* Parser bounds. */
#define XTCAM_MAX_VLAN    2
#define XTCAM_MAX_EXTHDR  8

#endif
