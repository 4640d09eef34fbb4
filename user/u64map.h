/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* A small open-addressing hash table: u64 key -> pointer.  Internal. */
#ifndef XTCAM_U64MAP_H
#define XTCAM_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_ent {
	uint64_t key;
	void *val;          /* NULL: empty slot */
};

struct u64map {
	struct u64map_ent *e;
	size_t cap;         /* power of 2 */
	size_t n;
};

void u64map_init(struct u64map *m);
/* frees the table; calls free_val on each value when not NULL */
void u64map_free(struct u64map *m, void (*free_val)(void *));
void *u64map_get(const struct u64map *m, uint64_t key);
/* room for n entries without growing on the way (one table, not the
 * table and its predecessor at once); returns 0 or -ENOMEM */
int u64map_reserve(struct u64map *m, size_t n);
/* val must not be NULL; replaces; returns 0 or -ENOMEM */
int u64map_put(struct u64map *m, uint64_t key, void *val);
/* The value slot of key: its value, or NULL where a value of key would
 * go (the key is set there; the caller stores a value, then counts it
 * with u64map_filled, or leaves the slot NULL, as if never asked).  One
 * probe where a get then a put take two.  NULL (errno ENOMEM): full and
 * could not grow. */
void **u64map_slot(struct u64map *m, uint64_t key);
static inline void u64map_filled(struct u64map *m)
{
	m->n++;
}
/* returns the removed value or NULL */
void *u64map_del(struct u64map *m, uint64_t key);

#define u64map_for_each(m, ent) \
	for ((ent) = (m)->e; (m)->e && (ent) < (m)->e + (m)->cap; (ent)++) \
		if ((ent)->val)

#endif
