// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam apply (a host made equal to a save file, changing only what
 * differs) and xtcam -batch (one command a line), as users run them.  Each
 * test has its own state (XTCAM_INSTANCE), namespaces and files, and
 * removes them.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tlib.h"
#include "tcli.h"

static char inst[32], file[96], file2[96];

static void setup(void)
{
	if (geteuid())
		cr_skip_test("needs root (BPF, namespaces)");
	snprintf(inst, sizeof(inst), "xtcam-test-%d", (int)getpid());
	setenv("XTCAM_INSTANCE", inst, 1);
	if (!getenv("XTCAM_BIN"))
		setenv("XTCAM_BIN", "build/xtcam", 1);
	snprintf(file, sizeof(file), "/tmp/%s.conf", inst);
	snprintf(file2, sizeof(file2), "/tmp/%s-2.conf", inst);
}

static void teardown(void)
{
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -f /run/%s.lock %s %s", inst, file, file2);
	t_net_cleanup();
}

TestSuite(cli_apply, .init = setup, .fini = teardown, .timeout = 300);

/* what save writes, without its date line */
static char *saved(void)
{
	char *o = NULL, *nl, *s;

	cr_assert_eq(t_xtcam(&o, "save"), 0, "%s", o);
	nl = strchr(o, '\n');
	s = strdup(nl ? nl + 1 : o);
	free(o);
	return s;
}

/* apply FILE (and flags): the exit status; *out its output */
static int apply(char **out, const char *flags)
{
	return t_xtcam(out, "apply %s %s", flags, file);
}

static void same_as(const char *want, const char *when)
{
	char *now = saved();

	cr_assert_str_eq(now, want, "%s: save differs:\n%s\nwanted:\n%s", when, now, want);
	free(now);
}

static void zero_changes(void)
{
	char *o = NULL;

	cr_assert_eq(apply(&o, ""), 0, "%s", o);
	cr_assert_str_eq(o, "0 changes\n", "a second apply changes nothing: %s", o);
	free(o);
}

/* the configuration of most tests: two blocks, one bound on p->a */
static void config(const struct t_pair *p)
{
	XT_OK("block add edge capacity 1000 default pass");
	XT_OK("rule add edge prio 10 handle 1 ip_proto udp dst_port 9 action drop");
	XT_OK("rule add edge prio 20 handle 2 src_ip 10.9.0.0/16 action drop");
	XT_OK("rule add edge prio 30 handle 3 ip_proto tcp action pass");
	XT_OK("block add quiet capacity 100 default drop");
	XT_OK("rule add quiet prio 1 handle 5 ip_proto icmp action pass");
	XT_OK("bind edge dev %s netns %s mode native", p->a, p->ns_a);
	cr_assert_eq(t_sh(NULL, "%s save > %s", getenv("XTCAM_BIN"), file), 0);
}

Test(cli_apply, converges_from_five_states)
{
	struct t_pair p;
	char *want, *o = NULL, line[160];

	cr_assert_eq(t_pair_make(&p, "c"), 0);
	config(&p);
	want = saved();

	/* empty */
	XT_OK("flush");
	cr_assert_eq(apply(&o, ""), 0, "%s", o);
	cr_assert_str_eq(o, "7 changes\n", "2 blocks, 4 rules, 1 binding: %s", o);
	free(o);
	same_as(want, "from an empty state");
	/* equal */
	zero_changes();
	same_as(want, "from the same state");
	/* rules changed: one replaced, one removed, one added */
	XT_OK("rule replace edge handle 1 prio 10 ip_proto udp dst_port 10 action drop");
	XT_OK("rule del edge handle 2");
	XT_OK("rule add edge prio 40 handle 9 action drop");
	cr_assert_eq(apply(&o, "--check"), 0, "%s", o);
	cr_assert(strstr(o, "rule replace edge prio 10 handle 1 ip_proto udp dst_port 9 action drop\n"),
		  "%s", o);
	cr_assert(strstr(o, "rule add edge prio 20 handle 2 src_ip 10.9.0.0/16 action drop\n"), "%s",
		  o);
	cr_assert(strstr(o, "rule del edge handle 9\n"), "%s", o);
	cr_assert(strstr(o, "3 changes (--check: nothing changed)\n"), "%s", o);
	free(o);
	cr_assert_eq(apply(&o, ""), 0, "%s", o);
	cr_assert_str_eq(o, "3 changes\n", "%s", o);
	free(o);
	same_as(want, "from changed rules");
	zero_changes();
	/* a binding moved to another device */
	XT_OK("unbind edge dev %s netns %s", p.a, p.ns_a);
	XT_OK("bind edge dev %s netns %s mode native", p.b, p.ns_b);
	cr_assert_eq(t_xtcam(&o, "-v apply %s", file), 0, "%s", o);
	snprintf(line, sizeof(line), "unbind edge dev %s netns %s\n", p.b, p.ns_b);
	cr_assert(strstr(o, line), "-v says each change: %s", o);
	snprintf(line, sizeof(line), "bind edge dev %s netns %s mode native\n", p.a, p.ns_a);
	cr_assert(strstr(o, line), "%s", o);
	cr_assert(strstr(o, "2 changes\n"), "one unbind, one bind: %s", o);
	free(o);
	same_as(want, "from a moved binding");
	zero_changes();
	/* an extra block with a binding, and an extra binding of a block of
	 * the file: the latter goes; the block goes only with --prune */
	XT_OK("block add extra");
	XT_OK("rule add extra prio 1 action drop");
	XT_OK("bind extra dev %s netns %s mode generic", p.b, p.ns_b);
	XT_OK("unbind extra dev %s netns %s", p.b, p.ns_b);
	XT_OK("bind quiet dev %s netns %s mode generic", p.b, p.ns_b);
	cr_assert_eq(apply(&o, ""), 0, "%s", o);
	cr_assert_str_eq(o, "1 change\n", "only quiet's extra binding goes: %s", o);
	free(o);
	o = saved();
	cr_assert(strstr(o, "block add extra capacity"), "a block the file does not name stays: %s",
		  o);
	free(o);
	XT_OK("bind extra dev %s netns %s mode generic", p.b, p.ns_b);
	cr_assert_eq(apply(&o, "--prune"), 0, "%s", o);
	cr_assert_str_eq(o, "2 changes\n", "extra unbound and removed: %s", o);
	free(o);
	same_as(want, "from an extra block and binding (--prune)");
	zero_changes();
	free(want);
	t_pair_free(&p);
}

/* An apply that changes a rule keeps the program of an unchanged binding
 * (no detach, no gap) and the counters of the rules it does not change. */
Test(cli_apply, unchanged_binding_and_counters_kept)
{
	struct t_pair p;
	struct pkt_spec s;
	uint32_t id0 = 0, id1 = 0;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "k"), 0);
	config(&p);
	cr_assert_eq(t_xdp_prog_in(p.ns_a, p.a, &id0), 0, "a native program on %s", p.a);
	t_frame(&p, &s, 0);
	s.dport = 9;
	cr_assert_eq(t_through(&p, &s, 0x4b01, 7), 0, "udp/9 dropped by handle 1");
	XT_OK("rule replace edge handle 3 prio 30 ip_proto tcp action drop");
	XT_OK("rule add edge prio 50 handle 11 dst_ip 10.11.0.0/16 action drop");
	cr_assert_eq(apply(&o, ""), 0, "%s", o);
	cr_assert_str_eq(o, "2 changes\n", "%s", o);
	free(o);
	cr_assert_eq(t_xdp_prog_in(p.ns_a, p.a, &id1), 0);
	cr_assert_eq(id1, id0, "the binding's program id stays (%u, then %u)", id0, id1);
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 7, "handle 1 keeps its counter: %s", o);
	free(o);
	/* and the data path has the file's rules: udp/9 still dropped */
	cr_assert_eq(t_through(&p, &s, 0x4b02, 3), 0);
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 10, "%s", o);
	free(o);
	zero_changes();
	cr_assert_eq(t_xdp_prog_in(p.ns_a, p.a, &id1), 0);
	cr_assert_eq(id1, id0, "a second apply leaves the program (%u, then %u)", id0, id1);
	t_pair_free(&p);
}

Test(cli_apply, check_changes_nothing)
{
	struct t_pair p;
	char *before, *after, *o = NULL;

	cr_assert_eq(t_pair_make(&p, "h"), 0);
	config(&p);
	XT_OK("rule del edge handle 3");
	XT_OK("unbind edge dev %s netns %s", p.a, p.ns_a);
	XT_OK("block del quiet");
	before = saved();
	cr_assert_eq(apply(&o, "--check"), 0, "%s", o);
	cr_assert(strstr(o, "rule add edge prio 30 handle 3 ip_proto tcp action pass\n"), "%s", o);
	cr_assert(strstr(o, "block add quiet capacity 100 default drop\n"), "%s", o);
	cr_assert(strstr(o, "bind edge dev "), "%s", o);
	cr_assert(strstr(o, "4 changes (--check: nothing changed)\n"), "%s", o);
	free(o);
	after = saved();
	cr_assert_str_eq(after, before, "--check changed the state");
	free(before);
	free(after);
	t_pair_free(&p);
}

/* A binding whose device or namespace is not there (yet) is reported and
 * left out; the rest is applied; exit status 3.  --bindings-for DEV makes
 * it later and touches no rule. */
Test(cli_apply, missing_device_reported_rest_applied)
{
	struct t_pair p;
	char *o = NULL, line[200];

	cr_assert_eq(t_pair_make(&p, "m"), 0);
	cr_assert_eq(t_sh(NULL, "printf '# xtcam save format 2, x\\n"
			  "block add edge capacity 1000\\n"
			  "rule add edge prio 1 handle 1 ip_proto udp dst_port 9 action drop\\n"
			  "block add late\\n"
			  "bind edge dev %s netns %s mode native\\n"
			  "bind late dev %sx netns %s mode generic\\n"
			  "bind late dev lo netns %s-none\\n' > %s",
			  p.a, p.ns_a, p.b, p.ns_b, inst, file), 0);
	cr_assert_eq(apply(&o, ""), 3, "exit 3: bindings left out: %s", o);
	snprintf(line, sizeof(line), "apply: bind late dev %sx netns %s: device %sx does not exist",
		 p.b, p.ns_b, p.b);
	cr_assert(strstr(o, line), "names the device and the block: %s", o);
	cr_assert(strstr(o, "namespace ") && strstr(o, "-none does not exist"), "%s", o);
	cr_assert(strstr(o, "4 changes\n"), "%s", o);
	free(o);
	o = saved();
	cr_assert(strstr(o, "rule add edge prio 1 handle 1 ip_proto udp dst_port 9 action drop\n"),
		  "%s", o);
	cr_assert(strstr(o, "bind edge dev "), "the binding that could be made is: %s", o);
	cr_assert_null(strstr(o, "bind late"), "%s", o);
	free(o);
	/* the device comes: its binding, and nothing else */
	cr_assert_eq(t_sh(NULL, "ip -n %s link add %sx type veth peer name %sy && "
			  "ip -n %s link set %sx up", p.ns_b, p.b, p.b, p.ns_b, p.b), 0);
	XT_OK("rule replace edge handle 1 prio 1 action pass");
	cr_assert_eq(t_xtcam(&o, "apply --bindings-for %sx %s", p.b, file), 0, "%s", o);
	cr_assert_str_eq(o, "1 change\n", "%s", o);
	free(o);
	o = saved();
	cr_assert(strstr(o, "bind late dev "), "%s", o);
	cr_assert(strstr(o, "rule add edge prio 1 handle 1 action pass\n"),
		  "--bindings-for touches no rule: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "apply --bindings-for %sx %s", p.b, file), 0, "%s", o);
	cr_assert_str_eq(o, "0 changes\n", "%s", o);
	free(o);
	t_pair_free(&p);
}

/* A file with a bad line changes nothing and names the line. */
Test(cli_apply, bad_file_changes_nothing)
{
	struct t_pair p;
	char *before, *after, *o = NULL;

	cr_assert_eq(t_pair_make(&p, "b"), 0);
	config(&p);
	XT_OK("rule del edge handle 3");
	before = saved();
	cr_assert_eq(t_sh(NULL, "printf 'block add edge\\nrule add edge prio 1 action pass\\n"
			  "rule add edge prio 2 dst_port 99999 action drop\\n' > %s", file), 0);
	cr_assert_eq(apply(&o, ""), 1, "%s", o);
	cr_assert(strstr(o, ".conf:3: ") && strstr(o, "nothing changed"), "%s", o);
	free(o);
	cr_assert_eq(apply(&o, "--prune"), 1, "%s", o);
	free(o);
	after = saved();
	cr_assert_str_eq(after, before, "a bad file changed the state");
	free(before);
	free(after);
	t_pair_free(&p);
}

Test(cli_apply, batch_stops_at_bad_line)
{
	char *o = NULL;

	XT_OK("block add edge");
	cr_assert_eq(t_sh(NULL, "printf '# rules\\nrule add edge prio 1 handle 1 action pass\\n\\n"
			  "rule add edge prio 2 handle 2 action drop # two\\n"
			  "rule add edge prio 3 handle 1 action drop\\n"
			  "rule add edge prio 4 handle 4 action drop\\n' > %s", file), 0);
	cr_assert_eq(t_xtcam(&o, "-batch %s", file), 1, "%s", o);
	cr_assert(strstr(o, "handle 1 is in use"), "the command's error: %s", o);
	cr_assert(strstr(o, ".conf:5: stopped at this line; 2 lines applied before it"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 2, "prio"), 2, "line 4 applied: %s", o);
	cr_assert_eq(t_rule_field(o, 4, "prio"), -1, "line 6, after the bad one, is not: %s", o);
	free(o);

	/* -force goes on, and the exit status says a line failed */
	XT_OK("rule flush edge");
	cr_assert_eq(t_xtcam(&o, "-force -batch %s", file), 1, "%s", o);
	cr_assert(strstr(o, ".conf:5: failed; going on (-force)"), "%s", o);
	cr_assert(strstr(o, "1 line failed, 3 applied"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 4, "prio"), 4, "line 6 applied with -force: %s", o);
	free(o);

	/* from stdin, and a failure on the first line applies nothing */
	XT_OK("rule flush edge");
	cr_assert_eq(t_sh(&o, "printf 'rule add edge prio 7 handle 7 action pass\\n"
			  "rule add edge prio 8 handle 8 action pass\\n' | %s -batch -",
			  getenv("XTCAM_BIN")), 0, "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "printf 'rule add nosuch prio 1 action pass\\n"
			  "rule add edge prio 9 handle 9 action pass\\n' | %s -batch -",
			  getenv("XTCAM_BIN")), 1, "%s", o);
	cr_assert(strstr(o, "stdin:1: stopped at this line; 0 lines applied before it"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 7, "prio"), 7, "%s", o);
	cr_assert_eq(t_rule_field(o, 8, "prio"), 8, "%s", o);
	cr_assert_eq(t_rule_field(o, 9, "prio"), -1, "%s", o);
	free(o);
}
