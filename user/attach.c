// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Placeholder until the libxdp attach layer lands (branch attach). */
#include <errno.h>
#include <stdio.h>
#include "attach.h"

int xtcam_attach(const char *pin_dir, int ifindex, enum xtcam_mode mode, bool force,
		 struct xtcam_attach_info *info, char *err, size_t errlen)
{
	(void)pin_dir; (void)ifindex; (void)mode; (void)force; (void)info;
	snprintf(err, errlen, "attach: not built yet");
	return -EOPNOTSUPP;
}

int xtcam_detach(const struct xtcam_attach_info *info, char *err, size_t errlen)
{
	(void)info; (void)err; (void)errlen;
	return -ENOENT;
}

int xtcam_attach_check(const struct xtcam_attach_info *info)
{
	(void)info;
	return 0;
}
