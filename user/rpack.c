// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Packed rules (see rpack.h).  A rule packed: a word whose bits say which
 * of the rule's 64-bit words are not zero, then those words.  Word 0 (prio
 * and handle) is always there, so that both are at a fixed place.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "rpack.h"

#define NWORDS (sizeof(struct xtcam_rule) / 8)

_Static_assert(sizeof(struct xtcam_rule) % 8 == 0, "a rule is whole words");
_Static_assert(sizeof(struct xtcam_rule) / 8 <= 64, "a word of bits covers a rule");
_Static_assert(offsetof(struct xtcam_rule, prio) == 0 &&
	       offsetof(struct xtcam_rule, handle) == 4, "prio and handle are word 0");

#define MAX_LIVE 8

unsigned int xtcam_rpack_nlive;
static const struct xtcam_rpack *live[MAX_LIVE];

void xtcam_rpack_init(struct xtcam_rpack *p)
{
	memset(p, 0, sizeof(*p));
}

/* a packed rule's most bytes: its word of bits and all its words */
#define PACKED_MAX (8 * (NWORDS + 1))
#define HUGE_PAGE ((size_t)2 << 20)

static size_t round_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

int xtcam_rpack_reserve(struct xtcam_rpack *p, size_t n)
{
	size_t room, offs;
	unsigned char *m;

	if (!n || n > SIZE_MAX / 4 / PACKED_MAX)
		return -ENOMEM;
	/* (an append aligns what it moves in to a huge page) */
	room = round_up(n * PACKED_MAX + 2 * HUGE_PAGE, HUGE_PAGE);
	offs = round_up(n * sizeof(*p->off), HUGE_PAGE);
	m = mmap(NULL, room + offs, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -ENOMEM;
	/* where the kernel gives huge pages on request: fewer faults */
	madvise(m, room + offs, MADV_HUGEPAGE);
	p->buf = m;
	p->cap = room;
	p->off = (size_t *)(m + room);
	p->ncap = n;
	p->mapped = room + offs;
	return 0;
}

/* p's rules into malloc's memory, with room for more; its mapping unmapped */
static int unmap_pack(struct xtcam_rpack *p)
{
	size_t cap = 2 * p->len + PACKED_MAX, ncap = 2 * p->ncap + 1;
	unsigned char *b = malloc(cap);
	size_t *o = malloc(ncap * sizeof(*o));

	if (!b || !o) {
		free(b);
		free(o);
		return -ENOMEM;
	}
	memcpy(b, p->buf, p->len);
	memcpy(o, p->off, p->n * sizeof(*o));
	munmap(p->buf, p->mapped);
	p->buf = b;
	p->cap = cap;
	p->off = o;
	p->ncap = ncap;
	p->mapped = 0;
	return 0;
}

int xtcam_rpack_add(struct xtcam_rpack *p, const struct xtcam_rule *r)
{
	__u64 w[NWORDS], bits = 1;
	size_t i, k = 0;

	if (p->base)
		return -EINVAL;
	memcpy(w, r, sizeof(w));
	for (i = 1; i < NWORDS; i++)
		if (w[i])
			bits |= 1ull << i;
	if (p->mapped && (p->n == p->ncap || p->cap - p->len < sizeof(w) + 8) && unmap_pack(p))
		return -ENOMEM;
	if (p->n == p->ncap) {
		size_t c = p->ncap ? 2 * p->ncap : 4096;
		size_t *o = realloc(p->off, c * sizeof(*o));

		if (!o)
			return -ENOMEM;
		p->off = o;
		p->ncap = c;
	}
	if (p->cap - p->len < sizeof(w) + 8) {
		size_t c = p->cap ? 2 * p->cap : 1 << 20;
		unsigned char *b = realloc(p->buf, c);

		if (!b)
			return -ENOMEM;
		p->buf = b;
		p->cap = c;
	}
	p->off[p->n++] = p->len;
	memcpy(p->buf + p->len, &bits, 8);
	for (i = 0; i < NWORDS; i++)
		if (bits & (1ull << i))
			memcpy(p->buf + p->len + 8 * ++k, &w[i], 8);
	p->len += 8 * (k + 1);
	if (r->handle) {
		p->nhandles++;
		if (r->handle > p->max_handle)
			p->max_handle = r->handle;
	}
	return 0;
}

/* b's bytes moved after a's as pages, at a huge page's boundary (*at): no
 * copy; how many bytes of b's mapping went, 0 for none */
static size_t move_pages(struct xtcam_rpack *a, struct xtcam_rpack *b, size_t *at)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = round_up(b->len, page);

	*at = round_up(a->len, HUGE_PAGE);
	if (!a->mapped || !b->mapped || !len || a->cap < *at || a->cap - *at < len ||
	    a->ncap - a->n < b->n)
		return 0;
	if (mremap(b->buf, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, a->buf + *at) == MAP_FAILED) {
		/* the kernel may have unmapped the target before failing: the
		 * range is a's room, put back before anything is copied there
		 * (or else a's room ends where it starts) */
		if (mmap(a->buf + *at, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
			a->cap = *at;
		return 0;
	}
	return len;
}

int xtcam_rpack_append(struct xtcam_rpack *a, struct xtcam_rpack *b)
{
	size_t i, at, moved;

	if (a->base || b->base)
		return -EINVAL;
	moved = move_pages(a, b, &at);
	if (!moved) {
		/* the bytes copied: into a's room, or a's memory grown */
		at = a->len;
		if ((a->cap - a->len < b->len || a->ncap - a->n < b->n) && a->mapped &&
		    unmap_pack(a))
			return -ENOMEM;
		if (a->cap - a->len < b->len) {
			unsigned char *buf = realloc(a->buf, a->len + b->len);

			if (!buf)
				return -ENOMEM;
			a->buf = buf;
			a->cap = a->len + b->len;
		}
		if (a->ncap - a->n < b->n) {
			size_t *off = realloc(a->off, (a->n + b->n) * sizeof(*off));

			if (!off)
				return -ENOMEM;
			a->off = off;
			a->ncap = a->n + b->n;
		}
		if (b->len)
			memcpy(a->buf + a->len, b->buf, b->len);
	}
	for (i = 0; i < b->n; i++)
		a->off[a->n + i] = at + b->off[i];
	a->n += b->n;
	a->len = at + b->len;
	a->nhandles += b->nhandles;
	if (b->max_handle > a->max_handle)
		a->max_handle = b->max_handle;
	if (moved) {
		/* what is left of b's mapping: the rest of its room, its offs
		 * (the range moved is a's now) */
		munmap(b->buf + moved, b->mapped - moved);
		memset(b, 0, sizeof(*b));
		return 0;
	}
	xtcam_rpack_free(b);
	return 0;
}

int xtcam_rpack_seal(struct xtcam_rpack *p)
{
	size_t sz = (p->n ? p->n : 1) * sizeof(struct xtcam_rule);
	void *a;

	if (p->base)
		return 0;
	if (xtcam_rpack_nlive == MAX_LIVE)
		return -ENOSPC;
	/* addresses only: no access, nothing behind them */
	a = mmap(NULL, sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED)
		return -ENOMEM;
	/* no room to grow any more (a mapping's room: untouched pages) */
	if (p->len && !p->mapped) {
		unsigned char *b = realloc(p->buf, p->len);

		if (b) {
			p->buf = b;
			p->cap = p->len;
		}
	}
	p->base = a;
	p->nbase = p->n ? p->n : 1;
	live[xtcam_rpack_nlive++] = p;
	return 0;
}

void xtcam_rpack_free(struct xtcam_rpack *p)
{
	unsigned int i;

	for (i = 0; i < xtcam_rpack_nlive; i++)
		if (live[i] == p) {
			live[i] = live[--xtcam_rpack_nlive];
			break;
		}
	if (p->base)
		munmap(p->base, p->nbase * sizeof(struct xtcam_rule));
	if (p->mapped) {
		munmap(p->buf, p->mapped);
	} else {
		free(p->buf);
		free(p->off);
	}
	memset(p, 0, sizeof(*p));
}

void xtcam_rpack_get(const struct xtcam_rpack *p, size_t i, struct xtcam_rule *out)
{
	const unsigned char *s = p->buf + p->off[i];
	__u64 bits;

	memcpy(&bits, s, 8);
	s += 8;
	memset(out, 0, sizeof(*out));
	for (; bits; bits &= bits - 1, s += 8)
		memcpy((char *)out + 8 * __builtin_ctzll(bits), s, 8);
}

__u32 xtcam_rpack_prio(const struct xtcam_rpack *p, size_t i)
{
	__u32 v;

	memcpy(&v, p->buf + p->off[i] + 8, 4);
	return v;
}

__u32 xtcam_rpack_handle(const struct xtcam_rpack *p, size_t i)
{
	__u32 v;

	memcpy(&v, p->buf + p->off[i] + 12, 4);
	return v;
}

void xtcam_rpack_set_handle(struct xtcam_rpack *p, size_t i, __u32 handle)
{
	memcpy(p->buf + p->off[i] + 12, &handle, 4);
}

/* the pack r is a rule of, and its index */
static const struct xtcam_rpack *owner(const struct xtcam_rule *r, size_t *idx)
{
	unsigned int k;

	for (k = 0; k < xtcam_rpack_nlive; k++) {
		const struct xtcam_rpack *p = live[k];

		if (r >= p->base && r < p->base + p->n) {
			*idx = (size_t)(r - p->base);
			return p;
		}
	}
	return NULL;
}

const struct xtcam_rule *xtcam_rpack_view_slow(const struct xtcam_rule *r, struct xtcam_rule *buf)
{
	size_t i;
	const struct xtcam_rpack *p = owner(r, &i);

	if (!p)
		return r;
	xtcam_rpack_get(p, i, buf);
	return buf;
}

const struct xtcam_rule *xtcam_rpack_head_slow(const struct xtcam_rule *r, struct xtcam_rule *buf)
{
	size_t i;
	const struct xtcam_rpack *p = owner(r, &i);

	if (!p)
		return r;
	buf->prio = xtcam_rpack_prio(p, i);
	buf->handle = xtcam_rpack_handle(p, i);
	return buf;
}

__u32 xtcam_rule_handle_of(const struct xtcam_rule *r)
{
	size_t i;
	const struct xtcam_rpack *p = xtcam_rpack_nlive ? owner(r, &i) : NULL;

	return p ? xtcam_rpack_handle(p, i) : r->handle;
}

__u32 xtcam_rule_prio_of(const struct xtcam_rule *r)
{
	size_t i;
	const struct xtcam_rpack *p = xtcam_rpack_nlive ? owner(r, &i) : NULL;

	return p ? xtcam_rpack_prio(p, i) : r->prio;
}
