// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The library API for controllers (include/xtcam/xtcam.h): a loader
 * context kept between calls, locked only while a call commits.
 *
 * Between calls another process may change anything: a rule of the block,
 * its bindings, the block itself (deleted and made again), the whole
 * instance (flushed).  What the context keeps in memory (the core's
 * blocks and bindings, each data path's configuration as last written)
 * would then be stale.  So each call, once it holds the lock, compares
 * the registry's generation with the one it left after its own last
 * commit: the same, nobody wrote since, and the context is current; else
 * (or with no registry to read it from) the context is read again from
 * the registry, as a CLI command reads it, before anything changes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/xtcam.h"
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "driver.h"
#include "errmsg.h"
#include "trace.h"

struct xtcam_ctl {
	struct xtcam_ctx *ctx;  /* NULL: read it again at the next call */
	__u64 gen;              /* the registry's generation when last let go */
	bool gen_known;         /* false: no registry to read it from */
	char err[XTCAM_CTL_ERR_MAX];
	/* A batch's commit returns at its registry's commit, its data
	 * paths' grace periods and catch-ups and its registry's copy into
	 * the other generation still under way in threads (busy of them);
	 * the data paths and the registry are dirty until they are done, so
	 * the lock is let go by the last of them (handed), unless the next
	 * call takes it back first: a call that finds nobody waiting for
	 * the lock keeps it and goes on (the next batch reads and places
	 * its changes meanwhile, and waits for them before it writes);
	 * else it waits for them to let go, and queues behind the waiter. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int busy;
	bool handed;
};

/* A data path's catch-up begins (1) or ends (-1). */
static void ctl_notify(void *arg, int delta)
{
	struct xtcam_ctl *c = arg;

	pthread_mutex_lock(&c->mu);
	c->busy += delta;
	if (!c->busy && c->handed) {
		xtcam_unlock(c->ctx);
		c->handed = false;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
}

/* Let go of the lock: now, or when the last catch-up is done. */
static void ctl_let_go(struct xtcam_ctl *c)
{
	pthread_mutex_lock(&c->mu);
	if (c->busy)
		c->handed = true;
	else
		xtcam_unlock(c->ctx);
	pthread_mutex_unlock(&c->mu);
}

/* The lock handed to the catch-ups taken back if nobody waits for it
 * (true: it is held), else waited for until they let go of it. */
static bool ctl_take_back(struct xtcam_ctl *c)
{
	bool held = false;

	pthread_mutex_lock(&c->mu);
	if (c->handed && !xtcam_state_lock_wanted(c->ctx->st)) {
		c->handed = false;
		held = true;
	}
	while (c->handed)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	return held;
}

struct xtcam_ctl_batch {
	struct xtcam_ctl *c;
	char *block;
	enum xtcam_rule_verb *verbs;
	struct xtcam_rule *rules;
	__u32 **handles;        /* an add's *handle, or NULL */
	size_t n, cap;
	bool overflow;          /* a change past the maximum was refused */
	/* the block's settings the batch's texts are read with: read at
	 * its first text, kept until it commits */
	struct xtcam_block_spec spec;
	bool have_spec;
};

/* Hold the lock with a current context. */
static int ctl_lock(struct xtcam_ctl *c)
{
	__u64 g;
	int e;

	c->err[0] = 0;
	if (c->ctx && ctl_take_back(c)) {
		/* held since this context's last commit: nobody else wrote */
		xtcam_state_relock(c->ctx->st);
		xtcam_trace("ctl lock");
		return 0;
	}
	if (c->ctx) {
		e = xtcam_state_lock(c->ctx->st, c->err, sizeof(c->err));
		xtcam_trace("ctl lock");
		if (e)
			return e;
		if (c->gen_known && !xtcam_state_gen_current(c->ctx->st, &g) && g == c->gen)
			return 0;
		/* somebody else committed: read it all again (closing lets
		 * go of the lock, opening takes it) */
		xtcam_close(c->ctx);
		c->ctx = NULL;
	}
	e = xtcam_open(&c->ctx, 0, NULL, c->err, sizeof(c->err));
	if (e) {
		c->ctx = NULL;
		if (!c->err[0])
			xtcam_set_err(c->err, sizeof(c->err), "xtcam: %s", strerror(-e));
		return e;
	}
	/* what the open itself wrote (a repair) is in the view */
	c->gen_known = !xtcam_state_gen(c->ctx->st, &c->gen);
	xtcam_xdp_notify(c->ctx, ctl_notify, c);
	c->ctx->notify = ctl_notify;
	c->ctx->notify_arg = c;
	return 0;
}

/* Remember the generation this context leaves, and let go of the lock. */
static void ctl_unlock(struct xtcam_ctl *c)
{
	if (!c->ctx)
		return;
	c->gen_known = !xtcam_state_gen(c->ctx->st, &c->gen);
	ctl_let_go(c);
	xtcam_trace("ctl unlock");
}

/* A call's end: e, with a message that says at least what e is.  A call
 * that failed after it began to write (the generation moved: its change
 * was aborted) leaves a context that is read again at the next call. */
static int ctl_done(struct xtcam_ctl *c, int e)
{
	__u64 g;

	if (e && c->ctx)
		xtcam_xdp_settle(c->ctx);
	if (e && c->ctx && (xtcam_state_gen(c->ctx->st, &g) || g != c->gen)) {
		xtcam_close(c->ctx);    /* (lets go of the lock) */
		c->ctx = NULL;
		c->gen_known = false;
	}
	ctl_unlock(c);
	if (e && !c->err[0])
		xtcam_set_err(c->err, sizeof(c->err), "%s", strerror(-e));
	return e;
}

int xtcam_ctl_open(struct xtcam_ctl **out, const char *instance, char *err, size_t errlen)
{
	struct xtcam_ctl *c;
	int e;

	*out = NULL;
	if (instance && setenv("XTCAM_INSTANCE", instance, 1)) {
		e = -errno;
		xtcam_set_err(err, errlen, "instance %s: %s", instance, strerror(-e));
		return e;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		xtcam_set_err(err, errlen, "xtcam: out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	e = ctl_lock(c);
	if (e) {
		xtcam_set_err(err, errlen, "%s", c->err);
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return e;
	}
	ctl_unlock(c);
	*out = c;
	return 0;
}

void xtcam_ctl_close(struct xtcam_ctl *c)
{
	if (!c)
		return;
	if (c->ctx)
		ctl_take_back(c);
	xtcam_close(c->ctx);    /* (joins the catch-ups) */
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

const char *xtcam_ctl_strerror(const struct xtcam_ctl *c)
{
	return c ? c->err : "";
}

void xtcam_ctl_set_lock_wait(struct xtcam_ctl *c, int ms)
{
	(void)c;
	xtcam_set_lock_wait(ms);
}

__u64 xtcam_ctl_generation(const struct xtcam_ctl *c)
{
	return c->gen;
}

/* The text of a rule as `rule add BLOCK` reads it, against the block's
 * settings as the registry has them now (no lock needed: one record), or
 * as *cache has them when have (then read once into it). */
static int parse_with(struct xtcam_ctl *c, const char *block, const char *text,
		      struct xtcam_rule *r, struct xtcam_block_spec *cache, bool *have)
{
	struct xtcam_block_spec spec;
	char why[XTCAM_ERRMSG_MAX] = "";
	int e;

	c->err[0] = 0;
	if (!text) {
		xtcam_set_err(c->err, sizeof(c->err), "block %s: rule: no text", block);
		return -EINVAL;
	}
	if (have && *have) {
		spec = *cache;
		goto read;
	}
	if (!c->ctx) {
		e = ctl_lock(c);
		ctl_unlock(c);
		if (e)
			return e;
	}
	e = xtcam_block_spec_get(c->ctx, block, &spec);
	if (e == -ENOENT) {
		/* made since this context last looked (in a registry made
		 * again, say): look at the current state */
		e = ctl_lock(c);
		ctl_unlock(c);
		if (e)
			return e;
		e = xtcam_block_spec_get(c->ctx, block, &spec);
	}
	if (e) {
		xtcam_set_err(c->err, sizeof(c->err), "block %s: %s", block,
			      e == -ENOENT ? "no such block" : strerror(-e));
		return e;
	}
	if (have) {
		*cache = spec;
		*have = true;
	}
read:
	e = xtcam_rule_parse_line(text, r, &spec, why, sizeof(why));
	if (e == 1) {
		xtcam_set_err(c->err, sizeof(c->err), "block %s: rule \"%s\": no rule in it",
			      block, text);
		return -EINVAL;
	}
	if (e)
		xtcam_set_err(c->err, sizeof(c->err), "block %s: rule \"%s\": %s", block, text,
			      why[0] ? why : strerror(-e));
	return e;
}

static int parse(struct xtcam_ctl *c, const char *block, const char *text,
		 struct xtcam_rule *r)
{
	return parse_with(c, block, text, r, NULL, NULL);
}

int xtcam_ctl_rule_parse(struct xtcam_ctl *c, const char *block, const char *text,
			 struct xtcam_rule *r)
{
	return parse(c, block, text, r);
}

static int one(struct xtcam_ctl *c, const char *block, enum xtcam_rule_verb v,
	       const struct xtcam_rule *r, __u32 *handle)
{
	struct xtcam_rule copy = *r;
	int e = ctl_lock(c);

	if (e)
		return e;
	e = xtcam_cmd_rule(c->ctx, block, v, &copy, c->err, sizeof(c->err));
	if (!e && handle)
		*handle = copy.handle;
	return ctl_done(c, e);
}

int xtcam_ctl_rule_add_r(struct xtcam_ctl *c, const char *block, const struct xtcam_rule *r,
			 __u32 *handle)
{
	return one(c, block, XTCAM_VERB_ADD, r, handle);
}

int xtcam_ctl_rule_add(struct xtcam_ctl *c, const char *block, const char *text,
		       __u32 *handle)
{
	struct xtcam_rule r;
	int e = parse(c, block, text, &r);

	return e ? e : one(c, block, XTCAM_VERB_ADD, &r, handle);
}

int xtcam_ctl_rule_replace_r(struct xtcam_ctl *c, const char *block,
			     const struct xtcam_rule *r)
{
	return one(c, block, XTCAM_VERB_REPLACE, r, NULL);
}

int xtcam_ctl_rule_replace(struct xtcam_ctl *c, const char *block, const char *text)
{
	struct xtcam_rule r;
	int e = parse(c, block, text, &r);

	return e ? e : one(c, block, XTCAM_VERB_REPLACE, &r, NULL);
}

int xtcam_ctl_rule_del(struct xtcam_ctl *c, const char *block, __u32 handle)
{
	struct xtcam_rule r;

	xtcam_rule_init(&r);
	r.handle = handle;
	return one(c, block, XTCAM_VERB_DEL, &r, NULL);
}

int xtcam_ctl_counters(struct xtcam_ctl *c, const char *block, __u32 handle,
		       struct xtcam_ctl_counters *out)
{
	struct xtcam_counter cnt = { 0 };
	struct xtcam_block_rec rec;
	struct xtcam_block *b;
	struct xtcam_rview v;
	struct xtcam_rule r;
	size_t k;
	int e = ctl_lock(c);

	if (e)
		return e;
	b = xtcam_block_find(c->ctx->core, block);
	e = b ? xtcam_state_block_get(c->ctx->st, block, &rec) : -ENOENT;
	if (e) {
		xtcam_set_err(c->err, sizeof(c->err), "block %s: %s", block,
			      e == -ENOENT ? "no such block" : strerror(-e));
		return ctl_done(c, e);
	}
	e = xtcam_state_rule_get(c->ctx->st, &rec, handle, &r);
	if (e) {
		xtcam_set_err(c->err, sizeof(c->err), "block %s: handle %u: %s", block, handle,
			      e == -ENOENT ? "no such rule" : strerror(-e));
		return ctl_done(c, e);
	}
	/* on every backend the block is bound through */
	e = xtcam_rview_get(c->ctx, &rec, NULL, 0, &v);
	if (e) {
		xtcam_set_err(c->err, sizeof(c->err), "block %s: its data path: %s", block,
			      strerror(-e));
		return ctl_done(c, e);
	}
	for (k = 0; k < c->ctx->nimpl; k++)
		c->ctx->impl[k]->rule_counters(&v, handle, &cnt);
	xtcam_rview_put(&v);
	out->packets = cnt.packets;
	out->bytes = cnt.bytes;
	return ctl_done(c, 0);
}

/* --- batches ---------------------------------------------------------------- */

struct xtcam_ctl_batch *xtcam_ctl_batch_begin(struct xtcam_ctl *c, const char *block)
{
	struct xtcam_ctl_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->c = c;
	b->block = strdup(block ? block : "");
	if (!b->block) {
		free(b);
		return NULL;
	}
	return b;
}

static void batch_clear(struct xtcam_ctl_batch *b)
{
	b->n = 0;
	b->overflow = false;
	b->have_spec = false;
}

static int batch_put(struct xtcam_ctl_batch *b, enum xtcam_rule_verb v,
		     const struct xtcam_rule *r, __u32 *handle)
{
	struct xtcam_ctl *c = b->c;

	if (b->n >= XTCAM_CTL_BATCH_MAX) {
		b->overflow = true;
		xtcam_set_err(c->err, sizeof(c->err), "block %s: batch: more than %u changes "
			      "(the most one batch holds); the batch will not commit", b->block,
			      XTCAM_CTL_BATCH_MAX);
		return -E2BIG;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		enum xtcam_rule_verb *v2 = realloc(b->verbs, cap * sizeof(*v2));
		struct xtcam_rule *r2;
		__u32 **h2;

		if (!v2)
			goto nomem;
		b->verbs = v2;
		r2 = realloc(b->rules, cap * sizeof(*r2));
		if (!r2)
			goto nomem;
		b->rules = r2;
		h2 = realloc(b->handles, cap * sizeof(*h2));
		if (!h2)
			goto nomem;
		b->handles = h2;
		b->cap = cap;
	}
	b->verbs[b->n] = v;
	b->rules[b->n] = *r;
	b->handles[b->n] = handle;
	b->n++;
	c->err[0] = 0;
	return 0;
nomem:
	xtcam_set_err(c->err, sizeof(c->err), "block %s: batch: out of memory", b->block);
	return -ENOMEM;
}

int xtcam_ctl_batch_add_r(struct xtcam_ctl_batch *b, const struct xtcam_rule *r,
			  __u32 *handle)
{
	return batch_put(b, XTCAM_VERB_ADD, r, handle);
}

int xtcam_ctl_batch_add(struct xtcam_ctl_batch *b, const char *text, __u32 *handle)
{
	struct xtcam_rule r;
	int e = parse_with(b->c, b->block, text, &r, &b->spec, &b->have_spec);

	return e ? e : batch_put(b, XTCAM_VERB_ADD, &r, handle);
}

int xtcam_ctl_batch_replace_r(struct xtcam_ctl_batch *b, const struct xtcam_rule *r)
{
	return batch_put(b, XTCAM_VERB_REPLACE, r, NULL);
}

int xtcam_ctl_batch_replace(struct xtcam_ctl_batch *b, const char *text)
{
	struct xtcam_rule r;
	int e = parse_with(b->c, b->block, text, &r, &b->spec, &b->have_spec);

	return e ? e : batch_put(b, XTCAM_VERB_REPLACE, &r, NULL);
}

int xtcam_ctl_batch_del(struct xtcam_ctl_batch *b, __u32 handle)
{
	struct xtcam_rule r;

	xtcam_rule_init(&r);
	r.handle = handle;
	return batch_put(b, XTCAM_VERB_DEL, &r, NULL);
}

size_t xtcam_ctl_batch_size(const struct xtcam_ctl_batch *b)
{
	return b->n;
}

int xtcam_ctl_batch_commit(struct xtcam_ctl_batch *b)
{
	struct xtcam_ctl *c = b->c;
	size_t i;
	int e;

	if (b->overflow) {
		xtcam_set_err(c->err, sizeof(c->err), "block %s: batch: more than %u changes "
			      "(the most one batch holds): nothing changed", b->block,
			      XTCAM_CTL_BATCH_MAX);
		batch_clear(b);
		return -E2BIG;
	}
	c->err[0] = 0;
	if (!b->n)
		return 0;
	e = ctl_lock(c);
	if (e) {
		batch_clear(b);
		return e;
	}
	c->ctx->linger = true;
	e = xtcam_cmd_rule_batch(c->ctx, b->block, b->verbs, b->rules, b->n, c->err,
				 sizeof(c->err));
	c->ctx->linger = false;
	for (i = 0; !e && i < b->n; i++)
		if (b->handles[i])
			*b->handles[i] = b->rules[i].handle;
	batch_clear(b);
	return ctl_done(c, e);
}

void xtcam_ctl_batch_free(struct xtcam_ctl_batch *b)
{
	if (!b)
		return;
	free(b->block);
	free(b->verbs);
	free(b->rules);
	free(b->handles);
	free(b);
}
