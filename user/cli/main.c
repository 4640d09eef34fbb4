// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam: the command line.  Object-verb grammar as in ip, tc and bpftool;
 * unique prefixes accepted; -j/-p JSON on every command, errors too.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include "xtcam/loader.h"
#include "xtcam/syntax.h"

#define XTCAM_VERSION "0.1"

static bool json_out, pretty, verbose;
static const char *cmdname = "xtcam";

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (!verbose && lvl != LIBBPF_WARN)
		return 0;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e < 0 ? -e : e);

	return n ? n : "error";
}

/* Print the error of a command: text on stderr, or {"error": ...}. */
static int fail(int e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int e, const char *fmt, ...)
{
	char msg[XTCAM_MSG_MAX + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (json_out) {
		json_object *o = json_object_new_object();
		char full[XTCAM_MSG_MAX + 96];

		snprintf(full, sizeof(full), "%s (%s)", msg, errname(e));
		json_object_object_add(o, "error", json_object_new_string(full));
		json_object_object_add(o, "errno", json_object_new_string(errname(e)));
		puts(json_object_to_json_string_ext(o, (pretty ? JSON_C_TO_STRING_PRETTY :
						       JSON_C_TO_STRING_PLAIN) |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		fprintf(stderr, "%s: %s (%s)\n", cmdname, msg, errname(e));
	}
	return 1;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fail(EINVAL, "%s", msg);
}

static void print_json(json_object *o)
{
	puts(json_object_to_json_string_ext(o, (pretty ? JSON_C_TO_STRING_PRETTY :
					       JSON_C_TO_STRING_PLAIN) |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void ok(void)
{
	if (json_out) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "ok", json_object_new_boolean(1));
		print_json(o);
		json_object_put(o);
	}
}

static bool is_prefix(const char *arg, const char *word)
{
	size_t n = strlen(arg);

	return n && n <= strlen(word) && !strncmp(arg, word, n);
}

/* the one word of `words` that arg is a unique prefix of, or NULL */
static const char *match_word(const char *arg, const char *const *words)
{
	const char *hit = NULL;

	for (; *words; words++) {
		if (!strcmp(arg, *words))
			return *words;
		if (is_prefix(arg, *words)) {
			if (hit)
				return NULL;
			hit = *words;
		}
	}
	return hit;
}

/* --- help ------------------------------------------------------------------- */

static const char *help_main =
"Usage: xtcam [OPTIONS] OBJECT { COMMAND | help }\n"
"       xtcam save > FILE ; xtcam restore FILE|-\n"
"       xtcam flush\n"
"where  OBJECT := { block | bind | unbind | rule | counters }\n"
"       OPTIONS := { -j[son] | -p[retty] | -v[erbose] | -V[ersion] }\n";

static const char *help_block =
"Usage: xtcam block add NAME [capacity N] [default pass|drop]\n"
"                          [raw1 l2|l3|l4 OFFSET LEN] [raw2 l2|l3|l4 OFFSET LEN]\n"
"       xtcam block del NAME            (EBUSY while bound)\n"
"       xtcam block show [NAME]\n";

static const char *help_bind =
"Usage: xtcam bind NAME dev IFNAME [netns NS] [mode auto|hw|native|generic]\n"
"                  [ingress|egress] [force]\n"
"       xtcam unbind NAME dev IFNAME [netns NS]\n"
"mode auto (the default) tries hw, then native, then generic XDP.\n"
"force replaces another XDP program where libxdp's dispatcher cannot run both.\n";

static const char *help_rule =
"Usage: xtcam rule add NAME prio P [handle H] MATCH... action ACTION\n"
"       xtcam rule replace NAME handle H prio P MATCH... action ACTION\n"
"       xtcam rule del NAME handle H\n"
"       xtcam rule load NAME FILE|- [replace|check]   (one rule a line, all or none)\n"
"       xtcam rule show NAME\n"
"       xtcam rule flush NAME\n"
"       xtcam counters reset NAME\n"
"where  MATCH := { src_mac MAC[/MASK] | dst_mac MAC[/MASK] | vlan tagged|untagged |\n"
"                  vlan_id ID | vlan_prio P | vlan_ethtype T | cvlan_id ID |\n"
"                  cvlan_prio P | cvlan_ethtype T | eth_type|protocol T |\n"
"                  ip_proto tcp|udp|sctp|icmp|icmpv6|N | src_ip PREFIX | dst_ip PREFIX |\n"
"                  ip_tos V[/M] | ip_ttl V[/M] | ip_flags [no]frag[/[no]firstfrag] |\n"
"                  src_port P[-P] | dst_port P[-P] | tcp_flags V/M | type T | code C |\n"
"                  raw1 V[/M] | raw2 V[/M] }\n"
"       ACTION := { drop | pass | tx | redirect dev IFNAME [netns NS] | cpu N }\n"
"See docs/rule-syntax.md.\n";

static int help(const char *text)
{
	fputs(text, stdout);
	return 0;
}

/* --- printing ---------------------------------------------------------------- */

static const char *jget_s(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : "";
}

static int64_t jget_i(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_int64(v) : 0;
}

static void print_binding_text(json_object *bd, const char *indent)
{
	const char *netns = jget_s(bd, "netns"), *refused = jget_s(bd, "refused");
	const char *note = jget_s(bd, "note");

	printf("%sdev %s%s%s mode %s%s%s\n", indent, jget_s(bd, "dev"),
	       *netns ? " netns " : "", netns, jget_s(bd, "mode"),
	       !strcmp(jget_s(bd, "state"), "gone") ? " GONE" : "",
	       !strcmp(jget_s(bd, "requested"), "auto") ? " (auto)" : "");
	if (*refused)
		printf("%s    refused: %s\n", indent, refused);
	if (*note)
		printf("%s    note: %s\n", indent, note);
}

static void print_blocks_text(json_object *arr)
{
	size_t i, j;

	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *bd, *raw;

		printf("block %s capacity %lld default %s rules %lld entries %lld misses %lld",
		       jget_s(o, "name"), (long long)jget_i(o, "capacity"), jget_s(o, "default"),
		       (long long)jget_i(o, "rules"), (long long)jget_i(o, "entries"),
		       (long long)jget_i(o, "misses"));
		if (json_object_object_get_ex(o, "tuples", NULL))
			printf(" tuples %lld", (long long)jget_i(o, "tuples"));
		for (j = 1; j <= 2; j++) {
			char k[8];

			snprintf(k, sizeof(k), "raw%zu", j);
			if (json_object_object_get_ex(o, k, &raw))
				printf(" %s %s %lld %lld", k, jget_s(raw, "layer"),
				       (long long)jget_i(raw, "offset"), (long long)jget_i(raw, "len"));
		}
		printf("\n");
		if (json_object_object_get_ex(o, "bindings", &bd))
			for (j = 0; j < json_object_array_length(bd); j++)
				print_binding_text(json_object_array_get_idx(bd, j), "    ");
		if (json_object_object_get_ex(o, "notes", &bd))
			for (j = 0; j < json_object_array_length(bd); j++)
				printf("    note: %s\n",
				       json_object_get_string(json_object_array_get_idx(bd, j)));
	}
}

static void print_rules_text(json_object *arr)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *m, *a, *lu;
		const char *netns;

		printf("handle %lld prio %lld", (long long)jget_i(o, "handle"),
		       (long long)jget_i(o, "prio"));
		if (json_object_object_get_ex(o, "match", &m)) {
			json_object_object_foreach(m, k, v)
				printf(" %s %s", k, json_object_get_string(v));
		}
		if (json_object_object_get_ex(o, "action", &a)) {
			printf(" action %s", jget_s(a, "type"));
			if (!strcmp(jget_s(a, "type"), "redirect")) {
				netns = jget_s(a, "netns");
				printf(" dev %s%s%s", jget_s(a, "dev"), *netns ? " netns " : "", netns);
			} else if (!strcmp(jget_s(a, "type"), "cpu")) {
				printf(" %lld", (long long)jget_i(a, "cpu"));
			}
		}
		printf("\n    entries %lld packets %lld bytes %lld", (long long)jget_i(o, "entries"),
		       (long long)jget_i(o, "packets"), (long long)jget_i(o, "bytes"));
		if (json_object_object_get_ex(o, "last_used", &lu) && lu)
			printf(" used %.1fs ago", json_object_get_double(lu));
		printf("\n");
	}
}

/* --- commands ----------------------------------------------------------------- */

/* flags: XTCAM_OPEN_CREATE for the commands that make blocks; the others
 * find no registry as no blocks, and leave none behind */
static struct xtcam_ctx *open_ctx(const char *block, unsigned int flags, int *rc)
{
	const char *blocks[] = { block, NULL };
	char err[XTCAM_MSG_MAX];
	struct xtcam_ctx *c;
	int e = xtcam_open(&c, flags, block ? blocks : NULL, err, sizeof(err));

	if (e) {
		*rc = fail(e, "%s", err);
		return NULL;
	}
	return c;
}

static int do_block(int argc, char **argv)
{
	static const char *const verbs[] = { "add", "del", "delete", "show", "list", "help", NULL };
	const char *v = argc ? match_word(argv[0], verbs) : "show";
	char err[XTCAM_MSG_MAX];
	struct xtcam_ctx *c;
	int rc = 0, e;

	if (!v)
		return usage_error("block: unknown command \"%s\" (add, del, show)", argv[0]);
	if (!strcmp(v, "help"))
		return help(help_block);
	if (!strcmp(v, "add")) {
		struct xtcam_block_spec spec;

		if (argc < 2)
			return usage_error("block add: missing NAME");
		e = xtcam_block_spec_parse(argc - 1, argv + 1, &spec, err, sizeof(err));
		if (e)
			return fail(e, "block add: %s", err);
		if (!(c = open_ctx(NULL, XTCAM_OPEN_CREATE, &rc)))
			return rc;
		e = xtcam_cmd_block_add(c, &spec, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "block add: %s", err);
		ok();
		return 0;
	}
	if (!strcmp(v, "del") || !strcmp(v, "delete")) {
		if (argc != 2)
			return usage_error("block del: NAME, and nothing else");
		if (!(c = open_ctx(NULL, 0, &rc)))
			return rc;
		e = xtcam_cmd_block_del(c, argv[1], err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "block del: %s", err);
		ok();
		return 0;
	}
	/* show [NAME] */
	{
		json_object *arr;

		if (argc > 2)
			return usage_error("block show: [NAME], and nothing else");
		if (!(c = open_ctx(NULL, 0, &rc)))
			return rc;
		e = xtcam_cmd_block_show(c, argc == 2 ? argv[1] : NULL, &arr, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "block show: %s", err);
		if (json_out)
			print_json(arr);
		else
			print_blocks_text(arr);
		json_object_put(arr);
		return 0;
	}
}

static int do_bind(int argc, char **argv, bool unbind)
{
	static const char *const words[] = { "dev", "netns", "mode", "ingress", "egress", "force",
					     NULL };
	struct xtcam_bind_req r = { 0 };
	const char *what = unbind ? "unbind" : "bind";
	char err[XTCAM_MSG_MAX];
	struct xtcam_ctx *c;
	int i, rc = 0, e;

	if (argc && !strcmp(argv[0], "help"))
		return help(help_bind);
	if (argc < 1)
		return usage_error("%s: missing block NAME", what);
	r.block = argv[0];
	for (i = 1; i < argc; i++) {
		const char *w = match_word(argv[i], words);

		if (!w)
			return usage_error("%s: unknown keyword \"%s\"", what, argv[i]);
		if (!strcmp(w, "ingress") || !strcmp(w, "egress") || !strcmp(w, "force")) {
			if (unbind)
				return usage_error("unbind: \"%s\" does not apply", w);
			if (!strcmp(w, "egress"))
				r.egress = true;
			if (!strcmp(w, "force"))
				r.force = true;
			continue;
		}
		if (i + 1 >= argc)
			return usage_error("%s: %s: missing value", what, w);
		if (!strcmp(w, "dev"))
			r.dev = argv[++i];
		else if (!strcmp(w, "netns"))
			r.netns = argv[++i];
		else if (!unbind)
			r.mode = argv[++i];
		else
			return usage_error("unbind: \"mode\" does not apply");
	}
	if (!r.dev)
		return usage_error("%s: missing dev IFNAME", what);
	if (!(c = open_ctx(r.block, 0, &rc)))
		return rc;
	if (unbind) {
		e = xtcam_cmd_unbind(c, r.block, r.dev, r.netns, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "%s", err);
		ok();
		return 0;
	} else {
		json_object *o = NULL;

		e = xtcam_cmd_bind(c, &r, &o, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "%s", err);
		if (json_out) {
			print_json(o);
		} else {
			printf("block %s bound to ", r.block);
			print_binding_text(o, "");
		}
		json_object_put(o);
		return 0;
	}
}

static int read_rules(const char *block, const char *file, const struct xtcam_block_spec *spec,
		      struct xtcam_rule **out, size_t *nout)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	struct xtcam_rule *rules = NULL;
	size_t n = 0, cap = 0, len = 0;
	char *line = NULL, err[XTCAM_MSG_MAX];
	unsigned long lineno = 0;
	int e;

	if (!f)
		return fail(errno, "rule load: %s: %s", file, strerror(errno));
	while (getline(&line, &len, f) >= 0) {
		struct xtcam_rule r;

		lineno++;
		e = xtcam_rule_parse_line(line, &r, spec, err, sizeof(err));
		if (e == 1)
			continue;
		if (e) {
			free(line);
			free(rules);
			if (f != stdin)
				fclose(f);
			return fail(e, "rule load: block %s: %s:%lu: %s (nothing loaded)", block,
				    strcmp(file, "-") ? file : "stdin", lineno, err);
		}
		if (n == cap) {
			struct xtcam_rule *p;

			cap = cap ? cap * 2 : 1024;
			p = realloc(rules, cap * sizeof(*p));
			if (!p) {
				free(line);
				free(rules);
				return fail(ENOMEM, "rule load: out of memory");
			}
			rules = p;
		}
		rules[n++] = r;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	*out = rules;
	*nout = n;
	return 0;
}

static int do_rule(int argc, char **argv)
{
	static const char *const verbs[] = { "add", "replace", "del", "delete", "load", "show",
					     "list", "flush", "help", NULL };
	const char *v = argc ? match_word(argv[0], verbs) : NULL;
	char err[XTCAM_MSG_MAX];
	struct xtcam_block_spec spec;
	struct xtcam_ctx *c;
	const char *block;
	int rc = 0, e;

	if (!v)
		return argc ? usage_error("rule: unknown command \"%s\" (add, replace, del, load, "
					  "show, flush)", argv[0]) : help(help_rule);
	if (!strcmp(v, "help"))
		return help(help_rule);
	if (argc < 2)
		return usage_error("rule %s: missing block NAME", v);
	block = argv[1];
	if (!(c = open_ctx(block, 0, &rc)))
		return rc;
	if (xtcam_block_spec_get(c, block, &spec)) {
		xtcam_close(c);
		return fail(ENOENT, "rule %s: block %s: no such block", v, block);
	}
	if (!strcmp(v, "add") || !strcmp(v, "replace")) {
		struct xtcam_rule r;

		e = xtcam_rule_parse(argc - 2, argv + 2, &r, &spec, err, sizeof(err));
		if (e) {
			xtcam_close(c);
			return fail(e, "rule %s: %s", v, err);
		}
		if (!strcmp(v, "replace") && !r.handle) {
			xtcam_close(c);
			return usage_error("rule replace: handle H is required");
		}
		e = xtcam_cmd_rule(c, block, !strcmp(v, "add") ? XTCAM_VERB_ADD : XTCAM_VERB_REPLACE,
				   &r, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "%s", err);
		if (json_out) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "handle", json_object_new_int64(r.handle));
			print_json(o);
			json_object_put(o);
		}
		return 0;
	}
	if (!strcmp(v, "del") || !strcmp(v, "delete")) {
		struct xtcam_rule r;
		char *end;
		unsigned long h;

		memset(&r, 0, sizeof(r));
		if (argc != 4 || strcmp(argv[2], "handle")) {
			xtcam_close(c);
			return usage_error("rule del: NAME handle H");
		}
		errno = 0;
		h = strtoul(argv[3], &end, 0);
		if (errno || *end || !h || h > UINT32_MAX || argv[3][0] == '-') {
			xtcam_close(c);
			return usage_error("rule del: handle: \"%s\" is not a handle (1-4294967295)",
					   argv[3]);
		}
		r.handle = (__u32)h;
		e = xtcam_cmd_rule(c, block, XTCAM_VERB_DEL, &r, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "%s", err);
		ok();
		return 0;
	}
	if (!strcmp(v, "load")) {
		bool replace = false, check = false;
		struct xtcam_rule *rules = NULL;
		size_t n = 0;

		if (argc < 3 || argc > 4) {
			xtcam_close(c);
			return usage_error("rule load: NAME FILE|- [replace|check]");
		}
		if (argc == 4) {
			static const char *const w[] = { "replace", "check", NULL };
			const char *m = match_word(argv[3], w);

			if (!m) {
				xtcam_close(c);
				return usage_error("rule load: \"%s\": not replace or check", argv[3]);
			}
			replace = !strcmp(m, "replace");
			check = !strcmp(m, "check");
		}
		rc = read_rules(block, argv[2], &spec, &rules, &n);
		if (rc) {
			xtcam_close(c);
			return rc;
		}
		e = xtcam_cmd_rule_load(c, block, rules, n, replace, check, err, sizeof(err));
		xtcam_close(c);
		free(rules);
		if (e)
			return fail(e, "rule load: %s (nothing loaded)", err);
		if (json_out) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "rules", json_object_new_int64((int64_t)n));
			json_object_object_add(o, check ? "checked" : "loaded",
					       json_object_new_boolean(1));
			print_json(o);
			json_object_put(o);
		} else if (check) {
			printf("%zu rules: ok\n", n);
		}
		return 0;
	}
	if (!strcmp(v, "flush")) {
		e = xtcam_cmd_rule_flush(c, block, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "rule flush: %s", err);
		ok();
		return 0;
	}
	/* show */
	{
		json_object *arr;

		e = xtcam_cmd_rule_show(c, block, &arr, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "rule show: %s", err);
		if (json_out)
			print_json(arr);
		else
			print_rules_text(arr);
		json_object_put(arr);
		return 0;
	}
}

static int do_counters(int argc, char **argv)
{
	char err[XTCAM_MSG_MAX];
	struct xtcam_ctx *c;
	int rc = 0, e;

	if (argc != 2 || !is_prefix(argv[0], "reset"))
		return usage_error("counters: reset NAME");
	if (!(c = open_ctx(argv[1], 0, &rc)))
		return rc;
	e = xtcam_cmd_counters_reset(c, argv[1], err, sizeof(err));
	xtcam_close(c);
	if (e)
		return fail(e, "counters reset: %s", err);
	ok();
	return 0;
}

static int do_save(int argc)
{
	char err[XTCAM_MSG_MAX], *text;
	struct xtcam_ctx *c;
	int rc = 0, e;

	if (argc)
		return usage_error("save: takes no arguments (xtcam save > FILE)");
	if (!(c = open_ctx("*", 0, &rc)))
		return rc;
	e = xtcam_cmd_save(c, &text, err, sizeof(err));
	xtcam_close(c);
	if (e)
		return fail(e, "%s", err);
	if (json_out) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "config", json_object_new_string(text));
		print_json(o);
		json_object_put(o);
	} else {
		fputs(text, stdout);
	}
	free(text);
	return 0;
}

/* --- restore ------------------------------------------------------------------- */

struct rblock {
	struct xtcam_block_spec spec;
	struct xtcam_rule *rules;
	size_t n, cap;
};

struct rbind {
	char *argv[16];
	int argc;
	char *line;
	unsigned long lineno;
};

static int do_restore(int argc, char **argv)
{
	const char *file;
	FILE *f;
	char *line = NULL, err[XTCAM_MSG_MAX];
	size_t len = 0, nb = 0, nbind = 0, i;
	struct rblock *blocks = NULL;
	struct rbind *binds = NULL;
	unsigned long lineno = 0;
	struct xtcam_ctx *c = NULL;
	int rc = 0, e = 0;
	size_t done_blocks = 0, done_binds = 0;

	if (argc != 1)
		return usage_error("restore: FILE|-");
	file = argv[0];
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		return fail(errno, "restore: %s: %s", file, strerror(errno));
	/* 1. read and check everything */
	while (!rc && getline(&line, &len, f) >= 0) {
		int wc;
		char **w;

		lineno++;
		if (xtcam_split_words(line, &wc, &w)) {
			rc = fail(ENOMEM, "restore: out of memory");
			break;
		}
		if (!wc) {
			free(w);
			continue;
		}
		if (!strcmp(w[0], "block") && wc >= 3 && !strcmp(w[1], "add")) {
			struct rblock *p = realloc(blocks, (nb + 1) * sizeof(*p));

			if (!p) {
				free(w);
				rc = fail(ENOMEM, "restore: out of memory");
				break;
			}
			blocks = p;
			memset(&blocks[nb], 0, sizeof(blocks[nb]));
			e = xtcam_block_spec_parse(wc - 2, w + 2, &blocks[nb].spec, err, sizeof(err));
			if (e)
				rc = fail(e, "restore: %s:%lu: %s (nothing restored)", file, lineno, err);
			for (i = 0; !rc && i < nb; i++)
				if (!strcmp(blocks[i].spec.name, blocks[nb].spec.name))
					rc = fail(EEXIST, "restore: %s:%lu: block %s twice", file, lineno,
						  blocks[nb].spec.name);
			nb++;
		} else if (!strcmp(w[0], "rule") && wc >= 3 && !strcmp(w[1], "add")) {
			struct rblock *b = NULL;
			struct xtcam_rule r;

			for (i = 0; i < nb; i++)
				if (!strcmp(blocks[i].spec.name, w[2]))
					b = &blocks[i];
			if (!b) {
				rc = fail(ENOENT, "restore: %s:%lu: rule for block %s before its "
					  "`block add`", file, lineno, w[2]);
			} else if ((e = xtcam_rule_parse(wc - 3, w + 3, &r, &b->spec, err,
							 sizeof(err)))) {
				rc = fail(e, "restore: %s:%lu: %s (nothing restored)", file, lineno, err);
			} else {
				if (b->n == b->cap) {
					struct xtcam_rule *p;

					b->cap = b->cap ? 2 * b->cap : 256;
					p = realloc(b->rules, b->cap * sizeof(*p));
					if (!p) {
						free(w);
						rc = fail(ENOMEM, "restore: out of memory");
						break;
					}
					b->rules = p;
				}
				b->rules[b->n++] = r;
			}
		} else if (!strcmp(w[0], "bind") && wc >= 2) {
			struct rbind *p = realloc(binds, (nbind + 1) * sizeof(*p));

			if (!p || wc > 16) {
				rc = fail(p ? EINVAL : ENOMEM, "restore: %s:%lu: bad bind line", file, lineno);
				free(w);
				if (p)
					binds = p;
				break;
			}
			binds = p;
			binds[nbind].line = strdup(line);
			free(w);
			if (!binds[nbind].line ||
			    xtcam_split_words(binds[nbind].line, &binds[nbind].argc, &w)) {
				rc = fail(ENOMEM, "restore: out of memory");
				break;
			}
			memcpy(binds[nbind].argv, w, sizeof(char *) * (size_t)binds[nbind].argc);
			free(w);
			w = NULL;
			binds[nbind].lineno = lineno;
			nbind++;
		} else {
			rc = fail(EINVAL, "restore: %s:%lu: not a line of `xtcam save`: \"%s\"", file,
				  lineno, w[0]);
		}
		free(w);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (rc)
		goto out;
	/* 2. apply, undoing it all if anything fails */
	if (!(c = open_ctx("*", XTCAM_OPEN_CREATE, &rc)))
		goto out;
	for (i = 0; i < nb; i++) {
		struct xtcam_block_spec tmp;

		if (!xtcam_block_spec_get(c, blocks[i].spec.name, &tmp)) {
			rc = fail(EEXIST, "restore: block %s exists (xtcam flush first; nothing restored)",
				  blocks[i].spec.name);
			goto out;
		}
	}
	for (i = 0; i < nb; i++) {
		e = xtcam_cmd_block_add(c, &blocks[i].spec, err, sizeof(err));
		if (!e) {
			done_blocks++;
			e = xtcam_cmd_rule_load(c, blocks[i].spec.name, blocks[i].rules, blocks[i].n,
						false, false, err, sizeof(err));
		}
		if (e) {
			rc = fail(e, "restore: %s (nothing restored)", err);
			goto undo;
		}
	}
	for (i = 0; i < nbind; i++) {
		struct xtcam_bind_req r = { 0 };
		int j, n = binds[i].argc;
		char **a = binds[i].argv;

		r.block = n > 1 ? a[1] : "";
		for (j = 2; j + 1 < n; j += 2) {
			if (!strcmp(a[j], "dev"))
				r.dev = a[j + 1];
			else if (!strcmp(a[j], "netns"))
				r.netns = a[j + 1];
			else if (!strcmp(a[j], "mode"))
				r.mode = a[j + 1];
			else if (!strcmp(a[j], "egress") || !strcmp(a[j], "force")) {
				r.egress |= !strcmp(a[j], "egress");
				r.force |= !strcmp(a[j], "force");
				j--;
			}
		}
		if (j < n && !strcmp(a[j], "egress"))
			r.egress = true;
		if (!r.dev) {
			rc = fail(EINVAL, "restore: %s:%lu: bind without dev (nothing restored)", file,
				  binds[i].lineno);
			goto undo;
		}
		e = xtcam_cmd_bind(c, &r, NULL, err, sizeof(err));
		if (e) {
			rc = fail(e, "restore: %s:%lu: %s (nothing restored)", file, binds[i].lineno,
				  err);
			goto undo;
		}
		done_binds++;
	}
	ok();
	goto out;
undo:
	while (done_binds--) {
		struct rbind *b = &binds[done_binds];
		int j;
		const char *dev = NULL, *netns = NULL;

		for (j = 2; j + 1 < b->argc; j++) {
			if (!strcmp(b->argv[j], "dev"))
				dev = b->argv[j + 1];
			if (!strcmp(b->argv[j], "netns"))
				netns = b->argv[j + 1];
		}
		if (dev)
			xtcam_cmd_unbind(c, b->argv[1], dev, netns, err, sizeof(err));
	}
	while (done_blocks--)
		xtcam_cmd_block_del(c, blocks[done_blocks].spec.name, err, sizeof(err));
out:
	xtcam_close(c);
	for (i = 0; i < nb; i++)
		free(blocks[i].rules);
	free(blocks);
	for (i = 0; i < nbind; i++)
		free(binds[i].line);
	free(binds);
	return rc;
}

static int do_flush(int argc)
{
	char err[XTCAM_MSG_MAX];
	struct xtcam_ctx *c;
	int rc = 0, e;

	if (argc)
		return usage_error("flush: takes no arguments");
	if (!(c = open_ctx(NULL, 0, &rc)))
		return rc;
	e = xtcam_cmd_flush(c, err, sizeof(err));
	xtcam_close(c);
	if (e)
		return fail(e, "flush: %s", err);
	ok();
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char *const objects[] = { "block", "bind", "unbind", "rule", "counters",
					       "save", "restore", "flush", "help", NULL };
	const char *obj;
	int o;

	/* global options also at the end: xtcam rule show edge -j */
	while (argc > 2) {
		const char *a = argv[argc - 1];

		if (!strcmp(a, "-j") || !strcmp(a, "--json"))
			json_out = true;
		else if (!strcmp(a, "-p") || !strcmp(a, "--pretty"))
			json_out = pretty = true;
		else if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
			verbose = true;
		else
			break;
		argc--;
	}
	while ((o = getopt_long(argc, argv, "+jpvVh", opts, NULL)) != -1) {
		switch (o) {
		case 'j': json_out = true; break;
		case 'p': json_out = pretty = true; break;
		case 'v': verbose = true; break;
		case 'V': printf("xtcam %s (libbpf %s)\n", XTCAM_VERSION, libbpf_version_string());
			  return 0;
		case 'h': return help(help_main);
		default:
			fputs(help_main, stderr);
			return 2;
		}
	}
	libbpf_set_print(libbpf_print);
	if (verbose)
		setenv("XTCAM_VERBOSE", "1", 1);
	argc -= optind;
	argv += optind;
	if (!argc) {
		fputs(help_main, stderr);
		return 2;
	}
	obj = match_word(argv[0], objects);
	if (!obj)
		return usage_error("unknown object \"%s\" (block, bind, unbind, rule, counters, "
				   "save, restore, flush)", argv[0]);
	if (!strcmp(obj, "help"))
		return help(argc > 1 && is_prefix(argv[1], "rule") ? help_rule :
			    argc > 1 && is_prefix(argv[1], "block") ? help_block :
			    argc > 1 && is_prefix(argv[1], "bind") ? help_bind : help_main);
	if (!strcmp(obj, "block"))
		return do_block(argc - 1, argv + 1);
	if (!strcmp(obj, "bind"))
		return do_bind(argc - 1, argv + 1, false);
	if (!strcmp(obj, "unbind"))
		return do_bind(argc - 1, argv + 1, true);
	if (!strcmp(obj, "rule"))
		return do_rule(argc - 1, argv + 1);
	if (!strcmp(obj, "counters"))
		return do_counters(argc - 1, argv + 1);
	if (!strcmp(obj, "save"))
		return do_save(argc - 1);
	if (!strcmp(obj, "restore"))
		return do_restore(argc - 1, argv + 1);
	return do_flush(argc - 1);
}
