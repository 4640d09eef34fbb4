/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libxtcam for controllers: programs that change a block's rules at a high
 * rate (a DDoS mitigation, an IDS that blocks sources).  docs/api.md has
 * the whole story; in short:
 *
 *   struct xtcam_ctl *c;
 *   char err[XTCAM_CTL_ERR_MAX];
 *   __u32 h;
 *
 *   if (xtcam_ctl_open(&c, NULL, err, sizeof(err)))        // once
 *           errx(1, "%s", err);
 *   if (xtcam_ctl_rule_add(c, "edge", "prio 10 src_ip 192.0.2.1 action drop", &h))
 *           warnx("%s", xtcam_ctl_strerror(c));             // "block edge: ..."
 *   xtcam_ctl_rule_del(c, "edge", h);
 *   xtcam_ctl_close(c);
 *
 * Each change, or each batch of changes, is one commit: all of it or (on
 * an error, or the process killed on the way) none of it, as a `rule add`
 * of the CLI.  The context holds the instance's lock only during a commit
 * (or a read of counters), never between calls: the CLI and other
 * programs change the same instance in between.  Each commit first reads
 * the registry's generation (a counter every writer bumps); when somebody
 * else changed anything since this context's last commit, the context
 * reads the state again before it changes anything: a change is never
 * made to a view of the blocks older than the last commit of anybody.
 *
 * Rules are the words of `xtcam rule add BLOCK ...` after the block name
 * (docs/rule-syntax.md), or a struct xtcam_rule (xtcam/rule.h; a text
 * becomes one with xtcam_ctl_rule_parse()).  A rule without a handle gets
 * the next free one of its block (one above the highest), written to
 * *handle.
 *
 * Errors: every call returns 0 or a negative errno; the message of the
 * last failed call of a context (naming the block, the handle or the rule
 * and the reason) is xtcam_ctl_strerror().  A context is for one thread
 * at a time.  Link with -lxtcam $(pkg-config --libs libbpf libxdp json-c)
 * -lelf -lz; the calls need root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN).
 */
#ifndef XTCAM_XTCAM_H
#define XTCAM_XTCAM_H

#include <stddef.h>
#include <linux/types.h>
#include "rule.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xtcam_ctl;
struct xtcam_ctl_batch;

/* room for any message of the API */
#define XTCAM_CTL_ERR_MAX 1024
/* The most changes one batch holds: the one more is refused with -E2BIG
 * (and so is the commit of that batch, which then changes nothing). */
#define XTCAM_CTL_BATCH_MAX 65536

/* Open a context on an instance: `instance` (which becomes the process's
 * XTCAM_INSTANCE: one instance per process), or NULL for XTCAM_INSTANCE
 * or the default.  Reads the registry (and repairs what a crash left half
 * done, as every xtcam command does); the instance need not have a block
 * yet.  err (errlen >= XTCAM_CTL_ERR_MAX is enough) says why it failed. */
int xtcam_ctl_open(struct xtcam_ctl **out, const char *instance, char *err, size_t errlen);
/* Lets go of the context; the instance's blocks and rules stay. */
void xtcam_ctl_close(struct xtcam_ctl *c);
/* The message of the context's last failed call ("" if none failed). */
const char *xtcam_ctl_strerror(const struct xtcam_ctl *c);
/* How long a commit waits for the lock another process holds, in ms
 * (< 0: for ever); the default is XTCAM_LOCK_WAIT_DEFAULT seconds.  Then
 * the call fails with -ETIMEDOUT, and the message says who holds it. */
void xtcam_ctl_set_lock_wait(struct xtcam_ctl *c, int ms);
/* The registry's generation as this context last saw it (after its last
 * commit or read): it grows with every commit of anybody. */
__u64 xtcam_ctl_generation(const struct xtcam_ctl *c);

/* A rule's text (the words of `rule add BLOCK` after the block name) as
 * the block reads it (its raw fields), into *r. */
int xtcam_ctl_rule_parse(struct xtcam_ctl *c, const char *block, const char *text,
			 struct xtcam_rule *r);

/* One change, committed.  add: a rule with a handle in use is refused
 * (-EEXIST); without a handle it gets one, written to *handle (which may
 * be NULL).  replace: the rule of the same handle becomes this one
 * (-ENOENT if there is none); its counters start again, as with
 * `rule replace`, unless the rule is the same.  del: -ENOENT if there is
 * no such rule. */
int xtcam_ctl_rule_add(struct xtcam_ctl *c, const char *block, const char *text,
		       __u32 *handle);
int xtcam_ctl_rule_add_r(struct xtcam_ctl *c, const char *block, const struct xtcam_rule *r,
			 __u32 *handle);
int xtcam_ctl_rule_replace(struct xtcam_ctl *c, const char *block, const char *text);
int xtcam_ctl_rule_replace_r(struct xtcam_ctl *c, const char *block,
			     const struct xtcam_rule *r);
int xtcam_ctl_rule_del(struct xtcam_ctl *c, const char *block, __u32 handle);

/* A rule's counters, summed over the CPUs and the devices of its block
 * (0 on an unbound block); -ENOENT for no such rule. */
struct xtcam_ctl_counters {
	__u64 packets;
	__u64 bytes;
};
int xtcam_ctl_counters(struct xtcam_ctl *c, const char *block, __u32 handle,
		       struct xtcam_ctl_counters *out);

/* A batch of changes to one block, committed at once: each call below
 * adds one change (checked then as far as it can be without the block's
 * rules: its text; -E2BIG past XTCAM_CTL_BATCH_MAX); xtcam_ctl_batch_commit()
 * checks them all against the block as it is then and makes all of them
 * or none.  A handle may be changed once in a batch.  An add's *handle is
 * written by the commit (the pointer must stay valid until then).  NULL
 * when out of memory. */
struct xtcam_ctl_batch *xtcam_ctl_batch_begin(struct xtcam_ctl *c, const char *block);
int xtcam_ctl_batch_add(struct xtcam_ctl_batch *b, const char *text, __u32 *handle);
int xtcam_ctl_batch_add_r(struct xtcam_ctl_batch *b, const struct xtcam_rule *r,
			  __u32 *handle);
int xtcam_ctl_batch_replace(struct xtcam_ctl_batch *b, const char *text);
int xtcam_ctl_batch_replace_r(struct xtcam_ctl_batch *b, const struct xtcam_rule *r);
int xtcam_ctl_batch_del(struct xtcam_ctl_batch *b, __u32 handle);
/* changes in the batch */
size_t xtcam_ctl_batch_size(const struct xtcam_ctl_batch *b);
/* One commit of every change of the batch, or none (the error says which
 * change, by its position from 1, and why).  Committed or not, the batch
 * is empty afterwards, for the next changes. */
int xtcam_ctl_batch_commit(struct xtcam_ctl_batch *b);
/* Forget the batch (its changes not committed are dropped). */
void xtcam_ctl_batch_free(struct xtcam_ctl_batch *b);

#ifdef __cplusplus
}
#endif

#endif
