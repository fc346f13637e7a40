// SPDX-License-Identifier: GPL-2.0
/*
 * devbench: the cost of keeping n deadlines through /dev/twheel, side by
 * side in one run with the kernel's own per-id answer, one timerfd per id
 * in an epoll set, and with a trivial ioctl as the unit of syscall cost.
 *
 * Run inside the VM: `make -C bench run` (or `make bench-dev` at the top).
 * Under software emulation absolute times are several times native, but
 * ratios between syscalls hold, so the figures that matter are the ratios
 * between the lines (docs/bench-device.md).
 *
 * Output: one line per figure, `devbench: impl=NAME n=N op=OP ns=X`.
 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>

#include "twheel_test.h"

#define BATCH	1024

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
	return rnd_next(&rnd_state);
}

/* A random timeout of 10 to 40 s: nothing expires while we measure. */
static uint64_t rnd_timeout(void)
{
	return 10 * NSEC_PER_SEC + rnd() % (30 * NSEC_PER_SEC);
}

static int wheel_open(void)
{
	int fd = wheel_new(O_CLOEXEC | O_NONBLOCK, NSEC_PER_MSEC, 30 * NSEC_PER_SEC, 0);

	if (fd < 0) {
		errno = -fd;
		die("open and set up " TWHEEL_DEVICE);
	}
	return fd;
}

/* One op through libtwheel, as a user would send it. */
static void wheel_op(int fd, uint32_t code, uint64_t id, uint64_t timeout)
{
	struct twheel_op op;

	twheel_prep_op(&op, code, id, code == TWHEEL_OP_ADD || code == TWHEEL_OP_REFRESH ?
		       timeout : TWHEEL_TIMEOUT_DEFAULT, 0);
	if (twheel_submit_op(fd, &op))
		die("TWHEEL_IOC_OP");
}

static void bench_baseline(long iters)
{
	int fd = wheel_open();
	uint64_t t = mono_ns();
	long i;

	for (i = 0; i < iters; i++)
		ioctl(fd, _IO(TWHEEL_IOC_MAGIC, 0x7f), 0);	/* ENOTTY */
	report("baseline", 0, "enotty_ioctl", mono_ns() - t, iters);
	close(fd);
}

static void bench_twheel_single(long n)
{
	int fd = wheel_open();
	uint64_t t;
	long i;

	t = mono_ns();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_ADD, i, rnd_timeout());
	report("twheel", n, "add", mono_ns() - t, n);
	t = mono_ns();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_REFRESH, rnd() % n, rnd_timeout());
	report("twheel", n, "refresh", mono_ns() - t, n);
	t = mono_ns();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_CANCEL, i, 0);
	report("twheel", n, "cancel", mono_ns() - t, n);
	close(fd);
}

/* Ops on ids 0..n-1 (random ones if @random_ids), timeout 0 if @due_now. */
static void batch_run(int fd, struct twheel_op *ops, long n, uint32_t code,
		      int random_ids, int due_now)
{
	long i, j;

	for (i = 0; i < n; i += BATCH) {
		long k = n - i < BATCH ? n - i : BATCH;

		for (j = 0; j < k; j++)
			twheel_prep_op(&ops[j], code, random_ids ? rnd() % n : (uint64_t)(i + j),
				       code == TWHEEL_OP_CANCEL ? TWHEEL_TIMEOUT_DEFAULT :
				       due_now ? 0 : rnd_timeout(), 0);
		if (twheel_batch(fd, ops, k) != k)
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

	t = mono_ns();
	batch_run(fd, ops, n, TWHEEL_OP_ADD, 0, 0);
	report("twheel-batch", n, "add", mono_ns() - t, n);
	t = mono_ns();
	batch_run(fd, ops, n, TWHEEL_OP_REFRESH, 1, 0);
	report("twheel-batch", n, "refresh", mono_ns() - t, n);
	t = mono_ns();
	batch_run(fd, ops, n, TWHEEL_OP_CANCEL, 0, 0);
	report("twheel-batch", n, "cancel", mono_ns() - t, n);

	/* Expiry: n ids due at the next tick, read back in bulk. */
	batch_run(fd, ops, n, TWHEEL_OP_ADD, 0, 1);
	t = mono_ns();
	while (got < n) {
		ssize_t r = read(fd, ev, sizeof(ev));

		if (r < 0 && errno == EAGAIN)
			continue;
		if (r < 0)
			die("read");
		got += r / sizeof(ev[0]);
	}
	report("twheel-batch", n, "expire", mono_ns() - t, n);
	close(fd);
}

static void timerfd_arm(int tfd, uint64_t timeout)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = timeout / NSEC_PER_SEC,
			      .tv_nsec = timeout % NSEC_PER_SEC },
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
	t = mono_ns();
	for (i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = i };

		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[i] < 0)
			die("timerfd_create");
		timerfd_arm(fds[i], rnd_timeout());
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e))
			die("epoll_ctl");
	}
	report("timerfd", n, "add", mono_ns() - t, n);
	t = mono_ns();
	for (i = 0; i < n; i++)
		timerfd_arm(fds[rnd() % n], rnd_timeout());
	report("timerfd", n, "refresh", mono_ns() - t, n);
	t = mono_ns();
	for (i = 0; i < n; i++) {
		struct itimerspec off = { 0 };

		timerfd_settime(fds[i], 0, &off, NULL);
	}
	report("timerfd", n, "cancel", mono_ns() - t, n);

	/* Expiry: all due now; take each through epoll and read it. */
	for (i = 0; i < n; i++)
		timerfd_arm(fds[i], 1);
	t = mono_ns();
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
	report("timerfd", n, "expire", mono_ns() - t, n);
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
