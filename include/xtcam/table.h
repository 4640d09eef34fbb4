/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Layout of the classifier's BPF maps: TCAM records (value, mask, port ranges,
 * priority), the action table, counters, the tuple table and bucket array of
 * the lookup structure, and the per-block configuration.  Shared by the BPF
 * programs and libxtcam.  No libc.
 *
 * Lookup structure (TupleMerge-style tuple space search):
 *   - a tuple is a coarse mask over the key; every rule in a tuple cares about
 *     (at least) all the bits of the tuple's mask;
 *   - a rule lives in one bucket: hash(rule value & tuple mask, tuple seed);
 *   - a packet probes each tuple once: hash(key & tuple mask) -> one bucket
 *     chain, whose candidates (sorted by rank) are checked exactly;
 *   - tuples are visited by their best rank: once the best hit beats the
 *     next tuple's best rank, the search stops.
 *
 * Atomicity: the tuple table, bucket array, rule index and allocation
 * bitmaps exist twice (generation 0 and 1).  Packets read config.gen once
 * and use that generation only.  A batch writes the inactive generation,
 * flips config.gen, waits for an RCU grace period (all packets that saw the
 * old generation are done), then brings the old generation up to date.
 * A single change is published in the active generation by one aligned
 * word store into a mapped bucket element (a slot, a count, a next link;
 * see user/dp.c), with no wait.  Records and actions are written once into
 * free slots before anything refers to them, so no packet ever sees a
 * half-written entry or action; what a change frees is reused only after
 * a later grace period.
 */
#ifndef XTCAM_TABLE_H
#define XTCAM_TABLE_H

#include <linux/types.h>
#include "key.h"

/* Actions (the TCAM's associated memory). */
enum xtcam_action_type {
	XTCAM_ACT_NONE     = 0,
	XTCAM_ACT_DROP     = 1,
	XTCAM_ACT_PASS     = 2,
	XTCAM_ACT_TX       = 3,
	XTCAM_ACT_REDIRECT = 4,   /* arg: index into the block's devmap */
	XTCAM_ACT_CPU      = 5,   /* arg: CPU number (cpumap index) */
	XTCAM_ACT_MAX,
};

struct xtcam_action {
	__u32 type;               /* enum xtcam_action_type */
	__u32 arg;
};

/* Per-rule counters (per-CPU on the host; atomic adds in NIC offload). */
struct xtcam_counter {
	__u64 packets;
	__u64 bytes;
	__u64 last_hit;           /* CLOCK_MONOTONIC_COARSE ns, 0 = never */
};

/* rank = prio << 32 | handle: lower wins. */
#define XTCAM_RANK(prio, handle) (((__u64)(prio) << 32) | (__u32)(handle))
#define XTCAM_RANK_NONE (~0ULL)

/* One rule as the classifier checks it: a ternary part and port ranges. */
struct xtcam_rec {
	struct xtcam_key value;   /* value & ~mask == 0 */
	struct xtcam_key mask;    /* port fields are zero here ... */
	__u16 sport_lo, sport_hi; /* ... and matched as ranges, host order */
	__u16 dport_lo, dport_hi;
	__u64 rank;
	__u32 cnt;                /* index into the counters map */
	__u32 entries;            /* TCAM entries this rule takes (ranges
	                           * expanded to prefixes) */
	__u32 wmap;               /* bit i: mask word i is not zero */
	__u32 slot;               /* the slot this record sits in: the
	                           * classifier takes a match's action from
	                           * it, not from a second read of the bucket
	                           * slot (which a change may rewrite) */
};

#ifndef XTCAM_MAX_TUPLES
#define XTCAM_MAX_TUPLES    256 /* per generation */
#endif
/* candidates per bucket element: 8 means fewer chain hops on dense
 * buckets than 6 would, and with half as many buckets as entries (see
 * xtcam_dp_geom_init) the bucket array stays smaller than one element a
 * rule */
#define XTCAM_BUCKET_SLOTS  8
#ifndef XTCAM_MAX_CHAIN
#define XTCAM_MAX_CHAIN     1024 /* bucket elements per chain */
#endif

/* A tuple: the coarse mask that a group of rules is hashed on. */
struct xtcam_tuple {
	__u64 mask[XTCAM_KEY_WORDS];
	__u64 min_rank;           /* best rank of any rule in it (a bound) */
	__u64 hstart;             /* the hash's start, xtcam_hstart(id) */
	__u32 id;                 /* stable id, the hash seed */
	__u32 nrules;
	__u32 wmap;               /* bit i: the hash reads word i,
	                           * xtcam_tuple_wmap() */
	__u32 fam;                /* enum xtcam_family of all its rules */
};

/* Families: a tuple holds rules of one family only, so that a packet
 * probes only the tuples that can hold its match.  A rule's family is its
 * exact eth_type (IPv4, IPv6, any other), or ANY when it has none. */
enum xtcam_family {
	XTCAM_FAM_IP4   = 0,
	XTCAM_FAM_IP6   = 1,
	XTCAM_FAM_OTHER = 2,
	XTCAM_FAM_ANY   = 3,
};
#define XTCAM_NLISTS 3            /* packet families: IP4, IP6, OTHER */

/* The family of a packet, from its eth_type (network order, read as bytes
 * so that BPF and userspace agree without byte swaps). */
static inline __u32 xtcam_pkt_family(const void *eth_type)
{
	const __u8 *b = (const __u8 *)eth_type;

	if (b[0] == 0x08 && b[1] == 0x00)
		return XTCAM_FAM_IP4;
	if (b[0] == 0x86 && b[1] == 0xdd)
		return XTCAM_FAM_IP6;
	return XTCAM_FAM_OTHER;
}

/*
 * The tuple table of a generation: XTCAM_MAX_TUPLES entries, sorted by
 * min_rank (the tuple set, as the loader reads it back and bpftool shows
 * it, one tuple an entry).
 */
#define XTCAM_TUPLE_REGION XTCAM_MAX_TUPLES

/*
 * One packet family's tuple list, as the classifier walks it: the tuples
 * of that family and of ANY, in the set's order, in one map value
 * (tlists[gen * XTCAM_NLISTS + family]).  One lookup a frame finds the
 * list; a probe then indexes it instead of making a map lookup of its own.
 */
struct xtcam_tlist {
	__u32 n;                  /* tuples in the list */
	__u32 pad;
	struct xtcam_tuple t[XTCAM_MAX_TUPLES];
};

/*
 * Candidate tags.  The rules of one bucket share what their tuple hashes
 * (a coarse mask) and mostly differ in the bytes just past it, in the
 * protocol and in the port.  Each bucket slot carries a tag: four bytes of
 * its rule's value and mask at fixed places of the key, the protocol, the
 * destination port's low byte, one byte of each address (IPv4: destination
 * byte 2 and source byte 1, past the /16 and /8 that ACL tuples hash;
 * IPv6: destination byte 5 and source byte 4, past a /40 and a /32).  The
 * classifier takes the same four bytes of the frame once and skips a
 * candidate whose tag disagrees without reading its record.  A tag holds
 * only bits of the rule's own mask (for a port range the bits every port
 * in it shares), so it never skips a rule that matches; on ACL-shaped
 * sets it skips most candidates that do not.
 *
 * A rule of no family (no exact eth_type) sits in every family's list, so
 * its tag keeps the bytes that are at the same place in both: protocol
 * and port (XTCAM_SIG_COMMON).
 */
#define XTCAM_SIG_COMMON 0xff0000ffu

static inline __u32 xtcam_sig(const struct xtcam_key *k, __u32 fam)
{
	const __u8 *s = (const __u8 *)k->src_ip, *d = (const __u8 *)k->dst_ip;
	__u32 x = (__u32)k->ip_proto | (__u32)((const __u8 *)&k->dst_port)[1] << 24;

	if (fam == XTCAM_FAM_IP6)
		return x | (__u32)d[5] << 8 | (__u32)s[4] << 16;
	return x | (__u32)d[2] << 8 | (__u32)s[1] << 16;
}

/* A bucket element: candidates sorted by rank, then the chain. */
struct xtcam_bucket {
	__u32 next;               /* 0: end of chain, else 1 + the index of
	                           * the next element in the same generation
	                           * (so a zeroed array is all empty buckets) */
	__u32 n;
	__u32 prio;               /* the priority of slot[0]'s rule: chains are
	                           * sorted by rank, so an element whose first
	                           * rule cannot beat the best hit so far ends
	                           * the chain without a look at its slots */
	__u32 slot[XTCAM_BUCKET_SLOTS];
	__u32 tag[XTCAM_BUCKET_SLOTS];   /* xtcam_sig of the rule's value */
	__u32 tmask[XTCAM_BUCKET_SLOTS]; /* ... and of its mask */
};

/* A bucket slot whose candidate was removed in place: the records lookup
 * of this index fails (it is beyond any map's size), so a frame passes
 * over it.  Holes count in n; a generation flip drops them. */
#define XTCAM_SLOT_HOLE 0xffffffffu

/* Per-generation header. */
struct xtcam_gen {
	__u32 ntuples;
	__u32 nrules;
	__u32 nentries;
	__u32 next_id;            /* next tuple id to hand out */
	struct xtcam_action dflt; /* the block's default (miss) action */
	__u32 limbo;              /* slots, counters and overflow elements
	                           * freed in place, waiting for a grace
	                           * period (the alloc map's limbo bitmaps) */
	__u32 holes;              /* holes made in place (chains may hold
	                           * some until a flip rewrites them) */
};

/* The block's configuration (one element). */
struct xtcam_config {
	__u32 gen;                /* active generation, 0 or 1 */
	__u32 dirty;              /* a change is in progress (crash recovery) */
	__u32 nbuckets;           /* main buckets per generation, power of 2 */
	__u32 bregion;            /* elements per generation (main + overflow) */
	struct xtcam_raw_spec raw[2];
	__u32 format;             /* XTCAM_DP_FORMAT of the build that made it */
	__u32 bshift;             /* xtcam_bshift(nbuckets) */
};

/* Bumped whenever the maps' meaning changes (layout, hash, placement,
 * the programs' read-only data, which a block's later program loads
 * reuse): a block pinned by a build with another format is refused, not
 * misread.  8: xtcam_inline_probes in .rodata; 9: buckets and tlists
 * mmapable (single changes publish by word stores), holes, the record's
 * slot, limbo bitmaps; 10: the loader's rules hash preallocated, two
 * generations of the capacity's rules. */
#define XTCAM_DP_FORMAT 10

/* Index of the rule registry (hash map): (generation, handle) -> rule. */
struct xtcam_hkey {
	__u32 gen;
	__u32 handle;
};

struct xtcam_hval {
	__u32 slot;               /* record and action index */
	__u32 tuple;              /* tuple id */
};

/* Scratch space between the parser and the classifier (per CPU). */
struct xtcam_scratch {
	struct xtcam_key key;
	__u32 pkt_len;            /* whole frame, all fragments */
	__u32 result_slot;        /* debug builds: slot that matched */
	__u64 result_rank;        /* debug builds: its rank, or RANK_NONE */
};

/* A redirect target (loader only): devmap slot -> device, by name. */
#define XTCAM_MAX_TARGETS 64
/* CPUs an action cpu can reach: the cpumap's size */
#define XTCAM_CPUMAP_SIZE 64
struct xtcam_target {
	char  netns[64];          /* "" = the root namespace */
	char  dev[16];
	__u32 ifindex;
	__u32 used;
};

/* Global counter indexes in the stats map. */
enum xtcam_stat {
	XTCAM_STAT_MISS  = 0,     /* packets that took the default action */
	XTCAM_STAT_ERROR = 1,     /* internal errors (tail call failed, ...) */
	XTCAM_STAT_MAX,
};

/* Pin names (under /sys/fs/bpf/xtcam/BLOCK/). */
#define XTCAM_PIN_ROOT "/sys/fs/bpf/xtcam"

/* Hashing shared by the BPF programs and the compiler: both sides must place
 * a rule and a packet in the same bucket.  Multiplicative hashing: the sum of
 * the masked words, each times its own odd constant, and the bucket index
 * is the sum's top bits (every bit of a product's input reaches its top
 * bits, so no finaliser is needed).  The products are independent, so they
 * pipeline, where a fold-multiply-fold finaliser would be a serial chain
 * on every probe. */
#define XTCAM_HK0 0x9e3779b97f4a7c15ULL
#define XTCAM_HK1 0xbf58476d1ce4e5b9ULL
#define XTCAM_HK2 0x94d049bb133111ebULL
#define XTCAM_HK3 0xd6e8feb86659fd93ULL
#define XTCAM_HK4 0xa0761d6478bd642fULL
#define XTCAM_HK5 0xe7037ed1a0b428dbULL
#define XTCAM_HK6 0x8ebc6af09c88c6e3ULL
#define XTCAM_HK7 0x589965cc75374cc3ULL
#define XTCAM_HK8 0x1d8e4e27c47d124fULL
#define XTCAM_HK9 0xcc9e2d51ffe8ab35ULL

/* Which key words the hash and the match read without looking at wmap (a
 * zero mask word adds nothing, so reading it costs instructions but no
 * branch): eth_type/ip_proto/tos/ports (0) and the first 64 bits of each
 * address (1, 3); the match also the presence flags (8), which every rule
 * has.  The rest only when wmap says so: the IPv6 address words past
 * those (XTCAM_WMAP_V6), and the rare ones (MACs, VLAN tags, ttl/ICMP,
 * raw2), with the flags in the hash (tuple masks keep whole bytes, and
 * rarely a byte of flags). */
#define XTCAM_WMAP_RARE ((1u << 5) | (1u << 6) | (1u << 7) | (1u << 9))
/* the words only IPv6 addresses (past their first 64 bits) reach */
#define XTCAM_WMAP_V6   ((1u << 2) | (1u << 4))

/* The start of a tuple's hash, from its seed (the tuple's id): kept in
 * the tuple, so that a probe adds to it rather than multiplies. */
static inline __u64 xtcam_hstart(__u32 seed)
{
	return (__u64)seed * 0x2545f4914f6cdd1dULL;
}

/* The bucket index (shift = 64 - log2(buckets), xtcam_bshift()) of key w
 * under mask m in the tuple whose hash starts at hstart and reads the
 * words in wmap.  The two address words always (a zero mask word adds
 * nothing), the rest only when wmap says so: one test a probe for the
 * common IPv4 tuple.  The address words come by value (w1 = w[1],
 * w3 = w[3]): the classifier keeps them beside its probe state. */
static inline __u32 xtcam_hash13(__u64 w1, __u64 w3, const __u64 *w, const __u64 *m,
				  __u32 wmap, __u64 hstart, __u32 shift)
{
	__u64 h = hstart;

	h += (w1 & m[1]) * XTCAM_HK1;
	h += (w3 & m[3]) * XTCAM_HK3;
	if (wmap & (1u | XTCAM_WMAP_V6 | XTCAM_WMAP_RARE | (1u << 8))) {
		if (wmap & 1u)
			h += (w[0] & m[0]) * XTCAM_HK0;
		if (wmap & XTCAM_WMAP_V6) {
			h += (w[2] & m[2]) * XTCAM_HK2;
			h += (w[4] & m[4]) * XTCAM_HK4;
		}
		/* tuple masks keep whole bytes only, so the presence flags
		 * (word 8) are rarely in them: hashed with the rare words */
		if (wmap & (XTCAM_WMAP_RARE | (1u << 8))) {
			if (wmap & (1u << 5)) h += (w[5] & m[5]) * XTCAM_HK5;
			if (wmap & (1u << 6)) h += (w[6] & m[6]) * XTCAM_HK6;
			if (wmap & (1u << 7)) h += (w[7] & m[7]) * XTCAM_HK7;
			if (wmap & (1u << 8)) h += (w[8] & m[8]) * XTCAM_HK8;
			if (wmap & (1u << 9)) h += (w[9] & m[9]) * XTCAM_HK9;
		}
	}
	return (__u32)(h >> shift);
}

/* the same, all words from w */
static inline __u32 xtcam_hash(const __u64 *w, const __u64 *m, __u32 wmap,
				__u64 hstart, __u32 shift)
{
	return xtcam_hash13(w[1], w[3], w, m, wmap, hstart, shift);
}

/* The hash shift of a bucket array of nbuckets (a power of 2, >= 2). */
static inline __u32 xtcam_bshift(__u32 nbuckets)
{
	return 64 - (__u32)__builtin_ctz(nbuckets);
}

/* Which mask words are not zero. */
static inline __u32 xtcam_wmap(const __u64 *m)
{
	__u32 b = 0, i;

	for (i = 0; i < XTCAM_KEY_WORDS; i++)
		if (m[i])
			b |= 1u << i;
	return b;
}

/* The words a tuple's hash reads: its mask's words, but word 0 only when
 * it can differ between the packets that probe the tuple.  In a tuple of
 * one IP family whose word-0 mask has nothing but eth_type, every such
 * packet has the family's eth_type there: the word would add the same to
 * every hash, so it is left out (a multiply fewer a probe).  Rules are
 * placed with the same hash, so placement never depends on this. */
static inline __u32 xtcam_tuple_wmap(const __u64 *m, __u32 fam)
{
	union {
		struct xtcam_key k;
		__u64 w[XTCAM_KEY_WORDS];
	} et = { .k = { .eth_type = 0xffff } };
	__u32 b = xtcam_wmap(m);

	if ((fam == XTCAM_FAM_IP4 || fam == XTCAM_FAM_IP6) && !(m[0] & ~et.w[0]))
		b &= ~1u;
	return b;
}

#endif
