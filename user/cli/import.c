// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `xtcam import tc`, and what `xtcam rule add` does with tc's words
 * (`pref` left out, `skip_hw`, `skip_sw`), which needs the block's state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "xtcam/import_tc.h"
#include "import.h"

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "xtcam: import: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nUsage: xtcam import tc FILE|- [dev DEV | block N] [netns NS] [--force]\n");
	return 2;
}

static int read_all(FILE *f, char **buf, size_t *len)
{
	size_t cap = 65536, n = 0, got;
	char *b = malloc(cap), *nb;

	if (!b)
		return -ENOMEM;
	while ((got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		free(b);
		return -EIO;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

static void print_json(const char *out, const char *msgs, bool pretty)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	const char *p = msgs;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		json_object_array_add(a, json_object_new_string_len(p, (int)l));
		p += l + (nl ? 1 : 0);
	}
	json_object_object_add(o, "config", out ? json_object_new_string(out) : NULL);
	json_object_object_add(o, "messages", a);
	puts(json_object_to_json_string_ext(o, (pretty ? JSON_C_TO_STRING_PRETTY :
					       JSON_C_TO_STRING_PLAIN) |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

int cli_import(int argc, char **argv, bool json, bool pretty)
{
	struct xtcam_import_opts o = { 0 };
	const char *file = NULL;
	char *in = NULL, *out = NULL, *msgs = NULL, *end;
	size_t len = 0;
	FILE *f;
	int i, e;

	if (argc < 1 || strcmp(argv[0], "tc"))
		return usage("\"%s\": xtcam imports from tc only (import tc FILE|-)",
			     argc ? argv[0] : "");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--force") || !strcmp(argv[i], "force")) {
			o.force = true;
		} else if (!strcmp(argv[i], "netns") && i + 1 < argc && !o.netns) {
			o.netns = argv[++i];
			if (!*o.netns || strchr(o.netns, '/') || strpbrk(o.netns, " \t\n") ||
			    o.netns[0] == '#' || strlen(o.netns) >= XTCAM_NETNS_MAX)
				return usage("netns \"%s\" is not a namespace name", o.netns);
		} else if (!strcmp(argv[i], "dev") && i + 1 < argc && !o.dev && !o.block) {
			o.dev = argv[++i];
		} else if (!strcmp(argv[i], "block") && i + 1 < argc && !o.dev && !o.block) {
			unsigned long v;

			errno = 0;
			v = strtoul(argv[++i], &end, 0);
			if (errno || *end || !v || v > 0xffffffffUL || argv[i][0] == '-')
				return usage("block \"%s\" is not a block index (1-4294967295)",
					     argv[i]);
			o.block = (unsigned)v;
		} else if (!file) {
			file = argv[i];
		} else {
			return usage("\"%s\": one FILE only", argv[i]);
		}
	}
	if (!file)
		return usage("%smissing FILE (- for stdin)", "");
	o.name = strcmp(file, "-") ? file : "stdin";
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		e = errno;
		fprintf(stderr, "xtcam: import: %s: %s (%s)\n", file, strerror(e),
			strerrorname_np(e));
		return 1;
	}
	e = read_all(f, &in, &len);
	if (f != stdin)
		fclose(f);
	if (e) {
		fprintf(stderr, "xtcam: import: %s: cannot read it: %s\n", o.name, strerror(-e));
		return 1;
	}
	e = xtcam_import_tc(in, len, &o, &out, &msgs);
	free(in);
	if (json && e != -ENOMEM) {
		print_json(out, msgs, pretty);
		free(out);
		free(msgs);
		return e ? 1 : 0;
	}
	if (msgs) {
		char *p = msgs, *nl;

		for (; *p; p = nl + 1) {
			nl = strchr(p, '\n');
			if (!nl)
				nl = p + strlen(p) - 1;
			fprintf(stderr, "xtcam: import: %.*s\n", (int)(nl - p), p);
			if (!nl[1])
				break;
		}
	}
	free(msgs);
	if (out) {
		fputs(out, stdout);
		free(out);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "xtcam: import: cannot write the output: %s\n",
				strerror(errno ? errno : EIO));
			return 1;
		}
	}
	if (e == -ENOMEM)
		fprintf(stderr, "xtcam: import: %s\n", strerror(ENOMEM));
	return e ? 1 : 0;
}

static json_object *jget(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

int cli_rule_parse(struct xtcam_ctx *c, const char *block, int argc, char **argv,
		   struct xtcam_rule *r, const struct xtcam_block_spec *spec, char *err,
		   size_t errlen)
{
	struct xtcam_rule t;
	unsigned tcf = 0;
	json_object *arr = NULL;
	char e2[XTCAM_MSG_MAX];
	size_t i, n;
	int e;

	e = xtcam_rule_parse_tc(argc, argv, &t, spec, 0, &tcf, err, errlen);
	if (e)
		return e;
	if (tcf & (XTCAM_TC_SKIP_HW | XTCAM_TC_SKIP_SW)) {
		const char *hwdev = NULL;

		e = xtcam_cmd_block_show(c, block, &arr, e2, sizeof(e2));
		if (e) {
			snprintf(err, errlen, "%s", e2);
			return e;
		}
		n = json_object_array_length(arr);
		for (i = 0; i < n && !hwdev; i++) {
			json_object *bd = jget(json_object_array_get_idx(arr, i), "bindings");
			size_t j, m = bd ? json_object_array_length(bd) : 0;

			for (j = 0; j < m && !hwdev; j++) {
				json_object *x = json_object_array_get_idx(bd, j);
				json_object *mode = jget(x, "mode");

				if (mode && !strcmp(json_object_get_string(mode), "hw"))
					hwdev = json_object_get_string(jget(x, "dev"));
			}
		}
		e = 0;
		if ((tcf & XTCAM_TC_SKIP_HW) && hwdev) {
			snprintf(err, errlen, "skip_hw: block %s runs on the NIC (bound mode "
				 "hw to %s): its rules cannot stay off it", block, hwdev);
			e = -EOPNOTSUPP;
		} else if ((tcf & XTCAM_TC_SKIP_SW) && !hwdev) {
			snprintf(err, errlen, "skip_sw: block %s is not offloaded (no mode hw "
				 "binding): a skip_sw rule would run nowhere", block);
			e = -EOPNOTSUPP;
		}
		json_object_put(arr);
		if (e)
			return e;
	}
	if (!t.prio) {
		/* tc's automatic priority: one below the lowest, or 49152 */
		unsigned lowest = 0;

		e = xtcam_cmd_rule_show(c, block, &arr, e2, sizeof(e2));
		if (e) {
			snprintf(err, errlen, "%s", e2);
			return e;
		}
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++) {
			unsigned p = (unsigned)json_object_get_int(
				jget(json_object_array_get_idx(arr, i), "prio"));

			if (p && (!lowest || p < lowest))
				lowest = p;
		}
		json_object_put(arr);
		t.prio = xtcam_tc_auto_prio(lowest);
		if (!t.prio) {
			snprintf(err, errlen, "pref: no automatic priority is left below "
				 "prio 1 in block %s", block);
			return -ERANGE;
		}
	}
	*r = t;
	return 0;
}
