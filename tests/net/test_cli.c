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
#include <unistd.h>
#include "tnet.h"

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

#define XT_OK(...) do { char *o_ = NULL; int rc_ = t_xtcam(&o_, __VA_ARGS__); \
	cr_assert_eq(rc_, 0, "xtcam %s: exit %d: %s", #__VA_ARGS__, rc_, o_); free(o_); } while (0)

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
 * builds before 2026-12-04 (one "rules" map for both generations), and
 * today's names with other entry sizes. */
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
	cr_assert_str_eq(o, "bindings blocks rules0 rules1 ");
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
