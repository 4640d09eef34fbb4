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
#include <string.h>
#include "xtcam/dp.h"
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

static void setup_raw(void)
{
	int err;

	if (!t_have_bpf())
		cr_skip_test("needs root to load BPF programs");
	cr_assert_eq(t_pin_cpu(0), 0);
	memset(&spec, 0, sizeof(spec));
	spec.capacity = 64;
	spec.raw[0] = (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L4, .offset = 8, .len = 4 };
	spec.raw[1] = (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L2, .offset = 0, .len = 3 };
	err = xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp);
	cr_assert_eq(err, 0, "xtcam_dp_create: %s", strerror(-err));
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
		if (!(k.flags & XTCAM_F_L3))
			cr_assert(!k.src_ip[0] && !k.dst_ip[0] && !k.ip_ttl,
				  "%s/%d: addresses without L3", name, len);
		if (!(k.flags & XTCAM_F_PROTO))
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
	cr_assert_eq(k.flags, XTCAM_F_ETH, "ARP: Ethernet fields only");
	cr_assert_eq(k.eth_type, htons(0x0806));
	check_all("arp", &s);
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
