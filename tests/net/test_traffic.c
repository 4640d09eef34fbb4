// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Blocks bound with the CLI to veth pairs in namespaces these tests make,
 * real frames sent from the peer namespace, delivery or drop seen at the
 * receiver, and the counters as `xtcam rule show -j` and bpftool show
 * them.  Plus the flow_block rules as a user meets them.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include "tcli.h"
#include "xtcam/loader.h"
#include "xtcam/syntax.h"

static char inst[32];

static void setup(void)
{
	t_cli_instance(inst, sizeof(inst));
}

/* a pair with somebody else's program on it, loaded with xdp-loader: its
 * libxdp pins would outlive the device */
static struct t_pair other_pair;
static bool other_loaded;

static void teardown(void)
{
	if (other_loaded)
		t_sh(NULL, "nsenter --net=/run/netns/%s xdp-loader unload -a %s", other_pair.ns_a,
		     other_pair.a);
	other_loaded = false;
	t_xtcam(NULL, "flush");
	t_sh(NULL, "rm -f /run/%s.lock", inst);
	t_net_cleanup();
}

TestSuite(traffic, .init = setup, .fini = teardown, .timeout = 300);

static long long rule_packets(const char *block, unsigned int handle)
{
	char *o = NULL;
	long long v;

	cr_assert_eq(t_xtcam(&o, "-j rule show %s", block), 0, "%s", o);
	v = t_rule_field(o, handle, "packets");
	free(o);
	return v;
}

static void six(uint8_t *a, int last)
{
	static const uint8_t base[16] = { 0x20, 1, 0xd, 0xb8 };

	memcpy(a, base, 16);
	a[15] = (uint8_t)last;
}

static void classify_real_traffic(const char *mode)
{
	struct t_pair p;
	struct pkt_spec s;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "t"), 0);
	XT_OK("block add edge");
	XT_OK("rule add edge prio 10 handle 1 ip_proto udp dst_port 9 action drop");
	XT_OK("rule add edge prio 10 handle 2 eth_type ipv6 ip_proto tcp dst_port 80 action drop");
	XT_OK("rule add edge prio 10 handle 3 vlan_id 100 action drop");
	XT_OK("rule add edge prio 10 handle 4 ip_proto icmp type 8 action drop");
	XT_OK("rule add edge prio 20 handle 5 src_ip 10.0.0.0/8 ip_proto udp action pass");
	XT_OK("bind edge dev %s netns %s mode %s", p.a, p.ns_a, mode);
	cr_assert_eq(t_xtcam(&o, "-j block show edge"), 0);
	cr_assert(strstr(o, mode), "bound in %s: %s", mode, o);
	free(o);

	/* IPv4 UDP: port 9 dropped, port 10 passes (and counts on rule 5) */
	t_frame(&p, &s, 0);
	s.dport = 9;
	cr_assert_eq(through(&p, &s, 0x1111, 20), 0, "udp/9 dropped");
	s.dport = 10;
	cr_assert_eq(through(&p, &s, 0x1112, 10), 10, "udp/10 passes");
	/* IPv6 TCP: 80 dropped, 81 passes */
	t_frame(&p, &s, 0);
	s.eth_type = 0x86dd;
	six(s.saddr, 1);
	six(s.daddr, 2);
	s.proto = IPPROTO_TCP;
	s.dport = 80;
	s.tcp_flags = 0x002;
	cr_assert_eq(through(&p, &s, 0x2221, 7), 0, "tcp6/80 dropped");
	s.dport = 81;
	cr_assert_eq(through(&p, &s, 0x2222, 7), 7, "tcp6/81 passes");
	/* VLAN-tagged: 100 dropped, 200 passes (the tag is in the frame) */
	t_frame(&p, &s, 0);
	s.nvlan = 1;
	s.tpid[0] = 0x8100;
	s.tci[0] = 100;
	s.dport = 10;
	cr_assert_eq(through(&p, &s, 0x3331, 5), 0, "vlan 100 dropped");
	s.tci[0] = 200;
	cr_assert_eq(through(&p, &s, 0x3332, 5), 5, "vlan 200 passes");
	/* ICMP: echo request dropped, echo reply passes */
	t_frame(&p, &s, 0);
	s.proto = IPPROTO_ICMP;
	s.icmp_type = 8;
	cr_assert_eq(through(&p, &s, 0x4441, 4), 0, "echo request dropped");
	s.icmp_type = 0;
	cr_assert_eq(through(&p, &s, 0x4442, 4), 4, "echo reply passes");

	cr_assert_eq(rule_packets("edge", 1), 20);
	cr_assert_eq(rule_packets("edge", 2), 7);
	cr_assert_eq(rule_packets("edge", 3), 5);
	cr_assert_eq(rule_packets("edge", 4), 4);
	cr_assert_eq(rule_packets("edge", 5), 10 + 5, "udp/10, untagged and vlan 200");
	/* bpftool sees the same maps with field names */
	cr_assert_eq(t_sh(&o, "bpftool map dump pinned /sys/fs/bpf/%s/edge/xdp/counters", inst), 0,
		     "%s", o);
	cr_assert(strstr(o, "\"packets\": 20") || strstr(o, "\"packets\": 1"),
		  "bpftool prints counters by field name: %.400s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "bpftool map dump pinned /sys/fs/bpf/%s/edge/xdp/records | head -60", inst), 0);
	cr_assert(strstr(o, "\"eth_type\"") && strstr(o, "\"dst_port\""), "records with BTF: %.300s", o);
	free(o);

	/* unbind detaches: everything passes again */
	XT_OK("unbind edge dev %s netns %s", p.a, p.ns_a);
	t_frame(&p, &s, 0);
	s.dport = 9;
	cr_assert_eq(through(&p, &s, 0x5551, 5), 5, "after unbind udp/9 passes");
	cr_assert_eq(t_sh(&o, "ip -n %s link show %s", p.ns_a, p.a), 0);
	cr_assert(!strstr(o, "xdp"), "no XDP program left: %s", o);
	free(o);
}

Test(traffic, native) { classify_real_traffic("native"); }
Test(traffic, generic) { classify_real_traffic("generic"); }

Test(traffic, hw_on_veth_fails_cleanly_auto_lands_native)
{
	struct t_pair p;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "h"), 0);
	XT_OK("block add b");
	cr_assert_eq(t_xtcam(&o, "bind b dev %s netns %s mode hw", p.a, p.ns_a), 1);
	cr_assert(strstr(o, "offloaded") && strstr(o, "(E"), "the kernel's reason: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert(strstr(o, "\"bindings\":[]"), "nothing bound: %s", o);
	free(o);
	XT_OK("bind b dev %s netns %s", p.a, p.ns_a);
	cr_assert_eq(t_xtcam(&o, "-j block show b"), 0);
	cr_assert(strstr(o, "\"mode\":\"native\"") && strstr(o, "\"refused\":\"hw:"),
		  "auto landed on native and says why not hw: %s", o);
	free(o);
}

Test(traffic, flow_block_rules_through_the_cli)
{
	struct t_pair p, q;
	struct pkt_spec s;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "f"), 0);
	cr_assert_eq(t_pair_make(&q, "g"), 0);
	XT_OK("block add one");
	XT_OK("block add two");
	XT_OK("rule add one prio 1 handle 1 ip_proto udp dst_port 9 action drop");
	XT_OK("rule add two prio 1 handle 1 ip_proto udp action drop");
	/* egress: XDP sees only ingress */
	cr_assert_eq(t_xtcam(&o, "bind one dev %s netns %s egress", p.a, p.ns_a), 1);
	cr_assert(strstr(o, "ingress") && strstr(o, "(EOPNOTSUPP)"), "%s", o);
	free(o);
	/* unbinding what is not bound */
	cr_assert_eq(t_xtcam(&o, "unbind one dev %s netns %s", p.a, p.ns_a), 1);
	cr_assert(strstr(o, "(ENOENT)"), "%s", o);
	free(o);
	XT_OK("bind one dev %s netns %s mode native", p.a, p.ns_a);
	/* a second block on a bound device: EBUSY, and traffic unaffected */
	cr_assert_eq(t_xtcam(&o, "bind two dev %s netns %s", p.a, p.ns_a), 1);
	cr_assert(strstr(o, "already bound to block one (EBUSY)"), "%s", o);
	free(o);
	t_frame(&p, &s, 0);
	s.dport = 10;
	cr_assert_eq(through(&p, &s, 0x6001, 5), 5, "block one still rules: udp/10 passes");
	s.dport = 9;
	cr_assert_eq(through(&p, &s, 0x6002, 5), 0);
	/* one block on two devices: counters add up both */
	XT_OK("bind one dev %s netns %s mode generic", q.a, q.ns_a);
	t_frame(&q, &s, 0);
	s.dport = 9;
	cr_assert_eq(through(&q, &s, 0x6003, 3), 0, "the shared block drops on the second device");
	cr_assert_eq(rule_packets("one", 1), 5 + 3, "one counter for both devices");
	cr_assert_eq(t_xtcam(&o, "-j block show one"), 0);
	cr_assert(strstr(o, "\"mode\":\"native\"") && strstr(o, "\"mode\":\"generic\""), "%s", o);
	free(o);
	/* unbinding one leaves the other working */
	XT_OK("unbind one dev %s netns %s", p.a, p.ns_a);
	cr_assert_eq(through(&q, &s, 0x6004, 3), 0, "still dropping on the second");
	t_frame(&p, &s, 0);
	s.dport = 9;
	cr_assert_eq(through(&p, &s, 0x6005, 3), 3, "unbound device passes");
	/* and now block two can take the first device */
	XT_OK("bind two dev %s netns %s", p.a, p.ns_a);
	s.dport = 10;
	cr_assert_eq(through(&p, &s, 0x6006, 3), 0, "block two drops all UDP");
	cr_assert_eq(t_xtcam(&o, "block del two"), 1);
	cr_assert(strstr(o, "(EBUSY)"), "block del of a bound block: %s", o);
	free(o);
}

Test(traffic, same_ifindex_in_two_namespaces)
{
	struct t_pair p, q;
	struct pkt_spec s;
	char *o = NULL;
	int ia, ib;

	cr_assert_eq(t_pair_make(&p, "i"), 0);
	cr_assert_eq(t_pair_make(&q, "j"), 0);
	cr_assert_eq(t_sh(&o, "ip -n %s -o link show %s | cut -d: -f1", p.ns_a, p.a), 0);
	ia = atoi(o);
	free(o);
	cr_assert_eq(t_sh(&o, "ip -n %s -o link show %s | cut -d: -f1", q.ns_a, q.a), 0);
	ib = atoi(o);
	free(o);
	cr_assert_eq(ia, ib, "fresh namespaces give the same ifindex (%d, %d)", ia, ib);
	XT_OK("block add a1");
	XT_OK("block add a2");
	XT_OK("rule add a1 prio 1 ip_proto udp dst_port 9 action drop");
	XT_OK("rule add a2 prio 1 ip_proto udp dst_port 10 action drop");
	XT_OK("bind a1 dev %s netns %s", p.a, p.ns_a);
	XT_OK("bind a2 dev %s netns %s", q.a, q.ns_a);
	t_frame(&p, &s, 0);
	s.dport = 9;
	cr_assert_eq(through(&p, &s, 0x7001, 3), 0);
	s.dport = 10;
	cr_assert_eq(through(&p, &s, 0x7002, 3), 3);
	t_frame(&q, &s, 0);
	s.dport = 9;
	cr_assert_eq(through(&q, &s, 0x7003, 3), 3);
	s.dport = 10;
	cr_assert_eq(through(&q, &s, 0x7004, 3), 0);
}

Test(traffic, redirect_between_two_pairs)
{
	struct t_pair p;
	struct pkt_spec s;
	struct pkt f[5];
	struct t_rx rx;
	char out[16], peer[16];
	int i;

	cr_assert_eq(t_pair_make(&p, "r"), 0);
	/* a second pair from ns_a: out (in ns_a) -> peer (in ns_b) */
	snprintf(out, sizeof(out), "ro%d", (int)getpid() % 10000);
	snprintf(peer, sizeof(peer), "rp%d", (int)getpid() % 10000);
	cr_assert_eq(t_sh(NULL, "ip -n %s link add %s type veth peer name %s netns %s && "
			  "ip -n %s link set %s up && ip -n %s link set %s up && "
			  "ip netns exec %s ethtool -K %s gro on", p.ns_a, out, peer, p.ns_b,
			  p.ns_a, out, p.ns_b, peer, p.ns_b, peer), 0);
	XT_OK("block add rd");
	XT_OK("rule add rd prio 1 ip_proto udp dst_port 5000 action redirect dev %s", out);
	XT_OK("bind rd dev %s netns %s mode native", p.a, p.ns_a);
	t_frame(&p, &s, 0);
	s.dport = 5000;
	for (i = 0; i < 5; i++)
		t_frame_build(&s, 0x8001, &f[i]);
	cr_assert_eq(t_rx_open(&rx, p.ns_b, peer), 0);
	cr_assert_eq(t_send(p.ns_b, p.b, f, 5), 5);
	cr_assert_eq(t_rx_count(&rx, 0x8001, 300), 5, "redirected out of %s into %s", out, peer);
	t_rx_close(&rx);
	cr_assert_eq(rule_packets("rd", 1), 5);
	/* a redirect to a device that does not exist is refused, with its name */
	{
		char *o = NULL;

		cr_assert_eq(t_xtcam(&o, "rule add rd prio 2 action redirect dev nodev9"), 1);
		cr_assert(strstr(o, "nodev9") && strstr(o, "(ENODEV)"), "%s", o);
		free(o);
	}
}

Test(traffic, device_gone_is_shown_and_unbind_clears_it)
{
	struct t_pair p;
	char *o = NULL;

	cr_assert_eq(t_pair_make(&p, "z"), 0);
	XT_OK("block add gz");
	XT_OK("bind gz dev %s netns %s", p.a, p.ns_a);
	cr_assert_eq(t_sh(NULL, "ip -n %s link del %s", p.ns_a, p.a), 0);
	cr_assert_eq(t_xtcam(&o, "-j block show gz"), 0, "%s", o);
	cr_assert(strstr(o, "\"state\":\"gone\""), "%s", o);
	free(o);
	/* a new device with the old name and index is not the old one */
	cr_assert_eq(t_sh(NULL, "ip -n %s link add %s type veth peer name %sx", p.ns_a, p.a, p.a), 0);
	cr_assert_eq(t_xtcam(&o, "-j block show gz"), 0, "%s", o);
	cr_assert(strstr(o, "\"state\":\"gone\""), "a new device is not the bound one: %s", o);
	free(o);
	XT_OK("rule add gz prio 1 action drop");
	XT_OK("unbind gz dev %s netns %s", p.a, p.ns_a);
	cr_assert_eq(t_xtcam(&o, "-j block show gz"), 0);
	cr_assert(strstr(o, "\"bindings\":[]"), "%s", o);
	free(o);
	XT_OK("bind gz dev %s netns %s", p.a, p.ns_a);
	/* and a namespace that goes away */
	cr_assert_eq(t_sh(NULL, "ip netns del %s", p.ns_a), 0);
	cr_assert_eq(t_xtcam(&o, "-j block show gz"), 0, "%s", o);
	cr_assert(strstr(o, "\"state\":\"gone\""), "%s", o);
	free(o);
	XT_OK("unbind gz dev %s netns %s", p.a, p.ns_a);
	XT_OK("block del gz");
}

/* a sender in a child process: frames to ports[] until `secs` pass */
static pid_t sender(const struct t_pair *p, const uint16_t *ports, int np, int secs, int *pipe_rd)
{
	int fds[2];
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		struct pkt f[8];
		struct pkt_spec s;
		long sent = 0;
		time_t end = time(NULL) + secs;
		int i;

		close(fds[0]);
		for (i = 0; i < np; i++) {
			t_frame(p, &s, 0);
			s.dport = ports[i];
			t_frame_build(&s, 0x9000u + ports[i], &f[i]);
		}
		while (time(NULL) < end) {
			int n = t_send(p->ns_b, p->b, f, np);

			if (n > 0)
				sent += n;
			usleep(200);
		}
		if (write(fds[1], &sent, sizeof(sent)) != sizeof(sent))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	*pipe_rd = fds[0];
	return pid;
}

static void write_set(const char *path, int set)
{
	FILE *f = fopen(path, "w");
	int i;

	cr_assert(f);
	/* ports 1-5: handle p in set A, 10000 + p in set B; port 999: handle
	 * 999 in both (kept: its counter must only grow); 9990 fillers that
	 * no frame matches, differing between the sets */
	for (i = 1; i <= 5; i++)
		fprintf(f, "prio 10 handle %d ip_proto udp dst_port %d action pass\n",
			set ? 10000 + i : i, i);
	fprintf(f, "prio 10 handle 999 ip_proto udp dst_port 999 action pass\n");
	for (i = 0; i < 9994; i++)
		fprintf(f, "prio %d handle %d dst_ip 172.%d.%d.%d ip_proto tcp dst_port %d action drop\n",
			20 + i % 50, 20000 + i, 16 + set, (i >> 8) & 255, i & 255, 1 + i % 60000);
	fclose(f);
}

Test(traffic, swaps_under_traffic_are_atomic, .timeout = 600)
{
	static const uint16_t ports[] = { 1, 2, 3, 4, 5, 999 };
	struct t_pair p;
	char pa[64], pb[64], *o = NULL;
	long long last999 = 0, total = 0;
	long sent = 0;
	int rd, st, swap, i;
	pid_t kid;

	cr_assert_eq(t_pair_make(&p, "s"), 0);
	snprintf(pa, sizeof(pa), "/tmp/xtcam-%d-a.rules", (int)getpid());
	snprintf(pb, sizeof(pb), "/tmp/xtcam-%d-b.rules", (int)getpid());
	write_set(pa, 0);
	write_set(pb, 1);
	XT_OK("block add sw capacity 20000 default drop");
	XT_OK("rule load sw %s", pa);
	XT_OK("bind sw dev %s netns %s mode native", p.a, p.ns_a);
	kid = sender(&p, ports, 6, 12, &rd);
	for (swap = 0; swap < 12; swap++) {
		long long k;

		XT_OK("rule load sw %s replace", swap % 2 ? pa : pb);
		k = rule_packets("sw", 999);
		cr_assert_geq(k, last999, "the kept rule's counter went back: %lld after %lld", k,
			      last999);
		last999 = k;
	}
	cr_assert_eq(waitpid(kid, &st, 0), kid);
	cr_assert_eq(read(rd, &sent, sizeof(sent)), sizeof(sent));
	close(rd);
	usleep(100000);
	/* every frame went to a rule of one of the two sets: none missed (the
	 * default would have dropped and counted it), none on a filler */
	cr_assert_eq(t_xtcam(&o, "-j block show sw"), 0);
	cr_assert_eq(t_json_ll(o, "0.misses"), 0, "a frame fell through between the sets: %s", o);
	free(o);
	cr_assert_eq(t_xtcam(&o, "-j rule show sw"), 0);
	for (i = 0; i < 5; i++)
		total += t_rule_field(o, (unsigned)(swap % 2 ? i + 1 : 10001 + i), "packets");
	total += t_rule_field(o, 999, "packets");
	cr_assert(!strstr(o, "\"action\":{\"type\":\"drop\"},\"entries\":1,\"packets\":1"),
		  "a filler rule counted a frame");
	free(o);
	cr_assert_gt(sent, 1000, "traffic flowed during the swaps (%ld frames)", sent);
	cr_assert_gt(last999, 0);
	unlink(pa);
	unlink(pb);
}

/* one rule from its words, through the library's parser */
static void parse_rule(struct xtcam_rule *r, const char *fmt, ...)
{
	char line[256], *argv[32], *save = NULL, *w, err[256];
	va_list ap;
	int argc = 0;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (w = strtok_r(line, " ", &save); w && argc < 32; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	cr_assert_eq(xtcam_rule_parse(argc, argv, r, NULL, err, sizeof(err)), 0, "%s", err);
}

static long long lib_rule_packets(struct xtcam_ctx *c, const char *block, unsigned int handle)
{
	json_object *o = NULL;
	char err[256];
	long long v;

	cr_assert_eq(xtcam_cmd_rule_show(c, block, &o, err, sizeof(err)), 0, "%s", err);
	v = t_rule_field(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), handle,
			 "packets");
	json_object_put(o);
	return v;
}

/*
 * 10,000 single changes through the library while frames flow: rules that
 * sort before the ones the frames hit, in their chains (the same port,
 * an ip_tos no frame has), added, deleted, added again (right shifts,
 * holes, holes filled); the hit rules themselves replaced with another
 * priority (an add then a delete) and the same priority with another
 * action word left as it is.  Each change is published by one store, so
 * no frame ever misses (the default drops and counts it), none goes to a
 * filler, and the kept rule's counter only grows.
 */
Test(traffic, single_changes_under_traffic_are_atomic, .timeout = 600)
{
	static const uint16_t ports[] = { 1, 2, 3, 4, 5, 999 };
	const char *blocks[] = { "sc", NULL };
	struct xtcam_ctx *c = NULL;
	struct xtcam_rule r;
	struct t_pair p;
	char pa[64], err[256], *o = NULL;
	long long last999 = 0, first999, k;
	time_t t0;
	int rd, st, i;
	pid_t kid;

	cr_assert_eq(t_pair_make(&p, "c"), 0);
	snprintf(pa, sizeof(pa), "/tmp/xtcam-%d-c.rules", (int)getpid());
	write_set(pa, 0);
	XT_OK("block add sc capacity 40000 default drop");
	XT_OK("rule load sc %s", pa);
	XT_OK("bind sc dev %s netns %s mode native", p.a, p.ns_a);
	unlink(pa);
	/* frames until the changes are done (the sender is stopped then) */
	kid = sender(&p, ports, 6, 600, &rd);
	usleep(300000);
	cr_assert_eq(xtcam_open(&c, 0, blocks, err, sizeof(err)), 0, "%s", err);
	first999 = lib_rule_packets(c, "sc", 999);
	t0 = time(NULL);
	for (i = 0; i < 10000; i++) {
		unsigned int port = 1 + (unsigned)(i / 4) % 5, h = 40000 + (unsigned)(i / 4) % 200;
		enum xtcam_rule_verb v;

		switch (i % 4) {
		case 0: /* a filler in the hit rule's chain, before it */
			parse_rule(&r, "prio %u handle %u ip_proto udp dst_port %u ip_tos 0x%x "
				   "action drop", 5 + (unsigned)i % 4, h, port, 4 + (i / 4) % 50);
			v = XTCAM_VERB_ADD;
			break;
		case 1: /* the hit rule, another priority (or back) */
			parse_rule(&r, "prio %u handle %u ip_proto udp dst_port %u action pass",
				   (i / 4) % 2 ? 10 : 12, port, port);
			v = XTCAM_VERB_REPLACE;
			break;
		case 2: /* the filler goes */
			memset(&r, 0, sizeof(r));
			r.handle = h;
			v = XTCAM_VERB_DEL;
			break;
		default: /* the kept rule, as it is */
			parse_rule(&r, "prio 10 handle 999 ip_proto udp dst_port 999 action pass");
			v = XTCAM_VERB_REPLACE;
			break;
		}
		cr_assert_eq(xtcam_cmd_rule(c, "sc", v, &r, err, sizeof(err)), 0, "change %d: %s", i,
			     err);
		if (i % 500 == 497) { /* after the filler's add and the hit rule's move */
			k = lib_rule_packets(c, "sc", h);
			cr_assert_eq(k, 0, "change %d: filler %u counted %lld frames", i, h, k);
		}
		if (i % 500 == 499) {
			k = lib_rule_packets(c, "sc", 999);
			cr_assert_geq(k, last999, "the kept rule's counter went back: %lld after %lld",
				      k, last999);
			last999 = k;
		}
	}
	fprintf(stderr, "single_changes_under_traffic: 10000 changes in %ld s\n",
		(long)(time(NULL) - t0));
	xtcam_close(c);
	kill(kid, SIGKILL);
	cr_assert_eq(waitpid(kid, &st, 0), kid);
	close(rd);
	usleep(100000);
	cr_assert_eq(t_xtcam(&o, "-j block show sc"), 0);
	cr_assert_eq(t_json_ll(o, "0.misses"), 0, "a frame fell through during the changes: %s", o);
	free(o);
	cr_assert_gt(last999 - first999, 100, "traffic flowed during the changes (%lld frames)",
		     last999 - first999);
	k = rule_packets("sc", 999);
	cr_assert_geq(k, last999);
}

Test(traffic, kill9_during_bind, .timeout = 300)
{
	struct t_pair p;
	int round;

	cr_assert_eq(t_pair_make(&p, "k"), 0);
	XT_OK("block add kb");
	XT_OK("rule add kb prio 1 ip_proto udp dst_port 9 action drop");
	for (round = 0; round < 8; round++) {
		char *o = NULL, *link = NULL;
		bool bound, attached;

		t_sh(NULL, "%s bind kb dev %s netns %s mode native & pid=$!; sleep 0.0%d; "
		     "kill -9 $pid 2>/dev/null; wait $pid", getenv("XTCAM_BIN"), p.a, p.ns_a, round);
		/* the next writer works, and leaves all of it or none of it
		 * (block show, a reader, repairs nothing) */
		cr_assert_eq(t_xtcam(&o, "counters reset kb"), 0, "%s", o);
		free(o);
		cr_assert_eq(t_xtcam(&o, "-j block show kb"), 0, "%s", o);
		bound = strstr(o, "\"dev\"") != NULL;
		free(o);
		cr_assert_eq(t_sh(&link, "ip -n %s link show %s", p.ns_a, p.a), 0);
		attached = strstr(link, "xtcam_parse") != NULL || strstr(link, "prog/xdp") != NULL;
		free(link);
		cr_assert_eq(bound, attached, "round %d: registry says %s, the device %s", round,
			     bound ? "bound" : "unbound", attached ? "has a program" : "has none");
		if (bound)
			XT_OK("unbind kb dev %s netns %s", p.a, p.ns_a);
		cr_assert_eq(t_sh(&link, "ip -n %s link show %s", p.ns_a, p.a), 0);
		cr_assert(!strstr(link, "prog/xdp"), "round %d: unbind left a program: %s", round, link);
		free(link);
	}
	/* and a clean bind still works afterwards */
	XT_OK("bind kb dev %s netns %s", p.a, p.ns_a);
}

/*
 * count_pass's frame counter, read with bpftool as a user would.  bpftool
 * finds a map by name by walking every map id, and gives up with "can't
 * get map by id" when one it listed is freed before it opens it: the maps
 * of programs other tests just closed go away a moment later.  So that
 * one error is retried; any other fails the test.
 */
static long long cp_hits(void)
{
	char *o = NULL;
	long long v;
	int rc, tries;

	for (tries = 0;; tries++) {
		rc = t_sh(&o, "bpftool -j map dump name cp_hits");
		if (rc == 0 || tries == 20 || !o || !strstr(o, "can't get map by id"))
			break;
		free(o);
		o = NULL;
		usleep(50000);
	}
	cr_assert_eq(rc, 0, "%s", o);
	v = t_json_ll(o, "0.formatted.value");
	free(o);
	return v;
}

/*
 * Somebody else's XDP program (count_pass, loaded with xdp-loader) on the
 * device a block binds to.  Where libxdp's dispatcher works, both run
 * while the block is bound and count_pass stays after unbind; where it
 * does not, bind refuses to replace it and says why, and `force` does.
 */
Test(traffic, next_to_another_xdp_program)
{
	char exe[4096], obj[4200], *o = NULL, *slash;
	struct pkt_spec s;
	struct t_pair p;
	long long before;
	ssize_t n;
	bool disp;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = 0;
	slash = strrchr(exe, '/');
	cr_assert(slash);
	*slash = 0;
	snprintf(obj, sizeof(obj), "%s/progs/count_pass.bpf.o", exe);
	cr_assert_eq(t_pair_make(&p, "o"), 0);
	other_pair = p;
	other_loaded = true;
	cr_assert_eq(t_sh(&o, "nsenter --net=/run/netns/%s xdp-loader load -m native %s %s", p.ns_a,
			  p.a, obj), 0, "xdp-loader load: %s", o);
	free(o);
	cr_assert_eq(t_sh(&o, "ip -n %s -d link show dev %s", p.ns_a, p.a), 0);
	disp = strstr(o, "xdp_dispatcher") != NULL;
	free(o);
	XT_OK("block add edge");
	XT_OK("rule add edge prio 10 handle 1 ip_proto udp dst_port 9 action drop");
	t_frame(&p, &s, 0);

	cr_log_info("count_pass %s", disp ? "in libxdp's dispatcher: xtcam joins it" :
		    "alone (no dispatcher here): xtcam refuses, then force");
	if (disp) {
		XT_OK("bind edge dev %s netns %s mode native", p.a, p.ns_a);
		cr_assert_eq(t_xtcam(&o, "-j block show edge"), 0);
		cr_assert_eq(t_json_ll(o, "0.bindings.0.dispatcher"), 1, "%s", o);
		free(o);
		before = cp_hits();
		s.dport = 9;
		cr_assert_eq(through(&p, &s, 0x7701, 10), 0, "udp/9 dropped by the block");
		s.dport = 10;
		cr_assert_eq(through(&p, &s, 0x7702, 10), 10, "udp/10 passes");
		cr_assert_geq(cp_hits() - before, 10, "count_pass still runs");
		cr_assert_eq(rule_packets("edge", 1), 10);
		XT_OK("unbind edge dev %s netns %s", p.a, p.ns_a);
		cr_assert_eq(t_sh(&o, "nsenter --net=/run/netns/%s xdp-loader status %s", p.ns_a, p.a), 0);
		cr_assert(strstr(o, "count_pass") && !strstr(o, "xtcam"),
			  "count_pass stays, ours goes: %s", o);
		free(o);
		before = cp_hits();
		s.dport = 9;
		cr_assert_eq(through(&p, &s, 0x7703, 10), 10, "after unbind udp/9 passes");
		cr_assert_geq(cp_hits() - before, 10, "and count_pass sees it");
	} else {
		cr_assert_eq(t_xtcam(&o, "bind edge dev %s netns %s mode native", p.a, p.ns_a), 1);
		cr_assert(strstr(o, "count_pass") && strstr(o, "force") && strstr(o, "(EBUSY)"),
			  "names the program and the way out: %s", o);
		free(o);
		cr_assert_eq(t_xtcam(&o, "-j block show edge"), 0);
		cr_assert_eq(t_json_ll(o, "0.bindings.#"), 0, "nothing bound: %s", o);
		free(o);
		before = cp_hits();
		s.dport = 9;
		cr_assert_eq(through(&p, &s, 0x7711, 10), 10, "count_pass alone: udp/9 passes");
		cr_assert_geq(cp_hits() - before, 10, "count_pass untouched");
		XT_OK("bind edge dev %s netns %s mode native force", p.a, p.ns_a);
		cr_assert_eq(t_xtcam(&o, "-j block show edge"), 0);
		cr_assert(strstr(o, "replaced") && strstr(o, "count_pass"), "%s", o);
		free(o);
		cr_assert_eq(through(&p, &s, 0x7712, 10), 0, "force: the block runs");
	}
}

/* a rule's bytes and last_used from `rule show -j` */
static json_object *rule_obj(json_object *arr, unsigned int handle)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *r = json_object_array_get_idx(arr, i), *h;

		if (json_object_object_get_ex(r, "handle", &h) &&
		    json_object_get_int64(h) == (int64_t)handle)
			return r;
	}
	return NULL;
}

/* packets, bytes and whether last_used is set, of rule handle */
static void rule_counts(const char *block, unsigned int handle, long long *pk, long long *by,
			bool *used)
{
	json_object *arr, *r, *v;
	char *o = NULL;

	cr_assert_eq(t_xtcam(&o, "-j rule show %s", block), 0, "%s", o);
	arr = json_tokener_parse(o);
	cr_assert(arr, "%s", o);
	r = rule_obj(arr, handle);
	cr_assert(r, "handle %u in %s", handle, o);
	cr_assert(json_object_object_get_ex(r, "packets", &v));
	*pk = json_object_get_int64(v);
	cr_assert(json_object_object_get_ex(r, "bytes", &v));
	*by = json_object_get_int64(v);
	*used = json_object_object_get_ex(r, "last_used", &v) && v;
	json_object_put(arr);
	free(o);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* Counters belong to rules: a replace keeps them for a rule that stays as
 * it was and starts a changed rule under the same handle at zero. */
Test(traffic, replace_keeps_counters_of_unchanged_rules_only)
{
	struct t_pair p;
	struct pkt_spec s;
	char path[64];
	long long pk, by;
	bool used;
	int port;

	cr_assert_eq(t_pair_make(&p, "k"), 0);
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.rules", (int)getpid());
	XT_OK("block add cnt");
	write_file(path, "prio 10 handle 1 ip_proto udp dst_port 9 action drop\n"
			 "prio 10 handle 2 ip_proto udp dst_port 10 action drop\n"
			 "prio 10 handle 3 ip_proto udp dst_port 11 action drop\n");
	XT_OK("rule load cnt %s", path);
	XT_OK("bind cnt dev %s netns %s mode generic", p.a, p.ns_a);
	t_frame(&p, &s, 0);
	for (port = 9; port <= 11; port++) {
		s.dport = (uint16_t)port;
		cr_assert_eq(through(&p, &s, 0x6600u + (uint32_t)port, 4), 0, "udp/%d dropped", port);
	}
	rule_counts("cnt", 1, &pk, &by, &used);
	cr_assert(pk == 4 && by > 0 && used, "before: %lld %lld %d", pk, by, used);

	/* handle 1 as it was, handle 2 changed (another port), handle 3 gone,
	 * handle 4 new */
	write_file(path, "prio 10 handle 1 ip_proto udp dst_port 9 action drop\n"
			 "prio 10 handle 2 ip_proto udp dst_port 12 action drop\n"
			 "prio 10 handle 4 ip_proto udp dst_port 11 action drop\n");
	XT_OK("rule load cnt %s replace", path);
	rule_counts("cnt", 1, &pk, &by, &used);
	cr_assert(pk == 4 && by > 0 && used, "unchanged rule keeps its counters: %lld %lld %d", pk,
		  by, used);
	rule_counts("cnt", 2, &pk, &by, &used);
	cr_assert(pk == 0 && by == 0 && !used, "changed rule starts at zero: %lld %lld %d", pk, by,
		  used);
	rule_counts("cnt", 4, &pk, &by, &used);
	cr_assert(pk == 0 && by == 0 && !used, "new rule starts at zero: %lld %lld %d", pk, by, used);

	/* the changed rule counts from there */
	s.dport = 12;
	cr_assert_eq(through(&p, &s, 0x6612, 3), 0, "udp/12 dropped");
	rule_counts("cnt", 2, &pk, &by, &used);
	cr_assert_eq(pk, 3, "%lld", pk);

	/* rule replace: the same rule keeps, only the action changed zeroes */
	XT_OK("rule replace cnt handle 1 prio 10 ip_proto udp dst_port 9 action drop");
	rule_counts("cnt", 1, &pk, &by, &used);
	cr_assert_eq(pk, 4, "same rule: %lld", pk);
	XT_OK("rule replace cnt handle 1 prio 10 ip_proto udp dst_port 9 action pass");
	rule_counts("cnt", 1, &pk, &by, &used);
	cr_assert(pk == 0 && !used, "action changed: %lld %d", pk, used);
	/* only the prio changed */
	XT_OK("rule replace cnt handle 2 prio 11 ip_proto udp dst_port 12 action drop");
	rule_counts("cnt", 2, &pk, &by, &used);
	cr_assert_eq(pk, 0, "prio changed: %lld", pk);

	/* a file without handles: handles 1, 2, 3 in order, and a rule keeps
	 * its counters when it equals the old rule of its handle */
	write_file(path, "prio 10 ip_proto udp dst_port 7 action drop\n"
			 "prio 10 ip_proto udp dst_port 8 action drop\n");
	XT_OK("rule load cnt %s replace", path);
	t_frame(&p, &s, 0);
	s.dport = 7;
	cr_assert_eq(through(&p, &s, 0x6607, 2), 0, "udp/7 dropped");
	s.dport = 8;
	cr_assert_eq(through(&p, &s, 0x6608, 5), 0, "udp/8 dropped");
	write_file(path, "prio 10 ip_proto udp dst_port 7 action drop\n"
			 "prio 10 ip_proto udp dst_port 6 action drop\n");
	XT_OK("rule load cnt %s replace", path);
	rule_counts("cnt", 1, &pk, &by, &used);
	cr_assert_eq(pk, 2, "same rule under handle 1: %lld", pk);
	rule_counts("cnt", 2, &pk, &by, &used);
	cr_assert_eq(pk, 0, "another rule under handle 2: %lld", pk);
	unlink(path);
}

/* the block's notes (`block show -j`), "" when it has none */
static char *block_notes(const char *block)
{
	json_object *arr, *notes;
	char *o = NULL, *r;

	cr_assert_eq(t_xtcam(&o, "-j block show %s", block), 0, "%s", o);
	arr = json_tokener_parse(o);
	cr_assert(arr, "%s", o);
	if (json_object_object_get_ex(json_object_array_get_idx(arr, 0), "notes", &notes))
		r = strdup(json_object_to_json_string(notes));
	else
		r = strdup("");
	json_object_put(arr);
	free(o);
	return r;
}

/* Frames that vanish: a native binding's redirect to a veth whose peer has
 * neither a native XDP program nor GRO drops every frame while the rule
 * counts it; `block show` says so, and stops saying so once the peer can
 * take them. */
Test(traffic, block_show_notes_frames_that_vanish)
{
	struct t_pair p;
	struct pkt_spec s;
	struct pkt f[5];
	struct t_rx rx;
	char out[16], peer[16], *n, *o = NULL;
	int i;

	cr_assert_eq(t_pair_make(&p, "v"), 0);
	snprintf(out, sizeof(out), "vo%d", (int)getpid() % 10000);
	snprintf(peer, sizeof(peer), "vp%d", (int)getpid() % 10000);
	cr_assert_eq(t_sh(NULL, "ip -n %s link add %s type veth peer name %s netns %s && "
			  "ip -n %s link set %s up && ip -n %s link set %s up && "
			  "ip netns exec %s ethtool -K %s gro off", p.ns_a, out, peer, p.ns_b,
			  p.ns_a, out, p.ns_b, peer, p.ns_b, peer), 0);
	XT_OK("block add vb");
	XT_OK("rule add vb prio 1 handle 1 ip_proto udp dst_port 5000 action redirect dev %s", out);
	n = block_notes("vb");
	cr_assert_str_eq(n, "", "unbound: nothing runs, no note: %s", n);
	free(n);
	XT_OK("bind vb dev %s netns %s mode native", p.a, p.ns_a);

	/* the frames vanish while the rule counts them ... */
	t_frame(&p, &s, 0);
	s.dport = 5000;
	for (i = 0; i < 5; i++)
		t_frame_build(&s, 0x9001, &f[i]);
	cr_assert_eq(t_rx_open(&rx, p.ns_b, peer), 0);
	cr_assert_eq(t_send(p.ns_b, p.b, f, 5), 5);
	cr_assert_eq(t_rx_count(&rx, 0x9001, 300), 0, "GRO off, no XDP on %s: dropped", peer);
	t_rx_close(&rx);
	cr_assert_eq(rule_packets("vb", 1), 5);
	/* ... and block show says so, in JSON and in text */
	n = block_notes("vb");
	cr_assert(strstr(n, "redirect dev ") && strstr(n, out) && strstr(n, peer) &&
		  strstr(n, "GRO off"), "%s", n);
	free(n);
	cr_assert_eq(t_xtcam(&o, "block show vb"), 0, "%s", o);
	cr_assert(strstr(o, "    note: redirect dev "), "%s", o);
	free(o);

	/* GRO on: the frames arrive, no note */
	cr_assert_eq(t_sh(NULL, "ip netns exec %s ethtool -K %s gro on", p.ns_b, peer), 0);
	n = block_notes("vb");
	cr_assert_str_eq(n, "", "%s", n);
	free(n);
	cr_assert_eq(t_rx_open(&rx, p.ns_b, peer), 0);
	cr_assert_eq(t_send(p.ns_b, p.b, f, 5), 5);
	cr_assert_eq(t_rx_count(&rx, 0x9001, 300), 5, "GRO on %s: delivered", peer);
	t_rx_close(&rx);

	/* GRO off with a native XDP program on the peer: no note either */
	cr_assert_eq(t_sh(NULL, "ip netns exec %s ethtool -K %s gro off && "
			  "ip -n %s link set dev %s xdpdrv obj build/tests/progs/count_pass.bpf.o "
			  "sec xdp", p.ns_b, peer, p.ns_b, peer), 0);
	n = block_notes("vb");
	cr_assert_str_eq(n, "", "%s", n);
	free(n);

	/* cpu N: on a native binding whose veth peer sends with tx checksum
	 * offload, and on a generic binding */
	XT_OK("rule add vb prio 2 handle 2 ip_proto udp dst_port 5001 action cpu 0");
	n = block_notes("vb");
	cr_assert(strstr(n, "action cpu on ") && strstr(n, p.b) && strstr(n, "tx checksum"),
		  "%s", n);
	free(n);
	cr_assert_eq(t_sh(NULL, "ip netns exec %s ethtool -K %s tx off", p.ns_b, p.b), 0);
	n = block_notes("vb");
	cr_assert_str_eq(n, "", "%s", n);
	free(n);
	XT_OK("unbind vb dev %s netns %s", p.a, p.ns_a);
	XT_OK("bind vb dev %s netns %s mode generic", p.a, p.ns_a);
	n = block_notes("vb");
	cr_assert(strstr(n, "action cpu on ") && strstr(n, "(generic)"), "%s", n);
	free(n);
	XT_OK("rule del vb handle 2");
	n = block_notes("vb");
	cr_assert_str_eq(n, "", "no cpu rule left: %s", n);
	free(n);
}

/* `rule show B handle H` (a lookup of its own), cut before its "used" age
 * (which moves on between two commands) */
static char *one_rule_text(const char *block, unsigned int handle)
{
	char *o = NULL, *u;

	cr_assert_eq(t_xtcam(&o, "rule show %s handle %u", block, handle), 0, "%s", o);
	u = strstr(o, " used ");
	if (u)
		*u = 0;
	return o;
}

/*
 * A listing of a block longer than the rules whose counters are looked up
 * one by one (the rest come from one read of the whole block's): every
 * rule shows the counters its own lookup shows, in text and JSON, early
 * rules and late ones, hit or not.
 */
Test(traffic, rule_show_of_a_long_block_shows_each_rules_counters, .timeout = 300)
{
	enum { N = 3000 };
	static const struct { unsigned int handle; int frames; } hit[] = {
		{ 7, 2 }, { 1100, 3 }, { 2048, 4 }, { 2999, 5 },
	};
	struct t_pair p;
	struct pkt_spec s;
	char path[64], *o = NULL, *e;
	FILE *f;
	size_t i;
	unsigned int h;

	cr_assert_eq(t_pair_make(&p, "w"), 0);
	snprintf(path, sizeof(path), "/tmp/xtcam-test-%d.rules", (int)getpid());
	f = fopen(path, "w");
	cr_assert(f, "%s", path);
	/* handle h at prio h: listed in handle order; udp port 10000 + h */
	for (h = 1; h <= N; h++)
		fprintf(f, "prio %u handle %u ip_proto udp dst_port %u action drop\n", h, h,
			10000 + h);
	fclose(f);
	XT_OK("block add long capacity 4096");
	XT_OK("rule load long %s", path);
	unlink(path);
	XT_OK("bind long dev %s netns %s mode native", p.a, p.ns_a);
	t_frame(&p, &s, 0);
	for (i = 0; i < sizeof(hit) / sizeof(hit[0]); i++) {
		s.dport = (uint16_t)(10000 + hit[i].handle);
		cr_assert_eq(through(&p, &s, 0x6700u + (uint32_t)i, hit[i].frames), 0,
			     "udp/%u dropped", s.dport);
	}

	/* JSON: the hit rules count their frames, the others nothing */
	cr_assert_eq(t_xtcam(&o, "-j rule show long"), 0, "%s", o);
	for (h = 1; h <= N; h++) {
		long long want = 0;

		for (i = 0; i < sizeof(hit) / sizeof(hit[0]); i++)
			if (hit[i].handle == h)
				want = hit[i].frames;
		cr_assert_eq(t_rule_field(o, h, "packets"), want, "handle %u", h);
	}
	free(o);

	/* text: each hit rule's two lines as its own lookup prints them */
	cr_assert_eq(t_xtcam(&o, "rule show long"), 0, "%s", o);
	for (i = 0; i < sizeof(hit) / sizeof(hit[0]); i++) {
		char *one = one_rule_text("long", hit[i].handle), *at;
		size_t len = strlen(one);

		cr_assert(strstr(one, "packets ") && !strstr(one, "packets 0 "), "%s", one);
		at = strstr(o, one);
		cr_assert(at, "the listing shows handle %u as its lookup does:\n%s",
			  hit[i].handle, one);
		e = at + len;
		cr_assert(!strncmp(e, " used ", 6), "handle %u: %.80s", hit[i].handle, at);
		free(one);
	}
	/* and an unhit late rule exactly */
	{
		char *one = one_rule_text("long", 2500);

		cr_assert(strstr(o, one), "handle 2500:\n%s", one);
		free(one);
	}
	free(o);
}
