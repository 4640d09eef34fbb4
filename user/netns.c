// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Entering named network namespaces and coming back (see netns.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "xtcam/rule.h"
#include "netns.h"

static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

int xtcam_netns_name_ok(const char *name)
{
	size_t n;

	if (!name)
		return -EINVAL;
	n = strlen(name);
	if (!n || n >= XTCAM_NETNS_MAX || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	return 0;
}

static int open_named(const char *name, char *err, size_t errlen)
{
	char path[sizeof(XTCAM_NETNS_DIR) + XTCAM_NETNS_MAX + 1];
	int fd;

	if (xtcam_netns_name_ok(name)) {
		set_err(err, errlen, "netns '%s': invalid name", name);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%s", XTCAM_NETNS_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = -errno;

		set_err(err, errlen, "netns %s: %s: %s", name, path, strerror(-e));
		return e;
	}
	return fd;
}

int xtcam_netns_enter(const char *name, int *saved, char *err, size_t errlen)
{
	int self, fd, e;

	*saved = -1;
	if (!name || !*name)
		return 0;
	fd = open_named(name, err, errlen);
	if (fd < 0)
		return fd;
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		e = -errno;
		set_err(err, errlen, "netns %s: /proc/self/ns/net: %s", name,
			strerror(-e));
		close(fd);
		return e;
	}
	if (setns(fd, CLONE_NEWNET)) {
		e = -errno;
		set_err(err, errlen, "netns %s: setns: %s", name, strerror(-e));
		close(fd);
		close(self);
		return e;
	}
	close(fd);
	*saved = self;
	return 0;
}

int xtcam_netns_leave(int saved)
{
	int e = 0;

	if (saved < 0)
		return 0;
	if (setns(saved, CLONE_NEWNET))
		e = -errno;
	close(saved);
	return e;
}

unsigned long xtcam_netns_self_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (unsigned long)st.st_ino;
}

int xtcam_netns_ino(const char *name, unsigned long *ino)
{
	struct stat st;
	int fd;

	if (!name || !*name) {
		*ino = xtcam_netns_self_ino();
		return *ino ? 0 : -errno;
	}
	fd = open_named(name, NULL, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	*ino = (unsigned long)st.st_ino;
	return 0;
}
