// SPDX-License-Identifier: GPL-2.0
/*
 * devbench: the cost of keeping n deadlines through /dev/twheel, side by
 * side in one run with the kernel's own per-id answer, one timerfd per id
 * in an epoll set, and with a trivial ioctl as the unit of syscall cost.
 *
 * Run inside the VM: `make -C bench/device run` (or `make bench-dev` at the top),
 * or `make -C bench/device run-icount` for instruction counts. Under software
 * emulation absolute times are several times native, but ratios between
 * syscalls hold, so the figures that matter are the ratios between the
 * lines (docs/bench-device.md).
 *
 * Every figure is CPU time per operation: user + system time of the
 * process (getrusage), which holds the module's work (its expiry and a
 * touch table's lazy re-arms run in the calls of the process that looks
 * at the wheel: a poll or read, each command's first chunk), plus, for
 * the refresh stream and expiry, the kworkers' time meanwhile
 * (kthreads_ns(), bench.h), where the kernel runs what it defers. Wall
 * time is printed beside it.
 *
 *   add, cancel, expire   n operations on n ids (random timeouts of 10 to
 *                         40 s), one ioctl each (impl=twheel) or in
 *                         batches (twheel-batch), against timerfd; expire:
 *                         n ids due on one tick after their adds, taken
 *                         with poll and read (twheel-batch).
 *   refresh               one stream of STREAM refreshes of random ids
 *                         among n, to the wheel's default timeout, sent four
 *                         ways: one TWHEEL_IOC_OP each (twheel),
 *                         TWHEEL_IOC_BATCH of BATCH ops (twheel-batch),
 *                         TWHEEL_IOC_REFRESH of BATCH ids (twheel-refresh-ids),
 *                         and twheel_touch() into the touch table
 *                         (twheel-touch), whose module work (one look per id
 *                         at its deadline, done by the process's look at the
 *                         wheel after it: a poll that does not wait) is
 *                         counted, the re-arms' share of it; and n
 *                         timerfd_settime() re-arms of random timers to
 *                         random timeouts (timerfd).
 *
 * Output: one line per figure, `devbench: impl=NAME n=N op=OP ns=X
 * wall_ns=W`, and '#' lines with the parts of the touch figure.
 */
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "bench.h"

/* Ops per TWHEEL_IOC_BATCH or TWHEEL_IOC_REFRESH call. */
#define BATCH		256
/* Refreshes in the stream that every refresh figure sends. */
#define STREAM		1000000L
/* The wheels' tick and default timeout. */
#define TICK_NS		NSEC_PER_MSEC
#define TIMEOUT_NS	(30 * NSEC_PER_SEC)

/* The start of a measured interval. */
struct span {
	uint64_t wall, cpu, kw;
};

static struct span span_start(void)
{
	struct span s = { .kw = kthreads_ns(), .cpu = cpu_ns(), .wall = mono_ns() };

	return s;
}

/* Report the interval since @s: @ops operations, kernel threads' time counted if @kw. */
static void report(const struct span *s, const char *impl, long n, const char *op,
		   long ops, bool kw)
{
	uint64_t wall = mono_ns() - s->wall, cpu = cpu_ns() - s->cpu;

	if (kw)
		cpu += kthreads_ns() - s->kw;
	printf("devbench: impl=%s n=%ld op=%s ns=%.0f wall_ns=%.0f\n", impl, n, op,
	       (double)cpu / ops, (double)wall / ops);
	fflush(stdout);
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
	int fd = wheel_new(O_CLOEXEC | O_NONBLOCK, TICK_NS, TIMEOUT_NS, 0);

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
	struct span s = span_start();
	long i;

	for (i = 0; i < iters; i++)
		ioctl(fd, _IO(TWHEEL_IOC_MAGIC, 0x7f), 0);	/* ENOTTY */
	report(&s, "baseline", 0, "enotty_ioctl", iters, false);
	close(fd);
}

static void bench_twheel_single(long n)
{
	int fd = wheel_open();
	struct span s;
	long i;

	s = span_start();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_ADD, i, rnd_timeout());
	report(&s, "twheel", n, "add", n, false);
	s = span_start();
	for (i = 0; i < n; i++)
		wheel_op(fd, TWHEEL_OP_CANCEL, i, 0);
	report(&s, "twheel", n, "cancel", n, false);
	close(fd);
}

/* Ops on ids 0..n-1: due at @deadline (absolute) if not 0, else random timeouts. */
static void batch_run(int fd, struct twheel_op *ops, long n, uint32_t code, uint64_t deadline)
{
	long i, j;

	for (i = 0; i < n; i += BATCH) {
		long k = n - i < BATCH ? n - i : BATCH;

		for (j = 0; j < k; j++) {
			if (code == TWHEEL_OP_ADD && deadline)
				twheel_prep_add_at(&ops[j], i + j, deadline);
			else
				twheel_prep_op(&ops[j], code, i + j,
					       code == TWHEEL_OP_CANCEL ? TWHEEL_TIMEOUT_DEFAULT :
					       rnd_timeout(), 0);
		}
		if (twheel_batch(fd, ops, k) != k)
			die("TWHEEL_IOC_BATCH");
	}
}

static void bench_twheel_batch(long n)
{
	static struct twheel_op ops[BATCH];
	static struct twheel_event ev[4096];
	int fd = wheel_open();
	uint64_t adds_ns, deadline, now;
	long got = 0;
	struct span s;

	s = span_start();
	batch_run(fd, ops, n, TWHEEL_OP_ADD, 0);
	adds_ns = mono_ns() - s.wall;
	report(&s, "twheel-batch", n, "add", n, false);
	s = span_start();
	batch_run(fd, ops, n, TWHEEL_OP_CANCEL, 0);
	report(&s, "twheel-batch", n, "cancel", n, false);

	/*
	 * Expiry: n ids due on one tick after their adds (three times as
	 * long as the adds above took, and 200 ms), read back in bulk. The
	 * module's expiry work (and the cascades before it) runs in this
	 * process's poll, woken by the wheel's timer, and reads: it is most
	 * of the cost. Nothing looks at the wheel between the adds and the
	 * span, so all of it falls in the span; ids due while the adds still
	 * went on would have been expired partly by the adds' own calls
	 * (each command does a chunk of what is due first), outside it.
	 */
	deadline = mono_ns() + 3 * adds_ns + 200 * NSEC_PER_MSEC;
	batch_run(fd, ops, n, TWHEEL_OP_ADD, deadline);
	now = mono_ns();
	if (now >= deadline)
		printf("# devbench: impl=twheel-batch n=%ld: the adds outlasted their deadline\n", n);
	else if (deadline - now > 20 * NSEC_PER_MSEC)
		sleep_ns(deadline - now - 20 * NSEC_PER_MSEC);
	s = span_start();
	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			die("poll");
		r = read(fd, ev, sizeof(ev));
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			die("read");
		got += r / sizeof(ev[0]);
	}
	report(&s, "twheel-batch", n, "expire", n, true);
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
	struct epoll_event *evs = calloc(1024, sizeof(*evs));
	int ep = epoll_create1(EPOLL_CLOEXEC), *fds;
	long i, got = 0;
	struct span s;

	/* n > 0 (GCC cannot tell after inlining, and warns of the calloc). */
	fds = n > 0 ? calloc(n, sizeof(*fds)) : NULL;
	if (!fds || !evs || ep < 0)
		die("timerfd setup");
	s = span_start();
	for (i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = i };

		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[i] < 0)
			die("timerfd_create");
		timerfd_arm(fds[i], rnd_timeout());
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e))
			die("epoll_ctl");
	}
	report(&s, "timerfd", n, "add", n, false);
	s = span_start();
	for (i = 0; i < n; i++)
		timerfd_arm(fds[rnd() % n], rnd_timeout());
	report(&s, "timerfd", n, "refresh", n, false);
	s = span_start();
	for (i = 0; i < n; i++) {
		struct itimerspec off = { 0 };

		timerfd_settime(fds[i], 0, &off, NULL);
	}
	report(&s, "timerfd", n, "cancel", n, false);

	/* Expiry: all due now; take each through epoll and read it. */
	for (i = 0; i < n; i++)
		timerfd_arm(fds[i], 1);
	s = span_start();
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
	report(&s, "timerfd", n, "expire", n, false);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(ep);
	free(fds);
	free(evs);
}

/* ---- the refresh stream ---- */

/* The ids of the stream: STREAM picks among 0..n-1. */
static uint64_t *stream_make(long n)
{
	uint64_t *ids = malloc(STREAM * sizeof(*ids));
	long i;

	if (!ids)
		die("malloc");
	for (i = 0; i < STREAM; i++)
		ids[i] = rnd() % n;
	return ids;
}

/*
 * Ids 0..n-1 added to @fd in batches, each bound to the slot of its number
 * if @bind, due at @deadline (absolute) if not 0, else after the default.
 */
static void stream_add(int fd, long n, bool bind, uint64_t deadline)
{
	static struct twheel_op ops[BATCH];
	long i, j;

	for (i = 0; i < n; i += BATCH) {
		long k = n - i < BATCH ? n - i : BATCH;

		for (j = 0; j < k; j++) {
			if (deadline)
				twheel_prep_add_at(&ops[j], i + j, deadline);
			else
				twheel_prep_add(&ops[j], i + j, TWHEEL_TIMEOUT_DEFAULT);
			if (bind)
				twheel_prep_bind(&ops[j], i + j);
		}
		if (twheel_batch(fd, ops, k) != k)
			die("TWHEEL_IOC_BATCH add");
		for (j = 0; j < k; j++)
			if (ops[j].result)
				die("add");
	}
}

static void stream_single(long n, const uint64_t *ids)
{
	int fd = wheel_open();
	struct span s;
	long i;

	stream_add(fd, n, false, 0);
	s = span_start();
	for (i = 0; i < STREAM; i++)
		if (twheel_refresh(fd, ids[i], TWHEEL_TIMEOUT_DEFAULT, 0))
			die("twheel_refresh");
	report(&s, "twheel", n, "refresh", STREAM, true);
	close(fd);
}

static void stream_batch(long n, const uint64_t *ids)
{
	static struct twheel_op ops[BATCH];
	int fd = wheel_open();
	struct span s;
	long i, j;

	stream_add(fd, n, false, 0);
	s = span_start();
	for (i = 0; i < STREAM; i += BATCH) {
		long k = STREAM - i < BATCH ? STREAM - i : BATCH;

		for (j = 0; j < k; j++)
			twheel_prep_refresh(&ops[j], ids[i + j], TWHEEL_TIMEOUT_DEFAULT, 0);
		if (twheel_batch(fd, ops, k) != k)
			die("TWHEEL_IOC_BATCH refresh");
	}
	report(&s, "twheel-batch", n, "refresh", STREAM, true);
	close(fd);
}

static void stream_refresh_ids(long n, const uint64_t *ids)
{
	int fd = wheel_open();
	unsigned int failed;
	struct span s;
	long i;

	stream_add(fd, n, false, 0);
	s = span_start();
	for (i = 0; i < STREAM; i += BATCH) {
		long k = STREAM - i < BATCH ? STREAM - i : BATCH;

		if (twheel_refresh_ids(fd, ids + i, k, TWHEEL_TIMEOUT_DEFAULT, 0, NULL,
				       &failed) != k || failed)
			die("twheel_refresh_ids");
	}
	report(&s, "twheel-refresh-ids", n, "refresh", STREAM, true);
	close(fd);
}

/*
 * The stream as stores into the touch table. The ids are due at one
 * deadline past the stream's end; the module then looks at each id's
 * slot once and re-arms those touched, when the process looks at the
 * wheel (poll, read, a command). That work is the module's share of the
 * stream, so the figure looks until every id has been looked at and
 * counts the looks' CPU time (this thread's, around each) and the
 * kworkers' over the whole span.
 */
static void stream_touch(long n, const uint64_t *ids)
{
	struct twheel_setup_args sa = {
		.tick_ns = TICK_NS, .default_timeout_ns = TIMEOUT_NS,
		.clockid = CLOCK_MONOTONIC, .flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = n,
	};
	struct twheel_touch t;
	uint64_t t0, est, deadline, user, wall, kw, kw0, looks_ns = 0, touched = 0;
	long long rearms, expired;
	int fd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	struct span s;
	long i;

	if (fd < 0 || twheel_setup_params(fd, &sa) ||
	    twheel_touch_map(fd, n, CLOCK_MONOTONIC, &t))
		die("touch wheel");
	/* Fault the table in, as a running server has (0 is no touch). */
	memset(t.slots, 0, t.map_len);
	/* How long the stream will take, from a sample of it, then ample margin. */
	t0 = mono_ns();
	for (i = 0; i < STREAM / 100; i++)
		twheel_touch_at(&t, ids[i], 0);
	est = (mono_ns() - t0) * 100 + STREAM * 1000ULL;
	deadline = mono_ns() + 3 * est + NSEC_PER_SEC;
	stream_add(fd, n, true, deadline);
	/* Ids the stream touches: the module re-arms these and expires the rest. */
	{
		char *seen = calloc(n, 1);

		if (!seen)
			die("calloc");
		for (i = 0; i < STREAM; i++)
			if (!seen[ids[i]]) {
				seen[ids[i]] = 1;
				touched++;
			}
		free(seen);
	}

	s = span_start();
	for (i = 0; i < STREAM; i++)
		twheel_touch(&t, ids[i]);
	user = cpu_ns() - s.cpu;
	wall = mono_ns() - s.wall;
	if (mono_ns() >= deadline)
		die("touch stream outlasted its deadline");
	kw0 = kthreads_ns();
	/*
	 * From the deadline on, look at the wheel (a poll that does not wait,
	 * dev_look()) every 20 ms until every id is re-armed or expired: the
	 * looks do the module's work, the cascades left due since the adds
	 * too, in this thread; their CPU time is that work's and a system
	 * call each. (A poll that waits 20 ms at a time would do the same
	 * work, but under emulation its own returns cost more than the work
	 * at small n.)
	 */
	if (mono_ns() < deadline)
		sleep_ns(deadline - mono_ns());
	for (;;) {
		uint64_t t = thread_cpu_ns();

		dev_look(fd);
		looks_ns += thread_cpu_ns() - t;
		rearms = fdinfo_get(fd, "touch_rearms");
		expired = fdinfo_get(fd, "expired_total");
		if (rearms + expired >= n || mono_ns() >= deadline + 60 * NSEC_PER_SEC)
			break;
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	kw = looks_ns + kthreads_ns() - kw0;
	if (rearms != (long long)touched || expired != (long long)(n - touched))
		fprintf(stderr, "devbench: touch n=%ld: %lld re-armed, %lld expired, %llu touched\n",
			n, rearms, expired, (unsigned long long)touched);
	/*
	 * The module's share is its re-arms: the looks that expired ids
	 * (those the stream never touched: 37 % of them at n = 10^6) expire
	 * them as under any other way of refreshing, which the other figures
	 * do not count either. Its time is split by count; the '#' line has
	 * the whole. The wait is no work of the stream's: wall time is the
	 * stores' own.
	 */
	printf("devbench: impl=twheel-touch n=%ld op=refresh ns=%.0f wall_ns=%.0f\n", n,
	       (user + (rearms + expired ? (double)kw * rearms / (rearms + expired) : 0.0)) /
	       STREAM, (double)wall / STREAM);
	printf("# devbench: impl=twheel-touch n=%ld process_ns=%.1f module_ns=%.1f "
	       "looks=%lld rearms=%lld module_ns_per_look=%.0f looks_ns=%llu\n", n,
	       (double)user / STREAM, (double)kw / STREAM, rearms + expired, rearms,
	       rearms + expired ? (double)kw / (rearms + expired) : 0.0,
	       (unsigned long long)looks_ns);
	fflush(stdout);
	twheel_touch_unmap(&t);
	close(fd);
}

static void bench_stream(long n)
{
	uint64_t *ids = stream_make(n);

	stream_single(n, ids);
	stream_batch(n, ids);
	stream_refresh_ids(n, ids);
	stream_touch(n, ids);
	free(ids);
}

/*
 * devbench [N [PART]]: one size instead of all (also DEVBENCH_N, which
 * the VM takes from the kernel command line), and only PART ("ops" or
 * "stream"; also DEVBENCH_PART).
 */
int main(int argc, char **argv)
{
	static const long sizes[] = { 1000, 10000, 100000 };
	static const long stream_sizes[] = { 1000, 10000, 100000, 1000000 };
	struct rlimit rl = { 1 << 20, 1 << 20 };
	long only_n = arg_or_env(argc, argv, "DEVBENCH_N", 0);
	const char *part = argc > 2 ? argv[2] : getenv("DEVBENCH_PART");
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit (run as root)");
	printf("# devbench: kworker threads idle: %llu ns in 1 s\n",
	       (unsigned long long)kthreads_idle_ns());
	bench_baseline(200000);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		long n = only_n ?: sizes[i];

		if (part && strcmp(part, "ops"))
			break;
		bench_twheel_single(n);
		bench_twheel_batch(n);
		bench_timerfd(n);
		if (only_n)
			break;
	}
	for (i = 0; i < sizeof(stream_sizes) / sizeof(stream_sizes[0]); i++) {
		long n = only_n ?: stream_sizes[i];

		if (part && strcmp(part, "stream"))
			break;
		bench_stream(n);
		if (only_n)
			break;
	}
	return 0;
}
