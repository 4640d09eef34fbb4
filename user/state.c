// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The registry in bpffs; see state.h. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <signal.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "xtcam_registry.skel.h"
#include "xtcam/loader.h"
#include "errmsg.h"
#include "progress.h"
#include "trace.h"
#include "rpack.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static bool is_bpffs(const char *path)
{
	struct statfs s;

	return !statfs(path, &s) && (unsigned long)s.f_type == BPF_FS_MAGIC;
}

/* XTCAM_INSTANCE names a separate state (tests use their own); unset or
 * empty, the default "xtcam", /sys/fs/bpf/xtcam.  Any other value must be
 * a plain name: falling back to the default would send a command meant for
 * another state (a flush, say) to the default one. */
#define INSTANCE_MAX 48

static int instance(const char **out, char *err, size_t errlen)
{
	const char *e = getenv("XTCAM_INSTANCE");
	char shown[4 * 64 + 8];
	size_t n = 0, i;
	bool ok;

	if (!e || !*e) {
		*out = "xtcam";
		return 0;
	}
	ok = strlen(e) <= INSTANCE_MAX;
	for (i = 0; e[i]; i++)
		if (!((e[i] >= 'a' && e[i] <= 'z') || (e[i] >= 'A' && e[i] <= 'Z') ||
		      (e[i] >= '0' && e[i] <= '9') || e[i] == '-' || e[i] == '_'))
			ok = false;
	if (ok) {
		*out = e;
		return 0;
	}
	/* the value as given, control characters escaped, cut after 64 */
	for (i = 0; e[i] && i < 64; i++) {
		unsigned char ch = (unsigned char)e[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\' && ch != '"')
			shown[n++] = (char)ch;
		else
			n += (size_t)snprintf(shown + n, sizeof(shown) - n, "\\x%02x", ch);
	}
	if (e[i])
		n += (size_t)snprintf(shown + n, sizeof(shown) - n, "...");
	shown[n] = 0;
	xtcam_set_err(err, errlen, "XTCAM_INSTANCE=\"%s\": an instance name is 1-%d letters, "
		"digits, '-' or '_' (unset or empty: the default, xtcam)", shown, INSTANCE_MAX);
	return -EINVAL;
}

/* Is this process inside one of the namespaces under /run/netns (as in
 * `ip netns exec`)? */
static bool in_named_netns(void)
{
	struct stat self, s;
	struct dirent *de;
	bool hit = false;
	DIR *d;

	if (stat("/proc/self/ns/net", &self))
		return false;
	d = opendir("/run/netns");
	if (!d)
		return false;
	while (!hit && (de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/run/netns/%s", de->d_name);
		hit = !stat(p, &s) && s.st_dev == self.st_dev && s.st_ino == self.st_ino;
	}
	closedir(d);
	return hit;
}

static pid_t parent_of(pid_t pid)
{
	char p[64], buf[512], *c;
	FILE *f;
	int ppid = 0;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	f = fopen(p, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (c = strrchr(buf, ')')))
		sscanf(c + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

/* The host's bpffs through the nearest ancestor that lives in another
 * mount namespace (the shell that ran `ip netns exec`). */
static bool ancestor_bpffs(char *path, size_t len)
{
	struct stat self;
	pid_t pid = getppid();
	int hops;

	if (stat("/proc/self/ns/mnt", &self))
		return false;
	for (hops = 0; pid > 1 && hops < 64; hops++, pid = parent_of(pid)) {
		char ns[64], bpf[96];
		struct stat s;

		snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
		if (stat(ns, &s) || (s.st_dev == self.st_dev && s.st_ino == self.st_ino))
			continue;
		snprintf(bpf, sizeof(bpf), "/proc/%d/root/sys/fs/bpf", (int)pid);
		if (is_bpffs(bpf)) {
			snprintf(path, len, "%s", bpf);
			return true;
		}
	}
	return false;
}

/* Where the host's bpffs is, as this process can see it. */
static int find_bpffs(const char *inst, char *root, size_t len, char *err, size_t errlen)
{
	char up[128], here[128];
	struct stat s;

	if (is_bpffs("/sys/fs/bpf")) {
		/* a bpffs mounted inside `ip netns exec` would be a new,
		 * empty instance: prefer the host's where ours is */
		snprintf(here, sizeof(here), "/sys/fs/bpf/%s", inst);
		if (stat(here, &s) && in_named_netns() && ancestor_bpffs(up, sizeof(up))) {
			snprintf(root, len, "%s/%s", up, inst);
			return 0;
		}
		snprintf(root, len, "%s", here);
		return 0;
	}
	if (!in_named_netns()) {
		/* the host's own view: mount it when missing */
		if (mkdir("/sys/fs/bpf", 0755) && errno != EEXIST) {
			xtcam_set_err(err, errlen, "bpffs: cannot create /sys/fs/bpf: %s",
				strerror(errno));
			return -errno;
		}
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
			int e = errno;

			xtcam_set_err(err, errlen, "bpffs: cannot mount it on /sys/fs/bpf: %s",
				strerror(e));
			return -e;
		}
		snprintf(root, len, "/sys/fs/bpf/%s", inst);
		return 0;
	}
	/* inside `ip netns exec`: /sys was remounted there */
	if (ancestor_bpffs(up, sizeof(up))) {
		snprintf(root, len, "%s/%s", up, inst);
		return 0;
	}
	xtcam_set_err(err, errlen,
		"bpffs: the host's /sys/fs/bpf is not visible here (inside `ip netns exec`?), "
		"and a new bpffs would be empty: run xtcam in the root namespace and name the "
		"device's namespace with `netns NS`");
	return -ENOENT;
}

static int pin_path(const struct xtcam_state *st, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", st->root, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int xtcam_state_block_dir(const struct xtcam_state *st, const char *block,
			  const char *sub, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s%s", st->root, block, sub ? "/" : "",
			 sub ? sub : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void xtcam_state_close(struct xtcam_state *st)
{
	if (!st)
		return;
	if (st->fd_blocks >= 0)
		close(st->fd_blocks);
	if (st->fd_rules[0] >= 0)
		close(st->fd_rules[0]);
	if (st->fd_rules[1] >= 0)
		close(st->fd_rules[1]);
	if (st->fd_ranks >= 0)
		close(st->fd_ranks);
	if (st->fd_bindings >= 0)
		close(st->fd_bindings);
	if (st->fd_gen >= 0)
		close(st->fd_gen);
	if (st->lock_fd >= 0)
		close(st->lock_fd);   /* releases the lock */
	if (st->pin_fd >= 0)
		close(st->pin_fd);    /* and the pins */
	free(st->hidden);
	free(st);
}

void xtcam_state_unlock(struct xtcam_state *st)
{
	if (st && st->lock_fd >= 0) {
		close(st->lock_fd);     /* releases the lock */
		st->lock_fd = -1;
	}
}

/* A registry pinned by a build with other record layouts cannot be read:
 * say so instead of failing on every lookup. */
static int layout_of(int fd, __u32 *ksz, __u32 *vsz)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*ksz = info.key_size;
	*vsz = info.value_size;
	return 0;
}

static int check_layout(struct xtcam_state *st, char *err, size_t errlen)
{
	const struct { int fd; const char *name; __u32 k, v; } m[] = {
		{ st->fd_blocks, "blocks", sizeof(struct xtcam_block_key),
		  sizeof(struct xtcam_block_rec) },
		{ st->fd_rules[0], "rules0", sizeof(struct xtcam_rule_key),
		  sizeof(struct xtcam_rule) },
		{ st->fd_rules[1], "rules1", sizeof(struct xtcam_rule_key),
		  sizeof(struct xtcam_rule) },
		{ st->fd_bindings, "bindings", sizeof(struct xtcam_bind_key),
		  sizeof(struct xtcam_bind_rec) },
		{ st->fd_ranks, "ranks", sizeof(struct xtcam_rank_key), sizeof(__u32) },
	};
	__u32 k = 0, v = 0;
	size_t i;
	int e;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (m[i].fd < 0)
			continue;       /* not opened yet */
		e = layout_of(m[i].fd, &k, &v);
		if (e) {
			xtcam_set_err(err, errlen, "registry %s/%s: %s", st->root, m[i].name,
				strerror(-e));
			return e;
		}
		if (k != m[i].k || v != m[i].v) {
			xtcam_set_err(err, errlen, "registry %s was written by another version of "
				"xtcam (%s holds %u+%u-byte entries, this one uses %u+%u): "
				"unbind and flush with that version, or detach its programs "
				"and remove %s", st->root, m[i].name, k, v, m[i].k, m[i].v,
				st->root);
			return -EUCLEAN;
		}
	}
	return 0;
}

/* --- the lock ------------------------------------------------------------- */

/* How long xtcam_state_open waits for the lock: ms, < 0 for ever. */
static int lock_wait_ms = XTCAM_LOCK_WAIT_DEFAULT * 1000;

void xtcam_set_lock_wait(int ms)
{
	lock_wait_ms = ms;
}

static __u64 now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000 + (__u64)t.tv_nsec / 1000000;
}

/* A command line as one printable line: arguments joined by spaces,
 * control characters as '?', cut to len. */
static void printable_cmdline(const char *raw, size_t n, char *buf, size_t len)
{
	size_t i, k = 0;

	while (n && !raw[n - 1])
		n--;
	for (i = 0; i < n && k + 1 < len; i++) {
		unsigned char ch = (unsigned char)raw[i];

		buf[k++] = !ch ? ' ' : ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	buf[k] = 0;
}

static void cmdline_of(pid_t pid, char *buf, size_t len)
{
	char p[64], raw[512];
	ssize_t n = -1;
	int fd;

	buf[0] = 0;
	snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, raw, sizeof(raw));
		close(fd);
	}
	if (n > 0)
		printable_cmdline(raw, (size_t)n, buf, len);
}

/* After taking the lock: who holds it, for those who wait ("PID\nCMDLINE\n"). */
static void lock_note_holder(int fd)
{
	char line[384], text[448];
	int n;

	char had[sizeof(text) + 1];
	ssize_t m;

	cmdline_of(getpid(), line, sizeof(line));
	n = snprintf(text, sizeof(text), "%d\n%s\n", (int)getpid(), line);
	if (n <= 0)
		return;
	/* a process that takes the lock again (a library context, each
	 * commit) finds its own note there: writing it again would cost a
	 * truncate and a write on the lock file's file system */
	m = pread(fd, had, sizeof(had), 0);
	if (m == n && !memcmp(had, text, (size_t)n))
		return;
	if (pwrite(fd, text, (size_t)n, 0) == n && m > n && ftruncate(fd, n)) {
		/* only a courtesy to those who wait */
	}
}

void xtcam_state_note_holder(struct xtcam_state *st)
{
	if (st->lock_fd >= 0)
		lock_note_holder(st->lock_fd);
}

/* The process holding the flock on fd (from /proc/locks), or 0. */
static pid_t lock_holder_pid(int fd)
{
	char line[256];
	struct stat s;
	pid_t pid = 0;
	FILE *f;

	if (fstat(fd, &s))
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long ino;
		int p;

		/* "1: FLOCK  ADVISORY  WRITE 1234 00:19:5678 0 EOF"; waiters
		 * have "->" after the number */
		if (strstr(line, "->") || !strstr(line, "FLOCK"))
			continue;
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &p, &maj, &min, &ino) == 4 &&
		    ino == (unsigned long)s.st_ino && maj == major(s.st_dev) &&
		    min == minor(s.st_dev))
			pid = p;
	}
	fclose(f);
	return pid;
}

/* "pid N (COMMAND LINE)" of whoever holds the lock: what the holder wrote
 * into the lock file, checked against the kernel's list of locks (a
 * holder that is not xtcam writes nothing there). */
static bool lock_holder(int fd, char *buf, size_t len)
{
	char raw[512], cmd[384] = "", *nl;
	pid_t pid = lock_holder_pid(fd), wrote = 0;
	ssize_t n = pread(fd, raw, sizeof(raw) - 1, 0);

	if (n > 0) {
		raw[n] = 0;
		wrote = (pid_t)atoi(raw);
		nl = strchr(raw, '\n');
		if (nl) {
			char *end = strchr(nl + 1, '\n');

			printable_cmdline(nl + 1, end ? (size_t)(end - nl - 1) : strlen(nl + 1),
					  cmd, sizeof(cmd));
		}
	}
	/* (the kernel names the process that took the lock: a command's
	 * finisher, which holds it after the command, writes its own pid) */
	if (!pid || (pid != wrote && kill(pid, 0) && errno == ESRCH))
		pid = wrote > 0 && !kill(wrote, 0) ? wrote : 0;
	if (pid && pid != wrote)
		cmdline_of(pid, cmd, sizeof(cmd));
	if (pid)
		snprintf(buf, len, "pid %d (%s)", (int)pid, cmd[0] ? cmd : "?");
	else
		snprintf(buf, len, "another process");
	return pid;
}

/*
 * The turnstile: an OFD lock on the lock file's first byte, taken before
 * the flock and let go as soon as the flock is had.  Whoever waits for the
 * flock waits holding the turnstile, so a holder that lets go of the lock
 * and takes it again at once (a library context does, at each commit, and
 * so does `-batch`) queues behind the waiter instead of taking the lock
 * back: the lock changes hands after the commit under way.  (The flock
 * alone has no queue: a process that asks for a free flock gets it, even
 * with others waiting for it.)  0, -EAGAIN when another waiter has it,
 * -errno.
 */
static int turnstile(int fd, short type)
{
	struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	if (!fcntl(fd, F_OFD_SETLK, &l))
		return 0;
	return errno == EACCES ? -EAGAIN : -errno;
}

/* Take the exclusive lock, waiting at most lock_wait_ms, and say after a
 * second whom we wait for.  Through the turnstile: a waiter is served
 * before a holder that comes back for the lock. */
static int take_lock(int fd, const char *path, char *err, size_t errlen)
{
	char who[448];
	__u64 t0 = 0;
	bool told = false, queued = false;
	int e;

	e = turnstile(fd, F_WRLCK);
	if (e && e != -EAGAIN)
		goto fail;
	queued = !e;
	if (queued && !flock(fd, LOCK_EX | LOCK_NB))
		goto got;
	if (queued && errno != EWOULDBLOCK)
		goto fail_errno;
	t0 = now_ms();
	for (;;) {
		__u64 waited = now_ms() - t0;
		/* next in line: the lock is ours as soon as it is let go */
		struct timespec pause = { 0, (queued ? 1 : 10) * 1000000 };

		if (lock_wait_ms >= 0 && waited >= (__u64)lock_wait_ms) {
			if (queued)
				turnstile(fd, F_UNLCK);
			lock_holder(fd, who, sizeof(who));
			if (!lock_wait_ms)
				xtcam_set_err(err, errlen, "lock %s: held by %s; not waiting (-w 0)",
					path, who);
			else
				xtcam_set_err(err, errlen, "lock %s: held by %s; gave up after %d s "
					"(-w SECONDS waits longer)", path, who, lock_wait_ms / 1000);
			return -ETIMEDOUT;
		}
		/* (a holder not found was letting go of it: look again, and
		 * say it anyway a second later) */
		if (!told && waited >= 1000 &&
		    (lock_holder(fd, who, sizeof(who)) || waited >= 2000)) {
			fprintf(stderr, "xtcam: waiting for the lock %s, held by %s\n", path, who);
			told = true;
		}
		nanosleep(&pause, NULL);
		if (!queued) {
			e = turnstile(fd, F_WRLCK);
			if (e && e != -EAGAIN)
				goto fail;
			queued = !e;
		}
		if (queued && !flock(fd, LOCK_EX | LOCK_NB))
			break;
		if (queued && errno != EWOULDBLOCK)
			goto fail_errno;
	}
got:
	turnstile(fd, F_UNLCK);
	lock_note_holder(fd);
	return 0;
fail_errno:
	e = -errno;
fail:
	if (queued)
		turnstile(fd, F_UNLCK);
	xtcam_set_err(err, errlen, "lock %s: %s", path, strerror(-e));
	return e;
}

/* --- the generations' pins -------------------------------------------------- */

/*
 * Byte 1 + 2 * id + gen of the lock file stands for generation gen of
 * block id (byte 0 is left to the writers' lock): readers hold it shared
 * (OFD locks, owned by the open file, not the process) while they read
 * that generation, a writer exclusive while it writes into it.  Readers
 * only pin the active generation, and a writer writes only into the
 * inactive one: it meets a reader only when that reader started before
 * the writer's last commit, and waits for it at most one read.
 */
static off_t pin_off(__u32 id, __u32 gen)
{
	return 1 + 2 * (off_t)id + (gen & 1);
}

static int pin_set(struct xtcam_state *st, __u32 id, __u32 gen, short type, bool wait)
{
	struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = pin_off(id, gen),
			   .l_len = 1 };

	if (st->pin_fd < 0) {
		if (type == F_UNLCK)
			return 0;
		st->pin_fd = open(st->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (st->pin_fd < 0)
			return -errno;
	}
	while (fcntl(st->pin_fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &l))
		if (errno != EINTR)
			return errno == EACCES ? -EAGAIN : -errno;
	return 0;
}

/* "pid N (COMMAND LINE)" of a process that holds byte off of the lock file
 * (the kernel's list of locks has no pid for OFD locks: the files open in
 * each process say which locks they carry), or "a reader". */
static void pin_holder(struct xtcam_state *st, off_t off, char *buf, size_t len)
{
	char p[300], line[256], cmd[384];
	struct dirent *d, *f;
	struct stat s;
	DIR *procs, *fds;
	pid_t found = 0;

	snprintf(buf, len, "a reader");
	if (fstat(st->pin_fd, &s) || !(procs = opendir("/proc")))
		return;
	while (!found && (d = readdir(procs))) {
		pid_t pid = (pid_t)atoi(d->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
		if (!(fds = opendir(p)))
			continue;
		while (!found && (f = readdir(fds))) {
			struct stat fs;
			FILE *info;

			snprintf(p, sizeof(p), "/proc/%d/fd/%s", (int)pid, f->d_name);
			if (f->d_name[0] == '.' || stat(p, &fs) || fs.st_ino != s.st_ino ||
			    fs.st_dev != s.st_dev)
				continue;
			snprintf(p, sizeof(p), "/proc/%d/fdinfo/%s", (int)pid, f->d_name);
			if (!(info = fopen(p, "re")))
				continue;
			/* "lock:	1: OFDLCK ADVISORY  READ -1 00:19:5678 3 3" */
			while (!found && fgets(line, sizeof(line), info)) {
				long long a, b;

				if (strncmp(line, "lock:", 5) || !strstr(line, "OFDLCK"))
					continue;
				if (sscanf(strrchr(line, ':') + 1, "%*u %lld %lld", &a, &b) == 2 &&
				    a <= off && off <= b)
					found = pid;
			}
			fclose(info);
		}
		closedir(fds);
	}
	closedir(procs);
	if (found) {
		cmdline_of(found, cmd, sizeof(cmd));
		snprintf(buf, len, "pid %d (%s)", (int)found, cmd[0] ? cmd : "?");
	}
}

/*
 * A writer's hold of generation gen of block `name` before it writes
 * into it: waits for its readers at most lock_wait_ms (as for the lock),
 * saying after a second for whom it waits; -ETIMEDOUT with st->why then.
 */
static int gen_hold(struct xtcam_state *st, const char *name, __u32 id, __u32 gen)
{
	char who[448];
	bool told = false;
	__u64 t0 = now_ms();
	int e;

	st->why[0] = 0;
	for (;;) {
		__u64 waited = now_ms() - t0;
		struct timespec pause = { 0, 5 * 1000000 };

		e = pin_set(st, id, gen, F_WRLCK, false);
		if (e != -EAGAIN)
			return e;
		if (lock_wait_ms >= 0 && waited >= (__u64)lock_wait_ms) {
			pin_holder(st, pin_off(id, gen), who, sizeof(who));
			snprintf(st->why, sizeof(st->why), "block %s: its rules are being read by %s; "
				 "%s (-w SECONDS waits longer)", name, who,
				 lock_wait_ms ? "gave up waiting" : "not waiting (-w 0)");
			return -ETIMEDOUT;
		}
		if (!told && waited >= 1000) {
			pin_holder(st, pin_off(id, gen), who, sizeof(who));
			fprintf(stderr, "xtcam: block %s: waiting for %s to finish reading its rules\n",
				name, who);
			told = true;
		}
		nanosleep(&pause, NULL);
	}
}

static void gen_release(struct xtcam_state *st, __u32 id, __u32 gen)
{
	pin_set(st, id, gen, F_UNLCK, false);
}

/* --- the instance's folder ---------------------------------------------------- */

/* The folder must be a directory of its own on bpffs: through a symbolic
 * link the pins (and a flush) would land in the link's target. */
static int check_root(const char *root, char *err, size_t errlen)
{
	struct stat s;

	if (lstat(root, &s)) {
		if (errno == ENOENT)
			return 0;
		xtcam_set_err(err, errlen, "state %s: %s", root, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(s.st_mode)) {
		xtcam_set_err(err, errlen, "state %s is a symbolic link: xtcam keeps its state "
			"only in a directory of its own on bpffs", root);
		return -ELOOP;
	}
	if (!S_ISDIR(s.st_mode)) {
		xtcam_set_err(err, errlen, "state %s is not a directory", root);
		return -ENOTDIR;
	}
	if (!is_bpffs(root)) {
		xtcam_set_err(err, errlen, "state %s is not on bpffs", root);
		return -EXDEV;
	}
	return 0;
}

/* the registry's pins; "blocks" marks a complete one (pinned last) */
static const char *const reg_names[] = { "blocks", "rules0", "rules1", "bindings", "ranks" };
enum { NREG = sizeof(reg_names) / sizeof(reg_names[0]) };
/* the generation's pin: made beside a registry that lacks it (one of an
 * older build, or one whose create was cut short) by the next holder of
 * the lock */
#define GEN_PIN "generation"

static bool reg_name(const char *name)
{
	size_t i;

	for (i = 0; i < NREG; i++)
		if (!strcmp(name, reg_names[i]))
			return true;
	return !strcmp(name, XTCAM_RESTORE_MARKER) || !strcmp(name, GEN_PIN);
}

/* Open the generation's map; with the lock, make it when it is missing. */
static int gen_open(struct xtcam_state *st, bool lock, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd;

	if (pin_path(st, GEN_PIN, path, sizeof(path)))
		return -ENAMETOOLONG;
	st->fd_gen = bpf_obj_get(path);
	if (st->fd_gen >= 0 || errno != ENOENT || !lock) {
		if (st->fd_gen >= 0 || errno == ENOENT)
			return 0;
		xtcam_set_err(err, errlen, "registry %s: %s", path, strerror(errno));
		return -errno;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xtcam_gen", sizeof(__u32), sizeof(__u64), 1,
			    NULL);
	if (fd < 0 || bpf_obj_pin(fd, path)) {
		int e = -errno;

		if (fd >= 0)
			close(fd);
		xtcam_set_err(err, errlen, "registry %s: cannot make it: %s", path, strerror(-e));
		return e;
	}
	st->fd_gen = fd;
	return 0;
}

/* Before the first write of a holder of the lock: the generation + 1. */
static void gen_bump(struct xtcam_state *st)
{
	__u32 zero = 0;
	__u64 g = 0;

	if (st->gen_bumped || st->fd_gen < 0)
		return;
	if (!bpf_map_lookup_elem(st->fd_gen, &zero, &g)) {
		g++;
		if (!bpf_map_update_elem(st->fd_gen, &zero, &g, BPF_ANY))
			st->gen_bumped = true;
	}
}

int xtcam_state_gen(struct xtcam_state *st, __u64 *gen)
{
	__u32 zero = 0;

	*gen = 0;
	if (st->fd_gen < 0)
		return -ENOENT;
	return bpf_map_lookup_elem(st->fd_gen, &zero, gen) ? -errno : 0;
}

static int map_id(int fd, __u32 *id)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

int xtcam_state_gen_current(struct xtcam_state *st, __u64 *gen)
{
	char path[PATH_MAX];
	__u32 mine = 0, pinned = 0;
	int fd, e;

	*gen = 0;
	if (st->fd_gen < 0)
		return -ENOENT;
	if (pin_path(st, GEN_PIN, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -ESTALE;
	e = map_id(fd, &pinned);
	close(fd);
	if (!e)
		e = map_id(st->fd_gen, &mine);
	if (!e && mine != pinned)
		e = -ESTALE;
	return e ? e : xtcam_state_gen(st, gen);
}

int xtcam_state_lock(struct xtcam_state *st, char *err, size_t errlen)
{
	int e;

	if (st->lock_fd >= 0)
		return 0;
	st->lock_fd = open(st->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (st->lock_fd < 0) {
		e = -errno;
		xtcam_set_err(err, errlen, "lock %s: %s", st->lock_path, strerror(-e));
		return e;
	}
	e = take_lock(st->lock_fd, st->lock_path, err, errlen);
	if (e) {
		close(st->lock_fd);
		st->lock_fd = -1;
		return e;
	}
	st->gen_bumped = false;
	return 0;
}

bool xtcam_state_lock_wanted(struct xtcam_state *st)
{
	if (st->lock_fd < 0 || turnstile(st->lock_fd, F_WRLCK))
		return true;
	turnstile(st->lock_fd, F_UNLCK);
	return false;
}

void xtcam_state_relock(struct xtcam_state *st)
{
	st->gen_bumped = false;
}

/* The first entry of the folder that is not a registry pin (nor the marker
 * of an unfinished restore), into buf;
 * 0 when there is none (or no folder). */
static int foreign_entry(const char *root, char *buf, size_t len)
{
	DIR *d = opendir(root);
	struct dirent *de;
	int found = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!found && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || reg_name(de->d_name))
			continue;
		snprintf(buf, len, "%s", de->d_name);
		found = 1;
	}
	closedir(d);
	return found;
}

static int state_open(struct xtcam_state **out, bool create, bool lock, char *err,
		      size_t errlen);

int xtcam_state_open(struct xtcam_state **out, bool create, char *err, size_t errlen)
{
	return state_open(out, create, true, err, errlen);
}

int xtcam_state_open_ro(struct xtcam_state **out, char *err, size_t errlen)
{
	return state_open(out, false, false, err, errlen);
}

/* a pin of the registry; read-only for a reader (no write can slip in) */
static int reg_get(const struct xtcam_state *st, const char *path)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = st->ro ? BPF_F_RDONLY : 0);

	return bpf_obj_get_opts(path, &o);
}

static int state_open(struct xtcam_state **out, bool create, bool lock, char *err,
		      size_t errlen)
{
	struct xtcam_state *st = calloc(1, sizeof(*st));
	char path[PATH_MAX], lockp[96], other[256];
	const char *inst;
	size_t m;
	int e;

	if (!st)
		return -ENOMEM;
	st->fd_blocks = st->fd_rules[0] = st->fd_rules[1] = st->fd_bindings = st->fd_ranks = -1;
	st->fd_gen = -1;
	st->pin_fd = -1;
	/* the registry's maps; "blocks" first (the create pins it last) */
	const struct { const char *name; int *fd; } reg[] = {
		{ reg_names[0], &st->fd_blocks }, { reg_names[1], &st->fd_rules[0] },
		{ reg_names[2], &st->fd_rules[1] }, { reg_names[3], &st->fd_bindings },
		{ reg_names[4], &st->fd_ranks },
	};
	e = instance(&inst, err, errlen);
	if (e) {
		st->lock_fd = -1;
		goto fail;
	}
	st->lock_fd = -1;
	st->ro = !lock && !create;
	snprintf(lockp, sizeof(lockp), "/run/%s.lock", inst);
	snprintf(st->lock_path, sizeof(st->lock_path), "%s", lockp);
	if (lock) {
		st->lock_fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (st->lock_fd < 0) {
			e = -errno;
			xtcam_set_err(err, errlen, "lock %s: %s", lockp, strerror(-e));
			goto fail;
		}
		e = take_lock(st->lock_fd, lockp, err, errlen);
		if (e)
			goto fail;
	}
	e = find_bpffs(inst, st->root, sizeof(st->root), err, errlen);
	if (e)
		goto fail;
	e = check_root(st->root, err, errlen);
	if (e)
		goto fail;
	if ((e = pin_path(st, reg[0].name, path, sizeof(path))))
		goto fail;
	st->fd_blocks = reg_get(st, path);
	if (st->fd_blocks < 0 && errno != ENOENT) {
		e = -errno;
		xtcam_set_err(err, errlen, "registry %s: %s", path, strerror(-e));
		goto fail;
	}
	/* older builds kept both generations in one map, "rules": refused
	 * whether or not their registry is complete, and untouched */
	if ((e = pin_path(st, "rules", path, sizeof(path))))
		goto fail;
	if (!access(path, F_OK)) {
		e = -EUCLEAN;
		xtcam_set_err(err, errlen, "registry %s was written by another version of "
			"xtcam (one rules map, this one uses rules0 and rules1): unbind "
			"and flush with that version, or detach its programs and remove %s",
			st->root, st->root);
		goto fail;
	}
	if (st->fd_blocks >= 0) {
		/* a registry of another version first shows in its blocks */
		e = check_layout(st, err, errlen);
		if (e)
			goto fail;
		/* "blocks" is pinned last: the others must be there */
		for (m = 1; m < NREG; m++) {
			if ((e = pin_path(st, reg[m].name, path, sizeof(path))))
				goto fail;
			*reg[m].fd = reg_get(st, path);
			if (*reg[m].fd < 0) {
				e = -errno;
				xtcam_set_err(err, errlen, "registry in %s is incomplete: %s: %s "
					"(remove %s to start again)", st->root, reg[m].name,
					strerror(-e), st->root);
				goto fail;
			}
		}
		e = check_layout(st, err, errlen);
		if (e)
			goto fail;
	} else if (create) {        /* no "blocks" (ENOENT): none yet */
		struct xtcam_registry *skel;

		/* a folder of somebody else's (XTCAM_INSTANCE=xdp, libxdp's):
		 * not ours to fill, nor later to flush */
		e = foreign_entry(st->root, other, sizeof(other));
		if (e) {
			if (e > 0) {
				e = -EEXIST;
				xtcam_set_err(err, errlen, "state %s holds pins xtcam did not make "
					"(%s): not an xtcam state; choose another XTCAM_INSTANCE",
					st->root, other);
			} else {
				xtcam_set_err(err, errlen, "state %s: %s", st->root, strerror(-e));
			}
			goto fail;
		}
		skel = xtcam_registry__open_and_load();
		if (!skel) {
			e = -errno;
			xtcam_set_err(err, errlen, "registry: cannot create its maps: %s", strerror(-e));
			goto fail;
		}
		if (mkdir(st->root, 0700) && errno != EEXIST) {
			e = -errno;
			xtcam_registry__destroy(skel);
			xtcam_set_err(err, errlen, "mkdir %s: %s", st->root, strerror(-e));
			goto fail;
		}
		/* pin the others first, "blocks" last: it is what marks a
		 * registry as complete.  Without it, pins left by a create that
		 * was cut short hold nothing committed: replaced. */
		struct bpf_map *maps[NREG] = { skel->maps.blocks, skel->maps.rules0,
					       skel->maps.rules1, skel->maps.bindings,
					       skel->maps.ranks };

		e = 0;
		for (m = NREG; m-- > 0 && !e;) {
			if ((e = pin_path(st, reg[m].name, path, sizeof(path))))
				break;
			if (m && unlink(path) && errno != ENOENT)
				e = -errno;
			else if (bpf_map__pin(maps[m], path))
				e = -errno;
			else
				*reg[m].fd = dup(bpf_map__fd(maps[m]));
		}
		xtcam_registry__destroy(skel);
		if (e) {
			xtcam_set_err(err, errlen, "registry: cannot pin it in %s: %s", st->root,
				strerror(-e));
			goto fail;
		}
	}
	/* a reader leaves out the blocks of a restore that has not committed */
	if (st->ro && st->fd_blocks >= 0) {
		e = xtcam_state_restoring(st);
		if (e) {
			xtcam_set_err(err, errlen, "registry %s: %s: %s", st->root,
				      XTCAM_RESTORE_MARKER, strerror(-e));
			goto fail;
		}
	}
	/* else no registry, and not asked to make one: an empty registry that
	 * is not there (every fd -1): it reads as no blocks and no bindings,
	 * and a command that does not create one changes nothing */
	if (st->fd_blocks >= 0 && (e = gen_open(st, lock, err, errlen)))
		goto fail;
	*out = st;
	return 0;
fail:
	xtcam_state_close(st);
	return e;
}

/* --- dumping a hash map --------------------------------------------------- */

static int dump(int fd, size_t ksz, size_t vsz, void **keys_out, void **vals_out,
		size_t *n_out)
{
	size_t cap = 256, n = 0;
	char *keys = malloc(cap * ksz), *vals = malloc(cap * vsz);
	char *cur = NULL, *next = malloc(ksz);
	int e = 0;

	if (!keys || !vals || !next) {
		e = -ENOMEM;
		goto fail;
	}
	/* fd -1: the registry does not exist (opened without create) */
	while (fd >= 0) {
		if (bpf_map_get_next_key(fd, cur, next)) {
			if (errno == ENOENT)
				break;
			e = -errno;
			goto fail;
		}
		if (n == cap) {
			char *k2 = realloc(keys, 2 * cap * ksz), *v2;

			if (!k2) {
				e = -ENOMEM;
				goto fail;
			}
			keys = k2;
			v2 = realloc(vals, 2 * cap * vsz);
			if (!v2) {
				e = -ENOMEM;
				goto fail;
			}
			vals = v2;
			cap *= 2;
		}
		memcpy(keys + n * ksz, next, ksz);
		cur = keys + n * ksz;
		if (bpf_map_lookup_elem(fd, cur, vals + n * vsz))
			continue;
		n++;
	}
	free(next);
	*keys_out = keys;
	*vals_out = vals;
	*n_out = n;
	return 0;
fail:
	free(keys);
	free(vals);
	free(next);
	return e;
}

/* --- blocks ------------------------------------------------------------------ */

static void block_key(const char *name, struct xtcam_block_key *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
}

static int block_cmp(const void *a, const void *b)
{
	return strcmp(((const struct xtcam_block_rec *)a)->name,
		      ((const struct xtcam_block_rec *)b)->name);
}

/* Sorted by name: hash order changes with the map, and users diff what
 * `show` and `save` print. */
/*
 * One block record.  Under the lock nobody else writes it.  Without it, a
 * record replaced while it is copied can be reused at once by the map's
 * next update (hash elements are recycled without a grace period), so the
 * copy could mix two records: it is read until two copies in a row are
 * the same.  A block being deleted reads as gone to a reader.
 */
static int block_lookup(struct xtcam_state *st, const struct xtcam_block_key *k,
			struct xtcam_block_rec *rec)
{
	struct xtcam_block_rec again;
	int i;

	if (bpf_map_lookup_elem(st->fd_blocks, k, rec))
		return -errno;
	if (!st->ro)
		return 0;
	if (xtcam_state_hidden(st, k->name))
		return -ENOENT;
	for (i = 0; i < 1000; i++) {
		if (bpf_map_lookup_elem(st->fd_blocks, k, &again))
			return -errno;
		if (!memcmp(rec, &again, sizeof(again)))
			return rec->dirty == XTCAM_BLOCK_DYING ? -ENOENT : 0;
		*rec = again;
	}
	return -EAGAIN;
}

int xtcam_state_blocks(struct xtcam_state *st, struct xtcam_block_rec **out, size_t *n)
{
	struct xtcam_block_key *keys;
	struct xtcam_block_rec *vals;
	size_t i, k = 0;
	int e = dump(st->fd_blocks, sizeof(struct xtcam_block_key),
		     sizeof(struct xtcam_block_rec), (void **)&keys, (void **)&vals, n);

	if (e)
		return e;
	/* a reader reads each record again, whole (see block_lookup) */
	for (i = 0; st->ro && i < *n; i++) {
		e = block_lookup(st, &keys[i], &vals[k]);
		if (!e)
			k++;
		else if (e != -ENOENT)
			break;
	}
	if (st->ro)
		*n = k;
	free(keys);
	if (e && e != -ENOENT) {
		free(vals);
		return e;
	}
	qsort(vals, *n, sizeof(struct xtcam_block_rec), block_cmp);
	*out = vals;
	return 0;
}

int xtcam_state_block_get(struct xtcam_state *st, const char *name,
			  struct xtcam_block_rec *rec)
{
	struct xtcam_block_key k;

	if (st->fd_blocks < 0)
		return -ENOENT;     /* no registry: no block */
	block_key(name, &k);
	return block_lookup(st, &k, rec);
}

bool xtcam_state_hidden(const struct xtcam_state *st, const char *block)
{
	size_t i;

	for (i = 0; i < st->nhidden; i++)
		if (!strncmp(st->hidden[i], block, XTCAM_STATE_NAME))
			return true;
	return false;
}

int xtcam_state_restoring(struct xtcam_state *st)
{
	char path[PATH_MAX], key[XTCAM_STATE_NAME];
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);
	size_t cap = 0;
	int fd, e;

	st->nhidden = 0;
	if ((e = pin_path(st, XTCAM_RESTORE_MARKER, path, sizeof(path))))
		return e;
	fd = bpf_obj_get_opts(path, &o);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	for (e = bpf_map_get_next_key(fd, NULL, key); !e; e = bpf_map_get_next_key(fd, key, key)) {
		if (st->nhidden == cap) {
			void *p;

			cap = cap ? 2 * cap : 16;
			p = realloc(st->hidden, cap * sizeof(*st->hidden));
			if (!p) {
				close(fd);
				return -ENOMEM;
			}
			st->hidden = p;
		}
		memcpy(st->hidden[st->nhidden++], key, sizeof(key));
	}
	e = errno == ENOENT ? 0 : -errno;
	close(fd);
	return e;
}

int xtcam_state_block_moved(struct xtcam_state *st, const struct xtcam_block_rec *rec)
{
	struct xtcam_block_rec now;
	int e = xtcam_state_block_get(st, rec->name, &now);

	if (e)
		return e;
	/* a stage writes the inactive generation (dirty raised, seq kept):
	 * the active one, which the reader read, is untouched until seq moves */
	return now.id == rec->id && now.seq == rec->seq && now.rgen == rec->rgen &&
	       now.dirty != XTCAM_BLOCK_DYING ? 0 : -EAGAIN;
}

int xtcam_state_block_pin(struct xtcam_state *st, const char *name,
			  struct xtcam_block_rec *rec)
{
	struct xtcam_block_rec now;
	int e = xtcam_state_block_get(st, name, rec);

	if (e)
		return e;
	e = pin_set(st, rec->id, rec->rgen, F_RDLCK, false);
	if (e)
		return e;
	/* the generation held is the active one still: from now on no writer
	 * writes into it (it writes under its exclusive hold only, and only
	 * into a generation that is not active, staged whole before a commit
	 * makes it active) */
	e = xtcam_state_block_get(st, name, &now);
	if (!e && (now.id != rec->id || now.rgen != rec->rgen))
		e = -EAGAIN;
	if (e) {
		gen_release(st, rec->id, rec->rgen);
		return e;
	}
	*rec = now;
	return 0;
}

void xtcam_state_block_unpin(struct xtcam_state *st, const struct xtcam_block_rec *rec)
{
	gen_release(st, rec->id, rec->rgen);
}

int xtcam_state_block_pin_check(struct xtcam_state *st, const struct xtcam_block_rec *rec)
{
	struct xtcam_block_rec now;
	int e = xtcam_state_block_get(st, rec->name, &now);

	if (e == -ENOENT || (!e && now.id != rec->id))
		return 0;       /* deleted: its sweep waits for the pin */
	if (e)
		return e;
	/* the same generation active: no commit (the next one stages into
	 * the generation pinned); another: one commit, its copy not done */
	if (now.rgen == rec->rgen ? now.seq == rec->seq :
	    now.seq == rec->seq + 1 && now.dirty)
		return 0;
	return -EUCLEAN;
}

int xtcam_state_block_put(struct xtcam_state *st, const struct xtcam_block_rec *rec)
{
	struct xtcam_block_key k;

	gen_bump(st);
	block_key(rec->name, &k);
	return bpf_map_update_elem(st->fd_blocks, &k, rec, 0) ? -errno : 0;
}

static bool id_marked(struct xtcam_state *st, __u32 id);

__u32 xtcam_state_next_block_id(struct xtcam_state *st)
{
	struct xtcam_block_rec *b;
	size_t n, i;
	__u32 id = 1;

	if (xtcam_state_blocks(st, &b, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (b[i].id >= id)
			id = b[i].id + 1;
	free(b);
	/* past the ids of deleted blocks whose rules are still being swept
	 * (xtcam_state_block_del): their markers go last */
	while (id_marked(st, id))
		id++;
	return id;
}

/* --- the rank index ------------------------------------------------------- */

static void rank_key(struct xtcam_rank_key *k, __u32 id, __u32 gen, __u32 prio, __u32 handle)
{
	k->prefixlen = 128;
	k->block = htonl(id);
	k->gen = htonl(gen);
	k->prio = htonl(prio);
	k->handle = htonl(handle);
}

/* the order of the trie: of the 16 bytes after prefixlen */
static int rank_cmp(const struct xtcam_rank_key *a, const struct xtcam_rank_key *b)
{
	return memcmp(&a->block, &b->block, 16);
}

static bool rank_in(const struct xtcam_rank_key *k, __u32 id, __u32 gen)
{
	return ntohl(k->block) == id && ntohl(k->gen) == gen;
}

int xtcam_state_index_init(struct xtcam_state *st, __u32 id)
{
	struct xtcam_rank_key k;
	__u32 zero = 0, g;

	gen_bump(st);
	for (g = 0; g < 2; g++) {
		rank_key(&k, id, g, 0, 0);
		if (bpf_map_update_elem(st->fd_ranks, &k, &zero, 0))
			return -errno;
	}
	return 0;
}

/*
 * The keys of (id, gen) after *cur, in order: *cur becomes the next one;
 * 1 when there is one, 0 at the end, -errno.  A key removed under a walk
 * without the lock makes the trie start over from its first key: the walk
 * then finds its place again from the block's marker.
 */
static int rank_next(struct xtcam_state *st, __u32 id, __u32 gen, struct xtcam_rank_key *cur)
{
	struct xtcam_rank_key start, next, last = *cur;
	bool again = false;

	rank_key(&start, id, gen, 0, 0);
	for (;;) {
		if (bpf_map_get_next_key(st->fd_ranks, cur, &next))
			return errno == ENOENT ? 0 : -errno;
		if (rank_cmp(&next, cur) <= 0) {
			/* cur is gone: from the marker, past last */
			if (!rank_cmp(cur, &start))
				return -EUCLEAN;        /* no marker: not a block's */
			*cur = start;
			again = true;
			continue;
		}
		if (!rank_in(&next, id, gen))
			return 0;
		*cur = next;
		if (again && rank_cmp(&next, &last) <= 0)
			continue;
		return 1;
	}
}

/*
 * Up to max keys of (id, gen) after *cur, as rank_next gives them, in *n
 * keys at out (*cur becomes the last): 1 when there may be more, 0 at the
 * end, -errno.  One batched lookup walks the trie for them as
 * get_next_key does (a syscall for the batch, against one a key: a
 * quarter of the time).  Where the batch's keys stop rising (a writer
 * removed the key the kernel walked from, and the trie started over), or
 * where the kernel has no batch for the trie, rank_next takes the next
 * key, finding its place again.
 */
static int rank_batch(struct xtcam_state *st, __u32 id, __u32 gen, struct xtcam_rank_key *cur,
		      struct xtcam_rank_key *out, __u32 *vals, size_t max, size_t *n)
{
	struct xtcam_rank_key in = *cur, last;
	__u32 cnt = (__u32)max, i;
	int e;

	*n = 0;
	e = bpf_map_lookup_batch(st->fd_ranks, &in, &last, out, vals, &cnt, NULL) ? -errno : 0;
	if (e && e != -ENOENT)
		cnt = 0;        /* (what it may have copied is not looked at) */
	for (i = 0; i < cnt; i++) {
		if (rank_cmp(&out[i], cur) <= 0)
			break;
		if (!rank_in(&out[i], id, gen))
			return 0;
		*cur = out[i];
		(*n)++;
	}
	if (i == cnt && cnt)
		return e == -ENOENT ? 0 : 1;
	if (i == cnt && e == -ENOENT)
		return 0;
	e = rank_next(st, id, gen, cur);
	if (e == 1)
		out[(*n)++] = *cur;
	return e;
}

static int walk_gen(struct xtcam_state *st, __u32 id, __u32 gen,
		    int (*fn)(void *arg, const struct xtcam_rank_key *k), void *arg)
{
	struct xtcam_rank_key cur;
	int e;

	if (st->fd_ranks < 0)
		return 0;
	rank_key(&cur, id, gen, 0, 0);
	while ((e = rank_next(st, id, gen, &cur)) == 1)
		if ((e = fn(arg, &cur)))
			return e;
	return e;
}

struct rule_walk {
	struct xtcam_state *st;
	__u32 id, gen;
	xtcam_state_rule_fn fn;
	void *arg;
};

static int walk_one(void *arg, const struct xtcam_rank_key *k)
{
	struct rule_walk *w = arg;
	struct xtcam_rule_key rk = { w->id, w->gen, ntohl(k->handle) };
	struct xtcam_rule r;

	if (bpf_map_lookup_elem(w->st->fd_rules[w->gen & 1], &rk, &r))
		return errno == ENOENT ? 0 : -errno;    /* not written yet, or gone */
	if (r.prio != ntohl(k->prio) || r.handle != rk.handle)
		return 0;       /* moved to another rank: shown there */
	return w->fn(w->arg, &r);
}

/*
 * A long block is read ahead by two threads of their own: one walks the
 * index (a syscall a chunk, rank_batch), the other looks the rules up (another), while
 * the caller's thread does what it does with them (formats and prints
 * them), a chunk of rules at a time, in order.  The rules reach fn as a
 * walk in one thread would give them.
 */
#define AHEAD_MIN   4096        /* rules: a shorter block is walked in line */
#define AHEAD_CHUNK 256         /* rules a hand-over */
#define AHEAD_BUFS  128         /* chunks read ahead at most */

struct ahead_chunk {
	size_t nk, n;           /* keys walked; rules read of them */
	int end;                /* the walk ended after these: 1 no, 0 done,
				 * -errno */
	struct xtcam_rank_key k[AHEAD_CHUNK];
	__u32 v[AHEAD_CHUNK];   /* the keys' values (rank_batch's) */
	struct xtcam_rule r[AHEAD_CHUNK];
};

/* Chunk i (in the order of the walk) is in buf[i % AHEAD_BUFS]; the
 * counts say how far each stage is. */
struct ahead {
	struct xtcam_state *st;
	__u32 id, gen;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ahead_chunk *buf[AHEAD_BUFS];
	size_t walked, read, used;  /* chunks: keys walked, rules read, used */
	bool stop;                  /* the caller is done: no more reading */
};

static void ahead_done(struct ahead *a, size_t *count)
{
	pthread_mutex_lock(&a->mu);
	(*count)++;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static void *ahead_walk(void *arg)
{
	struct ahead *a = arg;
	struct xtcam_rank_key cur;
	size_t i = 0;
	int e = 1;

	rank_key(&cur, a->id, a->gen, 0, 0);
	while (e == 1) {
		struct ahead_chunk *c;

		pthread_mutex_lock(&a->mu);
		while (!a->stop && i - a->used == AHEAD_BUFS)
			pthread_cond_wait(&a->cv, &a->mu);
		pthread_mutex_unlock(&a->mu);
		if (a->stop)
			break;
		c = a->buf[i % AHEAD_BUFS];
		c->nk = 0;
		while (c->nk < AHEAD_CHUNK && e == 1) {
			size_t got;

			e = rank_batch(a->st, a->id, a->gen, &cur, c->k + c->nk, c->v + c->nk,
				       AHEAD_CHUNK - c->nk, &got);
			c->nk += got;
		}
		c->end = e;
		ahead_done(a, &a->walked);
		i++;
	}
	return NULL;
}

static void *ahead_read(void *arg)
{
	struct ahead *a = arg;
	size_t i = 0, j;
	int e = 1;

	while (e == 1) {
		struct ahead_chunk *c;

		pthread_mutex_lock(&a->mu);
		while (!a->stop && i == a->walked)
			pthread_cond_wait(&a->cv, &a->mu);
		pthread_mutex_unlock(&a->mu);
		if (a->stop)
			break;
		c = a->buf[i % AHEAD_BUFS];
		c->n = 0;
		for (j = 0; j < c->nk; j++) {
			struct xtcam_rule_key rk = { a->id, a->gen, ntohl(c->k[j].handle) };
			struct xtcam_rule *r = &c->r[c->n];

			if (bpf_map_lookup_elem(a->st->fd_rules[a->gen & 1], &rk, r)) {
				if (errno == ENOENT)
					continue;       /* not written yet, or gone */
				c->end = -errno;
				break;
			}
			if (r->prio != ntohl(c->k[j].prio) || r->handle != rk.handle)
				continue;               /* moved: shown at its rank */
			c->n++;
		}
		e = c->end;
		ahead_done(a, &a->read);
		i++;
	}
	return NULL;
}

static int walk_ahead(struct xtcam_state *st, __u32 id, __u32 gen, xtcam_state_rule_fn fn,
		      void *arg)
{
	struct ahead a = { .st = st, .id = id, .gen = gen };
	pthread_t tw, tr;
	bool have_w = false, have_r = false;
	size_t i;
	int e = 0, end = 1;

	for (i = 0; i < AHEAD_BUFS; i++)
		if (!(a.buf[i] = malloc(sizeof(*a.buf[i])))) {
			e = -ENOMEM;
			goto out;
		}
	pthread_mutex_init(&a.mu, NULL);
	pthread_cond_init(&a.cv, NULL);
	e = -pthread_create(&tw, NULL, ahead_walk, &a);
	have_w = !e;
	if (!e) {
		e = -pthread_create(&tr, NULL, ahead_read, &a);
		have_r = !e;
	}
	while (!e && end == 1) {
		struct ahead_chunk *c;

		pthread_mutex_lock(&a.mu);
		while (a.used == a.read)
			pthread_cond_wait(&a.cv, &a.mu);
		c = a.buf[a.used % AHEAD_BUFS];
		pthread_mutex_unlock(&a.mu);
		for (i = 0; !e && i < c->n; i++)
			e = fn(arg, &c->r[i]);
		end = c->end;
		ahead_done(&a, &a.used);
	}
	if (!e && end < 0)
		e = end;
	pthread_mutex_lock(&a.mu);
	a.stop = true;
	pthread_cond_broadcast(&a.cv);
	pthread_mutex_unlock(&a.mu);
	if (have_w)
		pthread_join(tw, NULL);
	if (have_r)
		pthread_join(tr, NULL);
	pthread_cond_destroy(&a.cv);
	pthread_mutex_destroy(&a.mu);
out:
	for (i = 0; i < AHEAD_BUFS; i++)
		free(a.buf[i]);
	return e;
}

int xtcam_state_rules_walk(struct xtcam_state *st, const struct xtcam_block_rec *b,
			   xtcam_state_rule_fn fn, void *arg)
{
	struct rule_walk w = { st, b->id, b->rgen & 1, fn, arg };

	if (st->fd_rules[0] < 0 || st->fd_ranks < 0)
		return 0;
	if (b->nrules >= AHEAD_MIN)
		return walk_ahead(st, b->id, b->rgen & 1, fn, arg);
	return walk_gen(st, b->id, b->rgen & 1, walk_one, &w);
}

struct rule_vec {
	struct xtcam_rule *r;
	size_t n, cap;
};

static int vec_add(void *arg, const struct xtcam_rule *r)
{
	struct rule_vec *v = arg;

	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 256;
		struct xtcam_rule *p = realloc(v->r, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		v->r = p;
		v->cap = cap;
	}
	v->r[v->n++] = *r;
	return 0;
}

int xtcam_state_rules(struct xtcam_state *st, const struct xtcam_block_rec *b,
		      bool sorted, struct xtcam_rule **out, size_t *n)
{
	struct rule_vec v = { NULL, 0, 0 };
	int e = xtcam_state_rules_walk(st, b, vec_add, &v);

	(void)sorted;
	if (e) {
		free(v.r);
		return e;
	}
	if (!v.r && !(v.r = malloc(sizeof(*v.r))))
		return -ENOMEM;
	*out = v.r;
	*n = v.n;
	return 0;
}

/* the keys of one generation of a block, as the index has them */
struct key_vec {
	struct xtcam_rank_key *k;
	size_t n, cap;
};

static int kvec_add(void *arg, const struct xtcam_rank_key *k)
{
	struct key_vec *v = arg;

	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 256;
		struct xtcam_rank_key *p = realloc(v->k, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		v->k = p;
		v->cap = cap;
	}
	v->k[v->n++] = *k;
	return 0;
}

static int del_keys(int fd, const void *keys, size_t ksz, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	{
		__u32 cnt = (__u32)n;

		if (!bpf_map_delete_batch(fd, keys, &cnt, NULL))
			return 0;
	}
	for (i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, (const char *)keys + i * ksz) && errno != ENOENT)
			return -errno;
	return 0;
}

static int put_keys(int fd, const void *keys, const void *vals, size_t ksz, size_t vsz,
		    size_t n)
{
	__u32 cnt = (__u32)n;
	size_t i;

	if (!n || !bpf_map_update_batch(fd, keys, vals, &cnt, NULL))
		return 0;
	if (errno != EINVAL && errno != EOPNOTSUPP && errno != 524)
		return -errno;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, (const char *)keys + i * ksz,
					(const char *)vals + i * vsz, 0))
			return -errno;
	return 0;
}

/* Empty generation gen of block id: its rules, then their keys (the keys
 * cover the rules, so none is left behind); markers too when all. */
static int gen_clear(struct xtcam_state *st, __u32 id, __u32 gen, bool all)
{
	struct key_vec v = { NULL, 0, 0 };
	struct xtcam_rule_key *rk;
	size_t i;
	int e = walk_gen(st, id, gen, kvec_add, &v);

	if (e) {
		free(v.k);
		return e;
	}
	rk = calloc(v.n + 1, sizeof(*rk));
	if (!rk) {
		free(v.k);
		return -ENOMEM;
	}
	for (i = 0; i < v.n; i++)
		rk[i] = (struct xtcam_rule_key){ id, gen, ntohl(v.k[i].handle) };
	e = del_keys(st->fd_rules[gen & 1], rk, sizeof(*rk), v.n);
	if (!e)
		e = del_keys(st->fd_ranks, v.k, sizeof(*v.k), v.n);
	if (!e && all) {
		struct xtcam_rank_key m;

		rank_key(&m, id, gen, 0, 0);
		if (bpf_map_delete_elem(st->fd_ranks, &m) && errno != ENOENT)
			e = -errno;
	}
	free(rk);
	free(v.k);
	return e;
}

/* does the index hold a marker of block id (a block, or the leftovers of
 * a deleted one not swept yet)? */
static bool id_marked(struct xtcam_state *st, __u32 id)
{
	struct xtcam_rank_key k;
	__u32 v, g;

	if (st->fd_ranks < 0)
		return false;
	for (g = 0; g < 2; g++) {
		rank_key(&k, id, g, 0, 0);
		if (!bpf_map_lookup_elem(st->fd_ranks, &k, &v))
			return true;
	}
	return false;
}

/* both generations of a deleted block: its rules, their keys, the
 * markers last (until then its id is not given to a new block) */
static int sweep(struct xtcam_state *st, __u32 id, __u32 rgen)
{
	int e = gen_clear(st, id, !rgen, true);

	return e ? e : gen_clear(st, id, rgen, true);
}

/* Hold both generations of a deleted block against the readers that
 * pinned one before the delete: waiting for them, or -EAGAIN at once
 * (nothing held then). */
static int sweep_hold(struct xtcam_state *st, __u32 id, bool wait)
{
	int e = pin_set(st, id, 0, F_WRLCK, wait);

	if (!e && (e = pin_set(st, id, 1, F_WRLCK, wait)))
		gen_release(st, id, 0);
	return e;
}

static void sweep_release(struct xtcam_state *st, __u32 id)
{
	gen_release(st, id, 0);
	gen_release(st, id, 1);
}

/* Blocks up to this many rules are swept by block del itself. */
#define SWEEP_INLINE 4096

/*
 * Sweep in a process of its own, detached (it outlives the command, which
 * returns at once): it lets go of the lock and of the terminal first.  A
 * sweep is safe without the lock: nothing else reads or writes the keys
 * of a block without a record, and the id is not reused while its
 * markers are there.  Returns -errno when no process could be made (the
 * caller sweeps itself).
 */
static bool sweep_keeps(int fd, void *arg)
{
	const struct xtcam_state *st = arg;

	return fd == st->fd_rules[0] || fd == st->fd_rules[1] || fd == st->fd_ranks ||
	       fd == st->pin_fd;
}

void xtcam_outlive(bool (*keep)(int fd, void *arg), void *arg)
{
	long max = sysconf(_SC_OPEN_MAX);
	int fd;

	setsid();
	for (fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
		if (!keep(fd, arg))
			close(fd);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
}

static int sweep_detached(struct xtcam_state *st, __u32 id, __u32 rgen)
{
	pid_t pid = fork(), gc;
	int status;

	if (pid < 0)
		return -errno;
	if (pid) {
		if (waitpid(pid, &status, 0) < 0)
			return -errno;
		return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
	}
	/* the child: a grandchild does the work, so that nobody waits on it */
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	gc = fork();
	if (gc)
		_exit(gc < 0 ? 1 : 0);
	/* no pipe or socket of the caller's is held open by the sweep */
	xtcam_outlive(sweep_keeps, st);
	/* pins of its own (those of the caller's open file go with it) */
	if (st->pin_fd >= 0)
		close(st->pin_fd);
	st->pin_fd = -1;
	_exit(sweep_hold(st, id, true) || sweep(st, id, rgen) ? 1 : 0);
}

int xtcam_state_block_del(struct xtcam_state *st, const struct xtcam_block_rec *rec)
{
	struct xtcam_block_rec dying = *rec;
	struct xtcam_block_key k;
	int e;

	gen_bump(st);
	/* the commit point: readers take it as gone from here on (a writer
	 * that finds it so finishes the delete) */
	if (dying.dirty != XTCAM_BLOCK_DYING) {
		dying.dirty = XTCAM_BLOCK_DYING;
		dying.seq++;
		e = xtcam_state_block_put(st, &dying);
		if (e)
			return e;
		xtcam_crash_point("dying");
	}
	/* then the record: its keys are leftovers under an id that no new
	 * block takes, swept now or by a process of its own */
	block_key(rec->name, &k);
	if (bpf_map_delete_elem(st->fd_blocks, &k))
		return -errno;
	xtcam_crash_point("block-del");
	/* a reader still reading it: swept once it is done, by a process of
	 * its own too */
	if (rec->nrules <= SWEEP_INLINE && !sweep_hold(st, rec->id, false)) {
		e = sweep(st, rec->id, rec->rgen);
		sweep_release(st, rec->id);
		return e;
	}
	if (!sweep_detached(st, rec->id, rec->rgen))
		return 0;
	e = sweep_hold(st, rec->id, true);
	if (!e)
		e = sweep(st, rec->id, rec->rgen);
	sweep_release(st, rec->id);
	return e;
}

/* --- rules -------------------------------------------------------------------- */

int xtcam_state_rule_get(struct xtcam_state *st, const struct xtcam_block_rec *b,
			 __u32 handle, struct xtcam_rule *out)
{
	struct xtcam_rule_key k = { b->id, b->rgen, handle };

	if (st->fd_rules[b->rgen & 1] < 0)
		return -ENOENT;
	return bpf_map_lookup_elem(st->fd_rules[b->rgen & 1], &k, out) ? -errno : 0;
}

/* Write ops into generation gen: the keys of new ranks first, then the
 * rules (DELs removed), then the keys of ranks gone, so that the keys
 * always cover the rules.  !new_keys: the keys of new ranks are in
 * already (write_pipe). */
static int write_chunk(struct xtcam_state *st, __u32 id, __u32 gen,
		       const struct xtcam_rule_op *ops, size_t n, bool new_keys)
{
	struct xtcam_rule_key *uk = calloc(n + 1, sizeof(*uk)), *dk = calloc(n + 1, sizeof(*dk));
	struct xtcam_rank_key *nk = calloc(n + 1, sizeof(*nk)), *gk = calloc(n + 1, sizeof(*gk));
	__u32 *zero = calloc(n + 1, sizeof(*zero));
	struct xtcam_rule *uv = malloc((n + 1) * sizeof(*uv));
	size_t nu = 0, nd = 0, nn = 0, ng = 0, i;
	int e = 0;

	if (!uk || !dk || !uv || !nk || !gk || !zero) {
		e = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct xtcam_rule *r = ops[i].rule, *o = ops[i].old;

		if (ops[i].cmd != XTCAM_RULE_DEL)
			r = xtcam_rule_view(r, &uv[nu]);
		if (ops[i].cmd == XTCAM_RULE_DEL) {
			o = o ? o : r;
			dk[nd++] = (struct xtcam_rule_key){ id, gen, o->handle };
			rank_key(&gk[ng++], id, gen, o->prio, o->handle);
			continue;
		}
		uk[nu] = (struct xtcam_rule_key){ id, gen, r->handle };
		if (r != &uv[nu])
			uv[nu] = *r;
		nu++;
		if (o && o->prio == r->prio)
			continue;       /* same rank */
		rank_key(&nk[nn++], id, gen, r->prio, r->handle);
		if (o)
			rank_key(&gk[ng++], id, gen, o->prio, o->handle);
	}
	if (new_keys)
		e = put_keys(st->fd_ranks, nk, zero, sizeof(*nk), sizeof(*zero), nn);
	if (!e)
		e = del_keys(st->fd_rules[gen & 1], dk, sizeof(*dk), nd);
	if (!e)
		e = put_keys(st->fd_rules[gen & 1], uk, uv, sizeof(*uk), sizeof(*uv), nu);
	if (!e)
		e = del_keys(st->fd_ranks, gk, sizeof(*gk), ng);
out:
	free(uk);
	free(dk);
	free(uv);
	free(nk);
	free(gk);
	free(zero);
	return e;
}

/* The batch in chunks (each handle is named once in a batch, so each chunk
 * keeps the order above on its own): memory for a chunk, not the batch. */
#define WRITE_CHUNK 8192

/*
 * A big commit's copy on two cores: a thread puts the keys of
 * the new ranks, chunk by chunk, and the caller writes each chunk's rules
 * (and removes the keys of its ranks gone) once that chunk's keys are in,
 * so that the keys cover the rules at every moment, as in write_chunk.
 */
#define PIPE_MIN 65536

struct pipe {
	struct xtcam_state *st;
	__u32 id, gen;
	const struct xtcam_rule_op *ops;
	size_t n;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t done;            /* ops whose new keys are in */
	int e;                  /* the key thread's */
	bool stop;              /* the caller's: no more keys */
};

/* the keys of the new ranks of ops (write_chunk's nk) */
static int new_keys(struct xtcam_state *st, __u32 id, __u32 gen,
		    const struct xtcam_rule_op *ops, size_t n)
{
	struct xtcam_rank_key *nk = calloc(n + 1, sizeof(*nk));
	__u32 *zero = calloc(n + 1, sizeof(*zero));
	size_t nn = 0, i;
	int e;

	if (!nk || !zero) {
		free(nk);
		free(zero);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		__u32 prio, handle;

		if (ops[i].cmd == XTCAM_RULE_DEL)
			continue;
		prio = xtcam_rule_prio_of(ops[i].rule);
		handle = xtcam_rule_handle_of(ops[i].rule);
		if (ops[i].old && ops[i].old->prio == prio)
			continue;       /* same rank */
		rank_key(&nk[nn++], id, gen, prio, handle);
	}
	e = put_keys(st->fd_ranks, nk, zero, sizeof(*nk), sizeof(*zero), nn);
	free(nk);
	free(zero);
	return e;
}

static void *pipe_keys(void *arg)
{
	struct pipe *p = arg;
	size_t i, k;
	int e = 0;

	xtcam_progress_quiet = true;
	for (i = 0; !e && i < p->n; i += k) {
		k = p->n - i < WRITE_CHUNK ? p->n - i : WRITE_CHUNK;
		e = new_keys(p->st, p->id, p->gen, p->ops + i, k);
		pthread_mutex_lock(&p->mu);
		if (e)
			p->e = e;
		else
			p->done = i + k;
		e = e ? e : p->stop ? -ECANCELED : 0;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* 1: not started (the caller writes the batch itself); point: the crash
 * point once its first chunk is in (NULL: none) */
static int write_pipe(struct xtcam_state *st, __u32 id, __u32 gen,
		      const struct xtcam_rule_op *ops, size_t n, const char *phase,
		      const char *point)
{
	struct pipe p = { .st = st, .id = id, .gen = gen, .ops = ops, .n = n };
	pthread_t th;
	size_t i, k;
	int e = 0;

	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	if (pthread_create(&th, NULL, pipe_keys, &p)) {
		pthread_mutex_destroy(&p.mu);
		pthread_cond_destroy(&p.cv);
		return 1;
	}
	for (i = 0; !e && i < n; i += k) {
		k = n - i < WRITE_CHUNK ? n - i : WRITE_CHUNK;
		pthread_mutex_lock(&p.mu);
		while (p.done < i + k && !p.e)
			pthread_cond_wait(&p.cv, &p.mu);
		e = p.done < i + k ? p.e : 0;
		pthread_mutex_unlock(&p.mu);
		if (!e)
			e = write_chunk(st, id, gen, ops + i, k, false);
		if (!i && point)
			xtcam_crash_point(point);
		if (phase)
			xtcam_progress(phase, i + k, n);
	}
	pthread_mutex_lock(&p.mu);
	p.stop = true;
	pthread_mutex_unlock(&p.mu);
	pthread_join(th, NULL);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv);
	return e ? e : p.e;
}

static int write_ops(struct xtcam_state *st, __u32 id, __u32 gen,
		     const struct xtcam_rule_op *ops, size_t n, const char *phase)
{
	size_t i, k;
	int e = 0;

	for (i = 0; !e && i < n; i += k) {
		k = n - i < WRITE_CHUNK ? n - i : WRITE_CHUNK;
		e = write_chunk(st, id, gen, ops + i, k, true);
		if (phase)
			xtcam_progress(phase, i + k, n);
	}
	return e;
}

int xtcam_state_rules_stage(struct xtcam_state *st, struct xtcam_block_rec *b,
			    const struct xtcam_rule_op *ops, size_t n)
{
	int e;

	if (b->dirty == XTCAM_BLOCK_BEHIND) {
		/* the last commit's copy was left undone: first that */
		e = xtcam_state_rules_recover(st, b);
		if (e)
			return e;
	}
	/* readers of the generation to write started before the last commit:
	 * their read ends before anything is written (or nothing is) */
	e = gen_hold(st, b->name, b->id, !b->rgen);
	if (e)
		return e;
	b->dirty = 1;
	e = xtcam_state_block_put(st, b);
	if (!e)
		e = write_ops(st, b->id, !b->rgen, ops, n, "registry");
	/* (no reader pins it before the commit makes it active) */
	gen_release(st, b->id, !b->rgen);
	return e;
}

void xtcam_chunks_init(struct xtcam_chunks *ch)
{
	pthread_mutex_init(&ch->mu, NULL);
	pthread_cond_init(&ch->cv, NULL);
	ch->next = 0;
	ch->active = 0;
	ch->err = 0;
	ch->held = false;
}

void xtcam_chunks_cancel(struct xtcam_chunks *ch)
{
	pthread_mutex_lock(&ch->mu);
	ch->err = ch->err ? ch->err : -ECANCELED;
	pthread_mutex_unlock(&ch->mu);
}

void xtcam_chunks_destroy(struct xtcam_chunks *ch)
{
	pthread_mutex_destroy(&ch->mu);
	pthread_cond_destroy(&ch->cv);
}

/* chunks of ops taken from ch and written until none is left */
static int write_shared(struct xtcam_state *st, __u32 id, __u32 gen,
			const struct xtcam_rule_op *ops, size_t n, struct xtcam_chunks *ch)
{
	size_t i, k;
	int e = 0;

	for (;;) {
		pthread_mutex_lock(&ch->mu);
		if (ch->err || ch->next >= n) {
			e = ch->err;
			pthread_mutex_unlock(&ch->mu);
			return e;
		}
		i = ch->next;
		k = n - i < WRITE_CHUNK ? n - i : WRITE_CHUNK;
		ch->next += k;
		ch->active++;
		pthread_mutex_unlock(&ch->mu);
		e = write_chunk(st, id, gen, ops + i, k, true);
		pthread_mutex_lock(&ch->mu);
		ch->active--;
		if (e && !ch->err)
			ch->err = e;
		pthread_cond_broadcast(&ch->cv);
		pthread_mutex_unlock(&ch->mu);
	}
}

int xtcam_state_rules_write(struct xtcam_state *st, const struct xtcam_block_rec *b,
			    const struct xtcam_rule_op *ops, size_t n, struct xtcam_chunks *ch)
{
	int e = gen_hold(st, b->name, b->id, !b->rgen);

	if (e) {
		pthread_mutex_lock(&ch->mu);
		ch->err = ch->err ? ch->err : e;
		pthread_mutex_unlock(&ch->mu);
		return e;
	}
	/* (one thread, beside the data paths' work, which has the other
	 * core; whoever is done with that helps, xtcam_state_rules_help) */
	pthread_mutex_lock(&ch->mu);
	ch->held = true;
	pthread_mutex_unlock(&ch->mu);
	write_shared(st, b->id, !b->rgen, ops, n, ch);
	/* the chunks another thread took written too */
	pthread_mutex_lock(&ch->mu);
	while (ch->active)
		pthread_cond_wait(&ch->cv, &ch->mu);
	e = ch->err;
	pthread_mutex_unlock(&ch->mu);
	gen_release(st, b->id, !b->rgen);
	return e;
}

int xtcam_state_rules_help(struct xtcam_state *st, const struct xtcam_block_rec *b,
			   const struct xtcam_rule_op *ops, size_t n, struct xtcam_chunks *ch)
{
	bool held;

	pthread_mutex_lock(&ch->mu);
	held = ch->held;
	pthread_mutex_unlock(&ch->mu);
	return held ? write_shared(st, b->id, !b->rgen, ops, n, ch) : 0;
}

int xtcam_state_rules_commit(struct xtcam_state *st, struct xtcam_block_rec *b,
			     const struct xtcam_rule_op *ops, size_t n)
{
	int e = xtcam_state_rules_flip(st, b, ops, n);

	return e ? e : xtcam_state_rules_copy(st, b, ops, n);
}

int xtcam_state_rules_flip(struct xtcam_state *st, struct xtcam_block_rec *b,
			   const struct xtcam_rule_op *ops, size_t n)
{
	size_t i;
	int e;

	for (i = 0; i < n; i++) {
		if (ops[i].cmd == XTCAM_RULE_ADD)
			b->nrules++;
		else if (ops[i].cmd == XTCAM_RULE_DEL)
			b->nrules--;
		if (ops[i].cmd != XTCAM_RULE_DEL && xtcam_rule_handle_of(ops[i].rule) > b->max_handle)
			b->max_handle = xtcam_rule_handle_of(ops[i].rule);
	}
	if (!b->nrules)
		b->max_handle = 0;      /* emptied: handles start at 1 again */
	b->rgen = !b->rgen;
	b->seq++;
	e = xtcam_state_block_put(st, b);       /* the commit point */
	xtcam_crash_point("flip");
	return e;
}

/* The record put after the flip, which bumped the generation for this
 * holder of the lock: not again (the copy may run in a thread while its
 * caller takes the lock back, xtcam_state_relock, and a bump then would
 * make the caller's next look at the generation take its own copy for
 * another writer's change). */
static int rec_put(struct xtcam_state *st, const struct xtcam_block_rec *rec)
{
	struct xtcam_block_key k;

	block_key(rec->name, &k);
	return bpf_map_update_elem(st->fd_blocks, &k, rec, 0) ? -errno : 0;
}

int xtcam_state_rules_copy(struct xtcam_state *st, struct xtcam_block_rec *b,
			   const struct xtcam_rule_op *ops, size_t n)
{
	int e;

	/* the old generation, brought up to date once those who read it
	 * before the commit are done: a reader that outlasts the wait leaves
	 * the copy to the next writer (the change is committed) */
	e = gen_hold(st, b->name, b->id, !b->rgen);
	if (e == -ETIMEDOUT) {
		fprintf(stderr, "xtcam: %s: the change is committed; its copy is left to the "
			"next change\n", st->why);
		b->dirty = XTCAM_BLOCK_BEHIND;
		return rec_put(st, b);
	}
	if (e)
		return e;
	/* (its stage ran beside the data paths' work, on the other core: the
	 * copy after the commit has the two cores with their catch-up) */
	e = n >= PIPE_MIN ? write_pipe(st, b->id, !b->rgen, ops, n, "registry copy", "copy") : 1;
	if (e == 1)
		e = write_ops(st, b->id, !b->rgen, ops, n, "registry copy");
	gen_release(st, b->id, !b->rgen);
	if (!e) {
		b->dirty = 0;
		e = rec_put(st, b);
	}
	return e;
}

int xtcam_state_rules_abort(struct xtcam_state *st, struct xtcam_block_rec *b,
			    const struct xtcam_rule_op *ops, size_t n)
{
	int e = xtcam_state_rules_recover(st, b);

	(void)ops;
	(void)n;
	return e;
}

/* After a crash: the inactive generation is emptied through its keys (which
 * cover its rules) and made a copy of the active one.  O(rules of the
 * block). */
static int recover(struct xtcam_state *st, struct xtcam_block_rec *b)
{
	struct xtcam_rule_op *ops = NULL;
	struct xtcam_rule *rules = NULL;
	size_t n = 0, i;
	int e = gen_clear(st, b->id, !b->rgen, false);

	if (!e)
		e = xtcam_state_index_init(st, b->id);
	if (!e)
		e = xtcam_state_rules(st, b, true, &rules, &n);
	if (e)
		return e;
	ops = calloc(n + 1, sizeof(*ops));
	if (!ops) {
		free(rules);
		return -ENOMEM;
	}
	b->max_handle = 0;
	for (i = 0; i < n; i++) {
		ops[i] = (struct xtcam_rule_op){ XTCAM_RULE_ADD, &rules[i], NULL };
		if (rules[i].handle > b->max_handle)
			b->max_handle = rules[i].handle;
	}
	e = write_ops(st, b->id, !b->rgen, ops, n, NULL);
	if (!e) {
		b->nrules = (__u32)n;
		b->dirty = 0;
		e = xtcam_state_block_put(st, b);
	}
	free(ops);
	free(rules);
	return e;
}

/* (held against the readers of the generation rewritten) */
int xtcam_state_rules_recover(struct xtcam_state *st, struct xtcam_block_rec *b)
{
	int e = gen_hold(st, b->name, b->id, !b->rgen);

	if (e)
		return e;
	e = recover(st, b);
	gen_release(st, b->id, !b->rgen);
	return e;
}

int xtcam_state_rules_dump(struct xtcam_state *st, __u32 gen, struct xtcam_rule_key **keys,
			   struct xtcam_rule **rules, size_t *n)
{
	const __u32 chunk = 8192;
	struct xtcam_rule_key *k = NULL;
	struct xtcam_rule *r = NULL;
	size_t cap = 0, len = 0;
	__u64 at = 0, next = 0;
	bool first = true;
	int fd = st->fd_rules[gen & 1];

	LIBBPF_OPTS(bpf_map_batch_opts, o);
	while (fd >= 0) {
		__u32 cnt = chunk;
		int e;

		if (cap - len < chunk) {
			size_t c2 = cap ? 2 * cap : 4 * (size_t)chunk;
			struct xtcam_rule_key *k2 = realloc(k, c2 * sizeof(*k));
			struct xtcam_rule *r2;

			if (k2)
				k = k2;
			r2 = k2 ? realloc(r, c2 * sizeof(*r)) : NULL;
			if (!r2) {
				free(k);
				free(r);
				return -ENOMEM;
			}
			r = r2;
			cap = c2;
		}
		e = bpf_map_lookup_batch(fd, first ? NULL : &at, &next, k + len, r + len, &cnt,
					 &o);
		e = e ? -errno : 0;
		len += cnt;
		first = false;
		at = next;
		if (e == -ENOENT)
			break;          /* the last batch */
		if (e) {
			free(k);
			free(r);
			return e;
		}
	}
	if (!k && (!(k = malloc(sizeof(*k))) || !(r = malloc(sizeof(*r))))) {
		free(k);
		return -ENOMEM;
	}
	*keys = k;
	*rules = r;
	*n = len;
	return 0;
}

/* --- bindings ------------------------------------------------------------ */

int xtcam_state_bindings(struct xtcam_state *st, struct xtcam_bind_key **keys,
			 struct xtcam_bind_rec **recs, size_t *n)
{
	return dump(st->fd_bindings, sizeof(**keys), sizeof(**recs), (void **)keys,
		    (void **)recs, n);
}

int xtcam_state_binding_put(struct xtcam_state *st, const struct xtcam_bind_key *k,
			    const struct xtcam_bind_rec *rec)
{
	gen_bump(st);
	return bpf_map_update_elem(st->fd_bindings, k, rec, 0) ? -errno : 0;
}

int xtcam_state_binding_del(struct xtcam_state *st, const struct xtcam_bind_key *k)
{
	gen_bump(st);
	return bpf_map_delete_elem(st->fd_bindings, k) && errno != ENOENT ? -errno : 0;
}

/* --- flush ------------------------------------------------------------------ */

/* Only what xtcam made: the registry's pins (the blocks' data paths are
 * the loader's), "blocks" first so that a flush cut short leaves what
 * reads as a registry whose create was cut short; then the folder, if
 * nothing else is in it.  A folder without a registry is left alone,
 * unless all it holds is the pins of a create cut short. */
int xtcam_state_destroy(struct xtcam_state *st)
{
	char path[PATH_MAX], other[256];
	size_t i;
	int e = 0, f;

	if (st->fd_blocks < 0) {
		f = foreign_entry(st->root, other, sizeof(other));
		if (f)
			return f < 0 ? f : 0;
	}
	gen_bump(st);
	if (pin_path(st, XTCAM_RESTORE_MARKER, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (unlink(path) && errno != ENOENT)
		e = -errno;
	for (i = 0; i <= NREG; i++) {
		if (pin_path(st, i < NREG ? reg_names[i] : GEN_PIN, path, sizeof(path)))
			return -ENAMETOOLONG;
		if (unlink(path) && errno != ENOENT && !e)
			e = -errno;
	}
	if (!e && rmdir(st->root) && errno != ENOENT && errno != ENOTEMPTY)
		e = -errno;
	return e;
}
