// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The lines of a `rule load` file parsed (see rload.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "xtcam/syntax.h"
#include "progress.h"
#include "rload.h"

/* a file of at least this many lines is read in two halves */
#define SPLIT_MIN 65536

struct part {
	FILE *f;
	off_t at, end;                  /* end < 0: to the end of the file */
	const struct xtcam_block_spec *spec;
	size_t lines;                   /* the file's, for the progress */
	bool report;
	size_t scale;                   /* lines of the file a line here stands for */
	unsigned long lineno;           /* lines read */
	struct xtcam_rpack pack;
	struct cli_rload res;
};

static void parse_part(struct part *p)
{
	char *line = NULL;
	size_t len = 0;
	ssize_t got;
	int e;

	memset(&p->res, 0, sizeof(p->res));
	while (p->end < 0 || p->at < p->end) {
		struct xtcam_rule r;

		errno = 0;
		got = getline(&line, &len, p->f);
		if (got < 0) {
			/* the end, or a read error (EISDIR, EIO, ENOMEM for a
			 * line that does not fit in memory) */
			if (ferror(p->f) || (errno && !feof(p->f))) {
				p->res.why = CLI_RLOAD_READ;
				p->res.e = errno ? errno : EIO;
				p->res.lineno = p->lineno + 1;
			}
			break;
		}
		p->lineno++;
		p->at += got;
		if (p->report && !(p->lineno & 4095)) {
			/* (the other half, if any, goes as fast) */
			size_t done = p->scale * p->lineno;

			cli_progress("reading", p->lines && done > p->lines ? p->lines : done,
				     p->lines);
		}
		if (strlen(line) != (size_t)got) {
			/* the parser would see the line up to the NUL only */
			p->res.why = CLI_RLOAD_NUL;
			p->res.lineno = p->lineno;
			break;
		}
		e = xtcam_rule_parse_line(line, &r, p->spec, p->res.err, sizeof(p->res.err));
		if (e == 1)
			continue;
		if (e) {
			p->res.why = CLI_RLOAD_PARSE;
			p->res.e = e;
			p->res.lineno = p->lineno;
			break;
		}
		if (xtcam_rpack_add(&p->pack, &r)) {
			p->res.why = CLI_RLOAD_NOMEM;
			p->res.e = ENOMEM;
			break;
		}
	}
	free(line);
	if (p->res.why)
		xtcam_rpack_free(&p->pack);
}

static void *part_thread(void *arg)
{
	parse_part(arg);
	return NULL;
}

/* A second stream on f's file, at the start of the line after the middle
 * of what is left of it (*at); NULL: none (too short, cannot reopen). */
static FILE *second_half(FILE *f, off_t from, off_t *at)
{
	char path[64];
	struct stat st;
	FILE *g;
	off_t mid;
	int c;

	if (fstat(fileno(f), &st) || st.st_size - from < 2)
		return NULL;
	mid = from + (st.st_size - from) / 2;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fileno(f));
	g = fopen(path, "re");
	if (!g)
		return NULL;
	if (fseeko(g, mid - 1, SEEK_SET))
		goto none;
	/* the line that holds the byte before mid is the first half's */
	while ((c = getc(g)) != EOF && c != '\n')
		;
	if (c == EOF)
		goto none;
	*at = ftello(g);
	if (*at < 0 || *at >= st.st_size)
		goto none;
	return g;
none:
	fclose(g);
	return NULL;
}

void cli_rules_parse(FILE *f, size_t lines, const struct xtcam_block_spec *spec,
		     struct xtcam_rpack *out, struct cli_rload *res)
{
	struct part a = { .f = f, .end = -1, .spec = spec, .lines = lines, .report = true,
			  .scale = 1 };
	struct part b = { .end = -1, .spec = spec };
	pthread_t th;
	bool two = false;

	/* (a long file: room for all of it in each, as a pack that grows by
	 * realloc copies itself, and the second half would be copied after
	 * the first; a short one grows in malloc's memory, a few pages) */
	xtcam_rpack_init(&a.pack);
	xtcam_rpack_init(&b.pack);
	if (lines >= SPLIT_MIN)
		xtcam_rpack_reserve(&a.pack, lines);
	a.at = ftello(f);
	if (lines >= SPLIT_MIN && a.at >= 0) {
		off_t mid = 0;

		b.f = second_half(f, a.at, &mid);
		b.at = mid;
		if (b.f)
			xtcam_rpack_reserve(&b.pack, lines);
		/* (b.at is the thread's from its start) */
		if (b.f && !pthread_create(&th, NULL, part_thread, &b)) {
			two = true;
			a.end = mid;
			a.scale = 2;
		} else {
			xtcam_rpack_free(&b.pack);
		}
	}
	parse_part(&a);
	if (two)
		pthread_join(th, NULL);
	if (b.f)
		fclose(b.f);
	*res = a.res;
	*out = a.pack;
	if (!two || a.res.why) {
		if (two && !b.res.why)
			xtcam_rpack_free(&b.pack);
		return;
	}
	if (b.res.why) {
		*res = b.res;
		res->lineno += a.lineno;
		xtcam_rpack_free(out);
		return;
	}
	if (xtcam_rpack_append(out, &b.pack)) {
		xtcam_rpack_free(out);
		xtcam_rpack_free(&b.pack);
		res->why = CLI_RLOAD_NOMEM;
		res->e = ENOMEM;
	}
}
