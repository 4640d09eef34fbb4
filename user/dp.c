// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The data path of one block: creating, pinning and reopening its programs
 * and maps, and the updater that applies batches of rule changes to the
 * TupleMerge lookup structure (see xtcam/table.h for the layout and the
 * two-generation protocol).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "dp_internal.h"
#include "trace.h"
#include "xtcam.skel.h"
#include "errmsg.h"
#include "progress.h"
#include "rpack.h"

const char *const xtcam_dp_map_names[XTCAM_MAP_MAX] = {
	[XTCAM_MAP_CONFIG]   = "config",
	[XTCAM_MAP_GENS]     = "gens",
	[XTCAM_MAP_TUPLES]   = "tuples",
	[XTCAM_MAP_BUCKETS]  = "buckets",
	[XTCAM_MAP_RECORDS]  = "records",
	[XTCAM_MAP_ACTIONS]  = "actions",
	[XTCAM_MAP_COUNTERS] = "counters",
	[XTCAM_MAP_STATS]    = "stats",
	[XTCAM_MAP_RULES]    = "rules",
	[XTCAM_MAP_ALLOC]    = "alloc",
	[XTCAM_MAP_DEVMAP]   = "devmap",
	[XTCAM_MAP_CPUMAP]   = "cpumap",
	[XTCAM_MAP_PROGS]    = "progs",
	[XTCAM_MAP_SCRATCH]  = "scratch",
	[XTCAM_MAP_TARGETS]  = "targets",
	[XTCAM_MAP_PROGS_NF] = "progs_nf",
	[XTCAM_MAP_DEVMAP_NF] = "devmap_nf",
	[XTCAM_MAP_CPUMAP_NF] = "cpumap_nf",
	[XTCAM_MAP_TLISTS]   = "tlists",
};

#define PIN_PROG_PARSE    "prog_parse"
#define PIN_PROG_CLASSIFY "prog_classify"

/* TupleMerge: how many rules a bucket may hold before a rule looks for
 * another tuple (or makes a new one).  16, not 8: a lower limit splits
 * large sets of one shape into more tuples, and each frame pays a probe
 * per tuple.  XTCAM_TM_LIMIT overrides it for experiments. */
static unsigned int tm_limit(void)
{
	static unsigned int lim;

	if (!lim) {
		const char *e = getenv("XTCAM_TM_LIMIT");

		lim = e && atoi(e) > 0 ? (unsigned int)atoi(e) : 16;
	}
	return lim;
}

void xtcam_dp_geom_init(struct xtcam_dp_geom *g, __u32 capacity)
{
	__u32 nb = 64;

	if (!capacity)
		capacity = XTCAM_DEFAULT_CAPACITY;
	memset(g, 0, sizeof(*g));
	g->capacity = capacity;
	g->nslots = 2 * capacity;
	g->ncnt = 2 * capacity;
	/* a main bucket for every two entries of capacity: a rule takes 2-3
	 * entries on ACLs, so buckets stay mostly empty, and more buckets
	 * would only take memory */
	while (nb < capacity / 2)
		nb <<= 1;
	g->nbuckets = nb;
	g->bregion = nb + nb / 4;
	g->nrules_max = 2 * capacity;
	g->slot_words = (g->nslots + 63) / 64;
	g->cnt_words = (g->ncnt + 63) / 64;
	g->ovf_words = (nb / 4 + 63) / 64;
	g->limbo_base = g->slot_words + g->cnt_words + g->ovf_words;
	/* the used and limbo bitmaps, then where the last allocation of each
	 * pool (slots, counters, overflow elements) ended */
	g->alloc_words = 2 * g->limbo_base + 3;
}

static void dp_sizes(struct xtcam_dp *dp)
{
	const struct xtcam_dp_geom *g = &dp->geom;

	dp->vsz[XTCAM_MAP_CONFIG] = sizeof(struct xtcam_config);
	dp->vsz[XTCAM_MAP_GENS] = sizeof(struct xtcam_gen);
	dp->vsz[XTCAM_MAP_TUPLES] = sizeof(struct xtcam_tuple);
	dp->vsz[XTCAM_MAP_TLISTS] = sizeof(struct xtcam_tlist);
	dp->vsz[XTCAM_MAP_BUCKETS] = sizeof(struct xtcam_bucket);
	dp->vsz[XTCAM_MAP_RECORDS] = sizeof(struct xtcam_rec);
	dp->vsz[XTCAM_MAP_ACTIONS] = sizeof(struct xtcam_action);
	dp->vsz[XTCAM_MAP_COUNTERS] = sizeof(struct xtcam_counter);
	dp->vsz[XTCAM_MAP_STATS] = sizeof(struct xtcam_counter);
	dp->vsz[XTCAM_MAP_RULES] = sizeof(struct xtcam_hval);
	dp->vsz[XTCAM_MAP_ALLOC] = sizeof(__u64);
	dp->max[XTCAM_MAP_CONFIG] = 1;
	dp->max[XTCAM_MAP_GENS] = 2;
	dp->max[XTCAM_MAP_TUPLES] = 2 * XTCAM_TUPLE_REGION;
	dp->max[XTCAM_MAP_TLISTS] = 2 * XTCAM_NLISTS;
	dp->max[XTCAM_MAP_BUCKETS] = 2ull * g->bregion;
	dp->max[XTCAM_MAP_RECORDS] = g->nslots;
	dp->max[XTCAM_MAP_ACTIONS] = g->nslots;
	dp->max[XTCAM_MAP_COUNTERS] = g->ncnt;
	dp->max[XTCAM_MAP_STATS] = XTCAM_STAT_MAX;
	dp->max[XTCAM_MAP_RULES] = g->nrules_max;
	dp->max[XTCAM_MAP_ALLOC] = 2ull * g->alloc_words;
}

static struct xtcam_dp *dp_alloc(unsigned int flags)
{
	struct xtcam_dp *dp = calloc(1, sizeof(*dp));
	int i;

	if (!dp)
		return NULL;
	dp->flags = flags;
	for (i = 0; i < XTCAM_MAP_MAX; i++)
		dp->fd[i] = -1;
	dp->prog_parse = dp->prog_classify = -1;
	dp->sync_outer = dp->sync_inner = -1;
	u64map_init(&dp->memrules);
	dp->ncpus = 1;
	return dp;
}

void xtcam_dp_free(struct xtcam_dp *dp)
{
	int i;

	if (!dp)
		return;
	xtcam_dp_settle(dp);
	dp_unmap(dp, true);
	if (dp->skel) {
		xtcam__destroy(dp->skel);
	} else {
		for (i = 0; i < XTCAM_MAP_MAX; i++)
			if (dp->fd[i] >= 0)
				close(dp->fd[i]);
		if (dp->prog_parse >= 0)
			close(dp->prog_parse);
		if (dp->prog_classify >= 0)
			close(dp->prog_classify);
	}
	if (dp->sync_outer >= 0)
		close(dp->sync_outer);
	if (dp->sync_inner >= 0)
		close(dp->sync_inner);
	for (i = 0; i < XTCAM_MAP_MAX; i++)
		free(dp->mem[i]);
	u64map_free(&dp->memrules, free);
	free(dp);
}

static int dp_write1(struct xtcam_dp *dp, int m, __u64 key, const void *val)
{
	return dp_write(dp, m, &key, val, 1);
}

static int dp_init_tables(struct xtcam_dp *dp, const struct xtcam_block_spec *spec)
{
	struct xtcam_gen g = { 0 };
	int err;

	memset(&dp->cfg, 0, sizeof(dp->cfg));
	dp->cfg.nbuckets = dp->geom.nbuckets;
	dp->cfg.bregion = dp->geom.bregion;
	dp->cfg.bshift = xtcam_bshift(dp->geom.nbuckets);
	dp->cfg.format = XTCAM_DP_FORMAT;
	memcpy(dp->cfg.raw, spec->raw, sizeof(dp->cfg.raw));
	err = dp_write1(dp, XTCAM_MAP_CONFIG, 0, &dp->cfg);
	if (err)
		return err;
	g.dflt = spec->dflt;
	if (!g.dflt.type)
		g.dflt.type = XTCAM_ACT_PASS;
	err = dp_write1(dp, XTCAM_MAP_GENS, 0, &g);
	if (!err)
		err = dp_write1(dp, XTCAM_MAP_GENS, 1, &g);
	return err;
}

int xtcam_dp_create(const struct xtcam_block_spec *spec, unsigned int flags,
		    struct xtcam_dp **out)
{
	struct xtcam_dp *dp = dp_alloc(flags);
	struct xtcam *skel = NULL;
	libbpf_print_fn_t old_print;
	bool quiet;
	int err, i;

	if (!dp)
		return -ENOMEM;
	if (spec->capacity > XTCAM_MAX_CAPACITY) {
		err = -EINVAL;
		goto fail;
	}
	xtcam_dp_geom_init(&dp->geom, spec->capacity);
	dp_sizes(dp);

	if (flags & XTCAM_DP_MEMORY) {
		for (i = 0; i < XTCAM_MAP_MAX; i++) {
			if (!dp->max[i] || i == XTCAM_MAP_RULES)
				continue;
			dp->mem[i] = calloc(dp->max[i], dp_usz(dp, i));
			if (!dp->mem[i]) {
				err = -ENOMEM;
				goto fail;
			}
		}
	} else {
		int n = libbpf_num_possible_cpus();

		if (n < 0) {
			err = n;
			goto fail;
		}
		dp->ncpus = n;
		/* the inline probes first, quietly (see below) */
		quiet = !(flags & XTCAM_DP_NOINLINE);
again:
		skel = xtcam__open();
		if (!skel) {
			err = -errno;
			goto fail;
		}
		dp->skel = skel;
		skel->rodata->xtcam_debug = !!(flags & XTCAM_DP_DEBUG);
		skel->rodata->xtcam_count_time = !(flags & XTCAM_DP_NOTIME);
		if (dp->flags & XTCAM_DP_NOINLINE)
			skel->rodata->xtcam_inline_probes = 0;
		bpf_map__set_max_entries(skel->maps.buckets, (__u32)dp->max[XTCAM_MAP_BUCKETS]);
		bpf_map__set_max_entries(skel->maps.records, dp->geom.nslots);
		bpf_map__set_max_entries(skel->maps.actions, dp->geom.nslots);
		bpf_map__set_max_entries(skel->maps.counters, dp->geom.ncnt);
		bpf_map__set_max_entries(skel->maps.rules, dp->geom.nrules_max);
		bpf_map__set_max_entries(skel->maps.alloc, (__u32)dp->max[XTCAM_MAP_ALLOC]);
		bpf_map__set_max_entries(skel->maps.cpumap, (__u32)n);
		bpf_map__set_max_entries(skel->maps.cpumap_nf, (__u32)n);
		/* the no-frags pair is loaded by the attach layer, when a
		 * dispatcher needs it (see bpf/xtcam.bpf.c) */
		bpf_program__set_autoload(skel->progs.xtcam_parse_nf, false);
		bpf_program__set_autoload(skel->progs.xtcam_classify_nf, false);
		/* (libbpf loads a failed program again for its log: a
		 * verifier that gives up works twice.  A log level of our own
		 * would stop that, but a log too small for the failure turns
		 * E2BIG into ENOSPC.) */
		old_print = quiet ? libbpf_set_print(NULL) : NULL;
		err = xtcam__load(skel);
		if (quiet)
			libbpf_set_print(old_print);
		if (err && quiet) {
			/* E2BIG: the verifier gave up on the inline probes,
			 * load the classifier without them; else the same
			 * again, with libbpf's log for the caller */
			xtcam__destroy(skel);
			dp->skel = skel = NULL;
			quiet = false;
			if (err == -E2BIG)
				dp->flags |= XTCAM_DP_NOINLINE;
			goto again;
		}
		if (err)
			goto fail;
		dp->fd[XTCAM_MAP_CONFIG] = bpf_map__fd(skel->maps.config);
		dp->fd[XTCAM_MAP_GENS] = bpf_map__fd(skel->maps.gens);
		dp->fd[XTCAM_MAP_TUPLES] = bpf_map__fd(skel->maps.tuples);
		dp->fd[XTCAM_MAP_BUCKETS] = bpf_map__fd(skel->maps.buckets);
		dp->fd[XTCAM_MAP_RECORDS] = bpf_map__fd(skel->maps.records);
		dp->fd[XTCAM_MAP_ACTIONS] = bpf_map__fd(skel->maps.actions);
		dp->fd[XTCAM_MAP_COUNTERS] = bpf_map__fd(skel->maps.counters);
		dp->fd[XTCAM_MAP_STATS] = bpf_map__fd(skel->maps.stats);
		dp->fd[XTCAM_MAP_RULES] = bpf_map__fd(skel->maps.rules);
		dp->fd[XTCAM_MAP_ALLOC] = bpf_map__fd(skel->maps.alloc);
		dp->fd[XTCAM_MAP_DEVMAP] = bpf_map__fd(skel->maps.devmap);
		dp->fd[XTCAM_MAP_CPUMAP] = bpf_map__fd(skel->maps.cpumap);
		dp->fd[XTCAM_MAP_PROGS] = bpf_map__fd(skel->maps.progs);
		dp->fd[XTCAM_MAP_SCRATCH] = bpf_map__fd(skel->maps.scratch);
		dp->fd[XTCAM_MAP_TARGETS] = bpf_map__fd(skel->maps.targets);
		dp->fd[XTCAM_MAP_PROGS_NF] = bpf_map__fd(skel->maps.progs_nf);
		dp->fd[XTCAM_MAP_DEVMAP_NF] = bpf_map__fd(skel->maps.devmap_nf);
		dp->fd[XTCAM_MAP_CPUMAP_NF] = bpf_map__fd(skel->maps.cpumap_nf);
		dp->fd[XTCAM_MAP_TLISTS] = bpf_map__fd(skel->maps.tlists);
		dp->prog_parse = bpf_program__fd(skel->progs.xtcam_parse);
		dp->prog_classify = bpf_program__fd(skel->progs.xtcam_classify);
		{
			__u32 zero = 0;

			if (bpf_map_update_elem(dp->fd[XTCAM_MAP_PROGS], &zero,
						&dp->prog_classify, 0)) {
				err = -errno;
				goto fail;
			}
		}
	}
	err = dp_init_tables(dp, spec);
	if (err)
		goto fail;
	*out = dp;
	return 0;
fail:
	xtcam_dp_free(dp);
	return err;
}

int xtcam_dp_map_fd(const struct xtcam_dp *dp, enum xtcam_dp_map m)
{
	return dp->fd[m];
}

int xtcam_dp_parse_fd(const struct xtcam_dp *dp)
{
	return dp->prog_parse;
}

int xtcam_dp_classify_fd(const struct xtcam_dp *dp)
{
	return dp->prog_classify;
}

unsigned int xtcam_dp_flags(const struct xtcam_dp *dp)
{
	return dp->flags;
}

const struct xtcam_dp_geom *xtcam_dp_geom(const struct xtcam_dp *dp)
{
	return &dp->geom;
}

void xtcam_dp_timing(const struct xtcam_dp *dp, struct xtcam_dp_timing *t)
{
	*t = dp->st;
	t->sync_s = dp->stat_sync_s;
	t->syncs = dp->stat_syncs;
	t->syscalls = dp->stat_syscalls;
}

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int xtcam_dp_pin(struct xtcam_dp *dp, const char *dir)
{
	char path[PATH_MAX];
	int i, err;

	xtcam_dp_settle(dp);
	if (dp->flags & XTCAM_DP_MEMORY)
		return -EOPNOTSUPP;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	for (i = 0; i < XTCAM_MAP_MAX; i++) {
		err = pin_path(path, sizeof(path), dir, xtcam_dp_map_names[i]);
		if (err)
			return err;
		if (bpf_obj_pin(dp->fd[i], path))
			return -errno;
	}
	err = pin_path(path, sizeof(path), dir, PIN_PROG_PARSE);
	if (err || bpf_obj_pin(dp->prog_parse, path))
		return err ? err : -errno;
	err = pin_path(path, sizeof(path), dir, PIN_PROG_CLASSIFY);
	if (err || bpf_obj_pin(dp->prog_classify, path))
		return err ? err : -errno;
	return 0;
}

int xtcam_dp_unpin(const char *dir)
{
	char path[PATH_MAX];
	int i, err = 0;

	for (i = 0; i < XTCAM_MAP_MAX + 2; i++) {
		const char *n = i < XTCAM_MAP_MAX ? xtcam_dp_map_names[i] :
				i == XTCAM_MAP_MAX ? PIN_PROG_PARSE : PIN_PROG_CLASSIFY;

		if (pin_path(path, sizeof(path), dir, n))
			return -ENAMETOOLONG;
		if (unlink(path) && errno != ENOENT)
			err = -errno;
	}
	if (rmdir(dir) && errno != ENOENT && !err)
		err = -errno;
	return err;
}

static int recover(struct xtcam_dp *dp);

static int open_pinned(const char *dir, bool ro, struct xtcam_dp **out)
{
	LIBBPF_OPTS(bpf_obj_get_opts, rdonly, .file_flags = ro ? BPF_F_RDONLY : 0);
	struct xtcam_dp *dp = dp_alloc(0);
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	__u32 zero = 0;
	int i, err, n;

	if (!dp)
		return -ENOMEM;
	n = libbpf_num_possible_cpus();
	if (n < 0) {
		err = n;
		goto fail;
	}
	dp->ncpus = n;
	for (i = 0; i < XTCAM_MAP_MAX; i++) {
		err = pin_path(path, sizeof(path), dir, xtcam_dp_map_names[i]);
		if (err)
			goto fail;
		dp->fd[i] = bpf_obj_get_opts(path, &rdonly);
		if (dp->fd[i] < 0) {
			err = -errno;
			goto fail;
		}
	}
	/* a reader runs no program */
	err = ro ? 0 : pin_path(path, sizeof(path), dir, PIN_PROG_PARSE);
	if (ro)
		goto maps_only;
	if (!err && (dp->prog_parse = bpf_obj_get(path)) < 0)
		err = -errno;
	if (!err)
		err = pin_path(path, sizeof(path), dir, PIN_PROG_CLASSIFY);
	if (!err && (dp->prog_classify = bpf_obj_get(path)) < 0)
		err = -errno;
	if (err)
		goto fail;
maps_only:
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(dp->fd[XTCAM_MAP_RECORDS], &info, &len)) {
		err = -errno;
		goto fail;
	}
	xtcam_dp_geom_init(&dp->geom, info.max_entries / 2);
	dp_sizes(dp);
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(dp->fd[XTCAM_MAP_CONFIG], &info, &len)) {
		err = -errno;
		goto fail;
	}
	/* an older build's config is shorter: its format reads as 0 */
	memset(&dp->cfg, 0, sizeof(dp->cfg));
	if (info.value_size > sizeof(dp->cfg) ||
	    bpf_map_lookup_elem(dp->fd[XTCAM_MAP_CONFIG], &zero, &dp->cfg)) {
		err = info.value_size > sizeof(dp->cfg) ? -EUCLEAN : -errno;
		goto fail;
	}
	if (dp->cfg.format != XTCAM_DP_FORMAT ||
	    dp->cfg.nbuckets != dp->geom.nbuckets ||
	    dp->cfg.bregion != dp->geom.bregion ||
	    dp->cfg.bshift != xtcam_bshift(dp->geom.nbuckets)) {
		err = -EUCLEAN;
		goto fail;
	}
	if (dp->cfg.dirty && !ro) {
		err = recover(dp);
		if (err)
			goto fail;
	}
	*out = dp;
	return 0;
fail:
	xtcam_dp_free(dp);
	return err;
}

int xtcam_dp_open_pinned(const char *dir, struct xtcam_dp **out)
{
	return open_pinned(dir, false, out);
}

int xtcam_dp_open_pinned_ro(const char *dir, struct xtcam_dp **out)
{
	return open_pinned(dir, true, out);
}

/* ------------------------------------------------------------------------
 * Transactions: a read-through cache of the active generation plus the
 * writes; committed with the two-generation protocol.
 */

/* Memory for a transaction's cached elements, handed out in blocks and
 * given back all at once. */
struct arena {
	char **blk;
	size_t nblk, used;
};

#define ARENA_BLK (256u << 10)

/* A batch of at least this many changes caches the buckets and the
 * slots' information densely (XTCAM_DP_DENSE_MIN overrides it, for the
 * tests of both caches). */
#define DENSE_MIN 65536

static size_t dense_min(void)
{
	static long v = -1;

	if (v < 0) {
		const char *e = getenv("XTCAM_DP_DENSE_MIN");

		v = e && *e ? atol(e) : DENSE_MIN;
		if (v < 0)
			v = DENSE_MIN;
	}
	return (size_t)v;
}

/* A sparse cache of an array map: the elements the transaction touched,
 * by index, each after a word whose first byte says it is dirty.  The
 * memory is what the batch touches, whatever the size of the map. */
struct mirror {
	struct u64map idx;      /* rel -> its word and element */
	__u32 *dirty;           /* the rels made dirty, each once */
	size_t ndirty, capdirty;
	size_t n, usz;
	bool init;
	/* dense instead (the buckets of a big batch, which touches most of
	 * them: an index and a word each would cost more than the map):
	 * every element in place, and bitmaps of those read and dirty */
	char *dense;
	__u64 *dloaded, *ddirty;
};

struct rentry {                 /* cached registry entry */
	struct xtcam_hval v;
	bool absent, dirty;
	__u32 handle;
};

/* What placing a rule needs of a candidate: its rank and tag. */
struct slotinfo {
	__u64 rank;
	__u32 tag, tmask;
};

/* Records and actions of rules this transaction places, on their way to
 * the maps (fresh slots: nothing refers to them before the flip). */
#define FRESH_CHUNK 8192

struct fresh {
	__u64 keys[FRESH_CHUNK];
	struct xtcam_rec recs[FRESH_CHUNK];
	struct xtcam_action acts[FRESH_CHUNK];
	size_t n;
};

/* The rules' cache entries, allocated a slab at a time: a batch of a
 * million rules costs their size, not a malloc chunk each. */
#define RSLAB 4096

struct rslab {
	struct rslab *next;
	size_t n;
	struct rentry e[RSLAB];
};

struct txn {
	struct xtcam_dp *dp;
	struct rslab *slab;
	struct arena ar;
	struct u64map si;                  /* slot -> struct slotinfo, known */
	struct slotinfo *dsi;              /* dense instead (a big batch): by
					    * slot, where dsi_have has its bit */
	__u64 *dsi_have;
	bool nomem;                        /* mdirty could not keep one */
	bool dense;                        /* a big batch: dense bucket cache */
	struct fresh *fresh;
	struct mirror mr[XTCAM_MAP_MAX];   /* RECORDS, ACTIONS, BUCKETS, ALLOC */
	struct u64map rules;               /* handle -> struct rentry */
	bool unmapped;                     /* a batch of adds of free handles
					    * only: their entries are in the
					    * slabs, not in rules (nobody
					    * looks one up) */
	size_t nunmapped;
	struct xtcam_gen gen;
	struct xtcam_tuple tup[XTCAM_MAX_TUPLES];
	__u32 ntup, ntup_orig;
	bool tup_dirty;
	bool empty;                 /* active generation had no rules */
	bool live;                  /* a single change: buckets read in place,
	                             * records and actions written directly */
	__u32 *fslots, *fcnts, *zcnts;
	size_t nfslots, nfcnts, nzcnts, capf, capc, capz;
	__u32 *touched;             /* single changes: bucket elements */
	size_t ntouched, capt;
	__u32 hint[3];            /* where the last search of each pool (HINT_*) ended */
	bool cut24[2];              /* IPv4 src, dst: a /24 level (plan_cuts) */
	char *err;
	size_t errlen;
};

static size_t mirror_len(const struct xtcam_dp *dp, int m)
{
	switch (m) {
	case XTCAM_MAP_BUCKETS:
		return dp->geom.bregion;
	case XTCAM_MAP_ALLOC:
		return dp->geom.alloc_words;
	default:
		return dp->max[m];
	}
}

#define BIT_TEST(bm, i) (((bm)[(i) / 64] >> ((i) % 64)) & 1)
#define BIT_SET(bm, i)  ((bm)[(i) / 64] |= 1ull << ((i) % 64))

/* size bytes, zeroed, 8-byte aligned, until txn_free; NULL: ENOMEM */
static void *arena_get(struct arena *a, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	if (size > ARENA_BLK) {
		errno = ENOMEM;
		return NULL;
	}
	if (!a->nblk || a->used + size > ARENA_BLK) {
		char **b = realloc(a->blk, (a->nblk + 1) * sizeof(*b));

		if (!b)
			return NULL;
		a->blk = b;
		a->blk[a->nblk] = calloc(1, ARENA_BLK);
		if (!a->blk[a->nblk])
			return NULL;
		a->nblk++;
		a->used = 0;
	}
	a->used += size;
	return a->blk[a->nblk - 1] + a->used - size;
}

static void arena_free(struct arena *a)
{
	size_t i;

	for (i = 0; i < a->nblk; i++)
		free(a->blk[i]);
	free(a->blk);
	memset(a, 0, sizeof(*a));
}

/* Element rel of a mirror as cached; NULL when it is not (yet). */
static char *melem_get(struct mirror *mr, size_t rel)
{
	char *e;

	if (mr->dense)
		return BIT_TEST(mr->dloaded, rel) ? mr->dense + rel * mr->usz : NULL;
	e = u64map_get(&mr->idx, rel);
	return e ? e + 8 : NULL;
}

/* A new element of a mirror (zero); NULL with errno. */
static char *melem_new(struct txn *t, struct mirror *mr, size_t rel)
{
	char *e;

	if (mr->dense) {
		BIT_SET(mr->dloaded, rel);
		return mr->dense + rel * mr->usz;
	}
	e = arena_get(&t->ar, 8 + mr->usz);
	if (!e)
		return NULL;
	if (u64map_put(&mr->idx, rel, e)) {
		errno = ENOMEM;
		return NULL;
	}
	return e + 8;
}

/* A new element that could not be read: not cached after all. */
static void melem_drop(struct mirror *mr, size_t rel)
{
	if (mr->dense) {
		mr->dloaded[rel / 64] &= ~(1ull << (rel % 64));
		memset(mr->dense + rel * mr->usz, 0, mr->usz);
	} else {
		u64map_del(&mr->idx, rel);
	}
}

static bool melem_dirty(const struct mirror *mr, size_t rel, const char *e)
{
	return mr->dense ? BIT_TEST(mr->ddirty, rel) != 0 : e[-8] != 0;
}

static void melem_set_dirty(struct mirror *mr, size_t rel, char *e)
{
	if (mr->dense)
		BIT_SET(mr->ddirty, rel);
	else
		e[-8] = 1;
}

static void mirror_free(struct mirror *mr)
{
	if (mr->init)
		u64map_free(&mr->idx, NULL);
	free(mr->dirty);
	free(mr->dense);
	free(mr->dloaded);
	free(mr->ddirty);
}

/* Pointer to element rel of an array map as this transaction sees it. */
static void *mget(struct txn *t, int m, size_t rel)
{
	struct mirror *mr = &t->mr[m];
	struct xtcam_dp *dp = t->dp;
	/* a batch of scattered changes in a big block touches one bucket,
	 * record or action here and there: each is read alone (a lookup
	 * copies one element; a batched lookup of a chunk costs a copy of
	 * each of its elements); the allocation bitmap is searched word
	 * after word, in small chunks */
	size_t chunk = m == XTCAM_MAP_ALLOC ? 16 : 1, first, n, i;
	char *tmp, *e;
	int err;

	if (!mr->init) {
		mr->n = mirror_len(dp, m);
		mr->usz = dp_usz(dp, m);
		u64map_init(&mr->idx);
		if (t->dense && m == XTCAM_MAP_BUCKETS) {
			mr->dense = calloc(mr->n, mr->usz);
			mr->dloaded = calloc((mr->n + 63) / 64, 8);
			mr->ddirty = calloc((mr->n + 63) / 64, 8);
			if (!mr->dense || !mr->dloaded || !mr->ddirty) {
				free(mr->dense);
				free(mr->dloaded);
				free(mr->ddirty);
				mr->dense = NULL;
				errno = ENOMEM;
				return NULL;
			}
		}
		mr->init = true;
	}
	if (rel >= mr->n) {
		errno = ERANGE;
		return NULL;
	}
	e = melem_get(mr, rel);
	if (e)
		return e;
	if (t->empty && (m == XTCAM_MAP_BUCKETS || m == XTCAM_MAP_ALLOC))
		return melem_new(t, mr, rel);   /* nothing in the active generation: zero */
	if (chunk == 1) {
		e = melem_new(t, mr, rel);
		if (!e)
			return NULL;
		err = dp_read(dp, m, dp_is_gen_map(m) ? dp_abs_key(dp, m, rel, dp->cfg.gen) : rel,
			      e);
		if (err) {
			melem_drop(mr, rel);
			errno = -err;
			return NULL;
		}
		return e;
	}
	/* read the chunk around rel in one batch */
	first = rel & ~(chunk - 1);
	n = first + chunk > mr->n ? mr->n - first : chunk;
	tmp = malloc(n * mr->usz);
	if (!tmp) {
		errno = ENOMEM;
		return NULL;
	}
	err = dp_read_range(dp, m,
			    dp_is_gen_map(m) ? dp_abs_key(dp, m, first, dp->cfg.gen) : first,
			    n, tmp);
	if (err) {
		free(tmp);
		errno = -err;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (melem_get(mr, first + i))
			continue;
		e = melem_new(t, mr, first + i);
		if (!e) {
			free(tmp);
			return NULL;
		}
		memcpy(e, tmp + i * mr->usz, mr->usz);
	}
	free(tmp);
	return melem_get(mr, rel);
}

/* Element rel, which mget returned, is to be written.  Out of memory for
 * the list of them: the commit fails (nomem). */
static void mdirty(struct txn *t, int m, size_t rel)
{
	struct mirror *mr = &t->mr[m];
	char *e = melem_get(mr, rel);

	if (!e || melem_dirty(mr, rel, e))
		return;
	if (mr->ndirty == mr->capdirty) {
		size_t c = mr->capdirty ? 2 * mr->capdirty : 256;
		__u32 *d = realloc(mr->dirty, c * sizeof(*d));

		if (!d) {
			t->nomem = true;
			return;
		}
		mr->dirty = d;
		mr->capdirty = c;
	}
	melem_set_dirty(mr, rel, e);
	mr->dirty[mr->ndirty++] = (__u32)rel;
}

/* The transaction's entry for handle, read from the active generation
 * at first (known_free: an add's handle the caller says is not in use,
 * not read). */
static struct rentry *rget_as(struct txn *t, __u32 handle, bool known_free)
{
	void **slot = t->unmapped ? NULL : u64map_slot(&t->rules, handle);
	struct rentry *e;
	int err;

	if (t->unmapped && !known_free) {
		errno = EINVAL;
		return NULL;
	}
	if (!slot && !t->unmapped)
		return NULL;
	if (slot && *slot)
		return *slot;
	if (!t->slab || t->slab->n == RSLAB) {
		struct rslab *sl = malloc(sizeof(*sl));

		if (!sl)
			return NULL;
		sl->next = t->slab;
		sl->n = 0;
		t->slab = sl;
	}
	e = &t->slab->e[t->slab->n];
	memset(e, 0, sizeof(*e));
	e->handle = handle;
	if (t->empty || known_free) {
		e->absent = true;
	} else {
		err = dp_read(t->dp, XTCAM_MAP_RULES,
			      dp_abs_key(t->dp, XTCAM_MAP_RULES, handle, t->dp->cfg.gen),
			      &e->v);
		if (err == -ENOENT) {
			e->absent = true;
		} else if (err) {
			errno = -err;
			return NULL;
		}
	}
	if (slot) {
		*slot = e;
		u64map_filled(&t->rules);
	} else {
		t->nunmapped++;
	}
	t->slab->n++;           /* taken */
	return e;
}

static struct rentry *rget(struct txn *t, __u32 handle)
{
	return rget_as(t, handle, false);
}

static int push_u32(__u32 **v, size_t *n, size_t *cap, __u32 x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		__u32 *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

static int hints_load(struct txn *t);

static int txn_begin(struct txn *t, struct xtcam_dp *dp, char *err, size_t errlen)
{
	int e;

	memset(t, 0, sizeof(*t));
	t->dp = dp;
	u64map_init(&t->si);
	t->err = err;
	t->errlen = errlen;
	u64map_init(&t->rules);
	/* (a flip of ours still catching up: it is dirty until then, and
	 * this transaction reads only the active generation until its
	 * first write, which waits for it) */
	if (!dp->pend && dp->cfg.dirty) {
		e = recover(dp);
		if (e)
			return e;
	}
	e = dp_read(dp, XTCAM_MAP_GENS, dp->cfg.gen, &t->gen);
	if (e)
		return e;
	t->ntup = t->ntup_orig = t->gen.ntuples;
	if (t->ntup > XTCAM_MAX_TUPLES)
		return -EUCLEAN;
	e = dp_read_range(dp, XTCAM_MAP_TUPLES,
			  dp_abs_key(dp, XTCAM_MAP_TUPLES, 0, dp->cfg.gen), t->ntup, t->tup);
	if (e)
		return e;
	/* holes or limbo left by single changes: the maps are not zero */
	t->empty = t->gen.nrules == 0 && !t->gen.holes && !t->gen.limbo;
	return hints_load(t);
}

/* Before a flip: the tuple set as single changes left it (empty tuples,
 * bounds lowered out of order) made exact again: empty tuples go, the
 * rest sorted by min_rank, and the lists are written again from it. */
static void txn_tidy(struct txn *t)
{
	__u32 i, k = 0;

	for (i = 0; i < t->ntup; i++)
		if (t->tup[i].nrules)
			t->tup[k++] = t->tup[i];
	t->ntup = k;
	for (i = 1; i < t->ntup; i++) {
		struct xtcam_tuple x = t->tup[i];
		__u32 j = i;

		while (j > 0 && t->tup[j - 1].min_rank > x.min_rank) {
			t->tup[j] = t->tup[j - 1];
			j--;
		}
		t->tup[j] = x;
	}
	t->tup_dirty = true;
}

static void txn_free(struct txn *t)
{
	int i;

	u64map_free(&t->si, NULL);
	free(t->dsi);
	free(t->dsi_have);
	free(t->fresh);
	for (i = 0; i < XTCAM_MAP_MAX; i++)
		mirror_free(&t->mr[i]);
	u64map_free(&t->rules, NULL);
	while (t->slab) {
		struct rslab *sl = t->slab;

		t->slab = sl->next;
		free(sl);
	}
	arena_free(&t->ar);
	free(t->fslots);
	free(t->fcnts);
	free(t->zcnts);
	free(t->touched);
}

/* Bitmap allocation in the ALLOC region [base, base + nbits). */
#define HINT_BASE(dp) (2 * (dp)->geom.limbo_base)

/* The pools whose search hints alloc keeps from one transaction to the
 * next (its last three words), so that a search for a free bit starts
 * where the last one ended instead of walking the full words from bit 0. */
enum { HINT_SLOT, HINT_CNT, HINT_OVF };

static int hints_load(struct txn *t)
{
	int k;

	for (k = HINT_SLOT; k <= HINT_OVF; k++) {
		__u64 *w = mget(t, XTCAM_MAP_ALLOC, HINT_BASE(t->dp) + k);

		if (!w)
			return -errno;
		t->hint[k] = (__u32)*w;
	}
	return 0;
}

static int bm_alloc(struct txn *t, __u32 base, __u32 nbits, int pool, __u32 *out)
{
	__u32 *hint = &t->hint[pool];
	__u32 nwords = (nbits + 63) / 64, i;
	__u64 *hw;

	for (i = 0; i < nwords; i++) {
		__u32 w = (*hint / 64 + i) % nwords;
		__u64 *word = mget(t, XTCAM_MAP_ALLOC, base + w);
		__u64 freebits;

		if (!word)
			return -errno;
		freebits = ~*word;
		if (w == nwords - 1 && nbits % 64)
			freebits &= (1ull << (nbits % 64)) - 1;
		if (!freebits)
			continue;
		*out = w * 64 + (__u32)__builtin_ctzll(freebits);
		*word |= 1ull << (*out % 64);
		mdirty(t, XTCAM_MAP_ALLOC, base + w);
		*hint = *out + 1;
		hw = mget(t, XTCAM_MAP_ALLOC, HINT_BASE(t->dp) + pool);
		if (!hw)
			return -errno;
		*hw = *hint;
		mdirty(t, XTCAM_MAP_ALLOC, HINT_BASE(t->dp) + pool);
		return 0;
	}
	return -ENOSPC;
}

static int bm_free(struct txn *t, __u32 base, __u32 idx)
{
	__u64 *word = mget(t, XTCAM_MAP_ALLOC, base + idx / 64);

	if (!word)
		return -errno;
	*word &= ~(1ull << (idx % 64));
	mdirty(t, XTCAM_MAP_ALLOC, base + idx / 64);
	return 0;
}

#define SLOT_BASE(dp) 0
#define CNT_BASE(dp)  ((dp)->geom.slot_words)
#define OVF_BASE(dp)  ((dp)->geom.slot_words + (dp)->geom.cnt_words)

/* --- the lookup structure ------------------------------------------------ */

/* What a rule can be hashed on: its ternary mask, plus for port ranges the
 * bits that all ports in the range share. */
static void hash_view(const struct xtcam_rec *r, struct xtcam_key *hm,
		      struct xtcam_key *hv)
{
	__u16 sm = xtcam_range_lcp_mask(r->sport_lo, r->sport_hi);
	__u16 dm = xtcam_range_lcp_mask(r->dport_lo, r->dport_hi);

	*hm = r->mask;
	*hv = r->value;
	hm->src_port = htobe16(sm);
	hv->src_port = htobe16(r->sport_lo & sm);
	hm->dst_port = htobe16(dm);
	hv->dst_port = htobe16(r->dport_lo & dm);
}

/* A rule's family: its exact eth_type, or ANY (see enum xtcam_family). */
static __u32 rec_family(const struct xtcam_rec *r)
{
	if (r->mask.eth_type != 0xffff)
		return XTCAM_FAM_ANY;
	return xtcam_pkt_family(&r->value.eth_type);
}

/* A rule's candidate tag (xtcam_sig of its hash view): in the family whose
 * frames probe it; a rule of no family keeps the bytes common to both. */
static void rec_tag(const struct xtcam_rec *r, __u32 *tag, __u32 *tmask)
{
	struct xtcam_key hm, hv;
	__u32 fam = rec_family(r);

	hash_view(r, &hm, &hv);
	if (fam == XTCAM_FAM_ANY) {
		*tag = xtcam_sig(&hv, XTCAM_FAM_IP4) & XTCAM_SIG_COMMON;
		*tmask = xtcam_sig(&hm, XTCAM_FAM_IP4) & XTCAM_SIG_COMMON;
	} else {
		*tag = xtcam_sig(&hv, fam);
		*tmask = xtcam_sig(&hm, fam);
	}
}

/* TupleMerge's relaxation: keep whole bytes only, so prefixes fall to
 * multiples of 8 and partial masks to what is certain. */
static void relax(const struct xtcam_key *hm, __u64 *m)
{
	const unsigned char *s = (const unsigned char *)hm;
	unsigned char *d = (unsigned char *)m;
	size_t i;

	for (i = 0; i < sizeof(*hm); i++)
		d[i] = s[i] == 0xff ? 0xff : 0;
}

static bool covers(const __u64 *tmask, const struct xtcam_key *hm)
{
	const __u64 *h = (const __u64 *)hm;
	size_t i;

	for (i = 0; i < XTCAM_KEY_WORDS; i++)
		if (tmask[i] & ~h[i])
			return false;
	return true;
}

static int popcount_mask(const __u64 *m)
{
	int n = 0;
	size_t i;

	for (i = 0; i < XTCAM_KEY_WORDS; i++)
		n += __builtin_popcountll(m[i]);
	return n;
}

static __u32 bucket_of(const struct xtcam_dp *dp, const struct xtcam_key *hv,
		       const struct xtcam_tuple *tp)
{
	return xtcam_hash((const __u64 *)hv, tp->mask, tp->wmap, tp->hstart,
			  xtcam_bshift(dp->geom.nbuckets));
}

/* The slot's information if known, else NULL (errno ERANGE for a slot
 * beyond the block's, else 0). */
static struct slotinfo *si_slot(struct txn *t, __u32 slot)
{
	size_t n = t->dp->geom.nslots;

	if (slot >= n) {
		errno = ERANGE;
		return NULL;
	}
	errno = 0;
	if (t->dense) {
		if (!t->dsi) {
			t->dsi = calloc(n, sizeof(*t->dsi));
			t->dsi_have = calloc((n + 63) / 64, 8);
			if (!t->dsi || !t->dsi_have) {
				free(t->dsi);
				free(t->dsi_have);
				t->dsi = NULL;
				t->dsi_have = NULL;
				errno = ENOMEM;
				return NULL;
			}
		}
		return BIT_TEST(t->dsi_have, slot) ? &t->dsi[slot] : NULL;
	}
	return u64map_get(&t->si, slot);
}

/* The slot's information, known from here on (zero until filled in). */
static struct slotinfo *si_new(struct txn *t, __u32 slot)
{
	struct slotinfo *si;

	if (t->dense) {
		if (slot >= t->dp->geom.nslots) {
			errno = ERANGE;
			return NULL;
		}
		if (!t->dsi && !si_slot(t, slot) && errno)
			return NULL;
		BIT_SET(t->dsi_have, slot);
		return &t->dsi[slot];
	}
	si = arena_get(&t->ar, sizeof(*si));

	if (!si)
		return NULL;
	if (u64map_put(&t->si, slot, si)) {
		errno = ENOMEM;
		return NULL;
	}
	return si;
}

/* The rank and tag of the rule in a slot: of a rule placed by this
 * transaction as it was placed, of another from its record. */
static const struct slotinfo *slot_info(struct txn *t, __u32 slot)
{
	struct slotinfo *si = si_slot(t, slot);
	const struct xtcam_rec *r;

	if (si || errno)
		return si;
	r = mget(t, XTCAM_MAP_RECORDS, slot);
	if (!r)
		return NULL;
	si = si_new(t, slot);
	if (!si)
		return NULL;
	si->rank = r->rank;
	rec_tag(r, &si->tag, &si->tmask);
	return si;
}


/* Before a transaction's first write: the last flip's catch-up done; if
 * it failed, the other generation made a copy of the active one (which
 * the transaction read) as at an open. */
static int pend_wait(struct xtcam_dp *dp)
{
	if (!dp->pend)
		return 0;
	return xtcam_dp_settle(dp) ? recover(dp) : 0;
}

static int fresh_flush(struct txn *t)
{
	struct fresh *f = t->fresh;
	int err;

	if (!f || !f->n)
		return 0;
	/* (a fresh slot may be one the last flip freed: after its grace
	 * period) */
	err = pend_wait(t->dp);
	if (!err)
		err = dp_write(t->dp, XTCAM_MAP_RECORDS, f->keys, f->recs, f->n);
	if (!err)
		err = dp_write(t->dp, XTCAM_MAP_ACTIONS, f->keys, f->acts, f->n);
	f->n = 0;
	return err;
}

/* A rule placed in a fresh slot: its rank and tag kept, its record and
 * action written to the maps in chunks (no mirror of either). */
static int fresh_add(struct txn *t, const struct xtcam_rec *rec, const struct xtcam_action *act)
{
	struct slotinfo *si = si_slot(t, rec->slot);
	struct fresh *f = t->fresh;

	if (!si && errno)
		return -errno;
	if (!si)
		si = si_new(t, rec->slot);
	if (!si)
		return -errno;
	if (!f) {
		f = t->fresh = malloc(sizeof(*f));
		if (!f)
			return -ENOMEM;
		f->n = 0;
	}
	si->rank = rec->rank;
	rec_tag(rec, &si->tag, &si->tmask);
	f->keys[f->n] = rec->slot;
	f->recs[f->n] = *rec;
	f->acts[f->n] = *act;
	if (++f->n == FRESH_CHUNK)
		return fresh_flush(t);
	return 0;
}

struct chain {
	__u32 slots[XTCAM_MAX_CHAIN * XTCAM_BUCKET_SLOTS + 1];
	__u32 elems[XTCAM_MAX_CHAIN];
	__u32 ns, ne;
};

static int chain_read(struct txn *t, __u32 bidx, struct chain *c)
{
	__u32 e = bidx, i;

	c->ns = c->ne = 0;
	for (;;) {
		struct xtcam_bucket *b = mget(t, XTCAM_MAP_BUCKETS, e);

		if (!b)
			return -errno;
		if (c->ne == XTCAM_MAX_CHAIN || b->n > XTCAM_BUCKET_SLOTS)
			return -EUCLEAN;
		c->elems[c->ne++] = e;
		/* holes left by single changes are dropped: the chain is
		 * written again whole */
		for (i = 0; i < b->n; i++)
			if (b->slot[i] != XTCAM_SLOT_HOLE)
				c->slots[c->ns++] = b->slot[i];
		if (!b->next)
			return 0;
		e = b->next - 1;
		if (e < t->dp->geom.nbuckets || e >= t->dp->geom.bregion)
			return -EUCLEAN;
	}
}

static int chain_write(struct txn *t, __u32 bidx, struct chain *c)
{
	struct xtcam_dp *dp = t->dp;
	__u32 need = c->ns ? (c->ns + XTCAM_BUCKET_SLOTS - 1) / XTCAM_BUCKET_SLOTS : 1;
	__u32 k, pos = 0;
	int err;

	if (need > XTCAM_MAX_CHAIN)
		return -ENOSPC;
	c->elems[0] = bidx;
	while (c->ne < need) {
		__u32 o;

		err = bm_alloc(t, OVF_BASE(dp), dp->geom.bregion - dp->geom.nbuckets,
			       HINT_OVF, &o);
		if (err)
			return err;
		c->elems[c->ne++] = dp->geom.nbuckets + o;
	}
	for (k = c->ne; k > need; k--) {
		__u32 e = c->elems[k - 1];
		struct xtcam_bucket *b = mget(t, XTCAM_MAP_BUCKETS, e);

		if (!b)
			return -errno;
		memset(b, 0, sizeof(*b));
		mdirty(t, XTCAM_MAP_BUCKETS, e);
		err = bm_free(t, OVF_BASE(dp), e - dp->geom.nbuckets);
		if (err)
			return err;
	}
	c->ne = need;
	for (k = 0; k < need; k++) {
		struct xtcam_bucket *b = mget(t, XTCAM_MAP_BUCKETS, c->elems[k]);
		__u32 i;

		if (!b)
			return -errno;
		memset(b, 0, sizeof(*b));
		for (i = 0; i < XTCAM_BUCKET_SLOTS && pos < c->ns; i++) {
			const struct slotinfo *si = slot_info(t, c->slots[pos]);

			if (!si)
				return -errno;
			b->tag[b->n] = si->tag;
			b->tmask[b->n] = si->tmask;
			if (!b->n)
				b->prio = (__u32)(si->rank >> 32);
			b->slot[b->n++] = c->slots[pos++];
		}
		b->next = k + 1 < need ? c->elems[k + 1] + 1 : 0;
		mdirty(t, XTCAM_MAP_BUCKETS, c->elems[k]);
	}
	return 0;
}

static int rank_of(struct txn *t, __u32 slot, __u64 *rank)
{
	const struct slotinfo *si = slot_info(t, slot);

	if (!si)
		return -errno;
	*rank = si->rank;
	return 0;
}

static struct xtcam_bucket *ip_bucket(struct xtcam_dp *dp, __u32 gen, __u32 rel);

static int chain_len(struct txn *t, __u32 bidx, __u32 *len)
{
	__u32 e = bidx, n = 0, hops = 0;

	for (;;) {
		/* a single change reads the live chain, a batch its own
		 * copy (which earlier changes of the batch may have changed) */
		struct xtcam_bucket *b = t->live ? ip_bucket(t->dp, t->dp->cfg.gen, e) :
				       mget(t, XTCAM_MAP_BUCKETS, e);

		if (!b)
			return -errno;
		n += b->n;
		if (!b->next || ++hops >= XTCAM_MAX_CHAIN)
			break;
		e = b->next - 1;
	}
	*len = n;
	return 0;
}

static int tuple_index(const struct txn *t, __u32 id)
{
	__u32 i;

	for (i = 0; i < t->ntup; i++)
		if (t->tup[i].id == id)
			return (int)i;
	return -1;
}

/* keep tup[] sorted by min_rank: move entry i to its place */
static int tuple_settle(struct txn *t, int i)
{
	struct xtcam_tuple tmp = t->tup[i];

	while (i > 0 && t->tup[i - 1].min_rank > tmp.min_rank) {
		t->tup[i] = t->tup[i - 1];
		i--;
	}
	while (i + 1 < (int)t->ntup && t->tup[i + 1].min_rank < tmp.min_rank) {
		t->tup[i] = t->tup[i + 1];
		i++;
	}
	t->tup[i] = tmp;
	t->tup_dirty = true;
	return i;
}

static int tuple_new(struct txn *t, const __u64 *mask, __u64 rank, __u32 fam)
{
	struct xtcam_tuple *tp;

	if (t->ntup >= XTCAM_MAX_TUPLES)
		return -ENOSPC;
	tp = &t->tup[t->ntup++];
	memset(tp, 0, sizeof(*tp));
	memcpy(tp->mask, mask, sizeof(tp->mask));
	tp->wmap = xtcam_tuple_wmap(tp->mask, fam);
	tp->min_rank = rank;
	tp->fam = fam;
	tp->id = t->gen.next_id++;
	tp->hstart = xtcam_hstart(tp->id);
	return tuple_settle(t, (int)t->ntup - 1);
}

static int tuple_find_mask(const struct txn *t, const __u64 *mask, __u32 fam)
{
	__u32 i;

	for (i = 0; i < t->ntup; i++)
		if (t->tup[i].fam == fam &&
		    !memcmp(t->tup[i].mask, mask, sizeof(t->tup[i].mask)))
			return (int)i;
	return -1;
}

/* The masks a new tuple for a rule may take, coarsest first.  Level 0
 * hashes on eth_type plus the rule's most selective field (its longer
 * address prefix, an IPv4 one first cut at /24 where plan_cuts says so;
 * else exact ports, MACs, VLAN ids...), so that rules with different masks
 * share tuples; then the second field, the protocol with exact ports,
 * whole bytes, every bit.  A level is only used when the buckets of the
 * coarser ones are full for this rule. */
#define FIELD(f) offsetof(struct xtcam_key, f), sizeof(((struct xtcam_key *)0)->f)

static int count_bytes(const unsigned char *m, size_t off, size_t len)
{
	int n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		n += m[off + i] != 0;
	return n;
}

static void copy_field(unsigned char *d, const unsigned char *s, size_t off, size_t len)
{
	memcpy(d + off, s + off, len);
}

#define XTCAM_LEVELS 6
#define IP4_CUT_BYTES 3 /* /24 */

/* The field a new tuple for a rule hashes first when it is an address:
 * 0 source, 1 destination, -1 neither (as tuple_levels picks it); *bytes
 * its whole bytes. */
static int lead_addr(const __u64 *rw, int *bytes)
{
	const unsigned char *r = (const unsigned char *)rw;
	int ns = count_bytes(r, FIELD(src_ip)), nd = count_bytes(r, FIELD(dst_ip));

	if (nd >= ns && nd) {
		*bytes = nd;
		return 1;
	}
	if (ns) {
		*bytes = ns;
		return 0;
	}
	return -1;
}

/*
 * Whether this transaction gives IPv4 addresses a /24 level below the
 * whole address, per field.  With it a /32 and a /24 rule on one network
 * share a tuple and the candidate check tells them apart, which saves a
 * tuple (a probe a frame) on ACL-shaped sets.  Without /24 rules it only
 * splits dense sets of exact addresses (a /24 bucket fills at tm_limit
 * hosts and the rest spill into a /32 tuple), so it is on only where at
 * least one rule in nine of the field's /24 and /32 ones is a /24,
 * counting the rules in the block (by the tuples they sit in) and those
 * the batch adds, and where the batch's /24-and-longer rules are sparse
 * enough, on average at most half a bucket's tm_limit to a /24 network
 * (denser networks would split the same way).  The decision only steers
 * where new tuples go, never what matches.
 */
static void plan_cuts(struct txn *t, const struct xtcam_dp_op *ops, size_t n)
{
	size_t c24[2] = { 0, 0 }, c32[2] = { 0, 0 }, nb[2] = { 0, 0 }, nets_n[2] = { 0, 0 }, i;
	__u64 rw[XTCAM_KEY_WORDS];
	struct u64map nets;
	bool nomem = false;
	int f, bytes;

	u64map_init(&nets);

	for (i = 0; i < t->ntup; i++) {
		const struct xtcam_tuple *tp = &t->tup[i];

		if (tp->fam != XTCAM_FAM_IP4)
			continue;
		f = lead_addr(tp->mask, &bytes);
		if (f < 0 || count_bytes((const unsigned char *)tp->mask, 0,
					 sizeof(struct xtcam_key)) !=
			     bytes + (int)sizeof(((struct xtcam_key *)0)->eth_type))
			continue;	/* not eth_type and one address alone */
		if (bytes == IP4_CUT_BYTES)
			c24[f] += tp->nrules;
		else if (bytes == 4)
			c32[f] += tp->nrules;
	}
	for (i = 0; i < n; i++) {
		struct xtcam_key hm, hv;
		struct xtcam_rec rec;
		struct xtcam_rule rb;

		if (ops[i].cmd == XTCAM_DP_DEL || !ops[i].rule ||
		    xtcam_rule_compile(xtcam_rule_view(ops[i].rule, &rb), &rec) ||
		    rec_family(&rec) != XTCAM_FAM_IP4)
			continue;
		hash_view(&rec, &hm, &hv);
		relax(&hm, rw);
		f = lead_addr(rw, &bytes);
		if (f < 0 || bytes < IP4_CUT_BYTES)
			continue;
		if (bytes == IP4_CUT_BYTES)
			c24[f]++;
		else
			c32[f]++;
		nb[f]++;
		/* the /24 network of the address, to count the distinct ones */
		{
			const unsigned char *a = (const unsigned char *)(f ? hv.dst_ip : hv.src_ip);
			__u64 key = (__u64)f << 32 | (__u64)a[0] << 16 | (__u64)a[1] << 8 | a[2];

			if (!nomem && !u64map_get(&nets, key)) {
				if (u64map_put(&nets, key, &nets))
					nomem = true;
				nets_n[f]++;
			}
		}
	}
	for (f = 0; f < 2; f++) {
		t->cut24[f] = c24[f] && c24[f] * 8 >= c32[f];
		if (nb[f] && t->cut24[f])
			t->cut24[f] = !nomem && nb[f] <= nets_n[f] * (tm_limit() / 2);
	}
	u64map_free(&nets, NULL);
}

static int tuple_levels(const struct xtcam_key *hm, __u32 fam, const bool *cut24,
			__u64 lv[][XTCAM_KEY_WORDS])
{
	__u64 rw[XTCAM_KEY_WORDS];
	const unsigned char *r = (const unsigned char *)rw;
	unsigned char *l;
	int n = 0, lead, nb = 0, i;
	size_t off_a, len_a, off_b, len_b;

	relax(hm, rw);
	lead = lead_addr(rw, &nb);

	/* level 0: eth_type and the most selective field.  Not the protocol:
	 * rules that differ only there (tcp, udp, any) share the tuple and
	 * are told apart by the candidate check, which costs less than the
	 * probe a tuple per protocol would add */
	l = (unsigned char *)lv[n];
	memset(l, 0, sizeof(lv[0]));
	copy_field(l, r, FIELD(eth_type));
	if (lead == 1) {
		off_a = offsetof(struct xtcam_key, dst_ip); len_a = 16;
		off_b = offsetof(struct xtcam_key, src_ip); len_b = 16;
	} else if (lead == 0) {
		off_a = offsetof(struct xtcam_key, src_ip); len_a = 16;
		off_b = offsetof(struct xtcam_key, dst_ip); len_b = 16;
	} else if (count_bytes(r, FIELD(dst_port)) == 2) {
		off_a = offsetof(struct xtcam_key, dst_port); len_a = 2;
		off_b = offsetof(struct xtcam_key, src_port); len_b = 2;
	} else if (count_bytes(r, FIELD(src_port)) == 2) {
		off_a = offsetof(struct xtcam_key, src_port); len_a = 2;
		off_b = 0; len_b = 0;
	} else if (count_bytes(r, FIELD(dst_mac))) {
		off_a = offsetof(struct xtcam_key, dst_mac); len_a = 6;
		off_b = offsetof(struct xtcam_key, src_mac); len_b = 6;
	} else if (count_bytes(r, FIELD(src_mac))) {
		off_a = offsetof(struct xtcam_key, src_mac); len_a = 6;
		off_b = 0; len_b = 0;
	} else {
		off_a = offsetof(struct xtcam_key, vlan_tci); len_a = 8; /* both tags */
		off_b = offsetof(struct xtcam_key, raw1); len_b = 8;
	}
	/* an IPv4 address first at /24 where plan_cuts says so */
	if (fam == XTCAM_FAM_IP4 && lead >= 0 && nb > IP4_CUT_BYTES && cut24[lead]) {
		copy_field(l, r, off_a, IP4_CUT_BYTES);
		n++;
		l = (unsigned char *)lv[n];
		memcpy(l, lv[n - 1], sizeof(lv[0]));
	}
	copy_field(l, r, off_a, len_a);
	n++;
	/* level 1: and the second field */
	memcpy(lv[n], lv[n - 1], sizeof(lv[0]));
	if (len_b)
		copy_field((unsigned char *)lv[n], r, off_b, len_b);
	n++;
	/* level 2: and the protocol and exact ports (a level of the
	 * protocol alone made one more tuple of the 100k 32-mask set, whose
	 * rules are all UDP, and cost its misses 20%) */
	memcpy(lv[n], lv[n - 1], sizeof(lv[0]));
	copy_field((unsigned char *)lv[n], r, FIELD(ip_proto));
	copy_field((unsigned char *)lv[n], r, FIELD(src_port));
	copy_field((unsigned char *)lv[n], r, FIELD(dst_port));
	n++;
	/* level 3: every whole byte; level 4: every bit */
	memcpy(lv[n++], rw, sizeof(rw));
	memcpy(lv[n++], hm, sizeof(rw));
	/* drop repeats */
	for (i = 1; i < n; i++) {
		if (!memcmp(lv[i], lv[i - 1], sizeof(lv[0]))) {
			memmove(lv[i], lv[i + 1], (size_t)(n - i - 1) * sizeof(lv[0]));
			n--;
			i--;
		}
	}
	return n;
}

/* Does a packet of family pf probe tuple tp? */
static bool tuple_in_list(const struct xtcam_tuple *tp, __u32 pf)
{
	return tp->fam == pf || tp->fam == XTCAM_FAM_ANY;
}

/* TupleMerge insertion: the most specific tuple that covers the rule and
 * whose bucket has room; else a new tuple at the coarsest level not yet
 * there; else the least loaded covering tuple (a longer chain). */
static int choose_tuple(struct txn *t, const struct xtcam_key *hm,
			const struct xtcam_key *hv, __u64 rank, __u32 fam)
{
	int best = -1, best_pop = -1, least = -1, err, nl, i;
	__u32 best_len = 0, least_len = UINT32_MAX, j, len = 0;
	const __u32 hard = XTCAM_MAX_CHAIN * XTCAM_BUCKET_SLOTS;
	__u64 lv[XTCAM_LEVELS][XTCAM_KEY_WORDS];

	for (j = 0; j < t->ntup; j++) {
		const struct xtcam_tuple *tp = &t->tup[j];
		int pop;

		if (tp->fam != fam || !covers(tp->mask, hm))
			continue;
		err = chain_len(t, bucket_of(t->dp, hv, tp), &len);
		if (err)
			return err;
		if (len < least_len) {
			least = (int)j;
			least_len = len;
		}
		if (len >= tm_limit())
			continue;
		pop = popcount_mask(tp->mask);
		if (pop > best_pop || (pop == best_pop && len < best_len)) {
			best = (int)j;
			best_pop = pop;
			best_len = len;
		}
	}
	if (best >= 0)
		return best;
	nl = tuple_levels(hm, fam, t->cut24, lv);
	for (i = 0; i < nl; i++)
		if (tuple_find_mask(t, lv[i], fam) < 0 &&
		    t->ntup < XTCAM_MAX_TUPLES - (XTCAM_FAM_ANY + 1))
			return tuple_new(t, lv[i], rank, fam);
	if (least >= 0 && least_len < hard)
		return least;
	/* the last resort, kept free (one slot per family): a tuple that
	 * covers everything of the rule's family */
	memset(lv[0], 0, sizeof(lv[0]));
	if (tuple_find_mask(t, lv[0], fam) < 0)
		return tuple_new(t, lv[0], rank, fam);
	return -ENOSPC;
}

/* re: the handle's entry (rget), NULL: looked up here */
static int do_insert(struct txn *t, const struct xtcam_rule *r,
		     const struct xtcam_action *act, __u32 cnt, bool new_cnt,
		     struct rentry *re)
{
	struct xtcam_dp *dp = t->dp;
	struct xtcam_key hm, hv;
	struct xtcam_rec rec;
	struct chain c;
	__u32 slot, bidx, pos, tid;
	int ti, err;

	err = xtcam_rule_compile(r, &rec);
	if (err) {
		xtcam_set_err(t->err, t->errlen, "handle %u: malformed rule", r->handle);
		return err;
	}
	if (act->type == XTCAM_ACT_NONE || act->type >= XTCAM_ACT_MAX) {
		xtcam_set_err(t->err, t->errlen, "handle %u: bad action", r->handle);
		return -EINVAL;
	}
	err = bm_alloc(t, SLOT_BASE(dp), dp->geom.nslots, HINT_SLOT, &slot);
	if (err) {
		xtcam_set_err(t->err, t->errlen, "no free rule slot (%u in use)", dp->geom.nslots);
		return err;
	}
	if (new_cnt) {
		err = bm_alloc(t, CNT_BASE(dp), dp->geom.ncnt, HINT_CNT, &cnt);
		if (err) {
			xtcam_set_err(t->err, t->errlen, "no free counter");
			return err;
		}
		err = push_u32(&t->zcnts, &t->nzcnts, &t->capz, cnt);
		if (err)
			return err;
	}
	rec.cnt = cnt;
	rec.slot = slot;
	err = fresh_add(t, &rec, act);
	if (err)
		return err;

	hash_view(&rec, &hm, &hv);
	ti = choose_tuple(t, &hm, &hv, rec.rank, rec_family(&rec));
	if (ti < 0) {
		xtcam_set_err(t->err, t->errlen,
			"handle %u: no room in the lookup structure (tuples full)",
			r->handle);
		return ti;
	}
	tid = t->tup[ti].id;
	bidx = bucket_of(dp, &hv, &t->tup[ti]);
	err = chain_read(t, bidx, &c);
	if (err)
		return err;
	if (c.ns >= XTCAM_MAX_CHAIN * XTCAM_BUCKET_SLOTS) {
		xtcam_set_err(t->err, t->errlen,
			"handle %u: more than %u rules share one bucket", r->handle,
			XTCAM_MAX_CHAIN * XTCAM_BUCKET_SLOTS);
		return -ENOSPC;
	}
	for (pos = 0; pos < c.ns; pos++) {
		__u64 rk = 0;

		err = rank_of(t, c.slots[pos], &rk);
		if (err)
			return err;
		if (rk > rec.rank)
			break;
	}
	memmove(&c.slots[pos + 1], &c.slots[pos], (c.ns - pos) * sizeof(__u32));
	c.slots[pos] = slot;
	c.ns++;
	err = chain_write(t, bidx, &c);
	if (err)
		return err;

	t->tup[ti].nrules++;
	t->tup_dirty = true;
	if (rec.rank < t->tup[ti].min_rank) {
		t->tup[ti].min_rank = rec.rank;
		tuple_settle(t, ti);
	}
	if (!re)
		re = rget(t, r->handle);
	if (!re)
		return -errno;
	re->absent = false;
	re->dirty = true;
	re->v.slot = slot;
	re->v.tuple = tid;
	t->gen.nrules++;
	t->gen.nentries += rec.entries;
	return 0;
}

static int do_remove(struct txn *t, __u32 handle, __u32 *cnt_out)
{
	struct xtcam_key hm, hv;
	struct xtcam_rec *rp;
	struct rentry *re = rget(t, handle);
	struct chain c;
	__u32 bidx, i;
	int ti, err;

	if (!re)
		return -errno;
	if (re->absent)
		return -ENOENT;
	rp = mget(t, XTCAM_MAP_RECORDS, re->v.slot);
	if (!rp)
		return -errno;
	ti = tuple_index(t, re->v.tuple);
	if (ti < 0)
		return -EUCLEAN;
	hash_view(rp, &hm, &hv);
	bidx = bucket_of(t->dp, &hv, &t->tup[ti]);
	err = chain_read(t, bidx, &c);
	if (err)
		return err;
	for (i = 0; i < c.ns && c.slots[i] != re->v.slot; i++)
		;
	if (i == c.ns)
		return -EUCLEAN;
	memmove(&c.slots[i], &c.slots[i + 1], (c.ns - i - 1) * sizeof(__u32));
	c.ns--;
	err = chain_write(t, bidx, &c);
	if (err)
		return err;
	if (--t->tup[ti].nrules == 0) {
		memmove(&t->tup[ti], &t->tup[ti + 1],
			(t->ntup - ti - 1) * sizeof(t->tup[0]));
		t->ntup--;
	}
	t->tup_dirty = true;
	err = push_u32(&t->fslots, &t->nfslots, &t->capf, re->v.slot);
	if (err)
		return err;
	t->gen.nrules--;
	t->gen.nentries -= rp->entries;
	*cnt_out = rp->cnt;
	re->absent = true;
	re->dirty = true;
	return 0;
}

/* --- commit ---------------------------------------------------------------- */

/* The dirty elements of a mirror, written in chunks: memory for a chunk,
 * not for every element a large batch touched. */
#define WRITE_CHUNK 8192

static int cmp_u32_asc(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static int write_mirror(struct txn *t, int m, __u32 gen)
{
	struct mirror *mr = &t->mr[m];
	size_t i, n = 0, cap;
	__u64 *keys = NULL;
	char *vals = NULL;
	int err = 0;

	if (t->nomem)
		return -ENOMEM;
	if (!mr->ndirty)
		return 0;
	/* in the order of the map (both generations get the same writes) */
	qsort(mr->dirty, mr->ndirty, sizeof(*mr->dirty), cmp_u32_asc);
	cap = mr->ndirty < WRITE_CHUNK ? mr->ndirty : WRITE_CHUNK;
	keys = malloc(cap * sizeof(*keys));
	vals = malloc(cap * mr->usz);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; !err && i < mr->ndirty; i++) {
		__u32 rel = mr->dirty[i];

		keys[n] = dp_is_gen_map(m) ? dp_abs_key(t->dp, m, rel, gen) : rel;
		memcpy(vals + n * mr->usz, melem_get(mr, rel), mr->usz);
		if (++n == cap) {
			err = dp_write(t->dp, m, keys, vals, n);
			n = 0;
		}
	}
	if (!err)
		err = dp_write(t->dp, m, keys, vals, n);
out:
	free(keys);
	free(vals);
	return err;
}

/* Each family's tuple list for the classifier: the set's order, the
 * family's tuples and ANY's, one map value a list with its count. */
static int write_tlists(struct txn *t, __u32 gen)
{
	struct xtcam_tlist *tl = calloc(1, sizeof(*tl));
	__u32 i, l;
	int err = 0;

	if (!tl)
		return -ENOMEM;
	for (l = 0; !err && l < XTCAM_NLISTS; l++) {
		__u64 key = dp_abs_key(t->dp, XTCAM_MAP_TLISTS, l, gen);
		__u32 k = 0;

		memset(tl, 0, sizeof(*tl));
		for (i = 0; i < t->ntup; i++)
			if (tuple_in_list(&t->tup[i], l))
				tl->t[k++] = t->tup[i];
		tl->n = k;
		err = dp_write(t->dp, XTCAM_MAP_TLISTS, &key, tl, 1);
	}
	free(tl);
	return err;
}

/* a rule's entry of generation gen into the chunk (uk, uv), written
 * when the chunk is full: a changed rule that is present */
static int put_rule(struct xtcam_dp *dp, __u32 gen, __u64 handle, const struct rentry *re,
		    __u64 *uk, struct xtcam_hval *uv, size_t *nu, size_t cap)
{
	int err;

	if (!re->dirty || re->absent)
		return 0;
	uk[*nu] = dp_abs_key(dp, XTCAM_MAP_RULES, handle, gen);
	uv[(*nu)++] = re->v;
	if (*nu < cap)
		return 0;
	err = dp_write(dp, XTCAM_MAP_RULES, uk, uv, *nu);
	*nu = 0;
	return err;
}

/* The rules' entries of a generation, written and deleted a chunk at a
 * time: memory for a chunk, not for every rule of a large batch.  Every
 * delete before the first write: a generation never holds more entries
 * than the capacity's rules (the preallocated map holds two such). */
static int write_rules(struct txn *t, __u32 gen)
{
	struct xtcam_dp *dp = t->dp;
	struct u64map_ent *e;
	size_t nr = t->unmapped ? t->nunmapped : t->rules.n, si;
	size_t nd = 0, nu = 0, cap = nr < WRITE_CHUNK ? nr : WRITE_CHUNK;
	struct rslab *sl;
	__u64 *dk, *uk;
	struct xtcam_hval *uv;
	int err = 0;

	if (!cap)
		return 0;
	dk = malloc(cap * sizeof(*dk));
	uk = malloc(cap * sizeof(*uk));
	uv = malloc(cap * sizeof(*uv));
	if (!dk || !uk || !uv) {
		err = -ENOMEM;
		goto out;
	}
	u64map_for_each(&t->rules, e) {
		struct rentry *re = e->val;

		if (!re->dirty || !re->absent)
			continue;
		dk[nd++] = dp_abs_key(dp, XTCAM_MAP_RULES, e->key, gen);
		if (nd == cap) {
			if ((err = dp_del(dp, XTCAM_MAP_RULES, dk, nd)))
				goto out;
			nd = 0;
		}
	}
	if ((err = dp_del(dp, XTCAM_MAP_RULES, dk, nd)))
		goto out;
	u64map_for_each(&t->rules, e)
		if ((err = put_rule(dp, gen, e->key, e->val, uk, uv, &nu, cap)))
			goto out;
	/* unmapped: adds only, nothing to delete above */
	for (sl = t->unmapped ? t->slab : NULL; sl; sl = sl->next)
		for (si = 0; si < sl->n; si++)
			if ((err = put_rule(dp, gen, sl->e[si].handle, &sl->e[si], uk, uv, &nu, cap)))
				goto out;
	err = dp_write(dp, XTCAM_MAP_RULES, uk, uv, nu);
out:
	free(dk);
	free(uk);
	free(uv);
	return err;
}

struct rules_job {
	struct txn *t;
	__u32 gen;
	int err;
};

static void *rules_thread(void *arg)
{
	struct rules_job *j = arg;

	j->err = write_rules(j->t, j->gen);
	return NULL;
}

/* A big batch's rules entries are written by a thread of their own while
 * the buckets are: two maps, each about half of the generation's writes
 * (neither reads the other; both are done before the generation is). */
static int write_gen(struct txn *t, __u32 gen)
{
	struct xtcam_dp *dp = t->dp;
	struct rules_job job = { .t = t, .gen = gen };
	size_t nr = t->unmapped ? t->nunmapped : t->rules.n;
	bool two = false;
	pthread_t th;
	int err = 0;

	if (nr >= dense_min() && t->mr[XTCAM_MAP_BUCKETS].ndirty >= dense_min())
		two = !pthread_create(&th, NULL, rules_thread, &job);
	if (!two)
		err = write_rules(t, gen);
	if (!err)
		err = write_mirror(t, XTCAM_MAP_BUCKETS, gen);
	if (two) {
		pthread_join(th, NULL);
		err = err ? err : job.err;
	}
	if (!err)
		err = write_mirror(t, XTCAM_MAP_ALLOC, gen);
	if (!err && t->tup_dirty) {
		__u32 n = t->ntup > t->ntup_orig ? t->ntup : t->ntup_orig, i;
		__u64 *keys = malloc(n * sizeof(*keys) + 1);
		struct xtcam_tuple *vals = calloc(n + 1, sizeof(*vals));

		if (!keys || !vals) {
			err = -ENOMEM;
		} else {
			for (i = 0; i < n; i++) {
				keys[i] = dp_abs_key(dp, XTCAM_MAP_TUPLES, i, gen);
				if (i < t->ntup)
					vals[i] = t->tup[i];
			}
			err = dp_write(dp, XTCAM_MAP_TUPLES, keys, vals, n);
		}
		free(keys);
		free(vals);
		if (!err)
			err = write_tlists(t, gen);
	}
	if (!err) {
		t->gen.ntuples = t->ntup;
		err = dp_write1(dp, XTCAM_MAP_GENS, gen, &t->gen);
	}
	return err;
}

/* The counters of new rules zeroed a chunk at a time (a counter is a
 * value per CPU: the whole batch's would be that many times its size). */
static int zero_counters(struct txn *t)
{
	struct xtcam_dp *dp = t->dp;
	size_t usz = dp_usz(dp, XTCAM_MAP_COUNTERS), i, k;
	size_t cap = t->nzcnts < WRITE_CHUNK ? t->nzcnts : WRITE_CHUNK;
	__u64 *keys;
	void *vals;
	int err = 0;

	if (!t->nzcnts)
		return 0;
	keys = malloc(cap * sizeof(*keys));
	vals = calloc(cap, usz);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; !err && i < t->nzcnts; i += k) {
		k = t->nzcnts - i < cap ? t->nzcnts - i : cap;
		for (size_t j = 0; j < k; j++)
			keys[j] = t->zcnts[i + j];
		err = dp_write(dp, XTCAM_MAP_COUNTERS, keys, vals, k);
	}
	free(keys);
	free(vals);
	return err;
}

static int limbo_release(struct txn *t);

/* After the flip: the grace period, then the old generation brought up
 * to date (t->dp->cfg.gen is the new one). */
static int txn_finish(struct txn *t, bool traced)
{
	struct xtcam_dp *dp = t->dp;
	int err = dp_sync(dp);

	if (traced)
		xtcam_trace("dp sync");
	xtcam_crash_point("catch-up");
	if (!err)
		err = write_gen(t, !dp->cfg.gen);
	if (traced)
		xtcam_trace("dp catch-up");
	if (err)
		return err;
	dp->cfg.dirty = 0;
	return dp_write1(dp, XTCAM_MAP_CONFIG, 0, &dp->cfg);
}

/* A deferred flip's grace period and catch-up (dp->pend), while the
 * caller goes on: it touches only the other generation, dp->cfg.dirty
 * and the config map, which nothing else reads or writes until
 * xtcam_dp_settle has joined it. */
static void *sync_thread(void *arg)
{
	struct xtcam_dp *dp = arg;

	dp->sync_err = txn_finish(dp->pend, false);
	if (dp->notify)
		dp->notify(dp->notify_arg, -1);
	return NULL;
}

int xtcam_dp_settle(struct xtcam_dp *dp)
{
	struct txn *t = dp->pend;
	int err;

	if (!t)
		return 0;
	if (dp->pend_held) {
		dp->pend_held = false;
		err = txn_finish(t, true);
	} else {
		pthread_join(dp->sync_th, NULL);
		err = dp->sync_err;
	}
	xtcam_trace("dp settle");
	dp->pend = NULL;
	txn_free(t);
	free(t);
	return err;
}

void xtcam_dp_forget(struct xtcam_dp *dp)
{
	struct txn *t = dp->pend;

	if (!t || !dp->pend_held) {
		xtcam_dp_settle(dp);
		return;
	}
	dp->pend = NULL;
	dp->pend_held = false;
	txn_free(t);
	free(t);
}

void xtcam_dp_set_hold(struct xtcam_dp *dp)
{
	dp->defer = true;
	dp->hold = true;
}

void xtcam_dp_set_notify(struct xtcam_dp *dp, void (*fn)(void *arg, int delta), void *arg)
{
	dp->notify = fn;
	dp->notify_arg = arg;
}

void xtcam_dp_set_defer(struct xtcam_dp *dp, bool defer)
{
	dp->defer = defer;
	if (!defer)
		dp->hold = false;
}

/* Commit t; with dp->defer, t is moved into dp->pend (t is left empty)
 * and the catch-up waits for xtcam_dp_settle. */
static int txn_commit(struct txn *t)
{
	struct xtcam_dp *dp = t->dp;
	__u32 newgen = !dp->cfg.gen;
	size_t i;
	int err;

	/* the last flip's grace period and catch-up over before anything
	 * is written: the slots it freed may be taken again here, and its
	 * old generation is the one written now */
	err = pend_wait(dp);
	if (err)
		return err;
	/* slots and counters freed here, and those single changes left in
	 * limbo, were in use by the active generation: they become free for
	 * the next change, not this one, after the grace period below */
	err = limbo_release(t);
	if (err)
		return err;
	for (i = 0; i < t->nfslots; i++)
		if ((err = bm_free(t, SLOT_BASE(dp), t->fslots[i])))
			return err;
	for (i = 0; i < t->nfcnts; i++)
		if ((err = bm_free(t, CNT_BASE(dp), t->fcnts[i])))
			return err;

	/* 1. what nothing refers to yet: records, actions, fresh counters */
	err = fresh_flush(t);
	if (!err)
		err = write_mirror(t, XTCAM_MAP_RECORDS, 0);
	if (!err)
		err = write_mirror(t, XTCAM_MAP_ACTIONS, 0);
	if (!err)
		err = zero_counters(t);
	if (err)
		return err;
	xtcam_trace("dp records");
	/* 2. the inactive generation, then the flip */
	dp->cfg.dirty = 1;
	err = dp_write1(dp, XTCAM_MAP_CONFIG, 0, &dp->cfg);
	if (!err)
		err = write_gen(t, newgen);
	if (err)
		return err;
	dp->cfg.gen = newgen;
	err = dp_write1(dp, XTCAM_MAP_CONFIG, 0, &dp->cfg);
	if (err)
		return err;
	xtcam_trace("dp gen+flip");
	/* 3. once no packet can still be in the old generation, bring it up
	 * to date: now, or (deferred) in a thread while the caller goes on */
	if (dp->defer && !(dp->flags & XTCAM_DP_MEMORY)) {
		struct txn *p = malloc(sizeof(*p));

		if (p) {
			*p = *t;
			p->err = NULL;          /* the caller's, gone by then */
			p->errlen = 0;
			dp->pend = p;
			if (dp->hold) {
				/* (xtcam_dp_settle or xtcam_dp_forget) */
				dp->pend_held = true;
				memset(t, 0, sizeof(*t));
				t->dp = dp;
				u64map_init(&t->rules);
				u64map_init(&t->si);
				return 0;
			}
			if (dp->notify)
				dp->notify(dp->notify_arg, 1);
			if (!pthread_create(&dp->sync_th, NULL, sync_thread, dp)) {
				memset(t, 0, sizeof(*t));
				t->dp = dp;
				u64map_init(&t->rules);
				u64map_init(&t->si);
				return 0;
			}
			if (dp->notify)
				dp->notify(dp->notify_arg, -1);
			dp->pend = NULL;
			free(p);
		}
	}
	return txn_finish(t, true);
}

/* A change was interrupted: make the inactive generation a copy of the
 * active one. */
static int recover(struct xtcam_dp *dp)
{
	__u32 a, b;
	size_t n, i, j, nk = 0;
	__u64 *keys = NULL, *wk = NULL, *dk = NULL;
	struct xtcam_hval *vals = NULL, *wv = NULL;
	size_t nw = 0, nd = 0;
	void *buf = NULL;
	__u64 *idx = NULL;
	int err, m;
	const int maps[] = { XTCAM_MAP_TUPLES, XTCAM_MAP_TLISTS, XTCAM_MAP_BUCKETS,
			     XTCAM_MAP_ALLOC };

	/* dirty 2: a single change stopped while writing the active
	 * generation in place; the inactive one is as before it: frames go
	 * back there.  Then (any change) a grace period: what the stopped
	 * change or flip freed may still be in use by a frame */
	if (dp->cfg.dirty == 2) {
		dp->cfg.gen = !dp->cfg.gen;
		dp->cfg.dirty = 1;
		err = dp_write1(dp, XTCAM_MAP_CONFIG, 0, &dp->cfg);
		if (err)
			return err;
	}
	err = dp_sync(dp);
	if (err)
		return err;
	a = dp->cfg.gen;
	b = !a;

	for (j = 0; j < sizeof(maps) / sizeof(maps[0]); j++) {
		m = maps[j];
		n = m == XTCAM_MAP_TUPLES ? XTCAM_TUPLE_REGION :
		    m == XTCAM_MAP_TLISTS ? XTCAM_NLISTS : mirror_len(dp, m);
		buf = malloc(n * dp_usz(dp, m));
		idx = malloc(n * sizeof(*idx));
		if (!buf || !idx) {
			err = -ENOMEM;
			goto out;
		}
		err = dp_read_range(dp, m, dp_abs_key(dp, m, 0, a), n, buf);
		if (err)
			goto out;
		for (i = 0; i < n; i++)
			idx[i] = dp_abs_key(dp, m, i, b);
		err = dp_write(dp, m, idx, buf, n);
		if (err)
			goto out;
		free(buf);
		free(idx);
		buf = idx = NULL;
	}
	err = dp_dump_rules(dp, &keys, &vals, &nk);
	if (err)
		goto out;
	wk = malloc((nk + 1) * sizeof(*wk));
	wv = malloc((nk + 1) * sizeof(*wv));
	dk = malloc((nk + 1) * sizeof(*dk));
	if (!wk || !wv || !dk) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nk; i++) {
		if ((keys[i] >> 32) == b) {
			dk[nd++] = keys[i];
		} else {
			wk[nw] = dp_abs_key(dp, XTCAM_MAP_RULES, (__u32)keys[i], b);
			wv[nw++] = vals[i];
		}
	}
	err = dp_del(dp, XTCAM_MAP_RULES, dk, nd);
	if (!err)
		err = dp_write(dp, XTCAM_MAP_RULES, wk, wv, nw);
	if (!err) {
		struct xtcam_gen g;

		err = dp_read(dp, XTCAM_MAP_GENS, a, &g);
		if (!err)
			err = dp_write1(dp, XTCAM_MAP_GENS, b, &g);
	}
	if (!err) {
		dp->cfg.dirty = 0;
		err = dp_write1(dp, XTCAM_MAP_CONFIG, 0, &dp->cfg);
	}
out:
	free(buf);
	free(idx);
	free(keys);
	free(vals);
	free(wk);
	free(wv);
	free(dk);
	return err;
}

/* --- single changes in place ------------------------------------------------
 *
 * A single add, delete or replace is published in the active generation by
 * one aligned word store, with no grace period waited for:
 *
 *   - the record and action go into a free slot first (reachable from
 *     nothing yet), a fresh counter is zeroed;
 *   - tuple list bounds (min_rank) that the new rule undercuts are lowered,
 *     each by one store (a lower bound only delays a frame's early exit);
 *   - the chain: an element's n (or a new overflow element's link, or a
 *     hole's slot word, or the slot word a right shift has freed) is the
 *     one store that makes the rule reachable.  A right shift runs back to
 *     front, each position taking a copy of its left neighbour: a frame
 *     scanning front to back meets every old candidate at least once, in
 *     rank order, and a duplicate is harmless;
 *   - a deleted rule's slot word becomes XTCAM_SLOT_HOLE (its lookup fails);
 *     n never shrinks between flips, so no frame ever reads a position
 *     being refilled for an append;
 *   - a replace that keeps tuple, bucket, rank and tag swaps the slot word
 *     (one store); otherwise it adds the new version, then deletes the old
 *     one (both carry the handle: a frame gets the old or the new verdict).
 *
 * Elements of a chain are full but the last, so position k of a chain is
 * slot k % 8 of its element k / 8.  Slots, counters and overflow elements
 * freed in place go to limbo (still taken) and are released by the next
 * flip, after its grace period.
 *
 * Only the active generation is written with the protocol (config.dirty =
 * 2: a crash leaves the inactive one as it was, and recovery flips back to
 * it); then the touched elements are copied to the inactive one, which no
 * frame reads (config.dirty = 1: recovery copies the active one over).
 *
 * The argument needs loads in program order and stores visible in program
 * order (TSO): x86-64.  Elsewhere every change takes a flip.
 */
#if defined(__x86_64__)
#define DP_INPLACE 1
#else
#define DP_INPLACE 0
#endif

#define LIMBO(dp) ((dp)->geom.limbo_base)

static inline void st32(__u32 *p, __u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void st64(__u64 *p, __u64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline __u32 ld32(const __u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline __u64 ld64(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* reasons a single change takes a flip */
enum { IP_OK, IP_TUPLE, IP_SPACE, IP_BOUNDS };

/* How many bounds of other tuples (those before the rule's own in a
 * list) a single add may lower in place.  Each one lowered makes frames
 * probe on past a tuple where they stopped before, until the next flip
 * sorts the lists again: beyond this many the add takes a flip.
 * XTCAM_IP_LOWER_MAX overrides it for experiments. */
static unsigned int ip_lower_max(void)
{
	static int lim = -1;

	if (lim < 0) {
		const char *e = getenv("XTCAM_IP_LOWER_MAX");

		lim = e && atoi(e) >= 0 ? atoi(e) : 2;
	}
	return (unsigned int)lim;
}

struct ipchain {                /* a chain of the active generation */
	__u32 bidx;
	__u32 el[XTCAM_MAX_CHAIN];  /* element indexes, relative */
	__u32 ne, len;              /* elements, positions (holes included) */
	__u64 *rank;                /* by position; XTCAM_RANK_NONE: a hole */
};

struct ipadd {                  /* where an added rule goes */
	struct ipchain c;
	__u32 P, F;                 /* its position; the free one a shift
	                             * fills (F == len: a new position) */
	__u32 newel;                /* F == len on a full last element: the
	                             * new overflow element, relative */
	__u32 slot, tag, tmask, prio;
	__u64 rank;
	bool hole;                  /* into a hole where it sorts */
	int ti;
};

static struct xtcam_bucket *ip_bucket(struct xtcam_dp *dp, __u32 gen, __u32 rel)
{
	return dp_elem(dp, XTCAM_MAP_BUCKETS, dp_abs_key(dp, XTCAM_MAP_BUCKETS, rel, gen));
}

static int ip_read_chain(struct txn *t, __u32 bidx, struct ipchain *c)
{
	struct xtcam_dp *dp = t->dp;
	__u32 gen = dp->cfg.gen, e = bidx, j;

	c->bidx = bidx;
	c->ne = c->len = 0;
	for (;;) {
		struct xtcam_bucket *b = ip_bucket(dp, gen, e);
		__u32 n;

		if (!b)
			return -errno;
		n = b->n;
		if (c->ne == XTCAM_MAX_CHAIN || n > XTCAM_BUCKET_SLOTS)
			return -EUCLEAN;
		if (c->ne && c->len % XTCAM_BUCKET_SLOTS)
			return -EUCLEAN;        /* a chained element not full */
		c->el[c->ne++] = e;
		if (n) {
			__u64 *r = realloc(c->rank, (c->len + n) * sizeof(*r));

			if (!r)
				return -ENOMEM;
			c->rank = r;
		}
		for (j = 0; j < n; j++) {
			struct xtcam_rec rec;
			__u32 s = b->slot[j];
			int err;

			if (s == XTCAM_SLOT_HOLE) {
				c->rank[c->len++] = XTCAM_RANK_NONE;
				continue;
			}
			err = dp_read(dp, XTCAM_MAP_RECORDS, s, &rec);
			if (err)
				return err;
			c->rank[c->len++] = rec.rank;
		}
		if (!b->next)
			return 0;
		e = b->next - 1;
		if (e < dp->geom.nbuckets || e >= dp->geom.bregion)
			return -EUCLEAN;
	}
}

/* the position of a slot in a chain, or -1 */
static long ip_find(struct xtcam_dp *dp, const struct ipchain *c, __u32 slot)
{
	__u32 k;

	for (k = 0; k < c->len; k++) {
		struct xtcam_bucket *b = ip_bucket(dp, dp->cfg.gen, c->el[k / XTCAM_BUCKET_SLOTS]);

		if (b && b->slot[k % XTCAM_BUCKET_SLOTS] == slot)
			return (long)k;
	}
	return -1;
}

/* Plan an add of rec (in a slot already taken): its tuple, chain and
 * position; IP_TUPLE or IP_SPACE when it takes a flip. */
static int ip_plan_add(struct txn *t, const struct xtcam_rec *rec, struct ipadd *a,
		       int *why)
{
	struct xtcam_dp *dp = t->dp;
	struct xtcam_key hm, hv;
	__u32 k, ntup = t->ntup;
	long q = -1, nx;
	int ti, err;

	hash_view(rec, &hm, &hv);
	ti = choose_tuple(t, &hm, &hv, rec->rank, rec_family(rec));
	if (t->ntup != ntup) {
		*why = IP_TUPLE;
		return 0;
	}
	if (ti < 0) {
		*why = IP_SPACE;
		return 0;
	}
	a->ti = ti;
	/* the bounds it would lower out of order */
	{
		const struct xtcam_tuple *tp = &t->tup[ti];
		unsigned int lower = 0;
		__u32 l, i;

		for (l = 0; l < XTCAM_NLISTS; l++) {
			const struct xtcam_tlist *tl;

			if (!tuple_in_list(tp, l))
				continue;
			tl = dp_elem(dp, XTCAM_MAP_TLISTS,
				     dp_abs_key(dp, XTCAM_MAP_TLISTS, l, dp->cfg.gen));
			if (!tl)
				return -errno;
			for (i = 0; i < tl->n && i < XTCAM_MAX_TUPLES && tl->t[i].id != tp->id; i++)
				if (tl->t[i].min_rank > rec->rank)
					lower++;
		}
		if (lower > ip_lower_max()) {
			*why = IP_BOUNDS;
			return 0;
		}
	}
	err = ip_read_chain(t, bucket_of(dp, &hv, &t->tup[ti]), &a->c);
	if (err)
		return err;
	/* after every candidate that ranks before it (or ties: the old
	 * version of a replaced rule) */
	for (k = 0; k < a->c.len; k++)
		if (a->c.rank[k] != XTCAM_RANK_NONE && a->c.rank[k] <= rec->rank)
			q = (long)k;
	for (nx = q + 1; nx < (long)a->c.len && a->c.rank[nx] == XTCAM_RANK_NONE; nx++)
		;
	a->hole = nx > q + 1;
	if (a->hole) {
		/* a hole where it sorts */
		a->P = a->F = (__u32)(q + 1);
	} else {
		a->P = (__u32)nx;
		for (a->F = a->P + 1; a->F < a->c.len && a->c.rank[a->F] != XTCAM_RANK_NONE;
		     a->F++)
			;
		if (a->P == a->c.len)
			a->F = a->P;
	}
	a->newel = 0;
	if (a->F == a->c.len) {
		if (a->c.len == XTCAM_MAX_CHAIN * XTCAM_BUCKET_SLOTS) {
			*why = IP_SPACE;
			return 0;
		}
		if (a->c.len && a->c.len % XTCAM_BUCKET_SLOTS == 0) {
			__u32 o;

			int e = bm_alloc(t, OVF_BASE(dp), dp->geom.bregion - dp->geom.nbuckets,
					 HINT_OVF, &o);

			if (e == -ENOSPC) {
				*why = IP_SPACE;
				return 0;
			}
			if (e)
				return e;
			a->newel = dp->geom.nbuckets + o;
		}
	}
	rec_tag(rec, &a->tag, &a->tmask);
	a->prio = (__u32)(rec->rank >> 32);
	a->rank = rec->rank;
	*why = IP_OK;
	return 0;
}

/* an element to copy to the inactive generation afterwards */
static int ip_touch(struct txn *t, __u32 rel)
{
	return push_u32(&t->touched, &t->ntouched, &t->capt, rel);
}

/* Write visible position k of chain c (generation gen): the candidate in
 * slot s, with its tag; the element's priority lowered first. */
static void ip_put(struct xtcam_dp *dp, const struct ipchain *c, __u32 k, __u32 s,
		   __u32 tag, __u32 tmask, __u32 prio)
{
	struct xtcam_bucket *b = ip_bucket(dp, dp->cfg.gen, c->el[k / XTCAM_BUCKET_SLOTS]);
	__u32 j = k % XTCAM_BUCKET_SLOTS;

	if (prio < b->prio)
		st32(&b->prio, prio);
	st32(&b->tag[j], tag);
	st32(&b->tmask[j], tmask);
	st32(&b->slot[j], s);
}

/* Publish a planned add in the active generation. */
static void ip_exec_add(struct txn *t, struct ipadd *a)
{
	struct xtcam_dp *dp = t->dp;
	struct ipchain *c = &a->c;
	__u32 gen = dp->cfg.gen, k, i, l;
	const struct xtcam_tuple *tp = &t->tup[a->ti];

	/* bounds: every list holding the tuple, at and before it */
	for (l = 0; l < XTCAM_NLISTS; l++) {
		struct xtcam_tlist *tl;
		__u32 n;

		if (!tuple_in_list(tp, l))
			continue;
		tl = dp_elem(dp, XTCAM_MAP_TLISTS, dp_abs_key(dp, XTCAM_MAP_TLISTS, l, gen));
		if (!tl)
			continue;
		n = tl->n;
		for (i = 0; i < n && i < XTCAM_MAX_TUPLES && tl->t[i].id != tp->id; i++)
			;
		if (i == n || i == XTCAM_MAX_TUPLES)
			continue;
		for (k = 0; k <= i; k++)
			if (tl->t[k].min_rank > a->rank) {
				st64(&tl->t[k].min_rank, a->rank);
				dp->st.bounds_lowered++;
			}
	}
	/* (pushes checked for room in ip_apply) */
	for (k = 0; k < c->ne; k++)
		ip_touch(t, c->el[k]);
	/* the free position at the end */
	if (a->F == c->len) {
		__u32 s, tg, tm, pr;
		struct xtcam_bucket *b;

		if (a->P == c->len) {
			s = a->slot, tg = a->tag, tm = a->tmask, pr = a->prio;
		} else {
			struct xtcam_bucket *lb = ip_bucket(dp, gen, c->el[(c->len - 1) / XTCAM_BUCKET_SLOTS]);
			__u32 j = (c->len - 1) % XTCAM_BUCKET_SLOTS;

			s = lb->slot[j], tg = lb->tag[j], tm = lb->tmask[j];
			pr = (__u32)(c->rank[c->len - 1] >> 32);
		}
		if (a->newel) {
			struct xtcam_bucket *last = ip_bucket(dp, gen, c->el[c->ne - 1]);

			b = ip_bucket(dp, gen, a->newel);
			/* not reachable yet: any order */
			memset(b, 0, sizeof(*b));
			b->prio = pr;
			b->slot[0] = s;
			b->tag[0] = tg;
			b->tmask[0] = tm;
			b->n = 1;
			ip_touch(t, a->newel);
			st32(&last->next, a->newel + 1);
			if (a->P == c->len)
				dp->st.pub_elem++;
		} else {
			__u32 j = c->len % XTCAM_BUCKET_SLOTS;

			b = ip_bucket(dp, gen, c->el[c->ne - 1]);
			if (j == 0 && pr < b->prio)
				st32(&b->prio, pr);
			if (c->len == 0)
				st32(&b->prio, pr);
			st32(&b->tag[j], tg);
			st32(&b->tmask[j], tm);
			st32(&b->slot[j], s);
			st32(&b->n, j + 1);
			if (a->P == c->len)
				dp->st.pub_append++;
		}
		if (a->P == c->len)
			return;
	}
	/* the right shift, back to front, then the publishing store */
	for (k = a->F < c->len ? a->F : c->len - 1; k > a->P; k--) {
		struct xtcam_bucket *pb = ip_bucket(dp, gen, c->el[(k - 1) / XTCAM_BUCKET_SLOTS]);
		__u32 j = (k - 1) % XTCAM_BUCKET_SLOTS;

		ip_put(dp, c, k, pb->slot[j], pb->tag[j], pb->tmask[j],
		       (__u32)(c->rank[k - 1] >> 32));
	}
	if (a->hole) {
		dp->st.pub_hole++;
	} else {
		dp->st.pub_shift++;
		dp->st.shift_len += a->F - a->P;
	}
	ip_put(dp, c, a->P, a->slot, a->tag, a->tmask, a->prio);
}

/* Limbo: what a single change freed, still taken in the used bitmap. */
static int limbo_put(struct txn *t, __u32 base, __u32 idx)
{
	__u64 *w = mget(t, XTCAM_MAP_ALLOC, LIMBO(t->dp) + base + idx / 64);

	if (!w)
		return -errno;
	*w |= 1ull << (idx % 64);
	mdirty(t, XTCAM_MAP_ALLOC, LIMBO(t->dp) + base + idx / 64);
	t->gen.limbo++;
	return 0;
}

/* At a flip: everything in limbo becomes free.  The flip's grace period
 * is over before anything is written again (the next write waits for
 * it), so no frame can still hold what is released here when it is next
 * used. */
static int limbo_release(struct txn *t)
{
	struct xtcam_dp *dp = t->dp;
	__u64 *have;
	__u32 w;
	int err;

	if (!t->gen.limbo)
		return 0;
	/* the limbo bitmaps read whole in a few batched lookups (a lookup of
	 * 16 words at a time costs thousands of syscalls a flip at 1M
	 * rules); a flip's transaction has not changed them before this */
	have = malloc(LIMBO(dp) * sizeof(*have));
	if (!have)
		return -ENOMEM;
	err = dp_read_range(dp, XTCAM_MAP_ALLOC,
			    dp_abs_key(dp, XTCAM_MAP_ALLOC, LIMBO(dp), dp->cfg.gen), LIMBO(dp), have);
	for (w = 0; !err && w < LIMBO(dp); w++) {
		__u64 *lw, *uw;

		if (!have[w])
			continue;
		lw = mget(t, XTCAM_MAP_ALLOC, LIMBO(dp) + w);
		if (!lw) {
			err = -errno;
			break;
		}
		uw = mget(t, XTCAM_MAP_ALLOC, w);
		if (!uw) {
			err = -errno;
			break;
		}
		*uw &= ~*lw;
		*lw = 0;
		mdirty(t, XTCAM_MAP_ALLOC, w);
		mdirty(t, XTCAM_MAP_ALLOC, LIMBO(dp) + w);
	}
	free(have);
	if (!err)
		t->gen.limbo = 0;
	return err;
}

/* The loader's own state of generation gen after a single change: the
 * registry entry, the allocation words, the tuples it changed, the
 * header. */
static int ip_write_state(struct txn *t, __u32 gen, const int *tis, int ntis)
{
	struct xtcam_dp *dp = t->dp;
	struct u64map_ent *e;
	int err = 0, i;

	u64map_for_each(&t->rules, e) {
		struct rentry *re = e->val;
		__u64 k = dp_abs_key(dp, XTCAM_MAP_RULES, e->key, gen);

		if (!re->dirty)
			continue;
		err = re->absent ? dp_del(dp, XTCAM_MAP_RULES, &k, 1) :
				   dp_write(dp, XTCAM_MAP_RULES, &k, &re->v, 1);
		if (err)
			return err;
	}
	err = write_mirror(t, XTCAM_MAP_ALLOC, gen);
	for (i = 0; !err && i < ntis; i++)
		if (tis[i] >= 0)
			err = dp_write1(dp, XTCAM_MAP_TUPLES,
					dp_abs_key(dp, XTCAM_MAP_TUPLES, (__u32)tis[i], gen),
					&t->tup[tis[i]]);
	if (!err)
		err = dp_write1(dp, XTCAM_MAP_GENS, gen, &t->gen);
	return err;
}

/* Copy what the change wrote in the active generation's buckets and lists
 * to the inactive one, which no frame reads. */
static int ip_copy_inactive(struct txn *t)
{
	struct xtcam_dp *dp = t->dp;
	__u32 a = dp->cfg.gen, b = !a, l;
	size_t i;

	for (i = 0; i < t->ntouched; i++) {
		struct xtcam_bucket *s = ip_bucket(dp, a, t->touched[i]);
		struct xtcam_bucket *d = ip_bucket(dp, b, t->touched[i]);

		if (!s || !d)
			return -errno;
		memcpy(d, s, sizeof(*d));
	}
	for (l = 0; l < XTCAM_NLISTS; l++) {
		struct xtcam_tlist *s = dp_elem(dp, XTCAM_MAP_TLISTS,
						dp_abs_key(dp, XTCAM_MAP_TLISTS, l, a));
		struct xtcam_tlist *d = dp_elem(dp, XTCAM_MAP_TLISTS,
						dp_abs_key(dp, XTCAM_MAP_TLISTS, l, b));

		if (!s || !d)
			return -errno;
		memcpy(d, s, sizeof(*d));
	}
	return 0;
}

static int set_dirty(struct xtcam_dp *dp, __u32 v)
{
	dp->cfg.dirty = v;
	return dp_write1(dp, XTCAM_MAP_CONFIG, 0, &dp->cfg);
}

/* One add, delete or replace in place; -EAGAIN (nothing published) when
 * it takes a flip. */
static int ip_apply(struct xtcam_dp *dp, const struct xtcam_dp_op *op, char *err,
		    size_t errlen)
{
	struct txn t;
	struct ipadd a;
	struct ipchain dc;
	struct xtcam_rec rec, old;
	struct rentry *re;
	__u32 h, slot = 0, cnt = 0, gen;
	long dpos = -1;
	int e, why = IP_OK, oti = -1, ti = -1, tis[2];
	bool add, del, swap = false, newcnt = false;

	memset(&a, 0, sizeof(a));
	memset(&dc, 0, sizeof(dc));
	dp_unmap(dp, false);
	e = txn_begin(&t, dp, err, errlen);
	if (e)
		goto out;
	t.live = true;
	gen = dp->cfg.gen;
	if (op->cmd != XTCAM_DP_ADD && op->cmd != XTCAM_DP_DEL &&
	    op->cmd != XTCAM_DP_REPLACE) {
		e = -EINVAL;
		goto out;
	}
	if (op->cmd != XTCAM_DP_DEL && !op->rule) {
		e = -EINVAL;
		goto out;
	}
	add = op->cmd != XTCAM_DP_DEL;
	del = op->cmd != XTCAM_DP_ADD;
	h = del && !add ? op->handle : xtcam_rule_handle_of(op->rule);
	re = rget(&t, h);
	if (!re) {
		e = -errno;
		goto out;
	}
	if (!del && !re->absent) {
		xtcam_set_err(err, errlen, "handle %u: in use", h);
		e = -EEXIST;
		goto out;
	}
	if (del && re->absent) {
		xtcam_set_err(err, errlen, "handle %u: no such rule", h);
		e = -ENOENT;
		goto out;
	}
	plan_cuts(&t, op, 1);
	if (del) {
		struct xtcam_key hm, hv;

		e = dp_read(dp, XTCAM_MAP_RECORDS, re->v.slot, &old);
		if (e)
			goto out;
		oti = tuple_index(&t, re->v.tuple);
		if (oti < 0) {
			e = -EUCLEAN;
			goto out;
		}
		hash_view(&old, &hm, &hv);
		e = ip_read_chain(&t, bucket_of(dp, &hv, &t.tup[oti]), &dc);
		if (e)
			goto out;
		dpos = ip_find(dp, &dc, re->v.slot);
		if (dpos < 0) {
			e = -EUCLEAN;
			goto out;
		}
	}
	if (add) {
		struct xtcam_rule rb;

		e = xtcam_rule_compile(xtcam_rule_view(op->rule, &rb), &rec);
		if (e) {
			xtcam_set_err(err, errlen, "handle %u: malformed rule", h);
			goto out;
		}
		if (op->act.type == XTCAM_ACT_NONE || op->act.type >= XTCAM_ACT_MAX) {
			xtcam_set_err(err, errlen, "handle %u: bad action", h);
			e = -EINVAL;
			goto out;
		}
		if (t.gen.nentries + rec.entries - (del ? old.entries : 0) > dp->geom.capacity) {
			xtcam_set_err(err, errlen, "needs %u entries, block holds %u",
				      t.gen.nentries + rec.entries - (del ? old.entries : 0),
				      dp->geom.capacity);
			e = -ENOSPC;
			goto out;
		}
		newcnt = !del || op->fresh_counters;
		e = bm_alloc(&t, SLOT_BASE(dp), dp->geom.nslots, HINT_SLOT, &slot);
		if (!e && newcnt)
			e = bm_alloc(&t, CNT_BASE(dp), dp->geom.ncnt, HINT_CNT, &cnt);
		if (e == -ENOSPC) {
			why = IP_SPACE;
			e = 0;
		}
		if (e || why)
			goto out;
		if (newcnt && (e = push_u32(&t.zcnts, &t.nzcnts, &t.capz, cnt)))
			goto out;
		if (!newcnt)
			cnt = old.cnt;
		rec.cnt = cnt;
		rec.slot = slot;
		if (del) {
			struct xtcam_key hm, hv, hmo, hvo;
			__u32 tg, tm, otg, otm;

			hash_view(&rec, &hm, &hv);
			hash_view(&old, &hmo, &hvo);
			rec_tag(&rec, &tg, &tm);
			rec_tag(&old, &otg, &otm);
			swap = rec.rank == old.rank && rec_family(&rec) == rec_family(&old) &&
			       covers(t.tup[oti].mask, &hm) &&
			       bucket_of(dp, &hv, &t.tup[oti]) == dc.bidx &&
			       tg == otg && tm == otm;
		}
		if (!swap) {
			e = ip_plan_add(&t, &rec, &a, &why);
			if (e || why)
				goto out;
			a.slot = slot;
		}
	}
	/* room for the elements to copy, so that nothing fails half way */
	if (t.capt < XTCAM_MAX_CHAIN * 2 + 2) {
		__u32 *p = realloc(t.touched, (XTCAM_MAX_CHAIN * 2 + 2) * sizeof(*p));

		if (!p) {
			e = -ENOMEM;
			goto out;
		}
		t.touched = p;
		t.capt = XTCAM_MAX_CHAIN * 2 + 2;
	}

	/* 1. what nothing refers to yet */
	if (add) {
		e = dp_write1(dp, XTCAM_MAP_RECORDS, slot, &rec);
		if (!e)
			e = dp_write1(dp, XTCAM_MAP_ACTIONS, slot, &op->act);
	}
	if (!e)
		e = zero_counters(&t);
	/* 2. the active generation, word by word */
	if (!e)
		e = set_dirty(dp, 2);
	if (e)
		goto out;
	if (swap) {
		struct xtcam_bucket *b = ip_bucket(dp, gen, dc.el[dpos / XTCAM_BUCKET_SLOTS]);

		ip_touch(&t, dc.el[dpos / XTCAM_BUCKET_SLOTS]);
		st32(&b->slot[dpos % XTCAM_BUCKET_SLOTS], slot);
		dp->st.pub_swap++;
	} else {
		struct xtcam_bucket *b;

		if (add)
			ip_exec_add(&t, &a);
		if (del) {
			if (add && a.c.bidx == dc.bidx) {
				/* the shift may have moved it */
				e = ip_read_chain(&t, dc.bidx, &dc);
				if (!e && (dpos = ip_find(dp, &dc, re->v.slot)) < 0)
					e = -EUCLEAN;
				if (e)
					goto out;
			}
			b = ip_bucket(dp, gen, dc.el[dpos / XTCAM_BUCKET_SLOTS]);
			ip_touch(&t, dc.el[dpos / XTCAM_BUCKET_SLOTS]);
			st32(&b->slot[dpos % XTCAM_BUCKET_SLOTS], XTCAM_SLOT_HOLE);
			t.gen.holes++;
			if (add)
				dp->st.pub_two++;
			else
				dp->st.pub_del++;
		}
	}
	xtcam_crash_point("publish");
	/* 3. the loader's state */
	if (del) {
		e = limbo_put(&t, SLOT_BASE(dp), re->v.slot);
		if (!e && (!add || newcnt))
			e = limbo_put(&t, CNT_BASE(dp), old.cnt);
		if (e)
			goto out;
		t.tup[oti].nrules--;
		t.gen.nrules--;
		t.gen.nentries -= old.entries;
	}
	if (add) {
		ti = swap ? oti : a.ti;
		t.tup[ti].nrules++;
		if (rec.rank < t.tup[ti].min_rank)
			t.tup[ti].min_rank = rec.rank;
		t.gen.nrules++;
		t.gen.nentries += rec.entries;
		re->v.slot = slot;
		re->v.tuple = t.tup[ti].id;
		re->absent = false;
	} else {
		re->absent = true;
	}
	re->dirty = true;
	tis[0] = oti;
	tis[1] = ti;
	e = ip_write_state(&t, gen, tis, 2);
	/* 4. the inactive generation */
	if (!e)
		e = set_dirty(dp, 1);
	if (!e)
		e = ip_copy_inactive(&t);
	if (!e)
		e = ip_write_state(&t, !gen, tis, 2);
	if (!e)
		e = set_dirty(dp, 0);
	if (!e)
		dp->st.inplace++;
out:
	if (!e && why) {
		e = -EAGAIN;
		if (why == IP_TUPLE)
			dp->st.flip_tuple++;
		else if (why == IP_BOUNDS)
			dp->st.flip_bounds++;
		else
			dp->st.flip_space++;
	}
	free(a.c.rank);
	free(dc.rank);
	txn_free(&t);
	return e;
}

/* A batch through the two generations: a flip and a grace period. */
static int flip_apply(struct xtcam_dp *dp, const struct xtcam_dp_op *ops,
		      size_t n, char *err, size_t errlen)
{
	struct txn t;
	size_t i;
	int e;

	e = txn_begin(&t, dp, err, errlen);
	if (!e) {
		t.dense = n >= dense_min();
		txn_tidy(&t);
		plan_cuts(&t, ops, n);
		/* adds of handles known free only: no entry is looked up */
		t.unmapped = true;
		for (i = 0; i < n && t.unmapped; i++)
			t.unmapped = ops[i].cmd == XTCAM_DP_ADD && ops[i].free;
		if (!t.unmapped)
			e = u64map_reserve(&t.rules, n);
	}
	xtcam_trace("dp begin");
	for (i = 0; !e && i < n; i++) {
		const struct xtcam_dp_op *op = &ops[i];
		struct rentry *re;
		__u32 h = op->cmd == XTCAM_DP_DEL ? op->handle :
			  op->rule ? xtcam_rule_handle_of(op->rule) : 0, cnt = 0;
		struct xtcam_rule rb;

		if (op->cmd != XTCAM_DP_DEL && !op->rule) {
			e = -EINVAL;
			break;
		}
		if (!(i & 8191) && i)
			xtcam_progress("data path", i, n);
		re = rget_as(&t, h, op->cmd == XTCAM_DP_ADD && op->free);
		if (!re) {
			e = -errno;
			break;
		}
		switch (op->cmd) {
		case XTCAM_DP_ADD:
			if (!re->absent) {
				xtcam_set_err(err, errlen, "handle %u: in use", h);
				e = -EEXIST;
				break;
			}
			e = do_insert(&t, xtcam_rule_view(op->rule, &rb), &op->act, 0, true, re);
			break;
		case XTCAM_DP_DEL:
		case XTCAM_DP_REPLACE:
			if (re->absent) {
				xtcam_set_err(err, errlen, "handle %u: no such rule", h);
				e = -ENOENT;
				break;
			}
			e = do_remove(&t, h, &cnt);
			if (e)
				break;
			if (op->cmd == XTCAM_DP_DEL || op->fresh_counters)
				e = push_u32(&t.fcnts, &t.nfcnts, &t.capc, cnt);
			if (!e && op->cmd == XTCAM_DP_REPLACE)
				e = do_insert(&t, xtcam_rule_view(op->rule, &rb), &op->act, cnt,
					      op->fresh_counters, re);
			break;
		default:
			e = -EINVAL;
		}
	}
	if (!e && t.gen.nentries > dp->geom.capacity) {
		xtcam_set_err(err, errlen, "needs %u entries, block holds %u",
			t.gen.nentries, dp->geom.capacity);
		e = -ENOSPC;
	}
	xtcam_trace("dp place");
	if (!e)
		e = txn_commit(&t);
	txn_free(&t);
	return e;
}

static bool limbo_pending(struct xtcam_dp *dp)
{
	struct xtcam_gen g;

	return !dp_read(dp, XTCAM_MAP_GENS, dp->cfg.gen, &g) && g.limbo;
}

int xtcam_dp_apply(struct xtcam_dp *dp, const struct xtcam_dp_op *ops,
		   size_t n, char *err, size_t errlen)
{
	int e;

	if (err && errlen)
		err[0] = 0;
	/* a pending flip finished first by a single change (failed, it
	 * left the data path marked dirty: txn_begin repairs it); a batch
	 * reads and places first, and waits for it before it writes */
	if (n == 1 || !dp->defer)
		xtcam_dp_settle(dp);
	if (n == 1) {
		static int flip_only = -1;

		/* XTCAM_DP_FLIP_ONLY=1: every change through a flip, for
		 * comparisons */
		if (flip_only < 0) {
			const char *v = getenv("XTCAM_DP_FLIP_ONLY");

			flip_only = v && *v == '1';
		}
		if (DP_INPLACE && !flip_only) {
			e = ip_apply(dp, ops, err, errlen);
			if (e != -EAGAIN)
				return e;
		} else {
			dp->st.flip_other++;
		}
	}
	e = flip_apply(dp, ops, n, err, errlen);
	if (e == -ENOSPC && limbo_pending(dp)) {
		/* the free pools ran dry with slots still in limbo: an empty
		 * flip frees them after its grace period, then again */
		struct txn t;

		e = txn_begin(&t, dp, NULL, 0);
		if (!e)
			e = txn_commit(&t);
		txn_free(&t);
		if (!e) {
			dp->st.limbo_syncs++;
			if (err && errlen)
				err[0] = 0;
			e = flip_apply(dp, ops, n, err, errlen);
		}
	}
	return e;
}

int xtcam_dp_set_default(struct xtcam_dp *dp, const struct xtcam_action *a)
{
	struct txn t;
	int e;

	xtcam_dp_settle(dp);    /* a pending flip finished first (and below) */
	if (a->type == XTCAM_ACT_NONE || a->type >= XTCAM_ACT_MAX)
		return -EINVAL;
	e = txn_begin(&t, dp, NULL, 0);
	if (!e) {
		t.gen.dflt = *a;
		e = txn_commit(&t);
	}
	txn_free(&t);
	return e;
}

/* --- reading back ---------------------------------------------------------- */

void xtcam_dp_percpu_sum(const struct xtcam_dp *dp, const char *val, struct xtcam_counter *c)
{
	size_t step = (sizeof(*c) + 7) & ~7ul;
	int i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < dp->ncpus; i++) {
		const struct xtcam_counter *p = (const void *)(val + (size_t)i * step);

		c->packets += p->packets;
		c->bytes += p->bytes;
		if (p->last_hit > c->last_hit)
			c->last_hit = p->last_hit;
	}
}

static int sum_counter(struct xtcam_dp *dp, int m, __u32 idx, struct xtcam_counter *c)
{
	char *buf = malloc(dp_usz(dp, m));
	int err;

	if (!buf)
		return -ENOMEM;
	err = dp_read(dp, m, idx, buf);
	if (!err)
		xtcam_dp_percpu_sum(dp, buf, c);
	else
		memset(c, 0, sizeof(*c));
	free(buf);
	return err;
}

int xtcam_dp_rule_record(struct xtcam_dp *dp, __u32 handle,
			 struct xtcam_rec *rec, struct xtcam_action *act)
{
	struct xtcam_hval hv;
	int err;

	err = dp_read(dp, XTCAM_MAP_RULES,
		      dp_abs_key(dp, XTCAM_MAP_RULES, handle, dp->cfg.gen), &hv);
	if (err)
		return err;
	if (rec && (err = dp_read(dp, XTCAM_MAP_RECORDS, hv.slot, rec)))
		return err;
	if (act && (err = dp_read(dp, XTCAM_MAP_ACTIONS, hv.slot, act)))
		return err;
	return 0;
}

int xtcam_dp_rule_counters(struct xtcam_dp *dp, __u32 handle,
			   struct xtcam_counter *c)
{
	struct xtcam_rec rec;
	int err = xtcam_dp_rule_record(dp, handle, &rec, NULL);

	if (err)
		return err;
	/* read without the lock, the slot may hold another rule by now: its
	 * counters are not this one's */
	if ((__u32)rec.rank != handle)
		return -ENOENT;
	return sum_counter(dp, XTCAM_MAP_COUNTERS, rec.cnt, c);
}

int xtcam_dp_stat(struct xtcam_dp *dp, enum xtcam_stat s, struct xtcam_counter *c)
{
	return sum_counter(dp, XTCAM_MAP_STATS, s, c);
}

int xtcam_dp_counters_reset(struct xtcam_dp *dp)
{
	int maps[] = { XTCAM_MAP_COUNTERS, XTCAM_MAP_STATS }, err = 0;
	size_t j;

	xtcam_dp_settle(dp);
	for (j = 0; !err && j < 2; j++) {
		int m = maps[j];
		size_t n = dp->max[m], i;
		__u64 *keys = malloc(n * sizeof(*keys));
		void *vals = calloc(n, dp_usz(dp, m));

		if (!keys || !vals)
			err = -ENOMEM;
		for (i = 0; !err && i < n; i++)
			keys[i] = i;
		if (!err)
			err = dp_write(dp, m, keys, vals, n);
		free(keys);
		free(vals);
	}
	return err;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

int xtcam_dp_handles(struct xtcam_dp *dp, __u32 **out, size_t *nout)
{
	__u64 *keys;
	struct xtcam_hval *vals;
	size_t n, i, k = 0;
	__u32 *h;
	int err;

	xtcam_dp_settle(dp);
	err = dp_dump_rules(dp, &keys, &vals, &n);
	if (err)
		return err;
	h = malloc((n + 1) * sizeof(*h));
	if (!h) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((keys[i] >> 32) == dp->cfg.gen)
			h[k++] = (__u32)keys[i];
	qsort(h, k, sizeof(*h), cmp_u32);
	*out = h;
	*nout = k;
out:
	free(keys);
	free(vals);
	return err;
}

int xtcam_dp_info(struct xtcam_dp *dp, struct xtcam_dp_info *info, bool scan)
{
	struct xtcam_gen g;
	int err;

	xtcam_dp_settle(dp);
	err = dp_read(dp, XTCAM_MAP_GENS, dp->cfg.gen, &g);
	if (err)
		return err;
	memset(info, 0, sizeof(*info));
	info->nrules = g.nrules;
	info->nentries = g.nentries;
	info->ntuples = g.ntuples;
	info->capacity = dp->geom.capacity;
	info->dflt = g.dflt;
	info->gen = dp->cfg.gen;
	if (scan) {
		size_t n = dp->geom.bregion, i;
		struct xtcam_bucket *b = malloc(n * sizeof(*b));

		if (!b)
			return -ENOMEM;
		err = dp_read_range(dp, XTCAM_MAP_BUCKETS,
				    dp_abs_key(dp, XTCAM_MAP_BUCKETS, 0, dp->cfg.gen), n, b);
		for (i = 0; !err && i < dp->geom.nbuckets; i++) {
			__u32 len = 1, e = (__u32)i;

			if (!b[i].n)
				continue;
			info->buckets_used++;
			while (b[e].next && len < XTCAM_MAX_CHAIN) {
				e = b[e].next - 1;
				if (e >= n)
					break;
				len++;
				info->overflow_used++;
			}
			if (len > info->max_chain)
				info->max_chain = len;
		}
		free(b);
	}
	return err;
}

__u64 xtcam_dp_classify(struct xtcam_dp *dp, const struct xtcam_key *k,
			__u32 *handle, unsigned int *probes)
{
	__u64 best = XTCAM_RANK_NONE;
	__u32 gen = __atomic_load_n(&dp->cfg.gen, __ATOMIC_ACQUIRE) & 1, i, n;
	__u32 pf = xtcam_pkt_family(&k->eth_type), sig = xtcam_sig(k, pf);
	const struct xtcam_tlist *tl;
	unsigned int np = 0;

	dp_unmap(dp, false);
	/* the family's list, as the BPF program walks it, and the words
	 * single changes publish (list bounds, n, next, slots) read once
	 * each, in the program's order */
	tl = dp_elem(dp, XTCAM_MAP_TLISTS, dp_abs_key(dp, XTCAM_MAP_TLISTS, pf, gen));
	if (!tl)
		return XTCAM_RANK_NONE;
	n = ld32(&tl->n);
	for (i = 0; i < n && i < XTCAM_MAX_TUPLES; i++) {
		const struct xtcam_tuple *tp = &tl->t[i];
		unsigned int hops = 0;
		__u32 e;

		if (ld64(&tp->min_rank) >= best)
			break;
		e = xtcam_hash((const __u64 *)k, tp->mask, tp->wmap, tp->hstart,
			       xtcam_bshift(dp->geom.nbuckets));
		np++;
		for (;;) {
			const struct xtcam_bucket *b = ip_bucket(dp, gen, e);
			__u32 j, bn, next;
			bool done = false;

			if (!b)
				break;
			bn = ld32(&b->n);
			if (!bn)
				break;
			if ((__u64)ld32(&b->prio) << 32 >= best)
				break;
			for (j = 0; j < bn && j < XTCAM_BUCKET_SLOTS; j++) {
				struct xtcam_rec r;
				__u32 s;

				if ((sig ^ ld32(&b->tag[j])) & ld32(&b->tmask[j]))
					continue;
				s = ld32(&b->slot[j]);
				if (s >= dp->geom.nslots)
					continue;   /* a hole */
				if (dp->flags & XTCAM_DP_MEMORY)
					memcpy(&r, (const struct xtcam_rec *)dp->mem[XTCAM_MAP_RECORDS] + s,
					       sizeof(r));
				else if (dp_read(dp, XTCAM_MAP_RECORDS, s, &r))
					continue;
				if (r.rank >= best) {
					done = true;
					break;
				}
				if (xtcam_rec_match(&r, k)) {
					best = r.rank;
					done = true;
					break;
				}
			}
			next = ld32(&b->next);
			if (done || !next || ++hops >= XTCAM_MAX_CHAIN)
				break;
			e = next - 1;
		}
	}
	if (handle)
		*handle = best == XTCAM_RANK_NONE ? 0 : (__u32)best;
	if (probes)
		*probes = np;
	return best;
}

/* --- invariants (tests) ------------------------------------------------- */

static int verify_gen(struct xtcam_dp *dp, __u32 gen, char *err, size_t errlen)
{
	size_t nb = dp->geom.bregion, nk = 0, i, total = 0;
	struct xtcam_bucket *b = malloc(nb * sizeof(*b));
	__u8 *seen = calloc(dp->geom.nslots, 1);
	__u8 *elem_used = calloc(nb, 1);
	__u64 *keys = NULL, *alloc = malloc(dp->geom.alloc_words * 8);
	struct xtcam_hval *vals = NULL;
	struct xtcam_tuple tup[XTCAM_MAX_TUPLES];
	struct xtcam_tlist *ltl = malloc(sizeof(*ltl));
	__u32 tcount[XTCAM_MAX_TUPLES] = { 0 };
	__u64 tmin[XTCAM_MAX_TUPLES];
	__u64 entries = 0;
	struct xtcam_gen g;
	int e = -ENOMEM;

#define FAIL(...) do { xtcam_set_err(err, errlen, __VA_ARGS__); e = -EUCLEAN; goto out; } while (0)
	if (!b || !seen || !elem_used || !alloc || !ltl)
		goto out;
	for (i = 0; i < XTCAM_MAX_TUPLES; i++)
		tmin[i] = XTCAM_RANK_NONE;
	if ((e = dp_read(dp, XTCAM_MAP_GENS, gen, &g)) ||
	    (e = dp_read_range(dp, XTCAM_MAP_TUPLES,
			       dp_abs_key(dp, XTCAM_MAP_TUPLES, 0, gen), g.ntuples, tup)) ||
	    (e = dp_read_range(dp, XTCAM_MAP_BUCKETS,
			       dp_abs_key(dp, XTCAM_MAP_BUCKETS, 0, gen), nb, b)) ||
	    (e = dp_read_range(dp, XTCAM_MAP_ALLOC,
			       dp_abs_key(dp, XTCAM_MAP_ALLOC, 0, gen),
			       dp->geom.alloc_words, alloc)) ||
	    (e = dp_dump_rules(dp, &keys, &vals, &nk)))
		goto out;
	for (i = 0; i < g.ntuples; i++) {
		if (tup[i].fam > XTCAM_FAM_ANY)
			FAIL("gen %u: tuple %u of family %u", gen, tup[i].id, tup[i].fam);
		/* the data path hashes with these, the compiler placed with
		 * them: a stale copy would send packets to other buckets */
		if (tup[i].wmap != xtcam_tuple_wmap(tup[i].mask, tup[i].fam) ||
		    tup[i].hstart != xtcam_hstart(tup[i].id))
			FAIL("gen %u: tuple %u hash words %#x start %#llx, expected %#x %#llx",
			     gen, tup[i].id, tup[i].wmap,
			     (unsigned long long)tup[i].hstart,
			     xtcam_tuple_wmap(tup[i].mask, tup[i].fam),
			     (unsigned long long)xtcam_hstart(tup[i].id));
	}
	/* walk every chain: sorted, each slot once, holes passed over; an
	 * element's priority no higher than the rules after it; elements
	 * full but the last (position k is slot k % 8 of element k / 8) */
	for (i = 0; i < dp->geom.nbuckets; i++) {
		__u32 el = (__u32)i, hops = 0, maxp = 0, maxel = 0;
		__u64 last = 0;
		bool any = false;

		for (;;) {
			__u32 j;

			if (elem_used[el])
				FAIL("gen %u: bucket element %u in two chains", gen, el);
			elem_used[el] = 1;
			if (el >= dp->geom.nbuckets &&
			    !BIT_TEST(alloc + OVF_BASE(dp), el - dp->geom.nbuckets))
				FAIL("gen %u: overflow element %u not allocated", gen, el);
			if (el >= dp->geom.nbuckets &&
			    BIT_TEST(alloc + LIMBO(dp) + OVF_BASE(dp), el - dp->geom.nbuckets))
				FAIL("gen %u: overflow element %u in use and in limbo", gen, el);
			if (b[el].n > XTCAM_BUCKET_SLOTS ||
			    (b[el].next && b[el].n != XTCAM_BUCKET_SLOTS))
				FAIL("gen %u: bucket element %u holds %u and is chained", gen, el,
				     b[el].n);
			if (b[el].n && b[el].prio >= maxp) {
				maxp = b[el].prio;
				maxel = el;
			}
			for (j = 0; j < b[el].n; j++) {
				struct xtcam_rec r;
				__u32 s = b[el].slot[j];

				if (s == XTCAM_SLOT_HOLE)
					continue;
				if (s >= dp->geom.nslots || seen[s])
					FAIL("gen %u: slot %u twice or out of range", gen, s);
				seen[s] = 1;
				total++;
				if ((e = dp_read(dp, XTCAM_MAP_RECORDS, s, &r)))
					goto out;
				if (r.slot != s)
					FAIL("gen %u: slot %u holds the record of slot %u", gen, s, r.slot);
				if (r.rank <= last && any)
					FAIL("gen %u: bucket %zu not sorted", gen, i);
				if (maxp > (__u32)(r.rank >> 32))
					FAIL("gen %u: bucket element %u has priority %u, its first rule %u",
					     gen, maxel, maxp, (__u32)(r.rank >> 32));
				maxp = 0;
				{
					__u32 tg, tm;

					rec_tag(&r, &tg, &tm);
					if (b[el].tag[j] != tg || b[el].tmask[j] != tm)
						FAIL("gen %u: slot %u has tag %08x/%08x, its rule %08x/%08x",
						     gen, s, b[el].tag[j], b[el].tmask[j], tg, tm);
				}
				last = r.rank;
				any = true;
				if (!BIT_TEST(alloc + SLOT_BASE(dp), s))
					FAIL("gen %u: slot %u in use but free", gen, s);
				if (!BIT_TEST(alloc + CNT_BASE(dp), r.cnt))
					FAIL("gen %u: counter %u in use but free", gen, r.cnt);
				if (BIT_TEST(alloc + LIMBO(dp) + SLOT_BASE(dp), s))
					FAIL("gen %u: slot %u in use and in limbo", gen, s);
				if (BIT_TEST(alloc + LIMBO(dp) + CNT_BASE(dp), r.cnt))
					FAIL("gen %u: counter %u in use and in limbo", gen, r.cnt);
			}
			if (!b[el].next)
				break;
			if (++hops >= XTCAM_MAX_CHAIN)
				FAIL("gen %u: chain too long at %zu", gen, i);
			el = b[el].next - 1;
			if (el < dp->geom.nbuckets || el >= nb)
				FAIL("gen %u: bad next in chain %zu", gen, i);
		}
	}
	/* limbo: taken, and counted in the header */
	{
		__u64 nl = 0;

		for (i = 0; i < LIMBO(dp); i++) {
			if (alloc[LIMBO(dp) + i] & ~alloc[i])
				FAIL("gen %u: limbo word %zu not taken", gen, i);
			nl += (__u64)__builtin_popcountll(alloc[LIMBO(dp) + i]);
		}
		if (nl != g.limbo)
			FAIL("gen %u: %llu in limbo, header says %u", gen,
			     (unsigned long long)nl, g.limbo);
	}
	/* every registered rule sits in the bucket its tuple says */
	{
		size_t nr = 0;

		for (i = 0; i < nk; i++) {
			struct xtcam_key hm, hv;
			struct xtcam_rec r;
			__u32 t, el, hops = 0, found = 0;

			if ((keys[i] >> 32) != gen)
				continue;
			nr++;
			if ((e = dp_read(dp, XTCAM_MAP_RECORDS, vals[i].slot, &r)))
				goto out;
			if ((__u32)r.rank != (__u32)keys[i])
				FAIL("gen %u: handle %u has record of handle %u", gen,
				     (__u32)keys[i], (__u32)r.rank);
			for (t = 0; t < g.ntuples && tup[t].id != vals[i].tuple; t++)
				;
			if (t == g.ntuples)
				FAIL("gen %u: handle %u in missing tuple %u", gen,
				     (__u32)keys[i], vals[i].tuple);
			hash_view(&r, &hm, &hv);
			if (!covers(tup[t].mask, &hm))
				FAIL("gen %u: tuple %u does not cover handle %u", gen,
				     tup[t].id, (__u32)keys[i]);
			if (tup[t].fam != rec_family(&r))
				FAIL("gen %u: tuple %u of family %u holds handle %u of family %u",
				     gen, tup[t].id, tup[t].fam, (__u32)keys[i], rec_family(&r));
			if (tup[t].min_rank > r.rank)
				FAIL("gen %u: tuple %u min_rank above a member", gen, tup[t].id);
			if (r.rank < tmin[t])
				tmin[t] = r.rank;
			tcount[t]++;
			entries += r.entries;
			el = bucket_of(dp, &hv, &tup[t]);
			for (;;) {
				__u32 j;

				for (j = 0; j < b[el].n; j++)
					if (b[el].slot[j] == vals[i].slot)
						found++;
				if (!b[el].next || ++hops >= XTCAM_MAX_CHAIN)
					break;
				el = b[el].next - 1;
			}
			if (found != 1)
				FAIL("gen %u: handle %u found %u times in its bucket", gen,
				     (__u32)keys[i], found);
		}
		if (nr != g.nrules || total != g.nrules)
			FAIL("gen %u: %zu registered, %zu in buckets, header says %u",
			     gen, nr, total, g.nrules);
		if (entries != g.nentries)
			FAIL("gen %u: entries %llu, header says %u", gen,
			     (unsigned long long)entries, g.nentries);
		/* (single deletes may leave a tuple empty until a flip) */
		for (i = 0; i < g.ntuples; i++)
			if (tcount[i] != tup[i].nrules)
				FAIL("gen %u: tuple %u has %u rules, says %u", gen,
				     tup[i].id, tcount[i], tup[i].nrules);
	}
	/* each family's list is the set filtered, in order, with bounds:
	 * a tuple's min_rank in a list may be below the truth (single changes
	 * lower bounds in place) but never above the best rank of any tuple
	 * at its place or later, or frames would stop too early */
	for (i = 0; i < XTCAM_NLISTS; i++) {
		size_t k = 0, j;
		__u64 suffix = XTCAM_RANK_NONE;

		if ((e = dp_read(dp, XTCAM_MAP_TLISTS,
				 dp_abs_key(dp, XTCAM_MAP_TLISTS, i, gen), ltl)))
			goto out;
		if (ltl->n > XTCAM_MAX_TUPLES)
			FAIL("gen %u: list %zu has %u tuples", gen, i, ltl->n);
		for (j = 0; j < g.ntuples; j++) {
			const struct xtcam_tuple *a = &tup[j], *l = &ltl->t[k];

			if (!tuple_in_list(a, (__u32)i))
				continue;
			if (k >= ltl->n || l->id != a->id || l->fam != a->fam ||
			    l->wmap != a->wmap || l->hstart != a->hstart ||
			    memcmp(l->mask, a->mask, sizeof(a->mask)) ||
			    l->min_rank > a->min_rank)
				FAIL("gen %u: family list %zu differs from the tuples at %zu",
				     gen, i, k);
			k++;
		}
		if (k != ltl->n)
			FAIL("gen %u: family list %zu has %u tuples, %zu expected", gen, i,
			     ltl->n, k);
		for (j = ltl->n; j-- > 0;) {
			__u32 t;

			for (t = 0; t < g.ntuples && tup[t].id != ltl->t[j].id; t++)
				;
			if (t < g.ntuples && tmin[t] < suffix)
				suffix = tmin[t];
			if (ltl->t[j].min_rank > suffix)
				FAIL("gen %u: family list %zu bound %#llx at %zu above a later rule %#llx",
				     gen, i, (unsigned long long)ltl->t[j].min_rank, j,
				     (unsigned long long)suffix);
		}
	}
	e = 0;
out:
#undef FAIL
	free(b);
	free(seen);
	free(elem_used);
	free(keys);
	free(vals);
	free(alloc);
	free(ltl);
	return e;
}

int xtcam_dp_verify(struct xtcam_dp *dp, char *err, size_t errlen)
{
	int e;

	xtcam_dp_settle(dp);
	e = verify_gen(dp, dp->cfg.gen, err, errlen);
	if (!e)
		e = verify_gen(dp, !dp->cfg.gen, err, errlen);
	return e;
}
