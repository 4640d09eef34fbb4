// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Attaching a block's parser to an interface through libxdp (see attach.h).
 *
 * The program we attach is a fresh instance of xtcam_parse, loaded from the
 * skeleton's embedded ELF with every map -- the pinned ones and the frozen
 * .rodata of the block's own parser -- reused, so it reads the same tables
 * and tail-calls the classifier that sits in the block's `progs` array.
 * libxdp loads it either as a component of its dispatcher (an freplace
 * program, BPF_PROG_TYPE_EXT) or, when the dispatcher cannot be used, as a
 * plain XDP program attached alone.  We find out which by looking at the
 * interface afterwards, and why from what libxdp printed.
 *
 * Where the dispatcher works (Debian's 6.1, for instance), it still cannot
 * take a parser of today's blocks: the kernel lets a program tail call
 * into a prog array only if it matches the array's owner in type, JIT,
 * expected_attach_type and xdp_has_frags, and an extension has
 * expected_attach_type 0 (the verifier resets it) and no frags flag
 * (libxdp clears it), while the block's own programs are BPF_XDP with
 * frags.  That is detected and reported; a block whose programs were
 * loaded with expected_attach_type 0 and without frags would join.
 *
 * Programs that are not ours are never replaced without `force`; libxdp
 * itself refuses to add to a device whose program is not a dispatcher, so
 * the checks before attaching give the caller the name and id of what is
 * in the way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "xtcam/dp.h"
#include "attach.h"
#include "xtcam.skel.h"
#include "errmsg.h"

#define PARSE_NAME    "xtcam_parse"
#define PARSE_NF_NAME "xtcam_parse_nf"     /* no frags, for the dispatcher */
#define CLASSIFY_NF_NAME "xtcam_classify_nf"
#define DEVBUF 32   /* a device name or "ifindex N" */

static const char *const mode_names[] = {
	[XTCAM_MODE_AUTO]    = "auto",
	[XTCAM_MODE_HW]      = "hw",
	[XTCAM_MODE_NATIVE]  = "native",
	[XTCAM_MODE_GENERIC] = "generic",
};

const char *xtcam_mode_name(enum xtcam_mode m)
{
	return (unsigned int)m < sizeof(mode_names) / sizeof(mode_names[0]) ?
	       mode_names[m] : "?";
}

int xtcam_mode_parse(const char *s, enum xtcam_mode *m)
{
	unsigned int i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (s && !strcmp(s, mode_names[i])) {
			*m = (enum xtcam_mode)i;
			return 0;
		}
	if (s && !strcmp(s, "skb")) {
		*m = XTCAM_MODE_GENERIC;
		return 0;
	}
	if (s && (!strcmp(s, "drv") || !strcmp(s, "driver"))) {
		*m = XTCAM_MODE_NATIVE;
		return 0;
	}
	return -EINVAL;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e < 0 ? -e : e);

	return n ? n : "E?";
}

/* ------------------------------------------------------------------------
 * What libxdp and libbpf print while we call them: kept (the last lines)
 * for error messages and to learn why libxdp did not use its dispatcher;
 * shown on stderr only with XTCAM_VERBOSE (2 or more: debug lines too).
 */

#define CAP_LINES 24
#define CAP_LEN   200

struct capture {
	char line[CAP_LINES][CAP_LEN];
	bool from_xdp[CAP_LINES];
	unsigned int n;            /* lines seen; the last CAP_LINES kept */
	int verbose;
	libxdp_print_fn_t old_xdp;
	libbpf_print_fn_t old_bpf;
};

static struct capture *cur_cap;

static void cap_add(bool from_xdp, int debug, const char *fmt, va_list ap)
{
	struct capture *c = cur_cap;
	char buf[CAP_LEN];
	size_t n;
	va_list aq;

	if (!c)
		return;
	va_copy(aq, ap);
	vsnprintf(buf, sizeof(buf), fmt, aq);
	va_end(aq);
	if (c->verbose > debug)
		fprintf(stderr, "%s: %s%s", from_xdp ? "libxdp" : "libbpf", buf,
			strchr(buf, '\n') ? "" : "\n");
	if (debug)
		return;
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	if (!n)
		return;
	memcpy(c->line[c->n % CAP_LINES], buf, n + 1);
	c->from_xdp[c->n % CAP_LINES] = from_xdp;
	c->n++;
}

static int cap_xdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	cap_add(true, level == LIBXDP_DEBUG, fmt, ap);
	return 0;
}

static int cap_bpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's info lines are per map and relocation: debug for us */
	cap_add(false, level != LIBBPF_WARN, fmt, ap);
	return 0;
}

static void cap_begin(struct capture *c)
{
	const char *v = getenv("XTCAM_VERBOSE");

	memset(c, 0, sizeof(*c));
	c->verbose = v && *v ? (atoi(v) > 1 ? 2 : (strcmp(v, "0") ? 1 : 0)) : 0;
	cur_cap = c;
	c->old_xdp = libxdp_set_print(cap_xdp);
	c->old_bpf = libbpf_set_print(cap_bpf);
}

static void cap_end(struct capture *c)
{
	libxdp_set_print(c->old_xdp);
	libbpf_set_print(c->old_bpf);
	cur_cap = NULL;
}

/* The i-th kept line counting back from the newest (0), or NULL. */
static const char *cap_back(const struct capture *c, unsigned int i, bool *from_xdp)
{
	unsigned int k;

	if (i >= c->n || i >= CAP_LINES)
		return NULL;
	k = (c->n - 1 - i) % CAP_LINES;
	if (from_xdp)
		*from_xdp = c->from_xdp[k];
	return c->line[k];
}

static const char *cap_find(const struct capture *c, const char *needle)
{
	const char *l;
	unsigned int i;

	for (i = 0; (l = cap_back(c, i, NULL)); i++)
		if (strstr(l, needle))
			return l;
	return NULL;
}

/* The last warning, for an error message ("" when none). */
static const char *cap_last(const struct capture *c)
{
	const char *l = cap_back(c, 0, NULL);

	return l ? l : "";
}

/* "...: Operation not permitted" -> EPERM (0 if not an errno text). */
static int errno_of_text(const char *s)
{
	int e;

	if (!s)
		return 0;
	for (e = 1; e < 200; e++) {
		const char *t = strerror(e);

		if (!strncmp(s, t, strlen(t)))
			return e;
	}
	return 0;
}

static int errno_after(const char *line, const char *prefix)
{
	const char *p = line ? strstr(line, prefix) : NULL;

	return p ? errno_of_text(p + strlen(prefix)) : 0;
}

/* Why libxdp attached our program alone, from what it printed.  libxdp
 * checks the kernel once per process and then only says it falls back:
 * the reason found first is kept for the later attachments. */
static char known_reason[160];

static void fallback_reason(const struct capture *c, char *note, size_t len)
{
	const char *l;
	int e;

	if (!cap_find(c, "Compatibility check for dispatcher program failed") &&
	    !cap_find(c, "without a working bpffs") && known_reason[0]) {
		snprintf(note, len, "%s", known_reason);
		return;
	}
	if ((l = cap_find(c, "Compatibility check for dispatcher program failed")) &&
	    (e = errno_after(l, "failed: ")))
		snprintf(note, len, "libxdp dispatcher unavailable on this kernel "
			 "(%s): attached as the only program", errname(e));
	else if (cap_find(c, "without a working bpffs"))
		snprintf(note, len, "libxdp dispatcher unavailable: no bpffs "
			 "mounted (it pins there): attached as the only program");
	else if ((l = cap_find(c, "Failed to load dispatcher")) &&
		 (e = errno_after(l, "dispatcher: ")))
		snprintf(note, len, "libxdp dispatcher failed to load (%s): "
			 "attached as the only program", errname(e));
	else if (cap_find(c, "Skipping dispatcher"))
		snprintf(note, len, "libxdp dispatcher skipped (LIBXDP_SKIP_DISPATCHER): "
			 "attached as the only program");
	else
		snprintf(note, len, "libxdp did not use its dispatcher: attached "
			 "as the only program");
	if (cap_find(c, "Compatibility check for dispatcher program failed") ||
	    cap_find(c, "without a working bpffs"))
		snprintf(known_reason, sizeof(known_reason), "%s", note);
}

static void note_add(struct xtcam_attach_info *info, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note_add(struct xtcam_attach_info *info, const char *fmt, ...)
{
	size_t n = strlen(info->note);
	va_list ap;

	if (n && n + 2 < sizeof(info->note)) {
		memcpy(info->note + n, "; ", 3);
		n += 2;
	}
	if (n >= sizeof(info->note) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(info->note + n, sizeof(info->note) - n, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------
 * Programs and the device's XDP state.
 */

struct prog_desc {
	__u32 id;
	__u32 type;
	bool jited;
	bool ours;                 /* an xtcam parser */
	bool this_block;           /* ... of the block we are attaching */
	char name[BPF_OBJ_NAME_LEN];
};

/* Describe program id; our_config is the id of the block's config map
 * (0: do not look). */
static int prog_describe(__u32 id, __u32 our_config, struct prog_desc *d)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info), maps[64], i;
	int fd, e = 0;

	memset(d, 0, sizeof(*d));
	d->id = id;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = sizeof(maps) / sizeof(maps[0]);
	info.map_ids = (__u64)(unsigned long)maps;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		e = -errno;
		goto out;
	}
	d->type = info.type;
	d->jited = info.jited_prog_len > 0;
	memcpy(d->name, info.name, sizeof(d->name));
	d->name[sizeof(d->name) - 1] = 0;
	if (!d->name[0])
		snprintf(d->name, sizeof(d->name), "(unnamed)");
	d->ours = !strcmp(d->name, PARSE_NAME) || !strcmp(d->name, PARSE_NF_NAME);
	if (d->ours && our_config)
		for (i = 0; i < info.nr_map_ids && i < sizeof(maps) / sizeof(maps[0]); i++)
			if (maps[i] == our_config)
				d->this_block = true;
out:
	close(fd);
	return e;
}

struct xdp_state {
	__u32 drv_id, skb_id, hw_id;
};

static int xdp_state(int ifindex, struct xdp_state *s)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int e;

	memset(s, 0, sizeof(*s));
	e = bpf_xdp_query(ifindex, 0, &q);
	if (e)
		return e;
	s->drv_id = q.drv_prog_id;
	s->skb_id = q.skb_prog_id;
	s->hw_id = q.hw_prog_id;
	/* with one program attached, older kernels only fill prog_id */
	if (!s->drv_id && !s->skb_id && q.prog_id) {
		if (q.attach_mode == XDP_ATTACHED_DRV)
			s->drv_id = q.prog_id;
		else if (q.attach_mode == XDP_ATTACHED_SKB)
			s->skb_id = q.prog_id;
	}
	return 0;
}

static enum xdp_attach_mode xdp_mode(enum xtcam_mode m)
{
	return m == XTCAM_MODE_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE;
}

static __u32 xdp_flag(enum xtcam_mode m)
{
	return m == XTCAM_MODE_GENERIC ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

static void dev_name(int ifindex, char *buf)
{
	if (!if_indextoname((unsigned int)ifindex, buf))
		snprintf(buf, DEVBUF, "ifindex %d", ifindex);
}

/* libxdp's view of what is attached (in either host mode); NULL if
 * nothing is. */
static struct xdp_multiprog *multiprog_get(int ifindex, int *err)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	long e = libxdp_get_error(mp);

	if (e || !mp) {
		*err = e == -ENOENT || !mp ? 0 : (int)e;
		return NULL;
	}
	*err = 0;
	return mp;
}

/* ------------------------------------------------------------------------
 * The block in bpffs.
 */

struct block_pins {
	int map[XTCAM_MAP_MAX];
	int rodata;
	int parse, classify;
	__u32 config_id, classify_id;
};

static void pins_close(struct block_pins *b)
{
	int i;

	for (i = 0; i < XTCAM_MAP_MAX; i++)
		if (b->map[i] >= 0)
			close(b->map[i]);
	if (b->rodata >= 0)
		close(b->rodata);
	if (b->parse >= 0)
		close(b->parse);
	if (b->classify >= 0)
		close(b->classify);
}

static int pin_get(const char *dir, const char *name, int *fd, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name), e;

	if (n < 0 || (size_t)n >= sizeof(path)) {
		xtcam_set_err(err, errlen, "block pins %s: path too long", dir);
		return -ENAMETOOLONG;
	}
	*fd = bpf_obj_get(path);
	if (*fd < 0) {
		e = -errno;
		*fd = -1;
		xtcam_set_err(err, errlen, "block pin %s: %s", path, strerror(-e));
		return e;
	}
	return 0;
}

static int pins_open(const char *dir, struct block_pins *b, char *err, size_t errlen)
{
	struct bpf_prog_info pi;
	struct bpf_map_info mi;
	__u32 len, maps[64], i, zero = 0, slot0 = 0;
	int e;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < XTCAM_MAP_MAX; i++)
		b->map[i] = -1;
	b->rodata = b->parse = b->classify = -1;
	for (i = 0; i < XTCAM_MAP_MAX; i++) {
		e = pin_get(dir, xtcam_dp_map_names[i], &b->map[i], err, errlen);
		if (e)
			return e;
	}
	e = pin_get(dir, "prog_parse", &b->parse, err, errlen);
	if (!e)
		e = pin_get(dir, "prog_classify", &b->classify, err, errlen);
	if (e)
		return e;

	memset(&mi, 0, sizeof(mi));
	len = sizeof(mi);
	if (bpf_obj_get_info_by_fd(b->map[XTCAM_MAP_CONFIG], &mi, &len))
		goto sys;
	b->config_id = mi.id;

	/* the classifier: in the tail call slot, an XDP program, JITed */
	memset(&pi, 0, sizeof(pi));
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(b->classify, &pi, &len))
		goto sys;
	b->classify_id = pi.id;
	if (pi.type != BPF_PROG_TYPE_XDP || !pi.jited_prog_len) {
		xtcam_set_err(err, errlen, "block %s: classifier (id %u) is %s, not a JITed "
			"XDP program: no XDP program can tail call it", dir, pi.id,
			pi.type != BPF_PROG_TYPE_XDP ? "of another type" : "not JITed");
		return -EINVAL;
	}
	if (bpf_map_lookup_elem(b->map[XTCAM_MAP_PROGS], &zero, &slot0)) {
		e = -errno;
		xtcam_set_err(err, errlen, "block %s: progs[0] holds no classifier (%s)",
			dir, strerror(-e));
		return e == -ENOENT ? -ENOENT : e;
	}
	if (slot0 != pi.id) {
		xtcam_set_err(err, errlen, "block %s: progs[0] holds program id %u, not the "
			"pinned classifier (id %u)", dir, slot0, pi.id);
		return -EUCLEAN;
	}

	/* the parser's frozen .rodata, shared like every other map */
	memset(&pi, 0, sizeof(pi));
	len = sizeof(pi);
	pi.nr_map_ids = sizeof(maps) / sizeof(maps[0]);
	pi.map_ids = (__u64)(unsigned long)maps;
	if (bpf_obj_get_info_by_fd(b->parse, &pi, &len))
		goto sys;
	for (i = 0; i < pi.nr_map_ids && i < sizeof(maps) / sizeof(maps[0]); i++) {
		int fd = bpf_map_get_fd_by_id(maps[i]);
		size_t n;

		if (fd < 0)
			goto sys;
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			close(fd);
			goto sys;
		}
		n = strlen(mi.name);
		if (n >= 7 && !strcmp(mi.name + n - 7, ".rodata")) {
			b->rodata = fd;
			break;
		}
		close(fd);
	}
	if (b->rodata < 0) {
		xtcam_set_err(err, errlen, "block %s: the pinned parser (id %u) has no "
			".rodata map", dir, pi.id);
		return -EUCLEAN;
	}
	return 0;
sys:
	e = -errno;
	xtcam_set_err(err, errlen, "block %s: %s", dir, strerror(-e));
	return e;
}

/* A fresh, unloaded program of the xtcam object (only that one) whose
 * maps are the block's. */
static int prog_open(const struct block_pins *b, const char *prog,
		     struct bpf_object **objp, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "xtcam");
	struct bpf_program *p;
	struct bpf_object *obj;
	struct bpf_map *m;
	size_t sz;
	const void *elf = xtcam__elf_bytes(&sz);
	int e, i;

	obj = bpf_object__open_mem(elf, sz, &oo);
	e = libbpf_get_error(obj);
	if (e) {
		xtcam_set_err(err, errlen, "open the xtcam BPF object: %s", strerror(-e));
		return e;
	}
	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		int fd = -1;

		if (bpf_map__is_internal(m)) {
			size_t n = strlen(name);

			if (n >= 7 && !strcmp(name + n - 7, ".rodata"))
				fd = b->rodata;
		} else {
			for (i = 0; i < XTCAM_MAP_MAX; i++)
				if (!strcmp(name, xtcam_dp_map_names[i]))
					fd = b->map[i];
		}
		if (fd < 0) {
			xtcam_set_err(err, errlen, "xtcam object: map %s has no counterpart "
				"in the block", name);
			e = -EUCLEAN;
			goto fail;
		}
		e = bpf_map__reuse_fd(m, fd);
		if (e) {
			xtcam_set_err(err, errlen, "xtcam object: reuse map %s: %s", name,
				strerror(-e));
			goto fail;
		}
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), prog));
	*objp = obj;
	return 0;
fail:
	bpf_object__close(obj);
	return e;
}

static int parse_open(const struct block_pins *b, struct bpf_object **objp,
		      char *err, size_t errlen)
{
	return prog_open(b, PARSE_NAME, objp, err, errlen);
}

/* That program as libxdp's: *objp and *xpp to close, also on error. */
static int libxdp_prog(const struct block_pins *b, const char *prog,
		       struct bpf_object **objp, struct xdp_program **xpp,
		       char *err, size_t errlen)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xo, .prog_name = prog);
	int e;

	*xpp = NULL;
	e = prog_open(b, prog, objp, err, errlen);
	if (e) {
		*objp = NULL;
		return e;
	}
	xo.obj = *objp;
	*xpp = xdp_program__create(&xo);
	e = (int)libxdp_get_error(*xpp);
	if (e) {
		*xpp = NULL;
		xtcam_set_err(err, errlen, "libxdp: program %s: %s", prog, strerror(-e));
	}
	return e;
}

/* Put the no-frags classifier in progs_nf[0] unless one is there: the
 * first program there makes the array's owner a no-frags XDP program, as
 * the dispatcher's extension is. */
static int classify_nf_install(const struct block_pins *b, char *err, size_t errlen)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	__u32 zero = 0, id;
	int e, fd;

	if (!bpf_map_lookup_elem(b->map[XTCAM_MAP_PROGS_NF], &zero, &id))
		return 0;
	e = prog_open(b, CLASSIFY_NF_NAME, &obj, err, errlen);
	if (e)
		return e;
	p = bpf_object__find_program_by_name(obj, CLASSIFY_NF_NAME);
	/* an extension's expected_attach_type is 0: match it */
	e = p ? bpf_program__set_expected_attach_type(p, 0) : -ENOENT;
	if (!e)
		e = bpf_object__load(obj);
	if (e) {
		xtcam_set_err(err, errlen, "load " CLASSIFY_NF_NAME ": %s", strerror(-e));
		goto out;
	}
	fd = bpf_program__fd(p);
	if (bpf_map_update_elem(b->map[XTCAM_MAP_PROGS_NF], &zero, &fd, 0)) {
		e = -errno;
		xtcam_set_err(err, errlen, "progs_nf[0] = " CLASSIFY_NF_NAME ": %s", strerror(-e));
	}
out:
	bpf_object__close(obj);
	return e;
}

static int placement(int ifindex, enum xtcam_mode mode, __u32 our_id,
		     struct xtcam_attach_info *info);

/* Through libxdp's dispatcher with the no-frags parser (and classifier);
 * 0 with info placed, or -errno. */
static int attach_nf(const struct block_pins *b, int ifindex, enum xtcam_mode mode,
		     struct xtcam_attach_info *info, char *err, size_t errlen)
{
	struct xdp_program *xp = NULL;
	struct bpf_object *obj = NULL;
	int e;

	e = classify_nf_install(b, err, errlen);
	if (e)
		return e;
	e = libxdp_prog(b, PARSE_NF_NAME, &obj, &xp, err, errlen);
	if (e)
		goto out;
	e = xdp_program__attach(xp, ifindex, xdp_mode(mode), 0);
	if (e) {
		xtcam_set_err(err, errlen, "libxdp: attach %s: %s", PARSE_NF_NAME, strerror(-e));
		goto out;
	}
	e = placement(ifindex, mode, xdp_program__id(xp), info);
	if (!e && !info->dispatcher)
		e = -EUCLEAN;     /* libxdp attached it some other way */
out:
	xdp_program__close(xp);
	bpf_object__close(obj);
	return e;
}

/* ------------------------------------------------------------------------
 * What is on the device already.
 */

struct existing {
	enum xtcam_mode mode;      /* of the program (dispatcher) attached */
	struct prog_desc main;     /* the attached program */
	bool dispatcher;           /* main is a libxdp dispatcher */
	int ncomp;                 /* its programs */
	struct prog_desc comp[10];
};

static int existing_get(int ifindex, __u32 our_config, struct existing *x,
			char *err, size_t errlen)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	struct xdp_state s;
	char dev[DEVBUF];
	__u32 id;
	int e;

	memset(x, 0, sizeof(*x));
	e = xdp_state(ifindex, &s);
	if (e) {
		xtcam_set_err(err, errlen, "ifindex %d: %s", ifindex,
			e == -ENODEV ? "no such device in this namespace" : strerror(-e));
		return e;
	}
	id = s.drv_id ? s.drv_id : s.skb_id;
	if (!id)
		return 0;
	x->mode = s.drv_id ? XTCAM_MODE_NATIVE : XTCAM_MODE_GENERIC;
	e = prog_describe(id, our_config, &x->main);
	if (e == -ENOENT)
		return -EAGAIN;         /* replaced while we looked */
	if (e) {
		dev_name(ifindex, dev);
		xtcam_set_err(err, errlen, "%s: XDP program id %u: %s", dev, id, strerror(-e));
		return e;
	}
	mp = multiprog_get(ifindex, &e);
	if (!mp)
		return 0;               /* libxdp cannot read it: a plain program */
	if (!xdp_multiprog__is_legacy(mp)) {
		struct xdp_program *mainp = xdp_multiprog__main_prog(mp);

		x->dispatcher = mainp && xdp_program__id(mainp) == id;
		while (x->dispatcher && (p = xdp_multiprog__next_prog(p, mp)) &&
		       x->ncomp < (int)(sizeof(x->comp) / sizeof(x->comp[0]))) {
			struct prog_desc *d = &x->comp[x->ncomp];

			if (prog_describe(xdp_program__id(p), our_config, d))
				snprintf(d->name, sizeof(d->name), "%s",
					 xdp_program__name(p));
			d->id = xdp_program__id(p);
			x->ncomp++;
		}
	}
	xdp_multiprog__close(mp);
	return 0;
}

static void describe_existing(const struct existing *x, char *buf, size_t len)
{
	size_t n;
	int i;

	if (!x->dispatcher) {
		snprintf(buf, len, "XDP program %s (id %u, %s mode)", x->main.name,
			 x->main.id, xtcam_mode_name(x->mode));
		return;
	}
	snprintf(buf, len, "a libxdp dispatcher (id %u, %s mode) with", x->main.id,
		 xtcam_mode_name(x->mode));
	for (i = 0; i < x->ncomp; i++) {
		n = strlen(buf);
		snprintf(buf + n, len - n, "%s %s (id %u)", i ? "," : "",
			 x->comp[i].name, x->comp[i].id);
	}
	if (!x->ncomp) {
		n = strlen(buf);
		snprintf(buf + n, len - n, " no programs");
	}
}

/* The same, short, for info->note. */
static void describe_short(const struct existing *x, char *buf, size_t len)
{
	size_t n;
	int i;

	if (!x->dispatcher) {
		snprintf(buf, len, "%s (id %u)", x->main.name, x->main.id);
		return;
	}
	snprintf(buf, len, "dispatcher %u:", x->main.id);
	for (i = 0; i < x->ncomp; i++) {
		n = strlen(buf);
		snprintf(buf + n, len - n, "%s %s", i ? "," : "", x->comp[i].name);
	}
}

/* One of ours already there (directly or in the dispatcher)? */
static const struct prog_desc *existing_ours(const struct existing *x)
{
	int i;

	if (!x->main.id)
		return NULL;
	if (!x->dispatcher)
		return x->main.ours ? &x->main : NULL;
	for (i = 0; i < x->ncomp; i++)
		if (x->comp[i].ours)
			return &x->comp[i];
	return NULL;
}

/* Remove what is attached (force): a plain program only if it is still
 * the one we saw; a dispatcher through libxdp (which unpins it). */
static int existing_remove(int ifindex, const struct existing *x, char *err,
			   size_t errlen)
{
	char dev[DEVBUF];
	int e = 0;

	dev_name(ifindex, dev);
	if (x->dispatcher) {
		struct xdp_multiprog *mp = multiprog_get(ifindex, &e);

		if (!mp)
			return e ? e : -EAGAIN;
		if (xdp_program__id(xdp_multiprog__main_prog(mp)) != x->main.id)
			e = -EAGAIN;
		else
			e = xdp_multiprog__detach(mp);
		xdp_multiprog__close(mp);
	} else {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o);
		int fd = bpf_prog_get_fd_by_id(x->main.id);

		if (fd < 0)
			return -EAGAIN;
		o.old_prog_fd = fd;     /* libbpf adds XDP_FLAGS_REPLACE */
		e = bpf_xdp_detach(ifindex, xdp_flag(x->mode), &o);
		close(fd);
		if (e == -EEXIST)
			e = -EAGAIN;    /* not the one we saw any more */
	}
	if (e && e != -EAGAIN)
		xtcam_set_err(err, errlen, "%s: remove XDP program %s (id %u): %s", dev,
			x->main.name, x->main.id, strerror(-e));
	return e;
}

/* ------------------------------------------------------------------------
 * Attach.
 */

/* Where did our program end up?  Fills info (mode, prog_id, dispatcher). */
static int placement(int ifindex, enum xtcam_mode mode, __u32 our_id,
		     struct xtcam_attach_info *info)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	struct xdp_state s;
	__u32 id;
	int e;

	e = xdp_state(ifindex, &s);
	if (e)
		return e;
	id = mode == XTCAM_MODE_GENERIC ? s.skb_id : s.drv_id;
	info->prog_id = our_id;
	if (id == our_id) {
		info->dispatcher = 0;
		return 0;
	}
	mp = multiprog_get(ifindex, &e);
	if (!mp)
		return e ? e : -ENOENT;
	e = -ENOENT;
	if (!xdp_multiprog__is_legacy(mp))
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (xdp_program__id(p) == our_id) {
				info->dispatcher = 1;
				e = 0;
			}
	xdp_multiprog__close(mp);
	return e;
}

/* Load our program ourselves and attach it alone, if the device has no
 * program (for when libxdp's dispatcher refuses it). */
static int attach_alone(const struct block_pins *b, int ifindex, enum xtcam_mode mode,
			__u32 *id, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o);
	struct bpf_prog_info pi;
	struct bpf_object *obj;
	__u32 len = sizeof(pi);
	int e, fd;

	e = parse_open(b, &obj, err, errlen);
	if (e)
		return e;
	e = bpf_object__load(obj);
	if (e) {
		xtcam_set_err(err, errlen, "load " PARSE_NAME ": %s", strerror(-e));
		goto out;
	}
	fd = bpf_program__fd(bpf_object__find_program_by_name(obj, PARSE_NAME));
	memset(&pi, 0, sizeof(pi));
	if (bpf_obj_get_info_by_fd(fd, &pi, &len)) {
		e = -errno;
		goto out;
	}
	e = bpf_xdp_attach(ifindex, fd, xdp_flag(mode) | XDP_FLAGS_UPDATE_IF_NOEXIST, &o);
	if (!e)
		*id = pi.id;
out:
	bpf_object__close(obj);
	return e;
}

static int attach_once(const struct block_pins *b, int ifindex, enum xtcam_mode mode,
		       bool force, struct xtcam_attach_info *info, struct capture *cap,
		       char *err, size_t errlen)
{
	struct xdp_program *xp = NULL;
	struct bpf_object *obj = NULL;
	const struct prog_desc *ours;
	struct existing x;
	char dev[DEVBUF], what[320];
	bool was_ext;
	int e, tries = 0;

	dev_name(ifindex, dev);
again:
	e = existing_get(ifindex, b->config_id, &x, err, errlen);
	if (e == -EAGAIN && ++tries < 5)
		goto again;
	if (e)
		return e;
	describe_existing(&x, what, sizeof(what));
	ours = existing_ours(&x);
	if (ours) {
		xtcam_set_err(err, errlen, "%s already runs an xtcam parser (id %u, %s): "
			"one block per device", dev, ours->id,
			ours->this_block ? "this block" : "another block");
		return -EBUSY;
	}
	if (x.main.id && (!x.dispatcher || x.mode != mode)) {
		/* libxdp cannot add to it: replace it, or leave it alone */
		if (!force) {
			xtcam_set_err(err, errlen, "%s runs %s%s; not replacing it without "
				"force", dev, what, x.dispatcher ?
				" (another mode)" : "");
			return -EBUSY;
		}
		e = existing_remove(ifindex, &x, err, errlen);
		if (e == -EAGAIN && ++tries < 5)
			goto again;
		if (e)
			return e;
		describe_short(&x, what, sizeof(what));
		note_add(info, "replaced %s (force)", what);
	}

	e = libxdp_prog(b, PARSE_NAME, &obj, &xp, err, errlen);
	if (e)
		goto out;
	/* libbpf 1.1 sets BPF_F_XDP_HAS_FRAGS only at load (from SEC
	 * "xdp.frags"), so libxdp would think we cannot take frags */
	xdp_program__set_xdp_frags_support(xp, true);

	e = xdp_program__attach(xp, ifindex, xdp_mode(mode), 0);
	was_ext = bpf_program__type(bpf_object__find_program_by_name(obj, PARSE_NAME)) ==
		  BPF_PROG_TYPE_EXT;
	if (e == -EINVAL && was_ext && xdp_program__id(xp) == 0) {
		/*
		 * libxdp's dispatcher works, but the kernel refused our
		 * program as its extension (after the verifier passed it):
		 * a tail call map takes only programs like its owner (same
		 * type, JIT, expected_attach_type, xdp_has_frags).  An
		 * extension ends up with expected_attach_type 0 (the
		 * verifier resets it) and, from libxdp, without
		 * BPF_F_XDP_HAS_FRAGS; the block's progs array is owned by
		 * its own programs, loaded as BPF_XDP with frags.
		 */
		struct existing y;
		char nferr[256];

		/* the no-frags pair can join the dispatcher */
		e = attach_nf(b, ifindex, mode, info, nferr, sizeof(nferr));
		if (!e) {
			note_add(info, "through libxdp's dispatcher with " PARSE_NF_NAME
				 " (a dispatcher component cannot take multi-buffer "
				 "frames)");
			goto done;
		}
		note_add(info, "the no-frags parser could not join the dispatcher "
			 "either: %s", nferr);

		if (existing_get(ifindex, b->config_id, &y, NULL, 0) == 0 && y.main.id) {
			describe_existing(&y, what, sizeof(what));
			xtcam_set_err(err, errlen, "%s runs %s; libxdp's dispatcher cannot take "
				PARSE_NAME " (an extension may not tail call into the "
				"block's frags progs array, EINVAL) nor " PARSE_NF_NAME
				" (%s); not replacing it without force", dev, what, nferr);
			if (!force) {
				e = -EBUSY;
				goto out;
			}
			e = existing_remove(ifindex, &y, err, errlen);
			if (e)
				goto out;
			describe_short(&y, what, sizeof(what));
			note_add(info, "replaced %s (force)", what);
		}
		e = attach_alone(b, ifindex, mode, &info->prog_id, err, errlen);
		if (e)
			goto out;
		info->dispatcher = 0;
		note_add(info, "libxdp dispatcher refuses " PARSE_NAME " (extensions "
			 "cannot tail call the block, EINVAL): attached as the only "
			 "program");
		goto done;
	}
	if (e) {
		if (e == -EEXIST || e == -EBUSY) {
			xtcam_set_err(err, errlen, "%s: XDP program appeared while attaching "
				"(%s); libxdp: %s", dev, errname(e), cap_last(cap));
			e = -EBUSY;
		} else {
			xtcam_set_err(err, errlen, "attach %s to %s in %s mode: %s (%s)%s%s",
				PARSE_NAME, dev, xtcam_mode_name(mode), strerror(-e),
				errname(e), cap->n ? "; " : "", cap_last(cap));
		}
		goto out;
	}
	e = placement(ifindex, mode, xdp_program__id(xp), info);
	if (e) {
		xtcam_set_err(err, errlen, "%s: attached %s (id %u) but cannot find it "
			"there (%s)", dev, PARSE_NAME, xdp_program__id(xp), strerror(-e));
		goto out;
	}
	if (!info->dispatcher) {
		char why[sizeof(info->note)];

		fallback_reason(cap, why, sizeof(why));
		note_add(info, "%s", why);
	}
done:
	info->mode = mode;
	info->ifindex = (__u32)ifindex;
out:
	xdp_program__close(xp);
	bpf_object__close(obj);
	return e;
}

int xtcam_attach(const char *pin_dir, int ifindex, enum xtcam_mode mode,
		 bool force, struct xtcam_attach_info *info, char *err,
		 size_t errlen)
{
	struct block_pins b;
	struct capture cap;
	char dev[DEVBUF];
	int e;

	memset(info, 0, sizeof(*info));
	if (!pin_dir || ifindex <= 0) {
		xtcam_set_err(err, errlen, "attach: invalid block or ifindex %d", ifindex);
		return -EINVAL;
	}
	if (mode == XTCAM_MODE_HW) {
		xtcam_set_err(err, errlen, "attach: hw mode needs device-bound programs and "
			"maps (the offload path), not this one");
		return -EOPNOTSUPP;
	}
	if (mode != XTCAM_MODE_AUTO && mode != XTCAM_MODE_NATIVE &&
	    mode != XTCAM_MODE_GENERIC) {
		xtcam_set_err(err, errlen, "attach: unknown mode %d", (int)mode);
		return -EINVAL;
	}
	e = pins_open(pin_dir, &b, err, errlen);
	if (e) {
		pins_close(&b);
		return e;
	}
	cap_begin(&cap);
	if (mode == XTCAM_MODE_AUTO) {
		e = attach_once(&b, ifindex, XTCAM_MODE_NATIVE, force, info, &cap,
				err, errlen);
		if (e == -EOPNOTSUPP) {
			dev_name(ifindex, dev);
			memset(info, 0, sizeof(*info));
			note_add(info, "%s has no native XDP: generic", dev);
			e = attach_once(&b, ifindex, XTCAM_MODE_GENERIC, force, info,
					&cap, err, errlen);
		}
	} else {
		e = attach_once(&b, ifindex, mode, force, info, &cap, err, errlen);
	}
	cap_end(&cap);
	pins_close(&b);
	if (e) {
		memset(info, 0, sizeof(*info));
		if (err && errlen && !err[0])
			xtcam_set_err(err, errlen, "attach to ifindex %d: %s", ifindex,
				strerror(-e));
	}
	return e;
}

/* ------------------------------------------------------------------------
 * Check and detach.
 */

static int check_info(const struct xtcam_attach_info *info)
{
	if (!info || !info->prog_id || !info->ifindex ||
	    (info->mode != XTCAM_MODE_NATIVE && info->mode != XTCAM_MODE_GENERIC))
		return -EINVAL;
	return 0;
}

/* 1 attached, 0 not; -errno */
static int is_attached(const struct xtcam_attach_info *info)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	struct xdp_state s;
	int e, found = 0;
	__u32 id;

	e = xdp_state((int)info->ifindex, &s);
	if (e == -ENODEV)
		return 0;
	if (e)
		return e;
	id = info->mode == XTCAM_MODE_GENERIC ? s.skb_id : s.drv_id;
	if (!id)
		return 0;
	if (id == info->prog_id)
		return 1;
	if (!info->dispatcher)
		return 0;
	mp = multiprog_get((int)info->ifindex, &e);
	if (!mp)
		return e == -ENOENT ? 0 : e;
	if (!xdp_multiprog__is_legacy(mp) &&
	    xdp_program__id(xdp_multiprog__main_prog(mp)) == id)
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (xdp_program__id(p) == info->prog_id)
				found = 1;
	xdp_multiprog__close(mp);
	return found;
}

int xtcam_attach_check(const struct xtcam_attach_info *info)
{
	struct capture cap;
	int r;

	if (check_info(info))
		return -EINVAL;
	cap_begin(&cap);
	r = is_attached(info);
	cap_end(&cap);
	return r;
}

/*
 * libxdp keeps a dispatcher's programs alive through pins under
 * <bpffs>/xdp/dispatch-IFINDEX-DISPATCHERID/progN-{prog,link}.  When the
 * device goes away those pins stay, and ours would keep the block's maps
 * alive.  Remove our own two pins (only ours) from dispatcher directories
 * of this ifindex whose dispatcher is not the one attached there now.
 * Returns how many directories held ours.  Takes libxdp's lock (flock on
 * the directory).
 */
static int release_stale_pins(int ifindex, __u32 prog_id)
{
	const char *env = getenv("LIBXDP_BPFFS");
	char dir[PATH_MAX], sub[PATH_MAX + 300], path[PATH_MAX + 600];
	struct xdp_state s;
	struct dirent *de;
	__u32 cur = 0;
	int lock, found = 0;
	DIR *d;

	if (!xdp_state(ifindex, &s))
		cur = s.drv_id ? s.drv_id : s.skb_id;
	snprintf(dir, sizeof(dir), "%s/xdp", env && *env ? env : "/sys/fs/bpf");
	lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock < 0)
		return 0;
	if (flock(lock, LOCK_EX)) {
		close(lock);
		return 0;
	}
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct dirent *fe;
		int dif, n;
		unsigned int did;
		DIR *sd;
		bool empty = true;

		if (sscanf(de->d_name, "dispatch-%d-%u", &dif, &did) != 2 ||
		    dif != ifindex || did == cur)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		sd = opendir(sub);
		while (sd && (fe = readdir(sd))) {
			struct bpf_prog_info pi;
			__u32 len = sizeof(pi);
			int fd;

			if (fe->d_name[0] == '.')
				continue;
			if (sscanf(fe->d_name, "prog%d-prog", &n) != 1 ||
			    !strstr(fe->d_name, "-prog")) {
				empty = false;
				continue;
			}
			snprintf(path, sizeof(path), "%s/%s", sub, fe->d_name);
			fd = bpf_obj_get(path);
			memset(&pi, 0, sizeof(pi));
			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &len) &&
			    pi.id == prog_id) {
				unlink(path);
				snprintf(path, sizeof(path), "%s/prog%d-link", sub, n);
				unlink(path);
				found++;
			} else {
				empty = false;
			}
			if (fd >= 0)
				close(fd);
		}
		if (sd)
			closedir(sd);
		if (empty || found)
			rmdir(sub);     /* fails (harmlessly) if others remain */
	}
	if (d)
		closedir(d);
	flock(lock, LOCK_UN);
	close(lock);
	return found;
}

int xtcam_detach(const struct xtcam_attach_info *info, char *err, size_t errlen)
{
	struct xdp_program *xp;
	struct capture cap;
	char dev[DEVBUF];
	int e, r;

	if (check_info(info)) {
		xtcam_set_err(err, errlen, "detach: not an attachment (no program id, "
			"ifindex or host mode)");
		return -EINVAL;
	}
	dev_name((int)info->ifindex, dev);
	cap_begin(&cap);
	r = is_attached(info);
	if (r <= 0) {
		e = r ? r : -ENOENT;
		if (!r && info->dispatcher &&
		    release_stale_pins((int)info->ifindex, info->prog_id) > 0)
			xtcam_set_err(err, errlen, "%s: %s (id %u) is no longer attached; "
				"released its stale libxdp pins", dev, PARSE_NAME,
				info->prog_id);
		else
			xtcam_set_err(err, errlen, "%s: %s (id %u) is not attached%s", dev,
				PARSE_NAME, info->prog_id, r ? "" :
				" (detached, replaced or device gone)");
		goto out;
	}
	xp = xdp_program__from_id(info->prog_id);
	e = (int)libxdp_get_error(xp);
	if (e) {
		xtcam_set_err(err, errlen, "%s: %s (id %u): %s", dev, PARSE_NAME,
			info->prog_id, strerror(-e));
		goto out;
	}
	e = xdp_program__detach(xp, (int)info->ifindex, xdp_mode(info->mode), 0);
	xdp_program__close(xp);
	if (e)
		xtcam_set_err(err, errlen, "%s: detach %s (id %u): %s%s%s", dev, PARSE_NAME,
			info->prog_id, strerror(-e), cap.n ? "; libxdp: " : "",
			cap_last(&cap));
out:
	cap_end(&cap);
	return e;
}
