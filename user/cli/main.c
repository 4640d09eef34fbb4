// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam: the command line.  Object-verb grammar as in ip, tc and bpftool;
 * unique prefixes accepted; -j/-p JSON on every command, errors too.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include "xtcam/compile.h"
#include "xtcam/jstream.h"
#include "xtcam/loader.h"
#include "xtcam/syntax.h"
#include "cli/metrics.h"
#include "cli.h"
#include "import.h"
#include "progress.h"
#include "rpack.h"
#include "rload.h"

#ifndef XTCAM_VERSION
#define XTCAM_VERSION "unknown"       /* the Makefile gives VERSION */
#endif
#define EXIT_LOCK 4     /* another xtcam held the lock for longer than -w */

static bool json_out, pretty;
static int verbose;             /* -v: libbpf's warnings; -v -v: its whole log */
static const char *cmdname = "xtcam";

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (verbose < (lvl == LIBBPF_WARN ? 1 : 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* s with control characters and DEL as \xNN (as the rule language quotes
 * words in its messages), for text output: a device or namespace name
 * from the command line must not end a line or move the cursor */
static const char *esc(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
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

	cli_progress_done();    /* the message on a line of its own */
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
		char e_msg[4 * sizeof(msg)];

		fprintf(stderr, "%s: %s (%s)\n", cmdname, esc(e_msg, sizeof(e_msg), msg), errname(e));
	}
	/* gave up waiting (-w): for the lock, or for a reader of the
	 * generation a change writes */
	return e == -ETIMEDOUT ? EXIT_LOCK : 1;
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
"       xtcam apply [--check] [--prune] [--bindings-for DEV] FILE|-\n"
"       xtcam [OPTIONS] [-force] -batch FILE|-\n"
"       xtcam flush\n"
"       xtcam metrics [BLOCK] [--rules[=BLOCK,...]] [--output FILE]\n"
"       xtcam import tc FILE|- [dev DEV | block N] [netns NS] [--force] > FILE\n"
"where  OBJECT := { block | bind | unbind | rule | counters }\n"
"       OPTIONS := { -j[son] | -p[retty] | -v[erbose] | -V[ersion] |\n"
"                    -w[ait] SECONDS }\n"
"       xtcam OBJECT help, xtcam OBJECT COMMAND --help: that object's usage\n"
"-v shows libbpf's and libxdp's warnings, -v -v their whole log.\n"
"-w SECONDS: how long to wait for the lock another xtcam holds (default 30;\n"
"0: fail at once).  Exit status: 0 done, 1 refused or failed, 2 bad options,\n"
"3 apply left out bindings (no such device or netns), 4 the lock (or a\n"
"reader's pin on what a change writes) was still held after -w SECONDS.\n"
"-batch: one command a line, each its own commit; stops at the first that\n"
"fails (-force: goes on, exits 1).\n";

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
"       xtcam rule show NAME [handle H]\n"
"       xtcam rule flush NAME\n"
"       xtcam counters reset NAME\n"
"where  MATCH := { src_mac MAC[/MASK] | dst_mac MAC[/MASK] | vlan tagged|untagged |\n"
"                  vlan_id ID | vlan_prio P | vlan_ethtype T | cvlan_id ID |\n"
"                  cvlan_prio P | cvlan_ethtype T | eth_type|protocol T |\n"
"                  ip_proto tcp|udp|sctp|icmp|icmpv6|HEX | src_ip PREFIX | dst_ip PREFIX |\n"
"                  ip_tos V[/M] | ip_ttl V[/M] | ip_flags [no]frag[/[no]firstfrag] |\n"
"                  src_port P[-P] | dst_port P[-P] | tcp_flags HEX[/HEX] | type T | code C |\n"
"                  raw1 V[/M] | raw2 V[/M] }\n"
"       ACTION := { drop | pass | tx | redirect dev IFNAME [netns NS] | cpu N }\n"
"       or tc's: [pref P] [handle H] protocol PROTO flower [skip_hw|skip_sw] MATCH...\n"
"                action gact drop|pass | action mirred egress redirect dev IFNAME\n"
"P and H are decimal (or 0x hex); a leading zero or a sign is refused.\n"
"See docs/rule-syntax.md.\n";

static const char *help_config =
"Usage: xtcam save > FILE           (every block, rule and binding, as text)\n"
"       xtcam restore FILE|-        (what save wrote, on a state without blocks)\n"
"       xtcam apply [--check] [--prune] [--bindings-for DEV] FILE|-\n"
"                                   (make the file's blocks equal to it)\n"
"       xtcam flush                 (remove every block, rule and binding)\n";

static int help(const char *text)
{
	fputs(text, stdout);
	return 0;
}

/* the usage of an object (as match_word() returns it), main's for NULL */
static const char *help_of(const char *obj)
{
	if (!obj)
		return help_main;
	if (!strcmp(obj, "block"))
		return help_block;
	if (!strcmp(obj, "bind") || !strcmp(obj, "unbind"))
		return help_bind;
	if (!strcmp(obj, "rule") || !strcmp(obj, "counters"))
		return help_rule;
	if (!strcmp(obj, "save") || !strcmp(obj, "restore") || !strcmp(obj, "flush") ||
	    !strcmp(obj, "apply"))
		return help_config;
	return help_main;
}

/* --- printing ---------------------------------------------------------------- */

static void print_binding_text(json_object *bd, const char *indent)
{
	const char *netns = jget_s(bd, "netns"), *refused = jget_s(bd, "refused");
	const char *note = jget_s(bd, "note");
	char d[256], n[1024];

	printf("%sdev %s%s%s mode %s%s%s\n", indent, esc(d, sizeof(d), jget_s(bd, "dev")),
	       *netns ? " netns " : "", esc(n, sizeof(n), netns), jget_s(bd, "mode"),
	       !strcmp(jget_s(bd, "state"), "gone") ? " GONE" : "",
	       !strcmp(jget_s(bd, "requested"), "auto") ? " (auto)" : "");
	if (*refused)
		printf("%s    refused: %s\n", indent, esc(n, sizeof(n), refused));
	if (*note)
		printf("%s    note: %s\n", indent, esc(n, sizeof(n), note));
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
				char d[256], n[1024];

				netns = jget_s(a, "netns");
				printf(" dev %s%s%s", esc(d, sizeof(d), jget_s(a, "dev")),
				       *netns ? " netns " : "", esc(n, sizeof(n), netns));
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
		if (e == -ETIMEDOUT)
			*rc = EXIT_LOCK;        /* the lock: see help_main */
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
		/* a reader, without the lock */
		if (!(c = open_ctx(NULL, XTCAM_OPEN_READ, &rc)))
			return rc;
		err[0] = 0;
		e = xtcam_cmd_block_show(c, argc == 2 ? argv[1] : NULL, &arr, err, sizeof(err));
		xtcam_close(c);
		if (e == -EAGAIN && !err[0]) {
			/* a block bound to an offload device: its counters need the lock */
			if (!(c = open_ctx(NULL, 0, &rc)))
				return rc;
			e = xtcam_cmd_block_show(c, argc == 2 ? argv[1] : NULL, &arr, err, sizeof(err));
			xtcam_close(c);
		}
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
	struct xtcam_bind_req r;
	char err[XTCAM_MSG_MAX];
	struct xtcam_ctx *c;
	int rc = 0, e;

	if (argc && !strcmp(argv[0], "help"))
		return help(help_bind);
	e = xtcam_bind_req_parse(argc, argv, unbind, &r, err, sizeof(err));
	if (e)
		return fail(e, "%s", err);
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

/*
 * The input of `rule load`: a regular file is read under the lock (it is
 * there in full); anything else (stdin, a pipe, a terminal) is first copied
 * to a temporary file, before the lock is taken, so that a slow writer
 * does not hold up every other command.  A read error is an error: a
 * directory or a failed read loads nothing (and replaces nothing).
 */
static int rules_open(const char *block, const char *file, FILE **out)
{
	const char *name = strcmp(file, "-") ? file : "stdin";
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin, *t = NULL;
	char buf[65536];
	struct stat st;
	size_t n;
	int e = 0;

	if (!f)
		return fail(errno, "rule load: block %s: %s: %s (nothing loaded)", block, name,
			    strerror(errno));
	if (fstat(fileno(f), &st))
		e = errno;
	else if (S_ISDIR(st.st_mode))
		e = EISDIR;
	else if (S_ISREG(st.st_mode)) {
		*out = f;
		return 0;
	}
	if (!e && !(t = tmpfile())) {
		/* no writable /tmp: a file in memory then */
		int fd = memfd_create("xtcam-rule-load", MFD_CLOEXEC);

		if (fd < 0 || !(t = fdopen(fd, "w+")))
			e = errno;
		if (fd >= 0 && !t)
			close(fd);
	}
	while (!e && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, t) != n)
			e = errno ? errno : EIO;
	if (!e && ferror(f))
		e = errno ? errno : EIO;
	if (!e && (fflush(t) || fseek(t, 0, SEEK_SET)))
		e = errno ? errno : EIO;
	if (f != stdin)
		fclose(f);
	if (e) {
		if (t)
			fclose(t);
		return fail(e, "rule load: block %s: %s: %s (nothing loaded)", block, name,
			    strerror(e));
	}
	*out = t;
	return 0;
}

/* The lines of f (a file rules_open gave: it can seek), f rewound; 0 when
 * they cannot be counted (the array then grows as it is read). */
static size_t rules_count(FILE *f)
{
	char buf[1 << 16];
	size_t n = 0, got, tail = 0;
	long at = ftell(f);

	if (at < 0)
		return 0;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + got - p))); p++)
			n++;
		tail = buf[got - 1] != '\n';
	}
	clearerr(f);
	if (fseek(f, at, SEEK_SET))
		return 0;
	return n + tail;
}

/* Parse every line of f into out, packed (a few dozen bytes a rule); any
 * bad line, NUL byte or read error: nothing. */
static int rules_read(const char *block, const char *file, FILE *f,
		      const struct xtcam_block_spec *spec, struct xtcam_rpack *out)
{
	const char *name = strcmp(file, "-") ? file : "stdin";
	size_t lines = rules_count(f);
	struct cli_rload res;

	cli_rules_parse(f, lines, spec, out, &res);
	switch (res.why) {
	case CLI_RLOAD_OK:
		break;
	case CLI_RLOAD_READ:
		return fail(res.e, "rule load: block %s: %s: reading line %lu: %s (nothing loaded)",
			    block, name, res.lineno, strerror(res.e));
	case CLI_RLOAD_NUL:
		return fail(EINVAL, "rule load: block %s: %s:%lu: a NUL byte in the line "
			    "(nothing loaded)", block, name, res.lineno);
	case CLI_RLOAD_PARSE:
		return fail(res.e, "rule load: block %s: %s:%lu: %s (nothing loaded)", block, name,
			    res.lineno, res.err);
	case CLI_RLOAD_NOMEM:
		return fail(ENOMEM, "rule load: block %s: out of memory (nothing loaded)", block);
	}
	cli_progress("reading", lines, lines);
	return 0;
}

/* `rule show NAME`: each rule printed as it is read (JSON: the same text
 * as the whole array), without the lock: other commands need not wait.
 * The generation read is pinned for the read; through a spool
 * (cli_spool), passed on as stdout takes it without waiting, the rest
 * once the pin is let go. */
#define SHOW_PUMP 64            /* rules between two passes to stdout */
#define SHOW_BUF 16384          /* text of rules passed on at once */
struct show_out {
	struct xtcam_jstream js;
	struct cli_spool sp;
	size_t n;
	size_t o;                       /* in buf, not yet passed on */
	char buf[SHOW_BUF + 8192];
};

/* what buf holds, passed on */
static int show_flush(struct show_out *s)
{
	int e = s->o ? cli_spool_put(&s->sp, s->buf, s->o) : 0;

	s->o = 0;
	return e;
}

static void show_begin(struct show_out *s)
{
	if (json_out)
		xtcam_jstream_begin(&s->js, stdout, (pretty ? JSON_C_TO_STRING_PRETTY :
						     JSON_C_TO_STRING_PLAIN) |
						    JSON_C_TO_STRING_NOSLASHESCAPE);
}

static int print_one_rule(void *arg, json_object *o)
{
	struct show_out *s = arg;
	json_object *one;
	int e;

	if (!o) {                       /* start over */
		s->o = 0;
		e = cli_spool_restart(&s->sp);
		if (!e)
			show_begin(s);
		return e;
	}
	if (json_out) {
		e = xtcam_jstream_add(&s->js, o);
	} else {
		one = json_object_new_array();
		if (!one)
			return -ENOMEM;
		json_object_array_add(one, json_object_get(o));
		print_rules_text(one);
		json_object_put(one);
		e = 0;
	}
	/* the first rule at once, then every so many */
	if (!e && (!s->n++ || !(s->n % SHOW_PUMP)))
		e = cli_spool_pump(&s->sp);
	return e;
}

/* the text of print_rules_text (or the JSON of print_one_rule, plain),
 * from the rule itself */
static int print_one_raw(void *arg, const struct xtcam_shown *r)
{
	struct show_out *s = arg;
	size_t room;
	int e;

	if (!r)
		return print_one_rule(arg, NULL);
	for (;;) {
		room = sizeof(s->buf) - s->o;
		if (json_out) {
			e = room > 1 ? xtcam_shown_json(r, s->js.flags, s->buf + s->o + !!s->js.n,
							 room - 1) : -ENOSPC;
			if (e >= 0 && s->js.n)
				s->buf[s->o] = ',';
			if (e >= 0)
				e += !!s->js.n;
		} else {
			e = xtcam_shown_text(r, s->buf + s->o, room);
		}
		if (e != -ENOSPC || !s->o)
			break;
		e = show_flush(s);      /* room for the rule, then */
		if (e)
			return e;
	}
	if (e < 0)
		return e;
	s->o += (size_t)e;
	if (json_out)
		s->js.n++;
	/* the first rule at once, then a buffer at a time */
	if (!s->n++ || s->o >= SHOW_BUF)
		return show_flush(s);
	return 0;
}

static int show_rules(struct xtcam_ctx *c, const char *block)
{
	char err[XTCAM_MSG_MAX];
	struct show_out s;
	int e, w, rc = 0;

	for (;;) {
		err[0] = 0;
		e = cli_spool_begin(&s.sp);
		if (e) {
			xtcam_close(c);
			return fail(e, "rule show: a temporary file: %s", strerror(-e));
		}
		show_begin(&s);
		s.n = 0;
		s.o = 0;
		xtcam_unlock(c);        /* (with the lock: held to open the block only) */
		e = json_out && pretty ? xtcam_cmd_rule_show_each(c, block, print_one_rule, &s, err,
								  sizeof(err)) :
			       xtcam_cmd_rule_show_raw(c, block, print_one_raw, &s, err, sizeof(err));
		if (!e)
			e = show_flush(&s);
		if (!e && json_out)
			xtcam_jstream_end(&s.js);
		xtcam_close(c);
		w = cli_spool_end(&s.sp, !e);
		if (e != -EAGAIN || err[0])
			break;
		/* bound to an offload device: its counters need the lock */
		if (!(c = open_ctx(block, 0, &rc)))
			return rc;
	}
	if (!e && w)
		return fail(w, "rule show: cannot write it: %s", strerror(-w));
	return e ? fail(e, "rule show: %s", err) : 0;
}

static const char *const rule_verbs[] = { "add", "replace", "del", "delete", "load", "show",
					  "list", "flush", "help", NULL };
static const char *const objects[] = { "block", "bind", "unbind", "rule", "counters", "save",
				       "restore", "flush", "apply", "metrics", "import", "help",
				       NULL };

static int do_rule(int argc, char **argv)
{
	const char *v = argc ? match_word(argv[0], rule_verbs) : NULL;
	char err[XTCAM_MSG_MAX];
	struct xtcam_block_spec spec;
	struct xtcam_ctx *c;
	const char *block;
	bool replace = false, check = false;
	FILE *in = NULL;
	__u32 handle = 0;
	int rc = 0, e;

	if (!v)
		return argc ? usage_error("rule: unknown command \"%s\" (add, replace, del, load, "
					  "show, flush)", argv[0]) : help(help_rule);
	if (!strcmp(v, "help"))
		return help(help_rule);
	if (!strcmp(v, "delete"))
		v = "del";
	if (!strcmp(v, "list"))
		v = "show";
	if (argc < 2)
		return usage_error("rule %s: missing block NAME", v);
	block = argv[1];
	/* the words, before the lock: a usage error changes nothing */
	if (!strcmp(v, "del") || (!strcmp(v, "show") && argc > 2)) {
		if (argc != 4 || strcmp(argv[2], "handle"))
			return usage_error("rule %s: NAME handle H%s", v,
					   !strcmp(v, "show") ? ", or NAME alone" : "");
		e = xtcam_handle_parse(argv[3], &handle, err, sizeof(err));
		if (e)
			return fail(-e, "rule %s: %s", v, err);
	} else if (!strcmp(v, "flush") && argc != 2) {
		return usage_error("rule flush: NAME, and nothing else (\"%s\")", argv[2]);
	} else if (!strcmp(v, "load")) {
		if (argc < 3 || argc > 4)
			return usage_error("rule load: NAME FILE|- [replace|check]");
		if (argc == 4) {
			static const char *const w[] = { "replace", "check", NULL };
			const char *m = match_word(argv[3], w);

			if (!m)
				return usage_error("rule load: \"%s\": not replace or check", argv[3]);
			replace = !strcmp(m, "replace");
			check = !strcmp(m, "check");
		}
		rc = rules_open(block, argv[2], &in);
		if (rc)
			return rc;
	}
	/* show: a reader, without the lock */
	if (!(c = open_ctx(block, !strcmp(v, "show") ? XTCAM_OPEN_READ : 0, &rc))) {
		if (in && in != stdin)
			fclose(in);
		return rc;
	}
	if (xtcam_block_spec_get(c, block, &spec)) {
		xtcam_close(c);
		if (in && in != stdin)
			fclose(in);
		return fail(ENOENT, "rule %s: block %s: no such block", v, block);
	}
	if (!strcmp(v, "add") || !strcmp(v, "replace")) {
		struct xtcam_rule r;

		e = cli_rule_parse(c, block, argc - 2, argv + 2, &r, &spec, err, sizeof(err));
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
	if (!strcmp(v, "del")) {
		struct xtcam_rule r;

		memset(&r, 0, sizeof(r));
		r.handle = handle;
		e = xtcam_cmd_rule(c, block, XTCAM_VERB_DEL, &r, err, sizeof(err));
		xtcam_close(c);
		if (e)
			return fail(e, "%s", err);
		ok();
		return 0;
	}
	if (!strcmp(v, "load")) {
		struct xtcam_rpack rules;
		size_t n;

		rc = rules_read(block, argv[2], in, &spec, &rules);
		n = rules.n;
		if (in != stdin)
			fclose(in);
		if (rc) {
			xtcam_close(c);
			return rc;
		}
		e = xtcam_cmd_rule_load_pack(c, block, &rules, replace, check, err, sizeof(err));
		xtcam_close(c);
		cli_progress_done();
		xtcam_rpack_free(&rules);
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
	/* show [handle H] */
	{
		json_object *arr;

		if (!handle)
			return show_rules(c, block);
		err[0] = 0;
		e = xtcam_cmd_rule_show_handle(c, block, handle, &arr, err, sizeof(err));
		xtcam_close(c);
		if (e == -EAGAIN && !err[0]) {
			/* bound to an offload device: its counters need the lock */
			if (!(c = open_ctx(block, 0, &rc)))
				return rc;
			e = xtcam_cmd_rule_show_handle(c, block, handle, &arr, err, sizeof(err));
			xtcam_close(c);
		}
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
	/* without the lock: one committed state, read as writers go on */
	if (!(c = open_ctx(NULL, XTCAM_OPEN_READ, &rc)))
		return rc;
	if (!json_out) {
		err[0] = 0;
		e = xtcam_cmd_save_file(c, stdout, err, sizeof(err));
		xtcam_close(c);
		if (e == -EAGAIN && !err[0]) {
			/* a restore to finish or undo first: with the lock */
			if (!(c = open_ctx(NULL, 0, &rc)))
				return rc;
			e = xtcam_cmd_save_file(c, stdout, err, sizeof(err));
			xtcam_close(c);
		}
		if (e)
			return fail(e, "%s", err);
		text = NULL;
	} else {
		e = xtcam_cmd_save(c, &text, err, sizeof(err));
		xtcam_close(c);
		if (e == -EAGAIN && !err[0]) {
			if (!(c = open_ctx(NULL, 0, &rc)))
				return rc;
			e = xtcam_cmd_save(c, &text, err, sizeof(err));
			xtcam_close(c);
		}
		if (e)
			return fail(e, "%s", err);
	}
	if (!text) {
		/* written already */
	} else if (json_out) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "config", json_object_new_string(text));
		print_json(o);
		json_object_put(o);
	} else {
		fputs(text, stdout);
	}
	free(text);
	/* a configuration cut short (disk full) is a failure */
	if (fflush(stdout) || ferror(stdout)) {
		e = errno ? errno : EIO;
		clearerr(stdout);
		return fail(e, "save: cannot write it: %s", strerror(e));
	}
	return 0;
}

/* --- restore ------------------------------------------------------------------- */

static int do_restore(int argc, char **argv)
{
	char err[XTCAM_MSG_MAX];
	struct xtcam_restore *rs;
	struct xtcam_ctx *c;
	const char *file;
	FILE *f;
	int rc = 0, e;

	if (argc != 1)
		return usage_error("restore: FILE|-");
	file = argv[0];
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		return fail(errno, "restore: %s: %s", file, strerror(errno));
	/* the whole file, checked, before the lock */
	e = xtcam_restore_read(f, f == stdin ? "stdin" : file, &rs, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (e)
		return fail(e, "restore: %s (nothing restored)", err);
	cli_progress_done();
	if (xtcam_restore_is_legacy(rs))
		fprintf(stderr, "xtcam: restore: %s has no format line: its numbers are read as "
			"decimal, as older versions of xtcam wrote them\n",
			strcmp(file, "-") ? file : "stdin");
	if (!(c = open_ctx(NULL, XTCAM_OPEN_CREATE, &rc))) {
		xtcam_restore_free(rs);
		return rc;
	}
	e = xtcam_cmd_restore(c, rs, err, sizeof(err));
	xtcam_close(c);
	cli_progress_done();
	xtcam_restore_free(rs);
	if (e)
		return fail(e, "restore: %s (nothing restored)", err);
	ok();
	return 0;
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

/* -w SECONDS: plain decimal, 0 to 86400 */
static int set_wait(const char *arg)
{
	char *end;
	unsigned long s;

	errno = 0;
	s = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] < '0' || arg[0] > '9' || s > 86400) {
		fprintf(stderr, "%s: -w: \"%s\" is not a number of seconds (0-86400)\n", cmdname,
			arg);
		return -EINVAL;
	}
	xtcam_set_lock_wait((int)s * 1000);
	return 0;
}

/*
 * Huge pages for the commands that read rules by the hundred thousand.
 * A load of a million rules touches some 300 MB of its own; on 4 KiB
 * pages each first touch is a page fault and each page a TLB entry, which
 * costs a fifth of the load's time (docs/state.md).  Where the kernel
 * gives transparent huge pages only to memory that asks for them
 * ("madvise"), glibc's malloc asks when GLIBC_TUNABLES sets
 * glibc.malloc.hugetlb=1, which it reads when the process starts: a
 * command that reads a file of at least HUGE_FILE starts itself again
 * once with it (a smaller file would not repay the exec).  A
 * GLIBC_TUNABLES that sets glibc.malloc.hugetlb already is left as it is
 * (=0 turns this off); the variable is put back as it was for the
 * processes the command starts.
 */
#define HUGE_TUNABLE "glibc.malloc.hugetlb=1"
#define HUGE_WAS     "XTCAM_GLIBC_TUNABLES_WAS"
#define HUGE_FILE    (4 << 20)

/* path, or standard input for "-" (what is left of it), a regular file
 * of at least HUGE_FILE */
static bool big_file(const char *path)
{
	struct stat s;
	off_t at = 0;

	if (!strcmp(path, "-")) {
		if (fstat(0, &s) || (at = lseek(0, 0, SEEK_CUR)) < 0)
			return false;
	} else if (stat(path, &s)) {
		return false;
	}
	return S_ISREG(s.st_mode) && s.st_size - at >= HUGE_FILE;
}

/* rule load, apply, restore, import or -batch of a big file */
static bool bulk_command(int argc, char **argv)
{
	const char *obj;
	int i, j;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-batch") || !strcmp(argv[i], "--batch"))
			return i + 1 < argc && big_file(argv[i + 1]);
		if (!strncmp(argv[i], "--batch=", 8))
			return big_file(argv[i] + 8);
		if (!strcmp(argv[i], "-w") || !strcmp(argv[i], "--wait"))
			i++;
	}
	obj = i < argc ? match_word(argv[i], objects) : NULL;
	if (!obj)
		return false;
	if (!strcmp(obj, "rule") ? !(i + 1 < argc && match_word(argv[i + 1], rule_verbs) &&
				     !strcmp(match_word(argv[i + 1], rule_verbs), "load")) :
	    strcmp(obj, "apply") && strcmp(obj, "restore") && strcmp(obj, "import"))
		return false;
	for (j = i + 1; j < argc; j++)
		if (big_file(argv[j]))
			return true;
	return false;
}

static bool thp_madvise(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128] = "";
	bool m;

	if (!f)
		return false;
	m = fgets(line, sizeof(line), f) && strstr(line, "[madvise]");
	fclose(f);
	return m;
}

static void huge_pages(int argc, char **argv)
{
	const char *was = getenv(HUGE_WAS), *t = getenv("GLIBC_TUNABLES");
	char *tun = t ? strdup(t) : NULL, *v = NULL, *w = NULL;

	/* started again (only then does the tunable end GLIBC_TUNABLES): the
	 * variable as the caller had it (HUGE_WAS "" when unset, else "=" and
	 * its value); a HUGE_WAS the caller left lying about is dropped */
	if (was && !(t && strlen(t) >= strlen(HUGE_TUNABLE) &&
		     !strcmp(t + strlen(t) - strlen(HUGE_TUNABLE), HUGE_TUNABLE))) {
		unsetenv(HUGE_WAS);
		was = NULL;
	}
	if (was) {
		if (was[0] == '=')
			setenv("GLIBC_TUNABLES", was + 1, 1);
		else
			unsetenv("GLIBC_TUNABLES");
		unsetenv(HUGE_WAS);
		goto out;
	}
	/* (AT_BASE 0: run by the dynamic loader named as the program, which
	 * /proc/self/exe is then) */
	if ((t && !tun) || (tun && strstr(tun, "glibc.malloc.hugetlb")) || !getauxval(AT_BASE) ||
	    !bulk_command(argc, argv) || !thp_madvise())
		goto out;
	if (asprintf(&w, "%s%s", tun ? "=" : "", tun ? tun : "") < 0) {
		w = NULL;
		goto out;
	}
	if (asprintf(&v, "%s%s%s", tun && *tun ? tun : "", tun && *tun ? ":" : "",
		     HUGE_TUNABLE) < 0) {
		v = NULL;
		goto out;
	}
	if (setenv(HUGE_WAS, w, 1) || setenv("GLIBC_TUNABLES", v, 1))
		goto back;
	execv("/proc/self/exe", argv);
back:
	/* not started again (no /proc, say): on as the caller started it */
	if (tun)
		setenv("GLIBC_TUNABLES", tun, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv(HUGE_WAS);
out:
	free(tun);
	free(v);
	free(w);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "wait", required_argument, NULL, 'w' },
		{ "batch", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ 0 }
	};
	static bool started;
	const char *obj, *batch = NULL;
	bool force = false;
	int o, i;

	/* (main runs again for each line of a batch) */
	if (!started) {
		started = true;
		huge_pages(argc, argv);
	}

	/* standard streams the caller closed are opened on /dev/null, so that
	 * nothing xtcam opens lands on them: a big load's finisher points
	 * them at /dev/null and would let go of the lock file or the pins
	 * found there */
	do
		o = open("/dev/null", O_RDWR);
	while (o >= 0 && o <= 2);
	if (o > 2)
		close(o);

	/* global options also at the end: xtcam rule show edge -j */
	while (argc > 2) {
		const char *a = argv[argc - 1];

		if (!strcmp(a, "-j") || !strcmp(a, "--json"))
			json_out = true;
		else if (!strcmp(a, "-p") || !strcmp(a, "--pretty"))
			json_out = pretty = true;
		else if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
			verbose++;
		else if (argc > 3 && (!strcmp(argv[argc - 2], "-w") ||
				      !strcmp(argv[argc - 2], "--wait"))) {
			if (set_wait(a))
				return 2;
			argc--;
		} else
			break;
		argc--;
	}
	/* iproute2's -batch FILE and -force, before the object */
	for (i = 1; i < argc && argv[i][0] == '-'; i += 1 + !strcmp(argv[i], "-w"))
		if (!strcmp(argv[i], "-batch") || !strcmp(argv[i], "-force"))
			argv[i] = argv[i][1] == 'b' ? "--batch" : "--force";
	while ((o = getopt_long(argc, argv, "+jpvVhw:", opts, NULL)) != -1) {
		switch (o) {
		case 'j': json_out = true; break;
		case 'p': json_out = pretty = true; break;
		case 'v': verbose++; break;
		case 'V': printf("xtcam %s (libbpf %s)\n", XTCAM_VERSION, libbpf_version_string());
			  return 0;
		case 'h': return help(help_main);
		case 'w': if (set_wait(optarg))
				  return 2;
			  break;
		case 'b': batch = optarg; break;
		case 'f': force = true; break;
		default:
			fputs(help_main, stderr);
			return 2;
		}
	}
	libbpf_set_print(libbpf_print);
	if (verbose)
		setenv("XTCAM_VERBOSE", verbose > 1 ? "2" : "1", 1);
	argc -= optind;
	argv += optind;
	/* each line runs through main() again (batch.c) */
	if (batch)
		return argc ? usage_error("-batch %s: no command after it", batch) :
			      xtcam_cli_batch(batch, force, main);
	if (!argc) {
		fputs(help_main, stderr);
		return 2;
	}
	obj = match_word(argv[0], objects);
	if (obj && (!strcmp(obj, "rule") || !strcmp(obj, "restore")))
		cli_progress_init();    /* their loads: progress on a terminal */
	if (!obj)
		return usage_error("unknown object \"%s\" (block, bind, unbind, rule, counters, "
				   "save, restore, apply, flush, metrics, import)", argv[0]);
	if (!strcmp(obj, "help"))
		return help(argc > 1 ? help_of(match_word(argv[1], objects)) : help_main);
	/* `xtcam rule add --help`: the usage, not a block called --help (block
	 * names cannot start with '-'; a file called so is ./--help) */
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return help(help_of(obj));
	/* `xtcam save help` as `xtcam rule help` (restore's word is a file) */
	if (argc > 1 && !strcmp(argv[1], "help") && strcmp(obj, "restore"))
		return help(help_of(obj));
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
	if (!strcmp(obj, "apply"))
		return xtcam_cli_apply(argc - 1, argv + 1, json_out, pretty);
	if (!strcmp(obj, "metrics"))
		return xtcam_cli_metrics(argc - 1, argv + 1);
	if (!strcmp(obj, "import"))
		return cli_import(argc - 1, argv + 1, json_out, pretty);
	return do_flush(argc - 1);
}
