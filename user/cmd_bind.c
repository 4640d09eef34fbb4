// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* xtcam bind and unbind. */
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
#include <xdp/libxdp.h>
#include "xtcam/compile.h"
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "vanish.h"
#include "trace.h"

/* --- bindings ------------------------------------------------------------- */

static int find_binding(struct xtcam_ctx *c, const struct xtcam_net *id, __u32 ifindex,
			const char *netns, const char *dev, struct xtcam_bind_key *kout,
			struct xtcam_bind_rec *rout)
{
	struct xtcam_bind_key *keys;
	struct xtcam_bind_rec *recs;
	size_t n, i;
	int e = xtcam_state_bindings(c->st, &keys, &recs, &n), found = -ENOENT;

	if (e)
		return e;
	for (i = 0; i < n && found; i++) {
		bool by_id = id && ifindex && keys[i].ns_dev == id->dev &&
			     keys[i].ns_ino == id->ino && keys[i].ifindex == ifindex;
		/* a device (or namespace) that is gone: known by its names */
		bool by_name = !ifindex && !strcmp(recs[i].dev, dev) &&
			       !strcmp(recs[i].netns, netns ? netns : "");

		if (by_id || by_name) {
			*kout = keys[i];
			*rout = recs[i];
			found = 0;
		}
	}
	free(keys);
	free(recs);
	return found;
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n >= len - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* src into a record's text field of len bytes; a text too long for it is
 * cut after a word and ends in "..." */
static void copy_cut(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src), k;

	if (n < len) {
		memcpy(dst, src, n + 1);
		return;
	}
	k = len - 4;                    /* room for "..." and the NUL */
	while (k && src[k] != ' ')
		k--;
	while (k && (src[k - 1] == ' ' || src[k - 1] == ';' || src[k - 1] == ','))
		k--;
	if (!k)
		k = len - 4;
	memcpy(dst, src, k);
	memcpy(dst + k, "...", 4);
}

static int attach_dev(struct xtcam_ctx *c, struct xtcam_block *b, const char *netns,
		      __u32 ifindex, enum xtcam_mode mode, bool force,
		      struct xtcam_attach_info *info, char *msg, size_t len)
{
	struct xdp_blk *x = xtcam_xdp_blk(b);
	int back, e;

	(void)c;
	if (!x) {
		snprintf(msg, len, "no data path");
		return -ENOENT;
	}
	e = xtcam_ns_enter_name(netns, &back, msg, len);
	if (e)
		return e;
	e = xtcam_attach(x->dir, (int)ifindex, mode, force, info, msg, len);
	xtcam_ns_leave(back);
	return e;
}

int xtcam_cmd_bind(struct xtcam_ctx *c, const struct xtcam_bind_req *r, json_object **out,
		   char *err, size_t errlen)
{
	static const char *const autolist[] = { "hw", "native", "generic", NULL };
	const char *one[2] = { r->mode, NULL };
	const char *const *modes;
	const char *netns = r->netns ? r->netns : "";
	struct xtcam_bind_key key, okey;
	struct xtcam_bind_rec rec, orec;
	struct xtcam_block *b;
	struct xtcam_net id;
	struct xtcam_dev *dev;
	char refused[XTCAM_MSG_MAX] = "";       /* rec.refused is shorter */
	__u32 ifindex;
	int e, last = -EINVAL, i;
	bool done = false;

	b = xtcam_block_find(c->core, r->block);
	if (!b) {
		xtcam_set_err(err, errlen, "bind: block %s: no such block", r->block);
		return -ENOENT;
	}
	if (r->mode && strcmp(r->mode, "auto") && !xtcam_backend_named(c, r->mode)) {
		xtcam_set_err(err, errlen, "bind: mode %s: not one of auto, hw, native, generic", r->mode);
		return -EINVAL;
	}
	e = xtcam_ns_open(netns, NULL, &id, err, errlen);
	if (e)
		return e;
	e = xtcam_ns_ifindex(netns, r->dev, &ifindex, err, errlen);
	if (e)
		return e;
	if (!xtcam_xdp_blk(b)) {
		char why[XTCAM_ERRMSG_MAX] = "";

		/* the data path comes with this bind: its redirects resolve here
		 * (the bind replays the rules: they are read anyway) */
		e = xtcam_block_rules_fetch(b, why, sizeof(why));
		if (!e)
			e = xtcam_check_bind_targets(b, netns, why, sizeof(why));
		if (e) {
			xtcam_set_err(err, errlen, "bind: %s: %s", r->dev, why);
			return e;
		}
	}
	if (!find_binding(c, &id, ifindex, netns, r->dev, &okey, &orec)) {
		xtcam_set_err(err, errlen, "bind: %s is already bound to block %s", r->dev, orec.block);
		return -EBUSY;
	}
	dev = xtcam_core_dev_get(c->core, &id, ifindex);
	if (!dev)
		return -ENOMEM;

	memset(&key, 0, sizeof(key));
	key.ns_dev = id.dev;
	key.ns_ino = id.ino;
	key.ifindex = ifindex;
	memset(&rec, 0, sizeof(rec));
	snprintf(rec.block, sizeof(rec.block), "%s", r->block);
	snprintf(rec.dev, sizeof(rec.dev), "%s", r->dev);
	snprintf(rec.netns, sizeof(rec.netns), "%s", netns);
	snprintf(rec.requested, sizeof(rec.requested), "%s", r->mode ? r->mode : "auto");
	rec.binder = r->egress ? FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS :
				 FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS;
	rec.ns_dev = id.dev;
	rec.ns_ino = id.ino;
	rec.ifindex = ifindex;
	rec.state = XTCAM_BIND_PENDING;
	rec.bound_at = (__u64)time(NULL);
	e = xtcam_state_binding_put(c->st, &key, &rec);   /* undone if we crash */
	if (e) {
		xtcam_set_err(err, errlen, "bind: %s: cannot record it: %s", r->dev, strerror(-e));
		return e;
	}

	modes = !r->mode || !strcmp(r->mode, "auto") ? autolist : one;
	for (i = 0; modes[i] && !done; i++) {
		struct xtcam_backend *be = xtcam_backend_named(c, modes[i]);
		char msg[XTCAM_ERRMSG_MAX] = "";

		c->req.netns = netns;
		c->req.dev = r->dev;
		c->req.force = r->force;
		memset(&c->req.info, 0, sizeof(c->req.info));
		c->req.offload[0] = 0;
		c->req.hw = NULL;
		e = xtcam_bind(c->core, b, dev, be, rec.binder, 0, msg, sizeof(msg));
		if (!e) {
			enum xtcam_mode m = be == &c->be_hw ? XTCAM_MODE_HW :
					    be == &c->be_native ? XTCAM_MODE_NATIVE :
						XTCAM_MODE_GENERIC;

			if (m == XTCAM_MODE_HW)
				e = xtcam_hw_attach(c, ifindex, r->force, &c->req.info, msg,
						    sizeof(msg));
			else
				e = attach_dev(c, b, netns, ifindex, m, r->force, &c->req.info, msg,
					       sizeof(msg));
			if (e) {
				char m2[XTCAM_ERRMSG_MAX];

				c->req.old = NULL;
				xtcam_unbind(c->core, dev, 0, m2, sizeof(m2));
			} else {
				/* a later crash must detach it */
				rec.attach_mode = c->req.info.mode;
				rec.dispatcher = c->req.info.dispatcher;
				rec.prog_id = c->req.info.prog_id;
				snprintf(rec.offload, sizeof(rec.offload), "%s", c->req.offload);
				xtcam_state_binding_put(c->st, &key, &rec);
			}
		}
		c->req.netns = NULL;
		if (e) {
			last = e;
			append(refused, sizeof(refused), "%s%s: %s", refused[0] ? "; " : "",
			       modes[i], msg[0] ? msg : strerror(-e));
			if (e == -EOPNOTSUPP && r->egress)
				break;          /* no mode sees egress */
			continue;
		}
		snprintf(rec.mode, sizeof(rec.mode), "%s", modes[i]);
		snprintf(rec.note, sizeof(rec.note), "%s", c->req.info.note);
		copy_cut(rec.refused, sizeof(rec.refused), refused);
		done = true;
	}
	if (!done) {
		xtcam_state_binding_del(c->st, &key);
		if (modes == one || r->egress)
			xtcam_set_err(err, errlen, "bind: %s: %s", r->dev,
				strchr(refused, ':') ? strchr(refused, ':') + 2 : refused);
		else
			xtcam_set_err(err, errlen, "bind: %s: no mode took it (%s)", r->dev, refused);
		return last;
	}
	rec.state = XTCAM_BIND_ACTIVE;
	e = xtcam_state_binding_put(c->st, &key, &rec);
	if (e) {
		xtcam_set_err(err, errlen, "bind: %s: cannot record it: %s", r->dev, strerror(-e));
		return e;
	}
	if (out) {
		*out = xtcam_binding_json(&rec);
		json_object_object_add(*out, "block", xtcam_jstr(r->block));
	}
	return 0;
}

int xtcam_cmd_unbind(struct xtcam_ctx *c, const char *block, const char *dev,
		     const char *netns, char *err, size_t errlen)
{
	struct xtcam_bind_key key;
	struct xtcam_bind_rec rec;
	struct xtcam_attach_info info;
	struct xtcam_net id = { 0, 0 };
	struct xtcam_dev *d;
	__u32 ifindex = 0;
	char msg[XTCAM_ERRMSG_MAX] = "";
	int e;

	netns = netns ? netns : "";
	if (!xtcam_block_find(c->core, block)) {
		xtcam_set_err(err, errlen, "unbind: block %s: no such block", block);
		return -ENOENT;
	}
	if (xtcam_ns_open(netns, NULL, &id, NULL, 0) ||
	    xtcam_ns_ifindex(netns, dev, &ifindex, NULL, 0))
		ifindex = 0;            /* gone: look it up by name */
	e = find_binding(c, &id, ifindex, netns, dev, &key, &rec);
	if (e && ifindex)
		e = find_binding(c, NULL, 0, netns, dev, &key, &rec);
	if (e || rec.state != XTCAM_BIND_ACTIVE) {
		xtcam_set_err(err, errlen, "unbind: %s%s%s is not bound", dev, netns[0] ? " in netns " : "",
			netns);
		return -ENOENT;
	}
	if (strcmp(rec.block, block)) {
		xtcam_set_err(err, errlen, "unbind: %s is bound to block %s, not %s", dev, rec.block, block);
		return -ENOENT;
	}
	d = xtcam_core_dev_find(c->core, &(struct xtcam_net){ key.ns_dev, key.ns_ino },
				key.ifindex);
	xtcam_info_of(&rec, &info);
	/* a crash from here on: the next invocation finishes the unbind (see
	 * xtcam_undo_pending), rather than keep a binding whose program is gone */
	rec.state = XTCAM_BIND_UNBINDING;
	e = xtcam_state_binding_put(c->st, &key, &rec);
	if (e) {
		xtcam_set_err(err, errlen, "unbind: %s: cannot record it: %s", dev, strerror(-e));
		return e;
	}
	c->req.netns = rec.netns;
	c->req.dev = rec.dev;
	c->req.old = xtcam_binding_gone(&rec) ? NULL : &info;
	e = d ? xtcam_unbind(c->core, d, 0, msg, sizeof(msg)) : -ENOENT;
	c->req.old = NULL;
	c->req.netns = NULL;
	/* the binding is gone whatever the backend said */
	xtcam_state_binding_del(c->st, &key);
	if (e && e != -ENOENT) {
		xtcam_set_err(err, errlen, "unbind: %s: %s", dev, msg[0] ? msg : strerror(-e));
		return e;
	}
	return 0;
}
