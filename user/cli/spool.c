// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * stdout spooled to a temporary file, for the readers that hold no lock.
 * stdout's descriptor points at the file meanwhile, so everything that
 * prints to stdout goes there unchanged.  What is printed is passed on to
 * the real stdout as it comes (cli_spool_pump) as far as the real stdout
 * takes it without waiting: a reader holds its pin for its read only,
 * not for as long as its consumer takes; what the consumer has not taken
 * yet waits in the file (on disk: the memory does not grow with the
 * output), and is copied when the read is done.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

/* what the file may hold of what is out already */
#define SPOOL_KEEP (1 << 20)

int cli_spool_begin(struct cli_spool *s)
{
	struct stat st;

	s->saved = -1;
	s->tmp = NULL;
	s->rd = 0;
	/* into a pipe or a socket, a write of up to PIPE_BUF after POLLOUT
	 * does not block; into a terminal or a file, a bigger one */
	s->chunk = !fstat(STDOUT_FILENO, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) ?
		   PIPE_BUF : 65536;
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
	if (!s->tmp || s->rd || s->sent)
		return -EINVAL;         /* some of it is out already */
	fflush(stdout);
	clearerr(stdout);
	if (ftruncate(STDOUT_FILENO, 0) || lseek(STDOUT_FILENO, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}

int cli_spool_pump(struct cli_spool *s)
{
	char buf[65536];
	off_t end;

	if (!s->tmp)
		return -EINVAL;
	if (fflush(stdout) || ferror(stdout))
		return -EIO;
	end = lseek(STDOUT_FILENO, 0, SEEK_CUR);
	if (end < 0)
		return -errno;
	while (s->rd < end) {
		struct pollfd p = { .fd = s->saved, .events = POLLOUT };
		size_t want = (size_t)(end - s->rd);
		ssize_t n, w;

		if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLOUT | POLLERR | POLLHUP)))
			return 0;       /* not ready: the rest waits in the file */
		if (want > s->chunk)
			want = s->chunk;
		if (want > sizeof(buf))
			want = sizeof(buf);
		n = pread(fileno(s->tmp), buf, want, s->rd);
		if (n <= 0)
			return n ? -errno : -EIO;
		w = write(s->saved, buf, (size_t)n);
		if (w < 0)
			return errno == EINTR || errno == EAGAIN ? 0 : -errno;
		s->rd += w;
	}
	/* all of it out: the file starts again, once it is worth a truncate */
	if (end < SPOOL_KEEP)
		return 0;
	if (ftruncate(STDOUT_FILENO, 0) || lseek(STDOUT_FILENO, 0, SEEK_SET) < 0)
		return -errno;
	s->rd = 0;
	return 0;
}

/* all of buf into the file, after what it has */
static int to_file(const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, buf, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int cli_spool_put(struct cli_spool *s, const char *buf, size_t n)
{
	off_t end;
	int e;

	if (!s->tmp)
		return -EINVAL;
	if (fflush(stdout) || ferror(stdout))
		return -EIO;
	end = lseek(STDOUT_FILENO, 0, SEEK_CUR);
	if (end < 0)
		return -errno;
	if (s->rd < end) {
		/* the file first (it may start again: its end is asked anew) */
		e = cli_spool_pump(s);
		if (e)
			return e;
		end = lseek(STDOUT_FILENO, 0, SEEK_CUR);
		if (end < 0)
			return -errno;
		if (s->rd < end)
			return to_file(buf, n);
	}
	while (n) {
		struct pollfd p = { .fd = s->saved, .events = POLLOUT };
		size_t want = n < s->chunk ? n : s->chunk;
		ssize_t w;

		if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLOUT | POLLERR | POLLHUP)))
			break;          /* not ready: the rest waits in the file */
		w = write(s->saved, buf, want);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				break;
			return -errno;
		}
		s->sent = true;
		buf += w;
		n -= (size_t)w;
	}
	return n ? to_file(buf, n) : 0;
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
		if (fseek(s->tmp, (long)s->rd, SEEK_SET))
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
