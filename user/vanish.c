// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Frames that vanish: configurations the kernel accepts in which a rule
 * counts its hits while every frame it sends on is dropped further down,
 * with nothing in xtcam's counters to show it.  `block show` notes them;
 * docs/counters-and-actions.md explains them.  Two are found here, both on veth:
 *
 * - A redirect (through the devmap, from a native binding) to a veth whose
 *   peer has neither a native XDP program nor GRO on: veth's ndo_xdp_xmit
 *   needs the peer's NAPI, which only those two enable, and drops the
 *   frames otherwise (the xdp:xdp_devmap_xmit tracepoint shows them as
 *   drops).
 * - `cpu N` from a native binding on a veth whose peer sends with tx
 *   checksum offload: frames of local sockets carry a partial checksum,
 *   which the cpumap's rebuilt skb no longer says, and the stack drops
 *   them as bad checksums.
 *
 * The peer of a veth may live in another namespace: the link's
 * IFLA_LINK_NETNSID is matched against the ids (RTM_GETNSID) of this
 * process's namespace and of those named in /run/netns; a peer in an
 * unnamed namespace is not looked at.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <bpf/libbpf.h>
#include "xtcam/rule.h"
#include "nsenter.h"
#include "vanish.h"

/* a NETLINK_ROUTE socket in namespace netns */
static int nl_open(const char *netns)
{
	struct timeval tv = { .tv_sec = 1 };
	int saved, fd;

	if (xtcam_ns_enter_name(netns, &saved, NULL, 0))
		return -1;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	xtcam_ns_leave(saved);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* send req, receive the one answer into buf: its length, or -errno */
static int nl_ask(int fd, struct nlmsghdr *req, char *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	ssize_t n;

	req->nlmsg_flags = NLM_F_REQUEST;
	req->nlmsg_seq = 1;
	if (sendto(fd, req, req->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	n = recv(fd, buf, len, 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(h, (size_t)n))
		return -EIO;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		return e->error ? e->error : -EIO;
	}
	return (int)n;
}

static void add_attr(struct nlmsghdr *h, unsigned short type, const void *data,
		     unsigned short len)
{
	struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

struct link {
	int veth;               /* IFLA_INFO_KIND "veth" */
	__u32 peer;             /* IFLA_LINK */
	int has_nsid;
	__s32 nsid;             /* IFLA_LINK_NETNSID */
};

static int get_link(int fd, __u32 ifindex, struct link *l)
{
	char buf[16384];
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
		char attrs[64];
	} req;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct ifinfomsg *ifi;
	struct rtattr *a, *b;
	int n, len, blen;

	memset(&req, 0, sizeof(req));
	memset(l, 0, sizeof(*l));
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.i));
	req.h.nlmsg_type = RTM_GETLINK;
	req.i.ifi_family = AF_UNSPEC;
	req.i.ifi_index = (int)ifindex;
	n = nl_ask(fd, &req.h, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (h->nlmsg_type != RTM_NEWLINK)
		return -EIO;
	ifi = NLMSG_DATA(h);
	len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));
	for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case IFLA_LINK:
			l->peer = *(__u32 *)RTA_DATA(a);
			break;
		case IFLA_LINK_NETNSID:
			l->has_nsid = 1;
			l->nsid = *(__s32 *)RTA_DATA(a);
			break;
		case IFLA_LINKINFO:
			blen = (int)RTA_PAYLOAD(a);
			for (b = RTA_DATA(a); RTA_OK(b, blen); b = RTA_NEXT(b, blen))
				if (b->rta_type == IFLA_INFO_KIND &&
				    !strncmp(RTA_DATA(b), "veth", RTA_PAYLOAD(b)))
					l->veth = 1;
			break;
		}
	}
	return 0;
}

/* the id that the namespace of fd has for namespace nsfd, or -1 */
static __s32 nsid_of(int fd, int nsfd)
{
	char buf[1024];
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
		char attrs[64];
	} req;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct rtattr *a;
	__u32 v = (__u32)nsfd;
	int n, len;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.g));
	req.h.nlmsg_type = RTM_GETNSID;
	req.g.rtgen_family = AF_UNSPEC;
	add_attr(&req.h, NETNSA_FD, &v, sizeof(v));
	n = nl_ask(fd, &req.h, buf, sizeof(buf));
	if (n < 0 || h->nlmsg_type != RTM_NEWNSID)
		return -1;
	len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(struct rtgenmsg));
	for (a = (struct rtattr *)((char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct rtgenmsg)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == NETNSA_NSID)
			return *(__s32 *)RTA_DATA(a);
	return -1;
}

/* the name ("" for this process's own) of the namespace that the
 * namespace of fd calls nsid: 0, or -ENOENT */
static int ns_named(int fd, __s32 nsid, char *name, size_t len)
{
	struct dirent *de;
	DIR *d;
	int nsfd, found = -ENOENT;

	if (!xtcam_ns_open("", &nsfd, NULL, NULL, 0)) {
		if (nsid_of(fd, nsfd) == nsid) {
			snprintf(name, len, "%s", "");
			found = 0;
		}
		close(nsfd);
	}
	d = found ? opendir("/run/netns") : NULL;
	while (d && found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || xtcam_ns_open(de->d_name, &nsfd, NULL, NULL, 0))
			continue;
		if (strlen(de->d_name) < len && nsid_of(fd, nsfd) == nsid) {
			memcpy(name, de->d_name, strlen(de->d_name) + 1);
			found = 0;
		}
		close(nsfd);
	}
	if (d)
		closedir(d);
	return found;
}

/* The veth peer of dev in netns: 1 and its namespace and ifindex, 0 when
 * dev is no veth or its peer cannot be found, -errno. */
static int veth_peer(const char *netns, const char *dev, char *pns, size_t pnslen,
		     __u32 *pifindex)
{
	struct link l;
	__u32 ifindex;
	int fd, e;

	if (xtcam_ns_ifindex(netns, dev, &ifindex, NULL, 0))
		return 0;
	fd = nl_open(netns);
	if (fd < 0)
		return -errno;
	e = get_link(fd, ifindex, &l);
	if (!e && (!l.veth || !l.peer))
		e = 1;                  /* not a veth, or no peer */
	if (!e && l.has_nsid)
		e = ns_named(fd, l.nsid, pns, pnslen) ? 1 : 0;
	else if (!e)
		snprintf(pns, pnslen, "%s", netns ? netns : "");
	close(fd);
	if (e)
		return e < 0 ? e : 0;
	*pifindex = l.peer;
	return 1;
}

struct peer_state {
	char name[IF_NAMESIZE];
	int xdp_native;         /* a native (driver) XDP program */
	int gro, txcsum;
};

static int ethtool_get(int sk, const char *dev, __u32 cmd, int *val)
{
	struct ethtool_value ev = { .cmd = cmd };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&ev;
	if (ioctl(sk, SIOCETHTOOL, &ifr))
		return -errno;
	*val = !!ev.data;
	return 0;
}

static int peer_state(const char *pns, __u32 ifindex, struct peer_state *ps)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int saved, sk, e;

	memset(ps, 0, sizeof(*ps));
	e = xtcam_ns_enter_name(pns, &saved, NULL, 0);
	if (e)
		return e;
	if (!if_indextoname(ifindex, ps->name)) {
		e = -errno;
		goto out;
	}
	if (!bpf_xdp_query((int)ifindex, 0, &q))
		ps->xdp_native = q.drv_prog_id != 0;
	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sk < 0) {
		e = -errno;
		goto out;
	}
	e = ethtool_get(sk, ps->name, ETHTOOL_GGRO, &ps->gro);
	if (!e)
		e = ethtool_get(sk, ps->name, ETHTOOL_GTXCSUM, &ps->txcsum);
	close(sk);
out:
	xtcam_ns_leave(saved);
	return e;
}

static void where(char *buf, size_t len, const char *dev, const char *netns)
{
	snprintf(buf, len, "%s%s%s", dev, netns && *netns ? " netns " : "",
		 netns && *netns ? netns : "");
}

/* The state of dev's veth peer, and where each is, for a note: 1 when dev
 * is a veth whose peer was found, 0 when not, or a negative errno. */
static int peer_of(const char *netns, const char *dev, struct peer_state *ps, char *at,
		   char *pat, size_t len)
{
	char pns[XTCAM_NETNS_MAX] = "";
	__u32 peer = 0;
	int e = veth_peer(netns, dev, pns, sizeof(pns), &peer);

	if (e <= 0)
		return e;
	e = peer_state(pns, peer, ps);
	if (e)
		return e;
	where(at, len, dev, netns);
	where(pat, len, ps->name, pns);
	return 1;
}

#define WHERE_MAX (IF_NAMESIZE + XTCAM_NETNS_MAX + 8)

int xtcam_redirect_note(const char *netns, const char *dev, char *note, size_t len)
{
	char at[WHERE_MAX], pat[WHERE_MAX];
	struct peer_state ps;
	int e = peer_of(netns, dev, &ps, at, pat, WHERE_MAX);

	if (e <= 0 || ps.xdp_native || ps.gro)
		return e < 0 ? e : 0;
	snprintf(note, len, "redirect dev %s: its veth peer %s has no native XDP program and GRO "
		 "off: the kernel drops every frame redirected there while the rule counts it "
		 "(ethtool -K %s gro on, or an XDP program on %s)", at, pat, ps.name, ps.name);
	return 1;
}

int xtcam_cpu_note(const char *netns, const char *dev, char *note, size_t len)
{
	char at[WHERE_MAX], pat[WHERE_MAX];
	struct peer_state ps;
	int e = peer_of(netns, dev, &ps, at, pat, WHERE_MAX);

	if (e <= 0 || !ps.txcsum)
		return e < 0 ? e : 0;
	snprintf(note, len, "action cpu on %s: its veth peer %s has tx checksum offload on: "
		 "frames its local sockets send reach the CPU with a partial checksum and the "
		 "stack drops them as bad checksums while the rule counts them "
		 "(ethtool -K %s tx off)", at, pat, ps.name);
	return 1;
}
