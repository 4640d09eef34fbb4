// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Fill xdp-filter's port table to N entries in one batch: the xdp-filter
 * CLI takes tens of seconds per 10,000 rules (one command each), so the
 * live benchmark lets the CLI add port 9 and copies its value to ports
 * 10 .. N+8 here.  The program is the one attached to DEV in NETNS.
 *
 * Usage: xf_fill NETNS DEV N      (exit 0, or 1 with a message)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int prog_of(const char *netns, const char *dev, __u32 *id)
{
	char path[256];
	int self = open("/proc/self/ns/net", O_RDONLY), fd, err = 0, ifindex;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY);
	if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		err = -errno;
		goto out;
	}
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex)
		err = -errno;
	else
		err = bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, id);
	if (!err && !*id)
		err = -ENOENT;
	if (setns(self, CLONE_NEWNET) && !err)
		err = -errno;
out:
	if (self >= 0)
		close(self);
	if (fd >= 0)
		close(fd);
	return err;
}

static int map_of(__u32 prog_id, const char *name)
{
	__u32 ids[16], i;
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int pfd = bpf_prog_get_fd_by_id(prog_id);

	if (pfd < 0)
		return -errno;
	info.nr_map_ids = 16;
	info.map_ids = (unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len)) {
		close(pfd);
		return -errno;
	}
	close(pfd);
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
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

int main(int argc, char **argv)
{
	int ncpu = libbpf_num_possible_cpus(), n, i, mfd, err;
	__u32 id = 0, k9 = htons(9), count;
	__u64 *vals, tmpl[256];
	__u32 *keys;

	if (argc != 4 || (n = atoi(argv[3])) < 1 || n > 65000 || ncpu <= 0 || ncpu > 256) {
		fprintf(stderr, "usage: xf_fill NETNS DEV N (1-65000)\n");
		return 1;
	}
	err = prog_of(argv[1], argv[2], &id);
	if (err) {
		fprintf(stderr, "xf_fill: no XDP program on %s in %s: %s\n", argv[2], argv[1], strerror(-err));
		return 1;
	}
	mfd = map_of(id, "filter_ports");
	if (mfd < 0) {
		fprintf(stderr, "xf_fill: program %u has no filter_ports map\n", id);
		return 1;
	}
	if (bpf_map_lookup_elem(mfd, &k9, tmpl)) {
		fprintf(stderr, "xf_fill: port 9 is not in the table: %s\n", strerror(errno));
		return 1;
	}
	if (n == 1)
		return 0;
	keys = calloc((size_t)n, sizeof(*keys));
	vals = calloc((size_t)n * (size_t)ncpu, sizeof(*vals));
	if (!keys || !vals)
		return 1;
	for (i = 0; i < n - 1; i++) {
		keys[i] = htons((__u16)(10 + i));
		memcpy(vals + (size_t)i * (size_t)ncpu, tmpl, sizeof(__u64) * (size_t)ncpu);
	}
	count = (__u32)(n - 1);
	if (bpf_map_update_batch(mfd, keys, vals, &count, NULL)) {
		fprintf(stderr, "xf_fill: batch update: %s\n", strerror(errno));
		return 1;
	}
	free(keys);
	free(vals);
	close(mfd);
	return 0;
}
