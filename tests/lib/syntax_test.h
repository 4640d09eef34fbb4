/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Helpers shared by the rule-language unit tests (tests/unit/test_syntax_*.c,
 * implemented in tests/unit/syntax_util.c).  They use Criterion's asserts,
 * so call them from inside a Test only.
 */
#ifndef XTCAM_SYNTAX_TEST_H
#define XTCAM_SYNTAX_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xtcam/syntax.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define KW(k) XTCAM_KW_BIT(XTCAM_KW_##k)

/* A line split at spaces into argv (no comments, no quoting): the tests'
 * own splitter, so xtcam_rule_parse() is tested without the line layer. */
struct words {
	int argc;
	char **argv;
	char *buf;
};

void words_split(struct words *w, const char *line);
void words_free(struct words *w);

/* Blocks: none (NULL), and blocks with raw fields configured. */
const struct xtcam_block_spec *blk_raw(void);     /* raw1 l3 9 1, raw2 l4 12 4 */
const struct xtcam_block_spec *blk_raw_len(int idx, unsigned len); /* raw<idx+1> l2 0 len only */

/* xtcam_rule_parse() on the words of line. */
int parse(const char *line, struct xtcam_rule *r,
	  const struct xtcam_block_spec *blk, char *err, size_t errlen);

/* Parse line, assert success and the struct invariants. */
void parse_ok(const char *line, const struct xtcam_block_spec *blk,
	      struct xtcam_rule *out);

/* The invariants every parsed rule keeps: value & ~mask == 0, no port
 * bytes in the ternary part, no presence flags, padding zero, ranges in
 * order.  ctx names the rule in failure messages. */
void check_invariants(const struct xtcam_rule *r, const char *ctx);

/* Parse line, assert success and that the result equals *want byte for
 * byte (the message lists the fields that differ). */
void expect_rule(const char *line, const struct xtcam_block_spec *blk,
		 const struct xtcam_rule *want);

/*
 * Parse line and assert it fails with -err, that the message contains
 * every string of subs (NULL-terminated; NULL subs = no check), and that
 * the output rule was not touched.  Also through xtcam_rule_parse_line().
 */
void expect_error(const char *line, const struct xtcam_block_spec *blk,
		  int err, const char *const *subs);

/* A rule as xtcam_rule_init() makes it, with prio and action drop. */
void base_rule(struct xtcam_rule *r, unsigned prio);

/* Names of the fields of struct xtcam_rule in which a and b differ, into
 * buf ("" when equal).  Returns whether they differ. */
bool rule_diff(const struct xtcam_rule *a, const struct xtcam_rule *b,
	       char *buf, size_t len);

/* format -> parse (also with XTCAM_PARSE_DECIMAL) -> compare -> format
 * again; asserts all of it.  Returns the canonical text in text
 * (XTCAM_RULE_TEXT_MAX). */
void roundtrip(const struct xtcam_rule *r, const struct xtcam_block_spec *blk,
	       char *text, const char *ctx);

#endif
