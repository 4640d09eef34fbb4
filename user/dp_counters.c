// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The counters of every rule of a data path at once, for listings of
 * whole blocks (see xtcam_dp_counters_read in xtcam/dp.h).  A rule's
 * counter is three lookups away (the rules hash for its slot, the record
 * for its counter index, the per-CPU counter); read one rule at a time
 * that is three syscalls a rule.  Here each map is read in batches
 * instead: the rules hash whole, then the records and counters in
 * windows of consecutive indexes, only the windows that hold one.
 * First of all the counters in use alone: when none is set (a block
 * without traffic since its load or its last reset) there is nothing to
 * map to rules; when a few are, their rules are found through the
 * records of the slots in use (each checked against the rules hash by a
 * lookup); only past ZMAX of them is the hash, the biggest read, read
 * whole.
 * xtcam_dp_counters_start does it in a thread of its own, on a private
 * copy of the handle (the caller keeps using its own meanwhile).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "dp_internal.h"

/* a rule of the active generation on its way from slot to counter */
struct hc {
	__u32 handle;
	__u32 idx;              /* slot, then counter index */
};

struct dp_cnt_ent {
	__u32 handle;
	struct xtcam_counter c;
};

struct xtcam_dp_counters {
	struct dp_cnt_ent *e;   /* rules with a counter not zero, by handle */
	size_t n;
	/* xtcam_dp_counters_start: the reading thread, on its copy of the
	 * handle (the same maps, nothing else shared) */
	bool running;
	int err;
	pthread_t th;
	struct xtcam_dp dp;
};

/* t's entries one longer (doubled when full): 0 or -ENOMEM */
static int cnt_push(struct xtcam_dp_counters *t, size_t *cap, __u32 handle,
		    const struct xtcam_counter *c)
{
	if (t->n == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		struct dp_cnt_ent *ne = realloc(t->e, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		t->e = ne;
		*cap = nc;
	}
	t->e[t->n++] = (struct dp_cnt_ent){ handle, *c };
	return 0;
}

#define HASH_CHUNK 4096         /* rules hash elements a batch read */
#define WIN 1024                /* array elements a window */
#define SCAN_WIN 16384          /* counters a read of their scan */

static int cmp_idx(const void *a, const void *b)
{
	const struct hc *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct dp_cnt_ent *x = a, *y = b;

	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

static int hc_add(struct hc **v, size_t *n, size_t *cap, __u32 handle, __u32 slot)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		struct hc *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = (struct hc){ handle, slot };
	return 0;
}

/* (handle, slot) of every rule of the active generation */
static int active_slots(struct xtcam_dp *dp, struct hc **vout, size_t *nout)
{
	struct xtcam_hkey *keys = NULL;
	struct xtcam_hval *vals = NULL;
	struct hc *v = NULL;
	size_t n = 0, cap = 0, i, chunk = HASH_CHUNK;
	__u32 gen = dp->cfg.gen, in = 0, out = 0, cnt;
	bool first = true;
	int e = 0;

	if (dp->flags & XTCAM_DP_MEMORY) {
		__u64 *k;
		struct xtcam_hval *hv;
		size_t nk;

		e = dp_dump_rules(dp, &k, &hv, &nk);
		if (e)
			return e;
		for (i = 0; i < nk && !e; i++)
			if ((k[i] >> 32) == gen)
				e = hc_add(&v, &n, &cap, (__u32)k[i], hv[i].slot);
		free(k);
		free(hv);
		goto done;
	}
	for (;;) {
		if (!keys) {
			keys = malloc(chunk * sizeof(*keys));
			vals = malloc(chunk * sizeof(*vals));
			if (!keys || !vals) {
				e = -ENOMEM;
				break;
			}
		}
		cnt = (__u32)chunk;
		dp->stat_syscalls++;
		e = bpf_map_lookup_batch(dp->fd[XTCAM_MAP_RULES], first ? NULL : &in, &out,
					 keys, vals, &cnt, NULL) ? -errno : 0;
		if (e == -ENOSPC && !cnt) {
			/* a bucket holds more than a chunk: a bigger one */
			chunk *= 2;
			free(keys);
			free(vals);
			keys = NULL;
			vals = NULL;
			e = 0;
			continue;
		}
		if (e && e != -ENOENT)
			break;
		for (i = 0; i < cnt; i++)
			if (keys[i].gen == gen && hc_add(&v, &n, &cap, keys[i].handle,
							  vals[i].slot)) {
				e = -ENOMEM;
				break;
			}
		if (e)          /* -ENOENT: the end; or out of memory */
			break;
		in = out;
		first = false;
	}
	free(keys);
	free(vals);
	if (e == -ENOENT)
		e = 0;
	if (e == -EINVAL || e == -EOPNOTSUPP || e == -ENOTSUPP) {
		/* no batch reads of hashes here: a walk */
		__u64 *k;
		struct xtcam_hval *hv;
		size_t nk;

		n = 0;
		e = dp_dump_rules(dp, &k, &hv, &nk);
		if (!e) {
			for (i = 0; !e && i < nk; i++)
				if ((k[i] >> 32) == gen)
					e = hc_add(&v, &n, &cap, (__u32)k[i], hv[i].slot);
			free(k);
			free(hv);
		}
	}
done:
	if (e) {
		free(v);
		return e;
	}
	*vout = v;
	*nout = n;
	return 0;
}

/* v[i].idx: slot -> counter index, reading the records of the windows
 * that hold a slot of v (v sorted by slot) */
static int slots_to_counters(struct xtcam_dp *dp, struct hc *v, size_t n)
{
	size_t usz = dp_usz(dp, XTCAM_MAP_RECORDS), i = 0, max = dp->max[XTCAM_MAP_RECORDS];
	char *buf = malloc(WIN * usz);
	int e = 0;

	if (!buf)
		return -ENOMEM;
	while (i < n && !e) {
		__u64 first = v[i].idx / WIN * WIN;
		size_t len = first + WIN <= max ? WIN : max - first;

		if (v[i].idx >= max) {
			v[i++].idx = UINT32_MAX;        /* no such slot: no counter */
			continue;
		}
		e = dp_read_range(dp, XTCAM_MAP_RECORDS, first, len, buf);
		for (; !e && i < n && v[i].idx < first + len; i++) {
			const struct xtcam_rec *r = (const void *)(buf + (v[i].idx - first) * usz);

			v[i].idx = r->cnt;
		}
	}
	free(buf);
	return e;
}

/* the counters of v (sorted by counter index) summed over CPUs, those not
 * zero into t */
static int read_counters(struct xtcam_dp *dp, const struct hc *v, size_t n,
			 struct xtcam_dp_counters *t)
{
	size_t usz = dp_usz(dp, XTCAM_MAP_COUNTERS);
	size_t max = dp->max[XTCAM_MAP_COUNTERS], i = 0, cap = 0;
	char *buf = malloc(WIN * usz);
	int e = 0;

	if (!buf)
		return -ENOMEM;
	while (i < n && !e) {
		__u64 first = v[i].idx / WIN * WIN;
		size_t len = first + WIN <= max ? WIN : max - first;

		if (v[i].idx >= max) {
			i++;
			continue;
		}
		e = dp_read_range(dp, XTCAM_MAP_COUNTERS, first, len, buf);
		for (; !e && i < n && v[i].idx < first + len; i++) {
			struct xtcam_counter c;

			xtcam_dp_percpu_sum(dp, buf + (v[i].idx - first) * usz, &c);
			if (!c.packets && !c.bytes && !c.last_hit)
				continue;
			e = cnt_push(t, &cap, v[i].handle, &c);
			if (e)
				break;
		}
	}
	free(buf);
	return e;
}

/* words [base, base + nw) of the allocation bitmaps, of both generations
 * at once (what is in use in either is looked at): NULL when there are
 * none to read */
static __u64 *bits_used(struct xtcam_dp *dp, __u64 base, size_t nw)
{
	__u64 *w, *w1;
	size_t i;
	__u32 gen;

	if (dp->flags & XTCAM_DP_MEMORY || !nw || dp->max[XTCAM_MAP_ALLOC] <
	    2ull * dp->geom.alloc_words)
		return NULL;
	w = malloc(2 * nw * sizeof(*w));
	if (!w)
		return NULL;
	w1 = w + nw;
	for (gen = 0; gen < 2; gen++)
		if (dp_read_range(dp, XTCAM_MAP_ALLOC, dp_abs_key(dp, XTCAM_MAP_ALLOC, base, gen),
				  nw, gen ? w1 : w)) {
			free(w);
			return NULL;
		}
	for (i = 0; i < nw; i++)
		w[i] |= w1[i];
	return w;
}

/* does the window [first, first + len) hold a bit of used? (yes without
 * a bitmap) */
static bool win_used(const __u64 *used, __u64 first, size_t len)
{
	size_t i;

	if (!used)
		return true;
	for (i = first / 64; i < (first + len + 63) / 64; i++)
		if (used[i])
			return true;
	return false;
}

/* a counter in use that is not zero */
struct zc {
	__u32 idx;
	struct xtcam_counter c;
};

#define ZMAX 65536              /* counters set: the most mapped to rules
				 * through the records */

/* The counters in use that are not zero, by index, into *z (at most
 * ZMAX; *n past it, and *z NULL): 0 or -errno. */
static int nonzero_counters(struct xtcam_dp *dp, struct zc **zout, size_t *nout)
{
	size_t usz = dp_usz(dp, XTCAM_MAP_COUNTERS);
	__u64 max = dp->max[XTCAM_MAP_COUNTERS], first;
	__u64 *used = bits_used(dp, dp->geom.slot_words, dp->geom.cnt_words);
	char *buf = malloc(SCAN_WIN * usz);
	struct zc *z = NULL;
	size_t n = 0, cap = 0;
	int e = 0;

	for (first = 0; buf && !e && first < max; first += SCAN_WIN) {
		size_t len = first + SCAN_WIN <= max ? SCAN_WIN : max - first, i;

		if (!win_used(used, first, len))
			continue;
		e = dp_read_range(dp, XTCAM_MAP_COUNTERS, first, len, buf);
		for (i = 0; !e && i < len; i++) {
			struct xtcam_counter c;

			xtcam_dp_percpu_sum(dp, buf + i * usz, &c);
			if (!c.packets && !c.bytes && !c.last_hit)
				continue;
			if (n == ZMAX) {
				free(z);
				z = NULL;
			}
			if (n++ >= ZMAX)
				continue;       /* counted only */
			if (n > cap) {
				size_t nc = cap ? 2 * cap : 256;
				struct zc *p = realloc(z, nc * sizeof(*p));

				if (!p) {
					e = -ENOMEM;
					break;
				}
				z = p;
				cap = nc;
			}
			z[n - 1] = (struct zc){ (__u32)(first + i), c };
		}
	}
	if (!buf)
		e = -ENOMEM;
	free(buf);
	free(used);
	if (e) {
		free(z);
		return e;
	}
	*zout = n > ZMAX ? NULL : z;
	*nout = n;
	return 0;
}

static int cmp_zc(const void *a, const void *b)
{
	const struct zc *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The rules of the counters z: the records of the slots in use that
 * count into one of z, each whose rule (its rank's handle) sits in that
 * slot in the active generation.  1 when that cannot be read this way
 * (no bitmap of the slots): the caller reads the rules hash instead. */
static int by_records(struct xtcam_dp *dp, const struct zc *z, size_t nz,
		      struct xtcam_dp_counters *t)
{
	size_t usz = dp_usz(dp, XTCAM_MAP_RECORDS), cap = 0;
	__u64 max = dp->max[XTCAM_MAP_RECORDS], first;
	__u64 *used = bits_used(dp, 0, dp->geom.slot_words);
	char *buf;
	int e = 0;

	if (!used)
		return 1;
	buf = malloc(WIN * usz);
	for (first = 0; buf && !e && first < max; first += WIN) {
		size_t len = first + WIN <= max ? WIN : max - first, i;

		if (!win_used(used, first, len))
			continue;
		e = dp_read_range(dp, XTCAM_MAP_RECORDS, first, len, buf);
		for (i = 0; !e && i < len; i++) {
			const struct xtcam_rec *r = (const void *)(buf + i * usz);
			struct zc key = { .idx = r->cnt };
			const struct zc *hit;
			struct xtcam_hkey hk;
			struct xtcam_hval hv;

			if (!(used[(first + i) / 64] & (1ull << ((first + i) % 64))))
				continue;
			hit = bsearch(&key, z, nz, sizeof(*z), cmp_zc);
			if (!hit)
				continue;
			hk = (struct xtcam_hkey){ dp->cfg.gen, (__u32)r->rank };
			dp->stat_syscalls++;
			if (bpf_map_lookup_elem(dp->fd[XTCAM_MAP_RULES], &hk, &hv)) {
				if (errno == ENOENT)
					continue;       /* a rule no longer there */
				e = -errno;
				break;
			}
			if (hv.slot != first + i)
				continue;       /* the rule sits elsewhere now */
			e = cnt_push(t, &cap, hk.handle, &hit->c);
			if (e)
				break;
		}
	}
	if (!buf)
		e = -ENOMEM;
	free(buf);
	free(used);
	return e;
}

static int counters_read(struct xtcam_dp *dp, struct xtcam_dp_counters *t)
{
	struct hc *v = NULL;
	struct zc *z = NULL;
	size_t n = 0, nz = 0;
	int e;

	e = nonzero_counters(dp, &z, &nz);
	if (e || !nz)
		return e;       /* none set: every rule's is zero */
	/* a few set: to their rules through the records */
	e = z ? by_records(dp, z, nz, t) : 1;
	free(z);
	if (e <= 0) {
		if (!e && t->n)
			qsort(t->e, t->n, sizeof(*t->e), cmp_ent);
		return e;
	}
	t->n = 0;
	e = active_slots(dp, &v, &n);
	if (!e && n) {
		qsort(v, n, sizeof(*v), cmp_idx);
		e = slots_to_counters(dp, v, n);
	}
	if (!e && n) {
		qsort(v, n, sizeof(*v), cmp_idx);
		e = read_counters(dp, v, n, t);
	}
	free(v);
	if (!e && t->n)	/* (qsort of no elements: t->e may be NULL) */
		qsort(t->e, t->n, sizeof(*t->e), cmp_ent);
	return e;
}

int xtcam_dp_counters_read(struct xtcam_dp *dp, struct xtcam_dp_counters **out)
{
	struct xtcam_dp_counters *t = calloc(1, sizeof(*t));
	int e;

	if (!t)
		return -ENOMEM;
	e = counters_read(dp, t);
	if (e) {
		xtcam_dp_counters_free(t);
		return e;
	}
	*out = t;
	return 0;
}

static void *counters_thread(void *arg)
{
	struct xtcam_dp_counters *t = arg;

	t->err = counters_read(&t->dp, t);
	return NULL;
}

int xtcam_dp_counters_start(struct xtcam_dp *dp, struct xtcam_dp_counters **out)
{
	struct xtcam_dp_counters *t;
	int e;

	/* in memory, the maps are the handle's own: read here and now */
	if (dp->flags & XTCAM_DP_MEMORY)
		return xtcam_dp_counters_read(dp, out);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* what the reads use of a handle: its maps' descriptors, sizes and
	 * generation; none of its caches */
	t->dp = *dp;
	t->dp.win = NULL;
	t->dp.nwin = t->dp.capwin = 0;
	t->dp.pend = NULL;
	t->dp.stat_syscalls = 0;
	e = -pthread_create(&t->th, NULL, counters_thread, t);
	if (e) {
		free(t);
		return e;
	}
	t->running = true;
	*out = t;
	return 0;
}

int xtcam_dp_counters_wait(struct xtcam_dp_counters *t)
{
	if (t->running) {
		pthread_join(t->th, NULL);
		t->running = false;
	}
	return t->err;
}

void xtcam_dp_counters_get(const struct xtcam_dp_counters *t, __u32 handle,
			   struct xtcam_counter *c)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].handle < handle) {
			lo = mid + 1;
		} else if (t->e[mid].handle > handle) {
			hi = mid;
		} else {
			*c = t->e[mid].c;
			return;
		}
	}
	memset(c, 0, sizeof(*c));
}

void xtcam_dp_counters_free(struct xtcam_dp_counters *t)
{
	if (!t)
		return;
	xtcam_dp_counters_wait(t);
	free(t->e);
	free(t);
}
