// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Map storage behind a data path: BPF maps (fds) or memory.  Keys are u64:
 * an array index, or (gen << 32 | handle) for the rule registry.  Values
 * of per-CPU maps are ncpus copies, each rounded up to 8 bytes, as the
 * syscall interface has them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "dp_internal.h"

static bool is_hash(int m)
{
	return m == XTCAM_MAP_RULES;
}

size_t dp_vsz(const struct xtcam_dp *dp, int m)
{
	return dp->vsz[m];
}

/* bytes one element takes through the syscall interface */
size_t dp_usz(const struct xtcam_dp *dp, int m)
{
	if (m == XTCAM_MAP_COUNTERS || m == XTCAM_MAP_STATS)
		return ((dp->vsz[m] + 7) & ~7ul) * dp->ncpus;
	return dp->vsz[m];
}

static void hkey_of(__u64 k, struct xtcam_hkey *hk)
{
	hk->gen = (__u32)(k >> 32);
	hk->handle = (__u32)k;
}

int dp_read(struct xtcam_dp *dp, int m, __u64 key, void *val)
{
	size_t usz = dp_usz(dp, m);

	__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
	if (dp->flags & XTCAM_DP_MEMORY) {
		if (is_hash(m)) {
			void *v = u64map_get(&dp->memrules, key);

			if (!v)
				return -ENOENT;
			memcpy(val, v, usz);
			return 0;
		}
		if (key >= dp->max[m])
			return -ENOENT;
		memcpy(val, (char *)dp->mem[m] + key * usz, usz);
		return 0;
	}
	if (is_hash(m)) {
		struct xtcam_hkey hk;

		hkey_of(key, &hk);
		return bpf_map_lookup_elem(dp->fd[m], &hk, val) ? -errno : 0;
	} else {
		__u32 k = (__u32)key;

		return bpf_map_lookup_elem(dp->fd[m], &k, val) ? -errno : 0;
	}
}

int dp_read_range(struct xtcam_dp *dp, int m, __u64 first, size_t n, void *vals)
{
	size_t usz = dp_usz(dp, m), done = 0;
	__u32 *keys = NULL;
	int err = 0;

	if (!n)
		return 0;
	if (first + n > dp->max[m])
		return -ERANGE;
	if (dp->flags & XTCAM_DP_MEMORY) {
		__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
		memcpy(vals, (char *)dp->mem[m] + first * usz, n * usz);
		return 0;
	}
	/* array maps: batched lookups, in chunks */
	keys = malloc(sizeof(*keys) * (n < 65536 ? n : 65536));
	if (!keys)
		return -ENOMEM;
	while (done < n) {
		/* in_batch is the key *before* the first one returned */
		__u32 pos = (__u32)(first + done), in = pos - 1, out, cnt;
		size_t chunk = n - done < 65536 ? n - done : 65536;

		cnt = (__u32)chunk;
		__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
		if (bpf_map_lookup_batch(dp->fd[m], pos ? &in : NULL, &out, keys,
					 (char *)vals + done * usz, &cnt, NULL)) {
			err = -errno;
			if (err == -ENOENT && cnt) {
				err = 0;        /* end of map */
			} else if (err == -EINVAL || err == -ENOTSUPP ||
				   err == -EOPNOTSUPP) {
				/* no batch ops for this map here: one by one */
				size_t i;

				err = 0;
				for (i = done; i < n && !err; i++)
					err = dp_read(dp, m, first + i,
						      (char *)vals + i * usz);
				break;
			} else {
				break;
			}
		}
		if (!cnt) {
			err = -EIO;
			break;
		}
		done += cnt;
	}
	free(keys);
	return err;
}

int dp_write(struct xtcam_dp *dp, int m, const __u64 *keys, const void *vals,
	     size_t n)
{
	size_t usz = dp_usz(dp, m), i;
	void *kbuf;
	int err = 0;

	if (!n)
		return 0;
	if (dp->flags & XTCAM_DP_MEMORY) {
		__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
		for (i = 0; i < n; i++) {
			if (is_hash(m)) {
				void *v = u64map_get(&dp->memrules, keys[i]);

				if (!v) {
					if (dp->memrules.n >= dp->max[m])
						return -E2BIG;
					v = malloc(usz);
					if (!v || u64map_put(&dp->memrules, keys[i], v)) {
						free(v);
						return -ENOMEM;
					}
				}
				memcpy(v, (const char *)vals + i * usz, usz);
			} else {
				if (keys[i] >= dp->max[m])
					return -E2BIG;
				memcpy((char *)dp->mem[m] + keys[i] * usz,
				       (const char *)vals + i * usz, usz);
			}
		}
		return 0;
	}
	kbuf = malloc(n * (is_hash(m) ? sizeof(struct xtcam_hkey) : sizeof(__u32)));
	if (!kbuf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (is_hash(m))
			hkey_of(keys[i], (struct xtcam_hkey *)kbuf + i);
		else
			((__u32 *)kbuf)[i] = (__u32)keys[i];
	}
	for (i = 0; i < n;) {
		__u32 cnt = (__u32)(n - i);
		size_t ksz = is_hash(m) ? sizeof(struct xtcam_hkey) : sizeof(__u32);

		__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
		if (bpf_map_update_batch(dp->fd[m], (char *)kbuf + i * ksz,
					 (const char *)vals + i * usz, &cnt, NULL)) {
			err = -errno;
			if (err == -EINVAL || err == -ENOTSUPP || err == -EOPNOTSUPP) {
				/* no batch support: one by one */
				err = 0;
				for (; i < n; i++) {
					__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
					if (bpf_map_update_elem(dp->fd[m], (char *)kbuf + i * ksz,
								(const char *)vals + i * usz, 0)) {
						err = -errno;
						break;
					}
				}
			}
			break;
		}
		i += cnt;
	}
	free(kbuf);
	return err;
}

/* Keys absent are no error.  In batches: a batch stops at the first key
 * it cannot delete (cnt says how many went before it), which is skipped
 * when absent. */
int dp_del(struct xtcam_dp *dp, int m, const __u64 *keys, size_t n)
{
	struct xtcam_hkey *hk;
	size_t i;
	int err = 0;

	if (!is_hash(m))
		return -EINVAL;
	if (dp->flags & XTCAM_DP_MEMORY) {
		for (i = 0; i < n; i++) {
			__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
			free(u64map_del(&dp->memrules, keys[i]));
		}
		return 0;
	}
	if (!n)
		return 0;
	hk = malloc(n * sizeof(*hk));
	if (!hk)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		hkey_of(keys[i], &hk[i]);
	for (i = 0; i < n;) {
		__u32 cnt = (__u32)(n - i);

		__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
		if (!bpf_map_delete_batch(dp->fd[m], &hk[i], &cnt, NULL))
			break;
		err = -errno;
		if (cnt > n - i)
			cnt = 0;
		i += cnt;
		if (err == -ENOENT) {
			err = 0;
			i++;                    /* absent: the next one */
			continue;
		}
		if (err != -EINVAL && err != -ENOTSUPP && err != -EOPNOTSUPP)
			break;
		/* no batch support: one by one */
		err = 0;
		for (; i < n; i++) {
			__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
			if (bpf_map_delete_elem(dp->fd[m], &hk[i]) && errno != ENOENT) {
				err = -errno;
				break;
			}
		}
		break;
	}
	free(hk);
	return err;
}

/* every key of the rule registry (hash) with its value */
int dp_dump_rules(struct xtcam_dp *dp, __u64 **keys_out,
		  struct xtcam_hval **vals_out, size_t *n_out)
{
	size_t cap = 1024, n = 0;
	__u64 *keys = malloc(cap * sizeof(*keys));
	struct xtcam_hval *vals = malloc(cap * sizeof(*vals));
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto fail;
	}
	if (dp->flags & XTCAM_DP_MEMORY) {
		struct u64map_ent *e;

		u64map_for_each(&dp->memrules, e) {
			if (n == cap) {
				void *k2, *v2;

				cap *= 2;
				k2 = realloc(keys, cap * sizeof(*keys));
				if (k2)
					keys = k2;
				v2 = realloc(vals, cap * sizeof(*vals));
				if (v2)
					vals = v2;
				if (!k2 || !v2) {
					err = -ENOMEM;
					goto fail;
				}
			}
			keys[n] = e->key;
			memcpy(&vals[n], e->val, sizeof(*vals));
			n++;
		}
	} else {
		struct xtcam_hkey hk, next;
		struct xtcam_hkey *cur = NULL;

		/* get_next_key walk: simple and works on every kernel */
		for (;;) {
			__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
			if (bpf_map_get_next_key(dp->fd[XTCAM_MAP_RULES], cur, &next)) {
				if (errno == ENOENT)
					break;
				err = -errno;
				goto fail;
			}
			hk = next;
			cur = &hk;
			if (n == cap) {
				void *k2, *v2;

				cap *= 2;
				k2 = realloc(keys, cap * sizeof(*keys));
				if (k2)
					keys = k2;
				v2 = realloc(vals, cap * sizeof(*vals));
				if (v2)
					vals = v2;
				if (!k2 || !v2) {
					err = -ENOMEM;
					goto fail;
				}
			}
			__atomic_fetch_add(&dp->stat_syscalls, 1, __ATOMIC_RELAXED);
			if (bpf_map_lookup_elem(dp->fd[XTCAM_MAP_RULES], &hk, &vals[n]))
				continue;   /* deleted meanwhile */
			keys[n] = ((__u64)hk.gen << 32) | hk.handle;
			n++;
		}
	}
	*keys_out = keys;
	*vals_out = vals;
	*n_out = n;
	return 0;
fail:
	free(keys);
	free(vals);
	return err;
}

/* Wait until no program can still be using the old generation: updating
 * a map-in-map makes the kernel wait for an RCU grace period before the
 * syscall returns (maybe_wait_bpf_programs()). */
int dp_sync(struct xtcam_dp *dp)
{
	struct timespec a, b;
	__u32 zero = 0;
	int err = 0;

	if (dp->flags & XTCAM_DP_MEMORY)
		return 0;
	if (dp->sync_outer < 0) {
		LIBBPF_OPTS(bpf_map_create_opts, o);

		dp->sync_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xtcam_sync_in",
						4, 4, 1, NULL);
		if (dp->sync_inner < 0)
			return -errno;
		o.inner_map_fd = dp->sync_inner;
		dp->sync_outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS,
						"xtcam_sync", 4, 4, 1, &o);
		if (dp->sync_outer < 0)
			return -errno;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (bpf_map_update_elem(dp->sync_outer, &zero, &dp->sync_inner, 0))
		err = -errno;
	clock_gettime(CLOCK_MONOTONIC, &b);
	dp->stat_sync_s += (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	dp->stat_syncs++;
	return err;
}

/* Windows of a mapped map: the kernel maps every page of a window at once
 * and the pages count in the process's resident memory, so a change maps
 * only windows around the elements it touches (a map of at most
 * DP_WHOLE is mapped whole). */
#define DP_WIN   (64u << 10)
#define DP_WHOLE (1u << 20)

void *dp_elem(struct xtcam_dp *dp, int m, __u64 idx)
{
	size_t esz, off, total, pg = (size_t)sysconf(_SC_PAGESIZE), wo, wl;
	struct dp_win *w;
	void *p;
	int i;

	if (idx >= dp->max[m]) {
		errno = ERANGE;
		return NULL;
	}
	if (dp->flags & XTCAM_DP_MEMORY)
		return (char *)dp->mem[m] + idx * dp_usz(dp, m);
	/* a BPF array lays its elements out 8-byte aligned */
	esz = (dp->vsz[m] + 7) & ~(size_t)7;
	off = idx * esz;
	total = (dp->max[m] * esz + pg - 1) / pg * pg;
	for (i = 0; i < dp->nwin; i++) {
		w = &dp->win[i];
		if (w->m == m && off >= w->off && off + esz <= w->off + w->len)
			return (char *)w->p + (off - w->off);
	}
	if (total <= DP_WHOLE) {
		wo = 0;
		wl = total;
	} else {
		wo = off / DP_WIN * DP_WIN;
		wl = DP_WIN + (esz + pg - 1) / pg * pg;
		if (wo + wl > total)
			wl = total - wo;
	}
	if (dp->nwin == dp->capwin) {
		int c = dp->capwin ? 2 * dp->capwin : 16;
		struct dp_win *nw = realloc(dp->win, (size_t)c * sizeof(*nw));

		if (!nw)
			return NULL;
		dp->win = nw;
		dp->capwin = c;
	}
	p = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_SHARED, dp->fd[m], (off_t)wo);
	if (p == MAP_FAILED)
		return NULL;
	w = &dp->win[dp->nwin++];
	w->m = m;
	w->off = wo;
	w->len = wl;
	w->p = p;
	return (char *)p + (off - wo);
}

void dp_unmap(struct xtcam_dp *dp, bool all)
{
	int i;

	if (!all && dp->nwin < 64)
		return;
	for (i = 0; i < dp->nwin; i++)
		munmap(dp->win[i].p, dp->win[i].len);
	dp->nwin = 0;
	if (all) {
		free(dp->win);
		dp->win = NULL;
		dp->capwin = 0;
	}
}
