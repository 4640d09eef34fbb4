/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * `xtcam import tc`: tc's ingress flower configuration, as a tc user has
 * it, into a file in `save` format that `xtcam restore` takes.  Userspace
 * only.  What is taken and how: docs/save-restore.md ("Importing tc").
 */
#ifndef XTCAM_IMPORT_TC_H
#define XTCAM_IMPORT_TC_H

#include <stdbool.h>
#include <stddef.h>

struct xtcam_import_opts {
	const char *name;     /* the input's name in messages ("stdin") */
	/* For JSON input (`tc -j filter show dev D ingress` names neither):
	 * the device or shared block its filters are on; NULL/0 if none. */
	const char *dev;
	unsigned block;
	const char *netns;    /* the devices' namespace for the bindings, or NULL */
	bool force;           /* print what can be carried even if a line cannot */
};

/*
 * Translate the text in (len bytes: tc command lines, one a line, or the
 * JSON of `tc -j filter show`).  *out: the save-format text (malloc'ed),
 * or NULL when nothing is printed.  *msgs: one line for every input line
 * that cannot be carried over, "NAME:LINE: reason", and notes (malloc'ed,
 * NULL if there are none).  Returns 0 when every line was carried over
 * (or opts->force), -EINVAL (or the errno of the first line refused) when
 * some line was not and *out is NULL, -ENOMEM.
 */
int xtcam_import_tc(const char *in, size_t len,
		    const struct xtcam_import_opts *opts, char **out,
		    char **msgs);

/* The priority tc gives a filter added without `pref` to a chain whose
 * lowest priority so far is lowest (0: no filter yet): 49152 for the
 * first, then one below the lowest.  0 when none is left (lowest 1). */
unsigned xtcam_tc_auto_prio(unsigned lowest);

#endif
