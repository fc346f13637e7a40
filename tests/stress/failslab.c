// SPDX-License-Identifier: GPL-2.0
/*
 * failslab: every allocation twheel's operations reach may fail, cleanly.
 *
 * For each operation in turn (open, setup, add on an empty wheel, add that
 * grows the id index, a batch of 40 adds, refresh with ADD_IF_ABSENT,
 * read into pages not yet faulted in), the Nth fault-injection point the
 * calling thread reaches is made to fail, for N = 1, 2, ... until the
 * operation completes without reaching the Nth point. The points are
 * those of failslab and fail_page_alloc, armed for this thread only
 * through /proc/thread-self/fail-nth (the per-task form of task-filter +
 * make-it-fail, with no randomness), with ignore-gfp-wait=N so GFP_KERNEL
 * allocations count, and min-order=0 / ignore-gfp-highmem=N so single
 * user pages count too. Whether the fault was consumed is read back from
 * fail-nth (0 = injected). After each injected failure the operation must
 * have failed with its documented error (ENOMEM; EFAULT for read) or
 * succeeded anyway, and the wheel must be consistent and usable: fdinfo
 * live/events_waiting as expected, the operation retried without
 * injection succeeds, and events still arrive, exactly once. Finally
 * kmemleak is asked for leaks (twice, as it wants), counting those whose
 * backtrace mentions twheel.
 *
 * Prints TAP and "failslab: sites=N failures=N leaks=N", where sites is
 * the number of distinct (operation, N) points at which a fault was
 * injected and failures those where the operation then returned an
 * error. SKIP (exit 4) on kernels without fault injection.
 */
#include <dirent.h>
#include <liburing.h>
#include <poll.h>
#include <sys/mman.h>

#include "twheel_test.h"
#include "twheel_uring.h"
#include "kselftest.h"

#define DBG		"/sys/kernel/debug"
#define KMEMLEAK	DBG "/kmemleak"
#define MAX_N		400
#define HOUR		(3600 * NSEC_PER_SEC)

static int fnfd;			/* /proc/thread-self/fail-nth */
static unsigned int sites, failures, bad;

struct knob {
	const char *path;
	const char *val;
	char saved[32];		/* restored at the end */
};

static struct knob knobs[] = {
	{ DBG "/failslab/ignore-gfp-wait", "N", "" },
	{ DBG "/failslab/verbose", "0", "" },
	{ DBG "/fail_page_alloc/ignore-gfp-wait", "N", "" },
	{ DBG "/fail_page_alloc/ignore-gfp-highmem", "N", "" },
	{ DBG "/fail_page_alloc/min-order", "0", "" },
	{ DBG "/fail_page_alloc/verbose", "0", "" },
};
#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

static void __attribute__((format(printf, 1, 2))) problem(const char *fmt, ...)
{
	va_list ap;

	bad++;
	if (bad > 40)
		return;
	fputs("# problem: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(fnfd, buf, len, 0) != len) {
		perror("fail-nth");
		exit(2);
	}
}

/* Disarm; whether the armed fault was injected since arm(). */
static int disarm(void)
{
	char buf[16] = "";
	ssize_t n = pread(fnfd, buf, sizeof(buf) - 1, 0);

	if (pwrite(fnfd, "0", 1, 0) != 1 || n <= 0) {
		perror("fail-nth");
		exit(2);
	}
	return atoi(buf) == 0;
}

static int wheel(void)
{
	int fd = wheel_new(O_NONBLOCK | O_CLOEXEC, NSEC_PER_MSEC, HOUR, 0);

	if (fd < 0) {
		printf("# open/setup without injection failed: %s\n", strerror(-fd));
		exit(1);
	}
	return fd;
}

static void fill(int fd, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (twheel_add(fd, 1000 + i, HOUR))
			problem("fill: add %d failed without injection", i);
}

/* Wait for @n events of ids in [lo, lo + n), each once; 1 if so. */
static int expect_events(int fd, uint64_t lo, int n)
{
	static uint8_t seen[4096];
	struct twheel_event ev[64];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t until = mono_ns() + 5000 * NSEC_PER_MSEC;
	int got = 0, ok = 1;
	ssize_t r, i;

	memset(seen, 0, n);
	while (got < n && mono_ns() < until) {
		r = read(fd, ev, sizeof(ev));
		if (r <= 0) {
			poll(&p, 1, 50);
			continue;
		}
		for (i = 0; i < r / (ssize_t)sizeof(ev[0]); i++) {
			uint64_t k = ev[i].id - lo;

			if (k >= (uint64_t)n || seen[k]++)
				ok = 0;
			else
				got++;
		}
	}
	return ok && got == n;
}

/* Entries held, live or expired and unread (nothing reads meanwhile). */
static void check_live(int fd, long long live, const char *what, unsigned int n)
{
	long long l, w, again = fdinfo_get(fd, "live");

	/* Expiry moves entries from live to waiting: read until both agree. */
	do {
		l = again;
		w = fdinfo_get(fd, "events_waiting");
		again = fdinfo_get(fd, "live");
	} while (again != l);

	if (l + w != live)
		problem("%s N=%u: fdinfo live %lld + events_waiting %lld, expected %lld",
			what, n, l, w, live);
}

/* Record one injected point; @failed: the operation returned an error. */
static void injected(int failed)
{
	sites++;
	failures += failed;
}

/* ---- the operations ---- */

static unsigned int sweep_open(void)
{
	unsigned int n;

	for (n = 1; n <= MAX_N; n++) {
		int fd, err, hit;

		arm(n);
		fd = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		err = errno;
		hit = disarm();
		if (fd < 0 && (!hit || err != ENOMEM))
			problem("open N=%u: %s (injected: %d)", n, strerror(err), hit);
		if (fd >= 0) {
			/* Opened despite the fault (a fallback): it must work. */
			if (twheel_setup(fd, NSEC_PER_MSEC, HOUR, CLOCK_MONOTONIC, 0) ||
			    twheel_add(fd, 1, 2 * NSEC_PER_MSEC) || !expect_events(fd, 1, 1))
				problem("open N=%u: wheel opened under injection does not work", n);
			close(fd);
		}
		if (!hit)
			return n;
		injected(fd < 0);
	}
	return n;
}

static unsigned int sweep_setup(void)
{
	unsigned int n;

	for (n = 1; n <= MAX_N; n++) {
		int fd = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC), ret, hit;

		arm(n);
		ret = twheel_setup(fd, NSEC_PER_MSEC, HOUR, CLOCK_MONOTONIC, 0);
		hit = disarm();
		if (ret && ret != -ENOMEM)
			problem("setup N=%u: %s", n, strerror(-ret));
		if (ret)
			ret = twheel_setup(fd, NSEC_PER_MSEC, HOUR, CLOCK_MONOTONIC, 0);
		if (ret || twheel_add(fd, 1, 2 * NSEC_PER_MSEC) || !expect_events(fd, 1, 1))
			problem("setup N=%u: wheel unusable after the fault", n);
		close(fd);
		if (!hit)
			return n;
		injected(ret != 0);
	}
	return n;
}

/*
 * One op on a wheel holding @prefill ids (a fresh wheel per N, so each N
 * meets the same state: 0 = the index is allocated, 128 = it grows).
 */
static unsigned int sweep_single(uint32_t code, uint32_t flags, int prefill, const char *what)
{
	unsigned int n;

	for (n = 1; n <= MAX_N; n++) {
		int fd = wheel(), ret, hit;
		struct twheel_op op;

		fill(fd, prefill);
		op_init(&op, code, 7, flags | TWHEEL_OPF_TIMEOUT, 2 * NSEC_PER_MSEC);
		arm(n);
		ret = twheel_submit_op(fd, &op);
		hit = disarm();
		if (ret != op.result || (ret && ret != -ENOMEM))
			problem("%s N=%u: ioctl %d, result %d", what, n, ret, op.result);
		check_live(fd, prefill + !ret, what, n);
		if (ret) {
			if (twheel_query(fd, 7, NULL, NULL) != -ENOENT)
				problem("%s N=%u: failed add left id 7 behind", what, n);
			op_init(&op, code, 7, flags | TWHEEL_OPF_TIMEOUT, 2 * NSEC_PER_MSEC);
			if (twheel_submit_op(fd, &op))
				problem("%s N=%u: retry without injection failed", what, n);
		}
		if (!expect_events(fd, 7, 1))
			problem("%s N=%u: no event for id 7 after the fault", what, n);
		check_live(fd, prefill, what, n);
		close(fd);
		if (!hit)
			return n;
		injected(ret != 0);
	}
	return n;
}

#define BATCH_N 40

static unsigned int sweep_batch(void)
{
	static struct twheel_op ops[BATCH_N];
	unsigned int n;

	for (n = 1; n <= MAX_N; n++) {
		int fd = wheel(), i, nomem = 0, hit;
		long ret;

		for (i = 0; i < BATCH_N; i++)
			op_init(&ops[i], TWHEEL_OP_ADD, 5000 + i, TWHEEL_OPF_TIMEOUT, HOUR);
		arm(n);
		ret = twheel_batch(fd, ops, BATCH_N);
		hit = disarm();
		if (ret != BATCH_N)
			problem("batch N=%u: returned %ld", n, ret);
		for (i = 0; i < BATCH_N; i++) {
			if (ops[i].result == -ENOMEM)
				nomem++;
			else if (ops[i].result)
				problem("batch N=%u: op %d result %d", n, i, ops[i].result);
		}
		if (nomem > 1)
			problem("batch N=%u: one injected fault failed %d ops", n, nomem);
		check_live(fd, BATCH_N - nomem, "batch", n);
		/* Retry the failed ones, then let everything expire. */
		for (i = 0; i < BATCH_N; i++)
			op_init(&ops[i], TWHEEL_OP_REFRESH, 5000 + i,
				TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_ADD_IF_ABSENT, 2 * NSEC_PER_MSEC);
		if (twheel_batch(fd, ops, BATCH_N) != BATCH_N)
			problem("batch N=%u: retry batch failed", n);
		for (i = 0; i < BATCH_N; i++)
			if (ops[i].result)
				problem("batch N=%u: retry op %d result %d", n, i, ops[i].result);
		if (!expect_events(fd, 5000, BATCH_N))
			problem("batch N=%u: events missing or doubled after the fault", n);
		close(fd);
		if (!hit)
			return n;
		injected(nomem != 0);
	}
	return n;
}

#define READ_EVENTS 50

/* read(2) into pages never touched: the faults in copy_to_user allocate. */
static unsigned int sweep_read(void)
{
	unsigned int n;

	for (n = 1; n <= MAX_N; n++) {
		int fd = wheel(), i, hit, ok;
		uint8_t seen[READ_EVENTS];
		struct twheel_event *buf;
		ssize_t r;
		uint64_t until = mono_ns() + 5000 * NSEC_PER_MSEC;

		for (i = 0; i < READ_EVENTS; i++)
			twheel_add(fd, 100 + i, 0);
		/* Looked at (a poll that does not wait): expiry is done by who looks. */
		for (;;) {
			dev_look(fd);
			if (fdinfo_get(fd, "events_waiting") == READ_EVENTS || mono_ns() >= until)
				break;
			sleep_ns(2 * NSEC_PER_MSEC);
		}
		buf = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		/* Straddle the first page's end: two faults inside one read. */
		buf = (struct twheel_event *)((char *)buf + 4096 - 5 * sizeof(*buf));
		arm(n);
		r = read(fd, buf, READ_EVENTS * sizeof(*buf));
		i = errno;
		hit = disarm();
		if (r < 0 && i != EFAULT && i != ENOMEM)
			problem("read N=%u: %s", n, strerror(i));
		if (r > 0 && r % sizeof(*buf))
			problem("read N=%u: returned %zd", n, r);
		if (r < 0)
			r = 0;
		/* Whatever was not returned must still be queued, once. */
		if (fdinfo_get(fd, "events_waiting") != (long long)(READ_EVENTS - r / sizeof(*buf)))
			problem("read N=%u: returned %zd bytes, %lld events left of %d", n, r,
				fdinfo_get(fd, "events_waiting"), READ_EVENTS);
		/* Same deadlines come in any order: count each id, then the rest. */
		memset(seen, 0, sizeof(seen));
		ok = 1;
		for (i = 0; i < r / (ssize_t)sizeof(*buf); i++) {
			uint64_t k = buf[i].id - 100;

			ok &= k < READ_EVENTS && !seen[k]++;
		}
		until = mono_ns() + 5000 * NSEC_PER_MSEC;
		while (ok && fdinfo_get(fd, "events_waiting") > 0 && mono_ns() < until) {
			struct twheel_event ev[16];
			ssize_t m = read(fd, ev, sizeof(ev));

			for (i = 0; i < m / (ssize_t)sizeof(ev[0]); i++) {
				uint64_t k = ev[i].id - 100;

				ok &= k < READ_EVENTS && !seen[k]++;
			}
		}
		for (i = 0; i < READ_EVENTS; i++)
			ok &= seen[i] == 1;
		if (!ok)
			problem("read N=%u: events lost or doubled after the fault", n);
		munmap((char *)buf - 4096 + 5 * sizeof(*buf), 2 * 4096);
		close(fd);
		if (!hit)
			return n;
		injected(r < READ_EVENTS * (ssize_t)sizeof(*buf));
	}
	return n;
}

/* kmemleak records mentioning twheel; -1 without kmemleak. */
/* The process's io-wq worker threads (iou-wrk-*) now. */
static int iou_workers(void)
{
	char path[300], comm[32];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		if (read_file(path, comm, sizeof(comm)) > 0 && !strncmp(comm, "iou-wrk", 7))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Ring commands issued inline must not sleep for memory (review item
 * 6): their allocations are GFP_NOWAIT, and one that fails sends the
 * whole command to an io-wq worker, which applies it once. Here only
 * allocations that cannot sleep are fault points (ignore-gfp-wait=Y),
 * armed for the submitting thread, which issues the command inline; the
 * fault must be taken (an allocation that cannot sleep was made), the
 * command must complete from a worker (an iou-wrk thread exists), and
 * every op of it must be applied exactly once: a BATCH that applied its
 * first ops and then went to the worker would find them EEXIST there.
 * Returns 1 if held, 0 if not, -1 if the kernel has no ring commands.
 */
#define RING_OPS	16
static int ring_nowait(unsigned int nth, unsigned int nr_ops, char *why, size_t len)
{
	struct twheel_op ops[RING_OPS];
	struct twheel_batch_args args = { .ops = (uintptr_t)ops, .count = nr_ops };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int fd = wheel(), res, workers, injected, i, ok = 0;
	long long live;

	if (io_uring_queue_init(4, &ring, 0)) {
		close(fd);
		return -1;
	}
	for (i = 0; i < (int)nr_ops; i++)
		twheel_prep_add(&ops[i], 1000 + i, HOUR);
	sqe = io_uring_get_sqe(&ring);
	if (!sqe) {
		snprintf(why, len, "no SQE");
		goto out;
	}
	twheel_prep_uring_batch(sqe, fd, &args);
	arm(nth);
	io_uring_submit(&ring);
	injected = disarm();
	if (io_uring_wait_cqe(&ring, &cqe)) {
		snprintf(why, len, "no completion");
		goto out;
	}
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	if (res == -EINVAL) {
		/* Before 5.19: no IORING_OP_URING_CMD. */
		ok = -1;
		goto out;
	}
	workers = iou_workers();
	live = fdinfo_get(fd, "live");
	for (i = 0; i < (int)nr_ops && !ops[i].result; i++)
		;
	snprintf(why, len, "fault %s, res %d, %d iou-wrk threads, live %lld of %u, op %d: %d",
		 injected ? "taken" : "not taken (no allocation that cannot sleep)", res,
		 workers, live, nr_ops, i < (int)nr_ops ? i : -1, i < (int)nr_ops ? ops[i].result : 0);
	ok = injected && res == (int)nr_ops && workers > 0 && live == nr_ops && i == (int)nr_ops;
out:
	io_uring_queue_exit(&ring);
	close(fd);
	return ok;
}

static int kmemleak_twheel(int *all)
{
	static char buf[1 << 20];
	char *s, *next;
	int n = 0;

	*all = 0;
	if (access(KMEMLEAK, W_OK))
		return -1;
	sleep(6);	/* kmemleak ignores objects younger than 5 s */
	write_file(KMEMLEAK, "scan");
	sleep(1);
	write_file(KMEMLEAK, "scan");
	if (read_file(KMEMLEAK, buf, sizeof(buf)) < 0)
		return -1;
	for (s = strstr(buf, "unreferenced object"); s; s = next) {
		next = strstr(s + 1, "unreferenced object");
		if (next)
			next[-1] = 0;
		(*all)++;
		if (strstr(s, "twheel") || strstr(s, " tw_"))
			n++;
	}
	return n;
}

int main(void)
{
	unsigned int i, s0, n;
	int leaks, all;

	ksft_print_header();
	fnfd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (fnfd < 0)
		ksft_exit_skip("no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)\n");
	if (access(DBG "/failslab", F_OK) || access(DBG "/fail_page_alloc", F_OK))
		ksft_exit_skip("no failslab or fail_page_alloc in " DBG "\n");
	for (i = 0; i < NKNOBS; i++) {
		read_file(knobs[i].path, knobs[i].saved, sizeof(knobs[i].saved));
		knobs[i].saved[strcspn(knobs[i].saved, "\n")] = 0;
		if (write_file(knobs[i].path, knobs[i].val))
			ksft_exit_skip("cannot configure fault injection in debugfs\n");
	}
	ksft_set_plan(11);

#define SWEEP(call, name) do {							\
		unsigned int b0 = bad;						\
		s0 = sites;							\
		n = call;							\
		ksft_test_result(bad == b0 && n <= MAX_N,				\
				 "%s: each of %u injected faults handled cleanly\n", name, sites - s0); \
		ksft_print_msg("%s: completed without a fault at N=%u\n", name, n);	\
	} while (0)

	SWEEP(sweep_open(), "open");
	SWEEP(sweep_setup(), "setup");
	SWEEP(sweep_single(TWHEEL_OP_ADD, 0, 0, "add"), "add on an empty wheel (index allocation)");
	SWEEP(sweep_single(TWHEEL_OP_ADD, 0, 128, "add-grow"), "add that grows the index");
	SWEEP(sweep_batch(), "batch of 40 adds");
	SWEEP(sweep_single(TWHEEL_OP_REFRESH, TWHEEL_OPF_ADD_IF_ABSENT, 0, "refresh-aia"),
	      "refresh with ADD_IF_ABSENT");
	SWEEP(sweep_read(), "read into unfaulted pages");

	/* Only allocations that cannot sleep are fault points from here on. */
	write_file(DBG "/failslab/ignore-gfp-wait", "Y");
	write_file(DBG "/fail_page_alloc/ignore-gfp-wait", "Y");
	{
		static const struct { unsigned int nth, ops; const char *what; } r[] = {
			{ 1, 1, "a ring ADD issued inline" },
			{ 5, RING_OPS, "a ring BATCH of 16 adds issued inline, its 5th entry" },
		};
		char why[200];

		for (i = 0; i < 2; i++) {
			int held = ring_nowait(r[i].nth, r[i].ops, why, sizeof(why));

			if (held < 0)
				ksft_test_result_skip("%s allocates without sleeping and goes to a worker when that fails: no ring commands\n",
						      r[i].what);
			else
				ksft_test_result(held, "%s allocates without sleeping and goes to a worker when that fails (%s)\n",
						 r[i].what, why);
		}
	}

	for (i = 0; i < NKNOBS; i++)
		if (knobs[i].saved[0])
			write_file(knobs[i].path, knobs[i].saved);
	ksft_test_result(sites > 0, "faults were injected (%u points, %u failures)\n", sites,
			 failures);
	leaks = kmemleak_twheel(&all);
	if (leaks < 0) {
		ksft_test_result_skip("kmemleak finds no twheel leak: no kmemleak\n");
		leaks = 0;
	} else {
		ksft_print_msg("kmemleak: %d unreferenced objects, %d mention twheel\n", all,
			       leaks);
		ksft_test_result(leaks == 0, "kmemleak finds no twheel leak\n");
	}
	printf("failslab: sites=%u failures=%u leaks=%d\n", sites, failures, leaks);
	ksft_finished();
}
