// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* include/xtcam/list.h */
#include <criterion/criterion.h>
#include "xtcam/list.h"

struct item {
	int v;
	struct list_head node;
};

/* Write the values of `head` into `out`, return how many. */
static int values(struct list_head *head, int *out, int max)
{
	struct item *it;
	int n = 0;

	list_for_each_entry(it, head, node) {
		cr_assert_lt(n, max, "list longer than expected");
		out[n++] = it->v;
	}
	return n;
}

static void expect(struct list_head *head, const int *want, int n)
{
	int got[16];
	int m = values(head, got, 16);

	cr_assert_eq(m, n, "list has %d entries, want %d", m, n);
	for (int i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "entry %d is %d, want %d", i,
			     got[i], want[i]);
	cr_assert_eq(list_count_nodes(head), (size_t)n);
}

Test(list, init_empty)
{
	LIST_HEAD(h);
	struct list_head h2;

	INIT_LIST_HEAD(&h2);
	cr_assert(list_empty(&h));
	cr_assert(list_empty(&h2));
	cr_assert_eq(list_count_nodes(&h), 0);
}

Test(list, add_is_stack_add_tail_is_queue)
{
	LIST_HEAD(h);
	struct item a = { .v = 1 }, b = { .v = 2 }, c = { .v = 3 };

	list_add(&a.node, &h);
	list_add(&b.node, &h);
	list_add_tail(&c.node, &h);
	cr_assert_not(list_empty(&h));
	expect(&h, (int[]){ 2, 1, 3 }, 3);
	cr_assert_eq(list_first_entry(&h, struct item, node), &b);
	cr_assert_eq(list_last_entry(&h, struct item, node), &c);
}

Test(list, del_unlinks_and_self_links)
{
	LIST_HEAD(h);
	struct item a = { .v = 1 }, b = { .v = 2 }, c = { .v = 3 };

	list_add_tail(&a.node, &h);
	list_add_tail(&b.node, &h);
	list_add_tail(&c.node, &h);
	list_del(&b.node);
	expect(&h, (int[]){ 1, 3 }, 2);
	cr_assert(list_empty(&b.node), "a deleted entry points at itself");
	list_del(&b.node);    /* harmless a second time */
	expect(&h, (int[]){ 1, 3 }, 2);
	list_del(&a.node);
	list_del_init(&c.node);
	cr_assert(list_empty(&h));
}

Test(list, move_and_move_tail)
{
	LIST_HEAD(h1);
	LIST_HEAD(h2);
	struct item a = { .v = 1 }, b = { .v = 2 }, c = { .v = 3 };

	list_add_tail(&a.node, &h1);
	list_add_tail(&b.node, &h1);
	list_add_tail(&c.node, &h2);
	list_move(&b.node, &h2);
	expect(&h1, (int[]){ 1 }, 1);
	expect(&h2, (int[]){ 2, 3 }, 2);
	list_move_tail(&a.node, &h2);
	cr_assert(list_empty(&h1));
	expect(&h2, (int[]){ 2, 3, 1 }, 3);
	list_move_tail(&b.node, &h2);    /* within the same list */
	expect(&h2, (int[]){ 3, 1, 2 }, 3);
}

Test(list, singular)
{
	LIST_HEAD(h);
	struct item a = { .v = 1 }, b = { .v = 2 };

	cr_assert_not(list_is_singular(&h));
	list_add(&a.node, &h);
	cr_assert(list_is_singular(&h));
	list_add(&b.node, &h);
	cr_assert_not(list_is_singular(&h));
}

Test(list, splice_tail_init)
{
	LIST_HEAD(h1);
	LIST_HEAD(h2);
	struct item a = { .v = 1 }, b = { .v = 2 }, c = { .v = 3 };

	list_splice_tail_init(&h2, &h1);    /* empty into empty */
	cr_assert(list_empty(&h1));
	list_add_tail(&a.node, &h1);
	list_add_tail(&b.node, &h2);
	list_add_tail(&c.node, &h2);
	list_splice_tail_init(&h2, &h1);
	cr_assert(list_empty(&h2));
	expect(&h1, (int[]){ 1, 2, 3 }, 3);
}

Test(list, for_each_entry_safe_allows_deletion)
{
	LIST_HEAD(h);
	struct item it[6], *pos, *n;

	for (int i = 0; i < 6; i++) {
		it[i].v = i;
		list_add_tail(&it[i].node, &h);
	}
	list_for_each_entry_safe(pos, n, &h, node)
		if (pos->v % 2)
			list_del(&pos->node);
	expect(&h, (int[]){ 0, 2, 4 }, 3);
	list_for_each_entry_safe_reverse(pos, n, &h, node)
		list_del(&pos->node);
	cr_assert(list_empty(&h));
}

Test(list, reverse_and_container_of)
{
	LIST_HEAD(h);
	struct item a = { .v = 1 }, b = { .v = 2 }, *pos;
	int got[2], n = 0;

	list_add_tail(&a.node, &h);
	list_add_tail(&b.node, &h);
	list_for_each_entry_reverse(pos, &h, node)
		got[n++] = pos->v;
	cr_assert_eq(n, 2);
	cr_assert_eq(got[0], 2);
	cr_assert_eq(got[1], 1);
	cr_assert_eq(container_of(&b.node, struct item, node), &b);
	cr_assert_eq(list_next_entry(&a, node), &b);
	cr_assert_eq(list_prev_entry(&b, node), &a);
}
