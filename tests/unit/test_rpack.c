// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Packed rules (user/rpack.c): what goes in comes out, byte for byte, at
 * a fraction of a rule's size; a rule that is not packed is read as it is. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/syntax.h"
#include "rpack.h"

static const char *lines[] = {
	"prio 7 eth_type ipv4 src_ip 10.1.2.3 action drop",
	"prio 1 handle 77 eth_type ipv6 dst_ip 2001:db8::/48 ip_proto tcp dst_port 80-443 action pass",
	"prio 65535 src_mac 02:00:00:00:00:01 vlan_id 12 action redirect dev lo",
	"prio 3 eth_type ipv4 ip_proto udp src_port 53 action drop",
	"prio 9 action pass",
};

Test(rpack, what_goes_in_comes_out)
{
	enum { N = 3000 };
	struct xtcam_rule *in = calloc(N, sizeof(*in)), out;
	struct xtcam_rpack p;
	char err[256];
	size_t i, k;

	cr_assert(in);
	xtcam_rpack_init(&p);
	srand(7);
	for (i = 0; i < N; i++) {
		if (i % 3) {
			cr_assert_eq(xtcam_rule_parse_line(lines[i % 5], &in[i], NULL, err,
							   sizeof(err)), 0, "%s", err);
		} else {
			/* any bytes at all: zeros here and there */
			unsigned char *b = (unsigned char *)&in[i];

			for (k = 0; k < sizeof(in[i]); k++)
				b[k] = rand() % 3 ? 0 : (unsigned char)rand();
		}
		cr_assert_eq(xtcam_rpack_add(&p, &in[i]), 0);
	}
	cr_assert_eq(xtcam_rpack_seal(&p), 0);
	cr_assert_eq(p.n, N);
	for (i = 0; i < N; i++) {
		const struct xtcam_rule *a = xtcam_rpack_rule(&p, i), *v;

		memset(&out, 0xa5, sizeof(out));
		v = xtcam_rule_view(a, &out);
		cr_assert_eq(v, &out, "rule %zu: not unpacked", i);
		cr_assert(!memcmp(v, &in[i], sizeof(out)), "rule %zu: changed by the pack", i);
		cr_assert_eq(xtcam_rule_handle_of(a), in[i].handle);
		cr_assert_eq(xtcam_rule_prio_of(a), in[i].prio);
	}
	/* a rule that is not packed: itself */
	cr_assert_eq(xtcam_rule_view(&in[5], &out), &in[5]);
	cr_assert_eq(xtcam_rule_handle_of(&in[5]), in[5].handle);
	xtcam_rpack_free(&p);
	cr_assert_eq(xtcam_rpack_nlive, 0);
	free(in);
}

Test(rpack, a_handle_is_set_in_place)
{
	struct xtcam_rpack p;
	struct xtcam_rule r, out;
	char err[256];

	xtcam_rpack_init(&p);
	cr_assert_eq(xtcam_rule_parse_line(lines[0], &r, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.handle, 0);
	cr_assert_eq(xtcam_rpack_add(&p, &r), 0);
	xtcam_rpack_set_handle(&p, 0, 4242);
	cr_assert_eq(xtcam_rpack_seal(&p), 0);
	r.handle = 4242;
	xtcam_rpack_get(&p, 0, &out);
	cr_assert(!memcmp(&out, &r, sizeof(r)));
	cr_assert_eq(xtcam_rule_handle_of(xtcam_rpack_rule(&p, 0)), 4242);
	cr_assert_eq(xtcam_rule_prio_of(xtcam_rpack_rule(&p, 0)), 7);
	xtcam_rpack_free(&p);
}

/* a /32 rule of a big load: under 96 bytes packed, index included (272
 * unpacked) */
Test(rpack, a_host_rule_takes_under_96_bytes)
{
	enum { N = 10000 };
	struct xtcam_rpack p;
	struct xtcam_rule r;
	char line[128], err[256];
	size_t i;

	xtcam_rpack_init(&p);
	for (i = 0; i < N; i++) {
		snprintf(line, sizeof(line), "prio %zu eth_type ipv4 src_ip 10.%zu.%zu.%zu action drop",
			 1 + i % 1000, i >> 16, (i >> 8) & 255, i & 255);
		cr_assert_eq(xtcam_rule_parse_line(line, &r, NULL, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(xtcam_rpack_add(&p, &r), 0);
	}
	cr_assert_eq(xtcam_rpack_seal(&p), 0);
	cr_assert_lt((p.len + p.n * sizeof(*p.off)) / N, 96, "%zu bytes a rule",
		     (p.len + p.n * sizeof(*p.off)) / N);
	xtcam_rpack_free(&p);
}

static void parse_nth(size_t i, struct xtcam_rule *r)
{
	char line[160], err[256];

	snprintf(line, sizeof(line), "%s", lines[i % 5]);
	cr_assert_eq(xtcam_rule_parse_line(line, r, NULL, err, sizeof(err)), 0, "%s", err);
	r->prio = 1 + (__u32)(i % 60000);
	if (i % 7 == 3)
		r->handle = (__u32)(1000 + i);
}

/* two halves of a file, each packed in room reserved for the whole file,
 * joined: every rule as it went in, in order; the handles given counted */
static void join_halves(size_t n, size_t room_a, size_t room_b)
{
	struct xtcam_rpack a, b;
	struct xtcam_rule r, out;
	size_t i, given = 0, la, lb;
	__u32 maxh = 0;
	bool moved;

	xtcam_rpack_init(&a);
	xtcam_rpack_init(&b);
	if (room_a)
		cr_assert_eq(xtcam_rpack_reserve(&a, room_a), 0);
	if (room_b)
		cr_assert_eq(xtcam_rpack_reserve(&b, room_b), 0);
	for (i = 0; i < n; i++) {
		parse_nth(i, &r);
		given += r.handle != 0;
		maxh = r.handle > maxh ? r.handle : maxh;
		cr_assert_eq(xtcam_rpack_add(i < n / 3 ? &a : &b, &r), 0);
	}
	la = a.len;
	lb = b.len;
	moved = a.mapped && b.mapped;
	cr_assert_eq(xtcam_rpack_append(&a, &b), 0);
	/* two reserved packs: b's pages moved in at a huge page's boundary
	 * of a's room (a copy would have put them at la) */
	if (moved)
		cr_assert_eq(a.len, (la + (2u << 20) - 1) / (2u << 20) * (2u << 20) + lb,
			     "b copied, not moved: len %zu (a's %zu, b's %zu)", a.len, la, lb);
	else
		cr_assert_eq(a.len, la + lb);
	cr_assert_eq(b.n, 0);
	cr_assert_eq(a.n, n);
	cr_assert_eq(a.nhandles, given);
	cr_assert_eq(a.max_handle, maxh);
	cr_assert_eq(xtcam_rpack_seal(&a), 0);
	for (i = 0; i < n; i++) {
		parse_nth(i, &r);
		xtcam_rpack_get(&a, i, &out);
		cr_assert(!memcmp(&out, &r, sizeof(r)), "rule %zu: changed by the join", i);
	}
	xtcam_rpack_free(&a);
}

Test(rpack, halves_in_reserved_room_join_in_order)
{
	join_halves(50000, 50000, 50000);
	/* an empty first half, both empty */
	join_halves(2, 3000, 3000);
	join_halves(0, 3000, 3000);
}

Test(rpack, a_pack_that_outgrows_its_room_goes_on)
{
	/* more rules than either's room: both go on in malloc's memory */
	join_halves(3000, 100, 100);
	/* one reserved, one not, each way */
	join_halves(3000, 3000, 0);
	join_halves(3000, 0, 3000);
}
