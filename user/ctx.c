// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The context every command works in: the registry, the flow_block core
 * and the backends, opened under the writers' lock (the commands are in
 * cmd_block.c, cmd_bind.c, cmd_rule.c and cmd_save.c).  Every invocation
 * rebuilds the part of the core it needs from bpffs (the named blocks, or all, and their bindings, restored
 * without replaying rules; the rules stay in the registry, the blocks'
 * rule source) and leaves the kernel objects in place when it exits.
 *
 * Crash safety: rule changes are staged in the registry's inactive
 * generation before the data paths change and committed after (see
 * state.h); a binding is recorded as pending before anything is attached.
 * The next invocation finds either and finishes or undoes them.
 */
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

static const struct xtcam_net host_id = { 0, 0 };

/* --- opening ------------------------------------------------------------ */

void xtcam_spec_of(const struct xtcam_block_rec *b, struct xtcam_block_spec *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", b->name);
	s->capacity = b->capacity;
	s->dflt = b->dflt;
	memcpy(s->raw, b->raw, sizeof(s->raw));
}

/* every block, or only those named? */
static bool all_blocks(const char *const *blocks)
{
	for (; blocks && *blocks; blocks++)
		if (!strcmp(*blocks, "*"))
			return true;
	return !blocks;
}

/* A block's rules in the registry, as the core's source of them: each
 * call reads the block's record for its active generation. */
struct reg_src {
	struct list_head node;          /* ctx->srcs */
	struct xtcam_ctx *c;
	char name[XTCAM_STATE_NAME];
};

static int reg_find(void *priv, __u32 handle, struct xtcam_rule *out)
{
	struct reg_src *s = priv;
	struct xtcam_block_rec rec;
	int e = xtcam_state_block_get(s->c->st, s->name, &rec);

	return e ? e : xtcam_state_rule_get(s->c->st, &rec, handle, out);
}

static int reg_fetch(void *priv, struct xtcam_rule **rules, size_t *n)
{
	struct reg_src *s = priv;
	struct xtcam_block_rec rec;
	int e = xtcam_state_block_get(s->c->st, s->name, &rec);

	return e ? e : xtcam_state_rules(s->c->st, &rec, false, rules, n);
}

/* the highest handle the block has held: above it every handle is free */
static __u32 reg_free_above(void *priv)
{
	struct reg_src *s = priv;
	struct xtcam_block_rec rec;

	return xtcam_state_block_get(s->c->st, s->name, &rec) ? 0 : rec.max_handle;
}

static int source_attach(struct xtcam_ctx *c, struct xtcam_block *b)
{
	struct reg_src *s = calloc(1, sizeof(*s));
	int e;

	if (!s)
		return -ENOMEM;
	s->c = c;
	snprintf(s->name, sizeof(s->name), "%s", b->spec.name);
	e = xtcam_block_source_set(b, &(struct xtcam_rule_source){ reg_find, reg_fetch, s,
								  reg_free_above });
	if (e) {
		free(s);
		return e;
	}
	list_add_tail(&s->node, &c->srcs);
	return 0;
}

/* The records of the blocks named (NULL-terminated), those that exist. */
static int named_blocks(struct xtcam_state *st, const char *const *names,
			struct xtcam_block_rec **out, size_t *n)
{
	size_t k = 0, i;
	struct xtcam_block_rec *r;
	int e;

	for (i = 0; names[i]; i++)
		;
	r = calloc(i + 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; names[i]; i++) {
		e = xtcam_state_block_get(st, names[i], &r[k]);
		if (!e)
			k++;
		else if (e != -ENOENT) {
			free(r);
			return e;
		}
	}
	*out = r;
	*n = k;
	return 0;
}

void xtcam_info_of(const struct xtcam_bind_rec *r, struct xtcam_attach_info *i)
{
	memset(i, 0, sizeof(*i));
	i->mode = r->attach_mode;
	i->dispatcher = r->dispatcher;
	i->prog_id = r->prog_id;
	i->ifindex = r->ifindex;
}

/* A bind that a crash interrupted: undo what it may have done.  An unbind
 * that a crash interrupted (XTCAM_BIND_UNBINDING): finish it, the same
 * way: detach the program if it is still there, forget the binding. */
void xtcam_undo_pending(struct xtcam_ctx *c, const struct xtcam_bind_key *k,
			 const struct xtcam_bind_rec *r)
{
	struct xtcam_attach_info info;
	char err[XTCAM_ERRMSG_MAX];
	int back;

	xtcam_info_of(r, &info);
	if (!xtcam_ns_enter_name(r->netns, &back, NULL, 0)) {
		struct xtcam_driver *d = xtcam_driver_of_mode(c, info.mode);
		size_t i;

		/* the program id not recorded: whatever a mode left there */
		for (i = 0; !info.prog_id && i < XTCAM_NDRIVERS; i++)
			c->drv[i].ops->undo(&c->drv[i], r->ifindex);
		if (info.prog_id && d)
			d->ops->detach(&info, err, sizeof(err));
		xtcam_ns_leave(back);
	}
	xtcam_state_binding_del(c->st, k);
}

void xtcam_unlock(struct xtcam_ctx *c)
{
	if (c)
		xtcam_state_unlock(c->st);
}

/*
 * Contexts kept between commands of one process (xtcam_keep_contexts): the
 * context a command closes is kept, without the lock, and the next open
 * with the same flags and blocks takes it again, once it holds the lock,
 * if nobody wrote to the registry meanwhile (its generation, see state.h,
 * is the one it was left with, in the registry still pinned).  Otherwise
 * it is closed and the open reads the state as always.
 */
static struct {
	bool on;
	struct xtcam_ctx *open;         /* the context of the last open ... */
	char *open_key;                 /* ... and its flags and blocks */
	struct xtcam_ctx *kept;         /* closed and kept, unlocked */
	char *kept_key;
	__u64 gen;
	bool gen_ok;
} keep;

static void ctx_free(struct xtcam_ctx *c);

/* "flags|name|name|" or "flags|*" */
static char *keep_key(unsigned int flags, const char *const *blocks)
{
	size_t len = 0;
	char *s = NULL;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	fprintf(f, "%u|", flags);
	if (all_blocks(blocks))
		fputs("*", f);
	else
		for (; *blocks; blocks++)
			fprintf(f, "%s|", *blocks);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

static void keep_drop(void)
{
	if (keep.kept) {
		char err[XTCAM_ERRMSG_MAX];

		/* (under the lock, as every close) */
		xtcam_state_lock(keep.kept->st, err, sizeof(err));
		ctx_free(keep.kept);
	}
	free(keep.kept_key);
	keep.kept = NULL;
	keep.kept_key = NULL;
}

void xtcam_keep_contexts(bool on)
{
	keep_drop();
	if (!on) {
		free(keep.open_key);
		keep.open_key = NULL;
		keep.open = NULL;
	}
	keep.on = on;
}

/* At open: the kept context, when it is current for these flags and
 * blocks (then locked), else NULL (and the kept one closed). */
static struct xtcam_ctx *keep_take(unsigned int flags, const char *const *blocks)
{
	struct xtcam_ctx *c = keep.kept;
	char err[XTCAM_ERRMSG_MAX], *key;
	__u64 g;

	if (!c)
		return NULL;
	key = keep_key(flags, blocks);
	if (key && keep.kept_key && !strcmp(key, keep.kept_key) && keep.gen_ok &&
	    !xtcam_state_lock(c->st, err, sizeof(err)) &&
	    !xtcam_state_gen_current(c->st, &g) && g == keep.gen) {
		keep.kept = NULL;
		free(keep.kept_key);
		keep.kept_key = NULL;
		free(keep.open_key);
		keep.open = c;
		keep.open_key = key;
		return c;
	}
	free(key);
	keep_drop();
	return NULL;
}

void xtcam_close(struct xtcam_ctx *c)
{
	if (!c)
		return;
	xtcam_rules_join(c);
	if (keep.on && c == keep.open && !(c->flags & XTCAM_OPEN_READ) && !c->finished) {
		keep_drop();
		keep.gen_ok = !xtcam_state_gen(c->st, &keep.gen);
		xtcam_state_unlock(c->st);
		keep.kept = c;
		keep.kept_key = keep.open_key;
		keep.open = NULL;
		keep.open_key = NULL;
		xtcam_trace("command");
		return;
	}
	if (c == keep.open) {
		free(keep.open_key);
		keep.open = NULL;
		keep.open_key = NULL;
	}
	ctx_free(c);
}

static void ctx_free(struct xtcam_ctx *c)
{
	xtcam_trace("command");
	if (c->core && !IS_ERR(c->core))
		xtcam_core_free(c->core);   /* unbinds with keep: kernel state stays */
	xtcam_drivers_fini(c);
	xtcam_state_close(c->st);
	while (!list_empty(&c->srcs)) {
		struct reg_src *s = list_first_entry(&c->srcs, struct reg_src, node);

		list_del(&s->node);
		free(s);
	}
	free(c);
	xtcam_trace("close");
}

int xtcam_open(struct xtcam_ctx **out, unsigned int flags, const char *const *blocks,
	       char *err, size_t errlen)
{
	struct xtcam_ctx *c;
	struct xtcam_block_rec *brecs = NULL;
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *recs = NULL;
	size_t nb = 0, nk = 0, i;
	bool *dirty = NULL, all = all_blocks(blocks);
	int e;

	if (keep.on && (c = keep_take(flags, blocks))) {
		*out = c;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	INIT_LIST_HEAD(&c->srcs);
	c->flags = flags;
	xtcam_drivers_init(c);
	xtcam_trace("start");
	if (flags & XTCAM_OPEN_READ) {
		/* a reader of the registry alone: nothing to restore or repair */
		e = xtcam_state_open_ro(&c->st, err, errlen);
		if (e)
			goto fail;
		*out = c;
		return 0;
	}
	e = xtcam_state_open(&c->st, flags & XTCAM_OPEN_CREATE, err, errlen);
	if (e)
		goto fail;
	xtcam_trace("lock");
	c->core = xtcam_core_new();
	if (IS_ERR(c->core)) {
		e = (int)PTR_ERR(c->core);
		c->core = NULL;
		goto fail;
	}
	c->host_net = xtcam_core_net_get(c->core, &host_id);
	if (!c->host_net || xtcam_drivers_register(c)) {
		e = -ENOMEM;
		goto fail;
	}

	e = all ? xtcam_state_blocks(c->st, &brecs, &nb) :
		  named_blocks(c->st, blocks, &brecs, &nb);
	if (e) {
		xtcam_set_err(err, errlen, "registry: cannot read blocks: %s", strerror(-e));
		goto fail;
	}
	xtcam_trace("registry");
	dirty = calloc(nb + 1, sizeof(*dirty));
	if (!dirty) {
		e = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < nb; i++) {
		struct xtcam_block_spec spec;
		struct xtcam_block *b;

		if (brecs[i].dirty == XTCAM_BLOCK_DYING) {
			/* a block del cut short: finish it (past its commit) */
			e = xtcam_state_block_del(c->st, &brecs[i]);
			if (e) {
				xtcam_set_err(err, errlen, "block %s: finishing its delete: %s",
					brecs[i].name, strerror(-e));
				goto fail;
			}
			memmove(&brecs[i], &brecs[i + 1], (nb - i - 1) * sizeof(*brecs));
			nb--;
			i--;
			continue;
		}
		/* (a copy of a commit left undone, XTCAM_BLOCK_BEHIND, is the
		 * next change's: xtcam_state_rules_stage) */
		if (brecs[i].dirty && brecs[i].dirty != XTCAM_BLOCK_BEHIND) {
			/* a rule change was interrupted: back to the last commit */
			e = xtcam_state_rules_recover(c->st, &brecs[i]);
			if (e) {
				xtcam_set_err(err, errlen, "block %s: recovery: %s", brecs[i].name,
					e == -ETIMEDOUT && c->st->why[0] ? c->st->why :
					strerror(-e));
				goto fail;
			}
			dirty[i] = true;
		}
		xtcam_spec_of(&brecs[i], &spec);
		b = xtcam_block_add(c->core, &spec);
		if (IS_ERR(b)) {
			e = (int)PTR_ERR(b);
			xtcam_set_err(err, errlen, "block %s: %s", brecs[i].name, strerror(-e));
			goto fail;
		}
		e = source_attach(c, b);
		/* after a crash the data paths are brought back to the rules */
		if (!e && dirty[i])
			e = xtcam_block_rules_fetch(b, err, errlen);
		if (e) {
			if (e == -ENOMEM)
				xtcam_set_err(err, errlen, "block %s: out of memory", brecs[i].name);
			goto fail;
		}
	}

	xtcam_trace("core");
	e = xtcam_state_bindings(c->st, &keys, &recs, &nk);
	if (e) {
		xtcam_set_err(err, errlen, "registry: cannot read bindings: %s", strerror(-e));
		goto fail;
	}
	for (i = 0; i < nk; i++) {
		struct xtcam_block *b = xtcam_block_find(c->core, recs[i].block);
		struct xtcam_driver *d = xtcam_driver_named(c, recs[i].mode);
		struct xtcam_net id = { keys[i].ns_dev, keys[i].ns_ino };
		struct xtcam_dev *dev;
		char msg[XTCAM_ERRMSG_MAX] = "";

		if (!b && !all && recs[i].state == XTCAM_BIND_ACTIVE)
			continue;               /* another block's */
		if (recs[i].state != XTCAM_BIND_ACTIVE || !b || !d) {
			xtcam_undo_pending(c, &keys[i], &recs[i]);
			continue;
		}
		if (d->ops->restore_needs_rules && (e = xtcam_block_rules_fetch(b, err, errlen)))
			goto fail;
		dev = xtcam_core_dev_get(c->core, &id, keys[i].ifindex);
		if (!dev) {
			e = -ENOMEM;
			goto fail;
		}
		c->req.netns = recs[i].netns;
		c->req.dev = recs[i].dev;
		snprintf(c->req.offload, sizeof(c->req.offload), "%s", recs[i].offload);
		e = xtcam_bind(c->core, b, dev, &d->be, recs[i].binder, XTCAM_BIND_RESTORE, msg,
			       sizeof(msg));
		c->req.netns = NULL;
		c->req.offload[0] = 0;
		if (e) {
			xtcam_set_err(err, errlen, "binding %s of block %s: cannot restore it: %s",
				recs[i].dev, recs[i].block, msg[0] ? msg : strerror(-e));
			goto fail;
		}
	}
	/* what a bind that never completed left pinned */
	for (i = 0; i < nb; i++) {
		struct xtcam_block *b = xtcam_block_find(c->core, brecs[i].name);
		size_t k;

		for (k = 0; b && !b->nbindings && k < c->nimpl; k++)
			c->impl[k]->orphans(c, brecs[i].name);
	}
	/* data paths after an interrupted change: back to the registry */
	for (i = 0; i < nb; i++) {
		struct xtcam_block *b = xtcam_block_find(c->core, brecs[i].name);
		size_t k;

		for (k = 0; dirty[i] && b && k < c->nimpl; k++)
			if ((e = c->impl[k]->reconcile(b, err, errlen)))
				goto fail;
	}
	/* a restore that did not commit: none of it */
	e = xtcam_restore_recover(c, err, errlen);
	if (e)
		goto fail;
	xtcam_trace("restore");
	free(brecs);
	free(keys);
	free(recs);
	free(dirty);
	if (keep.on) {
		free(keep.open_key);
		keep.open_key = keep_key(flags, blocks);
		keep.open = keep.open_key ? c : NULL;
	}
	*out = c;
	return 0;
fail:
	free(brecs);
	free(keys);
	free(recs);
	free(dirty);
	xtcam_close(c);
	return e;
}
