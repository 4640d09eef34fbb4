/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The loader: what the xtcam CLI does, as a library.  Each call works on
 * the state in bpffs under a lock and answers with a json-c object (the
 * CLI prints it as text or JSON).  Errors return -errno with a message
 * that names the object and the reason.
 */
#ifndef XTCAM_LOADER_H
#define XTCAM_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>
#include "rule.h"

struct xtcam_ctx;

#define XTCAM_MSG_MAX 1024

enum xtcam_open_flags {
	XTCAM_OPEN_CREATE = 1 << 0,     /* make the registry if missing;
	                                 * without it a missing registry
	                                 * reads as no blocks and is not
	                                 * made (for commands that make no
	                                 * block) */
	XTCAM_OPEN_READ   = 1 << 1,     /* a reader: no lock, no core, no
					 * repair, no write (maps opened
					 * read-only); for the show
					 * commands and save, which read
					 * one committed state */
};

/*
 * Progress of the commands that handle many rules (rule load and its
 * replace, restore, apply): fn is called now and then, from the thread
 * that runs the command, with the phase ("reading", "registry", "data
 * path", ...), the rules of it done and their total (0: not known).  A
 * phase may start again at 0 for another block.  NULL: no reports.
 */
typedef void (*xtcam_progress_fn)(void *arg, const char *phase, size_t done, size_t total);
void xtcam_progress_set(xtcam_progress_fn fn, void *arg);

/* Lock, open the registry and rebuild the flow_block core: the blocks
 * named in `blocks` (NULL-terminated) and their bindings only, or every
 * block and binding when `blocks` is NULL or names "*".  No block's rules
 * are read: they stay in the registry (a source of the core, see
 * xtcam_block_source_set()) until something needs them all.  Repairs what
 * a crash left half done (a rule change, a bind, a restore that did not
 * commit). */
int xtcam_open(struct xtcam_ctx **out, unsigned int flags, const char *const *blocks,
	       char *err, size_t errlen);
/* How long xtcam_open waits for the lock another invocation holds: in ms,
 * 0 not at all, < 0 for ever; the default is XTCAM_LOCK_WAIT_DEFAULT
 * seconds.  After a second of waiting it says on stderr for whom (the
 * holder's pid and command line); when the time is up xtcam_open fails
 * with -ETIMEDOUT, and only then. */
#define XTCAM_LOCK_WAIT_DEFAULT 30
void xtcam_set_lock_wait(int ms);
/* Let go of the lock before xtcam_close, for a command that only reads
 * from now on: other invocations need not wait for its output. */
void xtcam_unlock(struct xtcam_ctx *ctx);
/* Lets go of the kernel objects (they stay) and the lock. */
void xtcam_close(struct xtcam_ctx *ctx);
/* For a process that runs many commands (xtcam -batch): with on, the
 * context a command closes is kept (without the lock) and given to the
 * next xtcam_open() of the same flags and blocks, when nobody wrote to
 * the registry meanwhile; else that open reads the state as always.  Off
 * (or on again) closes the context kept: after a command that failed,
 * whose context may not be what the registry says. */
void xtcam_keep_contexts(bool on);

int xtcam_cmd_block_add(struct xtcam_ctx *c, const struct xtcam_block_spec *spec,
			char *err, size_t errlen);
int xtcam_cmd_block_del(struct xtcam_ctx *c, const char *name, char *err, size_t errlen);
/* name NULL: all blocks; *out is an array of block objects.  With
 * XTCAM_OPEN_READ: one committed state (read again while a writer commits
 * meanwhile, -EAGAIN with a message if one did during each read); -EAGAIN
 * with err "" when a block is bound to an offload device (its counters
 * are read with the lock: open without XTCAM_OPEN_READ and ask again). */
int xtcam_cmd_block_show(struct xtcam_ctx *c, const char *name, json_object **out,
			 char *err, size_t errlen);

struct xtcam_bind_req {
	const char *block;
	const char *dev;
	const char *netns;      /* NULL or "": this process's namespace */
	const char *mode;       /* auto, hw, native, generic */
	bool egress;
	bool force;
};
/* The words of `bind NAME ...` (argv[0] is NAME) or, with unbind, of
 * `unbind NAME ...`: dev IFNAME, netns NS, mode M, ingress|egress, force,
 * each at most once, keywords by unique prefix.  *r points into argv. */
int xtcam_bind_req_parse(int argc, char **argv, bool unbind, struct xtcam_bind_req *r,
			 char *err, size_t errlen);
/* *out: the binding (dev, netns, mode, refused, note) */
int xtcam_cmd_bind(struct xtcam_ctx *c, const struct xtcam_bind_req *r, json_object **out,
		   char *err, size_t errlen);
int xtcam_cmd_unbind(struct xtcam_ctx *c, const char *block, const char *dev,
		     const char *netns, char *err, size_t errlen);

enum xtcam_rule_verb {
	XTCAM_VERB_ADD,
	XTCAM_VERB_REPLACE,
	XTCAM_VERB_DEL,
};
/* add (handle 0: one above the highest handle held since the block was
 * last empty), replace, del (only r->handle) */
int xtcam_cmd_rule(struct xtcam_ctx *c, const char *block, enum xtcam_rule_verb v,
		   struct xtcam_rule *r, char *err, size_t errlen);
/* Changes to one block in one commit: v[i] on rules[i], each as
 * xtcam_cmd_rule() makes it (an add without a handle gets the next one,
 * written back into rules[i].handle; a del needs only the handle), all of
 * them or none.  A handle changed twice in one call is refused.  err names
 * the block and the change (by its position from 1). */
int xtcam_cmd_rule_batch(struct xtcam_ctx *c, const char *block, const enum xtcam_rule_verb *v,
			 struct xtcam_rule *rules, size_t n, char *err, size_t errlen);
/* add these rules (replace: swap the whole set; check: change nothing) */
int xtcam_cmd_rule_load(struct xtcam_ctx *c, const char *block, struct xtcam_rule *rules,
			size_t n, bool replace, bool check, char *err, size_t errlen);
int xtcam_cmd_rule_flush(struct xtcam_ctx *c, const char *block, char *err, size_t errlen);
/* *out: array of rule objects */
int xtcam_cmd_rule_show(struct xtcam_ctx *c, const char *block, json_object **out,
			char *err, size_t errlen);
/* The same, one rule object at a time through fn, in (prio, handle) order,
 * in memory that does not grow with the block; fn must not keep the
 * object, and stops the walk by returning non-zero (returned as is).
 * The rules are those of one committed state, whether or not the lock is
 * held: the generation read is pinned for the walk (a writer that
 * follows waits for it to end, see docs/state.md); fn(arg, NULL) says
 * that what fn got is void, before anything else only (the pin is tried
 * again, at most 64 times, then -EAGAIN with a message); -EAGAIN with
 * err "" when the block is bound to an offload device (its counters are
 * read with the lock: open without XTCAM_OPEN_READ and ask again).
 * -EUCLEAN (a bug) when the generation was written under the pin. */
int xtcam_cmd_rule_show_each(struct xtcam_ctx *c, const char *block,
			     int (*fn)(void *arg, json_object *rule), void *arg,
			     char *err, size_t errlen);
/* One rule of a listing, without JSON: the rule, its block's settings
 * (xtcam_rule_match_format), its counters summed over the block's
 * bindings, last_used seconds ago (< 0: never). */
struct xtcam_shown {
	const struct xtcam_rule *rule;
	const struct xtcam_block_spec *spec;
	__u64 packets, bytes;
	double last_used;
};
/* A rule of a listing as `xtcam rule show` prints it, into buf
 * (NUL-terminated): its two lines of text; its JSON object (the one
 * xtcam_cmd_rule_show_each gives) as json-c writes it with flags
 * (JSON_C_TO_STRING_*), written without json-c where that is plain.
 * Return the length, -ENOSPC, -ENOMEM, -EINVAL. */
int xtcam_shown_text(const struct xtcam_shown *s, char *buf, size_t len);
int xtcam_shown_json(const struct xtcam_shown *s, int flags, char *buf, size_t len);
/* That object (json_object_put() it); NULL when out of memory. */
json_object *xtcam_shown_object(const struct xtcam_shown *s);
/* xtcam_cmd_rule_show_each() with the rules as they are (cheaper: no
 * objects are made), fn(arg, NULL) as there. */
int xtcam_cmd_rule_show_raw(struct xtcam_ctx *c, const char *block,
			    int (*fn)(void *arg, const struct xtcam_shown *rule), void *arg,
			    char *err, size_t errlen);
/* *out: an array of the one rule with this handle (as xtcam_cmd_rule_show
 * has it); -ENOENT when there is none.  XTCAM_OPEN_READ: as
 * xtcam_cmd_rule_show_each. */
int xtcam_cmd_rule_show_handle(struct xtcam_ctx *c, const char *block, __u32 handle,
			       json_object **out, char *err, size_t errlen);
int xtcam_cmd_counters_reset(struct xtcam_ctx *c, const char *block, char *err,
			     size_t errlen);
/* The first line of what save writes: "# xtcam save format 2, DATE".
 * Format 2 writes numbers as tc-flower reads them (`ip_proto 0x2f`); a
 * file without the line is of an older xtcam, whose numbers are decimal. */
#define XTCAM_SAVE_FORMAT_LINE "# xtcam save format "
#define XTCAM_SAVE_FORMAT 2
/* the whole configuration as text that `restore` reads back */
int xtcam_cmd_save(struct xtcam_ctx *c, char **text, char *err, size_t errlen);
/* A file of `xtcam save`, read and checked whole (every line as strictly
 * as the command it repeats; errors name the file, given as `name`, and
 * the line).  Reading takes no lock. */
struct xtcam_restore;
int xtcam_restore_read(FILE *f, const char *name, struct xtcam_restore **out, char *err,
		       size_t errlen);
void xtcam_restore_free(struct xtcam_restore *rs);
/* true when the file had no format line: its numbers were read as decimal,
 * as older versions of xtcam wrote them */
bool xtcam_restore_is_legacy(const struct xtcam_restore *rs);
/* Make its blocks, rules and bindings: all, or (on error, or killed on the
 * way: see xtcam_open) none.  -EEXIST if one of its blocks exists. */
int xtcam_cmd_restore(struct xtcam_ctx *c, const struct xtcam_restore *rs, char *err,
		      size_t errlen);
/* The blocks of a restore file, in its order (for xtcam_open()). */
size_t xtcam_restore_nblocks(const struct xtcam_restore *rs);
const char *xtcam_restore_block(const struct xtcam_restore *rs, size_t i);

/* What xtcam_cmd_apply() does and whom it tells. */
struct xtcam_apply_opts {
	bool check;             /* change nothing, only say what would change */
	bool prune;             /* also remove the blocks the file does not name */
	const char *bindings_for; /* non-NULL: only the bindings of the file on
				   * this device that are not there yet; no rule,
				   * block or other binding changes */
	/* each change as the command that makes it ("rule add edge prio 10
	 * handle 42 ...", "unbind edge dev eth1"), before it is made */
	void (*change)(void *arg, const char *line);
	/* a binding of the file whose device or namespace is not there:
	 * why names the block, the device and (if any) the namespace */
	void (*missing)(void *arg, const char *why);
	void *arg;
};
struct xtcam_apply_result {
	size_t changes;         /* made (or, with check, to make) */
	size_t missing;         /* bindings left out: no such device or netns */
};
/* Make the blocks the file names equal to it: blocks, their rules and
 * bindings added, changed or removed, each block's rules in one atomic
 * change; a rule or binding the file has as it is is not touched (its
 * counters and its XDP program stay).  Every block's rule changes are
 * checked (capacity, actions) before the first change.  A binding whose
 * device or namespace is not there does not stop the rest: it is reported
 * (opts->missing) and counted.  Returns 0, or the first error of a change
 * (the other changes are still made). */
int xtcam_cmd_apply(struct xtcam_ctx *c, const struct xtcam_restore *rs,
		    const struct xtcam_apply_opts *opts, struct xtcam_apply_result *res,
		    char *err, size_t errlen);
/* remove every block, binding and pin xtcam made, and nothing else: a
 * folder without an xtcam registry is left as it is */
/* The same into out, in memory that does not grow with the rules: one
 * committed state, read again while a writer changed the registry during
 * the read (spooled to a temporary file first).  With XTCAM_OPEN_READ the
 * blocks of a restore under way or cut short are left out (not committed);
 * -EAGAIN when a writer committed during each of the reads. */
int xtcam_cmd_save_file(struct xtcam_ctx *c, FILE *out, char *err, size_t errlen);
int xtcam_cmd_flush(struct xtcam_ctx *c, char *err, size_t errlen);

/* the block spec and rules of a block (for the CLI's rule load checks) */
int xtcam_block_spec_get(struct xtcam_ctx *c, const char *block,
			 struct xtcam_block_spec *spec);

#endif
