/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Commands of the CLI that live outside main.c. */
#ifndef XTCAM_CLI_H
#define XTCAM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

/* a member of a JSON object: "" and 0 when it is missing */
static inline const char *jget_s(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : "";
}

static inline int64_t jget_i(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_int64(v) : 0;
}

/* exit statuses besides 0, 1 (refused or failed) and 2 (bad options) */
#define XTCAM_EXIT_PARTIAL 3    /* apply: bindings left out (no such device
				 * or namespace), everything else applied */
#define XTCAM_EXIT_LOCK 4       /* the lock was still held after -w */

/* xtcam apply [--check] [--prune] [--bindings-for DEV] FILE|- (argv
 * after "apply"); json, pretty: -j, -p */
int xtcam_cli_apply(int argc, char **argv, bool json, bool pretty);

/* xtcam -batch FILE|- [-force]: each command line of the file run by
 * run(argc, argv) (argv[0] the program's name, as main() has it) */
int xtcam_cli_batch(const char *file, bool force, int (*run)(int argc, char **argv));

/* stdout into a temporary file (spool.c): begin, restart to drop what
 * was printed, pump to pass what was printed on to the real stdout as far
 * as it takes it without waiting, end (copying the rest to the real
 * stdout when copy).  0 or -errno. */
struct cli_spool {
	int saved;              /* the real stdout */
	FILE *tmp;
	long long rd;           /* of tmp: passed on up to there */
	size_t chunk;           /* a write that does not block once POLLOUT */
	bool sent;              /* some went out past tmp (cli_spool_put) */
};
int cli_spool_begin(struct cli_spool *s);
int cli_spool_restart(struct cli_spool *s);
int cli_spool_pump(struct cli_spool *s);
/* n bytes printed after what stdout has: straight to the real stdout as
 * far as it takes them without waiting (once tmp is all out), the rest
 * into tmp */
int cli_spool_put(struct cli_spool *s, const char *buf, size_t n);
int cli_spool_end(struct cli_spool *s, bool copy);

#endif
