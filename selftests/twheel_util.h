/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the twheel selftests share, each written once: clock and sleep,
 * one reproducible random generator, small file and module-parameter
 * helpers, the device's calls, ops pre-filled with junk, draining and
 * waiting for events, the one fdinfo parser, passing an fd over a
 * socket, a thread's state, joining a thread with a deadline.
 *
 * The selftests are a kselftest target that needs nothing but this
 * directory and <linux/twheel.h>, so they talk to the device here,
 * through its system calls, and not through libtwheel (tests/lib/ tests
 * the library). The dev_*() calls answer as the library's do, a value
 * >= 0 or a negative errno, so that an assertion reads the same either
 * way; the -1/errno of the system call is turned into -errno in one
 * place, dev_ret(). Their names are not the library's: a name means one
 * thing in this project. tests/common/twheel_test.h builds on this
 * header for the stress programs and benchmarks.
 *
 * Header-only, every program one .c file plus this header. Nothing here
 * prints: reporting is kselftest's. Needs _GNU_SOURCE (lib.mk sets it)
 * for pthread_clockjoin_np().
 */
#ifndef TWHEEL_UTIL_H
#define TWHEEL_UTIL_H

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
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/twheel.h>

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

/*
 * The number after "@key@sep" at the start of a line of the small file
 * @path (a cgroup's flat keyed file, such as memory.events, with sep ' ';
 * another process's fdinfo, with ':'), or -1 if the file or the key is
 * not there.
 */
static inline long long file_key(const char *path, const char *key, char sep)
{
	char buf[4096], *s;
	size_t len = strlen(key);

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (s = buf; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (!strncmp(s, key, len) && s[len] == sep)
			return strtoll(s + len + 1, NULL, 10);
	return -1;
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
 * (mounted first if nothing did): true if groups made under CG_ROOT have
 * memory.* files.
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
 * with other jobs on the host (a second VM per core stalls a vCPU for
 * 200 ms at times). Never-early checks get no slack at all; lateness
 * itself is measured by tests/stress/lateness, not bounded here.
 */
#define LATE_SLACK_NS	(debug_kernel() ? 1000 * NSEC_PER_MSEC : 500 * NSEC_PER_MSEC)

/*
 * The first point at or after @t of the grid through @grid with step
 * @tick: where a wheel whose tick @grid is rounds @t up to.
 */
static inline uint64_t tick_grid_up(uint64_t grid, uint64_t tick, uint64_t t)
{
	if (t >= grid)
		return grid + (t - grid + tick - 1) / tick * tick;
	return grid - (grid - t) / tick * tick;
}

/* ---- the device's calls ---- */

/* A timeout argument that selects the wheel's default timeout. */
#define DEV_TIMEOUT_DEFAULT	UINT64_MAX

/* The system call's -1/errno as -errno; anything else as it came. */
static inline long dev_ret(long ret)
{
	return ret < 0 ? -errno : ret;
}

/* A new wheel, opened with @flags (O_CLOEXEC, O_NONBLOCK); the fd. */
static inline int dev_open(int flags)
{
	return dev_ret(open(TWHEEL_DEVICE, O_RDWR | flags));
}

static inline int dev_setup_params(int fd, const struct twheel_setup_args *args)
{
	return dev_ret(ioctl(fd, TWHEEL_IOC_SETUP, args));
}

/* TWHEEL_IOC_SETUP with the fields given one by one (flags 0). */
static inline int dev_setup(int fd, uint64_t tick_ns, uint64_t default_timeout_ns,
			    clockid_t clockid, uint32_t max_entries)
{
	struct twheel_setup_args args = {
		.tick_ns = tick_ns,
		.default_timeout_ns = default_timeout_ns,
		.clockid = (uint32_t)clockid,
		.max_entries = max_entries,
	};

	return dev_setup_params(fd, &args);
}

/* TWHEEL_IOC_OP on a filled op: 0 or -errno; the out fields written. */
static inline int dev_submit_op(int fd, struct twheel_op *op)
{
	return dev_ret(ioctl(fd, TWHEEL_IOC_OP, op));
}

/*
 * Fill @op with @code, @id and @flags, and @timeout_ns with
 * TWHEEL_OPF_TIMEOUT unless it is DEV_TIMEOUT_DEFAULT; the rest 0.
 */
static inline void dev_prep_op(struct twheel_op *op, uint32_t code, uint64_t id,
			       uint64_t timeout_ns, uint32_t flags)
{
	memset(op, 0, sizeof(*op));
	op->op = code;
	op->id = id;
	if (timeout_ns != DEV_TIMEOUT_DEFAULT) {
		op->timeout_ns = timeout_ns;
		flags |= TWHEEL_OPF_TIMEOUT;
	}
	op->flags = flags;
}

static inline void dev_prep_add(struct twheel_op *op, uint64_t id, uint64_t timeout_ns)
{
	dev_prep_op(op, TWHEEL_OP_ADD, id, timeout_ns, 0);
}

static inline void dev_prep_refresh(struct twheel_op *op, uint64_t id,
				    uint64_t timeout_ns, uint32_t flags)
{
	dev_prep_op(op, TWHEEL_OP_REFRESH, id, timeout_ns, flags);
}

static inline void dev_prep_cancel(struct twheel_op *op, uint64_t id)
{
	dev_prep_op(op, TWHEEL_OP_CANCEL, id, DEV_TIMEOUT_DEFAULT, 0);
}

static inline void dev_prep_query(struct twheel_op *op, uint64_t id)
{
	dev_prep_op(op, TWHEEL_OP_QUERY, id, DEV_TIMEOUT_DEFAULT, 0);
}

/* ADD with an absolute deadline on the wheel's clock (TWHEEL_OPF_ABSTIME). */
static inline void dev_prep_add_at(struct twheel_op *op, uint64_t id, uint64_t deadline_ns)
{
	dev_prep_op(op, TWHEEL_OP_ADD, id, DEV_TIMEOUT_DEFAULT, TWHEEL_OPF_ABSTIME);
	op->timeout_ns = deadline_ns;
}

/* REFRESH to an absolute deadline; @flags: 0 or TWHEEL_OPF_ADD_IF_ABSENT. */
static inline void dev_prep_refresh_at(struct twheel_op *op, uint64_t id,
				       uint64_t deadline_ns, uint32_t flags)
{
	dev_prep_op(op, TWHEEL_OP_REFRESH, id, DEV_TIMEOUT_DEFAULT,
		    flags | TWHEEL_OPF_ABSTIME);
	op->timeout_ns = deadline_ns;
}

/* Make a prepared ADD or REFRESH bind its id to touch slot @slot. */
static inline void dev_prep_bind(struct twheel_op *op, uint32_t slot)
{
	op->flags |= TWHEEL_OPF_TOUCH;
	op->slot = slot;
}

static inline int dev_add(int fd, uint64_t id, uint64_t timeout_ns)
{
	struct twheel_op op;

	dev_prep_add(&op, id, timeout_ns);
	return dev_submit_op(fd, &op);
}

/* @flags: 0 or TWHEEL_OPF_ADD_IF_ABSENT. */
static inline int dev_refresh(int fd, uint64_t id, uint64_t timeout_ns, uint32_t flags)
{
	struct twheel_op op;

	dev_prep_refresh(&op, id, timeout_ns, flags);
	return dev_submit_op(fd, &op);
}

static inline int dev_cancel(int fd, uint64_t id)
{
	struct twheel_op op;

	dev_prep_cancel(&op, id);
	return dev_submit_op(fd, &op);
}

/* A live id's deadline and remaining time (either may be NULL), untouched on error. */
static inline int dev_query(int fd, uint64_t id, uint64_t *deadline_ns,
			    uint64_t *remaining_ns)
{
	struct twheel_op op;
	int ret;

	dev_prep_query(&op, id);
	ret = dev_submit_op(fd, &op);
	if (ret < 0)
		return ret;
	if (deadline_ns)
		*deadline_ns = op.deadline_ns;
	if (remaining_ns)
		*remaining_ns = op.remaining_ns;
	return 0;
}

/* TWHEEL_IOC_BATCH: how many ops were applied, or -errno. */
static inline int dev_batch(int fd, struct twheel_op *ops, unsigned int count)
{
	struct twheel_batch_args args = {
		.ops = (uint64_t)(uintptr_t)ops,
		.count = count,
	};

	return dev_ret(ioctl(fd, TWHEEL_IOC_BATCH, &args));
}

/*
 * TWHEEL_IOC_REFRESH of @count ids to @timeout_ns (DEV_TIMEOUT_DEFAULT:
 * the wheel's default; with TWHEEL_OPF_ABSTIME in @flags, a deadline);
 * the ids not refreshed to @failed (or NULL), their number to
 * *@nr_failed (or NULL). How many ids were processed, or -errno.
 */
static inline int dev_refresh_ids(int fd, const uint64_t *ids, unsigned int count,
				  uint64_t timeout_ns, uint32_t flags, uint64_t *failed,
				  unsigned int *nr_failed)
{
	struct twheel_refresh_args args = {
		.ids = (uint64_t)(uintptr_t)ids,
		.failed = (uint64_t)(uintptr_t)failed,
		.count = count,
		.flags = flags,
	};
	long ret;

	if (timeout_ns != DEV_TIMEOUT_DEFAULT) {
		args.timeout_ns = timeout_ns;
		if (!(flags & TWHEEL_OPF_ABSTIME))
			args.flags |= TWHEEL_OPF_TIMEOUT;
	}
	ret = dev_ret(ioctl(fd, TWHEEL_IOC_REFRESH, &args));
	if (ret >= 0 && nr_failed)
		*nr_failed = args.nr_failed;
	return ret;
}

/* read(2) of up to @max events: how many were read, or -errno. */
static inline int dev_read_events(int fd, struct twheel_event *events, unsigned int max)
{
	long ret = dev_ret(read(fd, events, (size_t)max * sizeof(*events)));

	return ret < 0 ? ret : ret / (long)sizeof(*events);
}

/*
 * TWHEEL_IOC_DUMP of up to @count ids from *@cursor, which moves on only
 * on success: how many were written, or -errno.
 */
static inline int dev_dump(int fd, struct twheel_dump_entry *entries, unsigned int count,
			   uint64_t *cursor)
{
	struct twheel_dump_args args = {
		.entries = (uint64_t)(uintptr_t)entries,
		.cursor = *cursor,
		.count = count,
	};
	long ret = dev_ret(ioctl(fd, TWHEEL_IOC_DUMP, &args));

	if (ret >= 0)
		*cursor = args.cursor;
	return ret;
}

/* A mapped touch table. */
struct dev_touch {
	uint64_t *slots;	/* nr_slots stamps, shared with the kernel */
	uint32_t nr_slots;
	clockid_t clockid;	/* the wheel's clock */
	size_t map_len;
};

/*
 * mmap(2) @len bytes of @fd with @prot and @flags and describe them in
 * *@touch as a table of @nr_slots slots on @clockid; 0 or -errno, and
 * then *@touch all zero.
 */
static inline int dev_touch_mmap(int fd, size_t len, int prot, int flags, uint32_t nr_slots,
				 clockid_t clockid, struct dev_touch *touch)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	memset(touch, 0, sizeof(*touch));
	if (p == MAP_FAILED)
		return -errno;
	touch->slots = p;
	touch->nr_slots = nr_slots;
	touch->clockid = clockid;
	touch->map_len = len;
	return 0;
}

/*
 * Map the @nr_slots slots of @fd's touch table, on @clockid; 0 or
 * -errno, and then *@touch all zero.
 */
static inline int dev_touch_map(int fd, uint32_t nr_slots, clockid_t clockid,
				struct dev_touch *touch)
{
	return dev_touch_mmap(fd, (size_t)nr_slots * sizeof(*touch->slots),
			      PROT_READ | PROT_WRITE, MAP_SHARED, nr_slots, clockid, touch);
}

/* Unmap the table; its slots are NULL after. 0 or -errno. */
static inline int dev_touch_unmap(struct dev_touch *touch)
{
	int ret = dev_ret(munmap(touch->slots, touch->map_len));

	if (!ret)
		touch->slots = NULL;
	return ret;
}

/* Refresh the id bound to @slot with the time @now_ns: one store. */
static inline void dev_touch_at(const struct dev_touch *touch, uint32_t slot, uint64_t now_ns)
{
	__atomic_store_n(&touch->slots[slot], now_ns, __ATOMIC_RELAXED);
}

/* Refresh the id bound to @slot with the present time on the wheel's clock. */
static inline void dev_touch(const struct dev_touch *touch, uint32_t slot)
{
	dev_touch_at(touch, slot, clock_ns(touch->clockid));
}

/*
 * TWHEEL_IOC_TOUCH_REGISTER: the @slots slots at @addr become the table
 * of a wheel set up with TWHEEL_SETUPF_TOUCH_USER. 0 or -errno.
 */
static inline int dev_touch_register(int fd, const void *addr, uint32_t slots, uint32_t flags)
{
	struct twheel_touch_register_args args = {
		.addr = (uint64_t)(uintptr_t)addr,
		.slots = slots,
		.flags = flags,
	};

	return dev_ret(ioctl(fd, TWHEEL_IOC_TOUCH_REGISTER, &args));
}

/*
 * Anonymous memory for a table of @nr_slots slots, whole pages, mapped
 * with @prot and @flags (MAP_SHARED or MAP_PRIVATE; MAP_ANONYMOUS is
 * added) and described as a table on CLOCK_MONOTONIC, ready for
 * dev_touch_register(); dev_touch_unmap() unmaps it. 0 or -errno.
 */
static inline int dev_touch_anon(uint32_t nr_slots, int prot, int flags,
				 struct dev_touch *touch)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = ((size_t)nr_slots * sizeof(*touch->slots) + ps - 1) / ps * ps;

	return dev_touch_mmap(-1, len, prot, flags | MAP_ANONYMOUS, nr_slots,
			      CLOCK_MONOTONIC, touch);
}

/* ---- wheels ---- */

/* Byte that output structs are filled with before a call. */
#define JUNK		0xa5
#define JUNK64		0xa5a5a5a5a5a5a5a5ULL

/* Open and set up a CLOCK_MONOTONIC wheel; returns the fd or -errno. */
static inline int wheel_new(int oflags, uint64_t tick_ns, uint64_t dflt_ns,
			    uint32_t max_entries)
{
	int fd = dev_open(oflags);
	int ret;

	if (fd < 0)
		return fd;
	ret = dev_setup(fd, tick_ns, dflt_ns, CLOCK_MONOTONIC, max_entries);
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
		ret = dev_read_events(fd, ev + got, want - got);
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
 * Look at the wheel as a user's event loop does, with a poll(2) that
 * does not wait: the wheel's expiry work is done by the tasks that use
 * it (read, poll, commands), so what its timer marked due is expired,
 * re-armed or cascaded now, and fdinfo's counts are those of the present.
 */
static inline void dev_look(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	poll(&p, 1, 0);
}

/*
 * Wait until at least @n events wait on @fd (per fdinfo, looking at the
 * wheel each time), for at most 10 s: a loaded VM may run a tick late,
 * so tests that need expired ids wait for them rather than sleep a fixed
 * time. Returns the count seen.
 */
static inline long long wait_waiting(int fd, long long n)
{
	uint64_t until = mono_ns() + 10 * NSEC_PER_SEC;
	long long got;

	for (;;) {
		dev_look(fd);
		got = fdinfo_get(fd, "events_waiting");
		if (got >= n || mono_ns() >= until)
			return got;
		sleep_ns(2 * NSEC_PER_MSEC);
	}
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
 * The state letter of task @tid of this process (R, S, D...), or 0 if it
 * is gone: S while it sleeps, as in the wait of a blocking call.
 */
static inline char task_state(pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
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

#endif /* TWHEEL_UTIL_H */
