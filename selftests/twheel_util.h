/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the twheel selftests: opening and setting up a
 * wheel, reading the clock, draining events with a deadline, parsing
 * /proc/self/fdinfo, and the timing slack allowed in a slow VM.
 *
 * Everything here is static: each test program is one file plus this
 * header, linked statically with libtwheel.a.
 */
#ifndef TWHEEL_SELFTEST_UTIL_H
#define TWHEEL_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "twheel.h"

#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

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

/* Byte that output structs are filled with before a call. */
#define JUNK		0xa5
#define JUNK64		0xa5a5a5a5a5a5a5a5ULL

static inline uint64_t mono_ns(void)
{
	return twheel_now(CLOCK_MONOTONIC);
}

static inline void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Open and set up a wheel; returns the fd or -errno. */
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

/* An op with every field set to junk except the ones given. */
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
 * The value of "@key:\t<decimal>" in /proc/self/fdinfo/@fd, or -1 if
 * the line is missing or malformed.
 */
static inline long long fdinfo_get(int fd, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
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

/* A module parameter of twheel, or @dflt if it cannot be read. */
static inline unsigned long long module_param(const char *name,
					      unsigned long long dflt)
{
	char path[128];
	unsigned long long val;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/twheel/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fscanf(f, "%llu", &val) != 1)
		val = dflt;
	fclose(f);
	return val;
}

/* Set a module parameter of twheel (needs root); 0 or -errno. */
static inline int module_param_set(const char *name, unsigned long long val)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/twheel/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%llu\n", val) > 0 ? 0 : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* xorshift64*: reproducible pseudo-random numbers for test inputs. */
static inline uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

#endif /* TWHEEL_SELFTEST_UTIL_H */
