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
 * Usage: bench_tr [-q] [-s] [-o FILE.md] [-b BUILD_DIR] [-n RULES -m MASKS]
 * -s: the mask-scaling sweep (1, 8, 32, 128, 512 masks at 10k rules, and
 * 100k without -q) instead of the rule-count sweep.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xtcam/compile.h"
#include "xtcam/dp.h"
#include "tlib.h"

#define NPKT   1000
#define REPEAT 1000
#define PASSES 5

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

/* median over passes of the mean ns per frame over the mix */
static double measure(int prog_fd, const struct frame *f, int n, int repeat, int passes)
{
	double v[16];
	int p, i;

	for (p = 0; p < passes; p++) {
		double sum = 0;

		for (i = 0; i < n; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f[i].buf,
				    .data_size_in = f[i].len, .repeat = repeat);

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

static void gen_rule(struct t_rng *g, int i, int m, struct xtcam_rule *r)
{
	struct maskdef d;

	mask_of(i, m, &d);
	t_rule(r, 1 + (uint32_t)(i % 1000), (uint32_t)i + 1);
	r->action.type = XTCAM_ACT_DROP;
	t_match_ethtype(r, 0x0800);
	if (d.splen)
		t_match_ip4(r, true, 0x0a000000u | (uint32_t)(t_rand(g) & 0x00ffffff), d.splen);
	t_match_ip4(r, false, 0xac100000u | (uint32_t)(t_rand(g) & 0x000fffff), d.dplen);
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

/* a plain UDP/IPv4 frame; hits take the rule's values */
static void frame_for(struct t_rng *g, const struct xtcam_rule *r, struct frame *f)
{
	struct pkt_spec s;
	struct pkt p;
	uint32_t a;

	pkt_spec_init(&s);
	s.payload = 18;
	a = htonl(0xc0a80000u | (uint32_t)(t_rand(g) & 0xffff));
	memcpy(s.saddr, &a, 4);
	a = htonl(0xc0a90000u | (uint32_t)(t_rand(g) & 0xffff));
	memcpy(s.daddr, &a, 4);
	s.sport = (uint16_t)t_rand(g);
	s.dport = (uint16_t)t_rand(g);
	if (r) {
		int i;

		for (i = 0; i < 4; i++) {
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

#define XF_NS "xtcam-bench-xf"

static int find_prog_by_name(const char *prefix, __u32 *id_out)
{
	__u32 id = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, prefix, strlen(prefix))) {
			close(fd);
			*id_out = id;
			return 0;
		}
		close(fd);
	}
	return -ENOENT;
}

static int prog_map_by_name(__u32 prog_id, const char *name)
{
	__u32 ids[16], n = 16, i;
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int pfd = bpf_prog_get_fd_by_id(prog_id);

	if (pfd < 0)
		return -errno;
	info.nr_map_ids = n;
	info.map_ids = (unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len)) {
		close(pfd);
		return -errno;
	}
	close(pfd);
	for (i = 0; i < info.nr_map_ids && i < n; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 ml = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) && !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

static void xf_cleanup(void)
{
	if (system("ip netns del " XF_NS " 2>/dev/null")) {
		/* nothing to clean */
	}
}

/* xdp-filter with nports exact destination ports; returns its prog fd */
static int xf_setup(int nports, const uint16_t *ports)
{
	int fd, mfd, ncpu = libbpf_num_possible_cpus(), i;
	__u32 id;
	__u64 *vals, tmpl[64];
	__u32 *keys, one = htons(1), count;

	xf_cleanup();
	if (system("ip netns add " XF_NS " && "
		   "ip -n " XF_NS " link add xf0 type veth peer name xf1 && "
		   "ip -n " XF_NS " link set xf0 up && ip -n " XF_NS " link set xf1 up && "
		   "ip netns exec " XF_NS " sh -c 'mount -t bpf bpf /sys/fs/bpf; "
		   "xdp-filter load xf0 -m native -f tcp,udp,ipv4 && xdp-filter port 1' "
		   ">/dev/null 2>&1"))
		return -EIO;
	if (find_prog_by_name("xdpfilt_", &id))
		return -ENOENT;
	fd = bpf_prog_get_fd_by_id(id);
	mfd = prog_map_by_name(id, "filter_ports");
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

int main(int argc, char **argv)
{
	static const int counts_full[] = { 1, 1000, 10000, 100000, 1000000 };
	static const int counts_quick[] = { 1, 1000, 100000 };
	static const int masks_std[] = { 1, 8, 32 };
	static const int masks_scale[] = { 1, 8, 32, 128, 512 };
	static const int counts_scale[] = { 10000, 100000 };
	const int *masks = masks_std;
	int nm = 3, scale = 0;
	const char *out = NULL, *build = "build";
	int quick = 0, c, ci, mi, nc, err, repeat = REPEAT, passes = PASSES, only_n = 0, only_m = 0;
	const int *counts;
	struct frame *mix = calloc(NPKT, sizeof(*mix));
	struct bpf_object *o1 = NULL, *o2 = NULL;
	char path[512];
	double floor_drop, floor_parse, xf = -1;
	FILE *md = stdout;
	struct utsname un;
	time_t tnow = time(NULL);
	char date[64];

	while ((c = getopt(argc, argv, "qso:b:n:m:")) != -1) {
		switch (c) {
		case 'q': quick = 1; break;
		case 's': scale = 1; break;
		case 'o': out = optarg; break;
		case 'b': build = optarg; break;
		case 'n': only_n = atoi(optarg); break;
		case 'm': only_m = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-q] [-o FILE.md] [-b BUILD] [-n RULES -m MASKS]\n", argv[0]);
			return 2;
		}
	}
	if (quick) {
		repeat = 1000;
		passes = 3;
	}
	counts = quick ? counts_quick : counts_full;
	nc = quick ? 3 : 5;
	if (only_n && !quick)
		nc = 5;
	if (scale) {
		counts = counts_scale;
		nc = quick ? 1 : 2;
		masks = masks_scale;
		nm = 5;
	}
	if (!mix)
		return 1;
	if (out && !(md = fopen(out, "w"))) {
		perror(out);
		return 1;
	}
	t_pin_cpu(1);
	uname(&un);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&tnow));

	{
		/* the mix for the floors and xdp-filter: the same frames */
		struct t_rng g = { 42 };
		int i;

		for (i = 0; i < NPKT; i++)
			frame_for(&g, NULL, &mix[i]);
	}
	snprintf(path, sizeof(path), "%s/bench/floor_drop.bpf.o", build);
	err = load_prog(path, "floor_drop", &o1);
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return 1;
	}
	floor_drop = measure(err, mix, NPKT, repeat, passes);
	snprintf(path, sizeof(path), "%s/bench/floor_parse.bpf.o", build);
	err = load_prog(path, "floor_parse", &o2);
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return 1;
	}
	floor_parse = measure(err, mix, NPKT, repeat, passes);

	fprintf(md, "# Per-packet cost, BPF_PROG_TEST_RUN\n\n");
	fprintf(md, "Machine: %s %s, %ld CPUs; date %s.\n", un.nodename, un.release,
		sysconf(_SC_NPROCESSORS_ONLN), date);
	fprintf(md, "Method: a mix of %d distinct UDP/IPv4 frames, each run with repeat %d; "
		"the mean over the mix, median of %d passes.  xtcam rows: 50%% of the mix "
		"hits a rule (frames built from random rules), 50%% misses.\n\n",
		NPKT, repeat, passes);
	fprintf(md, "| program | rules | masks | tuples | ns/pkt | x floor | load s |\n");
	fprintf(md, "|---|---:|---:|---:|---:|---:|---:|\n");
	fprintf(md, "| XDP_DROP (floor) | - | - | - | %.1f | 1.00 | - |\n", floor_drop);
	fprintf(md, "| parser only, drop | - | - | - | %.1f | %.2f | - |\n", floor_parse,
		floor_parse / floor_drop);
	fflush(md);

	{
		/* xdp-filter: 1000 exact destination ports, the mix's frames hit
		 * for half of them as for xtcam */
		struct t_rng g = { 7 };
		uint16_t ports[1000];
		struct frame *xm = calloc(NPKT, sizeof(*xm));
		int i, fd;

		for (i = 0; i < 1000; i++)
			ports[i] = (uint16_t)(1 + t_below(&g, 65535));
		for (i = 0; i < NPKT && xm; i++) {
			frame_for(&g, NULL, &xm[i]);
			if (i % 2) {
				uint16_t p = htons(ports[t_below(&g, 1000)]);

				memcpy(xm[i].buf + 14 + 20 + 2, &p, 2);
			}
		}
		fd = xf_setup(1000, ports);
		if (fd >= 0 && xm) {
			xf = measure(fd, xm, NPKT, repeat, passes);
			close(fd);
			fprintf(md, "| xdp-filter (1000 dst ports) | 1000 | 1 | - | %.1f | %.2f | - |\n",
				xf, xf / floor_drop);
		} else {
			fprintf(md, "| xdp-filter | (could not load: %s) | | | | | |\n", strerror(-fd));
		}
		xf_cleanup();
		free(xm);
	}
	fflush(md);

	for (ci = 0; ci < nc; ci++) {
		for (mi = 0; mi < nm; mi++) {
			int n = counts[ci], m = masks[mi], i;
			struct xtcam_block_spec spec = { .capacity = (__u32)(n < 1024 ? 1024 : n) };
			struct xtcam_rule *rules = calloc((size_t)n, sizeof(*rules));
			struct xtcam_dp_op *ops = calloc((size_t)n, sizeof(*ops));
			struct frame *fr = calloc(NPKT, sizeof(*fr));
			struct t_rng g = { 1000u + (uint64_t)n * 7 + (uint64_t)m };
			struct xtcam_dp_info info;
			struct xtcam_dp *dp;
			double t0, t1, ns;
			char e[256];

			if ((only_n && n != only_n) || (only_m && m != only_m))
				continue;
			if (n == 1 && mi > 0)
				continue;	/* one rule has one mask */
			if (!rules || !ops || !fr)
				return 1;
			for (i = 0; i < n; i++) {
				gen_rule(&g, i, m, &rules[i]);
				ops[i] = (struct xtcam_dp_op){ .cmd = XTCAM_DP_ADD, .rule = &rules[i],
							      .act = { .type = XTCAM_ACT_DROP } };
			}
			err = xtcam_dp_create(&spec, XTCAM_DP_NOTIME, &dp);
			if (err) {
				fprintf(stderr, "create: %s\n", strerror(-err));
				return 1;
			}
			t0 = now();
			err = xtcam_dp_apply(dp, ops, (size_t)n, e, sizeof(e));
			t1 = now();
			if (err) {
				fprintf(md, "| xtcam | %d | %d | - | (refused: %s, %s) | | |\n", n, m,
					strerrorname_np(-err) ?: "?", e);
				fflush(md);
				xtcam_dp_free(dp);
				free(rules);
				free(ops);
				free(fr);
				continue;
			}
			xtcam_dp_info(dp, &info, false);
			for (i = 0; i < NPKT; i++)
				frame_for(&g, i % 2 ? NULL : &rules[t_below(&g, (uint32_t)n)], &fr[i]);
			ns = measure(xtcam_dp_parse_fd(dp), fr, NPKT, repeat, passes);
			fprintf(md, "| xtcam | %d | %d | %u | %.1f | %.2f | %.2f |\n", n,
				n < m ? n : m, info.ntuples, ns, ns / floor_drop, t1 - t0);
			fflush(md);
			xtcam_dp_free(dp);
			free(rules);
			free(ops);
			free(fr);
		}
	}
	if (xf > 0)
		fprintf(md, "\nxdp-filter: %.1f ns/pkt on its mix (half of the frames hit one of its "
			"1000 ports).\n", xf);
	bpf_object__close(o1);
	bpf_object__close(o2);
	if (md != stdout)
		fclose(md);
	free(mix);
	return 0;
}
