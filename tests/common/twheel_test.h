/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test-support layer: what the selftests, the stress programs, the
 * host tests of the core, the benchmarks and the demo need around
 * /dev/twheel, each written once. Clock and sleep, one reproducible
 * random generator, small file and module-parameter helpers, opening a
 * wheel, ops pre-filled with junk, draining and waiting for events, the
 * one fdinfo parser, passing an fd over a socket, joining a thread with
 * a deadline.
 *
 * Header-only: every program stays one .c file plus this header, linked
 * statically (the test VM has no shared libraries) with libtwheel.a,
 * whose functions the wheel helpers use. Reporting is kselftest's
 * (kselftest.h or kselftest_harness.h, included by the programs that
 * report TAP); nothing here prints. Needs _GNU_SOURCE (tests/common/
 * test.mk sets it) for pthread_clockjoin_np().
 */
#ifndef TWHEEL_TEST_H
#define TWHEEL_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "twheel.h"

#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

/* ---- time ---- */

/* @clk now, in ns; CLOCK_MONOTONIC is the clock of every test wheel. */
static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Sleep @ns in full, across signals. */
static inline void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- random numbers ---- */

/*
 * xorshift64*: fixed seeds make every run replayable. The state must
 * start non-zero (it then never becomes zero).
 */
static inline uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Below @n (0 for n = 0). */
static inline uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return n ? rnd_next(s) % n : 0;
}

/* ---- files, module parameters, environment ---- */

/* A whole small file into @buf, NUL-terminated; bytes read or -1. */
static inline ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while (total < (ssize_t)size - 1 &&
	       (n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = 0;
	return total;
}

/* @s into the existing file @path in one write(2); 0 or -errno. */
static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* A file holding one integer (or cgroup's "max": LLONG_MAX); -1 if none. */
static inline long long read_ll(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!strncmp(buf, "max", 3))
		return LLONG_MAX;
	return strtoll(buf, NULL, 10);
}

#define CG_ROOT		"/sys/fs/cgroup"

/*
 * cgroup v2 at CG_ROOT with the memory controller enabled for children
 * (mounted first if the VM's /init did not): true if groups made under
 * CG_ROOT have memory.* files.
 */
static inline bool memcg_ready(void)
{
	char buf[256];

	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL);
	}
	if (read_file(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "memory"))
		return false;
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory");
	return true;
}

#define TWHEEL_PARAM_DIR	"/sys/module/twheel/parameters/"

/* A module parameter of twheel, or @dflt if it cannot be read. */
static inline unsigned long long module_param(const char *name,
					      unsigned long long dflt)
{
	char path[128], buf[32], *end;
	unsigned long long val;

	snprintf(path, sizeof(path), TWHEEL_PARAM_DIR "%s", name);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return dflt;
	errno = 0;
	val = strtoull(buf, &end, 10);
	return errno || end == buf ? dflt : val;
}

/* Set a writable module parameter (root only); 0 or -errno. */
static inline int module_param_set(const char *name, unsigned long long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), TWHEEL_PARAM_DIR "%s", name);
	snprintf(buf, sizeof(buf), "%llu\n", val);
	return write_file(path, buf);
}

/*
 * Raise the module's user and total entry limits to at least @want, for a
 * program that adds more ids than a small VM's defaults allow; 0, or -1
 * if they cannot be read or set. entry_limits_restore() puts back what
 * was found (call it at exit and from a SIGTERM handler); it does nothing
 * if nothing was raised. One program, one set of saved limits.
 */
struct entry_limits {
	unsigned long long user, total;
	int raised;
};

static inline struct entry_limits *entry_limits_saved(void)
{
	static struct entry_limits saved;

	return &saved;
}

static inline void entry_limits_restore(void)
{
	struct entry_limits *l = entry_limits_saved();

	if (l->raised) {
		module_param_set("max_user_entries", l->user);
		module_param_set("max_entries_total", l->total);
		l->raised = 0;
	}
}

static inline int entry_limits_raise(unsigned long long want)
{
	struct entry_limits *l = entry_limits_saved();

	l->user = module_param("max_user_entries", 0);
	l->total = module_param("max_entries_total", 0);
	if (!l->user || !l->total)
		return -1;
	l->raised = 1;
	if (l->user < want && module_param_set("max_user_entries", want))
		return -1;
	if (l->total < want && module_param_set("max_entries_total", want))
		return -1;
	return 0;
}

/*
 * A debug kernel (lockdep, KASAN, kmemleak: the one with /proc/lockdep)
 * under emulation is several times slower than a production one: tests
 * scale their sizes and time slack down and up by this.
 */
static inline bool debug_kernel(void)
{
	return access("/proc/lockdep", F_OK) == 0;
}

/*
 * How late an expiry may be, beyond one tick, in a software-emulated VM
 * with other jobs on the host. Never-early checks get no slack at all.
 */
#define LATE_SLACK_NS	(debug_kernel() ? 1000 * NSEC_PER_MSEC : 200 * NSEC_PER_MSEC)

/*
 * A run's bound: argv[1] if given, else the environment variable @env
 * (inside the VM, set from the kernel command line), else @def.
 */
static inline uint64_t arg_or_env(int argc, char **argv, const char *env,
				  uint64_t def)
{
	const char *s = argc > 1 ? argv[1] : getenv(env);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/* ---- wheels ---- */

/* Byte that output structs are filled with before a call. */
#define JUNK		0xa5
#define JUNK64		0xa5a5a5a5a5a5a5a5ULL

/* Open and set up a CLOCK_MONOTONIC wheel; returns the fd or -errno. */
static inline int wheel_new(int oflags, uint64_t tick_ns, uint64_t dflt_ns,
			    uint32_t max_entries)
{
	int fd = twheel_open(oflags);
	int ret;

	if (fd < 0)
		return fd;
	ret = twheel_setup(fd, tick_ns, dflt_ns, CLOCK_MONOTONIC, max_entries);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * An op with every input field as given and every output field junk,
 * so that a check after the call sees what the kernel wrote.
 */
static inline void op_init(struct twheel_op *op, uint32_t code, uint64_t id,
			   uint32_t flags, uint64_t timeout_ns)
{
	memset(op, JUNK, sizeof(*op));
	op->op = code;
	op->id = id;
	op->flags = flags;
	op->timeout_ns = timeout_ns;
	op->slot = 0;
}

/*
 * Read events until @want have been read or @until_ns (monotonic) has
 * passed, waiting in poll() in between. Returns the count read, or
 * -errno from read or poll.
 */
static inline int drain_until(int fd, struct twheel_event *ev, int want,
			      uint64_t until_ns)
{
	int got = 0;

	while (got < want) {
		uint64_t now = mono_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ret, ms;

		if (now >= until_ns)
			break;
		ms = (until_ns - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
		ret = poll(&pfd, 1, ms);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!ret)
			continue;
		ret = twheel_read_events(fd, ev + got, want - got);
		if (ret == -EAGAIN || ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		got += ret;
	}
	return got;
}

/*
 * The value of "@key:\t<decimal>\n" in /proc/self/fdinfo/@fd, or -1 if
 * the line is missing or malformed: the format is part of the ABI, so
 * nothing looser is accepted.
 */
static inline long long fdinfo_get(int fd, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, key, klen) || line[klen] != ':' ||
		    line[klen + 1] != '\t')
			continue;
		errno = 0;
		val = strtoll(line + klen + 2, &end, 10);
		if (errno || end == line + klen + 2 || *end != '\n')
			val = -1;
		break;
	}
	fclose(f);
	return val;
}

/*
 * Wait until at least @n events wait on @fd (per fdinfo), for at most
 * 10 s: a loaded VM may run a tick late, so tests that need expired ids
 * wait for them rather than sleep a fixed time. Returns the count seen.
 */
static inline long long wait_waiting(int fd, long long n)
{
	uint64_t until = mono_ns() + 10 * NSEC_PER_SEC;
	long long got;

	while ((got = fdinfo_get(fd, "events_waiting")) < n && mono_ns() < until)
		sleep_ns(2 * NSEC_PER_MSEC);
	return got;
}

/* ---- processes and threads ---- */

/* Pass @fd over the unix socket @sock (SCM_RIGHTS); 0 or -1. */
static inline int send_fd(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char byte = 'w';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* The fd passed by send_fd(), close-on-exec, or -1. */
static inline int recv_fd(int sock)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * Join @t if it ends within @ns; false if it did not, and then it still
 * runs (a blocked thread is taken down with the process).
 */
static inline bool join_within(pthread_t t, uint64_t ns)
{
	uint64_t until = mono_ns() + ns;
	struct timespec ts = {
		.tv_sec = until / NSEC_PER_SEC,
		.tv_nsec = until % NSEC_PER_SEC,
	};

	return pthread_clockjoin_np(t, NULL, CLOCK_MONOTONIC, &ts) == 0;
}

#endif /* TWHEEL_TEST_H */
