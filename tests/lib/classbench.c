// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/compile.h"
#include "classbench.h"

/* Prefix lengths and their weights (percent): most ACL prefixes are
 * wildcards, /24s or hosts. */
static const int plen4[] = { 0, 8, 12, 16, 20, 24, 28, 30, 32 };
static const int plen6[] = { 0, 16, 32, 40, 48, 56, 64, 96, 128 };
static const int plen_w[] = { 25, 3, 3, 8, 5, 22, 6, 3, 25 };

static const uint16_t services[] = { 20, 21, 22, 23, 25, 53, 67, 80, 110, 123,
				     137, 143, 161, 389, 443, 445, 514, 993,
				     995, 1433, 1521, 3306, 3389, 5060, 5432,
				     8080, 8443 };
#define NSERV (sizeof(services) / sizeof(services[0]))

/* the usual port classes of ACLs */
static const uint16_t classes[][2] = { { 0, 1023 }, { 1024, 65535 },
				       { 49152, 65535 }, { 1024, 49151 },
				       { 6000, 6063 } };
#define NCLASS (sizeof(classes) / sizeof(classes[0]))

static int draw_plen(struct t_rng *g, bool v6)
{
	int r = (int)t_below(g, 100), i;

	for (i = 0; i < 9; i++) {
		if (r < plen_w[i])
			return v6 ? plen6[i] : plen4[i];
		r -= plen_w[i];
	}
	return v6 ? 128 : 32;
}

static void addr4(struct t_rng *g, const struct cb_set *s, uint8_t *a)
{
	uint32_t v = htonl(s->c4[t_below(g, CB_CLUSTERS)] | (uint32_t)(t_rand(g) & 0xffff));

	memset(a, 0, 16);
	memcpy(a, &v, 4);
}

static void addr6(struct t_rng *g, const struct cb_set *s, uint8_t *a)
{
	uint64_t lo = t_rand(g), mid = t_rand(g);

	memcpy(a, s->c6[t_below(g, CB_CLUSTERS)], 6);
	memcpy(a + 6, &mid, 2);
	memcpy(a + 8, &lo, 8);
}

/* dst: 40% any, 35% a service, 15% a class, 10% an arbitrary range;
 * src: 85% any, 10% 1024-65535, 5% one port */
static void draw_ports(struct t_rng *g, struct xtcam_rule *r, bool dst)
{
	uint32_t c = t_below(g, 100);
	uint16_t lo = 0, hi = 0xffff;

	if (dst) {
		if (c < 40) {
		} else if (c < 75) {
			lo = hi = services[t_below(g, NSERV)];
		} else if (c < 90) {
			int k = (int)t_below(g, NCLASS);

			lo = classes[k][0];
			hi = classes[k][1];
		} else {
			lo = (uint16_t)(1 + t_below(g, 40000));
			hi = (uint16_t)(lo + t_below(g, 20000));
		}
		r->dport_lo = lo;
		r->dport_hi = hi;
		if (lo || hi != 0xffff)
			r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
	} else {
		if (c < 85) {
		} else if (c < 95) {
			lo = 1024;
		} else {
			lo = hi = (uint16_t)(1024 + t_below(g, 60000));
		}
		r->sport_lo = lo;
		r->sport_hi = hi;
		if (lo || hi != 0xffff)
			r->keywords |= XTCAM_KW_BIT(XTCAM_KW_SRC_PORT);
	}
}

static uint32_t host4(const uint8_t *a)
{
	uint32_t v;

	memcpy(&v, a, 4);
	return ntohl(v);
}

static void gen_rule(struct t_rng *g, const struct cb_set *s, size_t i,
		     struct xtcam_rule *r)
{
	bool v6 = s->p.family == 6 || (s->p.family == 0 && (i & 1));
	int sp = draw_plen(g, v6), dp = draw_plen(g, v6);
	uint32_t c;
	uint8_t a[16];

	t_rule(r, 1 + (uint32_t)((uint64_t)i * 65534 / s->n), (uint32_t)(i + 1));
	r->action.type = t_below(g, 100) < s->p.pass_pct ? XTCAM_ACT_PASS : XTCAM_ACT_DROP;
	/* an ACL line that names neither address is rare: give it a destination */
	while (!sp && !dp)
		dp = draw_plen(g, v6);
	t_match_ethtype(r, v6 ? 0x86dd : 0x0800);
	if (sp) {
		v6 ? addr6(g, s, a) : addr4(g, s, a);
		if (v6)
			t_match_ip6(r, true, a, sp);
		else
			t_match_ip4(r, true, host4(a), sp);
	}
	if (dp) {
		v6 ? addr6(g, s, a) : addr4(g, s, a);
		if (v6)
			t_match_ip6(r, false, a, dp);
		else
			t_match_ip4(r, false, host4(a), dp);
	}
	/* protocol: tcp 45%, udp 35%, icmp 5%, any 15% */
	c = t_below(g, 100);
	if (c < 45)
		t_match_proto(r, IPPROTO_TCP);
	else if (c < 80)
		t_match_proto(r, IPPROTO_UDP);
	else if (c < 85)
		t_match_proto(r, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (c < 80) {
		draw_ports(g, r, true);
		draw_ports(g, r, false);
	}
}

int cb_generate(struct cb_set *s, const struct cb_params *p, uint64_t seed)
{
	struct t_rng g = { seed };
	size_t i;

	memset(s, 0, sizeof(*s));
	s->p = *p;
	s->n = p->nrules;
	for (i = 0; i < CB_CLUSTERS; i++) {
		uint64_t r = t_rand(&g);

		/* v4: a /16 anywhere in unicast space; v6: a /48 in 2001:db8::/32 */
		s->c4[i] = (uint32_t)(((1 + r % 223) << 24) | (((r >> 8) & 0xff) << 16));
		s->c6[i][0] = 0x20;
		s->c6[i][1] = 0x01;
		s->c6[i][2] = 0x0d;
		s->c6[i][3] = 0xb8;
		s->c6[i][4] = (uint8_t)(r >> 16);
		s->c6[i][5] = (uint8_t)(r >> 24);
	}
	s->rules = calloc(s->n ? s->n : 1, sizeof(*s->rules));
	if (!s->rules)
		return -ENOMEM;
	for (i = 0; i < s->n; i++)
		gen_rule(&g, s, i, &s->rules[i]);
	return 0;
}

void cb_free(struct cb_set *s)
{
	free(s->rules);
	s->rules = NULL;
	s->n = 0;
}

static uint16_t in_range(struct t_rng *g, uint16_t lo, uint16_t hi)
{
	return (uint16_t)(lo + t_below(g, (uint32_t)(hi - lo) + 1));
}

void cb_packet(struct t_rng *g, const struct cb_set *s,
	       const struct xtcam_rule *r, struct pkt_spec *ps)
{
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, 47 };
	bool v6;
	int i;

	pkt_spec_init(ps);
	if (r)
		v6 = ntohs(r->value.eth_type) == 0x86dd;
	else
		v6 = s->p.family == 6 || (s->p.family == 0 && t_below(g, 2));
	ps->eth_type = v6 ? 0x86dd : 0x0800;
	if (v6) {
		addr6(g, s, ps->saddr);
		addr6(g, s, ps->daddr);
	} else {
		addr4(g, s, ps->saddr);
		addr4(g, s, ps->daddr);
	}
	ps->proto = protos[t_below(g, 4)];
	if (v6 && ps->proto == IPPROTO_ICMP)
		ps->proto = IPPROTO_ICMPV6;
	ps->sport = (uint16_t)(1024 + t_below(g, 64512));
	ps->dport = t_below(g, 2) ? services[t_below(g, NSERV)] : (uint16_t)t_rand(g);
	ps->tcp_flags = t_below(g, 2) ? 0x002 : 0x010;
	ps->icmp_type = 8;
	/* now and then a VLAN tag: eth_type is what follows it */
	if (t_below(g, 8) == 0) {
		ps->nvlan = 1;
		ps->tpid[0] = 0x8100;
		ps->tci[0] = (uint16_t)(1 + t_below(g, 4094));
	}
	if (!r)
		return;
	for (i = 0; i < 16; i++) {
		const uint8_t *vs = (const uint8_t *)r->value.src_ip;
		const uint8_t *ms = (const uint8_t *)r->mask.src_ip;
		const uint8_t *vd = (const uint8_t *)r->value.dst_ip;
		const uint8_t *md = (const uint8_t *)r->mask.dst_ip;

		ps->saddr[i] = (uint8_t)((ps->saddr[i] & ~ms[i]) | vs[i]);
		ps->daddr[i] = (uint8_t)((ps->daddr[i] & ~md[i]) | vd[i]);
	}
	if (r->mask.ip_proto)
		ps->proto = r->value.ip_proto;
	else if (ps->proto == 47)
		ps->proto = IPPROTO_UDP;
	if (ps->proto != IPPROTO_ICMP && ps->proto != IPPROTO_ICMPV6) {
		ps->sport = in_range(g, r->sport_lo, r->sport_hi);
		ps->dport = in_range(g, r->dport_lo, r->dport_hi);
	}
}

static int mask_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct xtcam_key));
}

int cb_masks(const struct cb_set *s, size_t *masks, size_t *entries)
{
	size_t total = 0, n = 0, i, d = 0;
	struct xtcam_entry *tmp;
	struct xtcam_key *m;

	for (i = 0; i < s->n; i++)
		total += xtcam_rule_entries(&s->rules[i]);
	m = malloc((total ? total : 1) * sizeof(*m));
	tmp = malloc(4096 * sizeof(*tmp));
	if (!m || !tmp) {
		free(m);
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < s->n; i++) {
		int k, ne = xtcam_rule_expand(&s->rules[i], tmp, 4096);

		if (ne < 0) {
			free(m);
			free(tmp);
			return ne;
		}
		for (k = 0; k < ne && n < total; k++)
			m[n++] = tmp[k].mask;
	}
	qsort(m, n, sizeof(*m), mask_cmp);
	for (i = 0; i < n; i++)
		if (!i || mask_cmp(&m[i], &m[i - 1]))
			d++;
	free(m);
	free(tmp);
	*masks = d;
	*entries = total;
	return 0;
}
