/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* A file of `xtcam save` as read (restore.c), for restore and apply. */
#ifndef XTCAM_RESTORE_INT_H
#define XTCAM_RESTORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include "xtcam/loader.h"
#include "xtcam/syntax.h"

struct rs_block {
	struct xtcam_block_spec spec;
	struct xtcam_rule *rules;
	size_t n, cap;
};

struct rs_bind {
	struct xtcam_bind_req req;      /* points into words */
	char **words;                   /* from xtcam_split_words() */
	unsigned long lineno;
};

struct xtcam_restore {
	char name[128];                 /* of the file, for messages */
	struct rs_block *blocks;
	size_t nb;
	struct rs_bind *binds;
	size_t nbind;
	int format;                     /* of its format line; 0: none */
	bool content;                   /* a line other than a comment seen */
};

#endif
