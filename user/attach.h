/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Attaching a block's parser program to an interface, through libxdp.
 * Internal to libxtcam (the xdp backend uses it).  All functions act in
 * the caller's current network namespace (see netns.h to enter one).
 */
#ifndef XTCAM_ATTACH_H
#define XTCAM_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum xtcam_mode {
	XTCAM_MODE_AUTO = 0,
	XTCAM_MODE_HW,
	XTCAM_MODE_NATIVE,
	XTCAM_MODE_GENERIC,
};

const char *xtcam_mode_name(enum xtcam_mode m);
int xtcam_mode_parse(const char *s, enum xtcam_mode *m);

/* What an attachment is, persisted by the loader and handed back for
 * detach and checks. */
struct xtcam_attach_info {
	__u32 mode;            /* enum xtcam_mode actually used */
	__u32 dispatcher;      /* 1: through libxdp's dispatcher */
	__u32 prog_id;         /* our parser program instance on this device */
	__u32 ifindex;
	char  note[160];       /* e.g. why there is no dispatcher */
};

/* Attach the parser program of the block whose maps are pinned in
 * pin_dir (xtcam_dp_pin) to ifindex, in mode NATIVE or GENERIC.  Refuses
 * (-EBUSY, message) to replace another XDP program unless force.  Returns
 * 0 or -errno with err set. */
int xtcam_attach(const char *pin_dir, int ifindex, enum xtcam_mode mode,
		 bool force, struct xtcam_attach_info *info, char *err,
		 size_t errlen);

/* Detach what xtcam_attach attached; other programs on the interface stay.
 * -ENOENT when it is no longer attached. */
int xtcam_detach(const struct xtcam_attach_info *info, char *err, size_t errlen);

/* 1 if the attachment is still in place, 0 if not (device gone, program
 * replaced), -errno on error. */
int xtcam_attach_check(const struct xtcam_attach_info *info);

#endif
