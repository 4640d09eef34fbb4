// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What `rule show` and `block show` read of a block besides the registry:
 * what its backends hold (rule counters, misses, tuples).  With the lock,
 * the core's block and each backend's view() of it; a reader without the
 * lock has no core: each backend's view_ro() opens what it can read-only
 * and repairs nothing (the XDP data path: xtcam_dp_open_pinned_ro()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "driver.h"
#include "loader_int.h"

int xtcam_rview_get(struct xtcam_ctx *c, const struct xtcam_block_rec *rec,
		    const struct xtcam_bind_rec *recs, size_t nk, struct xtcam_rview *v)
{
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *own = NULL;
	const struct xtcam_driver_ops *done[XTCAM_NDRIVERS];
	size_t i, n_done = 0;
	int e = 0;

	memset(v, 0, sizeof(*v));
	xtcam_spec_of(rec, &v->spec);
	if (!(c->flags & XTCAM_OPEN_READ)) {
		v->blk = xtcam_block_find(c->core, rec->name);
		for (i = 0; v->blk && i < c->nimpl; i++)
			if (c->impl[i]->view)
				c->impl[i]->view(v->blk, v);
		return 0;
	}
	if (!recs) {
		e = xtcam_state_bindings(c->st, &keys, &own, &nk);
		if (e)
			return e;
		recs = own;
	}
	/* the first active binding of each backend: the first XDP one names
	 * the namespace of redirects without one */
	for (i = 0; !e && i < nk; i++) {
		const struct xtcam_driver *d;
		size_t j;

		if (recs[i].state != XTCAM_BIND_ACTIVE || strncmp(recs[i].block, rec->name,
								   sizeof(recs[i].block)))
			continue;
		d = xtcam_driver_named(c, recs[i].mode);
		if (!d || !d->ops->view_ro)
			continue;
		for (j = 0; j < n_done && done[j] != d->ops; j++)
			;
		if (j < n_done)
			continue;
		done[n_done++] = d->ops;
		e = d->ops->view_ro(c, rec, &recs[i], v);
	}
	if (e)
		xtcam_rview_put(v);
	free(keys);
	free(own);
	return e;
}

void xtcam_rview_put(struct xtcam_rview *v)
{
	xtcam_dp_free(v->own);
	v->own = NULL;
	v->dp = NULL;
}
