// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The lookup structure without a kernel: a data path in memory, updated by
 * the same code that updates BPF maps, classified by the C version of the
 * lookup, against the reference classifier, with churn.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/compile.h"
#include "xtcam/dp.h"
#include "tlib.h"
#include "dp_internal.h"

static void churn(enum t_shape shape, uint64_t seed_def, int rounds)
{
	uint64_t seed = t_seed(seed_def);
	struct t_rng g = { seed };
	struct xtcam_block_spec spec = { .capacity = 30000 };
	size_t cap = 6000, n = 0, i;
	struct xtcam_rule *cur = calloc(cap, sizeof(*cur));
	struct xtcam_rule *nr = calloc(cap, sizeof(*nr));
	struct xtcam_dp_op *ops = calloc(cap, sizeof(*ops));
	uint32_t next = 1;
	struct xtcam_dp *dp;
	char err[256];
	int round, e;

	cr_assert(cur && nr && ops);
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	for (round = 0; round < rounds; round++) {
		size_t nops = 0, nn = 0, add;
		struct xtcam_oracle o;

		for (i = 0; i < n; i++) {
			uint32_t c = t_below(&g, 8);

			if (c == 0) {
				ops[nops++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL,
								    .handle = cur[i].handle };
			} else if (c == 1) {
				t_gen_rule(&g, shape, cur[i].handle, &nr[nn]);
				ops[nops++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE,
								    .rule = &nr[nn],
								    .act = { .type = nr[nn].action.type } };
				nn++;
			} else {
				nr[nn++] = cur[i];
			}
		}
		add = round == 0 ? 2000 : t_below(&g, 300);
		for (i = 0; i < add && nn < cap; i++) {
			t_gen_rule(&g, shape, next++, &nr[nn]);
			ops[nops++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &nr[nn],
							    .act = { .type = nr[nn].action.type } };
			nn++;
		}
		e = xtcam_dp_apply(dp, ops, nops, err, sizeof(err));
		cr_assert_eq(e, 0, "seed %#llx round %d: %s", (unsigned long long)seed, round, err);
		memcpy(cur, nr, nn * sizeof(*cur));
		n = nn;
		e = xtcam_dp_verify(dp, err, sizeof(err));
		cr_assert_eq(e, 0, "seed %#llx round %d: %s", (unsigned long long)seed, round, err);
		xtcam_oracle_init(&o);
		for (i = 0; i < n; i++)
			cr_assert_eq(xtcam_oracle_add(&o, &cur[i]), 0);
		for (i = 0; i < 2000; i++) {
			const struct xtcam_entry *ent;
			struct pkt_spec s;
			struct pkt p;
			__u64 rank;

			t_gen_packet(&g, n && t_below(&g, 4) ? &cur[t_below(&g, (uint32_t)n)] : NULL, &s);
			pkt_build(&s, NULL, &p);
			ent = xtcam_oracle_lookup(&o, &p.key);
			rank = xtcam_dp_classify(dp, &p.key, NULL, NULL);
			cr_assert_eq(rank, ent ? ent->rank : XTCAM_RANK_NONE,
				     "seed %#llx round %d packet %zu: %#llx vs reference %#llx",
				     (unsigned long long)seed, round, i, (unsigned long long)rank,
				     (unsigned long long)(ent ? ent->rank : XTCAM_RANK_NONE));
		}
		xtcam_oracle_free(&o);
	}
	xtcam_dp_free(dp);
	free(cur);
	free(nr);
	free(ops);
}

Test(dp_mem, churn_v4, .timeout = 300) { churn(T_SHAPE_V4_5TUPLE, 1, 25); }
Test(dp_mem, churn_v6, .timeout = 300) { churn(T_SHAPE_V6, 2, 25); }
Test(dp_mem, churn_mixed, .timeout = 300) { churn(T_SHAPE_MIXED, 3, 25); }
Test(dp_mem, churn_few_masks, .timeout = 300) { churn(T_SHAPE_FEW_MASKS, 4, 25); }

Test(dp_mem, many_identical_keys_chain)
{
	/* 60 rules that differ only in port ranges: one bucket chain */
	struct xtcam_block_spec spec = { .capacity = 1000 };
	struct xtcam_rule r[60];
	struct xtcam_dp_op ops[60];
	struct xtcam_dp_info info;
	struct xtcam_dp *dp;
	struct xtcam_key k;
	char err[256];
	int i;

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	for (i = 0; i < 60; i++) {
		t_rule(&r[i], 100 - (uint32_t)i, (uint32_t)i + 1);
		t_match_ip4(&r[i], false, 0x0a000001, 32);
		t_match_proto(&r[i], IPPROTO_UDP);
		r[i].dport_lo = (uint16_t)(1000 + 7 * i);
		r[i].dport_hi = (uint16_t)(1000 + 7 * i + 300);
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &r[i],
					      .act = { .type = XTCAM_ACT_DROP } };
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, 60, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_info(dp, &info, true), 0);
	cr_assert_gt(info.max_chain, 1, "overflow elements in use");
	memset(&k, 0, sizeof(k));
	k.flags = XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_L4;
	k.eth_type = htobe16(0x0800);
	k.ip_proto = IPPROTO_UDP;
	k.dst_ip[0] = htobe32(0x0a000001);
	k.dst_port = htobe16(1300);      /* in ranges of i = 0..42; best prio: i = 42 */
	cr_assert_eq(xtcam_dp_classify(dp, &k, NULL, NULL), XTCAM_RANK(100 - 42, 43));
	/* delete them all: chains shrink back, overflow freed */
	for (i = 0; i < 60; i++)
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = (uint32_t)i + 1 };
	cr_assert_eq(xtcam_dp_apply(dp, ops, 60, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_info(dp, &info, true), 0);
	cr_assert_eq(info.nrules, 0);
	cr_assert_eq(info.ntuples, 0);
	cr_assert_eq(info.overflow_used, 0);
	xtcam_dp_free(dp);
}

/* Each bucket element carries its first rule's priority (the classifier
 * ends a chain at an element that cannot beat its hit): the checker
 * refuses an element whose copy disagrees with its first record. */
Test(dp_mem, verify_catches_a_stale_element_priority)
{
	struct xtcam_block_spec spec = { .capacity = 1000 };
	struct xtcam_rule r[20];
	struct xtcam_dp_op ops[20];
	struct xtcam_bucket b, orig;
	struct xtcam_dp *dp;
	__u64 key = 0, el = 0;
	char err[256], want[64];
	__u32 i, gen;
	int e;

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	for (i = 0; i < 20; i++) {
		t_rule(&r[i], 50 + i, i + 1);
		t_match_ip4(&r[i], false, 0x0a000001, 32);
		t_match_proto(&r[i], IPPROTO_UDP);
		r[i].dport_lo = r[i].dport_hi = (uint16_t)(1000 + i);
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &r[i],
					      .act = { .type = XTCAM_ACT_DROP } };
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, 20, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	/* the chain's second element: its first rule is the one after a full
	 * first element */
	gen = dp->cfg.gen;
	for (i = 0; i < dp->geom.nbuckets; i++) {
		key = dp_abs_key(dp, XTCAM_MAP_BUCKETS, i, gen);
		cr_assert_eq(dp_read(dp, XTCAM_MAP_BUCKETS, key, &b), 0);
		if (b.n && b.next)
			break;
	}
	cr_assert_lt(i, dp->geom.nbuckets, "a chain of more than one element");
	cr_assert_eq(b.prio, 50);
	el = dp_abs_key(dp, XTCAM_MAP_BUCKETS, b.next - 1, gen);
	cr_assert_eq(dp_read(dp, XTCAM_MAP_BUCKETS, el, &orig), 0);
	cr_assert_eq(orig.prio, 50 + XTCAM_BUCKET_SLOTS);
	b = orig;
	b.prio = 1000;
	cr_assert_eq(dp_write(dp, XTCAM_MAP_BUCKETS, &el, &b, 1), 0);
	e = xtcam_dp_verify(dp, err, sizeof(err));
	cr_assert_eq(e, -EUCLEAN);
	snprintf(want, sizeof(want), "has priority 1000, its first rule %u",
		 50 + XTCAM_BUCKET_SLOTS);
	cr_assert(strstr(err, want), "%s", err);
	cr_assert_eq(dp_write(dp, XTCAM_MAP_BUCKETS, &el, &orig, 1), 0);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_free(dp);
}

/* The classifier walks each family's tuple list (tlists), not the set:
 * an IPv4 tuple there hashes without word 0 (eth_type is the same for
 * every frame that probes it) from the start kept in it, and verify
 * refuses a list whose count or hash start disagrees with the set. */
Test(dp_mem, verify_checks_the_classifier_tuple_lists)
{
	struct xtcam_block_spec spec = { .capacity = 1000 };
	struct xtcam_rule r;
	struct xtcam_dp_op op = { .cmd = XTCAM_DP_ADD, .rule = &r,
				  .act = { .type = XTCAM_ACT_DROP } };
	struct xtcam_tlist *tl = calloc(1, sizeof(*tl)), *orig = calloc(1, sizeof(*orig));
	struct xtcam_dp *dp;
	char err[256];
	__u64 key;

	cr_assert(tl && orig);
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	t_rule(&r, 10, 1);
	t_match_ip4(&r, false, 0x0a000001, 32);
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	key = dp_abs_key(dp, XTCAM_MAP_TLISTS, XTCAM_FAM_IP4, dp->cfg.gen);
	cr_assert_eq(dp_read(dp, XTCAM_MAP_TLISTS, key, orig), 0);
	cr_assert_eq(orig->n, 1);
	cr_assert_eq(orig->t[0].wmap & 1u, 0, "word 0 hashed: wmap %#x", orig->t[0].wmap);
	cr_assert_eq(orig->t[0].hstart, xtcam_hstart(orig->t[0].id));

	*tl = *orig;
	tl->n = 2;
	cr_assert_eq(dp_write(dp, XTCAM_MAP_TLISTS, &key, tl, 1), 0);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), -EUCLEAN);
	cr_assert(strstr(err, "family list 0 has 2 tuples, 1 expected"), "%s", err);

	*tl = *orig;
	tl->t[0].hstart++;
	cr_assert_eq(dp_write(dp, XTCAM_MAP_TLISTS, &key, tl, 1), 0);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), -EUCLEAN);
	cr_assert(strstr(err, "family list 0 differs from the tuples"), "%s", err);

	/* the set and the list agree, on a stale start: the list keeps the
	 * stale copy written above, the set gets the same */
	{
		__u64 tk = dp_abs_key(dp, XTCAM_MAP_TUPLES, 0, dp->cfg.gen);
		struct xtcam_tuple tu;

		cr_assert_eq(dp_read(dp, XTCAM_MAP_TUPLES, tk, &tu), 0);
		tu.hstart++;
		cr_assert_eq(memcmp(&tu, &tl->t[0], sizeof(tu)), 0);
		cr_assert_eq(dp_write(dp, XTCAM_MAP_TUPLES, &tk, &tu, 1), 0);
		cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), -EUCLEAN);
		cr_assert(strstr(err, "hash words"), "%s", err);
		tu.hstart--;
		cr_assert_eq(dp_write(dp, XTCAM_MAP_TUPLES, &tk, &tu, 1), 0);
	}

	cr_assert_eq(dp_write(dp, XTCAM_MAP_TLISTS, &key, orig, 1), 0);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_free(dp);
	free(tl);
	free(orig);
}

/* A tuple holds one family: IPv6 rules never join an IPv4 tuple (whose
 * mask their first address word would cover), an IPv4 frame probes only
 * IPv4 tuples and the family-less ones, and a frame of another ethertype
 * only the family-less ones. */
Test(dp_mem, tuples_split_by_family)
{
	struct xtcam_block_spec spec = { .capacity = 1000 };
	struct xtcam_rule r[3];
	struct xtcam_dp_op ops[3];
	struct xtcam_dp_info info;
	struct xtcam_dp *dp;
	struct xtcam_key k;
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	const uint8_t mac[6] = { 2, 0, 0, 0, 0, 7 };
	unsigned int probes = 0;
	char err[256];
	int i;

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	/* 1: IPv4 10.0.0.0/8 dst; 2: IPv6 2001:db8:102:304::/64 dst; 3: any
	 * frame to MAC 02:00:00:00:00:07 (no eth_type: family-less) */
	t_rule(&r[0], 10, 1);
	t_match_ip4(&r[0], false, 0x0a000000, 8);
	t_rule(&r[1], 10, 2);
	t_match_ip6(&r[1], false, a6, 64);
	t_rule(&r[2], 20, 3);
	memcpy(r[2].value.dst_mac, mac, 6);
	memset(r[2].mask.dst_mac, 0xff, 6);
	r[2].keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_MAC);
	for (i = 0; i < 3; i++)
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &r[i],
					      .act = { .type = XTCAM_ACT_DROP } };
	cr_assert_eq(xtcam_dp_apply(dp, ops, 3, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_info(dp, &info, false), 0);
	cr_assert_eq(info.ntuples, 3, "one tuple per family, got %u", info.ntuples);

	memset(&k, 0, sizeof(k));
	k.flags = XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO;
	k.eth_type = htobe16(0x0800);
	k.dst_ip[0] = htobe32(0x0a010203);
	cr_assert_eq(xtcam_dp_classify(dp, &k, NULL, &probes), XTCAM_RANK(10, 1));
	cr_assert_eq(probes, 1, "the IPv4 tuple only (the hit beats the MAC rule), got %u", probes);
	k.dst_ip[0] = htobe32(0x0b010203);
	cr_assert_eq(xtcam_dp_classify(dp, &k, NULL, &probes), XTCAM_RANK_NONE);
	cr_assert_eq(probes, 2, "IPv4 and family-less tuples, got %u", probes);

	memset(&k, 0, sizeof(k));
	k.flags = XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO;
	k.eth_type = htobe16(0x86dd);
	memcpy(k.dst_ip, a6, 16);
	cr_assert_eq(xtcam_dp_classify(dp, &k, NULL, &probes), XTCAM_RANK(10, 2));
	cr_assert_eq(probes, 1, "got %u", probes);

	memset(&k, 0, sizeof(k));
	k.flags = XTCAM_F_ETH;
	k.eth_type = htobe16(0x0806);
	memcpy(k.dst_mac, mac, 6);
	cr_assert_eq(xtcam_dp_classify(dp, &k, NULL, &probes), XTCAM_RANK(20, 3));
	cr_assert_eq(probes, 1, "the family-less tuple only, got %u", probes);
	xtcam_dp_free(dp);
}

/* Load n IPv4 dst-prefix rules (addr[i]/len[i], handle i + 1, priority
 * 10 + i) into a fresh in-memory table in one batch; returns its tuples. */
static unsigned int load_dst_rules(struct xtcam_dp **dp, const uint32_t *addr,
				   const int *len, int n)
{
	struct xtcam_block_spec spec = { .capacity = 4096 };
	struct xtcam_rule *r = calloc((size_t)n, sizeof(*r));
	struct xtcam_dp_op *ops = calloc((size_t)n, sizeof(*ops));
	struct xtcam_dp_info info;
	char err[256];
	int i;

	cr_assert(r && ops);
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, dp), 0);
	for (i = 0; i < n; i++) {
		t_rule(&r[i], 10 + (uint32_t)i, (uint32_t)i + 1);
		t_match_ip4(&r[i], false, addr[i], len[i]);
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &r[i],
					      .act = { .type = XTCAM_ACT_DROP } };
	}
	cr_assert_eq(xtcam_dp_apply(*dp, ops, (size_t)n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(*dp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_info(*dp, &info, false), 0);
	free(r);
	free(ops);
	return info.ntuples;
}

static uint64_t classify_dst(struct xtcam_dp *dp, uint32_t dst)
{
	struct xtcam_key k;

	memset(&k, 0, sizeof(k));
	k.flags = XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO;
	k.eth_type = htobe16(0x0800);
	k.dst_ip[0] = htobe32(dst);
	return xtcam_dp_classify(dp, &k, NULL, NULL);
}

/*
 * IPv4 /32 rules share a /24-level tuple with the /24 rules of a block
 * that has them (one tuple, not one per prefix length), and a block of
 * exact addresses alone keeps them in one /32 tuple even where 40 hosts
 * share a /24 (a /24 tuple's buckets would fill and split them in two).
 * Either way every frame gets its best rule.
 */
Test(dp_mem, ipv4_24_level_only_beside_24_rules)
{
	uint32_t addr[250];
	int len[250], i;
	struct xtcam_dp *dp;

	/* 200 hosts, one in each of 10.0.0/24 .. 10.0.199/24, then 50 /24s
	 * (10.0.0/24 .. 10.0.49/24): the hosts come first, before any /24 */
	for (i = 0; i < 200; i++) {
		addr[i] = 0x0a000001u | (uint32_t)i << 8;
		len[i] = 32;
	}
	for (i = 0; i < 50; i++) {
		addr[200 + i] = 0x0a000000u | (uint32_t)i << 8;
		len[200 + i] = 24;
	}
	cr_assert_eq(load_dst_rules(&dp, addr, len, 250), 1,
		     "hosts and /24s in one tuple");
	/* 10.0.5.1: its host rule (prio 15) beats 10.0.5.0/24 (prio 215) */
	cr_assert_eq(classify_dst(dp, 0x0a000501), XTCAM_RANK(10 + 5, 5 + 1));
	cr_assert_eq(classify_dst(dp, 0x0a000502), XTCAM_RANK(10 + 205, 205 + 1));
	cr_assert_eq(classify_dst(dp, 0x0a007701), XTCAM_RANK(10 + 119, 119 + 1));
	cr_assert_eq(classify_dst(dp, 0x0a007702), XTCAM_RANK_NONE);
	xtcam_dp_free(dp);

	/* 200 hosts alone, 40 in each of five /24s */
	for (i = 0; i < 200; i++) {
		addr[i] = 0x0a000000u | (uint32_t)(i / 40) << 8 | (uint32_t)(1 + i % 40);
		len[i] = 32;
	}
	cr_assert_eq(load_dst_rules(&dp, addr, len, 200), 1, "the hosts in one /32 tuple");
	for (i = 0; i < 200; i += 13)
		cr_assert_eq(classify_dst(dp, addr[i]), XTCAM_RANK(10 + i, i + 1));
	cr_assert_eq(classify_dst(dp, 0x0a000029), XTCAM_RANK_NONE);
	xtcam_dp_free(dp);
}
