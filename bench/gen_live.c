// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Live traffic through a veth pair: a generator on BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES (bench/progs/gen_live.bpf.c) redirects UDP
 * frames, IPv4 and IPv6 over NFLOWS flows, into the veth end of the
 * namespace it runs in; the peer, in the DUT namespace, runs whatever is
 * being measured on its (threaded) NAPI.
 *
 * Measured per interval, from the DUT's veth counters (ethtool stats of
 * rx queue 0): frames its NAPI consumed and frames XDP dropped; the NAPI
 * thread's CPU time (DUT ns per frame); the generator's rate; and from
 * /proc/stat the CPU time that others used (busy time on all CPUs less the
 * generator's and the NAPI thread's) and hypervisor steal.  A row is
 * marked noisy when others used more than 10% of the machine or steal
 * exceeded 2%.
 *
 * Usage (run inside the generator's namespace, e.g. with ip netns exec):
 *   gen_live -b BUILD -i GEN_DEV -n DUT_NETNS -d DUT_DEV -m DUT_MAC
 *            [-c GEN_CPU] [-p NAPI_PID] [-f NFLOWS] [-t SECS] [-k INTERVALS]
 *            [-w WARMUP_SECS] [-s SYSTEM] [-r RULES] [-o CSV]
 * Prints one summary line (medians over the intervals):
 *   SYSTEM RULES Mpps drop_Mpps DUT_ns/frame noisy/total gen_Mpps NAPI_busy% others%
 * NAPI busy below ~90% means the DUT was not the bottleneck (the generator
 * was, or the NAPI thread waited for its CPU): the rate is then a floor.
 * and appends every interval to CSV.  Returns 0, or 1 on error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "nsenter.h"

#ifndef BPF_F_TEST_XDP_LIVE_FRAMES
#define BPF_F_TEST_XDP_LIVE_FRAMES (1U << 1)
#endif

#define MAXIV 64

struct gen_cfg {
	__u32 ifindex;
	__u32 nflows;
	__u8 dst_mac[6];
	__u8 src_mac[6];
	__u32 dst4;
	__u8 dst6[16];
	__u16 dport;
	__u16 pad;
};

static atomic_int stop;
static atomic_int gen_err;

struct gen_arg {
	int prog_fd;
	int cpu;
	pthread_t th;
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

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *gen_thread(void *p)
{
	struct gen_arg *a = p;
	uint8_t frame[64] = { 0 };
	cpu_set_t set;

	if (a->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(a->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!atomic_load(&stop)) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
			    .repeat = 1 << 16, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		if (bpf_prog_test_run_opts(a->prog_fd, &o) && errno != EINTR) {
			atomic_store(&gen_err, errno);
			break;
		}
	}
	return NULL;
}

/* --- ethtool stats of the DUT device, through a socket in its namespace -- */

struct ethstats {
	int sock;
	struct ifreq ifr;
	struct ethtool_stats *st;
	int i_pkts, i_drops;
};

static int ethstats_open(struct ethstats *e, const char *netns, const char *dev)
{
	int saved, n, i, err;
	struct ethtool_sset_info *si;
	struct ethtool_gstrings *gs;

	/* the socket belongs to the namespace it was made in */
	err = xtcam_ns_enter_name(netns, &saved, NULL, 0);
	if (err)
		return err;
	e->sock = socket(AF_INET, SOCK_DGRAM, 0);
	err = e->sock < 0 ? -errno : 0;
	xtcam_ns_leave(saved);
	if (err)
		return err;
	memset(&e->ifr, 0, sizeof(e->ifr));
	snprintf(e->ifr.ifr_name, sizeof(e->ifr.ifr_name), "%s", dev);
	si = calloc(1, sizeof(*si) + sizeof(__u32));
	if (!si) {
		err = -ENOMEM;
		goto out;
	}
	si->cmd = ETHTOOL_GSSET_INFO;
	si->sset_mask = 1ULL << ETH_SS_STATS;
	e->ifr.ifr_data = (void *)si;
	if (ioctl(e->sock, SIOCETHTOOL, &e->ifr)) {
		err = -errno;
		free(si);
		goto out;
	}
	n = (int)si->data[0];
	free(si);
	gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	e->st = calloc(1, sizeof(*e->st) + (size_t)n * sizeof(__u64));
	if (!gs || !e->st) {
		free(gs);
		err = -ENOMEM;
		goto out;
	}
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = (__u32)n;
	e->ifr.ifr_data = (void *)gs;
	if (ioctl(e->sock, SIOCETHTOOL, &e->ifr)) {
		err = -errno;
		free(gs);
		goto out;
	}
	e->i_pkts = e->i_drops = -1;
	for (i = 0; i < n; i++) {
		const char *s = (const char *)gs->data + (size_t)i * ETH_GSTRING_LEN;

		if (!strcmp(s, "rx_queue_0_xdp_packets"))
			e->i_pkts = i;
		else if (!strcmp(s, "rx_queue_0_xdp_drops"))
			e->i_drops = i;
	}
	free(gs);
	e->st->cmd = ETHTOOL_GSTATS;
	e->st->n_stats = (__u32)n;
	if (e->i_pkts < 0 || e->i_drops < 0)
		err = -ENOENT;
out:
	return err;
}

static int ethstats_read(struct ethstats *e, __u64 *pkts, __u64 *drops)
{
	e->ifr.ifr_data = (void *)e->st;
	if (ioctl(e->sock, SIOCETHTOOL, &e->ifr))
		return -errno;
	*pkts = e->st->data[e->i_pkts];
	*drops = e->st->data[e->i_drops];
	return 0;
}

/* --- CPU accounting -------------------------------------------------------- */

struct cpusnap {
	double busy, steal, total;	/* seconds, all CPUs */
	double napi, gen;		/* seconds */
};

static void read_procstat(struct cpusnap *s)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[10] = { 0 };
	double hz = (double)sysconf(_SC_CLK_TCK);

	s->busy = s->steal = s->total = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
		/* user nice system idle iowait irq softirq steal (guest is in user) */
		s->busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
		s->steal = (double)v[7] / hz;
		s->total = (double)(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]) / hz;
	}
	fclose(f);
}

static double task_cpu(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double thread_cpu(pthread_t th)
{
	clockid_t cid;
	struct timespec t;

	if (pthread_getcpuclockid(th, &cid) || clock_gettime(cid, &t))
		return 0;
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void snap(struct cpusnap *s, int napi_pid, pthread_t gen)
{
	read_procstat(s);
	s->napi = task_cpu(napi_pid);
	s->gen = thread_cpu(gen);
}

static int parse_mac(const char *s, __u8 *m)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		m[i] = (__u8)b[i];
	return 0;
}

static __u64 gen_sent(int map_fd)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	__u64 v[256], sum = 0;
	__u32 one = 1;

	if (ncpu <= 0 || ncpu > 256 || bpf_map_lookup_elem(map_fd, &one, v))
		return 0;
	for (i = 0; i < ncpu; i++)
		sum += v[i];
	return sum;
}

static void usage(const char *p)
{
	fprintf(stderr,
		"usage: %s -i GEN_DEV -n DUT_NETNS -d DUT_DEV -m DUT_MAC [-b BUILD] [-c GEN_CPU]\n"
		"       [-p NAPI_PID] [-f NFLOWS] [-t SECS] [-k INTERVALS] [-w WARMUP]\n"
		"       [-s SYSTEM] [-r RULES] [-o CSV]\n", p);
}

int main(int argc, char **argv)
{
	const char *build = "build", *gdev = NULL, *netns = NULL, *ddev = NULL, *mac = NULL;
	const char *sys = "?", *rules = "-", *csv = NULL;
	int c, cpu = -1, napi_pid = 0, k = 3, err, i, noisy = 0;
	double secs = 2, warm = 1;
	struct gen_cfg cf = { .nflows = 2048, .dport = 9 };
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct gen_arg ga = { 0 };
	struct ethstats es = { 0 };
	double mpps[MAXIV], dmpps[MAXIV], nspp[MAXIV], gmpps[MAXIV], busy[MAXIV], oth[MAXIV];
	char path[512];
	FILE *out = NULL;
	int cfg_fd, state_fd;

	while ((c = getopt(argc, argv, "b:i:n:d:m:c:p:f:t:k:w:s:r:o:")) != -1) {
		switch (c) {
		case 'b': build = optarg; break;
		case 'i': gdev = optarg; break;
		case 'n': netns = optarg; break;
		case 'd': ddev = optarg; break;
		case 'm': mac = optarg; break;
		case 'c': cpu = atoi(optarg); break;
		case 'p': napi_pid = atoi(optarg); break;
		case 'f': cf.nflows = (__u32)atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'k': k = atoi(optarg); break;
		case 'w': warm = atof(optarg); break;
		case 's': sys = optarg; break;
		case 'r': rules = optarg; break;
		case 'o': csv = optarg; break;
		default: usage(argv[0]); return 2;
		}
	}
	if (!gdev || !netns || !ddev || !mac || k < 1 || k > MAXIV || secs <= 0 || !cf.nflows) {
		usage(argv[0]);
		return 2;
	}
	cf.ifindex = if_nametoindex(gdev);
	if (!cf.ifindex || parse_mac(mac, cf.dst_mac)) {
		fprintf(stderr, "gen_live: bad device %s or MAC %s\n", gdev, mac);
		return 1;
	}
	memcpy(cf.src_mac, (const __u8[]){ 0x02, 0, 0, 0, 0, 0x01 }, 6);
	inet_pton(AF_INET, "198.18.0.1", &cf.dst4);
	inet_pton(AF_INET6, "fd00::1", cf.dst6);

	err = ethstats_open(&es, netns, ddev);
	if (err) {
		fprintf(stderr, "gen_live: stats of %s in %s: %s\n", ddev, netns, strerror(-err));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/bench/gen_live.bpf.o", build);
	obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "gen_live: %s: %s\n", path, strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "gen_live");
	cfg_fd = bpf_object__find_map_fd_by_name(obj, "cfg");
	state_fd = bpf_object__find_map_fd_by_name(obj, "state");
	if (!prog || cfg_fd < 0 || state_fd < 0 ||
	    bpf_map_update_elem(cfg_fd, &(__u32){ 0 }, &cf, 0)) {
		fprintf(stderr, "gen_live: setup: %s\n", strerror(errno));
		return 1;
	}
	ga.prog_fd = bpf_program__fd(prog);
	ga.cpu = cpu;
	if (pthread_create(&ga.th, NULL, gen_thread, &ga)) {
		fprintf(stderr, "gen_live: thread: %s\n", strerror(errno));
		return 1;
	}
	usleep((useconds_t)(warm * 1e6));
	if (csv) {
		out = fopen(csv, "a");
		if (out && ftell(out) == 0)
			fprintf(out, "system,rules,interval,secs,frames,drops,mpps,drop_mpps,dut_ns_per_frame,"
				"gen_mpps,napi_busy_pct,others_pct,steal_pct,noisy\n");
	}
	for (i = 0; i < k; i++) {
		struct cpusnap a, b;
		__u64 p0, d0, p1, d1, s0, s1;
		double t0, t1, dt, others, steal, tot;
		int nz;

		snap(&a, napi_pid, ga.th);
		s0 = gen_sent(state_fd);
		t0 = now();
		if (ethstats_read(&es, &p0, &d0))
			break;
		usleep((useconds_t)(secs * 1e6));
		if (ethstats_read(&es, &p1, &d1))
			break;
		t1 = now();
		s1 = gen_sent(state_fd);
		snap(&b, napi_pid, ga.th);
		dt = t1 - t0;
		tot = b.total - a.total;
		if (tot <= 0)
			tot = dt * (double)sysconf(_SC_NPROCESSORS_ONLN);
		others = (b.busy - a.busy) - (b.napi - a.napi) - (b.gen - a.gen);
		if (others < 0)
			others = 0;
		others = 100 * others / tot;
		steal = 100 * (b.steal - a.steal) / tot;
		nz = others > 10 || steal > 2;
		noisy += nz;
		mpps[i] = (double)(p1 - p0) / dt / 1e6;
		dmpps[i] = (double)(d1 - d0) / dt / 1e6;
		nspp[i] = p1 > p0 ? (b.napi - a.napi) * 1e9 / (double)(p1 - p0) : 0;
		gmpps[i] = (double)(s1 - s0) / dt / 1e6;
		busy[i] = 100 * (b.napi - a.napi) / dt;
		oth[i] = others;
		if (out)
			fprintf(out, "%s,%s,%d,%.3f,%llu,%llu,%.4f,%.4f,%.1f,%.3f,%.0f,%.1f,%.1f,%s\n", sys,
				rules, i + 1, dt, (unsigned long long)(p1 - p0),
				(unsigned long long)(d1 - d0), mpps[i], dmpps[i], nspp[i], gmpps[i],
				busy[i], others, steal, nz ? "noisy" : "");
		if (atomic_load(&gen_err))
			break;
	}
	atomic_store(&stop, 1);
	pthread_join(ga.th, NULL);
	if (out)
		fclose(out);
	if (atomic_load(&gen_err) || i < k) {
		fprintf(stderr, "gen_live: generator: %s\n", strerror(atomic_load(&gen_err) ?: EIO));
		return 1;
	}
	printf("%s %s %.4f %.4f %.1f %d/%d %.3f %.0f %.0f\n", sys, rules, median(mpps, k),
	       median(dmpps, k), median(nspp, k), noisy, k, median(gmpps, k), median(busy, k),
	       median(oth, k));
	bpf_object__close(obj);
	return 0;
}
