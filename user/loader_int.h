/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Internals shared by the loader and its backends. */
#ifndef XTCAM_LOADER_INT_H
#define XTCAM_LOADER_INT_H

#include <stdbool.h>
#include "xtcam/core.h"
#include "xtcam/dp.h"
#include "xtcam/loader.h"
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
	struct list_head hw_list;
	unsigned int flags;
	/* the bind or unbind in progress */
	struct {
		const char *netns;      /* of the device */
		const char *dev;
		bool force;
		struct xtcam_attach_info info;  /* bind: what was attached */
		const struct xtcam_attach_info *old; /* unbind: what to detach */
	} req;
};

extern flow_setup_cb_t xtcam_xdp_rules_cb;
int xtcam_xdp_setup(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv);
int xtcam_hw_setup(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv);
/* the block's shared data path, if bound to native or generic XDP */
struct xdp_blk *xtcam_xdp_blk(struct xtcam_block *b);
/* Bring a data path back to the block's rules (after a crash). */
int xtcam_xdp_reconcile(struct xdp_blk *x, char *err, size_t errlen);

#endif
