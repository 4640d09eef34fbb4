// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The loader: the CLI's operations on the registry, the flow_block core
 * and the backends.  Every invocation rebuilds the part of the core it
 * needs from bpffs (the named blocks, or all, and their bindings, restored
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

static void spec_of(const struct xtcam_block_rec *b, struct xtcam_block_spec *s)
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

static struct xtcam_backend *backend_named(struct xtcam_ctx *c, const char *mode)
{
	if (!strcmp(mode, "hw"))
		return &c->be_hw;
	if (!strcmp(mode, "native"))
		return &c->be_native;
	if (!strcmp(mode, "generic"))
		return &c->be_generic;
	return NULL;
}

static void info_of(const struct xtcam_bind_rec *r, struct xtcam_attach_info *i)
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
static void undo_pending(struct xtcam_ctx *c, const struct xtcam_bind_key *k,
			 const struct xtcam_bind_rec *r)
{
	struct xtcam_attach_info info;
	char err[XTCAM_ERRMSG_MAX];
	int back;

	info_of(r, &info);
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
		spec_of(&brecs[i], &spec);
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
		struct xtcam_backend *be = backend_named(c, recs[i].mode);
		struct xtcam_net id = { keys[i].ns_dev, keys[i].ns_ino };
		struct xtcam_dev *dev;
		char msg[XTCAM_ERRMSG_MAX] = "";

		if (!b && !all && recs[i].state == XTCAM_BIND_ACTIVE)
			continue;               /* another block's */
		if (recs[i].state != XTCAM_BIND_ACTIVE || !b || !be) {
			undo_pending(c, &keys[i], &recs[i]);
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

/* --- blocks ------------------------------------------------------------- */

static int block_rec(struct xtcam_ctx *c, const char *name, struct xtcam_block_rec *rec,
		     char *err, size_t errlen)
{
	int e = xtcam_state_block_get(c->st, name, rec);

	if (e == -ENOENT)
		xtcam_set_err(err, errlen, "block %s: no such block", name);
	else if (e)
		xtcam_set_err(err, errlen, "block %s: %s", name, strerror(-e));
	return e;
}

int xtcam_block_spec_get(struct xtcam_ctx *c, const char *block, struct xtcam_block_spec *spec)
{
	struct xtcam_block_rec rec;
	int e = xtcam_state_block_get(c->st, block, &rec);

	if (!e)
		spec_of(&rec, spec);
	return e;
}

/* A block's maps are pinned in a folder named after it, beside the
 * registry's pins: bpffs refuses a '.' in a name (the bind would fail with
 * EPERM), and a registry name would be taken for the registry. */
static int block_name_pinnable(const char *name, char *err, size_t errlen)
{
	static const char *const taken[] = { "blocks", "bindings", "ranks", "rules", "rules0",
					     "rules1" };
	size_t i;

	if (strchr(name, '.')) {
		xtcam_set_err(err, errlen, "block name %s: a '.' cannot be pinned in bpffs "
			      "(use A-Z a-z 0-9 _ -)", name);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		if (!strcmp(name, taken[i])) {
			xtcam_set_err(err, errlen, "block name %s: the registry's own name", name);
			return -EINVAL;
		}
	}
	return 0;
}

int xtcam_cmd_block_add(struct xtcam_ctx *c, const struct xtcam_block_spec *spec,
			char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	struct xtcam_block *b;
	int e;

	e = xtcam_name_check(spec->name, err, errlen);
	if (e)
		return e;
	e = block_name_pinnable(spec->name, err, errlen);
	if (e)
		return e;
	if (!xtcam_state_block_get(c->st, spec->name, &rec)) {
		xtcam_set_err(err, errlen, "block %s: exists", spec->name);
		return -EEXIST;
	}
	if (spec->capacity < 1 || spec->capacity > XTCAM_MAX_CAPACITY) {
		xtcam_set_err(err, errlen, "block %s: capacity %u is out of range (1-%u)", spec->name,
			spec->capacity, XTCAM_MAX_CAPACITY);
		return -EINVAL;
	}
	b = xtcam_block_add(c->core, spec);
	if (IS_ERR(b)) {
		e = (int)PTR_ERR(b);
		xtcam_set_err(err, errlen, "block %s: %s", spec->name, strerror(-e));
		return e;
	}
	memset(&rec, 0, sizeof(rec));
	snprintf(rec.name, sizeof(rec.name), "%s", spec->name);
	rec.id = xtcam_state_next_block_id(c->st);
	e = xtcam_state_index_init(c->st, rec.id);
	if (e) {
		xtcam_set_err(err, errlen, "block %s: cannot record it: %s", spec->name, strerror(-e));
		return e;
	}
	rec.capacity = spec->capacity;
	rec.dflt = spec->dflt;
	if (!rec.dflt.type)
		rec.dflt.type = XTCAM_ACT_PASS;
	memcpy(rec.raw, spec->raw, sizeof(rec.raw));
	e = xtcam_state_block_put(c->st, &rec);
	if (e)
		xtcam_set_err(err, errlen, "block %s: cannot record it: %s", spec->name, strerror(-e));
	return e;
}

int xtcam_cmd_block_del(struct xtcam_ctx *c, const char *name, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	struct xtcam_block *b;
	int e = block_rec(c, name, &rec, err, errlen);

	if (e)
		return e;
	b = xtcam_block_find(c->core, name);
	if (b && b->nbindings) {
		xtcam_set_err(err, errlen, "block %s: bound to %u device%s: unbind first", name,
			b->nbindings, b->nbindings == 1 ? "" : "s");
		return -EBUSY;
	}
	e = xtcam_block_del(c->core, name);
	if (e && e != -ENOENT) {
		xtcam_set_err(err, errlen, "block %s: %s", name, strerror(-e));
		return e;
	}
	e = xtcam_state_block_del(c->st, &rec);
	if (e)
		xtcam_set_err(err, errlen, "block %s: %s", name, strerror(-e));
	return e;
}

static json_object *jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

/* is the attachment recorded in rec still there? */
static bool binding_gone(const struct xtcam_bind_rec *r)
{
	struct xtcam_net id;
	struct xtcam_attach_info info;
	int nsfd, back, ok = 0;
	char dev[32];

	if (xtcam_ns_open(r->netns, &nsfd, &id, NULL, 0))
		return true;                    /* namespace gone */
	if (id.dev != r->ns_dev || id.ino != r->ns_ino) {
		close(nsfd);
		return true;                    /* a new one under the old name */
	}
	if (!xtcam_ns_enter(nsfd, &back)) {
		info_of(r, &info);
		if (!strcmp(r->mode, "hw"))
			ok = xtcam_hw_attached(&info) == 1;
		else
			ok = xtcam_attach_check(&info) == 1;
		xtcam_ns_leave(back);
	}
	close(nsfd);
	if (ok && xtcam_ns_ifname(r->netns, r->ifindex, dev, sizeof(dev)))
		ok = 0;
	if (ok && strcmp(dev, r->dev))
		ok = 0;                          /* ifindex reused by another device */
	return !ok;
}

static json_object *binding_json(const struct xtcam_bind_rec *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "dev", jstr(r->dev));
	json_object_object_add(o, "netns", jstr(r->netns));
	json_object_object_add(o, "mode", jstr(r->mode));
	json_object_object_add(o, "requested", jstr(r->requested));
	json_object_object_add(o, "refused", jstr(r->refused));
	json_object_object_add(o, "note", jstr(r->note));
	json_object_object_add(o, "offload", jstr(r->offload));
	json_object_object_add(o, "dispatcher", json_object_new_boolean(r->dispatcher));
	json_object_object_add(o, "state", jstr(binding_gone(r) ? "gone" : "active"));
	return o;
}

/*
 * Notes on what the block's bindings make of its rules where frames vanish
 * after a rule counted them (vanish.c): redirects from a native binding to
 * a veth whose peer drops them, `cpu N` from a generic binding, and from a
 * native one on a veth whose peer sends with partial checksums.  The
 * devices are looked at first (the data path's redirect targets, at most
 * XTCAM_MAX_TARGETS, and the bindings); only when one of them would drop
 * frames are the rules read, to see whether any rule sends frames there.
 */
static json_object *block_notes(struct xtcam_ctx *c, struct xtcam_block *blk,
				const struct xtcam_block_rec *brec,
				const struct xtcam_bind_rec *recs, size_t nk)
{
	struct xdp_blk *x = xtcam_xdp_blk(blk);
	json_object *notes = json_object_new_array();
	char tnote[XTCAM_MAX_TARGETS][XTCAM_MSG_MAX], note[XTCAM_MSG_MAX];
	struct xtcam_target tg[XTCAM_MAX_TARGETS];
	const struct xtcam_rule *core_rules = NULL;
	struct xtcam_rule *rules = NULL;
	bool native = false, generic = false, cpu = false, want_cpu = false;
	size_t n = 0, i, k, ntg = 0;
	__u32 slot;
	int tfd;

	if (!x)
		return notes;
	for (k = 0; k < nk; k++) {
		if (recs[k].state != XTCAM_BIND_ACTIVE || strcmp(recs[k].block, blk->spec.name))
			continue;
		native |= !strcmp(recs[k].mode, "native");
		generic |= !strcmp(recs[k].mode, "generic");
	}
	tfd = xtcam_dp_map_fd(x->dp, XTCAM_MAP_TARGETS);
	for (slot = 0; native && slot < XTCAM_MAX_TARGETS; slot++) {
		struct xtcam_target t;

		if (bpf_map_lookup_elem(tfd, &slot, &t) || !t.used)
			continue;
		t.netns[sizeof(t.netns) - 1] = 0;
		t.dev[sizeof(t.dev) - 1] = 0;
		if (xtcam_redirect_note(t.netns, t.dev, tnote[ntg], sizeof(tnote[ntg])) == 1)
			tg[ntg++] = t;
	}
	want_cpu = generic;
	for (k = 0; native && !want_cpu && k < nk; k++)
		if (recs[k].state == XTCAM_BIND_ACTIVE && !strcmp(recs[k].block, blk->spec.name) &&
		    !strcmp(recs[k].mode, "native"))
			want_cpu = xtcam_cpu_note(recs[k].netns, recs[k].dev, note, sizeof(note)) == 1;
	if (!ntg && !want_cpu)
		return notes;

	/* which of them do the rules use? */
	/* a show loads no block's rules into the core: read them here */
	n = xtcam_block_rule_count(blk);
	if (n != brec->nrules && xtcam_state_rules(c->st, brec, false, &rules, &n)) {
		rules = NULL;
		n = xtcam_block_rule_count(blk);
	}
	for (i = 0; i < n; i++) {
		const struct xtcam_rule_action *a;

		if (!rules)
			core_rules = xtcam_block_rule_at(blk, i);
		a = rules ? &rules[i].action : &core_rules->action;
		cpu |= a->type == XTCAM_ACT_CPU;
		if (a->type != XTCAM_ACT_REDIRECT)
			continue;
		for (k = 0; k < ntg; k++)
			if (tnote[k][0] && !strcmp(tg[k].dev, a->dev) &&
			    !strcmp(tg[k].netns, a->netns[0] ? a->netns : x->default_ns)) {
				json_object_array_add(notes, json_object_new_string(tnote[k]));
				tnote[k][0] = 0;        /* once */
			}
	}
	free(rules);
	for (k = 0; cpu && k < nk; k++) {
		if (recs[k].state != XTCAM_BIND_ACTIVE || strcmp(recs[k].block, blk->spec.name))
			continue;
		if (!strcmp(recs[k].mode, "generic")) {
			snprintf(note, sizeof(note), "action cpu on %s%s%s (generic): frames a generic "
				 "binding sends to another CPU can be dropped by the kernel after the "
				 "switch (IpInHdrErrors) while the rule counts them; bind native",
				 recs[k].dev, recs[k].netns[0] ? " netns " : "", recs[k].netns);
			json_object_array_add(notes, json_object_new_string(note));
		} else if (!strcmp(recs[k].mode, "native") &&
			   xtcam_cpu_note(recs[k].netns, recs[k].dev, note, sizeof(note)) == 1) {
			json_object_array_add(notes, json_object_new_string(note));
		}
	}
	return notes;
}

int xtcam_cmd_block_show(struct xtcam_ctx *c, const char *name, json_object **out,
			 char *err, size_t errlen)
{
	struct xtcam_block_rec *b = NULL;
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *recs = NULL;
	size_t nb, nk, i, j;
	json_object *arr;
	int e;

	if (name) {
		struct xtcam_block_rec one;

		e = block_rec(c, name, &one, err, errlen);
		if (e)
			return e;
	}
	e = xtcam_state_blocks(c->st, &b, &nb);
	if (!e)
		e = xtcam_state_bindings(c->st, &keys, &recs, &nk);
	if (e) {
		xtcam_set_err(err, errlen, "registry: %s", strerror(-e));
		free(b);
		return e;
	}
	arr = json_object_new_array();
	for (i = 0; i < nb; i++) {
		json_object *o, *bd;
		struct xtcam_block *blk;
		struct xdp_blk *x;
		struct xtcam_counter miss = { 0 };
		struct xtcam_block_spec spec;

		if (name && strcmp(b[i].name, name))
			continue;
		spec_of(&b[i], &spec);
		o = xtcam_block_spec_json(&spec);
		json_object_object_add(o, "rules", json_object_new_int64(b[i].nrules));
		json_object_object_add(o, "entries", json_object_new_int64(b[i].nentries));
		blk = xtcam_block_find(c->core, b[i].name);
		x = blk ? xtcam_xdp_blk(blk) : NULL;
		if (x)
			xtcam_dp_stat(x->dp, XTCAM_STAT_MISS, &miss);
		json_object_object_add(o, "misses", json_object_new_int64((int64_t)miss.packets));
		json_object_object_add(o, "miss_bytes", json_object_new_int64((int64_t)miss.bytes));
		if (x) {
			struct xtcam_dp_info info;

			if (!xtcam_dp_info(x->dp, &info, false))
				json_object_object_add(o, "tuples", json_object_new_int64(info.ntuples));
		}
		bd = json_object_new_array();
		for (j = 0; j < nk; j++)
			if (recs[j].state == XTCAM_BIND_ACTIVE && !strcmp(recs[j].block, b[i].name))
				json_object_array_add(bd, binding_json(&recs[j]));
		json_object_object_add(o, "bindings", bd);
		if (blk) {
			json_object *notes = block_notes(c, blk, &b[i], recs, nk);

			if (json_object_array_length(notes))
				json_object_object_add(o, "notes", notes);
			else
				json_object_put(notes);
		}
		json_object_array_add(arr, o);
	}
	free(b);
	free(keys);
	free(recs);
	*out = arr;
	return 0;
}

/* --- bindings ------------------------------------------------------------- */

static int find_binding(struct xtcam_ctx *c, const struct xtcam_net *id, __u32 ifindex,
			const char *netns, const char *dev, struct xtcam_bind_key *kout,
			struct xtcam_bind_rec *rout)
{
	struct xtcam_bind_key *keys;
	struct xtcam_bind_rec *recs;
	size_t n, i;
	int e = xtcam_state_bindings(c->st, &keys, &recs, &n), found = -ENOENT;

	if (e)
		return e;
	for (i = 0; i < n && found; i++) {
		bool by_id = id && ifindex && keys[i].ns_dev == id->dev &&
			     keys[i].ns_ino == id->ino && keys[i].ifindex == ifindex;
		/* a device (or namespace) that is gone: known by its names */
		bool by_name = !ifindex && !strcmp(recs[i].dev, dev) &&
			       !strcmp(recs[i].netns, netns ? netns : "");

		if (by_id || by_name) {
			*kout = keys[i];
			*rout = recs[i];
			found = 0;
		}
	}
	free(keys);
	free(recs);
	return found;
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n >= len - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* src into a record's text field of len bytes; a text too long for it is
 * cut after a word and ends in "..." */
static void copy_cut(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src), k;

	if (n < len) {
		memcpy(dst, src, n + 1);
		return;
	}
	k = len - 4;                    /* room for "..." and the NUL */
	while (k && src[k] != ' ')
		k--;
	while (k && (src[k - 1] == ' ' || src[k - 1] == ';' || src[k - 1] == ','))
		k--;
	if (!k)
		k = len - 4;
	memcpy(dst, src, k);
	memcpy(dst + k, "...", 4);
}

static int attach_dev(struct xtcam_ctx *c, struct xtcam_block *b, const char *netns,
		      __u32 ifindex, enum xtcam_mode mode, bool force,
		      struct xtcam_attach_info *info, char *msg, size_t len)
{
	struct xdp_blk *x = xtcam_xdp_blk(b);
	int back, e;

	(void)c;
	if (!x) {
		snprintf(msg, len, "no data path");
		return -ENOENT;
	}
	e = xtcam_ns_enter_name(netns, &back, msg, len);
	if (e)
		return e;
	e = xtcam_attach(x->dir, (int)ifindex, mode, force, info, msg, len);
	xtcam_ns_leave(back);
	return e;
}

static int check_bind_targets(const struct xtcam_block *b, const char *netns, char *err,
			      size_t errlen);

int xtcam_cmd_bind(struct xtcam_ctx *c, const struct xtcam_bind_req *r, json_object **out,
		   char *err, size_t errlen)
{
	static const char *const autolist[] = { "hw", "native", "generic", NULL };
	const char *one[2] = { r->mode, NULL };
	const char *const *modes;
	const char *netns = r->netns ? r->netns : "";
	struct xtcam_bind_key key, okey;
	struct xtcam_bind_rec rec, orec;
	struct xtcam_block *b;
	struct xtcam_net id;
	struct xtcam_dev *dev;
	char refused[XTCAM_MSG_MAX] = "";       /* rec.refused is shorter */
	__u32 ifindex;
	int e, last = -EINVAL, i;
	bool done = false;

	b = xtcam_block_find(c->core, r->block);
	if (!b) {
		xtcam_set_err(err, errlen, "bind: block %s: no such block", r->block);
		return -ENOENT;
	}
	if (r->mode && strcmp(r->mode, "auto") && !backend_named(c, r->mode)) {
		xtcam_set_err(err, errlen, "bind: mode %s: not one of auto, hw, native, generic", r->mode);
		return -EINVAL;
	}
	e = xtcam_ns_open(netns, NULL, &id, err, errlen);
	if (e)
		return e;
	e = xtcam_ns_ifindex(netns, r->dev, &ifindex, err, errlen);
	if (e)
		return e;
	if (!xtcam_xdp_blk(b)) {
		char why[XTCAM_ERRMSG_MAX] = "";

		/* the data path comes with this bind: its redirects resolve here
		 * (the bind replays the rules: they are read anyway) */
		e = xtcam_block_rules_fetch(b, why, sizeof(why));
		if (!e)
			e = check_bind_targets(b, netns, why, sizeof(why));
		if (e) {
			xtcam_set_err(err, errlen, "bind: %s: %s", r->dev, why);
			return e;
		}
	}
	if (!find_binding(c, &id, ifindex, netns, r->dev, &okey, &orec)) {
		xtcam_set_err(err, errlen, "bind: %s is already bound to block %s", r->dev, orec.block);
		return -EBUSY;
	}
	dev = xtcam_core_dev_get(c->core, &id, ifindex);
	if (!dev)
		return -ENOMEM;

	memset(&key, 0, sizeof(key));
	key.ns_dev = id.dev;
	key.ns_ino = id.ino;
	key.ifindex = ifindex;
	memset(&rec, 0, sizeof(rec));
	snprintf(rec.block, sizeof(rec.block), "%s", r->block);
	snprintf(rec.dev, sizeof(rec.dev), "%s", r->dev);
	snprintf(rec.netns, sizeof(rec.netns), "%s", netns);
	snprintf(rec.requested, sizeof(rec.requested), "%s", r->mode ? r->mode : "auto");
	rec.binder = r->egress ? FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS :
				 FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS;
	rec.ns_dev = id.dev;
	rec.ns_ino = id.ino;
	rec.ifindex = ifindex;
	rec.state = XTCAM_BIND_PENDING;
	rec.bound_at = (__u64)time(NULL);
	e = xtcam_state_binding_put(c->st, &key, &rec);   /* undone if we crash */
	if (e) {
		xtcam_set_err(err, errlen, "bind: %s: cannot record it: %s", r->dev, strerror(-e));
		return e;
	}

	modes = !r->mode || !strcmp(r->mode, "auto") ? autolist : one;
	for (i = 0; modes[i] && !done; i++) {
		struct xtcam_backend *be = backend_named(c, modes[i]);
		char msg[XTCAM_ERRMSG_MAX] = "";

		c->req.netns = netns;
		c->req.dev = r->dev;
		c->req.force = r->force;
		memset(&c->req.info, 0, sizeof(c->req.info));
		c->req.offload[0] = 0;
		c->req.hw = NULL;
		e = xtcam_bind(c->core, b, dev, be, rec.binder, 0, msg, sizeof(msg));
		if (!e) {
			enum xtcam_mode m = be == &c->be_hw ? XTCAM_MODE_HW :
					    be == &c->be_native ? XTCAM_MODE_NATIVE :
						XTCAM_MODE_GENERIC;

			if (m == XTCAM_MODE_HW)
				e = xtcam_hw_attach(c, ifindex, r->force, &c->req.info, msg,
						    sizeof(msg));
			else
				e = attach_dev(c, b, netns, ifindex, m, r->force, &c->req.info, msg,
					       sizeof(msg));
			if (e) {
				char m2[XTCAM_ERRMSG_MAX];

				c->req.old = NULL;
				xtcam_unbind(c->core, dev, 0, m2, sizeof(m2));
			} else {
				/* a later crash must detach it */
				rec.attach_mode = c->req.info.mode;
				rec.dispatcher = c->req.info.dispatcher;
				rec.prog_id = c->req.info.prog_id;
				snprintf(rec.offload, sizeof(rec.offload), "%s", c->req.offload);
				xtcam_state_binding_put(c->st, &key, &rec);
			}
		}
		c->req.netns = NULL;
		if (e) {
			last = e;
			append(refused, sizeof(refused), "%s%s: %s", refused[0] ? "; " : "",
			       modes[i], msg[0] ? msg : strerror(-e));
			if (e == -EOPNOTSUPP && r->egress)
				break;          /* no mode sees egress */
			continue;
		}
		snprintf(rec.mode, sizeof(rec.mode), "%s", modes[i]);
		snprintf(rec.note, sizeof(rec.note), "%s", c->req.info.note);
		copy_cut(rec.refused, sizeof(rec.refused), refused);
		done = true;
	}
	if (!done) {
		xtcam_state_binding_del(c->st, &key);
		if (modes == one || r->egress)
			xtcam_set_err(err, errlen, "bind: %s: %s", r->dev,
				strchr(refused, ':') ? strchr(refused, ':') + 2 : refused);
		else
			xtcam_set_err(err, errlen, "bind: %s: no mode took it (%s)", r->dev, refused);
		return last;
	}
	rec.state = XTCAM_BIND_ACTIVE;
	e = xtcam_state_binding_put(c->st, &key, &rec);
	if (e) {
		xtcam_set_err(err, errlen, "bind: %s: cannot record it: %s", r->dev, strerror(-e));
		return e;
	}
	if (out) {
		*out = binding_json(&rec);
		json_object_object_add(*out, "block", jstr(r->block));
	}
	return 0;
}

int xtcam_cmd_unbind(struct xtcam_ctx *c, const char *block, const char *dev,
		     const char *netns, char *err, size_t errlen)
{
	struct xtcam_bind_key key;
	struct xtcam_bind_rec rec;
	struct xtcam_attach_info info;
	struct xtcam_net id = { 0, 0 };
	struct xtcam_dev *d;
	__u32 ifindex = 0;
	char msg[XTCAM_ERRMSG_MAX] = "";
	int e;

	netns = netns ? netns : "";
	if (!xtcam_block_find(c->core, block)) {
		xtcam_set_err(err, errlen, "unbind: block %s: no such block", block);
		return -ENOENT;
	}
	if (xtcam_ns_open(netns, NULL, &id, NULL, 0) ||
	    xtcam_ns_ifindex(netns, dev, &ifindex, NULL, 0))
		ifindex = 0;            /* gone: look it up by name */
	e = find_binding(c, &id, ifindex, netns, dev, &key, &rec);
	if (e && ifindex)
		e = find_binding(c, NULL, 0, netns, dev, &key, &rec);
	if (e || rec.state != XTCAM_BIND_ACTIVE) {
		xtcam_set_err(err, errlen, "unbind: %s%s%s is not bound", dev, netns[0] ? " in netns " : "",
			netns);
		return -ENOENT;
	}
	if (strcmp(rec.block, block)) {
		xtcam_set_err(err, errlen, "unbind: %s is bound to block %s, not %s", dev, rec.block, block);
		return -ENOENT;
	}
	d = xtcam_core_dev_find(c->core, &(struct xtcam_net){ key.ns_dev, key.ns_ino },
				key.ifindex);
	info_of(&rec, &info);
	/* a crash from here on: the next invocation finishes the unbind (see
	 * undo_pending), rather than keep a binding whose program is gone */
	rec.state = XTCAM_BIND_UNBINDING;
	e = xtcam_state_binding_put(c->st, &key, &rec);
	if (e) {
		xtcam_set_err(err, errlen, "unbind: %s: cannot record it: %s", dev, strerror(-e));
		return e;
	}
	c->req.netns = rec.netns;
	c->req.dev = rec.dev;
	c->req.old = binding_gone(&rec) ? NULL : &info;
	e = d ? xtcam_unbind(c->core, d, 0, msg, sizeof(msg)) : -ENOENT;
	c->req.old = NULL;
	c->req.netns = NULL;
	/* the binding is gone whatever the backend said */
	xtcam_state_binding_del(c->st, &key);
	if (e && e != -ENOENT) {
		xtcam_set_err(err, errlen, "unbind: %s: %s", dev, msg[0] ? msg : strerror(-e));
		return e;
	}
	return 0;
}

/* --- rules ---------------------------------------------------------------- */

/*
 * What an action needs from the machine, checked when the rule comes in
 * rather than at the next bind: a CPU that exists and that the cpumap
 * holds, and a redirect device in a namespace that is known now (the
 * rule's `netns NS`).  A redirect without netns goes to the namespace of
 * the device the block is (or will be) bound to: on a bound block the data
 * path resolves it with the change, on an unbound one the bind checks it
 * (check_bind_targets()).  err gets "action ...: why".
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

/* A block about to get its data path in namespace netns: each redirect
 * without netns of its own goes there, so its device must be there. */
static int check_bind_targets(const struct xtcam_block *b, const char *netns, char *err,
			      size_t errlen)
{
	size_t n = xtcam_block_rule_count(b), i;

	for (i = 0; i < n; i++) {
		const struct xtcam_rule *r = xtcam_block_rule_at(b, i);
		char why[XTCAM_ERRMSG_MAX] = "";
		__u32 ifindex;
		int e;

		if (r->action.type != XTCAM_ACT_REDIRECT || r->action.netns[0])
			continue;
		e = xtcam_ns_ifindex(netns, r->action.dev, &ifindex, why, sizeof(why));
		if (e) {
			xtcam_set_err(err, errlen, "block %s: handle %u: action redirect %s",
				      b->spec.name, r->handle, why[0] ? why : strerror(-e));
			return e;
		}
	}
	return 0;
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

/* Apply ops to a block: capacity, registry stage, core (backends), commit. */
static int apply_copy(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		      size_t n, char *err, size_t errlen);

/* The ops may point at rules the core owns, which it frees as it applies
 * them: work on copies. */
static int apply(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		 size_t n, char *err, size_t errlen)
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
	e = apply_copy(c, block, o, n, err, errlen);
	free(copy);
	free(o);
	return e;
}

static int apply_copy(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
		      size_t n, char *err, size_t errlen)
{
	struct xtcam_block_rec rec;
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	__s64 entries;
	size_t i;
	char msg[XTCAM_ERRMSG_MAX] = "";
	int e = block_rec(c, block, &rec, err, errlen);

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
	e = xtcam_state_rules_stage(c->st, &rec, ops, n);
	if (e) {
		xtcam_set_err(err, errlen, "block %s: registry: %s", block, strerror(-e));
		return e;
	}
	xtcam_trace("stage");
	xtcam_crash_point("stage");
	e = xtcam_block_rules_apply(b, ops, n, msg, sizeof(msg));
	if (e) {
		xtcam_state_rules_abort(c->st, &rec, ops, n);
		xtcam_set_err(err, errlen, "block %s: %s", block, msg[0] ? msg : strerror(-e));
		return e;
	}
	xtcam_trace("deliver");
	xtcam_crash_point("deliver");
	rec.nentries = (__u32)entries;
	e = xtcam_state_rules_commit(c->st, &rec, ops, n);
	xtcam_trace("commit");
	xtcam_crash_point("commit");
	if (e)
		xtcam_set_err(err, errlen, "block %s: registry: %s", block, strerror(-e));
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
	e = block_rec(c, block, &rec, err, errlen);
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
	return apply(c, block, &op, 1, err, errlen);
}

static int cmp_handle(const void *a, const void *b)
{
	__u32 x = ((const struct xtcam_rule *)a)->handle, y = ((const struct xtcam_rule *)b)->handle;

	return x < y ? -1 : x > y;
}

int xtcam_cmd_rule_load(struct xtcam_ctx *c, const char *block, struct xtcam_rule *rules,
			size_t n, bool replace, bool check, char *err, size_t errlen)
{
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct xtcam_rule_op *ops;
	struct xtcam_rule *sorted;
	size_t i, nops = 0, nr;
	__u32 next;
	int e = 0;

	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	/* a whole set is compared with the block's: all of them, here */
	e = xtcam_block_rules_fetch(b, err, errlen);
	if (e)
		return e;
	next = 0;
	if (!replace) {
		struct xtcam_block_rec rec;

		e = block_rec(c, block, &rec, err, errlen);
		if (e)
			return e;
		next = rec.max_handle;
	}
	nr = xtcam_block_rule_count(b);
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
	ops = calloc(n + nr + 1, sizeof(*ops));
	if (!sorted || !ops) {
		free(sorted);
		free(ops);
		return -ENOMEM;
	}
	if (n)          /* rules is NULL for a flush */
		memcpy(sorted, rules, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_handle);
	for (i = 1; i < n; i++) {
		if (sorted[i].handle == sorted[i - 1].handle) {
			xtcam_set_err(err, errlen, "block %s: handle %u given twice", block,
				sorted[i].handle);
			e = -EEXIST;
			goto out;
		}
	}
	if (replace) {
		/* the whole set: what goes, what changes, what comes */
		for (i = 0; i < nr; i++) {
			const struct xtcam_rule *o = xtcam_block_rule_at(b, i);
			struct xtcam_rule *k = bsearch(o, sorted, n, sizeof(*sorted), cmp_handle);

			if (!k)
				ops[nops++] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, o, o };
		}
		for (i = 0; i < n; i++) {
			const struct xtcam_rule *o = xtcam_block_rule_find(b, sorted[i].handle);

			if (!o)
				ops[nops++] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &sorted[i], NULL };
			else if (!xtcam_rule_equal(o, &sorted[i]))
				ops[nops++] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE, &sorted[i], o };
		}
	} else {
		for (i = 0; i < n; i++) {
			if (xtcam_block_rule_find(b, sorted[i].handle)) {
				xtcam_set_err(err, errlen, "block %s: handle %u is in use", block,
					sorted[i].handle);
				e = -EEXIST;
				goto out;
			}
			ops[nops++] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &sorted[i], NULL };
		}
	}
	e = check_actions(block, ops, nops, true, err, errlen);
	if (e)
		goto out;
	if (check) {
		struct xtcam_block_rec rec;
		__s64 entries;

		e = block_rec(c, block, &rec, err, errlen);
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
		goto out;
	}
	if (nops)
		e = apply(c, block, ops, nops, err, errlen);
out:
	free(sorted);
	free(ops);
	return e;
}

int xtcam_cmd_rule_flush(struct xtcam_ctx *c, const char *block, char *err, size_t errlen)
{
	return xtcam_cmd_rule_load(c, block, NULL, 0, true, false, err, errlen);
}

/* One rule as `rule show` prints it, with its counters. */
static json_object *rule_json(struct xtcam_block *b, struct xdp_blk *x,
			      const struct xtcam_rule *r, const struct timespec *now)
{
	struct xtcam_counter cnt = { 0 };
	json_object *o = json_object_new_object();

	if (x)
		xtcam_dp_rule_counters(x->dp, r->handle, &cnt);
	xtcam_hw_rule_stats(b, r->handle, &cnt);
	json_object_object_add(o, "handle", json_object_new_int64(r->handle));
	json_object_object_add(o, "prio", json_object_new_int64(r->prio));
	json_object_object_add(o, "match", xtcam_rule_match_json(r, &b->spec));
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

struct show_walk {
	struct xtcam_block *b;
	struct xdp_blk *x;
	struct timespec now;
	int (*fn)(void *arg, json_object *rule);
	void *arg;
};

static int show_one(void *arg, const struct xtcam_rule *r)
{
	struct show_walk *w = arg;
	json_object *o = rule_json(w->b, w->x, r, &w->now);
	int e;

	if (!o)
		return -ENOMEM;
	e = w->fn(w->arg, o);
	json_object_put(o);
	return e;
}

int xtcam_cmd_rule_show_each(struct xtcam_ctx *c, const char *block,
			     int (*fn)(void *arg, json_object *rule), void *arg,
			     char *err, size_t errlen)
{
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct xtcam_block_rec rec;
	struct show_walk w;
	int e;

	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	e = block_rec(c, block, &rec, err, errlen);
	if (e)
		return e;
	w = (struct show_walk){ b, xtcam_xdp_blk(b), { 0, 0 }, fn, arg };
	clock_gettime(CLOCK_MONOTONIC_COARSE, &w.now);
	/* straight from the registry: the core need not hold the rules */
	e = xtcam_state_rules_walk(c->st, &rec, show_one, &w);
	if (e < 0)
		xtcam_set_err(err, errlen, "block %s: cannot read its rules: %s", block,
			      strerror(-e));
	return e;
}

static int array_add(void *arg, json_object *rule)
{
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
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct xtcam_block_rec rec;
	struct xtcam_rule r;
	struct timespec now;
	int e;

	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	e = block_rec(c, block, &rec, err, errlen);
	if (e)
		return e;
	e = xtcam_state_rule_get(c->st, &rec, handle, &r);
	if (e == -ENOENT)
		xtcam_set_err(err, errlen, "block %s: no rule with handle %u", block, handle);
	else if (e)
		xtcam_set_err(err, errlen, "block %s: handle %u: cannot read it: %s", block, handle,
			      strerror(-e));
	if (e)
		return e;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	*out = json_object_new_array();
	json_object_array_add(*out, rule_json(b, xtcam_xdp_blk(b), &r, &now));
	return 0;
}

int xtcam_cmd_counters_reset(struct xtcam_ctx *c, const char *block, char *err, size_t errlen)
{
	struct xtcam_block *b = xtcam_block_find(c->core, block);
	struct xdp_blk *x;
	int e = 0;

	if (!b) {
		xtcam_set_err(err, errlen, "block %s: no such block", block);
		return -ENOENT;
	}
	x = xtcam_xdp_blk(b);
	if (x)
		e = xtcam_dp_counters_reset(x->dp);
	if (!e)
		e = xtcam_hw_counters_reset(b);
	if (e)
		xtcam_set_err(err, errlen, "block %s: %s", block, strerror(-e));
	return e;
}

/* --- save and flush -------------------------------------------------------- */

static int cmp_binding(const void *a, const void *b)
{
	const struct xtcam_bind_rec *x = a, *y = b;
	int d = strcmp(x->block, y->block);

	if (!d)
		d = strcmp(x->netns, y->netns);
	return d ? d : strcmp(x->dev, y->dev);
}

struct save_rules {
	FILE *f;
	const struct xtcam_block_spec *spec;
	const char *block;
	char *err;
	size_t errlen;
};

static int save_rule(void *arg, const struct xtcam_rule *r)
{
	struct save_rules *w = arg;
	char line[XTCAM_RULE_TEXT_MAX];
	int n = xtcam_rule_format(r, w->spec, line, sizeof(line));

	if (n < 0) {
		xtcam_set_err(w->err, w->errlen, "save: block %s: rule handle %u: cannot write it: %s",
			      w->block, r->handle, strerror(-n));
		return n;
	}
	fprintf(w->f, "rule add %s %s\n", w->block, line);
	return 0;
}

/* What a pass read is one committed state if this is the same after it:
 * every block's change count and active generation, and the bindings. */
static int save_sig(struct xtcam_ctx *c, char **sig, size_t *len)
{
	struct xtcam_block_rec *b = NULL;
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *recs = NULL;
	size_t nb = 0, nk = 0, i;
	FILE *f = open_memstream(sig, len);
	int e;

	if (!f)
		return -ENOMEM;
	e = xtcam_state_blocks(c->st, &b, &nb);
	if (!e)
		e = xtcam_state_bindings(c->st, &keys, &recs, &nk);
	for (i = 0; !e && i < nb; i++)
		fprintf(f, "%s %u %llu %u\n", b[i].name, b[i].id, (unsigned long long)b[i].seq,
			b[i].rgen);
	if (!e)
		qsort(recs, nk, sizeof(*recs), cmp_binding);
	for (i = 0; !e && i < nk; i++)
		fprintf(f, "%s %s %s %s %u %u\n", recs[i].block, recs[i].dev, recs[i].netns,
			recs[i].requested, recs[i].state, recs[i].binder);
	fclose(f);
	free(b);
	free(keys);
	free(recs);
	if (e) {
		free(*sig);
		*sig = NULL;
	}
	return e;
}

/* One pass: every block, its rules and its bindings, into f. */
static int save_pass(struct xtcam_ctx *c, FILE *f, char *err, size_t errlen)
{
	struct xtcam_block_rec *b = NULL;
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *recs = NULL;
	size_t nb, nk, i;
	char line[XTCAM_RULE_TEXT_MAX];
	time_t t = time(NULL);
	int e = xtcam_state_blocks(c->st, &b, &nb);

	if (e || (e = xtcam_state_bindings(c->st, &keys, &recs, &nk))) {
		free(b);
		xtcam_set_err(err, errlen, "save: registry: %s", strerror(-e));
		return e;
	}
	strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
	fprintf(f, "%s%d, %s\n", XTCAM_SAVE_FORMAT_LINE, XTCAM_SAVE_FORMAT, line);
	for (i = 0; !e && i < nb; i++) {
		struct xtcam_block_spec spec;
		struct save_rules w = { f, &spec, b[i].name, err, errlen };
		int n;

		spec_of(&b[i], &spec);
		n = xtcam_block_spec_format(&spec, line, sizeof(line));
		if (n < 0) {
			e = n;
			xtcam_set_err(err, errlen, "save: block %s: cannot write its settings: %s",
				b[i].name, strerror(-e));
			break;
		}
		fprintf(f, "block add %s\n", line);
		err[0] = 0;
		e = xtcam_state_rules_walk(c->st, &b[i], save_rule, &w);
		if (e && !err[0])
			xtcam_set_err(err, errlen, "save: block %s: cannot read its rules: %s",
				b[i].name, strerror(-e));
	}
	/* in a fixed order, so that save, restore, save gives the same text */
	if (!e)
		qsort(recs, nk, sizeof(*recs), cmp_binding);
	for (i = 0; !e && i < nk; i++) {
		if (recs[i].state != XTCAM_BIND_ACTIVE)
			continue;
		fprintf(f, "bind %s dev %s%s%s mode %s%s\n", recs[i].block, recs[i].dev,
			recs[i].netns[0] ? " netns " : "", recs[i].netns, recs[i].requested,
			recs[i].binder == FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS ? " egress" : "");
	}
	free(b);
	free(keys);
	free(recs);
	if (!e && ferror(f)) {
		e = -EIO;
		xtcam_set_err(err, errlen, "save: cannot write its temporary file");
	}
	return e;
}

#define SAVE_PASSES 8

int xtcam_cmd_save_file(struct xtcam_ctx *c, FILE *out, char *err, size_t errlen)
{
	char path[PATH_MAX], buf[65536];
	struct stat sb;
	int e = 0, pass;
	size_t n;
	FILE *f;

	/* a restore under way (or cut short): its blocks are not committed */
	if ((c->flags & XTCAM_OPEN_READ) &&
	    !xtcam_state_block_dir(c->st, XTCAM_RESTORE_MARKER, NULL, path, sizeof(path)) &&
	    !stat(path, &sb))
		return -EAGAIN;
	f = tmpfile();
	if (!f) {
		e = -errno;
		xtcam_set_err(err, errlen, "save: a temporary file: %s", strerror(-e));
		return e;
	}
	for (pass = 0; pass < SAVE_PASSES; pass++) {
		char *s0 = NULL, *s1 = NULL;
		size_t l0 = 0, l1 = 0;
		bool same;

		rewind(f);
		if (ftruncate(fileno(f), 0)) {
			e = -errno;
			break;
		}
		e = save_sig(c, &s0, &l0);
		if (!e)
			e = save_pass(c, f, err, errlen);
		if (!e)
			e = save_sig(c, &s1, &l1);
		same = !e && l0 == l1 && !memcmp(s0, s1, l0);
		free(s0);
		free(s1);
		if (e || same)
			break;
		/* a writer committed meanwhile: read it all again */
		if (pass == SAVE_PASSES - 1) {
			e = -EAGAIN;
			xtcam_set_err(err, errlen, "save: the registry changed during each of %d "
				      "reads", SAVE_PASSES);
		}
	}
	if (!e && fflush(f))
		e = -errno;
	if (!e) {
		rewind(f);
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			if (fwrite(buf, 1, n, out) != n)
				break;
		if (ferror(f) || ferror(out)) {
			e = -EIO;
			xtcam_set_err(err, errlen, "save: cannot write it: %s", strerror(EIO));
		}
	} else if (!err[0]) {
		xtcam_set_err(err, errlen, "save: %s", strerror(-e));
	}
	fclose(f);
	return e;
}

/* Every block, its rules and its bindings, or an error: never a part. */
int xtcam_cmd_save(struct xtcam_ctx *c, char **text, char *err, size_t errlen)
{
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	int e;

	if (!f)
		return -ENOMEM;
	err[0] = 0;
	e = xtcam_cmd_save_file(c, f, err, errlen);
	fclose(f);
	if (e) {
		free(*text);
		*text = NULL;
	}
	return e;
}

int xtcam_cmd_flush(struct xtcam_ctx *c, char *err, size_t errlen)
{
	struct xtcam_block_rec *brecs = NULL;
	struct xtcam_bind_key *keys;
	struct xtcam_bind_rec *recs;
	size_t nk, nb = 0, i;
	int e = xtcam_state_bindings(c->st, &keys, &recs, &nk), first = 0;

	if (e) {
		xtcam_set_err(err, errlen, "registry: %s", strerror(-e));
		return e;
	}
	for (i = 0; i < nk; i++) {
		char msg[XTCAM_MSG_MAX] = "";

		if (recs[i].state != XTCAM_BIND_ACTIVE) {
			undo_pending(c, &keys[i], &recs[i]);
			continue;
		}
		e = xtcam_cmd_unbind(c, recs[i].block, recs[i].dev, recs[i].netns, msg, sizeof(msg));
		if (e && !first) {
			first = e;
			xtcam_set_err(err, errlen, "%s", msg);
		}
	}
	free(keys);
	free(recs);
	/* the core's objects go with the context; the pins go now */
	xtcam_core_free(c->core);
	c->core = NULL;
	/* what unbinding left of the blocks' data paths (after a crash):
	 * only the pins of xtcam's own layout, by name */
	e = xtcam_state_blocks(c->st, &brecs, &nb);
	for (i = 0; !e && i < nb; i++) {
		char dir[256];

		if (!xtcam_state_block_dir(c->st, brecs[i].name, "xdp", dir, sizeof(dir)))
			xtcam_dp_unpin(dir);
		xtcam_hw_orphans(c, brecs[i].name);
		if (!xtcam_state_block_dir(c->st, brecs[i].name, NULL, dir, sizeof(dir)))
			rmdir(dir);
	}
	free(brecs);
	if (e && !first) {
		first = e;
		xtcam_set_err(err, errlen, "registry: cannot read blocks: %s", strerror(-e));
	}
	e = xtcam_state_destroy(c->st);
	if (e && !first) {
		first = e;
		xtcam_set_err(err, errlen, "removing %s: %s", c->st->root, strerror(-e));
	}
	return first;
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
	e = block_rec(c, block, &rec, err, errlen);
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
		e = xtcam_state_rule_get(c->st, &rec, h, &old[i]);
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
	e = check_actions(block, ops, n, true, err, errlen);
	if (!e)
		e = apply(c, block, ops, n, err, errlen);
out:
	free(ops);
	free(old);
	free(hs);
	return e;
}
