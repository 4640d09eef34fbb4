// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * make bench's per-packet part (bench/bench_tr) within a time bound: given
 * too little time, or killed at its bound, it keeps the rows it measured
 * and says below them that it stopped early, instead of leaving nothing.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tlib.h"

/* the build dir: that of $XTCAM_BIN (tests/run.sh sets it), else build */
static const char *build_dir(void)
{
	static char d[512];
	const char *bin = getenv("XTCAM_BIN");

	if (!bin)
		return getenv("XTCAM_BUILD") ? getenv("XTCAM_BUILD") : "build";
	snprintf(d, sizeof(d), "%s", bin);
	return dirname(d);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = calloc(1, 65536);
	n = buf ? fread(buf, 1, 65535, f) : 0;
	(void)n;
	fclose(f);
	return buf;
}

/* bench_tr -q -b BUILD -o OUT [EXTRA], started; its pid */
static pid_t start_bench(const char *out, const char *extra)
{
	char bin[600];
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/bench/bench_tr", build_dir());
	cr_assert_eq(access(bin, X_OK), 0, "%s: %s", bin, strerror(errno));
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		if (extra)
			execl(bin, bin, "-q", "-b", build_dir(), "-o", out, "-t", extra, (char *)NULL);
		else
			execl(bin, bin, "-q", "-b", build_dir(), "-o", out, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int rows_in(const char *md)
{
	const char *p;
	int n = 0;

	for (p = md; (p = strstr(p, "\n| ")); p++)
		if (strncmp(p, "\n| program", 10))
			n++;
	return n;
}

Test(bench, budget_too_short_keeps_rows_and_says_so, .timeout = 60)
{
	char out[] = "/tmp/xtcam-test-bench-XXXXXX";
	int fd = mkstemp(out), st;
	char *md;
	pid_t pid;

	if (!t_have_bpf())
		cr_skip("needs root");
	cr_assert_geq(fd, 0);
	close(fd);
	/* 4 s: the floors fit, a data path (a verifier run) does not */
	pid = start_bench(out, "4");
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	md = slurp(out);
	unlink(out);
	cr_assert(md);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "bench_tr -t 4: status %d", st);
	cr_expect(strstr(md, "\n| XDP_DROP (floor) |"), "no floor row in:\n%s", md);
	cr_expect(strstr(md, "\n**Stopped early:** the time budget (4 s) ran out before"),
		  "no note in:\n%s", md);
	cr_expect(!strstr(md, "\n| xtcam |"), "an xtcam row in 4 s:\n%s", md);
	free(md);
}

Test(bench, killed_at_its_bound_keeps_rows_and_says_so, .timeout = 60)
{
	char out[] = "/tmp/xtcam-test-bench-XXXXXX";
	int fd = mkstemp(out), st, i;
	char *md = NULL;
	pid_t pid;

	if (!t_have_bpf())
		cr_skip("needs root");
	cr_assert_geq(fd, 0);
	close(fd);
	pid = start_bench(out, NULL);
	/* once a row is out, SIGTERM as timeout(1) sends it */
	for (i = 0; i < 300; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		free(md);
		md = slurp(out);
		if (md && rows_in(md) >= 1)
			break;
		nanosleep(&ts, NULL);
	}
	if (!md || rows_in(md) < 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		unlink(out);
		cr_assert_fail("no row after 30 s");
	}
	kill(pid, SIGTERM);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	free(md);
	md = slurp(out);
	unlink(out);
	cr_assert(md);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM, "status %d", st);
	cr_expect(rows_in(md) >= 1, "the rows are gone:\n%s", md);
	cr_expect(strstr(md, "\n**Stopped early:** killed at its time bound"), "no note in:\n%s", md);
	free(md);
}
