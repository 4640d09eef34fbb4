// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A tc-flower user's numbers through the CLI: `ip_proto 11` is UDP and
 * `tcp_flags 12/12` is SYN|ACK, as tc reads them; `rule show`, JSON and
 * `save` print them so that they cannot be misread; and real frames get the
 * verdicts those rules mean.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcli.h"

static char inst[32];

static void setup(void)
{
	t_cli_instance(inst, sizeof(inst));
}

static void teardown(void)
{
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -f /run/%s.lock", inst);
	t_net_cleanup();
}

TestSuite(bases_cli, .init = setup, .fini = teardown, .timeout = 300);

Test(bases_cli, flower_numbers_shown_and_applied)
{
	static const char *const shown[] = {
		" ip_proto udp dst_port 9 action drop",
		" ip_proto tcp tcp_flags 0x12/0x12 action drop",
		" ip_proto 0x2f action pass",
		" ip_tos 0xb8/0xfc ip_ttl 64/0xf0 action pass",
	};
	struct t_pair p;
	struct pkt_spec s;
	char *o = NULL;
	size_t i;

	cr_assert_eq(t_pair_make(&p, "n"), 0);
	XT_OK("block add edge");
	XT_OK("rule add edge prio 1 handle 1 ip_proto 11 dst_port 9 action drop");
	XT_OK("rule add edge prio 2 handle 2 ip_proto 6 tcp_flags 12/12 action drop");
	XT_OK("rule add edge prio 3 handle 3 ip_proto 2f action pass");
	XT_OK("rule add edge prio 4 handle 4 ip_tos b8/fc ip_ttl 64/f0 action pass");
	/* tc's abbreviations are refused, and the message says what tc means */
	cr_assert_eq(t_xtcam(&o, "rule add edge prio 5 ip_proto t action drop"), 1);
	cr_assert(strstr(o, "ip_proto") && strstr(o, "abbreviation") && strstr(o, "tcp"),
		  "%s", o);
	free(o);

	cr_assert_eq(t_xtcam(&o, "rule show edge"), 0, "%s", o);
	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		cr_assert(strstr(o, shown[i]), "rule show has \"%s\":\n%s", shown[i], o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert(strstr(o, "\"ip_proto\":\"0x2f\"") && strstr(o, "\"ip_tos\":\"0xb8") &&
		  strstr(o, "\"ip_proto\":\"udp\""), "JSON: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "save"), 0, "%s", o);
	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		cr_assert(strstr(o, shown[i]), "save has \"%s\":\n%s", shown[i], o);
	free(o);

	XT_OK("bind edge dev %s netns %s", p.a, p.ns_a);
	/* ip_proto 11 is UDP: udp/9 dropped, udp/10 passes */
	t_frame(&p, &s, 0);
	s.dport = 9;
	cr_assert_eq(through(&p, &s, 0x6161, 10), 0, "udp/9 dropped by ip_proto 11");
	s.dport = 10;
	cr_assert_eq(through(&p, &s, 0x6162, 5), 5, "udp/10 passes");
	/* tcp_flags 12/12: SYN|ACK dropped, a bare SYN passes */
	t_frame(&p, &s, 0);
	s.proto = IPPROTO_TCP;
	s.dport = 80;
	s.tcp_flags = 0x012;
	cr_assert_eq(through(&p, &s, 0x6163, 6), 0, "SYN|ACK dropped by tcp_flags 12/12");
	s.tcp_flags = 0x002;
	cr_assert_eq(through(&p, &s, 0x6164, 6), 6, "SYN passes");
	cr_assert_eq(t_xtcam(&o, "-j rule show edge"), 0, "%s", o);
	cr_assert_eq(t_rule_field(o, 1, "packets"), 10, "%s", o);
	cr_assert_eq(t_rule_field(o, 2, "packets"), 6, "%s", o);
	free(o);
}

/* save names its format; a file without that line is an older xtcam's,
 * whose numbers were decimal: restore reads it so, and says so once. */
Test(bases_cli, save_format_line_and_older_files)
{
	char file[64], *o = NULL, *n;

	XT_OK("block add edge");
	XT_OK("rule add edge prio 1 handle 1 ip_proto 11 dst_port 53 action drop");
	cr_assert_eq(t_xtcam(&o, "save"), 0, "%s", o);
	cr_assert_eq(strncmp(o, "# xtcam save format 2, ", 23), 0, "first line: %s", o);
	cr_assert(strstr(o, "ip_proto udp dst_port 53"), "%s", o);
	free(o);
	XT_OK("flush");

	snprintf(file, sizeof(file), "/tmp/%s-old.conf", inst);
	cr_assert_eq(t_sh(NULL, "printf '# xtcam save, 2026-12-01 10:00:00 UTC\\n"
			  "block add edge\\nrule add edge prio 1 handle 1 ip_proto 17 "
			  "dst_port 53 action drop\\nrule add edge prio 2 handle 2 ip_proto 6 "
			  "tcp_flags 18/18 action drop\\n' > %s", file), 0);
	cr_assert_eq(t_xtcam(&o, "restore %s", file), 0, "%s", o);
	n = strstr(o, "has no format line: its numbers are read as decimal");
	cr_assert(n, "says how it read the file: %s", o);
	cr_assert_null(strstr(n + 1, "has no format line"), "once: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule show edge"), 0, "%s", o);
	cr_assert(strstr(o, "ip_proto udp dst_port 53 action drop"), "17 is UDP there: %s", o);
	cr_assert(strstr(o, "ip_proto tcp tcp_flags 0x12/0x12 action drop"), "18 is 0x12: %s", o);
	free(o);
	t_sh(NULL, "rm -f %s", file);
}
