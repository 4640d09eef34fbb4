// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * tc-flower's keywords beyond the IP ones: protocol as flower means it
 * (the outermost ethertype), num_of_vlans, ARP/RARP, MPLS, PPPoE, L2TPv3,
 * IPsec SPI, CFM, indev; and the refusal of the flower keywords xtcam does
 * not have.  Each: the text and its canonical form (round trip, JSON), the
 * errors, and what the compiled rule matches on keys as the parser makes
 * them (xtcam/key.h), through the compiler and the reference classifier.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include "xtcam/compile.h"
#include "xtcam/hwcompile.h"
#include "syntax_test.h"

/* --- text ------------------------------------------------------------------ */

Test(flower, canonical_text)
{
	static const struct { const char *in, *out; } t[] = {
		{ "prio 1 protocol ip action drop", "prio 1 protocol ipv4 action drop" },
		{ "prio 1 protocol 802.1q vlan_ethtype ip action drop",
		  "prio 1 protocol 802.1Q vlan_ethtype ipv4 action drop" },
		{ "prio 1 protocol 802.1ad vlan_id 5 action drop",
		  "prio 1 protocol 802.1ad vlan_id 5 action drop" },
		{ "prio 1 protocol all action drop", NULL },
		{ "prio 1 protocol ip eth_type ipv4 action drop",
		  "prio 1 protocol ipv4 eth_type ipv4 action drop" },
		{ "prio 1 protocol 802.1q eth_type ipv6 action drop",
		  "prio 1 protocol 802.1Q eth_type ipv6 action drop" },
		{ "prio 1 num_of_vlans 0 action drop", NULL },
		{ "prio 1 num_of_vlans 1 action drop", NULL },
		{ "prio 1 num_of_vlans 2 cvlan_id 3 action drop",
		  "prio 1 cvlan_id 3 num_of_vlans 2 action drop" },
		{ "prio 1 protocol arp arp_op request arp_sip 10.0.0.0/8 "
		  "arp_tip 10.1.2.3 arp_sha 00:11:22:33:44:55 arp_tha "
		  "00:11:00:00:00:00/16 action drop", NULL },
		{ "prio 1 protocol rarp arp_op reply action drop", NULL },
		{ "prio 1 protocol arp arp_op 0x3/0x3 action drop",
		  "prio 1 protocol arp arp_op 3/0x3 action drop" },
		{ "prio 1 protocol arp arp_sip 10.0.0.1/255.0.255.0 action drop",
		  "prio 1 protocol arp arp_sip 10.0.0.0/255.0.255.0 action drop" },
		{ "prio 1 vlan_ethtype arp arp_op 1 action drop",
		  "prio 1 vlan_ethtype arp arp_op request action drop" },
		{ "prio 1 protocol mpls_uc mpls_label 1000 mpls_tc 3 mpls_bos 1 "
		  "mpls_ttl 64 action drop", NULL },
		{ "prio 1 protocol mpls_mc mpls lse depth 1 label 16 lse depth 3 "
		  "ttl 9 bos 1 action drop",
		  "prio 1 protocol mpls_mc mpls lse depth 1 label 16 lse depth 3 "
		  "bos 1 ttl 9 action drop" },
		{ "prio 1 protocol mpls_uc mpls lse depth 2 action drop", NULL },
		{ "prio 1 eth_type mpls_uc mpls_ttl 1 action drop", NULL },
		{ "prio 1 protocol ppp_ses pppoe_sid 7 ppp_proto ip action drop", NULL },
		{ "prio 1 pppoe_sid 7 ppp_proto 0xc021 action drop",
		  "prio 1 pppoe_sid 7 ppp_proto 0xc021 action drop" },
		{ "prio 1 ip_proto l2tp l2tpv3_sid 4000000000 action drop",
		  "prio 1 ip_proto l2tp l2tpv3_sid 4000000000 action drop" },
		{ "prio 1 ip_proto esp spi 0x10203 action drop", NULL },
		{ "prio 1 ip_proto ah spi ffffffff action drop",
		  "prio 1 ip_proto ah spi 0xffffffff action drop" },
		{ "prio 1 src_ip 10.0.0.1 ip_proto esp spi 1 action drop",
		  "prio 1 ip_proto esp src_ip 10.0.0.1 spi 0x1 action drop" },
		{ "prio 1 cfm mdl 5 op 1 action drop", NULL },
		{ "prio 1 cfm op 42 action drop", NULL },
		{ "prio 1 protocol cfm cfm mdl 7 action drop", NULL },
		{ "prio 1 indev lo action drop", NULL },
		{ "prio 1 indev ifindex/4000000 action drop", NULL },
		{ "prio 1 ip_proto tcp ip_flags frag/nofirstfrag action drop", NULL },
		{ "prio 1 ip_proto tcp ip_flags nofrag action drop", NULL },
	};
	char text[XTCAM_RULE_TEXT_MAX];
	struct xtcam_rule r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct json_object *j;
		int k, shown = 0;

		parse_ok(t[i].in, NULL, &r);
		roundtrip(&r, NULL, text, t[i].in);
		cr_expect_str_eq(text, t[i].out ? t[i].out : t[i].in, "%s", t[i].in);
		/* JSON: the keywords of the text, each one */
		j = xtcam_rule_match_json(&r, NULL);
		cr_assert(j);
		for (k = 0; k < XTCAM_KW_MAX; k++)
			if (xtcam_kw_present(&r, k)) {
				shown++;
				cr_expect(json_object_object_get_ex(j, xtcam_kw_name(k),
								    NULL),
					  "%s: no %s in JSON", t[i].in, xtcam_kw_name(k));
			}
		cr_expect_eq(json_object_object_length(j), shown, "%s", t[i].in);
		json_object_put(j);
	}
}

Test(flower, json_values)
{
	struct xtcam_rule r;
	struct json_object *j, *v;

	parse_ok("prio 1 protocol mpls_uc mpls lse depth 2 label 5 action drop",
		 NULL, &r);
	j = xtcam_rule_match_json(&r, NULL);
	cr_assert(json_object_object_get_ex(j, "mpls", &v));
	cr_expect_str_eq(json_object_get_string(v), "lse depth 2 label 5");
	cr_assert(json_object_object_get_ex(j, "protocol", &v));
	cr_expect_str_eq(json_object_get_string(v), "mpls_uc");
	cr_expect(!json_object_object_get_ex(j, "eth_type", NULL),
		  "eth_type that protocol implied is not shown");
	cr_expect(!json_object_object_get_ex(j, "src_ip", NULL));
	cr_expect(!json_object_object_get_ex(j, "ip_proto", NULL));
	json_object_put(j);
}

/* ppp_proto takes every PPP protocol name tc does (iproute2's
 * lib/ppp_proto.c, the values of linux/ppp_defs.h); the printer writes the
 * first four by name and the rest as numbers, which read back the same. */
Test(flower, ppp_proto_names_as_tc)
{
	static const struct { const char *name; uint16_t v; } t[] = {
		{ "ip", 0x0021 }, { "at", 0x0029 }, { "ipx", 0x002b },
		{ "vjc_comp", 0x002d }, { "vjc_uncomp", 0x002f }, { "mp", 0x003d },
		{ "ipv6", 0x0057 }, { "compfrag", 0x00fb }, { "comp", 0x00fd },
		{ "mpls_uc", 0x0281 }, { "mpls_mc", 0x0283 }, { "ipcp", 0x8021 },
		{ "atcp", 0x8029 }, { "ipxcp", 0x802b }, { "ipv6cp", 0x8057 },
		{ "ccpfrag", 0x80fb }, { "ccp", 0x80fd }, { "mplscp", 0x80fd },
		{ "lcp", 0xc021 }, { "pap", 0xc023 }, { "lqr", 0xc025 },
		{ "chap", 0xc223 }, { "cbcp", 0xc029 },
	};
	char line[128], text[XTCAM_RULE_TEXT_MAX];
	struct xtcam_rule r, back;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(line, sizeof(line), "prio 1 pppoe_sid 7 ppp_proto %s action drop",
			 t[i].name);
		parse_ok(line, NULL, &r);
		cr_expect_eq(ntohl(r.value.src_ip[0]) & 0xffff, t[i].v, "%s", line);
		cr_assert_gt(xtcam_rule_format(&r, NULL, text, sizeof(text)), 0);
		parse_ok(text, NULL, &back);
		cr_expect(!memcmp(&r, &back, sizeof(r)), "%s: printed as \"%s\"", line, text);
	}
}

/* --- errors ---------------------------------------------------------------- */

#define E(line, err, ...) { line, err, { __VA_ARGS__, NULL } }
struct bad {
	const char *line;
	int err;
	const char *subs[6];
};

Test(flower, errors)
{
	static const struct bad t[] = {
		/* protocol is the outermost ethertype */
		E("prio 1 protocol ip vlan_id 5 action drop", EINVAL, "vlan_id",
		  "conflicts", "protocol", "untagged"),
		E("prio 1 protocol ip vlan tagged action drop", EINVAL, "vlan",
		  "conflicts", "protocol"),
		E("prio 1 protocol 802.1q vlan untagged action drop", EINVAL,
		  "vlan", "conflicts", "protocol"),
		E("prio 1 protocol 802.1q num_of_vlans 0 action drop", EINVAL,
		  "num_of_vlans", "conflicts", "protocol"),
		E("prio 1 num_of_vlans 1 cvlan_id 5 action drop", EINVAL,
		  "cvlan_id", "conflicts", "num_of_vlans"),
		E("prio 1 num_of_vlans 3 action drop", ERANGE, "num_of_vlans",
		  "at most 2"),
		E("prio 1 num_of_vlans x action drop", EINVAL, "num_of_vlans"),
		E("prio 1 protocol ipv6 eth_type ipv4 action drop", EINVAL,
		  "conflicts"),
		E("prio 1 protocol foo action drop", EINVAL, "protocol",
		  "not an ethertype"),
		/* ARP */
		E("prio 1 arp_op 1 action drop", EINVAL, "arp_op",
		  "needs the ethertype", "arp or rarp"),
		E("prio 1 protocol ip arp_op 1 action drop", EINVAL, "arp_op",
		  "conflicts", "protocol"),
		E("prio 1 protocol arp src_ip 1.2.3.4 action drop", EINVAL,
		  "src_ip", "conflicts"),
		E("prio 1 protocol arp arp_op 256 action drop", ERANGE, "arp_op"),
		E("prio 1 protocol arp arp_op ask action drop", EINVAL, "arp_op",
		  "request, reply"),
		E("prio 1 protocol arp arp_sip ::1 action drop", EINVAL, "arp_sip",
		  "IPv4"),
		E("prio 1 protocol arp arp_tip 1.2.3.4/33 action drop", ERANGE,
		  "arp_tip", "0-32"),
		E("prio 1 protocol arp arp_sha 00:11 action drop", EINVAL,
		  "arp_sha", "MAC"),
		E("prio 1 protocol arp arp_tha 0:0:0:0:0:0/49 action drop", ERANGE,
		  "arp_tha"),
		/* MPLS */
		E("prio 1 mpls_label 5 action drop", EINVAL, "mpls_label",
		  "needs the ethertype", "mpls_uc"),
		E("prio 1 protocol mpls_uc mpls_label 5 ip_tos 1 action drop",
		  EINVAL, "conflicts", "no IP header under MPLS"),
		E("prio 1 protocol mpls_uc mpls_label 5 dst_ip 1.2.3.4 action drop",
		  EINVAL, "dst_ip", "conflicts", "under MPLS"),
		E("prio 1 protocol mpls_uc mpls_label 1048576 action drop", ERANGE,
		  "mpls_label"),
		E("prio 1 protocol mpls_uc mpls_tc 8 action drop", ERANGE, "mpls_tc"),
		E("prio 1 protocol mpls_uc mpls_bos 2 action drop", ERANGE,
		  "mpls_bos"),
		E("prio 1 protocol mpls_uc mpls_ttl 256 action drop", ERANGE,
		  "mpls_ttl"),
		E("prio 1 protocol mpls_uc mpls action drop", EINVAL, "mpls",
		  "lse depth"),
		E("prio 1 protocol mpls_uc mpls lse label 5 action drop", EINVAL,
		  "mpls", "depth N comes first"),
		E("prio 1 protocol mpls_uc mpls lse depth 0 action drop", ERANGE,
		  "mpls", "depth"),
		E("prio 1 protocol mpls_uc mpls lse depth 5 action drop", ERANGE,
		  "mpls", "first 4"),
		E("prio 1 protocol mpls_uc mpls lse depth 1 lse depth 1 action drop",
		  EINVAL, "given twice"),
		E("prio 1 protocol mpls_uc mpls lse depth 1 label 1 label 2 action "
		  "drop", EINVAL, "label given twice"),
		E("prio 1 protocol mpls_uc mpls lse depth 1 tc 9 action drop",
		  ERANGE, "mpls lse tc"),
		E("prio 1 protocol mpls_uc mpls_ttl 1 mpls lse depth 2 action drop",
		  EINVAL, "mpls", "conflicts", "mpls_ttl"),
		/* PPPoE */
		E("prio 1 pppoe_sid 65536 action drop", ERANGE, "pppoe_sid"),
		E("prio 1 ppp_proto foo action drop", EINVAL, "ppp_proto"),
		E("prio 1 protocol ip pppoe_sid 1 action drop", EINVAL, "pppoe_sid",
		  "conflicts"),
		E("prio 1 pppoe_sid 1 ip_proto tcp action drop", EINVAL,
		  "conflicts", "under PPPoE"),
		/* L2TPv3, SPI */
		E("prio 1 l2tpv3_sid 1 action drop", EINVAL, "l2tpv3_sid",
		  "needs ip_proto l2tp"),
		E("prio 1 ip_proto udp l2tpv3_sid 1 action drop", EINVAL,
		  "l2tpv3_sid", "needs ip_proto l2tp", "udp"),
		E("prio 1 ip_proto l2tp l2tpv3_sid 4294967296 action drop", ERANGE,
		  "l2tpv3_sid"),
		E("prio 1 spi 1 action drop", EINVAL, "spi", "ip_proto esp or ah"),
		E("prio 1 ip_proto esp spi xyz action drop", EINVAL, "spi"),
		E("prio 1 ip_proto esp ip_flags frag/nofirstfrag spi 1 action drop",
		  EINVAL, "spi", "conflicts", "ip_flags"),
		/* CFM */
		E("prio 1 cfm action drop", EINVAL, "cfm", "mdl"),
		E("prio 1 cfm mdl 8 action drop", ERANGE, "cfm mdl"),
		E("prio 1 cfm op 256 action drop", ERANGE, "cfm op"),
		E("prio 1 cfm mdl 1 mdl 2 action drop", EINVAL, "mdl given twice"),
		E("prio 1 protocol ip cfm op 1 action drop", EINVAL, "conflicts"),
		/* indev */
		E("prio 1 indev no-such-dev0 action drop", ENODEV, "indev",
		  "no device"),
		E("prio 1 indev a/b action drop", EINVAL, "indev",
		  "not an interface name"),
		E("prio 1 indev ifindex/0 action drop", EINVAL, "indev"),
		/* refused: one message, why and what instead */
		E("prio 1 ct_zone 1 action drop", EOPNOTSUPP, "ct_zone",
		  "a tc-flower keyword xtcam does not support", "conntrack", "; "),
		E("prio 1 ct_mark 1 action drop", EOPNOTSUPP, "ct_mark", "conntrack"),
		E("prio 1 ct_label 1 action drop", EOPNOTSUPP, "ct_label"),
		E("prio 1 enc_src_ip 1.2.3.4 action drop", EOPNOTSUPP, "enc_src_ip",
		  "not yet supported", "outer headers"),
		E("prio 1 enc_dst_ip 1.2.3.4 action drop", EOPNOTSUPP, "enc_dst_ip"),
		E("prio 1 enc_dst_port 1 action drop", EOPNOTSUPP, "enc_dst_port"),
		E("prio 1 enc_tos 1 action drop", EOPNOTSUPP, "enc_tos"),
		E("prio 1 vxlan_opts 1 action drop", EOPNOTSUPP, "vxlan_opts"),
		E("prio 1 erspan_opts 1 action drop", EOPNOTSUPP, "erspan_opts"),
		E("prio 1 gtp_opts 1 action drop", EOPNOTSUPP, "gtp_opts"),
		E("prio 1 flowid 1:1 action drop", EOPNOTSUPP, "flowid", "qdisc"),
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		expect_error(t[i].line, NULL, t[i].err, t[i].subs);
}

/* Every keyword of iproute2's tc/f_flower.c (6.1 and later) is either taken
 * or refused with the one message: none is an unknown keyword, and each
 * refused one says why and what instead, with EOPNOTSUPP. */
Test(flower, every_flower_keyword_taken_or_refused)
{
	static const char *const taken[] = {
		"arp_op", "arp_sha", "arp_sip", "arp_tha", "arp_tip", "cfm", "code",
		"cvlan_ethtype", "cvlan_id", "cvlan_prio", "dst_ip", "dst_mac", "dst_port",
		"indev", "ip_flags", "ip_proto", "ip_tos", "ip_ttl", "l2tpv3_sid", "mpls",
		"mpls_bos", "mpls_label", "mpls_tc", "mpls_ttl", "num_of_vlans", "ppp_proto",
		"pppoe_sid", "spi", "src_ip", "src_mac", "src_port", "tcp_flags", "type",
		"vlan_ethtype", "vlan_id", "vlan_prio",
	};
	static const char *const refused[] = {
		"classid", "flowid", "hw_tc", "verbose", "chain", "l2_miss",
		"ct_state", "ct_zone", "ct_mark", "ct_label",
		"enc_key_id", "enc_dst_ip", "enc_src_ip", "enc_dst_port", "enc_tos", "enc_ttl",
		"enc_flags", "geneve_opts", "vxlan_opts", "erspan_opts", "gtp_opts", "pfcp_opts",
	};
	char line[128], err[XTCAM_ERR_MAX], want[64];
	struct xtcam_rule r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(taken); i++) {
		snprintf(line, sizeof(line), "prio 1 %s 1 action drop", taken[i]);
		err[0] = '\0';
		parse(line, &r, NULL, err, sizeof(err));
		cr_expect(!strstr(err, "unknown keyword"), "%s: %s", line, err);
		cr_expect(!strstr(err, "does not support"), "%s: %s", line, err);
	}
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		snprintf(line, sizeof(line), "prio 1 %s 1 action drop", refused[i]);
		snprintf(want, sizeof(want), "%s: a tc-flower keyword xtcam does not support (",
			 refused[i]);
		cr_expect_eq(parse(line, &r, NULL, err, sizeof(err)), -EOPNOTSUPP, "%s", line);
		cr_expect(!strncmp(err, want, strlen(want)), "%s: %s", line, err);
		cr_expect(strstr(err, "); ") && err[strlen(err) - 1] != ' ', "%s: no \"instead\": %s",
			  line, err);
	}
}

/* --- what a rule matches ------------------------------------------------------
 *
 * Keys as the parser makes them for a frame (xtcam/key.h), and whether the
 * compiled rule matches each: through xtcam_rec_match() and the reference
 * classifier's expansion.
 */

enum { UNTAGGED, DOT1Q, QINQ };

static void k_eth(struct xtcam_key *k, int tags, uint16_t l3)
{
	memset(k, 0, sizeof(*k));
	k->flags = XTCAM_F_ETH;
	k->eth_type = htons(l3);
	if (tags >= DOT1Q) {
		k->flags |= XTCAM_F_VLAN1;
		k->vlan_tci = htons(5);
		k->vlan_ethtype = htons(tags == QINQ ? 0x8100 : l3);
	}
	if (tags == QINQ) {
		k->flags |= XTCAM_F_VLAN2 | XTCAM_F_OUTER_AD;
		k->cvlan_tci = htons(6);
		k->cvlan_ethtype = htons(l3);
	}
}

static void k_ip4(struct xtcam_key *k, int tags, uint8_t proto)
{
	k_eth(k, tags, 0x0800);
	k->flags |= XTCAM_F_L3 | XTCAM_F_PROTO;
	k->ip_proto = proto;
	k->src_ip[0] = htonl(0x0a000001);
	k->dst_ip[0] = htonl(0x0a000002);
	k->ip_ttl = 64;
}

static void k_arp(struct xtcam_key *k, uint16_t et, uint8_t op, uint32_t sip,
		  uint32_t tip)
{
	static const uint8_t sha[6] = { 0, 0x11, 0x22, 0x33, 0x44, 0x55 };
	static const uint8_t tha[6] = { 0, 0x11, 0, 0, 0, 9 };

	k_eth(k, UNTAGGED, et);
	k->flags |= XTCAM_F_L3X;
	k->ip_proto = op;
	k->src_ip[0] = htonl(sip);
	k->dst_ip[0] = htonl(tip);
	memcpy((uint8_t *)k->src_ip + 4, sha, 6);
	memcpy((uint8_t *)k->dst_ip + 4, tha, 6);
}

static uint32_t lse(uint32_t label, unsigned tc, unsigned bos, unsigned ttl)
{
	return htonl(label << 12 | tc << 9 | bos << 8 | ttl);
}

static void k_mpls(struct xtcam_key *k, int tags, int n, const uint32_t *l)
{
	int i;

	k_eth(k, tags, 0x8847);
	k->flags |= XTCAM_F_L3X;
	for (i = 0; i < n; i++) {
		k->src_ip[i] = l[i];
		k->ip_proto |= (uint8_t)(1u << i);
	}
}

static void k_pppoe(struct xtcam_key *k, uint16_t sid, uint16_t proto)
{
	k_eth(k, UNTAGGED, 0x8864);
	k->flags |= XTCAM_F_L3X;
	k->src_ip[0] = htonl((uint32_t)sid << 16 | proto);
}

static void k_sid32(struct xtcam_key *k, uint8_t proto, uint32_t v)
{
	k_ip4(k, UNTAGGED, proto);
	k->flags |= XTCAM_F_L4;
	k->src_port = htons((uint16_t)(v >> 16));
	k->dst_port = htons((uint16_t)v);
}

static void k_cfm(struct xtcam_key *k, uint8_t mdl, uint8_t op)
{
	k_eth(k, DOT1Q, 0x8902);
	k->flags |= XTCAM_F_L3X;
	k->ip_tos = (uint8_t)(mdl << 5 | 0);
	k->ip_proto = op;
}

static void expect_match(const char *line, const struct xtcam_key *k, bool want,
			 const char *what)
{
	struct xtcam_oracle o;
	struct xtcam_rec rec;
	struct xtcam_rule r;
	int got;

	parse_ok(line, NULL, &r);
	r.handle = 1;
	cr_assert_eq(xtcam_rule_compile(&r, &rec), 0, "%s: compile", line);
	got = xtcam_rec_match(&rec, k);
	cr_expect_eq(got, want, "\"%s\" on %s: %s, want %s", line, what,
		     got ? "match" : "miss", want ? "match" : "miss");
	xtcam_oracle_init(&o);
	cr_assert_eq(xtcam_oracle_add(&o, &r), 0);
	cr_expect_eq(xtcam_oracle_lookup(&o, k) != NULL, want,
		     "reference: \"%s\" on %s", line, what);
	xtcam_oracle_free(&o);
}

Test(flower, protocol_is_outermost)
{
	struct xtcam_key u, q, qq, u6;

	k_ip4(&u, UNTAGGED, 6);
	k_ip4(&q, DOT1Q, 6);
	k_ip4(&qq, QINQ, 6);
	k_eth(&u6, UNTAGGED, 0x86dd);
	u6.flags |= XTCAM_F_L3 | XTCAM_F_PROTO;

	expect_match("prio 1 protocol ip action drop", &u, true, "untagged IPv4");
	expect_match("prio 1 protocol ip action drop", &q, false, "tagged IPv4");
	expect_match("prio 1 protocol ip action drop", &qq, false, "QinQ IPv4");
	expect_match("prio 1 protocol ip action drop", &u6, false, "IPv6");
	expect_match("prio 1 eth_type ipv4 action drop", &q, true, "tagged IPv4");
	expect_match("prio 1 eth_type ipv4 action drop", &qq, true, "QinQ IPv4");
	expect_match("prio 1 protocol 802.1q vlan_ethtype ip action drop", &q,
		     true, "tagged IPv4");
	expect_match("prio 1 protocol 802.1q vlan_ethtype ip action drop", &u,
		     false, "untagged IPv4");
	expect_match("prio 1 protocol 802.1q action drop", &qq, false,
		     "802.1ad outer tag");
	expect_match("prio 1 protocol 802.1ad vlan_ethtype 802.1q "
		     "cvlan_ethtype ip action drop", &qq, true, "QinQ IPv4");
	expect_match("prio 1 protocol 802.1ad action drop", &q, false,
		     "802.1Q outer tag");
	expect_match("prio 1 protocol ip src_ip 10.0.0.1 action drop", &u, true,
		     "untagged IPv4");
	expect_match("prio 1 protocol all ip_proto tcp action drop", &q, true,
		     "tagged IPv4");
	expect_match("prio 1 num_of_vlans 0 action drop", &u, true, "untagged");
	expect_match("prio 1 num_of_vlans 0 action drop", &q, false, "one tag");
	expect_match("prio 1 num_of_vlans 1 action drop", &q, true, "one tag");
	expect_match("prio 1 num_of_vlans 1 action drop", &qq, false, "two tags");
	expect_match("prio 1 num_of_vlans 2 action drop", &qq, true, "two tags");
	expect_match("prio 1 num_of_vlans 2 action drop", &q, false, "one tag");
}

Test(flower, arp)
{
	struct xtcam_key req, rep, rarp, ip;

	k_arp(&req, 0x0806, 1, 0x0a000001, 0x0a000002);
	k_arp(&rep, 0x0806, 2, 0x0a000002, 0x0a000001);
	k_arp(&rarp, 0x8035, 1, 0x0a000001, 0x0a000002);
	k_ip4(&ip, UNTAGGED, 1);

	expect_match("prio 1 protocol arp arp_op request action drop", &req, true, "request");
	expect_match("prio 1 protocol arp arp_op request action drop", &rep, false, "reply");
	expect_match("prio 1 protocol arp arp_op request action drop", &rarp, false, "RARP");
	expect_match("prio 1 protocol rarp arp_op 1 action drop", &rarp, true, "RARP");
	expect_match("prio 1 protocol arp arp_sip 10.0.0.0/24 action drop", &req, true, "request");
	expect_match("prio 1 protocol arp arp_sip 10.0.0.2 action drop", &req, false, "request");
	expect_match("prio 1 protocol arp arp_tip 10.0.0.2 action drop", &req, true, "request");
	expect_match("prio 1 protocol arp arp_sha 00:11:22:33:44:55 action drop", &req,
		     true, "request");
	expect_match("prio 1 protocol arp arp_sha 00:11:22:33:44:56 action drop", &req,
		     false, "request");
	expect_match("prio 1 protocol arp arp_tha 00:11:00:00:00:00/16 action drop",
		     &req, true, "request");
	/* an IPv4 frame with the same bytes is not ARP */
	expect_match("prio 1 eth_type arp arp_sip 10.0.0.1 action drop", &ip, false, "IPv4");
	/* and an IP match never sees ARP's bytes */
	expect_match("prio 1 ip_proto 1 action drop", &req, false, "ARP request");
}

Test(flower, mpls)
{
	uint32_t one[1] = { lse(1000, 3, 1, 64) };
	uint32_t three[3] = { lse(16, 0, 0, 9), lse(17, 1, 0, 8), lse(18, 2, 1, 7) };
	struct xtcam_key k1, k3, kq, ip;

	k_mpls(&k1, UNTAGGED, 1, one);
	k_mpls(&k3, UNTAGGED, 3, three);
	k_mpls(&kq, DOT1Q, 1, one);
	k_ip4(&ip, UNTAGGED, 6);

	expect_match("prio 1 protocol mpls_uc mpls_label 1000 action drop", &k1, true, "1 label");
	expect_match("prio 1 protocol mpls_uc mpls_label 1000 action drop", &kq, false,
		     "tagged (protocol is outermost)");
	expect_match("prio 1 eth_type mpls_uc mpls_label 1000 action drop", &kq, true, "tagged");
	expect_match("prio 1 protocol mpls_uc mpls_tc 3 mpls_bos 1 mpls_ttl 64 action drop",
		     &k1, true, "1 label");
	expect_match("prio 1 protocol mpls_uc mpls_bos 1 action drop", &k3, false, "3 labels");
	expect_match("prio 1 protocol mpls_uc mpls lse depth 2 label 17 tc 1 action drop",
		     &k3, true, "3 labels");
	expect_match("prio 1 protocol mpls_uc mpls lse depth 2 action drop", &k1, false,
		     "1 label");
	expect_match("prio 1 protocol mpls_uc mpls lse depth 3 bos 1 ttl 7 lse depth 1 "
		     "label 16 action drop", &k3, true, "3 labels");
	expect_match("prio 1 protocol mpls_uc mpls lse depth 4 action drop", &k3, false,
		     "3 labels");
	expect_match("prio 1 protocol mpls_mc mpls_label 1000 action drop", &k1, false,
		     "unicast");
	expect_match("prio 1 ip_proto 1 action drop", &k1, false, "MPLS");
}

Test(flower, pppoe_l2tp_spi_cfm)
{
	struct xtcam_key p, l2, esp, ah, udp, c;

	k_pppoe(&p, 7, 0x0021);
	k_sid32(&l2, 115, 4000000000u);
	k_sid32(&esp, 50, 0x10203);
	k_sid32(&ah, 51, 0x10203);
	k_sid32(&udp, 17, 0x10203);
	k_cfm(&c, 5, 1);

	expect_match("prio 1 pppoe_sid 7 action drop", &p, true, "PPPoE");
	expect_match("prio 1 pppoe_sid 8 action drop", &p, false, "PPPoE");
	expect_match("prio 1 protocol ppp_ses ppp_proto ip action drop", &p, true, "PPPoE");
	expect_match("prio 1 ppp_proto ipv6 action drop", &p, false, "PPPoE");
	expect_match("prio 1 ip_proto l2tp l2tpv3_sid 4000000000 action drop", &l2, true,
		     "L2TPv3");
	expect_match("prio 1 ip_proto l2tp l2tpv3_sid 4000000001 action drop", &l2, false,
		     "L2TPv3");
	expect_match("prio 1 ip_proto esp spi 0x10203 action drop", &esp, true, "ESP");
	expect_match("prio 1 ip_proto esp spi 0x10203 action drop", &ah, false, "AH");
	expect_match("prio 1 ip_proto ah spi 10203 action drop", &ah, true, "AH");
	expect_match("prio 1 ip_proto esp spi 0x10204 action drop", &esp, false, "ESP");
	expect_match("prio 1 ip_proto udp src_port 1 dst_port 515 action drop", &udp, true,
		     "UDP");
	expect_match("prio 1 cfm mdl 5 op 1 action drop", &c, true, "CFM");
	expect_match("prio 1 cfm mdl 4 action drop", &c, false, "CFM");
	expect_match("prio 1 cfm op 1 action drop", &c, true, "CFM");
	expect_match("prio 1 ip_tos 0xa0/0xe0 action drop", &c, false, "CFM");
}

Test(flower, indev)
{
	struct xtcam_key k;

	k_ip4(&k, UNTAGGED, 6);
	k.ifindex = 1;
	expect_match("prio 1 indev lo action drop", &k, true, "from lo");
	k.ifindex = 2;
	expect_match("prio 1 indev lo action drop", &k, false, "from ifindex 2");
	expect_match("prio 1 indev ifindex/2 action drop", &k, true, "from ifindex 2");
}

/* --- offload ----------------------------------------------------------------- */

Test(flower, hw_refuses_what_it_cannot_parse)
{
	static const struct { const char *line, *msg; } t[] = {
		{ "prio 1 protocol arp arp_op 1 action drop", "ARP, MPLS" },
		{ "prio 1 protocol mpls_uc mpls_label 1 action drop", "ARP, MPLS" },
		{ "prio 1 pppoe_sid 1 action drop", "PPPoE" },
		{ "prio 1 cfm op 1 action drop", "CFM" },
		{ "prio 1 ip_proto l2tp l2tpv3_sid 1 action drop", "L2TPv3" },
		{ "prio 1 ip_proto esp spi 1 action drop", "SPI" },
		{ "prio 1 indev lo action drop", "indev" },
		{ "prio 1 num_of_vlans 1 action drop", "two VLAN tags" },
	};
	static const char *const ok[] = {
		"prio 1 protocol ip ip_proto udp action drop",
		"prio 1 protocol 802.1ad vlan_id 5 action drop",
		"prio 1 num_of_vlans 0 action drop",
	};
	char err[256];
	struct xtcam_rule r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		parse_ok(t[i].line, NULL, &r);
		r.handle = 1;
		err[0] = '\0';
		cr_expect_eq(xtcam_hw_rule_check(&r, err, sizeof(err)), -EOPNOTSUPP,
			     "%s", t[i].line);
		cr_expect(strstr(err, t[i].msg), "%s: \"%s\" lacks \"%s\"", t[i].line,
			  err, t[i].msg);
	}
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		parse_ok(ok[i], NULL, &r);
		r.handle = 1;
		cr_expect_eq(xtcam_hw_rule_check(&r, err, sizeof(err)), 0, "%s: %s",
			     ok[i], err);
	}
}
