// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Rules -> the offload variant's table; see xtcam/hwcompile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/compile.h"
#include <bpf/bpf.h>
#include "xtcam/hwcompile.h"

/* The full-key mask the compact key covers: what an offloaded rule may
 * match on. */
static void hw_coverage(struct xtcam_key *m)
{
	memset(m, 0, sizeof(*m));
	m->eth_type = 0xffff;
	m->ip_proto = 0xff;
	m->ip_tos = 0xff;
	m->src_port = 0xffff;
	m->dst_port = 0xffff;
	m->src_ip[0] = 0xffffffff;
	m->dst_ip[0] = 0xffffffff;
	m->vlan_tci = 0xffff;
	m->tcp_flags = 0xffff;
	m->flags = 0xffff & ~(XTCAM_F_RAW1 | XTCAM_F_RAW2 | XTCAM_F_VLAN2 |
			      XTCAM_F_L3X);
	m->icmp_type = 0xff;
	m->icmp_code = 0xff;
}

static const struct {
	size_t off, len;
	const char *name;
} fields[] = {
#define F(f, n) { offsetof(struct xtcam_key, f), sizeof(((struct xtcam_key *)0)->f), n }
	F(src_ip, "an IPv6 address"),
	F(dst_ip, "an IPv6 address"),
	F(dst_mac, "dst_mac"),
	F(src_mac, "src_mac"),
	F(vlan_ethtype, "vlan_ethtype"),
	F(cvlan_tci, "the inner VLAN tag"),
	F(cvlan_ethtype, "cvlan_ethtype"),
	F(ip_ttl, "ip_ttl"),
	F(raw1, "raw1"),
	F(raw2, "raw2"),
	F(ifindex, "indev (the offload program cannot tell the device)"),
	F(flags, "two VLAN tags or raw fields"),
#undef F
};

int xtcam_hw_rule_check(const struct xtcam_rule *r, char *err, size_t errlen)
{
	struct xtcam_rec rec;
	struct xtcam_key cov;
	const unsigned char *m, *c;
	size_t i, j;
	int e = xtcam_rule_compile(r, &rec);

	if (e) {
		snprintf(err, errlen, "handle %u: malformed rule", r->handle);
		return e;
	}
	if (r->action.type != XTCAM_ACT_DROP && r->action.type != XTCAM_ACT_PASS &&
	    r->action.type != XTCAM_ACT_TX) {
		snprintf(err, errlen, "handle %u: offload does drop, pass and tx only, not %s",
			 r->handle, r->action.type == XTCAM_ACT_REDIRECT ? "redirect" : "cpu");
		return -EOPNOTSUPP;
	}
	/* the offload program's parser reads none of these (parse.h, full
	 * 0): their fields would stay zero */
	if (rec.mask.flags & XTCAM_F_L3X) {
		snprintf(err, errlen, "handle %u: matches on ARP, MPLS, PPPoE or CFM "
			 "fields, which the offload program does not parse", r->handle);
		return -EOPNOTSUPP;
	}
	if (r->keywords & (XTCAM_KW_BIT(XTCAM_KW_L2TPV3_SID) |
			   XTCAM_KW_BIT(XTCAM_KW_SPI))) {
		snprintf(err, errlen, "handle %u: matches on an L2TPv3 session id or "
			 "an SPI, which the offload program does not parse", r->handle);
		return -EOPNOTSUPP;
	}
	hw_coverage(&cov);
	m = (const unsigned char *)&rec.mask;
	c = (const unsigned char *)&cov;
	for (i = 0; i < sizeof(rec.mask); i++) {
		if (!(m[i] & ~c[i]))
			continue;
		for (j = 0; j < sizeof(fields) / sizeof(fields[0]); j++)
			if (i >= fields[j].off && i < fields[j].off + fields[j].len)
				break;
		snprintf(err, errlen, "handle %u: matches on %s, which the offload key does not have",
			 r->handle, j < sizeof(fields) / sizeof(fields[0]) ? fields[j].name :
			 "a field");
		return -EOPNOTSUPP;
	}
	return 0;
}

static int cmp_rank(const void *a, const void *b)
{
	__u64 x = xtcam_rule_rank(*(const struct xtcam_rule *const *)a);
	__u64 y = xtcam_rule_rank(*(const struct xtcam_rule *const *)b);

	return x < y ? -1 : x > y;
}

int xtcam_hw_compile(const struct xtcam_rule *rules, size_t n, __u32 dflt, __u32 max,
		     struct xtcam_hw_table *t, char *err, size_t errlen)
{
	const struct xtcam_rule **sorted;
	struct xtcam_entry ent[64];
	size_t i, need = 0;
	int e = 0, k, ne;

	memset(t, 0, sizeof(*t));
	if (max > XTCAM_HW_MAX_ENTRIES)
		max = XTCAM_HW_MAX_ENTRIES;
	for (i = 0; i < n; i++) {
		e = xtcam_hw_rule_check(&rules[i], err, errlen);
		if (e)
			return e;
		need += xtcam_rule_entries(&rules[i]);
	}
	if (need > max) {
		snprintf(err, errlen, "needs %zu entries, device takes %u", need, max);
		return -ENOSPC;
	}
	sorted = malloc((n + 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		sorted[i] = &rules[i];
	qsort(sorted, n, sizeof(*sorted), cmp_rank);
	for (i = 0; i < n && !e; i++) {
		ne = xtcam_rule_expand(sorted[i], ent, 64);
		if (ne < 0) {
			e = ne;
			break;
		}
		for (k = 0; k < ne; k++) {
			struct xtcam_hw_entry *he = &t->entry[t->nentries];

			xtcam_hw_key_of(&ent[k].value, &he->value);
			xtcam_hw_key_of(&ent[k].mask, &he->mask);
			t->act[t->nentries].type = sorted[i]->action.type;
			t->act[t->nentries].cnt = t->nrules;
			t->nentries++;
		}
		t->handle[t->nrules++] = sorted[i]->handle;
	}
	t->cfg.nentries = t->nentries;
	t->cfg.dflt = dflt;
	free(sorted);
	return e;
}

int xtcam_hw_counters_assign(struct xtcam_hw_table *t, const __u32 *prev, __u32 max,
			     __u32 *next)
{
	__u32 idx[XTCAM_HW_MAX_ENTRIES], r, i;

	if (max > XTCAM_HW_MAX_ENTRIES)
		max = XTCAM_HW_MAX_ENTRIES;
	if (t->nrules > max)
		return -ENOSPC;
	memset(next, 0, XTCAM_HW_MAX_ENTRIES * sizeof(*next));
	for (r = 0; r < t->nrules; r++) {
		idx[r] = max;
		for (i = 0; prev && i < max; i++)
			if (prev[i] && prev[i] == t->handle[r]) {
				idx[r] = i;
				next[i] = t->handle[r];
				break;
			}
	}
	for (r = 0; r < t->nrules; r++) {
		if (idx[r] < max)
			continue;
		/* a free index: no rule kept it or took it */
		for (i = 0; i < max && next[i]; i++)
			;
		if (i == max)
			return -ENOSPC;
		idx[r] = i;
		next[i] = t->handle[r];
	}
	for (i = 0; i < t->nentries; i++)
		t->act[i].cnt = idx[t->act[i].cnt];
	return 0;
}

int xtcam_hw_lookup(const struct xtcam_hw_table *t, const struct xtcam_key *k,
		    __u32 *action)
{
	struct xtcam_hw_key hk;
	__u32 i, j;

	xtcam_hw_key_of(k, &hk);
	for (i = 0; i < t->nentries; i++) {
		const __u32 *kw = (const __u32 *)&hk;
		const __u32 *v = (const __u32 *)&t->entry[i].value;
		const __u32 *m = (const __u32 *)&t->entry[i].mask;

		for (j = 0; j < sizeof(hk) / 4; j++)
			if ((kw[j] & m[j]) != v[j])
				break;
		if (j == sizeof(hk) / 4) {
			*action = t->act[i].type;
			return (int)i;
		}
	}
	*action = t->cfg.dflt;
	return -1;
}

int xtcam_hw_write(int cfg_fd, int entries_fd, int acts_fd, const struct xtcam_hw_table *t)
{
	__u32 i, zero = 0;

	for (i = 0; i < t->nentries; i++) {
		if (bpf_map_update_elem(entries_fd, &i, &t->entry[i], 0) ||
		    bpf_map_update_elem(acts_fd, &i, &t->act[i], 0))
			return -errno;
	}
	return bpf_map_update_elem(cfg_fd, &zero, &t->cfg, 0) ? -errno : 0;
}
