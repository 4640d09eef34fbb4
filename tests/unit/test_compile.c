// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The rule compiler and the reference classifier (no kernel). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/compile.h"
#include "tlib.h"
#include "u64map.h"

static bool in_prefixes(const struct xtcam_prefix16 *p, int n, uint32_t x, int *hits)
{
	int i;

	*hits = 0;
	for (i = 0; i < n; i++)
		if ((x & p[i].mask) == p[i].value)
			(*hits)++;
	return *hits > 0;
}

Test(compile, range_1024_65535_is_6_prefixes)
{
	struct xtcam_prefix16 p[32];

	cr_assert_eq(xtcam_range_prefixes(1024, 65535, p), 6);
	cr_assert_eq(p[0].value, 1024);
	cr_assert_eq(p[0].mask, 0xfc00);
	cr_assert_eq(p[5].value, 32768);
	cr_assert_eq(p[5].mask, 0x8000);
	cr_assert_eq(xtcam_range_prefixes(0, 65535, p), 1);
	cr_assert_eq(p[0].mask, 0);
	cr_assert_eq(xtcam_range_prefixes(80, 80, p), 1);
	cr_assert_eq(p[0].mask, 0xffff);
	cr_assert_eq(xtcam_range_prefixes(1, 65534, NULL), 30, "the worst case");
	cr_assert_eq(xtcam_range_prefixes(5, 4, NULL), 0, "reversed: nothing");
}

Test(compile, range_prefixes_exact_and_disjoint)
{
	struct t_rng g = { t_seed(7) };
	struct xtcam_prefix16 p[32];
	int t;

	for (t = 0; t < 120; t++) {
		uint16_t a = (uint16_t)t_rand(&g), b = (uint16_t)t_rand(&g), lo, hi;
		uint32_t x;
		int n, hits;

		if (t < 50)
			b = (uint16_t)(a + t_below(&g, 64));
		lo = a < b ? a : b;
		hi = a < b ? b : a;
		n = xtcam_range_prefixes(lo, hi, p);
		cr_assert_leq(n, 30);
		for (x = 0; x < 65536; x++) {
			bool in = in_prefixes(p, n, x, &hits);

			cr_assert_eq(in, x >= lo && x <= hi, "%u in [%u,%u]", x, lo, hi);
			cr_assert_leq(hits, 1, "prefixes of [%u,%u] overlap at %u", lo, hi, x);
		}
	}
}

Test(compile, lcp_mask)
{
	cr_assert_eq(xtcam_range_lcp_mask(0, 65535), 0);
	cr_assert_eq(xtcam_range_lcp_mask(80, 80), 0xffff);
	cr_assert_eq(xtcam_range_lcp_mask(0, 1023), 0xfc00);
	cr_assert_eq(xtcam_range_lcp_mask(1024, 2047), 0xfc00);
	cr_assert_eq(xtcam_range_lcp_mask(1000, 1100), 0xf800);
	cr_assert_eq(xtcam_range_lcp_mask(0x1200, 0x12ff), 0xff00);
}

Test(compile, presence_flags_added)
{
	struct xtcam_rule r;
	struct xtcam_rec rec;

	t_rule(&r, 1, 1);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), 0);
	cr_assert_eq(rec.mask.flags, 0, "match-all needs nothing");
	t_match_ip4(&r, true, 0x0a000000, 8);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), 0);
	cr_assert_eq(rec.mask.flags, XTCAM_F_ETH | XTCAM_F_L3);
	cr_assert_eq(rec.value.flags, XTCAM_F_ETH | XTCAM_F_L3);
	t_match_proto(&r, IPPROTO_UDP);
	r.dport_lo = r.dport_hi = 53;
	cr_assert_eq(xtcam_rule_compile(&r, &rec), 0);
	cr_assert_eq(rec.mask.flags, XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_L4);
	cr_assert_eq(rec.entries, 1);
	/* a port keyword with the full range still needs a port */
	t_rule(&r, 1, 1);
	t_match_proto(&r, IPPROTO_TCP);
	r.keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), 0);
	cr_assert(rec.mask.flags & XTCAM_F_L4);
	/* cvlan implies both tags */
	t_rule(&r, 1, 1);
	r.value.cvlan_tci = htons(5);
	r.mask.cvlan_tci = htons(0xfff);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), 0);
	cr_assert_eq(rec.mask.flags, XTCAM_F_ETH | XTCAM_F_VLAN1 | XTCAM_F_VLAN2);
}

Test(compile, malformed_rules_refused)
{
	struct xtcam_rule r;
	struct xtcam_rec rec;

	t_rule(&r, 0, 1);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), -EINVAL, "prio 0");
	t_rule(&r, 65536, 1);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), -EINVAL, "prio 65536");
	t_rule(&r, 1, 0);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), -EINVAL, "handle 0");
	t_rule(&r, 1, 1);
	r.dport_lo = 10;
	r.dport_hi = 9;
	cr_assert_eq(xtcam_rule_compile(&r, &rec), -EINVAL, "reversed range");
	t_rule(&r, 1, 1);
	r.value.ip_tos = 0x3;
	r.mask.ip_tos = 0x1;
	cr_assert_eq(xtcam_rule_compile(&r, &rec), -EINVAL, "value outside mask");
	t_rule(&r, 1, 1);
	r.mask.flags = XTCAM_F_VLAN1;      /* untagged ... */
	r.value.vlan_tci = htons(5);       /* ... with a VLAN id */
	r.mask.vlan_tci = htons(0xfff);
	cr_assert_eq(xtcam_rule_compile(&r, &rec), -EINVAL, "contradiction");
}

Test(compile, expand_entries_cross_product)
{
	struct xtcam_entry e[64];
	struct xtcam_rule r;
	int n;

	t_rule(&r, 5, 9);
	t_match_proto(&r, IPPROTO_TCP);
	r.sport_lo = 1024;
	r.sport_hi = 65535;              /* 6 */
	r.dport_lo = 0;
	r.dport_hi = 1023;               /* 1 */
	cr_assert_eq(xtcam_rule_entries(&r), 6);
	n = xtcam_rule_expand(&r, e, 64);
	cr_assert_eq(n, 6);
	cr_assert_eq(e[0].mask.dst_port, htons(0xfc00));
	cr_assert_eq(e[0].rank, XTCAM_RANK(5, 9));
	r.dport_lo = 1;
	r.dport_hi = 65534;              /* 30 */
	cr_assert_eq(xtcam_rule_entries(&r), 180);
	cr_assert_eq(xtcam_rule_expand(&r, e, 64), -ENOSPC);
}

Test(compile, oracle_priority_then_handle)
{
	struct xtcam_oracle o;
	struct xtcam_rule a, b, c;
	struct xtcam_key k;
	const struct xtcam_entry *e;

	xtcam_oracle_init(&o);
	t_rule(&a, 10, 7);
	t_match_ip4(&a, false, 0x0a000000, 8);
	t_rule(&b, 10, 3);                /* same prio, lower handle */
	t_match_ip4(&b, false, 0x0a010000, 16);
	t_rule(&c, 5, 99);                /* lower prio number wins */
	t_match_ip4(&c, false, 0x0a010200, 24);
	cr_assert_eq(xtcam_oracle_add(&o, &a), 0);
	cr_assert_eq(xtcam_oracle_add(&o, &b), 0);
	memset(&k, 0, sizeof(k));
	k.flags = XTCAM_F_ETH | XTCAM_F_L3;
	k.eth_type = htons(0x0800);
	k.dst_ip[0] = htonl(0x0a010203);
	e = xtcam_oracle_lookup(&o, &k);
	cr_assert(e && e->handle == 3, "equal prios: lower handle");
	cr_assert_eq(xtcam_oracle_add(&o, &c), 0);
	e = xtcam_oracle_lookup(&o, &k);
	cr_assert(e && e->handle == 99, "lower prio first");
	k.flags = XTCAM_F_ETH;            /* IPv4 header cut: no L3 */
	cr_assert_null(xtcam_oracle_lookup(&o, &k), "no match on absent fields");
	k.flags = XTCAM_F_ETH | XTCAM_F_L3;
	k.dst_ip[0] = htonl(0x0b000001);
	cr_assert_null(xtcam_oracle_lookup(&o, &k), "miss");
	xtcam_oracle_free(&o);
}

Test(u64map, put_get_del_many)
{
	struct u64map m;
	uint64_t i;
	static int vals[20000];

	u64map_init(&m);
	for (i = 0; i < 20000; i++)
		cr_assert_eq(u64map_put(&m, i * 0x10001, &vals[i]), 0);
	cr_assert_eq(m.n, 20000);
	for (i = 0; i < 20000; i += 2)
		cr_assert_eq(u64map_del(&m, i * 0x10001), &vals[i]);
	for (i = 0; i < 20000; i++)
		cr_assert_eq(u64map_get(&m, i * 0x10001), i % 2 ? &vals[i] : NULL,
			     "key %llu", (unsigned long long)i);
	cr_assert_null(u64map_del(&m, 12345678));
	cr_assert_eq(m.n, 10000);
	u64map_free(&m, NULL);
}
