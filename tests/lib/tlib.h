/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Helpers shared by the tests and the benchmarks. */
#ifndef XTCAM_TLIB_H
#define XTCAM_TLIB_H

#include <stdbool.h>
#include <stdint.h>
#include "xtcam/rule.h"
#include "xtcam/dp.h"
#include "pkt.h"

/* A rule that matches every frame, with action pass. */
void t_rule(struct xtcam_rule *r, uint32_t prio, uint32_t handle);

/* Field setters (value/mask in key byte order). */
void t_match_ip4(struct xtcam_rule *r, bool src, uint32_t addr, int plen);
void t_match_ip6(struct xtcam_rule *r, bool src, const uint8_t *addr, int plen);
void t_match_proto(struct xtcam_rule *r, uint8_t proto);
void t_match_ethtype(struct xtcam_rule *r, uint16_t et);

/* Deterministic PRNG (splitmix64), seeded per test. */
struct t_rng { uint64_t s; };
uint64_t t_rand(struct t_rng *g);
static inline uint32_t t_below(struct t_rng *g, uint32_t n)
{
	return n ? (uint32_t)(t_rand(g) % n) : 0;
}
/* XTCAM_SEED from the environment, or def. */
uint64_t t_seed(uint64_t def);

/* Random rule sets and packets biased to hit them. */
enum t_shape {
	T_SHAPE_V4_5TUPLE,   /* prefixes, protocols, port ranges */
	T_SHAPE_V6,          /* IPv6 prefixes, ports */
	T_SHAPE_MIXED,       /* MACs, VLANs, tos, flags, ICMP, v4/v6, overlaps */
	T_SHAPE_FEW_MASKS,   /* many rules, 4 distinct masks, equal prios */
	T_SHAPE_MAX,
};
void t_gen_rule(struct t_rng *g, enum t_shape shape, uint32_t handle,
		struct xtcam_rule *r);
/* A packet spec that satisfies r (when r is not NULL), random elsewhere. */
void t_gen_packet(struct t_rng *g, const struct xtcam_rule *r,
		  struct pkt_spec *s);
void t_rule_format(const struct xtcam_rule *r, char *buf, size_t len);

/* BPF_PROG_TEST_RUN on an XDP program; returns 0 or -errno. */
int t_xdp_run(int prog_fd, const void *data, uint32_t len, uint32_t *retval);
/* The scratch of this CPU after a run (parser key, debug match). */
int t_scratch(struct xtcam_dp *dp, struct xtcam_scratch *s);
/* Pin this process to one CPU (test runs then use its per-CPU maps). */
int t_pin_cpu(int cpu);
bool t_have_bpf(void);
/* The id of the native XDP program on dev in namespace netns; -ENOENT when
 * there is none. */
int t_xdp_prog_in(const char *netns, const char *dev, uint32_t *id);
/* An fd of program prog_id's map called name, or -errno. */
int t_prog_map(uint32_t prog_id, const char *name);

#endif
