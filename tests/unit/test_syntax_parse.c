// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam_rule_parse(): every keyword, with the exact value/mask bytes it
 * must produce (struct xtcam_rule compared byte for byte), plus the line
 * layer (xtcam_rule_parse_line, xtcam_split_words).
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syntax_test.h"

static void mac(__u8 *dst, unsigned a, unsigned b, unsigned c, unsigned d,
		unsigned e, unsigned f)
{
	dst[0] = (__u8)a, dst[1] = (__u8)b, dst[2] = (__u8)c;
	dst[3] = (__u8)d, dst[4] = (__u8)e, dst[5] = (__u8)f;
}

static void v6(__be32 *dst, const char *s)
{
	cr_assert_eq(inet_pton(AF_INET6, s, dst), 1, "bad test address %s", s);
}

/* --- prio, handle, order ------------------------------------------------- */

Test(parse, minimal)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	expect_rule("prio 1 action drop", NULL, &w);
	w.prio = 65535;
	expect_rule("prio 65535 action drop", NULL, &w);
	w.prio = 7;
	expect_rule("pref 7 action drop", NULL, &w);
	w.prio = 16;
	expect_rule("prio 0x10 action drop", NULL, &w);
}

Test(parse, handle)
{
	struct xtcam_rule w;

	base_rule(&w, 5);
	w.handle = 1;
	expect_rule("prio 5 handle 1 action drop", NULL, &w);
	w.handle = 4294967295u;
	expect_rule("prio 5 handle 4294967295 action drop", NULL, &w);
	expect_rule("prio 5 handle 0xffffffff action drop", NULL, &w);
	w.handle = 0;
	expect_rule("prio 5 action drop", NULL, &w);   /* 0 = unassigned */
}

Test(parse, any_word_order)
{
	struct xtcam_rule a, b, c;

	parse_ok("prio 2 handle 3 ip_proto tcp dst_port 80 action pass", NULL, &a);
	parse_ok("action pass dst_port 80 handle 3 ip_proto tcp prio 2", NULL, &b);
	parse_ok("ip_proto tcp action pass prio 2 dst_port 80 handle 3", NULL, &c);
	cr_assert(!memcmp(&a, &b, sizeof(a)));
	cr_assert(!memcmp(&a, &c, sizeof(a)));
}

/* --- MACs ------------------------------------------------------------------ */

Test(parse, src_mac)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(SRC_MAC);
	mac(w.value.src_mac, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55);
	memset(w.mask.src_mac, 0xff, 6);
	expect_rule("prio 1 src_mac 00:11:22:33:44:55 action drop", NULL, &w);
	expect_rule("prio 1 src_mac 00:11:22:33:44:55/48 action drop", NULL, &w);
	expect_rule("prio 1 src_mac 00:11:22:33:44:55/ff:ff:ff:ff:ff:ff "
		    "action drop", NULL, &w);
	expect_rule("prio 1 src_mac 0:11:22:33:44:55 action drop", NULL, &w);

	mac(w.value.src_mac, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff);
	expect_rule("prio 1 src_mac AA:bb:Cc:dD:EE:ff action drop", NULL, &w);
	mac(w.value.src_mac, 0, 1, 2, 0xa, 0xb, 0xc);
	expect_rule("prio 1 src_mac 0:1:2:a:b:c action drop", NULL, &w);

	/* prefix: value masked */
	mac(w.value.src_mac, 0x00, 0x11, 0x22, 0, 0, 0);
	mac(w.mask.src_mac, 0xff, 0xff, 0xff, 0, 0, 0);
	expect_rule("prio 1 src_mac 00:11:22:33:44:55/24 action drop", NULL, &w);
	mac(w.value.src_mac, 0x80, 0, 0, 0, 0, 0);
	mac(w.mask.src_mac, 0x80, 0, 0, 0, 0, 0);
	expect_rule("prio 1 src_mac ff:11:22:33:44:55/1 action drop", NULL, &w);
	mac(w.value.src_mac, 0x00, 0x11, 0x22, 0x33, 0x44, 0x54);
	mac(w.mask.src_mac, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe);
	expect_rule("prio 1 src_mac 00:11:22:33:44:55/47 action drop", NULL, &w);

	/* arbitrary mask */
	mac(w.value.src_mac, 0x00, 0x00, 0x22, 0x00, 0x00, 0x05);
	mac(w.mask.src_mac, 0xff, 0x00, 0xff, 0x00, 0x00, 0x0f);
	expect_rule("prio 1 src_mac 00:11:22:33:44:55/ff:00:ff:00:00:0f "
		    "action drop", NULL, &w);

	/* /0: matches anything, but was given */
	memset(w.value.src_mac, 0, 6);
	memset(w.mask.src_mac, 0, 6);
	expect_rule("prio 1 src_mac 12:34:56:78:9a:bc/0 action drop", NULL, &w);
}

Test(parse, dst_mac)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(DST_MAC);
	mac(w.value.dst_mac, 0x01, 0x00, 0x5e, 0x00, 0x00, 0x00);
	mac(w.mask.dst_mac, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00);
	expect_rule("prio 1 dst_mac 01:00:5e:7f:00:01/25 action drop", NULL, &w);

	w.keywords |= KW(SRC_MAC);
	mac(w.value.src_mac, 2, 0, 0, 0, 0, 1);
	memset(w.mask.src_mac, 0xff, 6);
	expect_rule("prio 1 dst_mac 01:00:5e:7f:00:01/25 src_mac 02:00:00:00:00:01 "
		    "action drop", NULL, &w);
}

/* --- VLANs ----------------------------------------------------------------- */

Test(parse, vlan_tagged_untagged)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(VLAN);
	w.value.flags = XTCAM_F_VLAN1;
	w.mask.flags = XTCAM_F_VLAN1;
	expect_rule("prio 1 vlan tagged action drop", NULL, &w);
	w.value.flags = 0;
	expect_rule("prio 1 vlan untagged action drop", NULL, &w);
}

Test(parse, vlan_id_prio)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(VLAN_ID);
	w.value.vlan_tci = htons(100);
	w.mask.vlan_tci = htons(0x0fff);
	expect_rule("prio 1 vlan_id 100 action drop", NULL, &w);
	expect_rule("prio 1 vlan_id 0x64 action drop", NULL, &w);
	w.value.vlan_tci = htons(4095);
	expect_rule("prio 1 vlan_id 4095 action drop", NULL, &w);
	w.value.vlan_tci = 0;
	expect_rule("prio 1 vlan_id 0 action drop", NULL, &w);

	w.keywords = KW(VLAN_PRIO);
	w.value.vlan_tci = htons(7 << 13);
	w.mask.vlan_tci = htons(0xe000);
	expect_rule("prio 1 vlan_prio 7 action drop", NULL, &w);
	w.value.vlan_tci = 0;
	expect_rule("prio 1 vlan_prio 0 action drop", NULL, &w);

	/* both: one tci, the DEI bit (0x1000) never matched */
	w.keywords = KW(VLAN_ID) | KW(VLAN_PRIO);
	w.value.vlan_tci = htons(5 << 13 | 100);
	w.mask.vlan_tci = htons(0xefff);
	expect_rule("prio 1 vlan_id 100 vlan_prio 5 action drop", NULL, &w);
	expect_rule("prio 1 vlan_prio 5 vlan_id 100 action drop", NULL, &w);

	/* with vlan tagged */
	w.keywords |= KW(VLAN);
	w.value.flags = w.mask.flags = XTCAM_F_VLAN1;
	expect_rule("prio 1 vlan tagged vlan_prio 5 vlan_id 100 action drop",
		    NULL, &w);
}

Test(parse, cvlan_id_prio)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(CVLAN_ID) | KW(CVLAN_PRIO) | KW(VLAN_ID);
	w.value.cvlan_tci = htons(3 << 13 | 4000);
	w.mask.cvlan_tci = htons(0xefff);
	w.value.vlan_tci = htons(10);
	w.mask.vlan_tci = htons(0x0fff);
	expect_rule("prio 1 cvlan_id 4000 cvlan_prio 3 vlan_id 10 action drop",
		    NULL, &w);
}

Test(parse, vlan_ethtype)
{
	static const struct { const char *s; __u16 v; } t[] = {
		{ "802.1Q", 0x8100 }, { "802.1ad", 0x88a8 }, { "0x8100", 0x8100 },
		{ "ipv4", 0x0800 }, { "ip", 0x0800 }, { "ipv6", 0x86dd },
		{ "arp", 0x0806 }, { "0x88cc", 0x88cc }, { "0X88CC", 0x88cc },
		{ "0x0", 0 }, { "0xffff", 0xffff }, { "2054", 0x0806 },
		{ "34525", 0x86dd }, { "0", 0 },
	};
	struct xtcam_rule w;
	char line[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		base_rule(&w, 1);
		w.keywords = KW(VLAN_ETHTYPE);
		w.value.vlan_ethtype = htons(t[i].v);
		w.mask.vlan_ethtype = 0xffff;
		snprintf(line, sizeof(line), "prio 1 vlan_ethtype %s action drop",
			 t[i].s);
		expect_rule(line, NULL, &w);

		/* cvlan_ethtype: any but a third tag */
		if (t[i].v == 0x8100 || t[i].v == 0x88a8)
			continue;
		base_rule(&w, 1);
		w.keywords = KW(CVLAN_ETHTYPE);
		w.value.cvlan_ethtype = htons(t[i].v);
		w.mask.cvlan_ethtype = 0xffff;
		snprintf(line, sizeof(line), "prio 1 cvlan_ethtype %s action drop",
			 t[i].s);
		expect_rule(line, NULL, &w);
	}
}

Test(parse, double_tagged)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(VLAN_ETHTYPE) | KW(CVLAN_ETHTYPE) | KW(CVLAN_ID) |
		     KW(IP_PROTO);
	w.value.vlan_ethtype = htons(0x8100);
	w.mask.vlan_ethtype = 0xffff;
	w.value.cvlan_ethtype = htons(0x0800);
	w.mask.cvlan_ethtype = 0xffff;
	w.value.cvlan_tci = htons(7);
	w.mask.cvlan_tci = htons(0x0fff);
	w.value.ip_proto = 17;
	w.mask.ip_proto = 0xff;
	expect_rule("prio 1 vlan_ethtype 802.1Q cvlan_id 7 cvlan_ethtype ipv4 "
		    "ip_proto udp action drop", NULL, &w);
}

/* --- eth_type -------------------------------------------------------------- */

Test(parse, eth_type)
{
	static const struct { const char *s; __u16 v; } t[] = {
		{ "ipv4", 0x0800 }, { "ip", 0x0800 }, { "IPv4", 0x0800 },
		{ "ipv6", 0x86dd }, { "IPV6", 0x86dd }, { "arp", 0x0806 },
		{ "0x0800", 0x0800 }, { "0x86DD", 0x86dd }, { "0x88cc", 0x88cc },
		{ "0x0", 0 }, { "0xffff", 0xffff }, { "2048", 0x0800 },
		{ "35020", 0x88cc }, { "65535", 0xffff }, { "0", 0 },
	};
	struct xtcam_rule w;
	char line[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		base_rule(&w, 1);
		w.keywords = KW(ETH_TYPE);
		w.value.eth_type = htons(t[i].v);
		w.mask.eth_type = 0xffff;
		snprintf(line, sizeof(line), "prio 1 eth_type %s action drop",
			 t[i].s);
		expect_rule(line, NULL, &w);
		/* protocol: the outermost ethertype, so an untagged frame */
		w.keywords = KW(PROTOCOL);
		w.mask.flags = XTCAM_F_VLAN1;
		snprintf(line, sizeof(line), "prio 1 protocol %s action drop",
			 t[i].s);
		expect_rule(line, NULL, &w);
	}
}

Test(parse, eth_type_all)
{
	struct xtcam_rule w;

	/* given, but matches nothing: the keyword bit only */
	base_rule(&w, 1);
	w.keywords = KW(ETH_TYPE);
	expect_rule("prio 1 eth_type all action drop", NULL, &w);
	w.keywords = KW(PROTOCOL);
	expect_rule("prio 1 protocol all action drop", NULL, &w);
	w.keywords = KW(ETH_TYPE);

	/* with IP matches that imply nothing */
	w.keywords |= KW(IP_PROTO) | KW(IP_TTL);
	w.value.ip_proto = 6;
	w.mask.ip_proto = 0xff;
	w.value.ip_ttl = 1;
	w.mask.ip_ttl = 0xff;
	expect_rule("prio 1 eth_type all ip_proto tcp ip_ttl 1 action drop",
		    NULL, &w);
}

Test(parse, eth_type_with_vlan_fields)
{
	struct xtcam_rule w;

	/* eth_type is the protocol after the tags: it goes with vlan_* */
	base_rule(&w, 1);
	w.keywords = KW(ETH_TYPE) | KW(VLAN_ID) | KW(VLAN_ETHTYPE);
	w.value.eth_type = htons(0x0806);
	w.mask.eth_type = 0xffff;
	w.value.vlan_tci = htons(42);
	w.mask.vlan_tci = htons(0x0fff);
	w.value.vlan_ethtype = htons(0x0806);
	w.mask.vlan_ethtype = 0xffff;
	expect_rule("prio 1 vlan_id 42 vlan_ethtype arp eth_type arp action drop",
		    NULL, &w);
}

/* --- ip_proto -------------------------------------------------------------- */

/* numbers are hex, as tc-flower reads them: "11" is udp */
Test(parse, ip_proto)
{
	static const struct { const char *s; __u8 v; __u16 implied; } t[] = {
		{ "tcp", 6, 0 }, { "udp", 17, 0 }, { "sctp", 132, 0 },
		{ "udplite", 136, 0 }, { "icmp", 1, 0x0800 },
		{ "icmpv6", 58, 0x86dd }, { "esp", 50, 0 }, { "ah", 51, 0 },
		{ "l2tp", 115, 0 }, { "0", 0, 0 }, { "ff", 255, 0 },
		{ "FF", 255, 0 }, { "0xff", 255, 0 }, { "2f", 47, 0 },
		{ "0x2f", 47, 0 }, { "6", 6, 0 }, { "06", 6, 0 },
		{ "11", 17, 0 }, { "0x11", 17, 0 }, { "47", 0x47, 0 },
		{ "84", 132, 0 }, { "a", 10, 0 }, { "e", 14, 0 },
		{ "1", 1, 0x0800 }, { "3a", 58, 0x86dd }, { "0x3a", 58, 0x86dd },
	};
	struct xtcam_rule w;
	char line[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		base_rule(&w, 1);
		w.keywords = KW(IP_PROTO);   /* never ETH_TYPE when implied */
		w.value.ip_proto = t[i].v;
		w.mask.ip_proto = 0xff;
		if (t[i].implied) {
			w.value.eth_type = htons(t[i].implied);
			w.mask.eth_type = 0xffff;
		}
		snprintf(line, sizeof(line), "prio 1 ip_proto %s action drop",
			 t[i].s);
		expect_rule(line, NULL, &w);
	}
}

/* --- addresses ------------------------------------------------------------- */

Test(parse, src_ip_v4)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(SRC_IP);
	w.value.eth_type = htons(0x0800);  /* implied, no ETH_TYPE bit */
	w.mask.eth_type = 0xffff;
	w.value.src_ip[0] = htonl(0x0a010203);
	w.mask.src_ip[0] = 0xffffffff;
	expect_rule("prio 1 src_ip 10.1.2.3 action drop", NULL, &w);
	expect_rule("prio 1 src_ip 10.1.2.3/32 action drop", NULL, &w);
	expect_rule("prio 1 src_ip 10.1.2.3/255.255.255.255 action drop", NULL,
		    &w);

	w.value.src_ip[0] = htonl(0x0a000000);
	w.mask.src_ip[0] = htonl(0xff000000);
	expect_rule("prio 1 src_ip 10.1.2.3/8 action drop", NULL, &w);
	expect_rule("prio 1 src_ip 10.0.0.0/255.0.0.0 action drop", NULL, &w);

	w.value.src_ip[0] = htonl(0xc0a80200);
	w.mask.src_ip[0] = htonl(0xfffffe00);
	expect_rule("prio 1 src_ip 192.168.3.7/23 action drop", NULL, &w);

	/* non-contiguous mask */
	w.value.src_ip[0] = htonl(0x0a010003);
	w.mask.src_ip[0] = htonl(0xffff00ff);
	expect_rule("prio 1 src_ip 10.1.2.3/255.255.0.255 action drop", NULL, &w);

	/* /0: no bits, family still implied */
	w.value.src_ip[0] = 0;
	w.mask.src_ip[0] = 0;
	expect_rule("prio 1 src_ip 10.1.2.3/0 action drop", NULL, &w);
	expect_rule("prio 1 src_ip 0.0.0.0/0 action drop", NULL, &w);
}

Test(parse, src_ip_v6)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(SRC_IP);
	w.value.eth_type = htons(0x86dd);
	w.mask.eth_type = 0xffff;
	v6(w.value.src_ip, "2001:db8::1");
	memset(w.mask.src_ip, 0xff, 16);
	expect_rule("prio 1 src_ip 2001:db8::1 action drop", NULL, &w);
	expect_rule("prio 1 src_ip 2001:DB8:0:0:0:0:0:1/128 action drop", NULL, &w);

	v6(w.value.src_ip, "2001:db8::");
	v6(w.mask.src_ip, "ffff:ffff:ffff:ffff::");
	expect_rule("prio 1 src_ip 2001:db8::1/64 action drop", NULL, &w);
	expect_rule("prio 1 src_ip 2001:db8::/ffff:ffff:ffff:ffff:: action drop",
		    NULL, &w);

	v6(w.value.src_ip, "2001:db0::");
	v6(w.mask.src_ip, "ffff:fff0::");
	expect_rule("prio 1 src_ip 2001:db8::/28 action drop", NULL, &w);

	v6(w.value.src_ip, "::1");
	v6(w.mask.src_ip, "::ffff");
	expect_rule("prio 1 src_ip fe80::1/::ffff action drop", NULL, &w);

	v6(w.value.src_ip, "::ffff:1.2.3.4");  /* v4-mapped is IPv6 */
	memset(w.mask.src_ip, 0xff, 16);
	expect_rule("prio 1 src_ip ::ffff:1.2.3.4 action drop", NULL, &w);

	memset(w.value.src_ip, 0, 16);
	memset(w.mask.src_ip, 0, 16);
	expect_rule("prio 1 src_ip ::/0 action drop", NULL, &w);
	expect_rule("prio 1 src_ip 2001:db8::1/0 action drop", NULL, &w);
}

Test(parse, dst_ip)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(DST_IP);
	w.value.eth_type = htons(0x0800);
	w.mask.eth_type = 0xffff;
	w.value.dst_ip[0] = htonl(0xac100000);
	w.mask.dst_ip[0] = htonl(0xfff00000);
	expect_rule("prio 1 dst_ip 172.16.5.5/12 action drop", NULL, &w);

	w.keywords |= KW(SRC_IP);
	w.value.src_ip[0] = htonl(0x7f000001);
	w.mask.src_ip[0] = 0xffffffff;
	expect_rule("prio 1 dst_ip 172.16.5.5/12 src_ip 127.0.0.1 action drop",
		    NULL, &w);

	base_rule(&w, 1);
	w.keywords = KW(DST_IP) | KW(SRC_IP);
	w.value.eth_type = htons(0x86dd);
	w.mask.eth_type = 0xffff;
	v6(w.value.dst_ip, "ff02::");
	v6(w.mask.dst_ip, "ffff::");
	v6(w.value.src_ip, "fe80::");
	v6(w.mask.src_ip, "ffc0::");
	expect_rule("prio 1 src_ip fe80::1/10 dst_ip ff02::1/16 action drop",
		    NULL, &w);
}

Test(parse, explicit_eth_type_with_address)
{
	struct xtcam_rule w;

	/* eth_type given and consistent: its bit is set, same bytes */
	base_rule(&w, 1);
	w.keywords = KW(SRC_IP) | KW(ETH_TYPE);
	w.value.eth_type = htons(0x0800);
	w.mask.eth_type = 0xffff;
	w.value.src_ip[0] = htonl(0x01020304);
	w.mask.src_ip[0] = 0xffffffff;
	expect_rule("prio 1 eth_type ipv4 src_ip 1.2.3.4 action drop", NULL, &w);
	w.keywords = KW(SRC_IP) | KW(PROTOCOL);
	w.mask.flags = XTCAM_F_VLAN1;
	expect_rule("prio 1 src_ip 1.2.3.4 protocol 0x0800 action drop", NULL, &w);
}

Test(parse, icmp_family_with_address)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(SRC_IP) | KW(IP_PROTO);
	w.value.eth_type = htons(0x86dd);
	w.mask.eth_type = 0xffff;
	v6(w.value.src_ip, "2001:db8::1");
	memset(w.mask.src_ip, 0xff, 16);
	w.value.ip_proto = 58;
	w.mask.ip_proto = 0xff;
	expect_rule("prio 1 ip_proto icmpv6 src_ip 2001:db8::1 action drop", NULL,
		    &w);
}

/* --- ip_tos, ip_ttl, ip_flags ---------------------------------------------- */

Test(parse, ip_tos)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(IP_TOS);    /* no eth_type implied */
	w.value.ip_tos = 0x10;
	w.mask.ip_tos = 0xff;
	expect_rule("prio 1 ip_tos 0x10 action drop", NULL, &w);
	expect_rule("prio 1 ip_tos 16 action drop", NULL, &w);
	expect_rule("prio 1 ip_tos 0x10/0xff action drop", NULL, &w);
	w.value.ip_tos = 0xb8;
	w.mask.ip_tos = 0xfc;
	expect_rule("prio 1 ip_tos 0xb8/0xfc action drop", NULL, &w);
	expect_rule("prio 1 ip_tos 0xbb/0xfc action drop", NULL, &w);
	/* tc: the value decimal, else hex; the mask hex */
	expect_rule("prio 1 ip_tos 187/fc action drop", NULL, &w);
	expect_rule("prio 1 ip_tos b8/fc action drop", NULL, &w);
	expect_rule("prio 1 ip_tos B8/FC action drop", NULL, &w);
	w.mask.ip_tos = 0xff;
	expect_rule("prio 1 ip_tos b8 action drop", NULL, &w);
	expect_rule("prio 1 ip_tos 184 action drop", NULL, &w);
	expect_rule("prio 1 ip_tos 0xb8/ff action drop", NULL, &w);
	w.value.ip_tos = 0x10;
	w.mask.ip_tos = 0x10;
	expect_rule("prio 1 ip_tos 16/10 action drop", NULL, &w);
	w.value.ip_tos = 0x1e;
	w.mask.ip_tos = 0xff;
	expect_rule("prio 1 ip_tos 1e action drop", NULL, &w);
	w.value.ip_tos = 0;
	w.mask.ip_tos = 0;
	expect_rule("prio 1 ip_tos 0xff/0 action drop", NULL, &w);
	w.value.ip_tos = 0xff;
	w.mask.ip_tos = 0xff;
	expect_rule("prio 1 ip_tos 255 action drop", NULL, &w);
}

Test(parse, ip_ttl)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(IP_TTL);
	w.value.ip_ttl = 64;
	w.mask.ip_ttl = 0xff;
	expect_rule("prio 1 ip_ttl 64 action drop", NULL, &w);
	expect_rule("prio 1 ip_ttl 0x40 action drop", NULL, &w);
	w.value.ip_ttl = 0;
	expect_rule("prio 1 ip_ttl 0 action drop", NULL, &w);
	w.value.ip_ttl = 255;
	expect_rule("prio 1 ip_ttl 255 action drop", NULL, &w);
	w.value.ip_ttl = 0x40;
	w.mask.ip_ttl = 0xf0;
	expect_rule("prio 1 ip_ttl 64/0xf0 action drop", NULL, &w);
	expect_rule("prio 1 ip_ttl 65/f0 action drop", NULL, &w);
	expect_rule("prio 1 ip_ttl 4f/f0 action drop", NULL, &w);
	w.value.ip_ttl = 0x40;
	w.mask.ip_ttl = 0x40;
	expect_rule("prio 1 ip_ttl 64/40 action drop", NULL, &w);
}

Test(parse, ip_flags)
{
	static const struct { const char *s; __u16 v, m; } t[] = {
		{ "frag", XTCAM_F_FRAG, XTCAM_F_FRAG },
		{ "nofrag", 0, XTCAM_F_FRAG },
		{ "firstfrag", XTCAM_F_FIRSTFRAG, XTCAM_F_FIRSTFRAG },
		{ "nofirstfrag", 0, XTCAM_F_FIRSTFRAG },
		{ "frag/firstfrag", XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG,
		  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG },
		{ "firstfrag/frag", XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG,
		  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG },
		{ "frag/nofirstfrag", XTCAM_F_FRAG,
		  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG },
		{ "nofirstfrag/frag", XTCAM_F_FRAG,
		  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG },
		{ "nofrag/nofirstfrag", 0, XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG },
	};
	struct xtcam_rule w;
	char line[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		base_rule(&w, 1);
		w.keywords = KW(IP_FLAGS);
		w.value.flags = t[i].v;
		w.mask.flags = t[i].m;
		snprintf(line, sizeof(line), "prio 1 ip_flags %s action drop",
			 t[i].s);
		expect_rule(line, NULL, &w);
	}

	/* with vlan tagged: both in key.flags, neither disturbs the other */
	base_rule(&w, 1);
	w.keywords = KW(IP_FLAGS) | KW(VLAN);
	w.value.flags = XTCAM_F_VLAN1;
	w.mask.flags = XTCAM_F_VLAN1 | XTCAM_F_FRAG;
	expect_rule("prio 1 ip_flags nofrag vlan tagged action drop", NULL, &w);
}

/* --- ports, tcp_flags, type/code ------------------------------------------- */

Test(parse, ports)
{
	static const struct { const char *s; __u16 lo, hi; } t[] = {
		{ "80", 80, 80 }, { "0", 0, 0 }, { "65535", 65535, 65535 },
		{ "0x50", 80, 80 }, { "1000-2000", 1000, 2000 },
		{ "5-5", 5, 5 }, { "0-65535", 0, 65535 }, { "0-0", 0, 0 },
		{ "1024/0xfc00", 1024, 2047 }, { "1500/0xfc00", 1024, 2047 },
		{ "80/0xffff", 80, 80 }, { "80/0", 0, 65535 },
		{ "0x8000/0x8000", 0x8000, 0xffff }, { "443/65535", 443, 443 },
	};
	static const char *const protos[] = { "tcp", "udp", "sctp", "udplite",
					      "6", "11", "84", "88" };
	struct xtcam_rule w;
	char line[160];
	size_t i, p;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		for (p = 0; p < ARRAY_SIZE(protos); p++) {
			base_rule(&w, 1);
			w.keywords = KW(IP_PROTO) | KW(DST_PORT);
			w.value.ip_proto = (__u8)strtoul(
				!strcmp(protos[p], "tcp") ? "6" :
				!strcmp(protos[p], "udp") ? "11" :
				!strcmp(protos[p], "sctp") ? "84" :
				!strcmp(protos[p], "udplite") ? "88" : protos[p],
				NULL, 16);
			w.mask.ip_proto = 0xff;
			w.dport_lo = t[i].lo;
			w.dport_hi = t[i].hi;
			snprintf(line, sizeof(line), "prio 1 ip_proto %s dst_port "
				 "%s action drop", protos[p], t[i].s);
			expect_rule(line, NULL, &w);

			w.keywords = KW(IP_PROTO) | KW(SRC_PORT);
			w.dport_lo = 0;
			w.dport_hi = 65535;
			w.sport_lo = t[i].lo;
			w.sport_hi = t[i].hi;
			snprintf(line, sizeof(line), "prio 1 src_port %s ip_proto "
				 "%s action drop", t[i].s, protos[p]);
			expect_rule(line, NULL, &w);
		}
	}

	base_rule(&w, 1);
	w.keywords = KW(IP_PROTO) | KW(SRC_PORT) | KW(DST_PORT);
	w.value.ip_proto = 6;
	w.mask.ip_proto = 0xff;
	w.sport_lo = 1024, w.sport_hi = 65535;
	w.dport_lo = 22, w.dport_hi = 22;
	expect_rule("prio 1 ip_proto tcp src_port 1024-65535 dst_port 22 "
		    "action drop", NULL, &w);
}

Test(parse, tcp_flags)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(IP_PROTO) | KW(TCP_FLAGS);
	w.value.ip_proto = 6;
	w.mask.ip_proto = 0xff;
	w.value.tcp_flags = htons(0x012);
	w.mask.tcp_flags = htons(0xfff);
	expect_rule("prio 1 ip_proto tcp tcp_flags 0x12 action drop", NULL, &w);
	/* hex without 0x too, as in tc: 12 is SYN|ACK */
	expect_rule("prio 1 ip_proto tcp tcp_flags 12 action drop", NULL, &w);
	expect_rule("prio 1 ip_proto tcp tcp_flags 012 action drop", NULL, &w);
	expect_rule("prio 1 ip_proto tcp tcp_flags 12/fff action drop", NULL, &w);
	expect_rule("prio 1 ip_proto tcp tcp_flags 0x12/0xfff action drop", NULL,
		    &w);
	w.value.tcp_flags = htons(0x002);
	w.mask.tcp_flags = htons(0x012);
	expect_rule("prio 1 ip_proto tcp tcp_flags 0x2/0x12 action drop", NULL, &w);
	expect_rule("prio 1 ip_proto tcp tcp_flags 2/12 action drop", NULL, &w);
	w.value.tcp_flags = htons(0x00f);
	w.mask.tcp_flags = htons(0x00f);
	expect_rule("prio 1 ip_proto tcp tcp_flags 0x1ff/0xf action drop", NULL,
		    &w);
	w.value.tcp_flags = htons(0xfff);
	w.mask.tcp_flags = htons(0xfff);
	expect_rule("prio 1 ip_proto tcp tcp_flags 0xfff action drop", NULL, &w);
	w.value.tcp_flags = htons(0x012);
	w.mask.tcp_flags = htons(0x012);
	expect_rule("prio 1 ip_proto tcp tcp_flags 12/12 action drop", NULL, &w);
	w.value.tcp_flags = htons(0xabc);
	w.mask.tcp_flags = htons(0xfff);
	expect_rule("prio 1 ip_proto tcp tcp_flags AbC action drop", NULL, &w);
	w.value.tcp_flags = htons(0x800);
	w.mask.tcp_flags = htons(0x800);
	expect_rule("prio 1 ip_proto tcp tcp_flags 0x800/0x800 action drop", NULL,
		    &w);
}

Test(parse, icmp_type_code)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	w.keywords = KW(IP_PROTO) | KW(TYPE) | KW(CODE);
	w.value.eth_type = htons(0x0800);
	w.mask.eth_type = 0xffff;
	w.value.ip_proto = 1;
	w.mask.ip_proto = 0xff;
	w.value.icmp_type = 8;
	w.mask.icmp_type = 0xff;
	w.value.icmp_code = 0;
	w.mask.icmp_code = 0xff;
	expect_rule("prio 1 ip_proto icmp type 8 code 0 action drop", NULL, &w);

	w.value.eth_type = htons(0x86dd);
	w.value.ip_proto = 58;
	w.value.icmp_type = 128;
	w.value.icmp_code = 0x10;
	w.mask.icmp_code = 0xf0;
	expect_rule("prio 1 ip_proto icmpv6 type 128 code 0x1f/0xf0 action drop",
		    NULL, &w);

	w.keywords = KW(IP_PROTO) | KW(TYPE);
	w.value.icmp_code = w.mask.icmp_code = 0;
	w.value.icmp_type = 255;
	w.mask.icmp_type = 0xff;
	expect_rule("prio 1 ip_proto 3a type 255 action drop", NULL, &w);
	/* type and code stay decimal, as in tc (0x for hex) */
	w.value.icmp_type = 10;
	w.mask.icmp_type = 10;
	expect_rule("prio 1 ip_proto icmpv6 type 10/10 action drop", NULL, &w);
	expect_rule("prio 1 ip_proto icmpv6 type 0xa/0xa action drop", NULL, &w);
}

/* --- raw fields ------------------------------------------------------------ */

Test(parse, raw_fields)
{
	struct xtcam_rule w;

	base_rule(&w, 1);                    /* raw1: 1 byte, raw2: 4 bytes */
	w.keywords = KW(RAW1);
	w.value.raw1 = htonl(0x11);
	w.mask.raw1 = htonl(0xff);
	expect_rule("prio 1 raw1 0x11 action drop", blk_raw(), &w);
	expect_rule("prio 1 raw1 17 action drop", blk_raw(), &w);
	expect_rule("prio 1 raw1 0x11/0xff action drop", blk_raw(), &w);
	w.value.raw1 = htonl(0x10);
	w.mask.raw1 = htonl(0xf0);
	expect_rule("prio 1 raw1 0x1f/0xf0 action drop", blk_raw(), &w);
	w.value.raw1 = w.mask.raw1 = 0;
	expect_rule("prio 1 raw1 0xff/0 action drop", blk_raw(), &w);

	base_rule(&w, 1);
	w.keywords = KW(RAW2);
	w.value.raw2 = htonl(0xdeadbeef);
	w.mask.raw2 = 0xffffffff;
	expect_rule("prio 1 raw2 0xdeadbeef action drop", blk_raw(), &w);
	expect_rule("prio 1 raw2 3735928559 action drop", blk_raw(), &w);
	w.value.raw2 = htonl(0x12340000);
	w.mask.raw2 = htonl(0xffff0000);
	expect_rule("prio 1 raw2 0x12345678/0xffff0000 action drop", blk_raw(), &w);

	base_rule(&w, 1);
	w.keywords = KW(RAW1) | KW(RAW2);
	w.value.raw1 = htonl(6);
	w.mask.raw1 = htonl(0xff);
	w.value.raw2 = 0;
	w.mask.raw2 = 0xffffffff;
	expect_rule("prio 1 raw2 0 raw1 6 action drop", blk_raw(), &w);
}

Test(parse, raw_lengths)
{
	static const unsigned full[] = { 0, 0xff, 0xffff, 0xffffff, 0xffffffff };
	struct xtcam_rule w;
	char line[128];
	unsigned len;
	int idx;

	for (idx = 0; idx < 2; idx++)
		for (len = 1; len <= 4; len++) {
			base_rule(&w, 1);
			w.keywords = idx ? KW(RAW2) : KW(RAW1);
			/* the widest value that fits: right-aligned */
			if (idx) {
				w.value.raw2 = htonl(full[len]);
				w.mask.raw2 = htonl(full[len]);
			} else {
				w.value.raw1 = htonl(full[len]);
				w.mask.raw1 = htonl(full[len]);
			}
			snprintf(line, sizeof(line), "prio 1 raw%d %#x action drop",
				 idx + 1, full[len]);
			expect_rule(line, blk_raw_len(idx, len), &w);
		}
}

/* --- actions --------------------------------------------------------------- */

Test(parse, actions)
{
	struct xtcam_rule w;

	base_rule(&w, 1);
	expect_rule("prio 1 action drop", NULL, &w);
	expect_rule("prio 1 action shot", NULL, &w);
	w.action.type = XTCAM_ACT_PASS;
	expect_rule("prio 1 action pass", NULL, &w);
	expect_rule("prio 1 action ok", NULL, &w);
	w.action.type = XTCAM_ACT_TX;
	expect_rule("prio 1 action tx", NULL, &w);

	w.action.type = XTCAM_ACT_REDIRECT;
	strcpy(w.action.dev, "veth1");
	expect_rule("prio 1 action redirect dev veth1", NULL, &w);
	strcpy(w.action.netns, "ns1");
	expect_rule("prio 1 action redirect dev veth1 netns ns1", NULL, &w);
	expect_rule("action redirect dev veth1 netns ns1 prio 1", NULL, &w);
	memset(w.action.netns, 0, sizeof(w.action.netns));
	strcpy(w.action.dev, "abcdefghijklmno");              /* 15 */
	expect_rule("prio 1 action redirect dev abcdefghijklmno", NULL, &w);
	strcpy(w.action.netns, "n23456789012345678901234567890123456789012345678"
	       "901234567890123");                            /* 63 */
	expect_rule("prio 1 action redirect dev abcdefghijklmno netns "
		    "n23456789012345678901234567890123456789012345678901234567890123",
		    NULL, &w);

	memset(&w.action, 0, sizeof(w.action));
	w.action.type = XTCAM_ACT_CPU;
	w.action.cpu = 0;
	expect_rule("prio 1 action cpu 0", NULL, &w);
	w.action.cpu = 8191;
	expect_rule("prio 1 action cpu 8191", NULL, &w);
	w.action.cpu = 3;
	expect_rule("prio 1 action cpu 0x3", NULL, &w);
}

/* --- many keywords at once ------------------------------------------------- */

Test(parse, kitchen_sink)
{
	struct xtcam_rule r;
	const __u64 all = (1ull << (XTCAM_KW_RAW2 + 1)) - 1 - KW(VLAN) - KW(CVLAN_ETHTYPE) -
			  KW(TYPE) - KW(CODE) - KW(CVLAN_ID) - KW(CVLAN_PRIO);

	parse_ok("prio 9 handle 77 src_mac 00:00:00:00:00:01 dst_mac "
		 "ff:ff:ff:ff:ff:ff vlan_id 1 vlan_prio 2 vlan_ethtype ipv4 "
		 "eth_type ipv4 ip_proto tcp src_ip 10.0.0.0/8 dst_ip 10.1.1.1 "
		 "ip_tos 0x10/0xf0 ip_ttl 64 ip_flags nofrag src_port 1-1023 "
		 "dst_port 443 tcp_flags 0x2/0x12 raw1 0x6 raw2 0x1/0x1 "
		 "action cpu 1", blk_raw(), &r);
	cr_assert_eq(r.keywords, all, "keywords %#x, want %#x", r.keywords, all);
	cr_assert_eq(r.prio, 9);
	cr_assert_eq(r.handle, 77);
	cr_assert_eq(r.value.vlan_tci, htons(2 << 13 | 1));
	cr_assert_eq(r.value.eth_type, htons(0x0800));
	cr_assert_eq(r.sport_lo, 1);
	cr_assert_eq(r.sport_hi, 1023);
	cr_assert_eq(r.dport_lo, 443);
	cr_assert_eq(r.dport_hi, 443);
	cr_assert_eq(r.action.type, XTCAM_ACT_CPU);
	cr_assert_eq(r.action.cpu, 1);
}

Test(parse, keyword_bits)
{
	static const struct { const char *line; __u64 kw; } t[] = {
		{ "src_mac 0:0:0:0:0:1", KW(SRC_MAC) },
		{ "dst_mac 0:0:0:0:0:1", KW(DST_MAC) },
		{ "vlan tagged", KW(VLAN) },
		{ "vlan_id 1", KW(VLAN_ID) },
		{ "vlan_prio 1", KW(VLAN_PRIO) },
		{ "vlan_ethtype ipv4", KW(VLAN_ETHTYPE) },
		{ "cvlan_id 1", KW(CVLAN_ID) },
		{ "cvlan_prio 1", KW(CVLAN_PRIO) },
		{ "cvlan_ethtype ipv4", KW(CVLAN_ETHTYPE) },
		{ "eth_type arp", KW(ETH_TYPE) },
		{ "protocol arp", KW(PROTOCOL) },
		{ "protocol 802.1q", KW(PROTOCOL) },
		{ "eth_type arp protocol arp", KW(ETH_TYPE) | KW(PROTOCOL) },
		{ "num_of_vlans 1", KW(NUM_VLANS) },
		{ "protocol arp arp_op 1", KW(PROTOCOL) | KW(ARP_OP) },
		{ "eth_type rarp arp_sip 1.2.3.4", KW(ETH_TYPE) | KW(ARP_SIP) },
		{ "protocol arp arp_tip 1.2.3.4", KW(PROTOCOL) | KW(ARP_TIP) },
		{ "protocol arp arp_sha 0:0:0:0:0:1", KW(PROTOCOL) | KW(ARP_SHA) },
		{ "protocol arp arp_tha 0:0:0:0:0:1", KW(PROTOCOL) | KW(ARP_THA) },
		{ "protocol mpls_uc mpls_label 1", KW(PROTOCOL) | KW(MPLS_LABEL) },
		{ "protocol mpls_uc mpls_tc 1", KW(PROTOCOL) | KW(MPLS_TC) },
		{ "protocol mpls_uc mpls_bos 1", KW(PROTOCOL) | KW(MPLS_BOS) },
		{ "protocol mpls_uc mpls_ttl 1", KW(PROTOCOL) | KW(MPLS_TTL) },
		{ "protocol mpls_mc mpls lse depth 2", KW(PROTOCOL) | KW(MPLS) },
		{ "pppoe_sid 1", KW(PPPOE_SID) },
		{ "ppp_proto ip", KW(PPP_PROTO) },
		{ "ip_proto l2tp l2tpv3_sid 1", KW(IP_PROTO) | KW(L2TPV3_SID) },
		{ "ip_proto esp spi 1", KW(IP_PROTO) | KW(SPI) },
		{ "cfm op 1", KW(CFM) },
		{ "indev lo", KW(INDEV) },
		{ "ip_proto 5", KW(IP_PROTO) },
		{ "src_ip 1.1.1.1", KW(SRC_IP) },
		{ "dst_ip ::1", KW(DST_IP) },
		{ "ip_tos 1", KW(IP_TOS) },
		{ "ip_ttl 1", KW(IP_TTL) },
		{ "ip_flags frag", KW(IP_FLAGS) },
		{ "ip_proto udp src_port 1", KW(IP_PROTO) | KW(SRC_PORT) },
		{ "ip_proto udp dst_port 1", KW(IP_PROTO) | KW(DST_PORT) },
		{ "ip_proto tcp tcp_flags 1", KW(IP_PROTO) | KW(TCP_FLAGS) },
		{ "ip_proto icmp type 1", KW(IP_PROTO) | KW(TYPE) },
		{ "ip_proto icmp code 1", KW(IP_PROTO) | KW(CODE) },
		{ "raw1 1", KW(RAW1) },
		{ "raw2 1", KW(RAW2) },
	};
	struct xtcam_rule r;
	char line[160];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(line, sizeof(line), "prio 1 %s action pass", t[i].line);
		parse_ok(line, blk_raw(), &r);
		cr_expect_eq(r.keywords, t[i].kw, "%s: keywords %#llx, want %#llx",
			     line, (unsigned long long)r.keywords,
			     (unsigned long long)t[i].kw);
	}
}

/* --- argv edge cases ------------------------------------------------------- */

Test(parse, bad_arguments)
{
	char *argv[] = { "prio", "1", "action", "drop", NULL };
	char *nulls[] = { "prio", "1", "action", NULL, "x" };
	char *nulls2[] = { "prio", "1", "action", "redirect", "dev", NULL, "x" };
	char *nulls3[] = { "prio", "1", "action", "redirect", "dev", "e",
			   "netns", NULL, "x" };
	char *nulls4[] = { NULL, "1", "action", "drop" };
	char *empty[] = { "prio", "1", "", "action", "drop" };
	struct xtcam_rule r, keep;
	char err[XTCAM_ERR_MAX];

	memset(&r, 0xa5, sizeof(r));
	keep = r;
	cr_assert_eq(xtcam_rule_parse(4, argv, NULL, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_rule_parse(-1, argv, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_rule_parse(4, NULL, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	/* a NULL word anywhere inside argc is refused, never dereferenced */
	cr_assert_eq(xtcam_rule_parse(5, nulls, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_rule_parse(7, nulls2, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_rule_parse(9, nulls3, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_rule_parse(4, nulls4, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert(!memcmp(&r, &keep, sizeof(r)));
	/* an empty word is an unknown keyword */
	cr_assert_eq(xtcam_rule_parse(5, empty, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "unknown keyword \"\""), "%s", err);
	/* argc 0: prio is missing */
	cr_assert_eq(xtcam_rule_parse(0, NULL, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "prio"), "%s", err);
	cr_assert(!memcmp(&r, &keep, sizeof(r)));
	/* argv is only read up to argc */
	cr_assert_eq(xtcam_rule_parse(4, argv, &r, NULL, err, sizeof(err)), 0);
}

Test(parse, err_buffer_sizes)
{
	char err[8], one[1];
	struct xtcam_rule r;

	memset(err, 'x', sizeof(err));
	cr_assert_eq(parse("prio 1 dst_port 80 action drop", &r, NULL, err,
			   sizeof(err)), -EINVAL);
	cr_assert_eq(strlen(err), sizeof(err) - 1, "truncated, NUL-terminated");
	cr_assert_eq(strncmp(err, "dst_port", 7), 0, "%s", err);
	one[0] = 'x';
	cr_assert_eq(parse("prio 0 action drop", &r, NULL, one, 1), -ERANGE);
	cr_assert_eq(one[0], '\0');
	/* success clears a message buffer */
	memset(err, 'x', sizeof(err));
	cr_assert_eq(parse("prio 1 action drop", &r, NULL, err, sizeof(err)), 0);
	cr_assert_eq(err[0], '\0');
}

Test(parse, long_words_in_messages)
{
	char line[2200], err[XTCAM_ERR_MAX];
	struct xtcam_rule r;
	int rc;

	/* a huge value is quoted, cut short, and the buffer is never overrun */
	strcpy(line, "prio 1 src_ip ");
	memset(line + strlen(line), '1', 2000);
	line[14 + 2000] = '\0';
	strcat(line, " action drop");
	rc = parse(line, &r, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL);
	cr_assert(strstr(err, "src_ip"), "%s", err);
	cr_assert(strstr(err, "..."), "%s", err);
	cr_assert(strlen(err) < sizeof(err));

	strcpy(line, "prio 1 ");
	memset(line + 7, 'k', 2000);
	line[7 + 2000] = '\0';
	strcat(line, " 1 action drop");
	rc = parse(line, &r, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL);
	cr_assert(strstr(err, "unknown keyword \"kkkk"), "%s", err);

	/* non-printable bytes are escaped */
	rc = parse("prio 1 src_ip 1.2.3.\x01 action drop", &r, NULL, err,
		   sizeof(err));
	cr_assert_eq(rc, -EINVAL);
	cr_assert(strstr(err, "\\x01"), "%s", err);
	rc = parse("prio 1 fo\"o 1 action drop", &r, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL);
	cr_assert(strstr(err, "\"fo\\x22o\""), "%s", err);
}

/* --- the line layer -------------------------------------------------------- */

Test(line, rules_comments_blanks)
{
	static const char *const blank[] = {
		"", " ", "\t", "   \t  \r\n", "\n", "#", "# a comment",
		"   # indented comment prio 1 action drop", "#prio 1 action drop",
	};
	struct xtcam_rule r, keep, want;
	char err[XTCAM_ERR_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(blank); i++) {
		memset(&r, 0xa5, sizeof(r));
		keep = r;
		strcpy(err, "junk");
		cr_expect_eq(xtcam_rule_parse_line(blank[i], &r, NULL, err,
						   sizeof(err)), 1,
			     "\"%s\" is blank", blank[i]);
		cr_expect_str_empty(err, "\"%s\": err \"%s\"", blank[i], err);
		cr_expect(!memcmp(&r, &keep, sizeof(r)), "\"%s\": touched",
			  blank[i]);
	}

	base_rule(&want, 3);
	want.handle = 4;
	static const char *const rules[] = {
		"prio 3 handle 4 action drop",
		"  prio 3 handle 4 action drop  ",
		"prio\t3\thandle 4 action drop\n",
		"prio 3 handle 4 action drop\r\n",
		"prio 3 handle 4 action drop # why: because",
		"prio 3 handle 4 action drop #because",
		"prio  3   handle 4\v action\fdrop",
	};
	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		memset(&r, 0xa5, sizeof(r));
		cr_expect_eq(xtcam_rule_parse_line(rules[i], &r, NULL, err,
						   sizeof(err)), 0,
			     "\"%s\": %s", rules[i], err);
		cr_expect(!memcmp(&r, &want, sizeof(r)), "\"%s\"", rules[i]);
	}

	/* '#' inside a word is not a comment */
	memset(&r, 0xa5, sizeof(r));
	keep = r;
	cr_assert_eq(xtcam_rule_parse_line("prio 3 action drop a#b", &r, NULL,
					   err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "unknown keyword \"a#b\""), "%s", err);
	cr_assert(!memcmp(&r, &keep, sizeof(r)));
	/* errors are errors, not blank lines */
	cr_assert_eq(xtcam_rule_parse_line("prio", &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "prio: missing value"), "%s", err);
	cr_assert_eq(xtcam_rule_parse_line("prio 1 # action drop", &r, NULL,
					   err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "action"), "%s", err);
	cr_assert(!memcmp(&r, &keep, sizeof(r)));

	cr_assert_eq(xtcam_rule_parse_line(NULL, &r, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_rule_parse_line("prio 1 action drop", NULL, NULL,
					   err, sizeof(err)), -EINVAL);
	cr_assert_eq(xtcam_rule_parse_line("prio 1 action drop", &r, NULL,
					   NULL, 0), 0);
}

Test(line, raw_fields_through_lines)
{
	struct xtcam_rule r;
	char err[XTCAM_ERR_MAX];

	cr_assert_eq(xtcam_rule_parse_line("prio 1 raw1 0x11 action drop", &r,
					   blk_raw(), err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(r.value.raw1, htonl(0x11));
	cr_assert_eq(xtcam_rule_parse_line("prio 1 raw1 0x11 action drop", &r,
					   NULL, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "raw1"), "%s", err);
}

Test(line, split_words)
{
	static const struct { const char *line; int n; const char *w[6]; } t[] = {
		{ "", 0, { NULL } },
		{ "   ", 0, { NULL } },
		{ "# x y", 0, { NULL } },
		{ "a", 1, { "a" } },
		{ " a  b\tc\n", 3, { "a", "b", "c" } },
		{ "a #b c", 1, { "a" } },
		{ "a# b", 2, { "a#", "b" } },
		{ "prio 1 action drop", 4, { "prio", "1", "action", "drop" } },
		{ "x\r\ny", 2, { "x", "y" } },
	};
	char **argv;
	size_t i;
	int argc, j;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		argc = -1;
		argv = NULL;
		cr_assert_eq(xtcam_split_words(t[i].line, &argc, &argv), 0);
		cr_expect_eq(argc, t[i].n, "\"%s\": %d words", t[i].line, argc);
		cr_assert(argv);
		for (j = 0; j < argc && j < t[i].n; j++)
			cr_expect_str_eq(argv[j], t[i].w[j], "\"%s\" word %d",
					 t[i].line, j);
		cr_expect_null(argv[argc], "\"%s\": not NULL-terminated",
			       t[i].line);
		free(argv);
	}
	cr_assert_eq(xtcam_split_words(NULL, &argc, &argv), -EINVAL);
	cr_assert_eq(xtcam_split_words("a", NULL, &argv), -EINVAL);
	cr_assert_eq(xtcam_split_words("a", &argc, NULL), -EINVAL);
}
