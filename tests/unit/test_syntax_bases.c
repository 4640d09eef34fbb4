// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Number bases: match values mean what they mean to tc-flower (ip_proto
 * and tcp_flags hex, ip_tos/ip_ttl decimal else hex with hex masks, ports
 * VALUE/MASK decimal or 0x, the rest decimal), XTCAM_PARSE_DECIMAL reads
 * them as older xtcam did (decimal or 0x), and the printed text means the
 * same under both readings.  prio and handle are decimal either way.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "syntax_test.h"

/* line parsed with flags (through the line layer and through argv), must
 * succeed; both give the same rule */
static void parse_flags_ok(const char *line, unsigned flags,
			   struct xtcam_rule *r)
{
	char err[XTCAM_ERR_MAX] = "", d[1024];
	struct xtcam_rule r2;
	struct words w;
	int rc;

	memset(r, 0x5a, sizeof(*r));
	rc = xtcam_rule_parse_line_flags(line, r, NULL, flags, err, sizeof(err));
	cr_assert_eq(rc, 0, "\"%s\" (flags %#x): rc %d (%s)", line, flags, rc,
		     err);
	check_invariants(r, line);
	words_split(&w, line);
	memset(&r2, 0xa5, sizeof(r2));
	rc = xtcam_rule_parse_flags(w.argc, w.argv, &r2, NULL, flags, err,
				    sizeof(err));
	words_free(&w);
	cr_assert_eq(rc, 0, "\"%s\" (flags %#x) as argv: rc %d (%s)", line,
		     flags, rc, err);
	cr_assert(!rule_diff(r, &r2, d, sizeof(d)), "\"%s\": line != argv:%s",
		  line, d);
}

static void parse_flags_err(const char *line, unsigned flags, int want,
			    const char *sub)
{
	char err[XTCAM_ERR_MAX] = "";
	struct xtcam_rule r, keep;
	int rc;

	memset(&r, 0x5a, sizeof(r));
	keep = r;
	rc = xtcam_rule_parse_line_flags(line, &r, NULL, flags, err, sizeof(err));
	cr_expect_eq(rc, -want, "\"%s\" (flags %#x): rc %d, want %d (%s)", line,
		     flags, rc, -want, err);
	cr_expect(!memcmp(&r, &keep, sizeof(r)), "\"%s\": rule touched", line);
	cr_expect(strstr(err, sub), "\"%s\": message \"%s\" lacks \"%s\"", line,
		  err, sub);
}

/* What each keyword's number means, with and without XTCAM_PARSE_DECIMAL. */
struct mean {
	const char *line;
	/* the flower reading, then the old decimal one; -1: refused */
	int proto[2];
	int tcpf[2], tcpm[2];
	int tos[2], tosm[2];
	int ttl[2], ttlm[2];
};

#define NONE { -1, -1 }

static const struct mean means[] = {
	/* the examples: tc reads these as hex */
	{ "ip_proto 11", { 17, 11 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto 6", { 6, 6 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto 0x11", { 17, 17 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto 2f", { 47, -1 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto 47", { 0x47, 47 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto 132", { -1, 132 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto 84", { 132, 84 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto udp", { 17, 17 }, NONE, NONE, NONE, NONE, NONE, NONE },
	{ "ip_proto tcp tcp_flags 12/12", { 6, 6 }, { 0x12, 12 }, { 0x12, 12 },
	  NONE, NONE, NONE, NONE },
	{ "ip_proto tcp tcp_flags 2", { 6, 6 }, { 2, 2 }, { 0xfff, 0xfff },
	  NONE, NONE, NONE, NONE },
	{ "ip_proto tcp tcp_flags 0x12/0x12", { 6, 6 }, { 0x12, 0x12 },
	  { 0x12, 0x12 }, NONE, NONE, NONE, NONE },
	{ "ip_proto tcp tcp_flags 10", { 6, 6 }, { 0x10, 10 }, { 0xfff, 0xfff },
	  NONE, NONE, NONE, NONE },
	{ "ip_proto tcp tcp_flags a", { 6, -1 }, { 10, -1 }, { 0xfff, -1 },
	  NONE, NONE, NONE, NONE },
	/* ip_tos: the value decimal, else hex; the mask hex */
	{ "ip_tos b8", NONE, NONE, NONE, { 0xb8, -1 }, { 0xff, -1 }, NONE, NONE },
	{ "ip_tos 184", NONE, NONE, NONE, { 184, 184 }, { 0xff, 0xff }, NONE,
	  NONE },
	{ "ip_tos 16", NONE, NONE, NONE, { 16, 16 }, { 0xff, 0xff }, NONE, NONE },
	{ "ip_tos 0xb8/0xfc", NONE, NONE, NONE, { 0xb8, 0xb8 }, { 0xfc, 0xfc },
	  NONE, NONE },
	{ "ip_tos 184/fc", NONE, NONE, NONE, { 0xb8, -1 }, { 0xfc, -1 }, NONE,
	  NONE },
	{ "ip_tos 16/10", NONE, NONE, NONE, { 0x10, 0 }, { 0x10, 10 }, NONE,
	  NONE },
	{ "ip_tos 255/252", NONE, NONE, NONE, { -1, 252 }, { -1, 252 }, NONE,
	  NONE },
	/* ip_ttl likewise */
	{ "ip_ttl 64", NONE, NONE, NONE, NONE, NONE, { 64, 64 }, { 0xff, 0xff } },
	{ "ip_ttl 1e", NONE, NONE, NONE, NONE, NONE, { 30, -1 }, { 0xff, -1 } },
	{ "ip_ttl 64/f0", NONE, NONE, NONE, NONE, NONE, { 0x40, -1 },
	  { 0xf0, -1 } },
	{ "ip_ttl 64/40", NONE, NONE, NONE, NONE, NONE, { 0x40, 0 },
	  { 0x40, 40 } },
	{ "ip_ttl 64/0xf0", NONE, NONE, NONE, NONE, NONE, { 0x40, 0x40 },
	  { 0xf0, 0xf0 } },
};

static void check_mean(const struct mean *m, int k)
{
	unsigned flags = k ? XTCAM_PARSE_DECIMAL : 0;
	const char *how = k ? "decimal" : "flower";
	bool refused = false;
	struct xtcam_rule r;
	char line[160], err[XTCAM_ERR_MAX];
	int rc;

	refused = (m->proto[k] < 0 && m->proto[!k] >= 0) ||
		  (m->tcpf[k] < 0 && m->tcpf[!k] >= 0) ||
		  (m->tos[k] < 0 && m->tos[!k] >= 0) ||
		  (m->ttl[k] < 0 && m->ttl[!k] >= 0);
	snprintf(line, sizeof(line), "prio 1 %s action drop", m->line);
	if (refused) {
		rc = xtcam_rule_parse_line_flags(line, &r, NULL, flags, err,
						 sizeof(err));
		cr_expect(rc == -EINVAL || rc == -ERANGE,
			  "%s: \"%s\" is refused, rc %d", how, line, rc);
		return;
	}
	parse_flags_ok(line, flags, &r);
	if (m->proto[k] >= 0)
		cr_expect_eq(r.value.ip_proto, m->proto[k],
			     "%s: \"%s\": ip_proto %u, want %d", how, line,
			     r.value.ip_proto, m->proto[k]);
	if (m->tcpf[k] >= 0) {
		cr_expect_eq(ntohs(r.value.tcp_flags), m->tcpf[k] & m->tcpm[k],
			     "%s: \"%s\": tcp_flags %#x, want %#x", how, line,
			     ntohs(r.value.tcp_flags), m->tcpf[k] & m->tcpm[k]);
		cr_expect_eq(ntohs(r.mask.tcp_flags), m->tcpm[k],
			     "%s: \"%s\": tcp_flags mask %#x, want %#x", how, line,
			     ntohs(r.mask.tcp_flags), m->tcpm[k]);
	}
	if (m->tos[k] >= 0) {
		cr_expect_eq(r.value.ip_tos, m->tos[k] & m->tosm[k],
			     "%s: \"%s\": ip_tos %#x, want %#x", how, line,
			     r.value.ip_tos, m->tos[k] & m->tosm[k]);
		cr_expect_eq(r.mask.ip_tos, m->tosm[k],
			     "%s: \"%s\": ip_tos mask %#x, want %#x", how, line,
			     r.mask.ip_tos, m->tosm[k]);
	}
	if (m->ttl[k] >= 0) {
		cr_expect_eq(r.value.ip_ttl, m->ttl[k] & m->ttlm[k],
			     "%s: \"%s\": ip_ttl %#x, want %#x", how, line,
			     r.value.ip_ttl, m->ttl[k] & m->ttlm[k]);
		cr_expect_eq(r.mask.ip_ttl, m->ttlm[k],
			     "%s: \"%s\": ip_ttl mask %#x, want %#x", how, line,
			     r.mask.ip_ttl, m->ttlm[k]);
	}
}

Test(bases, flower_reading)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(means); i++)
		check_mean(&means[i], 0);
}

Test(bases, decimal_flag_reads_as_before)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(means); i++)
		check_mean(&means[i], 1);
}

/* The keywords whose reading did not change: ports (single and ranges
 * decimal, VALUE/MASK decimal or 0x), ICMP type/code, VLAN fields,
 * ethertypes, prefix lengths; the same under both readings. */
Test(bases, unchanged_keywords)
{
	static const struct { const char *line; __u16 lo, hi; } ports[] = {
		{ "ip_proto tcp dst_port 80", 80, 80 },
		{ "ip_proto tcp dst_port 1000-2000", 1000, 2000 },
		{ "ip_proto tcp dst_port 0x50/0xfff0", 80, 95 },
		{ "ip_proto tcp dst_port 80/65520", 80, 95 },
		{ "ip_proto tcp dst_port 0x50/65520", 80, 95 },
		{ "ip_proto tcp dst_port 80/0xfff0", 80, 95 },
		{ "ip_proto 6 dst_port 16/0xfff0", 16, 31 },
	};
	struct xtcam_rule r;
	char line[160];
	size_t i;
	int k;

	for (k = 0; k < 2; k++) {
		unsigned fl = k ? XTCAM_PARSE_DECIMAL : 0;

		for (i = 0; i < ARRAY_SIZE(ports); i++) {
			snprintf(line, sizeof(line), "prio 1 %s action drop",
				 ports[i].line);
			parse_flags_ok(line, fl, &r);
			cr_expect(r.dport_lo == ports[i].lo &&
				  r.dport_hi == ports[i].hi,
				  "\"%s\" (flags %#x): %u-%u, want %u-%u", line, fl,
				  r.dport_lo, r.dport_hi, ports[i].lo, ports[i].hi);
		}
		parse_flags_ok("prio 1 ip_proto icmp type 10 code 10/12 action drop",
			       fl, &r);
		cr_expect_eq(r.value.icmp_type, 10);
		cr_expect_eq(r.mask.icmp_code, 12);
		cr_expect_eq(r.value.icmp_code, 8);
		parse_flags_ok("prio 1 vlan_id 100 vlan_prio 5 action drop", fl, &r);
		cr_expect_eq(ntohs(r.value.vlan_tci), 5 << 13 | 100);
		parse_flags_ok("prio 1 eth_type 2048 action drop", fl, &r);
		cr_expect_eq(ntohs(r.value.eth_type), 0x0800);
		parse_flags_ok("prio 1 vlan_ethtype 0x88a8 cvlan_ethtype 34525 "
			       "action drop", fl, &r);
		cr_expect_eq(ntohs(r.value.vlan_ethtype), 0x88a8);
		cr_expect_eq(ntohs(r.value.cvlan_ethtype), 0x86dd);
		parse_flags_ok("prio 1 src_ip 10.0.0.0/10 src_mac 0:1:2:3:4:5/10 "
			       "action drop", fl, &r);
		cr_expect_eq(ntohl(r.mask.src_ip[0]), 0xffc00000);
		cr_expect_eq(r.mask.src_mac[1], 0xc0);
		/* a single port or a range is decimal, as in tc; 0x is taken */
		parse_flags_err("prio 1 ip_proto tcp dst_port 08 action drop", fl,
				EINVAL, "leading zero");
		parse_flags_err("prio 1 ip_proto tcp dst_port 1f action drop", fl,
				EINVAL, "dst_port");
	}
}

/* prio and handle are decimal (or 0x) in both readings; a leading zero or
 * a sign is refused rather than read as octal or signed. */
Test(bases, prio_handle_plain)
{
	static const struct { const char *line; const char *sub; } bad[] = {
		{ "prio 010 action drop", "leading zero" },
		{ "prio 08 action drop", "leading zero" },
		{ "prio +8 action drop", "\"+8\"" },
		{ "prio -1 action drop", "\"-1\"" },
		{ "prio 1e action drop", "\"1e\"" },
		{ "prio 1 handle 012 action drop", "leading zero" },
		{ "prio 1 handle +8 action drop", "\"+8\"" },
		{ "prio 1 handle -8 action drop", "\"-8\"" },
		{ "prio 1 handle 10 action drop prio 2", "given twice" },
		{ "prio 1 handle ff action drop", "\"ff\"" },
		{ "prio 1 handle 0012 action drop", "leading zero" },
	};
	struct xtcam_rule r;
	size_t i;
	int k;

	for (k = 0; k < 2; k++) {
		unsigned fl = k ? XTCAM_PARSE_DECIMAL : 0;

		for (i = 0; i < ARRAY_SIZE(bad); i++)
			parse_flags_err(bad[i].line, fl, EINVAL, bad[i].sub);
		parse_flags_ok("prio 10 handle 12 action drop", fl, &r);
		cr_expect(r.prio == 10 && r.handle == 12, "flags %#x: %u %u", fl,
			  r.prio, r.handle);
		parse_flags_ok("prio 0x10 handle 0x12 action drop", fl, &r);
		cr_expect(r.prio == 16 && r.handle == 18, "flags %#x: %u %u", fl,
			  r.prio, r.handle);
	}
}

Test(bases, unknown_flags)
{
	const unsigned bad[] = { 2, 0x80000000u, XTCAM_PARSE_DECIMAL | 4 };
	char err[XTCAM_ERR_MAX];
	struct xtcam_rule r, keep;
	char *argv[] = { "prio", "1", "action", "drop", NULL };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&r, 0x5a, sizeof(r));
		keep = r;
		cr_assert_eq(xtcam_rule_parse_flags(4, argv, &r, NULL, bad[i], err,
						    sizeof(err)), -EINVAL);
		cr_assert(strstr(err, "flags"), "%s", err);
		cr_assert_eq(xtcam_rule_parse_line_flags("prio 1 action drop", &r,
							 NULL, bad[i], err,
							 sizeof(err)), -EINVAL);
		cr_assert(!memcmp(&r, &keep, sizeof(r)));
		cr_assert_eq(xtcam_rule_parse_line_flags("# blank", &r, NULL,
							 bad[i], err,
							 sizeof(err)), -EINVAL);
	}
	/* blank lines stay blank under any valid flags */
	cr_assert_eq(xtcam_rule_parse_line_flags("  # x", &r, NULL,
						 XTCAM_PARSE_DECIMAL, err,
						 sizeof(err)), 1);
}

/* The printed text: hex with 0x where flower reads hex, names where flower
 * has one, decimal where it reads decimal; in rule text and JSON. */
Test(bases, printed_unmistakably)
{
	static const struct { const char *in, *out; } t[] = {
		{ "ip_proto 11", "ip_proto udp" },
		{ "ip_proto 6", "ip_proto tcp" },
		{ "ip_proto 2f", "ip_proto 0x2f" },
		{ "ip_proto 32", "ip_proto esp" },
		{ "ip_proto 33", "ip_proto ah" },
		{ "ip_proto 73", "ip_proto l2tp" },
		{ "ip_proto 88", "ip_proto udplite" },
		{ "ip_proto 1", "ip_proto icmp" },
		{ "ip_proto 3a", "ip_proto icmpv6" },
		{ "ip_proto 0", "ip_proto 0x00" },
		{ "ip_proto 9", "ip_proto 0x09" },
		{ "ip_proto tcp tcp_flags 12/12", "ip_proto tcp tcp_flags 0x12/0x12" },
		{ "ip_proto tcp tcp_flags 2", "ip_proto tcp tcp_flags 0x2" },
		{ "ip_tos b8", "ip_tos 0xb8" },
		{ "ip_tos 184/fc", "ip_tos 0xb8/0xfc" },
		{ "ip_ttl 64/f0", "ip_ttl 64/0xf0" },
		{ "ip_ttl 1e", "ip_ttl 30" },
		{ "ip_proto icmp type 8/15 code 3", "ip_proto icmp type 8/15 code 3" },
	};
	char line[160], want[160], text[XTCAM_RULE_TEXT_MAX];
	struct xtcam_rule r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(line, sizeof(line), "prio 1 %s action drop", t[i].in);
		snprintf(want, sizeof(want), "prio 1 %s action drop", t[i].out);
		parse_ok(line, NULL, &r);
		/* also checks that the text parses back identically, with and
		 * without XTCAM_PARSE_DECIMAL */
		roundtrip(&r, NULL, text, line);
		cr_expect_str_eq(text, want, "\"%s\"", line);
	}

	/* JSON has the same strings */
	{
		struct json_object *j, *v;

		parse_ok("prio 1 ip_proto 2f action drop", NULL, &r);
		j = xtcam_rule_match_json(&r, NULL);
		cr_assert(j);
		cr_assert(json_object_object_get_ex(j, "ip_proto", &v));
		cr_expect_str_eq(json_object_get_string(v), "0x2f");
		json_object_put(j);

		parse_ok("prio 1 ip_proto 6 tcp_flags 12/12 ip_tos b8 action drop",
			 NULL, &r);
		j = xtcam_rule_json(&r, NULL);
		cr_assert(j);
		cr_expect_str_eq(json_object_to_json_string_ext(j,
				 JSON_C_TO_STRING_PLAIN),
				 "{\"prio\":1,\"handle\":0,\"match\":{\"ip_proto\":"
				 "\"tcp\",\"ip_tos\":\"0xb8\",\"tcp_flags\":"
				 "\"0x12\\/0x12\"},\"action\":{\"type\":\"drop\"}}");
		json_object_put(j);
	}
}

/* A file an older xtcam saved: its numbers were decimal. */
Test(bases, old_file_lines)
{
	static const struct { const char *old, *canon; } t[] = {
		{ "prio 1 handle 2 ip_proto 47 action drop",
		  "prio 1 handle 2 ip_proto 0x2f action drop" },
		{ "prio 1 ip_proto tcp tcp_flags 18/18 action drop",
		  "prio 1 ip_proto tcp tcp_flags 0x12/0x12 action drop" },
		{ "prio 1 ip_tos 16/240 ip_ttl 64/240 action drop",
		  "prio 1 ip_tos 0x10/0xf0 ip_ttl 64/0xf0 action drop" },
		{ "prio 1 ip_proto 17 dst_port 53 action pass",
		  "prio 1 ip_proto udp dst_port 53 action pass" },
	};
	char text[XTCAM_RULE_TEXT_MAX];
	struct xtcam_rule r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		parse_flags_ok(t[i].old, XTCAM_PARSE_DECIMAL, &r);
		roundtrip(&r, NULL, text, t[i].old);
		cr_expect_str_eq(text, t[i].canon, "\"%s\"", t[i].old);
	}
	/* read the new way, `ip_proto 17 dst_port 53` is protocol 0x17: no
	 * ports there */
	parse_flags_err("prio 1 ip_proto 17 dst_port 53 action pass", 0, EINVAL,
			"ip_proto is 0x17");
}
