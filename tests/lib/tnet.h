/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Network test helpers: namespaces and veth pairs that a test makes and
 * always removes, frames sent from one namespace and counted in another,
 * and the xtcam CLI run as a user runs it.
 */
#ifndef XTCAM_TNET_H
#define XTCAM_TNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pkt.h"

/* names unique to this test process: "xt<pid>a" etc. */
const char *t_name(char *buf, size_t len, const char *tag);

/* run a shell command; output in *out (malloc'd, may be NULL); exit code,
 * or T_SANITIZER_RC when the output holds a sanitizer report (which is
 * also copied to stderr) */
#define T_SANITIZER_RC 86
int t_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* run the xtcam CLI (XTCAM_BIN, default build/xtcam) with these args */
int t_xtcam(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a namespace pair joined by a veth: a (XDP side) in ns_a, b in ns_b */
struct t_pair {
	char ns_a[32], ns_b[32];
	char a[16], b[16];
	uint8_t mac_a[6], mac_b[6];
};
int t_pair_make(struct t_pair *p, const char *tag);
void t_pair_free(const struct t_pair *p);
/* remove every namespace this process made (for .fini) */
/* ip netns add NS, removed by t_net_cleanup() whatever the test did */
int t_netns_add(const char *ns);
void t_net_cleanup(void);

/* send frames out of dev in namespace ns (AF_PACKET) */
int t_send(const char *ns, const char *dev, const struct pkt *frames, int n);

/* a counter of received frames on dev in ns, that carry our marker */
struct t_rx {
	int fd;
};
int t_rx_open(struct t_rx *r, const char *ns, const char *dev);
/* frames received since open whose payload holds marker (within ms) */
int t_rx_count(struct t_rx *r, uint32_t marker, int ms);
void t_rx_close(struct t_rx *r);

/* a UDP/IPv4 frame from pair b to pair a, with a marker in its payload */
void t_frame(const struct t_pair *p, struct pkt_spec *s, uint32_t marker);
void t_frame_build(const struct pkt_spec *s, uint32_t marker, struct pkt *out);
/* send n copies of frame s from pair b and count those that reach a;
 * -1 when the frames could not be made, sent or counted */
int t_through(const struct t_pair *p, const struct pkt_spec *s, uint32_t marker, int n);

/* JSON helpers on CLI output (json-c) */
long long t_json_ll(const char *json, const char *path);

/* in a `rule show -j` array: the packets of the rule with this handle */
long long t_rule_field(const char *json, unsigned int handle, const char *field);

#endif
