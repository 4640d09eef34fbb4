// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Time whole processes: run a command (or a cycle of commands) several
 * times, each as a process of its own (fork, exec, wait4; no shell), and
 * print per command the wall time of its runs (min, median, p99, max) and
 * the peak RSS the kernel reports for it in wait4's rusage (which counts
 * the child from its fork, so it is never below ptime's own RSS, about
 * 2 MB).  The control plane benchmark times xtcam and nft with it, the
 * same way.
 *
 * Usage: ptime [-n RUNS] [-m MIN_RUNS] [-T SECS] [-s START] [-N NETNS] [-f]
 *              [-e] -- CMD ARGS... [::: CMD2 ARGS...]...
 *   -n RUNS   the most cycles (default 25)
 *   -m MIN    the fewest cycles (default 3): after SECS (-T) of wall time,
 *             ptime stops as soon as MIN cycles are done
 *   -T SECS   the time budget (default: none, RUNS cycles)
 *   -s START  the number of the first cycle (default 1): "@i@" in an
 *             argument is replaced by the cycle's number
 *   -N NETNS  run the commands in the network namespace /run/netns/NETNS
 *   -f        read the commands' standard output through a pipe and report
 *             the time of its first byte and the lines it printed
 *             (otherwise it goes to /dev/null)
 *   -e        a run that fails does not stop ptime (the failures are
 *             counted); otherwise the first failure ends it with status 1
 *   -d        each run also waits for the processes the command leaves
 *             behind (ptime is their subreaper: `rule load`'s finisher,
 *             `block del`'s sweep) and reports when the last of them was
 *             done, from the command's end (after_med_ms, after_max_ms);
 *             their peak RSS counts in rss_max_kb (the largest of any
 *             one process; a process forked by the command starts from
 *             the command's peak)
 * A cycle runs every command once, in order ("add ::: del" adds a rule and
 * deletes it again).  Output, one line per command:
 *   cmd=K runs=N fail=F min_ms=.. med_ms=.. p99_ms=.. max_ms=..
 *   rss_max_kb=.. [first_med_ms=.. first_max_ms=.. lines=..]
 *   [after_med_ms=.. after_max_ms=..]
 * p99 is the nearest rank (with fewer than 100 runs, the largest).
 * Exit status 0, 1 when a command failed (without -e), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXCMD 8

struct cmd {
	char **argv;		/* the template, "@i@" not yet replaced */
	int argc;
	double *ms, *first;	/* per run */
	double *after;		/* -d: per run, its leftovers' end */
	long rss_max, lines;
	int fails;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ARG with every "@i@" replaced by I; a new string */
static char *subst(const char *arg, long i)
{
	char num[24], *out, *o;
	const char *p;
	size_t n = 0, len;

	len = (size_t)snprintf(num, sizeof(num), "%ld", i);
	for (p = arg; (p = strstr(p, "@i@")); p += 3)
		n++;
	out = malloc(strlen(arg) + n * len + 1);
	if (!out)
		return NULL;
	for (o = out, p = arg; *p;) {
		if (!strncmp(p, "@i@", 3)) {
			memcpy(o, num, len);
			o += len;
			p += 3;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
	return out;
}

/*
 * One run of C with cycle number I: its wall time in *MS, the time of its
 * first output byte in *FIRST (with PIPE_OUT; -1 when it printed nothing).
 * Returns its wait status, or -errno.
 */
static int wait_desc;	/* -d */

static int run1(struct cmd *c, long i, int pipe_out, double *ms, double *first, double *after)
{
	char **argv = calloc(c->argc + 1, sizeof(*argv));
	int pfd[2] = { -1, -1 }, status = 0, k, err = 0;
	struct rusage ru;
	double t0;
	pid_t pid;

	if (!argv)
		return -ENOMEM;
	for (k = 0; k < c->argc; k++)
		if (!(argv[k] = subst(c->argv[k], i))) {
			err = -ENOMEM;
			goto out;
		}
	if (pipe_out && pipe2(pfd, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	*first = -1;
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (pid == 0) {
		int fd = pipe_out ? pfd[1] : open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "ptime: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pipe_out) {
		char buf[65536];
		ssize_t r;

		close(pfd[1]);
		pfd[1] = -1;
		while ((r = read(pfd[0], buf, sizeof(buf))) != 0) {
			if (r < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			if (*first < 0)
				*first = now_ms() - t0;
			for (ssize_t j = 0; j < r; j++)
				c->lines += buf[j] == '\n';
		}
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			err = -errno;
			goto out;
		}
	*ms = now_ms() - t0;
	if (ru.ru_maxrss > c->rss_max)
		c->rss_max = ru.ru_maxrss;
	err = status;
	if (wait_desc) {
		double t1 = t0 + *ms;
		int st;

		/* every orphan of the command is ptime's child now */
		while (wait4(-1, &st, 0, &ru) >= 0 || errno == EINTR)
			if (ru.ru_maxrss > c->rss_max)
				c->rss_max = ru.ru_maxrss;
		*after = now_ms() - t1;
	}
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	for (k = 0; k < c->argc; k++)
		free(argv[k]);
	free(argv);
	return err;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void)
{
	fprintf(stderr, "Usage: ptime [-n RUNS] [-m MIN_RUNS] [-T SECS] [-s START] [-N NETNS] [-f] [-e] [-d]\n"
		"             -- CMD ARGS... [::: CMD2 ARGS...]...\n");
}

int main(int argc, char **argv)
{
	int runs = 25, min_runs = 3, pipe_out = 0, keep_going = 0, ncmd = 0, opt, done, k, ret = 0;
	double budget = 0, t0;
	const char *netns = NULL;
	struct cmd cmds[MAXCMD] = {};
	long start = 1;

	while ((opt = getopt(argc, argv, "+n:m:T:s:N:fed")) != -1) {
		switch (opt) {
		case 'n': runs = atoi(optarg); break;
		case 'm': min_runs = atoi(optarg); break;
		case 'T': budget = atof(optarg); break;
		case 's': start = atol(optarg); break;
		case 'N': netns = optarg; break;
		case 'f': pipe_out = 1; break;
		case 'e': keep_going = 1; break;
		case 'd': wait_desc = 1; break;
		default: usage(); return 2;
		}
	}
	if (runs < 1 || min_runs < 1 || optind >= argc) {
		usage();
		return 2;
	}
	if (min_runs > runs)
		min_runs = runs;
	/* split the rest at ":::" */
	for (int a = optind; a < argc; a++) {
		if (!strcmp(argv[a], ":::")) {
			argv[a] = NULL;
			continue;
		}
		if (a == optind || !argv[a - 1]) {
			if (ncmd == MAXCMD) {
				fprintf(stderr, "ptime: at most %d commands\n", MAXCMD);
				return 2;
			}
			cmds[ncmd++].argv = &argv[a];
		}
		cmds[ncmd - 1].argc++;
	}
	if (!ncmd) {
		usage();
		return 2;
	}
	if (netns) {
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "/run/netns/%s", netns);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET)) {
			fprintf(stderr, "ptime: network namespace %s: %s\n", netns, strerror(errno));
			return 1;
		}
		close(fd);
	}
	for (k = 0; k < ncmd; k++) {
		cmds[k].ms = calloc(runs, sizeof(double));
		cmds[k].first = calloc(runs, sizeof(double));
		cmds[k].after = calloc(runs, sizeof(double));
		if (!cmds[k].ms || !cmds[k].first || !cmds[k].after) {
			fprintf(stderr, "ptime: out of memory\n");
			ret = 1;
			goto out;
		}
	}
	if (wait_desc && prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		fprintf(stderr, "ptime: -d: %s\n", strerror(errno));
		ret = 1;
		goto out;
	}
	t0 = now_ms();
	for (done = 0; done < runs; done++) {
		if (done >= min_runs && budget > 0 && now_ms() - t0 >= budget * 1e3)
			break;
		for (k = 0; k < ncmd; k++) {
			int st = run1(&cmds[k], start + done, pipe_out, &cmds[k].ms[done], &cmds[k].first[done],
					  &cmds[k].after[done]);

			if (st < 0) {
				fprintf(stderr, "ptime: %s: %s\n", cmds[k].argv[0], strerror(-st));
				ret = 1;
				goto out;
			}
			if (st) {
				cmds[k].fails++;
				if (!keep_going) {
					fprintf(stderr, "ptime: %s (command %d, run %d) %s %d\n", cmds[k].argv[0], k + 1,
						done + 1, WIFEXITED(st) ? "exited" : "killed by signal",
						WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
					ret = 1;
					goto out;
				}
			}
		}
	}
	for (k = 0; k < ncmd; k++) {
		struct cmd *c = &cmds[k];
		double med = median(c->ms, done);
		int nf = 0;

		printf("cmd=%d runs=%d fail=%d min_ms=%.2f med_ms=%.2f p99_ms=%.2f max_ms=%.2f rss_max_kb=%ld",
		       k + 1, done, c->fails, c->ms[0], med, c->ms[(int)ceil(0.99 * done) - 1],
		       c->ms[done - 1], c->rss_max);
		if (pipe_out) {
			for (int r = 0; r < done; r++)
				if (c->first[r] >= 0)
					c->first[nf++] = c->first[r];
			if (nf) {
				double fmed = median(c->first, nf);

				printf(" first_med_ms=%.2f first_max_ms=%.2f", fmed, c->first[nf - 1]);
			} else {
				printf(" first_med_ms=- first_max_ms=-");
			}
			printf(" lines=%ld", c->lines / done);
		}
		if (wait_desc) {
			double amed = median(c->after, done);

			printf(" after_med_ms=%.2f after_max_ms=%.2f", amed, c->after[done - 1]);
		}
		printf("\n");
	}
out:
	for (k = 0; k < ncmd; k++) {
		free(cmds[k].ms);
		free(cmds[k].first);
		free(cmds[k].after);
	}
	return ret;
}
