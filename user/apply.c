// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * apply: make the blocks a file of `xtcam save` names equal to the file,
 * changing only what differs.
 *
 * First a plan, which changes nothing: per block of the file, whether it
 * is new, has other settings (capacity, default, raw fields: then it is
 * made again, bindings and all) or is there; the rules that differ, by
 * handle; the bindings that differ, by block, device and namespace.  The
 * rule changes of every block are checked as `rule load ... check` checks
 * them.  Then, unless only checking: new and remade blocks, rule changes
 * (one atomic change per block, as `rule load ... replace`), unbinds,
 * binds, and with prune the blocks the file does not name.  A rule or a
 * binding that is as the file has it is not touched: its counters and its
 * XDP program stay.
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

enum blk_state { BLK_SAME, BLK_NEW, BLK_REMAKE };

struct ap_block {
	struct rs_block *f;             /* of the file */
	enum blk_state state;
	size_t nchg;                    /* rule changes */
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
	bool *gone;                     /* per file binding: its device is not there */
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

static void error(struct ap *a, int e, const char *msg)
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

static int cmp_handle(const void *x, const void *y)
{
	__u32 p = ((const struct xtcam_rule *)x)->handle, q = ((const struct xtcam_rule *)y)->handle;

	return p < q ? -1 : p > q;
}

/* Handles for the rules without one, as `rule load ... replace` gives
 * them (after the highest of the file's), and the rules in handle order;
 * a handle twice is an error. */
static int handles(struct rs_block *f, char *err, size_t errlen)
{
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
	qsort(f->rules, f->n, sizeof(*f->rules), cmp_handle);
	for (i = 1; i < f->n; i++)
		if (f->rules[i].handle == f->rules[i - 1].handle) {
			xtcam_set_err(err, errlen, "block %s: handle %u given twice", f->spec.name,
				      f->rules[i].handle);
			return -EEXIST;
		}
	return 0;
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

/* The rule changes of a block that is there; counted and said. */
static void rule_diff(struct ap *a, struct ap_block *ab)
{
	struct xtcam_block *b = xtcam_block_find(a->c->core, ab->f->spec.name);
	size_t nr = b ? xtcam_block_rule_count(b) : 0, i, before = a->res->changes;

	for (i = 0; i < nr; i++) {
		const struct xtcam_rule *o = xtcam_block_rule_at(b, i);

		if (!bsearch(o, ab->f->rules, ab->f->n, sizeof(*ab->f->rules), cmp_handle))
			say(a, "rule del %s handle %u", ab->f->spec.name, o->handle);
	}
	for (i = 0; i < ab->f->n; i++) {
		const struct xtcam_rule *r = &ab->f->rules[i];
		const struct xtcam_rule *o = b ? xtcam_block_rule_find(b, r->handle) : NULL;

		if (!o)
			say_rule(a, "add", ab->f, r);
		else if (!xtcam_rule_equal(o, r))
			say_rule(a, "replace", ab->f, r);
	}
	ab->nchg = a->res->changes - before;
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
		e = handles(ab->f, a->err, a->errlen);
		if (e)
			return e;
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
	if (e)
		return e;
	for (i = 0; i < rs->nb; i++) {
		struct ap_block *ab = &a->blocks[i];
		char text[XTCAM_RULE_TEXT_MAX];
		size_t j;

		if (a->o->bindings_for)
			break;
		if (ab->state == BLK_SAME) {
			rule_diff(a, ab);
			if (!ab->nchg)
				continue;
			/* what `rule load ... replace check` refuses fails here */
			e = xtcam_cmd_rule_load(a->c, ab->f->spec.name, ab->f->rules, ab->f->n, true,
						true, a->err, a->errlen);
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
		error(a, e, msg);
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
		error(a, e, full);
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
				error(a, e, msg);
				ab->failed = true;
				continue;
			}
		}
		if (ab->state != BLK_SAME) {
			ab->failed = make_block(a, ab) != 0;
			continue;
		}
		if (!ab->nchg)
			continue;
		e = xtcam_cmd_rule_load(a->c, ab->f->spec.name, ab->f->rules, ab->f->n, true, false,
					msg, sizeof(msg));
		if (e)
			error(a, e, msg);
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
			error(a, e, full);
		}
	}
	for (i = 0; a->o->prune && i < a->nrecs; i++) {
		char name[XTCAM_STATE_NAME + 1];

		snprintf(name, sizeof(name), "%.*s", XTCAM_STATE_NAME, a->recs[i].name);
		if (file_block(a, name))
			continue;
		e = xtcam_cmd_block_del(a->c, name, msg, sizeof(msg));
		if (e)
			error(a, e, msg);
	}
}

int xtcam_cmd_apply(struct xtcam_ctx *c, const struct xtcam_restore *rs,
		    const struct xtcam_apply_opts *opts, struct xtcam_apply_result *res,
		    char *err, size_t errlen)
{
	struct ap a = { .c = c, .rs = rs, .o = opts, .res = res, .err = err, .errlen = errlen };
	int e;

	memset(res, 0, sizeof(*res));
	a.blocks = calloc(rs->nb + 1, sizeof(*a.blocks));
	a.bind = calloc(rs->nbind + 1, sizeof(*a.bind));
	a.gone = calloc(rs->nbind + 1, sizeof(*a.gone));
	if (!a.blocks || !a.bind || !a.gone) {
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
	free(a.blocks);
	free(a.bind);
	free(a.gone);
	free(a.unbind);
	free(a.recs);
	free(a.bkeys);
	free(a.brecs);
	return e;
}
