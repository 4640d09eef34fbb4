// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nsenter.h"
#include "errmsg.h"

int xtcam_ns_open(const char *name, int *fd_out, struct xtcam_net *id, char *err,
		  size_t errlen)
{
	char path[128];
	struct stat s;
	int fd;

	if (name && *name) {
		if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
		    strlen(name) >= 64) {
			xtcam_set_err(err, errlen, "netns %s: not a namespace name", name);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	} else {
		snprintf(path, sizeof(path), "/proc/self/ns/net");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		xtcam_set_err(err, errlen, "netns %s: %s", name && *name ? name : "(own)",
			e == ENOENT ? "no such namespace" : strerror(e));
		return -e;
	}
	if (fstat(fd, &s)) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (id) {
		id->dev = s.st_dev;
		id->ino = s.st_ino;
	}
	if (fd_out)
		*fd_out = fd;
	else
		close(fd);
	return 0;
}

int xtcam_ns_enter(int nsfd, int *saved)
{
	int cur = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (cur < 0)
		return -errno;
	if (setns(nsfd, CLONE_NEWNET)) {
		int e = errno;

		close(cur);
		return -e;
	}
	*saved = cur;
	return 0;
}

void xtcam_ns_leave(int saved)
{
	if (saved < 0)
		return;
	if (setns(saved, CLONE_NEWNET))
		perror("xtcam: setns back");
	close(saved);
}

int xtcam_ns_enter_name(const char *name, int *saved, char *err, size_t errlen)
{
	int fd, e;

	*saved = -1;
	if (!name || !*name)
		return 0;
	e = xtcam_ns_open(name, &fd, NULL, err, errlen);
	if (e)
		return e;
	e = xtcam_ns_enter(fd, saved);
	close(fd);
	if (e)
		xtcam_set_err(err, errlen, "netns %s: cannot enter: %s", name, strerror(-e));
	return e;
}

int xtcam_ns_ifindex(const char *name, const char *dev, __u32 *ifindex, char *err,
		     size_t errlen)
{
	int saved, e;
	unsigned int idx;

	if (!dev || !*dev || strlen(dev) >= IF_NAMESIZE) {
		xtcam_set_err(err, errlen, "dev %s: not a device name", dev ? dev : "");
		return -EINVAL;
	}
	e = xtcam_ns_enter_name(name, &saved, err, errlen);
	if (e)
		return e;
	idx = if_nametoindex(dev);
	xtcam_ns_leave(saved);
	if (!idx) {
		xtcam_set_err(err, errlen, "dev %s: no such device%s%s", dev,
			name && *name ? " in netns " : "", name && *name ? name : "");
		return -ENODEV;
	}
	*ifindex = idx;
	return 0;
}

int xtcam_ns_ifname(const char *name, __u32 ifindex, char *dev, size_t len)
{
	char buf[IF_NAMESIZE];
	int saved, e;

	e = xtcam_ns_enter_name(name, &saved, NULL, 0);
	if (e)
		return e;
	e = if_indextoname(ifindex, buf) ? 0 : -ENODEV;
	xtcam_ns_leave(saved);
	if (!e)
		snprintf(dev, len, "%s", buf);
	return e;
}
