/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Internals of the data path (user/dp*.c). */
#ifndef XTCAM_DP_INTERNAL_H
#define XTCAM_DP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include "xtcam/dp.h"
#include "u64map.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

struct xtcam;   /* the generated skeleton */

struct xtcam_dp {
	unsigned int flags;
	struct xtcam_dp_geom geom;
	struct xtcam_config cfg;        /* as last written */
	int ncpus;
	size_t vsz[XTCAM_MAP_MAX];
	__u64 max[XTCAM_MAP_MAX];
	int fd[XTCAM_MAP_MAX];
	int prog_parse, prog_classify;
	struct xtcam *skel;
	void *mem[XTCAM_MAP_MAX];       /* XTCAM_DP_MEMORY */
	struct u64map memrules;
	int sync_outer, sync_inner;
	double stat_sync_s;
	unsigned long stat_syncs, stat_syscalls;
	struct xtcam_dp_timing st;      /* single-change counts */
	bool defer;                     /* xtcam_dp_set_defer */
	bool hold;                      /* xtcam_dp_set_hold */
	struct txn *pend;               /* a flip's catch-up, not yet done */
	bool pend_held;                 /* pend's thread not started (hold) */
	pthread_t sync_th;              /* its grace period */
	int sync_err;
	void (*notify)(void *arg, int delta);  /* xtcam_dp_set_notify */
	void *notify_arg;
	struct dp_win {                 /* mapped windows of buckets, tlists */
		int m;
		size_t off, len;
		void *p;
	} *win;
	int nwin, capwin;
};

size_t dp_vsz(const struct xtcam_dp *dp, int m);
size_t dp_usz(const struct xtcam_dp *dp, int m);
int dp_read(struct xtcam_dp *dp, int m, __u64 key, void *val);
int dp_read_range(struct xtcam_dp *dp, int m, __u64 first, size_t n, void *vals);
/* the sum over CPUs of one per-CPU counter value as a lookup returns it */
void xtcam_dp_percpu_sum(const struct xtcam_dp *dp, const char *val, struct xtcam_counter *c);
int dp_write(struct xtcam_dp *dp, int m, const __u64 *keys, const void *vals,
	     size_t n);
int dp_del(struct xtcam_dp *dp, int m, const __u64 *keys, size_t n);
int dp_dump_rules(struct xtcam_dp *dp, __u64 **keys, struct xtcam_hval **vals,
		  size_t *n);
int dp_sync(struct xtcam_dp *dp);
/* Element idx (absolute key) of an array map the loader writes in place
 * (buckets, tlists): in memory, or in a shared mapping of the BPF map, so
 * that an aligned word store there is what frames in flight see.  NULL
 * with errno set on failure. */
void *dp_elem(struct xtcam_dp *dp, int m, __u64 idx);
/* Unmap the windows (all, or only when there are many): pointers from
 * dp_elem stay valid until then. */
void dp_unmap(struct xtcam_dp *dp, bool all);

/* gen-relative maps: their keys are translated per generation */
static inline bool dp_is_gen_map(int m)
{
	return m == XTCAM_MAP_GENS || m == XTCAM_MAP_TUPLES ||
	       m == XTCAM_MAP_BUCKETS || m == XTCAM_MAP_RULES ||
	       m == XTCAM_MAP_ALLOC || m == XTCAM_MAP_TLISTS;
}

static inline __u64 dp_abs_key(const struct xtcam_dp *dp, int m, __u64 rel,
			       __u32 gen)
{
	switch (m) {
	case XTCAM_MAP_GENS:
		return gen;
	case XTCAM_MAP_TUPLES:
		return (__u64)gen * XTCAM_TUPLE_REGION + rel;
	case XTCAM_MAP_TLISTS:
		return (__u64)gen * XTCAM_NLISTS + rel;
	case XTCAM_MAP_BUCKETS:
		return (__u64)gen * dp->geom.bregion + rel;
	case XTCAM_MAP_ALLOC:
		return (__u64)gen * dp->geom.alloc_words + rel;
	case XTCAM_MAP_RULES:
		return ((__u64)gen << 32) | (__u32)rel;
	default:
		return rel;
	}
}

#endif
