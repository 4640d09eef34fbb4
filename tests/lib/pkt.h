/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Test packets: a builder that writes a frame from a spec and knows the key
 * the parser must produce, and at which length each presence flag becomes
 * valid (so a frame cut at any byte has a known expected key).
 */
#ifndef XTCAM_TEST_PKT_H
#define XTCAM_TEST_PKT_H

#include <stdint.h>
#include "xtcam/key.h"

#define PKT_MAX 10000

struct pkt_spec {
	uint8_t  dst[6], src[6];
	int      nvlan;            /* 0..3 tags */
	uint16_t tpid[3], tci[3];
	uint16_t eth_type;         /* after the tags: 0x0800, 0x86dd, 0x0806, ... */
	uint8_t  saddr[16], daddr[16]; /* IPv4 in the first 4 bytes */
	uint8_t  tos, ttl, proto;
	int      ipopt;            /* IPv4 option bytes, multiple of 4, <= 40 */
	uint8_t  ext[8];           /* IPv6 extension headers in order */
	int      next;             /* how many */
	int      frag;             /* 0 none, 1 first fragment, 2 later one */
	uint16_t sport, dport;
	uint16_t tcp_flags;        /* 12 bits */
	int      tcp_doff;         /* 32-bit words; 0 means 5 */
	uint8_t  icmp_type, icmp_code;
	int      payload;          /* bytes after the headers */
	int      bad_version;      /* wrong IP version nibble */
	int      bad_ihl;          /* IPv4 IHL below 5 */
	int      set_iplen;        /* write iplen as IPv4 tot_len / IPv6
	                            * payload_len instead of the datagram's
	                            * length: the frame's bytes after it are
	                            * then padding, outside the datagram */
	uint16_t iplen;
	uint16_t arp_op;           /* ARP/RARP opcode; 0 means 1 (request) */
};

struct pkt {
	uint8_t buf[PKT_MAX];
	int len;
	struct xtcam_key key;      /* what the parser must give for all of it */
	int need[16];              /* length from which flag bit i is set; -1 */
	int hdr_end;               /* a cut before this sets XTCAM_F_TRUNC */
	int dg_end;                /* where the IP datagram ends by its header
	                            * (INT_MAX: no bound but the frame's end);
	                            * fields after it are absent */
	int l3_off, l4_off;        /* -1 when absent */
	int tag_off[3];
};

void pkt_spec_init(struct pkt_spec *s);   /* a UDP/IPv4 frame */
void pkt_build(const struct pkt_spec *s, const struct xtcam_raw_spec *raw,
	       struct pkt *p);
/* The key for the first len bytes of p. */
void pkt_expect(const struct pkt *p, const struct xtcam_raw_spec *raw, int len,
		struct xtcam_key *k);
/* Human-readable dump of a key, for failure messages. */
void key_format(const struct xtcam_key *k, char *buf, size_t len);
void hex_format(const uint8_t *b, int n, char *buf, size_t len);

#endif
