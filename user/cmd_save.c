// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* xtcam save and flush. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "nsenter.h"
#include "errmsg.h"
#include "vanish.h"
#include "trace.h"

/* --- save and flush -------------------------------------------------------- */

static int cmp_binding(const void *a, const void *b)
{
	const struct xtcam_bind_rec *x = a, *y = b;
	int d = strcmp(x->block, y->block);

	if (!d)
		d = strcmp(x->netns, y->netns);
	return d ? d : strcmp(x->dev, y->dev);
}

struct save_rules {
	FILE *f;
	const struct xtcam_block_spec *spec;
	const char *block;
	char *err;
	size_t errlen;
};

static int save_rule(void *arg, const struct xtcam_rule *r)
{
	struct save_rules *w = arg;
	char line[XTCAM_RULE_TEXT_MAX];
	int n = xtcam_rule_format(r, w->spec, line, sizeof(line));

	if (n < 0) {
		xtcam_set_err(w->err, w->errlen, "save: block %s: rule handle %u: cannot write it: %s",
			      w->block, r->handle, strerror(-n));
		return n;
	}
	fprintf(w->f, "rule add %s %s\n", w->block, line);
	return 0;
}

/* Every block record whole (seq and the active generation: no commit
 * meanwhile; a generation is written only after a commit moved off it),
 * every binding record whole, in a fixed order, and the blocks of a
 * restore that has not committed. */
int xtcam_read_sig(struct xtcam_ctx *c, char **sig, size_t *len)
{
	struct xtcam_block_rec *b = NULL;
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *recs = NULL;
	size_t nb = 0, nk = 0;
	FILE *f = open_memstream(sig, len);
	int e = 0;

	if (!f)
		return -ENOMEM;
	if (c->st->ro)
		e = xtcam_state_restoring(c->st);
	if (!e)
		e = xtcam_state_blocks(c->st, &b, &nb);
	if (!e)
		e = xtcam_state_bindings(c->st, &keys, &recs, &nk);
	if (!e) {
		if (nk)
			qsort(recs, nk, sizeof(*recs), cmp_binding);
		fwrite(&nb, sizeof(nb), 1, f);
		if (nb)
			fwrite(b, sizeof(*b), nb, f);
		fwrite(&nk, sizeof(nk), 1, f);
		if (nk)
			fwrite(recs, sizeof(*recs), nk, f);
		fwrite(&c->st->nhidden, sizeof(c->st->nhidden), 1, f);
		if (c->st->nhidden)
			fwrite(c->st->hidden, sizeof(*c->st->hidden), c->st->nhidden, f);
	}
	if (fclose(f) && !e)
		e = -ENOMEM;
	free(b);
	free(keys);
	free(recs);
	if (e) {
		free(*sig);
		*sig = NULL;
	}
	return e;
}

/* One pass: every block, its rules and its bindings, into f. */
static int save_pass(struct xtcam_ctx *c, FILE *f, char *err, size_t errlen)
{
	struct xtcam_block_rec *b = NULL;
	struct xtcam_bind_key *keys = NULL;
	struct xtcam_bind_rec *recs = NULL;
	size_t nb, nk, i;
	char line[XTCAM_RULE_TEXT_MAX];
	time_t t = time(NULL);
	int e = xtcam_state_blocks(c->st, &b, &nb);

	if (e || (e = xtcam_state_bindings(c->st, &keys, &recs, &nk))) {
		free(b);
		xtcam_set_err(err, errlen, "save: registry: %s", strerror(-e));
		return e;
	}
	strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
	fprintf(f, "%s%d, %s\n", XTCAM_SAVE_FORMAT_LINE, XTCAM_SAVE_FORMAT, line);
	for (i = 0; !e && i < nb; i++) {
		struct xtcam_block_spec spec;
		struct save_rules w = { f, &spec, b[i].name, err, errlen };
		int n;

		xtcam_spec_of(&b[i], &spec);
		n = xtcam_block_spec_format(&spec, line, sizeof(line));
		if (n < 0) {
			e = n;
			xtcam_set_err(err, errlen, "save: block %s: cannot write its settings: %s",
				b[i].name, strerror(-e));
			break;
		}
		fprintf(f, "block add %s\n", line);
		err[0] = 0;
		e = xtcam_state_rules_walk(c->st, &b[i], save_rule, &w);
		if (e && !err[0])
			xtcam_set_err(err, errlen, "save: block %s: cannot read its rules: %s",
				b[i].name, strerror(-e));
	}
	/* in a fixed order, so that save, restore, save gives the same text */
	if (!e)
		qsort(recs, nk, sizeof(*recs), cmp_binding);
	for (i = 0; !e && i < nk; i++) {
		/* (and not those of the blocks a restore is making) */
		if (recs[i].state != XTCAM_BIND_ACTIVE || xtcam_state_hidden(c->st, recs[i].block))
			continue;
		fprintf(f, "bind %s dev %s%s%s mode %s%s\n", recs[i].block, recs[i].dev,
			recs[i].netns[0] ? " netns " : "", recs[i].netns, recs[i].requested,
			recs[i].binder == FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS ? " egress" : "");
	}
	free(b);
	free(keys);
	free(recs);
	if (!e && ferror(f)) {
		e = -EIO;
		xtcam_set_err(err, errlen, "save: cannot write its temporary file");
	}
	return e;
}

#define SAVE_PASSES XTCAM_READ_PASSES

int xtcam_cmd_save_file(struct xtcam_ctx *c, FILE *out, char *err, size_t errlen)
{
	char buf[65536];
	int e = 0, pass;
	size_t n;
	FILE *f;

	/* (a restore under way or cut short: its blocks, not committed, read
	 * as not there to a reader, see xtcam_read_sig) */
	f = tmpfile();
	if (!f) {
		e = -errno;
		xtcam_set_err(err, errlen, "save: a temporary file: %s", strerror(-e));
		return e;
	}
	for (pass = 0; pass < SAVE_PASSES; pass++) {
		char *s0 = NULL, *s1 = NULL;
		size_t l0 = 0, l1 = 0;
		bool same;

		rewind(f);
		if (ftruncate(fileno(f), 0)) {
			e = -errno;
			break;
		}
		e = xtcam_read_sig(c, &s0, &l0);
		if (!e)
			e = save_pass(c, f, err, errlen);
		if (!e)
			e = xtcam_read_sig(c, &s1, &l1);
		same = !e && l0 == l1 && !memcmp(s0, s1, l0);
		free(s0);
		free(s1);
		if (e || same)
			break;
		/* a writer committed meanwhile: read it all again */
		if (pass == SAVE_PASSES - 1) {
			e = -EAGAIN;
			xtcam_set_err(err, errlen, "save: a writer committed during each of %d "
				      "reads: try again", SAVE_PASSES);
		}
	}
	if (!e && fflush(f))
		e = -errno;
	if (!e) {
		rewind(f);
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			if (fwrite(buf, 1, n, out) != n)
				break;
		if (ferror(f) || ferror(out)) {
			e = -EIO;
			xtcam_set_err(err, errlen, "save: cannot write it: %s", strerror(EIO));
		}
	} else if (!err[0]) {
		xtcam_set_err(err, errlen, "save: %s", strerror(-e));
	}
	fclose(f);
	return e;
}

/* Every block, its rules and its bindings, or an error: never a part. */
int xtcam_cmd_save(struct xtcam_ctx *c, char **text, char *err, size_t errlen)
{
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	int e;

	if (!f)
		return -ENOMEM;
	err[0] = 0;
	e = xtcam_cmd_save_file(c, f, err, errlen);
	fclose(f);
	if (e) {
		free(*text);
		*text = NULL;
	}
	return e;
}

int xtcam_cmd_flush(struct xtcam_ctx *c, char *err, size_t errlen)
{
	struct xtcam_block_rec *brecs = NULL;
	struct xtcam_bind_key *keys;
	struct xtcam_bind_rec *recs;
	size_t nk, nb = 0, i;
	int e = xtcam_state_bindings(c->st, &keys, &recs, &nk), first = 0;

	if (e) {
		xtcam_set_err(err, errlen, "registry: %s", strerror(-e));
		return e;
	}
	for (i = 0; i < nk; i++) {
		char msg[XTCAM_MSG_MAX] = "";

		if (recs[i].state != XTCAM_BIND_ACTIVE) {
			xtcam_undo_pending(c, &keys[i], &recs[i]);
			continue;
		}
		e = xtcam_cmd_unbind(c, recs[i].block, recs[i].dev, recs[i].netns, msg, sizeof(msg));
		if (e && !first) {
			first = e;
			xtcam_set_err(err, errlen, "%s", msg);
		}
	}
	free(keys);
	free(recs);
	/* the core's objects go with the context; the pins go now */
	xtcam_core_free(c->core);
	c->core = NULL;
	/* what unbinding left of the blocks' data paths (after a crash):
	 * only the pins of xtcam's own layout, by name */
	e = xtcam_state_blocks(c->st, &brecs, &nb);
	for (i = 0; !e && i < nb; i++) {
		char dir[256];
		size_t k;

		for (k = 0; k < c->nimpl; k++)
			c->impl[k]->orphans(c, brecs[i].name);
		if (!xtcam_state_block_dir(c->st, brecs[i].name, NULL, dir, sizeof(dir)))
			rmdir(dir);
	}
	free(brecs);
	if (e && !first) {
		first = e;
		xtcam_set_err(err, errlen, "registry: cannot read blocks: %s", strerror(-e));
	}
	e = xtcam_state_destroy(c->st);
	if (e && !first) {
		first = e;
		xtcam_set_err(err, errlen, "removing %s: %s", c->st->root, strerror(-e));
	}
	return first;
}
