/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The control-path core of libxtcam: blocks (named rule tables), devices,
 * backends and bindings, on top of the flow_block API (flow_block.h).
 * Userspace only; no globals, so a process may hold several cores.  See
 * docs/flow_block.md.
 *
 * Bind: the core builds a struct flow_block_offload, calls the backend's
 * setup(), registers on the block what the backend queued on cb_list and
 * replays every rule of the block to each of those callbacks as one
 * XTCAM_RULE_ADD batch in (prio, handle) order.  Unbind: the core calls the
 * backend, replays the removal of every rule (one XTCAM_RULE_DEL batch) to
 * what it queued, unregisters and frees it.  A rule change goes, as one
 * batch, to every callback on the block; if one fails, the callbacks before
 * it get the inverse batch and the block keeps its rules.
 *
 * Conventions: int functions return 0 or a negative errno; pointer
 * functions return ERR_PTR(-errno) (err.h) unless documented to return
 * NULL; `errmsg` (may be NULL) gets a one-line reason on failure.
 * The structures are public so that backends and the loader can read them;
 * only core.c writes them.
 */
#ifndef XTCAM_CORE_H
#define XTCAM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flow_block.h"
#include "list.h"
#include "rule.h"

/* A size for errmsg buffers that every message fits. */
#define XTCAM_ERRMSG_MAX 256

/* --- what block callbacks receive --------------------------------------- */

enum xtcam_rule_cmd {
	XTCAM_RULE_ADD,
	XTCAM_RULE_DEL,
	XTCAM_RULE_REPLACE,
};

/*
 * One rule change.  As delivered to callbacks: ADD {rule: the new rule},
 * REPLACE {rule: the new rule, old: the rule it replaces, same handle},
 * DEL {old: the rule removed, rule: NULL}.  The pointers are valid for the
 * duration of the call only.
 *
 * As passed to xtcam_block_rules_apply(): ADD and REPLACE need `rule`
 * (REPLACE replaces the rule with rule->handle); DEL takes the handle from
 * `old` if set, else from `rule`.  The core fills in the rest.
 */
struct xtcam_rule_op {
	enum xtcam_rule_cmd cmd;
	const struct xtcam_rule *rule;
	const struct xtcam_rule *old;
};

/*
 * type_data of XTCAM_SETUP_RULES.  A callback applies the whole batch or
 * none of it, and returns 0 or a negative errno (with a message in errmsg,
 * errmsg_len bytes, never NULL).  It must accept the inverse of a batch it
 * has just applied: the core sends that when another callback fails (and
 * ignores what it returns).
 */
struct xtcam_rules_offload {
	struct xtcam_block *block;
	const struct xtcam_rule_op *ops;
	size_t n;
	char *errmsg;
	size_t errmsg_len;
	/* the core found each ADD's handle free in the block: a backend
	 * whose copy matches the block's need not look it up */
	bool adds_free;
};

/* Write the reason for a failure into o->errmsg. */
void xtcam_rules_errmsg(struct xtcam_rules_offload *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- objects ------------------------------------------------------------ */

struct xtcam_core;
struct xtcam_binding;

/*
 * A device: (namespace, ifindex), one object per pair for the life of the
 * core.  Its address is the cb_ident that per-device backends use, so it is
 * unique per device.
 */
struct xtcam_dev {
	struct xtcam_core *core;
	struct xtcam_net *net;          /* the core's object for its netns */
	__u32 ifindex;
	struct xtcam_binding *binding;  /* at most one; NULL when unbound */
	struct list_head node;          /* core's device list */
};

/*
 * A backend ("driver"): hw offload, native XDP, generic XDP.  setup() gets
 * FLOW_BLOCK_BIND / FLOW_BLOCK_UNBIND for `dev` (the kernel's ndo_setup_tc
 * with TC_SETUP_BLOCK) and behaves as a kernel driver does: it keeps its
 * own driver block list, and uses flow_block_cb_setup_simple() or
 * alloc/lookup/incref/add and decref/remove/free itself.  It must undo its
 * own work before it returns an error: the core does not free what a
 * failing setup() left on f->cb_list (it only unlinks it from there).
 */
struct xtcam_backend {
	const char *name;               /* "hw", "native", "generic", ... */
	int (*setup)(struct flow_block_offload *f, struct xtcam_dev *dev,
		     void *priv);
	void *priv;                     /* the backend's own state */
};

#define XTCAM_MODE_MAX 16

/* A device bound to a block: what the loader persists to rebuild it. */
struct xtcam_binding {
	struct xtcam_dev *dev;
	struct xtcam_block *block;
	struct xtcam_backend *backend;
	enum flow_block_binder_type binder_type;
	char mode[XTCAM_MODE_MAX];      /* backend->name at bind time */
	struct list_head block_node;    /* block->bindings */
};

/* Index of a block's rules by handle (private to core.c). */
struct xtcam_rule_slot;
struct xtcam_rule_htab {
	struct xtcam_rule_slot *slots;
	size_t nslots;                  /* power of 2, or 0 */
	size_t count;
};

/*
 * Where a block's rules are kept when the core does not hold them (the
 * loader's registry in bpffs).  find(): the rule with this handle into
 * *out, 0, -ENOENT when there is none, or another -errno.  fetch(): every
 * rule, in any order, into a malloc'd array the core frees.
 * free_above() (optional): a handle above which none is in use, so that
 * an ADD of such a handle is taken without a find().
 */
struct xtcam_rule_source {
	int (*find)(void *priv, __u32 handle, struct xtcam_rule *out);
	int (*fetch)(void *priv, struct xtcam_rule **rules, size_t *n);
	void *priv;
	__u32 (*free_above)(void *priv);
};

struct xtcam_block {
	struct xtcam_core *core;
	struct xtcam_block_spec spec;   /* spec.name is the block's name */
	struct list_head cb_list;       /* registered flow_block_cb (->list) */
	struct list_head bindings;      /* struct xtcam_binding (->block_node) */
	unsigned int nbindings;
	struct list_head node;          /* core's block list */
	/* private: rules sorted by (prio, handle), and by handle */
	struct xtcam_rule **rules;
	size_t nrules;
	size_t rules_cap;
	struct xtcam_rule_htab by_handle;
	/* rules kept by a source, not (yet) fetched into the core */
	struct xtcam_rule_source src;
	bool remote;
};

/* --- core, namespaces, devices, backends ------------------------------- */

struct xtcam_core *xtcam_core_new(void);   /* or ERR_PTR(-ENOMEM) */

/*
 * Free the core and everything it holds.  Every binding is let go of with
 * XTCAM_UNBIND_KEEP (the backends keep their kernel state, no rule is
 * removed), so that a later process can restore them.  Backends are the
 * caller's.  NULL is a no-op.
 */
void xtcam_core_free(struct xtcam_core *core);

/* The identity of the namespace whose nsfs file is `path`
 * ("/proc/self/ns/net", "/run/netns/NAME"); -errno of stat(). */
int xtcam_net_from_path(const char *path, struct xtcam_net *out);

/* The core's object for namespace `id` (compared by value), made on first
 * use; or ERR_PTR(-EINVAL | -ENOMEM). */
struct xtcam_net *xtcam_core_net_get(struct xtcam_core *core,
				     const struct xtcam_net *id);

/* The device (namespace `net`, compared by value, and ifindex), made on
 * first use; or ERR_PTR(-EINVAL) for ifindex 0 or no net, -ENOMEM. */
struct xtcam_dev *xtcam_core_dev_get(struct xtcam_core *core,
				     const struct xtcam_net *net,
				     __u32 ifindex);
/* The same, but NULL when the core has never seen it. */
struct xtcam_dev *xtcam_core_dev_find(struct xtcam_core *core,
				      const struct xtcam_net *net,
				      __u32 ifindex);

/* Register a backend by name (for restore): -EINVAL without name or
 * setup, -EEXIST for a name already taken, -ENOMEM.  The core keeps the
 * pointer; the backend must outlive the core. */
int xtcam_core_backend_add(struct xtcam_core *core,
			   struct xtcam_backend *be);
struct xtcam_backend *xtcam_core_backend_find(struct xtcam_core *core,
					      const char *name); /* or NULL */

/* --- blocks ------------------------------------------------------------ */

/* 1..XTCAM_NAME_MAX-1 of [A-Za-z0-9._-], not starting with '-', not "." or
 * ".." (the name is a directory in bpffs). */
bool xtcam_block_name_valid(const char *name);

/*
 * Add an empty block.  The spec is copied; capacity 0 becomes
 * XTCAM_DEFAULT_CAPACITY and a default action of XTCAM_ACT_NONE becomes
 * XTCAM_ACT_PASS.  ERR_PTR(-EINVAL) for a bad name, a capacity above
 * XTCAM_MAX_CAPACITY or an unknown default action; -EEXIST when the name
 * is taken; -ENOMEM.
 */
struct xtcam_block *xtcam_block_add(struct xtcam_core *core,
				    const struct xtcam_block_spec *spec);
/* -ENOENT unknown, -EBUSY while bound to any device. */
int xtcam_block_del(struct xtcam_core *core, const char *name);
struct xtcam_block *xtcam_block_find(struct xtcam_core *core,
				     const char *name);   /* or NULL */

/* --- rules ------------------------------------------------------------- */

/* Number of rules; the i-th in (prio, handle) order (NULL past the end);
 * the rule with this handle (NULL if none).  O(1). */
size_t xtcam_block_rule_count(const struct xtcam_block *b);
const struct xtcam_rule *xtcam_block_rule_at(const struct xtcam_block *b,
					     size_t i);
const struct xtcam_rule *xtcam_block_rule_find(const struct xtcam_block *b,
					       __u32 handle);

/*
 * Apply a batch, all or nothing: check it (-EINVAL for an unknown command,
 * a missing rule, handle 0, prio outside 1..65535, or a handle named twice
 * in the batch; -EEXIST for ADD of a handle the block has; -ENOENT for DEL
 * or REPLACE of one it has not), deliver it to every registered callback
 * (rolling back on failure, see above), then update the block (which keeps
 * copies of the rules).  O(k log n) plus one move of the rules after the
 * first changed position, for k ops on n rules.  On any
 * error the block and every callback are as before.  n == 0 is a no-op.
 */
int xtcam_block_rules_apply(struct xtcam_block *b,
			    const struct xtcam_rule_op *ops, size_t n,
			    char *errmsg, size_t errmsg_len);
/*
 * The same, for a caller that read the block's rule source (see
 * xtcam_block_source_set) for every handle of the batch while nothing
 * could change it: an ADD's handle is free there, a REPLACE's or DEL's
 * `old` is the rule it found, with the handle of the change (-EINVAL
 * without).  The core asks the source nothing.
 */
int xtcam_block_rules_apply_known(struct xtcam_block *b,
				  const struct xtcam_rule_op *ops, size_t n,
				  char *errmsg, size_t errmsg_len);

/* One-op wrappers. */
int xtcam_block_rule_add(struct xtcam_block *b, const struct xtcam_rule *r,
			 char *errmsg, size_t errmsg_len);
int xtcam_block_rule_replace(struct xtcam_block *b,
			     const struct xtcam_rule *r,
			     char *errmsg, size_t errmsg_len);
int xtcam_block_rule_del(struct xtcam_block *b, __u32 handle,
			 char *errmsg, size_t errmsg_len);

/*
 * Make the block's rules exactly `rules` (n of them, n == 0 flushes) in one
 * batch: DEL for handles only in the block, REPLACE for handles in both
 * whose rule differs, ADD for handles only in `rules`, each group in
 * (prio, handle) order; unchanged rules are not sent.  -EINVAL for a handle
 * twice in `rules`, else as xtcam_block_rules_apply().
 */
int xtcam_block_rules_set(struct xtcam_block *b,
			  const struct xtcam_rule *rules, size_t n,
			  char *errmsg, size_t errmsg_len);

/*
 * Add rules without calling any callback: rebuilding a block from the
 * loader's registry after a restart.  ADD checks as above; -EBUSY when a
 * callback is registered (load the rules before restoring bindings).
 */
int xtcam_block_rules_load(struct xtcam_block *b,
			   const struct xtcam_rule *rules, size_t n,
			   char *errmsg, size_t errmsg_len);

/*
 * Keep the block's rules in `src` rather than in the core: for an empty
 * block without callbacks (-EBUSY otherwise, -EINVAL without find or
 * fetch).  The rules stay out of the core: a change (xtcam_block_rules_apply)
 * finds only the handles it names through src->find, is checked and
 * delivered to every callback as usual, and is not stored: the source's
 * owner stores it once the call has returned 0 (the callbacks see the
 * caller's rules, not copies).  What needs every rule
 * fetches them first, once (O(rules of the block)): a bind's replay, an
 * unbind's removal replay, xtcam_block_rules_set() and
 * xtcam_block_rules_load(); from then on the block holds them as any
 * other.  Until then xtcam_block_rule_count/at/find see none.
 */
int xtcam_block_source_set(struct xtcam_block *b,
			   const struct xtcam_rule_source *src);
/* Bring the rules of a block with a source into the core (a no-op when
 * they are there). */
int xtcam_block_rules_fetch(struct xtcam_block *b, char *errmsg, size_t errmsg_len);

/* Whether two rules are the same (every field; strings up to their NUL). */
bool xtcam_rule_equal(const struct xtcam_rule *a, const struct xtcam_rule *b);

/* --- bindings ---------------------------------------------------------- */

/* xtcam_bind() flags */
#define XTCAM_BIND_RESTORE  (1u << 0)   /* rebuild: f->restore, no replay */
/* xtcam_unbind() flags */
#define XTCAM_UNBIND_KEEP   (1u << 0)   /* let go: f->keep, no removal */

/*
 * Bind `block` to `dev` through `be` (see the top of this file).  -EBUSY
 * when the device has a binding already, to any block and through any
 * backend (the first binding is left as it was); -EINVAL for objects of
 * another core, a bad binder type or unknown flags; else what the
 * backend's setup() returns (-EOPNOTSUPP for egress on an ingress-only
 * backend, -EBUSY, ...) or what a callback returns on the rule replay.  A
 * bind that fails leaves the block, the device and the backend's driver
 * list as they were: on a failed replay the core sends the inverse to the
 * callbacks already replayed, takes every callback it was handed off the
 * block and off the driver list, and frees it (so release() runs for
 * those, and only those).
 *
 * XTCAM_BIND_RESTORE: the binding exists in the kernel from an earlier
 * process; the backend gets f->restore and re-attaches, the core registers
 * its callbacks without replaying rules.
 */
int xtcam_bind(struct xtcam_core *core, struct xtcam_block *block,
	       struct xtcam_dev *dev, struct xtcam_backend *be,
	       enum flow_block_binder_type binder_type, unsigned int flags,
	       char *errmsg, size_t errmsg_len);

/*
 * Unbind `dev`: -ENOENT when it has no binding, -EINVAL for a device of
 * another core.  Otherwise the binding is gone when this returns, whatever
 * the backend says (as in the kernel, unbind cannot be refused): what the
 * backend queued is replayed removal, unregistered and freed, and when the
 * block's last binding goes any callback the backend left registered is
 * too.  Returns the error setup() returned, if any, so it can be reported.
 *
 * XTCAM_UNBIND_KEEP: f->keep, and no removal is replayed.
 */
int xtcam_unbind(struct xtcam_core *core, struct xtcam_dev *dev,
		 unsigned int flags, char *errmsg, size_t errmsg_len);

#endif
