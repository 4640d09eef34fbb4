// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The attach layer on veth pairs in network namespaces the tests make
 * (xtcam-t-PID-a and -b, one end in each; removed in .fini, and stale ones
 * of dead test processes swept first).  Nothing here touches the root
 * namespace's interfaces or sends traffic outside those namespaces.
 *
 * "Somebody else's" program is tests/progs/count_pass.bpf.c, loaded with
 * xdp-loader (into libxdp's dispatcher where the kernel allows one) or
 * with ip(8) (always alone).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "xtcam/dp.h"
#include "attach.h"
#include "nsenter.h"
#include "tlib.h"

#define PREFIX  "xtcam-t-"
#define IP_A    "10.77.0.1"
#define IP_B    "10.77.0.2"
#define MAC_A   "02:00:00:77:00:01"
#define MAC_B   "02:00:00:77:00:02"
#define NFRAMES 20

static char ns_a[64], ns_b[64], pin[PATH_MAX], other_obj[PATH_MAX + 32];
static bool made_a, made_b;
static struct xtcam_dp *dp;
static int home = -1;                  /* the namespace we came from */

/* attachments to undo in .fini: (namespace, info) */
static struct { const char *ns; struct xtcam_attach_info info; } undo[8];
static int nundo;

static int quiet_pr(enum libxdp_print_level l, const char *f, va_list ap)
{
	(void)l; (void)f; (void)ap;
	return 0;
}

static bool verbose(void)
{
	const char *v = getenv("XTCAM_VERBOSE");

	return v && *v && strcmp(v, "0");
}

/* Run a shell command; its exit status (-1 if it could not run). */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd) - 32, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(cmd) - 32)
		return -1;
	if (!verbose())
		strcat(cmd, " >/dev/null 2>&1");
	else
		fprintf(stderr, "+ %s\n", cmd);
	st = system(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* ... and its output. */
static int sh_out(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sh_out(char *out, size_t len, const char *fmt, ...)
{
	char cmd[1024];
	size_t got = 0, r;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (got + 1 < len && (r = fread(out + got, 1, len - 1 - got, f)) > 0)
		got += r;
	out[got] = 0;
	st = pclose(f);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* Namespaces and pins left by test processes that died before .fini. */
static void sweep_stale(void)
{
	struct dirent *de;
	DIR *d;

	d = opendir("/run/netns");
	while (d && (de = readdir(d))) {
		int pid;

		if (sscanf(de->d_name, PREFIX "%d-", &pid) == 1 && pid > 0 &&
		    kill(pid, 0) && errno == ESRCH)
			sh("ip netns del %s", de->d_name);
	}
	if (d)
		closedir(d);
	d = opendir("/sys/fs/bpf");
	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		int pid;

		if (sscanf(de->d_name, PREFIX "%d", &pid) == 1 && pid > 0 &&
		    kill(pid, 0) && errno == ESRCH) {
			snprintf(path, sizeof(path), "/sys/fs/bpf/%s", de->d_name);
			xtcam_dp_unpin(path);
		}
	}
	if (d)
		closedir(d);
}

static int ns_enter(const char *ns)
{
	char err[256];
	int saved, e = xtcam_ns_enter_name(ns, &saved, err, sizeof(err));

	cr_assert_eq(e, 0, "enter %s: %s", ns, err);
	return saved;
}

static void ns_leave(int saved)
{
	xtcam_ns_leave(saved);
}

static int ifindex_in(const char *ns, const char *dev)
{
	int saved = ns_enter(ns), i = (int)if_nametoindex(dev);

	ns_leave(saved);
	cr_assert_gt(i, 0, "%s in %s: no such device", dev, ns);
	return i;
}

static void make_veth(void)
{
	cr_assert_eq(sh("ip -n %s link add va address " MAC_A " type veth peer name vb "
			"address " MAC_B " netns %s", ns_a, ns_b), 0, "veth pair");
	cr_assert_eq(sh("ip -n %s addr add " IP_A "/24 dev va && ip -n %s link set va up",
			ns_a, ns_a), 0);
	cr_assert_eq(sh("ip -n %s addr add " IP_B "/24 dev vb && ip -n %s link set vb up",
			ns_b, ns_b), 0);
	/* no ARP to wait for */
	cr_assert_eq(sh("ip -n %s neigh replace " IP_B " lladdr " MAC_B " dev va nud permanent",
			ns_a), 0);
	cr_assert_eq(sh("ip -n %s neigh replace " IP_A " lladdr " MAC_A " dev vb nud permanent",
			ns_b), 0);
}

static void setup(void)
{
	struct xtcam_block_spec spec;
	char exe[PATH_MAX];
	ssize_t n;
	int e, pid = (int)getpid();

	if (!t_have_bpf())
		cr_skip_test("needs root: makes network namespaces, attaches XDP programs");
	if (sh("ip -V") != 0 || sh("nsenter -V") != 0)
		cr_skip_test("needs ip (iproute2) and nsenter (util-linux)");
	if (!verbose())
		libxdp_set_print(quiet_pr);
	sweep_stale();
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(other_obj, sizeof(other_obj), "%s/progs/count_pass.bpf.o", exe);

	snprintf(ns_a, sizeof(ns_a), PREFIX "%d-a", pid);
	snprintf(ns_b, sizeof(ns_b), PREFIX "%d-b", pid);
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/" PREFIX "%d", pid);
	cr_assert_eq(sh("ip netns add %s", ns_a), 0, "ip netns add %s", ns_a);
	made_a = true;
	cr_assert_eq(sh("ip netns add %s", ns_b), 0, "ip netns add %s", ns_b);
	made_b = true;
	sh("ip -n %s link set lo up; ip -n %s link set lo up", ns_a, ns_b);
	sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1", ns_a);
	sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1", ns_b);
	make_veth();

	memset(&spec, 0, sizeof(spec));
	spec.capacity = 64;
	e = xtcam_dp_create(&spec, 0, &dp);
	cr_assert_eq(e, 0, "xtcam_dp_create: %s", strerror(-e));
	e = xtcam_dp_pin(dp, pin);
	cr_assert_eq(e, 0, "pin %s: %s", pin, strerror(-e));
	home = ns_enter(ns_a);
}

static void teardown(void)
{
	char err[256];
	int i, saved;

	for (i = 0; i < nundo; i++) {
		if (xtcam_ns_enter_name(undo[i].ns, &saved, err, sizeof(err)))
			continue;
		xtcam_detach(&undo[i].info, err, sizeof(err));
		xtcam_ns_leave(saved);
	}
	nundo = 0;
	/* count_pass's libxdp pins (where xdp-loader made a dispatcher)
	 * would outlive the device */
	if (made_a)
		sh("nsenter --net=/run/netns/%s xdp-loader unload -a va", ns_a);
	if (home >= 0)
		xtcam_ns_leave(home);
	home = -1;
	if (made_a)
		sh("ip netns del %s", ns_a);
	if (made_b)
		sh("ip netns del %s", ns_b);
	made_a = made_b = false;
	xtcam_dp_free(dp);
	dp = NULL;
	if (pin[0])
		xtcam_dp_unpin(pin);
}

/* generous: under TCG in vmtest a test takes tens of seconds */
TestSuite(attach, .init = setup, .fini = teardown, .timeout = 240);

/* attach in namespace ns; remembered for .fini */
static int do_attach(const char *ns, const char *dev, enum xtcam_mode mode, bool force,
		     struct xtcam_attach_info *info, char *err, size_t errlen)
{
	int saved = ns_enter(ns), e;

	err[0] = 0;
	e = xtcam_attach(pin, (int)if_nametoindex(dev), mode, force, info, err, errlen);
	ns_leave(saved);
	if (!e && nundo < (int)(sizeof(undo) / sizeof(undo[0]))) {
		undo[nundo].ns = ns;
		undo[nundo].info = *info;
		nundo++;
	}
	return e;
}

static void xdp_ids(int ifindex, __u32 *drv, __u32 *skb)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int e = bpf_xdp_query(ifindex, 0, &q);

	cr_assert_eq(e, 0, "bpf_xdp_query(%d): %s", ifindex, strerror(-e));
	*drv = q.drv_prog_id;
	*skb = q.skb_prog_id;
}

static __u32 attached_id(int ifindex, enum xtcam_mode mode)
{
	__u32 drv, skb;

	xdp_ids(ifindex, &drv, &skb);
	return mode == XTCAM_MODE_GENERIC ? skb : drv;
}

static void prog_name(__u32 id, char *name)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	cr_assert_geq(fd, 0, "program id %u: %s", id, strerror(errno));
	memset(&info, 0, sizeof(info));
	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	close(fd);
	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
}

/* The frames count_pass (program id) has seen. */
static __u64 count_pass_hits(__u32 id)
{
	int mfd = t_prog_map(id, "cp_hits");
	__u32 zero = 0;
	__u64 v = 0;

	cr_assert_geq(mfd, 0, "program id %u: its cp_hits map: %s", id, strerror(-mfd));
	cr_assert_eq(bpf_map_lookup_elem(mfd, &zero, &v), 0);
	close(mfd);
	return v;
}

/* Is the program on ifindex a libxdp dispatcher? */
static bool dispatcher_on(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	bool r;

	if (libxdp_get_error(mp) || !mp)
		return false;
	r = !xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	return r;
}

/* count_pass on va in ns A through xdp-loader (libxdp) */
static int xdp_loader_load(enum xtcam_mode mode)
{
	return sh("nsenter --net=/run/netns/%s xdp-loader load -m %s va %s", ns_a,
		  mode == XTCAM_MODE_GENERIC ? "skb" : "native", other_obj);
}

/* ... through ip(8): always a plain program, never a dispatcher */
static int ip_load(enum xtcam_mode mode, bool force)
{
	return sh("ip %s -n %s link set dev va %s obj %s sec xdp", force ? "-force" : "",
		  ns_a, mode == XTCAM_MODE_GENERIC ? "xdpgeneric" : "xdpdrv", other_obj);
}

static void basic(enum xtcam_mode mode)
{
	struct xtcam_attach_info info;
	char err[512], out[4096], name[BPF_OBJ_NAME_LEN], want[64];
	int ifi = ifindex_in(ns_a, "va"), e;

	e = do_attach(ns_a, "va", mode, false, &info, err, sizeof(err));
	cr_assert_eq(e, 0, "attach %s: %s (%s)", xtcam_mode_name(mode), err, strerror(-e));
	cr_assert_eq(info.mode, (__u32)mode);
	cr_assert_eq(info.ifindex, (__u32)ifi);
	cr_assert_neq(info.prog_id, 0);
	if (info.dispatcher)
		cr_log_info("attach %s: through libxdp's dispatcher", xtcam_mode_name(mode));
	else
		cr_assert(strstr(info.note, "dispatcher"), "no reason for the missing "
			  "dispatcher in the note: '%s'", info.note);
	if (!info.dispatcher) {
		cr_assert_eq(attached_id(ifi, mode), info.prog_id, "the device runs our id");
		prog_name(info.prog_id, name);
		cr_assert_str_eq(name, "xtcam_parse");
	}
	/* and ip(8) agrees */
	cr_assert_eq(sh_out(out, sizeof(out), "ip -n %s -d link show dev va", ns_a), 0);
	cr_assert(strstr(out, mode == XTCAM_MODE_GENERIC ? "xdpgeneric" : "xdp "),
		  "ip link: %s", out);
	if (!info.dispatcher) {
		snprintf(want, sizeof(want), "prog/xdp id %u name xtcam_parse", info.prog_id);
		cr_assert(strstr(out, want), "ip link has no '%s': %s", want, out);
	}
	cr_assert_eq(xtcam_attach_check(&info), 1);

	err[0] = 0;
	e = xtcam_detach(&info, err, sizeof(err));
	cr_assert_eq(e, 0, "detach: %s", err);
	cr_assert_eq(attached_id(ifi, mode), 0, "nothing left on va");
	cr_assert_eq(xtcam_attach_check(&info), 0);
	err[0] = 0;
	e = xtcam_detach(&info, err, sizeof(err));
	cr_assert_eq(e, -ENOENT, "second detach: %d %s", e, err);
	cr_assert(strstr(err, "va"), "the message names the device: %s", err);
}

Test(attach, generic) { basic(XTCAM_MODE_GENERIC); }
Test(attach, native)  { basic(XTCAM_MODE_NATIVE); }

Test(attach, hw_and_auto)
{
	struct xtcam_attach_info info;
	char err[512] = "";
	int e;

	e = do_attach(ns_a, "va", XTCAM_MODE_HW, false, &info, err, sizeof(err));
	cr_assert_eq(e, -EOPNOTSUPP);
	cr_assert(strstr(err, "hw"), "%s", err);
	cr_assert_eq(attached_id(ifindex_in(ns_a, "va"), XTCAM_MODE_NATIVE), 0);

	e = do_attach(ns_a, "va", XTCAM_MODE_AUTO, false, &info, err, sizeof(err));
	cr_assert_eq(e, 0, "auto: %s", err);
	cr_assert_eq(info.mode, XTCAM_MODE_NATIVE, "veth takes native XDP");
	cr_assert_eq(xtcam_attach_check(&info), 1);
}

Test(attach, modes_by_name)
{
	enum xtcam_mode m;

	cr_assert_eq(xtcam_mode_parse("generic", &m), 0);
	cr_assert_eq(m, XTCAM_MODE_GENERIC);
	cr_assert_eq(xtcam_mode_parse("skb", &m), 0);
	cr_assert_eq(m, XTCAM_MODE_GENERIC);
	cr_assert_eq(xtcam_mode_parse("native", &m), 0);
	cr_assert_eq(m, XTCAM_MODE_NATIVE);
	cr_assert_eq(xtcam_mode_parse("hw", &m), 0);
	cr_assert_eq(m, XTCAM_MODE_HW);
	cr_assert_eq(xtcam_mode_parse("auto", &m), 0);
	cr_assert_eq(m, XTCAM_MODE_AUTO);
	cr_assert_eq(xtcam_mode_parse("fast", &m), -EINVAL);
	cr_assert_str_eq(xtcam_mode_name(XTCAM_MODE_GENERIC), "generic");
}

/* One of ours on the device: refused, force or not, this block or another. */
Test(attach, refuses_ours)
{
	struct xtcam_block_spec spec;
	struct xtcam_attach_info info, again;
	struct xtcam_dp *dp2;
	char err[512], pin2[PATH_MAX + 8];
	int e;

	e = do_attach(ns_a, "va", XTCAM_MODE_GENERIC, false, &info, err, sizeof(err));
	cr_assert_eq(e, 0, "%s", err);
	e = do_attach(ns_a, "va", XTCAM_MODE_GENERIC, true, &again, err, sizeof(err));
	cr_assert_eq(e, -EBUSY);
	cr_assert(strstr(err, "this block"), "%s", err);
	e = do_attach(ns_a, "va", XTCAM_MODE_NATIVE, false, &again, err, sizeof(err));
	cr_assert_eq(e, -EBUSY, "another mode of ours: %d %s", e, err);

	memset(&spec, 0, sizeof(spec));
	spec.capacity = 64;
	cr_assert_eq(xtcam_dp_create(&spec, 0, &dp2), 0);
	snprintf(pin2, sizeof(pin2), "%s-2", pin);
	cr_assert_eq(xtcam_dp_pin(dp2, pin2), 0);
	{
		int saved = ns_enter(ns_a);

		e = xtcam_attach(pin2, (int)if_nametoindex("va"), XTCAM_MODE_GENERIC,
				 true, &again, err, sizeof(err));
		ns_leave(saved);
	}
	xtcam_dp_free(dp2);
	xtcam_dp_unpin(pin2);
	cr_assert_eq(e, -EBUSY);
	cr_assert(strstr(err, "another block"), "%s", err);
	cr_assert_eq(xtcam_attach_check(&info), 1, "ours untouched");
}

/* A program that is not ours and not in a dispatcher: refused, named;
 * force replaces it. */
static void other_refused(enum xtcam_mode mode)
{
	struct xtcam_attach_info info;
	char err[512], name[BPF_OBJ_NAME_LEN], id[32];
	int ifi = ifindex_in(ns_a, "va"), e;
	__u32 other;

	cr_assert_eq(xdp_loader_load(mode), 0, "xdp-loader load %s", other_obj);
	if (dispatcher_on(ifi)) {
		/* libxdp would add us: make it a plain program instead */
		cr_assert_eq(sh("nsenter --net=/run/netns/%s xdp-loader unload -a va",
				ns_a), 0);
		cr_assert_eq(ip_load(mode, false), 0);
	}
	other = attached_id(ifi, mode);
	cr_assert_neq(other, 0);
	prog_name(other, name);
	cr_assert_str_eq(name, "count_pass");

	e = do_attach(ns_a, "va", mode, false, &info, err, sizeof(err));
	cr_assert_eq(e, -EBUSY, "attach over count_pass: %d %s", e, err);
	snprintf(id, sizeof(id), "id %u", other);
	cr_assert(strstr(err, "count_pass") && strstr(err, id) && strstr(err, "va"),
		  "the message names device and program: %s", err);
	cr_assert_eq(attached_id(ifi, mode), other, "count_pass untouched");

	/* the other mode is refused too (the kernel allows one of the two) */
	e = do_attach(ns_a, "va", mode == XTCAM_MODE_GENERIC ? XTCAM_MODE_NATIVE :
		      XTCAM_MODE_GENERIC, false, &info, err, sizeof(err));
	cr_assert_eq(e, -EBUSY, "other mode: %d %s", e, err);

	e = do_attach(ns_a, "va", mode, true, &info, err, sizeof(err));
	cr_assert_eq(e, 0, "force: %s", err);
	cr_assert(strstr(info.note, "replaced") && strstr(info.note, "count_pass"),
		  "note: %s", info.note);
	cr_assert_eq(xtcam_attach_check(&info), 1);
	cr_assert_eq(bpf_prog_get_fd_by_id(other) < 0 ||
		     attached_id(ifi, mode) != other, 1, "count_pass replaced");
}

Test(attach, other_refused_generic) { other_refused(XTCAM_MODE_GENERIC); }
Test(attach, other_refused_native)  { other_refused(XTCAM_MODE_NATIVE); }

/* After ours, somebody else's replaces it: ours is gone, theirs stays. */
Test(attach, replaced_by_other)
{
	struct xtcam_attach_info info;
	char err[512];
	int ifi = ifindex_in(ns_a, "va"), e;
	__u32 other;

	e = do_attach(ns_a, "va", XTCAM_MODE_GENERIC, false, &info, err, sizeof(err));
	cr_assert_eq(e, 0, "%s", err);
	cr_assert_eq(ip_load(XTCAM_MODE_GENERIC, true), 0, "ip -force ... xdpgeneric");
	other = attached_id(ifi, XTCAM_MODE_GENERIC);
	cr_assert_neq(other, info.prog_id);
	cr_assert_eq(xtcam_attach_check(&info), 0, "replaced: not ours any more");
	e = xtcam_detach(&info, err, sizeof(err));
	cr_assert_eq(e, -ENOENT, "detach: %d %s", e, err);
	cr_assert_eq(attached_id(ifi, XTCAM_MODE_GENERIC), other, "theirs stays");
}

/* The device goes away; a new one gets the same ifindex. */
Test(attach, device_gone_and_ifindex_reused)
{
	struct xtcam_attach_info info, info2;
	char err[512];
	int ifi = ifindex_in(ns_a, "va"), e;

	e = do_attach(ns_a, "va", XTCAM_MODE_NATIVE, false, &info, err, sizeof(err));
	cr_assert_eq(e, 0, "%s", err);
	cr_assert_eq(sh("ip -n %s link del va", ns_a), 0);
	cr_assert_eq(xtcam_attach_check(&info), 0, "device gone");
	e = xtcam_detach(&info, err, sizeof(err));
	cr_assert_eq(e, -ENOENT, "detach after the device went: %d %s", e, err);

	cr_assert_eq(sh("ip -n %s link add va index %d type veth peer name vb netns %s",
			ns_a, ifi, ns_b), 0, "veth again with ifindex %d", ifi);
	cr_assert_eq(sh("ip -n %s link set va up && ip -n %s link set vb up", ns_a, ns_b), 0);
	cr_assert_eq(ifindex_in(ns_a, "va"), ifi);
	cr_assert_eq(xtcam_attach_check(&info), 0, "a new device is not ours");
	e = do_attach(ns_a, "va", XTCAM_MODE_NATIVE, false, &info2, err, sizeof(err));
	cr_assert_eq(e, 0, "%s", err);
	cr_assert_neq(info2.prog_id, info.prog_id);
	cr_assert_eq(xtcam_attach_check(&info), 0, "the old attachment stays gone");
	cr_assert_eq(xtcam_attach_check(&info2), 1);
	cr_assert_eq(xtcam_detach(&info, err, sizeof(err)), -ENOENT,
		     "the old one does not detach the new one");
	cr_assert_eq(xtcam_attach_check(&info2), 1);
}

/* The attachment stays when the process that made it exits. */
Test(attach, outlives_process)
{
	struct xtcam_attach_info info;
	char err[512];
	int p[2], st;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct xtcam_attach_info ci;
		int e = xtcam_attach(pin, (int)if_nametoindex("va"), XTCAM_MODE_GENERIC,
				     false, &ci, err, sizeof(err));

		if (e)
			fprintf(stderr, "child attach: %s\n", err);
		if (write(p[1], &ci, sizeof(ci)) != sizeof(ci))
			_exit(2);
		_exit(e ? 1 : 0);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &info, sizeof(info)), (ssize_t)sizeof(info));
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child attached");
	undo[nundo].ns = ns_a;
	undo[nundo++].info = info;
	cr_assert_eq(xtcam_attach_check(&info), 1, "still attached after exit");
	cr_assert_eq(xtcam_detach(&info, err, sizeof(err)), 0, "%s", err);
}

/* --- traffic ----------------------------------------------------------- */

static int udp_rx(const char *ns, const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int saved = ns_enter(ns), fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	inet_pton(AF_INET, ip, &a.sin_addr);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind %s:%d: %s",
		     ip, port, strerror(errno));
	ns_leave(saved);
	return fd;
}

static void udp_send(const char *ns, const char *ip, int port, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int saved = ns_enter(ns), fd, i;
	char buf[64];

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	ns_leave(saved);
	inet_pton(AF_INET, ip, &a.sin_addr);
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < n; i++)
		cr_assert_eq(sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&a,
				    sizeof(a)), (ssize_t)sizeof(buf), "send to %s:%d: %s",
			     ip, port, strerror(errno));
	close(fd);
}

/* datagrams waiting on fd (stops after 300 ms of silence) */
static int udp_count(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[256];
	int n = 0;

	while (poll(&p, 1, 300) == 1)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			n++;
	return n;
}

static void drop_udp9(void)
{
	struct xtcam_rule r;
	struct xtcam_dp_op op;
	char err[256];
	int e;

	t_rule(&r, 1, 1);
	t_match_ethtype(&r, 0x0800);
	t_match_proto(&r, 17);
	r.dport_lo = r.dport_hi = 9;
	r.keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
	r.action.type = XTCAM_ACT_DROP;
	op = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &r,
				   .act = { .type = XTCAM_ACT_DROP } };
	e = xtcam_dp_apply(dp, &op, 1, err, sizeof(err));
	cr_assert_eq(e, 0, "apply: %s", err);
}

/* The block on both ends, each in its namespace (one set of maps): UDP to
 * port 9 is dropped at the receiving end and counted, port 10 arrives. */
static void traffic(enum xtcam_mode mode)
{
	struct xtcam_attach_info ia, ib;
	struct xtcam_counter c, miss;
	char err[512];
	int a9, a10, b9, b10, e;

	drop_udp9();
	e = do_attach(ns_a, "va", mode, false, &ia, err, sizeof(err));
	cr_assert_eq(e, 0, "attach va: %s", err);
	e = do_attach(ns_b, "vb", mode, false, &ib, err, sizeof(err));
	cr_assert_eq(e, 0, "attach vb: %s", err);
	cr_assert_neq(ia.prog_id, ib.prog_id, "an instance per device");

	a9 = udp_rx(ns_a, IP_A, 9);
	a10 = udp_rx(ns_a, IP_A, 10);
	b9 = udp_rx(ns_b, IP_B, 9);
	b10 = udp_rx(ns_b, IP_B, 10);
	udp_send(ns_b, IP_A, 9, NFRAMES);
	udp_send(ns_b, IP_A, 10, NFRAMES);
	udp_send(ns_a, IP_B, 9, NFRAMES);
	udp_send(ns_a, IP_B, 10, NFRAMES);
	cr_expect_eq(udp_count(a10), NFRAMES, "port 10 arrives at va");
	cr_expect_eq(udp_count(b10), NFRAMES, "port 10 arrives at vb");
	cr_expect_eq(udp_count(a9), 0, "port 9 dropped at va");
	cr_expect_eq(udp_count(b9), 0, "port 9 dropped at vb");
	close(a9);
	close(a10);
	close(b9);
	close(b10);

	cr_assert_eq(xtcam_dp_rule_counters(dp, 1, &c), 0);
	cr_assert_eq(c.packets, 2 * NFRAMES, "rule 1 counted %llu frames",
		     (unsigned long long)c.packets);
	cr_assert_geq(c.bytes, 2ull * NFRAMES * (14 + 20 + 8 + 64));
	cr_assert_eq(xtcam_dp_stat(dp, XTCAM_STAT_MISS, &miss), 0);
	cr_assert_geq(miss.packets, 2 * NFRAMES, "port 10 frames took the default");
}

Test(attach, traffic_generic) { traffic(XTCAM_MODE_GENERIC); }
Test(attach, traffic_native)  { traffic(XTCAM_MODE_NATIVE); }

/* libxdp's dispatcher: count_pass through xdp-loader first, then ours
 * joins.  Skips, saying why, where the kernel has no dispatcher or the
 * dispatcher refuses our parser (see user/attach.c). */
static void join_dispatcher(int ifi, struct xtcam_attach_info *info)
{
	struct xtcam_attach_info probe;
	char err[512];
	__u32 before;
	int e;

	cr_assert_eq(xdp_loader_load(XTCAM_MODE_NATIVE), 0, "xdp-loader load");
	if (!dispatcher_on(ifi)) {
		e = do_attach(ns_b, "vb", XTCAM_MODE_NATIVE, false, &probe, err,
			      sizeof(err));
		cr_skip_test("no libxdp dispatcher on this kernel: xdp-loader attached "
			     "count_pass alone; xtcam says: %s", e ? err : probe.note);
	}
	before = attached_id(ifi, XTCAM_MODE_NATIVE);
	e = do_attach(ns_a, "va", XTCAM_MODE_NATIVE, false, info, err, sizeof(err));
	if (e == -EBUSY && strstr(err, "cannot take"))
		cr_skip_test("libxdp's dispatcher works here but refuses this block's "
			     "parser: %s", err);
	cr_assert_eq(e, 0, "join the dispatcher: %s", err);
	cr_assert_eq(info->dispatcher, 1, "note: %s", info->note);
	cr_assert_eq(xtcam_attach_check(info), 1);
	cr_assert_neq(attached_id(ifi, XTCAM_MODE_NATIVE), before,
		      "libxdp made a new dispatcher with both");
}

/* the id of the dispatcher's component called name, 0 if none */
static __u32 component(int ifi, const char *name)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifi);
	struct xdp_program *p = NULL;
	__u32 id = 0;

	if (libxdp_get_error(mp) || !mp)
		return 0;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && !strcmp(xdp_program__name(p), name))
			id = xdp_program__id(p);
	}
	while (!xdp_multiprog__is_legacy(mp) && (p = xdp_multiprog__next_prog(p, mp)))
		if (!strcmp(xdp_program__name(p), name))
			id = xdp_program__id(p);
	xdp_multiprog__close(mp);
	return id;
}

/* Both run; detaching ours leaves theirs. */
Test(attach, dispatcher_both_run)
{
	struct xtcam_attach_info info;
	struct xtcam_counter c;
	char err[512];
	int ifi = ifindex_in(ns_a, "va"), a9, a10;
	__u64 before;
	__u32 cp;

	drop_udp9();
	join_dispatcher(ifi, &info);
	cp = component(ifi, "count_pass");
	cr_assert_neq(cp, 0, "count_pass still in the dispatcher");
	cr_assert_eq(component(ifi, "xtcam_parse_nf"), info.prog_id,
		     "our no-frags parser is the dispatcher's component");
	before = count_pass_hits(cp);
	a9 = udp_rx(ns_a, IP_A, 9);
	a10 = udp_rx(ns_a, IP_A, 10);
	udp_send(ns_b, IP_A, 9, NFRAMES);
	udp_send(ns_b, IP_A, 10, NFRAMES);
	cr_expect_eq(udp_count(a10), NFRAMES);
	cr_expect_eq(udp_count(a9), 0);
	close(a9);
	close(a10);
	cr_assert_eq(xtcam_dp_rule_counters(dp, 1, &c), 0);
	cr_assert_eq(c.packets, NFRAMES);
	/* count_pass sees at least what we pass (run order: prio, then name) */
	cr_assert_geq(count_pass_hits(cp) - before, NFRAMES, "count_pass ran");

	cr_assert_eq(xtcam_detach(&info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xtcam_attach_check(&info), 0);
	cr_assert_neq(component(ifi, "count_pass"), 0, "count_pass stays");
	cr_assert_eq(component(ifi, "xtcam_parse_nf"), 0);
	cr_assert_eq(xtcam_detach(&info, err, sizeof(err)), -ENOENT);
}

/* pins under <bpffs>/xdp that hold program id */
static int pins_of(__u32 id)
{
	char dir[PATH_MAX], path[PATH_MAX * 2];
	struct dirent *de, *fe;
	DIR *d, *sd;
	int n = 0;

	d = opendir("/sys/fs/bpf/xdp");
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "dispatch-", 9))
			continue;
		snprintf(dir, sizeof(dir), "/sys/fs/bpf/xdp/%s", de->d_name);
		sd = opendir(dir);
		while (sd && (fe = readdir(sd))) {
			struct bpf_prog_info pi;
			__u32 len = sizeof(pi);
			int fd;

			if (!strstr(fe->d_name, "-prog"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, fe->d_name);
			fd = bpf_obj_get(path);
			memset(&pi, 0, sizeof(pi));
			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &len) && pi.id == id)
				n++;
			if (fd >= 0)
				close(fd);
		}
		if (sd)
			closedir(sd);
	}
	if (d)
		closedir(d);
	return n;
}

/* remove the pins that hold program id (and their links), for
 * count_pass's stale dispatcher after its device went */
static void drop_pins_of(__u32 id)
{
	char dir[PATH_MAX], path[PATH_MAX * 2];
	struct dirent *de, *fe;
	DIR *d, *sd;

	d = opendir("/sys/fs/bpf/xdp");
	while (d && (de = readdir(d))) {
		bool hit = false;

		if (strncmp(de->d_name, "dispatch-", 9))
			continue;
		snprintf(dir, sizeof(dir), "/sys/fs/bpf/xdp/%s", de->d_name);
		sd = opendir(dir);
		while (sd && (fe = readdir(sd))) {
			struct bpf_prog_info pi;
			__u32 len = sizeof(pi);
			int fd, n;

			if (sscanf(fe->d_name, "prog%d-prog", &n) != 1 ||
			    !strstr(fe->d_name, "-prog"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, fe->d_name);
			fd = bpf_obj_get(path);
			memset(&pi, 0, sizeof(pi));
			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &len) && pi.id == id) {
				unlink(path);
				snprintf(path, sizeof(path), "%s/prog%d-link", dir, n);
				unlink(path);
				hit = true;
			}
			if (fd >= 0)
				close(fd);
		}
		if (sd)
			closedir(sd);
		if (hit)
			rmdir(dir);
	}
	if (d)
		closedir(d);
}

/* The device goes while ours is in its dispatcher: detach says ENOENT and
 * drops our stale libxdp pins (they would keep the block's maps alive). */
Test(attach, dispatcher_device_gone)
{
	struct xtcam_attach_info info;
	char err[512];
	int ifi = ifindex_in(ns_a, "va"), e;
	__u32 cp;

	join_dispatcher(ifi, &info);
	cp = component(ifi, "count_pass");
	cr_assert_eq(pins_of(info.prog_id), 1, "libxdp pinned our component");
	cr_assert_eq(sh("ip -n %s link del va", ns_a), 0);
	drop_pins_of(cp);       /* theirs: the test made it */
	cr_assert_eq(xtcam_attach_check(&info), 0);
	e = xtcam_detach(&info, err, sizeof(err));
	cr_assert_eq(e, -ENOENT, "%d %s", e, err);
	cr_assert(strstr(err, "stale"), "%s", err);
	cr_assert_eq(pins_of(info.prog_id), 0, "our pins are gone");
}

/* --- netns helpers ------------------------------------------------------- */

static unsigned long self_ino(void)
{
	struct xtcam_net id;

	cr_assert_eq(xtcam_ns_open(NULL, NULL, &id, NULL, 0), 0);
	return (unsigned long)id.ino;
}

Test(attach, netns_enter_leave)
{
	unsigned long here = self_ino(), there;
	struct xtcam_net b;
	char err[256];
	int saved, e;

	cr_assert_eq(xtcam_ns_open(ns_b, NULL, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(here, (unsigned long)b.ino);
	e = xtcam_ns_enter_name(ns_b, &saved, err, sizeof(err));
	cr_assert_eq(e, 0, "%s", err);
	there = self_ino();
	cr_assert_eq(there, (unsigned long)b.ino);
	cr_assert_gt(if_nametoindex("vb"), 0, "vb is visible in %s", ns_b);
	xtcam_ns_leave(saved);
	cr_assert_eq(self_ino(), here);

	e = xtcam_ns_enter_name("", &saved, err, sizeof(err));
	cr_assert_eq(e, 0);
	cr_assert_eq(saved, -1);
	xtcam_ns_leave(saved);
	e = xtcam_ns_enter_name(PREFIX "no-such-ns", &saved, err, sizeof(err));
	cr_assert_eq(e, -ENOENT);
	cr_assert(strstr(err, "no-such-ns") && strstr(err, "no such namespace"), "%s", err);
	cr_assert_eq(xtcam_ns_enter_name("../etc", &saved, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "not a namespace name"), "%s", err);
	cr_assert_eq(self_ino(), here, "failed enters stay put");
}
