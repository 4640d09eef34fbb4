// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * xtcam -batch FILE|- [-force], as iproute2's: one command a line (its
 * words as on the command line after `xtcam` and the options), run in
 * this one process, each its own commit.  Blank lines and words from `#`
 * on are ignored.  The first command that fails stops the batch with its
 * line number and how many lines were applied; with -force the batch goes
 * on and exits 1 when any line failed.  Unlike `rule load`, `restore` and
 * `apply`, a batch is not all or nothing: the lines before a bad one stay
 * applied.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/loader.h"
#include "xtcam/syntax.h"
#include "cli.h"

/* stdin is read whole before the first command: a command of the batch
 * that reads stdin (`rule load B -`) finds it at its end, not in the
 * middle of the batch */
static FILE *slurp(FILE *in)
{
	char *buf = NULL, chunk[65536];
	size_t len = 0, n;
	FILE *m = open_memstream(&buf, &len), *r = NULL;

	if (!m)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
		if (fwrite(chunk, 1, n, m) != n)
			break;
	if (!ferror(in) && !fflush(m) && !ferror(m)) {
		r = tmpfile();
		if (r && (fwrite(buf, 1, len, r) != len || fseek(r, 0, SEEK_SET))) {
			fclose(r);
			r = NULL;
		}
	}
	fclose(m);
	free(buf);
	return r;
}

/* a global option at the end of a line (main() takes them there too):
 * it would hold for the lines after it */
static const char *global_option(int wc, char **w)
{
	static const char *const opts[] = { "-j", "--json", "-p", "--pretty", "-v", "--verbose",
					    "-w", "--wait", NULL };
	int i, k;

	for (i = 1; i < wc; i++)
		for (k = 0; opts[k]; k++)
			if (!strcmp(w[i], opts[k]))
				return w[i];
	return NULL;
}

int xtcam_cli_batch(const char *file, bool force, int (*run)(int argc, char **argv))
{
	const char *name = strcmp(file, "-") ? file : "stdin";
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : slurp(stdin);
	unsigned long lineno = 0, applied = 0, failed = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int status = 0;

	if (!f) {
		fprintf(stderr, "xtcam: -batch: %s: %s (%s)\n", name, strerror(errno),
			strerrorname_np(errno) ? strerrorname_np(errno) : "error");
		return 1;
	}
	errno = 0;
	xtcam_keep_contexts(true);      /* one context for the lines, while current */
	while ((len = getline(&line, &cap, f)) >= 0) {
		char **w, **argv;
		const char *opt;
		int wc, rc;

		lineno++;
		if (memchr(line, '\0', (size_t)len)) {
			fprintf(stderr, "xtcam: -batch: %s:%lu: a NUL byte (not a text file)\n", name,
				lineno);
			rc = 1;
			goto failed;
		}
		if (xtcam_split_words(line, &wc, &w)) {
			fprintf(stderr, "xtcam: -batch: %s:%lu: out of memory\n", name, lineno);
			rc = 1;
			goto failed;
		}
		if (!wc) {
			free(w);
			continue;
		}
		opt = w[0][0] == '-' ? w[0] : global_option(wc, w);
		if (opt) {
			fprintf(stderr, "xtcam: -batch: %s:%lu: \"%s\": options go on the command "
				"line, before -batch\n", name, lineno, opt);
			free(w);
			rc = 1;
			goto failed;
		}
		argv = calloc((size_t)wc + 2, sizeof(*argv));
		if (!argv) {
			free(w);
			fprintf(stderr, "xtcam: -batch: %s:%lu: out of memory\n", name, lineno);
			rc = 1;
			goto failed;
		}
		argv[0] = (char *)"xtcam";
		memcpy(argv + 1, w, (size_t)wc * sizeof(*w));
		optind = 0;             /* run() parses its options again */
		rc = run(wc + 1, argv);
		free(argv);
		free(w);
		fflush(stdout);
		if (!rc) {
			applied++;
			continue;
		}
failed:
		xtcam_keep_contexts(true);      /* not the failed command's context */
		failed++;
		if (!status)
			status = rc;
		if (!force) {
			fprintf(stderr, "xtcam: -batch: %s:%lu: stopped at this line; %lu line%s "
				"applied before it\n", name, lineno, applied, applied == 1 ? "" : "s");
			break;
		}
		fprintf(stderr, "xtcam: -batch: %s:%lu: failed; going on (-force)\n", name, lineno);
	}
	if (!failed && ferror(f)) {
		fprintf(stderr, "xtcam: -batch: %s: cannot read it after line %lu: %s; %lu lines "
			"applied\n", name, lineno, strerror(errno ? errno : EIO), applied);
		status = 1;
	} else if (failed && force) {
		fprintf(stderr, "xtcam: -batch: %s: %lu line%s failed, %lu applied\n", name, failed,
			failed == 1 ? "" : "s", applied);
		status = 1;
	}
	xtcam_keep_contexts(false);
	free(line);
	fclose(f);
	return status;
}
