// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `xtcam import tc` without a kernel: tc lines and tc's JSON into a save
 * file (which restore's reader takes), the priorities and order tc gives
 * them, and the lines it refuses, by line and reason.  Also tc's words in
 * the rule parser (protocol P flower, skip_hw, skip_sw, gact, mirred).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/import_tc.h"
#include "xtcam/loader.h"
#include "xtcam/syntax.h"
#include "syntax_test.h"

struct res {
	int rc;
	char *out, *msgs;
};

static struct res imp(const char *text, bool force)
{
	struct xtcam_import_opts o = { .name = "t.tc", .force = force };
	struct res r;

	r.rc = xtcam_import_tc(text, strlen(text), &o, &r.out, &r.msgs);
	return r;
}

static void res_free(struct res *r)
{
	free(r->out);
	free(r->msgs);
}

/* the rule lines of out, one string ("rule add ...\n..."), for comparing */
static void rules_of(const char *out, char *buf, size_t len)
{
	const char *p = out;

	buf[0] = '\0';
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (!strncmp(p, "rule add ", 9) || !strncmp(p, "bind ", 5) ||
		    !strncmp(p, "block add ", 10))
			strncat(buf, p, l < len - strlen(buf) - 1 ? l : len - strlen(buf) - 1);
		p += l;
	}
}

/* what restore's reader says of out */
static void restores(const char *out)
{
	struct xtcam_restore *rs = NULL;
	char err[XTCAM_MSG_MAX];
	FILE *f = fmemopen((void *)out, strlen(out), "r");
	int e;

	cr_assert(f);
	e = xtcam_restore_read(f, "import", &rs, err, sizeof(err));
	fclose(f);
	cr_assert_eq(e, 0, "restore refuses the import: %s\n%s", err, out);
	cr_assert(!xtcam_restore_is_legacy(rs), "no format line:\n%s", out);
	xtcam_restore_free(rs);
}

/* want with each rule's text as the rule printer writes it, so the
 * expectations are written in the rule language, not in one printing */
static void canon(const char *want, char *buf, size_t len)
{
	const char *p = want;

	buf[0] = '\0';
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char line[1024], txt[XTCAM_RULE_TEXT_MAX], err[XTCAM_ERR_MAX];

		snprintf(line, sizeof(line), "%.*s", (int)l, p);
		if (!strncmp(line, "rule add ", 9)) {
			char *rest = strchr(line + 9, ' ');
			struct xtcam_rule r;

			cr_assert(rest);
			*rest++ = '\0';
			cr_assert_eq(xtcam_rule_parse_line(rest, &r, NULL, err, sizeof(err)), 0,
				     "%s: %s", rest, err);
			cr_assert_gt(xtcam_rule_format(&r, NULL, txt, sizeof(txt)), 0);
			snprintf(buf + strlen(buf), len - strlen(buf), "rule add %s %s\n",
				 line + 9, txt);
		} else {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s\n", line);
		}
		p += l + (nl ? 1 : 0);
	}
}

static void expect(const char *text, const char *want_text)
{
	struct res r = imp(text, false);
	char got[8192], want[8192];

	canon(want_text, want, sizeof(want));

	cr_assert_eq(r.rc, 0, "import: %d: %s", r.rc, r.msgs ? r.msgs : "");
	cr_assert(r.out);
	rules_of(r.out, got, sizeof(got));
	cr_assert_str_eq(got, want, "for\n%s", text);
	restores(r.out);
	res_free(&r);
}

Test(import_tc, auto_prio_as_the_kernel)
{
	cr_assert_eq(xtcam_tc_auto_prio(0), 49152);
	cr_assert_eq(xtcam_tc_auto_prio(49152), 49151);
	cr_assert_eq(xtcam_tc_auto_prio(10), 9);
	cr_assert_eq(xtcam_tc_auto_prio(1), 0);
}

/* three lines without pref: 49152, 49151, 49150: the later line is tried
 * first; a pref given lower makes the next automatic one lower still */
Test(import_tc, lines_without_pref_later_wins)
{
	expect("tc qdisc add dev eth0 clsact\n"
	       "tc filter add dev eth0 ingress protocol ip flower ip_proto tcp action drop\n"
	       "tc filter add dev eth0 ingress protocol ip flower ip_proto udp action drop\n"
	       "tc filter add dev eth0 ingress protocol ip flower action pass\n"
	       "tc filter add dev eth0 ingress pref 100 protocol ipv6 flower action drop\n"
	       "tc filter add dev eth0 ingress protocol all flower action pass\n",
	       "block add eth0 capacity 65536 default pass\n"
	       "rule add eth0 prio 99 handle 1 protocol all action pass\n"
	       "rule add eth0 prio 100 handle 2 protocol ipv6 action drop\n"
	       "rule add eth0 prio 49150 handle 3 protocol ip action pass\n"
	       "rule add eth0 prio 49151 handle 4 protocol ip ip_proto udp action drop\n"
	       "rule add eth0 prio 49152 handle 5 protocol ip ip_proto tcp action drop\n"
	       "bind eth0 dev eth0 mode auto\n");
}

/* Automatic prios are per block: a second device starts at 49152 again. */
Test(import_tc, auto_prio_per_block)
{
	expect("filter add dev a ingress protocol ip flower action drop\n"
	       "filter add dev b ingress protocol ip flower action drop\n"
	       "filter add dev a ingress protocol ip flower action pass\n",
	       "block add a capacity 65536 default pass\n"
	       "rule add a prio 49151 handle 1 protocol ip action pass\n"
	       "rule add a prio 49152 handle 2 protocol ip action drop\n"
	       "block add b capacity 65536 default pass\n"
	       "rule add b prio 49152 handle 1 protocol ip action drop\n"
	       "bind a dev a mode auto\n"
	       "bind b dev b mode auto\n");
}

/* Lines sharing a pref: cls_flower tries each mask in the order it was
 * first added; line 3 has line 1's mask, so it comes before line 2. */
Test(import_tc, shared_pref_mask_order)
{
	expect("tc filter add dev e ingress pref 5 protocol ip flower ip_proto udp action drop\n"
	       "tc filter add dev e ingress pref 5 protocol ip flower dst_ip 10.0.0.1 action pass\n"
	       "tc filter add dev e ingress pref 5 protocol ip flower ip_proto tcp action drop\n",
	       "block add e capacity 65536 default pass\n"
	       "rule add e prio 5 handle 1 protocol ip ip_proto udp action drop\n"
	       "rule add e prio 5 handle 2 protocol ip ip_proto tcp action drop\n"
	       "rule add e prio 5 handle 3 protocol ip dst_ip 10.0.0.1 action pass\n"
	       "bind e dev e mode auto\n");
}

/* Port ranges of one mask: fl_lookup_range() walks the filters in the
 * order added and looks the frame up with the first ranges that hold its
 * ports, so line 3 (line 1's ranges) is tried before line 2. */
Test(import_tc, shared_pref_range_order)
{
	expect("tc filter add dev e ingress pref 7 protocol ip flower ip_proto udp "
	       "src_ip 1.1.1.1 dst_port 1-100 action drop\n"
	       "tc filter add dev e ingress pref 7 protocol ip flower ip_proto udp "
	       "src_ip 2.2.2.2 dst_port 50-200 action pass\n"
	       "tc filter add dev e ingress pref 7 protocol ip flower ip_proto udp "
	       "src_ip 2.2.2.2 dst_port 1-100 action drop\n",
	       "block add e capacity 65536 default pass\n"
	       "rule add e prio 7 handle 1 protocol ip ip_proto udp src_ip 1.1.1.1 "
	       "dst_port 1-100 action drop\n"
	       "rule add e prio 7 handle 2 protocol ip ip_proto udp src_ip 2.2.2.2 "
	       "dst_port 1-100 action drop\n"
	       "rule add e prio 7 handle 3 protocol ip ip_proto udp src_ip 2.2.2.2 "
	       "dst_port 50-200 action pass\n"
	       "bind e dev e mode auto\n");
}

/* tc's handles stay when they are unique in the block and follow the
 * order; pref and handle in base 0 (010 is 8, as tc reads it) */
Test(import_tc, handles_kept_numbers_base0)
{
	expect("tc filter add dev e ingress pref 010 handle 0x10 protocol ip flower "
	       "ip_proto tcp action drop\n"
	       "tc filter add dev e ingress prio 0x20 handle 7 protocol ip flower "
	       "ip_proto udp action pass\n",
	       "block add e capacity 65536 default pass\n"
	       "rule add e prio 8 handle 16 protocol ip ip_proto tcp action drop\n"
	       "rule add e prio 32 handle 7 protocol ip ip_proto udp action pass\n"
	       "bind e dev e mode auto\n");
}

Test(import_tc, shared_block_and_skip_hw)
{
	expect("tc qdisc add dev eth1 ingress_block 22 clsact\n"
	       "tc qdisc add dev eth2 ingress_block 22 clsact\n"
	       "tc filter add block 22 protocol all flower skip_hw dst_mac "
	       "01:00:5e:00:00:00/25 action gact drop\n"
	       "tc filter add dev eth2 ingress protocol ip flower src_ip 10.0.0.0/8 "
	       "action mirred egress redirect dev eth3\n"
	       "tc qdisc add dev eth0.100 handle ffff: ingress\n"
	       "tc filter add dev eth0.100 parent ffff: protocol ip flower action drop\n",
	       "block add block_22 capacity 65536 default pass\n"
	       "rule add block_22 prio 49151 handle 1 protocol ip src_ip 10.0.0.0/8 "
	       "action redirect dev eth3\n"
	       "rule add block_22 prio 49152 handle 2 dst_mac 01:00:5e:00:00:00/25 "
	       "protocol all action drop\n"
	       "block add eth0_100 capacity 65536 default pass\n"
	       "rule add eth0_100 prio 49152 handle 1 protocol ip action drop\n"
	       "bind block_22 dev eth1 mode native\n"
	       "bind block_22 dev eth2 mode native\n"
	       "bind eth0_100 dev eth0.100 mode auto\n");
}

Test(import_tc, skip_sw_makes_a_hw_binding)
{
	expect("tc qdisc add dev nsim0 clsact\n"
	       "tc filter add dev nsim0 ingress protocol ip flower skip_sw ip_proto tcp "
	       "action drop\n",
	       "block add nsim0 capacity 65536 default pass\n"
	       "rule add nsim0 prio 49152 handle 1 protocol ip ip_proto tcp action drop\n"
	       "bind nsim0 dev nsim0 mode hw\n");
}

/* A block runs its rules in one place: skip_hw and skip_sw rules in one
 * block are refused, whichever comes first, naming the other's line. */
Test(import_tc, skip_hw_and_skip_sw_in_one_block)
{
	static const char *const flags[][2] = { { "skip_hw", "skip_sw" },
						{ "skip_sw", "skip_hw" } };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		char text[512], why[64];
		struct res r;

		snprintf(text, sizeof(text),
			 "tc qdisc add dev nsim0 clsact\n"
			 "tc filter add dev nsim0 ingress pref 1 protocol ip flower %s ip_proto tcp "
			 "action drop\n"
			 "tc filter add dev nsim0 ingress pref 2 protocol ip flower %s ip_proto udp "
			 "action drop\n", flags[i][0], flags[i][1]);
		snprintf(why, sizeof(why), "t.tc:3: %s: block nsim0 has a %s rule (line 2)",
			 flags[i][1], flags[i][0]);
		r = imp(text, false);
		cr_assert_lt(r.rc, 0, "%s", text);
		cr_assert_null(r.out);
		cr_assert(r.msgs && strstr(r.msgs, why), "%s: %s", why, r.msgs);
		res_free(&r);
	}
}

/* A line ending in a backslash goes on in the next (tc -batch's
 * getcmdline(), the shell), as the kernel's selftests write their lines;
 * a refusal names the first line of it. */
Test(import_tc, backslash_continues_a_line)
{
	struct res r;

	expect("tc filter add dev e ingress protocol ip pref 1 handle 101 flower \\\n"
	       "\t\tskip_hw dst_ip 192.0.2.2 action drop\n"
	       "tc filter add dev e ingress protocol ip pref 2 handle 102 \\\n"
	       "   flower \\\n"
	       "   src_ip 192.0.2.1 action drop\n"
	       "# a comment \\\n"
	       "tc filter add dev e ingress protocol ip pref 3 flower action pass\n",
	       "block add e capacity 65536 default pass\n"
	       "rule add e prio 1 handle 101 protocol ip dst_ip 192.0.2.2 action drop\n"
	       "rule add e prio 2 handle 102 protocol ip src_ip 192.0.2.1 action drop\n"
	       "rule add e prio 3 handle 1 protocol ip action pass\n"
	       "bind e dev e mode native\n");
	r = imp("tc qdisc add dev e clsact\n"
		"tc filter add dev e ingress pref 1 \\\n"
		"  protocol ip flower \\\n"
		"  dst_porr 5 action drop\n"
		"tc filter add dev e ingress pref 2 protocol ip flower action porr\n", false);
	cr_assert_lt(r.rc, 0);
	cr_assert(r.msgs && strstr(r.msgs, "t.tc:2: unknown keyword \"dst_porr\"") &&
		  strstr(r.msgs, "t.tc:5: action: unknown action"), "%s", r.msgs);
	res_free(&r);
}

/* Ethertypes as tc prints them: iproute2's names, "[N]" for the rest */
Test(import_tc, tc_ethertype_names)
{
	expect("filter add dev e ingress pref 1 protocol [35020] flower action drop\n"
	       "filter add dev e ingress pref 2 protocol teb flower action drop\n"
	       "filter add dev e ingress pref 3 protocol 802.1Q flower vlan_ethtype ipx "
	       "action drop\n"
	       "filter add dev e ingress pref 4 protocol LLDP flower action drop\n",
	       "block add e capacity 65536 default pass\n"
	       "rule add e prio 1 handle 1 protocol 0x88cc action drop\n"
	       "rule add e prio 2 handle 2 protocol 0x6558 action drop\n"
	       "rule add e prio 3 handle 3 protocol 802.1Q vlan_ethtype 0x8137 action drop\n"
	       "rule add e prio 4 handle 4 protocol 0x88cc action drop\n"
	       "bind e dev e mode auto\n");
}

/* Without an action a flower match ends classification with TC_ACT_OK */
Test(import_tc, no_action_is_pass)
{
	expect("tc filter add dev e ingress pref 1 protocol ip flower ip_proto tcp\n",
	       "block add e capacity 65536 default pass\n"
	       "rule add e prio 1 handle 1 protocol ip ip_proto tcp action pass\n"
	       "bind e dev e mode auto\n");
}

/* Every refused line is named, with its reason; nothing is printed. */
Test(import_tc, refused_lines_named_nothing_printed)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "tc filter add dev e ingress protocol ip flower action mirred egress mirror dev x",
		  "XDP cannot clone" },
		{ "tc filter add dev e ingress protocol ip flower action continue",
		  "action continue" },
		{ "tc filter add dev e ingress protocol ip flower action goto chain 1",
		  "no filter chains" },
		{ "tc filter add dev e ingress protocol ip flower action reclassify",
		  "action reclassify: a tc action xtcam does not have (xtcam classifies a frame once)" },
		{ "tc filter add dev e ingress protocol ip flower action police rate 1mbit burst 10k",
		  "no policer" },
		{ "tc filter add dev e ingress protocol ip flower action skbedit mark 1",
		  "action skbedit: a tc action xtcam does not have (XDP has no skb to edit)" },
		{ "tc filter add dev e ingress protocol ip flower action vlan pop", "VLAN" },
		{ "tc filter add dev e ingress protocol ip flower action tunnel_key unset",
		  "action tunnel_key: a tc action xtcam does not have (xtcam does not encapsulate" },
		{ "tc filter add dev e ingress protocol ip flower action mirred ingress redirect dev x",
		  "mirred ingress" },
		{ "tc filter add dev e ingress protocol ip flower action drop action pass",
		  "action: given twice" },
		{ "tc filter add dev e egress protocol ip flower action drop", "ingress filters only" },
		{ "tc filter add dev e ingress protocol ip u32 match u32 0 0 action drop",
		  "\"u32\"" },
		{ "tc filter add dev e ingress chain 3 protocol ip flower action drop",
		  "chain 3" },
		{ "tc filter add dev e ingress pref 70000 protocol ip flower action drop",
		  "pref \"70000\"" },
		{ "tc filter add dev e ingress pref 08 protocol ip flower action drop",
		  "pref \"08\"" },
		{ "tc filter add dev e protocol ip flower action drop", "root qdisc" },
		{ "tc qdisc add dev e root fq_codel", "no qdiscs" },
		{ "tc filter del dev e ingress pref 1", "only tc filter add" },
		{ "ip link set dev e up", "not a tc qdisc or filter line" },
		{ "tc filter add dev e ingress protocol ip flower skip_sw skip_hw action drop",
		  "skip_hw: conflicts with skip_sw" },
		{ "tc filter add block 4 protocol ip flower skip_sw action drop",
		  "bound to no device" },
		{ "tc filter add dev e ingress protocol ip flower dst_porr 5 action drop",
		  "unknown keyword \"dst_porr\" (did you mean \"dst_port\"?)" },
		{ "tc filter add dev e ingress protocol ip flower classid 1:1 action drop",
		  "classid: a tc-flower keyword xtcam does not support (a qdisc class; XDP has no classes)" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char text[1024], want[64];
		struct res r;

		snprintf(text, sizeof(text),
			 "tc qdisc add dev e clsact\n"
			 "tc filter add dev e ingress pref 1 protocol ip flower action drop\n"
			 "%s\n"
			 "tc filter add dev e ingress pref 9 protocol ip flower action pass\n",
			 bad[i].line);
		r = imp(text, false);
		cr_assert_lt(r.rc, 0, "%s: imported", bad[i].line);
		cr_assert_null(r.out, "%s: printed %s", bad[i].line, r.out);
		cr_assert(r.msgs, "%s: no message", bad[i].line);
		snprintf(want, sizeof(want), "t.tc:3: ");
		cr_assert(strstr(r.msgs, want), "%s: line not named: %s", bad[i].line, r.msgs);
		cr_assert(strstr(r.msgs, bad[i].why), "%s: %s not in %s", bad[i].line,
			  bad[i].why, r.msgs);
		cr_assert(!strstr(r.msgs, "t.tc:2:") && !strstr(r.msgs, "t.tc:4:"),
			  "%s: a good line named: %s", bad[i].line, r.msgs);
		cr_assert(strstr(r.msgs, "nothing printed"), "%s", r.msgs);
		res_free(&r);

		/* --force: the other lines */
		r = imp(text, true);
		cr_assert_eq(r.rc, 0, "%s: --force: %d", bad[i].line, r.rc);
		cr_assert(r.out && strstr(r.out, "rule add e prio 1 ") &&
			  strstr(r.out, "rule add e prio 9 "), "%s: --force: %s", bad[i].line,
			  r.out);
		restores(r.out);
		res_free(&r);
	}
}

/* What tc itself refuses in one flower instance */
Test(import_tc, tc_refusals_at_one_pref)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "tc filter add dev e ingress pref 1 protocol ipv6 flower action drop",
		  "another protocol (line 2)" },
		{ "tc filter add dev e ingress pref 1 handle 1 protocol ip flower ip_proto tcp "
		  "action drop", "handle 0x1: in use at pref 1" },
		{ "tc filter add dev e ingress pref 1 protocol ip flower ip_proto udp action pass",
		  "the same match as line 2" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char text[512];
		struct res r;

		snprintf(text, sizeof(text),
			 "tc qdisc add dev e clsact\n"
			 "tc filter add dev e ingress pref 1 protocol ip flower ip_proto udp "
			 "action drop\n%s\n", bad[i].line);
		r = imp(text, false);
		cr_assert_lt(r.rc, 0, "%s", bad[i].line);
		cr_assert(r.msgs && strstr(r.msgs, "t.tc:3: ") && strstr(r.msgs, bad[i].why),
			  "%s: %s", bad[i].line, r.msgs);
		res_free(&r);
	}
}

/* The JSON of tc -j filter show dev veth0 ingress, written by hand after
 * iproute2's print functions (tests/data/tc-filter-show.json) */
Test(import_tc, json_filter_show)
{
	struct xtcam_import_opts o = { .name = "j", .dev = "veth0" };
	char *in = NULL, *out = NULL, *msgs = NULL, got[4096], want[4096];
	size_t len = 0;
	FILE *f = fopen("tests/data/tc-filter-show.json", "r");

	cr_assert(f, "tests/data/tc-filter-show.json: run from the source tree");
	cr_assert_eq(getdelim(&in, &len, '\0', f) > 0, 1);
	fclose(f);
	cr_assert_eq(xtcam_import_tc(in, strlen(in), &o, &out, &msgs), 0, "%s", msgs);
	rules_of(out, got, sizeof(got));
	canon("block add veth0 capacity 65536 default pass\n"
			 "rule add veth0 prio 10 handle 1 protocol ip ip_proto tcp "
			 "dst_ip 192.0.2.0/24 dst_port 22 action drop\n"
			 "rule add veth0 prio 10 handle 2 protocol ip ip_proto udp "
			 "src_ip 10.0.0.0/8 dst_port 1000-2000 action redirect dev veth1\n"
			 "rule add veth0 prio 20 handle 3 protocol ip ip_proto icmp "
			 "ip_tos 0xb8/0xfc ip_flags nofrag type 8 action pass\n"
			 "rule add veth0 prio 30 handle 4 protocol ip ip_proto tcp "
			 "dst_port 80-95 tcp_flags 0x2/0x12 action drop\n"
			 "bind veth0 dev veth0 mode native\n", want, sizeof(want));
	cr_assert_str_eq(got, want);
	restores(out);
	free(out);
	free(msgs);

	/* without dev: every filter named, nothing printed */
	o.dev = NULL;
	cr_assert_lt(xtcam_import_tc(in, strlen(in), &o, &out, &msgs), 0);
	cr_assert_null(out);
	cr_assert(strstr(msgs, "j:filter 4 (pref 30 handle 0x1): the JSON names no device"),
		  "%s", msgs);
	free(msgs);
	free(in);
}

/* The keys of flower's other headers as tc -j prints them (iproute2's
 * print functions): mpls as an array of label stack entries, ppp_proto by
 * its PPP name, cfm as an object, spi in hex without 0x, indev beside the
 * keys. */
#define GACT_DROP "\"actions\":[{\"order\":1,\"kind\":\"gact\",\"control_action\":" \
	"{\"type\":\"drop\"},\"prob\":{\"random_type\":\"none\",\"control_action\":" \
	"{\"type\":\"pass\"},\"val\":0},\"index\":1,\"ref\":1,\"bind\":1}]"
Test(import_tc, json_flower_keys)
{
	static const char json[] =
		"[{\"protocol\":\"mpls_uc\",\"pref\":1,\"kind\":\"flower\",\"chain\":0},"
		"{\"protocol\":\"mpls_uc\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"mpls\":[{\"depth\":1,\"label\":16},"
		"{\"depth\":3,\"tc\":2,\"bos\":1,\"ttl\":9}]},\"skip_hw\":true,"
		"\"not_in_hw\":true," GACT_DROP "}},"
		"{\"protocol\":\"ppp_ses\",\"pref\":2,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"pppoe_sid\":7,\"ppp_proto\":\"lcp\"},"
		GACT_DROP "}},"
		"{\"protocol\":\"arp\",\"pref\":3,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"arp_sip\":\"10.0.0.0/8\","
		"\"arp_op\":\"1/3\",\"arp_sha\":\"00:11:22:33:44:55\"}," GACT_DROP "}},"
		"{\"protocol\":\"all\",\"pref\":4,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"cfm\":{\"mdl\":3,\"op\":1}},"
		GACT_DROP "}},"
		"{\"protocol\":\"ip\",\"pref\":5,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"indev\":\"lo\",\"keys\":{\"eth_type\":\"ipv4\","
		"\"ip_proto\":\"esp\",\"spi\":\"10203\"}," GACT_DROP "}},"
		"{\"protocol\":\"ip\",\"pref\":6,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"eth_type\":\"ipv4\","
		"\"ip_proto\":\"l2tp\",\"l2tpv3_sid\":4000000000}," GACT_DROP "}},"
		/* cls_flower shows ppp_proto ipv6 as the ethertype after the tag */
		"{\"protocol\":\"802.1Q\",\"pref\":7,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"vlan_id\":5,\"vlan_ethtype\":\"ipv6\","
		"\"pppoe_sid\":7,\"ppp_proto\":\"ipv6\"}," GACT_DROP "}},"
		/* with another ppp_proto under two tags it shows no cvlan_ethtype */
		"{\"protocol\":\"802.1ad\",\"pref\":9,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"vlan_id\":5,\"vlan_ethtype\":\"802.1Q\","
		"\"cvlan_id\":6,\"pppoe_sid\":7,\"ppp_proto\":\"lcp\"}," GACT_DROP "}},"
		"{\"protocol\":\"802.1ad\",\"pref\":10,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"vlan_ethtype\":\"802.1Q\","
		"\"cvlan_ethtype\":\"ip\",\"ppp_proto\":\"ip\"}," GACT_DROP "}},"
		/* and none under one tag without ppp_proto */
		"{\"protocol\":\"802.1Q\",\"pref\":11,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{\"vlan_id\":2,\"pppoe_sid\":7},"
		GACT_DROP "}},"
		"{\"protocol\":\"LLDP\",\"pref\":8,\"kind\":\"flower\",\"chain\":0,"
		"\"options\":{\"handle\":1,\"keys\":{}," GACT_DROP "}}]";
	struct xtcam_import_opts o = { .name = "j", .dev = "veth0" };
	char *out = NULL, *msgs = NULL, got[4096], want[4096];

	cr_assert_eq(xtcam_import_tc(json, strlen(json), &o, &out, &msgs), 0, "%s", msgs);
	rules_of(out, got, sizeof(got));
	canon("block add veth0 capacity 65536 default pass\n"
	      "rule add veth0 prio 1 handle 1 protocol mpls_uc mpls lse depth 1 label 16 "
	      "lse depth 3 tc 2 bos 1 ttl 9 action drop\n"
	      "rule add veth0 prio 2 handle 2 protocol ppp_ses pppoe_sid 7 ppp_proto 0xc021 "
	      "action drop\n"
	      "rule add veth0 prio 3 handle 3 protocol arp arp_op 1/3 arp_sip 10.0.0.0/8 "
	      "arp_sha 00:11:22:33:44:55 action drop\n"
	      "rule add veth0 prio 4 handle 4 protocol all cfm mdl 3 op 1 action drop\n"
	      "rule add veth0 prio 5 handle 5 protocol ip ip_proto esp spi 0x10203 indev lo "
	      "action drop\n"
	      "rule add veth0 prio 6 handle 6 protocol ip ip_proto l2tp l2tpv3_sid 4000000000 "
	      "action drop\n"
	      "rule add veth0 prio 7 handle 7 protocol 802.1Q vlan_id 5 vlan_ethtype ppp_ses "
	      "pppoe_sid 7 ppp_proto ipv6 action drop\n"
	      "rule add veth0 prio 8 handle 8 protocol 0x88cc action drop\n"
	      "rule add veth0 prio 9 handle 9 protocol 802.1ad vlan_id 5 vlan_ethtype 802.1Q "
	      "cvlan_id 6 cvlan_ethtype ppp_ses pppoe_sid 7 ppp_proto 0xc021 action drop\n"
	      "rule add veth0 prio 10 handle 10 protocol 802.1ad vlan_ethtype 802.1Q "
	      "cvlan_ethtype ppp_ses ppp_proto ip action drop\n"
	      "rule add veth0 prio 11 handle 11 protocol 802.1Q vlan_id 2 vlan_ethtype ppp_ses "
	      "pppoe_sid 7 action drop\n"
	      "bind veth0 dev veth0 mode native\n", want, sizeof(want));
	cr_assert_str_eq(got, want);
	restores(out);
	free(out);
	free(msgs);
}

Test(import_tc, json_refusals)
{
	struct xtcam_import_opts o = { .name = "j", .dev = "e" };
	static const struct {
		const char *json, *why;
	} bad[] = {
		{ "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"options\":{\"handle\":1,"
		  "\"keys\":{},\"actions\":[{\"order\":1,\"kind\":\"mirred\",\"mirred_action\":"
		  "\"mirror\",\"direction\":\"egress\",\"to_dev\":\"x\",\"control_action\":"
		  "{\"type\":\"pipe\"}}]}}]", "XDP cannot clone" },
		{ "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"options\":{\"handle\":1,"
		  "\"actions\":[{\"kind\":\"gact\",\"control_action\":{\"type\":\"continue\"}}]}}]",
		  "action continue" },
		{ "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"options\":{\"handle\":1,"
		  "\"actions\":[{\"kind\":\"gact\",\"control_action\":{\"type\":\"drop\"}},"
		  "{\"kind\":\"gact\",\"control_action\":{\"type\":\"pass\"}}]}}]",
		  "one action per rule" },
		{ "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"u32\",\"options\":{}}]", "\"u32\"" },
		{ "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"chain\":2,"
		  "\"options\":{}}]", "chain 2" },
		{ "[{\"protocol\":\"ip\",", "JSON" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *out = NULL, *msgs = NULL;

		cr_assert_lt(xtcam_import_tc(bad[i].json, strlen(bad[i].json), &o, &out, &msgs),
			     0, "%s", bad[i].json);
		cr_assert_null(out);
		cr_assert(msgs && strstr(msgs, bad[i].why), "%s: %s", bad[i].json, msgs);
		free(msgs);
	}
}

/* --- tc's words in the rule parser ------------------------------------------ */

static int ptc(const char *line, struct xtcam_rule *r, unsigned *tcf, char *err)
{
	struct words w;
	int rc;

	words_split(&w, line);
	rc = xtcam_rule_parse_tc(w.argc, w.argv, r, NULL, 0, tcf, err, XTCAM_ERR_MAX);
	words_free(&w);
	return rc;
}

Test(rule_tc_words, flower_form)
{
	struct xtcam_rule r, want;
	char err[XTCAM_ERR_MAX];
	unsigned tcf = 0;

	cr_assert_eq(ptc("pref 3 handle 0x1 protocol ip flower skip_hw ip_proto tcp "
			 "action gact drop", &r, &tcf, err), 0, "%s", err);
	cr_assert_eq(tcf, XTCAM_TC_FLOWER | XTCAM_TC_SKIP_HW);
	parse_ok("prio 3 handle 1 protocol ip ip_proto tcp action drop", NULL, &want);
	cr_assert(!memcmp(&r, &want, sizeof(r)), "not the same rule");

	/* no pref: prio 0, for the caller's automatic one */
	cr_assert_eq(ptc("protocol all flower action mirred egress redirect dev v1", &r, &tcf,
			 err), 0, "%s", err);
	cr_assert_eq(r.prio, 0);
	cr_assert_eq(r.action.type, XTCAM_ACT_REDIRECT);
	cr_assert_str_eq(r.action.dev, "v1");
	cr_assert_eq(tcf, XTCAM_TC_FLOWER);
}

Test(rule_tc_words, refused)
{
	static const struct {
		const char *line;
		int err;
		const char *why;
	} bad[] = {
		{ "pref 1 flower ip_proto tcp action drop", EINVAL, "needs protocol PROTO before" },
		{ "pref 1 flower protocol ip action drop", EINVAL, "needs protocol PROTO before" },
		{ "pref 1 protocol ip flower flower action drop", EINVAL, "flower: given twice" },
		{ "pref 1 protocol ip flower skip_sw skip_hw action drop", EINVAL,
		  "conflicts with skip_sw" },
		{ "pref 1 skip_hw protocol ip flower action drop", EOPNOTSUPP,
		  "without protocol PROTO flower" },
		{ "protocol ip action drop", EINVAL, "prio: required" },
		{ "pref 1 protocol ip flower action mirred egress mirror dev x", EOPNOTSUPP,
		  "cannot clone" },
		{ "pref 1 protocol ip flower action mirred egress redirect dev x pipe", EOPNOTSUPP,
		  "one action per rule" },
		{ "pref 1 protocol ip flower action gact continue", EOPNOTSUPP, "continue" },
		{ "pref 1 protocol ip flower action gact jump 2", EOPNOTSUPP, "jump" },
		{ "pref 1 protocol ip flower action gact foo", EINVAL, "unknown control action" },
		{ "pref 1 protocol ip flower action police rate 1mbit", EOPNOTSUPP, "police" },
	};
	char err[XTCAM_ERR_MAX];
	struct xtcam_rule r;
	unsigned tcf;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int rc = ptc(bad[i].line, &r, &tcf, err);

		cr_assert_eq(rc, -bad[i].err, "%s: %d (%s)", bad[i].line, rc, err);
		cr_assert(strstr(err, bad[i].why), "%s: %s", bad[i].line, err);
	}
}

/* Plain parsing (rule files, restore) takes tc's action forms but not the
 * placement flags, which only a caller that knows the block can check. */
Test(rule_tc_words, plain_parse)
{
	static const char *const bad[] = {
		"prio 1 protocol ip flower skip_hw action drop",
		"prio 1 protocol ip flower skip_sw action drop",
	};
	struct xtcam_rule r;
	char err[XTCAM_ERR_MAX];
	size_t i;

	parse_ok("prio 1 action gact pass", NULL, &r);
	cr_assert_eq(r.action.type, XTCAM_ACT_PASS);
	parse_ok("prio 1 protocol ip flower action mirred egress redirect dev eth1", NULL, &r);
	cr_assert_eq(r.action.type, XTCAM_ACT_REDIRECT);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_eq(parse(bad[i], &r, NULL, err, sizeof(err)), -EOPNOTSUPP, "%s",
			     bad[i]);
		cr_assert(strstr(err, "tc-flower filter flag"), "%s", err);
	}
}
