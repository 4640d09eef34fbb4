// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The hw backend: NIC offload (XDP_FLAGS_HW_MODE, device-bound programs
 * and maps).  A flow_block driver with one callback per (block, offload
 * device): the offload device is what the kernel binds programs to (a
 * NIC, or a netdevsim device with all its ports), named by the driver and
 * bus of its ports ("netdevsim/netdevsim11").  Ports of one offload device
 * bound to the same block share the callback (flow_block_cb_lookup, then
 * incref), so they share the program and its maps, as in the kernel's
 * drivers; other devices, other namespaces or other blocks get their own.
 *
 * A bind asks the device, in this order, and refuses with the kernel's
 * answer: does it take an offloaded program at all (the smallest one, with
 * its verifier log), how many entries does it take in a map (it sizes the
 * device's tables to that), and do the block's rules fit and are they all
 * rules the offload can run.  Then it loads bpf/xtcam_hw.bpf.c bound to the
 * device, pins the program and maps in the block's directory
 * (BLOCK/hw-OFFLOADDEV/), and the core replays the rules into the device's
 * maps.  The loader attaches it (XDP_FLAGS_HW_MODE) afterwards.
 *
 * Rules: the callback keeps the device's rule set, applies each batch to a
 * copy, compiles the copy (hwcompile.c) and rewrites the device's table.
 * Each rule keeps its counter index for as long as it is on the device, so
 * counters survive rewrites that move its entries; which rule owns which
 * index is in a host map pinned with the others (hw_image).
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "xtcam/hwcompile.h"
#include "xtcam_hw.skel.h"
#include "driver.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "rpack.h"

#define PIN_PROG   "prog"
#define PIN_IMAGE  "hw_image"

static const char *const pin_maps[] = { "hw_cfg", "hw_entries", "hw_acts", "hw_counters",
					PIN_IMAGE, PIN_PROG };

/* What cb_ident points at: one per (block, offload device), for the life
 * of the context (flow_block_cb_lookup compares the pointer). */
struct hw_ident {
	struct list_head node;
	struct xtcam_block *block;
	char odev[XTCAM_STATE_OFFLOAD];
};

struct hw_dev {
	struct xtcam_ctx *ctx;
	struct xtcam_block *block;
	struct hw_ident *ident;
	char devname[IF_NAMESIZE];      /* the port the programs are bound to */
	char dir[256];
	int prog_fd, cfg_fd, ent_fd, act_fd, cnt_fd, img_fd;
	__u32 max;                      /* entries the device's maps hold */
	struct xtcam_hw_image img;      /* as written (also in img_fd) */
	struct xtcam_hw_table last;     /* as written */
	struct xtcam_rule *rules;       /* the device's rule set */
	size_t nrules;
	bool synced;                    /* rules is the device's rule set */
	bool dying, keep;
	struct xtcam_dev **ports;       /* the devices bound through it */
	size_t nports;
};

static flow_setup_cb_t hw_rules_cb;

/* --- libbpf's messages: the kernel's reason ------------------------------ */

static char cap_line[XTCAM_ERRMSG_MAX];
static bool cap_on;

static int cap_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	const char *k;
	size_t n;

	if (level != LIBBPF_WARN || !cap_on)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	k = strstr(buf, "Kernel error message: ");
	if (k)
		snprintf(cap_line, sizeof(cap_line), "%s", k + 22);
	return 0;
}

static libbpf_print_fn_t cap_begin(void)
{
	cap_line[0] = 0;
	cap_on = true;
	return libbpf_set_print(cap_print);
}

static void cap_end(libbpf_print_fn_t old)
{
	cap_on = false;
	libbpf_set_print(old);
}

/* the last line of a verifier log that says why (not its statistics) */
static void log_tail(const char *log, char *out, size_t len)
{
	const char *s = log, *best = NULL, *nl;
	size_t bl = 0;

	out[0] = 0;
	while (*s) {
		nl = strchr(s, '\n');
		if (!nl)
			nl = s + strlen(s);
		if (nl > s && strncmp(s, "processed ", 10) && strncmp(s, "verification time", 17)) {
			best = s;
			bl = (size_t)(nl - s);
		}
		s = *nl ? nl + 1 : nl;
	}
	if (best)
		snprintf(out, len, "%.*s", (int)bl, best);
}

/* --- asking the device ----------------------------------------------------- */

/* In the caller's namespace: "DRIVER/BUS_INFO" of dev (ethtool), or the
 * device's own name when it has no bus. */
static int offload_dev_of(const char *dev, char *out, size_t len)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), e = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		e = -errno;
	close(fd);
	if (e == -EOPNOTSUPP || (!e && !di.bus_info[0])) {
		snprintf(out, len, "%s/%s", e ? "none" : di.driver, dev);
		return 0;
	}
	if (e)
		return e;
	snprintf(out, len, "%.31s/%.31s", di.driver, di.bus_info);
	return 0;
}

/* 0 if the device takes an offloaded XDP program (the smallest one) */
static int probe_prog(__u32 ifindex, char *why, size_t len)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[1024] = "", tail[160];
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_ifindex = ifindex, .log_buf = log,
		    .log_size = sizeof(log), .log_level = 1);
	int fd, e;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xtcam_hw_probe", "Dual BSD/GPL", prog, 2, &o);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	e = -errno;
	log_tail(log, tail, sizeof(tail));
	snprintf(why, len, "the device takes no offloaded program (kernel: %s%s%s)",
		 strerror(-e), tail[0] ? "; verifier: " : "", tail);
	return e;
}

/* The entries the device takes in one offloaded map of TCAM entries:
 * the largest size it accepts, at most XTCAM_HW_MAX_ENTRIES. */
static int probe_max(__u32 ifindex, __u32 *max, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_ifindex = ifindex);
	__u32 n;
	int fd, e = -EINVAL;

	for (n = XTCAM_HW_MAX_ENTRIES; n > 0; n--) {
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xtcam_hw_probe", sizeof(__u32),
				    sizeof(struct xtcam_hw_entry), n, &o);
		if (fd >= 0) {
			close(fd);
			*max = n;
			return 0;
		}
		e = -errno;
		if (e != -ENOMEM && e != -E2BIG && e != -ENOSPC)
			break;          /* not a matter of size */
	}
	snprintf(why, len, "the device takes no offloaded map of %zu-byte entries (kernel: %s)",
		 sizeof(struct xtcam_hw_entry), strerror(-e));
	return e;
}

/* --- the device's table ------------------------------------------------- */

/* The table for rules on a device that takes max entries, with its
 * counter indexes carried over from img; its image in *nimg.  Messages
 * start with prefix (NULL: "block NAME: ", "": none). */
static int hw_table(const struct xtcam_block *b, const char *prefix, const char *devname,
		    const char *odev,
		    const struct xtcam_rule *rules, size_t n, __u32 max,
		    const struct xtcam_hw_image *img, struct xtcam_hw_table *t,
		    struct xtcam_hw_image *nimg, char *err, size_t errlen)
{
	char why[XTCAM_ERRMSG_MAX], pre[XTCAM_STATE_NAME + 16] = "";
	size_t need = 0, i;
	int e;

	if (!prefix)
		snprintf(pre, sizeof(pre), "block %s: ", b->spec.name);
	for (i = 0; i < n; i++) {
		e = xtcam_hw_rule_check(&rules[i], why, sizeof(why));
		if (e) {
			xtcam_set_err(err, errlen, "%s%s", pre, why);
			return e;
		}
		need += xtcam_rule_entries(&rules[i]);
	}
	if (need > max) {
		xtcam_set_err(err, errlen, "%sneeds %zu entries, device %s (%s) takes %u", pre, need,
		     devname, odev, max);
		return -E2BIG;
	}
	e = xtcam_hw_compile(rules, n, b->spec.dflt.type ? b->spec.dflt.type : XTCAM_ACT_PASS,
			     max, t, why, sizeof(why));
	if (!e)
		e = xtcam_hw_counters_assign(t, img ? img->handle : NULL, max, nimg->handle);
	if (e) {
		xtcam_set_err(err, errlen, "%s%s", pre, e == -ENOMEM ? strerror(-e) : why);
		return e;
	}
	nimg->nrules = t->nrules;
	nimg->nentries = t->nentries;
	nimg->max = max;
	nimg->seq = img ? img->seq + 1 : 1;
	return 0;
}

/*
 * Rewrite the device's table from h->last to t (image nimg).  Frames keep
 * seeing a consistent table: first the count shrinks to the entries that
 * stay as they are (frames that would have hit a changed one take the
 * default action meanwhile), counters of new rules are zeroed, the changed
 * entries are written, then the new count makes them live.
 */
static int hw_rewrite_from(struct hw_dev *h, const struct xtcam_hw_table *t,
			   const struct xtcam_hw_image *nimg, const struct xtcam_hw_image *prev)
{
	struct xtcam_hw_counter zc = { 0 };
	struct xtcam_hw_cfg cfg;
	__u32 i, d = 0, zero = 0;

	while (d < t->nentries && d < h->last.nentries &&
	       !memcmp(&t->entry[d], &h->last.entry[d], sizeof(t->entry[d])) &&
	       !memcmp(&t->act[d], &h->last.act[d], sizeof(t->act[d])))
		d++;
	if (d < h->last.nentries || h->last.cfg.dflt != t->cfg.dflt) {
		cfg = h->last.cfg;
		cfg.nentries = d;
		if (bpf_map_update_elem(h->cfg_fd, &zero, &cfg, 0))
			return -errno;
	}
	for (i = 0; i < h->max && i < XTCAM_HW_MAX_ENTRIES; i++)
		if (nimg->handle[i] && nimg->handle[i] != prev->handle[i] &&
		    bpf_map_update_elem(h->cnt_fd, &i, &zc, 0))
			return -errno;
	for (i = d; i < t->nentries; i++)
		if (bpf_map_update_elem(h->ent_fd, &i, &t->entry[i], 0) ||
		    bpf_map_update_elem(h->act_fd, &i, &t->act[i], 0))
			return -errno;
	if (bpf_map_update_elem(h->cfg_fd, &zero, &t->cfg, 0))
		return -errno;
	if (bpf_map_update_elem(h->img_fd, &zero, nimg, 0))
		return -errno;
	h->last = *t;
	h->img = *nimg;
	return 0;
}

static int hw_rewrite(struct hw_dev *h, const struct xtcam_hw_table *t,
		      const struct xtcam_hw_image *nimg)
{
	struct xtcam_hw_image prev = h->img;

	return hw_rewrite_from(h, t, nimg, &prev);
}

/* --- the block callback ---------------------------------------------------- */

static ssize_t find_rule(const struct xtcam_rule *r, size_t n, __u32 handle)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].handle == handle)
			return (ssize_t)i;
	return -1;
}

static int hw_rules_cb(enum xtcam_setup_type type, void *type_data, void *cb_priv)
{
	struct xtcam_rules_offload *o = type_data;
	struct hw_dev *h = cb_priv;
	struct xtcam_hw_table *t = NULL;
	struct xtcam_hw_image nimg, prev = h->img;
	struct xtcam_rule *nr;
	size_t n = h->nrules, i;
	char err[XTCAM_ERRMSG_MAX] = "";
	int e = 0;

	if (type != XTCAM_SETUP_RULES)
		return -EOPNOTSUPP;
	if (h->dying || !o->n)
		return 0;
	if (!h->synced) {
		xtcam_rules_errmsg(o, "block %s: the rules on device %s are not known to this "
				   "process", h->block->spec.name, h->devname);
		return -ESTALE;
	}
	nr = malloc((n + o->n + 1) * sizeof(*nr));
	t = malloc(sizeof(*t));
	if (!nr || !t) {
		free(nr);
		free(t);
		return -ENOMEM;
	}
	if (n)
		memcpy(nr, h->rules, n * sizeof(*nr));
	for (i = 0; i < o->n && !e; i++) {
		const struct xtcam_rule_op *op = &o->ops[i];
		struct xtcam_rule rb;
		const struct xtcam_rule *r = xtcam_rule_view(op->cmd == XTCAM_RULE_DEL ?
							     (op->old ? op->old : op->rule) :
							     op->rule, &rb);
		ssize_t at = r ? find_rule(nr, n, r->handle) : -1;

		if (!r) {
			e = -EINVAL;
			break;
		}
		switch (op->cmd) {
		case XTCAM_RULE_ADD:
			if (at >= 0)
				e = -EEXIST;
			else
				nr[n++] = *r;
			break;
		case XTCAM_RULE_REPLACE:
			if (at < 0) {
				e = -ENOENT;
				break;
			}
			/* a changed rule is a new rule: it gets its own counter,
			 * from zero, whatever its handle */
			if (!xtcam_rule_equal(&nr[at], r))
				for (__u32 k = 0; k < XTCAM_HW_MAX_ENTRIES; k++)
					if (prev.handle[k] == r->handle)
						prev.handle[k] = 0;
			nr[at] = *r;
			break;
		case XTCAM_RULE_DEL:
			if (at < 0) {
				e = -ENOENT;
			} else {
				memmove(&nr[at], &nr[at + 1], (n - (size_t)at - 1) * sizeof(*nr));
				n--;
			}
			break;
		default:
			e = -EINVAL;
		}
	}
	if (e)
		xtcam_set_err(err, sizeof(err), "handle %u: %s on device %s",
		     o->ops[i - 1].rule ? xtcam_rule_handle_of(o->ops[i - 1].rule) :
		     o->ops[i - 1].old ? o->ops[i - 1].old->handle : 0, strerror(-e), h->devname);
	memset(&nimg, 0, sizeof(nimg));
	if (!e)
		e = hw_table(h->block, "", h->devname, h->ident->odev, nr, n, h->max, &prev,
			     t, &nimg, err, sizeof(err));
	if (!e) {
		e = hw_rewrite_from(h, t, &nimg, &prev);
		if (e) {
			struct xtcam_hw_table back = h->last;
			struct xtcam_hw_image bimg = h->img;

			xtcam_set_err(err, sizeof(err), "writing device %s's table: %s", h->devname,
			     strerror(-e));
			/* best effort: the table as it was */
			memset(&h->last, 0, sizeof(h->last));
			hw_rewrite(h, &back, &bimg);
		}
	}
	if (e) {
		xtcam_rules_errmsg(o, "%s", err);
		free(nr);
	} else {
		free(h->rules);
		h->rules = nr;
		h->nrules = n;
	}
	free(t);
	return e;
}

/* --- objects -------------------------------------------------------------- */

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static void hw_unpin(const char *dir)
{
	char path[512], parent[256], *slash;
	size_t i;

	for (i = 0; i < sizeof(pin_maps) / sizeof(pin_maps[0]); i++)
		if (!pin_path(path, sizeof(path), dir, pin_maps[i]))
			unlink(path);
	rmdir(dir);
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash) {
		*slash = 0;
		rmdir(parent);          /* the block's directory, if empty */
	}
}

static void hw_close_fds(struct hw_dev *h)
{
	int *fds[] = { &h->prog_fd, &h->cfg_fd, &h->ent_fd, &h->act_fd, &h->cnt_fd, &h->img_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static void hw_release(void *priv)
{
	struct hw_dev *h = priv;

	if (!h)
		return;
	if (!h->keep && h->dir[0])
		hw_unpin(h->dir);
	hw_close_fds(h);
	free(h->rules);
	free(h->ports);
	free(h);
}

static struct hw_dev *hw_alloc(struct xtcam_ctx *ctx, struct xtcam_block *b)
{
	struct hw_dev *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->ctx = ctx;
	h->block = b;
	h->prog_fd = h->cfg_fd = h->ent_fd = h->act_fd = h->cnt_fd = h->img_fd = -1;
	return h;
}

static struct hw_ident *ident_get(struct xtcam_ctx *ctx, struct xtcam_block *b, const char *odev)
{
	struct hw_ident *id;

	list_for_each_entry(id, &ctx->hw_idents, node)
		if (id->block == b && !strcmp(id->odev, odev))
			return id;
	id = calloc(1, sizeof(*id));
	if (!id)
		return NULL;
	id->block = b;
	snprintf(id->odev, sizeof(id->odev), "%s", odev);
	list_add_tail(&id->node, &ctx->hw_idents);
	return id;
}

static void hw_fini(struct xtcam_ctx *ctx)
{
	struct hw_ident *id, *tmp;

	list_for_each_entry_safe(id, tmp, &ctx->hw_idents, node) {
		list_del(&id->node);
		free(id);
	}
}

/* the directory of the block's objects on odev: BLOCK/hw-ODEV[@NETNS] */
static int hw_dir(struct xtcam_ctx *ctx, const char *block, const char *odev, const char *netns,
		  char *buf, size_t len)
{
	char sub[XTCAM_STATE_OFFLOAD + XTCAM_NETNS_MAX + 8], *p;

	snprintf(sub, sizeof(sub), "hw-%s%s%s", odev, netns && netns[0] ? "@" : "",
		 netns ? netns : "");
	for (p = sub; *p; p++)
		if (*p == '/' || *p == ':' || *p == ' ')
			*p = '_';
	return xtcam_state_block_dir(ctx->st, block, sub, buf, len);
}

/* Load the offload program and its maps bound to ifindex (in the caller's
 * namespace), with maps of max entries. */
static int hw_load(struct hw_dev *h, __u32 ifindex, char *err, size_t errlen)
{
	struct xtcam_hw *skel = xtcam_hw__open();
	struct bpf_map *map;
	libbpf_print_fn_t old;
	__u32 zero = 0;
	int e;

	if (!skel)
		return -errno ? -errno : -ENOMEM;
	bpf_program__set_ifindex(skel->progs.xtcam_hw, ifindex);
	bpf_object__for_each_map(map, skel->obj) {
		bpf_map__set_ifindex(map, ifindex);
		if (map != skel->maps.hw_cfg)
			bpf_map__set_max_entries(map, h->max);
	}
	old = cap_begin();
	e = xtcam_hw__load(skel);
	cap_end(old);
	if (e) {
		xtcam_set_err(err, errlen, "block %s: device %s refused the offload program: %s%s%s",
		     h->block->spec.name, h->devname, strerror(-e), cap_line[0] ? ": " : "", cap_line);
		xtcam_hw__destroy(skel);
		return e;
	}
	h->prog_fd = dup(bpf_program__fd(skel->progs.xtcam_hw));
	h->cfg_fd = dup(bpf_map__fd(skel->maps.hw_cfg));
	h->ent_fd = dup(bpf_map__fd(skel->maps.hw_entries));
	h->act_fd = dup(bpf_map__fd(skel->maps.hw_acts));
	h->cnt_fd = dup(bpf_map__fd(skel->maps.hw_counters));
	xtcam_hw__destroy(skel);
	if (h->prog_fd < 0 || h->cfg_fd < 0 || h->ent_fd < 0 || h->act_fd < 0 || h->cnt_fd < 0)
		return -EMFILE;
	/* the host's record of what is on the device */
	h->img_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xtcam_hw_image", sizeof(__u32),
				   sizeof(struct xtcam_hw_image), 1, NULL);
	if (h->img_fd < 0)
		return -errno;
	memset(&h->img, 0, sizeof(h->img));
	h->img.max = h->max;
	memset(&h->last, 0, sizeof(h->last));
	h->last.cfg.dflt = h->block->spec.dflt.type ? h->block->spec.dflt.type : XTCAM_ACT_PASS;
	/* an empty table with the block's default, before anything runs it */
	if (bpf_map_update_elem(h->img_fd, &zero, &h->img, 0) ||
	    bpf_map_update_elem(h->cfg_fd, &zero, &h->last.cfg, 0))
		return -errno;
	return 0;
}

static int hw_pin(struct hw_dev *h)
{
	int fds[] = { h->cfg_fd, h->ent_fd, h->act_fd, h->cnt_fd, h->img_fd, h->prog_fd };
	char path[512], tmp[256], *p;
	size_t i;
	int e;

	snprintf(tmp, sizeof(tmp), "%s", h->dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(h->dir, 0700) && errno != EEXIST)
		return -errno;
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		e = pin_path(path, sizeof(path), h->dir, pin_maps[i]);
		if (e)
			return e;
		unlink(path);
		if (bpf_obj_pin(fds[i], path))
			return -errno;
	}
	return 0;
}

static int hw_open_pinned(struct hw_dev *h)
{
	int *fds[] = { &h->cfg_fd, &h->ent_fd, &h->act_fd, &h->cnt_fd, &h->img_fd, &h->prog_fd };
	char path[512];
	__u32 zero = 0;
	size_t i;
	int e;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		e = pin_path(path, sizeof(path), h->dir, pin_maps[i]);
		if (e)
			return e;
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0)
			return -errno;
	}
	if (bpf_map_lookup_elem(h->img_fd, &zero, &h->img))
		return -errno;
	h->max = h->img.max;
	return h->max && h->max <= XTCAM_HW_MAX_ENTRIES ? 0 : -EINVAL;
}

/* --- bind and unbind ------------------------------------------------------ */

static int port_add(struct hw_dev *h, struct xtcam_dev *dev)
{
	struct xtcam_dev **p = realloc(h->ports, (h->nports + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	h->ports = p;
	h->ports[h->nports++] = dev;
	return 0;
}

static bool port_del(struct hw_dev *h, struct xtcam_dev *dev)
{
	size_t i;

	for (i = 0; i < h->nports; i++)
		if (h->ports[i] == dev) {
			h->ports[i] = h->ports[--h->nports];
			return true;
		}
	return false;
}

static int hw_bind(struct flow_block_offload *f, struct xtcam_dev *dev, struct xtcam_ctx *ctx)
{
	struct xtcam_block *b = f->block;
	const char *devname = ctx->req.dev ? ctx->req.dev : "?";
	char why[XTCAM_ERRMSG_MAX] = "", odev[XTCAM_STATE_OFFLOAD];
	struct flow_block_cb *cb;
	struct hw_ident *ident;
	struct hw_dev *h;
	__u32 max = 0;
	int saved, e;

	if (f->binder_type != FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS) {
		flow_block_errmsg(f, "XDP sees only ingress traffic");
		return -EOPNOTSUPP;
	}
	f->driver_block_list = &ctx->hw_list;
	ctx->req.cb_priv = NULL;

	e = xtcam_ns_enter_name(ctx->req.netns, &saved, why, sizeof(why));
	if (e) {
		flow_block_errmsg(f, "%s", why);
		return e;
	}

	if (f->restore) {
		snprintf(odev, sizeof(odev), "%s", ctx->req.offload);
	} else {
		e = offload_dev_of(devname, odev, sizeof(odev));
		if (e) {
			snprintf(why, sizeof(why), "%s: cannot ask the driver (ethtool): %s", devname,
				 strerror(-e));
			goto out;
		}
		e = probe_prog(dev->ifindex, why, sizeof(why));
		if (!e)
			e = probe_max(dev->ifindex, &max, why, sizeof(why));
		if (e)
			goto out;
	}
	ident = ident_get(ctx, b, odev);
	if (!ident) {
		e = -ENOMEM;
		goto out;
	}
	snprintf(ctx->req.offload, sizeof(ctx->req.offload), "%s", odev);

	cb = flow_block_cb_lookup(f, hw_rules_cb, ident);
	if (cb) {
		/* another port of the same offload device: share its program */
		e = port_add(cb->cb_priv, dev);
		if (e)
			goto out;
		flow_block_cb_incref(cb);
		ctx->req.cb_priv = cb->cb_priv;
		goto out;
	}

	h = hw_alloc(ctx, b);
	if (!h) {
		e = -ENOMEM;
		goto out;
	}
	h->ident = ident;
	snprintf(h->devname, sizeof(h->devname), "%s", devname);
	e = hw_dir(ctx, b->spec.name, odev, ctx->req.netns, h->dir, sizeof(h->dir));
	if (e)
		goto fail;
	if (f->restore) {
		struct xtcam_block_rec rec;
		size_t i, n = xtcam_block_rule_count(b);

		h->keep = true;
		e = hw_open_pinned(h);
		if (e) {
			xtcam_set_err(why, sizeof(why), "block %s: its offload objects in %s: %s",
				 b->spec.name, h->dir, strerror(-e));
			goto fail;
		}
		/* the device holds the compiled rules of the block (when this
		 * process loaded them): rebuild what was written */
		if (!xtcam_state_block_get(ctx->st, b->spec.name, &rec) && rec.nrules == n) {
			struct xtcam_hw_image nimg;
			struct xtcam_hw_table *t = malloc(sizeof(*t));

			h->rules = malloc((n + 1) * sizeof(*h->rules));
			if (!t || !h->rules) {
				free(t);
				e = -ENOMEM;
				goto fail;
			}
			for (i = 0; i < n; i++)
				h->rules[i] = *xtcam_block_rule_at(b, i);
			h->nrules = n;
			memset(&nimg, 0, sizeof(nimg));
			if (!hw_table(b, NULL, h->devname, odev, h->rules, n, h->max, &h->img, t, &nimg,
				      NULL, 0)) {
				h->last = *t;
				h->synced = true;
			}
			free(t);
		}
	} else {
		struct xtcam_hw_table *t = malloc(sizeof(*t));
		struct xtcam_rule *rules;
		struct xtcam_hw_image nimg;
		size_t i, n = xtcam_block_rule_count(b);

		/* the block must fit before anything is loaded */
		rules = malloc((n + 1) * sizeof(*rules));
		if (!t || !rules) {
			free(t);
			free(rules);
			e = -ENOMEM;
			goto fail;
		}
		for (i = 0; i < n; i++)
			rules[i] = *xtcam_block_rule_at(b, i);
		memset(&nimg, 0, sizeof(nimg));
		e = hw_table(b, NULL, devname, odev, rules, n, max, NULL, t, &nimg, why, sizeof(why));
		free(t);
		free(rules);
		if (e)
			goto fail;
		h->max = max;
		h->synced = true;       /* empty: the core replays the rules */
		e = hw_load(h, dev->ifindex, why, sizeof(why));
		if (!e) {
			e = hw_pin(h);
			if (e)
				xtcam_set_err(why, sizeof(why), "block %s: cannot pin its offload objects in "
					 "%s: %s", b->spec.name, h->dir, strerror(-e));
		} else if (!why[0]) {
			snprintf(why, sizeof(why), "block %s: loading the offload program for %s: %s",
				 b->spec.name, devname, strerror(-e));
		}
		if (e)
			goto fail;
	}
	e = port_add(h, dev);
	if (e)
		goto fail;
	cb = flow_block_cb_alloc(f->net, hw_rules_cb, ident, h, hw_release);
	if (IS_ERR(cb)) {
		e = (int)PTR_ERR(cb);
		goto fail;
	}
	flow_block_cb_incref(cb);
	flow_block_cb_add(cb, f);
	list_add_tail(&cb->driver_list, &ctx->hw_list);
	ctx->req.cb_priv = h;
	goto out;
fail:
	if (f->restore)
		h->keep = true;
	hw_release(h);
out:
	xtcam_ns_leave(saved);
	if (e && why[0])
		flow_block_errmsg(f, "%s", why);
	return e;
}

/* in the caller's namespace */
static int hw_prog_on(__u32 ifindex, __u32 *id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query((int)ifindex, 0, &q))
		return -errno;
	*id = q.hw_prog_id;
	return 0;
}

static int hw_attached(const struct xtcam_attach_info *info)
{
	__u32 id = 0;
	int e;

	if (!info || info->mode != XTCAM_MODE_HW || !info->prog_id)
		return -EINVAL;
	e = hw_prog_on(info->ifindex, &id);
	if (e)
		return e == -ENODEV ? 0 : e;
	return id == info->prog_id;
}

static int hw_detach(const struct xtcam_attach_info *info, char *err, size_t errlen)
{
	libbpf_print_fn_t old;
	int e = hw_attached(info);

	if (e <= 0)
		return e ? e : -ENOENT;
	old = cap_begin();
	e = bpf_xdp_detach((int)info->ifindex, XDP_FLAGS_HW_MODE, NULL) ? -errno : 0;
	cap_end(old);
	if (e)
		xtcam_set_err(err, errlen, "detaching the offloaded program: %s%s%s", strerror(-e),
		     cap_line[0] ? ": " : "", cap_line);
	return e;
}

/* After a hw bind (ctx->req.cb_priv set): attach its offloaded program to
 * ifindex in ctx->req.netns with XDP_FLAGS_HW_MODE; refuses (-EBUSY) to
 * replace another offloaded program unless force. */
static int hw_attach(const struct xtcam_driver *d, struct xtcam_ctx *ctx, struct xtcam_block *b,
		     __u32 ifindex, bool force, struct xtcam_attach_info *info, char *err,
		     size_t errlen)
{
	struct hw_dev *h = ctx->req.cb_priv;
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi), cur = 0;
	libbpf_print_fn_t old;
	int saved, e;

	(void)d;
	(void)b;
	if (!h)
		return -ENOENT;
	e = xtcam_ns_enter_name(ctx->req.netns, &saved, err, errlen);
	if (e)
		return e;
	memset(&pi, 0, sizeof(pi));
	if (bpf_obj_get_info_by_fd(h->prog_fd, &pi, &len)) {
		e = -errno;
		goto out;
	}
	if (!force && !hw_prog_on(ifindex, &cur) && cur && cur != pi.id) {
		xtcam_set_err(err, errlen, "%s has another offloaded XDP program (id %u): not replacing it "
		     "without force", ctx->req.dev, cur);
		e = -EBUSY;
		goto out;
	}
	old = cap_begin();
	e = bpf_xdp_attach((int)ifindex, h->prog_fd, XDP_FLAGS_HW_MODE, NULL) ? -errno : 0;
	cap_end(old);
	if (e) {
		xtcam_set_err(err, errlen, "%s: attaching the offloaded program: %s%s%s", ctx->req.dev,
		     strerror(-e), cap_line[0] ? ": " : "", cap_line);
		goto out;
	}
	memset(info, 0, sizeof(*info));
	info->mode = XTCAM_MODE_HW;
	info->prog_id = pi.id;
	info->ifindex = ifindex;
	snprintf(info->note, sizeof(info->note), "offloaded to %s, %u entries", ctx->req.offload,
		 h->max);
out:
	xtcam_ns_leave(saved);
	return e;
}

static int hw_unbind(struct flow_block_offload *f, struct xtcam_dev *dev,
		     struct xtcam_ctx *ctx)
{
	struct flow_block_cb *cb = NULL, *it;
	struct hw_dev *h;
	int e = 0;

	/* the callback this port was bound through, found as a driver does:
	 * by its cb_ident */
	f->driver_block_list = &ctx->hw_list;
	list_for_each_entry(it, &ctx->hw_list, driver_list) {
		h = it->cb_priv;
		if (h->block == f->block && port_del(h, dev)) {
			cb = flow_block_cb_lookup(f, hw_rules_cb, h->ident);
			break;
		}
	}
	if (!cb)
		return -ENOENT;
	h = cb->cb_priv;
	if (!f->keep && ctx->req.old && ctx->req.old->prog_id)
		e = xtcam_detach_in(f, ctx->req.netns, hw_detach, ctx->req.old);
	if (!flow_block_cb_decref(cb)) {
		h->dying = true;
		h->keep = f->keep;
		flow_block_cb_remove(cb, f);
		list_del(&cb->driver_list);
	}
	return e;
}

static int hw_setup(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv)
{
	struct xtcam_ctx *ctx = priv;

	switch (f->command) {
	case FLOW_BLOCK_BIND:
		return hw_bind(f, dev, ctx);
	case FLOW_BLOCK_UNBIND:
		return hw_unbind(f, dev, ctx);
	default:
		return -EOPNOTSUPP;
	}
}

/* --- counters, reconcile, leftovers ------------------------------------- */

static int hw_rule_stats(const struct xtcam_rview *v, __u32 handle, struct xtcam_counter *sum)
{
	struct xtcam_block *b = v->blk;
	struct flow_block_cb *cb;

	if (!b)
		return 0;       /* a reader without the lock: not bound here */
	list_for_each_entry(cb, &b->cb_list, list) {
		struct hw_dev *h = cb->cb_priv;
		__u32 i;

		if (cb->cb != hw_rules_cb)
			continue;
		for (i = 0; i < h->max && i < XTCAM_HW_MAX_ENTRIES; i++) {
			struct xtcam_hw_counter c;

			if (h->img.handle[i] != handle)
				continue;
			if (bpf_map_lookup_elem(h->cnt_fd, &i, &c))
				return -errno;
			sum->packets += c.packets;
			sum->bytes += c.bytes;
		}
	}
	return 0;
}

static int hw_counters_reset(struct xtcam_block *b)
{
	struct xtcam_hw_counter zc = { 0 };
	struct flow_block_cb *cb;

	list_for_each_entry(cb, &b->cb_list, list) {
		struct hw_dev *h = cb->cb_priv;
		__u32 i;

		if (cb->cb != hw_rules_cb)
			continue;
		for (i = 0; i < h->max && i < XTCAM_HW_MAX_ENTRIES; i++)
			if (bpf_map_update_elem(h->cnt_fd, &i, &zc, 0))
				return -errno;
	}
	return 0;
}

/* Rewrite the block's device tables from its rules (after a crash). */
static int hw_reconcile(struct xtcam_block *b, char *err, size_t errlen)
{
	struct flow_block_cb *cb;
	size_t n = xtcam_block_rule_count(b), i;
	int e = 0;

	list_for_each_entry(cb, &b->cb_list, list) {
		struct hw_dev *h = cb->cb_priv;
		struct xtcam_hw_table *t;
		struct xtcam_hw_image nimg;
		struct xtcam_rule *rules;

		if (cb->cb != hw_rules_cb)
			continue;
		t = malloc(sizeof(*t));
		rules = malloc((n + 1) * sizeof(*rules));
		if (!t || !rules) {
			free(t);
			free(rules);
			return -ENOMEM;
		}
		for (i = 0; i < n; i++)
			rules[i] = *xtcam_block_rule_at(b, i);
		memset(&nimg, 0, sizeof(nimg));
		memset(&h->last, 0, sizeof(h->last));   /* unknown: write it all */
		e = hw_table(b, NULL, h->devname, h->ident->odev, rules, n, h->max, &h->img, t,
			     &nimg, err, errlen);
		if (!e)
			e = hw_rewrite(h, t, &nimg);
		free(t);
		if (e) {
			free(rules);
			return e;
		}
		free(h->rules);
		h->rules = rules;
		h->nrules = n;
		h->synced = true;
	}
	return 0;
}

/* After a crash: the hw-* directories of a block with no binding. */
static void hw_orphans(struct xtcam_ctx *ctx, const char *block)
{
	char dir[256], sub[600];
	struct dirent *de;
	DIR *d;

	if (xtcam_state_block_dir(ctx->st, block, NULL, dir, sizeof(dir)))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "hw-", 3)) {
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			hw_unpin(sub);
		}
	closedir(d);
	rmdir(dir);
}

/* After a crash in a hw bind: our offloaded program on ifindex (in the
 * caller's namespace), detached. */
static void hw_undo(const struct xtcam_driver *d, __u32 ifindex)
{
	struct xtcam_attach_info info = { .mode = XTCAM_MODE_HW, .ifindex = ifindex };
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi), id = 0;
	int fd;

	(void)d;
	if (hw_prog_on(ifindex, &id) || !id)
		return;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return;
	memset(&pi, 0, sizeof(pi));
	if (!bpf_obj_get_info_by_fd(fd, &pi, &len) && !strcmp(pi.name, "xtcam_hw")) {
		info.prog_id = id;
		hw_detach(&info, NULL, 0);
	}
	close(fd);
}

static void hw_init(struct xtcam_ctx *ctx)
{
	INIT_LIST_HEAD(&ctx->hw_list);
	INIT_LIST_HEAD(&ctx->hw_idents);
}

/* A device's counters are read through the image of the device that a
 * writer's open rebuilds in the core. */
static int hw_view_ro(struct xtcam_ctx *ctx, const struct xtcam_block_rec *rec,
		      const struct xtcam_bind_rec *bind, struct xtcam_rview *v)
{
	(void)ctx;
	(void)rec;
	(void)bind;
	(void)v;
	return -EAGAIN;
}

const struct xtcam_driver_ops xtcam_hw_ops = {
	.setup = hw_setup,
	.init = hw_init,
	.fini = hw_fini,
	.restore_needs_rules = true,
	.attach = hw_attach,
	.attached = hw_attached,
	.detach = hw_detach,
	.undo = hw_undo,
	.orphans = hw_orphans,
	.reconcile = hw_reconcile,
	.view_ro = hw_view_ro,
	.rule_counters = hw_rule_stats,
	.counters_reset = hw_counters_reset,
};
