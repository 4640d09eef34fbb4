/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The registry in bpffs (see xtcam/state.h), and the lock that serialises
 * xtcam invocations.  Internal to libxtcam.
 *
 * Rules are written with two generations per block: a change is staged in
 * the inactive generation (the block marked dirty), then committed by a
 * flip, or aborted.  An invocation that finds a dirty block (a crash in
 * between) makes the inactive generation a copy of the active one, and the
 * loader brings the data paths back to the active one.  The rank index
 * (ranks) lists each generation of a block in (prio, handle) order; its
 * keys always cover the rules of their generation.
 */
#ifndef XTCAM_STATE_INTERNAL_H
#define XTCAM_STATE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "xtcam/state.h"
#include "xtcam/rule.h"
#include "xtcam/core.h"


/* The pin an unfinished restore leaves beside the registry's (restore.c);
 * ':' is in no block name, so it names no block's folder. */
#define XTCAM_RESTORE_MARKER "restore:pending"

struct xtcam_state {
	char root[256];         /* .../xtcam in a bpffs */
	int fd_blocks, fd_bindings;
	int fd_rules[2];         /* one map per generation (rules0, rules1) */
	int fd_ranks;            /* both generations' rank index (ranks) */
	int fd_gen;              /* the registry's generation (generation) */
	int lock_fd;
	int pin_fd;              /* the lock file again: the generations' pins */
	char why[640];           /* why the last hold of a generation gave up */
	bool gen_bumped;         /* by this holder of the lock */
	char lock_path[96];
	bool ro;                 /* opened by xtcam_state_open_ro() */
	/* a reader: the blocks a restore under way (or cut short) is making,
	 * not committed, so read as not there (xtcam_state_restoring) */
	char (*hidden)[XTCAM_STATE_NAME];
	size_t nhidden;
};

/* xtcam_block_rec.dirty of a block being deleted: its record is the first
 * thing a `block del` changes (seq raised, marked), so a reader without
 * the lock takes it as gone from then on; a writer that finds it so (a
 * delete cut short) finishes the delete. */
#define XTCAM_BLOCK_DYING 2
/* xtcam_block_rec.dirty of a block whose change is committed, data paths
 * included, but whose other generation is not brought up to date yet: a
 * reader still read it when the writer gave up waiting for it.  The next
 * writer copies the active generation there (registry only). */
#define XTCAM_BLOCK_BEHIND 3

/* Check XTCAM_INSTANCE, take the lock (see xtcam_set_lock_wait), find (or
 * mount) bpffs, open the registry, or create it when missing and `create`
 * is set (refused in a folder that holds pins xtcam did not make).  The
 * folder must be a directory on bpffs, not a symbolic link.  Missing and not created, it reads as
 * empty (no blocks, no bindings; every fd -1) and must not be written.
 * Refuses, with a message, to start from an empty registry when the
 * host's bpffs is not visible (inside `ip netns exec`). */
int xtcam_state_open(struct xtcam_state **out, bool create, char *err, size_t errlen);
/* The same without the lock, and without writing anything: the maps are
 * opened read-only (BPF_F_RDONLY), nothing is created or repaired.  For
 * readers of committed state: a block record is read until two copies in
 * a row are the same (a record replaced while it was copied may be reused
 * by the next update), a block marked XTCAM_BLOCK_DYING reads as gone, and
 * xtcam_state_block_moved() tells whether a walk of a block's rules saw
 * one committed state. */
int xtcam_state_open_ro(struct xtcam_state **out, char *err, size_t errlen);
void xtcam_state_close(struct xtcam_state *st);
/* let go of the lock early (the maps stay open, for reading) */
void xtcam_state_unlock(struct xtcam_state *st);
/* who holds the lock, written into the lock file again (by a process
 * that inherited it) */
void xtcam_state_note_holder(struct xtcam_state *st);
/* A process forked to outlive its command (block del's sweep, a big
 * load's finisher) leaves the terminal's session, closes every file from
 * 3 on that keep(fd, arg) does not want, and points its standard streams
 * at /dev/null: it holds none of the caller's pipes or sockets. */
void xtcam_outlive(bool (*keep)(int fd, void *arg), void *arg);
/* Take the lock again after xtcam_state_unlock(), waiting as
 * xtcam_state_open does; 0 when it is held already. */
int xtcam_state_lock(struct xtcam_state *st, char *err, size_t errlen);
/* Whether another process waits for the lock this one holds (it holds
 * the turnstile). */
bool xtcam_state_lock_wanted(struct xtcam_state *st);
/* The lock kept for another commit, as if let go and taken again: that
 * commit bumps the generation too. */
void xtcam_state_relock(struct xtcam_state *st);
/*
 * The registry's generation: a counter in the registry (pin "generation")
 * that every holder of the lock bumps before its first write to the
 * registry (blocks, rules, bindings, a flush), so that a process which
 * let go of the lock can tell, once it holds it again, whether anybody
 * changed anything meanwhile: the same number, nothing changed.  A flush
 * bumps it before it removes the pin, so that one who holds the old map
 * sees a change too.  *gen is 0 for a registry that is not there;
 * -ENOENT when there is no generation to read (no registry when opened).
 */
int xtcam_state_gen(struct xtcam_state *st, __u64 *gen);
/* The same, for one who kept st while it did not hold the lock: -ESTALE
 * when the registry it has open is no longer the one pinned (flushed and
 * perhaps made again), -ENOENT when it has none. */
int xtcam_state_gen_current(struct xtcam_state *st, __u64 *gen);
/* the directory where a block's data path maps are pinned */
int xtcam_state_block_dir(const struct xtcam_state *st, const char *block,
			  const char *sub, char *buf, size_t len);

int xtcam_state_blocks(struct xtcam_state *st, struct xtcam_block_rec **out, size_t *n);
int xtcam_state_block_get(struct xtcam_state *st, const char *name,
			  struct xtcam_block_rec *rec);
int xtcam_state_block_put(struct xtcam_state *st, const struct xtcam_block_rec *rec);
/* A reader: read again which blocks a restore under way (or cut short)
 * is making (the restore marker, see restore.c); from then on they read
 * as not there, and their bindings are the caller's to leave out
 * (xtcam_state_hidden).  0 or -errno. */
int xtcam_state_restoring(struct xtcam_state *st);
bool xtcam_state_hidden(const struct xtcam_state *st, const char *block);
/* After reading rules of the committed state `rec` (read before them):
 * 0 if that state is still the block's committed one, so that what was
 * read is of it (a generation is written only after a commit has made
 * the other one active, or after the block was marked dying); -EAGAIN if
 * a writer committed meanwhile (read again), -ENOENT if the block is
 * gone, -errno.  Each call reads the block record. */
int xtcam_state_block_moved(struct xtcam_state *st, const struct xtcam_block_rec *rec);
/*
 * A reader's pin of a block's active generation: a shared lock (OFD) on
 * a byte of the instance's lock file that a writer takes exclusive before
 * it writes into that generation, so the generation stays as committed
 * until the pin is let go.  *rec is the block's record as of the pin.  0;
 * -EAGAIN when a writer holds the generation or it moved meanwhile (try
 * again: nothing is held); -ENOENT; -errno.  A reader never waits here.
 */
int xtcam_state_block_pin(struct xtcam_state *st, const char *name,
			  struct xtcam_block_rec *rec);
void xtcam_state_block_unpin(struct xtcam_state *st, const struct xtcam_block_rec *rec);
/* While pinned: 0 when the record is as a pin allows (the same state, or
 * a commit whose writer waits for the pin to copy into the generation
 * read, or the block deleted), -EUCLEAN when the generation read was
 * written under the pin (a bug), -errno. */
int xtcam_state_block_pin_check(struct xtcam_state *st, const struct xtcam_block_rec *rec);
int xtcam_state_block_del(struct xtcam_state *st, const struct xtcam_block_rec *rec);
__u32 xtcam_state_next_block_id(struct xtcam_state *st);

/* the rules of a block's active generation, in (prio, handle) order
 * (`sorted` is kept for the callers: they always are) */
int xtcam_state_rules(struct xtcam_state *st, const struct xtcam_block_rec *b,
		      bool sorted, struct xtcam_rule **out, size_t *n);
/* A new block's markers in the rank index (before its record is put). */
int xtcam_state_index_init(struct xtcam_state *st, __u32 id);
/* The rules of the block's active generation in (prio, handle) order,
 * one at a time through fn (which stops the walk by returning non-zero,
 * returned as is); O(rules of the block), memory O(1).  Safe without the
 * lock: each rule is a whole record of some committed state (a rule
 * changed or removed meanwhile is shown as before, as after, or, removed,
 * not at all). */
typedef int (*xtcam_state_rule_fn)(void *arg, const struct xtcam_rule *r);
int xtcam_state_rules_walk(struct xtcam_state *st, const struct xtcam_block_rec *b,
			   xtcam_state_rule_fn fn, void *arg);
/* Every block's rules of generation gen, keys beside, in the map's order:
 * for a caller with the lock that compares the rules of large blocks at
 * once (apply), in a few system calls a batch.  Generation rgen of a block
 * is its committed rules.  O(the rules of every block).  -EINVAL or
 * -EOPNOTSUPP from a kernel that cannot read the map in batches. */
int xtcam_state_rules_dump(struct xtcam_state *st, __u32 gen, struct xtcam_rule_key **keys,
			   struct xtcam_rule **rules, size_t *n);
/* one rule of the block's active generation: 0, -ENOENT, -errno */
int xtcam_state_rule_get(struct xtcam_state *st, const struct xtcam_block_rec *b,
			 __u32 handle, struct xtcam_rule *out);
int xtcam_state_rules_stage(struct xtcam_state *st, struct xtcam_block_rec *b,
			    const struct xtcam_rule_op *ops, size_t n);
/* The writes of xtcam_state_rules_stage(st, b, ops, n) alone, for a record
 * that xtcam_state_rules_stage(st, b, ops, 0) marked: they touch nothing
 * but the inactive generation, and so may run in a thread of their own
 * beside work that does not use st (but for xtcam_state_rules_help, which
 * reads only its maps' descriptors too).  They go chunk by chunk, each chunk
 * taken from ch (zeroed by the caller, then xtcam_chunks_init), so that
 * another thread may take a share of them (xtcam_state_rules_help); the
 * write returns once every chunk taken is written. */
struct xtcam_chunks {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next;            /* the first op no thread has taken */
	int active;             /* chunks being written */
	int err;                /* the first error: no chunk is taken after it */
	bool held;              /* the writer holds the generation: helpers
				 * may take chunks */
};
void xtcam_chunks_init(struct xtcam_chunks *ch);
void xtcam_chunks_destroy(struct xtcam_chunks *ch);
/* no more chunks taken: the write ends with -ECANCELED */
void xtcam_chunks_cancel(struct xtcam_chunks *ch);
int xtcam_state_rules_write(struct xtcam_state *st, const struct xtcam_block_rec *b,
			    const struct xtcam_rule_op *ops, size_t n, struct xtcam_chunks *ch);
/* Another thread's share of a xtcam_state_rules_write() under way: the
 * chunks nobody has taken yet, none before the writer holds the
 * generation (its readers done).  Its error, or 0. */
int xtcam_state_rules_help(struct xtcam_state *st, const struct xtcam_block_rec *b,
			   const struct xtcam_rule_op *ops, size_t n, struct xtcam_chunks *ch);
int xtcam_state_rules_commit(struct xtcam_state *st, struct xtcam_block_rec *b,
			     const struct xtcam_rule_op *ops, size_t n);
/* xtcam_state_rules_commit in two: the flip (the commit point), then the
 * copy into the other generation, which touches nothing but that
 * generation and, last, the block's record (clean, or behind), and so may
 * run in a thread beside work that reads the active generation and writes
 * nothing of st until it is joined */
int xtcam_state_rules_flip(struct xtcam_state *st, struct xtcam_block_rec *b,
			   const struct xtcam_rule_op *ops, size_t n);
int xtcam_state_rules_copy(struct xtcam_state *st, struct xtcam_block_rec *b,
			   const struct xtcam_rule_op *ops, size_t n);
int xtcam_state_rules_abort(struct xtcam_state *st, struct xtcam_block_rec *b,
			    const struct xtcam_rule_op *ops, size_t n);
/* after a crash: inactive generation := active, dirty cleared */
int xtcam_state_rules_recover(struct xtcam_state *st, struct xtcam_block_rec *b);

int xtcam_state_bindings(struct xtcam_state *st, struct xtcam_bind_key **keys,
			 struct xtcam_bind_rec **recs, size_t *n);
int xtcam_state_binding_put(struct xtcam_state *st, const struct xtcam_bind_key *k,
			    const struct xtcam_bind_rec *rec);
int xtcam_state_binding_del(struct xtcam_state *st, const struct xtcam_bind_key *k);

/* remove the registry's pins and the folder when nothing else is left
 * in it (xtcam flush, after the blocks' own pins are gone); a folder
 * without a registry (somebody else's) is left as it is */
int xtcam_state_destroy(struct xtcam_state *st);

#endif
