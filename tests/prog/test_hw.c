// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The offload variant.  netdevsim takes almost any program, so the object
 * itself is checked against what an NFP runs (helpers, map types and
 * sizes, no loops, no calls, no tail calls, atomic adds only); and its
 * verdicts are proven by running the same object in native XDP through
 * the differential test.
 */
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "xtcam/hwcompile.h"
#include "xtcam/syntax.h"
#include "xtcam_hw.skel.h"
#include "tlib.h"

static const char *obj_path(void)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/xtcam_hw.bpf.o", getenv("XTCAM_BUILD") ? getenv("XTCAM_BUILD") :
		 "build");
	return p;
}

/* helpers the NFP's offload takes */
static bool nfp_helper(int id)
{
	return id == BPF_FUNC_map_lookup_elem || id == BPF_FUNC_map_update_elem ||
	       id == BPF_FUNC_map_delete_elem || id == BPF_FUNC_get_prandom_u32 ||
	       id == BPF_FUNC_xdp_adjust_head || id == BPF_FUNC_xdp_adjust_tail ||
	       id == BPF_FUNC_perf_event_output;
}

/* DFS over the control flow graph: the first instruction on a cycle, or -1 */
static int dfs(const struct bpf_insn *in, size_t n, size_t i, unsigned char *color)
{
	size_t succ[2];
	int ns = 0, k, r;
	__u8 cls, op;

	if (i >= n)
		return -1;
	if (color[i] == 1)
		return (int)i;          /* back on the current path: a cycle */
	if (color[i] == 2)
		return -1;
	color[i] = 1;
	cls = in[i].code & 0x07;
	op = in[i].code & 0xf0;
	if (in[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
		succ[ns++] = i + 2;     /* two slots */
	} else if ((cls == BPF_JMP || cls == BPF_JMP32) && op == BPF_EXIT) {
		/* no successor */
	} else if ((cls == BPF_JMP || cls == BPF_JMP32) && op == BPF_JA) {
		succ[ns++] = (size_t)((long)i + 1 + in[i].off);
	} else if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL) {
		succ[ns++] = i + 1;
		succ[ns++] = (size_t)((long)i + 1 + in[i].off);
	} else {
		succ[ns++] = i + 1;
	}
	for (k = 0; k < ns; k++)
		if ((r = dfs(in, n, succ[k], color)) >= 0)
			return r;
	color[i] = 2;
	return -1;
}

static int find_cycle(const struct bpf_insn *in, size_t n)
{
	unsigned char *color = calloc(n, 1);
	int r = dfs(in, n, 0, color);

	free(color);
	return r;
}

Test(hw_object, fits_an_nfp)
{
	struct bpf_object *obj = bpf_object__open_file(obj_path(), NULL);
	struct bpf_program *prog;
	struct bpf_map *map;
	int nprogs = 0;

	cr_assert(obj, "open %s: %s", obj_path(), strerror(errno));
	bpf_object__for_each_map(map, obj) {
		enum bpf_map_type t = bpf_map__type(map);
		const char *name = bpf_map__name(map);

		if (!strcmp(name, ".rodata") || strstr(name, ".rodata"))
			continue;   /* load-time constants, not a device map */
		cr_assert(t == BPF_MAP_TYPE_ARRAY || t == BPF_MAP_TYPE_HASH,
			  "map %s: type %d; an NFP takes array and hash only", name, t);
		cr_assert_leq(bpf_map__key_size(map) + bpf_map__value_size(map), 64,
			      "map %s: key %u + value %u > 64 bytes", name,
			      bpf_map__key_size(map), bpf_map__value_size(map));
		cr_assert_eq(bpf_map__map_flags(map), 0, "map %s: flags refused offloaded", name);
	}
	bpf_object__for_each_program(prog, obj) {
		const struct bpf_insn *in = bpf_program__insns(prog);
		size_t n = bpf_program__insn_cnt(prog), i;

		nprogs++;
		cr_assert_eq(bpf_program__type(prog), BPF_PROG_TYPE_XDP);
		for (i = 0; i < n; i++) {
			__u8 cls = in[i].code & 0x07;

			if (in[i].code == (BPF_JMP | BPF_CALL)) {
				cr_assert_neq(in[i].src_reg, BPF_PSEUDO_CALL,
					      "insn %zu: a bpf-to-bpf call", i);
				cr_assert(nfp_helper(in[i].imm), "insn %zu: helper %d", i, in[i].imm);
			}
			if ((cls == BPF_STX) && (in[i].code & 0xe0) == BPF_ATOMIC)
				cr_assert_eq(in[i].imm, BPF_ADD, "insn %zu: atomic other than add", i);
		}
		cr_assert_eq(find_cycle(in, n), -1, "a loop in the control flow; the NFP has none");
	}
	cr_assert_eq(nprogs, 1, "one program: no tail calls");
	bpf_object__close(obj);
}

static void need_bpf(void)
{
	if (!t_have_bpf())
		cr_skip_test("needs root to load BPF programs");
	cr_assert_eq(t_pin_cpu(0), 0);
}

TestSuite(hw_native, .init = need_bpf);

static uint32_t xdp_of(__u32 a)
{
	return a == XTCAM_ACT_DROP ? XDP_DROP : a == XTCAM_ACT_TX ? XDP_TX : XDP_PASS;
}

/* rules an offload can take: IPv4, ports, protocol, VLAN, flags, ICMP */
static void gen_hw_rule(struct t_rng *g, uint32_t h, struct xtcam_rule *r)
{
	do {
		t_gen_rule(g, t_below(g, 2) ? T_SHAPE_V4_5TUPLE : T_SHAPE_FEW_MASKS, h, r);
	} while (xtcam_rule_entries(r) > 4);
}

Test(hw_native, differential, .timeout = 300)
{
	uint64_t seed = t_seed(0x4e77);
	struct t_rng g = { seed };
	int round;

	for (round = 0; round < 40; round++) {
		struct xtcam_rule rules[XTCAM_HW_MAX_ENTRIES];
		struct xtcam_hw_table t;
		struct xtcam_oracle o;
		struct xtcam_hw *skel = xtcam_hw__open();
		uint64_t pk[XTCAM_HW_MAX_ENTRIES] = { 0 };
		size_t n = 0, need = 0, i;
		char err[256];
		__u32 dflt = t_below(&g, 2) ? XTCAM_ACT_PASS : XTCAM_ACT_DROP;

		cr_assert(skel);
		cr_assert_eq(xtcam_hw__load(skel), 0);
		xtcam_oracle_init(&o);
		while (n < XTCAM_HW_MAX_ENTRIES) {
			struct xtcam_rule r;

			gen_hw_rule(&g, (uint32_t)n + 1, &r);
			if (need + xtcam_rule_entries(&r) > XTCAM_HW_MAX_ENTRIES)
				break;
			need += xtcam_rule_entries(&r);
			rules[n++] = r;
			cr_assert_eq(xtcam_oracle_add(&o, &r), 0);
		}
		cr_assert_eq(xtcam_hw_compile(rules, n, dflt, XTCAM_HW_MAX_ENTRIES, &t, err,
					      sizeof(err)), 0, "%s", err);
		cr_assert_eq(xtcam_hw_write(bpf_map__fd(skel->maps.hw_cfg),
					    bpf_map__fd(skel->maps.hw_entries),
					    bpf_map__fd(skel->maps.hw_acts), &t), 0);
		for (i = 0; i < 1500; i++) {
			const struct xtcam_entry *e;
			struct pkt_spec s;
			struct pkt p;
			uint32_t ret, want, a, j;
			int idx;

			t_gen_packet(&g, t_below(&g, 4) ? &rules[t_below(&g, (uint32_t)n)] : NULL, &s);
			pkt_build(&s, NULL, &p);
			cr_assert_eq(t_xdp_run(bpf_program__fd(skel->progs.xtcam_hw), p.buf,
					       (uint32_t)p.len, &ret), 0);
			e = xtcam_oracle_lookup(&o, &p.key);
			want = dflt;
			if (e)
				for (j = 0; j < n; j++)
					if (rules[j].handle == e->handle) {
						want = rules[j].action.type;
						pk[j]++;
					}
			cr_assert_eq(ret, xdp_of(want), "seed %#llx round %d packet %zu: offload %u, "
				     "reference %u", (unsigned long long)seed, round, i, ret,
				     xdp_of(want));
			idx = xtcam_hw_lookup(&t, &p.key, &a);
			cr_assert_eq(xdp_of(a), ret, "C model of the table agrees: entry %d action %u, "
				     "xdp %u, reference %u", idx, a, ret, want);
			(void)idx;
		}
		/* counters: the rule's, by its index */
		for (i = 0; i < t.nrules; i++) {
			struct xtcam_hw_counter c;
			__u32 k = (__u32)i, j;

			cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.hw_counters), &k, &c), 0);
			for (j = 0; j < n && rules[j].handle != t.handle[i]; j++)
				;
			cr_assert_eq(c.packets, pk[j], "handle %u: %llu counted, %llu expected",
				     t.handle[i], (unsigned long long)c.packets,
				     (unsigned long long)pk[j]);
		}
		xtcam_oracle_free(&o);
		xtcam_hw__destroy(skel);
	}
}

/* The offload variant's parser stops at the IP datagram's end too: a rule
 * on UDP/53 does not take a datagram whose padding looks like UDP/53. */
Test(hw_native, padding_is_not_the_datagram)
{
	struct xtcam_hw *skel = xtcam_hw__open();
	struct xtcam_hw_table t;
	struct xtcam_rule r;
	struct pkt_spec s;
	struct pkt p;
	uint32_t ret;
	char err[256];

	cr_assert(skel);
	cr_assert_eq(xtcam_hw__load(skel), 0);
	cr_assert_eq(xtcam_rule_parse_line("prio 1 handle 1 ip_proto udp dst_port 53 action drop",
					   &r, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_hw_compile(&r, 1, XTCAM_ACT_PASS, XTCAM_HW_MAX_ENTRIES, &t, err,
				      sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_hw_write(bpf_map__fd(skel->maps.hw_cfg),
				    bpf_map__fd(skel->maps.hw_entries),
				    bpf_map__fd(skel->maps.hw_acts), &t), 0);
	pkt_spec_init(&s);
	s.dport = 53;
	s.payload = 0;
	pkt_build(&s, NULL, &p);
	cr_assert_eq(t_xdp_run(bpf_program__fd(skel->progs.xtcam_hw), p.buf, (uint32_t)p.len,
			       &ret), 0);
	cr_assert_eq(ret, XDP_DROP, "UDP/53 is dropped");
	s.set_iplen = 1;
	s.iplen = 20;               /* the UDP header is padding now */
	pkt_build(&s, NULL, &p);
	cr_assert_eq(t_xdp_run(bpf_program__fd(skel->progs.xtcam_hw), p.buf, (uint32_t)p.len,
			       &ret), 0);
	cr_assert_eq(ret, XDP_PASS, "a 20-byte datagram with UDP/53 in its padding is not");
	xtcam_hw__destroy(skel);
}

Test(hw_compile, refusals_name_the_reason)
{
	struct xtcam_rule r[2];
	struct xtcam_hw_table t;
	char err[256];
	uint8_t a6[16] = { 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

	t_rule(&r[0], 1, 1);
	t_match_ip6(&r[0], true, a6, 128);
	cr_assert_eq(xtcam_hw_rule_check(&r[0], err, sizeof(err)), -EOPNOTSUPP);
	cr_assert(strstr(err, "IPv6 address"), "%s", err);
	t_rule(&r[0], 1, 1);
	r[0].action.type = XTCAM_ACT_REDIRECT;
	cr_assert_eq(xtcam_hw_rule_check(&r[0], err, sizeof(err)), -EOPNOTSUPP);
	cr_assert(strstr(err, "not redirect"), "%s", err);
	t_rule(&r[0], 1, 1);
	r[0].value.dst_mac[0] = 2;
	r[0].mask.dst_mac[0] = 0xff;
	cr_assert_eq(xtcam_hw_rule_check(&r[0], err, sizeof(err)), -EOPNOTSUPP);
	cr_assert(strstr(err, "dst_mac"), "%s", err);
	/* capacity in entries, ranges expanded */
	t_rule(&r[0], 1, 1);
	t_match_proto(&r[0], IPPROTO_TCP);
	r[0].dport_lo = 1024;
	r[0].dport_hi = 65535;
	cr_assert_eq(xtcam_hw_compile(r, 1, XTCAM_ACT_PASS, 2, &t, err, sizeof(err)), -ENOSPC);
	cr_assert_str_eq(err, "needs 6 entries, device takes 2");
	cr_assert_eq(xtcam_hw_compile(r, 1, XTCAM_ACT_PASS, 16, &t, err, sizeof(err)), 0);
	cr_assert_eq(t.nentries, 6);
}

/* each rule keeps its counter index across rewrites; new rules take free
 * ones; entries of a rule point at its index */
Test(hw_compile, counter_indexes_stay_with_their_rules)
{
	struct xtcam_rule r[4];
	struct xtcam_hw_table t;
	__u32 img[XTCAM_HW_MAX_ENTRIES], next[XTCAM_HW_MAX_ENTRIES];
	char err[256];
	int i;

	for (i = 0; i < 4; i++) {
		t_rule(&r[i], 10u * (uint32_t)(i + 1), (uint32_t)i + 1);
		t_match_proto(&r[i], (uint8_t)(i + 1));
	}
	/* handles 1, 2 */
	cr_assert_eq(xtcam_hw_compile(r, 2, XTCAM_ACT_PASS, 4, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_hw_counters_assign(&t, NULL, 4, img), 0);
	cr_assert(img[0] == 1 && img[1] == 2 && img[2] == 0, "%u %u %u", img[0], img[1], img[2]);
	/* handle 3 ahead of both: its entry comes first, its counter is new */
	r[2].prio = 1;
	cr_assert_eq(xtcam_hw_compile(r, 3, XTCAM_ACT_PASS, 4, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_hw_counters_assign(&t, img, 4, next), 0);
	cr_assert(next[0] == 1 && next[1] == 2 && next[2] == 3, "%u %u %u", next[0], next[1],
		  next[2]);
	cr_assert_eq(t.act[0].cnt, 2, "handle 3's entry counts at index 2");
	cr_assert_eq(t.act[1].cnt, 0);
	cr_assert_eq(t.act[2].cnt, 1);
	memcpy(img, next, sizeof(img));
	/* handle 1 goes, handle 4 comes: it takes the index handle 1 left */
	cr_assert_eq(xtcam_hw_compile(&r[1], 3, XTCAM_ACT_PASS, 4, &t, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(xtcam_hw_counters_assign(&t, img, 4, next), 0);
	cr_assert(next[0] == 4 && next[1] == 2 && next[2] == 3, "%u %u %u", next[0], next[1],
		  next[2]);
	/* more rules than indexes */
	cr_assert_eq(xtcam_hw_compile(r, 4, XTCAM_ACT_PASS, 16, &t, err, sizeof(err)), 0);
	cr_assert_eq(xtcam_hw_counters_assign(&t, NULL, 3, next), -ENOSPC);
}
