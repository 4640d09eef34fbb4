/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Attaching a block's parser program to an interface, through libxdp.
 * Internal to libxtcam (the xdp backend uses it).  All functions act in
 * the caller's current network namespace (see netns.h to enter one; an
 * ifindex means nothing outside its namespace).
 *
 * What is attached is a fresh instance of xtcam_parse that shares every
 * map of the block (the pins of xtcam_dp_pin, and the pinned parser's
 * frozen .rodata), so it tail-calls the classifier in the block's progs
 * array.  One instance per device; any number of devices, in any
 * namespaces, per block.  The attachment outlives the process: a plain
 * XDP attachment is held by the device, a dispatcher's by libxdp's pins
 * under <bpffs>/xdp.
 *
 * libxdp's messages are kept quiet (and used for errors and notes) unless
 * XTCAM_VERBOSE is set in the environment (2: with debug lines), which
 * also shows libbpf's warnings.
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

const char *xtcam_mode_name(enum xtcam_mode m);   /* "auto", "hw", ... */
/* auto, hw, native (or drv, driver), generic (or skb); -EINVAL */
int xtcam_mode_parse(const char *s, enum xtcam_mode *m);

/* What an attachment is, persisted by the loader and handed back for
 * detach and checks.  Plain data (no pointers, no fds), 176 bytes. */
struct xtcam_attach_info {
	__u32 mode;            /* enum xtcam_mode actually used: NATIVE or GENERIC */
	__u32 dispatcher;      /* 1: a component of libxdp's dispatcher;
	                        * 0: the device's only XDP program */
	__u32 prog_id;         /* our parser instance (the dispatcher's component
	                        * when dispatcher is 1); the identity checks use */
	__u32 ifindex;         /* in the namespace it was attached in */
	char  note[160];       /* why there is no dispatcher, what force
	                        * replaced, that auto fell back to generic;
	                        * "" when there is nothing to say */
};

/*
 * Attach the parser of the block whose maps are pinned in pin_dir
 * (xtcam_dp_pin) to ifindex.  mode NATIVE or GENERIC; AUTO is native, and
 * generic when the device has no native XDP (-EOPNOTSUPP); HW is
 * -EOPNOTSUPP (the offload path is separate).
 *
 * Through libxdp: where its dispatcher works, next to the programs in it;
 * where it does not, alone (dispatcher 0, note says why).  -EBUSY (err
 * names the device and the program: name, id, mode) when the device runs
 * an XDP program that is not ours and cannot be joined (a plain program,
 * a dispatcher in the other mode, or a dispatcher that refuses our
 * parser) unless force, which replaces it (noted).  -EBUSY whatever force
 * says when the device already runs an xtcam parser (this block's or
 * another's).  -ENODEV: no such ifindex here.  -ENOENT, -EUCLEAN: pin_dir
 * is not a complete block.  Returns 0 or -errno with err set; on error
 * *info is zeroed.
 */
int xtcam_attach(const char *pin_dir, int ifindex, enum xtcam_mode mode,
		 bool force, struct xtcam_attach_info *info, char *err,
		 size_t errlen);

/*
 * Detach exactly what xtcam_attach attached: the program with
 * info->prog_id, only if it is still on info->ifindex; other programs
 * stay (in the dispatcher, which libxdp rebuilds without ours, or
 * untouched).  -ENOENT when it is no longer attached (detached already,
 * replaced, device gone); for a dispatcher component whose device went
 * away it also removes our stale pins from libxdp's directory, which
 * would otherwise keep the program and the block's maps alive.
 */
int xtcam_detach(const struct xtcam_attach_info *info, char *err, size_t errlen);

/* 1 if our instance is still attached on info->ifindex (directly or in
 * the dispatcher), 0 if not (device gone, program replaced; a new device
 * with the same ifindex is not ours: program ids decide), -errno on
 * error (-EINVAL: not an attachment). */
int xtcam_attach_check(const struct xtcam_attach_info *info);

#endif
