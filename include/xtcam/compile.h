/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The rule compiler: rule -> classifier record (ternary part plus port
 * ranges) and rule -> TCAM entries (port ranges expanded into ternary
 * prefixes, as a hardware TCAM stores them).  Also the reference
 * classifier, a linear scan over TCAM entries used as the test oracle.
 */
#ifndef XTCAM_COMPILE_H
#define XTCAM_COMPILE_H

#include <stddef.h>
#include <linux/types.h>
#include "key.h"
#include "table.h"
#include "rule.h"

/* A ternary prefix of a 16-bit field: matches x when (x & mask) == value. */
struct xtcam_prefix16 {
	__u16 value;
	__u16 mask;
};

/* Split [lo, hi] into the fewest aligned prefixes (at most 30 for 16 bits).
 * Returns how many were written to out (out may be NULL to count). */
int xtcam_range_prefixes(__u16 lo, __u16 hi, struct xtcam_prefix16 *out);

/* The longest common prefix of lo and hi, as a mask (0 for 0-65535,
 * 0xffff for a single value). */
__u16 xtcam_range_lcp_mask(__u16 lo, __u16 hi);

/* One TCAM entry: (key & mask) == value; lowest rank wins. */
struct xtcam_entry {
	struct xtcam_key value;
	struct xtcam_key mask;
	__u64 rank;
	__u32 handle;
};

/* Presence flags the compiler adds to a rule's mask for the fields it
 * matches (a field is valid only under its flag). */
__u16 xtcam_rule_required_flags(const struct xtcam_rule *r);

/* Rule -> record.  Checks the rule is well formed (value within mask,
 * ranges ordered, prio/handle in range): -EINVAL otherwise. */
int xtcam_rule_compile(const struct xtcam_rule *r, struct xtcam_rec *rec);

/* How many TCAM entries the rule takes. */
__u32 xtcam_rule_entries(const struct xtcam_rule *r);

/* Rule -> its TCAM entries, appended at out[0..n); returns n or -errno.
 * max bounds the output; -ENOSPC when more are needed. */
int xtcam_rule_expand(const struct xtcam_rule *r, struct xtcam_entry *out,
		      size_t max);

/* Does the record match the key (the classifier's exact check)? */
int xtcam_rec_match(const struct xtcam_rec *rec, const struct xtcam_key *k);

/* Reference classifier: linear scan over TCAM entries. */
struct xtcam_oracle {
	struct xtcam_entry *e;
	size_t n, cap;
};

void xtcam_oracle_init(struct xtcam_oracle *o);
void xtcam_oracle_free(struct xtcam_oracle *o);
int xtcam_oracle_add(struct xtcam_oracle *o, const struct xtcam_rule *r);
/* Returns the winning entry or NULL (miss). */
const struct xtcam_entry *xtcam_oracle_lookup(const struct xtcam_oracle *o,
					      const struct xtcam_key *k);

#endif
