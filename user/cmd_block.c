// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* xtcam block add, del and show. */
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
#include "xtcam/compile.h"
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "trace.h"

/* --- blocks ------------------------------------------------------------- */

int xtcam_block_rec(struct xtcam_ctx *c, const char *name, struct xtcam_block_rec *rec,
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
		xtcam_spec_of(&rec, spec);
	return e;
}

/* A block's maps are pinned in a folder named after it, beside the
 * registry's pins: bpffs refuses a '.' in a name (the bind would fail with
 * EPERM), and a registry name would be taken for the registry. */
static int block_name_pinnable(const char *name, char *err, size_t errlen)
{
	static const char *const taken[] = { "blocks", "bindings", "ranks", "rules", "rules0",
					     "rules1", "generation" };
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
	int e = xtcam_block_rec(c, name, &rec, err, errlen);

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

json_object *xtcam_jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

/* is the attachment recorded in rec still there? */
bool xtcam_binding_gone(struct xtcam_ctx *c, const struct xtcam_bind_rec *r)
{
	struct xtcam_driver *d = xtcam_driver_named(c, r->mode);
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
		xtcam_info_of(r, &info);
		ok = d && d->ops->attached(&info) == 1;
		xtcam_ns_leave(back);
	}
	close(nsfd);
	if (ok && xtcam_ns_ifname(r->netns, r->ifindex, dev, sizeof(dev)))
		ok = 0;
	if (ok && strcmp(dev, r->dev))
		ok = 0;                          /* ifindex reused by another device */
	return !ok;
}

json_object *xtcam_binding_json(struct xtcam_ctx *c, const struct xtcam_bind_rec *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "dev", xtcam_jstr(r->dev));
	json_object_object_add(o, "netns", xtcam_jstr(r->netns));
	json_object_object_add(o, "mode", xtcam_jstr(r->mode));
	json_object_object_add(o, "requested", xtcam_jstr(r->requested));
	json_object_object_add(o, "refused", xtcam_jstr(r->refused));
	json_object_object_add(o, "note", xtcam_jstr(r->note));
	json_object_object_add(o, "offload", xtcam_jstr(r->offload));
	json_object_object_add(o, "dispatcher", json_object_new_boolean(r->dispatcher));
	json_object_object_add(o, "state", xtcam_jstr(xtcam_binding_gone(c, r) ? "gone" : "active"));
	return o;
}

/* One reading of the blocks (name: that one only) into *out. */
static int block_show_pass(struct xtcam_ctx *c, const char *name, json_object **out,
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

		e = xtcam_block_rec(c, name, &one, err, errlen);
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
		struct xtcam_rview v;
		struct xtcam_block_stats bs = { .tuples = -1 };
		size_t k;

		if (name && strcmp(b[i].name, name))
			continue;
		e = xtcam_rview_get(c, &b[i], recs, nk, &v);
		if (e) {
			if (e == -EAGAIN)
				err[0] = 0;     /* to be asked with the lock */
			else
				xtcam_set_err(err, errlen, "block %s: its data path: %s", b[i].name,
					      strerror(-e));
			break;
		}
		o = xtcam_block_spec_json(&v.spec);
		json_object_object_add(o, "rules", json_object_new_int64(b[i].nrules));
		json_object_object_add(o, "entries", json_object_new_int64(b[i].nentries));
		/* what the data paths know of it */
		for (k = 0; k < c->nimpl; k++)
			if (c->impl[k]->block_stats)
				c->impl[k]->block_stats(&v, &bs);
		json_object_object_add(o, "misses", json_object_new_int64((int64_t)bs.miss.packets));
		json_object_object_add(o, "miss_bytes", json_object_new_int64((int64_t)bs.miss.bytes));
		if (bs.tuples >= 0)
			json_object_object_add(o, "tuples", json_object_new_int64(bs.tuples));
		bd = json_object_new_array();
		for (j = 0; j < nk; j++)
			if (recs[j].state == XTCAM_BIND_ACTIVE && !strcmp(recs[j].block, b[i].name))
				json_object_array_add(bd, xtcam_binding_json(c, &recs[j]));
		json_object_object_add(o, "bindings", bd);
		{
			json_object *notes = json_object_new_array();

			for (k = 0; k < c->nimpl; k++)
				if (c->impl[k]->notes)
					c->impl[k]->notes(c, &v, &b[i], recs, nk, notes);

			if (json_object_array_length(notes))
				json_object_object_add(o, "notes", notes);
			else
				json_object_put(notes);
		}
		xtcam_rview_put(&v);
		json_object_array_add(arr, o);
	}
	free(b);
	free(keys);
	free(recs);
	if (e) {
		json_object_put(arr);
		return e;
	}
	*out = arr;
	return 0;
}

int xtcam_cmd_block_show(struct xtcam_ctx *c, const char *name, json_object **out,
			 char *err, size_t errlen)
{
	int e = 0, pass;

	if (!(c->flags & XTCAM_OPEN_READ))
		return block_show_pass(c, name, out, err, errlen);
	/* without the lock: read again while a writer commits meanwhile */
	for (pass = 0; pass < XTCAM_READ_PASSES; pass++) {
		char *s0 = NULL, *s1 = NULL;
		size_t l0 = 0, l1 = 0;
		bool same;

		e = xtcam_read_sig(c, &s0, &l0);
		if (!e)
			e = block_show_pass(c, name, out, err, errlen);
		if (!e && (e = xtcam_read_sig(c, &s1, &l1)))
			json_object_put(*out);
		same = !e && l0 == l1 && !memcmp(s0, s1, l0);
		free(s0);
		free(s1);
		if (e || same)
			return e;
		json_object_put(*out);
	}
	xtcam_set_err(err, errlen, "a writer committed during each of %d reads: try again",
		      XTCAM_READ_PASSES);
	return -EAGAIN;
}
