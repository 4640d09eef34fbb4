// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* xtcam rule add, replace, del, load, flush, show, and counters reset. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "vanish.h"
#include "trace.h"
#include "rpack.h"
#include "progress.h"

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
		struct xtcam_rule rb;
		const struct xtcam_rule *r;

		if (ops[i].cmd == XTCAM_RULE_DEL || !ops[i].rule)
			continue;
		r = xtcam_rule_view(ops[i].rule, &rb);
		e = check_action(&r->action, why, sizeof(why));
		if (!e)
			continue;
		if (with_handle)
			xtcam_set_err(err, errlen, "block %s: handle %u: %s", block,
				      r->handle, why);
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
			copy[2 * i] = *xtcam_rule_view(ops[i].rule, &copy[2 * i]);
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

/*
 * A change larger than DEFER_MAX works on two cores: the registry writes
 * its inactive generation in a thread of its own while the data paths
 * take the change (each side writes only what no reader or frame sees
 * before its own flip), and after the data paths' flip the registry
 * commits (its flip, then its copy into the other generation) while the
 * data paths bring their other generation up to date in another thread.
 * The order of the commit points stays: the record marked, the data
 * paths' flip, the registry's flip.
 */
struct side {
	pthread_t th;
	struct xtcam_ctx *c;
	const struct xtcam_block_rec *rec;
	const struct xtcam_rule_op *ops;
	size_t n;
	int e;
	struct xtcam_chunks ch;         /* side_write's, shared with a helper */
};

static void *side_write(void *arg)
{
	struct side *s = arg;

	xtcam_progress_quiet = true;
	s->e = xtcam_state_rules_write(s->c->st, s->rec, s->ops, s->n, &s->ch);
	return NULL;
}

static void *side_settle(void *arg)
{
	struct side *s = arg;

	xtcam_progress_quiet = true;
	s->e = xtcam_xdp_settle(s->c);
	return NULL;
}

/* fn(s) in a thread; false: it could not start (fn has not run) */
static bool side_start(struct side *s, void *(*fn)(void *))
{
	return !pthread_create(&s->th, NULL, fn, s);
}

static int side_join(struct side *s)
{
	pthread_join(s->th, NULL);
	return s->e;
}

/*
 * A lingering change (ctx->linger: the library's batches) returns at the
 * registry's flip, its commit point: the registry's copy into its other
 * generation runs in a thread, beside the caller's next change reading
 * and placing, and is joined before that change reads its block's record
 * (which the copy writes last) or writes anything.  The thread holds the
 * lock as the data paths' catch-ups do (ctx->notify).  A kill meanwhile
 * leaves the record marked, as a kill during a copy in line does: the
 * next command copies the active generation into the other.
 */
struct rcopy {
	pthread_t th;
	struct xtcam_ctx *c;
	struct xtcam_block_rec rec;
	struct xtcam_rule_op *ops;
	struct xtcam_rule *rules;       /* the ops' rules and olds, 2 an op */
	size_t n;
	int e;
};

static void rcopy_free(struct rcopy *rc)
{
	free(rc->ops);
	free(rc->rules);
	free(rc);
}

static void *rcopy_run(void *arg)
{
	struct rcopy *rc = arg;

	xtcam_progress_quiet = true;
	rc->e = xtcam_state_rules_copy(rc->c->st, &rc->rec, rc->ops, rc->n);
	rc->c->notify(rc->c->notify_arg, -1);
	return NULL;
}

/* The copy of a flipped change in a thread; false: not started (the
 * caller copies). */
static bool rcopy_start(struct xtcam_ctx *c, const struct xtcam_block_rec *rec,
			const struct xtcam_rule_op *ops, size_t n)
{
	struct rcopy *rc = calloc(1, sizeof(*rc));
	size_t i;

	if (!rc)
		return false;
	rc->ops = calloc(n + 1, sizeof(*rc->ops));
	rc->rules = calloc(2 * n + 1, sizeof(*rc->rules));
	if (!rc->ops || !rc->rules) {
		rcopy_free(rc);
		return false;
	}
	for (i = 0; i < n; i++) {
		rc->ops[i] = ops[i];
		if (ops[i].rule) {
			rc->rules[2 * i] = *xtcam_rule_view(ops[i].rule, &rc->rules[2 * i]);
			rc->ops[i].rule = &rc->rules[2 * i];
		}
		if (ops[i].old) {
			rc->rules[2 * i + 1] = *ops[i].old;
			rc->ops[i].old = &rc->rules[2 * i + 1];
		}
	}
	rc->c = c;
	rc->rec = *rec;
	rc->n = n;
	c->notify(c->notify_arg, 1);
	if (pthread_create(&rc->th, NULL, rcopy_run, rc)) {
		c->notify(c->notify_arg, -1);
		rcopy_free(rc);
		return false;
	}
	c->rcopy = rc;
	return true;
}

/* its error, and which block it copied into *name */
static int rcopy_join(struct xtcam_ctx *c, char *name, size_t len)
{
	struct rcopy *rc = c ? c->rcopy : NULL;
	int e;

	if (!rc)
		return 0;
	pthread_join(rc->th, NULL);
	e = rc->e;
	if (name)
		snprintf(name, len, "%s", rc->rec.name);
	c->rcopy = NULL;
	rcopy_free(rc);
	xtcam_trace("registry copy joined");
	return e;
}

int xtcam_rules_join(struct xtcam_ctx *c)
{
	return rcopy_join(c, NULL, 0);
}

/*
 * The CLI's big change (ctx->finisher) returns at its commit point, the
 * registry's flip: a process forked there brings the registry's other
 * generation up to date (its copy) and the data paths' (their grace
 * periods and catch-ups, held for it: xtcam_xdp_hold) on two cores, as
 * the command would have, and exits.  It keeps the writers' lock (the
 * flock is the open file's, which it shares: the lock is let go when it
 * exits too), holds none of the caller's files (its standard streams go
 * to /dev/null, every file the command did not open itself is closed)
 * and leaves the terminal's session.  Killed at any point, it leaves
 * what a kill of the command there leaves: the block record marked and
 * the data paths dirty, which the next command repairs to the committed
 * state.  0: the parent, the rest is the child's; 1: no process (the
 * caller finishes).
 */
/* what the command opened, it opened close-on-exec */
static bool opened_here(int fd, void *arg)
{
	int fl = fcntl(fd, F_GETFD);

	(void)arg;
	return fl < 0 || (fl & FD_CLOEXEC);
}

static int finish_detached(struct xtcam_ctx *c, struct xtcam_block_rec *rec,
			   const struct xtcam_rule_op *ops, size_t n)
{
	struct side sside = { .c = c };
	pid_t pid = fork();
	int e, e1;
	bool two;

	if (pid < 0)
		return 1;
	if (pid) {
		xtcam_xdp_forget(c);
		c->finished = true;
		return 0;
	}
	xtcam_outlive(opened_here, NULL);
	xtcam_progress_quiet = true;
	xtcam_state_note_holder(c->st);
	xtcam_crash_point("finish");
	two = side_start(&sside, side_settle);
	e = xtcam_state_rules_copy(c->st, rec, ops, n);
	e1 = two ? side_join(&sside) : xtcam_xdp_settle(c);
	xtcam_crash_point("commit");
	/* (nothing freed: the process ends, without its exit handlers) */
	_exit(e || e1 ? 1 : 0);
}

/*
 * The ops' rules compiled (each must) and the entries they add and free,
 * ops [from, to): a big batch's halves on two cores.
 */
struct tally {
	const struct xtcam_rule_op *ops;
	size_t from, to;
	__s64 entries;          /* added less freed */
	size_t bad;             /* the first that does not compile, or to */
	__u32 bad_handle;
	int e;
};

static void *tally_run(void *arg)
{
	struct tally *t = arg;
	size_t i;

	t->entries = 0;
	t->bad = t->to;
	t->e = 0;
	for (i = t->from; i < t->to; i++) {
		const struct xtcam_rule_op *op = &t->ops[i];
		struct xtcam_rec tmp;
		struct xtcam_rule rb;

		if (op->rule && op->cmd != XTCAM_RULE_DEL) {
			const struct xtcam_rule *r = xtcam_rule_view(op->rule, &rb);

			t->e = xtcam_rule_compile(r, &tmp);
			if (t->e) {
				t->bad = i;
				t->bad_handle = r->handle;
				break;
			}
			t->entries += xtcam_rule_entries(r);
		}
		if (op->old && op->cmd != XTCAM_RULE_ADD)
			t->entries -= xtcam_rule_entries(op->old);
	}
	return NULL;
}

/* (a batch this big is split in two) */
#define TALLY_SPLIT 65536

static int tally(const struct xtcam_rule_op *ops, size_t n, __s64 *entries, __u32 *bad_handle)
{
	struct tally t[2] = { { .ops = ops, .from = 0, .to = n }, { .ops = ops, .to = n } };
	pthread_t th;
	bool two = false;

	if (n >= TALLY_SPLIT) {
		t[0].to = t[1].from = n / 2;
		two = !pthread_create(&th, NULL, tally_run, &t[1]);
		if (!two)
			t[0].to = n;
	}
	tally_run(&t[0]);
	if (two)
		pthread_join(th, NULL);
	*entries += t[0].entries + (two ? t[1].entries : 0);
	/* the first bad one of the batch */
	if (t[0].e) {
		*bad_handle = t[0].bad_handle;
		return t[0].e;
	}
	if (two && t[1].e) {
		*bad_handle = t[1].bad_handle;
		return t[1].e;
	}
	return 0;
}

static int apply_copy(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		      size_t n, bool known, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct side wside, sside;
	__s64 entries;
	__u32 bad = 0;
	char msg[XTCAM_ERRMSG_MAX] = "";
	bool two, fin;
	int e1, e2;
	char last[sizeof(rec.name)] = "";
	int e = rcopy_join(c, last, sizeof(last));

	if (e && !xtcam_state_block_get(c->st, last, &rec) && rec.dirty == 1) {
		/* the last change's copy failed (it is committed): its other
		 * generation made a copy of the active one again, as the next
		 * command would after a kill */
		e = xtcam_state_rules_recover(c->st, &rec);
		if (e) {
			xtcam_set_err(err, errlen, "block %s: registry: the last change's copy: %s",
				      last, e == -ETIMEDOUT && c->st->why[0] ? c->st->why :
				      strerror(-e));
			return e;
		}
	}
	e = xtcam_block_rec(c, block, &rec, err, errlen);
	if (e)
		return e;
	if (!b)
		return -ENOENT;
	entries = rec.nentries;
	e = tally(ops, n, &entries, &bad);
	if (e) {
		xtcam_set_err(err, errlen, "rule handle %u: malformed (bad prio, handle or "
			      "contradictory matches)", bad);
		return e;
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
	 * generation waits for the settle, which a big change runs beside the
	 * registry's commit (see struct side) */
	fin = c->finisher && !c->linger && n > DEFER_MAX;
	xtcam_xdp_defer(c, true);
	if (fin)
		xtcam_xdp_hold(c);
	wside = (struct side){ .c = c, .rec = &rec, .ops = ops, .n = n };
	xtcam_chunks_init(&wside.ch);
	two = n > DEFER_MAX && side_start(&wside, side_write);
	e = known ? xtcam_block_rules_apply_known(b, ops, n, msg, sizeof(msg)) :
		    xtcam_block_rules_apply(b, ops, n, msg, sizeof(msg));
	/* the data paths' part done first: a share of what is left of the
	 * registry's (its error is the thread's too) */
	if (!e && two)
		xtcam_state_rules_help(c->st, &rec, ops, n, &wside.ch);
	else if (two)
		xtcam_chunks_cancel(&wside.ch);    /* aborted below */
	e2 = two ? side_join(&wside) : 0;
	xtcam_chunks_destroy(&wside.ch);
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
	e = two ? e2 : xtcam_state_rules_stage(c->st, &rec, ops, n);
	xtcam_trace("stage");
	rec.nentries = (__u32)entries;
	sside = (struct side){ .c = c };
	if (!e && fin) {
		/* the commit point, then the rest in a process of its own */
		e = xtcam_state_rules_flip(c->st, &rec, ops, n);
		if (!e && !finish_detached(c, &rec, ops, n)) {
			xtcam_trace("commit");
			return 0;
		}
		two = !e && side_start(&sside, side_settle);
		if (!e)
			e = xtcam_state_rules_copy(c->st, &rec, ops, n);
		goto settle;
	}
	two = !e && n > DEFER_MAX && side_start(&sside, side_settle);
	if (!e && !two && c->linger && c->notify) {
		e = xtcam_state_rules_flip(c->st, &rec, ops, n);
		if (!e && !rcopy_start(c, &rec, ops, n))
			e = xtcam_state_rules_copy(c->st, &rec, ops, n);
	} else if (!e) {
		e = xtcam_state_rules_commit(c->st, &rec, ops, n);
	}
settle:
	xtcam_trace("commit");
	e1 = two ? side_join(&sside) : c->linger ? 0 : xtcam_xdp_settle(c);
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
	for (i = 0; i < n && rec.nrules && xtcam_rule_handle_of(sorted[i]) <= rec.max_handle; i++) {
		struct xtcam_rule have;
		__u32 h = xtcam_rule_handle_of(sorted[i]);

		e = xtcam_state_rule_get(c->st, &rec, h, &have);
		if (!e) {
			xtcam_set_err(err, errlen, "block %s: handle %u is in use", block, h);
			return -EEXIST;
		}
		if (e != -ENOENT) {
			xtcam_set_err(err, errlen, "block %s: handle %u: cannot read it: %s", block,
				      h, strerror(-e));
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
		struct xtcam_rule rb;

		if (ops[i].cmd != XTCAM_RULE_DEL) {
			const struct xtcam_rule *r = xtcam_rule_view(ops[i].rule, &rb);

			e = xtcam_rule_compile(r, &tmp);
			if (e)
				xtcam_set_err(err, errlen, "rule handle %u: malformed", r->handle);
			entries += xtcam_rule_entries(r);
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

/* (handle, index) of a packed rule, sorted by handle */
struct hidx {
	__u32 handle;
	__u32 i;
};

static int cmp_hidx(const void *a, const void *b)
{
	const struct hidx *x = a, *y = b;

	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

/*
 * xtcam_cmd_rule_load() of packed rules.  A load that adds keeps them
 * packed to the end: the ops point at the pack's addresses, and every
 * reader of a rule through an op unpacks it (xtcam_rule_view).  A replace
 * compares the whole set with the block's, unpacked.
 */
int xtcam_cmd_rule_load_pack(struct xtcam_ctx *c, const char *block, struct xtcam_rpack *p,
			     bool replace, bool check, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	struct xtcam_rule **sorted;
	struct hidx *hx;
	size_t i, n = p->n;
	__u32 next;
	int e;

	if (replace) {
		struct xtcam_rule *rules = malloc((n + 1) * sizeof(*rules));

		if (!rules)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			xtcam_rpack_get(p, i, &rules[i]);
		e = xtcam_cmd_rule_load(c, block, rules, n, replace, check, err, errlen);
		free(rules);
		return e;
	}
	xtcam_trace("read");
	if (!xtcam_block_find(c->core, block)) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	e = xtcam_block_rec(c, block, &rec, err, errlen);
	if (e)
		return e;
	next = rec.max_handle;
	if (!p->nhandles) {
		/* no handle given: the file's order is the handles' */
		if (n > UINT32_MAX - next) {
			xtcam_set_err(err, errlen, "block %s: no handle left", block);
			return -ERANGE;
		}
		for (i = 0; i < n; i++)
			xtcam_rpack_set_handle(p, i, next + 1 + (__u32)i);
		hx = NULL;
		goto seal;
	}
	if (p->max_handle > next)
		next = p->max_handle;
	hx = malloc((n + 1) * sizeof(*hx));
	if (!hx)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		__u32 h = xtcam_rpack_handle(p, i);

		if (!h) {
			if (next == UINT32_MAX) {
				xtcam_set_err(err, errlen, "block %s: no handle left", block);
				free(hx);
				return -ERANGE;
			}
			h = ++next;
			xtcam_rpack_set_handle(p, i, h);
		}
		hx[i] = (struct hidx){ h, (__u32)i };
	}
	qsort(hx, n, sizeof(*hx), cmp_hidx);
	for (i = 1; i < n; i++)
		if (hx[i].handle == hx[i - 1].handle) {
			xtcam_set_err(err, errlen, "block %s: handle %u given twice", block,
				      hx[i].handle);
			free(hx);
			return -EEXIST;
		}
seal:
	e = xtcam_rpack_seal(p);
	sorted = e ? NULL : malloc((n + 1) * sizeof(*sorted));
	if (!e && !sorted)
		e = -ENOMEM;
	if (e) {
		xtcam_set_err(err, errlen, "block %s: %zu rules: %s", block, n, strerror(-e));
		free(hx);
		return e;
	}
	for (i = 0; i < n; i++)
		sorted[i] = xtcam_rpack_rule(p, hx ? hx[i].i : i);
	free(hx);
	/* the CLI's load: a big one returns at its commit point */
	c->finisher = true;
	e = load_add(c, block, sorted, n, check, err, errlen);
	c->finisher = false;
	free(sorted);
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

	/* a block longer than that: its counters read in the background
	 * from the start, needed once the first rules are out */
	if (!w->shown && w->rec->nrules > SHOW_ONE_BY_ONE)
		for (k = 0; k < w->c->nimpl; k++)
			if (w->c->impl[k]->counters_snapshot &&
			    w->c->impl[k]->counters_snapshot(w->v, &w->snaps[k]))
				w->snaps[k] = NULL;     /* one by one, then */
	if (!w->snapped && w->shown++ == SHOW_ONE_BY_ONE) {
		w->snapped = true;
		for (k = 0; k < w->c->nimpl; k++)
			if (w->snaps[k] && w->c->impl[k]->snapshot_wait &&
			    w->c->impl[k]->snapshot_wait(w->snaps[k])) {
				w->c->impl[k]->snapshot_free(w->snaps[k]);
				w->snaps[k] = NULL;
			}
	}
	if (w->raw) {
		struct xtcam_shown s = { r, &w->v->spec, 0, 0, -1 };
		struct xtcam_counter cnt;

		rule_counters(w->c, w->v, w->snapped ? w->snaps : NULL, r, &cnt);
		s.packets = cnt.packets;
		s.bytes = cnt.bytes;
		if (cnt.last_hit) {
			__u64 t = (__u64)w->now.tv_sec * 1000000000ull + (__u64)w->now.tv_nsec;

			s.last_used = t > cnt.last_hit ? (double)(t - cnt.last_hit) / 1e9 : 0;
		}
		e = w->raw(w->arg, &s);
	} else {
		o = rule_json(w->c, w->v, w->snapped ? w->snaps : NULL, r, &w->now);
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
