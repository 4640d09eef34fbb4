// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* include/xtcam/flow_block.h, user/flow_block.c: one test per function and
 * per errno path. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include "xtcam/flow_block.h"
#include "alloc.h"
#include "leakcheck.h"

static struct xtcam_net ns1 = { .dev = 4, .ino = 4026531840ull };
static struct xtcam_net ns2 = { .dev = 4, .ino = 4026532000ull };

static int cb_a(enum xtcam_setup_type type, void *data, void *priv)
{
	(void)type; (void)data; (void)priv;
	return 0;
}

/* a different body, so that no optimisation can fold it into cb_a */
static int cb_b(enum xtcam_setup_type type, void *data, void *priv)
{
	(void)type; (void)data; (void)priv;
	return -EOPNOTSUPP;
}

struct relcount {
	int calls;
	void *last;
};

static struct relcount rel;

static void count_release(void *priv)
{
	rel.calls++;
	rel.last = priv;
}

static void init_offload(struct flow_block_offload *f,
			 enum flow_block_command cmd,
			 enum flow_block_binder_type bt, struct xtcam_net *net)
{
	memset(f, 0, sizeof(*f));
	f->command = cmd;
	f->binder_type = bt;
	f->net = net;
	INIT_LIST_HEAD(&f->cb_list);
}

/* Unlink and free everything on a driver list (test cleanup). */
static void drain(struct list_head *driver_list)
{
	struct flow_block_cb *cb, *n;

	list_for_each_entry_safe(cb, n, driver_list, driver_list) {
		list_del(&cb->driver_list);
		list_del(&cb->list);
		flow_block_cb_free(cb);
	}
}

Test(err_ptr, round_trip)
{
	void *p = ERR_PTR(-ENOMEM);
	int x;

	cr_assert(IS_ERR(p));
	cr_assert(IS_ERR_OR_NULL(p));
	cr_assert_eq(PTR_ERR(p), -ENOMEM);
	cr_assert(IS_ERR(ERR_PTR(-MAX_ERRNO)));
	cr_assert_not(IS_ERR(ERR_PTR(-MAX_ERRNO - 1)));
	cr_assert_not(IS_ERR(&x));
	cr_assert_not(IS_ERR(NULL));
	cr_assert(IS_ERR_OR_NULL(NULL));
	cr_assert_not(IS_ERR_OR_NULL(&x));
}

Test(flow_block_cb, alloc_sets_fields)
{
	int priv, ident;
	struct flow_block_cb *cb;

	cb = flow_block_cb_alloc(&ns1, cb_a, &ident, &priv, count_release);
	cr_assert_not(IS_ERR_OR_NULL(cb));
	cr_assert_eq(cb->net, &ns1);
	cr_assert_eq(cb->cb, cb_a);
	cr_assert_eq(cb->cb_ident, &ident);
	cr_assert_eq(cb->cb_priv, &priv);
	cr_assert_eq(cb->release, count_release);
	cr_assert_eq(cb->refcnt, 0);
	cr_assert(list_empty(&cb->list));
	cr_assert(list_empty(&cb->driver_list));
	cr_assert_eq(rel.calls, 0, "alloc must not call release");
	flow_block_cb_free(cb);
	assert_no_leaks();
}

Test(flow_block_cb, alloc_enomem)
{
	int ident;
	struct flow_block_cb *cb;

	rel.calls = 0;
	xtcam_alloc_fail_after(0);
	cb = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, count_release);
	cr_assert(IS_ERR(cb));
	cr_assert_eq(PTR_ERR(cb), -ENOMEM);
	cr_assert_eq(rel.calls, 0, "a failed alloc owns nothing to release");
	assert_no_leaks();
}

Test(flow_block_cb, free_calls_release_once)
{
	int priv, ident;
	struct flow_block_cb *cb;

	rel.calls = 0;
	cb = flow_block_cb_alloc(&ns1, cb_a, &ident, &priv, count_release);
	cr_assert_not(IS_ERR(cb));
	flow_block_cb_free(cb);
	cr_assert_eq(rel.calls, 1);
	cr_assert_eq(rel.last, &priv, "release gets cb_priv");
	assert_no_leaks();
}

Test(flow_block_cb, free_without_release_and_null)
{
	int ident;
	struct flow_block_cb *cb;

	rel.calls = 0;
	cb = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(cb));
	flow_block_cb_free(cb);
	flow_block_cb_free(NULL);
	cr_assert_eq(rel.calls, 0);
	assert_no_leaks();
}

Test(flow_block_cb, priv)
{
	int priv, ident;
	struct flow_block_cb *cb;

	cb = flow_block_cb_alloc(&ns1, cb_a, &ident, &priv, NULL);
	cr_assert_not(IS_ERR(cb));
	cr_assert_eq(flow_block_cb_priv(cb), &priv);
	flow_block_cb_free(cb);
}

Test(flow_block_cb, incref_decref)
{
	int ident;
	struct flow_block_cb *cb;

	cb = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(cb));
	flow_block_cb_incref(cb);
	cr_assert_eq(cb->refcnt, 1);
	flow_block_cb_incref(cb);
	cr_assert_eq(cb->refcnt, 2);
	cr_assert_eq(flow_block_cb_decref(cb), 1, "decref returns the new count");
	cr_assert_eq(flow_block_cb_decref(cb), 0);
	cr_assert_eq(flow_block_cb_decref(cb), 0, "no wrap below zero");
	cr_assert_eq(cb->refcnt, 0);
	flow_block_cb_free(cb);
}

Test(flow_block_cb, add_queues_in_order)
{
	struct flow_block_offload f;
	struct flow_block_cb *c1, *c2;
	int ident;

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	c1 = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, NULL);
	c2 = flow_block_cb_alloc(&ns1, cb_b, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(c1));
	cr_assert_not(IS_ERR(c2));
	flow_block_cb_add(c1, &f);
	flow_block_cb_add(c2, &f);
	cr_assert_eq(list_count_nodes(&f.cb_list), 2);
	cr_assert_eq(list_first_entry(&f.cb_list, struct flow_block_cb, list), c1);
	cr_assert_eq(list_last_entry(&f.cb_list, struct flow_block_cb, list), c2);
	cr_assert(list_empty(&c1->driver_list), "add does not touch the driver list");
	list_del(&c1->list);
	list_del(&c2->list);
	flow_block_cb_free(c1);
	flow_block_cb_free(c2);
}

Test(flow_block_cb, remove_moves_from_block_to_cb_list)
{
	struct flow_block_offload f;
	struct flow_block_cb *c1, *c2;
	LIST_HEAD(block_list);
	int ident;

	init_offload(&f, FLOW_BLOCK_UNBIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	c1 = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, NULL);
	c2 = flow_block_cb_alloc(&ns1, cb_b, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(c1));
	cr_assert_not(IS_ERR(c2));
	list_add_tail(&c1->list, &block_list);
	list_add_tail(&c2->list, &block_list);
	flow_block_cb_remove(c2, &f);
	cr_assert_eq(list_count_nodes(&block_list), 1);
	cr_assert_eq(list_first_entry(&block_list, struct flow_block_cb, list), c1);
	cr_assert_eq(list_count_nodes(&f.cb_list), 1);
	cr_assert_eq(list_first_entry(&f.cb_list, struct flow_block_cb, list), c2);
	list_del(&c1->list);
	list_del(&c2->list);
	flow_block_cb_free(c1);
	flow_block_cb_free(c2);
}

Test(flow_block_cb, lookup_matches_net_cb_and_ident)
{
	struct flow_block_offload f;
	struct flow_block_cb *c;
	LIST_HEAD(drv);
	int ident, other;

	c = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(c));
	list_add_tail(&c->driver_list, &drv);

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_null(flow_block_cb_lookup(&f, cb_a, &ident),
		       "no driver list set: miss");
	f.driver_block_list = &drv;
	cr_assert_eq(flow_block_cb_lookup(&f, cb_a, &ident), c);
	cr_assert_null(flow_block_cb_lookup(&f, cb_b, &ident), "other cb");
	cr_assert_null(flow_block_cb_lookup(&f, cb_a, &other), "other ident");
	drain(&drv);
}

Test(flow_block_cb, lookup_misses_other_namespace)
{
	struct flow_block_offload f;
	struct flow_block_cb *c;
	LIST_HEAD(drv);
	int ident;

	c = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(c));
	list_add_tail(&c->driver_list, &drv);
	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns2);
	f.driver_block_list = &drv;
	cr_assert_null(flow_block_cb_lookup(&f, cb_a, &ident));
	drain(&drv);
}

Test(flow_block_cb, is_busy_only_same_cb_and_ident)
{
	struct flow_block_cb *c;
	LIST_HEAD(drv);
	int ident, other;

	cr_assert_not(flow_block_cb_is_busy(cb_a, &ident, &drv), "empty list");
	c = flow_block_cb_alloc(&ns1, cb_a, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(c));
	cr_assert_not(flow_block_cb_is_busy(cb_a, &ident, &drv),
		      "allocated but not on the list");
	list_add_tail(&c->driver_list, &drv);
	cr_assert(flow_block_cb_is_busy(cb_a, &ident, &drv));
	cr_assert_not(flow_block_cb_is_busy(cb_b, &ident, &drv));
	cr_assert_not(flow_block_cb_is_busy(cb_a, &other, &drv));
	cr_assert_not(flow_block_cb_is_busy(cb_b, &other, &drv));
	drain(&drv);
}

Test(flow_block_cb, is_busy_ignores_namespace)
{
	struct flow_block_cb *c;
	LIST_HEAD(drv);
	int ident;

	/* as in the kernel: the identity must be unique on its own */
	c = flow_block_cb_alloc(&ns2, cb_a, &ident, NULL, NULL);
	cr_assert_not(IS_ERR(c));
	list_add_tail(&c->driver_list, &drv);
	cr_assert(flow_block_cb_is_busy(cb_a, &ident, &drv));
	drain(&drv);
}

Test(setup_simple, bind)
{
	struct flow_block_offload f;
	struct flow_block_cb *c;
	LIST_HEAD(drv);
	int ident, priv;

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, &priv,
						true), 0);
	cr_assert_eq(f.driver_block_list, &drv);
	cr_assert_eq(list_count_nodes(&f.cb_list), 1);
	cr_assert_eq(list_count_nodes(&drv), 1);
	c = list_first_entry(&f.cb_list, struct flow_block_cb, list);
	cr_assert_eq(list_first_entry(&drv, struct flow_block_cb, driver_list), c);
	cr_assert_eq(c->net, &ns1);
	cr_assert_eq(c->cb, cb_a);
	cr_assert_eq(c->cb_ident, &ident);
	cr_assert_eq(c->cb_priv, &priv);
	cr_assert_null(c->release);
	drain(&drv);
	assert_no_leaks();
}

Test(setup_simple, double_bind_is_ebusy)
{
	struct flow_block_offload f1, f2;
	LIST_HEAD(drv);
	char msg[64] = "";
	int ident;

	init_offload(&f1, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f1, &drv, cb_a, &ident, NULL,
						true), 0);
	init_offload(&f2, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	f2.errmsg = msg;
	f2.errmsg_len = sizeof(msg);
	cr_assert_eq(flow_block_cb_setup_simple(&f2, &drv, cb_a, &ident, NULL,
						true), -EBUSY);
	cr_assert(list_empty(&f2.cb_list), "nothing queued on EBUSY");
	cr_assert_eq(list_count_nodes(&drv), 1);
	cr_assert_neq(msg[0], '\0', "EBUSY says why");
	/* busy even from another namespace: is_busy ignores net */
	init_offload(&f2, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns2);
	cr_assert_eq(flow_block_cb_setup_simple(&f2, &drv, cb_a, &ident, NULL,
						true), -EBUSY);
	drain(&drv);
}

Test(setup_simple, failed_bind_never_releases)
{
	struct flow_block_offload f;
	struct flow_block_cb *c;
	LIST_HEAD(drv);
	int ident, priv;

	rel.calls = 0;
	c = flow_block_cb_alloc(&ns1, cb_a, &ident, &priv, count_release);
	cr_assert_not(IS_ERR(c));
	list_add_tail(&c->driver_list, &drv);
	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, &priv,
						true), -EBUSY);
	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_b, &ident, &priv,
						true), -EOPNOTSUPP);
	cr_assert_eq(rel.calls, 0);
	drain(&drv);
	cr_assert_eq(rel.calls, 1);
}

Test(setup_simple, egress_ingress_only_is_eopnotsupp)
{
	struct flow_block_offload f;
	LIST_HEAD(drv);
	int ident;

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), -EOPNOTSUPP);
	cr_assert(list_empty(&f.cb_list));
	cr_assert(list_empty(&drv));
	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_UNSPEC, &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), -EOPNOTSUPP,
		     "unspec is not ingress either");
	/* without ingress_only, egress binds */
	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						false), 0);
	cr_assert_eq(list_count_nodes(&drv), 1);
	drain(&drv);
}

Test(setup_simple, unbind_unknown_is_enoent)
{
	struct flow_block_offload f;
	LIST_HEAD(drv);
	int ident;

	init_offload(&f, FLOW_BLOCK_UNBIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), -ENOENT);
	cr_assert(list_empty(&f.cb_list));
}

Test(setup_simple, unbind_other_namespace_is_enoent)
{
	struct flow_block_offload f;
	LIST_HEAD(drv);
	int ident;

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), 0);
	init_offload(&f, FLOW_BLOCK_UNBIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns2);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), -ENOENT);
	cr_assert_eq(list_count_nodes(&drv), 1, "the ns1 binding stays");
	drain(&drv);
}

Test(setup_simple, bind_then_unbind)
{
	struct flow_block_offload f;
	struct flow_block_cb *c;
	LIST_HEAD(drv);
	LIST_HEAD(block_list);
	int ident;

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), 0);
	c = list_first_entry(&f.cb_list, struct flow_block_cb, list);
	/* what the core does with it: register on the block */
	list_splice_tail_init(&f.cb_list, &block_list);

	init_offload(&f, FLOW_BLOCK_UNBIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), 0);
	cr_assert(list_empty(&block_list), "queued off the block");
	cr_assert(list_empty(&drv), "off the driver list");
	cr_assert_eq(list_first_entry(&f.cb_list, struct flow_block_cb, list), c);
	list_del(&c->list);
	flow_block_cb_free(c);
	/* and the same identity binds again */
	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), 0);
	drain(&drv);
	assert_no_leaks();
}

Test(setup_simple, unknown_command_is_eopnotsupp)
{
	struct flow_block_offload f;
	LIST_HEAD(drv);
	int ident;

	init_offload(&f, (enum flow_block_command)42,
		     FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS, &ns1);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), -EOPNOTSUPP);
	cr_assert(list_empty(&f.cb_list));
	cr_assert(list_empty(&drv));
}

Test(setup_simple, bind_enomem)
{
	struct flow_block_offload f;
	LIST_HEAD(drv);
	int ident;

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS,
		     &ns1);
	xtcam_alloc_fail_after(0);
	cr_assert_eq(flow_block_cb_setup_simple(&f, &drv, cb_a, &ident, NULL,
						true), -ENOMEM);
	cr_assert(list_empty(&f.cb_list));
	cr_assert(list_empty(&drv));
	assert_no_leaks();
}

Test(flow_block, errmsg_without_buffer_is_noop)
{
	struct flow_block_offload f;
	char msg[8];

	init_offload(&f, FLOW_BLOCK_BIND, FLOW_BLOCK_BINDER_TYPE_UNSPEC, &ns1);
	flow_block_errmsg(&f, "x %d", 1);    /* must not crash */
	f.errmsg = msg;
	f.errmsg_len = sizeof(msg);
	flow_block_errmsg(&f, "a long message %d", 12345);
	cr_assert_str_eq(msg, "a long ", "truncated to the buffer");
}
