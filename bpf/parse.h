/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The parser stage: frame -> struct xtcam_key.  Shared by every program
 * variant (staged host programs and the NIC offload program).
 *
 * Rules of the road: never read past data_end; every walk is bounded; a
 * field is written only together with the flag that says it is valid; a
 * header that is cut short sets XTCAM_F_TRUNC, a malformed one XTCAM_F_BAD.
 * Only the first buffer of a multi-buffer frame is parsed (headers are
 * there).
 *
 * The IP datagram ends where its header says (IPv4 tot_len, IPv6 40 +
 * payload_len), or at the frame's end if that comes first (a frame cut
 * short, or a multi-buffer frame whose first buffer ends sooner).  Bytes
 * after it (Ethernet padding, trailers) are not the datagram's, as for the
 * kernel's IP stack: an extension or L4 header that does not fit in the
 * datagram is cut short (XTCAM_F_TRUNC), and raw l3/l4 fields end there
 * too; l2 raw fields are read up to the frame's end.  tot_len below the
 * IPv4 header's length is malformed.  IPv6 payload_len 0 (a jumbogram, or
 * the kernel's BIG TCP) means "up to the frame's end".
 *
 * Every read after the IP header is bounded twice: by rem, the datagram's
 * bytes left from the header being read (a scalar), and by end (the frame:
 * data_end, which is what the verifier can check).  rem is tested first:
 * then both ways out leave the verifier the same packet range, and it
 * prunes the second.
 */
#ifndef XTCAM_BPF_PARSE_H
#define XTCAM_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xtcam/key.h"

#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif
#define XTCAM_NH_HOPOPTS  0
#define XTCAM_NH_ROUTING  43
#define XTCAM_NH_FRAGMENT 44
#define XTCAM_NH_AH       51
#define XTCAM_NH_NONE     59
#define XTCAM_NH_DSTOPTS  60

/* The datagram length when the frame gives none (not IP, a malformed or
 * cut IP header, an IPv6 jumbogram): larger than any frame, so the frame's
 * end is the only bound. */
#define XTCAM_DGRAM_ANY   0x100000

struct xtcam_ipv4 {
	__u8   vihl;          /* version:4 ihl:4 */
	__u8   tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;
	__u8   ttl;
	__u8   protocol;
	__be16 check;
	__be32 saddr;
	__be32 daddr;
};

struct xtcam_ipv6 {
	__be32 vtcfl;         /* version:4 tclass:8 flow:20 */
	__be16 payload_len;
	__u8   nexthdr;
	__u8   hop_limit;
	__be32 saddr[4];
	__be32 daddr[4];
};

#define XTCAM_ETH_P_RARP    0x8035
#define XTCAM_ETH_P_MPLS_UC 0x8847
#define XTCAM_ETH_P_MPLS_MC 0x8848
#define XTCAM_ETH_P_PPP_SES 0x8864
#define XTCAM_ETH_P_CFM     0x8902
#define XTCAM_IPPROTO_ESP   50
#define XTCAM_IPPROTO_AH    51
#define XTCAM_IPPROTO_L2TP  115
#define XTCAM_PPP_IP        0x0021

/* The headers that are not IP (key.h says where their fields go): read
 * only for frames that carry them.  p is the first byte after the tags.
 * Returns the flags to add. */
static __always_inline __u16 xtcam_parse_l3x(__u8 *p, __u8 *end, __be16 proto,
					     struct xtcam_key *k)
{
	int i;

	if (proto == bpf_htons(ETH_P_ARP) ||
	    proto == bpf_htons(XTCAM_ETH_P_RARP)) {
		/* Ethernet/IPv4 only, request or reply, as flower reads it */
		if (p + 28 > end)
			return XTCAM_F_TRUNC;
		if (*(__be16 *)p != bpf_htons(1) ||
		    *(__be16 *)(p + 2) != bpf_htons(ETH_P_IP) ||
		    p[4] != 6 || p[5] != 4 || p[6] ||
		    (p[7] != 1 && p[7] != 2))
			return XTCAM_F_BAD;
		k->ip_proto = p[7];
		__builtin_memcpy((__u8 *)k->src_ip + 4, p + 8, 6);
		__builtin_memcpy(k->src_ip, p + 14, 4);
		__builtin_memcpy((__u8 *)k->dst_ip + 4, p + 18, 6);
		__builtin_memcpy(k->dst_ip, p + 24, 4);
		return XTCAM_F_L3X;
	}
	if (proto == bpf_htons(XTCAM_ETH_P_MPLS_UC) ||
	    proto == bpf_htons(XTCAM_ETH_P_MPLS_MC)) {
		__u8 used = 0;
		__u16 f = 0;

#pragma unroll
		for (i = 0; i < XTCAM_MAX_MPLS; i++) {
			__be32 lse;

			if (p + 4 > end) {
				f = XTCAM_F_TRUNC;
				break;
			}
			lse = *(__be32 *)p;
			k->src_ip[i] = lse;
			used |= 1 << i;
			p += 4;
			if (lse & bpf_htonl(0x100))   /* bottom of stack */
				break;
		}
		if (used) {
			k->ip_proto = used;
			f |= XTCAM_F_L3X;
		}
		return f;
	}
	if (proto == bpf_htons(XTCAM_ETH_P_PPP_SES)) {
		__u16 pp;

		if (p + 8 > end)
			return XTCAM_F_TRUNC;
		if (p[0] != 0x11 || p[1])       /* version 1, type 1, code 0 */
			return XTCAM_F_BAD;
		pp = bpf_ntohs(*(__be16 *)(p + 6));
		if (pp & 0x0100)                /* compressed: one byte */
			pp >>= 8;
		k->src_ip[0] = bpf_htonl((__u32)bpf_ntohs(*(__be16 *)(p + 2)) << 16 | pp);
		return XTCAM_F_L3X;
	}
	if (proto == bpf_htons(XTCAM_ETH_P_CFM)) {
		if (p + 2 > end)
			return XTCAM_F_TRUNC;
		k->ip_tos = p[0];
		k->ip_proto = p[1];
		return XTCAM_F_L3X;
	}
	return 0;
}

/* Parse one frame into k (which the caller need not clear).  raw may be
 * NULL (no user fields).  full: also the headers that only the host
 * programs read (xtcam_parse_l3x, the L2TPv3 session id and the IPsec
 * SPI); the offload program, whose key has none of them, passes 0. */
static __always_inline void xtcam_parse_frame(void *data, void *data_end,
					      struct xtcam_key *k,
					      const struct xtcam_raw_spec *raw,
					      const int full)
{
	__u8 *p = data, *end = data_end;
	__u8 *l3 = 0, *l4 = 0;
	__u64 dlen = XTCAM_DGRAM_ANY;  /* the datagram's bytes from l3 on */
	__u64 rem = XTCAM_DGRAM_ANY;   /* ... from p on (at out: from l4 on) */
	__u16 flags = 0;
	__be16 proto;
	__u8 nh = 0;
	int i;

	__builtin_memset(k, 0, sizeof(*k));

	if (p + ETH_HLEN > end) {
		flags |= XTCAM_F_TRUNC;
		goto out;
	}
	__builtin_memcpy(k->dst_mac, p, 6);
	__builtin_memcpy(k->src_mac, p + 6, 6);
	proto = *(__be16 *)(p + 12);
	flags |= XTCAM_F_ETH;
	p += ETH_HLEN;

#pragma unroll
	for (i = 0; i < XTCAM_MAX_VLAN; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		if (p + 4 > end) {
			/* eth_type stays the TPID we read: the truth */
			k->eth_type = proto;
			flags |= XTCAM_F_TRUNC;
			goto out;
		}
		if (i == 0) {
			k->vlan_tci = *(__be16 *)p;
			k->vlan_ethtype = *(__be16 *)(p + 2);
			flags |= XTCAM_F_VLAN1;
			if (proto == bpf_htons(ETH_P_8021AD))
				flags |= XTCAM_F_OUTER_AD;
		} else {
			k->cvlan_tci = *(__be16 *)p;
			k->cvlan_ethtype = *(__be16 *)(p + 2);
			flags |= XTCAM_F_VLAN2;
		}
		proto = *(__be16 *)(p + 2);
		p += 4;
	}
	k->eth_type = proto;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		/* a third tag: more than we walk */
		flags |= XTCAM_F_BAD;
		goto out;
	}
	l3 = p;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct xtcam_ipv4 *ip = (void *)p;
		__u32 hl, tl;

		if (p + sizeof(*ip) > end) {
			flags |= XTCAM_F_TRUNC;
			goto out;
		}
		hl = (ip->vihl & 0xf) * 4;
		tl = bpf_ntohs(ip->tot_len);
		if ((ip->vihl >> 4) != 4 || hl < 20 || tl < hl) {
			flags |= XTCAM_F_BAD;
			goto out;
		}
		dlen = tl;
		if (p + hl > end) {
			flags |= XTCAM_F_TRUNC;
			goto out;
		}
		k->ip_tos = ip->tos;
		k->ip_ttl = ip->ttl;
		k->src_ip[0] = ip->saddr;
		k->dst_ip[0] = ip->daddr;
		k->ip_proto = ip->protocol;
		flags |= XTCAM_F_L3 | XTCAM_F_PROTO;
		if (ip->frag_off & bpf_htons(0x3fff)) {         /* MF | offset */
			flags |= XTCAM_F_FRAG;
			if (ip->frag_off & bpf_htons(0x1fff))   /* not first */
				goto out;
			flags |= XTCAM_F_FIRSTFRAG;
		}
		nh = ip->protocol;
		l4 = p + hl;
		rem = tl - hl;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct xtcam_ipv6 *ip6 = (void *)p;
		__u32 vtc, plen;

		if (p + sizeof(*ip6) > end) {
			flags |= XTCAM_F_TRUNC;
			goto out;
		}
		vtc = bpf_ntohl(ip6->vtcfl);
		if ((vtc >> 28) != 6) {
			flags |= XTCAM_F_BAD;
			goto out;
		}
		k->ip_tos = (vtc >> 20) & 0xff;
		k->ip_ttl = ip6->hop_limit;
		__builtin_memcpy(k->src_ip, ip6->saddr, 16);
		__builtin_memcpy(k->dst_ip, ip6->daddr, 16);
		flags |= XTCAM_F_L3;
		nh = ip6->nexthdr;
		p += sizeof(*ip6);
		/* payload_len, 0 -> XTCAM_DGRAM_ANY, without a branch (a
		 * constant would have the verifier walk the chain twice) */
		plen = bpf_ntohs(ip6->payload_len);
		rem = ((plen - 1) & (XTCAM_DGRAM_ANY - 1)) + 1;
		dlen = rem + sizeof(*ip6);

#pragma unroll
		for (i = 0; i < XTCAM_MAX_EXTHDR; i++) {
			if (nh == XTCAM_NH_HOPOPTS || nh == XTCAM_NH_ROUTING ||
			    nh == XTCAM_NH_DSTOPTS || nh == XTCAM_NH_AH) {
				__u32 len;

				if (p + 2 > end) {
					flags |= XTCAM_F_TRUNC;
					goto out;
				}
				/* p[1] may lie beyond the datagram: then so
				 * does the header (8 bytes at least), which
				 * rem < len says */
				if (nh == XTCAM_NH_AH)
					len = ((__u32)p[1] + 2) * 4;
				else
					len = ((__u32)p[1] + 1) * 8;
				if (rem < len || p + len > end) {
					flags |= XTCAM_F_TRUNC;
					goto out;
				}
				nh = p[0];
				p += len;
				rem -= len;
			} else if (nh == XTCAM_NH_FRAGMENT) {
				__be16 fo;

				if (rem < 8 || p + 8 > end) {
					flags |= XTCAM_F_TRUNC;
					goto out;
				}
				fo = *(__be16 *)(p + 2);
				nh = p[0];
				p += 8;
				rem -= 8;
				flags |= XTCAM_F_FRAG;
				if (fo & bpf_htons(0xfff8)) {
					/* later fragment: no L4 header here */
					k->ip_proto = nh;
					flags |= XTCAM_F_PROTO;
					goto out;
				}
				flags |= XTCAM_F_FIRSTFRAG;
			} else {
				break;
			}
		}
		if (nh == XTCAM_NH_HOPOPTS || nh == XTCAM_NH_ROUTING ||
		    nh == XTCAM_NH_DSTOPTS || nh == XTCAM_NH_AH ||
		    nh == XTCAM_NH_FRAGMENT) {
			/* chain longer than we walk: protocol unknown */
			flags |= XTCAM_F_BAD;
			goto out;
		}
		k->ip_proto = nh;
		flags |= XTCAM_F_PROTO;
		l4 = p;
	} else {
		if (full)
			flags |= xtcam_parse_l3x(p, end, proto, k);
		goto out;
	}

	/* L4: a field is set once its bytes are there; TRUNC if the header
	 * as a whole is not */
	p = l4;
	if (nh == IPPROTO_TCP || nh == IPPROTO_UDP || nh == IPPROTO_SCTP ||
	    nh == IPPROTO_UDPLITE) {
		if (rem < 4 || p + 4 > end) {
			flags |= XTCAM_F_TRUNC;
			goto out;
		}
		k->src_port = *(__be16 *)p;
		k->dst_port = *(__be16 *)(p + 2);
		flags |= XTCAM_F_L4;
		if (nh == IPPROTO_TCP) {
			__u32 doff;

			if (rem < 14 || p + 14 > end) {
				flags |= XTCAM_F_TRUNC;
				goto out;
			}
			k->tcp_flags = *(__be16 *)(p + 12) & bpf_htons(0x0fff);
			flags |= XTCAM_F_TCPFL;
			doff = (p[12] >> 4) * 4;
			if (doff < 20) {
				flags |= XTCAM_F_BAD;
				goto out;
			}
			if (rem < doff || p + doff > end)
				flags |= XTCAM_F_TRUNC;
		} else {
			__u32 l4hl = nh == IPPROTO_SCTP ? 12 : 8;

			if (rem < l4hl || p + l4hl > end)
				flags |= XTCAM_F_TRUNC;
		}
	} else if ((nh == IPPROTO_ICMP && proto == bpf_htons(ETH_P_IP)) ||
		   (nh == IPPROTO_ICMPV6 && proto == bpf_htons(ETH_P_IPV6))) {
		if (rem < 2 || p + 2 > end) {
			flags |= XTCAM_F_TRUNC;
			goto out;
		}
		k->icmp_type = p[0];
		k->icmp_code = p[1];
		flags |= XTCAM_F_ICMP;
		if (rem < 4 || p + 4 > end)
			flags |= XTCAM_F_TRUNC;
	} else if (full && (nh == XTCAM_IPPROTO_L2TP || nh == XTCAM_IPPROTO_ESP ||
			    nh == XTCAM_IPPROTO_AH)) {
		/* the session id or SPI, as two halves in the port fields */
		__u32 off = nh == XTCAM_IPPROTO_AH ? 4 : 0;

		if (rem < off + 4 || p + off + 4 > end) {
			flags |= XTCAM_F_TRUNC;
			goto out;
		}
		k->src_port = *(__be16 *)(p + off);
		k->dst_port = *(__be16 *)(p + off + 2);
		flags |= XTCAM_F_L4;
	}

out:
	if (raw) {
#pragma unroll
		for (i = 0; i < 2; i++) {
			__u8 *base = 0, *q;
			__u32 off = raw[i].offset, len = raw[i].len, v;
			__u64 lim = XTCAM_DGRAM_ANY;

			/* l2: up to the frame's end; l3, l4: within the
			 * datagram */
			if (raw[i].layer == XTCAM_RAW_L2) {
				base = data;
			} else if (raw[i].layer == XTCAM_RAW_L3) {
				base = l3;
				lim = dlen;
			} else if (raw[i].layer == XTCAM_RAW_L4) {
				base = l4;
				lim = rem;
			}
			if (!base || off >= XTCAM_RAW_MAX_OFF || len < 1 || len > 4 ||
			    off + len > lim)
				continue;
			q = base + off;
			if (q + 1 > end)
				continue;
			v = q[0];
			if (len > 1) {
				if (q + 2 > end)
					continue;
				v = (v << 8) | q[1];
			}
			if (len > 2) {
				if (q + 3 > end)
					continue;
				v = (v << 8) | q[2];
			}
			if (len > 3) {
				if (q + 4 > end)
					continue;
				v = (v << 8) | q[3];
			}
			if (i == 0) {
				k->raw1 = bpf_htonl(v);
				flags |= XTCAM_F_RAW1;
			} else {
				k->raw2 = bpf_htonl(v);
				flags |= XTCAM_F_RAW2;
			}
		}
	}
	k->flags = flags;
}

#endif
