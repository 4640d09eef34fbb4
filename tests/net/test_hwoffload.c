// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mode hw on netdevsim (BPF offload simulated by the kernel): the program
 * and maps are bound to the device, the rules replayed into its maps and
 * read back with bpftool, the device's limit refused with a message, the
 * debugfs knobs that make netdevsim refuse, auto falling back to native,
 * two ports of one device sharing one offload, unbind cleaning up.
 * netdevsim never runs the program on packets, so counters are written
 * into the device's map as the device would and read back by rule show.
 *
 * Needs a kernel with CONFIG_NETDEVSIM (the nsim vmtest guest:
 * vmtest/run.sh -k nsim); skipped elsewhere, with the reason.  Each test
 * makes its own netdevsim devices and state (XTCAM_INSTANCE) and removes
 * them, failed or not.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "tcli.h"

#define BUS "/sys/bus/netdevsim"
#define DBG "/sys/kernel/debug/netdevsim"

static char inst[32];
static int ids[4], nids;

static void setup(void)
{
	struct utsname u;

	if (geteuid())
		cr_skip_test("needs root (netdevsim, bpffs, BPF)");
	if (access(BUS "/new_device", W_OK)) {
		uname(&u);
		cr_skip_test("no netdevsim in kernel %s (CONFIG_NETDEVSIM): these run in the "
			     "nsim vmtest guest (vmtest/run.sh -k nsim)", u.release);
	}
	snprintf(inst, sizeof(inst), "xtcam-hw-%d", (int)getpid());
	setenv("XTCAM_INSTANCE", inst, 1);
	if (!getenv("XTCAM_BIN"))
		setenv("XTCAM_BIN", "build/xtcam", 1);
}

static void teardown(void)
{
	int i;

	/* knobs back on first, so that flush can detach */
	for (i = 0; i < nids; i++)
		t_sh(NULL, "{ for f in %s/netdevsim%d/bpf_bind_verifier_accept "
		     "%s/netdevsim%d/ports/*/bpf_map_accept "
		     "%s/netdevsim%d/ports/*/bpf_xdpoffload_accept; do "
		     "[ -w $f ] && echo Y > $f; done; true; }", DBG, ids[i], DBG, ids[i], DBG, ids[i]);
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -f /run/%s.lock", inst);
	for (i = 0; i < nids; i++)
		t_sh(NULL, "echo %d > " BUS "/del_device", ids[i]);
	nids = 0;
	t_net_cleanup();
}

TestSuite(hwoffload, .init = setup, .fini = teardown);

/* A netdevsim device with nports ports, up; their names in port order.
 * Returns its id. */
static int nsim_new(int nports, char names[][16])
{
	int id = 100 + (int)(getpid() % 4000) * 4 + nids, i = 0;
	char *o = NULL, *line, *save;

	cr_assert_lt(nids, 4);
	SH_OK("echo '%d %d' > " BUS "/new_device", id, nports);
	ids[nids++] = id;
	cr_assert_eq(t_sh(&o, "{ d=" BUS "/devices/netdevsim%d/net; for i in $(seq 50); do "
			  "[ $(ls $d 2>/dev/null | wc -l) -ge %d ] && break; sleep 0.1; done; "
			  "for n in $(ls $d); do echo \"$(cat /sys/class/net/$n/phys_port_name) $n\"; "
			  "done | sort -V | awk '{ print $2 }'; }", id, nports), 0, "%s", o);
	for (line = strtok_r(o, "\n", &save); line && i < nports; line = strtok_r(NULL, "\n", &save))
		snprintf(names[i++], 16, "%s", line);
	free(o);
	cr_assert_eq(i, nports, "netdevsim%d: %d ports appeared, wanted %d", id, i, nports);
	for (i = 0; i < nports; i++)
		SH_OK("ip link set dev %s up", names[i]);
	return id;
}

static char *pindir(char *buf, size_t len, const char *block, int id)
{
	snprintf(buf, len, "/sys/fs/bpf/%s/%s/hw-netdevsim_netdevsim%d", inst, block, id);
	return buf;
}

/* the nentries word of the device's hw_cfg, read with bpftool */
static int dev_nentries(const char *dir)
{
	char *o = NULL;
	int n = -1;

	/* "key: 00 00 00 00  value: 02 00 00 00 ..." (no BTF on the device) */
	if (!t_sh(&o, "bpftool map lookup pinned %s/hw_cfg key 0 0 0 0 | "
		  "sed -n 's/.*value: \\([0-9a-f][0-9a-f]\\).*/\\1/p'", dir) && o[0])
		n = (int)strtol(o, NULL, 16);
	free(o);
	return n;
}

static bool has(const char *cmd_out, const char *what)
{
	return cmd_out && strstr(cmd_out, what);
}

/* is an xtcam_hw program offloaded to dev (bpftool prog show)? */
static bool hw_prog_on(const char *dev)
{
	char *o = NULL, want[64];
	bool r;

	cr_assert_eq(t_sh(&o, "bpftool prog show"), 0, "%s", o);
	snprintf(want, sizeof(want), "offloaded_to %s ", dev);
	r = has(o, "name xtcam_hw") && has(o, want);
	free(o);
	return r;
}

Test(hwoffload, bind_replays_rules_into_the_device)
{
	char p[1][16], dir[256], *o = NULL;
	int id = nsim_new(1, p);

	XT_OK("block add b default drop");
	XT_OK("rule add b prio 10 handle 1 ip_proto udp dst_port 9 action drop");
	XT_OK("bind b dev %s mode hw", p[0]);
	pindir(dir, sizeof(dir), "b", id);

	/* attached in offload mode, program and maps bound to the device */
	cr_assert_eq(t_sh(&o, "ip link show dev %s", p[0]), 0);
	cr_assert(has(o, "xdpoffload") && has(o, "xtcam_hw"), "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "bpftool prog show pinned %s/prog", dir), 0, "%s", o);
	cr_assert(has(o, "offloaded_to ") && has(o, p[0]), "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "bpftool map show pinned %s/hw_entries", dir), 0, "%s", o);
	cr_assert(has(o, "offloaded_to") && has(o, "max_entries 2"),
		  "sized to netdevsim's limit of 2: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0, "%s", o);
	cr_assert(has(o, "\"mode\":\"hw\"") && has(o, "\"requested\":\"hw\"") &&
		  has(o, "\"offload\":\"netdevsim/netdevsim"), "%s", o);
	free(o);

	/* the rule is in the device's map: entry 0 is udp, dst_port 9 (value
	 * bytes: eth_type 00 00, ip_proto 11, tos, src_port, dst_port 00 09),
	 * with its mask (ff on ip_proto, ff ff on dst_port) */
	cr_assert_eq(dev_nentries(dir), 1);
	cr_assert_eq(t_sh(&o, "bpftool map dump pinned %s/hw_entries", dir), 0, "%s", o);
	cr_assert(has(o, "00 00 11 00 00 00 00 09") && has(o, "00 00 ff 00 00 00 ff ff"),
		  "entry 0 holds the rule: %s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "bpftool map lookup pinned %s/hw_acts key 0 0 0 0", dir), 0, "%s", o);
	cr_assert(has(o, "01 00 00 00 00 00 00 00"), "drop, counter 0: %s", o);
	free(o);

	/* add reaches the device, in priority order */
	XT_OK("rule add b prio 5 handle 2 ip_proto tcp action pass");
	cr_assert_eq(dev_nentries(dir), 2);
	cr_assert_eq(t_sh(&o, "bpftool map lookup pinned %s/hw_acts key 0 0 0 0", dir), 0, "%s", o);
	cr_assert(has(o, "02 00 00 00 01 00 00 00"), "prio 5 first: pass, its own counter 1: %s", o);
	free(o);

	/* counters: the device's (written here as the device would count),
	 * per rule, kept when a rewrite moves the rule's entry */
	SH_OK("bpftool map update pinned %s/hw_counters key 0 0 0 0 value 7 0 0 0 0 0 0 0 "
	      "0xe8 3 0 0 0 0 0 0", dir);
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 7, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "bytes"), 1000, "%s", o);
	cr_assert_eq(t_rule_field(o, 2, "packets"), 0, "%s", o);
	free(o);
	XT_OK("rule del b handle 2");
	cr_assert_eq(dev_nentries(dir), 1);
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 7, "carried across rewrites: %s", o);
	free(o);
	/* the same rule again keeps its counters; a changed one under the
	 * same handle is a new rule and starts at zero */
	XT_OK("rule replace b handle 1 prio 10 ip_proto udp dst_port 9 action drop");
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 7, "unchanged rule: %s", o);
	free(o);
	XT_OK("rule replace b handle 1 prio 1 ip_proto udp dst_port 10 action drop");
	cr_assert_eq(t_sh(&o, "bpftool map dump pinned %s/hw_entries", dir), 0, "%s", o);
	cr_assert(has(o, "00 00 11 00 00 00 00 0a"), "replaced on the device: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 0, "a changed rule starts at zero: %s", o);
	cr_assert_eq(t_rule_field(o, 1, "bytes"), 0, "%s", o);
	free(o);
	SH_OK("bpftool map update pinned %s/hw_counters key 0 0 0 0 value 7 0 0 0 0 0 0 0 "
	      "0xe8 3 0 0 0 0 0 0", dir);
	XT_OK("counters reset b");
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 0, "%s", o);
	free(o);

	/* unbind: detached, objects unpinned and gone */
	XT_OK("unbind b dev %s", p[0]);
	cr_assert_eq(t_sh(&o, "ip link show dev %s", p[0]), 0);
	cr_assert(!has(o, "xdp"), "%s", o);
	free(o);
	cr_assert_neq(access(dir, F_OK), 0, "%s is gone", dir);
	cr_assert(!hw_prog_on(p[0]), "no offloaded program left");
}

Test(hwoffload, too_many_entries_refused_auto_lands_native)
{
	char p[1][16], dir[256], *o = NULL, *before = NULL, *after = NULL;
	int id = nsim_new(1, p);

	pindir(dir, sizeof(dir), "b", id);
	XT_OK("block add b");
	XT_OK("rule add b prio 10 ip_proto udp dst_port 1000-1003 action drop");   /* 1 entry */
	XT_OK("rule add b prio 20 ip_proto udp dst_port 2000-2001 action drop");   /* 1 */
	XT_OK("rule add b prio 30 ip_proto tcp action drop");                      /* 1 */
	cr_assert_eq(t_xtcam(&before, "save"), 0);
	cr_assert_eq(t_xtcam(&o, "bind b dev %s mode hw", p[0]), 1, "%s", o);
	cr_assert(has(o, "block b: needs 3 entries, device ") && has(o, "takes 2 (E2BIG)"),
		  "%s", o);
	free(o);
	/* nothing changed */
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert(has(o, "\"bindings\":[]"), "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "ip link show dev %s", p[0]), 0);
	cr_assert(!has(o, "xdp"), "%s", o);
	free(o);
	cr_assert_neq(access(dir, F_OK), 0, "no offload objects pinned");
	cr_assert(!hw_prog_on(p[0]), "nothing loaded on the device");

	/* auto: native, and says why not hw */
	XT_OK("bind b dev %s", p[0]);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert(has(o, "\"mode\":\"native\"") && has(o, "\"requested\":\"auto\"") &&
		  has(o, "\"refused\":\"hw: block b: needs 3 entries"), "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "ip link show dev %s", p[0]), 0);
	cr_assert(has(o, "xdp") && !has(o, "xdpoffload"), "%s", o);
	free(o);
	XT_OK("unbind b dev %s", p[0]);

	/* bound hw with 2 entries: a third is refused, and nothing changes */
	XT_OK("rule del b handle 3");
	XT_OK("bind b dev %s mode hw", p[0]);
	cr_assert_eq(dev_nentries(dir), 2);
	cr_assert_eq(t_xtcam(&o, "rule add b prio 1 ip_proto icmp action drop"), 1, "%s", o);
	cr_assert(has(o, "block b: needs 3 entries, device ") && has(o, "(E2BIG)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0);
	cr_assert_eq(t_json_ll(o, "2.handle"), -1, "still 2 rules: %s", o);
	free(o);
	cr_assert_eq(dev_nentries(dir), 2);
	XT_OK("unbind b dev %s", p[0]);
	XT_OK("rule add b prio 30 handle 3 ip_proto tcp action drop");
	cr_assert_eq(t_xtcam(&after, "save"), 0);
	cr_assert_str_eq(strchr(after, '\n'), strchr(before, '\n'));
	free(before);
	free(after);
}

/* a debugfs knob at N makes hw refuse with the kernel's reason and change
 * nothing; auto then lands on native (with_auto: a native bind costs tens
 * of seconds under TCG) */
static void knob_refuses(const char *knob, const char *reason, bool with_auto)
{
	char p[1][16], dir[256], path[300], *o = NULL;
	int id = nsim_new(1, p);

	pindir(dir, sizeof(dir), "b", id);
	snprintf(path, sizeof(path), DBG "/netdevsim%d/%s", id, knob);
	cr_assert_eq(access(path, W_OK), 0, "debugfs knob %s", path);
	XT_OK("block add b");
	XT_OK("rule add b prio 1 ip_proto udp action drop");
	SH_OK("echo N > %s", path);
	cr_assert_eq(t_xtcam(&o, "bind b dev %s mode hw", p[0]), 1, "%s", o);
	cr_assert(has(o, reason), "%s: wanted \"%s\": %s", knob, reason, o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert(has(o, "\"bindings\":[]"), "%s", o);
	free(o);
	cr_assert_neq(access(dir, F_OK), 0, "no offload objects pinned");
	cr_assert_eq(t_sh(&o, "ip link show dev %s", p[0]), 0);
	cr_assert(!has(o, "xdp"), "%s", o);
	free(o);
	cr_assert(!hw_prog_on(p[0]), "nothing loaded on the device");
	if (!with_auto) {
		SH_OK("echo Y > %s", path);
		return;
	}
	XT_OK("bind b dev %s mode auto", p[0]);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert(has(o, "\"mode\":\"native\"") && has(o, "\"refused\":\"hw: ") && has(o, reason),
		  "%s", o);
	free(o);
	XT_OK("unbind b dev %s", p[0]);
	SH_OK("echo Y > %s", path);
}

Test(hwoffload, knob_bind_verifier_accept)
{
	knob_refuses("bpf_bind_verifier_accept", "the device takes no offloaded program", true);
}

Test(hwoffload, knob_map_accept)
{
	knob_refuses("ports/0/bpf_map_accept", "the device takes no offloaded map", false);
}

Test(hwoffload, knob_xdpoffload_accept)
{
	knob_refuses("ports/0/bpf_xdpoffload_accept", "XDP offload disabled in DebugFS", true);
}

Test(hwoffload, ports_of_one_device_share_other_devices_do_not)
{
	char a[2][16], c[1][16], da[256], dc[256], *o = NULL;
	int ia = nsim_new(2, a), ic = nsim_new(1, c);

	pindir(da, sizeof(da), "b", ia);
	pindir(dc, sizeof(dc), "b", ic);
	XT_OK("block add b");
	XT_OK("rule add b prio 1 ip_proto udp action drop");
	XT_OK("bind b dev %s mode hw", a[0]);
	XT_OK("bind b dev %s mode hw", a[1]);
	XT_OK("bind b dev %s mode hw", c[0]);
	/* one program for both ports of netdevsim ia, another for ic */
	cr_assert_eq(t_sh(&o, "{ ip -j link show dev %s; ip -j link show dev %s; } | "
			  "grep -o '\"prog\":{\"id\":[0-9]*' | sort -u | wc -l", a[0], a[1]), 0);
	cr_assert_eq(atoi(o), 1, "the ports share one offloaded program: %s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "bpftool prog show | grep -c 'name xtcam_hw'"), 0);
	cr_assert_eq(atoi(o), 2, "two offloads for two devices: %s", o);
	free(o);
	cr_assert_eq(access(da, F_OK), 0);
	cr_assert_eq(access(dc, F_OK), 0);
	/* a rule change reaches both devices */
	XT_OK("rule add b prio 2 ip_proto tcp action drop");
	cr_assert_eq(dev_nentries(da), 2);
	cr_assert_eq(dev_nentries(dc), 2);
	/* unbinding one port leaves the other offloaded */
	XT_OK("unbind b dev %s", a[0]);
	cr_assert_eq(t_sh(&o, "ip link show dev %s", a[0]), 0);
	cr_assert(!has(o, "xdpoffload"), "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "ip link show dev %s", a[1]), 0);
	cr_assert(has(o, "xdpoffload"), "%s", o);
	free(o);
	cr_assert_eq(access(da, F_OK), 0, "still in use by %s", a[1]);
	XT_OK("rule del b handle 2");
	cr_assert_eq(dev_nentries(da), 1);
	XT_OK("unbind b dev %s", a[1]);
	cr_assert_neq(access(da, F_OK), 0, "the last port gone: unpinned");
	cr_assert_eq(dev_nentries(dc), 1);
	XT_OK("unbind b dev %s", c[0]);
	cr_assert(!hw_prog_on(a[0]) && !hw_prog_on(c[0]), "no offloaded program left");
}

Test(hwoffload, offloaded_and_native_at_once)
{
	const char *obj = getenv("XTCAM_VMTEST_XDP_OBJ");
	char p[1][16], *o = NULL;

	if (!obj || access(obj, R_OK))
		cr_skip_test("needs vmtest's xdp-test.bpf.o (XTCAM_VMTEST_XDP_OBJ) for the native "
			     "program");
	nsim_new(1, p);
	XT_OK("block add b");
	XT_OK("rule add b prio 1 ip_proto udp action drop");
	XT_OK("bind b dev %s mode hw", p[0]);
	SH_OK("ip link set dev %s xdpdrv obj %s program xdp_pass", p[0], obj);
	cr_assert_eq(t_sh(&o, "ip link show dev %s", p[0]), 0);
	cr_assert(has(o, "xdpmulti"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert(has(o, "\"state\":\"active\""), "%s", o);
	free(o);
	XT_OK("unbind b dev %s", p[0]);
	cr_assert_eq(t_sh(&o, "ip link show dev %s", p[0]), 0);
	cr_assert(!has(o, "xdpoffload") && !has(o, "xdpmulti") && has(o, "xdp"),
		  "the native program stays, ours is gone: %s", o);
	free(o);
	SH_OK("ip link set dev %s xdpdrv off", p[0]);
}

Test(hwoffload, refusals_for_rules_the_offload_cannot_run)
{
	char p[1][16], *o = NULL;

	nsim_new(1, p);
	XT_OK("block add b");
	/* an IPv6 prefix longer than the 32 bits the compact key keeps */
	XT_OK("rule add b prio 1 src_ip 2001:db8::/64 action drop");
	cr_assert_eq(t_xtcam(&o, "bind b dev %s mode hw", p[0]), 1, "%s", o);
	cr_assert(has(o, "block b: handle 1: matches on an IPv6 address") && has(o, "(EOPNOTSUPP)"),
		  "%s", o);
	free(o);
	XT_OK("rule flush b");
	XT_OK("bind b dev %s mode hw", p[0]);
	cr_assert_eq(t_xtcam(&o, "rule add b prio 1 ip_proto udp action cpu 0"), 1, "%s", o);
	cr_assert(has(o, "offload does drop, pass and tx only, not cpu"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0);
	cr_assert(has(o, "[]"), "nothing added: %s", o);
	free(o);
	XT_OK("unbind b dev %s", p[0]);
}

/* tc's placement words on an offloaded block: skip_sw is where its rules
 * run, skip_hw cannot be (a block's rules run in one place), and indev is
 * refused because the offload program does not read it; nothing refused
 * is added. */
Test(hwoffload, tc_placement_words_and_indev)
{
	char p[1][16], *o = NULL;

	nsim_new(1, p);
	XT_OK("block add b");
	XT_OK("bind b dev %s mode hw", p[0]);
	XT_OK("rule add b pref 3 protocol ip flower skip_sw ip_proto udp action drop");
	cr_assert_eq(t_xtcam(&o, "rule add b pref 4 protocol ip flower skip_hw ip_proto tcp "
			     "action drop"), 1, "%s", o);
	cr_assert(has(o, "skip_hw: block b runs on the NIC (bound mode hw to ") &&
		  has(o, "(EOPNOTSUPP)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule add b pref 5 protocol ip flower indev lo action drop"), 1,
		     "%s", o);
	cr_assert(has(o, "indev") && has(o, "(EOPNOTSUPP)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "%s", o);
	cr_assert(has(o, "\"prio\":3") && !has(o, "\"prio\":4") && !has(o, "\"prio\":5"),
		  "%s", o);
	free(o);
	XT_OK("unbind b dev %s", p[0]);
}

Test(hwoffload, device_removed_while_bound)
{
	char p[1][16], dir[256], *o = NULL;
	int id = nsim_new(1, p);

	pindir(dir, sizeof(dir), "b", id);
	XT_OK("block add b");
	XT_OK("rule add b prio 1 ip_proto udp action drop");
	XT_OK("bind b dev %s mode hw", p[0]);
	SH_OK("echo %d > " BUS "/del_device", id);
	ids[--nids] = 0;
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0, "%s", o);
	cr_assert(has(o, "\"state\":\"gone\""), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show b"), 0, "rule show still answers: %s", o);
	free(o);
	XT_OK("unbind b dev %s", p[0]);
	cr_assert_neq(access(dir, F_OK), 0, "%s is gone", dir);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0, "%s", o);
	cr_assert(has(o, "\"bindings\":[]"), "%s", o);
	free(o);
}
