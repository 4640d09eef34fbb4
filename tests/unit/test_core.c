// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * include/xtcam/core.h, user/core.c: blocks, rules, devices, bind/unbind
 * through test backends that behave as kernel drivers do, rollback, restore
 * after a restart, out-of-memory paths, and a 100k-rule block.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/core.h"
#include "alloc.h"
#include "leakcheck.h"

#define INGRESS FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS
#define EGRESS  FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS

static const struct xtcam_net NS1 = { .dev = 4, .ino = 4026531840ull };
static const struct xtcam_net NS2 = { .dev = 4, .ino = 4026532100ull };

/* ------------------------------------------------------------------------
 * A model of what a backend holds in the kernel: the set of handles (with
 * their prio) of the rules it was given.  Callbacks check every op against
 * it, so a wrong replay, a missing rollback or a double add shows up.
 */
struct model {
	__u8 *has;
	__u32 *prio;
	size_t cap;
	size_t n;
};

static void model_need(struct model *m, __u32 h)
{
	size_t cap = m->cap ? m->cap : 64;

	if (h < m->cap)
		return;
	while (cap <= h)
		cap *= 2;
	m->has = realloc(m->has, cap);
	m->prio = realloc(m->prio, cap * sizeof(*m->prio));
	cr_assert(m->has && m->prio);
	memset(m->has + m->cap, 0, cap - m->cap);
	m->cap = cap;
}

static bool model_has(const struct model *m, __u32 h)
{
	return h < m->cap && m->has[h];
}

static void model_clear(struct model *m)
{
	free(m->has);
	free(m->prio);
	memset(m, 0, sizeof(*m));
}

/* The model holds exactly the block's rules. */
static bool model_is_block(const struct model *m, const struct xtcam_block *b)
{
	size_t i, n = xtcam_block_rule_count(b);

	if (m->n != n)
		return false;
	for (i = 0; i < n; i++) {
		const struct xtcam_rule *r = xtcam_block_rule_at(b, i);

		if (!model_has(m, r->handle) || m->prio[r->handle] != r->prio)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * Test backends.  SIMPLE uses flow_block_cb_setup_simple() with a state
 * per ifindex; PERDEV allocates a callback per device (cb_ident = dev) with
 * a release, like an offload NIC; SHARED has one callback per block for all
 * its devices (lookup + incref / decref), like native XDP's shared maps.
 * "Kernel state" (struct kslot) outlives the core, as pinned maps do.
 */
enum tb_kind { TB_SIMPLE, TB_PERDEV, TB_SHARED };

struct tb;

struct kslot {
	char key[48];
	bool used;
	struct model m;
};

struct tcb {                    /* cb_priv */
	struct tb *tb;
	struct kslot *ks;
	struct model *m;
	bool keep;              /* set by UNBIND with f->keep */
	int batches;
	size_t ops;
	size_t last_n;
	size_t cmds[3];         /* of the last batch */
	bool last_sorted;       /* last batch in (prio, handle) order */
	int fail_next;          /* fail the next batch with this */
};

struct tb {
	struct xtcam_backend be;
	enum tb_kind kind;
	struct list_head drv;   /* the driver block list */
	bool ingress_only;
	bool dual;              /* PERDEV: two callbacks per device */
	bool forget_remove;     /* PERDEV: unbind queues nothing */
	bool queue_then_fail;   /* PERDEV: bind queues, then fails */
	bool no_removal;        /* SHARED: the last unbind marks its callback
				 * as needing no removal replay */
	int fail_bind;          /* setup(BIND) returns this */
	int unbind_err;         /* setup(UNBIND) returns this after its work */
	size_t capacity;        /* rules a callback takes before -ENOSPC */
	size_t capacity2;       /* the same for the second callback (dual) */
	int binds, unbinds, releases, proto_errors;
	size_t released_with[8]; /* rules the kernel state held at release */
	bool last_restore, last_keep;
	struct tcb simple[8];   /* SIMPLE: per ifindex */
	struct kslot ks[16];
};

static int rules_cb(struct tcb *c, size_t capacity, enum xtcam_setup_type type,
		    void *data)
{
	struct xtcam_rules_offload *o = data;
	size_t i, count;
	__u64 prev = 0;

	if (type != XTCAM_SETUP_RULES)
		return -EOPNOTSUPP;
	c->batches++;
	c->ops += o->n;
	c->last_n = o->n;
	memset(c->cmds, 0, sizeof(c->cmds));
	c->last_sorted = true;
	cr_assert_not_null(o->errmsg, "callbacks always get a message buffer");
	cr_assert_gt(o->errmsg_len, 0);
	if (c->fail_next) {
		int e = c->fail_next;

		c->fail_next = 0;
		xtcam_rules_errmsg(o, "injected failure");
		return e;
	}
	count = c->m->n;
	for (i = 0; i < o->n; i++) {
		const struct xtcam_rule_op *op = &o->ops[i];
		const struct xtcam_rule *r = op->rule ? op->rule : op->old;
		bool ok;

		switch (op->cmd) {
		case XTCAM_RULE_ADD:
			ok = op->rule && !op->old && !model_has(c->m, r->handle);
			count++;
			break;
		case XTCAM_RULE_DEL:
			ok = !op->rule && op->old && model_has(c->m, r->handle);
			count--;
			break;
		case XTCAM_RULE_REPLACE:
			ok = op->rule && op->old &&
			     op->rule->handle == op->old->handle &&
			     model_has(c->m, r->handle);
			break;
		default:
			ok = false;
		}
		if (!ok) {
			c->tb->proto_errors++;
			xtcam_rules_errmsg(o, "protocol error at op %zu", i);
			return -EPROTO;
		}
		c->cmds[op->cmd]++;
		if (xtcam_rule_rank(r) < prev)
			c->last_sorted = false;
		prev = xtcam_rule_rank(r);
	}
	if (count > capacity) {
		xtcam_rules_errmsg(o, "table full: %zu rules > %zu", count,
				   capacity);
		return -ENOSPC;
	}
	for (i = 0; i < o->n; i++) {
		const struct xtcam_rule_op *op = &o->ops[i];

		if (op->cmd == XTCAM_RULE_DEL) {
			c->m->has[op->old->handle] = 0;
			c->m->n--;
			continue;
		}
		model_need(c->m, op->rule->handle);
		if (op->cmd == XTCAM_RULE_ADD) {
			c->m->has[op->rule->handle] = 1;
			c->m->n++;
		}
		c->m->prio[op->rule->handle] = op->rule->prio;
	}
	return 0;
}

static int tcb_rules(enum xtcam_setup_type type, void *data, void *priv)
{
	struct tcb *c = priv;

	return rules_cb(c, c->tb->capacity, type, data);
}

/* the second callback of a dual device: another function, so another cb */
static int tcb_rules2(enum xtcam_setup_type type, void *data, void *priv)
{
	struct tcb *c = priv;

	return rules_cb(c, c->tb->capacity2, type, data);
}

static struct kslot *kslot_get(struct tb *tb, const char *key, bool restore)
{
	struct kslot *free_slot = NULL;

	for (size_t i = 0; i < 16; i++) {
		if (tb->ks[i].used && !strcmp(tb->ks[i].key, key))
			return restore ? &tb->ks[i] : ERR_PTR(-EEXIST);
		if (!tb->ks[i].used && !free_slot)
			free_slot = &tb->ks[i];
	}
	if (restore)
		return ERR_PTR(-ENOENT);   /* nothing to re-attach to */
	cr_assert_not_null(free_slot);
	snprintf(free_slot->key, sizeof(free_slot->key), "%s", key);
	free_slot->used = true;
	return free_slot;
}

static void kslot_put(struct kslot *ks)
{
	model_clear(&ks->m);
	ks->used = false;
}

static struct tcb *tcb_new(struct tb *tb, const char *key, bool restore)
{
	struct kslot *ks = kslot_get(tb, key, restore);
	struct tcb *c;

	if (IS_ERR(ks))
		return ERR_CAST(ks);
	c = calloc(1, sizeof(*c));
	cr_assert_not_null(c);
	c->tb = tb;
	c->ks = ks;
	c->m = &ks->m;
	return c;
}

/* Drop a tcb that was never handed over (its kernel state too, unless it
 * was only re-attached to). */
static void tcb_discard(struct tcb *c, bool restore)
{
	if (!restore)
		kslot_put(c->ks);
	free(c);
}

/* release(): the kernel state goes unless the unbind said keep. */
static void tcb_release(void *priv)
{
	struct tcb *c = priv;

	if (c->tb->releases < 8)
		c->tb->released_with[c->tb->releases] = c->m->n;
	c->tb->releases++;
	if (!c->keep)
		kslot_put(c->ks);
	free(c);
}

static int perdev_bind(struct tb *tb, struct flow_block_offload *f,
		       struct xtcam_dev *dev)
{
	struct flow_block_cb *cb;
	char key[48];
	int k, err;

	if (flow_block_cb_is_busy(tcb_rules, dev, &tb->drv))
		return -EBUSY;
	for (k = 0; k < (tb->dual ? 2 : 1); k++) {
		struct tcb *c;

		snprintf(key, sizeof(key), "dev:%u.%d", dev->ifindex, k);
		c = tcb_new(tb, key, f->restore);
		if (IS_ERR(c)) {
			err = PTR_ERR(c);
			goto undo;
		}
		cb = flow_block_cb_alloc(f->net, k ? tcb_rules2 : tcb_rules,
					 dev, c, tcb_release);
		if (IS_ERR(cb)) {
			tcb_discard(c, f->restore);
			err = PTR_ERR(cb);
			goto undo;
		}
		flow_block_cb_add(cb, f);
		list_add_tail(&cb->driver_list, &tb->drv);
		if (tb->queue_then_fail)
			return -EIO;    /* a buggy backend: does not undo */
	}
	return 0;
undo:
	/* a correct backend undoes its own work before it fails */
	for (k = 0; k < 2; k++) {
		cb = flow_block_cb_lookup(f, k ? tcb_rules2 : tcb_rules, dev);
		if (!cb)
			continue;
		((struct tcb *)cb->cb_priv)->keep = f->restore;
		list_del(&cb->list);
		list_del(&cb->driver_list);
		flow_block_cb_free(cb);
	}
	return err;
}

static int perdev_unbind(struct tb *tb, struct flow_block_offload *f,
			 struct xtcam_dev *dev)
{
	int found = 0;

	for (int k = 0; k < 2; k++) {
		struct flow_block_cb *cb =
			flow_block_cb_lookup(f, k ? tcb_rules2 : tcb_rules, dev);

		if (!cb)
			continue;
		((struct tcb *)flow_block_cb_priv(cb))->keep = f->keep;
		if (!tb->forget_remove) {
			flow_block_cb_remove(cb, f);
			list_del(&cb->driver_list);
		}
		found++;
	}
	return found ? tb->unbind_err : -ENOENT;
}

static int shared_setup(struct tb *tb, struct flow_block_offload *f)
{
	struct flow_block_cb *cb = flow_block_cb_lookup(f, tcb_rules, f->block);
	char key[48];

	switch (f->command) {
	case FLOW_BLOCK_BIND:
		if (!cb) {
			struct tcb *c;

			snprintf(key, sizeof(key), "block:%s",
				 f->block->spec.name);
			c = tcb_new(tb, key, f->restore);
			if (IS_ERR(c))
				return PTR_ERR(c);
			cb = flow_block_cb_alloc(f->net, tcb_rules, f->block, c,
						 tcb_release);
			if (IS_ERR(cb)) {
				tcb_discard(c, f->restore);
				return PTR_ERR(cb);
			}
			flow_block_cb_add(cb, f);
			list_add_tail(&cb->driver_list, &tb->drv);
		}
		flow_block_cb_incref(cb);
		return 0;
	case FLOW_BLOCK_UNBIND:
		if (!cb)
			return -ENOENT;
		if (!flow_block_cb_decref(cb)) {
			((struct tcb *)flow_block_cb_priv(cb))->keep = f->keep;
			cb->no_removal = tb->no_removal;
			flow_block_cb_remove(cb, f);
			list_del(&cb->driver_list);
		}
		return tb->unbind_err;
	}
	return -EOPNOTSUPP;
}

static int simple_rules(enum xtcam_setup_type type, void *data, void *priv)
{
	struct tcb *c = priv;

	return rules_cb(c, c->tb->capacity, type, data);
}

static int tb_setup(struct flow_block_offload *f, struct xtcam_dev *dev,
		    void *priv)
{
	struct tb *tb = priv;

	cr_assert_eq(f->net, dev->net, "f->net is the device's namespace");
	tb->last_restore = f->restore;
	tb->last_keep = f->keep;
	if (f->command == FLOW_BLOCK_BIND) {
		tb->binds++;
		if (tb->fail_bind)
			return tb->fail_bind;
	} else {
		tb->unbinds++;
	}
	if (tb->ingress_only && f->binder_type != INGRESS &&
	    tb->kind != TB_SIMPLE)
		return -EOPNOTSUPP;

	switch (tb->kind) {
	case TB_SIMPLE: {
		struct tcb *c = &tb->simple[dev->ifindex % 8];

		c->tb = tb;
		c->m = &tb->ks[dev->ifindex % 8].m;
		return flow_block_cb_setup_simple(f, &tb->drv, simple_rules,
						  dev, c, tb->ingress_only);
	}
	case TB_PERDEV:
		f->driver_block_list = &tb->drv;
		if (f->command == FLOW_BLOCK_BIND)
			return perdev_bind(tb, f, dev);
		if (f->command == FLOW_BLOCK_UNBIND)
			return perdev_unbind(tb, f, dev);
		return -EOPNOTSUPP;
	case TB_SHARED:
		f->driver_block_list = &tb->drv;
		return shared_setup(tb, f);
	}
	return -EOPNOTSUPP;
}

static void tb_init(struct tb *tb, const char *name, enum tb_kind kind)
{
	memset(tb, 0, sizeof(*tb));
	tb->be.name = name;
	tb->be.setup = tb_setup;
	tb->be.priv = tb;
	tb->kind = kind;
	tb->capacity = tb->capacity2 = SIZE_MAX;
	INIT_LIST_HEAD(&tb->drv);
}

/* Free the "kernel state" that outlived the cores. */
static void tb_fini(struct tb *tb)
{
	cr_assert_eq(tb->proto_errors, 0, "backend %s saw %d protocol errors",
		     tb->be.name, tb->proto_errors);
	for (size_t i = 0; i < 16; i++)
		model_clear(&tb->ks[i].m);
}

/* The only callback object a backend has on its driver list. */
static struct flow_block_cb *only_cb(struct tb *tb)
{
	cr_assert_eq(list_count_nodes(&tb->drv), 1);
	return list_first_entry(&tb->drv, struct flow_block_cb, driver_list);
}

static struct tcb *only_tcb(struct tb *tb)
{
	return flow_block_cb_priv(only_cb(tb));
}

/* ------------------------------------------------------------------------
 * Helpers for blocks and rules.
 */
static struct xtcam_rule R(__u32 prio, __u32 handle)
{
	struct xtcam_rule r;

	memset(&r, 0, sizeof(r));
	r.prio = prio;
	r.handle = handle;
	r.sport_hi = r.dport_hi = 0xffff;
	r.action.type = XTCAM_ACT_PASS;
	return r;
}

static struct xtcam_block *block(struct xtcam_core *core, const char *name)
{
	struct xtcam_block_spec spec;
	struct xtcam_block *b;

	memset(&spec, 0, sizeof(spec));
	snprintf(spec.name, sizeof(spec.name), "%s", name);
	b = xtcam_block_add(core, &spec);
	cr_assert_not(IS_ERR_OR_NULL(b), "block_add %s: %ld", name, PTR_ERR(b));
	return b;
}

static void add(struct xtcam_block *b, __u32 prio, __u32 handle)
{
	struct xtcam_rule r = R(prio, handle);
	char msg[XTCAM_ERRMSG_MAX];
	int err = xtcam_block_rule_add(b, &r, msg, sizeof(msg));

	cr_assert_eq(err, 0, "rule add %u: %d %s", handle, err, msg);
}

static struct xtcam_dev *dev(struct xtcam_core *core,
			     const struct xtcam_net *ns, __u32 ifindex)
{
	struct xtcam_dev *d = xtcam_core_dev_get(core, ns, ifindex);

	cr_assert_not(IS_ERR_OR_NULL(d));
	return d;
}

static int try_bind(struct xtcam_core *core, struct xtcam_block *b,
		struct xtcam_dev *d, struct tb *tb)
{
	return xtcam_bind(core, b, d, &tb->be, INGRESS, 0, NULL, 0);
}

static void bind_ok(struct xtcam_core *core, struct xtcam_block *b,
		    struct xtcam_dev *d, struct tb *tb)
{
	char msg[XTCAM_ERRMSG_MAX];
	int err = xtcam_bind(core, b, d, &tb->be, INGRESS, 0, msg, sizeof(msg));

	cr_assert_eq(err, 0, "bind %s: %d %s", b->spec.name, err, msg);
}

static void unbind_ok(struct xtcam_core *core, struct xtcam_dev *d)
{
	char msg[XTCAM_ERRMSG_MAX];
	int err = xtcam_unbind(core, d, 0, msg, sizeof(msg));

	cr_assert_eq(err, 0, "unbind %u: %d %s", d->ifindex, err, msg);
}

/* (prio, handle) of every rule, to compare a block before and after. */
struct snap {
	size_t n;
	__u64 rank[64];
};

static struct snap snap(const struct xtcam_block *b)
{
	struct snap s = { .n = xtcam_block_rule_count(b) };

	cr_assert_leq(s.n, 64);
	for (size_t i = 0; i < s.n; i++)
		s.rank[i] = xtcam_rule_rank(xtcam_block_rule_at(b, i));
	return s;
}

static void assert_snap(const struct xtcam_block *b, const struct snap *want)
{
	struct snap got = snap(b);

	cr_assert_eq(got.n, want->n, "block has %zu rules, want %zu", got.n,
		     want->n);
	for (size_t i = 0; i < got.n; i++)
		cr_assert_eq(got.rank[i], want->rank[i], "rule %zu differs", i);
}

/* The block's rules are in strictly increasing rank and indexed by handle. */
static void assert_block_sane(const struct xtcam_block *b)
{
	size_t n = xtcam_block_rule_count(b);

	for (size_t i = 0; i < n; i++) {
		const struct xtcam_rule *r = xtcam_block_rule_at(b, i);

		cr_assert_eq(xtcam_block_rule_find(b, r->handle), r,
			     "handle %u not indexed", r->handle);
		if (i)
			cr_assert_lt(xtcam_rule_rank(xtcam_block_rule_at(b, i - 1)),
				     xtcam_rule_rank(r), "out of order at %zu", i);
	}
	cr_assert_null(xtcam_block_rule_at(b, n));
}

/* ======================================================================== */

Test(core, new_free_and_independent_cores)
{
	struct xtcam_core *a = xtcam_core_new(), *b = xtcam_core_new();

	cr_assert_not(IS_ERR_OR_NULL(a));
	cr_assert_not(IS_ERR_OR_NULL(b));
	block(a, "edge");
	block(b, "edge");    /* no globals: same name in another core */
	cr_assert_not_null(xtcam_block_find(a, "edge"));
	cr_assert_neq(xtcam_block_find(a, "edge"), xtcam_block_find(b, "edge"));
	xtcam_core_free(a);
	xtcam_core_free(b);
	xtcam_core_free(NULL);
	assert_no_leaks();
}

Test(core, new_enomem)
{
	xtcam_alloc_fail_after(0);
	cr_assert_eq(PTR_ERR(xtcam_core_new()), -ENOMEM);
}

Test(core, net_objects_are_one_per_namespace)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_net copy = NS1;
	struct xtcam_net *a = xtcam_core_net_get(core, &NS1);
	struct xtcam_net *b = xtcam_core_net_get(core, &copy);
	struct xtcam_net *c = xtcam_core_net_get(core, &NS2);

	cr_assert_not(IS_ERR(a));
	cr_assert_eq(a, b, "same identity, same object");
	cr_assert_neq(a, c);
	cr_assert_eq(a->ino, NS1.ino);
	cr_assert_eq(PTR_ERR(xtcam_core_net_get(core, NULL)), -EINVAL);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(core, dev_identity_is_netns_and_ifindex)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_dev *a = dev(core, &NS1, 3);
	struct xtcam_dev *b = dev(core, &NS1, 3);
	struct xtcam_dev *c = dev(core, &NS2, 3);
	struct xtcam_dev *d = dev(core, &NS1, 4);

	cr_assert_eq(a, b);
	cr_assert_neq(a, c, "same ifindex in another namespace: another device");
	cr_assert_neq(a, d);
	cr_assert_eq(a->net, xtcam_core_net_get(core, &NS1));
	cr_assert_eq(c->net, xtcam_core_net_get(core, &NS2));
	cr_assert_eq(a->ifindex, 3);
	cr_assert_null(a->binding);
	cr_assert_eq(xtcam_core_dev_find(core, &NS2, 3), c);
	cr_assert_null(xtcam_core_dev_find(core, &NS2, 9));
	cr_assert_eq(PTR_ERR(xtcam_core_dev_get(core, &NS1, 0)), -EINVAL);
	cr_assert_eq(PTR_ERR(xtcam_core_dev_get(core, NULL, 1)), -EINVAL);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(core, dev_get_enomem_leaves_nothing)
{
	struct xtcam_core *core = xtcam_core_new();
	const struct xtcam_net ns3 = { 9, 9 };

	for (long k = 0; k < 2; k++) {
		xtcam_alloc_fail_after(k);
		cr_assert_eq(PTR_ERR(xtcam_core_dev_get(core, &ns3, 1)), -ENOMEM);
		cr_assert_null(xtcam_core_dev_find(core, &ns3, 1));
	}
	xtcam_alloc_fail_after(-1);
	cr_assert_not(IS_ERR(xtcam_core_dev_get(core, &ns3, 1)));
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(core, net_from_path)
{
	struct xtcam_net a, b;

	cr_assert_eq(xtcam_net_from_path("/proc/self/ns/net", &a), 0);
	cr_assert_eq(xtcam_net_from_path("/proc/self/ns/net", &b), 0);
	cr_assert_eq(a.dev, b.dev);
	cr_assert_eq(a.ino, b.ino);
	cr_assert_neq(a.ino, 0);
	cr_assert_eq(xtcam_net_from_path("/nonexistent/netns", &a), -ENOENT);
	cr_assert_eq(xtcam_net_from_path(NULL, &a), -EINVAL);
}

Test(core, backends_by_name)
{
	struct xtcam_core *core = xtcam_core_new();
	struct tb a, a2, noname;

	tb_init(&a, "native", TB_SHARED);
	tb_init(&a2, "native", TB_PERDEV);
	tb_init(&noname, "", TB_PERDEV);
	cr_assert_eq(xtcam_core_backend_add(core, &a.be), 0);
	cr_assert_eq(xtcam_core_backend_add(core, &a2.be), -EEXIST);
	cr_assert_eq(xtcam_core_backend_add(core, &noname.be), -EINVAL);
	noname.be.name = "x";
	noname.be.setup = NULL;
	cr_assert_eq(xtcam_core_backend_add(core, &noname.be), -EINVAL);
	cr_assert_eq(xtcam_core_backend_find(core, "native"), &a.be);
	cr_assert_null(xtcam_core_backend_find(core, "hw"));
	xtcam_core_free(core);
	assert_no_leaks();
}

/* --- blocks -------------------------------------------------------------- */

Test(block, add_find_defaults)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");

	cr_assert_eq(xtcam_block_find(core, "edge"), b);
	cr_assert_null(xtcam_block_find(core, "core"));
	cr_assert_str_eq(b->spec.name, "edge");
	cr_assert_eq(b->spec.capacity, XTCAM_DEFAULT_CAPACITY);
	cr_assert_eq(b->spec.dflt.type, XTCAM_ACT_PASS);
	cr_assert_eq(b->core, core);
	cr_assert_eq(xtcam_block_rule_count(b), 0);
	cr_assert(list_empty(&b->cb_list));
	cr_assert_eq(b->nbindings, 0);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(block, add_duplicate_is_eexist)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block_spec spec = { .name = "edge" };

	block(core, "edge");
	cr_assert_eq(PTR_ERR(xtcam_block_add(core, &spec)), -EEXIST);
	xtcam_core_free(core);
}

Test(block, bad_names_are_einval)
{
	static const char *bad[] = {
		"", ".", "..", "a/b", "-x", "sp ace", "tab\t", "ünï",
		"0123456789012345678901234567890123",   /* too long */
	};
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block_spec spec;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&spec, 0, sizeof(spec));
		memcpy(spec.name, bad[i], strlen(bad[i]) < sizeof(spec.name) ?
					  strlen(bad[i]) : sizeof(spec.name));
		cr_assert_eq(PTR_ERR(xtcam_block_add(core, &spec)), -EINVAL,
			     "name '%s'", bad[i]);
		cr_assert_not(xtcam_block_name_valid(bad[i]), "'%s'", bad[i]);
	}
	/* not NUL-terminated within the field */
	memset(spec.name, 'a', sizeof(spec.name));
	cr_assert_eq(PTR_ERR(xtcam_block_add(core, &spec)), -EINVAL);
	cr_assert(xtcam_block_name_valid("edge-1.v2_x"));
	cr_assert(xtcam_block_name_valid("0123456789012345678901234567890"));
	cr_assert_null(xtcam_block_find(core, ""));
	xtcam_core_free(core);
}

Test(block, bad_spec_is_einval)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block_spec spec = { .name = "edge" };

	spec.capacity = XTCAM_MAX_CAPACITY + 1;
	cr_assert_eq(PTR_ERR(xtcam_block_add(core, &spec)), -EINVAL);
	spec.capacity = 16;
	spec.dflt.type = XTCAM_ACT_MAX;
	cr_assert_eq(PTR_ERR(xtcam_block_add(core, &spec)), -EINVAL);
	spec.dflt.type = XTCAM_ACT_DROP;
	cr_assert_not(IS_ERR(xtcam_block_add(core, &spec)));
	cr_assert_eq(xtcam_block_find(core, "edge")->spec.capacity, 16);
	cr_assert_eq(xtcam_block_find(core, "edge")->spec.dflt.type,
		     XTCAM_ACT_DROP);
	xtcam_core_free(core);
}

Test(block, add_enomem)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block_spec spec = { .name = "edge" };

	xtcam_alloc_fail_after(0);
	cr_assert_eq(PTR_ERR(xtcam_block_add(core, &spec)), -ENOMEM);
	cr_assert_null(xtcam_block_find(core, "edge"));
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(block, del_unknown_is_enoent_and_del_frees)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");

	add(b, 1, 1);
	add(b, 2, 2);
	cr_assert_eq(xtcam_block_del(core, "nope"), -ENOENT);
	cr_assert_eq(xtcam_block_del(core, "edge"), 0);
	cr_assert_null(xtcam_block_find(core, "edge"));
	cr_assert_eq(xtcam_block_del(core, "edge"), -ENOENT);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(block, del_while_bound_is_ebusy)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct tb tb;

	tb_init(&tb, "hw", TB_PERDEV);
	bind_ok(core, b, d, &tb);
	cr_assert_eq(xtcam_block_del(core, "edge"), -EBUSY);
	cr_assert_eq(xtcam_block_find(core, "edge"), b);
	unbind_ok(core, d);
	cr_assert_eq(xtcam_block_del(core, "edge"), 0);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

/* --- rules --------------------------------------------------------------- */

Test(rules, ordered_by_prio_then_handle_and_found_by_handle)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	static const __u32 want[][2] = { { 1, 9 }, { 5, 2 }, { 5, 7 }, { 10, 1 } };

	add(b, 10, 1);
	add(b, 5, 7);
	add(b, 1, 9);
	add(b, 5, 2);
	cr_assert_eq(xtcam_block_rule_count(b), 4);
	for (size_t i = 0; i < 4; i++) {
		const struct xtcam_rule *r = xtcam_block_rule_at(b, i);

		cr_assert_eq(r->prio, want[i][0], "rule %zu prio", i);
		cr_assert_eq(r->handle, want[i][1], "rule %zu handle", i);
	}
	cr_assert_eq(xtcam_block_rule_find(b, 7)->prio, 5);
	cr_assert_null(xtcam_block_rule_find(b, 3));
	cr_assert_null(xtcam_block_rule_find(b, 0));
	assert_block_sane(b);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(rules, block_keeps_its_own_copy)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule r = R(3, 4);

	r.action.type = XTCAM_ACT_DROP;
	cr_assert_eq(xtcam_block_rule_add(b, &r, NULL, 0), 0);
	r.action.type = XTCAM_ACT_PASS;
	r.prio = 9;
	cr_assert_neq(xtcam_block_rule_find(b, 4), &r);
	cr_assert_eq(xtcam_block_rule_find(b, 4)->action.type, XTCAM_ACT_DROP);
	cr_assert_eq(xtcam_block_rule_find(b, 4)->prio, 3);
	xtcam_core_free(core);
}

Test(rules, add_existing_handle_is_eexist)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule r = R(7, 1);
	char msg[XTCAM_ERRMSG_MAX];

	add(b, 1, 1);
	cr_assert_eq(xtcam_block_rule_add(b, &r, msg, sizeof(msg)), -EEXIST);
	cr_assert(strstr(msg, "handle 1"), "message names the handle: %s", msg);
	cr_assert_eq(xtcam_block_rule_find(b, 1)->prio, 1, "unchanged");
	xtcam_core_free(core);
}

Test(rules, del_missing_handle_is_enoent)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");

	add(b, 1, 1);
	cr_assert_eq(xtcam_block_rule_del(b, 2, NULL, 0), -ENOENT);
	cr_assert_eq(xtcam_block_rule_count(b), 1);
	cr_assert_eq(xtcam_block_rule_del(b, 1, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), 0);
	cr_assert_null(xtcam_block_rule_find(b, 1));
	cr_assert_eq(xtcam_block_rule_del(b, 1, NULL, 0), -ENOENT);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(rules, replace_missing_handle_is_enoent)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule r = R(1, 2);

	add(b, 1, 1);
	cr_assert_eq(xtcam_block_rule_replace(b, &r, NULL, 0), -ENOENT);
	cr_assert_eq(xtcam_block_rule_count(b), 1);
	xtcam_core_free(core);
}

Test(rules, replace_changes_content_and_order)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule r = R(50, 1);

	add(b, 10, 1);
	add(b, 20, 2);
	r.action.type = XTCAM_ACT_DROP;
	cr_assert_eq(xtcam_block_rule_replace(b, &r, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), 2);
	cr_assert_eq(xtcam_block_rule_at(b, 0)->handle, 2);
	cr_assert_eq(xtcam_block_rule_at(b, 1)->handle, 1);
	cr_assert_eq(xtcam_block_rule_find(b, 1)->action.type, XTCAM_ACT_DROP);
	assert_block_sane(b);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(rules, invalid_ops_are_einval_and_change_nothing)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule h0 = R(1, 0), p0 = R(0, 5), pbig = R(65536, 5);
	struct xtcam_rule r5 = R(1, 5), r6 = R(1, 6), r7 = R(2, 7);
	struct xtcam_rule_op twice[] = {
		{ XTCAM_RULE_ADD, &r7, NULL }, { XTCAM_RULE_ADD, &r6, NULL },
		{ XTCAM_RULE_REPLACE, &r7, NULL },
	};
	struct xtcam_rule_op del_and_add[] = {
		{ XTCAM_RULE_DEL, NULL, &r5 }, { XTCAM_RULE_ADD, &r5, NULL },
	};
	struct xtcam_rule_op unknown = { (enum xtcam_rule_cmd)7, &r6, NULL };
	struct xtcam_rule_op norule = { XTCAM_RULE_ADD, NULL, NULL };
	struct xtcam_rule_op nodel = { XTCAM_RULE_DEL, NULL, NULL };
	struct snap before;

	add(b, 1, 5);
	before = snap(b);
	cr_assert_eq(xtcam_block_rule_add(b, &h0, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rule_add(b, &p0, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rule_add(b, &pbig, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rules_apply(b, twice, 3, NULL, 0), -EINVAL,
		     "a handle twice in one batch");
	cr_assert_eq(xtcam_block_rules_apply(b, del_and_add, 2, NULL, 0),
		     -EINVAL, "del and add of one handle in one batch");
	cr_assert_eq(xtcam_block_rules_apply(b, &unknown, 1, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rules_apply(b, &norule, 1, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rules_apply(b, &nodel, 1, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rules_apply(b, NULL, 1, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rules_apply(NULL, &norule, 1, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rules_apply(b, NULL, 0, NULL, 0), 0,
		     "empty batch is a no-op");
	assert_snap(b, &before);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(rules, mixed_batch_is_atomic_on_a_late_error)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule r3 = R(3, 3), r1 = R(9, 1), r9 = R(1, 9);
	struct xtcam_rule_op ops[] = {
		{ XTCAM_RULE_ADD, &r3, NULL },
		{ XTCAM_RULE_REPLACE, &r1, NULL },
		{ XTCAM_RULE_DEL, &r9, NULL },  /* 9 does not exist */
	};
	struct snap before;

	add(b, 1, 1);
	add(b, 2, 2);
	before = snap(b);
	cr_assert_eq(xtcam_block_rules_apply(b, ops, 3, NULL, 0), -ENOENT);
	assert_snap(b, &before);
	cr_assert_null(xtcam_block_rule_find(b, 3));
	/* the same batch without the bad op goes in whole */
	ops[2] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, NULL,
					 xtcam_block_rule_find(b, 2) };
	cr_assert_eq(xtcam_block_rules_apply(b, ops, 3, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), 2);
	cr_assert_eq(xtcam_block_rule_at(b, 0)->handle, 3);
	cr_assert_eq(xtcam_block_rule_at(b, 1)->handle, 1);
	cr_assert_eq(xtcam_block_rule_at(b, 1)->prio, 9);
	assert_block_sane(b);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(rules, callbacks_get_the_batch_as_applied)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct xtcam_rule r1 = R(5, 1), r2 = R(6, 2), r3 = R(7, 3);
	struct xtcam_rule_op ops[] = {
		{ XTCAM_RULE_REPLACE, &r1, NULL },
		{ XTCAM_RULE_DEL, &r2, NULL },
		{ XTCAM_RULE_ADD, &r3, NULL },
	};
	struct tb tb;
	struct tcb *c;

	tb_init(&tb, "hw", TB_PERDEV);
	add(b, 1, 1);
	add(b, 2, 2);
	bind_ok(core, b, d, &tb);
	c = only_tcb(&tb);
	cr_assert_eq(xtcam_block_rules_apply(b, ops, 3, NULL, 0), 0);
	cr_assert_eq(c->batches, 2, "replay, then one batch");
	cr_assert_eq(c->last_n, 3);
	cr_assert_eq(c->cmds[XTCAM_RULE_ADD], 1);
	cr_assert_eq(c->cmds[XTCAM_RULE_DEL], 1);
	cr_assert_eq(c->cmds[XTCAM_RULE_REPLACE], 1);
	cr_assert(model_is_block(c->m, b));
	cr_assert_eq(c->m->prio[1], 5);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(rules, set_sends_only_the_difference)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct xtcam_rule set[] = { R(4, 4), R(2, 2), R(30, 3) };
	struct tb tb;
	struct tcb *c;

	tb_init(&tb, "hw", TB_PERDEV);
	add(b, 1, 1);
	add(b, 2, 2);
	add(b, 3, 3);
	bind_ok(core, b, d, &tb);
	c = only_tcb(&tb);
	/* 1 goes, 2 is the same, 3 changes prio, 4 is new */
	cr_assert_eq(xtcam_block_rules_set(b, set, 3, NULL, 0), 0);
	cr_assert_eq(c->batches, 2, "one batch for the whole set");
	cr_assert_eq(c->last_n, 3, "unchanged rule 2 not sent");
	cr_assert_eq(c->cmds[XTCAM_RULE_DEL], 1);
	cr_assert_eq(c->cmds[XTCAM_RULE_REPLACE], 1);
	cr_assert_eq(c->cmds[XTCAM_RULE_ADD], 1);
	cr_assert(model_is_block(c->m, b));
	cr_assert_eq(xtcam_block_rule_count(b), 3);
	cr_assert_null(xtcam_block_rule_find(b, 1));
	cr_assert_eq(xtcam_block_rule_find(b, 3)->prio, 30);
	assert_block_sane(b);
	/* the same set again: nothing to send */
	cr_assert_eq(xtcam_block_rules_set(b, set, 3, NULL, 0), 0);
	cr_assert_eq(c->batches, 2);
	/* content change with the same prio is a REPLACE too */
	set[1].action.type = XTCAM_ACT_DROP;
	cr_assert_eq(xtcam_block_rules_set(b, set, 3, NULL, 0), 0);
	cr_assert_eq(c->batches, 3);
	cr_assert_eq(c->last_n, 1);
	cr_assert_eq(c->cmds[XTCAM_RULE_REPLACE], 1);
	/* flush */
	cr_assert_eq(xtcam_block_rules_set(b, NULL, 0, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), 0);
	cr_assert_eq(c->m->n, 0);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(rules, set_with_duplicate_handles_is_einval)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule set[] = { R(1, 4), R(2, 4) };
	struct xtcam_rule zero[] = { R(1, 0) };

	add(b, 1, 1);
	cr_assert_eq(xtcam_block_rules_set(b, set, 2, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rules_set(b, zero, 1, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_block_rule_count(b), 1);
	cr_assert_not_null(xtcam_block_rule_find(b, 1));
	xtcam_core_free(core);
	assert_no_leaks();
}

/* Random batches against a plain array: ordering, index and removal
 * (backward-shift deletion in the hash) stay right under churn. */
Test(rules, random_batches_match_a_reference)
{
	enum { H = 1500, ROUNDS = 600 };
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "churn");
	static __u32 ref[H + 1];        /* prio, 0 = absent */
	struct xtcam_rule rules[64];
	struct xtcam_rule_op ops[64];
	unsigned int seed = 7;
	bool used[H + 1];

	memset(ref, 0, sizeof(ref));
	for (int round = 0; round < ROUNDS; round++) {
		size_t n = 1 + rand_r(&seed) % 64, k = 0;

		memset(used, 0, sizeof(used));
		for (size_t i = 0; i < n; i++) {
			__u32 h = 1 + rand_r(&seed) % H;
			__u32 prio = 1 + rand_r(&seed) % 50;

			if (used[h])
				continue;
			used[h] = true;
			rules[k] = R(prio, h);
			if (!ref[h])
				ops[k] = (struct xtcam_rule_op){ XTCAM_RULE_ADD,
								 &rules[k], NULL };
			else if (rand_r(&seed) % 2)
				ops[k] = (struct xtcam_rule_op){ XTCAM_RULE_DEL,
								 NULL, &rules[k] };
			else
				ops[k] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE,
								 &rules[k], NULL };
			k++;
		}
		cr_assert_eq(xtcam_block_rules_apply(b, ops, k, NULL, 0), 0);
		for (size_t i = 0; i < k; i++)
			ref[rules[i].handle] = ops[i].cmd == XTCAM_RULE_DEL ?
					       0 : rules[i].prio;

		size_t count = 0;

		for (__u32 h = 1; h <= H; h++) {
			const struct xtcam_rule *r = xtcam_block_rule_find(b, h);

			if (!ref[h]) {
				cr_assert_null(r, "round %d: handle %u found", round, h);
				continue;
			}
			count++;
			cr_assert_not_null(r, "round %d: handle %u lost", round, h);
			cr_assert_eq(r->prio, ref[h]);
		}
		cr_assert_eq(xtcam_block_rule_count(b), count);
		assert_block_sane(b);
	}
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(rules, rule_equal)
{
	struct xtcam_rule a = R(1, 1), b = R(1, 1);

	cr_assert(xtcam_rule_equal(&a, &b));
	strcpy(a.action.dev, "eth0");
	strcpy(b.action.dev, "eth0");
	b.action.dev[6] = 'x';   /* after the NUL: not part of the name */
	cr_assert(xtcam_rule_equal(&a, &b));
	b.value.dst_port = 1;
	cr_assert_not(xtcam_rule_equal(&a, &b));
	b = a;
	b.dport_lo = 80;
	cr_assert_not(xtcam_rule_equal(&a, &b));
	b = a;
	b.prio = 2;
	cr_assert_not(xtcam_rule_equal(&a, &b));
}

Test(rules, load_calls_no_callback_and_is_ebusy_when_bound)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct xtcam_rule rules[] = { R(2, 2), R(1, 1) };
	struct xtcam_rule more[] = { R(3, 3) };
	struct tb tb;

	tb_init(&tb, "hw", TB_PERDEV);
	cr_assert_eq(xtcam_block_rules_load(b, rules, 2, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), 2);
	cr_assert_eq(xtcam_block_rule_at(b, 0)->handle, 1);
	cr_assert_eq(xtcam_block_rules_load(b, rules, 1, NULL, 0), -EEXIST);
	bind_ok(core, b, d, &tb);
	cr_assert_eq(xtcam_block_rules_load(b, more, 1, NULL, 0), -EBUSY);
	cr_assert_eq(xtcam_block_rule_count(b), 2);
	cr_assert_eq(only_tcb(&tb)->batches, 1, "the replay only");
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

/* --- bind and unbind ------------------------------------------------------ */

Test(bind, setup_simple_backend_replays_and_removes)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 3);
	struct tb tb;
	struct tcb *c;
	struct flow_block_cb *cb;

	tb_init(&tb, "generic", TB_SIMPLE);
	add(b, 20, 2);
	add(b, 10, 1);
	add(b, 10, 3);
	bind_ok(core, b, d, &tb);
	c = &tb.simple[3];
	cr_assert_eq(c->batches, 1, "one ADD batch");
	cr_assert_eq(c->last_n, 3);
	cr_assert_eq(c->cmds[XTCAM_RULE_ADD], 3);
	cr_assert(c->last_sorted, "replayed in (prio, handle) order");
	cr_assert(model_is_block(c->m, b));
	cb = only_cb(&tb);
	cr_assert_eq(cb->cb_ident, d, "the device object is the cb_ident");
	cr_assert_eq(list_first_entry(&b->cb_list, struct flow_block_cb, list), cb);
	cr_assert_eq(d->binding->block, b);
	cr_assert_eq(d->binding->backend, &tb.be);
	cr_assert_str_eq(d->binding->mode, "generic");
	cr_assert_eq(d->binding->binder_type, INGRESS);
	cr_assert_eq(b->nbindings, 1);

	add(b, 5, 4);
	cr_assert_eq(c->batches, 2);
	cr_assert(model_is_block(c->m, b));

	unbind_ok(core, d);
	cr_assert_eq(c->batches, 3);
	cr_assert_eq(c->cmds[XTCAM_RULE_DEL], 4, "one DEL batch of every rule");
	cr_assert_eq(c->m->n, 0);
	cr_assert(list_empty(&tb.drv));
	cr_assert(list_empty(&b->cb_list));
	cr_assert_null(d->binding);
	cr_assert_eq(b->nbindings, 0);
	cr_assert_eq(xtcam_block_rule_count(b), 4, "unbind keeps the rules");
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, empty_block_calls_no_rule_callback)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 3);
	struct tb tb;

	tb_init(&tb, "hw", TB_PERDEV);
	bind_ok(core, b, d, &tb);
	cr_assert_eq(only_tcb(&tb)->batches, 0);
	unbind_ok(core, d);
	cr_assert_eq(tb.releases, 1);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, shared_callback_two_devices)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d1 = dev(core, &NS1, 2), *d2 = dev(core, &NS1, 3);
	struct flow_block_cb *cb;
	struct tcb *c;
	struct tb tb;

	tb_init(&tb, "native", TB_SHARED);
	add(b, 1, 1);
	add(b, 2, 2);
	add(b, 3, 3);
	bind_ok(core, b, d1, &tb);
	bind_ok(core, b, d2, &tb);
	cb = only_cb(&tb);
	c = flow_block_cb_priv(cb);
	cr_assert_eq(cb->refcnt, 2);
	cr_assert_eq(list_count_nodes(&b->cb_list), 1, "registered once");
	cr_assert_eq(c->batches, 1, "one set of rule replays");
	cr_assert_eq(c->ops, 3);
	cr_assert_eq(b->nbindings, 2);

	add(b, 4, 4);
	cr_assert_eq(c->batches, 2, "a rule reaches the shared maps once");

	unbind_ok(core, d1);
	cr_assert_eq(cb->refcnt, 1);
	cr_assert_eq(tb.releases, 0, "nothing released");
	cr_assert_eq(c->batches, 2, "no removal replayed");
	cr_assert_eq(c->m->n, 4);
	cr_assert_null(d1->binding);
	cr_assert_eq(list_count_nodes(&b->cb_list), 1);

	cr_assert_eq(c->batches, 2);
	unbind_ok(core, d2);
	cr_assert_eq(tb.releases, 1, "released with the last device");
	cr_assert(list_empty(&tb.drv));
	cr_assert(list_empty(&b->cb_list));
	cr_assert_eq(tb.ks[0].used, false, "rules removed, kernel state gone");
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, shared_backend_separates_namespaces)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d1 = dev(core, &NS1, 2), *d2 = dev(core, &NS2, 2);
	struct tb tb;

	tb_init(&tb, "native", TB_SHARED);
	add(b, 1, 1);
	bind_ok(core, b, d1, &tb);
	/* lookup matches net: another namespace gets its own callback; the
	 * test backend keys its kernel state by block, so that is -EEXIST */
	cr_assert_eq(try_bind(core, b, d2, &tb), -EEXIST);
	cr_assert_null(d2->binding);
	cr_assert_eq(only_cb(&tb)->refcnt, 1);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, callback_failing_on_third_rule_changes_nothing)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d1 = dev(core, &NS1, 1), *d2 = dev(core, &NS1, 2),
			 *d3 = dev(core, &NS1, 3);
	struct xtcam_rule r3 = R(3, 3), r1 = R(9, 1), r4 = R(4, 4);
	struct xtcam_rule_op ops[] = {
		{ XTCAM_RULE_REPLACE, &r1, NULL },
		{ XTCAM_RULE_DEL, NULL, NULL },
		{ XTCAM_RULE_ADD, &r3, NULL },
		{ XTCAM_RULE_ADD, &r4, NULL },
	};
	struct tb a, full, z;
	struct tcb *ca, *cf, *cz;
	char msg[XTCAM_ERRMSG_MAX];
	struct snap before;

	tb_init(&a, "a", TB_PERDEV);
	tb_init(&full, "full", TB_PERDEV);
	tb_init(&z, "z", TB_PERDEV);
	full.capacity = 2;
	add(b, 1, 1);
	add(b, 2, 2);
	bind_ok(core, b, d1, &a);      /* callbacks in this order: a, full, z */
	bind_ok(core, b, d2, &full);
	bind_ok(core, b, d3, &z);
	ca = only_tcb(&a);
	cf = only_tcb(&full);
	cz = only_tcb(&z);
	before = snap(b);

	r3 = R(3, 3);
	cr_assert_eq(xtcam_block_rule_add(b, &r3, msg, sizeof(msg)), -ENOSPC);
	cr_assert(strstr(msg, "table full"), "the callback's message: %s", msg);
	assert_snap(b, &before);
	cr_assert(model_is_block(ca->m, b), "a got the inverse");
	cr_assert_eq(ca->batches, 3, "replay, add, inverse");
	cr_assert_eq(ca->cmds[XTCAM_RULE_DEL], 1);
	cr_assert(model_is_block(cf->m, b));
	cr_assert_eq(cz->batches, 1, "z never saw it");
	cr_assert(model_is_block(cz->m, b));

	/* a mixed batch: the inverse restores replaced and deleted rules */
	ops[1].old = xtcam_block_rule_find(b, 2);
	cr_assert_eq(xtcam_block_rules_apply(b, ops, 4, msg, sizeof(msg)),
		     -ENOSPC);
	assert_snap(b, &before);
	cr_assert(model_is_block(ca->m, b));
	cr_assert_eq(ca->m->prio[1], 1, "replaced rule is back");
	cr_assert(model_is_block(cz->m, b));

	/* the whole-set swap rolls back the same way */
	{
		struct xtcam_rule set[] = { R(1, 1), R(2, 2), R(3, 3) };

		cr_assert_eq(xtcam_block_rules_set(b, set, 3, NULL, 0), -ENOSPC);
		assert_snap(b, &before);
		cr_assert(model_is_block(ca->m, b));
	}

	/* the first callback failing: nobody to roll back, still unchanged */
	ca->fail_next = -EIO;
	cr_assert_eq(xtcam_block_rule_add(b, &r4, msg, sizeof(msg)), -EIO);
	assert_snap(b, &before);
	cr_assert(model_is_block(cf->m, b));
	cr_assert(model_is_block(cz->m, b));

	/* the last one failing: both before it roll back */
	full.capacity = SIZE_MAX;
	cz->fail_next = -EIO;
	cr_assert_eq(xtcam_block_rule_add(b, &r4, NULL, 0), -EIO);
	assert_snap(b, &before);
	cr_assert(model_is_block(ca->m, b));
	cr_assert(model_is_block(cf->m, b));
	cr_assert(model_is_block(cz->m, b));

	/* and a change that fits goes everywhere */
	cr_assert_eq(xtcam_block_rule_add(b, &r4, NULL, 0), 0);
	cr_assert(model_is_block(ca->m, b));
	cr_assert(model_is_block(cf->m, b));
	cr_assert(model_is_block(cz->m, b));
	xtcam_core_free(core);
	tb_fini(&a);
	tb_fini(&full);
	tb_fini(&z);
	assert_no_leaks();
}

Test(bind, failed_replay_unwinds)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d1 = dev(core, &NS1, 1), *d2 = dev(core, &NS1, 2);
	struct tb good, full;
	char msg[XTCAM_ERRMSG_MAX];
	int err;

	tb_init(&good, "good", TB_PERDEV);
	tb_init(&full, "full", TB_PERDEV);
	full.capacity = 2;
	add(b, 1, 1);
	add(b, 2, 2);
	add(b, 3, 3);
	bind_ok(core, b, d1, &good);

	err = xtcam_bind(core, b, d2, &full.be, INGRESS, 0, msg, sizeof(msg));
	cr_assert_eq(err, -ENOSPC);
	cr_assert(strstr(msg, "table full"), "%s", msg);
	cr_assert_eq(full.releases, 1, "the cb it handed over is freed once");
	cr_assert_eq(full.released_with[0], 0, "and held no rule by then");
	cr_assert(list_empty(&full.drv), "and is off the driver list");
	cr_assert_eq(full.ks[0].used, false);
	cr_assert_null(d2->binding);
	cr_assert_eq(b->nbindings, 1);
	cr_assert_eq(list_count_nodes(&b->cb_list), 1, "only good's callback");
	cr_assert_eq(only_tcb(&good)->batches, 1, "good is not bothered");
	cr_assert_eq(good.releases, 0);

	/* the device binds fine afterwards, to a backend that has room */
	full.capacity = SIZE_MAX;
	bind_ok(core, b, d2, &full);
	cr_assert(model_is_block(only_tcb(&full)->m, b));
	xtcam_core_free(core);
	tb_fini(&good);
	tb_fini(&full);
	assert_no_leaks();
}

Test(bind, failed_replay_to_second_new_callback_rolls_back_the_first)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 1);
	struct tb dual;
	int err;

	tb_init(&dual, "dual", TB_PERDEV);
	dual.dual = true;
	dual.capacity2 = 1;
	add(b, 1, 1);
	add(b, 2, 2);
	err = try_bind(core, b, d, &dual);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(dual.releases, 2, "both callbacks handed over are freed");
	cr_assert_eq(dual.released_with[0], 0, "the first got the DEL replay");
	cr_assert_eq(dual.released_with[1], 0, "the second applied nothing");
	cr_assert(list_empty(&dual.drv));
	cr_assert(list_empty(&b->cb_list));
	cr_assert_null(d->binding);
	dual.capacity2 = SIZE_MAX;
	cr_assert_eq(try_bind(core, b, d, &dual), 0);
	cr_assert_eq(list_count_nodes(&b->cb_list), 2);
	xtcam_core_free(core);
	tb_fini(&dual);
	assert_no_leaks();
}

Test(bind, rebind_after_unbind)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b1 = block(core, "one"), *b2 = block(core, "two");
	struct xtcam_dev *d = dev(core, &NS1, 1);
	struct tb tb;

	tb_init(&tb, "native", TB_SHARED);
	add(b1, 1, 1);
	add(b2, 1, 7);
	add(b2, 2, 8);
	bind_ok(core, b1, d, &tb);
	unbind_ok(core, d);
	bind_ok(core, b1, d, &tb);
	cr_assert(model_is_block(only_tcb(&tb)->m, b1));
	unbind_ok(core, d);
	bind_ok(core, b2, d, &tb);
	cr_assert(model_is_block(only_tcb(&tb)->m, b2));
	cr_assert_eq(d->binding->block, b2);
	cr_assert_eq(tb.releases, 2);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, device_already_bound_is_ebusy_and_first_binding_stays)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b1 = block(core, "one"), *b2 = block(core, "two");
	struct xtcam_dev *d = dev(core, &NS1, 1), *d2 = dev(core, &NS1, 2);
	struct xtcam_binding *first;
	struct tb shared, hw;
	char msg[XTCAM_ERRMSG_MAX];

	tb_init(&shared, "native", TB_SHARED);
	tb_init(&hw, "hw", TB_PERDEV);
	add(b1, 1, 1);
	bind_ok(core, b1, d, &shared);
	bind_ok(core, b2, d2, &shared);
	first = d->binding;

	cr_assert_eq(xtcam_bind(core, b2, d, &shared.be, INGRESS, 0, msg,
				sizeof(msg)), -EBUSY,
		     "second block, even though the backend would share");
	cr_assert(strstr(msg, "block one"), "names the block it has: %s", msg);
	cr_assert_eq(try_bind(core, b1, d, &shared), -EBUSY, "same block");
	cr_assert_eq(try_bind(core, b1, d, &hw), -EBUSY, "another backend");
	cr_assert_eq(xtcam_bind(core, b1, d, &shared.be, EGRESS, 0, NULL, 0),
		     -EBUSY, "another binder type");
	cr_assert_eq(shared.binds, 2, "the backend was not even asked");
	cr_assert_eq(hw.binds, 0);

	cr_assert_eq(d->binding, first);
	cr_assert_eq(first->block, b1);
	cr_assert_eq(b1->nbindings, 1);
	cr_assert_eq(b2->nbindings, 1);
	cr_assert_eq(list_first_entry(&b1->cb_list, struct flow_block_cb,
				      list)->refcnt, 1);
	cr_assert_eq(list_first_entry(&b2->cb_list, struct flow_block_cb,
				      list)->refcnt, 1);
	unbind_ok(core, d);
	cr_assert_eq(shared.releases, 1);
	xtcam_core_free(core);
	tb_fini(&shared);
	tb_fini(&hw);
	assert_no_leaks();
}

Test(bind, egress_on_ingress_only_backend_is_eopnotsupp)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 1);
	struct tb tb;
	char msg[XTCAM_ERRMSG_MAX];

	tb_init(&tb, "generic", TB_SIMPLE);
	tb.ingress_only = true;
	add(b, 1, 1);
	cr_assert_eq(xtcam_bind(core, b, d, &tb.be, EGRESS, 0, msg, sizeof(msg)),
		     -EOPNOTSUPP);
	cr_assert(strstr(msg, "ingress"), "%s", msg);
	cr_assert_null(d->binding);
	cr_assert(list_empty(&tb.drv));
	cr_assert(list_empty(&b->cb_list));
	cr_assert_eq(tb.simple[1].batches, 0);
	bind_ok(core, b, d, &tb);   /* ingress works */
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, bad_arguments_are_einval)
{
	struct xtcam_core *core = xtcam_core_new(), *other = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge"), *ob = block(other, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 1), *od = dev(other, &NS1, 1);
	struct tb tb;

	tb_init(&tb, "hw", TB_PERDEV);
	cr_assert_eq(try_bind(core, ob, d, &tb), -EINVAL);
	cr_assert_eq(try_bind(core, b, od, &tb), -EINVAL);
	cr_assert_eq(xtcam_bind(core, b, d, &tb.be, 3, 0, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_bind(core, b, d, &tb.be, INGRESS, 0x80, NULL, 0),
		     -EINVAL);
	cr_assert_eq(xtcam_bind(core, b, d, NULL, INGRESS, 0, NULL, 0), -EINVAL);
	cr_assert_eq(xtcam_unbind(core, od, 0, NULL, 0), -EINVAL);
	cr_assert_eq(tb.binds, 0);
	xtcam_core_free(core);
	xtcam_core_free(other);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, unbind_without_binding_is_enoent)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 1);
	struct tb tb;
	char msg[XTCAM_ERRMSG_MAX];

	tb_init(&tb, "hw", TB_PERDEV);
	cr_assert_eq(xtcam_unbind(core, d, 0, msg, sizeof(msg)), -ENOENT);
	cr_assert(strstr(msg, "not bound"), "%s", msg);
	bind_ok(core, b, d, &tb);
	unbind_ok(core, d);
	cr_assert_eq(xtcam_unbind(core, d, 0, NULL, 0), -ENOENT, "twice");
	cr_assert_eq(tb.unbinds, 1, "the backend is not asked");
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, failing_setup_hands_nothing_over)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 1);
	struct flow_block_cb *cb;
	struct tb tb;

	tb_init(&tb, "hw", TB_PERDEV);
	add(b, 1, 1);
	tb.fail_bind = -EIO;
	cr_assert_eq(try_bind(core, b, d, &tb), -EIO);
	cr_assert_null(d->binding);
	cr_assert_eq(tb.releases, 0);

	/* a backend that queues a callback and then fails keeps it: the
	 * core does not release what it was not handed */
	tb.fail_bind = 0;
	tb.queue_then_fail = true;
	cr_assert_eq(try_bind(core, b, d, &tb), -EIO);
	cr_assert_eq(tb.releases, 0);
	cr_assert(list_empty(&b->cb_list));
	cb = only_cb(&tb);
	cr_assert(list_empty(&cb->list), "unlinked from the dead cb_list");
	cr_assert_eq(((struct tcb *)cb->cb_priv)->batches, 0, "no replay");
	list_del(&cb->driver_list);
	flow_block_cb_free(cb);
	cr_assert_eq(tb.releases, 1);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, unbind_backend_error_still_unbinds)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 1);
	struct tb tb;

	tb_init(&tb, "hw", TB_PERDEV);
	add(b, 1, 1);
	bind_ok(core, b, d, &tb);
	tb.unbind_err = -EIO;
	cr_assert_eq(xtcam_unbind(core, d, 0, NULL, 0), -EIO, "reported");
	cr_assert_null(d->binding, "but the binding is gone");
	cr_assert_eq(tb.releases, 1);
	cr_assert(list_empty(&b->cb_list));
	cr_assert_eq(xtcam_block_del(core, "edge"), 0);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, callbacks_left_behind_go_with_the_last_binding)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 1);
	struct tb tb;

	tb_init(&tb, "sloppy", TB_PERDEV);
	tb.forget_remove = true;
	add(b, 1, 1);
	add(b, 2, 2);
	bind_ok(core, b, d, &tb);
	cr_assert_eq(xtcam_unbind(core, d, 0, NULL, 0), 0);
	cr_assert_eq(tb.releases, 1);
	cr_assert(list_empty(&tb.drv), "and off its driver list");
	cr_assert(list_empty(&b->cb_list));
	cr_assert_eq(tb.ks[0].used, false, "removal replayed, state gone");
	cr_assert_eq(xtcam_block_del(core, "edge"), 0);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(bind, core_free_lets_go_with_keep)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct tb shared, hw;
	struct tcb *c;

	tb_init(&shared, "native", TB_SHARED);
	tb_init(&hw, "hw", TB_PERDEV);
	add(b, 1, 1);
	bind_ok(core, b, dev(core, &NS1, 1), &shared);
	bind_ok(core, b, dev(core, &NS1, 2), &shared);
	bind_ok(core, b, dev(core, &NS2, 1), &hw);
	c = only_tcb(&shared);
	cr_assert_eq(c->batches, 1);
	xtcam_core_free(core);
	cr_assert_eq(shared.unbinds, 2);
	cr_assert(shared.last_keep, "told to keep the kernel state");
	cr_assert(hw.last_keep);
	cr_assert_eq(shared.releases, 1);
	cr_assert_eq(hw.releases, 1);
	cr_assert(list_empty(&shared.drv), "driver lists left consistent");
	cr_assert(list_empty(&hw.drv));
	cr_assert(shared.ks[0].used, "kernel state kept");
	cr_assert_eq(shared.ks[0].m.n, 1, "no rule removed");
	cr_assert(hw.ks[0].used);
	cr_assert_eq(hw.ks[0].m.n, 1);
	tb_fini(&shared);
	tb_fini(&hw);
	assert_no_leaks();
}

/* What the loader persists about a binding (by name and identity). */
struct saved_binding {
	struct xtcam_net net;
	__u32 ifindex;
	char block[XTCAM_NAME_MAX];
	char backend[XTCAM_MODE_MAX];
	enum flow_block_binder_type binder_type;
};

Test(restore, rebuilt_core_gives_the_same_answers)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b1, *b2;
	struct tb shared, hw;
	struct saved_binding saved[3];
	struct xtcam_rule rules1[3], rules2[1];
	struct xtcam_block_spec spec1, spec2;
	struct xtcam_dev *d;
	size_t nsaved = 0, i;
	char msg[XTCAM_ERRMSG_MAX];

	tb_init(&shared, "native", TB_SHARED);
	tb_init(&hw, "hw", TB_PERDEV);
	cr_assert_eq(xtcam_core_backend_add(core, &shared.be), 0);
	cr_assert_eq(xtcam_core_backend_add(core, &hw.be), 0);
	b1 = block(core, "one");
	b2 = block(core, "two");
	add(b1, 1, 1);
	add(b1, 2, 2);
	add(b1, 3, 3);
	add(b2, 5, 50);
	bind_ok(core, b1, dev(core, &NS1, 2), &shared);
	bind_ok(core, b1, dev(core, &NS2, 2), &hw);
	bind_ok(core, b2, dev(core, &NS1, 3), &hw);

	/* the loader's registry: blocks, rules, bindings */
	spec1 = b1->spec;
	spec2 = b2->spec;
	for (i = 0; i < 3; i++)
		rules1[i] = *xtcam_block_rule_at(b1, i);
	rules2[0] = *xtcam_block_rule_at(b2, 0);
	{
		struct xtcam_block *bs[] = { b1, b2 };
		struct xtcam_binding *bd;

		for (i = 0; i < 2; i++)
			list_for_each_entry(bd, &bs[i]->bindings, block_node) {
				struct saved_binding *s = &saved[nsaved++];

				s->net = *bd->dev->net;
				s->ifindex = bd->dev->ifindex;
				snprintf(s->block, sizeof(s->block), "%s",
					 bd->block->spec.name);
				snprintf(s->backend, sizeof(s->backend), "%s",
					 bd->mode);
				s->binder_type = bd->binder_type;
			}
	}
	cr_assert_eq(nsaved, 3);
	xtcam_core_free(core);   /* the process exits */
	cr_assert_eq(shared.ks[0].m.n, 3, "pinned state survives");

	/* a new process */
	core = xtcam_core_new();
	cr_assert_eq(xtcam_core_backend_add(core, &shared.be), 0);
	cr_assert_eq(xtcam_core_backend_add(core, &hw.be), 0);
	b1 = xtcam_block_add(core, &spec1);
	b2 = xtcam_block_add(core, &spec2);
	cr_assert_not(IS_ERR(b1));
	cr_assert_not(IS_ERR(b2));
	cr_assert_eq(xtcam_block_rules_load(b1, rules1, 3, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rules_load(b2, rules2, 1, NULL, 0), 0);
	for (i = 0; i < nsaved; i++) {
		struct saved_binding *s = &saved[i];
		struct xtcam_backend *be = xtcam_core_backend_find(core, s->backend);
		int err;

		cr_assert_not_null(be);
		err = xtcam_bind(core, xtcam_block_find(core, s->block),
				 dev(core, &s->net, s->ifindex), be,
				 s->binder_type, XTCAM_BIND_RESTORE, msg,
				 sizeof(msg));
		cr_assert_eq(err, 0, "restore %s: %s", s->block, msg);
		cr_assert(((struct tb *)be->priv)->last_restore);
	}
	/* no rule was replayed: the kernel state is as it was */
	{
		struct flow_block_cb *cb = only_cb(&shared);
		struct tcb *c = flow_block_cb_priv(cb);

		cr_assert_eq(c->batches, 0, "restore replays nothing");
		cr_assert(model_is_block(c->m, b1));
		cr_assert_eq(cb->refcnt, 1);
	}

	/* the same answers as before the restart */
	d = dev(core, &NS1, 2);
	cr_assert_eq(try_bind(core, b1, d, &shared), -EBUSY);
	cr_assert_eq(try_bind(core, b2, d, &shared), -EBUSY);
	cr_assert_eq(try_bind(core, b2, dev(core, &NS2, 2), &hw), -EBUSY);
	cr_assert_eq(xtcam_block_del(core, "one"), -EBUSY);
	cr_assert_eq(xtcam_unbind(core, dev(core, &NS2, 9), 0, NULL, 0), -ENOENT);
	cr_assert_eq(xtcam_block_rules_load(b1, rules2, 1, NULL, 0), -EBUSY);

	/* and it works as before: a rule reaches every callback ... */
	add(b1, 4, 4);
	cr_assert(model_is_block(only_tcb(&shared)->m, b1));
	{
		struct flow_block_cb *cb;
		int n = 0;

		list_for_each_entry(cb, &b1->cb_list, list) {
			cr_assert(model_is_block(((struct tcb *)cb->cb_priv)->m, b1));
			n++;
		}
		cr_assert_eq(n, 2);
	}
	/* ... and unbind removes the rules from the kernel state */
	unbind_ok(core, d);
	cr_assert_eq(shared.ks[0].used, false);
	unbind_ok(core, dev(core, &NS2, 2));
	unbind_ok(core, dev(core, &NS1, 3));
	cr_assert_eq(hw.releases, 4, "two at exit, two now");
	for (i = 0; i < 16; i++)
		cr_assert_not(hw.ks[i].used);
	cr_assert_eq(xtcam_block_del(core, "one"), 0);
	xtcam_core_free(core);
	tb_fini(&shared);
	tb_fini(&hw);
	assert_no_leaks();
}

Test(restore, missing_kernel_state_fails_cleanly)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct tb hw;

	tb_init(&hw, "hw", TB_PERDEV);
	cr_assert_eq(xtcam_bind(core, b, d, &hw.be, INGRESS, XTCAM_BIND_RESTORE,
				NULL, 0), -ENOENT);
	cr_assert_null(d->binding);
	cr_assert(list_empty(&hw.drv));
	cr_assert_eq(hw.releases, 0);
	xtcam_core_free(core);
	tb_fini(&hw);
	assert_no_leaks();
}

/* --- out of memory everywhere --------------------------------------------- */

Test(enomem, rule_batch_on_a_bound_block)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct xtcam_rule r1 = R(9, 1), r5 = R(5, 5), r6 = R(6, 6);
	struct tb tb;
	struct tcb *c;
	struct snap before;
	long k, n;
	int err;

	tb_init(&tb, "hw", TB_PERDEV);
	for (__u32 h = 1; h <= 4; h++)
		add(b, h, h);
	bind_ok(core, b, d, &tb);
	c = only_tcb(&tb);
	before = snap(b);
	for (k = 0;; k++) {
		struct xtcam_rule_op ops[] = {
			{ XTCAM_RULE_REPLACE, &r1, NULL },
			{ XTCAM_RULE_DEL, NULL, xtcam_block_rule_find(b, 2) },
			{ XTCAM_RULE_ADD, &r5, NULL },
			{ XTCAM_RULE_ADD, &r6, NULL },
		};

		xtcam_alloc_fail_after(k);
		err = xtcam_block_rules_apply(b, ops, 4, NULL, 0);
		n = xtcam_alloc_fail_after(-1);
		if (!err)
			break;
		cr_assert_eq(err, -ENOMEM, "allocation %ld", k);
		assert_snap(b, &before);
		cr_assert(model_is_block(c->m, b));
		cr_assert_eq(c->batches, 1, "nothing delivered before the commit "
			     "is certain");
		cr_assert_lt(k, 100);
	}
	cr_assert_gt(k, 3, "the batch needs several allocations (%ld)", n);
	cr_assert_eq(xtcam_block_rule_count(b), 5);
	cr_assert(model_is_block(c->m, b));
	assert_block_sane(b);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(enomem, rules_set)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_rule set[] = { R(1, 1), R(7, 2), R(3, 3) };
	struct snap before;
	long k;
	int err;

	add(b, 1, 1);
	add(b, 2, 2);
	add(b, 9, 9);
	before = snap(b);
	for (k = 0;; k++) {
		xtcam_alloc_fail_after(k);
		err = xtcam_block_rules_set(b, set, 3, NULL, 0);
		xtcam_alloc_fail_after(-1);
		if (!err)
			break;
		cr_assert_eq(err, -ENOMEM);
		assert_snap(b, &before);
		cr_assert_lt(k, 100);
	}
	cr_assert_eq(xtcam_block_rule_count(b), 3);
	cr_assert_eq(xtcam_block_rule_find(b, 2)->prio, 7);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(enomem, bind_with_replay)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct tb tb;
	long k;
	int err;

	tb_init(&tb, "hw", TB_PERDEV);
	add(b, 1, 1);
	add(b, 2, 2);
	for (k = 0;; k++) {
		int releases = tb.releases;

		xtcam_alloc_fail_after(k);
		err = try_bind(core, b, d, &tb);
		xtcam_alloc_fail_after(-1);
		if (!err)
			break;
		cr_assert_eq(err, -ENOMEM);
		cr_assert_null(d->binding);
		cr_assert(list_empty(&tb.drv));
		cr_assert(list_empty(&b->cb_list));
		cr_assert_leq(tb.releases, releases + 1);
		for (int i = 0; i < 16; i++)
			cr_assert_not(tb.ks[i].used, "kernel state left at %ld", k);
		cr_assert_lt(k, 100);
	}
	cr_assert(model_is_block(only_tcb(&tb)->m, b));
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(enomem, unbind_removes_in_pieces_without_memory)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct xtcam_dev *d = dev(core, &NS1, 2);
	struct tb tb;
	struct tcb *c;

	tb_init(&tb, "generic", TB_SIMPLE);
	for (__u32 h = 1; h <= 200; h++)
		add(b, 1, h);
	bind_ok(core, b, d, &tb);
	c = &tb.simple[2];
	xtcam_alloc_fail_after(0);
	cr_assert_eq(xtcam_unbind(core, d, 0, NULL, 0), 0);
	xtcam_alloc_fail_after(-1);
	cr_assert_eq(c->m->n, 0, "every rule removed");
	cr_assert_gt(c->batches, 2, "in several batches");
	cr_assert(list_empty(&tb.drv));
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

/* --- scale ------------------------------------------------------------------ */

/*
 * 100k rules: built in one batch, replayed, changed by a 100k-op batch, swapped
 * whole, rolled back, then 2000 single-rule changes.  Quadratic work anywhere
 * (a list insert per rule, a linear handle search) would take hours here.
 */
Test(scale, hundred_thousand_rules, .timeout = 600)
{
	enum { N = 100000 };
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "big");
	struct xtcam_dev *d = dev(core, &NS1, 2), *d2 = dev(core, &NS1, 3);
	struct xtcam_rule *rules = calloc(2 * N, sizeof(*rules));
	struct xtcam_rule_op *ops = calloc(N, sizeof(*ops));
	struct tb tb, tb2;
	struct tcb *c;
	size_t i, k;
	unsigned int seed = 12345;

	cr_assert(rules && ops);
	tb_init(&tb, "hw", TB_PERDEV);
	tb_init(&tb2, "hw2", TB_PERDEV);

	/* handles 1..N in random order, prios 1..1000 */
	for (i = 0; i < N; i++)
		rules[i] = R(1 + rand_r(&seed) % 1000, (__u32)i + 1);
	for (i = N - 1; i > 0; i--) {
		size_t j = rand_r(&seed) % (i + 1);
		struct xtcam_rule t = rules[i];

		rules[i] = rules[j];
		rules[j] = t;
	}
	for (i = 0; i < N; i++)
		ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[i], NULL };
	cr_assert_eq(xtcam_block_rules_apply(b, ops, N, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), N);
	assert_block_sane(b);

	bind_ok(core, b, d, &tb);
	c = only_tcb(&tb);
	cr_assert_eq(c->batches, 1);
	cr_assert_eq(c->last_n, N);
	cr_assert(c->last_sorted);

	/* one batch of N ops: N/4 DEL, N/4 REPLACE, N/2 ADD */
	for (i = 0, k = 0; i < N / 4; i++, k++)
		ops[k] = (struct xtcam_rule_op){
			XTCAM_RULE_DEL, NULL, xtcam_block_rule_find(b, 4 * i + 1) };
	for (i = 0; i < N / 4; i++, k++) {
		rules[N + i] = R(1 + rand_r(&seed) % 1000, 4 * i + 2);
		ops[k] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE,
						 &rules[N + i], NULL };
	}
	for (i = 0; i < N / 2; i++, k++) {
		rules[N + N / 4 + i] = R(1 + rand_r(&seed) % 1000, N + 1 + i);
		ops[k] = (struct xtcam_rule_op){ XTCAM_RULE_ADD,
						 &rules[N + N / 4 + i], NULL };
	}
	cr_assert_eq(k, N);
	cr_assert_eq(xtcam_block_rules_apply(b, ops, N, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), N - N / 4 + N / 2);
	cr_assert(model_is_block(c->m, b));
	assert_block_sane(b);

	/* a second device whose table is too small: a 125k replay fails,
	 * and the same N-op batch rolls back on the first device */
	tb2.capacity = N;
	cr_assert_eq(try_bind(core, b, d2, &tb2), -ENOSPC);
	tb2.capacity = SIZE_MAX;
	bind_ok(core, b, d2, &tb2);
	tb2.capacity = N;   /* the next change overflows tb2 */
	for (i = 0; i < N; i++) {
		rules[i] = R(1 + rand_r(&seed) % 1000, 2 * N + 1 + (__u32)i);
		ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[i], NULL };
	}
	cr_assert_eq(xtcam_block_rules_apply(b, ops, N, NULL, 0), -ENOSPC);
	cr_assert_eq(xtcam_block_rule_count(b), N - N / 4 + N / 2);
	cr_assert(model_is_block(c->m, b));
	tb2.capacity = SIZE_MAX;
	unbind_ok(core, d2);

	/* swap the whole set for N rules: half kept, some changed, half new */
	for (i = 0; i < N; i++) {
		const struct xtcam_rule *have = xtcam_block_rule_at(b, i);

		if (i % 2)
			rules[i] = R(1 + (__u32)(i % 7), 3 * N + (__u32)i);
		else
			rules[i] = *have;
		if (i % 10 == 0)
			rules[i].prio = 1 + (rules[i].prio % 999);
	}
	cr_assert_eq(xtcam_block_rules_set(b, rules, N, NULL, 0), 0);
	cr_assert_eq(xtcam_block_rule_count(b), N);
	cr_assert(model_is_block(c->m, b));
	assert_block_sane(b);

	/* single-rule changes on a big block */
	for (i = 0; i < 1000; i++) {
		struct xtcam_rule r = R(1 + i % 100, 4 * N + (__u32)i);

		cr_assert_eq(xtcam_block_rule_add(b, &r, NULL, 0), 0);
		cr_assert_eq(xtcam_block_rule_del(b, rules[2 * i].handle, NULL, 0),
			     0);
	}
	cr_assert_eq(xtcam_block_rule_count(b), N);
	cr_assert(model_is_block(c->m, b));
	assert_block_sane(b);

	unbind_ok(core, d);
	cr_assert_eq(tb.releases, 1);
	xtcam_core_free(core);
	free(rules);
	free(ops);
	tb_fini(&tb);
	tb_fini(&tb2);
	assert_no_leaks();
}

/* ------------------------------------------------------------------------
 * A block whose rules are kept by a source (the loader's registry): a test
 * store, which counts what the core asks of it.
 */
struct store {
	struct xtcam_rule r[16];
	size_t n;
	int finds, fetches;
};

static int store_find(void *priv, __u32 handle, struct xtcam_rule *out)
{
	struct store *s = priv;

	s->finds++;
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].handle == handle) {
			*out = s->r[i];
			return 0;
		}
	return -ENOENT;
}

static int store_fetch(void *priv, struct xtcam_rule **rules, size_t *n)
{
	struct store *s = priv;

	s->fetches++;
	*rules = malloc((s->n + 1) * sizeof(**rules));
	cr_assert_not_null(*rules);
	/* in no particular order: the core sorts */
	for (size_t i = 0; i < s->n; i++)
		(*rules)[i] = s->r[s->n - 1 - i];
	*n = s->n;
	return 0;
}

/* what the source's owner does once a change is delivered */
static void store_put(struct store *s, const struct xtcam_rule *r)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].handle == r->handle) {
			s->r[i] = *r;
			return;
		}
	s->r[s->n++] = *r;
}

static void store_del(struct store *s, __u32 handle)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].handle == handle) {
			s->r[i] = s->r[--s->n];
			return;
		}
}

Test(source, changes_read_only_the_handles_they_name)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b;
	struct xtcam_block_spec spec;
	struct store st = { .n = 0 };
	struct xtcam_rule r;
	struct tb tb;
	struct tcb *c, *c2;
	char msg[XTCAM_ERRMSG_MAX];

	tb_init(&tb, "generic", TB_SIMPLE);
	cr_assert_eq(xtcam_core_backend_add(core, &tb.be), 0);
	/* an earlier process: three rules, bound */
	b = block(core, "edge");
	add(b, 20, 2);
	add(b, 10, 1);
	add(b, 10, 3);
	bind_ok(core, b, dev(core, &NS1, 3), &tb);
	for (size_t i = 0; i < 3; i++)
		store_put(&st, xtcam_block_rule_at(b, i));
	spec = b->spec;
	xtcam_core_free(core);

	/* this one: the block with its rules in the store, the binding restored */
	core = xtcam_core_new();
	cr_assert_eq(xtcam_core_backend_add(core, &tb.be), 0);
	b = xtcam_block_add(core, &spec);
	cr_assert_not(IS_ERR(b));
	cr_assert_eq(xtcam_block_source_set(b, &(struct xtcam_rule_source){ store_find,
				store_fetch, &st, NULL }), 0);
	cr_assert_eq(xtcam_bind(core, b, dev(core, &NS1, 3), &tb.be, INGRESS,
				XTCAM_BIND_RESTORE, msg, sizeof(msg)), 0, "%s", msg);
	c = &tb.simple[3];
	cr_assert_eq(c->m->n, 3);

	/* add, replace, del: each finds its handle, fetches nothing */
	r = R(5, 4);
	cr_assert_eq(xtcam_block_rule_add(b, &r, msg, sizeof(msg)), 0, "%s", msg);
	store_put(&st, &r);
	r = R(30, 1);
	cr_assert_eq(xtcam_block_rule_replace(b, &r, msg, sizeof(msg)), 0, "%s", msg);
	store_put(&st, &r);
	cr_assert_eq(c->m->prio[1], 30, "the callback got the new rule");
	cr_assert_eq(xtcam_block_rule_del(b, 2, msg, sizeof(msg)), 0, "%s", msg);
	store_del(&st, 2);
	cr_assert_eq(c->m->n, 3);
	cr_assert_not(model_has(c->m, 2));
	cr_assert_eq(st.fetches, 0, "no change read the whole block");
	cr_assert_eq(st.finds, 3);
	cr_assert_eq(xtcam_block_rule_count(b), 0, "the core keeps no copy");

	/* the checks still hold, through the source */
	r = R(7, 3);
	cr_assert_eq(xtcam_block_rule_add(b, &r, msg, sizeof(msg)), -EEXIST);
	cr_assert(strstr(msg, "handle 3 exists"), "%s", msg);
	cr_assert_eq(xtcam_block_rule_del(b, 2, msg, sizeof(msg)), -ENOENT);
	c->fail_next = -ENOSPC;
	r = R(8, 9);
	cr_assert_eq(xtcam_block_rule_add(b, &r, msg, sizeof(msg)), -ENOSPC);
	cr_assert_not(model_has(c->m, 9));
	cr_assert_eq(st.fetches, 0);

	/* a second device: the replay needs them all, in (prio, handle) order */
	bind_ok(core, b, dev(core, &NS1, 4), &tb);
	cr_assert_eq(st.fetches, 1);
	c2 = &tb.simple[4];
	cr_assert_eq(c2->last_n, 3);
	cr_assert(c2->last_sorted, "replayed in (prio, handle) order");
	cr_assert(model_is_block(c2->m, b));
	cr_assert(model_is_block(c->m, b));
	cr_assert_eq(xtcam_block_rule_at(b, 0)->handle, 4);
	cr_assert_eq(xtcam_block_rule_at(b, 2)->prio, 30);
	/* from now on the block holds them as any other */
	add(b, 1, 11);
	cr_assert_eq(st.fetches, 1);
	cr_assert_eq(xtcam_block_rule_count(b), 4);
	unbind_ok(core, dev(core, &NS1, 4));
	unbind_ok(core, dev(core, &NS1, 3));
	cr_assert_eq(c->m->n, 0, "the unbind removed every rule");
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

static __u32 store_free_above(void *priv)
{
	struct store *s = priv;
	__u32 max = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].handle > max)
			max = s->r[i].handle;
	return max;
}

/* a batch of ADDs above the source's highest handle asks it nothing (a
 * load into a full block costs what the batch holds); one at or below is
 * still looked up, and refused when it is there */
Test(source, adds_above_the_free_mark_find_nothing)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct store st = { .n = 0 };
	struct xtcam_rule rules[8];
	struct xtcam_rule_op ops[8];
	char msg[XTCAM_ERRMSG_MAX];

	for (__u32 h = 1; h <= 5; h++) {
		struct xtcam_rule r = R(10, h);

		store_put(&st, &r);
	}
	cr_assert_eq(xtcam_block_source_set(b, &(struct xtcam_rule_source){ store_find,
				store_fetch, &st, store_free_above }), 0);
	for (int i = 0; i < 8; i++) {
		rules[i] = R(20, 6 + (__u32)i);
		ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[i], NULL };
	}
	cr_assert_eq(xtcam_block_rules_apply(b, ops, 8, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(st.finds, 0, "handles 6-13 are above 5: no find");
	cr_assert_eq(st.fetches, 0);
	for (int i = 0; i < 8; i++)
		store_put(&st, &rules[i]);
	/* at or below the mark: looked up */
	rules[0] = R(20, 3);
	rules[1] = R(20, 14);
	ops[0] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[0], NULL };
	ops[1] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[1], NULL };
	cr_assert_eq(xtcam_block_rules_apply(b, ops, 2, msg, sizeof(msg)), -EEXIST);
	cr_assert(strstr(msg, "handle 3 exists"), "%s", msg);
	cr_assert_eq(st.finds, 1);
	cr_assert_eq(xtcam_block_rule_count(b), 0, "the core keeps no copy");
	xtcam_core_free(core);
	assert_no_leaks();
}

/* a batch whose caller read the source for its handles (rules_apply_known)
 * asks the source nothing: an add's handle is free, a replace's or del's
 * old is the rule there; the same batch through rules_apply looks each up */
Test(source, known_changes_find_nothing)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct store st = { .n = 0 };
	struct xtcam_rule add6 = R(20, 6), rep2 = R(30, 2), old2, old3;
	struct xtcam_rule_op ops[3];
	char msg[XTCAM_ERRMSG_MAX];

	for (__u32 h = 1; h <= 5; h++) {
		struct xtcam_rule r = R(10, h);

		store_put(&st, &r);
	}
	old2 = st.r[1];
	old3 = st.r[2];
	cr_assert_eq(xtcam_block_source_set(b, &(struct xtcam_rule_source){ store_find,
				store_fetch, &st, NULL }), 0);
	ops[0] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &add6, NULL };
	ops[1] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE, &rep2, &old2 };
	ops[2] = (struct xtcam_rule_op){ XTCAM_RULE_DEL, &old3, &old3 };
	cr_assert_eq(xtcam_block_rules_apply_known(b, ops, 3, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(st.finds, 0, "every handle was known: no find");
	cr_assert_eq(xtcam_block_rules_apply(b, ops, 3, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(st.finds, 3, "not known: each handle looked up");
	/* a replace without the rule it replaces is refused */
	ops[0] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE, &rep2, NULL };
	cr_assert_eq(xtcam_block_rules_apply_known(b, ops, 1, msg, sizeof(msg)), -EINVAL);
	cr_assert(strstr(msg, "replace without the rule it changes"), "%s", msg);
	old3.handle = 9;
	ops[0] = (struct xtcam_rule_op){ XTCAM_RULE_REPLACE, &rep2, &old3 };
	cr_assert_eq(xtcam_block_rules_apply_known(b, ops, 1, msg, sizeof(msg)), -EINVAL);
	cr_assert_eq(st.finds, 3);
	xtcam_core_free(core);
	assert_no_leaks();
}

Test(source, set_only_on_an_empty_unbound_block)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b = block(core, "edge");
	struct store st = { .n = 0 };
	struct xtcam_rule_source src = { store_find, store_fetch, &st, NULL };

	add(b, 1, 1);
	cr_assert_eq(xtcam_block_source_set(b, &src), -EBUSY);
	src.fetch = NULL;
	cr_assert_eq(xtcam_block_source_set(block(core, "e2"), &src), -EINVAL);
	xtcam_core_free(core);
	assert_no_leaks();
}

/*
 * The last unbind of a shared callback whose rules go with it (the XDP
 * backend's: its maps are freed whole): the core replays no removal to it
 * and reads no rule from the source for it; the same callback without the
 * mark gets every removal, read from the source.
 */
static void unbind_source_block(bool no_removal)
{
	struct xtcam_core *core = xtcam_core_new();
	struct xtcam_block *b;
	struct xtcam_block_spec spec;
	struct store st = { .n = 0 };
	struct tb tb;
	struct tcb *c;
	char msg[XTCAM_ERRMSG_MAX];

	tb_init(&tb, "native", TB_SHARED);
	tb.no_removal = no_removal;
	cr_assert_eq(xtcam_core_backend_add(core, &tb.be), 0);
	b = block(core, "edge");
	add(b, 20, 2);
	add(b, 10, 1);
	add(b, 10, 3);
	bind_ok(core, b, dev(core, &NS1, 3), &tb);
	for (size_t i = 0; i < 3; i++)
		store_put(&st, xtcam_block_rule_at(b, i));
	spec = b->spec;
	xtcam_core_free(core);

	core = xtcam_core_new();
	cr_assert_eq(xtcam_core_backend_add(core, &tb.be), 0);
	b = xtcam_block_add(core, &spec);
	cr_assert_not(IS_ERR(b));
	cr_assert_eq(xtcam_block_source_set(b, &(struct xtcam_rule_source){ store_find,
				store_fetch, &st, NULL }), 0);
	cr_assert_eq(xtcam_bind(core, b, dev(core, &NS1, 3), &tb.be, INGRESS,
				XTCAM_BIND_RESTORE, msg, sizeof(msg)), 0, "%s", msg);
	c = flow_block_cb_priv(list_first_entry(&tb.drv, struct flow_block_cb, driver_list));
	cr_assert_eq(c->m->n, 3);
	tb.releases = 0;
	unbind_ok(core, dev(core, &NS1, 3));
	cr_assert_eq(tb.releases, 1);
	if (no_removal) {
		cr_assert_eq(st.fetches, 0, "no rule read for a callback that needs none");
		cr_assert_eq(tb.released_with[0], 3, "no removal replayed: its rules went whole");
	} else {
		cr_assert_eq(st.fetches, 1, "the removal replay read the rules");
		cr_assert_eq(tb.released_with[0], 0, "every rule removed before the release");
	}
	cr_assert(list_empty(&b->cb_list));
	cr_assert_eq(b->nbindings, 0);
	xtcam_core_free(core);
	tb_fini(&tb);
	assert_no_leaks();
}

Test(source, unbind_reads_no_rule_for_a_callback_that_needs_no_removal)
{
	unbind_source_block(true);
}

Test(source, unbind_replays_removal_to_a_callback_without_the_mark)
{
	unbind_source_block(false);
}
