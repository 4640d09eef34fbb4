// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The classifier through BPF_PROG_TEST_RUN against the reference
 * classifier: random rule sets of several shapes, packets biased to hit
 * them; for every packet the verdict and the matched rule must equal the
 * reference's, and at the end every rule's counters.  XTCAM_SEED picks
 * another seed; a failure prints the seed, the rule and the packet.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "xtcam/compile.h"
#include "xtcam/dp.h"
#include "tlib.h"

static void need_bpf(void)
{
	if (!t_have_bpf())
		cr_skip_test("needs root to load BPF programs");
	cr_assert_eq(t_pin_cpu(0), 0);
}

TestSuite(classify, .init = need_bpf);

static uint32_t xdp_of(const struct xtcam_action *a)
{
	switch (a->type) {
	case XTCAM_ACT_DROP: return XDP_DROP;
	case XTCAM_ACT_TX: return XDP_TX;
	case XTCAM_ACT_REDIRECT:
	case XTCAM_ACT_CPU: return XDP_REDIRECT;
	default: return XDP_PASS;
	}
}

static struct xtcam_action act_of(const struct xtcam_rule *r)
{
	struct xtcam_action a = { .type = r->action.type };

	if (a.type == XTCAM_ACT_CPU)
		a.arg = r->action.cpu;
	return a;
}

struct diff_stats {
	unsigned long packets, hits, misses;
};

/* Run n packets through the block and the oracle; returns nothing, asserts. */
static void run_packets(struct xtcam_dp *dp, const struct xtcam_oracle *o,
			const struct xtcam_rule *rules, size_t nrules,
			const struct xtcam_action *dflt, struct t_rng *g,
			uint64_t seed, unsigned long n, uint64_t *pk, uint64_t *by,
			uint64_t *miss_pk, struct diff_stats *st)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		const struct xtcam_rule *target = NULL;
		const struct xtcam_entry *e;
		struct xtcam_scratch sc;
		struct pkt_spec s;
		struct pkt p;
		uint32_t ret, want;
		int err;

		if (nrules && t_below(g, 10) < 8)
			target = &rules[t_below(g, (uint32_t)nrules)];
		t_gen_packet(g, target, &s);
		pkt_build(&s, NULL, &p);
		/* now and then a cut frame: it must still be classified right */
		if (t_below(g, 20) == 0 && p.len > 15)
			p.len = 14 + (int)t_below(g, (uint32_t)p.len - 14);
		err = t_xdp_run(xtcam_dp_parse_fd(dp), p.buf, (uint32_t)p.len, &ret);
		cr_assert_eq(err, 0, "test run: %s", strerror(-err));
		cr_assert_eq(t_scratch(dp, &sc), 0);
		e = xtcam_oracle_lookup(o, &sc.key);
		want = e ? 0 : xdp_of(dflt);
		if (e) {
			size_t j;

			for (j = 0; j < nrules && rules[j].handle != e->handle; j++)
				;
			cr_assert(j < nrules);
			want = xdp_of(&(struct xtcam_action){ .type = rules[j].action.type });
			pk[j]++;
			by[j] += (uint64_t)p.len;
			st->hits++;
		} else {
			(*miss_pk)++;
			st->misses++;
		}
		st->packets++;
		if (sc.result_rank != (e ? e->rank : XTCAM_RANK_NONE) || ret != want) {
			char kb[512], rb[1024] = "(miss)", hb[PKT_MAX * 2 + 1];
			size_t j;

			key_format(&sc.key, kb, sizeof(kb));
			if (e) {
				for (j = 0; j < nrules && rules[j].handle != e->handle; j++)
					;
				t_rule_format(&rules[j], rb, sizeof(rb));
			}
			hex_format(p.buf, p.len, hb, sizeof(hb));
			cr_assert_fail("seed %#llx packet %lu: xdp matched rank %#llx verdict %u, "
				       "reference rank %#llx verdict %u\n  key %s\n  reference rule %s\n"
				       "  frame %s",
				       (unsigned long long)seed, i,
				       (unsigned long long)sc.result_rank, ret,
				       (unsigned long long)(e ? e->rank : XTCAM_RANK_NONE), want,
				       kb, rb, hb);
		}
		if (target == NULL || 1) {
			/* the parser's key for a whole frame is the builder's */
			if (p.len == p.hdr_end || p.len >= p.hdr_end)
				cr_assert(!memcmp(&sc.key, &p.key, sizeof(p.key)) ||
					  p.len < p.hdr_end,
					  "seed %#llx packet %lu: parser key differs from the frame's",
					  (unsigned long long)seed, i);
		}
	}
}

static void check_counters(struct xtcam_dp *dp, const struct xtcam_rule *rules,
			   size_t n, const uint64_t *pk, const uint64_t *by,
			   uint64_t miss_pk, uint64_t seed)
{
	struct xtcam_counter c;
	size_t j;

	for (j = 0; j < n; j++) {
		cr_assert_eq(xtcam_dp_rule_counters(dp, rules[j].handle, &c), 0);
		cr_assert_eq(c.packets, pk[j], "seed %#llx handle %u: %llu packets counted, %llu expected",
			     (unsigned long long)seed, rules[j].handle,
			     (unsigned long long)c.packets, (unsigned long long)pk[j]);
		cr_assert_eq(c.bytes, by[j], "seed %#llx handle %u: bytes",
			     (unsigned long long)seed, rules[j].handle);
		if (pk[j])
			cr_assert_neq(c.last_hit, 0, "handle %u: last hit recorded", rules[j].handle);
	}
	cr_assert_eq(xtcam_dp_stat(dp, XTCAM_STAT_MISS, &c), 0);
	cr_assert_eq(c.packets, miss_pk, "misses: %llu counted, %llu expected",
		     (unsigned long long)c.packets, (unsigned long long)miss_pk);
}

static void differential(enum t_shape shape, size_t nrules, unsigned long npk,
			 uint32_t dflt_type)
{
	uint64_t seed = t_seed(0x5eed0000ull + shape);
	struct t_rng g = { seed };
	struct xtcam_block_spec spec = { .capacity = 65536,
					 .dflt = { .type = dflt_type } };
	struct xtcam_rule *rules = calloc(nrules, sizeof(*rules));
	struct xtcam_dp_op *ops = calloc(nrules, sizeof(*ops));
	uint64_t *pk = calloc(nrules, 8), *by = calloc(nrules, 8), miss = 0;
	struct xtcam_oracle o;
	struct xtcam_dp *dp;
	struct diff_stats st = { 0 };
	struct xtcam_dp_info info;
	char err[256];
	size_t i;
	int e;

	cr_assert(rules && ops && pk && by);
	e = xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp);
	cr_assert_eq(e, 0, "create: %s", strerror(-e));
	xtcam_oracle_init(&o);
	for (i = 0; i < nrules; i++) {
		t_gen_rule(&g, shape, (uint32_t)(i + 1), &rules[i]);
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &rules[i],
					      .act = act_of(&rules[i]) };
		cr_assert_eq(xtcam_oracle_add(&o, &rules[i]), 0);
	}
	e = xtcam_dp_apply(dp, ops, nrules, err, sizeof(err));
	cr_assert_eq(e, 0, "apply: %s (%s)", strerror(-e), err);
	e = xtcam_dp_verify(dp, err, sizeof(err));
	cr_assert_eq(e, 0, "structure: %s", err);
	run_packets(dp, &o, rules, nrules, &spec.dflt, &g, seed, npk, pk, by, &miss, &st);
	check_counters(dp, rules, nrules, pk, by, miss, seed);
	cr_assert_eq(xtcam_dp_info(dp, &info, true), 0);
	cr_log_info("shape %d: %zu rules, %u entries, %u tuples, %lu packets, %lu hits, "
		    "%lu misses, max chain %u", shape, nrules, info.nentries, info.ntuples,
		    st.packets, st.hits, st.misses, info.max_chain);
	cr_assert_gt(st.hits, npk / 2, "the mix is biased to hit rules");
	cr_assert_gt(st.misses, npk / 100, "and has misses");
	xtcam_oracle_free(&o);
	xtcam_dp_free(dp);
	free(rules);
	free(ops);
	free(pk);
	free(by);
}

/* 4 x 25,000 = 100,000 packets per run */
Test(classify, differential_v4_5tuple, .timeout = 600)
{
	differential(T_SHAPE_V4_5TUPLE, 1500, 25000, XTCAM_ACT_PASS);
}

Test(classify, differential_v6, .timeout = 600)
{
	differential(T_SHAPE_V6, 800, 25000, XTCAM_ACT_DROP);
}

Test(classify, differential_mixed, .timeout = 600)
{
	differential(T_SHAPE_MIXED, 600, 25000, XTCAM_ACT_PASS);
}

Test(classify, differential_few_masks_equal_prios, .timeout = 600)
{
	differential(T_SHAPE_FEW_MASKS, 2000, 25000, XTCAM_ACT_DROP);
}
