// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * restore: read a file that `xtcam save` wrote and make its blocks, rules
 * and bindings, all of them or none.
 *
 * The file is read and checked whole before anything changes (and before
 * the lock is taken).  Applying it is made one step by a marker, a small
 * map pinned as "restore:pending" in the registry's folder (no block is
 * named so: ':' is not allowed in block names; bpffs refuses '.') that
 * lists the blocks the restore makes.  It is pinned
 * before the first change and unpinned as the commit; an invocation that
 * finds it (a restore that failed or was killed) removes the bindings and
 * blocks it lists, then the marker.  Every listed block is new: a restore
 * refuses to start while any of them exists, and binds only its own
 * blocks.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "xtcam/syntax.h"
#include "loader_int.h"
#include "errmsg.h"
#include "restore_int.h"
#include "progress.h"

#define MARKER XTCAM_RESTORE_MARKER

/* --- the words of bind and unbind ----------------------------------------- */

/* the one word of `words` that arg is a unique prefix of, or NULL */
static int word_index(const char *arg, const char *const *words)
{
	size_t n = strlen(arg);
	int i, hit = -1;

	for (i = 0; n && words[i]; i++) {
		if (!strcmp(arg, words[i]))
			return i;
		if (n <= strlen(words[i]) && !strncmp(arg, words[i], n)) {
			if (hit >= 0)
				return -1;
			hit = i;
		}
	}
	return hit;
}

int xtcam_bind_req_parse(int argc, char **argv, bool unbind, struct xtcam_bind_req *r,
			 char *err, size_t errlen)
{
	enum { DEV, NETNS, MODE, INGRESS, EGRESS, FORCE };
	static const char *const words[] = { "dev", "netns", "mode", "ingress", "egress", "force",
					     NULL };
	static const char *const modes[] = { "auto", "hw", "native", "generic", NULL };
	const char *what = unbind ? "unbind" : "bind";
	struct xtcam_bind_req q = { 0 };
	unsigned int seen = 0;
	int i, w, slot;

	if (argc < 1 || !argv[0][0]) {
		xtcam_set_err(err, errlen, "%s: missing block NAME", what);
		return -EINVAL;
	}
	q.block = argv[0];
	for (i = 1; i < argc; i++) {
		w = word_index(argv[i], words);
		if (w < 0) {
			xtcam_set_err(err, errlen, "%s: unknown keyword \"%s\"", what, argv[i]);
			return -EINVAL;
		}
		if (unbind && (w == MODE || w == INGRESS || w == EGRESS || w == FORCE)) {
			xtcam_set_err(err, errlen, "unbind: \"%s\" does not apply", words[w]);
			return -EINVAL;
		}
		slot = w == EGRESS ? INGRESS : w;       /* one direction */
		if (seen & (1u << slot)) {
			xtcam_set_err(err, errlen, "%s: %s given twice", what,
				      slot == INGRESS ? "ingress/egress" : words[w]);
			return -EINVAL;
		}
		seen |= 1u << slot;
		if (w == INGRESS || w == EGRESS || w == FORCE) {
			q.egress |= w == EGRESS;
			q.force |= w == FORCE;
			continue;
		}
		if (i + 1 >= argc) {
			xtcam_set_err(err, errlen, "%s: %s: missing value", what, words[w]);
			return -EINVAL;
		}
		i++;
		if (w == DEV) {
			q.dev = argv[i];
		} else if (w == NETNS) {
			q.netns = argv[i];
		} else {
			int m;

			q.mode = argv[i];
			for (m = 0; modes[m] && strcmp(modes[m], q.mode); m++)
				;
			if (!modes[m]) {
				xtcam_set_err(err, errlen, "bind: mode %s: not one of auto, hw, native, "
					      "generic", q.mode);
				return -EINVAL;
			}
		}
	}
	if (!q.dev) {
		xtcam_set_err(err, errlen, "%s: missing dev IFNAME", what);
		return -EINVAL;
	}
	*r = q;
	return 0;
}

/* --- reading the file ------------------------------------------------------ */

void xtcam_restore_free(struct xtcam_restore *rs)
{
	size_t i;

	if (!rs)
		return;
	for (i = 0; i < rs->nb; i++)
		free(rs->blocks[i].rules);
	free(rs->blocks);
	for (i = 0; i < rs->nbind; i++)
		free(rs->binds[i].words);
	free(rs->binds);
	free(rs);
}

static struct rs_block *rs_block(struct xtcam_restore *rs, const char *name)
{
	size_t i;

	for (i = 0; i < rs->nb; i++)
		if (!strcmp(rs->blocks[i].spec.name, name))
			return &rs->blocks[i];
	return NULL;
}

/* One line of the file: `block add`, `rule add`, `bind`, or blank/comment.
 * Takes w (from xtcam_split_words()) in every case. */
static int restore_words(struct xtcam_restore *rs, int wc, char **w, unsigned long lineno,
			 char *err, size_t errlen)
{
	int e = 0;

	if (!wc) {
		free(w);
		return 0;
	}
	if (!strcmp(w[0], "block") && wc >= 3 && !strcmp(w[1], "add")) {
		struct rs_block *p = realloc(rs->blocks, (rs->nb + 1) * sizeof(*p));
		struct xtcam_block_spec spec;

		if (!p) {
			e = -ENOMEM;
			xtcam_set_err(err, errlen, "out of memory");
			goto out;
		}
		rs->blocks = p;
		e = xtcam_block_spec_parse(wc - 2, w + 2, &spec, err, errlen);
		if (e)
			goto out;
		if (rs_block(rs, spec.name)) {
			xtcam_set_err(err, errlen, "block %s twice", spec.name);
			e = -EEXIST;
			goto out;
		}
		memset(&rs->blocks[rs->nb], 0, sizeof(rs->blocks[rs->nb]));
		rs->blocks[rs->nb++].spec = spec;
	} else if (!strcmp(w[0], "rule") && wc >= 3 && !strcmp(w[1], "add")) {
		struct rs_block *b = rs_block(rs, w[2]);
		struct xtcam_rule r;

		if (!b) {
			xtcam_set_err(err, errlen, "rule for block %s before its `block add`", w[2]);
			e = -ENOENT;
			goto out;
		}
		e = xtcam_rule_parse_flags(wc - 3, w + 3, &r, &b->spec,
					   rs->format ? 0 : XTCAM_PARSE_DECIMAL, err, errlen);
		if (e)
			goto out;
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 256;
			struct xtcam_rule *p = realloc(b->rules, cap * sizeof(*p));

			if (!p) {
				e = -ENOMEM;
				xtcam_set_err(err, errlen, "out of memory");
				goto out;
			}
			b->rules = p;
			b->cap = cap;
		}
		b->rules[b->n++] = r;
	} else if (!strcmp(w[0], "bind")) {
		struct rs_bind *p = realloc(rs->binds, (rs->nbind + 1) * sizeof(*p));
		struct xtcam_bind_req req;

		if (!p) {
			e = -ENOMEM;
			xtcam_set_err(err, errlen, "out of memory");
			goto out;
		}
		rs->binds = p;
		e = xtcam_bind_req_parse(wc - 1, w + 1, false, &req, err, errlen);
		if (e)
			goto out;
		if (!rs_block(rs, req.block)) {
			xtcam_set_err(err, errlen, "bind: block %s: not made by this file (a `block "
				      "add` line before the bind)", req.block);
			e = -ENOENT;
			goto out;
		}
		/* req points into w: the bind keeps it */
		p[rs->nbind].req = req;
		p[rs->nbind].words = w;
		p[rs->nbind].lineno = lineno;
		rs->nbind++;
		return 0;
	} else {
		xtcam_set_err(err, errlen, "\"%s%s%s\": not a line of `xtcam save` (block add, "
			      "rule add, bind)", w[0], wc > 1 ? " " : "", wc > 1 ? w[1] : "");
		e = -EINVAL;
	}
out:
	free(w);
	return e;
}

/* The format line, before any other line but comments: which format the
 * numbers are in.  A later one, or a format this build does not know, is
 * an error. */
static int format_line(struct xtcam_restore *rs, const char *line, unsigned long lineno,
		       char *err, size_t errlen)
{
	size_t n = strlen(XTCAM_SAVE_FORMAT_LINE);
	const char *p = line + strspn(line, " \t");
	char *end;
	long v;

	if (strncmp(p, XTCAM_SAVE_FORMAT_LINE, n)) {
		if (*p && *p != '#' && *p != '\n')
			rs->content = true;
		return 0;
	}
	errno = 0;
	v = strtol(p + n, &end, 10);
	if (rs->format || rs->content) {
		xtcam_set_err(err, errlen, "%s:%lu: a format line after the first lines",
			      rs->name, lineno);
		return -EINVAL;
	}
	if (errno || end == p + n || (*end != ',' && *end != '\n' && *end) ||
	    v != XTCAM_SAVE_FORMAT) {
		xtcam_set_err(err, errlen, "%s:%lu: save format \"%.*s\" is not one this xtcam "
			      "reads (format %d; a newer xtcam wrote it?)", rs->name, lineno,
			      (int)strcspn(p + n, ",\n"), p + n, XTCAM_SAVE_FORMAT);
		return -EINVAL;
	}
	rs->format = (int)v;
	return 0;
}

bool xtcam_restore_is_legacy(const struct xtcam_restore *rs)
{
	return !rs->format;
}

/* Every line of a restore file goes through here. */
static int restore_line(struct xtcam_restore *rs, const char *line, size_t len,
			unsigned long lineno, char *err, size_t errlen)
{
	char msg[XTCAM_MSG_MAX];
	char **w;
	int wc, e;

	if (memchr(line, '\0', len)) {
		xtcam_set_err(err, errlen, "%s:%lu: a NUL byte (not a text file)", rs->name, lineno);
		return -EINVAL;
	}
	e = format_line(rs, line, lineno, err, errlen);
	if (e)
		return e;
	e = xtcam_split_words(line, &wc, &w);
	if (e) {
		xtcam_set_err(err, errlen, "%s:%lu: %s", rs->name, lineno, strerror(-e));
		return e;
	}
	msg[0] = 0;
	e = restore_words(rs, wc, w, lineno, msg, sizeof(msg));
	if (e)
		xtcam_set_err(err, errlen, "%s:%lu: %s", rs->name, lineno, msg);
	return e;
}

int xtcam_restore_read(FILE *f, const char *name, struct xtcam_restore **out, char *err,
		       size_t errlen)
{
	struct xtcam_restore *rs = calloc(1, sizeof(*rs));
	unsigned long lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int e = 0;

	if (!rs) {
		xtcam_set_err(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	snprintf(rs->name, sizeof(rs->name), "%s", name);
	errno = 0;
	while (!e && (len = getline(&line, &cap, f)) >= 0) {
		e = restore_line(rs, line, (size_t)len, ++lineno, err, errlen);
		if (!(lineno & 4095))
			xtcam_progress("reading", lineno, 0);
		errno = 0;
	}
	/* glibc's getline fails with ENOMEM without setting the error flag */
	if (!e && (ferror(f) || (errno && !feof(f)))) {
		e = errno ? -errno : -EIO;
		xtcam_set_err(err, errlen, "%s: cannot read it after line %lu: %s", name, lineno,
			      strerror(-e));
	}
	free(line);
	if (e) {
		xtcam_restore_free(rs);
		return e;
	}
	*out = rs;
	return 0;
}

/* --- applying it ---------------------------------------------------------- */

static int marker_path(struct xtcam_ctx *c, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/" MARKER, c->st->root);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static bool listed(const char *name, char (*names)[XTCAM_STATE_NAME], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strncmp(names[i], name, XTCAM_STATE_NAME))
			return true;
	return false;
}

/* Remove the bindings and blocks named (those that are there), then the
 * marker.  Leaves the marker when anything fails, to be tried again. */
static int rollback(struct xtcam_ctx *c, char (*names)[XTCAM_STATE_NAME], size_t n,
		    char *err, size_t errlen)
{
	struct xtcam_bind_key *keys;
	struct xtcam_bind_rec *recs;
	struct xtcam_block_rec rec;
	char msg[XTCAM_MSG_MAX], path[PATH_MAX];
	size_t nk, i;
	int e = xtcam_state_bindings(c->st, &keys, &recs, &nk), first = 0;

	if (e) {
		xtcam_set_err(err, errlen, "registry: cannot read bindings: %s", strerror(-e));
		return e;
	}
	for (i = 0; i < nk; i++) {
		if (recs[i].state != XTCAM_BIND_ACTIVE || !listed(recs[i].block, names, n))
			continue;
		e = xtcam_cmd_unbind(c, recs[i].block, recs[i].dev, recs[i].netns, msg,
				     sizeof(msg));
		if (e && !first) {
			first = e;
			xtcam_set_err(err, errlen, "%s", msg);
		}
	}
	free(keys);
	free(recs);
	for (i = 0; i < n; i++) {
		char name[XTCAM_STATE_NAME + 1];

		snprintf(name, sizeof(name), "%.*s", XTCAM_STATE_NAME, names[i]);
		if (xtcam_state_block_get(c->st, name, &rec))
			continue;
		e = xtcam_cmd_block_del(c, name, msg, sizeof(msg));
		if (e && !first) {
			first = e;
			xtcam_set_err(err, errlen, "%s", msg);
		}
	}
	if (first)
		return first;
	e = marker_path(c, path, sizeof(path));
	if (!e && unlink(path) && errno != ENOENT)
		e = -errno;
	if (e)
		xtcam_set_err(err, errlen, "%s: %s", path, strerror(-e));
	return e;
}

int xtcam_restore_recover(struct xtcam_ctx *c, char *err, size_t errlen)
{
	char path[PATH_MAX], (*names)[XTCAM_STATE_NAME] = NULL, key[XTCAM_STATE_NAME];
	size_t n = 0, cap = 0;
	int fd, e;

	if (c->st->fd_blocks < 0)
		return 0;
	e = marker_path(c, path, sizeof(path));
	if (e)
		return e;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		e = -errno;
		xtcam_set_err(err, errlen, "%s: %s", path, strerror(-e));
		return e;
	}
	for (e = bpf_map_get_next_key(fd, NULL, key); !e;
	     e = bpf_map_get_next_key(fd, key, key)) {
		if (n == cap) {
			void *p;

			cap = cap ? 2 * cap : 16;
			p = realloc(names, cap * sizeof(*names));
			if (!p) {
				free(names);
				close(fd);
				xtcam_set_err(err, errlen, "%s: out of memory", path);
				return -ENOMEM;
			}
			names = p;
		}
		memcpy(names[n++], key, sizeof(key));
	}
	e = errno == ENOENT ? 0 : -errno;
	close(fd);
	if (e) {
		xtcam_set_err(err, errlen, "%s: %s", path, strerror(-e));
		free(names);
		return e;
	}
	e = rollback(c, names, n, err, errlen);
	free(names);
	if (e) {
		char msg[XTCAM_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", err);
		xtcam_set_err(err, errlen, "undoing a restore that did not finish: %s", msg);
	}
	return e;
}

static int marker_pin(struct xtcam_ctx *c, char (*names)[XTCAM_STATE_NAME], size_t n,
		      char *err, size_t errlen)
{
	char path[PATH_MAX];
	__u32 i;
	int fd, e = marker_path(c, path, sizeof(path));

	if (e)
		return e;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "xtcam_restore", XTCAM_STATE_NAME, sizeof(__u32),
			    (__u32)n, NULL);
	if (fd < 0) {
		e = -errno;
		xtcam_set_err(err, errlen, "restore: cannot make its marker: %s", strerror(-e));
		return e;
	}
	for (i = 0; !e && i < n; i++)
		if (bpf_map_update_elem(fd, names[i], &i, BPF_NOEXIST))
			e = -errno;
	if (!e && bpf_obj_pin(fd, path))
		e = -errno;
	close(fd);
	if (e)
		xtcam_set_err(err, errlen, "restore: %s: %s", path, strerror(-e));
	return e;
}

int xtcam_cmd_restore(struct xtcam_ctx *c, const struct xtcam_restore *rs, char *err,
		      size_t errlen)
{
	char (*names)[XTCAM_STATE_NAME] = NULL, path[PATH_MAX], msg[XTCAM_MSG_MAX];
	struct xtcam_block_spec tmp;
	size_t i;
	int e = 0;

	if (!rs->nb)
		return 0;               /* no block, so no binding either */
	for (i = 0; i < rs->nb; i++)
		if (!xtcam_block_spec_get(c, rs->blocks[i].spec.name, &tmp)) {
			xtcam_set_err(err, errlen, "block %s exists (xtcam flush first)",
				      rs->blocks[i].spec.name);
			return -EEXIST;
		}
	names = calloc(rs->nb, sizeof(*names));
	if (!names) {
		xtcam_set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < rs->nb; i++)
		snprintf(names[i], sizeof(names[i]), "%s", rs->blocks[i].spec.name);
	e = marker_pin(c, names, rs->nb, err, errlen);
	if (e) {
		free(names);
		return e;
	}
	for (i = 0; !e && i < rs->nb; i++) {
		const struct rs_block *b = &rs->blocks[i];

		e = xtcam_cmd_block_add(c, &b->spec, err, errlen);
		if (!e && b->n)
			e = xtcam_cmd_rule_load(c, b->spec.name, b->rules, b->n, false, false,
						err, errlen);
	}
	for (i = 0; !e && i < rs->nbind; i++) {
		e = xtcam_cmd_bind(c, &rs->binds[i].req, NULL, msg, sizeof(msg));
		if (e)
			xtcam_set_err(err, errlen, "%s:%lu: %s", rs->name, rs->binds[i].lineno, msg);
	}
	if (e) {
		/* undo it now; what this cannot undo the next invocation does */
		rollback(c, names, rs->nb, msg, sizeof(msg));
		free(names);
		return e;
	}
	free(names);
	/* the commit */
	e = marker_path(c, path, sizeof(path));
	if (!e && unlink(path))
		e = -errno;
	if (e)
		xtcam_set_err(err, errlen, "restore: %s: %s", path, strerror(-e));
	return e;
}
