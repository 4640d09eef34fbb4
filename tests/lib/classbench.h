/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A ClassBench-style ACL generator (our own; parameters after ClassBench's
 * acl seed statistics, see docs/design.md "ClassBench-style rule sets"), for the
 * tests and the benchmark.  Deterministic for a seed.
 *
 * Rules are 5-tuple: source and destination prefixes drawn around a fixed
 * set of address clusters (so prefixes nest and overlap as in real ACLs),
 * a protocol, source and destination port ranges.  Rule i has priority
 * 1 + i * 65534 / n and handle i + 1, so the list order is the match
 * order, as in an ACL.
 */
#ifndef XTCAM_CLASSBENCH_H
#define XTCAM_CLASSBENCH_H

#include <stddef.h>
#include <stdint.h>
#include "xtcam/rule.h"
#include "pkt.h"
#include "tlib.h"

#define CB_CLUSTERS 300

struct cb_params {
	uint32_t nrules;
	int family;          /* 4, 6, or 0: half of each, interleaved */
	uint32_t pass_pct;   /* share of rules with action pass (rest drop) */
};

struct cb_set {
	struct cb_params p;
	uint32_t c4[CB_CLUSTERS];          /* IPv4 cluster bases, host order */
	uint8_t c6[CB_CLUSTERS][16];       /* IPv6 cluster bases */
	struct xtcam_rule *rules;
	size_t n;
};

/* Generate p->nrules rules; returns 0 or -ENOMEM.  Free with cb_free. */
int cb_generate(struct cb_set *s, const struct cb_params *p, uint64_t seed);
void cb_free(struct cb_set *s);

/* A packet that satisfies target (it may still hit an earlier rule), or
 * with target NULL one from the same address clusters with random ports
 * and protocol, which may hit or miss. */
void cb_packet(struct t_rng *g, const struct cb_set *s,
	       const struct xtcam_rule *target, struct pkt_spec *ps);

/* Distinct TCAM masks after range expansion, and entries in all. */
int cb_masks(const struct cb_set *s, size_t *masks, size_t *entries);

#endif
