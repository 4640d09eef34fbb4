// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Malformed rules: each must fail with the right errno, a message that
 * names the keyword and the reason, and leave the output rule untouched
 * (expect_error() checks all three, through xtcam_rule_parse() and
 * xtcam_rule_parse_line()).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "syntax_test.h"

struct bad {
	const char *line;
	int raw;                /* 1: parse against blk_raw() */
	int err;
	const char *sub[6];
};

#define E(l, e, ...)  { l, 0, e, { __VA_ARGS__, NULL } }
#define ER(l, e, ...) { l, 1, e, { __VA_ARGS__, NULL } }

static void run(const struct bad *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		expect_error(t[i].line, t[i].raw ? blk_raw() : NULL, t[i].err,
			     t[i].sub);
}

#define RUN(t) run(t, ARRAY_SIZE(t))

Test(errors, prio_handle)
{
	static const struct bad t[] = {
		E("action drop", EINVAL, "prio", "required"),
		E("prio 0 action drop", ERANGE, "prio", "\"0\"", "1-65535"),
		E("prio 65536 action drop", ERANGE, "prio", "\"65536\"", "1-65535"),
		E("prio 4294967296 action drop", ERANGE, "prio", "1-65535"),
		E("prio 99999999999999999999999 action drop", ERANGE, "prio"),
		E("prio 0x10000 action drop", ERANGE, "prio"),
		E("prio 10x action drop", EINVAL, "prio", "\"10x\"",
		  "not a priority"),
		E("prio -1 action drop", EINVAL, "prio", "\"-1\""),
		E("prio +1 action drop", EINVAL, "prio", "\"+1\""),
		E("prio 1.5 action drop", EINVAL, "prio", "\"1.5\""),
		E("prio 0x action drop", EINVAL, "prio", "\"0x\""),
		E("prio 0xg action drop", EINVAL, "prio"),
		E("prio 010 action drop", EINVAL, "prio", "\"010\"", "leading zero"),
		E("prio abc action drop", EINVAL, "prio", "\"abc\""),
		E("action drop prio", EINVAL, "prio", "missing value"),
		E("prio action drop", EINVAL, "prio", "missing value", "\"action\""),
		E("prio 1 prio 2 action drop", EINVAL, "prio", "given twice"),
		E("prio 1 pref 2 action drop", EINVAL, "pref", "given twice", "prio"),
		E("prio 1 handle 0 action drop", ERANGE, "handle", "\"0\"",
		  "1-4294967295"),
		E("prio 1 handle 4294967296 action drop", ERANGE, "handle",
		  "\"4294967296\"", "1-4294967295"),
		E("prio 1 handle 0x100000000 action drop", ERANGE, "handle"),
		E("prio 1 handle abc action drop", EINVAL, "handle", "\"abc\"",
		  "not a handle"),
		E("prio 1 handle -1 action drop", EINVAL, "handle", "\"-1\""),
		E("prio 1 handle 1:2 action drop", EINVAL, "handle", "\"1:2\""),
		E("prio 1 action drop handle", EINVAL, "handle", "missing value"),
		E("prio 1 handle 1 handle 1 action drop", EINVAL, "handle",
		  "given twice"),
	};
	RUN(t);
}

/* The CLI's own handle words (`rule del NAME handle H`, `rule show NAME
 * handle H`) are read as `handle H` in a rule: the same value or the same
 * refusal, never tc's base 0 (012 = 10, +8 = 8). */
Test(errors, handle_word_read_as_in_rules)
{
	static const char *const words[] = { "1", "10", "4294967295", "0x0a", "012", "+8",
					     "-1", "0", "4294967296", " 7", "7 ", "0x", "8x", "" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		char line[64], e1[XTCAM_ERR_MAX], e2[XTCAM_ERR_MAX];
		struct xtcam_rule r;
		__u32 h = 12345;
		int rc1, rc2;

		snprintf(line, sizeof(line), "prio 1 action drop handle %s", words[i]);
		rc1 = xtcam_rule_parse_line(line, &r, NULL, e1, sizeof(e1));
		rc2 = xtcam_handle_parse(words[i], &h, e2, sizeof(e2));
		if (!*words[i] || strchr(words[i], ' ')) {
			/* not one word: no handle at all */
			cr_assert_neq(rc2, 0, "\"%s\" read as handle %u", words[i], h);
			cr_assert_eq(h, 12345, "\"%s\": output written on error", words[i]);
			continue;
		}
		cr_assert_eq(rc2, rc1, "\"%s\": %d, the rule language %d (%s)", words[i], rc2,
			     rc1, e1);
		if (rc1) {
			cr_assert_str_eq(e2, e1, "\"%s\": the same message", words[i]);
			cr_assert_eq(h, 12345, "\"%s\": output written on error", words[i]);
		} else {
			cr_assert_eq(h, r.handle, "\"%s\": %u, the rule language %u", words[i], h,
				     r.handle);
		}
	}
	cr_assert_eq(xtcam_handle_parse("012", &(__u32){ 0 }, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_handle_parse("+8", &(__u32){ 0 }, NULL, 0), -EINVAL);
}

Test(errors, actions)
{
	static const struct bad t[] = {
		E("prio 1", EINVAL, "action", "required"),
		E("prio 1 src_ip 1.2.3.4", EINVAL, "action", "required"),
		E("prio 1 action", EINVAL, "action", "missing value"),
		E("prio 1 action foo", EINVAL, "action", "unknown action",
		  "\"foo\""),
		E("prio 1 action DROP", EINVAL, "action", "unknown action"),
		E("prio 1 action accept", EINVAL, "action", "\"accept\""),
		E("prio 1 action redirect", EINVAL, "action", "redirect",
		  "needs dev"),
		E("prio 1 action redirect eth0", EINVAL, "action", "redirect",
		  "needs dev"),
		E("prio 1 action redirect dev", EINVAL, "action", "redirect dev",
		  "missing interface name"),
		E("prio 1 action redirect dev a/b", EINVAL, "action", "\"a/b\"",
		  "not an interface name"),
		E("prio 1 action redirect dev eth0:1", EINVAL, "\"eth0:1\"",
		  "not an interface name"),
		E("prio 1 action redirect dev 0123456789abcdef", EINVAL,
		  "\"0123456789abcdef\"", "not an interface name", "1-15"),
		E("prio 1 action redirect dev .", EINVAL, "not an interface name"),
		/* "#x" would start a comment in the canonical text (through
		 * parse_line it is one: the interface name is then missing) */
		E("prio 1 action redirect dev #x", EINVAL, "redirect dev",
		  "interface name"),
		E("prio 1 action redirect dev eth0 netns #n", EINVAL,
		  "redirect netns", "namespace name"),
		E("prio 1 action redirect dev ..", EINVAL, "not an interface name"),
		E("prio 1 action redirect dev eth0 netns", EINVAL, "action",
		  "netns", "missing namespace name"),
		E("prio 1 action redirect dev eth0 netns a/b", EINVAL, "netns",
		  "\"a/b\"", "not a namespace name"),
		E("prio 1 action redirect dev eth0 netns ..", EINVAL,
		  "not a namespace name"),
		E("prio 1 action redirect dev eth0 netns "
		  "n234567890123456789012345678901234567890123456789012345678901234",
		  EINVAL, "not a namespace name", "1-63"),
		E("prio 1 action redirect dev eth0 netns ns1 netns ns2", EINVAL,
		  "unknown keyword \"netns\""),
		E("prio 1 action cpu", EINVAL, "action", "cpu", "needs a CPU number"),
		E("prio 1 action cpu 8192", ERANGE, "action", "\"8192\"",
		  "not a CPU number", "0-8191"),
		E("prio 1 action cpu x", EINVAL, "action", "\"x\"",
		  "not a CPU number"),
		E("prio 1 action cpu -1", EINVAL, "action", "\"-1\""),
		E("prio 1 action cpu 01", EINVAL, "action", "leading zero"),
		E("prio 1 action drop action pass", EINVAL, "action", "given twice"),
		E("prio 1 action drop extra", EINVAL, "unknown keyword \"extra\""),
		E("prio 1 action pass dev eth0", EINVAL, "unknown keyword \"dev\""),
		E("prio 1 action tx 1", EINVAL, "unknown keyword \"1\""),
	};
	RUN(t);
}

Test(errors, unknown_and_unsupported)
{
	static const struct bad t[] = {
		E("prio 1 dstport 80 action drop", EINVAL,
		  "unknown keyword \"dstport\"", "dst_port"),
		E("prio 1 src-ip 1.2.3.4 action drop", EINVAL,
		  "unknown keyword \"src-ip\"", "src_ip"),
		E("prio 1 ttl 5 action drop", EINVAL, "unknown keyword \"ttl\"",
		  "ip_ttl"),
		E("prio 1 foo 1 action drop", EINVAL, "unknown keyword \"foo\""),
		E("prio 1 SRC_IP 1.2.3.4 action drop", EINVAL,
		  "unknown keyword \"SRC_IP\""),
		E("prio 1 1.2.3.4 action drop", EINVAL,
		  "unknown keyword \"1.2.3.4\""),
		E("prio 1 src_ip 1.2.3.4 5 action drop", EINVAL,
		  "unknown keyword \"5\""),
		E("prio 1 skip_sw action drop", EOPNOTSUPP, "skip_sw", "tc-flower",
		  "not support"),
		E("prio 1 skip_hw action drop", EOPNOTSUPP, "skip_hw"),
		E("prio 1 enc_key_id 5 action drop", EOPNOTSUPP, "enc_key_id",
		  "tunnel metadata", "not yet supported", "outer headers"),
		E("prio 1 ct_state +trk action drop", EOPNOTSUPP, "ct_state",
		  "conntrack", "nftables"),
		E("prio 1 classid 1:1 action drop", EOPNOTSUPP, "classid"),
		E("prio 1 l2_miss 1 action drop", EOPNOTSUPP, "l2_miss", "bridge"),
		E("prio 1 hw_tc 1 action drop", EOPNOTSUPP, "hw_tc"),
		E("prio 1 verbose action drop", EOPNOTSUPP, "verbose"),
		E("prio 1 chain 1 action drop", EOPNOTSUPP, "chain"),
		E("prio 1 geneve_opts 1:1:1 action drop", EOPNOTSUPP,
		  "geneve_opts", "not yet supported"),
		E("prio 1 enc_ttl 1 action drop", EOPNOTSUPP, "enc_ttl"),
	};
	RUN(t);
}

Test(errors, macs)
{
	static const struct bad t[] = {
		E("prio 1 src_mac 00:11:22:33:44 action drop", EINVAL, "src_mac",
		  "\"00:11:22:33:44\"", "not a MAC address"),
		E("prio 1 src_mac 00:11:22:33:44:5g action drop", EINVAL, "src_mac",
		  "\"00:11:22:33:44:5g\"", "not a MAC address"),
		E("prio 1 src_mac zz:11:22:33:44:55 action drop", EINVAL, "src_mac",
		  "not a MAC address"),
		E("prio 1 src_mac 00:11:22:33:44:55:66 action drop", EINVAL,
		  "src_mac", "\"00:11:22:33:44:55:66\"", "not a MAC address"),
		E("prio 1 src_mac 00:11:22:33:44:55: action drop", EINVAL,
		  "src_mac", "\"00:11:22:33:44:55:\"", "not a MAC address"),
		E("prio 1 src_mac :00:11:22:33:44:55 action drop", EINVAL,
		  "src_mac", "not a MAC address"),
		E("prio 1 src_mac 000:11:22:33:44:55 action drop", EINVAL,
		  "src_mac", "not a MAC address"),
		E("prio 1 src_mac 00:11::33:44:55 action drop", EINVAL, "src_mac",
		  "not a MAC address"),
		E("prio 1 src_mac 00-11-22-33-44-55 action drop", EINVAL,
		  "src_mac", "not a MAC address"),
		E("prio 1 src_mac 001122334455 action drop", EINVAL, "src_mac",
		  "not a MAC address"),
		E("prio 1 src_mac 00:11:22:33:44:55:66:77:88:99:aa:bb:cc action drop",
		  EINVAL, "src_mac", "not a MAC address"),
		E("prio 1 dst_mac 00:11:22:33:44:55/49 action drop", ERANGE,
		  "dst_mac", "prefix length 49", "out of range", "0-48"),
		E("prio 1 dst_mac 00:11:22:33:44:55/-1 action drop", EINVAL,
		  "dst_mac", "mask \"-1\""),
		E("prio 1 dst_mac 00:11:22:33:44:55/ action drop", EINVAL,
		  "dst_mac", "mask \"\""),
		E("prio 1 dst_mac 00:11:22:33:44:55/abc action drop", EINVAL,
		  "dst_mac", "mask \"abc\""),
		E("prio 1 dst_mac 00:11:22:33:44:55/0x10 action drop", EINVAL,
		  "dst_mac", "mask \"0x10\""),
		E("prio 1 dst_mac 00:11:22:33:44:55/ff:ff:ff:ff:ff action drop",
		  EINVAL, "dst_mac", "mask", "not a MAC address"),
		E("prio 1 dst_mac 00:11:22:33:44:55/ff:ff:ff:ff:ff:fg action drop",
		  EINVAL, "dst_mac", "mask"),
		E("prio 1 dst_mac 00:11:22:33:44:55/24/24 action drop", EINVAL,
		  "dst_mac", "mask"),
		E("prio 1 dst_mac /24 action drop", EINVAL, "dst_mac",
		  "not a MAC address"),
		E("prio 1 src_mac 0:0:0:0:0:1 src_mac 0:0:0:0:0:1 action drop",
		  EINVAL, "src_mac", "given twice"),
	};
	RUN(t);
}

Test(errors, vlans)
{
	static const struct bad t[] = {
		E("prio 1 vlan_id 4096 action drop", ERANGE, "vlan_id", "\"4096\"",
		  "0-4095"),
		E("prio 1 vlan_id 0x1000 action drop", ERANGE, "vlan_id"),
		E("prio 1 vlan_id -1 action drop", EINVAL, "vlan_id", "\"-1\""),
		E("prio 1 vlan_id abc action drop", EINVAL, "vlan_id", "\"abc\"",
		  "not a VLAN id"),
		E("prio 1 vlan_id 1/0xfff action drop", EINVAL, "vlan_id"),
		E("prio 1 vlan_prio 8 action drop", ERANGE, "vlan_prio", "\"8\"",
		  "0-7"),
		E("prio 1 vlan_prio x action drop", EINVAL, "vlan_prio",
		  "not a VLAN priority"),
		E("prio 1 cvlan_id 4096 action drop", ERANGE, "cvlan_id", "0-4095"),
		E("prio 1 cvlan_prio 8 action drop", ERANGE, "cvlan_prio", "0-7"),
		E("prio 1 vlan maybe action drop", EINVAL, "vlan", "\"maybe\"",
		  "tagged or untagged"),
		E("prio 1 vlan TAGGED action drop", EINVAL, "vlan", "\"TAGGED\""),
		E("prio 1 vlan 5 action drop", EINVAL, "vlan", "\"5\""),
		E("prio 1 vlan untagged vlan_id 5 action drop", EINVAL, "vlan_id",
		  "conflicts", "vlan", "untagged"),
		E("prio 1 vlan_prio 1 vlan untagged action drop", EINVAL,
		  "vlan: untagged conflicts with vlan_prio"),
		E("prio 1 vlan untagged vlan_ethtype ipv4 action drop", EINVAL,
		  "vlan_ethtype", "conflicts", "untagged"),
		E("prio 1 vlan untagged cvlan_id 1 action drop", EINVAL, "cvlan_id",
		  "conflicts", "untagged"),
		E("prio 1 vlan untagged cvlan_prio 1 action drop", EINVAL,
		  "cvlan_prio", "untagged"),
		E("prio 1 vlan untagged cvlan_ethtype arp action drop", EINVAL,
		  "cvlan_ethtype", "untagged"),
		E("prio 1 vlan_ethtype ipv4 cvlan_id 5 action drop", EINVAL,
		  "cvlan_id", "conflicts", "vlan_ethtype", "no inner tag"),
		E("prio 1 cvlan_ethtype arp vlan_ethtype arp action drop", EINVAL,
		  "vlan_ethtype", "conflicts", "cvlan_ethtype"),
		E("prio 1 cvlan_ethtype 802.1Q action drop", EINVAL, "cvlan_ethtype",
		  "third VLAN tag"),
		E("prio 1 cvlan_ethtype 0x88a8 action drop", EINVAL, "cvlan_ethtype",
		  "third VLAN tag"),
		E("prio 1 vlan_ethtype foo action drop", EINVAL, "vlan_ethtype",
		  "\"foo\"", "not an ethertype"),
		E("prio 1 vlan_ethtype 0x10000 action drop", ERANGE, "vlan_ethtype",
		  "\"0x10000\""),
		E("prio 1 vlan_ethtype 65536 action drop", ERANGE, "vlan_ethtype"),
		E("prio 1 vlan_ethtype all action drop", EINVAL, "vlan_ethtype",
		  "\"all\""),
		E("prio 1 vlan_ethtype 0800 action drop", EINVAL, "vlan_ethtype",
		  "\"0800\""),
		E("prio 1 vlan tagged vlan untagged action drop", EINVAL, "vlan",
		  "given twice"),
	};
	RUN(t);
}

Test(errors, eth_type)
{
	static const struct bad t[] = {
		E("prio 1 eth_type 0x8100 action drop", EINVAL, "eth_type",
		  "\"0x8100\"", "VLAN tag"),
		E("prio 1 eth_type 802.1Q action drop", EINVAL, "eth_type",
		  "VLAN tag"),
		E("prio 1 eth_type 0x88a8 action drop", EINVAL, "eth_type",
		  "VLAN tag"),
		E("prio 1 eth_type 33024 action drop", EINVAL, "eth_type",
		  "VLAN tag"),
		E("prio 1 eth_type foo action drop", EINVAL, "eth_type", "\"foo\"",
		  "not an ethertype"),
		E("prio 1 eth_type 0x10000 action drop", ERANGE, "eth_type",
		  "\"0x10000\""),
		E("prio 1 eth_type 65536 action drop", ERANGE, "eth_type",
		  "\"65536\""),
		E("prio 1 eth_type 0x action drop", EINVAL, "eth_type"),
		E("prio 1 eth_type 0800 action drop", EINVAL, "eth_type", "\"0800\"",
		  "leading zero"),
		E("prio 1 eth_type -1 action drop", EINVAL, "eth_type"),
		E("prio 1 eth_type ipv4 eth_type ipv4 action drop", EINVAL,
		  "eth_type", "given twice"),
		E("prio 1 protocol ipv4 protocol ipv4 action drop", EINVAL,
		  "protocol", "given twice"),
		E("prio 1 protocol ipv6 eth_type ipv4 action drop", EINVAL,
		  "eth_type", "conflicts", "protocol"),
	};
	RUN(t);
}

Test(errors, families)
{
	static const struct bad t[] = {
		E("prio 1 eth_type arp src_ip 1.2.3.4 action drop", EINVAL,
		  "src_ip: IPv4 address conflicts with eth_type (arp)"),
		E("prio 1 eth_type ipv6 src_ip 1.2.3.4 action drop", EINVAL,
		  "src_ip", "conflicts", "eth_type", "ipv6"),
		E("prio 1 eth_type ipv4 dst_ip ::1 action drop", EINVAL, "dst_ip",
		  "IPv6", "conflicts", "eth_type"),
		E("prio 1 src_ip 1.2.3.4 eth_type ipv6 action drop", EINVAL,
		  "eth_type", "conflicts", "src_ip"),
		E("prio 1 protocol ipv6 src_ip 10.0.0.1 action drop", EINVAL,
		  "src_ip", "conflicts", "protocol"),
		E("prio 1 eth_type 0x88cc dst_ip 10.0.0.1 action drop", EINVAL,
		  "dst_ip", "conflicts", "eth_type", "0x88cc"),
		E("prio 1 eth_type all src_ip 1.2.3.4 action drop", EINVAL, "src_ip",
		  "conflicts", "eth_type", "all"),
		E("prio 1 eth_type all ip_proto icmp action drop", EINVAL,
		  "ip_proto", "conflicts", "eth_type"),
		E("prio 1 src_ip 1.2.3.4 dst_ip ::1 action drop", EINVAL,
		  "dst_ip: IPv6 address conflicts with src_ip (IPv4 address)"),
		E("prio 1 dst_ip ::1 src_ip 1.2.3.4 action drop", EINVAL,
		  "src_ip: IPv4 address conflicts with dst_ip (IPv6 address)"),
		E("prio 1 ip_proto icmp src_ip ::1 action drop", EINVAL, "src_ip",
		  "conflicts", "ip_proto", "icmp"),
		E("prio 1 src_ip ::1 ip_proto icmp action drop", EINVAL, "ip_proto",
		  "icmp", "conflicts", "src_ip"),
		E("prio 1 ip_proto icmpv6 dst_ip 1.2.3.4 action drop", EINVAL,
		  "dst_ip", "conflicts", "icmpv6"),
		E("prio 1 ip_proto 3a dst_ip 1.2.3.4 action drop", EINVAL, "dst_ip",
		  "conflicts", "ip_proto"),
		E("prio 1 ip_proto 1 dst_ip ::2 action drop", EINVAL, "dst_ip",
		  "conflicts", "ip_proto"),
		E("prio 1 ip_proto icmp eth_type ipv6 action drop", EINVAL,
		  "eth_type", "conflicts", "ip_proto", "icmp"),
		E("prio 1 eth_type ipv4 ip_proto icmpv6 action drop", EINVAL,
		  "ip_proto", "icmpv6", "conflicts", "eth_type"),
		E("prio 1 ip_proto icmp vlan_ethtype ipv6 action drop", EINVAL,
		  "vlan_ethtype", "conflicts", "ip_proto"),
		E("prio 1 eth_type arp ip_proto tcp action drop", EINVAL,
		  "ip_proto", "conflicts", "eth_type", "arp"),
		E("prio 1 eth_type arp ip_tos 1 action drop", EINVAL, "ip_tos",
		  "conflicts", "eth_type"),
		E("prio 1 eth_type arp ip_ttl 1 action drop", EINVAL, "ip_ttl",
		  "conflicts", "eth_type"),
		E("prio 1 eth_type arp ip_flags frag action drop", EINVAL,
		  "ip_flags", "conflicts", "eth_type"),
		E("prio 1 eth_type ipv4 vlan_ethtype ipv6 action drop", EINVAL,
		  "vlan_ethtype", "conflicts", "eth_type"),
		E("prio 1 vlan_ethtype arp src_ip 1.2.3.4 action drop", EINVAL,
		  "src_ip", "conflicts", "vlan_ethtype"),
		E("prio 1 vlan_ethtype 802.1Q cvlan_ethtype arp ip_proto tcp "
		  "action drop", EINVAL, "ip_proto", "conflicts", "cvlan_ethtype"),
		E("prio 1 cvlan_ethtype ipv6 src_ip 1.1.1.1 action drop", EINVAL,
		  "src_ip", "conflicts", "cvlan_ethtype"),
	};
	RUN(t);
}

Test(errors, addresses)
{
	static const struct bad t[] = {
		E("prio 1 src_ip 10.0.0.1/33 action drop", ERANGE,
		  "src_ip: prefix length 33 is out of range for IPv4"),
		E("prio 1 src_ip 2001:db8::/129 action drop", ERANGE,
		  "src_ip: prefix length 129 is out of range for IPv6"),
		E("prio 1 dst_ip 10.0.0.1/4294967296 action drop", ERANGE,
		  "dst_ip", "prefix length", "out of range"),
		E("prio 1 dst_ip 10.0.0.1/99999999999999999999999 action drop",
		  ERANGE, "dst_ip", "out of range"),
		E("prio 1 src_ip 10.0.0.1/-1 action drop", EINVAL, "src_ip",
		  "\"-1\"", "not a prefix length"),
		E("prio 1 src_ip 10.0.0.1/abc action drop", EINVAL, "src_ip",
		  "\"abc\"", "not a prefix length"),
		E("prio 1 src_ip 10.0.0.1/ action drop", EINVAL, "src_ip", "\"\"",
		  "not a prefix length"),
		E("prio 1 src_ip 10.0.0.1/0x8 action drop", EINVAL, "src_ip",
		  "\"0x8\""),
		E("prio 1 src_ip 10.0.0.1/08 action drop", EINVAL, "src_ip"),
		E("prio 1 src_ip 10.0.0.1/8/8 action drop", EINVAL, "src_ip"),
		E("prio 1 src_ip ::1/-1 action drop", EINVAL, "src_ip",
		  "not a prefix length", "0-128"),
		E("prio 1 src_ip ::1/ action drop", EINVAL, "src_ip"),
		E("prio 1 dst_ip 10.0.0.256 action drop", EINVAL, "dst_ip",
		  "\"10.0.0.256\"", "not an IPv4 or IPv6 address"),
		E("prio 1 dst_ip 1.2.3 action drop", EINVAL, "dst_ip", "\"1.2.3\"",
		  "not an IPv4 or IPv6 address"),
		E("prio 1 dst_ip 1.2.3.4.5 action drop", EINVAL, "dst_ip",
		  "not an IPv4 or IPv6 address"),
		E("prio 1 dst_ip 1.2.3.4. action drop", EINVAL, "dst_ip"),
		E("prio 1 dst_ip 010.0.0.1 action drop", EINVAL, "dst_ip"),
		E("prio 1 dst_ip 0x0a000001 action drop", EINVAL, "dst_ip"),
		E("prio 1 dst_ip 167772161 action drop", EINVAL, "dst_ip"),
		E("prio 1 dst_ip 2001:db8:::1 action drop", EINVAL, "dst_ip",
		  "not an IPv4 or IPv6 address"),
		E("prio 1 dst_ip 2001:db8::g action drop", EINVAL, "dst_ip"),
		E("prio 1 dst_ip 1:2:3:4:5:6:7:8:9 action drop", EINVAL, "dst_ip"),
		E("prio 1 dst_ip fe80::1%eth0 action drop", EINVAL, "dst_ip"),
		E("prio 1 dst_ip localhost action drop", EINVAL, "dst_ip",
		  "\"localhost\""),
		E("prio 1 dst_ip /24 action drop", EINVAL, "dst_ip",
		  "not an IPv4 or IPv6 address"),
		E("prio 1 src_ip 1.2.3.4/255.255.255.256 action drop", EINVAL,
		  "src_ip", "mask", "not an IPv4 mask"),
		E("prio 1 src_ip 1.2.3.4/255.255.0 action drop", EINVAL, "src_ip",
		  "mask", "IPv4"),
		E("prio 1 src_ip 1.2.3.4/ffff:: action drop", EINVAL, "src_ip",
		  "mask", "not an IPv4 mask"),
		E("prio 1 src_ip ::1/255.0.0.0 action drop", EINVAL, "src_ip",
		  "mask", "not an IPv6 mask"),
		E("prio 1 src_ip ::1/ffff:::0 action drop", EINVAL, "src_ip",
		  "mask", "IPv6"),
		E("prio 1 src_ip 1.1.1.1 src_ip 1.1.1.1 action drop", EINVAL,
		  "src_ip", "given twice"),
		E("prio 1 src_ip 1111111111111111111111111111111111111111111111111"
		  "1111111111111111111111 action drop", EINVAL, "src_ip",
		  "not an IPv4 or IPv6 address"),
	};
	RUN(t);
}

Test(errors, ip_fields)
{
	static const struct bad t[] = {
		E("prio 1 ip_proto 256 action drop", ERANGE, "ip_proto", "\"256\""),
		E("prio 1 ip_proto 0x100 action drop", ERANGE, "ip_proto"),
		E("prio 1 ip_proto foo action drop", EINVAL, "ip_proto", "\"foo\"",
		  "not an IP protocol"),
		E("prio 1 ip_proto TCP action drop", EINVAL, "ip_proto", "\"TCP\""),
		E("prio 1 ip_proto -1 action drop", EINVAL, "ip_proto"),
		/* hex, as tc reads it: 100 is 0x100 */
		E("prio 1 ip_proto 100 action drop", ERANGE, "ip_proto", "\"100\"",
		  "hex 0-ff"),
		E("prio 1 ip_proto 1g action drop", EINVAL, "ip_proto", "\"1g\"",
		  "not an IP protocol", "hex 0-ff"),
		E("prio 1 ip_proto 0x action drop", EINVAL, "ip_proto"),
		/* tc's abbreviations are refused, naming the protocol */
		E("prio 1 ip_proto t action drop", EINVAL, "ip_proto", "\"t\"",
		  "abbreviation", "tcp"),
		E("prio 1 ip_proto ud action drop", EINVAL, "ip_proto",
		  "abbreviation", "udp"),
		E("prio 1 ip_proto icm action drop", EINVAL, "ip_proto",
		  "abbreviation", "icmp"),
		E("prio 1 ip_proto icmpv action drop", EINVAL, "ip_proto",
		  "abbreviation", "icmpv6"),
		E("prio 1 ip_proto s action drop", EINVAL, "ip_proto",
		  "abbreviation", "sctp"),
		E("prio 1 ip_proto l2 action drop", EINVAL, "ip_proto",
		  "abbreviation", "l2tp"),
		E("prio 1 ip_proto udpl action drop", EINVAL, "ip_proto",
		  "abbreviation", "udplite"),
		E("prio 1 ip_proto tcpx action drop", EINVAL, "ip_proto",
		  "not an IP protocol"),
		E("prio 1 ip_proto tcp ip_proto udp action drop", EINVAL,
		  "ip_proto", "given twice"),
		E("prio 1 ip_tos 256 action drop", ERANGE, "ip_tos", "\"256\"",
		  "0-0xff"),
		E("prio 1 ip_tos 0x100 action drop", ERANGE, "ip_tos"),
		E("prio 1 ip_tos 1/0x100 action drop", ERANGE, "ip_tos", "mask",
		  "\"0x100\"", "out of range"),
		E("prio 1 ip_tos x action drop", EINVAL, "ip_tos", "\"x\"",
		  "not a TOS value"),
		E("prio 1 ip_tos 1/x action drop", EINVAL, "ip_tos", "mask",
		  "\"x\"", "not a number"),
		E("prio 1 ip_tos 1/ action drop", EINVAL, "ip_tos", "mask"),
		E("prio 1 ip_tos /1 action drop", EINVAL, "ip_tos"),
		E("prio 1 ip_tos 1/2/3 action drop", EINVAL, "ip_tos", "mask"),
		E("prio 1 ip_ttl 256 action drop", ERANGE, "ip_ttl", "\"256\"",
		  "not a TTL", "0-255"),
		E("prio 1 ip_ttl -1 action drop", EINVAL, "ip_ttl", "\"-1\""),
		E("prio 1 ip_ttl 64/256 action drop", ERANGE, "ip_ttl", "mask"),
		E("prio 1 ip_ttl 064 action drop", EINVAL, "ip_ttl", "leading zero"),
		E("prio 1 ip_flags foo action drop", EINVAL, "ip_flags",
		  "unknown flag", "\"foo\""),
		E("prio 1 ip_flags FRAG action drop", EINVAL, "ip_flags",
		  "\"FRAG\""),
		E("prio 1 ip_flags frag/foo action drop", EINVAL, "ip_flags",
		  "unknown flag", "\"foo\""),
		E("prio 1 ip_flags frag/ action drop", EINVAL, "ip_flags",
		  "empty flag"),
		E("prio 1 ip_flags /frag action drop", EINVAL, "ip_flags",
		  "empty flag"),
		E("prio 1 ip_flags frag//firstfrag action drop", EINVAL, "ip_flags",
		  "empty flag"),
		E("prio 1 ip_flags / action drop", EINVAL, "ip_flags"),
		E("prio 1 ip_flags frag,firstfrag action drop", EINVAL, "ip_flags"),
		E("prio 1 ip_flags frag/nofrag action drop", EINVAL, "ip_flags",
		  "contradict"),
		E("prio 1 ip_flags nofirstfrag/firstfrag action drop", EINVAL,
		  "ip_flags", "contradict"),
		E("prio 1 ip_flags frag/frag action drop", EINVAL, "ip_flags",
		  "frag given twice"),
		E("prio 1 ip_flags nofrag/firstfrag action drop", EINVAL, "ip_flags",
		  "never match"),
		E("prio 1 ip_flags firstfrag/nofrag action drop", EINVAL, "ip_flags",
		  "never match"),
		E("prio 1 ip_flags frag ip_flags nofrag action drop", EINVAL,
		  "ip_flags", "given twice"),
	};
	RUN(t);
}

Test(errors, ports)
{
	static const struct bad t[] = {
		E("prio 1 ip_proto tcp dst_port 70000 action drop", ERANGE,
		  "dst_port: \"70000\" is not a port (0-65535)"),
		E("prio 1 ip_proto tcp src_port 65536 action drop", ERANGE,
		  "src_port", "\"65536\"", "0-65535"),
		E("prio 1 ip_proto tcp dst_port 0x10000 action drop", ERANGE,
		  "dst_port"),
		E("prio 1 ip_proto tcp dst_port 1- action drop", EINVAL, "dst_port",
		  "\"1-\""),
		E("prio 1 ip_proto tcp dst_port -5 action drop", EINVAL, "dst_port",
		  "\"-5\""),
		E("prio 1 ip_proto tcp dst_port - action drop", EINVAL, "dst_port",
		  "\"-\""),
		E("prio 1 ip_proto tcp dst_port 9-5 action drop", EINVAL,
		  "dst_port", "range 9-5", "reversed"),
		E("prio 1 ip_proto tcp dst_port 65535-0 action drop", EINVAL,
		  "dst_port", "reversed"),
		E("prio 1 ip_proto tcp dst_port 1-70000 action drop", ERANGE,
		  "dst_port", "\"70000\"", "not a port"),
		E("prio 1 ip_proto tcp dst_port 70000-80000 action drop", ERANGE,
		  "dst_port", "\"70000\""),
		E("prio 1 ip_proto tcp dst_port 1-2-3 action drop", EINVAL,
		  "dst_port", "\"2-3\""),
		E("prio 1 ip_proto tcp dst_port x action drop", EINVAL, "dst_port",
		  "\"x\"", "not a port"),
		E("prio 1 ip_proto tcp dst_port 80x action drop", EINVAL,
		  "dst_port", "\"80x\""),
		E("prio 1 ip_proto tcp dst_port a-b action drop", EINVAL,
		  "dst_port", "\"a\""),
		E("prio 1 ip_proto tcp dst_port 080 action drop", EINVAL,
		  "dst_port", "leading zero"),
		E("prio 1 ip_proto tcp dst_port 80/0x00ff action drop", EINVAL,
		  "dst_port", "not a prefix mask"),
		E("prio 1 ip_proto tcp dst_port 80/0x10000 action drop", ERANGE,
		  "dst_port", "mask"),
		E("prio 1 ip_proto tcp dst_port 80/ action drop", EINVAL,
		  "dst_port", "mask"),
		E("prio 1 ip_proto tcp dst_port 1-2/3 action drop", EINVAL,
		  "dst_port", "\"1-2/3\""),
		E("prio 1 ip_proto tcp dst_port 1 dst_port 2 action drop", EINVAL,
		  "dst_port", "given twice"),
		/* prerequisites */
		E("prio 1 dst_port 80 action drop", EINVAL,
		  "dst_port: needs ip_proto tcp, udp"),
		E("prio 1 src_port 80 action drop", EINVAL, "src_port",
		  "needs ip_proto tcp, udp"),
		E("prio 1 ip_proto icmp dst_port 80 action drop", EINVAL,
		  "dst_port", "needs ip_proto", "ip_proto is icmp"),
		E("prio 1 ip_proto 2f src_port 1 action drop", EINVAL, "src_port",
		  "needs ip_proto", "ip_proto is 0x2f"),
		E("prio 1 ip_proto 17 src_port 1 action drop", EINVAL, "src_port",
		  "needs ip_proto", "ip_proto is 0x17"),
		E("prio 1 eth_type ipv4 dst_port 1 action drop", EINVAL,
		  "dst_port", "needs ip_proto"),
	};
	RUN(t);
}

Test(errors, tcp_flags_icmp)
{
	static const struct bad t[] = {
		E("prio 1 ip_proto tcp tcp_flags 0x1000 action drop", ERANGE,
		  "tcp_flags", "\"0x1000\"", "0-0xfff"),
		E("prio 1 ip_proto tcp tcp_flags 4096 action drop", ERANGE,
		  "tcp_flags", "\"4096\""),
		E("prio 1 ip_proto tcp tcp_flags 0x12/0x1000 action drop", ERANGE,
		  "tcp_flags", "mask"),
		E("prio 1 ip_proto tcp tcp_flags syn action drop", EINVAL,
		  "tcp_flags", "\"syn\""),
		E("prio 1 ip_proto tcp tcp_flags 0x12/ action drop", EINVAL,
		  "tcp_flags", "mask"),
		E("prio 1 ip_proto udp tcp_flags 2 action drop", EINVAL,
		  "tcp_flags: needs ip_proto tcp", "ip_proto is udp"),
		E("prio 1 tcp_flags 2 action drop", EINVAL,
		  "tcp_flags: needs ip_proto tcp"),
		E("prio 1 type 8 action drop", EINVAL,
		  "type: needs ip_proto icmp or icmpv6"),
		E("prio 1 code 0 action drop", EINVAL,
		  "code: needs ip_proto icmp or icmpv6"),
		E("prio 1 ip_proto tcp code 0 action drop", EINVAL, "code",
		  "needs ip_proto icmp", "ip_proto is tcp"),
		E("prio 1 ip_proto icmp type 256 action drop", ERANGE, "type",
		  "\"256\"", "0-255"),
		E("prio 1 ip_proto icmp code 256 action drop", ERANGE, "code",
		  "0-255"),
		E("prio 1 ip_proto icmp code x action drop", EINVAL, "code",
		  "\"x\"", "not an ICMP code"),
		E("prio 1 ip_proto icmp type 1/0x100 action drop", ERANGE, "type",
		  "mask"),
		E("prio 1 ip_proto icmp type 1 type 2 action drop", EINVAL, "type",
		  "given twice"),
	};
	RUN(t);
}

Test(errors, raw_fields)
{
	static const struct bad t[] = {
		E("prio 1 raw1 1 action drop", EINVAL, "raw1",
		  "the block has no raw1 field"),
		E("prio 1 raw2 0x1/0x1 action drop", EINVAL, "raw2",
		  "the block has no raw2 field"),
		ER("prio 1 raw1 0x100 action drop", ERANGE, "raw1", "\"0x100\"",
		   "1-byte value", "0-0xff"),
		ER("prio 1 raw1 256 action drop", ERANGE, "raw1", "\"256\""),
		ER("prio 1 raw1 1/0x100 action drop", ERANGE, "raw1", "mask"),
		ER("prio 1 raw1 x action drop", EINVAL, "raw1", "\"x\""),
		ER("prio 1 raw1 1/ action drop", EINVAL, "raw1", "mask"),
		ER("prio 1 raw2 0x100000000 action drop", ERANGE, "raw2",
		   "4-byte value", "0-0xffffffff"),
		ER("prio 1 raw2 1/0x100000000 action drop", ERANGE, "raw2", "mask"),
		ER("prio 1 raw1 1 raw1 1 action drop", EINVAL, "raw1",
		   "given twice"),
		ER("prio 1 raw1 action drop", EINVAL, "raw1", "missing value"),
	};
	RUN(t);
}

Test(errors, raw_width_per_length)
{
	static const char *const too_wide[] = { NULL, "0x100", "0x10000",
						"0x1000000", "0x100000000" };
	char line[128], name[8], bytes[16], other[48];
	unsigned len;
	int idx;

	for (idx = 0; idx < 2; idx++)
		for (len = 1; len <= 4; len++) {
			const char *const wide[] = { name, bytes, NULL };
			const char *const none[] = { other, NULL };

			snprintf(name, sizeof(name), "raw%d", idx + 1);
			snprintf(bytes, sizeof(bytes), "%u-byte value", len);
			snprintf(line, sizeof(line), "prio 1 raw%d %s action drop",
				 idx + 1, too_wide[len]);
			expect_error(line, blk_raw_len(idx, len), ERANGE, wide);
			/* the other field is not configured */
			snprintf(other, sizeof(other), "raw%d: the block has no "
				 "raw%d field", 2 - idx, 2 - idx);
			snprintf(line, sizeof(line), "prio 1 raw%d 1 action drop",
				 2 - idx);
			expect_error(line, blk_raw_len(idx, len), EINVAL, none);
		}
}

Test(errors, raw_misconfigured_block)
{
	static const struct xtcam_raw_spec bad[] = {
		{ .layer = 4, .len = 1, .offset = 0 },
		{ .layer = 0xff, .len = 1, .offset = 0 },
		{ .layer = XTCAM_RAW_L2, .len = 0, .offset = 0 },
		{ .layer = XTCAM_RAW_L2, .len = 5, .offset = 0 },
	};
	const char *const subs[] = { "raw1", "misconfigured", NULL };
	struct xtcam_block_spec b;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		xtcam_block_spec_init(&b);
		strcpy(b.name, "bad");
		b.raw[0] = bad[i];
		expect_error("prio 1 raw1 1 action drop", &b, EINVAL, subs);
	}
}

Test(errors, fragments_and_l4)
{
	/* later fragments carry no L4 header: such a rule never matches */
	static const struct bad t[] = {
		E("prio 1 ip_flags frag/nofirstfrag ip_proto tcp dst_port 80 "
		  "action drop", EINVAL, "dst_port", "ip_flags", "frag/nofirstfrag",
		  "fragment"),
		E("prio 1 ip_proto udp src_port 80 ip_flags nofirstfrag/frag "
		  "action drop", EINVAL, "ip_flags", "src_port", "fragment"),
		E("prio 1 ip_flags frag/nofirstfrag ip_proto tcp tcp_flags 2 "
		  "action drop", EINVAL, "tcp_flags", "ip_flags"),
		E("prio 1 ip_flags frag/nofirstfrag ip_proto icmp type 3 "
		  "action drop", EINVAL, "type", "ip_flags"),
		E("prio 1 ip_flags frag/nofirstfrag ip_proto icmp code 3 "
		  "action drop", EINVAL, "code", "ip_flags"),
		ER("prio 1 ip_flags frag/nofirstfrag raw2 1 action drop", EINVAL,
		   "raw2", "ip_flags", "l4"),
	};
	struct xtcam_rule r;

	RUN(t);
	/* first fragments and unfragmented packets do have them */
	parse_ok("prio 1 ip_flags frag/firstfrag ip_proto tcp dst_port 80 "
		 "action drop", NULL, &r);
	parse_ok("prio 1 ip_flags nofirstfrag ip_proto tcp dst_port 80 "
		 "action drop", NULL, &r);
	parse_ok("prio 1 ip_flags frag ip_proto tcp dst_port 80 action drop",
		 NULL, &r);
	parse_ok("prio 1 ip_flags nofrag ip_proto icmp type 8 action drop",
		 NULL, &r);
	/* raw1 of blk_raw() is at l3: there in every fragment */
	parse_ok("prio 1 ip_flags frag/nofirstfrag raw1 1 ip_proto 11 "
		 "action drop", blk_raw(), &r);
}

Test(errors, value_is_a_keyword)
{
	static const struct bad t[] = {
		E("prio 1 src_ip dst_ip 1.2.3.4 action drop", EINVAL, "src_ip",
		  "missing value", "\"dst_ip\""),
		E("prio 1 src_mac dst_mac 00:11:22:33:44:55 action drop", EINVAL,
		  "src_mac", "missing value", "\"dst_mac\""),
		E("prio 1 ip_proto action drop", EINVAL, "ip_proto",
		  "missing value", "\"action\""),
		E("prio 1 vlan type action drop", EINVAL, "vlan", "missing value"),
	};
	RUN(t);
}

/* Every keyword: missing value at the end of argv, and given twice. */
Test(errors, every_keyword_missing_and_twice)
{
	static const struct { const char *kw, *val, *ctx; } t[] = {
		{ "prio", "1", "" },
		{ "pref", "1", "" },
		{ "handle", "1", "" },
		{ "src_mac", "00:11:22:33:44:55", "" },
		{ "dst_mac", "00:11:22:33:44:55", "" },
		{ "vlan", "tagged", "" },
		{ "vlan_id", "1", "" },
		{ "vlan_prio", "1", "" },
		{ "vlan_ethtype", "ipv4", "" },
		{ "cvlan_id", "1", "" },
		{ "cvlan_prio", "1", "" },
		{ "cvlan_ethtype", "ipv4", "" },
		{ "eth_type", "ipv4", "" },
		{ "protocol", "ipv4", "" },
		{ "ip_proto", "tcp", "" },
		{ "src_ip", "1.2.3.4", "" },
		{ "dst_ip", "1.2.3.4", "" },
		{ "ip_tos", "1", "" },
		{ "ip_ttl", "1", "" },
		{ "ip_flags", "frag", "" },
		{ "src_port", "1", "ip_proto tcp" },
		{ "dst_port", "1", "ip_proto tcp" },
		{ "tcp_flags", "1", "ip_proto tcp" },
		{ "type", "1", "ip_proto icmp" },
		{ "code", "1", "ip_proto icmp" },
		{ "raw1", "1", "" },
		{ "raw2", "1", "" },
		{ "num_of_vlans", "1", "" },
		{ "arp_op", "1", "protocol arp" },
		{ "arp_sip", "1.2.3.4", "protocol arp" },
		{ "arp_tip", "1.2.3.4", "protocol arp" },
		{ "arp_sha", "00:11:22:33:44:55", "protocol arp" },
		{ "arp_tha", "00:11:22:33:44:55", "protocol arp" },
		{ "mpls_label", "1", "protocol mpls_uc" },
		{ "mpls_tc", "1", "protocol mpls_uc" },
		{ "mpls_bos", "1", "protocol mpls_uc" },
		{ "mpls_ttl", "1", "protocol mpls_uc" },
		{ "pppoe_sid", "1", "" },
		{ "ppp_proto", "ip", "" },
		{ "l2tpv3_sid", "1", "ip_proto l2tp" },
		{ "spi", "1", "ip_proto esp" },
		{ "indev", "lo", "" },
	};
	char line[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		const char *const miss[] = { t[i].kw, "missing value", NULL };
		const char *const twice[] = { t[i].kw, "given twice", NULL };
		const char *prio = !strcmp(t[i].kw, "prio") ||
				   !strcmp(t[i].kw, "pref") ? "" : "prio 1 ";
		struct xtcam_rule r;

		snprintf(line, sizeof(line), "%s%s action drop %s %s", prio,
			 t[i].ctx, t[i].kw, t[i].val);
		parse_ok(line, blk_raw(), &r);   /* the value is fine */

		snprintf(line, sizeof(line), "%s%s action drop %s", prio,
			 t[i].ctx, t[i].kw);
		expect_error(line, blk_raw(), EINVAL, miss);

		snprintf(line, sizeof(line), "%s%s %s %s action drop %s %s", prio,
			 t[i].ctx, t[i].kw, t[i].val, t[i].kw, t[i].val);
		expect_error(line, blk_raw(), EINVAL, twice);
	}
	/* and the same for action */
	{
		const char *const twice[] = { "action", "given twice", NULL };

		expect_error("prio 1 action drop action drop", NULL, EINVAL, twice);
	}
}

/* Whatever else is wrong, a rule that fails keeps *r as it was, also
 * when the failure comes late (prerequisites, families). */
Test(errors, output_untouched_late_failures)
{
	static const char *const lines[] = {
		"prio 1 src_ip 1.2.3.4 ip_proto tcp dst_port 80 tcp_flags 2 "
		"eth_type ipv6 action drop",
		"prio 1 handle 5 src_mac 0:0:0:0:0:1 ip_proto udp tcp_flags 1 "
		"action redirect dev eth0",
		"prio 1 handle 5 vlan_id 4 vlan untagged action cpu 3",
	};
	struct xtcam_rule r, keep;
	char err[XTCAM_ERR_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		base_rule(&r, 77);
		r.handle = 99;
		keep = r;
		cr_assert_eq(parse(lines[i], &r, NULL, err, sizeof(err)), -EINVAL,
			     "%s", lines[i]);
		cr_assert(!memcmp(&r, &keep, sizeof(r)), "%s", lines[i]);
	}
}
