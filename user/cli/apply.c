// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam apply: make the blocks of a save file equal to it (see
 * docs/apply.md).  The file is read whole into memory, then parsed and
 * checked, before the lock is taken (XTCAM_TRACE marks "read" and
 * "parse"); each change is printed as the command that makes it with
 * --check (or -v), and the last line says how many there were.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "xtcam/loader.h"
#include "cli.h"
#include "trace.h"

struct out {
	bool json, pretty, lines;
	json_object *changes, *missing;
};

static int ap_fail(const struct out *o, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int ap_fail(const struct out *o, int e, const char *fmt, ...)
{
	const char *name = strerrorname_np(e < 0 ? -e : e);
	char msg[XTCAM_MSG_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o->json) {
		json_object *j = json_object_new_object();
		char full[sizeof(msg) + 64];

		snprintf(full, sizeof(full), "%s (%s)", msg, name ? name : "error");
		json_object_object_add(j, "error", json_object_new_string(full));
		json_object_object_add(j, "errno", json_object_new_string(name ? name : "error"));
		puts(json_object_to_json_string_ext(j, (o->pretty ? JSON_C_TO_STRING_PRETTY :
						       JSON_C_TO_STRING_PLAIN) |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
	} else {
		fprintf(stderr, "xtcam: %s (%s)\n", msg, name ? name : "error");
	}
	return 1;
}

/* The whole of f in memory, as a stream to parse: NULL and errno when it
 * cannot be read. */
static FILE *slurp(FILE *f, char **buf)
{
	size_t len = 0, cap = 1 << 16, n;
	char *p = malloc(cap);
	FILE *m;

	while (p && (n = fread(p + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *q = realloc(p, cap *= 2);

			if (!q)
				free(p);
			p = q;
		}
	}
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	if (ferror(f)) {
		free(p);
		errno = errno ? errno : EIO;
		return NULL;
	}
	m = fmemopen(p, len, "r");
	if (!m) {
		free(p);
		return NULL;
	}
	*buf = p;
	return m;
}

static void on_change(void *arg, const char *line)
{
	struct out *o = arg;

	if (o->json)
		json_object_array_add(o->changes, json_object_new_string(line));
	else if (o->lines)
		printf("%s\n", line);
}

static void on_missing(void *arg, const char *why)
{
	struct out *o = arg;

	if (o->json)
		json_object_array_add(o->missing, json_object_new_string(why));
	fprintf(stderr, "xtcam: apply: %s: left out, the rest is applied\n", why);
}

int xtcam_cli_apply(int argc, char **argv, bool json, bool pretty)
{
	struct out o = { .json = json, .pretty = pretty };
	struct xtcam_apply_opts opts = { .change = on_change, .missing = on_missing, .arg = &o };
	struct xtcam_apply_result res;
	struct xtcam_restore *rs = NULL;
	const char **names = NULL, *file = NULL;
	char err[XTCAM_MSG_MAX], *text = NULL;
	struct xtcam_ctx *c;
	size_t i, nb;
	FILE *f, *m;
	int e;

	for (i = 0; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--check"))
			opts.check = true;
		else if (!strcmp(argv[i], "--prune"))
			opts.prune = true;
		else if (!strcmp(argv[i], "--bindings-for") && i + 1 < (size_t)argc)
			opts.bindings_for = argv[++i];
		else if (!file && (argv[i][0] != '-' || !strcmp(argv[i], "-")))
			file = argv[i];
		else
			return ap_fail(&o, EINVAL, "apply: \"%s\": not a FILE, --check, --prune or "
				       "--bindings-for DEV", argv[i]);
	}
	if (!file)
		return ap_fail(&o, EINVAL, "apply: [--check] [--prune] [--bindings-for DEV] FILE|-");
	if (opts.prune && opts.bindings_for)
		return ap_fail(&o, EINVAL, "apply: --bindings-for makes bindings only: no --prune");
	o.lines = opts.check || getenv("XTCAM_VERBOSE");
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		return ap_fail(&o, errno, "apply: %s: %s (nothing changed)", file, strerror(errno));
	/* the whole file, checked, before the lock */
	errno = 0;
	m = slurp(f, &text);
	e = errno;
	if (f != stdin)
		fclose(f);
	if (!m)
		return ap_fail(&o, e, "apply: %s: cannot read it: %s (nothing changed)",
			       strcmp(file, "-") ? file : "stdin", strerror(e));
	xtcam_trace("read");
	e = xtcam_restore_read(m, strcmp(file, "-") ? file : "stdin", &rs, err, sizeof(err));
	fclose(m);
	free(text);
	xtcam_trace("parse");
	if (e)
		return ap_fail(&o, e, "apply: %s (nothing changed)", err);
	if (xtcam_restore_is_legacy(rs))
		fprintf(stderr, "xtcam: apply: %s has no format line: its numbers are read as "
			"decimal, as older versions of xtcam wrote them\n",
			strcmp(file, "-") ? file : "stdin");
	nb = xtcam_restore_nblocks(rs);
	names = calloc(nb + 2, sizeof(*names));
	if (!names) {
		xtcam_restore_free(rs);
		return ap_fail(&o, ENOMEM, "apply: out of memory (nothing changed)");
	}
	for (i = 0; i < nb; i++)
		names[i] = xtcam_restore_block(rs, i);
	if (opts.prune)
		names[nb] = "*";        /* the blocks to remove too */
	e = xtcam_open(&c, opts.check ? 0 : XTCAM_OPEN_CREATE, names, err, sizeof(err));
	free(names);
	if (e) {
		xtcam_restore_free(rs);
		ap_fail(&o, e, "%s", err);
		return e == -ETIMEDOUT ? XTCAM_EXIT_LOCK : 1;
	}
	if (json) {
		o.changes = json_object_new_array();
		o.missing = json_object_new_array();
	}
	e = xtcam_cmd_apply(c, rs, &opts, &res, err, sizeof(err));
	xtcam_close(c);
	xtcam_restore_free(rs);
	if (e) {
		json_object_put(o.changes);
		json_object_put(o.missing);
		return ap_fail(&o, e, "apply: %s", err);
	}
	if (json) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "changes", json_object_new_int64((int64_t)res.changes));
		json_object_object_add(j, "check", json_object_new_boolean(opts.check));
		json_object_object_add(j, "changed", o.changes);
		json_object_object_add(j, "missing", o.missing);
		puts(json_object_to_json_string_ext(j, (pretty ? JSON_C_TO_STRING_PRETTY :
						       JSON_C_TO_STRING_PLAIN) |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
	} else {
		printf("%zu change%s%s\n", res.changes, res.changes == 1 ? "" : "s",
		       opts.check ? " (--check: nothing changed)" : "");
	}
	return res.missing ? XTCAM_EXIT_PARTIAL : 0;
}
