/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The rule language: text <-> struct xtcam_rule, block specs, JSON.
 * Userspace only.  The grammar is in docs/rule-syntax.md.
 *
 * Error convention: functions return 0 (or a length) on success and a
 * negative errno on failure.  Parsers write a one-line message into err
 * (when err is not NULL and errlen > 0) that names the keyword and the
 * reason, e.g. `dst_port: "70000" is not a port (0-65535)`; the caller adds
 * the object and the errno name.  Parsers write their output only on
 * success: on error *r (or *spec) is left exactly as it was.
 *
 * Errnos: -ERANGE for a well-formed number outside its keyword's range
 * (port 70000, vlan_id 4096, prefix length /33, prio 0, ...);
 * -EOPNOTSUPP for a tc-flower keyword xtcam does not implement (skip_sw,
 * enc_key_id, ...); -ENOMEM; -EINVAL for everything else.
 */
#ifndef XTCAM_SYNTAX_H
#define XTCAM_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>
#include "rule.h"

struct json_object;

/* A buffer this size always holds a formatted rule, and one of
 * XTCAM_ERR_MAX any error message (longer buffers are fine, shorter ones
 * truncate the message). */
#define XTCAM_RULE_TEXT_MAX 1024
#define XTCAM_ERR_MAX       256

/* Highest CPU number `action cpu N` accepts (the kernel's NR_CPUS limit). */
#define XTCAM_CPU_MAX       8191

/* --- rules ---------------------------------------------------------------- */

/*
 * Parse the words after the block name of `xtcam rule add NAME ...`:
 *   prio P [handle H] MATCH... action ACTION
 * Words may come in any order; each keyword at most once.  blk gives the
 * block's raw field configuration (raw1/raw2 are refused without it); it
 * may be NULL.  On success *r is the parsed rule (handle 0 when not given:
 * the caller assigns one).  On error *r is untouched.
 */
int xtcam_rule_parse(int argc, char **argv, struct xtcam_rule *r,
		     const struct xtcam_block_spec *blk, char *err,
		     size_t errlen);

/*
 * Parse flags.  XTCAM_PARSE_DECIMAL reads every number as xtcam before
 * flower's number bases did: decimal, or hex with 0x (so `ip_proto 11` is
 * 11, not 0x11, and `tcp_flags 12` is 0xc); for files written by such an
 * xtcam (a `save` file without a format line).  Without it numbers are read
 * as tc-flower reads them (docs/rule-syntax.md has the table).  The text
 * xtcam_rule_format() writes reads the same either way.
 */
#define XTCAM_PARSE_DECIMAL 0x1u

/* xtcam_rule_parse() with XTCAM_PARSE_* flags (0: the same as
 * xtcam_rule_parse()); -EINVAL for an unknown flag. */
int xtcam_rule_parse_flags(int argc, char **argv, struct xtcam_rule *r,
			   const struct xtcam_block_spec *blk, unsigned flags,
			   char *err, size_t errlen);

/*
 * xtcam_rule_parse_flags() that also takes tc's filter words, so that a
 * tc filter line can be pasted from `[pref P] [handle H] protocol PROTO
 * flower` on: `flower` (after `protocol`, which it then requires),
 * `skip_hw` and `skip_sw` (after `flower`; not both), and tc's action
 * forms (`action gact drop`, `action mirred egress redirect dev X`, which
 * plain parsing takes too).  With `flower`, `pref` may be left out: *r
 * then has prio 0 and the caller gives it tc's automatic priority.  *tc
 * gets the XTCAM_TC_* words seen (written on success only).  Without tc
 * (NULL), skip_hw and skip_sw are refused (EOPNOTSUPP): they say where a
 * rule runs, which only the caller can check.
 */
#define XTCAM_TC_FLOWER  0x1u
#define XTCAM_TC_SKIP_HW 0x2u
#define XTCAM_TC_SKIP_SW 0x4u
int xtcam_rule_parse_tc(int argc, char **argv, struct xtcam_rule *r,
			const struct xtcam_block_spec *blk, unsigned flags,
			unsigned *tc, char *err, size_t errlen);

/*
 * The same for one line of a `rule load` file: words are separated by
 * white space; a word that starts with '#' starts a comment that runs to
 * the end of the line.  Returns 1 (and leaves *r untouched, err "") for a
 * line that is blank or only a comment, 0 for a rule, or -errno.
 */
int xtcam_rule_parse_line(const char *line, struct xtcam_rule *r,
			  const struct xtcam_block_spec *blk, char *err,
			  size_t errlen);
int xtcam_rule_parse_line_flags(const char *line, struct xtcam_rule *r,
				const struct xtcam_block_spec *blk,
				unsigned flags, char *err, size_t errlen);

/*
 * Split a line into words as xtcam_rule_parse_line() does.  *argv is one
 * allocation (free it with free()), NULL-terminated; *argc may be 0.
 * Returns 0 or -ENOMEM (-EINVAL for NULL arguments).
 */
int xtcam_split_words(const char *line, int *argc, char ***argv);

/*
 * A handle as the rule language reads `handle H`: 1-4294967295, decimal
 * without a leading zero or 0x hex; no sign (so "012" is refused, not read
 * as octal 10 as tc does).  For the CLI's own words (`rule del NAME handle
 * H`).  Returns 0, -EINVAL or -ERANGE; *handle is written only on success.
 */
int xtcam_handle_parse(const char *s, __u32 *handle, char *err, size_t errlen);

/*
 * The canonical text of a rule: `prio P [handle H] MATCH... action ACTION`
 * with matches in enum xtcam_kw order.  For a rule that xtcam_rule_parse()
 * produced, parsing the text back gives the identical struct, with or
 * without XTCAM_PARSE_DECIMAL: numbers that tc-flower reads as hex are
 * printed with 0x (`ip_proto 0x2f`, `tcp_flags 0x12`), protocols and
 * ethertypes by name where flower has one (`ip_proto udp`).  handle is
 * printed when it is not 0.  An eth_type that only an address or ip_proto
 * icmp/icmpv6 implied is not printed.  blk is used to leave out raw masks
 * that cover the whole field; it may be NULL.
 * Returns the length of the text, -ENOSPC if it does not fit in len bytes
 * (buf then holds a truncated, NUL-terminated text), -EINVAL for an action
 * that has no text form.
 */
int xtcam_rule_format(const struct xtcam_rule *r,
		      const struct xtcam_block_spec *blk, char *buf,
		      size_t len);

/* Whether the printer shows keyword kw for r: the user gave it, or r
 * matches on its field anyway (a hand-built rule). */
bool xtcam_kw_present(const struct xtcam_rule *r, enum xtcam_kw kw);

/* The value of keyword kw as the text form has it ("10.0.0.0/8",
 * "1000-2000", "tcp").  Returns the length or -ENOSPC/-EINVAL. */
int xtcam_kw_format(const struct xtcam_rule *r,
		    const struct xtcam_block_spec *blk, enum xtcam_kw kw,
		    char *buf, size_t len);

/* The matches of r as xtcam_rule_match_json() has them, as text: " KW
 * VALUE" each, in the same order (for listings without JSON).  Returns
 * the length, -ENOSPC, -EINVAL. */
int xtcam_rule_match_format(const struct xtcam_rule *r, const struct xtcam_block_spec *blk,
			    char *buf, size_t len);

/* fn(arg, name, value) for each match of r, in the order of the text and
 * JSON forms (value as xtcam_kw_format has it); stops at fn's first
 * non-zero return and returns it. */
int xtcam_rule_match_each(const struct xtcam_rule *r, const struct xtcam_block_spec *blk,
			  int (*fn)(void *arg, const char *name, const char *value), void *arg);

/* "src_ip", ...; NULL for an out-of-range kw. */
const char *xtcam_kw_name(enum xtcam_kw kw);

/* "drop", "redirect dev veth1 netns ns1", "cpu 3".  Returns the length,
 * -ENOSPC, or -EINVAL for a type without text form (NONE, unknown). */
int xtcam_action_format(const struct xtcam_rule_action *a, char *buf,
			size_t len);

/* "drop", "pass", "tx", "redirect", "cpu"; "none" for XTCAM_ACT_NONE and
 * "unknown" for anything else.  Never NULL. */
const char *xtcam_action_name(__u32 type);

/*
 * JSON (json-c).  New objects, owned by the caller (json_object_put());
 * NULL with errno = ENOMEM on allocation failure.  Values that contain '/'
 * print as "\/" unless the caller passes JSON_C_TO_STRING_NOSLASHESCAPE.
 *
 * match: {"eth_type":"ipv4","ip_proto":"tcp","src_ip":"10.0.0.0/8",
 *         "dst_port":"1000-2000"}  -- the keywords of the text form, in
 *         the same order, values as strings in the same syntax.
 * action: {"type":"drop"}, {"type":"redirect","dev":"veth1","netns":"ns1"}
 *         (netns only when set), {"type":"cpu","cpu":"1"}: strings in the
 *         text syntax, like the match.
 * rule: {"prio":10,"handle":3,"match":{...},"action":{...}}.
 */
struct json_object *xtcam_rule_match_json(const struct xtcam_rule *r,
					  const struct xtcam_block_spec *blk);
struct json_object *xtcam_action_json(const struct xtcam_rule_action *a);
struct json_object *xtcam_rule_json(const struct xtcam_rule *r,
				    const struct xtcam_block_spec *blk);

/* --- blocks --------------------------------------------------------------- */

/* Block names: 1..XTCAM_NAME_MAX-1 characters from [A-Za-z0-9_.-], not
 * starting with '.' or '-' (they name directories under bpffs). */
bool xtcam_name_valid(const char *name);

/* The same, with the reason in err: `block name "a/b": '/' is not
 * allowed (only A-Z a-z 0-9 _ . -)`.  Returns 0 or -EINVAL. */
int xtcam_name_check(const char *name, char *err, size_t errlen);

/* Defaults: no name, capacity XTCAM_DEFAULT_CAPACITY, default pass, no raw
 * fields. */
void xtcam_block_spec_init(struct xtcam_block_spec *spec);

/*
 * Parse the words after `xtcam block add`:
 *   NAME [capacity N] [default pass|drop] [raw1 l2|l3|l4 OFF LEN] [raw2 ...]
 * On error *spec is untouched.
 */
int xtcam_block_spec_parse(int argc, char **argv,
			   struct xtcam_block_spec *spec, char *err,
			   size_t errlen);

/* "NAME capacity N default pass|drop [raw1 LAYER OFF LEN] [raw2 ...]":
 * parses back to the same spec.  Returns the length, -ENOSPC or -EINVAL
 * (a spec that has no text form: bad name, default action, raw field). */
int xtcam_block_spec_format(const struct xtcam_block_spec *spec, char *buf,
			    size_t len);

/* {"name":"edge","capacity":65536,"default":"pass",
 *  "raw1":{"layer":"l3","offset":9,"len":1}} (raw fields when set). */
struct json_object *xtcam_block_spec_json(const struct xtcam_block_spec *spec);

#endif
