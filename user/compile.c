// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Rule compiler and reference classifier; see xtcam/compile.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "xtcam/compile.h"

int xtcam_range_prefixes(__u16 lo16, __u16 hi16, struct xtcam_prefix16 *out)
{
	__u32 lo = lo16, hi = hi16;
	int n = 0;

	if (lo > hi)
		return 0;
	while (lo <= hi) {
		/* the largest aligned block starting at lo that fits */
		__u32 size = lo ? (lo & -lo) : 0x10000;

		while (lo + size - 1 > hi)
			size >>= 1;
		if (out) {
			out[n].value = (__u16)lo;
			out[n].mask = (__u16)~(size - 1);
		}
		n++;
		lo += size;
	}
	return n;
}

__u16 xtcam_range_lcp_mask(__u16 lo, __u16 hi)
{
	__u16 diff = lo ^ hi, m = 0xffff;

	while (diff) {
		diff >>= 1;
		m <<= 1;
	}
	return m;
}

static int nonzero(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		if (*c++)
			return 1;
	return 0;
}

#define FIELD_SET(m, f) nonzero(&(m)->f, sizeof((m)->f))

/* Whether a rule's eth_type (exact) is one whose frames hold a non-IP
 * header in the IP fields (key.h). */
static int l3x_rule(const struct xtcam_rule *r)
{
	__u16 t = ntohs(r->value.eth_type);

	return r->mask.eth_type == 0xffff &&
	       (t == 0x0806 || t == 0x8035 || t == 0x8847 || t == 0x8848 ||
		t == 0x8864 || t == 0x8902);
}

__u16 xtcam_rule_required_flags(const struct xtcam_rule *r)
{
	const struct xtcam_key *m = &r->mask;
	int ip = !l3x_rule(r);
	__u16 f = 0;

	/* ARP, MPLS, PPPoE, CFM: the IP fields hold that header */
	if (!ip && (FIELD_SET(m, src_ip) || FIELD_SET(m, dst_ip) ||
		    FIELD_SET(m, ip_tos) || FIELD_SET(m, ip_ttl) ||
		    FIELD_SET(m, ip_proto)))
		f |= XTCAM_F_ETH | XTCAM_F_L3X;

	if (FIELD_SET(m, dst_mac) || FIELD_SET(m, src_mac) ||
	    FIELD_SET(m, eth_type))
		f |= XTCAM_F_ETH;
	if (FIELD_SET(m, vlan_tci) || FIELD_SET(m, vlan_ethtype))
		f |= XTCAM_F_ETH | XTCAM_F_VLAN1;
	if (FIELD_SET(m, cvlan_tci) || FIELD_SET(m, cvlan_ethtype))
		f |= XTCAM_F_ETH | XTCAM_F_VLAN1 | XTCAM_F_VLAN2;
	if (ip && (FIELD_SET(m, src_ip) || FIELD_SET(m, dst_ip) ||
		   FIELD_SET(m, ip_tos) || FIELD_SET(m, ip_ttl)))
		f |= XTCAM_F_ETH | XTCAM_F_L3;
	if (ip && FIELD_SET(m, ip_proto))
		f |= XTCAM_F_ETH | XTCAM_F_PROTO;
	if (m->flags & (XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG))
		f |= XTCAM_F_ETH | XTCAM_F_PROTO;
	if ((r->keywords & (XTCAM_KW_BIT(XTCAM_KW_SRC_PORT) |
			    XTCAM_KW_BIT(XTCAM_KW_DST_PORT))) ||
	    r->sport_lo || r->sport_hi != 0xffff ||
	    r->dport_lo || r->dport_hi != 0xffff)
		f |= XTCAM_F_ETH | XTCAM_F_PROTO | XTCAM_F_L4;
	if (FIELD_SET(m, tcp_flags))
		f |= XTCAM_F_ETH | XTCAM_F_PROTO | XTCAM_F_TCPFL;
	if (FIELD_SET(m, icmp_type) || FIELD_SET(m, icmp_code))
		f |= XTCAM_F_ETH | XTCAM_F_PROTO | XTCAM_F_ICMP;
	if (FIELD_SET(m, raw1))
		f |= XTCAM_F_RAW1;
	if (FIELD_SET(m, raw2))
		f |= XTCAM_F_RAW2;
	return f;
}

static int rule_check(const struct xtcam_rule *r)
{
	const __u64 *v = (const __u64 *)&r->value, *m = (const __u64 *)&r->mask;
	size_t i;

	if (r->prio < 1 || r->prio > 65535 || r->handle == 0)
		return -EINVAL;
	if (r->sport_lo > r->sport_hi || r->dport_lo > r->dport_hi)
		return -EINVAL;
	for (i = 0; i < XTCAM_KEY_WORDS; i++)
		if (v[i] & ~m[i])
			return -EINVAL;
	if (r->mask.src_port || r->mask.dst_port || r->mask.pad0)
		return -EINVAL;
	return 0;
}

__u32 xtcam_rule_entries(const struct xtcam_rule *r)
{
	return (__u32)xtcam_range_prefixes(r->sport_lo, r->sport_hi, NULL) *
	       (__u32)xtcam_range_prefixes(r->dport_lo, r->dport_hi, NULL);
}

int xtcam_rule_compile(const struct xtcam_rule *r, struct xtcam_rec *rec)
{
	__u16 req;
	int err = rule_check(r);

	if (err)
		return err;
	memset(rec, 0, sizeof(*rec));
	rec->value = r->value;
	rec->mask = r->mask;
	req = xtcam_rule_required_flags(r);
	/* a flag the rule wants absent that one of its fields needs: the rule
	 * could never match (the syntax layer reports which keywords clash) */
	if (r->mask.flags & req & ~r->value.flags)
		return -EINVAL;
	rec->mask.flags |= req;
	rec->value.flags |= req;
	rec->sport_lo = r->sport_lo;
	rec->sport_hi = r->sport_hi;
	rec->dport_lo = r->dport_lo;
	rec->dport_hi = r->dport_hi;
	rec->rank = xtcam_rule_rank(r);
	rec->entries = xtcam_rule_entries(r);
	rec->wmap = xtcam_wmap((const __u64 *)&rec->mask);
	return 0;
}

int xtcam_rule_expand(const struct xtcam_rule *r, struct xtcam_entry *out,
		      size_t max)
{
	struct xtcam_prefix16 sp[32], dp[32];
	struct xtcam_rec rec;
	int ns, nd, i, j, err;
	size_t n = 0;

	err = xtcam_rule_compile(r, &rec);
	if (err)
		return err;
	ns = xtcam_range_prefixes(r->sport_lo, r->sport_hi, sp);
	nd = xtcam_range_prefixes(r->dport_lo, r->dport_hi, dp);
	if ((size_t)ns * nd > max)
		return -ENOSPC;
	for (i = 0; i < ns; i++) {
		for (j = 0; j < nd; j++) {
			struct xtcam_entry *e = &out[n++];

			e->value = rec.value;
			e->mask = rec.mask;
			e->value.src_port = htons(sp[i].value);
			e->mask.src_port = htons(sp[i].mask);
			e->value.dst_port = htons(dp[j].value);
			e->mask.dst_port = htons(dp[j].mask);
			e->rank = rec.rank;
			e->handle = r->handle;
		}
	}
	return (int)n;
}

int xtcam_rec_match(const struct xtcam_rec *rec, const struct xtcam_key *k)
{
	const __u64 *w = (const __u64 *)k;
	const __u64 *v = (const __u64 *)&rec->value;
	const __u64 *m = (const __u64 *)&rec->mask;
	__u16 sp = ntohs(k->src_port), dp = ntohs(k->dst_port);
	size_t i;

	for (i = 0; i < XTCAM_KEY_WORDS; i++)
		if ((w[i] & m[i]) != v[i])
			return 0;
	return sp >= rec->sport_lo && sp <= rec->sport_hi &&
	       dp >= rec->dport_lo && dp <= rec->dport_hi;
}

void xtcam_oracle_init(struct xtcam_oracle *o)
{
	memset(o, 0, sizeof(*o));
}

void xtcam_oracle_free(struct xtcam_oracle *o)
{
	free(o->e);
	memset(o, 0, sizeof(*o));
}

int xtcam_oracle_add(struct xtcam_oracle *o, const struct xtcam_rule *r)
{
	__u32 need = xtcam_rule_entries(r);
	int n;

	if (o->n + need > o->cap) {
		size_t cap = o->cap ? o->cap : 64;
		struct xtcam_entry *e;

		while (cap < o->n + need)
			cap *= 2;
		e = realloc(o->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		o->e = e;
		o->cap = cap;
	}
	n = xtcam_rule_expand(r, o->e + o->n, o->cap - o->n);
	if (n < 0)
		return n;
	o->n += n;
	return 0;
}

const struct xtcam_entry *xtcam_oracle_lookup(const struct xtcam_oracle *o,
					      const struct xtcam_key *k)
{
	const struct xtcam_entry *best = NULL;
	const __u64 *w = (const __u64 *)k;
	size_t i, j;

	for (i = 0; i < o->n; i++) {
		const struct xtcam_entry *e = &o->e[i];
		const __u64 *v = (const __u64 *)&e->value;
		const __u64 *m = (const __u64 *)&e->mask;

		if (best && e->rank >= best->rank)
			continue;
		for (j = 0; j < XTCAM_KEY_WORDS; j++)
			if ((w[j] & m[j]) != v[j])
				break;
		if (j == XTCAM_KEY_WORDS)
			best = e;
	}
	return best;
}
