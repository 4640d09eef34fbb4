// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Changes to a loaded block: capacity refusals that leave the block as it
 * was, batches that fail half way and change nothing, and random churn
 * (adds, deletes, replaces) checked against the reference after each batch.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
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

TestSuite(update, .init = need_bpf);

static struct xtcam_dp_op add_op(const struct xtcam_rule *r)
{
	return (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = r,
				     .act = { .type = r->action.type } };
}

static uint32_t classify_frame(struct xtcam_dp *dp, const struct pkt_spec *s,
			       uint64_t *rank)
{
	struct xtcam_scratch sc;
	struct pkt p;
	uint32_t ret;

	pkt_build(s, NULL, &p);
	cr_assert_eq(t_xdp_run(xtcam_dp_parse_fd(dp), p.buf, (uint32_t)p.len, &ret), 0);
	cr_assert_eq(t_scratch(dp, &sc), 0);
	*rank = sc.result_rank;
	return ret;
}

/* 1024-65535 takes 6 TCAM entries */
static void range_rule(struct xtcam_rule *r, uint32_t h)
{
	t_rule(r, 10, h);
	t_match_ethtype(r, 0x0800);
	t_match_proto(r, IPPROTO_TCP);
	t_match_ip4(r, false, 0x0a000000u + h, 32);
	r->dport_lo = 1024;
	r->dport_hi = 65535;
	r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
	r->action.type = XTCAM_ACT_DROP;
}

Test(update, capacity_refused_whole)
{
	struct xtcam_block_spec spec = { .capacity = 100 };
	struct xtcam_rule r[20];
	struct xtcam_dp_op ops[20];
	struct xtcam_dp_info before, after;
	struct pkt_spec s;
	uint32_t *h1, *h2;
	size_t n1, n2;
	uint64_t rank;
	struct xtcam_dp *dp;
	char err[256];
	int i, e;

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	for (i = 0; i < 17; i++) {
		range_rule(&r[i], (uint32_t)i + 1);
		cr_assert_eq(xtcam_rule_entries(&r[i]), 6, "1024-65535 is 6 prefixes");
		ops[i] = add_op(&r[i]);
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, 15, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_info(dp, &before, false), 0);
	cr_assert_eq(before.nentries, 90);
	cr_assert_eq(before.nrules, 15);

	e = xtcam_dp_apply(dp, ops + 15, 2, err, sizeof(err));
	cr_assert_eq(e, -ENOSPC, "102 entries do not fit in 100: %d", e);
	cr_assert_str_eq(err, "needs 102 entries, block holds 100");
	cr_assert_eq(xtcam_dp_info(dp, &after, false), 0);
	cr_assert_eq(after.nentries, 90, "old entries untouched");
	cr_assert_eq(after.nrules, 15);
	cr_assert_eq(after.gen, before.gen, "no generation flip happened");
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);

	/* a refused rule does not classify; a kept one still does */
	pkt_spec_init(&s);
	s.proto = IPPROTO_TCP;
	s.dport = 5000;
	s.daddr[3] = 16;            /* 10.0.0.16: handle 16, refused */
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_PASS);
	cr_assert_eq(rank, XTCAM_RANK_NONE);
	s.daddr[3] = 3;
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP);
	cr_assert_eq((uint32_t)rank, 3);

	/* deleting makes room, then the same batch fits */
	ops[17] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = 1 };
	cr_assert_eq(xtcam_dp_apply(dp, ops + 17, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_apply(dp, ops + 15, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_info(dp, &after, false), 0);
	cr_assert_eq(after.nentries, 90);
	cr_assert_eq(xtcam_dp_handles(dp, &h1, &n1), 0);
	cr_assert_eq(n1, 15);
	cr_assert_eq(h1[0], 2);
	cr_assert_eq(h1[14], 16);
	free(h1);
	(void)h2;
	(void)n2;
	xtcam_dp_free(dp);
}

Test(update, batch_fails_halfway_changes_nothing)
{
	struct xtcam_block_spec spec = { .capacity = 1000 };
	struct xtcam_rule r[4];
	struct xtcam_dp_op ops[4];
	struct xtcam_dp *dp;
	uint32_t *h;
	size_t n;
	char err[256];
	int i;

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	for (i = 0; i < 4; i++) {
		range_rule(&r[i], (uint32_t)i + 1);
		ops[i] = add_op(&r[i]);
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, 2, err, sizeof(err)), 0);
	/* add 3, add 4, then delete 9 (unknown): nothing may change */
	ops[2] = add_op(&r[2]);
	ops[3] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = 9 };
	cr_assert_eq(xtcam_dp_apply(dp, ops + 2, 2, err, sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, "handle 9: no such rule");
	cr_assert_eq(xtcam_dp_handles(dp, &h, &n), 0);
	cr_assert_eq(n, 2, "still two rules");
	free(h);
	/* adding a handle in use */
	ops[0] = add_op(&r[1]);
	cr_assert_eq(xtcam_dp_apply(dp, ops, 1, err, sizeof(err)), -EEXIST);
	cr_assert_str_eq(err, "handle 2: in use");
	/* replace of an unknown handle */
	ops[0] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE, .rule = &r[3],
				       .act = { .type = XTCAM_ACT_PASS } };
	cr_assert_eq(xtcam_dp_apply(dp, ops, 1, err, sizeof(err)), -ENOENT);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_free(dp);
}

/* A block full to its capacity, its whole set replaced by rules of other
 * handles in one batch, and back: each generation of the loader's rules
 * map holds the old set until the batch's deletes and the new one after
 * (the map holds two generations of the capacity's rules, no more), and
 * a batch of adds of handles known free (a load's) is found again rule by
 * rule after its flip and catch-up. */
Test(update, whole_set_replaced_at_capacity_with_other_handles, .timeout = 300)
{
	enum { CAP = 20000 };
	struct xtcam_block_spec spec = { .capacity = CAP };
	struct xtcam_rule *r = calloc(2 * CAP, sizeof(*r));
	struct xtcam_dp_op *ops = calloc(2 * CAP, sizeof(*ops));
	struct xtcam_rec rec;
	struct xtcam_action act;
	struct xtcam_dp *dp;
	char err[256];
	uint32_t *h;
	size_t n;
	int i, round;

	cr_assert(r && ops);
	cr_assert_eq(xtcam_dp_create(&spec, 0, &dp), 0);
	for (i = 0; i < 2 * CAP; i++) {
		t_rule(&r[i], 1 + i % 100, (uint32_t)i + 1);
		t_match_ethtype(&r[i], 0x0800);
		t_match_ip4(&r[i], false, 0x0a000000u + (uint32_t)i, 32);
		r[i].action.type = XTCAM_ACT_DROP;
	}
	for (i = 0; i < CAP; i++) {
		ops[i] = add_op(&r[i]);
		ops[i].free = true;
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, CAP, err, sizeof(err)), 0, "%s", err);
	for (round = 0; round < 2; round++) {
		int from = round ? CAP : 0, to = round ? 0 : CAP;

		for (i = 0; i < CAP; i++) {
			ops[2 * i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL,
							   .handle = (uint32_t)(from + i + 1) };
			ops[2 * i + 1] = add_op(&r[to + i]);
		}
		cr_assert_eq(xtcam_dp_apply(dp, ops, 2 * CAP, err, sizeof(err)), 0,
			     "round %d: %s", round, err);
		cr_assert_eq(xtcam_dp_handles(dp, &h, &n), 0);
		cr_assert_eq(n, CAP);
		free(h);
		cr_assert_eq(xtcam_dp_rule_record(dp, (uint32_t)(to + CAP), &rec, &act), 0);
		cr_assert_eq(xtcam_dp_rule_record(dp, (uint32_t)(from + 1), &rec, &act), -ENOENT);
		cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	}
	xtcam_dp_free(dp);
	free(r);
	free(ops);
}

Test(update, replace_keeps_counters)
{
	struct xtcam_block_spec spec = { .capacity = 100 };
	struct xtcam_rule r, r2;
	struct xtcam_dp_op op;
	struct xtcam_counter c;
	struct pkt_spec s;
	struct xtcam_dp *dp;
	uint64_t rank;
	char err[256];

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	range_rule(&r, 5);
	op = add_op(&r);
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0);
	pkt_spec_init(&s);
	s.proto = IPPROTO_TCP;
	s.dport = 2000;
	s.daddr[3] = 5;
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP);
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP);
	/* same handle, new prio, new action, narrower range */
	r2 = r;
	r2.prio = 3;
	r2.dport_lo = r2.dport_hi = 2000;
	op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE, .rule = &r2,
				   .act = { .type = XTCAM_ACT_TX } };
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_TX, "the new action");
	cr_assert_eq(rank, XTCAM_RANK(3, 5), "the new prio");
	cr_assert_eq(xtcam_dp_rule_counters(dp, 5, &c), 0);
	cr_assert_eq(c.packets, 3, "counters kept across replace: %llu",
		     (unsigned long long)c.packets);
	s.dport = 2001;
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_PASS, "the new match");
	xtcam_dp_free(dp);
}

/* A replace that says fresh_counters (the core's rule changed) starts the
 * rule's counters at zero; the counter it had is not reused while frames
 * may still count on it. */
Test(update, replace_with_fresh_counters_starts_at_zero)
{
	struct xtcam_block_spec spec = { .capacity = 100 };
	struct xtcam_rule r, r2, o;
	struct xtcam_dp_op op;
	struct xtcam_counter c;
	struct xtcam_rec rec1, rec2;
	struct pkt_spec s;
	struct xtcam_dp *dp;
	uint64_t rank;
	char err[256];

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	range_rule(&r, 5);
	range_rule(&o, 6);
	op = add_op(&r);
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0);
	op = add_op(&o);
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0);
	pkt_spec_init(&s);
	s.proto = IPPROTO_TCP;
	s.dport = 2000;
	s.daddr[3] = 5;
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP);
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP);
	cr_assert_eq(xtcam_dp_rule_counters(dp, 5, &c), 0);
	cr_assert(c.packets == 2 && c.bytes > 0 && c.last_hit, "%llu",
		  (unsigned long long)c.packets);
	cr_assert_eq(xtcam_dp_rule_record(dp, 5, &rec1, NULL), 0);
	r2 = r;
	r2.dport_lo = r2.dport_hi = 2000;
	op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE, .rule = &r2,
				   .act = { .type = XTCAM_ACT_DROP }, .fresh_counters = true };
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_dp_rule_counters(dp, 5, &c), 0);
	cr_assert(c.packets == 0 && c.bytes == 0 && c.last_hit == 0,
		  "a changed rule starts at zero: %llu", (unsigned long long)c.packets);
	cr_assert_eq(xtcam_dp_rule_record(dp, 5, &rec2, NULL), 0);
	cr_assert_neq(rec2.cnt, rec1.cnt, "a counter of its own");
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP);
	cr_assert_eq(xtcam_dp_rule_counters(dp, 5, &c), 0);
	cr_assert_eq(c.packets, 1, "and counts from there");
	/* the other rule's counters are untouched */
	s.daddr[3] = 6;
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP);
	cr_assert_eq(xtcam_dp_rule_counters(dp, 6, &c), 0);
	cr_assert_eq(c.packets, 1);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_free(dp);
}

/* random churn against the reference */
static void churn(uint64_t seed)
{
	struct t_rng g = { seed };
	struct xtcam_block_spec spec = { .capacity = 20000 };
	size_t cap = 4000, n = 0, i, k;
	struct xtcam_rule *cur = calloc(cap, sizeof(*cur));
	struct xtcam_rule *nr = calloc(cap, sizeof(*nr));
	struct xtcam_dp_op *ops = calloc(cap, sizeof(*ops));
	uint32_t next_handle = 1;
	struct xtcam_dp *dp;
	char err[256];
	int round, e;

	cr_assert(cur && nr && ops);
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	for (round = 0; round < 40; round++) {
		size_t nops = 0, nn = 0;
		struct xtcam_oracle o;

		/* deletes and replaces of existing rules, then adds */
		for (i = 0; i < n; i++) {
			uint32_t c = t_below(&g, 10);

			if (c == 0) {
				ops[nops++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL,
								    .handle = cur[i].handle };
			} else if (c == 1) {
				nr[nn] = cur[i];
				t_gen_rule(&g, (enum t_shape)t_below(&g, T_SHAPE_MAX),
					   cur[i].handle, &nr[nn]);
				ops[nops++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE,
								    .rule = &nr[nn],
								    .act = { .type = nr[nn].action.type } };
				nn++;
			} else {
				nr[nn++] = cur[i];
			}
		}
		k = 1 + t_below(&g, round < 10 ? 300 : 80);
		for (i = 0; i < k && nn < cap; i++) {
			t_gen_rule(&g, (enum t_shape)t_below(&g, T_SHAPE_MAX), next_handle++, &nr[nn]);
			ops[nops++] = add_op(&nr[nn]);
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
		for (i = 0; i < 300; i++) {
			const struct xtcam_entry *ent;
			struct xtcam_scratch sc;
			struct pkt_spec s;
			struct pkt p;
			uint32_t ret;

			t_gen_packet(&g, n && t_below(&g, 4) ? &cur[t_below(&g, (uint32_t)n)] : NULL, &s);
			pkt_build(&s, NULL, &p);
			cr_assert_eq(t_xdp_run(xtcam_dp_parse_fd(dp), p.buf, (uint32_t)p.len, &ret), 0);
			cr_assert_eq(t_scratch(dp, &sc), 0);
			ent = xtcam_oracle_lookup(&o, &sc.key);
			cr_assert_eq(sc.result_rank, ent ? ent->rank : XTCAM_RANK_NONE,
				     "seed %#llx round %d packet %zu: rank %#llx, reference %#llx",
				     (unsigned long long)seed, round, i,
				     (unsigned long long)sc.result_rank,
				     (unsigned long long)(ent ? ent->rank : XTCAM_RANK_NONE));
		}
		xtcam_oracle_free(&o);
	}
	xtcam_dp_free(dp);
	free(cur);
	free(nr);
	free(ops);
}

Test(update, churn_against_reference, .timeout = 600)
{
	churn(t_seed(0xc4u));
}

/* The same with the caches a big batch uses (dense buckets and slot
 * information) for every batch. */
Test(update, churn_against_reference_dense_caches, .timeout = 600)
{
	setenv("XTCAM_DP_DENSE_MIN", "1", 1);
	churn(t_seed(0xc5u));
}

/* Maps pinned by a build whose data path has another format (layout, hash,
 * placement) are refused on open, not read with this build's meaning. */
Test(update, pinned_maps_of_another_format_refused)
{
	struct xtcam_block_spec spec = { .capacity = 64, .dflt = { .type = XTCAM_ACT_PASS } };
	char dir[] = "/sys/fs/bpf/xtcam-test-format-XXXXXX";
	struct xtcam_dp *dp = NULL, *dp2 = NULL;
	struct xtcam_config cfg;
	struct xtcam_rule r;
	struct xtcam_dp_op op;
	__u32 zero = 0;
	char e[256];
	int fd;

	struct statfs sf;

	if (statfs("/sys/fs/bpf", &sf) || sf.f_type != BPF_FS_MAGIC)
		cr_assert_eq(mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"), 0,
			     "mount bpffs: %s", strerror(errno));
	cr_assert_not_null(mkdtemp(dir));
	rmdir(dir);
	cr_assert_eq(xtcam_dp_create(&spec, 0, &dp), 0);
	range_rule(&r, 1);
	op = add_op(&r);
	cr_assert_eq(xtcam_dp_apply(dp, &op, 1, e, sizeof(e)), 0, "%s", e);
	cr_assert_eq(xtcam_dp_pin(dp, dir), 0);
	/* this build reopens its own pins */
	cr_assert_eq(xtcam_dp_open_pinned(dir, &dp2), 0);
	xtcam_dp_free(dp2);
	dp2 = NULL;
	fd = xtcam_dp_map_fd(dp, XTCAM_MAP_CONFIG);
	cr_assert_eq(bpf_map_lookup_elem(fd, &zero, &cfg), 0);
	cr_assert_eq(cfg.format, XTCAM_DP_FORMAT);
	cfg.format = XTCAM_DP_FORMAT - 1;
	cr_assert_eq(bpf_map_update_elem(fd, &zero, &cfg, 0), 0);
	cr_expect_eq(xtcam_dp_open_pinned(dir, &dp2), -EUCLEAN);
	xtcam_dp_free(dp2);
	cr_expect_eq(xtcam_dp_unpin(dir), 0);
	xtcam_dp_free(dp);
}

/* A rule of a few fixed shapes (dst /32 or /24, src /16 or none, udp or
 * tcp, one port or a range): after a batch that holds every shape, a
 * single change always finds a tuple for its rule. */
static void shaped_rule(struct t_rng *g, uint32_t h, struct xtcam_rule *r)
{
	uint32_t s = t_below(g, 8);

	t_rule(r, 1 + t_below(g, 50), h);
	t_match_ethtype(r, 0x0800);
	t_match_ip4(r, false, 0x0a000000u | (t_below(g, 1u << 16) << 8) | t_below(g, 256),
		    s & 1 ? 24 : 32);
	if (s & 2)
		t_match_ip4(r, true, 0xc0a80000u | t_below(g, 1u << 16), 16);
	t_match_proto(r, s & 4 ? IPPROTO_TCP : IPPROTO_UDP);
	r->dport_lo = (uint16_t)(1 + t_below(g, 2000));
	r->dport_hi = (uint16_t)(r->dport_lo + (t_below(g, 2) ? 0 : t_below(g, 500)));
	r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
	r->action.type = t_below(g, 2) ? XTCAM_ACT_DROP : XTCAM_ACT_PASS;
}

/* Single adds, deletes and replaces on a loaded data path: after each,
 * the BPF classifier (BPF_PROG_TEST_RUN) agrees with the reference, and
 * none of them waited for a grace period: each was published in place. */
Test(update, single_changes_need_no_sync, .timeout = 600)
{
	uint64_t seed = t_seed(0x51u);
	struct t_rng g = { seed };
	struct xtcam_block_spec spec = { .capacity = 20000 };
	size_t cap = 1000, n = 300, i;
	struct xtcam_rule *cur = calloc(cap, sizeof(*cur)), nr;
	struct xtcam_dp_op *ops = calloc(n, sizeof(*ops));
	struct xtcam_dp_timing t0, t1;
	uint32_t next = 1;
	struct xtcam_dp *dp;
	char err[256];
	int step, e;

	cr_assert(cur && ops);
	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	for (i = 0; i < n; i++) {
		shaped_rule(&g, next++, &cur[i]);
		ops[i] = add_op(&cur[i]);
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, n, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_timing(dp, &t0);
	for (step = 0; step < 400; step++) {
		uint32_t c = t_below(&g, 3), v = t_below(&g, (uint32_t)n);
		struct xtcam_dp_op op;
		struct xtcam_oracle o;

		if (c == 0 && n > 1) {
			op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = cur[v].handle };
		} else if (c == 1) {
			shaped_rule(&g, cur[v].handle, &nr);
			op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE, .rule = &nr,
						   .act = { .type = nr.action.type } };
		} else {
			if (n == cap)
				continue;
			shaped_rule(&g, next++, &nr);
			op = add_op(&nr);
		}
		e = xtcam_dp_apply(dp, &op, 1, err, sizeof(err));
		cr_assert_eq(e, 0, "seed %#llx step %d: %s", (unsigned long long)seed, step, err);
		if (op.cmd == XTCAM_DP_DEL)
			cur[v] = cur[--n];
		else if (op.cmd == XTCAM_DP_REPLACE)
			cur[v] = nr;
		else
			cur[n++] = nr;
		xtcam_oracle_init(&o);
		for (i = 0; i < n; i++)
			cr_assert_eq(xtcam_oracle_add(&o, &cur[i]), 0);
		for (i = 0; i < 20; i++) {
			const struct xtcam_entry *ent;
			struct pkt_spec s;
			uint64_t rank;

			t_gen_packet(&g, t_below(&g, 4) ? &cur[t_below(&g, (uint32_t)n)] : NULL, &s);
			classify_frame(dp, &s, &rank);
			{
				struct xtcam_scratch sc;

				cr_assert_eq(t_scratch(dp, &sc), 0);
				ent = xtcam_oracle_lookup(&o, &sc.key);
			}
			cr_assert_eq(rank, ent ? ent->rank : XTCAM_RANK_NONE,
				     "seed %#llx step %d packet %zu: rank %#llx, reference %#llx",
				     (unsigned long long)seed, step, i, (unsigned long long)rank,
				     (unsigned long long)(ent ? ent->rank : XTCAM_RANK_NONE));
		}
		xtcam_oracle_free(&o);
	}
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	xtcam_dp_timing(dp, &t1);
	cr_assert_eq(t1.syncs, t0.syncs, "%lu grace periods waited by 400 single changes",
		     t1.syncs - t0.syncs);
	cr_assert_eq(t1.inplace - t0.inplace, 400);
	xtcam_dp_free(dp);
	free(cur);
	free(ops);
}

static struct xtcam_config read_config(struct xtcam_dp *dp)
{
	struct xtcam_config cfg;
	__u32 zero = 0;

	cr_assert_eq(bpf_map_lookup_elem(xtcam_dp_map_fd(dp, XTCAM_MAP_CONFIG), &zero, &cfg), 0);
	return cfg;
}

/* A deferred batch commits at its flip: the frames see its rules at once,
 * the other generation is brought up to date by the settle (or by the
 * next call that needs it), and both generations are then the same. */
Test(update, deferred_flip_settles_later)
{
	struct xtcam_block_spec spec = { .capacity = 1000 };
	struct xtcam_rule r[4];
	struct xtcam_dp_op ops[4];
	struct pkt_spec s;
	struct xtcam_dp *dp;
	struct xtcam_config cfg;
	uint64_t rank;
	__u32 gen0;
	char err[256];
	int i;

	cr_assert_eq(xtcam_dp_create(&spec, XTCAM_DP_DEBUG, &dp), 0);
	for (i = 0; i < 4; i++) {
		range_rule(&r[i], (uint32_t)i + 1);
		ops[i] = add_op(&r[i]);
	}
	cr_assert_eq(xtcam_dp_apply(dp, ops, 2, err, sizeof(err)), 0, "%s", err);
	gen0 = read_config(dp).gen;
	cr_assert_eq(read_config(dp).dirty, 0, "not deferred: caught up before it returns");
	xtcam_dp_set_defer(dp, true);
	cr_assert_eq(xtcam_dp_apply(dp, ops + 2, 2, err, sizeof(err)), 0, "%s", err);
	cfg = read_config(dp);
	cr_assert_eq(cfg.gen, !gen0, "flipped");
	cr_assert_eq(cfg.dirty, 1, "the other generation not yet caught up");
	pkt_spec_init(&s);
	s.proto = IPPROTO_TCP;
	s.dport = 2000;
	s.daddr[3] = 4;
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP, "the batch's rule, before the settle");
	cr_assert_eq(rank, XTCAM_RANK(10, 4));
	cr_assert_eq(xtcam_dp_settle(dp), 0);
	cr_assert_eq(read_config(dp).dirty, 0, "settled");
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	/* deferred again, then another batch: it settles the first */
	ops[0] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = 4 };
	cr_assert_eq(xtcam_dp_apply(dp, ops, 1, err, sizeof(err)), 0, "%s", err);
	ops[0] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = 1 };
	ops[1] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = 2 };
	cr_assert_eq(xtcam_dp_apply(dp, ops, 2, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_PASS, "handle 4 gone");
	xtcam_dp_set_defer(dp, false);
	cr_assert_eq(xtcam_dp_settle(dp), 0);
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "%s", err);
	s.daddr[3] = 3;
	cr_assert_eq(classify_frame(dp, &s, &rank), XDP_DROP, "handle 3 kept");
	xtcam_dp_free(dp);
}
