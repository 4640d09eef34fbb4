// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The lookup structure without a kernel: a data path in memory, updated by
 * the same code that updates BPF maps, classified by the C version of the
 * lookup, against the reference classifier, with churn.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/compile.h"
#include "xtcam/dp.h"
#include "tlib.h"

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
