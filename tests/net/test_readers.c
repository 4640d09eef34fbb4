// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Readers without the lock: `rule show`, `block show` and `save` answer
 * while a writer holds the lock (run with -w 0: a reader that waited for
 * it would fail with exit 4), and what they print is one committed state:
 * never a change half made, never a mix of two, whether the writer is at
 * work, stopped in the middle of a commit (XTCAM_STOP_AT) or killed
 * there.  Each test has its own state (XTCAM_INSTANCE) and removes it.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "xtcam/dp.h"
#include "tcli.h"
#include "tnet.h"

static char inst[32];
static pid_t child;     /* the writer in the background, if any */

static void setup(void)
{
	if (geteuid())
		cr_skip_test("needs root (bpffs, BPF maps)");
	snprintf(inst, sizeof(inst), "xtcam-rd-%d", (int)getpid());
	setenv("XTCAM_INSTANCE", inst, 1);
	if (!getenv("XTCAM_BIN"))
		setenv("XTCAM_BIN", "build/xtcam", 1);
}

static void teardown(void)
{
	/* a writer a failed test left stopped holds the lock */
	if (child > 0 && !kill(child, SIGKILL))
		waitpid(child, NULL, 0);
	child = 0;
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -rf /sys/fs/bpf/%s /run/%s.lock", inst, inst);
	t_net_cleanup();
}

TestSuite(cli_readers, .init = setup, .fini = teardown);

static const char *bin(void)
{
	return getenv("XTCAM_BIN");
}

/* the CLI under ASan (the cli-asan suite) is several times slower: the
 * long loops run shorter there */
static bool sanitized(void)
{
	return strstr(bin(), "asan") != NULL;
}

/* a shell command in the background, its output in log (for the
 * sanitizer check at reap) */
static pid_t spawn(const char *log, const char *fmt, ...)
{
	char cmd[4096], full[4200];
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "exec >%s 2>&1; exec %s", log, cmd);
	pid = fork();
	cr_assert(pid >= 0);
	if (!pid) {
		execl("/bin/sh", "sh", "-c", full, (char *)NULL);
		_exit(127);
	}
	child = pid;
	return pid;
}

/* its exit status (128 + signal when killed); fails on a sanitizer
 * report.  A writer that stops again (XTCAM_STOP_AT at a point it passes
 * more than once) is let go each time. */
static int reap(pid_t pid, const char *log)
{
	char *o = NULL;
	int st;

	for (;;) {
		cr_assert_eq(waitpid(pid, &st, WUNTRACED), pid);
		if (!WIFSTOPPED(st))
			break;
		kill(pid, SIGCONT);
	}
	child = 0;
	if (!t_sh(&o, "grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' %s", log))
		cr_assert_fail("sanitizer report from the writer: %s", o);
	free(o);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* wait until pid (a writer with XTCAM_STOP_AT) has stopped itself */
static bool stopped(pid_t pid)
{
	char path[64], buf[512], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 3000; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'T')
			return true;
		if (p && p[1] == ' ' && p[2] == 'Z')
			return false;           /* finished without stopping */
		usleep(10000);
	}
	return false;
}

/* the handles of `rule show -j` or of `save` ("handle N" words), in order */
static size_t handles_of(const char *text, unsigned int *h, size_t max)
{
	const char *p = text;
	size_t n = 0;

	while ((p = strstr(p, "handle")) && n < max) {
		p += 6;
		while (*p == '"' || *p == ':' || *p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		h[n++] = (unsigned int)strtoul(p, NULL, 10);
	}
	return n;
}

/* a reader that must not wait: the lock is not to be waited for (-w 0,
 * exit 4 if it were) and it must be done in 30 s (timeout: 124) */
static int reader(char **out, const char *args)
{
	return t_sh(out, "timeout 30 %s -w 0 %s", bin(), args);
}

/* --- a writer stopped in the middle of a commit ---------------------------- */

static void check_readers(const char *when, bool done)
{
	unsigned int h[16];
	char *o = NULL;
	size_t n;
	int rc;

	rc = reader(&o, "-j rule show b");
	cr_assert_eq(rc, 0, "%s: rule show: exit %d: %s", when, rc, o);
	n = handles_of(o, h, 16);
	cr_assert_eq(n, done ? 3 : 2, "%s: rule show: %s", when, o);
	cr_assert(h[0] == 1 && h[n - 1] == 2 && (!done || h[1] == 3), "%s: rule show: %s", when, o);
	free(o);
	rc = reader(&o, "rule show b");
	cr_assert_eq(rc, 0, "%s: rule show (text): exit %d: %s", when, rc, o);
	cr_assert_eq(strstr(o, "handle 3 prio 15") != NULL, done, "%s: %s", when, o);
	cr_assert(strstr(o, "handle 1 prio 10") && strstr(o, "handle 2 prio 20"), "%s: %s", when, o);
	free(o);
	rc = reader(&o, "-j rule show b handle 3");
	cr_assert_eq(rc, done ? 0 : 1, "%s: rule show handle 3: exit %d: %s", when, rc, o);
	free(o);
	rc = reader(&o, "rule show b handle 1");
	cr_assert_eq(rc, 0, "%s: rule show handle 1: exit %d: %s", when, rc, o);
	cr_assert(strstr(o, "handle 1 prio 10"), "%s: %s", when, o);
	free(o);
	rc = reader(&o, "-j block show b");
	cr_assert_eq(rc, 0, "%s: block show: exit %d: %s", when, rc, o);
	cr_assert_eq(t_json_ll(o, "0.rules"), done ? 3 : 2, "%s: %s", when, o);
	cr_assert_eq(t_json_ll(o, "0.bindings.#"), 1, "%s: %s", when, o);
	free(o);
	rc = reader(&o, "block show");
	cr_assert_eq(rc, 0, "%s: block show (text): exit %d: %s", when, rc, o);
	free(o);
	rc = reader(&o, "save");
	cr_assert_eq(rc, 0, "%s: save: exit %d: %s", when, rc, o);
	cr_assert_eq(strstr(o, "handle 3 ") != NULL, done, "%s: save: %s", when, o);
	cr_assert(strstr(o, "handle 1 ") && strstr(o, "handle 2 ") && strstr(o, "bind b dev lo"),
		  "%s: save: %s", when, o);
	free(o);
}

Test(cli_readers, readers_finish_while_a_writer_is_stopped_mid_commit, .timeout = 300)
{
	/* in order; publish: inside the data path's in-place change */
	static const char *const points[] = { "stage", "deliver", "publish", "flip", "commit" };
	char ns[32], log[64], when[96];
	size_t i;

	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	t_name(ns, sizeof(ns), "rd");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add b");
	XT_OK("rule add b prio 10 handle 1 eth_type ipv4 action drop");
	XT_OK("rule add b prio 20 handle 2 eth_type ipv6 action pass");
	XT_OK("bind b dev lo netns %s mode generic", ns);
	for (i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		bool done = i >= 3;     /* past the commit point */
		pid_t pid;

		/* the first rule's tuple, above its bound: published in place */
		pid = spawn(log, "env XTCAM_STOP_AT=%s %s rule add b prio 15 handle 3 eth_type ipv4 "
			    "action pass", points[i], bin());
		snprintf(when, sizeof(when), "writer stopped at %s", points[i]);
		if (!stopped(pid)) {
			kill(pid, SIGKILL);
			reap(pid, log);
			cr_assert_fail("%s: it never stopped there", when);
		}
		check_readers(when, done);
		kill(pid, SIGCONT);
		cr_assert_eq(reap(pid, log), 0, "%s: the writer, let go, finishes", when);
		check_readers("after it", true);
		XT_OK("rule del b handle 3");
	}
	unlink(log);
}

/* --- a replace of 10,000 rules under a reader ------------------------------ */

#define SET_N 10000

/* set 0: handles 1..N (prio 5), set 1: handles 20001..20000+N (prio 6) */
static void write_set(const char *path, int set)
{
	FILE *f = fopen(path, "w");
	int i;

	cr_assert(f);
	for (i = 0; i < SET_N; i++)
		fprintf(f, "prio %d handle %d dst_ip 10.%d.%d.%d action %s\n", 5 + set,
			set * 20000 + 1 + i, set, i >> 8, i & 255, set ? "drop" : "pass");
	fclose(f);
}

/* -1: not exactly one of the sets; else the set */
static int which_set(const char *json, unsigned int *h)
{
	size_t n = handles_of(json, h, SET_N + 2), i;
	int set;

	if (n != SET_N)
		return -1;
	set = h[0] > 20000;
	for (i = 0; i < n; i++)
		if (h[i] != (unsigned int)(set * 20000 + 1 + i))
			return -1;
	return set;
}

Test(cli_readers, rule_show_during_a_replace_load_sees_old_or_new, .timeout = 900)
{
	char ns[32], log[64], path[2][64], *o = NULL;
	unsigned int *h = calloc(SET_N + 2, sizeof(*h));
	int seen[2] = { 0, 0 }, shows = 0, rc, set, st;
	pid_t pid;

	cr_assert(h);
	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	for (set = 0; set < 2; set++) {
		snprintf(path[set], sizeof(path[set]), "/tmp/xtcam-rd-%d.set%d", (int)getpid(), set);
		write_set(path[set], set);
	}
	t_name(ns, sizeof(ns), "rl");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add big capacity 30000");
	XT_OK("rule load big %s", path[0]);
	XT_OK("bind big dev lo netns %s mode generic", ns);

	/* the writer stopped before its commit, then after it */
	pid = spawn(log, "env XTCAM_STOP_AT=deliver %s rule load big %s replace", bin(), path[1]);
	cr_assert(stopped(pid), "the load stops at deliver");
	rc = reader(&o, "-j rule show big");
	cr_assert_eq(rc, 0, "rule show while the load holds the lock: exit %d: %.300s", rc, o);
	cr_assert_eq(which_set(o, h), 0, "before the commit: the old set");
	free(o);
	kill(pid, SIGCONT);
	cr_assert_eq(reap(pid, log), 0);
	pid = spawn(log, "env XTCAM_STOP_AT=flip %s rule load big %s replace", bin(), path[0]);
	cr_assert(stopped(pid), "the load stops at flip");
	rc = reader(&o, "-j rule show big");
	cr_assert_eq(rc, 0, "exit %d: %.300s", rc, o);
	cr_assert_eq(which_set(o, h), 0, "committed, not caught up: the new set");
	free(o);
	kill(pid, SIGCONT);
	cr_assert_eq(reap(pid, log), 0);

	/* and at work: replace after replace, a reader in a loop */
	pid = spawn(log, "sh -c 'for i in 1 2 3 4; do %s rule load big %s replace && "
		    "%s rule load big %s replace || exit 1; done'", bin(), path[1], bin(), path[0]);
	for (;;) {
		bool last = waitpid(pid, &st, WNOHANG) == pid;

		if (last)
			child = 0;

		rc = reader(&o, "-j rule show big");
		cr_assert_eq(rc, 0, "rule show during a replace: exit %d: %.300s", rc, o);
		set = which_set(o, h);
		cr_assert_neq(set, -1, "rule show %d: neither the old set nor the new one", shows);
		seen[set]++;
		shows++;
		free(o);
		if (last)
			break;
	}
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "the writer's loads all succeed");
	cr_log_info("rule show during 8 replaces of %d rules: %d shows, set 0 %d, set 1 %d", SET_N,
		    shows, seen[0], seen[1]);
	cr_assert(seen[0] && seen[1], "the loop saw both sets (%d, %d)", seen[0], seen[1]);
	unlink(path[0]);
	unlink(path[1]);
	unlink(log);
	free(h);
}

/* --- save during single changes and binding moves -------------------------- */

/* Step k of the writer (1..n): every MOVE-th an unbind or a bind, else an
 * add and a delete in turn, of a sliding window of WIN rules: the
 * committed states are the (first, end, bound) of each step. */
#define WIN 16
#define MOVE 250

struct wstate {
	unsigned int lo, hi;    /* handles lo..hi-1 */
	bool bound;
};

static void step(struct wstate *s, int k, FILE *batch, const char *ns)
{
	if (k % MOVE == 0) {
		if (batch && s->bound)
			fprintf(batch, "unbind s dev lo netns %s\n", ns);
		else if (batch)
			fprintf(batch, "bind s dev lo netns %s mode generic\n", ns);
		s->bound = !s->bound;
	} else if (s->hi - s->lo == WIN) {
		if (batch)
			fprintf(batch, "rule add s prio %u handle %u src_ip 10.0.%u.%u action drop\n",
				100 + s->hi, s->hi, s->hi >> 8, s->hi & 255);
		s->hi++;
	} else {
		if (batch)
			fprintf(batch, "rule del s handle %u\n", s->lo);
		s->lo++;
	}
}

/* the state a save text shows, or false when it is none (a rule line that
 * is not the one of its handle, handles not a window) */
static bool save_state(const char *text, struct wstate *s)
{
	const char *p = text;
	unsigned int prio, h, a, b, n = 0;

	s->lo = s->hi = 0;
	while ((p = strstr(p, "\nrule add s "))) {
		p++;
		if (sscanf(p, "rule add s prio %u handle %u src_ip 10.0.%u.%u action drop", &prio, &h,
			   &a, &b) != 4 || prio != 100 + h || a != h >> 8 || b != (h & 255))
			return false;
		if (n && h != s->hi)
			return false;
		if (!n)
			s->lo = h;
		s->hi = h + 1;
		n++;
	}
	s->bound = strstr(text, "\nbind s dev lo") != NULL;
	return strstr(text, "\nblock add s") != NULL;
}

Test(cli_readers, save_during_single_changes_equals_a_committed_state, .timeout = 1800)
{
	int nchanges = sanitized() ? 2000 : 10000, k, saves = 0, refused = 0, rc, st;
	struct wstate s = { 1, 1 + WIN, true }, *path, got;
	char ns[32], log[64], file[64], *o = NULL;
	FILE *f;
	pid_t pid;

	path = calloc((size_t)nchanges + 1, sizeof(*path));
	cr_assert(path);
	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	snprintf(file, sizeof(file), "/tmp/xtcam-rd-%d.batch", (int)getpid());
	t_name(ns, sizeof(ns), "sv");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add s");
	for (k = 1; k <= WIN; k++)
		XT_OK("rule add s prio %d handle %d src_ip 10.0.0.%d action drop", 100 + k, k, k);
	XT_OK("bind s dev lo netns %s mode generic", ns);
	f = fopen(file, "w");
	cr_assert(f);
	path[0] = s;
	for (k = 1; k <= nchanges; k++) {
		step(&s, k, f, ns);
		path[k] = s;
	}
	fclose(f);

	/* one process, each line its own commit */
	pid = spawn(log, "%s -batch %s", bin(), file);
	for (;;) {
		bool last = waitpid(pid, &st, WNOHANG) == pid;

		if (last)
			child = 0;

		rc = reader(&o, "save");
		/* a writer that commits without pause may outpace a reader on
		 * each of its reads: it then refuses (EAGAIN), never waits and
		 * never prints a mix */
		if (rc && strstr(o, "a writer committed during each of") && strstr(o, "EAGAIN")) {
			refused++;
			free(o);
			if (last)
				break;
			usleep(2000);
			continue;
		}
		cr_assert_eq(rc, 0, "save %d during the changes: exit %d: %s", saves, rc, o);
		cr_assert(save_state(o, &got), "save %d: not a state of the block: %s", saves, o);
		for (k = 0; k <= nchanges; k++)
			if (path[k].lo == got.lo && path[k].hi == got.hi && path[k].bound == got.bound)
				break;
		cr_assert(k <= nchanges, "save %d: handles %u..%u, %s: no committed state: %s", saves,
			  got.lo, got.hi, got.bound ? "bound" : "unbound", o);
		saves++;
		free(o);
		if (last)
			break;
		usleep(2000);           /* the writer gets the CPU too */
	}
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "the writer's changes all succeed");
	cr_assert_neq(t_sh(&o, "grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' %s", log), 0,
		      "sanitizer report from the writer: %s", o);
	free(o);
	cr_log_info("%d saves during %d single changes and binding moves, %d refused (EAGAIN)",
		    saves, nchanges, refused);
	cr_assert_gt(saves, 1);
	cr_assert_gt(saves, 10 * refused, "%d saves refused of %d: readers starve", refused,
		     saves + refused);
	unlink(file);
	unlink(log);
	free(path);
}

/* --- kill -9 at random moments ------------------------------------------- */

/* After a writer was killed: a reader sees the old or the new state, and
 * the registry and the block record agree; then a writer works, and the
 * data path it repaired holds exactly the registry's rules. */
static bool after_kill(const char *block, unsigned int handle, size_t n_old, size_t n_new)
{
	char *o = NULL, dir[128], err[256];
	unsigned int *h = calloc(n_new + n_old + 2, sizeof(*h));
	__u32 *dh = NULL;
	struct xtcam_dp *dp = NULL;
	size_t n, i, nd = 0;
	bool has;
	int rc;

	cr_assert(h);
	rc = reader(&o, block[0] == 'k' ? "-j rule show k" : "-j rule show l");
	cr_assert_eq(rc, 0, "the next command works: exit %d: %.300s", rc, o);
	n = handles_of(o, h, n_new + n_old + 1);
	has = false;
	for (i = 0; i < n; i++)
		has |= h[i] == handle;
	cr_assert(n == (has ? n_new : n_old), "old state or new: %zu rules, handle %u %s", n,
		  handle, has ? "there" : "not there");
	free(o);
	rc = reader(&o, block[0] == 'k' ? "-j block show k" : "-j block show l");
	cr_assert_eq(rc, 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.rules"), (long long)n, "the record agrees: %s", o);
	free(o);
	/* a writer: repairs what the kill left, and works */
	XT_OK("rule add %s prio 1 handle 99999 eth_type ipv6 action pass", block);
	XT_OK("rule del %s handle 99999", block);
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/%s/%s/xdp", inst, block);
	cr_assert_eq(xtcam_dp_open_pinned(dir, &dp), 0, "the data path opens");
	cr_assert_eq(xtcam_dp_verify(dp, err, sizeof(err)), 0, "the data path is sound: %s", err);
	cr_assert_eq(xtcam_dp_handles(dp, &dh, &nd), 0);
	cr_assert_eq(nd, n, "the data path holds the registry's %zu rules, not %zu", n, nd);
	for (i = 0; i < nd; i++)
		if (dh[i] == handle)
			break;
	cr_assert_eq(i < nd, has, "the data path agrees on handle %u", handle);
	free(dh);
	xtcam_dp_free(dp);
	free(h);
	return has;
}

Test(cli_readers, kill9_at_random_moments_of_a_single_change_and_of_a_load, .timeout = 900)
{
	char ns[32], log[64], file[64];
	int round, rounds = sanitized() ? 10 : 40, i, rc, news = 0;
	struct timespec ts;
	unsigned int seed = (unsigned int)getpid();
	FILE *f;
	pid_t pid;

	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	snprintf(file, sizeof(file), "/tmp/xtcam-rd-%d.load", (int)getpid());
	t_name(ns, sizeof(ns), "kl");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add k");
	XT_OK("rule add k prio 10 handle 1 eth_type ipv4 action drop");
	XT_OK("rule add k prio 20 handle 2 eth_type ipv6 action pass");
	XT_OK("bind k dev lo netns %s mode generic", ns);

	/* killed where the data path has published the rule in place and the
	 * registry has not committed it: the old state */
	rc = t_sh(NULL, "XTCAM_CRASH_AT=publish %s rule add k prio 15 handle 3 eth_type ipv4 "
		  "action pass", bin());
	cr_assert_neq(rc, 0, "killed at publish");
	cr_assert(!after_kill("k", 3, 2, 3), "killed before its commit: the old state");

	/* a single change, killed anywhere in its run */
	for (round = 0; round < rounds; round++) {
		pid = spawn(log, "%s rule add k prio 15 handle 3 eth_type ipv4 action pass", bin());
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(rand_r(&seed) % 12000) * 1000;
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		reap(pid, log);
		if (after_kill("k", 3, 2, 3)) {
			news++;
			XT_OK("rule del k handle 3");
		}
	}
	cr_log_info("kill -9 during a single add: %d of %d rounds after its commit", news, rounds);

	/* a load of 20,000 rules, killed anywhere */
	f = fopen(file, "w");
	cr_assert(f);
	fprintf(f, "prio 1 handle 7 eth_type ipv6 action pass\n");
	for (i = 0; i < 19999; i++)
		fprintf(f, "prio 5 handle %d dst_ip 10.%d.%d.%d action pass\n", 100 + i, i >> 16,
			(i >> 8) & 255, i & 255);
	fclose(f);
	t_name(ns, sizeof(ns), "km");
	cr_assert_eq(t_netns_add(ns), 0);
	XT_OK("block add l capacity 30000");
	XT_OK("rule add l prio 10 handle 1 eth_type ipv4 action drop");
	XT_OK("bind l dev lo netns %s mode generic", ns);
	news = 0;
	for (round = 0; round < rounds / 4; round++) {
		pid = spawn(log, "%s rule load l %s", bin(), file);
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(rand_r(&seed) % 800) * 1000000;
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		reap(pid, log);
		if (after_kill("l", 7, 1, 20001)) {
			news++;
			cr_assert_eq(t_sh(NULL, "echo 'prio 10 handle 1 eth_type ipv4 action drop' | "
					  "%s rule load l - replace", bin()), 0);
		}
	}
	cr_log_info("kill -9 during a load: %d of %d rounds after its commit", news, rounds / 4);
	unlink(file);
	unlink(log);
}

/* --- a block del cut short ---------------------------------------------- */

Test(cli_readers, block_del_is_gone_for_readers_from_its_commit, .timeout = 120)
{
	char log[64], *o = NULL;
	int i, rc;
	pid_t pid;

	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	XT_OK("block add keep");
	XT_OK("block add d");
	for (i = 1; i <= 50; i++)
		XT_OK("rule add d prio %d handle %d eth_type ipv4 action drop", i, i);
	/* stopped after it marked the block, before it emptied anything */
	pid = spawn(log, "env XTCAM_STOP_AT=dying %s block del d", bin());
	cr_assert(stopped(pid), "block del stops at dying");
	rc = reader(&o, "-j block show");
	cr_assert_eq(rc, 0, "block show: exit %d: %s", rc, o);
	cr_assert_eq(t_json_ll(o, "#"), 1, "only the block kept: %s", o);
	free(o);
	rc = reader(&o, "rule show d");
	cr_assert_eq(rc, 1, "rule show of the block being deleted: %s", o);
	cr_assert(strstr(o, "block d: no such block"), "%s", o);
	free(o);
	rc = reader(&o, "save");
	cr_assert_eq(rc, 0, "save: %s", o);
	cr_assert(strstr(o, "block add keep") && !strstr(o, "block add d ") && !strstr(o, "add d "),
		  "save: %s", o);
	free(o);
	/* killed there: the next writer finishes the delete */
	kill(pid, SIGKILL);
	reap(pid, log);
	XT_OK("block add other");
	rc = t_xtcam(&o, "-j block show");
	cr_assert_eq(rc, 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "#"), 2, "keep and other: %s", o);
	free(o);
	XT_OK("block add d");
	rc = t_xtcam(&o, "-j rule show d");
	cr_assert_eq(rc, 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "#"), 0, "the new block d has none of the old one's rules: %s", o);
	free(o);
	XT_OK("rule add d prio 1 action pass");
	unlink(log);
}

/* --- a restore stopped half way ---------------------------------------- */

Test(cli_readers, readers_leave_out_a_restore_not_committed, .timeout = 120)
{
	char log[64], file[64], *o = NULL;
	int rc;
	FILE *f;
	pid_t pid;

	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	snprintf(file, sizeof(file), "/tmp/xtcam-rd-%d.restore", (int)getpid());
	XT_OK("block add there");
	XT_OK("rule add there prio 1 handle 1 eth_type ipv4 action drop");
	f = fopen(file, "w");
	cr_assert(f);
	fprintf(f, "block add r1\nrule add r1 prio 1 handle 1 eth_type ipv6 action pass\n"
		"block add r2\nrule add r2 prio 2 handle 2 eth_type ipv4 action drop\n");
	fclose(f);
	/* stopped after its first block's rules committed: r1 made, r2 not */
	pid = spawn(log, "env XTCAM_STOP_AT=commit %s restore %s", bin(), file);
	cr_assert(stopped(pid), "the restore stops at its first commit");
	rc = reader(&o, "save");
	cr_assert_eq(rc, 0, "save while a restore is under way: exit %d: %s", rc, o);
	cr_assert(strstr(o, "block add there") && !strstr(o, "r1"), "the committed state: %s", o);
	free(o);
	rc = reader(&o, "-j block show");
	cr_assert_eq(rc, 0, "block show: exit %d: %s", rc, o);
	cr_assert_eq(t_json_ll(o, "#"), 1, "only the committed block: %s", o);
	free(o);
	rc = reader(&o, "rule show r1");
	cr_assert_eq(rc, 1, "rule show of a block the restore is making: %s", o);
	cr_assert(strstr(o, "block r1: no such block"), "%s", o);
	free(o);
	kill(pid, SIGCONT);
	cr_assert_eq(reap(pid, log), 0, "the restore, let go, finishes");
	rc = reader(&o, "-j block show");
	cr_assert_eq(rc, 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "#"), 3, "committed: all of it: %s", o);
	free(o);
	unlink(file);
	unlink(log);
}

/* --- rule show streams, and pins the generation it reads ------------------ */

#define BIG_N 100000

/* a block "big" of BIG_N rules, handles 1..BIG_N (a load, one commit) */
static void big_block(void)
{
	char path[64];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/tmp/xtcam-rd-%d.big", (int)getpid());
	f = fopen(path, "w");
	cr_assert(f);
	for (i = 0; i < BIG_N; i++)
		fprintf(f, "prio 5 handle %d dst_ip 10.%d.%d.%d action drop\n", 1 + i, i >> 16,
			(i >> 8) & 255, i & 255);
	fclose(f);
	XT_OK("block add big capacity %d", 2 * BIG_N);
	XT_OK("rule load big %s", path);
	unlink(path);
}

/* `xtcam ARGS` in the background, its stdout the read end *out of a pipe
 * (stderr into log) */
static pid_t spawn_piped(FILE **out, const char *log, const char *args)
{
	char cmd[512];
	int p[2];
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	snprintf(cmd, sizeof(cmd), "exec 2>%s; exec %s %s", log, bin(), args);
	pid = fork();
	cr_assert(pid >= 0);
	if (!pid) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	child = pid;
	*out = fdopen(p[0], "r");
	cr_assert(*out);
	return pid;
}

/* does pid hold a pin (a shared OFD lock, as the kernel lists the locks
 * of its open files)?  Waits for it up to 10 s. */
static bool pinned(pid_t pid)
{
	char *o = NULL;
	int i;
	bool yes = false;

	for (i = 0; i < 1000 && !yes; i++) {
		yes = !t_sh(&o, "grep -qs 'OFDLCK.*READ' /proc/%d/fdinfo/*", (int)pid);
		free(o);
		o = NULL;
		if (!yes)
			usleep(10000);
	}
	return yes;
}

/* the rest of a reader's output: the number of "handle N" of the text
 * listing, each N between 1 and BIG_N and in order (0 when not) */
static size_t rest_of(FILE *f, char *first)
{
	char line[512];
	unsigned int h, prev = 0;
	size_t n = 0;
	bool ok = true;

	for (;;) {
		if (first) {
			snprintf(line, sizeof(line), "%s", first);
			first = NULL;
		} else if (!fgets(line, sizeof(line), f)) {
			break;
		}
		if (sscanf(line, "handle %u ", &h) != 1)
			continue;
		ok = ok && h == prev + 1 && h <= BIG_N;
		prev = h;
		n++;
	}
	fclose(f);
	return ok ? n : 0;
}

Test(cli_readers, rule_show_streams_and_a_writer_waits_for_its_read, .timeout = 600)
{
	char log[64], first[512], *o = NULL, *r = NULL;
	FILE *f;
	pid_t pid;
	int rc;

	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	big_block();
	/* its first line comes before it read the block: stopped then, it
	 * still holds the generation it reads */
	pid = spawn_piped(&f, log, "rule show big");
	cr_assert(fgets(first, sizeof(first), f), "rule show prints a first line");
	kill(pid, SIGSTOP);
	cr_assert(strstr(first, "handle 1 prio 5"), "the first rule first: %s", first);
	cr_assert(pinned(pid), "the reader, stopped after its first line, still reads (pinned)");
	/* a writer commits past it (the change does not wait: the copy into
	 * the generation read is left to the next change) ... */
	rc = t_xtcam(&o, "-w 1 rule add big prio 1 handle %d dst_ip 192.0.2.1 action pass",
		     BIG_N + 1);
	cr_assert_eq(rc, 0, "rule add while a reader reads: exit %d: %s", rc, o);
	cr_assert(strstr(o, "left to the next change"), "it says what it left: %s", o);
	free(o);
	/* ... and the next one waits for the reader, at most -w */
	rc = t_xtcam(&o, "-w 1 rule add big prio 1 handle %d dst_ip 192.0.2.2 action pass",
		     BIG_N + 2);
	cr_assert_eq(rc, 4, "the next change gives up waiting for the reader: exit %d: %s", rc, o);
	if (asprintf(&r, "being read by pid %d (%s rule show big)", (int)pid, bin()) < 0)
		cr_assert_fail("asprintf");
	cr_assert(strstr(o, r) && strstr(o, "ETIMEDOUT"), "names the reader: %s", o);
	free(r);
	free(o);
	rc = t_xtcam(&o, "-j rule show big handle %d", BIG_N + 2);
	cr_assert_eq(rc, 1, "and changed nothing: %s", o);
	free(o);
	/* let go, the reader prints the state it started from, whole */
	kill(pid, SIGCONT);
	cr_assert_eq(rest_of(f, first), BIG_N, "the reader's listing: the old set, whole");
	cr_assert_eq(reap(pid, log), 0, "the reader succeeds");
	XT_OK("-w 1 rule add big prio 1 handle %d dst_ip 192.0.2.2 action pass", BIG_N + 2);
	rc = t_xtcam(&o, "-j rule show big");
	cr_assert_eq(rc, 0, "%.300s", o);
	cr_assert_eq(t_json_ll(o, "#"), BIG_N + 2, "both changes are there");
	cr_assert_eq(t_json_ll(o, "0.handle"), BIG_N + 1, "%.300s", o);
	cr_assert_eq(t_json_ll(o, "1.handle"), BIG_N + 2, "%.300s", o);
	free(o);
	unlink(log);
}

Test(cli_readers, a_slow_consumer_of_rule_show_does_not_hold_writers_up, .timeout = 600)
{
	char log[64], *o = NULL;
	FILE *f;
	pid_t pid;
	int rc;

	snprintf(log, sizeof(log), "/tmp/xtcam-rd-%d.log", (int)getpid());
	big_block();
	/* nobody reads the pipe yet: the listing is far more than it holds */
	pid = spawn_piped(&f, log, "rule show big");
	cr_assert(pinned(pid), "the reader pins what it reads");
	/* a change committed while the consumer takes nothing: it waits for
	 * the read at most, not for the consumer */
	rc = t_xtcam(&o, "-w 20 rule add big prio 1 handle %d dst_ip 192.0.2.1 action pass",
		     BIG_N + 1);
	cr_assert_eq(rc, 0, "rule add while a reader's consumer sleeps: exit %d: %s", rc, o);
	cr_assert(!strstr(o, "left to the next change"), "it did its copy: %s", o);
	free(o);
	rc = t_xtcam(&o, "-j rule show big handle %d", BIG_N + 1);
	cr_assert_eq(rc, 0, "the change is there: %s", o);
	free(o);
	/* the consumer at last: the state the reader started from, whole */
	cr_assert_eq(rest_of(f, NULL), BIG_N, "the reader's listing: the old set, whole");
	cr_assert_eq(reap(pid, log), 0, "the reader succeeds");
	unlink(log);
}
