// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* user/showfmt.c: a listed rule's text is the text `rule show` printed
 * with printf, and its JSON is json-c's text of the rule's object, byte
 * for byte, in every output style, whatever its strings and counters. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "xtcam/compile.h"
#include "xtcam/loader.h"
#include "syntax_test.h"

static const char *const lines[] = {
	"prio 1 handle 7 eth_type ipv4 src_ip 10.0.3.232 action drop",
	"prio 4 handle 9 ip_proto tcp src_ip 10.0.0.0/8 dst_port 1-9 action pass",
	"prio 65535 handle 4294967295 eth_type ipv6 ip_proto sctp action tx",
	"prio 1 dst_ip 2001:db8::/ffff:0:ffff:: ip_proto icmpv6 type 1 action drop",
	"prio 1 src_mac 00:11:22:33:44:55/24 vlan tagged vlan_id 3 action drop",
	"prio 2 vlan_prio 0 eth_type arp action pass",
	"prio 1 ip_proto tcp tcp_flags 0x12/0x17 raw1 0x1 raw2 0x2/0x3 action drop",
	"prio 3 action cpu 3",
	"prio 1 action redirect dev veth1",
	"prio 1 action redirect dev veth1 netns ns1",
	"prio 1 action redirect dev a#b netns n#",
	"prio 10 action drop",
};

/* device and namespace names a hand-built rule may carry: what json-c
 * escapes, what the text escapes, bytes past ASCII */
static const char *const names[] = {
	"a/b", "q\"t", "b\\s", "tab\tx", "\x01\x7f", "\xc3\xa9t\xc3\xa9", "n\n",
};

static const struct { unsigned long long packets, bytes; double last_used; } cnts[] = {
	{ 0, 0, -1 }, { 5, 300, -1 }, { 1, 64, 0 }, { 3, 99, 12.345678 },
	{ 9223372036854775813ull, 18446744073709551615ull, 0.1 },
	{ 9223372036854775813ull, 1, -1 },
};

static const int styles[] = {
	JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
	JSON_C_TO_STRING_PLAIN,
	JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE,
	JSON_C_TO_STRING_SPACED,
};

/* the object as `rule show` made it, independently of showfmt.c */
static json_object *want_object(const struct xtcam_shown *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "handle", json_object_new_int64(s->rule->handle));
	json_object_object_add(o, "prio", json_object_new_int64(s->rule->prio));
	json_object_object_add(o, "match", xtcam_rule_match_json(s->rule, s->spec));
	json_object_object_add(o, "action", xtcam_action_json(&s->rule->action));
	json_object_object_add(o, "entries", json_object_new_int64(xtcam_rule_entries(s->rule)));
	json_object_object_add(o, "packets", json_object_new_int64((int64_t)s->packets));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)s->bytes));
	if (s->last_used >= 0)
		json_object_object_add(o, "last_used", json_object_new_double(s->last_used));
	else
		json_object_object_add(o, "last_used", NULL);
	return o;
}

static const char *esc(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

/* the text as `rule show` printed it with printf */
static void want_text(const struct xtcam_shown *r, char *out, size_t len)
{
	const struct xtcam_rule_action *a = &r->rule->action;
	char m[4096];
	size_t o;

	cr_assert_geq(xtcam_rule_match_format(r->rule, r->spec, m, sizeof(m)), 0);
	o = (size_t)snprintf(out, len, "handle %u prio %u%s action %s", r->rule->handle,
			     r->rule->prio, m, xtcam_action_name(a->type));
	if (a->type == XTCAM_ACT_REDIRECT) {
		char dev[sizeof(a->dev) + 1], ns[sizeof(a->netns) + 1], d[256], n[1024];

		snprintf(dev, sizeof(dev), "%.*s", (int)sizeof(a->dev), a->dev);
		snprintf(ns, sizeof(ns), "%.*s", (int)sizeof(a->netns), a->netns);
		o += (size_t)snprintf(out + o, len - o, " dev %s%s%s", esc(d, sizeof(d), dev),
				      ns[0] ? " netns " : "", esc(n, sizeof(n), ns));
	} else if (a->type == XTCAM_ACT_CPU) {
		o += (size_t)snprintf(out + o, len - o, " %u", a->cpu);
	}
	o += (size_t)snprintf(out + o, len - o, "\n    entries %u packets %llu bytes %llu",
			      xtcam_rule_entries(r->rule), (unsigned long long)r->packets,
			      (unsigned long long)r->bytes);
	if (r->last_used >= 0)
		o += (size_t)snprintf(out + o, len - o, " used %.1fs ago", r->last_used);
	snprintf(out + o, len - o, "\n");
}

static void check(const struct xtcam_rule *rule, const struct xtcam_block_spec *spec,
		  const char *what)
{
	char got[8192], want[8192];
	size_t c, f;

	for (c = 0; c < sizeof(cnts) / sizeof(cnts[0]); c++) {
		struct xtcam_shown s = { rule, spec, cnts[c].packets, cnts[c].bytes,
					 cnts[c].last_used };
		int n;

		for (f = 0; f < sizeof(styles) / sizeof(styles[0]); f++) {
			json_object *o = want_object(&s);
			const char *t = json_object_to_json_string_ext(o, styles[f]);

			n = xtcam_shown_json(&s, styles[f], got, sizeof(got));
			cr_assert_eq(n, (int)strlen(t), "%s (counters %zu, style %d): %d\n%s",
				     what, c, styles[f], n, t);
			cr_assert_str_eq(got, t, "%s (counters %zu, style %d)", what, c,
					 styles[f]);
			/* one byte short: -ENOSPC, never a cut object */
			cr_assert_eq(xtcam_shown_json(&s, styles[f], got, (size_t)n), -ENOSPC,
				     "%s", what);
			json_object_put(o);
		}
		want_text(&s, want, sizeof(want));
		n = xtcam_shown_text(&s, got, sizeof(got));
		cr_assert_eq(n, (int)strlen(want), "%s (counters %zu): %d\n%s", what, c, n, want);
		cr_assert_str_eq(got, want, "%s (counters %zu)", what, c);
		cr_assert_eq(xtcam_shown_text(&s, got, (size_t)n), -ENOSPC, "%s", what);
	}
}

Test(showfmt, rules_as_json_c_and_printf_have_them)
{
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct xtcam_rule r;

		cr_assert_eq(parse(lines[i], &r, blk_raw(), err, sizeof(err)), 0, "%s: %s",
			     lines[i], err);
		check(&r, blk_raw(), lines[i]);
	}
}

Test(showfmt, names_json_c_escapes_are_escaped_as_it_does)
{
	char err[256];
	size_t i, j;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (j = 0; j < 2; j++) {
			struct xtcam_rule r;

			cr_assert_eq(parse("prio 5 handle 6 src_ip 10.0.0.0/8 action redirect dev x",
					   &r, blk_raw(), err, sizeof(err)), 0, "%s", err);
			memset(r.action.dev, 0, sizeof(r.action.dev));
			memset(r.action.netns, 0, sizeof(r.action.netns));
			/* a name of the whole field, without its NUL, too */
			if (j)
				memset(r.action.dev, 'd', sizeof(r.action.dev));
			else
				memcpy(r.action.dev, names[i], strlen(names[i]));
			memcpy(r.action.netns, names[i], strlen(names[i]));
			check(&r, blk_raw(), names[i]);
		}
}
