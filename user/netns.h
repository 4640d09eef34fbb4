/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Entering a named network namespace (/run/netns/NAME, as `ip netns`
 * makes them) with setns(2), and coming back.  Only the calling thread
 * moves.  /sys is not remounted (unlike `ip netns exec`): bpffs stays the
 * caller's, which is what libxdp's pins and ours need; use netlink or
 * ioctl (if_nametoindex) to look at devices, not /sys/class/net.
 * Internal to libxtcam.
 */
#ifndef XTCAM_NETNS_H
#define XTCAM_NETNS_H

#include <stddef.h>

#define XTCAM_NETNS_DIR "/run/netns"

/* A name as `ip netns` accepts it: not empty, no '/', not "." or "..",
 * shorter than XTCAM_NETNS_MAX.  0 or -EINVAL. */
int xtcam_netns_name_ok(const char *name);

/*
 * Move the calling thread into namespace `name`; NULL or "" stays where it
 * is.  *saved receives the namespace to come back to (-1 when nothing
 * moved); hand it to xtcam_netns_leave() in every case.  Returns 0 or
 * -errno (-ENOENT: no such namespace) with err set.
 */
int xtcam_netns_enter(const char *name, int *saved, char *err, size_t errlen);

/* Go back to the namespace saved by xtcam_netns_enter and close it; a
 * saved value of -1 does nothing.  0 or -errno. */
int xtcam_netns_leave(int saved);

/* The identity of the caller's network namespace (inode of
 * /proc/self/ns/net), or 0 on error; or of a named one. */
unsigned long xtcam_netns_self_ino(void);
int xtcam_netns_ino(const char *name, unsigned long *ino);

#endif
