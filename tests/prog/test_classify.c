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
#include "classbench.h"

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

/* Rules are generated with handle = index + 1; fall back to a scan. */
static size_t find_rule(const struct xtcam_rule *rules, size_t n, uint32_t handle)
{
	size_t j;

	if (handle >= 1 && handle <= n && rules[handle - 1].handle == handle)
		return handle - 1;
	for (j = 0; j < n && rules[j].handle != handle; j++)
		;
	return j;
}

/* Makes a packet for a target rule, or a random one for NULL. */
typedef void (*pkt_gen_fn)(struct t_rng *g, const void *ctx,
			   const struct xtcam_rule *target, struct pkt_spec *s);

static void gen_random(struct t_rng *g, const void *ctx,
		       const struct xtcam_rule *target, struct pkt_spec *s)
{
	(void)ctx;
	t_gen_packet(g, target, s);
}

/* Run n packets through the block and the oracle; returns nothing, asserts. */
static void run_packets(struct xtcam_dp *dp, const struct xtcam_oracle *o,
			const struct xtcam_rule *rules, size_t nrules,
			const struct xtcam_action *dflt, struct t_rng *g,
			uint64_t seed, unsigned long n, uint64_t *pk, uint64_t *by,
			uint64_t *miss_pk, struct diff_stats *st,
			pkt_gen_fn gen, const void *gctx)
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
		gen(g, gctx, target, &s);
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
			size_t j = find_rule(rules, nrules, e->handle);

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
				j = find_rule(rules, nrules, e->handle);
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
			/* the parser's key for a whole frame is the builder's
			 * (which does not know the device: BPF_PROG_TEST_RUN
			 * runs the frame as from lo) */
			cr_assert_eq(sc.key.ifindex, 1, "ifindex %u", sc.key.ifindex);
			sc.key.ifindex = 0;
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
	run_packets(dp, &o, rules, nrules, &spec.dflt, &g, seed, npk, pk, by, &miss, &st,
		    gen_random, NULL);
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

/*
 * ClassBench-style ACLs (tests/lib/classbench.c): thousands of distinct
 * masks after range expansion.  The block must load them, count entries
 * the way a TCAM would, and classify exactly like the reference.
 */
static void cb_gen(struct t_rng *g, const void *ctx,
		   const struct xtcam_rule *target, struct pkt_spec *s)
{
	cb_packet(g, ctx, target, s);
}

static void acl_differential(int family, uint32_t nrules, unsigned long npk,
			     size_t min_masks, unsigned int flags)
{
	uint64_t seed = t_seed(0xac100000ull + (uint64_t)family * 1000003 + nrules);
	struct cb_params prm = { .nrules = nrules, .family = family, .pass_pct = 20 };
	struct xtcam_block_spec spec = { .dflt = { .type = XTCAM_ACT_PASS } };
	struct t_rng g = { seed ^ 0x9e37 };
	struct xtcam_oracle o;
	struct xtcam_dp_info info;
	struct diff_stats st = { 0 };
	struct xtcam_dp_op *ops;
	struct xtcam_dp *dp;
	struct cb_set cs;
	uint64_t *pk, *by, miss = 0, want_entries = 0;
	size_t i, masks, entries;
	char err[256];
	int e;

	cr_assert_eq(cb_generate(&cs, &prm, seed), 0);
	cr_assert_eq(cb_masks(&cs, &masks, &entries), 0);
	cr_assert_geq(masks, min_masks, "the set is ClassBench-like: %zu distinct masks", masks);
	spec.capacity = (uint32_t)(entries + 1024);
	ops = calloc(nrules, sizeof(*ops));
	pk = calloc(nrules, 8);
	by = calloc(nrules, 8);
	cr_assert(ops && pk && by);
	e = xtcam_dp_create(&spec, XTCAM_DP_DEBUG | flags, &dp);
	cr_assert_eq(e, 0, "create: %s", strerror(-e));
	xtcam_oracle_init(&o);
	for (i = 0; i < nrules; i++) {
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &cs.rules[i],
					      .act = act_of(&cs.rules[i]) };
		cr_assert_eq(xtcam_oracle_add(&o, &cs.rules[i]), 0);
		want_entries += xtcam_rule_entries(&cs.rules[i]);
	}
	e = xtcam_dp_apply(dp, ops, nrules, err, sizeof(err));
	cr_assert_eq(e, 0, "apply %u rules: %s (%s)", nrules, strerror(-e), err);
	e = xtcam_dp_verify(dp, err, sizeof(err));
	cr_assert_eq(e, 0, "structure: %s", err);
	cr_assert_eq(xtcam_dp_info(dp, &info, true), 0);
	cr_assert_eq(info.nrules, nrules);
	cr_assert_eq(info.nentries, want_entries,
		     "entries are counted as a TCAM holds them (ranges expanded): %u, want %llu",
		     info.nentries, (unsigned long long)want_entries);
	run_packets(dp, &o, cs.rules, nrules, &spec.dflt, &g, seed, npk, pk, by, &miss,
		    &st, cb_gen, &cs);
	check_counters(dp, cs.rules, nrules, pk, by, miss, seed);
	cr_log_info("acl v%d: %u rules, %u entries, %zu masks, %u tuples, max chain %u; "
		    "%lu packets, %lu hits, %lu misses", family ? family : 46, nrules,
		    info.nentries, masks, info.ntuples, info.max_chain, st.packets,
		    st.hits, st.misses);
	cr_assert_gt(st.hits, npk / 2, "the mix is biased to hit rules");
	cr_assert_gt(st.misses, 0, "and has misses");
	xtcam_oracle_free(&o);
	xtcam_dp_free(dp);
	cb_free(&cs);
	free(ops);
	free(pk);
	free(by);
}

Test(classify, acl_10k_v4, .timeout = 600)
{
	acl_differential(4, 10000, 20000, 2000, 0);
}

Test(classify, acl_10k_v6, .timeout = 600)
{
	acl_differential(6, 10000, 20000, 2000, 0);
}

/* The classifier the loader falls back to when a kernel's verifier
 * refuses the inline probes: every probe through bpf_loop.  It is the
 * smaller program (what bpftool shows as xlated), and it classifies the
 * same.  (The hand-off from the inline probes to bpf_loop at the ninth
 * tuple is what acl_100k_v4, 12 tuples, and differential_mixed check.) */
static __u32 classify_xlated_len(const struct xtcam_dp *dp)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);

	memset(&pi, 0, sizeof(pi));
	cr_assert_eq(bpf_obj_get_info_by_fd(xtcam_dp_classify_fd(dp), &pi, &len), 0);
	return pi.xlated_prog_len;
}

Test(classify, acl_10k_v6_without_inline_probes, .timeout = 600)
{
	struct xtcam_block_spec spec = { .capacity = 1024,
					 .dflt = { .type = XTCAM_ACT_PASS } };
	struct xtcam_dp *a, *b;
	__u32 la, lb;

	cr_assert_eq(xtcam_dp_create(&spec, 0, &a), 0);
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_NOINLINE, &b), 0);
	la = classify_xlated_len(a);
	lb = classify_xlated_len(b);
	cr_assert(xtcam_dp_flags(b) & XTCAM_DP_NOINLINE);
	if (xtcam_dp_flags(a) & XTCAM_DP_NOINLINE) {
		/* this kernel refused the inline probes: both fell back */
		cr_log_info("classifier: this kernel refused the inline probes (%u bytes)", la);
		cr_assert_eq(la, lb);
	} else {
		cr_log_info("classifier: %u bytes xlated with the inline probes, %u without",
			    la, lb);
		cr_assert_lt(lb * 2, la, "without inline probes the classifier is much "
			     "smaller: %u against %u bytes", lb, la);
	}
	xtcam_dp_free(a);
	xtcam_dp_free(b);
	acl_differential(6, 10000, 20000, 2000, XTCAM_DP_NOINLINE);
}

Test(classify, acl_100k_v4, .timeout = 900)
{
	acl_differential(4, 100000, 5000, 5000, 0);
}

Test(classify, acl_100k_mixed, .timeout = 900)
{
	acl_differential(0, 100000, 5000, 5000, 0);
}

/*
 * One rule added to and deleted from a 100k-rule ACL: the change touches a
 * handful of map elements (no rebuild), and takes effect at once.
 */
Test(classify, acl_100k_single_updates_are_incremental, .timeout = 600)
{
	struct cb_params prm = { .nrules = 100000, .family = 4, .pass_pct = 20 };
	struct xtcam_block_spec spec = { .dflt = { .type = XTCAM_ACT_PASS } };
	struct xtcam_dp_timing t0, t1;
	struct xtcam_dp_op *ops, op;
	struct xtcam_rule nr;
	struct xtcam_scratch sc;
	struct xtcam_dp *dp;
	struct pkt_spec ps;
	struct pkt p;
	struct cb_set cs;
	struct t_rng g = { 77 };
	size_t i, masks, entries;
	uint32_t ret;
	char err[256];
	int e, round;

	cr_assert_eq(cb_generate(&cs, &prm, 0x5ca1e), 0);
	cr_assert_eq(cb_masks(&cs, &masks, &entries), 0);
	spec.capacity = (uint32_t)(entries + 4096);
	ops = calloc(cs.n, sizeof(*ops));
	cr_assert(ops);
	for (i = 0; i < cs.n; i++)
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &cs.rules[i],
					      .act = act_of(&cs.rules[i]) };
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	e = xtcam_dp_apply(dp, ops, cs.n, err, sizeof(err));
	cr_assert_eq(e, 0, "apply: %s", err);
	for (round = 0; round < 20; round++) {
		unsigned long add_calls, del_calls;

		/* a new first rule, drop, on a packet some other rule takes */
		t_rule(&nr, 1, (uint32_t)(cs.n + 1 + round));
		nr.action.type = XTCAM_ACT_DROP;
		cb_packet(&g, &cs, &cs.rules[t_below(&g, (uint32_t)cs.n)], &ps);
		if (ps.proto != IPPROTO_TCP && ps.proto != IPPROTO_UDP)
			ps.proto = IPPROTO_UDP;
		t_match_ethtype(&nr, 0x0800);
		t_match_ip4(&nr, true, ntohl(*(uint32_t *)ps.saddr), 32);
		t_match_ip4(&nr, false, ntohl(*(uint32_t *)ps.daddr), 32);
		t_match_proto(&nr, ps.proto);
		nr.dport_lo = (uint16_t)(ps.dport & ~0xff);
		nr.dport_hi = (uint16_t)(ps.dport | 0xff);
		nr.keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
		pkt_build(&ps, NULL, &p);

		xtcam_dp_timing(dp, &t0);
		op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &nr,
					   .act = { .type = XTCAM_ACT_DROP } };
		e = xtcam_dp_apply(dp, &op, 1, err, sizeof(err));
		cr_assert_eq(e, 0, "add one: %s", err);
		xtcam_dp_timing(dp, &t1);
		add_calls = t1.syscalls - t0.syscalls;
		cr_assert_eq(t_xdp_run(xtcam_dp_parse_fd(dp), p.buf, (uint32_t)p.len, &ret), 0);
		cr_assert_eq(t_scratch(dp, &sc), 0);
		cr_assert_eq(ret, XDP_DROP, "the new rule takes effect");
		cr_assert_eq(sc.result_rank >> 32, 1, "and wins on its priority");

		op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = nr.handle };
		e = xtcam_dp_apply(dp, &op, 1, err, sizeof(err));
		cr_assert_eq(e, 0, "del one: %s", err);
		xtcam_dp_timing(dp, &t0);
		del_calls = t0.syscalls - t1.syscalls;
		cr_assert_eq(t_xdp_run(xtcam_dp_parse_fd(dp), p.buf, (uint32_t)p.len, &ret), 0);
		cr_assert_eq(t_scratch(dp, &sc), 0);
		cr_assert_neq(sc.result_rank >> 32, 1, "deleted, it no longer matches");
		/* a rebuild of 100k rules would be > 300,000 map writes */
		cr_assert_lt(add_calls, 2000, "add: %lu map syscalls", add_calls);
		cr_assert_lt(del_calls, 2000, "del: %lu map syscalls", del_calls);
		if (round == 0)
			cr_log_info("one rule in 100k: add %lu, del %lu map syscalls",
				    add_calls, del_calls);
	}
	e = xtcam_dp_verify(dp, err, sizeof(err));
	cr_assert_eq(e, 0, "structure: %s", err);
	xtcam_dp_free(dp);
	cb_free(&cs);
	free(ops);
}
