/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Network namespaces by name (/run/netns/NAME, as ip-netns(8)); internal. */
#ifndef XTCAM_NSENTER_H
#define XTCAM_NSENTER_H

#include <stddef.h>
#include "xtcam/flow_block.h"

/* Open namespace name ("" or NULL: this process's own); its identity. */
int xtcam_ns_open(const char *name, int *fd, struct xtcam_net *id, char *err, size_t errlen);
/* Enter nsfd; *saved gets a handle to come back with xtcam_ns_leave(). */
int xtcam_ns_enter(int nsfd, int *saved);
void xtcam_ns_leave(int saved);
/* Open and enter namespace name in one step; "" or NULL stays here and
 * sets *saved to -1 (xtcam_ns_leave(-1) does nothing).  Fails with the
 * name in err and the process where it was. */
int xtcam_ns_enter_name(const char *name, int *saved, char *err, size_t errlen);
/* ifindex of dev inside namespace name: -ENODEV when there is none */
int xtcam_ns_ifindex(const char *name, const char *dev, __u32 *ifindex, char *err,
		     size_t errlen);
/* name of the device with ifindex inside namespace name, or -ENODEV */
int xtcam_ns_ifname(const char *name, __u32 ifindex, char *dev, size_t len);

#endif
