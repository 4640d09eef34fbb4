/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * One block's host data path: the parser and classifier programs and their
 * maps (see xtcam/table.h), and the updater that keeps the TupleMerge
 * lookup structure in them.  Changes are applied in batches, all or
 * nothing, atomically for packets in flight: a batch of several changes
 * through the two generations (a flip and a grace period), a single
 * change in place by one word store, without a wait.
 *
 * A data path lives either in the kernel (BPF maps, loaded from the
 * skeleton or reopened from bpffs pins) or in memory (unit tests and the
 * compiler benchmark; xtcam_dp_classify() runs the same lookup in C).
 */
#ifndef XTCAM_DP_H
#define XTCAM_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "key.h"
#include "table.h"
#include "rule.h"

struct xtcam_dp;

enum xtcam_dp_map {
	XTCAM_MAP_CONFIG,
	XTCAM_MAP_GENS,
	XTCAM_MAP_TUPLES,
	XTCAM_MAP_BUCKETS,
	XTCAM_MAP_RECORDS,
	XTCAM_MAP_ACTIONS,
	XTCAM_MAP_COUNTERS,
	XTCAM_MAP_STATS,
	XTCAM_MAP_RULES,
	XTCAM_MAP_ALLOC,
	XTCAM_MAP_DEVMAP,
	XTCAM_MAP_CPUMAP,
	XTCAM_MAP_PROGS,
	XTCAM_MAP_SCRATCH,
	XTCAM_MAP_TARGETS,
	XTCAM_MAP_PROGS_NF,   /* the no-frags classifier (libxdp's dispatcher) */
	XTCAM_MAP_DEVMAP_NF,  /* its redirect and CPU maps, kept like devmap */
	XTCAM_MAP_CPUMAP_NF,  /* and cpumap */
	XTCAM_MAP_TLISTS,     /* each family's tuple list, one value each */
	XTCAM_MAP_MAX,
};

/* the names the maps carry in the kernel and in bpffs */
extern const char *const xtcam_dp_map_names[XTCAM_MAP_MAX];

/* Sizes, all derived from the capacity (in TCAM entries). */
struct xtcam_dp_geom {
	__u32 capacity;
	__u32 nslots;       /* records and actions: 2 x capacity, so a whole
	                     * set can be swapped while the old one serves */
	__u32 ncnt;         /* counters */
	__u32 nbuckets;     /* main buckets per generation, power of 2 */
	__u32 bregion;      /* bucket elements per generation */
	__u32 nrules_max;   /* registry entries (both generations) */
	__u32 slot_words;   /* allocation bitmap words per generation: */
	__u32 cnt_words;    /*   slots, counters, overflow buckets, */
	__u32 ovf_words;
	__u32 limbo_base;   /*   then the same three again: limbo, what
	                     *   single changes freed, still taken until a
	                     *   grace period has passed */
	__u32 alloc_words;
};

void xtcam_dp_geom_init(struct xtcam_dp_geom *g, __u32 capacity);

enum xtcam_dp_flags {
	XTCAM_DP_MEMORY = 1 << 0,   /* no kernel: maps in memory */
	XTCAM_DP_DEBUG  = 1 << 1,   /* programs record the match in scratch */
	XTCAM_DP_NOTIME = 1 << 2,   /* no last-hit timestamps */
	XTCAM_DP_NOINLINE = 1 << 3, /* every probe through bpf_loop (what
	                             * create falls back to when the kernel
	                             * refuses the classifier's inline probes
	                             * with E2BIG) */
};

int xtcam_dp_create(const struct xtcam_block_spec *spec, unsigned int flags,
		    struct xtcam_dp **out);
/* Pin every map and both programs under dir (created), and reopen. */
int xtcam_dp_pin(struct xtcam_dp *dp, const char *dir);
int xtcam_dp_open_pinned(const char *dir, struct xtcam_dp **out);
/* The same for a reader that holds no lock: maps only, opened read-only
 * (BPF_F_RDONLY), and nothing repaired (a change left half done stays for
 * the next writer).  For counters, statistics and xtcam_dp_info. */
int xtcam_dp_open_pinned_ro(const char *dir, struct xtcam_dp **out);
int xtcam_dp_unpin(const char *dir);
void xtcam_dp_free(struct xtcam_dp *dp);

int xtcam_dp_map_fd(const struct xtcam_dp *dp, enum xtcam_dp_map m);
int xtcam_dp_parse_fd(const struct xtcam_dp *dp);     /* entry program */
int xtcam_dp_classify_fd(const struct xtcam_dp *dp);
/* The flags the block was created with; XTCAM_DP_NOINLINE set when the
 * kernel refused the classifier with inline probes and create fell back. */
unsigned int xtcam_dp_flags(const struct xtcam_dp *dp);
const struct xtcam_dp_geom *xtcam_dp_geom(const struct xtcam_dp *dp);

enum xtcam_dp_cmd {
	XTCAM_DP_ADD,
	XTCAM_DP_DEL,
	XTCAM_DP_REPLACE,   /* same handle, new rule; keeps its counters
			     * unless the op says fresh_counters */
};

struct xtcam_dp_op {
	enum xtcam_dp_cmd cmd;
	const struct xtcam_rule *rule;  /* ADD, REPLACE */
	__u32 handle;                   /* DEL */
	struct xtcam_action act;        /* ADD, REPLACE: resolved action */
	bool fresh_counters;            /* REPLACE: the rule changed, its
					 * counters start at zero */
	bool free;                      /* ADD: the caller knows the handle
					 * is not in use (not looked up) */
};

/* Apply a batch, all or nothing.  -EEXIST: ADD of a handle in use;
 * -ENOENT: DEL/REPLACE of an unknown handle; -ENOSPC: capacity (err says
 * how many entries it needs and has); -EINVAL: malformed rule. */
int xtcam_dp_apply(struct xtcam_dp *dp, const struct xtcam_dp_op *ops,
		   size_t n, char *err, size_t errlen);

/* A batch through a flip commits at the flip; then, after a grace period,
 * the other generation is brought up to date.  With defer set, an apply
 * returns at the flip, the grace period and the catch-up under way in a
 * thread, which xtcam_dp_settle joins (as does the next call on the data
 * path that needs it; the next batch reads and places its changes first
 * and joins before it writes): the caller's own work (its registry's
 * commit, its next batch) overlaps them.  The data path is dirty until
 * the catch-up is done: the lock must be held until then.  Settling
 * returns what finishing returned: an error there leaves the change made
 * and the other generation to be repaired by the next change. */
void xtcam_dp_set_defer(struct xtcam_dp *dp, bool defer);
int xtcam_dp_settle(struct xtcam_dp *dp);
/* Deferred and held: an apply returns at the flip with its grace period
 * and catch-up not started (no thread), for a process that forks then:
 * xtcam_dp_settle runs them in the caller's thread (the child's), and
 * xtcam_dp_forget drops them unrun (the parent's, which leaves them to
 * the child; the data path stays dirty until the child is done, or is
 * repaired by the next change).  xtcam_dp_set_defer(dp, false) ends it. */
void xtcam_dp_set_hold(struct xtcam_dp *dp);
void xtcam_dp_forget(struct xtcam_dp *dp);
/* fn(arg, 1) when a deferred catch-up starts (in the caller's thread),
 * fn(arg, -1) from its thread once it is done (or failed). */
void xtcam_dp_set_notify(struct xtcam_dp *dp, void (*fn)(void *arg, int delta), void *arg);
int xtcam_dp_set_default(struct xtcam_dp *dp, const struct xtcam_action *a);

struct xtcam_dp_info {
	__u32 nrules, nentries, ntuples, capacity;
	__u32 buckets_used, overflow_used, max_chain; /* from a scan */
	struct xtcam_action dflt;
	__u32 gen;
};
int xtcam_dp_info(struct xtcam_dp *dp, struct xtcam_dp_info *info, bool scan);

/* Counters summed over CPUs.  -ENOENT for an unknown handle. */
int xtcam_dp_rule_counters(struct xtcam_dp *dp, __u32 handle,
			   struct xtcam_counter *c);
int xtcam_dp_stat(struct xtcam_dp *dp, enum xtcam_stat s,
		  struct xtcam_counter *c);
int xtcam_dp_counters_reset(struct xtcam_dp *dp);
/*
 * The counters of every rule of the active generation, read at once in
 * batches (O(rules) work in a few syscalls a thousand rules, instead of
 * three lookups a rule): for listings of a whole block.  Memory: 8 bytes
 * a rule while reading, then 32 bytes a rule whose counter is not zero.
 * xtcam_dp_counters_get gives zero for a handle without one.
 */
struct xtcam_dp_counters;
int xtcam_dp_counters_read(struct xtcam_dp *dp, struct xtcam_dp_counters **out);
void xtcam_dp_counters_get(const struct xtcam_dp_counters *t, __u32 handle,
			   struct xtcam_counter *c);
void xtcam_dp_counters_free(struct xtcam_dp_counters *t);
/* The same read in a thread of its own, started here: *out is to be
 * waited for (xtcam_dp_counters_wait: 0 or the read's -errno) before
 * xtcam_dp_counters_get; dp stays open until then (or until
 * xtcam_dp_counters_free, which waits too).  dp is not used by the
 * thread otherwise: the caller may go on reading through it. */
int xtcam_dp_counters_start(struct xtcam_dp *dp, struct xtcam_dp_counters **out);
int xtcam_dp_counters_wait(struct xtcam_dp_counters *t);

/* The handles in the active generation, sorted; caller frees *out. */
int xtcam_dp_handles(struct xtcam_dp *dp, __u32 **out, size_t *n);
/* The record of a handle in the active generation. */
int xtcam_dp_rule_record(struct xtcam_dp *dp, __u32 handle,
			 struct xtcam_rec *rec, struct xtcam_action *act);

/* The lookup in C over the data path's maps (memory or kernel), as the BPF
 * classifier does it; returns the winning slot's rank or XTCAM_RANK_NONE,
 * and counts the probes it made. */
__u64 xtcam_dp_classify(struct xtcam_dp *dp, const struct xtcam_key *k,
			__u32 *handle, unsigned int *probes);

/* Check the structure's invariants (every rule in its bucket exactly once,
 * buckets sorted, tuples sorted and covering, counts right); returns 0 or
 * -EUCLEAN with a message. */
int xtcam_dp_verify(struct xtcam_dp *dp, char *err, size_t errlen);

/* Internal errors counted by the programs, and the time spent waiting for
 * the grace period, for the benchmark. */
struct xtcam_dp_timing {
	double sync_s;
	unsigned long syncs;
	unsigned long syscalls;
	/* single changes: published in place, by kind of publishing store */
	unsigned long inplace;          /* all of them */
	unsigned long pub_append;       /* n + 1 of an element */
	unsigned long pub_elem;         /* a new overflow element linked */
	unsigned long pub_hole;         /* into a hole where it sorts */
	unsigned long pub_shift;        /* after a right shift ... */
	unsigned long shift_len;        /* ... of this many positions, in all */
	unsigned long pub_del;          /* a hole */
	unsigned long pub_swap;         /* a replace by one slot store */
	unsigned long pub_two;          /* a replace by add then delete */
	unsigned long bounds_lowered;   /* tuple list bounds lowered */
	/* single changes that took a flip instead, by reason */
	unsigned long flip_tuple;       /* a new tuple */
	unsigned long flip_bounds;      /* too many list bounds to lower out
	                                 * of order */
	unsigned long flip_space;       /* no free slot, counter or element,
	                                 * or a chain at its limit */
	unsigned long flip_other;       /* not built for in place (arch) */
	unsigned long limbo_syncs;      /* grace periods waited to free limbo
	                                 * when the free pool ran out */
};
void xtcam_dp_timing(const struct xtcam_dp *dp, struct xtcam_dp_timing *t);

#endif
