// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Block names and block specs: parse, errors, format, JSON. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "syntax_test.h"

#define N31 "abcdefghijklmnopqrstuvwxyz01234"
#define N32 N31 "5"

Test(block, names)
{
	static const char *const good[] = {
		"a", "edge", "A-b_c.d", "x1", "1", "_", "a.", "a-", "a..b",
		"UPPER", N31,
	};
	static const char *const bad[] = {
		"", ".", "..", "../x", "./x", "a/b", "/a", ".hidden", "-x", N32,
		"a b", "a\tb", "a\nb", "a:b", "a*", "a\\b", "caf\xc3\xa9", "a'b",
		"a\"b", "x\x7f",
	};
	char err[XTCAM_ERR_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		cr_expect(xtcam_name_valid(good[i]), "\"%s\" is valid", good[i]);
		strcpy(err, "junk");
		cr_expect_eq(xtcam_name_check(good[i], err, sizeof(err)), 0);
		cr_expect_str_empty(err);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_expect(!xtcam_name_valid(bad[i]), "\"%s\" is not valid", bad[i]);
		err[0] = '\0';
		cr_expect_eq(xtcam_name_check(bad[i], err, sizeof(err)), -EINVAL,
			     "\"%s\"", bad[i]);
		cr_expect(strstr(err, "block name"), "\"%s\": %s", bad[i], err);
	}
	cr_assert(!xtcam_name_valid(NULL));
	cr_assert_eq(xtcam_name_check(NULL, err, sizeof(err)), -EINVAL);
	cr_assert_eq(xtcam_name_check("a/b", NULL, 0), -EINVAL);
}

Test(block, name_messages)
{
	static const struct { const char *name, *msg; } t[] = {
		{ "a/b", "block name \"a/b\": '/' is not allowed (only A-Z a-z 0-9 "
			 "_ . -)" },
		{ "../x", "block name \"../x\": must not start with '.'" },
		{ "-x", "block name \"-x\": must not start with '-'" },
		{ "", "block name: empty" },
		{ N32, "longer than 31 characters" },
		{ "a b", "\\x20 is not allowed" },
		{ "a'b", "\\x27 is not allowed" },
	};
	char err[XTCAM_ERR_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		cr_expect_eq(xtcam_name_check(t[i].name, err, sizeof(err)), -EINVAL);
		cr_expect(strstr(err, t[i].msg), "\"%s\": \"%s\" lacks \"%s\"",
			  t[i].name, err, t[i].msg);
	}
}

static void split_parse(const char *line, struct xtcam_block_spec *s,
			int want, const char *sub)
{
	struct xtcam_block_spec keep;
	struct words w;
	char err[XTCAM_ERR_MAX];
	int rc;

	memset(s, 0xa5, sizeof(*s));
	keep = *s;
	words_split(&w, line);
	err[0] = '\0';
	rc = xtcam_block_spec_parse(w.argc, w.argv, s, err, sizeof(err));
	words_free(&w);
	cr_expect_eq(rc, -want, "\"%s\": rc %d (%s)", line, rc, err);
	if (want) {
		cr_expect(!memcmp(s, &keep, sizeof(*s)), "\"%s\": touched", line);
		cr_expect(sub && strstr(err, sub), "\"%s\": \"%s\" lacks \"%s\"",
			  line, err, sub);
	} else {
		cr_expect_str_empty(err, "\"%s\"", line);
	}
}

Test(block, init)
{
	struct xtcam_block_spec s;

	memset(&s, 0xa5, sizeof(s));
	xtcam_block_spec_init(&s);
	cr_assert_str_empty(s.name);
	cr_assert_eq(s.capacity, XTCAM_DEFAULT_CAPACITY);
	cr_assert_eq(s.capacity, 65536);
	cr_assert_eq(s.dflt.type, XTCAM_ACT_PASS);
	cr_assert_eq(s.dflt.arg, 0);
	cr_assert_eq(s.raw[0].layer, XTCAM_RAW_NONE);
	cr_assert_eq(s.raw[1].layer, XTCAM_RAW_NONE);
}

Test(block, parse_ok)
{
	struct xtcam_block_spec s, w;

	split_parse("edge", &s, 0, NULL);
	xtcam_block_spec_init(&w);
	strcpy(w.name, "edge");
	cr_assert(!memcmp(&s, &w, sizeof(s)));

	split_parse("edge capacity 1024 default drop raw1 l3 9 1 raw2 l4 0 4",
		    &s, 0, NULL);
	w.capacity = 1024;
	w.dflt.type = XTCAM_ACT_DROP;
	w.raw[0] = (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L3, .len = 1,
					    .offset = 9 };
	w.raw[1] = (struct xtcam_raw_spec){ .layer = XTCAM_RAW_L4, .len = 4,
					    .offset = 0 };
	cr_assert(!memcmp(&s, &w, sizeof(s)));
	split_parse("edge raw2 l4 0 4 default drop raw1 l3 9 1 capacity 0x400",
		    &s, 0, NULL);
	cr_assert(!memcmp(&s, &w, sizeof(s)));

	split_parse("b raw1 l2 1023 2", &s, 0, NULL);
	cr_assert_eq(s.raw[0].layer, XTCAM_RAW_L2);
	cr_assert_eq(s.raw[0].offset, 1023);
	cr_assert_eq(s.raw[0].len, 2);
	cr_assert_eq(s.raw[1].layer, XTCAM_RAW_NONE);
	split_parse("b raw2 l2 0 3", &s, 0, NULL);
	cr_assert_eq(s.raw[0].layer, XTCAM_RAW_NONE);
	cr_assert_eq(s.raw[1].len, 3);
	split_parse("b capacity 1", &s, 0, NULL);
	cr_assert_eq(s.capacity, 1);
	split_parse("b capacity 4194304 default pass", &s, 0, NULL);
	cr_assert_eq(s.capacity, XTCAM_MAX_CAPACITY);
	cr_assert_eq(s.dflt.type, XTCAM_ACT_PASS);
	split_parse(N31, &s, 0, NULL);
	cr_assert_str_eq(s.name, N31);
}

Test(block, parse_errors)
{
	static const struct { const char *line; int err; const char *sub; } t[] = {
		{ "../x", EINVAL, "block name \"../x\"" },
		{ "a/b", EINVAL, "block name \"a/b\": '/' is not allowed" },
		{ N32, EINVAL, "longer than 31" },
		{ "-x capacity 1", EINVAL, "must not start with '-'" },
		{ "x capacity", EINVAL, "capacity: missing value" },
		{ "x capacity 0", ERANGE, "capacity: \"0\" is not a capacity "
					  "(1-4194304)" },
		{ "x capacity 4194305", ERANGE, "capacity: \"4194305\"" },
		{ "x capacity 99999999999999999999999", ERANGE, "capacity" },
		{ "x capacity abc", EINVAL, "capacity: \"abc\"" },
		{ "x capacity -1", EINVAL, "capacity: \"-1\"" },
		{ "x capacity 1 capacity 2", EINVAL, "capacity: given twice" },
		{ "x default", EINVAL, "default: missing value" },
		{ "x default tx", EINVAL, "default: \"tx\" is not a default action "
					  "(pass or drop)" },
		{ "x default DROP", EINVAL, "default: \"DROP\"" },
		{ "x default drop default pass", EINVAL, "default: given twice" },
		{ "x raw1", EINVAL, "raw1: missing value" },
		{ "x raw1 l3", EINVAL, "raw1: missing value" },
		{ "x raw1 l3 9", EINVAL, "raw1: missing value (raw1 l2|l3|l4 "
					 "OFFSET LENGTH)" },
		{ "x raw1 l5 9 1", EINVAL, "raw1: layer \"l5\" is not l2, l3 or l4" },
		{ "x raw1 none 9 1", EINVAL, "raw1: layer \"none\"" },
		{ "x raw1 L3 9 1", EINVAL, "raw1: layer \"L3\"" },
		{ "x raw1 l3 1024 1", ERANGE, "raw1: \"1024\" is not an offset "
					      "(0-1023)" },
		{ "x raw1 l3 -1 1", EINVAL, "raw1: \"-1\"" },
		{ "x raw2 l3 9 0", ERANGE, "raw2: \"0\" is not a length in bytes "
					   "(1-4)" },
		{ "x raw2 l3 9 5", ERANGE, "raw2: \"5\"" },
		{ "x raw2 l3 9 x", EINVAL, "raw2: \"x\"" },
		{ "x raw1 l3 9 1 raw1 l3 9 1", EINVAL, "raw1: given twice" },
		{ "x capcity 5", EINVAL, "unknown block option \"capcity\" (did you "
					 "mean \"capacity\"?)" },
		{ "x foo 5", EINVAL, "unknown block option \"foo\" (capacity, "
				     "default, raw1, raw2)" },
		{ "x raw3 l3 9 1", EINVAL, "unknown block option \"raw3\"" },
		{ "x 5", EINVAL, "unknown block option \"5\"" },
	};
	struct xtcam_block_spec s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		split_parse(t[i].line, &s, t[i].err, t[i].sub);
}

Test(block, parse_bad_arguments)
{
	char *nul[] = { "x", "capacity", NULL };
	char *empty[] = { "" };
	struct xtcam_block_spec s, keep;
	char err[XTCAM_ERR_MAX];

	memset(&s, 0xa5, sizeof(s));
	keep = s;
	cr_assert_eq(xtcam_block_spec_parse(0, NULL, &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "block name: missing"), "%s", err);
	cr_assert_eq(xtcam_block_spec_parse(3, nul, &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_block_spec_parse(1, empty, &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "block name: empty"), "%s", err);
	cr_assert_eq(xtcam_block_spec_parse(-1, nul, &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_block_spec_parse(1, NULL, &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(xtcam_block_spec_parse(1, nul, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert(!memcmp(&s, &keep, sizeof(s)));
	cr_assert_eq(xtcam_block_spec_parse(1, nul, &s, NULL, 0), 0);
	cr_assert_str_eq(s.name, "x");
}

Test(block, format_roundtrip)
{
	static const struct { const char *in, *want; } t[] = {
		{ "edge", "edge capacity 65536 default pass" },
		{ "e.1 default drop capacity 0x10",
		  "e.1 capacity 16 default drop" },
		{ "b raw2 l4 12 4 raw1 l2 0 1",
		  "b capacity 65536 default pass raw1 l2 0 1 raw2 l4 12 4" },
		{ "b raw2 l3 1023 2",
		  "b capacity 65536 default pass raw2 l3 1023 2" },
		{ N31 " capacity 4194304",
		  N31 " capacity 4194304 default pass" },
	};
	struct xtcam_block_spec s, back;
	char b[256];
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		split_parse(t[i].in, &s, 0, NULL);
		rc = xtcam_block_spec_format(&s, b, sizeof(b));
		cr_expect_eq(rc, (int)strlen(t[i].want), "%s: rc %d", t[i].in, rc);
		cr_expect_str_eq(b, t[i].want);
		split_parse(b, &back, 0, NULL);
		cr_expect(!memcmp(&s, &back, sizeof(s)), "%s: round trip", t[i].in);
	}
	cr_assert_eq(xtcam_block_spec_format(&s, b, 5), -ENOSPC);
	cr_assert_eq(strlen(b), 4);
}

Test(block, format_invalid)
{
	struct xtcam_block_spec s;
	char b[256];

	cr_assert_eq(xtcam_block_spec_format(NULL, b, sizeof(b)), -EINVAL);
#define BAD(stmt) do { \
		xtcam_block_spec_init(&s); \
		strcpy(s.name, "ok"); \
		stmt; \
		cr_expect_eq(xtcam_block_spec_format(&s, b, sizeof(b)), -EINVAL, \
			     "%s", #stmt); \
		errno = 0; \
		cr_expect_null(xtcam_block_spec_json(&s), "%s", #stmt); \
		cr_expect_eq(errno, EINVAL, "%s", #stmt); \
	} while (0)
	BAD(s.name[0] = '\0');
	BAD(strcpy(s.name, "../x"));
	BAD(memset(s.name, 'a', sizeof(s.name)));   /* no NUL */
	BAD(s.capacity = 0);
	BAD(s.capacity = XTCAM_MAX_CAPACITY + 1);
	BAD(s.dflt.type = XTCAM_ACT_TX);
	BAD(s.dflt.type = XTCAM_ACT_NONE);
	BAD(s.dflt.type = 99);
	BAD(s.raw[0].layer = 4; s.raw[0].len = 1);
	BAD(s.raw[1].layer = XTCAM_RAW_L3; s.raw[1].len = 0);
	BAD(s.raw[1].layer = XTCAM_RAW_L3; s.raw[1].len = 5);
	BAD(s.raw[0].layer = XTCAM_RAW_L3; s.raw[0].len = 1;
	    s.raw[0].offset = XTCAM_RAW_MAX_OFF);
#undef BAD
}

Test(block, json)
{
	struct xtcam_block_spec s;
	struct json_object *j, *back, *raw, *v;
	const char *txt;

	split_parse("edge default drop raw1 l3 9 1", &s, 0, NULL);
	j = xtcam_block_spec_json(&s);
	cr_assert(j);
	txt = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	cr_assert_str_eq(txt, "{\"name\":\"edge\",\"capacity\":65536,\"default\":"
			 "\"drop\",\"raw1\":{\"layer\":\"l3\",\"offset\":9,"
			 "\"len\":1}}");
	back = json_tokener_parse(txt);
	cr_assert(back);
	cr_assert(json_object_object_get_ex(back, "raw1", &raw));
	cr_assert(json_object_object_get_ex(raw, "offset", &v));
	cr_assert_eq(json_object_get_int(v), 9);
	cr_assert(!json_object_object_get_ex(back, "raw2", &v));
	json_object_put(back);
	json_object_put(j);

	split_parse("x raw2 l2 0 4", &s, 0, NULL);
	j = xtcam_block_spec_json(&s);
	cr_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			 "{\"name\":\"x\",\"capacity\":65536,\"default\":\"pass\","
			 "\"raw2\":{\"layer\":\"l2\",\"offset\":0,\"len\":4}}");
	json_object_put(j);

	errno = 0;
	cr_assert_null(xtcam_block_spec_json(NULL));
	cr_assert_eq(errno, EINVAL);
}
