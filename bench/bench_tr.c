// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Per-packet cost through BPF_PROG_TEST_RUN: xtcam's parser + classifier
 * at several rule counts and mask counts, beside two floors (XDP_DROP, and
 * the parser alone) and xdp-filter's program, all measured in one run over
 * the same mix of distinct frames.
 *
 * Method: every frame of the mix is run with repeat R (the kernel reports
 * the mean time per run); the cost of one pass is the mean over the mix;
 * a figure is the median of P passes.
 *
 * Time: a test run with repeat > 1 adds the program to the kernel's XDP
 * dispatcher and removes it afterwards, and each change waits for an RCU
 * grace period: a fixed cost per call, outside the timed loop, of tens of
 * milliseconds on some hosts.  A program attached to a device stays in the
 * dispatcher, so bench_tr runs in a network namespace of its own and
 * attaches the program it measures to that namespace's lo (generic XDP,
 * no traffic) while it measures it; the kernel's figure is the same either
 * way (the runs go through the dispatcher in both cases).  The cost of a
 * call is then measured, and the plan (frames per mix, passes) sized so
 * that the run fits its time budget whatever that cost is.  A run that
 * still runs out of time stops before the next row and says so in the
 * table; killed (SIGTERM, SIGINT), it adds the same note to what it wrote.
 *
 * Usage: bench_tr [-q] [-s] [-o FILE.md] [-b BUILD_DIR] [-n RULES -m MASKS] [-c N]
 *                 [-t SECS] [-f FRAMES] [-p PASSES]
 * -c N: only the ClassBench-style ACL rows, with N rules.
 * -s: the mask-scaling sweep (1, 8, 32, 128, 512 masks at 10k rules, and
 * 100k without -q) instead of the rule-count sweep.
 * -t SECS: the time budget (default: $BENCH_SECS, else none).
 * -f FRAMES, -p PASSES: at most FRAMES distinct frames a mix, PASSES passes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <linux/if_link.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "xtcam/dp.h"
#include "tlib.h"
#include "classbench.h"

#define NPKT   1000
#define MIXN   (NPKT / 4)	/* at most this many frames in each of the four mixes */
#define REPEAT 1000
#define PASSES 5
/* a guess of the mean cost of one run, for the plan only */
#define RUN_NS_GUESS 100.0

static int mixn = MIXN;		/* frames a mix: the plan sizes it */

struct frame {
	uint8_t buf[128];
	uint32_t len;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* --- time ----------------------------------------------------------------- */

static double t_start, budget;	/* budget 0: none */
static double budget_given;	/* -t SECS, for the note */
static int stopped;		/* out of time: no further row runs */
static int md_fd = -1;		/* the output's descriptor, for the signal note */
static int hold_ifindex;	/* lo of our own namespace; 0: not holding */

/* the note a part killed by its bound leaves (written by the signal handler) */
static const char sig_note[] = "\n**Stopped early:** killed at its time bound; the rows above are "
	"complete, the rest of the plan was not measured.\n";

static double elapsed(void)
{
	return now() - t_start;
}

/* true once the budget is spent (with its margin): measure() gives up */
static bool past_deadline(void)
{
	return budget > 0 && elapsed() > budget;
}

/*
 * Keep prog_fd in the kernel's XDP dispatcher while it is measured: attach
 * it to lo of bench_tr's own namespace (generic XDP).  Without that, every
 * test run with repeat > 1 adds it there and removes it again, two waits
 * for an RCU grace period.  Failing, every call pays that; the plan has
 * measured it.
 */
static void hold(int prog_fd)
{
	if (!hold_ifindex)
		return;
	if (bpf_xdp_attach(hold_ifindex, prog_fd, XDP_FLAGS_SKB_MODE, NULL)) {
		fprintf(stderr, "bench_tr: cannot attach to lo (%s): every test run pays the "
			"dispatcher update\n", strerror(errno));
		hold_ifindex = 0;
	}
}

/* drop the program held (before its data path is freed) */
static void unhold(void)
{
	if (hold_ifindex)
		bpf_xdp_detach(hold_ifindex, XDP_FLAGS_SKB_MODE, NULL);
}

/* median over passes of the mean ns per frame over the mix; -ETIME when
 * the budget ran out on the way */
static double measure(int prog_fd, const struct frame *f, int n, int repeat, int passes)
{
	double v[16];
	int p, i;

	hold(prog_fd);
	for (p = 0; p < passes; p++) {
		double sum = 0;

		for (i = 0; i < n; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f[i].buf,
				    .data_size_in = f[i].len, .repeat = repeat);

			if (past_deadline())
				return -ETIME;
			if (bpf_prog_test_run_opts(prog_fd, &o)) {
				fprintf(stderr, "test run: %s\n", strerror(errno));
				return -1;
			}
			sum += o.duration;
		}
		v[p] = sum / n;
	}
	qsort(v, passes, sizeof(v[0]), cmp_d);
	return v[passes / 2];
}

/* the mask families: (src plen, dst plen, proto, dport, sport) */
struct maskdef {
	int splen, dplen, proto, dport, sport;
};

static void mask_of(int i, int m, struct maskdef *d)
{
	static const int sp[] = { 32, 24, 16, 8, 0 };
	static const int dpl[] = { 32, 24, 16, 8 };

	if (m == 1) {
		*d = (struct maskdef){ 32, 32, 1, 1, 1 };
		return;
	}
	i %= m;
	if (m > 32) {
		/* the scaling sweep: m distinct (src, dst) prefix-length pairs */
		d->splen = 32 - i % 32;
		d->dplen = 32 - (i / 32) % 16;
		d->proto = 1;
		d->dport = 1;
		d->sport = 0;
		return;
	}
	d->splen = sp[i % 5];
	d->dplen = dpl[(i / 5) % 4];
	d->proto = 1;
	d->dport = (i / 20) % 2 == 0;
	d->sport = i >= 40;
	if (m <= 8) {
		/* eight: four prefix pairs, with and without a port */
		d->splen = sp[i % 4];
		d->dplen = 32;
		d->dport = i < 4;
		d->sport = 0;
	}
}

/* rule i of a set with m masks: shape i % m; the odd shapes are IPv6 (the
 * same prefix lengths times four), so a set with m > 1 masks matches both
 * families */
static bool rule_v6(int i, int m)
{
	return m > 1 && (i % m) % 2 == 1;
}

static void gen_rule(struct t_rng *g, int i, int m, struct xtcam_rule *r)
{
	struct maskdef d;

	mask_of(i, m, &d);
	t_rule(r, 1 + (uint32_t)(i % 1000), (uint32_t)i + 1);
	r->action.type = XTCAM_ACT_DROP;
	if (rule_v6(i, m)) {
		uint8_t a[16];
		int k;

		for (k = 0; k < 16; k++)
			a[k] = (uint8_t)t_rand(g);
		a[0] = 0xfd;
		a[1] = 0x0a;
		if (d.splen)
			t_match_ip6(r, true, a, d.splen * 4);
		for (k = 0; k < 16; k++)
			a[k] = (uint8_t)t_rand(g);
		a[0] = 0xfd;
		a[1] = 0xac;
		t_match_ip6(r, false, a, d.dplen * 4);
	} else {
		t_match_ethtype(r, 0x0800);
		if (d.splen)
			t_match_ip4(r, true, 0x0a000000u | (uint32_t)(t_rand(g) & 0x00ffffff), d.splen);
		t_match_ip4(r, false, 0xac100000u | (uint32_t)(t_rand(g) & 0x000fffff), d.dplen);
	}
	if (d.proto)
		t_match_proto(r, IPPROTO_UDP);
	if (d.dport) {
		r->dport_lo = r->dport_hi = (uint16_t)(1 + t_below(g, 65535));
		r->keywords |= XTCAM_KW_BIT(XTCAM_KW_DST_PORT);
	}
	if (d.sport) {
		r->sport_lo = r->sport_hi = (uint16_t)(1 + t_below(g, 65535));
		r->keywords |= XTCAM_KW_BIT(XTCAM_KW_SRC_PORT);
	}
}

/* a plain UDP frame, IPv4 or IPv6 (random addresses outside every rule's
 * prefixes: 192.168/16 -> 192.169/16, 2001:db8::/32); hits take the rule's
 * values */
static void frame_for(struct t_rng *g, const struct xtcam_rule *r, bool v6, struct frame *f)
{
	struct pkt_spec s;
	struct pkt p;
	uint32_t a;
	int i;

	pkt_spec_init(&s);
	s.payload = 18;
	if (v6) {
		s.eth_type = 0x86dd;
		for (i = 0; i < 16; i++) {
			s.saddr[i] = (uint8_t)t_rand(g);
			s.daddr[i] = (uint8_t)t_rand(g);
		}
		s.saddr[0] = s.daddr[0] = 0x20;
		s.saddr[1] = s.daddr[1] = 0x01;
		s.saddr[2] = s.daddr[2] = 0x0d;
		s.saddr[3] = s.daddr[3] = 0xb8;
	} else {
		a = htonl(0xc0a80000u | (uint32_t)(t_rand(g) & 0xffff));
		memcpy(s.saddr, &a, 4);
		a = htonl(0xc0a90000u | (uint32_t)(t_rand(g) & 0xffff));
		memcpy(s.daddr, &a, 4);
	}
	s.sport = (uint16_t)t_rand(g);
	s.dport = (uint16_t)t_rand(g);
	if (r) {
		int n = v6 ? 16 : 4;

		for (i = 0; i < n; i++) {
			uint8_t *vs = (uint8_t *)r->value.src_ip, *ms = (uint8_t *)r->mask.src_ip;
			uint8_t *vd = (uint8_t *)r->value.dst_ip, *md = (uint8_t *)r->mask.dst_ip;

			s.saddr[i] = (uint8_t)((s.saddr[i] & ~ms[i]) | vs[i]);
			s.daddr[i] = (uint8_t)((s.daddr[i] & ~md[i]) | vd[i]);
		}
		if (r->dport_lo == r->dport_hi)
			s.dport = r->dport_lo;
		if (r->sport_lo == r->sport_hi)
			s.sport = r->sport_lo;
	}
	pkt_build(&s, NULL, &p);
	memcpy(f->buf, p.buf, (size_t)p.len);
	f->len = (uint32_t)p.len;
}

/* the four mixes of a rule set, MIXN frames each: hit v4, miss v4, hit v6,
 * miss v6; hits come from random rules of the family (none: left empty) */
enum { HIT4, MISS4, HIT6, MISS6, NMIX };
static const char *const mix_name[NMIX] = { "hit v4", "miss v4", "hit v6", "miss v6" };

static void build_mixes(struct t_rng *g, const struct xtcam_rule *rules, int n, int m,
			struct frame *mix[NMIX], int cnt[NMIX])
{
	int fam, i;

	for (fam = 0; fam < 2; fam++) {
		bool v6 = fam == 1;
		int hit = v6 ? HIT6 : HIT4, miss = v6 ? MISS6 : MISS4, have = 0;

		for (i = 0; i < n && !have; i++)
			have = rule_v6(i, m) == v6;
		cnt[hit] = have ? mixn : 0;
		cnt[miss] = mixn;
		for (i = 0; i < mixn; i++) {
			frame_for(g, NULL, v6, &mix[miss][i]);
			if (have) {
				const struct xtcam_rule *r;

				do
					r = &rules[t_below(g, (uint32_t)n)];
				while (rule_v6((int)(r - rules), m) != v6);
				frame_for(g, r, v6, &mix[hit][i]);
			}
		}
	}
}

/* one table row: the mean over the mixes measured, then each */
static double row_measure(int fd, struct frame *mix[NMIX], const int cnt[NMIX], int repeat,
			  int passes, double v[NMIX])
{
	double sum = 0;
	int k, n = 0;

	for (k = 0; k < NMIX; k++) {
		v[k] = -1;
		if (!cnt[k])
			continue;
		v[k] = measure(fd, mix[k], cnt[k], repeat, passes);
		if (v[k] < 0)
			return v[k];
		sum += v[k];
		n++;
	}
	return n ? sum / n : -1;
}

static void fmt_mixes(FILE *md, const double v[NMIX])
{
	int k;

	for (k = 0; k < NMIX; k++) {
		if (v[k] >= 0)
			fprintf(md, " %.1f |", v[k]);
		else
			fprintf(md, " - |");
	}
}

static int load_prog(const char *path, const char *name, struct bpf_object **objp)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;

	if (!obj)
		return -errno;
	if (bpf_object__load(obj)) {
		bpf_object__close(obj);
		return -errno;
	}
	prog = bpf_object__find_program_by_name(obj, name);
	*objp = obj;
	return prog ? bpf_program__fd(prog) : -ENOENT;
}

/* --- xdp-filter --------------------------------------------------------- */

static char XF_NS[64];	/* xtcam-bench-xf-PID: runs of others do not collide */
static volatile sig_atomic_t xf_made;	/* XF_NS may exist */

/* killed (make bench's bounds, ^C): remove xdp-filter's namespace, with
 * async-signal-safe calls only */
static void on_signal(int sig)
{
	static char *const envp[] = { NULL };
	pid_t pid = xf_made ? fork() : -1;

	if (pid == 0) {
		char *const args[] = { "ip", "netns", "del", XF_NS, NULL };

		execve("/sbin/ip", args, envp);
		_exit(127);
	} else if (pid > 0) {
		waitpid(pid, NULL, 0);
	}
	if (md_fd >= 0 && write(md_fd, sig_note, sizeof(sig_note) - 1) < 0) {
		/* nowhere to say it */
	}
	_exit(128 + sig);
}

static void xf_cleanup(void)
{
	char cmd[160];

	if (!XF_NS[0])
		snprintf(XF_NS, sizeof(XF_NS), "xtcam-bench-xf-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null", XF_NS);
	if (system(cmd)) {
		/* nothing to clean */
	}
	xf_made = 0;
}

/* xdp-filter with nports exact destination ports; returns its prog fd */
static int xf_setup(int nports, const uint16_t *ports)
{
	int fd, mfd, ncpu = libbpf_num_possible_cpus(), i;
	__u32 id;
	__u64 *vals, tmpl[64];
	__u32 *keys, one = htons(1), count;
	char cmd[1024];

	xf_cleanup();
	snprintf(cmd, sizeof(cmd),
		 "ip netns add %1$s && ip -n %1$s link add xf0 type veth peer name xf1 && "
		 "ip -n %1$s link set xf0 up && ip -n %1$s link set xf1 up && "
		 "ip netns exec %1$s sh -c 'mount -t bpf bpf /sys/fs/bpf; "
		 "xdp-filter load xf0 -m native -f udp,ipv4,ipv6 && xdp-filter port 1' >/dev/null 2>&1",
		 XF_NS);
	xf_made = 1;
	if (system(cmd))
		return -EIO;
	if (t_xdp_prog_in(XF_NS, "xf0", &id))
		return -ENOENT;
	fd = bpf_prog_get_fd_by_id(id);
	mfd = t_prog_map(id, "filter_ports");
	if (fd < 0 || mfd < 0 || ncpu > 64)
		return -ENOENT;
	/* the value the CLI wrote for port 1, for every port */
	if (bpf_map_lookup_elem(mfd, &one, tmpl))
		return -errno;
	keys = calloc((size_t)nports, sizeof(*keys));
	vals = calloc((size_t)nports * (size_t)ncpu, sizeof(*vals));
	if (!keys || !vals)
		return -ENOMEM;
	for (i = 0; i < nports; i++) {
		keys[i] = htons(ports[i]);
		memcpy(vals + (size_t)i * ncpu, tmpl, sizeof(__u64) * (size_t)ncpu);
	}
	count = (__u32)nports;
	if (bpf_map_update_batch(mfd, keys, vals, &count, NULL))
		fd = -errno;
	free(keys);
	free(vals);
	close(mfd);
	return fd;
}

/* ------------------------------------------------------------------------ */

static void frame_of(const struct pkt_spec *s, struct frame *f)
{
	struct pkt p;

	pkt_build(s, NULL, &p);
	memcpy(f->buf, p.buf, (size_t)p.len);
	f->len = (uint32_t)p.len;
}

/*
 * ClassBench-style ACLs (tests/lib/classbench.c): per family, the mix is
 * half frames built from random rules, half frames from the same address
 * clusters; xdp-filter's program runs over the same frames.
 */
static int cb_rows(FILE *md, int n, int family, int xf_fd, int floor_fd,
		   int repeat, int passes)
{
	struct cb_params prm = { .nrules = (uint32_t)n, .family = family, .pass_pct = 20 };
	struct xtcam_block_spec spec = { .dflt = { .type = XTCAM_ACT_PASS } };
	const int npkt = 4 * mixn;	/* as many frames as the four mixes of a row */
	struct frame *fr = calloc((size_t)npkt, sizeof(*fr));
	struct t_rng g = { 99u + (uint64_t)n + (uint64_t)family };
	struct xtcam_dp_op *ops = NULL;
	struct xtcam_dp_info info;
	struct xtcam_dp *dp = NULL;
	size_t masks, entries, i;
	double t0, t1, ns, xf = -1, floor_drop;
	struct cb_set cs;
	char e[256];
	int err;

	if (!fr)
		return -ENOMEM;
	err = cb_generate(&cs, &prm, 0xc1a55 + (uint64_t)family);
	if (err)
		goto out;
	err = cb_masks(&cs, &masks, &entries);
	if (err)
		goto out;
	spec.capacity = (__u32)(entries + 1024);
	ops = calloc(cs.n, sizeof(*ops));
	if (!ops) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < cs.n; i++)
		ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &cs.rules[i],
					      .act = { .type = cs.rules[i].action.type } };
	err = xtcam_dp_create(&spec, XTCAM_DP_NOTIME, &dp);
	if (err)
		goto out;
	t0 = now();
	err = xtcam_dp_apply(dp, ops, cs.n, e, sizeof(e));
	t1 = now();
	if (err) {
		fprintf(stderr, "apply %d ACL rules: %s (%s)\n", n, strerror(-err), e);
		goto out;
	}
	xtcam_dp_info(dp, &info, true);
	for (i = 0; i < (size_t)npkt; i++) {
		struct pkt_spec ps;

		cb_packet(&g, &cs, i % 2 ? NULL : &cs.rules[t_below(&g, (uint32_t)cs.n)], &ps);
		ps.payload = 18;
		frame_of(&ps, &fr[i]);
	}
	/* the floor and xdp-filter on the same frames, right after: on a
	 * shared machine the ratios of one moment are what compares */
	ns = measure(xtcam_dp_parse_fd(dp), fr, npkt, repeat, passes);
	floor_drop = ns < 0 ? ns : measure(floor_fd, fr, npkt, repeat, passes);
	if (xf_fd >= 0 && floor_drop >= 0)
		xf = measure(xf_fd, fr, npkt, repeat, passes);
	if (ns < 0 || floor_drop < 0 || xf == -ETIME) {
		err = ns < 0 ? (int)ns : floor_drop < 0 ? (int)floor_drop : -ETIME;
		goto out;
	}
	fprintf(md, "| %s | %d | %u | %zu | %u | %u | %.1f | %.2f | ", family == 6 ? "IPv6" : "IPv4",
		n, info.nentries, masks, info.ntuples, info.max_chain, ns, ns / floor_drop);
	if (xf > 0)
		fprintf(md, "%.1f | %.2f | %.2f |\n", xf, ns / xf, t1 - t0);
	else
		fprintf(md, "- | - | %.2f |\n", t1 - t0);
	fflush(md);
out:
	unhold();
	xtcam_dp_free(dp);
	cb_free(&cs);
	free(ops);
	free(fr);
	return err;
}

static void row_head(FILE *md)
{
	int k;

	fprintf(md, "| program | rules | masks | tuples | ns/pkt | x floor |");
	for (k = 0; k < NMIX; k++)
		fprintf(md, " %s |", mix_name[k]);
	fprintf(md, " load s | floor ns | xdp-filter ns | x xdp-filter |\n"
		"|---|---:|---:|---:|---:|---:|");
	for (k = 0; k < NMIX; k++)
		fprintf(md, "---:|");
	fprintf(md, "---:|---:|---:|---:|\n");
}

static struct frame *mixbuf[NMIX];

/* wall seconds one test run of repeat R costs beyond its runs (the mean of
 * n calls): the fixed cost of a call, which the plan has to pay n times */
static double call_cost(int fd, const struct frame *f, int repeat, int n)
{
	double t0 = now(), runs = 0;
	int i;

	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->buf, .data_size_in = f->len,
			    .repeat = repeat);

		if (bpf_prog_test_run_opts(fd, &o))
			return -1;
		runs += o.duration * 1e-9 * repeat;
	}
	return (now() - t0 - runs) / n;
}

/* the note a run that runs out of time leaves below the rows it has */
static void out_of_time(FILE *md, const char *what)
{
	if (stopped)
		return;
	stopped = 1;
	fprintf(md, "\n**Stopped early:** the time budget (%.0f s) ran out before %s, after "
		"%.0f s; the rows above are complete, the rest of the plan was not measured.\n",
		budget_given, what, elapsed());
	fflush(md);
	fprintf(stderr, "bench_tr: out of time before %s\n", what);
}

/* true when a step of est seconds would not end within the budget */
static bool no_time_for(double est)
{
	return stopped || (budget > 0 && elapsed() + est > budget);
}

/* a private network namespace whose lo holds the program measured; on
 * failure nothing is held and every call pays the dispatcher update */
static void hold_setup(void)
{
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "bench_tr: no namespace of its own (%s): every test run pays the "
			"dispatcher update\n", strerror(errno));
		return;
	}
	hold_ifindex = (int)if_nametoindex("lo");
}

int main(int argc, char **argv)
{
	static const int counts_full[] = { 1, 1000, 10000, 100000, 1000000 };
	static const int masks_std[] = { 1, 8, 32 };
	static const int masks_scale[] = { 1, 8, 32, 128, 512 };
	static const int counts_scale[] = { 10000, 100000 };
	/* -q: a few rows, each data path costs a verifier run of seconds */
	static const int quick_n[] = { 1000, 100000 }, quick_m[] = { 1, 8 };
	static const int quick_scale_n[] = { 10000, 10000, 10000 }, quick_scale_m[] = { 1, 32, 512 };
	static const int xf_full[] = { 1, 1000, 10000 }, xf_quick[] = { 1000 };
	const int *masks = masks_std, *counts = counts_full, *xfn;
	int nm = 3, scale = 0, nxf, ncb, nfam;
	const char *out = NULL, *build = "build", *env;
	int quick = 0, c, ci, mi, nc = 5, err, repeat = REPEAT, passes = PASSES, only_n = 0, only_m = 0, k;
	int cnt[NMIX], only_cb = 0, xf_fd = -1, max_frames = MIXN, max_passes = 0, units, rows = 0;
	int row_n[32], row_m[32], ri;
	struct bpf_object *o1 = NULL, *o2 = NULL;
	char path[512], what[128], budget_txt[64];
	double floor_drop, floor_parse, v[NMIX], fv[NMIX], secs = 0, cost_free, cost_held;
	/* the plan's guesses of a data path's creation (verifier) and of
	 * making and applying a rule, replaced by what the run sees */
	double call_s, create_s = 5, per_rule_s = 20e-6;
	int floor_fd;
	FILE *md = stdout;
	struct utsname un;
	time_t tnow = time(NULL);
	char date[64];

	t_start = now();
	if ((env = getenv("BENCH_SECS")) && *env)
		secs = atof(env);
	while ((c = getopt(argc, argv, "qso:b:n:m:c:t:f:p:")) != -1) {
		switch (c) {
		case 'q': quick = 1; break;
		case 's': scale = 1; break;
		case 'o': out = optarg; break;
		case 'b': build = optarg; break;
		case 'n': only_n = atoi(optarg); break;
		case 'm': only_m = atoi(optarg); break;
		case 'c': only_cb = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'f': max_frames = atoi(optarg); break;
		case 'p': max_passes = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-q] [-s] [-o FILE.md] [-b BUILD] [-n RULES -m MASKS] "
				"[-c ACL_RULES] [-t SECS] [-f FRAMES] [-p PASSES]\n", argv[0]);
			return 2;
		}
	}
	if (secs < 0 || max_frames < 1 || max_frames > MIXN || max_passes < 0 || max_passes > 15) {
		fprintf(stderr, "bench_tr: -t wants seconds, -f 1 to %d frames, -p 1 to 15 passes\n",
			MIXN);
		return 2;
	}
	/* a margin for the work after the last row and for a slow exit */
	budget_given = secs;
	if (secs > 0)
		budget = secs > 20 ? secs * 0.95 - 1 : secs * 0.8;
	if (quick)
		passes = 3;
	if (max_passes)
		passes = max_passes;
	mixn = max_frames;
	xfn = quick ? xf_quick : xf_full;
	nxf = quick ? 1 : 3;
	if (scale) {
		counts = counts_scale;
		nc = 2;
		masks = masks_scale;
		nm = 5;
		nxf = 0;
	}
	/* the xtcam rows: (rules, masks) */
	if (quick && !only_n && !only_m && !only_cb) {
		for (ri = 0; ri < 2 + !!scale; ri++) {
			row_n[ri] = scale ? quick_scale_n[ri] : quick_n[ri];
			row_m[ri] = scale ? quick_scale_m[ri] : quick_m[ri];
		}
		rows = ri;
	}
	for (ci = 0; ci < nc && !only_cb && !(quick && rows); ci++)
		for (mi = 0; mi < nm; mi++) {
			if ((only_n && counts[ci] != only_n) || (only_m && masks[mi] != only_m))
				continue;
			if (counts[ci] == 1 && mi > 0)
				continue;	/* one rule has one mask */
			row_n[rows] = counts[ci];
			row_m[rows++] = masks[mi];
		}
	/* the ACL rows: 10k, 100k; -q: 10k, IPv4 only */
	ncb = scale ? 0 : (only_cb || quick) ? 1 : 2;
	nfam = quick && !only_cb ? 1 : 2;
	for (k = 0; k < NMIX; k++)
		if (!(mixbuf[k] = calloc(MIXN, sizeof(struct frame))))
			return 1;
	if (out && !(md = fopen(out, "w"))) {
		perror(out);
		return 1;
	}
	md_fd = fileno(md);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	t_pin_cpu(1);
	uname(&un);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&tnow));

	{
		/* the floors run on the miss mixes, v4 and v6 */
		struct t_rng g = { 42 };

		build_mixes(&g, NULL, 0, 1, mixbuf, cnt);
	}
	snprintf(path, sizeof(path), "%s/bench/floor_drop.bpf.o", build);
	err = floor_fd = load_prog(path, "floor_drop", &o1);
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return 1;
	}

	/*
	 * The plan.  What a test-run call costs beyond its runs, free (the
	 * program enters and leaves the dispatcher) and held; then frames a
	 * mix and passes such that the measuring, at that cost, takes at most
	 * half the budget (the rest: rule sets, xdp-filter, the unforeseen).
	 */
	cost_free = call_cost(floor_fd, &mixbuf[MISS4][0], repeat, 3);
	hold_setup();
	hold(floor_fd);
	cost_held = hold_ifindex ? call_cost(floor_fd, &mixbuf[MISS4][0], repeat, 20) : cost_free;
	if (cost_free < 0 || cost_held < 0) {
		fprintf(stderr, "test run: %s\n", strerror(errno));
		return 1;
	}
	call_s = cost_held + repeat * RUN_NS_GUESS * 1e-9;
	/* in mixes: the floors (two each), xdp-filter's rows, each xtcam row
	 * with its floor and xdp-filter, three programs on each ACL */
	units = 2 * 2 + (only_cb ? 1 : nxf) * NMIX + rows * NMIX * (nxf ? 3 : 2) + ncb * nfam * 3 * NMIX;
	while (budget > 0 && units * mixn * passes * call_s > budget / 2) {
		if (passes > 3)
			passes = 3;
		else if (mixn > 64)
			mixn /= 2;
		else if (passes > 1)
			passes = 1;
		else if (mixn > 4)
			mixn /= 2;
		else
			break;
	}
	fprintf(stderr, "bench_tr: a test run costs %.2f ms beyond its runs (held in the "
		"dispatcher: %s%.3f ms); plan: %d frames a mix, %d pass(es), measuring about %.0f s%s\n",
		cost_free * 1e3, hold_ifindex ? "" : "not held, ", cost_held * 1e3, mixn, passes,
		units * mixn * passes * call_s, budget > 0 ? "" : " (no time budget)");
	{
		/* the floors' mixes again, at the planned size */
		struct t_rng g = { 42 };

		build_mixes(&g, NULL, 0, 1, mixbuf, cnt);
	}

	if (budget > 0)
		snprintf(budget_txt, sizeof(budget_txt), "a time budget of %.0f s", budget_given);
	else
		snprintf(budget_txt, sizeof(budget_txt), "no time budget");
	fprintf(md, "# %s, BPF_PROG_TEST_RUN\n\n", scale ? "Cost against the number of masks" :
		"Per-packet cost");
	{
		double la[3] = { 0 };

		getloadavg(la, 3);
		fprintf(md, "Machine: kernel %s, %ld CPUs (shared with other work: load average %.2f "
			"%.2f %.2f at the start); date %s.\n", un.release,
			sysconf(_SC_NPROCESSORS_ONLN), la[0], la[1], la[2], date);
	}
	fprintf(md, "Method: four mixes of %d distinct UDP frames each (hits on IPv4 rules, IPv4 "
		"misses, hits on IPv6 rules, IPv6 misses), %d in all; every frame run with repeat %d, the mean "
		"over a mix, median of %d passes; ns/pkt is the mean of the mixes measured (a set "
		"with one mask has IPv4 rules only).  Rule sets: masks are shapes of (source "
		"prefix, destination prefix, destination port, source port); odd shapes are IPv6.  "
		"The first rows (floors, xdp-filter with 1, 1k, 10k ports) run on the miss mixes "
		"at the start.  The machine is shared and its speed drifts, so every xtcam row "
		"is followed by the XDP_DROP floor and xdp-filter (1000 ports) on that row's own "
		"frames (for xdp-filter all of them misses): its x floor and x xdp-filter are "
		"ratios of one moment, and the floor ns column shows the drift.  A test-run call "
		"cost %.2f ms beyond its runs (%.3f ms with the program held in the XDP "
		"dispatcher%s); frames and passes are sized to %s.  "
		"Command: `bench_tr%s%s`.\n\n",
		mixn, 4 * mixn, repeat, passes, cost_free * 1e3, cost_held * 1e3,
		hold_ifindex ? ", as measured here" : "; not held here",
		budget_txt, quick ? " -q" : "", scale ? " -s" : "");
	row_head(md);
	floor_drop = row_measure(floor_fd, mixbuf, cnt, repeat, passes, v);
	if (floor_drop < 0) {
		if (floor_drop != -ETIME)
			return 1;
		out_of_time(md, "the XDP_DROP floor");
		goto done;
	}
	fprintf(md, "| XDP_DROP (floor) | - | - | - | %.1f | 1.00 |", floor_drop);
	fmt_mixes(md, v);
	fprintf(md, " - | - | - | - |\n");
	fflush(md);
	snprintf(path, sizeof(path), "%s/bench/floor_parse.bpf.o", build);
	err = load_prog(path, "floor_parse", &o2);
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return 1;
	}
	floor_parse = row_measure(err, mixbuf, cnt, repeat, passes, v);
	if (floor_parse < 0) {
		if (floor_parse != -ETIME)
			return 1;
		out_of_time(md, "the parser floor");
		goto done;
	}
	fprintf(md, "| parser only, drop | - | - | - | %.1f | %.2f |", floor_parse,
		floor_parse / floor_drop);
	fmt_mixes(md, v);
	fprintf(md, " - | - | - | - |\n");
	fflush(md);

	/* xdp-filter: N exact destination ports; hits carry one of them */
	for (ci = 0; ci < nxf && !stopped; ci++) {
		int n = xfn[ci], i, fd;
		struct t_rng g = { 7 };
		uint16_t *ports;
		double mean;

		if (only_cb && n != 1000)
			continue;
		snprintf(what, sizeof(what), "xdp-filter with %d ports", n);
		/* its setup (namespace, veth, CLI) takes about two seconds */
		if (no_time_for(2 + NMIX * mixn * passes * call_s)) {
			out_of_time(md, what);
			break;
		}
		ports = calloc((size_t)n, sizeof(*ports));
		if (!ports)
			return 1;
		for (i = 0; i < n; i++)
			ports[i] = (uint16_t)(1 + t_below(&g, 65535));
		build_mixes(&g, NULL, 0, 2, mixbuf, cnt);
		for (k = 0; k < NMIX; k += 2) {
			cnt[k] = mixn;
			for (i = 0; i < mixn; i++) {
				uint16_t p = htons(ports[t_below(&g, (uint32_t)n)]);
				int l4 = 14 + (k == HIT6 ? 40 : 20);

				memcpy(&mixbuf[k][i], &mixbuf[k + 1][i], sizeof(struct frame));
				memcpy(mixbuf[k][i].buf + l4 + 2, &p, 2);
			}
		}
		fd = xf_setup(n, ports);
		if (fd >= 0) {
			mean = row_measure(fd, mixbuf, cnt, repeat, passes, v);
			if (mean == -ETIME) {
				out_of_time(md, what);
				close(fd);
			} else {
				if (n == 1000 && xf_fd < 0)
					xf_fd = fd;	/* kept for the ACL rows */
				else
					close(fd);
				fprintf(md, "| xdp-filter (dst ports) | %d | 1 | - | %.1f | %.2f |", n,
					mean, mean / floor_drop);
				fmt_mixes(md, v);
				fprintf(md, " - | - | - | - |\n");
			}
		} else {
			fprintf(md, "| xdp-filter | %d | (could not load: %s) | | | | | | | | |\n", n,
				strerror(-fd));
		}
		unhold();
		xf_cleanup();
		free(ports);
		fflush(md);
	}

	for (ri = 0; ri < rows && !stopped; ri++) {
		{
			int n = row_n[ri], m = row_m[ri], i;
			struct xtcam_block_spec spec = { .capacity = (__u32)(n < 1024 ? 1024 : n) };
			struct xtcam_rule *rules;
			struct xtcam_dp_op *ops;
			struct t_rng g = { 1000u + (uint64_t)n * 7 + (uint64_t)m };
			struct xtcam_dp_info info;
			struct xtcam_dp *dp;
			double t0, t1, tc, ts, ns, fl, xf;
			char e[256];

			snprintf(what, sizeof(what), "xtcam with %d rules and %d mask(s)", n, m);
			if (no_time_for(create_s + n * per_rule_s +
					NMIX * (nxf ? 3 : 2) * mixn * passes * call_s)) {
				out_of_time(md, what);
				break;
			}
			ts = now();
			rules = calloc((size_t)n, sizeof(*rules));
			ops = calloc((size_t)n, sizeof(*ops));
			if (!rules || !ops)
				return 1;
			for (i = 0; i < n; i++) {
				gen_rule(&g, i, m, &rules[i]);
				ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &rules[i],
							      .act = { .type = XTCAM_ACT_DROP } };
			}
			tc = now();
			err = xtcam_dp_create(&spec, XTCAM_DP_NOTIME, &dp);
			if (err) {
				fprintf(stderr, "create: %s\n", strerror(-err));
				return 1;
			}
			t0 = now();
			err = xtcam_dp_apply(dp, ops, (size_t)n, e, sizeof(e));
			t1 = now();
			/* what a row costs before its measuring, learnt as the
			 * run goes (the first rule sets are the small ones) */
			create_s = t0 - tc;
			if (n >= 1000)
				per_rule_s = (t1 - ts - create_s) / n;
			if (err) {
				fprintf(md, "| xtcam | %d | %d | - | (refused: %s, %s) | | | | | | |\n", n, m,
					strerrorname_np(-err) ?: "?", e);
			} else {
				xtcam_dp_info(dp, &info, false);
				build_mixes(&g, rules, n, m, mixbuf, cnt);
				ns = row_measure(xtcam_dp_parse_fd(dp), mixbuf, cnt, repeat, passes, v);
				/* the floor and xdp-filter again, on this row's
				 * frames, right after it: ratios of one moment */
				fl = ns < 0 ? ns : row_measure(floor_fd, mixbuf, cnt, repeat, passes, fv);
				xf = fl < 0 ? fl : xf_fd >= 0 ?
					row_measure(xf_fd, mixbuf, cnt, repeat, passes, fv) : -1;
				if (ns == -ETIME || fl == -ETIME || xf == -ETIME) {
					out_of_time(md, what);
				} else {
					fprintf(stderr, "bench_tr: %s: %.1f s\n", what, now() - ts);
					fprintf(md, "| xtcam | %d | %d | %u | %.1f | %.2f |", n, n < m ? n : m,
						info.ntuples, ns, fl > 0 ? ns / fl : -1);
					fmt_mixes(md, v);
					fprintf(md, " %.2f | %.1f |", t1 - t0, fl);
					if (xf > 0)
						fprintf(md, " %.1f | %.2f |\n", xf, ns / xf);
					else
						fprintf(md, " - | - |\n");
				}
			}
			fflush(md);
			unhold();
			xtcam_dp_free(dp);
			free(rules);
			free(ops);
		}
	}
	for (k = 0; k < ncb && !stopped; k++) {
		static const int acl_full[] = { 10000, 100000 };
		int n = only_cb ? only_cb : acl_full[k], fam;

		if (!k) {
			fprintf(md, "\n## ClassBench-style ACLs\n\n");
			fprintf(md, "Half of the mix is built from random rules, half from the same "
				"address clusters (hits or misses); the XDP_DROP floor and xdp-filter run over the same frames right after it "
				"with its 1000 ports.\n\n");
			fprintf(md, "| family | rules | entries | masks | tuples | max chain | ns/pkt | "
				"x floor | xdp-filter ns | x xdp-filter | load s |\n");
			fprintf(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		}
		for (fam = 4; fam < 4 + 2 * nfam && !stopped; fam += 2) {
			snprintf(what, sizeof(what), "the IPv%d ACL of %d rules", fam, n);
			/* an ACL set costs more to make than a plain one */
			if (no_time_for(create_s + 3 * n * per_rule_s +
					3 * NMIX * mixn * passes * call_s)) {
				out_of_time(md, what);
				break;
			}
			err = cb_rows(md, n, fam, xf_fd, floor_fd, repeat, passes);
			if (err == -ETIME)
				out_of_time(md, what);
			else if (err)
				fprintf(md, "| IPv%d | %d | (failed: %s) | | | | | | | | |\n", fam, n,
					strerror(-err));
		}
	}
done:
	fflush(md);
	md_fd = -1;
	unhold();
	if (xf_fd >= 0)
		close(xf_fd);
	bpf_object__close(o1);
	bpf_object__close(o2);
	if (md != stdout)
		fclose(md);
	for (k = 0; k < NMIX; k++)
		free(mixbuf[k]);
	return 0;
}
