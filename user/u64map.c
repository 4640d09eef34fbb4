// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "u64map.h"

static size_t slot_of(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

void u64map_init(struct u64map *m)
{
	m->e = NULL;
	m->cap = 0;
	m->n = 0;
}

void u64map_free(struct u64map *m, void (*free_val)(void *))
{
	size_t i;

	if (free_val && m->e)
		for (i = 0; i < m->cap; i++)
			if (m->e[i].val)
				free_val(m->e[i].val);
	free(m->e);
	u64map_init(m);
}

void *u64map_get(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].val)
			return NULL;
		if (m->e[i].key == key)
			return m->e[i].val;
	}
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i, j;
	struct u64map_ent *e = calloc(cap, sizeof(*e));

	if (!e)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->e[i].val)
			continue;
		for (j = slot_of(m->e[i].key, cap); e[j].val; j = (j + 1) & (cap - 1))
			;
		e[j] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
	return 0;
}

int u64map_reserve(struct u64map *m, size_t n)
{
	while (n * 4 > m->cap * 3) {
		int err = grow(m);

		if (err)
			return err;
	}
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, void *val)
{
	void **slot = u64map_slot(m, key);

	if (!slot)
		return -ENOMEM;
	if (!*slot)
		m->n++;
	*slot = val;
	return 0;
}

void **u64map_slot(struct u64map *m, uint64_t key)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3 && grow(m)) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].val) {
			m->e[i].key = key;
			return &m->e[i].val;
		}
		if (m->e[i].key == key)
			return &m->e[i].val;
	}
}

void *u64map_del(struct u64map *m, uint64_t key)
{
	size_t i, j, k;
	void *val;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].val)
			return NULL;
		if (m->e[i].key == key)
			break;
	}
	val = m->e[i].val;
	m->e[i].val = NULL;
	m->n--;
	/* backward-shift the cluster after i */
	for (j = (i + 1) & (m->cap - 1); m->e[j].val; j = (j + 1) & (m->cap - 1)) {
		k = slot_of(m->e[j].key, m->cap);
		/* can e[j] move to i?  only if its home k is not in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->e[i] = m->e[j];
			m->e[j].val = NULL;
			i = j;
		}
	}
	return val;
}
