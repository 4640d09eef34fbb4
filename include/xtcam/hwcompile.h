/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Rules -> the offload variant's table (see xtcam/hw.h). */
#ifndef XTCAM_HWCOMPILE_H
#define XTCAM_HWCOMPILE_H

#include <stddef.h>
#include "hw.h"
#include "rule.h"

struct xtcam_hw_table {
	struct xtcam_hw_entry entry[XTCAM_HW_MAX_ENTRIES];
	struct xtcam_hw_act act[XTCAM_HW_MAX_ENTRIES];
	__u32 handle[XTCAM_HW_MAX_ENTRIES];   /* rule of each counter index */
	__u32 nentries, nrules;
	struct xtcam_hw_cfg cfg;
};

/* Can the offload run this rule?  0, or -EOPNOTSUPP with the reason. */
int xtcam_hw_rule_check(const struct xtcam_rule *r, char *err, size_t errlen);

/* The table for rules (any order) on a device that takes `max` entries:
 * -EOPNOTSUPP for a rule it cannot run, -ENOSPC ("needs N entries, device
 * takes M") when they do not fit. */
int xtcam_hw_compile(const struct xtcam_rule *rules, size_t n, __u32 dflt, __u32 max,
		     struct xtcam_hw_table *t, char *err, size_t errlen);

/* Give each rule of t a counter index that stays its own across
 * rewrites: prev[i] is the handle that owned index i on the device (0:
 * free; NULL: nothing before), indexes 0..max-1.  Rules in prev keep their
 * index, new ones take free ones; t's actions point at them, and next[i]
 * gets the new owners.  -ENOSPC when they do not fit. */
int xtcam_hw_counters_assign(struct xtcam_hw_table *t, const __u32 *prev, __u32 max,
			     __u32 *next);

/* The table's verdict for a key, as the offloaded program gives it:
 * the entry index that matched or -1, and the action type. */
int xtcam_hw_lookup(const struct xtcam_hw_table *t, const struct xtcam_key *k,
		    __u32 *action);

/* Write a table into the offload program's maps (entries and actions
 * first, then the count that makes them live). */
int xtcam_hw_write(int cfg_fd, int entries_fd, int acts_fd, const struct xtcam_hw_table *t);

#endif
