// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Traffic generator for bench/gen_live: run by BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES, it writes a whole UDP frame (Ethernet + IPv4
 * or IPv6 + UDP) for the next flow of the mix and redirects it into a veth
 * end, whose peer is the device under test.
 *
 * Live frames come from a page pool and keep what the last run wrote, so
 * every header byte is written on every run.  Flow f of NFLOWS: even f are
 * IPv4, odd f IPv6; the source address and port vary with f, the
 * destination (address, port) is fixed, so that one rule matches them all.
 * Both kinds are 64 bytes long (IPv4 carries 20 more payload bytes).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FRAME_LEN 64

struct gen_cfg {
	__u32 ifindex;		/* redirect target (the generator's veth end) */
	__u32 nflows;		/* distinct flows, >= 1 */
	__u8 dst_mac[6];
	__u8 src_mac[6];
	__u32 dst4;		/* network order */
	__u8 dst6[16];
	__u16 dport;		/* host order */
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_cfg);
} cfg SEC(".maps");

/* per CPU: [0] next flow, [1] frames written */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} state SEC(".maps");

static __always_inline __u16 csum_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

SEC("xdp")
int gen_live(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 zero = 0, one = 1, f;
	struct gen_cfg *c = bpf_map_lookup_elem(&cfg, &zero);
	__u64 *seq = bpf_map_lookup_elem(&state, &zero);
	__u64 *sent = bpf_map_lookup_elem(&state, &one);
	struct ethhdr *eth = data;
	struct udphdr *udp;

	if (!c || !seq || !sent || c->nflows == 0)
		return XDP_ABORTED;
	if (data + FRAME_LEN > end)
		return XDP_ABORTED;
	f = (__u32)(*seq % c->nflows);
	*seq += 1;
	*sent += 1;
	__builtin_memcpy(eth->h_dest, c->dst_mac, 6);
	__builtin_memcpy(eth->h_source, c->src_mac, 6);
	if (!(f & 1)) {
		struct iphdr *ip = (void *)(eth + 1);
		__u16 *w = (__u16 *)ip;
		__u32 s = 0;
		int i;

		eth->h_proto = bpf_htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = 0;
		ip->tot_len = bpf_htons(FRAME_LEN - ETH_HLEN);
		ip->id = 0;
		ip->frag_off = 0;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->check = 0;
		/* 10.(f>>9 & 0xff).(f>>1 & 0xff).1 */
		ip->saddr = bpf_htonl(0x0a000001u | (((f >> 1) & 0xffffu) << 8));
		ip->daddr = c->dst4;
		for (i = 0; i < 10; i++)
			s += w[i];
		ip->check = csum_fold(s);
		udp = (void *)(ip + 1);
		udp->len = bpf_htons(FRAME_LEN - ETH_HLEN - sizeof(*ip));
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		__u32 v = f >> 1;

		eth->h_proto = bpf_htons(ETH_P_IPV6);
		*(__u32 *)ip6 = bpf_htonl(0x60000000u);
		ip6->payload_len = bpf_htons(FRAME_LEN - ETH_HLEN - sizeof(*ip6));
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		/* fd00:0:0:1::(v) */
		__builtin_memset(&ip6->saddr, 0, 16);
		ip6->saddr.in6_u.u6_addr8[0] = 0xfd;
		ip6->saddr.in6_u.u6_addr8[7] = 1;
		ip6->saddr.in6_u.u6_addr32[3] = bpf_htonl(v + 1);
		__builtin_memcpy(&ip6->daddr, c->dst6, 16);
		udp = (void *)(ip6 + 1);
		udp->len = bpf_htons(FRAME_LEN - ETH_HLEN - sizeof(*ip6));
	}
	udp->source = bpf_htons((__u16)(1024 + (f & 0x7fff)));
	udp->dest = bpf_htons(c->dport);
	/* not computed: the devices under test drop before any checksum check */
	udp->check = 0;
	return bpf_redirect(c->ifindex, 0);
}
