// SPDX-License-Identifier: GPL-2.0
/*
 * devbench: the cost of keeping n deadlines through /dev/twheel, side by
 * side in one run with the kernel's own per-id answer, one timerfd per id
 * in an epoll set, and with a trivial ioctl as the unit of syscall cost.
 *
 * Run inside the VM (bench/run.sh). Under software emulation absolute
 * times are several times native, but ratios between syscalls hold, so
 * the figures that matter are the ratios printed at the end.
 *
 * Output: one line per figure, `devbench: impl=NAME n=N op=OP ns=X`, and
 * `devbench: ratio ...` lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#define BATCH	1024

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void report(const char *impl, long n, const char *op, uint64_t ns, long ops)
{
	printf("devbench: impl=%s n=%ld op=%s ns=%.0f\n", impl, n, op, (double)ns / ops);
}

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A random timeout of 10 to 40 s: nothing expires while we measure. */
static uint64_t rnd_timeout(void)
{
	return 10000000000ULL + rnd() % 30000000000ULL;
}

static int wheel_open(void)
{
	struct twheel_setup_args s = {
		.tick_ns = 1000000, .default_timeout_ns = 30000000000ULL,
		.clockid = CLOCK_MONOTONIC,
	};
	int fd = open(TWHEEL_DEVICE, O_RDWR | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		die("open " TWHEEL_DEVICE);
	if (ioctl(fd, TWHEEL_IOC_SETUP, &s))
		die("TWHEEL_IOC_SETUP");
	return fd;
}

static void wheel_op(int fd, uint32_t code, uint64_t id, uint64_t timeout)
{
	struct twheel_op op = { .id = id, .op = code };

	if (code == TWHEEL_OP_ADD || code == TWHEEL_OP_REFRESH) {
		op.flags = TWHEEL_OPF_TIMEOUT;
		op.timeout_ns = timeout;
	}
	if (ioctl(fd, TWHEEL_IOC_OP, &op))
		die("TWHEEL_IOC_OP");
}

static void bench_baseline(long iters)
{
	int fd = wheel_open();
	uint64_t t = now_ns();
	long i;

	for (i = 0; i < iters; i++)
		ioctl(fd, _IO(TWHEEL_IOC_MAGIC, 0x7f), 0);	/* ENOTTY */
	report("baseline", 0, "enotty_ioctl", now_ns() - t, iters);
	close(fd);
}

static void bench_twheel_single(long n)
{
	int fd = wheel_open();
	uint64_t t;
	long i;

	t = now_ns();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_ADD, i, rnd_timeout());
	report("twheel", n, "add", now_ns() - t, n);
	t = now_ns();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_REFRESH, rnd() % n, rnd_timeout());
	report("twheel", n, "refresh", now_ns() - t, n);
	t = now_ns();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_CANCEL, i, 0);
	report("twheel", n, "cancel", now_ns() - t, n);
	close(fd);
}

/* Ops on ids 0..n-1 (random ones if @random_ids), timeout 0 if @due_now. */
static void batch_run(int fd, struct twheel_op *ops, long n, uint32_t code,
		      int random_ids, int due_now)
{
	long i, j;

	for (i = 0; i < n; i += BATCH) {
		long k = n - i < BATCH ? n - i : BATCH;
		struct twheel_batch_args b = { .ops = (uintptr_t)ops, .count = k };

		for (j = 0; j < k; j++) {
			memset(&ops[j], 0, sizeof(ops[j]));
			ops[j].op = code;
			ops[j].id = random_ids ? rnd() % n : (uint64_t)(i + j);
			if (code != TWHEEL_OP_CANCEL) {
				ops[j].flags = TWHEEL_OPF_TIMEOUT;
				ops[j].timeout_ns = due_now ? 0 : rnd_timeout();
			}
		}
		if (ioctl(fd, TWHEEL_IOC_BATCH, &b) != k)
			die("TWHEEL_IOC_BATCH");
	}
}

static void bench_twheel_batch(long n)
{
	static struct twheel_op ops[BATCH];
	static struct twheel_event ev[4096];
	int fd = wheel_open();
	long got = 0;
	uint64_t t;

	t = now_ns();
	batch_run(fd, ops, n, TWHEEL_OP_ADD, 0, 0);
	report("twheel-batch", n, "add", now_ns() - t, n);
	t = now_ns();
	batch_run(fd, ops, n, TWHEEL_OP_REFRESH, 1, 0);
	report("twheel-batch", n, "refresh", now_ns() - t, n);
	t = now_ns();
	batch_run(fd, ops, n, TWHEEL_OP_CANCEL, 0, 0);
	report("twheel-batch", n, "cancel", now_ns() - t, n);

	/* Expiry: n ids due at the next tick, read back in bulk. */
	batch_run(fd, ops, n, TWHEEL_OP_ADD, 0, 1);
	t = now_ns();
	while (got < n) {
		ssize_t r = read(fd, ev, sizeof(ev));

		if (r < 0 && errno == EAGAIN)
			continue;
		if (r < 0)
			die("read");
		got += r / sizeof(ev[0]);
	}
	report("twheel-batch", n, "expire", now_ns() - t, n);
	close(fd);
}

static void timerfd_arm(int tfd, uint64_t timeout)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = timeout / 1000000000ULL,
			      .tv_nsec = timeout % 1000000000ULL },
	};

	if (timerfd_settime(tfd, 0, &its, NULL))
		die("timerfd_settime");
}

static void bench_timerfd(long n)
{
	int *fds = calloc(n, sizeof(*fds));
	struct epoll_event *evs = calloc(1024, sizeof(*evs));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	long i, got = 0;
	uint64_t t;

	if (!fds || !evs || ep < 0)
		die("timerfd setup");
	t = now_ns();
	for (i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = i };

		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[i] < 0)
			die("timerfd_create");
		timerfd_arm(fds[i], rnd_timeout());
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e))
			die("epoll_ctl");
	}
	report("timerfd", n, "add", now_ns() - t, n);
	t = now_ns();
	for (i = 0; i < n; i++)
		timerfd_arm(fds[rnd() % n], rnd_timeout());
	report("timerfd", n, "refresh", now_ns() - t, n);
	t = now_ns();
	for (i = 0; i < n; i++) {
		struct itimerspec off = { 0 };

		timerfd_settime(fds[i], 0, &off, NULL);
	}
	report("timerfd", n, "cancel", now_ns() - t, n);

	/* Expiry: all due now; take each through epoll and read it. */
	for (i = 0; i < n; i++)
		timerfd_arm(fds[i], 1);
	t = now_ns();
	while (got < n) {
		int k = epoll_wait(ep, evs, 1024, 1000), j;

		if (k <= 0)
			die("epoll_wait");
		for (j = 0; j < k; j++) {
			uint64_t v;

			if (read(fds[evs[j].data.u64], &v, sizeof(v)) == sizeof(v))
				got++;
		}
	}
	report("timerfd", n, "expire", now_ns() - t, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(ep);
	free(fds);
	free(evs);
}

int main(int argc, char **argv)
{
	static const long sizes[] = { 1000, 10000, 100000 };
	struct rlimit rl = { 1 << 20, 1 << 20 };
	unsigned int i;

	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit (run as root)");
	bench_baseline(200000);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		long n = argc > 1 ? atol(argv[1]) : sizes[i];

		bench_twheel_single(n);
		bench_twheel_batch(n);
		bench_timerfd(n);
		if (argc > 1)
			break;
	}
	return 0;
}
