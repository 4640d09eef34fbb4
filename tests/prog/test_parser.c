// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Parser stage through BPF_PROG_TEST_RUN: crafted frames for every protocol
 * and option, each also cut at every byte offset.  The key of a cut frame
 * must hold only fields whose headers are complete (with their flags), zero
 * elsewhere, and say TRUNC.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include "xtcam/dp.h"
#include "xtcam/syntax.h"
#include "tlib.h"

static struct xtcam_dp *dp;
static struct xtcam_block_spec spec;

static void setup(void)
{
	int err;

	if (!t_have_bpf())
		cr_skip_test("needs root to load BPF programs");
	cr_assert_eq(t_pin_cpu(0), 0);
	memset(&spec, 0, sizeof(spec));
	spec.capacity = 64;
	err = xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp);
	cr_assert_eq(err, 0, "xtcam_dp_create: %s", strerror(-err));
}

/* a data path whose block has these two raw fields */
static void setup_with(struct xtcam_raw_spec r0, struct xtcam_raw_spec r1)
{
	int err;

	if (!t_have_bpf())
		cr_skip_test("needs root to load BPF programs");
	cr_assert_eq(t_pin_cpu(0), 0);
	memset(&spec, 0, sizeof(spec));
	spec.capacity = 64;
	spec.raw[0] = r0;
	spec.raw[1] = r1;
	err = xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp);
	cr_assert_eq(err, 0, "xtcam_dp_create: %s", strerror(-err));
}

static void setup_raw(void)
{
	setup_with((struct xtcam_raw_spec){ .layer = XTCAM_RAW_L4, .offset = 8, .len = 4 },
		   (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L2, .offset = 0, .len = 3 });
}

static void teardown(void)
{
	xtcam_dp_free(dp);
	dp = NULL;
}

TestSuite(parser, .init = setup, .fini = teardown);

static void parse(const struct pkt *p, int len, struct xtcam_key *k)
{
	struct xtcam_scratch s;
	uint32_t ret;
	int err = t_xdp_run(xtcam_dp_parse_fd(dp), p->buf, (uint32_t)len, &ret);

	cr_assert_eq(err, 0, "test run (len %d): %s", len, strerror(-err));
	cr_assert_eq(ret, XDP_PASS, "empty block passes (len %d, got %u)", len, ret);
	cr_assert_eq(t_scratch(dp, &s), 0);
	/* BPF_PROG_TEST_RUN runs the frame as from the loopback device */
	cr_assert_eq(s.key.ifindex, 1, "ifindex %u (len %d)", s.key.ifindex, len);
	s.key.ifindex = 0;
	*k = s.key;
}

static void assert_key(const struct xtcam_key *got, const struct xtcam_key *want,
		       const char *what, int len)
{
	char g[512], w[512];

	if (!memcmp(got, want, sizeof(*got)))
		return;
	key_format(got, g, sizeof(g));
	key_format(want, w, sizeof(w));
	cr_assert_fail("%s, length %d:\n  got  %s\n  want %s", what, len, g, w);
}

/* The full frame, then every cut from 14 bytes up. */
static void check_all(const char *name, const struct pkt_spec *s)
{
	struct xtcam_key k, want;
	struct pkt p;
	int len;

	pkt_build(s, spec.raw, &p);
	parse(&p, p.len, &k);
	assert_key(&k, &p.key, name, p.len);
	for (len = 14; len < p.len; len++) {
		pkt_expect(&p, spec.raw, len, &want);
		parse(&p, len, &k);
		assert_key(&k, &want, name, len);
		/* no field without its flag, whatever the builder says */
		if (!(k.flags & XTCAM_F_L4))
			cr_assert(!k.src_port && !k.dst_port, "%s/%d: ports without L4", name, len);
		if (!(k.flags & (XTCAM_F_L3 | XTCAM_F_L3X)))
			cr_assert(!k.src_ip[0] && !k.dst_ip[0] && !k.ip_ttl,
				  "%s/%d: addresses without L3", name, len);
		if (!(k.flags & (XTCAM_F_PROTO | XTCAM_F_L3X)))
			cr_assert(!k.ip_proto, "%s/%d: proto without PROTO", name, len);
	}
}

static struct pkt_spec base(void)
{
	struct pkt_spec s;

	pkt_spec_init(&s);
	return s;
}

static void full(const struct pkt_spec *s, struct pkt *p, struct xtcam_key *k)
{
	pkt_build(s, spec.raw, p);
	parse(p, p->len, k);
}

Test(parser, udp4)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_L4);
	cr_assert_eq(k.eth_type, htons(0x0800));
	cr_assert_eq(k.ip_proto, IPPROTO_UDP);
	cr_assert_eq(ntohs(k.src_port), 1234);
	cr_assert_eq(ntohs(k.dst_port), 80);
	cr_assert_eq(ntohl(k.src_ip[0]), 0x0a000001);
	cr_assert_eq(ntohl(k.dst_ip[0]), 0x0a000002);
	cr_assert_eq(k.src_ip[1] | k.src_ip[2] | k.src_ip[3], 0);
	cr_assert_eq(k.ip_ttl, 64);
	cr_assert_eq(k.dst_mac[5], 2);
	check_all("udp4", &s);
}

Test(parser, tcp4_flags_and_options)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.proto = IPPROTO_TCP;
	s.tcp_flags = 0x012;        /* SYN|ACK */
	s.tcp_doff = 8;             /* 12 bytes of TCP options */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_L4 |
		     XTCAM_F_TCPFL);
	cr_assert_eq(ntohs(k.tcp_flags), 0x012);
	check_all("tcp4", &s);
}

Test(parser, tcp_bad_doff)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.proto = IPPROTO_TCP;
	s.tcp_doff = 3;
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_BAD, "data offset below 5 is malformed");
	check_all("tcp-doff3", &s);
}

Test(parser, ipv4_options)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.ipopt = 40;               /* the most there can be */
	full(&s, &p, &k);
	cr_assert_eq(ntohs(k.dst_port), 80, "ports found after 40 option bytes");
	check_all("ipv4-opt40", &s);
	s.ipopt = 4;
	check_all("ipv4-opt4", &s);
}

Test(parser, ipv4_bad)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.bad_ihl = 1;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD, "IHL 4: no L3 fields");
	cr_assert_eq(k.src_ip[0], 0);
	check_all("ipv4-ihl4", &s);
	s = base();
	s.bad_version = 1;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD);
	check_all("ipv4-version6", &s);
}

Test(parser, sctp_udplite_icmp4)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.proto = IPPROTO_SCTP;
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_L4);
	check_all("sctp4", &s);
	s.proto = IPPROTO_UDPLITE;
	check_all("udplite4", &s);
	s.proto = IPPROTO_ICMP;
	s.icmp_type = 8;
	s.icmp_code = 0;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_ICMP);
	cr_assert_eq(k.icmp_type, 8);
	cr_assert_eq(k.src_port, 0, "ICMP has no ports");
	check_all("icmp4", &s);
}

Test(parser, ipv4_fragments)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.frag = 1;
	full(&s, &p, &k);
	cr_assert_eq(k.flags & (XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG | XTCAM_F_L4),
		     XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG | XTCAM_F_L4, "first fragment has ports");
	check_all("frag4-first", &s);
	s.frag = 2;
	full(&s, &p, &k);
	cr_assert_eq(k.flags & (XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG | XTCAM_F_L4), XTCAM_F_FRAG,
		     "later fragment: no ports");
	cr_assert_eq(k.src_port | k.dst_port, 0);
	cr_assert_eq(k.ip_proto, IPPROTO_UDP, "protocol still known");
	check_all("frag4-later", &s);
}

static void v6(struct pkt_spec *s)
{
	static const uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t b[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

	s->eth_type = 0x86dd;
	memcpy(s->saddr, a, 16);
	memcpy(s->daddr, b, 16);
	s->tos = 0xb8;
}

Test(parser, udp6_tcp6_icmp6)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	v6(&s);
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_L4);
	cr_assert_eq(k.eth_type, htons(0x86dd));
	cr_assert_eq(k.ip_tos, 0xb8, "traffic class");
	cr_assert_eq(((uint8_t *)k.dst_ip)[15], 2);
	check_all("udp6", &s);
	s.proto = IPPROTO_TCP;
	s.tcp_flags = 0x002;
	check_all("tcp6", &s);
	s.proto = 58;
	s.icmp_type = 128;
	full(&s, &p, &k);
	cr_assert_eq(k.icmp_type, 128);
	cr_assert(k.flags & XTCAM_F_ICMP);
	check_all("icmp6", &s);
	s.proto = IPPROTO_ICMP;     /* ICMPv4 inside IPv6: not parsed as ICMP */
	full(&s, &p, &k);
	cr_assert(!(k.flags & XTCAM_F_ICMP));
}

Test(parser, ipv6_extension_chain)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	v6(&s);
	s.proto = IPPROTO_TCP;
	s.ext[0] = 0;               /* hop-by-hop */
	s.ext[1] = 43;              /* routing */
	s.ext[2] = 60;              /* destination options */
	s.ext[3] = 51;              /* AH */
	s.next = 4;
	full(&s, &p, &k);
	cr_assert_eq(k.ip_proto, IPPROTO_TCP, "upper-layer protocol after the chain");
	cr_assert(k.flags & XTCAM_F_L4);
	cr_assert_eq(ntohs(k.dst_port), 80);
	check_all("v6-chain", &s);
}

Test(parser, ipv6_chain_too_long)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;
	int i;

	v6(&s);
	for (i = 0; i < 8; i++)
		s.ext[i] = 60;
	s.next = 8;
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_L4, "8 extension headers are walked");
	/* nine: one more than the walk bounds (8 in the spec array, so use
	 * the builder's 8 plus a hop-by-hop announced by the last) */
	s.proto = 60;               /* the 9th announces yet another header */
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_BAD, "a longer chain is malformed");
	cr_assert(!(k.flags & (XTCAM_F_PROTO | XTCAM_F_L4)), "and has no protocol");
	cr_assert_eq(k.ip_proto, 0);
}

Test(parser, ipv6_fragments)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	v6(&s);
	s.ext[0] = 44;
	s.next = 1;
	s.frag = 1;
	full(&s, &p, &k);
	cr_assert_eq(k.flags & (XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG | XTCAM_F_L4),
		     XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG | XTCAM_F_L4);
	check_all("frag6-first", &s);
	s.frag = 2;
	full(&s, &p, &k);
	cr_assert_eq(k.flags & (XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG | XTCAM_F_L4 | XTCAM_F_PROTO),
		     XTCAM_F_FRAG | XTCAM_F_PROTO);
	cr_assert_eq(k.dst_port, 0, "later fragment: no ports");
	check_all("frag6-later", &s);
	s.ext[0] = 0;
	s.ext[1] = 44;
	s.next = 2;
	s.frag = 1;
	check_all("hbh-frag6", &s);
}

Test(parser, vlan_and_qinq)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.nvlan = 1;
	s.tpid[0] = 0x8100;
	s.tci[0] = (5 << 13) | 100;
	full(&s, &p, &k);
	cr_assert_eq(k.eth_type, htons(0x0800), "eth_type is the protocol after the tag");
	cr_assert_eq(ntohs(k.vlan_tci) & 0xfff, 100);
	cr_assert_eq(ntohs(k.vlan_tci) >> 13, 5);
	cr_assert_eq(k.vlan_ethtype, htons(0x0800));
	cr_assert_eq(k.flags & (XTCAM_F_VLAN1 | XTCAM_F_VLAN2), XTCAM_F_VLAN1);
	check_all("vlan", &s);

	s.nvlan = 2;
	s.tpid[0] = 0x88a8;
	s.tpid[1] = 0x8100;
	s.tci[1] = 200;
	v6(&s);
	full(&s, &p, &k);
	cr_assert_eq(k.eth_type, htons(0x86dd));
	cr_assert_eq(k.vlan_ethtype, htons(0x8100), "outer tag carries the inner TPID");
	cr_assert_eq(ntohs(k.cvlan_tci), 200);
	cr_assert_eq(k.cvlan_ethtype, htons(0x86dd));
	cr_assert(k.flags & XTCAM_F_VLAN2);
	check_all("qinq", &s);
}

Test(parser, three_tags)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.nvlan = 3;
	s.tpid[0] = s.tpid[1] = s.tpid[2] = 0x8100;
	s.tci[0] = 1;
	s.tci[1] = 2;
	s.tci[2] = 3;
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_BAD);
	cr_assert(!(k.flags & XTCAM_F_L3));
	cr_assert_eq(k.eth_type, htons(0x8100));
	check_all("3tags", &s);
}

Test(parser, arp_and_other)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.eth_type = 0x0806;
	full(&s, &p, &k);
	/* an Ethernet/IPv4 request: its fields in the IP ones (key.h) */
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3X, "ARP: flags %#x", k.flags);
	cr_assert_eq(k.eth_type, htons(0x0806));
	cr_assert_eq(k.ip_proto, 1);
	cr_assert_eq(ntohl(k.src_ip[0]), 0x0a000001);
	cr_assert_eq(ntohl(k.dst_ip[0]), 0x0a000002);
	cr_assert_eq(((uint8_t *)k.src_ip)[9], 0x01, "sender MAC");
	check_all("arp", &s);
	s.arp_op = 2;
	s.eth_type = 0x8035;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3X);
	cr_assert_eq(k.ip_proto, 2);
	check_all("rarp-reply", &s);
	/* another opcode: flower's dissector reads nothing of it either */
	s.arp_op = 3;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD);
	cr_assert_eq(k.ip_proto, 0);
	check_all("arp-op3", &s);
	s = base();
	s.eth_type = 0x88cc;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH);
	cr_assert_eq(k.eth_type, htons(0x88cc));
	s.eth_type = 0x86dd;
	s.bad_version = 1;
	v6(&s);
	s.bad_version = 1;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD);
}

Test(parser, raw_fields, .init = setup_raw)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.proto = IPPROTO_TCP;      /* L4 + 8: the ack number */
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_RAW1);
	cr_assert(k.flags & XTCAM_F_RAW2);
	cr_assert_eq(ntohl(k.raw2), 0x020000, "first 3 bytes of the frame");
	check_all("raw-tcp", &s);
	s.frag = 2;                 /* no L4 header: no raw1 */
	full(&s, &p, &k);
	cr_assert(!(k.flags & XTCAM_F_RAW1));
	cr_assert_eq(k.raw1, 0);
	cr_assert(k.flags & XTCAM_F_RAW2);
	check_all("raw-frag", &s);
}

Test(parser, jumbo_multibuffer)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.payload = 9000 - 42;      /* beyond a page: several buffers */
	full(&s, &p, &k);
	cr_assert_eq(p.len, 9000);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_L4);
	cr_assert_eq(ntohs(k.dst_port), 80, "classified from the first buffer");
}

/*
 * The IP datagram ends where its header says.  The frame's bytes after it
 * (Ethernet padding, a trailer) are not the datagram's: fields there are
 * absent and the key says TRUNC, as the kernel's IP stack would see it.
 * Each frame is also cut at every byte (check_all), and the builder's
 * model of the datagram's end is what the differential tests compare to.
 */
#define F_IP (XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO)

Test(parser, ipv4_tot_len_header_only)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.dport = 53;               /* UDP/53 in the padding */
	s.payload = 0;
	s.set_iplen = 1;
	s.iplen = 20;
	full(&s, &p, &k);
	cr_assert_eq(p.len, 60, "padded to the Ethernet minimum");
	cr_assert_eq(p.buf[14 + 20 + 3], 53, "the padding looks like UDP/53");
	cr_assert_eq(k.flags, F_IP | XTCAM_F_TRUNC, "ports beyond the datagram: flags %#x",
		     k.flags);
	cr_assert_eq(k.ip_proto, IPPROTO_UDP);
	cr_assert_eq(k.src_port | k.dst_port, 0);
	check_all("udp4-totlen20", &s);
}

Test(parser, ipv4_tot_len_cuts_l4)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.set_iplen = 1;
	s.iplen = 20 + 3;           /* a port and a half */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_TRUNC);
	check_all("udp4-totlen23", &s);
	s.iplen = 20 + 4;           /* ports, not the rest of the UDP header */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4 | XTCAM_F_TRUNC);
	cr_assert_eq(ntohs(k.dst_port), 80);
	check_all("udp4-totlen24", &s);

	s.proto = IPPROTO_TCP;
	s.tcp_flags = 0x002;
	s.iplen = 20 + 13;          /* TCP flags one byte beyond */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4 | XTCAM_F_TRUNC, "no TCP flags: %#x", k.flags);
	cr_assert_eq(k.tcp_flags, 0);
	check_all("tcp4-totlen33", &s);
	s.tcp_doff = 8;
	s.iplen = 20 + 20;          /* the options beyond */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4 | XTCAM_F_TCPFL | XTCAM_F_TRUNC);
	check_all("tcp4-opts-totlen40", &s);
	s.tcp_doff = 3;             /* a bad data offset read beyond: unknown */
	s.iplen = 20 + 12;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4 | XTCAM_F_TRUNC);
	check_all("tcp4-doff3-totlen32", &s);

	s = base();
	s.proto = IPPROTO_ICMP;
	s.icmp_type = 8;
	s.set_iplen = 1;
	s.iplen = 20 + 1;           /* the type, not the code */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_TRUNC, "no ICMP type: %#x", k.flags);
	cr_assert_eq(k.icmp_type, 0);
	check_all("icmp4-totlen21", &s);
	s.iplen = 20 + 2;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_ICMP | XTCAM_F_TRUNC);
	cr_assert_eq(k.icmp_type, 8);
	check_all("icmp4-totlen22", &s);

	s = base();
	s.ipopt = 8;
	s.proto = IPPROTO_SCTP;
	s.set_iplen = 1;
	s.iplen = 28 + 8;           /* 8 of SCTP's 12 */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4 | XTCAM_F_TRUNC);
	check_all("sctp4-opt8-totlen36", &s);
}

Test(parser, ipv4_tot_len_below_header)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.set_iplen = 1;
	s.iplen = 19;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD, "tot_len 19: %#x", k.flags);
	cr_assert_eq(k.src_ip[0] | k.dst_ip[0] | k.ip_proto | k.dst_port, 0);
	check_all("ipv4-totlen19", &s);
	s.iplen = 0;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD, "tot_len 0: %#x", k.flags);
	check_all("ipv4-totlen0", &s);
	s.ipopt = 12;               /* IHL 8: 32 bytes of header */
	s.iplen = 31;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD, "tot_len 31, IHL 8: %#x", k.flags);
	check_all("ipv4-opt12-totlen31", &s);
	s.iplen = 32;               /* the header alone is well formed */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_TRUNC);
	check_all("ipv4-opt12-totlen32", &s);
}

/* tot_len beyond the frame: the frame's end bounds the fields, as it did */
Test(parser, ipv4_tot_len_beyond_frame)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.proto = IPPROTO_TCP;
	s.set_iplen = 1;
	s.iplen = 1500;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4 | XTCAM_F_TCPFL);
	check_all("tcp4-totlen1500", &s);
}

Test(parser, ipv6_payload_len)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	v6(&s);
	s.dport = 53;
	s.payload = 0;
	s.set_iplen = 1;
	s.iplen = 2;                /* half of the ports */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_TRUNC, "ports beyond the datagram: %#x", k.flags);
	cr_assert_eq(k.dst_port, 0);
	check_all("udp6-plen2", &s);
	s.iplen = 6;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4 | XTCAM_F_TRUNC);
	cr_assert_eq(ntohs(k.dst_port), 53);
	check_all("udp6-plen6", &s);

	s.proto = 58;
	s.icmp_type = 128;
	s.iplen = 1;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_TRUNC, "no ICMPv6 type: %#x", k.flags);
	check_all("icmp6-plen1", &s);

	/* 0: a jumbogram (or the kernel's BIG TCP): up to the frame's end */
	s.proto = IPPROTO_UDP;
	s.iplen = 0;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_L4);
	cr_assert_eq(ntohs(k.dst_port), 53);
	check_all("udp6-plen0", &s);
}

Test(parser, ipv6_extension_chain_cut)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	v6(&s);
	s.proto = IPPROTO_TCP;
	s.ext[0] = 0;               /* hop-by-hop, 16 bytes */
	s.ext[1] = 43;              /* routing, 16 bytes */
	s.next = 2;
	s.set_iplen = 1;
	s.iplen = 16;               /* the routing header beyond */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_TRUNC,
		     "the walk stops at the datagram's end: %#x", k.flags);
	cr_assert_eq(k.ip_proto, 0);
	check_all("v6-chain-plen16", &s);
	s.iplen = 8;                /* inside the hop-by-hop header */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_TRUNC);
	check_all("v6-chain-plen8", &s);
	s.iplen = 32;               /* the chain, no TCP header */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_TRUNC);
	cr_assert_eq(k.ip_proto, IPPROTO_TCP);
	check_all("v6-chain-plen32", &s);

	s.ext[1] = 44;              /* hop-by-hop, fragment (first) */
	s.frag = 1;
	s.iplen = 16 + 7;           /* a byte short of the fragment header */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_TRUNC);
	check_all("hbh-frag6-plen23", &s);
	s.iplen = 16 + 8;
	full(&s, &p, &k);
	cr_assert_eq(k.flags, F_IP | XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG | XTCAM_F_TRUNC);
	check_all("hbh-frag6-plen24", &s);
}

/* the first bytes after the IPv4 header, as an l3 field; the frame's bytes
 * 44-47 (padding in a UDP frame without payload), as an l2 field */
static void setup_raw_dgram(void)
{
	setup_with((struct xtcam_raw_spec){ .layer = XTCAM_RAW_L3, .offset = 20, .len = 4 },
		   (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L2, .offset = 44, .len = 4 });
}

Test(parser, raw_fields_and_the_datagram_end, .init = setup_raw_dgram)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.payload = 0;
	full(&s, &p, &k);
	cr_assert_eq(k.flags & (XTCAM_F_RAW1 | XTCAM_F_RAW2), XTCAM_F_RAW1 | XTCAM_F_RAW2,
		     "l2 field in the padding, l3 field in the datagram");
	cr_assert_eq(ntohl(k.raw1), 1234u << 16 | 80, "the ports");
	cr_assert_eq(k.raw2, 0, "padding (zeros)");
	check_all("raw-udp4", &s);
	s.set_iplen = 1;
	s.iplen = 23;               /* the l3 field's last byte beyond */
	full(&s, &p, &k);
	cr_assert(!(k.flags & XTCAM_F_RAW1), "l3 field beyond the datagram: %#x", k.flags);
	cr_assert_eq(k.raw1, 0);
	cr_assert(k.flags & XTCAM_F_RAW2, "an l2 field is not cut: %#x", k.flags);
	check_all("raw-udp4-totlen23", &s);
	s.iplen = 24;
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_RAW1);
	check_all("raw-udp4-totlen24", &s);
	s.iplen = 10;               /* malformed: l3 fields up to the frame's end */
	full(&s, &p, &k);
	cr_assert_eq(k.flags, XTCAM_F_ETH | XTCAM_F_BAD | XTCAM_F_RAW1 | XTCAM_F_RAW2);
	check_all("raw-udp4-totlen10", &s);
}

Test(parser, raw_l4_and_the_datagram_end, .init = setup_raw)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.proto = IPPROTO_TCP;      /* raw1: L4 + 8, the ack number */
	s.set_iplen = 1;
	s.iplen = 20 + 11;
	full(&s, &p, &k);
	cr_assert(!(k.flags & XTCAM_F_RAW1), "l4 field beyond the datagram: %#x", k.flags);
	cr_assert(k.flags & XTCAM_F_RAW2);
	check_all("raw-tcp-totlen31", &s);
	s.iplen = 20 + 12;
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_RAW1);
	check_all("raw-tcp-totlen32", &s);
	v6(&s);
	s.iplen = 11;
	full(&s, &p, &k);
	cr_assert(!(k.flags & XTCAM_F_RAW1), "IPv6: %#x", k.flags);
	check_all("raw-tcp6-plen11", &s);
}

/* What a user sees: a rule on UDP/53 does not take a 20-byte datagram
 * whose padding looks like UDP/53. */
Test(parser, padding_does_not_match_a_port_rule)
{
	struct xtcam_rule r;
	struct xtcam_dp_op op;
	struct xtcam_scratch sc;
	struct pkt_spec s = base();
	struct pkt p;
	uint32_t ret;
	char err[256];

	cr_assert_eq(xtcam_rule_parse_line("prio 1 ip_proto udp dst_port 53 action drop", &r,
					   &spec, err, sizeof(err)), 0, "%s", err);
	r.handle = 1;
	op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &r,
				   .act = { .type = r.action.type } };
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0, "%s", err);
	s.dport = 53;
	s.payload = 0;
	pkt_build(&s, NULL, &p);
	cr_assert_eq(t_xdp_run(xtcam_dp_parse_fd(dp), p.buf, (uint32_t)p.len, &ret), 0);
	cr_assert_eq(ret, XDP_DROP, "UDP/53 is dropped");
	s.set_iplen = 1;
	s.iplen = 20;
	pkt_build(&s, NULL, &p);
	cr_assert_eq(t_xdp_run(xtcam_dp_parse_fd(dp), p.buf, (uint32_t)p.len, &ret), 0);
	cr_assert_eq(t_scratch(dp, &sc), 0);
	cr_assert_eq(ret, XDP_PASS, "a 20-byte datagram with UDP/53 in its padding is not");
	cr_assert_eq(sc.result_rank, XTCAM_RANK_NONE);
}

/* --- flower's headers that are not IP -------------------------------------- */

Test(parser, qinq_outer_tpid)
{
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;

	s.nvlan = 2;
	s.tpid[0] = 0x88a8;
	s.tpid[1] = 0x8100;
	s.tci[0] = 10;
	s.tci[1] = 20;
	full(&s, &p, &k);
	cr_assert(k.flags & XTCAM_F_OUTER_AD, "802.1ad outer tag: flags %#x", k.flags);
	check_all("qinq-ad", &s);
	s.tpid[0] = 0x8100;
	full(&s, &p, &k);
	cr_assert(!(k.flags & XTCAM_F_OUTER_AD), "802.1Q outer tag");
	check_all("qinq-q", &s);
}

Test(parser, l2tpv3_esp_ah)
{
	static const uint8_t protos[] = { 115, 50, 51 };
	struct pkt_spec s = base();
	struct xtcam_key k;
	struct pkt p;
	size_t i;

	for (i = 0; i < sizeof(protos); i++) {
		char name[32];

		s = base();
		s.proto = protos[i];
		s.sport = 0x1234;
		s.dport = 0xabcd;
		full(&s, &p, &k);
		cr_assert(k.flags & XTCAM_F_L4, "proto %u: flags %#x", protos[i], k.flags);
		cr_assert_eq(ntohs(k.src_port), 0x1234, "proto %u", protos[i]);
		cr_assert_eq(ntohs(k.dst_port), 0xabcd, "proto %u", protos[i]);
		snprintf(name, sizeof(name), "ipproto-%u", protos[i]);
		check_all(name, &s);
		if (protos[i] != 51) {
			v6(&s);
			s.proto = protos[i];
			snprintf(name, sizeof(name), "ipv6-ipproto-%u", protos[i]);
			check_all(name, &s);
		}
		/* a later fragment has none */
		s = base();
		s.proto = protos[i];
		s.frag = 2;
		full(&s, &p, &k);
		cr_assert(!(k.flags & XTCAM_F_L4));
	}
}

/* A frame written by hand, and the key the parser must give for it. */
static void frame_key(const uint8_t *f, int len, const struct xtcam_key *want,
		      const char *what)
{
	struct xtcam_key k;
	static struct pkt p;

	memset(&p, 0, sizeof(p));
	memcpy(p.buf, f, (size_t)len);
	parse(&p, len, &k);
	assert_key(&k, want, what, len);
}

static int eth_hdr(uint8_t *f, uint16_t tpid, uint16_t et)
{
	int off = 12;

	memset(f, 0, 128);
	f[5] = 2;
	f[11] = 1;
	if (tpid) {
		f[off++] = (uint8_t)(tpid >> 8);
		f[off++] = (uint8_t)tpid;
		f[off++] = 0;
		f[off++] = 7;
	}
	f[off++] = (uint8_t)(et >> 8);
	f[off++] = (uint8_t)et;
	return off;
}

static void key_eth(struct xtcam_key *k, uint16_t tpid, uint16_t et)
{
	memset(k, 0, sizeof(*k));
	k->dst_mac[5] = 2;
	k->src_mac[5] = 1;
	k->flags = XTCAM_F_ETH;
	k->eth_type = htons(et);
	if (tpid) {
		k->flags |= XTCAM_F_VLAN1;
		if (tpid == 0x88a8)
			k->flags |= XTCAM_F_OUTER_AD;
		k->vlan_tci = htons(7);
		k->vlan_ethtype = htons(et);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

Test(parser, mpls)
{
	static const uint32_t lses[5] = {
		1000u << 12 | 3 << 9 | 64, 2000u << 12 | 63, 3000u << 12 | 62,
		4000u << 12 | 61, 5000u << 12 | 1 << 8 | 60,
	};
	struct xtcam_key want;
	uint8_t f[128];
	int n, i, off, cut;

	/* one to five entries, the last with bottom of stack; the parser
	 * keeps the first XTCAM_MAX_MPLS */
	for (n = 1; n <= 5; n++) {
		char what[32];

		off = eth_hdr(f, n == 2 ? 0x8100 : 0, n == 3 ? 0x8848 : 0x8847);
		for (i = 0; i < n; i++) {
			uint32_t l = lses[i] | (i == n - 1 ? 1u << 8 : 0);

			put32(f + off + 4 * i, l);
		}
		off += 4 * n + 20;
		key_eth(&want, n == 2 ? 0x8100 : 0, n == 3 ? 0x8848 : 0x8847);
		want.flags |= XTCAM_F_L3X;
		for (i = 0; i < n && i < XTCAM_MAX_MPLS; i++) {
			want.src_ip[i] = htonl(lses[i] | (i == n - 1 ? 1u << 8 : 0));
			want.ip_proto |= (uint8_t)(1u << i);
		}
		snprintf(what, sizeof(what), "mpls %d", n);
		frame_key(f, off, &want, what);
	}
	/* cut: the entries that are whole, then TRUNC */
	off = eth_hdr(f, 0, 0x8847);
	put32(f + off, lses[0]);
	put32(f + off + 4, lses[1] | 1u << 8);
	for (cut = off; cut < off + 8; cut++) {
		key_eth(&want, 0, 0x8847);
		want.flags |= XTCAM_F_TRUNC;
		if (cut >= off + 4) {
			want.flags |= XTCAM_F_L3X;
			want.src_ip[0] = htonl(lses[0]);
			want.ip_proto = 1;
		}
		frame_key(f, cut, &want, "mpls cut");
	}
}

Test(parser, pppoe_cfm)
{
	struct xtcam_key want;
	uint8_t f[128];
	int off, cut;

	/* PPPoE session, PPP protocol IPv4 (0x0021) and compressed (0x21) */
	off = eth_hdr(f, 0, 0x8864);
	f[off] = 0x11;
	f[off + 2] = 0x12;
	f[off + 3] = 0x34;
	f[off + 6] = 0x00;
	f[off + 7] = 0x21;
	key_eth(&want, 0, 0x8864);
	want.flags |= XTCAM_F_L3X;
	want.src_ip[0] = htonl(0x12340021);
	frame_key(f, off + 40, &want, "pppoe");
	f[off + 6] = 0x21;           /* compressed: one byte, odd */
	f[off + 7] = 0x45;
	frame_key(f, off + 40, &want, "pppoe compressed");
	for (cut = off; cut < off + 8; cut++) {
		key_eth(&want, 0, 0x8864);
		want.flags |= XTCAM_F_TRUNC;
		frame_key(f, cut, &want, "pppoe cut");
	}
	f[off] = 0x12;               /* version 2: not a session header */
	key_eth(&want, 0, 0x8864);
	want.flags |= XTCAM_F_BAD;
	frame_key(f, off + 40, &want, "pppoe version 2");

	/* CFM behind an 802.1ad tag */
	off = eth_hdr(f, 0x88a8, 0x8902);
	f[off] = 5 << 5;             /* MD level 5, version 0 */
	f[off + 1] = 3;              /* opcode */
	key_eth(&want, 0x88a8, 0x8902);
	want.flags |= XTCAM_F_L3X;
	want.ip_tos = 5 << 5;
	want.ip_proto = 3;
	frame_key(f, off + 46, &want, "cfm");
	key_eth(&want, 0x88a8, 0x8902);
	want.flags |= XTCAM_F_TRUNC;
	frame_key(f, off + 1, &want, "cfm cut");
}
