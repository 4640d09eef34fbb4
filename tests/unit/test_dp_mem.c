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
#include <pthread.h>
#include <unistd.h>
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

/* --- single changes in place ------------------------------------------- */

static struct xtcam_dp_op op_of(enum xtcam_dp_cmd cmd, const struct xtcam_rule *r, uint32_t h)
{
	return (struct xtcam_dp_op){ .cmd = cmd, .rule = r, .handle = h,
				     .act = { .type = r ? r->action.type : 0 } };
}

/* Load n rules of a shape in one batch, then single adds, deletes and
 * replaces: after every one the lookup equals the reference on a frame
 * set and the structure verifies; most are published in place. */
static void single_churn(enum t_shape shape, uint64_t seed_def)
{
	uint64_t seed = t_seed(seed_def);
	struct t_rng g = { seed };
	struct xtcam_block_spec spec = { .capacity = 20000 };
	size_t cap = 1200, n = 400, i;
	struct xtcam_rule *cur = calloc(cap, sizeof(*cur)), nr;
	struct xtcam_dp_op *ops = calloc(n, sizeof(*ops));
	struct xtcam_dp_timing tm;
	uint32_t next = 1;
	struct xtcam_dp *dp;
	char err[256];
	int step, e;

	cr_assert(cur && ops);
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	for (i = 0; i < n; i++) {
		t_gen_rule(&g, shape, next++, &cur[i]);
		ops[i] = op_of(XTCAM_DP_ADD, &cur[i], 0);
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, n, err, sizeof(err)), 0, "%s", err);
	for (step = 0; step < 600; step++) {
		uint32_t c = t_below(&g, 3), v = n ? t_below(&g, (uint32_t)n) : 0;
		struct xtcam_dp_op op;
		struct xtcam_oracle o;

		if (c == 0 && n) {
			op = op_of(XTCAM_DP_DEL, NULL, cur[v].handle);
		} else if (c == 1 && n) {
			/* half of them the same match with another action */
			nr = cur[v];
			if (t_below(&g, 2))
				t_gen_rule(&g, shape, cur[v].handle, &nr);
			else
				nr.action.type = nr.action.type == XTCAM_ACT_DROP ?
						 XTCAM_ACT_PASS : XTCAM_ACT_DROP;
			op = op_of(XTCAM_DP_REPLACE, &nr, 0);
		} else {
			if (n == cap)
				continue;
			t_gen_rule(&g, shape, next++, &nr);
			op = op_of(XTCAM_DP_ADD, &nr, 0);
		}
		e = xtcam_dp_apply(dp, &op, 1, err, sizeof(err));
		cr_assert_eq(e, 0, "seed %#llx step %d: %s", (unsigned long long)seed, step, err);
		if (op.cmd == XTCAM_DP_DEL)
			cur[v] = cur[--n];
		else if (op.cmd == XTCAM_DP_REPLACE)
			cur[v] = nr;
		else
			cur[n++] = nr;
		e = xtcam_dp_verify(dp, err, sizeof(err));
		cr_assert_eq(e, 0, "seed %#llx step %d: %s", (unsigned long long)seed, step, err);
		xtcam_oracle_init(&o);
		for (i = 0; i < n; i++)
			cr_assert_eq(xtcam_oracle_add(&o, &cur[i]), 0);
		for (i = 0; i < 60; i++) {
			const struct xtcam_entry *ent;
			struct pkt_spec s;
			struct pkt p;
			__u64 rank;

			t_gen_packet(&g, n && t_below(&g, 4) ? &cur[t_below(&g, (uint32_t)n)] : NULL, &s);
			pkt_build(&s, NULL, &p);
			ent = xtcam_oracle_lookup(&o, &p.key);
			rank = xtcam_dp_classify(dp, &p.key, NULL, NULL);
			cr_assert_eq(rank, ent ? ent->rank : XTCAM_RANK_NONE,
				     "seed %#llx step %d packet %zu: %#llx vs reference %#llx",
				     (unsigned long long)seed, step, i, (unsigned long long)rank,
				     (unsigned long long)(ent ? ent->rank : XTCAM_RANK_NONE));
		}
		xtcam_oracle_free(&o);
	}
	xtcam_dp_timing(dp, &tm);
	cr_assert_gt(tm.inplace, 500, "%lu of 600 single changes in place", tm.inplace);
	cr_assert_gt(tm.pub_del, 0);
	cr_assert_gt(tm.pub_swap + tm.pub_two, 0);
	xtcam_dp_free(dp);
	free(cur);
	free(ops);
}

Test(dp_mem, single_changes_match_the_reference_v4, .timeout = 300)
{
	single_churn(T_SHAPE_V4_5TUPLE, 11);
}
Test(dp_mem, single_changes_match_the_reference_v6, .timeout = 300)
{
	single_churn(T_SHAPE_V6, 12);
}
Test(dp_mem, single_changes_match_the_reference_mixed, .timeout = 300)
{
	single_churn(T_SHAPE_MIXED, 13);
}
Test(dp_mem, single_changes_match_the_reference_few_masks, .timeout = 300)
{
	single_churn(T_SHAPE_FEW_MASKS, 14);
}

/* A freed slot stays taken (limbo) until a flip has waited for a grace
 * period: single changes never hand it out again before that, and when
 * the free slots run out the change waits for one flip, counted. */
Test(dp_mem, freed_slots_wait_for_a_sync)
{
	struct xtcam_block_spec spec = { .capacity = 16 };
	struct xtcam_rule r[3];
	struct xtcam_dp_op op;
	struct xtcam_dp_timing tm;
	struct xtcam_rec rec;
	struct xtcam_dp *dp;
	__u32 first, seen[64], nseen = 0, i;
	char err[256];

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	t_rule(&r[0], 10, 1);
	t_match_ip4(&r[0], false, 0x0a000001, 32);
	r[0].action.type = XTCAM_ACT_DROP;
	op = op_of(XTCAM_DP_ADD, &r[0], 0);
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_rule_record(dp, 1, &rec, NULL), 0);
	first = rec.slot;
	/* replace it again and again (a fresh slot each time): nslots is 32,
	 * so 31 replaces go in place, each into a slot never used before */
	seen[nseen++] = first;
	for (i = 0; i < 31; i++) {
		r[1] = r[0];
		r[1].action.type = i % 2 ? XTCAM_ACT_DROP : XTCAM_ACT_PASS;
		op = op_of(XTCAM_DP_REPLACE, &r[1], 0);
		cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(xtcam_dp_rule_record(dp, 1, &rec, NULL), 0);
		for (__u32 k = 0; k < nseen; k++)
			cr_assert_neq(rec.slot, seen[k], "replace %u reused slot %u before a sync",
				      i, rec.slot);
		seen[nseen++] = rec.slot;
	}
	xtcam_dp_timing(dp, &tm);
	/* (the first add made the tuple: a flip) */
	cr_assert_eq(tm.flip_tuple, 1);
	cr_assert_eq(tm.inplace, 31);
	cr_assert_eq(tm.limbo_syncs, 0);
	/* every slot is taken now (one live, 31 in limbo): the next replace
	 * waits for a flip that frees them, then takes one */
	r[1].action.type = XTCAM_ACT_DROP;
	op = op_of(XTCAM_DP_REPLACE, &r[1], 0);
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_timing(dp, &tm);
	cr_assert_eq(tm.limbo_syncs, 1);
	cr_assert_eq(tm.flip_space, 1);
	xtcam_dp_free(dp);
}

/* A flip after single changes frees their limbo: its cost does not grow
 * with the block's capacity (the limbo bitmaps are read in one batched
 * read, not a lookup of a few words each: at capacity 65536 that was
 * hundreds of reads for a flip of two rules). */
Test(dp_mem, limbo_release_reads_little)
{
	struct xtcam_block_spec spec = { .capacity = 65536 };
	struct xtcam_rule r[3];
	struct xtcam_dp_op op[2];
	struct xtcam_dp_timing t0, t1;
	struct xtcam_dp *dp;
	char err[256];

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &dp), 0);
	t_rule(&r[0], 10, 1);
	t_match_ip4(&r[0], false, 0x0a000001, 32);
	r[0].action.type = XTCAM_ACT_DROP;
	op[0] = op_of(XTCAM_DP_ADD, &r[0], 0);
	cr_assert_eq(xtcam_dp_apply(dp, op, 1, err, sizeof(err)), 0, "%s", err);
	/* a replace in place: the old slot goes to limbo */
	r[0].action.type = XTCAM_ACT_PASS;
	op[0] = op_of(XTCAM_DP_REPLACE, &r[0], 0);
	cr_assert_eq(xtcam_dp_apply(dp, op, 1, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_timing(dp, &t0);
	cr_assert_eq(t0.inplace, 1);
	/* a batch of two: a flip, which releases the limbo */
	t_rule(&r[1], 10, 2);
	t_match_ip4(&r[1], false, 0x0a000002, 32);
	r[1].action.type = XTCAM_ACT_DROP;
	t_rule(&r[2], 10, 3);
	t_match_ip4(&r[2], false, 0x0a000003, 32);
	r[2].action.type = XTCAM_ACT_DROP;
	op[0] = op_of(XTCAM_DP_ADD, &r[1], 0);
	op[1] = op_of(XTCAM_DP_ADD, &r[2], 0);
	cr_assert_eq(xtcam_dp_apply(dp, op, 2, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_timing(dp, &t1);
	cr_log_info("a flip of 2 rules after a change in place: %lu reads and writes",
		    t1.syscalls - t0.syscalls);
	cr_assert_lt(t1.syscalls - t0.syscalls, 100,
		     "a flip of 2 rules: %lu reads and writes", t1.syscalls - t0.syscalls);
	xtcam_dp_free(dp);
}

/*
 * A reader thread classifies a fixed set of keys in a loop while the
 * writer makes single changes in place (memory mode: the same code and
 * the same publication order as on BPF maps).  Each key's verdicts go
 * through the expected sequence in order, skipping some maybe, never
 * back.  Keys: 64 on their own address (a better rule added before the
 * old one, the old one deleted, then the better one replaced by a still
 * better one, another prio: add then delete), and 12 on one address,
 * told apart by port, in one chain of two elements (better rules added at
 * its front shift it across the elements; some old rules deleted).
 */
#define RT_SPARSE 64
#define RT_GROUP  12
#define RT_KEYS   (RT_SPARSE + RT_GROUP)
#define RT_STEPS  4

struct rt {
	struct xtcam_dp *dp;
	struct xtcam_key key[RT_KEYS];
	__u64 want[RT_KEYS][RT_STEPS];  /* the verdicts in order */
	int nw[RT_KEYS];
	int done, bad;
	unsigned long rounds;
	char msg[256];
};

static void *rt_reader(void *arg)
{
	struct rt *t = arg;
	int pos[RT_KEYS] = { 0 }, k, j;

	while (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
		for (k = 0; k < RT_KEYS; k++) {
			__u64 r = xtcam_dp_classify(t->dp, &t->key[k], NULL, NULL);

			for (j = pos[k]; j < t->nw[k] && t->want[k][j] != r; j++)
				;
			if (j == t->nw[k]) {
				snprintf(t->msg, sizeof(t->msg),
					 "key %d: verdict %#llx after step %d (%#llx)", k,
					 (unsigned long long)r, pos[k],
					 (unsigned long long)t->want[k][pos[k]]);
				__atomic_store_n(&t->bad, 1, __ATOMIC_RELEASE);
				return NULL;
			}
			pos[k] = j;
		}
		__atomic_add_fetch(&t->rounds, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* until the reader has made n rounds (or found a wrong verdict), at most a
 * minute */
static void rt_wait_rounds(struct rt *t, unsigned long n)
{
	int i;

	for (i = 0; i < 60000 && !__atomic_load_n(&t->bad, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&t->rounds, __ATOMIC_ACQUIRE) < n; i++)
		usleep(1000);
}

static void rt_rule(struct xtcam_rule *r, uint32_t prio, uint32_t h, uint32_t dst, uint16_t port,
		    uint32_t act)
{
	t_rule(r, prio, h);
	t_match_ip4(r, false, dst, 32);
	t_match_proto(r, IPPROTO_UDP);
	if (port) {
		r->dport_lo = r->dport_hi = port;
		r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
	}
	r->action.type = act;
}

Test(dp_mem, reader_thread_sees_verdicts_only_move_forward, .timeout = 300)
{
	struct xtcam_block_spec spec = { .capacity = 20000 };
	static struct rt t;
	struct xtcam_rule base[RT_KEYS], r;
	struct xtcam_dp_op ops[RT_KEYS], op;
	struct xtcam_dp_timing tm;
	pthread_t th;
	char err[256];
	int k, round;

	for (round = 0; round < 3; round++) {
		memset(&t, 0, sizeof(t));
		cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_MEMORY, &t.dp), 0);
		for (k = 0; k < RT_KEYS; k++) {
			uint32_t dst = k < RT_SPARSE ? 0x0a010000u + (uint32_t)k * 7919u : 0x0a090909u;
			uint16_t port = k < RT_SPARSE ? 0 : (uint16_t)(1000 + k);
			struct xtcam_key *key = &t.key[k];

			rt_rule(&base[k], 100 + (uint32_t)k, (uint32_t)k + 1, dst, port, XTCAM_ACT_PASS);
			ops[k] = op_of(XTCAM_DP_ADD, &base[k], 0);
			memset(key, 0, sizeof(*key));
			key->flags = XTCAM_F_ETH | XTCAM_F_L3 | XTCAM_F_PROTO | XTCAM_F_L4;
			key->eth_type = htobe16(0x0800);
			key->ip_proto = IPPROTO_UDP;
			key->dst_ip[0] = htobe32(dst);
			key->dst_port = htobe16(port ? port : 53);
			t.want[k][0] = XTCAM_RANK(100 + k, k + 1);
			t.nw[k] = 1;
			if (k < RT_SPARSE) {
				t.want[k][t.nw[k]++] = XTCAM_RANK(50, 1000 + k);
				t.want[k][t.nw[k]++] = XTCAM_RANK(40, 1000 + k);
			} else if (k % 3 == 0) {
				t.want[k][t.nw[k]++] = XTCAM_RANK(50, 1000 + k);
			} else if (k % 3 == 1) {
				t.want[k][t.nw[k]++] = XTCAM_RANK_NONE;
			}       /* else: kept */
		}
		cr_assert_eq(xtcam_dp_apply(t.dp, ops, RT_KEYS, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(pthread_create(&th, NULL, rt_reader, &t), 0);
		/* the reader under way before the first change, and a few of its
		 * rounds after the last: waited for, not timed (a busy machine
		 * may run it late) */
		rt_wait_rounds(&t, 1);
		for (k = 0; k < RT_KEYS && !__atomic_load_n(&t.bad, __ATOMIC_ACQUIRE); k++) {
			uint32_t dst = k < RT_SPARSE ? 0x0a010000u + (uint32_t)k * 7919u : 0x0a090909u;
			uint16_t port = k < RT_SPARSE ? 0 : (uint16_t)(1000 + k);

			if (k < RT_SPARSE || k % 3 == 0) {
				/* a better rule: it sorts before the old one */
				rt_rule(&r, 50, 1000 + (uint32_t)k, dst, port, XTCAM_ACT_DROP);
				op = op_of(XTCAM_DP_ADD, &r, 0);
				cr_assert_eq(xtcam_dp_apply(t.dp, &op, 1, err, sizeof(err)), 0, "%s", err);
			}
			if (k < RT_SPARSE) {
				op = op_of(XTCAM_DP_DEL, NULL, (uint32_t)k + 1);
				cr_assert_eq(xtcam_dp_apply(t.dp, &op, 1, err, sizeof(err)), 0, "%s", err);
				rt_rule(&r, 40, 1000 + (uint32_t)k, dst, port, XTCAM_ACT_PASS);
				op = op_of(XTCAM_DP_REPLACE, &r, 0);
				cr_assert_eq(xtcam_dp_apply(t.dp, &op, 1, err, sizeof(err)), 0, "%s", err);
			} else if (k % 3 == 1) {
				op = op_of(XTCAM_DP_DEL, NULL, (uint32_t)k + 1);
				cr_assert_eq(xtcam_dp_apply(t.dp, &op, 1, err, sizeof(err)), 0, "%s", err);
			}
			usleep(200);
		}
		rt_wait_rounds(&t, __atomic_load_n(&t.rounds, __ATOMIC_ACQUIRE) + 10);
		__atomic_store_n(&t.done, 1, __ATOMIC_RELEASE);
		cr_assert_eq(pthread_join(th, NULL), 0);
		cr_assert_eq(t.bad, 0, "round %d: %s", round, t.msg);
		cr_assert_gt(t.rounds, 10);
		cr_assert_eq(xtcam_dp_verify(t.dp, err, sizeof(err)), 0, "%s", err);
		xtcam_dp_timing(t.dp, &tm);
		/* no flip: frames (the reader) never wait, and in memory mode a
		 * flip would have no grace period to rely on */
		cr_assert_eq(tm.flip_tuple + tm.flip_space + tm.flip_other, 0);
		cr_assert_gt(tm.pub_shift, 0);
		cr_assert_gt(tm.pub_two, 0);
		for (k = 0; k < RT_KEYS; k++) {
			int j = t.nw[k] - 1;

			cr_assert_eq(xtcam_dp_classify(t.dp, &t.key[k], NULL, NULL), t.want[k][j],
				     "key %d ends at %#llx", k, (unsigned long long)t.want[k][j]);
		}
		xtcam_dp_free(t.dp);
	}
}
