// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "xtcam/compile.h"
#include "tlib.h"
#include "nsenter.h"

void t_rule(struct xtcam_rule *r, uint32_t prio, uint32_t handle)
{
	memset(r, 0, sizeof(*r));
	r->prio = prio;
	r->handle = handle;
	r->sport_hi = r->dport_hi = 0xffff;
	r->action.type = XTCAM_ACT_PASS;
}

static void prefix_mask(uint8_t *m, int bytes, int plen)
{
	int i;

	for (i = 0; i < bytes; i++) {
		int b = plen - i * 8;

		m[i] = b >= 8 ? 0xff : b <= 0 ? 0 : (uint8_t)(0xff << (8 - b));
	}
}

void t_match_ip4(struct xtcam_rule *r, bool src, uint32_t addr, int plen)
{
	uint8_t *v = (uint8_t *)(src ? r->value.src_ip : r->value.dst_ip);
	uint8_t *m = (uint8_t *)(src ? r->mask.src_ip : r->mask.dst_ip);
	uint32_t a = htonl(addr);
	int i;

	memset(v, 0, 16);
	memset(m, 0, 16);
	prefix_mask(m, 4, plen);
	memcpy(v, &a, 4);
	for (i = 0; i < 4; i++)
		v[i] &= m[i];
	t_match_ethtype(r, 0x0800);
	r->keywords |= XTCAM_KW_BIT(src ? XTCAM_KW_SRC_IP : XTCAM_KW_DST_IP);
}

void t_match_ip6(struct xtcam_rule *r, bool src, const uint8_t *addr, int plen)
{
	uint8_t *v = (uint8_t *)(src ? r->value.src_ip : r->value.dst_ip);
	uint8_t *m = (uint8_t *)(src ? r->mask.src_ip : r->mask.dst_ip);
	int i;

	prefix_mask(m, 16, plen);
	for (i = 0; i < 16; i++)
		v[i] = addr[i] & m[i];
	t_match_ethtype(r, 0x86dd);
	r->keywords |= XTCAM_KW_BIT(src ? XTCAM_KW_SRC_IP : XTCAM_KW_DST_IP);
}

void t_match_proto(struct xtcam_rule *r, uint8_t proto)
{
	r->value.ip_proto = proto;
	r->mask.ip_proto = 0xff;
	r->keywords |= XTCAM_KW_BIT(XTCAM_KW_IP_PROTO);
}

void t_match_ethtype(struct xtcam_rule *r, uint16_t et)
{
	r->value.eth_type = htons(et);
	r->mask.eth_type = 0xffff;
}

uint64_t t_rand(struct t_rng *g)
{
	uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t t_seed(uint64_t def)
{
	const char *e = getenv("XTCAM_SEED");

	return e && *e ? strtoull(e, NULL, 0) : def;
}

/* --- random rules ---------------------------------------------------------- */

static const int v4_plens[] = { 0, 8, 12, 16, 20, 24, 24, 28, 30, 32, 32, 0 };
static const uint16_t common_ports[] = { 22, 53, 80, 123, 443, 8080, 25, 3306 };

static void gen_ports(struct t_rng *g, uint16_t *lo, uint16_t *hi, int any_pct)
{
	uint32_t c = t_below(g, 100);

	if (c < (uint32_t)any_pct) {
		*lo = 0;
		*hi = 65535;
	} else if (c < (uint32_t)any_pct + 25) {
		*lo = *hi = common_ports[t_below(g, 8)];
	} else if (c < (uint32_t)any_pct + 35) {
		static const uint16_t cl[][2] = { { 0, 1023 }, { 1024, 65535 },
						 { 49152, 65535 }, { 6000, 6063 } };
		uint32_t k = t_below(g, 4);

		*lo = cl[k][0];
		*hi = cl[k][1];
	} else {
		uint32_t a = 1000 + t_below(g, 4000), b = a + t_below(g, 3000);

		*lo = (uint16_t)a;
		*hi = (uint16_t)(b > 65535 ? 65535 : b);
	}
}

/* addresses come from a small pool so that rules overlap and packets hit */
static uint32_t pool4(struct t_rng *g)
{
	return 0x0a000000u | (t_below(g, 4) << 16) | (t_below(g, 8) << 8) | t_below(g, 16);
}

static void pool6(struct t_rng *g, uint8_t *a)
{
	memset(a, 0, 16);
	a[0] = 0x20;
	a[1] = 0x01;
	a[2] = 0x0d;
	a[3] = 0xb8;
	a[5] = (uint8_t)t_below(g, 4);
	a[7] = (uint8_t)t_below(g, 4);
	a[15] = (uint8_t)t_below(g, 16);
}

void t_gen_rule(struct t_rng *g, enum t_shape shape, uint32_t handle,
		struct xtcam_rule *r)
{
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP };
	uint8_t a6[16];

	t_rule(r, 1 + t_below(g, shape == T_SHAPE_FEW_MASKS ? 3 : 200), handle);
	r->action.type = 1 + t_below(g, 3);   /* drop, pass, tx */
	switch (shape) {
	case T_SHAPE_V4_5TUPLE:
		if (t_below(g, 5))
			t_match_ip4(r, true, pool4(g), v4_plens[t_below(g, 12)]);
		if (t_below(g, 5) || !r->mask.src_ip[0])
			t_match_ip4(r, false, pool4(g), 16 + 8 * (int)t_below(g, 3));
		if (t_below(g, 4)) {
			t_match_ethtype(r, 0x0800);
			t_match_proto(r, protos[t_below(g, 3)]);
			gen_ports(g, &r->dport_lo, &r->dport_hi, 40);
			if (!t_below(g, 4))
				gen_ports(g, &r->sport_lo, &r->sport_hi, 0);
			if (r->dport_lo || r->dport_hi != 0xffff)
				r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
			if (r->sport_lo || r->sport_hi != 0xffff)
				r->keywords |= XTCAM_KW_BIT(XTCAM_KW_SRC_PORT);
		}
		break;
	case T_SHAPE_V6:
		if (t_below(g, 4)) {
			pool6(g, a6);
			t_match_ip6(r, true, a6, (int)t_below(g, 129));
		}
		if (t_below(g, 4)) {
			pool6(g, a6);
			t_match_ip6(r, false, a6, 32 + 8 * (int)t_below(g, 13));
		}
		t_match_ethtype(r, 0x86dd);
		if (t_below(g, 2)) {
			t_match_proto(r, protos[t_below(g, 2)]);
			gen_ports(g, &r->dport_lo, &r->dport_hi, 30);
			r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
		}
		break;
	case T_SHAPE_MIXED: {
		uint32_t c = t_below(g, 8);

		if (c == 0) {            /* MACs */
			r->value.dst_mac[0] = 0x02;
			r->value.dst_mac[5] = (uint8_t)t_below(g, 4);
			memset(r->mask.dst_mac, 0xff, 6);
			if (t_below(g, 2)) {
				r->mask.dst_mac[5] = 0;
				r->value.dst_mac[5] = 0;
			}
			r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_MAC);
		} else if (c == 1) {     /* VLAN id, prio, untagged */
			uint32_t v = t_below(g, 3);

			if (v == 0) {
				r->value.vlan_tci = htons((uint16_t)(100 + t_below(g, 3)));
				r->mask.vlan_tci = htons(0x0fff);
			} else if (v == 1) {
				r->value.vlan_tci = htons((uint16_t)(t_below(g, 8) << 13));
				r->mask.vlan_tci = htons(0xe000);
			} else {
				r->mask.flags = XTCAM_F_VLAN1;   /* untagged */
			}
		} else if (c == 2) {     /* cvlan */
			r->value.cvlan_tci = htons((uint16_t)(200 + t_below(g, 2)));
			r->mask.cvlan_tci = htons(0x0fff);
		} else if (c == 3) {     /* ICMP type */
			t_match_ethtype(r, 0x0800);
			t_match_proto(r, IPPROTO_ICMP);
			r->value.icmp_type = (uint8_t)(t_below(g, 2) ? 8 : 0);
			r->mask.icmp_type = 0xff;
		} else if (c == 4) {     /* tcp flags */
			t_match_proto(r, IPPROTO_TCP);
			r->value.tcp_flags = htons(0x002);
			r->mask.tcp_flags = htons(t_below(g, 2) ? 0x012 : 0x002);
		} else if (c == 5) {     /* tos / ttl masks */
			r->value.ip_tos = (uint8_t)(t_below(g, 4) << 2);
			r->mask.ip_tos = 0xfc;
			if (t_below(g, 2)) {
				r->value.ip_ttl = 64;
				r->mask.ip_ttl = 0xff;
			}
		} else if (c == 6) {     /* fragments */
			uint32_t f = t_below(g, 4);

			r->mask.flags = f < 2 ? XTCAM_F_FRAG : XTCAM_F_FIRSTFRAG;
			r->value.flags = (f & 1) ? r->mask.flags : 0;
		} else if (t_below(g, 8) == 0) { /* eth_type only, arp or ipv6 */
			t_match_ethtype(r, t_below(g, 2) ? 0x0806 : 0x86dd);
		}
		if (((c == 2 || c == 3) && t_below(g, 2)) || c == 0 || c == 1 ||
		    (c >= 4 && c <= 6) || (c == 7 && !r->mask.eth_type))
			t_match_ip4(r, t_below(g, 2), pool4(g), 16 + 8 * (int)t_below(g, 3));
		break;
	}
	case T_SHAPE_FEW_MASKS: {
		uint32_t c = t_below(g, 4);

		t_match_ethtype(r, 0x0800);
		if (c == 0) {
			t_match_ip4(r, false, pool4(g), 32);
		} else if (c == 1) {
			t_match_ip4(r, true, pool4(g), 24);
			t_match_ip4(r, false, pool4(g), 24);
		} else if (c == 2) {
			t_match_proto(r, IPPROTO_TCP);
			r->dport_lo = r->dport_hi = common_ports[t_below(g, 8)];
			r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
		} else {
			t_match_ip4(r, true, pool4(g), 16);
		}
		break;
	}
	default:
		break;
	}
}

void t_gen_packet(struct t_rng *g, const struct xtcam_rule *r, struct pkt_spec *s)
{
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP,
					  IPPROTO_ICMP };
	uint32_t a = pool4(g), b = pool4(g);
	struct xtcam_rec rec;
	uint8_t a6[16];
	int i;

	pkt_spec_init(s);
	s->dst[5] = (uint8_t)t_below(g, 4);
	s->tos = (uint8_t)(t_below(g, 4) << 2);
	s->ttl = t_below(g, 2) ? 64 : 63;
	if (t_below(g, 3) == 0) {
		s->eth_type = 0x86dd;
		pool6(g, s->saddr);
		pool6(g, s->daddr);
		s->proto = protos[t_below(g, 3)];
		if (s->proto == IPPROTO_ICMP)
			s->proto = 58;
		if (t_below(g, 5) == 0) {
			s->ext[s->next++] = 0;
			if (t_below(g, 2))
				s->ext[s->next++] = 44;
		}
	} else {
		a = htonl(a);
		b = htonl(b);
		memcpy(s->saddr, &a, 4);
		memcpy(s->daddr, &b, 4);
		s->proto = protos[t_below(g, 4)];
		if (t_below(g, 8) == 0)
			s->ipopt = 4;
	}
	if (t_below(g, 12) == 0)
		s->eth_type = 0x0806;
	s->sport = (uint16_t)t_rand(g);
	s->dport = t_below(g, 2) ? common_ports[t_below(g, 8)] : (uint16_t)t_rand(g);
	s->tcp_flags = t_below(g, 2) ? 0x002 : 0x010;
	s->icmp_type = t_below(g, 2) ? 8 : 0;
	if (t_below(g, 6) == 0) {
		s->nvlan = 1 + (int)t_below(g, 2);
		for (i = 0; i < s->nvlan; i++) {
			s->tpid[i] = i == 0 && t_below(g, 2) ? 0x88a8 : 0x8100;
			s->tci[i] = (uint16_t)((t_below(g, 8) << 13) |
					       (i ? 200 + t_below(g, 2) : 100 + t_below(g, 3)));
		}
	}
	if (t_below(g, 15) == 0)
		s->frag = 1 + (int)t_below(g, 2);
	if (s->frag && s->eth_type == 0x86dd && !s->next)
		s->ext[s->next++] = 44;
	if (!r)
		return;

	/* satisfy r: its values where it cares, the random rest elsewhere */
	if (xtcam_rule_compile(r, &rec))
		return;
	if (rec.mask.eth_type)
		s->eth_type = ntohs(rec.value.eth_type);
	if (s->eth_type != 0x0800 && s->eth_type != 0x86dd &&
	    (rec.mask.flags & (XTCAM_F_L3 | XTCAM_F_PROTO)))
		s->eth_type = 0x0800;
	if (s->eth_type == 0x86dd && !rec.mask.eth_type && (rec.mask.src_ip[0] || rec.mask.dst_ip[0])) {
		s->eth_type = 0x0800;
	}
	if (rec.mask.eth_type && s->eth_type == 0x86dd && s->saddr[0] != 0x20) {
		pool6(g, a6);
		memcpy(s->saddr, a6, 16);
		pool6(g, a6);
		memcpy(s->daddr, a6, 16);
	}
	if (s->eth_type != 0x86dd) {
		memset(s->saddr + 4, 0, 12);
		memset(s->daddr + 4, 0, 12);
		s->next = 0;
	}
	for (i = 0; i < 16; i++) {
		uint8_t *vs = (uint8_t *)rec.value.src_ip, *ms = (uint8_t *)rec.mask.src_ip;
		uint8_t *vd = (uint8_t *)rec.value.dst_ip, *md = (uint8_t *)rec.mask.dst_ip;

		s->saddr[i] = (uint8_t)((s->saddr[i] & ~ms[i]) | vs[i]);
		s->daddr[i] = (uint8_t)((s->daddr[i] & ~md[i]) | vd[i]);
	}
	for (i = 0; i < 6; i++)
		s->dst[i] = (uint8_t)((s->dst[i] & ~rec.mask.dst_mac[i]) | rec.value.dst_mac[i]);
	if (rec.mask.ip_proto)
		s->proto = rec.value.ip_proto;
	if (s->eth_type == 0x86dd && s->proto == IPPROTO_ICMP)
		s->proto = 58;
	if (s->eth_type == 0x0800 && s->proto == 58)
		s->proto = IPPROTO_ICMP;
	if (rec.mask.flags & XTCAM_F_L4) {
		if (s->proto != IPPROTO_TCP && s->proto != IPPROTO_UDP && s->proto != IPPROTO_SCTP)
			s->proto = IPPROTO_UDP;
		s->sport = (uint16_t)(rec.sport_lo + t_below(g, (uint32_t)rec.sport_hi - rec.sport_lo + 1));
		s->dport = (uint16_t)(rec.dport_lo + t_below(g, (uint32_t)rec.dport_hi - rec.dport_lo + 1));
		if (s->frag == 2)
			s->frag = 0;
	}
	if (rec.mask.flags & XTCAM_F_ICMP) {
		s->icmp_type = (uint8_t)((s->icmp_type & ~rec.mask.icmp_type) | rec.value.icmp_type);
		if (s->frag == 2)
			s->frag = 0;
	}
	if (rec.mask.tcp_flags) {
		uint16_t v = ntohs(rec.value.tcp_flags), m = ntohs(rec.mask.tcp_flags);

		s->tcp_flags = (uint16_t)((s->tcp_flags & ~m) | v);
		if (s->frag == 2)
			s->frag = 0;
	}
	s->tos = (uint8_t)((s->tos & ~rec.mask.ip_tos) | rec.value.ip_tos);
	s->ttl = (uint8_t)((s->ttl & ~rec.mask.ip_ttl) | rec.value.ip_ttl);
	if (rec.mask.flags & XTCAM_F_VLAN1) {
		if (!(rec.value.flags & XTCAM_F_VLAN1)) {
			s->nvlan = 0;
		} else if (!s->nvlan) {
			s->nvlan = 1;
			s->tpid[0] = 0x8100;
		}
		if (rec.mask.flags & XTCAM_F_VLAN2 && s->nvlan < 2) {
			s->nvlan = 2;
			s->tpid[1] = 0x8100;
		}
		for (i = 0; i < s->nvlan; i++) {
			uint16_t v = ntohs(i ? rec.value.cvlan_tci : rec.value.vlan_tci);
			uint16_t m = ntohs(i ? rec.mask.cvlan_tci : rec.mask.vlan_tci);

			s->tci[i] = (uint16_t)((s->tci[i] & ~m) | v);
		}
	}
	if (rec.mask.flags & XTCAM_F_FRAG) {
		if (rec.value.flags & XTCAM_F_FRAG) {
			if (!s->frag)
				s->frag = 1 + (int)t_below(g, 2);
		} else {
			s->frag = 0;
		}
	}
	if (rec.mask.flags & XTCAM_F_FIRSTFRAG)
		s->frag = (rec.value.flags & XTCAM_F_FIRSTFRAG) ? 1 : (t_below(g, 2) ? 2 : 0);
	if (s->eth_type == 0x86dd && s->frag) {
		int j, have = 0;

		for (j = 0; j < s->next; j++)
			have |= s->ext[j] == 44;
		if (!have)
			s->ext[s->next++] = 44;
	}
	if (s->eth_type == 0x86dd && !s->frag) {
		int j, k = 0;

		for (j = 0; j < s->next; j++)
			if (s->ext[j] != 44)
				s->ext[k++] = s->ext[j];
		s->next = k;
	}
}

void t_rule_format(const struct xtcam_rule *r, char *buf, size_t len)
{
	const uint8_t *vs = (const uint8_t *)r->value.src_ip, *ms = (const uint8_t *)r->mask.src_ip;
	const uint8_t *vd = (const uint8_t *)r->value.dst_ip, *md = (const uint8_t *)r->mask.dst_ip;
	char a[40], b[40], c[40], d[40];

	inet_ntop(AF_INET6, vs, a, sizeof(a));
	inet_ntop(AF_INET6, ms, b, sizeof(b));
	inet_ntop(AF_INET6, vd, c, sizeof(c));
	inet_ntop(AF_INET6, md, d, sizeof(d));
	snprintf(buf, len,
		 "prio %u handle %u eth %#x/%#x proto %u/%#x src %s/%s dst %s/%s "
		 "sport %u-%u dport %u-%u flags %#x/%#x vlan %#x/%#x cvlan %#x/%#x "
		 "tos %#x/%#x ttl %u/%#x icmp %u/%#x tcpfl %#x/%#x mac5 %u/%#x act %u",
		 r->prio, r->handle, ntohs(r->value.eth_type), ntohs(r->mask.eth_type),
		 r->value.ip_proto, r->mask.ip_proto, a, b, c, d, r->sport_lo,
		 r->sport_hi, r->dport_lo, r->dport_hi, r->value.flags, r->mask.flags,
		 ntohs(r->value.vlan_tci), ntohs(r->mask.vlan_tci),
		 ntohs(r->value.cvlan_tci), ntohs(r->mask.cvlan_tci), r->value.ip_tos,
		 r->mask.ip_tos, r->value.ip_ttl, r->mask.ip_ttl, r->value.icmp_type,
		 r->mask.icmp_type, ntohs(r->value.tcp_flags), ntohs(r->mask.tcp_flags),
		 r->value.dst_mac[5], r->mask.dst_mac[5], r->action.type);
}

/* --- BPF ------------------------------------------------------------------- */

int t_xdp_run(int prog_fd, const void *data, uint32_t len, uint32_t *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = len,
		    .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	*retval = o.retval;
	return 0;
}

int t_scratch(struct xtcam_dp *dp, struct xtcam_scratch *s)
{
	int n = libbpf_num_possible_cpus(), cpu = sched_getcpu(), err = 0;
	size_t sz = (sizeof(*s) + 7) & ~7ul;
	char *buf;
	uint32_t zero = 0;

	if (n < 0 || cpu < 0 || cpu >= n)
		return -EINVAL;
	buf = malloc(sz * (size_t)n);
	if (!buf)
		return -ENOMEM;
	if (bpf_map_lookup_elem(xtcam_dp_map_fd(dp, XTCAM_MAP_SCRATCH), &zero, buf))
		err = -errno;
	else
		memcpy(s, buf + sz * (size_t)cpu, sizeof(*s));
	free(buf);
	return err;
}

int t_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

bool t_have_bpf(void)
{
	return geteuid() == 0;
}

int t_xdp_prog_in(const char *netns, const char *dev, uint32_t *id)
{
	int saved, err, ifindex;

	err = xtcam_ns_enter_name(netns, &saved, NULL, 0);
	if (err)
		return err;
	ifindex = (int)if_nametoindex(dev);
	err = ifindex ? bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, id) : -errno;
	if (!err && !*id)
		err = -ENOENT;
	xtcam_ns_leave(saved);
	return err;
}

int t_prog_map(uint32_t prog_id, const char *name)
{
	__u32 ids[16], i, len;
	struct bpf_prog_info info;
	int pfd = bpf_prog_get_fd_by_id(prog_id);

	if (pfd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	info.nr_map_ids = 16;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len)) {
		close(pfd);
		return -errno;
	}
	close(pfd);
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi;
		__u32 ml = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) && !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	return -ENOENT;
}
