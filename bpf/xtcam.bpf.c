// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam host data path: two XDP programs.
 *
 *   xtcam_parse    parser stage: frame -> key (per-CPU scratch), then a
 *                  tail call into
 *   xtcam_classify classifier stage: tuple space search over the active
 *                  generation, exact check of candidates, the winning
 *                  rule's action and counters (or the default and the miss
 *                  counter).
 *
 *   xtcam_parse_nf, xtcam_classify_nf: the same two without xdp.frags, for
 *                  libxdp's dispatcher.  A dispatcher component is an
 *                  extension loaded without frags, and the kernel lets a
 *                  program tail call only into a prog array whose owner
 *                  matches it in xdp_has_frags: these two use their own
 *                  array (progs_nf).  Loaded by the attach layer only when
 *                  a dispatcher is in use.
 */
#include "parse.h"
#include "maps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* set by the loader through rodata before load */
const volatile __u32 xtcam_debug = 0;       /* record the match in scratch */
const volatile __u32 xtcam_count_time = 1;  /* last-hit timestamps */
/* inline probes: XTCAM_INLINE_PROBES, or none when 0 (the loader's
 * fallback when a kernel's verifier refuses the inline copies; see
 * classify_stage) */
#define XTCAM_INLINE_PROBES 8
const volatile __u32 xtcam_inline_probes = XTCAM_INLINE_PROBES;

/* the classifier, for the tail call */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} progs SEC(".maps");

/* the no-frags classifier, for the no-frags parser */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} progs_nf SEC(".maps");

static __always_inline void count(struct xtcam_counter *c, __u32 len)
{
	c->packets++;
	c->bytes += len;
	if (xtcam_count_time)
		c->last_hit = bpf_ktime_get_coarse_ns();
}

static __always_inline int parse_stage(struct xdp_md *ctx, void *prog_array)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0;
	struct xtcam_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct xtcam_config *cfg = bpf_map_lookup_elem(&config, &zero);
	struct xtcam_counter *c;

	if (!s || !cfg)
		return XDP_PASS;
	xtcam_parse_frame(data, data_end, &s->key, cfg->raw, 1);
	s->key.ifindex = ctx->ingress_ifindex;
	s->pkt_len = bpf_xdp_get_buff_len(ctx);
	bpf_tail_call(ctx, prog_array, 0);

	/* no classifier installed */
	__u32 idx = XTCAM_STAT_ERROR;
	c = bpf_map_lookup_elem(&stats, &idx);
	if (c)
		count(c, s->pkt_len);
	return XDP_PASS;
}

SEC("xdp.frags")
int xtcam_parse(struct xdp_md *ctx)
{
	return parse_stage(ctx, &progs);
}

SEC("xdp")
int xtcam_parse_nf(struct xdp_md *ctx)
{
	return parse_stage(ctx, &progs_nf);
}

/*
 * Single changes are published in place, by one aligned word store into a
 * bucket element (user/dp.c): a slot, an element's count n, its next link.
 * Those words are read once, with READ_ONCE, and a compiler barrier keeps
 * clang from moving the reads that depend on them (a slot past the count,
 * the slots of an element after its count) above them; the x86 JIT emits
 * loads in program order.
 */
#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#define barrier() asm volatile("" ::: "memory")

struct probe_ctx {
	const struct xtcam_key *key;
	__u64 best_rank;
	__u32 best_slot;
	__u32 best_cnt;       /* its counter index */
	struct xtcam_tlist *tl; /* the packet family's tuple list */
	__u32 bbase;          /* gen * bregion */
	__u32 bshift;         /* the hash's shift, xtcam_bshift(nbuckets) */
	__u32 bi;             /* bucket element being scanned */
	__u32 sig;            /* the frame's xtcam_sig, for candidate tags */
	__u32 pad;
	__u64 k1, k3;         /* the key's address words (1 and 3), which
	                       * every probe hashes: read here, not through
	                       * key, they leave a load out of each probe's
	                       * dependency chain */
};

/* The exact check of one candidate, inlined (a call per candidate cost
 * more than the verifier's extra work).  The address words first, with
 * early exits (candidates of one bucket mostly differ there), then the
 * port ranges, then protocol and flags; the IPv6-only and the rare words
 * only when the rule's mask has them (XTCAM_WMAP_V6, XTCAM_WMAP_RARE). */
static __always_inline int rec_match(const struct xtcam_key *key, const struct xtcam_rec *r)
{
	const __u64 *k = (const __u64 *)key;
	const __u64 *v = (const __u64 *)&r->value;
	const __u64 *m = (const __u64 *)&r->mask;
	__u64 diff;
	__u32 wmap;
	__u16 p;

	if (!key || !r)
		return 0;
	/* the address words first: candidates of one bucket mostly differ
	 * there */
	if ((k[3] & m[3]) ^ v[3])
		return 0;
	if ((k[1] & m[1]) ^ v[1])
		return 0;
	p = bpf_ntohs(key->dst_port);
	if (p < r->dport_lo || p > r->dport_hi)
		return 0;
	p = bpf_ntohs(key->src_port);
	if (p < r->sport_lo || p > r->sport_hi)
		return 0;
	diff = ((k[0] & m[0]) ^ v[0]) | ((k[8] & m[8]) ^ v[8]);
	if (diff)
		return 0;
	wmap = r->wmap;
	if (wmap & XTCAM_WMAP_V6)
		diff = ((k[2] & m[2]) ^ v[2]) | ((k[4] & m[4]) ^ v[4]);
	if (wmap & XTCAM_WMAP_RARE) {
		if (wmap & (1u << 5)) diff |= (k[5] & m[5]) ^ v[5];
		if (wmap & (1u << 6)) diff |= (k[6] & m[6]) ^ v[6];
		if (wmap & (1u << 7)) diff |= (k[7] & m[7]) ^ v[7];
		if (wmap & (1u << 9)) diff |= (k[9] & m[9]) ^ v[9];
	}
	return !diff;
}

/* One candidate of a bucket element: 0 to go on, 1 when the chain is
 * done (a match, or a rule that cannot beat the best hit). */
static __always_inline int scan_slot(struct probe_ctx *pc, const struct xtcam_bucket *b,
				     __u32 j)
{
	struct xtcam_rec *r;

	/* the tag: most candidates that cannot match end here, without a
	 * read of their record */
	if ((pc->sig ^ b->tag[j]) & b->tmask[j])
		return 0;
	/* the key straight from the bucket: a copy of the slot on the stack
	 * would be one more store and load on every candidate read.  The
	 * lookup reads the slot word once; a hole (a removed candidate) is
	 * an index past the map, so the lookup fails */
	r = bpf_map_lookup_elem(&records, &b->slot[j]);
	if (!r)
		return 0;
	if (r->rank >= pc->best_rank)
		return 1;
	if (rec_match(pc->key, r)) {
		pc->best_rank = r->rank;
		/* from the record: the bucket's slot word may have changed
		 * since the lookup read it */
		pc->best_slot = r->slot;
		pc->best_cnt = r->cnt;
		return 1;
	}
	return 0;
}

/* Scan one bucket element: candidates are sorted by rank, so the first
 * match is the element's best, and a candidate that cannot beat the best
 * hit so far ends the chain (one its tag rules out is passed over: it
 * cannot match).  Returns 1 when the chain is done. */
static __always_inline int scan_elem(struct probe_ctx *pc, const struct xtcam_bucket *b)
{
	__u32 n = READ_ONCE(b->n), next;

	barrier();
	/* sorted: when the first rule cannot beat the best hit, none can */
	if ((__u64)b->prio << 32 >= pc->best_rank)
		return 1;
	/* unrolled by hand: clang will not unroll a loop that passes the
	 * address of b->slot[j] to the lookup */
	_Static_assert(XTCAM_BUCKET_SLOTS == 8, "scan_elem unrolls 8 slots");
#define XTCAM_SCAN(j) do {				\
		if (n <= (j))					\
			goto next;				\
		if (scan_slot(pc, b, (j)))			\
			return 1;				\
	} while (0)
	XTCAM_SCAN(0); XTCAM_SCAN(1); XTCAM_SCAN(2); XTCAM_SCAN(3);
	XTCAM_SCAN(4); XTCAM_SCAN(5); XTCAM_SCAN(6); XTCAM_SCAN(7);
#undef XTCAM_SCAN
next:
	next = READ_ONCE(b->next);
	if (!next)
		return 1;
	pc->bi = pc->bbase + next - 1;
	return 0;
}

/* the rest of a chain, one element per iteration */
static long chain_step(__u32 i, void *arg)
{
	struct probe_ctx *pc = arg;
	struct xtcam_bucket *b = bpf_map_lookup_elem(&buckets, &pc->bi);

	(void)i;
	if (!b)
		return 1;
	return scan_elem(pc, b);
}

/* Probe the list's tuple i: 1 when the search is done. */
static __always_inline int probe_tuple(__u32 i, struct probe_ctx *pc)
{
	struct xtcam_tuple *t;
	struct xtcam_bucket *b;

	if (i >= XTCAM_MAX_TUPLES)
		return 1;
	t = &pc->tl->t[i];
	if (t->min_rank >= pc->best_rank)
		return 1;     /* sorted: no later tuple can beat the best hit */

	pc->bi = pc->bbase + xtcam_hash13(pc->k1, pc->k3, (const __u64 *)pc->key, t->mask,
					  t->wmap, t->hstart, pc->bshift);
	b = bpf_map_lookup_elem(&buckets, &pc->bi);
	if (!b || !b->n)
		return 0;
	/* most chains are one element: no second loop for them */
	if (!scan_elem(pc, b))
		bpf_loop(XTCAM_MAX_CHAIN - 1, chain_step, pc, 0);
	return 0;
}

/*
 * The first XTCAM_INLINE_PROBES probes are inline copies, the rest one
 * bpf_loop callback each: a callback or function call costs more than a
 * probe that finds an empty bucket, and most frames of an ACL-shaped
 * block make fewer than eight probes.  Copies, not a loop: clang will not
 * unroll one whose body passes map-value addresses to lookups, and the
 * verifier does not prune the states of a bounded loop around this body.
 * The copies make the verifier's work several times larger (see
 * docs/experiments.md).  The count is xtcam_inline_probes, read-only data
 * the verifier knows: with 0 it skips the copies as dead code, which the
 * loader falls back to when a kernel refuses the program with them
 * (E2BIG).
 */
static __always_inline __u32 inline_probes(void)
{
	return xtcam_inline_probes ? XTCAM_INLINE_PROBES : 0;
}

static long probe_rest(__u32 i, void *arg)
{
	return probe_tuple(i + inline_probes(), arg);
}

static __always_inline int classify_stage(struct xdp_md *ctx, void *dmap, void *cmap)
{
	__u32 zero = 0, idx;
	struct xtcam_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct xtcam_config *cfg = bpf_map_lookup_elem(&config, &zero);
	struct xtcam_action act;
	struct xtcam_counter *c;
	struct xtcam_gen *g;
	struct probe_ctx pc;
	__u32 gen, fam, ntl;

	if (!s || !cfg)
		return XDP_PASS;
	gen = cfg->gen & 1;

	pc.key = &s->key;
	pc.k1 = ((const __u64 *)&s->key)[1];
	pc.k3 = ((const __u64 *)&s->key)[3];
	pc.best_rank = XTCAM_RANK_NONE;
	pc.best_slot = 0;
	pc.best_cnt = 0;
	fam = xtcam_pkt_family(&s->key.eth_type);
	pc.sig = xtcam_sig(&s->key, fam);
	idx = gen * XTCAM_NLISTS + fam;
	pc.tl = bpf_map_lookup_elem(&tlists, &idx);
	if (!pc.tl)
		return XDP_PASS;
	pc.bbase = gen * cfg->bregion;
	pc.bshift = cfg->bshift;
	/* not clamped: probe_tuple stops at XTCAM_MAX_TUPLES, and a bound
	 * on ntl here makes the verifier track it through every probe,
	 * about twice its work */
	ntl = pc.tl->n;
#define XTCAM_PROBE(i) do {					\
		if ((i) >= ntl || probe_tuple((i), &pc))		\
			goto probed;				\
	} while (0)
	_Static_assert(XTCAM_INLINE_PROBES == 8, "classify_stage inlines 8 probes");
	/* one test of the read-only count a frame, not one a probe: the
	 * verifier drops the dead side but the JIT keeps the load, so a test
	 * in each copy would cost a load and branch per probe */
	if (xtcam_inline_probes) {
		XTCAM_PROBE(0); XTCAM_PROBE(1); XTCAM_PROBE(2); XTCAM_PROBE(3);
		XTCAM_PROBE(4); XTCAM_PROBE(5); XTCAM_PROBE(6); XTCAM_PROBE(7);
	}
#undef XTCAM_PROBE
	if (ntl > inline_probes())
		bpf_loop(ntl - inline_probes(), probe_rest, &pc, 0);
probed:

	if (pc.best_rank != XTCAM_RANK_NONE) {
		struct xtcam_action *a = bpf_map_lookup_elem(&actions, &pc.best_slot);

		if (!a)
			return XDP_PASS;
		act = *a;
		c = bpf_map_lookup_elem(&counters, &pc.best_cnt);
	} else {
		/* the default action: only a miss reads the generation */
		g = bpf_map_lookup_elem(&gens, &gen);
		if (!g)
			return XDP_PASS;
		act = g->dflt;
		idx = XTCAM_STAT_MISS;
		c = bpf_map_lookup_elem(&stats, &idx);
	}
	if (c)
		count(c, s->pkt_len);
	if (xtcam_debug) {
		s->result_rank = pc.best_rank;
		s->result_slot = pc.best_slot;
	}

	switch (act.type) {
	case XTCAM_ACT_DROP:
		return XDP_DROP;
	case XTCAM_ACT_TX:
		return XDP_TX;
	case XTCAM_ACT_REDIRECT:
		return bpf_redirect_map(dmap, act.arg, XDP_DROP);
	case XTCAM_ACT_CPU:
		return bpf_redirect_map(cmap, act.arg, XDP_DROP);
	default:
		return XDP_PASS;
	}
}

SEC("xdp.frags")
int xtcam_classify(struct xdp_md *ctx)
{
	return classify_stage(ctx, &devmap, &cpumap);
}

SEC("xdp")
int xtcam_classify_nf(struct xdp_md *ctx)
{
	return classify_stage(ctx, &devmap_nf, &cpumap_nf);
}
