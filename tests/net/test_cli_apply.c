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
	t_cli_instance(inst, sizeof(inst));
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

/* the lines of out that start with prefix */
static int lines_from(const char *out, const char *prefix)
{
	const char *l;
	int n = 0;

	for (l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		n += !strncmp(l, prefix, strlen(prefix));
	return n;
}

/* The file and the host differ in 1% of a bound block's 20,000 rules (some
 * replaced, some removed, some added without a handle): apply makes those
 * changes and no other, in one atomic change of the block; the other
 * rules keep their counters, the binding its program; applying the first
 * file again converges back.  (A block this size, most of the registry's
 * rules, is read by dumping the registry; the smaller ones of the other
 * tests by their handles.) */
Test(cli_apply, one_percent_changed_only_those)
{
	struct t_pair p;
	struct pkt_spec s;
	uint32_t id0 = 0, id1 = 0;
	char *want, *o = NULL;
	const char *bin = getenv("XTCAM_BIN");

	cr_assert_eq(t_pair_make(&p, "o"), 0);
	XT_OK("block add big capacity 24000 default pass");
	/* handle 1 counts the test's frames (udp/9); 2..20000 never match */
	cr_assert_eq(t_sh(NULL, "{ echo 'prio 10 handle 1 ip_proto udp dst_port 9 action drop'; "
			  "awk 'BEGIN { for (i = 2; i <= 20000; i++) printf \"prio %%d handle %%d "
			  "src_ip 10.77.%%d.%%d action drop\\n\", 20 + i %% 50, i, int(i / 256), "
			  "i %% 256 }'; } > %s.rules", file), 0);
	XT_OK("rule load big %s.rules", file);
	XT_OK("bind big dev %s netns %s mode native", p.a, p.ns_a);
	cr_assert_eq(t_sh(NULL, "%s save > %s", bin, file), 0);
	want = saved();
	cr_assert_eq(t_xdp_prog_in(p.ns_a, p.a, &id0), 0);
	t_frame(&p, &s, 0);
	s.dport = 9;
	cr_assert_eq(t_through(&p, &s, 0x4f01, 5), 0, "udp/9 dropped by handle 1");

	/* file2: every 200th rule (from handle 200) replaced, every 400th
	 * (from 50) removed, 50 added without a handle, one of them passing
	 * udp/9 in front of handle 1 */
	cr_assert_eq(t_sh(NULL, "awk '/^rule add big / { h = $7; if (h %% 400 == 50) next; "
			  "if (h %% 200 == 0) sub(/action drop/, \"action pass\") } { print } "
			  "END { print \"rule add big prio 5 ip_proto udp dst_port 9 action pass\"; "
			  "for (i = 1; i < 50; i++) printf \"rule add big prio 7 dst_ip 10.78.0.%%d "
			  "action drop\\n\", i }' %s > %s", file, file2), 0);
	cr_assert_eq(t_xtcam(&o, "-v apply %s", file2), 0, "%s", o);
	cr_assert(strstr(o, "\n200 changes\n"), "100 replaced, 50 removed, 50 added: %s", o);
	cr_assert_eq(lines_from(o, "rule replace big "), 100, "%s", o);
	cr_assert_eq(lines_from(o, "rule del big "), 50, "%s", o);
	cr_assert_eq(lines_from(o, "rule add big "), 50, "%s", o);
	cr_assert(strstr(o, "rule replace big prio 20 handle 200 src_ip 10.77.0.200 action pass\n"),
		  "%s", o);
	cr_assert(strstr(o, "rule del big handle 450\n"), "%s", o);
	cr_assert(strstr(o, "rule add big prio 5 handle 20001 ip_proto udp dst_port 9 action pass\n"),
		  "an added rule gets a handle after the file's highest: %s", o);
	cr_assert_null(strstr(o, "handle 1 "), "handle 1 is not touched: %s", o);
	cr_assert_null(strstr(o, "handle 201 "), "%s", o);
	free(o);
	cr_assert_eq(t_xdp_prog_in(p.ns_a, p.a, &id1), 0);
	cr_assert_eq(id1, id0, "the binding's program id stays (%u, then %u)", id0, id1);
	cr_assert_eq(t_through(&p, &s, 0x4f02, 4), 4, "the added rule passes udp/9");
	cr_assert_eq(t_xtcam(&o, "-j rule show big"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 5, "handle 1 keeps its counter: %s", o);
	cr_assert_eq(t_rule_field(o, 450, "prio"), -1, "handle 450 removed: %s", o);
	cr_assert_eq(t_rule_field(o, 451, "prio"), 21, "handle 451 stays: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "apply %s", file2), 0, "%s", o);
	cr_assert_str_eq(o, "0 changes\n", "the added rules' handles are stable: %s", o);
	free(o);

	/* back to the first file: the same 200 changes the other way */
	cr_assert_eq(apply(&o, ""), 0, "%s", o);
	cr_assert_str_eq(o, "200 changes\n", "%s", o);
	free(o);
	same_as(want, "back to the first file");
	cr_assert_eq(t_through(&p, &s, 0x4f03, 3), 0, "udp/9 dropped by handle 1 again");
	cr_assert_eq(t_xtcam(&o, "-j rule show big"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 8, "handle 1 counted on: %s", o);
	free(o);
	cr_assert_eq(t_xdp_prog_in(p.ns_a, p.a, &id1), 0);
	cr_assert_eq(id1, id0, "(%u, then %u)", id0, id1);
	zero_changes();
	t_sh(NULL, "rm -f %s.rules", file);
	free(want);
	t_pair_free(&p);
}

/* Every block's rule changes are checked before the first change: a
 * block whose rules would not fit stops the apply before the other
 * block's changes are made. */
Test(cli_apply, refused_block_changes_nothing)
{
	struct t_pair p;
	char *before, *after, *o = NULL;

	cr_assert_eq(t_pair_make(&p, "r"), 0);
	config(&p);
	/* the file: edge's handle 3 changed, quiet (capacity 100) with 120 rules */
	cr_assert_eq(t_sh(NULL, "sed -i 's/handle 3 ip_proto tcp action pass/handle 3 ip_proto tcp "
			  "action drop/' %s && awk 'BEGIN { for (i = 10; i < 130; i++) printf "
			  "\"rule add quiet prio 2 handle %%d src_ip 10.5.0.%%d action drop\\n\", i, i }' "
			  ">> %s", file, file), 0);
	before = saved();
	cr_assert_eq(apply(&o, ""), 1, "%s", o);
	cr_assert(strstr(o, "block quiet: needs 121 entries, holds 100"), "%s", o);
	free(o);
	after = saved();
	cr_assert_str_eq(after, before, "a refused apply changed the state");
	free(after);
	cr_assert_eq(apply(&o, "--check"), 1, "--check refuses it too: %s", o);
	cr_assert(strstr(o, "block quiet: needs 121 entries, holds 100"), "%s", o);
	free(o);
	free(before);
	t_pair_free(&p);
}

/* XTCAM_TRACE=1 says where apply's time goes: reading the file, parsing
 * it, reading the block's rules from the registry, comparing. */
Test(cli_apply, trace_names_its_phases)
{
	struct t_pair p;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "t"), 0);
	config(&p);
	cr_assert_eq(t_sh(&o, "XTCAM_TRACE=1 %s apply %s", getenv("XTCAM_BIN"), file), 0, "%s", o);
	cr_assert(strstr(o, "trace read "), "%s", o);
	cr_assert(strstr(o, "trace parse "), "%s", o);
	cr_assert(strstr(o, "trace reg-rules "), "%s", o);
	cr_assert(strstr(o, "trace compare "), "%s", o);
	cr_assert(strstr(o, "0 changes"), "%s", o);
	free(o);
	t_pair_free(&p);
}
