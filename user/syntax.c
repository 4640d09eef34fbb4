// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The rule language: text <-> struct xtcam_rule, block specs, JSON.
 * Grammar and semantics: docs/rule-syntax.md.
 *
 * Parsing walks the words once, each keyword handler writing its field into
 * a private copy of the rule; cross-keyword rules (prerequisites, address
 * family, VLAN consistency) are checked after the walk, so the order of the
 * words does not matter, and the caller's rule is written only on success.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <net/if.h>
#include <json-c/json.h>
#include "xtcam/syntax.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define ETHT_IPV4   0x0800
#define ETHT_ARP    0x0806
#define ETHT_8021Q  0x8100
#define ETHT_8021AD 0x88a8
#define ETHT_IPV6   0x86dd
#define ETHT_RARP   0x8035
#define ETHT_MPLS_UC 0x8847
#define ETHT_MPLS_MC 0x8848
#define ETHT_PPP_DISC 0x8863
#define ETHT_PPP_SES 0x8864
#define ETHT_CFM    0x8902

#define TCI_VID     0x0fff
#define TCI_PRIO    0xe000
#define TCI_PRIO_SHIFT 13
#define TCP_FLAGS_MAX 0x0fff

#define PROTO_ICMP    1
#define PROTO_TCP     6
#define PROTO_UDP     17
#define PROTO_ESP     50
#define PROTO_AH      51
#define PROTO_ICMPV6  58
#define PROTO_L2TP    115
#define PROTO_SCTP    132
#define PROTO_UDPLITE 136

/* Pseudo keywords (not match keywords) share the "given" bit set. */
#define K_PRIO   XTCAM_KW_MAX
#define K_HANDLE (XTCAM_KW_MAX + 1)
#define K_ACTION (XTCAM_KW_MAX + 2)
#define K_NUM    (XTCAM_KW_MAX + 3)

_Static_assert(K_NUM <= 64, "keyword bits must fit in 64 bits");

/* --- characters (ASCII only, whatever the locale) ------------------------- */

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_xdigit(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static bool is_alnum(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}
static int xval(int c)
{
	if (is_digit(c))
		return c - '0';
	return (c | 0x20) - 'a' + 10;
}

/* --- error messages ------------------------------------------------------- */

#define QBUF 96

struct ectx {
	char *err;
	size_t errlen;
	unsigned nq;
	char q[4][QBUF];
};

static void ectx_init(struct ectx *e, char *err, size_t errlen)
{
	e->err = err && errlen ? err : NULL;
	e->errlen = e->err ? errlen : 0;
	e->nq = 0;
	if (e->err)
		e->err[0] = '\0';
}

/* s in double quotes for a message; bytes that are not printable ASCII (and
 * the quote and backslash) as \xNN; long strings cut with "...". */
static const char *quote(struct ectx *e, const char *s)
{
	char *b = e->q[e->nq++ % ARRAY_SIZE(e->q)];
	size_t o = 0;

	b[o++] = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (o + 8 >= QBUF) {
			memcpy(b + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(b + o, QBUF - o, "\\x%02x", c);
		else
			b[o++] = (char)c;
	}
	b[o++] = '"';
	b[o] = '\0';
	return b;
}

static int fail(struct ectx *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ectx *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e->err) {
		va_start(ap, fmt);
		vsnprintf(e->err, e->errlen, fmt, ap);
		va_end(ap);
	}
	return -code;
}

/* --- numbers -------------------------------------------------------------- */

/*
 * How a keyword reads its numbers (tc-flower's reading, see
 * docs/rule-syntax.md):
 *   NB_AUTO     decimal without a leading zero (so "010" is neither 8 nor
 *               silently 10), or 0x followed by hex digits;
 *   NB_DEC      decimal only (prefix lengths);
 *   NB_HEX      hex digits, with or without 0x (tc's ip_proto, tcp_flags,
 *               ip_tos/ip_ttl masks): "11" is 0x11;
 *   NB_DEC_HEX  decimal when every character is a decimal digit (no leading
 *               zero), else hex as NB_HEX (tc's ip_tos/ip_ttl values):
 *               "16" is 16, "b8" and "0x10" are hex.
 * Under XTCAM_PARSE_DECIMAL every keyword reads NB_AUTO.
 */
enum nbase { NB_AUTO, NB_DEC, NB_HEX, NB_DEC_HEX };

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!is_digit(*s))
			return false;
	return true;
}

/*
 * Strict unsigned numbers in base nb.  No sign, no white space, no suffix.
 * Returns 0, -EINVAL (not a number), -EDOM (decimal with a leading zero) or
 * -ERANGE (above max).
 */
static int num_parse(const char *s, uint64_t max, enum nbase nb, uint64_t *out)
{
	const char *p = s, *q;
	unsigned long long v;
	int base = 10;
	char *end;

	if (nb == NB_DEC_HEX)
		nb = all_digits(s) ? NB_AUTO : NB_HEX;
	if (nb != NB_DEC && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (nb == NB_HEX) {
		base = 16;
	}
	if (!*p)
		return -EINVAL;
	for (q = p; *q; q++)
		if (base == 16 ? !is_xdigit(*q) : !is_digit(*q))
			return -EINVAL;
	if (base == 10 && p[0] == '0' && p[1])
		return -EDOM;
	errno = 0;
	v = strtoull(p, &end, base);
	if (errno == ERANGE || v > max)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static const char *range_txt(char *b, size_t n, uint64_t min, uint64_t max,
			     bool hex)
{
	if (hex)
		snprintf(b, n, "%#llx-%#llx", (unsigned long long)min,
			 (unsigned long long)max);
	else
		snprintf(b, n, "%llu-%llu", (unsigned long long)min,
			 (unsigned long long)max);
	if (min == 0)  /* "%#x" prints 0 without the 0x */
		b[0] = '0';
	return b;
}

/* How a number of base nb is written, for messages. */
static const char *nb_txt(enum nbase nb)
{
	switch (nb) {
	case NB_HEX:
		return "hex, ";
	case NB_DEC_HEX:
		return "decimal, else hex, ";
	case NB_AUTO:
	case NB_DEC:
		break;
	}
	return "";
}

/* Report a bad number: `kw: "s" is not WHAT (BASE MIN-MAX)`. */
static int num_fail(struct ectx *e, int rc, const char *kw, const char *s,
		    uint64_t min, uint64_t max, enum nbase nb, bool hex,
		    const char *what)
{
	char rb[48];

	if (rc == -EDOM)
		return fail(e, EINVAL, "%s: %s has a leading zero (write decimal "
			    "numbers without one, hex ones as 0x...)", kw,
			    quote(e, s));
	return fail(e, rc == -ERANGE ? ERANGE : EINVAL, "%s: %s is not %s (%s%s)",
		    kw, quote(e, s), what, nb_txt(nb),
		    range_txt(rb, sizeof(rb), min, max, hex || nb == NB_HEX));
}

static int get_num(struct ectx *e, const char *kw, const char *s,
		   uint64_t min, uint64_t max, enum nbase nb, bool hex,
		   const char *what, uint64_t *out)
{
	uint64_t v = 0;
	int rc = num_parse(s, max, nb, &v);

	if (!rc && v < min)
		rc = -ERANGE;
	*out = rc ? 0 : v;
	if (rc)
		return num_fail(e, rc, kw, s, min, max, nb, hex, what);
	return 0;
}

/* VALUE[/MASK] within 0..max, the value read in base vb, the mask in mb;
 * the value is masked (bits outside the mask are cleared).  Default mask:
 * max. */
static int get_masked(struct ectx *e, const char *kw, const char *s,
		      uint64_t max, enum nbase vb, enum nbase mb, bool hex,
		      const char *what, uint64_t *val, uint64_t *mask)
{
	const char *sl = strchr(s, '/');
	uint64_t v, m = max;
	char buf[48], rb[48];
	int rc;

	if (!sl) {
		rc = get_num(e, kw, s, 0, max, vb, hex, what, &v);
		if (rc)
			return rc;
		*val = v;
		*mask = max;
		return 0;
	}
	if ((size_t)(sl - s) >= sizeof(buf))
		return num_fail(e, -EINVAL, kw, s, 0, max, vb, hex, what);
	memcpy(buf, s, (size_t)(sl - s));
	buf[sl - s] = '\0';
	rc = get_num(e, kw, buf, 0, max, vb, hex, what, &v);
	if (rc)
		return rc;
	rc = num_parse(sl + 1, max, mb, &m);
	if (rc == -ERANGE)
		return fail(e, ERANGE, "%s: mask %s is out of range (%s)", kw,
			    quote(e, sl + 1), range_txt(rb, sizeof(rb), 0, max, true));
	if (rc == -EDOM)
		return num_fail(e, rc, kw, sl + 1, 0, max, mb, true, "");
	if (rc)
		return fail(e, EINVAL, "%s: mask %s is not a number (%s, at "
			    "most %#llx)", kw, quote(e, sl + 1),
			    mb == NB_HEX ? "hex" : "0x... or decimal",
			    (unsigned long long)max);
	*val = v & m;
	*mask = m;
	return 0;
}

/* --- names ---------------------------------------------------------------- */

struct name16 {
	const char *name;
	uint16_t v;
};

/* The first name of a value is the one the printer uses. */
static const struct name16 ethtypes[] = {
	{ "ipv4",    ETHT_IPV4 },
	{ "ip",      ETHT_IPV4 },
	{ "ipv6",    ETHT_IPV6 },
	{ "arp",     ETHT_ARP },
	{ "rarp",    ETHT_RARP },
	{ "802.1Q",  ETHT_8021Q },
	{ "802.1ad", ETHT_8021AD },
	{ "mpls_uc", ETHT_MPLS_UC },
	{ "mpls_mc", ETHT_MPLS_MC },
	{ "ppp_disc", ETHT_PPP_DISC },
	{ "ppp_ses", ETHT_PPP_SES },
	{ "cfm",     ETHT_CFM },
};

static const struct name16 ipprotos[] = {
	{ "tcp",     PROTO_TCP },
	{ "udp",     PROTO_UDP },
	{ "sctp",    PROTO_SCTP },
	{ "udplite", PROTO_UDPLITE },
	{ "icmp",    PROTO_ICMP },
	{ "icmpv6",  PROTO_ICMPV6 },
	{ "esp",     PROTO_ESP },
	{ "ah",      PROTO_AH },
	{ "l2tp",    PROTO_L2TP },
};

static const char *const kw_names[XTCAM_KW_MAX] = {
	[XTCAM_KW_SRC_MAC]       = "src_mac",
	[XTCAM_KW_DST_MAC]       = "dst_mac",
	[XTCAM_KW_VLAN]          = "vlan",
	[XTCAM_KW_VLAN_ID]       = "vlan_id",
	[XTCAM_KW_VLAN_PRIO]     = "vlan_prio",
	[XTCAM_KW_VLAN_ETHTYPE]  = "vlan_ethtype",
	[XTCAM_KW_CVLAN_ID]      = "cvlan_id",
	[XTCAM_KW_CVLAN_PRIO]    = "cvlan_prio",
	[XTCAM_KW_CVLAN_ETHTYPE] = "cvlan_ethtype",
	[XTCAM_KW_ETH_TYPE]      = "eth_type",
	[XTCAM_KW_IP_PROTO]      = "ip_proto",
	[XTCAM_KW_SRC_IP]        = "src_ip",
	[XTCAM_KW_DST_IP]        = "dst_ip",
	[XTCAM_KW_IP_TOS]        = "ip_tos",
	[XTCAM_KW_IP_TTL]        = "ip_ttl",
	[XTCAM_KW_IP_FLAGS]      = "ip_flags",
	[XTCAM_KW_SRC_PORT]      = "src_port",
	[XTCAM_KW_DST_PORT]      = "dst_port",
	[XTCAM_KW_TCP_FLAGS]     = "tcp_flags",
	[XTCAM_KW_TYPE]          = "type",
	[XTCAM_KW_CODE]          = "code",
	[XTCAM_KW_RAW1]          = "raw1",
	[XTCAM_KW_RAW2]          = "raw2",
	[XTCAM_KW_PROTOCOL]      = "protocol",
	[XTCAM_KW_NUM_VLANS]     = "num_of_vlans",
	[XTCAM_KW_ARP_OP]        = "arp_op",
	[XTCAM_KW_ARP_SIP]       = "arp_sip",
	[XTCAM_KW_ARP_TIP]       = "arp_tip",
	[XTCAM_KW_ARP_SHA]       = "arp_sha",
	[XTCAM_KW_ARP_THA]       = "arp_tha",
	[XTCAM_KW_MPLS_LABEL]    = "mpls_label",
	[XTCAM_KW_MPLS_TC]       = "mpls_tc",
	[XTCAM_KW_MPLS_BOS]      = "mpls_bos",
	[XTCAM_KW_MPLS_TTL]      = "mpls_ttl",
	[XTCAM_KW_MPLS]          = "mpls",
	[XTCAM_KW_PPPOE_SID]     = "pppoe_sid",
	[XTCAM_KW_PPP_PROTO]     = "ppp_proto",
	[XTCAM_KW_L2TPV3_SID]    = "l2tpv3_sid",
	[XTCAM_KW_SPI]           = "spi",
	[XTCAM_KW_CFM]           = "cfm",
	[XTCAM_KW_INDEV]         = "indev",
};

const char *xtcam_kw_name(enum xtcam_kw kw)
{
	if ((unsigned)kw >= XTCAM_KW_MAX)
		return NULL;
	return kw_names[kw];
}

static const char *const act_names[XTCAM_ACT_MAX] = {
	[XTCAM_ACT_NONE]     = "none",
	[XTCAM_ACT_DROP]     = "drop",
	[XTCAM_ACT_PASS]     = "pass",
	[XTCAM_ACT_TX]       = "tx",
	[XTCAM_ACT_REDIRECT] = "redirect",
	[XTCAM_ACT_CPU]      = "cpu",
};

const char *xtcam_action_name(__u32 type)
{
	if (type >= XTCAM_ACT_MAX)
		return "unknown";
	return act_names[type];
}

static const char *const raw_layers[] = {
	[XTCAM_RAW_NONE] = "none",
	[XTCAM_RAW_L2]   = "l2",
	[XTCAM_RAW_L3]   = "l3",
	[XTCAM_RAW_L4]   = "l4",
};

static bool is_tpid(uint16_t v)
{
	return v == ETHT_8021Q || v == ETHT_8021AD;
}

static bool is_ip_ethtype(uint16_t v)
{
	return v == ETHT_IPV4 || v == ETHT_IPV6;
}

/* Ethertype: a name (case-insensitive) or a number 0-0xffff, decimal or
 * 0x hex like every other number here (so "2048" is 0x0800, as for
 * tc-flower, and "0800" is refused for its leading zero).  Returns 0,
 * -EINVAL, -EDOM (leading zero) or -ERANGE. */
static int ethtype_parse(const char *s, uint16_t *v)
{
	uint64_t n;
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(ethtypes); i++)
		if (!strcasecmp(s, ethtypes[i].name)) {
			*v = ethtypes[i].v;
			return 0;
		}
	rc = num_parse(s, 0xffff, NB_AUTO, &n);
	if (rc)
		return rc;
	*v = (uint16_t)n;
	return 0;
}

static const char *ethtype_str(uint16_t v, char *b, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ethtypes); i++)
		if (ethtypes[i].v == v)
			return ethtypes[i].name;
	snprintf(b, n, "0x%04x", v);
	return b;
}

static const char *ipproto_str(uint8_t v, char *b, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ipprotos); i++)
		if (ipprotos[i].v == v)
			return ipprotos[i].name;
	snprintf(b, n, "0x%02x", v);   /* as tc prints it: hex, for hex input */
	return b;
}

/* --- masks ---------------------------------------------------------------- */

static void prefix_mask(uint8_t *m, size_t n, unsigned len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned bits = len >= 8 ? 8 : len;

		m[i] = bits ? (uint8_t)(0xff << (8 - bits)) : 0;
		len -= bits;
	}
}

/* The prefix length of mask m, or -1 if it is not a prefix. */
static int prefix_len(const uint8_t *m, size_t n)
{
	size_t i = 0;
	int len = 0;

	while (i < n && m[i] == 0xff) {
		len += 8;
		i++;
	}
	if (i < n) {
		uint8_t b = m[i++];

		while (b & 0x80) {
			b = (uint8_t)(b << 1);
			len++;
		}
		if (b)
			return -1;
	}
	for (; i < n; i++)
		if (m[i])
			return -1;
	return len;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* Exactly six groups of one or two hex digits separated by ':'. */
static bool mac_aton(const char *s, uint8_t mac[6])
{
	int i;

	for (i = 0; i < 6; i++) {
		unsigned v = 0;
		int n = 0;

		while (n < 2 && is_xdigit(*s)) {
			v = v * 16 + (unsigned)xval(*s++);
			n++;
		}
		if (!n)
			return false;
		mac[i] = (uint8_t)v;
		if (i < 5 && *s++ != ':')
			return false;
	}
	return *s == '\0';
}

/* --- rule parser ---------------------------------------------------------- */

struct pstate {
	struct ectx e;
	struct xtcam_rule r;
	const struct xtcam_block_spec *blk;
	uint64_t given;              /* bits: enum xtcam_kw, K_PRIO.. */
	int pos[K_NUM];              /* argv index of each keyword */
	const char *spell[K_NUM];    /* as the user spelled it */
	int fam[2];                  /* src_ip, dst_ip: 0, 4 or 6 */
	bool eth_all;                /* eth_type all */
	bool proto_all;              /* protocol all */
	uint16_t proto;              /* protocol (the outermost ethertype) */
	uint8_t nvlans;              /* num_of_vlans */
	unsigned flags;              /* XTCAM_PARSE_* */
	unsigned *tc;                /* XTCAM_TC_* out, NULL: no tc words */
	unsigned tcf;                /* XTCAM_TC_* seen */
	int proto_pos;               /* argv index of "protocol", -1 */
};

typedef int (*kw_fn)(struct pstate *ps, int kw, const char *name,
		     const char *s);

static bool has(const struct pstate *ps, int kw)
{
	return ps->given & (1ull << kw);
}

/* The base a keyword reads in: tc-flower's, or under XTCAM_PARSE_DECIMAL
 * the decimal-or-0x of older xtcam for every keyword. */
static enum nbase nbase(const struct pstate *ps, enum nbase flower)
{
	return ps->flags & XTCAM_PARSE_DECIMAL ? NB_AUTO : flower;
}

static int kw_prio(struct pstate *ps, int kw, const char *name, const char *s)
{
	uint64_t v;
	int rc;

	(void)kw;
	rc = get_num(&ps->e, name, s, 1, 65535, NB_AUTO, false, "a priority",
		     &v);
	if (!rc)
		ps->r.prio = (__u32)v;
	return rc;
}

static int kw_handle(struct pstate *ps, int kw, const char *name,
		     const char *s)
{
	uint64_t v;
	int rc;

	(void)kw;
	rc = get_num(&ps->e, name, s, 1, UINT32_MAX, NB_AUTO, false, "a handle",
		     &v);
	if (!rc)
		ps->r.handle = (__u32)v;
	return rc;
}

int xtcam_handle_parse(const char *s, __u32 *handle, char *err, size_t errlen)
{
	struct ectx e;
	uint64_t v;
	int rc;

	ectx_init(&e, err, errlen);
	rc = get_num(&e, "handle", s, 1, UINT32_MAX, NB_AUTO, false, "a handle", &v);
	if (!rc)
		*handle = (__u32)v;
	return rc;
}

static int mac_fail(struct pstate *ps, const char *name, const char *what,
		    const char *s)
{
	return fail(&ps->e, EINVAL, "%s: %s%s is not a MAC address%s", name,
		    what, quote(&ps->e, s),
		    *what ? " or a prefix length (0-48)" : "");
}

/* MAC[/LEN|/MASK] into a (masked) and m. */
static int mac_parse(struct pstate *ps, const char *name, const char *s,
		     uint8_t a[6], uint8_t m[6])
{
	const char *sl = strchr(s, '/');
	size_t alen = sl ? (size_t)(sl - s) : strlen(s);
	char buf[32];
	uint64_t len;
	int i, rc;

	if (alen >= sizeof(buf))
		return mac_fail(ps, name, "", s);
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	if (!mac_aton(buf, a))
		return mac_fail(ps, name, "", buf);
	if (!sl) {
		memset(m, 0xff, 6);
	} else if (strchr(sl + 1, ':')) {
		if (!mac_aton(sl + 1, m))
			return mac_fail(ps, name, "mask ", sl + 1);
	} else {
		rc = num_parse(sl + 1, 48, NB_DEC, &len);
		if (rc == -ERANGE)
			return fail(&ps->e, ERANGE, "%s: prefix length %.20s is "
				    "out of range (0-48)", name, sl + 1);
		if (rc)
			return mac_fail(ps, name, "mask ", sl + 1);
		prefix_mask(m, 6, (unsigned)len);
	}
	for (i = 0; i < 6; i++)
		a[i] &= m[i];
	return 0;
}

static int kw_mac(struct pstate *ps, int kw, const char *name, const char *s)
{
	uint8_t a[6], m[6], *vf, *mf;
	int rc = mac_parse(ps, name, s, a, m);

	if (rc)
		return rc;
	vf = kw == XTCAM_KW_SRC_MAC ? ps->r.value.src_mac : ps->r.value.dst_mac;
	mf = kw == XTCAM_KW_SRC_MAC ? ps->r.mask.src_mac : ps->r.mask.dst_mac;
	memcpy(vf, a, 6);
	memcpy(mf, m, 6);
	return 0;
}

static int kw_vlan(struct pstate *ps, int kw, const char *name, const char *s)
{
	(void)kw;
	if (!strcmp(s, "tagged"))
		ps->r.value.flags |= XTCAM_F_VLAN1;
	else if (strcmp(s, "untagged"))
		return fail(&ps->e, EINVAL, "%s: %s is not tagged or untagged",
			    name, quote(&ps->e, s));
	ps->r.mask.flags |= XTCAM_F_VLAN1;
	return 0;
}

static void tci_set(__be16 *v, __be16 *m, uint16_t val, uint16_t mask)
{
	*v = htons((uint16_t)(ntohs(*v) | (val & mask)));
	*m = htons((uint16_t)(ntohs(*m) | mask));
}

static int kw_vid(struct pstate *ps, int kw, const char *name, const char *s)
{
	bool outer = kw == XTCAM_KW_VLAN_ID;
	uint64_t v;
	int rc;

	rc = get_num(&ps->e, name, s, 0, TCI_VID, NB_AUTO, false, "a VLAN id",
		     &v);
	if (rc)
		return rc;
	tci_set(outer ? &ps->r.value.vlan_tci : &ps->r.value.cvlan_tci,
		outer ? &ps->r.mask.vlan_tci : &ps->r.mask.cvlan_tci,
		(uint16_t)v, TCI_VID);
	return 0;
}

static int kw_vprio(struct pstate *ps, int kw, const char *name,
		    const char *s)
{
	bool outer = kw == XTCAM_KW_VLAN_PRIO;
	uint64_t v;
	int rc;

	rc = get_num(&ps->e, name, s, 0, 7, NB_AUTO, false,
		     "a VLAN priority", &v);
	if (rc)
		return rc;
	tci_set(outer ? &ps->r.value.vlan_tci : &ps->r.value.cvlan_tci,
		outer ? &ps->r.mask.vlan_tci : &ps->r.mask.cvlan_tci,
		(uint16_t)(v << TCI_PRIO_SHIFT), TCI_PRIO);
	return 0;
}

static int ethtype_fail(struct pstate *ps, int rc, const char *name,
			const char *s, bool all)
{
	if (rc == -EDOM)
		return num_fail(&ps->e, rc, name, s, 0, 0xffff, NB_AUTO, true,
				"");
	return fail(&ps->e, rc == -ERANGE ? ERANGE : EINVAL,
		    "%s: %s is not an ethertype (ipv4, ipv6, arp, %s"
		    "or a number 0-0xffff)", name, quote(&ps->e, s),
		    all ? "all " : "802.1Q, 802.1ad ");
}

static int kw_vethtype(struct pstate *ps, int kw, const char *name,
		       const char *s)
{
	uint16_t v;
	int rc;

	rc = ethtype_parse(s, &v);
	if (rc)
		return ethtype_fail(ps, rc, name, s, false);
	if (kw == XTCAM_KW_CVLAN_ETHTYPE && is_tpid(v))
		return fail(&ps->e, EINVAL, "%s: %s would be a third VLAN tag "
			    "(xtcam parses at most two)", name, quote(&ps->e, s));
	if (kw == XTCAM_KW_VLAN_ETHTYPE) {
		ps->r.value.vlan_ethtype = htons(v);
		ps->r.mask.vlan_ethtype = 0xffff;
	} else {
		ps->r.value.cvlan_ethtype = htons(v);
		ps->r.mask.cvlan_ethtype = 0xffff;
	}
	return 0;
}

static int kw_ethtype(struct pstate *ps, int kw, const char *name,
		      const char *s)
{
	uint16_t v;
	int rc;

	(void)kw;
	if (!strcmp(s, "all")) {
		ps->eth_all = true;
		return 0;
	}
	rc = ethtype_parse(s, &v);
	if (rc)
		return ethtype_fail(ps, rc, name, s, true);
	if (is_tpid(v))
		return fail(&ps->e, EINVAL, "%s: %s is a VLAN tag; %s names the "
			    "protocol after the tags (match tags with vlan, "
			    "vlan_id, vlan_ethtype)", name, quote(&ps->e, s), name);
	ps->r.value.eth_type = htons(v);
	ps->r.mask.eth_type = 0xffff;
	return 0;
}

#define IPPROTO_NAMES "tcp, udp, sctp, udplite, icmp, icmpv6, esp, ah, l2tp"

/* A name (spelled out: tc's abbreviations like "t" for tcp are refused) or
 * a number, hex as tc reads it ("11" is 17, udp). */
static int kw_ipproto(struct pstate *ps, int kw, const char *name,
		      const char *s)
{
	enum nbase nb = nbase(ps, NB_HEX);
	uint64_t v;
	size_t i, n = strlen(s);
	int rc;

	(void)kw;
	for (i = 0; i < ARRAY_SIZE(ipprotos); i++)
		if (!strcmp(s, ipprotos[i].name)) {
			v = ipprotos[i].v;
			goto out;
		}
	rc = num_parse(s, 255, nb, &v);
	if (!rc)
		goto out;
	if (rc == -EDOM)
		return num_fail(&ps->e, rc, name, s, 0, 255, nb, false, "");
	for (i = 0; rc == -EINVAL && n && i < ARRAY_SIZE(ipprotos); i++)
		if (!strncmp(s, ipprotos[i].name, n))
			return fail(&ps->e, EINVAL, "%s: %s is an abbreviation "
				    "(tc reads it as %s); write the name in full",
				    name, quote(&ps->e, s), ipprotos[i].name);
	return fail(&ps->e, rc == -ERANGE ? ERANGE : EINVAL,
		    "%s: %s is not an IP protocol (" IPPROTO_NAMES " or %s)",
		    name, quote(&ps->e, s),
		    nb == NB_HEX ? "hex 0-ff" : "0-255");
out:
	ps->r.value.ip_proto = (__u8)v;
	ps->r.mask.ip_proto = 0xff;
	return 0;
}

/* ADDR, ADDR/LEN or ADDR/MASK, IPv4 or IPv6 (inet_pton). */
static int kw_ip(struct pstate *ps, int kw, const char *name, const char *s)
{
	const char *sl = strchr(s, '/');
	size_t alen = sl ? (size_t)(sl - s) : strlen(s), n, i;
	uint8_t addr[16] = { 0 }, mask[16] = { 0 };
	const char *fname;
	char buf[64];
	int fam, af, rc;
	uint64_t len;

	if (alen >= sizeof(buf))
		return fail(&ps->e, EINVAL, "%s: %s is not an IPv4 or IPv6 "
			    "address", name, quote(&ps->e, s));
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	if (inet_pton(AF_INET, buf, addr) == 1) {
		fam = 4, af = AF_INET, n = 4, fname = "IPv4";
	} else if (inet_pton(AF_INET6, buf, addr) == 1) {
		fam = 6, af = AF_INET6, n = 16, fname = "IPv6";
	} else {
		return fail(&ps->e, EINVAL, "%s: %s is not an IPv4 or IPv6 "
			    "address", name, quote(&ps->e, buf));
	}
	if (!sl) {
		memset(mask, 0xff, n);
	} else if (strchr(sl + 1, '.') || strchr(sl + 1, ':')) {
		if (strlen(sl + 1) >= sizeof(buf) ||
		    inet_pton(af, sl + 1, mask) != 1)
			return fail(&ps->e, EINVAL, "%s: mask %s is not an %s "
				    "mask", name, quote(&ps->e, sl + 1), fname);
	} else {
		rc = num_parse(sl + 1, n * 8, NB_DEC, &len);
		if (rc == -ERANGE)
			return fail(&ps->e, ERANGE, "%s: prefix length %.20s is "
				    "out of range for %s (0-%zu)", name, sl + 1,
				    fname, n * 8);
		if (rc)
			return fail(&ps->e, EINVAL, "%s: %s is not a prefix "
				    "length (0-%zu) or an %s mask", name,
				    quote(&ps->e, sl + 1), n * 8, fname);
		prefix_mask(mask, n, (unsigned)len);
	}
	for (i = 0; i < n; i++)
		addr[i] &= mask[i];
	if (kw == XTCAM_KW_SRC_IP) {
		memcpy(ps->r.value.src_ip, addr, sizeof(addr));
		memcpy(ps->r.mask.src_ip, mask, sizeof(mask));
		ps->fam[0] = fam;
	} else {
		memcpy(ps->r.value.dst_ip, addr, sizeof(addr));
		memcpy(ps->r.mask.dst_ip, mask, sizeof(mask));
		ps->fam[1] = fam;
	}
	return 0;
}

static __u8 *u8_field(struct xtcam_key *k, int kw)
{
	switch (kw) {
	case XTCAM_KW_IP_TOS:
		return &k->ip_tos;
	case XTCAM_KW_IP_TTL:
		return &k->ip_ttl;
	case XTCAM_KW_TYPE:
		return &k->icmp_type;
	case XTCAM_KW_CODE:
		return &k->icmp_code;
	}
	return NULL;
}

static int kw_u8m(struct pstate *ps, int kw, const char *name, const char *s)
{
	const char *what = kw == XTCAM_KW_IP_TOS ? "a TOS value" :
			   kw == XTCAM_KW_IP_TTL ? "a TTL" :
			   kw == XTCAM_KW_TYPE ? "an ICMP type" : "an ICMP code";
	bool ip = kw == XTCAM_KW_IP_TOS || kw == XTCAM_KW_IP_TTL;
	uint64_t v, m;
	int rc;

	/* tc: ip_tos/ip_ttl value decimal, else hex, mask hex; ICMP type and
	 * code decimal (0x accepted) */
	rc = get_masked(&ps->e, name, s, 0xff,
			nbase(ps, ip ? NB_DEC_HEX : NB_AUTO),
			nbase(ps, ip ? NB_HEX : NB_AUTO), kw == XTCAM_KW_IP_TOS,
			what, &v, &m);
	if (rc)
		return rc;
	*u8_field(&ps->r.value, kw) = (__u8)v;
	*u8_field(&ps->r.mask, kw) = (__u8)m;
	return 0;
}

static int kw_ipflags(struct pstate *ps, int kw, const char *name,
		      const char *s)
{
	static const char *const words[] = {
		"frag", "nofrag", "firstfrag", "nofirstfrag",
	};
	const char *p = s;
	unsigned seen = 0;
	__u16 v = 0, m = 0;

	(void)kw;
	for (;;) {
		size_t n = strcspn(p, "/"), i;

		for (i = 0; i < ARRAY_SIZE(words); i++)
			if (strlen(words[i]) == n && !strncmp(p, words[i], n))
				break;
		if (i == ARRAY_SIZE(words)) {
			char w[QBUF];

			snprintf(w, sizeof(w), "%.*s", (int)(n < 64 ? n : 64), p);
			if (!n)
				return fail(&ps->e, EINVAL, "%s: empty flag in %s "
					    "(frag, nofrag, firstfrag, nofirstfrag, "
					    "joined by /)", name, quote(&ps->e, s));
			return fail(&ps->e, EINVAL, "%s: unknown flag %s (frag, "
				    "nofrag, firstfrag, nofirstfrag)", name,
				    quote(&ps->e, w));
		}
		if (seen & (1u << i))
			return fail(&ps->e, EINVAL, "%s: %s given twice", name,
				    words[i]);
		if (seen & (1u << (i ^ 1)))
			return fail(&ps->e, EINVAL, "%s: %s and %s contradict "
				    "each other", name, words[i ^ 1], words[i]);
		seen |= 1u << i;
		if (i < 2) {
			m |= XTCAM_F_FRAG;
			if (i == 0)
				v |= XTCAM_F_FRAG;
		} else {
			m |= XTCAM_F_FIRSTFRAG;
			if (i == 2)
				v |= XTCAM_F_FIRSTFRAG;
		}
		p += n;
		if (!*p)
			break;
		p++;
	}
	if ((seen & 2) && (seen & 4))
		return fail(&ps->e, EINVAL, "%s: nofrag/firstfrag can never "
			    "match (a first fragment is a fragment)", name);
	ps->r.value.flags |= v;
	ps->r.mask.flags |= m;
	return 0;
}

static int port_fail(struct pstate *ps, const char *name, const char *s)
{
	return fail(&ps->e, EINVAL, "%s: %s is not a port, a range MIN-MAX or "
		    "PORT/MASK", name, quote(&ps->e, s));
}

/* PORT, MIN-MAX, or PORT/MASK with a prefix mask (ports are ranges). */
static int kw_port(struct pstate *ps, int kw, const char *name,
		   const char *s)
{
	const char *dash = strchr(s, '-'), *sl = strchr(s, '/');
	uint64_t lo, hi, m;
	char buf[32];
	int rc;

	if (!dash && !sl) {
		rc = get_num(&ps->e, name, s, 0, 65535, NB_AUTO, false, "a port",
			     &lo);
		if (rc)
			return rc;
		hi = lo;
	} else if (dash && !sl) {
		size_t n = (size_t)(dash - s);

		if (!n || !dash[1] || n >= sizeof(buf))
			return port_fail(ps, name, s);
		memcpy(buf, s, n);
		buf[n] = '\0';
		rc = get_num(&ps->e, name, buf, 0, 65535, NB_AUTO, false,
			     "a port", &lo);
		if (!rc)
			rc = get_num(&ps->e, name, dash + 1, 0, 65535, NB_AUTO, false,
				     "a port", &hi);
		if (rc)
			return rc;
		if (lo > hi)
			return fail(&ps->e, EINVAL, "%s: range %llu-%llu is "
				    "reversed", name, (unsigned long long)lo,
				    (unsigned long long)hi);
	} else if (sl && !dash) {
		uint64_t v;
		uint16_t inv;

		rc = get_masked(&ps->e, name, s, 0xffff, NB_AUTO, NB_AUTO, false,
				"a port", &v, &m);
		if (rc)
			return rc;
		inv = (uint16_t)~m;
		if (inv & (uint16_t)(inv + 1))
			return fail(&ps->e, EINVAL, "%s: mask %#06llx is not a "
				    "prefix mask (ports match as ranges: use "
				    "MIN-MAX)", name, (unsigned long long)m);
		lo = v;
		hi = v | inv;
	} else {
		return port_fail(ps, name, s);
	}
	if (kw == XTCAM_KW_SRC_PORT) {
		ps->r.sport_lo = (__u16)lo;
		ps->r.sport_hi = (__u16)hi;
	} else {
		ps->r.dport_lo = (__u16)lo;
		ps->r.dport_hi = (__u16)hi;
	}
	return 0;
}

static int kw_tcpflags(struct pstate *ps, int kw, const char *name,
		       const char *s)
{
	uint64_t v, m;
	int rc;

	(void)kw;
	/* hex, as tc reads it: "12" is SYN|ACK */
	rc = get_masked(&ps->e, name, s, TCP_FLAGS_MAX, nbase(ps, NB_HEX),
			nbase(ps, NB_HEX), true, "a TCP flags value", &v, &m);
	if (rc)
		return rc;
	ps->r.value.tcp_flags = htons((uint16_t)v);
	ps->r.mask.tcp_flags = htons((uint16_t)m);
	return 0;
}

static uint32_t raw_full(unsigned len)
{
	return len >= 4 ? UINT32_MAX : (1u << (8 * len)) - 1;
}

static int kw_raw(struct pstate *ps, int kw, const char *name, const char *s)
{
	int idx = kw == XTCAM_KW_RAW1 ? 0 : 1;
	const struct xtcam_raw_spec *rs;
	uint64_t v, m;
	char what[32];
	int rc;

	if (!ps->blk || ps->blk->raw[idx].layer == XTCAM_RAW_NONE)
		return fail(&ps->e, EINVAL, "%s: the block has no %s field "
			    "(block add NAME %s l2|l3|l4 OFFSET LENGTH)", name,
			    name, name);
	rs = &ps->blk->raw[idx];
	if (rs->layer > XTCAM_RAW_L4 || rs->len < 1 || rs->len > 4)
		return fail(&ps->e, EINVAL, "%s: the block's %s field is "
			    "misconfigured (layer %u, length %u)", name, name,
			    rs->layer, rs->len);
	snprintf(what, sizeof(what), "a %u-byte value", rs->len);
	rc = get_masked(&ps->e, name, s, raw_full(rs->len), NB_AUTO, NB_AUTO,
			true, what, &v, &m);
	if (rc)
		return rc;
	if (idx == 0) {
		ps->r.value.raw1 = htonl((uint32_t)v);
		ps->r.mask.raw1 = htonl((uint32_t)m);
	} else {
		ps->r.value.raw2 = htonl((uint32_t)v);
		ps->r.mask.raw2 = htonl((uint32_t)m);
	}
	return 0;
}

/* --- flower's other keywords ---------------------------------------------
 *
 * Frames that are not IP hold their header in the key's IP fields
 * (xtcam/key.h): the keywords below write there, and check_l3() fixes the
 * ethertype that gives the fields that meaning.
 */

static bool ifname_valid(const char *s);

static int kw_protocol(struct pstate *ps, int kw, const char *name,
		       const char *s)
{
	uint16_t v;
	int rc;

	(void)kw;
	if (!strcmp(s, "all")) {
		ps->proto_all = true;
		return 0;
	}
	rc = ethtype_parse(s, &v);
	if (rc)
		return ethtype_fail(ps, rc, name, s, true);
	ps->proto = v;
	return 0;
}

static int kw_nvlans(struct pstate *ps, int kw, const char *name,
		     const char *s)
{
	uint64_t v;
	int rc;

	(void)kw;
	rc = get_num(&ps->e, name, s, 0, 255, NB_AUTO, false,
		     "a number of VLAN tags", &v);
	if (rc)
		return rc;
	if (v > XTCAM_MAX_VLAN)
		return fail(&ps->e, ERANGE, "%s: %llu tags: xtcam parses at most "
			    "%d (a frame with more is malformed to it)", name,
			    (unsigned long long)v, XTCAM_MAX_VLAN);
	ps->nvlans = (uint8_t)v;
	return 0;
}

static int kw_arp_op(struct pstate *ps, int kw, const char *name,
		     const char *s)
{
	uint64_t v, m;
	int rc;

	(void)kw;
	if (!strcmp(s, "request")) {
		v = 1, m = 0xff;
	} else if (!strcmp(s, "reply")) {
		v = 2, m = 0xff;
	} else {
		rc = get_masked(&ps->e, name, s, 0xff, NB_AUTO, NB_AUTO, false,
				"an ARP opcode (request, reply or", &v, &m);
		if (rc)
			return rc;
	}
	ps->r.value.ip_proto = (__u8)v;
	ps->r.mask.ip_proto = (__u8)m;
	return 0;
}

/* ADDR, ADDR/LEN or ADDR/MASK, IPv4 only (ARP's addresses). */
static int kw_arp_ip(struct pstate *ps, int kw, const char *name,
		     const char *s)
{
	const char *sl = strchr(s, '/');
	size_t alen = sl ? (size_t)(sl - s) : strlen(s);
	uint8_t addr[4] = { 0 }, mask[4];
	char buf[64];
	uint64_t len;
	int i, rc;

	if (alen >= sizeof(buf))
		return fail(&ps->e, EINVAL, "%s: %s is not an IPv4 address",
			    name, quote(&ps->e, s));
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	if (inet_pton(AF_INET, buf, addr) != 1)
		return fail(&ps->e, EINVAL, "%s: %s is not an IPv4 address "
			    "(ARP carries IPv4 addresses)", name,
			    quote(&ps->e, buf));
	if (!sl) {
		memset(mask, 0xff, sizeof(mask));
	} else if (strchr(sl + 1, '.')) {
		if (strlen(sl + 1) >= sizeof(buf) ||
		    inet_pton(AF_INET, sl + 1, mask) != 1)
			return fail(&ps->e, EINVAL, "%s: mask %s is not an IPv4 "
				    "mask", name, quote(&ps->e, sl + 1));
	} else {
		rc = num_parse(sl + 1, 32, NB_DEC, &len);
		if (rc == -ERANGE)
			return fail(&ps->e, ERANGE, "%s: prefix length %.20s is "
				    "out of range (0-32)", name, sl + 1);
		if (rc)
			return fail(&ps->e, EINVAL, "%s: %s is not a prefix "
				    "length (0-32) or an IPv4 mask", name,
				    quote(&ps->e, sl + 1));
		prefix_mask(mask, 4, (unsigned)len);
	}
	for (i = 0; i < 4; i++)
		addr[i] &= mask[i];
	if (kw == XTCAM_KW_ARP_SIP) {
		memcpy(&ps->r.value.src_ip[0], addr, 4);
		memcpy(&ps->r.mask.src_ip[0], mask, 4);
	} else {
		memcpy(&ps->r.value.dst_ip[0], addr, 4);
		memcpy(&ps->r.mask.dst_ip[0], mask, 4);
	}
	return 0;
}

static int kw_arp_mac(struct pstate *ps, int kw, const char *name,
		      const char *s)
{
	uint8_t a[6], m[6];
	int rc = mac_parse(ps, name, s, a, m);

	if (rc)
		return rc;
	if (kw == XTCAM_KW_ARP_SHA) {
		memcpy((uint8_t *)ps->r.value.src_ip + 4, a, 6);
		memcpy((uint8_t *)ps->r.mask.src_ip + 4, m, 6);
	} else {
		memcpy((uint8_t *)ps->r.value.dst_ip + 4, a, 6);
		memcpy((uint8_t *)ps->r.mask.dst_ip + 4, m, 6);
	}
	return 0;
}

/* The fields of a label stack entry: label(20) tc(3) bos(1) ttl(8). */
static const struct {
	const char *name;        /* in `mpls lse` */
	unsigned shift, max;
	const char *what;
} lse_fields[] = {
	{ "label", 12, 0xfffff, "an MPLS label" },
	{ "tc",     9, 7,       "an MPLS traffic class" },
	{ "bos",    8, 1,       "a bottom of stack bit" },
	{ "ttl",    0, 0xff,    "an MPLS TTL" },
};

/* Field f of the entry at depth d (1-based) is v. */
static void lse_set(struct pstate *ps, unsigned d, size_t f, uint64_t v)
{
	uint32_t m = lse_fields[f].max << lse_fields[f].shift;
	uint32_t val = ntohl(ps->r.value.src_ip[d - 1]) & ~m;
	uint32_t msk = ntohl(ps->r.mask.src_ip[d - 1]) | m;

	val |= (uint32_t)v << lse_fields[f].shift;
	ps->r.value.src_ip[d - 1] = htonl(val);
	ps->r.mask.src_ip[d - 1] = htonl(msk);
	ps->r.value.ip_proto |= (uint8_t)(1u << (d - 1));
	ps->r.mask.ip_proto |= (uint8_t)(1u << (d - 1));
}

/* mpls_label, mpls_tc, mpls_bos, mpls_ttl: the first entry. */
static int kw_mpls1(struct pstate *ps, int kw, const char *name,
		    const char *s)
{
	size_t f = (size_t)(kw - XTCAM_KW_MPLS_LABEL);
	uint64_t v;
	int rc;

	rc = get_num(&ps->e, name, s, 0, lse_fields[f].max, NB_AUTO, false,
		     lse_fields[f].what, &v);
	if (rc)
		return rc;
	lse_set(ps, 1, f, v);
	return 0;
}

/* mpls lse depth N [label L] [tc T] [bos B] [ttl T] [lse depth ...] */
static int parse_mpls(struct pstate *ps, int argc, char **argv, int *ip)
{
	const char *name = argv[*ip];
	unsigned seen_depth = 0;
	int i = *ip + 1;

	if (i >= argc || strcmp(argv[i], "lse"))
		return fail(&ps->e, EINVAL, "%s: expected lse depth N [label L] "
			    "[tc T] [bos B] [ttl T]", name);
	while (i < argc && !strcmp(argv[i], "lse")) {
		unsigned seen = 0;
		uint64_t d;
		int rc;

		if (i + 2 >= argc || strcmp(argv[i + 1], "depth"))
			return fail(&ps->e, EINVAL, "%s: lse: depth N comes first "
				    "(lse depth N [label L] [tc T] [bos B] "
				    "[ttl T])", name);
		rc = num_parse(argv[i + 2], 255, NB_AUTO, &d);
		if (rc || d < 1)
			return fail(&ps->e, rc == -ERANGE || (!rc && d < 1) ?
				    ERANGE : EINVAL, "%s: lse depth %s is not a "
				    "depth (1-%d)", name, quote(&ps->e, argv[i + 2]),
				    XTCAM_MAX_MPLS);
		if (d > XTCAM_MAX_MPLS)
			return fail(&ps->e, ERANGE, "%s: lse depth %llu: xtcam "
				    "reads the first %d label stack entries (flower "
				    "7)", name, (unsigned long long)d, XTCAM_MAX_MPLS);
		if (seen_depth & (1u << d))
			return fail(&ps->e, EINVAL, "%s: lse depth %llu given twice",
				    name, (unsigned long long)d);
		seen_depth |= 1u << d;
		/* the entry is there, whatever its fields */
		ps->r.value.ip_proto |= (uint8_t)(1u << (d - 1));
		ps->r.mask.ip_proto |= (uint8_t)(1u << (d - 1));
		i += 3;
		for (;;) {
			size_t f;
			uint64_t v;
			char what[32];

			for (f = 0; f < ARRAY_SIZE(lse_fields); f++)
				if (i < argc && !strcmp(argv[i], lse_fields[f].name))
					break;
			if (f == ARRAY_SIZE(lse_fields))
				break;
			if (seen & (1u << f))
				return fail(&ps->e, EINVAL, "%s: lse depth %llu: %s "
					    "given twice", name, (unsigned long long)d,
					    lse_fields[f].name);
			seen |= 1u << f;
			if (i + 1 >= argc)
				return fail(&ps->e, EINVAL, "%s: lse %s: missing "
					    "value", name, lse_fields[f].name);
			snprintf(what, sizeof(what), "%s lse %s", name,
				 lse_fields[f].name);
			rc = get_num(&ps->e, what, argv[i + 1], 0, lse_fields[f].max,
				     NB_AUTO, false, lse_fields[f].what, &v);
			if (rc)
				return rc;
			lse_set(ps, (unsigned)d, f, v);
			i += 2;
		}
	}
	*ip = i;
	return 0;
}

/* cfm [mdl M] [op O] */
static int parse_cfm(struct pstate *ps, int argc, char **argv, int *ip)
{
	const char *name = argv[*ip];
	int i = *ip + 1, n = 0, rc;
	bool mdl = false, op = false;
	uint64_t v;

	for (; i < argc; i += 2, n++) {
		bool is_mdl = !strcmp(argv[i], "mdl");

		if (!is_mdl && strcmp(argv[i], "op"))
			break;
		if (is_mdl ? mdl : op)
			return fail(&ps->e, EINVAL, "%s: %s given twice", name,
				    argv[i]);
		if (i + 1 >= argc)
			return fail(&ps->e, EINVAL, "%s: %s: missing value", name,
				    argv[i]);
		if (is_mdl) {
			rc = get_num(&ps->e, "cfm mdl", argv[i + 1], 0, 7, NB_AUTO,
				     false, "a maintenance domain level", &v);
			if (rc)
				return rc;
			ps->r.value.ip_tos = (__u8)(v << 5);
			ps->r.mask.ip_tos = 0xe0;
			mdl = true;
		} else {
			rc = get_num(&ps->e, "cfm op", argv[i + 1], 0, 255, NB_AUTO,
				     false, "a CFM opcode", &v);
			if (rc)
				return rc;
			ps->r.value.ip_proto = (__u8)v;
			ps->r.mask.ip_proto = 0xff;
			op = true;
		}
	}
	if (!n)
		return fail(&ps->e, EINVAL, "%s: expected mdl M and/or op O", name);
	*ip = i;
	return 0;
}

static int kw_pppoe_sid(struct pstate *ps, int kw, const char *name,
			const char *s)
{
	uint64_t v;
	int rc;

	(void)kw;
	rc = get_num(&ps->e, name, s, 0, 0xffff, NB_AUTO, false,
		     "a PPPoE session id", &v);
	if (rc)
		return rc;
	ps->r.value.src_ip[0] |= htonl((uint32_t)v << 16);
	ps->r.mask.src_ip[0] |= htonl(0xffff0000u);
	return 0;
}

/* The PPP protocol names tc reads (iproute2's table); the first
 * PPP_PRINTED are the ones the printer writes, the rest print as numbers
 * (so a saved file reads the same in an xtcam that knows only those). */
static const struct name16 ppp_protos[] = {
	{ "ip",         0x0021 },
	{ "ipv6",       0x0057 },
	{ "mpls_uc",    0x0281 },
	{ "mpls_mc",    0x0283 },
	{ "at",         0x0029 },
	{ "ipx",        0x002b },
	{ "vjc_comp",   0x002d },
	{ "vjc_uncomp", 0x002f },
	{ "mp",         0x003d },
	{ "compfrag",   0x00fb },
	{ "comp",       0x00fd },
	{ "ipcp",       0x8021 },
	{ "atcp",       0x8029 },
	{ "ipxcp",      0x802b },
	{ "ipv6cp",     0x8057 },
	{ "ccpfrag",    0x80fb },
	{ "ccp",        0x80fd },
	{ "mplscp",     0x80fd },
	{ "lcp",        0xc021 },
	{ "pap",        0xc023 },
	{ "lqr",        0xc025 },
	{ "chap",       0xc223 },
	{ "cbcp",       0xc029 },
};
#define PPP_PRINTED 4

static int kw_ppp_proto(struct pstate *ps, int kw, const char *name,
			const char *s)
{
	uint64_t v;
	size_t i;
	int rc;

	(void)kw;
	for (i = 0; i < ARRAY_SIZE(ppp_protos); i++)
		if (!strcmp(s, ppp_protos[i].name))
			break;
	if (i < ARRAY_SIZE(ppp_protos)) {
		v = ppp_protos[i].v;
	} else {
		rc = get_num(&ps->e, name, s, 0, 0xffff, NB_AUTO, true,
			     "a PPP protocol name (ip, ipv6, mpls_uc, "
			     "mpls_mc, lcp, ... as tc names them) or number",
			     &v);
		if (rc)
			return rc;
	}
	ps->r.value.src_ip[0] |= htonl((uint32_t)v);
	ps->r.mask.src_ip[0] |= htonl(0xffffu);
	return 0;
}

/* l2tpv3_sid (decimal, as tc reads it) and spi (hex, as tc reads it): 32
 * bits kept as two exact halves in the port ranges (key.h). */
static int kw_sid32(struct pstate *ps, int kw, const char *name,
		    const char *s)
{
	bool spi = kw == XTCAM_KW_SPI;
	uint64_t v;
	int rc;

	rc = get_num(&ps->e, name, s, 0, 0xffffffffu,
		     nbase(ps, spi ? NB_HEX : NB_AUTO), spi,
		     spi ? "an SPI" : "an L2TPv3 session id", &v);
	if (rc)
		return rc;
	ps->r.sport_lo = ps->r.sport_hi = (__u16)(v >> 16);
	ps->r.dport_lo = ps->r.dport_hi = (__u16)v;
	return 0;
}

static int kw_indev(struct pstate *ps, int kw, const char *name,
		    const char *s)
{
	unsigned idx = 0;
	uint64_t v;

	(void)kw;
	/* the form the printer falls back to when the device is gone: '/'
	 * is in no interface name */
	if (!strncmp(s, "ifindex/", 8)) {
		if (num_parse(s + 8, 0x7fffffff, NB_AUTO, &v) || !v)
			return fail(&ps->e, EINVAL, "%s: %s is not ifindex/N "
				    "(N 1-2147483647)", name, quote(&ps->e, s));
		idx = (unsigned)v;
	} else if (!ifname_valid(s)) {
		return fail(&ps->e, EINVAL, "%s: %s is not an interface name",
			    name, quote(&ps->e, s));
	} else {
		idx = if_nametoindex(s);
		if (!idx)
			return fail(&ps->e, ENODEV, "%s: no device %s in this "
				    "network namespace", name, quote(&ps->e, s));
	}
	ps->r.value.ifindex = idx;
	ps->r.mask.ifindex = 0xffffffffu;
	return 0;
}

struct kwdef {
	const char *name;
	int kw;
	kw_fn fn;
};

static const struct kwdef kwdefs[] = {
	{ "prio",          K_PRIO,                  kw_prio },
	{ "pref",          K_PRIO,                  kw_prio },
	{ "handle",        K_HANDLE,                kw_handle },
	{ "action",        K_ACTION,                NULL },
	{ "src_mac",       XTCAM_KW_SRC_MAC,        kw_mac },
	{ "dst_mac",       XTCAM_KW_DST_MAC,        kw_mac },
	{ "vlan",          XTCAM_KW_VLAN,           kw_vlan },
	{ "vlan_id",       XTCAM_KW_VLAN_ID,        kw_vid },
	{ "vlan_prio",     XTCAM_KW_VLAN_PRIO,      kw_vprio },
	{ "vlan_ethtype",  XTCAM_KW_VLAN_ETHTYPE,   kw_vethtype },
	{ "cvlan_id",      XTCAM_KW_CVLAN_ID,       kw_vid },
	{ "cvlan_prio",    XTCAM_KW_CVLAN_PRIO,     kw_vprio },
	{ "cvlan_ethtype", XTCAM_KW_CVLAN_ETHTYPE,  kw_vethtype },
	{ "eth_type",      XTCAM_KW_ETH_TYPE,       kw_ethtype },
	{ "protocol",      XTCAM_KW_PROTOCOL,       kw_protocol },
	{ "ip_proto",      XTCAM_KW_IP_PROTO,       kw_ipproto },
	{ "src_ip",        XTCAM_KW_SRC_IP,         kw_ip },
	{ "dst_ip",        XTCAM_KW_DST_IP,         kw_ip },
	{ "ip_tos",        XTCAM_KW_IP_TOS,         kw_u8m },
	{ "ip_ttl",        XTCAM_KW_IP_TTL,         kw_u8m },
	{ "ip_flags",      XTCAM_KW_IP_FLAGS,       kw_ipflags },
	{ "src_port",      XTCAM_KW_SRC_PORT,       kw_port },
	{ "dst_port",      XTCAM_KW_DST_PORT,       kw_port },
	{ "tcp_flags",     XTCAM_KW_TCP_FLAGS,      kw_tcpflags },
	{ "type",          XTCAM_KW_TYPE,           kw_u8m },
	{ "code",          XTCAM_KW_CODE,           kw_u8m },
	{ "raw1",          XTCAM_KW_RAW1,           kw_raw },
	{ "raw2",          XTCAM_KW_RAW2,           kw_raw },
	{ "num_of_vlans",  XTCAM_KW_NUM_VLANS,      kw_nvlans },
	{ "arp_op",        XTCAM_KW_ARP_OP,         kw_arp_op },
	{ "arp_sip",       XTCAM_KW_ARP_SIP,        kw_arp_ip },
	{ "arp_tip",       XTCAM_KW_ARP_TIP,        kw_arp_ip },
	{ "arp_sha",       XTCAM_KW_ARP_SHA,        kw_arp_mac },
	{ "arp_tha",       XTCAM_KW_ARP_THA,        kw_arp_mac },
	{ "mpls_label",    XTCAM_KW_MPLS_LABEL,     kw_mpls1 },
	{ "mpls_tc",       XTCAM_KW_MPLS_TC,        kw_mpls1 },
	{ "mpls_bos",      XTCAM_KW_MPLS_BOS,       kw_mpls1 },
	{ "mpls_ttl",      XTCAM_KW_MPLS_TTL,       kw_mpls1 },
	{ "mpls",          XTCAM_KW_MPLS,           NULL },
	{ "pppoe_sid",     XTCAM_KW_PPPOE_SID,      kw_pppoe_sid },
	{ "ppp_proto",     XTCAM_KW_PPP_PROTO,      kw_ppp_proto },
	{ "l2tpv3_sid",    XTCAM_KW_L2TPV3_SID,     kw_sid32 },
	{ "spi",           XTCAM_KW_SPI,            kw_sid32 },
	{ "cfm",           XTCAM_KW_CFM,            NULL },
	{ "indev",         XTCAM_KW_INDEV,          kw_indev },
};

/* tc-flower keywords (and tc filter options) that xtcam refuses: why, and
 * what to use instead (skip_hw and skip_sw are tc_word()'s).  One message
 * for all: EOPNOTSUPP, "KW: a tc-flower keyword xtcam does not support
 * (WHY); INSTEAD". */
static const struct {
	const char *name, *why, *instead;
} flower_only[] = {
#define CT "conntrack state, which XDP runs before", \
	   "match it in tc or nftables after conntrack"
	{ "ct_state", CT }, { "ct_zone", CT }, { "ct_mark", CT },
	{ "ct_label", CT },
#undef CT
#define ENC "tunnel metadata from a tunnel device's decapsulation, which " \
	    "XDP runs before; not yet supported", \
	    "match the outer headers (src_ip, dst_ip, dst_port) or a raw field"
	{ "enc_key_id", ENC }, { "enc_dst_ip", ENC }, { "enc_src_ip", ENC },
	{ "enc_dst_port", ENC }, { "enc_src_port", ENC }, { "enc_tos", ENC },
	{ "enc_ttl", ENC }, { "enc_flags", ENC },
	{ "geneve_opts", ENC }, { "vxlan_opts", ENC }, { "erspan_opts", ENC },
	{ "gtp_opts", ENC }, { "pfcp_opts", ENC },
#undef ENC
	{ "l2_miss", "the bridge's FDB lookup result, which XDP runs before",
	  "match in tc on the bridge port" },
	{ "classid", "a qdisc class; XDP has no classes",
	  "classify for qdiscs in tc, after XDP" },
	{ "flowid", "a qdisc class; XDP has no classes",
	  "classify for qdiscs in tc, after XDP" },
	{ "hw_tc", "a NIC traffic class", "configure it on the NIC (mqprio)" },
	{ "verbose", "tc's offload error log",
	  "leave it out: xtcam reports every error" },
	{ "chain", "tc filter chains; a block is one table",
	  "one block with priorities, or a block per chain" },
};

static const struct kwdef *kw_lookup(const char *s)
{
	size_t i;

	/* (the first byte first: this runs for every word of every rule) */
	for (i = 0; i < ARRAY_SIZE(kwdefs); i++)
		if (kwdefs[i].name[0] == s[0] && !strcmp(s, kwdefs[i].name))
			return &kwdefs[i];
	return NULL;
}

/* Optimal string alignment distance (edits, with transpositions). */
static int edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b), i, j;
	int d[33][33];

	if (n > 32 || m > 32)
		return 99;
	for (i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= n; i++)
		for (j = 1; j <= m; j++) {
			int c = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + c;

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

/* The known word closest to s: one that ends in "_s" ("ttl" -> "ip_ttl"),
 * else within two edits.  NULL if none is close. */
static const char *suggest(const char *s, const char *const *words,
			   size_t n)
{
	const char *best = NULL;
	int bestd = 3;
	size_t i, sl = strlen(s);

	if (!sl)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t wl = strlen(words[i]);

		if (wl > sl + 1 && words[i][wl - sl - 1] == '_' &&
		    !strcmp(words[i] + wl - sl, s))
			return words[i];
	}
	for (i = 0; i < n; i++) {
		int d = edit_distance(s, words[i]);

		if (d < bestd && (size_t)d * 2 < strlen(words[i])) {
			bestd = d;
			best = words[i];
		}
	}
	return best;
}

static int unknown_kw(struct pstate *ps, const char *tok)
{
	const char *words[ARRAY_SIZE(kwdefs)], *hint;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flower_only); i++)
		if (!strcmp(tok, flower_only[i].name))
			return fail(&ps->e, EOPNOTSUPP, "%s: a tc-flower keyword "
				    "xtcam does not support (%s); %s", tok,
				    flower_only[i].why, flower_only[i].instead);
	for (i = 0; i < ARRAY_SIZE(kwdefs); i++)
		words[i] = kwdefs[i].name;
	hint = suggest(tok, words, ARRAY_SIZE(words));
	if (hint)
		return fail(&ps->e, EINVAL, "unknown keyword %s (did you mean "
			    "\"%s\"?)", quote(&ps->e, tok), hint);
	return fail(&ps->e, EINVAL, "unknown keyword %s", quote(&ps->e, tok));
}

/* Interface names as the kernel takes them (dev_valid_name), except one
 * that starts with '#': in the canonical text it would start a comment, so
 * a `rule load` file could not give the rule back. */
static bool ifname_valid(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= XTCAM_IFNAME_MAX || !strcmp(s, ".") || !strcmp(s, "..") ||
	    s[0] == '#')
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '/' || c == ':' || is_space(c) || c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

/* Network namespace names as under /run/netns (not starting with '#',
 * as above). */
static bool netns_valid(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= XTCAM_NETNS_MAX || !strcmp(s, ".") || !strcmp(s, "..") ||
	    s[0] == '#')
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '/' || is_space(c) || c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

#define ACTIONS "drop, pass, tx, redirect dev IFNAME [netns NS], cpu N"

/* tc actions xtcam cannot run, and why: a tc line with one of them is
 * refused rather than given another meaning. */
static const struct {
	const char *name, *why;
} tc_refused_acts[] = {
	{ "continue",   "xtcam has no next filter to continue with: the first rule that matches decides" },
	{ "reclassify", "xtcam classifies a frame once" },
	{ "goto",       "xtcam has no filter chains" },
	{ "jump",       "xtcam runs one action per rule" },
	{ "pipe",       "xtcam runs one action per rule" },
	{ "trap",       "XDP cannot trap to the CPU of a switch ASIC" },
	{ "stolen",     "xtcam runs one action per rule" },
	{ "police",     "xtcam has no policer (counters only)" },
	{ "skbedit",    "XDP has no skb to edit" },
	{ "vlan",       "xtcam does not push, pop or modify VLAN tags" },
	{ "tunnel_key", "xtcam does not encapsulate or decapsulate" },
	{ "pedit",      "xtcam does not rewrite packets" },
	{ "csum",       "xtcam does not rewrite packets" },
	{ "nat",        "xtcam does not rewrite packets" },
	{ "skbmod",     "XDP has no skb to edit" },
	{ "ct",         "xtcam has no connection tracking" },
	{ "ctinfo",     "xtcam has no connection tracking" },
	{ "connmark",   "xtcam has no connection tracking" },
	{ "mpls",       "xtcam does not push, pop or modify MPLS labels" },
	{ "sample",     "xtcam does not sample packets" },
	{ "simple",     "xtcam has no action that only logs" },
	{ "ife",        "xtcam does not encapsulate" },
	{ "gate",       "xtcam has no time-based gate" },
	{ "bpf",        "xtcam runs no tc BPF action (its own program is XDP)" },
	{ "xt",         "xtcam runs no iptables target" },
	{ "ipt",        "xtcam runs no iptables target" },
};

static int tc_act_refused(struct pstate *ps, const char *name, const char *t)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tc_refused_acts); i++)
		if (!strcmp(t, tc_refused_acts[i].name))
			return fail(&ps->e, EOPNOTSUPP, "%s %s: a tc action xtcam "
				    "does not have (%s)", name, t,
				    tc_refused_acts[i].why);
	return 0;
}

/* tc's action forms: `gact drop|pass|ok|shot` and `mirred egress redirect
 * dev IFNAME`.  argv[*ip] is the word after "gact" or "mirred". */
static int parse_tc_action(struct pstate *ps, const char *name,
			   const char *kind, int argc, char **argv, int *ip)
{
	struct xtcam_rule_action *a = &ps->r.action;
	int i = *ip, rc;
	const char *t;

	if (!strcmp(kind, "gact")) {
		if (i >= argc)
			return fail(&ps->e, EINVAL, "%s gact: missing value "
				    "(drop, pass)", name);
		t = argv[i++];
		if (!strcmp(t, "drop") || !strcmp(t, "shot")) {
			a->type = XTCAM_ACT_DROP;
		} else if (!strcmp(t, "pass") || !strcmp(t, "ok")) {
			a->type = XTCAM_ACT_PASS;
		} else {
			rc = tc_act_refused(ps, name, t);
			if (rc)
				return rc;
			return fail(&ps->e, EINVAL, "%s gact: unknown control "
				    "action %s (drop, pass)", name,
				    quote(&ps->e, t));
		}
		*ip = i;
		return 0;
	}
	/* mirred egress|ingress redirect|mirror dev IFNAME */
	if (i >= argc)
		return fail(&ps->e, EINVAL, "%s mirred: missing value (egress "
			    "redirect dev IFNAME)", name);
	t = argv[i++];
	if (!strcmp(t, "ingress"))
		return fail(&ps->e, EOPNOTSUPP, "%s mirred ingress: XDP cannot "
			    "hand a frame to another device's receive path (use "
			    "mirred egress redirect dev IFNAME)", name);
	if (strcmp(t, "egress"))
		return fail(&ps->e, EINVAL, "%s mirred: %s is not egress (mirred "
			    "egress redirect dev IFNAME)", name, quote(&ps->e, t));
	if (i >= argc)
		return fail(&ps->e, EINVAL, "%s mirred egress: missing redirect",
			    name);
	t = argv[i++];
	if (!strcmp(t, "mirror"))
		return fail(&ps->e, EOPNOTSUPP, "%s mirred egress mirror: XDP "
			    "cannot clone a frame (mirred egress redirect moves "
			    "it)", name);
	if (strcmp(t, "redirect"))
		return fail(&ps->e, EINVAL, "%s mirred egress: %s is not redirect",
			    name, quote(&ps->e, t));
	if (i >= argc || strcmp(argv[i], "dev"))
		return fail(&ps->e, EINVAL, "%s mirred egress redirect: needs dev "
			    "IFNAME", name);
	if (++i >= argc)
		return fail(&ps->e, EINVAL, "%s mirred egress redirect dev: "
			    "missing interface name", name);
	if (!ifname_valid(argv[i]))
		return fail(&ps->e, EINVAL, "%s mirred egress redirect dev: %s is "
			    "not an interface name (1-%d characters, no '/', ':' "
			    "or spaces, no leading '#')", name,
			    quote(&ps->e, argv[i]), XTCAM_IFNAME_MAX - 1);
	a->type = XTCAM_ACT_REDIRECT;
	strcpy(a->dev, argv[i++]);
	/* tc's control action after a redirect: stolen is its default */
	if (i < argc && (!strcmp(argv[i], "pipe") || !strcmp(argv[i], "pass") ||
			 !strcmp(argv[i], "ok") || !strcmp(argv[i], "drop") ||
			 !strcmp(argv[i], "shot") || !strcmp(argv[i], "continue") ||
			 !strcmp(argv[i], "reclassify")))
		return fail(&ps->e, EOPNOTSUPP, "%s mirred egress redirect dev "
			    "%s %s: xtcam runs one action per rule (the frame "
			    "leaves by the redirect)", name, a->dev, argv[i]);
	*ip = i;
	return 0;
}

/* action ACTION: argv[*ip] is the word "action"; *ip moves past its
 * arguments. */
static int parse_action(struct pstate *ps, int argc, char **argv, int *ip)
{
	struct xtcam_rule_action *a = &ps->r.action;
	const char *name = argv[*ip], *t;
	int i = *ip + 1, rc;
	uint64_t v;

	if (i >= argc)
		return fail(&ps->e, EINVAL, "%s: missing value (" ACTIONS ")",
			    name);
	t = argv[i++];
	memset(a, 0, sizeof(*a));
	if (!strcmp(t, "drop") || !strcmp(t, "shot")) {
		a->type = XTCAM_ACT_DROP;
	} else if (!strcmp(t, "pass") || !strcmp(t, "ok")) {
		a->type = XTCAM_ACT_PASS;
	} else if (!strcmp(t, "tx")) {
		a->type = XTCAM_ACT_TX;
	} else if (!strcmp(t, "redirect")) {
		a->type = XTCAM_ACT_REDIRECT;
		if (i >= argc || strcmp(argv[i], "dev"))
			return fail(&ps->e, EINVAL, "%s: redirect needs dev "
				    "IFNAME", name);
		if (++i >= argc)
			return fail(&ps->e, EINVAL, "%s: redirect dev: missing "
				    "interface name", name);
		if (!ifname_valid(argv[i]))
			return fail(&ps->e, EINVAL, "%s: redirect dev: %s is not "
				    "an interface name (1-%d characters, no '/', "
				    "':' or spaces, no leading '#')", name, quote(&ps->e, argv[i]),
				    XTCAM_IFNAME_MAX - 1);
		strcpy(a->dev, argv[i++]);
		if (i < argc && !strcmp(argv[i], "netns")) {
			if (++i >= argc)
				return fail(&ps->e, EINVAL, "%s: redirect netns: "
					    "missing namespace name", name);
			if (!netns_valid(argv[i]))
				return fail(&ps->e, EINVAL, "%s: redirect netns: "
					    "%s is not a namespace name (1-%d "
					    "characters, no '/' or spaces, no "
					    "leading '#')", name,
					    quote(&ps->e, argv[i]),
					    XTCAM_NETNS_MAX - 1);
			strcpy(a->netns, argv[i++]);
		}
	} else if (!strcmp(t, "cpu")) {
		a->type = XTCAM_ACT_CPU;
		if (i >= argc)
			return fail(&ps->e, EINVAL, "%s: cpu needs a CPU number "
				    "(0-%d)", name, XTCAM_CPU_MAX);
		rc = get_num(&ps->e, name, argv[i++], 0, XTCAM_CPU_MAX, NB_AUTO, false,
			     "a CPU number", &v);
		if (rc)
			return rc;
		a->cpu = (__u32)v;
	} else if (!strcmp(t, "gact") || !strcmp(t, "mirred")) {
		rc = parse_tc_action(ps, name, t, argc, argv, &i);
		if (rc)
			return rc;
	} else {
		rc = tc_act_refused(ps, name, t);
		if (rc)
			return rc;
		return fail(&ps->e, EINVAL, "%s: unknown action %s (" ACTIONS ")",
			    name, quote(&ps->e, t));
	}
	*ip = i;
	return 0;
}

/* A conflict between keywords a and b, reported on the one given last:
 * "b: WHAT-B conflicts with a (WHAT-A)". */
static int conflict(struct pstate *ps, int a, const char *wa, int b,
		    const char *wb)
{
	if (ps->pos[a] > ps->pos[b]) {
		int t = a;
		const char *tw = wa;

		a = b, wa = wb;
		b = t, wb = tw;
	}
	return fail(&ps->e, EINVAL, "%s: %s conflicts with %s (%s)",
		    ps->spell[b], wb, ps->spell[a], wa);
}

static int prereq(struct pstate *ps, int kw, const char *needs)
{
	char pb[8];

	if (has(ps, XTCAM_KW_IP_PROTO))
		return fail(&ps->e, EINVAL, "%s: needs %s (ip_proto is %s)",
			    ps->spell[kw], needs,
			    ipproto_str(ps->r.value.ip_proto, pb, sizeof(pb)));
	return fail(&ps->e, EINVAL, "%s: needs %s", ps->spell[kw], needs);
}

/*
 * What a keyword says about the L3 protocol (eth_type, after the tags):
 *   ETH    eth_type V:               eth_type is V
 *   ALL    eth_type all:             do not match eth_type (so nothing may
 *                                    imply a value for it)
 *   IMPLY  an address, icmp/icmpv6:  eth_type is V, and we set it
 *   EQ     vlan_ethtype/cvlan_ethtype that is not a tag: eth_type is V
 *   IP     ip_tos/ttl/flags/proto:   eth_type is IPv4 or IPv6
 */
enum l3kind { L3_ETH, L3_ALL, L3_IMPLY, L3_EQ, L3_IP, L3_SET };

/* SET: a match on a header that is not IP (ARP, MPLS, PPPoE, CFM):
 * eth_type is one of set[] (v is set[0]), and we set it. */
struct l3c {
	enum l3kind kind;
	int kw;
	uint16_t v;
	const uint16_t *set;
	char what[96];
};

static const uint16_t l3_arp[] = { ETHT_ARP, ETHT_RARP, 0 };
static const uint16_t l3_mpls[] = { ETHT_MPLS_UC, ETHT_MPLS_MC, 0 };
static const uint16_t l3_pppoe[] = { ETHT_PPP_SES, 0 };
static const uint16_t l3_cfm[] = { ETHT_CFM, 0 };

static bool in_set(const uint16_t *set, uint16_t v)
{
	for (; *set; set++)
		if (*set == v)
			return true;
	return false;
}

static bool l3_compatible(const struct l3c *a, const struct l3c *b)
{
	if (a->kind == L3_SET || b->kind == L3_SET) {
		const struct l3c *x = a->kind == L3_SET ? a : b;
		const struct l3c *y = x == a ? b : a;

		if (y->kind == L3_SET)
			return x->set == y->set;
		if (y->kind == L3_ALL || y->kind == L3_IP)
			return false;
		return in_set(x->set, y->v);
	}
	if (a->kind == L3_ALL || b->kind == L3_ALL)
		return (a->kind == L3_ALL ? b : a)->kind != L3_IMPLY;
	if (a->kind == L3_IP && b->kind == L3_IP)
		return true;
	if (a->kind == L3_IP)
		return is_ip_ethtype(b->v);
	if (b->kind == L3_IP)
		return is_ip_ethtype(a->v);
	return a->v == b->v;
}

static void l3_add(struct pstate *ps, struct l3c *c, size_t *n,
		   enum l3kind kind, int kw, uint16_t v, const char *what)
{
	struct l3c *x;
	size_t i, len;

	/* keep them sorted by position in argv */
	for (i = *n; i > 0 && ps->pos[c[i - 1].kw] > ps->pos[kw]; i--)
		c[i] = c[i - 1];
	x = &c[i];
	x->kind = kind;
	x->kw = kw;
	x->v = v;
	x->set = NULL;
	/* (what snprintf "%s" would do, without its cost on every rule) */
	len = strnlen(what, sizeof(x->what) - 1);
	memcpy(x->what, what, len);
	x->what[len] = '\0';
	(*n)++;
}

static void l3_add_set(struct pstate *ps, struct l3c *c, size_t *n, int kw,
		       const uint16_t *set, const char *what)
{
	size_t i;

	l3_add(ps, c, n, L3_SET, kw, set[0], what);
	for (i = 0; i < *n; i++)
		if (c[i].kw == kw)
			c[i].set = set;
}

static int check_l3(struct pstate *ps)
{
	struct xtcam_rule *r = &ps->r;
	struct l3c c[XTCAM_KW_MAX];
	size_t n = 0, i, j;
	char b[96], eb[8];
	int k;

	if (has(ps, XTCAM_KW_PROTOCOL) && !ps->proto_all && !is_tpid(ps->proto)) {
		snprintf(b, sizeof(b), "%s, outermost: an untagged frame",
			 ethtype_str(ps->proto, eb, sizeof(eb)));
		l3_add(ps, c, &n, L3_ETH, XTCAM_KW_PROTOCOL, ps->proto, b);
	}
	for (k = XTCAM_KW_ARP_OP; k <= XTCAM_KW_ARP_THA; k++)
		if (has(ps, k))
			l3_add_set(ps, c, &n, k, l3_arp, "an ARP match (protocol "
				   "arp or rarp)");
	for (k = XTCAM_KW_MPLS_LABEL; k <= XTCAM_KW_MPLS; k++)
		if (has(ps, k))
			l3_add_set(ps, c, &n, k, l3_mpls, "an MPLS match (protocol "
				   "mpls_uc or mpls_mc): flower reads no IP header "
				   "under MPLS");
	for (k = XTCAM_KW_PPPOE_SID; k <= XTCAM_KW_PPP_PROTO; k++)
		if (has(ps, k))
			l3_add_set(ps, c, &n, k, l3_pppoe, "a PPPoE match "
				   "(protocol ppp_ses): xtcam reads no IP header "
				   "under PPPoE");
	if (has(ps, XTCAM_KW_CFM))
		l3_add_set(ps, c, &n, XTCAM_KW_CFM, l3_cfm, "a CFM match "
			   "(protocol cfm)");
	if (has(ps, XTCAM_KW_ETH_TYPE)) {
		if (ps->eth_all)
			l3_add(ps, c, &n, L3_ALL, XTCAM_KW_ETH_TYPE, 0, "all");
		else
			l3_add(ps, c, &n, L3_ETH, XTCAM_KW_ETH_TYPE,
			       ntohs(r->value.eth_type),
			       ethtype_str(ntohs(r->value.eth_type), eb, sizeof(eb)));
	}
	for (k = 0; k < 2; k++) {
		int kw = k ? XTCAM_KW_DST_IP : XTCAM_KW_SRC_IP;

		if (has(ps, kw))
			l3_add(ps, c, &n, L3_IMPLY, kw,
			       ps->fam[k] == 4 ? ETHT_IPV4 : ETHT_IPV6,
			       ps->fam[k] == 4 ? "IPv4 address" : "IPv6 address");
	}
	if (has(ps, XTCAM_KW_IP_PROTO)) {
		uint8_t p = r->value.ip_proto;

		if (p == PROTO_ICMP) {
			l3_add(ps, c, &n, L3_IMPLY, XTCAM_KW_IP_PROTO, ETHT_IPV4,
			       "icmp, IPv4 only");
		} else if (p == PROTO_ICMPV6) {
			l3_add(ps, c, &n, L3_IMPLY, XTCAM_KW_IP_PROTO, ETHT_IPV6,
			       "icmpv6, IPv6 only");
		} else {
			snprintf(b, sizeof(b), "%s, an IP protocol",
				 ipproto_str(p, eb, sizeof(eb)));
			l3_add(ps, c, &n, L3_IP, XTCAM_KW_IP_PROTO, 0, b);
		}
	}
	for (k = XTCAM_KW_IP_TOS; k <= XTCAM_KW_IP_FLAGS; k++)
		if (has(ps, k))
			l3_add(ps, c, &n, L3_IP, k, 0, "an IP match");
	if (has(ps, XTCAM_KW_VLAN_ETHTYPE) &&
	    !is_tpid(ntohs(r->value.vlan_ethtype)))
		l3_add(ps, c, &n, L3_EQ, XTCAM_KW_VLAN_ETHTYPE,
		       ntohs(r->value.vlan_ethtype),
		       ethtype_str(ntohs(r->value.vlan_ethtype), eb, sizeof(eb)));
	if (has(ps, XTCAM_KW_CVLAN_ETHTYPE))
		l3_add(ps, c, &n, L3_EQ, XTCAM_KW_CVLAN_ETHTYPE,
		       ntohs(r->value.cvlan_ethtype),
		       ethtype_str(ntohs(r->value.cvlan_ethtype), eb, sizeof(eb)));

	/* an IP match beside one of a header that is not IP first: that
	 * message says why (no IP header under MPLS) */
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++)
			if (c[i].kind == L3_SET &&
			    (c[j].kind == L3_IP || c[j].kind == L3_IMPLY))
				return conflict(ps, c[i].kw, c[i].what, c[j].kw,
						c[j].what);
	for (j = 1; j < n; j++)
		for (i = 0; i < j; i++)
			if (!l3_compatible(&c[i], &c[j]))
				return conflict(ps, c[i].kw, c[i].what, c[j].kw,
						c[j].what);

	/* protocol (not a tag), an address or icmp/icmpv6 imply the family;
	 * a match on a header that is not IP, the ethertype the rule gives
	 * for it elsewhere or its only one */
	if (!has(ps, XTCAM_KW_ETH_TYPE)) {
		const struct l3c *set = NULL, *fixed = NULL, *eq = NULL;

		for (i = 0; i < n; i++) {
			if (c[i].kind == L3_SET && !set)
				set = &c[i];
			if ((c[i].kind == L3_ETH || c[i].kind == L3_IMPLY) && !fixed)
				fixed = &c[i];
			if (c[i].kind == L3_EQ && !eq)
				eq = &c[i];
		}
		if (set && !fixed)
			fixed = eq;
		if (set && !fixed && set->set[1])
			return fail(&ps->e, EINVAL, "%s: needs the ethertype: %s",
				    ps->spell[set->kw], set->what);
		if (set && !fixed)
			fixed = set;
		if (fixed) {
			r->value.eth_type = htons(fixed->v);
			r->mask.eth_type = 0xffff;
		}
	}
	return 0;
}

/* What keywords say about the presence flags of the VLAN tags: two that
 * disagree conflict.  protocol and num_of_vlans write theirs. */
struct fdem {
	int kw;
	uint16_t m, v;
	char what[80];
};

static int check_tags(struct pstate *ps)
{
	const uint16_t T1 = XTCAM_F_VLAN1, T2 = XTCAM_F_VLAN2;
	struct xtcam_rule *r = &ps->r;
	struct fdem d[8];
	size_t n = 0, i, j;
	char eb[8];
	int k;

#define DEM(k_, m_, v_, ...) do {					\
		d[n].kw = (k_), d[n].m = (m_), d[n].v = (v_);		\
		snprintf(d[n].what, sizeof(d[n].what), __VA_ARGS__);	\
		n++;							\
	} while (0)
	if (has(ps, XTCAM_KW_PROTOCOL) && !ps->proto_all) {
		if (is_tpid(ps->proto))
			DEM(XTCAM_KW_PROTOCOL, T1 | XTCAM_F_OUTER_AD,
			    T1 | (ps->proto == ETHT_8021AD ? XTCAM_F_OUTER_AD : 0),
			    "%s, outermost: a tagged frame",
			    ethtype_str(ps->proto, eb, sizeof(eb)));
		else
			DEM(XTCAM_KW_PROTOCOL, T1, 0, "%s, outermost: an untagged "
			    "frame (vlan_ethtype says what a tag carries)",
			    ethtype_str(ps->proto, eb, sizeof(eb)));
	}
	if (has(ps, XTCAM_KW_NUM_VLANS))
		DEM(XTCAM_KW_NUM_VLANS, ps->nvlans ? T1 | T2 : T1,
		    ps->nvlans == 2 ? T1 | T2 : ps->nvlans ? T1 : 0,
		    "%u VLAN tags", ps->nvlans);
	if (has(ps, XTCAM_KW_VLAN))
		DEM(XTCAM_KW_VLAN, T1, r->value.flags & T1,
		    "%s", r->value.flags & T1 ? "tagged" : "untagged");
	for (k = XTCAM_KW_VLAN_ID; k <= XTCAM_KW_VLAN_ETHTYPE; k++)
		if (has(ps, k)) {
			DEM(k, T1, T1, "a VLAN tag match");
			break;
		}
	for (k = XTCAM_KW_CVLAN_ID; k <= XTCAM_KW_CVLAN_ETHTYPE; k++)
		if (has(ps, k)) {
			DEM(k, T1 | T2, T1 | T2, "an inner tag match");
			break;
		}
#undef DEM
	for (j = 1; j < n; j++)
		for (i = 0; i < j; i++)
			if (d[i].m & d[j].m & (d[i].v ^ d[j].v))
				return conflict(ps, d[i].kw, d[i].what, d[j].kw,
						d[j].what);
	for (i = 0; i < n; i++)
		if (d[i].kw == XTCAM_KW_PROTOCOL || d[i].kw == XTCAM_KW_NUM_VLANS) {
			r->mask.flags |= d[i].m;
			r->value.flags |= d[i].v;
		}
	return 0;
}

static int check(struct pstate *ps)
{
	struct xtcam_rule *r = &ps->r;
	uint8_t p = r->value.ip_proto;
	char eb[8], w[48];
	int k;

	/* tc's `pref` is optional: the caller gives the rule tc's
	 * automatic priority */
	if (!has(ps, K_PRIO) && !(ps->tc && (ps->tcf & XTCAM_TC_FLOWER)))
		return fail(&ps->e, EINVAL, "prio: required (prio 1-65535)");
	if (!has(ps, K_ACTION))
		return fail(&ps->e, EINVAL, "action: required (action " ACTIONS
			    ")");

	if (has(ps, XTCAM_KW_VLAN) && !(r->value.flags & XTCAM_F_VLAN1))
		for (k = XTCAM_KW_VLAN_ID; k <= XTCAM_KW_CVLAN_ETHTYPE; k++)
			if (has(ps, k))
				return conflict(ps, XTCAM_KW_VLAN, "untagged", k,
						"a VLAN tag match");
	if (has(ps, XTCAM_KW_VLAN_ETHTYPE) &&
	    !is_tpid(ntohs(r->value.vlan_ethtype)))
		for (k = XTCAM_KW_CVLAN_ID; k <= XTCAM_KW_CVLAN_ETHTYPE; k++)
			if (has(ps, k)) {
				snprintf(w, sizeof(w), "%s: no inner tag",
					 ethtype_str(ntohs(r->value.vlan_ethtype),
						     eb, sizeof(eb)));
				return conflict(ps, XTCAM_KW_VLAN_ETHTYPE, w, k,
						"an inner tag match");
			}

	for (k = XTCAM_KW_SRC_PORT; k <= XTCAM_KW_DST_PORT; k++)
		if (has(ps, k) && !(has(ps, XTCAM_KW_IP_PROTO) &&
				    (p == PROTO_TCP || p == PROTO_UDP ||
				     p == PROTO_SCTP || p == PROTO_UDPLITE)))
			return prereq(ps, k, "ip_proto tcp, udp, sctp or udplite");
	if (has(ps, XTCAM_KW_TCP_FLAGS) &&
	    !(has(ps, XTCAM_KW_IP_PROTO) && p == PROTO_TCP))
		return prereq(ps, XTCAM_KW_TCP_FLAGS, "ip_proto tcp");
	for (k = XTCAM_KW_TYPE; k <= XTCAM_KW_CODE; k++)
		if (has(ps, k) && !(has(ps, XTCAM_KW_IP_PROTO) &&
				    (p == PROTO_ICMP || p == PROTO_ICMPV6)))
			return prereq(ps, k, "ip_proto icmp or icmpv6");
	if (has(ps, XTCAM_KW_L2TPV3_SID) &&
	    !(has(ps, XTCAM_KW_IP_PROTO) && p == PROTO_L2TP))
		return prereq(ps, XTCAM_KW_L2TPV3_SID, "ip_proto l2tp");
	if (has(ps, XTCAM_KW_SPI) &&
	    !(has(ps, XTCAM_KW_IP_PROTO) && (p == PROTO_ESP || p == PROTO_AH)))
		return prereq(ps, XTCAM_KW_SPI, "ip_proto esp or ah");
	for (k = XTCAM_KW_MPLS_LABEL; k <= XTCAM_KW_MPLS_TTL; k++)
		if (has(ps, k) && has(ps, XTCAM_KW_MPLS))
			return conflict(ps, k, "the first entry", XTCAM_KW_MPLS,
					"entries by depth (write the first as lse "
					"depth 1)");

	/* ip_flags frag/nofirstfrag: only non-first fragments, which carry
	 * no L4 header, so an L4 field is never present (the parser reads no
	 * ports, TCP flags, ICMP type/code or l4 raw field there) and such a
	 * rule could never match */
	if (has(ps, XTCAM_KW_IP_FLAGS) &&
	    (r->mask.flags & XTCAM_F_FIRSTFRAG) &&
	    !(r->value.flags & XTCAM_F_FIRSTFRAG) &&
	    (r->mask.flags & r->value.flags & XTCAM_F_FRAG)) {
		static const int l4kw[] = {
			XTCAM_KW_SRC_PORT, XTCAM_KW_DST_PORT, XTCAM_KW_TCP_FLAGS,
			XTCAM_KW_TYPE, XTCAM_KW_CODE, XTCAM_KW_L2TPV3_SID,
			XTCAM_KW_SPI,
		};
		const char *later = "frag/nofirstfrag, only non-first fragments, "
				    "which have no L4 header";
		size_t i;

		for (i = 0; i < ARRAY_SIZE(l4kw); i++)
			if (has(ps, l4kw[i]))
				return conflict(ps, XTCAM_KW_IP_FLAGS, later, l4kw[i],
						"an L4 match");
		for (k = 0; k < 2; k++)
			if (has(ps, k ? XTCAM_KW_RAW2 : XTCAM_KW_RAW1) &&
			    ps->blk->raw[k].layer == XTCAM_RAW_L4)
				return conflict(ps, XTCAM_KW_IP_FLAGS, later,
						k ? XTCAM_KW_RAW2 : XTCAM_KW_RAW1,
						"an l4 raw field");
	}

	k = check_tags(ps);
	return k ? k : check_l3(ps);
}

/* The tc filter words `flower`, `skip_hw` and `skip_sw` (argv[i]).
 * Returns 1 if tok is none of them. */
static int tc_word(struct pstate *ps, char **argv, int i)
{
	const char *tok = argv[i];
	unsigned bit;

	if (!strcmp(tok, "flower")) {
		if (ps->tcf & XTCAM_TC_FLOWER)
			return fail(&ps->e, EINVAL, "flower: given twice");
		if (ps->proto_pos < 0)
			return fail(&ps->e, EINVAL, "flower: needs protocol PROTO "
				    "before it, as tc filter add has it (protocol "
				    "all for every frame)");
		ps->tcf |= XTCAM_TC_FLOWER;
		return 0;
	}
	if (!strcmp(tok, "skip_hw"))
		bit = XTCAM_TC_SKIP_HW;
	else if (!strcmp(tok, "skip_sw"))
		bit = XTCAM_TC_SKIP_SW;
	else
		return 1;
	if (!(ps->tcf & XTCAM_TC_FLOWER))
		return fail(&ps->e, EOPNOTSUPP, "%s: a tc-flower filter flag that "
			    "xtcam does not support without protocol PROTO flower "
			    "before it (as tc has it)", tok);
	if (!ps->tc)
		return fail(&ps->e, EOPNOTSUPP, "%s: a tc-flower filter flag that "
			    "xtcam does not support here: xtcam rule add and "
			    "xtcam import tc take it, and check where the block "
			    "runs", tok);
	if (ps->tcf & bit)
		return fail(&ps->e, EINVAL, "%s: given twice", tok);
	if (ps->tcf & (XTCAM_TC_SKIP_HW | XTCAM_TC_SKIP_SW))
		return fail(&ps->e, EINVAL, "%s: conflicts with %s (the rule "
			    "would run nowhere)", tok,
			    bit == XTCAM_TC_SKIP_HW ? "skip_sw" : "skip_hw");
	ps->tcf |= bit;
	return 0;
}

int xtcam_rule_parse_flags(int argc, char **argv, struct xtcam_rule *r,
			   const struct xtcam_block_spec *blk, unsigned flags,
			   char *err, size_t errlen)
{
	return xtcam_rule_parse_tc(argc, argv, r, blk, flags, NULL, err,
				   errlen);
}

int xtcam_rule_parse_tc(int argc, char **argv, struct xtcam_rule *r,
			const struct xtcam_block_spec *blk, unsigned flags,
			unsigned *tc, char *err, size_t errlen)
{
	struct pstate ps;
	int i, rc;

	ectx_init(&ps.e, err, errlen);
	if (!r || argc < 0 || (argc > 0 && !argv))
		return fail(&ps.e, EINVAL, "invalid arguments");
	if (flags & ~XTCAM_PARSE_DECIMAL)
		return fail(&ps.e, EINVAL, "invalid arguments (unknown parse "
			    "flags %#x)", flags & ~XTCAM_PARSE_DECIMAL);
	/* before any handler looks at a word, or at the one after it */
	for (i = 0; i < argc; i++)
		if (!argv[i])
			return fail(&ps.e, EINVAL, "invalid arguments (NULL word)");
	xtcam_rule_init(&ps.r);
	ps.blk = blk;
	ps.given = 0;
	ps.fam[0] = ps.fam[1] = 0;
	ps.eth_all = false;
	ps.proto_all = false;
	ps.proto = 0;
	ps.nvlans = 0;
	ps.flags = flags;
	ps.tc = tc;
	ps.tcf = 0;
	ps.proto_pos = -1;

	for (i = 0; i < argc;) {
		const char *tok = argv[i];
		const struct kwdef *d;
		int k;

		rc = tc_word(&ps, argv, i);
		if (rc <= 0) {
			if (rc)
				return rc;
			i++;
			continue;
		}
		if (!strcmp(tok, "protocol") && ps.proto_pos < 0)
			ps.proto_pos = i;
		d = kw_lookup(tok);
		if (!d)
			return unknown_kw(&ps, tok);
		k = d->kw;
		if (has(&ps, k)) {
			if (strcmp(ps.spell[k], tok))
				return fail(&ps.e, EINVAL, "%s: given twice (also "
					    "as %s)", tok, ps.spell[k]);
			return fail(&ps.e, EINVAL, "%s: given twice", tok);
		}
		ps.given |= 1ull << k;
		ps.pos[k] = i;
		ps.spell[k] = tok;
		if (k == K_ACTION) {
			rc = parse_action(&ps, argc, argv, &i);
			if (rc)
				return rc;
			continue;
		}
		if (k == XTCAM_KW_MPLS || k == XTCAM_KW_CFM) {
			rc = k == XTCAM_KW_MPLS ? parse_mpls(&ps, argc, argv, &i) :
			     parse_cfm(&ps, argc, argv, &i);
			if (rc)
				return rc;
			continue;
		}
		if (i + 1 >= argc)
			return fail(&ps.e, EINVAL, "%s: missing value", tok);
		rc = d->fn(&ps, k, tok, argv[i + 1]);
		if (rc) {
			/* "src_ip dst_ip 10.0.0.1": say what happened */
			if (kw_lookup(argv[i + 1]))
				return fail(&ps.e, EINVAL, "%s: missing value "
					    "(found keyword %s)", tok,
					    quote(&ps.e, argv[i + 1]));
			return rc;
		}
		i += 2;
	}

	rc = check(&ps);
	if (rc)
		return rc;
	ps.r.keywords = ps.given & ((1ull << XTCAM_KW_MAX) - 1);
	*r = ps.r;
	if (tc)
		*tc = ps.tcf;
	return 0;
}

int xtcam_rule_parse(int argc, char **argv, struct xtcam_rule *r,
		     const struct xtcam_block_spec *blk, char *err,
		     size_t errlen)
{
	return xtcam_rule_parse_flags(argc, argv, r, blk, 0, err, errlen);
}

int xtcam_split_words(const char *line, int *argcp, char ***argvp)
{
	size_t n = 0, len, k = 0;
	const char *p;
	char **v, *s;

	if (!line || !argcp || !argvp)
		return -EINVAL;
	for (p = line;;) {
		while (is_space((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			break;
		n++;
		while (*p && !is_space((unsigned char)*p))
			p++;
	}
	if (n >= (size_t)INT32_MAX)
		return -E2BIG;
	len = strlen(line);
	v = malloc((n + 1) * sizeof(*v) + len + 1);
	if (!v)
		return -ENOMEM;
	s = (char *)(v + n + 1);
	for (p = line; k < n;) {
		while (is_space((unsigned char)*p))
			p++;
		v[k++] = s;
		while (*p && !is_space((unsigned char)*p))
			*s++ = *p++;
		*s++ = '\0';
	}
	v[n] = NULL;
	*argcp = (int)n;
	*argvp = v;
	return 0;
}

int xtcam_rule_parse_line_flags(const char *line, struct xtcam_rule *r,
				const struct xtcam_block_spec *blk,
				unsigned flags, char *err, size_t errlen)
{
	struct ectx e;
	char **argv;
	int argc, rc;

	ectx_init(&e, err, errlen);
	if (!line || !r)
		return fail(&e, EINVAL, "invalid arguments");
	if (flags & ~XTCAM_PARSE_DECIMAL)
		return fail(&e, EINVAL, "invalid arguments (unknown parse flags "
			    "%#x)", flags & ~XTCAM_PARSE_DECIMAL);
	rc = xtcam_split_words(line, &argc, &argv);
	if (rc)
		return fail(&e, -rc, "cannot split the line: %s", strerror(-rc));
	if (argc == 0) {
		free(argv);
		return 1;
	}
	rc = xtcam_rule_parse_flags(argc, argv, r, blk, flags, err, errlen);
	free(argv);
	return rc;
}

int xtcam_rule_parse_line(const char *line, struct xtcam_rule *r,
			  const struct xtcam_block_spec *blk, char *err,
			  size_t errlen)
{
	return xtcam_rule_parse_line_flags(line, r, blk, 0, err, errlen);
}

/* --- rule printer --------------------------------------------------------- */

struct sb {
	char *buf;
	size_t len;
	size_t off;
};

static void sbf(struct sb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sbf(struct sb *b, const char *fmt, ...)
{
	size_t room = b->off < b->len ? b->len - b->off : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? b->buf + b->off : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->off += (size_t)n;
}

static void sb_init(struct sb *b, char *buf, size_t len)
{
	b->buf = buf;
	b->len = buf ? len : 0;
	b->off = 0;
	if (b->len)
		buf[0] = '\0';
}

static int sb_end(const struct sb *b)
{
	if (b->off >= b->len || b->off > INT32_MAX)
		return -ENOSPC;
	return (int)b->off;
}

#define KWB(k) XTCAM_KW_BIT(XTCAM_KW_##k)
/* the keywords whose fields are a header that is not IP (key.h) */
#define KW_L3X (KWB(ARP_OP) | KWB(ARP_SIP) | KWB(ARP_TIP) | KWB(ARP_SHA) | \
		KWB(ARP_THA) | KWB(MPLS_LABEL) | KWB(MPLS_TC) | KWB(MPLS_BOS) | \
		KWB(MPLS_TTL) | KWB(MPLS) | KWB(PPPOE_SID) | KWB(PPP_PROTO) | \
		KWB(CFM))

/* A rule whose eth_type gives the IP fields another header's meaning. */
static bool l3x_rule(const struct xtcam_rule *r)
{
	uint16_t t = ntohs(r->value.eth_type);

	return r->mask.eth_type == 0xffff &&
	       (t == ETHT_ARP || t == ETHT_RARP || t == ETHT_MPLS_UC ||
		t == ETHT_MPLS_MC || t == ETHT_PPP_SES || t == ETHT_CFM);
}

static bool eth_implied(const struct xtcam_rule *r)
{
	if (r->keywords & KW_L3X)
		return true;
	if ((r->keywords & KWB(PROTOCOL)) && !(r->mask.flags & XTCAM_F_VLAN1 &
						 r->value.flags))
		return true;
	return xtcam_kw_present(r, XTCAM_KW_SRC_IP) ||
	       xtcam_kw_present(r, XTCAM_KW_DST_IP) ||
	       (xtcam_kw_present(r, XTCAM_KW_IP_PROTO) &&
		(r->value.ip_proto == PROTO_ICMP ||
		 r->value.ip_proto == PROTO_ICMPV6));
}

bool xtcam_kw_present(const struct xtcam_rule *r, enum xtcam_kw kw)
{
	const struct xtcam_key *m = &r->mask;

	if ((unsigned)kw >= XTCAM_KW_MAX)
		return false;
	if (r->keywords & XTCAM_KW_BIT(kw))
		return true;
	/* the later keywords only when given; the first ones also from
	 * their fields, unless a later keyword's match uses those */
	if (kw > XTCAM_KW_RAW2)
		return false;
	if (l3x_rule(r) && (kw == XTCAM_KW_IP_PROTO || kw == XTCAM_KW_SRC_IP ||
			    kw == XTCAM_KW_DST_IP || kw == XTCAM_KW_IP_TOS))
		return false;
	if (kw == XTCAM_KW_VLAN &&
	    (r->keywords & (KWB(PROTOCOL) | KWB(NUM_VLANS))))
		return false;
	if ((kw == XTCAM_KW_SRC_PORT || kw == XTCAM_KW_DST_PORT) &&
	    (r->keywords & (KWB(L2TPV3_SID) | KWB(SPI))))
		return false;
	switch (kw) {
	case XTCAM_KW_SRC_MAC:
		return !all_zero(m->src_mac, 6);
	case XTCAM_KW_DST_MAC:
		return !all_zero(m->dst_mac, 6);
	case XTCAM_KW_VLAN:
		return m->flags & XTCAM_F_VLAN1;
	case XTCAM_KW_VLAN_ID:
		return ntohs(m->vlan_tci) & TCI_VID;
	case XTCAM_KW_VLAN_PRIO:
		return ntohs(m->vlan_tci) & TCI_PRIO;
	case XTCAM_KW_VLAN_ETHTYPE:
		return m->vlan_ethtype;
	case XTCAM_KW_CVLAN_ID:
		return ntohs(m->cvlan_tci) & TCI_VID;
	case XTCAM_KW_CVLAN_PRIO:
		return ntohs(m->cvlan_tci) & TCI_PRIO;
	case XTCAM_KW_CVLAN_ETHTYPE:
		return m->cvlan_ethtype;
	case XTCAM_KW_ETH_TYPE:
		return m->eth_type && !eth_implied(r);
	case XTCAM_KW_IP_PROTO:
		return m->ip_proto;
	case XTCAM_KW_SRC_IP:
		return !all_zero(m->src_ip, sizeof(m->src_ip));
	case XTCAM_KW_DST_IP:
		return !all_zero(m->dst_ip, sizeof(m->dst_ip));
	case XTCAM_KW_IP_TOS:
		return m->ip_tos;
	case XTCAM_KW_IP_TTL:
		return m->ip_ttl;
	case XTCAM_KW_IP_FLAGS:
		return m->flags & (XTCAM_F_FRAG | XTCAM_F_FIRSTFRAG);
	case XTCAM_KW_SRC_PORT:
		return r->sport_lo != 0 || r->sport_hi != 0xffff;
	case XTCAM_KW_DST_PORT:
		return r->dport_lo != 0 || r->dport_hi != 0xffff;
	case XTCAM_KW_TCP_FLAGS:
		return m->tcp_flags;
	case XTCAM_KW_TYPE:
		return m->icmp_type;
	case XTCAM_KW_CODE:
		return m->icmp_code;
	case XTCAM_KW_RAW1:
		return m->raw1;
	case XTCAM_KW_RAW2:
		return m->raw2;
	default:
		break;
	}
	return false;
}

static void fmt_mac(struct sb *b, const __u8 *v, const __u8 *m)
{
	int len = prefix_len(m, 6);

	sbf(b, "%02x:%02x:%02x:%02x:%02x:%02x", v[0], v[1], v[2], v[3], v[4],
	    v[5]);
	if (len == 48)
		return;
	if (len >= 0)
		sbf(b, "/%d", len);
	else
		sbf(b, "/%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
		    m[4], m[5]);
}

/* IPv6 when eth_type says so, or when the address does not fit IPv4. */
static bool rule_is_ipv6(const struct xtcam_rule *r)
{
	if (r->mask.eth_type == 0xffff) {
		if (r->value.eth_type == htons(ETHT_IPV6))
			return true;
		if (r->value.eth_type == htons(ETHT_IPV4))
			return false;
	}
	return !all_zero(&r->value.src_ip[1], 12) ||
	       !all_zero(&r->mask.src_ip[1], 12) ||
	       !all_zero(&r->value.dst_ip[1], 12) ||
	       !all_zero(&r->mask.dst_ip[1], 12);
}

static void fmt_ip(struct sb *b, const struct xtcam_rule *r, const __be32 *v,
		   const __be32 *m)
{
	bool v6 = rule_is_ipv6(r);
	int af = v6 ? AF_INET6 : AF_INET;
	size_t n = v6 ? 16 : 4;
	char a[INET6_ADDRSTRLEN];
	int len = prefix_len((const uint8_t *)m, n);

	if (!inet_ntop(af, v, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	sbf(b, "%s", a);
	if (len == (int)n * 8)
		return;
	if (len >= 0) {
		sbf(b, "/%d", len);
		return;
	}
	if (!inet_ntop(af, m, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	sbf(b, "/%s", a);
}

/* VALUE[/MASK], each in decimal or 0x hex: hex where tc-flower reads the
 * field in hex, so the text means the same to tc, to xtcam and to an older
 * xtcam that read every number as decimal. */
static void fmt_masked(struct sb *b, unsigned v, unsigned m, unsigned full,
		       bool vhex, bool mhex)
{
	sbf(b, vhex ? "%#x" : "%u", v);
	if (m != full)
		sbf(b, mhex ? "/%#x" : "/%u", m);
}

static void fmt_ethtype(struct sb *b, __be16 v)
{
	char eb[8];

	sbf(b, "%s", ethtype_str(ntohs(v), eb, sizeof(eb)));
}

static void fmt_ip4(struct sb *b, const __be32 *v, const __be32 *m)
{
	char a[INET_ADDRSTRLEN];
	int len = prefix_len((const uint8_t *)m, 4);

	if (!inet_ntop(AF_INET, v, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	sbf(b, "%s", a);
	if (len == 32)
		return;
	if (len >= 0) {
		sbf(b, "/%d", len);
		return;
	}
	if (!inet_ntop(AF_INET, m, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	sbf(b, "/%s", a);
}

/* The keywords after raw2. */
static void fmt_kw2(struct sb *b, const struct xtcam_rule *r, int kw)
{
	const struct xtcam_key *v = &r->value, *m = &r->mask;
	uint32_t w = ntohl(v->src_ip[0]);
	char eb[IF_NAMESIZE > 8 ? IF_NAMESIZE : 8];
	size_t f, i;

	switch (kw) {
	case XTCAM_KW_PROTOCOL:
		if (m->flags & XTCAM_F_OUTER_AD)
			sbf(b, "%s", v->flags & XTCAM_F_OUTER_AD ? "802.1ad" :
			    "802.1Q");
		else if (m->eth_type && (m->flags & XTCAM_F_VLAN1))
			fmt_ethtype(b, v->eth_type);
		else
			sbf(b, "all");
		break;
	case XTCAM_KW_NUM_VLANS:
		sbf(b, "%u", (m->flags & XTCAM_F_VLAN2) && (v->flags & XTCAM_F_VLAN2) ?
		    2u : (v->flags & XTCAM_F_VLAN1) ? 1u : 0u);
		break;
	case XTCAM_KW_ARP_OP:
		if (m->ip_proto == 0xff && (v->ip_proto == 1 || v->ip_proto == 2))
			sbf(b, "%s", v->ip_proto == 1 ? "request" : "reply");
		else
			fmt_masked(b, v->ip_proto, m->ip_proto, 0xff, false, true);
		break;
	case XTCAM_KW_ARP_SIP:
		fmt_ip4(b, &v->src_ip[0], &m->src_ip[0]);
		break;
	case XTCAM_KW_ARP_TIP:
		fmt_ip4(b, &v->dst_ip[0], &m->dst_ip[0]);
		break;
	case XTCAM_KW_ARP_SHA:
		fmt_mac(b, (const __u8 *)v->src_ip + 4, (const __u8 *)m->src_ip + 4);
		break;
	case XTCAM_KW_ARP_THA:
		fmt_mac(b, (const __u8 *)v->dst_ip + 4, (const __u8 *)m->dst_ip + 4);
		break;
	case XTCAM_KW_MPLS_LABEL:
	case XTCAM_KW_MPLS_TC:
	case XTCAM_KW_MPLS_BOS:
	case XTCAM_KW_MPLS_TTL:
		f = (size_t)(kw - XTCAM_KW_MPLS_LABEL);
		sbf(b, "%u", (w >> lse_fields[f].shift) & lse_fields[f].max);
		break;
	case XTCAM_KW_MPLS: {
		const char *sep = "";

		for (i = 0; i < XTCAM_MAX_MPLS; i++) {
			uint32_t lv = ntohl(v->src_ip[i]), lm = ntohl(m->src_ip[i]);

			if (!(m->ip_proto & (1u << i)))
				continue;
			sbf(b, "%slse depth %zu", sep, i + 1);
			sep = " ";
			for (f = 0; f < ARRAY_SIZE(lse_fields); f++)
				if ((lm >> lse_fields[f].shift) & lse_fields[f].max)
					sbf(b, " %s %u", lse_fields[f].name,
					    (lv >> lse_fields[f].shift) &
					    lse_fields[f].max);
		}
		break;
	}
	case XTCAM_KW_PPPOE_SID:
		sbf(b, "%u", w >> 16);
		break;
	case XTCAM_KW_PPP_PROTO:
		for (i = 0; i < PPP_PRINTED; i++)
			if (ppp_protos[i].v == (w & 0xffff))
				break;
		if (i < PPP_PRINTED)
			sbf(b, "%s", ppp_protos[i].name);
		else
			sbf(b, "%#06x", w & 0xffff);
		break;
	case XTCAM_KW_L2TPV3_SID:
		sbf(b, "%u", (unsigned)r->sport_lo << 16 | r->dport_lo);
		break;
	case XTCAM_KW_SPI:
		sbf(b, "%#x", (unsigned)r->sport_lo << 16 | r->dport_lo);
		break;
	case XTCAM_KW_CFM: {
		const char *sep = "";

		if (m->ip_tos) {
			sbf(b, "mdl %u", v->ip_tos >> 5);
			sep = " ";
		}
		if (m->ip_proto)
			sbf(b, "%sop %u", sep, v->ip_proto);
		break;
	}
	case XTCAM_KW_INDEV:
		if (v->ifindex && if_indextoname(v->ifindex, eb))
			sbf(b, "%s", eb);
		else
			sbf(b, "ifindex/%u", v->ifindex);
		break;
	}
}

static void fmt_kw(struct sb *b, const struct xtcam_rule *r,
		   const struct xtcam_block_spec *blk, int kw)
{
	const struct xtcam_key *v = &r->value, *m = &r->mask;
	char pb[8];

	switch (kw) {
	case XTCAM_KW_SRC_MAC:
		fmt_mac(b, v->src_mac, m->src_mac);
		break;
	case XTCAM_KW_DST_MAC:
		fmt_mac(b, v->dst_mac, m->dst_mac);
		break;
	case XTCAM_KW_VLAN:
		sbf(b, "%s", v->flags & XTCAM_F_VLAN1 ? "tagged" : "untagged");
		break;
	case XTCAM_KW_VLAN_ID:
		sbf(b, "%u", ntohs(v->vlan_tci) & TCI_VID);
		break;
	case XTCAM_KW_VLAN_PRIO:
		sbf(b, "%u", ntohs(v->vlan_tci) >> TCI_PRIO_SHIFT);
		break;
	case XTCAM_KW_VLAN_ETHTYPE:
		fmt_ethtype(b, v->vlan_ethtype);
		break;
	case XTCAM_KW_CVLAN_ID:
		sbf(b, "%u", ntohs(v->cvlan_tci) & TCI_VID);
		break;
	case XTCAM_KW_CVLAN_PRIO:
		sbf(b, "%u", ntohs(v->cvlan_tci) >> TCI_PRIO_SHIFT);
		break;
	case XTCAM_KW_CVLAN_ETHTYPE:
		fmt_ethtype(b, v->cvlan_ethtype);
		break;
	case XTCAM_KW_ETH_TYPE:
		if (!m->eth_type)
			sbf(b, "all");
		else
			fmt_ethtype(b, v->eth_type);
		break;
	case XTCAM_KW_IP_PROTO:
		sbf(b, "%s", ipproto_str(v->ip_proto, pb, sizeof(pb)));
		break;
	case XTCAM_KW_SRC_IP:
		fmt_ip(b, r, v->src_ip, m->src_ip);
		break;
	case XTCAM_KW_DST_IP:
		fmt_ip(b, r, v->dst_ip, m->dst_ip);
		break;
	case XTCAM_KW_IP_TOS:
		fmt_masked(b, v->ip_tos, m->ip_tos, 0xff, true, true);
		break;
	case XTCAM_KW_IP_TTL:
		fmt_masked(b, v->ip_ttl, m->ip_ttl, 0xff, false, true);
		break;
	case XTCAM_KW_IP_FLAGS: {
		const char *sep = "";

		if (m->flags & XTCAM_F_FRAG) {
			sbf(b, "%s", v->flags & XTCAM_F_FRAG ? "frag" : "nofrag");
			sep = "/";
		}
		if (m->flags & XTCAM_F_FIRSTFRAG)
			sbf(b, "%s%s", sep, v->flags & XTCAM_F_FIRSTFRAG ?
			    "firstfrag" : "nofirstfrag");
		break;
	}
	case XTCAM_KW_SRC_PORT:
	case XTCAM_KW_DST_PORT: {
		unsigned lo = kw == XTCAM_KW_SRC_PORT ? r->sport_lo : r->dport_lo;
		unsigned hi = kw == XTCAM_KW_SRC_PORT ? r->sport_hi : r->dport_hi;

		if (lo == hi)
			sbf(b, "%u", lo);
		else
			sbf(b, "%u-%u", lo, hi);
		break;
	}
	case XTCAM_KW_TCP_FLAGS:
		fmt_masked(b, ntohs(v->tcp_flags), ntohs(m->tcp_flags),
			   TCP_FLAGS_MAX, true, true);
		break;
	case XTCAM_KW_TYPE:
		fmt_masked(b, v->icmp_type, m->icmp_type, 0xff, false, false);
		break;
	case XTCAM_KW_CODE:
		fmt_masked(b, v->icmp_code, m->icmp_code, 0xff, false, false);
		break;
	case XTCAM_KW_RAW1:
	case XTCAM_KW_RAW2: {
		int idx = kw == XTCAM_KW_RAW1 ? 0 : 1;
		uint32_t rv = ntohl(idx ? v->raw2 : v->raw1);
		uint32_t rm = ntohl(idx ? m->raw2 : m->raw1);
		/* without the block's length, always show the mask */
		uint64_t full = blk && blk->raw[idx].layer != XTCAM_RAW_NONE &&
				blk->raw[idx].len >= 1 && blk->raw[idx].len <= 4 ?
				raw_full(blk->raw[idx].len) : UINT64_MAX;

		sbf(b, "%#x", rv);
		if (rm != full)
			sbf(b, "/%#x", rm);
		break;
	}
	default:
		fmt_kw2(b, r, kw);
		break;
	}
}

int xtcam_kw_format(const struct xtcam_rule *r,
		    const struct xtcam_block_spec *blk, enum xtcam_kw kw,
		    char *buf, size_t len)
{
	struct sb b;

	sb_init(&b, buf, len);
	if (!r || (unsigned)kw >= XTCAM_KW_MAX)
		return -EINVAL;
	fmt_kw(&b, r, blk, kw);
	return sb_end(&b);
}

static int fmt_action(struct sb *b, const struct xtcam_rule_action *a)
{
	switch (a->type) {
	case XTCAM_ACT_DROP:
	case XTCAM_ACT_PASS:
	case XTCAM_ACT_TX:
		sbf(b, "%s", act_names[a->type]);
		return 0;
	case XTCAM_ACT_REDIRECT:
		if (!a->dev[0])
			return -EINVAL;
		sbf(b, "redirect dev %.*s", (int)sizeof(a->dev), a->dev);
		if (a->netns[0])
			sbf(b, " netns %.*s", (int)sizeof(a->netns), a->netns);
		return 0;
	case XTCAM_ACT_CPU:
		sbf(b, "cpu %u", a->cpu);
		return 0;
	}
	return -EINVAL;
}

int xtcam_action_format(const struct xtcam_rule_action *a, char *buf,
			size_t len)
{
	struct sb b;
	int rc;

	sb_init(&b, buf, len);
	if (!a)
		return -EINVAL;
	rc = fmt_action(&b, a);
	return rc ? rc : sb_end(&b);
}

/* The printing order: protocol first, as tc has it, then enum order. */
static int kw_order(int i)
{
	if (i == 0)
		return XTCAM_KW_PROTOCOL;
	return i <= XTCAM_KW_PROTOCOL ? i - 1 : i;
}

int xtcam_rule_format(const struct xtcam_rule *r,
		      const struct xtcam_block_spec *blk, char *buf,
		      size_t len)
{
	struct sb b;
	int i, kw, rc;

	sb_init(&b, buf, len);
	if (!r)
		return -EINVAL;
	sbf(&b, "prio %u", r->prio);
	if (r->handle)
		sbf(&b, " handle %u", r->handle);
	for (i = 0; i < XTCAM_KW_MAX; i++) {
		kw = kw_order(i);
		if (!xtcam_kw_present(r, kw))
			continue;
		sbf(&b, " %s ", kw_names[kw]);
		fmt_kw(&b, r, blk, kw);
	}
	sbf(&b, " action ");
	rc = fmt_action(&b, &r->action);
	return rc ? rc : sb_end(&b);
}

/* --- JSON ----------------------------------------------------------------- */

static int jadd(struct json_object *o, const char *k, struct json_object *v)
{
	if (!v || json_object_object_add(o, k, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *jfail(struct json_object *o, int rc)
{
	json_object_put(o);
	errno = -rc;
	return NULL;
}

/* fn(arg, name, value) for each match of r, in the order of the
 * language; stops at fn's first non-zero return, which it returns. */
static int each_match(const struct xtcam_rule *r, const struct xtcam_block_spec *blk,
		      int (*fn)(void *arg, const char *name, const char *value), void *arg)
{
	char v[256];
	int i, kw, rc;

	for (i = 0; i < XTCAM_KW_MAX; i++) {
		kw = kw_order(i);
		if (!xtcam_kw_present(r, kw))
			continue;
		rc = xtcam_kw_format(r, blk, kw, v, sizeof(v));
		if (rc < 0)
			return rc;
		rc = fn(arg, kw_names[kw], v);
		if (rc)
			return rc;
	}
	return 0;
}

int xtcam_rule_match_each(const struct xtcam_rule *r, const struct xtcam_block_spec *blk,
			  int (*fn)(void *arg, const char *name, const char *value), void *arg)
{
	return r ? each_match(r, blk, fn, arg) : -EINVAL;
}

static int match_to_json(void *arg, const char *name, const char *value)
{
	return jadd(arg, name, json_object_new_string(value));
}

struct json_object *xtcam_rule_match_json(const struct xtcam_rule *r,
					  const struct xtcam_block_spec *blk)
{
	struct json_object *o;
	int rc;

	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	o = json_object_new_object();
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	rc = each_match(r, blk, match_to_json, o);
	return rc ? jfail(o, rc) : o;
}

struct match_text {
	char *buf;
	size_t len, o;
};

static int match_to_text(void *arg, const char *name, const char *value)
{
	struct match_text *t = arg;
	size_t ln = strlen(name), lv = strlen(value);

	if (ln + lv + 2 >= t->len - t->o)
		return -ENOSPC;
	t->buf[t->o++] = ' ';
	memcpy(t->buf + t->o, name, ln);
	t->o += ln;
	t->buf[t->o++] = ' ';
	memcpy(t->buf + t->o, value, lv + 1);
	t->o += lv;
	return 0;
}

int xtcam_rule_match_format(const struct xtcam_rule *r, const struct xtcam_block_spec *blk,
			    char *buf, size_t len)
{
	struct match_text t = { buf, len, 0 };
	int rc;

	if (!r || !buf || !len)
		return -EINVAL;
	buf[0] = 0;
	rc = each_match(r, blk, match_to_text, &t);
	return rc ? rc : (int)t.o;
}

struct json_object *xtcam_action_json(const struct xtcam_rule_action *a)
{
	struct json_object *o;
	int rc;

	if (!a) {
		errno = EINVAL;
		return NULL;
	}
	o = json_object_new_object();
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	rc = jadd(o, "type", json_object_new_string(xtcam_action_name(a->type)));
	if (!rc && a->type == XTCAM_ACT_REDIRECT) {
		char dev[XTCAM_IFNAME_MAX + 1], ns[XTCAM_NETNS_MAX + 1];

		snprintf(dev, sizeof(dev), "%.*s", (int)sizeof(a->dev), a->dev);
		snprintf(ns, sizeof(ns), "%.*s", (int)sizeof(a->netns), a->netns);
		rc = jadd(o, "dev", json_object_new_string(dev));
		if (!rc && ns[0])
			rc = jadd(o, "netns", json_object_new_string(ns));
	} else if (!rc && a->type == XTCAM_ACT_CPU) {
		char cpu[16];

		snprintf(cpu, sizeof(cpu), "%u", a->cpu);
		rc = jadd(o, "cpu", json_object_new_string(cpu));
	}
	if (rc)
		return jfail(o, rc);
	return o;
}

struct json_object *xtcam_rule_json(const struct xtcam_rule *r,
				    const struct xtcam_block_spec *blk)
{
	struct json_object *o, *m, *a;
	int rc;

	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	o = json_object_new_object();
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	rc = jadd(o, "prio", json_object_new_int64(r->prio));
	if (!rc)
		rc = jadd(o, "handle", json_object_new_int64(r->handle));
	if (rc)
		return jfail(o, rc);
	m = xtcam_rule_match_json(r, blk);
	if (!m)
		return jfail(o, -errno);
	rc = jadd(o, "match", m);
	if (rc)
		return jfail(o, rc);
	a = xtcam_action_json(&r->action);
	if (!a)
		return jfail(o, -errno);
	rc = jadd(o, "action", a);
	if (rc)
		return jfail(o, rc);
	return o;
}

/* --- blocks --------------------------------------------------------------- */

static int name_check(struct ectx *e, const char *name)
{
	size_t n, i;

	if (!name || !name[0])
		return fail(e, EINVAL, "block name: empty");
	n = strlen(name);
	if (n >= XTCAM_NAME_MAX)
		return fail(e, EINVAL, "block name %s: longer than %d characters",
			    quote(e, name), XTCAM_NAME_MAX - 1);
	if (name[0] == '.' || name[0] == '-')
		return fail(e, EINVAL, "block name %s: must not start with '%c'",
			    quote(e, name), name[0]);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		char cb[8];

		if (is_alnum(c) || c == '_' || c == '.' || c == '-')
			continue;
		if (c > 0x20 && c < 0x7f && c != '\'')
			snprintf(cb, sizeof(cb), "'%c'", c);
		else
			snprintf(cb, sizeof(cb), "\\x%02x", c);
		return fail(e, EINVAL, "block name %s: %s is not allowed (only "
			    "A-Z a-z 0-9 _ . -)", quote(e, name), cb);
	}
	return 0;
}

bool xtcam_name_valid(const char *name)
{
	struct ectx e;

	ectx_init(&e, NULL, 0);
	return name_check(&e, name) == 0;
}

int xtcam_name_check(const char *name, char *err, size_t errlen)
{
	struct ectx e;

	ectx_init(&e, err, errlen);
	return name_check(&e, name);
}

void xtcam_block_spec_init(struct xtcam_block_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->capacity = XTCAM_DEFAULT_CAPACITY;
	spec->dflt.type = XTCAM_ACT_PASS;
}

static const char *const block_opts[] = {
	"capacity", "default", "raw1", "raw2",
};

int xtcam_block_spec_parse(int argc, char **argv,
			   struct xtcam_block_spec *spec, char *err,
			   size_t errlen)
{
	struct xtcam_block_spec s;
	unsigned given = 0;
	struct ectx e;
	uint64_t v;
	int i, rc;

	ectx_init(&e, err, errlen);
	if (!spec || argc < 0 || (argc > 0 && !argv))
		return fail(&e, EINVAL, "invalid arguments");
	for (i = 0; i < argc; i++)
		if (!argv[i])
			return fail(&e, EINVAL, "invalid arguments (NULL word)");
	if (argc < 1)
		return fail(&e, EINVAL, "block name: missing");
	rc = name_check(&e, argv[0]);
	if (rc)
		return rc;
	xtcam_block_spec_init(&s);
	strcpy(s.name, argv[0]);

	for (i = 1; i < argc;) {
		const char *tok = argv[i], *hint;
		size_t o;

		for (o = 0; o < ARRAY_SIZE(block_opts); o++)
			if (!strcmp(tok, block_opts[o]))
				break;
		if (o == ARRAY_SIZE(block_opts)) {
			hint = suggest(tok, block_opts, ARRAY_SIZE(block_opts));
			if (hint)
				return fail(&e, EINVAL, "unknown block option %s "
					    "(did you mean \"%s\"?)",
					    quote(&e, tok), hint);
			return fail(&e, EINVAL, "unknown block option %s "
				    "(capacity, default, raw1, raw2)",
				    quote(&e, tok));
		}
		if (given & (1u << o))
			return fail(&e, EINVAL, "%s: given twice", tok);
		given |= 1u << o;
		if (o >= 2) {
			struct xtcam_raw_spec *rs = &s.raw[o - 2];
			const char *l;
			uint64_t off, len;
			int layer;

			if (i + 3 >= argc)
				return fail(&e, EINVAL, "%s: missing value (%s "
					    "l2|l3|l4 OFFSET LENGTH)", tok, tok);
			l = argv[i + 1];
			for (layer = XTCAM_RAW_L2; layer <= XTCAM_RAW_L4; layer++)
				if (!strcmp(l, raw_layers[layer]))
					break;
			if (layer > XTCAM_RAW_L4)
				return fail(&e, EINVAL, "%s: layer %s is not l2, "
					    "l3 or l4", tok, quote(&e, l));
			rc = get_num(&e, tok, argv[i + 2], 0, XTCAM_RAW_MAX_OFF - 1,
				     NB_AUTO, false, "an offset", &off);
			if (!rc)
				rc = get_num(&e, tok, argv[i + 3], 1, 4, NB_AUTO, false,
					     "a length in bytes", &len);
			if (rc)
				return rc;
			rs->layer = (__u8)layer;
			rs->offset = (__u16)off;
			rs->len = (__u8)len;
			i += 4;
			continue;
		}
		if (i + 1 >= argc)
			return fail(&e, EINVAL, "%s: missing value", tok);
		if (o == 0) {
			rc = get_num(&e, tok, argv[i + 1], 1, XTCAM_MAX_CAPACITY,
				     NB_AUTO, false, "a capacity", &v);
			if (rc)
				return rc;
			s.capacity = (__u32)v;
		} else if (!strcmp(argv[i + 1], "pass")) {
			s.dflt.type = XTCAM_ACT_PASS;
		} else if (!strcmp(argv[i + 1], "drop")) {
			s.dflt.type = XTCAM_ACT_DROP;
		} else {
			return fail(&e, EINVAL, "%s: %s is not a default action "
				    "(pass or drop)", tok, quote(&e, argv[i + 1]));
		}
		i += 2;
	}
	*spec = s;
	return 0;
}

static bool raw_spec_ok(const struct xtcam_raw_spec *rs)
{
	if (rs->layer == XTCAM_RAW_NONE)
		return true;
	return rs->layer <= XTCAM_RAW_L4 && rs->len >= 1 && rs->len <= 4 &&
	       rs->offset < XTCAM_RAW_MAX_OFF;
}

static bool spec_printable(const struct xtcam_block_spec *spec)
{
	char name[XTCAM_NAME_MAX];

	if (!memchr(spec->name, '\0', sizeof(spec->name)))
		return false;
	memcpy(name, spec->name, sizeof(name));
	return xtcam_name_valid(name) && spec->capacity >= 1 &&
	       spec->capacity <= XTCAM_MAX_CAPACITY &&
	       (spec->dflt.type == XTCAM_ACT_PASS ||
		spec->dflt.type == XTCAM_ACT_DROP) &&
	       raw_spec_ok(&spec->raw[0]) && raw_spec_ok(&spec->raw[1]);
}

int xtcam_block_spec_format(const struct xtcam_block_spec *spec, char *buf,
			    size_t len)
{
	struct sb b;
	int i;

	sb_init(&b, buf, len);
	if (!spec || !spec_printable(spec))
		return -EINVAL;
	sbf(&b, "%s capacity %u default %s", spec->name, spec->capacity,
	    act_names[spec->dflt.type]);
	for (i = 0; i < 2; i++) {
		const struct xtcam_raw_spec *rs = &spec->raw[i];

		if (rs->layer != XTCAM_RAW_NONE)
			sbf(&b, " raw%d %s %u %u", i + 1, raw_layers[rs->layer],
			    rs->offset, rs->len);
	}
	return sb_end(&b);
}

struct json_object *xtcam_block_spec_json(const struct xtcam_block_spec *spec)
{
	struct json_object *o, *r;
	int i, rc;

	if (!spec || !spec_printable(spec)) {
		errno = EINVAL;
		return NULL;
	}
	o = json_object_new_object();
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	rc = jadd(o, "name", json_object_new_string(spec->name));
	if (!rc)
		rc = jadd(o, "capacity", json_object_new_int64(spec->capacity));
	if (!rc)
		rc = jadd(o, "default",
			  json_object_new_string(act_names[spec->dflt.type]));
	for (i = 0; i < 2 && !rc; i++) {
		const struct xtcam_raw_spec *rs = &spec->raw[i];

		if (rs->layer == XTCAM_RAW_NONE)
			continue;
		r = json_object_new_object();
		rc = r ? 0 : -ENOMEM;
		if (!rc)
			rc = jadd(r, "layer",
				  json_object_new_string(raw_layers[rs->layer]));
		if (!rc)
			rc = jadd(r, "offset", json_object_new_int64(rs->offset));
		if (!rc)
			rc = jadd(r, "len", json_object_new_int64(rs->len));
		if (rc) {
			json_object_put(r);
			break;
		}
		rc = jadd(o, i ? "raw2" : "raw1", r);
	}
	if (rc)
		return jfail(o, rc);
	return o;
}
