/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Packed rules: a big batch (`rule load`) held in a few dozen bytes a rule
 * instead of a struct xtcam_rule's 272, most of which are zeros for the
 * usual rule.  Each rule keeps an address of its own all the same: the
 * pack reserves an address range of n rules with no access and no memory
 * behind it, so that the batch's ops point at "its" rules as they would at
 * an array, and whoever reads a rule through an op reads it through
 * xtcam_rule_view(), which unpacks a packed one into the caller's buffer
 * (any other rule is returned as it is).  A reader that forgets faults at
 * once rather than reading something else.
 */
#ifndef XTCAM_RPACK_H
#define XTCAM_RPACK_H

#include <stddef.h>
#include <stdbool.h>
#include "xtcam/rule.h"

struct xtcam_rpack {
	unsigned char *buf;     /* the packed rules, one after another */
	size_t len, cap;        /* (a joined pack: an untouched gap between its parts) */
	size_t *off;            /* rule i at buf + off[i] */
	size_t n, ncap;
	struct xtcam_rule *base;        /* the rules' addresses (no access) */
	size_t nbase;
	__u32 max_handle;       /* the highest handle of the rules as added */
	size_t nhandles;        /* how many of them had one (not 0); neither
				 * follows xtcam_rpack_set_handle */
	size_t mapped;          /* buf and off in one mapping of this size (0: malloc's) */
};

void xtcam_rpack_init(struct xtcam_rpack *p);
/*
 * Room for up to n rules reserved in address space only (pages are taken
 * as rules are written): adds never move what is there, and an append of
 * one such pack to another moves pages instead of bytes.  p: just
 * initialised.  A pack that outgrows its room goes on in malloc's memory.
 * -ENOMEM: no room (p grows as it would without).
 */
int xtcam_rpack_reserve(struct xtcam_rpack *p, size_t n);
/* append a copy of r; -ENOMEM */
int xtcam_rpack_add(struct xtcam_rpack *p, const struct xtcam_rule *r);
/* b's rules after a's, b freed; -ENOMEM (both as they were) */
int xtcam_rpack_append(struct xtcam_rpack *a, struct xtcam_rpack *b);
/* The rules' addresses, from here until xtcam_rpack_free (no rule added
 * after): xtcam_rpack_rule(p, i).  -ENOMEM, -ENOSPC (too many packs). */
int xtcam_rpack_seal(struct xtcam_rpack *p);
void xtcam_rpack_free(struct xtcam_rpack *p);

static inline struct xtcam_rule *xtcam_rpack_rule(const struct xtcam_rpack *p, size_t i)
{
	return p->base + i;
}

/* rule i unpacked into out */
void xtcam_rpack_get(const struct xtcam_rpack *p, size_t i, struct xtcam_rule *out);
/* rule i's handle, prio; its handle set (in place) */
__u32 xtcam_rpack_handle(const struct xtcam_rpack *p, size_t i);
__u32 xtcam_rpack_prio(const struct xtcam_rpack *p, size_t i);
void xtcam_rpack_set_handle(struct xtcam_rpack *p, size_t i, __u32 handle);

/* The packs sealed and not yet freed (few; sealed and freed by one thread
 * while no other reads rules). */
extern unsigned int xtcam_rpack_nlive;
const struct xtcam_rule *xtcam_rpack_view_slow(const struct xtcam_rule *r, struct xtcam_rule *buf);

/* r itself, or, when it is a packed rule, buf with it unpacked. */
static inline const struct xtcam_rule *xtcam_rule_view(const struct xtcam_rule *r,
						       struct xtcam_rule *buf)
{
	if (__builtin_expect(!xtcam_rpack_nlive, 1) || !r)
		return r;
	return xtcam_rpack_view_slow(r, buf);
}

/* r itself, or buf with only its prio and handle (the rest is not set)
 * when it is a packed rule */
const struct xtcam_rule *xtcam_rpack_head_slow(const struct xtcam_rule *r, struct xtcam_rule *buf);

static inline const struct xtcam_rule *xtcam_rule_head(const struct xtcam_rule *r,
						       struct xtcam_rule *buf)
{
	if (__builtin_expect(!xtcam_rpack_nlive, 1) || !r)
		return r;
	return xtcam_rpack_head_slow(r, buf);
}

/* r's handle and prio, without unpacking the rest */
__u32 xtcam_rule_handle_of(const struct xtcam_rule *r);
__u32 xtcam_rule_prio_of(const struct xtcam_rule *r);

struct xtcam_ctx;
/* xtcam_cmd_rule_load() of the rules of p (sealed by it; handles
 * assigned in it) */
int xtcam_cmd_rule_load_pack(struct xtcam_ctx *c, const char *block, struct xtcam_rpack *p,
			     bool replace, bool check, char *err, size_t errlen);

#endif
