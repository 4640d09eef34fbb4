// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * blocklist: a controller on libxtcam's API (xtcam/xtcam.h).  It reads
 * lines from stdin:
 *
 *   block 192.0.2.1      drop frames from this source
 *   unblock 192.0.2.1    stop dropping them
 *   show 192.0.2.1       print the rule's counters
 *
 * and changes the rules of one block, which must exist (`xtcam block add`,
 * `xtcam bind`).  A line that comes alone is one commit; lines that arrive
 * together (one read) are one batch, one atomic commit; when the batch
 * fails (an address blocked twice, say), its lines are made one by one so
 * that the good ones still take effect.  Each line is answered on stdout
 * ("ok LINE" or "error LINE: why").  Exit status 1 when a line failed.
 *
 * An address's rule is `prio PRIO handle H src_ip ADDR action drop`, H the
 * address as a number: the controller finds its rules again by address
 * without keeping state of its own, and the other rules of the block (the
 * CLI's, with handles of their own) are left alone.
 *
 * Usage: blocklist [-p PRIO] BLOCK    (XTCAM_INSTANCE picks the instance)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xtcam/xtcam.h>

enum verb { BLOCK, UNBLOCK, SHOW };

struct line {
	enum verb verb;
	__u32 addr;             /* host order: the rule's handle */
	char text[64];          /* the line as read, for the answer */
};

static unsigned int prio = 100;
static bool failed;

static void answer(const struct line *l, int e, const char *why)
{
	if (e)
		printf("error %s: %s\n", l->text, why);
	else
		printf("ok %s\n", l->text);
	if (e)
		failed = true;
}

/* "block A.B.C.D" and friends; -EINVAL with why otherwise */
static int parse_line(const char *s, struct line *l, char *why, size_t len)
{
	char verb[16], addr[32], extra;
	struct in_addr a;

	snprintf(l->text, sizeof(l->text), "%s", s);
	if (sscanf(s, "%15s %31s %c", verb, addr, &extra) != 2) {
		snprintf(why, len, "expected: block|unblock|show ADDRESS");
		return -EINVAL;
	}
	if (!strcmp(verb, "block"))
		l->verb = BLOCK;
	else if (!strcmp(verb, "unblock"))
		l->verb = UNBLOCK;
	else if (!strcmp(verb, "show"))
		l->verb = SHOW;
	else {
		snprintf(why, len, "unknown command %s (block, unblock, show)", verb);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, addr, &a) != 1 || !a.s_addr) {
		snprintf(why, len, "%s: not an IPv4 address (other than 0.0.0.0)", addr);
		return -EINVAL;
	}
	l->addr = ntohl(a.s_addr);
	return 0;
}

static void rule_text(const struct line *l, char *buf, size_t len)
{
	struct in_addr a = { htonl(l->addr) };
	char s[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, s, sizeof(s));
	snprintf(buf, len, "prio %u handle %u src_ip %s action drop", prio, l->addr, s);
}

/* One line, one commit. */
static void one(struct xtcam_ctl *c, const char *block, const struct line *l)
{
	struct xtcam_ctl_counters cnt;
	char text[128], out[160];
	int e = -EINVAL;

	switch (l->verb) {
	case BLOCK:
		rule_text(l, text, sizeof(text));
		e = xtcam_ctl_rule_add(c, block, text, NULL);
		break;
	case UNBLOCK:
		e = xtcam_ctl_rule_del(c, block, l->addr);
		break;
	case SHOW:
		e = xtcam_ctl_counters(c, block, l->addr, &cnt);
		if (!e) {
			snprintf(out, sizeof(out), "%s packets %llu bytes %llu", l->text,
				 (unsigned long long)cnt.packets, (unsigned long long)cnt.bytes);
			printf("ok %s\n", out);
			return;
		}
		break;
	}
	answer(l, e, xtcam_ctl_strerror(c));
}

/* Lines that came together: one batch (show lines answered on their own,
 * after it); if the batch fails, each line on its own. */
static void several(struct xtcam_ctl *c, struct xtcam_ctl_batch *b, const char *block,
		    const struct line *l, size_t n)
{
	char text[128];
	size_t i;
	int e = 0;

	for (i = 0; !e && i < n; i++) {
		if (l[i].verb == BLOCK) {
			rule_text(&l[i], text, sizeof(text));
			e = xtcam_ctl_batch_add(b, text, NULL);
		} else if (l[i].verb == UNBLOCK) {
			e = xtcam_ctl_batch_del(b, l[i].addr);
		}
	}
	if (!e)
		e = xtcam_ctl_batch_commit(b);
	else
		xtcam_ctl_batch_commit(b);      /* empties it, refused or not */
	for (i = 0; i < n; i++) {
		if (e || l[i].verb == SHOW)
			one(c, block, &l[i]);
		else
			answer(&l[i], 0, "");
	}
}

int main(int argc, char **argv)
{
	static struct line lines[XTCAM_CTL_BATCH_MAX];
	char err[XTCAM_CTL_ERR_MAX], buf[1 << 16], why[128];
	struct xtcam_ctl_batch *b;
	struct xtcam_ctl *c;
	const char *block;
	size_t have = 0, nl = 0, start, i;
	ssize_t got;
	int opt;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt == 'p' && atoi(optarg) > 0 && atoi(optarg) <= 65535) {
			prio = (unsigned int)atoi(optarg);
			continue;
		}
		fprintf(stderr, "usage: blocklist [-p PRIO] BLOCK\n");
		return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: blocklist [-p PRIO] BLOCK\n");
		return 2;
	}
	block = argv[optind];
	if (xtcam_ctl_open(&c, NULL, err, sizeof(err))) {
		fprintf(stderr, "blocklist: %s\n", err);
		return 1;
	}
	b = xtcam_ctl_batch_begin(c, block);
	if (!b) {
		fprintf(stderr, "blocklist: out of memory\n");
		xtcam_ctl_close(c);
		return 1;
	}
	for (;;) {
		got = read(0, buf + have, sizeof(buf) - have - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (have)       /* a last line without its newline */
				buf[have++] = '\n';
			else
				break;
		} else {
			have += (size_t)got;
		}
		/* every whole line read so far: one commit between them all */
		start = 0;
		nl = 0;
		for (i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			buf[i] = 0;
			if (buf[start] && buf[start] != '#') {
				if (parse_line(buf + start, &lines[nl], why, sizeof(why)))
					answer(&lines[nl], -EINVAL, why);
				else if (++nl == XTCAM_CTL_BATCH_MAX) {
					several(c, b, block, lines, nl);
					nl = 0;
				}
			}
			start = i + 1;
		}
		if (nl == 1)
			one(c, block, &lines[0]);
		else if (nl)
			several(c, b, block, lines, nl);
		fflush(stdout);
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == sizeof(buf) - 1) {
			buf[have] = 0;
			fprintf(stderr, "blocklist: a line longer than %zu bytes\n", have);
			have = 0;
			failed = true;
		}
		if (got <= 0)
			break;
	}
	xtcam_ctl_batch_free(b);
	xtcam_ctl_close(c);
	return failed ? 1 : 0;
}
