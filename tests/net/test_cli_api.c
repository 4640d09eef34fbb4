// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The library API for controllers (xtcam/xtcam.h): the example controller
 * (examples/blocklist, built beside XTCAM_BIN: with ASan under cli-asan)
 * and the CLI changing one block in turns; batches killed on the way;
 * the batch size limit; the errors.  Each test has its own state
 * (XTCAM_INSTANCE), namespaces and files, and removes them.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "xtcam/xtcam.h"
#include "tlib.h"
#include "tnet.h"
#include "tcli.h"

static char inst[32], file[96], errf[96];

static void setup(void)
{
	t_cli_instance(inst, sizeof(inst));
	snprintf(file, sizeof(file), "/tmp/%s.rules", inst);
	snprintf(errf, sizeof(errf), "/tmp/%s.stderr", inst);
}

static void teardown(void)
{
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -f /run/%s.lock %s %s", inst, file, errf);
	t_net_cleanup();
}

TestSuite(cli_api, .init = setup, .fini = teardown, .timeout = 300);


/* --- the example controller, driven through its stdin and stdout --------- */

struct ctl {
	pid_t pid;
	int in;
	FILE *out;
};

static void ctl_start(struct ctl *c, const char *block)
{
	char bin[512], *dir;
	int in[2], out[2];

	snprintf(bin, sizeof(bin), "%s", getenv("XTCAM_BIN"));
	dir = dirname(bin);
	memmove(bin, dir, strlen(dir) + 1);
	strncat(bin, "/examples/blocklist", sizeof(bin) - strlen(bin) - 1);
	cr_assert_eq(access(bin, X_OK), 0, "%s: not built", bin);
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	c->pid = fork();
	cr_assert_geq(c->pid, 0);
	if (!c->pid) {
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(in[0], 0);
		dup2(out[1], 1);
		if (e >= 0)
			dup2(e, 2);
		close(in[1]);
		close(out[0]);
		execl(bin, bin, block, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = fdopen(out[0], "r");
	cr_assert_not_null(c->out);
}

/* write these lines at once; read n answers (in *ans, one a line) */
static char *ctl_say(struct ctl *c, const char *lines, int n)
{
	size_t len = strlen(lines), off = 0, cap = 4096, used = 0;
	char *ans = calloc(1, cap), line[512];

	while (off < len) {
		ssize_t w = write(c->in, lines + off, len - off);

		cr_assert_gt(w, 0, "the controller is gone");
		off += (size_t)w;
	}
	while (n-- > 0) {
		cr_assert_not_null(fgets(line, sizeof(line), c->out),
				   "the controller stopped answering (after: %s)", ans);
		if (used + strlen(line) + 1 > cap) {
			cap = 2 * cap + strlen(line);
			ans = realloc(ans, cap);
		}
		memcpy(ans + used, line, strlen(line) + 1);
		used += strlen(line);
	}
	return ans;
}

static void ctl_ok(struct ctl *c, const char *lines, int n)
{
	char *a = ctl_say(c, lines, n), *p = a;
	int i;

	for (i = 0; i < n; i++, p = strchr(p, '\n') + 1)
		cr_assert(!strncmp(p, "ok ", 3), "the controller answered %s to %s", a, lines);
	free(a);
}

/* end of input: the controller's exit status; no sanitizer report */
static int ctl_stop(struct ctl *c)
{
	char *o = NULL;
	int st = 0;

	close(c->in);
	fclose(c->out);
	waitpid(c->pid, &st, 0);
	t_sh(&o, "cat %s", errf);
	cr_assert(!o || (!strstr(o, "Sanitizer") && !strstr(o, "runtime error")),
		  "the controller: %s", o);
	free(o);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* --- the block as `rule show -j` has it ----------------------------------- */

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* the handles of the block, sorted, as "h1 h2 ..." */
static char *handles(const char *block)
{
	json_object *root, *v;
	char *o = NULL, *s;
	long long *h;
	size_t n, i, len = 0;

	cr_assert_eq(t_xtcam(&o, "-j rule show %s", block), 0, "%s", o);
	root = json_tokener_parse(o);
	cr_assert(root && json_object_is_type(root, json_type_array), "%s", o);
	n = json_object_array_length(root);
	h = calloc(n + 1, sizeof(*h));
	s = calloc(1, 12 * n + 1);
	for (i = 0; i < n; i++) {
		cr_assert(json_object_object_get_ex(json_object_array_get_idx(root, i), "handle", &v));
		h[i] = json_object_get_int64(v);
	}
	qsort(h, n, sizeof(*h), cmp_ll);
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, "%s%lld", i ? " " : "", h[i]);
	free(h);
	free(o);
	json_object_put(root);
	return s;
}

static void handles_are(const char *block, const char *want, const char *when)
{
	char *got = handles(block);

	cr_assert_str_eq(got, want, "%s: handles %s, wanted %s", when, got, want);
	free(got);
}

/* the controller's handle of an address */
static unsigned int h_of(const char *addr)
{
	struct in_addr a;

	inet_pton(AF_INET, addr, &a);
	return ntohl(a.s_addr);
}

/* frames from addr through the pair: how many arrive (of 3) */
static int through_from(const struct t_pair *p, const char *addr, uint32_t marker)
{
	struct pkt_spec s;

	t_frame(p, &s, 0);
	inet_pton(AF_INET, addr, s.saddr);
	return t_through(p, &s, marker, 3);
}

/* The controller and the CLI take turns on one bound block: each acts on
 * what the other did (a rule the CLI removed is free to add again, a
 * block made again gets the controller's next rule), nothing is lost, and
 * the data path drops what the rules say. */
Test(cli_api, controller_and_cli_take_turns)
{
	struct t_pair p;
	struct ctl c;
	char want[512], *a;
	FILE *f;

	cr_assert_eq(t_pair_make(&p, "i"), 0);
	XT_OK("block add bl capacity 4096 default pass");
	XT_OK("bind bl dev %s netns %s mode generic", p.a, p.ns_a);
	ctl_start(&c, "bl");
	ctl_ok(&c, "block 10.0.0.1\n", 1);
	XT_OK("rule add bl prio 5 handle 7 src_ip 10.9.9.9 action pass");
	ctl_ok(&c, "block 10.0.0.2\n", 1);
	/* the CLI takes the controller's first rule away: the controller
	 * blocks that address again (with a view from before, it would find
	 * the handle in use or the rule gone from its data path) */
	XT_OK("rule del bl handle %u", h_of("10.0.0.1"));
	ctl_ok(&c, "unblock 10.0.0.2\n", 1);
	ctl_ok(&c, "block 10.0.0.1\n", 1);
	/* a load of several rules: one commit through the other generation */
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fprintf(f, "prio 6 handle 20 src_ip 10.9.9.20 action drop\n"
		   "prio 6 handle 21 src_ip 10.9.9.21 action drop\n"
		   "prio 6 handle 22 src_ip 10.9.9.22 action drop\n");
	fclose(f);
	XT_OK("rule load bl %s", file);
	/* lines that come together: one batch */
	ctl_ok(&c, "block 10.0.0.4\nblock 10.0.0.5\nunblock 10.0.0.1\n", 3);
	XT_OK("rule del bl handle 21");
	snprintf(want, sizeof(want), "7 20 22 %u %u", h_of("10.0.0.4"), h_of("10.0.0.5"));
	handles_are("bl", want, "after the turns");
	cr_assert_eq(through_from(&p, "10.0.0.4", 0x5a01), 0, "10.0.0.4 blocked");
	cr_assert_eq(through_from(&p, "10.9.9.20", 0x5a02), 0, "the CLI's handle 20 drops");
	cr_assert_eq(through_from(&p, "10.0.0.1", 0x5a03), 3, "10.0.0.1 unblocked");
	cr_assert_eq(through_from(&p, "10.9.9.21", 0x5a04), 3, "handle 21 removed");
	a = ctl_say(&c, "show 10.0.0.4\n", 1);
	cr_assert(strstr(a, "packets 3 "), "the rule of 10.0.0.4 counted the 3 frames: %s", a);
	free(a);
	/* the CLI makes the block again: the controller's next rule goes to
	 * the new block and its data path, not to the one that is gone */
	XT_OK("unbind bl dev %s netns %s", p.a, p.ns_a);
	XT_OK("block del bl");
	XT_OK("block add bl capacity 4096 default pass");
	XT_OK("bind bl dev %s netns %s mode generic", p.a, p.ns_a);
	ctl_ok(&c, "block 10.0.0.6\n", 1);
	XT_OK("rule add bl prio 5 handle 7 src_ip 10.9.9.9 action pass");
	ctl_ok(&c, "block 10.0.0.7\nblock 10.0.0.8\n", 2);
	snprintf(want, sizeof(want), "7 %u %u %u", h_of("10.0.0.6"), h_of("10.0.0.7"),
		 h_of("10.0.0.8"));
	handles_are("bl", want, "in the block made again");
	cr_assert_eq(through_from(&p, "10.0.0.6", 0x5a05), 0, "10.0.0.6 blocked");
	cr_assert_eq(through_from(&p, "10.0.0.8", 0x5a06), 0, "10.0.0.8 blocked");
	cr_assert_eq(through_from(&p, "10.0.0.4", 0x5a07), 3, "the old block's rules are gone");
	/* and after a flush of the whole instance */
	XT_OK("flush");
	XT_OK("block add bl capacity 4096 default pass");
	ctl_ok(&c, "block 10.0.0.9\n", 1);
	snprintf(want, sizeof(want), "%u", h_of("10.0.0.9"));
	handles_are("bl", want, "after a flush");
	cr_assert_eq(ctl_stop(&c), 0);
	t_pair_free(&p);
}

/* Between two commits the controller holds no lock: the CLI does not
 * wait (-w 0: it would fail at once), and the controller sees the
 * generation the CLI's change made. */
Test(cli_api, no_lock_between_commits)
{
	char err[XTCAM_CTL_ERR_MAX];
	struct xtcam_ctl *c;
	struct xtcam_ctl_counters cnt;
	__u64 g0;
	__u32 h = 0;

	XT_OK("block add bl capacity 64");
	cr_assert_eq(xtcam_ctl_open(&c, inst, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_ctl_rule_add(c, "bl", "prio 3 src_ip 192.0.2.1 action drop", &h), 0,
		     "%s", xtcam_ctl_strerror(c));
	cr_assert_eq(h, 1, "the first handle of an empty block");
	g0 = xtcam_ctl_generation(c);
	XT_OK("-w 0 rule add bl prio 4 handle 9 src_ip 192.0.2.9 action drop");
	cr_assert_eq(xtcam_ctl_counters(c, "bl", 9, &cnt), 0, "%s", xtcam_ctl_strerror(c));
	cr_assert_gt(xtcam_ctl_generation(c), g0, "the CLI's commit moved the generation");
	cr_assert_eq(xtcam_ctl_rule_add(c, "bl", "prio 3 src_ip 192.0.2.2 action drop", &h), 0,
		     "%s", xtcam_ctl_strerror(c));
	cr_assert_eq(h, 10, "the next handle above the CLI's 9");
	XT_OK("-w 0 rule del bl handle 1");
	xtcam_ctl_close(c);
	handles_are("bl", "9 10", "at the end");
}

/*
 * A controller that commits without pause does not lock the CLI out for
 * longer than one commit: a CLI command waiting for the lock while the
 * controller is in a commit (stopped there: XTCAM_STOP_AT=commit) gets
 * the lock before the controller's next commit, which the controller
 * asks for as soon as the first is done.  Both add handle 100: whoever
 * comes second finds it in use.  (Without a queue, the controller, which
 * asks again at once, takes the lock back before the waiting CLI looks.)
 */
Test(cli_api, waiting_cli_goes_before_the_next_commit)
{
	char err[XTCAM_CTL_ERR_MAX], *o = NULL;
	pid_t ctl, cli;
	int st, i;

	XT_OK("block add bl capacity 64");
	ctl = fork();
	cr_assert_geq(ctl, 0);
	if (!ctl) {
		struct xtcam_ctl *c;
		__u32 h = 0;
		int e;

		if (xtcam_ctl_open(&c, inst, err, sizeof(err)))
			_exit(10);
		setenv("XTCAM_STOP_AT", "commit", 1);
		if (xtcam_ctl_rule_add(c, "bl", "prio 3 src_ip 192.0.2.1 action drop", &h))
			_exit(11);
		unsetenv("XTCAM_STOP_AT");
		h = 100;
		e = xtcam_ctl_rule_add(c, "bl", "prio 3 handle 100 src_ip 192.0.2.100 action drop",
				       &h);
		xtcam_ctl_close(c);
		_exit(e == -EEXIST ? 0 : e ? 12 : 13);
	}
	cr_assert_eq(waitpid(ctl, &st, WUNTRACED), ctl);
	cr_assert(WIFSTOPPED(st), "the controller stops in its first commit (status %#x)", st);
	cli = fork();
	cr_assert_geq(cli, 0);
	if (!cli) {
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (e >= 0) {
			dup2(e, 1);
			dup2(e, 2);
		}
		execl(getenv("XTCAM_BIN"), "xtcam", "-w", "20", "rule", "add", "bl", "prio", "4",
		      "handle", "100", "src_ip", "192.0.2.200", "action", "pass", (char *)NULL);
		_exit(127);
	}
	/* the CLI says it waits (after a second of waiting) */
	for (i = 0; i < 100; i++) {
		free(o);
		o = NULL;
		t_sh(&o, "cat %s", errf);
		if (o && strstr(o, "waiting for the lock"))
			break;
		usleep(50000);
	}
	cr_assert(o && strstr(o, "waiting for the lock"), "the CLI waits: %s", o);
	free(o);
	o = NULL;
	kill(ctl, SIGCONT);
	cr_assert_eq(waitpid(cli, &st, 0), cli);
	t_sh(&o, "cat %s", errf);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st),
		  "the waiting CLI had the lock before the controller's next commit: %s", o);
	free(o);
	cr_assert_eq(waitpid(ctl, &st, 0), ctl);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st),
		  "the controller's next commit came after the CLI's (handle 100 in use): "
		  "status %#x", st);
	handles_are("bl", "1 100", "at the end");
	o = NULL;
	t_xtcam(&o, "rule show bl handle 100");
	cr_assert(o && strstr(o, "192.0.2.200"), "handle 100 is the CLI's rule: %s", o);
	free(o);
}

/* A batch of n adds (handles first.., sources 10.1.x.y) to block bl,
 * committed: the child's exit status on failure. */
static void batch_adds(struct xtcam_ctl *c, __u32 first, int n)
{
	struct xtcam_ctl_batch *b = xtcam_ctl_batch_begin(c, "bl");
	char text[96];
	int i;

	for (i = 0; b && i < n; i++) {
		snprintf(text, sizeof(text), "prio 3 handle %u src_ip 10.1.%d.%d action drop",
			 first + (__u32)i, i / 250, 1 + i % 250);
		if (xtcam_ctl_batch_add(b, text, NULL))
			_exit(4);
	}
	if (!b || xtcam_ctl_batch_commit(b))
		_exit(5);
	xtcam_ctl_batch_free(b);
}

/*
 * A batch's commit returns at its flip, its data path's grace period and
 * catch-up still under way, and the lock with them: a controller that
 * makes no further call lets go of it once they are done (a CLI command
 * that waits for it gets it), and its rules are in the data path.
 */
Test(cli_api, batch_lets_go_of_the_lock_after_it)
{
	char err[XTCAM_CTL_ERR_MAX];
	struct t_pair p;
	int go[2], done[2], st;
	pid_t ctl;
	char x;

	cr_assert_eq(t_pair_make(&p, "l"), 0);
	XT_OK("block add bl capacity 8192 default pass");
	XT_OK("bind bl dev %s netns %s mode generic", p.a, p.ns_a);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(done), 0);
	ctl = fork();
	cr_assert_geq(ctl, 0);
	if (!ctl) {
		struct xtcam_ctl *c;

		close(go[0]);
		close(done[1]);
		/* (the catch-up still under way when the commit returns) */
		setenv("XTCAM_PAUSE_AT", "catch-up", 1);
		if (xtcam_ctl_open(&c, inst, err, sizeof(err)))
			_exit(10);
		batch_adds(c, 1001, 1000);
		/* committed; no further call until told */
		if (write(go[1], "1", 1) != 1 || read(done[0], &x, 1) != 1)
			_exit(11);
		xtcam_ctl_close(c);
		_exit(0);
	}
	close(go[1]);
	close(done[0]);
	cr_assert_eq(read(go[0], &x, 1), 1, "the controller's batch committed");
	XT_OK("-w 5 rule add bl prio 4 handle 5000 src_ip 192.0.2.200 action drop");
	cr_assert_eq(through_from(&p, "10.1.3.101", 0x5b01), 0, "the batch's rule 10.1.3.101 drops");
	cr_assert_eq(through_from(&p, "10.1.9.9", 0x5b02), 3, "10.1.9.9 is in no rule");
	cr_assert_eq(write(done[1], "1", 1), 1);
	cr_assert_eq(waitpid(ctl, &st, 0), ctl);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "the controller: status %#x", st);
	cr_assert_eq(through_from(&p, "192.0.2.200", 0x5b03), 0, "the CLI's rule drops");
	close(go[0]);
	close(done[1]);
	t_pair_free(&p);
}

/*
 * The same for batches on a bound block: a CLI command waiting for the
 * lock while the controller is in a batch's commit (stopped there) gets it
 * before the controller's next batch, although that batch asks while the
 * first one's catch-up still holds the lock for it.  Both add handle 100:
 * whoever comes second finds it in use.
 */
Test(cli_api, waiting_cli_goes_before_the_next_batch)
{
	char err[XTCAM_CTL_ERR_MAX], *o = NULL;
	struct t_pair p;
	pid_t ctl, cli;
	int st, i;

	cr_assert_eq(t_pair_make(&p, "w"), 0);
	XT_OK("block add bl capacity 8192 default pass");
	XT_OK("bind bl dev %s netns %s mode generic", p.a, p.ns_a);
	ctl = fork();
	cr_assert_geq(ctl, 0);
	if (!ctl) {
		struct xtcam_ctl *c;
		struct xtcam_ctl_batch *b;
		int e;

		/* (the catch-up still under way when the next batch asks) */
		setenv("XTCAM_PAUSE_AT", "catch-up", 1);
		if (xtcam_ctl_open(&c, inst, err, sizeof(err)))
			_exit(10);
		setenv("XTCAM_STOP_AT", "commit", 1);
		batch_adds(c, 1001, 1000);
		unsetenv("XTCAM_STOP_AT");
		b = xtcam_ctl_batch_begin(c, "bl");
		if (!b || xtcam_ctl_batch_add(b, "prio 3 handle 100 src_ip 192.0.2.100 action drop",
					      NULL) ||
		    xtcam_ctl_batch_add(b, "prio 3 handle 101 src_ip 192.0.2.101 action drop", NULL))
			_exit(11);
		e = xtcam_ctl_batch_commit(b);
		xtcam_ctl_batch_free(b);
		xtcam_ctl_close(c);
		_exit(e == -EEXIST ? 0 : e ? 12 : 13);
	}
	cr_assert_eq(waitpid(ctl, &st, WUNTRACED), ctl);
	cr_assert(WIFSTOPPED(st), "the controller stops in its first commit (status %#x)", st);
	cli = fork();
	cr_assert_geq(cli, 0);
	if (!cli) {
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (e >= 0) {
			dup2(e, 1);
			dup2(e, 2);
		}
		execl(getenv("XTCAM_BIN"), "xtcam", "-w", "20", "rule", "add", "bl", "prio", "4",
		      "handle", "100", "src_ip", "192.0.2.200", "action", "pass", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100; i++) {
		free(o);
		o = NULL;
		t_sh(&o, "cat %s", errf);
		if (o && strstr(o, "waiting for the lock"))
			break;
		usleep(50000);
	}
	cr_assert(o && strstr(o, "waiting for the lock"), "the CLI waits: %s", o);
	free(o);
	o = NULL;
	kill(ctl, SIGCONT);
	cr_assert_eq(waitpid(cli, &st, 0), cli);
	t_sh(&o, "cat %s", errf);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st),
		  "the waiting CLI had the lock before the controller's next batch: %s", o);
	free(o);
	cr_assert_eq(waitpid(ctl, &st, 0), ctl);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st),
		  "the controller's next batch came after the CLI's (handle 100 in use): "
		  "status %#x", st);
	o = NULL;
	t_xtcam(&o, "rule show bl handle 100");
	cr_assert(o && strstr(o, "192.0.2.200"), "handle 100 is the CLI's rule: %s", o);
	free(o);
	cr_assert_eq(through_from(&p, "192.0.2.100", 0x5c01), 3, "the CLI's rule 100 passes");
	cr_assert_eq(through_from(&p, "10.1.0.1", 0x5c02), 0, "the first batch's rules drop");
	t_pair_free(&p);
}

/* Batches of 1000 changes killed at random moments (and at each crash
 * point): the block has the rules before the batch or after it, never a
 * part; the next command repairs what the kill left. */
static void batch_child(int round, int n, const char *crash_at, const char *cur)
{
	char err[XTCAM_CTL_ERR_MAX], text[96];
	struct xtcam_ctl *c;
	struct xtcam_ctl_batch *b;
	const char *p = cur;
	int i;

	if (crash_at)
		setenv("XTCAM_CRASH_AT", crash_at, 1);
	if (xtcam_ctl_open(&c, NULL, err, sizeof(err)))
		_exit(2);
	b = xtcam_ctl_batch_begin(c, "bl");
	/* the rules there go, this round's come */
	while (b && *p) {
		if (xtcam_ctl_batch_del(b, (__u32)strtoul(p, (char **)&p, 10)))
			_exit(3);
		while (*p == ' ')
			p++;
	}
	for (i = 0; b && i < n; i++) {
		snprintf(text, sizeof(text), "prio %d handle %d src_ip 10.%d.%d.%d action drop",
			 1 + i % 7, round * 1000 + 1 + i, 1 + round % 200, i / 250, i % 250);
		if (xtcam_ctl_batch_add(b, text, NULL))
			_exit(4);
	}
	if (!b || xtcam_ctl_batch_commit(b))
		_exit(5);
	xtcam_ctl_batch_free(b);
	xtcam_ctl_close(c);
	_exit(0);
}

static char *round_set(int round, int n)
{
	char *s = calloc(1, 12 * (size_t)n + 1);
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, "%s%d", i ? " " : "", round * 1000 + 1 + i);
	return s;
}

Test(cli_api, killed_batch_is_all_or_nothing)
{
	static const char *const points[] = { "stage", "deliver", "flip", "commit" };
	const int n = 1000, rounds = 16;
	struct timespec t0, t1;
	long full_us = 0;
	int round, st, old = 0, new = 0;
	char *cur;

	XT_OK("block add bl capacity 8192");
	srand((unsigned)getpid());
	cur = handles("bl");
	for (round = 1; round <= rounds; round++) {
		/* rounds 1-4 die at each crash point; 5 runs to its end (and
		 * times it); the others are killed after a random part of that */
		const char *crash = round <= 4 ? points[round - 1] : NULL;
		char *after = round_set(round, n), *got;
		pid_t pid;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (!pid)
			batch_child(round, n, crash, cur);
		if (!crash && round > 5) {
			struct timespec d = { 0, (rand() % (full_us + 1)) * 1000L };

			nanosleep(&d, NULL);
			kill(pid, SIGKILL);
		}
		waitpid(pid, &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (round == 5) {
			cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "the batch: status %d", st);
			full_us = (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
		} else {
			cr_assert(WIFSIGNALED(st) || (WIFEXITED(st) && !WEXITSTATUS(st)),
				  "round %d: the batch failed: status %d", round, st);
		}
		got = handles("bl");    /* (repairs first, as every command) */
		cr_assert(!strcmp(got, cur) || !strcmp(got, after),
			  "round %d (%s): the block holds neither the rules before the batch "
			  "nor those after it:\n%s", round, crash ? crash : "kill -9", got);
		if (!strcmp(got, after))
			new++;
		else
			old++;
		free(cur);
		free(after);
		cur = got;
	}
	free(cur);
	cr_log_info("killed batches: %d left the rules before, %d those after", old, new);
	cr_assert_geq(old, 3, "stage, deliver and flip stop a batch before its commit");
}

/* The same on a bound block, whose data path a batch flips and then
 * brings up to date in a thread of its own, while the registry commits
 * and after the commit returned (`catch-up`: killed there, before or
 * after the registry's commit): the rules and the frames' verdicts are
 * those before the batch or after it. */
Test(cli_api, killed_bound_batch_is_all_or_nothing)
{
	static const char *const points[] = { "deliver", "commit", "catch-up" };
	const int n = 1000, rounds = 9;
	struct t_pair p;
	struct timespec t0, t1;
	long full_us = 0;
	int round, st, last = 0;
	char *cur;

	cr_assert_eq(t_pair_make(&p, "k"), 0);
	XT_OK("block add bl capacity 8192 default pass");
	XT_OK("bind bl dev %s netns %s mode generic", p.a, p.ns_a);
	srand((unsigned)getpid());
	cur = handles("bl");
	for (round = 1; round <= rounds; round++) {
		/* rounds 1-3 die at a crash point; 4 runs to its end (and
		 * times it); the others are killed after a random part of it */
		const char *crash = round <= 3 ? points[round - 1] : NULL;
		char *after = round_set(round, n), *got, src[32];
		pid_t pid;
		int now;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (!pid)
			batch_child(round, n, crash, cur);
		if (!crash && round > 4) {
			struct timespec d = { 0, (rand() % (full_us + 1)) * 1000L };

			nanosleep(&d, NULL);
			kill(pid, SIGKILL);
		}
		waitpid(pid, &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (round == 4)
			full_us = (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
		/* a writer repairs what the kill left, the data path too (a
		 * reader reads the registry's last commit, and leaves the
		 * rest to the next writer): this one changes nothing else */
		t_xtcam(NULL, "rule del bl handle 999999");
		got = handles("bl");
		cr_assert(!strcmp(got, cur) || !strcmp(got, after),
			  "round %d (%s): the block holds neither the rules before the batch "
			  "nor those after it:\n%s", round, crash ? crash : "kill -9", got);
		if (crash && !strcmp(crash, "commit"))
			cr_assert_str_eq(got, after, "round %d: killed at %s, after the commit",
					 round, crash);
		now = strcmp(got, after) ? last : round;
		/* a rule of the rules there drops its frames; one of the
		 * round before or after, not there, does not */
		if (now) {
			snprintf(src, sizeof(src), "10.%d.3.7", 1 + now % 200);
			cr_assert_eq(through_from(&p, src, 0x5d00 + (uint32_t)round), 0,
				     "round %d: %s of the rules there drops", round, src);
		}
		snprintf(src, sizeof(src), "10.%d.3.7", 1 + (now == round ? last : round) % 200);
		cr_assert_eq(through_from(&p, src, 0x5e00 + (uint32_t)round), 3,
			     "round %d: %s of the rules not there passes", round, src);
		last = now;
		free(cur);
		free(after);
		cur = got;
	}
	free(cur);
	t_pair_free(&p);
}

/* The batch limit: one change past it is refused with the reason, and the
 * batch then commits nothing; a batch after it works. */
Test(cli_api, batch_past_the_limit)
{
	char err[XTCAM_CTL_ERR_MAX];
	struct xtcam_ctl *c;
	struct xtcam_ctl_batch *b;
	__u32 h1 = 0, h2 = 0, i;
	int e;

	XT_OK("block add bl capacity 64");
	XT_OK("rule add bl prio 1 handle 5 src_ip 192.0.2.5 action drop");
	cr_assert_eq(xtcam_ctl_open(&c, inst, err, sizeof(err)), 0, "%s", err);
	b = xtcam_ctl_batch_begin(c, "bl");
	cr_assert_not_null(b);
	cr_assert_eq(xtcam_ctl_batch_del(b, 5), 0);
	for (i = 1; i < XTCAM_CTL_BATCH_MAX; i++)
		cr_assert_eq(xtcam_ctl_batch_add(b, "prio 2 src_ip 192.0.2.7 action pass", NULL), 0,
			     "%s", xtcam_ctl_strerror(c));
	cr_assert_eq(xtcam_ctl_batch_size(b), XTCAM_CTL_BATCH_MAX);
	e = xtcam_ctl_batch_add(b, "prio 2 src_ip 192.0.2.8 action pass", NULL);
	cr_assert_eq(e, -E2BIG, "change %u: %d", XTCAM_CTL_BATCH_MAX + 1, e);
	cr_assert(strstr(xtcam_ctl_strerror(c), "block bl: batch: more than 65536 changes"),
		  "%s", xtcam_ctl_strerror(c));
	cr_assert_eq(xtcam_ctl_batch_commit(b), -E2BIG);
	cr_assert(strstr(xtcam_ctl_strerror(c), "nothing changed"), "%s", xtcam_ctl_strerror(c));
	handles_are("bl", "5", "after the refused batch");
	/* the batch is empty again */
	cr_assert_eq(xtcam_ctl_batch_add(b, "prio 2 src_ip 192.0.2.7 action pass", &h1), 0);
	cr_assert_eq(xtcam_ctl_batch_add(b, "prio 2 src_ip 192.0.2.8 action pass", &h2), 0);
	cr_assert_eq(xtcam_ctl_batch_del(b, 5), 0);
	cr_assert_eq(xtcam_ctl_batch_commit(b), 0, "%s", xtcam_ctl_strerror(c));
	cr_assert(h1 == 6 && h2 == 7, "handles %u %u", h1, h2);
	handles_are("bl", "6 7", "after the batch");
	xtcam_ctl_batch_free(b);
	xtcam_ctl_close(c);
}

#define FAILS(call, err, ...) do { int e_ = (call); \
	cr_assert_eq(e_, (err), "%s: %d", #call, e_); \
	const char *w_[] = { __VA_ARGS__, NULL }; \
	for (int i_ = 0; w_[i_]; i_++) \
		cr_assert(strstr(xtcam_ctl_strerror(c), w_[i_]), "%s: the message \"%s\" lacks " \
			  "\"%s\"", #call, xtcam_ctl_strerror(c), w_[i_]); } while (0)

/* Every error names the object and says why; a batch with an error
 * changes nothing. */
Test(cli_api, errors_name_the_object)
{
	char err[XTCAM_CTL_ERR_MAX];
	struct xtcam_ctl *c;
	struct xtcam_ctl_batch *b;
	struct xtcam_ctl_counters cnt;
	struct ctl x;
	char *a;

	XT_OK("block add bl capacity 64");
	XT_OK("rule add bl prio 1 handle 5 src_ip 192.0.2.5 action drop");
	cr_assert_eq(xtcam_ctl_open(&c, "xtcam-test-no/such", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "XTCAM_INSTANCE") || strstr(err, "no/such"), "%s", err);
	cr_assert_eq(xtcam_ctl_open(&c, inst, err, sizeof(err)), 0, "%s", err);
	FAILS(xtcam_ctl_rule_add(c, "nosuch", "prio 1 src_ip 192.0.2.1 action drop", NULL),
	      -ENOENT, "block nosuch", "no such block");
	FAILS(xtcam_ctl_rule_add(c, "bl", "prio 1 src_ip 192.0.2.300 action drop", NULL),
	      -EINVAL, "block bl", "192.0.2.300");
	FAILS(xtcam_ctl_rule_add(c, "bl", "prio 1 handle 5 src_ip 192.0.2.6 action drop", NULL),
	      -EEXIST, "block bl", "handle 5", "in use");
	FAILS(xtcam_ctl_rule_del(c, "bl", 4242), -ENOENT, "block bl", "handle 4242");
	FAILS(xtcam_ctl_rule_replace(c, "bl", "prio 1 handle 6 src_ip 192.0.2.6 action drop"),
	      -ENOENT, "block bl", "handle 6");
	FAILS(xtcam_ctl_counters(c, "bl", 99, &cnt), -ENOENT, "block bl", "handle 99",
	      "no such rule");
	b = xtcam_ctl_batch_begin(c, "bl");
	cr_assert_not_null(b);
	cr_assert_eq(xtcam_ctl_batch_add(b, "prio 2 handle 8 src_ip 192.0.2.8 action drop", NULL), 0);
	cr_assert_eq(xtcam_ctl_batch_del(b, 77), 0);
	FAILS(xtcam_ctl_batch_commit(b), -ENOENT, "block bl", "change 2", "handle 77");
	cr_assert_eq(xtcam_ctl_batch_add(b, "prio 2 handle 8 src_ip 192.0.2.8 action drop", NULL), 0);
	cr_assert_eq(xtcam_ctl_batch_del(b, 8), 0);
	FAILS(xtcam_ctl_batch_commit(b), -ENOENT, "block bl", "change 2", "handle 8");
	cr_assert_eq(xtcam_ctl_batch_replace(b, "prio 2 handle 5 src_ip 192.0.2.9 action pass"), 0);
	cr_assert_eq(xtcam_ctl_batch_del(b, 5), 0);
	FAILS(xtcam_ctl_batch_commit(b), -EINVAL, "block bl", "handle 5", "twice");
	handles_are("bl", "5", "after the refused batches");
	xtcam_ctl_batch_free(b);
	xtcam_ctl_close(c);
	/* the example says which line and why */
	ctl_start(&x, "bl");
	a = ctl_say(&x, "unblock 192.0.2.77\n", 1);
	cr_assert(strstr(a, "error unblock 192.0.2.77: ") && strstr(a, "block bl") &&
		  strstr(a, "handle 3221226061"), "%s", a);
	free(a);
	cr_assert_eq(ctl_stop(&x), 1, "a line failed: exit 1");
}

/* xtcam -batch keeps its context from line to line while nobody else
 * writes: a line that flushes the instance, or makes a block again, is
 * seen by the next line, which acts on the registry as it is then. */
Test(cli_api, batch_lines_see_each_other)
{
	FILE *f = fopen(file, "w");
	char *o = NULL;

	cr_assert_not_null(f);
	fprintf(f, "block add b1 capacity 64\n"
		   "rule add b1 prio 1 handle 1 src_ip 192.0.2.1 action drop\n"
		   "flush\n"
		   "block add b1 capacity 64\n"
		   "rule add b1 prio 1 handle 1 src_ip 192.0.2.1 action drop\n"
		   "rule add b1 prio 2 src_ip 192.0.2.2 action drop\n"
		   "block del b1\n"
		   "block add b1 capacity 128\n"
		   "rule add b1 prio 3 handle 9 src_ip 192.0.2.9 action drop\n"
		   "rule add b1 prio 3 src_ip 192.0.2.10 action drop\n");
	fclose(f);
	cr_assert_eq(t_xtcam(&o, "-batch %s", file), 0, "%s", o);
	free(o);
	handles_are("b1", "9 10", "after the batch");
	cr_assert_eq(t_xtcam(&o, "-j block show b1"), 0, "%s", o);
	cr_assert_eq(t_json_ll(o, "0.capacity"), 128, "the block made again: %s", o);
	free(o);
}
