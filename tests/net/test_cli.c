// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The xtcam CLI as users run it, on the registry: blocks, rules, handles,
 * JSON, save/restore, bad input that must change nothing, the lock, and
 * crashes in the middle of a change.  Each test has its own state
 * (XTCAM_INSTANCE) and removes it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "xtcam/state.h"
#include "xtcam/rule.h"
#include "tcli.h"

static char inst[32];

static void setup(void)
{
	if (geteuid())
		cr_skip_test("needs root (bpffs, BPF maps)");
	snprintf(inst, sizeof(inst), "xtcam-test-%d", (int)getpid());
	setenv("XTCAM_INSTANCE", inst, 1);
	if (!getenv("XTCAM_BIN"))
		setenv("XTCAM_BIN", "build/xtcam", 1);
}

static void teardown(void)
{
	t_xtcam(NULL, "flush");
	/* what flush cannot read (the fake registry of another version) */
	t_sh(NULL, "rm -rf /sys/fs/bpf/%s /run/%s.lock", inst, inst);
	t_net_cleanup();
}

TestSuite(cli, .init = setup, .fini = teardown);

/* the whole configuration, without the date line */
static char *snapshot(void)
{
	char *save = NULL, *show = NULL, *all, *nl;
	size_t n;

	cr_assert_eq(t_xtcam(&save, "save"), 0, "%s", save);
	cr_assert_eq(t_xtcam(&show, "-j block show"), 0, "%s", show);
	nl = strchr(save, '\n');
	n = strlen(nl ? nl : save) + strlen(show) + 2;
	all = malloc(n);
	snprintf(all, n, "%s|%s", nl ? nl : save, show);
	free(save);
	free(show);
	return all;
}

Test(cli, blocks_rules_handles_json)
{
	char *o = NULL;

	XT_OK("block add edge capacity 1000 default drop");
	cr_assert_eq(t_xtcam(&o, "block add edge"), 1);
	cr_assert(strstr(o, "block edge: exists (EEXIST)"), "%s", o);
	free(o);
	XT_OK("rule add edge prio 10 eth_type ipv4 ip_proto udp dst_port 9 action drop");
	XT_OK("rule add edge prio 20 handle 7 src_ip 10.0.0.0/8 action pass");
	XT_OK("rule add edge prio 5 ip_proto tcp dst_port 1024-65535 action tx");
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	/* sorted by prio; handles 1, 7, then highest + 1 = 8 */
	cr_assert_eq(t_json_ll(o, "0.handle"), 8, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.entries"), 6, "1024-65535 takes 6 entries");
	cr_assert_eq(t_json_ll(o, "1.handle"), 1);
	cr_assert_eq(t_json_ll(o, "2.prio"), 20);
	cr_assert(strstr(o, "\"match\":{\"eth_type\":\"ipv4\",\"ip_proto\":\"udp\",\"dst_port\":\"9\"}"),
		  "match object keyed by keyword: %s", o);
	cr_assert(strstr(o, "\"packets\":0") && strstr(o, "\"bytes\":0"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule add edge prio 3 handle 7 action drop"), 1);
	cr_assert(strstr(o, "handle 7 is in use (EEXIST)"), "%s", o);
	free(o);
	XT_OK("rule replace edge handle 7 prio 2 dst_ip 192.168.0.0/16 action drop");
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0);
	cr_assert_eq(t_json_ll(o, "0.handle"), 7, "replace changed the prio: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule replace edge handle 99 prio 2 action drop"), 1);
	cr_assert(strstr(o, "no rule with handle 99 (ENOENT)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show edge"), 0);
	cr_assert_eq(t_json_ll(o, "0.capacity"), 1000);
	cr_assert_eq(t_json_ll(o, "0.rules"), 3);
	cr_assert_eq(t_json_ll(o, "0.entries"), 8);
	cr_assert(strstr(o, "\"default\":\"drop\"") && strstr(o, "\"bindings\":[]"), "%s", o);
	free(o);
	XT_OK("rule del edge handle 1");
	XT_OK("rule flush edge");
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0);
	cr_assert_str_eq(o, "[]\n");
	free(o);
	XT_OK("block del edge");
	cr_assert_eq(t_xtcam(&o, "block del edge"), 1);
	cr_assert(strstr(o, "no such block (ENOENT)"), "%s", o);
	free(o);
}

Test(cli, global_options_first_or_last_and_errors_in_json)
{
	char *o = NULL;

	XT_OK("block add b1");
	cr_assert_eq(t_xtcam(&o, "-j block show"), 0);
	cr_assert_eq(o[0], '[');
	free(o);
	cr_assert_eq(t_xtcam(&o, "block show -j"), 0);
	cr_assert_eq(o[0], '[', "options at the end too: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "bl sh -p"), 0, "unique prefixes: %s", o);
	cr_assert(strstr(o, "\n"), "pretty");
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block add b1"), 1);
	cr_assert(strstr(o, "{\"error\":\"block add: block b1: exists (EEXIST)\""), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "help"), 0);
	cr_assert(strstr(o, "OBJECT := { block"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule help"), 0);
	cr_assert(strstr(o, "ACTION := {"), "%s", o);
	free(o);
}

struct bad { const char *cmd, *want; };

Test(cli, bad_input_changes_nothing)
{
	static const struct bad bad[] = {
		{ "rule add edge prio 10 src_ip 10.0.0.0/33 action drop", "src_ip" },
		{ "rule add edge prio 10 dst_ip 2001:db8::/129 action drop", "dst_ip" },
		{ "rule add edge prio 10 ip_proto tcp dst_port 2000-1000 action drop", "dst_port" },
		{ "rule add edge prio 10 ip_proto udp dst_port 70000 action drop", "dst_port" },
		{ "rule add edge prio 10 dst_port 80 action drop", "ip_proto" },
		{ "rule add edge prio 10 dstport 80 action drop", "dstport" },
		{ "rule add edge prio 10 src_ip action drop", "src_ip" },
		{ "rule add edge prio 10 src_ip 10.0.0.1", "action" },
		{ "rule add edge src_ip 10.0.0.1 action drop", "prio" },
		{ "rule add edge prio 0 action drop", "prio" },
		{ "rule add edge prio 65536 action drop", "prio" },
		{ "rule add edge prio 1 handle 0 action drop", "handle" },
		{ "rule add edge prio 1 handle 4294967296 action drop", "handle" },
		{ "rule add edge prio 1 action explode", "action" },
		{ "rule add edge prio 1 action redirect", "redirect" },
		{ "rule add edge prio 1 action cpu", "cpu" },
		{ "rule add edge prio 1 vlan_id 4096 action drop", "vlan_id" },
		{ "rule add edge prio 1 dst_mac 00:11:22:33:44 action drop", "dst_mac" },
		{ "rule add edge prio 1 eth_type ipv6 src_ip 10.0.0.1 action drop", "src_ip" },
		{ "rule add edge prio 1 raw1 5 action drop", "raw1" },
		{ "rule add edge prio 1 handle 1 action drop", "in use" },
		{ "rule add nosuch prio 1 action drop", "no such block" },
		{ "rule del edge handle 55", "no rule with handle 55" },
		{ "rule del edge handle x", "handle" },
		{ "block add ../x", "../x" },
		{ "block add a/b", "a/b" },
		{ "block add abcdefghijabcdefghijabcdefghijabc", "abcdefghij" },
		{ "block add edge", "exists" },
		{ "block add z capacity 0", "capacity" },
		{ "block add z raw1 l5 0 2", "raw1" },
		{ "block del edge2", "no such block" },
		{ "bind edge dev nosuchdev0", "nosuchdev0" },
		{ "bind edge dev lo netns nosuchns", "nosuchns" },
		{ "bind nosuch dev lo", "no such block" },
		{ "bind edge", "dev" },
		{ "unbind edge dev lo", "not bound" },
		{ "rule load edge /nonexistent/file", "/nonexistent/file" },
		{ "bogus", "bogus" },
	};
	char *before, *after, *o;
	size_t i;

	XT_OK("block add edge capacity 100");
	XT_OK("rule add edge prio 1 handle 1 ip_proto udp dst_port 53 action drop");
	before = snapshot();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = NULL;
		cr_assert_neq(t_xtcam(&o, "%s", bad[i].cmd), 0, "accepted: xtcam %s", bad[i].cmd);
		cr_assert(strstr(o, bad[i].want), "xtcam %s: message should name \"%s\": %s",
			  bad[i].cmd, bad[i].want, o);
		cr_assert(strstr(o, "(E"), "xtcam %s: errno name missing: %s", bad[i].cmd, o);
		free(o);
		after = snapshot();
		cr_assert_str_eq(after, before, "xtcam %s changed the state", bad[i].cmd);
		free(after);
	}
	free(before);
}

/* On a machine where xtcam never made a block, commands that make none
 * (shows, save, flush, and every command on a block that does not exist)
 * answer as for an empty state and leave nothing behind in bpffs; the
 * first block add makes the registry. */
Test(cli, no_state_until_a_block_is_made)
{
	static const struct bad bad[] = {
		{ "block show nosuch", "no such block" },
		{ "block del nosuch", "no such block" },
		{ "rule add nosuch prio 1 action drop", "no such block" },
		{ "rule show nosuch", "no such block" },
		{ "rule del nosuch handle 1", "no such block" },
		{ "rule load nosuch /dev/null", "no such block" },
		{ "bind nosuch dev lo", "no such block" },
		{ "unbind nosuch dev lo", "no such block" },
		{ "counters reset nosuch", "no such block" },
	};
	char dir[PATH_MAX], *o = NULL;
	size_t i;

	snprintf(dir, sizeof(dir), "/sys/fs/bpf/%s", inst);
	cr_assert_eq(t_xtcam(&o, "-j block show"), 0, "%s", o);
	cr_assert_str_eq(o, "[]\n");
	free(o);
	o = NULL;
	cr_assert_eq(t_xtcam(&o, "block show"), 0, "%s", o);
	cr_assert_str_eq(o, "");
	free(o);
	o = NULL;
	cr_assert_eq(t_xtcam(&o, "save"), 0, "%s", o);
	cr_assert(!strstr(o, "block add"), "%s", o);
	free(o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = NULL;
		cr_assert_eq(t_xtcam(&o, "%s", bad[i].cmd), 1, "xtcam %s: %s", bad[i].cmd, o);
		cr_assert(strstr(o, bad[i].want) && strstr(o, "(ENOENT)"),
			  "xtcam %s: %s", bad[i].cmd, o);
		free(o);
	}
	cr_assert(access(dir, F_OK) && errno == ENOENT,
		  "%s exists after commands that make no block", dir);
	XT_OK("flush");
	cr_assert(access(dir, F_OK) && errno == ENOENT, "flush made %s", dir);
	XT_OK("block add edge");
	cr_assert_eq(access(dir, F_OK), 0, "block add made no registry in %s", dir);
}

Test(cli, rule_file_one_bad_line_loads_nothing, .timeout = 120)
{
	char path[64], *o = NULL, *before;
	FILE *f;
	int i;

	XT_OK("block add big");
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.rules", (int)getpid());
	f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "# ten thousand rules, one of them bad\n\n");
	for (i = 0; i < 10000; i++) {
		if (i == 5000)
			fprintf(f, "prio 10 ip_proto udp dst_port 1-0 action drop\n");
		else
			fprintf(f, "prio %d dst_ip 10.%d.%d.0/24 action drop  # rule %d\n",
				1 + i % 100, i / 256, i % 256, i);
	}
	fclose(f);
	before = snapshot();
	cr_assert_eq(t_xtcam(&o, "rule load big %s", path), 1);
	cr_assert(strstr(o, ":5003: dst_port"), "names the line: %s", o);
	cr_assert(strstr(o, "nothing loaded"), "%s", o);
	free(o);
	o = snapshot();
	cr_assert_str_eq(o, before, "a bad line loads no rule at all");
	free(o);
	free(before);
	/* fix it: check changes nothing, load loads all */
	cr_assert_eq(t_sh(NULL, "sed -i 's/dst_port 1-0/dst_port 1-10/' %s", path), 0);
	cr_assert_eq(t_xtcam(&o, "rule load big %s check", path), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show big"), 0);
	cr_assert_eq(t_json_ll(o, "0.rules"), 0, "check loads nothing");
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule load big %s", path), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show big"), 0);
	cr_assert_eq(t_json_ll(o, "0.rules"), 10000, "%s", o);
	free(o);
	/* stdin, and replace */
	cr_assert_eq(t_sh(&o, "echo 'prio 1 handle 1 ip_proto tcp action drop' | %s rule load big - replace",
			  getenv("XTCAM_BIN")), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show big"), 0);
	cr_assert_eq(t_json_ll(o, "0.rules"), 1, "replace swapped the whole set: %s", o);
	free(o);
	unlink(path);
}

Test(cli, save_restore_roundtrip)
{
	char *a, *b, *o = NULL, path[64];

	XT_OK("block add edge capacity 4096 default drop raw1 l4 8 4");
	XT_OK("block add core");
	XT_OK("rule add edge prio 10 handle 42 ip_proto tcp tcp_flags 0x02/0x12 dst_port 22 action pass");
	XT_OK("rule add edge prio 10 handle 43 vlan_id 100 vlan_prio 3 eth_type ipv6 action drop");
	XT_OK("rule add edge prio 30 raw1 0x1234/0xffff action tx");
	XT_OK("rule add core prio 1 dst_mac aa:bb:cc:00:00:00/ff:ff:ff:00:00:00 action drop");
	XT_OK("rule add core prio 2 ip_flags frag/nofirstfrag action drop");
	a = snapshot();
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.save", (int)getpid());
	cr_assert_eq(t_sh(NULL, "%s save > %s", getenv("XTCAM_BIN"), path), 0);
	XT_OK("flush");
	cr_assert_eq(t_xtcam(&o, "-j block show"), 0);
	cr_assert_str_eq(o, "[]\n", "flush removed everything");
	free(o);
	XT_OK("restore %s", path);
	b = snapshot();
	cr_assert_str_eq(b, a, "restore gives back the same configuration, handles and all:\n%s\n---\n%s", a, b);
	/* restoring over existing blocks is refused, whole */
	cr_assert_eq(t_xtcam(&o, "restore %s", path), 1);
	cr_assert(strstr(o, "exists") && strstr(o, "nothing restored"), "%s", o);
	free(o);
	free(a);
	free(b);
	unlink(path);
}

/* flower's keywords: rule show prints each as given (protocol stays
 * protocol, eth_type eth_type), and save/restore gives them back */
Test(cli, flower_keywords_show_save_restore)
{
	static const char *const lines[] = {
		"handle 1 prio 1 protocol ipv4 ip_proto udp action drop",
		"handle 2 prio 2 protocol 802.1Q vlan_id 5 vlan_ethtype ipv4 action drop",
		"handle 3 prio 3 eth_type ipv4 action pass",
		"handle 4 prio 4 protocol arp arp_op reply arp_sip 10.0.0.0/8 arp_tip 10.1.2.3 arp_sha 00:11:22:33:44:55 arp_tha 00:11:00:00:00:00/16 action drop",
		"handle 5 prio 5 protocol mpls_uc mpls lse depth 1 label 100 lse depth 2 bos 1 action drop",
		"handle 6 prio 6 protocol mpls_uc mpls_label 7 mpls_tc 3 mpls_bos 1 mpls_ttl 9 action drop",
		"handle 7 prio 7 pppoe_sid 7 ppp_proto ipv6 action drop",
		"handle 8 prio 8 ip_proto l2tp l2tpv3_sid 9 action drop",
		"handle 9 prio 9 ip_proto esp spi 0xabc action drop",
		"handle 10 prio 10 cfm mdl 3 op 1 action drop",
		"handle 11 prio 11 num_of_vlans 2 action drop",
		"handle 12 prio 12 indev lo action drop",
		"handle 13 prio 13 ip_proto ah spi 0x10 action drop",
		"handle 14 prio 14 ip_proto tcp ip_flags frag/nofirstfrag action drop",
		"handle 15 prio 15 protocol rarp arp_op request action drop",
	};
	char *a, *b, *o = NULL, path[64];
	size_t i;

	XT_OK("block add fl");
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		XT_OK("rule add fl %s", lines[i]);
	cr_assert_eq(t_xtcam(&o, "rule show fl"), 0);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		cr_expect(strstr(o, lines[i]), "rule show lacks \"%s\":\n%s", lines[i], o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show fl"), 0);
	cr_expect(strstr(o, "\"mpls\":\"lse depth 1 label 100 lse depth 2 bos 1\""), "%s", o);
	cr_expect(strstr(o, "\"protocol\":\"802.1Q\""), "%s", o);
	cr_expect(strstr(o, "\"indev\":\"lo\""), "%s", o);
	free(o);
	/* refused keywords: EOPNOTSUPP's message, nothing added */
	cr_assert_eq(t_xtcam(&o, "rule add fl prio 20 ct_state +trk action drop"), 1);
	cr_expect(strstr(o, "ct_state: a tc-flower keyword xtcam does not support"), "%s", o);
	free(o);
	a = snapshot();
	snprintf(path, sizeof(path), "/tmp/xtcam-test-fl-%d.save", (int)getpid());
	cr_assert_eq(t_sh(NULL, "%s save > %s", getenv("XTCAM_BIN"), path), 0);
	XT_OK("flush");
	XT_OK("restore %s", path);
	b = snapshot();
	cr_assert_str_eq(b, a, "restore gives back the same rules:\n%s\n---\n%s", a, b);
	free(a);
	free(b);
	unlink(path);
}

Test(cli, concurrent_invocations_are_serialised, .timeout = 120)
{
	char *o = NULL;
	int i;

	XT_OK("block add par");
	/* 20 at once, handles assigned by each: all distinct */
	cr_assert_eq(t_sh(&o, "for i in $(seq 20); do %s rule add par prio $i action drop & done; wait",
			  getenv("XTCAM_BIN")), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show par"), 0);
	cr_assert_eq(t_json_ll(o, "0.rules"), 20, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show par"), 0);
	{
		int seen[21] = { 0 };

		for (i = 0; i < 20; i++) {
			char p[16];
			long long h;

			snprintf(p, sizeof(p), "%d.handle", i);
			h = t_json_ll(o, p);
			cr_assert(h >= 1 && h <= 20 && !seen[h], "handle %lld twice or out of 1-20", h);
			seen[h] = 1;
		}
	}
	free(o);
}

Test(cli, kill9_during_rule_load, .timeout = 300)
{
	char path[64], *o = NULL;
	FILE *f;
	int round, i;

	XT_OK("block add crash capacity 200000");
	XT_OK("rule add crash prio 1 handle 1 action drop");
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.crash", (int)getpid());
	f = fopen(path, "w");
	cr_assert(f);
	for (i = 0; i < 50000; i++)
		fprintf(f, "prio 5 handle %d dst_ip 10.%d.%d.%d action pass\n", 10 + i, i >> 16,
			(i >> 8) & 255, i & 255);
	fclose(f);
	for (round = 0; round < 6; round++) {
		long long n;

		/* kill it at a different point each time */
		t_sh(NULL, "%s rule load crash %s replace & pid=$!; sleep 0.%d; "
		     "kill -9 $pid 2>/dev/null; wait $pid", getenv("XTCAM_BIN"), path, 1 + round * 3);
		cr_assert_eq(t_xtcam(&o, "-j block show crash"), 0, "the next invocation works: %s", o);
		n = t_json_ll(o, "0.rules");
		free(o);
		cr_assert(n == 1 || n == 50000, "old state (1) or new (50000), never a mix: %lld", n);
		cr_assert_eq(t_xtcam(&o, "-j rule show crash"), 0);
		cr_assert_eq(t_json_ll(o, n == 1 ? "0.handle" : "49999.handle"), n == 1 ? 1 : 50009,
			     "the rules match the count");
		free(o);
		/* back to the old set for the next round */
		cr_assert_eq(t_sh(&o, "echo 'prio 1 handle 1 action drop' | %s rule load crash - replace",
				  getenv("XTCAM_BIN")), 0, "%s", o);
		free(o);
	}
	unlink(path);
}

Test(cli, state_reached_from_inside_ip_netns_exec)
{
	char ns[32], *o = NULL;

	t_name(ns, sizeof(ns), "nx");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add seen");
	/* /sys is remounted there; xtcam must find the host's bpffs */
	cr_assert_eq(t_sh(&o, "ip netns exec %s %s -j block show", ns, getenv("XTCAM_BIN")), 0, "%s", o);
	cr_assert(strstr(o, "\"name\":\"seen\""), "same state inside ip netns exec: %s", o);
	free(o);
	/* where pid 1's root is not the host's, it must refuse, not start empty */
	cr_assert_neq(t_sh(&o, "unshare --pid --fork --mount-proc ip netns exec %s %s block show",
			   ns, getenv("XTCAM_BIN")), 0, "%s", o);
	cr_assert(strstr(o, "not visible") && strstr(o, "netns NS"), "clear refusal: %s", o);
	free(o);
}

/* A registry pinned by a build with other record layouts is named as such,
 * not read as garbage; nothing is changed in it.  Two kinds: the maps of
 * older builds (one "rules" map for both generations), and today's names
 * with other entry sizes. */
Test(cli, registry_of_another_version_is_refused)
{
	static const char *const layouts[] = { "rules bindings blocks",
					       "rules0 rules1 bindings blocks",
					       "rules bindings" /* its create cut short */ };
	static const char *const listed[] = { "bindings blocks rules ",
					      "bindings blocks rules0 rules1 ",
					      "bindings rules " };
	char *o = NULL;
	size_t i;
	int rc;

	for (i = 0; i < 3; i++) {
		/* a fake registry: those names, other entry sizes */
		cr_assert_eq(t_sh(&o, "mkdir -p /sys/fs/bpf/%s && for m in %s; do "
				  "bpftool map create /sys/fs/bpf/%s/$m type hash key 12 value 8 "
				  "entries 4 name $m || exit 1; done", inst, layouts[i], inst), 0,
			     "%s", o);
		free(o);
		rc = t_xtcam(&o, "block add edge");
		cr_assert_eq(rc, 1);
		cr_assert(strstr(o, "another version of xtcam") && strstr(o, "(EUCLEAN)") &&
			  strstr(o, inst), "%s: %s", layouts[i], o);
		free(o);
		rc = t_xtcam(&o, "-j block show");
		cr_assert_eq(rc, 1);
		cr_assert(strstr(o, "\"error\":\"registry") && strstr(o, "\"errno\":\"EUCLEAN\""),
			  "%s: %s", layouts[i], o);
		free(o);
		cr_assert_eq(t_sh(&o, "ls /sys/fs/bpf/%s | sort | tr '\\n' ' '", inst), 0);
		cr_assert_str_eq(o, listed[i], "nothing added to it");
		free(o);
		cr_assert_eq(t_sh(NULL, "rm -r /sys/fs/bpf/%s", inst), 0);
	}
}

/* A registry whose creation was cut short (no "blocks", which is pinned
 * last) holds nothing committed: the next invocation makes it anew. */
Test(cli, registry_left_half_made_is_made_again)
{
	char *o = NULL;

	cr_assert_eq(t_sh(&o, "mkdir -p /sys/fs/bpf/%s && bpftool map create "
			  "/sys/fs/bpf/%s/rules0 type hash key 4 value 4 entries 4 name rules0",
			  inst, inst), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "block add edge"), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule add edge prio 1 eth_type ipv4 action drop"), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert(strstr(o, "\"prio\":1"), "the rule is there: %s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "ls /sys/fs/bpf/%s | grep -v '^edge$' | sort | tr '\\n' ' '",
			  inst), 0);
	cr_assert_str_eq(o, "bindings blocks generation ranks rules0 rules1 ");
	free(o);
}

/* Every failing command names its object once: no "rule load: rule load:"
 * (the library and the CLI both adding the verb).  Checks that no
 * ": "-separated part of the message repeats the one before it. */
static void assert_one_prefix(const char *cmd, const char *o)
{
	const char *p = o, *q;
	char prev[128] = "", cur[128];

	while ((q = strstr(p, ": "))) {
		snprintf(cur, sizeof(cur), "%.*s", (int)(q - p), p);
		cr_assert(!*prev || strcmp(prev, cur), "xtcam %s: \"%s\" twice: %s", cmd, cur, o);
		snprintf(prev, sizeof(prev), "%s", cur);
		p = q + 2;
	}
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	cr_assert(f, "%s", path);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* A rule file that cannot be read, or holds a NUL byte, loads nothing and
 * replaces nothing: a directory, a read error (EIO), a line too long for
 * memory (ENOMEM), `prio 5 action drop\0 src_ip 10.0.0.1` (the parser
 * would have read a drop-everything rule).  An empty file is an empty
 * set: replace empties the block. */
Test(cli, rule_file_read_errors_and_nul_bytes_load_nothing, .timeout = 120)
{
	static const char nul_line[] = "prio 1 handle 1 action pass\nprio 5 action drop\0 src_ip 10.0.0.1\n";
	const char *bin = getenv("XTCAM_BIN");
	char path[64], big[64], *before, *o = NULL;

	XT_OK("block add b");
	XT_OK("rule add b prio 1 handle 10 ip_proto udp action drop");
	XT_OK("rule add b prio 2 handle 8 ip_proto tcp action pass");
	before = snapshot();
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.nul", (int)getpid());
	write_file(path, nul_line, sizeof(nul_line) - 1);

	cr_assert_eq(t_xtcam(&o, "rule load b /tmp replace"), 1, "%s", o);
	cr_assert(strstr(o, "/tmp") && strstr(o, "(EISDIR)") && strstr(o, "nothing loaded"), "%s", o);
	assert_one_prefix("rule load b /tmp replace", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule load b /proc/self/mem replace"), 1, "%s", o);
	cr_assert(strstr(o, "/proc/self/mem") && strstr(o, "(EIO)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule load b %s replace", path), 1, "%s", o);
	cr_assert(strstr(o, ":2: a NUL byte") && strstr(o, "(EINVAL)"), "names the line: %s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "%s rule load b - replace < %s", bin, path), 1, "%s", o);
	cr_assert(strstr(o, "stdin:2: a NUL byte"), "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "cat %s | %s rule load b - replace", path, bin), 1, "%s", o);
	cr_assert(strstr(o, "stdin:2: a NUL byte"), "%s", o);
	free(o);
	/* ENOMEM: a 24 MB line under a 30 MB address space (not for the ASan
	 * build, whose shadow memory needs terabytes of address space) */
	if (!strstr(bin, "asan")) {
		snprintf(big, sizeof(big), "/tmp/xtcam-test-%d.big", (int)getpid());
		cr_assert_eq(t_sh(NULL, "head -c 24000000 /dev/zero | tr '\\0' a > %s", big), 0);
		cr_assert_eq(t_sh(&o, "ulimit -v 30000 && %s rule load b %s replace", bin, big), 1,
			     "%s", o);
		cr_assert(strstr(o, "(ENOMEM)") && strstr(o, "nothing loaded"), "%s", o);
		free(o);
		unlink(big);
	}
	o = snapshot();
	cr_assert_str_eq(o, before, "a file that could not be read changed the rules");
	free(o);
	free(before);
	/* empty: replace leaves no rule */
	XT_OK("rule load b /dev/null replace");
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert_eq(t_json_ll(o, "0.rules"), 0, "%s", o);
	free(o);
	unlink(path);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* `rule load B -` reads its input before it takes the lock: a writer that
 * takes its time holds up no other command. */
Test(cli, rule_load_from_a_slow_stdin_holds_no_lock, .timeout = 60)
{
	char out[64], *o = NULL;
	double t0, t;
	long long n = 0;
	int i;

	XT_OK("block add slow");
	snprintf(out, sizeof(out), "/tmp/xtcam-test-%d.out", (int)getpid());
	cr_assert_eq(t_sh(&o, "{ (sleep 8; echo 'prio 1 handle 3 action drop') | %s rule load slow -; "
			  "} > %s 2>&1 &", getenv("XTCAM_BIN"), out), 0, "%s", o);
	free(o);
	/* the load is running and waits on its input */
	usleep(1500 * 1000);
	t0 = now_s();
	cr_assert_eq(t_xtcam(&o, "-j block show slow"), 0, "%s", o);
	t = now_s() - t0;
	cr_assert_eq(t_json_ll(o, "0.rules"), 0, "%s", o);
	free(o);
	/* (before, it waited the 6.5 s until the input ended) */
	cr_assert_lt(t, 4.5, "block show waited %.1f s for a rule load reading its stdin", t);
	for (i = 0; i < 150 && n != 1; i++) {
		usleep(100 * 1000);
		cr_assert_eq(t_xtcam(&o, "-j block show slow"), 0, "%s", o);
		n = t_json_ll(o, "0.rules");
		free(o);
	}
	cr_assert_eq(n, 1, "the load finished with its rule");
	cr_assert_eq(t_sh(&o, "cat %s", out), 0);
	cr_assert_str_eq(o, "", "rule load said: %s", o);
	free(o);
	unlink(out);
}

/* prio and handle are read one way: decimal (or 0x hex) as in the rule
 * language, never tc's base 0 (012 would be handle 10), no sign. */
Test(cli, handles_are_read_as_in_rules)
{
	static const struct bad bad[] = {
		{ "rule del b handle 012", "leading zero" },
		{ "rule del b handle +8", "\"+8\"" },
		{ "rule del b handle -8", "\"-8\"" },
		{ "rule del b handle 8x", "\"8x\"" },
		{ "rule del b handle 0", "\"0\"" },
		{ "rule del b handle", "NAME handle H" },
		{ "rule del b handle 8 10", "NAME handle H" },
		{ "rule show b handle 010", "leading zero" },
		{ "rule add b prio 010 action drop", "leading zero" },
		{ "rule add b prio +3 action drop", "\"+3\"" },
		{ "rule replace b handle 010 prio 3 action drop", "leading zero" },
	};
	char *before, *o;
	size_t i;

	XT_OK("block add b");
	XT_OK("rule add b prio 1 handle 10 action drop");
	XT_OK("rule add b prio 2 handle 8 action pass");
	before = snapshot();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = NULL;
		cr_assert_eq(t_xtcam(&o, "%s", bad[i].cmd), 1, "accepted: xtcam %s: %s", bad[i].cmd, o);
		cr_assert(strstr(o, bad[i].want) && strstr(o, "(E"), "xtcam %s: %s", bad[i].cmd, o);
		free(o);
		o = snapshot();
		cr_assert_str_eq(o, before, "xtcam %s changed the rules", bad[i].cmd);
		free(o);
	}
	free(before);
	XT_OK("rule del b handle 8");
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0);
	cr_assert_eq(t_json_ll(o, "0.handle"), 10, "%s", o);
	cr_assert_eq(t_json_ll(o, "#"), 1, "handle 8 is gone: %s", o);
	free(o);
}

/* Words after what a command takes are errors that change nothing (not
 * a whole-block flush); `rule show NAME handle H` shows that rule. */
Test(cli, extra_words_are_errors_and_show_takes_a_handle)
{
	static const struct bad bad[] = {
		{ "rule flush b handle 3", "rule flush" },
		{ "rule flush b b", "rule flush" },
		{ "rule show b anything", "rule show" },
		{ "rule show b handle", "rule show" },
		{ "rule show b handle 3 extra", "rule show" },
		{ "rule show b prio 1", "rule show" },
		{ "rule list b x", "rule show" },
	};
	char *before, *o;
	size_t i;

	XT_OK("block add b");
	XT_OK("rule add b prio 1 handle 3 ip_proto udp dst_port 53 action drop");
	XT_OK("rule add b prio 2 handle 4 ip_proto tcp action pass");
	before = snapshot();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = NULL;
		cr_assert_eq(t_xtcam(&o, "%s", bad[i].cmd), 1, "accepted: xtcam %s: %s", bad[i].cmd, o);
		cr_assert(strstr(o, bad[i].want) && strstr(o, "(EINVAL)"), "xtcam %s: %s",
			  bad[i].cmd, o);
		free(o);
		o = snapshot();
		cr_assert_str_eq(o, before, "xtcam %s changed the rules", bad[i].cmd);
		free(o);
	}
	free(before);
	cr_assert_eq(t_xtcam(&o, "rule show b handle 4"), 0, "%s", o);
	cr_assert(!strncmp(o, "handle 4 prio 2 ip_proto tcp action pass\n", 41) &&
		  !strstr(o, "handle 3"), "that rule only: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show b handle 3"), 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.handle"), 3, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.prio"), 1, "%s", o);
	cr_assert_eq(t_json_ll(o, "#"), 1, "one rule: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule show b handle 5"), 1, "%s", o);
	cr_assert(strstr(o, "block b: no rule with handle 5 (ENOENT)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show b handle 5"), 1, "%s", o);
	cr_assert(strstr(o, "\"errno\":\"ENOENT\""), "%s", o);
	free(o);
	XT_OK("rule flush b");
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0);
	cr_assert_str_eq(o, "[]\n");
	free(o);
}

/* `rule load b` of path (text written first, unless NULL) fails with
 * "xtcam: rule load: block b: " and msg */
static void load_refused(const char *path, const char *text, const char *msg)
{
	char want[256], *o = NULL;

	if (text)
		write_file(path, text, strlen(text));
	snprintf(want, sizeof(want), "xtcam: rule load: block b: %s", msg);
	cr_assert_eq(t_xtcam(&o, "rule load b %s", path), 1, "%s", o);
	cr_assert(strstr(o, want), "%s", o);
	free(o);
}

/* Error messages: one prefix, names from the command line with their
 * control characters escaped. */
Test(cli, messages_one_prefix_and_names_escaped)
{
	static const char *const cmds[] = {
		"rule load b %s",               /* handle 1 given twice */
		"rule load b %s replace",
		"rule add b prio 1 handle 1 action drop",
		"rule del b handle 99",
		"rule flush nosuch",
		"rule show nosuch",
		"rule load b /nonexistent",
		"block add b",
		"block del nosuch",
		"counters reset nosuch",
		"unbind b dev lo",
		"bind b dev nosuchdev0",
	};
	char path[64], *o = NULL;
	size_t i;

	XT_OK("block add b");
	XT_OK("rule add b prio 1 handle 1 action drop");
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.twice", (int)getpid());
	write_file(path, "prio 2 handle 2 action drop\nprio 3 handle 2 action drop\n",
		   strlen("prio 2 handle 2 action drop\nprio 3 handle 2 action drop\n"));
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cr_assert_eq(t_xtcam(&o, cmds[i], path), 1, "xtcam %s: %s", cmds[i], o);
		assert_one_prefix(cmds[i], o);
		free(o);
	}
	load_refused(path, NULL, "handle 2 given twice (nothing loaded) (EEXIST)");
	/* a rule with handle 1 exists: the file's is in use */
	load_refused(path, "prio 2 handle 1 action drop\n",
		     "handle 1 is in use (nothing loaded) (EEXIST)");
	/* the handles after the highest run out: nothing loaded, with or
	 * without a handle in the file; the last one left is taken */
	XT_OK("rule add b prio 1 handle 4294967294 action drop");
	load_refused(path, "prio 2 action drop\nprio 3 action drop\n",
		     "no handle left (nothing loaded) (ERANGE)");
	load_refused(path, "prio 2 handle 9 action drop\nprio 3 action drop\nprio 4 action drop\n",
		     "no handle left (nothing loaded) (ERANGE)");
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.rules"), 2, "%s", o);
	free(o);
	write_file(path, "prio 2 action drop\n", strlen("prio 2 action drop\n"));
	XT_OK("rule load b %s", path);
	cr_assert_eq(t_xtcam(&o, "rule show b handle 4294967295"), 0, "%s", o);
	free(o);
	unlink(path);
	/* a tab, an escape sequence */
	cr_assert_eq(t_xtcam(&o, "bind b dev \"$(printf 'a\\tb\\033[2J')\""), 1, "%s", o);
	cr_assert(strstr(o, "a\\x09b\\x1b[2J") && !strchr(o, '\t') && !strchr(o, '\033'),
		  "escaped: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "unbind b dev \"$(printf 'a\\tb')\" netns \"$(printf 'n\\rs')\""),
		     1, "%s", o);
	cr_assert(strstr(o, "a\\x09b") && !strchr(o, '\t') && !strchr(o, '\r'), "escaped: %s", o);
	free(o);
	/* JSON keeps the name, escaped as JSON does */
	cr_assert_eq(t_xtcam(&o, "-j bind b dev \"$(printf 'a\\tb')\""), 1, "%s", o);
	cr_assert(strstr(o, "a\\tb") && !strchr(o, '\t'), "%s", o);
	free(o);
}

/* -v shows warnings, not libbpf's whole log (-v -v does); `--help` after
 * any command, and `help` after an object, print usage and change nothing. */
Test(cli, verbose_levels_and_help_everywhere)
{
	static const struct bad helps[] = {
		{ "rule add --help", "xtcam rule add NAME" },
		{ "rule add edge prio 1 --help", "xtcam rule add NAME" },
		{ "rule del --help", "xtcam rule del NAME" },
		{ "rule load -h", "xtcam rule load NAME" },
		{ "rule show --help", "xtcam rule show NAME" },
		{ "rule flush --help", "xtcam rule flush NAME" },
		{ "rule help", "xtcam rule add NAME" },
		{ "block add --help", "xtcam block add NAME" },
		{ "block del --help", "xtcam block del NAME" },
		{ "block --help", "xtcam block add NAME" },
		{ "block help", "xtcam block add NAME" },
		{ "bind --help", "xtcam bind NAME" },
		{ "bind help", "xtcam bind NAME" },
		{ "unbind --help", "xtcam unbind NAME" },
		{ "counters reset --help", "xtcam counters reset NAME" },
		{ "counters help", "xtcam counters reset NAME" },
		{ "save --help", "xtcam save" },
		{ "save help", "xtcam save" },
		{ "restore --help", "xtcam restore" },
		{ "flush --help", "xtcam flush" },
		{ "flush help", "xtcam flush" },
		{ "help counters", "xtcam counters reset NAME" },
		{ "help flush", "xtcam flush" },
	};
	char ns[32], *o = NULL, *before;
	size_t i;
	int lines = 0;

	/* a bind loads the parser: libbpf has much to say */
	t_name(ns, sizeof(ns), "nv");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add v1");
	cr_assert_eq(t_xtcam(&o, "-v bind v1 dev lo netns %s mode generic", ns), 0, "%s", o);
	for (char *p = o; (p = strchr(p, '\n')); p++)
		lines++;
	cr_assert(!strstr(o, "libbpf: elf:") && lines < 20, "-v: %d lines: %.2000s", lines, o);
	free(o);
	XT_OK("unbind v1 dev lo netns %s", ns);
	/* twice, at the end this time */
	cr_assert_eq(t_xtcam(&o, "bind v1 dev lo netns %s mode generic -v -v", ns), 0, "%s", o);
	cr_assert(strstr(o, "libbpf: elf:"), "-v -v: libbpf's log: %.2000s", o);
	free(o);
	XT_OK("unbind v1 dev lo netns %s", ns);
	before = snapshot();
	for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		o = NULL;
		cr_assert_eq(t_xtcam(&o, "%s", helps[i].cmd), 0, "xtcam %s: %s", helps[i].cmd, o);
		cr_assert(!strncmp(o, "Usage: xtcam ", 13) && strstr(o, helps[i].want),
			  "xtcam %s: %s", helps[i].cmd, o);
		free(o);
	}
	o = snapshot();
	cr_assert_str_eq(o, before, "help changed the state");
	free(o);
	free(before);
}

/* mode auto tries hw, native and generic: when none takes the device,
 * the error gives each one's reason in full, not cut off mid-word. */
Test(cli, bind_auto_error_is_whole, .timeout = 60)
{
	char ns[32], dev[16], peer[16], obj[PATH_MAX], *o = NULL;
	ssize_t n;

	n = readlink("/proc/self/exe", obj, sizeof(obj) - 40);
	cr_assert_gt(n, 0);
	obj[n] = 0;
	strcpy(strrchr(obj, '/'), "/progs/count_pass.bpf.o");
	t_name(ns, sizeof(ns), "nb");
	t_name(dev, sizeof(dev), "v");
	t_name(peer, sizeof(peer), "p");
	cr_assert_eq(t_netns_add(ns), 0);
	cr_assert_eq(t_sh(&o, "ip -n %s link add %s type veth peer name %s && ip -n %s link set %s up "
			  "&& ip -n %s link set %s up && ip -n %s link set dev %s xdpdrv obj %s sec xdp",
			  ns, dev, peer, ns, dev, ns, peer, ns, dev, obj), 0, "%s", o);
	free(o);
	XT_OK("block add b");
	cr_assert_eq(t_xtcam(&o, "bind b dev %s netns %s", dev, ns), 1, "%s", o);
	{
		const char *nat = strstr(o, "; native: "), *gen = strstr(o, "; generic: ");
		const char *end = strstr(o, " (EBUSY)\n");

		cr_assert(nat && gen && end && gen > nat, "every mode's reason: %s", o);
		/* native and generic refuse for the same reason, in the same words */
		cr_assert_eq(strncmp(nat + 10, gen + 11, (size_t)(gen - nat - 10)), 0,
			     "generic's reason cut: %s", o);
		cr_assert_eq(end[-1], ')', "%s", o);
		cr_assert_eq((size_t)(end - 1 - (gen + 11)), (size_t)(gen - nat - 10), "%s", o);
	}
	free(o);
}

/* `save` without its first line (the date) */
static char *saved(void)
{
	char *o = NULL, *nl, *s;

	cr_assert_eq(t_xtcam(&o, "save"), 0, "%s", o);
	nl = strchr(o, '\n');
	s = strdup(nl ? nl + 1 : "");
	free(o);
	return s;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* three blocks, each with its rules and bound to a veth in its own
 * namespace (one mode each): the configuration in bpffs is *p, *a is its
 * save */
static void three_bound(struct t_pair *p, int rules, char **a)
{
	static const char *const modes[] = { "native", "generic", "auto" };
	char tag[8], path[64];
	FILE *f;
	int i, j;

	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.rules", (int)getpid());
	for (i = 0; i < 3; i++) {
		snprintf(tag, sizeof(tag), "r%d", i);
		cr_assert_eq(t_pair_make(&p[i], tag), 0);
		XT_OK("block add b%d capacity %d", i, rules + 16);
		f = fopen(path, "w");
		cr_assert(f);
		for (j = 0; j < rules; j++)
			fprintf(f, "prio %d handle %d ip_proto udp dst_ip 10.%d.%d.%d dst_port %d "
				"action drop\n", 1 + j % 7, 1 + j, i, (j >> 8) & 255, j & 255, 1 + j);
		fclose(f);
		XT_OK("rule load b%d %s", i, path);
		XT_OK("bind b%d dev %s netns %s mode %s", i, p[i].a, p[i].ns_a, modes[i]);
	}
	unlink(path);
	*a = saved();
	cr_assert_eq(count(*a, "\nbind "), 3, "three bindings saved: %s", *a);
}

/* Any number of blocks and bindings: what restore makes is what was saved. */
Test(cli, restore_gives_back_every_binding, .timeout = 120)
{
	struct t_pair p[3];
	char *a, *b, *o = NULL, path[64];
	int i;

	three_bound(p, 3, &a);
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.save", (int)getpid());
	cr_assert_eq(t_sh(NULL, "%s save > %s", getenv("XTCAM_BIN"), path), 0);
	XT_OK("flush");
	cr_assert_eq(t_xtcam(&o, "restore %s", path), 0, "restore: %s", o);
	free(o);
	b = saved();
	cr_assert_str_eq(b, a, "save, flush, restore, save:\n%s\n---\n%s", a, b);
	cr_assert_eq(t_xtcam(&o, "-j block show"), 0, "%s", o);
	for (i = 0; i < 3; i++) {
		char k[32];

		snprintf(k, sizeof(k), "%d.bindings.#", i);
		cr_assert_eq(t_json_ll(o, k), 1, "block b%d is bound again: %s", i, o);
	}
	free(o);
	free(a);
	free(b);
	unlink(path);
}

/* A restore file's lines are read as the commands they repeat: any word
 * those refuse fails the whole file, naming its line, and changes nothing. */
#define NULTEXT "block add z\nrule add z prio 5 action drop\0 src_ip 10.0.0.1\n"
Test(cli, restore_lines_are_checked_as_their_commands, .timeout = 120)
{
	struct { const char *text; size_t len; const char *line, *want; } bad[] = {
		{ "block add z\nbind z dev %s netns %s mod native colour blue\n", 0, ":2:",
		  "colour" },
		{ "block add z\nbind z dev %s netnss %s\n", 0, ":2:", "netnss" },
		{ "block add z\nbind z dev %s netns %s dev lo\n", 0, ":2:", "twice" },
		{ "block add z\nbind z dev %s netns %s mode fast\n", 0, ":2:", "fast" },
		{ "block add z\n\nbind y dev %s netns %s\n", 0, ":3:", "block y" },
		{ "block add z\nblock add z\n", 0, ":2:", "twice" },
		{ "block add z frobnicate\n", 0, ":1:", "frobnicate" },
		{ "block add z\nrule add z prio 1 action drop extra\n", 0, ":2:", "extra" },
		{ "block add z\nblock del z\n", 0, ":2:", "del" },
		/* a NUL byte would cut the line short: a drop-everything rule */
		{ NULTEXT, sizeof(NULTEXT) - 1, ":2:", "NUL" },
	};
	struct t_pair p;
	char path[64], *o = NULL, text[256];
	size_t i;

	cr_assert_eq(t_pair_make(&p, "s"), 0);
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.restore", (int)getpid());
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len;
		FILE *f;

		if (bad[i].len) {
			len = bad[i].len;
			memcpy(text, bad[i].text, len);
		} else {
			len = (size_t)snprintf(text, sizeof(text), bad[i].text, p.a, p.ns_a);
		}
		f = fopen(path, "w");
		cr_assert(f);
		cr_assert_eq(fwrite(text, 1, len, f), len);
		fclose(f);
		cr_assert_eq(t_xtcam(&o, "restore %s", path), 1, "accepted: %.*s", (int)len, text);
		cr_assert(strstr(o, bad[i].line) && strstr(o, bad[i].want) &&
			  strstr(o, "nothing restored"), "%.*s: the message should name line %s "
			  "and \"%s\": %s", (int)len, text, bad[i].line, bad[i].want, o);
		free(o);
		cr_assert_eq(t_xtcam(&o, "-j block show"), 0, "%s", o);
		cr_assert_str_eq(o, "[]\n", "%.*s: nothing restored", (int)len, text);
		free(o);
	}
	unlink(path);
	/* a file that cannot be read is an error too */
	cr_assert_eq(t_xtcam(&o, "restore /tmp"), 1, "%s", o);
	cr_assert(strstr(o, "EISDIR"), "%s", o);
	free(o);
}

/* kill -9 at any moment of a restore: the next command finds none of it
 * or all of it, and a restore then works. */
Test(cli, kill9_during_restore_leaves_none_or_all, .timeout = 900)
{
	struct t_pair p[3];
	char *whole, *s, *o = NULL, path[64];
	struct timespec t0, t1;
	long ms;
	int round, none = 0, all = 0;

	three_bound(p, 1000, &whole);
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.save", (int)getpid());
	cr_assert_eq(t_sh(NULL, "%s save > %s", getenv("XTCAM_BIN"), path), 0);
	XT_OK("flush");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	XT_OK("restore %s", path);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	XT_OK("flush");
	srand((unsigned int)getpid());
	for (round = 0; round < 6; round++) {
		/* at random moments; once early on, once after the end */
		long at = !round ? ms / 20 : round == 5 ? ms * 3 / 2 : rand() % (ms + 1);
		long long n;

		t_sh(NULL, "%s restore %s & pid=$!; sleep %ld.%03ld; kill -9 $pid 2>/dev/null; "
		     "wait $pid", getenv("XTCAM_BIN"), path, at / 1000, at % 1000);
		cr_assert_eq(t_xtcam(&o, "-j block show"), 0, "the next command works: %s", o);
		n = t_json_ll(o, "#");
		free(o);
		cr_assert(n == 0 || n == 3, "killed after %ld of %ld ms: %lld blocks, not 0 or 3",
			  at, ms, n);
		if (n == 3) {
			s = saved();
			cr_assert_str_eq(s, whole, "killed after %ld ms: all of it", at);
			free(s);
			all++;
		} else {
			/* block show, a reader, repairs nothing; the next writer
			 * leaves no pin of the restore behind */
			XT_OK("block add probe");
			XT_OK("block del probe");
			cr_assert_neq(t_sh(&o, "ls -A /sys/fs/bpf/%s 2>/dev/null | grep -vxE "
					   "'bindings|blocks|generation|ranks|rules0|rules1'", inst), 0,
				      "killed after %ld ms: left behind: %s", at, o);
			free(o);
			if (!none++) {
				cr_assert_eq(t_xtcam(&o, "restore %s", path), 0,
					     "then a restore works: %s", o);
				free(o);
				s = saved();
				cr_assert_str_eq(s, whole, "a restore after the kill");
				free(s);
			}
		}
		XT_OK("flush");
	}
	cr_log_info("kill9_during_restore: a restore takes %ld ms; none %d, all %d of 6", ms,
		    none, all);
	free(whole);
	unlink(path);
}

/* Rule `handle` of every block, in both generations of the registry:
 * its action made one that no xtcam writes (a registry damaged or written
 * by another version). */
static void damage_rule(__u32 handle)
{
	struct xtcam_rule_key k, next;
	struct xtcam_rule r;
	char path[128];
	int g, fd, hit = 0;

	for (g = 0; g < 2; g++) {
		snprintf(path, sizeof(path), "/sys/fs/bpf/%s/rules%d", inst, g);
		fd = bpf_obj_get(path);
		cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
		for (int e = bpf_map_get_next_key(fd, NULL, &next); !e;
		     e = bpf_map_get_next_key(fd, &k, &next)) {
			k = next;
			if (k.handle != handle)
				continue;
			cr_assert_eq(bpf_map_lookup_elem(fd, &k, &r), 0);
			r.action.type = 200;
			cr_assert_eq(bpf_map_update_elem(fd, &k, &r, BPF_EXIST), 0);
			hit++;
		}
		close(fd);
	}
	cr_assert(hit, "rule %u found in the registry", handle);
}

/* save writes the whole configuration or fails: never a part with exit 0 */
Test(cli, save_is_whole_or_fails)
{
	char *o = NULL;

	XT_OK("block add s");
	XT_OK("rule add s prio 1 handle 1 action drop");
	XT_OK("rule add s prio 2 handle 2 action pass");
	XT_OK("rule add s prio 3 handle 3 action drop");
	/* stdout that cannot take it */
	cr_assert_neq(t_sh(&o, "{ %s save >/dev/full; }", getenv("XTCAM_BIN")), 0,
		      "save to a full disk: %s", o);
	cr_assert(strstr(o, "save") && strstr(o, "ENOSPC"), "%s", o);
	free(o);
	/* a rule it cannot write */
	damage_rule(2);
	cr_assert_eq(t_xtcam(&o, "save"), 1, "save left a rule out: %s", o);
	cr_assert(strstr(o, "block s") && strstr(o, "handle 2"), "names the rule: %s", o);
	cr_assert(!strstr(o, "rule add"), "and writes none of the configuration: %s", o);
	free(o);
}

/* Actions are checked when the rule comes in: a CPU the machine or the
 * cpumap does not have, a redirect device missing from a namespace that is
 * known now.  A redirect to the bound device's namespace on an unbound
 * block is checked at bind, and the bind names the rule. */
Test(cli, actions_checked_when_the_rule_comes_in)
{
	char *before, *after, *o = NULL, path[64], cmd[256], want[64], ns[32];
	int ncpu = 0, lo, hi, i;
	struct t_pair p;
	FILE *f;

	/* the CPUs the kernel may ever have, as libbpf reads them */
	f = fopen("/sys/devices/system/cpu/possible", "r");
	cr_assert(f);
	if (fscanf(f, "%d-%d", &lo, &hi) == 2)
		ncpu = hi + 1;
	else
		ncpu = 1;
	fclose(f);

	cr_assert_eq(t_pair_make(&p, "c"), 0);
	t_name(ns, sizeof(ns), "e");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add edge");
	XT_OK("rule add edge prio 1 handle 1 action drop");
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.rules", (int)getpid());
	f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "prio 5 action drop\nprio 6 action cpu 4000\nprio 7 action pass\n");
	fclose(f);
	before = snapshot();
	{
		const struct { const char *cmd, *want, *err; } bad[] = {
			{ "rule add edge prio 2 action cpu 4000",
			  "rule add: block edge: action cpu 4000: only CPU", "(EINVAL)" },
			{ "rule replace edge handle 1 prio 2 action cpu 4000",
			  "rule replace: block edge: action cpu 4000: only CPU", "(EINVAL)" },
			{ "rule add edge prio 2 action cpu 64", "action cpu 64: ", "(EINVAL)" },
			{ "rule load edge FILE", "block edge: handle 3: action cpu 4000", "(EINVAL)" },
			{ "rule load edge FILE replace", "block edge: handle 2: action cpu 4000",
			  "(EINVAL)" },
			{ "rule add edge prio 2 action redirect dev nosuch9 netns NS",
			  "rule add: block edge: action redirect dev nosuch9: no such device in netns",
			  "(ENODEV)" },
			{ "rule add edge prio 2 action redirect dev lo netns nosuchns9",
			  "action redirect netns nosuchns9", "(ENOENT)" },
		};

		for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
			const char *c = bad[i].cmd;
			char *at;

			snprintf(cmd, sizeof(cmd), "%s", c);
			if ((at = strstr(cmd, "FILE")))
				snprintf(cmd, sizeof(cmd), "%.*s%s%s", (int)(at - cmd), c, path,
					 c + (at - cmd) + 4);
			if ((at = strstr(cmd, " NS")))
				snprintf(at, sizeof(cmd) - (size_t)(at - cmd), " %s", ns);
			cr_assert_eq(t_xtcam(&o, "%s", cmd), 1, "accepted: %s: %s", cmd, o);
			cr_assert(strstr(o, bad[i].want) && strstr(o, bad[i].err), "%s: %s", cmd, o);
			free(o);
			after = snapshot();
			cr_assert_str_eq(after, before, "xtcam %s changed the state", cmd);
			free(after);
		}
	}
	free(before);
	unlink(path);
	/* every CPU the machine has (up to the cpumap's 64) is taken */
	snprintf(cmd, sizeof(cmd), "rule add edge prio 2 action cpu %d",
		 (ncpu > 64 ? 64 : ncpu) - 1);
	XT_OK("%s", cmd);
	if (ncpu < 64) {
		snprintf(want, sizeof(want), "action cpu %d: only CPU", ncpu);
		cr_assert_eq(t_xtcam(&o, "rule add edge prio 2 action cpu %d", ncpu), 1);
		cr_assert(strstr(o, want), "%s", o);
		free(o);
	}

	/* redirect to the bound device's namespace: on an unbound block the
	 * bind checks it, names the rule and binds nothing */
	XT_OK("rule add edge prio 3 handle 9 action redirect dev nosuch9");
	cr_assert_eq(t_xtcam(&o, "bind edge dev %s netns %s mode generic", p.a, p.ns_a), 1);
	snprintf(want, sizeof(want), "no such device in netns %s", p.ns_a);
	cr_assert(strstr(o, "block edge: handle 9: action redirect dev nosuch9") &&
		  strstr(o, want) && strstr(o, "(ENODEV)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show edge"), 0, "%s", o);
	cr_assert(strstr(o, "\"bindings\":[]"), "%s", o);
	free(o);
	/* its device in that namespace: bound */
	XT_OK("rule replace edge handle 9 prio 3 action redirect dev %s", p.a);
	XT_OK("bind edge dev %s netns %s mode generic", p.a, p.ns_a);
	/* bound: a redirect without netns is checked in the binding's namespace */
	cr_assert_eq(t_xtcam(&o, "rule add edge prio 4 action redirect dev nosuch9"), 1);
	cr_assert(strstr(o, "action redirect dev nosuch9") && strstr(o, want), "%s", o);
	free(o);
}

/* A block's maps are pinned in a folder named after it: a '.' would make
 * every bind fail (bpffs refuses it: EPERM), and a registry name would
 * shadow the registry, so block add refuses both and changes nothing. */
Test(cli, block_names_that_cannot_be_pinned)
{
	static const char *const bad[] = { "a.b", "edge.", "blocks", "rules", "rules0",
					   "rules1", "bindings", "generation" };
	char *o = NULL;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(t_xtcam(&o, "block add %s", bad[i]), 1, "%s: %s", bad[i], o);
		cr_assert(strstr(o, "block name") && strstr(o, bad[i]) && strstr(o, "(EINVAL)"),
			  "%s: %s", bad[i], o);
		free(o);
	}
	cr_assert_eq(t_xtcam(&o, "block show"), 0, "%s", o);
	cr_assert_str_empty(o, "no block made: %s", o);
	free(o);
}

/* save reads without the writers' lock: it answers while another process
 * holds the lock (as a writer stopped in the middle of a change does),
 * and gives the committed state; writers still wait for each other. */
Test(cli, save_answers_while_the_lock_is_held, .timeout = 60)
{
	char *o = NULL;
	int rc;

	XT_OK("block add edge");
	XT_OK("rule add edge prio 1 handle 5 eth_type ipv4 action drop");
	cr_assert_eq(t_sh(NULL, "(flock /run/%s.lock sleep 4 >/dev/null 2>&1 &) ; sleep 0.5",
			  inst), 0);
	rc = t_xtcam(&o, "-w 0 save");
	cr_assert_eq(rc, 0, "save waited for the lock: %s", o);
	cr_assert(strstr(o, "block add edge") &&
		  strstr(o, "rule add edge prio 1 handle 5 eth_type ipv4 action drop"), "%s", o);
	free(o);
	rc = t_xtcam(&o, "-w 0 rule add edge prio 2 action drop");
	cr_assert_eq(rc, 4, "a writer waits for the lock: %s", o);
	free(o);
	cr_assert_eq(t_sh(NULL, "flock /run/%s.lock true", inst), 0);
}

/* What the next command sees of `rule add|replace|del` on a bound block,
 * killed (XTCAM_CRASH_AT) at each step: the state before the change
 * up to its commit point, the state after from then on, and it works. */
static void crash_check(const char *when, int want_n, bool has3, int prio1, bool has2)
{
	char *o = NULL;

	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "%s: %s", when, o);
	cr_assert_eq(t_json_ll(o, "#"), want_n, "%s: %s", when, o);
	cr_assert_eq(strstr(o, "\"handle\":3,") != NULL, has3, "%s: %s", when, o);
	cr_assert_eq(strstr(o, "\"handle\":2,") != NULL, has2, "%s: %s", when, o);
	cr_assert(prio1 == 30 ? strstr(o, "\"handle\":1,\"prio\":30,") != NULL :
				strstr(o, "\"handle\":1,\"prio\":10,") != NULL, "%s: %s", when, o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0, "%s: %s", when, o);
	cr_assert_eq(t_json_ll(o, "0.rules"), want_n, "%s: the record agrees: %s", when, o);
	free(o);
}

Test(cli, crash_at_each_step_of_a_rule_change_recovers, .timeout = 180)
{
	static const char *const points[] = { "stage", "deliver", "flip", "commit" };
	const char *bin = getenv("XTCAM_BIN");
	char ns[32], when[64], *o = NULL;
	size_t i;
	int rc;

	t_name(ns, sizeof(ns), "cr");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add b");
	XT_OK("rule add b prio 10 handle 1 eth_type ipv4 action drop");
	XT_OK("rule add b prio 20 handle 2 eth_type ipv6 action pass");
	XT_OK("bind b dev lo netns %s mode generic", ns);
	for (i = 0; i < 4; i++) {
		bool done = i >= 2;     /* past the commit point */

		snprintf(when, sizeof(when), "add killed at %s", points[i]);
		rc = t_sh(&o, "XTCAM_CRASH_AT=%s %s rule add b prio 5 handle 3 ip_proto tcp "
			  "action drop", points[i], bin);
		cr_assert_neq(rc, 0, "%s: not killed: %s", when, o);
		free(o);
		crash_check(when, done ? 3 : 2, done, 10, true);
		if (done)
			XT_OK("rule del b handle 3");

		snprintf(when, sizeof(when), "replace killed at %s", points[i]);
		rc = t_sh(&o, "XTCAM_CRASH_AT=%s %s rule replace b handle 1 prio 30 eth_type ipv4 "
			  "action pass", points[i], bin);
		cr_assert_neq(rc, 0, "%s: not killed: %s", when, o);
		free(o);
		crash_check(when, 2, false, done ? 30 : 10, true);
		if (done)
			XT_OK("rule replace b handle 1 prio 10 eth_type ipv4 action drop");

		snprintf(when, sizeof(when), "del killed at %s", points[i]);
		rc = t_sh(&o, "XTCAM_CRASH_AT=%s %s rule del b handle 2", points[i], bin);
		cr_assert_neq(rc, 0, "%s: not killed: %s", when, o);
		free(o);
		crash_check(when, done ? 1 : 2, false, 10, !done);
		if (done)
			XT_OK("rule add b prio 20 handle 2 eth_type ipv6 action pass");
	}
	/* and the block still takes changes and lets go */
	XT_OK("rule add b prio 1 action pass");
	XT_OK("unbind b dev lo netns %s", ns);
	XT_OK("block del b");
}
