// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * text -> rule -> canonical text -> the same rule.
 *
 *  - a table of rules with their canonical form;
 *  - a randomized test: rules generated with a fixed seed (XTCAM_SEED=N to
 *    change it, XTCAM_ROUNDS=N for more of them) together with the struct
 *    they must parse to, an independent model of the contract;
 *  - a fuzz test: random word soup never crashes, never half-writes.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "syntax_test.h"

/* --- table ----------------------------------------------------------------- */

static const struct {
	const char *in;
	const char *canon;      /* NULL: the same as in */
	int raw;
} canon[] = {
	{ "prio 1 action drop", NULL, 0 },
	{ "action drop prio 5", "prio 5 action drop", 0 },
	{ "pref 3 action shot", "prio 3 action drop", 0 },
	{ "prio 3 action ok", "prio 3 action pass", 0 },
	{ "prio 65535 handle 4294967295 action tx", NULL, 0 },
	{ "prio 0x10 handle 0x10 action pass", "prio 16 handle 16 action pass", 0 },
	{ "prio 1 handle 7 dst_port 80 ip_proto tcp action pass",
	  "prio 1 handle 7 ip_proto tcp dst_port 80 action pass", 0 },
	{ "prio 1 src_mac 00:11:22:33:44:55 action drop", NULL, 0 },
	{ "prio 1 src_mac AA:B:c:D:e:F action drop",
	  "prio 1 src_mac aa:0b:0c:0d:0e:0f action drop", 0 },
	{ "prio 1 src_mac 00:11:22:33:44:55/ff:ff:ff:00:00:00 action drop",
	  "prio 1 src_mac 00:11:22:00:00:00/24 action drop", 0 },
	{ "prio 1 dst_mac 00:11:22:33:44:55/ff:00:ff:00:00:0f action drop",
	  "prio 1 dst_mac 00:00:22:00:00:05/ff:00:ff:00:00:0f action drop", 0 },
	{ "prio 1 dst_mac 00:11:22:33:44:55/48 action drop",
	  "prio 1 dst_mac 00:11:22:33:44:55 action drop", 0 },
	{ "prio 1 dst_mac 01:02:03:04:05:06/0 action drop",
	  "prio 1 dst_mac 00:00:00:00:00:00/0 action drop", 0 },
	{ "prio 1 vlan tagged action drop", NULL, 0 },
	{ "prio 1 vlan untagged action drop", NULL, 0 },
	{ "prio 1 vlan_prio 3 vlan_id 0x64 vlan tagged action drop",
	  "prio 1 vlan tagged vlan_id 100 vlan_prio 3 action drop", 0 },
	{ "prio 1 vlan_id 0 vlan_prio 0 action drop", NULL, 0 },
	{ "prio 1 vlan_ethtype 0x8100 cvlan_id 5 cvlan_prio 7 cvlan_ethtype 0x0800 "
	  "action drop", "prio 1 vlan_ethtype 802.1Q cvlan_id 5 cvlan_prio 7 "
	  "cvlan_ethtype ipv4 action drop", 0 },
	{ "prio 1 vlan_ethtype 802.1ad action drop", NULL, 0 },
	{ "prio 1 vlan_ethtype 0x88CC action drop",
	  "prio 1 vlan_ethtype 0x88cc action drop", 0 },
	{ "prio 1 eth_type ip action drop", "prio 1 eth_type ipv4 action drop", 0 },
	{ "prio 1 protocol 0x86DD action drop", "prio 1 protocol ipv6 action drop",
	  0 },
	{ "prio 1 eth_type 2054 action drop", "prio 1 eth_type arp action drop", 0 },
	{ "prio 1 eth_type 0x1 action drop", "prio 1 eth_type 0x0001 action drop",
	  0 },
	{ "prio 1 eth_type all action drop", NULL, 0 },
	{ "prio 1 eth_type all ip_proto udp action drop", NULL, 0 },
	{ "prio 1 ip_proto 6 action drop", "prio 1 ip_proto tcp action drop", 0 },
	{ "prio 1 ip_proto 0x2f action drop", NULL, 0 },
	{ "prio 1 ip_proto 2F action drop", "prio 1 ip_proto 0x2f action drop", 0 },
	{ "prio 1 ip_proto 11 action drop", "prio 1 ip_proto udp action drop", 0 },
	{ "prio 1 ip_proto 88 action drop", "prio 1 ip_proto udplite action drop",
	  0 },
	{ "prio 1 ip_proto 73 action drop", "prio 1 ip_proto l2tp action drop", 0 },
	{ "prio 1 ip_proto 33 action drop", "prio 1 ip_proto ah action drop", 0 },
	{ "prio 1 ip_proto esp action drop", NULL, 0 },
	{ "prio 1 ip_proto 0 action drop", "prio 1 ip_proto 0x00 action drop", 0 },
	{ "prio 1 ip_proto ff action drop", "prio 1 ip_proto 0xff action drop", 0 },
	{ "prio 1 ip_proto icmp type 8 action drop", NULL, 0 },
	{ "prio 1 ip_proto 3a code 0x1/0x3 action drop",
	  "prio 1 ip_proto icmpv6 code 1/3 action drop", 0 },
	{ "prio 1 eth_type ipv4 ip_proto icmp action drop", NULL, 0 },
	{ "prio 1 src_ip 10.1.2.3/8 action drop",
	  "prio 1 src_ip 10.0.0.0/8 action drop", 0 },
	{ "prio 1 src_ip 10.0.0.0/255.255.0.0 action drop",
	  "prio 1 src_ip 10.0.0.0/16 action drop", 0 },
	{ "prio 1 src_ip 10.0.0.1/255.0.255.0 action drop",
	  "prio 1 src_ip 10.0.0.0/255.0.255.0 action drop", 0 },
	{ "prio 1 src_ip 10.0.0.1/32 action drop",
	  "prio 1 src_ip 10.0.0.1 action drop", 0 },
	{ "prio 1 src_ip 10.0.0.1/0 action drop",
	  "prio 1 src_ip 0.0.0.0/0 action drop", 0 },
	{ "prio 1 dst_ip ::/0 action drop", NULL, 0 },
	{ "prio 1 dst_ip 2001:DB8:0:0::1 action drop",
	  "prio 1 dst_ip 2001:db8::1 action drop", 0 },
	{ "prio 1 dst_ip 2001:db8::1/ffff:ffff:: action drop",
	  "prio 1 dst_ip 2001:db8::/32 action drop", 0 },
	{ "prio 1 dst_ip 2001:db8::1/ffff::ffff action drop",
	  "prio 1 dst_ip 2001::1/ffff::ffff action drop", 0 },
	{ "prio 1 src_ip ::ffff:1.2.3.4 action drop", NULL, 0 },
	{ "prio 1 src_ip ::1.2.3.4/96 action drop",
	  "prio 1 src_ip ::/96 action drop", 0 },
	{ "prio 1 src_ip 0.0.0.0 action drop", NULL, 0 },
	{ "prio 1 src_ip :: action drop", NULL, 0 },
	{ "prio 1 eth_type ipv6 src_ip 2001:db8::/32 dst_ip ::1 action drop", NULL,
	  0 },
	{ "prio 1 ip_tos 16 action drop", "prio 1 ip_tos 0x10 action drop", 0 },
	{ "prio 1 ip_tos 0xb8/0xfc action drop", NULL, 0 },
	{ "prio 1 ip_tos b8/fc action drop", "prio 1 ip_tos 0xb8/0xfc action drop",
	  0 },
	{ "prio 1 ip_tos 184/0xfc action drop",
	  "prio 1 ip_tos 0xb8/0xfc action drop", 0 },
	{ "prio 1 ip_tos 0/0 action drop", NULL, 0 },
	{ "prio 1 ip_tos 0 action drop", NULL, 0 },
	{ "prio 1 ip_ttl 0x40 action drop", "prio 1 ip_ttl 64 action drop", 0 },
	{ "prio 1 ip_ttl 64/0xf0 action drop", NULL, 0 },
	{ "prio 1 ip_ttl 40/f0 action drop", "prio 1 ip_ttl 32/0xf0 action drop",
	  0 },
	{ "prio 1 ip_ttl 4a action drop", "prio 1 ip_ttl 74 action drop", 0 },
	{ "prio 1 ip_ttl 1/1 action drop", "prio 1 ip_ttl 1/0x1 action drop", 0 },
	{ "prio 1 ip_flags nofirstfrag/frag action drop",
	  "prio 1 ip_flags frag/nofirstfrag action drop", 0 },
	{ "prio 1 ip_flags firstfrag action drop", NULL, 0 },
	{ "prio 1 ip_flags nofrag action drop", NULL, 0 },
	{ "prio 1 ip_proto udp src_port 1024/0xfc00 action drop",
	  "prio 1 ip_proto udp src_port 1024-2047 action drop", 0 },
	{ "prio 1 ip_proto udp src_port 0x50/0xfff0 action drop",
	  "prio 1 ip_proto udp src_port 80-95 action drop", 0 },
	{ "prio 1 ip_proto udp src_port 80/65520 action drop",
	  "prio 1 ip_proto udp src_port 80-95 action drop", 0 },
	{ "prio 1 ip_proto udp dst_port 80-80 action drop",
	  "prio 1 ip_proto udp dst_port 80 action drop", 0 },
	{ "prio 1 ip_proto udp dst_port 80/0xffff action drop",
	  "prio 1 ip_proto udp dst_port 80 action drop", 0 },
	{ "prio 1 ip_proto sctp dst_port 0-65535 action drop", NULL, 0 },
	{ "prio 1 ip_proto sctp dst_port 0 src_port 65535 action drop",
	  "prio 1 ip_proto sctp src_port 65535 dst_port 0 action drop", 0 },
	{ "prio 1 ip_proto tcp tcp_flags 12 action drop",
	  "prio 1 ip_proto tcp tcp_flags 0x12 action drop", 0 },
	{ "prio 1 ip_proto tcp tcp_flags 12/12 action drop",
	  "prio 1 ip_proto tcp tcp_flags 0x12/0x12 action drop", 0 },
	{ "prio 1 ip_proto 6 tcp_flags 2/fff action drop",
	  "prio 1 ip_proto tcp tcp_flags 0x2 action drop", 0 },
	{ "prio 1 ip_proto tcp tcp_flags 0x2/0x12 action drop", NULL, 0 },
	{ "prio 1 ip_proto tcp tcp_flags 0/0xfff action drop",
	  "prio 1 ip_proto tcp tcp_flags 0 action drop", 0 },
	{ "prio 1 ip_proto tcp tcp_flags 0/0 action drop", NULL, 0 },
	{ "prio 1 raw1 17 action drop", "prio 1 raw1 0x11 action drop", 1 },
	{ "prio 1 raw1 0/0 action drop", "prio 1 raw1 0/0 action drop", 1 },
	{ "prio 1 raw2 0x12345678/0xffffffff action drop",
	  "prio 1 raw2 0x12345678 action drop", 1 },
	{ "prio 1 raw2 0xff00ff00/0xf0f0f0f0 action drop",
	  "prio 1 raw2 0xf000f000/0xf0f0f0f0 action drop", 1 },
	{ "prio 1 action redirect dev veth1 netns ns1", NULL, 0 },
	{ "prio 1 action redirect dev veth1", NULL, 0 },
	{ "prio 1 action redirect dev a#b netns n#", NULL, 0 },
	{ "prio 1 action cpu 0x3", "prio 1 action cpu 3", 0 },
	{ "prio 1 action cpu 0", NULL, 0 },
	{ "prio 9 handle 77 src_mac 00:00:00:00:00:01 dst_mac ff:ff:ff:ff:ff:ff "
	  "vlan_id 1 vlan_prio 2 vlan_ethtype ipv4 eth_type ipv4 ip_proto tcp "
	  "src_ip 10.0.0.0/8 dst_ip 10.1.1.1 ip_tos 0x10/0xf0 ip_ttl 64 ip_flags "
	  "nofrag src_port 1-1023 dst_port 443 tcp_flags 0x2/0x12 raw1 0x6 "
	  "raw2 0x1/0x1 action cpu 1",
	  "prio 9 handle 77 src_mac 00:00:00:00:00:01 dst_mac ff:ff:ff:ff:ff:ff "
	  "vlan_id 1 vlan_prio 2 vlan_ethtype ipv4 eth_type ipv4 ip_proto tcp "
	  "src_ip 10.0.0.0/8 dst_ip 10.1.1.1 ip_tos 0x10/0xf0 ip_ttl 64 ip_flags "
	  "nofrag src_port 1-1023 dst_port 443 tcp_flags 0x2/0x12 raw1 0x6 "
	  "raw2 0x1/0x1 action cpu 1", 1 },
};

Test(roundtrip, table)
{
	struct xtcam_rule r;
	char text[XTCAM_RULE_TEXT_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(canon); i++) {
		const struct xtcam_block_spec *b = canon[i].raw ? blk_raw() : NULL;
		const char *want = canon[i].canon ? canon[i].canon : canon[i].in;

		parse_ok(canon[i].in, b, &r);
		roundtrip(&r, b, text, canon[i].in);
		cr_expect_str_eq(text, want, "\"%s\": canonical \"%s\", want \"%s\"",
				 canon[i].in, text, want);
	}
}

/* --- randomized ------------------------------------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rnext(struct rng *g)
{
	uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rnd(struct rng *g, unsigned n)
{
	return (unsigned)(rnext(g) % n);
}

static bool chance(struct rng *g, unsigned pct)
{
	return rnd(g, 100) < pct;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

#define MAXCL 40

struct gen {
	struct rng *g;
	char cl[MAXCL][192];
	int n;
	struct xtcam_rule w;
	bool dec;               /* write for XTCAM_PARSE_DECIMAL */
};

/* How a keyword reads its numbers (tc-flower's bases): decimal or 0x
 * hex; hex with or without 0x; decimal, else hex. */
enum base { B_AUTO, B_HEX, B_DEC_HEX };

static void clause(struct gen *G, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void clause(struct gen *G, const char *fmt, ...)
{
	va_list ap;

	cr_assert(G->n < MAXCL);
	va_start(ap, fmt);
	vsnprintf(G->cl[G->n++], sizeof(G->cl[0]), fmt, ap);
	va_end(ap);
}

/* A number as the language takes it: decimal or hex. */
static const char *num(struct gen *G, char *b, size_t n, uint64_t v)
{
	if (chance(G->g, 50))
		snprintf(b, n, "%llu", (unsigned long long)v);
	else
		snprintf(b, n, chance(G->g, 50) ? "0x%llx" : "0x%llX",
			 (unsigned long long)v);
	return b;
}

/* A number as a keyword of base nb reads it (under G->dec: decimal or
 * 0x, whatever the keyword). */
static const char *numb(struct gen *G, char *b, size_t n, uint64_t v,
			enum base nb)
{
	unsigned long long x = v;

	if (G->dec || nb == B_AUTO)
		return num(G, b, n, v);
	if (nb == B_HEX) {
		switch (rnd(G->g, 4)) {
		case 0:
			snprintf(b, n, "%llx", x);
			break;
		case 1:
			snprintf(b, n, "%llX", x);
			break;
		case 2:
			snprintf(b, n, "0x%llx", x);
			break;
		default:
			snprintf(b, n, "0%llx", x);
			break;
		}
		return b;
	}
	/* B_DEC_HEX: bare hex only when it has a letter (else it is decimal) */
	snprintf(b, n, "%llx", x);
	if (chance(G->g, 40) && strpbrk(b, "abcdef"))
		return b;
	return num(G, b, n, v);
}

/* VALUE or VALUE/MASK of width bits, the value in base vb, the mask in mb;
 * sets *v, *m as parsed (v & m). */
static void masked_b(struct gen *G, char *b, size_t n, unsigned bits,
		     enum base vb, enum base mb, uint32_t *v, uint32_t *m)
{
	uint32_t full = bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
	char x[24], y[24];

	*v = (uint32_t)rnext(G->g) & full;
	if (chance(G->g, 50)) {
		*m = full;
		snprintf(b, n, "%s", numb(G, x, sizeof(x), *v, vb));
	} else {
		*m = (uint32_t)rnext(G->g) & full;
		snprintf(b, n, "%s/%s", numb(G, x, sizeof(x), *v, vb),
			 numb(G, y, sizeof(y), *m, mb));
		*v &= *m;
	}
}

/* VALUE or VALUE/MASK of width bits; sets *v, *m as parsed (v & m). */
static void masked(struct gen *G, char *b, size_t n, unsigned bits,
		   uint32_t *v, uint32_t *m)
{
	uint32_t full = bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
	char x[24], y[24];

	*v = (uint32_t)rnext(G->g) & full;
	if (chance(G->g, 50)) {
		*m = full;
		snprintf(b, n, "%s", num(G, x, sizeof(x), *v));
	} else {
		*m = (uint32_t)rnext(G->g) & full;
		snprintf(b, n, "%s/%s", num(G, x, sizeof(x), *v),
			 num(G, y, sizeof(y), *m));
		*v &= *m;
	}
}

static void prefix(uint8_t *m, size_t n, unsigned len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned b = len >= 8 ? 8 : len;

		m[i] = b ? (uint8_t)(0xff << (8 - b)) : 0;
		len -= b;
	}
}

/* ADDR, ADDR/LEN or ADDR/MASK for MACs (6), IPv4 (4) and IPv6 (16). */
static void addr(struct gen *G, char *b, size_t bl, size_t n, uint8_t *v,
		 uint8_t *m)
{
	uint8_t a[16], mk[16];
	char t[64], u[64];
	size_t i;
	int form = (int)rnd(G->g, 3);

	for (i = 0; i < n; i++) {
		a[i] = (uint8_t)rnext(G->g);
		mk[i] = (uint8_t)rnext(G->g);
	}
	if (n == 6) {
		const char *f = chance(G->g, 50) ? "%02x" : chance(G->g, 50) ?
				"%x" : "%02X";

		t[0] = u[0] = '\0';
		for (i = 0; i < 6; i++) {
			char o[8];

			snprintf(o, sizeof(o), f, a[i]);
			strcat(t, o);
			snprintf(o, sizeof(o), f, mk[i]);
			strcat(u, o);
			if (i < 5)
				strcat(t, ":"), strcat(u, ":");
		}
	} else {
		inet_ntop(n == 4 ? AF_INET : AF_INET6, a, t, sizeof(t));
		inet_ntop(n == 4 ? AF_INET : AF_INET6, mk, u, sizeof(u));
	}
	if (form == 0) {
		memset(mk, 0xff, n);
		snprintf(b, bl, "%s", t);
	} else if (form == 1) {
		unsigned len = rnd(G->g, (unsigned)n * 8 + 1);

		prefix(mk, n, len);
		snprintf(b, bl, "%s/%u", t, len);
	} else {
		snprintf(b, bl, "%s/%s", t, u);
	}
	for (i = 0; i < n; i++) {
		v[i] = a[i] & mk[i];
		m[i] = mk[i];
	}
}

static void name(struct gen *G, char *b, unsigned max)
{
	static const char cs[] = "abcdefghijklmnopqrstuvwxyz0123456789_.-";
	unsigned len = 1 + rnd(G->g, max), i;

	b[0] = (char)('a' + rnd(G->g, 26));
	for (i = 1; i < len; i++)
		b[i] = cs[rnd(G->g, sizeof(cs) - 1)];
	b[len] = '\0';
}

static const char *ethtxt(struct gen *G, char *b, size_t n, uint16_t v)
{
	if (v == 0x0800 && chance(G->g, 60))
		return chance(G->g, 50) ? "ipv4" : "ip";
	if (v == 0x86dd && chance(G->g, 60))
		return "ipv6";
	if (v == 0x0806 && chance(G->g, 60))
		return "arp";
	if (v == 0x8100 && chance(G->g, 60))
		return "802.1Q";
	if (v == 0x88a8 && chance(G->g, 60))
		return "802.1ad";
	return num(G, b, n, v);
}

static uint16_t non_ip_ethtype(struct gen *G)
{
	uint16_t v;

	if (chance(G->g, 30))
		return 0x0806;
	do
		v = (uint16_t)rnext(G->g);
	while (v == 0x0800 || v == 0x86dd || v == 0x8100 || v == 0x88a8);
	return v;
}

static void tci(__be16 *v, __be16 *m, uint16_t val, uint16_t mask)
{
	*v = htons((uint16_t)(ntohs(*v) | val));
	*m = htons((uint16_t)(ntohs(*m) | mask));
}

/* One random valid rule: clauses in G->cl, the struct it means in G->w. */
static void gen_rule(struct gen *G, bool raw)
{
	struct xtcam_rule *w = &G->w;
	struct rng *g = G->g;
	char b[160], x[24];
	int fam = (int)rnd(g, 3) * 2;    /* 0, 2 (=4), 4 (=6) */
	bool noip = false, eth_all = false, l4 = false, tpid = false;
	uint16_t ethv = 0;
	int proto = -1;                  /* none */
	uint32_t v, m;

	fam = fam == 2 ? 4 : fam == 4 ? 6 : 0;
	G->n = 0;
	xtcam_rule_init(w);

	/* prio, handle */
	w->prio = 1 + rnd(g, 65535);
	clause(G, "%s %s", chance(g, 10) ? "pref" : "prio",
	       num(G, x, sizeof(x), w->prio));
	if (chance(g, 50)) {
		w->handle = 1 + (uint32_t)(rnext(g) % 0xffffffffu);
		clause(G, "handle %s", num(G, x, sizeof(x), w->handle));
	}

	/* action */
	switch (rnd(g, 5)) {
	case 0:
		w->action.type = XTCAM_ACT_DROP;
		clause(G, "action %s", chance(g, 20) ? "shot" : "drop");
		break;
	case 1:
		w->action.type = XTCAM_ACT_PASS;
		clause(G, "action %s", chance(g, 20) ? "ok" : "pass");
		break;
	case 2:
		w->action.type = XTCAM_ACT_TX;
		clause(G, "action tx");
		break;
	case 3:
		w->action.type = XTCAM_ACT_REDIRECT;
		name(G, w->action.dev, XTCAM_IFNAME_MAX - 1);
		if (chance(g, 50)) {
			name(G, w->action.netns, XTCAM_NETNS_MAX - 1);
			clause(G, "action redirect dev %s netns %s", w->action.dev,
			       w->action.netns);
		} else {
			clause(G, "action redirect dev %s", w->action.dev);
		}
		break;
	default:
		w->action.type = XTCAM_ACT_CPU;
		w->action.cpu = rnd(g, XTCAM_CPU_MAX + 1);
		clause(G, "action cpu %s", num(G, x, sizeof(x), w->action.cpu));
		break;
	}

	/* L3 protocol */
	if (fam && chance(g, 40)) {
		ethv = fam == 4 ? 0x0800 : 0x86dd;
	} else if (!fam) {
		unsigned k = rnd(g, 10);

		if (k < 2) {
			eth_all = true;
		} else if (k < 4) {
			noip = true;
			ethv = non_ip_ethtype(G);
		}
	}
	if (ethv || eth_all) {
		w->keywords |= KW(ETH_TYPE);
		if (ethv) {
			w->value.eth_type = htons(ethv);
			w->mask.eth_type = 0xffff;
		}
		clause(G, "eth_type %s",
		       eth_all ? "all" : ethtxt(G, x, sizeof(x), ethv));
	}

	/* addresses */
	if (fam) {
		size_t n = fam == 4 ? 4 : 16;

		if (chance(g, 60)) {
			addr(G, b, sizeof(b), n, (uint8_t *)w->value.src_ip,
			     (uint8_t *)w->mask.src_ip);
			w->keywords |= KW(SRC_IP);
			clause(G, "src_ip %s", b);
		}
		if (chance(g, 60)) {
			addr(G, b, sizeof(b), n, (uint8_t *)w->value.dst_ip,
			     (uint8_t *)w->mask.dst_ip);
			w->keywords |= KW(DST_IP);
			clause(G, "dst_ip %s", b);
		}
	}

	/* ip_proto */
	if (!noip && chance(g, 60)) {
		static const struct { int v; const char *n; } p[] = {
			{ 6, "tcp" }, { 17, "udp" }, { 132, "sctp" },
			{ 136, "udplite" }, { -1, NULL }, { 1, "icmp" },
			{ 58, "icmpv6" }, { 50, "esp" }, { 51, "ah" },
			{ 115, "l2tp" },
		};
		unsigned k;

		do
			k = rnd(g, ARRAY_SIZE(p));
		while ((p[k].v == 1 && (fam == 6 || eth_all)) ||
		       (p[k].v == 58 && (fam == 4 || eth_all)));
		if (p[k].v < 0) {
			do
				proto = (int)rnd(g, 256);
			while (proto == 1 || proto == 6 || proto == 17 ||
			       proto == 58 || proto == 132 || proto == 136 ||
			       proto == 50 || proto == 51 || proto == 115);
			clause(G, "ip_proto %s",
			       numb(G, x, sizeof(x), (unsigned)proto, B_HEX));
		} else {
			proto = p[k].v;
			clause(G, "ip_proto %s", chance(g, 70) ? p[k].n :
			       numb(G, x, sizeof(x), (unsigned)proto, B_HEX));
		}
		w->keywords |= KW(IP_PROTO);
		w->value.ip_proto = (__u8)proto;
		w->mask.ip_proto = 0xff;
		if (proto == 1 && !fam)
			fam = 4;
		if (proto == 58 && !fam)
			fam = 6;
	}
	/* the implied family */
	if (!(w->keywords & KW(ETH_TYPE)) &&
	    ((w->keywords & (KW(SRC_IP) | KW(DST_IP))) || proto == 1 ||
	     proto == 58)) {
		w->value.eth_type = htons(fam == 4 ? 0x0800 : 0x86dd);
		w->mask.eth_type = 0xffff;
	}

	/* ip_tos, ip_ttl */
	if (!noip && chance(g, 30)) {
		masked_b(G, b, sizeof(b), 8, B_DEC_HEX, B_HEX, &v, &m);
		w->keywords |= KW(IP_TOS);
		w->value.ip_tos = (__u8)v;
		w->mask.ip_tos = (__u8)m;
		clause(G, "ip_tos %s", b);
	}
	if (!noip && chance(g, 30)) {
		masked_b(G, b, sizeof(b), 8, B_DEC_HEX, B_HEX, &v, &m);
		w->keywords |= KW(IP_TTL);
		w->value.ip_ttl = (__u8)v;
		w->mask.ip_ttl = (__u8)m;
		clause(G, "ip_ttl %s", b);
	}

	/* ports, tcp_flags, type/code */
	if (proto == 6 || proto == 17 || proto == 132 || proto == 136) {
		int k;

		for (k = 0; k < 2; k++) {
			uint16_t lo, hi;

			if (!chance(g, 50))
				continue;
			switch (rnd(g, 3)) {
			case 0:
				lo = hi = (uint16_t)rnext(g);
				snprintf(b, sizeof(b), "%s", num(G, x, sizeof(x), lo));
				break;
			case 1:
				lo = (uint16_t)rnext(g);
				hi = (uint16_t)(lo + rnd(g, 65536 - lo));
				snprintf(b, sizeof(b), "%u-%u", lo, hi);
				break;
			default: {
				unsigned len = rnd(g, 17);
				uint16_t pm = len ? (uint16_t)(0xffff << (16 - len)) : 0;
				uint16_t pv = (uint16_t)rnext(g);
				char y[24];

				lo = pv & pm;
				hi = lo | (uint16_t)~pm;
				snprintf(b, sizeof(b), "%s/%s", num(G, x, sizeof(x), pv),
					 num(G, y, sizeof(y), pm));
				break;
			}
			}
			if (k == 0) {
				w->keywords |= KW(SRC_PORT);
				w->sport_lo = lo, w->sport_hi = hi;
				clause(G, "src_port %s", b);
			} else {
				w->keywords |= KW(DST_PORT);
				w->dport_lo = lo, w->dport_hi = hi;
				clause(G, "dst_port %s", b);
			}
			l4 = true;
		}
	}
	if (proto == 6 && chance(g, 40)) {
		masked_b(G, b, sizeof(b), 12, B_HEX, B_HEX, &v, &m);
		w->keywords |= KW(TCP_FLAGS);
		w->value.tcp_flags = htons((uint16_t)v);
		w->mask.tcp_flags = htons((uint16_t)m);
		clause(G, "tcp_flags %s", b);
		l4 = true;
	}
	if (proto == 1 || proto == 58) {
		if (chance(g, 50)) {
			masked(G, b, sizeof(b), 8, &v, &m);
			w->keywords |= KW(TYPE);
			w->value.icmp_type = (__u8)v;
			w->mask.icmp_type = (__u8)m;
			clause(G, "type %s", b);
			l4 = true;
		}
		if (chance(g, 50)) {
			masked(G, b, sizeof(b), 8, &v, &m);
			w->keywords |= KW(CODE);
			w->value.icmp_code = (__u8)v;
			w->mask.icmp_code = (__u8)m;
			clause(G, "code %s", b);
			l4 = true;
		}
	}

	/* raw fields: blk_raw() has raw1 l3 1 byte, raw2 l4 4 bytes */
	if (raw && chance(g, 25)) {
		masked(G, b, sizeof(b), 8, &v, &m);
		w->keywords |= KW(RAW1);
		w->value.raw1 = htonl(v);
		w->mask.raw1 = htonl(m);
		clause(G, "raw1 %s", b);
	}
	if (raw && chance(g, 25)) {
		masked(G, b, sizeof(b), 32, &v, &m);
		w->keywords |= KW(RAW2);
		w->value.raw2 = htonl(v);
		w->mask.raw2 = htonl(m);
		clause(G, "raw2 %s", b);
		l4 = true;
	}

	/* MACs */
	if (chance(g, 30)) {
		addr(G, b, sizeof(b), 6, w->value.src_mac, w->mask.src_mac);
		w->keywords |= KW(SRC_MAC);
		clause(G, "src_mac %s", b);
	}
	if (chance(g, 30)) {
		addr(G, b, sizeof(b), 6, w->value.dst_mac, w->mask.dst_mac);
		w->keywords |= KW(DST_MAC);
		clause(G, "dst_mac %s", b);
	}

	/* VLANs */
	{
		unsigned mode = rnd(g, 4);  /* none, tagged, untagged, fields */
		uint16_t l3 = noip ? ethv : fam == 4 ? 0x0800 : fam == 6 ? 0x86dd :
			      chance(g, 50) ? 0x0800 : 0x86dd;

		if (mode == 1 || mode == 2) {
			w->keywords |= KW(VLAN);
			w->mask.flags |= XTCAM_F_VLAN1;
			if (mode == 1)
				w->value.flags |= XTCAM_F_VLAN1;
			clause(G, "vlan %s", mode == 1 ? "tagged" : "untagged");
		}
		if (mode == 1 || mode == 3) {
			if (chance(g, 40)) {
				v = rnd(g, 4096);
				tci(&w->value.vlan_tci, &w->mask.vlan_tci, (uint16_t)v,
				    0x0fff);
				w->keywords |= KW(VLAN_ID);
				clause(G, "vlan_id %s", num(G, x, sizeof(x), v));
			}
			if (chance(g, 30)) {
				v = rnd(g, 8);
				tci(&w->value.vlan_tci, &w->mask.vlan_tci,
				    (uint16_t)(v << 13), 0xe000);
				w->keywords |= KW(VLAN_PRIO);
				clause(G, "vlan_prio %s", num(G, x, sizeof(x), v));
			}
			tpid = true;
			if (chance(g, 30)) {
				uint16_t e = l3;

				if (chance(g, 50))
					e = chance(g, 50) ? 0x8100 : 0x88a8;
				else
					tpid = false;
				w->keywords |= KW(VLAN_ETHTYPE);
				w->value.vlan_ethtype = htons(e);
				w->mask.vlan_ethtype = 0xffff;
				clause(G, "vlan_ethtype %s", ethtxt(G, x, sizeof(x), e));
			}
			if (tpid && chance(g, 30)) {
				v = rnd(g, 4096);
				tci(&w->value.cvlan_tci, &w->mask.cvlan_tci, (uint16_t)v,
				    0x0fff);
				w->keywords |= KW(CVLAN_ID);
				clause(G, "cvlan_id %s", num(G, x, sizeof(x), v));
			}
			if (tpid && chance(g, 30)) {
				v = rnd(g, 8);
				tci(&w->value.cvlan_tci, &w->mask.cvlan_tci,
				    (uint16_t)(v << 13), 0xe000);
				w->keywords |= KW(CVLAN_PRIO);
				clause(G, "cvlan_prio %s", num(G, x, sizeof(x), v));
			}
			if (tpid && chance(g, 30)) {
				w->keywords |= KW(CVLAN_ETHTYPE);
				w->value.cvlan_ethtype = htons(l3);
				w->mask.cvlan_ethtype = 0xffff;
				clause(G, "cvlan_ethtype %s", ethtxt(G, x, sizeof(x), l3));
			}
		}
	}

	/* ip_flags last: frag/nofirstfrag only without L4 matches */
	if (!noip && chance(g, 30)) {
		static const struct { const char *s; __u16 v, m; bool later; } f[] = {
			{ "frag", XTCAM_F_FRAG, XTCAM_F_FRAG, false },
			{ "nofrag", 0, XTCAM_F_FRAG, false },
			{ "firstfrag", XTCAM_F_FIRSTFRAG, XTCAM_F_FIRSTFRAG, false },
			{ "nofirstfrag", 0, XTCAM_F_FIRSTFRAG, false },
			{ "frag/firstfrag", XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG,
			  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG, false },
			{ "firstfrag/frag", XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG,
			  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG, false },
			{ "nofrag/nofirstfrag", 0, XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG,
			  false },
			{ "nofirstfrag/nofrag", 0, XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG,
			  false },
			{ "frag/nofirstfrag", XTCAM_F_FRAG,
			  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG, true },
			{ "nofirstfrag/frag", XTCAM_F_FRAG,
			  XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG, true },
		};
		unsigned k;

		do
			k = rnd(g, ARRAY_SIZE(f));
		while (f[k].later && l4);
		w->keywords |= KW(IP_FLAGS);
		w->value.flags |= f[k].v;
		w->mask.flags |= f[k].m;
		clause(G, "ip_flags %s", f[k].s);
	}
}

static void join(struct gen *G, char *line, size_t n)
{
	int i, j;

	/* any order */
	for (i = G->n - 1; i > 0; i--) {
		char t[sizeof(G->cl[0])];

		j = (int)rnd(G->g, (unsigned)i + 1);
		memcpy(t, G->cl[i], sizeof(t));
		memcpy(G->cl[i], G->cl[j], sizeof(t));
		memcpy(G->cl[j], t, sizeof(t));
	}
	line[0] = '\0';
	for (i = 0; i < G->n; i++) {
		if (i)
			strncat(line, " ", n - strlen(line) - 1);
		strncat(line, G->cl[i], n - strlen(line) - 1);
	}
}

Test(roundtrip, randomized)
{
	uint64_t seed = env_u64("XTCAM_SEED", 0x20261203);
	unsigned rounds = (unsigned)env_u64("XTCAM_ROUNDS", 4000), i;
	struct rng g = { seed };
	struct gen G = { .g = &g };
	unsigned long long kwseen = 0;

	cr_log_info("randomized round trip: XTCAM_SEED=%#llx XTCAM_ROUNDS=%u",
		    (unsigned long long)seed, rounds);
	for (i = 0; i < rounds; i++) {
		char line[2048], ctx[2200], text[XTCAM_RULE_TEXT_MAX], d[2048];
		char err[XTCAM_ERR_MAX];
		bool raw = chance(&g, 50);
		struct xtcam_rule r;
		struct json_object *j;
		struct words wd;
		int rc;

		/* a quarter of the rules as an older xtcam wrote them, read
		 * with XTCAM_PARSE_DECIMAL */
		G.dec = chance(&g, 25);
		gen_rule(&G, raw);
		join(&G, line, sizeof(line));
		snprintf(ctx, sizeof(ctx), "XTCAM_SEED=%#llx round %u%s: \"%s\"",
			 (unsigned long long)seed, i, G.dec ? " (decimal)" : "",
			 line);
		words_split(&wd, line);
		memset(&r, 0x5a, sizeof(r));
		rc = xtcam_rule_parse_flags(wd.argc, wd.argv, &r,
					    raw ? blk_raw() : NULL,
					    G.dec ? XTCAM_PARSE_DECIMAL : 0, err,
					    sizeof(err));
		words_free(&wd);
		cr_assert_eq(rc, 0, "%s: rc %d (%s)", ctx, rc, err);
		check_invariants(&r, ctx);
		cr_assert(!rule_diff(&r, &G.w, d, sizeof(d)),
			  "%s: parsed != model:%s", ctx, d);
		roundtrip(&r, raw ? blk_raw() : NULL, text, ctx);
		kwseen |= r.keywords;

		/* JSON has exactly the keywords the text shows */
		j = xtcam_rule_match_json(&r, raw ? blk_raw() : NULL);
		cr_assert(j, "%s: no JSON", ctx);
		{
			int k, shown = 0;

			for (k = 0; k < XTCAM_KW_MAX; k++)
				shown += xtcam_kw_present(&r, k);
			cr_assert_eq(json_object_object_length(j), shown, "%s", ctx);
		}
		json_object_put(j);
	}
	/* the keywords up to raw2; the later ones (flower's headers that
	 * are not IP, protocol, indev) have their table in
	 * test_syntax_flower.c */
	cr_assert_eq(kwseen, (1ull << (XTCAM_KW_RAW2 + 1)) - 1,
		     "the generator missed keywords: %#llx", kwseen);
}

/* --- fuzz ------------------------------------------------------------------ */

Test(roundtrip, word_soup)
{
	static const char *const vocab[] = {
		"prio", "pref", "handle", "action", "drop", "pass", "tx", "redirect",
		"dev", "netns", "cpu", "src_mac", "dst_mac", "vlan", "tagged",
		"untagged", "vlan_id", "vlan_prio", "vlan_ethtype", "cvlan_id",
		"cvlan_prio", "cvlan_ethtype", "eth_type", "protocol", "all",
		"ipv4", "ipv6", "arp", "802.1Q", "ip_proto", "tcp", "udp", "icmp",
		"icmpv6", "sctp", "src_ip", "dst_ip", "ip_tos", "ip_ttl",
		"ip_flags", "frag", "nofrag/firstfrag", "frag/nofirstfrag",
		"src_port", "dst_port", "tcp_flags", "type", "code", "raw1",
		"raw2", "0", "1", "7", "80", "65535", "65536", "1-2", "2-1",
		"0x12/0x1f", "10.0.0.0/8", "::1", "1.2.3.4/33", "fe80::/10",
		"00:11:22:33:44:55", "00:11:22:33:44:55/24", "4095", "4096",
		"0xfff", "eth0", "ns1", "#", "", "/", "-", "0x", "256",
	};
	uint64_t seed = env_u64("XTCAM_SEED", 0x20261203) ^ 0x5eed;
	struct rng g = { seed };
	unsigned i, ok = 0;

	for (i = 0; i < 20000; i++) {
		char *argv[16], ctx[1024], text[XTCAM_RULE_TEXT_MAX];
		char err[XTCAM_ERR_MAX];
		struct xtcam_rule r;
		const struct xtcam_block_spec *b = chance(&g, 50) ? blk_raw() : NULL;
		int argc = (int)rnd(&g, 16), k, rc;
		size_t o = 0;
		uint8_t fill = (uint8_t)rnext(&g);

		for (k = 0; k < argc; k++) {
			argv[k] = (char *)vocab[rnd(&g, ARRAY_SIZE(vocab))];
			o += (size_t)snprintf(ctx + o, sizeof(ctx) - o, "%s ",
					      argv[k]);
		}
		/* make a valid rule likelier */
		if (argc >= 4 && chance(&g, 70)) {
			argv[0] = "prio", argv[1] = "3";
			argv[argc - 2] = "action", argv[argc - 1] = "pass";
		}
		memset(&r, fill, sizeof(r));
		rc = xtcam_rule_parse(argc, argv, &r, b, err, sizeof(err));
		if (rc) {
			size_t z;

			cr_assert(rc == -EINVAL || rc == -ERANGE ||
				  rc == -EOPNOTSUPP, "[%s] rc %d", ctx, rc);
			cr_assert(err[0], "[%s] no message", ctx);
			for (z = 0; z < sizeof(r); z++)
				cr_assert_eq(((uint8_t *)&r)[z], fill,
					     "[%s] touched on error", ctx);
			continue;
		}
		ok++;
		check_invariants(&r, ctx);
		roundtrip(&r, b, text, ctx);
	}
	cr_assert(ok > 100, "only %u of the soups parsed", ok);
}
