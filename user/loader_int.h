/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Internals shared by the context (ctx.c), the commands (cmd_*.c) and the
 * backends. */
#ifndef XTCAM_LOADER_INT_H
#define XTCAM_LOADER_INT_H

#include <stdbool.h>
#include "xtcam/core.h"
#include "xtcam/dp.h"
#include "xtcam/loader.h"
#include "xtcam/state.h"
#include "xtcam/table.h"
#include "attach.h"
#include "driver.h"
#include "state.h"

struct xtcam_ctx {
	struct xtcam_state *st;
	struct xtcam_core *core;
	struct xtcam_net *host_net;
	/* the modes, in the order auto tries them, and their backends'
	 * operations once each (driver.h) */
	struct xtcam_driver drv[XTCAM_NDRIVERS];
	const struct xtcam_driver_ops *impl[XTCAM_NDRIVERS];
	size_t nimpl;
	/* the backends' own state (init and fini of their operations) */
	struct list_head xdp_list;      /* backend_xdp.c's driver list */
	struct list_head hw_list;       /* backend_hw.c's driver list */
	struct list_head hw_idents;     /* its cb_idents */
	struct list_head srcs;          /* the blocks' rule sources (ctx.c) */
	unsigned int flags;
	/* a change leaves its data paths' catch-ups under way (not settled
	 * before it returns): the caller holds the lock until they are
	 * done (ctl.c) */
	bool linger;
	/* a lingering change's registry copy under way in a thread (cmd_rule.c),
	 * joined before the next change reads its block's record and at close;
	 * told to notify (+1 at its start, -1 at its end) as the data paths'
	 * catch-ups are (ctl.c) */
	struct rcopy *rcopy;
	/* a change of more than DEFER_MAX rules returns at its commit point:
	 * the registry's copy and the data paths' catch-ups are finished by a
	 * detached process that keeps the lock (cmd_rule.c: the CLI's rule
	 * load) */
	bool finisher;
	/* a finisher took this context's last change over: the context is
	 * not kept for the next command (-batch): the next opens afresh,
	 * after the finisher, and repairs what a killed one left */
	bool finished;
	void (*notify)(void *arg, int delta);
	void *notify_arg;
	/* the bind or unbind in progress */
	struct {
		const char *netns;      /* of the device */
		const char *dev;
		bool force;
		struct xtcam_attach_info info;  /* bind: what was attached */
		const struct xtcam_attach_info *old; /* unbind: what to detach;
						      * restore: what is attached */
		/* the device's hardware as the backend names it (hw: the
		 * offload device, "DRIVER/BUS_INFO"), kept in the binding:
		 * set by the backend on a bind, by the loader for a restore */
		char offload[XTCAM_STATE_OFFLOAD];
		void *cb_priv;          /* bind: what the backend's attach
					 * needs (set by its setup) */
	} req;
};

/* At open: undo a restore that did not commit (restore.c). */
int xtcam_restore_recover(struct xtcam_ctx *ctx, char *err, size_t errlen);

/* --- shared by the context and the commands (ctx.c, cmd_*.c) --- */
/* the spec a block record describes */
void xtcam_spec_of(const struct xtcam_block_rec *b, struct xtcam_block_spec *s);
/* what a binding record says is attached */
void xtcam_info_of(const struct xtcam_bind_rec *r, struct xtcam_attach_info *i);
/* undo a binding that was recorded as pending and never committed */
void xtcam_undo_pending(struct xtcam_ctx *c, const struct xtcam_bind_key *k,
			const struct xtcam_bind_rec *r);
/* the record of block `name`; -ENOENT with "block NAME: no such block" */
int xtcam_block_rec(struct xtcam_ctx *c, const char *name, struct xtcam_block_rec *rec,
		    char *err, size_t errlen);
/* a JSON string, "" for NULL */
json_object *xtcam_jstr(const char *s);
/* a binding as block show has it */
json_object *xtcam_binding_json(struct xtcam_ctx *c, const struct xtcam_bind_rec *r);
/* true when the binding's device or namespace is no longer there */
bool xtcam_binding_gone(struct xtcam_ctx *c, const struct xtcam_bind_rec *r);

/* A batch of changes to one block's rules, made by the caller against the
 * block's committed rules (each DEL and REPLACE with the registry's rule
 * in old; apply.c).  check: 0, or what the batch would be refused for
 * (an action, a malformed rule, capacity), changing nothing.  apply: the
 * batch as one atomic change of the block, O(its changes); the rules not
 * in it are not touched (their counters stay). */
int xtcam_rule_ops_check(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
			 size_t n, char *err, size_t errlen);
int xtcam_rule_ops_apply(struct xtcam_ctx *c, const char *block, const struct xtcam_rule_op *ops,
			 size_t n, char *err, size_t errlen);

/* The XDP data paths of the context: their flips' catch-ups deferred
 * (xtcam_dp_set_defer), then settled (and no longer deferred), the first
 * error returned. */
void xtcam_xdp_defer(struct xtcam_ctx *ctx, bool defer);
int xtcam_xdp_settle(struct xtcam_ctx *ctx);
/* their catch-ups held for a process forked at the commit point (settled
 * there), forgotten by the parent (xtcam_dp_set_hold, xtcam_dp_forget) */
void xtcam_xdp_hold(struct xtcam_ctx *ctx);
void xtcam_xdp_forget(struct xtcam_ctx *ctx);
/* join a lingering change's registry copy: its error, or 0 */
int xtcam_rules_join(struct xtcam_ctx *ctx);
/* xtcam_dp_set_notify on each of them (each made since the context was
 * opened: none of their catch-ups under way). */
void xtcam_xdp_notify(struct xtcam_ctx *ctx, void (*fn)(void *arg, int delta), void *arg);

/* What a show reads of a block besides the registry (rview.c). */
struct xtcam_rview {
	struct xtcam_block_spec spec;
	struct xtcam_block *blk;        /* with the lock: the core's (hw counters) */
	struct xtcam_dp *dp;            /* its XDP data path; NULL: not bound there */
	struct xtcam_dp *own;           /* without the lock: opened read-only here */
	char default_ns[XTCAM_NETNS_MAX];  /* of redirects without a netns */
};
/* The view of block rec; recs/nk the bindings a reader without the lock
 * has read already (NULL: read here).  -EAGAIN for such a reader when the
 * block is bound to an offload device: its counters are only read through
 * the core, with the lock. */
int xtcam_rview_get(struct xtcam_ctx *c, const struct xtcam_block_rec *rec,
		    const struct xtcam_bind_rec *recs, size_t nk, struct xtcam_rview *v);
void xtcam_rview_put(struct xtcam_rview *v);
/* Readers without the lock read a block (or everything) again while a
 * writer commits meanwhile, at most this many times. */
#define XTCAM_READ_PASSES 64
/* What a reader read is one committed state if this is the same before
 * and after: every block record, the bindings, and the blocks of a
 * restore under way (read again here).  malloc'd, in *sig. */
int xtcam_read_sig(struct xtcam_ctx *c, char **sig, size_t *len);

#endif
