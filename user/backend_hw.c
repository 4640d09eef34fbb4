// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The hw backend: NIC offload (XDP_FLAGS_HW_MODE, device-bound programs
 * and maps).  First it asks the device whether it takes offloaded XDP at
 * all, with the smallest program bound to it; the kernel's answer is the
 * reason shown when it does not.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "loader_int.h"
#include "nsenter.h"

/* 0 if the device accepts an offloaded XDP program */
static int hw_probe(const char *netns, __u32 ifindex, char *why, size_t len)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_ifindex = ifindex);
	int nsfd, saved, fd, e;

	e = xtcam_ns_open(netns, &nsfd, NULL, why, len);
	if (e)
		return e;
	e = xtcam_ns_enter(nsfd, &saved);
	close(nsfd);
	if (e)
		return e;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xtcam_hw_probe", "Dual BSD/GPL", prog, 2, &o);
	e = fd < 0 ? -errno : 0;
	xtcam_ns_leave(saved);
	if (fd >= 0)
		close(fd);
	if (e)
		snprintf(why, len, "the device takes no offloaded program (kernel: %s)",
			 strerror(-e));
	return e;
}

int xtcam_hw_setup(struct flow_block_offload *f, struct xtcam_dev *dev, void *priv)
{
	struct xtcam_ctx *ctx = priv;
	char why[XTCAM_ERRMSG_MAX];
	int e;

	switch (f->command) {
	case FLOW_BLOCK_BIND:
		if (f->binder_type != FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS) {
			flow_block_errmsg(f, "XDP sees only ingress traffic");
			return -EOPNOTSUPP;
		}
		e = hw_probe(ctx->req.netns, dev->ifindex, why, sizeof(why));
		if (e) {
			flow_block_errmsg(f, "%s", why);
			return e;
		}
		flow_block_errmsg(f, "offload of the classifier is not built in this version");
		return -EOPNOTSUPP;
	case FLOW_BLOCK_UNBIND:
		return -ENOENT;
	default:
		return -EOPNOTSUPP;
	}
}
