// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The printers (xtcam_rule_format, xtcam_kw_format, xtcam_action_format,
 * names) and the JSON renderings, checked by parsing the JSON back with
 * json-c and feeding its values to the text parser again.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "syntax_test.h"

/* --- names ----------------------------------------------------------------- */

Test(format, kw_names)
{
	static const char *const want[XTCAM_KW_MAX] = {
		"src_mac", "dst_mac", "vlan", "vlan_id", "vlan_prio",
		"vlan_ethtype", "cvlan_id", "cvlan_prio", "cvlan_ethtype",
		"eth_type", "ip_proto", "src_ip", "dst_ip", "ip_tos", "ip_ttl",
		"ip_flags", "src_port", "dst_port", "tcp_flags", "type", "code",
		"raw1", "raw2", "protocol", "num_of_vlans", "arp_op", "arp_sip",
		"arp_tip", "arp_sha", "arp_tha", "mpls_label", "mpls_tc",
		"mpls_bos", "mpls_ttl", "mpls", "pppoe_sid", "ppp_proto",
		"l2tpv3_sid", "spi", "cfm", "indev",
	};
	int k;

	for (k = 0; k < XTCAM_KW_MAX; k++)
		cr_expect_str_eq(xtcam_kw_name(k), want[k], "kw %d", k);
	cr_assert_null(xtcam_kw_name(XTCAM_KW_MAX));
	cr_assert_null(xtcam_kw_name((enum xtcam_kw)-1));
	cr_assert_null(xtcam_kw_name((enum xtcam_kw)1000));
}

Test(format, action_names)
{
	cr_assert_str_eq(xtcam_action_name(XTCAM_ACT_NONE), "none");
	cr_assert_str_eq(xtcam_action_name(XTCAM_ACT_DROP), "drop");
	cr_assert_str_eq(xtcam_action_name(XTCAM_ACT_PASS), "pass");
	cr_assert_str_eq(xtcam_action_name(XTCAM_ACT_TX), "tx");
	cr_assert_str_eq(xtcam_action_name(XTCAM_ACT_REDIRECT), "redirect");
	cr_assert_str_eq(xtcam_action_name(XTCAM_ACT_CPU), "cpu");
	cr_assert_str_eq(xtcam_action_name(XTCAM_ACT_MAX), "unknown");
	cr_assert_str_eq(xtcam_action_name(0xffffffffu), "unknown");
}

/* --- actions --------------------------------------------------------------- */

Test(format, actions)
{
	struct xtcam_rule_action a;
	char b[128];

	memset(&a, 0, sizeof(a));
	a.type = XTCAM_ACT_DROP;
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), 4);
	cr_assert_str_eq(b, "drop");
	a.type = XTCAM_ACT_PASS;
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), 4);
	cr_assert_str_eq(b, "pass");
	a.type = XTCAM_ACT_TX;
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), 2);
	cr_assert_str_eq(b, "tx");
	a.type = XTCAM_ACT_CPU;
	a.cpu = 17;
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), 6);
	cr_assert_str_eq(b, "cpu 17");
	memset(&a, 0, sizeof(a));
	a.type = XTCAM_ACT_REDIRECT;
	strcpy(a.dev, "veth1");
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), 18);
	cr_assert_str_eq(b, "redirect dev veth1");
	strcpy(a.netns, "blue");
	cr_assert_str_eq((xtcam_action_format(&a, b, sizeof(b)), b),
			 "redirect dev veth1 netns blue");
	/* a full-width device name without a NUL still prints safely */
	memset(a.dev, 'd', sizeof(a.dev));
	memset(a.netns, 0, sizeof(a.netns));
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), 13 + XTCAM_IFNAME_MAX);

	/* no text form */
	memset(&a, 0, sizeof(a));
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), -EINVAL);
	a.type = XTCAM_ACT_REDIRECT;                /* no device */
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), -EINVAL);
	a.type = 99;
	cr_assert_eq(xtcam_action_format(&a, b, sizeof(b)), -EINVAL);
	cr_assert_eq(xtcam_action_format(NULL, b, sizeof(b)), -EINVAL);

	/* too small */
	a.type = XTCAM_ACT_DROP;
	cr_assert_eq(xtcam_action_format(&a, b, 4), -ENOSPC);
	cr_assert_str_eq(b, "dro");
	cr_assert_eq(xtcam_action_format(&a, b, 5), 4);
	cr_assert_eq(xtcam_action_format(&a, NULL, 0), -ENOSPC);
}

/* --- rules ----------------------------------------------------------------- */

Test(format, enospc_truncates)
{
	char full[XTCAM_RULE_TEXT_MAX], b[XTCAM_RULE_TEXT_MAX];
	struct xtcam_rule r;
	size_t len, n;
	int rc;

	parse_ok("prio 4 handle 9 ip_proto tcp src_ip 10.0.0.0/8 dst_port 1-9 "
		 "action redirect dev veth0 netns x", NULL, &r);
	rc = xtcam_rule_format(&r, NULL, full, sizeof(full));
	cr_assert_gt(rc, 0);
	n = (size_t)rc;
	for (len = 1; len <= n; len++) {
		memset(b, 'Z', sizeof(b));
		cr_assert_eq(xtcam_rule_format(&r, NULL, b, len), -ENOSPC,
			     "len %zu", len);
		cr_assert_eq(strlen(b), len - 1, "len %zu: NUL-terminated", len);
		cr_assert_eq(strncmp(b, full, len - 1), 0, "len %zu: a prefix", len);
		cr_assert_eq(b[len], 'Z', "len %zu: wrote past the buffer", len);
	}
	cr_assert_eq(xtcam_rule_format(&r, NULL, b, n + 1), (int)n);
	cr_assert_str_eq(b, full);
	cr_assert_eq(xtcam_rule_format(&r, NULL, NULL, 0), -ENOSPC);
}

Test(format, bad_rules)
{
	struct xtcam_rule r;
	char b[XTCAM_RULE_TEXT_MAX];

	cr_assert_eq(xtcam_rule_format(NULL, NULL, b, sizeof(b)), -EINVAL);
	base_rule(&r, 1);
	r.action.type = XTCAM_ACT_NONE;
	cr_assert_eq(xtcam_rule_format(&r, NULL, b, sizeof(b)), -EINVAL);
	r.action.type = XTCAM_ACT_REDIRECT;
	cr_assert_eq(xtcam_rule_format(&r, NULL, b, sizeof(b)), -EINVAL);
	r.action.type = 1000;
	cr_assert_eq(xtcam_rule_format(&r, NULL, b, sizeof(b)), -EINVAL);
}

Test(format, handle_printed_when_assigned)
{
	struct xtcam_rule r;
	char b[XTCAM_RULE_TEXT_MAX];

	base_rule(&r, 10);
	cr_assert_gt(xtcam_rule_format(&r, NULL, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "prio 10 action drop");
	r.handle = 4000000000u;          /* the one a block assigned */
	cr_assert_gt(xtcam_rule_format(&r, NULL, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "prio 10 handle 4000000000 action drop");
}

Test(format, worst_case_fits)
{
	struct xtcam_rule r;
	char b[XTCAM_RULE_TEXT_MAX];
	int rc;

	/* every keyword at its longest text */
	parse_ok("prio 65535 handle 4294967295 "
		 "src_mac 01:23:45:67:89:ab/f0:f0:f0:f0:f0:f1 "
		 "dst_mac 01:23:45:67:89:ab/f0:f0:f0:f0:f0:f1 "
		 "vlan tagged vlan_id 4095 vlan_prio 7 vlan_ethtype 802.1ad "
		 "cvlan_id 4095 cvlan_prio 7 cvlan_ethtype ipv6 eth_type ipv6 "
		 "ip_proto fe ip_tos 0xfe/0xfe ip_ttl 255/0xfe "
		 "ip_flags nofrag/nofirstfrag "
		 "raw1 0xfe/0xfe raw2 0xfffffffe/0xfffffffe "
		 "action redirect dev abcdefghijklmno netns "
		 "n23456789012345678901234567890123456789012345678901234567890123",
		 blk_raw(), &r);
	rc = xtcam_rule_format(&r, NULL, b, sizeof(b));
	cr_assert_gt(rc, 0, "rc %d", rc);
	cr_assert_lt(rc, XTCAM_RULE_TEXT_MAX);

	parse_ok("prio 65535 handle 4294967295 eth_type ipv6 ip_proto sctp "
		 "src_ip 1111:2222:3333:4444:5555:6666:7777:8888/"
		 "ffff:fffe:ffff:fffe:ffff:fffe:ffff:fffe "
		 "dst_ip 1111:2222:3333:4444:5555:6666:7777:8888/"
		 "ffff:fffe:ffff:fffe:ffff:fffe:ffff:fffe "
		 "src_port 10000-65535 dst_port 10000-65535 ip_tos 0xff/0xfe "
		 "ip_ttl 255/0xfe action cpu 8191", NULL, &r);
	rc = xtcam_rule_format(&r, NULL, b, sizeof(b));
	cr_assert_gt(rc, 0, "rc %d", rc);
	cr_assert_lt(rc, XTCAM_RULE_TEXT_MAX);
}

Test(format, raw_mask_without_block)
{
	struct xtcam_rule r;
	char b[XTCAM_RULE_TEXT_MAX], t[64];

	parse_ok("prio 1 raw1 0x11 raw2 0xdeadbeef action drop", blk_raw(), &r);
	cr_assert_gt(xtcam_rule_format(&r, blk_raw(), b, sizeof(b)), 0);
	cr_assert_str_eq(b, "prio 1 raw1 0x11 raw2 0xdeadbeef action drop");
	/* without the block's lengths the mask is always shown */
	cr_assert_gt(xtcam_rule_format(&r, NULL, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "prio 1 raw1 0x11/0xff raw2 0xdeadbeef/0xffffffff "
			 "action drop");
	cr_assert_gt(xtcam_kw_format(&r, NULL, XTCAM_KW_RAW1, t, sizeof(t)), 0);
	cr_assert_str_eq(t, "0x11/0xff");
}

Test(format, kw_format)
{
	static const struct { const char *line; int kw; const char *want; } t[] = {
		{ "src_mac 0:1:2:3:4:5/24", XTCAM_KW_SRC_MAC, "00:01:02:00:00:00/24" },
		{ "vlan untagged", XTCAM_KW_VLAN, "untagged" },
		{ "vlan_id 7 vlan_prio 1", XTCAM_KW_VLAN_ID, "7" },
		{ "vlan_id 7 vlan_prio 1", XTCAM_KW_VLAN_PRIO, "1" },
		{ "eth_type all", XTCAM_KW_ETH_TYPE, "all" },
		{ "src_ip 10.0.0.1", XTCAM_KW_ETH_TYPE, "ipv4" },
		{ "ip_proto 11", XTCAM_KW_IP_PROTO, "udp" },
		{ "ip_proto 32", XTCAM_KW_IP_PROTO, "esp" },
		{ "ip_proto 2f", XTCAM_KW_IP_PROTO, "0x2f" },
		{ "ip_proto 0", XTCAM_KW_IP_PROTO, "0x00" },
		{ "ip_tos b8", XTCAM_KW_IP_TOS, "0xb8" },
		{ "ip_ttl 64/f0", XTCAM_KW_IP_TTL, "64/0xf0" },
		{ "ip_proto tcp tcp_flags 12/12", XTCAM_KW_TCP_FLAGS, "0x12/0x12" },
		{ "ip_proto tcp tcp_flags 12", XTCAM_KW_TCP_FLAGS, "0x12" },
		{ "dst_ip fe80::1/10", XTCAM_KW_DST_IP, "fe80::/10" },
		{ "ip_tos 0x10/0xf0", XTCAM_KW_IP_TOS, "0x10/0xf0" },
		{ "ip_flags nofrag", XTCAM_KW_IP_FLAGS, "nofrag" },
		{ "ip_proto tcp dst_port 1000-2000", XTCAM_KW_DST_PORT, "1000-2000" },
		{ "ip_proto tcp", XTCAM_KW_SRC_PORT, "0-65535" },
		{ "ip_proto tcp tcp_flags 0x2/0x12", XTCAM_KW_TCP_FLAGS, "0x2/0x12" },
		{ "ip_proto icmp type 3/0xf", XTCAM_KW_TYPE, "3/15" },
		{ "ip_proto icmp code 3/12", XTCAM_KW_CODE, "0/12" },
		{ "raw1 0x2/0x3", XTCAM_KW_RAW1, "0x2/0x3" },
	};
	char line[160], b[128];
	struct xtcam_rule r;
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(line, sizeof(line), "prio 1 %s action drop", t[i].line);
		parse_ok(line, blk_raw(), &r);
		rc = xtcam_kw_format(&r, blk_raw(), t[i].kw, b, sizeof(b));
		cr_expect_eq(rc, (int)strlen(t[i].want), "%s: rc %d", line, rc);
		cr_expect_str_eq(b, t[i].want, "%s", line);
	}
	cr_assert_eq(xtcam_kw_format(&r, NULL, XTCAM_KW_MAX, b, sizeof(b)),
		     -EINVAL);
	cr_assert_eq(xtcam_kw_format(&r, NULL, (enum xtcam_kw)-1, b, sizeof(b)),
		     -EINVAL);
	cr_assert_eq(xtcam_kw_format(NULL, NULL, XTCAM_KW_RAW1, b, sizeof(b)),
		     -EINVAL);
	cr_assert_eq(xtcam_kw_format(&r, blk_raw(), XTCAM_KW_RAW1, b, 3),
		     -ENOSPC);
	cr_assert_str_eq(b, "0x");
}

/* --- kw_present: parsed and hand-built rules ------------------------------- */

Test(format, kw_present_parsed)
{
	struct xtcam_rule r;
	int k;

	/* the keywords given, and only those (eth_type implied: not shown) */
	parse_ok("prio 1 src_ip 1.2.3.4 ip_proto icmp type 0/0 action drop", NULL,
		 &r);
	for (k = 0; k < XTCAM_KW_MAX; k++)
		cr_expect_eq(xtcam_kw_present(&r, k),
			     k == XTCAM_KW_SRC_IP || k == XTCAM_KW_IP_PROTO ||
			     k == XTCAM_KW_TYPE, "kw %s", xtcam_kw_name(k));
	cr_assert(!xtcam_kw_present(&r, XTCAM_KW_MAX));
	cr_assert(!xtcam_kw_present(&r, (enum xtcam_kw)-1));
}

Test(format, kw_present_hand_built)
{
	struct xtcam_rule r;
	char b[XTCAM_RULE_TEXT_MAX];
	int k;

	xtcam_rule_init(&r);
	r.prio = 2;
	for (k = 0; k < XTCAM_KW_MAX; k++)
		cr_expect(!xtcam_kw_present(&r, k), "empty rule shows %s",
			  xtcam_kw_name(k));
	cr_assert_gt(xtcam_rule_format(&r, NULL, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "prio 2 action pass");

	/* fields with a mask show without keyword bits */
	r.mask.eth_type = 0xffff;
	r.value.eth_type = htons(0x0806);
	r.mask.ip_ttl = 0xff;
	r.value.ip_ttl = 9;
	r.dport_lo = r.dport_hi = 53;
	r.mask.flags = XTCAM_F_FIRSTFRAG;
	r.mask.vlan_tci = htons(0xe000);
	cr_assert(xtcam_kw_present(&r, XTCAM_KW_ETH_TYPE));
	cr_assert(xtcam_kw_present(&r, XTCAM_KW_IP_TTL));
	cr_assert(xtcam_kw_present(&r, XTCAM_KW_DST_PORT));
	cr_assert(xtcam_kw_present(&r, XTCAM_KW_IP_FLAGS));
	cr_assert(xtcam_kw_present(&r, XTCAM_KW_VLAN_PRIO));
	cr_assert(!xtcam_kw_present(&r, XTCAM_KW_VLAN_ID));
	cr_assert(!xtcam_kw_present(&r, XTCAM_KW_VLAN));
	cr_assert(!xtcam_kw_present(&r, XTCAM_KW_SRC_PORT));
	cr_assert_gt(xtcam_rule_format(&r, NULL, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "prio 2 vlan_prio 0 eth_type arp ip_ttl 9 ip_flags "
			 "nofirstfrag dst_port 53 action pass");

	/* an IPv6 address: eth_type is implied, not shown */
	xtcam_rule_init(&r);
	r.prio = 2;
	r.mask.eth_type = 0xffff;
	r.value.eth_type = htons(0x86dd);
	memset(r.mask.dst_ip, 0xff, 16);
	r.value.dst_ip[3] = htonl(1);
	cr_assert(!xtcam_kw_present(&r, XTCAM_KW_ETH_TYPE));
	cr_assert_gt(xtcam_rule_format(&r, NULL, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "prio 2 dst_ip ::1 action pass");
}

/* --- JSON ------------------------------------------------------------------ */

static struct json_object *reparse(struct json_object *o, int flags)
{
	const char *s = json_object_to_json_string_ext(o, flags);
	struct json_object *back;

	cr_assert(s);
	back = json_tokener_parse(s);
	cr_assert(back, "json-c cannot read its own output: %s", s);
	return back;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	cr_assert(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
		  json_object_to_json_string(o));
	cr_assert(json_object_is_type(v, json_type_string), "\"%s\" not a string",
		  key);
	return json_object_get_string(v);
}

Test(json, match_keys_values_order)
{
	static const char *const lines[] = {
		"prio 1 action drop",
		"prio 1 eth_type ipv4 ip_proto tcp src_ip 10.0.0.0/8 dst_port "
		"1000-2000 action drop",
		"prio 1 src_mac 00:11:22:33:44:55/24 vlan tagged vlan_id 3 "
		"vlan_ethtype 802.1Q cvlan_prio 2 cvlan_ethtype ipv6 ip_tos 0x8/0xfc "
		"ip_ttl 1 ip_flags frag/firstfrag action pass",
		"prio 1 dst_ip 2001:db8::/ffff:0:ffff:: ip_proto icmpv6 type 1 "
		"code 4 action tx",
		"prio 1 eth_type all ip_proto udp src_port 53 action drop",
		"prio 1 ip_proto tcp tcp_flags 0x12/0x17 raw1 0x1 raw2 0x2/0x3 "
		"action cpu 2",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		struct xtcam_rule r, back;
		struct json_object *j, *jr;
		char text[XTCAM_RULE_TEXT_MAX], v[256], d[2048];
		size_t o;
		int k, n = 0;

		parse_ok(lines[i], blk_raw(), &r);
		j = xtcam_rule_match_json(&r, blk_raw());
		cr_assert(j);
		jr = reparse(j, JSON_C_TO_STRING_PLAIN);

		/* keys in enum order, each the keyword's text value */
		{
			struct json_object_iterator it = json_object_iter_begin(jr);
			struct json_object_iterator end = json_object_iter_end(jr);

			for (k = 0; k < XTCAM_KW_MAX; k++) {
				if (!xtcam_kw_present(&r, k))
					continue;
				cr_assert(!json_object_iter_equal(&it, &end),
					  "%s: %s missing", lines[i], xtcam_kw_name(k));
				cr_assert_str_eq(json_object_iter_peek_name(&it),
						 xtcam_kw_name(k), "%s: order", lines[i]);
				cr_assert_gt(xtcam_kw_format(&r, blk_raw(), k, v,
							     sizeof(v)), 0);
				cr_assert_str_eq(jstr(jr, xtcam_kw_name(k)), v);
				json_object_iter_next(&it);
				n++;
			}
			cr_assert(json_object_iter_equal(&it, &end), "%s: extra keys",
				  lines[i]);
		}
		cr_assert_eq(json_object_object_length(jr), n);

		/* the values are text syntax: rebuild the rule from them */
		o = (size_t)snprintf(text, sizeof(text), "prio %u", r.prio);
		json_object_object_foreach(jr, key, val)
			o += (size_t)snprintf(text + o, sizeof(text) - o, " %s %s",
					      key, json_object_get_string(val));
		cr_assert_gt(xtcam_action_format(&r.action, v, sizeof(v)), 0);
		snprintf(text + o, sizeof(text) - o, " action %s", v);
		parse_ok(text, blk_raw(), &back);
		cr_assert(!rule_diff(&back, &r, d, sizeof(d)),
			  "%s: from JSON \"%s\":%s", lines[i], text, d);

		json_object_put(jr);
		json_object_put(j);
	}
}

Test(json, slashes)
{
	struct xtcam_rule r;
	struct json_object *j, *back;
	const char *s;

	parse_ok("prio 1 src_ip 10.0.0.0/8 action drop", NULL, &r);
	j = xtcam_rule_match_json(&r, NULL);
	cr_assert(j);
	s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	cr_assert(strstr(s, "10.0.0.0\\/8"), "%s", s);
	s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	cr_assert_str_eq(s, "{\"src_ip\":\"10.0.0.0/8\"}");
	back = reparse(j, JSON_C_TO_STRING_PLAIN);
	cr_assert_str_eq(jstr(back, "src_ip"), "10.0.0.0/8");
	json_object_put(back);
	json_object_put(j);
}

static void check_action(const char *line, const char *want)
{
	struct xtcam_rule r;
	struct json_object *j;
	const char *s;

	parse_ok(line, NULL, &r);
	j = xtcam_action_json(&r.action);
	cr_assert(j, "%s", line);
	s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	cr_expect_str_eq(s, want, "%s", line);
	json_object_put(j);
}

Test(json, actions)
{
	struct xtcam_rule_action a;
	struct json_object *j;

	check_action("prio 1 action drop", "{\"type\":\"drop\"}");
	check_action("prio 1 action shot", "{\"type\":\"drop\"}");
	check_action("prio 1 action pass", "{\"type\":\"pass\"}");
	check_action("prio 1 action tx", "{\"type\":\"tx\"}");
	check_action("prio 1 action redirect dev veth1",
		     "{\"type\":\"redirect\",\"dev\":\"veth1\"}");
	check_action("prio 1 action redirect dev veth1 netns ns1",
		     "{\"type\":\"redirect\",\"dev\":\"veth1\",\"netns\":\"ns1\"}");
	/* string values in the text syntax, like the match */
	check_action("prio 1 action cpu 3", "{\"type\":\"cpu\",\"cpu\":\"3\"}");
	check_action("prio 1 action cpu 0x10", "{\"type\":\"cpu\",\"cpu\":\"16\"}");

	memset(&a, 0, sizeof(a));
	j = xtcam_action_json(&a);
	cr_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			 "{\"type\":\"none\"}");
	json_object_put(j);
	a.type = 77;
	j = xtcam_action_json(&a);
	cr_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			 "{\"type\":\"unknown\"}");
	json_object_put(j);

	errno = 0;
	cr_assert_null(xtcam_action_json(NULL));
	cr_assert_eq(errno, EINVAL);
}

Test(json, rule)
{
	struct xtcam_rule r;
	struct json_object *j, *back, *v;

	parse_ok("prio 10 handle 3 ip_proto udp dst_port 53 action redirect dev "
		 "eth1", NULL, &r);
	j = xtcam_rule_json(&r, NULL);
	cr_assert(j);
	cr_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE),
			 "{\"prio\":10,\"handle\":3,\"match\":{\"ip_proto\":\"udp\","
			 "\"dst_port\":\"53\"},\"action\":{\"type\":\"redirect\","
			 "\"dev\":\"eth1\"}}");
	back = reparse(j, JSON_C_TO_STRING_PRETTY);
	cr_assert(json_object_object_get_ex(back, "prio", &v));
	cr_assert_eq(json_object_get_int64(v), 10);
	cr_assert(json_object_object_get_ex(back, "handle", &v));
	cr_assert_eq(json_object_get_int64(v), 3);
	json_object_put(back);
	json_object_put(j);

	/* the largest handle is not negative */
	r.handle = 4294967295u;
	j = xtcam_rule_json(&r, NULL);
	cr_assert(json_object_object_get_ex(j, "handle", &v));
	cr_assert_eq(json_object_get_int64(v), 4294967295LL);
	json_object_put(j);

	errno = 0;
	cr_assert_null(xtcam_rule_json(NULL, NULL));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(xtcam_rule_match_json(NULL, NULL));
	cr_assert_eq(errno, EINVAL);
}
