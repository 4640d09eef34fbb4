// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * stdout spooled to a temporary file, for the readers that hold no lock:
 * what they print of a block is one committed state, and when a writer
 * commits while they read they start over, so nothing reaches the real
 * stdout before the read is known to be whole.  The file is on disk (the
 * memory does not grow with the output); stdout's descriptor points at it
 * meanwhile, so everything that prints to stdout goes there unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include "cli.h"

int cli_spool_begin(struct cli_spool *s)
{
	s->saved = -1;
	s->tmp = NULL;
	if (fflush(stdout))
		return -errno;
	s->tmp = tmpfile();
	if (!s->tmp)
		return -errno;
	s->saved = dup(STDOUT_FILENO);
	if (s->saved < 0 || dup2(fileno(s->tmp), STDOUT_FILENO) < 0) {
		int e = -errno;

		if (s->saved >= 0)
			close(s->saved);
		s->saved = -1;
		fclose(s->tmp);
		s->tmp = NULL;
		return e;
	}
	return 0;
}

int cli_spool_restart(struct cli_spool *s)
{
	if (!s->tmp)
		return -EINVAL;
	fflush(stdout);
	clearerr(stdout);
	if (ftruncate(STDOUT_FILENO, 0) || lseek(STDOUT_FILENO, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}

int cli_spool_end(struct cli_spool *s, bool copy)
{
	char buf[65536];
	size_t n;
	int e = 0;

	if (!s->tmp)
		return -EINVAL;
	if (fflush(stdout) || ferror(stdout))
		e = -EIO;
	clearerr(stdout);
	if (dup2(s->saved, STDOUT_FILENO) < 0 && !e)
		e = -errno;
	close(s->saved);
	s->saved = -1;
	if (copy && !e) {
		if (fseek(s->tmp, 0, SEEK_SET))
			e = -errno;
		while (!e && (n = fread(buf, 1, sizeof(buf), s->tmp)) > 0)
			if (fwrite(buf, 1, n, stdout) != n)
				e = -EIO;
		if (!e && ferror(s->tmp))
			e = -EIO;
	}
	fclose(s->tmp);
	s->tmp = NULL;
	return e;
}
