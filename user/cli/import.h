/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* The CLI's `import tc` and the tc words of `rule add` (user/cli/import.c). */
#ifndef XTCAM_CLI_IMPORT_H
#define XTCAM_CLI_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include "xtcam/loader.h"
#include "xtcam/syntax.h"

/* xtcam import tc FILE|- [dev DEV | block N] [netns NS] [--force]; the
 * exit status.  json: {"config": TEXT|null, "messages": [LINE, ...]}. */
int cli_import(int argc, char **argv, bool json, bool pretty);

/* xtcam_rule_parse() for `rule add`, with tc's words (xtcam_rule_parse_tc()):
 * a flower rule without pref gets tc's automatic priority in block, and
 * skip_hw/skip_sw are checked against the block's bindings.  0 or -errno
 * with the reason in err. */
int cli_rule_parse(struct xtcam_ctx *c, const char *block, int argc, char **argv,
		   struct xtcam_rule *r, const struct xtcam_block_spec *spec, char *err,
		   size_t errlen);

#endif
