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
#include <xdp/libxdp.h>
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

static int source_attach(struct xtcam_ctx *c, struct xtcam_block *b)
{
	struct reg_src *s = calloc(1, sizeof(*s));
	int e;

	if (!s)
		return -ENOMEM;
	s->c = c;
	snprintf(s->name, sizeof(s->name), "%s", b->spec.name);
	e = xtcam_block_source_set(b, &(struct xtcam_rule_source){ reg_find, reg_fetch, s });
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

struct xtcam_backend *xtcam_backend_named(struct xtcam_ctx *c, const char *mode)
{
	if (!strcmp(mode, "hw"))
		return &c->be_hw;
	if (!strcmp(mode, "native"))
		return &c->be_native;
	if (!strcmp(mode, "generic"))
		return &c->be_generic;
	return NULL;
}

void xtcam_info_of(const struct xtcam_bind_rec *r, struct xtcam_attach_info *i)
{
	memset(i, 0, sizeof(*i));
	i->mode = r->attach_mode;
	i->dispatcher = r->dispatcher;
	i->prog_id = r->prog_id;
	i->ifindex = r->ifindex;
}

/* An xtcam parser attached to ifindex (this namespace), if any: a bind
 * that crashed after attaching but before recording the program id. */
static bool find_orphan(__u32 ifindex, struct xtcam_attach_info *info)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex((int)ifindex);
	struct xdp_program *p = NULL;
	bool found = false;

	if (libxdp_get_error(mp) || !mp)
		return false;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		found = p && !strcmp(xdp_program__name(p), "xtcam_parse");
	} else {
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (!strcmp(xdp_program__name(p), "xtcam_parse")) {
				found = true;
				break;
			}
	}
	if (found) {
		enum xdp_attach_mode m = xdp_multiprog__attach_mode(mp);

		info->prog_id = xdp_program__id(p);
		info->ifindex = ifindex;
		info->dispatcher = !xdp_multiprog__is_legacy(mp);
		info->mode = m == XDP_MODE_SKB ? XTCAM_MODE_GENERIC : XTCAM_MODE_NATIVE;
	}
	xdp_multiprog__close(mp);
	return found;
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
		if (!info.prog_id) {
			find_orphan(r->ifindex, &info);
			xtcam_hw_undo(r->ifindex);
		}
		if (info.prog_id && info.mode == XTCAM_MODE_HW)
			xtcam_hw_detach(&info, err, sizeof(err));
		else if (info.prog_id)
			xtcam_detach(&info, err, sizeof(err));
		xtcam_ns_leave(back);
	}
	xtcam_state_binding_del(c->st, k);
}

void xtcam_unlock(struct xtcam_ctx *c)
{
	if (c)
		xtcam_state_unlock(c->st);
}

void xtcam_close(struct xtcam_ctx *c)
{
	if (!c)
		return;
	xtcam_trace("command");
	if (c->core && !IS_ERR(c->core))
		xtcam_core_free(c->core);   /* unbinds with keep: kernel state stays */
	xtcam_hw_ctx_free(c);
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
	struct xtcam_ctx *c = calloc(1, sizeof(*c));
	struct xtcam_block_rec *brecs = NULL;
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *recs = NULL;
	size_t nb = 0, nk = 0, i;
	bool *dirty = NULL, all = all_blocks(blocks);
	int e;

	if (!c)
		return -ENOMEM;
	INIT_LIST_HEAD(&c->xdp_list);
	INIT_LIST_HEAD(&c->hw_list);
	INIT_LIST_HEAD(&c->hw_idents);
	INIT_LIST_HEAD(&c->srcs);
	c->flags = flags;
	c->be_hw = (struct xtcam_backend){ "hw", xtcam_hw_setup, c };
	c->be_native = (struct xtcam_backend){ "native", xtcam_xdp_setup, c };
	c->be_generic = (struct xtcam_backend){ "generic", xtcam_xdp_setup, c };
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
	if (!c->host_net || xtcam_core_backend_add(c->core, &c->be_hw) ||
	    xtcam_core_backend_add(c->core, &c->be_native) ||
	    xtcam_core_backend_add(c->core, &c->be_generic)) {
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
		if (brecs[i].dirty) {
			/* a rule change was interrupted: back to the last commit */
			e = xtcam_state_rules_recover(c->st, &brecs[i]);
			if (e) {
				xtcam_set_err(err, errlen, "block %s: recovery: %s", brecs[i].name,
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
		struct xtcam_backend *be = xtcam_backend_named(c, recs[i].mode);
		struct xtcam_net id = { keys[i].ns_dev, keys[i].ns_ino };
		struct xtcam_dev *dev;
		char msg[XTCAM_ERRMSG_MAX] = "";

		if (!b && !all && recs[i].state == XTCAM_BIND_ACTIVE)
			continue;               /* another block's */
		if (recs[i].state != XTCAM_BIND_ACTIVE || !b || !be) {
			xtcam_undo_pending(c, &keys[i], &recs[i]);
			continue;
		}
		/* the hw backend rebuilds its image of the device from them */
		if (be == &c->be_hw && (e = xtcam_block_rules_fetch(b, err, errlen)))
			goto fail;
		dev = xtcam_core_dev_get(c->core, &id, keys[i].ifindex);
		if (!dev) {
			e = -ENOMEM;
			goto fail;
		}
		c->req.netns = recs[i].netns;
		c->req.dev = recs[i].dev;
		snprintf(c->req.offload, sizeof(c->req.offload), "%s", recs[i].offload);
		e = xtcam_bind(c->core, b, dev, be, recs[i].binder, XTCAM_BIND_RESTORE, msg,
			       sizeof(msg));
		c->req.netns = NULL;
		c->req.offload[0] = 0;
		if (e) {
			xtcam_set_err(err, errlen, "binding %s of block %s: cannot restore it: %s",
				recs[i].dev, recs[i].block, msg[0] ? msg : strerror(-e));
			goto fail;
		}
	}
	/* a data path left pinned by a bind that never completed */
	for (i = 0; i < nb; i++) {
		struct xtcam_block *b = xtcam_block_find(c->core, brecs[i].name);
		char dir[256];
		struct stat sb;

		if (b && !b->nbindings)
			xtcam_hw_orphans(c, brecs[i].name);
		if (b && !b->nbindings &&
		    !xtcam_state_block_dir(c->st, brecs[i].name, "xdp", dir, sizeof(dir)) &&
		    !stat(dir, &sb)) {
			xtcam_dp_unpin(dir);
			xtcam_state_block_dir(c->st, brecs[i].name, NULL, dir, sizeof(dir));
			rmdir(dir);
		}
	}
	/* data paths after an interrupted change: back to the registry */
	for (i = 0; i < nb; i++) {
		struct xtcam_block *b = xtcam_block_find(c->core, brecs[i].name);
		struct xdp_blk *x;

		if (!dirty[i] || !b)
			continue;
		x = xtcam_xdp_blk(b);
		if (x && (e = xtcam_xdp_reconcile(x, err, errlen)))
			goto fail;
		if ((e = xtcam_hw_reconcile(b, err, errlen)))
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
