// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The native and generic XDP backends: flow_block drivers that share one
 * data path (programs and maps, pinned under /sys/fs/bpf/xtcam/BLOCK/xdp)
 * per block, whatever devices and namespaces it is bound to.  The shared
 * callback is found with flow_block_cb_lookup() and counted with
 * incref/decref; the data path goes when the last device unbinds.
 *
 * The maps belong to the host (bpffs), not to a device's namespace, so the
 * callback is registered and looked up under the host's namespace
 * identity.  Attaching to the device is done by the loader after the bind
 * (once the rules are replayed, so that no packet meets an empty block).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "xtcam/compile.h"
#include "driver.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "vanish.h"
#include "rpack.h"

/* A block's shared data path (native and generic XDP on any device). */
struct xdp_blk {
	struct xtcam_ctx *ctx;
	struct xtcam_block *block;
	struct xtcam_dp *dp;
	char dir[256];
	char default_ns[XTCAM_NETNS_MAX];  /* where redirect devices are named */
	bool dying;             /* last device gone: rule removals are moot */
	bool keep;              /* process exit: keep the kernel state */
	bool created;           /* made by this process */
};

static flow_setup_cb_t xdp_rules_cb;

static void blk_release(void *priv)
{
	struct xdp_blk *x = priv;

	if (!x)
		return;
	if (!x->keep && x->dir[0]) {
		char parent[256];
		char *slash;

		xtcam_dp_unpin(x->dir);
		snprintf(parent, sizeof(parent), "%s", x->dir);
		slash = strrchr(parent, '/');
		if (slash) {
			*slash = 0;
			rmdir(parent);      /* the block's directory, if empty */
		}
	}
	xtcam_dp_free(x->dp);
	free(x);
}

/* the block's data path, if bound to native or generic XDP */
static struct xdp_blk *xdp_blk(struct xtcam_block *b)
{
	struct flow_block_cb *cb;

	list_for_each_entry(cb, &b->cb_list, list)
		if (cb->cb == xdp_rules_cb)
			return cb->cb_priv;
	return NULL;
}

/* devmap slot for (netns, dev), resolving the device in its namespace */
static int target_slot(struct xdp_blk *x, const char *netns, const char *dev,
		       __u32 *slot, char *err, size_t errlen)
{
	int tfd = xtcam_dp_map_fd(x->dp, XTCAM_MAP_TARGETS);
	int dfd = xtcam_dp_map_fd(x->dp, XTCAM_MAP_DEVMAP);
	int dfd_nf = xtcam_dp_map_fd(x->dp, XTCAM_MAP_DEVMAP_NF);
	struct xtcam_target t;
	__u32 i, freeslot = XTCAM_MAX_TARGETS, ifindex;
	int e, saved;

	for (i = 0; i < XTCAM_MAX_TARGETS; i++) {
		if (bpf_map_lookup_elem(tfd, &i, &t))
			return -errno;
		if (t.used && !strcmp(t.netns, netns) && !strcmp(t.dev, dev)) {
			*slot = i;
			return 0;
		}
		if (!t.used && freeslot == XTCAM_MAX_TARGETS)
			freeslot = i;
	}
	if (freeslot == XTCAM_MAX_TARGETS) {
		snprintf(err, errlen, "action redirect dev %s: more than %d redirect targets in one block",
			 dev, XTCAM_MAX_TARGETS);
		return -ENOSPC;
	}
	e = xtcam_ns_ifindex(netns, dev, &ifindex, err, errlen);
	if (e) {
		char tmp[XTCAM_ERRMSG_MAX];

		snprintf(tmp, sizeof(tmp), "action redirect %s", err);
		snprintf(err, errlen, "%s", tmp);
		return e;
	}
	/* the devmap resolves the ifindex in the namespace of the caller */
	e = xtcam_ns_enter_name(netns, &saved, err, errlen);
	if (e)
		return e;
	if (bpf_map_update_elem(dfd, &freeslot, &ifindex, 0) ||
	    bpf_map_update_elem(dfd_nf, &freeslot, &ifindex, 0))
		e = -errno;
	xtcam_ns_leave(saved);
	if (e) {
		snprintf(err, errlen, "action redirect dev %s: cannot add it to the devmap: %s", dev,
			 strerror(-e));
		return e;
	}
	memset(&t, 0, sizeof(t));
	snprintf(t.netns, sizeof(t.netns), "%s", netns);
	snprintf(t.dev, sizeof(t.dev), "%s", dev);
	t.ifindex = ifindex;
	t.used = 1;
	if (bpf_map_update_elem(tfd, &freeslot, &t, 0))
		return -errno;
	*slot = freeslot;
	return 0;
}

static int resolve_action(struct xdp_blk *x, const struct xtcam_rule *r,
			  struct xtcam_action *a, char *err, size_t errlen)
{
	const struct xtcam_rule_action *ra = &r->action;
	int e;

	memset(a, 0, sizeof(*a));
	a->type = ra->type;
	switch (ra->type) {
	case XTCAM_ACT_DROP:
	case XTCAM_ACT_PASS:
	case XTCAM_ACT_TX:
		return 0;
	case XTCAM_ACT_REDIRECT:
		return target_slot(x, ra->netns[0] ? ra->netns : x->default_ns, ra->dev,
				   &a->arg, err, errlen);
	case XTCAM_ACT_CPU: {
		int n = libbpf_num_possible_cpus();
		struct bpf_cpumap_val v = { .qsize = 2048 };
		__u32 cpu = ra->cpu;

		if (n < 0 || cpu >= (__u32)n) {
			snprintf(err, errlen, "action cpu %u: no such CPU (this machine has %d)",
				 cpu, n);
			return -EINVAL;
		}
		if (bpf_map_update_elem(xtcam_dp_map_fd(x->dp, XTCAM_MAP_CPUMAP), &cpu, &v, 0) ||
		    bpf_map_update_elem(xtcam_dp_map_fd(x->dp, XTCAM_MAP_CPUMAP_NF), &cpu, &v, 0)) {
			e = -errno;
			snprintf(err, errlen, "action cpu %u: %s", cpu, strerror(-e));
			return e;
		}
		a->arg = cpu;
		return 0;
	}
	default:
		snprintf(err, errlen, "handle %u: no action", r->handle);
		return -EINVAL;
	}
}

static int xdp_rules_cb(enum xtcam_setup_type type, void *type_data, void *cb_priv)
{
	struct xtcam_rules_offload *o = type_data;
	struct xdp_blk *x = cb_priv;
	struct xtcam_dp_op *ops;
	char err[XTCAM_ERRMSG_MAX] = "";
	size_t i;
	int e = 0;

	if (type != XTCAM_SETUP_RULES)
		return -EOPNOTSUPP;
	if (x->dying || !o->n)
		return 0;
	ops = calloc(o->n, sizeof(*ops));
	if (!ops)
		return -ENOMEM;
	for (i = 0; i < o->n && !e; i++) {
		const struct xtcam_rule_op *op = &o->ops[i];
		const struct xtcam_rule *r;
		struct xtcam_rule rb;

		switch (op->cmd) {
		case XTCAM_RULE_ADD:
		case XTCAM_RULE_REPLACE:
			r = xtcam_rule_view(op->rule, &rb);
			ops[i].cmd = op->cmd == XTCAM_RULE_ADD ? XTCAM_DP_ADD : XTCAM_DP_REPLACE;
			ops[i].rule = op->rule;
			ops[i].free = op->cmd == XTCAM_RULE_ADD && o->adds_free;
			/* counters belong to the rule, not to its handle */
			ops[i].fresh_counters = op->cmd == XTCAM_RULE_REPLACE && op->old &&
						!xtcam_rule_equal(op->old, r);
			e = resolve_action(x, r, &ops[i].act, err, sizeof(err));
			if (e) {
				char why[XTCAM_ERRMSG_MAX];

				/* name the rule: at a bind it is one of many */
				snprintf(why, sizeof(why), "%s", err);
				xtcam_set_err(err, sizeof(err), "handle %u: %s", r->handle,
					      why[0] ? why : strerror(-e));
			}
			break;
		case XTCAM_RULE_DEL:
			ops[i].cmd = XTCAM_DP_DEL;
			ops[i].handle = op->old ? op->old->handle : op->rule->handle;
			break;
		default:
			e = -EINVAL;
		}
	}
	if (!e)
		e = xtcam_dp_apply(x->dp, ops, o->n, err, sizeof(err));
	if (e)
		xtcam_rules_errmsg(o, "%s", err[0] ? err : strerror(-e));
	free(ops);
	return e;
}

void xtcam_xdp_defer(struct xtcam_ctx *ctx, bool defer)
{
	struct flow_block_cb *cb;

	list_for_each_entry(cb, &ctx->xdp_list, driver_list)
		xtcam_dp_set_defer(((struct xdp_blk *)cb->cb_priv)->dp, defer);
}

void xtcam_xdp_notify(struct xtcam_ctx *ctx, void (*fn)(void *arg, int delta), void *arg)
{
	struct flow_block_cb *cb;

	list_for_each_entry(cb, &ctx->xdp_list, driver_list)
		xtcam_dp_set_notify(((struct xdp_blk *)cb->cb_priv)->dp, fn, arg);
}

void xtcam_xdp_hold(struct xtcam_ctx *ctx)
{
	struct flow_block_cb *cb;

	list_for_each_entry(cb, &ctx->xdp_list, driver_list)
		xtcam_dp_set_hold(((struct xdp_blk *)cb->cb_priv)->dp);
}

void xtcam_xdp_forget(struct xtcam_ctx *ctx)
{
	struct flow_block_cb *cb;

	list_for_each_entry(cb, &ctx->xdp_list, driver_list) {
		struct xtcam_dp *dp = ((struct xdp_blk *)cb->cb_priv)->dp;

		xtcam_dp_forget(dp);
		xtcam_dp_set_defer(dp, false);
	}
}

int xtcam_xdp_settle(struct xtcam_ctx *ctx)
{
	struct flow_block_cb *cb;
	int e = 0, e1;

	list_for_each_entry(cb, &ctx->xdp_list, driver_list) {
		struct xtcam_dp *dp = ((struct xdp_blk *)cb->cb_priv)->dp;

		xtcam_dp_set_defer(dp, false);
		e1 = xtcam_dp_settle(dp);
		e = e ? e : e1;
	}
	return e;
}

static int mkdir_p(const char *dir)
{
	char tmp[256], *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

static int xdp_bind(struct flow_block_offload *f, struct xtcam_ctx *ctx)
{
	struct xtcam_net *saved = f->net;
	struct flow_block_cb *cb;
	struct xdp_blk *x;
	int e;

	if (f->binder_type != FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS) {
		flow_block_errmsg(f, "XDP sees only ingress traffic");
		return -EOPNOTSUPP;
	}
	f->driver_block_list = &ctx->xdp_list;
	f->net = ctx->host_net;
	cb = flow_block_cb_lookup(f, xdp_rules_cb, f->block);
	if (cb) {
		flow_block_cb_incref(cb);
		f->net = saved;
		return 0;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		f->net = saved;
		return -ENOMEM;
	}
	x->ctx = ctx;
	x->block = f->block;
	snprintf(x->default_ns, sizeof(x->default_ns), "%s",
		 ctx->req.netns ? ctx->req.netns : "");
	e = xtcam_state_block_dir(ctx->st, f->block->spec.name, "xdp", x->dir, sizeof(x->dir));
	if (e)
		goto fail;
	if (f->restore) {
		x->keep = true;
		e = xtcam_dp_open_pinned(x->dir, &x->dp);
		if (e == -EUCLEAN) {
			flow_block_errmsg(f, "block %s: its maps in %s were made by another version "
					  "of xtcam (data path format %u expected) or are damaged: "
					  "unbind and flush with that version, or remove %s", f->block->spec.name,
					  x->dir, XTCAM_DP_FORMAT, x->dir);
			goto fail;
		}
		if (e) {
			flow_block_errmsg(f, "block %s: its maps in %s: %s", f->block->spec.name,
					  x->dir, strerror(-e));
			goto fail;
		}
	} else {
		e = xtcam_dp_create(&f->block->spec, 0, &x->dp);
		if (e) {
			flow_block_errmsg(f, "block %s: cannot load its programs: %s (xtcam -v says more)",
					  f->block->spec.name, strerror(-e));
			goto fail;
		}
		x->created = true;
		e = mkdir_p(x->dir);
		if (!e)
			e = xtcam_dp_pin(x->dp, x->dir);
		if (e) {
			flow_block_errmsg(f, "block %s: cannot pin its maps in %s: %s",
					  f->block->spec.name, x->dir, strerror(-e));
			x->keep = false;
			goto fail_unpin;
		}
	}
	cb = flow_block_cb_alloc(ctx->host_net, xdp_rules_cb, f->block, x, blk_release);
	if (IS_ERR(cb)) {
		e = (int)PTR_ERR(cb);
		goto fail_unpin;
	}
	flow_block_cb_incref(cb);
	flow_block_cb_add(cb, f);
	list_add_tail(&cb->driver_list, &ctx->xdp_list);
	f->net = saved;
	return 0;
fail_unpin:
	f->net = saved;
	blk_release(x);
	return e;
fail:
	f->net = saved;
	xtcam_dp_free(x->dp);
	free(x);
	return e;
}

int xtcam_detach_in(struct flow_block_offload *f, const char *netns,
		    int (*detach)(const struct xtcam_attach_info *, char *, size_t),
		    const struct xtcam_attach_info *old)
{
	char err[XTCAM_ERRMSG_MAX] = "";
	int back, e;

	/* the device's namespace may be gone with it: nothing to detach */
	if (xtcam_ns_enter_name(netns, &back, NULL, 0))
		return 0;
	e = detach(old, err, sizeof(err));
	xtcam_ns_leave(back);
	if (e == -ENOENT || e == -ENODEV)
		return 0;
	if (e)
		flow_block_errmsg(f, "%s", err);
	return e;
}

static int xdp_unbind(struct flow_block_offload *f, struct xtcam_ctx *ctx)
{
	struct xtcam_net *saved = f->net;
	struct flow_block_cb *cb;
	struct xdp_blk *x;
	int e = 0;

	f->driver_block_list = &ctx->xdp_list;
	f->net = ctx->host_net;
	cb = flow_block_cb_lookup(f, xdp_rules_cb, f->block);
	f->net = saved;
	if (!cb)
		return -ENOENT;
	x = cb->cb_priv;
	if (!f->keep && ctx->req.old && ctx->req.old->prog_id)
		e = xtcam_detach_in(f, ctx->req.netns, xtcam_detach, ctx->req.old);
	if (!flow_block_cb_decref(cb)) {
		/* no device left: removing the rules one by one is moot (the
		 * maps go whole), and the core need not even read them */
		x->dying = true;
		x->keep = f->keep;
		cb->no_removal = true;
		flow_block_cb_remove(cb, f);
		list_del(&cb->driver_list);
	}
	return e;
}

static int xdp_setup(struct flow_block_offload *f, struct xtcam_ctx *ctx)
{
	switch (f->command) {
	case FLOW_BLOCK_BIND:
		return xdp_bind(f, ctx);
	case FLOW_BLOCK_UNBIND:
		return xdp_unbind(f, ctx);
	default:
		return -EOPNOTSUPP;
	}
}

static int xdp_setup_cb(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv)
{
	(void)dev;
	return xdp_setup(f, priv);
}

/* --- after a crash ----------------------------------------------------- */

static bool same_rec(const struct xtcam_rec *a, const struct xtcam_rec *b)
{
	return !memcmp(&a->value, &b->value, sizeof(a->value)) &&
	       !memcmp(&a->mask, &b->mask, sizeof(a->mask)) &&
	       a->sport_lo == b->sport_lo && a->sport_hi == b->sport_hi &&
	       a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi &&
	       a->rank == b->rank;
}

/* Bring a data path back to the block's rules (after a crash). */
static int xdp_reconcile_blk(struct xdp_blk *x, char *err, size_t errlen)
{
	size_t nr = xtcam_block_rule_count(x->block), nh, i, n = 0, k;
	struct xtcam_dp_op *ops = NULL;
	__u32 *handles;
	int e = xtcam_dp_handles(x->dp, &handles, &nh);

	if (e)
		return e;
	ops = calloc(nr + nh + 1, sizeof(*ops));
	if (!ops) {
		free(handles);
		return -ENOMEM;
	}
	for (i = 0; i < nr && !e; i++) {
		const struct xtcam_rule *r = xtcam_block_rule_at(x->block, i);
		struct xtcam_rec want, have;
		struct xtcam_action act, hact;

		e = resolve_action(x, r, &act, err, errlen);
		if (e)
			break;
		if (xtcam_rule_compile(r, &want))
			continue;
		if (xtcam_dp_rule_record(x->dp, r->handle, &have, &hact)) {
			ops[n++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = r, .act = act };
		} else if (!same_rec(&want, &have) || memcmp(&act, &hact, sizeof(act))) {
			ops[n++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_REPLACE, .rule = r,
							 .act = act };
		}
	}
	for (k = 0; k < nh && !e; k++)
		if (!xtcam_block_rule_find(x->block, handles[k]))
			ops[n++] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_DEL, .handle = handles[k] };
	if (!e && n)
		e = xtcam_dp_apply(x->dp, ops, n, err, errlen);
	free(ops);
	free(handles);
	return e;
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

static void xdp_undo(const struct xtcam_driver *d, __u32 ifindex)
{
	struct xtcam_attach_info info;
	char err[XTCAM_ERRMSG_MAX];

	memset(&info, 0, sizeof(info));
	if (find_orphan(ifindex, &info) && info.mode == d->mode)
		xtcam_detach(&info, err, sizeof(err));
}

/* a data path left pinned by a bind that never completed */
static void xdp_orphans(struct xtcam_ctx *ctx, const char *block)
{
	char dir[256];
	struct stat sb;

	if (!xtcam_state_block_dir(ctx->st, block, "xdp", dir, sizeof(dir)) && !stat(dir, &sb)) {
		xtcam_dp_unpin(dir);
		xtcam_state_block_dir(ctx->st, block, NULL, dir, sizeof(dir));
		rmdir(dir);
	}
}

static int xdp_reconcile(struct xtcam_block *b, char *err, size_t errlen)
{
	struct xdp_blk *x = xdp_blk(b);

	return x ? xdp_reconcile_blk(x, err, errlen) : 0;
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

static int xdp_bind_check(struct xtcam_ctx *ctx, struct xtcam_block *b, const char *netns,
			  char *err, size_t errlen)
{
	int e;

	(void)ctx;
	if (xdp_blk(b))
		return 0;
	/* the data path comes with this bind: its redirects resolve here
	 * (the bind replays the rules: they are read anyway) */
	e = xtcam_block_rules_fetch(b, err, errlen);
	if (!e)
		e = check_bind_targets(b, netns, err, errlen);
	return e;
}

static int xdp_attach(const struct xtcam_driver *d, struct xtcam_ctx *ctx, struct xtcam_block *b,
		      __u32 ifindex, bool force, struct xtcam_attach_info *info, char *msg,
		      size_t len)
{
	struct xdp_blk *x = xdp_blk(b);
	int back, e;

	if (!x) {
		snprintf(msg, len, "no data path");
		return -ENOENT;
	}
	e = xtcam_ns_enter_name(ctx->req.netns, &back, msg, len);
	if (e)
		return e;
	e = xtcam_attach(x->dir, (int)ifindex, d->mode, force, info, msg, len);
	xtcam_ns_leave(back);
	return e;
}

static void counter_add(struct xtcam_counter *sum, const struct xtcam_counter *c)
{
	sum->packets += c->packets;
	sum->bytes += c->bytes;
	if (c->last_hit > sum->last_hit)
		sum->last_hit = c->last_hit;
}

static void xdp_view(struct xtcam_block *b, struct xtcam_rview *v)
{
	struct xdp_blk *x = xdp_blk(b);

	if (!x)
		return;
	v->dp = x->dp;
	snprintf(v->default_ns, sizeof(v->default_ns), "%s", x->default_ns);
}

static int xdp_view_ro(struct xtcam_ctx *ctx, const struct xtcam_block_rec *rec,
		       const struct xtcam_bind_rec *bind, struct xtcam_rview *v)
{
	char dir[256];
	int e;

	snprintf(v->default_ns, sizeof(v->default_ns), "%s", bind->netns);
	e = xtcam_state_block_dir(ctx->st, rec->name, "xdp", dir, sizeof(dir));
	if (!e)
		e = xtcam_dp_open_pinned_ro(dir, &v->own);
	if (e == -ENOENT)
		e = 0;          /* unbound meanwhile */
	v->dp = v->own;
	return e;
}

static int xdp_rule_counters(const struct xtcam_rview *v, __u32 handle,
			     struct xtcam_counter *sum)
{
	struct xtcam_counter c;

	if (!v->dp || xtcam_dp_rule_counters(v->dp, handle, &c))
		return 0;
	counter_add(sum, &c);
	return 0;
}

static int xdp_counters_snapshot(const struct xtcam_rview *v, void **snap)
{
	struct xtcam_dp_counters *t = NULL;
	int e;

	*snap = NULL;
	if (!v->dp)
		return 0;
	e = xtcam_dp_counters_start(v->dp, &t);
	if (!e)
		*snap = t;
	return e;
}

static int xdp_snapshot_wait(void *snap)
{
	return xtcam_dp_counters_wait(snap);
}

static void xdp_snapshot_counters(const void *snap, __u32 handle, struct xtcam_counter *sum)
{
	struct xtcam_counter c;

	xtcam_dp_counters_get(snap, handle, &c);
	counter_add(sum, &c);
}

static void xdp_snapshot_free(void *snap)
{
	xtcam_dp_counters_free(snap);
}

static int xdp_counters_reset(struct xtcam_block *b)
{
	struct xdp_blk *x = xdp_blk(b);

	return x ? xtcam_dp_counters_reset(x->dp) : 0;
}

static void xdp_block_stats(const struct xtcam_rview *v, struct xtcam_block_stats *s)
{
	struct xtcam_counter miss;
	struct xtcam_dp_info info;

	if (!v->dp)
		return;
	if (!xtcam_dp_stat(v->dp, XTCAM_STAT_MISS, &miss)) {
		s->miss.packets += miss.packets;
		s->miss.bytes += miss.bytes;
	}
	if (!xtcam_dp_info(v->dp, &info, false))
		s->tuples = (s->tuples < 0 ? 0 : s->tuples) + info.ntuples;
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
static void xdp_notes(struct xtcam_ctx *c, const struct xtcam_rview *v,
		      const struct xtcam_block_rec *brec, const struct xtcam_bind_rec *recs,
		      size_t nk, json_object *notes)
{
	struct xtcam_block *blk = v->blk;
	const char *name = brec->name;
	char tnote[XTCAM_MAX_TARGETS][XTCAM_MSG_MAX], note[XTCAM_MSG_MAX];
	struct xtcam_target tg[XTCAM_MAX_TARGETS];
	const struct xtcam_rule *core_rules = NULL;
	struct xtcam_rule *rules = NULL;
	bool native = false, generic = false, cpu = false, want_cpu = false;
	size_t n = 0, i, k, ntg = 0;
	__u32 slot;
	int tfd;

	if (!v->dp)
		return;
	for (k = 0; k < nk; k++) {
		if (recs[k].state != XTCAM_BIND_ACTIVE || strcmp(recs[k].block, name))
			continue;
		native |= !strcmp(recs[k].mode, "native");
		generic |= !strcmp(recs[k].mode, "generic");
	}
	tfd = xtcam_dp_map_fd(v->dp, XTCAM_MAP_TARGETS);
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
		if (recs[k].state == XTCAM_BIND_ACTIVE && !strcmp(recs[k].block, name) &&
		    !strcmp(recs[k].mode, "native"))
			want_cpu = xtcam_cpu_note(recs[k].netns, recs[k].dev, note, sizeof(note)) == 1;
	if (!ntg && !want_cpu)
		return;

	/* which of them do the rules use? */
	/* a show loads no block's rules into the core (a reader has no
	 * core): read them here */
	n = blk ? xtcam_block_rule_count(blk) : 0;
	if ((!blk || n != brec->nrules) && xtcam_state_rules(c->st, brec, false, &rules, &n)) {
		rules = NULL;
		n = blk ? xtcam_block_rule_count(blk) : 0;
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
			    !strcmp(tg[k].netns, a->netns[0] ? a->netns : v->default_ns)) {
				json_object_array_add(notes, json_object_new_string(tnote[k]));
				tnote[k][0] = 0;        /* once */
			}
	}
	free(rules);
	for (k = 0; cpu && k < nk; k++) {
		if (recs[k].state != XTCAM_BIND_ACTIVE || strcmp(recs[k].block, name))
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
}

static void xdp_init(struct xtcam_ctx *ctx)
{
	INIT_LIST_HEAD(&ctx->xdp_list);
}

const struct xtcam_driver_ops xtcam_xdp_ops = {
	.setup = xdp_setup_cb,
	.init = xdp_init,
	.bind_check = xdp_bind_check,
	.attach = xdp_attach,
	.attached = xtcam_attach_check,
	.detach = xtcam_detach,
	.undo = xdp_undo,
	.orphans = xdp_orphans,
	.reconcile = xdp_reconcile,
	.view = xdp_view,
	.view_ro = xdp_view_ro,
	.rule_counters = xdp_rule_counters,
	.counters_snapshot = xdp_counters_snapshot,
	.snapshot_wait = xdp_snapshot_wait,
	.snapshot_counters = xdp_snapshot_counters,
	.snapshot_free = xdp_snapshot_free,
	.counters_reset = xdp_counters_reset,
	.block_stats = xdp_block_stats,
	.notes = xdp_notes,
};
