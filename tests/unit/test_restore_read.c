// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The words of bind and unbind, and reading a restore file: what is
 * refused, with which line.  No kernel: nothing is applied. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "xtcam/loader.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

Test(bind_words, every_word_once)
{
	char *argv[] = { "edge", "dev", "eth0", "ne", "ns1", "mode", "native", "e", "force" };
	struct xtcam_bind_req r;
	char err[XTCAM_MSG_MAX];

	cr_assert_eq(xtcam_bind_req_parse((int)ARRAY_SIZE(argv), argv, false, &r, err,
					  sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(r.block, "edge");
	cr_assert_str_eq(r.dev, "eth0");
	cr_assert_str_eq(r.netns, "ns1");
	cr_assert_str_eq(r.mode, "native");
	cr_assert(r.egress && r.force);
}

Test(bind_words, refused)
{
	static const struct {
		bool unbind;
		const char *words[12];
		const char *want;
	} bad[] = {
		{ false, { "b", "dev", "d", "netns", "n", "mod", "native", "colour", "blue" },
		  "unknown keyword \"colour\"" },
		{ false, { "b", "dev", "d", "netnss", "n" }, "unknown keyword \"netnss\"" },
		{ false, { "b", "dev", "d", "dev", "e" }, "dev given twice" },
		{ false, { "b", "dev", "d", "ingress", "egress" }, "twice" },
		{ false, { "b", "dev", "d", "force", "force" }, "force given twice" },
		{ false, { "b", "dev", "d", "mode", "fast" }, "mode fast" },
		{ false, { "b", "dev", "d", "mode" }, "mode: missing value" },
		{ false, { "b", "netns", "n" }, "missing dev" },
		{ false, { "b", "dev", "d", "" }, "unknown keyword" },
		{ false, { NULL }, "missing block" },
		{ true, { "b", "dev", "d", "mode", "native" }, "unbind: \"mode\" does not apply" },
		{ true, { "b", "dev", "d", "egress" }, "does not apply" },
	};
	char err[XTCAM_MSG_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct xtcam_bind_req r = { .block = "untouched" };
		int argc = 0;

		while (bad[i].words[argc])
			argc++;
		err[0] = 0;
		cr_expect_eq(xtcam_bind_req_parse(argc, (char **)bad[i].words, bad[i].unbind, &r,
						  err, sizeof(err)), -EINVAL, "case %zu accepted", i);
		cr_expect(strstr(err, bad[i].want), "case %zu: \"%s\" should say \"%s\"", i, err,
			  bad[i].want);
		cr_expect_str_eq(r.block, "untouched", "case %zu: the request is untouched", i);
	}
}

static int read_text(const char *text, size_t len, char *err, size_t errlen)
{
	struct xtcam_restore *rs = NULL;
	FILE *f = fmemopen((void *)text, len, "r");
	int e;

	cr_assert(f);
	e = xtcam_restore_read(f, "cfg", &rs, err, errlen);
	fclose(f);
	cr_assert(e || rs, "0 gives a restore");
	xtcam_restore_free(rs);
	return e;
}

Test(restore_read, a_saved_file)
{
	static const char text[] =
		"# xtcam save, 2026-01-01 00:00:00 UTC\n"
		"block add a capacity 100 default drop\n"
		"rule add a prio 1 handle 7 ip_proto udp dst_port 53 action drop\n"
		"block add b capacity 65536 default pass raw1 l4 8 4\n"
		"\n"
		"rule add b prio 3 raw1 0x1234/0xffff action tx\n"
		"bind a dev va0 netns n0 mode native\n"
		"bind b dev va1 netns n1 mode auto egress\n"
		"bind b dev va2 mode generic\n";
	char err[XTCAM_MSG_MAX] = "";

	cr_assert_eq(read_text(text, sizeof(text) - 1, err, sizeof(err)), 0, "%s", err);
}

#define NUL_LINE "block add z\nrule add z prio 5 action drop\0 src_ip 10.0.0.1\n"

Test(restore_read, refused_with_its_line)
{
	static const struct { const char *text; size_t len; int e; const char *want; } bad[] = {
		{ "block add z\nbind z dev d netns n mod native colour blue\n", 0, EINVAL,
		  "cfg:2: bind: unknown keyword \"colour\"" },
		{ "block add z\nbind z dev d netnss n\n", 0, EINVAL, "cfg:2: bind: unknown" },
		{ "block add z\n# note\nbind y dev d\n", 0, ENOENT, "cfg:3: bind: block y" },
		{ "block add z\nblock add z\n", 0, EEXIST, "cfg:2: block z twice" },
		{ "block add z frobnicate\n", 0, EINVAL, "cfg:1:" },
		{ "rule add z prio 1 action drop\n", 0, ENOENT, "cfg:1: rule for block z before" },
		{ "block add z\nrule add z prio 1 action drop extra\n", 0, EINVAL, "cfg:2:" },
		{ "block add z\nblock del z\n", 0, EINVAL, "cfg:2: \"block del\": not a line" },
		{ "block\n", 0, EINVAL, "cfg:1: \"block\": not a line" },
		{ NUL_LINE, sizeof(NUL_LINE) - 1, EINVAL, "cfg:2: a NUL byte" },
		{ "# xtcam save format 3, 2031-01-01\nblock add z\n", 0, EINVAL,
		  "cfg:1: save format \"3\" is not one this xtcam reads" },
		{ "# xtcam save format two\n", 0, EINVAL, "cfg:1: save format \"two\"" },
		{ "block add z\n# xtcam save format 2\n", 0, EINVAL,
		  "cfg:2: a format line after the first lines" },
		{ "# xtcam save format 2\n# xtcam save format 2\n", 0, EINVAL,
		  "cfg:2: a format line after" },
		/* format 2: flower's bases, so 255 is 0x255; no format line:
		 * decimal, so ff is no number */
		{ "# xtcam save format 2\nblock add z\nrule add z prio 1 ip_proto 255 "
		  "action drop\n", 0, ERANGE, "cfg:3: ip_proto" },
		{ "block add z\nrule add z prio 1 ip_proto ff action drop\n", 0, EINVAL,
		  "cfg:2: ip_proto" },
	};
	char err[XTCAM_MSG_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);

		err[0] = 0;
		cr_expect_eq(read_text(bad[i].text, len, err, sizeof(err)), -bad[i].e,
			     "case %zu: %s", i, err);
		cr_expect(strstr(err, bad[i].want), "case %zu: \"%s\" should say \"%s\"", i, err,
			  bad[i].want);
	}
}

/* Without a format line a file is an older xtcam's, its numbers decimal:
 * ip_proto 255 is read (0x255 would be out of range) and the file says so. */
Test(restore_read, format_line_or_decimal)
{
	static const char old[] = "# xtcam save, 2026-12-01 10:00:00 UTC\nblock add z\n"
				  "rule add z prio 1 ip_proto 255 action drop\n";
	static const char now[] = "\n# xtcam save format 2, 2026-12-06 10:00:00 UTC\n"
				  "block add z\nrule add z prio 1 ip_proto ff action drop\n";
	struct xtcam_restore *rs = NULL;
	char err[XTCAM_MSG_MAX] = "";
	FILE *f;

	cr_assert(f = fmemopen((void *)old, strlen(old), "r"));
	cr_assert_eq(xtcam_restore_read(f, "cfg", &rs, err, sizeof(err)), 0, "%s", err);
	fclose(f);
	cr_assert(xtcam_restore_is_legacy(rs));
	xtcam_restore_free(rs);
	rs = NULL;
	cr_assert(f = fmemopen((void *)now, strlen(now), "r"));
	cr_assert_eq(xtcam_restore_read(f, "cfg", &rs, err, sizeof(err)), 0, "%s", err);
	fclose(f);
	cr_assert_not(xtcam_restore_is_legacy(rs));
	xtcam_restore_free(rs);
}

Test(restore_read, read_error)
{
	struct xtcam_restore *rs = NULL;
	char err[XTCAM_MSG_MAX] = "";
	FILE *f = fopen("/", "r");

	cr_assert(f);
	cr_assert_eq(xtcam_restore_read(f, "/", &rs, err, sizeof(err)), -EISDIR, "%s", err);
	fclose(f);
	cr_assert_null(rs);
	cr_assert(strstr(err, "/: cannot read it"), "%s", err);
}
