// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What `rule show` and `block show` read of a block besides the registry:
 * its XDP data path (rule counters, misses, tuples) and, with the lock,
 * its block in the core (the hw backend's device counters).  A reader
 * without the lock has no core: it opens the data path read-only itself
 * and repairs nothing (see xtcam_dp_open_pinned_ro()).
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
	const struct xtcam_bind_rec *xdp = NULL;
	char dir[256];
	size_t i;
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
	/* its bindings as a restore would find them: the first XDP one names
	 * the namespace of redirects without one */
	for (i = 0; i < nk; i++) {
		if (recs[i].state != XTCAM_BIND_ACTIVE || strncmp(recs[i].block, rec->name,
								   sizeof(recs[i].block)))
			continue;
		if (!strcmp(recs[i].mode, "hw")) {
			e = -EAGAIN;    /* device counters: only through the core */
			goto out;
		}
		if (!xdp)
			xdp = &recs[i];
	}
	if (xdp) {
		snprintf(v->default_ns, sizeof(v->default_ns), "%s", xdp->netns);
		e = xtcam_state_block_dir(c->st, rec->name, "xdp", dir, sizeof(dir));
		if (!e)
			e = xtcam_dp_open_pinned_ro(dir, &v->own);
		if (e == -ENOENT)
			e = 0;          /* unbound meanwhile */
		v->dp = v->own;
	}
out:
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
