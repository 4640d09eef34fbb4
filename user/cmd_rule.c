// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* xtcam rule add, replace, del, load, flush, show, and counters reset. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "vanish.h"
#include "trace.h"

/* --- rules ---------------------------------------------------------------- */

/*
 * What an action needs from the machine, checked when the rule comes in
 * rather than at the next bind: a CPU that exists and that the cpumap
 * holds, and a redirect device in a namespace that is known now (the
 * rule's `netns NS`).  A redirect without netns goes to the namespace of
 * the device the block is (or will be) bound to: on a bound block the data
 * path resolves it with the change, on an unbound one the bind checks it
 * (the XDP backend's bind_check).  err gets "action ...: why".
 */
static int check_action(const struct xtcam_rule_action *a, char *err, size_t errlen)
{
	char why[XTCAM_ERRMSG_MAX] = "";
	__u32 ifindex;
	int n, e;

	switch (a->type) {
	case XTCAM_ACT_CPU:
		n = libbpf_num_possible_cpus();
		if (n < 0) {
			xtcam_set_err(err, errlen, "action cpu %u: cannot tell which CPUs exist: %s",
				      a->cpu, strerror(-n));
			return n;
		}
		if (a->cpu < (__u32)n && a->cpu < XTCAM_CPUMAP_SIZE)
			return 0;
		if (a->cpu < (__u32)n)
			xtcam_set_err(err, errlen, "action cpu %u: the cpumap holds CPUs 0-%u only",
				      a->cpu, XTCAM_CPUMAP_SIZE - 1);
		else if (n == 1)
			xtcam_set_err(err, errlen, "action cpu %u: only CPU 0 exists", a->cpu);
		else
			xtcam_set_err(err, errlen, "action cpu %u: only CPUs 0-%d exist", a->cpu,
				      n - 1);
		return -EINVAL;
	case XTCAM_ACT_REDIRECT:
		if (!a->netns[0])
			return 0;
		e = xtcam_ns_ifindex(a->netns, a->dev, &ifindex, why, sizeof(why));
		if (e)
			xtcam_set_err(err, errlen, "action redirect %s", why[0] ? why : strerror(-e));
		return e;
	default:
		return 0;
	}
}

/* check_action() for each rule that comes in with ops; err names the
 * block, and the handle when with_handle. */
static int check_actions(const char *block, const struct xtcam_rule_op *ops, size_t n,
			 bool with_handle, char *err, size_t errlen)
{
	char why[XTCAM_ERRMSG_MAX];
	size_t i;
	int e;

	for (i = 0; i < n; i++) {
		if (ops[i].cmd == XTCAM_RULE_DEL || !ops[i].rule)
			continue;
		e = check_action(&ops[i].rule->action, why, sizeof(why));
		if (!e)
			continue;
		if (with_handle)
			xtcam_set_err(err, errlen, "block %s: handle %u: %s", block,
				      ops[i].rule->handle, why);
		else
			xtcam_set_err(err, errlen, "block %s: %s", block, why);
		return e;
	}
	return 0;
}

/* Apply ops to a block: capacity, registry stage, core (backends), commit.
 * known: the caller read the registry for every handle of the ops (an
 * add's is free, a replace's or del's old is the rule there), and the
 * core does not read it again. */
static int apply_copy(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		      size_t n, bool known, char *err, size_t errlen);
static int ops_apply(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		     size_t n, bool known, char *err, size_t errlen);

/* The ops may point at rules the core owns, which it frees as it applies
 * them: work on copies. */
static int apply(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		 size_t n, bool known, char *err, size_t errlen)
{
	struct xtcam_rule *copy = malloc((2 * n + 1) * sizeof(*copy));
	struct xtcam_rule_op *o = malloc((n + 1) * sizeof(*o));
	size_t i;
	int e;

	if (!copy || !o) {
		free(copy);
		free(o);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		o[i] = ops[i];
		if (ops[i].rule) {
			copy[2 * i] = *ops[i].rule;
			o[i].rule = &copy[2 * i];
		}
		if (ops[i].old) {
			copy[2 * i + 1] = *ops[i].old;
			o[i].old = &copy[2 * i + 1];
		}
	}
	e = apply_copy(c, block, o, n, known, err, errlen);
	free(copy);
	free(o);
	return e;
}

/* The largest change whose data path catch-up is deferred (see below). */
#define DEFER_MAX 65536

static int apply_copy(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		      size_t n, bool known, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	__s64 entries;
	size_t i;
	char msg[XTCAM_ERRMSG_MAX] = "";
	int e1;
	int e = xtcam_block_rec(c, block, &rec, err, errlen);

	if (e)
		return e;
	if (!b)
		return -ENOENT;
	entries = rec.nentries;
	for (i = 0; i < n; i++) {
		struct xtcam_rec tmp;

		if (ops[i].rule && ops[i].cmd != XTCAM_RULE_DEL) {
			e = xtcam_rule_compile(ops[i].rule, &tmp);
			if (e) {
				xtcam_set_err(err, errlen, "rule handle %u: malformed (bad prio, handle or "
					"contradictory matches)", ops[i].rule->handle);
				return e;
			}
			entries += xtcam_rule_entries(ops[i].rule);
		}
		if (ops[i].old && ops[i].cmd != XTCAM_RULE_ADD)
			entries -= xtcam_rule_entries(ops[i].old);
	}
	if (entries > rec.capacity) {
		xtcam_set_err(err, errlen, "block %s: needs %lld entries, holds %u", block,
			(long long)entries, rec.capacity);
		return -ENOSPC;
	}
	xtcam_trace("check");
	/* the change marked in progress in the block's record: from here a
	 * kill leaves the block to be put back to its last commit (the
	 * registry's active generation) by the next command */
	e = xtcam_state_rules_stage(c->st, &rec, ops, 0);
	if (e == -ETIMEDOUT && c->st->why[0]) {
		xtcam_set_err(err, errlen, "%s", c->st->why);
		return e;
	}
	if (e) {
		xtcam_set_err(err, errlen, "block %s: registry: %s", block, strerror(-e));
		return e;
	}
	xtcam_crash_point("stage");
	/* the data paths' grace periods run while the registry writes its
	 * other generation and commits: a flip's catch-up of its own other
	 * generation waits for the settle (not for a big load, whose
	 * transaction would stay in memory beside the registry's writes for
	 * a gain of one grace period in seconds) */
	xtcam_xdp_defer(c, n <= DEFER_MAX);
	e = known ? xtcam_block_rules_apply_known(b, ops, n, msg, sizeof(msg)) :
		    xtcam_block_rules_apply(b, ops, n, msg, sizeof(msg));
	if (e) {
		xtcam_xdp_settle(c);
		xtcam_state_rules_abort(c->st, &rec, ops, n);
		xtcam_set_err(err, errlen, "block %s: %s", block, msg[0] ? msg : strerror(-e));
		return e;
	}
	xtcam_trace("deliver");
	xtcam_crash_point("deliver");
	/* a failure from here leaves the record marked: the next command
	 * puts the block and its data paths back to the last commit */
	e = xtcam_state_rules_stage(c->st, &rec, ops, n);
	xtcam_trace("stage");
	rec.nentries = (__u32)entries;
	if (!e)
		e = xtcam_state_rules_commit(c->st, &rec, ops, n);
	xtcam_trace("commit");
	e1 = c->linger ? 0 : xtcam_xdp_settle(c);
	xtcam_trace("settle");
	xtcam_crash_point("commit");
	if (e)
		xtcam_set_err(err, errlen, "block %s: registry: %s", block, strerror(-e));
	else if (e1)
		xtcam_set_err(err, errlen, "block %s: its data path, after the change: %s", block,
			      strerror(-(e = e1)));
	return e;
}

int xtcam_cmd_rule(struct xtcam_ctx *c, const char *block, enum xtcam_rule_verb v,
		   struct xtcam_rule *r, char *err, size_t errlen)
{
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct xtcam_block_rec rec;
	struct xtcam_rule old;
	struct xtcam_rule_op op;
	int e;

	xtcam_trace("parse");
	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	e = xtcam_block_rec(c, block, &rec, err, errlen);
	if (e)
		return e;
	/* the one rule the change names, from the registry */
	e = r->handle ? xtcam_state_rule_get(c->st, &rec, r->handle, &old) : -ENOENT;
	if (e && e != -ENOENT) {
		xtcam_set_err(err, errlen, "block %s: handle %u: cannot read it: %s", block,
			      r->handle, strerror(-e));
		return e;
	}
	memset(&op, 0, sizeof(op));
	switch (v) {
	case XTCAM_VERB_ADD:
		if (!r->handle) {
			if (rec.max_handle == UINT32_MAX) {
				xtcam_set_err(err, errlen, "block %s: no handle left above %u", block,
					      rec.max_handle);
				return -ERANGE;
			}
			r->handle = rec.max_handle + 1;
		} else if (!e) {
			xtcam_set_err(err, errlen, "rule add: block %s: handle %u is in use", block, r->handle);
			return -EEXIST;
		}
		op.cmd = XTCAM_RULE_ADD;
		op.rule = r;
		break;
	case XTCAM_VERB_REPLACE:
		if (e) {
			xtcam_set_err(err, errlen, "rule replace: block %s: no rule with handle %u", block,
				r->handle);
			return r->handle ? -ENOENT : -EINVAL;
		}
		op.cmd = XTCAM_RULE_REPLACE;
		op.rule = r;
		op.old = &old;
		break;
	case XTCAM_VERB_DEL:
		if (e) {
			xtcam_set_err(err, errlen, "rule del: block %s: no rule with handle %u", block,
				r->handle);
			return -ENOENT;
		}
		op.cmd = XTCAM_RULE_DEL;
		op.rule = &old;
		op.old = &old;
		break;
	}
	if (v != XTCAM_VERB_DEL) {
		char why[XTCAM_ERRMSG_MAX] = "";

		e = check_actions(block, &op, 1, false, why, sizeof(why));
		if (e) {
			xtcam_set_err(err, errlen, "rule %s: %s",
				      v == XTCAM_VERB_ADD ? "add" : "replace", why);
			return e;
		}
	}
	return apply(c, block, &op, 1, true, err, errlen);
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

int xtcam_cmd_rule_batch(struct xtcam_ctx *c, const char *block, const enum xtcam_rule_verb *v,
			 struct xtcam_rule *rules, size_t n, char *err, size_t errlen)
{
	static const char *const verb[] = { "add", "replace", "del" };
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct xtcam_block_rec rec;
	struct xtcam_rule_op *ops = NULL;
	struct xtcam_rule *old = NULL;
	__u32 *hs = NULL, next;
	size_t i;
	int e;

	xtcam_trace("parse");
	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	e = xtcam_block_rec(c, block, &rec, err, errlen);
	if (e || !n)
		return e;
	ops = calloc(n, sizeof(*ops));
	old = calloc(n, sizeof(*old));
	hs = calloc(n, sizeof(*hs));
	if (!ops || !old || !hs) {
		e = -ENOMEM;
		xtcam_set_err(err, errlen, "block %s: out of memory", block);
		goto out;
	}
	/* handles for the adds without one: above every handle of the block
	 * and of the batch */
	next = rec.max_handle;
	for (i = 0; i < n; i++)
		if (v[i] != XTCAM_VERB_DEL && rules[i].handle > next)
			next = rules[i].handle;
	for (i = 0; i < n; i++) {
		__u32 h = rules[i].handle;

		if (v[i] == XTCAM_VERB_ADD && !h) {
			if (next == UINT32_MAX) {
				xtcam_set_err(err, errlen, "block %s: change %zu: rule add: no handle "
					      "left above %u", block, i + 1, next);
				e = -ERANGE;
				goto out;
			}
			h = rules[i].handle = ++next;
		}
		if (!h) {
			xtcam_set_err(err, errlen, "block %s: change %zu: rule %s: no handle", block,
				      i + 1, verb[v[i]]);
			e = -EINVAL;
			goto out;
		}
		hs[i] = h;
		/* above the highest handle the block has held, none is in
		 * use: an add there reads nothing */
		e = v[i] == XTCAM_VERB_ADD && (!rec.nrules || h > rec.max_handle) ? -ENOENT :
		    xtcam_state_rule_get(c->st, &rec, h, &old[i]);
		if (e && e != -ENOENT) {
			xtcam_set_err(err, errlen, "block %s: change %zu: handle %u: cannot read it: %s",
				      block, i + 1, h, strerror(-e));
			goto out;
		}
		if (v[i] == XTCAM_VERB_ADD && !e) {
			xtcam_set_err(err, errlen, "block %s: change %zu: rule add: handle %u is in use",
				      block, i + 1, h);
			e = -EEXIST;
			goto out;
		}
		if (v[i] != XTCAM_VERB_ADD && e) {
			xtcam_set_err(err, errlen, "block %s: change %zu: rule %s: no rule with handle %u",
				      block, i + 1, verb[v[i]], h);
			goto out;
		}
		e = 0;
		switch (v[i]) {
		case XTCAM_VERB_ADD:
			ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[i], NULL };
			break;
		case XTCAM_VERB_REPLACE:
			ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE, &rules[i], &old[i] };
			break;
		case XTCAM_VERB_DEL:
			ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, &old[i], &old[i] };
			break;
		}
	}
	qsort(hs, n, sizeof(*hs), cmp_u32);
	for (i = 1; i < n; i++)
		if (hs[i] == hs[i - 1]) {
			xtcam_set_err(err, errlen, "block %s: handle %u: changed twice in one batch",
				      block, hs[i]);
			e = -EINVAL;
			goto out;
		}
	e = ops_apply(c, block, ops, n, true, err, errlen);
out:
	free(ops);
	free(old);
	free(hs);
	return e;
}

static int load_check(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		      size_t nops, char *err, size_t errlen);

/* the batch is sorted through pointers: a rule is not copied */
static int cmp_handle(const void *a, const void *b)
{
	__u32 x = (*(struct xtcam_rule *const *)a)->handle;
	__u32 y = (*(struct xtcam_rule *const *)b)->handle;

	return x < y ? -1 : x > y;
}

/*
 * A load that adds (not replace): O(rules of the file), whatever the block
 * holds.  Handles above the highest the block has held are free; one at or
 * below it is looked up in the registry, one by one.  The rules are not
 * copied: the ops point at the caller's, which outlive the change.
 */
static int load_add(struct xtcam_ctx *c, const char *block, struct xtcam_rule **sorted,
		    size_t n, bool check, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	struct xtcam_rule_op *ops;
	size_t i;
	int e = xtcam_block_rec(c, block, &rec, err, errlen);

	if (e)
		return e;
	for (i = 0; i < n && rec.nrules && sorted[i]->handle <= rec.max_handle; i++) {
		struct xtcam_rule have;

		e = xtcam_state_rule_get(c->st, &rec, sorted[i]->handle, &have);
		if (!e) {
			xtcam_set_err(err, errlen, "block %s: handle %u is in use", block,
				      sorted[i]->handle);
			return -EEXIST;
		}
		if (e != -ENOENT) {
			xtcam_set_err(err, errlen, "block %s: handle %u: cannot read it: %s", block,
				      sorted[i]->handle, strerror(-e));
			return e;
		}
	}
	ops = calloc(n + 1, sizeof(*ops));
	if (!ops)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, sorted[i], NULL };
	e = check_actions(block, ops, n, true, err, errlen);
	if (!e && check)
		e = load_check(c, block, ops, n, err, errlen);
	else if (!e && n)
		e = apply_copy(c, block, ops, n, true, err, errlen);
	free(ops);
	return e;
}

/* `check`: would the batch fit, and compile? */
static int load_check(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		      size_t nops, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	__s64 entries;
	size_t i;
	int e = xtcam_block_rec(c, block, &rec, err, errlen);

	entries = rec.nentries;
	for (i = 0; !e && i < nops; i++) {
		struct xtcam_rec tmp;

		if (ops[i].cmd != XTCAM_RULE_DEL) {
			e = xtcam_rule_compile(ops[i].rule, &tmp);
			if (e)
				xtcam_set_err(err, errlen, "rule handle %u: malformed", ops[i].rule->handle);
			entries += xtcam_rule_entries(ops[i].rule);
		}
		if (ops[i].old)
			entries -= xtcam_rule_entries(ops[i].old);
	}
	if (!e && entries > rec.capacity) {
		xtcam_set_err(err, errlen, "block %s: needs %lld entries, holds %u", block,
			(long long)entries, rec.capacity);
		e = -ENOSPC;
	}
	return e;
}

int xtcam_cmd_rule_load(struct xtcam_ctx *c, const char *block, struct xtcam_rule *rules,
			size_t n, bool replace, bool check, char *err, size_t errlen)
{
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct xtcam_rule_op *ops = NULL;
	struct xtcam_rule **sorted;
	size_t i, nops = 0, nr;
	__u32 next;
	int e = 0;

	xtcam_trace("read");    /* the caller's: the rules read and parsed */
	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	next = 0;
	if (!replace) {
		struct xtcam_block_rec rec;

		e = xtcam_block_rec(c, block, &rec, err, errlen);
		if (e)
			return e;
		next = rec.max_handle;
	}
	for (i = 0; i < n; i++)
		if (rules[i].handle > next)
			next = rules[i].handle;
	for (i = 0; i < n; i++) {
		if (rules[i].handle)
			continue;
		if (next == UINT32_MAX) {
			xtcam_set_err(err, errlen, "block %s: no handle left", block);
			return -ERANGE;
		}
		rules[i].handle = ++next;
	}
	/* handles once each */
	sorted = malloc((n + 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		sorted[i] = &rules[i];
	qsort(sorted, n, sizeof(*sorted), cmp_handle);
	for (i = 1; i < n; i++) {
		if (sorted[i]->handle == sorted[i - 1]->handle) {
			xtcam_set_err(err, errlen, "block %s: handle %u given twice", block,
				sorted[i]->handle);
			e = -EEXIST;
			goto out;
		}
	}
	if (!replace) {
		e = load_add(c, block, sorted, n, check, err, errlen);
		goto out;
	}
	/* a whole set is compared with the block's: all of them, here */
	e = xtcam_block_rules_fetch(b, err, errlen);
	if (e)
		goto out;
	nr = xtcam_block_rule_count(b);
	ops = calloc(n + nr + 1, sizeof(*ops));
	if (!ops) {
		e = -ENOMEM;
		goto out;
	}
	/* what goes, what changes, what comes */
	for (i = 0; i < nr; i++) {
		const struct xtcam_rule *o = xtcam_block_rule_at(b, i);
		struct xtcam_rule **k = bsearch(&o, sorted, n, sizeof(*sorted), cmp_handle);

		if (!k)
			ops[nops++] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, o, o };
	}
	for (i = 0; i < n; i++) {
		const struct xtcam_rule *o = xtcam_block_rule_find(b, sorted[i]->handle);

		if (!o)
			ops[nops++] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, sorted[i], NULL };
		else if (!xtcam_rule_equal(o, sorted[i]))
			ops[nops++] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE, sorted[i], o };
	}
	e = check_actions(block, ops, nops, true, err, errlen);
	if (e)
		goto out;
	if (check)
		e = load_check(c, block, ops, nops, err, errlen);
	else if (nops)
		e = apply(c, block, ops, nops, false, err, errlen);
out:
	free(sorted);
	free(ops);
	return e;
}

int xtcam_cmd_rule_flush(struct xtcam_ctx *c, const char *block, char *err, size_t errlen)
{
	return xtcam_cmd_rule_load(c, block, NULL, 0, true, false, err, errlen);
}

/* its counters on every backend the block is bound through */
static void rule_counters(struct xtcam_ctx *c, const struct xtcam_rview *v, void *const *snaps,
			  const struct xtcam_rule *r, struct xtcam_counter *cnt)
{
	size_t k;

	*cnt = (struct xtcam_counter){ 0 };
	for (k = 0; k < c->nimpl; k++)
		if (snaps && snaps[k])
			c->impl[k]->snapshot_counters(snaps[k], r->handle, cnt);
		else
			c->impl[k]->rule_counters(v, r->handle, cnt);
}

/* One rule as `rule show` prints it, with its counters. */
static json_object *rule_json(struct xtcam_ctx *c, const struct xtcam_rview *v,
			      void *const *snaps, const struct xtcam_rule *r,
			      const struct timespec *now)
{
	struct xtcam_counter cnt;
	json_object *o = json_object_new_object();

	rule_counters(c, v, snaps, r, &cnt);
	json_object_object_add(o, "handle", json_object_new_int64(r->handle));
	json_object_object_add(o, "prio", json_object_new_int64(r->prio));
	json_object_object_add(o, "match", xtcam_rule_match_json(r, &v->spec));
	json_object_object_add(o, "action", xtcam_action_json(&r->action));
	json_object_object_add(o, "entries", json_object_new_int64(xtcam_rule_entries(r)));
	json_object_object_add(o, "packets", json_object_new_int64((int64_t)cnt.packets));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)cnt.bytes));
	if (cnt.last_hit) {
		__u64 t = (__u64)now->tv_sec * 1000000000ull + (__u64)now->tv_nsec;

		json_object_object_add(o, "last_used",
				       json_object_new_double(t > cnt.last_hit ?
					       (double)(t - cnt.last_hit) / 1e9 : 0));
	} else {
		json_object_object_add(o, "last_used", NULL);
	}
	return o;
}

/* Rules shown with a lookup of their counters each; past them, the
 * counters of the whole block are read at once (in batches): a big block
 * costs a few syscalls a thousand rules instead of three a rule. */
#define SHOW_ONE_BY_ONE 1024
/* a reader checks every so many rules whether a writer committed */
#define SHOW_CHECK 256

struct show_walk {
	struct xtcam_ctx *c;
	const struct xtcam_block_rec *rec;
	const struct xtcam_rview *v;
	size_t shown;
	bool snapped;			/* snaps tried */
	void *snaps[XTCAM_NDRIVERS];	/* each backend's counters, once read */
	struct timespec now;
	size_t n;
	int (*fn)(void *arg, json_object *rule);
	int (*raw)(void *arg, const struct xtcam_shown *rule);
	void *arg;
};

static int show_one(void *arg, const struct xtcam_rule *r)
{
	struct show_walk *w = arg;
	json_object *o;
	size_t k;
	int e;

	if (!w->snapped && w->shown++ == SHOW_ONE_BY_ONE) {
		w->snapped = true;
		for (k = 0; k < w->c->nimpl; k++)
			if (w->c->impl[k]->counters_snapshot &&
			    w->c->impl[k]->counters_snapshot(w->v, &w->snaps[k]))
				w->snaps[k] = NULL;     /* one by one, then */
	}
	if (w->raw) {
		struct xtcam_shown s = { r, &w->v->spec, 0, 0, -1 };
		struct xtcam_counter cnt;

		rule_counters(w->c, w->v, w->snaps, r, &cnt);
		s.packets = cnt.packets;
		s.bytes = cnt.bytes;
		if (cnt.last_hit) {
			__u64 t = (__u64)w->now.tv_sec * 1000000000ull + (__u64)w->now.tv_nsec;

			s.last_used = t > cnt.last_hit ? (double)(t - cnt.last_hit) / 1e9 : 0;
		}
		e = w->raw(w->arg, &s);
	} else {
		o = rule_json(w->c, w->v, w->snaps, r, &w->now);
		if (!o)
			return -ENOMEM;
		e = w->fn(w->arg, o);
		json_object_put(o);
	}
	/* the generation read is pinned: writers commit meanwhile but write
	 * into it only once the pin is let go; checked all the same */
	if (!e && !(++w->n % SHOW_CHECK))
		e = xtcam_state_block_pin_check(w->c->st, w->rec);
	return e;
}

/* the error of a reader's last pass */
static int read_err(const char *block, int e, char *err, size_t errlen)
{
	if (e == -EAGAIN)
		xtcam_set_err(err, errlen, "block %s: a writer committed during each of %d reads "
			      "of it: try again", block, XTCAM_READ_PASSES);
	else if (e == -ENOENT)
		xtcam_set_err(err, errlen, "block %s: no such block", block);
	else if (e == -EUCLEAN)
		xtcam_set_err(err, errlen, "block %s: its rules were written while they were "
			      "read, under the reader's pin (a bug): the listing is not whole",
			      block);
	else if (e < 0)
		xtcam_set_err(err, errlen, "block %s: cannot read its rules: %s", block,
			      strerror(-e));
	return e;
}

static int show_each(struct xtcam_ctx *c, const char *block,
		     int (*fn)(void *arg, json_object *rule),
		     int (*raw)(void *arg, const struct xtcam_shown *rule), void *arg,
		     char *err, size_t errlen)
{
	bool ro = c->flags & XTCAM_OPEN_READ;
	struct xtcam_block_rec rec;
	struct xtcam_rview v;
	struct show_walk w;
	size_t k;
	int e = 0, pass;

	(void)ro;
	/* the active generation pinned (a writer holds it only in the moment
	 * of a commit: tried again a little later), then read once, printed
	 * as it is read: nothing is printed before the pin */
	for (pass = 0; pass < XTCAM_READ_PASSES; pass++) {
		struct timespec pause = { 0, 1000000 };

		if (pass && (e = raw ? raw(arg, NULL) : fn(arg, NULL)))
			return e;               /* the caller's: what it got is void */
		e = xtcam_state_block_pin(c->st, block, &rec);
		if (e == -EAGAIN) {
			nanosleep(&pause, NULL);
			continue;
		}
		if (e)
			break;
		e = xtcam_rview_get(c, &rec, NULL, 0, &v);
		if (e) {
			xtcam_state_block_unpin(c->st, &rec);
			if (e == -EAGAIN) {
				err[0] = 0;     /* to be asked with the lock */
				return e;
			}
			xtcam_set_err(err, errlen, "block %s: its data path: %s", block,
				      strerror(-e));
			return e;
		}
		w = (struct show_walk){ .c = c, .rec = &rec, .v = &v, .fn = fn, .raw = raw,
					.arg = arg };
		clock_gettime(CLOCK_MONOTONIC_COARSE, &w.now);
		/* straight from the registry: the core need not hold the rules */
		e = xtcam_state_rules_walk(c->st, &rec, show_one, &w);
		if (!e)
			e = xtcam_state_block_pin_check(c->st, &rec);
		xtcam_state_block_unpin(c->st, &rec);
		for (k = 0; k < c->nimpl; k++)
			if (w.snaps[k])
				c->impl[k]->snapshot_free(w.snaps[k]);
		xtcam_rview_put(&v);
		break;
	}
	return read_err(block, e, err, errlen);
}

int xtcam_cmd_rule_show_each(struct xtcam_ctx *c, const char *block,
			     int (*fn)(void *arg, json_object *rule), void *arg,
			     char *err, size_t errlen)
{
	return show_each(c, block, fn, NULL, arg, err, errlen);
}

int xtcam_cmd_rule_show_raw(struct xtcam_ctx *c, const char *block,
			    int (*fn)(void *arg, const struct xtcam_shown *rule), void *arg,
			    char *err, size_t errlen)
{
	return show_each(c, block, NULL, fn, arg, err, errlen);
}

static int array_add(void *arg, json_object *rule)
{
	if (!rule) {                    /* start over */
		json_object_array_del_idx(arg, 0, json_object_array_length(arg));
		return 0;
	}
	return json_object_array_add(arg, json_object_get(rule)) ? -ENOMEM : 0;
}

int xtcam_cmd_rule_show(struct xtcam_ctx *c, const char *block, json_object **out,
			char *err, size_t errlen)
{
	json_object *arr = json_object_new_array();
	int e;

	if (!arr)
		return -ENOMEM;
	e = xtcam_cmd_rule_show_each(c, block, array_add, arr, err, errlen);
	if (e) {
		json_object_put(arr);
		return e;
	}
	*out = arr;
	return 0;
}

int xtcam_cmd_rule_show_handle(struct xtcam_ctx *c, const char *block, __u32 handle,
			       json_object **out, char *err, size_t errlen)
{
	bool ro = c->flags & XTCAM_OPEN_READ;
	struct xtcam_block_rec rec;
	struct xtcam_rview v;
	struct xtcam_rule r;
	struct timespec now;
	int e = 0, pass;

	for (pass = 0; pass < (ro ? XTCAM_READ_PASSES : 1); pass++) {
		e = xtcam_block_rec(c, block, &rec, err, errlen);
		if (e)
			return e;
		e = xtcam_state_rule_get(c->st, &rec, handle, &r);
		/* without the lock: of the state committed before and after */
		if ((!e || e == -ENOENT) && ro) {
			int m = xtcam_state_block_moved(c->st, &rec);

			e = m ? m : e;
		}
		if (e != -EAGAIN)
			break;
	}
	if (e == -ENOENT)
		xtcam_set_err(err, errlen, "block %s: no rule with handle %u", block, handle);
	else if (e)
		read_err(block, e, err, errlen);
	if (e)
		return e;
	e = xtcam_rview_get(c, &rec, NULL, 0, &v);
	if (e == -EAGAIN) {
		err[0] = 0;                     /* to be asked with the lock */
		return e;
	}
	if (e) {
		xtcam_set_err(err, errlen, "block %s: its data path: %s", block, strerror(-e));
		return e;
	}
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	*out = json_object_new_array();
	json_object_array_add(*out, rule_json(c, &v, NULL, &r, &now));
	xtcam_rview_put(&v);
	return 0;
}

int xtcam_cmd_counters_reset(struct xtcam_ctx *c, const char *block, char *err, size_t errlen)
{
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	size_t k;
	int e = 0;

	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	for (k = 0; !e && k < c->nimpl; k++)
		e = c->impl[k]->counters_reset(b);
	if (e)
		xtcam_set_err(err, errlen, "block %s: %s", block, strerror(-e));
	return e;
}

/* --- a batch of rule changes computed elsewhere (apply.c) ----------------- */

int xtcam_rule_ops_check(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
			 size_t n, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	__s64 entries;
	size_t i;
	int e;

	if (!xtcam_block_find(c->core, block)) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	e = check_actions(block, ops, n, true, err, errlen);
	if (!e)
		e = xtcam_block_rec(c, block, &rec, err, errlen);
	if (e)
		return e;
	entries = rec.nentries;
	for (i = 0; i < n; i++) {
		struct xtcam_rec tmp;

		if (ops[i].cmd != XTCAM_RULE_DEL) {
			e = xtcam_rule_compile(ops[i].rule, &tmp);
			if (e) {
				xtcam_set_err(err, errlen, "block %s: handle %u: malformed (bad prio, "
					      "handle or contradictory matches)", block,
					      ops[i].rule->handle);
				return e;
			}
			entries += xtcam_rule_entries(ops[i].rule);
		}
		if (ops[i].old && ops[i].cmd != XTCAM_RULE_ADD)
			entries -= xtcam_rule_entries(ops[i].old);
	}
	if (entries > rec.capacity) {
		xtcam_set_err(err, errlen, "block %s: needs %lld entries, holds %u", block,
			      (long long)entries, rec.capacity);
		return -ENOSPC;
	}
	return 0;
}

static int ops_apply(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		     size_t n, bool known, char *err, size_t errlen)
{
	int e;

	if (!xtcam_block_find(c->core, block)) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	e = check_actions(block, ops, n, true, err, errlen);
	return e ? e : apply(c, block, ops, n, known, err, errlen);
}

int xtcam_rule_ops_apply(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
			 size_t n, char *err, size_t errlen)
{
	return ops_apply(c, block, ops, n, false, err, errlen);
}
