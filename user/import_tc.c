// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `xtcam import tc`: tc command lines (`tc qdisc add dev D clsact`, `tc
 * filter add dev D ingress ... flower ...`) or the JSON of `tc -j filter
 * show`, into a save-format file.
 *
 * Each filter line becomes an xtcam rule through the rule parser
 * (xtcam_rule_parse_tc(), which takes the words from `protocol` on); the
 * words before `flower` (dev, block, ingress, pref, handle, protocol,
 * chain) are read here, numbers in tc's base 0.  The rules of a block are
 * then put in the order tc tries them:
 *
 *  - by pref (tc's chain is sorted by it, lowest first); a line without
 *    pref gets tc's automatic one (tcf_auto_prio(): 0xC000 for the first
 *    filter of the chain, else one below the lowest so far);
 *  - lines that share a pref are one flower instance, which cls_flower's
 *    fl_classify() walks mask by mask, in the order each mask was first
 *    added; within a mask, filters have distinct keys and cannot overlap,
 *    except for port ranges: fl_lookup_range() walks a range mask's
 *    filters in the order they were added, and for the first whose ranges
 *    hold the frame's ports looks up the frame's key with those ranges, so
 *    filters with the same ranges count as added with the first of them.
 *
 * The rules keep tc's handles when those are unique in the block and rise
 * in that order within each pref; otherwise the block's rules are numbered
 * 1, 2, ... in that order (tc numbers each pref's filters from 1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <json-c/json.h>
#include "xtcam/import_tc.h"
#include "xtcam/loader.h"
#include "xtcam/syntax.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define TC_AUTO_PRIO_FIRST 0xC000u

unsigned xtcam_tc_auto_prio(unsigned lowest)
{
	if (!lowest)
		return TC_AUTO_PRIO_FIRST;
	return lowest - 1;
}

/* How a port was written, which decides flower's mask: none, one port,
 * PORT/MASK, or MIN-MAX (a range mask). */
enum pform { PF_NONE, PF_EXACT, PF_MASKED, PF_RANGE };

struct irule {
	struct xtcam_rule r;
	unsigned line;
	unsigned pref;
	unsigned handle;         /* tc's (given, or flower's own) */
	unsigned proto;          /* ethertype, or 0x10000 + name hash */
	unsigned seq;            /* order added */
	unsigned mask_seq;       /* seq of the first rule of its mask */
	unsigned range_seq;      /* seq of the first with its mask and ranges */
	enum pform sp, dp;
};

struct iblock {
	char name[XTCAM_NAME_MAX];
	char dev[XTCAM_IFNAME_MAX];   /* a device's own block; "" for block N */
	unsigned index;               /* block N */
	unsigned lowest;              /* lowest pref so far, 0: none */
	unsigned skip_hw_line, skip_sw_line;
	struct irule *rules;
	size_t n, cap;
};

struct idev {
	char dev[XTCAM_IFNAME_MAX];
	size_t block;
	unsigned line;                /* its qdisc line, 0: implied by a filter */
};

struct imp {
	const struct xtcam_import_opts *o;
	const char *name;
	struct iblock *b;
	size_t nb;
	struct idev *d;
	size_t nd;
	FILE *msg;
	char *msgbuf;
	size_t msglen;
	unsigned bad;
	int first_err;
	unsigned seq;
	int oom;
};

/* --- messages ------------------------------------------------------------ */

static int refuse(struct imp *im, const char *where, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(struct imp *im, const char *where, int e, const char *fmt, ...)
{
	va_list ap;

	fprintf(im->msg, "%s:%s: ", im->name, where);
	va_start(ap, fmt);
	vfprintf(im->msg, fmt, ap);
	va_end(ap);
	fputs(" (not imported)\n", im->msg);
	if (!im->bad++)
		im->first_err = e;
	return -e;
}

/* --- numbers as tc reads them -------------------------------------------- */

/* strtoul base 0 (0x hex, leading 0 octal), the whole word, at most max */
static int tc_num(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return *v > max ? -ERANGE : 0;
}

/* tc's protocol word (ll_proto_a2n: a name, any case, or a number in
 * base 0) as a number to compare lines by; names it does not know are
 * compared by their text. */
static unsigned proto_key(const char *s)
{
	static const struct { const char *n; unsigned v; } names[] = {
		{ "all", 0x0003 }, { "ip", 0x0800 }, { "ipv4", 0x0800 },
		{ "ipv6", 0x86dd }, { "arp", 0x0806 }, { "rarp", 0x8035 },
		{ "802.1q", 0x8100 }, { "8021q", 0x8100 }, { "802.1ad", 0x88a8 },
		{ "8021ad", 0x88a8 }, { "mpls_uc", 0x8847 }, { "mpls_mc", 0x8848 },
		{ "ppp_ses", 0x8864 }, { "pppoes", 0x8864 },
	};
	unsigned long v;
	unsigned h = 5381;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i].n))
			return names[i].v;
	if (!tc_num(s, 0xffff, &v))
		return (unsigned)v;
	for (; *s; s++)
		h = h * 33 + (unsigned char)(*s | 0x20);
	return 0x10000u | (h & 0xffffu);
}

/* An ethertype as tc prints or takes it (ll_proto_n2a(): a name of
 * iproute2's table, or "[N]" in decimal for others), in words the rule
 * parser reads: names it does not know become 0xNNNN.  s itself, or buf. */
static const char *tc_ethtype(const char *s, char *buf, size_t len)
{
	static const struct { const char *n; unsigned v; } names[] = {
		{ "x25", 0x0805 }, { "bpq", 0x08ff }, { "ieeepup", 0x0a00 },
		{ "ieeepupat", 0x0a01 }, { "dec", 0x6000 }, { "dna_dl", 0x6001 },
		{ "dna_rc", 0x6002 }, { "dna_rt", 0x6003 }, { "lat", 0x6004 },
		{ "diag", 0x6005 }, { "cust", 0x6006 }, { "sca", 0x6007 },
		{ "teb", 0x6558 }, { "atalk", 0x809b }, { "aarp", 0x80f3 },
		{ "ipx", 0x8137 }, { "atmmpoa", 0x884c }, { "atmfate", 0x8884 },
		{ "aoe", 0x88a2 }, { "ethercat", 0x88a4 }, { "tipc", 0x88ca },
		{ "profinet", 0x8892 }, { "loop", 0x0060 }, { "pup", 0x0200 },
		{ "pupat", 0x0201 }, { "lldp", 0x88cc },
	};
	unsigned long v;
	size_t i, n = strlen(s);

	if (n > 2 && s[0] == '[' && s[n - 1] == ']') {
		char num[16];

		snprintf(num, sizeof(num), "%.*s", (int)(n - 2), s + 1);
		if (!tc_num(num, 0xffff, &v) && num[0] != '0') {
			snprintf(buf, len, "0x%04lx", v);
			return buf;
		}
		return s;
	}
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i].n)) {
			snprintf(buf, len, "0x%04x", names[i].v);
			return buf;
		}
	return s;
}

/* --- blocks and devices -------------------------------------------------- */

static struct iblock *block_new(struct imp *im, const char *name, const char *dev,
				unsigned index, const char *where)
{
	struct iblock *nb, *b;
	size_t i;

	for (i = 0; i < im->nb; i++)
		if (!strcmp(im->b[i].name, name)) {
			refuse(im, where, EEXIST, "block name %s is taken (by %s%s%s)",
			       name, im->b[i].dev[0] ? "dev " : "block ",
			       im->b[i].dev[0] ? im->b[i].dev : "",
			       im->b[i].dev[0] ? "" : name + strlen("block_"));
			return NULL;
		}
	nb = realloc(im->b, (im->nb + 1) * sizeof(*nb));
	if (!nb) {
		im->oom = 1;
		return NULL;
	}
	im->b = nb;
	b = &im->b[im->nb++];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->dev, sizeof(b->dev), "%s", dev ? dev : "");
	b->index = index;
	return b;
}

/* A device's name as a block name: the characters a block name cannot
 * have ('.', '@', ...) become '_'. */
static void dev_block_name(const char *dev, char *out, size_t n)
{
	size_t i;

	snprintf(out, n, "%s", dev);
	for (i = 0; out[i]; i++) {
		char c = out[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || (c == '-' && i)))
			out[i] = '_';
	}
}

static struct iblock *shared_block(struct imp *im, unsigned index, const char *where)
{
	char name[XTCAM_NAME_MAX];
	size_t i;

	for (i = 0; i < im->nb; i++)
		if (!im->b[i].dev[0] && im->b[i].index == index)
			return &im->b[i];
	snprintf(name, sizeof(name), "block_%u", index);
	return block_new(im, name, NULL, index, where);
}

static struct idev *dev_find(struct imp *im, const char *dev)
{
	size_t i;

	for (i = 0; i < im->nd; i++)
		if (!strcmp(im->d[i].dev, dev))
			return &im->d[i];
	return NULL;
}

static struct idev *dev_add(struct imp *im, const char *dev, size_t block, unsigned line)
{
	struct idev *nd = realloc(im->d, (im->nd + 1) * sizeof(*nd));

	if (!nd) {
		im->oom = 1;
		return NULL;
	}
	im->d = nd;
	nd = &im->d[im->nd++];
	snprintf(nd->dev, sizeof(nd->dev), "%s", dev);
	nd->block = block;
	nd->line = line;
	return nd;
}

/* The block of dev's clsact ingress: the one its qdisc line gave it, or,
 * for a device no qdisc line named, its own (as if `tc qdisc add dev D
 * clsact` had come first). */
static struct iblock *dev_block(struct imp *im, const char *dev, const char *where)
{
	struct idev *d = dev_find(im, dev);
	struct iblock *b;
	char name[XTCAM_NAME_MAX];

	if (d)
		return &im->b[d->block];
	dev_block_name(dev, name, sizeof(name));
	b = block_new(im, name, dev, 0, where);
	if (!b)
		return NULL;
	if (!dev_add(im, dev, (size_t)(b - im->b), 0))
		return NULL;
	return b;
}

static bool ifname_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= XTCAM_IFNAME_MAX || s[0] == '#')
		return false;
	for (i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == ':' || (unsigned char)s[i] <= ' ' ||
		    s[i] == 0x7f)
			return false;
	return true;
}

/* --- qdisc lines ---------------------------------------------------------- */

/* qdisc add dev D [handle H] [ingress_block N] [egress_block N] clsact|ingress */
static int qdisc_line(struct imp *im, const char *where, unsigned line, int argc,
		      char **argv)
{
	const char *dev = NULL, *kind = NULL;
	unsigned long index = 0, v;
	struct iblock *b;
	struct idev *d;
	int i;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "dev") || !strcmp(w, "handle") ||
		    !strcmp(w, "ingress_block") || !strcmp(w, "egress_block") ||
		    !strcmp(w, "parent")) {
			if (i + 1 >= argc)
				return refuse(im, where, EINVAL, "qdisc: %s: missing value", w);
			if (!strcmp(w, "dev"))
				dev = argv[i + 1];
			else if (!strcmp(w, "ingress_block")) {
				if (tc_num(argv[i + 1], UINT32_MAX, &index) || !index)
					return refuse(im, where, EINVAL, "qdisc: ingress_block "
						      "\"%s\" is not a block index (1-4294967295)",
						      argv[i + 1]);
			} else if (!strcmp(w, "egress_block")) {
				if (tc_num(argv[i + 1], UINT32_MAX, &v) || !v)
					return refuse(im, where, EINVAL, "qdisc: egress_block "
						      "\"%s\" is not a block index", argv[i + 1]);
			} else if (!strcmp(w, "parent")) {
				return refuse(im, where, EOPNOTSUPP, "qdisc parent %s: xtcam "
					      "imports only the clsact and ingress qdiscs",
					      argv[i + 1]);
			}
			i++;
		} else if (!strcmp(w, "clsact") || !strcmp(w, "ingress")) {
			if (kind)
				return refuse(im, where, EINVAL, "qdisc: %s after %s", w, kind);
			kind = w;
		} else if (!strcmp(w, "root")) {
			return refuse(im, where, EOPNOTSUPP, "qdisc root: xtcam has no "
				      "qdiscs; it imports the ingress filters of clsact and "
				      "ingress qdiscs");
		} else {
			return refuse(im, where, EOPNOTSUPP, "qdisc %s: xtcam imports only "
				      "the clsact and ingress qdiscs (it has no others)", w);
		}
	}
	if (!dev)
		return refuse(im, where, EINVAL, "qdisc: needs dev DEV");
	if (!ifname_ok(dev))
		return refuse(im, where, EINVAL, "qdisc: \"%s\" is not an interface name", dev);
	if (!kind)
		return refuse(im, where, EINVAL, "qdisc dev %s: needs clsact or ingress", dev);
	d = dev_find(im, dev);
	if (d && d->line)
		return refuse(im, where, EEXIST, "qdisc dev %s: the device has an ingress "
			      "qdisc already (line %u)", dev, d->line);
	if (d) {
		/* filters came first (a device configured before the script) */
		if (index && (im->b[d->block].dev[0] ? 1 : im->b[d->block].index != index))
			return refuse(im, where, EINVAL, "qdisc dev %s ingress_block %lu: "
				      "filters on the device came first, in block %s",
				      dev, index, im->b[d->block].name);
		d->line = line;
		return 0;
	}
	b = index ? shared_block(im, (unsigned)index, where) : dev_block(im, dev, where);
	if (!b)
		return im->oom ? -ENOMEM : -EEXIST;
	d = dev_find(im, dev);
	if (!d && !dev_add(im, dev, (size_t)(b - im->b), line))
		return -ENOMEM;
	d = dev_find(im, dev);
	d->line = line;
	return 0;
}

/* --- filter lines --------------------------------------------------------- */

static enum pform port_form(int argc, char **argv, const char *kw)
{
	int i;

	for (i = 0; i + 1 < argc; i++)
		if (!strcmp(argv[i], kw)) {
			if (strchr(argv[i + 1], '-'))
				return PF_RANGE;
			if (strchr(argv[i + 1], '/'))
				return PF_MASKED;
			return PF_EXACT;
		}
	return PF_NONE;
}

static bool same_mask(const struct irule *a, const struct irule *b)
{
	if (memcmp(&a->r.mask, &b->r.mask, sizeof(a->r.mask)) || a->sp != b->sp ||
	    a->dp != b->dp)
		return false;
	/* PORT/MASK: the mask is the size of the range */
	if (a->sp == PF_MASKED && a->r.sport_hi - a->r.sport_lo !=
	    b->r.sport_hi - b->r.sport_lo)
		return false;
	if (a->dp == PF_MASKED && a->r.dport_hi - a->r.dport_lo !=
	    b->r.dport_hi - b->r.dport_lo)
		return false;
	return true;
}

static bool same_ports(const struct irule *a, const struct irule *b)
{
	return a->r.sport_lo == b->r.sport_lo && a->r.sport_hi == b->r.sport_hi &&
	       a->r.dport_lo == b->r.dport_lo && a->r.dport_hi == b->r.dport_hi;
}

/*
 * The words of one filter: pref P (0: tc's automatic one), handle H (0:
 * flower's), protocol, the words from `flower` on.  where names the line.
 */
static int add_filter(struct imp *im, struct iblock *b, const char *where, unsigned line,
		      unsigned long pref, unsigned long handle, const char *proto,
		      int argc, char **argv)
{
	struct xtcam_block_spec spec;
	char err[XTCAM_ERR_MAX];
	struct irule ir, *nr;
	unsigned tcf = 0;
	char **w, eb[3][8];
	int n = 0, i, rc;
	bool act = false;
	size_t k;

	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], "action"))
			act = true;
	w = calloc((size_t)argc + 6, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w[n++] = (char *)"protocol";
	w[n++] = (char *)tc_ethtype(proto, eb[0], sizeof(eb[0]));
	w[n++] = (char *)"flower";
	for (i = 0; i < argc; i++) {
		bool vt = i && (!strcmp(argv[i - 1], "vlan_ethtype") ||
				!strcmp(argv[i - 1], "cvlan_ethtype"));

		w[n++] = vt ? (char *)tc_ethtype(argv[i], eb[argv[i - 1][0] == 'c' ? 2 : 1],
						 sizeof(eb[0])) : argv[i];
	}
	/* a flower filter without an action ends classification with
	 * TC_ACT_OK: the frame goes on to the stack */
	if (!act) {
		w[n++] = (char *)"action";
		w[n++] = (char *)"pass";
	}
	xtcam_block_spec_init(&spec);
	memset(&ir, 0, sizeof(ir));
	rc = xtcam_rule_parse_tc(n, w, &ir.r, &spec, 0, &tcf, err, sizeof(err));
	free(w);
	if (rc)
		return refuse(im, where, -rc, "%s", err);
	if (ir.r.prio || ir.r.handle)
		return refuse(im, where, EINVAL, "%s after flower: tc takes pref and "
			      "handle before the filter kind", ir.r.prio ? "pref" : "handle");
	if ((tcf & XTCAM_TC_SKIP_HW) && b->skip_sw_line)
		return refuse(im, where, EOPNOTSUPP, "skip_hw: block %s has a skip_sw "
			      "rule (line %u), and xtcam runs a block's rules in one place "
			      "(on the NIC, mode hw, or not)", b->name, b->skip_sw_line);
	if ((tcf & XTCAM_TC_SKIP_SW) && b->skip_hw_line)
		return refuse(im, where, EOPNOTSUPP, "skip_sw: block %s has a skip_hw "
			      "rule (line %u), and xtcam runs a block's rules in one place "
			      "(on the NIC, mode hw, or not)", b->name, b->skip_hw_line);
	if ((tcf & XTCAM_TC_SKIP_SW) && !b->dev[0]) {
		for (k = 0; k < im->nd; k++)
			if (im->d[k].block == (size_t)(b - im->b))
				break;
		if (k == im->nd)
			return refuse(im, where, EOPNOTSUPP, "skip_sw: block %s is bound "
				      "to no device here, so it will not be offloaded", b->name);
	}
	ir.proto = proto_key(proto);
	ir.sp = port_form(argc, argv, "src_port");
	ir.dp = port_form(argc, argv, "dst_port");
	ir.line = line;

	if (!pref) {
		pref = xtcam_tc_auto_prio(b->lowest);
		if (!pref)
			return refuse(im, where, ERANGE, "pref: no automatic priority "
				      "is left below pref 1 in block %s", b->name);
	}
	ir.pref = (unsigned)pref;
	/* the flower instance at this pref */
	for (k = 0; k < b->n; k++) {
		struct irule *o = &b->rules[k];

		if (o->pref != ir.pref)
			continue;
		if (o->proto != ir.proto)
			return refuse(im, where, EINVAL, "pref %u: in use in block %s with "
				      "another protocol (line %u); tc refuses a second "
				      "protocol at one pref", ir.pref, b->name, o->line);
		if (handle && o->handle == handle)
			return refuse(im, where, EEXIST, "handle 0x%lx: in use at pref %u "
				      "in block %s (line %u)", handle, ir.pref, b->name,
				      o->line);
	}
	if (!handle) {
		/* flower: the lowest free handle from 1 (idr_alloc_u32) */
		for (handle = 1;; handle++) {
			for (k = 0; k < b->n; k++)
				if (b->rules[k].pref == ir.pref && b->rules[k].handle == handle)
					break;
			if (k == b->n)
				break;
		}
	}
	ir.handle = (unsigned)handle;
	ir.seq = ++im->seq;
	ir.mask_seq = ir.range_seq = ir.seq;
	for (k = 0; k < b->n; k++) {
		struct irule *o = &b->rules[k];

		if (o->pref != ir.pref || !same_mask(o, &ir))
			continue;
		if (ir.mask_seq == ir.seq)
			ir.mask_seq = o->mask_seq;
		if (same_ports(o, &ir) && ir.range_seq == ir.seq)
			ir.range_seq = o->range_seq;
		if (same_ports(o, &ir) &&
		    !memcmp(&o->r.value, &ir.r.value, sizeof(ir.r.value)))
			return refuse(im, where, EEXIST, "the same match as line %u at "
				      "pref %u in block %s: flower refuses a second filter "
				      "with the same key", o->line, ir.pref, b->name);
	}
	if (!(ir.sp == PF_RANGE || ir.dp == PF_RANGE))
		ir.range_seq = ir.seq;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;

		nr = realloc(b->rules, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		b->rules = nr;
		b->cap = cap;
	}
	b->rules[b->n++] = ir;
	if (!b->lowest || ir.pref < b->lowest)
		b->lowest = ir.pref;
	if (tcf & XTCAM_TC_SKIP_HW)
		b->skip_hw_line = line;
	if (tcf & XTCAM_TC_SKIP_SW)
		b->skip_sw_line = line;
	return 0;
}

/* filter add dev D|block N ingress [pref P] [handle H] [protocol P]
 * [chain 0] flower ... */
static int filter_line(struct imp *im, const char *where, unsigned line, int argc,
		       char **argv)
{
	const char *dev = NULL, *proto = NULL, *parent = NULL, *hs = NULL;
	unsigned long block = 0, pref = 0, handle = 0, v;
	struct iblock *b;
	int i;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "flower"))
			break;
		if (!strcmp(w, "ingress")) {
			if (parent)
				return refuse(im, where, EINVAL, "filter: ingress after %s",
					      parent);
			parent = w;
			continue;
		}
		if (!strcmp(w, "egress") || !strcmp(w, "root"))
			return refuse(im, where, EOPNOTSUPP, "filter %s: xtcam imports "
				      "ingress filters only", w);
		if (!strcmp(w, "estimator"))
			return refuse(im, where, EOPNOTSUPP, "filter estimator: xtcam has "
				      "no rate estimators");
		if (strcmp(w, "dev") && strcmp(w, "block") && strcmp(w, "parent") &&
		    strcmp(w, "handle") && strcmp(w, "pref") && strcmp(w, "prio") &&
		    strcmp(w, "preference") && strcmp(w, "priority") &&
		    strcmp(w, "protocol") && strcmp(w, "proto") && strcmp(w, "chain"))
			return refuse(im, where, EOPNOTSUPP, "filter kind \"%s\": xtcam "
				      "imports flower filters only", w);
		if (i + 1 >= argc)
			return refuse(im, where, EINVAL, "filter: %s: missing value", w);
		v = 0;
		if (!strcmp(w, "dev")) {
			if (dev || block)
				return refuse(im, where, EINVAL, "filter: dev given twice, or "
					      "with block");
			dev = argv[i + 1];
			if (!ifname_ok(dev))
				return refuse(im, where, EINVAL, "filter: \"%s\" is not an "
					      "interface name", dev);
		} else if (!strcmp(w, "block")) {
			if (dev || block)
				return refuse(im, where, EINVAL, "filter: block given twice, "
					      "or with dev");
			if (tc_num(argv[i + 1], UINT32_MAX, &block) || !block)
				return refuse(im, where, EINVAL, "filter: block \"%s\" is not "
					      "a block index (1-4294967295)", argv[i + 1]);
		} else if (!strcmp(w, "parent")) {
			const char *p = argv[i + 1];

			if (parent)
				return refuse(im, where, EINVAL, "filter: parent after %s",
					      parent);
			if (strcasecmp(p, "ffff:") && strcasecmp(p, "ffff:0") &&
			    strcasecmp(p, "ffff:fff2"))
				return refuse(im, where, EOPNOTSUPP, "filter parent %s: xtcam "
					      "imports ingress filters only (ingress, parent "
					      "ffff:)", p);
			parent = "parent";
		} else if (!strcmp(w, "handle")) {
			int e = tc_num(argv[i + 1], UINT32_MAX, &handle);

			if (hs)
				return refuse(im, where, EINVAL, "filter: handle given twice");
			if (e)
				return refuse(im, where, e == -ERANGE ? ERANGE : EINVAL,
					      "filter: handle \"%s\" is not a handle "
					      "(0x1-0xffffffff, as tc reads it)", argv[i + 1]);
			hs = argv[i + 1];
		} else if (!strcmp(w, "protocol") || !strcmp(w, "proto")) {
			if (proto)
				return refuse(im, where, EINVAL, "filter: protocol given twice");
			proto = argv[i + 1];
		} else if (!strcmp(w, "chain")) {
			if (tc_num(argv[i + 1], UINT32_MAX, &v))
				return refuse(im, where, EINVAL, "filter: chain \"%s\" is not a "
					      "number", argv[i + 1]);
			if (v)
				return refuse(im, where, EOPNOTSUPP, "filter chain %lu: xtcam has "
					      "no filter chains (only chain 0 is imported)", v);
		} else {
			int e = tc_num(argv[i + 1], 0xffff, &v);

			if (pref)
				return refuse(im, where, EINVAL, "filter: %s given twice", w);
			if (e)
				return refuse(im, where, e == -ERANGE ? ERANGE : EINVAL,
					      "filter: %s \"%s\" is not a priority (1-65535, "
					      "as tc reads it)", w, argv[i + 1]);
			pref = v;
		}
		i++;
	}
	if (i >= argc)
		return refuse(im, where, EINVAL, "filter: no filter kind (flower)");
	if (!dev && !block)
		return refuse(im, where, EINVAL, "filter: needs dev DEV or block N");
	if (dev && !parent)
		return refuse(im, where, EOPNOTSUPP, "filter dev %s: neither ingress nor "
			      "parent ffff: (tc adds it to the root qdisc, which xtcam does "
			      "not import)", dev);
	b = dev ? dev_block(im, dev, where) : shared_block(im, (unsigned)block, where);
	if (!b)
		return im->oom ? -ENOMEM : -EEXIST;
	return add_filter(im, b, where, line, pref, handle, proto ? proto : "all",
			  argc - i - 1, argv + i + 1);
}

static int text_line(struct imp *im, unsigned line, const char *text)
{
	char where[32], **argv;
	int argc, rc, i = 0;

	snprintf(where, sizeof(where), "%u", line);
	rc = xtcam_split_words(text, &argc, &argv);
	if (rc)
		return rc;
	if (argc && !strcmp(argv[0], "tc"))
		i++;
	if (i >= argc) {
		rc = 0;
	} else if (!strcmp(argv[i], "qdisc") || !strcmp(argv[i], "filter")) {
		bool q = !strcmp(argv[i], "qdisc");

		if (i + 1 >= argc || strcmp(argv[i + 1], "add"))
			rc = refuse(im, where, EOPNOTSUPP, "%s %s: only tc %s add is "
				    "imported", argv[i], i + 1 < argc ? argv[i + 1] : "",
				    argv[i]);
		else if (q)
			rc = qdisc_line(im, where, line, argc - i - 2, argv + i + 2);
		else
			rc = filter_line(im, where, line, argc - i - 2, argv + i + 2);
	} else {
		rc = refuse(im, where, EOPNOTSUPP, "\"%s\": not a tc qdisc or filter "
			    "line", argv[i]);
	}
	free(argv);
	return rc == -ENOMEM ? rc : 0;
}

/* --- JSON (tc -j filter show) ------------------------------------------- */

struct words {
	char **v;
	int n, cap;
	int oom;
};

static void wadd(struct words *w, const char *s)
{
	char *d;

	if (w->oom)
		return;
	if (w->n + 1 >= w->cap) {
		int cap = w->cap ? w->cap * 2 : 32;
		char **nv = realloc(w->v, (size_t)cap * sizeof(*nv));

		if (!nv) {
			w->oom = 1;
			return;
		}
		w->v = nv;
		w->cap = cap;
	}
	d = strdup(s);
	if (!d) {
		w->oom = 1;
		return;
	}
	w->v[w->n++] = d;
	w->v[w->n] = NULL;
}

static void wfree(struct words *w)
{
	int i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
}

static json_object *jget(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* The words of keys.K (with keys.K_mask) as tc's text has them; 1 when
 * the member is not a match (a _mask, eth_type); -EOPNOTSUPP for a value
 * that is not a scalar xtcam can read back. */
static int json_key(struct words *w, json_object *keys, const char *k, json_object *v,
		    char *why, size_t whylen)
{
	char b[128], mk[64];
	json_object *m;
	size_t kl = strlen(k);
	const char *orig = k;

	if ((kl > 5 && !strcmp(k + kl - 5, "_mask")) || !strcmp(k, "eth_type"))
		return 1;
	if (!strcmp(k, "icmp_type"))
		k = "type";
	else if (!strcmp(k, "icmp_code"))
		k = "code";
	if (!strcmp(k, "ip_flags") && json_object_is_type(v, json_type_object)) {
		b[0] = '\0';
		json_object_object_foreach(v, fk, fv) {
			snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%s%s", b[0] ? "/" : "",
				 json_object_get_boolean(fv) ? "" : "no", fk);
		}
		wadd(w, k);
		wadd(w, b);
		return 0;
	}
	/* "mpls": [{"depth":1,"label":16,...},...] (flower's lse options) */
	if (!strcmp(k, "mpls") && json_object_is_type(v, json_type_array)) {
		static const char *const f[] = { "depth", "label", "tc", "bos", "ttl" };
		size_t i, j, n = json_object_array_length(v);

		wadd(w, k);
		for (i = 0; i < n; i++) {
			json_object *lse = json_object_array_get_idx(v, i), *x;

			if (!json_object_is_type(lse, json_type_object) || !jget(lse, "depth")) {
				snprintf(why, whylen, "keys.mpls: entry %zu is not an object with "
					 "a depth", i + 1);
				return -EINVAL;
			}
			wadd(w, "lse");
			for (j = 0; j < ARRAY_SIZE(f); j++)
				if ((x = jget(lse, f[j]))) {
					wadd(w, f[j]);
					wadd(w, json_object_get_string(x));
				}
		}
		return 0;
	}
	/* "cfm": {"mdl":M,"op":O} */
	if (!strcmp(k, "cfm") && json_object_is_type(v, json_type_object)) {
		json_object *x;

		wadd(w, k);
		if ((x = jget(v, "mdl"))) {
			wadd(w, "mdl");
			wadd(w, json_object_get_string(x));
		}
		if ((x = jget(v, "op"))) {
			wadd(w, "op");
			wadd(w, json_object_get_string(x));
		}
		return 0;
	}
	if ((!strcmp(k, "src_port") || !strcmp(k, "dst_port")) &&
	    json_object_is_type(v, json_type_object)) {
		snprintf(b, sizeof(b), "%d-%d", json_object_get_int(jget(v, "start")),
			 json_object_get_int(jget(v, "end")));
		wadd(w, k);
		wadd(w, b);
		return 0;
	}
	if (json_object_is_type(v, json_type_int))
		snprintf(b, sizeof(b), "%" PRId64, json_object_get_int64(v));
	else if (json_object_is_type(v, json_type_string))
		snprintf(b, sizeof(b), "%s", json_object_get_string(v));
	else {
		snprintf(why, whylen, "keys.%s: a %s, which xtcam does not import from "
			 "JSON", k, json_type_to_name(json_object_get_type(v)));
		return -EOPNOTSUPP;
	}
	snprintf(mk, sizeof(mk), "%s_mask", orig);
	m = jget(keys, mk);
	if (m)
		snprintf(b + strlen(b), sizeof(b) - strlen(b), "/0x%s", json_object_get_string(m));
	wadd(w, k);
	wadd(w, b);
	return 0;
}

/* actions: [ {"kind":"gact","control_action":{"type":"drop"},...} ] */
static int json_actions(struct words *w, json_object *acts, char *why, size_t whylen)
{
	json_object *a, *ca;
	const char *kind, *type;

	if (!acts)
		return 0;
	if (!json_object_is_type(acts, json_type_array) ||
	    json_object_array_length(acts) != 1) {
		snprintf(why, whylen, "actions: %zu actions; xtcam runs one action per rule",
			 json_object_is_type(acts, json_type_array) ?
			 json_object_array_length(acts) : 0);
		return -EOPNOTSUPP;
	}
	a = json_object_array_get_idx(acts, 0);
	kind = json_object_get_string(jget(a, "kind"));
	ca = jget(a, "control_action");
	type = ca ? json_object_get_string(jget(ca, "type")) : "";
	if (!kind)
		kind = "";
	if (!type)
		type = "";
	wadd(w, "action");
	if (!strcmp(kind, "gact")) {
		json_object *prob = jget(a, "prob");
		const char *rt = prob ? json_object_get_string(jget(prob, "random_type")) : NULL;

		if (rt && strcmp(rt, "none")) {
			snprintf(why, whylen, "action gact random %s: xtcam has no random "
				 "actions", rt);
			return -EOPNOTSUPP;
		}
		wadd(w, type);
		return 0;
	}
	if (!strcmp(kind, "mirred")) {
		const char *ma = json_object_get_string(jget(a, "mirred_action"));
		const char *dir = json_object_get_string(jget(a, "direction"));
		const char *dev = json_object_get_string(jget(a, "to_dev"));

		wadd(w, "mirred");
		wadd(w, dir ? dir : "");
		wadd(w, ma ? ma : "");
		wadd(w, "dev");
		wadd(w, dev ? dev : "");
		if (ma && !strcmp(ma, "redirect") && strcmp(type, "stolen"))
			wadd(w, type);
		return 0;
	}
	wadd(w, kind);
	return 0;
}

static int json_filter(struct imp *im, json_object *f, unsigned idx)
{
	json_object *opt = jget(f, "options"), *keys, *x;
	const char *dev = im->o->dev, *proto = "all";
	unsigned long block = im->o->block, pref = 0, handle = 0;
	char where[96], why[XTCAM_ERR_MAX];
	struct words w = { 0 };
	struct iblock *b;
	int rc = 0;

	if (!opt)
		return 0;       /* the pref's own line: no filter */
	if ((x = jget(f, "pref")))
		pref = (unsigned long)json_object_get_int64(x);
	if ((x = jget(opt, "handle")))
		handle = (unsigned long)json_object_get_int64(x);
	snprintf(where, sizeof(where), "filter %u (pref %lu handle 0x%lx)", idx, pref, handle);
	if ((x = jget(f, "dev")))
		dev = json_object_get_string(x);
	if ((x = jget(f, "block"))) {
		block = (unsigned long)json_object_get_int64(x);
		dev = NULL;
	}
	if ((x = jget(f, "kind")) && strcmp(json_object_get_string(x), "flower"))
		return refuse(im, where, EOPNOTSUPP, "filter kind \"%s\": xtcam imports "
			      "flower filters only", json_object_get_string(x));
	if (jget(f, "egress") || jget(f, "root") || jget(f, "parent"))
		return refuse(im, where, EOPNOTSUPP, "not an ingress filter: xtcam imports "
			      "ingress filters only");
	if ((x = jget(f, "chain")) && json_object_get_int64(x))
		return refuse(im, where, EOPNOTSUPP, "chain %" PRId64 ": xtcam has no filter "
			      "chains (only chain 0 is imported)", json_object_get_int64(x));
	if ((x = jget(f, "protocol")))
		proto = json_object_get_string(x);
	if (!dev && !block)
		return refuse(im, where, EINVAL, "the JSON names no device: give it "
			      "(xtcam import tc FILE dev DEV, or block N)");
	if (dev && !ifname_ok(dev))
		return refuse(im, where, EINVAL, "\"%s\" is not an interface name", dev);
	if ((x = jget(opt, "indev"))) {
		wadd(&w, "indev");
		wadd(&w, json_object_get_string(x));
	}
	if ((x = jget(opt, "classid"))) {
		wadd(&w, "classid");
		wadd(&w, json_object_get_string(x));
	}
	if ((x = jget(opt, "hw_tc"))) {
		wadd(&w, "hw_tc");
		wadd(&w, json_object_get_string(x));
	}
	keys = jget(opt, "keys");
	if (keys && json_object_is_type(keys, json_type_object)) {
		/* A PPPoE filter's ethertype after the tags, ppp_ses, is not
		 * what cls_flower shows: with ppp_proto ip, ipv6 or mpls it
		 * keeps (and shows) that protocol's ethertype there, with any
		 * other it keeps it elsewhere and shows none */
		bool ppp = jget(keys, "pppoe_sid") || jget(keys, "ppp_proto");
		const char *vet = json_object_get_string(jget(keys, "vlan_ethtype"));
		bool qinq = jget(keys, "cvlan_ethtype") || jget(keys, "cvlan_id") ||
			    jget(keys, "cvlan_prio") || (vet && (!strcasecmp(vet, "802.1Q") ||
								 !strcasecmp(vet, "802.1ad")));

		json_object_object_foreach(keys, k, v) {
			if (ppp && (!strcmp(k, "cvlan_ethtype") ||
				    (!qinq && !strcmp(k, "vlan_ethtype")))) {
				wadd(&w, k);
				wadd(&w, "ppp_ses");
				continue;
			}
			rc = json_key(&w, keys, k, v, why, sizeof(why));
			if (rc < 0) {
				wfree(&w);
				return refuse(im, where, -rc, "%s", why);
			}
		}
		if (ppp && qinq && !jget(keys, "cvlan_ethtype")) {
			wadd(&w, "cvlan_ethtype");
			wadd(&w, "ppp_ses");
		} else if (ppp && !qinq && !vet && (!strcasecmp(proto, "802.1Q") ||
						   !strcasecmp(proto, "802.1ad"))) {
			wadd(&w, "vlan_ethtype");
			wadd(&w, "ppp_ses");
		}
	}
	if ((x = jget(opt, "skip_hw")) && json_object_get_boolean(x))
		wadd(&w, "skip_hw");
	if ((x = jget(opt, "skip_sw")) && json_object_get_boolean(x))
		wadd(&w, "skip_sw");
	rc = json_actions(&w, jget(opt, "actions"), why, sizeof(why));
	if (rc < 0) {
		wfree(&w);
		return refuse(im, where, -rc, "%s", why);
	}
	if (w.oom) {
		wfree(&w);
		return -ENOMEM;
	}
	b = dev ? dev_block(im, dev, where) : shared_block(im, (unsigned)block, where);
	if (!b)
		rc = im->oom ? -ENOMEM : -EEXIST;
	else
		rc = add_filter(im, b, where, idx, pref, handle, proto, w.n, w.v);
	wfree(&w);
	return rc == -ENOMEM ? rc : 0;
}

static int json_input(struct imp *im, const char *in, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	size_t off = 0;
	unsigned idx = 0;
	int rc = 0;

	if (!tok)
		return -ENOMEM;
	while (!rc && off < len) {
		json_object *arr;
		size_t i, n;

		while (off < len && strchr(" \t\r\n", in[off]))
			off++;
		if (off >= len)
			break;
		arr = json_tokener_parse_ex(tok, in + off, (int)(len - off));
		if (!arr) {
			enum json_tokener_error je = json_tokener_get_error(tok);

			refuse(im, "JSON", EINVAL, "%s at byte %zu",
			       je == json_tokener_continue ? "cut short" :
			       json_tokener_error_desc(je),
			       off + (size_t)json_tokener_get_parse_end(tok));
			break;
		}
		off += json_tokener_get_parse_end(tok);
		json_tokener_reset(tok);
		if (!json_object_is_type(arr, json_type_array)) {
			refuse(im, "JSON", EINVAL, "not an array of filters (tc -j filter "
			       "show dev DEV ingress)");
			json_object_put(arr);
			break;
		}
		n = json_object_array_length(arr);
		for (i = 0; !rc && i < n; i++) {
			json_object *f = json_object_array_get_idx(arr, i);

			if (jget(f, "options"))
				idx++;
			rc = json_filter(im, f, idx);
			if (rc != -ENOMEM)
				rc = 0;
		}
		json_object_put(arr);
	}
	json_tokener_free(tok);
	return rc;
}

/* --- output ---------------------------------------------------------------- */

static int cmp_rule(const void *a, const void *b)
{
	const struct irule *x = a, *y = b;

	if (x->pref != y->pref)
		return x->pref < y->pref ? -1 : 1;
	if (x->mask_seq != y->mask_seq)
		return x->mask_seq < y->mask_seq ? -1 : 1;
	if (x->range_seq != y->range_seq)
		return x->range_seq < y->range_seq ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Order a block's rules as tc tries them and give them xtcam's prio and
 * handle.  Returns whether tc's handles were kept. */
static bool order_block(struct iblock *b)
{
	bool keep = true;
	size_t i, j;

	qsort(b->rules, b->n, sizeof(*b->rules), cmp_rule);
	for (i = 0; keep && i < b->n; i++) {
		if (i && b->rules[i - 1].pref == b->rules[i].pref &&
		    b->rules[i - 1].handle > b->rules[i].handle)
			keep = false;
		for (j = i + 1; keep && j < b->n; j++)
			if (b->rules[j].handle == b->rules[i].handle)
				keep = false;
	}
	for (i = 0; i < b->n; i++) {
		b->rules[i].r.prio = b->rules[i].pref;
		b->rules[i].r.handle = keep ? b->rules[i].handle : (unsigned)i + 1;
	}
	return keep;
}

static int emit(struct imp *im, FILE *out)
{
	char line[XTCAM_RULE_TEXT_MAX];
	size_t i, j;
	int n;

	fprintf(out, "%s%d, imported from tc (%s)\n", XTCAM_SAVE_FORMAT_LINE,
		XTCAM_SAVE_FORMAT, im->name);
	for (i = 0; i < im->nb; i++) {
		struct iblock *b = &im->b[i];
		struct xtcam_block_spec spec;

		xtcam_block_spec_init(&spec);
		snprintf(spec.name, sizeof(spec.name), "%s", b->name);
		n = xtcam_block_spec_format(&spec, line, sizeof(line));
		if (n < 0)
			return n;
		fprintf(out, "block add %s\n", line);
		if (b->n && !order_block(b))
			fprintf(im->msg, "%s: note: block %s: tc's handles repeat in the "
				"block or do not follow the order tc tries its filters in: "
				"its rules are numbered 1-%zu in that order\n", im->name,
				b->name, b->n);
		for (j = 0; j < b->n; j++) {
			n = xtcam_rule_format(&b->rules[j].r, &spec, line, sizeof(line));
			if (n < 0)
				return n;
			fprintf(out, "rule add %s %s\n", b->name, line);
		}
	}
	for (i = 0; i < im->nd; i++) {
		struct iblock *b = &im->b[im->d[i].block];

		fprintf(out, "bind %s dev %s%s%s mode %s\n", b->name, im->d[i].dev,
			im->o->netns ? " netns " : "", im->o->netns ? im->o->netns : "",
			b->skip_sw_line ? "hw" : b->skip_hw_line ? "native" : "auto");
	}
	return 0;
}

int xtcam_import_tc(const char *in, size_t len, const struct xtcam_import_opts *opts,
		    char **out, char **msgs)
{
	struct imp im;
	char *obuf = NULL;
	size_t olen = 0, i;
	FILE *o;
	int rc = 0;

	if (!in || !opts || !out || !msgs)
		return -EINVAL;
	*out = NULL;
	*msgs = NULL;
	memset(&im, 0, sizeof(im));
	im.o = opts;
	im.name = opts->name ? opts->name : "stdin";
	im.msg = open_memstream(&im.msgbuf, &im.msglen);
	if (!im.msg)
		return -ENOMEM;
	i = strspn(in, " \t\r\n");
	if (i < len && in[i] == '[') {
		rc = json_input(&im, in, len);
	} else {
		const char *p = in, *end = in + len;
		unsigned line = 0;

		while (!rc && p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
			char *s = strndup(p, l);
			unsigned first = ++line;
			bool nul = s && strlen(s) != l;

			p += l + 1;
			/* a line ending in a backslash goes on in the next one, as
			 * in tc -batch and the shell (not after a comment) */
			while (s && !nul && p < end && (l = strlen(s)) && s[l - 1] == '\\' &&
			       !strchr(s, '#')) {
				const char *nl2 = memchr(p, '\n', (size_t)(end - p));
				size_t l2 = nl2 ? (size_t)(nl2 - p) : (size_t)(end - p);
				char *t = realloc(s, l + l2 + 1);

				if (!t) {
					free(s);
					s = NULL;
					break;
				}
				s = t;
				memcpy(s + l - 1, p, l2);
				s[l - 1 + l2] = '\0';
				nul = strlen(s) != l - 1 + l2;
				line++;
				p += l2 + 1;
			}
			if (!s) {
				rc = -ENOMEM;
				break;
			}
			if (nul) {
				char where[16];

				snprintf(where, sizeof(where), "%u", first);
				refuse(&im, where, EINVAL, "a NUL byte in the line");
			} else
				rc = text_line(&im, first, s);
			free(s);
		}
	}
	if (!rc && im.oom)
		rc = -ENOMEM;
	if (!rc && (!im.bad || opts->force)) {
		o = open_memstream(&obuf, &olen);
		if (!o)
			rc = -ENOMEM;
		else {
			rc = emit(&im, o);
			if (fclose(o) && !rc)
				rc = -ENOMEM;
			if (rc) {
				free(obuf);
				obuf = NULL;
			}
		}
	}
	if (!rc && im.bad) {
		if (opts->force)
			fprintf(im.msg, "%s: %u line%s not imported (--force: the rest is)\n",
				im.name, im.bad, im.bad == 1 ? "" : "s");
		else {
			fprintf(im.msg, "%s: %u line%s cannot be imported: nothing printed "
				"(--force prints the rest, whose verdicts may then differ)\n",
				im.name, im.bad, im.bad == 1 ? "" : "s");
			rc = -(im.first_err ? im.first_err : EINVAL);
		}
	}
	fclose(im.msg);
	for (i = 0; i < im.nb; i++)
		free(im.b[i].rules);
	free(im.b);
	free(im.d);
	if (rc == -ENOMEM) {
		free(obuf);
		free(im.msgbuf);
		return rc;
	}
	*out = obuf;
	if (im.msglen)
		*msgs = im.msgbuf;
	else
		free(im.msgbuf);
	return rc;
}
