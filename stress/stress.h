/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the stress programs: kselftest-style TAP output, the
 * monotonic clock, raw /dev/twheel ioctls returning -errno (no libtwheel,
 * so each program is one static binary with no dependency but the uapi
 * header), and fdinfo fields. Header-only: every program is one .c file.
 */
#ifndef TWHEEL_STRESS_H
#define TWHEEL_STRESS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#define MS	1000000ULL	/* nanoseconds in a millisecond */

static int tap_num;
static int tap_failures;

static void tap_plan(int n)
{
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

/* A "# ..." diagnostic line; never a test result. */
static void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* One test result; returns @pass so callers can chain. */
static int __attribute__((format(printf, 2, 3))) tap_result(int pass, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", pass ? "" : "not ", ++tap_num);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	if (!pass)
		tap_failures++;
	return pass;
}

static void tap_skip(const char *name, const char *why)
{
	printf("ok %d %s # SKIP %s\n", ++tap_num, name, why);
	fflush(stdout);
}

/* Exit status: 1 if any test failed, else 0. */
static int tap_exit_code(void)
{
	return tap_failures ? 1 : 0;
}

/* The whole program skipped (kselftest's exit code 4). */
static void __attribute__((noreturn)) tap_skip_all(const char *why)
{
	printf("TAP version 13\n1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(4);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int tw_setup(int fd, uint64_t tick_ns, uint64_t def_timeout_ns, uint32_t max_entries)
{
	struct twheel_setup_args a = {
		.tick_ns = tick_ns,
		.default_timeout_ns = def_timeout_ns,
		.clockid = CLOCK_MONOTONIC,
		.max_entries = max_entries,
	};

	return ioctl(fd, TWHEEL_IOC_SETUP, &a) ? -errno : 0;
}

/* open + setup; the fd or -errno. */
static int tw_open(int oflags, uint64_t tick_ns, uint64_t def_timeout_ns, uint32_t max_entries)
{
	int fd = open(TWHEEL_DEVICE, O_RDWR | oflags);
	int ret;

	if (fd < 0)
		return -errno;
	ret = tw_setup(fd, tick_ns, def_timeout_ns, max_entries);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static void tw_op_init(struct twheel_op *op, uint32_t code, uint64_t id, uint32_t flags,
		       uint64_t timeout_ns)
{
	memset(op, 0, sizeof(*op));
	op->op = code;
	op->id = id;
	op->flags = flags;
	op->timeout_ns = timeout_ns;
}

static int tw_op(int fd, struct twheel_op *op)
{
	return ioctl(fd, TWHEEL_IOC_OP, op) ? -errno : 0;
}

/* Single op built in place; its result (0 or -errno). */
static int tw_op1(int fd, uint32_t code, uint64_t id, uint64_t timeout_ns)
{
	struct twheel_op op;

	tw_op_init(&op, code, id, timeout_ns != UINT64_MAX ? TWHEEL_OPF_TIMEOUT : 0,
		   timeout_ns != UINT64_MAX ? timeout_ns : 0);
	return tw_op(fd, &op);
}

static long tw_batch(int fd, struct twheel_op *ops, uint32_t count)
{
	struct twheel_batch_args a = { .ops = (uintptr_t)ops, .count = count };
	int ret = ioctl(fd, TWHEEL_IOC_BATCH, &a);

	return ret < 0 ? -errno : ret;
}

/* A numeric field of /proc/self/fdinfo/@fd ("live", "events_waiting"...), or -1. */
static long long fdinfo_get(int fd, const char *field)
{
	char path[64], line[256];
	size_t len = strlen(field);
	long long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			val = strtoll(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

/* A whole small file into @buf (NUL-terminated); bytes read or -1. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while (total < (ssize_t)size - 1 && (n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = 0;
	return total;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static long long read_ll(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!strncmp(buf, "max", 3))
		return LLONG_MAX;
	return strtoll(buf, NULL, 10);
}

/* xorshift64*: fixed seeds make every run replayable. */
static inline uint64_t rnd_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return n ? rnd_next(s) % n : 0;
}

/*
 * A run's bound: argv[1] if given, else the environment variable @env
 * (inside the VM, set from the kernel command line), else @def.
 */
static uint64_t arg_or_env(int argc, char **argv, const char *env, uint64_t def)
{
	const char *s = argc > 1 ? argv[1] : getenv(env);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

#endif /* TWHEEL_STRESS_H */
