/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * flow_block: how a rule table ("block") is bound to devices, in userspace,
 * with the names and semantics of the Linux kernel's flow_block API as it
 * settled in v5.3 (include/net/flow_offload.h, net/core/flow_offload.c).
 * See docs/flow_block.md.
 *
 * A backend ("driver": hw offload, native XDP, generic XDP) receives a
 * struct flow_block_offload with FLOW_BLOCK_BIND or FLOW_BLOCK_UNBIND.  On
 * bind it allocates flow_block_cb objects (or finds and increfs one it
 * already has), keeps them on its own driver_block_list and queues the new
 * ones on f->cb_list with flow_block_cb_add(); the core then registers
 * them on the block and replays the block's rules to them.  On unbind it
 * queues the ones to drop with flow_block_cb_remove(); the core replays the
 * removal of every rule to them, unregisters and frees them.
 *
 * Differences from the kernel, all on purpose:
 *  - `net` is a struct xtcam_net, the identity of a network namespace; the
 *    core keeps one object per namespace, so pointers compare as in the
 *    kernel (flow_block_cb_alloc() and flow_block_cb_lookup() keep the
 *    `net` of the seed patches);
 *  - the extack is a plain message buffer (errmsg, errmsg_len);
 *  - `restore` and `keep` let a new process rebuild the core from the state
 *    the loader persisted (see the field comments).
 */
#ifndef XTCAM_FLOW_BLOCK_H
#define XTCAM_FLOW_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "err.h"
#include "list.h"

/*
 * The identity of a network namespace: the device and inode numbers of its
 * nsfs file (stat("/proc/self/ns/net") or "/run/netns/NAME").  Two devices
 * with the same ifindex in different namespaces are different devices.
 */
struct xtcam_net {
	__u64 dev;
	__u64 ino;
};

struct xtcam_block;

enum flow_block_command {
	FLOW_BLOCK_BIND,
	FLOW_BLOCK_UNBIND,
};

enum flow_block_binder_type {
	FLOW_BLOCK_BINDER_TYPE_UNSPEC,
	FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
	FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS,
};

/* What a block callback is asked to do (the kernel's tc_setup_type). */
enum xtcam_setup_type {
	XTCAM_SETUP_RULES,    /* type_data: struct xtcam_rules_offload (core.h) */
};

/* A block callback: returns 0 or a negative errno. */
typedef int flow_setup_cb_t(enum xtcam_setup_type type, void *type_data,
			    void *cb_priv);

struct flow_block_offload {
	enum flow_block_command command;
	enum flow_block_binder_type binder_type;
	struct xtcam_block *block;
	struct xtcam_net *net;               /* the device's namespace */
	struct list_head cb_list;            /* flow_block_cb.list: what the
					      * backend hands to the core */
	struct list_head *driver_block_list; /* set by the backend (or by
					      * flow_block_cb_setup_simple) */
	char *errmsg;                        /* extack: NULL or errmsg_len */
	size_t errmsg_len;                   /* bytes, set a message with
					      * flow_block_errmsg() */
	/*
	 * BIND only: the binding exists already in the kernel (pinned maps,
	 * attached programs) and this process is rebuilding its view of it.
	 * The backend re-attaches to what it made before instead of making
	 * it; the core registers what it queues but replays no rule.
	 */
	bool restore;
	/*
	 * UNBIND only: this process is letting go of the binding but the
	 * binding stays (xtcam_core_free() at exit).  The backend drops its
	 * references as usual but keeps the kernel state for a later
	 * restore; the core replays no rule removal.
	 */
	bool keep;
};

struct flow_block_cb {
	struct list_head driver_list;   /* on the backend's driver_block_list */
	struct list_head list;          /* on f->cb_list, then the block's */
	struct xtcam_net *net;
	flow_setup_cb_t *cb;
	void *cb_ident;
	void *cb_priv;
	void (*release)(void *cb_priv);
	unsigned int refcnt;
	/*
	 * UNBIND: set by the driver on a callback it takes off the block
	 * when the callback's rules go with it whole (the driver frees its
	 * tables, as a driver does that destroys its whole TCAM on the last
	 * unbind): the core replays no rule removal to it, and need not read
	 * the rules for it.  Callbacks without it get the replay as before.
	 */
	bool no_removal;
};

/*
 * Allocate a callback object (refcnt 0, on no list).  Returns it or
 * ERR_PTR(-ENOMEM).
 */
struct flow_block_cb *flow_block_cb_alloc(struct xtcam_net *net,
					  flow_setup_cb_t *cb, void *cb_ident,
					  void *cb_priv,
					  void (*release)(void *cb_priv));

/*
 * Call release(cb_priv) if release is set, then free the object.  It must
 * be on no list (or the lists must be dropped with it).  NULL is a no-op.
 */
void flow_block_cb_free(struct flow_block_cb *block_cb);

/*
 * The callback on f->driver_block_list with this namespace (f->net), cb and
 * cb_ident, or NULL.  NULL too when f->driver_block_list is not set.
 */
struct flow_block_cb *flow_block_cb_lookup(struct flow_block_offload *f,
					   flow_setup_cb_t *cb, void *cb_ident);

void *flow_block_cb_priv(struct flow_block_cb *block_cb);
void flow_block_cb_incref(struct flow_block_cb *block_cb);
/* Returns the new count; a count of 0 stays 0. */
unsigned int flow_block_cb_decref(struct flow_block_cb *block_cb);

/* Queue a new callback for the core to register (BIND). */
void flow_block_cb_add(struct flow_block_cb *block_cb,
		       struct flow_block_offload *f);

/* Queue a registered callback for the core to unregister and free
 * (UNBIND).  The backend takes it off its driver list itself. */
void flow_block_cb_remove(struct flow_block_cb *block_cb,
			  struct flow_block_offload *f);

/*
 * Whether driver_block_list holds a callback with this cb and cb_ident.
 * The namespace is not compared (as in the kernel): cb_ident must identify
 * the device on its own.
 */
bool flow_block_cb_is_busy(flow_setup_cb_t *cb, void *cb_ident,
			   struct list_head *driver_block_list);

/*
 * The whole setup of a backend with one callback per device (cb_ident):
 * BIND allocates it, queues it and puts it on driver_block_list; UNBIND
 * finds it there, queues it for removal and takes it off.  Returns 0,
 * -EOPNOTSUPP for a binder type other than clsact ingress when
 * ingress_only, -EBUSY when binding a cb/cb_ident already on the list,
 * -ENOMEM, -ENOENT when unbinding one that is not there, -EOPNOTSUPP for an
 * unknown command.  Sets f->driver_block_list.
 */
int flow_block_cb_setup_simple(struct flow_block_offload *f,
			       struct list_head *driver_block_list,
			       flow_setup_cb_t *cb, void *cb_ident,
			       void *cb_priv, bool ingress_only);

/* Write a message into f->errmsg (the kernel's NL_SET_ERR_MSG); a no-op
 * without a buffer. */
void flow_block_errmsg(struct flow_block_offload *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
