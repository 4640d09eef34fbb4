// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The flow_block callback objects and the per-backend list helpers (the
 * kernel's net/core/flow_offload.c, v5.3 semantics).  See flow_block.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "xtcam/flow_block.h"
#include "alloc.h"

struct flow_block_cb *flow_block_cb_alloc(struct xtcam_net *net,
					  flow_setup_cb_t *cb, void *cb_ident,
					  void *cb_priv,
					  void (*release)(void *cb_priv))
{
	struct flow_block_cb *block_cb;

	block_cb = xtcam_calloc(1, sizeof(*block_cb));
	if (!block_cb)
		return ERR_PTR(-ENOMEM);

	INIT_LIST_HEAD(&block_cb->driver_list);
	INIT_LIST_HEAD(&block_cb->list);
	block_cb->net = net;
	block_cb->cb = cb;
	block_cb->cb_ident = cb_ident;
	block_cb->cb_priv = cb_priv;
	block_cb->release = release;
	return block_cb;
}

void flow_block_cb_free(struct flow_block_cb *block_cb)
{
	if (!block_cb)
		return;
	if (block_cb->release)
		block_cb->release(block_cb->cb_priv);
	free(block_cb);
}

struct flow_block_cb *flow_block_cb_lookup(struct flow_block_offload *f,
					   flow_setup_cb_t *cb, void *cb_ident)
{
	struct flow_block_cb *block_cb;

	if (!f->driver_block_list)
		return NULL;

	list_for_each_entry(block_cb, f->driver_block_list, driver_list) {
		if (block_cb->net == f->net && block_cb->cb == cb &&
		    block_cb->cb_ident == cb_ident)
			return block_cb;
	}
	return NULL;
}

void *flow_block_cb_priv(struct flow_block_cb *block_cb)
{
	return block_cb->cb_priv;
}

void flow_block_cb_incref(struct flow_block_cb *block_cb)
{
	block_cb->refcnt++;
}

unsigned int flow_block_cb_decref(struct flow_block_cb *block_cb)
{
	if (block_cb->refcnt)
		block_cb->refcnt--;
	return block_cb->refcnt;
}

void flow_block_cb_add(struct flow_block_cb *block_cb,
		       struct flow_block_offload *f)
{
	list_add_tail(&block_cb->list, &f->cb_list);
}

void flow_block_cb_remove(struct flow_block_cb *block_cb,
			  struct flow_block_offload *f)
{
	list_move(&block_cb->list, &f->cb_list);
}

bool flow_block_cb_is_busy(flow_setup_cb_t *cb, void *cb_ident,
			   struct list_head *driver_block_list)
{
	struct flow_block_cb *block_cb;

	list_for_each_entry(block_cb, driver_block_list, driver_list) {
		if (block_cb->cb == cb && block_cb->cb_ident == cb_ident)
			return true;
	}
	return false;
}

int flow_block_cb_setup_simple(struct flow_block_offload *f,
			       struct list_head *driver_block_list,
			       flow_setup_cb_t *cb, void *cb_ident,
			       void *cb_priv, bool ingress_only)
{
	struct flow_block_cb *block_cb;

	if (ingress_only &&
	    f->binder_type != FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS) {
		flow_block_errmsg(f, "only ingress is supported");
		return -EOPNOTSUPP;
	}

	f->driver_block_list = driver_block_list;

	switch (f->command) {
	case FLOW_BLOCK_BIND:
		if (flow_block_cb_is_busy(cb, cb_ident, driver_block_list)) {
			flow_block_errmsg(f, "block callback already in use");
			return -EBUSY;
		}
		block_cb = flow_block_cb_alloc(f->net, cb, cb_ident, cb_priv,
					       NULL);
		if (IS_ERR(block_cb))
			return PTR_ERR(block_cb);
		flow_block_cb_add(block_cb, f);
		list_add_tail(&block_cb->driver_list, driver_block_list);
		return 0;
	case FLOW_BLOCK_UNBIND:
		block_cb = flow_block_cb_lookup(f, cb, cb_ident);
		if (!block_cb) {
			flow_block_errmsg(f, "block callback not bound");
			return -ENOENT;
		}
		flow_block_cb_remove(block_cb, f);
		list_del(&block_cb->driver_list);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

void flow_block_errmsg(struct flow_block_offload *f, const char *fmt, ...)
{
	va_list ap;

	if (!f->errmsg || !f->errmsg_len)
		return;
	va_start(ap, fmt);
	vsnprintf(f->errmsg, f->errmsg_len, fmt, ap);
	va_end(ap);
}
