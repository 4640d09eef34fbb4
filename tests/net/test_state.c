// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Where the CLI keeps its state and how it shares it: XTCAM_INSTANCE is
 * checked, never replaced; block add and flush keep out of folders xtcam
 * did not make (and symbolic links); the lock is waited for with a bound
 * and a word about its holder; an unbind killed at any point is finished
 * by the next command.  Each test has its own instance and removes it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "tcli.h"

static char inst[32], dir[PATH_MAX], other[PATH_MAX];
static int holder;              /* a process holding the lock, if any */

static void setup(void)
{
	if (geteuid())
		cr_skip_test("needs root (bpffs, BPF maps)");
	snprintf(inst, sizeof(inst), "xtcam-test-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/%s", inst);
	/* a folder of somebody else's, under a name of this test's */
	snprintf(other, sizeof(other), "/sys/fs/bpf/xtcam-test-%d-other", (int)getpid());
	setenv("XTCAM_INSTANCE", inst, 1);
	/* the crash and stop points are strace's (make deps installs it) */
	cr_assert_eq(t_sh(NULL, "strace -V"), 0, "strace is needed (apt-get install strace)");
	if (!getenv("XTCAM_BIN"))
		setenv("XTCAM_BIN", "build/xtcam", 1);
}

static void teardown(void)
{
	if (holder > 0)
		t_sh(NULL, "kill -9 %d", holder);
	t_sh(NULL, "rm -f %s", dir);     /* if a symlink */
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -rf %s %s /run/%s.lock", dir, other, inst);
	t_net_cleanup();
}

TestSuite(state, .init = setup, .fini = teardown);

/* a folder holding pins that are not xtcam's: a map, and a directory with
 * a map in it (the shape of libxdp's dispatch-IFINDEX-ID folders) */
static void make_foreign(const char *where)
{
	char *o = NULL;

	cr_assert_eq(t_sh(&o, "mkdir -p %s/dispatch-1-2 && "
			  "bpftool map create %s/dispatch-1-2/prog0-prog type array key 4 value 4 "
			  "entries 1 name foreign0 && "
			  "bpftool map create %s/globals type array key 4 value 4 entries 1 "
			  "name foreign1", where, where, where), 0, "%s", o);
	free(o);
}

static char *listing(const char *where)
{
	char *o = NULL;

	cr_assert_eq(t_sh(&o, "cd %s && find . | sort | tr '\\n' ' '", where), 0, "%s", o);
	return o;
}

/* Only read-only commands here: with the old fallback they read the
 * default state, they do not change it. */
Test(state, instance_names_outside_the_rule_are_refused)
{
	static const char *const bad[] = { "test.1", "a/b", "../../tmp/x", ".hidden",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" /* 49 */, "x y", "x\\ty" };
	static const char *const cmds[] = { "block show", "rule show nosuch", "save",
					    "-j block show" };
	char *o = NULL;
	size_t i, j;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (j = 0; j < sizeof(cmds) / sizeof(cmds[0]); j++) {
			int rc = t_sh(&o, "XTCAM_INSTANCE=\"$(printf '%s')\" %s %s", bad[i],
				      getenv("XTCAM_BIN"), cmds[j]);

			cr_assert_eq(rc, 1, "XTCAM_INSTANCE=%s xtcam %s: exit %d: %s", bad[i],
				     cmds[j], rc, o);
			cr_assert(strstr(o, "XTCAM_INSTANCE=") && strstr(o, "1-48 letters") &&
				  strstr(o, "EINVAL"), "XTCAM_INSTANCE=%s xtcam %s: %s", bad[i],
				  cmds[j], o);
			free(o);
			o = NULL;
		}
	/* 48 characters is a name */
	cr_assert_eq(t_sh(&o, "XTCAM_INSTANCE=%s-%.*s %s -j block show", inst,
			  (int)(47 - strlen(inst)), "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
			  getenv("XTCAM_BIN")), 0, "%s", o);
	cr_assert_str_eq(o, "[]\n");
	free(o);
}

Test(state, block_add_refuses_a_folder_of_foreign_pins)
{
	char *before, *after, *o = NULL;

	make_foreign(dir);
	before = listing(dir);
	cr_assert_eq(t_xtcam(&o, "block add edge"), 1, "%s", o);
	cr_assert(strstr(o, "holds pins xtcam did not make") && strstr(o, dir) &&
		  strstr(o, "(EEXIST)"), "%s", o);
	free(o);
	after = listing(dir);
	cr_assert_str_eq(after, before, "nothing added");
	free(after);
	/* commands that make nothing read it as no state */
	cr_assert_eq(t_xtcam(&o, "-j block show"), 0, "%s", o);
	cr_assert_str_eq(o, "[]\n");
	free(o);
	after = listing(dir);
	cr_assert_str_eq(after, before);
	free(after);
	free(before);
}

Test(state, flush_removes_only_what_xtcam_made)
{
	char *before, *after, *o = NULL;

	/* a folder without a registry: not touched at all */
	make_foreign(dir);
	before = listing(dir);
	XT_OK("flush");
	after = listing(dir);
	cr_assert_str_eq(after, before, "flush removed pins xtcam did not make");
	free(after);
	free(before);
	cr_assert_eq(t_sh(NULL, "rm -r %s", dir), 0);

	/* a registry with a stranger's pins in its folder: ours go, theirs stay */
	XT_OK("block add edge");
	XT_OK("rule add edge prio 1 action drop");
	make_foreign(dir);
	XT_OK("flush");
	after = listing(dir);
	cr_assert_str_eq(after, ". ./dispatch-1-2 ./dispatch-1-2/prog0-prog ./globals ", "%s",
			 after);
	free(after);
	cr_assert_eq(t_xtcam(&o, "-j block show"), 0, "%s", o);
	cr_assert_str_eq(o, "[]\n", "the state is gone");
	free(o);
	cr_assert_eq(t_sh(NULL, "rm -r %s", dir), 0);

	/* our own folder goes with the state */
	XT_OK("block add edge");
	XT_OK("flush");
	cr_assert(access(dir, F_OK) && errno == ENOENT, "%s left behind", dir);
}

/* bpffs lets one make symbolic links: an instance folder that is one is
 * refused, by the commands that write and by flush */
Test(state, symlinked_instance_folder_is_refused)
{
	char *before, *after, *o = NULL;

	make_foreign(other);
	cr_assert_eq(t_sh(&o, "ln -s %s %s", other, dir), 0, "%s", o);
	free(o);
	before = listing(other);
	cr_assert_eq(t_xtcam(&o, "block add edge"), 1, "%s", o);
	cr_assert(strstr(o, "symbolic link") && strstr(o, "(ELOOP)"), "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "flush"), 1, "%s", o);
	cr_assert(strstr(o, "symbolic link") && strstr(o, "(ELOOP)"), "%s", o);
	free(o);
	after = listing(other);
	cr_assert_str_eq(after, before, "the link's target was changed");
	free(after);
	free(before);
	/* an empty target too: nothing is pinned there */
	cr_assert_eq(t_sh(&o, "rm -r %s && mkdir %s", other, other), 0, "%s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "block add edge"), 1, "%s", o);
	free(o);
	after = listing(other);
	cr_assert_str_eq(after, ". ", "pins went through the link: %s", after);
	free(after);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Somebody holds the lock (here flock(1) on the lock file): the commands
 * wait -w SECONDS, say for whom after a second, and exit 4. */
Test(state, lock_wait_is_bounded_and_names_the_holder, .timeout = 120)
{
	char *o = NULL, pid[32], want[160];
	double t;
	int rc;

	XT_OK("block add edge");
	cr_assert_eq(t_sh(&o, "flock -o /run/%s.lock sleep 60 >/dev/null 2>&1 & echo $!", inst), 0);
	holder = atoi(o);
	snprintf(pid, sizeof(pid), "%d", holder);
	free(o);
	snprintf(want, sizeof(want), "held by pid %s (flock -o /run/%s.lock sleep 60)", pid, inst);
	usleep(300 * 1000);
	t = now_s();
	/* (a writer: readers take no lock) */
	rc = t_xtcam(&o, "-w 2 counters reset edge");
	t = now_s() - t;
	cr_assert_eq(rc, 4, "exit 4 for the lock: %d: %s", rc, o);
	cr_assert(strstr(o, "waiting for the lock") && strstr(o, want) &&
		  strstr(o, "gave up after 2 s") && strstr(o, "(ETIMEDOUT)"), "%s", o);
	cr_assert(t >= 1.9 && t < 10, "waited %.2f s for -w 2", t);
	free(o);
	/* -w at the end, in JSON; 0: at once */
	t = now_s();
	rc = t_xtcam(&o, "counters reset edge -j -w 0");
	t = now_s() - t;
	cr_assert_eq(rc, 4, "%d: %s", rc, o);
	cr_assert(strstr(o, "\"errno\":\"ETIMEDOUT\"") && strstr(o, want), "%s", o);
	cr_assert(!strstr(o, "waiting for"), "no wait, no word: %s", o);
	cr_assert(t < 1, "-w 0 waited %.2f s", t);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-w x save"), 2, "%s", o);
	cr_assert(strstr(o, "not a number of seconds"), "%s", o);
	free(o);
	/* released: the next one goes through, and wrote who it is */
	cr_assert_eq(t_sh(NULL, "kill %s", pid), 0);
	usleep(200 * 1000);
	XT_OK("-w 5 counters reset edge");
	cr_assert_eq(t_sh(&o, "sed -n 2p /run/%s.lock", inst), 0);
	cr_assert(strstr(o, "xtcam -w 5 counters reset edge"), "the holder's command line: %s", o);
	free(o);
}

/* A holder that is xtcam, stopped in the middle of a command: named by the
 * pid and command line it wrote into the lock file. */
Test(state, lock_held_by_a_stopped_xtcam_is_named, .timeout = 120)
{
	char *o = NULL, want[128];
	int rc, tracer, pid = 0, i;

	XT_OK("block add edge");
	/* stopped at its third bpf() call: after it took the lock */
	cr_assert_eq(t_sh(&o, "strace -f -qq -o /dev/null -e trace=bpf "
			  "-e inject=bpf:signal=STOP:when=3 %s counters reset edge >/dev/null 2>&1 & "
			  "echo $!", getenv("XTCAM_BIN")), 0, "%s", o);
	tracer = atoi(o);
	free(o);
	for (i = 0; i < 50 && pid <= 0; i++) {
		usleep(100 * 1000);
		o = NULL;
		/* strace's child, once it is stopped */
		if (!t_sh(&o, "for p in $(pgrep -P %d); do "
			  "awk '$3 == \"t\" || $3 == \"T\" { print $1 }' /proc/$p/stat; done",
			  tracer))
			pid = o ? atoi(o) : 0;
		free(o);
	}
	cr_assert_gt(pid, 0, "xtcam stopped under strace");
	holder = pid;
	snprintf(want, sizeof(want), "held by pid %d (%s counters reset edge)", pid,
		 getenv("XTCAM_BIN"));
	rc = t_xtcam(&o, "-w 1 counters reset edge");
	cr_assert_eq(rc, 4, "%d: %s", rc, o);
	cr_assert(strstr(o, want), "want \"%s\": %s", want, o);
	free(o);
}

/* The binding of edge on the pair's device: "active" (recorded, program
 * attached), or "none" (no record, no program); anything else fails. */
static const char *binding_state(const struct t_pair *p)
{
	char *o = NULL;
	bool rec, prog;

	/* the next writer finishes what the kill left (block show, a reader,
	 * repairs nothing) */
	cr_assert_eq(t_xtcam(&o, "counters reset edge"), 0, "the next command works: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show edge"), 0, "%s", o);
	rec = strstr(o, "\"dev\":\"") != NULL;
	cr_assert(!rec || strstr(o, "\"state\":\"active\""), "a binding shown as gone: %s", o);
	free(o);
	o = NULL;
	t_sh(&o, "ip -n %s link show dev %s", p->ns_a, p->a);
	prog = strstr(o, " xdp") != NULL;
	free(o);
	cr_assert_eq(rec, prog, "binding recorded %d, program attached %d", rec, prog);
	return rec ? "active" : "none";
}

/* kill -9 at bpf() calls of an unbind from the one that records it as
 * under way to the deletion of its record (after the detach) and past
 * it: the next command finds the device bound with its program, or
 * unbound and free to bind again.  (A bind loads the data path, seconds
 * each: a few points of the window, not all.) */
Test(state, unbind_killed_at_any_step_is_finished, .timeout = 600)
{
	struct t_pair p;
	char *o = NULL, trace[64];
	int calls, from, k, i, unbound = 0;
	int at[6];

	cr_assert_eq(t_pair_make(&p, "u"), 0);
	XT_OK("block add edge");
	XT_OK("bind edge dev %s netns %s mode generic", p.a, p.ns_a);
	/* the bpf() calls of an unbind: how many, and which is its last
	 * update of a map (the record, when there is one) */
	snprintf(trace, sizeof(trace), "/tmp/xtcam-test-%d.trace", (int)getpid());
	cr_assert_eq(t_sh(&o, "strace -f -qq -o %s -e trace=bpf %s unbind edge dev %s netns %s",
			  trace, getenv("XTCAM_BIN"), p.a, p.ns_a), 0, "%s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "grep 'bpf(' %s | grep -n . | awk -F: '/MAP_UPDATE_ELEM/ { u = $1 } "
			  "END { print NR, u + 0 }'", trace), 0);
	cr_assert_eq(sscanf(o, "%d %d", &calls, &from), 2, "%s", o);
	free(o);
	unlink(trace);
	cr_assert_gt(calls, 5);
	if (!from)
		from = calls - 2;
	at[0] = from;
	at[1] = from + 1;
	at[2] = (from + calls) / 2;
	at[3] = calls - 1;
	at[4] = calls;          /* the deletion of the record */
	at[5] = calls + 1;      /* none: the unbind completes */
	for (i = 0; i < 6; i++) {
		k = at[i];
		if (i && k <= at[i - 1])
			continue;
		XT_OK("bind edge dev %s netns %s mode generic", p.a, p.ns_a);
		t_sh(NULL, "strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:signal=KILL:when=%d "
		     "%s unbind edge dev %s netns %s", k, getenv("XTCAM_BIN"), p.a, p.ns_a);
		if (!strcmp(binding_state(&p), "active"))
			XT_OK("unbind edge dev %s netns %s", p.a, p.ns_a);
		else
			unbound++;
		cr_assert_str_eq(binding_state(&p), "none", "killed at bpf() call %d of %d", k,
				 calls);
	}
	cr_assert_gt(unbound, 0, "no kill fell after the detach");
	/* and the block is free to go */
	XT_OK("block del edge");
	t_pair_free(&p);
}

/* entries of a registry map, as bpftool dumps it */
static int reg_entries(const char *map)
{
	char *o = NULL;
	int n;

	json_object *a;

	cr_assert_eq(t_sh(&o, "bpftool -j map dump pinned %s/%s", dir, map), 0, "%s", o);
	a = json_tokener_parse(o);
	cr_assert(a && json_object_is_type(a, json_type_array), "%s: %.200s", map, o);
	n = (int)json_object_array_length(a);
	json_object_put(a);
	free(o);
	return n;
}

/*
 * block del of a block of many rules: the block is gone at once, its
 * rules are swept from the registry behind it (nothing of it is left once
 * the sweep is done, nor of its data path after the unbind), and a block
 * added meanwhile gets an id of its own: the sweep leaves its rules alone.
 */
Test(state, block_del_of_a_large_block_leaves_nothing, .timeout = 300)
{
	enum { N = 10000 };
	struct t_pair p;
	char path[64], *o = NULL, ids[256] = "";
	FILE *f;
	unsigned int h;
	int i, left = -1;

	cr_assert_eq(t_pair_make(&p, "d"), 0);
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.rules", (int)getpid());
	f = fopen(path, "w");
	cr_assert(f, "%s", path);
	for (h = 1; h <= N; h++)
		fprintf(f, "prio %u ip_proto udp dst_port %u action drop\n", 1 + h % 50, h);
	fclose(f);
	XT_OK("block add big capacity 12000");
	XT_OK("rule load big %s", path);
	unlink(path);
	XT_OK("bind big dev %s netns %s mode native", p.a, p.ns_a);
	/* the ids of the block's data path maps */
	cr_assert_eq(t_sh(&o, "for m in $(find %s/big -type f); do bpftool -j map show pinned $m; "
			  "done | grep -o '\"id\":[0-9]*' | cut -d: -f2 | tr '\\n' ' '", dir), 0,
		     "%s", o);
	cr_assert(strlen(o) > 2 && strlen(o) < sizeof(ids), "%s", o);
	snprintf(ids, sizeof(ids), "%s", o);
	free(o);
	XT_OK("unbind big dev %s netns %s", p.a, p.ns_a);
	XT_OK("block del big");
	cr_assert_neq(t_xtcam(&o, "rule show big"), 0, "the block is gone at once: %s", o);
	free(o);
	/* a new block while the sweep may still run */
	XT_OK("block add next");
	XT_OK("rule add next prio 1 handle 5 ip_proto udp dst_port 9 action drop");
	for (i = 0; i < 600 && left; i++) {
		if (i)
			usleep(100 * 1000);
		/* next's rule in each generation; its two markers and two
		 * rank keys */
		left = reg_entries("rules0") + reg_entries("rules1") + reg_entries("ranks") - 6;
	}
	cr_assert_eq(left, 0, "the registry holds %d entries more than block next's", left);
	cr_assert_eq(t_xtcam(&o, "rule show next"), 0, "%s", o);
	cr_assert(strstr(o, "handle 5 prio 1"), "the sweep left block next's rule: %s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "ls %s | tr '\\n' ' '", dir), 0);
	cr_assert_str_eq(o, "bindings blocks generation ranks rules0 rules1 ", "the folder holds the registry only");
	free(o);
	/* the data path's maps are freed (the kernel frees them after the
	 * last reference, a moment later) */
	for (i = 0; i < 100; i++) {
		if (i)
			usleep(100 * 1000);
		cr_assert_eq(t_sh(&o, "for id in %s; do bpftool map show id $id 2>/dev/null; done; true", ids),
			     0);
		left = o[0] != 0;
		free(o);
		if (!left)
			break;
	}
	cr_assert_not(left, "maps %s of block big are still there", ids);
}
