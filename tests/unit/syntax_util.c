// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Helpers for the rule-language tests: see tests/lib/syntax_test.h. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syntax_test.h"

void words_split(struct words *w, const char *line)
{
	size_t n = 0, cap = 8;
	char *p, *save = NULL, *tok;

	w->buf = strdup(line);
	w->argv = malloc(cap * sizeof(*w->argv));
	cr_assert(w->buf && w->argv, "out of memory");
	for (p = w->buf; (tok = strtok_r(p, " ", &save)); p = NULL) {
		if (n + 1 >= cap) {
			cap *= 2;
			w->argv = realloc(w->argv, cap * sizeof(*w->argv));
			cr_assert(w->argv, "out of memory");
		}
		w->argv[n++] = tok;
	}
	w->argv[n] = NULL;
	w->argc = (int)n;
}

void words_free(struct words *w)
{
	free(w->argv);
	free(w->buf);
	w->argv = NULL;
	w->buf = NULL;
}

const struct xtcam_block_spec *blk_raw(void)
{
	static struct xtcam_block_spec b;

	xtcam_block_spec_init(&b);
	strcpy(b.name, "rawblk");
	b.raw[0] = (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L3, .len = 1,
					    .offset = 9 };
	b.raw[1] = (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L4, .len = 4,
					    .offset = 12 };
	return &b;
}

const struct xtcam_block_spec *blk_raw_len(int idx, unsigned len)
{
	static struct xtcam_block_spec b;

	xtcam_block_spec_init(&b);
	strcpy(b.name, "rawlen");
	b.raw[idx] = (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L2,
					      .len = (__u8)len, .offset = 0 };
	return &b;
}

int parse(const char *line, struct xtcam_rule *r,
	  const struct xtcam_block_spec *blk, char *err, size_t errlen)
{
	struct words w;
	int rc;

	words_split(&w, line);
	rc = xtcam_rule_parse(w.argc, w.argv, r, blk, err, errlen);
	words_free(&w);
	return rc;
}

void base_rule(struct xtcam_rule *r, unsigned prio)
{
	xtcam_rule_init(r);
	r->prio = prio;
	r->action.type = XTCAM_ACT_DROP;
}

struct field {
	const char *name;
	size_t off, size;
};

#define RF(f) { #f, offsetof(struct xtcam_rule, f), \
		sizeof(((struct xtcam_rule *)0)->f) }
#define KF(f) RF(value.f), RF(mask.f)

static const struct field fields[] = {
	RF(prio), RF(handle), RF(keywords),
	KF(eth_type), KF(ip_proto), KF(ip_tos), KF(src_port), KF(dst_port),
	KF(src_ip), KF(dst_ip), KF(dst_mac), KF(src_mac), KF(vlan_tci),
	KF(vlan_ethtype), KF(cvlan_tci), KF(cvlan_ethtype), KF(ip_ttl),
	KF(icmp_type), KF(icmp_code), KF(pad0), KF(tcp_flags), KF(flags),
	KF(raw1), KF(raw2), KF(ifindex),
	RF(sport_lo), RF(sport_hi), RF(dport_lo), RF(dport_hi),
	RF(action.type), RF(action.cpu), RF(action.dev), RF(action.netns),
};

static void hex(char *b, size_t n, const void *p, size_t len)
{
	const uint8_t *c = p;
	size_t i, o = 0;

	b[0] = '\0';
	for (i = 0; i < len && o + 3 < n; i++)
		o += (size_t)snprintf(b + o, n - o, "%02x", c[i]);
}

bool rule_diff(const struct xtcam_rule *a, const struct xtcam_rule *b,
	       char *buf, size_t len)
{
	const char *pa = (const char *)a, *pb = (const char *)b;
	size_t i, o = 0, covered = 0;
	bool diff = false;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct field *f = &fields[i];
		char ha[160], hb[160];

		covered += f->size;
		if (!memcmp(pa + f->off, pb + f->off, f->size))
			continue;
		diff = true;
		hex(ha, sizeof(ha), pa + f->off, f->size);
		hex(hb, sizeof(hb), pb + f->off, f->size);
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, " %s: %s != %s;",
					      f->name, ha, hb);
	}
	/* the table covers every byte (no padding in struct xtcam_rule) */
	cr_assert_eq(covered, sizeof(struct xtcam_rule),
		     "rule_diff's field table is out of date");
	return diff;
}

void check_invariants(const struct xtcam_rule *r, const char *ctx)
{
	const uint8_t *v = (const uint8_t *)&r->value;
	const uint8_t *m = (const uint8_t *)&r->mask;
	const __u16 allowed = XTCAM_F_VLAN1 | XTCAM_F_VLAN2 | XTCAM_F_OUTER_AD |
			      XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG;
	size_t i;

	for (i = 0; i < sizeof(r->value); i++)
		cr_assert_eq(v[i] & ~m[i], 0,
			     "%s: value has bits outside the mask at key byte %zu "
			     "(%02x/%02x)", ctx, i, v[i], m[i]);
	cr_assert(!r->value.src_port && !r->mask.src_port &&
		  !r->value.dst_port && !r->mask.dst_port,
		  "%s: ports in the ternary part", ctx);
	cr_assert(!r->mask.pad0 && !r->value.pad0, "%s: padding set", ctx);
	if (!(r->keywords & KW(INDEV)))
		cr_assert(!r->mask.ifindex && !r->value.ifindex,
			  "%s: ifindex without indev", ctx);
	cr_assert_eq(r->mask.flags & ~allowed, 0,
		     "%s: implied presence flags %#x in the mask", ctx,
		     r->mask.flags);
	cr_assert(r->sport_lo <= r->sport_hi && r->dport_lo <= r->dport_hi,
		  "%s: reversed port range", ctx);
	cr_assert(r->prio >= 1 && r->prio <= 65535, "%s: prio %u", ctx,
		  r->prio);
	cr_assert_eq(r->keywords & ~((1ull << XTCAM_KW_MAX) - 1), 0,
		     "%s: keywords %#x has bits past XTCAM_KW_MAX", ctx,
		     r->keywords);
}

void parse_ok(const char *line, const struct xtcam_block_spec *blk,
	      struct xtcam_rule *out)
{
	char err[XTCAM_ERR_MAX] = "";
	int rc;

	memset(out, 0x5a, sizeof(*out));
	rc = parse(line, out, blk, err, sizeof(err));
	cr_assert_eq(rc, 0, "\"%s\": rc %d (%s)", line, rc, err);
	cr_assert_str_empty(err, "\"%s\": parsed, but err is \"%s\"", line, err);
	check_invariants(out, line);
}

void expect_rule(const char *line, const struct xtcam_block_spec *blk,
		 const struct xtcam_rule *want)
{
	struct xtcam_rule got;
	char d[2048];

	parse_ok(line, blk, &got);
	cr_assert(!rule_diff(&got, want, d, sizeof(d)),
		  "\"%s\": got != want:%s", line, d);
}

static void check_error(const char *how, const char *line, int rc,
			const char *err, int want,
			const struct xtcam_rule *r, const char *const *subs)
{
	static const uint8_t fill = 0xa5;
	const uint8_t *p = (const uint8_t *)r;
	size_t i;

	cr_expect_eq(rc, -want, "%s \"%s\": rc %d, want %d (%s)", how, line,
		     rc, -want, err);
	for (i = 0; i < sizeof(*r); i++)
		if (p[i] != fill)
			break;
	cr_expect_eq(i, sizeof(*r), "%s \"%s\": output rule touched at byte "
		     "%zu", how, line, i);
	cr_expect(strlen(err) > 0, "%s \"%s\": empty message", how, line);
	cr_expect(!strchr(err, '\n'), "%s \"%s\": message has a newline", how,
		  line);
	for (i = 0; subs && subs[i]; i++)
		cr_expect(strstr(err, subs[i]), "%s \"%s\": message \"%s\" lacks "
			  "\"%s\"", how, line, err, subs[i]);
}

void expect_error(const char *line, const struct xtcam_block_spec *blk,
		  int err, const char *const *subs)
{
	struct xtcam_rule r;
	char e[XTCAM_ERR_MAX];
	int rc;

	memset(&r, 0xa5, sizeof(r));
	memset(e, 'x', sizeof(e));
	e[sizeof(e) - 1] = '\0';
	rc = parse(line, &r, blk, e, sizeof(e));
	check_error("parse", line, rc, e, err, &r, subs);

	memset(&r, 0xa5, sizeof(r));
	memset(e, 'x', sizeof(e));
	e[sizeof(e) - 1] = '\0';
	rc = xtcam_rule_parse_line(line, &r, blk, e, sizeof(e));
	check_error("parse_line", line, rc, e, err, &r, subs);

	/* no message buffer at all: same result, no crash */
	memset(&r, 0xa5, sizeof(r));
	rc = parse(line, &r, blk, NULL, 0);
	cr_expect_eq(rc, -err, "\"%s\" without err buffer: rc %d", line, rc);
}

void roundtrip(const struct xtcam_rule *r, const struct xtcam_block_spec *blk,
	       char *text, const char *ctx)
{
	char again[XTCAM_RULE_TEXT_MAX], err[XTCAM_ERR_MAX], d[2048];
	struct xtcam_rule back;
	int n, rc;

	n = xtcam_rule_format(r, blk, text, XTCAM_RULE_TEXT_MAX);
	cr_assert(n > 0, "%s: format rc %d", ctx, n);
	cr_assert_eq((size_t)n, strlen(text), "%s: format length", ctx);
	memset(&back, 0x5a, sizeof(back));
	rc = parse(text, &back, blk, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: canonical text \"%s\" does not parse: %s",
		     ctx, text, err);
	cr_assert(!rule_diff(&back, r, d, sizeof(d)),
		  "%s: \"%s\" parses back different:%s", ctx, text, d);
	/* and through the line layer */
	memset(&back, 0x5a, sizeof(back));
	rc = xtcam_rule_parse_line(text, &back, blk, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: parse_line(\"%s\"): %s", ctx, text, err);
	cr_assert(!rule_diff(&back, r, d, sizeof(d)),
		  "%s: parse_line(\"%s\") different:%s", ctx, text, d);
	/* the text cannot be misread: an older xtcam's decimal reading
	 * (XTCAM_PARSE_DECIMAL) gives the same rule */
	memset(&back, 0x5a, sizeof(back));
	rc = xtcam_rule_parse_line_flags(text, &back, blk, XTCAM_PARSE_DECIMAL,
					 err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: decimal reading of \"%s\": %s", ctx, text, err);
	cr_assert(!rule_diff(&back, r, d, sizeof(d)),
		  "%s: \"%s\" reads differently as decimal:%s", ctx, text, d);
	n = xtcam_rule_format(&back, blk, again, sizeof(again));
	cr_assert(n > 0, "%s: second format rc %d", ctx, n);
	cr_assert_str_eq(again, text, "%s: text not canonical", ctx);
}
