// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "tnet.h"

const char *t_name(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "xt%d%s", (int)getpid(), tag);
	return buf;
}

static int vrun(char **out, const char *cmd)
{
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	char chunk[4096];
	size_t r;
	int st, rc;

	f = popen(cmd, "r");
	if (!f)
		return -1;
	while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (n + r + 1 > cap) {
			char *p;

			cap = (n + r + 1) * 2;
			p = realloc(buf, cap);
			if (!p)
				break;
			buf = p;
		}
		memcpy(buf + n, chunk, r);
		n += r;
	}
	if (buf)
		buf[n] = 0;
	st = pclose(f);
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	/* the CLI under ASan/UBSan (tests/run.sh): its report goes to the
	 * suite's output, which run.sh fails on, and no exit status that a
	 * test expects comes with it */
	if (buf && (strstr(buf, "ERROR: AddressSanitizer") || strstr(buf, "ERROR: LeakSanitizer") ||
		    strstr(buf, "runtime error:"))) {
		fprintf(stderr, "sanitizer report from `%s`:\n%s\n", cmd, buf);
		rc = T_SANITIZER_RC;
	}
	if (out)
		*out = buf ? buf : strdup("");
	else
		free(buf);
	return rc;
}

int t_sh(char **out, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return vrun(out, cmd);
}

int t_xtcam(char **out, const char *fmt, ...)
{
	const char *bin = getenv("XTCAM_BIN") ? getenv("XTCAM_BIN") : "build/xtcam";
	char args[8000], cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
	return vrun(out, cmd);
}

static char made[16][32];
static int nmade;

int t_netns_add(const char *ns)
{
	if (t_sh(NULL, "ip netns add %s", ns))
		return -1;
	if (nmade < 16)
		snprintf(made[nmade++], sizeof(made[0]), "%s", ns);
	t_sh(NULL, "ip -n %s link set lo up", ns);
	/* no router solicitations or MLD reports: only the tests' frames */
	t_sh(NULL, "ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
	     "net.ipv6.conf.default.disable_ipv6=1", ns);
	return 0;
}

void t_net_cleanup(void)
{
	int i;

	for (i = 0; i < nmade; i++)
		t_sh(NULL, "ip netns del %s", made[i]);
	nmade = 0;
}

static void mac_of(const char *ns, const char *dev, uint8_t *mac)
{
	char *out = NULL;
	unsigned int m[6];

	if (!t_sh(&out, "ip -n %s -br link show dev %s", ns, dev) && out) {
		char *p = strstr(out, ":");

		while (p && p > out && p[-1] != ' ')
			p--;
		if (p && sscanf(p, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6)
			for (int i = 0; i < 6; i++)
				mac[i] = (uint8_t)m[i];
	}
	free(out);
}

int t_pair_make(struct t_pair *p, const char *tag)
{
	char t[16];

	memset(p, 0, sizeof(*p));
	snprintf(t, sizeof(t), "%sa", tag);
	t_name(p->ns_a, sizeof(p->ns_a), t);
	snprintf(t, sizeof(t), "%sb", tag);
	t_name(p->ns_b, sizeof(p->ns_b), t);
	snprintf(p->a, sizeof(p->a), "va%s", tag);
	snprintf(p->b, sizeof(p->b), "vb%s", tag);
	if (t_netns_add(p->ns_a) || t_netns_add(p->ns_b))
		return -1;
	if (t_sh(NULL, "ip -n %s link add %s type veth peer name %s netns %s", p->ns_a, p->a,
		 p->b, p->ns_b) ||
	    t_sh(NULL, "ip -n %s link set %s up", p->ns_a, p->a) ||
	    t_sh(NULL, "ip -n %s link set %s up", p->ns_b, p->b))
		return -1;
	/* the tag must be in the frame XDP sees */
	t_sh(NULL, "ip netns exec %s ethtool -K %s txvlan off rxvlan off", p->ns_b, p->b);
	t_sh(NULL, "ip netns exec %s ethtool -K %s txvlan off rxvlan off", p->ns_a, p->a);
	mac_of(p->ns_a, p->a, p->mac_a);
	mac_of(p->ns_b, p->b, p->mac_b);
	return 0;
}

void t_pair_free(const struct t_pair *p)
{
	t_sh(NULL, "ip netns del %s", p->ns_a);
	t_sh(NULL, "ip netns del %s", p->ns_b);
}

static int enter(const char *ns, int *back)
{
	char path[96];
	int fd;

	*back = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || *back < 0 || setns(fd, CLONE_NEWNET)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void leave(int back)
{
	if (setns(back, CLONE_NEWNET))
		perror("setns");
	close(back);
}

static int packet_socket(const char *dev, int *ifindex)
{
	struct sockaddr_ll sll = { 0 };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	if (fd < 0)
		return -1;
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(dev);
	*ifindex = sll.sll_ifindex;
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

int t_send(const char *ns, const char *dev, const struct pkt *frames, int n)
{
	int back, fd, ifindex, i, sent = 0;

	if (enter(ns, &back))
		return -1;
	fd = packet_socket(dev, &ifindex);
	leave(back);
	if (fd < 0)
		return -1;
	for (i = 0; i < n; i++) {
		struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = ifindex,
					  .sll_halen = 6 };

		memcpy(to.sll_addr, frames[i].buf, 6);
		if (sendto(fd, frames[i].buf, (size_t)frames[i].len, 0, (struct sockaddr *)&to,
			   sizeof(to)) == frames[i].len)
			sent++;
	}
	close(fd);
	return sent;
}

int t_rx_open(struct t_rx *r, const char *ns, const char *dev)
{
	int back, ifindex;

	r->fd = -1;
	if (enter(ns, &back))
		return -1;
	r->fd = packet_socket(dev, &ifindex);
	leave(back);
	return r->fd < 0 ? -1 : 0;
}

int t_rx_count(struct t_rx *r, uint32_t marker, int ms)
{
	uint8_t buf[PKT_MAX];
	uint8_t m[4];
	int n = 0;
	struct timespec end, now;

	m[0] = marker >> 24;
	m[1] = marker >> 16;
	m[2] = marker >> 8;
	m[3] = (uint8_t)marker;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += (long)ms * 1000000;
	end.tv_sec += end.tv_nsec / 1000000000;
	end.tv_nsec %= 1000000000;
	for (;;) {
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
		long left;
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t len;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		len = recvfrom(r->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (len <= 0 || from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (memmem(buf, (size_t)len, m, 4))
			n++;
	}
	return n;
}

void t_rx_close(struct t_rx *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

void t_frame(const struct t_pair *p, struct pkt_spec *s, uint32_t marker)
{
	(void)marker;
	pkt_spec_init(s);
	memcpy(s->dst, p->mac_a, 6);
	memcpy(s->src, p->mac_b, 6);
	s->payload = 32;
}

void t_frame_build(const struct pkt_spec *s, uint32_t marker, struct pkt *out)
{
	int off;

	pkt_build(s, NULL, out);
	/* the marker at the end of the payload */
	off = out->len - 4;
	out->buf[off] = (uint8_t)(marker >> 24);
	out->buf[off + 1] = (uint8_t)(marker >> 16);
	out->buf[off + 2] = (uint8_t)(marker >> 8);
	out->buf[off + 3] = (uint8_t)marker;
}

int t_through(const struct t_pair *p, const struct pkt_spec *s, uint32_t marker, int n)
{
	struct pkt *f = calloc((size_t)n, sizeof(*f));
	struct t_rx rx;
	int i, got = -1;

	if (!f)
		return -1;
	for (i = 0; i < n; i++)
		t_frame_build(s, marker, &f[i]);
	if (!t_rx_open(&rx, p->ns_a, p->a)) {
		if (t_send(p->ns_b, p->b, f, n) == n)
			got = t_rx_count(&rx, marker, 300);
		t_rx_close(&rx);
	}
	free(f);
	return got;
}

/* path: "0.packets" -> array index then key; "bindings.0.mode" etc. */
long long t_json_ll(const char *json, const char *path)
{
	json_object *root = json_tokener_parse(json), *cur = root;
	char p[256], *tok, *save;
	long long v = -1;

	if (!root)
		return -1;
	snprintf(p, sizeof(p), "%s", path);
	for (tok = strtok_r(p, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(cur, json_type_array) && !strcmp(tok, "#")) {
			v = (long long)json_object_array_length(cur);   /* "#": the length */
			cur = NULL;
		} else if (json_object_is_type(cur, json_type_array))
			cur = json_object_array_get_idx(cur, (size_t)atoi(tok));
		else if (!json_object_object_get_ex(cur, tok, &cur))
			cur = NULL;
	}
	if (cur)
		v = json_object_get_int64(cur);
	json_object_put(root);
	return v;
}

long long t_rule_field(const char *json, unsigned int handle, const char *field)
{
	json_object *root = json_tokener_parse(json), *v;
	long long r = -1;
	size_t i;

	if (!root || !json_object_is_type(root, json_type_array))
		goto out;
	for (i = 0; i < json_object_array_length(root); i++) {
		json_object *o = json_object_array_get_idx(root, i);

		if (json_object_object_get_ex(o, "handle", &v) &&
		    json_object_get_int64(v) == (int64_t)handle &&
		    json_object_object_get_ex(o, field, &v)) {
			r = json_object_get_int64(v);
			break;
		}
	}
out:
	json_object_put(root);
	return r;
}
