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
#include "state.h"

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

struct xtcam_ctx {
	struct xtcam_state *st;
	struct xtcam_core *core;
	struct xtcam_net *host_net;
	struct xtcam_backend be_hw, be_native, be_generic;
	struct list_head xdp_list;      /* flow_block_cb driver list */
	struct list_head hw_list;       /* the hw backend's driver list */
	struct list_head hw_idents;     /* its cb_idents (backend_hw.c) */
	struct list_head srcs;          /* the blocks' rule sources (ctx.c) */
	unsigned int flags;
	/* the bind or unbind in progress */
	struct {
		const char *netns;      /* of the device */
		const char *dev;
		bool force;
		struct xtcam_attach_info info;  /* bind: what was attached */
		const struct xtcam_attach_info *old; /* unbind: what to detach;
						      * restore: what is attached */
		/* hw: the offload device ("DRIVER/BUS_INFO"); set by the
		 * loader for a restore, by the backend on a bind */
		char offload[XTCAM_STATE_OFFLOAD];
		void *hw;               /* hw bind: the callback's state */
	} req;
};

extern flow_setup_cb_t xtcam_xdp_rules_cb;
int xtcam_xdp_setup(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv);
int xtcam_hw_setup(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv);
/* the block's shared data path, if bound to native or generic XDP */
struct xdp_blk *xtcam_xdp_blk(struct xtcam_block *b);
/* Bring a data path back to the block's rules (after a crash). */
int xtcam_xdp_reconcile(struct xdp_blk *x, char *err, size_t errlen);

/* --- the hw backend (backend_hw.c) --- */
extern flow_setup_cb_t xtcam_hw_rules_cb;
/* After a hw bind (ctx->req.hw set): attach its offloaded program to
 * ifindex in ctx->req.netns with XDP_FLAGS_HW_MODE; refuses (-EBUSY) to
 * replace another offloaded program unless force. */
int xtcam_hw_attach(struct xtcam_ctx *ctx, __u32 ifindex, bool force,
		    struct xtcam_attach_info *info, char *err, size_t errlen);
/* Add the device counters of rule `handle` (every offload device the
 * block is on) to *sum. */
int xtcam_hw_rule_stats(struct xtcam_block *b, __u32 handle, struct xtcam_counter *sum);
int xtcam_hw_counters_reset(struct xtcam_block *b);
/* Rewrite the block's device tables from its rules (after a crash). */
int xtcam_hw_reconcile(struct xtcam_block *b, char *err, size_t errlen);
/* In the caller's namespace: 1 if the offloaded program of info (mode
 * XTCAM_MODE_HW) is attached, 0 if not, -errno; and detach it. */
int xtcam_hw_attached(const struct xtcam_attach_info *info);
int xtcam_hw_detach(const struct xtcam_attach_info *info, char *err, size_t errlen);

/* Unbind's detach, inside the device's namespace netns: a namespace or
 * device already gone is nothing to detach (0); other errors go to f's
 * message.  Returns 0 or -errno. */
int xtcam_detach_in(struct flow_block_offload *f, const char *netns,
		    int (*detach)(const struct xtcam_attach_info *, char *, size_t),
		    const struct xtcam_attach_info *old);
/* After a crash: a block's offload objects when it has no binding; our
 * offloaded program on ifindex (caller's namespace). */
void xtcam_hw_orphans(struct xtcam_ctx *ctx, const char *block);
void xtcam_hw_undo(__u32 ifindex);
/* At open: undo a restore that did not commit (restore.c). */
int xtcam_restore_recover(struct xtcam_ctx *ctx, char *err, size_t errlen);
/* the context's cb_idents, at xtcam_close() after the core */
void xtcam_hw_ctx_free(struct xtcam_ctx *ctx);

/* --- shared by the context and the commands (ctx.c, cmd_*.c) --- */
/* the spec a block record describes */
void xtcam_spec_of(const struct xtcam_block_rec *b, struct xtcam_block_spec *s);
/* the backend of a binding mode ("hw", "native", "generic") */
struct xtcam_backend *xtcam_backend_named(struct xtcam_ctx *c, const char *mode);
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
json_object *xtcam_binding_json(const struct xtcam_bind_rec *r);
/* true when the binding's device or namespace is no longer there */
bool xtcam_binding_gone(const struct xtcam_bind_rec *r);
/* A block about to get its data path in namespace netns: each redirect
 * without netns of its own goes there, so its device must be there. */
int xtcam_check_bind_targets(const struct xtcam_block *b, const char *netns, char *err,
			     size_t errlen);

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
