// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * apply: make the blocks a file of `xtcam save` names equal to the file,
 * changing only what differs.
 *
 * First a plan, which changes nothing: per block of the file, whether it
 * is new, has other settings (capacity, default, raw fields: then it is
 * made again, bindings and all) or is there; the rules that differ, by
 * handle, as a batch of rule changes per block (adds, deletes, replaces);
 * the bindings that differ, by block, device and namespace.  Each batch is
 * checked (capacity, actions) before anything changes.  Then, unless only
 * checking: new and remade blocks, the batches (each one atomic change of
 * its block, O(its changes)), unbinds, binds, and with prune the blocks
 * the file does not name.  A rule or a binding that is as the file has it
 * is not touched: its counters and its XDP program stay.
 *
 * The rules of a block that is there are read from the registry one
 * handle of the file at a time (O(rules of the file); all of the block's
 * only when it has rules the file has not, to be deleted), or, when the
 * blocks compared hold most of the registry's rules, from a dump of the
 * registry in batches (rule_diffs()).  XTCAM_TRACE marks "reg-rules"
 * (the reading) and "compare".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "restore_int.h"
#include "state.h"
#include "trace.h"
#include "u64map.h"

enum blk_state { BLK_SAME, BLK_NEW, BLK_REMAKE };

struct ap_block {
	struct rs_block *f;             /* of the file */
	enum blk_state state;
	__u64 *order;                   /* handle << 32 | index of f->rules, sorted */
	/* a block that is there: its rule changes, deletes first, then adds
	 * and replaces in handle order; old holds the registry's rules the
	 * deletes and replaces name */
	struct xtcam_rule_op *ops;
	size_t nops;
	struct xtcam_rule *old;
	size_t nold;
	const struct xtcam_block_rec *rec; /* the registry's, when there */
	bool by_dump, done;             /* rules read by a dump; ops made */
	bool failed;                    /* could not be made */
};

struct ap {
	struct xtcam_ctx *c;
	const struct xtcam_restore *rs;
	const struct xtcam_apply_opts *o;
	struct xtcam_apply_result *res;
	struct ap_block *blocks;
	struct xtcam_block_rec *recs;   /* the registry's blocks */
	size_t nrecs;
	struct xtcam_bind_key *bkeys;   /* the registry's bindings */
	struct xtcam_bind_rec *brecs;
	size_t nbind;
	bool *unbind;                   /* per registry binding */
	bool *bind;                     /* per file binding */
	char *err;
	size_t errlen;
	int first;                      /* the first error */
};

size_t xtcam_restore_nblocks(const struct xtcam_restore *rs)
{
	return rs->nb;
}

const char *xtcam_restore_block(const struct xtcam_restore *rs, size_t i)
{
	return i < rs->nb ? rs->blocks[i].spec.name : NULL;
}

static void say(struct ap *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct ap *a, const char *fmt, ...)
{
	char line[XTCAM_RULE_TEXT_MAX + 2 * XTCAM_STATE_NAME + 64];
	va_list ap;

	a->res->changes++;
	if (!a->o->change)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	a->o->change(a->o->arg, line);
}

/* the first error is the one returned */
static void failed(struct ap *a, int e, const char *msg)
{
	if (a->first)
		return;
	a->first = e;
	xtcam_set_err(a->err, a->errlen, "%s", msg);
}

static const struct xtcam_block_rec *reg_block(struct ap *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nrecs; i++)
		if (!strncmp(a->recs[i].name, name, sizeof(a->recs[i].name)))
			return &a->recs[i];
	return NULL;
}

static struct ap_block *file_block(struct ap *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->rs->nb; i++)
		if (!strcmp(a->rs->blocks[i].spec.name, name))
			return &a->blocks[i];
	return NULL;
}

/* Sort k[0..n) by their upper 32 bits (a handle): an LSD radix sort, a
 * byte a pass, stable; comparison sorts of 100k keys cost more than the
 * rest of an unchanged apply's comparing. */
static int sort_by_handle(__u64 *k, size_t n)
{
	__u64 *tmp = malloc((n + 1) * sizeof(*tmp)), *from = k, *to = tmp, *t;
	size_t count[256], i, b, sum;
	unsigned int shift;

	if (!tmp)
		return -ENOMEM;
	for (shift = 32; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(from[i] >> shift) & 0xff]++;
		for (b = 0, sum = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			to[count[(from[i] >> shift) & 0xff]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	/* four passes: the sorted keys are back in k */
	free(tmp);
	return 0;
}

/* Handles for the rules without one, as `rule load ... replace` gives
 * them (after the highest of the file's), and ab->order: the rules in
 * handle order (the rules stay where they are); a handle twice is an
 * error. */
static int handles(struct ap_block *ab, char *err, size_t errlen)
{
	struct rs_block *f = ab->f;
	__u32 next = 0;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->rules[i].handle > next)
			next = f->rules[i].handle;
	for (i = 0; i < f->n; i++) {
		if (f->rules[i].handle)
			continue;
		if (next == UINT32_MAX) {
			xtcam_set_err(err, errlen, "block %s: no handle left", f->spec.name);
			return -ERANGE;
		}
		f->rules[i].handle = ++next;
	}
	ab->order = malloc((f->n + 1) * sizeof(*ab->order));
	if (!ab->order) {
		xtcam_set_err(err, errlen, "block %s: out of memory", f->spec.name);
		return -ENOMEM;
	}
	for (i = 0; i < f->n; i++)
		ab->order[i] = (__u64)f->rules[i].handle << 32 | i;
	if (sort_by_handle(ab->order, f->n)) {
		xtcam_set_err(err, errlen, "block %s: out of memory", f->spec.name);
		return -ENOMEM;
	}
	for (i = 1; i < f->n; i++)
		if (ab->order[i] >> 32 == ab->order[i - 1] >> 32) {
			xtcam_set_err(err, errlen, "block %s: handle %u given twice", f->spec.name,
				      (__u32)(ab->order[i] >> 32));
			return -EEXIST;
		}
	return 0;
}

/* whether the file has a rule with handle h in block ab */
static bool file_has(const struct ap_block *ab, __u32 h)
{
	size_t lo = 0, hi = ab->f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		__u32 m = (__u32)(ab->order[mid] >> 32);

		if (m == h)
			return true;
		if (m < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void say_rule(struct ap *a, const char *verb, const struct rs_block *f,
		     const struct xtcam_rule *r)
{
	char text[XTCAM_RULE_TEXT_MAX];

	if (!a->o->change) {
		a->res->changes++;
		return;
	}
	if (xtcam_rule_format(r, &f->spec, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "handle %u", r->handle);
	say(a, "rule %s %s %s", verb, f->spec.name, text);
}

/*
 * A block's rule changes as ab->ops, counted and said, from what the
 * registry has of the block: cur[i] is its rule of the file's i-th handle
 * in handle order (NULL: none), del[0..ndel) its rules the file has not.
 * The registry's rules the ops name are copied into ab->old.
 */
static int make_ops(struct ap *a, struct ap_block *ab, const struct xtcam_rule *const *cur,
		    const struct xtcam_rule *const *del, size_t ndel)
{
	const struct rs_block *f = ab->f;
	unsigned char *what = malloc(f->n + 1);   /* 0 same, 1 add, 2 replace */
	size_t i, k, nrep = 0, nadd = 0;

	if (!what) {
		xtcam_set_err(a->err, a->errlen, "block %s: out of memory", f->spec.name);
		return -ENOMEM;
	}
	for (i = 0; i < f->n; i++) {
		what[i] = !cur[i] ? 1 :
			  !xtcam_rule_equal(cur[i], &f->rules[ab->order[i] & UINT32_MAX]) ? 2 : 0;
		nadd += what[i] == 1;
		nrep += what[i] == 2;
	}
	ab->old = malloc((ndel + nrep + 1) * sizeof(*ab->old));
	ab->ops = calloc(ndel + nrep + nadd + 1, sizeof(*ab->ops));
	if (!ab->old || !ab->ops) {
		free(what);
		xtcam_set_err(a->err, a->errlen, "block %s: out of memory", f->spec.name);
		return -ENOMEM;
	}
	ab->nold = ndel + nrep;
	for (i = 0; i < ndel; i++) {
		ab->old[i] = *del[i];
		ab->ops[ab->nops++] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, &ab->old[i],
							      &ab->old[i] };
		say(a, "rule del %s handle %u", f->spec.name, ab->old[i].handle);
	}
	for (i = 0, k = ndel; i < f->n; i++) {
		const struct xtcam_rule *r = &f->rules[ab->order[i] & UINT32_MAX];

		if (what[i] == 1) {
			ab->ops[ab->nops++] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, r, NULL };
			say_rule(a, "add", f, r);
		} else if (what[i] == 2) {
			ab->old[k] = *cur[i];
			ab->ops[ab->nops++] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE, r,
								      &ab->old[k++] };
			say_rule(a, "replace", f, r);
		}
	}
	free(what);
	return 0;
}

/* The registry's rules of a block, one handle of the file at a time; all
 * of the block's only when it has rules the file has not. */
static int diff_by_handle(struct ap *a, struct ap_block *ab)
{
	const struct rs_block *f = ab->f;
	const struct xtcam_block_rec *rec = ab->rec;
	struct xtcam_rule *got = malloc((f->n + 1) * sizeof(*got)), *all = NULL;
	const struct xtcam_rule **cur = calloc(f->n + 1, sizeof(*cur)), **del = NULL;
	size_t i, found = 0, nall = 0, ndel = 0;
	int e = -ENOMEM;

	if (!got || !cur)
		goto fail;
	for (i = 0; i < f->n; i++) {
		e = xtcam_state_rule_get(a->c->st, rec, (__u32)(ab->order[i] >> 32), &got[i]);
		if (e == -ENOENT)
			continue;
		if (e)
			goto fail;
		cur[i] = &got[i];
		found++;
	}
	e = 0;
	if (found != rec->nrules) {
		e = xtcam_state_rules(a->c->st, rec, false, &all, &nall);
		if (e)
			goto fail;
		e = -ENOMEM;
		del = malloc((nall + 1) * sizeof(*del));
		if (!del)
			goto fail;
		e = 0;
		for (i = 0; i < nall; i++)
			if (!file_has(ab, all[i].handle))
				del[ndel++] = &all[i];
	}
	xtcam_trace("reg-rules");
	e = make_ops(a, ab, cur, del, ndel);
	xtcam_trace("compare");
fail:
	if (e && e != -ENOMEM)
		xtcam_set_err(a->err, a->errlen, "block %s: cannot read its rules: %s",
			      f->spec.name, strerror(-e));
	else if (e && !ab->ops)
		xtcam_set_err(a->err, a->errlen, "block %s: out of memory", f->spec.name);
	free(got);
	free(cur);
	free(all);
	free(del);
	return e;
}

/* The blocks that are there whose registry generation is gen, from one
 * dump of that generation's map: each dumped rule is taken by its block
 * (a handle of the file, or one to delete). */
static int diff_by_dump(struct ap *a, __u32 gen)
{
	struct xtcam_rule_key *keys = NULL;
	struct xtcam_rule *rules = NULL;
	size_t n = 0, i, j;
	__u64 **idx = calloc(a->rs->nb + 1, sizeof(*idx));
	size_t *nidx = calloc(a->rs->nb + 1, sizeof(*nidx));
	struct u64map ids;
	int e = idx && nidx ? xtcam_state_rules_dump(a->c->st, gen, &keys, &rules, &n) : -ENOMEM;

	u64map_init(&ids);
	if (e)
		goto out;
	xtcam_trace("reg-rules");
	/* the blocks by id; each rule to its block, as handle << 32 | its
	 * place in the dump */
	for (j = 0; !e && j < a->rs->nb; j++)
		if (a->blocks[j].by_dump)
			e = u64map_put(&ids, a->blocks[j].rec->id, &a->blocks[j]);
	for (i = 0; !e && i < n; i++) {
		struct ap_block *ab = u64map_get(&ids, keys[i].block);

		if (ab && keys[i].gen == gen)
			nidx[ab - a->blocks]++;
	}
	for (j = 0; !e && j < a->rs->nb; j++)
		if (a->blocks[j].by_dump && !(idx[j] = malloc((nidx[j] + 1) * sizeof(**idx))))
			e = -ENOMEM;
	memset(nidx, 0, (a->rs->nb + 1) * sizeof(*nidx));
	for (i = 0; !e && i < n; i++) {
		struct ap_block *ab = u64map_get(&ids, keys[i].block);

		j = ab ? (size_t)(ab - a->blocks) : 0;
		if (ab && keys[i].gen == gen)
			idx[j][nidx[j]++] = (__u64)keys[i].handle << 32 | i;
	}
	for (j = 0; !e && j < a->rs->nb; j++) {
		struct ap_block *ab = &a->blocks[j];
		const struct rs_block *f = ab->f;
		const struct xtcam_rule **cur, **del;
		size_t p = 0, q = 0, ndel = 0;

		if (!idx[j])
			continue;
		cur = calloc(f->n + 1, sizeof(*cur));
		del = malloc((nidx[j] + 1) * sizeof(*del));
		if (!cur || !del || sort_by_handle(idx[j], nidx[j])) {
			free(cur);
			free(del);
			e = -ENOMEM;
			break;
		}
		/* both in handle order: the file's and the block's */
		while (p < f->n || q < nidx[j]) {
			__u32 hf = p < f->n ? (__u32)(ab->order[p] >> 32) : 0;
			__u32 hr = q < nidx[j] ? (__u32)(idx[j][q] >> 32) : 0;

			if (p == f->n || (q < nidx[j] && hr < hf))
				del[ndel++] = &rules[idx[j][q++] & UINT32_MAX];
			else if (q == nidx[j] || hf < hr)
				p++;
			else
				cur[p++] = &rules[idx[j][q++] & UINT32_MAX];
		}
		e = make_ops(a, ab, cur, del, ndel);
		free(cur);
		free(del);
	}
	xtcam_trace("compare");
out:
	if (e && e != -EINVAL && e != -EOPNOTSUPP)
		xtcam_set_err(a->err, a->errlen, "registry: cannot read the rules: %s",
			      strerror(-e));
	for (j = 0; idx && j < a->rs->nb; j++)
		free(idx[j]);
	u64map_free(&ids, NULL);
	free(idx);
	free(nidx);
	free(keys);
	free(rules);
	return e;
}

/*
 * The rule changes of the blocks that are there.  Their rules are read
 * from the registry either by the handles of the file (a lookup each) or,
 * when the blocks compared hold most of the registry's rules, by dumping
 * a generation's map in batches, cheaper per rule but paid for every
 * block's rules (each map holds one generation of every block).
 */
static int rule_diffs(struct ap *a)
{
	size_t i, all = 0, cmp[2] = { 0, 0 };
	__u32 g;
	int e;

	for (i = 0; i < a->nrecs; i++)
		all += a->recs[i].nrules;
	for (i = 0; i < a->rs->nb; i++)
		if (a->blocks[i].state == BLK_SAME)
			cmp[a->blocks[i].rec->rgen & 1] += a->blocks[i].f->n;
	for (g = 0; g < 2; g++) {
		/* a lookup costs about 2.5 times a dumped rule; a dump has a
		 * fixed cost of about 25,000 dumped rules */
		if (5 * cmp[g] <= 2 * all + 50000)
			continue;
		for (i = 0; i < a->rs->nb; i++)
			a->blocks[i].by_dump = a->blocks[i].state == BLK_SAME &&
					       (a->blocks[i].rec->rgen & 1) == g;
		e = diff_by_dump(a, g);
		if (e == -EINVAL || e == -EOPNOTSUPP) {
			/* no batches: by handle */
			for (i = 0; i < a->rs->nb; i++)
				a->blocks[i].by_dump = false;
			continue;
		}
		if (e)
			return e;
		for (i = 0; i < a->rs->nb; i++)
			if (a->blocks[i].by_dump)
				a->blocks[i].done = true;
	}
	for (i = 0; i < a->rs->nb; i++) {
		if (a->blocks[i].state != BLK_SAME || a->blocks[i].done)
			continue;
		e = diff_by_handle(a, &a->blocks[i]);
		if (e)
			return e;
	}
	return 0;
}

static bool same_binding(const struct xtcam_bind_rec *r, const struct xtcam_bind_req *q)
{
	bool egress = r->binder == FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS;

	return !strcmp(r->requested, q->mode ? q->mode : "auto") && egress == q->egress;
}

static bool same_place(const struct xtcam_bind_rec *r, const struct xtcam_bind_req *q)
{
	return !strcmp(r->dev, q->dev) && !strcmp(r->netns, q->netns ? q->netns : "");
}

/* Whether the device of q is there: 1 yes (its namespace and ifindex in
 * id and ifindex), 0 no (why says so), -errno. */
static int dev_there(const struct xtcam_bind_req *q, struct xtcam_net *id, __u32 *ifindex,
		     char *why, size_t len)
{
	const char *ns = q->netns ? q->netns : "";
	char msg[XTCAM_ERRMSG_MAX] = "";
	int e = xtcam_ns_open(ns, NULL, id, msg, sizeof(msg));

	if (e == -ENOENT) {
		snprintf(why, len, "bind %s dev %s netns %s: namespace %s does not exist",
			 q->block, q->dev, ns, ns);
		return 0;
	}
	if (!e)
		e = xtcam_ns_ifindex(ns, q->dev, ifindex, msg, sizeof(msg));
	if (e == -ENODEV) {
		snprintf(why, len, "bind %s dev %s%s%s: device %s does not exist%s%s", q->block,
			 q->dev, ns[0] ? " netns " : "", ns, q->dev, ns[0] ? " in netns " : "", ns);
		return 0;
	}
	if (e)
		snprintf(why, len, "bind %s dev %s: %s", q->block, q->dev,
			 msg[0] ? msg : strerror(-e));
	return e ? e : 1;
}

static void say_bind(struct ap *a, const struct xtcam_bind_req *q)
{
	say(a, "bind %s dev %s%s%s mode %s%s", q->block, q->dev, q->netns && q->netns[0] ?
	    " netns " : "", q->netns ? q->netns : "", q->mode ? q->mode : "auto",
	    q->egress ? " egress" : "");
}

static void say_unbind(struct ap *a, const struct xtcam_bind_rec *r)
{
	say(a, "unbind %s dev %s%s%s", r->block, r->dev, r->netns[0] ? " netns " : "", r->netns);
}

/* The bindings: which of the registry's go, which of the file's come. */
static int bind_plan(struct ap *a)
{
	const struct xtcam_restore *rs = a->rs;
	size_t i, j;

	for (i = 0; i < a->nbind; i++) {
		const struct xtcam_bind_rec *r = &a->brecs[i];
		struct ap_block *ab;

		if (r->state != XTCAM_BIND_ACTIVE)
			continue;
		ab = file_block(a, r->block);
		if (a->o->bindings_for)
			continue;               /* nothing goes */
		if (!ab) {
			/* a block the file does not name: pruned, or left alone */
			a->unbind[i] = a->o->prune;
			continue;
		}
		a->unbind[i] = true;
		if (ab->state == BLK_REMAKE)
			continue;
		for (j = 0; j < rs->nbind; j++) {
			const struct xtcam_bind_req *q = &rs->binds[j].req;

			if (!strcmp(q->block, r->block) && same_place(r, q) && same_binding(r, q)) {
				a->unbind[i] = false;
				break;
			}
		}
	}
	for (j = 0; j < rs->nbind; j++) {
		const struct xtcam_bind_req *q = &rs->binds[j].req;
		struct ap_block *ab = file_block(a, q->block);
		char why[XTCAM_MSG_MAX];
		struct xtcam_net id;
		__u32 ifindex = 0;
		bool kept = false;
		int there;

		if (a->o->bindings_for && strcmp(q->dev, a->o->bindings_for))
			continue;
		if (a->o->bindings_for && ab->state == BLK_NEW) {
			xtcam_set_err(a->err, a->errlen, "%s:%lu: bind %s dev %s: block %s: no such "
				      "block (xtcam apply makes it)", rs->name, rs->binds[j].lineno,
				      q->block, q->dev, q->block);
			return -ENOENT;
		}
		there = dev_there(q, &id, &ifindex, why, sizeof(why));
		if (there < 0) {
			xtcam_set_err(a->err, a->errlen, "%s:%lu: %s", rs->name, rs->binds[j].lineno,
				      why);
			return there;
		}
		if (!there) {
			a->res->missing++;
			if (a->o->missing)
				a->o->missing(a->o->arg, why);
			continue;
		}
		for (i = 0; i < a->nbind; i++) {
			const struct xtcam_bind_rec *r = &a->brecs[i];

			if (r->state != XTCAM_BIND_ACTIVE || !same_place(r, q) ||
			    strcmp(r->block, q->block) || a->unbind[i])
				continue;
			if (r->ns_dev != id.dev || r->ns_ino != id.ino || r->ifindex != ifindex)
				a->unbind[i] = true;    /* a new device under the old name */
			else
				kept = true;
		}
		a->bind[j] = !kept;
	}
	return 0;
}

static int plan(struct ap *a)
{
	const struct xtcam_restore *rs = a->rs;
	char t1[XTCAM_RULE_TEXT_MAX], t2[XTCAM_RULE_TEXT_MAX];
	size_t i;
	int e;

	for (i = 0; i < rs->nb; i++) {
		struct ap_block *ab = &a->blocks[i];
		const struct xtcam_block_rec *rec = reg_block(a, rs->blocks[i].spec.name);
		struct xtcam_block_spec cur;

		ab->f = &rs->blocks[i];
		e = handles(ab, a->err, a->errlen);
		if (e)
			return e;
		ab->rec = rec;
		if (!rec) {
			ab->state = BLK_NEW;
			continue;
		}
		e = xtcam_block_spec_get(a->c, ab->f->spec.name, &cur);
		if (e) {
			xtcam_set_err(a->err, a->errlen, "block %s: cannot read its settings: %s",
				      ab->f->spec.name, strerror(-e));
			return e;
		}
		if (xtcam_block_spec_format(&cur, t1, sizeof(t1)) < 0 ||
		    xtcam_block_spec_format(&ab->f->spec, t2, sizeof(t2)) < 0 || strcmp(t1, t2))
			ab->state = BLK_REMAKE;
	}
	e = bind_plan(a);
	if (!e && !a->o->bindings_for)
		e = rule_diffs(a);
	if (e)
		return e;
	for (i = 0; i < rs->nb; i++) {
		struct ap_block *ab = &a->blocks[i];
		char text[XTCAM_RULE_TEXT_MAX];
		size_t j;

		if (a->o->bindings_for)
			break;
		if (ab->state == BLK_SAME) {
			if (!ab->nops)
				continue;
			/* what the batch would refuse (capacity, actions) fails here */
			e = xtcam_rule_ops_check(a->c, ab->f->spec.name, ab->ops, ab->nops, a->err,
						 a->errlen);
			if (e)
				return e;
			continue;
		}
		xtcam_block_spec_format(&ab->f->spec, text, sizeof(text));
		if (ab->state == BLK_NEW)
			say(a, "block add %s", text);
		else
			say(a, "block replace %s", text);
		for (j = 0; j < ab->f->n; j++)
			say_rule(a, "add", ab->f, &ab->f->rules[j]);
	}
	for (i = 0; i < a->nbind; i++)
		if (a->unbind[i])
			say_unbind(a, &a->brecs[i]);
	for (i = 0; i < rs->nbind; i++)
		if (a->bind[i])
			say_bind(a, &rs->binds[i].req);
	for (i = 0; a->o->prune && i < a->nrecs; i++)
		if (!file_block(a, a->recs[i].name))
			say(a, "block del %.*s", (int)sizeof(a->recs[i].name), a->recs[i].name);
	return 0;
}

static void do_unbind(struct ap *a, size_t i)
{
	char msg[XTCAM_MSG_MAX];
	const struct xtcam_bind_rec *r = &a->brecs[i];
	int e;

	if (!a->unbind[i])
		return;
	a->unbind[i] = false;
	e = xtcam_cmd_unbind(a->c, r->block, r->dev, r->netns, msg, sizeof(msg));
	if (e)
		failed(a, e, msg);
}

/* Make a block the file has and the registry has not (any more). */
static int make_block(struct ap *a, struct ap_block *ab)
{
	char msg[XTCAM_MSG_MAX], m2[XTCAM_MSG_MAX];
	const char *name = ab->f->spec.name;
	int e = xtcam_cmd_block_add(a->c, &ab->f->spec, msg, sizeof(msg));

	if (!e && ab->f->n) {
		e = xtcam_cmd_rule_load(a->c, name, ab->f->rules, ab->f->n, false, false, msg,
					sizeof(msg));
		if (e)
			xtcam_cmd_block_del(a->c, name, m2, sizeof(m2));
	}
	if (e) {
		char full[XTCAM_MSG_MAX + 64];

		snprintf(full, sizeof(full), "block %s: %s", name, msg);
		failed(a, e, full);
	}
	return e;
}

static void execute(struct ap *a)
{
	const struct xtcam_restore *rs = a->rs;
	char msg[XTCAM_MSG_MAX];
	size_t i, j;
	int e;

	for (i = 0; !a->o->bindings_for && i < rs->nb; i++) {
		struct ap_block *ab = &a->blocks[i];

		if (ab->state == BLK_REMAKE) {
			for (j = 0; j < a->nbind; j++)
				if (!strcmp(a->brecs[j].block, ab->f->spec.name))
					do_unbind(a, j);
			e = xtcam_cmd_block_del(a->c, ab->f->spec.name, msg, sizeof(msg));
			if (e) {
				failed(a, e, msg);
				ab->failed = true;
				continue;
			}
		}
		if (ab->state != BLK_SAME) {
			ab->failed = make_block(a, ab) != 0;
			continue;
		}
		if (!ab->nops)
			continue;
		e = xtcam_rule_ops_apply(a->c, ab->f->spec.name, ab->ops, ab->nops, msg,
					 sizeof(msg));
		if (e)
			failed(a, e, msg);
	}
	for (i = 0; i < a->nbind; i++)
		do_unbind(a, i);
	for (i = 0; i < rs->nbind; i++) {
		struct ap_block *ab = file_block(a, rs->binds[i].req.block);

		if (!a->bind[i] || ab->failed)
			continue;
		e = xtcam_cmd_bind(a->c, &rs->binds[i].req, NULL, msg, sizeof(msg));
		if (e) {
			char full[XTCAM_MSG_MAX + 160];

			snprintf(full, sizeof(full), "%s:%lu: %s", rs->name, rs->binds[i].lineno, msg);
			failed(a, e, full);
		}
	}
	for (i = 0; a->o->prune && i < a->nrecs; i++) {
		char name[XTCAM_STATE_NAME + 1];

		snprintf(name, sizeof(name), "%.*s", XTCAM_STATE_NAME, a->recs[i].name);
		if (file_block(a, name))
			continue;
		e = xtcam_cmd_block_del(a->c, name, msg, sizeof(msg));
		if (e)
			failed(a, e, msg);
	}
}

int xtcam_cmd_apply(struct xtcam_ctx *c, const struct xtcam_restore *rs,
		    const struct xtcam_apply_opts *opts, struct xtcam_apply_result *res,
		    char *err, size_t errlen)
{
	struct ap a = { .c = c, .rs = rs, .o = opts, .res = res, .err = err, .errlen = errlen };
	size_t i;
	int e;

	memset(res, 0, sizeof(*res));
	a.blocks = calloc(rs->nb + 1, sizeof(*a.blocks));
	a.bind = calloc(rs->nbind + 1, sizeof(*a.bind));
	if (!a.blocks || !a.bind) {
		e = -ENOMEM;
		xtcam_set_err(err, errlen, "apply: out of memory");
		goto out;
	}
	e = xtcam_state_blocks(c->st, &a.recs, &a.nrecs);
	if (!e)
		e = xtcam_state_bindings(c->st, &a.bkeys, &a.brecs, &a.nbind);
	if (e) {
		xtcam_set_err(err, errlen, "registry: %s", strerror(-e));
		goto out;
	}
	a.unbind = calloc(a.nbind + 1, sizeof(*a.unbind));
	if (!a.unbind) {
		e = -ENOMEM;
		xtcam_set_err(err, errlen, "apply: out of memory");
		goto out;
	}
	e = plan(&a);
	if (e || opts->check)
		goto out;
	execute(&a);
	e = a.first;
out:
	for (i = 0; a.blocks && i < rs->nb; i++) {
		free(a.blocks[i].order);
		free(a.blocks[i].ops);
		free(a.blocks[i].old);
	}
	free(a.blocks);
	free(a.bind);
	free(a.unbind);
	free(a.recs);
	free(a.bkeys);
	free(a.brecs);
	return e;
}
