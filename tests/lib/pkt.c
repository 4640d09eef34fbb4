// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "pkt.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

void pkt_spec_init(struct pkt_spec *s)
{
	static const uint8_t d[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t sm[6] = { 0x02, 0, 0, 0, 0, 0x01 };

	memset(s, 0, sizeof(*s));
	memcpy(s->dst, d, 6);
	memcpy(s->src, sm, 6);
	s->eth_type = 0x0800;
	s->saddr[0] = 10; s->saddr[3] = 1;
	s->daddr[0] = 10; s->daddr[3] = 2;
	s->ttl = 64;
	s->proto = IPPROTO_UDP;
	s->sport = 1234;
	s->dport = 80;
	s->payload = 16;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, int n)
{
	int i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

#define SET_NEED(p, flag, v) ((p)->need[__builtin_ctz(flag)] = (v))

/* A frame cut at len (or a datagram that ends sooner) is truncated when
 * its headers end later, unless the parser stopped at a malformed one. */
static int trunc_at(const struct pkt *p, int len, uint16_t flags)
{
	int end = len < p->dg_end ? len : p->dg_end;

	return end < p->hdr_end && !(flags & XTCAM_F_BAD);
}

/* The IP length field (tot_len, payload_len) and the IPv4 header checksum,
 * for a datagram from p->l3_off to end; then where the parser must see the
 * datagram end, and what that takes away. */
static void ip_lengths(const struct pkt_spec *s, struct pkt *p, int end)
{
	uint8_t *ip = p->buf + p->l3_off;
	int l3 = p->l3_off, i;

	if (s->eth_type == 0x0800) {
		int hl = 20 + s->ipopt, tot = s->set_iplen ? s->iplen : end - l3;

		put16(ip + 2, (uint16_t)tot);
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(0, ip, hl)));
		if (s->bad_version || s->bad_ihl)
			return;
		if (tot < hl) {
			/* malformed: nothing after the Ethernet header and tags */
			for (i = __builtin_ctz(XTCAM_F_L3); i < 16; i++)
				p->need[i] = -1;
			SET_NEED(p, XTCAM_F_BAD, l3 + 20);
			p->hdr_end = l3 + 20;
			p->l4_off = -1;
			return;
		}
		p->dg_end = l3 + tot;
	} else {
		int pl = s->set_iplen ? s->iplen : end - l3 - 40;

		put16(ip + 4, (uint16_t)pl);
		if (s->bad_version)
			return;
		/* 0: a jumbogram, up to the frame's end */
		if (pl)
			p->dg_end = l3 + 40 + pl;
	}
	for (i = 0; i < 16; i++) {
		uint16_t bit = (uint16_t)(1u << i);

		if (bit & (XTCAM_F_ETH | XTCAM_F_VLAN1 | XTCAM_F_VLAN2 |
			   XTCAM_F_RAW1 | XTCAM_F_RAW2))
			continue;
		if (p->need[i] > p->dg_end)
			p->need[i] = -1;
	}
}

void pkt_build(const struct pkt_spec *s, const struct xtcam_raw_spec *raw,
	       struct pkt *p)
{
	uint8_t *b = p->buf;
	struct xtcam_key *k = &p->key, whole;
	int off = 0, i, l3, l4 = -1, v6 = 0, later = 0;
	uint16_t proto;
	uint8_t nh = s->proto;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < 16; i++)
		p->need[i] = -1;
	p->l3_off = p->l4_off = -1;
	p->dg_end = INT_MAX;
	memcpy(b, s->dst, 6);
	memcpy(b + 6, s->src, 6);
	memcpy(k->dst_mac, s->dst, 6);
	memcpy(k->src_mac, s->src, 6);
	proto = s->nvlan ? s->tpid[0] : s->eth_type;
	put16(b + 12, proto);
	off = 14;
	SET_NEED(p, XTCAM_F_ETH, 14);
	for (i = 0; i < s->nvlan; i++) {
		uint16_t encap = i + 1 < s->nvlan ? s->tpid[i + 1] : s->eth_type;

		p->tag_off[i] = off;
		put16(b + off, s->tci[i]);
		put16(b + off + 2, encap);
		if (i == 0) {
			k->vlan_tci = htons(s->tci[0]);
			k->vlan_ethtype = htons(encap);
			SET_NEED(p, XTCAM_F_VLAN1, off + 4);
			if (s->tpid[0] == 0x88a8)
				SET_NEED(p, XTCAM_F_OUTER_AD, off + 4);
		} else if (i == 1) {
			k->cvlan_tci = htons(s->tci[1]);
			k->cvlan_ethtype = htons(encap);
			SET_NEED(p, XTCAM_F_VLAN2, off + 4);
		}
		off += 4;
	}
	p->hdr_end = off;
	if (s->nvlan > 2) {
		/* a third tag: the parser stops there */
		k->eth_type = htons(s->tpid[2]);
		SET_NEED(p, XTCAM_F_BAD, p->tag_off[2]);
		p->hdr_end = p->tag_off[2];
		off += 20;
		goto done;
	}
	k->eth_type = htons(s->eth_type);
	l3 = off;
	p->l3_off = l3;

	if (s->eth_type == 0x0800) {
		int hl = 20 + s->ipopt;
		uint16_t fo = 0;

		b[off] = (uint8_t)((s->bad_version ? 6 : 4) << 4 |
				   (s->bad_ihl ? 4 : hl / 4));
		b[off + 1] = s->tos;
		b[off + 8] = s->ttl;
		b[off + 9] = s->proto;
		memcpy(b + off + 12, s->saddr, 4);
		memcpy(b + off + 16, s->daddr, 4);
		for (i = 0; i < s->ipopt; i++)
			b[off + 20 + i] = i + 4 < s->ipopt ? 1 : 0; /* NOPs, END */
		if (s->frag == 1)
			fo = 0x2000;                  /* MF, offset 0 */
		else if (s->frag == 2)
			fo = 185;                     /* offset 1480 */
		put16(b + off + 6, fo);
		put16(b + off + 4, 0x1234);
		if (s->bad_version || s->bad_ihl) {
			SET_NEED(p, XTCAM_F_BAD, off + 20);
			p->hdr_end = off + 20;
			off += hl;
			goto done;
		}
		k->ip_tos = s->tos;
		k->ip_ttl = s->ttl;
		memcpy(&k->src_ip[0], s->saddr, 4);
		memcpy(&k->dst_ip[0], s->daddr, 4);
		k->ip_proto = s->proto;
		SET_NEED(p, XTCAM_F_L3, off + hl);
		SET_NEED(p, XTCAM_F_PROTO, off + hl);
		if (s->frag) {
			SET_NEED(p, XTCAM_F_FRAG, off + hl);
			if (s->frag == 1)
				SET_NEED(p, XTCAM_F_FIRSTFRAG, off + hl);
		}
		off += hl;
		p->hdr_end = off;
		later = s->frag == 2;
	} else if (s->eth_type == 0x86dd) {
		uint8_t *nhp = b + off + 6;

		v6 = 1;
		b[off] = (uint8_t)((s->bad_version ? 4 : 6) << 4 | s->tos >> 4);
		b[off + 1] = (uint8_t)(s->tos << 4);
		b[off + 7] = s->ttl;
		memcpy(b + off + 8, s->saddr, 16);
		memcpy(b + off + 24, s->daddr, 16);
		if (s->bad_version) {
			*nhp = s->proto;
			SET_NEED(p, XTCAM_F_BAD, off + 40);
			p->hdr_end = off + 40;
			off += 40;
			goto done;
		}
		k->ip_tos = s->tos;
		k->ip_ttl = s->ttl;
		memcpy(k->src_ip, s->saddr, 16);
		memcpy(k->dst_ip, s->daddr, 16);
		SET_NEED(p, XTCAM_F_L3, off + 40);
		off += 40;
		for (i = 0; i < s->next; i++) {
			uint8_t t = s->ext[i];

			*nhp = t;
			nhp = b + off;
			if (t == 44) {
				uint16_t fo = s->frag == 2 ? (185 << 3) : s->frag == 1 ? 1 : 0;

				put16(b + off + 2, fo);
				b[off + 7] = 0x42;
				off += 8;
				SET_NEED(p, XTCAM_F_FRAG, off);
				if (s->frag != 2)
					SET_NEED(p, XTCAM_F_FIRSTFRAG, off);
				if (s->frag == 2) {
					later = 1;
					break;
				}
			} else if (t == 51) {
				b[off + 1] = 2;           /* (2 + 2) * 4 = 16 bytes */
				off += 16;
			} else {
				b[off + 1] = 1;           /* (1 + 1) * 8 = 16 bytes */
				b[off + 2] = 1;           /* PadN */
				b[off + 3] = 12;
				off += 16;
			}
		}
		*nhp = s->proto;
		k->ip_proto = s->proto;
		SET_NEED(p, XTCAM_F_PROTO, off);
		p->hdr_end = off;
	} else {
		/* ARP, RARP: Ethernet/IPv4 requests and replies are read (into
		 * the IP fields, xtcam/key.h), other opcodes are malformed;
		 * anything else is not parsed past the Ethernet header */
		if (s->eth_type == 0x0806 || s->eth_type == 0x8035) {
			uint16_t op = s->arp_op ? s->arp_op : 1;

			put16(b + off, 1);
			put16(b + off + 2, 0x0800);
			b[off + 4] = 6;
			b[off + 5] = 4;
			put16(b + off + 6, op);
			memcpy(b + off + 8, s->src, 6);
			memcpy(b + off + 14, s->saddr, 4);
			memcpy(b + off + 24, s->daddr, 4);
			off += 28;
			p->hdr_end = off;
			if (op == 1 || op == 2) {
				k->ip_proto = (uint8_t)op;
				memcpy(k->src_ip, s->saddr, 4);
				memcpy((uint8_t *)k->src_ip + 4, s->src, 6);
				memcpy(k->dst_ip, s->daddr, 4);
				SET_NEED(p, XTCAM_F_L3X, off);
			} else {
				SET_NEED(p, XTCAM_F_BAD, off);
			}
		}
		goto done;
	}

	if (later) {
		p->l4_off = -1;
		goto done;
	}
	l4 = off;
	p->l4_off = l4;
	nh = s->proto;
	if (nh == IPPROTO_TCP || nh == IPPROTO_UDP || nh == IPPROTO_SCTP ||
	    nh == IPPROTO_UDPLITE) {
		int hl = nh == IPPROTO_TCP ? (s->tcp_doff ? s->tcp_doff : 5) * 4 :
			 nh == IPPROTO_SCTP ? 12 : 8;

		put16(b + off, s->sport);
		put16(b + off + 2, s->dport);
		k->src_port = htons(s->sport);
		k->dst_port = htons(s->dport);
		SET_NEED(p, XTCAM_F_L4, off + 4);
		if (nh == IPPROTO_TCP) {
			int doff = s->tcp_doff ? s->tcp_doff : 5;

			put16(b + off + 12, (uint16_t)(doff << 12 | (s->tcp_flags & 0xfff)));
			put16(b + off + 14, 65535);
			k->tcp_flags = htons(s->tcp_flags & 0xfff);
			SET_NEED(p, XTCAM_F_TCPFL, off + 14);
			if (doff < 5) {
				SET_NEED(p, XTCAM_F_BAD, off + 14);
				hl = 14;
			}
		} else if (nh != IPPROTO_SCTP) {
			put16(b + off + 4, (uint16_t)(8 + s->payload));
		}
		off += hl;
	} else if ((nh == IPPROTO_ICMP && !v6) || (nh == 58 && v6)) {
		b[off] = s->icmp_type;
		b[off + 1] = s->icmp_code;
		k->icmp_type = s->icmp_type;
		k->icmp_code = s->icmp_code;
		SET_NEED(p, XTCAM_F_ICMP, off + 2);
		off += 8;
		p->hdr_end = off - 4;
		goto l4done;
	} else if (nh == 115 || nh == 50 || (nh == 51 && !v6)) {
		/* L2TPv3 session id, ESP or AH SPI: in the port fields */
		int so = nh == 51 ? 4 : 0;

		b[off] = nh == 51 ? 59 : 0;
		b[off + 1] = 4;                      /* AH: 24 bytes */
		put16(b + off + so, s->sport);
		put16(b + off + so + 2, s->dport);
		k->src_port = htons(s->sport);
		k->dst_port = htons(s->dport);
		SET_NEED(p, XTCAM_F_L4, off + so + 4);
		off += so + 4;
	}
	p->hdr_end = off;
l4done:
	/* checksums, so that real stacks take these frames */
	for (i = 0; i < s->payload; i++)
		b[off + i] = (uint8_t)(i * 7);
	if (nh == IPPROTO_TCP || nh == IPPROTO_UDP || nh == IPPROTO_ICMP || nh == 58) {
		int l4len = off + s->payload - l4, co = nh == IPPROTO_TCP ? 16 :
			    nh == IPPROTO_UDP ? 6 : 2;
		uint32_t sum = 0;
		uint8_t ph[4];

		if (nh != IPPROTO_ICMP) {
			if (v6) {
				sum = csum_add(sum, s->saddr, 16);
				sum = csum_add(sum, s->daddr, 16);
			} else {
				sum = csum_add(sum, s->saddr, 4);
				sum = csum_add(sum, s->daddr, 4);
			}
			put16(ph, 0);
			put16(ph + 2, (uint16_t)l4len);
			sum = csum_add(sum, ph + 2, 2);
			sum += nh;
		}
		put16(b + l4 + co, 0);
		sum = csum_add(sum, b + l4, l4len);
		put16(b + l4 + co, csum_fold(sum) ? csum_fold(sum) : 0xffff);
	}
	off += s->payload;
	goto lengths;
done:
	off += s->payload;
lengths:
	if (p->l3_off >= 0 && (s->eth_type == 0x0800 || s->eth_type == 0x86dd))
		ip_lengths(s, p, off);
	p->len = off;
	if (p->len < 60) {
		/* pad to the Ethernet minimum, as a NIC would */
		p->len = 60;
	}
	k->flags = 0;
	for (i = 0; i < 16; i++)
		if (p->need[i] >= 0 && p->need[i] <= p->len)
			k->flags |= 1u << i;
	if (trunc_at(p, p->len, k->flags))
		k->flags |= XTCAM_F_TRUNC;
	if (raw) {
		for (i = 0; i < 2; i++) {
			int base = raw[i].layer == XTCAM_RAW_L2 ? 0 :
				   raw[i].layer == XTCAM_RAW_L3 ? p->l3_off :
				   raw[i].layer == XTCAM_RAW_L4 ? p->l4_off : -1;
			uint32_t v = 0;
			int j;

			if (base < 0 || raw[i].len < 1 || raw[i].len > 4 ||
			    raw[i].offset >= XTCAM_RAW_MAX_OFF)
				continue;
			for (j = 0; j < raw[i].len; j++)
				v = v << 8 | p->buf[base + raw[i].offset + j];
			p->need[10 + i] = base + raw[i].offset + raw[i].len;
			/* l3 and l4 fields end with the datagram */
			if (p->need[10 + i] > p->len ||
			    (raw[i].layer != XTCAM_RAW_L2 && p->need[10 + i] > p->dg_end)) {
				p->need[10 + i] = -1;
				continue;
			}
			if (i == 0)
				k->raw1 = htonl(v);
			else
				k->raw2 = htonl(v);
			k->flags |= i ? XTCAM_F_RAW2 : XTCAM_F_RAW1;
		}
	}
	/* fields whose flag the datagram's end took away are zero */
	pkt_expect(p, raw, p->len, &whole);
	*k = whole;
}

void pkt_expect(const struct pkt *p, const struct xtcam_raw_spec *raw, int len,
		struct xtcam_key *k)
{
	const struct xtcam_key *f = &p->key;
	uint16_t fl = 0;
	int i;

	(void)raw;
	memset(k, 0, sizeof(*k));
	for (i = 0; i < 16; i++)
		if (p->need[i] >= 0 && len >= p->need[i] && (f->flags & (1u << i)))
			fl |= 1u << i;
	if (trunc_at(p, len, fl))
		fl |= XTCAM_F_TRUNC;
	k->flags = fl;
	if (fl & XTCAM_F_ETH) {
		memcpy(k->dst_mac, f->dst_mac, 6);
		memcpy(k->src_mac, f->src_mac, 6);
		k->eth_type = f->eth_type;
		/* cut inside a tag: eth_type is the TPID that announced it */
		for (i = 0; i < 3; i++) {
			if (p->tag_off[i] && len < p->tag_off[i] + 4) {
				k->eth_type = htons((uint16_t)(p->buf[p->tag_off[i] - 2] << 8 |
							       p->buf[p->tag_off[i] - 1]));
				break;
			}
		}
	}
	if (fl & XTCAM_F_VLAN1) {
		k->vlan_tci = f->vlan_tci;
		k->vlan_ethtype = f->vlan_ethtype;
	}
	if (fl & XTCAM_F_VLAN2) {
		k->cvlan_tci = f->cvlan_tci;
		k->cvlan_ethtype = f->cvlan_ethtype;
	}
	if (fl & XTCAM_F_L3) {
		memcpy(k->src_ip, f->src_ip, 16);
		memcpy(k->dst_ip, f->dst_ip, 16);
		k->ip_tos = f->ip_tos;
		k->ip_ttl = f->ip_ttl;
	}
	if (fl & XTCAM_F_PROTO)
		k->ip_proto = f->ip_proto;
	if (fl & XTCAM_F_L3X) {
		memcpy(k->src_ip, f->src_ip, 16);
		memcpy(k->dst_ip, f->dst_ip, 16);
		k->ip_tos = f->ip_tos;
		k->ip_proto = f->ip_proto;
	}
	if (fl & XTCAM_F_L4) {
		k->src_port = f->src_port;
		k->dst_port = f->dst_port;
	}
	if (fl & XTCAM_F_TCPFL)
		k->tcp_flags = f->tcp_flags;
	if (fl & XTCAM_F_ICMP) {
		k->icmp_type = f->icmp_type;
		k->icmp_code = f->icmp_code;
	}
	if (fl & XTCAM_F_RAW1)
		k->raw1 = f->raw1;
	if (fl & XTCAM_F_RAW2)
		k->raw2 = f->raw2;
}

void hex_format(const uint8_t *b, int n, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	for (i = 0; i < n && o + 3 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", b[i]);
	if (o < len)
		buf[o] = 0;
}

void key_format(const struct xtcam_key *k, char *buf, size_t len)
{
	char s[64], d[64];

	inet_ntop(k->eth_type == htons(0x86dd) ? AF_INET6 : AF_INET, k->src_ip, s, sizeof(s));
	inet_ntop(k->eth_type == htons(0x86dd) ? AF_INET6 : AF_INET, k->dst_ip, d, sizeof(d));
	snprintf(buf, len,
		 "{flags=%#x eth=%#06x vlan=%#x/%#x cvlan=%#x/%#x src=%s dst=%s "
		 "proto=%u tos=%u ttl=%u sport=%u dport=%u tcpfl=%#x icmp=%u/%u "
		 "raw1=%#x raw2=%#x mac=%02x..%02x/%02x..%02x}",
		 k->flags, ntohs(k->eth_type), ntohs(k->vlan_tci), ntohs(k->vlan_ethtype),
		 ntohs(k->cvlan_tci), ntohs(k->cvlan_ethtype), s, d, k->ip_proto,
		 k->ip_tos, k->ip_ttl, ntohs(k->src_port), ntohs(k->dst_port),
		 ntohs(k->tcp_flags), k->icmp_type, k->icmp_code, ntohl(k->raw1),
		 ntohl(k->raw2), k->dst_mac[0], k->dst_mac[5], k->src_mac[0],
		 k->src_mac[5]);
}
