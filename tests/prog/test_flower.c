// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * tc-flower's keywords beyond the IP ones through the data path: a block
 * of rules on protocol (flower's outermost ethertype), num_of_vlans, ARP,
 * MPLS, PPPoE, CFM, L2TPv3, ESP/AH SPIs, fragments and indev; crafted
 * frames through BPF_PROG_TEST_RUN.  Each frame's match must be the rule
 * the test names, and the reference classifier's on the parser's key.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/compile.h"
#include "xtcam/dp.h"
#include "xtcam/syntax.h"
#include "tlib.h"

/* handle = index + 1 */
static const char *const rules[] = {
	/*  1 */ "prio 1 protocol arp arp_op reply arp_sip 10.0.0.2 action drop",
	/*  2 */ "prio 2 protocol arp arp_tip 10.0.0.2 arp_sha 02:00:00:00:00:01 action tx",
	/*  3 */ "prio 3 protocol rarp action drop",
	/*  4 */ "prio 4 protocol mpls_uc mpls lse depth 2 label 2000 action drop",
	/*  5 */ "prio 5 protocol mpls_uc mpls_label 1000 mpls_bos 1 action tx",
	/*  6 */ "prio 6 pppoe_sid 0x1234 ppp_proto ip action drop",
	/*  7 */ "prio 7 cfm mdl 5 op 3 action drop",
	/*  8 */ "prio 8 ip_proto l2tp l2tpv3_sid 305441741 action drop",
	/*  9 */ "prio 9 ip_proto esp spi 1234abcd action tx",
	/* 10 */ "prio 10 ip_proto ah spi 0x1234abce action drop",
	/* 11 */ "prio 11 protocol 802.1ad vlan_ethtype 802.1q cvlan_ethtype ip action tx",
	/* 12 */ "prio 12 protocol 802.1q vlan_ethtype ip ip_proto udp action drop",
	/* 13 */ "prio 13 protocol ip ip_proto udp ip_flags firstfrag action tx",
	/* 14 */ "prio 14 protocol ip ip_proto udp action drop",
	/* 15 */ "prio 15 num_of_vlans 1 action tx",
	/* 16 */ "prio 16 indev lo protocol ip ip_proto tcp action drop",
	/* 17 */ "prio 17 eth_type ipv6 ip_proto tcp action drop",
};

static struct xtcam_dp *dp;
static struct xtcam_oracle o;
static struct xtcam_rule rs[sizeof(rules) / sizeof(rules[0])];
#define NRULES (sizeof(rules) / sizeof(rules[0]))

static void setup(void)
{
	struct xtcam_block_spec spec = { .capacity = 256 };
	struct xtcam_dp_op ops[NRULES];
	char err[XTCAM_ERR_MAX];
	size_t i;
	int e;

	if (!t_have_bpf())
		cr_skip_test("needs root to load BPF programs");
	cr_assert_eq(t_pin_cpu(0), 0);
	e = xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp);
	cr_assert_eq(e, 0, "create: %s", strerror(-e));
	xtcam_oracle_init(&o);
	for (i = 0; i < NRULES; i++) {
		e = xtcam_rule_parse_line(rules[i], &rs[i], &spec, err, sizeof(err));
		cr_assert_eq(e, 0, "\"%s\": %s", rules[i], err);
		rs[i].handle = (uint32_t)(i + 1);
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &rs[i],
					      .act = { .type = rs[i].action.type } };
		cr_assert_eq(xtcam_oracle_add(&o, &rs[i]), 0);
	}
	e = xtcam_dp_apply(dp, ops, NRULES, err, sizeof(err));
	cr_assert_eq(e, 0, "apply: %s (%s)", strerror(-e), err);
}

static void teardown(void)
{
	xtcam_oracle_free(&o);
	xtcam_dp_free(dp);
	dp = NULL;
}

TestSuite(flower, .init = setup, .fini = teardown);

/* Frame f (len bytes) must match rule want (0: none, the default pass). */
static void expect(const uint8_t *f, int len, uint32_t want, const char *what)
{
	const struct xtcam_entry *e;
	struct xtcam_scratch sc;
	uint32_t ret, xdp;
	char kb[512];
	int err;

	err = t_xdp_run(xtcam_dp_parse_fd(dp), f, (uint32_t)len, &ret);
	cr_assert_eq(err, 0, "%s: test run: %s", what, strerror(-err));
	cr_assert_eq(t_scratch(dp, &sc), 0);
	key_format(&sc.key, kb, sizeof(kb));
	e = xtcam_oracle_lookup(&o, &sc.key);
	cr_expect_eq(e ? e->handle : 0, want, "%s: reference matched %u, want %u\n  key %s",
		     what, e ? e->handle : 0, want, kb);
	cr_expect_eq(sc.result_rank, want ? xtcam_rule_rank(&rs[want - 1]) : XTCAM_RANK_NONE,
		     "%s: xdp matched rank %#llx, want handle %u\n  key %s", what,
		     (unsigned long long)sc.result_rank, want, kb);
	xdp = !want ? XDP_PASS : rs[want - 1].action.type == XTCAM_ACT_DROP ? XDP_DROP :
	      XDP_TX;
	cr_expect_eq(ret, xdp, "%s: verdict %u, want %u", what, ret, xdp);
}

static void expect_spec(const struct pkt_spec *s, uint32_t want, const char *what)
{
	static struct pkt p;

	pkt_build(s, NULL, &p);
	expect(p.buf, p.len, want, what);
}

static struct pkt_spec ip4(int proto)
{
	struct pkt_spec s;

	pkt_spec_init(&s);
	s.proto = (uint8_t)proto;
	return s;
}

static void tag(struct pkt_spec *s, uint16_t outer, uint16_t inner)
{
	s->nvlan = inner ? 2 : 1;
	s->tpid[0] = outer;
	s->tpid[1] = inner;
	s->tci[0] = 100;
	s->tci[1] = 200;
}

Test(flower, ip_protocol_and_tags)
{
	struct pkt_spec s;

	s = ip4(IPPROTO_UDP);
	expect_spec(&s, 14, "untagged UDP (protocol ip)");
	s.frag = 1;
	expect_spec(&s, 13, "untagged UDP first fragment");
	s.frag = 2;
	expect_spec(&s, 14, "untagged UDP later fragment");

	s = ip4(IPPROTO_UDP);
	tag(&s, 0x8100, 0);
	expect_spec(&s, 12, "802.1Q UDP: protocol ip does not match it");
	s = ip4(IPPROTO_TCP);
	tag(&s, 0x8100, 0);
	expect_spec(&s, 15, "802.1Q TCP: num_of_vlans 1");
	s = ip4(IPPROTO_UDP);
	tag(&s, 0x88a8, 0x8100);
	expect_spec(&s, 11, "QinQ 802.1ad/802.1Q UDP");
	s = ip4(IPPROTO_UDP);
	tag(&s, 0x8100, 0x8100);
	expect_spec(&s, 0, "QinQ 802.1Q/802.1Q UDP");

	s = ip4(IPPROTO_TCP);
	expect_spec(&s, 16, "untagged TCP from lo (indev)");
	s.eth_type = 0x86dd;
	s.saddr[0] = 0x20;
	s.daddr[0] = 0x20;
	expect_spec(&s, 17, "IPv6 TCP");
	s.proto = IPPROTO_UDP;
	expect_spec(&s, 0, "IPv6 UDP: protocol ip is IPv4 only");
}

Test(flower, arp)
{
	struct pkt_spec s = ip4(0);

	s.eth_type = 0x0806;
	expect_spec(&s, 2, "ARP request for 10.0.0.2");
	s.arp_op = 2;
	expect_spec(&s, 2, "ARP reply from 10.0.0.1");
	s.saddr[3] = 2;
	expect_spec(&s, 1, "ARP reply from 10.0.0.2");
	s.arp_op = 1;
	s.eth_type = 0x8035;
	expect_spec(&s, 3, "RARP");
	s.eth_type = 0x0806;
	s.arp_op = 9;
	expect_spec(&s, 0, "ARP opcode 9 (not read)");
	s.arp_op = 1;
	s.daddr[3] = 3;
	tag(&s, 0x8100, 0);
	expect_spec(&s, 15, "tagged ARP: protocol arp does not match it");
}

static int eth(uint8_t *f, uint16_t tpid, uint16_t et)
{
	int off = 12;

	memset(f, 0, 128);
	f[0] = 2;
	f[5] = 2;
	f[6] = 2;
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

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

Test(flower, mpls)
{
	uint8_t f[128];
	int off;

	off = eth(f, 0, 0x8847);
	put32(f + off, 1000u << 12 | 64);
	put32(f + off + 4, 2000u << 12 | 63);
	put32(f + off + 8, 3000u << 12 | 1 << 8 | 62);
	expect(f, off + 40, 4, "three labels, the second 2000");
	put32(f + off, 1000u << 12 | 1 << 8 | 64);
	expect(f, off + 40, 5, "one label 1000");
	put32(f + off, 1001u << 12 | 1 << 8 | 64);
	expect(f, off + 40, 0, "one label 1001");
	/* the IP header after the label is not read: an IPv4 UDP rule never
	 * sees it */
	put32(f + off, 1001u << 12 | 1 << 8 | 64);
	f[off + 4] = 0x45;
	f[off + 4 + 9] = IPPROTO_UDP;
	expect(f, off + 40, 0, "IPv4 under MPLS");
	off = eth(f, 0x8100, 0x8847);
	put32(f + off, 1000u << 12 | 1 << 8 | 64);
	expect(f, off + 40, 15, "tagged MPLS: protocol mpls_uc does not match it");
	off = eth(f, 0, 0x8848);
	put32(f + off, 1000u << 12 | 1 << 8 | 64);
	expect(f, off + 40, 0, "multicast MPLS");
}

Test(flower, pppoe_cfm)
{
	uint8_t f[128];
	int off;

	off = eth(f, 0, 0x8864);
	f[off] = 0x11;
	f[off + 2] = 0x12;
	f[off + 3] = 0x34;
	f[off + 7] = 0x21;
	expect(f, off + 40, 6, "PPPoE session 0x1234, IPv4");
	f[off + 6] = 0x21;             /* compressed protocol */
	f[off + 7] = 0x45;
	expect(f, off + 40, 6, "PPPoE session 0x1234, IPv4 compressed");
	f[off + 3] = 0x35;
	expect(f, off + 40, 0, "PPPoE session 0x1235");
	off = eth(f, 0, 0x8902);
	f[off] = 5 << 5;
	f[off + 1] = 3;
	expect(f, off + 46, 7, "CFM level 5 opcode 3");
	f[off + 1] = 4;
	expect(f, off + 46, 0, "CFM level 5 opcode 4");
}

Test(flower, l2tpv3_esp_ah)
{
	struct pkt_spec s;

	s = ip4(115);
	s.sport = 0x1234;
	s.dport = 0xabcd;
	expect_spec(&s, 8, "L2TPv3 session 0x1234abcd");
	s.dport = 0xabce;
	expect_spec(&s, 0, "L2TPv3 session 0x1234abce");
	s.proto = 50;
	s.dport = 0xabcd;
	expect_spec(&s, 9, "ESP SPI 0x1234abcd");
	s.dport = 0xabce;
	expect_spec(&s, 0, "ESP SPI 0x1234abce");
	s.proto = 51;
	expect_spec(&s, 10, "AH SPI 0x1234abce");
	s.frag = 2;
	expect_spec(&s, 0, "AH later fragment: no SPI");
}

/* The verifier's work on the parser, which reads every header flower
 * matches, and on the classifier (prog_info's verified_insns, reported
 * from Linux 5.16) stays within a budget well under the verifier's limit
 * of a million instructions.  A parser that grows past it must say why
 * here, with the new figure. */
#define PARSE_BUDGET    750000u
#define CLASSIFY_BUDGET 500000u

static __u32 verified_insns(int fd)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);

	memset(&pi, 0, sizeof(pi));
	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &pi, &len), 0);
	return pi.verified_insns;
}

Test(flower, verifier_budget, .timeout = 120)
{
	struct xtcam_block_spec spec = { .capacity = 1024,
					 .dflt = { .type = XTCAM_ACT_PASS } };
	struct xtcam_dp *d;
	__u32 p, c;

	cr_assert_eq(xtcam_dp_create(&spec, 0, &d), 0);
	p = verified_insns(xtcam_dp_parse_fd(d));
	c = verified_insns(xtcam_dp_classify_fd(d));
	xtcam_dp_free(d);
	if (!p)
		cr_skip_test("this kernel does not report verified_insns");
	cr_log_info("verifier: parser %u, classifier %u instructions", p, c);
	cr_expect_leq(p, PARSE_BUDGET, "the parser cost the verifier %u instructions "
		      "(budget %u)", p, PARSE_BUDGET);
	cr_expect_leq(c, CLASSIFY_BUDGET, "the classifier cost the verifier %u "
		      "instructions (budget %u)", c, CLASSIFY_BUDGET);
}
