// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam metrics: what `block show` and `rule show` read, in the Prometheus
 * text exposition format (version 0.0.4), for node_exporter's textfile
 * collector or any scraper.
 *
 * Per block: misses (packets and bytes), rules, TCAM entries used and the
 * capacity, and its bindings (mode, state).  Per rule, only when asked
 * (--rules, or --rules=BLOCK,... for some blocks): packets and bytes, with
 * the labels block, handle, prio and action; a block of a million rules
 * would otherwise be two million series.
 *
 * --output FILE writes a temporary file beside FILE and renames it over
 * FILE, so that a reader sees the old text or the new, never half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "xtcam/loader.h"
#include "cli/metrics.h"
#include "cli/cli.h"

#ifndef XTCAM_VERSION
#define XTCAM_VERSION "unknown"
#endif
#define EXIT_LOCK 4

static int merr(int e, const char *fmt, const char *a, const char *b)
{
	char msg[XTCAM_MSG_MAX + 256];
	const char *n = strerrorname_np(e < 0 ? -e : e);

	snprintf(msg, sizeof(msg), fmt, a, b);
	fprintf(stderr, "xtcam: metrics: %s (%s)\n", msg, n ? n : "error");
	return e == -ETIMEDOUT ? EXIT_LOCK : 1;
}

/* a label value: backslash, double quote and newline escaped as the
 * format wants them */
static void label(FILE *f, const char *name, const char *v, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* one series per block: key of block show */
static void block_family(FILE *f, json_object *blocks, const char *name, const char *type,
			 const char *help, const char *key)
{
	size_t i;

	family(f, name, type, help);
	for (i = 0; i < json_object_array_length(blocks); i++) {
		json_object *b = json_object_array_get_idx(blocks, i);

		fprintf(f, "%s{", name);
		label(f, "block", jget_s(b, "name"), true);
		fprintf(f, "} %lld\n", (long long)jget_i(b, key));
	}
}

/* one series per binding: info (every label, value 1) or active (0/1) */
static void binding_family(FILE *f, json_object *blocks, bool info)
{
	size_t i, j;

	if (info)
		family(f, "xtcam_binding_info", "gauge",
		       "A binding of a block to a device: its mode, the mode asked for, its state.");
	else
		family(f, "xtcam_binding_active", "gauge",
		       "1 while the binding's program is attached, 0 when its device, namespace "
		       "or program is gone.");
	for (i = 0; i < json_object_array_length(blocks); i++) {
		json_object *b = json_object_array_get_idx(blocks, i), *bd;

		if (!json_object_object_get_ex(b, "bindings", &bd) || !bd)
			continue;
		for (j = 0; j < json_object_array_length(bd); j++) {
			json_object *o = json_object_array_get_idx(bd, j);
			bool active = !strcmp(jget_s(o, "state"), "active");

			fprintf(f, "%s{", info ? "xtcam_binding_info" : "xtcam_binding_active");
			label(f, "block", jget_s(b, "name"), true);
			label(f, "dev", jget_s(o, "dev"), false);
			label(f, "netns", jget_s(o, "netns"), false);
			if (info) {
				label(f, "mode", jget_s(o, "mode"), false);
				label(f, "requested", jget_s(o, "requested"), false);
				label(f, "state", jget_s(o, "state"), false);
			}
			fprintf(f, "} %d\n", info ? 1 : active);
		}
	}
}

struct rule_set {
	const char *block;
	json_object *rules;     /* rule show's array */
};

static void rule_family(FILE *f, const struct rule_set *rs, size_t n, bool bytes)
{
	const char *name = bytes ? "xtcam_rule_bytes_total" : "xtcam_rule_packets_total";
	size_t i, j;

	family(f, name, "counter", bytes ? "Bytes of the frames the rule matched." :
	       "Frames the rule matched.");
	for (i = 0; i < n; i++)
		for (j = 0; j < json_object_array_length(rs[i].rules); j++) {
			json_object *r = json_object_array_get_idx(rs[i].rules, j), *a;
			char h[24], p[24];

			snprintf(h, sizeof(h), "%lld", (long long)jget_i(r, "handle"));
			snprintf(p, sizeof(p), "%lld", (long long)jget_i(r, "prio"));
			fprintf(f, "%s{", name);
			label(f, "block", rs[i].block, true);
			label(f, "handle", h, false);
			label(f, "prio", p, false);
			label(f, "action", json_object_object_get_ex(r, "action", &a) && a ?
			      jget_s(a, "type") : "", false);
			fprintf(f, "} %lld\n", (long long)jget_i(r, bytes ? "bytes" : "packets"));
		}
}

static void print_all(FILE *f, json_object *blocks, const struct rule_set *rs, size_t nrs)
{
	family(f, "xtcam_info", "gauge", "The version of xtcam that wrote these metrics.");
	fprintf(f, "xtcam_info{");
	label(f, "version", XTCAM_VERSION, true);
	fprintf(f, "} 1\n");
	block_family(f, blocks, "xtcam_block_misses_total", "counter",
		     "Frames that matched no rule of the block (its default action).", "misses");
	block_family(f, blocks, "xtcam_block_miss_bytes_total", "counter",
		     "Bytes of the frames that matched no rule of the block.", "miss_bytes");
	block_family(f, blocks, "xtcam_block_rules", "gauge", "Rules in the block.", "rules");
	block_family(f, blocks, "xtcam_block_tcam_entries", "gauge",
		     "TCAM entries the block's rules use (a port range takes several).", "entries");
	block_family(f, blocks, "xtcam_block_tcam_capacity", "gauge",
		     "TCAM entries the block has room for.", "capacity");
	binding_family(f, blocks, true);
	binding_family(f, blocks, false);
	if (nrs) {
		rule_family(f, rs, nrs, false);
		rule_family(f, rs, nrs, true);
	}
}

/* FILE.PID.tmp beside FILE (readable by all: node_exporter is not root),
 * then renamed over FILE */
static int write_atomic(const char *path, json_object *blocks, const struct rule_set *rs,
			size_t nrs)
{
	size_t len = strlen(path) + 32;
	char *tmp = malloc(len);
	FILE *f = NULL;
	int fd, e = 0;

	if (!tmp)
		return merr(ENOMEM, "%s%s: out of memory", path, "");
	snprintf(tmp, len, "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || fchmod(fd, 0644) || !(f = fdopen(fd, "w"))) {
		e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return merr(e, "--output %s: %s", path, strerror(e));
	}
	print_all(f, blocks, rs, nrs);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		e = errno ? errno : EIO;
	if (fclose(f) && !e)
		e = errno ? errno : EIO;
	if (!e && rename(tmp, path))
		e = errno;
	if (e) {
		unlink(tmp);
		free(tmp);
		return merr(e, "--output %s: %s (left as it was)", path, strerror(e));
	}
	free(tmp);
	return 0;
}

static const char *usage =
"Usage: xtcam metrics [BLOCK] [--rules[=BLOCK,...]] [--output FILE]\n"
"The counters in the Prometheus text format: per block misses, rules, TCAM\n"
"entries and capacity, bindings; per rule packets and bytes with --rules\n"
"(every block shown) or --rules=BLOCK,... (those blocks).  --output FILE\n"
"replaces FILE atomically (node_exporter's textfile collector).\n";

int xtcam_cli_metrics(int argc, char **argv)
{
	const char *block = NULL, *out = NULL, *rules_arg = NULL;
	char err[XTCAM_MSG_MAX], *list = NULL;
	const char **names = NULL;
	struct rule_set *rs = NULL;
	json_object *blocks = NULL;
	struct xtcam_ctx *c = NULL;
	bool rules = false;
	size_t nnames = 0, nrs = 0, i;
	int rc = 0, e;

	for (i = 0; i < (size_t)argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--rules")) {
			rules = true;
		} else if (!strncmp(a, "--rules=", 8)) {
			rules = true;
			rules_arg = a + 8;
		} else if (!strcmp(a, "--output") || !strcmp(a, "-o")) {
			if (++i == (size_t)argc)
				return merr(EINVAL, "%s%s: missing FILE", a, "");
			out = argv[i];
		} else if (!strncmp(a, "--output=", 9)) {
			out = a + 9;
		} else if (!strcmp(a, "help")) {
			fputs(usage, stdout);
			return 0;
		} else if (a[0] == '-' || block) {
			fputs(usage, stderr);
			return merr(EINVAL, "\"%s\"%s: not a block name or option", a, "");
		} else {
			block = a;
		}
	}
	if (out && !*out)
		return merr(EINVAL, "--output%s%s: an empty file name", "", "");
	/* the blocks whose rules are read: BLOCK, the --rules list, or all */
	if (rules_arg) {
		char *save = NULL, *t;

		if (!(list = strdup(rules_arg)))
			return merr(ENOMEM, "%s%s: out of memory", "--rules", "");
		for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			const char **p = realloc(names, (nnames + 2) * sizeof(*p));

			if (!p) {
				rc = merr(ENOMEM, "%s%s: out of memory", "--rules", "");
				goto out;
			}
			names = p;
			names[nnames++] = t;
			names[nnames] = NULL;
		}
		if (!nnames) {
			rc = merr(EINVAL, "--rules=%s%s: no block named", rules_arg, "");
			goto out;
		}
	} else if (rules) {
		static const char *all[] = { "*", NULL };
		static const char *one[] = { NULL, NULL };

		one[0] = block;
		names = malloc(2 * sizeof(*names));
		if (!names) {
			rc = merr(ENOMEM, "%s%s: out of memory", "--rules", "");
			goto out;
		}
		memcpy(names, block ? one : all, 2 * sizeof(*names));
		nnames = 1;
	}
	e = xtcam_open(&c, 0, names, err, sizeof(err));
	if (e) {
		rc = merr(e, "%s%s", err, "");
		goto out;
	}
	e = xtcam_cmd_block_show(c, block, &blocks, err, sizeof(err));
	if (e) {
		rc = merr(e, "%s%s", err, "");
		goto out;
	}
	if (rules) {
		size_t nb = json_object_array_length(blocks);

		rs = calloc(rules_arg ? nnames : nb ? nb : 1, sizeof(*rs));
		if (!rs) {
			rc = merr(ENOMEM, "%s%s: out of memory", "--rules", "");
			goto out;
		}
		for (i = 0; i < (rules_arg ? nnames : nb); i++) {
			const char *b = rules_arg ? names[i] :
				jget_s(json_object_array_get_idx(blocks, i), "name");

			e = xtcam_cmd_rule_show(c, b, &rs[nrs].rules, err, sizeof(err));
			if (e) {
				rc = merr(e, "--rules: %s%s", err, "");
				goto out;
			}
			rs[nrs++].block = b;
		}
	}
	xtcam_close(c);
	c = NULL;
	if (out)
		rc = write_atomic(out, blocks, rs, nrs);
	else {
		print_all(stdout, blocks, rs, nrs);
		if (fflush(stdout) || ferror(stdout))
			rc = merr(errno ? errno : EIO, "writing the output: %s%s",
				  strerror(errno ? errno : EIO), "");
	}
out:
	if (c)
		xtcam_close(c);
	for (i = 0; i < nrs; i++)
		json_object_put(rs[i].rules);
	free(rs);
	json_object_put(blocks);
	free(names);
	free(list);
	return rc;
}
