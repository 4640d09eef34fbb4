// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `rule load` of many rules as users run it: a load into a block that
 * holds rules costs what it costs into an empty one (it reads none of the
 * rules already there), its memory stays a few hundred bytes a rule, and
 * long loads and restores show their progress on a terminal, never in a
 * pipe.  Each test has its own state (XTCAM_INSTANCE) and removes it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tcli.h"

static char inst[32], dir[64];

static void setup(void)
{
	if (geteuid())
		cr_skip_test("needs root (bpffs, BPF maps)");
	snprintf(inst, sizeof(inst), "xtcam-test-%d", (int)getpid());
	setenv("XTCAM_INSTANCE", inst, 1);
	if (!getenv("XTCAM_BIN"))
		setenv("XTCAM_BIN", "build/xtcam", 1);
	snprintf(dir, sizeof(dir), "/tmp/xtcam-test-%d.d", (int)getpid());
	cr_assert_eq(t_sh(NULL, "mkdir -p %s", dir), 0);
}

static void teardown(void)
{
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -rf /sys/fs/bpf/%s /run/%s.lock %s", inst, inst, dir);
	t_net_cleanup();
}

TestSuite(cli_load, .init = setup, .fini = teardown);

/* N rules of /32 sources 10.B.x.y (B tells files apart), no handles */
static void rules_file(const char *path, int n, int b)
{
	FILE *f = fopen(path, "w");

	cr_assert(f, "%s", path);
	for (int i = 0; i < n; i++)
		fprintf(f, "prio %d eth_type ipv4 src_ip 10.%d.%d.%d action drop\n", 1 + i % 100, b,
			(i >> 8) & 255, i & 255);
	fclose(f);
}

static void need_strace(void)
{
	cr_assert_eq(t_sh(NULL, "strace -V"), 0, "strace is needed (apt-get install strace)");
}

/* the bpf() calls of `xtcam ARGS` */
static int bpf_calls(const char *args)
{
	char *o = NULL, trace[96];
	int calls = -1;

	snprintf(trace, sizeof(trace), "%s/strace.out", dir);
	/* LeakSanitizer (the cli-asan run) does not work under ptrace */
	cr_assert_eq(t_sh(&o, "ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o %s -e trace=bpf %s %s",
			  trace, getenv("XTCAM_BIN"), args), 0, "%s: %s", args, o);
	free(o);
	cr_assert_eq(t_sh(&o, "grep -c 'bpf(' %s", trace), 0);
	calls = atoi(o);
	free(o);
	return calls;
}

static long long rules_of(const char *block)
{
	char *o = NULL;
	long long n;

	cr_assert_eq(t_xtcam(&o, "-j block show %s", block), 0, "%s", o);
	n = t_json_ll(o, "0.rules");
	free(o);
	return n;
}

/* 100 rules into a block of 5,000 make as many bpf() calls as into an
 * empty block: none of the 5,000 is read (each would be one or two) */
Test(cli_load, load_into_a_full_block_reads_none_of_its_rules, .timeout = 300)
{
	char big[96], small[96], clash[96], args[160], *o = NULL;
	int full, empty;

	need_strace();
	snprintf(big, sizeof(big), "%s/big.rules", dir);
	snprintf(small, sizeof(small), "%s/small.rules", dir);
	snprintf(clash, sizeof(clash), "%s/clash.rules", dir);
	rules_file(big, 5000, 1);
	rules_file(small, 100, 2);
	XT_OK("block add full capacity 8000");
	XT_OK("block add empty capacity 8000");
	XT_OK("rule load full %s", big);
	snprintf(args, sizeof(args), "rule load full %s", small);
	full = bpf_calls(args);
	snprintf(args, sizeof(args), "rule load empty %s", small);
	empty = bpf_calls(args);
	cr_assert_eq(rules_of("full"), 5100);
	cr_assert_eq(rules_of("empty"), 100);
	cr_assert_leq(full, empty + 20, "into 5,000 rules: %d bpf() calls, into none: %d",
		      full, empty);
	/* the new rules took the handles after the highest */
	cr_assert_eq(t_xtcam(&o, "rule show full handle 5100"), 0, "%s", o);
	cr_assert(strstr(o, "10.2.0.99"), "%s", o);
	free(o);
	/* a handle in use is still refused, and then nothing is loaded */
	cr_assert_eq(t_sh(NULL, "printf 'prio 1 handle 9000 src_ip 10.3.0.1 action drop\\n"
			  "prio 1 handle 4321 src_ip 10.3.0.2 action drop\\n' > %s", clash), 0);
	cr_assert_eq(t_xtcam(&o, "rule load full %s", clash), 1, "%s", o);
	cr_assert(strstr(o, "handle 4321 is in use"), "%s", o);
	cr_assert(strstr(o, "nothing loaded"), "%s", o);
	free(o);
	cr_assert_eq(rules_of("full"), 5100);
	cr_assert_eq(t_xtcam(&o, "rule show full handle 9000"), 1, "%s", o);
	free(o);
}

/* the peak RSS of `xtcam ARGS`, in KiB, and of what it leaves behind (a
 * big load's finisher, waited for as its subreaper: each must end well) */
static long peak_kib(const char *args)
{
	char cmd[512];
	struct rusage ru;
	long kib;
	int st;
	pid_t pid;

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	snprintf(cmd, sizeof(cmd), "exec %s %s >/dev/null", getenv("XTCAM_BIN"), args);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "%s: status %d", args, st);
	kib = ru.ru_maxrss;
	while ((pid = wait4(-1, &st, 0, &ru)) > 0) {
		cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "%s: what it left, status %d", args,
			  st);
		if (ru.ru_maxrss > kib)
			kib = ru.ru_maxrss;
	}
	cr_assert_eq(errno, ECHILD);
	return kib;
}

/* `rule show` of a long block walks its index a chunk of keys a bpf()
 * call, not a key a call: about one call a rule (its lookup) in all */
Test(cli_load, rule_show_walks_the_index_in_chunks, .timeout = 300)
{
	char rules[96], *o = NULL;
	int calls;

	need_strace();
	snprintf(rules, sizeof(rules), "%s/r.rules", dir);
	rules_file(rules, 10000, 1);
	XT_OK("block add b capacity 12000");
	XT_OK("rule load b %s", rules);
	calls = bpf_calls("rule show b");
	cr_assert_lt(calls, 11000, "rule show of 10,000 rules: %d bpf() calls", calls);
	/* every rule once, in (prio, handle) order */
	cr_assert_eq(t_sh(&o, "%s rule show b | awk '/^handle/ { n++; if ($4 < p || ($4 == p && "
			  "$2 <= h)) bad++; p = $4; h = $2 } END { print n + 0, bad + 0 }'",
			  getenv("XTCAM_BIN")), 0, "%s", o);
	cr_assert_str_eq(o, "10000 0\n");
	free(o);
}

/* the execve() calls of `xtcam ARGS` run with environment ENV, each
 * line of strace's in *out */
static int execs(char **out, const char *env, const char *args)
{
	char *o = NULL, trace[96];
	int n;

	snprintf(trace, sizeof(trace), "%s/exec.out", dir);
	cr_assert_eq(t_sh(&o, "env -u GLIBC_TUNABLES %s ASAN_OPTIONS=detect_leaks=0 strace -f -qq "
			  "-v -s 512 -o %s -e trace=execve %s %s", env, trace,
			  getenv("XTCAM_BIN"), args), 0, "%s: %s", args, o);
	free(o);
	cr_assert_eq(t_sh(out, "grep 'execve(' %s", trace), 0);
	cr_assert_eq(t_sh(&o, "grep -c 'execve(' %s", trace), 0);
	n = atoi(o);
	free(o);
	return n;
}

/* PATH padded with comment lines to at least 4 MiB */
static void pad(const char *path)
{
	cr_assert_eq(t_sh(NULL, "yes '# a comment line, of which there are many' | head -c 4194304 "
			  ">> %s && echo >> %s", path, path), 0);
}

/* Where the kernel gives huge pages to memory that asks ("madvise"), a
 * load of a big file starts itself again with glibc's malloc asking;
 * small files, other commands, and a caller who set the tunable are not
 * started again */
Test(cli_load, a_big_load_runs_with_huge_pages, .timeout = 300)
{
	char rules[96], small[96], batch[96], args[160], *x = NULL;

	if (t_sh(NULL, "grep -q '\\[madvise\\]' /sys/kernel/mm/transparent_hugepage/enabled"))
		cr_skip_test("transparent huge pages are not \"madvise\" here");
	need_strace();
	snprintf(rules, sizeof(rules), "%s/r.rules", dir);
	snprintf(small, sizeof(small), "%s/s.rules", dir);
	snprintf(batch, sizeof(batch), "%s/b.batch", dir);
	rules_file(rules, 300, 1);
	pad(rules);
	rules_file(small, 300, 2);
	cr_assert_eq(t_sh(NULL, "echo 'block show b' > %s", batch), 0);
	pad(batch);
	XT_OK("block add b capacity 2000");
	snprintf(args, sizeof(args), "rule load b %s", rules);
	cr_assert_eq(execs(&x, "", args), 2, "%s", x);
	cr_assert(strstr(x, "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"), "%s", x);
	free(x);
	cr_assert_eq(rules_of("b"), 300);
	/* the caller's tunables kept beside it */
	snprintf(args, sizeof(args), "-batch %s", batch);
	cr_assert_eq(execs(&x, "GLIBC_TUNABLES=glibc.malloc.check=0", args), 2, "%s", x);
	cr_assert(strstr(x, "GLIBC_TUNABLES=glibc.malloc.check=0:glibc.malloc.hugetlb=1"),
		  "%s", x);
	free(x);
	/* a big file on standard input, and --batch=FILE */
	snprintf(args, sizeof(args), "rule load b - < %s", rules);
	cr_assert_eq(execs(&x, "", args), 2, "%s", x);
	free(x);
	snprintf(args, sizeof(args), "--batch=%s", batch);
	cr_assert_eq(execs(&x, "", args), 2, "%s", x);
	free(x);
	/* a stray variable of the restart's own does not stop it */
	snprintf(args, sizeof(args), "rule load b %s", rules);
	cr_assert_eq(execs(&x, "XTCAM_GLIBC_TUNABLES_WAS==glibc.malloc.check=0", args), 2, "%s", x);
	cr_assert(strstr(x, "\"GLIBC_TUNABLES=glibc.malloc.hugetlb=1\""), "%s", x);
	free(x);
	snprintf(args, sizeof(args), "rule load b %s", small);
	cr_assert_eq(execs(&x, "", args), 1, "%s", x);
	free(x);
	cr_assert_eq(execs(&x, "", "rule show b"), 1, "%s", x);
	free(x);
	snprintf(args, sizeof(args), "rule load b %s", rules);
	cr_assert_eq(execs(&x, "GLIBC_TUNABLES=glibc.malloc.hugetlb=0", args), 1, "%s", x);
	free(x);
	cr_assert_eq(rules_of("b"), 1500);
}

/* the rules of a load are held packed and not copied again and again:
 * 100,000 rules take well under 300 bytes each at the peak (a parsed rule
 * is 272 unpacked) */
Test(cli_load, load_memory_is_a_few_hundred_bytes_a_rule, .timeout = 300)
{
	char path[96], args[160];
	long kib;

	if (strstr(getenv("XTCAM_BIN"), "asan"))
		cr_skip_test("the sanitizers' memory is not the load's");
	snprintf(path, sizeof(path), "%s/many.rules", dir);
	rules_file(path, 100000, 4);
	XT_OK("block add many capacity 120000");
	snprintf(args, sizeof(args), "rule load many %s", path);
	kib = peak_kib(args);
	cr_assert_eq(rules_of("many"), 100000);
	cr_assert_lt(kib * 1024 / 100000, 300, "peak RSS %ld KiB: %ld bytes a rule", kib,
		     kib * 1024 / 100000);
}

/* a load into a bound block: the data path's transaction (its mirrors,
 * its batches to the maps) and the registry's writes work in chunks, not
 * in copies of the whole batch, and the rules stay packed: 100,000 rules
 * bound native take well under 500 bytes each at the peak, and every one
 * of them is in the block */
Test(cli_load, bound_load_memory_is_a_few_hundred_bytes_a_rule, .timeout = 300)
{
	char path[96], args[160], *o = NULL;
	struct t_pair p;
	long kib;

	if (strstr(getenv("XTCAM_BIN"), "asan"))
		cr_skip_test("the sanitizers' memory is not the load's");
	cr_assert_eq(t_pair_make(&p, "m"), 0);
	snprintf(path, sizeof(path), "%s/bound.rules", dir);
	rules_file(path, 100000, 6);
	XT_OK("block add bound capacity 120000");
	XT_OK("bind bound dev %s netns %s mode native", p.a, p.ns_a);
	snprintf(args, sizeof(args), "rule load bound %s", path);
	kib = peak_kib(args);
	cr_assert_eq(rules_of("bound"), 100000);
	cr_assert_eq(t_xtcam(&o, "-j block show bound"), 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.entries"), 100000, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule show bound handle 100000"), 0, "%s", o);
	cr_assert(strstr(o, "10.6.134.159"), "%s", o);
	free(o);
	cr_assert_lt(kib * 1024 / 100000, 500, "peak RSS %ld KiB: %ld bytes a rule", kib,
		     kib * 1024 / 100000);
	XT_OK("unbind bound dev %s netns %s", p.a, p.ns_a);
	t_pair_free(&p);
}

/* progress on stderr when it is a terminal (script gives the command a
 * pty), nothing when it is a pipe; the second's wait forced to 0 */
Test(cli_load, progress_on_a_terminal_only, .timeout = 300)
{
	char path[96], saved[96], *o = NULL;

	cr_assert_eq(t_sh(&o, "script -V"), 0, "script (util-linux) is needed");
	free(o);
	snprintf(path, sizeof(path), "%s/p.rules", dir);
	snprintf(saved, sizeof(saved), "%s/p.save", dir);
	rules_file(path, 20000, 5);
	XT_OK("block add p capacity 30000");
	XT_OK("block add q capacity 30000");
	/* a pipe: the output of a quiet load is empty */
	cr_assert_eq(t_sh(&o, "XTCAM_PROGRESS_AFTER_MS=0 %s rule load p %s 2>&1 | cat",
			  getenv("XTCAM_BIN"), path), 0, "%s", o);
	cr_assert_str_eq(o, "", "nothing but progress could be printed: %s", o);
	free(o);
	cr_assert_eq(rules_of("p"), 20000);
	/* a terminal: rules done of the total, and a rate */
	cr_assert_eq(t_sh(&o, "XTCAM_PROGRESS_AFTER_MS=0 script -qec '%s rule load q %s' "
			  "/dev/null", getenv("XTCAM_BIN"), path), 0, "%s", o);
	cr_assert(strstr(o, "reading 20000 of 20000 rules, "), "%s", o);
	cr_assert(strstr(o, "registry 20000 of 20000 rules, "), "%s", o);
	cr_assert(strstr(o, "/s"), "%s", o);
	free(o);
	/* restore: its reading and its load */
	cr_assert_eq(t_sh(NULL, "%s save > %s", getenv("XTCAM_BIN"), saved), 0);
	XT_OK("flush");
	cr_assert_eq(t_sh(&o, "XTCAM_PROGRESS_AFTER_MS=0 script -qec '%s restore %s' /dev/null",
			  getenv("XTCAM_BIN"), saved), 0, "%s", o);
	cr_assert(strstr(o, "reading 4096 rules, "), "%s", o);
	cr_assert(strstr(o, "registry 20000 of 20000 rules, "), "%s", o);
	free(o);
	cr_assert_eq(rules_of("p"), 20000);
	cr_assert_eq(rules_of("q"), 20000);
	XT_OK("flush");
	cr_assert_eq(t_sh(&o, "XTCAM_PROGRESS_AFTER_MS=0 %s restore %s 2>&1 | cat",
			  getenv("XTCAM_BIN"), saved), 0, "%s", o);
	cr_assert_str_eq(o, "", "%s", o);
	free(o);
}

/* A load of more than 65,536 rules works on two cores (the registry beside
 * the data path, then the registry's commit beside the data path's
 * catch-up).  Killed at each step of it: the next command sees the old
 * rule or all the new ones, and the data path and both generations of the
 * registry follow (a rule of the new set can be deleted, one of the old
 * state's free handles added, and the block counts right after).  (The
 * steps after the commit point are the finisher's: the next test.) */
Test(cli_load, a_two_core_load_killed_at_each_step_leaves_old_or_new, .timeout = 600)
{
	static const char *const points[] = { "stage", "deliver", "flip" };
	char path[96], *o = NULL;
	struct t_pair p;
	size_t i;
	int rc;

	cr_assert_eq(t_pair_make(&p, "k"), 0);
	snprintf(path, sizeof(path), "%s/big.rules", dir);
	rules_file(path, 70000, 7);
	XT_OK("block add big capacity 80000");
	XT_OK("rule add big prio 1 handle 1 eth_type ipv6 action pass");
	XT_OK("bind big dev %s netns %s mode native", p.a, p.ns_a);
	for (i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		bool after = i >= 2;    /* flip: the registry's commit point */
		long long n;

		rc = t_sh(&o, "XTCAM_CRASH_AT=%s %s rule load big %s", points[i],
			  getenv("XTCAM_BIN"), path);
		cr_assert_neq(rc, 0, "killed at %s: %s", points[i], o);
		free(o);
		n = rules_of("big");
		cr_assert_eq(n, after ? 70001 : 1, "killed at %s: %lld rules", points[i], n);
		if (after) {
			XT_OK("rule del big handle 70001");
			cr_assert_eq(t_xtcam(&o, "rule show big handle 2"), 0, "%s", o);
			cr_assert(strstr(o, "src_ip 10.7.0.0"), "%s", o);
			free(o);
		} else {
			XT_OK("rule add big prio 3 handle 70001 eth_type ipv4 src_ip 192.0.2.1 "
			      "action drop");
		}
		cr_assert_eq(rules_of("big"), after ? 70000 : 2);
		cr_assert_eq(t_xtcam(&o, "-j block show big"), 0, "%s", o);
		cr_assert_eq(t_json_ll(o, "0.entries"), after ? 70000 : 2, "%s", o);
		free(o);
		/* back to the one rule, handles from 1 again */
		XT_OK("rule flush big");
		XT_OK("rule add big prio 1 handle 1 eth_type ipv6 action pass");
		cr_assert_eq(rules_of("big"), 1);
	}
	XT_OK("unbind big dev %s netns %s", p.a, p.ns_a);
	t_pair_free(&p);
}

/* the load's finisher, a child of this process once the command has
 * exited (a subreaper: orphans come here): its pid and wait status */
static pid_t finisher_wait(int *status, int flags)
{
	pid_t pid;

	do
		pid = waitpid(-1, status, flags);
	while (pid < 0 && errno == EINTR);
	return pid;
}

/* A load of more than 65,536 rules returns at its commit point: the
 * registry's copy into its other generation and the data path's grace
 * period and catch-up are left to a detached process, which keeps the
 * writers' lock and none of the caller's files (a pipe's reader sees its
 * end when the command exits).  While it is stopped, readers see the new
 * rules and writers wait for it (naming it); killed at each of its steps,
 * the command has still succeeded, and the next command sees all the new
 * rules, the data path and both generations of the registry following. */
Test(cli_load, a_big_load_returns_at_its_commit_and_its_finisher_can_be_killed,
     .timeout = 600)
{
	static const char *const points[] = { "finish", "catch-up", "copy", "commit" };
	char path[96], bpath[96], *o = NULL;
	FILE *bf;
	struct t_pair p;
	size_t i;
	pid_t fin;
	int rc, st;

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cr_assert_eq(t_pair_make(&p, "f"), 0);
	snprintf(path, sizeof(path), "%s/fin.rules", dir);
	rules_file(path, 70000, 8);
	XT_OK("block add big capacity 80000");
	XT_OK("bind big dev %s netns %s mode native", p.a, p.ns_a);
	/* stopped at its start: the command's pipe has ended, the rules are
	 * there for readers, a writer that does not wait is refused */
	rc = t_sh(&o, "XTCAM_STOP_AT=finish %s rule load big %s | cat", getenv("XTCAM_BIN"),
		  path);
	cr_assert_eq(rc, 0, "%s", o);
	cr_assert_str_eq(o, "", "%s", o);
	free(o);
	fin = finisher_wait(&st, WUNTRACED);
	cr_assert_gt(fin, 0);
	cr_assert(WIFSTOPPED(st), "status %d", st);
	cr_assert_eq(rules_of("big"), 70000);
	cr_assert_eq(t_xtcam(&o, "rule show big handle 70000"), 0, "%s", o);
	cr_assert(strstr(o, "src_ip 10.8.17.111"), "%s", o);
	free(o);
	rc = t_xtcam(&o, "-w 0 rule add big prio 1 handle 70001 eth_type ipv6 action pass");
	cr_assert_eq(rc, 4, "%s", o);
	cr_assert(strstr(o, "held by pid"), "%s", o);
	free(o);
	cr_assert_eq(kill(fin, SIGCONT), 0);
	cr_assert_eq(finisher_wait(&st, 0), fin);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "status %d", st);
	/* started with stdin and stderr closed: the lock file the command
	 * opens is not among the streams the finisher points at /dev/null,
	 * so the finisher still holds the lock */
	XT_OK("rule flush big");
	rc = t_sh(&o, "{ XTCAM_STOP_AT=finish %s rule load big %s <&- >/dev/null 2>&-; }",
		  getenv("XTCAM_BIN"), path);
	cr_assert_eq(rc, 0, "%s", o);
	free(o);
	fin = finisher_wait(&st, WUNTRACED);
	cr_assert_gt(fin, 0);
	cr_assert(WIFSTOPPED(st), "status %d", st);
	rc = t_xtcam(&o, "-w 0 rule add big prio 1 handle 70001 eth_type ipv6 action pass");
	cr_assert_eq(rc, 4, "the lock let go with the finisher stopped: %s", o);
	free(o);
	cr_assert_eq(kill(fin, SIGCONT), 0);
	cr_assert_eq(finisher_wait(&st, 0), fin);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "status %d", st);
	XT_OK("rule flush big");
	XT_OK("rule add big prio 1 handle 1 eth_type ipv6 action pass");
	for (i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		long long n;

		rc = t_sh(&o, "XTCAM_CRASH_AT=%s %s rule load big %s", points[i],
			  getenv("XTCAM_BIN"), path);
		cr_assert_eq(rc, 0, "finisher killed at %s: %s", points[i], o);
		free(o);
		fin = finisher_wait(&st, 0);
		cr_assert_gt(fin, 0, "%s", points[i]);
		cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: status %d", points[i],
			  st);
		/* committed: the new rules, then repaired by the next writer */
		n = rules_of("big");
		cr_assert_eq(n, 70001, "finisher killed at %s: %lld rules", points[i], n);
		XT_OK("rule del big handle 70001");
		cr_assert_eq(t_xtcam(&o, "rule show big handle 2"), 0, "%s", o);
		cr_assert(strstr(o, "src_ip 10.8.0.0"), "%s", o);
		free(o);
		cr_assert_eq(rules_of("big"), 70000);
		cr_assert_eq(t_xtcam(&o, "-j block show big"), 0, "%s", o);
		cr_assert_eq(t_json_ll(o, "0.entries"), 70000, "%s", o);
		free(o);
		/* back to the one rule, handles from 1 again */
		XT_OK("rule flush big");
		XT_OK("rule add big prio 1 handle 1 eth_type ipv6 action pass");
		cr_assert_eq(rules_of("big"), 1);
	}
	/* in -batch, the lines after the load wait for its finisher and
	 * start afresh: killed midway, its copy is repaired before the next
	 * line writes */
	snprintf(bpath, sizeof(bpath), "%s/one.rules", dir);
	bf = fopen(bpath, "w");
	cr_assert(bf);
	fprintf(bf, "prio 2 handle 70002 eth_type ipv4 src_ip 192.0.2.2 action drop\n");
	fclose(bf);
	snprintf(bpath, sizeof(bpath), "%s/fin.batch", dir);
	bf = fopen(bpath, "w");
	cr_assert(bf);
	fprintf(bf, "rule load big %s\nrule load big %s/one.rules\nrule del big handle 70001\n",
		path, dir);
	fclose(bf);
	rc = t_sh(&o, "XTCAM_CRASH_AT=copy %s -batch %s", getenv("XTCAM_BIN"), bpath);
	cr_assert_eq(rc, 0, "%s", o);
	free(o);
	fin = finisher_wait(&st, 0);
	cr_assert_gt(fin, 0);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %d", st);
	cr_assert_eq(rules_of("big"), 70001);
	cr_assert_eq(t_xtcam(&o, "rule show big handle 3"), 0, "%s", o);
	cr_assert(strstr(o, "src_ip 10.8.0.1"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "rule show big"), 0, "%s", o);
	cr_assert(strstr(o, "handle 70002 "), "%s", o);
	cr_assert(strstr(o, "handle 70000 "), "%s", o);
	free(o);
	XT_OK("rule del big handle 70002");
	cr_assert_eq(t_xtcam(&o, "-j block show big"), 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.entries"), 70000, "%s", o);
	free(o);
	XT_OK("unbind big dev %s netns %s", p.a, p.ns_a);
	t_pair_free(&p);
}

/* A long file is parsed in two halves at once: the rules keep the order of
 * the file (the handles they are given follow its lines), and a bad line in
 * the second half is named by its line in the file, blank and comment
 * lines counted, with nothing loaded. */
Test(cli_load, a_long_file_keeps_its_order_and_names_its_bad_line, .timeout = 300)
{
	char path[96], bad[96], *o = NULL;
	long h;

	snprintf(path, sizeof(path), "%s/long.rules", dir);
	snprintf(bad, sizeof(bad), "%s/long.bad", dir);
	rules_file(path, 100000, 5);
	/* a comment and a blank line early, a bad line late */
	cr_assert_eq(t_sh(NULL, "{ echo '# a comment'; echo; sed -n '1,89997p' %s; "
			  "echo 'prio 5 src_ip 10.0.0.300 action drop'; sed -n '89998,$p' %s; } > %s",
			  path, path, bad), 0);
	XT_OK("block add long capacity 120000");
	cr_assert_eq(t_xtcam(&o, "rule load long %s", bad), 1, "%s", o);
	cr_assert(strstr(o, "long.bad:90000: src_ip"), "%s", o);
	cr_assert(strstr(o, "nothing loaded"), "%s", o);
	free(o);
	cr_assert_eq(rules_of("long"), 0);
	XT_OK("rule load long %s", path);
	cr_assert_eq(rules_of("long"), 100000);
	/* handle h is line h: 10.5.x.y with x.y = h - 1 (mod 65536) */
	for (h = 1; h <= 100000; h += 4999) {
		char want[64];

		snprintf(want, sizeof(want), " src_ip 10.5.%ld.%ld ", ((h - 1) >> 8) & 255,
			 (h - 1) & 255);
		cr_assert_eq(t_xtcam(&o, "rule show long handle %ld", h), 0, "%s", o);
		cr_assert(strstr(o, want), "handle %ld: %s", h, o);
		free(o);
	}
}
