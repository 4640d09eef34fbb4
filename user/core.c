// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The control-path core: blocks and their rules, devices, backends and
 * bindings, with the kernel's tcf_block bind/unbind semantics on top of
 * flow_block (see core.h and docs/flow_block.md).
 *
 * A block's rules are kept twice: an array of pointers sorted by rank
 * (prio << 32 | handle) for ordered iteration and binary search, and an
 * open-addressing hash by handle.  A batch of k ops on n rules is checked
 * in O(k), delivered, then committed in place in O(k log n) plus two
 * memmove passes over the array: one that closes the gaps of the removed
 * rules (front to back), one that opens gaps for the new ones (back to
 * front).  Everything a commit needs is allocated before the batch is
 * delivered, so once the callbacks have accepted it the commit cannot fail.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "xtcam/core.h"
#include "alloc.h"
#include "rpack.h"

struct xtcam_rule_slot {
	__u32 handle;                   /* 0: empty */
	struct xtcam_rule *rule;
};

struct core_net {
	struct xtcam_net id;            /* handed out as the namespace's object */
	struct list_head node;
};

struct core_backend {
	struct xtcam_backend *be;
	struct list_head node;
};

struct xtcam_core {
	struct list_head blocks;
	struct list_head devs;
	struct list_head nets;
	struct list_head backends;
};

/* --- messages ----------------------------------------------------------- */

static void vseterr(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (buf && len)
		vsnprintf(buf, len, fmt, ap);
}

static void seterr(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vseterr(buf, len, fmt, ap);
	va_end(ap);
}

/* Public entry points accept a NULL errmsg; callbacks always get a buffer. */
#define ERRBUF(buf, len)						\
	char errbuf_[XTCAM_ERRMSG_MAX];					\
	if (!(buf) || !(len)) {						\
		(buf) = errbuf_;					\
		(len) = sizeof(errbuf_);				\
	}								\
	(buf)[0] = '\0'

void xtcam_rules_errmsg(struct xtcam_rules_offload *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vseterr(o->errmsg, o->errmsg_len, fmt, ap);
	va_end(ap);
}

/* --- the index by handle ------------------------------------------------ */

static size_t slot_home(__u32 handle, size_t mask)
{
	__u32 h = handle;

	/* murmur3's 32-bit finaliser: sequential handles spread out */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h & mask;
}

/* The slot holding `handle`, or the empty slot where it would go. */
static struct xtcam_rule_slot *htab_slot(const struct xtcam_rule_htab *t,
					 __u32 handle)
{
	size_t mask = t->nslots - 1, i = slot_home(handle, mask);

	while (t->slots[i].handle && t->slots[i].handle != handle)
		i = (i + 1) & mask;
	return &t->slots[i];
}

/* Make room for `count` entries at a load factor of at most 1/2. */
static int htab_reserve(struct xtcam_rule_htab *t, size_t count)
{
	struct xtcam_rule_htab n = { 0 };
	size_t want = 16, i;

	while (want / 2 < count) {
		if (want > SIZE_MAX / 4)
			return -ENOMEM;
		want *= 2;
	}
	if (want <= t->nslots)
		return 0;
	n.slots = xtcam_calloc(want, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	n.nslots = want;
	for (i = 0; i < t->nslots; i++)
		if (t->slots[i].handle)
			*htab_slot(&n, t->slots[i].handle) = t->slots[i];
	n.count = t->count;
	free(t->slots);
	*t = n;
	return 0;
}

static struct xtcam_rule *htab_find(const struct xtcam_rule_htab *t,
				    __u32 handle)
{
	struct xtcam_rule_slot *s;

	if (!t->nslots || !handle)
		return NULL;
	s = htab_slot(t, handle);
	return s->handle ? s->rule : NULL;
}

/* Insert or overwrite; room must have been reserved. */
static void htab_set(struct xtcam_rule_htab *t, __u32 handle,
		     struct xtcam_rule *rule)
{
	struct xtcam_rule_slot *s = htab_slot(t, handle);

	if (!s->handle) {
		s->handle = handle;
		t->count++;
	}
	s->rule = rule;
}

/* Remove with backward shift, so that no tombstones build up. */
static void htab_remove(struct xtcam_rule_htab *t, __u32 handle)
{
	size_t mask, i, j, k;
	struct xtcam_rule_slot *s;

	if (!t->nslots)
		return;
	s = htab_slot(t, handle);
	if (!s->handle)
		return;
	mask = t->nslots - 1;
	i = j = (size_t)(s - t->slots);
	for (;;) {
		j = (j + 1) & mask;
		if (!t->slots[j].handle)
			break;
		k = slot_home(t->slots[j].handle, mask);
		/* the entry at j may fill the hole at i unless its home lies
		 * (cyclically) in (i, j] */
		if (j > i ? (k <= i || k > j) : (k <= i && k > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].handle = 0;
	t->slots[i].rule = NULL;
	t->count--;
}

static void htab_free(struct xtcam_rule_htab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* --- rules ---------------------------------------------------------------- */

static int cmp_rank(const void *a, const void *b)
{
	__u64 x = xtcam_rule_rank(*(struct xtcam_rule *const *)a);
	__u64 y = xtcam_rule_rank(*(struct xtcam_rule *const *)b);

	return x < y ? -1 : x > y;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* First position in a[0..n) whose rank is >= rank. */
static size_t lower_bound(struct xtcam_rule *const *a, size_t n, __u64 rank)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (xtcam_rule_rank(a[mid]) < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool xtcam_rule_equal(const struct xtcam_rule *a, const struct xtcam_rule *b)
{
	return a->prio == b->prio && a->handle == b->handle &&
	       a->keywords == b->keywords &&
	       !memcmp(&a->value, &b->value, sizeof(a->value)) &&
	       !memcmp(&a->mask, &b->mask, sizeof(a->mask)) &&
	       a->sport_lo == b->sport_lo && a->sport_hi == b->sport_hi &&
	       a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi &&
	       a->action.type == b->action.type &&
	       a->action.cpu == b->action.cpu &&
	       !strncmp(a->action.dev, b->action.dev, sizeof(a->action.dev)) &&
	       !strncmp(a->action.netns, b->action.netns,
			sizeof(a->action.netns));
}

size_t xtcam_block_rule_count(const struct xtcam_block *b)
{
	return b->nrules;
}

const struct xtcam_rule *xtcam_block_rule_at(const struct xtcam_block *b,
					     size_t i)
{
	return i < b->nrules ? b->rules[i] : NULL;
}

const struct xtcam_rule *xtcam_block_rule_find(const struct xtcam_block *b,
					       __u32 handle)
{
	return htab_find(&b->by_handle, handle);
}

/* A rule with its rank at hand: sorting these touches no rule. */
struct ranked {
	__u64 rank;
	struct xtcam_rule *rule;
};

static int cmp_ranked(const void *a, const void *b)
{
	__u64 x = ((const struct ranked *)a)->rank;
	__u64 y = ((const struct ranked *)b)->rank;

	return x < y ? -1 : x > y;
}

/*
 * A batch on its way in: what the callbacks get, its inverse, and all the
 * memory the commit needs.
 */
struct batch {
	size_t n;
	struct xtcam_rule_op *ops;      /* as delivered */
	struct xtcam_rule_op *inv;      /* the inverse, last op first */
	struct ranked *fresh;           /* our copies of the new rules */
	size_t nfresh;
	size_t *gone_pos;               /* old array positions going away */
	size_t ngone;
	struct xtcam_rule **found;      /* remote block: the rules it replaces */
	size_t nfound;
	struct xtcam_rule **grown;      /* a bigger sorted array, if needed */
	size_t grown_cap;
	size_t nnext;                   /* rules after the commit */
};

static void batch_free(struct batch *bt)
{
	for (size_t i = 0; i < bt->nfresh; i++)
		free(bt->fresh[i].rule);
	for (size_t i = 0; i < bt->nfound; i++)
		free(bt->found[i]);
	free(bt->found);
	free(bt->fresh);
	free(bt->gone_pos);
	free(bt->grown);
	free(bt->ops);
	free(bt->inv);
	memset(bt, 0, sizeof(*bt));
}

static const char *cmd_name(enum xtcam_rule_cmd cmd)
{
	switch (cmd) {
	case XTCAM_RULE_ADD:
		return "add";
	case XTCAM_RULE_DEL:
		return "del";
	case XTCAM_RULE_REPLACE:
		return "replace";
	}
	return "?";
}

/* A remote block's rule with this handle, as a copy (*out NULL: none). */
static int source_find(struct xtcam_block *b, __u32 handle, struct xtcam_rule **out,
		       char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule *r = xtcam_malloc(sizeof(*r));
	int err;

	*out = NULL;
	if (!r) {
		seterr(errmsg, errmsg_len, "block %s: out of memory", b->spec.name);
		return -ENOMEM;
	}
	err = b->src.find(b->src.priv, handle, r);
	if (err) {
		free(r);
		if (err == -ENOENT)
			return 0;
		seterr(errmsg, errmsg_len, "block %s: handle %u: cannot read it: %s",
		       b->spec.name, handle, strerror(-err));
		return err;
	}
	*out = r;
	return 0;
}

/* Check the batch and allocate everything; on error nothing is kept. */
static int batch_prepare(struct xtcam_block *b, const struct xtcam_rule_op *in,
			 size_t n, bool inverse, bool known, struct batch *bt,
			 char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule_htab seen = { 0 };
	size_t i, nadd = 0, ngone = 0;
	/* a remote block: handles above this one are free without asking */
	__u32 above = b->remote && b->src.free_above ? b->src.free_above(b->src.priv) : UINT32_MAX;
	int err;

	memset(bt, 0, sizeof(*bt));
	bt->n = n;
	bt->ops = xtcam_calloc(n, sizeof(*bt->ops));
	if (b->remote)
		bt->found = xtcam_calloc(n, sizeof(*bt->found));
	if (!bt->ops || (b->remote && !bt->found) || htab_reserve(&seen, n)) {
		err = -ENOMEM;
		goto nomem;
	}

	for (i = 0; i < n; i++) {
		const struct xtcam_rule_op *op = &in[i];
		const struct xtcam_rule *r, *rv;
		struct xtcam_rule *have, rbuf;
		struct xtcam_rule_slot *s;

		switch (op->cmd) {
		case XTCAM_RULE_ADD:
		case XTCAM_RULE_REPLACE:
			r = op->rule;
			rv = xtcam_rule_head(r, &rbuf);     /* prio, handle */
			if (!r) {
				seterr(errmsg, errmsg_len, "block %s: %s without a rule",
				       b->spec.name, cmd_name(op->cmd));
				err = -EINVAL;
				goto out;
			}
			if (rv->prio < 1 || rv->prio > 65535) {
				seterr(errmsg, errmsg_len,
				       "block %s: handle %u: prio %u is not in 1..65535",
				       b->spec.name, rv->handle, rv->prio);
				err = -EINVAL;
				goto out;
			}
			break;
		case XTCAM_RULE_DEL:
			r = op->old ? op->old : op->rule;
			rv = xtcam_rule_head(r, &rbuf);     /* prio, handle */
			if (!r) {
				seterr(errmsg, errmsg_len, "block %s: del without a rule",
				       b->spec.name);
				err = -EINVAL;
				goto out;
			}
			break;
		default:
			seterr(errmsg, errmsg_len, "block %s: unknown rule command %d",
			       b->spec.name, (int)op->cmd);
			err = -EINVAL;
			goto out;
		}
		if (!rv->handle) {
			seterr(errmsg, errmsg_len, "block %s: handle 0 is not valid",
			       b->spec.name);
			err = -EINVAL;
			goto out;
		}
		s = htab_slot(&seen, rv->handle);
		if (s->handle) {
			seterr(errmsg, errmsg_len,
			       "block %s: handle %u is named twice in one change",
			       b->spec.name, rv->handle);
			err = -EINVAL;
			goto out;
		}
		s->handle = rv->handle;
		seen.count++;

		if (b->remote && op->cmd == XTCAM_RULE_ADD && rv->handle > above) {
			have = NULL;
		} else if (b->remote && known) {
			/* the caller read the source for it: what it found */
			have = (struct xtcam_rule *)op->old;
		} else if (b->remote) {
			err = source_find(b, rv->handle, &have, errmsg, errmsg_len);
			if (err)
				goto out;
			if (have)
				bt->found[bt->nfound++] = have;
		} else {
			have = htab_find(&b->by_handle, rv->handle);
		}
		if (op->cmd == XTCAM_RULE_ADD && have) {
			seterr(errmsg, errmsg_len,
			       "block %s: a rule with handle %u exists",
			       b->spec.name, rv->handle);
			err = -EEXIST;
			goto out;
		}
		if (op->cmd != XTCAM_RULE_ADD && !have) {
			seterr(errmsg, errmsg_len,
			       "block %s: no rule with handle %u",
			       b->spec.name, rv->handle);
			err = -ENOENT;
			goto out;
		}
		bt->ops[i].cmd = op->cmd;
		bt->ops[i].rule = op->cmd == XTCAM_RULE_DEL ? NULL : r;
		bt->ops[i].old = have;
		nadd += op->cmd != XTCAM_RULE_DEL;
		ngone += op->cmd != XTCAM_RULE_ADD;
	}
	htab_free(&seen);

	bt->nnext = b->nrules - ngone + nadd;
	/* a remote block keeps nothing: the callbacks see the caller's rules */
	bt->fresh = xtcam_calloc(b->remote ? 0 : nadd, sizeof(*bt->fresh));
	bt->gone_pos = xtcam_calloc(b->remote ? 0 : ngone, sizeof(*bt->gone_pos));
	if (!b->remote && bt->nnext > b->rules_cap) {
		bt->grown_cap = b->rules_cap * 2 > bt->nnext ? b->rules_cap * 2
							     : bt->nnext;
		bt->grown = xtcam_calloc(bt->grown_cap, sizeof(*bt->grown));
		if (!bt->grown)
			goto nomem;
	}
	if (inverse)
		bt->inv = xtcam_calloc(n, sizeof(*bt->inv));
	if (!bt->fresh || !bt->gone_pos ||
	    (inverse && !bt->inv))
		goto nomem;
	/* ADDs may come before DELs at commit: room for both */
	if (!b->remote && htab_reserve(&b->by_handle, b->nrules + nadd))
		goto nomem;

	for (i = 0; i < n; i++) {
		struct xtcam_rule_op *op = &bt->ops[i];

		if (op->cmd != XTCAM_RULE_DEL && !b->remote) {
			struct xtcam_rule *copy = xtcam_malloc(sizeof(*copy));

			if (!copy)
				goto nomem;
			const struct xtcam_rule *v = xtcam_rule_view(op->rule, copy);

			if (v != copy)
				*copy = *v;
			bt->fresh[bt->nfresh].rank = xtcam_rule_rank(copy);
			bt->fresh[bt->nfresh++].rule = copy;
			op->rule = copy;
		}
		if (op->cmd != XTCAM_RULE_ADD && !b->remote)
			bt->gone_pos[bt->ngone++] =
				lower_bound(b->rules, b->nrules,
					    xtcam_rule_rank(op->old));
	}
	if (inverse) {
		for (i = 0; i < n; i++) {
			const struct xtcam_rule_op *op = &bt->ops[i];
			struct xtcam_rule_op *iv = &bt->inv[n - 1 - i];

			switch (op->cmd) {
			case XTCAM_RULE_ADD:
				*iv = (struct xtcam_rule_op){ XTCAM_RULE_DEL, NULL,
							      op->rule };
				break;
			case XTCAM_RULE_DEL:
				*iv = (struct xtcam_rule_op){ XTCAM_RULE_ADD,
							      op->old, NULL };
				break;
			case XTCAM_RULE_REPLACE:
				*iv = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE,
							      op->old, op->rule };
				break;
			}
		}
	}
	return 0;

nomem:
	err = -ENOMEM;
	seterr(errmsg, errmsg_len, "block %s: out of memory", b->spec.name);
out:
	htab_free(&seen);
	batch_free(bt);
	return err;
}

/* Put the prepared batch into the block.  Cannot fail. */
static void batch_commit(struct xtcam_block *b, struct batch *bt)
{
	struct xtcam_rule **a;
	size_t n = b->nrules, w, r, d, j, in, out, k;

	if (b->remote)
		return;         /* the source's owner stores the change */
	if (bt->grown) {
		if (n)
			memcpy(bt->grown, b->rules, n * sizeof(*b->rules));
		free(b->rules);
		b->rules = bt->grown;
		b->rules_cap = bt->grown_cap;
		bt->grown = NULL;
	}
	a = b->rules;

	/* close the gaps of the rules that go, front to back */
	qsort(bt->gone_pos, bt->ngone, sizeof(*bt->gone_pos), cmp_size);
	w = bt->ngone ? bt->gone_pos[0] : n;
	for (d = 0; d < bt->ngone; d++) {
		size_t end = d + 1 < bt->ngone ? bt->gone_pos[d + 1] : n;

		r = bt->gone_pos[d] + 1;
		memmove(a + w, a + r, (end - r) * sizeof(*a));
		w += end - r;
	}
	n -= bt->ngone;

	/* open gaps for the new rules, back to front: each goes before the
	 * first rule that ranks after it */
	qsort(bt->fresh, bt->nfresh, sizeof(*bt->fresh), cmp_ranked);
	in = n;
	out = n + bt->nfresh;
	for (j = bt->nfresh; j > 0; j--) {
		size_t p = lower_bound(a, in, bt->fresh[j - 1].rank);

		memmove(a + out - (in - p), a + p, (in - p) * sizeof(*a));
		out -= in - p;
		in = p;
		a[--out] = bt->fresh[j - 1].rule;
	}
	b->nrules = n + bt->nfresh;

	for (k = 0; k < bt->n; k++) {
		const struct xtcam_rule_op *op = &bt->ops[k];

		switch (op->cmd) {
		case XTCAM_RULE_DEL:
			htab_remove(&b->by_handle, op->old->handle);
			free((void *)op->old);
			break;
		case XTCAM_RULE_REPLACE:
			free((void *)op->old);
			/* fall through */
		case XTCAM_RULE_ADD:
			htab_set(&b->by_handle, op->rule->handle,
				 (struct xtcam_rule *)op->rule);
			break;
		}
	}

	if (!b->nrules) {       /* flushed: give the array back */
		free(b->rules);
		b->rules = NULL;
		b->rules_cap = 0;
	}
	bt->nfresh = 0;         /* the block owns the copies now */
}

static int call_rules_as(struct flow_block_cb *cb, struct xtcam_block *b,
			 const struct xtcam_rule_op *ops, size_t n, bool adds_free,
			 char *errmsg, size_t errmsg_len)
{
	struct xtcam_rules_offload o = {
		.block = b,
		.ops = ops,
		.n = n,
		.errmsg = errmsg,
		.errmsg_len = errmsg_len,
		.adds_free = adds_free,
	};

	return cb->cb(XTCAM_SETUP_RULES, &o, cb->cb_priv);
}

static int call_rules(struct flow_block_cb *cb, struct xtcam_block *b,
		      const struct xtcam_rule_op *ops, size_t n,
		      char *errmsg, size_t errmsg_len)
{
	return call_rules_as(cb, b, ops, n, false, errmsg, errmsg_len);
}

static int cb_failed(struct xtcam_block *b, int err, char *errmsg,
		     size_t errmsg_len)
{
	if (err > 0)            /* not an errno: a broken callback */
		err = -EIO;
	if (!errmsg[0])
		seterr(errmsg, errmsg_len, "block %s: a callback refused the change: %s",
		       b->spec.name, strerror(-err));
	return err;
}

/*
 * Send `inv` to the callbacks on `head` before `failed`, the latest first
 * (the inverse of a batch that they applied and `failed` refused).
 */
static void unwind(struct xtcam_block *b, struct list_head *head,
		   struct flow_block_cb *failed,
		   const struct xtcam_rule_op *inv, size_t n)
{
	char scratch[XTCAM_ERRMSG_MAX];
	struct flow_block_cb *cb;

	for (cb = list_prev_entry(failed, list);
	     !list_entry_is_head(cb, head, list);
	     cb = list_prev_entry(cb, list))
		call_rules(cb, b, inv, n, scratch, sizeof(scratch));
}

/* Deliver to every callback on the block, all or nothing. */
static int deliver(struct xtcam_block *b, const struct xtcam_rule_op *ops,
		   const struct xtcam_rule_op *inv, size_t n,
		   char *errmsg, size_t errmsg_len)
{
	struct flow_block_cb *cb;
	int err;

	/* (batch_prepare refused an ADD of a handle the block holds) */
	list_for_each_entry(cb, &b->cb_list, list) {
		errmsg[0] = '\0';
		err = call_rules_as(cb, b, ops, n, true, errmsg, errmsg_len);
		if (err) {
			err = cb_failed(b, err, errmsg, errmsg_len);
			unwind(b, &b->cb_list, cb, inv, n);
			return err;
		}
	}
	return 0;
}

static int rules_apply(struct xtcam_block *b, const struct xtcam_rule_op *ops,
		       size_t n, bool notify, bool known, char *errmsg, size_t errmsg_len)
{
	struct batch bt;
	int err;

	if (!n)
		return 0;
	/* the inverse undoes the callbacks before one that refuses: with one
	 * callback (or none) there is nothing to undo, and no need for it */
	err = batch_prepare(b, ops, n, notify && !list_empty(&b->cb_list) &&
			    !list_is_singular(&b->cb_list), known, &bt, errmsg, errmsg_len);
	if (err)
		return err;
	if (notify) {
		err = deliver(b, bt.ops, bt.inv, n, errmsg, errmsg_len);
		if (err) {
			batch_free(&bt);
			return err;
		}
	}
	batch_commit(b, &bt);
	batch_free(&bt);
	return 0;
}

int xtcam_block_rules_apply(struct xtcam_block *b,
			    const struct xtcam_rule_op *ops, size_t n,
			    char *errmsg, size_t errmsg_len)
{
	ERRBUF(errmsg, errmsg_len);
	if (!b || (n && !ops))
		return -EINVAL;
	return rules_apply(b, ops, n, true, false, errmsg, errmsg_len);
}

int xtcam_block_rules_apply_known(struct xtcam_block *b,
				  const struct xtcam_rule_op *ops, size_t n,
				  char *errmsg, size_t errmsg_len)
{
	ERRBUF(errmsg, errmsg_len);
	if (!b || (n && !ops))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (ops[i].cmd != XTCAM_RULE_ADD &&
		    (!ops[i].old || (ops[i].rule && ops[i].rule->handle != ops[i].old->handle))) {
			seterr(errmsg, errmsg_len, "block %s: op %zu: %s without the rule it changes",
			       b->spec.name, i + 1, cmd_name(ops[i].cmd));
			return -EINVAL;
		}
	return rules_apply(b, ops, n, true, true, errmsg, errmsg_len);
}

int xtcam_block_rule_add(struct xtcam_block *b, const struct xtcam_rule *r,
			 char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule_op op = { XTCAM_RULE_ADD, r, NULL };

	return xtcam_block_rules_apply(b, &op, 1, errmsg, errmsg_len);
}

int xtcam_block_rule_replace(struct xtcam_block *b,
			     const struct xtcam_rule *r,
			     char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule_op op = { XTCAM_RULE_REPLACE, r, NULL };

	return xtcam_block_rules_apply(b, &op, 1, errmsg, errmsg_len);
}

int xtcam_block_rule_del(struct xtcam_block *b, __u32 handle,
			 char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule key;
	struct xtcam_rule_op op = { XTCAM_RULE_DEL, NULL, &key };

	memset(&key, 0, sizeof(key));
	key.handle = handle;
	return xtcam_block_rules_apply(b, &op, 1, errmsg, errmsg_len);
}

int xtcam_block_rules_set(struct xtcam_block *b,
			  const struct xtcam_rule *rules, size_t n,
			  char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule_htab want = { 0 };
	struct xtcam_rule_op *ops = NULL;
	struct xtcam_rule **sorted = NULL;
	size_t i, k = 0;
	int err;

	ERRBUF(errmsg, errmsg_len);
	if (!b || (n && !rules))
		return -EINVAL;
	err = xtcam_block_rules_fetch(b, errmsg, errmsg_len);
	if (err)
		return err;

	if (htab_reserve(&want, n))
		goto nomem;
	for (i = 0; i < n; i++) {
		struct xtcam_rule_slot *s;

		if (!rules[i].handle) {
			seterr(errmsg, errmsg_len, "block %s: handle 0 is not valid",
			       b->spec.name);
			err = -EINVAL;
			goto out;
		}
		s = htab_slot(&want, rules[i].handle);
		if (s->handle) {
			seterr(errmsg, errmsg_len,
			       "block %s: handle %u is named twice in one change",
			       b->spec.name, rules[i].handle);
			err = -EINVAL;
			goto out;
		}
		s->handle = rules[i].handle;
		s->rule = (struct xtcam_rule *)&rules[i];
		want.count++;
	}

	ops = xtcam_calloc(n + b->nrules, sizeof(*ops));
	sorted = xtcam_calloc(n, sizeof(*sorted));
	if (!ops || !sorted)
		goto nomem;
	for (i = 0; i < b->nrules; i++)
		if (!htab_find(&want, b->rules[i]->handle))
			ops[k++] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, NULL,
							   b->rules[i] };
	for (i = 0; i < n; i++)
		sorted[i] = (struct xtcam_rule *)&rules[i];
	qsort(sorted, n, sizeof(*sorted), cmp_rank);
	for (i = 0; i < n; i++) {
		const struct xtcam_rule *have =
			htab_find(&b->by_handle, sorted[i]->handle);

		if (have && !xtcam_rule_equal(have, sorted[i]))
			ops[k++] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE,
							   sorted[i], NULL };
	}
	for (i = 0; i < n; i++)
		if (!htab_find(&b->by_handle, sorted[i]->handle))
			ops[k++] = (struct xtcam_rule_op){ XTCAM_RULE_ADD,
							   sorted[i], NULL };
	err = rules_apply(b, ops, k, true, false, errmsg, errmsg_len);
	goto out;

nomem:
	err = -ENOMEM;
	seterr(errmsg, errmsg_len, "block %s: out of memory", b->spec.name);
out:
	htab_free(&want);
	free(ops);
	free(sorted);
	return err;
}

int xtcam_block_source_set(struct xtcam_block *b, const struct xtcam_rule_source *src)
{
	if (!b || !src || !src->find || !src->fetch)
		return -EINVAL;
	if (b->nrules || !list_empty(&b->cb_list))
		return -EBUSY;
	b->src = *src;
	b->remote = true;
	return 0;
}

int xtcam_block_rules_fetch(struct xtcam_block *b, char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule_op *ops = NULL;
	struct xtcam_rule *rules = NULL;
	size_t n = 0;
	int err;

	ERRBUF(errmsg, errmsg_len);
	if (!b)
		return -EINVAL;
	if (!b->remote)
		return 0;
	err = b->src.fetch(b->src.priv, &rules, &n);
	if (err) {
		seterr(errmsg, errmsg_len, "block %s: cannot read its rules: %s", b->spec.name,
		       strerror(-err));
		return err;
	}
	if (n)
		ops = xtcam_calloc(n, sizeof(*ops));
	if (n && !ops) {
		free(rules);
		seterr(errmsg, errmsg_len, "block %s: out of memory", b->spec.name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[i], NULL };
	b->remote = false;
	err = rules_apply(b, ops, n, false, false, errmsg, errmsg_len);
	if (err)
		b->remote = true;
	free(ops);
	free(rules);
	return err;
}

int xtcam_block_rules_load(struct xtcam_block *b,
			   const struct xtcam_rule *rules, size_t n,
			   char *errmsg, size_t errmsg_len)
{
	struct xtcam_rule_op *ops;
	int err;

	ERRBUF(errmsg, errmsg_len);
	if (!b || (n && !rules))
		return -EINVAL;
	if (!list_empty(&b->cb_list)) {
		seterr(errmsg, errmsg_len,
		       "block %s: bound, rules cannot be loaded behind its callbacks",
		       b->spec.name);
		return -EBUSY;
	}
	if (!n)
		return 0;
	err = xtcam_block_rules_fetch(b, errmsg, errmsg_len);
	if (err)
		return err;
	ops = xtcam_calloc(n, sizeof(*ops));
	if (!ops) {
		seterr(errmsg, errmsg_len, "block %s: out of memory", b->spec.name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[i], NULL };
	err = rules_apply(b, ops, n, false, false, errmsg, errmsg_len);
	free(ops);
	return err;
}

/* --- core, namespaces, devices, backends ------------------------------- */

struct xtcam_core *xtcam_core_new(void)
{
	struct xtcam_core *core = xtcam_calloc(1, sizeof(*core));

	if (!core)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&core->blocks);
	INIT_LIST_HEAD(&core->devs);
	INIT_LIST_HEAD(&core->nets);
	INIT_LIST_HEAD(&core->backends);
	return core;
}

int xtcam_net_from_path(const char *path, struct xtcam_net *out)
{
	struct stat st;

	if (!path || !out)
		return -EINVAL;
	if (stat(path, &st))
		return -errno;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return 0;
}

static struct xtcam_net *net_find(struct xtcam_core *core,
				  const struct xtcam_net *id)
{
	struct core_net *cn;

	list_for_each_entry(cn, &core->nets, node)
		if (cn->id.dev == id->dev && cn->id.ino == id->ino)
			return &cn->id;
	return NULL;
}

struct xtcam_net *xtcam_core_net_get(struct xtcam_core *core,
				     const struct xtcam_net *id)
{
	struct xtcam_net *net;
	struct core_net *cn;

	if (!core || !id)
		return ERR_PTR(-EINVAL);
	net = net_find(core, id);
	if (net)
		return net;
	cn = xtcam_calloc(1, sizeof(*cn));
	if (!cn)
		return ERR_PTR(-ENOMEM);
	cn->id = *id;
	list_add_tail(&cn->node, &core->nets);
	return &cn->id;
}

struct xtcam_dev *xtcam_core_dev_find(struct xtcam_core *core,
				      const struct xtcam_net *net,
				      __u32 ifindex)
{
	struct xtcam_net *n;
	struct xtcam_dev *dev;

	if (!core || !net)
		return NULL;
	n = net_find(core, net);
	if (!n)
		return NULL;
	list_for_each_entry(dev, &core->devs, node)
		if (dev->net == n && dev->ifindex == ifindex)
			return dev;
	return NULL;
}

struct xtcam_dev *xtcam_core_dev_get(struct xtcam_core *core,
				     const struct xtcam_net *net,
				     __u32 ifindex)
{
	struct xtcam_dev *dev;
	struct xtcam_net *n;

	if (!core || !net || !ifindex)
		return ERR_PTR(-EINVAL);
	dev = xtcam_core_dev_find(core, net, ifindex);
	if (dev)
		return dev;
	dev = xtcam_calloc(1, sizeof(*dev));
	if (!dev)
		return ERR_PTR(-ENOMEM);
	n = xtcam_core_net_get(core, net);
	if (IS_ERR(n)) {
		free(dev);
		return ERR_CAST(n);
	}
	dev->core = core;
	dev->net = n;
	dev->ifindex = ifindex;
	list_add_tail(&dev->node, &core->devs);
	return dev;
}

int xtcam_core_backend_add(struct xtcam_core *core, struct xtcam_backend *be)
{
	struct core_backend *cb;

	if (!core || !be || !be->name || !be->name[0] || !be->setup)
		return -EINVAL;
	if (xtcam_core_backend_find(core, be->name))
		return -EEXIST;
	cb = xtcam_calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	cb->be = be;
	list_add_tail(&cb->node, &core->backends);
	return 0;
}

struct xtcam_backend *xtcam_core_backend_find(struct xtcam_core *core,
					      const char *name)
{
	struct core_backend *cb;

	if (!core || !name)
		return NULL;
	list_for_each_entry(cb, &core->backends, node)
		if (!strcmp(cb->be->name, name))
			return cb->be;
	return NULL;
}

/* --- blocks ------------------------------------------------------------ */

bool xtcam_block_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0] || name[0] == '-' || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (i >= XTCAM_NAME_MAX - 1)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.'))
			return false;
	}
	return true;
}

struct xtcam_block *xtcam_block_find(struct xtcam_core *core,
				     const char *name)
{
	struct xtcam_block *b;

	if (!core || !name)
		return NULL;
	list_for_each_entry(b, &core->blocks, node)
		if (!strcmp(b->spec.name, name))
			return b;
	return NULL;
}

struct xtcam_block *xtcam_block_add(struct xtcam_core *core,
				    const struct xtcam_block_spec *spec)
{
	struct xtcam_block *b;

	if (!core || !spec || !memchr(spec->name, '\0', sizeof(spec->name)) ||
	    !xtcam_block_name_valid(spec->name) ||
	    spec->capacity > XTCAM_MAX_CAPACITY ||
	    spec->dflt.type >= XTCAM_ACT_MAX)
		return ERR_PTR(-EINVAL);
	if (xtcam_block_find(core, spec->name))
		return ERR_PTR(-EEXIST);
	b = xtcam_calloc(1, sizeof(*b));
	if (!b)
		return ERR_PTR(-ENOMEM);
	b->core = core;
	b->spec = *spec;
	if (!b->spec.capacity)
		b->spec.capacity = XTCAM_DEFAULT_CAPACITY;
	if (b->spec.dflt.type == XTCAM_ACT_NONE)
		b->spec.dflt.type = XTCAM_ACT_PASS;
	INIT_LIST_HEAD(&b->cb_list);
	INIT_LIST_HEAD(&b->bindings);
	list_add_tail(&b->node, &core->blocks);
	return b;
}

/* Take a callback off every list and free it (release runs). */
static void cb_drop(struct flow_block_cb *cb)
{
	list_del(&cb->list);
	list_del(&cb->driver_list);
	flow_block_cb_free(cb);
}

static void block_destroy(struct xtcam_block *b)
{
	struct flow_block_cb *cb, *tmp;

	list_for_each_entry_safe(cb, tmp, &b->cb_list, list)
		cb_drop(cb);
	for (size_t i = 0; i < b->nrules; i++)
		free(b->rules[i]);
	free(b->rules);
	htab_free(&b->by_handle);
	list_del(&b->node);
	free(b);
}

int xtcam_block_del(struct xtcam_core *core, const char *name)
{
	struct xtcam_block *b = xtcam_block_find(core, name);

	if (!b)
		return -ENOENT;
	if (b->nbindings || !list_empty(&b->cb_list))
		return -EBUSY;
	block_destroy(b);
	return 0;
}

/* --- bindings ---------------------------------------------------------- */

/* Every rule of the block, in rank order, as `cmd` (ADD or DEL). */
static struct xtcam_rule_op *replay_ops(struct xtcam_block *b,
					enum xtcam_rule_cmd cmd)
{
	struct xtcam_rule_op *ops = xtcam_calloc(b->nrules, sizeof(*ops));

	if (!ops)
		return NULL;
	for (size_t i = 0; i < b->nrules; i++) {
		ops[i].cmd = cmd;
		if (cmd == XTCAM_RULE_ADD)
			ops[i].rule = b->rules[i];
		else
			ops[i].old = b->rules[i];
	}
	return ops;
}

/* Replay the removal of every rule to `cb` (errors cannot stop it). */
static void replay_del(struct xtcam_block *b, struct flow_block_cb *cb,
		       const struct xtcam_rule_op *ops)
{
	char scratch[XTCAM_ERRMSG_MAX];
	struct xtcam_rule_op chunk[64];
	size_t i, k;

	if (ops) {
		call_rules(cb, b, ops, b->nrules, scratch, sizeof(scratch));
		return;
	}
	/* out of memory for one batch: removal in pieces still beats none */
	for (i = 0; i < b->nrules; i += k) {
		for (k = 0; k < 64 && i + k < b->nrules; k++)
			chunk[k] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, NULL,
							   b->rules[i + k] };
		call_rules(cb, b, chunk, k, scratch, sizeof(scratch));
	}
}

/* Unbind: replay removal to each callback on `head` (unless keep, or the
 * callback says its rules go with it), take it off the block and its
 * driver list, free it.  The rules are read only when some callback gets
 * the replay; a failure to read them is returned in *ferr (the callbacks
 * go all the same). */
static void drop_cbs(struct xtcam_block *b, struct list_head *head, bool keep, int *ferr)
{
	struct flow_block_cb *cb, *tmp;
	struct xtcam_rule_op *ops = NULL;
	bool replay = false;

	if (!keep)
		list_for_each_entry(cb, head, list)
			replay |= !cb->no_removal;
	if (replay) {
		int e = xtcam_block_rules_fetch(b, NULL, 0);

		if (e && !*ferr)
			*ferr = e;
	}
	replay = replay && b->nrules;
	if (replay)
		ops = replay_ops(b, XTCAM_RULE_DEL);
	list_for_each_entry_safe(cb, tmp, head, list) {
		if (replay && !cb->no_removal)
			replay_del(b, cb, ops);
		cb_drop(cb);
	}
	free(ops);
}

int xtcam_bind(struct xtcam_core *core, struct xtcam_block *block,
	       struct xtcam_dev *dev, struct xtcam_backend *be,
	       enum flow_block_binder_type binder_type, unsigned int flags,
	       char *errmsg, size_t errmsg_len)
{
	struct flow_block_offload f;
	struct flow_block_cb *cb, *tmp;
	struct xtcam_binding *bd;
	struct xtcam_rule_op *ops = NULL;
	bool restore = flags & XTCAM_BIND_RESTORE;
	int err;

	ERRBUF(errmsg, errmsg_len);
	if (!core || !block || !dev || !be || !be->setup)
		return -EINVAL;
	if (block->core != core || dev->core != core) {
		seterr(errmsg, errmsg_len, "bind: block or device of another core");
		return -EINVAL;
	}
	if (binder_type > FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS ||
	    (flags & ~XTCAM_BIND_RESTORE)) {
		seterr(errmsg, errmsg_len, "bind: bad binder type or flags");
		return -EINVAL;
	}
	if (dev->binding) {
		seterr(errmsg, errmsg_len,
		       "device %u is already bound to block %s",
		       dev->ifindex, dev->binding->block->spec.name);
		return -EBUSY;
	}
	if (!restore) {
		err = xtcam_block_rules_fetch(block, errmsg, errmsg_len);
		if (err)
			return err;
	}
	bd = xtcam_calloc(1, sizeof(*bd));
	if (!bd) {
		seterr(errmsg, errmsg_len, "bind: out of memory");
		return -ENOMEM;
	}

	memset(&f, 0, sizeof(f));
	f.command = FLOW_BLOCK_BIND;
	f.binder_type = binder_type;
	f.block = block;
	f.net = dev->net;
	INIT_LIST_HEAD(&f.cb_list);
	f.errmsg = errmsg;
	f.errmsg_len = errmsg_len;
	f.restore = restore;

	err = be->setup(&f, dev, be->priv);
	if (err) {
		/* a failing setup hands nothing over: only make sure nothing
		 * points at our stack any more */
		list_for_each_entry_safe(cb, tmp, &f.cb_list, list)
			list_del(&cb->list);
		free(bd);
		if (!errmsg[0])
			seterr(errmsg, errmsg_len, "backend %s: bind failed: %s",
			       be->name, strerror(err < 0 ? -err : err));
		return err < 0 ? err : -EIO;
	}

	if (!restore && block->nrules && !list_empty(&f.cb_list)) {
		ops = replay_ops(block, XTCAM_RULE_ADD);
		if (!ops) {
			seterr(errmsg, errmsg_len, "bind: out of memory");
			err = -ENOMEM;
			goto unwind;
		}
		list_for_each_entry(cb, &f.cb_list, list) {
			err = call_rules(cb, block, ops, block->nrules, errmsg,
					 errmsg_len);
			if (err) {
				err = cb_failed(block, err, errmsg, errmsg_len);
				/* the inverse of an ADD replay: a DEL replay */
				for (size_t i = 0; i < block->nrules; i++) {
					ops[i].cmd = XTCAM_RULE_DEL;
					ops[i].old = ops[i].rule;
					ops[i].rule = NULL;
				}
				unwind(block, &f.cb_list, cb, ops, block->nrules);
				goto unwind;
			}
		}
		free(ops);
	}

	list_splice_tail_init(&f.cb_list, &block->cb_list);
	bd->dev = dev;
	bd->block = block;
	bd->backend = be;
	bd->binder_type = binder_type;
	snprintf(bd->mode, sizeof(bd->mode), "%s", be->name);
	list_add_tail(&bd->block_node, &block->bindings);
	block->nbindings++;
	dev->binding = bd;
	return 0;

unwind:
	/* as tcf_block_bind(): what we were handed and could not register is
	 * freed, and taken off the driver list so that it stays consistent */
	free(ops);
	list_for_each_entry_safe(cb, tmp, &f.cb_list, list)
		cb_drop(cb);
	free(bd);
	return err;
}

int xtcam_unbind(struct xtcam_core *core, struct xtcam_dev *dev,
		 unsigned int flags, char *errmsg, size_t errmsg_len)
{
	struct flow_block_offload f;
	struct xtcam_binding *bd;
	struct xtcam_block *block;
	bool keep = flags & XTCAM_UNBIND_KEEP;
	int err, ferr = 0;

	ERRBUF(errmsg, errmsg_len);
	if (!core || !dev)
		return -EINVAL;
	if (dev->core != core || (flags & ~XTCAM_UNBIND_KEEP)) {
		seterr(errmsg, errmsg_len, "unbind: device of another core or bad flags");
		return -EINVAL;
	}
	bd = dev->binding;
	if (!bd) {
		seterr(errmsg, errmsg_len, "device %u is not bound", dev->ifindex);
		return -ENOENT;
	}
	block = bd->block;

	memset(&f, 0, sizeof(f));
	f.command = FLOW_BLOCK_UNBIND;
	f.binder_type = bd->binder_type;
	f.block = block;
	f.net = dev->net;
	INIT_LIST_HEAD(&f.cb_list);
	f.errmsg = errmsg;
	f.errmsg_len = errmsg_len;
	f.keep = keep;

	err = bd->backend->setup(&f, dev, bd->backend->priv);

	/* the binding goes whatever the backend said; the removal replay
	 * reads the rules after the setup, when it knows which callbacks
	 * want it (a failure to read them cannot stop the unbind either) */
	list_del(&bd->block_node);
	block->nbindings--;
	dev->binding = NULL;
	drop_cbs(block, &f.cb_list, keep, &ferr);
	/* a backend that left callbacks behind would leave the block busy
	 * forever: its last binding takes them along */
	if (!block->nbindings)
		drop_cbs(block, &block->cb_list, keep, &ferr);
	if (!err)
		err = ferr;
	free(bd);
	if (err > 0)
		err = -EIO;
	return err;
}

void xtcam_core_free(struct xtcam_core *core)
{
	struct xtcam_block *b, *btmp;
	struct xtcam_dev *dev, *dtmp;
	struct core_net *cn, *ntmp;
	struct core_backend *be, *betmp;

	if (!core)
		return;
	list_for_each_entry(dev, &core->devs, node)
		if (dev->binding)
			xtcam_unbind(core, dev, XTCAM_UNBIND_KEEP, NULL, 0);
	list_for_each_entry_safe(b, btmp, &core->blocks, node)
		block_destroy(b);
	list_for_each_entry_safe(dev, dtmp, &core->devs, node)
		free(dev);
	list_for_each_entry_safe(cn, ntmp, &core->nets, node)
		free(cn);
	list_for_each_entry_safe(be, betmp, &core->backends, node)
		free(be);
	free(core);
}
