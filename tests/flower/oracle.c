// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The cls_flower differential test's generator, sender and judge
 * (tests/flower/oracle.sh drives it; see the comment there).
 *
 *   flower-oracle gen DIR SEED NRULES NFRAMES KEYS
 *       writes the rounds of the test into DIR: round R is DIR/R.tc (tc
 *       lines as a tc user has them, for device d0), DIR/R.frames (the
 *       frames, each a 2-byte big-endian length and the bytes) and
 *       DIR/R.desc (one line per frame saying what it is); DIR/rounds
 *       lists the rounds.  Round "gen" has NRULES generated rules and
 *       NFRAMES frames; the rounds "st-*" are the rules and frames of the
 *       kernel's selftest tc_flower.sh.  KEYS is a comma list of the match
 *       groups the rules may use (base, arp, mpls, pppoe, vlans, indev).
 *   flower-oracle send DEV FILE [FIRST [COUNT]]
 *       sends the frames of FILE (all, or COUNT from index FIRST) out of
 *       DEV (AF_PACKET, in the caller's network namespace).
 *   flower-oracle compare TC_BEFORE TC_AFTER XT_BEFORE XT_AFTER TCFILE NFRAMES
 *       reads `tc -s -j filter show` and `xtcam -j rule show` taken
 *       before and after the frames were sent, and compares each rule's
 *       packet delta (rules are matched by pref = prio); every frame must
 *       be counted by exactly one rule on each side (the last rule of a
 *       round matches everything).  Prints each rule that differs with
 *       its tc line; exit 1 when one does.
 *   flower-oracle delta TC_BEFORE TC_AFTER XT_BEFORE XT_AFTER PREF
 *       prints "TC XT", the two packet deltas of one rule.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#define FMAX 2048

/* ---- random numbers: xorshift64*, reproducible from the seed ---------- */
static uint64_t rs = 88172645463325252ull;

static uint32_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return (uint32_t)((rs * 2685821657736338717ull) >> 32);
}

static uint32_t rn(uint32_t n) { return n ? rnd() % n : 0; }
static bool pct(unsigned int p) { return rn(100) < p; }
#define PICK(a) ((a)[rn(sizeof(a) / sizeof((a)[0]))])

/* ---- frames ------------------------------------------------------------ */
enum { L3_IP4 = 1, L3_IP6, L3_ARP, L3_MPLS, L3_PPPOE, L3_OTHER };

struct spec {
	uint8_t dst[6], src[6];
	int ntag;
	uint16_t tpid[2], tci[2];
	int l3;
	uint16_t ethtype;          /* L3_OTHER's ethertype */
	/* IP (also inside PPPoE: ppp_ip) */
	int v6;
	uint8_t sip[16], dip[16];
	uint8_t tos, ttl, proto;
	int ipopt;                 /* IPv4 option bytes */
	int hbh;                   /* IPv6 hop-by-hop header */
	int frag;                  /* 0 none, 1 first fragment, 2 later one */
	int datalen;               /* IP datagram length (0: headers + payload) */
	uint16_t sport, dport, tcpflags;
	uint8_t itype, icode;
	int payload;
	/* ARP */
	uint16_t arp_op;
	uint8_t sha[6], tha[6], spa[4], tpa[4];
	/* MPLS */
	int nlse;
	uint32_t label[3];
	uint8_t mtc[3], mbos[3], mttl[3];
	/* PPPoE session */
	uint16_t sid, ppp_proto;
};

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }

static uint16_t csum(const uint8_t *p, int n)
{
	uint32_t s = 0;

	for (int i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static bool has_l4(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 132 || proto == 1 || proto == 58;
}

/* the IP datagram (header, L4, payload) at p; its length */
static int build_ip(const struct spec *s, uint8_t *p)
{
	uint8_t l4[64];
	int l4len = 0, hl, n, i;

	memset(l4, 0, sizeof(l4));
	if (s->frag != 2) {
		switch (s->proto) {
		case 6:
			put16(l4, s->sport);
			put16(l4 + 2, s->dport);
			put32(l4 + 4, 0x11223344);
			put16(l4 + 12, (uint16_t)(5 << 12 | (s->tcpflags & 0xfff)));
			put16(l4 + 14, 512);
			l4len = 20;
			break;
		case 17:
		case 132:
			put16(l4, s->sport);
			put16(l4 + 2, s->dport);
			l4len = s->proto == 17 ? 8 : 12;
			break;
		case 1:
		case 58:
			l4[0] = s->itype;
			l4[1] = s->icode;
			l4len = 8;
			break;
		}
	}
	if (s->v6) {
		int off = 40;
		uint8_t nh = s->proto;

		p[0] = (uint8_t)(0x60 | s->tos >> 4);
		p[1] = (uint8_t)(s->tos << 4);
		p[2] = 0x12;
		p[3] = 0x34;
		p[7] = s->ttl;
		memcpy(p + 8, s->sip, 16);
		memcpy(p + 24, s->dip, 16);
		if (s->frag) {
			/* fragment header: M=1 on the first, offset 185*8 on a later one */
			uint8_t *f = p + off + (s->hbh ? 8 : 0);

			f[0] = nh;
			f[1] = 0;
			put16(f + 2, s->frag == 1 ? 1 : (uint16_t)(185 << 3));
			put32(f + 4, 0xabcd);
			nh = 44;
		}
		if (s->hbh) {
			p[off] = nh;
			p[off + 1] = 0;
			p[off + 2] = 1;  /* PadN, 4 bytes */
			p[off + 3] = 4;
			nh = 0;
		}
		p[6] = nh;
		hl = 40 + (s->hbh ? 8 : 0) + (s->frag ? 8 : 0);
	} else {
		hl = 20 + s->ipopt;
		p[0] = (uint8_t)(0x40 | hl / 4);
		p[1] = s->tos;
		put16(p + 4, 0x4242);
		put16(p + 6, s->frag == 1 ? 0x2000 : s->frag == 2 ? 185 : 0);
		p[8] = s->ttl;
		p[9] = s->proto;
		memcpy(p + 12, s->sip, 4);
		memcpy(p + 16, s->dip, 4);
		memset(p + 20, 1, (size_t)s->ipopt);  /* NOPs */
	}
	memcpy(p + hl, l4, (size_t)l4len);
	n = hl + l4len;
	for (i = 0; i < s->payload; i++)
		p[n + i] = (uint8_t)(0xa0 + i);
	n += s->payload;
	if (s->datalen > n) {
		memset(p + n, 0x5a, (size_t)(s->datalen - n));
		n = s->datalen;
	}
	if (s->v6) {
		put16(p + 4, (uint16_t)(n - 40));
	} else {
		put16(p + 2, (uint16_t)n);
		put16(p + 10, 0);
		put16(p + 10, csum(p, hl));
	}
	if (s->frag != 2 && (s->proto == 1) && l4len)
		put16(p + hl + 2, csum(p + hl, n - hl));
	return n;
}

static int build(const struct spec *s, uint8_t *b)
{
	int n = 12, i;

	memset(b, 0, FMAX);
	memcpy(b, s->dst, 6);
	memcpy(b + 6, s->src, 6);
	for (i = 0; i < s->ntag; i++) {
		put16(b + n, s->tpid[i]);
		put16(b + n + 2, s->tci[i]);
		n += 4;
	}
	switch (s->l3) {
	case L3_IP4:
	case L3_IP6:
		put16(b + n, s->v6 ? 0x86dd : 0x0800);
		n += 2;
		n += build_ip(s, b + n);
		break;
	case L3_ARP:
		put16(b + n, 0x0806);
		n += 2;
		put16(b + n, 1);
		put16(b + n + 2, 0x0800);
		b[n + 4] = 6;
		b[n + 5] = 4;
		put16(b + n + 6, s->arp_op);
		memcpy(b + n + 8, s->sha, 6);
		memcpy(b + n + 14, s->spa, 4);
		memcpy(b + n + 18, s->tha, 6);
		memcpy(b + n + 24, s->tpa, 4);
		n += 28;
		break;
	case L3_MPLS:
		put16(b + n, 0x8847);
		n += 2;
		for (i = 0; i < s->nlse; i++) {
			put32(b + n, s->label[i] << 12 | (uint32_t)s->mtc[i] << 9 |
				     (uint32_t)s->mbos[i] << 8 | s->mttl[i]);
			n += 4;
		}
		n += build_ip(s, b + n);
		break;
	case L3_PPPOE: {
		int start;

		put16(b + n, 0x8864);
		n += 2;
		b[n] = 0x11;
		b[n + 1] = 0;
		put16(b + n + 2, s->sid);
		start = n + 6;
		put16(b + n + 6, s->ppp_proto);
		n += 8;
		if (s->ppp_proto == 0x0021 || s->ppp_proto == 0x0057) {
			n += build_ip(s, b + n);
		} else {
			for (i = 0; i < 16; i++)
				b[n++] = (uint8_t)(0x30 + i);
		}
		put16(b + start - 2, (uint16_t)(n - start));
		break;
	}
	default:
		put16(b + n, s->ethtype);
		n += 2;
		for (i = 0; i < 30; i++)
			b[n++] = (uint8_t)(0x60 + i);
	}
	return n;
}

static void ip_str(const struct spec *s, const uint8_t *a, char *out, size_t len)
{
	inet_ntop(s->v6 ? AF_INET6 : AF_INET, a, out, (socklen_t)len);
}

static void describe(const struct spec *s, char *o, size_t len)
{
	static const char *fr[] = { "", " first-fragment", " later-fragment" };
	char a[64], b[64];
	size_t n;
	int i;

	n = (size_t)snprintf(o, len, "%02x:%02x:%02x:%02x:%02x:%02x>%02x:%02x:%02x:%02x:%02x:%02x",
			     s->src[0], s->src[1], s->src[2], s->src[3], s->src[4], s->src[5],
			     s->dst[0], s->dst[1], s->dst[2], s->dst[3], s->dst[4], s->dst[5]);
	for (i = 0; i < s->ntag && n < len; i++)
		n += (size_t)snprintf(o + n, len - n, " tag %04x vid %d pcp %d", s->tpid[i],
				      s->tci[i] & 0xfff, s->tci[i] >> 13);
	if (n >= len)
		return;
	switch (s->l3) {
	case L3_ARP:
		snprintf(o + n, len - n, " arp op %d", s->arp_op);
		return;
	case L3_MPLS:
		n += (size_t)snprintf(o + n, len - n, " mpls");
		for (i = 0; i < s->nlse && n < len; i++)
			n += (size_t)snprintf(o + n, len - n, " [%u tc %u bos %u ttl %u]", s->label[i],
					      s->mtc[i], s->mbos[i], s->mttl[i]);
		return;
	case L3_PPPOE:
		n += (size_t)snprintf(o + n, len - n, " pppoe sid %u ppp 0x%04x", s->sid,
				      s->ppp_proto);
		if (s->ppp_proto != 0x0021 && s->ppp_proto != 0x0057)
			return;
		break;
	case L3_OTHER:
		snprintf(o + n, len - n, " ethertype 0x%04x", s->ethtype);
		return;
	}
	if (n >= len)
		return;
	ip_str(s, s->sip, a, sizeof(a));
	ip_str(s, s->dip, b, sizeof(b));
	n += (size_t)snprintf(o + n, len - n, " %s %s>%s tos 0x%02x ttl %d proto %d%s%s%s",
			      s->v6 ? "ipv6" : "ipv4", a, b, s->tos, s->ttl, s->proto, fr[s->frag],
			      s->ipopt ? " ipopt" : "", s->hbh ? " hbh" : "");
	if (n < len && s->frag != 2 && (s->proto == 6 || s->proto == 17 || s->proto == 132))
		n += (size_t)snprintf(o + n, len - n, " ports %u>%u", s->sport, s->dport);
	if (n < len && s->frag != 2 && s->proto == 6)
		n += (size_t)snprintf(o + n, len - n, " flags 0x%03x", s->tcpflags);
	if (n < len && s->frag != 2 && (s->proto == 1 || s->proto == 58))
		snprintf(o + n, len - n, " icmp %u/%u", s->itype, s->icode);
}

/* ---- a round: files in DIR ---------------------------------------------- */
struct round {
	FILE *tc, *fr, *desc;
	int nframes, nrules;
};

static const char *dir;

static void round_open(struct round *r, FILE *list, const char *name)
{
	char p[512];

	fprintf(list, "%s\n", name);
	snprintf(p, sizeof(p), "%s/%s.tc", dir, name);
	r->tc = fopen(p, "w");
	snprintf(p, sizeof(p), "%s/%s.frames", dir, name);
	r->fr = fopen(p, "w");
	snprintf(p, sizeof(p), "%s/%s.desc", dir, name);
	r->desc = fopen(p, "w");
	if (!r->tc || !r->fr || !r->desc) {
		perror(p);
		exit(2);
	}
	r->nframes = r->nrules = 0;
	fprintf(r->tc, "tc qdisc add dev d0 clsact\n");
}

static void round_close(struct round *r)
{
	fclose(r->tc);
	fclose(r->fr);
	fclose(r->desc);
}

static void frame(struct round *r, const struct spec *s)
{
	uint8_t b[FMAX];
	char d[512];
	int n = build(s, b);

	fputc(n >> 8, r->fr);
	fputc(n & 0xff, r->fr);
	fwrite(b, 1, (size_t)n, r->fr);
	describe(s, d, sizeof(d));
	fprintf(r->desc, "%d %s\n", r->nframes++, d);
}

/* ---- the rules ----------------------------------------------------------- */
struct line {
	char b[1024];
	size_t n;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (l->n < sizeof(l->b))
		l->n += (size_t)vsnprintf(l->b + l->n, sizeof(l->b) - l->n, fmt, ap);
	va_end(ap);
}

static struct {
	bool arp, mpls, pppoe, vlans, indev;
} keys;

static const uint8_t macs[][6] = {
	{ 0x02, 0, 0, 0, 0, 1 }, { 0x02, 0, 0, 0, 0, 2 }, { 0x02, 0, 0, 0, 1, 1 },
	{ 0x02, 0, 0, 0, 1, 2 }, { 0x02, 0x10, 0, 0, 0, 1 }, { 0x0a, 0, 0, 0x20, 0, 7 },
	{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, { 0x01, 0, 0x5e, 0, 0, 1 },
};
static const uint16_t vids[] = { 1, 2, 5, 10, 100, 4094 };
static const uint16_t ports[] = { 22, 53, 80, 443, 1000, 1001, 1023, 1024, 5000, 8080, 65535 };
static const uint8_t toses[] = { 0, 0x10, 0x20, 0x18, 0xb8, 0xb9, 0x03, 0xfc };
static const uint8_t ttls[] = { 1, 2, 63, 64, 128, 255 };
static const uint8_t protos[] = { 6, 6, 6, 17, 17, 17, 132, 1, 47, 0x99 };
static const uint16_t tcpfl[] = { 0x002, 0x012, 0x010, 0x011, 0x004, 0x018, 0x0c2, 0x100 };

static void mac_of(uint8_t *m) { memcpy(m, macs[rn(sizeof(macs) / 6)], 6); }

static void addr_of(struct spec *s, uint8_t *a)
{
	memset(a, 0, 16);
	if (s->v6) {
		a[0] = 0x20;
		a[1] = 0x01;
		a[2] = 0x0d;
		a[3] = 0xb8;
		a[13] = (uint8_t)rn(3);
		a[15] = (uint8_t)rn(6);
	} else {
		a[0] = 10;
		a[2] = (uint8_t)rn(3);
		a[3] = (uint8_t)rn(6);
	}
}

static void ip_fill(struct spec *s)
{
	addr_of(s, s->sip);
	addr_of(s, s->dip);
	s->tos = PICK(toses);
	s->ttl = PICK(ttls);
	s->proto = PICK(protos);
	if (s->v6 && s->proto == 1)
		s->proto = 58;
	s->ipopt = !s->v6 && pct(10) ? 4 * (int)(1 + rn(3)) : 0;
	s->hbh = s->v6 && pct(15);
	s->sport = pct(50) ? PICK(ports) : (uint16_t)(1 + rn(65535));
	s->dport = PICK(ports);
	s->tcpflags = PICK(tcpfl);
	s->itype = (uint8_t)(pct(50) ? 8 : rn(20));
	s->icode = (uint8_t)(pct(60) ? 0 : rn(4));
	s->payload = (int)rn(24);
	s->frag = 0;
	/* first fragments only of protocols without ports or ICMP fields
	 * (cls_flower does not dissect any fragment's L4 header; xtcam reads
	 * a first fragment's) */
	if (pct(12))
		s->frag = has_l4(s->proto) ? 2 : (int)(1 + rn(2));
}

static void spec_random(struct spec *s)
{
	int c = (int)rn(100);

	memset(s, 0, sizeof(*s));
	mac_of(s->dst);
	mac_of(s->src);
	if (c < 20)
		s->ntag = 1;
	else if (c < 30)
		s->ntag = 2;
	for (int i = 0; i < s->ntag; i++) {
		s->tpid[i] = i == 0 && pct(30) ? 0x88a8 : 0x8100;
		s->tci[i] = (uint16_t)(PICK(vids) | rn(8) << 13 | (pct(10) ? 0x1000 : 0));
	}
	c = (int)rn(100);
	if (c < 55)
		s->l3 = L3_IP4;
	else if (c < 72)
		s->l3 = L3_IP6;
	else if (c < 82)
		s->l3 = L3_ARP;
	else if (c < 89)
		s->l3 = L3_MPLS;
	else if (c < 96)
		s->l3 = L3_PPPOE;
	else
		s->l3 = L3_OTHER;
	s->v6 = s->l3 == L3_IP6;
	switch (s->l3) {
	case L3_IP4:
	case L3_IP6:
		ip_fill(s);
		break;
	case L3_ARP:
		s->arp_op = (uint16_t)(1 + rn(2));
		mac_of(s->sha);
		mac_of(s->tha);
		s->spa[0] = s->tpa[0] = 10;
		s->spa[3] = (uint8_t)rn(6);
		s->tpa[3] = (uint8_t)rn(6);
		s->spa[2] = (uint8_t)rn(2);
		break;
	case L3_MPLS:
		s->nlse = (int)(1 + rn(3));
		for (int i = 0; i < s->nlse; i++) {
			static const uint32_t labels[] = { 0, 3, 16, 100, 1000, 1048575 };

			s->label[i] = pct(70) ? PICK(labels) : rn(1 << 20);
			s->mtc[i] = (uint8_t)rn(8);
			s->mbos[i] = i == s->nlse - 1;
			s->mttl[i] = (uint8_t)PICK(ttls);
		}
		if (pct(10))
			s->mbos[s->nlse - 1] = 0;  /* a stack without bottom */
		ip_fill(s);
		s->frag = 0;
		break;
	case L3_PPPOE: {
		static const uint16_t pp[] = { 0x0021, 0x0021, 0x0057, 0xc021, 0x8021 };
		static const uint16_t sids[] = { 1, 2, 7, 1000, 65535 };

		s->sid = PICK(sids);
		s->ppp_proto = PICK(pp);
		s->v6 = s->ppp_proto == 0x0057;
		ip_fill(s);
		break;
	}
	default: {
		static const uint16_t et[] = { 0x88b5, 0x88cc, 0x9000, 0x0842 };

		s->ethtype = PICK(et);
	}
	}
}

static const char *ethname(uint16_t t)
{
	static char b[8];

	switch (t) {
	case 0x0800: return "ip";
	case 0x86dd: return "ipv6";
	case 0x0806: return "arp";
	case 0x8100: return "802.1q";
	case 0x88a8: return "802.1ad";
	case 0x8847: return "mpls_uc";
	case 0x8864: return "ppp_ses";
	}
	snprintf(b, sizeof(b), "0x%04x", t);
	return b;
}

/* the ethertype after the tags */
static uint16_t l3type(const struct spec *s)
{
	switch (s->l3) {
	case L3_IP4: return 0x0800;
	case L3_IP6: return 0x86dd;
	case L3_ARP: return 0x0806;
	case L3_MPLS: return 0x8847;
	case L3_PPPOE: return 0x8864;
	}
	return s->ethtype;
}

static void w_mac(struct line *l, const char *kw, const uint8_t *m)
{
	static const char *masks[] = { "", "/24", "/40", "/ff:ff:ff:ff:00:ff", "/02:00:00:00:00:00" };
	const char *mk = pct(70) ? "" : PICK(masks);

	add(l, " %s %02x:%02x:%02x:%02x:%02x:%02x%s", kw, m[0], m[1], m[2], m[3], m[4], m[5], mk);
}

static void w_prefix(struct line *l, const char *kw, const struct spec *s, const uint8_t *a)
{
	uint8_t m[16];
	char t[64];
	int bits = s->v6 ? 128 : 32, plen;

	/* never /0: cls_flower takes an all-zero address mask out of the
	 * filter's dissector but still wants the address type set, so
	 * `src_ip 0.0.0.0/0` matches nothing there (xtcam: every IPv4 frame) */
	plen = pct(50) ? bits : (int)(1 + rn((unsigned)bits));
	if (s->v6 && plen < 96 && pct(50))
		plen = 120;
	memcpy(m, a, 16);
	for (int i = 0; i < 16; i++) {
		int keep = plen - 8 * i;

		if (keep <= 0)
			m[i] = 0;
		else if (keep < 8)
			m[i] &= (uint8_t)(0xff << (8 - keep));
	}
	ip_str(s, m, t, sizeof(t));
	if (plen == bits)
		add(l, " %s %s", kw, t);
	else
		add(l, " %s %s/%d", kw, t, plen);
}

/* a port match that accepts frame port p, or (miss) probably not; never
 * one that accepts port 0 */
static void w_port(struct line *l, const char *kw, uint16_t p, bool l4zero_ok)
{
	int f = (int)rn(3);

	if (f == 0 || p < 2) {
		add(l, " %s %u", kw, p);
	} else if (f == 1) {
		unsigned lo = p - rn(p < 100 ? p : 100), hi = p + rn(65536u - p);

		if (lo == 0 && !l4zero_ok)
			lo = 1;
		/* tc wants MIN below MAX */
		if (lo < hi)
			add(l, " %s %u-%u", kw, lo, hi);
		else
			add(l, " %s %u", kw, p);
	} else {
		int pl = 8 + (int)rn(9);
		uint16_t m = (uint16_t)(0xffff << (16 - pl)), v = p & m;

		if (!v && !l4zero_ok)
			add(l, " %s %u", kw, p);
		else
			add(l, " %s %u/0x%04x", kw, v, m);
	}
}

/* change a frame field so that a rule made from it probably misses */
static void mutate(struct spec *s)
{
	switch (rn(8)) {
	case 0: s->dst[5] ^= 1; break;
	case 1: s->src[5] ^= 3; break;
	case 2: if (s->ntag) s->tci[0] ^= 1; else s->sip[3] ^= 1; break;
	case 3: s->dport ^= 1; break;
	case 4: s->sip[s->v6 ? 15 : 3] ^= 2; break;
	case 5: s->dip[s->v6 ? 15 : 3] ^= 1; break;
	case 6: s->tos ^= 0x20; s->ttl ^= 1; break;
	case 7: s->tcpflags ^= 0x10; s->itype ^= 8; s->sid ^= 1; s->label[0] ^= 1; s->arp_op ^= 3; break;
	}
}

static bool rule_bad;

/* one rule line made from frame s (the rule matches s unless s was
 * mutated afterwards) */
static void rule_of(struct line *l, const struct spec *s, int pref)
{
	uint16_t et = l3type(s), eff;
	bool ip_ok, any_l4 = false, l4_rejects0 = false, gave_type = false, gave_code = false;
	bool ip = s->l3 == L3_IP4 || s->l3 == L3_IP6;

	l->n = 0;
	rule_bad = false;
	/* tc's spellings: pref or prio, an optional handle (hex as tc shows it) */
	add(l, "tc filter add dev d0 ingress %s %d ", pct(80) ? "pref" : "prio", pref);
	if (pct(10))
		add(l, "handle 0x%x ", 2 * pref);
	add(l, "protocol ");
	if (!s->ntag && pct(8)) {
		/* protocol all: layer 2 keys only */
		add(l, "all flower skip_hw");
		w_mac(l, pct(50) ? "dst_mac" : "src_mac", pct(50) ? s->dst : s->src);
		goto action;
	}
	add(l, "%s flower skip_hw", ethname(s->ntag ? s->tpid[0] : et));
	if (keys.indev && pct(5))
		add(l, " indev %s", pct(80) ? "d0" : "p0");
	if (pct(25))
		w_mac(l, "dst_mac", s->dst);
	if (pct(20))
		w_mac(l, "src_mac", s->src);
	eff = s->ntag ? 0 : et;
	if (s->ntag) {
		if (pct(70))
			add(l, " vlan_id %u", s->tci[0] & 0xfff);
		if (pct(30))
			add(l, " vlan_prio %u", s->tci[0] >> 13);
		if (pct(75)) {
			add(l, " vlan_ethtype %s", ethname(s->ntag > 1 ? s->tpid[1] : et));
			if (s->ntag == 1) {
				eff = et;
			} else {
				if (pct(60))
					add(l, " cvlan_id %u", s->tci[1] & 0xfff);
				if (pct(30))
					add(l, " cvlan_prio %u", s->tci[1] >> 13);
				if (pct(75)) {
					add(l, " cvlan_ethtype %s", ethname(et));
					eff = et;
				}
			}
		}
	}
	if (keys.vlans && pct(10) && (s->ntag || !eff))
		add(l, " num_of_vlans %d", s->ntag);
	if (eff == 0x0806 && keys.arp) {
		if (pct(50))
			add(l, " arp_op %s", s->arp_op == 1 ? "request" : s->arp_op == 2 ? "reply" : "3");
		if (pct(30))
			add(l, " arp_sip 10.0.%u.%u%s", s->spa[2], s->spa[3], pct(50) ? "" : "/24");
		if (pct(30))
			add(l, " arp_tip 10.0.0.%u", s->tpa[3]);
		if (pct(20))
			w_mac(l, "arp_sha", s->sha);
		if (pct(20))
			w_mac(l, "arp_tha", s->tha);
	}
	if (eff == 0x8847 && keys.mpls) {
		if (pct(60)) {
			if (pct(60))
				add(l, " mpls_label %u", s->label[0]);
			if (pct(30))
				add(l, " mpls_tc %u", s->mtc[0]);
			if (pct(30))
				add(l, " mpls_bos %u", s->mbos[0]);
			if (pct(30))
				add(l, " mpls_ttl %u", s->mttl[0]);
		} else {
			int d = (int)(1 + rn((unsigned)s->nlse + 1));

			if (d > 3)
				d = 3;
			add(l, " mpls");
			for (int i = 1; i <= d; i++) {
				int k = i - 1;

				add(l, " lse depth %d", i);
				if (pct(60))
					add(l, " label %u", s->label[k]);
				if (pct(30))
					add(l, " tc %u", s->mtc[k]);
				if (pct(30))
					add(l, " bos %u", s->mbos[k]);
				if (pct(30))
					add(l, " ttl %u", s->mttl[k]);
			}
		}
	}
	if (eff == 0x8864 && keys.pppoe) {
		if (pct(60))
			add(l, " pppoe_sid %u", s->sid);
		if (pct(60)) {
			if (s->ppp_proto == 0x0021)
				add(l, " ppp_proto ip");
			else if (s->ppp_proto == 0x0057)
				add(l, " ppp_proto ipv6");
			else
				add(l, " ppp_proto 0x%04x", s->ppp_proto);
		}
	}
	ip_ok = ip && (eff == 0x0800 || eff == 0x86dd);
	if (!ip_ok)
		goto action;
	if (pct(40))
		w_prefix(l, "src_ip", s, s->sip);
	if (pct(40))
		w_prefix(l, "dst_ip", s, s->dip);
	if (pct(10))
		add(l, " ip_tos 0x%02x/0x%02x", s->tos & 0xfc, 0xfc);
	else if (pct(5))
		add(l, " ip_tos 0x%02x", s->tos);
	if (pct(10))
		add(l, " ip_ttl %u", s->ttl);
	if (pct(12)) {
		static const char *fl[] = { "frag", "nofrag", "firstfrag", "nofirstfrag",
					    "frag/firstfrag", "frag/nofirstfrag", "nofrag/nofirstfrag" };
		const char *f = PICK(fl);

		/* a later fragment has no L4 header: flower reads zeros there */
		add(l, " ip_flags %s", f);
		if (!strcmp(f, "frag/nofirstfrag"))
			goto action;
	}
	if (!pct(65))
		goto action;
	switch (s->proto) {
	case 6: add(l, " ip_proto tcp"); break;
	case 17: add(l, " ip_proto udp"); break;
	case 132: add(l, " ip_proto sctp"); break;
	case 1: add(l, " ip_proto icmp"); break;
	case 58: add(l, " ip_proto icmpv6"); break;
	default: add(l, " ip_proto 0x%02x", s->proto); break;
	}
	if (s->proto == 6 || s->proto == 17 || s->proto == 132) {
		if (pct(40)) {
			w_port(l, "src_port", s->sport, false);
			any_l4 = l4_rejects0 = true;
		}
		if (pct(50)) {
			w_port(l, "dst_port", s->dport, false);
			any_l4 = l4_rejects0 = true;
		}
		if (s->proto == 6 && pct(25)) {
			uint16_t m = pct(50) ? 0xfff : (uint16_t)(PICK(tcpfl) | 0x2);

			add(l, " tcp_flags 0x%x/0x%x", s->tcpflags & m, m);
			any_l4 = true;
			l4_rejects0 |= (s->tcpflags & m) != 0;
		}
	} else if (s->proto == 1 || s->proto == 58) {
		if (pct(60)) {
			add(l, " type %u", s->itype);
			any_l4 = gave_type = true;
			l4_rejects0 |= s->itype != 0;
		}
		if (pct(40)) {
			add(l, " code %u%s", s->icode, pct(30) ? "/3" : "");
			any_l4 = gave_code = true;
			l4_rejects0 |= (s->icode & 3) != 0;
		}
	}
	/* a later fragment's L4 key is all zeros in cls_flower and absent in
	 * xtcam: every rule with L4 fields rejects zeros in one of them */
	if (any_l4 && !l4_rejects0) {
		if (s->proto != 1 && s->proto != 58)
			add(l, " dst_port %u", s->dport ? s->dport : 1);
		else if (!gave_type)
			add(l, " type %u", s->itype ? s->itype : 8);
		else if (!gave_code)
			add(l, " code %u", s->icode ? s->icode : 1);
		else
			rule_bad = true;  /* both given, both 0: make another */
	}
action:
	{
		static const char *acts[] = { "drop", "pass", "drop", "pass", "shot", "ok",
					      "gact drop", "gact pass" };

		add(l, " action %s\n", PICK(acts));
	}
}

/* the key-value pairs between skip_hw and action */
static int nmatch(const char *line)
{
	const char *p = strstr(line, " skip_hw"), *e = strstr(line, " action ");
	int words = 0;

	for (p += 8; p < e; p++)
		words += *p == ' ';
	return words / 2;
}

static void gen_round(FILE *list, int nrules, int nframes)
{
	struct round r;
	struct spec *pool;
	int npool = nrules / 2 + 8, i;
	struct line l;

	pool = calloc((size_t)npool, sizeof(*pool));
	if (!pool)
		exit(2);
	for (i = 0; i < npool; i++)
		spec_random(&pool[i]);
	round_open(&r, list, "gen");
	for (i = 1; i <= nrules; i++) {
		struct spec s = pool[rn((unsigned)npool)];

		if (pct(25))
			mutate(&s);
		/* mostly rules of two matches or more: a wide rule early
		 * takes the frames of the rules after it */
		for (int t = 0; t < 8; t++) {
			rule_of(&l, &s, i);
			if (!rule_bad && (nmatch(l.b) >= 2 || pct(10)))
				break;
		}
		if (rule_bad)
			snprintf(l.b, sizeof(l.b), "tc filter add dev d0 ingress pref %d protocol all flower skip_hw dst_mac 02:00:00:00:00:99 action drop\n", i);
		fputs(l.b, r.tc);
	}
	/* the last rule takes every frame: each frame is counted once */
	fprintf(r.tc, "tc filter add dev d0 ingress pref %d protocol all flower skip_hw action pass\n",
		nrules + 1);
	for (i = 0; i < nframes; i++) {
		struct spec s;

		if (pct(85)) {
			s = pool[rn((unsigned)npool)];
			if (pct(30))
				mutate(&s);
		} else {
			spec_random(&s);
		}
		frame(&r, &s);
	}
	round_close(&r);
	free(pool);
}

/* ---- the selftest's rules ------------------------------------------------
 * tools/testing/selftests/net/forwarding/tc_flower.sh of Linux 6.1, its
 * tests that use no `action continue`, one round each (the selftest tests
 * them one at a time: together, one test's rules would take the frames of
 * the next; an IPv4, a VLAN and an MPLS test can share one, st_round()).  Translated: $h2 is d0, $tcflags is skip_hw, $h1mac, $h2mac
 * and $dummy_mac are fixed addresses, $h1 is p0 (d0's peer, a device the
 * frames do not arrive on); the lines are the selftest's, in its order.
 * Where it deletes a rule and sends again, the next round has the rules
 * left.  Its frames (mausezahn's IPv4 192.0.2.1 > 192.0.2.2 of 64 or 1000
 * bytes, "-Q 7:85", "frag=...", "tos=18", "ttl=...", its hand-made MPLS
 * label stacks) are built here, as IPv4 with no L4 header (protocol 0)
 * whose datagram fills the frame (no Ethernet padding). */
#define H1MAC "02:00:5e:00:01:01"
#define H2MAC "02:00:5e:00:01:02"
#define DUMMY "de:ad:be:ef:aa:aa"

static void st_ip(struct spec *s, int len)
{
	static const uint8_t h1[6] = { 2, 0, 0x5e, 0, 1, 1 }, h2[6] = { 2, 0, 0x5e, 0, 1, 2 };

	memset(s, 0, sizeof(*s));
	memcpy(s->src, h1, 6);
	memcpy(s->dst, h2, 6);
	s->l3 = L3_IP4;
	s->sip[0] = 192; s->sip[2] = 2; s->sip[3] = 1;
	s->dip[0] = 192; s->dip[2] = 2; s->dip[3] = 2;
	s->ttl = 255;
	s->datalen = len - 14;
}

static void st_mpls(struct spec *s, int n, const uint32_t (*lse)[4])
{
	st_ip(s, 64);
	s->l3 = L3_MPLS;
	s->nlse = n;
	for (int i = 0; i < n; i++) {
		s->label[i] = lse[i][0];
		s->mtc[i] = (uint8_t)lse[i][1];
		s->mbos[i] = (uint8_t)lse[i][2];
		s->mttl[i] = (uint8_t)lse[i][3];
	}
	s->datalen = 64 - 14 - 4 * n;
}

/* one test of the selftest in a round: its lines, its frames, and what
 * its prefs are moved by */
struct st_test {
	const char *const *lines;
	void (*frames)(struct round *);
	int shift;
};

/* Up to three of the selftest's tests in one round: an IPv4 one (protocol
 * ip), a VLAN one (protocol 802.1q) and an MPLS one (protocol mpls_uc).
 * A filter's protocol is the frame's outermost ethertype, so none of
 * them sees another's frames; the VLAN test's prefs are moved up by 10,
 * the MPLS test's by 20 (their order within the test is kept). */
static void st_round(FILE *list, const char *name, const struct st_test *t, int n)
{
	struct round r;

	round_open(&r, list, name);
	for (int i = 0; i < n; i++) {
		for (const char *const *l = t[i].lines; *l; l++) {
			const char *p = strstr(*l, "pref ");
			int pref = p ? atoi(p + 5) : 0;
			const char *rest = p ? strchr(p + 5, ' ') : NULL;

			if (!rest) {
				fprintf(stderr, "flower-oracle: no pref in \"%s\"\n", *l);
				exit(2);
			}
			fprintf(r.tc, "tc filter add dev d0 ingress %.*spref %d%s\n", (int)(p - *l), *l,
				pref + t[i].shift, rest);
		}
	}
	fprintf(r.tc, "tc filter add dev d0 ingress pref 100 protocol all flower skip_hw action pass\n");
	for (int i = 0; i < n; i++)
		t[i].frames(&r);
	round_close(&r);
}

static void f_ip64(struct round *r) { struct spec s; st_ip(&s, 64); frame(r, &s); }

static void f_frag(struct round *r)
{
	static const int fo[] = { 0, 0x2000, 0x2000 | 256, 256 };
	struct spec s;

	for (int i = 0; i < 4; i++) {
		st_ip(&s, 1000);
		/* frag=N is mausezahn's fragment offset field; "mf" its MF bit */
		s.frag = fo[i] == 0 ? 0 : (fo[i] & 0x1fff) ? 2 : 1;
		frame(r, &s);
	}
}

static void f_pcp(struct round *r)
{
	struct spec s;

	for (int pcp = 7; pcp >= 0; pcp -= 7) {
		st_ip(&s, 64);
		s.dip[3] = 11;
		s.ntag = 1;
		s.tpid[0] = 0x8100;
		s.tci[0] = (uint16_t)(pcp << 13 | 85);
		s.datalen -= 4;
		frame(r, &s);
	}
}

static void f_vlan(struct round *r)
{
	struct spec s;

	st_ip(&s, 64);
	s.dip[3] = 11;
	s.ntag = 1;
	s.tpid[0] = 0x8100;
	s.tci[0] = 85;
	s.datalen -= 4;
	frame(r, &s);
}

static void f_tos(struct round *r)
{
	struct spec s;

	st_ip(&s, 64);
	s.tos = 0x18;
	frame(r, &s);
	st_ip(&s, 64);
	s.tos = 0x20;
	frame(r, &s);
}

static void f_ttl(struct round *r)
{
	struct spec s;

	/* "ttl=63", "ttl=63,mf,frag=256", "ttl=255" */
	for (int t = 0; t < 3; t++) {
		st_ip(&s, 64);
		s.ttl = t == 2 ? 255 : 63;
		s.frag = t == 1 ? 2 : 0;
		frame(r, &s);
	}
}

static void f_mpls_label(struct round *r)
{
	static const uint32_t a[][4] = { { 0, 0, 1, 255 } }, b[][4] = { { 1048575, 0, 1, 255 } };
	struct spec s;

	st_mpls(&s, 1, a);
	frame(r, &s);
	st_mpls(&s, 1, b);
	frame(r, &s);
}

static void f_mpls_tc(struct round *r)
{
	static const uint32_t a[][4] = { { 0, 0, 1, 255 } }, b[][4] = { { 0, 7, 1, 255 } };
	struct spec s;

	st_mpls(&s, 1, a);
	frame(r, &s);
	st_mpls(&s, 1, b);
	frame(r, &s);
}

static void f_mpls_bos(struct round *r)
{
	static const uint32_t a[][4] = { { 0, 0, 1, 255 } },
			      b[][4] = { { 0, 0, 0, 255 }, { 0, 0, 1, 255 } };
	struct spec s;

	st_mpls(&s, 1, a);
	frame(r, &s);
	st_mpls(&s, 2, b);
	frame(r, &s);
}

static void f_mpls_ttl(struct round *r)
{
	static const uint32_t a[][4] = { { 0, 0, 1, 0 } }, b[][4] = { { 0, 0, 1, 255 } };
	struct spec s;

	st_mpls(&s, 1, a);
	frame(r, &s);
	st_mpls(&s, 1, b);
	frame(r, &s);
}

static void selftest_rounds(FILE *list)
{
	static const char *const dst_mac[] = {
		"protocol ip pref 1 handle 101 flower skip_hw dst_mac " DUMMY " action drop",
		"protocol ip pref 2 handle 102 flower skip_hw dst_mac " H2MAC " action drop", NULL };
	static const char *const src_mac[] = {
		"protocol ip pref 1 handle 101 flower skip_hw src_mac " DUMMY " action drop",
		"protocol ip pref 2 handle 102 flower skip_hw src_mac " H1MAC " action drop", NULL };
	static const char *const dst_ip[] = {
		"protocol ip pref 1 handle 101 flower skip_hw dst_ip 198.51.100.2 action drop",
		"protocol ip pref 2 handle 102 flower skip_hw dst_ip 192.0.2.2 action drop",
		"protocol ip pref 3 handle 103 flower skip_hw dst_ip 192.0.2.0/24 action drop", NULL };
	static const char *const dst_ip2[] = {
		"protocol ip pref 1 handle 101 flower skip_hw dst_ip 198.51.100.2 action drop",
		"protocol ip pref 3 handle 103 flower skip_hw dst_ip 192.0.2.0/24 action drop", NULL };
	static const char *const src_ip[] = {
		"protocol ip pref 1 handle 101 flower skip_hw src_ip 198.51.100.1 action drop",
		"protocol ip pref 2 handle 102 flower skip_hw src_ip 192.0.2.1 action drop",
		"protocol ip pref 3 handle 103 flower skip_hw src_ip 192.0.2.0/24 action drop", NULL };
	static const char *const src_ip2[] = {
		"protocol ip pref 1 handle 101 flower skip_hw src_ip 198.51.100.1 action drop",
		"protocol ip pref 3 handle 103 flower skip_hw src_ip 192.0.2.0/24 action drop", NULL };
	/* prefs 1-3 of the test use `action continue`: left out */
	static const char *const ip_flags[] = {
		"protocol ip pref 4 handle 104 flower skip_hw ip_flags nofrag action drop", NULL };
	static const char *const pcp[] = {
		"protocol 802.1q pref 1 handle 101 flower vlan_prio 6 skip_hw dst_mac " H2MAC " action drop",
		"protocol 802.1q pref 2 handle 102 flower vlan_prio 7 skip_hw dst_mac " H2MAC " action drop",
		NULL };
	static const char *const vlan[] = {
		"protocol 802.1q pref 1 handle 101 flower vlan_id 75 skip_hw action drop",
		"protocol 802.1q pref 2 handle 102 flower vlan_id 85 skip_hw action drop", NULL };
	static const char *const tos[] = {
		"protocol ip pref 1 handle 101 flower skip_hw dst_ip 192.0.2.2 ip_tos 0x20 action drop",
		"protocol ip pref 2 handle 102 flower skip_hw dst_ip 192.0.2.2 ip_tos 0x18 action drop",
		NULL };
	static const char *const ttl[] = {
		"protocol ip pref 1 handle 101 flower skip_hw dst_ip 192.0.2.2 ip_ttl 63 action drop",
		"protocol ip pref 2 handle 102 flower skip_hw dst_ip 192.0.2.2 action drop", NULL };
	static const char *const indev[] = {
		"protocol ip pref 1 handle 101 flower skip_hw indev p0 dst_mac " H2MAC " action drop",
		"protocol ip pref 2 handle 102 flower skip_hw indev d0 dst_mac " H2MAC " action drop",
		NULL };
	static const char *const label[] = {
		"protocol mpls_uc pref 1 handle 101 flower skip_hw mpls_label 0 action drop",
		"protocol mpls_uc pref 2 handle 102 flower skip_hw mpls_label 1048575 action drop", NULL };
	static const char *const mtc[] = {
		"protocol mpls_uc pref 1 handle 101 flower skip_hw mpls_tc 0 action drop",
		"protocol mpls_uc pref 2 handle 102 flower skip_hw mpls_tc 7 action drop", NULL };
	static const char *const bos[] = {
		"protocol mpls_uc pref 1 handle 101 flower skip_hw mpls_bos 0 action drop",
		"protocol mpls_uc pref 2 handle 102 flower skip_hw mpls_bos 1 action drop", NULL };
	static const char *const mttl[] = {
		"protocol mpls_uc pref 1 handle 101 flower skip_hw mpls_ttl 0 action drop",
		"protocol mpls_uc pref 2 handle 102 flower skip_hw mpls_ttl 255 action drop", NULL };

	bool m = keys.mpls;
	const struct st_test r1[] = { { dst_mac, f_ip64, 0 }, { pcp, f_pcp, 10 },
				      { label, f_mpls_label, 20 } };
	const struct st_test r2[] = { { src_mac, f_ip64, 0 }, { vlan, f_vlan, 10 },
				      { mtc, f_mpls_tc, 20 } };
	const struct st_test r3[] = { { dst_ip, f_ip64, 0 }, { bos, f_mpls_bos, 20 } };
	const struct st_test r4[] = { { dst_ip2, f_ip64, 0 }, { mttl, f_mpls_ttl, 20 } };
	const struct st_test r5[] = { { src_ip, f_ip64, 0 } }, r6[] = { { src_ip2, f_ip64, 0 } };
	const struct st_test r7[] = { { ip_flags, f_frag, 0 } }, r8[] = { { tos, f_tos, 0 } };
	const struct st_test r9[] = { { ttl, f_ttl, 0 } }, r10[] = { { indev, f_ip64, 0 } };

	st_round(list, "st-dst_mac+pcp+mpls_label", r1, m ? 3 : 2);
	st_round(list, "st-src_mac+vlan+mpls_tc", r2, m ? 3 : 2);
	st_round(list, "st-dst_ip+mpls_bos", r3, m ? 2 : 1);
	st_round(list, "st-dst_ip-del2+mpls_ttl", r4, m ? 2 : 1);
	st_round(list, "st-src_ip", r5, 1);
	st_round(list, "st-src_ip-del2", r6, 1);
	st_round(list, "st-ip_flags", r7, 1);
	st_round(list, "st-ip_tos", r8, 1);
	st_round(list, "st-ip_ttl", r9, 1);
	if (keys.indev)
		st_round(list, "st-indev", r10, 1);
}

static int cmd_gen(int argc, char **argv)
{
	char p[512], *k, *save = NULL;
	FILE *list;

	if (argc != 7) {
		fprintf(stderr, "usage: flower-oracle gen DIR SEED NRULES NFRAMES KEYS\n");
		return 2;
	}
	dir = argv[2];
	rs ^= strtoull(argv[3], NULL, 0) * 0x9e3779b97f4a7c15ull;
	for (k = strtok_r(argv[6], ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		if (!strcmp(k, "arp")) keys.arp = true;
		else if (!strcmp(k, "mpls")) keys.mpls = true;
		else if (!strcmp(k, "pppoe")) keys.pppoe = true;
		else if (!strcmp(k, "vlans")) keys.vlans = true;
		else if (!strcmp(k, "indev")) keys.indev = true;
		else if (strcmp(k, "base")) {
			fprintf(stderr, "flower-oracle: unknown key group \"%s\"\n", k);
			return 2;
		}
	}
	snprintf(p, sizeof(p), "%s/rounds", dir);
	list = fopen(p, "w");
	if (!list) {
		perror(p);
		return 2;
	}
	gen_round(list, atoi(argv[4]), atoi(argv[5]));
	selftest_rounds(list);
	fclose(list);
	return 0;
}

/* ---- send ---------------------------------------------------------------- */
static int cmd_send(int argc, char **argv)
{
	struct sockaddr_ll sll = { 0 };
	long first = argc > 4 ? atol(argv[4]) : 0, count = argc > 5 ? atol(argv[5]) : -1, i = 0;
	uint8_t b[FMAX];
	int fd, c1, c2, sent = 0;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: flower-oracle send DEV FILE [FIRST [COUNT]]\n");
		return 2;
	}
	f = fopen(argv[3], "r");
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(argv[2]);
	if (!f || fd < 0 || !sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "flower-oracle: send on %s from %s: %s\n", argv[2], argv[3],
			strerror(errno));
		return 2;
	}
	while ((c1 = fgetc(f)) != EOF && (c2 = fgetc(f)) != EOF) {
		size_t n = (size_t)(c1 << 8 | c2);

		if (n > sizeof(b) || fread(b, 1, n, f) != n) {
			fprintf(stderr, "flower-oracle: %s: bad frame %ld\n", argv[3], i);
			return 2;
		}
		if (i++ < first)
			continue;
		if (count >= 0 && i > first + count)
			break;
		if (send(fd, b, n, 0) != (ssize_t)n) {
			fprintf(stderr, "flower-oracle: send frame %ld: %s\n", i - 1, strerror(errno));
			return 2;
		}
		/* a pause now and then: veth's XDP ring holds 256 frames */
		if (++sent % 64 == 0)
			usleep(2000);
	}
	close(fd);
	fclose(f);
	printf("%d\n", sent);
	return 0;
}

/* ---- compare --------------------------------------------------------------- */
#define MAXPREF 65536

static int load(const char *path, long long *cnt, bool tc)
{
	json_object *root = json_object_from_file(path), *e, *v;
	size_t i, n;

	if (!root || !json_object_is_type(root, json_type_array)) {
		fprintf(stderr, "flower-oracle: %s: not a JSON array\n", path);
		return -1;
	}
	n = json_object_array_length(root);
	for (i = 0; i < n; i++) {
		long long pref, pk = 0;

		e = json_object_array_get_idx(root, i);
		if (!json_object_object_get_ex(e, tc ? "pref" : "prio", &v))
			continue;
		pref = json_object_get_int64(v);
		if (pref < 0 || pref >= MAXPREF)
			continue;
		if (tc) {
			json_object *o, *a, *st, *p;

			if (!json_object_object_get_ex(e, "options", &o))
				continue;
			if (!json_object_object_get_ex(o, "actions", &a) ||
			    json_object_array_length(a) < 1 ||
			    !json_object_object_get_ex(json_object_array_get_idx(a, 0), "stats", &st) ||
			    !json_object_object_get_ex(st, "packets", &p)) {
				fprintf(stderr, "flower-oracle: %s: pref %lld has no packet count\n", path, pref);
				json_object_put(root);
				return -1;
			}
			pk = json_object_get_int64(p);
		} else {
			if (!json_object_object_get_ex(e, "packets", &v)) {
				fprintf(stderr, "flower-oracle: %s: prio %lld has no packet count\n", path, pref);
				json_object_put(root);
				return -1;
			}
			pk = json_object_get_int64(v);
		}
		if (cnt[pref] >= 0) {
			fprintf(stderr, "flower-oracle: %s: pref %lld twice\n", path, pref);
			json_object_put(root);
			return -1;
		}
		cnt[pref] = pk;
	}
	json_object_put(root);
	return 0;
}

static long long *counts(const char *path, bool tc)
{
	long long *c = malloc(MAXPREF * sizeof(*c));

	if (!c)
		exit(2);
	for (int i = 0; i < MAXPREF; i++)
		c[i] = -1;
	if (load(path, c, tc)) {
		free(c);
		return NULL;
	}
	return c;
}

static int cmd_compare(int argc, char **argv)
{
	long long *tb, *ta, *xb, *xa, ts = 0, xs = 0, nframes;
	char *lines[MAXPREF] = { 0 }, buf[2048];
	int bad = 0, nrules = 0, p;
	FILE *f;

	if (argc != 8) {
		fprintf(stderr, "usage: flower-oracle compare TC_BEFORE TC_AFTER XT_BEFORE XT_AFTER TCFILE NFRAMES\n");
		return 2;
	}
	tb = counts(argv[2], true);
	ta = counts(argv[3], true);
	xb = counts(argv[4], false);
	xa = counts(argv[5], false);
	nframes = atoll(argv[7]);
	f = fopen(argv[6], "r");
	if (!tb || !ta || !xb || !xa || !f)
		return 2;
	while (fgets(buf, sizeof(buf), f)) {
		char *s = strstr(buf, " pref "), *t = strstr(buf, " prio ");

		if (!s || (t && t < s))
			s = t;
		if (!s || sscanf(s + 6, "%d", &p) != 1 || p < 0 || p >= MAXPREF)
			continue;
		buf[strcspn(buf, "\n")] = 0;
		free(lines[p]);
		lines[p] = strdup(buf);
	}
	fclose(f);
	for (p = 0; p < MAXPREF; p++) {
		long long dt, dx;

		if (!lines[p])
			continue;
		nrules++;
		if (ta[p] < 0 || tb[p] < 0 || xa[p] < 0 || xb[p] < 0) {
			printf("MISSING pref %d (tc %s, xtcam %s): %s\n", p, ta[p] < 0 ? "no" : "yes",
			       xa[p] < 0 ? "no" : "yes", lines[p]);
			bad++;
			continue;
		}
		dt = ta[p] - tb[p];
		dx = xa[p] - xb[p];
		ts += dt;
		xs += dx;
		if (dt != dx) {
			printf("DIFFER pref %d: cls_flower %lld, xtcam %lld: %s\n", p, dt, dx, lines[p]);
			bad++;
		}
	}
	for (p = 0; p < MAXPREF; p++)
		free(lines[p]);
	printf("%d rules, %lld frames: cls_flower counted %lld, xtcam %lld; %d rules differ\n",
	       nrules, nframes, ts, xs, bad);
	if (ts != nframes || xs != nframes) {
		printf("FRAMES LOST: %lld sent, cls_flower counted %lld, xtcam %lld\n", nframes, ts, xs);
		bad++;
	}
	free(tb);
	free(ta);
	free(xb);
	free(xa);
	return bad ? 1 : 0;
}

static int cmd_delta(int argc, char **argv)
{
	long long *tb, *ta, *xb, *xa;
	int p;

	if (argc != 7)
		return 2;
	p = atoi(argv[6]);
	tb = counts(argv[2], true);
	ta = counts(argv[3], true);
	xb = counts(argv[4], false);
	xa = counts(argv[5], false);
	if (!tb || !ta || !xb || !xa || p < 0 || p >= MAXPREF)
		return 2;
	printf("%lld %lld\n", ta[p] - tb[p], xa[p] - xb[p]);
	free(tb);
	free(ta);
	free(xb);
	free(xa);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "gen"))
		return cmd_gen(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return cmd_send(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "compare"))
		return cmd_compare(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "delta"))
		return cmd_delta(argc, argv);
	fprintf(stderr, "usage: flower-oracle gen|send|compare|delta ...\n");
	return 2;
}
