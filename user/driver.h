/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The backends as the command layer sees them.  Each backend
 * implementation fills one operations table (struct xtcam_driver_ops):
 * backend_xdp.c serves the native and generic modes with xtcam_xdp_ops,
 * backend_hw.c the hw mode with xtcam_hw_ops.  A context holds one driver
 * per mode (struct xtcam_driver: the core's struct xtcam_backend, its mode
 * and its table), in the order `mode auto` tries them, and the distinct
 * tables once each (ctx->impl).  The command code calls only through
 * them: per mode where a binding names one (bind, attach, detach, undo),
 * per implementation where a block is asked (counters, statistics, notes,
 * repair); an implementation finds its own callbacks on the block.
 *
 * init, fini, bind_check, block_stats and notes may be NULL: nothing to
 * do or to say for that backend; the other operations are required.
 * Functions return 0 or a negative errno unless said otherwise; messages
 * name the object and the reason.
 */
#ifndef XTCAM_DRIVER_H
#define XTCAM_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "xtcam/core.h"
#include "xtcam/state.h"
#include "xtcam/table.h"
#include "attach.h"

struct xtcam_ctx;
struct xtcam_driver;
struct xtcam_rview;

/* What block show says of a block that only its data paths know. */
struct xtcam_block_stats {
	struct xtcam_counter miss;      /* frames given the default action */
	long long tuples;               /* the lookup's tuples; -1: no data
					 * path that has any */
};

struct xtcam_driver_ops {
	/* The core's setup (struct xtcam_backend): flow_block bind and
	 * unbind of a device, priv is the context.  A bind sets
	 * ctx->req.offload (the device's record, kept in the binding) and
	 * ctx->req.cb_priv (what attach() needs); a restore reads
	 * ctx->req.offload back. */
	int (*setup)(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv);
	/* At xtcam_open, before anything else / at xtcam_close, after the
	 * core is freed: the implementation's state in the context. */
	void (*init)(struct xtcam_ctx *ctx);
	void (*fini)(struct xtcam_ctx *ctx);
	/* A restored binding needs the block's rules in the core (the hw
	 * backend rebuilds its image of the device from them). */
	bool restore_needs_rules;

	/* --- bind and unbind --- */
	/* Before a bind tries any mode: what the block will need of this
	 * backend on a device of namespace netns (the XDP data path made
	 * with the bind resolves its redirects there).  err: the reason,
	 * without the device's name. */
	int (*bind_check)(struct xtcam_ctx *ctx, struct xtcam_block *b, const char *netns,
			  char *err, size_t errlen);
	/* After xtcam_bind() through driver d succeeded: attach to ifindex in
	 * namespace ctx->req.netns (device ctx->req.dev); refuses (-EBUSY) to
	 * replace a program that is not xtcam's unless force.  *info: what
	 * was attached, persisted with the binding for detach. */
	int (*attach)(const struct xtcam_driver *d, struct xtcam_ctx *ctx, struct xtcam_block *b,
		      __u32 ifindex, bool force, struct xtcam_attach_info *info, char *err,
		      size_t errlen);
	/* In the device's namespace: 1 if what info records is attached, 0 if
	 * not, -errno / detach it (-ENOENT when it is not there). */
	int (*attached)(const struct xtcam_attach_info *info);
	int (*detach)(const struct xtcam_attach_info *info, char *err, size_t errlen);

	/* --- after a crash --- */
	/* A bind through d that crashed before it recorded what it attached:
	 * detach xtcam's program of d's mode from ifindex, if any (caller's
	 * namespace). */
	void (*undo)(const struct xtcam_driver *d, __u32 ifindex);
	/* A block with no binding: remove the kernel objects this backend
	 * left pinned for it, and the block's directory if that leaves it
	 * empty. */
	void (*orphans)(struct xtcam_ctx *ctx, const char *block);
	/* After an interrupted rule change: bring this backend's callbacks on
	 * b back to the block's rules (in the core). */
	int (*reconcile)(struct xtcam_block *b, char *err, size_t errlen);

	/* --- counters and show: of a block as a command sees it (struct
	 * xtcam_rview: the core's block with the lock, NULL without; the
	 * XDP data path, opened read-only by a reader without the lock) --- */
	/* Add rule handle's counters on the block (every callback of this backend,
	 * every device) to *sum: packets and bytes add, last_hit is the
	 * latest. */
	/* Optional: with the lock, fill in what this backend holds of block
	 * b in the view (the XDP data path and its redirects' namespace). */
	void (*view)(struct xtcam_block *b, struct xtcam_rview *v);
	/* Without the lock (a reader, no core): fill in the view of block
	 * rec from bind, the first active binding of the block through this
	 * backend, read-only, repairing nothing.  -EAGAIN when this backend's
	 * counters can only be read through the core, with the lock.  NULL:
	 * nothing to read. */
	int (*view_ro)(struct xtcam_ctx *ctx, const struct xtcam_block_rec *rec,
		       const struct xtcam_bind_rec *bind, struct xtcam_rview *v);
	int (*rule_counters)(const struct xtcam_rview *v, __u32 handle, struct xtcam_counter *sum);
	/* Optional, for a listing of the whole block: the counters of all
	 * its rules read at once into *snap (NULL: nothing to read), a rule's
	 * added from there as rule_counters() adds them, and *snap freed.
	 * The read may go on in the background (rule_counters() still works
	 * meanwhile): snapshot_wait (optional) waits for it, 0 or -errno,
	 * before the first snapshot_counters. */
	int (*counters_snapshot)(const struct xtcam_rview *v, void **snap);
	int (*snapshot_wait)(void *snap);
	void (*snapshot_counters)(const void *snap, __u32 handle, struct xtcam_counter *sum);
	void (*snapshot_free)(void *snap);
	int (*counters_reset)(struct xtcam_block *b);
	/* Add to *s what this backend knows of the block. */
	void (*block_stats)(const struct xtcam_rview *v, struct xtcam_block_stats *s);
	/* Append to the JSON array notes what block show should tell of the block
	 * (record brec) with the bindings recs[0..nk) (of every block, any
	 * state). */
	void (*notes)(struct xtcam_ctx *ctx, const struct xtcam_rview *v,
		      const struct xtcam_block_rec *brec, const struct xtcam_bind_rec *recs,
		      size_t nk, json_object *notes);
};

/* One mode: what the core registers, and its backend's operations. */
struct xtcam_driver {
	struct xtcam_backend be;        /* name (the mode's), ops->setup, ctx */
	enum xtcam_mode mode;
	const struct xtcam_driver_ops *ops;
};

/* The modes, in the order `mode auto` tries them. */
#define XTCAM_NDRIVERS 3

extern const struct xtcam_driver_ops xtcam_xdp_ops, xtcam_hw_ops;

/* Fill ctx->drv and ctx->impl and init() each implementation. */
void xtcam_drivers_init(struct xtcam_ctx *ctx);
/* Register every mode with the core (for restore): -ENOMEM, -EEXIST. */
int xtcam_drivers_register(struct xtcam_ctx *ctx);
/* fini() each implementation (after the core is freed). */
void xtcam_drivers_fini(struct xtcam_ctx *ctx);
/* The driver of a mode, by name ("hw") or by enum xtcam_mode; NULL when
 * there is none. */
struct xtcam_driver *xtcam_driver_named(struct xtcam_ctx *ctx, const char *name);
struct xtcam_driver *xtcam_driver_of_mode(struct xtcam_ctx *ctx, enum xtcam_mode mode);
/* "hw, native, generic": the modes' names, for messages. */
void xtcam_driver_names(struct xtcam_ctx *ctx, char *buf, size_t len);

/* For the backends' unbind: detach inside the device's namespace netns;
 * a namespace or device already gone is nothing to detach (0); other
 * errors go to f's message. */
int xtcam_detach_in(struct flow_block_offload *f, const char *netns,
		    int (*detach)(const struct xtcam_attach_info *, char *, size_t),
		    const struct xtcam_attach_info *old);

#endif
