/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What xtcam keeps in bpffs so that it outlives the CLI: the registry of
 * blocks, their rules and their bindings (maps pinned under
 * /sys/fs/bpf/xtcam/, with BTF so bpftool prints field names).  Shared by
 * the state BPF object and libxtcam.  No libc.
 */
#ifndef XTCAM_STATE_H
#define XTCAM_STATE_H

#include <linux/types.h>
#include "key.h"
#include "table.h"

#define XTCAM_STATE_NAME   32
#define XTCAM_STATE_IFNAME 16
#define XTCAM_STATE_NETNS  64
#define XTCAM_STATE_NOTE   192
#define XTCAM_STATE_OFFLOAD 64

/* blocks: name -> */
struct xtcam_block_key {
	char name[XTCAM_STATE_NAME];
};

struct xtcam_block_rec {
	char  name[XTCAM_STATE_NAME];
	__u32 id;              /* key of its rules in the rules map */
	__u32 capacity;
	struct xtcam_action dflt;
	struct xtcam_raw_spec raw[2];
	__u32 rgen;            /* active generation of its rules, 0 or 1 */
	__u32 dirty;           /* a change was under way (crash recovery) */
	__u32 nrules;
	__u32 nentries;
	__u64 seq;             /* changes applied */
	__u32 max_handle;      /* the highest handle held since the block was
				* last empty: `rule add` without a handle
				* takes the next one */
	__u32 pad;
};

/* rules: (block id, generation, handle) -> struct xtcam_rule */
struct xtcam_rule_key {
	__u32 block;
	__u32 gen;
	__u32 handle;
};

/*
 * ranks: a block's rules in (prio, handle) order, one LPM trie for every
 * block and both generations: a trie gives its full-length keys back from
 * get_next_key in increasing order, so a walk from the block's marker
 * (prio 0, handle 0, a rank no rule has) reads that block's rules and no
 * other's.  Fields big-endian (the trie compares bytes); prefixlen is
 * always 128.  Each generation's keys cover every rule of that generation
 * in the rules map (a key is written before its rule, removed after it).
 */
struct xtcam_rank_key {
	__u32 prefixlen;
	__be32 block;
	__be32 gen;
	__be32 prio;
	__be32 handle;
};

/* bindings: (netns identity, ifindex) -> */
struct xtcam_bind_key {
	__u64 ns_dev;
	__u64 ns_ino;
	__u32 ifindex;
	__u32 pad;
};

enum xtcam_bind_state {
	XTCAM_BIND_ACTIVE  = 1,
	XTCAM_BIND_PENDING = 2,   /* being set up: undone if found after a crash */
	XTCAM_BIND_UNBINDING = 3, /* being taken down: finished if found after
				   * a crash */
};

struct xtcam_bind_rec {
	char  block[XTCAM_STATE_NAME];
	char  dev[XTCAM_STATE_IFNAME];
	char  netns[XTCAM_STATE_NETNS];   /* "" = the root namespace */
	char  mode[16];                   /* backend that took it */
	char  requested[16];              /* auto, hw, native, generic */
	char  refused[XTCAM_STATE_NOTE];  /* why better modes were refused */
	char  note[XTCAM_STATE_NOTE];     /* e.g. no libxdp dispatcher */
	char  offload[XTCAM_STATE_OFFLOAD]; /* hw: the offload device,
					   * "DRIVER/BUS_INFO" */
	__u32 state;                      /* enum xtcam_bind_state */
	__u32 binder;                     /* enum flow_block_binder_type */
	__u32 attach_mode;                /* struct xtcam_attach_info */
	__u32 dispatcher;
	__u32 prog_id;
	__u32 ifindex;
	__u64 ns_dev, ns_ino;
	__u64 bound_at;                   /* CLOCK_REALTIME seconds */
};

#endif
