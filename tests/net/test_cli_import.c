// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `xtcam import tc` through the CLI: a tc script's output restores and
 * gives frames the verdicts tc would (automatic prefs: later lines win;
 * lines sharing a pref in cls_flower's mask order); a line it cannot carry
 * imports nothing and is named; tc -j JSON from stdin; and a tc rule
 * pasted into `rule add`.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcli.h"

static char inst[32], dir[64];

static void setup(void)
{
	t_cli_instance(inst, sizeof(inst));
	snprintf(dir, sizeof(dir), "/tmp/%s-import", inst);
	t_sh(NULL, "mkdir -p %s", dir);
}

static void teardown(void)
{
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -f /run/%s.lock", inst);
	t_sh(NULL, "rm -rf %s", dir);
	t_net_cleanup();
}

TestSuite(import_cli, .init = setup, .fini = teardown, .timeout = 300);

/* the test's tc script (dir/tc) imported with its bindings in netns ns
 * and restored: the imported file's text (the caller frees it) */
static char *import_restored(const char *ns)
{
	char *o = NULL, *cfg = NULL;

	cr_assert_eq(t_sh(&cfg, "\"$XTCAM_BIN\" import tc %s/tc netns %s > %s/cfg && cat %s/cfg",
			  dir, ns, dir, dir), 0, "%s", cfg);
	cr_assert_eq(t_xtcam(&o, "restore %s/cfg", dir), 0, "%s", o);
	free(o);
	return cfg;
}

Test(import_cli, script_restores_with_tc_verdicts)
{
	struct t_pair p;
	struct pkt_spec s;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "i"), 0);
	cr_assert_eq(t_sh(NULL, "printf '%%s\\n' '# as a tc user has it' "
			  "'tc qdisc add dev %s clsact' "
			  "'tc filter add dev %s ingress protocol ip flower ip_proto udp dst_port 9 "
			  "action drop' "
			  "'tc filter add dev %s ingress protocol ip flower ip_proto udp dst_port "
			  "9-10 action gact pass' "
			  "'tc filter add dev %s ingress pref 5 protocol ip flower ip_proto udp "
			  "dst_port 20 action drop' "
			  "'tc filter add dev %s ingress pref 5 protocol ip flower ip_proto udp "
			  "src_port 7 action pass' "
			  "'tc filter add dev %s ingress pref 5 protocol ip flower ip_proto udp "
			  "dst_port 21 action shot' > %s/tc", p.a, p.a, p.a, p.a, p.a, p.a, dir), 0);
	/* the script names the device; the test's is in a namespace */
	o = import_restored(p.ns_a);
	cr_assert(strstr(o, "# xtcam save format 2, "), "%s", o);
	cr_assert(strstr(o, "prio 49151 "), "automatic prefs: %s", o);
	free(o);

	t_frame(&p, &s, 0);
	s.sport = 1000;
	/* the second line (pref 49151) comes before the first (49152) */
	s.dport = 9;
	cr_assert_eq(through(&p, &s, 0x7101, 5), 5, "udp/9 passes: the later line wins");
	/* pref 5: the mask of dst_port 20 was added first, so dst_port 21
	 * (same mask, added after src_port 7) is tried before src_port 7 */
	s.sport = 7;
	s.dport = 21;
	cr_assert_eq(through(&p, &s, 0x7102, 5), 0, "udp 7->21 dropped, as cls_flower does");
	s.dport = 22;
	cr_assert_eq(through(&p, &s, 0x7103, 4), 4, "udp 7->22 passes");
	s.sport = 1000;
	s.dport = 20;
	cr_assert_eq(through(&p, &s, 0x7104, 3), 0, "udp/20 dropped");
	cr_assert_eq(t_xtcam(&o, "-j rule show %s", p.a), 0, "%s", o);
	cr_assert(strstr(o, "\"prio\":49151"), "%s", o);
	free(o);
}

Test(import_cli, a_bad_line_imports_nothing)
{
	char *o = NULL;

	cr_assert_eq(t_sh(NULL, "printf 'tc qdisc add dev e0 clsact\\n"
			  "tc filter add dev e0 ingress pref 1 protocol ip flower action drop\\n"
			  "tc filter add dev e0 ingress pref 2 protocol ip flower action mirred "
			  "egress mirror dev e1\\n"
			  "tc filter add dev e0 ingress pref 3 protocol ip flower action pass\\n' "
			  "> %s/tc", dir), 0);
	cr_assert_eq(t_sh(&o, "\"$XTCAM_BIN\" import tc %s/tc 2>%s/err > %s/out; echo rc=$?; "
			  "cat %s/err; echo; wc -c < %s/out", dir, dir, dir, dir, dir), 0);
	cr_assert(strstr(o, "rc=1"), "%s", o);
	cr_assert(strstr(o, "/tc:3: action mirred egress mirror: XDP cannot clone"), "%s", o);
	cr_assert(strstr(o, "nothing printed"), "%s", o);
	cr_assert(strstr(o, "\n0\n"), "stdout is empty: %s", o);
	free(o);
	/* -j: the same, as JSON */
	cr_assert_eq(t_xtcam(&o, "-j import tc %s/tc", dir), 1, "%s", o);
	cr_assert(strstr(o, "{\"config\":null,\"messages\":[\"") &&
		  strstr(o, "/tc:3: action mirred egress mirror: XDP cannot clone"), "%s", o);
	free(o);
	/* --force: the other lines */
	cr_assert_eq(t_sh(&o, "\"$XTCAM_BIN\" import tc %s/tc --force 2>/dev/null", dir), 0);
	cr_assert(strstr(o, "rule add e0 prio 1 ") && strstr(o, "rule add e0 prio 3 ") &&
		  !strstr(o, "prio 2 "), "%s", o);
	free(o);
}

/* tc -j filter show dev D ingress names no device: import says so, and
 * takes it from the command line; from stdin */
Test(import_cli, json_from_stdin)
{
	char *o = NULL;

	cr_assert_eq(t_sh(&o, "\"$XTCAM_BIN\" import tc - < tests/data/tc-filter-show.json "
			  "2>&1"), 1, "%s", o);
	cr_assert(strstr(o, "stdin:filter 1 (pref 10 handle 0x1): the JSON names no device"),
		  "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "\"$XTCAM_BIN\" import tc - dev veth0 < "
			  "tests/data/tc-filter-show.json"), 0, "%s", o);
	cr_assert(strstr(o, "rule add veth0 prio 30 handle 4 ") &&
		  strstr(o, "dst_port 80-95 tcp_flags 0x2/0x12 action drop") &&
		  strstr(o, "bind veth0 dev veth0 mode native"), "%s", o);
	free(o);
}

/* a tc rule pasted from `pref` on */
Test(import_cli, rule_add_takes_tc_words)
{
	struct t_pair p;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "r"), 0);
	XT_OK("block add edge");
	XT_OK("rule add edge pref 3 handle 0x1 protocol ip flower ip_proto udp dst_port 9 "
	      "action gact drop");
	/* no pref: one below the lowest, as tc gives it */
	XT_OK("rule add edge protocol ip flower ip_proto udp dst_port 8 action mirred egress "
	      "redirect dev %s", p.a);
	cr_assert_eq(t_xtcam(&o, "rule show edge"), 0, "%s", o);
	cr_assert(strstr(o, "handle 1 prio 3 ") && strstr(o, "handle 2 prio 2 ") &&
		  strstr(o, "action redirect dev"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule add edge ip_proto tcp flower action drop"), 1);
	cr_assert(strstr(o, "flower: needs protocol PROTO before it"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule add edge protocol ip ip_proto tcp action drop"), 1);
	cr_assert(strstr(o, "prio: required"), "without flower, xtcam's rule: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule add edge protocol ip flower action mirred egress mirror "
			     "dev %s", p.a), 1);
	cr_assert(strstr(o, "cannot clone") && strstr(o, "EOPNOTSUPP"), "%s", o);
	free(o);
	/* placement: the block runs in software here */
	cr_assert_eq(t_xtcam(&o, "rule add edge protocol ip flower skip_sw ip_proto tcp action "
			     "drop"), 1);
	cr_assert(strstr(o, "skip_sw: block edge is not offloaded"), "%s", o);
	free(o);
	XT_OK("bind edge dev %s netns %s mode native", p.a, p.ns_a);
	XT_OK("rule add edge pref 9 protocol ip flower skip_hw ip_proto tcp action drop");
	cr_assert_eq(t_xtcam(&o, "rule show edge"), 0, "%s", o);
	cr_assert(strstr(o, "prio 9 eth_type ipv4 ip_proto tcp action drop") ||
		  strstr(o, "prio 9 protocol ipv4 ip_proto tcp action drop"), "%s", o);
	free(o);
}

/* Live frames through an imported script of flower's keywords: protocol is
 * the outermost ethertype (a tagged IPv4 frame is not `protocol ip`),
 * vlan_ethtype under a tag, ARP's opcode and target address, num_of_vlans
 * of a QinQ frame; each rule's counter counts what it took. */
Test(import_cli, flower_keywords_on_live_frames)
{
	struct t_pair p;
	struct pkt_spec s;
	char *o = NULL;
	int i;

	cr_assert_eq(t_pair_make(&p, "k"), 0);
	cr_assert_eq(t_sh(NULL, "printf '%%s\\n' 'tc qdisc add dev %s clsact' "
			  "'tc filter add dev %s ingress pref 1 protocol ip flower ip_proto udp "
			  "dst_port 7 action drop' "
			  "'tc filter add dev %s ingress pref 2 protocol 802.1q flower vlan_id 100 "
			  "vlan_ethtype ip ip_proto udp dst_port 8 action drop' "
			  "'tc filter add dev %s ingress pref 3 protocol arp flower arp_op request "
			  "arp_tip 10.9.9.9 action drop' "
			  "'tc filter add dev %s ingress pref 4 protocol all flower num_of_vlans 2 "
			  "action drop' > %s/tc", p.a, p.a, p.a, p.a, p.a, dir), 0);
	free(import_restored(p.ns_a));

	t_frame(&p, &s, 0);
	s.sport = 1000;
	s.dport = 7;
	cr_assert_eq(through(&p, &s, 0x7301, 4), 0, "untagged udp/7 dropped (pref 1)");
	s.nvlan = 1;
	s.tpid[0] = 0x8100;
	s.tci[0] = 100;
	cr_assert_eq(through(&p, &s, 0x7302, 4), 4,
		     "tagged udp/7 passes: protocol ip is the outermost ethertype");
	s.dport = 8;
	cr_assert_eq(through(&p, &s, 0x7303, 4), 0, "tagged udp/8 dropped (pref 2)");
	s.nvlan = 0;
	cr_assert_eq(through(&p, &s, 0x7304, 4), 4, "untagged udp/8 passes");
	s.nvlan = 2;
	s.tpid[0] = 0x88a8;
	s.tci[0] = 100;
	s.tpid[1] = 0x8100;
	s.tci[1] = 5;
	s.dport = 7;
	cr_assert_eq(through(&p, &s, 0x7305, 3), 0, "QinQ dropped (pref 4, num_of_vlans 2)");

	t_frame(&p, &s, 0);
	s.eth_type = 0x0806;
	s.arp_op = 1;
	for (i = 0; i < 4; i++)
		s.saddr[i] = (uint8_t[]){ 10, 9, 9, 1 }[i];
	for (i = 0; i < 4; i++)
		s.daddr[i] = (uint8_t[]){ 10, 9, 9, 9 }[i];
	cr_assert_eq(through(&p, &s, 0x7306, 3), 0, "ARP request for 10.9.9.9 dropped (pref 3)");
	s.daddr[3] = 8;
	cr_assert_eq(through(&p, &s, 0x7307, 3), 3, "ARP request for 10.9.9.8 passes");
	s.arp_op = 2;
	s.daddr[3] = 9;
	cr_assert_eq(through(&p, &s, 0x7308, 3), 3, "ARP reply passes");

	cr_assert_eq(t_xtcam(&o, "-j rule show %s", p.a), 0, "%s", o);
	cr_expect_eq(t_rule_field(o, 1, "packets"), 4, "%s", o);
	cr_expect_eq(t_rule_field(o, 2, "packets"), 4, "%s", o);
	cr_expect_eq(t_rule_field(o, 3, "packets"), 3, "%s", o);
	cr_expect_eq(t_rule_field(o, 4, "packets"), 3, "%s", o);
	free(o);
}
