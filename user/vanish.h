/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Configurations in which frames vanish after a rule counted them (see
 * vanish.c and docs/counters-and-actions.md); internal. */
#ifndef XTCAM_VANISH_H
#define XTCAM_VANISH_H

#include <stddef.h>

/* A native binding's redirect to dev in netns: 1 and a note when dev is a
 * veth whose peer drops what is sent to it, 0 when not (or not known),
 * -errno. */
int xtcam_redirect_note(const char *netns, const char *dev, char *note, size_t len);
/* `cpu N` on a native binding to dev in netns: 1 and a note when dev is a
 * veth whose peer sends with tx checksum offload, 0 when not, -errno. */
int xtcam_cpu_note(const char *netns, const char *dev, char *note, size_t len);

#endif
